//! `kibitz annotate <file>`: annotate a file of games here (an in-process pool and an in-memory or file
//! store) or through a server (`--server URL`), with a progress bar per game and overall, then write the
//! annotated games and print a summary table.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Value, json};

use kibitz::analysis::Analysis;
use kibitz::annotate::report::{self, JobView};
use kibitz::annotate::{Annotator, AnnotatorConfig, DEFAULT_THRESHOLD, JobPriority, Settings};
use kibitz::game::{Game, ReadError, RecordBudget, Side};
use kibitz::games::GameKind;
use kibitz::pool::{Pool, PoolConfig};
use kibitz::store::{Store, StoreConfig};
use kibitz::with_game;

use super::http_client;

#[derive(Args)]
pub struct AnnotateArgs {
    /// The file of games (PGN, PDN, GUIDE game strings, GameStrings, FEN + moves).
    pub file: PathBuf,
    /// The game (default: the game whose rules read the most games of the file).
    #[arg(long)]
    pub game: Option<String>,
    /// The record format (default: detected).
    #[arg(long)]
    pub format: Option<String>,
    /// Search depth per position (default: the game's analysis depth).
    #[arg(long, conflicts_with_all = ["movetime", "nodes"])]
    pub depth: Option<u32>,
    /// Search time per position, in milliseconds.
    #[arg(long, conflicts_with = "nodes")]
    pub movetime: Option<u64>,
    /// Nodes per position.
    #[arg(long)]
    pub nodes: Option<u64>,
    /// GUIDE threshold: flag moves losing at least this many centi-units (one man / pawn = 100).
    #[arg(long, default_value_t = DEFAULT_THRESHOLD)]
    pub threshold: i32,
    /// Where to write the annotated games (default: standard output).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Output format: the game's own (`pgn`, `pdn`), `text` or `json` (default: the game's own, else text).
    #[arg(long)]
    pub export: Option<String>,
    /// Annotate through a kibitz server (`http://host:port`) instead of here.
    #[arg(long)]
    pub server: Option<String>,
    /// The API key for `--server` (sent as `Authorization: Bearer`).
    #[arg(long, env = "KIBITZ_KEY", hide_env_values = true)]
    pub key: Option<String>,
    /// Search workers (local mode; default: one per core; 1 to 256).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
    pub workers: Option<usize>,
    /// Transposition table size in MiB (local mode; 1 to 65536).
    #[arg(long, default_value_t = 128, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=65536))]
    pub hash_mb: usize,
    /// An analysis cache to read and fill (local mode; default: none kept).
    #[arg(long)]
    pub db: Option<String>,
    /// No progress bars.
    #[arg(long)]
    pub quiet: bool,
    /// The engine to search with: `kibitz`, or an engine of the engines file (default: the game's default).
    #[arg(long)]
    pub engine: Option<String>,
    /// The engines file (local mode; see README, "External engines").
    #[arg(long, env = "KIBITZ_ENGINES")]
    pub engines: Option<PathBuf>,
    /// Most positions the file may hold (local mode; a server applies its own): reading stops at the first
    /// game past it.
    #[arg(long, default_value_t = 200_000)]
    pub max_positions: u64,
    /// Most games, readable or not, the file may hold (local mode; a server applies its own).
    #[arg(long, default_value_t = 200_000)]
    pub max_games: usize,
}

impl AnnotateArgs {
    /// What reading the file may hold here.
    fn budget(&self) -> RecordBudget {
        RecordBudget::new(self.max_games.max(1), self.max_positions.max(1))
    }
}

