//! Driving an external engine process over its standard input and output, protocol-free: spawn it, write
//! lines, read lines with a deadline on every wait, and kill it when done.
//!
//! The process's output is untrusted: a reader thread cuts it into lines of at most [`MAX_LINE`] bytes (a
//! longer line is an error, not an allocation), hands them over through a bounded channel, and reports the end
//! of the output. Standard error is read the same way and logged at debug level, so an engine that writes a lot
//! there never blocks on a full pipe. Lines to the engine go through a writer thread, so an engine that stops
//! reading its input blocks that thread, never the caller: its deadlines still pass and kill it.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::thread;
use std::time::{Duration, Instant};

use super::EngineError;

/// The longest line accepted from an engine, in bytes (without its newline).
pub const MAX_LINE: usize = 1 << 20;

/// Lines read ahead of the caller before the reader waits (bounds memory to this many [`MAX_LINE`]s).
const READ_AHEAD: usize = 64;

/// Lines waiting for an engine that does not read them (its pipe full) before writing one more fails.
const WRITE_AHEAD: usize = 64;

/// How often a wait for an engine's output looks whether the process has exited (see [`Process::receive`]).
const EXIT_POLL: Duration = Duration::from_millis(100);

/// How long the output of a process that has exited is still taken: what it wrote before its end may be on
/// its way through the pipe and the reader thread.
const EXIT_GRACE: Duration = Duration::from_millis(200);

/// How to start an engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineCommand {
    /// The executable (a path, or a name looked up in `PATH`).
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The working directory (default: the server's).
    pub dir: Option<PathBuf>,
    /// The engine's configured name, which errors use until it has said its own (default: the program).
    pub name: Option<String>,
}

impl EngineCommand {
    pub fn new(program: impl Into<PathBuf>) -> Self {
        EngineCommand { program: program.into(), args: Vec::new(), dir: None, name: None }
    }

    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// The name errors use until the engine has said its own: its configured name (found by an audit: errors
    /// before the handshake named the program, a `python3` among thirty engines), else the program.
    pub fn label(&self) -> String {
        self.name.clone().unwrap_or_else(|| self.program.display().to_string())
    }
}

/// What the reader thread hands over.
enum Output {
    Line(String),
    TooLong,
    End,
    Failed(std::io::Error),
}

/// What waiting for a line gave.
pub(crate) enum Received {
    Line(String),
    /// The deadline passed first.
    Timeout,
}

/// A running engine process. Killed when dropped.
pub(crate) struct Process {
    child: Child,
    /// To the writer thread, which owns the process's standard input.
    input: SyncSender<Vec<u8>>,
    lines: Receiver<Output>,
    /// The name errors use (the program until the engine says its name).
    pub(crate) label: String,
    /// Set once the process failed or was killed: every later call fails at once.
    dead: bool,
    /// When a wait last looked whether the process has exited, and when one first saw that it had while its
    /// output was still open (see [`Process::receive`]).
    exit_checked: Instant,
    exited_at: Option<Instant>,
}

