//! Every status the server can send for a bad or unlucky request is an RFC 9457 problem document, the limits
//! it lowers are reported, a search cut by the request timeout answers with what it has, and a WebSocket fed a
//! frame it cannot take is closed with a close code and a reason.

mod common;

use std::net::TcpStream;
use std::time::Duration;

use common::{Server, raw_exchange};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite;

fn request_bytes(method: &str, target: &str, extra_headers: &str, body: &[u8], announced: usize) -> Vec<u8> {
    let mut bytes = format!(
        "{method} {target} HTTP/1.1\r\nHost: kibitz\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Content-Length: {announced}\r\n{extra_headers}\r\n"
    )
    .into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

#[test]
fn every_status_the_server_sends_is_a_problem_document() {
    let server = Server::start(&[
        "--max-body-bytes",
        "4096",
        "--max-annotation-bytes",
        "8192",
        "--request-timeout-s",
        "1",
        "--workers",
        "1",
        "--queue",
        "0",
    ]);
    let game = "chess";
    let mut seen = std::collections::BTreeSet::new();
    let mut check = |what: &str, r: common::Response, status: u16| -> Value {
        let p = r.problem(status);
        common::validate_named("Problem", &p);
        assert!(!p["detail"].as_str().unwrap_or("").is_empty(), "{what}: {p}");
        seen.insert(status);
        p
    };

    // 400, 413, 415, 422 (a missing member named), 404, 405, 426 through the ordinary helpers.
    let r = server.request("POST", "/v1/analysis", Some("application/json"), b"{\"game\": nope");
    check("not JSON", r, 400);
    let big = json!({ "game": game, "position": "x".repeat(8000) }).to_string();
    check("body too large", server.request("POST", "/v1/analysis", Some("application/json"), big.as_bytes()), 413);
    let big = json!({ "game": game, "text": "x".repeat(9000) }).to_string();
    let r = server.request("POST", "/v1/annotations", Some("application/json"), big.as_bytes());
    check("annotation body over --max-annotation-bytes", r, 413);
    let r = server.request("POST", "/v1/moves", Some("text/plain"), json!({ "game": game }).to_string().as_bytes());
    check("not sent as JSON", r, 415);
    // A compressed body is named as such (it was 400, "not valid JSON").
    let gzipped = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03];
    let headers = [("content-type", "application/json"), ("content-encoding", "gzip")];
    let p = check("compressed body", common::http_with(server.addr, "POST", "/v1/moves", &headers, &gzipped), 415);
    assert!(p["detail"].as_str().is_some_and(|d| d.contains("Content-Encoding: gzip")), "{p}");
    let p = check("missing game", server.post("/v1/analysis", &json!({ "depth": 3 })), 422);
    assert_eq!(p["field"], json!("game"), "{p}");
    let p = check("missing game (annotations)", server.post("/v1/annotations", &json!({ "text": "" })), 422);
    assert_eq!(p["field"], json!("game"), "{p}");
    check("unknown path", server.get("/no/such/path"), 404);
    // A path segment that is not UTF-8 once read names no job and no file (it was a plain-text 400).
    for path in ["/v1/annotations/%FF", "/v1/annotations/%FF/export", "/web/%FF"] {
        check("a path segment that is not UTF-8", server.get(path), 404);
    }
    check("a job id that is not UTF-8", server.request("DELETE", "/v1/annotations/%C3%28", None, b""), 404);
    check("nothing cached", server.get(&format!("/v1/analysis?game={game}")), 404);
    for (method, path) in [("DELETE", "/v1/games"), ("PUT", "/v1/analysis"), ("GET", "/v1/moves"), ("POST", "/healthz")]
    {
        let r = server.request(method, path, Some("application/json"), b"{}");
        assert!(r.header("allow").is_some_and(|a| a.contains("OPTIONS")), "{method} {path}: Allow: {r:?}");
        let p = check("method not allowed", r, 405);
        assert!(p["detail"].as_str().unwrap_or("").contains(method), "{p}");
        // OPTIONS is answered on every path, with the methods it takes, OPTIONS among them.
        let r = common::http_with(server.addr, "OPTIONS", path, &[], b"");
        assert_eq!(r.status, 200, "OPTIONS {path}: {r:?}");
        let allow = r.header("allow").unwrap_or_default().to_string();
        assert!(allow.contains("OPTIONS") && allow.contains("GET") || allow.contains("POST"), "{path}: {allow}");
    }
    check("stream without upgrade", server.get("/v1/stream"), 426);

    // 408: a body that never comes in full is cut by the request timeout, with a problem document.
    let partial = request_bytes("POST", "/v1/moves", "", b"{\"game\":", 100);
    let p = check("request timeout", raw_exchange(server.addr, &partial), 408);
    assert!(p["detail"].as_str().is_some_and(|d| !d.is_empty()), "{p}");

    // 413 for a body announced larger than the limit, without waiting for it (found by an audit: the connection
    // was held to the request timeout and answered 408), on either limit; and 100-continue is not granted.
    for (path, announced) in [("/v1/moves", 99_999_999_999usize), ("/v1/annotations", 8193)] {
        let r = raw_exchange(server.addr, &request_bytes("POST", path, "", b"", announced));
        assert_eq!(r.header("connection"), Some("close"), "{r:?}");
        let p = check("body announced too large", r, 413);
        assert!(p["detail"].as_str().is_some_and(|d| d.contains(&announced.to_string())), "{p}");
    }
    let r = raw_exchange(server.addr, &request_bytes("POST", "/v1/moves", "Expect: 100-continue\r\n", b"", 5000));
    // (A `100 Continue` would be read as the answer's status.)
    check("body announced too large, 100-continue asked", r, 413);
    // Not one JSON text: a second value or stray bytes after the body's value.
    for body in [
        &b"{\"game\": \"chess\"} trailing"[..],
        b"{\"game\": \"chess\"}{\"game\": \"xiangqi\"}",
        b"{\"game\":\"chess\"}\0",
    ] {
        let p = check("trailing content", server.request("POST", "/v1/moves", Some("application/json"), body), 400);
        assert!(p["detail"].as_str().is_some_and(|d| d.contains("after the value")), "{p}");
    }
    // A member of an enumerated string of another JSON type is named, not called unreadable JSON.
    for cache in [json!(null), json!(1), json!(["only"]), json!({ "only": null })] {
        let p =
            check("cache of another type", server.post("/v1/analysis", &json!({ "game": game, "cache": cache })), 422);
        assert_eq!(p["field"], json!("cache"), "{p}");
    }

    // 431: too many header fields, or too many bytes of them.
    let many: String = (0..150).map(|i| format!("X-Filler-{i}: {i}\r\n")).collect();
    let body = json!({ "game": game }).to_string();
    let r = raw_exchange(server.addr, &request_bytes("POST", "/v1/moves", &many, body.as_bytes(), body.len()));
    check("too many header fields", r, 431);
    let long = format!("X-Long: {}\r\n", "y".repeat(40 * 1024));
    let r = raw_exchange(server.addr, &request_bytes("POST", "/v1/moves", &long, body.as_bytes(), body.len()));
    check("header section too large", r, 431);

    // The HTTP library's own answers are problem documents too: a request line it cannot read (400), and a
    // header section above its read buffer (431).
    for garbage in
        [&b"GARBAGE\r\n\r\n"[..], b"GET /v1/games HTTP/1.1\r\nBad Header Line\r\n\r\n", b"\x01\x02 / HTTP/1.1\r\n\r\n"]
    {
        let r = raw_exchange(server.addr, garbage);
        assert_eq!(r.header("connection"), Some("close"), "{r:?}");
        let p = check("unreadable request", r, 400);
        assert_eq!(p["type"], json!("/problems/unreadable-request"), "{p}");
    }
    let huge = format!("X-Huge: {}\r\n", "z".repeat(600 * 1024));
    let r = raw_exchange(server.addr, &request_bytes("GET", "/v1/games", &huge, b"", 0));
    assert_eq!(r.header("connection"), Some("close"), "{r:?}");
    let p = check("header section above the library's buffer", r, 431);
    assert_eq!(p["type"], json!("/problems/headers-too-large"), "{p}");

    // 503 (with Retry-After): one worker, no queue, the worker busy with an endless WebSocket analysis.
    let mut ws = server.ws();
    ws.send(&json!({ "type": "analyse", "id": "busy", "game": game, "infinite": true }));
    let _ = ws.recv();
    let r = server.post("/v1/analysis", &json!({ "game": game, "moves": ["e2e4"], "depth": 5 }));
    assert!(r.header("retry-after").is_some(), "{r:?}");
    check("every worker busy", r, 503);
    ws.send(&json!({ "type": "stop", "id": "busy" }));
    let _ = ws.until("bestmove", "busy");

    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        vec![400, 404, 405, 408, 413, 415, 422, 426, 431, 503],
        "every status walked"
    );
    // The server goes on after all of it.
    assert_eq!(server.get("/healthz").status, 200);
}