pub fn run(args: AnnotateArgs) -> Result<()> {
    let bytes = std::fs::read(&args.file).with_context(|| format!("cannot read {}", args.file.display()))?;
    let (text, not_utf8) = kibitz::game::decode_records(bytes);
    if let Some(at) = not_utf8 {
        eprintln!(
            "{} is not UTF-8 (from byte {at}): read as Latin-1 (Windows-1252), as older PGN and PDN files are \
             written; the export is UTF-8",
            args.file.display()
        );
    }
    let text = kibitz::game::without_bom(&text).to_string();
    let kind = match &args.game {
        Some(name) => name.parse::<GameKind>()?,
        None => detect_game(&text, args.format.as_deref(), args.budget())?,
    };
    // What can be refused now is refused before the annotation, not after it.
    if let Some(format) = &args.export {
        let native = with_game!(kind, G => G::EXPORT_FORMAT);
        if Some(format.as_str()) != native && !["json", "text"].contains(&format.as_str()) {
            let known: Vec<&str> = native.into_iter().chain(["json", "text"]).collect();
            bail!("unknown export format `{format}` for {} (known: {})", kind.name(), known.join(", "));
        }
    }
    let made_output = match &args.output {
        Some(path) => {
            let existed = path.exists();
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
                .with_context(|| format!("cannot write {}", path.display()))?;
            Some((path, !existed))
        }
        None => None,
    };
    // Local mode: the first SIGINT or SIGTERM cancels the job (a store given with --db would otherwise keep it
    // `running`, and the next server on that file would resume it for nobody), stops the engines and exits
    // with 130; a second quits at once.
    let interrupted = std::sync::Arc::new(tokio::sync::Notify::new());
    if args.server.is_none() {
        let notify = std::sync::Arc::clone(&interrupted);
        let installed = super::on_signals(move || {
            kibitz::errln!("interrupted: cancelling the annotation (again to quit at once)");
            notify.notify_one();
        });
        if let Err(e) = installed {
            kibitz::errln!(
                "warning: cannot watch SIGINT and SIGTERM ({e}): an interrupted run leaves its engines running"
            );
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let annotated = match &args.server {
        Some(url) => runtime.block_on(remote(url, kind, &text, &args)),
        None => with_game!(kind, G => runtime.block_on(local::<G>(&text, &args, &interrupted))),
    };
    let (view, exported) = match annotated {
        Ok(done) => done,
        Err(e) => {
            // The output file this run made (empty) goes with it.
            if let Some((path, true)) = made_output {
                let _ = std::fs::remove_file(path);
            }
            return Err(e);
        }
    };
    match &args.output {
        Some(path) => std::fs::write(path, &exported).with_context(|| format!("cannot write {}", path.display()))?,
        None => out!("{exported}"),
    }
    print_summary(&view);
    Ok(())
}

/// The game whose rules read the most games of `text` (without errors); an error when none or a tie (naming
/// the budget when some game's rules found the text over it).
fn detect_game(text: &str, format: Option<&str>, budget: RecordBudget) -> Result<GameKind> {
    let mut scores = Vec::new();
    let mut over = None;
    for &kind in GameKind::ALL {
        let read = with_game!(kind, G => {
            if format.is_some_and(|f| !G::RECORD_FORMATS.contains(&f)) {
                Ok(0)
            } else {
                match G::parse_records(text, format, &mut { budget }) {
                    Ok(rs) => Ok(rs.iter().filter(|r| r.is_ok()).count()),
                    Err(ReadError::Budget(e)) => Err(e),
                    Err(ReadError::Notation(_)) => Ok(0),
                }
            }
        });
        match read {
            Ok(read) => scores.push((read, kind)),
            // Another game's rules may read the file within the budget (they count its games differently).
            Err(e) => {
                over.get_or_insert(e);
                scores.push((0, kind));
            }
        }
    }
    if let Some(e) = over
        && scores.iter().all(|s| s.0 == 0)
    {
        bail!("the file holds {e} (--max-games, --max-positions)");
    }
    scores.sort_by_key(|s| std::cmp::Reverse(s.0));
    match scores.as_slice() {
        [(0, _), ..] | [] => bail!("no game's rules read a game of this file; name the game with --game"),
        [(a, _), (b, _), ..] if a == b => {
            // Every game that reads as many, so that the message does not pick two at random (a file of
            // games without moves reads under every PGN and PDN reader alike).
            let tied: Vec<String> = scores.iter().filter(|s| s.0 == *a).map(|s| s.1.to_string()).collect();
            let (last, rest) = tied.split_last().expect("two at least");
            bail!("the file reads as {} and as {last} alike; name the game with --game", rest.join(", as "))
        }
        [(_, kind), ..] => Ok(*kind),
    }
}

fn settings<G: Game>(args: &AnnotateArgs) -> Settings {
    Settings {
        depth: if args.movetime.is_none() && args.nodes.is_none() {
            Some(args.depth.unwrap_or(G::DEFAULT_DEPTH))
        } else {
            None
        },
        movetime_ms: args.movetime,
        nodes: args.nodes,
        threshold: args.threshold,
        priority: JobPriority::Normal,
        engine: args.engine.clone().filter(|e| !e.eq_ignore_ascii_case("kibitz")),
        clamped: Vec::new(),
    }
}

/// Bars: one per game, one overall.
struct Bars {
    multi: MultiProgress,
    overall: ProgressBar,
    games: Vec<ProgressBar>,
}

impl Bars {
    fn new(quiet: bool, totals: &[u64]) -> Bars {
        let target = if quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() };
        let multi = MultiProgress::with_draw_target(target);
        let style = ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} positions  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        let overall_style =
            ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} positions  {elapsed} elapsed, ETA {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
        let games: Vec<ProgressBar> = totals
            .iter()
            .enumerate()
            .filter(|(_, t)| **t > 0)
            .map(|(i, t)| {
                let bar =
                    multi.add(ProgressBar::new(*t).with_style(style.clone()).with_prefix(format!("game {}", i + 1)));
                bar.set_position(0);
                bar
            })
            .collect();
        let overall = multi
            .add(ProgressBar::new(totals.iter().sum()).with_style(overall_style).with_prefix("overall".to_string()));
        Bars { multi, overall, games }
    }

    fn update(&self, view: &JobView) {
        let mut bars = self.games.iter();
        for game in view.games.iter().filter(|g| g.progress.total > 0) {
            if let Some(bar) = bars.next() {
                bar.set_position(game.progress.done);
                if game.progress.done >= game.progress.total {
                    bar.finish_with_message("done");
                }
            }
        }
        self.overall.set_position(view.progress.done);
    }

    fn finish(&self) {
        self.overall.finish();
        let _ = self.multi.clear();
    }
}

