//! Shared by the server integration tests: a real `kibitz serve` process on an ephemeral port with its own
//! SQLite file, a minimal HTTP/1.1 client, a WebSocket client, and a check of JSON bodies against the
//! committed OpenAPI document (the subset of JSON Schema the document uses).
//!
//! Every wait has a deadline, so a broken server fails a test instead of hanging it.

#![allow(dead_code)] // Each test file uses its own part of this module.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_tungstenite::tungstenite;

pub mod pg;

/// How long anything may take before a test gives up: generous, the machine is shared.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "kibitz-server-{name}-{}-{nanos}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The SQLite file the servers of this directory use.
    pub fn db(&self) -> PathBuf {
        self.0.join("cache.db")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running `kibitz serve`. Killed on drop (if still running).
pub struct Server {
    pub addr: SocketAddr,
    /// The GUIDE gateway's address (on an ephemeral port unless the test chose one; `None` with `--no-guide`).
    pub guide_addr: Option<SocketAddr>,
    child: Child,
    stderr_path: PathBuf,
    /// Present when the server made its own directory (not shared with a later server).
    _dir: Option<TempDir>,
}

impl Server {
    /// A server with a database of its own, and `args` added to the defaults (small hash, two workers).
    ///
    /// With `KIBITZ_TEST_STORE=postgres` the server gets a fresh database on a throwaway PostgreSQL cluster
    /// shared by the test process instead (the server suites then run on PostgreSQL; see `.ci/run`).
    pub fn start(args: &[&str]) -> Server {
        let dir = TempDir::new("db");
        let mut server = match std::env::var("KIBITZ_TEST_STORE").as_deref() {
            Ok("postgres") => {
                let cluster = pg::Cluster::shared().expect("KIBITZ_TEST_STORE=postgres needs PostgreSQL");
                Server::start_with_db(&dir, &cluster.database(), args)
            }
            _ => Server::start_on(&dir, args),
        };
        server._dir = Some(dir);
        server
    }

    /// A server on the database of `dir` (which outlives it, for restarts).
    pub fn start_on(dir: &TempDir, args: &[&str]) -> Server {
        Server::start_with_db(dir, &dir.db().display().to_string(), args)
    }

    /// A server on the database of `dir` with environment variables set (`KIBITZ_LOG` among them, say).
    pub fn start_with_env(dir: &TempDir, args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::start_full(dir, &dir.db().display().to_string(), args, env)
    }

    /// A server on the store `db` (a path or URL), its logs in `dir`.
    pub fn start_with_db(dir: &TempDir, db: &str, args: &[&str]) -> Server {
        Server::start_full(dir, db, args, &[])
    }

    /// A server on the store `db`, its logs in `dir`, with environment variables set.
    pub fn start_full(dir: &TempDir, db: &str, args: &[&str], env: &[(&str, &str)]) -> Server {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let stderr_path = dir.path().join(format!("stderr-{}.log", SEQ.fetch_add(1, Ordering::Relaxed)));
        let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
        let mut command = Command::new(env!("CARGO_BIN_EXE_kibitz"));
        command.args(["serve", "--http", "127.0.0.1:0", "--db", db]);
        for (flag, value) in [("--hash-mb", "4"), ("--workers", "2")] {
            if !args.contains(&flag) {
                command.args([flag, value]);
            }
        }
        // Servers run in parallel: none may take the fixed GUIDE port.
        if !args.contains(&"--guide") && !args.contains(&"--no-guide") {
            command.args(["--guide", "127.0.0.1:0"]);
        }
        command.args(args);
        command.env("KIBITZ_LOG", "warn").stdin(Stdio::null()).stdout(Stdio::piped()).stderr(stderr);
        // Environment settings of the person running the tests must not change the servers.
        for (key, _) in std::env::vars() {
            if key.starts_with("KIBITZ_") && key != "KIBITZ_LOG" {
                command.env_remove(key);
            }
        }
        command.envs(env.iter().copied());
        let mut child = command.spawn().expect("start kibitz serve");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server =
            Server { addr: "127.0.0.1:1".parse().expect("addr"), guide_addr: None, child, stderr_path, _dir: None };
        let deadline = Instant::now() + DEADLINE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    // The gateway's line comes before the HTTP one.
                    if let Some(addr) = line.strip_prefix("kibitz GUIDE gateway listening on ") {
                        server.guide_addr = Some(addr.trim().parse().expect("GUIDE address"));
                    }
                    if let Some(addr) = line.strip_prefix("kibitz listening on http://") {
                        server.addr = addr.trim().parse().expect("listening address");
                        return server;
                    }
                }
                Err(_) => {
                    panic!("the server exited or printed no address within {DEADLINE:?}; stderr:\n{}", server.stderr())
                }
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server wrote to stderr so far (for failure messages).
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Send SIGTERM (graceful shutdown).
    pub fn terminate(&self) {
        let status = Command::new("kill").args(["-TERM", &self.pid().to_string()]).status().expect("run kill");
        assert!(status.success(), "kill -TERM failed");
    }

    /// Wait up to `timeout` for the process to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then the exit status (panics unless it exits with 0 within the deadline).
    pub fn stop(mut self) {
        self.terminate();
        let status = self.wait_exit(DEADLINE);
        assert!(
            status.is_some_and(|s| s.success()),
            "the server did not exit cleanly: {status:?}; stderr:\n{}",
            self.stderr()
        );
    }

    pub fn request(&self, method: &str, target: &str, content_type: Option<&str>, body: &[u8]) -> Response {
        let response = http(self.addr, method, target, content_type, body);
        check_against_document(method, target, &response);
        response
    }

    pub fn get(&self, target: &str) -> Response {
        self.request("GET", target, None, b"")
    }

    pub fn post(&self, target: &str, body: &Value) -> Response {
        self.request("POST", target, Some("application/json"), body.to_string().as_bytes())
    }

    /// POST that must answer 200 with JSON; the body.
    pub fn post_ok(&self, target: &str, body: &Value) -> Value {
        let r = self.post(target, body);
        assert_eq!(r.status, 200, "POST {target} {body}: {}", r.text());
        r.json()
    }

    /// The value of a metric without labels.
    pub fn metric(&self, name: &str) -> f64 {
        let r = self.get("/metrics");
        assert_eq!(r.status, 200);
        metric_value(&r.text(), name).unwrap_or_else(|| panic!("no metric {name} in /metrics"))
    }

    /// Poll until `ok` holds for the metric, within the deadline.
    pub fn wait_metric(&self, name: &str, ok: impl Fn(f64) -> bool) -> f64 {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let v = self.metric(name);
            if ok(v) {
                return v;
            }
            assert!(Instant::now() < deadline, "metric {name} stuck at {v}");
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    pub fn ws(&self) -> Ws {
        Ws::connect(self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// A metric line `name value` (no labels) in Prometheus text.
pub fn metric_value(text: &str, name: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?.strip_prefix(' ')?;
        rest.trim().parse().ok()
    })
}

// ---- HTTP/1.1 ----

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or("")
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }

    /// Assert a problem document with `status`; return it.
    pub fn problem(&self, status: u16) -> Value {
        assert_eq!(self.status, status, "{}", self.text());
        assert_eq!(self.content_type(), "application/problem+json", "{}", self.text());
        let p = self.json();
        assert_eq!(p["status"], json!(status), "{p}");
        for member in ["type", "title", "detail"] {
            assert!(p[member].is_string(), "problem without `{member}`: {p}");
        }
        p
    }
}

/// One request on a fresh connection (`Connection: close`); every read and write has a timeout.
pub fn http(addr: SocketAddr, method: &str, target: &str, content_type: Option<&str>, body: &[u8]) -> Response {
    let headers: Vec<(&str, &str)> = content_type.map(|ct| ("Content-Type", ct)).into_iter().collect();
    http_with(addr, method, target, &headers, body)
}

/// [`http`] with header fields of the caller's.
pub fn http_with(addr: SocketAddr, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let deadline = Instant::now() + DEADLINE;
    let mut stream = TcpStream::connect_timeout(&addr, DEADLINE).expect("connect");
    stream.set_read_timeout(Some(DEADLINE)).expect("timeout");
    stream.set_write_timeout(Some(DEADLINE)).expect("timeout");
    let mut head = format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if method != "GET" || !body.is_empty() {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    // A server may answer (413) and close before reading all of a large body: read its answer anyway.
    let _ = stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(body));
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        assert!(Instant::now() < deadline, "{method} {target}: no complete answer within {DEADLINE:?}");
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // A reset after the answer arrived (the server closed with unread body bytes).
            Err(e) if !raw.is_empty() && e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("{method} {target}: read failed: {e}"),
        }
    }
    parse_response(&raw).unwrap_or_else(|e| panic!("{method} {target}: {e}: {}", String::from_utf8_lossy(&raw)))
}

