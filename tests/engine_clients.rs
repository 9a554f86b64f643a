//! The UHP, Checkers Protocol and Hub clients: against kibitz's own `kibitz-uhp` and `kibitz-checkers` run as
//! external processes, against small scripted engines in Python that behave or misbehave (each skipped with a
//! message when python3 is missing), and through the engine pools (`Engines::new` + `search_now`), including a
//! process that dies mid-search and is replaced.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kibitz::engines::{
    CheckersEngine, EngineCommand, EngineError, EngineSpec, Engines, ExternalSearch, HubEngine, Protocol, Timeouts,
    UhpEngine,
};
use kibitz::game::Game;
use kibitz::games::GameKind;
use kibitz::games::checkers::Checkers;
use kibitz::games::draughts::Draughts;
use kibitz::games::hive::Hive;
use kibitz::search::{Done, Event, Info, Limits, Score};

fn find_program(name: &str) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

fn is_legal<G: Game>(position: &G, m: G::Move) -> bool {
    let mut legal = Vec::new();
    position.generate_moves(&mut legal);
    legal.contains(&m)
}

/// Every move of `line` is legal where it is played.
fn assert_line_legal<G: Game>(root: &G, line: &[G::Move]) {
    let mut g = root.clone();
    for &m in line {
        assert!(is_legal(&g, m), "{line:?} from {}", root.format_position(None).unwrap_or_default());
        g.make(m);
    }
}

fn after<G: Game>(root: &G, moves: &[G::Move]) -> G {
    let mut g = root.clone();
    for &m in moves {
        g.make(m);
    }
    g
}

/// A centi-unit score stays below the mate band (kibitz's convention: mates are `Score::Mate`).
fn assert_convention(score: Score) {
    if let Score::Cp(cp) = score {
        assert!(cp.abs() < 9000, "{score:?}");
    }
}

fn timeouts() -> Timeouts {
    Timeouts {
        handshake: Duration::from_secs(20),
        ready: Duration::from_secs(20),
        grace: Duration::from_secs(5),
        search: Duration::from_secs(120),
    }
}

/// Short deadlines for the misbehaving fakes.
fn short() -> Timeouts {
    Timeouts {
        handshake: Duration::from_secs(10),
        ready: Duration::from_secs(10),
        grace: Duration::from_millis(500),
        search: Duration::from_millis(500),
    }
}

/// A search's answer and its progress reports (exactly one `Done` event, equal to the answer).
type Searched<M> = (Result<Done<M>, EngineError>, Vec<Info<M>>);

fn collect<M: Clone + PartialEq + std::fmt::Debug>(
    run: impl FnOnce(&AtomicBool, &mut dyn FnMut(Event<M>)) -> Result<Done<M>, EngineError>,
) -> Searched<M> {
    let stop = AtomicBool::new(false);
    let mut infos = Vec::new();
    let mut dones = Vec::new();
    let result = run(&stop, &mut |e| match e {
        Event::Info(i) => infos.push(i),
        Event::Done(d) => dones.push(d),
    });
    match &result {
        Ok(done) => assert_eq!(dones, vec![done.clone()]),
        Err(_) => assert!(dones.is_empty()),
    }
    (result, infos)
}

// ---- fake engines ----

