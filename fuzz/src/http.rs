//! The API's request bodies, through the real router in process: the handlers read and validate them as they
//! do for a client (their readers are private to the router), on a current-thread runtime, with an in-memory
//! SQLite store and a one-worker pool. Searches are bounded by the server's own maxima, set tiny here.
//!
//! Properties: the server never answers 500 (an input it did not expect), and every answer of a JSON
//! endpoint is JSON (a result or a problem+json error).

use std::cell::RefCell;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{Method, Request, StatusCode, header};
use kibitz::http::{ApiConfig, AppState, router};
use kibitz::pool::{Pool, PoolConfig};
use kibitz::store::Store;
use tokio::runtime::Runtime;
use tower::ServiceExt;

/// Executions after which the server is built afresh (its cache and job rows only grow).
const REBUILD_EVERY: u32 = 500;

struct Server {
    runtime: Runtime,
    app: Option<Router>,
    served: u32,
}

thread_local! {
    static SERVER: RefCell<Option<Server>> = const { RefCell::new(None) };
}

fn build(runtime: &Runtime) -> Router {
    runtime.block_on(async {
        let store = Store::builder("sqlite::memory:").memory_entries(64).open().await.expect("in-memory store");
        let pool = Pool::new(PoolConfig { workers: 1, queue: 4, hash_mb: 1, clock_workers: 0 });
        let config = ApiConfig {
            max_depth: 2,
            max_movetime_ms: 20,
            max_nodes: 5_000,
            max_multipv: 2,
            max_moves: 300,
            max_body_bytes: 64 * 1024,
            request_timeout: Duration::from_secs(10),
            max_annotation_bytes: 64 * 1024,
            ..ApiConfig::default()
        };
        router(AppState::new(pool, store, config))
    })
}

/// The endpoints a body goes to; the first input byte picks one.
const ENDPOINTS: [(Method, &str); 5] = [
    (Method::POST, "/v1/analysis"),
    (Method::POST, "/v1/moves"),
    (Method::POST, "/v1/convert"),
    (Method::POST, "/v1/annotations"),
    // The rest of the input is the query string.
    (Method::GET, "/v1/analysis?"),
];

/// One request: the first byte picks the endpoint, the rest is its JSON body (or query string).
pub fn request(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else { return };
    let (method, path) = &ENDPOINTS[usize::from(selector) % ENDPOINTS.len()];
    let body = &body[..body.len().min(crate::MAX_INPUT)];
    let request = if *method == Method::GET {
        // Bytes a URI cannot hold are refused by the client library before any server sees them.
        let Ok(query) = std::str::from_utf8(body) else { return };
        let Ok(request) = Request::builder().method(Method::GET).uri(format!("{path}{query}")).body(Body::empty())
        else {
            return;
        };
        request
    } else {
        Request::builder()
            .method(method.clone())
            .uri(*path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_vec()))
            .expect("a request with a fixed URI")
    };
    SERVER.with(|cell| {
        let mut cell = cell.borrow_mut();
        let server = cell.get_or_insert_with(|| Server {
            runtime: tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime"),
            app: None,
            served: 0,
        });
        if server.served.is_multiple_of(REBUILD_EVERY) {
            server.app = None;
            server.app = Some(build(&server.runtime));
        }
        server.served += 1;
        let app = server.app.clone().expect("built above");
        let (status, bytes) = server.runtime.block_on(async move {
            let response = app.oneshot(request).await.expect("the router's error type is Infallible");
            let status = response.status();
            let bytes = to_bytes(response.into_body(), 16 << 20).await.expect("the body is read");
            (status, bytes)
        });
        assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "{}", String::from_utf8_lossy(&bytes));
        if status != StatusCode::SERVICE_UNAVAILABLE && status != StatusCode::REQUEST_TIMEOUT {
            assert!(
                serde_json::from_slice::<serde_json::Value>(&bytes).is_ok(),
                "{status}: the answer is not JSON: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
    });
}
