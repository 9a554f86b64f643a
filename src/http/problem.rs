//! Errors as RFC 9457 problem documents (`application/problem+json`), naming the bad field or token.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// How long a client is asked to wait after a 503 for an unavailable store or a stopping server, in seconds.
pub const UNAVAILABLE_RETRY_S: u32 = 5;

/// A problem document. `field` names the request member that was wrong, `token` the offending text in it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Problem {
    /// The problem type, a relative URI reference `/problems/<slug>`.
    #[serde(rename = "type", serialize_with = "problem_type")]
    pub kind: &'static str,
    pub title: &'static str,
    pub status: u16,
    pub detail: Box<str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<Box<str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<Box<str>>,
    /// The external engine that failed (502) or is busy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<Box<str>>,
    #[serde(skip)]
    pub retry_after: Option<u32>,
    /// The limit a 429 hit, sent as `RateLimit-*` headers.
    #[serde(skip)]
    pub limit: Option<Box<crate::access::LimitStatus>>,
}

fn problem_type<S: serde::Serializer>(slug: &&'static str, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("/problems/{slug}"))
}

impl Problem {
    pub fn new(status: StatusCode, kind: &'static str, title: &'static str, detail: impl Into<String>) -> Self {
        Problem {
            kind,
            title,
            status: status.as_u16(),
            detail: detail.into().into_boxed_str(),
            field: None,
            token: None,
            engine: None,
            retry_after: None,
            limit: None,
        }
    }

    /// A request member with a bad value (422).
    pub fn invalid(field: &str, detail: impl Into<String>) -> Self {
        let mut p = Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid-field", "Invalid request field", detail);
        p.field = Some(field.into());
        p
    }

    /// A request member whose text could not be read, naming the token.
    pub fn notation(field: &str, e: &crate::game::NotationError) -> Self {
        let mut p = Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "bad-notation",
            "Unreadable position or move",
            format!("{field}: {e}"),
        );
        p.field = Some(field.into());
        p.token = Some(e.token.as_str().into());
        p
    }

    /// A text of game records that was not read: an unknown format (naming it), or more games or positions
    /// than the server reads in one body (naming the limit).
    pub fn records(field: &str, e: &crate::game::ReadError) -> Self {
        match e {
            crate::game::ReadError::Notation(e) => Problem::notation(field, e),
            crate::game::ReadError::Budget(e) => Problem::invalid(field, format!("{field}: {e}")),
        }
    }

    /// A body that is not the JSON the endpoint takes (400).
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::BAD_REQUEST, "bad-request", "Malformed request", detail)
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::NOT_FOUND, "not-found", "Not found", detail)
    }

    /// Every worker busy and the queue full (503, Retry-After).
    pub fn busy(detail: impl Into<String>) -> Self {
        let mut p = Problem::new(StatusCode::SERVICE_UNAVAILABLE, "busy", "All search workers are busy", detail);
        p.retry_after = Some(1);
        p
    }

    /// No valid API key: 401 (the HTTP answer adds its `WWW-Authenticate` challenge).
    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::UNAUTHORIZED, "unauthorized", "An API key is required", detail)
    }

    /// Something the request needs is not available now (the store, a shutting-down server): 503 with
    /// Retry-After.
    pub fn unavailable(detail: impl Into<String>) -> Self {
        let mut p = Problem::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "Service unavailable", detail);
        p.retry_after = Some(UNAVAILABLE_RETRY_S);
        p
    }

    pub fn internal(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "Internal error", detail)
    }

    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into().into_boxed_str());
        self
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let retry = self.retry_after;
        let limit = self.limit.clone();
        let mut response = (status, Json(self)).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json"));
        if let Some(seconds) = retry {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if let Some(limit) = limit {
            super::auth::limit_headers(headers, *limit);
        }
        response
    }
}

impl From<crate::pool::PoolError> for Problem {
    fn from(e: crate::pool::PoolError) -> Self {
        match e {
            crate::pool::PoolError::Busy { .. } | crate::pool::PoolError::ClientBusy { .. } => {
                Problem::busy(e.to_string())
            }
            crate::pool::PoolError::ShuttingDown => Problem::unavailable(e.to_string()),
        }
    }
}

impl From<crate::analysis::AnalysisError> for Problem {
    fn from(e: crate::analysis::AnalysisError) -> Self {
        use crate::analysis::AnalysisError;
        match e {
            AnalysisError::Busy(e) => e.into(),
            AnalysisError::NotCached => Problem::not_found(e.to_string()),
            AnalysisError::Interrupted => Problem::unavailable(e.to_string()),
            AnalysisError::UnknownEngine(e) => {
                let token = e.name.clone();
                Problem::invalid("engine", e.to_string()).with_token(token)
            }
            AnalysisError::Store(e) => e.into(),
            AnalysisError::Engine(failure) => {
                let mut p = if failure.busy {
                    Problem::busy(failure.message)
                } else if failure.unsupported {
                    let status = StatusCode::UNPROCESSABLE_ENTITY;
                    Problem::new(status, "engine-unsupported", "The engine cannot do this", failure.message)
                } else {
                    Problem::new(StatusCode::BAD_GATEWAY, "engine-failed", "The engine failed", failure.message)
                };
                p.engine = Some(failure.engine.into_boxed_str());
                p
            }
        }
    }
}

/// The one mapping of store errors: an outage is a 503 with Retry-After (logged here, once per request); a
/// result that cannot be encoded is the server's own fault (500).
impl From<crate::store::StoreError> for Problem {
    fn from(e: crate::store::StoreError) -> Self {
        use crate::store::StoreError;
        match e {
            StoreError::Encode(_) => {
                tracing::error!(error = %e, "a value could not be encoded for the store");
                Problem::internal(e.to_string())
            }
            _ => {
                tracing::warn!(error = %e, "the store failed; answering 503");
                Problem::unavailable(format!("the store is unavailable: {e}"))
            }
        }
    }
}

/// Why an annotation job was not accepted, as the API answers it.
impl From<crate::annotate::SubmitError> for Problem {
    fn from(e: crate::annotate::SubmitError) -> Self {
        use crate::annotate::SubmitError;
        match e {
            SubmitError::NoGames(first) => {
                Problem::invalid("text", format!("no game could be read; {first}")).with_token(first.token)
            }
            SubmitError::Empty => Problem::invalid("text", "the text holds no game"),
            e @ SubmitError::TooManyPositions { .. } => Problem::invalid("text", e.to_string()),
            SubmitError::ShuttingDown => Problem::unavailable("the server is shutting down"),
            SubmitError::Store(e) => e.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreError;

    #[test]
    fn a_store_outage_is_503_with_retry_after_and_an_encoding_failure_is_ours() {
        let p = Problem::from(StoreError::Closed);
        assert_eq!((p.status, p.retry_after), (503, Some(UNAVAILABLE_RETRY_S)));
        let response = p.into_response();
        assert_eq!(response.headers().get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()), Some("5"));
        let bad = serde_json::from_str::<u8>("x").expect_err("not a number");
        assert_eq!(Problem::from(StoreError::Encode(bad)).status, 500);
        let submit = Problem::from(crate::annotate::SubmitError::Store(StoreError::Closed));
        assert_eq!(submit.status, 503);
        assert_eq!(Problem::unavailable("stopping").retry_after, Some(UNAVAILABLE_RETRY_S));
    }
}