/// Fake engines in Python, one per protocol, misbehaving as their second argument says: `die` exits when asked
/// to search, `dieonce` does so only the first time (a marker file in its directory remembers), `silent` never
/// answers, `illegal` answers an illegal move, `long` writes more than a megabyte without a newline,
/// `slowrestart` dies as `dieonce` and then, started again, writes `pid-PID` and waits 1.5 s before its
/// greeting; the UHP
/// fake's `strict` refuses a `bestmove time` with a fraction of a second (as nokamute does), and writes every
/// `bestmove` it is asked to the file `asked`.
const FAKE: &str = r#"
import os, sys, time
protocol, mode = sys.argv[1], sys.argv[2]
def say(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
def misbehave():
    if mode == "die":
        sys.exit(0)
    if mode in ("dieonce", "slowrestart") and not os.path.exists("died"):
        open("died", "w").close()
        sys.exit(0)
    if mode == "long":
        sys.stdout.write("x" * (1100 * 1024))
        sys.stdout.flush()
        time.sleep(30)
        sys.exit(0)
    if mode == "silent":
        return True
    return False

if mode == "slowrestart" and os.path.exists("died"):
    open("pid-%d" % os.getpid(), "w").close()
    time.sleep(1.5)

if protocol == "uhp":
    greeting = ["id Fake UHP " + mode, "Mosquito;Ladybug;Pillbug", "ok"]
    for line in greeting:
        say(line)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "info":
            for l in greeting:
                say(l)
        elif cmd == "options":
            say("Speed;int;1;1;1;9")
            say("ok")
        elif cmd.startswith("options set "):
            words = cmd.split()
            say("Speed;int;" + words[3] + ";1;1;9" if words[2] == "Speed" else "err Unknown option.")
            say("ok")
        elif cmd.startswith("newgame"):
            say("err The fake refuses every game." if mode == "refuse" else cmd[8:] or "Base;NotStarted;White[1]")
            say("ok")
        elif cmd.startswith("bestmove"):
            if misbehave():
                continue
            if mode == "strict":
                open("asked", "a").write(cmd + "\n")
                if "." in cmd:
                    say("err UnrecognizedCommand(\"" + cmd[9:] + "\")")
                    say("ok")
                    continue
            say("wQ" if mode == "illegal" else "wS1")
            say("ok")
        elif cmd == "exit":
            break
elif protocol == "checkers":
    say("READY")
    for line in sys.stdin:
        words = line.split()
        cmd = words[0] if words else ""
        if cmd == "GETPARAMETERS":
            say("PARAMETERS depth int")
        elif cmd == "GETPARAMETER":
            say("PARAMETER " + words[1] + " 0")
        elif cmd == "GO":
            say("INFO nodes 10 eval 25 time 3 depth 1 pv 9-13")
            if misbehave():
                continue
            say("BESTMOVE 9x18" if mode == "illegal" else "BESTMOVE 9x13")
        elif cmd == "QUIT":
            break
elif protocol == "hub":
    for line in sys.stdin:
        words = line.split()
        cmd = words[0] if words else ""
        if cmd == "hub":
            say("id name=Fake version=" + mode + " author=\"Nobody at all\"")
            say("param name=threads value=1 type=int min=1 max=8")
            say("param name=variant value=normal type=enum values=\"normal killer bt\"")
            say("wait")
        elif cmd == "init":
            say("ready")
        elif cmd == "pos":
            start = "W" + "b" * 20 + "e" * 10 + "w" * 20
            if line.strip() == "pos pos=" + start:
                answer = "done move=32-28 ponder=19-23"
                info = "info depth=3 score=0.12 nodes=1500 time=0.5 nps=0.003 pv=\"32-28 19-23 28x19x23\""
            elif line.strip() == "pos pos=" + start + " moves=\"32-28 19-23\"":
                answer = "done move=28x19x23"
                info = "info depth=2 score=-1.25 nodes=20 time=0.01 pv=\"28x19x23 14x23x19\""
            else:
                answer = "error message=\"unexpected position\""
                info = ""
        elif cmd == "go":
            if info:
                say(info)
            if misbehave():
                continue
            if mode == "wait" and words[1:] == ["analyze"]:
                continue
            say("done move=32-23" if mode == "illegal" else answer)
            if mode == "dup":
                say(answer)
        elif cmd == "ping":
            say("pong")
        elif cmd == "stop":
            if mode == "wait":
                say(answer)
        elif cmd == "quit":
            break
"#;

struct Fake {
    dir: PathBuf,
}

impl Fake {
    fn new(name: &str) -> Option<Fake> {
        if find_program("python3").is_none() {
            eprintln!("skipped: python3 is not installed");
            return None;
        }
        let dir = std::env::temp_dir().join(format!("kibitz-fake-clients-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        std::fs::write(dir.join("fake.py"), FAKE).expect("the script");
        Some(Fake { dir })
    }

    fn command(&self, protocol: &str, mode: &str) -> EngineCommand {
        EngineCommand::new("python3").arg("fake.py").arg(protocol).arg(mode).dir(&self.dir)
    }

    fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.path());
    }
}

// ---- UHP ----

fn kibitz_uhp() -> UhpEngine {
    UhpEngine::start(&EngineCommand::new(env!("CARGO_BIN_EXE_kibitz-uhp")), timeouts()).expect("kibitz-uhp starts")
}

#[test]
fn uhp_client_gets_legal_moves_from_kibitz_uhp() {
    let mut engine = kibitz_uhp();
    assert!(engine.name().starts_with("kibitz"), "{}", engine.name());
    for capability in ["Mosquito", "Ladybug", "Pillbug"] {
        assert!(engine.capabilities().iter().any(|c| c == capability), "{:?}", engine.capabilities());
    }
    assert!(engine.options().iter().any(|o| o.name == "Threads"), "{:?}", engine.options());
    engine.set_option("threads", "1").expect("a listed option");
    assert!(matches!(engine.set_option("Level", "99"), Err(EngineError::BadOptionValue { .. })));
    assert!(matches!(engine.set_option("Nonsense", "1"), Err(EngineError::UnknownOption { .. })));
    assert!(!engine.is_dead());

    // The start, a game reached by moves (sent whole as a GameString), and a root that has its own history.
    let start = Hive::start();
    let played =
        kibitz::game::play_moves(&mut start.clone(), &["wS1", "bS1 wS1-", "wQ -wS1", "bQ bS1-"]).expect("legal moves");
    let middle = after(&start, &played);
    let cases: [(&Hive, &[_]); 3] = [(&start, &[]), (&start, &played), (&middle, &played[..0])];
    for (root, moves) in cases {
        let position = after(root, moves);
        let (result, infos) = collect(|stop, sink| engine.search(root, moves, &Limits::depth(2), 1, stop, sink));
        let done = result.expect("an answer");
        assert!(is_legal(&position, done.best.expect("a move")), "{}", position.game_string());
        assert_eq!(done.depth, 2, "the depth asked for");
        assert!(done.lines.is_empty(), "UHP gives no scored line");
        assert!(infos.is_empty(), "UHP reports no progress");
        assert_eq!(done.game_end, None);
    }
    // A time limit.
    let (result, _) =
        collect(|stop, sink| engine.search(&middle, &[], &Limits::movetime(Duration::from_millis(300)), 1, stop, sink));
    assert!(is_legal(&middle, result.expect("an answer").best.expect("a move")));
    // A node limit goes through the MaxNodes option kibitz-uhp lists: `bestmove depth 64` would not end
    // within the search timeout without it. A search without a node limit sets the option back to 0.
    let max_nodes = |engine: &UhpEngine| {
        engine.options().iter().find(|o| o.name == "MaxNodes").map(|o| o.value.clone()).expect("MaxNodes is listed")
    };
    assert_eq!(max_nodes(&engine), "0");
    let (result, _) = collect(|stop, sink| engine.search(&middle, &[], &Limits::nodes(3000), 1, stop, sink));
    let done = result.expect("an answer");
    assert!(is_legal(&middle, done.best.expect("a move")));
    assert_eq!((done.depth, max_nodes(&engine)), (64, "3000".to_string()));
    let (result, _) = collect(|stop, sink| engine.search(&middle, &[], &Limits::depth(1), 1, stop, sink));
    assert!(is_legal(&middle, result.expect("an answer").best.expect("a move")));
    assert_eq!(max_nodes(&engine), "0");
    // Several lines are not for UHP; the engine stays usable.
    let multi = engine.search(&start, &[], &Limits::depth(1), 2, &AtomicBool::new(false), &mut |_| {});
    assert!(matches!(multi, Err(EngineError::Unsupported { .. })), "{multi:?}");
    assert!(!engine.is_dead());
    engine.quit();
}

fn uhp_fake(fake: &Fake, mode: &str) -> (UhpEngine, Result<Done<<Hive as Game>::Move>, EngineError>) {
    let mut engine = UhpEngine::start(&fake.command("uhp", mode), short()).expect("the handshake works");
    assert_eq!(engine.name(), format!("Fake UHP {mode}"));
    let result = engine.search(&Hive::start(), &[], &Limits::depth(3), 1, &AtomicBool::new(false), &mut |_| {});
    (engine, result)
}

#[test]
fn uhp_engine_failures_are_named_errors_and_kill_the_process() {
    let Some(fake) = Fake::new("uhp") else { return };
    let (engine, result) = uhp_fake(&fake, "die");
    assert!(matches!(&result, Err(EngineError::Died { engine, .. }) if engine == "Fake UHP die"), "{result:?}");
    assert!(engine.is_dead());
    let (engine, result) = uhp_fake(&fake, "silent");
    assert!(matches!(&result, Err(EngineError::Timeout { during: "bestmove", .. })), "{result:?}");
    assert!(engine.is_dead());
    let (engine, result) = uhp_fake(&fake, "illegal");
    assert!(matches!(&result, Err(EngineError::IllegalMove { token, .. }) if token == "wQ"), "{result:?}");
    assert!(result.unwrap_err().to_string().contains("Fake UHP illegal"));
    assert!(engine.is_dead());
    let (engine, result) = uhp_fake(&fake, "long");
    assert!(matches!(&result, Err(EngineError::LineTooLong { .. })), "{result:?}");
    assert!(engine.is_dead());
    // A refused game names the engine's words before the game, whose end is kept.
    let (engine, result) = uhp_fake(&fake, "refuse");
    let message = result.expect_err("a refusal").to_string();
    assert!(
        message.contains("refused `newgame Base+MLP;NotStarted;White[1]`: err The fake refuses every game."),
        "{message}"
    );
    assert!(message.contains("(the game: `Base+MLP;NotStarted;White[1]`)"), "{message}");
    assert!(engine.is_dead());
    // A well-behaved answer, and options checked against the engine's list.
    let (mut engine, result) = uhp_fake(&fake, "good");
    assert_eq!(result.expect("an answer").best.map(|m| Hive::start().move_string(m)), Some("wS1".to_string()));
    engine.set_option("speed", "3").expect("a listed option");
    assert!(matches!(engine.set_option("Depth", "3"), Err(EngineError::UnknownOption { .. })));
    assert!(matches!(engine.set_option("Speed", "3 4"), Err(EngineError::BadOptionValue { .. })));
    assert!(!engine.is_dead());
}

#[test]
fn a_uhp_engine_that_refuses_fractions_of_a_second_gets_whole_seconds() {
    let Some(fake) = Fake::new("uhp-strict") else { return };
    let mut engine = UhpEngine::start(&fake.command("uhp", "strict"), short()).expect("the handshake works");
    let stop = AtomicBool::new(false);
    let limits = Limits::movetime(Duration::from_millis(300));
    for _ in 0..2 {
        let done = engine.search(&Hive::start(), &[], &limits, 1, &stop, &mut |_| {}).expect("an answer");
        assert_eq!(done.best.map(|m| Hive::start().move_string(m)), Some("wS1".to_string()));
        assert!(!engine.is_dead());
    }
    // Asked once with the fraction; after its refusal, in whole seconds rounded up, and so from then on.
    let asked = std::fs::read_to_string(fake.dir.join("asked")).expect("the fake's record");
    assert_eq!(asked, "bestmove time 00:00:00.300\nbestmove time 00:00:01\nbestmove time 00:00:01\n");
    engine.quit();
}

#[test]
fn a_stopped_uhp_search_waits_the_grace_period_then_kills() {
    let Some(fake) = Fake::new("uhp-stop") else { return };
    let mut engine = UhpEngine::start(&fake.command("uhp", "silent"), short()).expect("the handshake works");
    let stop = AtomicBool::new(true);
    let result = engine.search(&Hive::start(), &[], &Limits::infinite(), 1, &stop, &mut |_| {});
    assert!(matches!(&result, Err(EngineError::Timeout { during: "bestmove", .. })), "{result:?}");
    assert!(engine.is_dead());
}

// ---- Checkers Protocol ----

fn kibitz_checkers() -> CheckersEngine {
    let command = EngineCommand::new(env!("CARGO_BIN_EXE_kibitz-checkers"));
    CheckersEngine::start(&command, timeouts()).expect("kibitz-checkers starts")
}

#[test]
fn checkers_client_gets_legal_lines_from_kibitz_checkers() {
    let mut engine = kibitz_checkers();
    assert_eq!(engine.name(), "kibitz-checkers");
    let names: Vec<&str> = engine.parameters().iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["depth", "time", "hash", "threads", "nodes"]);
    engine.set_parameter("hash", "2").expect("a declared parameter");
    assert!(matches!(engine.set_parameter("nonsense", "1"), Err(EngineError::UnknownOption { .. })));
    assert!(matches!(engine.set_parameter("depth", "five"), Err(EngineError::BadOptionValue { .. })));
    // The engine's own refusal (ALERT) is a bad value too, and the engine stays usable.
    let refused = engine.set_parameter("depth", "999");
    assert!(
        matches!(&refused, Err(EngineError::BadOptionValue { reason, .. }) if reason.contains("ALERT")),
        "{refused:?}"
    );
    assert!(!engine.is_dead());

    let start = Checkers::start();
    let played = kibitz::game::play_moves(&mut start.clone(), &["11-15", "23-19", "8-11", "22-17"]).expect("legal");
    let middle = after(&start, &played);
    let cases: [(&Checkers, &[_]); 3] = [(&start, &[]), (&start, &played), (&middle, &played[..0])];
    for (root, moves) in cases {
        let position = after(root, moves);
        let (result, infos) = collect(|stop, sink| engine.search(root, moves, &Limits::depth(5), 1, stop, sink));
        let done = result.expect("an answer");
        let best = done.best.expect("a move");
        assert!(is_legal(&position, best));
        assert_eq!(done.depth, 5);
        assert_eq!(done.lines.len(), 1);
        assert_eq!(done.lines[0].pv.first(), Some(&best));
        assert_line_legal(&position, &done.lines[0].pv);
        assert_convention(done.lines[0].score);
        assert!(!infos.is_empty());
        for info in &infos {
            assert_line_legal(&position, &info.pv);
            assert_convention(info.score);
            assert_eq!(info.multipv, 1);
        }
    }
    // A forced win is a mate distance in plies, positive for the side to move.
    let won = Checkers::from_fen("B:WK29:BK19,K20").expect("a position");
    let (result, _) = collect(|stop, sink| engine.search(&won, &[], &Limits::depth(12), 1, stop, sink));
    let done = result.expect("an answer");
    assert!(matches!(done.lines[0].score, Score::Mate(n) if n > 0), "{:?}", done.lines);
    // A move time: the client sends STOP when it is up.
    let (result, _) =
        collect(|stop, sink| engine.search(&middle, &[], &Limits::movetime(Duration::from_millis(200)), 1, stop, sink));
    assert!(is_legal(&middle, result.expect("an answer").best.expect("a move")));
    // A node limit is the engine's `nodes` parameter: the search ends by itself (depth and time are 0), having
    // searched about that many nodes (each INFO line's count, up to the search's polling interval).
    let (result, infos) = collect(|stop, sink| engine.search(&middle, &[], &Limits::nodes(4000), 1, stop, sink));
    let done = result.expect("an answer");
    assert!(is_legal(&middle, done.best.expect("a move")));
    assert!(!infos.is_empty() && infos.iter().all(|i| i.nodes <= 4000 + 256), "{:?}", done);
    // An infinite search stopped by the caller (the node limit is 0 again).
    let stop = AtomicBool::new(false);
    let done = engine
        .search(&start, &[], &Limits::infinite(), 1, &stop, &mut |e| {
            if let Event::Info(i) = e
                && i.depth >= 3
            {
                stop.store(true, Ordering::Relaxed);
            }
        })
        .expect("answers the stop");
    assert!(is_legal(&start, done.best.expect("a move")));
    let multi = engine.search(&start, &[], &Limits::depth(1), 2, &AtomicBool::new(false), &mut |_| {});
    assert!(matches!(multi, Err(EngineError::Unsupported { .. })), "{multi:?}");
    assert!(!engine.is_dead());
    engine.quit();
}