impl Process {
    pub(crate) fn spawn(command: &EngineCommand) -> Result<Process, EngineError> {
        let label = command.label();
        let mut cmd = Command::new(&command.program);
        cmd.args(&command.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        if let Some(dir) = &command.dir {
            cmd.current_dir(dir);
        }
        // Its own process group, so that killing the engine also kills what it started (a wrapper script's
        // engine, a helper process): see `kill`.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        // A working directory that is not there fails the spawn as the program would: say which it is.
        let label = match &command.dir {
            Some(dir) if !dir.is_dir() => format!("{label} (its working directory {} does not exist)", dir.display()),
            _ => label,
        };
        let mut child = cmd.spawn().map_err(|source| {
            let engine = match &command.name {
                Some(_) => format!("{label} ({})", command.program.display()),
                None => label.clone(),
            };
            EngineError::Spawn { engine, source }
        })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(EngineError::Protocol { engine: label, message: "no pipes to the process".into() });
        };
        let (tx, lines) = sync_channel(READ_AHEAD);
        let reader = thread::Builder::new().name(format!("engine-out {label}")).spawn(move || read_lines(stdout, &tx));
        let (input, pending) = sync_channel(WRITE_AHEAD);
        let writer = reader.and_then(|_| {
            thread::Builder::new().name(format!("engine-in {label}")).spawn(move || write_lines(stdin, pending))
        });
        if let Err(source) = writer {
            let _ = child.kill();
            let _ = child.wait();
            return Err(EngineError::Spawn { engine: label, source });
        }
        if let Some(stderr) = child.stderr.take() {
            let name = label.clone();
            // Logging only: if the thread cannot start, the engine's stderr pipe is closed instead.
            let _ = thread::Builder::new().name(format!("engine-err {label}")).spawn(move || log_stderr(stderr, &name));
        }
        lock_live().push(child.id());
        Ok(Process { child, input, lines, label, dead: false, exit_checked: Instant::now(), exited_at: None })
    }

    /// Write one line (a newline is added), through the writer thread: this never blocks. The engine's answer
    /// is awaited with a deadline as always; a process whose input was closed shows as ended there, or here.
    pub(crate) fn send(&mut self, line: &str) -> Result<(), EngineError> {
        self.check_alive()?;
        tracing::trace!(engine = %self.label, "> {line}");
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        match self.input.try_send(bytes) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => {
                let message = format!("stopped reading its input ({WRITE_AHEAD} lines waiting)");
                Err(self.fail(EngineError::Protocol { engine: self.label.clone(), message }))
            }
            Err(TrySendError::Disconnected(_)) => {
                Err(self.fail(EngineError::Died { engine: self.label.clone(), during: "writing to it" }))
            }
        }
    }

    /// The next line, waiting until `deadline` at most. `during` says what was awaited, for the errors.
    ///
    /// The end of the output tells that the engine died, unless something it started still holds the pipe (a
    /// wrapper's helper): so a long wait also looks every [`EXIT_POLL`] whether the process itself has exited,
    /// and once it has, takes what it wrote for [`EXIT_GRACE`] more and then fails the wait at once, instead of
    /// at the deadline (or never, for an endless search).
    pub(crate) fn receive(&mut self, deadline: Instant, during: &'static str) -> Result<Received, EngineError> {
        self.check_alive()?;
        loop {
            // A deadline already passed is missed even with lines waiting: an engine that floods its output must
            // not keep a wait for one answer alive.
            let now = Instant::now();
            if now >= deadline {
                return Ok(Received::Timeout);
            }
            let until = match self.exited_at {
                Some(at) => (at + EXIT_GRACE).min(deadline),
                None => (self.exit_checked + EXIT_POLL).max(now).min(deadline),
            };
            match self.lines.recv_timeout(until.saturating_duration_since(now)) {
                Err(RecvTimeoutError::Timeout) => {
                    let now = Instant::now();
                    match self.exited_at {
                        Some(at) if now >= at + EXIT_GRACE => {
                            let error = EngineError::Died { engine: self.label.clone(), during };
                            return Err(self.fail(error));
                        }
                        Some(_) => {}
                        None if now >= self.exit_checked + EXIT_POLL => {
                            self.exit_checked = now;
                            if exited(&mut self.child) {
                                self.exited_at = Some(now);
                            }
                        }
                        None => {}
                    }
                    if now >= deadline {
                        return Ok(Received::Timeout);
                    }
                }
                other => return self.received(other, during),
            }
        }
    }

    /// Send `ask`, then read until a line that is `answer` within `within`, dropping every other line (what the
    /// engine still had to say before it read `ask`); no such line in time kills the process and fails, naming
    /// `engine`. UCI's `isready` ... `readyok`, Hub's `ping` ... `pong`.
    pub(crate) fn ask_until(
        &mut self,
        ask: &str,
        answer: &'static str,
        engine: &str,
        within: Duration,
    ) -> Result<(), EngineError> {
        self.send(ask)?;
        let deadline = Instant::now() + within;
        loop {
            match self.receive(deadline, answer)? {
                Received::Line(line) if line.trim() == answer => return Ok(()),
                Received::Line(_) => {}
                Received::Timeout => {
                    let error = EngineError::Timeout { engine: engine.to_string(), during: answer, after: within };
                    return Err(self.fail(error));
                }
            }
        }
    }

    fn received(
        &mut self,
        output: Result<Output, RecvTimeoutError>,
        during: &'static str,
    ) -> Result<Received, EngineError> {
        match output {
            Ok(Output::Line(line)) => {
                tracing::trace!(engine = %self.label, "< {line}");
                Ok(Received::Line(line))
            }
            Err(RecvTimeoutError::Timeout) => Ok(Received::Timeout),
            Ok(Output::TooLong) => {
                Err(self.fail(EngineError::LineTooLong { engine: self.label.clone(), limit: MAX_LINE }))
            }
            Ok(Output::End) | Err(RecvTimeoutError::Disconnected) => {
                Err(self.fail(EngineError::Died { engine: self.label.clone(), during }))
            }
            Ok(Output::Failed(e)) => Err(self.fail(EngineError::Died {
                engine: self.label.clone(),
                during: if e.kind() == std::io::ErrorKind::InvalidData { "reading its output" } else { during },
            })),
        }
    }

    /// Record a failure: the process is killed and `error` is handed back for the caller to return.
    pub(crate) fn fail(&mut self, error: EngineError) -> EngineError {
        tracing::warn!(engine = %self.label, "engine failed: {error}");
        self.kill();
        error
    }

    /// The process failed earlier (and was killed).
    pub(crate) fn is_dead(&self) -> bool {
        self.dead
    }

    fn check_alive(&self) -> Result<(), EngineError> {
        if self.dead { Err(EngineError::Dead { engine: self.label.clone() }) } else { Ok(()) }
    }

    /// Kill the process and its process group now, and reap the process.
    pub(crate) fn kill(&mut self) {
        self.dead = true;
        // Out of the registry before it is reaped: a registered id is always one of ours (see `kill_all`).
        let id = self.child.id();
        lock_live().retain(|&p| p != id);
        kill_group(&self.child);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Ask the process to exit with `line` (e.g. `quit`), give it `patience` to do so, then kill it. Either
    /// way its process group goes too: what it started (a wrapper's helper) does not outlive it.
    pub(crate) fn shut_down(&mut self, line: &str, patience: Duration) {
        if !self.dead && self.send(line).is_ok() {
            let deadline = Instant::now() + patience;
            while Instant::now() < deadline && !exited(&mut self.child) {
                thread::sleep(Duration::from_millis(5));
            }
        }
        // The exited process is not reaped yet, so its group id is still its own to kill.
        self.kill();
    }
}

