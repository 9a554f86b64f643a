//! `kibitz perft <game> <depth>`: count the leaves of the move tree, depth by depth or under each first move.

use std::io::Write;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use serde_json::json;

use kibitz::game::{self, Game};
use kibitz::games::GameKind;
use kibitz::with_game;

use super::{nps, read_position};

#[derive(Args)]
pub struct PerftArgs {
    /// checkers, draughts, hive, xiangqi or chess.
    pub game: String,
    /// Deepest depth counted (every depth from 1 is printed).
    pub depth: u32,
    /// The position in any format the game accepts (default: the start position).
    #[arg(long)]
    pub position: Option<String>,
    /// Print the count under each first move at the given depth.
    #[arg(long)]
    pub divide: bool,
    /// One JSON object per depth (keys depth, nodes, time_ms, nps).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: PerftArgs) -> Result<()> {
    let kind: GameKind = args.game.parse()?;
    with_game!(kind, G => perft::<G>(&args))
}

fn perft<G: Game>(args: &PerftArgs) -> Result<()> {
    let mut g: G = read_position(args.position.as_deref())?;
    let out = std::io::stdout();
    let mut out = out.lock();
    if args.divide {
        let start = Instant::now();
        let rows = game::perft_divide(&mut g, args.depth);
        let total: u64 = rows.iter().map(|r| r.1).sum();
        for (m, n) in &rows {
            if args.json {
                writeln!(out, "{}", json!({ "move": m, "nodes": n }))?;
            } else {
                writeln!(out, "{m} {n}")?;
            }
        }
        let elapsed = start.elapsed();
        if args.json {
            let line = json!({ "depth": args.depth, "moves": rows.len(), "nodes": total,
                "time_ms": elapsed.as_millis() as u64, "nps": nps(total, elapsed) });
            writeln!(out, "{line}")?;
        } else {
            writeln!(out, "moves {} nodes {total}", rows.len())?;
        }
        return Ok(());
    }
    for depth in 1..=args.depth {
        let start = Instant::now();
        let nodes = g.perft(depth);
        let elapsed = start.elapsed();
        let ms = elapsed.as_millis() as u64;
        let rate = nps(nodes, elapsed);
        if args.json {
            writeln!(out, "{}", json!({ "depth": depth, "nodes": nodes, "time_ms": ms, "nps": rate }))?;
        } else {
            writeln!(out, "depth {depth} nodes {nodes} time_ms {ms} nps {rate}")?;
        }
        out.flush()?;
    }
    Ok(())
}
