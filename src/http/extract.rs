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
        // A compressed body (gzip, say) is not read as JSON and refused as "not JSON" (400): say what it is.
        if let Some(coding) = req.headers().get(header::CONTENT_ENCODING) {
            let coding = String::from_utf8_lossy(coding.as_bytes()).trim().to_ascii_lowercase();
            if coding != "identity" {
                return Err(Problem::new(
                    axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported-media-type",
                    "Expected an uncompressed body",
                    format!(
                        "the body is sent with `Content-Encoding: {}`: send it uncompressed",
                        coding.chars().take(40).collect::<String>()
                    ),
                ));
            }
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
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            Problem::bad_request(format!("the body is not valid JSON: {inner}"))
        } else {
            member_problem(&path, &inner.to_string())
        }
    })?;
    // Anything but blanks after the value (a second object, stray bytes) is not one JSON text: refused rather
    // than read in part.
    de.end().map_err(|e| Problem::bad_request(format!("the body is not valid JSON: {e} after the value")))?;
    Ok(value)
}

/// The problem of a JSON member that does not fit: `field` is the path of the member at fault, a missing or
/// unknown member included (serde names those in its message, with the path of the object holding them).
fn member_problem(path: &str, text: &str) -> Problem {
    let named = ["missing field `", "unknown field `"]
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix).and_then(|rest| rest.split('`').next()))
        .filter(|name| !name.is_empty());
    let field = match (path, named) {
        (".", Some(name)) => Some(name.to_string()),
        (".", None) => None,
        // An unknown member's error comes with its own path already.
        (path, Some(name)) if !path.ends_with(name) => Some(format!("{path}.{name}")),
        (path, _) => Some(path.to_string()),
    };
    match field {
        Some(field) => Problem::invalid(&field, format!("{field}: {text}")),
        None => {
            let mut p = Problem::invalid(".", text.to_string());
            p.field = None;
            p
        }
    }
}

/// Read an already parsed JSON value into `T`, naming the path of the member at fault like [`parse_json`].
pub fn from_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, Problem> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        member_problem(&path, &e.into_inner().to_string())
    })
}

/// The path's parameters. A segment that is no parameter of the route's type (an id or file name that is not
/// UTF-8 once its `%` escapes are read) names nothing here: 404, as a problem document like every error.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(ApiPath(value)),
            Err(rejection) => Err(Problem::not_found(format!("no such resource: {}", rejection.body_text()))),
        }
    }
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

/// A comma-separated query parameter (`moves=e2e4,e7e5`) as its entries, trimmed. Nothing, or one comma at the
/// end, gives no entry; an empty entry inside is refused (422 naming it as `field[i]`), so that the index a
/// later error names is the one of the client's own text.
pub(super) fn comma_list(field: &str, text: Option<&str>) -> Result<Vec<String>, Problem> {
    let Some(text) = text else { return Ok(Vec::new()) };
    let text = text.trim();
    let text = text.strip_suffix(',').unwrap_or(text);
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .enumerate()
        .map(|(i, entry)| match entry.trim() {
            "" => Err(Problem::invalid(
                &format!("{field}[{i}]"),
                format!("entry {i} of `{field}` is empty (two commas in a row?)"),
            )),
            entry => Ok(entry.to_string()),
        })
        .collect()
}
