//! `kibitz match` through the real executable: short matches between kibitz players, and against Stockfish and
//! Fairy-Stockfish when they are installed (skipped with a message otherwise; required with KIBITZ_ORACLE=1).
//! Every run has a deadline: a match that hangs fails the test.

mod common;

use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The longest a short match here may take (the machine may be slow and shared).
const DEADLINE: Duration = Duration::from_secs(600);

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// `kibitz ARGS` started with its output piped (no engines file from the environment, warnings only).
fn start(args: &[&OsStr]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(args)
        .env_remove("KIBITZ_ENGINES")
        .env("KIBITZ_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kibitz")
}

fn kibitz(args: &[&str]) -> Run {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let mut child = start(&args);
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let (tx, rx) = mpsc::channel();
    let tx2 = tx.clone();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        let _ = tx.send((0, s));
    });
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        let _ = tx2.send((1, s));
    });
    let mut texts = [String::new(), String::new()];
    for _ in 0..2 {
        match rx.recv_timeout(DEADLINE) {
            Ok((i, s)) => texts[i] = s,
            Err(_) => {
                let _ = child.kill();
                panic!("kibitz {args:?} did not finish within {DEADLINE:?}");
            }
        }
    }
    let status = child.wait().expect("wait");
    let [stdout, stderr] = texts;
    Run { ok: status.success(), stdout, stderr }
}

/// The W/D/L line of a summary, as numbers.
fn wdl(stdout: &str) -> (u64, u64, u64) {
    let line = stdout.lines().find(|l| l.starts_with("W/D/L: ")).unwrap_or_else(|| panic!("no W/D/L line:\n{stdout}"));
    let numbers: Vec<u64> =
        line["W/D/L: ".len()..].split_whitespace().next().unwrap().split('/').map(|n| n.parse().unwrap()).collect();
    (numbers[0], numbers[1], numbers[2])
}