fn checkers_fake(fake: &Fake, mode: &str) -> (CheckersEngine, Result<Done<<Checkers as Game>::Move>, EngineError>) {
    let mut engine = CheckersEngine::start(&fake.command("checkers", mode), short()).expect("the handshake works");
    assert_eq!(engine.name(), "python3");
    let result = engine.search(&Checkers::start(), &[], &Limits::depth(3), 1, &AtomicBool::new(false), &mut |_| {});
    (engine, result)
}

#[test]
fn checkers_engine_failures_are_named_errors_and_kill_the_process() {
    let Some(fake) = Fake::new("checkers") else { return };
    let (engine, result) = checkers_fake(&fake, "die");
    assert!(matches!(&result, Err(EngineError::Died { engine, .. }) if engine == "python3"), "{result:?}");
    assert!(engine.is_dead());
    let (engine, result) = checkers_fake(&fake, "silent");
    assert!(matches!(&result, Err(EngineError::Timeout { during: "BESTMOVE", .. })), "{result:?}");
    assert!(engine.is_dead());
    let (engine, result) = checkers_fake(&fake, "illegal");
    assert!(matches!(&result, Err(EngineError::IllegalMove { token, .. }) if token == "9x18"), "{result:?}");
    assert!(engine.is_dead());
    let (engine, result) = checkers_fake(&fake, "long");
    assert!(matches!(&result, Err(EngineError::LineTooLong { .. })), "{result:?}");
    assert!(engine.is_dead());
    let (_engine, result) = checkers_fake(&fake, "good");
    let done = result.expect("an answer");
    let nine_thirteen = Checkers::start().parse_move_text("9-13").expect("legal");
    assert_eq!(done.best, Some(nine_thirteen));
    assert_eq!(done.lines[0].score, Score::Cp(25));
}

