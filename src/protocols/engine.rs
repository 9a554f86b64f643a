//! The engines spoken on stdin/stdout: one entry point per protocol, which both its thin executable in
//! `src/bin/` and `kibitz engine <protocol>` call, and the frame of those executables (logging, exit code).
//! GUIDE's executable, which speaks over TCP, is [`super::guide::net::main`].

use std::io;
use std::process::ExitCode;

use super::checkers::CheckersConfig;
use super::guide::GuideConfig;
use super::hub::HubConfig;
use super::qianhong::{Mode, info_lines, parse_mode};
use super::ucci::UcciConfig;
use super::uci::UciConfig;
use super::uhp::UhpConfig;

/// The default log level of the protocol executables: their stdout is the protocol, their stderr is often
/// shown to a user by the GUI.
pub const DEFAULT_LOG: &str = "warn";

/// A protocol spoken on stdin/stdout.
pub struct StdioEngine {
    /// Its name on the command line (`kibitz engine <name>`).
    pub name: &'static str,
    /// Run one session on stdin/stdout until it ends.
    pub run: fn() -> io::Result<()>,
}

/// Every protocol spoken on stdin/stdout, in the order `kibitz engine` lists them.
pub const STDIO: &[StdioEngine] = &[
    StdioEngine { name: "checkers", run: checkers },
    StdioEngine { name: "qianhong", run: qianhong },
    StdioEngine { name: "guide", run: guide },
    StdioEngine { name: "uhp", run: uhp },
    StdioEngine { name: "uci", run: uci },
    StdioEngine { name: "hub", run: hub },
    StdioEngine { name: "ucci", run: ucci },
];

/// The stdio protocol called `name`.
pub fn find(name: &str) -> Option<&'static StdioEngine> {
    STDIO.iter().find(|e| e.name == name)
}

/// The Checkers Protocol with the default settings.
pub fn checkers() -> io::Result<()> {
    super::checkers::run_stdio(CheckersConfig::default())
}

/// The Qianhong plugin protocol's session (what `-plugin` runs).
pub fn qianhong() -> io::Result<()> {
    super::qianhong::run_stdio()
}

/// One GUIDE session on stdin/stdout, for trying the protocol by hand (GUIs speak GUIDE over TCP).
pub fn guide() -> io::Result<()> {
    super::guide::run_stdio(GuideConfig::default())
}

/// The Universal Hive Protocol with the default settings.
pub fn uhp() -> io::Result<()> {
    super::uhp::run_stdio(UhpConfig::default())
}

/// The Universal Chess Interface (chess, and xiangqi through `UCI_Variant`) with the default settings.
pub fn uci() -> io::Result<()> {
    super::uci::run_stdio(UciConfig::default())
}

/// The Hub protocol (version 2, international draughts) with the default settings.
pub fn hub() -> io::Result<()> {
    super::hub::run_stdio(HubConfig::default())
}

/// The Universal Chinese Chess Interface (xiangqi) with the default settings.
pub fn ucci() -> io::Result<()> {
    super::ucci::run_stdio(UcciConfig::default())
}

/// The `main` of a thin protocol executable: logging ([`crate::logging`], default [`DEFAULT_LOG`]), then
/// `run`; a failure is printed as `program: error` and exits with 1.
pub fn main(program: &str, run: fn() -> io::Result<()>) -> ExitCode {
    crate::logging::init(DEFAULT_LOG);
    exit_code(program, run())
}

/// `kibitz-qianhong`'s `main` with its arguments (without the program name): `-info` prints the plugin's
/// description, `-plugin` plays on stdin/stdout, `-plugin debug` traces the session to stderr (whatever
/// `KIBITZ_LOG` says); anything else prints the usage and exits with 2.
pub fn qianhong_main<S: AsRef<str>>(args: &[S]) -> ExitCode {
    let Some(mode) = parse_mode(args) else {
        eprintln!("usage: kibitz-qianhong -info | -plugin [debug]");
        return ExitCode::from(2);
    };
    let filter = match mode {
        Mode::Plugin { debug: true } => "kibitz=debug".into(),
        _ => crate::logging::filter(DEFAULT_LOG),
    };
    crate::logging::init_with(filter);
    if mode == Mode::Info {
        println!("{}", info_lines().join("\n"));
        return ExitCode::SUCCESS;
    }
    exit_code("kibitz-qianhong", qianhong())
}

fn exit_code(program: &str, result: io::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{program}: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stdio_protocol_is_found_by_its_own_name_only() {
        for engine in STDIO {
            assert_eq!(find(engine.name).map(|e| e.name), Some(engine.name));
        }
        let mut names: Vec<_> = STDIO.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), STDIO.len(), "two protocols share a name");
        assert!(find("ceboard").is_none() && find("").is_none());
    }
}
