//! Texel tuning of the chess evaluation on self-play positions we generate ourselves.
//!
//! ```text
//! cargo run --release --example texel -- gen OUT [games 3000] [nodes per move 6000] [seed 1]
//! cargo run --release --example texel -- tune DATA [OUT weights.rs] [epochs 3000]
//! cargo run --release --example texel -- match A B [pairs 200] [nodes per move 8000] [seed 7]
//! ```
//!
//! `gen` plays games of kibitz against itself at a fixed node budget per move, each from 6 to 10 random legal
//! plies (rejected when the position is already lopsided), adjudicated by mate scores, by both sides agreeing
//! on a decisive score, by a long run of drawish scores and by the game's own draw rules, and writes one line
//! `FEN;result` (1.0 / 0.5 / 0.0 from White's view) per quiet position: not in check, the move played not a
//! capture or promotion, and no capture that wins material by static exchange.
//!
//! `tune` computes each position's evaluation as a linear function of the 66 weights once
//! ([`kibitz::games::chess::trace`]), holds out every tenth position for validation, fits the logistic scale
//! K of the present weights, minimises the mean squared error of sigmoid(K·eval) against the results by
//! gradient descent (Adam) at that K, rounds the weights, polishes them by Texel's local search (±1 steps), and
//! writes them as Rust source for `WEIGHTS` in `src/games/chess/eval.rs`.
//!
//! `match` plays weight set A against weight set B (files written by `tune`, or `builtin` for the weights
//! compiled in) at a fixed node budget per move, every random opening once with each colour, and prints
//! wins, draws and losses of A and an Elo estimate with a 95% interval from the game pairs.