/// Send `bytes` as they are (a request the helpers above would not write: partial, with odd headers) on a fresh
/// connection, and read the answer until the server closes the connection.
pub fn raw_exchange(addr: SocketAddr, bytes: &[u8]) -> Response {
    let deadline = Instant::now() + DEADLINE;
    let mut stream = TcpStream::connect_timeout(&addr, DEADLINE).expect("connect");
    stream.set_read_timeout(Some(DEADLINE)).expect("timeout");
    stream.set_write_timeout(Some(DEADLINE)).expect("timeout");
    let _ = stream.write_all(bytes);
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        assert!(Instant::now() < deadline, "no complete answer within {DEADLINE:?}");
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if !raw.is_empty() && e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("read failed: {e}"),
        }
    }
    parse_response(&raw).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&raw)))
}

pub fn parse_response(raw: &[u8]) -> Result<Response, String> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or("no end of headers")?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| "headers are not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().ok_or("no status line")?;
    let mut parts = status_line.splitn(3, ' ');
    if parts.next() != Some("HTTP/1.1") {
        return Err(format!("bad status line `{status_line}`"));
    }
    let status: u16 = parts.next().and_then(|s| s.parse().ok()).ok_or("bad status")?;
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line.split_once(':').ok_or("bad header line")?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let rest = &raw[end + 4..];
    let header = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
    let body = if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        dechunk(rest)?
    } else if let Some(len) = header("content-length") {
        let len: usize = len.parse().map_err(|_| "bad content-length")?;
        if rest.len() < len {
            return Err(format!("body cut short: {} of {len} bytes", rest.len()));
        }
        rest[..len].to_vec()
    } else {
        rest.to_vec()
    };
    Ok(Response { status, headers, body })
}

fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let eol = data.windows(2).position(|w| w == b"\r\n").ok_or("bad chunk")?;
        let size_text = std::str::from_utf8(&data[..eol]).map_err(|_| "bad chunk size")?;
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| "bad chunk size")?;
        data = &data[eol + 2..];
        if size == 0 {
            return Ok(body);
        }
        if data.len() < size + 2 {
            return Err("chunk cut short".into());
        }
        body.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

// ---- WebSocket ----

/// A WebSocket client on `/v1/stream` (blocking, with read timeouts).
pub struct Ws {
    socket: tungstenite::WebSocket<TcpStream>,
}

impl Ws {
    pub fn connect(addr: SocketAddr) -> Ws {
        let stream = TcpStream::connect_timeout(&addr, DEADLINE).expect("connect");
        stream.set_read_timeout(Some(Duration::from_millis(200))).expect("timeout");
        stream.set_write_timeout(Some(DEADLINE)).expect("timeout");
        let (socket, response) =
            tungstenite::client(format!("ws://{addr}/v1/stream"), stream).expect("WebSocket handshake");
        assert_eq!(response.status().as_u16(), 101);
        Ws { socket }
    }

    pub fn send(&mut self, message: &Value) {
        self.send_text(&message.to_string());
    }

    pub fn send_text(&mut self, text: &str) {
        self.socket.send(tungstenite::Message::text(text)).expect("send");
    }

