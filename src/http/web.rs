//! The analysis page: static files embedded in the binary, served at `/` and under `/web/`.
//!
//! The page is plain HTML, CSS and JavaScript that talks to the public API (`/v1/games`, `/v1/moves`,
//! `/v1/board.svg`, `/v1/stream`, `/v1/annotations`) like any other client; nothing here knows a game.

use std::sync::OnceLock;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::extract::ApiPath;
use super::problem::Problem;

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const INDEX: Asset =
    Asset { name: "index.html", content_type: "text/html; charset=utf-8", body: include_str!("web/index.html") };

const ASSETS: &[Asset] = &[
    Asset { name: "app.js", content_type: "text/javascript; charset=utf-8", body: include_str!("web/app.js") },
    Asset { name: "style.css", content_type: "text/css; charset=utf-8", body: include_str!("web/style.css") },
    Asset { name: "favicon.svg", content_type: "image/svg+xml", body: include_str!("web/favicon.svg") },
];

/// What the page may load: its own files and the API; nothing from elsewhere. `connect-src 'self'` covers the
/// page's own WebSocket (`ws:`/`wss:` on the same host and port, CSP level 3) and no other host's, so a script
/// that got in could not send what it reads elsewhere. Inline styles are allowed for the board pictures, which
/// are inlined SVG documents.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
                   connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/// A strong validator of a file's bytes (FNV-1a, 64 bits): the same binary always gives the same tag.
fn etag_of(body: &str) -> String {
    format!("\"{:016x}\"", crate::fnv1a64(body.as_bytes()))
}

/// The tags of every file, computed once.
fn etags() -> &'static Vec<String> {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    TAGS.get_or_init(|| std::iter::once(&INDEX).chain(ASSETS).map(|a| etag_of(a.body)).collect())
}

/// `If-None-Match` lists `tag` (or `*`).
fn matches(headers: &HeaderMap, tag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|v| v.trim().trim_start_matches("W/"))
        .any(|v| v == tag || v == "*")
}

fn serve(asset: &Asset, tag: &str, cache_control: &'static str, headers: &HeaderMap) -> Response {
    let mut response = if matches(headers, tag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, asset.content_type)], asset.body).into_response()
    };
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache_control));
    if let Ok(value) = HeaderValue::from_str(tag) {
        h.insert(header::ETAG, value);
    }
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// The page's own paths: open to every client without a key (the page then sends the key the person types).
pub(super) fn is_page(path: &str) -> bool {
    path == "/" || path.starts_with("/web/")
}

/// `GET /`: the page. Always revalidated, so a new server's page is seen at once.
pub(super) async fn index(headers: HeaderMap) -> Response {
    serve(&INDEX, &etags()[0], "no-cache", &headers)
}

/// `GET /web/{file}`: the page's script, style and icon. Revalidated by tag each time, as the page is: an
/// hour's cache let a browser run an old script with a new server's page (a 304 costs little).
pub(super) async fn asset(ApiPath(file): ApiPath<String>, headers: HeaderMap) -> Response {
    match ASSETS.iter().position(|a| a.name == file) {
        Some(i) => serve(&ASSETS[i], &etags()[i + 1], "no-cache", &headers),
        None => {
            let shown: String = file.chars().take(64).collect();
            let known: Vec<&str> = ASSETS.iter().map(|a| a.name).collect();
            Problem::not_found(format!("no page file `{shown}` (known: {})", known.join(", "))).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_has_its_own_tag_and_a_body() {
        let tags = etags();
        assert_eq!(tags.len(), ASSETS.len() + 1);
        let mut unique = tags.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), tags.len());
        assert!(INDEX.body.contains("/web/app.js") && INDEX.body.contains("/web/style.css"));
        for asset in ASSETS {
            assert!(!asset.body.is_empty(), "{} is empty", asset.name);
        }
    }

    #[test]
    fn if_none_match_is_read_as_a_list() {
        let tag = etag_of("x");
        let mut headers = HeaderMap::new();
        headers.insert(header::IF_NONE_MATCH, HeaderValue::from_str(&format!("\"other\", W/{tag}")).unwrap());
        assert!(matches(&headers, &tag));
        headers.insert(header::IF_NONE_MATCH, HeaderValue::from_static("\"other\""));
        assert!(!matches(&headers, &tag));
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        for body in std::iter::once(INDEX.body).chain(ASSETS.iter().map(|a| a.body)) {
            for needle in ["http://", "https://", "//cdn", "@import", "fonts.googleapis"] {
                // The SVG namespace is an identifier, not a fetch.
                let stripped = body.replace("http://www.w3.org/2000/svg", "");
                assert!(!stripped.contains(needle), "a page file refers to `{needle}`");
            }
        }
    }
}
