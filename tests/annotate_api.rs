//! Batch annotation through a real `kibitz serve` and through the `kibitz annotate` CLI: every game record
//! format of every game, malformed games in a collection, the exports, cancellation, WebSocket progress, and a
//! server killed mid-job (SIGKILL) that finishes the job after a restart with every position written once.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Server, TempDir, sqlite_execute};
use kibitz::game::{Game, RecordBudget};
use kibitz::games::chess::Chess;
use serde_json::{Value, json};

/// Annotation jobs may take a while on a loaded machine; no test asserts a time, but every wait ends.
const JOB_DEADLINE: Duration = Duration::from_secs(240);

/// (game, fixture file, record format or null, games it holds, malformed games among them)
const FIXTURES: &[(&str, &str, Option<&str>, usize, usize)] = &[
    ("chess", "chess_collection.pgn", None, 4, 1),
    ("draughts", "draughts.pdn", Some("pdn"), 1, 0),
    ("draughts", "draughts_guide.txt", Some("guide"), 2, 0),
    ("checkers", "checkers.pdn", None, 1, 0),
    ("hive", "hive.txt", None, 2, 0),
    ("xiangqi", "xiangqi.pgn", Some("pgn"), 1, 0),
    ("xiangqi", "xiangqi_moves.txt", Some("moves"), 2, 0),
];

fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/records").join(name)
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(fixture_path(name)).expect("fixture")
}

fn create(server: &Server, body: &Value) -> Value {
    let r = server.post("/v1/annotations", body);
    assert_eq!(r.status, 202, "{}", r.text());
    let accepted = r.json();
    let id = accepted["id"].as_str().expect("id");
    assert_eq!(r.header("location"), Some(format!("/v1/annotations/{id}").as_str()));
    accepted
}