/// The engine processes running: their ids, which are their process groups' ids. A process leaves the list
/// before it is reaped, so every id in it is still a process of ours and its group id cannot have been reused.
static LIVE: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

fn lock_live() -> std::sync::MutexGuard<'static, Vec<u32>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kill every engine process kibitz started and has not reaped, with what each started (its process group):
/// for a command about to exit on a signal, so that no engine outlives it (an engine runs in a group of its own,
/// which a terminal's Ctrl-C does not reach, and one busy in a search would run on). The owners still reap them.
pub fn kill_all() {
    let live = lock_live();
    for &id in live.iter() {
        #[cfg(unix)]
        if let Some(pid) = i32::try_from(id).ok().and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        #[cfg(not(unix))]
        let _ = id;
    }
}

/// SIGKILL to the group the child leads (it was started with `process_group(0)`, so the group's id is its pid).
/// Called before the child is reaped: until then its pid, and so the group id, cannot be reused.
#[cfg(unix)]
fn kill_group(child: &Child) {
    let pid = i32::try_from(child.id()).ok().and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_: &Child) {}

/// Whether the child has exited, without reaping it (its pid, the group's id, stays ours until then).
#[cfg(unix)]
fn exited(child: &mut Child) -> bool {
    use rustix::process::{WaitId, WaitIdOptions, waitid};
    let Some(pid) = i32::try_from(child.id()).ok().and_then(rustix::process::Pid::from_raw) else { return true };
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    // An error (no such child: already reaped) counts as exited.
    !matches!(waitid(WaitId::Pid(pid), options), Ok(None))
}

