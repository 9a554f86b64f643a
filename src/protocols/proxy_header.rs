//! The PROXY protocol header (versions 1 and 2) a TCP load balancer such as haproxy (`send-proxy`,
//! `send-proxy-v2`) sends first on each connection to name the client it forwards: read from connections whose
//! peer is a trusted proxy, so that the GUIDE gateway's limits per address count clients, not the balancer.
//!
//! Version 1 is one text line, `PROXY TCP4|TCP6 SRC DST SPORT DPORT\r\n` or `PROXY UNKNOWN …\r\n`, at most 107
//! bytes. Version 2 is binary: a 12-byte signature, a version and command byte, a family byte, a big-endian
//! length and that many bytes of addresses (then optional TLVs, read and ignored). `UNKNOWN` and version 2's
//! `LOCAL` (the proxy's own connection, a health check) name no client: the peer stays the client.

use std::io::{self, Read};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The longest version 1 line, `\r\n` included.
pub const MAX_V1: usize = 107;
const V1_PREFIX: &[u8] = b"PROXY ";
const V2_SIGNATURE: [u8; 12] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A];

/// What begins a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// No PROXY header: the connection's first bytes are the client's own.
    Plain,
    /// A header naming the client.
    Client(SocketAddr),
    /// A header that names no client (`UNKNOWN`, `LOCAL`).
    Unnamed,
}

/// Read the PROXY header `stream` begins with, if it begins with one, consuming exactly the header. A peer
/// that sends nothing within `first` is taken to have no header (a client that waits for the server to speak:
/// a proxy sends its header as soon as it connects); bytes that begin like a header must complete one within
/// `wait`. `Err` names what is wrong with a header.
pub fn read(stream: &TcpStream, first: Duration, wait: Duration) -> Result<Start, String> {
    let start = Instant::now();
    let deadline = start + wait;
    let late = || format!("the PROXY protocol header did not come whole within {} s", wait.as_secs());
    let result = (|| {
        // Peek until the first bytes either cannot begin a header or are a whole signature.
        let mut seen = [0u8; 12];
        // Whether the bytes seen so far begin a header (which must then be finished in time).
        let mut begun = false;
        let nothing = |begun: bool| if begun { Err(TIMED_OUT.to_string()) } else { Ok(None) };
        let kind = loop {
            let until = if begun { deadline } else { start + first.min(wait) };
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return nothing(begun);
            }
            stream.set_read_timeout(Some(left)).map_err(|e| e.to_string())?;
            let n = match stream.peek(&mut seen) {
                Ok(0) => return Err("the connection closed before its first line".to_string()),
                Ok(n) => n,
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                    return nothing(begun);
                }
                Err(e) => return Err(e.to_string()),
            };
            let v1 = seen[..n.min(V1_PREFIX.len())] == V1_PREFIX[..n.min(V1_PREFIX.len())];
            let v2 = seen[..n] == V2_SIGNATURE[..n];
            match (v1, v2) {
                (false, false) => return Ok(Some(Start::Plain)),
                (true, _) if n >= V1_PREFIX.len() => break 1,
                (_, true) if n == V2_SIGNATURE.len() => break 2,
                // A beginning of either: wait for more.
                _ => {
                    begun = true;
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        };
        let mut reader = Deadline { stream, deadline };
        if kind == 1 {
            let mut line = Vec::with_capacity(MAX_V1);
            let mut byte = [0u8; 1];
            while !line.ends_with(b"\r\n") {
                if line.len() >= MAX_V1 {
                    return Err(format!("the PROXY protocol line is longer than {MAX_V1} bytes"));
                }
                reader.read_exact(&mut byte).map_err(|e| reader.error(e))?;
                line.push(byte[0]);
            }
            parse_v1(&line).map(Some)
        } else {
            let mut head = [0u8; 16];
            reader.read_exact(&mut head).map_err(|e| reader.error(e))?;
            let length = usize::from(u16::from_be_bytes([head[14], head[15]]));
            let mut body = vec![0u8; length];
            reader.read_exact(&mut body).map_err(|e| reader.error(e))?;
            parse_v2(&head, &body).map(Some)
        }
    })();
    match result {
        Ok(Some(start)) => Ok(start),
        Ok(None) => Ok(Start::Plain),
        Err(e) if e == TIMED_OUT => Err(late()),
        Err(e) => Err(e),
    }
}

const TIMED_OUT: &str = "timed out";

/// Reads under one deadline for the whole header.
struct Deadline<'a> {
    stream: &'a TcpStream,
    deadline: Instant,
}

impl Deadline<'_> {
    fn error(&self, e: io::Error) -> String {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => TIMED_OUT.to_string(),
            io::ErrorKind::UnexpectedEof => "the connection closed inside the PROXY protocol header".to_string(),
            _ => e.to_string(),
        }
    }
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        let mut stream = self.stream;
        stream.read(buf)
    }
}

