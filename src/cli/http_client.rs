//! The HTTP client of `kibitz annotate --server`: hyper's client over plain `http://` (HTTP/1.1, kept-alive
//! connections), every request and its whole body under a timeout, the body's size bounded.

use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::{Method, Request, Uri, header};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// Longest any one request may take, its response body included.
const TIMEOUT: Duration = Duration::from_secs(120);
/// Longest a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest response accepted.
const MAX_RESPONSE: usize = 256 << 20;

/// A server's address, and the client that talks to it.
pub struct Base {
    host: String,
    port: u16,
    prefix: String,
    client: Client<HttpConnector, Full<Bytes>>,
    /// The API key sent with every request (`Authorization: Bearer`).
    key: Option<String>,
}

/// A response.
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    /// The seconds its `Retry-After` header asks for (a 429 or 503).
    pub retry_after_s: Option<u64>,
}

impl Base {
    /// Read `http://host[:port][/prefix]`.
    pub fn parse(url: &str) -> Result<Base> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| anyhow!("--server takes an http:// URL (got `{url}`); https is not supported"))?;
        let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => (
                h.trim_start_matches('[').trim_end_matches(']').to_string(),
                p.parse().with_context(|| format!("bad port in `{url}`"))?,
            ),
            _ => (authority.to_string(), 80),
        };
        if host.is_empty() {
            bail!("no host in `{url}`");
        }
        let prefix = path.trim_end_matches('/');
        let prefix = if prefix.is_empty() { String::new() } else { format!("/{prefix}") };
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let client = Client::builder(TokioExecutor::new()).build(connector);
        let base = Base { host, port, prefix, client, key: None };
        // A URL that does not make a request URI is reported now, not at the first request.
        base.uri("/").with_context(|| format!("bad URL `{url}`"))?;
        Ok(base)
    }

    /// Send `key` with every request.
    pub fn with_key(mut self, key: Option<String>) -> Base {
        self.key = key;
        self
    }

    /// The server's address, as messages name it.
    fn origin(&self) -> String {
        if self.host.contains(':') {
            format!("http://[{}]:{}", self.host, self.port)
        } else {
            format!("http://{}:{}", self.host, self.port)
        }
    }

    fn uri(&self, path: &str) -> Result<Uri> {
        let text = format!("{}{}{path}", self.origin(), self.prefix);
        text.parse::<Uri>().with_context(|| format!("bad request URL `{text}`"))
    }

    /// Send one request (a JSON body when given) and read the whole response.
    pub async fn request(&self, method: &str, path: &str, json: Option<&str>) -> Result<Reply> {
        tokio::time::timeout(TIMEOUT, self.exchange(method, path, json))
            .await
            .map_err(|_| anyhow!("{method} {path}: no answer from {} within {TIMEOUT:?}", self.origin()))?
    }

    async fn exchange(&self, method: &str, path: &str, json: Option<&str>) -> Result<Reply> {
        let uri = self.uri(path)?;
        let method = Method::from_bytes(method.as_bytes()).with_context(|| format!("bad method `{method}`"))?;
        let mut request = Request::builder().method(method.clone()).uri(uri.clone()).header(header::ACCEPT, "*/*");
        if let Some(key) = &self.key {
            request = request.header(header::AUTHORIZATION, format!("Bearer {key}"));
        }
        let body = match json {
            Some(text) => {
                request = request.header(header::CONTENT_TYPE, "application/json");
                Full::new(Bytes::copy_from_slice(text.as_bytes()))
            }
            None => Full::new(Bytes::new()),
        };
        let request = request.body(body).context("cannot build the request")?;
        let response = self.client.request(request).await.map_err(|e| {
            let error = anyhow::Error::new(e);
            if error.downcast_ref::<hyper_util::client::legacy::Error>().is_some_and(|e| e.is_connect()) {
                error.context(format!("cannot connect to the kibitz server at {}", self.origin()))
            } else {
                error.context(format!("{method} {uri}: the request failed"))
            }
        })?;
        let status = response.status().as_u16();
        let retry_after_s =
            response.headers().get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
        let body = Limited::new(response.into_body(), MAX_RESPONSE).collect().await.map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                anyhow!("{method} {uri}: the response is larger than {MAX_RESPONSE} bytes")
            } else {
                anyhow!("{method} {uri}: cannot read the response: {e}")
            }
        })?;
        Ok(Reply { status, body: body.to_bytes().to_vec(), retry_after_s })
    }
}

