//! The engines spoken on stdin/stdout: one entry point per protocol, which both its thin executable in
//! `src/bin/` and `kibitz engine <protocol>` call, and the frame of those executables (logging, the
//! arguments, the exit code).
//!
//! Every one of them plays with kibitz's own engine, or with an external engine of an engines file:
//! `-engine NAME` (or `--engine NAME`) names it, `-engines PATH` (else `KIBITZ_ENGINES`) is the file. A name
//! the file does not have for the protocol's games, or a missing or bad file, is an error on stderr and exit
//! code 2 before any session starts. A search the external engine fails is answered with the protocol's error
//! (see [`super::session::start_search`]), and the session goes on (the engine's process is replaced).
//! GUIDE's executable, which speaks over TCP, is [`super::guide::net::main`].

use std::ffi::OsString;
use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use super::checkers::CheckersConfig;
use super::guide::GuideConfig;
use super::hub::HubConfig;
use super::qianhong::{Mode, info_lines, parse_mode};
use super::ucci::UcciConfig;
use super::uci::UciConfig;
use super::uhp::UhpConfig;
use crate::engines::Engines;
use crate::games::GameKind;

/// The default log level of the protocol executables: their stdout is the protocol, their stderr is often
/// shown to a user by the GUI.
pub const DEFAULT_LOG: &str = "warn";

/// The variable naming the engines file when `-engines` does not.
pub const ENGINES_ENV: &str = "KIBITZ_ENGINES";

/// The engine a stdio session analyses and plays with: kibitz's own (`engine` is `None`), or the external
/// engine `engine` of `engines` (read from the engines file and checked to play a game of the protocol).
#[derive(Clone, Default)]
pub struct EngineSetup {
    pub engines: Engines,
    pub engine: Option<String>,
}

/// A protocol spoken on stdin/stdout.
pub struct StdioEngine {
    /// Its name on the command line (`kibitz engine <name>`).
    pub name: &'static str,
    /// The games it plays: an external engine given with `-engine` must play one of them.
    pub games: &'static [GameKind],
    /// Run one session on stdin/stdout until it ends.
    pub run: fn(EngineSetup) -> io::Result<()>,
}

/// The Checkers Protocol.
pub const CHECKERS: StdioEngine = StdioEngine { name: "checkers", games: &[GameKind::Checkers], run: checkers };
/// The Qianhong plugin protocol's session (what `kibitz-qianhong -plugin` runs).
pub const QIANHONG: StdioEngine = StdioEngine { name: "qianhong", games: &[GameKind::Xiangqi], run: qianhong };
/// GUIDE on stdin/stdout, for trying the protocol by hand (GUIs speak GUIDE over TCP: `kibitz-guide`).
pub const GUIDE: StdioEngine = StdioEngine { name: "guide", games: &[GameKind::Draughts], run: guide };
/// The Universal Hive Protocol.
pub const UHP: StdioEngine = StdioEngine { name: "uhp", games: &[GameKind::Hive], run: uhp };
/// The Universal Chess Interface (chess, and xiangqi through `UCI_Variant`).
pub const UCI: StdioEngine = StdioEngine { name: "uci", games: &[GameKind::Chess, GameKind::Xiangqi], run: uci };
/// The Hub protocol (version 2, international draughts).
pub const HUB: StdioEngine = StdioEngine { name: "hub", games: &[GameKind::Draughts], run: hub };
/// The Universal Chinese Chess Interface (xiangqi).
pub const UCCI: StdioEngine = StdioEngine { name: "ucci", games: &[GameKind::Xiangqi], run: ucci };

/// Every protocol spoken on stdin/stdout, in the order `kibitz engine` lists them.
pub const STDIO: &[StdioEngine] = &[CHECKERS, QIANHONG, GUIDE, UHP, UCI, HUB, UCCI];

/// The stdio protocol called `name`.
pub fn find(name: &str) -> Option<&'static StdioEngine> {
    STDIO.iter().find(|e| e.name == name)
}

fn checkers(setup: EngineSetup) -> io::Result<()> {
    super::checkers::run_stdio(CheckersConfig { engine: setup.engine, ..CheckersConfig::default() }, setup.engines)
}

