//! The Universal Chess Interface engine on stdin/stdout: chess, and xiangqi through `UCI_Variant xiangqi`.
//! Logging goes to stderr (`KIBITZ_LOG`, default `warn`).

use kibitz::protocols::engine;

fn main() -> std::process::ExitCode {
    engine::main("kibitz-uci", &engine::UCI)
}
