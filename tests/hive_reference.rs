//! Hive: kibitz's move generator (`src/games/hive/board.rs`, through `kibitz::games::hive::Hive`) against an
//! independent rules model written for clarity (`tests/reference/hive_rules.rs`), in every position of
//! seeded random games of all eight game types.
//!
//! In each position both sides must agree on: the set of legal moves as (piece, destination cell) pairs
//! (kibitz's MoveStrings are read back in the model's coordinates; a move listed twice is an error), the
//! pass (only when nothing else is legal), whether the game is over and who won, the side to move and turn,
//! the stunned piece, and where every piece stands. Every MoveString the notation allows for the move played
//! (any neighbour of the destination as reference) must read back as that move in kibitz. Threefold
//! repetition is off by default in kibitz, as in the printed rules: repeated positions must not end a game.
//!
//! The normal test compares 30,000 positions (a few seconds) and counts what they contained, failing if a rule
//! it is meant to exercise did not occur; `many_random_games` (ignored) plays `KIBITZ_DIFF_POSITIONS`
//! (default one million) and prints the figures.

#[path = "reference/hive_rules.rs"]
mod rules;

use std::collections::{BTreeMap, BTreeSet};

use kibitz::game::{Game, Outcome as GameOutcome, Side};
use kibitz::games::hive::{GameType, Hive, Move, piece_name};
use rules::{Action, Bug, Cell, Colour, Outcome, Piece, Position, Rule, neighbours};

const GAME_TYPES: [&str; 8] = ["Base", "Base+M", "Base+L", "Base+P", "Base+ML", "Base+MP", "Base+LP", "Base+MLP"];

/// SplitMix64: small, seeded, reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `percent` / 100.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// How a random game chooses its moves: percentages of the plies that prefer a Pillbug throw, a move onto
/// the hive (stacks, and the height gates they make), a move next to the enemy Queen (so that games end) or
/// next to either Queen (to see both surrounded at once), taking back one's previous move (repetitions), or
/// moving a piece in play rather than placing one.
#[derive(Clone, Copy, Debug)]
struct Style {
    throw: u64,
    climb: u64,
    attack: u64,
    crowd: u64,
    back: u64,
    movement: u64,
    max_plies: u32,
}

const STYLES: [Style; 6] = [
    Style { throw: 0, climb: 0, attack: 0, crowd: 0, back: 0, movement: 0, max_plies: 120 },
    Style { throw: 30, climb: 0, attack: 20, crowd: 0, back: 0, movement: 60, max_plies: 200 },
    Style { throw: 10, climb: 0, attack: 50, crowd: 0, back: 0, movement: 90, max_plies: 200 },
    Style { throw: 40, climb: 50, attack: 0, crowd: 0, back: 0, movement: 95, max_plies: 300 },
    Style { throw: 5, climb: 10, attack: 0, crowd: 60, back: 0, movement: 80, max_plies: 200 },
    Style { throw: 10, climb: 10, attack: 0, crowd: 0, back: 60, movement: 90, max_plies: 160 },
];

/// What the positions compared contained, so that a test can insist on seeing each rule at work.
#[derive(Default, Debug)]
struct Coverage {
    positions: u64,
    games: u64,
    moves_compared: u64,
    move_strings_read: u64,
    white_wins: u64,
    black_wins: u64,
    draws: u64,
    passes: u64,
    with_stack: u64,
    with_throw: u64,
    with_throw_gated: u64,
    throws_played: u64,
    with_ladybug_walk: u64,
    with_mosquito_walk: u64,
    with_spider_walk: u64,
    own_piece_stunned: u64,
    third_repetitions: u64,
    differences: u64,
}

/// A game played on both boards at once.
struct Pair {
    kibitz: Hive,
    model: Position,
    /// kibitz's cell index of the model's `(0, 0)`, known once the first piece is down.
    origin: Option<u16>,
}

fn kibitz_cell(origin: u16, c: Cell) -> u16 {
    (origin as i32 + c.1 * 32 + c.0).rem_euclid(1024) as u16
}