#[test]
fn a_search_cut_by_the_request_timeout_answers_with_what_it_has_and_clamped_limits_are_reported() {
    let server = Server::start(&["--request-timeout-s", "1", "--max-depth", "40"]);
    for game in ["chess", "checkers"] {
        let r = server.post("/v1/analysis", &json!({ "game": game, "depth": 1_000_000_000u64 }));
        assert_eq!(r.status, 200, "{}", r.text());
        let a = r.json();
        common::validate_named("Analysis", &a);
        assert_eq!(a["stopped"], json!(true), "{a}");
        assert_eq!(a["clamped"], json!([{ "field": "depth", "requested": 1_000_000_000u64, "used": 40 }]), "{a}");
        let depth = a["depth"].as_u64().expect("depth");
        assert!((1..40).contains(&depth), "{a}");
        assert!(a["bestmove"].is_string(), "{a}");
    }
    // A search that ends in time is not marked.
    let a = server.post_ok("/v1/analysis", &json!({ "game": "chess", "depth": 2 }));
    assert!(a.get("stopped").is_none() && a.get("clamped").is_none(), "{a}");
    let a = server.post_ok("/v1/analysis", &json!({ "game": "chess", "nodes": u64::MAX }));
    assert_eq!(a["clamped"][0]["field"], json!("nodes"), "{a}");

    // An annotation job says what it lowered, in its answer and in its document.
    let text = "[Event \"x\"]\n\n1. e4 e5 *\n";
    let r = server.post("/v1/annotations", &json!({ "game": "chess", "text": text, "depth": 1_000_000_000u64 }));
    assert_eq!(r.status, 202, "{}", r.text());
    let accepted = r.json();
    let clamped = json!([{ "field": "depth", "requested": 1_000_000_000u64, "used": 40 }]);
    assert_eq!(accepted["clamped"], clamped, "{accepted}");
    let job = server.get(accepted["status_url"].as_str().expect("status url")).json();
    assert_eq!(job["settings"]["clamped"], clamped, "{job}");
    assert_eq!(job["settings"]["depth"], json!(40), "{job}");
    let r = server.request("DELETE", accepted["status_url"].as_str().expect("url"), None, b"");
    assert!(r.status == 200 || r.status == 409, "{r:?}");
}

