//! Transcripts through the real `kibitz-uhp` executable (and `kibitz engine uhp`): commands on its stdin,
//! replies read from its stdout up to `ok`, with a deadline on every read; moves checked against a game
//! tracked here.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use kibitz::games::hive::Hive;

/// The longest any single reply may take (searches here are short; the machine may be slow and shared).
const REPLY: Duration = Duration::from_secs(60);

const NO_GAME: &str = "err No game in progress. Try 'newgame' to start a new game.";
const GAME_OVER: &str = "err The game is over. Try 'newgame' to start a new game.";
const INVALID: &str = "err Invalid command. Try 'help' to see a list of valid commands.";

/// A game Black won by surrounding White's Queen.
const FINISHED: &str = "Base;BlackWins;White[15];wA1;bA1 \\wA1;wA2 wA1-;bA2 \\bA1;wA3 /wA1;bA3 bA1/;wQ wA2/;\
    bQ /bA2;wA3 \\bA2;bA3 wQ/;wS1 /wA1;bB1 \\bA3;wB1 wA1\\;bB1 -bA3;wS1 -bQ;bB1 wQ;wB2 /wS1;bB2 -bA3;wB2 wS1\\;\
    bG1 \\bA3;wG1 /wS1;bG2 bA3\\;wG2 -wS1;bG3 -bG1;wG3 wA2\\;bG3 bB1\\;wG1 /wA3;bB1 /bB2";

