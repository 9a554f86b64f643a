//! The logistic fit of a game's evaluation values to self-play positions.
//!
//! Each position's evaluation is a linear function of the values ([`Tunable::linear_eval`]), computed once
//! when the data is read. The fit finds the scale K for which sigmoid(K · eval) of the present values best
//! predicts the results, then minimises the mean squared error of sigmoid(K · eval) against
//! `lambda · result + (1 - lambda) · sigmoid(K · score)` with Adam (full batch by default, updating only the
//! values a batch touches), and keeps the values of the epoch with the lowest error on held-out positions:
//! blocks of a thousand lines, one in ten, so that held-out positions come from games the fit has not seen
//! (self-play writes a game's positions together).

use std::io::BufRead;

use super::{LinearEval, Tunable};
use crate::matchplay::Rng;

/// Training positions as the fitter keeps them: a flat list of terms and, per position, its slice of it.
#[derive(Default)]
pub struct Samples {
    heads: Vec<Head>,
    terms: Vec<(u32, f32)>,
}

#[derive(Clone, Copy)]
struct Head {
    constant: f32,
    result: f32,
    score: f32,
    start: u32,
    end: u32,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// Add a position: its linear evaluation, the result (1 / 0.5 / 0 from the first side's view) and the
    /// search's score from the first side's view.
    pub fn push(&mut self, eval: &LinearEval, result: f32, score: f32) {
        let start = self.terms.len() as u32;
        self.terms.extend_from_slice(&eval.terms);
        self.heads.push(Head { constant: eval.constant, result, score, start, end: self.terms.len() as u32 });
    }

    fn terms_of(&self, h: &Head) -> &[(u32, f32)] {
        &self.terms[h.start as usize..h.end as usize]
    }

    fn eval(&self, h: &Head, p: &[f32]) -> f32 {
        h.constant + self.terms_of(h).iter().map(|&(i, c)| c * p[i as usize]).sum::<f32>()
    }

    /// The mean squared error at values `p`, scale `k` and result share `lambda`.
    pub fn error(&self, p: &[f32], k: f32, lambda: f32) -> f64 {
        let total: f64 = self
            .heads
            .iter()
            .map(|h| {
                let e = (target(h, k, lambda) - sigmoid(k * self.eval(h, p))) as f64;
                e * e
            })
            .sum();
        total / self.heads.len().max(1) as f64
    }
}

fn target(h: &Head, k: f32, lambda: f32) -> f32 {
    lambda * h.result + (1.0 - lambda) * sigmoid(k * h.score)
}

pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Read self-play files (`POSITION;result;score` lines) into training and held-out positions; positions
/// whose evaluation is not linear are counted and left out. Errors name the file and line.
pub fn load<G: Tunable>(paths: &[String]) -> Result<(Samples, Samples, usize), String> {
    let (mut train, mut valid, mut skipped) = (Samples::default(), Samples::default(), 0usize);
    let mut eval = LinearEval::default();
    let mut split = HeldOut::default();
    read_positions::<G>(paths, &mut |game, result, score| {
        eval.clear();
        if !game.linear_eval(&mut eval) {
            skipped += 1;
        } else if split.next_is_held_out() {
            valid.push(&eval, result, score);
        } else {
            train.push(&eval, result, score);
        }
    })?;
    Ok((train, valid, skipped))
}

/// Every position of the self-play files `paths` in order, with its result and score, to `each`. Errors name
/// the file and line.
pub fn read_positions<G: crate::game::Game>(paths: &[String], each: &mut dyn FnMut(G, f32, f32)) -> Result<(), String> {
    for path in paths {
        let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
        for (line_no, line) in std::io::BufReader::new(file).lines().enumerate() {
            let at = || format!("{path}:{}", line_no + 1);
            let line = line.map_err(|e| format!("{}: {e}", at()))?;
            let (position, result, score) = parse_line(&line).map_err(|e| format!("{}: {e}", at()))?;
            let game = G::parse_position(position, None).map_err(|e| format!("{}: {e}", at()))?;
            each(game, result, score);
        }
    }
    Ok(())
}

/// Which kept positions are held out: every tenth block of 1,000 (whole games, as self-play writes them).
#[derive(Default)]
pub struct HeldOut(usize);

impl HeldOut {
    /// Whether the next kept position is held out.
    pub fn next_is_held_out(&mut self) -> bool {
        self.0 += 1;
        (self.0 / 1000) % 10 == 9
    }
}

/// One `POSITION;result;score` line: the position's text, the result (1, ½ or 0) and the score.
pub fn parse_line(line: &str) -> Result<(&str, f32, f32), String> {
    let mut parts = line.rsplitn(3, ';');
    let (Some(score), Some(result), Some(position)) = (parts.next(), parts.next(), parts.next()) else {
        return Err("expected POSITION;result;score".into());
    };
    let result = match result.trim() {
        "1.0" | "1" => 1.0,
        "0.5" => 0.5,
        "0.0" | "0" => 0.0,
        other => return Err(format!("result `{other}`: expected 1.0, 0.5 or 0.0")),
    };
    let score: f32 = score.trim().parse().map_err(|_| format!("score `{score}` is not a number"))?;
    if !score.is_finite() {
        return Err(format!("score `{score}` is not a finite number"));
    }
    Ok((position, result, score))
}

/// The K that minimises the error of the results alone at values `p`.
pub fn fit_k(data: &Samples, p: &[f32]) -> f32 {
    let mut best = (f64::INFINITY, 0.0f32);
    let mut k = 0.0005f32;
    while k <= 0.05 {
        let e = data.error(p, k, 1.0);
        if e < best.0 {
            best = (e, k);
        }
        k *= 1.05;
    }
    best.1
}

