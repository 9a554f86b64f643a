//! GUIDE through the real executables over real TCP: `kibitz-guide -guide -port 0` (and `-connect`) and the
//! gateway of `kibitz serve`. A client here plays the GUI: it reads the engine's messages split at any control
//! character, tracks the game itself and checks every `move`, `position`, `game` and `searchInfo` against it.
//! Every read has a deadline; nothing measures time.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use common::Server;
use kibitz::game::Game;
use kibitz::games::draughts::Draughts;
use serde_json::json;

/// The longest any reply may take (searches here are short; the machine is shared and may be slow).
const REPLY: Duration = Duration::from_secs(30);

/// A GUI's end of a GUIDE connection.
struct Gui {
    stream: TcpStream,
    lines: Receiver<String>,
    /// The game as the GUI sees it.
    game: Draughts,
    start: Draughts,
    moves: Vec<String>,
    pings: u32,
}

impl Gui {
    fn connect(addr: SocketAddr) -> Gui {
        let deadline = Instant::now() + REPLY;
        let stream = loop {
            match TcpStream::connect_timeout(&addr, REPLY) {
                Ok(s) => break s,
                Err(e) => {
                    assert!(Instant::now() < deadline, "cannot connect to {addr}: {e}");
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        };
        Gui::on(stream)
    }

    fn on(stream: TcpStream) -> Gui {
        stream.set_nodelay(true).expect("nodelay");
        let reader = stream.try_clone().expect("clone");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            // Messages are separated by any character below 32.
            let mut reader = BufReader::new(reader);
            let mut line = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                for &b in &buf[..n] {
                    if b < 32 {
                        if !line.is_empty() {
                            let text = String::from_utf8_lossy(&line).into_owned();
                            line.clear();
                            if tx.send(text).is_err() {
                                return;
                            }
                        }
                    } else {
                        line.push(b);
                    }
                }
            }
        });
        Gui { stream, lines, game: Draughts::start(), start: Draughts::start(), moves: Vec::new(), pings: 0 }
    }

    /// Connect and read the handshake: name, author, options, engineok.
    fn open(addr: SocketAddr) -> (Gui, Vec<String>) {
        let mut gui = Gui::connect(addr);
        let hello = gui.handshake();
        (gui, hello)
    }

    fn handshake(&mut self) -> Vec<String> {
        let (mut hello, ok) = self.until("engineok");
        hello.push(ok);
        assert!(hello[0].starts_with("name kibitz "), "{hello:?}");
        assert!(hello[1].starts_with("author "), "{hello:?}");
        assert!(hello[2..hello.len() - 1].iter().all(|l| l.starts_with("option ")), "{hello:?}");
        hello
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write");
        self.stream.flush().expect("flush");
    }

    fn send(&mut self, line: &str) {
        self.send_raw(format!("{line}\n").as_bytes());
    }

    fn try_next(&mut self, timeout: Duration) -> Option<String> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Some(line),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("the engine closed the connection"),
        }
    }

    fn next(&mut self) -> String {
        self.try_next(REPLY).unwrap_or_else(|| panic!("no message within {REPLY:?}"))
    }

    /// Messages up to the first starting with `prefix`: (those before, that one). `searchInfo` lines are
    /// checked against the position.
    fn until(&mut self, prefix: &str) -> (Vec<String>, String) {
        let deadline = Instant::now() + REPLY;
        let mut before = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.try_next(left).unwrap_or_else(|| panic!("no `{prefix}` within {REPLY:?}; got {before:?}"));
            if line.starts_with(prefix) {
                return (before, line);
            }
            if line.starts_with("searchInfo") {
                check_search_info(&self.game, &line);
            }
            before.push(line);
        }
    }

    /// Everything but `searchInfo` the engine wrote in answer to the commands sent so far (a `ping` marks the
    /// end, since replies come in order).
    fn sync(&mut self) -> Vec<String> {
        self.pings += 1;
        let token = format!("sync{}", self.pings);
        self.send(&format!("ping {token}"));
        let (before, pong) = self.until("pong ");
        assert_eq!(pong, format!("pong {token}"), "{before:?}");
        before.into_iter().filter(|l| !l.starts_with("searchInfo")).collect()
    }

    /// A command that must be taken silently.
    fn quiet(&mut self, line: &str) {
        self.send(line);
        assert_eq!(self.sync(), Vec::<String>::new(), "`{line}` was answered");
    }

    /// A command that must be refused with an `error` containing `needle`.
    fn error(&mut self, line: &str, needle: &str) {
        self.send(line);
        let out = self.sync();
        assert_eq!(out.len(), 1, "`{line}`: {out:?}");
        assert!(out[0].starts_with("error ") && out[0].contains(needle), "`{line}`: {out:?} lacks `{needle}`");
    }

    /// Play a move as the GUI: tell the engine and track it.
    fn play(&mut self, guide_move: &str) {
        let m = self.game.parse_guide_move(guide_move).unwrap_or_else(|e| panic!("{guide_move}: {e}"));
        self.quiet(&format!("move {guide_move}"));
        self.game.make(m);
        self.moves.push(guide_move.to_string());
    }

    /// `go` and the engine's `move` (checked legal); tracked when the engine plays it.
    fn go(&mut self, times: &str, engine_plays: bool) -> String {
        self.send(format!("go {times}").trim_end());
        self.engine_move(engine_plays)
    }

    fn engine_move(&mut self, engine_plays: bool) -> String {
        let (before, line) = self.until("move ");
        assert!(before.iter().all(|l| l.starts_with("searchInfo")), "{before:?}");
        let text = line["move ".len()..].to_string();
        let m = self.game.parse_guide_move(&text).unwrap_or_else(|e| panic!("engine move {text}: {e}"));
        if engine_plays {
            self.game.make(m);
            self.moves.push(text.clone());
        }
        text
    }

    /// `requestposition` must describe the tracked position and its legal moves.
    fn check_position(&mut self) {
        self.send("requestposition");
        let (before, line) = self.until("position ");
        assert!(before.iter().all(|l| l.starts_with("searchInfo")), "{before:?}");
        let mut expected = format!("position {}", self.game.to_guide());
        for m in self.game.legal_moves() {
            expected.push_str(" m ");
            expected.push_str(&self.game.guide_move(m));
        }
        assert_eq!(line, expected);
    }

    fn check_game(&mut self) {
        self.send("requestgame");
        let (_, line) = self.until("game ");
        let mut expected = format!("game {} {}", self.start.to_guide(), self.moves.len());
        for m in &self.moves {
            expected.push_str(" m ");
            expected.push_str(m);
        }
        assert_eq!(line, expected);
    }

    /// `quit`: the engine answers `quit` and closes the connection.
    fn quit(mut self) {
        self.send("quit");
        let (_, line) = self.until("quit");
        assert_eq!(line, "quit");
        match self.lines.recv_timeout(REPLY) {
            Ok(extra) => panic!("after quit: {extra}"),
            Err(RecvTimeoutError::Disconnected) => {}
            Err(RecvTimeoutError::Timeout) => panic!("the connection stays open after quit"),
        }
    }

    /// Wait for the engine to close the connection; what it wrote before.
    fn closed(&mut self) -> Vec<String> {
        let deadline = Instant::now() + REPLY;
        let mut got = Vec::new();
        loop {
            match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => got.push(line),
                Err(RecvTimeoutError::Disconnected) => return got,
                Err(RecvTimeoutError::Timeout) => panic!("the connection stays open; got {got:?}"),
            }
        }
    }
}

