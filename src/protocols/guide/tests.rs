use std::sync::mpsc::{self, Receiver};

use super::*;
use crate::search::Score;

const WAIT: Duration = Duration::from_secs(30);
const START: &str = "white bbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww";

/// A session on its own one-worker pool; its events arrive on the receiver and are fed back by hand.
fn session() -> (GuideSession, Receiver<GuideEvent>) {
    let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: 1, clock_workers: 0 });
    let (tx, rx) = mpsc::channel();
    let config =
        GuideConfig { hash_mb: 1, max_threads: 4, idle: Some(Duration::from_secs(60)), ..GuideConfig::default() };
    let s = GuideSession::new(Analysis::local(pool), config, move |e| {
        let _ = tx.send(e);
    });
    (s, rx)
}

fn lines(s: &mut GuideSession, line: &str) -> Vec<String> {
    let reply = s.on_line(line);
    assert!(!reply.quit, "{line} quits");
    reply.lines
}

fn silent(s: &mut GuideSession, line: &str) {
    assert_eq!(lines(s, line), Vec::<String>::new(), "{line}");
}

fn errs(s: &mut GuideSession, line: &str, needle: &str) {
    let out = lines(s, line);
    assert_eq!(out.len(), 1, "{line}: {out:?}");
    assert!(out[0].starts_with("error ") && out[0].contains(needle), "{line}: {out:?} lacks {needle}");
}

/// Feed events back until the search ends; every line it produced.
fn finish(s: &mut GuideSession, rx: &Receiver<GuideEvent>) -> Vec<String> {
    let mut out = Vec::new();
    while s.is_thinking() {
        let e = rx.recv_timeout(WAIT).expect("the search reports within the deadline");
        out.extend(s.on_event(e).lines);
    }
    out
}

fn guide(fen: &str) -> String {
    Draughts::from_fen(fen).expect("fen").to_guide()
}

#[test]
fn handshake_capabilities_and_ping() {
    let (mut s, _rx) = session();
    let hello = LineSession::greeting(&mut s);
    assert!(hello[0].starts_with("name kibitz "), "{hello:?}");
    assert!(hello[1].starts_with("author "));
    assert_eq!(hello.last().map(String::as_str), Some("engineok"));
    assert!(hello.contains(&"option 0 Threads type 2 default 1 min 1 max 4".to_string()), "{hello:?}");
    assert!(hello.contains(&"option 2 Hash_MB type 2 default 1 min 1 max 1024".to_string()), "{hello:?}");
    assert_eq!(lines(&mut s, "guide"), hello);
    let caps = lines(&mut s, "capabilities");
    assert_eq!(caps.len(), 1);
    for word in COMMANDS.iter().chain(&["quit", "#kibitz eval", "#kibitz setfen"]) {
        assert!(caps[0].contains(word), "{word} missing: {caps:?}");
    }
    assert_eq!(lines(&mut s, "ping 12:34  x"), vec!["pong 12:34  x"]);
    assert_eq!(lines(&mut s, "PING"), vec!["pong"]);
    silent(&mut s, "showwindow 1");
    silent(&mut s, "setcomment 0 a fine start");
    assert_eq!(lines(&mut s, "offerdraw"), vec!["debug draw offer declined"]);
    let reply = s.on_line("quit");
    assert!(reply.quit);
    assert_eq!(reply.lines, vec!["quit"]);
}

#[test]
fn a_shared_pool_offers_no_hash_option() {
    let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: 1, clock_workers: 0 });
    let mut s =
        GuideSession::new(Analysis::local(pool), GuideConfig { own_pool: false, ..GuideConfig::default() }, |_| {});
    assert!(!s.handshake().iter().any(|l| l.contains("Hash_MB")));
    errs(&mut s, "setoption 2 16", "no option 2");
}

