//! `kibitz engines check [PATH]`: start each engine of an engines file, make its handshake, run a short search
//! from its game's start position, and print a table of what answered.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};

use kibitz::engines::{ExternalEngine, ExternalSearch};
use kibitz::game::Game;
use kibitz::search::{Event, Limits};
use kibitz::with_game;

#[derive(Subcommand)]
pub enum EnginesCommand {
    /// Start every engine of the file, search briefly with each, and print a table; fails if one fails.
    Check(CheckArgs),
}

#[derive(Args)]
pub struct CheckArgs {
    /// The engines file (default: KIBITZ_ENGINES).
    pub path: Option<PathBuf>,
    /// Time of the test search, in milliseconds.
    #[arg(long, default_value_t = 200)]
    pub movetime: u64,
}

pub fn run(command: EnginesCommand) -> Result<()> {
    match command {
        EnginesCommand::Check(args) => check(&args),
    }
}

fn check(args: &CheckArgs) -> Result<()> {
    let path = match &args.path {
        Some(path) => path.clone(),
        None => match std::env::var_os("KIBITZ_ENGINES") {
            Some(path) => PathBuf::from(path),
            None => bail!("give the engines file: kibitz engines check PATH (or set KIBITZ_ENGINES)"),
        },
    };
    let engines = super::load_engines(Some(&path))?;
    if engines.is_empty() {
        outln!("{} lists no engines", path.display());
        return Ok(());
    }
    let limits = Limits { movetime: Some(Duration::from_millis(args.movetime.max(1))), ..Limits::default() };
    let rows: Vec<[String; 6]> = engines
        .list()
        .iter()
        .map(|engine| {
            let outcome = with_game!(engine.game, G => try_engine::<G>(engine, &limits));
            [
                engine.name.clone(),
                engine.id().unwrap_or_else(|| "-".into()),
                engine.game.name().to_string(),
                engine.protocol().name().to_string(),
                if engine.default { "yes".into() } else { "no".into() },
                outcome.map_or_else(|e| format!("error: {e}"), |best| format!("ok (bestmove {best})")),
            ]
        })
        .collect();
    print_table(&["engine", "id", "game", "protocol", "default", "result"], &rows)?;
    let failed = rows.iter().filter(|r| r[5].starts_with("error")).count();
    engines.shutdown();
    if failed > 0 {
        bail!("{failed} of {} engines failed", rows.len());
    }
    Ok(())
}

/// One short search from the start position: the best move, or why there was none.
fn try_engine<G: Game>(engine: &ExternalEngine, limits: &Limits) -> Result<String> {
    let Some(pool) = engine.pool::<G>() else { bail!("no pool for {}", G::NAME) };
    let root = G::start();
    let search = ExternalSearch { root: root.clone(), moves: Vec::new(), limits: limits.clone(), multipv: 1 };
    let done = pool.search_now(&search, &AtomicBool::new(false), &mut |_: Event<G::Move>| {})?;
    match done.best {
        Some(m) => Ok(root.format_move(m)),
        None => bail!("no move from the start position"),
    }
}

fn print_table(header: &[&str], rows: &[[String; 6]]) -> Result<()> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| -> Result<()> {
        let padded: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        outln!("{}", padded.join("  ").trim_end());
        Ok(())
    };
    line(header.to_vec())?;
    for row in rows {
        line(row.iter().map(String::as_str).collect())?;
    }
    Ok(())
}
