//! Fitting international draughts' pattern values (`src/games/draughts/patterns.rs`) on kibitz's own games.
//!
//! ```text
//! cargo run --release --example draughts_tune -- gen OUT [games 10000] [nodes per move 3000] [seed 1] [threads 2]
//! cargo run --release --example draughts_tune -- tune DATA... -o OUT [--epochs 300] [--lambda 0.7] [--l2 0] [--rate 1] [--batch 0 = all]
//! ```
//!
//! `gen` plays games of kibitz against itself at a fixed node budget per move, each from 4 to 9 random legal
//! plies (redrawn while a short search finds the position lopsided), adjudicated by the game's own rules, by
//! both sides' searches agreeing on a decisive score or on a long run of drawish ones, and by a ply cap. It
//! appends one line `FEN;result;score` per quiet position (neither side can capture): the result 1 / 0.5 / 0
//! from White's view, and the search's score of the position in centi-men from White's view.
//!
//! `tune` reads those lines, keeps every position whose score is not scaled toward a draw by the evaluation,
//! holds out every tenth for validation, fits the logistic scale K of the present evaluation, and fits the
//! pattern values (a full-board and an empty-board value per region configuration, on top of the hand-written
//! terms) by minimising the squared error of sigmoid(K · eval) against `lambda · result + (1 - lambda) ·
//! sigmoid(K · score)`, with Adam (full batch by default; an optional L2 penalty), and keeps the values of the
//! epoch with the lowest validation error. It writes the weights file (the format is
//! documented in `patterns.rs`) to OUT.

use std::io::{BufRead, BufWriter, Write};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use kibitz::game::{Game, Outcome, Score, Side};
use kibitz::games::draughts::{
    Draughts, PATTERN_CONFIGS, PATTERN_FULL, PATTERN_REGIONS, PATTERN_STORED, read_pattern_table, write_pattern_table,
};
use kibitz::matchplay::Rng;
use kibitz::search::{Limits, SearchOptions, TranspositionTable, search};

fn positional<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> Result<T> {
    match args.get(i) {
        None => Ok(default),
        Some(s) => s.parse().map_err(|_| anyhow::anyhow!("bad argument `{s}`")),
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("gen") => {
            let out = args.get(1).context("gen OUT [games] [nodes] [seed] [threads]")?;
            let games = positional(&args, 2, 10_000)?;
            let nodes = positional(&args, 3, 3000)?;
            let seed = positional(&args, 4, 1)?;
            let threads = positional(&args, 5, 2)?;
            generate(out, games, nodes, seed, threads)
        }
        Some("tune") => tune(&TuneArgs::parse(&args[1..])?),
        _ => bail!("usage: draughts_tune gen OUT [games] [nodes] [seed] [threads] | tune DATA... -o OUT [options]"),
    }
}

// ---------------------------------------------------------------------------------------------------------
// Self-play

/// A position at least this decisive (centi-men) for this many plies in a row ends the game.
const WIN_SCORE: i32 = 500;
const WIN_PLIES: usize = 8;
/// After `DRAW_FROM` plies, this many plies in a row within `DRAW_SCORE` of zero end the game in a draw.
const DRAW_SCORE: i32 = 12;
const DRAW_PLIES: usize = 20;
const DRAW_FROM: usize = 60;
const MAX_PLIES: usize = 300;

fn outcome_value(outcome: Outcome) -> f64 {
    match outcome {
        Outcome::Win(Side::First) => 1.0,
        Outcome::Win(Side::Second) => 0.0,
        Outcome::Draw => 0.5,
    }
}

/// Play `game` to its end against itself at `nodes` per move; the result from White's view and the quiet
/// positions with their scores from White's view.
fn play_game(mut game: Draughts, nodes: u64, tt: &Arc<TranspositionTable>) -> (f64, Vec<(String, i32)>) {
    tt.clear();
    let stop = Arc::new(AtomicBool::new(false));
    let (limits, options) = (Limits::nodes(nodes), SearchOptions::default());
    let mut legal = Vec::new();
    let mut quiet = Vec::new();
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
        if ply >= MAX_PLIES {
            break 0.5;
        }
        let side = game.side_to_move();
        let done = search(&game, &limits, &options, tt, &stop, &mut |_| {});
        let Some(best) = done.best else { break 0.5 };
        match done.lines.first().map_or(Score::Cp(0), |l| l.score) {
            Score::Mate(n) => break if (n > 0) == (side == Side::First) { 1.0 } else { 0.0 },
            Score::Cp(cp) => {
                let w = if side == Side::First { cp } else { -cp };
                if game.is_quiet() {
                    quiet.push((game.to_fen(), w));
                }
                let sign = w.signum();
                decisive_run = if w.abs() >= WIN_SCORE && sign == last_sign {
                    decisive_run + 1
                } else {
                    usize::from(w.abs() >= WIN_SCORE)
                };
                last_sign = sign;
                if decisive_run >= WIN_PLIES {
                    break if w > 0 { 1.0 } else { 0.0 };
                }
                drawish_run = if w.abs() <= DRAW_SCORE { drawish_run + 1 } else { 0 };
                if ply >= DRAW_FROM && drawish_run >= DRAW_PLIES {
                    break 0.5;
                }
            }
        }
        game.make(best);
        ply += 1;
    };
    (result, quiet)
}

