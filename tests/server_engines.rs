//! External engines behind the API, through a real `kibitz serve` with an engines file: Stockfish (chess) and
//! Fairy-Stockfish (xiangqi) answering REST and WebSocket analyses and annotation jobs, results cached per
//! engine, `GET /v1/engines`, and an engine process killed mid-request (a 502 naming it, then a fresh process
//! and the restart counted in `/metrics`). Each test is skipped with a message when its engine is not installed,
//! unless `KIBITZ_ORACLE=1` (as CI runs them, after installing the engines), where a missing engine fails.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{Server, TempDir};
use kibitz::game::Game;
use serde_json::{Value, json};

fn find_program(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.push(PathBuf::from("/usr/games"));
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// The engine's path, or `None` (skip) when it is missing and the oracles are not required.
fn require(name: &str) -> Option<PathBuf> {
    let found = find_program(name);
    if found.is_none() {
        assert!(std::env::var_os("KIBITZ_ORACLE").is_none(), "KIBITZ_ORACLE=1 but `{name}` is not installed");
        eprintln!("skipped: `{name}` is not installed (CI installs it)");
    }
    found
}

/// An engines file in `dir` with these entries (TOML text each).
fn engines_file(dir: &TempDir, entries: &[String]) -> PathBuf {
    let path = dir.path().join("engines.toml");
    std::fs::write(&path, entries.join("\n")).expect("the engines file");
    path
}

fn uci_entry(name: &str, game: &str, command: &str, default: bool) -> String {
    format!(
        "[[engine]]\nname = \"{name}\"\ngame = \"{game}\"\nprotocol = \"uci\"\ncommand = \"{command}\"\n\
         default = {default}\n[engine.options]\nThreads = 1\nHash = 16\n"
    )
}

fn legal_moves(server: &Server, game: &str, moves: &[String]) -> Vec<String> {
    // Coordinates (`h2e2`) for xiangqi, as the analyses are asked for; chess's main notation is UCI already.
    let format = if game == "xiangqi" { json!("coord") } else { Value::Null };
    let r = server.post_ok("/v1/moves", &json!({ "game": game, "moves": moves, "move_format": format }));
    r["moves"].as_array().expect("moves").iter().map(|m| m["move"].as_str().expect("move").to_string()).collect()
}

#[test]
fn stockfish_answers_rest_and_websocket_analyses_cached_apart_from_kibitz() {
    let Some(stockfish) = require("stockfish") else { return };
    let dir = TempDir::new("engines");
    let file = engines_file(&dir, &[uci_entry("stockfish", "chess", &stockfish.display().to_string(), true)]);
    let server = Server::start(&["--engines", file.to_str().expect("path")]);

    // The default engine of chess answers, named with its own id; MultiPV gives distinct legal first moves.
    let body = json!({ "game": "chess", "moves": ["e2e4", "e7e5"], "depth": 8, "multipv": 3 });
    let first = server.post_ok("/v1/analysis", &body);
    let engine = first["engine"].as_str().expect("engine").to_string();
    assert!(engine.starts_with("stockfish (Stockfish"), "{first}");
    assert_eq!(first["cached"], json!(false));
    let lines = first["lines"].as_array().expect("lines");
    assert_eq!(lines.len(), 3, "{first}");
    let legal = legal_moves(&server, "chess", &["e2e4".into(), "e7e5".into()]);
    let mut firsts: Vec<&str> = lines.iter().map(|l| l["moves"][0].as_str().expect("a move")).collect();
    for m in &firsts {
        assert!(legal.iter().any(|l| l == m), "`{m}` is not legal: {first}");
    }
    firsts.dedup();
    assert_eq!(firsts.len(), 3, "{first}");
    assert!(first["depth"].as_u64().is_some_and(|d| d >= 8), "{first}");

    // Asked again: the cache answers, as the same engine.
    let again = server.post_ok("/v1/analysis", &body);
    assert_eq!((again["cached"].clone(), again["engine"].clone()), (json!(true), json!(engine)), "{again}");
    // kibitz's own engine has its own cache entries: not answered by Stockfish's.
    let own = server.post_ok(
        "/v1/analysis",
        &json!({ "game": "chess", "moves": ["e2e4", "e7e5"], "depth": 3,
        "multipv": 3, "engine": "kibitz" }),
    );
    assert_eq!(own["cached"], json!(false), "{own}");
    assert!(own["engine"].as_str().is_some_and(|e| e.starts_with("kibitz ")), "{own}");
    // The cache lookup names the engine too.
    let query = "/v1/analysis?game=chess&moves=e2e4,e7e5&multipv=3";
    assert_eq!(server.get(query).json()["engine"], json!(engine));
    assert!(
        server.get(&format!("{query}&engine=kibitz")).json()["engine"].as_str().unwrap_or("").starts_with("kibitz")
    );

    // An engine the server does not have for the game.
    let p = server.post("/v1/analysis", &json!({ "game": "chess", "engine": "scan" })).problem(422);
    assert_eq!((p["field"].clone(), p["token"].clone()), (json!("engine"), json!("scan")), "{p}");
    assert!(p["detail"].as_str().unwrap_or("").contains("stockfish"), "{p}");
    let p = server.post("/v1/analysis", &json!({ "game": "checkers", "engine": "stockfish" })).problem(422);
    assert_eq!(p["field"], json!("engine"), "{p}");

    // GET /v1/engines: kibitz for every game, Stockfish for chess as its default.
    let engines = get_json(&server, "/v1/engines");
    let games = engines["games"].as_array().expect("games");
    assert_eq!(games.len(), 5, "{engines}");
    let chess = games.iter().find(|g| g["game"] == json!("chess")).expect("chess");
    assert_eq!(chess["default"], json!("stockfish"), "{chess}");
    let sf = chess["engines"].as_array().expect("engines").iter().find(|e| e["name"] == "stockfish").expect("sf");
    assert!(sf["id"].as_str().is_some_and(|id| id.starts_with("Stockfish")), "{sf}");
    assert!(sf["searches"].as_u64().is_some_and(|n| n >= 1), "{sf}");
    let checkers = games.iter().find(|g| g["game"] == json!("checkers")).expect("checkers");
    assert_eq!(checkers["default"], json!("kibitz"), "{checkers}");

    // The WebSocket: an infinite analysis streams Stockfish's lines until it is stopped.
    let mut ws = server.ws();
    ws.send(&json!({ "type": "analyse", "id": "sf", "game": "chess", "infinite": true, "multipv": 2 }));
    let mut infos = 0;
    while infos < 5 {
        let m = ws.recv();
        assert_eq!((m["type"].clone(), m["id"].clone()), (json!("info"), json!("sf")), "{m}");
        infos += 1;
    }
    ws.send(&json!({ "type": "stop", "id": "sf" }));
    let seen = ws.until("bestmove", "sf");
    let done = seen.last().expect("bestmove");
    assert!(done["engine"].as_str().is_some_and(|e| e.starts_with("stockfish")), "{done}");
    assert_eq!(done["lines"].as_array().map(Vec::len), Some(2), "{done}");
    let start_moves = legal_moves(&server, "chess", &[]);
    assert!(start_moves.iter().any(|m| Some(m.as_str()) == done["bestmove"].as_str()), "{done}");
    server.stop();
}

#[test]
fn fairy_stockfish_plays_xiangqi_through_the_api_move_by_move() {
    let Some(fsf) = require("fairy-stockfish") else { return };
    let dir = TempDir::new("engines");
    let file = engines_file(&dir, &[uci_entry("fsf", "xiangqi", &fsf.display().to_string(), true)]);
    let server = Server::start(&["--engines", file.to_str().expect("path")]);
    // Twelve plies, each Fairy-Stockfish's best move, each in kibitz's legal moves (its ranks 1-10 are
    // converted to kibitz's 0-9 and back), each line legal move by move from the position.
    let mut moves: Vec<String> = Vec::new();
    for _ in 0..12 {
        let a = server.post_ok(
            "/v1/analysis",
            &json!({ "game": "xiangqi", "moves": moves, "depth": 6,
            "move_format": "coord", "multipv": 2 }),
        );
        assert!(a["engine"].as_str().is_some_and(|e| e.starts_with("fsf (Fairy-Stockfish")), "{a}");
        for line in a["lines"].as_array().expect("lines") {
            let mut path = moves.clone();
            for m in line["moves"].as_array().expect("moves") {
                let m = m.as_str().expect("move").to_string();
                assert!(legal_moves(&server, "xiangqi", &path).contains(&m), "`{m}` after {path:?}: {a}");
                path.push(m);
            }
        }
        let best = a["bestmove"].as_str().expect("a best move").to_string();
        moves.push(best);
    }
    server.stop();
}

/// Make an annotation job and wait for it to end (no time asserted; every wait ends): its view.
fn annotated(server: &Server, body: &Value) -> Value {
    let r = server.post("/v1/annotations", body);
    assert_eq!(r.status, 202, "{}", r.text());
    let id = r.json()["id"].as_str().expect("id").to_string();
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let view = server.get(&format!("/v1/annotations/{id}")).json();
        if view["status"] != json!("queued") && view["status"] != json!("running") {
            return view;
        }
        assert!(Instant::now() < deadline, "the job did not finish: {view}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_annotation_job_uses_the_engine_it_names() {
    let Some(stockfish) = require("stockfish") else { return };
    let dir = TempDir::new("engines");
    // Not the default: kibitz stays chess's default, the job asks for Stockfish.
    let file = engines_file(&dir, &[uci_entry("sf", "chess", &stockfish.display().to_string(), false)]);
    let server = Server::start(&["--engines", file.to_str().expect("path")]);
    let pgn = "[Event \"x\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 *\n";
    let view = annotated(&server, &json!({ "game": "chess", "text": pgn, "depth": 6, "engine": "sf" }));
    assert_eq!(view["status"], json!("done"), "{view}");
    assert_eq!(view["settings"]["engine"], json!("sf"), "{view}");
    // The job names the engine that judged it, not kibitz (found by an audit).
    assert_eq!(view["engine"], json!("sf"), "{view}");
    assert_eq!(view["games"][0]["moves"].as_array().map(Vec::len), Some(8), "{view}");
    // Its positions were searched by Stockfish: the same position asked of sf is a cache hit.
    let cached = server.post_ok(
        "/v1/analysis",
        &json!({ "game": "chess", "moves": ["e2e4"], "depth": 6,
        "engine": "sf" }),
    );
    assert_eq!(cached["cached"], json!(true), "{cached}");
    // An unknown engine is refused before the job is made.
    let p = server.post("/v1/annotations", &json!({ "game": "chess", "text": pgn, "engine": "nope" })).problem(422);
    assert_eq!(p["field"], json!("engine"), "{p}");
    server.stop();
}

#[test]
fn a_killed_engine_process_fails_its_request_with_502_and_is_restarted() {
    let Some(stockfish) = require("stockfish") else { return };
    let dir = TempDir::new("engines");
    // A wrapper that says where its process is, so the test can kill it.
    let pid_file = dir.path().join("engine.pid");
    let wrapper = dir.path().join("engine.sh");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\necho $$ > '{}'\nexec '{}'\n", pid_file.display(), stockfish.display()),
    )
    .expect("wrapper");
    set_executable(&wrapper);
    let file = engines_file(&dir, &[uci_entry("sf", "chess", &wrapper.display().to_string(), true)]);
    let server = Server::start(&["--engines", file.to_str().expect("path")]);
    let warm = server.post_ok("/v1/analysis", &json!({ "game": "chess", "depth": 4 }));
    assert!(warm["engine"].as_str().is_some_and(|e| e.starts_with("sf (")), "{warm}");
    let pid = std::fs::read_to_string(&pid_file).expect("the engine's pid").trim().to_string();

    // A long search; the process is killed while it runs.
    let addr = server.addr;
    let long = std::thread::spawn(move || {
        let body = json!({ "game": "chess", "moves": ["d2d4"], "movetime_ms": 20000 }).to_string();
        common::http(addr, "POST", "/v1/analysis", Some("application/json"), body.as_bytes())
    });
    std::thread::sleep(Duration::from_millis(500));
    let killed = std::process::Command::new("kill").args(["-9", &pid]).status().expect("kill");
    assert!(killed.success());
    let failed = long.join().expect("the request thread");
    let p = failed.problem(502);
    assert_eq!(p["engine"], json!("sf"), "{p}");
    assert!(p["detail"].as_str().is_some_and(|d| d.contains("died")), "{p}");

    // The next request is answered by a fresh process; the restart and the failure are counted.
    let next = server.post_ok("/v1/analysis", &json!({ "game": "chess", "moves": ["c2c4"], "depth": 4 }));
    assert!(next["bestmove"].is_string(), "{next}");
    let new_pid = std::fs::read_to_string(&pid_file).expect("the new pid").trim().to_string();
    assert_ne!(new_pid, pid);
    let metrics = server.get("/metrics").text();
    let labelled = |name: &str| {
        metrics
            .lines()
            .find(|l| l.starts_with(&format!("{name}{{engine=\"sf\",game=\"chess\"}}")))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no {name} for sf in:\n{metrics}"))
    };
    assert!(labelled("kibitz_engine_restarts_total") >= 1.0, "{metrics}");
    assert!(labelled("kibitz_engine_failures_total") >= 1.0, "{metrics}");
    assert!(labelled("kibitz_engine_searches_total") >= 2.0, "{metrics}");
    server.stop();
}

#[test]
fn without_an_engines_file_only_kibitz_answers() {
    let server = Server::start(&[]);
    let engines = get_json(&server, "/v1/engines");
    for game in engines["games"].as_array().expect("games") {
        assert_eq!(game["default"], json!("kibitz"), "{game}");
        assert_eq!(game["engines"].as_array().map(Vec::len), Some(1), "{game}");
    }
    let p = server.post("/v1/analysis", &json!({ "game": "chess", "engine": "stockfish" })).problem(422);
    assert_eq!(p["field"], json!("engine"), "{p}");
    let a = server.post_ok("/v1/analysis", &json!({ "game": "chess", "depth": 2, "engine": "kibitz" }));
    assert!(a["engine"].as_str().is_some_and(|e| e.starts_with("kibitz ")), "{a}");
    server.stop();
}

#[test]
fn a_bad_engines_file_stops_the_server_with_a_message_naming_it() {
    let dir = TempDir::new("engines");
    let file = engines_file(
        &dir,
        &["[[engine]]\nname = \"x\"\ngame = \"hive\"\nprotocol = \"uci\"\ncommand = \"x\"\n".into()],
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(["serve", "--http", "127.0.0.1:0", "--no-guide", "--db", "sqlite::memory:", "--engines"])
        .arg(&file)
        .env("KIBITZ_LOG", "warn")
        .output()
        .expect("run kibitz");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("engine `x`") && err.contains("protocol uci cannot analyse hive"), "{err}");
}

#[test]
fn engines_check_prints_a_table() {
    let Some(stockfish) = require("stockfish") else { return };
    let dir = TempDir::new("engines");
    let file = engines_file(
        &dir,
        &[
            uci_entry("sf", "chess", &stockfish.display().to_string(), true),
            uci_entry("missing", "chess", "/nonexistent/engine", false),
        ],
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(["engines", "check"])
        .arg(&file)
        .args(["--movetime", "50"])
        .env("KIBITZ_LOG", "error")
        .output()
        .expect("run kibitz");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "one engine cannot start: {text}");
    let sf = text.lines().find(|l| l.starts_with("sf ")).unwrap_or_else(|| panic!("no row for sf:\n{text}"));
    assert!(
        sf.contains("Stockfish") && sf.contains("chess") && sf.contains("uci") && sf.contains("ok (bestmove "),
        "{sf}"
    );
    let missing = text.lines().find(|l| l.starts_with("missing ")).unwrap_or_else(|| panic!("{text}"));
    // Named as configured, its program beside (found by an audit: errors named the program alone).
    assert!(missing.contains("error: engine `missing (/nonexistent/engine)` could not be started"), "{missing}");
}

#[cfg(unix)]
fn set_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[cfg(not(unix))]
fn set_executable(_: &std::path::Path) {}

/// A GET that must answer 200 with JSON.
fn get_json(server: &Server, target: &str) -> Value {
    let r = server.get(target);
    assert_eq!(r.status, 200, "{target}: {}", r.text());
    r.json()
}

#[test]
fn kibitz_own_protocol_executables_serve_as_external_engines_of_every_protocol() {
    let dir = TempDir::new("engines");
    let entry = |name: &str, game: &str, protocol: &str, program: &str| {
        format!(
            "[[engine]]\nname = \"{name}\"\ngame = \"{game}\"\nprotocol = \"{protocol}\"\ncommand = \"{program}\"\n"
        )
    };
    let file = engines_file(
        &dir,
        &[
            entry("hubby", "draughts", "hub", env!("CARGO_BIN_EXE_kibitz-hub")),
            entry("uhpy", "hive", "uhp", env!("CARGO_BIN_EXE_kibitz-uhp")),
            entry("cpy", "checkers", "checkers", env!("CARGO_BIN_EXE_kibitz-checkers")),
        ],
    );
    let server = Server::start(&["--engines", file.to_str().expect("path"), "--guide-engine", "hubby"]);
    for (game, engine, moves) in [
        ("draughts", "hubby", vec!["32-28", "19-23"]),
        ("hive", "uhpy", vec!["wS1", "bG1 -wS1"]),
        ("checkers", "cpy", vec!["11-15", "23-19"]),
    ] {
        let moves: Vec<String> = moves.into_iter().map(String::from).collect();
        let a = server.post_ok("/v1/analysis", &json!({ "game": game, "moves": moves, "depth": 3, "engine": engine }));
        assert!(a["engine"].as_str().is_some_and(|e| e.starts_with(&format!("{engine} ("))), "{a}");
        let best = a["bestmove"].as_str().unwrap_or_else(|| panic!("no best move: {a}")).to_string();
        assert!(legal_moves(&server, game, &moves).contains(&best), "{game}: `{best}` is not legal: {a}");
    }

    // Several lines from an engine whose protocol gives one: the request asks what the engine cannot do (422,
    // naming the engine), not an engine failure (it was a 502).
    let body = json!({ "game": "draughts", "depth": 3, "engine": "hubby", "multipv": 2 });
    let r = server.post("/v1/analysis", &body);
    let p = r.problem(422);
    assert_eq!(p["type"], json!("/problems/engine-unsupported"), "{p}");
    assert!(p["engine"].as_str().is_some_and(|e| e.starts_with("hubby")), "{p}");

    // An annotation job on the UHP engine, which reports no evaluation (UHP has none): its positions are
    // searched and the job finishes, but no move is judged (no made-up even score, so no "best" moves at 100%
    // accuracy).
    let text = "Base;InProgress;White[3];wS1;bG1 -wS1;wQ wS1-;bQ /bG1";
    let view = annotated(&server, &json!({ "game": "hive", "text": text, "depth": 2, "engine": "uhpy" }));
    assert_eq!(view["status"], json!("done"), "{view}");
    assert_eq!(view["progress"]["done"], view["progress"]["total"], "{view}");
    assert_eq!(view["games"][0]["moves"], json!([]), "{view}");
    assert!(view["games"][0]["players"].as_object().is_none_or(|p| p.is_empty()), "{view}");

    // The GUIDE gateway plays with the Hub engine: its move is legal, and the engine counted the search.
    let searches = |server: &Server| {
        let engines = get_json(server, "/v1/engines");
        let draughts = engines["games"].as_array().expect("games").iter().find(|g| g["game"] == "draughts").cloned();
        let draughts = draughts.expect("draughts");
        let hub = draughts["engines"].as_array().expect("engines").iter().find(|e| e["name"] == "hubby").cloned();
        hub.expect("hubby")["searches"].as_u64().expect("searches")
    };
    let before = searches(&server);
    let guide = server.guide_addr.expect("the GUIDE gateway");
    let stream = std::net::TcpStream::connect(guide).expect("connect to GUIDE");
    stream.set_read_timeout(Some(Duration::from_secs(120))).expect("timeout");
    let mut writer = stream.try_clone().expect("clone");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stream));
    let mut next = || lines.next().expect("a line").expect("read");
    while !next().starts_with("engineok") {}
    use std::io::Write;
    writer.write_all(b"levelsfixeddepth 3\ngo\n").expect("send");
    let answer = loop {
        let line = next();
        if line.starts_with("move ") || line.starts_with("error") {
            break line;
        }
    };
    let text = answer.strip_prefix("move ").unwrap_or_else(|| panic!("GUIDE answered {answer}"));
    let start = kibitz::games::draughts::Draughts::start();
    start.parse_guide_move(text).unwrap_or_else(|e| panic!("`{text}` is not legal: {e}"));
    assert_eq!(searches(&server), before + 1);
    let _ = writer.write_all(b"quit\n");
    server.stop();
}

