//! Matches between two players of one game (`kibitz match`): kibitz's own search or external engines from the
//! engines file. The match is a client of the rules (`games/`) and of the searches (`search/`, `engines/`):
//! every move a player answers is checked with kibitz's rules, every game is adjudicated by them
//! ([`Game::outcome`] after each move, plus a ply cap), and a player that fails or answers an illegal move
//! loses that game, the reason recorded, while the match goes on.
//!
//! Each opening is played twice, A taking the first side in one game and the second side in the other.
//! Games run on `concurrency` threads; finished games reach the caller in the order they finish.

pub mod players;
pub mod stats;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::game::{Game, GameRecord, Outcome, Side, play_moves};
use crate::search::Limits;
pub use players::{KibitzSettings, Player, PlayerSpec};
pub use stats::{EloEstimate, PairTally, Sprt, Tally, Verdict};

/// The largest openings file read.
const MAX_OPENINGS_FILE: u64 = 16 << 20;

/// Random openings tried before giving up on one that does not end the game.
const OPENING_ATTEMPTS: usize = 1000;

/// A position the games of a match start from: `root` and the moves played from it (both players see them).
#[derive(Clone, Debug)]
pub struct Opening<G: Game> {
    pub root: G,
    pub moves: Vec<G::Move>,
}

impl<G: Game> Opening<G> {
    /// The position after the opening's moves.
    pub fn position(&self) -> G {
        let mut g = self.root.clone();
        for &m in &self.moves {
            g.make(m);
        }
        g
    }
}

/// Read an openings file: one opening a line, `POSITION`, `POSITION|MOVES` or `|MOVES` (from the start
/// position), the position in any format the game reads and the moves separated by spaces; blank lines and
/// lines starting with `#` are skipped. An opening whose game is already over is refused.
pub fn read_openings<G: Game>(path: &Path) -> Result<Vec<Opening<G>>, String> {
    let shown = path.display();
    let size = std::fs::metadata(path).map_err(|e| format!("cannot read the openings file {shown}: {e}"))?.len();
    if size > MAX_OPENINGS_FILE {
        return Err(format!("the openings file {shown} is larger than {MAX_OPENINGS_FILE} bytes"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read the openings file {shown}: {e}"))?;
    let openings = parse_openings::<G>(&text).map_err(|e| format!("openings file {shown}: {e}"))?;
    if openings.is_empty() {
        return Err(format!("openings file {shown}: no openings"));
    }
    Ok(openings)
}

/// The openings of a file's text (see [`read_openings`]); an error names the line.
pub fn parse_openings<G: Game>(text: &str) -> Result<Vec<Opening<G>>, String> {
    let mut openings = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fail = |message: String| format!("line {}: {message}", n + 1);
        let (position, moves) = match line.split_once('|') {
            Some((p, m)) => (p.trim(), m.trim()),
            None => (line, ""),
        };
        let root = if position.is_empty() {
            G::start()
        } else {
            G::parse_position(position, None).map_err(|e| fail(format!("bad {} position: {e}", G::NAME)))?
        };
        let mut g = root.clone();
        let words: Vec<&str> = moves.split_whitespace().collect();
        let moves = play_moves(&mut g, &words).map_err(|e| fail(e.to_string()))?;
        if let Some(end) = g.outcome() {
            return Err(fail(format!("the game is already over ({})", end.reason)));
        }
        openings.push(Opening { root, moves });
    }
    Ok(openings)
}

/// A small, fast, seedable generator (splitmix64), so that a seed replays a match's random openings (the
/// tuning examples draw their openings and shuffles with it too).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `count` random openings of 4 to 8 legal plies from the start position, drawn from `seed`; openings that
/// end the game are drawn again.
pub fn random_openings<G: Game>(count: usize, seed: u64) -> Result<Vec<Opening<G>>, String> {
    random_openings_where::<G>(count, seed, &mut |_: &G| true)
}

/// Nodes of the search that judges a random opening for [`balanced_random_openings`].
pub const BALANCE_NODES: u64 = 20_000;

/// As [`random_openings`], but an opening after which a search of kibitz's own engine ([`BALANCE_NODES`]
/// nodes) finds either side ahead by more than `max_cp` centi-units is drawn again. Random plies in
/// draughts often leave a man hanging; with such an opening each engine wins the pair's game on the lucky
/// side, and the pair says nothing about which engine is stronger.
pub fn balanced_random_openings<G: Game>(count: usize, seed: u64, max_cp: i32) -> Result<Vec<Opening<G>>, String> {
    use crate::game::Score;
    use crate::search::{SearchOptions, TranspositionTable, search};
    let tt = Arc::new(TranspositionTable::new(16));
    let stop = Arc::new(AtomicBool::new(false));
    random_openings_where::<G>(count, seed, &mut |g: &G| {
        tt.clear();
        let done = search(g, &Limits::nodes(BALANCE_NODES), &SearchOptions::default(), &tt, &stop, &mut |_| {});
        matches!(done.lines.first().map(|l| l.score), Some(Score::Cp(cp)) if cp.abs() <= max_cp)
    })
}

/// Random openings as [`random_openings`], each also passing `accept` (else drawn again).
fn random_openings_where<G: Game>(
    count: usize,
    seed: u64,
    accept: &mut dyn FnMut(&G) -> bool,
) -> Result<Vec<Opening<G>>, String> {
    let mut rng = Rng(seed);
    let mut legal = Vec::new();
    let mut openings = Vec::with_capacity(count);
    for _ in 0..count {
        let mut found = None;
        'attempt: for _ in 0..OPENING_ATTEMPTS {
            let plies = 4 + rng.below(5);
            let root = G::start();
            let mut g = root.clone();
            let mut moves = Vec::with_capacity(plies);
            for _ in 0..plies {
                g.generate_moves(&mut legal);
                if legal.is_empty() {
                    continue 'attempt;
                }
                let m = legal[rng.below(legal.len())];
                g.make(m);
                moves.push(m);
                if g.outcome().is_some() {
                    continue 'attempt;
                }
            }
            if !accept(&g) {
                continue 'attempt;
            }
            found = Some(Opening { root, moves });
            break;
        }
        openings
            .push(found.ok_or_else(|| format!("no random {} opening that leaves the game going (and even)", G::NAME))?);
    }
    Ok(openings)
}

/// How a game ended, from the rules' point of view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finish {
    pub outcome: Outcome,
    /// The rule or the failure that decided it ("checkmate", "ply cap (300)", "engine `x` died while ...").
    pub reason: String,
}