async fn local<G: Game>(
    text: &str,
    args: &AnnotateArgs,
    interrupted: &tokio::sync::Notify,
) -> Result<(JobView, String)> {
    let records = G::parse_records(text, args.format.as_deref(), &mut args.budget()).map_err(|e| match e {
        ReadError::Budget(e) => anyhow!("the file holds {e} (--max-games, --max-positions)"),
        e => anyhow!("{e}"),
    })?;
    for error in records.iter().filter_map(|r| r.as_ref().err()) {
        kibitz::errln!("skipping {error}");
    }
    let target = args.db.clone().unwrap_or_else(|| "sqlite::memory:".to_string());
    let store = Store::open_with(&target, StoreConfig::default())
        .await
        .with_context(|| format!("cannot open the store `{target}`"))?;
    // A server on the same file would run this job too (it resumes the jobs it finds running).
    let _jobs = match store.hold_jobs() {
        Ok(hold) => hold,
        Err(e) => {
            store.close().await;
            return Err(e.into());
        }
    };
    let workers = args.workers.unwrap_or_else(|| PoolConfig::default().workers).max(1);
    let pool = Pool::new(PoolConfig { workers, queue: 64, hash_mb: args.hash_mb, clock_workers: 0 });
    // Alone on the pool: every worker may annotate.
    let config = AnnotatorConfig {
        max_in_flight: workers,
        max_positions: usize::try_from(args.max_positions.max(1)).unwrap_or(usize::MAX),
        ..AnnotatorConfig::for_workers(workers)
    };
    let engines = super::load_engines(args.engines.as_deref())?;
    let kind: kibitz::games::GameKind = G::NAME.parse()?;
    if let Some(name) = &args.engine
        && !name.eq_ignore_ascii_case("kibitz")
        && engines.get(name, kind).is_none()
    {
        bail!("no engine `{name}` for {kind} in the engines file (give it with --engines PATH)");
    }
    let analysis = Analysis::with_engines(pool.clone(), Some(store.clone()), engines.clone());
    let annotator = Annotator::new(analysis, store.clone(), config);
    let submitted = annotator.submit::<G>(records, settings::<G>(args), None).await?;
    let id = submitted.id;
    let games = store.job_games(&id).await?;
    let totals: Vec<u64> = games.iter().map(|g| u64::from(g.positions)).collect();
    let bars = Bars::new(args.quiet, &totals);
    let view = loop {
        let job = store.job(&id).await?.ok_or_else(|| anyhow!("the job vanished"))?;
        let positions = store.job_positions(&id).await?;
        // Progress only while it runs; the games judged once, at the end.
        if job.status.is_final() {
            let view = report::job_view::<G>(&job, &games, &positions);
            bars.update(&view);
            break view;
        }
        bars.update(&report::job_progress::<G>(&job, &games, &positions));
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(250)) => {}
            () = interrupted.notified() => {
                bars.finish();
                if let Err(e) = annotator.cancel(&id).await {
                    kibitz::errln!("cannot mark annotation job {id} cancelled: {e}");
                }
                pool.shutdown();
                engines.shutdown();
                store.close().await;
                kibitz::engines::process::kill_all();
                kibitz::errln!("annotation job {id} cancelled");
                std::process::exit(130);
            }
        }
    };
    bars.finish();
    if view.status != "done" {
        bail!(
            "annotation job {id} {}{}",
            view.status,
            view.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default()
        );
    }
    let positions = store.job_positions(&id).await?;
    let job = store.job(&id).await?.ok_or_else(|| anyhow!("the job vanished"))?;
    let exported = match args.export.as_deref().or(G::EXPORT_FORMAT) {
        Some(f) if Some(f) == G::EXPORT_FORMAT => report::export_native::<G>(&games, &positions, args.threshold)
            .ok_or_else(|| anyhow!("{} has no annotated export format", G::NAME))?,
        Some("json") => serde_json::to_string_pretty(&report::job_view::<G>(&job, &games, &positions))? + "\n",
        None | Some("text") => report::export_text(&view),
        Some(other) => bail!("unknown export format `{other}`"),
    };
    pool.shutdown();
    engines.shutdown();
    store.close().await;
    Ok((view, exported))
}