// ---- Hub ----

fn hub_fake(fake: &Fake, mode: &str) -> HubEngine {
    HubEngine::start(&fake.command("hub", mode), short(), &[]).expect("the handshake works")
}

#[test]
fn hub_client_reads_lines_in_kibitz_convention() {
    let Some(fake) = Fake::new("hub") else { return };
    let mut engine = HubEngine::start(&fake.command("hub", "good"), short(), &[("threads".into(), "2".into())])
        .expect("the handshake works");
    assert_eq!(engine.name(), "Fake good");
    assert_eq!(engine.params().len(), 2);
    let start = Draughts::start();
    let (result, infos) = collect(|stop, sink| engine.search(&start, &[], &Limits::depth(3), 1, stop, sink));
    let done = result.expect("an answer");
    assert_eq!(done.best.map(|m| start.format_move(m)), Some("32-28".to_string()));
    let reply = after(&start, &[done.best.expect("a move")]).parse_move("19-23").expect("legal");
    assert_eq!(done.ponder, Some(reply));
    assert_eq!(done.depth, 3);
    assert_eq!(done.lines[0].score, Score::Cp(12), "score in men, read as centi-men");
    assert_eq!(done.lines[0].pv.len(), 3, "the capture 28x19x23 is read with its captured square");
    assert_line_legal(&start, &done.lines[0].pv);
    assert_eq!((done.nodes, done.time_ms, done.nps), (1500, 500, 3000));
    assert_eq!(infos.len(), 1);

    // The history is sent as moves from the root; the answer is a capture written with its captured square.
    let played = kibitz::game::play_moves(&mut start.clone(), &["32-28", "19-23"]).expect("legal");
    let position = after(&start, &played);
    let (result, _) = collect(|stop, sink| engine.search(&start, &played, &Limits::depth(2), 1, stop, sink));
    let done = result.expect("an answer");
    let best = done.best.expect("a move");
    assert!(is_legal(&position, best));
    assert_eq!(position.format_move(best), "28x19");
    assert_eq!(done.lines[0].score, Score::Cp(-125));
    assert_line_legal(&position, &done.lines[0].pv);
    assert_eq!(done.lines[0].pv.len(), 2);

    let multi = engine.search(&start, &[], &Limits::depth(1), 2, &AtomicBool::new(false), &mut |_| {});
    assert!(matches!(multi, Err(EngineError::Unsupported { .. })), "{multi:?}");
    // A position the fake does not expect: it answers `error`, which fails the search and the process.
    let (result, _) = collect(|stop, sink| engine.search(&position, &[], &Limits::depth(1), 1, stop, sink));
    assert!(
        matches!(&result, Err(EngineError::Protocol { message, .. }) if message.contains("unexpected")),
        "{result:?}"
    );
    assert!(engine.is_dead());
}

