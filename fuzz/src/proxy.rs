//! The PROXY protocol header reader (`kibitz::protocols::proxy_header`): the parsers on raw bytes, and the
//! reader on a real loopback connection, with properties:
//!
//! - a version 1 line that names a client writes back (as haproxy would) to a line naming the same client;
//! - a version 2 header that names a client holds that client's address and port where the format puts them;
//! - the reader consumes exactly a header's bytes and nothing else: after it, the connection gives the rest
//!   of the input (all of it when it found no header).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;

use kibitz::protocols::proxy_header::{self, MAX_V1, Start};

/// The first byte picks the part: 0 the version 1 parser, 1 the version 2 parser, else the reader.
pub fn input(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else { return };
    let rest = &rest[..rest.len().min(4096)];
    match mode % 3 {
        0 => v1(rest),
        1 => v2(rest),
        _ => reader(rest),
    }
}

fn v1(line: &[u8]) {
    if let Ok(Start::Client(client)) = proxy_header::parse_v1(line) {
        let family = if client.is_ipv4() { "TCP4" } else { "TCP6" };
        let again = format!("PROXY {family} {} {} {} 27533\r\n", client.ip(), client.ip(), client.port());
        assert_eq!(proxy_header::parse_v1(again.as_bytes()), Ok(Start::Client(client)), "{again}");
    }
}

fn v2(data: &[u8]) {
    let Some(head) = data.get(..16) else { return };
    let head: [u8; 16] = head.try_into().expect("16 bytes");
    let body = &data[16..];
    if let Ok(Start::Client(client)) = proxy_header::parse_v2(&head, body) {
        match client {
            SocketAddr::V4(a) => {
                assert_eq!(a.ip().octets(), body[..4]);
                assert_eq!(a.port().to_be_bytes(), body[8..10]);
            }
            SocketAddr::V6(a) => {
                assert_eq!(a.ip().octets(), body[..16]);
                assert_eq!(a.port().to_be_bytes(), body[32..34]);
            }
        }
    }
}

fn listener() -> &'static TcpListener {
    static LISTENER: OnceLock<TcpListener> = OnceLock::new();
    LISTENER.get_or_init(|| TcpListener::bind("127.0.0.1:0").expect("a loopback listener"))
}

fn reader(data: &[u8]) {
    let listener = listener();
    let mut client = TcpStream::connect(listener.local_addr().expect("its address")).expect("connect");
    let (server, _) = listener.accept().expect("accept");
    client.write_all(data).expect("write");
    client.shutdown(Shutdown::Write).expect("shutdown");
    let start = proxy_header::read(&server, Duration::from_millis(20), Duration::from_millis(40));
    let mut after = Vec::new();
    server.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    // The peer has closed its side: the rest ends at its end.
    if (&server).read_to_end(&mut after).is_err() {
        return;
    }
    let consumed = match start {
        Ok(Start::Plain) => 0,
        Ok(Start::Client(_) | Start::Unnamed) => data.len() - after.len(),
        Err(_) => return,
    };
    assert_eq!(after, data[consumed..], "the reader took {consumed} bytes");
    if let Ok(Start::Client(_) | Start::Unnamed) = start {
        // What was consumed is one whole header, read as the parsers read it.
        let header = &data[..consumed];
        let parsed = if header.starts_with(b"PROXY ") {
            assert!(header.ends_with(b"\r\n") && consumed <= MAX_V1, "{header:?}");
            proxy_header::parse_v1(header)
        } else {
            let head: [u8; 16] = header[..16].try_into().expect("a version 2 head");
            assert_eq!(consumed, 16 + usize::from(u16::from_be_bytes([head[14], head[15]])));
            proxy_header::parse_v2(&head, &header[16..])
        };
        assert_eq!(parsed, start, "{header:?}");
    }
}