/// Found by an audit: SIGTERM stopped kibitz's own searches but not an external engine's, so the server stayed up
/// until the engine's search ended by itself. Now the engine is told to stop, the request is answered with
/// what it found, and the server exits at once.
#[test]
fn a_server_stopping_stops_the_searches_of_external_engines() {
    let dir = TempDir::new("engines");
    let file = engines_file(&dir, &[uci_entry("ext", "chess", env!("CARGO_BIN_EXE_kibitz-uci"), false)]);
    let server = Server::start(&["--engines", file.to_str().expect("path"), "--request-timeout-s", "110"]);
    let addr = server.addr;
    let long = std::thread::spawn(move || {
        let body = json!({ "game": "chess", "engine": "ext", "movetime_ms": 60000 }).to_string();
        common::http(addr, "POST", "/v1/analysis", Some("application/json"), body.as_bytes())
    });
    // The search under way in the engine's process: its first iteration reported.
    std::thread::sleep(Duration::from_millis(1500));
    // Exits with 0 within the test deadline (30 s), where the engine's search had 58 s to go.
    server.stop();
    let answered = long.join().expect("the request thread");
    assert_eq!(answered.status, 200, "{answered:?}");
    let a = answered.json();
    assert!(a["bestmove"].is_string() && a["engine"].as_str().is_some_and(|e| e.starts_with("ext (")), "{a}");
}

