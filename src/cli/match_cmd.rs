//! `kibitz match <A> <B> --game G`: play a match between kibitz's own engine and an external one (or two of
//! either), print a line per finished game with the running tally (and, on a terminal, a progress bar with the
//! score and Elo so far on stderr), then W/D/L, the score, the Elo difference with its 95% interval,
//! and the SPRT verdict when asked; write the games in the game's record format.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use kibitz::engines::Engines;
use kibitz::engines::config::{self, EngineSpec, MAX_PROCESSES};
use kibitz::game::Game;
use kibitz::games::GameKind;
use kibitz::matchplay::stats::elo_text;
use kibitz::matchplay::{
    self, AResult, EloEstimate, KibitzSettings, MatchPlan, PairTally, PlayedGame, PlayerSpec, Sprt, Tally, Verdict,
};
use kibitz::search::Limits;
use kibitz::with_game;

/// The move time when no limit is given.
const DEFAULT_MOVETIME_MS: u64 = 100;

#[derive(Args)]
#[command(group(clap::ArgGroup::new("limit").args(["movetime", "nodes", "depth"])))]
pub struct MatchArgs {
    /// Player A: `kibitz` (settings: `kibitz:threads=1,hash=64`) or an engine of the engines file.
    pub a: String,
    /// Player B, the same way.
    pub b: String,
    /// checkers, draughts, hive, xiangqi or chess.
    #[arg(long)]
    pub game: String,
    /// Games to play (each opening twice, A on each side).
    #[arg(long, default_value_t = 10)]
    pub games: usize,
    /// Time per move in milliseconds (the default, 100, when no limit is given).
    #[arg(long)]
    pub movetime: Option<u64>,
    /// Nodes per move.
    #[arg(long)]
    pub nodes: Option<u64>,
    /// Depth per move, in plies.
    #[arg(long)]
    pub depth: Option<u32>,
    /// Openings, one a line: `POSITION`, `POSITION|MOVES` or `|MOVES` (default: random openings of 4 to 8
    /// plies from --seed).
    #[arg(long)]
    pub openings: Option<PathBuf>,
    /// Seed of the random openings (default: from the clock; printed, so a match can be replayed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Draw a random opening again while a short search of kibitz's own engine (20,000 nodes) finds either
    /// side ahead by more than this many centi-units (pawns, men) after it.
    #[arg(long, value_name = "CP", conflicts_with = "openings", value_parser = clap::value_parser!(u16))]
    pub balanced: Option<u16>,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Stop early when a sequential probability ratio test decides: `elo0,elo1[,alpha,beta]` (0.05 each);
    /// `elo0` may be negative (`--sprt -5,0`).
    #[arg(long, allow_hyphen_values = true)]
    pub sprt: Option<String>,
    /// Write the games here, in the game's record format.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// The engines file (TOML) naming the external engines.
    #[arg(long, env = "KIBITZ_ENGINES")]
    pub engines: Option<PathBuf>,
    /// A game still going after this many plies is drawn.
    #[arg(long, default_value_t = 400)]
    pub max_plies: usize,
}

/// The most games one match plays (its openings are drawn before the first game).
const MAX_GAMES: usize = 1_000_000;