fn qianhong(setup: EngineSetup) -> io::Result<()> {
    super::qianhong::run_stdio(setup.engine, setup.engines)
}

fn guide(setup: EngineSetup) -> io::Result<()> {
    super::guide::run_stdio(GuideConfig { engine: setup.engine, ..GuideConfig::default() }, setup.engines)
}

fn uhp(setup: EngineSetup) -> io::Result<()> {
    super::uhp::run_stdio(UhpConfig { engine: setup.engine, ..UhpConfig::default() }, setup.engines)
}

fn uci(setup: EngineSetup) -> io::Result<()> {
    super::uci::run_stdio(UciConfig { engine: setup.engine, ..UciConfig::default() }, setup.engines)
}

fn hub(setup: EngineSetup) -> io::Result<()> {
    super::hub::run_stdio(HubConfig { engine: setup.engine, ..HubConfig::default() }, setup.engines)
}

fn ucci(setup: EngineSetup) -> io::Result<()> {
    super::ucci::run_stdio(UcciConfig { engine: setup.engine, ..UcciConfig::default() }, setup.engines)
}

/// The engine switches of a protocol executable: `-engine NAME` and `-engines PATH` (also spelt `--engine`,
/// `--engine=NAME`, `-engines=PATH`...).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineArgs {
    pub engine: Option<String>,
    pub engines: Option<PathBuf>,
}

impl EngineArgs {
    /// Take the engine switches out of `args`; the other arguments are returned as they came.
    pub fn split<S: AsRef<str>>(args: &[S]) -> Result<(EngineArgs, Vec<String>), String> {
        let mut out = EngineArgs::default();
        let mut rest = Vec::new();
        let mut it = args.iter().map(|a| a.as_ref());
        while let Some(arg) = it.next() {
            let Some(bare) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
                rest.push(arg.to_string());
                continue;
            };
            let (key, inline) = match bare.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (bare, None),
            };
            let key = key.to_ascii_lowercase();
            if key != "engine" && key != "engines" {
                rest.push(arg.to_string());
                continue;
            }
            let value = match inline.or_else(|| it.next()) {
                Some(v) if !v.trim().is_empty() => v.to_string(),
                _ => return Err(format!("-{key} needs a value")),
            };
            let again = if key == "engine" {
                out.engine.replace(value).is_some()
            } else {
                out.engines.replace(PathBuf::from(value)).is_some()
            };
            if again {
                return Err(format!("-{key} is given twice"));
            }
        }
        Ok((out, rest))
    }

    /// The engine to play with: the engines file (`-engines`, else `env` when an engine is named) read and
    /// checked, and the named engine found among its engines of `games`. Without `-engine`, or with
    /// `-engine kibitz`, kibitz's own engine.
    pub fn load(self, games: &[GameKind], env: Option<OsString>) -> Result<EngineSetup, String> {
        let named = self.engine.as_deref().map(str::trim).filter(|n| !n.eq_ignore_ascii_case("kibitz"));
        let path = self.engines.or_else(|| env.filter(|e| !e.is_empty() && named.is_some()).map(PathBuf::from));
        let Some(path) = path else {
            return match named {
                Some(name) => Err(format!(
                    "-engine `{}` needs the engines file that names it: -engines PATH or {ENGINES_ENV}",
                    clip(name)
                )),
                None => Ok(EngineSetup::default()),
            };
        };
        let specs = crate::engines::config::load(&path).map_err(|e| e.to_string())?;
        let engines = Engines::new(specs).map_err(|e| format!("the engines file {}: {e}", path.display()))?;
        let Some(name) = named else { return Ok(EngineSetup { engines, engine: None }) };
        if let Some(found) = games.iter().find_map(|&game| engines.get(name, game)) {
            let engine = Some(found.name.clone());
            return Ok(EngineSetup { engines, engine });
        }
        let wanted: Vec<&str> = games.iter().map(|g| g.name()).collect();
        let wanted = wanted.join(" or ");
        let mut known: Vec<&str> =
            engines.list().iter().filter(|e| games.contains(&e.game)).map(|e| e.name.as_str()).collect();
        known.dedup();
        let elsewhere: Vec<&str> =
            engines.list().iter().filter(|e| e.name.eq_ignore_ascii_case(name)).map(|e| e.game.name()).collect();
        let why = if elsewhere.is_empty() {
            format!("the engines file {} has no engine of that name", path.display())
        } else {
            format!("that engine of {} plays {}, not {wanted}", path.display(), elsewhere.join(", "))
        };
        let has = if known.is_empty() {
            format!("the file has no {wanted} engine")
        } else {
            format!("its {wanted} engines: {}", known.join(", "))
        };
        Err(format!("-engine `{}`: {why} ({has})", clip(name)))
    }
}