#[test]
fn hub_answers_said_twice_never_count_as_the_next_searchs() {
    // The `dup` fake says each `done` twice (as an engine does when a `stop` crosses its answer); the second
    // used to be read as the next position's answer: 32-28, the start's move, for the position after 32-28 19-23.
    let Some(fake) = Fake::new("hub-dup") else { return };
    let mut engine = hub_fake(&fake, "dup");
    let start = Draughts::start();
    let (result, _) = collect(|stop, sink| engine.search(&start, &[], &Limits::depth(3), 1, stop, sink));
    assert_eq!(result.expect("an answer").best.map(|m| start.format_move(m)), Some("32-28".to_string()));
    let played = kibitz::game::play_moves(&mut start.clone(), &["32-28", "19-23"]).expect("legal");
    let position = after(&start, &played);
    let (result, _) = collect(|stop, sink| engine.search(&start, &played, &Limits::depth(2), 1, stop, sink));
    let done = result.expect("an answer");
    assert_eq!(done.best.map(|m| position.format_move(m)), Some("28x19".to_string()));
    assert_eq!(done.lines[0].score, Score::Cp(-125));
}

#[test]
fn hub_infinite_search_stops_when_asked() {
    let Some(fake) = Fake::new("hub-stop") else { return };
    let mut engine = hub_fake(&fake, "wait");
    let stop = AtomicBool::new(false);
    let start = Draughts::start();
    let done = engine
        .search(&start, &[], &Limits::infinite(), 1, &stop, &mut |e| {
            if let Event::Info(_) = e {
                stop.store(true, Ordering::Relaxed);
            }
        })
        .expect("answers the stop");
    assert!(is_legal(&start, done.best.expect("a move")));
    assert!(!engine.is_dead());
}