#[test]
fn moves_positions_and_navigation() {
    let (mut s, _rx) = session();
    assert_eq!(lines(&mut s, "requestposition")[0].split(" m ").count(), 10, "9 legal moves");
    silent(&mut s, "move 32 28 0");
    silent(&mut s, "move 19 23 0");
    assert_eq!(
        lines(&mut s, "requestposition"),
        vec![format!("position {} m 28 19 1 23", guide("W:W28,31,33-50:B1-18,20,23"))]
    );
    silent(&mut s, "move 28 19 1 23");
    assert_eq!(s.game().2, 3);
    silent(&mut s, "forward -2");
    assert_eq!(s.board().to_fen(), Draughts::from_fen("B:W28,31,33-50:B1-20").expect("fen").to_fen());
    silent(&mut s, "forward 1");
    assert_eq!(s.game().2, 2);
    silent(&mut s, "jumpto 3");
    assert_eq!(s.board().plies(), 3);
    silent(&mut s, "jumpto 0");
    assert_eq!(s.board().to_guide(), START);
    assert_eq!(lines(&mut s, "requestgame"), vec![format!("game {START} 3 m 32 28 0 m 19 23 0 m 28 19 1 23")]);
    // A move at an earlier point drops the later ones.
    silent(&mut s, "move 31 26 0");
    assert_eq!(lines(&mut s, "requestgame"), vec![format!("game {START} 1 m 31 26 0")]);
    silent(&mut s, &format!("game {START} 2 m 32 28 0 m 19 23 0"));
    assert_eq!(s.game().2, 2);
    assert_eq!(s.board().side_to_move(), Draughts::WHITE_SIDE);
    let kings = guide("B:WK46:BK5");
    silent(&mut s, &format!("position {kings}"));
    assert_eq!(s.board().to_guide(), kings);
    assert_eq!(s.game().1.len(), 0);
    silent(&mut s, "new");
    assert_eq!(s.board().to_guide(), START);
}

#[test]
fn bad_commands_are_errors_and_change_nothing() {
    let (mut s, _rx) = session();
    silent(&mut s, "move 32 28 0");
    let before = s.board().to_fen();
    let level = s.level();
    let cases: &[(&str, &str)] = &[
        ("frobnicate 3", "unknown command `frobnicate`"),
        ("move", "move needs"),
        ("move 32 28 0", "no black piece on square 32"),
        ("move 18 22 1 27", "illegal"),
        ("move 18 x 0", "not a square number"),
        ("move 99 22 0", "not a square"),
        ("forward", "needs a number"),
        ("forward 2", "current move is 1 of a game of 1 moves"),
        ("forward -2", "current move is 1"),
        ("forward x", "not a whole number"),
        ("forward 1 2", "got also `2`"),
        ("jumpto 5", "out of range (0-1)"),
        ("jumpto -1", "jumpto `-1`"),
        ("enginemode", "needs 0"),
        ("enginemode 3", "`3`: expected 0, 1 or 2"),
        ("enginemode 1", "needs a threshold"),
        ("enginemode 1 0", "out of range"),
        ("enginemode 1 abc", "not a whole number"),
        ("enginemode 0 1", "unexpected `1`"),
        ("levelsfixeddepth 0", "out of range"),
        ("levelsfixeddepth 61", "out of range"),
        ("levelsfixeddepth", "needs a depth"),
        ("levelsfixedtime 0", "more than 0"),
        ("levelsfixedtime -1", "out of range"),
        ("levelsfixedtime NaN", "out of range"),
        ("levelsfixedtime soon", "not a number"),
        ("levelsblitzgame 300", "needs the game time"),
        ("levelsblitzgame 0 2", "more than 0"),
        ("levelslonggame 7200 50 3600 25", "needs <ftc_time>"),
        ("levelslonggame 7200 0 3600 25 1800", "out of range"),
        ("levelslonggame 7200 50.5 3600 25 1800", "not a whole number"),
        ("levelsinfiniteanalysis now", "takes no argument"),
        ("opponents", "needs player-player"),
        ("opponents engine-robot", "`engine-robot`"),
        ("opponents engine", "`engine`"),
        ("go 1", "got one number"),
        ("go 1 2 3", "got also `3`"),
        ("go -1 0", "out of range"),
        ("go x 0", "not a number"),
        ("halt", "needs 0"),
        ("halt 2", "expected 0 or 1"),
        ("setoption 0", "needs an option id and a value"),
        ("setoption 9 1", "no option 9"),
        ("setoption 0 0", "out of range (1-4)"),
        ("setoption 0 many", "not a whole number"),
        ("setoption x 1", "setoption id `x`"),
        ("setcomment", "needs a move number"),
        ("setcomment 7 hello", "out of range"),
        ("showwindow 2", "expected 0 or 1"),
        ("position", "needs `white` or `black`"),
        ("position green eeee", "`green`"),
        ("position white eeee", "50 squares"),
        ("game", "needs a position"),
        ("game white eee 0", "50 squares"),
        ("new please", "takes no argument"),
        ("requestposition 1", "takes no argument"),
        ("#kibitz", "needs an extension"),
        ("#kibitz frob", "unknown #kibitz extension `frob`"),
        ("#kibitz setfen W:W51", "bad position"),
        ("#kibitz eval 3", "takes no argument"),
    ];
    for &(line, needle) in cases {
        errs(&mut s, line, needle);
    }
    errs(&mut s, &format!("game {START} 2 m 32 28 0 m 18 24 0"), "move 2:");
    errs(&mut s, &format!("game {START} 3 m 32 28 0"), "3 moves announced");
    let long = "x".repeat(300);
    let out = lines(&mut s, &long);
    assert!(out[0].len() < 120 && out[0].contains("...`"), "{out:?}");
    assert!(s.on_line_too_long(1 << 20).lines[0].starts_with("error line of 1048576 bytes is longer than the limit"));
    assert_eq!(s.board().to_fen(), before);
    assert_eq!(s.level(), level);
    assert_eq!(s.mode(), Mode::Normal);
    assert!(!s.is_thinking());
    silent(&mut s, "");
    silent(&mut s, "   ");
}