fn check_summary(run: &Run, games: u64) {
    assert!(run.ok, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    let (w, d, l) = wdl(&run.stdout);
    assert_eq!(w + d + l, games, "{}", run.stdout);
    assert_eq!(run.stdout.lines().filter(|l| l.starts_with("game ")).count() as u64, games, "{}", run.stdout);
    let elo = run.stdout.lines().find(|l| l.starts_with("Elo: ")).unwrap_or_else(|| panic!("no Elo:\n{}", run.stdout));
    assert!(elo.contains("95% interval") || elo.contains("95% bound;"), "{elo}");
    assert!(!elo.contains("+inf") && !elo.contains("-inf"), "a summary never prints an infinite Elo: {elo}");
    assert!(run.stdout.contains(&format!("games: {games}")), "{}", run.stdout);
    // The pairs (an opening's two games): as many as complete, their counts those pairs, and where every game
    // is in one, A's points in them are its points in the games.
    if let Some(line) = run.stdout.lines().find(|l| l.starts_with("pairs: ")) {
        let counted: u64 = line["pairs: ".len()..].split_whitespace().next().unwrap().parse().unwrap();
        let counts: Vec<u64> = line
            .split(", ")
            .map(|part| part.rsplit(": ").next().unwrap().trim_end_matches(')').parse().unwrap())
            .collect();
        assert_eq!(counts.len(), 5, "{line}");
        assert_eq!(counts.iter().sum::<u64>(), counted, "{line}");
        assert!(counted <= games / 2, "{line}");
        if counted * 2 == games {
            let half_points: u64 = counts.iter().enumerate().map(|(k, &c)| k as u64 * c).sum();
            assert_eq!(half_points, 2 * w + d, "{}", run.stdout);
        }
        assert!(run.stdout.lines().any(|l| l.starts_with("Elo by pairs: ")), "{}", run.stdout);
    }
}

#[test]
fn a_short_match_between_kibitz_players() {
    let dir = tempdir("kibitz-players");
    let records = dir.join("games.pdn");
    let run = kibitz(&[
        "match",
        "kibitz",
        "kibitz:threads=1",
        "--game",
        "checkers",
        "--games",
        "2",
        "--depth",
        "2",
        "--seed",
        "5",
        "-o",
        records.to_str().unwrap(),
    ]);
    check_summary(&run, 2);
    assert!(run.stdout.contains("openings: random, seed 5"), "{}", run.stdout);
    assert!(run.stdout.contains("pairs: 1 (an opening's two games; kibitz scored "), "{}", run.stdout);
    let text = std::fs::read_to_string(&records).unwrap();
    assert_eq!(text.matches("[Event \"kibitz match: kibitz vs kibitz:threads=1\"]").count(), 2, "{text}");
    assert!(text.contains("[Termination "), "{text}");
}

/// A game without a native annotated format (its records are GameStrings or position-and-moves text) plays a
/// match from an openings file too, with an SPRT.
#[test]
fn a_match_of_another_game_from_an_openings_file_with_an_sprt() {
    let dir = tempdir("kibitz-generic");
    let openings = dir.join("openings.txt");
    // Xiangqi: the start position with a cannon move each, and a FEN line.
    std::fs::write(
        &openings,
        "# two openings\n|h2e2 h9g7\nrnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1|b0c2\n",
    )
    .unwrap();
    let records = dir.join("games.txt");
    let run = kibitz(&[
        "match",
        "kibitz:hash=8",
        "kibitz:hash=16",
        "--game",
        "xiangqi",
        "--games",
        "4",
        "--depth",
        "1",
        "--max-plies",
        "40",
        "--concurrency",
        "2",
        "--openings",
        openings.to_str().unwrap(),
        "--sprt",
        "0,10",
        "-o",
        records.to_str().unwrap(),
    ]);
    check_summary(&run, 4);
    let sprt = run.stdout.lines().find(|l| l.starts_with("SPRT: ")).unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(sprt.contains("bounds -2.94, 2.94"), "{sprt}");
    assert!(sprt.ends_with("continue"), "{sprt}");
    let text = std::fs::read_to_string(&records).unwrap();
    assert_eq!(text.matches("# Event: kibitz match").count(), 4, "{text}");

    // Hive: random openings, records as GameStrings.
    let run =
        kibitz(&["match", "kibitz", "kibitz", "--game", "hive", "--games", "2", "--depth", "1", "--max-plies", "30"]);
    check_summary(&run, 2);
    assert!(run.stdout.contains("kibitz (A) vs kibitz (B)"), "{}", run.stdout);
}

#[test]
fn bad_arguments_are_named() {
    let run = kibitz(&["match", "kibitz", "kibitz", "--game", "go"]);
    assert!(!run.ok && run.stderr.contains("go"), "{}", run.stderr);
    let run = kibitz(&["match", "kibitz", "stockfish", "--game", "chess", "--games", "2"]);
    assert!(!run.ok && run.stderr.contains("no engines file"), "{}", run.stderr);
    let run = kibitz(&["match", "kibitz:speed=3", "kibitz", "--game", "chess"]);
    assert!(!run.ok && run.stderr.contains("unknown kibitz setting"), "{}", run.stderr);
    let run = kibitz(&["match", "kibitz", "kibitz", "--game", "chess", "--sprt", "5,0"]);
    assert!(!run.ok && run.stderr.contains("--sprt"), "{}", run.stderr);
    let run = kibitz(&["match", "kibitz", "kibitz", "--game", "draughts", "--balanced=-5"]);
    assert!(!run.ok && run.stderr.contains("--balanced"), "{}", run.stderr);
    let dir = tempdir("kibitz-bad");
    let openings = dir.join("bad.txt");
    std::fs::write(&openings, "|e2e4\n|e2e5\n").unwrap();
    let run = kibitz(&["match", "kibitz", "kibitz", "--game", "chess", "--openings", openings.to_str().unwrap()]);
    assert!(!run.ok && run.stderr.contains("line 2") && run.stderr.contains("e2e5"), "{}", run.stderr);
    let engines = dir.join("engines.toml");
    std::fs::write(&engines, "[[engine]]\nname = \"sf\"\ngame = \"chess\"\nprotocol = \"uci\"\ncommand = \"x\"\n")
        .unwrap();
    let run =
        kibitz(&["match", "kibitz", "sf", "--game", "xiangqi", "--engines", engines.to_str().unwrap(), "--games", "1"]);
    assert!(!run.ok && run.stderr.contains("does not play xiangqi"), "{}", run.stderr);
}

/// Balanced random openings: named in the header, and the match is played from them.
#[test]
fn a_match_on_balanced_openings() {
    let run = kibitz(&[
        "match",
        "kibitz",
        "kibitz",
        "--game",
        "draughts",
        "--games",
        "2",
        "--depth",
        "2",
        "--seed",
        "23",
        "--balanced",
        "80",
        "--max-plies",
        "40",
    ]);
    check_summary(&run, 2);
    assert!(run.stdout.contains("openings: random, seed 23, within 80 centi-units"), "{}", run.stdout);
}

/// An engine that cannot start loses its games (the reason recorded); the match still ends with a summary.
#[test]
fn an_engine_that_cannot_start_stops_the_match_saying_why() {
    let dir = tempdir("kibitz-failing");
    let engines = dir.join("engines.toml");
    std::fs::write(
        &engines,
        "[[engine]]\nname = \"ghost\"\ngame = \"chess\"\nprotocol = \"uci\"\ncommand = \"/nonexistent/engine\"\n",
    )
    .unwrap();
    let engines = engines.to_str().unwrap();
    let match_args =
        ["match", "kibitz", "ghost", "--game", "chess", "--games", "2", "--depth", "1", "--engines", engines];
    let run = kibitz(&match_args);
    // Not two forfeits scored as a sweep with success: no game is played, the exit says why.
    assert!(!run.ok, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.lines().any(|l| l.starts_with("game ")), "{}", run.stdout);
    assert!(run.stderr.contains("ghost could not start: engine `"), "{}", run.stderr);
    assert!(run.stderr.contains("could not be started"), "{}", run.stderr);
    // A record file of an earlier match is kept as it was, and none is made (found by an audit: it was emptied).
    let kept = dir.join("kept.pgn");
    std::fs::write(&kept, "[Event \"earlier\"]\n\n1. e4 *\n").unwrap();
    let made = dir.join("made.pgn");
    for output in [&kept, &made] {
        let mut args = match_args.to_vec();
        args.extend(["--sprt", "-5,5", "-o", output.to_str().unwrap()]);
        let run = kibitz(&args);
        assert!(!run.ok && run.stderr.contains("ghost could not start"), "{}", run.stderr);
    }
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "[Event \"earlier\"]\n\n1. e4 *\n");
    assert!(!made.exists());
}

