//! The Universal Chess Interface engine on stdin/stdout: chess, and xiangqi through `UCI_Variant xiangqi`.
//! Logging goes to stderr (`KIBITZ_LOG`, default `warn`).
//! `-engine NAME [-engines FILE]` plays with that external engine of the engines file instead of kibitz's own.

use kibitz::protocols::engine;

fn main() -> std::process::ExitCode {
    engine::main("kibitz-uci", &engine::UCI)
}
