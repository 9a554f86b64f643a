//! GUIDE on TCP: [`serve_stream`] runs one session on a connected socket; [`Gateway`] is the listener of
//! `kibitz serve` (one session per connection, every session on the server's pool, a limit on open sessions);
//! [`main`] is the `kibitz-guide` executable a GUI launches.
//!
//! Each session runs on threads of its own (a reader and the session loop of [`crate::protocols::stdio`]),
//! so a session never blocks the async runtime. Its socket has a read timeout (the idle limit, reported to the
//! session, which closes when it is not searching) and a write timeout (a GUI that stops reading cannot hold
//! the session for ever). When the connection closes, the session ends and its search is cancelled.

use std::collections::HashMap;
use std::io::{self, BufWriter};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{DEFAULT_PORT, GuideConfig, GuideEvent, GuideSession, transport};
use crate::analysis::Analysis;
use crate::games::GameKind;
use crate::pool::{Pool, PoolConfig};
use crate::protocols::engine::{ENGINES_ENV, EngineArgs, EngineSetup};
use crate::protocols::proxy_header;
use crate::protocols::stdio::{self, EventSender};

/// How long a reply to the GUI may take to be written (the peer reading nothing meanwhile): then the session
/// ends. Each write is also bounded by it (the socket's write timeout).
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a stopping gateway lets its sessions write the moves their stopped searches answer.
const ANSWER_AT_SHUTDOWN: Duration = Duration::from_secs(2);

/// The session's output: a socket whose replies must each be written out within [`WRITE_TIMEOUT`] in all. The
/// socket's own write timeout bounds one blocked write, but a peer that reads a little now and then makes
/// each write succeed in part, and a reply could take for ever (an audit's GUI, reading nothing, kept its
/// session open for minutes).
struct Deadline<'a> {
    stream: &'a TcpStream,
    limit: Duration,
    /// When the reply being written began (the first write since the last complete flush).
    since: Option<std::time::Instant>,
}

impl io::Write for Deadline<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let since = *self.since.get_or_insert_with(std::time::Instant::now);
        if since.elapsed() > self.limit {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the peer read no reply for {} s", self.limit.as_secs()),
            ));
        }
        (&mut &*self.stream).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        (&mut &*self.stream).flush()?;
        self.since = None;
        Ok(())
    }
}

/// Run one session on `stream` until it quits, the peer closes the connection, or the session is idle too
/// long. Blocks the calling thread.
pub fn serve_stream(stream: TcpStream, analysis: Analysis, config: GuideConfig) -> io::Result<()> {
    let peer = stream.peer_addr().map_or_else(|_| "?".to_string(), |a| a.to_string());
    serve_session(stream, &peer, analysis, config)
}

/// [`serve_stream`] for the client `peer` names in the logs.
fn serve_session(stream: TcpStream, peer: &str, analysis: Analysis, config: GuideConfig) -> io::Result<()> {
    let span = tracing::info_span!("guide_session", %peer);
    let _enter = span.enter();
    tracing::info!("GUIDE session opened");
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(error = %e, "cannot set TCP_NODELAY");
    }
    // The session decides when it has been idle long enough; it is asked four times per idle period.
    stream.set_read_timeout(config.idle.filter(|d| !d.is_zero()).map(|d| (d / 4).max(Duration::from_millis(50))))?;
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    let input = stream.try_clone()?;
    let transport = transport(&config);
    let result = {
        let mut output = BufWriter::new(Deadline { stream: &stream, limit: WRITE_TIMEOUT, since: None });
        stdio::run_with(
            move |events: EventSender<GuideEvent>| GuideSession::new(analysis, config, move |e| events.send(e)),
            input,
            &mut output,
            transport,
        )
    };
    // Wakes the reader thread, which may still be blocked in a read.
    let _ = stream.shutdown(Shutdown::Both);
    match &result {
        Ok(()) => tracing::info!("GUIDE session closed"),
        Err(e) if e.kind() == io::ErrorKind::TimedOut => {
            tracing::warn!(error = %e, "GUIDE session closed: the client stopped reading its replies")
        }
        Err(e) => tracing::info!(error = %e, "GUIDE session closed: the connection failed"),
    }
    result
}