/// The fit's settings.
#[derive(Clone, Debug)]
pub struct Options {
    pub epochs: usize,
    /// The result's share of the target; the rest is the search's score.
    pub lambda: f64,
    /// L2 penalty pulling every value toward where it started.
    pub l2: f64,
    /// Adam's step.
    pub rate: f64,
    /// Positions a step (0: all of them).
    pub batch: usize,
    /// Values that stay where they start.
    pub frozen: Vec<bool>,
}

/// What the fit found.
pub struct Fitted {
    pub values: Vec<f32>,
    pub k: f32,
    /// Training and held-out error at the start and at the best epoch.
    pub start_error: (f64, f64),
    pub best_error: (f64, f64),
    pub best_epoch: usize,
}

/// Fit values starting from `start` (see the module). `report` hears each epoch's training and held-out
/// error.
pub fn fit(
    train: &mut Samples,
    valid: &Samples,
    start: Vec<f32>,
    options: &Options,
    report: &mut dyn FnMut(usize, f64, f64),
) -> Fitted {
    let count = start.len();
    let origin = start.clone();
    let mut p = start;
    let k = fit_k(train, &p);
    let lambda = options.lambda as f32;
    let start_error = (train.error(&p, k, lambda), valid.error(&p, k, lambda));
    report(0, start_error.0, start_error.1);
    let (mut m, mut v, mut grad) = (vec![0f32; count], vec![0f32; count], vec![0f32; count]);
    let mut touched: Vec<u32> = Vec::new();
    let mut seen = vec![false; count];
    let (b1, b2, rate, l2) = (0.9f32, 0.999f32, options.rate as f32, options.l2 as f32);
    let mut step = 0i32;
    let mut rng = Rng(99);
    let mut best = (start_error, 0usize, p.clone());
    let batch_size = if options.batch == 0 { train.len().max(1) } else { options.batch };
    for epoch in 1..=options.epochs {
        if batch_size < train.len() {
            for i in (1..train.heads.len()).rev() {
                let j = rng.below(i + 1);
                train.heads.swap(i, j);
            }
        }
        for b in 0..train.heads.len().div_ceil(batch_size) {
            let batch = &train.heads[b * batch_size..((b + 1) * batch_size).min(train.heads.len())];
            step += 1;
            for h in batch {
                let out = sigmoid(k * train.eval(h, &p));
                let e = out - target(h, k, lambda);
                let g = 2.0 * e * out * (1.0 - out) * k / batch.len() as f32;
                for &(i, c) in train.terms_of(h) {
                    let i = i as usize;
                    if !seen[i] {
                        seen[i] = true;
                        touched.push(i as u32);
                    }
                    grad[i] += g * c;
                }
            }
            let (c1, c2) = (1.0 - b1.powi(step), 1.0 - b2.powi(step));
            for &i in &touched {
                let i = i as usize;
                seen[i] = false;
                let g = grad[i] + l2 * (p[i] - origin[i]);
                grad[i] = 0.0;
                if options.frozen.get(i).copied().unwrap_or(false) {
                    continue;
                }
                m[i] = b1 * m[i] + (1.0 - b1) * g;
                v[i] = b2 * v[i] + (1.0 - b2) * g * g;
                p[i] -= rate * (m[i] / c1) / ((v[i] / c2).sqrt() + 1e-8);
            }
            touched.clear();
        }
        let (e, ve) = (train.error(&p, k, lambda), valid.error(&p, k, lambda));
        report(epoch, e, ve);
        if ve < best.0.1 {
            best = ((e, ve), epoch, p.clone());
        }
    }
    Fitted { values: best.2, k, start_error, best_error: best.0, best_epoch: best.1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Positions whose evaluation is `constant + x · p[0]`, results drawn from sigmoid(k0 · (constant + x ·
    /// w0)).
    fn synthetic(k0: f32, w0: f32, n: usize, seed: u64) -> Samples {
        let mut rng = Rng(seed);
        let mut s = Samples::default();
        for i in 0..n {
            let x = (i % 7) as f32 - 3.0;
            let constant = (i % 11) as f32 * 80.0 - 400.0;
            let truth = sigmoid(k0 * (constant + x * w0));
            let result = if (rng.unit() as f32) < truth { 1.0 } else { 0.0 };
            s.push(&LinearEval { constant, terms: vec![(0, x)] }, result, 0.0);
        }
        s
    }

    #[test]
    fn fit_k_finds_the_scale_that_generated_results() {
        let data = synthetic(0.01, 0.0, 6000, 5);
        let k = fit_k(&data, &[0.0]);
        assert!((k - 0.01).abs() < 0.002, "fitted {k}, generated with 0.01");
    }

    #[test]
    fn the_fit_recovers_a_value_that_generated_results() {
        // The constant part spreads the evaluations far more than the value does, so that K, fitted before
        // the value, is close to the truth.
        let mut train = synthetic(0.01, 30.0, 40_000, 7);
        let valid = synthetic(0.01, 30.0, 10_000, 8);
        let options = Options { epochs: 300, lambda: 1.0, l2: 0.0, rate: 1.0, batch: 0, frozen: vec![] };
        let fitted = fit(&mut train, &valid, vec![0.0], &options, &mut |_, _, _| {});
        assert!((fitted.values[0] - 30.0).abs() < 6.0, "fitted {}, generated with 30", fitted.values[0]);
        assert!(fitted.best_error.1 < fitted.start_error.1);
        // A frozen value stays.
        let options = Options { frozen: vec![true], ..options };
        let fitted = fit(&mut train, &valid, vec![5.0], &options, &mut |_, _, _| {});
        assert_eq!(fitted.values[0], 5.0);
    }
}
