//! The WebSocket stream of a real `kibitz serve` process: progress then the answer, stop, infinite analyses,
//! several analyses on one socket, errors, a dropped socket freeing its worker, and a full queue answering
//! plain requests 503 at once.

mod common;

use std::time::{Duration, Instant};

use common::{Server, games};
use serde_json::{Value, json};

/// The legal moves (main notation) of a position after `moves`.
fn legal(server: &Server, game: &str, moves: &[&str]) -> Vec<Value> {
    let r = server.post_ok("/v1/moves", &json!({ "game": game, "moves": moves }));
    r["moves"].as_array().expect("moves").iter().map(|m| m["move"].clone()).collect()
}

#[test]
fn progress_streams_then_the_answer_and_a_repeat_comes_from_the_cache() {
    let server = Server::start(&[]);
    for (_, fixture) in games(&server) {
        let mut ws = server.ws();
        let depth = fixture.quick_depth + 2;
        ws.send(&json!({ "type": "analyse", "id": "a1", "game": fixture.game, "depth": depth }));
        let messages = ws.until("bestmove", "a1");
        let (infos, last) = messages.split_at(messages.len() - 1);
        assert!(!infos.is_empty(), "no progress before the answer");
        let mut deepest = 0;
        for info in infos {
            assert_eq!(info["type"], json!("info"), "{info}");
            assert_eq!(info["id"], json!("a1"));
            let d = info["depth"].as_u64().expect("depth");
            assert!(d >= deepest, "depth went back from {deepest} to {d}");
            deepest = d;
            for member in ["seldepth", "multipv", "score", "nodes", "nps", "time_ms", "pv"] {
                assert!(info.get(member).is_some(), "info without {member}: {info}");
            }
            common::score_value(&info["score"]);
        }
        let best = &last[0];
        assert!(best["depth"].as_u64().expect("depth") >= u64::from(depth));
        assert_eq!(best["cached"], json!(false));
        assert!(legal(&server, fixture.game, &[]).contains(&best["bestmove"]), "{best}");

        // The same question again: the answer at once, from the cache, without progress.
        ws.send(&json!({ "type": "analyse", "id": "a2", "game": fixture.game, "depth": depth }));
        let again = ws.recv();
        assert_eq!((again["type"].clone(), again["id"].clone()), (json!("bestmove"), json!("a2")));
        assert_eq!(again["cached"], json!(true));
        assert_eq!(again["lines"], best["lines"]);
        // HTTP sees what the socket stored.
        let r = server.post_ok("/v1/analysis", &json!({ "game": fixture.game, "depth": depth }));
        assert_eq!(r["cached"], json!(true));
    }
}

#[test]
fn an_infinite_analysis_runs_until_stopped_and_stop_answers_promptly() {
    let server = Server::start(&[]);
    for (info, fixture) in games(&server) {
        let mut ws = server.ws();
        // The game's last move notation: not always its main one.
        let move_format = info["move_formats"].as_array().and_then(|f| f.last()).cloned().expect("move formats");
        ws.send(&json!({ "type": "analyse", "id": "inf", "game": fixture.game, "infinite": true, "move_format": move_format }));
        let first = ws.recv();
        assert_eq!((first["type"].clone(), first["id"].clone()), (json!("info"), json!("inf")), "{first}");
        // It keeps going: only progress for a while, no answer.
        let until = Instant::now() + Duration::from_millis(1500);
        while Instant::now() < until {
            if let Some(m) = ws.recv_within(Duration::from_millis(100)) {
                assert_eq!(m["type"], json!("info"), "an infinite analysis answered by itself: {m}");
            }
        }
        assert_eq!(server.metric("kibitz_pool_busy_workers"), 1.0);
        let stopped = Instant::now();
        ws.send(&json!({ "type": "stop", "id": "inf" }));
        let messages = ws.until("bestmove", "inf");
        assert!(stopped.elapsed() < Duration::from_secs(5), "stop took {:?}", stopped.elapsed());
        let best = messages.last().expect("answer");
        let r = server.post_ok("/v1/moves", &json!({ "game": fixture.game, "move_format": move_format }));
        let legal: Vec<&Value> = r["moves"].as_array().expect("moves").iter().map(|m| &m["move"]).collect();
        assert!(legal.contains(&&best["bestmove"]), "{best} not in {legal:?}");
        assert!(best["depth"].as_u64().expect("depth") >= 1);
        server.wait_metric("kibitz_pool_busy_workers", |n| n == 0.0);
        // Stopping it again: nothing runs under that id any more.
        ws.send(&json!({ "type": "stop", "id": "inf" }));
        let e = ws.recv();
        assert_eq!(
            (e["type"].clone(), e["id"].clone(), e["status"].clone()),
            (json!("error"), json!("inf"), json!(404))
        );
    }
}

