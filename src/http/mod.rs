//! The HTTP and WebSocket API (axum): analysis, legal moves, format conversion, board pictures, health, metrics,
//! OpenAPI.
//!
//! Handlers are thin: they read and validate the request, name the game through the registry
//! ([`crate::games::GameKind`]), and hand positions to the one analysis path ([`crate::analysis`]). Every
//! error is an RFC 9457 problem document ([`problem::Problem`]).

mod analysis;
mod annotations;
pub mod auth;
mod board;
mod deadline;
mod engines;
mod extract;
mod guard;
mod metrics;
pub mod openapi;
pub mod problem;
mod records;
mod web;
mod ws;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::net::TcpListener;
use tower_http::compression::CompressionLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::trace::TraceLayer;

use crate::access::{AuthMode, Limiter, PerAddress, Rate};
use crate::analysis::Analysis;
pub use crate::analysis::ENGINE;
use crate::annotate::{Annotator, AnnotatorConfig};
use crate::engines::Engines;
use crate::pool::Pool;
use crate::store::Store;
pub use metrics::Metrics;

/// Limits and switches of the API.
#[derive(Clone, Debug)]
pub struct ApiConfig {
    /// Largest depth a request may ask for (larger ones are clamped).
    pub max_depth: u32,
    /// Longest search time a request may ask for, in milliseconds.
    pub max_movetime_ms: u64,
    /// Most nodes a request may ask for.
    pub max_nodes: u64,
    /// Most lines a request may ask for.
    pub max_multipv: u32,
    /// Most moves a request may list.
    pub max_moves: usize,
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Longest a plain HTTP request may take (searches included).
    pub request_timeout: Duration,
    /// Origins allowed by CORS (`*` for any; empty for none).
    pub cors_origins: Vec<String>,
    /// Most analyses one WebSocket may run at once.
    pub max_ws_analyses: usize,
    /// Largest body of `POST /v1/annotations` (game collections), in bytes.
    pub max_annotation_bytes: usize,
    /// Most positions one annotation submission may hold; `POST /v1/records` reads no more in one body.
    pub max_annotation_positions: usize,
    /// Most games (readable or not) one body of `POST /v1/annotations` or `POST /v1/records` may hold.
    pub max_record_games: usize,
    /// Whether requests need an API key.
    pub auth: AuthMode,
    /// The token bucket of each address for requests without a key (a zero rate: no limit).
    pub anonymous_rate: Rate,
    /// Most WebSockets one address may have open at once (0: no limit).
    pub max_ws_per_address: usize,
    /// Proxies whose `X-Forwarded-For` names the client's address (behind a load balancer every client would
    /// otherwise have the balancer's address, and share its limits).
    pub trusted_proxies: Vec<crate::access::TrustedProxy>,
    /// How long an annotation job's lease lasts without renewal on a shared store (PostgreSQL): after a
    /// server dies, its jobs are resumed by another server this long after its last renewal.
    pub job_lease: Duration,
    /// How long an annotation job that is over is kept after its last change (`None`: until a client removes
    /// it with `DELETE /v1/annotations/{id}?purge=true`).
    pub keep_annotations: Option<Duration>,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            max_depth: 64,
            max_movetime_ms: 60_000,
            max_nodes: 5_000_000_000,
            max_multipv: 10,
            max_moves: 2_000,
            max_body_bytes: 1 << 20,
            request_timeout: Duration::from_secs(120),
            cors_origins: Vec::new(),
            max_ws_analyses: 8,
            max_annotation_bytes: 16 << 20,
            max_annotation_positions: 200_000,
            max_record_games: 10_000,
            auth: AuthMode::Off,
            anonymous_rate: Rate { rate: 0.0, burst: 0 },
            max_ws_per_address: 16,
            trusted_proxies: Vec::new(),
            job_lease: crate::annotate::DEFAULT_LEASE,
            keep_annotations: None,
        }
    }
}

/// What every handler shares. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// The one analysis path: the cache, searches in flight, the pool.
    pub analysis: Analysis,
    pub store: Store,
    pub config: Arc<ApiConfig>,
    pub metrics: Arc<Metrics>,
    /// Annotation jobs (persisted in the store, evaluated through the analysis path).
    pub annotator: Annotator,
    /// Set to true when the server shuts down: open WebSockets close.
    shutdown: Arc<tokio::sync::watch::Sender<bool>>,
    /// The token buckets of keys and addresses.
    pub limiter: Arc<Limiter>,
    /// WebSockets open per address.
    pub websockets: Arc<PerAddress>,
}

impl AppState {
    pub fn new(pool: Pool, store: Store, config: ApiConfig) -> Self {
        Self::with_engines(pool, store, config, Engines::default())
    }

    /// The state of a server with external engines (from an engines file) beside its own.
    pub fn with_engines(pool: Pool, store: Store, config: ApiConfig, engines: Engines) -> Self {
        let workers = pool.stats().workers;
        let analysis = Analysis::with_engines(pool, Some(store.clone()), engines);
        let lease = config.job_lease.max(Duration::from_millis(300));
        let annotator_config = AnnotatorConfig {
            max_positions: config.max_annotation_positions.max(1),
            lease,
            // Jobs whose server died are looked for a few times per lease.
            poll: (lease / 3).min(crate::annotate::DEFAULT_POLL),
            keep: config.keep_annotations,
            ..AnnotatorConfig::for_workers(workers)
        };
        let annotator = Annotator::new(analysis.clone(), store.clone(), annotator_config);
        AppState {
            annotator,
            analysis,
            store,
            config: Arc::new(config),
            metrics: Arc::new(Metrics::default()),
            shutdown: Arc::new(tokio::sync::watch::Sender::new(false)),
            limiter: Arc::default(),
            websockets: Arc::default(),
        }
    }