/// A game played to its end.
#[derive(Clone, Debug)]
pub struct PlayedGame<G: Game> {
    /// 0-based number of the game in the match.
    pub index: usize,
    /// 0-based number of its opening.
    pub opening: usize,
    /// The side player A had.
    pub a_side: Side,
    /// The position the game started from and every move from there, the opening's first.
    pub root: G,
    pub moves: Vec<G::Move>,
    /// How many of `moves` the opening played.
    pub opening_plies: usize,
    pub finish: Finish,
}

/// A game's result from player A's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AResult {
    Win,
    Draw,
    Loss,
}

impl<G: Game> PlayedGame<G> {
    /// The pair this game belongs to: games `2k` and `2k + 1` play one opening, A on each side once
    /// ([`run_match`] deals them so).
    pub fn pair(&self) -> usize {
        self.index / 2
    }

    pub fn a_result(&self) -> AResult {
        match self.finish.outcome {
            Outcome::Draw => AResult::Draw,
            Outcome::Win(side) if side == self.a_side => AResult::Win,
            Outcome::Win(_) => AResult::Loss,
        }
    }

    /// The result in the PGN/PDN convention, from the game's "White" side ([`Game::WHITE_SIDE`]).
    pub fn result_text(&self) -> &'static str {
        match self.finish.outcome {
            Outcome::Draw => "1/2-1/2",
            Outcome::Win(side) if side == G::WHITE_SIDE => "1-0",
            Outcome::Win(_) => "0-1",
        }
    }

    /// The game as a record: `White`/`Black` tags name the players of [`Game::WHITE_SIDE`] and the other
    /// side, `Termination` gives the reason.
    pub fn record(&self, a_name: &str, b_name: &str) -> GameRecord<G> {
        let (first, second) = if self.a_side == Side::First { (a_name, b_name) } else { (b_name, a_name) };
        let (white, black) = if G::WHITE_SIDE == Side::First { (first, second) } else { (second, first) };
        let tags = vec![
            ("Event".to_string(), format!("kibitz match: {a_name} vs {b_name}")),
            ("Round".to_string(), (self.index + 1).to_string()),
            ("White".to_string(), white.to_string()),
            ("Black".to_string(), black.to_string()),
            ("Result".to_string(), self.result_text().to_string()),
            ("Termination".to_string(), self.finish.reason.clone()),
        ];
        GameRecord {
            tags,
            start: self.root.clone(),
            moves: self.moves.clone(),
            result: Some(self.result_text().to_string()),
            line: 1,
            remarks: Default::default(),
        }
    }

    /// The game in the game's record format: its annotated export (PGN, PDN) where it has one; otherwise the
    /// tags as `#` lines, then the first of these that the game's own record reader reads back move for move:
    /// the final position (a format that carries the moves, such as a UHP GameString), or the start position
    /// on one line and the moves and the result on the next.
    pub fn record_text(&self, a_name: &str, b_name: &str) -> String {
        let record = self.record(a_name, b_name);
        if let Some(text) = G::export_record(&record, &[]) {
            return text;
        }
        let mut head = String::new();
        for (name, value) in &record.tags {
            head.push_str(&format!("# {name}: {}\n", value.replace(['\n', '\r'], " ")));
        }
        let mut end = self.root.clone();
        for &m in &self.moves {
            end.make(m);
        }
        let start = self.root.format_position(None).unwrap_or_default();
        let mut moves = crate::game::format_line(&self.root, &self.moves);
        moves.push(self.result_text().to_string());
        let candidates = [
            format!("{head}{}\n", end.format_position(None).unwrap_or_default()),
            format!("{head}{start}\n{}\n", moves.join(" ")),
        ];
        // One game of these moves: a text that reads as more is not this game.
        let budget = crate::game::RecordBudget::new(1, self.moves.len() as u64 + 1);
        let reads_back = |text: &str| match G::parse_records(text, None, &mut { budget }) {
            Ok(games) => matches!(games.as_slice(), [Ok(r)]
                if r.moves == self.moves && r.start.position_key() == self.root.position_key()),
            Err(_) => false,
        };
        candidates.iter().find(|t| reads_back(t)).unwrap_or(&candidates[1]).clone()
    }
}

