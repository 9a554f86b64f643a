//! API keys, rate limits, quotas, job ownership and request ids, on a real `kibitz serve` with keys made by
//! the real `kibitz keys` command on the server's own SQLite file.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::Duration;

use common::{DEADLINE, Response, Server, TempDir, check_against_document, http_with};
use serde_json::{Value, json};

/// `kibitz keys ARGS --db DB`: (success, stdout, stderr).
fn keys(dir: &TempDir, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .arg("keys")
        .args(args)
        .arg("--db")
        .arg(dir.db())
        .env_remove("KIBITZ_DB")
        .output()
        .expect("run kibitz keys");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A new key named `name` with `extra` settings; the key.
fn make_key(dir: &TempDir, name: &str, extra: &[&str]) -> String {
    let mut args = vec!["create", "--name", name];
    args.extend_from_slice(extra);
    let (ok, out, err) = keys(dir, &args);
    assert!(ok, "keys create failed: {err}");
    let key = out.trim().to_string();
    assert!(key.starts_with("kbz_") && key.len() == 68, "{out}");
    key
}

/// A request with an optional key (and other headers), checked against the API document.
fn call(server: &Server, method: &str, target: &str, key: Option<&str>, body: Option<&Value>) -> Response {
    let bearer = key.map(|k| format!("Bearer {k}"));
    let mut headers: Vec<(&str, &str)> = Vec::new();
    if let Some(b) = &bearer {
        headers.push(("Authorization", b));
    }
    let text = body.map(Value::to_string).unwrap_or_default();
    if body.is_some() {
        headers.push(("Content-Type", "application/json"));
    }
    let response = http_with(server.addr, method, target, &headers, text.as_bytes());
    check_against_document(method, target, &response);
    response
}

fn header_u64(r: &Response, name: &str) -> u64 {
    r.header(name).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no numeric `{name}`: {:?}", r.headers))
}

#[test]
fn keys_are_made_listed_and_revoked_and_a_server_that_requires_them_says_401() {
    let dir = TempDir::new("keys");
    let alice = make_key(&dir, "alice", &["--rate", "5", "--burst", "50", "--quota-positions", "1000"]);
    let (ok, _, err) = keys(&dir, &["create", "--name", "alice"]);
    assert!(!ok && err.contains("exists already"), "{err}");
    let (ok, _, err) = keys(&dir, &["create", "--name", "bad name"]);
    assert!(!ok && err.contains("--name"), "{err}");
    let (ok, list, _) = keys(&dir, &["list"]);
    assert!(ok && list.contains("alice") && list.contains("active") && list.contains("1000"), "{list}");
    // Only the digest is stored: the key itself is nowhere in the database file.
    let db = std::fs::read(dir.db()).expect("db");
    assert!(!db.windows(alice.len()).any(|w| w == alice.as_bytes()), "the key is stored in the clear");

    let server = Server::start_on(&dir, &["--auth", "required", "--no-guide"]);
    let anonymous = call(&server, "GET", "/v1/games", None, None);
    let p = anonymous.problem(401);
    assert!(anonymous.header("www-authenticate").is_some_and(|v| v.starts_with("Bearer")), "{:?}", anonymous.headers);
    assert_eq!(p["request_id"].as_str(), anonymous.header("x-request-id"), "{p}");
    let wrong = call(&server, "GET", "/v1/games", Some("kbz_0000"), None);
    wrong.problem(401);
    assert!(wrong.header("www-authenticate").is_some_and(|v| v.contains("invalid_token")));
    let basic = http_with(server.addr, "GET", "/v1/games", &[("Authorization", "Basic YWxpY2U6eA==")], b"");
    basic.problem(401);
    // Probes stay open.
    assert_eq!(call(&server, "GET", "/healthz", None, None).status, 200);

    let served = call(&server, "GET", "/v1/games", Some(&alice), None);
    assert_eq!(served.status, 200, "{}", served.text());
    assert_eq!(header_u64(&served, "ratelimit-limit"), 50);
    assert!(header_u64(&served, "ratelimit-remaining") < 50);
    let analysed = call(&server, "POST", "/v1/analysis", Some(&alice), Some(&json!({"game": "checkers", "depth": 3})));
    assert_eq!(analysed.status, 200, "{}", analysed.text());

    // Revoked while the server runs: refused from the next request on.
    let (ok, out, _) = keys(&dir, &["revoke", "alice"]);
    assert!(ok && out.contains("revoked"), "{out}");
    let p = call(&server, "GET", "/v1/games", Some(&alice), None).problem(401);
    assert!(p["detail"].as_str().is_some_and(|d| d.contains("revoked")), "{p}");
    let (ok, _, err) = keys(&dir, &["revoke", "alice"]);
    assert!(!ok && err.contains("already revoked"), "{err}");
    let (_, list, _) = keys(&dir, &["list"]);
    assert!(list.contains("revoked"), "{list}");
    server.stop();

    // Optional: no key is an address's client; a bad key is still refused, never taken as no key.
    let server = Server::start_on(&dir, &["--auth", "optional", "--no-guide"]);
    assert_eq!(call(&server, "GET", "/v1/games", None, None).status, 200);
    call(&server, "GET", "/v1/games", Some(&alice), None).problem(401);
    call(&server, "GET", "/v1/games", Some("nonsense"), None).problem(401);
    server.stop();
}

#[test]
fn a_spent_key_gets_429_with_when_to_come_back_while_another_key_is_served() {
    let dir = TempDir::new("limits");
    // Three units, and a unit every 100 s: the fourth request is refused.
    let small = make_key(&dir, "small", &["--rate", "0.01", "--burst", "3"]);
    let big = make_key(&dir, "big", &["--rate", "100", "--burst", "1000", "--quota-positions", "5"]);
    let server = Server::start_on(&dir, &["--auth", "required", "--no-guide"]);
    for left in [2, 1, 0] {
        let r = call(&server, "GET", "/v1/games", Some(&small), None);
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(header_u64(&r, "ratelimit-remaining"), left);
        assert_eq!(header_u64(&r, "ratelimit-limit"), 3);
    }
    let limited = call(&server, "GET", "/v1/games", Some(&small), None);
    let p = limited.problem(429);
    assert_eq!(p["type"], "/problems/rate-limited", "{p}");
    assert!((99..=100).contains(&header_u64(&limited, "retry-after")), "{:?}", limited.headers);
    assert_eq!(header_u64(&limited, "ratelimit-remaining"), 0);
    assert!(header_u64(&limited, "ratelimit-reset") >= 299, "{:?}", limited.headers);
    assert!(p["request_id"].is_string(), "{p}");

    // The other key is served meanwhile, searches included.
    let r = call(&server, "POST", "/v1/analysis", Some(&big), Some(&json!({"game": "checkers", "depth": 4})));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(header_u64(&r, "ratelimit-limit"), 1000);

    // The daily quota: a job larger than the whole quota can never pass (found by an audit: it was told to come
    // back at midnight): 422, and nothing charged.
    let long = json!({"game": "chess", "text": "1. e4 e5 2. Nf3 Nc6 3. Bb5 *", "depth": 1});
    let p = call(&server, "POST", "/v1/annotations", Some(&big), Some(&long)).problem(422);
    assert_eq!(p["type"], "/problems/larger-than-quota", "{p}");
    // A job of more positions than the key has left today is refused with the time to the next day.
    let short = json!({"game": "chess", "text": "1. e4 e5 *", "depth": 1});
    assert_eq!(call(&server, "POST", "/v1/annotations", Some(&big), Some(&short)).status, 202);
    let refused = call(&server, "POST", "/v1/annotations", Some(&big), Some(&short));
    let p = refused.problem(429);
    assert_eq!(p["type"], "/problems/quota-exhausted", "{p}");
    assert!(p["detail"].as_str().is_some_and(|d| d.contains("2 are left")), "{p}");
    let retry = header_u64(&refused, "retry-after");
    assert!((1..=86_400).contains(&retry), "{retry}");
    assert_eq!(header_u64(&refused, "ratelimit-limit"), 5);
    assert_eq!(header_u64(&refused, "ratelimit-reset"), retry);
    server.stop();
}

#[test]
fn a_search_costing_more_than_the_bucket_passes_on_a_full_one_and_a_refused_one_costs_nothing() {
    let dir = TempDir::new("debt");
    // Three units, a unit every 100 s; a search of one second costs four (one as it comes, three when read).
    let full = make_key(&dir, "full", &["--rate", "0.01", "--burst", "3"]);
    let part = make_key(&dir, "part", &["--rate", "0.01", "--burst", "3"]);
    let server = Server::start_on(&dir, &["--auth", "required", "--no-guide"]);
    let costly = json!({"game": "checkers", "movetime_ms": 1000});
    // On a full bucket it passes and leaves it in debt: the next request waits for the unit owed and its own.
    let r = call(&server, "POST", "/v1/analysis", Some(&full), Some(&costly));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(header_u64(&r, "ratelimit-remaining"), 0);
    let limited = call(&server, "GET", "/v1/games", Some(&full), None);
    limited.problem(429);
    assert!((198..=200).contains(&header_u64(&limited, "retry-after")), "{:?}", limited.headers);
    // On a bucket that is not full it is refused, until the bucket is full again, and costs nothing.
    assert_eq!(header_u64(&call(&server, "GET", "/v1/games", Some(&part), None), "ratelimit-remaining"), 2);
    let refused = call(&server, "POST", "/v1/analysis", Some(&part), Some(&costly));
    let p = refused.problem(429);
    assert_eq!(p["type"], "/problems/rate-limited", "{p}");
    assert_eq!(header_u64(&refused, "ratelimit-remaining"), 2);
    assert!((99..=100).contains(&header_u64(&refused, "retry-after")), "{:?}", refused.headers);
    assert_eq!(header_u64(&call(&server, "GET", "/v1/games", Some(&part), None), "ratelimit-remaining"), 1);
    server.stop();
}

#[test]
fn anonymous_clients_are_limited_by_address() {
    let server = Server::start(&["--anon-rate", "0.01", "--anon-burst", "2", "--no-guide"]);
    assert_eq!(call(&server, "GET", "/v1/games", None, None).status, 200);
    assert_eq!(call(&server, "GET", "/v1/games", None, None).status, 200);
    let limited = call(&server, "GET", "/v1/games", None, None);
    limited.problem(429);
    assert!(header_u64(&limited, "retry-after") >= 99);
    // Probes are not charged.
    assert_eq!(call(&server, "GET", "/healthz", None, None).status, 200);
    server.stop();
}

#[test]
fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_limit() {
    let get = |server: &Server, forwarded: &str| {
        http_with(server.addr, "GET", "/v1/games", &[("x-forwarded-for", forwarded)], b"").status
    };
    // The test connects from 127.0.0.1, the proxy this server trusts: each forwarded address has its bucket.
    let server =
        Server::start(&["--anon-rate", "0.01", "--anon-burst", "2", "--no-guide", "--trusted-proxy", "127.0.0.1"]);
    assert_eq!((get(&server, "203.0.113.1"), get(&server, "203.0.113.1")), (200, 200));
    assert_eq!(get(&server, "203.0.113.1"), 429);
    assert_eq!(get(&server, "203.0.113.2"), 200, "another client behind the same proxy");
    // A client's own header before the proxy's entry changes nothing: the proxy's last word counts.
    assert_eq!(get(&server, "203.0.113.2, 203.0.113.1"), 429);
    // IPv6 clients are counted by their /64: another address of the same network pays from the same bucket.
    assert_eq!((get(&server, "2001:db8:1:2::1"), get(&server, "2001:db8:1:2:ffff::9")), (200, 200));
    assert_eq!(get(&server, "2001:db8:1:2::3"), 429, "a third address of one /64");
    assert_eq!(get(&server, "2001:db8:1:3::1"), 200, "another /64");
    server.stop();
    // Trusting nobody, the header is ignored: one bucket for the one peer.
    let server = Server::start(&["--anon-rate", "0.01", "--anon-burst", "2", "--no-guide"]);
    assert_eq!((get(&server, "203.0.113.1"), get(&server, "203.0.113.2")), (200, 200));
    assert_eq!(get(&server, "203.0.113.3"), 429);
    server.stop();
    // A proxy that is not an address is refused at start, naming it.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(["serve", "--trusted-proxy", "10.0.0.0/99", "--no-guide"])
        .output()
        .expect("run kibitz serve");
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("10.0.0.0/99") && text.contains("prefix length"), "{text}");
}

