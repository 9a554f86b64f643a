//! The GUIDE engine a draughts GUI launches: `kibitz-guide -guide [-port N]` listens on port N (default 27533)
//! for the GUI's connection; `-connect HOST:PORT` dials out instead. Logging goes to stderr (`KIBITZ_LOG`,
//! default `warn`).

fn main() -> std::process::ExitCode {
    kibitz::protocols::guide::net::main()
}