#[test]
fn hub_engine_failures_are_named_errors_and_kill_the_process() {
    let Some(fake) = Fake::new("hub-fail") else { return };
    let search = |engine: &mut HubEngine| {
        engine.search(&Draughts::start(), &[], &Limits::depth(3), 1, &AtomicBool::new(false), &mut |_| {})
    };
    let mut engine = hub_fake(&fake, "die");
    let result = search(&mut engine);
    assert!(matches!(&result, Err(EngineError::Died { engine, .. }) if engine == "Fake die"), "{result:?}");
    assert!(engine.is_dead());
    let mut engine = hub_fake(&fake, "silent");
    let result = search(&mut engine);
    assert!(matches!(&result, Err(EngineError::Timeout { during: "done", .. })), "{result:?}");
    assert!(engine.is_dead());
    let mut engine = hub_fake(&fake, "illegal");
    let result = search(&mut engine);
    assert!(matches!(&result, Err(EngineError::IllegalMove { token, .. }) if token == "32-23"), "{result:?}");
    assert!(engine.is_dead());
    let mut engine = hub_fake(&fake, "long");
    let result = search(&mut engine);
    assert!(matches!(&result, Err(EngineError::LineTooLong { .. })), "{result:?}");
    assert!(engine.is_dead());
    // Options are checked against the declarations before `init`.
    let unknown = HubEngine::start(&fake.command("hub", "good"), short(), &[("hash".into(), "1".into())]);
    assert!(matches!(unknown, Err(EngineError::UnknownOption { .. })));
    let bad = HubEngine::start(&fake.command("hub", "good"), short(), &[("variant".into(), "frisian".into())]);
    assert!(matches!(bad, Err(EngineError::BadOptionValue { .. })));
}

// ---- through the pools ----

fn spec(name: &str, game: GameKind, protocol: Protocol, command: EngineCommand, timeouts: Timeouts) -> EngineSpec {
    EngineSpec {
        name: name.into(),
        games: vec![game],
        protocol,
        program: command.program,
        args: command.args,
        dir: command.dir,
        options: Vec::new(),
        processes: 1,
        default_for: vec![game],
        timeouts,
    }
}

fn pool_search<G: Game>(engines: &Engines, name: &str, game: GameKind, root: G, limits: Limits) -> Done<G::Move> {
    let engine = engines.get(name, game).expect("configured");
    let pool = engine.pool::<G>().expect("the game's pool");
    let search = ExternalSearch { root: root.clone(), moves: Vec::new(), limits, multipv: 1 };
    let done = pool.search_now(&search, &AtomicBool::new(false), &mut |_| {}).expect("an answer");
    assert!(is_legal(&root, done.best.expect("a move")));
    done
}

#[test]
fn every_protocol_searches_through_its_pool() {
    let mut specs = vec![
        spec("uhp", GameKind::Hive, Protocol::Uhp, EngineCommand::new(env!("CARGO_BIN_EXE_kibitz-uhp")), timeouts()),
        spec(
            "checkers",
            GameKind::Checkers,
            Protocol::Checkers,
            EngineCommand::new(env!("CARGO_BIN_EXE_kibitz-checkers")),
            timeouts(),
        ),
    ];
    specs[1].options = vec![("hash".into(), "2".into())];
    let fake = Fake::new("pools");
    if let Some(fake) = &fake {
        specs.push(spec("hub", GameKind::Draughts, Protocol::Hub, fake.command("hub", "good"), short()));
    }
    let engines = Engines::new(specs).expect("every protocol has a client");
    pool_search(&engines, "uhp", GameKind::Hive, Hive::start(), Limits::depth(2));
    let done = pool_search(&engines, "checkers", GameKind::Checkers, Checkers::start(), Limits::depth(4));
    assert_eq!(done.depth, 4);
    if fake.is_some() {
        let done = pool_search(&engines, "hub", GameKind::Draughts, Draughts::start(), Limits::depth(3));
        assert_eq!(done.lines[0].score, Score::Cp(12));
    }
    for engine in engines.list() {
        assert_eq!(engine.stats.searches.load(Ordering::Relaxed), 1, "{}", engine.name);
        assert_eq!(engine.stats.failures.load(Ordering::Relaxed), 0, "{}", engine.name);
        assert!(engine.id().is_some());
    }
    assert_eq!(engines.get("checkers", GameKind::Checkers).and_then(|e| e.id()), Some("kibitz-checkers".into()));
    engines.shutdown();
}

