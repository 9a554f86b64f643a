//! The engines file (`--engines PATH`, `KIBITZ_ENGINES`): which external engines a deployment has, how to
//! start them, and which one is each game's default.
//!
//! ```toml
//! [[engine]]
//! name = "stockfish"                 # what requests name it by ("engine": "stockfish")
//! games = ["chess"]                  # or: game = "chess"
//! protocol = "uci"                   # uci (chess, xiangqi), uhp (hive), hub (draughts), checkers (checkers)
//! command = "/usr/games/stockfish"
//! args = []                          # optional
//! dir = "/var/lib/engines"           # optional working directory
//! processes = 2                      # processes kept warm (and the most running at once), default 1
//! default = true                     # answer this game's requests that name no engine
//! timeouts = { handshake_s = 10, ready_s = 30, grace_s = 5, search_s = 600 }   # optional
//!
//! [engine.options]                   # set after the handshake (UCI setoption, Hub set-param, ...)
//! Threads = 1
//! Hash = 64
//! ```
//!
//! The file is read whole and checked before the server starts: an unknown key, a game the protocol cannot
//! play, two defaults for one game or a name used twice is an error naming the engine and the field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::Timeouts;
use super::process::EngineCommand;
use crate::games::GameKind;

/// The largest engines file read (a real one is a few hundred bytes).
const MAX_FILE: u64 = 1 << 20;

/// The most processes one engine may keep.
pub const MAX_PROCESSES: usize = 64;

/// The protocol an engine speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// The Universal Chess Interface (Stockfish; Fairy-Stockfish with `UCI_Variant` for xiangqi).
    Uci,
    /// The Universal Hive Protocol.
    Uhp,
    /// Hub, version 2 (Scan 3.x and other international draughts engines).
    Hub,
    /// The Checkers Protocol (English checkers).
    Checkers,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Uci => "uci",
            Protocol::Uhp => "uhp",
            Protocol::Hub => "hub",
            Protocol::Checkers => "checkers",
        }
    }

    /// The games an engine of this protocol can analyse.
    pub fn games(self) -> &'static [GameKind] {
        match self {
            Protocol::Uci => &[GameKind::Chess, GameKind::Xiangqi],
            Protocol::Uhp => &[GameKind::Hive],
            Protocol::Hub => &[GameKind::Draughts],
            Protocol::Checkers => &[GameKind::Checkers],
        }
    }
}

/// One configured engine, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineSpec {
    pub name: String,
    pub games: Vec<GameKind>,
    pub protocol: Protocol,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub dir: Option<PathBuf>,
    /// Options in the file's order, values as text.
    pub options: Vec<(String, String)>,
    pub processes: usize,
    /// The games this engine is the default for (a subset of `games`).
    pub default_for: Vec<GameKind>,
    pub timeouts: Timeouts,
}

impl EngineSpec {
    /// How to start one of its processes.
    pub fn command(&self) -> EngineCommand {
        EngineCommand {
            program: self.program.clone(),
            args: self.args.clone(),
            dir: self.dir.clone(),
            name: Some(self.name.clone()),
        }
    }

