//! Positions for the fit from games kibitz plays against itself at a fixed number of nodes a move.
//!
//! Each game starts from a few random legal plies (drawn again while a short search finds the position
//! lopsided) and is adjudicated by the game's own rules, by mate scores, by both sides' searches agreeing on a
//! decisive score for a run of plies, by a long run of drawish scores, and by a ply cap. Each quiet position
//! ([`Tunable::is_quiet_for_training`]) is written as one line `POSITION;result;score`: the position in the
//! game's main format, the result 1.0 / 0.5 / 0.0 from the first side's view, and the search's score of the
//! position in centi-units from the first side's view.

use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::Tunable;
use crate::game::{Outcome, Score, Side};
use crate::matchplay::Rng;
use crate::search::{Limits, SearchOptions, TranspositionTable, search};

/// Each self-play thread's transposition table (MiB), in every game's self-play: 262,144 entries, more than a
/// chess game of about 70 plies at 1,500 nodes a move visits. The table is emptied before every game and every
/// opening's trial search, and at 16 MiB the emptying alone took 4% of such a run.
const GEN_TABLE_MB: usize = 4;

/// How self-play opens and adjudicates a game.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Random plies before the game proper: at least `opening_min`, fewer than `opening_min + opening_spread`.
    pub opening_min: usize,
    pub opening_spread: usize,
    /// An opening a search of `opening_nodes` scores beyond this (centi-units) is drawn again.
    pub opening_max_score: i32,
    pub opening_nodes: u64,
    /// A score at least this decisive for `win_plies` plies in a row ends the game.
    pub win_score: i32,
    pub win_plies: usize,
    /// From ply `draw_from`, `draw_plies` plies in a row within `draw_score` of zero end the game in a draw.
    pub draw_score: i32,
    pub draw_plies: usize,
    pub draw_from: usize,
    /// A game this long is a draw.
    pub max_plies: usize,
    /// Each side's nodes a move in a game are drawn between `100 - node_spread` and `100 + node_spread`
    /// percent of the given count (0: both sides search exactly that many). A deterministic engine at one
    /// node count replays the same lines from openings that meet; two different counts part from them.
    pub node_spread: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            opening_min: 4,
            opening_spread: 6,
            opening_max_score: 80,
            opening_nodes: 3000,
            win_score: 500,
            win_plies: 8,
            draw_score: 12,
            draw_plies: 20,
            draw_from: 60,
            max_plies: 300,
            node_spread: 0,
        }
    }
}

fn outcome_value(outcome: Outcome) -> f64 {
    match outcome {
        Outcome::Win(Side::First) => 1.0,
        Outcome::Win(Side::Second) => 0.0,
        Outcome::Draw => 0.5,
    }
}

/// One game played out: the result from the first side's view, and the quiet positions with the search's
/// scores from the first side's view.
pub struct Played<G> {
    pub result: f64,
    pub positions: Vec<(G, i32)>,
}

/// Play `game` to its end against itself, the first side at `nodes[0]` a move and the second at `nodes[1]`.
pub fn play_game<G: Tunable>(game: G, nodes: [u64; 2], settings: &Settings, tt: &Arc<TranspositionTable>) -> Played<G> {
    let options = SearchOptions::default();
    play_game_between(game, nodes, settings, [tt, tt], &|g: &G, _| g.clone(), [&options, &options])
}

/// Play `game` to its end between two players, the first at `nodes[0]` a move and the second at `nodes[1]`:
/// the first side searches with `tables[0]` what `prepare(position, Side::First)` gives (the position with its
/// own evaluation, say), the second with `tables[1]`; each side searches with its `options` (self-play tuning's
/// trial numbers, say). Adjudicated and recorded as [`play_game`].
pub fn play_game_between<G: Tunable>(
    mut game: G,
    nodes: [u64; 2],
    settings: &Settings,
    tables: [&Arc<TranspositionTable>; 2],
    prepare: &dyn Fn(&G, Side) -> G,
    options: [&SearchOptions; 2],
) -> Played<G> {
    for tt in tables {
        tt.clear();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let limits = nodes.map(Limits::nodes);
    let mut legal = Vec::new();
    let mut positions = Vec::new();
    let (mut decisive_run, mut drawish_run, mut last_sign) = (0usize, 0usize, 0i32);
    let mut ply = 0usize;
    let result = loop {
        if let Some(end) = game.rule_end(0) {
            break outcome_value(end.outcome);
        }
        game.generate_moves(&mut legal);
        if legal.is_empty() {
            break outcome_value(game.no_move_end().outcome);
        }
        if ply >= settings.max_plies {
            break 0.5;
        }
        let side = game.side_to_move();
        let mover = prepare(&game, side);
        let done =
            search(&mover, &limits[side.index()], options[side.index()], tables[side.index()], &stop, &mut |_| {});
        let Some(best) = done.best else { break 0.5 };
        match done.lines.first().map_or(Score::Cp(0), |l| l.score) {
            Score::Mate(n) => break if (n > 0) == (side == Side::First) { 1.0 } else { 0.0 },
            Score::Cp(cp) => {
                let w = if side == Side::First { cp } else { -cp };
                if game.is_quiet_for_training(best) {
                    positions.push((game.clone(), w));
                }
                let sign = w.signum();
                decisive_run = if w.abs() >= settings.win_score && sign == last_sign {
                    decisive_run + 1
                } else {
                    usize::from(w.abs() >= settings.win_score)
                };
                last_sign = sign;
                if decisive_run >= settings.win_plies {
                    break if w > 0 { 1.0 } else { 0.0 };
                }
                drawish_run = if w.abs() <= settings.draw_score { drawish_run + 1 } else { 0 };
                if ply >= settings.draw_from && drawish_run >= settings.draw_plies {
                    break 0.5;
                }
            }
        }
        game.make(best);
        ply += 1;
    };
    Played { result, positions }
}

/// Random legal plies from the start, drawn again until the game goes on and a short search scores the
/// position within the settings' bound.
pub fn random_opening<G: Tunable>(rng: &mut Rng, settings: &Settings, tt: &Arc<TranspositionTable>) -> G {
    let stop = Arc::new(AtomicBool::new(false));
    let mut legal = Vec::new();
    'again: loop {
        let plies =
            settings.opening_min + if settings.opening_spread > 1 { rng.below(settings.opening_spread) } else { 0 };
        let mut game = G::start();
        for _ in 0..plies {
            game.generate_moves(&mut legal);
            if legal.is_empty() || game.rule_end(0).is_some() {
                continue 'again;
            }
            game.make(legal[rng.below(legal.len())]);
        }
        game.generate_moves(&mut legal);
        if legal.is_empty() || game.rule_end(0).is_some() {
            continue;
        }
        tt.clear();
        let limits = Limits::nodes(settings.opening_nodes);
        let done = search(&game, &limits, &SearchOptions::default(), tt, &stop, &mut |_| {});
        if let Some(Score::Cp(cp)) = done.lines.first().map(|l| l.score)
            && cp.abs() <= settings.opening_max_score
        {
            return game;
        }
    }
}

