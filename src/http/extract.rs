//! Request extractors whose rejections are problem documents naming the bad field.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::problem::Problem;

/// A JSON body. A body that is not JSON, or not of the endpoint's shape, is answered with a problem document
/// that names the member at fault (`field`) and what was wrong with it.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = Problem;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let json_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                let mime = v.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
                mime == "application/json" || mime.ends_with("+json")
            })
            .unwrap_or(false);
        if !json_type {
            return Err(Problem::new(
                axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported-media-type",
                "Expected a JSON body",
                "send the request body as JSON with `Content-Type: application/json`",
            ));
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| Problem::new(e.status(), "body", "The request body could not be read", e.body_text()))?;
        parse_json(&bytes).map(ApiJson)
    }
}

/// Read JSON text into `T`, naming the path of the member at fault when it does not fit.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Problem> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let mut p = if inner.is_syntax() || inner.is_eof() {
            Problem::bad_request(format!("the body is not valid JSON: {inner}"))
        } else {
            Problem::invalid(&path, format!("{path}: {inner}"))
        };
        if path == "." {
            p.field = None;
        }
        p
    })
}

/// Read an already parsed JSON value into `T`, naming the path of the member at fault like [`parse_json`].
pub fn from_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, Problem> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let mut p = Problem::invalid(&path, format!("{path}: {}", e.into_inner()));
        if path == "." {
            p.field = None;
        }
        p
    })
}

/// A query string, with the same kind of errors.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        serde_urlencoded_like(query).map(ApiQuery)
    }
}

fn serde_urlencoded_like<T: DeserializeOwned>(query: &str) -> Result<T, Problem> {
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let field = if path == "." { "query".to_string() } else { path };
        let text = inner.to_string();
        // An unknown or missing parameter is named in the message, not the path.
        let field = ["unknown field `", "missing field `"]
            .iter()
            .find_map(|p| text.strip_prefix(p).and_then(|rest| rest.split('`').next()))
            .map(str::to_string)
            .unwrap_or(field);
        Problem::invalid(&field, format!("{field}: {text}"))
    })
}