/// Found by an audit: an external engine repeating one line (as some do, every few milliseconds while a
/// depth runs) had every repeat forwarded to a WebSocket client; a repeat is now held to one every 100 ms, as
/// kibitz's own progress is.
#[cfg(unix)]
#[test]
fn an_external_engine_repeating_its_line_is_throttled_on_the_websocket() {
    let dir = TempDir::new("engines-repeat");
    let script = dir.path().join("repeater.sh");
    // 400 identical lines, a pause, 400 more, then the move: a few hundred milliseconds in all.
    let burst = "i=0; while [ $i -lt 400 ]; do echo 'info depth 5 seldepth 5 multipv 1 score cp 12 nodes 900 pv e2e4 e7e5'; i=$((i+1)); done";
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nwhile read -r line; do\n  case \"$line\" in\n    uci) echo 'id name repeater'; echo uciok;;\n    \
             isready) echo readyok;;\n    go*) {burst}; sleep 0.3; {burst}; echo 'bestmove e2e4 ponder e7e5';;\n    \
             quit) exit 0;;\n  esac\ndone\n"
        ),
    )
    .expect("script");
    set_executable(&script);
    let entry = format!(
        "[[engine]]\nname = \"repeater\"\ngame = \"chess\"\nprotocol = \"uci\"\ncommand = \"{}\"\n",
        script.display()
    );
    let file = engines_file(&dir, &[entry]);
    let server = Server::start(&["--engines", file.to_str().expect("path")]);
    let mut ws = server.ws();
    ws.send(&json!({ "type": "analyse", "id": "r", "game": "chess", "engine": "repeater", "depth": 5 }));
    let seen = ws.until("bestmove", "r");
    let infos = seen.iter().filter(|v| v["type"] == "info").count();
    let best = seen.last().expect("the answer");
    assert_eq!(best["bestmove"], json!("e2e4"), "{best}");
    assert!((1..=10).contains(&infos), "{infos} info messages for 800 repeats of one line: {seen:?}");
    server.stop();
}
