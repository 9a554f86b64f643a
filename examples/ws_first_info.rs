//! Time from sending `analyse` on the WebSocket to the first `info` message, and to the answer.
//!
//!     cargo run --release --example ws_first_info -- 127.0.0.1:8080 [runs] [game] [depth]
//!
//! Each run analyses a different position (the start position after a different sequence of legal moves,
//! taken from `/v1/moves`) with `cache: refresh`, so every run is a real search. Prints min, median, p90, p99
//! and max in milliseconds.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::{self, Message};

fn post(addr: &str, path: &str, body: &Value) -> Value {
    let body = body.to_string();
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    let mut raw = String::new();
    s.read_to_string(&mut raw).expect("read");
    let (_, text) = raw.split_once("\r\n\r\n").expect("response");
    serde_json::from_str(text).expect("JSON")
}

/// Positions reached by walking the legal moves in a fixed pseudo-random order.
fn positions(addr: &str, game: &str, count: usize) -> Vec<Vec<String>> {
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut out = Vec::new();
    while out.len() < count {
        let plies = 2 + (next() % 8) as usize;
        let mut moves: Vec<String> = Vec::new();
        for _ in 0..plies {
            let r = post(addr, "/v1/moves", &json!({ "game": game, "moves": moves }));
            let legal = r["moves"].as_array().cloned().unwrap_or_default();
            if legal.is_empty() {
                break;
            }
            let pick = &legal[(next() % legal.len() as u64) as usize]["move"];
            moves.push(pick.as_str().expect("move").to_string());
        }
        out.push(moves);
    }
    out
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn summary(name: &str, mut v: Vec<f64>) {
    v.sort_by(|a, b| a.total_cmp(b));
    println!(
        "{name}: runs {} min {:.2} ms median {:.2} ms p90 {:.2} ms p99 {:.2} ms max {:.2} ms",
        v.len(),
        v[0],
        percentile(&v, 0.5),
        percentile(&v, 0.9),
        percentile(&v, 0.99),
        v[v.len() - 1]
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let addr = args.get(1).cloned().unwrap_or_else(|| "127.0.0.1:8080".into());
    let runs: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let game = args.get(3).cloned().unwrap_or_else(|| "checkers".into());
    let depth: u32 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(12);

    let list = positions(&addr, &game, runs);
    let stream = TcpStream::connect(&addr).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    let (mut ws, _) = tungstenite::client(format!("ws://{addr}/v1/stream"), stream).expect("handshake");
    let mut first_info = Vec::new();
    let mut answer = Vec::new();
    for (i, moves) in list.iter().enumerate() {
        let id = format!("r{i}");
        let message = json!({ "type": "analyse", "id": id, "game": game, "moves": moves, "depth": depth,
            "cache": "refresh" });
        let sent = Instant::now();
        ws.send(Message::text(message.to_string())).expect("send");
        let mut seen_info = false;
        loop {
            let Message::Text(text) = ws.read().expect("read") else { continue };
            let v: Value = serde_json::from_str(text.as_str()).expect("JSON");
            if v["id"] != json!(id) {
                continue;
            }
            match v["type"].as_str() {
                Some("info") if !seen_info => {
                    seen_info = true;
                    first_info.push(sent.elapsed().as_secs_f64() * 1000.0);
                }
                Some("bestmove") => {
                    answer.push(sent.elapsed().as_secs_f64() * 1000.0);
                    break;
                }
                Some("error") => panic!("{v}"),
                _ => {}
            }
        }
    }
    summary("analyse -> first info", first_info);
    summary(&format!("analyse -> bestmove (depth {depth})"), answer);
}