pub fn run(args: MatchArgs) -> Result<()> {
    let kind: GameKind = args.game.parse()?;
    if args.games == 0 || args.games > MAX_GAMES {
        bail!("--games must be between 1 and {MAX_GAMES}");
    }
    if args.concurrency == 0 || args.concurrency > MAX_PROCESSES {
        bail!("--concurrency must be between 1 and {MAX_PROCESSES}");
    }
    if args.max_plies == 0 {
        bail!("--max-plies must be at least 1");
    }
    let sprt = args.sprt.as_deref().map(Sprt::parse).transpose().map_err(|e| anyhow!("--sprt {e}"))?;
    let limits = match (args.movetime, args.nodes, args.depth) {
        (_, Some(0), _) => bail!("--nodes must be at least 1"),
        (_, _, Some(0)) => bail!("--depth must be at least 1"),
        (Some(0), _, _) => bail!("--movetime must be at least 1"),
        (Some(ms), _, _) => Limits::movetime(Duration::from_millis(ms)),
        (_, Some(n), _) => Limits::nodes(n),
        (_, _, Some(d)) => Limits::depth(d),
        (None, None, None) => Limits::movetime(Duration::from_millis(DEFAULT_MOVETIME_MS)),
    };
    let engines = external_engines(&args, kind)?;
    let player = |text: &str| -> Result<PlayerSpec> {
        match KibitzSettings::parse(text) {
            Some(settings) => Ok(PlayerSpec::Kibitz(settings.map_err(|e| anyhow!("player {text}: {e}"))?)),
            None => {
                let engine = engines.get(text, kind).ok_or_else(|| anyhow!("no engine `{text}` for {kind}"))?;
                Ok(PlayerSpec::External(engine.clone()))
            }
        }
    };
    let (a, b) = (player(&args.a)?, player(&args.b)?);
    let (a_name, b_name) = if args.a == args.b {
        (format!("{} (A)", args.a), format!("{} (B)", args.b))
    } else {
        (args.a.clone(), args.b.clone())
    };
    let stop = Stop::default();
    if let Err(e) = watch_signals(stop.clone()) {
        kibitz::errln!(
            "warning: cannot watch SIGINT and SIGTERM ({e}): an interrupted match leaves its engines running"
        );
    }
    let result = with_game!(kind, G => play::<G>(&args, (a, b), (a_name, b_name), limits, sprt, &stop));
    engines.shutdown();
    if stop.signalled.load(Ordering::SeqCst) {
        kibitz::errln!("match interrupted: the games in progress were abandoned and the engines stopped");
        kibitz::engines::process::kill_all();
        result?;
        std::process::exit(130);
    }
    result
}

/// How a match is stopped from outside: `abort` stops its searches and games (an SPRT's verdict sets it too),
/// `signalled` says a signal did.
#[derive(Clone, Default)]
struct Stop {
    abort: Arc<AtomicBool>,
    signalled: Arc<AtomicBool>,
}

/// Watch SIGINT and SIGTERM. The first stops the match: the searches in progress are stopped, no game starts,
/// and `run` shuts the engines down before it exits (an engine runs in a process group of its own, so a
/// terminal's Ctrl-C does not reach it, and one busy in a search would run on). A second signal kills the
/// engines and ends the process at once.
fn watch_signals(stop: Stop) -> std::io::Result<()> {
    super::on_signals(move || {
        kibitz::errln!("interrupted: stopping the games and the engines (again to quit at once)");
        stop.signalled.store(true, Ordering::SeqCst);
        stop.abort.store(true, Ordering::SeqCst);
    })
}

/// The engines of the file that the players name, each with enough processes for the games played at once.
fn external_engines(args: &MatchArgs, kind: GameKind) -> Result<Engines> {
    let named: Vec<&str> =
        [&args.a, &args.b].into_iter().filter(|p| KibitzSettings::parse(p).is_none()).map(String::as_str).collect();
    if named.is_empty() {
        return Ok(Engines::default());
    }
    let Some(path) = &args.engines else {
        bail!("`{}` is not kibitz, and no engines file names it (--engines PATH or KIBITZ_ENGINES)", named[0]);
    };
    let specs = config::load(path)?;
    let mut wanted: Vec<EngineSpec> = Vec::new();
    for name in &named {
        let spec = specs
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| anyhow!("the engines file {} has no engine `{name}`", path.display()))?;
        if !spec.games.contains(&kind) {
            let games: Vec<&str> = spec.games.iter().map(|g| g.name()).collect();
            bail!("engine `{}` does not play {kind} (it plays: {})", spec.name, games.join(", "));
        }
        if !wanted.iter().any(|w| w.name == spec.name) {
            wanted.push(spec.clone());
        }
    }
    for spec in &mut wanted {
        let uses = named.iter().filter(|n| n.eq_ignore_ascii_case(&spec.name)).count();
        spec.processes = spec.processes.max(uses * args.concurrency).min(MAX_PROCESSES);
        spec.games = vec![kind];
        spec.default_for.clear();
    }
    Ok(Engines::new(wanted)?)
}

fn describe(limits: &Limits) -> String {
    match (limits.movetime, limits.nodes, limits.depth) {
        (Some(t), _, _) => format!("{} ms a move", t.as_millis()),
        (_, Some(n), _) => format!("{n} nodes a move"),
        (_, _, Some(d)) => format!("depth {d}"),
        _ => "no limit".into(),
    }
}

