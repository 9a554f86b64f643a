//! The "Win At Chess" tactics suite: searches every position of an EPD file for a fixed time on one thread
//! and counts the positions where the engine's move is one of the `bm` moves.
//!
//! ```text
//! cargo run --release --example chess_wac -- [seconds per position, default 1] [EPD file]
//! ```
//!
//! The default file is `tests/data/chess/wac.epd` (300 positions, about five minutes at 1 s).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use kibitz::games::chess::Chess;
use kibitz::search::{Limits, SearchOptions, TranspositionTable, search};

/// A SAN move without check marks and annotations, for comparison.
fn bare(san: &str) -> &str {
    san.trim_end_matches(['+', '#', '!', '?'])
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seconds: f64 = args.first().map(|s| s.parse()).transpose().context("seconds per position")?.unwrap_or(1.0);
    let path =
        args.get(1).cloned().unwrap_or_else(|| format!("{}/tests/data/chess/wac.epd", env!("CARGO_MANIFEST_DIR")));
    let text = std::fs::read_to_string(&path).with_context(|| format!("read {path}"))?;
    let tt = Arc::new(TranspositionTable::new(64));
    let stop = Arc::new(AtomicBool::new(false));
    let limits = Limits::movetime(Duration::from_secs_f64(seconds));
    let (mut solved, mut total) = (0, 0);
    let mut failed = Vec::new();
    let start = Instant::now();
    let mut nodes = 0u64;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Some((fen, ops)) = line.split_once(" bm ") else { bail!("no bm in `{line}`") };
        let (bm, rest) = ops.split_once(';').context("bm without `;`")?;
        let id = rest.split('"').nth(1).unwrap_or("?").to_string();
        let game = Chess::from_fen(fen).with_context(|| format!("{id}: FEN"))?;
        let wanted: Vec<&str> = bm.split_whitespace().map(bare).collect();
        tt.clear();
        let done = search(&game, &limits, &SearchOptions::default(), &tt, &stop, &mut |_| {});
        nodes += done.nodes;
        let played = done.best.map(|m| game.move_to_san(m)).unwrap_or_default();
        total += 1;
        if wanted.contains(&bare(&played)) {
            solved += 1;
        } else {
            failed.push(format!("{id} {played} (bm {bm})"));
        }
    }
    for f in &failed {
        println!("missed {f}");
    }
    let elapsed = start.elapsed().as_secs_f64();
    println!(
        "solved {solved}/{total} ({:.1}%) at {seconds} s per position; {:.0} nodes/s",
        100.0 * solved as f64 / total.max(1) as f64,
        nodes as f64 / elapsed.max(1e-9)
    );
    Ok(())
}
