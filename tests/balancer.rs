//! The shipped load balancer configuration (`docker/haproxy.cfg`) in front of a real `kibitz serve`: Debian's
//! haproxy runs the file with its nodes and ports pointed at the test's server, and clients connect through it
//! from distinct loopback addresses (127.0.0.2, 127.0.0.3). The server trusts the balancer, so its limits per
//! address count each client, both over HTTP (`option forwardfor`) and on the GUIDE gateway (`send-proxy`).
//!
//! Without haproxy the test says why and returns, unless `KIBITZ_ORACLE=1` (CI, which installs it).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{DEADLINE, Server, TempDir};

fn haproxy() -> Option<std::path::PathBuf> {
    let found =
        ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"].iter().map(std::path::PathBuf::from).find(|p| p.is_file());
    found.or_else(|| {
        let out = Command::new("sh").args(["-c", "command -v haproxy"]).output().ok()?;
        let path = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (!path.is_empty()).then(|| path.into())
    })
}

/// A loopback port free now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// The shipped configuration with its docker names and ports replaced by the test's: one node (server `a`),
/// the balancer's own ports on the loopback.
fn configuration(http: SocketAddr, guide: SocketAddr, front_http: u16, front_guide: u16) -> String {
    let shipped = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docker/haproxy.cfg")).expect("read");
    let mut out = String::new();
    for line in shipped.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("server b ") {
            continue;
        }
        let line = line
            .replace("bind :8080", &format!("bind 127.0.0.1:{front_http}"))
            .replace("bind :27533", &format!("bind 127.0.0.1:{front_guide}"))
            .replace("kibitz-a:8080", &http.to_string())
            .replace("kibitz-a:27533", &guide.to_string())
            .replace("check port 8080", &format!("check port {}", http.port()))
            .replace(" resolvers docker", "");
        out.push_str(&line);
        out.push('\n');
    }
    for expected in ["option forwardfor", "send-proxy", &format!("127.0.0.1:{}", guide.port())] {
        assert!(out.contains(expected), "the shipped haproxy.cfg no longer has `{expected}`:\n{out}");
    }
    out
}

/// A running haproxy; killed on drop.
struct Balancer(Child);

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A connection to `to` from the loopback address `from`.
fn connect_from(from: IpAddr, to: SocketAddr) -> std::io::Result<TcpStream> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::new(from, 0))?;
        socket.connect(to).await
    })?;
    let stream = stream.into_std()?;
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(DEADLINE))?;
    Ok(stream)
}

/// The status of `GET target` sent through the balancer from `from`.
fn get_from(from: IpAddr, to: SocketAddr, target: &str) -> Option<u16> {
    let mut stream = connect_from(from, to).ok()?;
    stream.write_all(format!("GET {target} HTTP/1.1\r\nHost: kibitz\r\nConnection: close\r\n\r\n").as_bytes()).ok()?;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    text.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
}

/// The lines of a GUIDE session opened through the balancer from `from`, up to its greeting's end or an error.
fn guide_from(from: IpAddr, to: SocketAddr) -> (TcpStream, Vec<String>) {
    let stream = connect_from(from, to).expect("connect to the balancer");
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = line.trim().to_string();
                let done = line == "engineok" || line.starts_with("error");
                lines.push(line);
                if done {
                    break;
                }
            }
        }
    }
    (stream, lines)
}

#[test]
fn the_shipped_balancer_gives_each_client_its_own_limits_over_http_and_guide() {
    let Some(haproxy) = haproxy() else {
        assert!(std::env::var("KIBITZ_ORACLE").as_deref() != Ok("1"), "KIBITZ_ORACLE=1 but haproxy is not installed");
        eprintln!("skipped: haproxy is not installed (apt-get install haproxy)");
        return;
    };
    let server = Server::start(&[
        "--trusted-proxy",
        "127.0.0.1",
        "--anon-rate",
        "0.01",
        "--anon-burst",
        "2",
        "--guide-max-sessions-per-address",
        "1",
    ]);
    let guide = server.guide_addr.expect("gateway");
    let (front_http, front_guide) = (free_port(), free_port());
    let dir = TempDir::new("haproxy");
    let config = dir.path().join("haproxy.cfg");
    std::fs::write(&config, configuration(server.addr, guide, front_http, front_guide)).expect("write");
    let check = Command::new(&haproxy).arg("-c").arg("-f").arg(&config).output().expect("run haproxy -c");
    assert!(check.status.success(), "haproxy -c: {}", String::from_utf8_lossy(&check.stderr));
    let log = std::fs::File::create(dir.path().join("haproxy.log")).expect("log");
    let _balancer = Balancer(
        Command::new(&haproxy)
            .arg("-db")
            .arg("-f")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start haproxy"),
    );
    let front_http = SocketAddr::from(([127, 0, 0, 1], front_http));
    let front_guide = SocketAddr::from(([127, 0, 0, 1], front_guide));
    let (one, two): (IpAddr, IpAddr) = ("127.0.0.2".parse().expect("ip"), "127.0.0.3".parse().expect("ip"));

    // The balancer has taken the node in once a probe (free of charge) answers through it.
    let deadline = Instant::now() + DEADLINE;
    while get_from(one, front_http, "/healthz") != Some(200) {
        assert!(Instant::now() < deadline, "no answer through haproxy: {}", dir.path().display());
        std::thread::sleep(Duration::from_millis(100));
    }

    // HTTP: each client's bucket (two requests) is its own, though every request comes from the balancer.
    assert_eq!(get_from(one, front_http, "/v1/games"), Some(200));
    assert_eq!(get_from(one, front_http, "/v1/games"), Some(200));
    assert_eq!(get_from(one, front_http, "/v1/games"), Some(429), "the first client's bucket is spent");
    assert_eq!(get_from(two, front_http, "/v1/games"), Some(200), "another client behind the same balancer");

    // GUIDE: one session per client address, counted by the address the balancer's PROXY line names.
    let (mut first, lines) = guide_from(one, front_guide);
    assert!(lines.first().is_some_and(|l| l.starts_with("name kibitz")), "{lines:?}");
    let (_again, lines) = guide_from(one, front_guide);
    assert!(lines.iter().any(|l| l.contains("per address") && l.contains("127.0.0.2")), "{lines:?}");
    let (mut other, lines) = guide_from(two, front_guide);
    assert!(lines.last().is_some_and(|l| l == "engineok"), "another client has its own place: {lines:?}");
    let _ = first.write_all(b"quit\n");
    let _ = other.write_all(b"quit\n");
    server.stop();
}
