//! What every reference move generator shares: a small seeded PRNG, the trait a reference implements and the
//! loop that plays random games with a reference and a kibitz game side by side, comparing in every position
//! the legal moves (as canonical strings), whether the game is over and its result.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use kibitz::game::{Game, Outcome};

/// xorshift64* seeded through splitmix64: plenty for choosing moves, and reproducible from its seed.
#[derive(Clone, Debug)]
pub struct Prng(u64);

impl Prng {
    pub fn new(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Prng((z ^ (z >> 31)) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }
}

/// A move generator written from the printed rules, to compare with kibitz's.
pub trait Reference: Clone {
    type Move: Clone;

    /// Every legal move with its canonical text (the same text the test derives from kibitz's move).
    fn legal_moves(&self) -> Vec<(String, Self::Move)>;

    /// The end of the game, if it is over, with the rule that ended it; `legal` is the legal move count.
    fn outcome(&self, legal: usize) -> Option<(Outcome, &'static str)>;

    /// Play a legal move.
    fn play(&mut self, m: &Self::Move);

    /// Features of a legal move worth counting (a king's capture, a promotion, ...), so that a test can
    /// assert they were compared often enough.
    fn features(&self, m: &Self::Move) -> Vec<&'static str>;

    /// How much more likely a playout is to choose this move (≥ 1): biases games toward interesting cases.
    fn weight(&self, m: &Self::Move) -> u32;

    /// Features of the position worth counting (in check, a move refused because it would leave the king
    /// attacked, ...).
    fn position_features(&self) -> Vec<&'static str> {
        Vec::new()
    }
}

/// Totals over the games played.
#[derive(Default, Debug)]
pub struct Stats {
    pub positions: u64,
    pub games: u64,
    /// Counts of move features over all legal moves compared, and of game ends by rule (`end: ...`).
    pub counts: BTreeMap<&'static str, u64>,
    /// Descriptions of the first differences found (each one ends its game).
    pub differences: Vec<String>,
    pub difference_count: u64,
}

impl Stats {
    pub fn count(&self, key: &str) -> u64 {
        self.counts.get(key).copied().unwrap_or(0)
    }

    /// Fail with every difference found, and when any of the `required` counts is below its minimum.
    pub fn assert_clean(&self, required: &[(&str, u64)]) {
        assert!(
            self.difference_count == 0,
            "{} positions differ from the reference; the first ones:\n{}",
            self.difference_count,
            self.differences.join("\n\n")
        );
        for &(key, min) in required {
            assert!(
                self.count(key) >= min,
                "only {} of `{key}` (want at least {min}); counts: {:?}",
                self.count(key),
                self.counts
            );
        }
    }
}

/// Play one whole game from `reference` / `kibitz` (the same position), choosing moves at random with the
/// reference's weights, and compare the two in every position. `describe` writes kibitz's move in the same
/// canonical text as the reference. Stops at the end of the game, after `max_plies`, or at the first difference.
pub fn play_game<R: Reference, K: Game>(
    mut reference: R,
    mut kibitz: K,
    describe: &dyn Fn(&K, K::Move) -> String,
    rng: &mut Prng,
    max_plies: usize,
    stats: &mut Stats,
) {
    let start = kibitz.format_position(None).unwrap_or_default();
    let mut line: Vec<String> = Vec::new();
    let mut kmoves = Vec::new();
    stats.games += 1;
    for _ in 0..=max_plies {
        stats.positions += 1;
        let rmoves = reference.legal_moves();
        kibitz.generate_moves(&mut kmoves);
        let want: BTreeSet<&str> = rmoves.iter().map(|(s, _)| s.as_str()).collect();
        let got: Vec<(String, K::Move)> = kmoves.iter().map(|&m| (describe(&kibitz, m), m)).collect();
        let got_set: BTreeSet<&str> = got.iter().map(|(s, _)| s.as_str()).collect();
        let mut problem = None;
        if want.len() != rmoves.len() {
            problem =
                Some(format!("the reference generated a move twice: {} moves, {} distinct", rmoves.len(), want.len()));
        } else if got_set.len() != got.len() {
            problem = Some(format!("kibitz generated a move twice: {} moves, {} distinct", got.len(), got_set.len()));
        } else if want != got_set {
            let missing: Vec<_> = want.difference(&got_set).collect();
            let extra: Vec<_> = got_set.difference(&want).collect();
            problem = Some(format!("kibitz misses {missing:?} and has extra {extra:?}"));
        }
        let rend = reference.outcome(rmoves.len());
        let kend = kibitz.outcome();
        if problem.is_none() && rend.map(|e| e.0) != kend.map(|e| e.outcome) {
            problem = Some(format!("game end: reference {rend:?}, kibitz {kend:?}"));
        }
        if let Some(p) = problem {
            stats.difference_count += 1;
            if stats.differences.len() < 5 {
                let here = kibitz.format_position(None).unwrap_or_default();
                stats
                    .differences
                    .push(format!("{p}\n  position {here}\n  reached from {start}\n  by {}", line.join(" ")));
            }
            return;
        }
        for f in reference.position_features() {
            *stats.counts.entry(f).or_insert(0) += 1;
        }
        for (_, m) in &rmoves {
            for f in reference.features(m) {
                *stats.counts.entry(f).or_insert(0) += 1;
            }
        }
        if let Some((_, reason)) = rend {
            *stats.counts.entry(reason).or_insert(0) += 1;
            return;
        }
        let total: u64 = rmoves.iter().map(|(_, m)| reference.weight(m) as u64).sum();
        let mut pick = (rng.next_u64() % total) as i64;
        let mut chosen = 0;
        for (i, (_, m)) in rmoves.iter().enumerate() {
            pick -= reference.weight(m) as i64;
            if pick < 0 {
                chosen = i;
                break;
            }
        }
        let (text, m) = &rmoves[chosen];
        let km = got.iter().find(|(s, _)| s == text).map(|&(_, m)| m).expect("the sets are equal");
        line.push(text.clone());
        reference.play(m);
        kibitz.make(km);
    }
}

/// The number of positions the `#[ignore]`d long tests compare: `KIBITZ_DIFF_POSITIONS`, else a million.
pub fn long_run_positions() -> u64 {
    std::env::var("KIBITZ_DIFF_POSITIONS").ok().and_then(|v| v.replace('_', "").parse().ok()).unwrap_or(1_000_000)
}

/// Play games from `setup` (a fresh reference and kibitz pair per game) until `positions` positions were compared.
pub fn run<R: Reference, K: Game>(
    positions: u64,
    seed: u64,
    max_plies: usize,
    setup: &dyn Fn(&mut Prng, u64) -> (R, K),
    describe: &dyn Fn(&K, K::Move) -> String,
) -> Stats {
    let mut rng = Prng::new(seed);
    let mut stats = Stats::default();
    let began = Instant::now();
    while stats.positions < positions {
        let (r, k) = setup(&mut rng, stats.games);
        play_game(r, k, describe, &mut rng, max_plies, &mut stats);
    }
    println!(
        "{}: {} positions in {} games compared in {:.1} s, {} differences; {:?}",
        K::NAME,
        stats.positions,
        stats.games,
        began.elapsed().as_secs_f64(),
        stats.difference_count,
        stats.counts
    );
    stats
}