/// The program if it is installed; `None` (with a message) if not, unless KIBITZ_ORACLE=1 requires it.
fn installed(program: &str) -> Option<&str> {
    if Path::new(program).exists() {
        return Some(program);
    }
    if std::env::var("KIBITZ_ORACLE").as_deref() == Ok("1") {
        panic!("{program} is not installed, and KIBITZ_ORACLE=1 requires it");
    }
    eprintln!("skipped: {program} is not installed");
    None
}

#[test]
fn a_short_match_against_stockfish() {
    let Some(stockfish) = installed("/usr/games/stockfish") else { return };
    let dir = tempdir("kibitz-stockfish");
    let engines = dir.join("engines.toml");
    std::fs::write(
        &engines,
        format!(
            "[[engine]]\nname = \"stockfish\"\ngame = \"chess\"\nprotocol = \"uci\"\ncommand = \"{stockfish}\"\n\
             [engine.options]\nThreads = 1\nHash = 16\n"
        ),
    )
    .unwrap();
    let records = dir.join("games.pgn");
    let run = kibitz(&[
        "match",
        "kibitz",
        "stockfish",
        "--game",
        "chess",
        "--games",
        "2",
        "--movetime",
        "50",
        "--engines",
        engines.to_str().unwrap(),
        "-o",
        records.to_str().unwrap(),
    ]);
    check_summary(&run, 2);
    assert!(!run.stdout.contains("failed"), "{}", run.stdout);
    let text = std::fs::read_to_string(&records).unwrap();
    assert_eq!(text.matches("[Black \"stockfish\"]").count(), 1, "{text}");
}