    /// The next JSON message within `timeout`, if any (None on timeout). Messages are checked against the
    /// document: `bestmove` against Analysis, `error` against Problem.
    pub fn recv_within(&mut self, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.socket.read() {
                Ok(tungstenite::Message::Text(text)) => {
                    let v: Value = serde_json::from_str(text.as_str()).expect("JSON message");
                    match v["type"].as_str() {
                        Some("bestmove") => validate_named("Analysis", &v),
                        Some("error") => validate_named("Problem", &v),
                        Some("info") => {}
                        Some("progress") => {
                            for member in ["id", "job", "status", "done", "total"] {
                                assert!(v.get(member).is_some(), "progress without `{member}`: {v}");
                            }
                            assert!(v["done"].as_u64() <= v["total"].as_u64(), "{v}");
                        }
                        other => panic!("unexpected message type {other:?}: {v}"),
                    }
                    return Some(v);
                }
                Ok(tungstenite::Message::Close(_)) => panic!("the server closed the socket"),
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(e) => panic!("WebSocket read: {e}"),
            }
            if Instant::now() >= deadline {
                return None;
            }
        }
    }

    /// The next message (panics after the deadline).
    pub fn recv(&mut self) -> Value {
        self.recv_within(DEADLINE).unwrap_or_else(|| panic!("no WebSocket message within {DEADLINE:?}"))
    }

    /// Messages up to and including the first of `kind` for `id` (others are returned too).
    pub fn until(&mut self, kind: &str, id: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let v = self.recv();
            let done = v["type"] == kind && v["id"] == id;
            seen.push(v);
            if done {
                return seen;
            }
        }
    }

    /// Close the socket as a client does (code 1000) and read the server's answer: the code of the close frame it
    /// sends back (RFC 6455 5.5.1), or `None` when the connection ends without one.
    pub fn close_cleanly(&mut self) -> Option<u16> {
        use tungstenite::protocol::{CloseFrame, frame::coding::CloseCode};
        let frame = CloseFrame { code: CloseCode::Normal, reason: "bye".into() };
        self.socket.close(Some(frame)).expect("send the close frame");
        let deadline = Instant::now() + DEADLINE;
        while Instant::now() < deadline {
            match self.socket.read() {
                Ok(tungstenite::Message::Close(frame)) => return frame.map(|f| u16::from(f.code)),
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(_) => return None,
            }
        }
        None
    }

    /// Wait for the server to close the socket (e.g. on shutdown); true if it did within `timeout`.
    pub fn closed_within(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            match self.socket.read() {
                Ok(tungstenite::Message::Close(_)) => return true,
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(_) => return true,
            }
        }
        false
    }
}

// ---- the OpenAPI document ----

/// `api/openapi.json` as committed.
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("api/openapi.json");
        let text = std::fs::read_to_string(&path).expect("api/openapi.json");
        serde_json::from_str(&text).expect("api/openapi.json is JSON")
    })
}

/// Check a value against the component schema `name`.
pub fn validate_named(name: &str, value: &Value) {
    let schema = json!({ "$ref": format!("#/components/schemas/{name}") });
    if let Err(e) = validate(document(), &schema, value, "$") {
        panic!("{name} does not fit the document: {e}\n{value}");
    }
}

/// Check an answer of a documented path against its documented response: the status must be documented
/// (unless the path is not in the document), the content type must be the documented one, and a JSON body
/// must validate against its schema.
pub fn check_against_document(method: &str, target: &str, response: &Response) {
    let path = target.split('?').next().unwrap_or(target);
    let Some(operation) = documented_path(path).and_then(|p| p.get(method.to_ascii_lowercase())) else {
        return;
    };
    let Some(documented) = operation["responses"].get(response.status.to_string()) else {
        panic!("{method} {path} answered {}, which the document does not list: {}", response.status, response.text());
    };
    let Some(content) = documented.get("content").and_then(Value::as_object) else { return };
    let media = response.content_type().split(';').next().unwrap_or("").trim().to_string();
    let Some(entry) = content.get(&media) else {
        panic!("{method} {path} {}: content type `{media}` is not documented", response.status);
    };
    if let Some(schema) = entry.get("schema") {
        let body = response.json();
        if let Err(e) = validate(document(), schema, &body, "$") {
            panic!("{method} {path} {}: the body does not fit the document: {e}\n{body}", response.status);
        }
    }
}

/// The document's entry for a concrete path: the literal one, or a template whose `{name}` segments match
/// any one segment.
fn documented_path(path: &str) -> Option<&'static Value> {
    let paths = document()["paths"].as_object()?;
    if let Some(entry) = paths.get(path) {
        return Some(entry);
    }
    let segments: Vec<&str> = path.split('/').collect();
    paths.iter().find_map(|(template, entry)| {
        let pattern: Vec<&str> = template.split('/').collect();
        let fits = pattern.len() == segments.len()
            && pattern
                .iter()
                .zip(&segments)
                .all(|(p, s)| (p.starts_with('{') && p.ends_with('}') && !s.is_empty()) || p == s);
        fits.then_some(entry)
    })
}