/// A name from the command line as an error quotes it.
fn clip(name: &str) -> String {
    super::session::shorten(name)
}

/// Why a protocol executable did not run, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The arguments are wrong, or the engine they name cannot be had: no session was started.
    #[error("{0}")]
    Usage(String),
    /// The session failed (stdin or stdout).
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl StdioError {
    /// The exit code: 2 for [`StdioError::Usage`], 1 for a failed session.
    pub fn exit_code(&self) -> u8 {
        match self {
            StdioError::Usage(_) => 2,
            StdioError::Io(_) => 1,
        }
    }
}

/// The usage of a protocol executable.
pub fn usage(program: &str, engine: &StdioEngine) -> String {
    let games: Vec<&str> = engine.games.iter().map(|g| g.name()).collect();
    format!(
        "usage: {program} [-engine NAME] [-engines PATH]
  -engine NAME   analyse and play with the {} engine NAME of the engines file instead of kibitz's own
  -engines PATH  the engines file (TOML; see kibitz's README, \"External engines\"); default: ${ENGINES_ENV}",
        games.join(" or ")
    )
}

/// The engine `args` (the arguments, without the program name) ask `engine` to play with, the engines file
/// found through `env` when `-engines` is not given.
pub fn setup<S: AsRef<str>>(
    program: &str,
    engine: &StdioEngine,
    args: &[S],
    env: Option<OsString>,
) -> Result<EngineSetup, StdioError> {
    let (switches, mut rest) =
        EngineArgs::split(args).map_err(|e| StdioError::Usage(format!("{e}\n{}", usage(program, engine))))?;
    // Scan is started as `scan hub`, and GUIs set up for it (pydraughts' examples) pass that word: taken.
    if engine.name == HUB.name && rest.first().is_some_and(|a| a == "hub") {
        rest.remove(0);
    }
    if let Some(extra) = rest.first() {
        return Err(StdioError::Usage(format!("unknown argument `{}`\n{}", clip(extra), usage(program, engine))));
    }
    switches.load(engine.games, env).map_err(StdioError::Usage)
}

/// Run one session of `engine` with `setup`, then stop the external engine's processes.
pub fn run(engine: &StdioEngine, setup: EngineSetup) -> io::Result<()> {
    let engines = setup.engines.clone();
    let result = (engine.run)(setup);
    engines.shutdown();
    result
}

/// Run `engine` with the arguments `args` (without the program name), the engines file found through `env`
/// when `-engines` is not given.
pub fn run_with_args<S: AsRef<str>>(
    program: &str,
    engine: &StdioEngine,
    args: &[S],
    env: Option<OsString>,
) -> Result<(), StdioError> {
    let setup = setup(program, engine, args, env)?;
    // A chess network named by KIBITZ_CHESS_NET that cannot be used is a bad argument too.
    if engine.games.contains(&GameKind::Chess) {
        crate::games::chess::check_network().map_err(StdioError::Usage)?;
    }
    Ok(run(engine, setup)?)
}

/// The `main` of a thin protocol executable: logging ([`crate::logging`], default [`DEFAULT_LOG`]), the
/// arguments (`-engine NAME`, `-engines PATH`; `-h` prints the usage), then the session. A bad argument or
/// engine is printed as `program: error` and exits with 2, before any session; a failed session exits with 1.
pub fn main(program: &str, engine: &StdioEngine) -> ExitCode {
    crate::logging::init(DEFAULT_LOG);
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| matches!(a.as_str(), "-h" | "-help" | "--help")) {
        return printed(&usage(program, engine));
    }
    exit_code(program, run_with_args(program, engine, &args, std::env::var_os(ENGINES_ENV)))
}

