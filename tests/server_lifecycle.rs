//! A real `kibitz serve` process over its lifetime: the cache on its SQLite file outlives the process (after a
//! graceful stop and after a kill), and SIGTERM lets requests in flight finish, closes sockets, exits 0 and
//! leaves the file intact.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{DEADLINE, Server, TempDir, games, sqlite_execute};
use serde_json::{Value, json};

/// `PRAGMA integrity_check` of a SQLite file, through sqlx.
fn integrity(db: &Path) -> String {
    use sqlx::{Connection, Row};
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(db);
        let mut conn = sqlx::SqliteConnection::connect_with(&options).await.expect("open the file");
        let row = sqlx::query("PRAGMA integrity_check").fetch_one(&mut conn).await.expect("integrity_check");
        let verdict: String = row.get(0);
        conn.close().await.expect("close");
        verdict
    })
}

fn same_answer(a: &Value, b: &Value) {
    for member in ["position", "bestmove", "lines", "depth", "nodes"] {
        assert_eq!(a[member], b[member], "{member}");
    }
}

/// `kibitz args`: whether it succeeded, and its stderr. One still running after a minute (a second server that
/// was not refused) is killed and counts as a success.
fn kibitz(args: &[&str]) -> (bool, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(args)
        .env("KIBITZ_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run kibitz");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr);
    (status.is_none_or(|s| s.success()), stderr)
}

#[test]
fn a_second_process_to_run_the_jobs_of_a_sqlite_file_is_refused_and_the_cache_stays_shared() {
    // Two servers on one SQLite file both ran its annotation jobs (each resumes the jobs it finds running).
    let dir = TempDir::new("one-runner");
    let db = dir.db();
    let db = db.to_str().expect("path");
    let server = Server::start_on(&dir, &[]);
    let games = dir.path().join("games.pgn");
    std::fs::write(&games, "1. e4 e5 *\n").expect("write");
    let games = games.to_str().expect("path");
    let pid = server.pid().to_string();
    // The same file under another name is the same file.
    let link = dir.path().join("link.db");
    std::os::unix::fs::symlink(dir.db(), &link).expect("symlink");
    let link = link.to_str().expect("path");
    // And under a URL that percent-encodes a letter of its name.
    let url = format!("sqlite://{}", db.replace("cache.db", "cach%65.db"));
    for args in [
        vec!["serve", "--http", "127.0.0.1:0", "--no-guide", "--hash-mb", "4", "--db", db],
        vec!["serve", "--http", "127.0.0.1:0", "--no-guide", "--hash-mb", "4", "--db", link],
        vec!["serve", "--http", "127.0.0.1:0", "--no-guide", "--hash-mb", "4", "--db", &url],
        vec!["annotate", games, "--depth", "1", "--quiet", "--db", db],
    ] {
        let (ok, stderr) = kibitz(&args);
        assert!(!ok, "{args:?} ran beside the server");
        assert!(stderr.contains("already runs the annotation jobs") && stderr.contains(&pid), "{args:?}: {stderr}");
    }
    // The cache and the keys are no job: other commands still use the file.
    let (ok, stderr) = kibitz(&["cache", "list", "--db", db]);
    assert!(ok, "{stderr}");
    assert_eq!(server.get("/readyz").status, 200, "the server goes on");
    server.stop();
    let (ok, stderr) = kibitz(&["annotate", games, "--depth", "1", "--quiet", "--db", db]);
    assert!(ok, "once the server is gone: {stderr}");
}

