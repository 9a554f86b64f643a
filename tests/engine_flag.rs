//! The stdio front ends playing with an external engine of an engines file (`-engine NAME -engines PATH`),
//! through the real executables: every front end searches with another kibitz executable as its external
//! engine, and answers with its protocol's error when that engine dies in the middle of a search, then goes
//! on serving; `kibitz-uci` plays with Stockfish; a name, a game or an engines file that is wrong stops the
//! executable with exit code 2 before any session.
//!
//! The external engines run inside a small `sh` wrapper that copies their input to a log (so a test can see
//! that the external engine, not kibitz's own, was asked to search) and, for the failing engine, dies when the
//! search command arrives. The Stockfish test is skipped with a message when Stockfish is missing, unless
//! `KIBITZ_ORACLE=1`, when it fails instead.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use kibitz::engines::notation::UciNotation;
use kibitz::game::Game;
use kibitz::games::chess::Chess;

/// The longest any reply may take (searches here are shallow; the machine may be slow and shared).
const REPLY: Duration = Duration::from_secs(90);

/// The wrapper around an external engine: `wrap.sh LOG DIE ENGINE [ARGS...]` runs ENGINE with its input
/// copied to LOG; unless DIE is `-`, it dies (exit 3) at the first input line starting with DIE, before the
/// engine sees it, so the engine's client sees its engine die in the middle of a search.
const WRAPPER: &str = r#"log=$1; die=$2; shift 2
while IFS= read -r line; do
  printf '%s\n' "$line" >> "$log"
  if [ "$die" != "-" ]; then
    case "$line" in "$die"*) exit 3 ;; esac
  fi
  printf '%s\n' "$line"
done | "$@"
"#;

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("kibitz-engine-flag-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        std::fs::write(dir.join("wrap.sh"), WRAPPER).expect("the wrapper");
        TempDir(dir)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A TOML basic string.
fn toml_str(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// One `[[engine]]` entry running `inner` through the wrapper, its input logged to `<name>.log`.
fn wrapped_entry(dir: &TempDir, name: &str, game: &str, protocol: &str, inner: &str, die: &str) -> String {
    let args = [
        dir.file("wrap.sh").display().to_string(),
        dir.file(&format!("{name}.log")).display().to_string(),
        die.to_string(),
        inner.to_string(),
    ];
    let args: Vec<String> = args.iter().map(|a| toml_str(a)).collect();
    format!(
        "[[engine]]\nname = {}\ngame = {}\nprotocol = {}\ncommand = \"sh\"\nargs = [{}]\n\
         timeouts = {{ handshake_s = 90, ready_s = 90, grace_s = 30 }}\n\n",
        toml_str(name),
        toml_str(game),
        toml_str(protocol),
        args.join(", ")
    )
}

/// A running front end.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Session {
    fn spawn(program: &str, args: &[&str]) -> Session {
        let mut child = Command::new(program)
            .args(args)
            .env_remove("KIBITZ_ENGINES")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the front end starts");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Session { child, stdin, lines, seen: Vec::new() }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    /// The lines up to and with the first that starts with `prefix`.
    fn until(&mut self, prefix: &str) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            match self.lines.recv_timeout(REPLY) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    let last = line.starts_with(prefix);
                    out.push(line);
                    if last {
                        return out;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no `{prefix}` within {REPLY:?} (so far: {:?})", self.seen)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the front end closed its output before `{prefix}` (so far: {:?})", self.seen)
                }
            }
        }
    }

    /// Send `quit` (if any), close stdin and wait for the exit.
    fn finish(mut self, quit: Option<&str>) -> ExitStatus {
        if let Some(quit) = quit {
            self.send(quit);
        }
        drop(self.stdin.take());
        let deadline = Instant::now() + REPLY;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "the front end did not exit (so far: {:?})", self.seen);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A front end and one search through it.