fn play<G: Game>(
    args: &MatchArgs,
    (a, b): (PlayerSpec, PlayerSpec),
    (a_name, b_name): (String, String),
    limits: Limits,
    sprt: Option<Sprt>,
    stop: &Stop,
) -> Result<()> {
    let pairs = args.games.div_ceil(2);
    let (openings, source) = match &args.openings {
        Some(path) => (matchplay::read_openings::<G>(path).map_err(|e| anyhow!(e))?, path.display().to_string()),
        None => {
            let seed = args.seed.unwrap_or_else(|| {
                SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
            });
            match args.balanced {
                None => (
                    matchplay::random_openings::<G>(pairs, seed).map_err(|e| anyhow!(e))?,
                    format!("random, seed {seed}"),
                ),
                Some(cp) => (
                    matchplay::balanced_random_openings::<G>(pairs, seed, cp.into()).map_err(|e| anyhow!(e))?,
                    format!("random, seed {seed}, within {cp} centi-units"),
                ),
            }
        }
    };
    // The file is checked now but emptied only when the first game is written: a match that fails before it
    // (an engine that does not start) leaves an earlier file as it was (found by an audit).
    let mut output = match &args.output {
        Some(path) => Some(Output::open(path)?),
        None => None,
    };
    outln!("match: {a_name} vs {b_name}, {}, {} games, {}, openings: {source}", G::NAME, args.games, describe(&limits));
    let plan = MatchPlan {
        a,
        b,
        a_name: a_name.clone(),
        b_name: b_name.clone(),
        games: args.games,
        openings,
        limits,
        max_plies: args.max_plies,
        concurrency: args.concurrency,
    };
    let mut tally = Tally::default();
    // By pair (`PlayedGame::pair`): A's half points in the first of its two games to finish, until the other
    // does.
    let mut pairs = PairTally::default();
    let mut half_done: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut write_error = None;
    let mut verdict = Verdict::Continue;
    let stdout = std::io::stdout();
    // Drawn only when stderr is a terminal; the per-game lines on stdout are the record a script reads.
    let bar = ProgressBar::with_draw_target(Some(args.games as u64), ProgressDrawTarget::stderr()).with_style(
        ProgressStyle::with_template("[{bar:30}] {pos}/{len} games  {msg}  {elapsed} elapsed, ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    matchplay::run_match_until(&plan, &stop.abort, |game: PlayedGame<G>| {
        let half_points = match game.a_result() {
            AResult::Win => {
                tally.wins += 1;
                2
            }
            AResult::Draw => {
                tally.draws += 1;
                1
            }
            AResult::Loss => {
                tally.losses += 1;
                0
            }
        };
        match half_done.remove(&game.pair()) {
            Some(other) => pairs.add(other + half_points),
            None => {
                half_done.insert(game.pair(), half_points);
            }
        }
        let winner = match game.a_result() {
            AResult::Win => format!("{a_name} wins"),
            AResult::Loss => format!("{b_name} wins"),
            AResult::Draw => "draw".to_string(),
        };
        let a_as = G::side_name(game.a_side);
        let b_as = G::side_name(game.a_side.opponent());
        let plies = game.moves.len() - game.opening_plies;
        let mut line = format!(
            "game {} of {}: {a_name} ({a_as}) vs {b_name} ({b_as}), opening {}: {winner}, {} ({plies} plies) | {} +{} ={} -{}",
            game.index + 1,
            args.games,
            game.opening + 1,
            game.finish.reason,
            a_name,
            tally.wins,
            tally.draws,
            tally.losses
        );
        if let Some(sprt) = &sprt {
            line.push_str(&format!(" | LLR {}", two_places(sprt.llr_by_pairs(&pairs))));
            verdict = sprt.verdict_by_pairs(&pairs);
        }
        bar.suspend(|| {
            let _ = writeln!(stdout.lock(), "{line}");
        });
        bar.inc(1);
        bar.set_message(running_figures(&tally, &a_name));
        if let Some(out) = output.as_mut() {
            let text = game.record_text(&a_name, &b_name);
            if let Err(e) = out.write_game(text.trim_end()) {
                write_error.get_or_insert(e);
            }
        }
        verdict == Verdict::Continue
    })
    .map_err(|e| anyhow!(e))?;
    bar.finish_and_clear();
    if stop.signalled.load(Ordering::SeqCst) {
        outln!("\ninterrupted after {} of {} games", tally.games(), args.games);
    }
    print_summary(&tally, &pairs, &a_name, sprt.as_ref(), verdict, args.games)?;
    if let (Some(e), Some(path)) = (write_error, &args.output) {
        return Err(anyhow!(e).context(format!("cannot write {}", path.display())));
    }
    Ok(())
}

