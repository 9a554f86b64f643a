//! `kibitz bench [<game>...]`: search each game's fixed positions to a fixed depth and print the speed.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use serde_json::json;

use kibitz::game::Game;
use kibitz::games::GameKind;
use kibitz::search::{self, Limits, SearchOptions, TranspositionTable};
use kibitz::with_game;

use super::{nps, score_text};

#[derive(Args)]
pub struct BenchArgs {
    /// Games to measure (default: all).
    pub games: Vec<String>,
    /// Search depth per position (default: each game's bench depth).
    #[arg(long)]
    pub depth: Option<u32>,
    /// Threads per search (1 to 256).
    #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
    pub threads: usize,
    /// Transposition table size in MiB (1 to 65536).
    #[arg(long, default_value_t = 64, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=65536))]
    pub hash_mb: usize,
    /// One JSON object per game.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchArgs) -> Result<()> {
    let kinds: Vec<GameKind> = if args.games.is_empty() {
        GameKind::ALL.to_vec()
    } else {
        args.games.iter().map(|g| g.parse()).collect::<Result<_, _>>()?
    };
    for kind in kinds {
        with_game!(kind, G => bench_game::<G>(args)?);
    }
    Ok(())
}

fn bench_game<G: Game>(args: &BenchArgs) -> Result<()> {
    let depth = args.depth.unwrap_or(G::BENCH_DEPTH);
    let options = SearchOptions { threads: args.threads.max(1), currmove_after: Duration::ZERO, ..Default::default() };
    let stop = Arc::new(AtomicBool::new(false));
    let mut nodes = 0u64;
    let mut time = Duration::ZERO;
    let mut out = std::io::stdout().lock();
    // One table, emptied before each position: the node count stays reproducible, and the timed searches
    // do not include the kernel's zeroing of a new table's pages on their first write (a quarter of the
    // time of `bench chess --depth 12` when each position had a table of its own).
    let tt = Arc::new(TranspositionTable::new(args.hash_mb));
    for (i, text) in G::BENCH_POSITIONS.iter().enumerate() {
        let g = G::parse_position(text, None).with_context(|| format!("bench position {}", i + 1))?;
        tt.clear();
        let start = Instant::now();
        let done = search::search(&g, &Limits::depth(depth), &options, &tt, &stop, &mut |_| {});
        let elapsed = start.elapsed();
        nodes += done.nodes;
        time += elapsed;
        if !args.json {
            let best = done.best.map(|m| g.format_move(m)).unwrap_or_else(|| "(none)".into());
            writeln!(
                out,
                "{} position {:>2} depth {} nodes {:>10} time_ms {:>6} nps {:>9} best {best} score {}",
                G::NAME,
                i + 1,
                done.depth,
                done.nodes,
                elapsed.as_millis(),
                nps(done.nodes, elapsed),
                done.lines.first().map(|l| score_text(l.score)).unwrap_or_default()
            )?;
        }
    }
    let line = if args.json {
        json!({ "game": G::NAME, "positions": G::BENCH_POSITIONS.len(), "depth": depth, "nodes": nodes,
            "time_ms": time.as_millis() as u64, "nps": nps(nodes, time) })
        .to_string()
    } else {
        format!("{} total nodes {nodes} time_ms {} nps {}", G::NAME, time.as_millis(), nps(nodes, time))
    };
    writeln!(out, "{line}")?;
    Ok(())
}
