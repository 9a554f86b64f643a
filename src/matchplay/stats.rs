//! The arithmetic of a match: the score of wins, draws and losses, the Elo difference it implies under the
//! logistic model with its 95% interval, and the sequential probability ratio test between two Elo
//! hypotheses.
//!
//! The formulas work on the trinomial W/D/L counts seen from one player (A), a game scoring 1, ½ or 0, or on
//! the pentanomial counts of pairs of games (below):
//!
//! - Score: `s = (W + D/2) / N`.
//! - Elo under the logistic model: a player scoring `s` against an opponent is `-400·log10(1/s - 1)` stronger.
//! - Per-game variance of the score: `σ² = (W·(1-s)² + D·(½-s)² + L·s²) / N`; the mean's standard error is
//!   `σ/√N`, and the 95% interval of the score, `s ± 1.95996·σ/√N`, is carried to Elo through the same
//!   logistic curve. Where that normal interval reaches past 0% or 100% (a clean sweep, or nearly one: its
//!   variance is then underestimated, at both ends), the whole interval is the Wilson score interval instead,
//!   `(s + z²/2N ± z·√(s(1-s)/N + z²/4N²)) / (1 + z²/N)`, which stays inside (0, 1) except at a sweep's own
//!   end: so a sweep of N games still bounds the difference on one side (20 lost games: below -286.6), and a
//!   near sweep's near end is not the normal one's, too close to its score (199 wins and a draw in 200 games:
//!   above +647.5, where the normal end said +851.3).
//! - By pairs (the pentanomial model): the games come in pairs on one opening, A on each side once, and a
//!   pair's score `x = points / 2` (A's points in the pair: 0, ½, 1, 1½ or 2) is one sample. The mean is the
//!   same score `s`; the variance is `σp² = Σ count(x)·(x - s)² / P` over the P complete pairs, and the 95%
//!   interval of the score `s ± 1.95996·σp/√P`, carried to Elo likewise. Two games on one opening are not
//!   independent: where the opening favours a side, each player tends to win the pair's game on that side,
//!   and the game-by-game variance counts that win and loss as spread the pair does not have. So the
//!   interval by pairs is the tighter and the truer one (a tenth to a fifth narrower in kibitz's chess
//!   self-play).
//! - SPRT: H0 says the difference is `elo0`, H1 that it is `elo1`; they predict the expected scores `s0` and
//!   `s1` (the logistic curve again). The samples are the games ([`Sprt::llr`]) or, as `kibitz match` does,
//!   the complete pairs ([`Sprt::llr_by_pairs`]), each an outcome `x` from a few (0, ½, 1 for a game; 0, ¼,
//!   ½, ¾, 1 for a pair) seen `n(x)` times. The test is the generalised SPRT on that multinomial: under each
//!   hypothesis the outcome probabilities are the ones of largest likelihood whose mean is that hypothesis'
//!   score, `p(x) = n(x) / (N·(1 + λ·(x - s_h)))` with `λ` the root of `Σ n(x)·(x - s_h)/(1 + λ·(x - s_h)) = 0`
//!   (a Lagrange multiplier; the sum falls as `λ` rises, so bisection finds it), and the log-likelihood ratio
//!   of H1 against H0 is `LLR = Σ n(x)·ln(p1(x)/p0(x))`. For many samples this is the normal approximation
//!   `N·(s1-s0)·(2s - s0 - s1) / (2σ²)` with σ² the samples' variance; unlike that formula it stays defined
//!   when every sample is alike (40 straight wins are evidence, 200 straight draws too). Outcomes not seen
//!   count [`UNSEEN`] times, so that every hypothesis' score can be a mean of the outcomes. The test accepts H1
//!   when `LLR ≥ ln((1-β)/α)`, H0 when `LLR ≤ ln(β/(1-α))`, and otherwise asks for more games.

/// The two-sided 95% quantile of the standard normal distribution.
const Z95: f64 = 1.959_963_984_540_054;