async fn remote(url: &str, kind: GameKind, text: &str, args: &AnnotateArgs) -> Result<(JobView, String)> {
    let base = http_client::Base::parse(url)?.with_key(args.key.clone());
    let sides = with_game!(kind, G => [G::side_name(Side::First), G::side_name(Side::Second)]);
    let mut body = json!({ "game": kind.name(), "text": text, "threshold": args.threshold, "priority": "normal" });
    if let Some(f) = &args.format {
        body["format"] = json!(f);
    }
    if let Some(engine) = &args.engine {
        body["engine"] = json!(engine);
    }
    if let Some(d) = args.depth {
        body["depth"] = json!(d);
    } else if let Some(ms) = args.movetime {
        body["movetime_ms"] = json!(ms);
    } else if let Some(n) = args.nodes {
        body["nodes"] = json!(n);
    }
    let body = body.to_string();
    let created = base.patiently("POST", "/v1/annotations", Some(&body), true).await?;
    let accepted: Value = created.json_ok(202)?;
    let id = accepted["id"].as_str().ok_or_else(|| anyhow!("the server gave no job id"))?.to_string();
    // Named at once: the job runs on the server whatever happens to this command (its status:
    // GET /v1/annotations/ID, its export: GET /v1/annotations/ID/export).
    kibitz::errln!("annotation job {id} on {url}");
    if let Some(errors) = accepted["errors"].as_array() {
        for e in errors {
            kibitz::errln!(
                "skipping game {} (line {}): {}: `{}`",
                e["index"].as_u64().unwrap_or(0) + 1,
                e["line"],
                e["message"].as_str().unwrap_or(""),
                e["token"].as_str().unwrap_or("")
            );
        }
    }
    let mut bars: Option<Bars> = None;
    let mut waiting: Option<String> = None;
    let view = loop {
        // Progress only while it runs (cheap for the server); the whole view once the job is over.
        let status = base.patiently("GET", &format!("/v1/annotations/{id}?moves=false"), None, false).await;
        let value: Value = status.and_then(|s| s.json_ok(200)).with_context(|| format!("annotation job {id}"))?;
        let mut view = view_from_json(&value, sides)?;
        if matches!(view.status, "done" | "failed" | "cancelled") {
            let status = base.patiently("GET", &format!("/v1/annotations/{id}"), None, false).await;
            let value: Value = status.and_then(|s| s.json_ok(200)).with_context(|| format!("annotation job {id}"))?;
            view = view_from_json(&value, sides)?;
        }
        let bars = bars.get_or_insert_with(|| {
            let totals: Vec<u64> = view.games.iter().map(|g| g.progress.total).collect();
            Bars::new(args.quiet, &totals)
        });
        bars.update(&view);
        if let Some(why) = view.waiting.as_ref().filter(|&why| waiting.as_ref() != Some(why)) {
            // Said once for each new reason (a job no node can run waits until one can, or until cancelled).
            bars.multi.suspend(|| kibitz::errln!("annotation job {id}: {why}"));
            waiting = Some(why.clone());
        }
        if matches!(view.status, "done" | "failed" | "cancelled") {
            bars.finish();
            break view;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    if view.status != "done" {
        bail!(
            "annotation job {id} {}{}",
            view.status,
            view.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default()
        );
    }
    let path = match &args.export {
        Some(f) => {
            let query: String = form_urlencoded::Serializer::new(String::new()).append_pair("format", f).finish();
            format!("/v1/annotations/{id}/export?{query}")
        }
        None => format!("/v1/annotations/{id}/export"),
    };
    let exported = base.patiently("GET", &path, None, false).await;
    let text = exported.and_then(|e| e.text_ok(200)).with_context(|| format!("annotation job {id}"))?;
    Ok((view, text))
}

/// The parts of a server's status document the CLI shows (progress, summaries).
fn view_from_json(value: &Value, sides: [&'static str; 2]) -> Result<JobView> {
    use kibitz::annotate::judge::PlayerSummary;
    use report::{GameView, ProgressView};
    let status = match value["status"].as_str() {
        Some("queued") => "queued",
        Some("running") => "running",
        Some("done") => "done",
        Some("failed") => "failed",
        Some("cancelled") => "cancelled",
        other => bail!("the server reports an unknown job status {other:?}"),
    };
    let progress =
        |v: &Value| ProgressView { done: v["done"].as_u64().unwrap_or(0), total: v["total"].as_u64().unwrap_or(0) };
    let games = value["games"]
        .as_array()
        .map(|games| {
            games
                .iter()
                .map(|g| {
                    let mut players = BTreeMap::new();
                    if let Some(map) = g["players"].as_object() {
                        for (side, s) in map {
                            let Some(side) = sides.into_iter().find(|name| name == side) else { continue };
                            let n = |k: &str| s[k].as_u64().unwrap_or(0) as u32;
                            players.insert(
                                side,
                                PlayerSummary {
                                    moves: n("moves"),
                                    best: n("best"),
                                    good: n("good"),
                                    inaccuracies: n("inaccuracies"),
                                    mistakes: n("mistakes"),
                                    blunders: n("blunders"),
                                    mates_found: n("mates_found"),
                                    mates_missed: n("mates_missed"),
                                    over_threshold: n("over_threshold"),
                                    average_loss: s["average_loss"].as_f64().unwrap_or(0.0),
                                    accuracy: s["accuracy"].as_f64().unwrap_or(0.0),
                                },
                            );
                        }
                    }
                    GameView {
                        index: g["index"].as_u64().unwrap_or(0) as u32,
                        status: "",
                        progress: progress(&g["progress"]),
                        line: None,
                        error: None,
                        tags: BTreeMap::new(),
                        start: None,
                        result: None,
                        moves: Vec::new(),
                        players,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(JobView {
        id: value["id"].as_str().unwrap_or("").to_string(),
        game: value["game"].as_str().unwrap_or("").to_string(),
        status,
        error: value["error"].as_str().map(str::to_string),
        waiting: value["waiting"].as_str().map(str::to_string),
        engine: value["engine"].as_str().unwrap_or("").to_string(),
        created_ms: 0,
        updated_ms: 0,
        settings: serde_json::from_value(value["settings"].clone()).unwrap_or_default(),
        progress: progress(&value["progress"]),
        games,
    })
}

/// The summary table on standard error.
fn print_summary(view: &JobView) {
    kibitz::errln!();
    kibitz::errln!(
        "{:>5}  {:<8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>9} {:>9}",
        "game",
        "side",
        "moves",
        "inacc",
        "mist",
        "blund",
        "missed",
        "avg loss",
        "accuracy"
    );
    for game in &view.games {
        if game.players.is_empty() {
            kibitz::errln!("{:>5}  (not annotated)", game.index + 1);
        }
        for (side, s) in &game.players {
            kibitz::errln!(
                "{:>5}  {:<8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>9.1} {:>9.1}",
                game.index + 1,
                side,
                s.moves,
                s.inaccuracies,
                s.mistakes,
                s.blunders,
                s.mates_missed,
                s.average_loss,
                s.accuracy
            );
        }
    }
}