/// The limits of a server's gateway.
#[derive(Clone, Debug)]
pub struct GatewayConfig {
    /// Sessions open at once; more connections are told so and closed.
    pub max_sessions: usize,
    /// Sessions one address may have open at once (0: no limit).
    pub max_per_address: usize,
    /// Load balancers whose PROXY protocol header (v1 or v2) names the client a connection is from
    /// (`--trusted-proxy`): the limit per address and the fair queue count that client.
    pub trusted_proxies: Vec<crate::access::TrustedProxy>,
    /// When set, a session must begin with `#kibitz key KEY`, a valid key of this store (`--auth required`).
    pub keys: Option<crate::store::Store>,
    /// Each session's settings (`own_pool` is false: sessions share the server's pool).
    pub session: GuideConfig,
}

/// How long a trusted proxy has to begin its PROXY protocol header (one that sends nothing in this time is
/// taken to send none: a proxy sends it as it connects, a client waits for the engine's greeting), and to
/// send the whole of it.
const PROXY_HEADER_FIRST: Duration = Duration::from_secs(2);
const PROXY_HEADER_WAIT: Duration = Duration::from_secs(10);

/// Longest a key line may be, and how long a client has to send it.
const MAX_KEY_LINE: usize = 512;
const KEY_LINE_WAIT: Duration = Duration::from_secs(10);

/// Read the `#kibitz key KEY` line a session must begin with, byte by byte (nothing after it is consumed),
/// and check the key; the key's name, or the error line to send.
fn read_key_line(
    stream: &TcpStream,
    store: &crate::store::Store,
    runtime: &tokio::runtime::Handle,
) -> Result<String, String> {
    use std::io::Read;
    // The wait is for the whole line: a client dribbling a byte at a time does not hold its place longer.
    let deadline = Instant::now() + KEY_LINE_WAIT;
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    let mut reader = stream;
    let late = || format!("the `#kibitz key KEY` line did not come within {} s", KEY_LINE_WAIT.as_secs());
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(late());
        }
        let _ = stream.set_read_timeout(Some(left));
        match reader.read(&mut byte) {
            Ok(1) if byte[0] == b'\n' => break,
            Ok(1) if line.len() < MAX_KEY_LINE => line.push(byte[0]),
            Ok(1) => return Err(format!("the key line is longer than {MAX_KEY_LINE} bytes")),
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => return Err(late()),
            _ => return Err("this server needs `#kibitz key KEY` as the first line".into()),
        }
    }
    let text = String::from_utf8_lossy(&line);
    let key = match text.trim().strip_prefix("#kibitz key") {
        Some(rest) if rest.starts_with([' ', '\t']) && !rest.trim().is_empty() => rest.trim().to_string(),
        _ => return Err("this server needs `#kibitz key KEY` as the first line".into()),
    };
    runtime.block_on(crate::access::check_key(store, &key)).map(|row| row.name).map_err(|e| format!("{e}"))
}