/// A `searchInfo` line: known tokens with their values, `pv` legal PDN moves from `game`.
fn check_search_info(game: &Draughts, line: &str) {
    let words: Vec<&str> = line.split(' ').collect();
    assert_eq!(words[0], "searchInfo", "{line}");
    let mut i = 1;
    while i < words.len() {
        let token = words[i];
        match token {
            "pv" => {
                let mut g = game.clone();
                for text in &words[i + 1..] {
                    let m = g.parse_pdn_move(text).unwrap_or_else(|e| panic!("{line}: pv move {text}: {e}"));
                    g.make(m);
                }
                assert!(words.len() > i + 1, "{line}: empty pv");
                return;
            }
            "string" => return,
            "currmove" => {
                game.parse_pdn_move(words[i + 1]).unwrap_or_else(|e| panic!("{line}: {e}"));
            }
            "ply" | "currmovenumber" | "nodes" | "neval" => {
                assert!(words[i + 1].parse::<u64>().is_ok(), "{line}: {token}");
            }
            "score" => assert!(words[i + 1].parse::<i32>().is_ok(), "{line}"),
            "time" => assert!(words[i + 1].parse::<f64>().is_ok_and(|t| t >= 0.0), "{line}"),
            other => panic!("{line}: unknown token {other}"),
        }
        i += 2;
    }
}