/// A Base+MLP middlegame (White to move at turn 9).
const MIDDLEGAME: &str = "Base+MLP;InProgress;White[9];wS1;bP wS1\\;wQ \\wS1;bL bP-;wA1 wS1/;bQ bP\\;wA1 /bQ;\
    bA1 bL/;wA2 wA1\\;bA1 /wA2;wM -wA1;bL wS1/;wM bQ\\;bM -bA1;wB1 wM-;bM \\wQ";

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

    /// `kibitz-uhp`, its greeting (the `info` answer) checked.
    fn start() -> Engine {
        let mut e = Engine::spawn(Command::new(env!("CARGO_BIN_EXE_kibitz-uhp")));
        e.check_info();
        e
    }

    fn check_info(&mut self) {
        let info = self.block();
        assert_eq!(info, [format!("id kibitz {}", env!("CARGO_PKG_VERSION")), "Mosquito;Ladybug;Pillbug".into()]);
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

    /// The lines up to `ok` (without it).
    fn block(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            match self.next() {
                Some(line) if line == "ok" => return out,
                Some(line) => out.push(line),
                None => panic!("the engine closed its output after {out:?}"),
            }
        }
    }

    fn ask(&mut self, line: &str) -> Vec<String> {
        self.send(line);
        self.block()
    }

    /// A command answered with exactly one line.
    fn one(&mut self, line: &str) -> String {
        let out = self.ask(line);
        assert_eq!(out.len(), 1, "`{line}`: {out:?}");
        out.into_iter().next().unwrap_or_default()
    }

    fn says(&mut self, line: &str, expected: &str) {
        assert_eq!(self.one(line), expected, "`{line}`");
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
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

    /// The output ends (nothing more after what was read) and the process exits successfully.
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

fn game(text: &str) -> Hive {
    Hive::from_game_string(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// `best` is legal in `text`; the game after it.
fn after(text: &str, best: &str) -> Hive {
    let mut g = game(text);
    g.play_checked(best).unwrap_or_else(|e| panic!("bestmove `{best}` is not legal in {text}: {e}"));
    g
}

#[test]
fn game_commands_and_their_errors() {
    let mut e = Engine::start();
    e.check_info_again();
    e.says("validmoves", NO_GAME);
    e.says("play wS1", NO_GAME);
    e.says("pass", NO_GAME);
    e.says("bestmove", NO_GAME);
    e.says("undo", NO_GAME);
    e.says("perft 1", NO_GAME);
    e.says("hi", INVALID);
    e.says("play", INVALID);
    e.says("validmoves now", INVALID);
    e.says("bestmove soon", INVALID);
    e.says("undo 1 2", INVALID);

    e.says("newgame", "Base;NotStarted;White[1]");
    e.says("validmoves", "wS1;wB1;wG1;wA1");
    e.says("play wQ", "invalidmove You can't play your Queen Bee on your first turn.");
    e.says("pass", "invalidmove You can't pass when you have valid moves.");
    e.says("play wS1", "Base;InProgress;Black[1];wS1");
    e.says("play bS1 wS1-", "Base;InProgress;White[2];wS1;bS1 wS1-");
    // Any equivalent spelling is read; the GameString writes Mzinga's.
    e.says("play wQ -ws1", "Base;InProgress;Black[2];wS1;bS1 wS1-;wQ -wS1");
    e.says("play bQ wS1", "invalidmove You can't move there because a piece already exists at that position.");
    e.says("play bQ -wQ", "invalidmove You can't move that piece there.");
    e.says(
        "play bA2 bS1-",
        "invalidmove When there are multiple pieces of the same bug type, you must play the pieces in order.",
    );
    assert!(e.one("play bZ1 wS1-").starts_with("err Unable to parse 'bZ1 wS1-'"));
    assert!(e.one("play bA1 wA1-").starts_with("err Unable to parse 'bA1 wA1-'"));
    e.says("play wA1 wS1/", "invalidmove It's not that player's turn.");
    e.says("play bQ bS1-", "Base;InProgress;White[3];wS1;bS1 wS1-;wQ -wS1;bQ bS1-");
    // The spider between the queens holds the hive together.
    e.says("play wS1 wQ\\", "invalidmove You can't move that piece because it will break the hive.");
    e.says("undo", "Base;InProgress;Black[2];wS1;bS1 wS1-;wQ -wS1");
    e.says("undo 2", "Base;InProgress;Black[1];wS1");
    e.says("undo 2", "err Unable to undo 2 moves.");
    e.says("undo 0", "err Unable to undo 0 moves.");
    e.says("undo -1", "err Unable to undo '-1' moves.");
    e.says("undo 1", "Base;NotStarted;White[1]");

    // The fourth turn: the Queen must come now.
    e.says(
        "newgame Base;InProgress;White[4];wS1;bS1 wS1-;wA1 -wS1;bA1 bS1-;wG1 -wA1;bG1 bA1-",
        "Base;InProgress;White[4];wS1;bS1 wS1-;wA1 -wS1;bA1 bS1-;wG1 -wA1;bG1 bA1-",
    );
    e.says("play wA2 -wG1", "invalidmove You must play your Queen Bee on or before your fourth turn.");
    e.says("play wA1 bG1-", "invalidmove You must play your Queen Bee on or before your fourth turn.");
    let g = game("Base;InProgress;White[4];wS1;bS1 wS1-;wA1 -wS1;bA1 bS1-;wG1 -wA1;bG1 bA1-");
    e.says("validmoves", &g.valid_moves_string());
    assert!(g.valid_moves_string().split(';').all(|m| m.starts_with("wQ ")));

    e.says("newgame Base+MLP", "Base+MLP;NotStarted;White[1]");
    e.says("validmoves", "wS1;wB1;wG1;wA1;wM;wL;wP");
    e.says("newgame base+mlp", "Base+MLP;NotStarted;White[1]");
    assert!(e.one("newgame Base+X").starts_with("err Unknown GameTypeString 'Base+X'"));
    // A refused newgame keeps the game.
    e.says("validmoves", "wS1;wB1;wG1;wA1;wM;wL;wP");
    e.says("help me", INVALID);
    e.says("help undo", "undo [MovesToUndo]");
    assert!(e.ask("help").iter().any(|l| l.contains("bestmove")));
    e.send("exit");
    e.ends();
}

impl Engine {
    fn check_info_again(&mut self) {
        self.send("info");
        self.check_info();
    }
}

#[test]
fn gamestrings_are_replayed_with_every_rule() {
    let mut e = Engine::start();
    e.says(&format!("newgame {MIDDLEGAME}"), MIDDLEGAME);
    let g = game(MIDDLEGAME);
    e.says("validmoves", &g.valid_moves_string());
    // Every rule is checked while replaying; the game before stays.
    let bad = [
        "Base;InProgress;Black[1];wQ",
        "Base;InProgress;White[2];wS1;bS1 wS1-;wS1 bS1-",
        "Base;InProgress;White[2];wS1;bS2 wS1-",
        "Base;InProgress;White[2];wS1;bQ wS1-",
        "Base;InProgress;Black[1];wS1;bS1 wS1-",
        "Base;Draw;Black[1];wS1",
        "Base;InProgress;Black[1];wS1 x",
        "Base;Wins;Black[1];wS1",
        "Base;InProgress;Purple[1];wS1",
        "Base;InProgress",
    ];
    for text in bad {
        let out = e.one(&format!("newgame {text}"));
        assert!(out.starts_with("err Unable to load the GameString: "), "{text}: {out}");
    }
    e.says("validmoves", &g.valid_moves_string());
    // Mzinga's example.
    e.says("newgame Base;InProgress;White[2];wS1;bS1 wS1-", "Base;InProgress;White[2];wS1;bS1 wS1-");

    e.says(&format!("newgame {FINISHED}"), FINISHED);
    for command in ["validmoves", "bestmove", "bestmove depth 2", "bestmove time 00:00:01", "pass", "play wQ"] {
        e.says(command, GAME_OVER);
    }
    let out = e.one("undo");
    assert!(out.starts_with("Base;InProgress;Black[14];"), "{out}");
    e.send("exit");
    e.ends();
}

/// A spider whose two walks cross the same cell at different steps (nine moves in; perft from the start
/// cannot see it): 28 legal moves, the spider's two crossing walks among them.
const CROSSING_SPIDER: &str =
    "Base;InProgress;Black[5];wS1;bB1 -wS1;wB1 wS1\\;bS1 /bB1;wS2 /wB1;bG1 -bS1;wQ /wS2;bQ -bB1;wB2 -wQ";

#[test]
fn validmoves_lists_every_spider_walk() {
    let mut e = Engine::start();
    e.says(&format!("newgame {CROSSING_SPIDER}"), CROSSING_SPIDER);
    let out = e.one("validmoves");
    let moves: Vec<&str> = out.split(';').collect();
    assert_eq!(moves.len(), 28, "{out}");
    for m in ["bS1 -bG1", "bS1 /wB2"] {
        assert!(moves.contains(&m), "{m} missing from {out}");
    }
    e.says("play bS1 -bG1", &format!("{};bS1 -bG1", CROSSING_SPIDER.replace("Black[5]", "White[6]")));
    e.send("exit");
    e.ends();
}

#[test]
fn bestmove_by_depth_time_and_level() {
    let mut e = Engine::start();
    e.says("newgame Base+MLP", "Base+MLP;NotStarted;White[1]");
    let best = e.one("bestmove depth 1");
    let g = after("Base+MLP", &best);
    assert!(!best.starts_with("wQ"), "{best}");
    let state = e.one(&format!("play {best}"));
    assert_eq!(state, g.game_string());

    e.says(&format!("newgame {MIDDLEGAME}"), MIDDLEGAME);
    for command in ["bestmove depth 3", "bestmove time 00:00:01", "bestmove time 00:00:00.2", "bestmove depth 0"] {
        let best = e.one(command);
        after(MIDDLEGAME, &best);
    }
    // Without a limit: the Level option's.
    e.says("options set Level 2", "Level;int;2;5;1;8");
    let best = e.one("bestmove");
    after(MIDDLEGAME, &best);
    // bestmove does not play the move.
    e.says("validmoves", &game(MIDDLEGAME).valid_moves_string());
    for bad in ["bestmove depth x", "bestmove depth -1", "bestmove time 5", "bestmove time 00:61:00", "bestmove time"] {
        let out = e.one(bad);
        assert!(out.starts_with("err "), "{bad}: {out}");
    }
    // Commands sent while thinking run after the answer, in order.
    e.send("bestmove depth 2");
    e.send("validmoves");
    e.send("play pass");
    let best = e.block();
    assert_eq!(best.len(), 1, "{best:?}");
    after(MIDDLEGAME, &best[0]);
    assert_eq!(e.block(), [game(MIDDLEGAME).valid_moves_string()]);
    assert_eq!(e.block(), ["invalidmove You can't pass when you have valid moves."]);
    e.send("exit");
    e.ends();
}

#[test]
fn options_get_and_set() {
    let mut e = Engine::start();
    assert_eq!(
        e.ask("options"),
        [
            "Level;int;5;5;1;8",
            "Threads;int;1;1;1;64",
            "TranspositionTableSizeMB;int;64;64;1;4096",
            "MaxNodes;int;0;0;0;1000000000",
            "RepetitionRule;bool;False;False"
        ]
    );
    e.says("options get Level", "Level;int;5;5;1;8");
    e.says("options get repetitionrule", "RepetitionRule;bool;False;False");
    e.says("options set Threads 2", "Threads;int;2;1;1;64");
    e.says("options set TranspositionTableSizeMB 16", "TranspositionTableSizeMB;int;16;64;1;4096");
    e.says("options set RepetitionRule True", "RepetitionRule;bool;True;False");
    e.says("options get Frob", "err The option \"Frob\" is not valid.");
    e.says("options set Frob 1", "err The option \"Frob\" is not valid.");
    e.says(
        "options set Threads 0",
        "err The value \"0\" is not valid for the option \"Threads\": an integer from 1 to 64.",
    );
    e.says("options set Level x", "err The value \"x\" is not valid for the option \"Level\": an integer from 1 to 8.");
    e.says(
        "options set RepetitionRule 2",
        "err The value \"2\" is not valid for the option \"RepetitionRule\": True or False.",
    );
    e.says("options get", INVALID);
    e.says("options set Threads", INVALID);
    e.says("options frob", INVALID);
    assert_eq!(
        e.ask("options"),
        [
            "Level;int;5;5;1;8",
            "Threads;int;2;1;1;64",
            "TranspositionTableSizeMB;int;16;64;1;4096",
            "MaxNodes;int;0;0;0;1000000000",
            "RepetitionRule;bool;True;False"
        ]
    );
    // MaxNodes bounds every bestmove: a 64-ply search of a middlegame answers (it would not end without it).
    e.says("options set MaxNodes 2000", "MaxNodes;int;2000;0;0;1000000000");
    e.says(
        "options set MaxNodes 1000000001",
        "err The value \"1000000001\" is not valid for the option \"MaxNodes\": an integer from 0 to 1000000000.",
    );
    e.one(&format!("newgame {MIDDLEGAME}"));
    let best = e.one("bestmove depth 64");
    after(MIDDLEGAME, &best);
    e.says("options set MaxNodes 0", "MaxNodes;int;0;0;0;1000000000");
    // With the repetition rule on, a position seen a third time ends the game in a draw.
    e.says("newgame Base", "Base;NotStarted;White[1]");
    for m in ["wS1", "bS1 wS1-", "wQ -wS1", "bQ bS1-"] {
        e.ask(&format!("play {m}"));
    }
    let shuffle = ["wQ \\wS1", "bQ bS1/", "wQ -wS1", "bQ bS1-"];
    // With both Queens placed the turn no longer matters: the position after ply 4 is the first of the three
    // (an audit found it counted apart, the draw coming a shuffle late).
    let mut states = Vec::new();
    for _ in 0..2 {
        for m in shuffle {
            states.push(e.one(&format!("play {m}")));
        }
    }
    assert!(states[..7].iter().all(|s| s.starts_with("Base;InProgress;")), "{states:?}");
    let last = states[7].clone();
    assert!(last.starts_with("Base;Draw;White[7];"), "{last}");
    e.says("validmoves", GAME_OVER);
    // The GameString the engine wrote reads back (the audit found it refused), with the option on or off.
    e.says(&format!("newgame {last}"), &last);
    e.says("validmoves", GAME_OVER);
    let in_progress = last.replacen(";Draw;", ";InProgress;", 1);
    e.says(
        &format!("newgame {in_progress}"),
        "err Unable to load the GameString: the moves give GameState Draw (RepetitionRule is on): `InProgress`",
    );
    e.says("options set RepetitionRule False", "RepetitionRule;bool;False;False");
    e.says(&format!("newgame {last}"), &last);
    e.says("validmoves", GAME_OVER);
    e.says(&format!("newgame {in_progress}"), &in_progress);
    let out = e.one("validmoves");
    assert!(out.contains("wQ"), "{out}");
    e.send("exit");
    e.ends();
}

#[test]
fn perft_counts_from_the_current_game() {
    let mut e = Engine::start();
    e.says("newgame Base+MLP", "Base+MLP;NotStarted;White[1]");
    let out = e.ask("perft 3");
    let counts: Vec<&str> = out.iter().filter_map(|l| l.split_whitespace().nth(2)).collect();
    assert_eq!(counts, ["1", "7", "294", "6,678"], "{out:?}");
    assert!(out[0].starts_with("perft(0)"), "{out:?}");
    assert!(e.one("perft 7").starts_with("err Unable to calculate perft(7)"));
    assert!(e.one("perft x").starts_with("err Unable to calculate perft(x)"));
    e.close_stdin();
    e.ends();
}

#[test]
fn end_of_input_while_idle_exits() {
    let mut e = Engine::start();
    e.says("newgame", "Base;NotStarted;White[1]");
    e.close_stdin();
    e.ends();
    // Nothing at all on stdin.
    let mut e = Engine::start();
    e.close_stdin();
    e.ends();
}

#[test]
fn end_of_input_right_after_bestmove_still_answers() {
    // What bots do: one process per move.
    let mut e = Engine::start();
    e.send(&format!("newgame {MIDDLEGAME}"));
    e.send("bestmove depth 3");
    e.close_stdin();
    assert_eq!(e.block(), [MIDDLEGAME]);
    let best = e.block();
    assert_eq!(best.len(), 1, "{best:?}");
    after(MIDDLEGAME, &best[0]);
    e.ends();

    let mut e = Engine::start();
    e.send(&format!("newgame {MIDDLEGAME}"));
    e.send("bestmove time 00:00:01");
    e.send("validmoves");
    e.close_stdin();
    assert_eq!(e.block(), [MIDDLEGAME]);
    after(MIDDLEGAME, &e.block()[0]);
    assert_eq!(e.block(), [game(MIDDLEGAME).valid_moves_string()]);
    e.ends();
}

#[test]
fn exit_and_long_lines() {
    let mut e = Engine::start();
    let long = "x".repeat((1 << 20) + 10);
    let out = e.one(&long);
    assert!(out.starts_with("err The line of 1048586 bytes"), "{out}");
    e.send("EXIT");
    e.ends();
}

#[test]
fn kibitz_engine_uhp_is_the_same_engine() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kibitz"));
    command.args(["engine", "uhp"]).env("KIBITZ_LOG", "warn");
    let mut e = Engine::spawn(command);
    e.check_info();
    e.says("newgame Base+M", "Base+M;NotStarted;White[1]");
    e.says("play wQ", "invalidmove You can't play your Queen Bee on your first turn.");
    e.says("play wM", "Base+M;InProgress;Black[1];wM");
    e.send("exit");
    e.ends();
}

#[test]
fn a_depth_beyond_the_maximum_is_refused_and_the_end_of_input_stops_a_search() {
    let mut e = Engine::start();
    e.says(&format!("newgame {MIDDLEGAME}"), MIDDLEGAME);
    e.says("bestmove depth 999999", "err Unable to search to depth 999999: the deepest is 64.");
    e.says("bestmove depth 65", "err Unable to search to depth 65: the deepest is 64.");
    // A search that would run for hours: the end of input makes it answer with what it has, and the engine
    // exits (REPLY only guards against a hang).
    e.send("bestmove depth 60");
    e.close_stdin();
    let out = e.block();
    assert_eq!(out.len(), 1, "{out:?}");
    after(MIDDLEGAME, &out[0]);
    e.ends();
}