/// The sessions a gateway has open: their sockets, so that shutdown can close them, and their number, which
/// shutdown waits to see at 0.
#[derive(Default)]
struct Sessions {
    open: Mutex<HashMap<u64, TcpStream>>,
    per_address: Arc<crate::access::PerAddress>,
    count: tokio::sync::watch::Sender<usize>,
    next: AtomicU64,
}

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, TcpStream>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Counts a session until dropped.
struct Admitted {
    sessions: Arc<Sessions>,
    id: u64,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.sessions.lock().remove(&self.id);
        self.sessions.count.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// The GUIDE listener of `kibitz serve`.
pub struct Gateway {
    listener: tokio::net::TcpListener,
    analysis: Analysis,
    config: GatewayConfig,
    sessions: Arc<Sessions>,
}

impl Gateway {
    /// Listen on `addr`.
    pub async fn bind(addr: SocketAddr, analysis: Analysis, config: GatewayConfig) -> io::Result<Gateway> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let session = GuideConfig { own_pool: false, ..config.session.clone() };
        Ok(Gateway { listener, analysis, config: GatewayConfig { session, ..config }, sessions: Arc::default() })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accept connections until `shutdown` resolves; then close every session and wait (up to `grace`) for
    /// them to end.
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()>, grace: Duration) {
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = &mut shutdown => break,
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, peer)) => self.admit(stream, peer),
                    Err(e) => {
                        tracing::warn!(error = %e, "GUIDE gateway: accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
            }
        }
        drop(self.listener);
        // The reading side first: each session sees the end of its input, and a game's move being thought of
        // is written (the pool's shutdown stops its search, which answers with what it has) before the session
        // ends. Then, after at most ANSWER_AT_SHUTDOWN (a session blocked writing to a GUI that reads nothing
        // would not end), whatever is left is closed outright.
        for stream in self.sessions.lock().values() {
            let _ = stream.shutdown(Shutdown::Read);
        }
        let mut count = self.sessions.count.subscribe();
        let _ = tokio::time::timeout(grace.min(ANSWER_AT_SHUTDOWN), count.wait_for(|n| *n == 0)).await;
        for stream in self.sessions.lock().values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
        let _ = tokio::time::timeout(grace.saturating_sub(ANSWER_AT_SHUTDOWN), count.wait_for(|n| *n == 0)).await;
        let left = *self.sessions.count.borrow();
        if left > 0 {
            tracing::warn!(sessions = left, "GUIDE sessions still closing at shutdown");
        }
    }

    fn admit(&self, stream: tokio::net::TcpStream, peer: SocketAddr) {
        let stream = match stream.into_std().and_then(|s| s.set_nonblocking(false).map(|()| s)) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, %peer, "GUIDE gateway: cannot use the connection");
                return;
            }
        };
        let max = self.config.max_sessions;
        let mut taken = 0;
        self.sessions.count.send_modify(|n| {
            taken = *n;
            *n += 1;
        });
        let id = self.sessions.next.fetch_add(1, Ordering::Relaxed);
        let admitted = Admitted { sessions: Arc::clone(&self.sessions), id };
        if taken >= max {
            tracing::warn!(%peer, max, "GUIDE gateway: too many sessions, connection refused");
            let line = format!("error too many GUIDE sessions: this server allows {max} at once; try again later");
            let spawned = std::thread::Builder::new().name("kibitz-guide-refuse".into()).spawn(move || {
                refuse(&stream, &line);
                drop(admitted);
            });
            if let Err(e) = spawned {
                tracing::warn!(error = %e, "GUIDE gateway: no thread to refuse a connection");
            }
            return;
        }
        match stream.try_clone() {
            Ok(clone) => {
                self.sessions.lock().insert(id, clone);
            }
            Err(e) => {
                tracing::warn!(error = %e, %peer, "GUIDE gateway: cannot use the connection");
                return;
            }
        }
        let analysis = self.analysis.clone();
        let mut config = self.config.session.clone();
        let keys = self.config.keys.clone();
        let per_address = self.config.max_per_address;
        let addresses = Arc::clone(&self.sessions.per_address);
        let through_proxy = self.config.trusted_proxies.iter().any(|t| t.contains(peer.ip()));
        let runtime = tokio::runtime::Handle::current();
        let spawned = std::thread::Builder::new().name(format!("kibitz-guide-{id}")).spawn(move || {
            let _admitted = admitted;
            // Behind a trusted load balancer, the client is the one its PROXY protocol header names.
            let client = if through_proxy {
                match proxy_header::read(&stream, PROXY_HEADER_FIRST, PROXY_HEADER_WAIT) {
                    Ok(proxy_header::Start::Client(client)) => client,
                    Ok(proxy_header::Start::Plain | proxy_header::Start::Unnamed) => peer,
                    Err(why) => {
                        tracing::warn!(%peer, %why, "GUIDE gateway: a bad PROXY protocol header, refused");
                        refuse(&stream, &format!("error {why}"));
                        return;
                    }
                }
            } else {
                peer
            };
            let label = if client == peer { peer.to_string() } else { format!("{client} via {peer}") };
            let Some(slot) = addresses.take(client.ip(), per_address) else {
                tracing::warn!(peer = %label, per_address, "GUIDE gateway: too many sessions from one address, refused");
                let line = format!(
                    "error too many GUIDE sessions from {}: this server allows {per_address} per address; close one \
                     first",
                    client.ip()
                );
                refuse(&stream, &line);
                return;
            };
            config.client = Some(Arc::from(format!("guide:{}", client.ip())));
            if let Some(store) = keys {
                match read_key_line(&stream, &store, &runtime) {
                    Ok(name) => {
                        tracing::info!(peer = %label, key = %name, "GUIDE session authenticated");
                        config.client = Some(Arc::from(format!("key:{name}")));
                    }
                    Err(why) => {
                        tracing::info!(peer = %label, %why, "GUIDE session refused");
                        // The place is free before the client reads why.
                        drop(slot);
                        refuse(&stream, &format!("error {why}"));
                        return;
                    }
                }
            }
            let _slot = slot;
            if let Err(e) = serve_session(stream, &label, analysis, config) {
                tracing::debug!(error = %e, "GUIDE session ended with an error");
            }
        });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "GUIDE gateway: no thread for a session");
        }
    }
}

