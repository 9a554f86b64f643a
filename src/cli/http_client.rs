//! Just enough of an HTTP/1.1 client for `kibitz annotate --server`: one request per connection
//! (`Connection: close`), bodies by length or chunked, every step under a timeout. Plain `http://` only.

use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest any one request may take.
const TIMEOUT: Duration = Duration::from_secs(120);
/// Largest response accepted.
const MAX_RESPONSE: usize = 256 << 20;

/// A server's address.
pub struct Base {
    host: String,
    port: u16,
    prefix: String,
}

/// A response.
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
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
        Ok(Base { host, port, prefix: if prefix.is_empty() { String::new() } else { format!("/{prefix}") } })
    }

    /// Send one request (a JSON body when given) and read the whole response.
    pub async fn request(&self, method: &str, path: &str, json: Option<&str>) -> Result<Reply> {
        tokio::time::timeout(TIMEOUT, self.exchange(method, path, json))
            .await
            .map_err(|_| anyhow!("{method} {path}: no answer from {}:{} within {TIMEOUT:?}", self.host, self.port))?
    }

    async fn exchange(&self, method: &str, path: &str, json: Option<&str>) -> Result<Reply> {
        let mut stream = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .with_context(|| format!("cannot connect to {}:{}", self.host, self.port))?;
        let mut head = format!(
            "{method} {}{path} HTTP/1.1\r\nHost: {}:{}\r\nConnection: close\r\nAccept: */*\r\n",
            self.prefix, self.host, self.port
        );
        if let Some(body) = json {
            head.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).await?;
        if let Some(body) = json {
            stream.write_all(body.as_bytes()).await?;
        }
        let mut raw = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&chunk[..n]);
            if raw.len() > MAX_RESPONSE {
                bail!("the response is larger than {MAX_RESPONSE} bytes");
            }
        }
        parse_response(&raw)
    }
}

fn parse_response(raw: &[u8]) -> Result<Reply> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| anyhow!("malformed HTTP response"))?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| anyhow!("malformed HTTP response head"))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| anyhow!("malformed status line `{status_line}`"))?;
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            let value = value.trim();
            if name.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked") {
                chunked = true;
            } else if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<usize>().ok();
            }
        }
    }
    let rest = &raw[end + 4..];
    let body = if chunked {
        dechunk(rest)?
    } else if let Some(n) = length {
        rest.get(..n).ok_or_else(|| anyhow!("the response body is shorter than its Content-Length"))?.to_vec()
    } else {
        rest.to_vec()
    };
    Ok(Reply { status, body })
}

fn dechunk(mut data: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n").ok_or_else(|| anyhow!("malformed chunk"))?;
        let size_text = std::str::from_utf8(&data[..line_end]).map_err(|_| anyhow!("malformed chunk size"))?;
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| anyhow!("malformed chunk size `{size_text}`"))?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(data.get(..size).ok_or_else(|| anyhow!("truncated chunk"))?);
        data = data.get(size + 2..).ok_or_else(|| anyhow!("truncated chunk"))?;
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
    fn urls_and_responses() {
        let b = Base::parse("http://127.0.0.1:8080/").expect("parses");
        assert_eq!((b.host.as_str(), b.port, b.prefix.as_str()), ("127.0.0.1", 8080, ""));
        let b = Base::parse("http://example.org/kibitz").expect("parses");
        assert_eq!((b.host.as_str(), b.port, b.prefix.as_str()), ("example.org", 80, "/kibitz"));
        assert!(Base::parse("https://x").is_err());
        let r = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi").expect("reads");
        assert_eq!((r.status, r.body.as_slice()), (200, &b"hi"[..]));
        let r = parse_response(
            b"HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        )
        .expect("reads");
        assert_eq!((r.status, r.body.as_slice()), (202, &b"abcde"[..]));
        assert!(parse_response(b"garbage").is_err());
    }
}