struct Front {
    name: &'static str,
    program: &'static str,
    /// Arguments before the engine switches.
    args: &'static [&'static str],
    /// The external engine: its game, protocol and program, and the line that starts its search.
    game: &'static str,
    protocol: &'static str,
    inner: &'static str,
    search_word: &'static str,
    /// Lines to send before the search, each with the prefix of the answer to wait for (`None`: no answer).
    setup: &'static [(&'static str, Option<&'static str>)],
    search: &'static str,
    /// The prefix of the line that answers a search.
    answer: &'static str,
    /// What a failed search answers: the line with the error (a prefix), then any further line (a prefix).
    error: &'static str,
    after_error: Option<&'static str>,
    /// A command and its answer's prefix: the session still serves after a failure.
    next: (&'static str, &'static str),
    quit: &'static str,
}

const FRONTS: &[Front] = &[
    Front {
        name: "uhp",
        program: env!("CARGO_BIN_EXE_kibitz-uhp"),
        args: &[],
        game: "hive",
        protocol: "uhp",
        inner: env!("CARGO_BIN_EXE_kibitz-uhp"),
        search_word: "bestmove",
        setup: &[("", Some("ok")), ("newgame Base+MLP", Some("ok"))],
        search: "bestmove depth 1",
        answer: "w",
        error: "err the engine `crash` failed:",
        after_error: Some("ok"),
        next: ("validmoves", "wS1;"),
        quit: "exit",
    },
    Front {
        name: "checkers",
        program: env!("CARGO_BIN_EXE_kibitz-checkers"),
        args: &[],
        game: "checkers",
        protocol: "checkers",
        inner: env!("CARGO_BIN_EXE_kibitz-checkers"),
        search_word: "GO",
        setup: &[("", Some("READY")), ("INIT", None), ("SETPARAMETER depth 2", None)],
        search: "GO dontplaymove",
        answer: "BESTMOVE ",
        error: "ALERT the engine `crash` failed:",
        after_error: None,
        next: ("GETPARAMETER depth", "PARAMETER depth 2"),
        quit: "QUIT",
    },
    Front {
        name: "hub",
        program: env!("CARGO_BIN_EXE_kibitz-hub"),
        args: &[],
        game: "draughts",
        protocol: "hub",
        inner: env!("CARGO_BIN_EXE_kibitz-hub"),
        search_word: "go",
        setup: &[("hub", Some("wait")), ("init", Some("ready")), ("new-game", None), ("level depth=2", None)],
        search: "go think",
        answer: "done move=",
        error: "error message=\"the engine `crash` failed:",
        after_error: None,
        next: ("ping", "pong"),
        quit: "quit",
    },
    Front {
        name: "uci",
        program: env!("CARGO_BIN_EXE_kibitz-uci"),
        args: &[],
        game: "chess",
        protocol: "uci",
        inner: env!("CARGO_BIN_EXE_kibitz-uci"),
        search_word: "go",
        setup: &[("uci", Some("uciok")), ("isready", Some("readyok")), ("position startpos moves e2e4", None)],
        search: "go depth 2",
        answer: "bestmove ",
        error: "info string error: the engine `crash` failed:",
        after_error: Some("bestmove (none)"),
        next: ("isready", "readyok"),
        quit: "quit",
    },
    Front {
        name: "ucci",
        program: env!("CARGO_BIN_EXE_kibitz-ucci"),
        args: &[],
        game: "xiangqi",
        protocol: "uci",
        inner: env!("CARGO_BIN_EXE_kibitz-uci"),
        search_word: "go",
        setup: &[("ucci", Some("ucciok")), ("isready", Some("readyok")), ("position startpos", None)],
        search: "go depth 2",
        answer: "bestmove ",
        error: "info string error: the engine `crash` failed:",
        after_error: Some("nobestmove"),
        next: ("isready", "readyok"),
        quit: "quit",
    },
    Front {
        name: "qianhong",
        program: env!("CARGO_BIN_EXE_kibitz-qianhong"),
        args: &["-plugin"],
        game: "xiangqi",
        protocol: "uci",
        inner: env!("CARGO_BIN_EXE_kibitz-uci"),
        search_word: "go",
        setup: &[("LEVEL 1", Some("OK"))],
        search: "AI",
        answer: "",
        error: "ERROR the engine `crash` failed:",
        after_error: None,
        next: ("LEVEL", "1"),
        quit: "QUIT",
    },
    Front {
        name: "guide",
        program: env!("CARGO_BIN_EXE_kibitz"),
        args: &["engine", "guide"],
        game: "draughts",
        protocol: "hub",
        inner: env!("CARGO_BIN_EXE_kibitz-hub"),
        search_word: "go",
        setup: &[("", Some("engineok")), ("levelsfixeddepth 2", None)],
        search: "go",
        answer: "move ",
        error: "error the engine failed:",
        after_error: None,
        next: ("ping x", "pong x"),
        quit: "",
    },
];

