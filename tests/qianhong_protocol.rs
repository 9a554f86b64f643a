//! Transcripts through the real `kibitz-qianhong` executable: commands on its stdin, replies read from its
//! stdout with a deadline on every read, moves checked against a position tracked here.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use kibitz::game::Game;
use kibitz::games::xiangqi::Xiangqi;

/// The longest any single reply may take (searches here are short or cut short; the machine may be slow).
const REPLY: Duration = Duration::from_secs(20);

fn exe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kibitz-qianhong"))
}

struct Plugin {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Plugin {
    fn start() -> Plugin {
        let mut child = exe()
            .arg("-plugin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start kibitz-qianhong");
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
        Plugin { child, stdin, lines }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    fn try_next(&mut self, timeout: Duration) -> Option<String> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Some(line),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("the plugin closed its output"),
        }
    }

    fn next(&mut self) -> String {
        self.try_next(REPLY).unwrap_or_else(|| panic!("no reply within {REPLY:?}"))
    }

    /// Send a command and read its one-line reply.
    fn ask(&mut self, line: &str) -> String {
        self.send(line);
        self.next()
    }

    fn ok(&mut self, line: &str) {
        assert_eq!(self.ask(line), "OK", "`{line}`");
    }

    fn error(&mut self, line: &str, needle: &str) {
        let reply = self.ask(line);
        assert!(reply.starts_with("ERROR ") && reply.contains(needle), "`{line}`: `{reply}` lacks `{needle}`");
    }

    /// Nothing more was written: the next reply is the one to `LEVEL` (which is `level`).
    fn nothing_pending(&mut self, level: &str) {
        assert_eq!(self.ask("LEVEL"), level);
    }

    /// Read HINTS lines up to ENDHINTS: the moves.
    fn hints(&mut self) -> Vec<String> {
        let mut moves = Vec::new();
        loop {
            let line = self.next();
            if line == "ENDHINTS" {
                return moves;
            }
            moves.push(line.split_whitespace().next().expect("a move").to_string());
        }
    }

    fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Plugin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn play(g: &mut Xiangqi, text: &str) {
    let m = g.parse_move_text(text).unwrap_or_else(|e| panic!("`{text}` is not legal: {e:?}"));
    g.make(m);
}

#[test]
fn info_prints_the_block_and_exits() {
    let out = exe().arg("-info").output().expect("run -info");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[..3], ["QHPLUGIN V1.3", "kibitz", "LEVELS 8"]);
    for (i, line) in lines[3..11].iter().enumerate() {
        assert!(line.starts_with(&format!("{} ", i + 1)), "{line}");
    }
    assert_eq!(lines[11..16], ["UNDO 1", "HINTS 1", "RULES 1", "BGTHINK 0", "TIMEOUT 1"]);
    assert_eq!(lines.last(), Some(&"ENDINFO"));
    assert!(text.ends_with("ENDINFO\n"));
    let bad = exe().arg("-bogus").output().expect("run");
    assert!(!bad.status.success() && bad.stdout.is_empty());
    // `kibitz engine qianhong` takes the same switches (found by an audit: `unknown argument`); no colour codes
    // in a log that is not a terminal.
    let kibitz = || Command::new(env!("CARGO_BIN_EXE_kibitz"));
    let same = kibitz().args(["engine", "qianhong", "-info"]).output().expect("run engine -info");
    assert!(same.status.success());
    assert_eq!(String::from_utf8(same.stdout).expect("utf-8"), text);
    let mut plugin = kibitz()
        .args(["engine", "qianhong", "-PLUGIN"])
        .env("KIBITZ_LOG", "debug")
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run engine -plugin");
    plugin.stdin.take().expect("stdin").write_all(b"LEVEL\nQUIT\n").expect("write");
    let out = plugin.wait_with_output().expect("the plugin ends");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "5\nBYE\n");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!log.is_empty() && !log.contains('\u{1b}'), "{log}");
}