impl Pair {
    fn new(game_type: &str) -> Pair {
        let kind = GameType::parse(game_type).unwrap_or_else(|| panic!("kibitz reads no game type {game_type}"));
        let model = Position::new(game_type).unwrap_or_else(|| panic!("the model reads no game type {game_type}"));
        Pair { kibitz: Hive::new(kind), model, origin: None }
    }

    fn context(&self) -> String {
        format!("in {}", self.kibitz.game_string())
    }

    /// Compare everything in the current position; the legal moves as the model's actions, with kibitz's
    /// move for each.
    fn compare(&self) -> Result<BTreeMap<Action, Move>, String> {
        let (k, m) = (&self.kibitz, &self.model);
        if k.repetition_rule() {
            return Err("the repetition rule is on by default".into());
        }
        let side = if m.to_move() == Colour::White { Side::First } else { Side::Second };
        if k.side_to_move() != side {
            return Err(format!("side to move: kibitz {:?}, model {:?}", k.side_to_move(), m.to_move()));
        }
        let turn = format!("{}[{}]", if m.to_move() == Colour::White { "White" } else { "Black" }, m.turn());
        if k.turn_string() != turn {
            return Err(format!("turn: kibitz {}, model {turn}", k.turn_string()));
        }
        let stunned = m.last_moved.map(Piece::name);
        if k.last_moved_piece() != stunned {
            return Err(format!("last moved piece: kibitz {:?}, model {stunned:?}", k.last_moved_piece()));
        }
        self.compare_pieces()?;
        let expected = match m.outcome() {
            None => None,
            Some(Outcome::Draw) => Some(GameOutcome::Draw),
            Some(Outcome::WhiteWins) => Some(GameOutcome::Win(Side::First)),
            Some(Outcome::BlackWins) => Some(GameOutcome::Win(Side::Second)),
        };
        let end = k.rule_end(0).map(|e| e.outcome);
        if end != expected || k.is_over() != expected.is_some() {
            return Err(format!("game end: kibitz {end:?} (over: {}), model {expected:?}", k.is_over()));
        }
        let state = match m.outcome() {
            None if m.plies == 0 => "NotStarted",
            None => "InProgress",
            Some(Outcome::Draw) => "Draw",
            Some(Outcome::WhiteWins) => "WhiteWins",
            Some(Outcome::BlackWins) => "BlackWins",
        };
        if k.state_string() != state {
            return Err(format!("state: kibitz {}, model {state}", k.state_string()));
        }

        let listed = k.legal_moves();
        let mut generated = Vec::new();
        k.generate_moves(&mut generated);
        let as_set = |v: &[Move]| v.iter().map(|m| (m.piece, m.to)).collect::<BTreeSet<_>>();
        if as_set(&listed) != as_set(&generated) || k.count_moves() != listed.len() as u64 {
            return Err(format!(
                "legal_moves ({}), generate_moves ({}) and count_moves ({}) differ",
                listed.len(),
                generated.len(),
                k.count_moves()
            ));
        }
        let mut moves = BTreeMap::new();
        for &mv in &listed {
            let text = k.move_string(mv);
            let action = m.parse_move_string(&text).map_err(|e| format!("kibitz's move {text}: {e}"))?;
            if moves.insert(action, mv).is_some() {
                return Err(format!("kibitz lists {text} ({action:?}) twice"));
            }
        }
        let reference = m.legal_moves();
        let theirs: BTreeSet<Action> = moves.keys().copied().collect();
        if theirs != reference {
            let only_kibitz: Vec<String> = theirs.difference(&reference).map(|a| k.move_string(moves[a])).collect();
            let only_model: Vec<String> = reference
                .difference(&theirs)
                .map(|&a| m.move_strings(a).first().cloned().unwrap_or_else(|| format!("{a:?}")))
                .collect();
            return Err(format!(
                "legal moves differ ({} in kibitz, {} in the model): only kibitz {only_kibitz:?}, only the model \
                 {only_model:?}",
                theirs.len(),
                reference.len()
            ));
        }
        Ok(moves)
    }