fn is_uuid_v4(id: &str) -> bool {
    let parts: Vec<&str> = id.split('-').collect();
    parts.iter().map(|p| p.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && id.chars().all(|c| c == '-' || c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        && parts[2].starts_with('4')
        && parts[3].starts_with(['8', '9', 'a', 'b'])
}

#[test]
fn a_job_belongs_to_its_key_and_ids_are_uuids() {
    let dir = TempDir::new("owners");
    let alice = make_key(&dir, "alice", &[]);
    let bob = make_key(&dir, "bob", &[]);
    // A job made before ids were UUIDs (32 hex digits) is still found by its id.
    let old_id = "0123456789abcdef0123456789abcdef";
    {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        runtime.block_on(async {
            let store = kibitz::store::Store::open(&dir.db().display().to_string()).await.expect("store");
            let job = kibitz::store::NewJob {
                id: old_id.into(),
                game: "chess".into(),
                settings: r#"{"depth":1,"threshold":100,"priority":"low","clamped":[]}"#.into(),
                games: vec![kibitz::store::NewJobGame { record: None, error: Some("{}".into()), positions: 0 }],
                owner: None,
            };
            store.create_job(&job).await.expect("job");
            store
                .set_job_status(
                    old_id,
                    &[kibitz::store::JobStatus::Queued],
                    kibitz::store::JobStatus::Failed,
                    Some("old"),
                )
                .await
                .expect("status");
            store.close().await;
        });
    }
    let server = Server::start_on(&dir, &["--auth", "optional", "--no-guide"]);
    let game = json!({"game": "chess", "text": "1. e4 e5 *", "depth": 1});
    let accepted = call(&server, "POST", "/v1/annotations", Some(&alice), Some(&game));
    assert_eq!(accepted.status, 202, "{}", accepted.text());
    let id = accepted.json()["id"].as_str().expect("id").to_string();
    assert!(is_uuid_v4(&id), "{id}");
    let path = format!("/v1/annotations/{id}");
    assert_eq!(call(&server, "GET", &path, Some(&alice), None).status, 200);
    let p = call(&server, "GET", &path, Some(&bob), None).problem(404);
    assert!(p["detail"].as_str().is_some_and(|d| d.contains(&id)), "{p}");
    call(&server, "GET", &path, None, None).problem(404);
    call(&server, "GET", &format!("{path}/export"), Some(&bob), None).problem(404);
    call(&server, "DELETE", &path, Some(&bob), None).problem(404);
    // Over the WebSocket too.
    let mut ws = ws_connect(server.addr, Some(&bob)).expect("bob's socket");
    ws.send(tokio_tungstenite::tungstenite::Message::text(
        json!({"type": "subscribe", "id": "s", "job": id}).to_string(),
    ))
    .expect("send");
    let reply = ws_next(&mut ws);
    assert_eq!((reply["type"].as_str(), reply["status"].as_u64()), (Some("error"), Some(404)), "{reply}");

    // A job made without a key is anybody's who has its id.
    let accepted = call(&server, "POST", "/v1/annotations", None, Some(&game));
    let anonymous_id = accepted.json()["id"].as_str().expect("id").to_string();
    assert!(is_uuid_v4(&anonymous_id), "{anonymous_id}");
    assert_eq!(call(&server, "GET", &format!("/v1/annotations/{anonymous_id}"), Some(&bob), None).status, 200);
    let old = call(&server, "GET", &format!("/v1/annotations/{old_id}"), None, None);
    assert_eq!(old.status, 200, "{}", old.text());
    assert_eq!(old.json()["status"], "failed");

    // Each key lists its own jobs, newest first; a client without a key has no list (the jobs made without
    // a key are found by their ids only).
    let second = call(&server, "POST", "/v1/annotations", Some(&alice), Some(&game));
    let second_id = second.json()["id"].as_str().expect("id").to_string();
    let listed = |key: Option<&str>| {
        let r = call(&server, "GET", "/v1/annotations", key, None);
        assert_eq!(r.status, 200, "{}", r.text());
        let ids: Vec<String> =
            r.json()["jobs"].as_array().expect("jobs").iter().map(|j| j["id"].as_str().expect("id").into()).collect();
        ids
    };
    assert_eq!(listed(Some(&alice)), [second_id.clone(), id.clone()]);
    assert!(listed(Some(&bob)).is_empty());
    let r = call(&server, "GET", "/v1/annotations?limit=1", Some(&alice), None);
    assert_eq!(r.json()["jobs"][0]["status_url"], json!(format!("/v1/annotations/{second_id}")));
    assert_eq!(r.json()["jobs"].as_array().map(Vec::len), Some(1));
    call(&server, "GET", "/v1/annotations?limit=0", Some(&alice), None).problem(422);
    let p = call(&server, "GET", "/v1/annotations", None, None).problem(401);
    assert!(p["detail"].as_str().is_some_and(|d| d.contains("API key")), "{p}");
    // Only its key removes a job; removed, it is gone from the list and from every route.
    call(&server, "DELETE", &format!("{path}?purge=true"), Some(&bob), None).problem(404);
    let removed = call(&server, "DELETE", &format!("{path}?purge=true"), Some(&alice), None);
    assert_eq!(removed.status, 200, "{}", removed.text());
    assert_eq!(removed.json()["status"], "removed");
    assert_eq!(listed(Some(&alice)), [second_id]);
    call(&server, "GET", &path, Some(&alice), None).problem(404);
    call(&server, "DELETE", &format!("{path}?purge=true"), Some(&alice), None).problem(404);
    server.stop();
}

type Socket = tokio_tungstenite::tungstenite::WebSocket<TcpStream>;

/// A WebSocket on `/v1/stream`, with the key as a bearer header; the handshake's status when refused.
fn ws_connect(addr: SocketAddr, key: Option<&str>) -> Result<Socket, u16> {
    ws_connect_to(addr, "/v1/stream", key)
}

fn ws_connect_to(addr: SocketAddr, target: &str, key: Option<&str>) -> Result<Socket, u16> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let stream = TcpStream::connect_timeout(&addr, DEADLINE).expect("connect");
    stream.set_read_timeout(Some(DEADLINE)).expect("timeout");
    let mut request = format!("ws://{addr}{target}").into_client_request().expect("request");
    if let Some(key) = key {
        request.headers_mut().insert("Authorization", format!("Bearer {key}").parse().expect("header"));
    }
    match tokio_tungstenite::tungstenite::client(request, stream) {
        Ok((socket, _)) => Ok(socket),
        Err(tokio_tungstenite::tungstenite::HandshakeError::Failure(tokio_tungstenite::tungstenite::Error::Http(
            response,
        ))) => Err(response.status().as_u16()),
        Err(e) => panic!("handshake: {e}"),
    }
}

fn ws_next(ws: &mut Socket) -> Value {
    loop {
        match ws.read().expect("read") {
            tokio_tungstenite::tungstenite::Message::Text(t) => return serde_json::from_str(t.as_str()).expect("json"),
            _ => continue,
        }
    }
}

#[test]
fn websockets_take_keys_in_a_header_or_the_query_and_are_limited_per_address() {
    let dir = TempDir::new("ws");
    let key = make_key(&dir, "web", &[]);
    let server = Server::start_on(&dir, &["--auth", "required", "--max-ws-per-address", "2", "--no-guide"]);
    assert_eq!(ws_connect(server.addr, None).err(), Some(401));
    assert_eq!(ws_connect_to(server.addr, "/v1/stream?key=kbz_wrong", None).err(), Some(401));
    let mut first = ws_connect_to(server.addr, &format!("/v1/stream?key={key}"), None).expect("key in the query");
    let _second = ws_connect(server.addr, Some(&key)).expect("key in a header");
    assert_eq!(ws_connect(server.addr, Some(&key)).err(), Some(429));
    // The sockets work, and a closed one frees its place.
    first
        .send(tokio_tungstenite::tungstenite::Message::text(
            json!({"type": "analyse", "id": "a", "game": "checkers", "depth": 2}).to_string(),
        ))
        .expect("send");
    loop {
        let v = ws_next(&mut first);
        if v["type"] == "bestmove" {
            break;
        }
        assert_ne!(v["type"], "error", "{v}");
    }
    first.close(None).expect("close");
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        match ws_connect(server.addr, Some(&key)) {
            Ok(_) => break,
            Err(429) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Err(status) => panic!("status {status}"),
        }
    }
    server.stop();
}

