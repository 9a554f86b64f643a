//! `kibitz serve`: the HTTP/WebSocket API and the GUIDE gateway on one pool and one store, until SIGINT or
//! SIGTERM; then an orderly shutdown.

use std::io::Write;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

#[derive(Args)]
pub struct ServeArgs {
    /// Address of the HTTP/WebSocket API (port 0: any free port; the address is printed).
    #[arg(long, env = "KIBITZ_HTTP", default_value = "127.0.0.1:8080")]
    pub http: std::net::SocketAddr,
    /// Address of the GUIDE gateway for international draughts GUIs (port 0: any free port; the address is
    /// printed).
    #[arg(long, env = "KIBITZ_GUIDE", default_value = "0.0.0.0:27533")]
    pub guide: std::net::SocketAddr,
    /// Do not open the GUIDE gateway (the variable takes 1/0, true/false, yes/no, on/off).
    #[arg(long, env = "KIBITZ_NO_GUIDE", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_guide: bool,
    /// Most GUIDE sessions open at once (more connections are told so and closed).
    #[arg(long, env = "KIBITZ_GUIDE_MAX_SESSIONS", default_value_t = 16)]
    pub guide_max_sessions: usize,
    /// Seconds a GUIDE session may go without a command while not searching before it is closed (0: never).
    #[arg(long, env = "KIBITZ_GUIDE_IDLE_S", default_value_t = 3600)]
    pub guide_idle_s: u64,
    /// Longest GUIDE command in bytes (a longer one is answered with an error and ignored).
    #[arg(long, env = "KIBITZ_GUIDE_MAX_LINE", default_value_t = 65_536)]
    pub guide_max_line: usize,
    /// Most search threads a GUIDE session may set with its Threads option.
    #[arg(long, env = "KIBITZ_GUIDE_MAX_THREADS", default_value_t = 1)]
    pub guide_max_threads: u32,
    /// The store (analysis cache and annotation jobs): a SQLite file path or `sqlite:` URL (created and
    /// migrated; one server), or a `postgres://` URL (migrated; several servers may share it).
    #[arg(long, env = "KIBITZ_DB", default_value = "./kibitz.db")]
    pub db: String,
    /// Seconds an annotation job's lease lasts on a shared store (PostgreSQL): the server running a job renews
    /// it every third of this; when a server dies, another resumes its jobs after at most this long.
    #[arg(long, env = "KIBITZ_JOB_LEASE_S", default_value_t = 30)]
    pub job_lease_s: u64,
    /// Days an annotation job that is over (done, failed, cancelled) is kept after its last change, then
    /// removed with its results (default: kept until a client removes it).
    #[arg(long, env = "KIBITZ_KEEP_ANNOTATIONS_DAYS", value_parser = clap::value_parser!(u32).range(1..=36_500))]
    pub keep_annotations_days: Option<u32>,
    /// Search worker threads (default: one per core; 1 to 256).
    #[arg(long, env = "KIBITZ_WORKERS", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
    pub workers: Option<usize>,
    /// Worker threads beside `--workers` that run only the moves of games being played (a GUIDE game's, on a
    /// clock, at a fixed time or to a fixed depth): a player's move starts at once even when every worker is
    /// busy, instead of waiting in the queue while its time runs. 0 to 64.
    #[arg(long, env = "KIBITZ_CLOCK_WORKERS", default_value_t = 1)]
    pub clock_workers: usize,
    /// Searches that may wait for a worker before requests are answered 503.
    #[arg(long, env = "KIBITZ_QUEUE", default_value_t = 64)]
    pub queue: usize,
    /// Transposition table size in MiB, shared by the workers (1 to 65536).
    #[arg(long, env = "KIBITZ_HASH_MB", default_value_t = 128, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=65536))]
    pub hash_mb: usize,
    /// Entries of analysis results kept in memory in front of the database.
    #[arg(long, env = "KIBITZ_CACHE_ENTRIES", default_value_t = 100_000)]
    pub cache_entries: usize,
    /// Origins allowed by CORS, comma-separated (`*` for any): `scheme://host[:port]`, as browsers send them.
    #[arg(long, env = "KIBITZ_CORS_ORIGINS", value_delimiter = ',', value_parser = parse_origin)]
    pub cors_origins: Vec<String>,
    /// Largest depth a request may ask for.
    #[arg(long, env = "KIBITZ_MAX_DEPTH", default_value_t = 64)]
    pub max_depth: u32,
    /// Longest search a request may ask for, in milliseconds.
    #[arg(long, env = "KIBITZ_MAX_MOVETIME_MS", default_value_t = 60_000)]
    pub max_movetime_ms: u64,
    /// Most nodes a request may ask for.
    #[arg(long, env = "KIBITZ_MAX_NODES", default_value_t = 5_000_000_000)]
    pub max_nodes: u64,
    /// Largest request body in bytes (annotation submissions have their own limit).
    #[arg(long, env = "KIBITZ_MAX_BODY_BYTES", default_value_t = 1 << 20)]
    pub max_body_bytes: usize,
    /// Largest body of an annotation submission (`POST /v1/annotations`, game collections) in bytes.
    #[arg(long, env = "KIBITZ_MAX_ANNOTATION_BYTES", default_value_t = 16 << 20)]
    pub max_annotation_bytes: usize,
    /// Most positions one annotation submission may hold (and one `POST /v1/records` body): reading stops at
    /// the first game past it.
    #[arg(long, env = "KIBITZ_MAX_ANNOTATION_POSITIONS", default_value_t = 200_000)]
    pub max_annotation_positions: usize,
    /// Most games (readable or not) one body of `POST /v1/annotations` or `POST /v1/records` may hold: reading
    /// stops at the first game past it.
    #[arg(long, env = "KIBITZ_MAX_RECORD_GAMES", default_value_t = 10_000)]
    pub max_record_games: usize,
    /// Longest an HTTP request may take, in seconds.
    #[arg(long, env = "KIBITZ_REQUEST_TIMEOUT_S", default_value_t = 120)]
    pub request_timeout_s: u64,
    /// Analyse and play through the GUIDE gateway with this draughts engine of the engines file instead of
    /// kibitz's own.
    #[arg(long, env = "KIBITZ_GUIDE_ENGINE")]
    pub guide_engine: Option<String>,
    /// The engines file (TOML): external engines served beside kibitz's own (see README, "External engines").
    #[arg(long, env = "KIBITZ_ENGINES")]
    pub engines: Option<std::path::PathBuf>,
    /// API keys (made with `kibitz keys create`): `off` reads none; `optional` limits clients with a key by
    /// the key and others by address, and refuses a bad key; `required` refuses requests without a valid key
    /// (and GUIDE sessions that do not send `#kibitz key KEY` first).
    #[arg(long, env = "KIBITZ_AUTH", value_enum, default_value = "off")]
    pub auth: kibitz::access::AuthMode,
    /// Cost units per second each address may spend without a key (0: no limit). A cheap request costs 1, a
    /// search by its limits (see README, "Keys and limits").
    #[arg(long, env = "KIBITZ_ANON_RATE", default_value_t = 0.0)]
    pub anon_rate: f64,
    /// Cost units an address without a key may spend at once (its bucket's size).
    #[arg(long, env = "KIBITZ_ANON_BURST", default_value_t = 60)]
    pub anon_burst: u32,
    /// Most WebSockets one address may have open at once (0: no limit).
    #[arg(long, env = "KIBITZ_MAX_WS_PER_ADDRESS", default_value_t = 16)]
    pub max_ws_per_address: usize,
    /// A proxy (an address, or a network ADDR/BITS; repeated, or comma-separated) whose `X-Forwarded-For`
    /// header (HTTP) or PROXY protocol header (GUIDE, v1 or v2: haproxy's `send-proxy`) names the client, for
    /// the limits per address behind a load balancer.
    #[arg(long = "trusted-proxy", env = "KIBITZ_TRUSTED_PROXIES", value_delimiter = ',')]
    pub trusted_proxies: Vec<kibitz::access::TrustedProxy>,
    /// Most analyses one WebSocket may run at once.
    #[arg(long, env = "KIBITZ_MAX_WS_ANALYSES", default_value_t = 8)]
    pub max_ws_analyses: usize,
    /// Most GUIDE sessions one address may have open at once (0: no limit).
    #[arg(long, env = "KIBITZ_GUIDE_MAX_SESSIONS_PER_ADDRESS", default_value_t = 4)]
    pub guide_max_sessions_per_address: usize,
}

