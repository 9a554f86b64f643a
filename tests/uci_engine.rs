//! The UCI engine client against real engines (Stockfish for chess, Fairy-Stockfish for xiangqi; each test is
//! skipped with a message when its engine is not installed) and against small scripted fake engines that
//! misbehave (each skipped when python3 is missing).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kibitz::engines::{EngineCommand, EngineError, Timeouts, UciEngine, UciNotation};
use kibitz::game::Game;
use kibitz::games::chess::Chess;
use kibitz::games::xiangqi::Xiangqi;
use kibitz::search::{Done, Event, Info, Limits, Score};

fn find_program(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.push(PathBuf::from("/usr/games"));
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

fn engine(name: &str) -> Option<UciEngine> {
    let Some(program) = find_program(name) else {
        eprintln!("skipped: `{name}` is not installed (CI installs it)");
        return None;
    };
    let mut engine = UciEngine::start(&EngineCommand::new(program), Timeouts::default()).expect("the engine starts");
    engine.set_option("Threads", "1").expect("Threads");
    engine.set_option("Hash", "16").expect("Hash");
    engine.new_game().expect("ucinewgame");
    Some(engine)
}

/// A search with its stream of events.
fn analyse<G: UciNotation>(
    engine: &mut UciEngine,
    root: &G,
    moves: &[G::Move],
    limits: &Limits,
    multipv: u32,
) -> (Done<G::Move>, Vec<Info<G::Move>>) {
    let stop = AtomicBool::new(false);
    let mut infos = Vec::new();
    let mut done_events = 0;
    let done = engine
        .search(root, moves, limits, multipv, &stop, &mut |e| match e {
            Event::Info(i) => infos.push(i),
            Event::Done(_) => done_events += 1,
        })
        .expect("the search answers");
    assert_eq!(done_events, 1);
    (done, infos)
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

/// Scores in one order: winning mates, then centi-units, then losing mates.
fn rank(score: Score) -> i64 {
    match score {
        Score::Cp(cp) => i64::from(cp),
        Score::Mate(p) if p > 0 => 1_000_000_000 - i64::from(p),
        Score::Mate(p) => -1_000_000_000 - i64::from(p),
    }
}

#[test]
fn stockfish_analyses_chess_positions_at_fixed_depth() {
    let Some(mut sf) = engine("stockfish") else { return };
    assert!(sf.name().to_ascii_lowercase().contains("stockfish"), "{}", sf.name());
    for fen in [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3",
    ] {
        let root = Chess::from_fen(fen).expect("a position");
        let (done, infos) = analyse(&mut sf, &root, &[], &Limits::depth(10), 1);
        let best = done.best.expect("a best move");
        assert!(is_legal(&root, best), "{fen}");
        assert_eq!(done.depth, 10, "{fen}");
        assert_eq!(done.lines.len(), 1, "{fen}");
        assert_eq!(done.lines[0].pv.first(), Some(&best), "{fen}");
        assert_line_legal(&root, &done.lines[0].pv);
        assert!(done.nodes > 0, "{fen}");
        if let Some(reply) = done.ponder {
            let mut after = root.clone();
            after.make(best);
            assert!(is_legal(&after, reply), "{fen}");
        }
        // Every depth was reported with a line, every line of play legal.
        for depth in 1..=10 {
            assert!(infos.iter().any(|i| i.depth == depth && !i.pv.is_empty()), "depth {depth} of {fen}");
        }
        for info in &infos {
            assert!(!info.pv.is_empty() || info.currmove.is_some(), "{info:?}");
            assert_eq!(info.multipv, 1);
            assert_line_legal(&root, &info.pv);
        }
    }
}

#[test]
fn stockfish_multipv_gives_distinct_lines_best_first() {
    let Some(mut sf) = engine("stockfish") else { return };
    let root = Chess::from_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3").expect("a position");
    let (done, infos) = analyse(&mut sf, &root, &[], &Limits::depth(10), 3);
    assert_eq!(done.lines.len(), 3);
    let firsts: Vec<_> = done.lines.iter().map(|l| l.pv[0]).collect();
    assert!(firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2], "{firsts:?}");
    for line in &done.lines {
        assert_eq!(line.depth, 10);
        assert_line_legal(&root, &line.pv);
    }
    assert!(done.lines.windows(2).all(|w| rank(w[0].score) >= rank(w[1].score)), "{:?}", done.lines);
    assert!(infos.iter().any(|i| i.multipv == 3));
    // Back to one line: the option is set again.
    let (done, _) = analyse(&mut sf, &root, &[], &Limits::depth(6), 1);
    assert_eq!(done.lines.len(), 1);
}

#[test]
fn stockfish_mate_in_two_moves_is_mate_in_three_plies() {
    let Some(mut sf) = engine("stockfish") else { return };
    let root = Chess::from_fen("7k/8/8/8/8/8/R7/1R4K1 w - - 0 1").expect("a position");
    let (done, _) = analyse(&mut sf, &root, &[], &Limits::depth(12), 1);
    assert_eq!(done.lines[0].score, Score::Mate(3));
    assert_eq!(done.lines[0].pv.len(), 3);
    // The defender's view, after the first move: mated in one move, two plies.
    let mut after = root.clone();
    after.make(done.best.expect("a move"));
    let (done, _) = analyse(&mut sf, &root, &[done.best.expect("a move")], &Limits::depth(12), 1);
    assert_eq!(done.lines[0].score, Score::Mate(-2));
    assert_line_legal(&after, &done.lines[0].pv);
}

#[test]
fn stockfish_infinite_search_stops_when_asked() {
    let Some(program) = find_program("stockfish") else {
        eprintln!("skipped: `stockfish` is not installed (CI installs it)");
        return;
    };
    // The stop must be answered within the grace period, a second, or the search fails with a timeout.
    let timeouts = Timeouts { grace: Duration::from_secs(1), ..Timeouts::default() };
    let mut sf = UciEngine::start(&EngineCommand::new(program), timeouts).expect("starts");
    let root = Chess::start();
    let stop = AtomicBool::new(false);
    let mut infos = 0;
    let done = sf
        .search(&root, &[], &Limits::infinite(), 1, &stop, &mut |e| {
            if let Event::Info(i) = e {
                infos += 1;
                if i.depth >= 8 {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        })
        .expect("answers the stop");
    assert!(stop.load(Ordering::Relaxed));
    assert!(infos > 0);
    assert!(is_legal(&root, done.best.expect("a move")));
    assert!(done.depth >= 8);
    // Still usable afterwards.
    let (done, _) = analyse(&mut sf, &root, &[], &Limits::depth(4), 1);
    assert!(done.best.is_some());
    sf.quit();
}

#[test]
fn stockfish_answers_a_finished_game_without_searching() {
    let Some(mut sf) = engine("stockfish") else { return };
    let mated = Chess::from_fen("R6k/6pp/8/8/8/8/8/6K1 b - - 0 1").expect("a position");
    let (done, infos) = analyse(&mut sf, &mated, &[], &Limits::depth(5), 1);
    assert_eq!(done.best, None);
    assert!(done.game_end.is_some());
    assert!(infos.is_empty());
}

#[test]
fn fairy_stockfish_analyses_xiangqi_with_legal_lines() {
    let Some(mut fsf) = engine("fairy-stockfish") else { return };
    let start = Xiangqi::start();
    // The start position, then a middlegame reached by moves (sent as `position startpos moves ...`), then the
    // same middlegame as a FEN.
    let mut middle = start.clone();
    let played = kibitz::game::play_moves(
        &mut middle,
        &["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7", "b0c2", "c6c5", "c3c4", "b7b3", "h0h4"],
    )
    .expect("legal moves");
    let middle_fen = Xiangqi::from_fen(&middle.to_fen()).expect("its FEN");
    let cases: [(&Xiangqi, &[_]); 3] = [(&start, &[]), (&start, &played), (&middle_fen, &[])];
    for (root, moves) in cases {
        let mut position = root.clone();
        for &m in moves {
            position.make(m);
        }
        let (done, infos) = analyse(&mut fsf, root, moves, &Limits::depth(9), 2);
        let best = done.best.expect("a best move");
        assert!(is_legal(&position, best));
        assert_eq!(done.depth, 9);
        assert_eq!(done.lines.len(), 2);
        assert_ne!(done.lines[0].pv[0], done.lines[1].pv[0]);
        for line in &done.lines {
            assert!(line.pv.len() >= 2, "{line:?}");
            assert_line_legal(&position, &line.pv);
        }
        // Every reported line was read whole: its moves were converted and legal through kibitz's rules.
        assert!(!infos.is_empty());
        for info in &infos {
            assert!(!info.pv.is_empty() || info.currmove.is_some(), "{info:?}");
            assert_line_legal(&position, &info.pv);
        }
    }
}

// ---- fake engines ----

/// A UCI engine in Python that behaves until `go`, then misbehaves as its first argument says. `late` and `dup`
/// answer by position (the start: d2d4 at 900; after e2e4 e7e5: g1f3 at -5) and then say more: `late` a deep
/// `info` of d2d4, `dup` a second `bestmove d2d4`, as an engine does when a `stop` crosses its answer. `orphan`
/// leaves a process holding its output and exits at `go`.
const FAKE: &str = r#"
import subprocess, sys, time
mode = sys.argv[1]
position = ""
def say(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
if mode == "orphan":
    subprocess.Popen(["sleep", "30"], stdout=sys.stdout)
for line in sys.stdin:
    cmd = line.strip()
    if cmd.startswith("position"):
        position = cmd
    if cmd.startswith("go") and mode in ("late", "dup"):
        if position == "position startpos":
            say("info depth 3 seldepth 3 multipv 1 score cp 900 nodes 20 time 1 pv d2d4")
            say("bestmove d2d4")
        else:
            say("info depth 1 seldepth 1 multipv 1 score cp -5 nodes 20 time 1 pv g1f3")
            say("bestmove g1f3")
        say("info depth 60 seldepth 60 multipv 1 score cp 900 nodes 1 time 1 pv d2d4" if mode == "late" else "bestmove d2d4")
        continue
    if cmd.startswith("go") and mode == "orphan":
        sys.exit(0)
    if cmd == "uci":
        if mode == "mute":
            continue
        say("id name Fake " + mode)
        say("option name Hash type spin default 16 min 1 max 1024")
        say("uciok")
    elif cmd == "isready":
        say("readyok")
    elif cmd.startswith("go"):
        say("info depth 1 seldepth 1 multipv 1 score cp 13 nodes 20 nps 2000 time 10 pv e2e4 e7e5")
        if mode == "die":
            sys.exit(0)
        elif mode == "illegal":
            say("bestmove e2e5")
        elif mode == "long":
            sys.stdout.write("x" * (1100 * 1024))
            sys.stdout.flush()
            time.sleep(30)
        elif mode == "badpv":
            say("info depth 2 seldepth 2 multipv 1 score cp 9 pv e2e4 e2e4 g1f3")
            say("bestmove e2e4 ponder e2e4")
        # "silent": never answers
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
        let dir = std::env::temp_dir().join(format!("kibitz-fake-uci-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        std::fs::write(dir.join("fake.py"), FAKE).expect("the script");
        Some(Fake { dir })
    }

    fn command(&self, mode: &str) -> EngineCommand {
        EngineCommand::new("python3").arg("fake.py").arg(mode).dir(&self.dir)
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

fn short() -> Timeouts {
    Timeouts {
        handshake: Duration::from_secs(5),
        ready: Duration::from_secs(5),
        grace: Duration::from_millis(500),
        search: Duration::from_millis(500),
    }
}

/// Start the fake and search the start position to depth 5.
fn fake_search(fake: &Fake, mode: &str) -> (UciEngine, Result<Done<<Chess as Game>::Move>, EngineError>) {
    let mut engine = UciEngine::start(&fake.command(mode), short()).expect("the handshake works");
    assert_eq!(engine.name(), format!("Fake {mode}"));
    let stop = AtomicBool::new(false);
    let result = engine.search(&Chess::start(), &[], &Limits::depth(5), 1, &stop, &mut |_| {});
    (engine, result)
}

#[test]
fn an_engine_that_dies_mid_search_is_an_error_naming_it() {
    let Some(fake) = Fake::new("die") else { return };
    let (mut engine, result) = fake_search(&fake, "die");
    let error = result.expect_err("no answer");
    assert!(matches!(&error, EngineError::Died { engine, .. } if engine == "Fake die"), "{error}");
    assert!(error.to_string().contains("Fake die"), "{error}");
    assert!(engine.is_dead());
    assert!(matches!(engine.is_ready(), Err(EngineError::Dead { .. })));
}

#[test]
fn what_an_engine_says_after_its_answer_never_counts_as_the_next_searchs() {
    // Before the engine's output was read up to a `readyok` before each search, the late `info` became the next
    // position's line (d2d4 at depth 60, cached as such), and the second `bestmove` its answer.
    for mode in ["late", "dup"] {
        let Some(fake) = Fake::new(mode) else { return };
        let (mut engine, result) = fake_search(&fake, mode);
        let first = result.expect("the first search answers");
        assert_eq!(first.best.map(|m| Chess::start().uci_move(m)), Some("d2d4".to_string()), "{mode}");
        let start = Chess::start();
        let e4 = start.parse_move("e2e4").expect("e4");
        let mut after = start.clone();
        after.make(e4);
        let moves = [e4, after.parse_move("e7e5").expect("e5")];
        let stop = AtomicBool::new(false);
        let second = engine.search(&start, &moves, &Limits::depth(5), 1, &stop, &mut |_| {}).expect(mode);
        let mut position = start.clone();
        moves.iter().for_each(|&m| position.make(m));
        assert_eq!(second.best.map(|m| position.uci_move(m)), Some("g1f3".to_string()), "{mode}");
        assert_eq!(second.lines.len(), 1, "{mode}");
        assert_eq!((second.lines[0].depth, second.lines[0].score), (1, Score::Cp(-5)), "{mode}");
        assert_eq!(position.uci_move(second.lines[0].pv[0]), "g1f3", "{mode}");
    }
}

#[test]
fn an_engine_that_exits_while_its_child_holds_its_output_has_died() {
    // Its output does not end (the child holds the pipe): the exit is seen by the process itself, at once, where
    // the search used to wait for its deadline and then call the engine hung.
    let Some(fake) = Fake::new("orphan") else { return };
    let mut engine = UciEngine::start(&fake.command("orphan"), Timeouts { search: Duration::from_secs(20), ..short() })
        .expect("the handshake works");
    let stop = AtomicBool::new(false);
    let started = std::time::Instant::now();
    let error = engine.search(&Chess::start(), &[], &Limits::depth(5), 1, &stop, &mut |_| {}).expect_err("it exits");
    assert!(matches!(&error, EngineError::Died { .. }), "{error} after {:?}", started.elapsed());
    assert!(engine.is_dead());
}

#[test]
fn an_engine_that_never_answers_times_out() {
    let Some(fake) = Fake::new("silent") else { return };
    let (engine, result) = fake_search(&fake, "silent");
    let error = result.expect_err("no answer");
    assert!(
        matches!(&error, EngineError::Timeout { engine, during: "bestmove", .. } if engine == "Fake silent"),
        "{error}"
    );
    assert!(engine.is_dead());
}

#[test]
fn an_engine_that_never_finishes_its_handshake_times_out() {
    let Some(fake) = Fake::new("mute") else { return };
    let timeouts = Timeouts { handshake: Duration::from_millis(500), ..short() };
    let error = UciEngine::start(&fake.command("mute"), timeouts).err().expect("no engine");
    assert!(matches!(&error, EngineError::Timeout { during: "uciok", .. }), "{error}");
    assert!(error.to_string().contains("python3"), "the program names it before it names itself: {error}");
}

#[test]
fn an_illegal_best_move_is_an_engine_failure() {
    let Some(fake) = Fake::new("illegal") else { return };
    let (engine, result) = fake_search(&fake, "illegal");
    let error = result.expect_err("no answer");
    assert!(
        matches!(&error, EngineError::IllegalMove { engine, token, .. } if engine == "Fake illegal" && token == "e2e5"),
        "{error}"
    );
    assert!(engine.is_dead());
}

#[test]
fn an_illegal_pv_move_only_shortens_the_line() {
    let Some(fake) = Fake::new("badpv") else { return };
    let (_engine, result) = fake_search(&fake, "badpv");
    let done = result.expect("an answer");
    let root = Chess::start();
    let e2e4 = root.parse_move("e2e4").expect("legal");
    assert_eq!(done.best, Some(e2e4));
    assert_eq!(done.ponder, None, "e2e4 is no reply to e2e4");
    assert_eq!(done.depth, 2);
    assert_eq!(done.lines[0].pv, [e2e4]);
    assert_eq!(done.lines[0].score, Score::Cp(9));
}

#[test]
fn a_megabyte_without_a_newline_is_an_error() {
    let Some(fake) = Fake::new("long") else { return };
    let (engine, result) = fake_search(&fake, "long");
    let error = result.expect_err("no answer");
    assert!(matches!(&error, EngineError::LineTooLong { engine, .. } if engine == "Fake long"), "{error}");
    assert!(engine.is_dead());
}

#[test]
fn options_are_checked_against_the_declaration() {
    let Some(fake) = Fake::new("options") else { return };
    let mut engine = UciEngine::start(&fake.command("options"), short()).expect("the handshake works");
    assert!(engine.option("hash").is_some(), "names are case-insensitive");
    assert!(engine.set_option("Hash", "64").is_ok());
    assert!(matches!(engine.set_option("Hash", "4096"), Err(EngineError::BadOptionValue { .. })));
    assert!(matches!(engine.set_option("Threads", "2"), Err(EngineError::UnknownOption { .. })));
    // Several lines or a game the engine does not declare are refused before searching.
    let stop = AtomicBool::new(false);
    let multi = engine.search(&Chess::start(), &[], &Limits::depth(1), 2, &stop, &mut |_| {});
    assert!(matches!(multi, Err(EngineError::Unsupported { .. })), "{multi:?}");
    let variant = engine.search(&Xiangqi::start(), &[], &Limits::depth(1), 1, &stop, &mut |_| {});
    assert!(matches!(variant, Err(EngineError::Unsupported { .. })), "{variant:?}");
    assert!(!engine.is_dead());
    engine.is_ready().expect("still usable");
}

#[test]
fn a_missing_program_is_a_spawn_error() {
    let error =
        UciEngine::start(&EngineCommand::new("/nonexistent/kibitz-no-such-engine"), short()).err().expect("no engine");
    assert!(matches!(&error, EngineError::Spawn { engine, .. } if engine.contains("kibitz-no-such-engine")), "{error}");
}
