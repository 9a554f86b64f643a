//! Who is asking, and whether they may: the API key of a request (`Authorization: Bearer`, or `?key=` on the
//! WebSocket), its token bucket (`RateLimit-*` headers on every answer, 429 with `Retry-After` past it), and
//! the request id (`x-request-id`) that names the request in the logs and in problem documents.
//!
//! Every request pays [`CHEAP`] here; a search pays the rest of its cost in its handler once its limits are
//! read (and gets it back when the cache answers), an annotation pays by its positions.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::problem::Problem;
use crate::access::{AuthMode, CHEAP, KeyError, LimitStatus, Limited, Limiter, Rate, check_key};

/// The request id header.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
/// Longest request id taken from a client (a longer or odd one is replaced by a fresh one).
const MAX_REQUEST_ID: usize = 128;

/// Paths every client may reach without a key and without paying: probes, metrics, the API's description.
const OPEN_PATHS: [&str; 4] = ["/healthz", "/readyz", "/metrics", "/v1/openapi.json"];

/// A request's id, as an extension of the request.
#[derive(Clone, Debug)]
pub struct RequestId(pub Arc<str>);

/// The client of a request (an extension set by [`authenticate`]).
#[derive(Clone)]
pub struct Client {
    /// `key:NAME` or `ip:ADDRESS`: the bucket it pays from, and its share of the search queue.
    pub id: Arc<str>,
    /// The key's name, when it came with a valid key.
    pub key: Option<String>,
    /// Positions its annotations may evaluate per UTC day.
    pub quota_positions: Option<u64>,
    /// The digest of its key (a long-lived connection looks the key up again by it).
    pub digest: Option<String>,
    pub address: IpAddr,
    /// Its bucket (`None`: not limited).
    rate: Option<Rate>,
    limiter: Arc<Limiter>,
}

impl Client {
    /// Pay `cost` units; 429 when the bucket does not hold them.
    pub fn charge(&self, cost: u32) -> Result<(), Problem> {
        match self.rate {
            Some(rate) => self.limiter.charge(&self.id, rate, cost).map(|_| ()).map_err(rate_limited),
            None => Ok(()),
        }
    }

    /// Pay the rest of a request's cost, `cost` units beyond the [`CHEAP`] it paid as it came (see
    /// [`Limiter::charge_rest`]); 429 when the bucket does not hold them, and then the request has cost nothing.
    pub fn charge_rest(&self, cost: u32) -> Result<(), Problem> {
        match self.rate {
            Some(rate) => self.limiter.charge_rest(&self.id, rate, CHEAP, cost).map(|_| ()).map_err(rate_limited),
            None => Ok(()),
        }
    }

    /// Get `units` back (the cache answered a search).
    pub fn refund(&self, units: u32) {
        if self.rate.is_some() {
            self.limiter.refund(&self.id, units);
        }
    }

    /// Take `units` more, into debt if the bucket does not hold them (see [`Limiter::debit`]).
    pub fn debit(&self, units: u32) {
        if self.rate.is_some() {
            self.limiter.debit(&self.id, units);
        }
    }

    fn status(&self) -> Option<LimitStatus> {
        self.rate.map(|rate| self.limiter.status(&self.id, rate))
    }
}

/// 429 for a refused charge, with the bucket's state in headers.
pub fn rate_limited(limited: Limited) -> Problem {
    let mut p = Problem::new(
        StatusCode::TOO_MANY_REQUESTS,
        "rate-limited",
        "Too many requests",
        format!(
            "this request costs more than the {} units left of {}; retry in {} s",
            limited.status.remaining, limited.status.limit, limited.retry_after_s
        ),
    );
    p.retry_after = Some(u32::try_from(limited.retry_after_s).unwrap_or(u32::MAX));
    p.limit = Some(Box::new(limited.status));
    p
}

/// 401 with `WWW-Authenticate: Bearer`.
pub(super) fn unauthorized(detail: impl Into<String>, invalid: bool) -> Response {
    let mut response = Problem::unauthorized(detail).into_response();
    let challenge =
        if invalid { r#"Bearer realm="kibitz", error="invalid_token""# } else { r#"Bearer realm="kibitz""# };
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
    response
}

/// A request refused for its key: it still pays [`CHEAP`] from its address's bucket (when addresses are
/// limited), so that guessing keys is limited as any other request is; past the bucket, 429 instead.
fn refused(client: &Client, unauthorized: Response) -> Response {
    match client.charge(CHEAP) {
        Ok(()) => unauthorized,
        Err(p) => p.into_response(),
    }
}

/// The key a request carries: `Authorization: Bearer KEY`, or `?key=KEY` on the WebSocket. `Err` for an
/// `Authorization` header that is not a bearer token, or for more than one (a proxy reading the other one
/// would take the request for another client's).
fn presented_key(request: &Request) -> Result<Option<String>, &'static str> {
    if request.headers().get_all(header::AUTHORIZATION).iter().nth(1).is_some() {
        return Err("send one Authorization header, not several");
    }
    if let Some(value) = request.headers().get(header::AUTHORIZATION) {
        let text = value.to_str().map_err(|_| "the Authorization header is not text")?;
        let (scheme, token) = text.trim().split_once(' ').ok_or("use `Authorization: Bearer <key>`")?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err("use `Authorization: Bearer <key>`");
        }
        return Ok(Some(token.trim().to_string()));
    }
    if request.uri().path() == "/v1/stream"
        && let Some(query) = request.uri().query()
        && let Some((_, key)) = form_urlencoded::parse(query.as_bytes()).find(|(name, _)| name == "key")
    {
        return Ok(Some(key.into_owned()));
    }
    Ok(None)
}