    /// Every piece stands on the same cell at the same level on both boards.
    fn compare_pieces(&self) -> Result<(), String> {
        let Some(origin) = self.origin else { return Ok(()) };
        let board = self.kibitz.board();
        for p in 0..28u8 {
            let name = piece_name(p);
            let piece = Piece::parse(&name).ok_or_else(|| format!("kibitz's piece name {name}"))?;
            let theirs = (board.pos(p) < 1024).then(|| (board.pos(p), board.level(p) as usize));
            let ours = self.model.find(piece).map(|(c, level)| (kibitz_cell(origin, c), level));
            if theirs != ours {
                return Err(format!("{name} stands at {theirs:?} in kibitz, at {ours:?} in the model"));
            }
        }
        Ok(())
    }

    /// Play `action` (kibitz's `mv`) on both boards, after checking that every MoveString of it reads back
    /// as `mv` in kibitz. Returns how many MoveStrings were read.
    fn play(&mut self, action: Action, mv: Move) -> Result<u64, String> {
        let texts = self.model.move_strings(action);
        for text in &texts {
            match self.kibitz.parse_move(text) {
                Ok(read) if read == mv => {}
                Ok(read) => {
                    return Err(format!("{text} reads as {} in kibitz", self.kibitz.move_string(read)));
                }
                Err(e) => return Err(format!("kibitz refuses {text} ({e})")),
            }
        }
        self.kibitz.make(mv);
        self.model.play(action);
        if self.origin.is_none()
            && let Action::To(piece, (0, 0)) = action
        {
            let p = (0..28u8).find(|&p| piece_name(p) == piece.name()).ok_or("no such kibitz piece")?;
            self.origin = Some(self.kibitz.board().pos(p));
        }
        Ok(texts.len() as u64)
    }
}

/// Choose the next move by the game's style.
fn choose(rng: &mut Rng, style: Style, model: &Position, explained: &[(Action, Rule)], back: Option<Action>) -> Action {
    if let Some(back) = back
        && explained.iter().any(|&(a, _)| a == back)
        && rng.chance(style.back)
    {
        return back;
    }
    let throws: Vec<Action> = explained.iter().filter(|(_, r)| *r == Rule::Throw).map(|(a, _)| *a).collect();
    let walks: Vec<Action> =
        explained.iter().filter(|(_, r)| matches!(r, Rule::Walk(_) | Rule::Throw)).map(|(a, _)| *a).collect();
    let climbs: Vec<Action> = explained
        .iter()
        .filter_map(|&(a, _)| match a {
            Action::To(_, to) if model.height(to) > 0 => Some(a),
            _ => None,
        })
        .collect();
    // Moves that end next to a Queen of these colours (not the Queen itself).
    let next_to_queen = |colours: &[Colour]| -> Vec<Action> {
        let queens: Vec<(Piece, Cell)> = colours
            .iter()
            .map(|&colour| Piece { colour, bug: Bug::Queen, number: 0 })
            .filter_map(|q| model.find(q).map(|(c, _)| (q, c)))
            .collect();
        explained
            .iter()
            .filter_map(|&(a, _)| match a {
                Action::To(p, to) if queens.iter().any(|&(q, c)| p != q && neighbours(c).contains(&to)) => Some(a),
                _ => None,
            })
            .collect()
    };
    let attacks = next_to_queen(&[model.to_move().other()]);
    let crowding = next_to_queen(&[Colour::White, Colour::Black]);
    if !throws.is_empty() && rng.chance(style.throw) {
        return rng.pick(&throws);
    }
    if !climbs.is_empty() && rng.chance(style.climb) {
        return rng.pick(&climbs);
    }
    if !attacks.is_empty() && rng.chance(style.attack) {
        return rng.pick(&attacks);
    }
    if !crowding.is_empty() && rng.chance(style.crowd) {
        // Fill the cells around both Queens, but end the game only by surrounding both at once (a draw).
        let outcome_after = |a: Action| {
            let mut after = model.clone();
            after.play(a);
            after.outcome()
        };
        let draws: Vec<Action> =
            crowding.iter().copied().filter(|&a| outcome_after(a) == Some(Outcome::Draw)).collect();
        if !draws.is_empty() {
            return rng.pick(&draws);
        }
        let quiet: Vec<Action> = crowding.iter().copied().filter(|&a| outcome_after(a).is_none()).collect();
        if !quiet.is_empty() {
            return rng.pick(&quiet);
        }
    }
    if !walks.is_empty() && rng.chance(style.movement) {
        return rng.pick(&walks);
    }
    rng.pick(&explained.iter().map(|(a, _)| *a).collect::<Vec<_>>())
}

