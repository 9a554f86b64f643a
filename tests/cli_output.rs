//! The executables when their standard output or error cannot be written (the reader gone, as `| head` or
//! `2>&1 | head` leaves it): an error exit or a quiet loss of the message, never a panic (exit code 101).

use std::io::{Read, pipe};
use std::process::{Command, ExitStatus, Stdio};

/// A pipe whose reading end is already closed: every write to it fails with "broken pipe".
fn broken_pipe() -> Stdio {
    let (reader, writer) = pipe().expect("pipe");
    drop(reader);
    writer.into()
}

/// Runs `program args` with standard output on a broken pipe; its exit status and standard error.
fn with_stdout_gone(program: &str, args: &[&str]) -> (ExitStatus, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(broken_pipe())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stderr = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut stderr).expect("read stderr");
    (child.wait().expect("wait"), stderr)
}

#[test]
fn printing_to_a_closed_stdout_is_an_error_exit_not_a_panic() {
    let cases: [(&str, &[&str]); 4] = [
        (env!("CARGO_BIN_EXE_kibitz"), &["openapi"]),
        (env!("CARGO_BIN_EXE_kibitz-qianhong"), &["-info"]),
        (env!("CARGO_BIN_EXE_kibitz-guide"), &["-h"]),
        (env!("CARGO_BIN_EXE_kibitz-uci"), &["-h"]),
    ];
    for (program, args) in cases {
        let (status, stderr) = with_stdout_gone(program, args);
        assert!(!stderr.contains("panicked"), "{program} {args:?} panicked: {stderr}");
        assert_eq!(status.code(), Some(1), "{program} {args:?}: {status}, stderr: {stderr}");
    }
}

#[test]
fn a_warning_to_a_closed_stderr_is_dropped_and_the_command_goes_on() {
    let dir = std::env::temp_dir().join(format!("kibitz-cli-output-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let games = dir.join("games.pgn");
    // The first game has a move no rule reads: annotate warns "skipping game 1" on stderr and goes on.
    std::fs::write(&games, "[Event \"x\"]\n\n1. e4 zz9 *\n\n1. e4 e5 *\n").expect("write");
    let out = dir.join("annotated.pgn");
    let status = Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(["annotate", "--game", "chess", "--depth", "2", "-o"])
        .arg(&out)
        .arg(&games)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(broken_pipe())
        .status()
        .expect("run");
    assert_eq!(status.code(), Some(0), "{status}");
    let annotated = std::fs::read_to_string(&out).expect("the annotated games were written");
    assert!(annotated.contains("e5"), "{annotated}");
    let _ = std::fs::remove_dir_all(&dir);
}