/// A version 1 line, `\r\n` included.
pub fn parse_v1(line: &[u8]) -> Result<Start, String> {
    let text = std::str::from_utf8(line)
        .ok()
        .and_then(|t| t.strip_suffix("\r\n"))
        .ok_or("the PROXY protocol line is not ASCII text ending in CR LF")?;
    let words: Vec<&str> = text.split(' ').collect();
    let bad =
        || format!("the PROXY protocol line `{}` is not `PROXY TCP4|TCP6 SRC DST SPORT DPORT`", text.escape_debug());
    match words.as_slice() {
        ["PROXY", "UNKNOWN", ..] => Ok(Start::Unnamed),
        ["PROXY", family @ ("TCP4" | "TCP6"), source, _destination, port, _destination_port] => {
            let address: IpAddr = source.parse().map_err(|_| bad())?;
            if address.is_ipv4() != (*family == "TCP4") {
                return Err(format!("the PROXY protocol line names {family} but the address {source}"));
            }
            // Ports are 0 to 65535 in decimal, without a sign or leading zeros.
            let port: u16 = port.parse().ok().filter(|p: &u16| p.to_string() == *port).ok_or_else(bad)?;
            Ok(Start::Client(SocketAddr::new(address, port)))
        }
        _ => Err(bad()),
    }
}

