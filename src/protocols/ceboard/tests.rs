//! The engine state machine against a recording host (the C ABI has its own test host in `tests/ceboard`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;

#[derive(Clone, Debug, PartialEq)]
enum Call {
    Move(String),
    Fatal(String),
    Finished(String, String),
    WhoPlays(String),
    SwitchSides,
    ShowThinking(bool),
    TimeControl(TimeControl),
    Feedback(Feedback),
    TimeInfo,
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Call>>>);

impl Recorder {
    fn calls(&self) -> Vec<Call> {
        self.0.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// Wait until some call satisfies `f` (or 20 s pass).
    fn wait_for(&self, f: impl Fn(&Call) -> bool) -> Option<Call> {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(c) = self.calls().into_iter().find(|c| f(c)) {
                return Some(c);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        None
    }

    /// Wait until some call made after the first `from` satisfies `f` (or 20 s pass); the calls after `from`.
    fn wait_after(&self, from: usize, f: impl Fn(&Call) -> bool) -> Vec<Call> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let later: Vec<Call> = self.calls().into_iter().skip(from).collect();
            if later.iter().any(&f) || Instant::now() >= deadline {
                return later;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn push(&self, c: Call) {
        if let Ok(mut v) = self.0.lock() {
            v.push(c);
        }
    }
}

impl Host for Recorder {
    fn engine_move(&mut self, mv: &str) {
        self.push(Call::Move(mv.to_string()));
    }
    fn fatal_error(&mut self, reason: &str) {
        self.push(Call::Fatal(reason.to_string()));
    }
    fn game_finished(&mut self, result: &str, comment: &str) {
        self.push(Call::Finished(result.to_string(), comment.to_string()));
    }
    fn who_plays(&mut self, name: &str) {
        self.push(Call::WhoPlays(name.to_string()));
    }
    fn switch_sides(&mut self) {
        self.push(Call::SwitchSides);
    }
    fn show_thinking(&mut self, show: bool) {
        self.push(Call::ShowThinking(show));
    }
    fn set_time_control(&mut self, tc: &TimeControl) {
        self.push(Call::TimeControl(*tc));
    }
    fn engine_feedback(&mut self, feedback: &Feedback) {
        self.push(Call::Feedback(feedback.clone()));
    }
    fn time_info(&mut self) -> (i32, i32, i32) {
        self.push(Call::TimeInfo);
        (3000, 3000, 0)
    }
}

fn engine(config: Config) -> (Engine, Recorder) {
    let rec = Recorder::default();
    let e = Engine::start(Box::new(rec.clone()), config).expect("thread");
    (e, rec)
}

fn small() -> Config {
    Config { seconds_per_move: 0, hash_mb: 4 }
}

#[test]
fn plays_white_from_the_start_and_answers_moves() {
    let (mut e, rec) = engine(small());
    e.send(Command::StartGame { play_black: false, analyze: false, fen: None });
    let first = rec.wait_for(|c| matches!(c, Call::Move(_))).expect("a first move");
    let Call::Move(first) = first else { unreachable!() };
    let mut g = Chess::start();
    let m = g.parse_move(&first).expect("legal UCI move");
    g.make(m);
    assert!(rec.calls().contains(&Call::WhoPlays("kibitz".into())));
    assert!(rec.calls().contains(&Call::TimeInfo));
    // The user answers in SAN; the engine replies.
    let reply = g.legal_moves()[0];
    let san = g.move_to_san(reply);
    g.make(reply);
    e.send(Command::SendMove(san));
    let second = rec.wait_for(|c| matches!(c, Call::Move(m) if *m != first)).expect("a second move");
    let Call::Move(second) = second else { unreachable!() };
    assert!(g.parse_move(&second).is_ok(), "{second} legal after the user's move");
    e.shutdown();
    assert!(!e.is_alive());
}

#[test]
fn bad_input_is_a_fatal_error_not_a_crash() {
    let (e, rec) = engine(small());
    e.send(Command::SendMove("e2e4".into()));
    assert!(rec.wait_for(|c| matches!(c, Call::Fatal(r) if r.contains("without a game"))).is_some());
    e.send(Command::StartGame { play_black: false, analyze: false, fen: Some("not a fen".into()) });
    assert!(rec.wait_for(|c| matches!(c, Call::Fatal(r) if r.starts_with("bad FEN"))).is_some());
    e.send(Command::StartGame { play_black: true, analyze: false, fen: None });
    e.send(Command::SendMove("e2e5".into()));
    assert!(rec.wait_for(|c| matches!(c, Call::Fatal(r) if r.contains("e2e5"))).is_some());
    assert!(e.is_alive());
}

#[test]
fn mate_ends_the_game_with_the_result() {
    let (e, rec) = engine(small());
    e.send(Command::StartGame {
        play_black: false,
        analyze: false,
        fen: Some("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1".into()),
    });
    assert_eq!(rec.wait_for(|c| matches!(c, Call::Move(_))), Some(Call::Move("a1a8".into())));
    assert_eq!(
        rec.wait_for(|c| matches!(c, Call::Finished(..))),
        Some(Call::Finished("1-0".into(), "Checkmate".into()))
    );
    // Stalemate, and a promotion written e7e8Q.
    e.send(Command::StartGame { play_black: false, analyze: false, fen: Some("7k/4P3/8/8/8/8/8/K7 w - - 0 1".into()) });
    assert!(rec.wait_for(|c| matches!(c, Call::Move(m) if m == "e7e8Q" || m == "e7e8R")).is_some());
}

#[test]
fn analysis_feedback_and_move_now() {
    let (e, rec) = engine(small());
    e.send(Command::GetMessages(true));
    e.send(Command::StartGame { play_black: false, analyze: true, fen: None });
    let fb = rec.wait_for(|c| matches!(c, Call::Feedback(f) if f.depth >= 3)).expect("feedback");
    let Call::Feedback(f) = fb else { unreachable!() };
    assert!(f.total_nodes > 0 && f.time_ms >= 0 && f.nodes_sec >= 0, "{f:?}");
    assert!(f.eval.starts_with('+') || f.eval.starts_with('-'), "{f:?}");
    let mut g = Chess::start();
    assert!(play_san_line(&mut g, &f.pv), "{f:?}");
    assert!(rec.calls().contains(&Call::ShowThinking(true)));
    // Move now while analysing: the best move is played and analysis goes on.
    e.send(Command::MoveNow);
    assert!(rec.wait_for(|c| matches!(c, Call::Move(_))).is_some());
    // The user's turn in a game: MoveNow switches sides.
    e.send(Command::StartGame { play_black: true, analyze: false, fen: None });
    e.send(Command::MoveNow);
    assert!(rec.wait_for(|c| *c == Call::SwitchSides).is_some());
}

fn play_san_line(g: &mut Chess, line: &str) -> bool {
    for san in line.split_whitespace() {
        match g.parse_san(san) {
            Ok(m) => g.make(m),
            Err(_) => return false,
        }
    }
    !line.is_empty()
}

#[test]
fn eval_texts() {
    assert_eq!(eval_text(Score::Cp(35), true), "+0.35");
    assert_eq!(eval_text(Score::Cp(35), false), "-0.35");
    assert_eq!(eval_text(Score::Cp(-250), true), "-2.50");
    assert_eq!(eval_text(Score::Mate(5), true), "#3");
    assert_eq!(eval_text(Score::Mate(-4), true), "-#2");
    assert_eq!(eval_text(Score::Mate(1), false), "-#1");
}

/// A session run by the test itself: its searches run on its pool as usual, and what they send the engine
/// thread lands in the returned queue, which the test reads and hands back to the session when it chooses.
fn held_session(rec: &Recorder) -> (Session, Receiver<Msg>) {
    let (tx, rx) = sync_channel(QUEUE);
    (Session::new(Box::new(rec.clone()), small(), tx), rx)
}

/// Keep everything the search sends until its answer (inclusive): the engine thread, busy elsewhere (in a
/// slow host callback, say), has not read its queue while the search ran to its end.
fn hold_until_done(rx: &Receiver<Msg>) -> Vec<Msg> {
    let mut held = Vec::new();
    loop {
        let m = rx.recv_timeout(Duration::from_secs(60)).expect("the search answers");
        let done = matches!(m, Msg::Search(_, Event::Done(_)));
        held.push(m);
        if done {
            return held;
        }
    }
}

/// Let the session's thread loop read `held`, then `more`, then stop.
fn release(session: &mut Session, held: Vec<Msg>, more: Vec<Msg>) {
    let (tx, rx) = sync_channel(held.len() + more.len() + 1);
    for m in held.into_iter().chain(more).chain([Msg::Command(Command::Quit)]) {
        tx.send(m).expect("room for every message");
    }
    session.run(rx);
}

#[test]
fn progress_reports_waiting_when_the_move_is_ready_are_dropped() {
    // A host slow to take EngineFeedback keeps the engine thread away from its queue while the search runs;
    // when the engine thread comes back the move is ready, and the reports still waiting are stale: none of
    // them may go to the host before the move (each would cost the host's slow callback).
    let rec = Recorder::default();
    let (mut session, rx) = held_session(&rec);
    session.on_command(Command::GetMessages(true));
    session.on_command(Command::StartGame { play_black: false, analyze: false, fen: None });
    let held = hold_until_done(&rx);
    assert!(held.len() >= 2, "some progress was waiting besides the answer");
    release(&mut session, held, vec![]);
    let calls = rec.calls();
    let moved = calls.iter().position(|c| matches!(c, Call::Move(_))).expect("the move");
    let stale = calls[..moved].iter().filter(|c| matches!(c, Call::Feedback(_))).count();
    assert_eq!(stale, 0, "reports delivered once the move was ready: {calls:?}");
}

/// Found by an audit: an analysis that ends by itself (a mate found to the end) dropped its last report with
/// its answer; when the engine thread read its queue only after the answer (a quick search, a warm table), the
/// host got no report at all and showed nothing for the position.
#[test]
fn an_analysis_that_ends_by_itself_reports_its_line() {
    let rec = Recorder::default();
    let (mut session, rx) = held_session(&rec);
    session.on_command(Command::GetMessages(true));
    let fen = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1";
    session.on_command(Command::StartGame { play_black: false, analyze: true, fen: Some(fen.into()) });
    let held = hold_until_done(&rx);
    release(&mut session, held, vec![]);
    let reports: Vec<Feedback> = rec
        .calls()
        .into_iter()
        .filter_map(|c| match c {
            Call::Feedback(f) => Some(f),
            _ => None,
        })
        .collect();
    let last = reports.last().unwrap_or_else(|| panic!("no report: {:?}", rec.calls()));
    assert_eq!((last.eval.as_str(), last.pv.as_str()), ("#1", "Ra8#"), "{last:?}");
    assert!(last.depth >= 1 && last.total_nodes > 0, "{last:?}");
    assert!(!rec.calls().iter().any(|c| matches!(c, Call::Move(_))), "an analysis plays no move");
}

/// Found by an audit: a move sent on the engine's turn was played for the engine's side, and the engine then
/// waited for the user, who waited for it. The user took that side over: the engine switches sides and plays.
#[test]
fn a_move_for_the_engines_side_switches_sides() {
    // The engine plays White and thinks a second (no clock): the user's e2e4 comes while it thinks.
    let (e, rec) = engine(small());
    e.send(Command::StartGame { play_black: false, analyze: false, fen: None });
    e.send(Command::SendMove("e2e4".into()));
    assert!(rec.wait_for(|c| *c == Call::SwitchSides).is_some(), "{:?}", rec.calls());
    let Some(Call::Move(reply)) = rec.wait_for(|c| matches!(c, Call::Move(_))) else {
        panic!("a move for Black after the switch: {:?}", rec.calls())
    };
    let mut g = Chess::start();
    let e4 = g.parse_move("e2e4").expect("legal");
    g.make(e4);
    assert!(g.parse_move(&reply).is_ok(), "{reply} is Black's");
    let calls = rec.calls();
    let switched = calls.iter().position(|c| *c == Call::SwitchSides).expect("switched");
    let moved = calls.iter().position(|c| matches!(c, Call::Move(_))).expect("moved");
    assert!(switched < moved, "{calls:?}");
}

#[test]
fn a_report_starts_only_when_the_host_can_take_it_before_the_move_is_due() {
    let now = Instant::now();
    let ms = Duration::from_millis;
    // Analysing: no deadline, every report goes.
    assert!(report_fits(now, None, ms(500)));
    // A host taking 100 ms gets a report 150 ms before the move is due, not 50 ms before, nor after.
    assert!(report_fits(now, Some(now + ms(150)), ms(100)));
    assert!(!report_fits(now, Some(now + ms(50)), ms(100)));
    assert!(!report_fits(now + ms(10), Some(now), Duration::ZERO));
    // After MoveNow the deadline is now: nothing more.
    assert!(!report_fits(now, Some(now), Duration::ZERO));
    // The expected cost follows a slower call at once and fades by a quarter a faster call.
    assert_eq!(next_report_cost(ms(10), ms(100)), ms(100));
    assert_eq!(next_report_cost(ms(100), ms(1)), ms(75));
    assert_eq!(next_report_cost(ms(100), ms(90)), ms(90));
}

#[test]
fn only_the_newest_progress_report_waits_and_none_after_the_answer() {
    // The search's side alone: however many reports come while the engine thread is busy, one wake-up is
    // queued and the newest report is the one kept; the answer drops it.
    let (tx, rx) = sync_channel(QUEUE);
    let progress = Arc::new(Progress::default());
    let mut sink = search_sink(7, tx, Arc::clone(&progress));
    let report = |depth: u32, currmove: Option<Move>| Info {
        depth,
        seldepth: depth,
        multipv: 1,
        score: Score::Cp(10),
        bound: ScoreBound::Exact,
        nodes: 1,
        nps: 1,
        time_ms: 0,
        pv: Vec::new(),
        currmove,
        currmovenumber: None,
        neval: 0,
        hashfull: 0,
    };
    let game = Chess::start();
    for depth in 1..=20 {
        sink(Event::Info(report(depth, None)));
    }
    // A report on the move being searched is not shown and does not replace the line.
    sink(Event::Info(report(21, Some(game.legal_moves()[0]))));
    let queued: Vec<Msg> = rx.try_iter().collect();
    assert!(matches!(queued[..], [Msg::Progress(7)]), "one wake-up, not {}", queued.len());
    assert_eq!(progress.lock().latest.as_ref().map(|i| i.depth), Some(20));
    sink(Event::Done(crate::search::Done {
        best: None,
        ponder: None,
        lines: Vec::new(),
        depth: 20,
        seldepth: 20,
        nodes: 1,
        nps: 1,
        time_ms: 0,
        neval: 0,
        game_end: None,
    }));
    assert!(progress.lock().latest.is_none(), "the answer drops the waiting report");
    sink(Event::Info(report(22, None)));
    assert!(progress.lock().latest.is_none(), "no report is kept after the answer");
    assert!(matches!(rx.try_iter().collect::<Vec<_>>()[..], [Msg::Search(7, Event::Done(_))]));
}

#[test]
fn move_now_sent_while_the_move_is_on_its_way_does_nothing() {
    // The search is over and its move waits in the engine's queue when the host asks for a move now: the
    // engine delivers its move and nothing else (it does not switch sides and play the user's move too).
    let rec = Recorder::default();
    let (mut session, rx) = held_session(&rec);
    session.on_command(Command::StartGame { play_black: false, analyze: false, fen: None });
    let held = hold_until_done(&rx);
    release(&mut session, held, vec![Msg::Command(Command::MoveNow)]);
    let calls = rec.calls();
    let moved = calls.iter().position(|c| matches!(c, Call::Move(_))).expect("the move");
    // After its move the engine neither switches sides nor asks the clock for a new search.
    assert_eq!(calls[moved + 1..], [], "{calls:?}");
}

#[test]
fn move_now_after_a_new_game_behind_the_move_still_counts() {
    // The host starts a new game (the engine now Black, White to move) before the engine's last move was
    // delivered, then asks for a move now: that MoveNow is about the new game, so the engine switches sides.
    let rec = Recorder::default();
    let (mut session, rx) = held_session(&rec);
    session.on_command(Command::StartGame { play_black: false, analyze: false, fen: None });
    let held = hold_until_done(&rx);
    let new_game = Command::StartGame { play_black: true, analyze: false, fen: None };
    release(&mut session, held, vec![Msg::Command(new_game), Msg::Command(Command::MoveNow)]);
    let calls = rec.calls();
    let moved = calls.iter().position(|c| matches!(c, Call::Move(_))).expect("the move");
    assert!(calls[moved..].contains(&Call::SwitchSides), "{calls:?}");
}

#[test]
fn move_now_on_the_users_turn_still_switches_sides_after_the_engine_moved() {
    // The MoveNow comes after the engine's move was delivered: the user's turn, so the engine takes it.
    let (e, rec) = engine(small());
    e.send(Command::StartGame { play_black: false, analyze: false, fen: None });
    let Some(Call::Move(first)) = rec.wait_for(|c| matches!(c, Call::Move(_))) else { panic!("a first move") };
    // The recorder sees the move while EngineMove runs; the user's turn starts when it has returned, which
    // a command answered after it marks.
    e.send(Command::GetMessages(false));
    assert!(rec.wait_for(|c| *c == Call::ShowThinking(false)).is_some());
    e.send(Command::MoveNow);
    assert!(rec.wait_for(|c| *c == Call::SwitchSides).is_some());
    assert!(rec.wait_for(|c| matches!(c, Call::Move(m) if *m != first)).is_some(), "a move for the other side");
}

#[test]
fn set_position_to_a_finished_position_reports_the_end() {
    let (e, rec) = engine(small());
    let ends = [
        ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", None),
        ("R5k1/5ppp/8/8/8/8/8/6K1 b - - 1 1", Some(("1-0", "Checkmate"))),
        ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", Some(("1/2-1/2", "Stalemate"))),
        ("4k3/8/8/8/8/8/8/R3K3 w - - 100 80", Some(("1/2-1/2", "50-move rule"))),
        ("8/8/4k3/8/8/3KN3/8/8 w - - 0 1", Some(("1/2-1/2", "Insufficient material"))),
    ];
    for analyze in [false, true] {
        // The engine plays Black: with White to move it waits, so nothing but the end is reported.
        e.send(Command::StartGame { play_black: true, analyze, fen: Some(ends[0].0.into()) });
        for (fen, end) in ends {
            let before = rec.calls().len();
            e.send(Command::SetPosition(fen.into()));
            // A command answered with a FatalError whatever the position marks where SetPosition was handled.
            e.send(Command::SendMove("not a move".into()));
            let after = rec.wait_after(before, |c| matches!(c, Call::Fatal(_)));
            assert!(after.iter().any(|c| matches!(c, Call::Fatal(_))), "{fen}: {after:?}");
            let finished: Vec<&Call> = after.iter().filter(|c| matches!(c, Call::Finished(..))).collect();
            match end {
                Some((result, comment)) => {
                    assert_eq!(finished, [&Call::Finished(result.into(), comment.into())], "{fen}: {after:?}")
                }
                None => assert!(finished.is_empty(), "{fen}: {after:?}"),
            }
        }
    }
}