#[test]
fn escapes_run_the_command_and_kibitz_extensions() {
    let (mut s, _rx) = session();
    silent(&mut s, "move 32 28 0");
    silent(&mut s, "new #drg autosave");
    assert_eq!(s.board().to_guide(), START);
    silent(&mut s, "#drg eval 0");
    assert_eq!(lines(&mut s, "#kibitz fen"), vec![format!("debug fen {}", Draughts::start().to_fen())]);
    let out = lines(&mut s, "ping 1 #kibitz eval");
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0], "pong 1");
    assert!(out[1].strip_prefix("debug eval ").is_some_and(|v| v.parse::<i32>().is_ok()), "{out:?}");
    silent(&mut s, "#KIBITZ setfen W:W33:B22");
    assert_eq!(s.board().to_fen(), "W:W33:B22");
    silent(&mut s, "move 33 28 0");
    assert_eq!(lines(&mut s, "#kibitz pdn"), vec!["debug pdn 33-28"]);
}

#[test]
fn go_plays_the_engines_side_only() {
    let (mut s, rx) = session();
    silent(&mut s, "levelsfixeddepth 3");
    silent(&mut s, "opponents player-engine");
    // White to move, the engine plays Black: a hint, not played.
    silent(&mut s, "go 0 0");
    let out = finish(&mut s, &rx);
    let last = out.last().expect("move");
    assert!(last.starts_with("move "), "{out:?}");
    assert!(Draughts::start().parse_guide_move(&last[5..]).is_ok(), "{last}");
    assert!(out[..out.len() - 1].iter().all(|l| l.starts_with("searchInfo ")), "{out:?}");
    assert!(out.iter().any(|l| l.starts_with("searchInfo ply 3 score ") && l.contains(" pv ")), "{out:?}");
    assert_eq!(s.board().plies(), 0);
    silent(&mut s, "move 32 28 0");
    silent(&mut s, "go 1.5 0");
    let out = finish(&mut s, &rx);
    let m = out.last().expect("move").strip_prefix("move ").expect("move").to_string();
    let mut expected = Draughts::start();
    let first = expected.parse_guide_move("32 28 0").expect("legal");
    expected.make(first);
    let reply = expected.parse_guide_move(&m).expect("legal");
    expected.make(reply);
    assert_eq!(s.board().to_fen(), expected.to_fen());
    assert_eq!(s.game().2, 2);
}