fn wait_status(server: &Server, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + JOB_DEADLINE;
    loop {
        let r = server.get(&format!("/v1/annotations/{id}"));
        assert_eq!(r.status, 200, "{}", r.text());
        let view = r.json();
        if done(&view) {
            return view;
        }
        assert!(Instant::now() < deadline, "job {id} did not get there: {view}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_done(server: &Server, id: &str) -> Value {
    let view = wait_status(server, id, |v| v["status"] != json!("queued") && v["status"] != json!("running"));
    assert_eq!(view["status"], json!("done"), "{view}");
    view
}

const CLASSES: [&str; 7] = ["best", "good", "inaccuracy", "mistake", "blunder", "mate_found", "mate_missed"];

/// Every readable game is judged move by move, both sides are summed up, positions are counted right.
fn check_view(view: &Value, games: usize, malformed: usize) {
    let list = view["games"].as_array().expect("games");
    assert_eq!(list.len(), games, "{view}");
    assert_eq!(view["progress"]["done"], view["progress"]["total"]);
    let mut failed = 0;
    for game in list {
        if game["status"] == json!("failed") {
            failed += 1;
            let e = &game["error"];
            assert!(
                e["line"].as_u64().is_some_and(|l| l > 0) && !e["message"].as_str().unwrap_or("").is_empty(),
                "{e}"
            );
            continue;
        }
        assert_eq!(game["status"], json!("done"), "{game}");
        let moves = game["moves"].as_array().expect("moves");
        let positions = game["progress"]["total"].as_u64().expect("total");
        assert_eq!(moves.len() as u64 + 1, positions, "one judged move per move: {game}");
        for (k, m) in moves.iter().enumerate() {
            assert_eq!(m["ply"], json!(k + 1));
            assert!(CLASSES.contains(&m["class"].as_str().unwrap_or("")), "{m}");
            assert!(m["loss"].as_i64().is_some_and(|l| l >= 0), "{m}");
            assert!(m["eval_before"].is_object() && m["eval_after"].is_object(), "{m}");
        }
        let players = game["players"].as_object().expect("players");
        let counted: u64 = players.values().map(|p| p["moves"].as_u64().unwrap_or(0)).sum();
        assert_eq!(counted, moves.len() as u64);
        if moves.len() >= 2 {
            assert_eq!(players.len(), 2, "{game}");
        }
    }
    assert_eq!(failed, malformed, "{view}");
}

#[test]
fn every_record_format_of_every_game_is_annotated() {
    let server = Server::start(&[]);
    for &(game, file, format, games, malformed) in FIXTURES {
        let mut body = json!({ "game": game, "text": fixture(file), "nodes": 3000 });
        if let Some(format) = format {
            body["format"] = json!(format);
        }
        let accepted = create(&server, &body);
        assert_eq!(accepted["games"], json!(games), "{file}: {accepted}");
        assert_eq!(accepted["errors"].as_array().map(Vec::len), Some(malformed), "{file}: {accepted}");
        let id = accepted["id"].as_str().expect("id").to_string();
        let view = wait_done(&server, &id);
        check_view(&view, games, malformed);

        let export = server.get(&format!("/v1/annotations/{id}/export"));
        assert_eq!(export.status, 200, "{}", export.text());
        let text = export.text();
        let native = server.get("/v1/games").json()["games"]
            .as_array()
            .expect("games")
            .iter()
            .find(|g| g["name"] == json!(game))
            .map(|g| g["export_format"].clone())
            .expect("listed");
        if native.is_null() {
            assert!(text.contains("Game 1") && text.contains("accuracy"), "{file}: {text}");
        } else {
            assert!(text.contains("[%eval "), "{file}: {text}");
        }
        let as_json = server.get(&format!("/v1/annotations/{id}/export?format=json"));
        assert_eq!(as_json.status, 200);
        assert_eq!(as_json.json()["id"], json!(id));
        let text_export = server.get(&format!("/v1/annotations/{id}/export?format=text"));
        assert!(text_export.text().contains("Game 1"), "{}", text_export.text());
    }
    // The games were searched once: the same submission again is answered from the cache (a search that
    // ended short of its limit, at a forced end, is not cached and may be searched again).
    let body = json!({ "game": "checkers", "text": fixture("checkers.pdn"), "depth": 4 });
    let first = create(&server, &body);
    wait_done(&server, first["id"].as_str().expect("id"));
    let searched = server.metric("kibitz_searches_completed_total");
    let again = create(&server, &body);
    wait_done(&server, again["id"].as_str().expect("id"));
    let searched_again = server.metric("kibitz_searches_completed_total") - searched;
    let positions = again["positions"].as_f64().expect("positions");
    assert!(searched_again * 10.0 < positions, "{searched_again} of {positions} positions searched again");
    server.stop();
}

#[test]
fn a_malformed_game_is_named_and_the_others_go_on() {
    let server = Server::start(&[]);
    let accepted = create(&server, &json!({ "game": "chess", "text": fixture("chess_collection.pgn"), "depth": 2 }));
    let errors = accepted["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 1, "{accepted}");
    let e = &errors[0];
    assert!(e["index"].as_u64().is_some() && e["line"].as_u64().is_some_and(|l| l > 1), "{e}");
    assert!(!e["token"].as_str().unwrap_or("").is_empty(), "{e}");
    // Separate texts number their games across the list.
    let texts =
        json!({ "game": "chess", "games": ["1. e4 e5 2. Nf3 *", "1. e4 Ke7?? 2. Qh5 *", "1. d4 d5 *"], "depth": 2 });
    let accepted = create(&server, &texts);
    assert_eq!(accepted["games"], json!(3));
    assert_eq!(accepted["errors"][0]["index"], json!(1), "{accepted}");
    assert_eq!(accepted["errors"][0]["token"], json!("Ke7"), "{accepted}");
    wait_done(&server, accepted["id"].as_str().expect("id"));
    // Nothing readable at all is refused, naming the token.
    let p = server.post("/v1/annotations", &json!({ "game": "chess", "text": "1. e4 Zz9 *" })).problem(422);
    assert_eq!(p["token"], json!("Zz9"), "{p}");
    server.stop();
}

#[test]
fn bad_requests_and_cancellation() {
    let server = Server::start(&["--workers", "1"]);
    let pgn = fixture("chess_collection.pgn");
    for (body, field) in [
        (json!({ "game": "chess", "text": pgn, "games": [pgn] }), "games"),
        (json!({ "game": "chess" }), "text"),
        (json!({ "game": "chess", "text": pgn, "format": "pdn" }), "format"),
        (json!({ "game": "chess", "text": pgn, "depth": 0 }), "depth"),
        (json!({ "game": "chess", "text": pgn, "depth": 3, "nodes": 5 }), "depth"),
        (json!({ "game": "chess", "text": pgn, "threshold": -1 }), "threshold"),
        (json!({ "game": "chess", "text": pgn, "priority": "urgent" }), "priority"),
        (json!({ "game": "chess", "text": pgn, "colour": "red" }), "colour"),
        (json!({ "game": "shogi", "text": pgn }), "game"),
    ] {
        let p = server.post("/v1/annotations", &body).problem(422);
        assert_eq!(p["field"], json!(field), "{body}: {p}");
    }
    server.get("/v1/annotations/0123456789abcdef").problem(404);
    server.get("/v1/annotations/..%2f..").problem(404);
    server.request("DELETE", "/v1/annotations/0123456789abcdef", None, b"").problem(404);

    // A long job (one worker, deep searches) is cancelled while it runs; interactive requests still answer.
    let long = create(&server, &json!({ "game": "chess", "text": pgn, "depth": 30 }));
    let id = long["id"].as_str().expect("id").to_string();
    let quick = server.post_ok("/v1/analysis", &json!({ "game": "chess", "depth": 3 }));
    assert!(quick["bestmove"].is_string());
    let cancelled = server.request("DELETE", &format!("/v1/annotations/{id}"), None, b"");
    assert_eq!(cancelled.status, 200, "{}", cancelled.text());
    assert_eq!(cancelled.json()["status"], json!("cancelled"));
    let view = wait_status(&server, &id, |v| v["status"] == json!("cancelled"));
    assert!(view["progress"]["done"].as_u64() < view["progress"]["total"].as_u64());
    // Cancelling twice is harmless; a finished job cannot be cancelled.
    assert_eq!(server.request("DELETE", &format!("/v1/annotations/{id}"), None, b"").status, 200);
    let small = create(&server, &json!({ "game": "chess", "text": "1. e4 e5 *", "depth": 2 }));
    let small_id = small["id"].as_str().expect("id");
    wait_done(&server, small_id);
    server.request("DELETE", &format!("/v1/annotations/{small_id}"), None, b"").problem(409);
    let p = server.get(&format!("/v1/annotations/{small_id}/export?format=docx")).problem(422);
    assert_eq!(p["token"], json!("docx"));

    // A job over is removed with its results (the store's own tests see them go); so is a running one,
    // cancelled first, without its task failing on writes to a job that is gone; the worker is then free.
    server.request("DELETE", &format!("/v1/annotations/{small_id}?purge=maybe"), None, b"").problem(422);
    let removed = server.request("DELETE", &format!("/v1/annotations/{small_id}?purge=true"), None, b"");
    assert_eq!((removed.status, removed.json()["status"].clone()), (200, json!("removed")), "{}", removed.text());
    server.get(&format!("/v1/annotations/{small_id}")).problem(404);
    server.get(&format!("/v1/annotations/{small_id}/export")).problem(404);
    let running = create(&server, &json!({ "game": "chess", "text": pgn, "depth": 30 }));
    let running_id = running["id"].as_str().expect("id").to_string();
    wait_status(&server, &running_id, |v| v["status"] == json!("running"));
    let removed = server.request("DELETE", &format!("/v1/annotations/{running_id}?purge=true"), None, b"");
    assert_eq!(removed.status, 200, "{}", removed.text());
    server.get(&format!("/v1/annotations/{running_id}")).problem(404);
    let quick = server.post_ok("/v1/analysis", &json!({ "game": "chess", "depth": 3 }));
    assert!(quick["bestmove"].is_string());
    // Warnings are logged (`KIBITZ_LOG=warn`): the removed job's task ended without one.
    let log = server.stderr();
    assert!(!log.contains("annotation job failed") && !log.contains("trying again"), "{log}");
    server.stop();
}

#[test]
fn a_websocket_follows_a_job() {
    let server = Server::start(&[]);
    let accepted = create(&server, &json!({ "game": "checkers", "text": fixture("checkers.pdn"), "depth": 5 }));
    let id = accepted["id"].as_str().expect("id");
    let mut ws = server.ws();
    ws.send(&json!({ "type": "subscribe", "id": "s1", "job": id }));
    let deadline = Instant::now() + JOB_DEADLINE;
    let mut last_done = 0;
    loop {
        let message = ws.recv_within(JOB_DEADLINE).expect("a progress message");
        assert_eq!(message["type"], json!("progress"), "{message}");
        assert_eq!((message["id"].as_str(), message["job"].as_str()), (Some("s1"), Some(id)));
        let done = message["done"].as_u64().expect("done");
        assert!(done >= last_done, "progress never goes back");
        last_done = done;
        if message["status"] == json!("done") {
            assert_eq!(message["done"], message["total"]);
            break;
        }
        assert!(Instant::now() < deadline);
    }
    // A finished job answers with its stored state at once; an unknown one is an error.
    ws.send(&json!({ "type": "subscribe", "id": "s2", "job": id }));
    let again = ws.recv();
    assert_eq!((again["status"].as_str(), again["id"].as_str()), (Some("done"), Some("s2")));
    ws.send(&json!({ "type": "subscribe", "id": "s3", "job": "ffffffffffffffff" }));
    assert_eq!(ws.recv()["type"], json!("error"));
    server.stop();
}

#[test]
fn a_socket_follows_a_bounded_number_of_jobs_and_still_answers_at_once() {
    let server = Server::start(&[]);
    // A job deep enough to be running throughout.
    let accepted = create(&server, &json!({ "game": "chess", "text": fixture("chess_collection.pgn"), "depth": 40 }));
    let id = accepted["id"].as_str().expect("id").to_string();
    wait_status(&server, &id, |v| v["status"] == json!("running"));
    let mut ws = server.ws();
    for k in 0..=16 {
        ws.send(&json!({ "type": "subscribe", "id": format!("s{k}"), "job": id }));
    }
    // The seventeenth is refused, naming the limit; the sixteen before it follow the job.
    let refused = loop {
        let message = ws.recv_within(JOB_DEADLINE).expect("a message");
        if message["id"] == json!("s16") {
            break message;
        }
        assert_eq!(message["type"], json!("progress"), "{message}");
    };
    assert_eq!(refused["type"], json!("error"), "{refused}");
    assert!(refused["detail"].as_str().is_some_and(|d| d.contains("16 annotation jobs")), "{refused}");
    // An analysis answered at once (a finished game) still gets its answer beside the followers.
    let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
    ws.send(&json!({ "type": "analyse", "id": "mate", "game": "chess", "position": mated, "depth": 3 }));
    let answer = loop {
        let message = ws.recv_within(JOB_DEADLINE).expect("a message");
        if message["id"] == json!("mate") {
            break message;
        }
    };
    assert_eq!(answer["type"], json!("bestmove"), "{answer}");
    assert_eq!(server.request("DELETE", &format!("/v1/annotations/{id}"), None, b"").status, 200);
    server.stop();
}

/// (game_idx, ply) → stored result, straight from the database file.
fn stored_positions(db: &Path, job: &str) -> Vec<(i64, i64, String)> {
    use sqlx::{Connection, Row};
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(db);
        let mut conn = sqlx::SqliteConnection::connect_with(&options).await.expect("open the file");
        let rows = sqlx::query(
            "SELECT game_idx, ply, result FROM annotation_positions WHERE job_id = ? ORDER BY game_idx, ply",
        )
        .bind(job)
        .fetch_all(&mut conn)
        .await
        .expect("query");
        let out = rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
        conn.close().await.expect("close");
        out
    })
}

/// Another program's write lock on the store file (`BEGIN EXCLUSIVE` on a connection of its own), taken before
/// this returns and held until [`WriteLock::release`] or for `longest`.
struct WriteLock {
    release: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

fn hold_write_lock(db: std::path::PathBuf, longest: Duration) -> WriteLock {
    use sqlx::Connection;
    let (locked, is_locked) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        runtime.block_on(async {
            let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&db);
            let mut conn = sqlx::SqliteConnection::connect_with(&options).await.expect("open the file");
            sqlx::query("BEGIN EXCLUSIVE").execute(&mut conn).await.expect("lock");
            locked.send(()).expect("tell");
            let _ = tokio::task::spawn_blocking(move || released.recv_timeout(longest)).await;
            sqlx::query("COMMIT").execute(&mut conn).await.expect("unlock");
            conn.close().await.expect("close");
        })
    });
    is_locked.recv().expect("the lock");
    WriteLock { release, thread }
}

