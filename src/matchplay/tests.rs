use super::*;
use crate::games::GameKind;

/// A player that fails, or answers the move its opponent just played (which is not legal again).
struct Broken {
    illegal: bool,
}

impl<G: Game> Player<G> for Broken {
    fn start_game(&mut self) -> Result<(), String> {
        Ok(())
    }

    fn choose(&mut self, _: &G, moves: &[G::Move], _: &G, _: &Limits, _: &Arc<AtomicBool>) -> Result<G::Move, String> {
        match (self.illegal, moves.last()) {
            (true, Some(&m)) => Ok(m),
            _ => Err("it broke".into()),
        }
    }

    fn end_game(&mut self) {}
}

/// A player that plays the moves of a script in turn, read in the position it is asked about.
struct Scripted {
    moves: Vec<&'static str>,
    next: usize,
}

impl<G: Game> Player<G> for Scripted {
    fn start_game(&mut self) -> Result<(), String> {
        Ok(())
    }

    fn choose(&mut self, _: &G, _: &[G::Move], now: &G, _: &Limits, _: &Arc<AtomicBool>) -> Result<G::Move, String> {
        let text = self.moves.get(self.next).ok_or("the script is over")?;
        self.next += 1;
        now.parse_move(text).map_err(|e| e.message)
    }

    fn end_game(&mut self) {}
}

fn kibitz<G: Game>() -> Box<dyn Player<G>> {
    PlayerSpec::Kibitz(KibitzSettings { threads: 1, hash_mb: 1 }).player::<G>().unwrap()
}

/// Every game: random openings are replayed by their seed and leave the game going; a short game between two
/// kibitz players ends by the rules or the ply cap; its record reads back move for move.
fn a_short_game<G: Game>() {
    let openings = random_openings::<G>(3, 7).unwrap();
    let again = random_openings::<G>(3, 7).unwrap();
    for (o, p) in openings.iter().zip(&again) {
        assert!((4..=8).contains(&o.moves.len()));
        assert_eq!(o.moves, p.moves, "{}: a seed replays its openings", G::NAME);
        assert!(o.position().outcome().is_none());
    }
    let (mut a, mut b) = (kibitz::<G>(), kibitz::<G>());
    let abort = Arc::new(AtomicBool::new(false));
    let game = play_game(
        3,
        1,
        &openings[1],
        Side::Second,
        [a.as_mut(), b.as_mut()],
        ["B", "A"],
        &Limits::depth(1),
        14,
        &abort,
    )
    .expect("not aborted");
    assert_eq!(game.opening_plies, openings[1].moves.len());
    assert!(game.moves.len() <= 14);
    let mut end = game.root.clone();
    end.adopt_match_rules();
    for &m in &game.moves {
        end.make(m);
    }
    match end.outcome() {
        Some(rule) => assert_eq!(game.finish.reason, rule.reason, "{}", G::NAME),
        None => assert_eq!((game.finish.reason.as_str(), game.finish.outcome), ("ply cap (14)", Outcome::Draw)),
    }
    let text = game.record_text("A", "B");
    assert!(text.contains("kibitz match: A vs B"), "{}: {text}", G::NAME);
    if !G::RECORD_FORMATS.is_empty() {
        let records = G::parse_records(&text, None, &mut crate::game::RecordBudget::new(10_000, 1_000_000)).unwrap();
        let record = records[0].as_ref().unwrap_or_else(|e| panic!("{}: {e}\n{text}", G::NAME));
        assert_eq!(record.moves, game.moves, "{}: {text}", G::NAME);
    }

    // A failing player loses, the reason recorded; so does one answering an illegal move.
    for illegal in [false, true] {
        let mut broken = Broken { illegal };
        let mut a = kibitz::<G>();
        let opening = &openings[0];
        let broken_side = opening.position().side_to_move();
        let players: [&mut dyn Player<G>; 2] =
            if broken_side == Side::First { [&mut broken, a.as_mut()] } else { [a.as_mut(), &mut broken] };
        let names = if broken_side == Side::First { ["broken", "kibitz"] } else { ["kibitz", "broken"] };
        let game = play_game(0, 0, opening, Side::First, players, names, &Limits::depth(1), 100, &abort).unwrap();
        assert_eq!(game.finish.outcome, Outcome::Win(broken_side.opponent()), "{}", G::NAME);
        let expected = if illegal { "broken played an illegal move" } else { "broken failed: it broke" };
        assert!(game.finish.reason.starts_with(expected), "{}: {}", G::NAME, game.finish.reason);
        assert_eq!(game.moves.len(), opening.moves.len());
    }

    // An aborted game is not reported.
    abort.store(true, Ordering::Relaxed);
    let (mut a, mut b) = (kibitz::<G>(), kibitz::<G>());
    assert!(
        play_game(0, 0, &openings[0], Side::First, [a.as_mut(), b.as_mut()], ["A", "B"], &Limits::depth(1), 50, &abort)
            .is_none()
    );
}