/// A version 2 header: its 16 fixed bytes and the `length` bytes after them.
pub fn parse_v2(head: &[u8; 16], body: &[u8]) -> Result<Start, String> {
    if head[..12] != V2_SIGNATURE {
        return Err("not a PROXY protocol version 2 signature".into());
    }
    let (version, command) = (head[12] >> 4, head[12] & 0x0F);
    if version != 2 {
        return Err(format!("PROXY protocol version {version} in a version 2 header"));
    }
    match command {
        0 => return Ok(Start::Unnamed),
        1 => {}
        other => return Err(format!("unknown PROXY protocol version 2 command {other}")),
    }
    let short = |family: &str| format!("the PROXY protocol version 2 header is too short for an {family} address");
    match head[13] >> 4 {
        // Over IPv4: source, destination, source port, destination port.
        1 => {
            let a = body.get(..12).ok_or_else(|| short("IPv4"))?;
            let ip = Ipv4Addr::new(a[0], a[1], a[2], a[3]);
            Ok(Start::Client(SocketAddr::new(IpAddr::V4(ip), u16::from_be_bytes([a[8], a[9]]))))
        }
        2 => {
            let a = body.get(..36).ok_or_else(|| short("IPv6"))?;
            let mut octets = [0u8; 16];
            octets.copy_from_slice(&a[..16]);
            Ok(Start::Client(SocketAddr::new(IpAddr::V6(Ipv6Addr::from(octets)), u16::from_be_bytes([a[32], a[33]]))))
        }
        // Unspecified or a Unix socket: no client address to count by.
        _ => Ok(Start::Unnamed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_1_lines() {
        assert_eq!(
            parse_v1(b"PROXY TCP4 203.0.113.9 10.0.0.2 51234 27533\r\n"),
            Ok(Start::Client("203.0.113.9:51234".parse().expect("addr")))
        );
        assert_eq!(
            parse_v1(b"PROXY TCP6 2001:db8::7 2001:db8::1 4000 27533\r\n"),
            Ok(Start::Client("[2001:db8::7]:4000".parse().expect("addr")))
        );
        assert_eq!(parse_v1(b"PROXY UNKNOWN\r\n"), Ok(Start::Unnamed));
        assert_eq!(parse_v1(b"PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n"), Ok(Start::Unnamed));
        for bad in [
            &b"PROXY TCP4 203.0.113.9 10.0.0.2 51234 27533\n"[..],
            b"PROXY TCP4 2001:db8::7 10.0.0.2 1 2\r\n",
            b"PROXY TCP4 203.0.113.9 10.0.0.2 65536 27533\r\n",
            b"PROXY TCP4 203.0.113.9 10.0.0.2 +1 27533\r\n",
            b"PROXY TCP4 203.0.113.9 10.0.0.2 51234\r\n",
            b"PROXY UDP4 203.0.113.9 10.0.0.2 1 2\r\n",
            b"PROXY TCP4  203.0.113.9 10.0.0.2 1 2\r\n",
            b"PROXY TCP4 203.0.113.\xff 10.0.0.2 1 2\r\n",
        ] {
            let got = parse_v1(bad);
            assert!(got.as_ref().is_err_and(|e| e.contains("PROXY")), "{:?}: {got:?}", String::from_utf8_lossy(bad));
        }
    }

    fn v2(command: u8, family: u8, body: &[u8]) -> ([u8; 16], Vec<u8>) {
        let mut head = [0u8; 16];
        head[..12].copy_from_slice(&V2_SIGNATURE);
        head[12] = 0x20 | command;
        head[13] = family;
        head[14..].copy_from_slice(&(body.len() as u16).to_be_bytes());
        (head, body.to_vec())
    }

    #[test]
    fn version_2_headers() {
        let (head, body) = v2(1, 0x11, &[203, 0, 113, 9, 10, 0, 0, 2, 0xC8, 0x22, 0x6B, 0x8D]);
        assert_eq!(parse_v2(&head, &body), Ok(Start::Client("203.0.113.9:51234".parse().expect("addr"))));
        let mut six = vec![0u8; 36];
        six[..2].copy_from_slice(&[0x20, 0x01]);
        six[15] = 7;
        six[32..34].copy_from_slice(&4000u16.to_be_bytes());
        // TLVs after the addresses are ignored.
        six.extend_from_slice(&[0x04, 0x00, 0x01, 0x00]);
        let (head, body) = v2(1, 0x21, &six);
        assert_eq!(parse_v2(&head, &body), Ok(Start::Client("[2001::7]:4000".parse().expect("addr"))));
        let (head, body) = v2(0, 0x00, &[]);
        assert_eq!(parse_v2(&head, &body), Ok(Start::Unnamed), "LOCAL: a health check");
        let (head, body) = v2(1, 0x11, &[1, 2, 3]);
        assert!(parse_v2(&head, &body).is_err_and(|e| e.contains("too short")));
        let (head, body) = v2(2, 0x11, &[0; 12]);
        assert!(parse_v2(&head, &body).is_err_and(|e| e.contains("command")));
        let (mut head, body) = v2(1, 0x11, &[0; 12]);
        head[12] = 0x11;
        assert!(parse_v2(&head, &body).is_err_and(|e| e.contains("version 1")));
    }

    #[test]
    fn any_bytes_are_an_answer_never_a_panic() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet = b"PROXY TCP46UNKOW0123456789.:abcdef\r\n \xff";
        for _ in 0..20_000 {
            let n = (next() % 120) as usize;
            let mut line = b"PROXY ".to_vec();
            line.extend((0..n).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]));
            if next() % 2 == 0 {
                line.extend_from_slice(b"\r\n");
            }
            let _ = parse_v1(&line);
            let mut head = [0u8; 16];
            head[..12].copy_from_slice(&V2_SIGNATURE);
            head[12..].copy_from_slice(&(next() as u32).to_be_bytes());
            let body: Vec<u8> = (0..(next() % 48)).map(|_| next() as u8).collect();
            let _ = parse_v2(&head, &body);
        }
    }

    /// A connected pair of sockets on the loopback.
    fn pair() -> (TcpStream, TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let client = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (server, _) = listener.accept().expect("accept");
        (client, server)
    }

    #[test]
    fn a_header_is_consumed_and_what_follows_is_left() {
        use std::io::Write;
        let (mut client, server) = pair();
        client.write_all(b"PROXY TCP4 198.51.100.4 10.0.0.2 1234 27533\r\ninfo\n").expect("write");
        assert_eq!(
            read(&server, Duration::from_secs(5), Duration::from_secs(5)),
            Ok(Start::Client("198.51.100.4:1234".parse().expect("a")))
        );
        let mut rest = [0u8; 5];
        (&server).read_exact(&mut rest).expect("rest");
        assert_eq!(&rest, b"info\n");

        // No header: nothing is consumed, even a first line that is shorter than the prefix.
        let (mut client, server) = pair();
        client.write_all(b"go\n").expect("write");
        assert_eq!(read(&server, Duration::from_secs(5), Duration::from_secs(5)), Ok(Start::Plain));
        let mut rest = [0u8; 3];
        (&server).read_exact(&mut rest).expect("rest");
        assert_eq!(&rest, b"go\n");

        // A client that waits for the server: no header.
        let (_client, server) = pair();
        assert_eq!(read(&server, Duration::from_millis(200), Duration::from_secs(5)), Ok(Start::Plain));

        // A header begun and never finished, past its prefix or inside it.
        for begun in [&b"PROXY TCP4 198.51.100.4"[..], b"PRO", &V2_SIGNATURE[..5]] {
            let (mut client, server) = pair();
            client.write_all(begun).expect("write");
            let got = read(&server, Duration::from_millis(300), Duration::from_millis(300));
            assert!(got.as_ref().is_err_and(|e| e.contains("did not come whole")), "{begun:?}: {got:?}");
        }

        // Version 2, byte by byte in two writes.
        let (mut client, server) = pair();
        let (head, body) = v2(1, 0x11, &[198, 51, 100, 4, 10, 0, 0, 2, 0x04, 0xD2, 0x6B, 0x8D]);
        client.write_all(&head[..7]).expect("write");
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            client.write_all(&head[7..]).and_then(|()| client.write_all(&body)).expect("write");
            client
        });
        assert_eq!(
            read(&server, Duration::from_secs(5), Duration::from_secs(5)),
            Ok(Start::Client("198.51.100.4:1234".parse().expect("a")))
        );
        drop(writer.join());
    }
}