/// JSON Schema, the subset the document uses: `$ref` (local), `type` (a name or a list), `required`,
/// `properties`, `additionalProperties: false`, `items`, `enum`, `oneOf`, `minimum`.
pub fn validate(doc: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let pointer = reference.strip_prefix('#').ok_or_else(|| format!("{at}: non-local $ref {reference}"))?;
        let target = doc.pointer(pointer).ok_or_else(|| format!("{at}: dangling $ref {reference}"))?;
        return validate(doc, target, value, at);
    }
    if let Some(types) = schema.get("type") {
        let names: Vec<&str> = match types {
            Value::String(s) => vec![s.as_str()],
            Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
            other => return Err(format!("{at}: bad `type` in the schema: {other}")),
        };
        if !names.iter().any(|t| has_type(value, t)) {
            return Err(format!("{at}: expected {names:?}, found {value}"));
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        return Err(format!("{at}: {value} is not one of {allowed:?}"));
    }
    if let (Some(min), Some(n)) = (schema.get("minimum").and_then(Value::as_f64), value.as_f64())
        && n < min
    {
        return Err(format!("{at}: {n} is below the minimum {min}"));
    }
    if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
        let fitting = options.iter().filter(|s| validate(doc, s, value, at).is_ok()).count();
        if fitting != 1 {
            return Err(format!("{at}: {value} fits {fitting} of the oneOf schemas, not exactly one"));
        }
    }
    if let Value::Object(map) = value {
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(name) {
                    return Err(format!("{at}: missing required member `{name}`"));
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (name, member) in map {
            match properties.and_then(|p| p.get(name)) {
                Some(s) => validate(doc, s, member, &format!("{at}.{name}"))?,
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    return Err(format!("{at}: member `{name}` is not allowed"));
                }
                None => {}
            }
        }
    }
    if let (Value::Array(list), Some(items)) = (value, schema.get("items")) {
        for (i, item) in list.iter().enumerate() {
            validate(doc, items, item, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}

fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        _ => false,
    }
}

// ---- positions per game ----

/// What the tests need to know of a game to exercise it: for each position format, a position in it, moves
/// legal from it, and a position where the side to move has lost (no piece, no move). `/v1/games` lists the
/// games; a listed game without fixtures here fails the tests, so a newly landed game gets tested.
pub struct Fixture {
    pub game: &'static str,
    /// (format, position, moves legal from it)
    pub positions: &'static [(&'static str, &'static str, &'static [&'static str])],
    /// Positions whose number of legal moves is known independently of kibitz (published perft, or a rules
    /// trap found by comparison with another generator).
    pub move_counts: &'static [(&'static str, usize)],
    /// A position with the game over (the side to move cannot move).
    pub finished: &'static str,
    /// An unreadable position and the token the error must name.
    pub bad_position: (&'static str, &'static str),
    /// The side `white_pov` scores are seen from.
    pub white: &'static str,
    /// A small depth for fast searches, and one that takes a noticeable time.
    pub quick_depth: u32,
    pub slow_depth: u32,
}