#[test]
fn several_analyses_run_on_one_socket_under_their_ids() {
    let server = Server::start(&[]);
    for (_, fixture) in games(&server) {
        let game = fixture.game;
        let mut ws = server.ws();
        // One infinite analysis runs all along; a second one under its id is refused.
        ws.send(&json!({ "type": "analyse", "id": "all-along", "game": game, "infinite": true }));
        assert_eq!(ws.recv()["id"], json!("all-along"));
        ws.send(&json!({ "type": "analyse", "id": "all-along", "game": game, "depth": 3 }));
        loop {
            let m = ws.recv();
            if m["type"] == json!("error") {
                assert_eq!((m["id"].clone(), m["status"].clone()), (json!("all-along"), json!(422)), "{m}");
                break;
            }
            assert_eq!((m["type"].clone(), m["id"].clone()), (json!("info"), json!("all-along")), "{m}");
        }
        let mut expected = std::collections::HashMap::new();
        for (i, first) in legal(&server, game, &[]).iter().take(3).enumerate() {
            let id = format!("line-{i}");
            let moves = [first.as_str().expect("move")];
            let position = server.post_ok("/v1/moves", &json!({ "game": game, "moves": moves }))["position"].clone();
            expected.insert(id.clone(), position);
            ws.send(&json!({ "type": "analyse", "id": id, "game": game, "moves": moves,
                "depth": fixture.quick_depth + 2, "cache": "refresh" }));
        }
        let mut answered = std::collections::HashSet::new();
        while answered.len() < expected.len() {
            let m = ws.recv();
            let id = m["id"].as_str().expect("id").to_string();
            match m["type"].as_str() {
                Some("info") => assert!(id == "all-along" || expected.contains_key(&id), "{m}"),
                Some("bestmove") => {
                    assert_eq!(m["position"], expected[&id], "{m}");
                    assert!(answered.insert(id), "two answers: {m}");
                }
                _ => panic!("{m}"),
            }
        }
        ws.send(&json!({ "type": "stop", "id": "all-along" }));
        let rest = ws.until("bestmove", "all-along");
        assert!(rest.iter().all(|m| m["id"] == json!("all-along")), "{rest:?}");
        server.wait_metric("kibitz_pool_busy_workers", |n| n == 0.0);
    }
}