#[test]
fn the_limits_are_listed() {
    let server = Server::start(&["--max-annotation-bytes", "123456", "--max-body-bytes", "65432"]);
    let limits = server.get("/v1/games").json()["limits"].clone();
    assert_eq!(limits["max_annotation_bytes"], json!(123456), "{limits}");
    assert_eq!(limits["max_body_bytes"], json!(65432), "{limits}");
    assert_eq!(limits["max_annotation_positions"], json!(200_000), "{limits}");
    assert_eq!(limits["max_record_games"], json!(10_000), "{limits}");
    assert_eq!(limits["request_timeout_s"], json!(120.0), "{limits}");
}

#[test]
fn game_record_bodies_are_read_only_as_far_as_their_limits() {
    let server = Server::start(&["--max-record-games", "3", "--max-annotation-positions", "20", "--workers", "1"]);
    let limits = server.get("/v1/games").json()["limits"].clone();
    assert_eq!((limits["max_record_games"].clone(), limits["max_annotation_positions"].clone()), (json!(3), json!(20)));
    // Ten games of five positions; the fifth cannot be read. Reading stops at the fourth, naming the limit.
    let good = "[Event \"x\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n\n";
    let text: String = (0..10).map(|i| if i == 4 { "[Event \"x\"]\n\n1. e4 e5 2. Ke3 *\n\n" } else { good }).collect();
    for path in ["/v1/annotations", "/v1/records"] {
        let mut body = json!({ "game": "chess", "text": text });
        if path == "/v1/annotations" {
            body["depth"] = json!(1);
        }
        let r = server.post(path, &body);
        let p = r.problem(422);
        common::validate_named("Problem", &p);
        assert_eq!(p["field"], json!("text"), "{path}: {p}");
        let detail = p["detail"].as_str().unwrap_or("");
        assert!(detail.contains("more than 3 games: reading stopped at game 4 (line 13)"), "{path}: {p}");
    }
    // Positions: two games of thirteen are more than 20.
    let long = "[Event \"x\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 *\n\n".repeat(2);
    let r = server.post("/v1/records", &json!({ "game": "chess", "text": long }));
    let detail = r.problem(422)["detail"].as_str().unwrap_or("").to_string();
    assert!(detail.contains("more than 20 positions: reading stopped at game 2 (line 5)"), "{detail}");
    // One budget over the texts of `games`: the second text is read only as far as the first left room for.
    let games = json!([good.repeat(2), good.repeat(2)]);
    let r = server.post("/v1/annotations", &json!({ "game": "chess", "games": games, "depth": 1 }));
    let p = r.problem(422);
    assert_eq!(p["field"], json!("games[1]"), "{p}");
    assert!(
        p["detail"].as_str().unwrap_or("").contains("more than 3 games: reading stopped at game 4 (line 5)"),
        "{p}"
    );
    // Within the limits: read.
    let r = server.post("/v1/records", &json!({ "game": "chess", "text": good.repeat(3) }));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["games"].as_array().map(Vec::len), Some(3));
    let r = server.post("/v1/annotations", &json!({ "game": "chess", "text": good.repeat(3), "depth": 1 }));
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(r.json()["positions"], json!(15));
}

