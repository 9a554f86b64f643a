//! Several `kibitz serve` processes on one PostgreSQL (a throwaway cluster started by the test; see
//! tests/common/pg.rs): they share the analysis cache; a 20-game annotation job started through one server
//! that is then killed with SIGKILL is finished by the other, every position written exactly once and with the
//! results of an uninterrupted run; progress and cancellation work through either server; and a server whose
//! PostgreSQL goes away answers 503 with Retry-After (and `/readyz` fails) until it comes back, then serves
//! again without a restart.
//!
//! Without PostgreSQL's programs the tests print why and return (under `KIBITZ_ORACLE=1` they fail).

mod common;

use std::time::{Duration, Instant};

use common::pg::Cluster;
use common::{Server, TempDir};
use kibitz::game::Game;
use kibitz::games::draughts::Draughts;
use serde_json::{Value, json};

/// Annotation jobs may take a while on a loaded machine; no test asserts a time, but every wait ends.
const JOB_DEADLINE: Duration = Duration::from_secs(300);

/// A short lease so that a dead server's job is resumed soon.
const LEASE: &str = "2";

fn node(dir: &TempDir, db: &str) -> Server {
    Server::start_with_db(dir, db, &["--workers", "1", "--job-lease-s", LEASE, "--no-guide"])
}

/// `count` different international draughts games of about `plies` moves, as one PDN text: each move is
/// chosen among the legal ones by a formula of the game and ply numbers.
fn games_pdn(count: usize, plies: usize) -> String {
    let mut text = String::new();
    for g in 0..count {
        let mut game = Draughts::start();
        let mut moves = Vec::new();
        let mut list = Vec::new();
        for ply in 0..plies {
            if game.outcome().is_some() {
                break;
            }
            game.generate_moves(&mut list);
            let m = list[(g * 7 + ply * 3 + g * ply) % list.len()];
            moves.push(game.format_move(m));
            game.make(m);
        }
        text.push_str(&format!("[Event \"game {g}\"]\n[GameType \"20\"]\n[Result \"*\"]\n\n"));
        for (i, pair) in moves.chunks(2).enumerate() {
            text.push_str(&format!("{}. {} ", i + 1, pair.join(" ")));
        }
        text.push_str("*\n\n");
    }
    text
}

fn create(server: &Server, body: &Value) -> (String, u64) {
    let r = server.post("/v1/annotations", body);
    assert_eq!(r.status, 202, "{}", r.text());
    let accepted = r.json();
    (accepted["id"].as_str().expect("id").to_string(), accepted["positions"].as_u64().expect("positions"))
}