/// A GUI's whole session: handshake done; new game, levels, moves both ways, halt, positions, quit.
fn play_a_game(mut gui: Gui) {
    gui.send("capabilities");
    let (_, caps) = gui.until("capabilities ");
    for word in ["levelsblitzgame", "levelslonggame", "halt", "requestposition", "#kibitz eval"] {
        assert!(caps.contains(word), "{caps}");
    }
    gui.quiet("new");
    gui.quiet("opponents player-engine");
    gui.quiet("levelsfixeddepth 3");
    gui.check_position();
    // The GUI plays White with the first legal move, the engine answers as Black.
    for round in 0..6 {
        let Some(m) = gui.game.legal_moves().first().copied() else { break };
        let text = gui.game.guide_move(m);
        gui.play(&text);
        if gui.game.legal_moves().is_empty() {
            break;
        }
        let times = format!("{}.5 {}", round * 2, round);
        gui.go(&times, true);
        if round % 2 == 1 {
            gui.check_position();
        }
    }
    // Blitz with the clock from go, then a long game with three time controls. The clocks are short enough that
    // the hard limit (four times a move's share of what is left) stays well inside REPLY on a slow machine: with
    // 600 s for 40 moves the engine may rightly think for a minute.
    for level in ["levelsblitzgame 40 1", "levelslonggame 60 40 30 20 12"] {
        gui.quiet(level);
        let Some(m) = gui.game.legal_moves().first().copied() else { return };
        let text = gui.game.guide_move(m);
        gui.play(&text);
        gui.go("30 20.25", true);
    }
    // Infinite analysis stopped by halt 1: the engine plays its best move so far.
    gui.quiet("levelsinfiniteanalysis");
    let Some(m) = gui.game.legal_moves().first().copied() else { return };
    let text = gui.game.guide_move(m);
    gui.play(&text);
    gui.send("go 40 30");
    let (_, info) = gui.until("searchInfo");
    check_search_info(&gui.game, &info);
    gui.send("halt 1");
    gui.engine_move(true);
    gui.check_position();
    // A hint for the GUI's side is not played; halt 0 drops a search.
    gui.quiet("levelsfixeddepth 2");
    gui.go("", false);
    gui.quiet("levelsinfiniteanalysis");
    gui.quiet("go");
    gui.quiet("halt 0");
    gui.check_position();
    // Take back the engine's last move, look, and go forward again.
    gui.quiet("forward -1");
    let last = gui.moves.pop().expect("moves");
    gui.game.unmake();
    gui.check_position();
    gui.quiet("forward 1");
    let m = gui.game.parse_guide_move(&last).expect("legal");
    gui.game.make(m);
    gui.moves.push(last);
    gui.check_position();
    gui.check_game();
    gui.quit();
}