#[test]
fn halt_one_plays_halt_zero_drops_and_commands_go_on_while_searching() {
    let (mut s, rx) = session();
    silent(&mut s, "levelsinfiniteanalysis");
    silent(&mut s, "go");
    assert!(s.is_thinking());
    errs(&mut s, "go", "already searching");
    assert_eq!(lines(&mut s, "ping x"), vec!["pong x"]);
    silent(&mut s, "levelsfixeddepth 4");
    std::thread::sleep(Duration::from_millis(50));
    silent(&mut s, "halt 1");
    let out = finish(&mut s, &rx);
    assert!(out.last().is_some_and(|l| l.starts_with("move ")), "{out:?}");
    assert_eq!(s.board().plies(), 1, "halt 1 plays the move");

    silent(&mut s, "levelsinfiniteanalysis");
    silent(&mut s, "go");
    silent(&mut s, "halt 0");
    assert!(!s.is_thinking());
    assert_eq!(s.board().plies(), 1, "halt 0 plays nothing");
    // Late events of the dropped search are ignored.
    while let Ok(e) = rx.recv_timeout(Duration::from_millis(300)) {
        assert_eq!(s.on_event(e), Reply::none());
    }
    // A board change drops the search.
    silent(&mut s, "go");
    silent(&mut s, "new");
    assert!(!s.is_thinking());
    silent(&mut s, "halt 1");
    assert!(s.on_line("quit").quit);
}

#[test]
fn position_analysis_streams_until_halt() {
    let (mut s, rx) = session();
    silent(&mut s, "enginemode 2");
    silent(&mut s, "levelsfixeddepth 1");
    silent(&mut s, "go");
    let mut out = Vec::new();
    let deadline = Instant::now() + WAIT;
    while out.iter().filter(|l: &&String| l.starts_with("searchInfo ply")).count() < 3 {
        assert!(Instant::now() < deadline, "{out:?}");
        let e = rx.recv_timeout(WAIT).expect("reports");
        out.extend(s.on_event(e).lines);
    }
    assert!(s.is_thinking(), "infinite whatever the level");
    silent(&mut s, "halt 0");
    assert!(!s.is_thinking());
    assert!(!out.iter().any(|l| l.starts_with("move")), "{out:?}");
    assert_eq!(s.board().plies(), 0);
}

/// White's first move gives a man away for nothing: 33-28? 22x33.
fn blunder_game() -> String {
    format!("{} 4 m 33 28 0 m 22 33 1 28 m 47 42 0 m 3 9 0", guide("W:W33,46,47,48:B3,4,5,22"))
}

#[test]
fn game_analysis_comments_the_blunder() {
    let (mut s, rx) = session();
    silent(&mut s, &format!("game {}", blunder_game()));
    silent(&mut s, "enginemode 1 50");
    silent(&mut s, "levelsfixeddepth 6");
    let mut out = lines(&mut s, "go");
    out.extend(finish(&mut s, &rx));
    let comments: Vec<&String> = out.iter().filter(|l| l.starts_with("setcomment ")).collect();
    let first = comments.first().unwrap_or_else(|| panic!("no comment: {out:?}"));
    assert!(first.starts_with("setcomment 1 33-28 loses "), "{first}");
    assert!(first.contains("better 33-29") || first.contains("better 4"), "{first}");
    let loss: i32 = first.split_whitespace().nth(4).and_then(|t| t.parse().ok()).expect("loss");
    assert!(loss >= 50, "{first}");
    assert!(!comments.iter().any(|c| c.starts_with("setcomment 2 ")), "the forced capture: {comments:?}");
    assert!(out.last().is_some_and(|l| l.starts_with("debug game analysis done: 4 moves")), "{out:?}");
    assert!(out.iter().any(|l| l == "searchInfo string analysing move 4 of 4"), "{out:?}");
    assert_eq!(s.game().2, 4, "the game is not changed");
    // A high threshold comments nothing.
    silent(&mut s, "enginemode 1 10000");
    let mut out = lines(&mut s, "go");
    out.extend(finish(&mut s, &rx));
    assert!(!out.iter().any(|l| l.starts_with("setcomment")), "{out:?}");
    // Without moves there is nothing to analyse.
    silent(&mut s, "new");
    silent(&mut s, "enginemode 1 100");
    errs(&mut s, "go", "needs a game with moves");
}

