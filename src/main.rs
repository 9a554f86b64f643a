//! The `kibitz` command line: serve, analyse, annotate, perft, bench, engine.

mod cli;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use serde_json::json;

use kibitz::game::{self, Game, Score};
use kibitz::games::GameKind;
use kibitz::search::{self, Event, Limits, SearchOptions, TranspositionTable};
use kibitz::with_game;

#[derive(Parser)]
#[command(name = "kibitz", version, about = "An analysis engine server for board games")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server.
    Serve(ServeArgs),
    /// Analyse one position and print the lines as they deepen.
    Analyse(AnalyseArgs),
    /// Annotate a file of games: every move judged, the better line shown.
    Annotate(cli::annotate::AnnotateArgs),
    /// Count the leaf nodes of the move tree (move generator check and speed).
    Perft(PerftArgs),
    /// Search a fixed set of positions per game and print the speed.
    Bench(BenchArgs),
    /// Speak a legacy engine protocol on stdin/stdout.
    Engine {
        /// The protocol: `checkers` (the Checkers Protocol), `qianhong` (the Qianhong plugin protocol), `uhp`
        /// (the Universal Hive Protocol) or `guide` (GUIDE, which GUIs speak over TCP: see `kibitz-guide`; on
        /// stdin/stdout for testing by hand).
        protocol: String,
    },
    /// Print the API's OpenAPI document.
    Openapi,
}

#[derive(Args)]
struct ServeArgs {
    /// Address of the HTTP/WebSocket API (port 0: any free port; the address is printed).
    #[arg(long, env = "KIBITZ_HTTP", default_value = "127.0.0.1:8080")]
    http: std::net::SocketAddr,
    /// Address of the GUIDE gateway for international draughts GUIs (port 0: any free port; the address is
    /// printed).
    #[arg(long, env = "KIBITZ_GUIDE", default_value = "0.0.0.0:27533")]
    guide: std::net::SocketAddr,
    /// Do not open the GUIDE gateway (the variable takes 1/0, true/false, yes/no, on/off).
    #[arg(long, env = "KIBITZ_NO_GUIDE", value_parser = clap::builder::BoolishValueParser::new())]
    no_guide: bool,
    /// Most GUIDE sessions open at once (more connections are told so and closed).
    #[arg(long, env = "KIBITZ_GUIDE_MAX_SESSIONS", default_value_t = 16)]
    guide_max_sessions: usize,
    /// Seconds a GUIDE session may go without a command while not searching before it is closed (0: never).
    #[arg(long, env = "KIBITZ_GUIDE_IDLE_S", default_value_t = 3600)]
    guide_idle_s: u64,
    /// Longest GUIDE command in bytes (a longer one is answered with an error and ignored).
    #[arg(long, env = "KIBITZ_GUIDE_MAX_LINE", default_value_t = 65_536)]
    guide_max_line: usize,
    /// Most search threads a GUIDE session may set with its Threads option.
    #[arg(long, env = "KIBITZ_GUIDE_MAX_THREADS", default_value_t = 1)]
    guide_max_threads: u32,
    /// The analysis cache: a SQLite file path (created and migrated) or an sqlx URL.
    #[arg(long, env = "KIBITZ_DB", default_value = "./kibitz.db")]
    db: String,
    /// Search worker threads (default: one per core).
    #[arg(long, env = "KIBITZ_WORKERS")]
    workers: Option<usize>,
    /// Searches that may wait for a worker before requests are answered 503.
    #[arg(long, env = "KIBITZ_QUEUE", default_value_t = 64)]
    queue: usize,
    /// Transposition table size in MiB, shared by the workers.
    #[arg(long, env = "KIBITZ_HASH_MB", default_value_t = 128)]
    hash_mb: usize,
    /// Entries of analysis results kept in memory in front of the database.
    #[arg(long, env = "KIBITZ_CACHE_ENTRIES", default_value_t = 100_000)]
    cache_entries: usize,
    /// Origins allowed by CORS, comma-separated (`*` for any).
    #[arg(long, env = "KIBITZ_CORS_ORIGINS", value_delimiter = ',')]
    cors_origins: Vec<String>,
    /// Largest depth a request may ask for.
    #[arg(long, env = "KIBITZ_MAX_DEPTH", default_value_t = 64)]
    max_depth: u32,
    /// Longest search a request may ask for, in milliseconds.
    #[arg(long, env = "KIBITZ_MAX_MOVETIME_MS", default_value_t = 60_000)]
    max_movetime_ms: u64,
    /// Most nodes a request may ask for.
    #[arg(long, env = "KIBITZ_MAX_NODES", default_value_t = 5_000_000_000)]
    max_nodes: u64,
    /// Largest request body in bytes.
    #[arg(long, env = "KIBITZ_MAX_BODY_BYTES", default_value_t = 1 << 20)]
    max_body_bytes: usize,
    /// Longest an HTTP request may take, in seconds.
    #[arg(long, env = "KIBITZ_REQUEST_TIMEOUT_S", default_value_t = 120)]
    request_timeout_s: u64,
}

