//! The subcommands of the `kibitz` command line, one module each (`main.rs` only parses and dispatches), and
//! the little they share.

pub mod analyse;
pub mod annotate;
pub mod bench;
pub mod board;
pub mod cache;
pub mod dxp;
pub mod engine;
pub mod engines;
mod http_client;
pub mod keys;
pub mod match_cmd;
pub mod perft;
pub mod serve;

use std::time::Duration;

use anyhow::{Context, Result};

use kibitz::game::{Game, Score};

/// The external engines of an engines file (none without one). No process is started here.
pub fn load_engines(path: Option<&std::path::Path>) -> Result<kibitz::engines::Engines> {
    let Some(path) = path else { return Ok(kibitz::engines::Engines::default()) };
    let specs = kibitz::engines::config::load(path)?;
    Ok(kibitz::engines::Engines::new(specs)?)
}

/// The position `text` in any format the game reads; the start position when none.
pub fn read_position<G: Game>(text: Option<&str>) -> Result<G> {
    match text {
        Some(t) => G::parse_position(t, None).with_context(|| format!("bad {} position", G::NAME)),
        None => Ok(G::start()),
    }
}

/// Nodes per second.
pub fn nps(nodes: u64, elapsed: Duration) -> u64 {
    (nodes as u128 * 1_000_000 / elapsed.as_micros().max(1)) as u64
}

/// A score as the text lines print it.
pub fn score_text(score: Score) -> String {
    match score {
        Score::Cp(cp) => format!("cp {cp}"),
        Score::Mate(n) => format!("mate {n}"),
    }
}