/// `kibitz-qianhong`'s usage.
pub const QIANHONG_USAGE: &str = "usage: kibitz-qianhong -info | -plugin [debug] [-engine NAME] [-engines PATH]
  -info          print the plugin's description
  -plugin        play on stdin/stdout (`debug`: trace the session to stderr)
  -engine NAME   analyse and play with the xiangqi engine NAME of the engines file instead of kibitz's own
  -engines PATH  the engines file (TOML; see kibitz's README, \"External engines\"); default: $KIBITZ_ENGINES";

/// `kibitz-qianhong`'s `main` with its arguments (without the program name): `-info` prints the plugin's
/// description, `-plugin` plays on stdin/stdout, `-plugin debug` traces the session to stderr (whatever
/// `KIBITZ_LOG` says); `-engine NAME` and `-engines PATH` as for the other executables. Anything else, or an
/// engine that cannot be had, prints why and exits with 2.
pub fn qianhong_main<S: AsRef<str>>(args: &[S]) -> ExitCode {
    let usage_error = |e: String| {
        crate::errln!("kibitz-qianhong: {e}\n{QIANHONG_USAGE}");
        ExitCode::from(2)
    };
    let (switches, rest) = match EngineArgs::split(args) {
        Ok(split) => split,
        Err(e) => return usage_error(e),
    };
    let Some(mode) = parse_mode(&rest) else {
        return usage_error("expected -info or -plugin [debug]".into());
    };
    let filter = match mode {
        Mode::Plugin { debug: true } => "kibitz=debug".into(),
        _ => crate::logging::filter(DEFAULT_LOG),
    };
    crate::logging::init_with(filter);
    if mode == Mode::Info {
        return printed(&info_lines().join("\n"));
    }
    match switches.load(QIANHONG.games, std::env::var_os(ENGINES_ENV)) {
        Ok(setup) => exit_code("kibitz-qianhong", run(&QIANHONG, setup).map_err(StdioError::from)),
        Err(e) => {
            crate::errln!("kibitz-qianhong: {e}");
            ExitCode::from(2)
        }
    }
}

/// Prints `text` and a newline on standard output: success, or failure where it cannot be written (a closed
/// pipe), without the panic of `println!`.
pub fn printed(text: &str) -> ExitCode {
    use std::io::Write as _;
    match writeln!(std::io::stdout(), "{text}") {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

fn exit_code(program: &str, result: Result<(), StdioError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            crate::errln!("{program}: {e}");
            ExitCode::from(e.exit_code())
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

    #[test]
    fn engine_switches_are_taken_out_of_the_arguments() {
        let (args, rest) = EngineArgs::split(&["-plugin", "--engine", "sf", "-engines=/e.toml", "debug"]).unwrap();
        assert_eq!(args.engine.as_deref(), Some("sf"));
        assert_eq!(args.engines.as_deref(), Some(std::path::Path::new("/e.toml")));
        assert_eq!(rest, ["-plugin", "debug"]);
        assert_eq!(EngineArgs::split(&["-engine"]).unwrap_err(), "-engine needs a value");
        assert_eq!(EngineArgs::split(&["-engine=a", "-ENGINE", "b"]).unwrap_err(), "-engine is given twice");
        assert_eq!(EngineArgs::split(&["-engines", ""]).unwrap_err(), "-engines needs a value");
    }

    #[test]
    fn an_engine_is_needed_only_when_named_and_then_must_be_found() {
        let none = EngineArgs::default().load(&[GameKind::Hive], Some("/no/such/file".into())).unwrap();
        assert!(none.engine.is_none() && none.engines.list().is_empty());
        let own = EngineArgs { engine: Some("Kibitz".into()), engines: None };
        assert!(own.load(&[GameKind::Hive], None).unwrap().engine.is_none());
        let named = EngineArgs { engine: Some("x".into()), engines: None };
        let e = named.clone().load(&[GameKind::Hive], None).err().unwrap();
        assert!(e.contains("-engines PATH or KIBITZ_ENGINES"), "{e}");
        let e = named.load(&[GameKind::Hive], Some("/no/such/file".into())).err().unwrap();
        assert!(e.contains("/no/such/file"), "{e}");
    }
}
