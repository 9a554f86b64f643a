//! The Universal Chinese Chess Interface (UCCI) engine for xiangqi on stdin/stdout. Logging goes to stderr
//! (`KIBITZ_LOG`, default `warn`).

use kibitz::protocols::engine;

fn main() -> std::process::ExitCode {
    engine::main("kibitz-ucci", &engine::UCCI)
}