#[test]
fn an_infinite_analysis_pays_as_it_runs_and_stops_when_its_client_cannot() {
    let dir = TempDir::new("ws-infinite");
    // 20 units at most: the socket (1) and the analysis' first 4 s (1 + 16) leave 2.
    let poor = make_key(&dir, "poor", &["--rate", "1", "--burst", "20"]);
    let rich = make_key(&dir, "rich", &["--rate", "5", "--burst", "20"]);
    let server = Server::start_on(&dir, &["--auth", "required", "--no-guide", "--workers", "2"]);
    let analyse = json!({"type": "analyse", "id": "inf", "game": "chess", "infinite": true}).to_string();
    let started = std::time::Instant::now();
    let mut sockets = Vec::new();
    for key in [&poor, &rich] {
        let mut ws = ws_connect(server.addr, Some(key)).expect("socket");
        ws.send(tokio_tungstenite::tungstenite::Message::text(analyse.clone())).expect("send");
        sockets.push(ws);
    }
    let (mut poor_ws, mut rich_ws) = (sockets.remove(0), sockets.remove(0));
    // The poor client's bucket (2 units and 1 a second) cannot pay for the next 4 s when they come: the analysis
    // stops then, answering with what it has and when the client could pay again.
    let best = loop {
        let v = ws_next(&mut poor_ws);
        assert_ne!(v["type"], "error", "{v}");
        if v["type"] == "bestmove" {
            break v;
        }
    };
    assert!(started.elapsed() >= Duration::from_secs(4), "stopped before its paid 4 s: {best}");
    assert_eq!(best["stopped"], json!(true), "{best}");
    assert!(best["retry_after_s"].as_u64().is_some_and(|s| (1..=16).contains(&s)), "{best}");
    assert!(best["bestmove"].is_string() && best["depth"].as_u64() >= Some(1), "{best}");
    // The rich client (5 units a second, more than the 4 the analysis costs) goes on until it stops it.
    rich_ws.get_ref().set_read_timeout(Some(Duration::from_millis(200))).expect("timeout");
    while started.elapsed() < Duration::from_secs(9) {
        match rich_ws.read() {
            Ok(tokio_tungstenite::tungstenite::Message::Text(t)) => {
                let v: Value = serde_json::from_str(t.as_str()).expect("json");
                assert_eq!(v["type"], "info", "the paying analysis ended by itself: {v}");
            }
            Ok(_) => {}
            Err(tokio_tungstenite::tungstenite::Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("read: {e}"),
        }
    }
    rich_ws.get_ref().set_read_timeout(Some(DEADLINE)).expect("timeout");
    rich_ws
        .send(tokio_tungstenite::tungstenite::Message::text(json!({"type": "stop", "id": "inf"}).to_string()))
        .expect("send");
    let best = loop {
        let v = ws_next(&mut rich_ws);
        if v["type"] == "bestmove" {
            break v;
        }
    };
    assert!(best.get("retry_after_s").is_none() && best.get("stopped").is_none(), "{best}");
    server.stop();
}

/// Found by an audit: an endless analysis waiting in the queue (every worker busy) was charged for each period
/// it waited, and stopped as unpaid before it had searched at all.
#[test]
fn an_infinite_analysis_waiting_for_a_worker_pays_nothing_while_it_waits() {
    let dir = TempDir::new("ws-infinite-queued");
    let hog = make_key(&dir, "hog", &["--rate", "100", "--burst", "1000"]);
    // 40 units, hardly refilled: the socket (1) and the first period (1 + 16) leave 22; a period charged while
    // waiting would leave 6, and a second could not be paid.
    let waiter = make_key(&dir, "waiter", &["--rate", "0.001", "--burst", "40"]);
    let server = Server::start_on(&dir, &["--auth", "required", "--no-guide", "--workers", "1"]);
    let addr = server.addr;
    let hogging = std::thread::spawn(move || {
        let bearer = format!("Bearer {hog}");
        let headers = [("Authorization", bearer.as_str()), ("Content-Type", "application/json")];
        let body = json!({"game": "chess", "movetime_ms": 12_000}).to_string();
        http_with(addr, "POST", "/v1/analysis", &headers, body.as_bytes()).status
    });
    server.wait_metric("kibitz_pool_busy_workers", |busy| busy == 1.0);
    let mut ws = ws_connect(server.addr, Some(&waiter)).expect("socket");
    let analyse = json!({"type": "analyse", "id": "inf", "game": "checkers", "infinite": true}).to_string();
    ws.send(tokio_tungstenite::tungstenite::Message::text(analyse)).expect("send");
    server.wait_metric("kibitz_pool_queue_depth", |queued| queued == 1.0);
    // Two periods pass while it waits (the hog holds the one worker 12 s of wall-clock time).
    std::thread::sleep(Duration::from_millis(8_500));
    assert_eq!(server.metric("kibitz_pool_queue_depth"), 1.0, "the analysis left the queue early");
    let games = call(&server, "GET", "/v1/games", Some(&waiter), None);
    assert_eq!(header_u64(&games, "ratelimit-remaining"), 21, "charged while waiting");
    ws.send(tokio_tungstenite::tungstenite::Message::text(json!({"type": "stop", "id": "inf"}).to_string()))
        .expect("send");
    let answer = ws_next(&mut ws);
    assert!(answer.get("retry_after_s").is_none(), "stopped as unpaid: {answer}");
    assert_eq!(hogging.join().expect("hog"), 200);
    server.stop();
}

/// Found by an audit: a socket opened with a key kept analysing after the key was revoked.
#[test]
fn a_revoked_keys_socket_is_closed_and_two_authorization_headers_are_refused() {
    use tokio_tungstenite::tungstenite::Message;
    let dir = TempDir::new("ws-revoked");
    let key = make_key(&dir, "bob", &[]);
    let server = Server::start_on(&dir, &["--auth", "required", "--no-guide", "--workers", "1"]);
    // Two Authorization headers (a proxy reading the other one would see another client): refused.
    for pair in
        [[format!("Bearer {key}"), "Bearer junk".to_string()], ["Bearer junk".to_string(), format!("Bearer {key}")]]
    {
        let headers = [("Authorization", pair[0].as_str()), ("Authorization", pair[1].as_str())];
        let r = http_with(server.addr, "GET", "/v1/games", &headers, b"");
        assert!(r.problem(401)["detail"].as_str().is_some_and(|d| d.contains("one Authorization header")));
    }
    let mut ws = ws_connect(server.addr, Some(&key)).expect("socket");
    let analyse = json!({"type": "analyse", "id": "inf", "game": "chess", "infinite": true}).to_string();
    ws.send(Message::text(analyse)).expect("send");
    assert_eq!(ws_next(&mut ws)["type"], "info");
    let (ok, _, err) = keys(&dir, &["revoke", "bob"]);
    assert!(ok, "{err}");
    // Within the socket's recheck (10 s) it is told, and closed with 1008; its analysis ends with it.
    let error = loop {
        let v = ws_next(&mut ws);
        if v["type"] == "error" {
            break v;
        }
        assert_eq!(v["type"], "info", "{v}");
    };
    assert_eq!(error["status"], 401, "{error}");
    assert!(error["detail"].as_str().is_some_and(|d| d.contains("revoked")), "{error}");
    let code = loop {
        match ws.read() {
            Ok(Message::Close(frame)) => break frame.map(|f| u16::from(f.code)),
            Ok(Message::Text(t)) => assert!(t.contains("\"info\""), "{t}"),
            Ok(_) => {}
            Err(e) => panic!("the socket ended without a close frame: {e}"),
        }
    };
    assert_eq!(code, Some(1008));
    server.wait_metric("kibitz_pool_busy_workers", |busy| busy == 0.0);
    assert_eq!(ws_connect(server.addr, Some(&key)).err(), Some(401));
    server.stop();
}

/// Found by an audit: a search refused because every worker was busy was charged in full, over HTTP and on
/// the WebSocket; WebSocket messages cost nothing, so a socket could ask the store for jobs without limit; and
/// a wrong key cost its address nothing, so keys could be guessed as fast as requests could be sent.
#[test]
fn what_gets_no_answer_costs_only_the_request_and_every_message_and_wrong_key_costs_one() {
    use tokio_tungstenite::tungstenite::Message;
    let dir = TempDir::new("busy-charge");
    let hog = make_key(&dir, "hog", &["--rate", "100", "--burst", "1000"]);
    let payer = make_key(&dir, "payer", &["--rate", "0.001", "--burst", "100"]);
    let server = Server::start_on(
        &dir,
        &[
            "--auth",
            "optional",
            "--no-guide",
            "--workers",
            "1",
            "--queue",
            "1",
            "--anon-rate",
            "0.001",
            "--anon-burst",
            "3",
        ],
    );
    // The one worker busy and the one place in the queue taken.
    let long = json!({"game": "chess", "movetime_ms": 4000});
    // One after the other: a client holds at most its share of the queue (one place of one), so the second
    // must find the first on the worker, not still queued (sent together, the second was refused now and then).
    let hogs: Vec<_> = ["e2e4", "d2d4"]
        .into_iter()
        .enumerate()
        .map(|(n, first)| {
            let (addr, hog) = (server.addr, hog.clone());
            // Long enough for the steps below to find the pool full, on a loaded machine too.
            let body = json!({"game": "chess", "moves": [first], "movetime_ms": 8000}).to_string();
            let thread = std::thread::spawn(move || {
                let bearer = format!("Bearer {hog}");
                let headers = [("Authorization", bearer.as_str()), ("Content-Type", "application/json")];
                http_with(addr, "POST", "/v1/analysis", &headers, body.as_bytes()).status
            });
            if n == 0 {
                server.wait_metric("kibitz_pool_busy_workers", |busy| busy == 1.0);
            }
            thread
        })
        .collect();
    server.wait_metric("kibitz_pool_queue_depth", |queued| queued == 1.0);
    let refused = call(&server, "POST", "/v1/analysis", Some(&payer), Some(&long));
    refused.problem(503);
    assert_eq!(header_u64(&refused, "ratelimit-remaining"), 99, "the request's unit only");
    let mut ws = ws_connect(server.addr, Some(&payer)).expect("socket"); // 98 left
    ws.send(Message::text(json!({"type": "analyse", "id": "a", "game": "chess", "movetime_ms": 4000}).to_string()))
        .expect("send"); // 97 left
    let v = ws_next(&mut ws);
    assert_eq!((v["type"].as_str(), v["status"].as_u64()), (Some("error"), Some(503)), "{v}");
    assert!(v["retry_after_s"].as_u64().is_some_and(|s| s >= 1), "{v}");
    // Every message costs a unit, refused ones too, but a stop.
    for n in 0..3 {
        ws.send(Message::text(json!({"type": "subscribe", "id": format!("s{n}"), "job": "nope"}).to_string()))
            .expect("send");
        assert_eq!(ws_next(&mut ws)["status"], 404);
        ws.send(Message::text(json!({"type": "stop", "id": "nothing"}).to_string())).expect("send");
        assert_eq!(ws_next(&mut ws)["status"], 404);
    }
    // A binary message is told to be text, and costs its unit as any other (it was free).
    ws.send(Message::binary(b"{\"type\": \"subscribe\"}".to_vec())).expect("send");
    let v = ws_next(&mut ws);
    assert_eq!((v["type"].as_str(), v["status"].as_u64()), (Some("error"), Some(400)), "{v}");
    assert!(v["detail"].as_str().is_some_and(|d| d.contains("binary")), "{v}");
    assert_eq!(header_u64(&call(&server, "GET", "/v1/games", Some(&payer), None), "ratelimit-remaining"), 92);
    for status in hogs.into_iter().map(|h| h.join().expect("hog")) {
        assert_eq!(status, 200);
    }
    // Wrong keys: each costs the address a unit of its bucket (three), then 429.
    for _ in 0..3 {
        call(&server, "GET", "/v1/games", Some("kbz_wrong"), None).problem(401);
    }
    call(&server, "GET", "/v1/games", Some("kbz_wrong"), None).problem(429);
    server.stop();
}

/// Lines a GUIDE connection receives until it closes or goes quiet for a while.
fn guide_lines(stream: &TcpStream, until: &str) -> Vec<String> {
    stream.set_read_timeout(Some(DEADLINE)).expect("timeout");
    let mut reader = BufReader::new(stream);
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return lines,
            Ok(_) => {
                let line = line.trim().to_string();
                let done = line.starts_with(until);
                lines.push(line);
                if done {
                    return lines;
                }
            }
        }
    }
}