#[test]
fn game_analysis_can_be_halted() {
    let (mut s, rx) = session();
    silent(&mut s, &format!("game {}", blunder_game()));
    silent(&mut s, "enginemode 1 50");
    silent(&mut s, "levelsinfiniteanalysis");
    silent(&mut s, "setoption 1 40");
    let out = lines(&mut s, "go");
    assert_eq!(out, vec!["searchInfo string analysing move 1 of 4"]);
    let out = lines(&mut s, "halt 1");
    assert!(out[0].starts_with("debug game analysis halted"), "{out:?}");
    assert!(!s.is_thinking());
    drop(rx);
}

#[test]
fn a_finished_game_is_refused() {
    let (mut s, _rx) = session();
    silent(&mut s, "#kibitz setfen B:W33:B");
    errs(&mut s, "go", "the game is over: white wins");
    // No moves, and how the game ended (found by an audit: a drawn position without moves read as lost).
    assert_eq!(
        lines(&mut s, "requestposition"),
        vec![format!("position {}", guide("B:W33:B")), "debug game over: white wins (no legal move)".to_string()]
    );
}

/// Found by an audit: a server stopping closed a session thinking of a game's move without a move, though
/// README says running searches answer with what they have. The end of input (the server closes the reading
/// side) now stops the search, writes its move, and then ends the session; an analysis ends at once.
#[test]
fn the_end_of_input_during_a_games_move_answers_it_first() {
    let (mut s, rx) = session();
    silent(&mut s, "levelsfixedtime 60");
    silent(&mut s, "go");
    let reply = s.on_end_of_input();
    assert!(!reply.quit && reply.lines.is_empty(), "{reply:?}");
    let mut out = Vec::new();
    let quit = loop {
        let e = rx.recv_timeout(WAIT).expect("the stopped search answers");
        let reply = s.on_event(e);
        out.extend(reply.lines);
        if reply.quit {
            break true;
        }
    };
    assert!(quit && out.last().is_some_and(|l| l.starts_with("move ")), "{out:?}");
}

/// Found by an audit: a `go` refused (game analysis without a game) kept its clock times, and the next game's
/// move was played at once on a clock it thought spent. A Windows GUI on a decimal-comma locale writes `12,5`.
#[test]
fn a_refused_go_changes_no_clock_and_decimal_commas_read() {
    let (mut s, _rx) = session();
    silent(&mut s, "levelsblitzgame 60 0");
    silent(&mut s, "enginemode 1 100");
    errs(&mut s, "go 59.9 59.9", "game analysis needs a game");
    assert_eq!(s.reported, None);
    assert_eq!(s.limits().clock.expect("clock").remaining, Duration::from_secs(60));
    silent(&mut s, "levelsfixedtime 0,5");
    assert_eq!(s.limits(), Limits::movetime(Duration::from_millis(500)));
    errs(&mut s, "levelsfixedtime 1,5,0", "not a number of seconds");
    errs(&mut s, "levelsfixedtime 1.5,0", "not a number of seconds");
}

#[test]
fn clocks_of_blitz_and_long_games() {
    let (mut s, _rx) = session();
    silent(&mut s, "levelsblitzgame 300 2");
    silent(&mut s, "move 32 28 0");
    silent(&mut s, "move 19 23 0");
    s.reported = Some([100.0, 50.0]);
    // White has played one move: 300 + 2 - 100.
    let clock = s.limits().clock.expect("clock");
    assert_eq!(clock.remaining, Duration::from_secs(202));
    assert_eq!(clock.increment, Duration::from_secs(2));
    assert_eq!(clock.moves_to_go, None);
    silent(&mut s, "levelslonggame 7200 1 3600 2 1800");
    let clock = s.limits().clock.expect("clock");
    assert_eq!((clock.remaining, clock.moves_to_go), (Duration::from_secs(10_700), Some(2)));
    silent(&mut s, "move 28 19 1 23");
    silent(&mut s, "move 14 23 1 19");
    silent(&mut s, "move 37 32 0");
    silent(&mut s, "move 23 28 0");
    // White has played three moves: the third control, sudden death.
    let clock = s.limits().clock.expect("clock");
    assert_eq!((clock.remaining, clock.moves_to_go), (Duration::from_secs(12_500), None));
    // Without times from go, the engine's own thinking counts (none yet).
    s.reported = None;
    silent(&mut s, "levelsblitzgame 60 0");
    assert_eq!(s.limits().clock.expect("clock").remaining, Duration::from_secs(60));
    silent(&mut s, "levelsfixedtime 2.5");
    assert_eq!(s.limits(), Limits::movetime(Duration::from_millis(2500)));
    silent(&mut s, "levelsfixeddepth 7");
    assert_eq!(s.limits(), Limits::depth(7));
    silent(&mut s, "levelsinfiniteanalysis");
    assert_eq!(s.limits(), Limits::infinite());
}