#[derive(Args)]
struct AnalyseArgs {
    /// checkers, draughts, hive, xiangqi or chess.
    game: String,
    /// The position in any format the game accepts (default: the start position).
    #[arg(long)]
    position: Option<String>,
    /// Moves played from the position first, comma-separated.
    #[arg(long, value_delimiter = ',')]
    moves: Vec<String>,
    /// Search depth in plies.
    #[arg(long)]
    depth: Option<u32>,
    /// Time to search in milliseconds.
    #[arg(long)]
    movetime: Option<u64>,
    /// Nodes to search.
    #[arg(long)]
    nodes: Option<u64>,
    /// Number of best lines.
    #[arg(long, default_value_t = 1)]
    multipv: usize,
    /// Threads on this search.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 64)]
    hash_mb: usize,
    /// One JSON object per line instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct PerftArgs {
    /// checkers, draughts, hive, xiangqi or chess.
    game: String,
    /// Deepest depth counted (every depth from 1 is printed).
    depth: u32,
    /// The position in any format the game accepts (default: the start position).
    #[arg(long)]
    position: Option<String>,
    /// Print the count under each first move at the given depth.
    #[arg(long)]
    divide: bool,
    /// One JSON object per depth (keys depth, nodes, time_ms, nps).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct BenchArgs {
    /// Games to measure (default: all).
    games: Vec<String>,
    /// Search depth per position (default: each game's bench depth).
    #[arg(long)]
    depth: Option<u32>,
    /// Threads per search.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 64)]
    hash_mb: usize,
    /// One JSON object per game.
    #[arg(long)]
    json: bool,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    // The annotate command draws progress bars on stderr: only warnings go there unless KIBITZ_LOG says more.
    let default_level = if matches!(cli.command, Command::Annotate(_)) { "warn" } else { "info" };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("KIBITZ_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level)),
        )
        .init();
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Analyse(args) => {
            let kind: GameKind = args.game.parse()?;
            with_game!(kind, G => analyse::<G>(&args))
        }
        Command::Annotate(args) => cli::annotate::run(args),
        Command::Perft(args) => {
            let kind: GameKind = args.game.parse()?;
            with_game!(kind, G => perft::<G>(&args))
        }
        Command::Bench(args) => bench(&args),
        Command::Engine { protocol } => engine(&protocol),
        Command::Openapi => {
            print!("{}", kibitz::http::openapi::document_text());
            Ok(())
        }
    }
}

fn serve(args: ServeArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(serve_async(args))
}

