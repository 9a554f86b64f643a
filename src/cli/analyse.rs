//! `kibitz analyse <game>`: search one position and print the lines as they deepen.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::json;

use kibitz::engines::ExternalSearch;
use kibitz::game::{self, Game, Score};
use kibitz::games::GameKind;
use kibitz::search::{self, Event, Limits, SearchOptions, TranspositionTable};
use kibitz::with_game;

use super::{read_position, score_text};

#[derive(Args)]
pub struct AnalyseArgs {
    /// checkers, draughts, hive, xiangqi or chess.
    pub game: String,
    /// The position in any format the game accepts (default: the start position).
    #[arg(long)]
    pub position: Option<String>,
    /// Moves played from the position first, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub moves: Vec<String>,
    /// Search depth in plies.
    #[arg(long)]
    pub depth: Option<u32>,
    /// Time to search in milliseconds.
    #[arg(long)]
    pub movetime: Option<u64>,
    /// Nodes to search.
    #[arg(long)]
    pub nodes: Option<u64>,
    /// Number of best lines.
    #[arg(long, default_value_t = 1)]
    pub multipv: usize,
    /// Threads on this search (1 to 256).
    #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
    pub threads: usize,
    /// Transposition table size in MiB (1 to 65536).
    #[arg(long, default_value_t = 64, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=65536))]
    pub hash_mb: usize,
    /// One JSON object per line instead of text.
    #[arg(long)]
    pub json: bool,
    /// The engine: `kibitz` (default), or an engine of the engines file.
    #[arg(long)]
    pub engine: Option<String>,
    /// The engines file (see README, "External engines").
    #[arg(long, env = "KIBITZ_ENGINES")]
    pub engines: Option<std::path::PathBuf>,
}

pub fn run(args: AnalyseArgs) -> Result<()> {
    let kind: GameKind = args.game.parse()?;
    with_game!(kind, G => analyse::<G>(&args))
}

fn score_json(score: Score) -> serde_json::Value {
    match score {
        Score::Cp(cp) => json!({ "cp": cp }),
        Score::Mate(n) => json!({ "mate": n }),
    }
}

fn analyse<G: Game>(args: &AnalyseArgs) -> Result<()> {
    let start: G = read_position(args.position.as_deref())?;
    let mut g = start.clone();
    let played = game::play_moves(&mut g, &args.moves).context("bad --moves")?;
    let limits = match (args.depth, args.movetime, args.nodes) {
        (None, None, None) => Limits::depth(Limits::DEFAULT_DEPTH),
        (depth, movetime, nodes) => {
            Limits { depth, nodes, movetime: movetime.map(Duration::from_millis), ..Limits::default() }
        }
    };
    if args.multipv == 0 || args.multipv > search::MAX_MULTIPV {
        bail!("--multipv must be between 1 and {}", search::MAX_MULTIPV);
    }
    let options = SearchOptions { multipv: args.multipv, threads: args.threads.max(1), ..SearchOptions::default() };
    let tt = Arc::new(TranspositionTable::new(args.hash_mb));
    let stop = Arc::new(AtomicBool::new(false));
    let json = args.json;
    let root = g.clone();
    let out = std::io::stdout();
    let mut write_error = None;
    let mut sink = |event: Event<G::Move>| {
        let line = match &event {
            Event::Info(info) if info.pv.is_empty() => return,
            Event::Info(info) => {
                let pv = game::format_line(&root, &info.pv);
                if json {
                    json!({ "type": "info", "depth": info.depth, "seldepth": info.seldepth,
                        "multipv": info.multipv, "score": score_json(info.score),
                        "bound": format!("{:?}", info.bound).to_lowercase(), "nodes": info.nodes,
                        "nps": info.nps, "time_ms": info.time_ms, "hashfull": info.hashfull, "pv": pv })
                    .to_string()
                } else {
                    let bound = match info.bound {
                        search::ScoreBound::Exact => "",
                        search::ScoreBound::Lower => " lowerbound",
                        search::ScoreBound::Upper => " upperbound",
                    };
                    format!(
                        "info depth {} seldepth {} multipv {} score {}{bound} nodes {} nps {} time {} hashfull {} pv {}",
                        info.depth,
                        info.seldepth,
                        info.multipv,
                        score_text(info.score),
                        info.nodes,
                        info.nps,
                        info.time_ms,
                        info.hashfull,
                        pv.join(" ")
                    )
                }
            }
            Event::Done(done) => {
                let best = done.best.map(|m| root.format_move(m));
                if json {
                    let lines: Vec<_> = done
                        .lines
                        .iter()
                        .map(|l| {
                            json!({ "moves": game::format_line(&root, &l.pv),
                            "score": score_json(l.score), "depth": l.depth })
                        })
                        .collect();
                    json!({ "type": "done", "position": root.format_position(None).unwrap_or_default(),
                        "bestmove": best, "lines": lines, "depth": done.depth, "seldepth": done.seldepth,
                        "nodes": done.nodes, "nps": done.nps, "time_ms": done.time_ms,
                        "game_end": done.game_end.map(|e| e.reason) })
                    .to_string()
                } else {
                    let mut text = String::new();
                    for (i, l) in done.lines.iter().enumerate() {
                        text.push_str(&format!(
                            "line {} depth {} score {} pv {}\n",
                            i + 1,
                            l.depth,
                            score_text(l.score),
                            game::format_line(&root, &l.pv).join(" ")
                        ));
                    }
                    if let Some(end) = done.game_end {
                        text.push_str(&format!("game over: {}\n", end.reason));
                    }
                    text.push_str(&format!("bestmove {}", best.as_deref().unwrap_or("(none)")));
                    text
                }
            }
        };
        if let Err(e) = writeln!(out.lock(), "{line}") {
            write_error.get_or_insert(e);
        }
    };
    match args.engine.as_deref().filter(|e| !e.eq_ignore_ascii_case("kibitz")) {
        None => {
            search::search(&g, &limits, &options, &tt, &stop, &mut sink);
        }
        Some(name) => {
            let engines = super::load_engines(args.engines.as_deref())?;
            let kind: GameKind = G::NAME.parse()?;
            let pool = engines
                .get(name, kind)
                .and_then(|e| e.pool::<G>())
                .with_context(|| format!("no engine `{name}` for {kind} in the engines file (--engines PATH)"))?;
            let search = ExternalSearch { root: start, moves: played, limits, multipv: args.multipv as u32 };
            super::stop_engines_on_signals();
            let result = pool.search_now(&search, &stop, &mut sink);
            engines.shutdown();
            result?;
        }
    }
    match write_error {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}