/// A match plays Hive with the threefold repetition draw (off in Hive's defaults), as engines such as nokamute
/// do: two Queens stepping back and forth draw at the third repetition instead of playing on to the ply cap.
#[test]
fn a_hive_match_draws_a_threefold_repetition() {
    use crate::games::hive::Hive;
    let root = Hive::start();
    let mut opening = Opening { root: root.clone(), moves: Vec::new() };
    let mut g = root.clone();
    for text in ["wS1", "bS1 wS1-", "wQ -wS1", "bQ bS1-"] {
        let m = g.parse_move(text).unwrap();
        g.make(m);
        opening.moves.push(m);
    }
    let mut white = Scripted { moves: ["wQ \\wS1", "wQ -wS1"].repeat(4), next: 0 };
    let mut black = Scripted { moves: ["bQ bS1/", "bQ bS1-"].repeat(4), next: 0 };
    let abort = Arc::new(AtomicBool::new(false));
    let game =
        play_game(0, 0, &opening, Side::First, [&mut white, &mut black], ["W", "B"], &Limits::depth(1), 100, &abort)
            .expect("not aborted");
    assert_eq!((game.finish.outcome, game.finish.reason.as_str()), (Outcome::Draw, "threefold repetition"));
    // The position after ply 4 comes back after plies 8 and 12: the third time ends the game, as nokamute
    // (which hashes no turn number) counts it. Both Queens are placed at ply 4, so the turn no longer changes
    // what may be played (until session 94 it was counted below ply 8, and the draw came at ply 16).
    assert_eq!(game.moves.len(), 12);
    // Hive's own defaults are unchanged: the same moves are no draw there.
    let mut plain = root;
    for &m in &game.moves {
        plain.make(m);
    }
    assert!(plain.outcome().is_none());
}

#[test]
fn every_game_plays_adjudicates_and_records() {
    for &kind in GameKind::ALL {
        crate::with_game!(kind, G => a_short_game::<G>());
    }
}

fn a_match<G: Game>() {
    let plan = MatchPlan::<G> {
        a: PlayerSpec::Kibitz(KibitzSettings { threads: 1, hash_mb: 1 }),
        b: PlayerSpec::Kibitz(KibitzSettings { threads: 1, hash_mb: 1 }),
        a_name: "A".into(),
        b_name: "B".into(),
        games: 5,
        openings: random_openings::<G>(3, 1).unwrap(),
        limits: Limits::depth(1),
        max_plies: 10,
        concurrency: 2,
    };
    let mut seen = Vec::new();
    let n = run_match(&plan, |g| {
        seen.push((g.index, g.opening, g.a_side));
        true
    })
    .unwrap();
    assert_eq!(n, 5);
    seen.sort_by_key(|s| s.0);
    let expected: Vec<_> = (0..5).map(|i| (i, i / 2, if i % 2 == 0 { Side::First } else { Side::Second })).collect();
    assert_eq!(seen, expected, "{}: each opening twice, A on both sides", G::NAME);

    // Stopping after the first game reports no other.
    let n = run_match(&plan, |_| false).unwrap();
    assert_eq!(n, 1);
}

#[test]
fn a_match_plays_every_game_once_on_several_threads() {
    a_match::<crate::games::checkers::Checkers>();
}

fn openings_file<G: Game>() {
    let mut g = G::start();
    let mut legal = Vec::new();
    g.generate_moves(&mut legal);
    let first = g.format_move(legal[0]);
    g.make(legal[0]);
    let position = g.format_position(None).unwrap();
    let text = format!("# a comment\n\n{position}\n|{first}\n{position}|\n");
    let openings = parse_openings::<G>(&text).unwrap();
    assert_eq!(openings.len(), 3);
    assert_eq!(openings[1].moves, vec![legal[0]]);
    for o in &openings {
        assert_eq!(o.position().position_key(), g.position_key(), "{}", G::NAME);
    }
    let e = parse_openings::<G>(&format!("\n|{first} {first} {first}\n")).err().expect("refused");
    assert!(e.starts_with("line 2: move 2"), "{}: {e}", G::NAME);
    let e = parse_openings::<G>("not a position at all").err().expect("refused");
    assert!(e.starts_with("line 1: bad"), "{}: {e}", G::NAME);
}

#[test]
fn openings_files_are_read_and_mistakes_named() {
    for &kind in GameKind::ALL {
        crate::with_game!(kind, G => openings_file::<G>());
    }
}

/// Random draughts plies often hang a man; balanced openings are drawn again until a short search finds the
/// game even, and they are still replayed by their seed.
#[test]
fn balanced_openings_leave_neither_side_ahead() {
    use crate::game::Score;
    use crate::games::draughts::Draughts;
    use crate::search::{SearchOptions, TranspositionTable, search};
    let judge = |g: &Draughts| {
        let tt = Arc::new(TranspositionTable::new(16));
        let stop = Arc::new(AtomicBool::new(false));
        let done = search(g, &Limits::nodes(BALANCE_NODES), &SearchOptions::default(), &tt, &stop, &mut |_| {});
        match done.lines.first().map(|l| l.score) {
            Some(Score::Cp(cp)) => cp,
            other => panic!("{other:?}"),
        }
    };
    let plain = random_openings::<Draughts>(12, 23).unwrap();
    let lopsided = plain.iter().filter(|o| judge(&o.position()).abs() > 150).count();
    assert!(lopsided > 0, "seed 23's plain random openings include a lopsided one");
    let balanced = balanced_random_openings::<Draughts>(12, 23, 60).unwrap();
    assert_eq!(balanced.len(), 12);
    for o in &balanced {
        assert!((4..=8).contains(&o.moves.len()));
        let cp = judge(&o.position());
        assert!(cp.abs() <= 60, "{}: {cp}", o.position().to_fen());
    }
    let again = balanced_random_openings::<Draughts>(12, 23, 60).unwrap();
    assert!(balanced.iter().zip(&again).all(|(a, b)| a.moves == b.moves), "a seed replays its balanced openings");
}
