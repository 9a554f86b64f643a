//! Self-play tuning of the search's numbers ([`SearchTuning`]) by SPSA (simultaneous perturbation stochastic
//! approximation), the way engine testing frameworks tune theirs.
//!
//! Each iteration moves every number at once by its own step `c_k`, up or down at random (`flip`), and plays
//! one pair of games from a random opening between the numbers moved up (θ⁺) and the numbers moved down (θ⁻),
//! each side once with each colour, at a fixed count of nodes a move. The pair's result `r` (θ⁺'s wins less
//! its losses, −2 to 2) then moves every number by `a_k · r / (c_k · flip)`: towards the side that won,
//! by as much as the numbers' difference explains it. Over many pairs the noise cancels and each number drifts
//! towards where it plays best with the others.
//!
//! The steps follow the usual schedule, fixed by each number's last step `c_end` and last learning rate
//! `r_end` (the final `a_k / c_k²`): `c_k = c · k^−γ`, `a_k = a · (A + k)^−α` with `γ = 0.101`, `α = 0.602`
//! and `A` a tenth of the iterations, `c` and `a` chosen so that iteration `N` has `c_end` and `r_end`. A
//! number stays within its bounds, and is played rounded to a whole value.
//!
//! With one thread a run is reproducible from its seed; with several, the order in which pairs finish (and so
//! which numbers each pair starts from) varies.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::Tunable;
use super::selfplay::{play_game_between, random_opening};
use crate::matchplay::Rng;
use crate::search::{SearchOptions, SearchTuning, TranspositionTable};

/// Each thread's transposition tables (MiB), one per side, emptied before each game.
const TABLE_MB: usize = 8;
/// The step's decay exponent.
const GAMMA: f64 = 0.101;
/// The learning rate's decay exponent.
const ALPHA: f64 = 0.602;

/// One number being tuned: where it starts, its bounds, and its last step and learning rate.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: &'static str,
    pub start: f64,
    pub min: f64,
    pub max: f64,
    /// The perturbation at the last iteration.
    pub c_end: f64,
    /// The learning rate `a / c²` at the last iteration.
    pub r_end: f64,
}

/// The bounds and last step of each number of [`SearchTuning`], in the order of its `NAMES`: each step about
/// what moves the search by a few Elo, each range wide enough for any value worth trying.
const RANGES: [(f64, f64, f64); SearchTuning::COUNT] = [
    (30.0, 200.0, 8.0),       // reverse_futility_margin
    (0.0, 200.0, 8.0),        // futility_base
    (30.0, 250.0, 8.0),       // futility_margin
    (1.0, 12.0, 1.0),         // lmp_base
    (20.0, 250.0, 10.0),      // see_prune_noisy
    (5.0, 100.0, 3.0),        // see_prune_quiet
    (60.0, 500.0, 20.0),      // null_move_eval_divisor
    (-50.0, 150.0, 10.0),     // lmr_base_percent
    (120.0, 400.0, 12.0),     // lmr_divisor_percent
    (2000.0, 24000.0, 800.0), // lmr_history_divisor
    (0.0, 8.0, 1.0),          // singular_margin
    (8.0, 100.0, 3.0),        // aspiration_delta
    (8.0, 128.0, 4.0),        // history_bonus_scale
    (1024.0, 16384.0, 400.0), // history_bonus_max
    (100.0, 600.0, 25.0),     // null_move_reduction_percent
    (0.0, 60.0, 3.0),         // null_move_depth_percent
    (0.0, 8.0, 0.7),          // null_move_eval_max
    (0.0, 200.0, 15.0),       // reverse_futility_improving_percent
    (20.0, 100.0, 6.0),       // lmp_not_improving_percent
    (-100.0, 300.0, 20.0),    // lmr_pv_less_percent
    (-100.0, 300.0, 20.0),    // lmr_not_improving_percent
    (-100.0, 300.0, 20.0),    // lmr_counter_less_percent
    (2.0, 12.0, 0.7),         // reverse_futility_max_depth
    (1.0, 10.0, 0.7),         // lmp_max_depth
    (-100.0, 300.0, 20.0),    // lmr_cutoffs_more_percent
];

/// The final learning rate engine testing frameworks suggest for runs of tens of thousands of games; a run of a
/// few thousand pairs needs a larger one to move the numbers as far.
pub const R_END: f64 = 0.002;

/// The numbers to tune, starting from `start`, with their bounds and steps, and the final learning rate
/// `r_end`.
pub fn params(start: &SearchTuning, r_end: f64) -> Vec<Param> {
    SearchTuning::NAMES
        .iter()
        .zip(start.values())
        .zip(RANGES)
        .map(|((&name, v), (min, max, c_end))| Param {
            name,
            start: f64::from(v).clamp(min, max),
            min,
            max,
            c_end,
            r_end,
        })
        .collect()
}

/// The numbers as a search plays them: each rounded to a whole value.
pub fn tuning_of(theta: &[f64]) -> SearchTuning {
    let mut v = [0i32; SearchTuning::COUNT];
    for (o, t) in v.iter_mut().zip(theta) {
        *o = t.round() as i32;
    }
    SearchTuning::from_values(v)
}

