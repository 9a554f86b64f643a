//! The answers the server gives before (or instead of) a handler: a method a path does not take (405), a
//! request that took too long (408), headers too large (431), and the connection loop that lets the API, not
//! the HTTP library, answer those; what the library still answers itself (a request it cannot read: 400, 414,
//! or 431 above its buffer) is given a problem document on its way out ([`ProblemIo`]). Each is a problem
//! document like every other error.

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
/// What the HTTP library itself takes before it answers 431 on its own (a bare answer that [`ProblemIo`] gives
/// a problem document): far above the API's limits, so that the API answers first. Header fields and the read buffer of one connection.
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

/// Every path answers `OPTIONS` (with its methods; a browser's CORS preflight, with the CORS headers): the
/// `Allow` header of any answer (an `OPTIONS` one, a 405) says so, which the router's own list does not.
pub(super) async fn allow_lists_options(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    if let Some(allow) = response.headers().get(header::ALLOW)
        && let Ok(list) = allow.to_str()
        && !list.split(',').any(|m| m.trim().eq_ignore_ascii_case("OPTIONS"))
    {
        let list = if list.trim().is_empty() { "OPTIONS".to_string() } else { format!("{list},OPTIONS") };
        if let Ok(value) = HeaderValue::from_str(&list) {
            response.headers_mut().insert(header::ALLOW, value);
        }
    }
    response
}

/// The body limits by route: what `POST /v1/annotations` takes, and what every other request does.
#[derive(Clone, Copy)]
pub(super) struct BodyLimits {
    pub(super) annotations: usize,
    pub(super) other: usize,
}

/// 413 at once for a request whose `Content-Length` announces more than its route takes: the body is not
/// waited for (a client announcing gigabytes and sending nothing held its connection until the request
/// timeout, then got 408), and a client that asked `Expect: 100-continue` is not told to send it. A body
/// without a length is still counted as it arrives (`DefaultBodyLimit`).
pub(super) async fn announced_body_limit(State(limits): State<BodyLimits>, request: Request, next: Next) -> Response {
    let announced = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let limit = if request.uri().path() == "/v1/annotations" { limits.annotations } else { limits.other };
    match announced {
        Some(n) if n > limit as u64 => {
            let mut response = Problem::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body",
                "The request body could not be read",
                format!("the body announces {n} bytes; this request takes at most {limit}"),
            )
            .into_response();
            // The body is left unread: the connection cannot carry another request.
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            response
        }
        _ => next.run(request).await,
    }
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
            let connection = builder.serve_connection(TokioIo::new(ProblemIo::new(tcp)), service).with_upgrades();
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

/// The connection as the HTTP library sees it, with one change: the library's own answer to a request it
/// cannot read (400 for an unreadable request line or header, 414 for a URI too long, 431 above its read
/// buffer, [`LIBRARY_MAX_BUFFER`]) is a bare status line and headers without a body, written when no answer is
/// in progress and followed by the end of the connection. A write that is exactly such an answer is replaced by
/// the same status with a problem document and `Connection: close`; every other byte passes unchanged (the
/// API's own answers always have a body and a `Content-Type`, so none of them is ever taken for one).
///
/// hyper 1.x has no hook for these answers: its server role builds them (`on_error`, a status and no headers
/// or body) and no builder option changes that. When its write buffer still holds the end of an earlier
/// answer as it writes a bare one (a pipelined request that cannot be read, sent before the earlier answer was
/// written out), the write is not exactly a bare answer and goes out unchanged: a bare status, never a wrong
/// one.
struct ProblemIo<T> {
    inner: T,
    /// The replacement still to be written, and how much of it has been.
    pending: Option<(Vec<u8>, usize)>,
}