/// How long [`Base::patiently`] keeps trying while the server cannot be reached or asks to wait.
const PATIENCE: Duration = Duration::from_secs(600);

impl Base {
    /// [`Base::request`], tried again while the server cannot be reached (a restart: its jobs go on), is
    /// unavailable (502, 503, 504) or limits the client (429), waiting what `Retry-After` says or 1 s doubling
    /// to 30 s, for up to ten minutes. Only for requests that may be repeated: reads, or a submission refused
    /// before it was taken (`retry_refused_only`: no retry after a failed connection, which may have been
    /// taken).
    pub async fn patiently(
        &self,
        method: &str,
        path: &str,
        json: Option<&str>,
        retry_refused_only: bool,
    ) -> Result<Reply> {
        let started = std::time::Instant::now();
        let mut wait = Duration::from_secs(1);
        loop {
            let reply = self.request(method, path, json).await;
            let retry = match &reply {
                Ok(r) if matches!(r.status, 429 | 502 | 503 | 504) => r.retry_after_s.map(Duration::from_secs),
                Err(_) if !retry_refused_only => None,
                _ => return reply,
            };
            if started.elapsed() >= PATIENCE {
                return reply;
            }
            let pause = retry.unwrap_or(wait).clamp(Duration::from_millis(100), Duration::from_secs(60));
            tokio::time::sleep(pause).await;
            wait = (wait * 2).min(Duration::from_secs(30));
        }
    }
}

impl Reply {
    /// The body as JSON when the status is `expected`; otherwise an error with the server's problem detail.
    pub fn json_ok(&self, expected: u16) -> Result<serde_json::Value> {
        let text = self.text_ok(expected)?;
        serde_json::from_str(&text).context("the server's answer is not JSON")
    }

    /// The body as text when the status is `expected`.
    pub fn text_ok(&self, expected: u16) -> Result<String> {
        let text = String::from_utf8_lossy(&self.body).into_owned();
        if self.status != expected {
            let detail = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v["detail"].as_str().map(str::to_string))
                .unwrap_or(text);
            bail!("the server answered {}: {detail}", self.status);
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let b = Base::parse("http://127.0.0.1:8080/").expect("parses");
        assert_eq!((b.host.as_str(), b.port, b.prefix.as_str()), ("127.0.0.1", 8080, ""));
        assert_eq!(b.uri("/v1/annotations").expect("uri").to_string(), "http://127.0.0.1:8080/v1/annotations");
        let b = Base::parse("http://example.org/kibitz").expect("parses");
        assert_eq!((b.host.as_str(), b.port, b.prefix.as_str()), ("example.org", 80, "/kibitz"));
        assert_eq!(b.uri("/v1/x").expect("uri").to_string(), "http://example.org:80/kibitz/v1/x");
        let b = Base::parse("http://[::1]:9000").expect("parses");
        assert_eq!((b.host.as_str(), b.port), ("::1", 9000));
        assert_eq!(b.uri("/a").expect("uri").to_string(), "http://[::1]:9000/a");
        assert!(Base::parse("https://x").is_err());
        assert!(Base::parse("http://:80").is_err());
        assert!(Base::parse("http://host:port").is_err());
    }

    #[test]
    fn a_server_that_is_down_is_named() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        // A port just freed: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a port").port();
        let base = Base::parse(&format!("http://127.0.0.1:{port}")).expect("parses");
        let error = runtime.block_on(base.request("GET", "/v1/health", None)).err().expect("no server");
        let text = format!("{error:#}");
        assert!(text.contains(&format!("cannot connect to the kibitz server at http://127.0.0.1:{port}")), "{text}");
    }
}