/// A run's schedule: each number's `c` and `a`, and `A`.
struct Schedule {
    c: Vec<f64>,
    a: Vec<f64>,
    big_a: f64,
}

impl Schedule {
    fn new(params: &[Param], iterations: usize) -> Schedule {
        let n = iterations.max(1) as f64;
        let big_a = 0.1 * n;
        let c = params.iter().map(|p| p.c_end * n.powf(GAMMA)).collect();
        let a = params.iter().map(|p| p.r_end * p.c_end * p.c_end * (big_a + n).powf(ALPHA)).collect();
        Schedule { c, a, big_a }
    }

    /// Iteration `k`'s (from 1) step and learning rate of number `i`.
    fn at(&self, i: usize, k: usize) -> (f64, f64) {
        let k = k as f64;
        (self.c[i] / k.powf(GAMMA), self.a[i] / (self.big_a + k).powf(ALPHA))
    }
}

/// One SPSA step: `theta` moved by pair result `result` (θ⁺'s wins less its losses) at iteration `k`, where
/// `flips` gave each number's direction (±1). Each number stays within its bounds.
fn apply(theta: &mut [f64], params: &[Param], schedule: &Schedule, k: usize, flips: &[f64], result: f64) {
    for (i, (t, p)) in theta.iter_mut().zip(params).enumerate() {
        let (c, a) = schedule.at(i, k);
        *t = (*t + a * result / (c * flips[i])).clamp(p.min, p.max);
    }
}

/// Where a run stands, at each report and at its end: the numbers, and θ⁺'s record over the pairs so far.
#[derive(Clone, Debug)]
pub struct Standing {
    pub theta: Vec<f64>,
    pub wins: usize,
    pub draws: usize,
    pub losses: usize,
}

/// Play `iterations` pairs at `nodes` a move on `threads` threads, tuning `params` from their starts; progress
/// every `report` pairs goes to `progress`. Iteration `k` draws its opening and its flips from the generator
/// seeded with `seed` and `k`.
pub fn run<G: Tunable>(
    params: &[Param],
    iterations: usize,
    nodes: u64,
    seed: u64,
    threads: usize,
    report: usize,
    progress: &(dyn Fn(usize, &Standing) + Sync),
) -> Standing {
    let schedule = Schedule::new(params, iterations);
    let settings = G::self_play_settings();
    let state = Mutex::new(Standing { theta: params.iter().map(|p| p.start).collect(), wins: 0, draws: 0, losses: 0 });
    let next = AtomicUsize::new(1);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            let (state, next, schedule, settings) = (&state, &next, &schedule, &settings);
            scope.spawn(move || {
                let tables = [Arc::new(TranspositionTable::new(TABLE_MB)), Arc::new(TranspositionTable::new(TABLE_MB))];
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k > iterations {
                        return;
                    }
                    let mut rng = Rng(seed.wrapping_mul(1_000_003).wrapping_add(k as u64));
                    let flips: Vec<f64> = params.iter().map(|_| if rng.below(2) == 0 { -1.0 } else { 1.0 }).collect();
                    let theta = state.lock().unwrap_or_else(|e| e.into_inner()).theta.clone();
                    let moved = |sign: f64| -> SearchOptions {
                        let t: Vec<f64> = (0..params.len())
                            .map(|i| {
                                (theta[i] + sign * schedule.at(i, k).0 * flips[i]).clamp(params[i].min, params[i].max)
                            })
                            .collect();
                        SearchOptions { tuning: Some(tuning_of(&t)), ..SearchOptions::default() }
                    };
                    let (plus, minus) = (moved(1.0), moved(-1.0));
                    let opening: G = random_opening(&mut rng, settings, &tables[0]);
                    // θ⁺ first with the first side, then with the second.
                    let mut result = 0.0;
                    let (mut w, mut d, mut l) = (0, 0, 0);
                    for plus_first in [true, false] {
                        let options = if plus_first { [&plus, &minus] } else { [&minus, &plus] };
                        let tts = [&tables[0], &tables[1]];
                        let r = play_game_between(
                            opening.clone(),
                            [nodes, nodes],
                            settings,
                            tts,
                            &|g: &G, _| g.clone(),
                            options,
                        )
                        .result;
                        let plus_score = if plus_first { r } else { 1.0 - r };
                        match plus_score {
                            s if s > 0.75 => w += 1,
                            s if s < 0.25 => l += 1,
                            _ => d += 1,
                        }
                        result += 2.0 * plus_score - 1.0;
                    }
                    let snapshot = {
                        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
                        apply(&mut s.theta, params, schedule, k, &flips, result);
                        s.wins += w;
                        s.draws += d;
                        s.losses += l;
                        s.clone()
                    };
                    if report > 0 && (k % report == 0 || k == iterations) {
                        progress(k, &snapshot);
                    }
                }
            });
        }
    });
    state.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// The numbers as `name value` lines, as [`read`] takes them back.
pub fn format(params: &[Param], theta: &[f64]) -> String {
    params.iter().zip(theta).map(|(p, t)| format!("{} {:.2}\n", p.name, t)).collect()
}