/// Wins, draws and losses from one player's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Tally {
    pub fn new(wins: u64, draws: u64, losses: u64) -> Self {
        Tally { wins, draws, losses }
    }

    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// The mean score per game (1 a win, ½ a draw), `None` before the first game.
    pub fn score(&self) -> Option<f64> {
        let n = self.games();
        (n > 0).then(|| (self.wins as f64 + self.draws as f64 / 2.0) / n as f64)
    }

    /// The variance of one game's score around the mean, `None` before the first game.
    pub fn variance(&self) -> Option<f64> {
        let s = self.score()?;
        let n = self.games() as f64;
        let (w, d, l) = (self.wins as f64, self.draws as f64, self.losses as f64);
        Some((w * (1.0 - s).powi(2) + d * (0.5 - s).powi(2) + l * s.powi(2)) / n)
    }

    /// The Elo difference the score implies and its 95% interval, `None` before the first game. Both ends are
    /// finite unless the games were a clean sweep: then the estimate and the far end are infinite, the near end
    /// is not.
    pub fn elo(&self) -> Option<EloEstimate> {
        let s = self.score()?;
        let n = self.games() as f64;
        let margin = Z95 * (self.variance()? / n).sqrt();
        let (mut low, mut high) = (s - margin, s + margin);
        // An end at or past 0% or 100% (for a sweep both ends sit on its score), or no spread at all (every game
        // scored alike, all draws say): the variance is underestimated, and the interval is Wilson's instead,
        // both ends (found by an audit: six draws gave an interval of +0.0 to +0.0).
        let outside = |end: f64| !(end > 0.0 && end < 1.0);
        if outside(low) || outside(high) || margin <= 0.0 {
            let z2 = Z95 * Z95;
            let centre = (s + z2 / (2.0 * n)) / (1.0 + z2 / n);
            let half = Z95 * (s * (1.0 - s) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
            (low, high) = (centre - half, centre + half);
        }
        Some(EloEstimate { elo: elo_from_score(s), low: elo_from_score(low), high: elo_from_score(high) })
    }
}

/// Complete pairs of games on one opening (A on each side once), counted by A's points in the pair: `counts[k]`
/// pairs scored `k` half points (0 to 4), the pentanomial counts (see the module).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairTally {
    pub counts: [u64; 5],
}

impl PairTally {
    /// Count a pair in which A scored `half_points` half points (a win 2, a draw 1, a loss 0, added over
    /// the two games).
    ///
    /// # Panics
    ///
    /// If `half_points` is above 4.
    pub fn add(&mut self, half_points: usize) {
        assert!(half_points <= 4, "a pair of games scores at most 4 half points, not {half_points}");
        self.counts[half_points] += 1;
    }

    pub fn pairs(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The mean score per game over the pairs, `None` before the first pair.
    pub fn score(&self) -> Option<f64> {
        let n = self.pairs();
        (n > 0).then(|| self.counts.iter().enumerate().map(|(k, &c)| k as f64 * c as f64).sum::<f64>() / (4 * n) as f64)
    }

    /// The variance of one pair's score (its points over 2) around the mean, `None` before the first pair.
    pub fn variance(&self) -> Option<f64> {
        let s = self.score()?;
        let n = self.pairs() as f64;
        Some(self.counts.iter().enumerate().map(|(k, &c)| c as f64 * (k as f64 / 4.0 - s).powi(2)).sum::<f64>() / n)
    }

    /// The Elo difference and its 95% interval from the pairs. `None` where the pairs cannot give one: none
    /// yet, no spread among them (every pair scored alike), or a normal interval reaching 0% or 100% (too
    /// few pairs, or nearly a sweep): the game-by-game figure ([`Tally::elo`]) stands alone then.
    pub fn elo(&self) -> Option<EloEstimate> {
        let (s, var) = (self.score()?, self.variance()?);
        let margin = Z95 * (var / self.pairs() as f64).sqrt();
        let (low, high) = (s - margin, s + margin);
        (var > 0.0 && low > 0.0 && high < 1.0).then(|| EloEstimate {
            elo: elo_from_score(s),
            low: elo_from_score(low),
            high: elo_from_score(high),
        })
    }

    /// Why [`PairTally::elo`] gives no figure, in words for the summary (`None` when it gives one).
    pub fn why_no_elo(&self) -> Option<&'static str> {
        if self.elo().is_some() {
            return None;
        }
        let var = self.variance();
        Some(if self.pairs() < 2 {
            "too few pairs"
        } else if var == Some(0.0) {
            "every pair scored alike"
        } else {
            "its interval reaches a score of 0% or 100%: too few pairs, or nearly a sweep"
        })
    }
}

/// An Elo difference with its 95% interval (for a clean sweep, the estimate and the interval's far end are
/// infinite).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EloEstimate {
    pub elo: f64,
    pub low: f64,
    pub high: f64,
}