#[test]
fn bad_messages_are_answered_with_problems_and_the_socket_goes_on() {
    let server = Server::start(&[]);
    let (_, fixture) = games(&server).remove(0);
    let game = fixture.game;
    let (bad_position, bad_token) = fixture.bad_position;
    let (_, position, moves) = fixture.positions[0];
    let mut ws = server.ws();
    let cases = [
        (json!("not an object"), None, 422, None, None),
        (json!({ "type": "analyse", "game": game }), None, 422, Some("id"), None),
        (json!({ "type": "dance", "id": "d" }), Some("d"), 422, Some("type"), Some("dance")),
        (json!({ "type": "analyse", "id": 5, "game": game }), None, 422, Some("id"), None),
        (json!({ "game": game, "id": "n" }), None, 422, Some("type"), None),
        (
            json!({ "type": "analyse", "id": "i", "game": game, "infinite": "yes" }),
            Some("i"),
            422,
            Some("infinite"),
            None,
        ),
        (
            json!({ "type": "analyse", "id": "g", "game": "tiddlywinks" }),
            Some("g"),
            422,
            Some("game"),
            Some("tiddlywinks"),
        ),
        (
            json!({ "type": "analyse", "id": "p", "game": game, "position": bad_position }),
            Some("p"),
            422,
            Some("position"),
            Some(bad_token),
        ),
        (
            json!({ "type": "analyse", "id": "m", "game": game, "position": position, "moves": [moves[0], moves[0]] }),
            Some("m"),
            422,
            Some("moves[1]"),
            Some(moves[0]),
        ),
        (json!({ "type": "analyse", "id": "z", "game": game, "depth": 0 }), Some("z"), 422, Some("depth"), None),
        (
            json!({ "type": "analyse", "id": "c", "game": game, "depth": 3, "nodes": 9 }),
            Some("c"),
            422,
            Some("depth"),
            None,
        ),
        (json!({ "type": "analyse", "id": "u", "game": game, "colour": "red" }), Some("u"), 422, Some("colour"), None),
        (json!({ "type": "analyse", "id": "t", "game": game, "depth": "deep" }), Some("t"), 422, Some("depth"), None),
        (json!({ "type": "analyse", "id": "o", "game": game, "cache": "only" }), Some("o"), 404, None, None),
        (json!({ "type": "stop", "id": "nothing" }), Some("nothing"), 404, None, None),
    ];
    for (message, id, status, field, token) in cases {
        ws.send(&message);
        let e = ws.recv();
        assert_eq!(e["type"], json!("error"), "{message}: {e}");
        assert_eq!(e["status"], json!(status), "{message}: {e}");
        assert_eq!(e.get("id").and_then(Value::as_str), id, "{message}: {e}");
        if let Some(field) = field {
            assert_eq!(e["field"], json!(field), "{message}: {e}");
        }
        if let Some(token) = token {
            assert_eq!(e["token"], json!(token), "{message}: {e}");
        }
    }
    // Text that is not JSON at all.
    ws.send_text("{analyse");
    let e = ws.recv();
    assert_eq!((e["type"].clone(), e["status"].clone()), (json!("error"), json!(400)), "{e}");
    // After all that, the socket still analyses.
    ws.send(&json!({ "type": "analyse", "id": "ok", "game": game, "depth": fixture.quick_depth }));
    let answer = ws.until("bestmove", "ok");
    assert!(answer.last().expect("answer")["bestmove"].is_string());
}

#[test]
fn a_dropped_socket_frees_its_worker() {
    let server = Server::start(&["--workers", "1"]);
    let (_, fixture) = games(&server).remove(0);
    let mut ws = server.ws();
    ws.send(&json!({ "type": "analyse", "id": "gone", "game": fixture.game, "infinite": true }));
    assert_eq!(ws.recv()["type"], json!("info"));
    assert_eq!(server.metric("kibitz_pool_busy_workers"), 1.0);
    assert_eq!(server.metric("kibitz_websocket_connections"), 1.0);
    drop(ws); // no close frame: the TCP connection just goes away
    server.wait_metric("kibitz_pool_busy_workers", |n| n == 0.0);
    server.wait_metric("kibitz_websocket_connections", |n| n == 0.0);
    // The worker serves the next request.
    let a = server.post_ok("/v1/analysis", &json!({ "game": fixture.game, "depth": fixture.quick_depth }));
    assert!(a["bestmove"].is_string());
}