#[test]
fn guide_sessions_need_a_key_line_when_required_and_are_limited_per_address() {
    let dir = TempDir::new("guide");
    let key = make_key(&dir, "gui", &[]);
    let server = Server::start_on(&dir, &["--auth", "required", "--guide-max-sessions-per-address", "1"]);
    let addr = server.guide_addr.expect("gateway");

    let mut refused = TcpStream::connect(addr).expect("connect");
    refused.write_all(b"info\n").expect("write");
    let got = guide_lines(&refused, "error");
    assert!(got.iter().any(|l| l.starts_with("error") && l.contains("#kibitz key")), "{got:?}");

    let mut wrong = TcpStream::connect(addr).expect("connect");
    wrong.write_all(b"#kibitz key kbz_nope\n").expect("write");
    let got = guide_lines(&wrong, "error");
    assert!(got.iter().any(|l| l.starts_with("error unknown API key")), "{got:?}");

    // The refused connections' places are freed once the server has closed them.
    let deadline = std::time::Instant::now() + DEADLINE;
    let mut session = loop {
        let mut session = TcpStream::connect(addr).expect("connect");
        session.write_all(format!("#kibitz key {key}\n").as_bytes()).expect("write");
        let hello = guide_lines(&session, "engineok");
        if hello.iter().any(|l| l.contains("per address")) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        assert!(hello.first().is_some_and(|l| l.starts_with("name kibitz")), "{hello:?}");
        assert!(hello.last().is_some_and(|l| l == "engineok"), "{hello:?}");
        break session;
    };

    // A second session from the same address is refused while the first is open.
    let second = TcpStream::connect(addr).expect("connect");
    let got = guide_lines(&second, "error");
    assert!(got.iter().any(|l| l.contains("per address")), "{got:?}");
    session.write_all(b"quit\n").expect("quit");
    server.stop();
}