pub const FIXTURES: &[Fixture] = &[
    Fixture {
        game: "checkers",
        positions: &[
            ("fen", "B:W21-32:B1-12", &["11-15", "23-19", "8-11"]),
            ("fen", "W:W18,24,27,28,K10,K15:B12,16,20,K22,K25,K29", &["15-11"]),
        ],
        move_counts: &[("B:W21-32:B1-12", 7)],
        finished: "B:W21,K5:B",
        bad_position: ("B:W21-32:B1-12,Z9", "Z9"),
        white: "white",
        quick_depth: 6,
        slow_depth: 20,
    },
    Fixture {
        game: "draughts",
        positions: &[
            ("fen", "W:W31-50:B1-20", &["32-28", "19-23", "28x19"]),
            ("guide", "white bbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww", &["32 28 0", "17 21 0"]),
        ],
        move_counts: &[("W:W31-50:B1-20", 9)],
        finished: "W:W:B1,2",
        bad_position: ("W:W31-50:B1-20,Z9", "Z9"),
        white: "white",
        quick_depth: 4,
        slow_depth: 16,
    },
    Fixture {
        game: "hive",
        positions: &[
            ("gamestring", "Base+MLP", &["wA1", "bA1 wA1-", "wQ -wA1"]),
            ("gamestring", "Base+MLP;InProgress;White[2];wS1;bS1 wS1-", &["wQ -wS1"]),
        ],
        // Two walks of the spider bS1 cross one cell at different steps: 28 moves, not 26.
        move_counts: &[(
            "Base;InProgress;Black[5];wS1;bB1 -wS1;wB1 wS1\\;bS1 /bB1;wS2 /wB1;bG1 -bS1;wQ /wS2;bQ -bB1;wB2 -wQ",
            28,
        )],
        finished: "Base+MLP;WhiteWins;Black[6];wB1;bM -wB1;wL wB1/;bQ \\bM;wG1 \\wL;bQ /wG1;wQ \\wG1;bP -bM;wA1 wL-;bP -bQ;wA1 /wQ",
        bad_position: ("Base+XYZ", "Base+XYZ"),
        white: "white",
        quick_depth: 2,
        slow_depth: 7,
    },
    Fixture {
        game: "chess",
        positions: &[
            ("fen", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", &["e2e4", "e7e5", "g1f3"]),
            ("fen", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", &["e1g1"]),
        ],
        move_counts: &[("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 48)],
        finished: "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1",
        bad_position: (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX",
        ),
        white: "white",
        quick_depth: 3,
        slow_depth: 12,
    },
    Fixture {
        game: "xiangqi",
        positions: &[
            (
                "fen",
                "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
                &["H2-E2", "H9-G7", "H0-G2"],
            ),
            ("fen", "r1ba1a3/4kn3/2n1b4/pNp1p1p1p/4c4/6P2/P1P2R2P/1CcC5/9/2BAKAB2 w", &["F3-F8"]),
        ],
        move_counts: &[("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1", 44)],
        finished: "3k5/9/9/9/9/9/9/9/3r1r3/4K4 w",
        bad_position: ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNX w", "X"),
        white: "red",
        quick_depth: 3,
        slow_depth: 12,
    },
];

pub fn fixture(game: &str) -> &'static Fixture {
    FIXTURES.iter().find(|f| f.game == game).unwrap_or_else(|| panic!("no test fixture for the game `{game}`"))
}

/// The games the server lists, each with its fixture and its formats.
pub fn games(server: &Server) -> Vec<(Value, &'static Fixture)> {
    let r = server.get("/v1/games");
    assert_eq!(r.status, 200);
    let list = r.json()["games"].as_array().expect("games").clone();
    assert!(!list.is_empty());
    list.into_iter()
        .map(|g| {
            let f = fixture(g["name"].as_str().expect("name"));
            (g, f)
        })
        .collect()
}

/// A score as one comparable number (a sooner win is better, a later loss is better).
pub fn score_value(score: &Value) -> i64 {
    if let Some(cp) = score["cp"].as_i64() {
        cp
    } else if let Some(mate) = score["mate"].as_i64() {
        if mate > 0 { 1_000_000 - mate } else { -1_000_000 - mate }
    } else {
        panic!("bad score {score}")
    }
}

/// A score seen from the other side.
pub fn negate(score: &Value) -> Value {
    match (score["cp"].as_i64(), score["mate"].as_i64()) {
        (Some(cp), _) => json!({ "cp": -cp }),
        (_, Some(mate)) => json!({ "mate": -mate }),
        _ => panic!("bad score {score}"),
    }
}

/// Whether process `pid` is still running (a zombie waiting for its parent counts as gone).
#[cfg(target_os = "linux")]
pub fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses.
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Runs `sql` on a SQLite file through its own connection (as another program would); the rows it changed.
pub fn sqlite_execute(db: &Path, sql: &str) -> u64 {
    use sqlx::Connection;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(db);
        let mut conn = sqlx::SqliteConnection::connect_with(&options).await.expect("open the file");
        let changed = sqlx::query(sqlx::AssertSqlSafe(sql.to_string())).execute(&mut conn).await.expect("execute");
        conn.close().await.expect("close");
        changed.rows_affected()
    })
}