#[test]
fn an_answer_claims_no_more_depth_than_was_asked() {
    // The fake answers the start at depth 3 whatever it is asked: asked for 2, the answer says 2 (a deeper
    // claim would be cached as answering deeper requests).
    let Some(fake) = Fake::new("hub-deep") else { return };
    let engines =
        Engines::new(vec![spec("deep", GameKind::Draughts, Protocol::Hub, fake.command("hub", "good"), short())])
            .expect("a client");
    let done = pool_search(&engines, "deep", GameKind::Draughts, Draughts::start(), Limits::depth(2));
    assert_eq!((done.depth, done.lines[0].depth), (2, 2));
    let done = pool_search(&engines, "deep", GameKind::Draughts, Draughts::start(), Limits::depth(5));
    assert_eq!((done.depth, done.lines[0].depth), (3, 3));
    engines.shutdown();
}

/// A process that dies mid-search fails that search; the pool replaces it and the next search succeeds.
fn dies_then_recovers<G: Game>(protocol: Protocol, game: GameKind, fake_protocol: &str, root: G) {
    let Some(fake) = Fake::new(&format!("restart-{fake_protocol}")) else { return };
    let engines = Engines::new(vec![spec("flaky", game, protocol, fake.command(fake_protocol, "dieonce"), short())])
        .expect("a client");
    let engine = engines.get("flaky", game).expect("configured");
    let pool = engine.pool::<G>().expect("the game's pool");
    let search = ExternalSearch { root: root.clone(), moves: Vec::new(), limits: Limits::depth(3), multipv: 1 };
    let first = pool.search_now(&search, &AtomicBool::new(false), &mut |_| {});
    assert!(matches!(first, Err(EngineError::Died { .. })), "{first:?}");
    // The replacement starts in the background: wait for it, a bounded wait.
    let deadline = Instant::now() + Duration::from_secs(20);
    while engine.stats.restarts.load(Ordering::Relaxed) < 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(engine.stats.restarts.load(Ordering::Relaxed) >= 1);
    let second = pool.search_now(&search, &AtomicBool::new(false), &mut |_| {}).expect("a fresh process answers");
    assert!(is_legal(&root, second.best.expect("a move")));
    assert!(engine.stats.failures.load(Ordering::Relaxed) >= 1);
    assert_eq!(engine.stats.searches.load(Ordering::Relaxed), 1);
    assert!(engine.stats.started.load(Ordering::Relaxed) >= 2);
    engines.shutdown();
}

/// A shutdown that comes while a replacement process is starting waits for that start and stops the process:
/// no engine started by the pool outlives its shutdown (a match's last game, say, whose engine died).
#[cfg(target_os = "linux")]
#[test]
fn a_replacement_starting_at_shutdown_does_not_outlive_it() {
    let Some(fake) = Fake::new("slow-restart") else { return };
    let command = fake.command("hub", "slowrestart");
    let engines = Engines::new(vec![spec("flaky", GameKind::Draughts, Protocol::Hub, command, short())]).unwrap();
    let pool = engines.get("flaky", GameKind::Draughts).and_then(|e| e.pool::<Draughts>()).expect("a pool");
    let search = ExternalSearch { root: Draughts::start(), moves: Vec::new(), limits: Limits::depth(3), multipv: 1 };
    let first = pool.search_now(&search, &AtomicBool::new(false), &mut |_| {});
    assert!(matches!(first, Err(EngineError::Died { .. })), "{first:?}");
    // The replacement is starting now (its greeting 1.5 s away).
    engines.shutdown();
    let started: Vec<u32> = std::fs::read_dir(fake.path())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("pid-")?.parse().ok())
        .collect();
    assert_eq!(started.len(), 1, "one replacement was started");
    for pid in started {
        assert!(!common::running(pid), "the replacement {pid} outlived the shutdown");
    }
}

#[test]
fn a_killed_process_is_replaced_for_every_protocol() {
    dies_then_recovers(Protocol::Uhp, GameKind::Hive, "uhp", Hive::start());
    dies_then_recovers(Protocol::Checkers, GameKind::Checkers, "checkers", Checkers::start());
    dies_then_recovers(Protocol::Hub, GameKind::Draughts, "hub", Draughts::start());
}

// ---- Processes ----