#[test]
fn an_infinite_analysis_on_the_only_worker_lets_other_searches_through_and_goes_on() {
    // With every worker held by endless analyses, a plain analysis used to wait until its request timed out.
    let server = Server::start(&["--workers", "1"]);
    let (_, fixture) = games(&server).remove(0);
    let mut ws = server.ws();
    ws.send(&json!({ "type": "analyse", "id": "all-along", "game": fixture.game, "infinite": true }));
    let first = ws.recv();
    assert_eq!(first["type"], json!("info"), "{first}");
    let mut shown = first["depth"].as_u64().expect("depth");
    // Another client's search gets the worker (after the endless one's slice of a second), and is answered.
    let moves = legal(&server, fixture.game, &[]);
    let after = moves[0].as_str().expect("a move");
    let a = server
        .post_ok("/v1/analysis", &json!({ "game": fixture.game, "moves": [after], "depth": fixture.quick_depth }));
    assert!(a["bestmove"].is_string(), "{a}");
    // The infinite analysis went on: progress only, never shallower than before, until it is stopped.
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        if let Some(m) = ws.recv_within(Duration::from_millis(100)) {
            assert_eq!(m["type"], json!("info"), "the analysis answered by itself: {m}");
            let depth = m["depth"].as_u64().expect("depth");
            assert!(depth >= shown, "the analysis went back from depth {shown} to {depth}: {m}");
            shown = depth;
        }
    }
    ws.send(&json!({ "type": "stop", "id": "all-along" }));
    let best = ws.until("bestmove", "all-along").pop().expect("answer");
    assert!(moves.contains(&best["bestmove"]), "{best} not in {moves:?}");
    assert!(best["depth"].as_u64().expect("depth") + 1 >= shown, "{best} after depth {shown}");
}

#[test]
fn a_client_closing_the_socket_gets_the_close_frame_back() {
    // RFC 6455 5.5.1: the server answers a close frame with one before it ends the connection (it used to
    // drop the connection, which a browser reports as an abnormal closure, 1006).
    let server = Server::start(&[]);
    let mut ws = server.ws();
    ws.send(&json!({ "type": "analyse", "id": "a", "game": "checkers", "depth": 2 }));
    ws.until("bestmove", "a");
    assert_eq!(ws.close_cleanly(), Some(1000));
    server.wait_metric("kibitz_websocket_connections", |n| n == 0.0);
}

#[test]
fn a_full_queue_answers_503_with_retry_after_at_once() {
    let server = Server::start(&["--workers", "1", "--queue", "0"]);
    let (_, fixture) = games(&server).remove(0);
    let mut ws = server.ws();
    ws.send(&json!({ "type": "analyse", "id": "busy", "game": fixture.game, "infinite": true }));
    assert_eq!(ws.recv()["type"], json!("info"));
    let asked = Instant::now();
    let r = server.post("/v1/analysis", &json!({ "game": fixture.game, "depth": fixture.quick_depth }));
    assert!(asked.elapsed() < Duration::from_secs(5), "503 took {:?}", asked.elapsed());
    let p = r.problem(503);
    assert!(r.header("retry-after").and_then(|s| s.parse::<u32>().ok()).is_some(), "{:?}", r.headers);
    assert_eq!(p["type"], json!("/problems/busy"));
    // A second socket analysis is refused the same way, as a message.
    let mut other = server.ws();
    other.send(&json!({ "type": "analyse", "id": "x", "game": fixture.game, "depth": fixture.quick_depth }));
    let e = other.recv();
    assert_eq!((e["type"].clone(), e["status"].clone()), (json!("error"), json!(503)), "{e}");
    // Cached answers and everything else still work while the worker is busy.
    assert_eq!(server.get("/healthz").status, 200);
    server.post_ok("/v1/moves", &json!({ "game": fixture.game }));
    // Once the worker is free, a search is served (the stopped analysis is cached by now: refresh).
    ws.send(&json!({ "type": "stop", "id": "busy" }));
    ws.until("bestmove", "busy");
    server.wait_metric("kibitz_pool_busy_workers", |n| n == 0.0);
    let a = server
        .post_ok("/v1/analysis", &json!({ "game": fixture.game, "depth": fixture.quick_depth, "cache": "refresh" }));
    assert_eq!(a["cached"], json!(false));
}

