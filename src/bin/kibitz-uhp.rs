//! The Universal Hive Protocol engine on stdin/stdout. Logging goes to stderr (`KIBITZ_LOG`, default `warn`).

use kibitz::protocols::engine;

fn main() -> std::process::ExitCode {
    engine::main("kibitz-uhp", &engine::UHP)
}