/// Whether `pid` names a live process (a zombie waiting for its parent counts as gone).
fn alive(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn a_failed_engine_is_killed_with_everything_it_started() {
    if !Path::new("/proc/self/stat").exists() || find_program("sh").is_none() {
        eprintln!("skipped: needs /proc and sh");
        return;
    }
    let Some(fake) = Fake::new("group") else { return };
    // A wrapper script whose engine starts a helper of its own: the helper is a grandchild of kibitz.
    let wrapper = "sleep 600 & echo $! > helper.pid; python3 fake.py uhp silent";
    let command = EngineCommand::new("sh").arg("-c").arg(wrapper).dir(fake.path());
    let mut engine = UhpEngine::start(&command, short()).expect("the handshake works");
    let helper = std::fs::read_to_string(fake.path().join("helper.pid")).expect("the helper's pid");
    let helper = helper.trim();
    assert!(alive(helper), "the helper runs while the engine does");
    let result = engine.search(&Hive::start(), &[], &Limits::depth(3), 1, &AtomicBool::new(false), &mut |_| {});
    assert!(matches!(&result, Err(EngineError::Timeout { .. })), "{result:?}");
    assert!(engine.is_dead());
    // SIGKILL is delivered at once, but the helper's parent must reap it: wait for that, without a time bound
    // in the assertion (the loop ends as soon as it is gone).
    let mut waited = 0;
    while alive(helper) && waited < 500 {
        std::thread::sleep(Duration::from_millis(20));
        waited += 1;
    }
    assert!(!alive(helper), "the helper started by the engine's wrapper outlived the engine");
}

// ---- A game goes on with moves, not a new game each search ----

/// An engine command whose input is also appended to `log` (a `tee` in front of the engine).
fn logged(engine: &str, log: &Path) -> EngineCommand {
    EngineCommand::new("sh").arg("-c").arg(format!("tee -a '{}' | exec '{engine}'", log.display()))
}

/// The lines of the log that start with one of `words`, in order.
fn logged_lines(log: &Path, words: &[&str]) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter(|l| words.iter().any(|w| l.starts_with(w))).map(str::to_string).collect()
}

#[test]
fn clients_continue_a_game_with_moves_and_set_up_another_one() {
    let Some(dir) = Fake::new("continue") else { return };
    let depth = Limits::depth(3);
    let quiet = AtomicBool::new(false);

    // Checkers Protocol: NEWGAME when the game starts, then only the moves played since the last search.
    let log = dir.path().join("checkers.log");
    let mut engine = CheckersEngine::start(&logged(env!("CARGO_BIN_EXE_kibitz-checkers"), &log), timeouts())
        .expect("kibitz-checkers starts");
    let start = Checkers::start();
    let game = kibitz::game::play_moves(&mut start.clone(), &["11-15", "23-19", "8-11", "22-17"]).expect("legal");
    kibitz::engines::Driver::new_game(&mut engine).expect("a new game");
    for plies in [0, 2, 4] {
        let done = engine.search(&start, &game[..plies], &depth, 1, &quiet, &mut |_| {}).expect("an answer");
        assert!(is_legal(&after(&start, &game[..plies]), done.best.expect("a move")));
    }
    // Another position: set up afresh.
    let other = Checkers::from_fen("B:W18,24,27:B12,16").expect("a position");
    let done = engine.search(&other, &[], &depth, 1, &quiet, &mut |_| {}).expect("an answer");
    assert!(is_legal(&other, done.best.expect("a move")));
    assert_eq!(
        logged_lines(&log, &["NEWGAME", "MOVE"]),
        ["NEWGAME", "MOVE 11x15", "MOVE 23x19", "MOVE 8x11", "MOVE 22x17", "NEWGAME B:W18,24,27:B12,16"]
    );
    engine.quit();

    // UHP: newgame for the first search of a game, then plays.
    let log = dir.path().join("uhp.log");
    let mut engine =
        UhpEngine::start(&logged(env!("CARGO_BIN_EXE_kibitz-uhp"), &log), timeouts()).expect("kibitz-uhp starts");
    let start = Hive::start();
    let game =
        kibitz::game::play_moves(&mut start.clone(), &["wS1", "bS1 wS1-", "wQ -wS1", "bQ bS1-"]).expect("legal moves");
    kibitz::engines::Driver::new_game(&mut engine).expect("a new game");
    for plies in [1, 2, 4] {
        let done = engine.search(&start, &game[..plies], &depth, 1, &quiet, &mut |_| {}).expect("an answer");
        assert!(is_legal(&after(&start, &game[..plies]), done.best.expect("a move")));
    }
    // A new game sets up afresh even from the same moves.
    kibitz::engines::Driver::new_game(&mut engine).expect("a new game");
    engine.search(&start, &game[..2], &depth, 1, &quiet, &mut |_| {}).expect("an answer");
    assert_eq!(
        logged_lines(&log, &["newgame", "play"]),
        [
            "newgame Base+MLP;InProgress;Black[1];wS1",
            "play bS1 wS1-",
            "play wQ -wS1",
            "play bQ bS1-",
            "newgame Base+MLP;InProgress;White[2];wS1;bS1 wS1-",
        ]
    );
    engine.quit();
}