impl WriteLock {
    /// Give the lock up (if it is still held) and wait until it is.
    fn release(self) {
        let _ = self.release.send(());
        self.thread.join().expect("the locker");
    }
}

/// A job on the draughts fixture at 60 ms a position, long enough to be caught midway: its id and positions.
fn draughts_job(server: &Server) -> (String, u64) {
    let accepted = create(server, &json!({ "game": "draughts", "text": fixture("draughts.pdn"), "movetime_ms": 60 }));
    let id = accepted["id"].as_str().expect("id").to_string();
    (id, accepted["positions"].as_u64().expect("positions"))
}

#[test]
fn a_store_locked_for_a_while_delays_a_job_without_failing_it() {
    let dir = TempDir::new("annotate-locked");
    let server = Server::start_on(&dir, &["--workers", "1"]);
    let (id, total) = draughts_job(&server);
    // Another program holds the file's write lock for 16 s, longer than the store waits for it (5 s) twice over
    // (a cache write and then the job's own queue behind the one writer): the job's next write fails, and the
    // job is run again from what is stored rather than failed.
    let lock = hold_write_lock(dir.db(), Duration::from_secs(16));
    let view = wait_done(&server, &id);
    lock.release();
    assert_eq!(view["status"], json!("done"), "{view}");
    assert_eq!(view["progress"]["done"].as_u64(), Some(total), "{view}");
    // The store did fail meanwhile: the job was run again, not merely slowed.
    let log = server.stderr();
    assert!(log.contains("the store failed; trying again"), "{log}");
    server.stop();
    assert_eq!(stored_positions(&dir.db(), &id).len() as u64, total, "every position once");
}