/// A raw WebSocket client (the common one treats a close as a failure).
fn ws_connect(server: &Server) -> tungstenite::WebSocket<TcpStream> {
    let stream = TcpStream::connect(server.addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    let (socket, _) = tungstenite::client(format!("ws://{}/v1/stream", server.addr), stream).expect("handshake");
    socket
}

/// The close frame the server sends next (messages before it are skipped).
fn close_frame(socket: &mut tungstenite::WebSocket<TcpStream>) -> (u16, String) {
    loop {
        match socket.read() {
            Ok(tungstenite::Message::Close(Some(frame))) => {
                return (frame.code.into(), frame.reason.as_str().to_string());
            }
            Ok(tungstenite::Message::Close(None)) => panic!("closed without a code"),
            Ok(_) => continue,
            Err(e) => panic!("no close frame: {e}"),
        }
    }
}

#[test]
fn a_websocket_frame_too_large_or_not_utf8_closes_the_socket_with_a_code_and_a_reason() {
    let server = Server::start(&["--max-body-bytes", "4096"]);
    let mut socket = ws_connect(&server);
    socket.send(tungstenite::Message::text("x".repeat(100_000))).expect("send");
    let (code, reason) = close_frame(&mut socket);
    assert_eq!(code, 1009, "{reason}");
    assert!(reason.contains("4096"), "{reason}");

    let mut socket = ws_connect(&server);
    let frame = tungstenite::protocol::frame::Frame::message(
        vec![b'{', 0xff, 0xfe, b'}'],
        tungstenite::protocol::frame::coding::OpCode::Data(tungstenite::protocol::frame::coding::Data::Text),
        true,
    );
    socket.send(tungstenite::Message::Frame(frame)).expect("send");
    let (code, reason) = close_frame(&mut socket);
    assert_eq!(code, 1007, "{reason}");
    assert!(!reason.is_empty());

    // Other sockets are not disturbed.
    let mut ws = server.ws();
    ws.send(&json!({ "type": "analyse", "id": "a", "game": "chess", "depth": 2 }));
    let last = ws.until("bestmove", "a").pop().expect("answer");
    assert!(last["bestmove"].is_string(), "{last}");
}