/// `kibitz-guide -guide -port 0` and the address it prints.
fn start_kibitz_guide(extra: &[&str]) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kibitz-guide"))
        .args(["-guide", "-port", "0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start kibitz-guide");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let line = rx.recv_timeout(REPLY).expect("kibitz-guide prints its address");
    let addr = line.strip_prefix("kibitz-guide listening on ").unwrap_or_else(|| panic!("{line}"));
    (child, addr.parse().expect("address"))
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + REPLY;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("the engine did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_whole_game_against_kibitz_guide() {
    let (mut child, addr) = start_kibitz_guide(&[]);
    let (gui, hello) = Gui::open(addr);
    assert!(hello.iter().any(|l| l.starts_with("option ") && l.contains("Hash_MB")), "{hello:?}");
    play_a_game(gui);
    assert!(wait_exit(&mut child).success(), "kibitz-guide exits after its session");
}

#[test]
fn a_whole_game_against_the_server_gateway() {
    let server = Server::start(&[]);
    let addr = server.guide_addr.expect("the gateway is on");
    let (gui, hello) = Gui::open(addr);
    assert!(!hello.iter().any(|l| l.contains("Hash_MB")), "sessions share the server's table: {hello:?}");
    play_a_game(gui);
    // The server goes on: another session, and the HTTP API.
    let (mut gui, _) = Gui::open(addr);
    gui.send("guide");
    gui.handshake();
    assert_eq!(server.get("/healthz").status, 200);
    gui.quit();
    server.stop();
}

#[test]
fn kibitz_guide_dials_a_listening_gui() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kibitz-guide"))
        .args(["-guide", "-connect", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start kibitz-guide");
    listener.set_nonblocking(true).expect("nonblocking");
    let deadline = Instant::now() + REPLY;
    let stream = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("no connection from kibitz-guide: {e}"),
        }
    };
    stream.set_nonblocking(false).expect("blocking");
    let mut gui = Gui::on(stream);
    gui.handshake();
    gui.quiet("levelsfixeddepth 2");
    gui.go("", true);
    gui.quit();
    assert!(wait_exit(&mut child).success());
}

/// 33-28? gives a man away for nothing (22x33).
fn blunder_game() -> (Draughts, String) {
    let start = Draughts::from_fen("W:W33,46,47,48:B3,4,5,22").expect("fen");
    let text = format!("{} 4 m 33 28 0 m 22 33 1 28 m 47 42 0 m 3 9 0", start.to_guide());
    (start, text)
}