#[test]
fn a_short_xiangqi_match_against_fairy_stockfish() {
    let Some(fsf) = installed("/usr/games/fairy-stockfish") else { return };
    let dir = tempdir("kibitz-fsf");
    let engines = dir.join("engines.toml");
    std::fs::write(
        &engines,
        format!(
            "[[engine]]\nname = \"fsf\"\ngame = \"xiangqi\"\nprotocol = \"uci\"\ncommand = \"{fsf}\"\n\
             [engine.options]\nUCI_Variant = \"xiangqi\"\nThreads = 1\nHash = 16\n"
        ),
    )
    .unwrap();
    let run = kibitz(&[
        "match",
        "fsf",
        "kibitz",
        "--game",
        "xiangqi",
        "--games",
        "2",
        "--movetime",
        "50",
        "--max-plies",
        "120",
        "--engines",
        engines.to_str().unwrap(),
    ]);
    check_summary(&run, 2);
    assert!(!run.stdout.contains("failed"), "{}", run.stdout);
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A fake UCI engine named `busy` in `dir`'s engines file: it writes its pid to `dir/pid`, and on `go` touches
/// `dir/thinking` and sleeps five minutes without reading its input (as many engines do while they search).
#[cfg(target_os = "linux")]
fn busy_engine(dir: &Path) -> std::path::PathBuf {
    let script = dir.join("busy.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         echo $$ > \"$(dirname \"$0\")/pid\"\n\
         while read -r line; do\n\
           case \"$line\" in\n\
             uci) echo 'id name busy'; echo uciok ;;\n\
             isready) echo readyok ;;\n\
             go*) touch \"$(dirname \"$0\")/thinking\"; sleep 300; echo 'bestmove e7e5' ;;\n\
             quit) exit 0 ;;\n\
           esac\n\
         done\n",
    )
    .unwrap();
    let _ = std::fs::remove_file(dir.join("pid"));
    let _ = std::fs::remove_file(dir.join("thinking"));
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let engines = dir.join("engines.toml");
    std::fs::write(
        &engines,
        format!(
            "[[engine]]\nname = \"busy\"\ngame = \"chess\"\nprotocol = \"uci\"\ncommand = \"{}\"\n\
             timeouts = {{ grace_s = 1 }}\n",
            script.display()
        ),
    )
    .unwrap();
    engines
}

/// Send `child` SIGINT and wait for it: it must exit with 130, the code of an interrupted command. Its stdout
/// and stderr.
#[cfg(target_os = "linux")]
fn interrupt(mut child: Child) -> (String, String) {
    let sent = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "stdout:\n{out}\nstderr:\n{err}");
    (out, err)
}

