//! DXP through the real `kibitz dxp`: two processes, follower and initiator, play a whole game over TCP; and a
//! DXP peer scripted here checks the message layouts against a follower, with a bad message in between.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kibitz::game::Game;
use kibitz::games::draughts::Draughts;

/// How long a whole game may take (a minute a side on a possibly loaded machine).
const GAME: Duration = Duration::from_secs(600);

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start a follower; its process, the address it listens on and its stdout lines.
fn follower() -> (Proc, String, mpsc::Receiver<String>) {
    follower_idle(300)
}

fn follower_idle(idle_s: u32) -> (Proc, String, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(["dxp", "--listen", "127.0.0.1:0", "--idle-s", &idle_s.to_string(), "--name", "follower"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the follower");
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
    let first = rx.recv_timeout(Duration::from_secs(60)).expect("the follower says where it listens");
    let addr = first.strip_prefix("kibitz dxp listening on ").unwrap_or_else(|| panic!("{first}")).to_string();
    (Proc(child), addr, rx)
}

/// Every line left of an exited process's stdout: read until its reader thread meets the end (the lines may
/// still be in the pipe when the process is seen to exit).
fn rest(lines: &mpsc::Receiver<String>) -> Vec<String> {
    std::iter::from_fn(|| lines.recv_timeout(Duration::from_secs(30)).ok()).collect()
}

fn wait_exit(p: &mut Proc, timeout: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(Some(status)) = p.0.try_wait() {
            return status;
        }
        assert!(Instant::now() < deadline, "the process did not exit within {timeout:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn two_kibitz_processes_play_a_game_to_its_end() {
    let (mut follower, addr, lines) = follower();
    let initiator = Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(["dxp", "--connect", &addr, "--minutes", "1", "--moves", "0", "--color", "black", "--idle-s", "300"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the initiator");
    let mut initiator = Proc(initiator);
    let status = wait_exit(&mut initiator, GAME);
    assert!(status.success(), "initiator: {status:?}");
    let mut out = String::new();
    initiator.0.stdout.take().expect("stdout").read_to_string(&mut out).expect("read");
    let status = wait_exit(&mut follower, Duration::from_secs(60));
    assert!(status.success(), "follower: {status:?}");
    let theirs: Vec<String> = rest(&lines);
    eprintln!("initiator:\n{out}\nfollower:\n{}", theirs.join("\n"));
    let mine = out.lines().find(|l| l.starts_with("game 1: ")).expect("the initiator's game line");
    let other = theirs.iter().find(|l| l.starts_with("game 1: ")).expect("the follower's game line");
    assert!(mine.starts_with("game 1: kibitz black, "), "{mine}");
    assert!(other.starts_with("game 1: kibitz white, "), "{other}");
    // The two sides agree on the result.
    let result = |l: &str| l.split(", ").nth(1).unwrap_or("").split(' ').next().unwrap_or("").to_string();
    let pair = (result(mine), result(other));
    assert!(
        matches!((pair.0.as_str(), pair.1.as_str()), ("won", "lost") | ("lost", "won") | ("draw", "draw")),
        "{mine} / {other}"
    );
    assert!(out.contains("kibitz dxp: 1 games played"), "{out}");
}

/// Read one NUL-terminated message.
fn read_message(s: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match s.read(&mut byte) {
            Ok(1) if byte[0] == 0 => return String::from_utf8_lossy(&out).into_owned(),
            Ok(1) => out.push(byte[0]),
            other => panic!("the connection ended or failed ({other:?}) after {:?}", String::from_utf8_lossy(&out)),
        }
    }
}

fn send(s: &mut TcpStream, message: &str) {
    s.write_all(message.as_bytes()).expect("write");
    s.write_all(&[0]).expect("write");
}

#[test]
fn scripted_peer_checks_the_layouts() {
    let (mut follower, addr, _lines) = follower();
    let mut s = TcpStream::connect(&addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(120))).expect("timeout");
    // GAMEREQ: version 01, our name, the follower plays white, 2 minutes for 50 moves, the start position.
    send(&mut s, &format!("R01{:<32}W002050A", "script"));
    let acc = read_message(&mut s);
    assert_eq!(acc.len(), 34, "{acc:?}");
    assert_eq!(&acc[..1], "A");
    assert_eq!(acc[1..33].trim_end(), "follower");
    assert_eq!(&acc[33..], "0");
    // The follower is White and moves first: MOVE, time(4) from(2) to(2) count(2).
    let m = read_message(&mut s);
    assert_eq!((m.len(), &m[..1], &m[9..11]), (11, "M", "00"), "{m:?}");
    let mut g = Draughts::start();
    let text = format!("{}-{}", m[5..7].trim_start_matches('0'), m[7..9].trim_start_matches('0'));
    let mv = g.parse_hub_move(&text).unwrap_or_else(|e| panic!("{m:?}: {e}"));
    g.make(mv);
    // A message that means nothing: an error as a CHAT, and the game goes on.
    send(&mut s, "Xjunk");
    let c = read_message(&mut s);
    assert!(c.starts_with("Ckibitz error: unknown message `Xjunk`"), "{c:?}");
    // A takeback request is declined.
    send(&mut s, "B001W");
    assert_eq!(read_message(&mut s), "K1");
    // An illegal move for Black: the game cannot go on.
    send(&mut s, "M0001464100");
    let c = read_message(&mut s);
    assert!(c.starts_with("Ckibitz error: move 46-41"), "{c:?}");
    assert_eq!(read_message(&mut s), "E01");
    // Our GAMEEND, no more games: the follower exits.
    send(&mut s, "E01");
    let status = wait_exit(&mut follower, Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
}

#[test]
fn every_gamereq_is_answered_with_a_gameacc() {
    let (mut follower, addr, _lines) = follower();
    let mut s = TcpStream::connect(&addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(120))).expect("timeout");
    let name = format!("{:<32}", "script");
    // Another protocol version: why, then GAMEACC 1.
    send(&mut s, &format!("R02{name}Z005075A"));
    assert!(read_message(&mut s).starts_with("Ckibitz error: DXP version `02`"));
    assert_eq!(read_message(&mut s), format!("A{:<32}1", "follower"));
    // A position that cannot be read, a colour that is none, a time that is no number: why, then GAMEACC 2 (this
    // game cannot be played; another is welcome).
    let bad_squares = format!("R01{name}Z005075BW{}", "x".repeat(50));
    let bad_colour = format!("R01{name}Q005075A");
    let bad_time = format!("R01{name}Z0x5075A");
    // The protocol's own case for 2: no legal move in the starting position (Black to move, without a piece).
    let no_move = format!("R01{name}Z005075BZ{}w{}", "e".repeat(45), "e".repeat(4));
    for (request, why) in [
        (bad_squares.as_str(), "GAMEREQ square `x` is not e, w, z, W or Z"),
        (bad_colour.as_str(), "follower colour `Q`"),
        (bad_time.as_str(), "the game time `0x5`"),
        (no_move.as_str(), "the starting position has no legal move"),
    ] {
        send(&mut s, request);
        let c = read_message(&mut s);
        assert!(c.starts_with(&format!("Ckibitz error: {why}")), "{c:?}");
        assert_eq!(read_message(&mut s), format!("A{:<32}2", "follower"));
    }
    // A byte outside ASCII (a Latin-1 name) is named where it is, not read past.
    let mut latin = b"R01J".to_vec();
    latin.push(0xF6);
    latin.extend_from_slice(format!("{:<30}Z005075A", "ran").as_bytes());
    latin.push(0);
    s.write_all(&latin).expect("write");
    let c = read_message(&mut s);
    assert!(c.starts_with("Ckibitz error: a DXP message is ASCII") && c.contains("position 5"), "{c:?}");
    assert!(c.len() <= 127, "a CHAT is at most 127 characters: {c:?}");
    assert_eq!(read_message(&mut s), format!("A{:<32}2", "follower"));
    // A good one is accepted; another GAMEREQ during the game is declined with 2, not 3 (no game at all).
    send(&mut s, &format!("R01{name}Z005075A"));
    assert_eq!(read_message(&mut s), format!("A{:<32}0", "follower"));
    send(&mut s, &format!("R01{name}Z005075A"));
    assert!(read_message(&mut s).starts_with("Ckibitz error: GAMEREQ during a game"));
    assert_eq!(read_message(&mut s), format!("A{:<32}2", "follower"));
    send(&mut s, "E01");
    assert_eq!(read_message(&mut s), "E00");
    let status = wait_exit(&mut follower, Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_peer_thinking_longer_than_the_idle_period_is_waited_for_within_its_game_time() {
    // Two seconds of silence end the session between games, but in a game of a minute a side the peer may think
    // longer than that on its move.
    let (mut follower, addr, _lines) = follower_idle(2);
    let mut s = TcpStream::connect(&addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(120))).expect("timeout");
    send(&mut s, &format!("R01{:<32}Z001000A", "script"));
    assert_eq!(read_message(&mut s), format!("A{:<32}0", "follower"));
    std::thread::sleep(Duration::from_secs(4));
    send(&mut s, "M0004322800");
    let m = read_message(&mut s);
    assert!(m.starts_with('M'), "kibitz answers the late move: {m:?}");
    send(&mut s, "E01");
    assert_eq!(read_message(&mut s), "E00");
    let status = wait_exit(&mut follower, Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_stray_gameend_between_games_proposes_no_extra_game() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let mut initiator = Proc(
        Command::new(env!("CARGO_BIN_EXE_kibitz"))
            .args(["dxp", "--connect", &addr, "--games", "3", "--minutes", "1", "--idle-s", "300"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the initiator"),
    );
    let (mut s, _) = listener.accept().expect("the initiator connects");
    s.set_read_timeout(Some(Duration::from_secs(120))).expect("timeout");
    let accept = format!("A{:<32}0", "script");
    let r = read_message(&mut s);
    assert!(r.starts_with("R01") && r.ends_with('A'), "{r:?}");
    send(&mut s, &accept);
    assert!(read_message(&mut s).starts_with('M'), "kibitz plays White in the first game");
    // The peer gives the game up: kibitz acknowledges and proposes the second game.
    send(&mut s, "E10");
    assert_eq!(read_message(&mut s), "E00");
    assert!(read_message(&mut s).starts_with("R01"));
    // A second GAMEEND that acknowledges nothing proposes nothing: the next message kibitz sends is the answer
    // to the takeback request that follows it.
    send(&mut s, "E00");
    send(&mut s, "B001W");
    assert_eq!(read_message(&mut s), "K1");
    send(&mut s, "E01");
    let status = wait_exit(&mut initiator, Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
}

/// A game in which kibitz (the follower, White) takes the peer's last piece with its one legal move: the follower,
/// the connection after that move, and the follower's output lines.
fn last_piece_taken() -> (Proc, TcpStream, mpsc::Receiver<String>) {
    // White (kibitz) to move, a man on 28 against Black's on 23: the one legal move takes it and wins.
    let g = Draughts::parse_position("W:W28:B23", None).expect("a position");
    let legal = g.legal_moves();
    assert_eq!(legal.len(), 1);
    let mut after = g.clone();
    after.make(legal[0]);
    assert!(after.outcome().is_some(), "the capture ends the game");
    let mut squares = vec!['e'; 50];
    squares[28 - 1] = 'w';
    squares[23 - 1] = 'z';
    let squares: String = squares.into_iter().collect();

    let (follower, addr, lines) = follower();
    let mut s = TcpStream::connect(&addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(120))).expect("timeout");
    send(&mut s, &format!("R01{:<32}W001000BW{squares}", "script"));
    assert_eq!(read_message(&mut s), format!("A{:<32}0", "follower"));
    let m = read_message(&mut s);
    assert_eq!(&m[5..], "28190123", "the capture 28x19 taking 23: {m:?}");
    (follower, s, lines)
}

/// The follower's one game line, once it has exited.
fn the_game_line(follower: &mut Proc, lines: &mpsc::Receiver<String>) -> String {
    let status = wait_exit(follower, Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
    let result: Vec<String> = rest(lines).into_iter().filter(|l| l.starts_with("game 1: ")).collect();
    assert_eq!(result.len(), 1, "{result:?}");
    result[0].clone()
}

/// The protocol lets a program send the GAMEEND that ends a game only on its turn, in place of a move: after
/// kibitz's move takes the peer's last piece, kibitz sends no GAMEEND of its own but waits for the peer's, then
/// acknowledges it and records the game as the rules ended it.
#[test]
fn after_its_game_ending_move_kibitz_waits_for_the_peers_gameend() {
    let (mut follower, mut s, lines) = last_piece_taken();
    // No GAMEEND follows the move: the next message kibitz sends answers the takeback request sent now.
    send(&mut s, "B001Z");
    assert_eq!(read_message(&mut s), "K1");
    // The peer, on its turn without a move, ends the game and wants no more: kibitz acknowledges.
    send(&mut s, "E11");
    assert_eq!(read_message(&mut s), "E00");
    let line = the_game_line(&mut follower, &lines);
    assert!(line.starts_with("game 1: kibitz white, won ("), "{line}");
}

/// A peer that moves on after kibitz's game-ending move instead of ending the game: the turn is kibitz's again,
/// so kibitz sends its GAMEEND then (won, another game welcome) and the game counts as the rules ended it.
#[test]
fn a_peer_that_moves_on_after_the_game_ended_gets_kibitzs_gameend() {
    let (mut follower, mut s, lines) = last_piece_taken();
    send(&mut s, "M0001191400");
    assert_eq!(read_message(&mut s), "E30");
    send(&mut s, "E01");
    let line = the_game_line(&mut follower, &lines);
    assert!(line.starts_with("game 1: kibitz white, won ("), "{line}");
}

#[test]
fn a_game_cut_off_by_the_peer_is_reported() {
    // Found by an audit: the follower said `0 games played` and only its log knew of the game.
    let (mut follower, addr, lines) = follower();
    let mut s = TcpStream::connect(&addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(120))).expect("timeout");
    // The follower plays black: the script moves first, then leaves without a word.
    send(&mut s, &format!("R01{:<32}Z005075A", "script"));
    assert_eq!(read_message(&mut s), format!("A{:<32}0", "follower"));
    drop(s);
    let status = wait_exit(&mut follower, Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
    let out = rest(&lines);
    assert!(out.iter().any(|l| l == "game 1: kibitz black, abandoned (the opponent closed the connection)"), "{out:?}");
    assert!(out.iter().any(|l| l == "kibitz dxp: 1 games played"), "{out:?}");
}
