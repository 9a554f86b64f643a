//! The Qianhong plugin (QHPLUGIN V1.3): `-info` prints the plugin's description, `-plugin [debug]` plays on
//! stdin/stdout (`debug` traces the session to stderr; otherwise logging follows `RUST_LOG`, default `warn`).

use std::process::ExitCode;

use kibitz::protocols::qianhong::{Mode, info_lines, parse_mode, run_stdio};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(mode) = parse_mode(&args) else {
        eprintln!("usage: kibitz-qianhong -info | -plugin [debug]");
        return ExitCode::from(2);
    };
    let filter = match mode {
        Mode::Plugin { debug: true } => "kibitz=debug".into(),
        _ => tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
    };
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter(filter).init();
    if mode == Mode::Info {
        println!("{}", info_lines().join("\n"));
        return ExitCode::SUCCESS;
    }
    match run_stdio() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kibitz-qianhong: {e}");
            ExitCode::FAILURE
        }
    }
}