#[test]
fn a_job_waits_out_a_store_locked_for_long_and_finishes_once_it_answers() {
    // The embedded store's outages used to be tried three times (some 30 s), then the job was failed for good.
    let dir = TempDir::new("annotate-locked-long");
    let server = Server::start_on(&dir, &["--workers", "1"]);
    let (id, total) = draughts_job(&server);
    wait_status(&server, &id, |v| v["status"] == json!("running"));
    // Another program holds the write lock through more runs of the job than were ever tried before.
    let lock = hold_write_lock(dir.db(), Duration::from_secs(240));
    let deadline = Instant::now() + JOB_DEADLINE;
    while server.stderr().matches("the store failed; trying again").count() < 4 {
        assert!(Instant::now() < deadline, "the job was not tried a fourth time: {}", server.stderr());
        let status = server.get(&format!("/v1/annotations/{id}")).json()["status"].clone();
        assert_eq!(status, json!("running"), "the job gave up while the store was locked: {}", server.stderr());
        std::thread::sleep(Duration::from_millis(200));
    }
    lock.release();
    let view = wait_done(&server, &id);
    assert_eq!(view["status"], json!("done"), "{view}");
    assert_eq!(view["progress"]["done"].as_u64(), Some(total), "{view}");
    server.stop();
    assert_eq!(stored_positions(&dir.db(), &id).len() as u64, total, "every position once");
}