/// The Elo difference under which the logistic model expects `score` (0 → -∞, 1 → +∞).
pub fn elo_from_score(score: f64) -> f64 {
    if score <= 0.0 {
        f64::NEG_INFINITY
    } else if score >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / score - 1.0).log10()
    }
}

/// The expected score of a player `elo` points stronger, under the logistic model.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// An Elo difference as the summaries print it: a sign, one decimal, `inf` when infinite.
pub fn elo_text(elo: f64) -> String {
    if elo.is_infinite() {
        if elo > 0.0 { "+inf".into() } else { "-inf".into() }
    } else {
        // Adding 0.0 turns -0.0 into 0.0; a value that rounds to zero is written +0.0.
        let shown = if elo.abs() < 0.05 { 0.0 } else { elo + 0.0 };
        format!("{shown:+.1}")
    }
}

/// A sequential probability ratio test between two Elo differences.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    /// The chance of accepting H1 when H0 holds.
    pub alpha: f64,
    /// The chance of accepting H0 when H1 holds.
    pub beta: f64,
}

/// How many times the SPRT counts an outcome never seen (see the module): small beside one sample, so that
/// it moves the test only where nothing else could (all samples alike).
pub const UNSEEN: f64 = 1e-3;

/// The Lagrange multiplier `λ` of the largest-likelihood outcome probabilities with mean `mean` (see the module),
/// for outcomes `(x, weight)` with positive weights, `mean` strictly between the least and the greatest `x`.
fn multiplier(outcomes: &[(f64, f64)], mean: f64) -> f64 {
    // Every 1 + λ·(x - mean) must stay positive: λ lies strictly between -1/(greatest x - mean) and
    // -1/(least x - mean), and the sum runs from +∞ to -∞ across that interval.
    let above = outcomes.iter().map(|&(x, _)| x - mean).fold(f64::MIN, f64::max);
    let below = outcomes.iter().map(|&(x, _)| x - mean).fold(f64::MAX, f64::min);
    debug_assert!(above > 0.0 && below < 0.0, "the mean {mean} is not inside the outcomes");
    let sum = |l: f64| outcomes.iter().map(|&(x, n)| n * (x - mean) / (1.0 + l * (x - mean))).sum::<f64>();
    let (mut low, mut high) = (-1.0 / above, -1.0 / below);
    for _ in 0..200 {
        let middle = 0.5 * (low + high);
        if middle <= low || middle >= high {
            break;
        }
        if sum(middle) > 0.0 {
            low = middle;
        } else {
            high = middle;
        }
    }
    0.5 * (low + high)
}

/// What an SPRT says after some games.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The lower bound was crossed: the difference is `elo0` rather than `elo1`.
    H0,
    /// The upper bound was crossed: the difference is `elo1` rather than `elo0`.
    H1,
    /// Neither bound was crossed: play on.
    Continue,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::H0 => "H0 accepted",
            Verdict::H1 => "H1 accepted",
            Verdict::Continue => "continue",
        }
    }
}

