//! `KIBITZ_CHESS_NET`, through the real executables: a copy of the built-in network searches exactly as the
//! built-in one and shares its cached results; another network changes the scores and keeps its results apart;
//! a file that is missing, damaged or of another width stops `kibitz` and `kibitz-uci` before they start, with
//! the variable, the path and what is wrong, and a front end that plays no chess is not stopped by it.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::TempDir;
use kibitz::games::chess::net;

const BUILT_IN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/games/chess/net.bin");

/// `kibitz bench chess --depth 2` with `KIBITZ_CHESS_NET` set to `net` (unset for `None`).
fn bench(net: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kibitz"));
    cmd.args(["bench", "chess", "--depth", "2", "--hash-mb", "1"]).env("KIBITZ_LOG", "warn");
    match net {
        Some(path) => cmd.env("KIBITZ_CHESS_NET", path),
        None => cmd.env_remove("KIBITZ_CHESS_NET"),
    };
    cmd.output().expect("kibitz runs")
}

/// Each position's line of a bench, without its timing: nodes, best move and score.
fn searched(out: &Output) -> Vec<String> {
    assert!(out.status.success(), "bench failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout.clone()).expect("UTF-8");
    let lines: Vec<String> = text
        .lines()
        .filter(|l| l.contains(" position "))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let at = |key: &str| words[words.iter().position(|w| *w == key).expect(key) + 1];
            format!("{} {} {} {}", at("position"), at("nodes"), at("best"), at("score"))
        })
        .collect();
    assert_eq!(lines.len(), 10, "ten bench positions in {text}");
    lines
}

/// The bench's stderr when it must fail: exit status 1 and nothing searched.
fn refused(net: &Path) -> String {
    let out = bench(Some(net));
    assert_eq!(out.status.code(), Some(1), "kibitz must stop: {out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("position"), "nothing searched: {out:?}");
    String::from_utf8(out.stderr).expect("UTF-8")
}

/// The built-in network without output weights: it adds nothing to the hand-written evaluation it corrects.
fn no_output_network() -> Vec<u8> {
    let (mut float, scale, residual) = net::read_float(&std::fs::read(BUILT_IN).expect("net.bin")).expect("loads");
    float.w2.iter_mut().for_each(|w| *w = 0.0);
    float.b2.iter_mut().for_each(|b| *b = 0.0);
    net::write(&float, scale, residual).expect("writes")
}

#[test]
fn a_copy_of_the_built_in_network_searches_as_the_built_in_one() {
    let dir = TempDir::new("chess-net-copy");
    let copy = dir.path().join("copy.bin");
    std::fs::copy(BUILT_IN, &copy).expect("copy");
    assert_eq!(searched(&bench(Some(&copy))), searched(&bench(None)));
}

#[test]
fn another_network_changes_the_scores() {
    let dir = TempDir::new("chess-net-other");
    let other = dir.path().join("other.bin");
    std::fs::write(&other, no_output_network()).expect("write");
    let (built_in, changed) = (searched(&bench(None)), searched(&bench(Some(&other))));
    let differ = built_in.iter().zip(&changed).filter(|(a, b)| a != b).count();
    assert!(differ >= 5, "most positions search differently: {built_in:?} against {changed:?}");
}

#[test]
fn a_bad_network_file_stops_kibitz_with_the_reason() {
    let dir = TempDir::new("chess-net-bad");
    let missing = dir.path().join("missing.bin");
    let err = refused(&missing);
    assert!(err.contains(&format!("KIBITZ_CHESS_NET={}", missing.display())), "{err}");

    let garbage = dir.path().join("garbage.bin");
    std::fs::write(&garbage, b"not a network at all").expect("write");
    let err = refused(&garbage);
    assert!(err.contains(&format!("KIBITZ_CHESS_NET={}", garbage.display())), "{err}");

    let bytes = std::fs::read(BUILT_IN).expect("net.bin");
    let cut = dir.path().join("cut.bin");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    let err = refused(&cut);
    assert!(err.contains("cut.bin") && err.contains("weights"), "names the part that is missing: {err}");

    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0; 3]);
    let long = dir.path().join("long.bin");
    std::fs::write(&long, &longer).expect("write");
    let err = refused(&long);
    assert!(err.contains("3 bytes after the network's end"), "{err}");

    // A network of another width, written by the trainer, names both widths.
    let (float, scale, residual) = net::read_float(&bytes).expect("loads");
    let hidden = float.hidden / 2;
    let narrow = kibitz::tuning::net::FloatNet {
        inputs: float.inputs,
        hidden,
        w1: float.w1.chunks(float.hidden).flat_map(|row| row[..hidden].to_vec()).collect(),
        b1: float.b1[..hidden].to_vec(),
        w2: float.w2.chunks(float.hidden).flat_map(|half| half[..hidden].to_vec()).collect(),
        b2: float.b2.clone(),
    };
    let path = dir.path().join("narrow.bin");
    std::fs::write(&path, net::write(&narrow, scale, residual).expect("writes")).expect("write");
    let err = refused(&path);
    assert!(err.contains(&format!("{hidden} hidden values")) && err.contains(&format!("{}", float.hidden)), "{err}");
}

#[test]
fn kibitz_uci_stops_on_a_bad_network_and_kibitz_uhp_does_not_care() {
    let dir = TempDir::new("chess-net-uci");
    let missing = dir.path().join("missing.bin");
    let run = |exe: &str, input: &str| {
        let mut child = Command::new(exe)
            .env("KIBITZ_CHESS_NET", &missing)
            .env("KIBITZ_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starts");
        use std::io::Write;
        // The executable may exit before reading: a failed write is not this test's concern.
        let _ = child.stdin.take().expect("stdin").write_all(input.as_bytes());
        child.wait_with_output().expect("exits")
    };
    let out = run(env!("CARGO_BIN_EXE_kibitz-uci"), "uci\nquit\n");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("uciok"), "no session: {out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("kibitz-uci: ") && err.contains(&format!("KIBITZ_CHESS_NET={}", missing.display())),
        "{err}"
    );

    let out = run(env!("CARGO_BIN_EXE_kibitz-uhp"), "info\nexit\n");
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("id kibitz"), "{out:?}");
}

#[test]
fn the_cache_keeps_each_networks_results_apart() {
    let dir = TempDir::new("chess-net-cache");
    let copy = dir.path().join("copy.bin");
    std::fs::copy(BUILT_IN, &copy).expect("copy");
    let other = dir.path().join("other.bin");
    std::fs::write(&other, no_output_network()).expect("write");
    let request = serde_json::json!({ "game": "chess", "depth": 4 });
    let cached = |server: &common::Server| server.post_ok("/v1/analysis", &request)["cached"].clone();
    let with_net =
        |path: &Path| common::Server::start_with_env(&dir, &[], &[("KIBITZ_CHESS_NET", path.to_str().expect("UTF-8"))]);

    let built_in = common::Server::start_on(&dir, &[]);
    assert_eq!(cached(&built_in), false);
    assert_eq!(cached(&built_in), true);
    built_in.stop();
    // The same bytes from a file are the same network: its results are shared.
    let same = with_net(&copy);
    assert_eq!(cached(&same), true, "a copy of the built-in network finds the built-in one's result");
    same.stop();
    // Another network does not answer with the built-in one's result, nor the built-in one with its.
    let changed = with_net(&other);
    assert_eq!(cached(&changed), false);
    assert_eq!(cached(&changed), true);
    changed.stop();
    let built_in = common::Server::start_on(&dir, &[]);
    assert_eq!(cached(&built_in), true, "the built-in network's result is still stored, and still its own");
    built_in.stop();
}