use std::io::{BufRead, BufWriter, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use kibitz::game::{Game, Outcome, Score, Side};
use kibitz::games::chess::{
    Chess, EVAL_WEIGHT_COUNT as COUNT, EVAL_WEIGHT_NAMES as NAMES, Move, PHASE_MAX, S, Tables, Trace, WEIGHTS, Weights,
    trace,
};
use kibitz::matchplay::Rng;
use kibitz::search::{Limits, SearchOptions, TranspositionTable, search};

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> Result<T> {
    match args.get(i) {
        None => Ok(default),
        Some(s) => s.parse().map_err(|_| anyhow::anyhow!("bad argument `{s}`")),
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("gen") => {
            let out = args.get(1).context("gen OUT [games] [nodes] [seed]")?;
            generate(out, arg(&args, 2, 3000)?, arg(&args, 3, 6000)?, arg(&args, 4, 1)?)
        }
        Some("tune") => {
            let data = args.get(1).context("tune DATA [OUT] [epochs]")?;
            let out = args.get(2).cloned().unwrap_or_else(|| "weights.rs".to_string());
            tune(data, &out, arg(&args, 3, 3000)?)
        }
        Some("match") => {
            let (a, b) = (args.get(1).context("match A B")?, args.get(2).context("match A B")?);
            play_match(a, b, arg(&args, 3, 200)?, arg(&args, 4, 8000)?, arg(&args, 5, 7)?)
        }
        _ => bail!(
            "usage: texel gen OUT [games] [nodes] [seed] | tune DATA [OUT] [epochs] | match A B [pairs] [nodes] [seed]"
        ),
    }
}

// ---------------------------------------------------------------------------------------------------------
// Self-play

/// Plays one move for the side to move with the given tables and table of transpositions.
struct Player {
    tables: &'static Tables,
    tt: Arc<TranspositionTable>,
}

/// A game's end: the result from White's view, and the positions to record (FEN).
struct Played {
    result: f64,
    quiet: Vec<String>,
    plies: usize,
}

/// A position at least this decisive for this many plies in a row, by both players' searches, ends the game.
const WIN_SCORE: i32 = 1000;
const WIN_PLIES: usize = 6;
/// After `DRAW_FROM` plies, this many plies in a row within `DRAW_SCORE` of zero end the game in a draw.
const DRAW_SCORE: i32 = 10;
const DRAW_PLIES: usize = 16;
const DRAW_FROM: usize = 80;
const MAX_PLIES: usize = 400;

fn white_view(score: i32, side: Side) -> i32 {
    if side == Side::First { score } else { -score }
}

/// A position where the static evaluation is a fair judge: not in check and no capture that wins material.
fn is_quiet(game: &Chess, noisy: &mut Vec<Move>) -> bool {
    if game.in_check() {
        return false;
    }
    game.generate_noisy(noisy);
    noisy.iter().all(|&m| game.see(m) <= 0)
}

/// Play `game` to its end between `players` (White, Black) at `nodes` per move.
fn play_game(mut game: Chess, players: &[Player; 2], nodes: u64, record: bool) -> Played {
    for p in players {
        p.tt.clear();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let limits = Limits::nodes(nodes);
    let options = SearchOptions::default();
    let (mut legal, mut noisy) = (Vec::new(), Vec::new());
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
        let player = &players[if side == Side::First { 0 } else { 1 }];
        let mover = game.clone().with_tables(player.tables);
        let done = search(&mover, &limits, &options, &player.tt, &stop, &mut |_| {});
        let Some(best) = done.best else { break 0.5 };
        let score = done.lines.first().map_or(Score::Cp(0), |l| l.score);
        match score {
            Score::Mate(n) => {
                let stm_wins = n > 0;
                break if stm_wins == (side == Side::First) { 1.0 } else { 0.0 };
            }
            Score::Cp(cp) => {
                let w = white_view(cp, side);
                if record && !game.is_noisy(best) && is_quiet(&game, &mut noisy) {
                    quiet.push(game.to_fen());
                }
                let sign = w.signum();
                if w.abs() >= WIN_SCORE && sign == last_sign {
                    decisive_run += 1;
                } else {
                    decisive_run = usize::from(w.abs() >= WIN_SCORE);
                }
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
    Played { result, quiet, plies: ply }
}

fn outcome_value(outcome: Outcome) -> f64 {
    match outcome {
        Outcome::Win(Side::First) => 1.0,
        Outcome::Win(Side::Second) => 0.0,
        Outcome::Draw => 0.5,
    }
}

/// A start position: `plies` random legal moves from the initial position, redrawn until the game is not over
/// and a short search with the built-in weights scores it within `max_score` centipawns.
fn random_opening(rng: &mut Rng, plies: usize, max_score: i32, tt: &Arc<TranspositionTable>) -> Chess {
    let stop = Arc::new(AtomicBool::new(false));
    let mut legal = Vec::new();
    'again: loop {
        let mut game = Chess::start();
        for _ in 0..plies {
            game.generate_moves(&mut legal);
            if legal.is_empty() {
                continue 'again;
            }
            game.make(legal[rng.below(legal.len())]);
        }
        game.generate_moves(&mut legal);
        if legal.is_empty() || game.rule_end(0).is_some() {
            continue;
        }
        tt.clear();
        let done = search(&game, &Limits::nodes(2000), &SearchOptions::default(), tt, &stop, &mut |_| {});
        match done.lines.first().map(|l| l.score) {
            Some(Score::Cp(cp)) if cp.abs() <= max_score => return game,
            _ => continue,
        }
    }
}

fn generate(out: &str, games: usize, nodes: u64, seed: u64) -> Result<()> {
    let file = std::fs::OpenOptions::new().create(true).append(true).open(out).with_context(|| out.to_string())?;
    let mut file = BufWriter::new(file);
    let mut rng = Rng(seed);
    let tables: &'static Tables = Box::leak(Box::new(Tables::new(&WEIGHTS)));
    let players = [
        Player { tables, tt: Arc::new(TranspositionTable::new(16)) },
        Player { tables, tt: Arc::new(TranspositionTable::new(16)) },
    ];
    let start = Instant::now();
    let (mut positions, mut score, mut plies) = (0usize, 0.0f64, 0usize);
    for g in 0..games {
        let opening_plies = 6 + rng.below(5);
        let game = random_opening(&mut rng, opening_plies, 200, &players[0].tt);
        let played = play_game(game, &players, nodes, true);
        for fen in &played.quiet {
            writeln!(file, "{fen};{:.1}", played.result)?;
        }
        file.flush()?;
        positions += played.quiet.len();
        score += played.result;
        plies += played.plies;
        if (g + 1) % 20 == 0 || g + 1 == games {
            eprintln!(
                "{} games, {positions} positions, White scored {:.3}, {:.0} plies/game, {:.0} s",
                g + 1,
                score / (g + 1) as f64,
                plies as f64 / (g + 1) as f64,
                start.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------
// Tuning

/// Number of free parameters: a middlegame and an endgame value per weight.
const PARAMS: usize = 2 * COUNT;

/// Every position's evaluation as sparse coefficients of the parameters (tapered already), from White's view.
struct Data {
    /// (parameter, coefficient), position after position.
    terms: Vec<(u16, f32)>,
    /// Where each position's terms start (one more entry than positions).
    start: Vec<usize>,
    /// The game result from White's view.
    result: Vec<f32>,
    /// Knights, bishops, rooks, queens of both sides and whether each side has pawns (the drawish-ending rule).
    scale_info: Vec<([[i32; 4]; 2], [bool; 2])>,
}

/// Parameter `2i` is weight i's middlegame value, `2i + 1` its endgame value.
fn to_params(w: &Weights) -> Vec<f64> {
    w.iter().flat_map(|s| [f64::from(s.0), f64::from(s.1)]).collect()
}

fn to_weights(p: &[f64]) -> Weights {
    let mut w = [S(0, 0); COUNT];
    for (i, s) in w.iter_mut().enumerate() {
        *s = S(p[2 * i].round() as i32, p[2 * i + 1].round() as i32);
    }
    w
}

impl Data {
    fn new() -> Data {
        Data { terms: Vec::new(), start: vec![0], result: Vec::new(), scale_info: Vec::new() }
    }

    fn len(&self) -> usize {
        self.result.len()
    }

    fn push(&mut self, t: &Trace, result: f32) {
        let mgf = t.phase as f32 / PHASE_MAX as f32;
        let egf = 1.0 - mgf;
        for i in 0..COUNT {
            if t.mg[i] != 0.0 && mgf != 0.0 {
                self.terms.push((2 * i as u16, t.mg[i] * mgf));
            }
            if t.eg[i] != 0.0 && egf != 0.0 {
                self.terms.push((2 * i as u16 + 1, t.eg[i] * egf));
            }
        }
        self.start.push(self.terms.len());
        self.result.push(result);
        self.scale_info.push((t.pieces, t.has_pawns));
    }

    /// The unscaled evaluation of position `k` from White's view.
    fn raw(&self, k: usize, p: &[f64]) -> f64 {
        self.terms[self.start[k]..self.start[k + 1]].iter().map(|&(i, c)| f64::from(c) * p[i as usize]).sum()
    }

    /// The drawish-ending factor of position `k` for an unscaled score (as the evaluation computes it).
    fn scale(&self, k: usize, w: &Weights, raw: f64) -> f64 {
        let (pieces, has_pawns) = self.scale_info[k];
        let strong = if raw >= 0.0 { 0 } else { 1 };
        let non_pawn = |c: usize| (0..4).map(|q| pieces[c][q] * w[1 + q].0).sum::<i32>();
        if !has_pawns[strong] && non_pawn(strong) - non_pawn(1 - strong) < w[3].0 { 0.25 } else { 1.0 }
    }

    /// The evaluation of position `k` from White's view with parameters `p`.
    fn eval(&self, k: usize, p: &[f64], w: &Weights) -> f64 {
        let raw = self.raw(k, p);
        raw * self.scale(k, w, raw)
    }

    /// Mean squared error of sigmoid(K·eval) against the results.
    fn error(&self, p: &[f64], k: f64) -> f64 {
        let w = to_weights(p);
        let total: f64 = (0..self.len())
            .map(|i| {
                let e = f64::from(self.result[i]) - sigmoid(k * self.eval(i, p, &w));
                e * e
            })
            .sum();
        total / self.len().max(1) as f64
    }

    /// The error and its gradient with respect to the parameters.
    fn gradient(&self, p: &[f64], k: f64, grad: &mut [f64]) -> f64 {
        grad.iter_mut().for_each(|g| *g = 0.0);
        let w = to_weights(p);
        let mut total = 0.0;
        for i in 0..self.len() {
            let raw = self.raw(i, p);
            let scale = self.scale(i, &w, raw);
            let s = sigmoid(k * raw * scale);
            let e = f64::from(self.result[i]) - s;
            total += e * e;
            // d(e²)/dp = -2 e s (1 - s) K scale · coefficient
            let f = -2.0 * e * s * (1.0 - s) * k * scale;
            for &(j, c) in &self.terms[self.start[i]..self.start[i + 1]] {
                grad[j as usize] += f * f64::from(c);
            }
        }
        let n = self.len().max(1) as f64;
        grad.iter_mut().for_each(|g| *g /= n);
        total / n
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The K that minimises the error of parameters `p`: a scan, then golden-section search around the best.
fn fit_k(data: &Data, p: &[f64]) -> f64 {
    let mut best = (f64::INFINITY, 0.0);
    let mut k = 0.0005;
    while k <= 0.05 {
        let e = data.error(p, k);
        if e < best.0 {
            best = (e, k);
        }
        k *= 1.1;
    }
    let (mut lo, mut hi) = (best.1 / 1.1, best.1 * 1.1);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..40 {
        let a = hi - g * (hi - lo);
        let b = lo + g * (hi - lo);
        if data.error(p, a) < data.error(p, b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    (lo + hi) / 2.0
}

/// Parse `FEN;result` lines into training and validation sets (every tenth position validates).
fn load(path: &str) -> Result<(Data, Data)> {
    let file = std::fs::File::open(path).with_context(|| path.to_string())?;
    let (mut train, mut valid) = (Data::new(), Data::new());
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line?;
        let Some((fen, result)) = line.rsplit_once(';') else { bail!("line {}: no `;`", n + 1) };
        let result: f32 = result.trim().parse().with_context(|| format!("line {}: result", n + 1))?;
        let game = Chess::from_fen(fen).map_err(|e| anyhow::anyhow!("line {}: {e}", n + 1))?;
        let t = trace(game.board());
        if n % 10 == 9 { valid.push(&t, result) } else { train.push(&t, result) }
    }
    Ok((train, valid))
}

/// The weights as Rust source for `WEIGHTS`.
fn weights_source(w: &Weights) -> String {
    let mut s = String::from("pub const WEIGHTS: Weights = [\n");
    for (i, v) in w.iter().enumerate() {
        s += &format!("    S({}, {}), // {}\n", v.0, v.1, NAMES[i]);
    }
    s + "];\n"
}

/// Weights from a file written by [`weights_source`] (the `COUNT` pairs `S(mg, eg)` in order), or `builtin`.
fn read_weights(spec: &str) -> Result<Weights> {
    if spec == "builtin" {
        return Ok(WEIGHTS);
    }
    let text = std::fs::read_to_string(spec).with_context(|| spec.to_string())?;
    let mut w = Vec::new();
    for part in text.split("S(").skip(1) {
        let inside = part.split(')').next().unwrap_or_default();
        let (a, b) = inside.split_once(',').with_context(|| format!("{spec}: `S({inside})`"))?;
        w.push(S(a.trim().parse()?, b.trim().parse()?));
    }
    w.try_into().map_err(|v: Vec<S>| anyhow::anyhow!("{spec}: {} weights, expected {COUNT}", v.len()))
}

fn tune(path: &str, out: &str, epochs: usize) -> Result<()> {
    let start = Instant::now();
    let (train, valid) = load(path)?;
    eprintln!(
        "{} training and {} validation positions ({:.1} s)",
        train.len(),
        valid.len(),
        start.elapsed().as_secs_f64()
    );
    let initial = to_params(&WEIGHTS);
    let k = fit_k(&train, &initial);
    let (e0, v0) = (train.error(&initial, k), valid.error(&initial, k));
    eprintln!("K = {k:.6}; present weights: training error {e0:.6}, validation error {v0:.6}");

    // Adam, full batch, at a step of about one centipawn.
    let mut p = initial.clone();
    let (mut m, mut v, mut grad) = (vec![0.0; PARAMS], vec![0.0; PARAMS], vec![0.0; PARAMS]);
    let (rate, b1, b2) = (1.0, 0.9, 0.999);
    for epoch in 1..=epochs {
        let e = train.gradient(&p, k, &mut grad);
        for j in 0..PARAMS {
            m[j] = b1 * m[j] + (1.0 - b1) * grad[j];
            v[j] = b2 * v[j] + (1.0 - b2) * grad[j] * grad[j];
            let mh = m[j] / (1.0 - b1.powi(epoch as i32));
            let vh = v[j] / (1.0 - b2.powi(epoch as i32));
            p[j] -= rate * mh / (vh.sqrt() + 1e-12);
        }
        if epoch % 100 == 0 || epoch == epochs {
            eprintln!(
                "epoch {epoch}: training error {e:.6}, validation error {:.6} ({:.0} s)",
                valid.error(&p, k),
                start.elapsed().as_secs_f64()
            );
        }
    }

    // Integers, then Texel's local search: one step up or down per parameter while the error falls.
    let mut p: Vec<f64> = p.iter().map(|x| x.round()).collect();
    let mut best = train.error(&p, k);
    for round in 1..=4 {
        let mut improved = false;
        for j in 0..PARAMS {
            for step in [1.0, -1.0] {
                p[j] += step;
                let e = train.error(&p, k);
                if e < best {
                    best = e;
                    improved = true;
                    break;
                }
                p[j] -= step;
            }
        }
        eprintln!("local search round {round}: training error {best:.6}, validation error {:.6}", valid.error(&p, k));
        if !improved {
            break;
        }
    }
    let w = to_weights(&p);
    let k2 = fit_k(&train, &p);
    eprintln!(
        "tuned weights: training error {:.6}, validation error {:.6} at K = {k:.6} (was {e0:.6}, {v0:.6}); \
         refitted K = {k2:.6}",
        train.error(&p, k),
        valid.error(&p, k)
    );
    for (i, name) in NAMES.iter().enumerate() {
        eprintln!("{name:>22} {:>5} {:>5} -> {:>5} {:>5}", WEIGHTS[i].0, WEIGHTS[i].1, w[i].0, w[i].1);
    }
    std::fs::write(out, weights_source(&w)).with_context(|| out.to_string())?;
    eprintln!("wrote {out}");
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------
// Matches

/// Elo difference for a score fraction.
fn elo(score: f64) -> f64 {
    let s = score.clamp(1e-6, 1.0 - 1e-6);
    -400.0 * (1.0 / s - 1.0).log10()
}

fn play_match(a: &str, b: &str, pairs: usize, nodes: u64, seed: u64) -> Result<()> {
    let ta: &'static Tables = Box::leak(Box::new(Tables::new(&read_weights(a)?)));
    let tb: &'static Tables = Box::leak(Box::new(Tables::new(&read_weights(b)?)));
    let player = |t| Player { tables: t, tt: Arc::new(TranspositionTable::new(16)) };
    let (pa, pb) = (player(ta), player(tb));
    let mut rng = Rng(seed);
    let (mut wins, mut draws, mut losses) = (0, 0, 0);
    let mut pair_scores = Vec::with_capacity(pairs);
    let start = Instant::now();
    for n in 1..=pairs {
        let opening = random_opening(&mut rng, 8, 100, &pa.tt);
        let mut pair = 0.0;
        for a_white in [true, false] {
            let players = if a_white { [&pa, &pb] } else { [&pb, &pa] };
            let players = [
                Player { tables: players[0].tables, tt: players[0].tt.clone() },
                Player { tables: players[1].tables, tt: players[1].tt.clone() },
            ];
            let r = play_game(opening.clone(), &players, nodes, false).result;
            let score = if a_white { r } else { 1.0 - r };
            match score {
                s if s > 0.75 => wins += 1,
                s if s < 0.25 => losses += 1,
                _ => draws += 1,
            }
            pair += score;
        }
        pair_scores.push(pair / 2.0);
        if n % 10 == 0 || n == pairs {
            let (e, lo, hi) = elo_interval(&pair_scores);
            eprintln!(
                "{} games: A +{wins} ={draws} -{losses}, Elo {e:+.1} [{lo:+.1}, {hi:+.1}] ({:.0} s)",
                2 * n,
                start.elapsed().as_secs_f64()
            );
        }
    }
    let (e, lo, hi) = elo_interval(&pair_scores);
    let games = wins + draws + losses;
    println!(
        "{a} vs {b}: {games} games at {nodes} nodes/move: +{wins} ={draws} -{losses} ({:.1}%), \
         Elo {e:+.1}, 95% [{lo:+.1}, {hi:+.1}]",
        100.0 * (wins as f64 + draws as f64 / 2.0) / games.max(1) as f64
    );
    Ok(())
}

/// Elo estimate and 95% interval from the mean score of game pairs (each opening with both colours).
fn elo_interval(pairs: &[f64]) -> (f64, f64, f64) {
    let n = pairs.len().max(1) as f64;
    let mean = pairs.iter().sum::<f64>() / n;
    let var = pairs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0).max(1.0);
    let se = (var / n).sqrt();
    (elo(mean), elo(mean - 1.96 * se), elo(mean + 1.96 * se))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_k_recovers_the_scale_of_a_synthetic_set() {
        // Positions whose only term is a pawn more or less, with results drawn from sigmoid(K0 · eval).
        let k0 = 0.008;
        let mut data = Data::new();
        let mut rng = Rng(3);
        let p = to_params(&WEIGHTS);
        for i in 0..4000 {
            let pawns = (i % 9) as f32 - 4.0;
            data.terms.push((1, pawns)); // the endgame value of a pawn, at phase 0
            data.start.push(data.terms.len());
            let prob = sigmoid(k0 * f64::from(pawns) * p[1]);
            let r = (rng.next_u64() % 1_000_000) as f64 / 1e6;
            data.result.push(if r < prob { 1.0 } else { 0.0 });
            data.scale_info.push(([[0; 4]; 2], [true; 2]));
        }
        let k = fit_k(&data, &p);
        assert!((k - k0).abs() < 0.15 * k0, "fitted K {k}, generated with {k0}");
        // The error is lowest at the fitted K.
        assert!(data.error(&p, k) < data.error(&p, 2.0 * k0));
        assert!(data.error(&p, k) < data.error(&p, 0.5 * k0));
    }

    #[test]
    fn sparse_terms_equal_the_evaluation() {
        let fens = [
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "4k3/8/8/8/8/8/8/3NK3 w - - 0 1",
            "2r3k1/pp3pp1/4p2p/3p4/3P4/P3P2P/1P3PP1/3R2K1 b - - 0 1",
        ];
        let mut data = Data::new();
        for fen in fens {
            data.push(&trace(Chess::from_fen(fen).unwrap().board()), 0.5);
        }
        let p = to_params(&WEIGHTS);
        for (k, fen) in fens.iter().enumerate() {
            let game = Chess::from_fen(fen).unwrap();
            let stm = game.static_eval();
            let white = if game.side_to_move() == Side::First { stm } else { -stm };
            let linear = data.eval(k, &p, &WEIGHTS);
            assert!((linear - f64::from(white)).abs() <= 3.0, "{fen}: linear {linear}, evaluation {white}");
        }
        // The bare minor pieces are scaled down by the drawish-ending rule in both.
        assert!(data.eval(3, &p, &WEIGHTS) < 150.0);
    }

    #[test]
    fn weights_source_reads_back() {
        let path = std::env::temp_dir().join(format!("texel-weights-{}.rs", std::process::id()));
        let mut w = WEIGHTS;
        w[7] = S(-3, 17);
        std::fs::write(&path, weights_source(&w)).unwrap();
        assert_eq!(read_weights(path.to_str().unwrap()).unwrap(), w);
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn elo_of_even_and_winning_scores() {
        assert!(elo(0.5).abs() < 1e-9);
        assert!((elo(0.75) - 190.8).abs() < 0.1);
        let (e, lo, hi) = elo_interval(&[0.5, 1.0, 0.5, 0.0, 0.5, 1.0]);
        assert!(lo < e && e < hi && e > 0.0);
    }
}