    pub fn pool(&self) -> &Pool {
        self.analysis.pool()
    }

    /// Wait (up to `timeout`) for the cache writes in progress, so that answers given before a shutdown are
    /// not lost when the store closes. True when none is left.
    pub async fn finish_writes(&self, timeout: Duration) -> bool {
        self.analysis.finish_writes(timeout).await
    }

    /// Tell open WebSockets to close and annotation jobs to stop (they resume at the next start).
    pub fn begin_shutdown(&self) {
        self.shutdown.send_replace(true);
        self.annotator.begin_shutdown();
    }
}

/// The API's routes with their middleware.
pub fn router(state: AppState) -> Router {
    let cors = cors_layer(&state.config.cors_origins);
    let api = Router::new()
        .route("/v1/engines", get(engines::engines))
        .route("/v1/games", get(analysis::games))
        .route("/v1/analysis", get(analysis::get_analysis))
        .route("/v1/moves", post(analysis::moves))
        .route("/v1/convert", post(analysis::convert))
        .route("/v1/records", post(records::records))
        .route("/v1/board.svg", get(board::board_svg))
        .route(
            "/v1/annotations",
            post(annotations::post_annotations)
                .layer(DefaultBodyLimit::max(state.config.max_annotation_bytes))
                .get(annotations::list_annotations),
        )
        .route("/v1/annotations/{id}", get(annotations::get_annotation).delete(annotations::delete_annotation))
        .route("/v1/annotations/{id}/export", get(annotations::export))
        .route("/v1/openapi.json", get(openapi_json))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .layer(axum::middleware::from_fn_with_state(state.config.request_timeout, guard::time_limit));
    // A search stops itself at the request timeout and answers with what it has: the route's own limit
    // leaves it the time to do so.
    let searches = Router::new().route("/v1/analysis", post(analysis::post_analysis)).layer(
        axum::middleware::from_fn_with_state(state.config.request_timeout + deadline::ANSWER_GRACE, guard::time_limit),
    );
    // The WebSocket lives as long as its client: no request timeout.
    let app = Router::new()
        .route("/v1/stream", get(ws::stream))
        .route("/", get(web::index))
        .route("/web/{file}", get(web::asset))
        .merge(api)
        .merge(searches)
        .method_not_allowed_fallback(guard::method_not_allowed)
        .fallback(not_found)
        .layer(axum::middleware::from_fn(guard::header_limits))
        .layer(axum::middleware::from_fn_with_state(
            guard::BodyLimits { annotations: state.config.max_annotation_bytes, other: state.config.max_body_bytes },
            guard::announced_body_limit,
        ))
        .layer(axum::middleware::from_fn_with_state(state.clone(), auth::authenticate))
        .layer(axum::middleware::from_fn_with_state(state.clone(), metrics::track))
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(axum::middleware::from_fn(auth::problem_request_id))
        .layer(CompressionLayer::new())
        .layer(cors)
        .layer(TraceLayer::new_for_http().make_span_with(auth::request_span))
        .layer(axum::middleware::from_fn(auth::request_id))
        .with_state(state);
    // A layer of a router reaches inside each route's methods, under the `Allow` header the route adds to a
    // 405 or OPTIONS answer: this one wraps the whole router, so that it sees that header.
    Router::new().fallback_service(app).layer(axum::middleware::from_fn(guard::allow_lists_options))
}

fn cors_layer(origins: &[String]) -> CorsLayer {
    let layer = CorsLayer::new()
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers([header::CONTENT_TYPE, header::AUTHORIZATION, auth::REQUEST_ID])
        .expose_headers([
            auth::REQUEST_ID,
            header::RETRY_AFTER,
            header::HeaderName::from_static("ratelimit-limit"),
            header::HeaderName::from_static("ratelimit-remaining"),
            header::HeaderName::from_static("ratelimit-reset"),
        ]);
    if origins.iter().any(|o| o == "*") {
        layer.allow_origin(AllowOrigin::any())
    } else {
        let list: Vec<HeaderValue> = origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()).collect();
        layer.allow_origin(AllowOrigin::list(list))
    }
}

async fn not_found() -> problem::Problem {
    problem::Problem::not_found("no such endpoint; see /v1/openapi.json")
}

async fn healthz() -> &'static str {
    "ok\n"
}

async fn readyz(State(state): State<AppState>) -> Response {
    match state.store.ping().await {
        Ok(()) => (StatusCode::OK, "ready\n").into_response(),
        Err(e) => problem::Problem::from(e).into_response(),
    }
}

async fn metrics_text(State(state): State<AppState>) -> Response {
    let body = state.metrics.render(&state);
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], body).into_response()
}

async fn openapi_json() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], openapi::document_text()).into_response()
}

/// Serve the API on `listener` until `shutdown` resolves; then stop accepting, let requests in flight end
/// (their searches are stopped by the caller's pool shutdown) and return.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    guard::serve_connections(listener, router(state), shutdown).await
}