/// A job that fails for a reason of its own (here its stored settings spoiled while the server was down)
/// while another program holds the store's write lock: its failure cannot be written at first, and is
/// written once the store answers, not lost (the job would otherwise be left `queued` and run again at every
/// start).
#[test]
fn a_jobs_failure_is_stored_once_a_locked_store_answers() {
    let dir = TempDir::new("annotate-fail-locked");
    let server = Server::start_on(&dir, &["--workers", "1"]);
    let body = json!({ "game": "draughts", "text": "[GameType \"20\"]\n\n1. 32-28 19-23 *\n", "depth": 2 });
    let id = create(&server, &body)["id"].as_str().expect("id").to_string();
    wait_done(&server, &id);
    server.stop();
    let sql = format!("UPDATE annotation_jobs SET settings = 'not json', status = 'queued' WHERE id = '{id}'");
    assert_eq!(sqlite_execute(&dir.db(), &sql), 1);

    let lock = hold_write_lock(dir.db(), Duration::from_secs(240));
    // The server starts (reads go on under WAL) and resumes the job, which fails at once.
    let server = Server::start_on(&dir, &["--workers", "1"]);
    let deadline = Instant::now() + JOB_DEADLINE;
    while !server.stderr().contains("its failure could not be stored; trying again") {
        assert!(Instant::now() < deadline, "the failure was never tried again: {}", server.stderr());
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(server.get(&format!("/v1/annotations/{id}")).json()["status"], json!("queued"));
    lock.release();
    let view = wait_status(&server, &id, |v| v["status"] != json!("queued") && v["status"] != json!("running"));
    assert_eq!(view["status"], json!("failed"), "{view}");
    assert!(view["error"].as_str().is_some_and(|e| e.starts_with("stored settings:")), "{view}");
    server.stop();
}

#[test]
fn a_killed_server_resumes_the_job_and_writes_each_position_once() {
    let dir = TempDir::new("annotate-kill");
    let server = Server::start_on(&dir, &["--workers", "1"]);
    let (id, total) = draughts_job(&server);
    let midway = wait_status(&server, &id, |v| v["progress"]["done"].as_u64().is_some_and(|d| d >= 3));
    assert!(midway["progress"]["done"].as_u64() < Some(total), "the job finished before the kill: make it longer");
    drop(server); // SIGKILL: no shutdown at all.
    let before = stored_positions(&dir.db(), &id);
    assert!(before.len() >= 3 && (before.len() as u64) < total);
    // Two written results made unusable meanwhile (they used to count as done, and every report skipped them):
    // one that does not decode, one whose best move is no move.
    let spoiled = [(before[0].0, before[0].1), (before[1].0, before[1].1)];
    for ((game, ply), result) in spoiled.iter().zip([
        "not json",
        r#"{"best":"zzzz","line":[],"depth":1,"nodes":1,"time_ms":1,"cached":false,"score":{"cp":0}}"#,
    ]) {
        let sql = format!(
            "UPDATE annotation_positions SET result = '{result}' WHERE job_id = '{id}' AND game_idx = {game} AND ply = {ply}"
        );
        assert_eq!(sqlite_execute(&dir.db(), &sql), 1, "{sql}");
    }

    let server = Server::start_on(&dir, &["--workers", "1"]);
    let view = wait_done(&server, &id);
    check_view(&view, 1, 0);
    server.stop();
    let after = stored_positions(&dir.db(), &id);
    assert_eq!(after.len() as u64, total, "every position exactly once");
    let mut keys: Vec<(i64, i64)> = after.iter().map(|(g, p, _)| (*g, *p)).collect();
    keys.dedup();
    assert_eq!(keys.len() as u64, total);
    // What was written before the kill was kept, not redone; what was spoiled was evaluated again.
    for row in &before {
        if spoiled.contains(&(row.0, row.1)) {
            let now = &after.iter().find(|r| (r.0, r.1) == (row.0, row.1)).expect("written again").2;
            let eval: Value = serde_json::from_str(now).expect("a result that decodes");
            let searched = eval["depth"].as_u64() > Some(0) || eval.get("end").is_some();
            assert!(eval["best"] != json!("zzzz") && searched, "{now}");
        } else {
            assert!(after.contains(row), "position {:?} was rewritten", (row.0, row.1));
        }
    }
}

/// Every annotation job of a SQLite file: (id, status), and how many positions are written.
fn jobs_in(db: &Path) -> (Vec<(String, String)>, i64) {
    use sqlx::{Connection, Row};
    if !db.exists() {
        return (Vec::new(), 0);
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(db);
        let mut conn = sqlx::SqliteConnection::connect_with(&options).await.expect("open the file");
        // Polled from the start of the run: before the CLI has migrated the file, there are no tables yet,
        // which reads as nothing written (the caller waits on).
        let jobs = sqlx::query("SELECT id, status FROM annotation_jobs ORDER BY id")
            .fetch_all(&mut conn)
            .await
            .map(|rows| rows.iter().map(|r| (r.get(0), r.get(1))).collect())
            .unwrap_or_default();
        let positions = sqlx::query("SELECT COUNT(*) FROM annotation_positions")
            .fetch_one(&mut conn)
            .await
            .map(|r| r.get(0))
            .unwrap_or(0);
        conn.close().await.expect("close");
        (jobs, positions)
    })
}