#[test]
fn game_analysis_comments_the_blunder() {
    let server = Server::start(&[]);
    let (mut gui, _) = Gui::open(server.guide_addr.expect("gateway"));
    let (start, text) = blunder_game();
    gui.quiet(&format!("game {text}"));
    gui.quiet("enginemode 1 50");
    gui.quiet("levelsfixeddepth 6");
    gui.send("go 0 0");
    let (before, done) = gui.until("debug game analysis done");
    assert!(done.starts_with("debug game analysis done: 4 moves"), "{done}");
    let comments: Vec<&String> = before.iter().filter(|l| l.starts_with("setcomment ")).collect();
    let first = comments.first().unwrap_or_else(|| panic!("no setcomment: {before:?}"));
    // The comment names the move, its loss, the better move and the score change.
    let words: Vec<&str> = first.split(' ').collect();
    assert_eq!(&words[..4], ["setcomment", "1", "33-28", "loses"], "{first}");
    let loss: i32 = words[4].parse().expect("loss");
    assert!(loss >= 50, "{first}");
    let better = first.split("better ").nth(1).and_then(|t| t.split(',').next()).expect("better move");
    let better = start.parse_pdn_move(better).unwrap_or_else(|e| panic!("{first}: {e}"));
    assert_ne!(start.guide_move(better), "33 28 0");
    assert!(first.contains(" instead of "), "{first}");
    assert!(!comments.iter().any(|c| c.starts_with("setcomment 2 ")), "a forced capture: {comments:?}");
    // An annotation job of the same game, at the same depth and threshold, flags the same moves: both judge
    // through the one judgement.
    let guide_flags: Vec<u64> =
        comments.iter().map(|c| c.split(' ').nth(1).and_then(|n| n.parse().ok()).expect("move number")).collect();
    let job = server.post("/v1/annotations", &json!({ "game": "draughts", "text": text, "depth": 6, "threshold": 50 }));
    assert_eq!(job.status, 202, "{}", job.text());
    let id = job.json()["id"].as_str().expect("id").to_string();
    let deadline = Instant::now() + Duration::from_secs(120);
    let view = loop {
        let view = server.get(&format!("/v1/annotations/{id}")).json();
        if view["status"] != json!("queued") && view["status"] != json!("running") {
            break view;
        }
        assert!(Instant::now() < deadline, "the annotation job did not finish: {view}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(view["status"], json!("done"), "{view}");
    let api_flags: Vec<u64> = view["games"][0]["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .filter(|m| m["over_threshold"] == json!(true))
        .map(|m| m["ply"].as_u64().expect("ply"))
        .collect();
    assert_eq!(guide_flags, api_flags, "GUIDE {comments:?}, API {view}");
    // The game is unchanged and the session goes on.
    gui.start = start;
    gui.moves = ["33 28 0", "22 33 1 28", "47 42 0", "3 9 0"].map(String::from).to_vec();
    gui.check_game();
    gui.quit();
    server.stop();
}

#[test]
fn garbage_split_packets_and_two_sessions_at_once() {
    let server = Server::start(&["--guide-max-line", "1000"]);
    let addr = server.guide_addr.expect("gateway");
    let (mut a, _) = Gui::open(addr);
    let (mut b, _) = Gui::open(addr);
    // B searches while A sends rubbish.
    b.quiet("levelsfixeddepth 4");
    b.play("32 28 0");
    b.send("opponents player-engine");
    b.send("go 1 1");
    a.error("frobnicate", "unknown command `frobnicate`");
    a.send_raw(b"\xff\xfe\x80 binary\n");
    let out = a.sync();
    assert!(out.len() == 1 && out[0].starts_with("error unknown command"), "{out:?}");
    a.error("move 32 29 0", "illegal");
    a.error("position white eeee", "50 squares");
    a.error("levelsfixeddepth 1000", "out of range");
    a.error("go 1", "one number");
    let long = format!("ping {}\n", "y".repeat(5000));
    a.send_raw(long.as_bytes());
    let out = a.sync();
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].contains("longer than the limit of 1000 bytes"), "{out:?}");
    // One command split over packets, several in one, separated by any control character.
    a.send_raw(b"pi");
    std::thread::sleep(Duration::from_millis(50));
    a.send_raw(b"ng spl");
    std::thread::sleep(Duration::from_millis(50));
    a.send_raw(b"it\n");
    assert_eq!(a.next(), "pong split");
    a.send_raw(b"ping 1\x00ping 2\tping 3\r\nping 4\x1f");
    for n in 1..=4 {
        assert_eq!(a.next(), format!("pong {n}"));
    }
    // B's game is its own.
    b.engine_move(true);
    b.check_position();
    a.check_position();
    assert_eq!(a.game.to_guide(), Draughts::start().to_guide());
    a.quit();
    b.quit();
    server.stop();
}

#[test]
fn a_closed_connection_cancels_its_search_and_the_server_goes_on() {
    // One worker: if the abandoned infinite search kept running, the next search would never start.
    let server = Server::start(&["--workers", "1"]);
    let addr = server.guide_addr.expect("gateway");
    let (mut a, _) = Gui::open(addr);
    a.quiet("levelsinfiniteanalysis");
    a.send("go");
    a.until("searchInfo");
    a.stream.shutdown(Shutdown::Both).expect("close");
    drop(a);
    let (mut b, _) = Gui::open(addr);
    b.quiet("levelsfixeddepth 3");
    b.go("", true);
    b.check_position();
    b.quit();
    server.stop();
}

/// A game's move gets its answer while every worker is busy with another session's endless analysis: the
/// server's clock worker takes it, whether the game is on a clock, at a fixed time a move or to a fixed depth
/// (without one it would wait in the queue while its time ran out).
#[test]
fn a_games_move_is_answered_while_every_worker_is_busy() {
    let server = Server::start(&["--workers", "1", "--clock-workers", "1"]);
    let addr = server.guide_addr.expect("gateway");
    let (mut analyst, _) = Gui::open(addr);
    analyst.quiet("levelsinfiniteanalysis");
    analyst.send("go");
    analyst.until("searchInfo");
    let (mut player, _) = Gui::open(addr);
    player.quiet("levelsblitzgame 40 1");
    player.go("30 20.25", true);
    player.check_position();
    player.quiet("levelsfixedtime 0.2");
    player.go("", true);
    player.check_position();
    player.quiet("levelsfixeddepth 3");
    player.go("", true);
    player.check_position();
    // The analysis was never stopped: it still holds the one worker.
    let metrics = server.get("/metrics").text();
    assert!(metrics.lines().any(|l| l == "kibitz_pool_busy_workers 1"), "{metrics}");
    analyst.send("halt 0");
    player.quit();
    analyst.quit();
    server.stop();
}

#[test]
fn the_session_limit_is_said_in_error() {
    let server = Server::start(&["--guide-max-sessions", "1"]);
    let addr = server.guide_addr.expect("gateway");
    let (mut a, _) = Gui::open(addr);
    let mut refused = Gui::connect(addr);
    let got = refused.closed();
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with("error too many GUIDE sessions") && got[0].contains("allows 1"), "{got:?}");
    a.quiet("levelsfixeddepth 2");
    a.quit();
    // Its place is free again (once the server has seen the session end).
    let deadline = Instant::now() + REPLY;
    let mut b = loop {
        let mut b = Gui::connect(addr);
        let first = b.next();
        if first.starts_with("name kibitz ") {
            break b;
        }
        assert!(first.starts_with("error too many") && Instant::now() < deadline, "{first}");
        std::thread::sleep(Duration::from_millis(50));
    };
    b.until("engineok");
    b.quit();
    server.stop();
}