#[test]
fn behind_a_trusted_tcp_balancer_guide_sessions_count_the_client_its_proxy_header_names() {
    let server = Server::start(&["--trusted-proxy", "127.0.0.1", "--guide-max-sessions-per-address", "1"]);
    let addr = server.guide_addr.expect("gateway");
    let via_proxy = |header: &[u8]| {
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream.write_all(header).expect("write");
        let got = guide_lines(&stream, "error");
        (stream, got)
    };
    let v1 = |client: &str| format!("PROXY TCP4 {client} 127.0.0.1 40000 {}\r\n", addr.port()).into_bytes();
    let greeted = |got: &[String]| got.first().is_some_and(|l| l.starts_with("name kibitz"));

    // haproxy's `send-proxy` line names the client: its session is counted as that client's.
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.write_all(&v1("203.0.113.9")).expect("write");
    let first = guide_lines(&stream, "engineok");
    assert!(greeted(&first), "{first:?}");

    // The same client again is refused by the limit per address, named by its own address ...
    let (_second, got) = via_proxy(&v1("203.0.113.9"));
    assert!(got.iter().any(|l| l.contains("per address") && l.contains("203.0.113.9")), "{got:?}");
    // ... and so it is through version 2 of the protocol (`send-proxy-v2`).
    let mut v2 = vec![0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, 0x21, 0x11, 0, 12];
    v2.extend_from_slice(&[203, 0, 113, 9, 127, 0, 0, 1, 0x9C, 0x40]);
    v2.extend_from_slice(&addr.port().to_be_bytes());
    let (_third, got) = via_proxy(&v2);
    assert!(got.iter().any(|l| l.contains("per address") && l.contains("203.0.113.9")), "{got:?}");

    // Another client through the same balancer (the same peer address) has its own place.
    let mut other = TcpStream::connect(addr).expect("connect");
    other.write_all(&v1("198.51.100.4")).expect("write");
    let got = guide_lines(&other, "engineok");
    assert!(greeted(&got), "{got:?}");

    // A header that cannot be read is refused, saying why.
    let (_bad, got) = via_proxy(b"PROXY TCP4 not-an-address 127.0.0.1 1 2\r\n");
    assert!(got.iter().any(|l| l.starts_with("error") && l.contains("PROXY")), "{got:?}");
    other.write_all(b"quit\n").expect("quit");
    stream.write_all(b"quit\n").expect("quit");
    server.stop();
}

