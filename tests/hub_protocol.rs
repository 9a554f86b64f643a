//! The Hub front end through the real `kibitz-hub` executable (and `kibitz engine hub`): transcripts of the
//! handshake, parameters, positions, levels, every search mode and the bad lines; and pydraughts's Hub client
//! (`draughts.engine.HubEngine`) playing a whole game on a clock against it and reading its analysis.
//!
//! The pydraughts test is skipped with a message when pydraughts is missing, unless `KIBITZ_ORACLE=1`, when
//! it fails instead.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use kibitz::game::Game;
use kibitz::games::draughts::Draughts;

const REPLY: Duration = Duration::from_secs(60);
const START: &str = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww";

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

    /// Send `line`, then `ping`: the lines answered before `pong`.
    fn ask(&mut self, line: &str) -> Vec<String> {
        self.send(line);
        self.send("ping");
        let mut out = self.until("pong");
        out.pop();
        out
    }

    fn quiet(&mut self, line: &str) {
        assert_eq!(self.ask(line), Vec::<String>::new(), "`{line}`");
    }

    fn refused(&mut self, line: &str, start: &str) {
        let out = self.ask(line);
        assert_eq!(out.len(), 1, "`{line}`: {out:?}");
        assert!(out[0].starts_with(&format!("error message=\"{start}")), "`{line}`: {out:?}");
    }

    /// Lines up to `done`: the info lines, the move and the ponder move.
    fn done(&mut self) -> (Vec<String>, String, Option<String>) {
        let mut out = self.until("done");
        let last = out.pop().unwrap_or_default();
        for l in &out {
            assert!(l.starts_with("info "), "{l}");
        }
        let mut best = None;
        let mut ponder = None;
        for word in last.split_whitespace().skip(1) {
            match word.split_once('=') {
                Some(("move", m)) => best = Some(m.to_string()),
                Some(("ponder", m)) => ponder = Some(m.to_string()),
                _ => panic!("{last}"),
            }
        }
        (out, best.expect("done move="), ponder)
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

/// Play Hub moves from `start`, each checked legal.
fn replay(start: Draughts, moves: &[&str]) -> Draughts {
    let mut g = start;
    for m in moves {
        let mv = g.parse_hub_move(m).unwrap_or_else(|e| panic!("{m} after {moves:?}: {e}"));
        g.make(mv);
    }
    g
}

fn pv_of(line: &str) -> Vec<String> {
    let Some((_, rest)) = line.split_once(" pv=\"") else { return Vec::new() };
    rest.trim_end_matches('"').split_whitespace().map(str::to_string).collect()
}

fn start_hub(mut e: Engine) -> Engine {
    e.send("hub");
    let out = e.until("wait");
    assert_eq!(out[0], format!("id name=kibitz version={} author=\"the kibitz authors\"", env!("CARGO_PKG_VERSION")));
    for param in [
        "param name=threads value=1 type=int min=1 max=64",
        "param name=hash value=64 type=int min=1 max=4096",
        "param name=variant value=normal type=enum values=normal",
    ] {
        assert!(out.iter().any(|l| l == param), "{param} missing from {out:?}");
    }
    e.send("set-param name=hash value=16");
    e.send("set-param name=book value=false");
    e.send("init");
    assert_eq!(e.until("ready"), ["ready"]);
    e
}

#[test]
fn transcript_and_bad_lines() {
    // Started as Scan is (`scan hub`): an audit found the word refused, though GUIs set up for Scan pass it.
    let mut e = start_hub(Engine::spawn({
        let mut command = Command::new(env!("CARGO_BIN_EXE_kibitz-hub"));
        command.arg("hub");
        command
    }));
    e.quiet("new-game");
    e.quiet(&format!("pos pos={START} moves=\"32-28 19-23 28x19x23\""));

    // Unknown commands and arguments are ignored; known ones with bad values are errors that change nothing.
    e.quiet("frobnicate hard=yes");
    e.quiet("level depth=2 colour=green");
    e.refused("set-param name=threads value=many", "parameter threads takes an integer from 1 to 64");
    e.refused("set-param name=variant value=frisian", "variant `frisian` is not played here");
    e.refused("pos pos=Wbbb", "bad position: a Hub position has 50 squares");
    e.refused("pos pos=Xbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww", "bad position: side to move");
    e.refused(&format!("pos pos={START} moves=\"32-28 28-23\""), "move 2 `28-23`");
    e.refused(&format!("pos pos={START} moves=\"32x28\""), "move 1 `32x28`");
    e.refused("pos", "pos needs pos=");
    e.refused("level move-time=fast", "level move-time= needs a number of seconds");
    e.refused("level moves=-1 time=5", "level moves= needs a whole number");
    e.refused("go think now=\"1", "unclosed quote");
    e.send("ping\r\u{1}");
    assert_eq!(e.until("pong"), ["pong"]);

    // After a refused `pos` there is no position (found by an audit: `go` played a move of the one before it,
    // which pydraughts could not read): `go` says why and searches nothing, until a `pos` is read.
    e.quiet("level depth=4");
    e.refused("go think", "go: no position to search, the last `pos` was refused (pos needs pos=)");
    e.quiet(&format!("pos pos={START} moves=\"32-28 19-23 28x19x23\""));
    e.send("go think");
    let (infos, best, ponder) = e.done();
    let g = replay(Draughts::start(), &["32-28", "19-23", "28x19x23"]);
    let after = replay(g.clone(), &[&best]);
    assert!(best == "14x23x19" || best == "13x24x19", "{best}");
    if let Some(p) = ponder {
        replay(after, &[&p]);
    }
    let deepest = infos.last().expect("info lines");
    assert!(deepest.starts_with("info depth=4 "), "{infos:?}");
    for field in ["seldepth=", "score=", "nodes=", "time=", "nps=", "pv=\""] {
        assert!(deepest.contains(field), "{field} missing from {deepest}");
    }
    let pv = pv_of(deepest);
    replay(g.clone(), &pv.iter().map(String::as_str).collect::<Vec<_>>());

    // A clock; ping answered during a search; ponder, ponder-hit; analyze, stop.
    e.quiet("level moves=30 time=4 inc=0.1");
    e.send("go think");
    let (_, best, _) = e.done();
    replay(g.clone(), &[&best]);
    // Pondering goes on until ponder-hit, so `ping` is answered during the search.
    e.quiet("level move-time=0.3");
    e.send("go ponder");
    e.send("ping");
    let mut out = e.until("pong");
    out.pop();
    assert!(out.iter().all(|l| l.starts_with("info ")), "{out:?}");
    e.send("ponder-hit");
    let (_, best, _) = e.done();
    replay(g.clone(), &[&best]);
    e.quiet("level infinite");
    e.send("go analyze");
    e.send("stop");
    let (_, best, _) = e.done();
    replay(g.clone(), &[&best]);
    // A new position during an infinite search stops it; the new position holds.
    e.send("go analyze");
    e.send(&format!("pos pos={START}"));
    let (_, best, _) = e.done();
    replay(g, &[&best]);
    e.quiet("level depth=1");
    e.send("go think");
    let (_, best, _) = e.done();
    replay(Draughts::start(), &[&best]);

    // A won race: White's king takes everything in one capture.
    e.quiet(&format!("pos pos={}", Draughts::from_fen("W:WK46:B41,32,23").expect("FEN").to_hub()));
    e.quiet("level depth=3");
    e.send("go think");
    let (infos, best, _) = e.done();
    // The king lands anywhere behind the last piece: 19, 14, 10 or 5.
    assert!(best.starts_with("46x") && best.ends_with("x23x32x41"), "{best}");
    assert!(infos.last().is_some_and(|l| l.contains("score=99.")), "{infos:?}");
    // No move at all: an error, no search.
    e.quiet(&format!("pos pos=W{}b{}", "e".repeat(24), "e".repeat(25)));
    e.refused("go think", "the game is over");

    e.send("quit");
    e.ends();
}

#[test]
fn end_of_input_answers_the_search_and_exits() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kibitz"));
    command.args(["engine", "hub"]);
    let mut e = start_hub(Engine::spawn(command));
    e.send("level infinite");
    e.send("go analyze");
    e.stdin = None;
    let (_, best, _) = e.done();
    replay(Draughts::start(), &[&best]);
    e.ends();
}