/// The match's record file: opened (and so checked) before the match, emptied at its first game; a file made
/// for the match and never written is removed again.
struct Output {
    file: File,
    path: PathBuf,
    written: bool,
    made: bool,
}

impl Output {
    fn open(path: &std::path::Path) -> Result<Output> {
        let made = !path.exists();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(Output { file, path: path.to_path_buf(), written: false, made })
    }

    fn write_game(&mut self, text: &str) -> std::io::Result<()> {
        if !self.written {
            self.file.set_len(0)?;
            self.written = true;
        }
        writeln!(self.file, "{text}\n")?;
        self.file.flush()
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if self.made && !self.written {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The progress bar's message: the tally, the score and the Elo so far, from A's side.
fn running_figures(tally: &Tally, a_name: &str) -> String {
    let score = tally.score().map(|s| format!("{:.1}%", s * 100.0)).unwrap_or_default();
    let elo = tally.elo().map(|e| format!("Elo {}", elo_summary(&e))).unwrap_or_default();
    format!("{a_name} +{} ={} -{}  {score}  {elo}", tally.wins, tally.draws, tally.losses)
}

/// An Elo estimate in words: the difference and its 95% interval, or for a clean sweep (no finite estimate)
/// the interval's finite end.
fn elo_summary(e: &EloEstimate) -> String {
    if e.elo == f64::NEG_INFINITY {
        format!("below {} (95% bound; every game lost, so no finite estimate)", elo_text(e.high))
    } else if e.elo == f64::INFINITY {
        format!("above {} (95% bound; every game won, so no finite estimate)", elo_text(e.low))
    } else {
        format!("{} (95% interval {} to {})", elo_text(e.elo), elo_text(e.low), elo_text(e.high))
    }
}

fn print_summary(
    tally: &Tally,
    pairs: &PairTally,
    a_name: &str,
    sprt: Option<&Sprt>,
    verdict: Verdict,
    planned: usize,
) -> Result<()> {
    outln!();
    outln!("games: {}", tally.games());
    outln!("W/D/L: {}/{}/{} (from {a_name}'s side)", tally.wins, tally.draws, tally.losses);
    if let Some(score) = tally.score() {
        outln!("score: {:.1}%", score * 100.0);
    }
    if let Some(e) = tally.elo() {
        outln!("Elo: {}", elo_summary(&e));
    }
    if pairs.pairs() > 0 {
        let [p0, p1, p2, p3, p4] = pairs.counts;
        outln!(
            "pairs: {} (an opening's two games; {a_name} scored 0: {p0}, 0.5: {p1}, 1: {p2}, 1.5: {p3}, 2: {p4})",
            pairs.pairs()
        );
        match (pairs.elo(), pairs.why_no_elo()) {
            (Some(e), _) => outln!("Elo by pairs: {}", elo_summary(&e)),
            (None, why) => outln!("Elo by pairs: none ({})", why.unwrap_or("no figure")),
        }
    }
    if let Some(sprt) = sprt {
        let (lower, upper) = sprt.bounds();
        let stopped = if (tally.games() as usize) < planned { ", stopped early" } else { "" };
        outln!(
            "SPRT: elo0 {} elo1 {} alpha {} beta {}: LLR {} (bounds {:.2}, {:.2}): {}{stopped}",
            sprt.elo0,
            sprt.elo1,
            sprt.alpha,
            sprt.beta,
            two_places(sprt.llr_by_pairs(pairs)),
            lower,
            upper,
            verdict.text()
        );
    }
    Ok(())
}

/// A number with two decimals, never `-0.00`.
fn two_places(x: f64) -> String {
    let shown = if x.abs() < 0.005 { 0.0 } else { x };
    format!("{shown:.2}")
}
