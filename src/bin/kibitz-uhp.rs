//! The Universal Hive Protocol engine on stdin/stdout. Logging goes to stderr (`RUST_LOG`, default `warn`).

use kibitz::protocols::uhp::{UhpConfig, run_stdio};

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .init();
    match run_stdio(UhpConfig::default()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kibitz-uhp: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