#[test]
fn a_session_through_every_command() {
    let mut p = Plugin::start();
    let mut g = Xiangqi::start();
    assert_eq!(p.ask("LEVEL 2"), "OK - Set AI level to 2");
    assert_eq!(p.ask("level"), "2");
    p.ok("BGTHINK OFF");
    p.error("BGTHINK ON", "not supported");
    p.send("TIMEOUT");
    p.send("ABORT");
    p.nothing_pending("2");

    // The spec's sample game.
    p.ok("PLAY H2-E2");
    play(&mut g, "H2-E2");
    let reply = p.ask("AI");
    play(&mut g, &reply);
    // A move of Red's known legal on the tracked board, sent as coordinates, then taken back.
    let m = Xiangqi::move_to_coord(g.legal_moves()[0]);
    p.ok(&format!("play {m}"));
    play(&mut g, &m);
    p.ok("UNDO");
    g.unmake();

    // LOAD: all lines first, then OK; a bad one changes nothing.
    let before = g.to_fen();
    let first = Xiangqi::move_to_iccs(g.legal_moves()[1]);
    p.send("LOAD 2");
    p.send(&first);
    p.send("Z0-Z9");
    let reply = p.next();
    assert!(reply.starts_with("ERROR LOAD move 2 `Z0-Z9`"), "{reply}");
    p.send("LOAD 1");
    p.send(&first);
    assert_eq!(p.next(), "OK");
    play(&mut g, &first);
    assert_ne!(g.to_fen(), before);
    // A line of a list too long to read refuses the list with one answer, once all its lines have come: the
    // lines after it are still the list's, not commands.
    let level = p.ask("LEVEL");
    p.send("LOAD 3");
    p.send(&"x".repeat(2 << 20));
    p.send("H2-E2");
    p.send("H9-G7");
    let reply = p.next();
    assert!(reply.starts_with("ERROR LOAD: a move line of 2097152 bytes is too long"), "{reply}");
    p.nothing_pending(&level);

    // HINTS with BAN: the banned moves are absent.
    let legal: Vec<String> = g.legal_moves().into_iter().map(Xiangqi::move_to_iccs).collect();
    p.send("BAN 2");
    p.send(&legal[0]);
    p.send(&legal[1].to_ascii_lowercase());
    assert_eq!(p.next(), "OK");
    p.send("HINTS");
    let hints = p.hints();
    assert!(!hints.is_empty());
    for h in &hints {
        assert!(legal.contains(h), "{h} is not legal");
        assert!(h != &legal[0] && h != &legal[1], "banned {h} hinted");
    }

    // FEN then AI: a legal move of that position, played on the internal board.
    let fen = "rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR b - - 0 1";
    p.ok(&format!("FEN {fen}"));
    let mut g = Xiangqi::from_fen(fen).expect("fen");
    let reply = p.ask("AI");
    play(&mut g, &reply);
    p.ok("UNDO");
    g.unmake();
    p.error("UNDO", "no move");

    // Bad input: ERROR, and nothing changed (the next AI still answers for Black from the FEN).
    p.error("FROB", "unknown command `FROB`");
    p.error("FEN rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHX b", "`");
    p.error("PLAY H2-E2", "`H2-E2`");
    p.error("LEVEL 9", "`9`");
    p.error("LEVEL 0", "`0`");
    p.send("BAN 1");
    p.send("A0-A1");
    let reply = p.next();
    assert!(reply.starts_with("ERROR BAN move 1 `A0-A1`"), "{reply}");
    p.nothing_pending("2");
    let reply = p.ask("AI");
    play(&mut g, &reply);

    assert_eq!(p.ask("QUIT"), "BYE");
    let status = p.wait_exit(REPLY).expect("exits after BYE");
    assert!(status.success());
}

#[test]
fn abort_and_timeout_during_a_long_search() {
    let mut p = Plugin::start();
    assert_eq!(p.ask("LEVEL 8"), "OK - Set AI level to 8");
    p.send("AI");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(p.ask("ABORT"), "ABORTED");
    // Nothing moved: Red is still to move from the start.
    p.send("HINTS");
    std::thread::sleep(Duration::from_millis(100));
    p.send("TIMEOUT");
    let hints = p.hints();
    assert!(!hints.is_empty());
    for h in &hints {
        assert!(Xiangqi::start().parse_move_text(h).is_ok(), "{h}");
    }
    p.send("AI");
    std::thread::sleep(Duration::from_millis(100));
    p.send("TIMEOUT");
    let reply = p.next();
    let mut g = Xiangqi::start();
    play(&mut g, &reply);
    // A command while thinking aborts the search first.
    p.send("AI");
    assert_eq!(p.ask("LEVEL"), "ABORTED");
    assert_eq!(p.next(), "8");
    // The board has the one move: UNDO works once.
    p.ok("UNDO");
    p.error("UNDO", "no move");
    // A quick run of searches: each interrupts the one before (ABORTED), none finds the plugin's pool full.
    for _ in 0..6 {
        p.send("AI");
    }
    p.send("ABORT");
    for _ in 0..6 {
        assert_eq!(p.next(), "ABORTED");
    }
    assert_eq!(p.ask("LEVEL 1"), "OK - Set AI level to 1");
    p.send("AI");
    let reply = p.next();
    play(&mut Xiangqi::start(), &reply);
    p.send("TIMEOUT");
    p.nothing_pending("1");
    // End of input exits.
    p.stdin = None;
    let status = p.wait_exit(REPLY).expect("exits at end of input");
    assert!(status.success());
}

#[test]
fn a_load_cut_short_by_end_of_input_exits_without_reply() {
    let mut p = Plugin::start();
    p.send("LOAD 3");
    p.send("H2-E2");
    p.stdin = None;
    let status = p.wait_exit(REPLY).expect("exits at end of input");
    assert!(status.success());
    assert!(p.lines.recv_timeout(Duration::from_secs(2)).is_err(), "no reply");
}
