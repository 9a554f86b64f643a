//! `kibitz cache`: what the analysis cache of a store holds, by engine and game, and deleting the results of
//! engines that no longer answer (kibitz's earlier builds, an external engine's old version). A server keeps
//! its own engine's results under its version and a digest of its sources (`store::ENGINE_VERSION`), so every
//! rebuild whose search changed leaves the earlier build's rows behind, never read again.

use anyhow::{Context, Result, bail};
use clap::Subcommand;

use kibitz::store::{CacheEngineRows, ENGINE_VERSION, Store};

use super::keys::DbArg;

#[derive(Subcommand)]
pub enum CacheCommand {
    /// Count the cached results by engine and game, marking this build's own.
    List {
        #[command(flatten)]
        db: DbArg,
    },
    /// Delete the cached results of kibitz's other builds (every engine version that starts with `kibitz ` but
    /// is not this build's), or with `--engine`, of exactly the engines named.
    Prune {
        /// An engine whose results to delete, as `kibitz cache list` shows it (repeatable); then only these.
        #[arg(long = "engine", value_name = "ENGINE")]
        engines: Vec<String>,
        /// Show what would be deleted, delete nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        db: DbArg,
    },
}

pub fn run(command: CacheCommand) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let db = match &command {
            CacheCommand::List { db } | CacheCommand::Prune { db, .. } => &db.db,
        };
        // Listing and pruning read what is there: a missing file is an error, not a new empty store.
        let store = Store::open_existing(db).await.with_context(|| format!("cannot open the store `{db}`"))?;
        let result = run_with(&store, command).await;
        store.close().await;
        result
    })
}

/// What an engine of the cache is to this build.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// This build's own results (with any evaluation tag: a chess network's).
    ThisBuild,
    /// kibitz's own engine of another version or build: never read by this build.
    OtherBuild,
    /// An external engine's, by its name and version.
    External,
}

impl Kind {
    fn of(engine: &str) -> Kind {
        let tagged = engine.strip_prefix(ENGINE_VERSION).is_some_and(|tag| tag.is_empty() || tag.starts_with(' '));
        if tagged {
            Kind::ThisBuild
        } else if engine.starts_with("kibitz ") {
            Kind::OtherBuild
        } else {
            Kind::External
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kind::ThisBuild => "this build",
            Kind::OtherBuild => "another kibitz build",
            Kind::External => "external",
        }
    }
}

/// Rows by engine, in the order listed.
fn by_engine(rows: &[CacheEngineRows]) -> Vec<(&str, u64)> {
    let mut engines: Vec<(&str, u64)> = Vec::new();
    for row in rows {
        match engines.last_mut() {
            Some((engine, count)) if *engine == row.engine => *count += row.rows,
            _ => engines.push((&row.engine, row.rows)),
        }
    }
    engines
}

async fn run_with(store: &Store, command: CacheCommand) -> Result<()> {
    let rows = store.cache_engines().await?;
    match command {
        CacheCommand::List { .. } => {
            if rows.is_empty() {
                outln!("the cache is empty");
                return Ok(());
            }
            outln!("{:>10}  {:<10}  {:<20}  engine", "results", "game", "");
            for row in &rows {
                outln!("{:>10}  {:<10}  {:<20}  {}", row.rows, row.game, Kind::of(&row.engine).label(), row.engine);
            }
            outln!("this build's engine version: {ENGINE_VERSION}");
        }
        CacheCommand::Prune { engines, dry_run, .. } => {
            let present = by_engine(&rows);
            let chosen: Vec<(&str, u64)> = if engines.is_empty() {
                present.into_iter().filter(|(engine, _)| Kind::of(engine) == Kind::OtherBuild).collect()
            } else {
                let mut chosen = Vec::new();
                for name in &engines {
                    match present.iter().find(|(engine, _)| engine == name) {
                        Some(&found) if !chosen.contains(&found) => chosen.push(found),
                        Some(_) => {}
                        None => bail!(
                            "--engine `{name}`: the cache has no results of that engine (see `kibitz cache list`)"
                        ),
                    }
                }
                chosen
            };
            if chosen.is_empty() {
                outln!("nothing to delete: the cache holds no results of another kibitz build");
                return Ok(());
            }
            for (engine, count) in chosen {
                if dry_run {
                    outln!("would delete {count} results of `{engine}`");
                } else {
                    let deleted = store.delete_cache_engine(engine).await?;
                    outln!("deleted {deleted} results of `{engine}`");
                }
            }
        }
    }
    Ok(())
}