impl Front {
    /// An engines file with `good` and `crash`, both this front end's external engine, `crash` dying when
    /// asked to search.
    fn engines_file(&self, dir: &TempDir) -> PathBuf {
        let text = wrapped_entry(dir, "good", self.game, self.protocol, self.inner, "-")
            + &wrapped_entry(dir, "crash", self.game, self.protocol, self.inner, self.search_word);
        let path = dir.file("engines.toml");
        std::fs::write(&path, text).expect("the engines file");
        path
    }

    fn start(&self, engine: &str, file: &Path) -> Session {
        let mut args = self.args.to_vec();
        let file = file.to_str().expect("a path");
        args.extend(["-engine", engine, "--engines", file]);
        let mut s = Session::spawn(self.program, &args);
        for (line, answer) in self.setup {
            if !line.is_empty() {
                s.send(line);
            }
            if let Some(prefix) = answer {
                s.until(prefix);
            }
        }
        s
    }

    fn quit(&self, s: Session) {
        let status = s.finish((!self.quit.is_empty()).then_some(self.quit));
        assert!(status.success(), "{}: the session ended with {status}", self.name);
    }
}

fn log_of(dir: &TempDir, name: &str) -> String {
    std::fs::read_to_string(dir.file(&format!("{name}.log"))).unwrap_or_default()
}

#[test]
fn every_front_end_searches_with_its_external_engine() {
    for front in FRONTS {
        let dir = TempDir::new(&format!("good-{}", front.name));
        let file = front.engines_file(&dir);
        let mut s = front.start("good", &file);
        s.send(front.search);
        let out = s.until(front.answer);
        let answer = out.last().expect("an answer");
        assert!(!answer.contains("(none)") && !answer.starts_with("nobestmove"), "{}: {out:?}", front.name);
        // The external engine was asked to search (through the wrapper's log), not kibitz's own.
        let log = log_of(&dir, "good");
        assert!(
            log.lines().any(|l| l.starts_with(front.search_word)),
            "{}: the external engine was never asked to search; its input: {log:?}",
            front.name
        );
        s.send(front.next.0);
        s.until(front.next.1);
        front.quit(s);
    }
}

#[test]
fn every_front_end_answers_a_failed_search_with_its_error_and_goes_on() {
    for front in FRONTS {
        let dir = TempDir::new(&format!("crash-{}", front.name));
        let file = front.engines_file(&dir);
        let mut s = front.start("crash", &file);
        for round in 0..2 {
            // Twice: the dead process is replaced, and the new one fails the same way.
            s.send(front.search);
            let out = s.until(front.error);
            let error = out.last().expect("an error");
            assert!(error.contains("died"), "{} round {round}: {out:?}", front.name);
            if let Some(then) = front.after_error {
                let more = s.until(then);
                assert_eq!(more.len(), 1, "{} round {round}: {more:?}", front.name);
            }
            s.send(front.next.0);
            s.until(front.next.1);
        }
        let log = log_of(&dir, "crash");
        assert!(log.lines().any(|l| l.starts_with(front.search_word)), "{}: {log:?}", front.name);
        front.quit(s);
    }
}