    /// The engine's value for an option (case-insensitive name), if the file sets it.
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Why an engines file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the engines file {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the engines file {path} is larger than {MAX_FILE} bytes")]
    TooLarge { path: String },
    #[error("engines file {path}: {message}")]
    Syntax { path: String, message: String },
    #[error("engines file {path}, engine `{engine}`: {message}")]
    Invalid { path: String, engine: String, message: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    engine: Vec<RawEngine>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEngine {
    name: String,
    #[serde(default)]
    game: Option<String>,
    #[serde(default)]
    games: Vec<String>,
    protocol: Protocol,
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    dir: Option<String>,
    #[serde(default)]
    processes: Option<i64>,
    #[serde(default)]
    default: bool,
    #[serde(default)]
    options: BTreeMap<String, toml::Value>,
    #[serde(default)]
    timeouts: Option<RawTimeouts>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTimeouts {
    handshake_s: Option<f64>,
    ready_s: Option<f64>,
    grace_s: Option<f64>,
    search_s: Option<f64>,
}

/// Read and check an engines file.
pub fn load(path: &Path) -> Result<Vec<EngineSpec>, ConfigError> {
    let shown = path.display().to_string();
    let read = |source| ConfigError::Read { path: shown.clone(), source };
    let size = std::fs::metadata(path).map_err(read)?.len();
    if size > MAX_FILE {
        return Err(ConfigError::TooLarge { path: shown });
    }
    let text = std::fs::read_to_string(path).map_err(read)?;
    parse(&text, &shown, path.parent())
}

/// Check the text of an engines file; `path` names it in errors, relative `dir`s are taken from `base`.
pub fn parse(text: &str, path: &str, base: Option<&Path>) -> Result<Vec<EngineSpec>, ConfigError> {
    let raw: RawFile =
        toml::from_str(text).map_err(|e| ConfigError::Syntax { path: path.to_string(), message: one_line(&e) })?;
    let mut specs: Vec<EngineSpec> = Vec::new();
    for engine in raw.engine {
        let spec = check(engine, base).map_err(|(engine, message)| ConfigError::Invalid {
            path: path.to_string(),
            engine,
            message,
        })?;
        let invalid =
            |message: String| ConfigError::Invalid { path: path.to_string(), engine: spec.name.clone(), message };
        // Names are looked up without regard to case (`--engine SF` is `sf`): two that differ only in case
        // would be one engine.
        if let Some(other) = specs.iter().find(|s| s.name.eq_ignore_ascii_case(&spec.name)) {
            return Err(invalid(format!("the name is used by another engine (`{}`; names ignore case)", other.name)));
        }
        for game in &spec.default_for {
            if let Some(other) = specs.iter().find(|s| s.default_for.contains(game)) {
                return Err(invalid(format!("`{}` is already the default for {game}", other.name)));
            }
        }
        specs.push(spec);
    }
    Ok(specs)
}

fn one_line(e: &toml::de::Error) -> String {
    e.to_string().lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join(" ")
}

fn check(raw: RawEngine, base: Option<&Path>) -> Result<EngineSpec, (String, String)> {
    let name = raw.name.trim().to_string();
    let fail = |message: String| (name.clone(), message);
    let name_ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !name_ok {
        return Err(fail("name: 1 to 64 letters, digits, `-`, `_` or `.`".into()));
    }
    if name.eq_ignore_ascii_case("kibitz") {
        return Err(fail("name: `kibitz` is kibitz's own engine".into()));
    }
    let mut names = raw.games;
    names.extend(raw.game);
    if names.is_empty() {
        return Err(fail("games: at least one game (`games = [\"chess\"]`)".into()));
    }
    let mut games = Vec::new();
    for game in names {
        let kind = game.parse::<GameKind>().map_err(|e| fail(format!("games: {e}")))?;
        if !raw.protocol.games().contains(&kind) {
            let can: Vec<&str> = raw.protocol.games().iter().map(|g| g.name()).collect();
            return Err(fail(format!(
                "games: protocol {} cannot analyse {kind} (it can: {})",
                raw.protocol.name(),
                can.join(", ")
            )));
        }
        if !games.contains(&kind) {
            games.push(kind);
        }
    }
    if raw.command.trim().is_empty() {
        return Err(fail("command: empty".into()));
    }
    let processes = raw.processes.unwrap_or(1);
    if !(1..=MAX_PROCESSES as i64).contains(&processes) {
        return Err(fail(format!("processes: {processes} is not between 1 and {MAX_PROCESSES}")));
    }
    let mut options = Vec::new();
    for (option, value) in raw.options {
        let text = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            _ => return Err(fail(format!("options.{option}: a string, number or boolean"))),
        };
        if option.contains(['\n', '\r']) || text.contains(['\n', '\r']) || option.trim().is_empty() {
            return Err(fail(format!("options.{option}: names and values are one line")));
        }
        options.push((option, text));
    }
    let mut timeouts = Timeouts::default();
    if let Some(t) = raw.timeouts {
        let seconds = |field: &str, v: Option<f64>, into: &mut Duration| -> Result<(), (String, String)> {
            if let Some(v) = v {
                if !(v.is_finite() && v > 0.0 && v <= 86_400.0) {
                    return Err(fail(format!("timeouts.{field}: {v} is not between 0 and 86400 seconds")));
                }
                *into = Duration::from_secs_f64(v);
            }
            Ok(())
        };
        seconds("handshake_s", t.handshake_s, &mut timeouts.handshake)?;
        seconds("ready_s", t.ready_s, &mut timeouts.ready)?;
        seconds("grace_s", t.grace_s, &mut timeouts.grace)?;
        seconds("search_s", t.search_s, &mut timeouts.search)?;
    }
    let dir = raw.dir.map(|d| match base {
        Some(base) if Path::new(&d).is_relative() => base.join(d),
        _ => PathBuf::from(d),
    });
    let default_for = if raw.default { games.clone() } else { Vec::new() };
    Ok(EngineSpec {
        name,
        games,
        protocol: raw.protocol,
        program: PathBuf::from(raw.command.trim()),
        args: raw.args,
        dir,
        options,
        processes: processes as usize,
        default_for,
        timeouts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text, "engines.toml", None).unwrap_err().to_string()
    }

    #[test]
    fn a_full_entry_is_read() {
        let specs = parse(
            r#"
            [[engine]]
            name = "fsf"
            games = ["xiangqi", "chess"]
            protocol = "uci"
            command = "/usr/games/fairy-stockfish"
            args = ["--x"]
            dir = "engines"
            processes = 2
            default = true
            timeouts = { grace_s = 1.5 }
            [engine.options]
            Threads = 1
            UCI_Variant = "xiangqi"
            Ponder = false
            "#,
            "engines.toml",
            Some(Path::new("/etc/kibitz")),
        )
        .unwrap();
        let s = &specs[0];
        assert_eq!(s.games, vec![GameKind::Xiangqi, GameKind::Chess]);
        assert_eq!(s.default_for, s.games);
        assert_eq!(s.dir.as_deref(), Some(Path::new("/etc/kibitz/engines")));
        assert_eq!(s.processes, 2);
        assert_eq!(s.timeouts.grace, Duration::from_millis(1500));
        assert_eq!(s.option("threads"), Some("1"));
        assert_eq!(s.option("Ponder"), Some("false"));
        assert_eq!(s.command().args, vec!["--x".to_string()]);
    }

    #[test]
    fn an_empty_file_has_no_engines() {
        assert!(parse("", "e.toml", None).unwrap().is_empty());
    }

    #[test]
    fn mistakes_are_named() {
        let base = "[[engine]]\nname = \"sf\"\nprotocol = \"uci\"\ncommand = \"stockfish\"\n";
        assert!(err(base).contains("games: at least one game"), "{}", err(base));
        assert!(err(&format!("{base}game = \"hive\"")).contains("protocol uci cannot analyse hive"));
        assert!(err(&format!("{base}game = \"go\"")).contains("unknown game `go`"));
        assert!(err(&format!("{base}game = \"chess\"\nprocesses = 0")).contains("processes: 0"));
        assert!(err(&format!("{base}game = \"chess\"\nhash = 3")).contains("hash"));
        assert!(err(&format!("{base}game = \"chess\"\n[engine.options]\nX = [1]")).contains("options.X"));
        let bad_protocol = "[[engine]]\nname = \"a\"\nprotocol = \"xboard\"\ncommand = \"a\"\ngame = \"chess\"";
        assert!(err(bad_protocol).contains("xboard"));
        let twice = format!("{base}game = \"chess\"\ndefault = true\n{base}game = \"chess\"");
        assert!(err(&twice).contains("the name is used by another engine"), "{}", err(&twice));
        // Names are looked up without regard to case: `SF` beside `sf` would be the same engine.
        let cased = format!("{base}game = \"chess\"\n{}game = \"chess\"", base.replace("\"sf\"", "\"SF\""));
        assert!(err(&cased).contains("names ignore case"), "{}", err(&cased));
        let two_defaults = format!(
            "{base}game = \"chess\"\ndefault = true\n{}game = \"chess\"\ndefault = true",
            base.replace("\"sf\"", "\"sf2\"")
        );
        assert!(err(&two_defaults).contains("`sf` is already the default for chess"), "{}", err(&two_defaults));
        assert!(err(&base.replace("\"sf\"", "\"kibitz\"")).contains("kibitz's own engine"));
        assert!(err(&base.replace("\"sf\"", "\"a b\"")).contains("name:"));
        assert!(err("[[engine]\n").contains("engines file engines.toml"));
    }
}