/// Tell a connection why it is refused (one `error` line), and close it.
fn refuse(stream: &TcpStream, line: &str) {
    use std::io::Write;
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let mut writer = stream;
    let _ = writer.write_all(format!("{line}\n").as_bytes()).and_then(|()| writer.flush());
    let _ = stream.shutdown(Shutdown::Both);
}

/// What `kibitz-guide` was asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Dial out to this address instead of listening.
    pub connect: Option<String>,
    /// Listen on this address and port.
    pub bind: String,
    pub port: u16,
    /// How long to wait for the GUI's connection.
    pub wait: Duration,
    pub config: GuideConfig,
    /// The engines file that `-engine NAME` names an engine of.
    pub engines: Option<std::path::PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            connect: None,
            bind: "127.0.0.1".into(),
            port: DEFAULT_PORT,
            wait: Duration::from_secs(600),
            config: GuideConfig { idle: Some(Duration::from_secs(86_400)), ..GuideConfig::default() },
            engines: None,
        }
    }
}

/// `kibitz-guide`'s usage text.
pub const USAGE: &str = "usage: kibitz-guide -guide [-port N] [-bind ADDR] [-connect HOST:PORT] [-wait S] \
[-idle S] [-hash MB] [-threads N] [-engines FILE -engine NAME]
  -guide              GUIDE mode (the switch a GUI passes; the only mode)
  -port N             listen on port N for the GUI's connection (default 27533; 0: any free port)
  -bind ADDR          the address to listen on (default 127.0.0.1; 0.0.0.0 for other machines)
  -connect HOST:PORT  connect to a GUI that listens, instead of listening
  -wait S             seconds to wait for the GUI's connection (default 600)
  -idle S             close the session after S seconds without a command or a search (default 86400; 0: never)
  -hash MB            transposition table size (default 64)
  -threads N          search threads (default 1)
  -engines FILE       an engines file (TOML; see kibitz's README, \"External engines\"; default: $KIBITZ_ENGINES)
  -engine NAME        analyse and play with that file's draughts engine NAME instead of kibitz's own
The engine prints `kibitz-guide listening on ADDR` on stdout, serves one connection, and exits when it ends.";

/// Read `kibitz-guide`'s arguments (without the program name). Switches may start with `-` or `--`.
pub fn parse_args<S: AsRef<str>>(args: &[S]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.iter().map(|a| a.as_ref());
    while let Some(arg) = it.next() {
        if !arg.starts_with('-') {
            return Err(format!("unknown argument `{arg}`"));
        }
        let name = arg.trim_start_matches('-').to_ascii_lowercase();
        if name == "guide" {
            continue;
        }
        if !["port", "bind", "connect", "wait", "idle", "hash", "threads", "engine", "engines"].contains(&name.as_str())
        {
            return Err(format!("unknown argument `{arg}`"));
        }
        let value = it.next().ok_or_else(|| format!("{arg} needs a value"))?;
        let number = |max: u64| -> Result<u64, String> {
            value.parse::<u64>().ok().filter(|&n| n <= max).ok_or_else(|| format!("{arg} `{value}`: expected 0-{max}"))
        };
        match name.as_str() {
            "port" => o.port = number(u16::MAX as u64)? as u16,
            "bind" => o.bind = value.to_string(),
            "connect" => o.connect = Some(value.to_string()),
            "wait" => o.wait = Duration::from_secs(number(86_400)?.max(1)),
            "idle" => o.config.idle = Some(Duration::from_secs(number(7 * 86_400)?)).filter(|d| !d.is_zero()),
            "hash" => o.config.hash_mb = number(1024)?.max(1) as u32,
            "engine" => o.config.engine = Some(value.to_string()),
            "engines" => o.engines = Some(value.into()),
            _ => o.config.threads = number(o.config.max_threads as u64)?.max(1) as u32,
        }
    }
    Ok(o)
}

/// The engine `-engine` names, from the engines file of `-engines` (else `env`, the value of
/// `KIBITZ_ENGINES`), checked to be a draughts engine: the same reading as every stdio executable's.
fn engine_setup(options: &Options, env: Option<std::ffi::OsString>) -> Result<EngineSetup, String> {
    let args = EngineArgs { engine: options.config.engine.clone(), engines: options.engines.clone() };
    args.load(&[GameKind::Draughts], env)
}

/// Accept one connection within `wait`.
fn accept_within(listener: &TcpListener, wait: Duration) -> io::Result<TcpStream> {
    listener.set_nonblocking(true)?;
    let deadline = Instant::now() + wait;
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false)?;
                return Ok(stream);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no GUI connected within {} seconds", wait.as_secs()),
                    ));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    }
}