#[test]
fn an_idle_session_is_closed_with_a_reason_but_not_while_searching() {
    let server = Server::start(&["--guide-idle-s", "1"]);
    let mut a = Gui::connect(server.guide_addr.expect("gateway"));
    // Sent at once: a search longer than the idle limit.
    a.send("levelsfixedtime 2.5\ngo");
    a.handshake();
    a.engine_move(true);
    let got = a.closed();
    assert!(got.last().is_some_and(|l| l.starts_with("error no command for 1 seconds")), "{got:?}");
    assert_eq!(server.get("/healthz").status, 200);
    server.stop();
}

#[test]
fn a_session_sending_bytes_but_no_command_is_still_closed_when_idle() {
    // One GUI dribbles a byte of an unfinished line every 200 ms, another sends separators alone: neither is a
    // command, so both are closed at the idle limit (they used to hold their sessions, and the gateway's
    // places, for as long as they kept it up).
    let server = Server::start(&["--guide-idle-s", "1"]);
    let addr = server.guide_addr.expect("gateway");
    let mut dribbler = Gui::connect(addr);
    let mut blank = Gui::connect(addr);
    dribbler.handshake();
    blank.handshake();
    let mut writers = Vec::new();
    for (gui, bytes) in [(&dribbler, &b"x"[..]), (&blank, &b"\n"[..])] {
        let mut stream = gui.stream.try_clone().expect("clone");
        writers.push(std::thread::spawn(move || {
            // Until the engine closes the connection (a write then fails), for 40 s at most: longer than
            // `closed` waits.
            for _ in 0..200 {
                if stream.write_all(bytes).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        }));
    }
    for gui in [&mut dribbler, &mut blank] {
        let got = gui.closed();
        assert!(got.last().is_some_and(|l| l.starts_with("error no command for 1 seconds")), "{got:?}");
    }
    for writer in writers {
        writer.join().expect("the writer");
    }
    assert_eq!(server.get("/healthz").status, 200);
    server.stop();
}

#[test]
fn a_graceful_shutdown_closes_the_sessions() {
    let server = Server::start(&[]);
    let (mut gui, _) = Gui::open(server.guide_addr.expect("gateway"));
    gui.quiet("levelsinfiniteanalysis");
    gui.send("go");
    gui.until("searchInfo");
    server.stop();
    gui.closed();
}

#[test]
fn no_guide_opens_no_gateway() {
    let server = Server::start(&["--no-guide"]);
    assert_eq!(server.guide_addr, None);
    assert_eq!(server.get("/healthz").status, 200);
    server.stop();
}

#[test]
fn a_busy_port_is_a_clear_startup_error() {
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let dir = common::TempDir::new("guide-busy");
    let out = Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(["serve", "--http", "127.0.0.1:0", "--guide", &addr, "--workers", "1", "--hash-mb", "1", "--db"])
        .arg(dir.db())
        .env("KIBITZ_LOG", "warn")
        .env_remove("KIBITZ_NO_GUIDE")
        .stdin(Stdio::null())
        .output()
        .expect("run kibitz serve");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot open the GUIDE gateway") && stderr.contains("--guide"), "{stderr}");
    assert!(stderr.contains("--no-guide"), "{stderr}");
}
