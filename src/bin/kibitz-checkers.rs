//! The Checkers Protocol engine on stdin/stdout. Logging goes to stderr (`KIBITZ_LOG`, default `warn`).
//! `-engine NAME [-engines FILE]` plays with that external engine of the engines file instead of kibitz's own.

use kibitz::protocols::engine;

fn main() -> std::process::ExitCode {
    engine::main("kibitz-checkers", &engine::CHECKERS)
}