#[test]
fn the_end_of_input_lets_the_waiting_lines_run() {
    // Found by an audit: the end of input dropped a `go` (and a `ping`) waiting behind the running search.
    let mut e = start_hub(Engine::spawn(Command::new(env!("CARGO_BIN_EXE_kibitz-hub"))));
    for line in ["pos pos=".to_string() + START, "level depth=2".into(), "go think".into()] {
        e.send(&line);
    }
    e.send(&format!("pos pos={START} moves=\"32-28\""));
    e.send("go think");
    e.send("ping");
    e.stdin = None;
    // `ping` is answered at once while the second search runs (as ever), or after it.
    let mut out = Vec::new();
    while let Some(line) = e.next() {
        if !line.starts_with("info ") {
            out.push(line);
        }
    }
    let done: Vec<&str> = out.iter().filter_map(|l| l.strip_prefix("done move=")).collect();
    assert_eq!((done.len(), out.iter().filter(|l| *l == "pong").count()), (2, 1), "{out:?}");
    let first = done[0].split_whitespace().next().expect("a move");
    let second = done[1].split_whitespace().next().expect("a move");
    replay(Draughts::start(), &[first]);
    replay(Draughts::start(), &["32-28", second]);
    e.ends();
}

#[test]
fn a_line_too_long_to_read_leaves_no_position() {
    let mut e = start_hub(Engine::spawn(Command::new(env!("CARGO_BIN_EXE_kibitz-hub"))));
    e.quiet(&format!("pos pos={START}"));
    let long = format!("pos pos={START} moves=\"{}\"", "32-28 ".repeat(200_000));
    let out = e.ask(&long);
    assert!(out.len() == 1 && out[0].contains("longer than the limit"), "{out:?}");
    e.refused("go think", "go: no position to search, the last `pos` was refused (a line of");
    e.send("quit");
    e.ends();
}