#[test]
fn an_interrupted_cli_annotation_cancels_its_job_in_the_store() {
    // Interrupted, `kibitz annotate --db F` left its job `running`: the next server on F resumed it for nobody.
    let dir = TempDir::new("annotate-cli-interrupted");
    let db = dir.db();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(["annotate", "--movetime", "60", "--quiet", "--db", db.to_str().expect("path")])
        .arg(fixture_path("draughts.pdn"))
        .env("KIBITZ_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kibitz annotate");
    // Interrupted midway: once some positions are written.
    let deadline = Instant::now() + Duration::from_secs(60);
    while jobs_in(&db).1 == 0 {
        assert!(Instant::now() < deadline, "no position written");
        assert!(child.try_wait().expect("wait").is_none(), "the annotation ended before it could be interrupted");
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("run kill");
    assert!(status.success());
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let (jobs, _) = jobs_in(&db);
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    let (id, status) = &jobs[0];
    assert_eq!(status, "cancelled", "{stderr}");
    assert!(stderr.contains(&format!("annotation job {id} cancelled")), "{stderr}");
    // A server on the file leaves it so.
    let server = Server::start_with_db(&dir, db.to_str().expect("path"), &[]);
    let view = server.get(&format!("/v1/annotations/{id}")).json();
    assert_eq!(view["status"], json!("cancelled"), "{view}");
}

fn kibitz(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(args)
        .env("KIBITZ_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .expect("run kibitz")
}

/// `kibitz annotate FILE --depth DEPTH --quiet -o OUT`, here (no server).
fn annotate_into(file: &Path, depth: &str, out: &Path) -> std::process::Output {
    let (file, out) = (file.to_str().expect("path"), out.to_str().expect("path"));
    kibitz(&["annotate", file, "--depth", depth, "--quiet", "-o", out])
}

#[test]
fn a_file_every_game_reads_alike_is_refused_naming_them_all() {
    // A game without moves reads under every PGN and PDN reader: the refusal named two of them at random
    // ("reads as checkers and as draughts alike" for a chess file).
    let dir = TempDir::new("annotate-cli-alike");
    let file = dir.path().join("empty.pgn");
    std::fs::write(&file, "[Event \"aborted\"]\n[Result \"*\"]\n\n*\n").expect("write");
    let out = kibitz(&["annotate", file.to_str().expect("path"), "--depth", "1", "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    for game in ["chess", "checkers", "draughts", "xiangqi"] {
        assert!(stderr.contains(game), "{game} not named: {stderr}");
    }
    assert!(stderr.contains("name the game with --game"), "{stderr}");
}

#[test]
fn the_cli_refuses_a_bad_export_or_output_before_annotating_and_reads_past_a_bom() {
    let dir = TempDir::new("annotate-cli-early");
    let file = dir.path().join("bom.pgn");
    // A UTF-8 byte-order mark before the first tag was read as part of it.
    std::fs::write(&file, "\u{feff}[Event \"x\"]\n\n1. e4 e5 *\n").expect("write");
    let file = file.to_str().expect("path");
    let missing = dir.path().join("no/such/dir/out.pgn");
    for (args, said) in [
        (vec!["--export", "xml"], "unknown export format `xml` for chess (known: pgn, json, text)"),
        (vec!["-o", missing.to_str().expect("path")], "cannot write"),
    ] {
        // Refused before any search (the export's message used to come after the whole annotation): the store
        // the annotation would fill is never opened, so its file is never made.
        let db = dir.path().join("cache.db");
        let db = db.to_str().expect("path");
        let out = kibitz(&[&["annotate", file, "--depth", "1", "--quiet", "--db", db][..], &args].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(said), "{args:?}: {stderr}");
        assert!(!std::path::Path::new(db).exists(), "{args:?}: the store was opened before the refusal");
    }
    assert!(!missing.exists());
    let out_file = dir.path().join("out.pgn");
    let out = kibitz(&["annotate", file, "--depth", "1", "--quiet", "-o", out_file.to_str().expect("path")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read_to_string(&out_file).expect("the annotated game");
    assert!(written.contains("1. e4"), "{written}");

    // A Latin-1 (Windows-1252) file, as older collections are, is read (it was refused whole), with a warning;
    // its names come out in UTF-8.
    let latin = dir.path().join("latin1.pgn");
    std::fs::write(&latin, b"[White \"R\xe9ti, Richard\"]\n[Black \"Bogolyubov \x96 E.\"]\n\n1. e4 e5 *\n")
        .expect("write");
    let out_file = dir.path().join("latin-out.pgn");
    let out = annotate_into(&latin, "1", &out_file);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("not UTF-8 (from byte 9): read as Latin-1"), "{stderr}");
    let written = std::fs::read_to_string(&out_file).expect("the annotated game, in UTF-8");
    assert!(written.contains("[White \"Réti, Richard\"]") && written.contains("Bogolyubov – E."), "{written}");
}

#[test]
fn the_records_own_comments_are_kept_beside_the_annotations() {
    // A lichess or ChessBase export's clocks and remarks were dropped from the annotated game.
    let dir = TempDir::new("annotate-cli-comments");
    let file = dir.path().join("clocks.pgn");
    std::fs::write(
        &file,
        "[Event \"x\"]\n\n1. e4 { [%eval 9.99] [%clk 0:03:00] } e5 {[%clk 0:02:58]} 2. Nf3 (2. d4 {in a variation}) Nc6 \
         ; fine }{ here\n3. Bb5 *\n",
    )
    .expect("write");
    let out_file = dir.path().join("out.pgn");
    let out = annotate_into(&file, "1", &out_file);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read_to_string(&out_file).expect("the annotated game");
    let flat = written.split_whitespace().collect::<Vec<_>>().join(" ");
    for kept in ["[%clk 0:03:00]", "[%clk 0:02:58]", "fine )( here"] {
        assert!(flat.contains(kept), "{kept}: {written}");
    }
    // Their evaluation gives way to kibitz's; a variation keeps its comment, inside it.
    assert!(!written.contains("9.99"), "{written}");
    assert!(flat.contains("(2. d4 {in a variation})"), "{written}");
    let comments: Vec<&str> = written.split('{').skip(1).map(|c| c.split('}').next().unwrap_or("")).collect();
    assert!(comments.iter().all(|c| c.matches("[%eval").count() <= 1), "{comments:?}");
    // It reads back in kibitz's own reader, comments and all.
    let back = kibitz(&["annotate", out_file.to_str().expect("path"), "--depth", "1", "--quiet"]);
    assert!(back.status.success(), "{}", String::from_utf8_lossy(&back.stderr));
}

#[test]
fn the_cli_through_a_server_names_its_job_and_waits_out_the_rate_limit() {
    // One unit, one every two seconds: the submission takes it, and the first status poll is answered 429. The
    // CLI used to give up there, never having said the job's id; it now waits what Retry-After says.
    let server = Server::start(&["--auth", "optional", "--anon-rate", "0.5", "--anon-burst", "1", "--no-guide"]);
    let dir = TempDir::new("annotate-cli-patient");
    let file = dir.path().join("one.pgn");
    std::fs::write(&file, "1. e4 e5 2. Nf3 *\n").expect("write");
    let url = format!("http://{}", server.addr);
    let out = kibitz(&["annotate", file.to_str().expect("path"), "--depth", "1", "--quiet", "--server", &url]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("annotation job ") && stderr.contains(&url), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("1. e4"), "{stderr}");
    server.stop();
}

#[test]
fn the_cli_reads_no_more_of_a_file_than_its_limits() {
    let dir = TempDir::new("annotate-cli-limits");
    let file = dir.path().join("five.pgn");
    std::fs::write(&file, "[Event \"x\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n\n".repeat(5)).expect("write");
    let file = file.to_str().expect("path");
    for (args, said) in [
        (&["--max-games", "3"][..], "more than 3 games: reading stopped at game 4 (line 13)"),
        (
            &["--game", "chess", "--max-positions", "12"][..],
            "more than 12 positions: reading stopped at game 3 (line 9)",
        ),
    ] {
        let out = kibitz(&[&["annotate", file, "--depth", "1", "--quiet"][..], args].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(said), "{args:?}: {stderr}");
    }
}

#[test]
fn the_cli_annotates_here_and_through_a_server() {
    let dir = TempDir::new("annotate-cli");
    let out = dir.path().join("annotated.pdn");
    let file = fixture_path("checkers.pdn");
    let local = annotate_into(&file, "4", &out);
    assert!(local.status.success(), "{}", String::from_utf8_lossy(&local.stderr));
    let written = std::fs::read_to_string(&out).expect("output");
    assert!(written.contains("[%eval "), "{written}");
    let summary = String::from_utf8_lossy(&local.stderr);
    assert!(summary.contains("accuracy") && summary.contains("black") && summary.contains("white"), "{summary}");

    // Every fixture, the game found from the file when not named (formats are detected too); the games
    // without an annotated format of their own are written as text.
    for &(game, file, _, games, malformed) in FIXTURES {
        let path = fixture_path(file);
        let run = kibitz(&["annotate", path.to_str().expect("path"), "--nodes", "2000", "--quiet"]);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{file}: {stderr}");
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(stdout.contains("[%eval ") || stdout.contains(&format!("Game {games}")), "{file}: {stdout}");
        assert_eq!(stderr.matches("skipping").count(), malformed, "{file}: {stderr}");
        // The summary names both sides of each annotated game.
        assert!(stderr.contains("accuracy"), "{game} {file}: {stderr}");
    }

    let server = Server::start(&[]);
    let url = format!("http://{}", server.addr);
    let pgn = fixture_path("chess_collection.pgn");
    let remote = kibitz(&[
        "annotate",
        pgn.to_str().expect("path"),
        "--game",
        "chess",
        "--depth",
        "3",
        "--server",
        &url,
        "--quiet",
    ]);
    let stderr = String::from_utf8_lossy(&remote.stderr);
    assert!(remote.status.success(), "{stderr}");
    assert!(stderr.contains("skipping game"), "the malformed game is reported: {stderr}");
    assert!(String::from_utf8_lossy(&remote.stdout).contains("[%eval "));
    let missing = kibitz(&["annotate", "/nonexistent/games.pgn"]);
    assert!(!missing.status.success());
    server.stop();
}

#[test]
fn the_exported_pgn_reads_back_in_python_chess() {
    let have = Command::new("python3").args(["-c", "import chess.pgn"]).status().is_ok_and(|s| s.success());
    if !have {
        assert!(std::env::var_os("CI").is_none(), "python-chess is required when CI is set (pip install chess)");
        eprintln!("note: python-chess not installed: the API's PGN export is not read back");
        return;
    }
    let server = Server::start(&[]);
    let accepted = create(&server, &json!({ "game": "chess", "text": fixture("chess_collection.pgn"), "depth": 4 }));
    let id = accepted["id"].as_str().expect("id");
    let view = wait_done(&server, id);
    let export = server.get(&format!("/v1/annotations/{id}/export"));
    assert_eq!(export.status, 200);
    // python-chess reads every game, every mainline move, and finds an [%eval] on each annotated move.
    let script = r#"
import io, sys, chess.pgn
text = sys.stdin.read()
stream = io.StringIO(text)
out = []
while True:
    game = chess.pgn.read_game(stream)
    if game is None:
        break
    if game.errors:
        print("errors", game.errors); sys.exit(1)
    moves = list(game.mainline())
    evals = sum(1 for node in moves if node.eval() is not None)
    variations = sum(len(node.variations) - 1 for node in game.mainline() if node.variations)
    out.append(f"{len(moves)} {evals} {variations}")
print(";".join(out))
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    use std::io::Write;
    child.stdin.take().expect("stdin").write_all(&export.body).expect("write");
    let output = child.wait_with_output().expect("python3 output");
    let stdout = String::from_utf8_lossy(&output.stdout).trim().to_string();
    assert!(output.status.success(), "{stdout} {}", String::from_utf8_lossy(&output.stderr));
    let annotated: Vec<&Value> =
        view["games"].as_array().expect("games").iter().filter(|g| g["status"] == json!("done")).collect();
    let read: Vec<Vec<usize>> =
        stdout.split(';').map(|g| g.split(' ').map(|n| n.parse().expect("count")).collect()).collect();
    assert_eq!(read.len(), annotated.len(), "{stdout}");
    // The records' own variations are kept beside kibitz's better lines.
    let own: Vec<usize> =
        Chess::parse_records(&fixture("chess_collection.pgn"), Some("pgn"), &mut RecordBudget::new(100, 10_000))
            .expect("the fixture")
            .into_iter()
            .flatten()
            .map(|r| r.remarks.moves.iter().map(|m| m.variations.len()).sum())
            .collect();
    assert_eq!(own.len(), annotated.len(), "{stdout}");
    for ((game, counts), own) in annotated.iter().zip(&read).zip(own) {
        let moves = game["moves"].as_array().expect("moves");
        assert_eq!(counts[0], moves.len(), "every move read back: {stdout}");
        assert!(counts[1] > 0, "evaluations read back: {stdout}");
        let worse = moves
            .iter()
            .filter(|m| {
                ["inaccuracy", "mistake", "blunder", "mate_missed"].contains(&m["class"].as_str().unwrap_or(""))
            })
            .count();
        assert_eq!(counts[2], worse + own, "one better line per questionable move, and the record's own: {stdout}");
    }
    server.stop();
}
