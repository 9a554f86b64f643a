//! Chess weight sets against each other, in one process.
//!
//! ```text
//! cargo run --release --example texel -- match A B [pairs 200] [nodes per move 8000] [seed 7]
//! ```
//!
//! `match` plays weight set A against weight set B (`weights.rs` files as `examples/tune.rs` writes them for
//! chess, the square corrections zero in a file that has none; or `builtin` for the weights compiled in) at a
//! fixed node budget per move, every random opening once with each colour, and prints wins, draws and losses
//! of A and an Elo estimate with a 95% interval from the game pairs. (This example also generated and fitted the first chess weights; both are now
//! `examples/tune.rs`'s `gen chess` and `tune chess`, the one tuner of every game.)

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use kibitz::game::Side;
use kibitz::games::chess::{Chess, EVAL_WEIGHT_COUNT as COUNT, S, SQUARES, Squares, Tables, WEIGHTS, Weights};
use kibitz::matchplay::Rng;
use kibitz::search::{SearchOptions, TranspositionTable};
use kibitz::tuning::Tunable;
use kibitz::tuning::selfplay::{Settings, play_game_between, random_opening};

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> Result<T> {
    match args.get(i) {
        None => Ok(default),
        Some(s) => s.parse().map_err(|_| anyhow::anyhow!("bad argument `{s}`")),
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("match") => {
            let (a, b) = (args.get(1).context("match A B")?, args.get(2).context("match A B")?);
            play_match(a, b, arg(&args, 3, 200)?, arg(&args, 4, 8000)?, arg(&args, 5, 7)?)
        }
        _ => bail!("usage: texel match A B [pairs] [nodes] [seed]"),
    }
}

/// Weights and square corrections from a `weights.rs` file (the `COUNT` pairs `S(mg, eg)` in order, then the
/// 384 corrections; an older file with fewer weights and no corrections reads with the rest zero), or
/// `builtin`.
fn read_weights(spec: &str) -> Result<(Weights, Squares)> {
    if spec == "builtin" {
        return Ok((WEIGHTS, SQUARES));
    }
    let text = std::fs::read_to_string(spec).with_context(|| spec.to_string())?;
    let mut values = Vec::new();
    for part in text.split("S(").skip(1) {
        let inside = part.split(')').next().unwrap_or_default();
        let (a, b) = inside.split_once(',').with_context(|| format!("{spec}: `S({inside})`"))?;
        values.push(S(a.trim().parse()?, b.trim().parse()?));
    }
    let mut squares = [[S(0, 0); 64]; 6];
    if values.len() == COUNT + 384 {
        for (i, &s) in values[COUNT..].iter().enumerate() {
            squares[i / 64][i % 64] = s;
        }
        values.truncate(COUNT);
    } else if values.len() <= COUNT {
        // A file from before the later weights (appended to `NAMES`) existed: those are zero.
        values.resize(COUNT, S(0, 0));
    } else {
        bail!("{spec}: {} values, expected {COUNT} weights and 0 or 384 square corrections", values.len());
    }
    let w = values.try_into().map_err(|v: Vec<S>| anyhow::anyhow!("{spec}: {} weights, expected {COUNT}", v.len()))?;
    Ok((w, squares))
}

// ---------------------------------------------------------------------------------------------------------
// Matches

/// Elo difference for a score fraction.
fn elo(score: f64) -> f64 {
    let s = score.clamp(1e-6, 1.0 - 1e-6);
    -400.0 * (1.0 / s - 1.0).log10()
}

fn play_match(a: &str, b: &str, pairs: usize, nodes: u64, seed: u64) -> Result<()> {
    let (wa, sa) = read_weights(a)?;
    let (wb, sb) = read_weights(b)?;
    let ta: &'static Tables = Box::leak(Box::new(Tables::new(&wa, &sa)));
    let tb: &'static Tables = Box::leak(Box::new(Tables::new(&wb, &sb)));
    let (tt_a, tt_b) = (Arc::new(TranspositionTable::new(16)), Arc::new(TranspositionTable::new(16)));
    // Openings of 8 random plies within 100 centipawns; the games adjudicated as self-play's.
    let settings =
        Settings { opening_min: 8, opening_spread: 1, opening_max_score: 100, ..Chess::self_play_settings() };
    let mut rng = Rng(seed);
    let (mut wins, mut draws, mut losses) = (0, 0, 0);
    let mut pair_scores = Vec::with_capacity(pairs);
    let start = Instant::now();
    for n in 1..=pairs {
        let opening: Chess = random_opening(&mut rng, &settings, &tt_a);
        let mut pair = 0.0;
        for a_white in [true, false] {
            let (tables, tts) = if a_white { ([ta, tb], [&tt_a, &tt_b]) } else { ([tb, ta], [&tt_b, &tt_a]) };
            let prepare = |g: &Chess, side: Side| g.clone().with_tables(tables[side.index()]);
            let options = SearchOptions::default();
            let r = play_game_between(opening.clone(), [nodes, nodes], &settings, tts, &prepare, [&options, &options])
                .result;
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
    fn weights_source_reads_back() {
        let path = std::env::temp_dir().join(format!("texel-weights-{}.rs", std::process::id()));
        let mut w = WEIGHTS;
        w[7] = S(-3, 17);
        let mut squares = SQUARES;
        squares[5][6] = S(12, -4);
        let values: Vec<f32> =
            w.iter().chain(squares.iter().flatten()).flat_map(|s| [s.0 as f32, s.1 as f32]).collect();
        std::fs::write(&path, Chess::write_parameters(&values).unwrap()).unwrap();
        assert_eq!(read_weights(path.to_str().unwrap()).unwrap(), (w, squares));
        // An older file, with fewer weights and no square corrections, reads with the rest zero.
        let short: String = w[..33].iter().map(|s| format!("S({}, {}),\n", s.0, s.1)).collect();
        std::fs::write(&path, short).unwrap();
        let mut padded = w;
        padded[33..].fill(S(0, 0));
        assert_eq!(read_weights(path.to_str().unwrap()).unwrap(), (padded, [[S(0, 0); 64]; 6]));
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