#[test]
fn a_stored_result_whose_moves_are_not_legal_is_searched_again_and_replaced() {
    // A row written by something else (or by hand) was served as it was: `"bestmove": "zzzz"`.
    let dir = TempDir::new("tampered");
    let server = Server::start_on(&dir, &[]);
    let (_, fixture) = games(&server).remove(0);
    let ask = json!({ "game": fixture.game, "depth": fixture.quick_depth });
    let legal: Vec<Value> = server.post_ok("/v1/moves", &json!({ "game": fixture.game }))["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| m["move"].clone())
        .collect();
    server.post_ok("/v1/analysis", &ask);
    server.wait_metric("kibitz_store_writes_total", |n| n == 1.0);
    server.stop();
    for tamper in [
        "UPDATE analysis_cache SET bestmove = 'zzzz', depth = 99",
        "UPDATE analysis_cache SET depth = 99, lines = json_set(lines, '$[0].moves[1]', 'zzzz') \
         WHERE json_extract(lines, '$[0].moves[1]') IS NOT NULL",
    ] {
        assert_eq!(sqlite_execute(&dir.db(), tamper), 1, "{tamper}");
        let server = Server::start_on(&dir, &[]);
        let answer = server.post_ok("/v1/analysis", &ask);
        assert_eq!(answer["cached"], json!(false), "{tamper}: served {answer}");
        assert!(legal.contains(&answer["bestmove"]), "{tamper}: {answer}");
        // The bad row was removed and the new result stored in its place.
        server.wait_metric("kibitz_store_writes_total", |n| n == 1.0);
        server.stop();
        let server = Server::start_on(&dir, &[]);
        let again = server.post_ok("/v1/analysis", &ask);
        assert_eq!(again["cached"], json!(true), "{tamper}: {again}");
        same_answer(&answer, &again);
        server.stop();
    }
}

#[test]
fn cached_results_outlive_the_process() {
    let dir = TempDir::new("restart");
    let server = Server::start_on(&dir, &[]);
    let (_, fixture) = games(&server).remove(0);
    let one = json!({ "game": fixture.game, "depth": fixture.quick_depth });
    let two = json!({ "game": fixture.game, "depth": fixture.quick_depth, "multipv": 2 });
    let first = server.post_ok("/v1/analysis", &one);
    let first_two = server.post_ok("/v1/analysis", &two);
    assert_eq!((first["cached"].clone(), first_two["cached"].clone()), (json!(false), json!(false)));
    server.wait_metric("kibitz_store_writes_total", |n| n == 2.0);
    server.stop();

    // A new process on the same file answers from it.
    let server = Server::start_on(&dir, &[]);
    let again = server.post_ok("/v1/analysis", &one);
    assert_eq!(again["cached"], json!(true));
    same_answer(&first, &again);
    let again_two = server.post_ok("/v1/analysis", &two);
    assert_eq!(again_two["cached"], json!(true));
    same_answer(&first_two, &again_two);
    let r = server.get(&format!("/v1/analysis?game={}&multipv=2", fixture.game));
    assert_eq!(r.status, 200, "{}", r.text());

    // Written results survive a kill too (SIGKILL on drop, no shutdown at all).
    let deeper = json!({ "game": fixture.game, "depth": fixture.quick_depth + 2 });
    let written = server.post_ok("/v1/analysis", &deeper);
    server.wait_metric("kibitz_store_writes_total", |n| n == 1.0);
    drop(server);
    let server = Server::start_on(&dir, &[]);
    let after_kill = server.post_ok("/v1/analysis", &deeper);
    assert_eq!(after_kill["cached"], json!(true));
    same_answer(&written, &after_kill);
    server.stop();
    assert_eq!(integrity(&dir.db()), "ok");
}

#[test]
fn sigterm_answers_requests_in_flight_closes_sockets_and_exits_cleanly() {
    let dir = TempDir::new("shutdown");
    let mut server = Server::start_on(&dir, &[]);
    let (_, fixture) = games(&server).remove(0);
    let game = fixture.game;
    let quick = json!({ "game": game, "depth": fixture.quick_depth });
    let cached = server.post_ok("/v1/analysis", &quick);
    server.wait_metric("kibitz_store_writes_total", |n| n == 1.0);

    // A long analysis over HTTP and an infinite one over a socket, both running when SIGTERM arrives.
    let addr = server.addr;
    let (_, position, _) = fixture.positions[1];
    let long = json!({ "game": game, "position": position, "movetime_ms": 40_000 });
    let in_flight = {
        let body = long.to_string();
        std::thread::spawn(move || {
            common::http(addr, "POST", "/v1/analysis", Some("application/json"), body.as_bytes())
        })
    };
    let mut ws = server.ws();
    let elsewhere = [fixture.positions[0].2[0]];
    ws.send(&json!({ "type": "analyse", "id": "forever", "game": game, "moves": elsewhere, "infinite": true }));
    assert_eq!(ws.recv()["type"], json!("info"));
    server.wait_metric("kibitz_pool_busy_workers", |n| n == 2.0);

    let signalled = Instant::now();
    server.terminate();
    let answer = in_flight.join().expect("client");
    assert!(signalled.elapsed() < Duration::from_secs(20), "the search was not stopped: {:?}", signalled.elapsed());
    assert_eq!(answer.status, 200, "the request in flight: {}", answer.text());
    common::check_against_document("POST", "/v1/analysis", &answer);
    let answer = answer.json();
    assert!(answer["bestmove"].is_string(), "{answer}");
    // Cut short by the signal, and saying so (found by an audit: it answered as if complete).
    assert_eq!(answer["stopped"], json!(true), "{answer}");
    // The socket's analysis answers before the socket closes (found by an audit: it closed at once).
    let last = ws.until("bestmove", "forever").pop().expect("a bestmove");
    assert_eq!(last["stopped"], json!(true), "{last}");
    assert!(ws.closed_within(DEADLINE), "the socket was not closed");
    let status = server.wait_exit(DEADLINE);
    assert!(status.is_some_and(|s| s.success()), "exit {status:?}; stderr:\n{}", server.stderr());
    drop(server);
    assert_eq!(integrity(&dir.db()), "ok");

    // A new server on the file finds what the old one cached.
    let server = Server::start_on(&dir, &[]);
    let again = server.post_ok("/v1/analysis", &quick);
    assert_eq!(again["cached"], json!(true));
    same_answer(&cached, &again);
    // The answer the stopped search gave was stored too, before the process ended.
    let normalised = answer["position"].as_str().expect("position");
    let stored = server.post("/v1/analysis", &json!({ "game": game, "position": normalised, "cache": "only" }));
    assert_eq!(stored.status, 200, "the stopped search's answer was lost: {}", stored.text());
    same_answer(&answer, &stored.json());
    // And so was the socket's.
    let stored = server.post("/v1/analysis", &json!({ "game": game, "moves": elsewhere, "cache": "only" }));
    assert_eq!(stored.status, 200, "the socket analysis's answer was lost: {}", stored.text());
    server.stop();
}