/// Run `program args` with stdin closed and `env` as `KIBITZ_ENGINES`: its exit status, stdout and stderr.
fn run(program: &str, args: &[&str], env: Option<&Path>) -> (ExitStatus, String, String) {
    let mut command = Command::new(program);
    command.args(args).env_remove("KIBITZ_ENGINES");
    if let Some(env) = env {
        command.env("KIBITZ_ENGINES", env);
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the executable starts");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let mut err = String::new();
    let _ = stderr.read_to_string(&mut err);
    let deadline = Instant::now() + REPLY;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{program} {args:?} did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status, out.join().expect("stdout read"), err)
}

/// A front end's own arguments followed by `extra`.
fn own<'a>(front: &Front, extra: &[&'a str]) -> Vec<&'a str> {
    front.args.iter().copied().chain(extra.iter().copied()).collect()
}

#[test]
fn a_wrong_engine_or_file_stops_every_executable_with_exit_code_2() {
    let dir = TempDir::new("wrong");
    let hive = dir.file("hive.toml");
    std::fs::write(&hive, wrapped_entry(&dir, "hivy", "hive", "uhp", env!("CARGO_BIN_EXE_kibitz-uhp"), "-"))
        .expect("a file");
    let bad = dir.file("bad.toml");
    std::fs::write(&bad, "[[engine]]\nname = \"x\"\nprotocol = \"xboard\"\n").expect("a file");
    let missing = dir.file("missing.toml");
    let (hive_s, bad_s, missing_s) = (hive.to_str().unwrap(), bad.to_str().unwrap(), missing.to_str().unwrap());
    let mut cases: Vec<(&str, Vec<&str>, Option<&Path>, String)> = Vec::new();
    for front in FRONTS {
        // Unknown name; a name of another game (hive's engine for every other front end); a bad file; a
        // missing file; a name without a file.
        cases.push((front.program, own(front, &["-engine", "nosuch", "-engines", hive_s]), None, "`nosuch`".into()));
        if front.game != "hive" {
            cases.push((
                front.program,
                own(front, &["-engine", "hivy", "-engines", hive_s]),
                None,
                "plays hive".into(),
            ));
        }
        cases.push((front.program, own(front, &["-engine", "x", "--engines", bad_s]), None, "xboard".into()));
        cases.push((front.program, own(front, &["--engine", "x", "-engines", missing_s]), None, "missing.toml".into()));
        cases.push((front.program, own(front, &["-engine", "x"]), None, "KIBITZ_ENGINES".into()));
        cases.push((front.program, own(front, &["-engine", "nosuch"]), Some(hive.as_path()), "`nosuch`".into()));
    }
    // kibitz-guide (GUIDE over TCP) reads its engine the same way, before it listens.
    let guide = env!("CARGO_BIN_EXE_kibitz-guide");
    let listen = ["-guide", "-bind", "127.0.0.1", "-port", "0", "-wait", "1"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> { listen.iter().chain(extra).copied().collect() };
    cases.push((guide, with(&["-engine", "hivy"]), Some(hive.as_path()), "plays hive, not draughts".into()));
    let mut unknown: Vec<&str> = with(&["-engine", "nosuch", "-engines"]);
    unknown.push(hive_s);
    cases.push((guide, unknown, None, "`nosuch`".into()));
    cases.push((guide, with(&["-engine", "x"]), None, "KIBITZ_ENGINES".into()));
    cases.push((env!("CARGO_BIN_EXE_kibitz-uhp"), vec!["-frobnicate"], None, "unknown argument `-frobnicate`".into()));
    cases.push((env!("CARGO_BIN_EXE_kibitz-uhp"), vec!["-engine"], None, "-engine needs a value".into()));
    cases.push((env!("CARGO_BIN_EXE_kibitz-qianhong"), vec!["-engine", "x"], None, "-info or -plugin".into()));
    for (program, args, env, needle) in cases {
        let (status, out, err) = run(program, &args, env);
        assert_eq!(status.code(), Some(2), "{program} {args:?}: {status} {err}");
        assert!(err.contains(&needle), "{program} {args:?}: {err:?} lacks {needle:?}");
        // No session started: nothing on the protocol's stream.
        assert!(out.is_empty(), "{program} {args:?} wrote {out:?}");
    }
    // The file of the variable is read when no -engines is given; `-engine kibitz` is kibitz's own.
    let (status, out, _) = run(env!("CARGO_BIN_EXE_kibitz-uhp"), &["-engine", "hivy"], Some(&hive));
    assert!(status.success() && out.starts_with("id kibitz"), "{status} {out:?}");
    let (status, out, _) = run(env!("CARGO_BIN_EXE_kibitz-uhp"), &["-engine", "kibitz"], None);
    assert!(status.success() && out.starts_with("id kibitz"), "{status} {out:?}");
}

/// Stockfish, if installed.
fn stockfish() -> Option<PathBuf> {
    let installed = std::iter::once(PathBuf::from("/usr/games/stockfish"))
        .chain(std::env::var_os("PATH").iter().flat_map(std::env::split_paths).map(|d| d.join("stockfish")))
        .find(|p| p.is_file());
    if installed.is_none() {
        assert!(std::env::var("KIBITZ_ORACLE").as_deref() != Ok("1"), "KIBITZ_ORACLE=1 but Stockfish is missing");
        eprintln!("skipped: Stockfish is not installed (apt-get install stockfish)");
    }
    installed
}

#[test]
fn kibitz_uci_plays_with_stockfish() {
    let Some(stockfish) = stockfish() else { return };
    let dir = TempDir::new("stockfish");
    let file = dir.file("engines.toml");
    let entry = wrapped_entry(&dir, "sf", "chess", "uci", stockfish.to_str().expect("a path"), "-")
        + "[engine.options]\nThreads = 1\nHash = 16\n";
    std::fs::write(&file, entry).expect("the engines file");
    let mut s =
        Session::spawn(env!("CARGO_BIN_EXE_kibitz-uci"), &["-engine", "sf", "-engines", file.to_str().unwrap()]);
    s.send("uci");
    s.until("uciok");
    s.send("isready");
    s.until("readyok");
    s.send("position startpos moves e2e4 e7e5 g1f3");
    s.send("go depth 8");
    let out = s.until("bestmove ");
    let mut game = Chess::start();
    for m in ["e2e4", "e7e5", "g1f3"] {
        let m = game.parse_uci_move(m).expect("legal");
        game.make(m);
    }
    let best = out.last().and_then(|l| l.split_whitespace().nth(1)).expect("a move");
    assert!(game.parse_uci_move(best).is_ok(), "Stockfish's move {best} is not legal here: {out:?}");
    assert!(out.iter().any(|l| l.starts_with("info depth 8 ")), "{out:?}");
    let log = log_of(&dir, "sf");
    assert!(log.lines().any(|l| l.starts_with("go ")), "Stockfish was not asked to search: {log:?}");
    let status = s.finish(Some("quit"));
    assert!(status.success(), "{status}");
}

#[test]
fn a_restricted_search_is_refused_rather_than_played_unrestricted() {
    // An external engine is given a position and limits only: `searchmoves` cannot be passed on.
    let front = FRONTS.iter().find(|f| f.name == "uci").expect("the UCI front end");
    let dir = TempDir::new("restricted");
    let file = front.engines_file(&dir);
    let mut s = front.start("good", &file);
    s.send("go depth 1 searchmoves a7a6");
    let out = s.until("info string error:");
    assert!(out.last().is_some_and(|l| l.contains("cannot be told to leave moves out")), "{out:?}");
    s.send("isready");
    // Every `go` is answered: this one with no move.
    assert_eq!(s.until("readyok"), ["bestmove (none)", "readyok"]);
    assert!(!log_of(&dir, "good").lines().any(|l| l.starts_with("go")), "the engine searched");
    front.quit(s);
}