#[test]
fn idle_closes_only_when_not_searching() {
    let (mut s, _rx) = session();
    silent(&mut s, "levelsinfiniteanalysis");
    silent(&mut s, "go");
    assert_eq!(s.on_idle(), Reply::none());
    silent(&mut s, "halt 0");
    // The idle clock starts when the session is idle: a command a moment ago, so not yet.
    assert_eq!(s.on_idle(), Reply::none());
    s.idle_since -= Duration::from_secs(61);
    let r = s.on_idle();
    assert!(r.quit && r.lines[0].starts_with("error no command for 60 seconds"), "{r:?}");
    // A search that just ended restarts the clock too.
    let (mut s, _rx) = session();
    silent(&mut s, "levelsinfiniteanalysis");
    silent(&mut s, "go");
    s.idle_since -= Duration::from_secs(120);
    assert_eq!(s.on_idle(), Reply::none(), "searching");
    s.thinking = None;
    assert_eq!(s.on_idle(), Reply::none(), "the search ended just now");
    // The end of input during an analysis ends the session at once, nothing left thinking (a game's move is
    // answered first: `the_end_of_input_during_a_games_move_answers_it_first`).
    let (mut s, _rx) = session();
    silent(&mut s, "enginemode 2");
    silent(&mut s, "go");
    assert!(LineSession::on_end_of_input(&mut s).quit);
    assert!(!s.is_thinking());
}

#[test]
fn info_lines_and_scores() {
    assert_eq!(score_number(Score::Cp(-35)), -35);
    assert_eq!(score_number(Score::Mate(7)), 9993);
    assert_eq!(score_number(Score::Mate(-4)), -9996);
    let g = Draughts::start();
    let a = g.parse_guide_move("32 28 0").expect("legal");
    let mut after = g.clone();
    after.make(a);
    let b = after.parse_guide_move("19 23 0").expect("legal");
    let info = Info {
        depth: 2,
        seldepth: 3,
        multipv: 1,
        score: Score::Cp(12),
        bound: ScoreBound::Exact,
        nodes: 345,
        nps: 1000,
        time_ms: 1250,
        pv: vec![a, b],
        currmove: None,
        currmovenumber: None,
        neval: 10,
        hashfull: 0,
    };
    assert_eq!(info_line(&g, &info), "searchInfo ply 2 score 12 nodes 345 neval 10 time 1.25 pv 32-28 19-23");
    let info = Info { pv: Vec::new(), currmove: Some(a), currmovenumber: Some(4), ..info };
    assert_eq!(info_line(&g, &info), "searchInfo ply 2 currmove 32-28 currmovenumber 4 nodes 345 neval 10 time 1.25");
}

#[test]
fn kibitz_guide_arguments() {
    let o = net::parse_args(&["-guide"]).expect("ok");
    assert_eq!((o.port, o.connect.as_deref(), o.bind.as_str()), (DEFAULT_PORT, None, "127.0.0.1"));
    let o = net::parse_args(&["-guide", "-port", "0", "-threads", "1", "-hash", "8", "-idle", "0"]).expect("ok");
    assert_eq!((o.port, o.config.hash_mb, o.config.idle), (0, 8, None));
    let o = net::parse_args(&["--connect", "localhost:27533"]).expect("ok");
    assert_eq!(o.connect.as_deref(), Some("localhost:27533"));
    assert!(net::parse_args(&["-port"]).is_err());
    assert!(net::parse_args(&["-port", "70000"]).is_err());
    assert!(net::parse_args(&["-frob", "1"]).is_err());
    assert!(net::parse_args(&["guide"]).is_err());
}