/// Start values from `name value` lines ([`format()`]'s), over `params`' starts; an unknown name or a value that
/// is not a number is an error naming the line.
pub fn read(text: &str, params: &mut [Param]) -> Result<(), String> {
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(name), Some(value), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("line {}: expected `name value`, found `{line}`", n + 1));
        };
        let value: f64 = value.parse().map_err(|_| format!("line {}: `{value}` is not a number", n + 1))?;
        if !value.is_finite() {
            return Err(format!("line {}: `{value}` is not a finite number", n + 1));
        }
        let p = params
            .iter_mut()
            .find(|p| p.name == name)
            .ok_or_else(|| format!("line {}: no search number is called `{name}`", n + 1))?;
        p.start = value.clamp(p.min, p.max);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::chess::Chess;

    #[test]
    fn the_schedule_ends_at_each_numbers_last_step_and_rate() {
        let params = params(&SearchTuning::DEFAULT, R_END);
        let s = Schedule::new(&params, 1000);
        for (i, p) in params.iter().enumerate() {
            let (c, a) = s.at(i, 1000);
            assert!((c - p.c_end).abs() < 1e-9 * p.c_end, "{}: c {c}", p.name);
            assert!((a / (c * c) - p.r_end).abs() < 1e-12, "{}: r {}", p.name, a / (c * c));
            // Earlier steps are larger.
            assert!(s.at(i, 1).0 > c && s.at(i, 1).1 > a);
        }
    }

    #[test]
    fn a_won_pair_moves_each_number_towards_the_winner_and_keeps_it_in_bounds() {
        let params = params(&SearchTuning::DEFAULT, R_END);
        let s = Schedule::new(&params, 100);
        let start: Vec<f64> = params.iter().map(|p| p.start).collect();
        let flips: Vec<f64> = (0..params.len()).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let mut theta = start.clone();
        apply(&mut theta, &params, &s, 1, &flips, 2.0);
        for i in 0..params.len() {
            // θ⁺ (start + c · flip) won: each number moves in its flip's direction, by a / c · 2.
            let (c, a) = s.at(i, 1);
            let expected = (start[i] + 2.0 * a / (c * flips[i])).clamp(params[i].min, params[i].max);
            assert!((theta[i] - expected).abs() < 1e-9, "{}", params[i].name);
            assert_eq!((theta[i] - start[i]).signum(), flips[i], "{}", params[i].name);
        }
        // A drawn pair moves nothing; a huge result stops at the bounds.
        let mut same = start.clone();
        apply(&mut same, &params, &s, 1, &flips, 0.0);
        assert_eq!(same, start);
        let mut far = start.clone();
        apply(&mut far, &params, &s, 1, &flips, 1e9);
        for (i, p) in params.iter().enumerate() {
            assert_eq!(far[i], if flips[i] > 0.0 { p.max } else { p.min }, "{}", p.name);
        }
    }

    #[test]
    fn the_defaults_round_trip_through_the_numbers_and_their_file() {
        let params0 = params(&SearchTuning::DEFAULT, R_END);
        let theta: Vec<f64> = params0.iter().map(|p| p.start).collect();
        assert_eq!(tuning_of(&theta), SearchTuning::DEFAULT);
        let mut params1 = params(&SearchTuning::DEFAULT, R_END);
        for p in &mut params1 {
            p.start = p.min;
        }
        read(&format(&params0, &theta), &mut params1).unwrap();
        assert_eq!(params1, params0);
        let mut p = params(&SearchTuning::DEFAULT, R_END);
        assert!(read("futility_base x", &mut p).unwrap_err().contains("line 1"));
        assert!(read("\nnonsense 3", &mut p).unwrap_err().contains("`nonsense`"));
        assert!(read("futility_base 1 2", &mut p).unwrap_err().contains("expected `name value`"));
        assert!(read("futility_base inf", &mut p).is_err());
    }

    #[test]
    fn a_short_run_plays_its_pairs_and_moves_the_numbers() {
        let params = params(&SearchTuning::DEFAULT, R_END);
        let reports = Mutex::new(Vec::new());
        let out = run::<Chess>(&params, 4, 300, 5, 2, 2, &|k, o| reports.lock().unwrap().push((k, o.theta.clone())));
        assert_eq!(out.wins + out.draws + out.losses, 8);
        let reports = reports.into_inner().unwrap();
        assert_eq!(reports.iter().map(|r| r.0).collect::<std::collections::BTreeSet<_>>().len(), 2);
        for (t, p) in out.theta.iter().zip(&params) {
            assert!((p.min..=p.max).contains(t), "{} {t}", p.name);
        }
        // On one thread a run is its seed's: the same pairs, the same numbers.
        let one = run::<Chess>(&params, 3, 300, 9, 1, 0, &|_, _| {});
        let again = run::<Chess>(&params, 3, 300, 9, 1, 0, &|_, _| {});
        assert_eq!(one.theta, again.theta);
        assert_eq!((one.wins, one.draws, one.losses), (again.wins, again.draws, again.losses));
    }
}