/// Find the client, charge it [`CHEAP`], and put the `RateLimit-*` headers on the answer.
pub(super) async fn authenticate(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    if OPEN_PATHS.contains(&request.uri().path()) || super::web::is_page(request.uri().path()) {
        return next.run(request).await;
    }
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |ConnectInfo(a)| a.ip());
    let config = &state.config;
    let forwarded = request.headers().get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok());
    let address = crate::access::client_address(peer, forwarded, &config.trusted_proxies);
    let mut client = Client {
        id: Arc::from(crate::access::address_client_id(address)),
        key: None,
        quota_positions: None,
        digest: None,
        address,
        rate: config.anonymous_rate.limits().then_some(config.anonymous_rate),
        limiter: Arc::clone(&state.limiter),
    };
    if config.auth != AuthMode::Off {
        let presented = match presented_key(&request) {
            Ok(key) => key,
            Err(why) => return refused(&client, unauthorized(why, true)),
        };
        match presented {
            Some(key) => match check_key(&state.store, &key).await {
                Ok(row) => {
                    client.id = Arc::from(format!("key:{}", row.name));
                    client.rate = Some(Rate { rate: row.rate, burst: row.burst }).filter(Rate::limits);
                    client.quota_positions = row.quota_positions;
                    client.digest = Some(row.hash);
                    client.key = Some(row.name);
                }
                Err(KeyError::Store(e)) => return Problem::from(e).into_response(),
                Err(e) => return refused(&client, unauthorized(e.to_string(), true)),
            },
            None if config.auth == AuthMode::Required => {
                return unauthorized("this server needs an API key: `Authorization: Bearer <key>`", false);
            }
            None => {}
        }
    }
    if let Some(key) = &client.key {
        tracing::Span::current().record("client", key.as_str());
    }
    if let Err(p) = client.charge(CHEAP) {
        return p.into_response();
    }
    request.extensions_mut().insert(client.clone());
    let mut response = next.run(request).await;
    if let Some(status) = client.status() {
        let headers = response.headers_mut();
        // A 429 already describes the limit it hit (the bucket or the daily quota).
        if !headers.contains_key("ratelimit-limit") {
            limit_headers(headers, status);
        }
    }
    response
}

/// The `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` headers.
pub fn limit_headers(headers: &mut HeaderMap, status: LimitStatus) {
    headers.insert("ratelimit-limit", HeaderValue::from(status.limit));
    headers.insert("ratelimit-remaining", HeaderValue::from(status.remaining));
    headers.insert("ratelimit-reset", HeaderValue::from(status.reset_s));
}

/// A client's request id if it is sane (1 to 128 characters of letters, digits and `-_.:`), else a fresh one.
fn request_id_of(headers: &HeaderMap) -> Arc<str> {
    let given = headers.get(&REQUEST_ID).and_then(|v| v.to_str().ok()).filter(|id| {
        !id.is_empty()
            && id.len() <= MAX_REQUEST_ID
            && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
    });
    match given {
        Some(id) => Arc::from(id),
        None => Arc::from(uuid::Uuid::new_v4().simple().to_string()),
    }
}

/// The outermost layer: give the request an id (the client's, when sane) and send it back on the answer.
pub(super) async fn request_id(mut request: Request, next: Next) -> Response {
    let id = request_id_of(request.headers());
    let value = HeaderValue::from_str(&id).unwrap_or_else(|_| HeaderValue::from_static("invalid"));
    request.headers_mut().insert(REQUEST_ID, value.clone());
    request.extensions_mut().insert(RequestId(id));
    let mut response = next.run(request).await;
    response.headers_mut().insert(REQUEST_ID, value);
    response
}

/// Largest problem document the request id is written into (they are a few hundred bytes).
const MAX_PROBLEM: usize = 64 * 1024;

/// Write the request id into every problem document (`request_id`), inside the compression layer.
pub(super) async fn problem_request_id(request: Request, next: Next) -> Response {
    let id = request.extensions().get::<RequestId>().map(|r| Arc::clone(&r.0));
    let response = next.run(request).await;
    let Some(id) = id else { return response };
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json"));
    if !is_problem {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_PROBLEM).await else {
        return Problem::internal("a problem document could not be read back").into_response();
    };
    let body = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(serde_json::Value::Object(mut map)) => {
            map.insert("request_id".into(), serde_json::Value::from(id.as_ref()));
            Body::from(serde_json::Value::Object(map).to_string())
        }
        _ => Body::from(bytes),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, body)
}

/// The span of one request: its method, path and id (so every log line inside names the request), and the
/// key's name once it is known.
pub(super) fn request_span(request: &Request) -> tracing::Span {
    let id = request.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("");
    tracing::info_span!(
        "request",
        method = %request.method(),
        path = %request.uri().path(),
        request_id = %id,
        client = tracing::field::Empty,
    )
}