impl<T> ProblemIo<T> {
    fn new(inner: T) -> Self {
        ProblemIo { inner, pending: None }
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> ProblemIo<T> {
    /// Write what is left of a replacement before anything else.
    fn drain(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        while let Some((bytes, done)) = &mut self.pending {
            if *done == bytes.len() {
                self.pending = None;
                break;
            }
            match std::pin::Pin::new(&mut self.inner).poll_write(cx, &bytes[*done..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => *done += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for ProblemIo<T> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for ProblemIo<T> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::ready!(self.drain(cx))?;
        if let Some(replacement) = bare_answer(buf).map(problem_answer) {
            self.pending = Some((replacement, 0));
            // The library's bytes are taken whole; the replacement goes out now or on the next write, flush or
            // shutdown, before anything else.
            let _ = self.drain(cx)?;
            return std::task::Poll::Ready(Ok(buf.len()));
        }
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let mut filled = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(only), None) = (filled.next(), filled.next()) {
            return self.poll_write(cx, only);
        }
        std::task::ready!(self.drain(cx))?;
        std::pin::Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::ready!(self.drain(cx))?;
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::ready!(self.drain(cx))?;
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The status of `bytes` when they are exactly one of the HTTP library's bare answers: `HTTP/1.1 400`, `414` or
/// `431`, then only `content-length: 0`, `connection` and `date` header fields, then the blank line, and
/// nothing else.
fn bare_answer(bytes: &[u8]) -> Option<StatusCode> {
    if bytes.len() > 512 || !bytes.ends_with(b"\r\n\r\n") {
        return None;
    }
    let head = std::str::from_utf8(&bytes[..bytes.len() - 4]).ok()?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next()?.strip_prefix("HTTP/1.1 ")?;
    let code = status_line.get(..3)?;
    let status = match code {
        "400" => StatusCode::BAD_REQUEST,
        "414" => StatusCode::URI_TOO_LONG,
        "431" => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        _ => return None,
    };
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "content-length" if value == "0" => {}
            "connection" | "date" => {}
            _ => return None,
        }
    }
    Some(status)
}

/// The answer that replaces a bare one: the same status, a problem document, `Connection: close`.
fn problem_answer(status: StatusCode) -> Vec<u8> {
    let problem = match status {
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => Problem::new(
            status,
            "headers-too-large",
            "Request header fields too large",
            format!(
                "the request line and header section are larger than the server reads ({LIBRARY_MAX_BUFFER} bytes); \
                 at most {MAX_HEADERS} fields and {MAX_HEADER_BYTES} bytes are accepted"
            ),
        ),
        StatusCode::URI_TOO_LONG => {
            Problem::new(status, "uri-too-long", "URI too long", "the request target is longer than the server reads")
        }
        _ => Problem::new(
            status,
            "unreadable-request",
            "Unreadable request",
            "the request line or a header field is not HTTP/1.1 (`METHOD /path HTTP/1.1`, then `Name: value` lines)",
        ),
    };
    let body = serde_json::to_vec(&problem).unwrap_or_default();
    let mut out = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/problem+json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        status.as_str(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn only_a_bare_answer_is_recognised() {
        let bare = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\ndate: Mon, 23 Nov 2026 20:00:00 GMT\r\n\r\n";
        assert_eq!(bare_answer(bare), Some(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE));
        assert_eq!(
            bare_answer(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n"),
            Some(StatusCode::BAD_REQUEST)
        );
        for other in [
            // An answer of the API: a body and its type.
            &b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/problem+json\r\ncontent-length: 2\r\n\r\n{}"[..],
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n",
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\nmore",
            b"xHTTP/1.1 400 Bad Request\r\n\r\n",
            b"",
        ] {
            assert_eq!(bare_answer(other), None, "{}", String::from_utf8_lossy(other));
        }
    }

    #[tokio::test]
    async fn a_bare_answer_is_replaced_and_everything_else_passes() {
        let (near, mut far) = tokio::io::duplex(64 * 1024);
        let mut io = ProblemIo::new(near);
        let ordinary = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        io.write_all(ordinary).await.unwrap();
        io.write_all(b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        io.shutdown().await.unwrap();
        let mut got = Vec::new();
        far.read_to_end(&mut got).await.unwrap();
        let (first, second) = got.split_at(ordinary.len());
        assert_eq!(first, ordinary);
        let text = String::from_utf8(second.to_vec()).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"), "{head}");
        assert!(
            head.contains("content-type: application/problem+json") && head.contains("connection: close"),
            "{head}"
        );
        assert!(head.contains(&format!("content-length: {}", body.len())), "{head}");
        let doc: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(doc["status"], 431);
        assert_eq!(doc["type"], "/problems/headers-too-large");
    }
}
