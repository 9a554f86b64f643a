//! The subcommands of the `kibitz` command line, one module each (`main.rs` only parses and dispatches), and
//! the little they share.

/// `println!` that fails the command with an error (standard output closed, as `| head` does, or a full disk)
/// instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*)
            .map_err(|e| anyhow::anyhow!("cannot write to standard output: {e}"))?
    }};
}

/// `print!` the same way as [`outln`].
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout(), $($arg)*)
            .and_then(|()| std::io::stdout().flush())
            .map_err(|e| anyhow::anyhow!("cannot write to standard output: {e}"))?
    }};
}

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
/// Watch SIGINT and SIGTERM on a thread of their own: the first calls `first`, a second kills every engine
/// process (see [`kibitz::engines::process::kill_all`]) and ends the process at once with code 130.
pub fn on_signals(first: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
    #[cfg(unix)]
    let (mut interrupt, mut terminate) = {
        use tokio::signal::unix::{SignalKind, signal};
        let _context = runtime.enter();
        (signal(SignalKind::interrupt())?, signal(SignalKind::terminate())?)
    };
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        runtime.block_on(async move {
            let mut first = Some(first);
            loop {
                #[cfg(unix)]
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
                #[cfg(not(unix))]
                if tokio::signal::ctrl_c().await.is_err() {
                    return;
                }
                match first.take() {
                    Some(first) => first(),
                    None => {
                        kibitz::engines::process::kill_all();
                        std::process::exit(130);
                    }
                }
            }
        })
    })?;
    Ok(())
}

/// For a command that has nothing to finish on a signal: the first SIGINT or SIGTERM kills the engine processes
/// it started (see [`kibitz::engines::process::kill_all`]) and ends it with code 130. Without this an engine busy
/// in a search would run on after kibitz (its process group is its own).
pub fn stop_engines_on_signals() {
    let installed = on_signals(|| {
        kibitz::errln!("interrupted");
        kibitz::engines::process::kill_all();
        std::process::exit(130);
    });
    if let Err(e) = installed {
        kibitz::errln!(
            "warning: cannot watch SIGINT and SIGTERM ({e}): an interrupted command leaves its engines running"
        );
    }
}

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
