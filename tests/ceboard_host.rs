//! The CEBoard engine interface through its C ABI: `tests/ceboard/host.cpp`, built with the system `g++`,
//! loads `libkibitz.so` with `dlopen`, plays a whole engine-against-engine game through `IEngine` and
//! `ICEBoard20`, analyses with feedback, uses MoveNow, feeds bad input and checks every callback. This test
//! then replays the game's moves with the library's own rules. A second run, with `KIBITZ_CHESS_NET` naming a
//! file that does not exist, sees the engine report it through `FatalError` and stop.
//!
//! Finding the library: cargo builds the package's library with all its crate types (rlib and cdylib)
//! before any integration test, into `target/<profile>/deps/` (and uplifts it to `target/<profile>/`); this
//! test's executable lives in that `deps/` folder, so the library is looked for beside the executable,
//! then one folder up. If neither exists (an unusual runner), `cargo build --lib` is run once with the
//! `CARGO` that runs the test.
//!
//! Without `g++` the test is skipped with a message, unless `CI` is set, where it fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kibitz::game::{Game, Outcome, Side};
use kibitz::games::chess::Chess;

fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps folder").to_path_buf();
    let candidates = [deps.join("libkibitz.so"), deps.join("../libkibitz.so")];
    if let Some(found) = candidates.iter().find(|p| p.exists()) {
        return found.clone();
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--lib"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run cargo build --lib");
    assert!(status.success(), "cargo build --lib failed");
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/debug/libkibitz.so");
    assert!(built.exists(), "no libkibitz.so in {}", built.display());
    built
}

fn gxx_available() -> bool {
    Command::new("g++").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// Build the host into the test's scratch folder, once for both tests.
fn build_host() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT.get_or_init(compile_host).clone()
}

fn compile_host() -> PathBuf {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ceboard-host");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ceboard/host.cpp");
    let output = Command::new("g++")
        .args(["-std=c++17", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .arg("-ldl")
        .output()
        .expect("run g++");
    assert!(output.status.success(), "g++ failed:\n{}", String::from_utf8_lossy(&output.stderr));
    out
}

/// Run the host with a deadline (`mode`: the most plies of its game, or `bad`); its stdout.
fn run_host(host: &Path, lib: &Path, mode: &str, env: &[(&str, &str)]) -> String {
    let mut child = Command::new(host)
        .arg(lib)
        .arg(mode)
        .env("KIBITZ_CEBOARD_HASH_MB", "8")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the host");
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Some(status) = child.try_wait().expect("wait for the host") {
            let mut out = String::new();
            if let Some(mut s) = child.stdout.take() {
                use std::io::Read;
                let _ = s.read_to_string(&mut out);
            }
            assert!(status.success(), "the host failed ({status}):\n{out}");
            return out;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the host did not finish in 300 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The built host and the library, or `None` when the test cannot run: without g++ it is skipped with a
/// message, except in CI, where it fails.
fn host_and_library() -> Option<(PathBuf, PathBuf)> {
    if !gxx_available() {
        if std::env::var_os("CI").is_some() {
            panic!("g++ is required in CI for the CEBoard host test (apt-get install g++)");
        }
        eprintln!("SKIPPED: g++ not found; install it to test the CEBoard C interface");
        return None;
    }
    Some((build_host(), library()))
}

#[test]
fn a_cpp_host_plays_and_analyses_through_the_c_interface() {
    let Some((host, lib)) = host_and_library() else { return };
    let out = run_host(&host, &lib, "160", &[]);
    assert!(out.lines().any(|l| l == "OK"), "{out}");

    // Replay the game with the library's rules: every move legal, and the reported end is the real one.
    let game_line = out.lines().find_map(|l| l.strip_prefix("GAME")).expect("a GAME line");
    let mut g = Chess::start();
    let moves: Vec<&str> = game_line.split_whitespace().collect();
    assert!(moves.len() >= 2, "{out}");
    for (i, m) in moves.iter().enumerate() {
        let mv = g.parse_move(m).unwrap_or_else(|e| panic!("ply {}: {e}\n{out}", i + 1));
        g.make(mv);
    }
    match out.lines().find_map(|l| l.strip_prefix("RESULT ")) {
        Some(result) => {
            let end = g.outcome().unwrap_or_else(|| panic!("RESULT {result} but the game is not over"));
            let expected = match end.outcome {
                Outcome::Win(Side::First) => "1-0",
                Outcome::Win(Side::Second) => "0-1",
                Outcome::Draw => "1/2-1/2",
            };
            assert!(result.starts_with(expected), "{result} vs {end:?}");
            assert!(result.to_lowercase().ends_with(end.reason), "{result} vs {end:?}");
        }
        None => assert_eq!(moves.len(), 160, "no result, so the ply limit was reached"),
    }
}

#[test]
fn an_unusable_chess_network_is_a_fatal_error_for_the_host() {
    let Some((host, lib)) = host_and_library() else { return };
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-network.bin");
    let out = run_host(&host, &lib, "bad", &[("KIBITZ_CHESS_NET", &missing.display().to_string())]);
    let fatal = out.lines().find_map(|l| l.strip_prefix("FATAL ")).expect("a FATAL line");
    assert!(fatal.contains(&format!("KIBITZ_CHESS_NET={}", missing.display())), "{out}");
    assert!(out.lines().any(|l| l == "OK"), "{out}");
}