pub fn run(args: ServeArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(serve(args))
}

async fn serve(args: ServeArgs) -> Result<()> {
    use kibitz::http::{ApiConfig, AppState};
    use kibitz::pool::{Pool, PoolConfig};
    use kibitz::store::{Store, StoreConfig};
    if args.clock_workers > 64 {
        anyhow::bail!("--clock-workers must be between 0 and 64");
    }
    // Before anything listens: a signal from then on shuts down cleanly.
    let signalled = shutdown_signal();

    let store =
        Store::open_with(&args.db, StoreConfig { memory_entries: args.cache_entries, ..StoreConfig::default() })
            .await
            .context("cannot open the store")?;
    // Held until the process ends: a second server on the same SQLite file would run every job twice.
    let _jobs = match store.hold_jobs() {
        Ok(hold) => hold,
        Err(e) => {
            store.close().await;
            return Err(e.into());
        }
    };
    let pool = Pool::new(PoolConfig {
        workers: args.workers.unwrap_or_else(|| PoolConfig::default().workers).max(1),
        queue: args.queue,
        hash_mb: args.hash_mb,
        clock_workers: args.clock_workers,
    });
    let config = ApiConfig {
        max_depth: args.max_depth.max(1),
        max_movetime_ms: args.max_movetime_ms.max(1),
        max_nodes: args.max_nodes.max(1),
        max_body_bytes: args.max_body_bytes,
        max_annotation_bytes: args.max_annotation_bytes,
        max_annotation_positions: args.max_annotation_positions.max(1),
        max_record_games: args.max_record_games.max(1),
        request_timeout: Duration::from_secs(args.request_timeout_s.max(1)),
        cors_origins: args.cors_origins.clone(),
        auth: args.auth,
        anonymous_rate: kibitz::access::Rate {
            rate: if args.anon_rate.is_finite() { args.anon_rate.max(0.0) } else { 0.0 },
            burst: args.anon_burst,
        },
        max_ws_per_address: args.max_ws_per_address,
        trusted_proxies: args.trusted_proxies.clone(),
        max_ws_analyses: args.max_ws_analyses.max(1),
        job_lease: Duration::from_secs(args.job_lease_s.max(1)),
        keep_annotations: args.keep_annotations_days.map(|days| Duration::from_secs(u64::from(days) * 86_400)),
        ..ApiConfig::default()
    };
    let engines = super::load_engines(args.engines.as_deref())?;
    if let Some(name) = &args.guide_engine
        && !args.no_guide
        && engines.get(name, kibitz::games::GameKind::Draughts).is_none()
    {
        anyhow::bail!("--guide-engine: no draughts engine `{name}` in the engines file (--engines PATH)");
    }
    engines.warm();
    let state = AppState::with_engines(pool.clone(), store.clone(), config, engines.clone());
    match state.annotator.resume().await {
        Ok(0) => {}
        Ok(n) => tracing::info!(jobs = n, "resuming annotation jobs"),
        Err(e) => tracing::warn!(error = %e, "cannot resume annotation jobs"),
    }
    let listener =
        tokio::net::TcpListener::bind(args.http).await.with_context(|| format!("cannot listen on {}", args.http))?;
    let address = listener.local_addr()?;
    let gateway = if args.no_guide { None } else { Some(open_gateway(&args, &state.analysis, &store).await?) };
    tracing::info!(%address, db = %store.location(), workers = pool.stats().workers, "kibitz serving");
    if let Some(gateway) = &gateway {
        outln!("kibitz GUIDE gateway listening on {}", gateway.local_addr()?);
    }
    outln!("kibitz listening on http://{address}");
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
        let engines = engines.clone();
        async move {
            signalled.await;
            tracing::info!("shutting down: stopping searches, closing sockets");
            guide_stop.send_replace(true);
            state.begin_shutdown();
            // External engines' searches too (found by an audit: a request to a slow engine held the shutdown
            // until the engine's own deadline).
            engines.stop_searches();
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
    let _ = tokio::task::spawn_blocking(move || engines.shutdown()).await;
    // An engine process still busy in a search of a request that outlived the shutdown goes with the server.
    kibitz::engines::process::kill_all();
    tracing::info!("stopped");
    Ok(())
}

/// Listen for GUIDE connections on `--guide`.
async fn open_gateway(
    args: &ServeArgs,
    analysis: &kibitz::analysis::Analysis,
    store: &kibitz::store::Store,
) -> Result<kibitz::protocols::guide::net::Gateway> {
    use kibitz::protocols::guide::GuideConfig;
    use kibitz::protocols::guide::net::{Gateway, GatewayConfig};
    let config = GatewayConfig {
        max_sessions: args.guide_max_sessions,
        max_per_address: args.guide_max_sessions_per_address,
        trusted_proxies: args.trusted_proxies.clone(),
        keys: (args.auth == kibitz::access::AuthMode::Required).then(|| store.clone()),
        session: GuideConfig {
            threads: 1,
            max_threads: args.guide_max_threads.max(1),
            own_pool: false,
            hash_mb: args.hash_mb.min(u32::MAX as usize) as u32,
            max_line: args.guide_max_line.max(64),
            idle: (args.guide_idle_s > 0).then(|| Duration::from_secs(args.guide_idle_s)),
            engine: args.guide_engine.clone(),
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
/// SIGINT or SIGTERM. The handlers are installed when this is called, not when it is first awaited: a
/// signal arriving before the server's loop first polls its shutdown would otherwise take the default
/// action and kill the process without a clean shutdown.
fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let streams = signal(SignalKind::interrupt()).and_then(|i| Ok((i, signal(SignalKind::terminate())?)));
        async move {
            match streams {
                Ok((mut interrupt, mut term)) => {
                    tokio::select! {
                        _ = interrupt.recv() => {}
                        _ = term.recv() => {}
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot watch SIGINT and SIGTERM");
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// One `--cors-origins` entry: blanks around it dropped, and refused unless it is `*` or an origin as a browser
/// sends it in `Origin` (`scheme://host[:port]`, no path, no trailing slash), written in lower case as browsers
/// write them. Found by an audit: ` http://b.com` (after `, `) and `http://c.com/` were kept as given and never
/// matched, without a word.
fn parse_origin(text: &str) -> Result<String, String> {
    let origin = text.trim();
    if origin == "*" {
        return Ok(origin.to_string());
    }
    let bad = |why: &str| {
        Err(format!("`{origin}` is not an origin ({why}); write scheme://host[:port], e.g. https://example.com"))
    };
    let Some((scheme, rest)) = origin.split_once("://") else { return bad("no `://`") };
    if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) {
        return bad("no scheme");
    }
    if rest.is_empty() {
        return bad("no host");
    }
    if let Some(c) = rest.chars().find(|c| matches!(c, '/' | '?' | '#' | '@') || c.is_whitespace()) {
        return bad(&format!("`{c}` after the host: an origin has no path"));
    }
    if axum::http::HeaderValue::from_str(origin).is_err() {
        return bad("not a header value");
    }
    Ok(origin.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    #[test]
    fn cors_origins_are_trimmed_and_checked() {
        assert_eq!(super::parse_origin(" http://B.com ").as_deref(), Ok("http://b.com"));
        assert_eq!(super::parse_origin("https://a.example:8443").as_deref(), Ok("https://a.example:8443"));
        assert_eq!(super::parse_origin("*").as_deref(), Ok("*"));
        for bad in ["http://c.com/", "c.com", "http://", "://x", "http://a.com/path", "http://a b"] {
            assert!(super::parse_origin(bad).is_err(), "{bad}");
        }
    }
}