/// Wait until the busy engine of `dir` is searching; its pid. Fails if `child` ends first.
#[cfg(target_os = "linux")]
fn wait_thinking(dir: &Path, child: &mut Child) -> u32 {
    let waited = std::time::Instant::now();
    while !dir.join("thinking").exists() {
        assert!(waited.elapsed() < Duration::from_secs(120), "the engine was never asked to search");
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("kibitz ended before the engine searched ({status}): {err}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let engine: u32 = std::fs::read_to_string(dir.join("pid")).unwrap().trim().parse().unwrap();
    assert!(common::running(engine));
    engine
}

/// An engine that answers `bestmove (none)` where it has moves loses the game, told as giving no move (found by
/// an audit: it was "an illegal move `(none)`").
#[cfg(target_os = "linux")]
#[test]
fn an_engine_that_gives_no_move_loses_saying_so() {
    let dir = tempdir("kibitz-nomove");
    let script = dir.join("none.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         while read -r line; do\n\
           case \"$line\" in\n\
             uci) echo 'id name none'; echo uciok ;;\n\
             isready) echo readyok ;;\n\
             go*) echo 'bestmove (none)' ;;\n\
             quit) exit 0 ;;\n\
           esac\n\
         done\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let engines = dir.join("engines.toml");
    let toml = format!(
        "[[engine]]\nname = \"none\"\ngame = \"chess\"\nprotocol = \"uci\"\ncommand = \"{}\"\n",
        script.display()
    );
    std::fs::write(&engines, toml).unwrap();
    let pgn = dir.join("games.pgn");
    let words = ["match", "kibitz", "none", "--game", "chess", "--games", "2", "--depth", "1", "--seed", "3", "-o"];
    let mut args: Vec<&str> = words.to_vec();
    args.extend([pgn.to_str().unwrap(), "--engines", engines.to_str().unwrap()]);
    let run = kibitz(&args);
    assert!(run.ok, "{}", run.stderr);
    assert_eq!(wdl(&run.stdout), (2, 0, 0), "{}", run.stdout);
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert!(text.contains("no move"), "{text}");
    assert!(!text.contains("illegal move"), "{text}");
}

/// Wait until process `pid` is gone (10 s at most).
#[cfg(target_os = "linux")]
fn assert_gone(pid: u32, what: &str) {
    let gone = std::time::Instant::now();
    while common::running(pid) {
        assert!(gone.elapsed() < Duration::from_secs(10), "{what} {pid} outlived kibitz");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Ctrl-C (SIGINT) during a match: the engine busy in a search, in a process group of its own that the
/// terminal's signal does not reach, is stopped with the match instead of searching on. The fake engine
/// does not read its input while it "thinks" (as many engines), so only a stop that kills it ends it.
#[cfg(target_os = "linux")]
#[test]
fn an_interrupted_match_stops_its_busy_engine() {
    let dir = tempdir("kibitz-interrupted");
    let engines = busy_engine(&dir);
    // White to move after the opening, so the engine (player A, white in game 1) searches first.
    let openings = dir.join("openings.txt");
    std::fs::write(&openings, "|e2e4 e7e5\n").unwrap();
    let words = ["match", "busy", "kibitz", "--game", "chess", "--games", "2", "--movetime", "600000", "--openings"];
    let mut args: Vec<&OsStr> = words.iter().map(OsStr::new).collect();
    args.extend([openings.as_os_str(), OsStr::new("--engines"), engines.as_os_str()]);
    let mut child = start(&args);
    // The engine (player A) moves first in game 1: wait for its first search.
    let engine = wait_thinking(&dir, &mut child);
    let (out, err) = interrupt(child);
    assert!(err.contains("match interrupted"), "{err}");
    assert!(out.contains("interrupted after 0 of 2 games"), "{out}");
    // The engine (and the `sleep` it started, in its group) is gone once kibitz has exited.
    assert_gone(engine, "the busy engine");
}

/// Ctrl-C during `kibitz annotate` with an external engine: the engine busy in its search goes with kibitz.
#[cfg(target_os = "linux")]
#[test]
fn an_interrupted_annotation_stops_its_busy_engine() {
    let dir = tempdir("kibitz-interrupted-annotate");
    let engines = busy_engine(&dir);
    let record = dir.join("game.pgn");
    std::fs::write(&record, "[Event \"x\"]\n\n1. e4 e5 2. Nf3 *\n").unwrap();
    let words = ["--game", "chess", "--engine", "busy", "--movetime", "600000", "--quiet", "--engines"];
    let mut args = vec![OsStr::new("annotate"), record.as_os_str()];
    args.extend(words.iter().map(OsStr::new));
    args.push(engines.as_os_str());
    let mut child = start(&args);
    let engine = wait_thinking(&dir, &mut child);
    interrupt(child);
    assert_gone(engine, "the busy engine");
}