/// pydraughts's Hub client: a whole game on a clock (kibitz against itself; one side by time and
/// increment, the other by move time), every move checked legal by pydraughts, then an analysis read.
const PYDRAUGHTS: &str = r#"
import sys, time
import draughts
from draughts.engine import HubEngine, Limit

engine = HubEngine([sys.argv[1]])
assert engine.id.get("name") == "kibitz", engine.id
assert "threads" in engine.options and "hash" in engine.options, engine.options
engine.configure({"hash": 16})
engine.init()

board = draughts.Board(variant="standard")
clock = [8.0, 8.0]
while not board.is_over() and len(board.move_stack) < 160:
    side = 0 if board.turn == draughts.WHITE else 1
    limit = Limit(time=clock[side], inc=0.05) if side == 0 else Limit(movetime=0.05)
    started = time.monotonic()
    result = engine.play(board, limit, ponder=False)
    used = time.monotonic() - started
    # No timing assertion: on a loaded machine the clock is kept above zero for the rest of the game.
    clock[side] = max(clock[side] - used, 0.3) + 0.05
    legal = [m.board_move for m in board.legal_moves()]
    assert result.move.board_move in legal, (board.fen, result.move.hub_move)
    board.push(result.move)

print("game", len(board.move_stack), board.winner(), board.fen)
board = draughts.Board(variant="standard")
board.push(draughts.Move(board, hub_move="32-28"))
engine.go(board._game.initial_hub_fen, moves="32-28", depth=5)
info = engine.info
assert info["depth"] >= 5, info
assert "cp" in info["score"] or "win" in info["score"], info
pv = info["pv"].strip('"').split()
line = board.copy()
for m in pv:
    move = draughts.Move(line, hub_move=m)
    assert move.board_move in [l.board_move for l in line.legal_moves()], (pv, m)
    line.push(move)
engine.quit()
engine.kill_process()
print("ok")
"#;

#[test]
fn pydraughts_plays_a_game_on_a_clock() {
    let have = Command::new("python3").args(["-c", "import draughts.engine"]).status().is_ok_and(|s| s.success());
    if !have {
        assert!(
            std::env::var("KIBITZ_ORACLE").as_deref() != Ok("1"),
            "KIBITZ_ORACLE=1 but pydraughts is not installed (pip install pydraughts)"
        );
        eprintln!("skipped: pydraughts is not installed (set KIBITZ_ORACLE=1 to make this a failure)");
        return;
    }
    let out = Command::new("python3")
        .args(["-c", PYDRAUGHTS, env!("CARGO_BIN_EXE_kibitz-hub")])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "pydraughts failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    eprintln!("{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("game ")), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("ok"));
}
