//! `kibitz engine <protocol> [-engine NAME] [-engines PATH]`: one of the stdio engines of
//! [`kibitz::protocols::engine`], the same entry points and arguments as the protocol executables in `src/bin/`.

use anyhow::{Result, bail};

use kibitz::protocols::engine::{self, ENGINES_ENV, STDIO, StdioError};

pub fn run(protocol: &str, args: &[String]) -> Result<()> {
    if let Some(engine) = engine::find(protocol) {
        let program = format!("kibitz engine {protocol}");
        return match engine::run_with_args(&program, engine, args, std::env::var_os(ENGINES_ENV)) {
            Ok(()) => Ok(()),
            // Like the executables: a bad argument or engine exits with 2, before any session.
            Err(StdioError::Usage(e)) => {
                kibitz::errln!("{program}: {e}");
                std::process::exit(2)
            }
            Err(StdioError::Io(e)) => Err(e.into()),
        };
    }
    if protocol == "ceboard" {
        bail!("CEBoard is a shared library (libkibitz.so, exporting LoadEngine), not a stdio protocol");
    }
    let known: Vec<&str> = STDIO.iter().map(|e| e.name).collect();
    bail!("unknown protocol `{protocol}` (known: {})", known.join(", "))
}
