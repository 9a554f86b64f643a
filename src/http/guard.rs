//! The answers the server gives before (or instead of) a handler: a method a path does not take (405), a
//! request that took too long (408), headers too large (431), and the connection loop that lets the API, not
//! the HTTP library, answer those. Each is a problem document like every other error.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::net::TcpListener;

use super::problem::Problem;

/// Most header fields a request may have (more: 431).
pub const MAX_HEADERS: usize = 100;
/// Largest header section a request may have, names and values together, in bytes (more: 431).
pub const MAX_HEADER_BYTES: usize = 32 * 1024;
/// What the HTTP library itself takes before it answers 431 on its own (without a body): far above the
/// API's limits, so that the API answers first. Header fields and the read buffer of one connection.
const LIBRARY_MAX_HEADERS: usize = 1_000;
const LIBRARY_MAX_BUFFER: usize = 512 * 1024;
/// Longest a client may take to send a request's headers before the connection is closed.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// 405 for a path that exists but does not take the method (axum adds the `Allow` header).
pub(super) async fn method_not_allowed(request: Request) -> Problem {
    Problem::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        "Method not allowed",
        format!("{} is not allowed on {}; see /v1/openapi.json", request.method(), request.uri().path()),
    )
}

/// The problem of a request that did not end within `limit`.
pub(super) fn timed_out(limit: Duration) -> Problem {
    Problem::new(
        StatusCode::REQUEST_TIMEOUT,
        "request-timeout",
        "Request timeout",
        format!("the request took longer than the server's limit of {} s", limit.as_secs_f64()),
    )
}

/// Answer 408 (a problem document) when the rest of the stack takes longer than `limit` to answer; the
/// handler's work is dropped (a search nobody else follows stops).
pub(super) async fn time_limit(State(limit): State<Duration>, request: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => timed_out(limit).into_response(),
    }
}

/// Answer 431 (a problem document) for more than [`MAX_HEADERS`] header fields or more than
/// [`MAX_HEADER_BYTES`] of them.
pub(super) async fn header_limits(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let count = headers.len();
    let bytes: usize = headers.iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum();
    if count > MAX_HEADERS || bytes > MAX_HEADER_BYTES {
        let mut response = Problem::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers-too-large",
            "Request header fields too large",
            format!(
                "{count} header fields of {bytes} bytes; at most {MAX_HEADERS} fields and {MAX_HEADER_BYTES} bytes \
                 are accepted"
            ),
        )
        .into_response();
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        return response;
    }
    next.run(request).await
}

/// Serve `app` on `listener` until `shutdown` resolves; then stop accepting, ask every open connection to
/// finish its request in progress and close, and return when they have.
///
/// This is axum's own serving loop with the HTTP library's header limits raised above the API's
/// ([`header_limits`] answers first, with a problem document), a timeout on reading headers, and no Nagle
/// delay (a WebSocket answer right after a progress message would otherwise wait for the client's delayed
/// ACK).
pub(super) async fn serve_connections(
    listener: TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use hyper::server::conn::http1;
    use hyper_util::rt::{TokioIo, TokioTimer};
    use tower::ServiceExt;

    let (stop, stopping) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (tcp, remote): (tokio::net::TcpStream, SocketAddr) = tokio::select! {
            _ = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little rather than spin.
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        let app = app.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            let mut request = request.map(axum::body::Body::new);
            request.extensions_mut().insert(ConnectInfo(remote));
            app.clone().oneshot(request)
        });
        let mut stopping = stopping.clone();
        connections.spawn(async move {
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .max_headers(LIBRARY_MAX_HEADERS)
                .max_buf_size(LIBRARY_MAX_BUFFER);
            let connection = builder.serve_connection(TokioIo::new(tcp), service).with_upgrades();
            tokio::pin!(connection);
            let mut asked = false;
            loop {
                tokio::select! {
                    result = connection.as_mut() => {
                        if let Err(e) = result {
                            tracing::trace!(error = %e, "connection ended with an error");
                        }
                        return;
                    }
                    _ = stopping.wait_for(|s| *s), if !asked => {
                        asked = true;
                        connection.as_mut().graceful_shutdown();
                    }
                }
            }
        });
    }
    drop(listener);
    stop.send_replace(true);
    while connections.join_next().await.is_some() {}
    Ok(())
}
