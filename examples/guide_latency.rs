//! How long GUIDE games wait for their moves while HTTP analyses keep the server's workers busy.
//!
//!     cargo run --release --example guide_latency -- GUIDE_ADDR HTTP_ADDR [players] [moves] [seconds] [analysts] [analysis_ms]
//!
//! Defaults: 127.0.0.1:27533 127.0.0.1:8080, 2 players, 20 moves each, `levelsfixedtime 0.2`, 4 analysts,
//! 2000 ms. Each analyst posts international draughts analyses of `analysis_ms` (`cache: refresh`, a move time
//! of its own so that no two share a search) one after another for as long as the games last; each player opens
//! a GUIDE session at `levelsfixedtime SECONDS` and sends `go` `moves` times (kibitz plays both sides; a
//! finished game starts again with `new`). Prints, over every move, the time from `go` to `move`, how much of
//! it was beyond the fixed time and the nodes searched (the last `searchInfo` before the move), and how many
//! analyses were answered and refused. More than four players
//! need a server started with `--guide-max-sessions-per-address 0` (or a larger limit).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One `POST /v1/analysis`; its HTTP status.
fn post_analysis(addr: &str, body: &str) -> u16 {
    let Ok(mut s) = TcpStream::connect(addr) else { return 0 };
    s.set_read_timeout(Some(Duration::from_secs(120))).expect("timeout");
    let request = format!(
        "POST /v1/analysis HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    if s.write_all(request.as_bytes()).is_err() {
        return 0;
    }
    let mut raw = String::new();
    let _ = s.read_to_string(&mut raw);
    raw.split_whitespace().nth(1).and_then(|code| code.parse().ok()).unwrap_or(0)
}

/// A GUIDE session's lines (the protocol ends lines with CR LF or LF).
struct Session {
    out: TcpStream,
    lines: BufReader<TcpStream>,
}

impl Session {
    fn open(addr: &str) -> Session {
        let stream = TcpStream::connect(addr).expect("connect to the GUIDE gateway");
        stream.set_nodelay(true).expect("nodelay");
        stream.set_read_timeout(Some(Duration::from_secs(300))).expect("timeout");
        let mut session = Session { out: stream.try_clone().expect("clone"), lines: BufReader::new(stream) };
        let (hello, _) = session.until("engineok");
        if hello.starts_with("error") {
            // Refused: too many sessions, say (run the server with `--guide-max-sessions-per-address 0`).
            eprintln!("the GUIDE gateway refused a session: {hello}");
            std::process::exit(1);
        }
        session
    }

    fn send(&mut self, line: &str) {
        self.out.write_all(format!("{line}\n").as_bytes()).expect("write");
    }

    /// Read lines up to one starting with `prefix` or `error`: that line, and the most nodes a `searchInfo`
    /// before it reported.
    fn until(&mut self, prefix: &str) -> (String, u64) {
        let mut nodes = 0;
        loop {
            let mut line = String::new();
            let n = self.lines.read_line(&mut line).expect("read");
            assert!(n > 0, "the gateway closed the session");
            let line = line.trim_end();
            if line.starts_with(prefix) || line.starts_with("error") {
                return (line.to_string(), nodes);
            }
            let words: Vec<&str> = line.split(' ').collect();
            if words[0] == "searchInfo"
                && let Some(at) = words.iter().position(|&w| w == "nodes")
                && let Some(count) = words.get(at + 1).and_then(|w| w.parse().ok())
            {
                nodes = nodes.max(count);
            }
        }
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn summary(name: &str, mut v: Vec<f64>, unit: &str) {
    v.sort_by(|a, b| a.total_cmp(b));
    println!(
        "{name}: moves {} min {:.0} {unit} p10 {:.0} {unit} median {:.0} {unit} p90 {:.0} {unit} max {:.0} {unit}",
        v.len(),
        v[0],
        percentile(&v, 0.1),
        percentile(&v, 0.5),
        percentile(&v, 0.9),
        v[v.len() - 1]
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.to_string());
    let guide = arg(1, "127.0.0.1:27533");
    let http = arg(2, "127.0.0.1:8080");
    let players: usize = arg(3, "2").parse().expect("players");
    let moves: usize = arg(4, "20").parse().expect("moves");
    let seconds: f64 = arg(5, "0.2").parse().expect("seconds");
    let analysts: usize = arg(6, "4").parse().expect("analysts");
    let analysis_ms: u64 = arg(7, "2000").parse().expect("analysis_ms");

    let over = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let load: Vec<_> = (0..analysts)
        .map(|a| {
            let (http, over, answered, refused) =
                (http.clone(), Arc::clone(&over), Arc::clone(&answered), Arc::clone(&refused));
            std::thread::spawn(move || {
                let body =
                    format!(r#"{{"game":"draughts","movetime_ms":{},"cache":"refresh"}}"#, analysis_ms + a as u64);
                while !over.load(Ordering::Relaxed) {
                    match post_analysis(&http, &body) {
                        200 => answered.fetch_add(1, Ordering::Relaxed),
                        _ => {
                            std::thread::sleep(Duration::from_millis(50));
                            refused.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                }
            })
        })
        .collect();
    // The analyses are under way before the first game's move is asked for.
    std::thread::sleep(Duration::from_millis(500));
    let games: Vec<_> = (0..players)
        .map(|_| {
            let guide = guide.clone();
            std::thread::spawn(move || {
                let mut session = Session::open(&guide);
                session.send(&format!("levelsfixedtime {seconds}"));
                let mut times = Vec::with_capacity(moves);
                let mut searched = Vec::with_capacity(moves);
                while times.len() < moves {
                    let asked = Instant::now();
                    session.send("go");
                    let (line, nodes) = session.until("move ");
                    if line.starts_with("error") {
                        // The game is over: a new one.
                        session.send("new");
                        continue;
                    }
                    times.push(asked.elapsed().as_secs_f64() * 1000.0);
                    searched.push(nodes as f64);
                }
                session.send("quit");
                (times, searched)
            })
        })
        .collect();
    let (mut times, mut searched) = (Vec::new(), Vec::new());
    for game in games {
        let (t, n) = game.join().expect("a player");
        times.extend(t);
        searched.extend(n);
    }
    over.store(true, Ordering::Relaxed);
    for t in load {
        t.join().expect("an analyst");
    }
    let late: Vec<f64> = times.iter().map(|t| t - seconds * 1000.0).collect();
    summary("go -> move", times, "ms");
    summary("beyond the fixed time", late, "ms");
    summary("nodes a move (the last searchInfo's)", searched, "nodes");
    println!(
        "analyses answered {} refused or failed {}",
        answered.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed)
    );
}