/// Each side's nodes a move for one game: `nodes`, each side's count moved by up to `settings.node_spread`
/// percent (at most 99).
fn side_nodes(rng: &mut Rng, nodes: u64, settings: &Settings) -> [u64; 2] {
    let spread = settings.node_spread.min(99);
    std::array::from_fn(|_| {
        (nodes.saturating_mul(100 - spread + rng.below(2 * spread as usize + 1) as u64) / 100).max(1)
    })
}

/// Play `games` games at `nodes` a move (each side's count moved by up to `node_spread` percent, drawn per
/// game) on `threads` threads and append their quiet positions to `out`, one line each (see the module).
/// Game `g` opens from the generator seeded with `seed` and `g`, so a run is reproducible game by game
/// whatever the number of threads (only the order of the lines changes).
pub fn generate<G: Tunable>(
    out: &str,
    games: usize,
    nodes: u64,
    seed: u64,
    threads: usize,
    node_spread: u64,
) -> Result<(), String> {
    let settings = Settings { node_spread, ..G::self_play_settings() };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)
        .map_err(|e| format!("cannot open {out}: {e}"))?;
    let file = Mutex::new(BufWriter::new(file));
    let next = AtomicUsize::new(0);
    let tally = Mutex::new((0usize, 0.0f64));
    let start = Instant::now();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|t| {
                let (file, next, tally, settings) = (&file, &next, &tally, &settings);
                scope.spawn(move || -> Result<(), String> {
                    let tt = Arc::new(TranspositionTable::new(GEN_TABLE_MB));
                    loop {
                        let g = next.fetch_add(1, Ordering::Relaxed);
                        if g >= games {
                            return Ok(());
                        }
                        let mut rng = Rng(seed.wrapping_mul(1_000_003).wrapping_add(g as u64));
                        let opening: G = random_opening(&mut rng, settings, &tt);
                        let played = play_game(opening, side_nodes(&mut rng, nodes, settings), settings, &tt);
                        let mut lines = String::new();
                        for (position, score) in &played.positions {
                            let text = position.format_position(None).map_err(|e| e.to_string())?;
                            lines.push_str(&format!("{text};{:.1};{score}\n", played.result));
                        }
                        {
                            let mut f = file.lock().unwrap();
                            f.write_all(lines.as_bytes()).and_then(|_| f.flush()).map_err(|e| format!("{out}: {e}"))?;
                        }
                        let mut tally = tally.lock().unwrap();
                        tally.0 += played.positions.len();
                        tally.1 += played.result;
                        if (g + 1) % 100 == 0 {
                            crate::errln!(
                                "[{t}] {} games, {} positions, the first side scored {:.3}, {:.0} s",
                                g + 1,
                                tally.0,
                                tally.1 / (g + 1) as f64,
                                start.elapsed().as_secs_f64()
                            );
                        }
                    }
                })
            })
            .collect();
        // A worker's failure (the output file cannot be written) is the command's.
        workers.into_iter().try_for_each(|w| w.join().map_err(|_| "a game thread panicked".to_string())?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_side_searches_within_the_spread() {
        let mut rng = Rng(5);
        let exact = Settings::default();
        assert_eq!(side_nodes(&mut rng, 3000, &exact), [3000, 3000]);
        let spread = Settings { node_spread: 30, ..Settings::default() };
        let drawn: Vec<[u64; 2]> = (0..200).map(|_| side_nodes(&mut rng, 3000, &spread)).collect();
        assert!(drawn.iter().flatten().all(|&n| (2100..=3900).contains(&n)), "{drawn:?}");
        // The two sides of a game differ (most of the time), and the counts cover the range.
        assert!(drawn.iter().filter(|[a, b]| a != b).count() > 150);
        let all: Vec<u64> = drawn.iter().flatten().copied().collect();
        assert!(all.iter().any(|&n| n < 2400) && all.iter().any(|&n| n > 3600));
    }
}