/// Play one game from `opening` between `first` (the side to move first in the game) and `second`. `None`
/// when `abort` was set before the game ended.
#[allow(clippy::too_many_arguments)]
pub fn play_game<G: Game>(
    index: usize,
    opening_index: usize,
    opening: &Opening<G>,
    a_side: Side,
    players: [&mut dyn Player<G>; 2],
    names: [&str; 2],
    limits: &Limits,
    max_plies: usize,
    abort: &Arc<AtomicBool>,
) -> Option<PlayedGame<G>> {
    // `players` and `names` are indexed by Side::index(): the player of the first side, then the second.
    let [first, second] = players;
    let mut seats: [&mut dyn Player<G>; 2] = [first, second];
    let root = opening.root.clone();
    let mut moves = opening.moves.clone();
    let mut g = opening.position();
    g.adopt_match_rules();
    let mut legal = Vec::new();
    let finish = |outcome, reason: String| Finish { outcome, reason };
    let mut finished = None;
    for side in [Side::First, Side::Second] {
        if let Err(e) = seats[side.index()].start_game() {
            let reason = format!("{} could not start: {e}", names[side.index()]);
            finished = Some(finish(Outcome::Win(side.opponent()), reason));
            break;
        }
    }
    while finished.is_none() {
        if abort.load(Ordering::Relaxed) {
            for seat in seats.iter_mut() {
                seat.end_game();
            }
            return None;
        }
        if let Some(end) = g.outcome() {
            finished = Some(finish(end.outcome, end.reason.to_string()));
            break;
        }
        if moves.len() >= max_plies {
            finished = Some(finish(Outcome::Draw, format!("ply cap ({max_plies})")));
            break;
        }
        let side = g.side_to_move();
        let name = names[side.index()];
        match seats[side.index()].choose(&root, &moves, &g, limits, abort) {
            Ok(m) => {
                g.generate_moves(&mut legal);
                if !legal.contains(&m) {
                    let reason = format!("{name} played an illegal move ({m:?})");
                    finished = Some(finish(Outcome::Win(side.opponent()), reason));
                    break;
                }
                g.make(m);
                moves.push(m);
            }
            Err(_) if abort.load(Ordering::Relaxed) => continue,
            Err(e) => {
                finished = Some(finish(Outcome::Win(side.opponent()), format!("{name} failed: {e}")));
            }
        }
    }
    for seat in seats.iter_mut() {
        seat.end_game();
    }
    let finish = finished?;
    Some(PlayedGame { index, opening: opening_index, a_side, root, moves, opening_plies: opening.moves.len(), finish })
}