fn connect(target: &str) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("`{target}` names no address"));
    for addr in target.to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(10)) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Run `kibitz-guide` with these arguments: listen (or connect), serve one session, return.
pub fn run(options: Options) -> io::Result<()> {
    let setup = engine_setup(&options, None).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    run_with(options, setup)
}

/// [`run`] with the engine already read.
fn run_with(options: Options, setup: EngineSetup) -> io::Result<()> {
    let engines = setup.engines;
    let stream = match &options.connect {
        Some(target) => connect(target)?,
        None => {
            let listener = TcpListener::bind((options.bind.as_str(), options.port)).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot listen on {}:{}: {e} (use -port N)", options.bind, options.port),
                )
            })?;
            let addr = listener.local_addr()?;
            {
                use std::io::Write;
                let mut out = io::stdout().lock();
                writeln!(out, "kibitz-guide listening on {addr}")?;
                out.flush()?;
            }
            accept_within(&listener, options.wait)?
        }
    };
    let config = GuideConfig { own_pool: true, engine: setup.engine, ..options.config };
    let pool =
        Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: config.hash_mb.max(1) as usize, clock_workers: 0 });
    let result = serve_stream(stream, Analysis::with_engines(pool, None, engines.clone()), config);
    engines.shutdown();
    result
}

/// The `kibitz-guide` executable: logging to stderr (`KIBITZ_LOG`, default `warn`), the arguments, [`run`].
pub fn main() -> std::process::ExitCode {
    crate::logging::init(crate::protocols::engine::DEFAULT_LOG);
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| matches!(a.as_str(), "-h" | "--help" | "-help")) {
        return crate::protocols::engine::printed(USAGE);
    }
    let options = match parse_args(&args) {
        Ok(o) => o,
        Err(e) => {
            crate::errln!("kibitz-guide: {e}\n{USAGE}");
            return std::process::ExitCode::from(2);
        }
    };
    // Like the stdio executables: an engine that cannot be had exits with 2, before listening.
    let setup = match engine_setup(&options, std::env::var_os(ENGINES_ENV)) {
        Ok(setup) => setup,
        Err(e) => {
            crate::errln!("kibitz-guide: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    match run_with(options, setup) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            crate::errln!("kibitz-guide: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::time::Duration;

    use super::Deadline;

    /// A peer that reads nothing: the replies fill the socket's buffers, and the output gives up with
    /// `TimedOut` once a reply has been on its way longer than the limit, though each write was bounded too.
    #[test]
    fn a_reply_the_peer_does_not_read_gives_up() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let _peer = TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
        let (stream, _) = listener.accept().expect("accept");
        stream.set_write_timeout(Some(Duration::from_millis(100))).expect("timeout");
        let mut out = Deadline { stream: &stream, limit: Duration::from_millis(300), since: None };
        let line = vec![b'x'; 64 * 1024];
        // The socket's own timeout (WouldBlock) may come first, any number of times; then the reply's deadline.
        let timed_out = |e: std::io::Error| (e.kind() == std::io::ErrorKind::TimedOut).then_some(e);
        let error = (0..100_000).find_map(|_| out.write_all(&line).err().and_then(timed_out)).expect("gives up");
        assert!(error.to_string().contains("read no reply"), "{error}");
    }
}
