//! Errors as RFC 9457 problem documents (`application/problem+json`), naming the bad field or token.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A problem document. `field` names the request member that was wrong, `token` the offending text in it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Problem {
    /// The problem type, a relative URI reference `/problems/<slug>`.
    #[serde(rename = "type", serialize_with = "problem_type")]
    pub kind: &'static str,
    pub title: &'static str,
    pub status: u16,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(skip)]
    pub retry_after: Option<u32>,
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
            detail: detail.into(),
            field: None,
            token: None,
            retry_after: None,
        }
    }

    /// A request member with a bad value (422).
    pub fn invalid(field: &str, detail: impl Into<String>) -> Self {
        let mut p = Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid-field", "Invalid request field", detail);
        p.field = Some(field.to_string());
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
        p.field = Some(field.to_string());
        p.token = Some(e.token.clone());
        p
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

    pub fn unavailable(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "Service unavailable", detail)
    }

    pub fn internal(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "Internal error", detail)
    }

    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let retry = self.retry_after;
        let mut response = (status, Json(self)).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json"));
        if let Some(seconds) = retry {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

impl From<crate::pool::PoolError> for Problem {
    fn from(e: crate::pool::PoolError) -> Self {
        match e {
            crate::pool::PoolError::Busy { .. } => Problem::busy(e.to_string()),
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
        }
    }
}