impl Sprt {
    /// Read `elo0,elo1[,alpha,beta]` (alpha and beta 0.05 when left out).
    pub fn parse(text: &str) -> Result<Sprt, String> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if parts.len() != 2 && parts.len() != 4 {
            return Err(format!("`{text}`: expected elo0,elo1 or elo0,elo1,alpha,beta"));
        }
        let number = |t: &str| -> Result<f64, String> {
            t.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| format!("`{t}` is not a number"))
        };
        let elo0 = number(parts[0])?;
        let elo1 = number(parts[1])?;
        if elo0 >= elo1 {
            return Err(format!("`{text}`: elo0 must be below elo1"));
        }
        if elo0.abs() > 1000.0 || elo1.abs() > 1000.0 {
            return Err(format!("`{text}`: Elo bounds must be within ±1000"));
        }
        let (alpha, beta) = if parts.len() == 4 { (number(parts[2])?, number(parts[3])?) } else { (0.05, 0.05) };
        for (name, p) in [("alpha", alpha), ("beta", beta)] {
            if !(p > 0.0 && p < 0.5) {
                return Err(format!("`{text}`: {name} must be between 0 and 0.5"));
            }
        }
        Ok(Sprt { elo0, elo1, alpha, beta })
    }

    /// The bounds `(lower, upper)` the log-likelihood ratio is compared with.
    pub fn bounds(&self) -> (f64, f64) {
        ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
    }

    /// The log-likelihood ratio of H1 against H0 after these games, each game a sample (see the module). 0
    /// before the first game.
    pub fn llr(&self, tally: &Tally) -> f64 {
        self.llr_of(&[(0.0, tally.losses), (0.5, tally.draws), (1.0, tally.wins)])
    }

    /// The log-likelihood ratio of H1 against H0 after these pairs, each pair a sample scoring its points over 2
    /// (see the module). 0 before the first pair.
    pub fn llr_by_pairs(&self, pairs: &PairTally) -> f64 {
        let outcomes: Vec<(f64, u64)> = pairs.counts.iter().enumerate().map(|(k, &c)| (k as f64 / 4.0, c)).collect();
        self.llr_of(&outcomes)
    }

    /// The generalised SPRT's LLR for samples with these outcomes `(x, n(x))`, every `x` in [0, 1] and both 0
    /// and 1 among them.
    fn llr_of(&self, outcomes: &[(f64, u64)]) -> f64 {
        if outcomes.iter().all(|&(_, n)| n == 0) {
            return 0.0;
        }
        let weighted: Vec<(f64, f64)> =
            outcomes.iter().map(|&(x, n)| (x, if n == 0 { UNSEEN } else { n as f64 })).collect();
        let (s0, s1) = (score_from_elo(self.elo0), score_from_elo(self.elo1));
        let (l0, l1) = (multiplier(&weighted, s0), multiplier(&weighted, s1));
        // ln(p1/p0) = ln((1 + λ0·(x - s0)) / (1 + λ1·(x - s1))): the n(x)/N common to both cancels.
        weighted.iter().map(|&(x, n)| n * ((1.0 + l0 * (x - s0)).ln() - (1.0 + l1 * (x - s1)).ln())).sum()
    }

    pub fn verdict(&self, tally: &Tally) -> Verdict {
        self.verdict_of(self.llr(tally))
    }

    pub fn verdict_by_pairs(&self, pairs: &PairTally) -> Verdict {
        self.verdict_of(self.llr_by_pairs(pairs))
    }

    fn verdict_of(&self, llr: f64) -> Verdict {
        let (lower, upper) = self.bounds();
        if llr >= upper {
            Verdict::H1
        } else if llr <= lower {
            Verdict::H0
        } else {
            Verdict::Continue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() <= eps
    }

    #[test]
    fn elo_of_known_scores() {
        // -400·log10(1/0.6 - 1) = -400·log10(2/3) = 400·0.176091 = 70.437
        assert!(close(elo_from_score(0.6), 70.437, 0.001), "{}", elo_from_score(0.6));
        // 75%: -400·log10(1/3) = 400·0.477121 = 190.849
        assert!(close(elo_from_score(0.75), 190.849, 0.001));
        // 10^(-200/400) = 0.316228, 1/(1.316228) = 0.759747
        assert!(close(score_from_elo(200.0), 0.759747, 1e-6));
        assert!(close(elo_from_score(score_from_elo(-123.4)), -123.4, 1e-9));
        assert_eq!(elo_from_score(0.5), 0.0);
        assert_eq!(elo_from_score(1.0), f64::INFINITY);
        assert_eq!(elo_from_score(0.0), f64::NEG_INFINITY);
        assert_eq!(elo_text(f64::INFINITY), "+inf");
        assert_eq!(elo_text(70.437), "+70.4");
        assert_eq!(elo_text(-5.04), "-5.0");
        assert_eq!(elo_text(-0.0), "+0.0");
        assert_eq!(elo_text(-0.04), "+0.0");
    }

    #[test]
    fn interval_of_a_known_result_set() {
        // W 50, D 20, L 30 (100 games): s = 0.6.
        // σ² = (50·0.4² + 20·0.1² + 30·0.6²) / 100 = (8 + 0.2 + 10.8) / 100 = 0.19
        // σ/√N = sqrt(0.0019) = 0.0435890; ×1.959964 = 0.0854328
        // score interval 0.5145672 .. 0.6854328
        // Elo: -400·log10(1/0.5145672 - 1) = -400·log10(0.943373) = +10.125
        //      -400·log10(1/0.6854328 - 1) = -400·log10(0.458932) = +135.301
        let t = Tally::new(50, 20, 30);
        assert_eq!(t.games(), 100);
        assert!(close(t.variance().unwrap(), 0.19, 1e-12));
        let e = t.elo().unwrap();
        assert!(close(e.elo, 70.437, 0.001), "{e:?}");
        assert!(close(e.low, 10.125, 0.01), "{e:?}");
        assert!(close(e.high, 135.301, 0.01), "{e:?}");
        // Every game drawn: no spread, so Wilson's interval (found by an audit: +0.0 to +0.0 after six draws).
        // n = 6, z² = 3.841459: centre 0.5; half = z·sqrt(0.25/6 + z²/144) / (1 + z²/6) = 0.312385;
        // 0.187615 → -400·log10(1/0.187615 - 1) = -400·log10(4.330063) = -254.6.
        let e = Tally::new(0, 6, 0).elo().unwrap();
        assert_eq!(e.elo, 0.0);
        assert!(close(e.high, 254.6, 0.1) && close(e.low, -254.6, 0.1), "{e:?}");
    }

    #[test]
    fn interval_by_pairs_of_a_known_result_set() {
        // 100 pairs scoring 0, ½, 1, 1½, 2 points: 5, 20, 40, 25, 10. Points: 20·0.5 + 40 + 25·1.5 + 20 = 107.5
        // of 200, s = 0.5375. Pair scores x = 0, 0.25, 0.5, 0.75, 1:
        // σp² = (5·0.5375² + 20·0.2875² + 40·0.0375² + 25·0.2125² + 10·0.4625²) / 100
        //     = (1.444531 + 1.653125 + 0.05625 + 1.128906 + 2.139063) / 100 = 0.06421875
        // σp/√P = sqrt(0.0006421875) = 0.0253414; ×1.959964 = 0.0496682
        // score interval 0.4878318 .. 0.5871682
        // Elo: -400·log10(1/0.5375 - 1) = -400·log10(0.860465) = +26.11
        //      -400·log10(1/0.4878318 - 1) = -400·log10(1.049888) = -8.46
        //      -400·log10(1/0.5871682 - 1) = -400·log10(0.703089) = +61.20
        let p = PairTally { counts: [5, 20, 40, 25, 10] };
        assert_eq!(p.pairs(), 100);
        assert!(close(p.score().unwrap(), 0.5375, 1e-12));
        assert!(close(p.variance().unwrap(), 0.06421875, 1e-9), "{:?}", p.variance());
        let e = p.elo().unwrap();
        assert!(close(e.elo, 26.11, 0.01), "{e:?}");
        assert!(close(e.low, -8.46, 0.01), "{e:?}");
        assert!(close(e.high, 61.20, 0.01), "{e:?}");
        // The same 200 games one by one, each 1-point pair a win and a loss, each ½ or 1½ a draw and a result:
        // W = 40 + 25 + 2·10 = 85, D = 20 + 25 = 45, L = 2·5 + 20 + 40 = 70. The same score, and a wider
        // interval: the 1-1 pairs' wins and losses count as spread.
        let games = Tally::new(85, 45, 70);
        assert!(close(games.score().unwrap(), 0.5375, 1e-12));
        let g = games.elo().unwrap();
        assert!(g.high - g.low > e.high - e.low, "{g:?} {e:?}");
    }

    #[test]
    fn pairs_without_an_interval() {
        assert_eq!(PairTally::default().elo(), None);
        let mut alike = PairTally::default();
        alike.add(2);
        alike.add(2);
        assert_eq!(alike.score(), Some(0.5));
        assert_eq!(alike.elo(), None, "no spread among the pairs");
        let mut few = PairTally::default();
        few.add(4);
        few.add(3);
        assert_eq!(few.elo(), None, "the normal interval reaches 100%");
        // The summary says which: one pair, pairs all alike, an interval reaching 100% (99 pairs won 2-0 and one
        // 1½-½: a score of 99.75%, the interval's upper end 100.24%).
        let mut one = PairTally::default();
        one.add(3);
        assert_eq!(one.why_no_elo(), Some("too few pairs"));
        assert_eq!(alike.why_no_elo(), Some("every pair scored alike"));
        let mut nearly = PairTally { counts: [0, 0, 0, 1, 99] };
        assert!(nearly.why_no_elo().is_some_and(|why| why.contains("nearly a sweep")));
        // Two more pairs of 1 point and two of 1½ (a score of 98.32%): the interval ends below 100% (99.85%).
        for half_points in [2, 2, 3, 3] {
            nearly.add(half_points);
        }
        assert!(nearly.elo().is_some() && nearly.why_no_elo().is_none());
    }

    #[test]
    #[should_panic(expected = "at most 4 half points")]
    fn a_pair_scores_at_most_two_points() {
        PairTally::default().add(5);
    }

    #[test]
    fn an_even_match_and_a_clean_sweep() {
        let even = Tally::new(3, 4, 3).elo().unwrap();
        assert_eq!(even.elo, 0.0);
        assert!(close(even.low, -even.high, 1e-9));
        assert_eq!(Tally::default().elo(), None);
        // Sweeps: the estimate is infinite, the interval's other end Wilson's. 20 losses: the score is below
        // (z²/20)/(1 + z²/20) = 0.161132, so the Elo below -400·log10(1/0.161132 - 1) = -286.61.
        let lost = Tally::new(0, 0, 20).elo().unwrap();
        assert_eq!(lost.elo, f64::NEG_INFINITY);
        assert!(close(lost.high, -286.614, 0.01) && lost.low == f64::NEG_INFINITY, "{lost:?}");
        let won = Tally::new(40, 0, 0).elo().unwrap();
        assert_eq!(won.elo, f64::INFINITY);
        assert!(close(won.low, 407.026, 0.01) && won.high == f64::INFINITY, "{won:?}");
        // Nearly a sweep: 37 of 40 won. The normal interval's upper end passes 100%, so the interval is Wilson's:
        // centre (0.925 + z²/80) / (1 + z²/40) = 0.887761, half z·√(0.925·0.075/40 + z²/6400) / (1 + z²/40) =
        // 0.086403, so 0.801358 (+242.3; the normal lower end was 0.8434, +292.5) to 0.974164 (+630.6).
        let nearly = Tally::new(37, 0, 3).elo().unwrap();
        assert!(close(nearly.high, 630.563, 0.01), "{nearly:?}");
        assert!(close(nearly.low, 242.3, 0.1), "{nearly:?}");
        // 199 wins and a draw in 200 games (s = 0.9975): the normal interval reaches 100.24%; Wilson's lower end
        // (0.9975 + z²/400) / (1 + z²/200) - z·√(0.9975·0.0025/200 + z²/160000) / (1 + z²/200) = 0.976510
        // (+647.5), not the normal 0.992612 (+851.3).
        let near = Tally::new(199, 1, 0).elo().unwrap();
        assert!(close(near.low, 647.52, 0.01), "{near:?}");
    }

    // The expected LLRs below were computed apart from this code: the largest likelihood under each hypothesis
    // found by a general constrained optimiser (scipy's SLSQP, from random starts) maximising Σ n(x)·ln p(x)
    // over the outcome probabilities with Σ p = 1 and Σ p·x = s_h, unseen outcomes counted 0.001 times.

    #[test]
    fn sprt_bounds_and_llr_of_known_result_sets() {
        let sprt = Sprt::parse("0,10").unwrap();
        // ln(0.05/0.95) = -2.944439, ln(0.95/0.05) = +2.944439
        let (lo, hi) = sprt.bounds();
        assert!(close(lo, -2.944439, 1e-6) && close(hi, 2.944439, 1e-6));

        // W 50, D 20, L 30: s = 0.6, σ² = 0.19 (above); the normal approximation says 0.70275.
        let t = Tally::new(50, 20, 30);
        assert!(close(sprt.llr(&t), 0.66837, 1e-3), "{}", sprt.llr(&t));
        assert_eq!(sprt.verdict(&t), Verdict::Continue);

        // W 300, D 400, L 300 (1000 games): s = 0.5 (normal approximation -0.68995).
        let even = Tally::new(300, 400, 300);
        assert!(close(sprt.llr(&even), -0.69013, 1e-3), "{}", sprt.llr(&even));

        // The same proportions over 5000 games: five times the LLR, below the lower bound.
        let long = Tally::new(1500, 2000, 1500);
        assert!(close(sprt.llr(&long), -3.45065, 1e-3), "{}", sprt.llr(&long));
        assert_eq!(sprt.verdict(&long), Verdict::H0);

        // W 500, D 300, L 200 with elo0 = 0, elo1 = 50 and alpha = beta = 0.1: far past ±ln(0.9/0.1) = ±2.197225.
        let strong = Sprt::parse("0, 50, 0.1, 0.1").unwrap();
        let t = Tally::new(500, 300, 200);
        assert!(close(strong.llr(&t), 47.4704, 0.01), "{}", strong.llr(&t));
        assert!(close(strong.bounds().1, 2.197225, 1e-6));
        assert_eq!(strong.verdict(&t), Verdict::H1);

        // No games: no evidence. Five draws: a little against +10 (the draws fit 0 best).
        assert_eq!(sprt.llr(&Tally::default()), 0.0);
        assert!(close(sprt.llr(&Tally::new(0, 5, 0)), -0.14073, 1e-3), "{}", sprt.llr(&Tally::new(0, 5, 0)));
    }

    #[test]
    fn sprt_by_pairs() {
        let sprt = Sprt::parse("0,10").unwrap();
        // The pairs of `interval_by_pairs_of_a_known_result_set` (normal approximation 0.67897).
        let mut p = PairTally { counts: [5, 20, 40, 25, 10] };
        assert!(close(sprt.llr_by_pairs(&p), 0.67158, 1e-3), "{}", sprt.llr_by_pairs(&p));
        assert_eq!(sprt.verdict_by_pairs(&p), Verdict::Continue);
        // The same 200 games one by one (W 85, D 45, L 70): less evidence than the pairs' tighter spread gives.
        assert!(close(sprt.llr(&Tally::new(85, 45, 70)), 0.45036, 1e-3));
        // Ten times the pairs: ten times the LLR, past the upper bound.
        for k in 0..5 {
            p.counts[k] *= 10;
        }
        assert!(close(sprt.llr_by_pairs(&p), 6.7158, 1e-2), "{}", sprt.llr_by_pairs(&p));
        assert_eq!(sprt.verdict_by_pairs(&p), Verdict::H1);
        assert_eq!(sprt.llr_by_pairs(&PairTally::default()), 0.0);
    }

    #[test]
    fn pairs_all_alike_are_evidence() {
        // Pairs that all score the same have no spread; the normal approximation's LLR was 0 for them, so
        // forty straight wins never ended a test. Each won pair is about ln(s1/s0) of evidence.
        let sprt = Sprt::parse("0,10").unwrap();
        let won = |pairs: u64| PairTally { counts: [0, 0, 0, 0, pairs] };
        assert!(close(sprt.llr_by_pairs(&won(1)), 0.028424, 1e-4), "{}", sprt.llr_by_pairs(&won(1)));
        assert!(close(sprt.llr_by_pairs(&won(20)), 0.56742, 1e-3), "{}", sprt.llr_by_pairs(&won(20)));
        let wide = Sprt::parse("0,50").unwrap();
        assert!(close(wide.llr_by_pairs(&won(20)), 2.67208, 1e-3), "{}", wide.llr_by_pairs(&won(20)));
        assert_eq!(wide.verdict_by_pairs(&won(20)), Verdict::Continue);
        assert_eq!(wide.verdict_by_pairs(&won(23)), Verdict::H1);
        let first = (1..1000).find(|&n| sprt.verdict_by_pairs(&won(n)) == Verdict::H1).unwrap();
        assert_eq!(first, 104, "a 0,10 test of straight wins ends after 104 pairs (scipy: LLR 2.9503)");
        // Pairs all drawn even (1 point each): evidence for H0, 100 of them past its bound.
        let alike = |pairs: u64| PairTally { counts: [0, 0, pairs, 0, 0] };
        assert!(close(sprt.llr_by_pairs(&alike(2)), -0.053834, 1e-4), "{}", sprt.llr_by_pairs(&alike(2)));
        assert!(close(sprt.llr_by_pairs(&alike(100)), -2.91118, 1e-3), "{}", sprt.llr_by_pairs(&alike(100)));
        assert_eq!(sprt.verdict_by_pairs(&alike(102)), Verdict::H0);
        // Straight losses mirror the wins.
        let lost = PairTally { counts: [20, 0, 0, 0, 0] };
        assert!(sprt.llr_by_pairs(&lost) < -0.5);
    }

    #[test]
    fn bad_sprt_arguments_are_named() {
        assert!(Sprt::parse("10,0").unwrap_err().contains("below"));
        assert!(Sprt::parse("0").unwrap_err().contains("elo0,elo1"));
        assert!(Sprt::parse("0,x").unwrap_err().contains("`x`"));
        assert!(Sprt::parse("0,5,0.7,0.05").unwrap_err().contains("alpha"));
        assert!(Sprt::parse("0,5,0.05,0").unwrap_err().contains("beta"));
        assert!(Sprt::parse("0,nan").is_err());
    }
}