/// What a match plays.
pub struct MatchPlan<G: Game> {
    pub a: PlayerSpec,
    pub b: PlayerSpec,
    /// Names used in messages and records.
    pub a_name: String,
    pub b_name: String,
    pub games: usize,
    pub openings: Vec<Opening<G>>,
    pub limits: Limits,
    pub max_plies: usize,
    pub concurrency: usize,
}

/// Play the games of `plan` on `plan.concurrency` threads. Each finished game goes to `on_game`, on the
/// calling thread, in the order games finish; when it answers `false` no more games start and the games
/// still running are abandoned (not reported). Returns the number of games reported.
pub fn run_match<G: Game>(plan: &MatchPlan<G>, on_game: impl FnMut(PlayedGame<G>) -> bool) -> Result<usize, String> {
    run_match_until(plan, &Arc::new(AtomicBool::new(false)), on_game)
}

/// As [`run_match`], and when `abort` is set (by a signal, say) the searches in progress are stopped, no more
/// games start and the games still running are abandoned, each player's engine process given back.
pub fn run_match_until<G: Game>(
    plan: &MatchPlan<G>,
    abort: &Arc<AtomicBool>,
    mut on_game: impl FnMut(PlayedGame<G>) -> bool,
) -> Result<usize, String> {
    if plan.openings.is_empty() {
        return Err("no openings".into());
    }
    // Every game thread needs its players; make them now so that a player that cannot play this game is
    // an error before any game starts.
    let threads = plan.concurrency.clamp(1, plan.games.max(1));
    let mut seats = Vec::with_capacity(threads);
    for _ in 0..threads {
        seats.push((plan.a.player::<G>()?, plan.b.player::<G>()?));
    }
    // An engine that cannot start at all (a wrong command or directory, an option it refuses, no handshake) is
    // an error now, not a forfeit of every game scored as a sweep for its opponent.
    if let Some((a, b)) = seats.first_mut() {
        for (player, name) in [(a, &plan.a_name), (b, &plan.b_name)] {
            player.start_game().map_err(|e| format!("{name} could not start: {e}"))?;
            player.end_game();
        }
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<PlayedGame<G>>();
    let mut reported = 0;
    std::thread::scope(|scope| {
        for (a, b) in seats {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                let (mut a, mut b) = (a, b);
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= plan.games || abort.load(Ordering::Relaxed) {
                        break;
                    }
                    // Games 2k and 2k + 1 are a pair (`PlayedGame::pair`): one opening, A on each side once.
                    let opening_index = (index / 2) % plan.openings.len();
                    let a_side = if index.is_multiple_of(2) { Side::First } else { Side::Second };
                    let (players, names): ([&mut dyn Player<G>; 2], [&str; 2]) = if a_side == Side::First {
                        ([a.as_mut(), b.as_mut()], [&plan.a_name, &plan.b_name])
                    } else {
                        ([b.as_mut(), a.as_mut()], [&plan.b_name, &plan.a_name])
                    };
                    let played = play_game(
                        index,
                        opening_index,
                        &plan.openings[opening_index],
                        a_side,
                        players,
                        names,
                        &plan.limits,
                        plan.max_plies,
                        abort,
                    );
                    match played {
                        Some(game) => {
                            if tx.send(game).is_err() {
                                break;
                            }
                        }
                        None => break,
                    }
                }
            });
        }
        drop(tx);
        for game in rx.iter() {
            if abort.load(Ordering::Relaxed) {
                continue;
            }
            reported += 1;
            if !on_game(game) {
                abort.store(true, Ordering::Relaxed);
            }
        }
    });
    Ok(reported)
}

#[cfg(test)]
mod tests;