#[test]
fn a_guide_key_line_dribbled_a_byte_at_a_time_is_cut_off() {
    let dir = TempDir::new("dribble");
    let server = Server::start_on(&dir, &["--auth", "required"]);
    let addr = server.guide_addr.expect("gateway");
    let stream = TcpStream::connect(addr).expect("connect");
    // A byte every 4 s, each well inside the gateway's 10 s for the key line, for 40 s in all unless cut off.
    let mut writer = stream.try_clone().expect("clone");
    let dribbler = std::thread::spawn(move || {
        for byte in b"#kibitz key" {
            if writer.write_all(&[*byte]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_secs(4));
        }
    });
    let got = guide_lines(&stream, "error");
    assert!(got.iter().any(|l| l.starts_with("error") && l.contains("did not come within")), "{got:?}");
    // The dribbler's next byte then fails at once.
    let _ = stream.shutdown(std::net::Shutdown::Both);
    dribbler.join().expect("the dribbler");
    server.stop();
}

#[test]
fn every_answer_has_a_request_id_which_the_logs_carry() {
    let dir = TempDir::new("ids");
    let server = Server::start_with_env(
        &dir,
        &["--no-guide", "--log-format", "json"],
        &[("KIBITZ_LOG", "info,tower_http=debug")],
    );
    let given = http_with(server.addr, "GET", "/v1/games", &[("x-request-id", "trace-42.a:b_c")], b"");
    assert_eq!(given.header("x-request-id"), Some("trace-42.a:b_c"));
    let made = http_with(server.addr, "GET", "/healthz", &[], b"");
    let made_id = made.header("x-request-id").expect("an id is made").to_string();
    assert_eq!(made_id.len(), 32, "{made_id}");
    let long = "x".repeat(300);
    let replaced = http_with(server.addr, "GET", "/nowhere", &[("x-request-id", &long)], b"");
    let p = replaced.problem(404);
    let id = replaced.header("x-request-id").expect("id");
    assert_ne!(id, long);
    assert_eq!(p["request_id"].as_str(), Some(id), "{p}");
    // The log lines of a request are JSON objects naming its id.
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let log = server.stderr();
        let found = log
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .any(|v| v.to_string().contains("\"request_id\":\"trace-42.a:b_c\""));
        if found {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no JSON log line with the request id:\n{log}");
        std::thread::sleep(Duration::from_millis(50));
    }
    server.stop();
}
