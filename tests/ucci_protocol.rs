//! The UCCI front end through the real `kibitz-ucci` executable (and `kibitz engine ucci`): transcripts of the
//! handshake, options, positions, banned moves, every kind of search, `probe`, and the bad lines.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use kibitz::game::Game;
use kibitz::games::xiangqi::Xiangqi;

const REPLY: Duration = Duration::from_secs(60);

struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Engine {
    fn spawn(mut command: Command) -> Engine {
        let mut child =
            command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().expect("start");
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
        Engine { child, stdin, lines }
    }

    fn kibitz() -> Engine {
        Engine::spawn(Command::new(env!("CARGO_BIN_EXE_kibitz-ucci")))
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    fn next(&mut self) -> Option<String> {
        match self.lines.recv_timeout(REPLY) {
            Ok(line) => Some(line),
            Err(RecvTimeoutError::Timeout) => panic!("no reply within {REPLY:?}"),
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// The lines up to and with the first that starts with `prefix`.
    fn until(&mut self, prefix: &str) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            match self.next() {
                Some(line) => {
                    let last = line.starts_with(prefix);
                    out.push(line);
                    if last {
                        return out;
                    }
                }
                None => panic!("the engine closed its output before `{prefix}`: {out:?}"),
            }
        }
    }

    /// Send `line`, then `isready`: the lines answered before `readyok`.
    fn ask(&mut self, line: &str) -> Vec<String> {
        self.send(line);
        self.send("isready");
        let mut out = self.until("readyok");
        out.pop();
        out
    }

    /// A line answered with nothing.
    fn quiet(&mut self, line: &str) {
        assert_eq!(self.ask(line), Vec::<String>::new(), "`{line}`");
    }

    /// A line answered with one error line that starts as given.
    fn refused(&mut self, line: &str, start: &str) {
        let out = self.ask(line);
        assert_eq!(out.len(), 1, "`{line}`: {out:?}");
        assert!(out[0].starts_with(&format!("info string error: {start}")), "`{line}`: {out:?}");
    }

    /// `go ...`: the info lines and the bestmove move (`None` for `(none)`) and ponder move.
    fn go(&mut self, line: &str) -> (Vec<String>, Option<String>, Option<String>) {
        self.send(line);
        let mut out = self.until("bestmove");
        let last = out.pop().unwrap_or_default();
        for l in &out {
            assert!(l.starts_with("info "), "`{line}`: {l}");
            assert!(!l.contains("error"), "`{line}`: {l}");
        }
        let words: Vec<&str> = last.split_whitespace().collect();
        let best = match words.get(1) {
            Some(&"(none)") => None,
            Some(m) => Some(m.to_string()),
            None => panic!("`{line}`: {last}"),
        };
        let rest: Vec<&str> =
            words.get(2..).unwrap_or(&[]).iter().copied().filter(|w| !matches!(*w, "draw" | "resign")).collect();
        let ponder = match rest.as_slice() {
            ["ponder", p] => Some(p.to_string()),
            [] => None,
            _ => panic!("`{line}`: {last}"),
        };
        (out, best, ponder)
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

    fn ends(&mut self) {
        assert_eq!(self.next(), None, "more output");
        let status = self.wait_exit(REPLY).expect("the engine exits");
        assert!(status.success(), "{status:?}");
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Play coordinate moves from `start`, each checked legal.
fn replay(start: Xiangqi, moves: &[&str]) -> Xiangqi {
    let mut g = start;
    for m in moves {
        let mv = g.parse_move(m).unwrap_or_else(|e| panic!("{m} after {moves:?}: {e}"));
        g.make(mv);
    }
    g
}

fn handshake(e: &mut Engine) {
    e.send("ucci");
    let out = e.until("ucciok");
    assert_eq!(out[0], format!("id name kibitz {}", env!("CARGO_PKG_VERSION")));
    for option in [
        "option usemillisec type check default false",
        "option hashsize type spin min 1 max 4096 default 64",
        "option threads type spin min 1 max 64 default 1",
        "option newgame type button",
    ] {
        assert!(out.iter().any(|l| l == option), "{option} missing from {out:?}");
    }
}

#[test]
fn transcript_and_bad_lines() {
    let mut e = Engine::kibitz();
    handshake(&mut e);
    e.quiet("setoption hashsize 16");
    e.quiet("setoption newgame");
    e.quiet("position startpos moves h2e2 h9g7");

    e.refused("xyzzy", "unknown command `xyzzy`");
    e.refused("setoption hashsize lots", "option hashsize takes an integer from 1 to 4096");
    e.refused("setoption usemillisec maybe", "option usemillisec takes true or false");
    e.refused("setoption promotion true", "no option named `promotion`");
    e.refused("setoption", "setoption needs an option name");
    e.refused("banmoves h9g7", "banmoves `h9g7`");
    e.send("\u{1}\r");
    e.refused("", "unknown command `?`");

    // A refused position leaves none: `go` says why and answers `nobestmove` rather than play a move of a
    // position the GUI does not have.
    for (line, why) in [
        ("position startpos moves h2e2 h9g7 e2e9", "move 3 `e2e9`"),
        ("position startpos moves h3e3", "move 1 `h3e3`"),
        ("position fen rnbakabnr/9 w", "bad FEN"),
        ("position", "position needs"),
    ] {
        e.refused(line, why);
        e.send("go depth 2");
        let out = e.until("nobestmove");
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out[0].starts_with("info string error: go: no position to search") && out[0].contains(why), "{out:?}");
    }
    e.quiet("position startpos moves h2e2 h9g7");
    let g = replay(Xiangqi::start(), &["h2e2", "h9g7"]);

    // What a `go` does not understand is left out with a warning, and the rest searches.
    for (line, warning) in [
        ("go depth deep nodes 2000", "go: depth needs a number, not `deep`, ignored"),
        ("go nodes 2000 time", "go: time needs a number, ignored"),
        ("go quickly nodes 2000", "go: unknown word `quickly`, ignored"),
    ] {
        e.send(line);
        let out = e.until("bestmove");
        assert!(out.iter().any(|l| l.starts_with(&format!("info string error: {warning}"))), "`{line}`: {out:?}");
        replay(g.clone(), &[out.last().and_then(|l| l.split_whitespace().nth(1)).expect("a move")]);
    }
    // A number past 64 bits is the largest; `movestogo 0` is no count; neither is an error.
    for line in ["go depth 99999999999999999999 nodes 2000", "go nodes 2000 movestogo 0 time 60"] {
        let (_, best, _) = e.go(line);
        replay(g.clone(), &[&best.expect("a move")]);
    }

    // The position after h2e2 h9g7, Red to move.
    let (infos, best, ponder) = e.go("go depth 4");
    let best = best.expect("a move");
    let after = replay(g.clone(), &[&best]);
    if let Some(p) = ponder {
        replay(after, &[&p]);
    }
    let deepest = infos.iter().rfind(|l| l.starts_with("info depth 4 ")).expect("a depth 4 line");
    for word in ["score", "time", "nodes", "nps", "pv"] {
        assert!(deepest.split_whitespace().any(|w| w == word), "{word} missing from {deepest}");
    }
    let pv: Vec<&str> = deepest.split(" pv ").nth(1).unwrap_or("").split_whitespace().collect();
    replay(g.clone(), &pv);

    // Every move but two banned: the answer is one of the two.
    let legal = g.legal_moves();
    let keep: Vec<String> = ["b0c2", "h0g2"].iter().map(|s| s.to_string()).collect();
    let banned: Vec<String> = legal.iter().map(|&m| Xiangqi::move_to_coord(m)).filter(|m| !keep.contains(m)).collect();
    e.quiet(&format!("banmoves {}", banned.join(" ")));
    let (_, best, _) = e.go("go nodes 5000");
    assert!(keep.contains(&best.clone().expect("a move")), "{best:?}");
    // A new position forgets the banned moves.
    e.quiet("position startpos moves h2e2 h9g7");

    // A clock in seconds, then in milliseconds; `probe` reads the table.
    let (_, best, _) = e.go("go time 3 movestogo 30 opptime 3 oppmovestogo 30");
    replay(g.clone(), &[&best.expect("a move")]);
    e.quiet("setoption usemillisec true");
    let (_, best, _) = e.go("go time 2000 increment 100 opptime 2000 oppincrement 100");
    replay(g.clone(), &[best.as_deref().expect("a move")]);
    // A clock that cannot be read is said so, and the search still ends by itself (found by an audit: it was an
    // endless search, and a GUI playing a game waited for ever).
    for go in ["go time nan", "go opptime 5", "go movestogo 5"] {
        e.send(go);
        let out = e.until("bestmove");
        assert!(out.iter().any(|l| l.contains("no clock of the side to move")), "{go}: {out:?}");
        let best = out.last().and_then(|l| l.split_whitespace().nth(1)).expect("a move").to_string();
        replay(g.clone(), &[&best]);
    }
    // The root is not kept in the table; the position after the best move is.
    let out = e.ask(&format!("probe startpos moves h2e2 h9g7 {}", best.expect("a move")));
    assert!(out.len() == 1 && out[0].starts_with("pophash ") && out[0].contains("bound "), "{out:?}");
    let out = e.ask("probe fen 3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1");
    assert_eq!(out, ["pophash"]);

    // Ponder and infinite searches wait for ponderhit or stop; isready answers meanwhile.
    e.send("go ponder time 2000");
    e.send("isready");
    let out = e.until("readyok");
    assert!(out.iter().all(|l| !l.starts_with("bestmove")), "{out:?}");
    let (_, best, _) = e.go("ponderhit");
    replay(g.clone(), &[&best.expect("a move")]);
    e.send("go");
    let (_, best, _) = e.go("stop");
    replay(g, &[&best.expect("a move")]);

    // Red is mated: no move.
    e.quiet("position fen 3k5/9/9/9/9/9/9/9/3r5/3K1r3 w - - 0 1");
    e.send("go depth 3");
    assert_eq!(e.until("nobestmove"), ["nobestmove"]);
    // Every legal move banned: no move either.
    e.quiet("position fen 3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1");
    e.quiet("banmoves e0e1 e0f0");
    e.send("go depth 3");
    assert_eq!(e.until("nobestmove"), ["nobestmove"]);
    // A search without a limit that has ended by itself (two bare generals) holds its answer until the next
    // `position` or `go`, which lets it out and then runs.
    e.quiet("position fen 3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1");
    e.send("go");
    std::thread::sleep(Duration::from_millis(500));
    e.send("position startpos");
    e.send("go depth 1");
    let first = e.until("bestmove");
    let bare = Xiangqi::from_fen("3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1").expect("FEN");
    replay(bare, &[first.last().and_then(|l| l.split_whitespace().nth(1)).expect("a move")]);
    let second = e.until("bestmove");
    replay(Xiangqi::start(), &[second.last().and_then(|l| l.split_whitespace().nth(1)).expect("a move")]);

    e.send("quit");
    assert_eq!(e.until("bye"), ["bye"]);
    e.ends();
}

#[test]
fn end_of_input_answers_the_search_and_exits() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kibitz"));
    command.args(["engine", "ucci"]);
    let mut e = Engine::spawn(command);
    handshake(&mut e);
    e.send("position startpos");
    e.send("go");
    e.stdin = None;
    let out = e.until("bestmove");
    let best = out.last().and_then(|l| l.split_whitespace().nth(1)).expect("a move").to_string();
    replay(Xiangqi::start(), &[&best]);
    e.ends();
}

/// The `bestmove`, `nobestmove` and `readyok` lines, `count` of them.
fn answers(e: &mut Engine, count: usize) -> Vec<String> {
    let mut out = Vec::new();
    while out.len() < count {
        match e.next() {
            Some(line) if line.starts_with("bestmove") || line == "nobestmove" || line == "readyok" => out.push(line),
            Some(line) => assert!(line.starts_with("info "), "{line}"),
            None => panic!("the engine closed its output: {out:?}"),
        }
    }
    out
}

#[test]
fn lines_behind_a_waiting_go_belong_to_it() {
    // As in kibitz-uci (found by an audit): a `stop` behind a waiting `go` is that search's, and `readyok` comes
    // after the `bestmove` of a search told to stop before it.
    let mut e = Engine::kibitz();
    handshake(&mut e);
    e.send("position startpos");
    for line in ["go depth infinite", "stop", "go depth infinite", "stop", "go ponder", "ponderhit", "stop", "isready"]
    {
        e.send(line);
    }
    let out = answers(&mut e, 4);
    assert!(out[..3].iter().all(|l| l.starts_with("bestmove ")), "{out:?}");
    assert_eq!(out[3], "readyok");
    e.send("go depth infinite");
    for line in ["stop", "setoption newgame", "isready"] {
        e.send(line);
    }
    let out = answers(&mut e, 2);
    assert!(out[0].starts_with("bestmove ") && out[1] == "readyok", "{out:?}");
    e.send("quit");
    assert_eq!(e.until("bye"), ["bye"]);
    e.ends();
}

#[test]
fn the_end_of_input_lets_the_waiting_searches_answer() {
    let mut e = Engine::kibitz();
    for line in ["position startpos", "go depth 4", "position startpos moves h2e2", "go depth 4"] {
        e.send(line);
    }
    e.stdin = None;
    let out = answers(&mut e, 2);
    let second = out[1].split_whitespace().nth(1).expect("a move").to_string();
    replay(Xiangqi::start(), &["h2e2", &second]);
    e.ends();
}

#[test]
fn a_held_search_without_a_move_answers_when_told() {
    // Black is mated: `go ponder` and an endless `go` hold their `nobestmove` until `ponderhit` or `stop`.
    let mut e = Engine::kibitz();
    handshake(&mut e);
    e.quiet("position fen 4k4/4R4/4R1N2/9/9/9/9/9/9/3K5 b - - 0 1");
    e.send("go ponder time 5");
    e.send("isready");
    assert_eq!(e.until("readyok"), ["readyok"], "nothing before `ponderhit`");
    e.send("ponderhit");
    assert_eq!(e.until("nobestmove"), ["nobestmove"]);
    e.send("go depth infinite");
    e.send("isready");
    assert_eq!(e.until("readyok"), ["readyok"], "nothing before `stop`");
    e.send("stop");
    assert_eq!(e.until("nobestmove"), ["nobestmove"]);
    e.send("quit");
    assert_eq!(e.until("bye"), ["bye"]);
    e.ends();
}