async fn serve_async(args: ServeArgs) -> Result<()> {
    use kibitz::http::{ApiConfig, AppState};
    use kibitz::pool::{Pool, PoolConfig};
    use kibitz::store::{Store, StoreConfig};

    let store =
        Store::open_with(&args.db, StoreConfig { memory_entries: args.cache_entries, ..StoreConfig::default() })
            .await
            .with_context(|| format!("cannot open the store `{}`", args.db))?;
    let pool = Pool::new(PoolConfig {
        workers: args.workers.unwrap_or_else(|| PoolConfig::default().workers).max(1),
        queue: args.queue,
        hash_mb: args.hash_mb,
    });
    let config = ApiConfig {
        max_depth: args.max_depth.max(1),
        max_movetime_ms: args.max_movetime_ms.max(1),
        max_nodes: args.max_nodes.max(1),
        max_body_bytes: args.max_body_bytes,
        request_timeout: Duration::from_secs(args.request_timeout_s.max(1)),
        cors_origins: args.cors_origins.clone(),
        ..ApiConfig::default()
    };
    let state = AppState::new(pool.clone(), store.clone(), config);
    match state.annotator.resume().await {
        Ok(0) => {}
        Ok(n) => tracing::info!(jobs = n, "resuming annotation jobs"),
        Err(e) => tracing::warn!(error = %e, "cannot resume annotation jobs"),
    }
    let listener =
        tokio::net::TcpListener::bind(args.http).await.with_context(|| format!("cannot listen on {}", args.http))?;
    let address = listener.local_addr()?;
    let gateway = if args.no_guide { None } else { Some(open_gateway(&args, &state.analysis).await?) };
    tracing::info!(%address, db = %args.db, workers = pool.stats().workers, "kibitz serving");
    if let Some(gateway) = &gateway {
        println!("kibitz GUIDE gateway listening on {}", gateway.local_addr()?);
    }
    println!("kibitz listening on http://{address}");
    std::io::stdout().flush()?;

    let (guide_stop, mut guide_stopping) = tokio::sync::watch::channel(false);
    let guide_task = gateway.map(|gateway| {
        tokio::spawn(async move {
            let stop = async move {
                let _ = guide_stopping.wait_for(|stop| *stop).await;
            };
            gateway.run(stop, Duration::from_secs(10)).await;
        })
    });
    let on_signal = {
        let state = state.clone();
        let pool = pool.clone();
        async move {
            shutdown_signal().await;
            tracing::info!("shutting down: stopping searches, closing sockets");
            guide_stop.send_replace(true);
            state.begin_shutdown();
            // Running searches answer with what they have; queued ones are dropped.
            let _ = tokio::task::spawn_blocking(move || pool.shutdown()).await;
        }
    };
    kibitz::http::serve(listener, state.clone(), on_signal).await?;
    // Annotation jobs write each finished position; let the writes under way end before the store closes.
    if !state.annotator.wait_stopped(Duration::from_secs(10)).await {
        tracing::warn!("some annotation jobs did not stop in time; they resume at the next start");
    }
    if let Some(task) = guide_task
        && tokio::time::timeout(Duration::from_secs(15), task).await.is_err()
    {
        tracing::warn!("the GUIDE gateway did not close in time");
    }
    // Answers given before the shutdown are cached: let their writes finish before the store closes.
    if !state.finish_writes(Duration::from_secs(10)).await {
        tracing::warn!("some analyses could not be stored before shutdown");
    }
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Listen for GUIDE connections on `--guide`.
async fn open_gateway(
    args: &ServeArgs,
    analysis: &kibitz::analysis::Analysis,
) -> Result<kibitz::protocols::guide::net::Gateway> {
    use kibitz::protocols::guide::GuideConfig;
    use kibitz::protocols::guide::net::{Gateway, GatewayConfig};
    let config = GatewayConfig {
        max_sessions: args.guide_max_sessions,
        session: GuideConfig {
            threads: 1,
            max_threads: args.guide_max_threads.max(1),
            own_pool: false,
            hash_mb: args.hash_mb.min(u32::MAX as usize) as u32,
            max_line: args.guide_max_line.max(64),
            idle: (args.guide_idle_s > 0).then(|| Duration::from_secs(args.guide_idle_s)),
            ..GuideConfig::default()
        },
    };
    Gateway::bind(args.guide, analysis.clone(), config).await.with_context(|| {
        format!(
            "cannot open the GUIDE gateway on {} (choose another address with --guide ADDR or KIBITZ_GUIDE, \
             or turn it off with --no-guide)",
            args.guide
        )
    })
}

/// SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch SIGTERM");
                let _ = interrupt.await;
                return;
            }
        };
        tokio::select! {
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}

fn engine(protocol: &str) -> Result<()> {
    match protocol {
        "checkers" => {
            kibitz::protocols::checkers::run_stdio(kibitz::protocols::checkers::CheckersConfig::default())?;
            Ok(())
        }
        "qianhong" => {
            kibitz::protocols::qianhong::run_stdio()?;
            Ok(())
        }
        "guide" => {
            kibitz::protocols::guide::run_stdio(kibitz::protocols::guide::GuideConfig::default())?;
            Ok(())
        }
        "uhp" => {
            kibitz::protocols::uhp::run_stdio(kibitz::protocols::uhp::UhpConfig::default())?;
            Ok(())
        }
        "ceboard" => bail!("CEBoard is a shared library (libkibitz.so, exporting LoadEngine), not a stdio protocol"),
        other => bail!("unknown protocol `{other}` (known: checkers, qianhong, guide, uhp)"),
    }
}

fn read_position<G: Game>(text: Option<&str>) -> Result<G> {
    match text {
        Some(t) => G::parse_position(t, None).with_context(|| format!("bad {} position", G::NAME)),
        None => Ok(G::start()),
    }
}

fn nps(nodes: u64, elapsed: Duration) -> u64 {
    (nodes as u128 * 1_000_000 / elapsed.as_micros().max(1)) as u64
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

fn score_json(score: Score) -> serde_json::Value {
    match score {
        Score::Cp(cp) => json!({ "cp": cp }),
        Score::Mate(n) => json!({ "mate": n }),
    }
}

fn score_text(score: Score) -> String {
    match score {
        Score::Cp(cp) => format!("cp {cp}"),
        Score::Mate(n) => format!("mate {n}"),
    }
}

fn analyse<G: Game>(args: &AnalyseArgs) -> Result<()> {
    let mut g: G = read_position(args.position.as_deref())?;
    game::play_moves(&mut g, &args.moves).context("bad --moves")?;
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
    search::search(&g, &limits, &options, &tt, &stop, &mut sink);
    match write_error {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

fn bench(args: &BenchArgs) -> Result<()> {
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
    for (i, text) in G::BENCH_POSITIONS.iter().enumerate() {
        let g = G::parse_position(text, None).with_context(|| format!("bench position {}", i + 1))?;
        // A fresh table per position keeps the node count reproducible.
        let tt = Arc::new(TranspositionTable::new(args.hash_mb));
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