/// Play one random game on both boards, comparing every position. A difference ends the game (returned).
fn play_game(game_type: &str, style: Style, seed: u64, cov: &mut Coverage) -> Result<(), String> {
    let mut rng = Rng(seed);
    let mut pair = Pair::new(game_type);
    cov.games += 1;
    let mut seen = std::collections::HashMap::new();
    // Each ply's move taken back (the piece to the cell it left), while it was a move of a piece in play.
    let mut takebacks: Vec<Option<Action>> = Vec::new();
    loop {
        let moves = pair.compare().map_err(|e| format!("{e} {}", pair.context()))?;
        cov.positions += 1;
        cov.moves_compared += moves.len() as u64;
        let m = &pair.model;
        if let Some(outcome) = m.outcome() {
            match outcome {
                Outcome::WhiteWins => cov.white_wins += 1,
                Outcome::BlackWins => cov.black_wins += 1,
                Outcome::Draw => cov.draws += 1,
            }
            return Ok(());
        }
        if m.plies >= style.max_plies {
            return Ok(());
        }
        let explained = m.legal_moves_explained();
        let has = |f: &dyn Fn(&(Action, Rule)) -> bool| explained.iter().any(f);
        cov.passes += u64::from(has(&|(a, _)| *a == Action::Pass));
        cov.with_stack += u64::from(m.stacks.values().any(|s| s.len() > 1));
        cov.with_throw += u64::from(has(&|(_, r)| *r == Rule::Throw));
        cov.with_throw_gated += u64::from(m.throws_refused_by_gates() > 0);
        cov.with_ladybug_walk += u64::from(has(&|(_, r)| *r == Rule::Walk(Bug::Ladybug)));
        cov.with_spider_walk += u64::from(has(&|(_, r)| *r == Rule::Walk(Bug::Spider)));
        cov.with_mosquito_walk +=
            u64::from(has(&|(a, r)| matches!((a, r), (Action::To(p, _), Rule::Walk(_)) if p.bug == Bug::Mosquito)));
        let repeats = seen.entry(m.key()).or_insert(0);
        *repeats += 1;
        cov.third_repetitions += u64::from(*repeats >= 3);
        cov.own_piece_stunned += u64::from(m.last_moved.is_some_and(|p| p.colour == m.to_move()));
        let back = takebacks.len().checked_sub(2).and_then(|i| takebacks[i]);
        let action = choose(&mut rng, style, m, &explained, back);
        takebacks.push(match action {
            Action::To(piece, _) => m.find(piece).map(|(from, _)| Action::To(piece, from)),
            Action::Pass => None,
        });
        if explained.iter().any(|&(a, r)| a == action && r == Rule::Throw)
            && !explained.iter().any(|&(a, r)| a == action && r != Rule::Throw)
        {
            cov.throws_played += 1;
        }
        cov.move_strings_read += pair.play(action, moves[&action]).map_err(|e| format!("{e} {}", pair.context()))?;
    }
}

/// Random games over every game type and style until `positions` positions were compared, or `keep` games
/// differed; the differences found.
fn run(positions: u64, first_seed: u64, keep: usize) -> (Coverage, Vec<String>) {
    let mut cov = Coverage::default();
    let mut found = Vec::new();
    let mut seed = first_seed;
    while cov.positions < positions && found.len() < keep {
        let game_type = GAME_TYPES[(seed % 8) as usize];
        let style = STYLES[((seed / 8) % STYLES.len() as u64) as usize];
        if let Err(e) = play_game(game_type, style, seed, &mut cov) {
            cov.differences += 1;
            found.push(format!("{game_type} seed {seed} {style:?}: {e}"));
        }
        seed += 1;
    }
    (cov, found)
}