#[cfg(not(unix))]
fn exited(child: &mut Child) -> bool {
    !matches!(child.try_wait(), Ok(None))
}

impl Drop for Process {
    fn drop(&mut self) {
        if !self.dead {
            self.kill();
        }
    }
}

/// Write each line handed over to the engine's input, until the owner goes (the channel closes) or a write
/// fails (the process ended or was killed, which closes the pipe: a write blocked on a full pipe fails then).
fn write_lines(mut sink: ChildStdin, pending: Receiver<Vec<u8>>) {
    for bytes in pending {
        if sink.write_all(&bytes).and_then(|()| sink.flush()).is_err() {
            return;
        }
    }
}

/// Cut `source` into lines of at most [`MAX_LINE`] bytes and hand them over until the end, an error or a line
/// that is too long (then stop reading: the owner kills the process).
fn read_lines(source: impl Read, tx: &SyncSender<Output>) {
    let mut reader = BufReader::with_capacity(64 * 1024, source);
    let mut line: Vec<u8> = Vec::new();
    loop {
        let (used, complete) = match reader.fill_buf() {
            Ok([]) => {
                if !line.is_empty() {
                    let _ = tx.send(Output::Line(text_of(&line)));
                }
                let _ = tx.send(Output::End);
                return;
            }
            Ok(buf) => match buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    line.extend_from_slice(&buf[..i]);
                    (i + 1, true)
                }
                None => {
                    line.extend_from_slice(buf);
                    (buf.len(), false)
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Output::Failed(e));
                return;
            }
        };
        reader.consume(used);
        if line.len() > MAX_LINE {
            let _ = tx.send(Output::TooLong);
            return;
        }
        if complete {
            if tx.send(Output::Line(text_of(&line))).is_err() {
                return;
            }
            line.clear();
        }
    }
}

fn text_of(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

/// Log what the engine writes to standard error, a line at a time (long lines shortened, the rest of them
/// dropped), until it closes: the pipe is always drained, so the engine never blocks on it. The first lines of a
/// process are logged at the default level (found by an audit: an engine that died at start with a traceback
/// showed only that it died), the rest only when debugging.
fn log_stderr(mut source: impl Read, label: &str) {
    const SHOWN: usize = 200;
    const LOUD_LINES: usize = 20;
    let mut lines = 0usize;
    let mut log = |line: &[u8]| {
        let text = printable(&text_of(line));
        if lines < LOUD_LINES {
            tracing::info!(engine = %label, "stderr: {text}");
        } else {
            tracing::debug!(engine = %label, "stderr: {text}");
        }
        lines += 1;
    };
    let mut chunk = [0u8; 8192];
    let mut line: Vec<u8> = Vec::with_capacity(SHOWN);
    loop {
        let n = match source.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        for &b in &chunk[..n] {
            if b == b'\n' {
                log(&line);
                line.clear();
            } else if line.len() < SHOWN {
                line.push(b);
            }
        }
    }
    if !line.is_empty() {
        log(&line);
    }
}

/// An engine's text with its control characters (a terminal's escape sequences among them) written as `\u{..}`
/// escapes, for logs and error messages.
pub(crate) fn printable(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { c.escape_unicode().to_string() } else { c.to_string() }).collect()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn an_engine_that_stops_reading_fails_a_send_without_blocking_it() {
        // `sleep` never reads its input: the pipe fills, then the writer's queue, then `send` fails at once.
        let mut process = Process::spawn(&EngineCommand::new("sleep").arg("30")).expect("spawn sleep");
        let line = "x".repeat(4096);
        let mut failed = None;
        for sent in 0..10_000 {
            if let Err(error) = process.send(&line) {
                failed = Some((sent, error));
                break;
            }
        }
        let (sent, error) = failed.expect("a send fails");
        assert!(sent >= WRITE_AHEAD, "only {sent} lines before the failure");
        assert!(error.to_string().contains("stopped reading its input"), "{error}");
        assert!(process.is_dead(), "the process is killed");
    }

    #[test]
    fn a_deadline_already_passed_is_missed_even_with_lines_waiting() {
        let mut process =
            Process::spawn(&EngineCommand::new("sh").arg("-c").arg("echo one; echo two; sleep 30")).expect("spawn sh");
        let line = |r: Received| match r {
            Received::Line(line) => Some(line),
            Received::Timeout => None,
        };
        let soon = Instant::now() + Duration::from_secs(30);
        assert_eq!(process.receive(soon, "test").map(line).ok().flatten().as_deref(), Some("one"));
        // "two" is surely waiting by now; a deadline in the past still gives the timeout.
        thread::sleep(Duration::from_millis(200));
        let past = Instant::now() - Duration::from_millis(1);
        assert!(matches!(process.receive(past, "test"), Ok(Received::Timeout)));
        assert_eq!(process.receive(soon, "test").map(line).ok().flatten().as_deref(), Some("two"));
        process.kill();
    }
}