/// `plies` random legal moves from the start, redrawn until the game goes on and a short search scores the
/// position within `max_score`.
fn random_opening(rng: &mut Rng, max_score: i32, tt: &Arc<TranspositionTable>) -> Draughts {
    let stop = Arc::new(AtomicBool::new(false));
    let mut legal = Vec::new();
    'again: loop {
        let plies = 4 + rng.below(6);
        let mut game = Draughts::start();
        for _ in 0..plies {
            game.generate_moves(&mut legal);
            if legal.is_empty() {
                continue 'again;
            }
            game.make(legal[rng.below(legal.len())]);
        }
        game.generate_moves(&mut legal);
        if legal.is_empty() {
            continue;
        }
        tt.clear();
        let done = search(&game, &Limits::nodes(3000), &SearchOptions::default(), tt, &stop, &mut |_| {});
        if let Some(Score::Cp(cp)) = done.lines.first().map(|l| l.score)
            && cp.abs() <= max_score
        {
            return game;
        }
    }
}

fn generate(out: &str, games: usize, nodes: u64, seed: u64, threads: usize) -> Result<()> {
    let file = std::fs::OpenOptions::new().create(true).append(true).open(out).with_context(|| out.to_string())?;
    let file = Mutex::new(BufWriter::new(file));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let tally = Mutex::new((0usize, 0.0f64));
    let start = Instant::now();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|t| {
                let (file, next, tally) = (&file, &next, &tally);
                scope.spawn(move || -> Result<()> {
                    let tt = Arc::new(TranspositionTable::new(16));
                    loop {
                        let g = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if g >= games {
                            return Ok(());
                        }
                        let mut rng = Rng(seed.wrapping_mul(1_000_003).wrapping_add(g as u64));
                        let opening = random_opening(&mut rng, 80, &tt);
                        let (result, quiet) = play_game(opening, nodes, &tt);
                        {
                            let mut f = file.lock().unwrap();
                            for (fen, score) in &quiet {
                                writeln!(f, "{fen};{result:.1};{score}")?;
                            }
                            f.flush()?;
                        }
                        let mut tally = tally.lock().unwrap();
                        tally.0 += quiet.len();
                        tally.1 += result;
                        if (g + 1) % 100 == 0 {
                            eprintln!(
                                "[{t}] {} games, {} positions, White scored {:.3}, {:.0} s",
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
        workers.into_iter().try_for_each(|w| w.join().map_err(|_| anyhow::anyhow!("a game thread panicked"))?)
    })
}

// ---------------------------------------------------------------------------------------------------------
// Tuning

struct TuneArgs {
    data: Vec<String>,
    out: String,
    epochs: usize,
    lambda: f64,
    l2: f64,
    rate: f64,
    batch: usize,
}

impl TuneArgs {
    fn parse(args: &[String]) -> Result<TuneArgs> {
        let mut t =
            TuneArgs { data: Vec::new(), out: String::new(), epochs: 300, lambda: 0.7, l2: 0.0, rate: 1.0, batch: 0 };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = || it.next().with_context(|| format!("{a} needs a value"));
            match a.as_str() {
                "-o" => t.out = value()?.clone(),
                "--epochs" => t.epochs = value()?.parse()?,
                "--lambda" => t.lambda = value()?.parse()?,
                "--l2" => t.l2 = value()?.parse()?,
                "--rate" => t.rate = value()?.parse()?,
                "--batch" => t.batch = value()?.parse()?,
                s if s.starts_with('-') => bail!("unknown option {s}"),
                s => t.data.push(s.to_string()),
            }
        }
        if t.data.is_empty() || t.out.is_empty() {
            bail!("tune DATA... -o OUT [--epochs N] [--lambda L] [--l2 X] [--rate R] [--batch B]");
        }
        Ok(t)
    }
}

const PARAMS: usize = PATTERN_STORED * PATTERN_CONFIGS * 2;

/// One training position.
struct Sample {
    /// The hand-written terms from White's view.
    hand: f32,
    /// The share of the full-board value (men / FULL, at most 1).
    full: f32,
    /// The result from White's view, and the search's score from White's view.
    result: f32,
    score: f32,
    terms: [(u32, i8); PATTERN_REGIONS],
}

impl Sample {
    /// The evaluation from White's view with parameters `p` (`2i` full-board, `2i + 1` empty-board value).
    fn eval(&self, p: &[f32]) -> f32 {
        let (mut full, mut empty) = (0.0, 0.0);
        for &(i, s) in &self.terms {
            full += s as f32 * p[2 * i as usize];
            empty += s as f32 * p[2 * i as usize + 1];
        }
        self.hand + full * self.full + empty * (1.0 - self.full)
    }

    fn target(&self, k: f32, lambda: f32) -> f32 {
        lambda * self.result + (1.0 - lambda) * sigmoid(k * self.score)
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

fn load(paths: &[String]) -> Result<(Vec<Sample>, Vec<Sample>, usize)> {
    let (mut train, mut valid, mut skipped) = (Vec::new(), Vec::new(), 0usize);
    let mut n = 0usize;
    for path in paths {
        let file = std::fs::File::open(path).with_context(|| path.clone())?;
        for (line_no, line) in std::io::BufReader::new(file).lines().enumerate() {
            let line = line?;
            let mut parts = line.split(';');
            let (Some(fen), Some(result), Some(score)) = (parts.next(), parts.next(), parts.next()) else {
                bail!("{path}:{}: expected FEN;result;score", line_no + 1);
            };
            let game = Draughts::from_fen(fen).map_err(|e| anyhow::anyhow!("{path}:{}: {e}", line_no + 1))?;
            let Some(t) = game.training_terms() else {
                skipped += 1;
                continue;
            };
            let sample = Sample {
                hand: t.hand as f32,
                full: t.men.min(PATTERN_FULL) as f32 / PATTERN_FULL as f32,
                result: match result.trim() {
                    "1.0" | "1" => 1.0,
                    "0.5" => 0.5,
                    "0.0" | "0" => 0.0,
                    other => bail!("{path}:{}: result `{other}`: expected 1.0, 0.5 or 0.0", line_no + 1),
                },
                score: score.trim().parse().with_context(|| format!("{path}:{}: score", line_no + 1))?,
                terms: t.patterns,
            };
            // Blocks of a thousand lines (a dozen games: a game's positions are written together) go to
            // validation, one in ten, so that held-out positions come from games the fit has not seen.
            n += 1;
            if (n / 1000) % 10 == 9 { valid.push(sample) } else { train.push(sample) }
        }
    }
    Ok((train, valid, skipped))
}

fn error(data: &[Sample], p: &[f32], k: f32, lambda: f32) -> f64 {
    let total: f64 = data
        .iter()
        .map(|s| {
            let e = (s.target(k, lambda) - sigmoid(k * s.eval(p))) as f64;
            e * e
        })
        .sum();
    total / data.len().max(1) as f64
}

/// The K that minimises the error of the results alone at parameters `p`.
fn fit_k(data: &[Sample], p: &[f32]) -> f32 {
    let mut best = (f64::INFINITY, 0.0f32);
    let mut k = 0.0005f32;
    while k <= 0.05 {
        let e = error(data, p, k, 1.0);
        if e < best.0 {
            best = (e, k);
        }
        k *= 1.05;
    }
    best.1
}

fn tune(args: &TuneArgs) -> Result<()> {
    let start = Instant::now();
    let (mut train, valid, skipped) = load(&args.data)?;
    eprintln!(
        "{} training and {} validation positions, {skipped} drawish-scaled skipped ({:.1} s)",
        train.len(),
        valid.len(),
        start.elapsed().as_secs_f64()
    );
    let mut p = vec![0f32; PARAMS];
    let k = fit_k(&train, &p);
    let lambda = args.lambda as f32;
    let (e0, v0) = (error(&train, &p, k, lambda), error(&valid, &p, k, lambda));
    eprintln!("K = {k:.6}; hand-written terms alone: training error {e0:.6}, validation error {v0:.6}");

    let (mut m, mut v) = (vec![0f32; PARAMS], vec![0f32; PARAMS]);
    let mut grad = vec![0f32; PARAMS];
    let mut touched: Vec<u32> = Vec::new();
    let mut seen = vec![false; PARAMS / 2];
    let (b1, b2, rate, l2) = (0.9f32, 0.999f32, args.rate as f32, args.l2 as f32);
    let mut step = 0i32;
    let mut rng = Rng(99);
    let mut best = (v0, p.clone());
    let batch_size = if args.batch == 0 { train.len().max(1) } else { args.batch };
    for epoch in 1..=args.epochs {
        // Shuffle, then one pass of mini-batches (by default one batch of everything). Only the values a batch
        // touches are updated (lazy Adam).
        for i in (1..train.len()).rev() {
            if batch_size >= train.len() {
                break;
            }
            let j = (rng.unit() * (i + 1) as f64) as usize;
            train.swap(i, j.min(i));
        }
        for batch in train.chunks(batch_size) {
            step += 1;
            for s in batch {
                let eval = s.eval(&p);
                let out = sigmoid(k * eval);
                let e = out - s.target(k, lambda);
                let g = 2.0 * e * out * (1.0 - out) * k / batch.len() as f32;
                for &(i, sign) in &s.terms {
                    let i = i as usize;
                    if !seen[i] {
                        seen[i] = true;
                        touched.push(i as u32);
                    }
                    grad[2 * i] += g * sign as f32 * s.full;
                    grad[2 * i + 1] += g * sign as f32 * (1.0 - s.full);
                }
            }
            let (c1, c2) = (1.0 - b1.powi(step), 1.0 - b2.powi(step));
            for &i in &touched {
                let i = i as usize;
                seen[i] = false;
                for j in [2 * i, 2 * i + 1] {
                    let g = grad[j] + l2 * p[j];
                    grad[j] = 0.0;
                    m[j] = b1 * m[j] + (1.0 - b1) * g;
                    v[j] = b2 * v[j] + (1.0 - b2) * g * g;
                    p[j] -= rate * (m[j] / c1) / ((v[j] / c2).sqrt() + 1e-8);
                }
            }
            touched.clear();
        }
        let (e, ve) = (error(&train, &p, k, lambda), error(&valid, &p, k, lambda));
        eprintln!(
            "epoch {epoch}: training error {e:.6}, validation error {ve:.6} ({:.0} s)",
            start.elapsed().as_secs_f64()
        );
        if ve < best.0 {
            best = (ve, p.clone());
        }
    }
    let p = best.1;
    let values: Vec<[i16; 2]> = (0..PARAMS / 2)
        .map(|i| [p[2 * i].round().clamp(-2000.0, 2000.0) as i16, p[2 * i + 1].round().clamp(-2000.0, 2000.0) as i16])
        .collect();
    let bytes = write_pattern_table(&values);
    read_pattern_table(&bytes).map_err(|e| anyhow::anyhow!("the written table does not read back: {e}"))?;
    let rounded: Vec<f32> = values.iter().flat_map(|v| [v[0] as f32, v[1] as f32]).collect();
    eprintln!(
        "rounded weights: training error {:.6}, validation error {:.6} (hand-written alone {e0:.6}, {v0:.6}); \
         {} of {} values non-zero",
        error(&train, &rounded, k, lambda),
        error(&valid, &rounded, k, lambda),
        rounded.iter().filter(|x| **x != 0.0).count(),
        PARAMS
    );
    std::fs::write(&args.out, bytes).with_context(|| args.out.clone())?;
    eprintln!("wrote {}", args.out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_evaluates_as_the_engine_does() {
        // With every value 1, a position's patterns add (regions 0-7) - (regions 8-15) per phase.
        let game = Draughts::from_fen("W:W31,32,33,40,45:B1,2,3,19,20").unwrap();
        let t = game.training_terms().unwrap();
        let (hand, terms) = (t.hand, t.patterns);
        let s = Sample { hand: hand as f32, full: t.men as f32 / PATTERN_FULL as f32, result: 0.5, score: 0.0, terms };
        let zero = vec![0f32; PARAMS];
        assert_eq!(s.eval(&zero), hand as f32);
        let ones = vec![1f32; PARAMS];
        let sum: i32 = terms.iter().map(|t| t.1 as i32).sum();
        assert_eq!(sum, 0, "eight regions count for White and eight against");
        assert_eq!(s.eval(&ones), hand as f32);
    }

    #[test]
    fn fit_k_finds_the_scale_that_generated_results() {
        let game = Draughts::start();
        let terms = game.training_terms().unwrap().patterns;
        let k0 = 0.01f32;
        let mut rng = Rng(5);
        let data: Vec<Sample> = (0..6000)
            .map(|i| {
                let hand = (i % 11) as f32 * 40.0 - 200.0;
                let result = if (rng.unit() as f32) < sigmoid(k0 * hand) { 1.0 } else { 0.0 };
                Sample { hand, full: 1.0, result, score: 0.0, terms }
            })
            .collect();
        let k = fit_k(&data, &vec![0f32; PARAMS]);
        assert!((k - k0).abs() < 0.2 * k0, "fitted {k}, generated with {k0}");
    }
}