#[test]
fn random_games_agree_with_the_reference_model() {
    let (cov, found) = run(30_000, 1, 5);
    eprintln!("{cov:?}");
    assert!(found.is_empty(), "{} games differ:\n{}", cov.differences, found.join("\n"));
    // The rules this test is about must really have been exercised.
    let minimums = [
        ("games", cov.games, 100),
        ("won games", cov.white_wins + cov.black_wins, 30),
        ("drawn games (both Queens surrounded at once)", cov.draws, 1),
        ("passes", cov.passes, 5),
        ("positions with a stack", cov.with_stack, 5_000),
        ("positions with a Pillbug throw", cov.with_throw, 2_000),
        ("positions where a height gate stops a throw", cov.with_throw_gated, 5),
        ("Pillbug throws played", cov.throws_played, 500),
        ("positions with a Ladybug move", cov.with_ladybug_walk, 1_500),
        ("positions with a Mosquito move", cov.with_mosquito_walk, 1_500),
        ("positions with a Spider move", cov.with_spider_walk, 4_000),
        ("positions with an own piece stunned by a throw", cov.own_piece_stunned, 200),
        ("positions seen a third time (no draw: the repetition rule is off by default)", cov.third_repetitions, 100),
        ("alternative MoveStrings read", cov.move_strings_read, 30_000),
    ];
    for (what, seen, least) in minimums {
        assert!(seen >= least, "only {seen} {what} (at least {least} expected): {cov:?}");
    }
}

/// A game that ends with both Queens surrounded by one move (found by the random games): a draw for both.
#[test]
fn both_queens_surrounded_at_once() {
    let text = "Base+L;Draw;White[13];wG1;bB1 wG1/;wQ /wG1;bQ \\bB1;wB1 /wQ;bQ -bB1;wB1 -wQ;bS1 -bQ;wB1 wQ;bB1 bQ/;\
                wS1 -wB1;bS2 -bB1;wB2 wB1\\;bB1 bS2;wB2 wG1\\;bB2 bQ/;wG2 wS1\\;bB1 bS1;wB1 wG1;bB2 wB1/;wB1 wB2;\
                bA1 \\bB2;wB1 wQ\\;bB1 bS1\\";
    let mut pair = Pair::new("Base+L");
    for mv in text.split(';').skip(3) {
        let moves = pair.compare().unwrap_or_else(|e| panic!("{e} {}", pair.context()));
        let action = pair.model.parse_move_string(mv).expect("a MoveString");
        pair.play(action, moves[&action]).unwrap_or_else(|e| panic!("{e} {}", pair.context()));
    }
    let moves = pair.compare().unwrap_or_else(|e| panic!("{e} {}", pair.context()));
    assert!(moves.is_empty());
    assert_eq!(pair.model.outcome(), Some(Outcome::Draw));
    assert_eq!(pair.kibitz.game_string(), text);
}

/// The spider's walks may cross one cell at different steps (the position of kibitz's fix): the model
/// finds the 28 moves too.
#[test]
fn spider_walks_that_cross() {
    let text = "Base;InProgress;Black[5];wS1;bB1 -wS1;wB1 wS1\\;bS1 /bB1;wS2 /wB1;bG1 -bS1;wQ /wS2;bQ -bB1;wB2 -wQ";
    let mut pair = Pair::new("Base");
    for mv in text.split(';').skip(3) {
        let action = pair.model.parse_move_string(mv).expect("a MoveString");
        let kibitz_move = pair.kibitz.parse_move(mv).expect("a kibitz move");
        pair.play(action, kibitz_move).expect("the same move");
    }
    let moves = pair.compare().expect("the same moves");
    assert_eq!(moves.len(), 28);
}

/// Set `KIBITZ_DIFF_POSITIONS` for another count; prints the figures.
#[test]
#[ignore = "a million positions: minutes; run with --release (or the test profile) -- --ignored --nocapture"]
fn many_random_games() {
    let positions = std::env::var("KIBITZ_DIFF_POSITIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let start = std::time::Instant::now();
    let (cov, found) = run(positions, 1_000_000, 100);
    println!(
        "{} positions in {} games ({} moves compared, {} MoveStrings read) in {:.1} s; {} games with a difference",
        cov.positions,
        cov.games,
        cov.moves_compared,
        cov.move_strings_read,
        start.elapsed().as_secs_f64(),
        cov.differences
    );
    println!("{cov:?}");
    for f in &found {
        println!("{f}");
    }
    assert!(found.is_empty(), "{} games differ", cov.differences);
}