#[cfg(all(test, unix))]
mod group_tests {
    use super::*;

    #[test]
    fn a_process_that_exits_when_asked_takes_what_it_started_with_it() {
        let dir = std::env::temp_dir().join(format!("kibitz-process-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let pidfile = dir.join("helper.pid");
        // A wrapper that leaves a helper running, then exits as soon as it reads a line.
        let script = format!("sleep 300 & echo $! > '{}'; read line; exit 0", pidfile.display());
        let command = EngineCommand { program: "sh".into(), args: vec!["-c".into(), script], dir: None, name: None };
        let mut process = Process::spawn(&command).expect("spawn");
        let deadline = Instant::now() + Duration::from_secs(20);
        let helper = loop {
            if let Some(pid) = std::fs::read_to_string(&pidfile).ok().and_then(|t| t.trim().parse::<i32>().ok()) {
                break pid;
            }
            assert!(Instant::now() < deadline, "the helper never started");
            thread::sleep(Duration::from_millis(10));
        };
        process.shut_down("quit", Duration::from_secs(5));
        let alive = |pid: i32| {
            rustix::process::Pid::from_raw(pid).is_some_and(|p| rustix::process::test_kill_process(p).is_ok())
        };
        // The helper was killed with the group (it may linger a moment as a zombie of init: give it time).
        let deadline = Instant::now() + Duration::from_secs(20);
        while alive(helper) && Instant::now() < deadline {
            if std::fs::read_to_string(format!("/proc/{helper}/stat")).is_ok_and(|s| s.contains(") Z ")) {
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
        let zombie = std::fs::read_to_string(format!("/proc/{helper}/stat")).is_ok_and(|s| s.contains(") Z "));
        assert!(!alive(helper) || zombie, "the helper {helper} outlived its engine");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[cfg(test)]
mod printable_tests {
    /// Found by an audit: a Hub engine's `error message=` with a terminal escape sequence went into problem
    /// documents and `engines check`'s output as it was.
    #[test]
    fn an_engines_control_characters_are_escaped() {
        assert_eq!(super::printable("bad\u{1b}[31m red\tx"), "bad\\u{1b}[31m red\\u{9}x");
        assert_eq!(super::printable("plain é"), "plain é");
        let command = super::EngineCommand { name: Some("sf".into()), ..super::EngineCommand::new("/usr/games/x") };
        assert_eq!(command.label(), "sf");
        assert_eq!(super::EngineCommand::new("/usr/games/x").label(), "/usr/games/x");
    }
}
