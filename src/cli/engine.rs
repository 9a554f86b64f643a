//! `kibitz engine <protocol> [-engine NAME] [-engines PATH]`: one of the stdio engines of
//! [`kibitz::protocols::engine`], the same entry points and arguments as the protocol executables in `src/bin/`
//! (`qianhong` also takes `kibitz-qianhong`'s `-info` and `-plugin`).

use anyhow::{Result, bail};

use kibitz::protocols::engine::{self, ENGINES_ENV, STDIO, StdioError};

pub fn run(protocol: &str, args: &[String]) -> Result<()> {
    if let Some(engine) = engine::find(protocol) {
        let program = format!("kibitz engine {protocol}");
        // Qianhong starts its plugins with `-info` or `-plugin`: taken here as `kibitz-qianhong` takes them
        // (the plugin mode is also the default). Its `-plugin debug` sets the log filter, which this program
        // has set already from KIBITZ_LOG.
        let mut args = args.to_vec();
        if protocol == "qianhong" {
            if args.iter().any(|a| a.eq_ignore_ascii_case("-info")) {
                let _ = engine::printed(&kibitz::protocols::qianhong::info_lines().join("\n"));
                return Ok(());
            }
            if let Some(at) = args.iter().position(|a| a.eq_ignore_ascii_case("-plugin")) {
                args.remove(at);
                if args.get(at).is_some_and(|a| a.eq_ignore_ascii_case("debug")) {
                    kibitz::errln!("{program}: `-plugin debug` is kibitz-qianhong's; here set KIBITZ_LOG=kibitz=debug");
                    std::process::exit(2)
                }
            }
        }
        let args = &args;
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