fn wait_status(server: &Server, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + JOB_DEADLINE;
    loop {
        let r = server.get(&format!("/v1/annotations/{id}"));
        assert_eq!(r.status, 200, "{}\n{}", r.text(), server.stderr());
        let view = r.json();
        if done(&view) {
            return view;
        }
        assert!(Instant::now() < deadline, "job {id} did not get there: {}", view["progress"]);
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_over(server: &Server, id: &str) -> Value {
    wait_status(server, id, |v| v["status"] != json!("queued") && v["status"] != json!("running"))
}

/// (game, ply) → stored result, straight from the database.
fn stored(cluster: &Cluster, db: &str, job: &str) -> Vec<(u32, u32, Value)> {
    let out = cluster.psql(
        db,
        &format!(
            "SELECT game_idx, ply, result FROM annotation_positions WHERE job_id = '{job}' ORDER BY game_idx, ply"
        ),
    );
    out.lines()
        .map(|line| {
            let mut parts = line.splitn(3, '|');
            let game = parts.next().and_then(|p| p.parse().ok()).expect("game_idx");
            let ply = parts.next().and_then(|p| p.parse().ok()).expect("ply");
            let result = serde_json::from_str(parts.next().expect("result")).expect("result JSON");
            (game, ply, result)
        })
        .collect()
}

/// What a position's result says about the position, whichever server searched it and whether the cache
/// answered (those change `cached`, `nodes` and `time_ms` only).
fn verdict(result: &Value) -> Value {
    json!({
        "score": result["score"], "end": result["end"], "reason": result["reason"],
        "best": result["best"], "line": result["line"], "depth": result["depth"],
    })
}

#[test]
fn two_servers_share_the_cache() {
    let Some(cluster) = Cluster::start() else { return };
    let db = cluster.database();
    let dir = TempDir::new("pg-cache");
    let a = node(&dir, &db);
    let b = node(&dir, &db);
    for (game, depth) in [("chess", 4), ("draughts", 4), ("xiangqi", 3)] {
        let request = json!({ "game": game, "depth": depth });
        let first = a.post_ok("/v1/analysis", &request);
        assert_eq!(first["cached"], json!(false), "{first}");
        // B never saw this position: its memory front misses and the shared store answers.
        let second = b.post_ok("/v1/analysis", &request);
        assert_eq!(second["cached"], json!(true), "{second}");
        for member in ["bestmove", "lines", "depth", "nodes", "position"] {
            assert_eq!(first[member], second[member], "{member}");
        }
        // And the other way round.
        let deeper = json!({ "game": game, "depth": depth + 1 });
        assert_eq!(b.post_ok("/v1/analysis", &deeper)["cached"], json!(false));
        assert_eq!(a.post_ok("/v1/analysis", &deeper)["cached"], json!(true));
    }
    // A request for the cache alone gets the deepest result stored, not the shallower one this server remembers
    // (found by an audit: A kept answering its own depth 3 where B had stored depth 5).
    a.post_ok("/v1/analysis", &json!({ "game": "checkers", "depth": 3 }));
    b.post_ok("/v1/analysis", &json!({ "game": "checkers", "depth": 5 }));
    let only = a.post_ok("/v1/analysis", &json!({ "game": "checkers", "depth": 1, "cache": "only" }));
    assert_eq!((&only["cached"], &only["depth"]), (&json!(true), &json!(5)), "{only}");
    assert_eq!(a.get("/readyz").status, 200);
    a.stop();
    b.stop();
}

#[test]
fn a_job_whose_server_is_killed_is_finished_by_the_other_server() {
    let Some(cluster) = Cluster::start() else { return };
    let dir = TempDir::new("pg-kill");
    let body = json!({ "game": "draughts", "text": games_pdn(20, 40), "depth": 5 });

    // The reference: the same job on one server that nobody disturbs (its own database, so no cache is shared).
    let reference_db = cluster.database();
    let alone = node(&dir, &reference_db);
    let (reference_id, total) = create(&alone, &body);
    assert_eq!(wait_over(&alone, &reference_id)["status"], json!("done"));
    alone.stop();
    let reference = stored(&cluster, &reference_db, &reference_id);
    assert_eq!(reference.len() as u64, total);

    let db = cluster.database();
    let a = node(&dir, &db);
    let b = node(&dir, &db);
    let (id, positions) = create(&a, &body);
    assert_eq!(positions, total);
    // B follows the job A runs, from the store.
    let mut ws = b.ws();
    ws.send(&json!({ "type": "subscribe", "id": "follow", "job": id }));
    let first = ws.recv();
    assert_eq!((first["type"].as_str(), first["job"].as_str()), (Some("progress"), Some(id.as_str())), "{first}");
    // Progress read through B while A runs the job.
    let midway = wait_status(&b, &id, |v| v["progress"]["done"].as_u64().is_some_and(|d| d >= total / 4));
    assert!(midway["progress"]["done"].as_u64() < Some(total), "the job finished before the kill: make it longer");
    drop(a); // SIGKILL: no shutdown, the lease is not released.
    let before = stored(&cluster, &db, &id);
    assert!(!before.is_empty() && (before.len() as u64) < total);

    let view = wait_over(&b, &id);
    assert_eq!(view["status"], json!("done"), "{view}");
    // The follower saw the job to its end.
    let deadline = Instant::now() + JOB_DEADLINE;
    loop {
        let message = ws.recv_within(deadline.saturating_duration_since(Instant::now())).expect("progress");
        if message["status"] == json!("done") {
            assert_eq!(message["done"].as_u64(), Some(total), "{message}");
            break;
        }
    }
    b.stop();

    let after = stored(&cluster, &db, &id);
    assert_eq!(after.len() as u64, total, "every position exactly once");
    let mut keys: Vec<(u32, u32)> = after.iter().map(|(g, p, _)| (*g, *p)).collect();
    keys.dedup();
    assert_eq!(keys.len() as u64, total);
    for row in &before {
        assert!(after.contains(row), "position {:?} was rewritten after the kill", (row.0, row.1));
    }
    // The same results as the uninterrupted run. A searches the same positions in the same order as the
    // reference server, with one worker and the same history in its transposition table: what A wrote is
    // equal. B starts from an empty table, and a table carries over between searches, so at the same depth
    // B may settle on another line of the same depth: there what does not depend on the table must be equal
    // (the game's end and why, the depth searched, that a position has a score).
    let mut other_lines = 0;
    for ((g, p, result), (rg, rp, expected)) in after.iter().zip(&reference) {
        assert_eq!((g, p), (rg, rp));
        if before.iter().any(|(bg, bp, _)| (bg, bp) == (g, p)) {
            assert_eq!(verdict(result), verdict(expected), "game {g} ply {p}, written by A before the kill");
        } else {
            for member in ["end", "reason", "depth"] {
                assert_eq!(result[member], expected[member], "game {g} ply {p}: {member}");
            }
            assert_eq!(result["score"].is_null(), expected["score"].is_null(), "game {g} ply {p}: score");
            other_lines += usize::from(verdict(result) != verdict(expected));
        }
    }
    eprintln!(
        "{other_lines} of {} positions written after the kill have another line than the reference",
        total as usize - before.len()
    );
}

#[test]
fn a_job_is_cancelled_through_a_server_that_does_not_run_it() {
    let Some(cluster) = Cluster::start() else { return };
    let db = cluster.database();
    let dir = TempDir::new("pg-cancel");
    let a = node(&dir, &db);
    let b = node(&dir, &db);
    let (id, total) = create(&a, &json!({ "game": "draughts", "text": games_pdn(20, 40), "depth": 6 }));
    wait_status(&b, &id, |v| v["progress"]["done"].as_u64().is_some_and(|d| d >= 1));
    let r = b.request("DELETE", &format!("/v1/annotations/{id}"), None, b"");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(wait_over(&a, &id)["status"], json!("cancelled"));
    // A stops writing: within a few leases the count stays put.
    let count = || stored(&cluster, &db, &id).len();
    let mut last = count();
    let deadline = Instant::now() + JOB_DEADLINE;
    loop {
        std::thread::sleep(Duration::from_secs(3));
        let now = count();
        if now == last {
            break;
        }
        assert!(Instant::now() < deadline, "the cancelled job kept running on A");
        last = now;
    }
    assert!((last as u64) < total, "the job finished although it was cancelled");
    a.stop();
    b.stop();
}

#[test]
fn a_server_rides_out_a_postgresql_restart() {
    let Some(cluster) = Cluster::start() else { return };
    let db = cluster.database();
    let dir = TempDir::new("pg-restart");
    let server = node(&dir, &db);
    assert_eq!(server.get("/readyz").status, 200);
    let small = json!({ "game": "draughts", "text": games_pdn(2, 30), "depth": 3 });
    let (id, _) = create(&server, &small);
    wait_over(&server, &id);

    cluster.stop_server();
    let r = server.get("/readyz");
    let problem = r.problem(503);
    assert!(r.header("retry-after").is_some(), "{problem}");
    let r = server.get(&format!("/v1/annotations/{id}"));
    r.problem(503);
    assert!(r.header("retry-after").is_some());
    let r = server.post("/v1/annotations", &small);
    r.problem(503);
    assert!(r.header("retry-after").is_some());
    // Searching needs no store: an analysis of a position this server never saw is still answered (searched;
    // the lookup and the write fail after the pool's acquire timeout).
    let analysis = server.post_ok("/v1/analysis", &json!({ "game": "xiangqi", "depth": 2 }));
    assert_eq!(analysis["cached"], json!(false));
    // Asking the cache alone about a position this server does not remember: the store could not say, which
    // is a 503 to try again, not a 404 "not cached" (found by an audit).
    let r = server.post("/v1/analysis", &json!({ "game": "hive", "depth": 2, "cache": "only" }));
    r.problem(503);
    assert!(r.header("retry-after").is_some());

    cluster.start_server();
    let deadline = Instant::now() + common::DEADLINE;
    while server.get("/readyz").status != 200 {
        assert!(Instant::now() < deadline, "the server did not reconnect: {}", server.stderr());
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(server.get(&format!("/v1/annotations/{id}")).status, 200);
    let (again, _) = create(&server, &small);
    assert_eq!(wait_over(&server, &again)["status"], json!("done"));
    let request = json!({ "game": "chess", "depth": 3 });
    server.post_ok("/v1/analysis", &request);
    assert_eq!(server.post_ok("/v1/analysis", &request)["cached"], json!(true));
    server.stop();
}

/// Found by an audit: a WebSocket following a job on the server that ran it followed that server's own run
/// only, and went silent for good (the job `running` for ever on screen) when the server let the job go in a
/// PostgreSQL outage and a server finished it later.
#[test]
fn a_socket_follows_a_job_to_its_end_when_its_server_lets_it_go() {
    let Some(cluster) = Cluster::start() else { return };
    let db = cluster.database();
    let dir = TempDir::new("pg-follow");
    let a = node(&dir, &db);
    let b = node(&dir, &db);
    let (id, total) = create(&a, &json!({ "game": "draughts", "text": games_pdn(6, 60), "depth": 6 }));
    let mut ws = a.ws();
    ws.send(&json!({ "type": "subscribe", "id": "f", "job": id }));
    // Under way on A.
    let deadline = Instant::now() + JOB_DEADLINE;
    loop {
        let m = ws.recv_within(JOB_DEADLINE).expect("progress");
        assert_eq!(m["type"], json!("progress"), "{m}");
        assert_ne!(m["status"], json!("done"), "the job ended before the outage: the test saw nothing; {m}");
        if m["done"].as_u64().unwrap_or(0) > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the job never started");
    }
    cluster.stop_server();
    // A lets the job go (its log says so: its lease cannot be renewed, or a write fails); then PostgreSQL
    // comes back.
    let deadline = Instant::now() + JOB_DEADLINE;
    let let_go = |log: &str| log.contains("it resumes when the store answers") || log.contains("stopping here");
    while !let_go(&a.stderr()) {
        assert!(Instant::now() < deadline, "A never let the job go: {}", a.stderr());
        std::thread::sleep(Duration::from_millis(200));
    }
    cluster.start_server();
    // A server (either) takes the job up and finishes it; the socket on A hears of it to the end.
    let last = loop {
        let m = ws.recv_within(JOB_DEADLINE).unwrap_or_else(|| panic!("the socket went silent: {}", a.stderr()));
        if m["type"] == json!("progress") && m["status"] == json!("done") {
            break m;
        }
    };
    assert_eq!(last["done"].as_u64(), Some(total), "{last}");
    a.stop();
    b.stop();
}

/// Whether a server's log has a line holding all of `parts` (each looked for alone: a line's message and
/// fields lie in it in any order).
fn logged(server: &Server, parts: &[&str]) -> bool {
    server.stderr().lines().any(|line| parts.iter().all(|part| line.contains(part)))
}

/// Found by an audit: a server ran every job submitted to it at once while the other servers idled (only
/// jobs resumed from the store were bounded by a server's room), and a server that took up a job naming an
/// external engine it was not configured with failed that job for good, although the server that accepted
/// it could run it.
#[test]
fn a_job_beyond_a_servers_room_goes_to_an_idle_server_that_can_run_it() {
    let Some(cluster) = Cluster::start() else { return };
    let db = cluster.database();
    let dir = TempDir::new("pg-room");
    // A has an external chess engine (kibitz's own UCI front end, as a program); B has none. Each has one
    // worker, so room for one job.
    let engines = dir.path().join("engines.toml");
    std::fs::write(
        &engines,
        format!(
            "[[engine]]\nname = \"ext\"\ngame = \"chess\"\nprotocol = \"uci\"\ncommand = {:?}\n\
             args = [\"engine\", \"uci\"]\n",
            env!("CARGO_BIN_EXE_kibitz")
        ),
    )
    .expect("the engines file");
    let info = [("KIBITZ_LOG", "info")];
    let a = Server::start_full(
        &dir,
        &db,
        &["--workers", "1", "--job-lease-s", LEASE, "--no-guide", "--engines", engines.to_str().expect("path")],
        &info,
    );
    let b = Server::start_full(&dir, &db, &["--workers", "1", "--job-lease-s", LEASE, "--no-guide"], &info);

    let (long, _) = create(&a, &json!({ "game": "draughts", "text": games_pdn(20, 50), "depth": 10 }));
    wait_status(&a, &long, |v| v["progress"]["done"].as_u64().is_some_and(|d| d >= 1));
    let chess = "[Event \"e\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 *\n";
    let (external, external_total) =
        create(&a, &json!({ "game": "chess", "text": chess, "depth": 3, "engine": "ext" }));
    let (other, other_total) = create(&a, &json!({ "game": "draughts", "text": games_pdn(2, 20), "depth": 3 }));

    // B, idle, runs the third job while A still runs the first; it passes the second over.
    let view = wait_over(&b, &other);
    assert_eq!((&view["status"], view["progress"]["done"].as_u64()), (&json!("done"), Some(other_total)), "{view}");
    let owner = |job: &str| cluster.psql(&db, &format!("SELECT owner FROM annotation_jobs WHERE id = '{job}'"));
    assert_ne!(owner(&other), owner(&long), "the third job ran beside the first on A");
    assert!(logged(&b, &["taking up annotation job", &other]), "{}", b.stderr());
    assert!(!logged(&a, &["taking up annotation job", &other]), "{}", a.stderr());
    assert!(logged(&b, &["lacks the job's engine", &external, "ext"]), "{}", b.stderr());
    // Its view, on either server, says why it waits.
    let waiting = b.get(&format!("/v1/annotations/{external}")).json();
    assert_eq!(waiting["status"], json!("queued"), "{waiting}");
    let why = waiting["waiting"].as_str().unwrap_or_else(|| panic!("no reason to wait: {waiting}"));
    assert!(why.contains("no chess engine `ext`"), "{why}");
    let mut ws = b.ws();
    ws.send(&json!({ "type": "subscribe", "id": "w", "job": external }));
    let progress = ws.recv();
    assert_eq!((&progress["status"], &progress["waiting"]), (&json!("queued"), &json!(why)), "{progress}");
    let first = a.get(&format!("/v1/annotations/{long}")).json();
    assert_eq!(first["status"], json!("running"), "the first job ended before B took the third: make it longer");

    // A takes the second job up when the first ends, and its engine annotates it.
    let view = wait_over(&a, &external);
    assert_eq!((&view["status"], view["progress"]["done"].as_u64()), (&json!("done"), Some(external_total)), "{view}");
    assert!(logged(&a, &["taking up annotation job", &external]), "{}", a.stderr());
    assert_eq!(view.get("waiting"), None, "{view}");
    assert_eq!(wait_over(&a, &long)["status"], json!("done"));
    let rows = stored(&cluster, &db, &external);
    assert_eq!(rows.len() as u64, external_total);
    a.stop();
    b.stop();
}