#[test]
fn two_sockets_asking_the_same_question_share_one_search() {
    let server = Server::start(&[]);
    let (_, fixture) = games(&server).remove(0);
    // A search far too long to end by itself during the test: it ends when both sockets stop it.
    let ask = |id: &str| json!({ "type": "analyse", "id": id, "game": fixture.game, "nodes": 4_000_000_000u64 });
    let started = server.metric("kibitz_searches_started_total");
    let shared = server.metric("kibitz_searches_shared_total");
    let mut first = server.ws();
    first.send(&ask("one"));
    // The search runs once the first progress report arrives; the second socket then joins it.
    let info = first.recv();
    assert_eq!((info["type"].clone(), info["id"].clone()), (json!("info"), json!("one")), "{info}");
    let mut second = server.ws();
    second.send(&ask("two"));
    let info = second.recv();
    assert_eq!((info["type"].clone(), info["id"].clone()), (json!("info"), json!("two")), "{info}");
    assert_eq!(server.metric("kibitz_searches_started_total") - started, 1.0, "one search for both sockets");
    assert_eq!(server.metric("kibitz_searches_shared_total") - shared, 1.0);
    // The first socket stops: it gets the deepest lines so far, and the search goes on for the second.
    first.send(&json!({ "type": "stop", "id": "one" }));
    let one = first.until("bestmove", "one").pop().expect("answer");
    assert!(one["bestmove"].is_string(), "{one}");
    assert_eq!(server.metric("kibitz_pool_busy_workers"), 1.0, "the search goes on for the second socket");
    second.send(&json!({ "type": "stop", "id": "two" }));
    let two = second.until("bestmove", "two").pop().expect("answer");
    assert!(two["bestmove"].is_string(), "{two}");
    assert!(two["depth"].as_u64() >= one["depth"].as_u64(), "{one} then {two}");
    assert_eq!(server.metric("kibitz_searches_started_total") - started, 1.0);
    server.wait_metric("kibitz_pool_busy_workers", |n| n == 0.0);
}

/// Found by an audit: an analysis with limits on a socket had no time bound (`depth` 64 held a worker with no
/// end, while HTTP requests behind it got 408), and a stop asked of an analysis still waiting for a worker kept
/// its place on the socket and in the queue until a worker came free.
#[test]
fn socket_analyses_stop_at_the_request_timeout_and_a_stopped_waiting_one_is_dropped() {
    let server = Server::start(&["--workers", "1", "--request-timeout-s", "2"]);
    let mut ws = server.ws();
    ws.send(&json!({ "type": "analyse", "id": "deep", "game": "chess", "depth": 64 }));
    let last = ws.until("bestmove", "deep").pop().expect("a bestmove");
    assert_eq!(last["stopped"], json!(true), "{last}");
    assert!(last["bestmove"].is_string(), "{last}");
    server.stop();

    let server = Server::start(&["--workers", "1"]);
    let mut holder = server.ws();
    holder.send(&json!({ "type": "analyse", "id": "deep", "game": "chess", "depth": 64 }));
    assert_eq!(holder.recv()["type"], json!("info"));
    let mut waiting = server.ws();
    waiting.send(&json!({ "type": "analyse", "id": "w", "game": "checkers", "depth": 20 }));
    waiting.send(&json!({ "type": "stop", "id": "w" }));
    let last = waiting.until("error", "w").pop().expect("an error");
    assert_eq!(last["problem"], json!("/problems/stopped-before-start"), "{last}");
    // Its place is free: the id can be used again at once.
    waiting.send(&json!({ "type": "analyse", "id": "w", "game": "checkers", "depth": 20 }));
    waiting.send(&json!({ "type": "stop", "id": "w" }));
    let last = waiting.until("error", "w").pop().expect("an error");
    assert_eq!(last["problem"], json!("/problems/stopped-before-start"), "{last}");
    holder.send(&json!({ "type": "stop", "id": "deep" }));
    let _ = holder.until("bestmove", "deep");
    server.stop();
}
