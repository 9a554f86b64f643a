//! Learning a game's evaluation values from kibitz's own games ([`kibitz::tuning`]).
//!
//! ```text
//! cargo run --release --example tune -- gen GAME OUT [games 10000] [nodes per move 3000] [seed 1] [threads 2]
//!                                            [node spread 0]
//! cargo run --release --example tune -- label GAME IN OUT [nodes 6000] [every 1] [threads 2] [from 0]
//! cargo run --release --example tune -- spsa GAME OUT [pairs 10000] [nodes per move 6000] [seed 1] [threads 2]
//!                                            [rate 0.002] [START]
//! cargo run --release --example tune -- tune GAME DATA... -o OUT [--epochs 300] [--lambda 0.7] [--l2 0]
//!                                            [--rate 1] [--batch 0 = all] [--from-zero] [--freeze PREFIX]...
//! cargo run --release --example tune -- net chess DATA... -o OUT [--hidden 256] [--epochs 30] [--lambda 0.7]
//!                                            [--rate 0.001] [--batch 16384] [--residual] [--mirror]
//!                                            [--buckets 1] [--kings] [--factorise] [--threads 2] [--seed 1]
//!                                            [--init NETWORK] [--smooth LAMBDA PLIES] [--k K]
//! ```
//!
//! `gen` appends self-play positions to OUT (`POSITION;result;score` lines, see
//! [`kibitz::tuning::selfplay`]). `label` appends IN's lines again to OUT, each with the score of a fresh search
//! of `nodes` nodes in place of its own (the game's result kept): every `every`-th line of IN, from line `from`
//! (0-based; a stopped run's last report names where to take it up), those the search finds quiet
//! ([`kibitz::tuning::label`]); at 0 nodes, with the static evaluation's score instead, every line kept. `spsa`
//! tunes the search's pruning, reduction and extension numbers by pairs of self-play games between them moved up
//! and moved down ([`kibitz::tuning::spsa`]), the final learning rate
//! `rate` (larger for shorter runs), from the game's own (or
//! START's, a file of `name value` lines), and writes them to OUT as such lines (rewritten every 100 pairs, so a
//! stopped run keeps its latest). `tune` fits the game's values to the positions of the DATA files
//! ([`kibitz::tuning::fit`]), starting from the shipped values (or from zero), and writes the weight file the
//! engine reads to OUT: `src/games/draughts/patterns.bin` for draughts, `src/games/xiangqi/weights.rs` for
//! xiangqi, `src/games/chess/weights.rs` for chess, `src/games/checkers/weights.rs` for checkers,
//! `src/games/hive/weights.rs` for Hive.
//! `--freeze PREFIX` keeps every value whose name starts with PREFIX where it starts.
//! `net` trains a network evaluation on the DATA files instead ([`kibitz::tuning::net`]) and writes the network
//! file (chess only: `src/games/chess/net.rs` describes it); `--residual` makes it a correction added to the
//! hand-written evaluation; `--mirror` trains on each training position mirrored left to right as well, where
//! neither side may castle (never on held-out ones); `--buckets B` gives the output B sets of weights, one for
//! each stage of the game by the count of pieces (`output_bucket` in that file); `--kings` gives each side's
//! first layer a set of weights for each region its own king may stand in (`king_bucket` there; a network
//! given by `--init` without them starts each region as its one set); `--factorise`, with `--kings`, trains
//! them as a set shared by every region plus each region's own, which start at zero (a network given by
//! `--init` without regions starts the shared set as its one set), and writes their sums. A `--hidden` other than the
//! engine's (`HIDDEN` in that file, the default) is trained and written all the same, to judge a size by its
//! held-out error before building the engine for it. `--init NETWORK` starts from a network file (the shipped
//! one, say) instead of random weights, to train it further on new positions: its hidden size and buckets are
//! the training's, and its weights are kept unless an epoch lowers the held-out error below where it started;
//! with a larger `--hidden`, it is widened first (its hidden values kept, new ones added that start out unused).
//! It keeps its centi-pawns an output unit (the K of the training is its, not the one fitted to DATA), so that its
//! weights stay on the engine's fixed point: the training computes every output through the weights rounded to
//! it, and each error it reports is the one of the network file it writes (with `--factorise`, the first layer's
//! blocks are rounded only once summed, when the file is written).
//! `--smooth LAMBDA PLIES` trains on each game's scores smoothed along the game: a position's score becomes the
//! mean of its game's scores from it to PLIES plies later, the one D plies later weighing LAMBDA^D
//! (`kibitz::tuning::net::Smoothing`). `--k K` sets the K of the targets: two runs' errors compare only at one K,
//! and a run from `--init` otherwise takes that network's (a network at another K is rescaled to it, and rounded
//! to the fixed point again, so its first reported error is that of its rounded copy).
//!
//! GAME is one of `checkers`, `draughts`, `xiangqi`, `chess`, `hive`.

use std::time::Instant;

use anyhow::{Context, Result, bail};
use kibitz::games::checkers::Checkers;
use kibitz::games::chess::Chess;
use kibitz::games::draughts::Draughts;
use kibitz::games::hive::Hive;
use kibitz::games::xiangqi::Xiangqi;
use kibitz::tuning::{Tunable, fit, label, net, selfplay, spsa};

fn positional<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> Result<T> {
    match args.get(i) {
        None => Ok(default),
        Some(s) => s.parse().map_err(|_| anyhow::anyhow!("bad argument `{s}`")),
    }
}

const USAGE: &str = "usage: tune gen GAME OUT [games] [nodes] [seed] [threads] [node spread] | tune label GAME IN OUT \
     [nodes] [every] [threads] [from] | tune spsa GAME OUT [pairs] [nodes] [seed] [threads] [rate] [START] | \
     tune GAME DATA... -o OUT [options]";

/// `spsa GAME OUT [pairs] [nodes] [seed] [threads] [rate] [START]`: tune the search's numbers by self-play
/// ([`spsa`]) with the final learning rate `rate`, from the game's own or START's (a file of `name value`
/// lines, as OUT is written), writing the numbers to OUT at every report (each 100 pairs) and at the end.
fn spsa_run<G: Tunable>(args: &[String]) -> Result<()> {
    let out = args.first().context("spsa GAME OUT [pairs] [nodes] [seed] [threads] [rate] [START]")?.clone();
    let pairs: usize = positional(args, 1, 10_000)?;
    let nodes: u64 = positional(args, 2, 6000)?;
    let seed: u64 = positional(args, 3, 1)?;
    let threads: usize = positional(args, 4, 2)?;
    let rate: f64 = positional(args, 5, spsa::R_END)?;
    if !(rate.is_finite() && rate > 0.0) {
        bail!("the learning rate `{rate}` is not a positive number");
    }
    let mut params = spsa::params(&G::SEARCH_TUNING, rate);
    if let Some(start) = args.get(6) {
        let text = std::fs::read_to_string(start).with_context(|| format!("cannot read {start}"))?;
        spsa::read(&text, &mut params).map_err(|e| anyhow::anyhow!("{start}: {e}"))?;
    }
    let begun = Instant::now();
    let write = |theta: &[f64]| {
        if let Err(e) = std::fs::write(&out, spsa::format(&params, theta)) {
            eprintln!("cannot write {out}: {e}");
        }
    };
    let done = spsa::run::<G>(&params, pairs, nodes, seed, threads, 100, &|k, o| {
        let values: Vec<String> = o.theta.iter().map(|t| format!("{t:.1}")).collect();
        eprintln!(
            "{k} pairs, θ+ +{} ={} -{}, {:.0} s: {}",
            o.wins,
            o.draws,
            o.losses,
            begun.elapsed().as_secs_f64(),
            values.join(" ")
        );
        write(&o.theta);
    });
    // The reports' writes only warn (the run goes on); the last one is the command's result.
    std::fs::write(&out, spsa::format(&params, &done.theta)).with_context(|| format!("cannot write {out}"))?;
    print!("{}", spsa::format(&params, &done.theta));
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(command), Some(game)) = (args.first(), args.get(1)) else { bail!(USAGE) };
    if command == "net" {
        return match game.as_str() {
            "chess" => net_chess(&args[2..]),
            other => bail!("no network for `{other}` (chess)"),
        };
    }
    match game.as_str() {
        "checkers" => run::<Checkers>(command, &args[2..]),
        "hive" => run::<Hive>(command, &args[2..]),
        "draughts" => run::<Draughts>(command, &args[2..]),
        "xiangqi" => run::<Xiangqi>(command, &args[2..]),
        "chess" => {
            // Self-play and matches evaluate with the network KIBITZ_CHESS_NET names, if it does.
            kibitz::games::chess::check_network().map_err(anyhow::Error::msg)?;
            run::<Chess>(command, &args[2..])
        }
        other => bail!("no tunable game `{other}` (checkers, draughts, xiangqi, chess, hive)"),
    }
}

fn run<G: Tunable>(command: &str, args: &[String]) -> Result<()> {
    match command {
        "gen" => {
            let out = args.first().context("gen GAME OUT [games] [nodes] [seed] [threads] [node spread]")?;
            let games = positional(args, 1, 10_000)?;
            let nodes = positional(args, 2, 3000)?;
            let seed = positional(args, 3, 1)?;
            let threads = positional(args, 4, 2)?;
            let spread = positional(args, 5, 0)?;
            selfplay::generate::<G>(out, games, nodes, seed, threads, spread).map_err(anyhow::Error::msg)
        }
        "label" => {
            let usage = "label GAME IN OUT [nodes] [every] [threads] [from]";
            let (input, out) = (args.first().context(usage)?, args.get(1).context(usage)?);
            let nodes = positional(args, 2, 6000)?;
            let every = positional(args, 3, 1)?;
            let threads = positional(args, 4, 2)?;
            let from = positional(args, 5, 0)?;
            let tally = label::relabel::<G>(input, out, nodes, every, threads, from).map_err(anyhow::Error::msg)?;
            eprintln!("{} positions searched, {} written", tally.searched, tally.written);
            Ok(())
        }
        "tune" => tune::<G>(&TuneArgs::parse(args)?),
        "spsa" => spsa_run::<G>(args),
        _ => bail!(USAGE),
    }
}

struct TuneArgs {
    data: Vec<String>,
    out: String,
    options: fit::Options,
    from_zero: bool,
    freeze: Vec<String>,
}

impl TuneArgs {
    fn parse(args: &[String]) -> Result<TuneArgs> {
        let options = fit::Options { epochs: 300, lambda: 0.7, l2: 0.0, rate: 1.0, batch: 0, frozen: Vec::new() };
        let mut t = TuneArgs { data: Vec::new(), out: String::new(), options, from_zero: false, freeze: Vec::new() };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = || it.next().with_context(|| format!("{a} needs a value"));
            match a.as_str() {
                "-o" => t.out = value()?.clone(),
                "--epochs" => t.options.epochs = value()?.parse()?,
                "--lambda" => t.options.lambda = value()?.parse()?,
                "--l2" => t.options.l2 = value()?.parse()?,
                "--rate" => t.options.rate = value()?.parse()?,
                "--batch" => t.options.batch = value()?.parse()?,
                "--freeze" => t.freeze.push(value()?.clone()),
                "--from-zero" => t.from_zero = true,
                s if s.starts_with('-') => bail!("unknown option {s}"),
                s => t.data.push(s.to_string()),
            }
        }
        if t.data.is_empty() || t.out.is_empty() {
            bail!("tune GAME DATA... -o OUT [--epochs N] [--lambda L] [--l2 X] [--rate R] [--batch B] [--from-zero]");
        }
        Ok(t)
    }
}

fn tune<G: Tunable>(args: &TuneArgs) -> Result<()> {
    let start = Instant::now();
    let (mut train, valid, skipped) = fit::load::<G>(&args.data).map_err(anyhow::Error::msg)?;
    eprintln!(
        "{} training and {} held-out positions, {skipped} left out (evaluation not linear there) ({:.1} s)",
        train.len(),
        valid.len(),
        start.elapsed().as_secs_f64()
    );
    let count = G::parameter_count();
    let first = if args.from_zero { vec![0.0; count] } else { G::shipped_parameters() };
    let mut options = args.options.clone();
    options.frozen = (0..count).map(|i| args.freeze.iter().any(|f| G::parameter_name(i).starts_with(f))).collect();
    let fitted = fit::fit(&mut train, &valid, first.clone(), &options, &mut |epoch, e, v| {
        eprintln!(
            "epoch {epoch}: training error {e:.6}, held-out error {v:.6} ({:.0} s)",
            start.elapsed().as_secs_f64()
        )
    });
    let lambda = options.lambda as f32;
    let stored = G::stored_parameters(&fitted.values);
    eprintln!(
        "K = {:.6}; best epoch {}: held-out error {:.6} (start {:.6}); stored values: training {:.6}, held-out {:.6}",
        fitted.k,
        fitted.best_epoch,
        fitted.best_error.1,
        fitted.start_error.1,
        train.error(&stored, fitted.k, lambda),
        valid.error(&stored, fitted.k, lambda),
    );
    let mut moved: Vec<(f32, usize)> =
        stored.iter().zip(&first).enumerate().map(|(i, (a, b))| ((a - b).abs(), i)).filter(|m| m.0 > 0.0).collect();
    moved.sort_by(|a, b| b.0.total_cmp(&a.0));
    eprintln!("{} of {count} values moved; the most:", moved.len());
    for &(_, i) in moved.iter().take(12) {
        eprintln!("  {}: {} -> {}", G::parameter_name(i), first[i], stored[i]);
    }
    let bytes = G::write_parameters(&fitted.values).map_err(anyhow::Error::msg)?;
    std::fs::write(&args.out, bytes).with_context(|| args.out.clone())?;
    eprintln!("wrote {}", args.out);
    Ok(())
}

fn net_chess(args: &[String]) -> Result<()> {
    let mut o = net::Options {
        hidden: kibitz::games::chess::net::HIDDEN,
        epochs: 30,
        lambda: 0.7,
        batch: 16_384,
        rate: 0.001,
        residual: false,
        threads: 2,
        seed: 1,
        mirror: false,
        buckets: 1,
        kings: false,
        factorise: false,
        init: None,
        smooth: None,
        k: None,
    };
    let (mut data, mut out, mut init) = (Vec::new(), String::new(), None);
    let (mut hidden_given, mut buckets_given) = (false, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "-o" => out = value()?.clone(),
            "--hidden" => {
                o.hidden = value()?.parse()?;
                hidden_given = true;
            }
            "--init" => init = Some(value()?.clone()),
            "--epochs" => o.epochs = value()?.parse()?,
            "--lambda" => o.lambda = value()?.parse()?,
            "--rate" => o.rate = value()?.parse()?,
            "--batch" => o.batch = value()?.parse()?,
            "--threads" => o.threads = value()?.parse()?,
            "--seed" => o.seed = value()?.parse()?,
            "--k" => o.k = Some(value()?.parse()?),
            "--residual" => o.residual = true,
            "--mirror" => o.mirror = true,
            "--kings" => o.kings = true,
            "--factorise" => o.factorise = true,
            "--smooth" => {
                let (lambda, plies) = (value()?.parse()?, it.next().context("--smooth needs LAMBDA PLIES")?.parse()?);
                if !(0.0..=1.0).contains(&lambda) || plies == 0 {
                    bail!("--smooth takes a LAMBDA from 0 to 1 and a number of PLIES above 0");
                }
                o.smooth = Some(net::Smoothing { lambda, plies });
            }
            "--buckets" => {
                o.buckets = value()?.parse()?;
                buckets_given = true;
            }
            s if s.starts_with('-') => bail!("unknown option {s}"),
            s => data.push(s.to_string()),
        }
    }
    if data.is_empty() || out.is_empty() {
        bail!(
            "net chess DATA... -o OUT [--hidden H] [--epochs N] [--lambda L] [--rate R] [--batch B] [--residual] \
             [--mirror] [--kings] [--factorise] [--buckets B] [--threads T] [--seed S] [--init NETWORK] \
             [--smooth LAMBDA PLIES] [--k K]"
        );
    }
    // Training further from a network file: its shape is the training's.
    if let Some(path) = &init {
        let bytes = std::fs::read(path).with_context(|| path.clone())?;
        let (net, scale, residual) =
            kibitz::games::chess::net::read_float(&bytes).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
        if residual != o.residual {
            bail!(
                "{path}: the network {} the hand-written evaluation; --residual must say the same",
                if residual { "corrects" } else { "replaces" }
            );
        }
        if hidden_given && o.hidden < net.hidden || buckets_given && o.buckets != net.b2.len() {
            bail!(
                "{path}: {} hidden values and {} output buckets, not what --hidden (at least as many) or --buckets say",
                net.hidden,
                net.b2.len()
            );
        }
        o.hidden = if hidden_given { o.hidden } else { net.hidden };
        o.buckets = net.b2.len();
        // A network with king regions trains on with them; one without gains them where --kings asks.
        o.kings |= net.inputs > kibitz::games::chess::net::INPUTS;
        o.init = Some((net, scale));
    }
    if o.factorise && !o.kings {
        bail!("--factorise factorises the king regions' weights: it needs --kings (or an --init network with regions)");
    }
    // Bounded before anything is allocated: the first layer alone is 768 × H floats (seven times that with
    // --kings, eight with --factorise), twice over for Adam.
    let max_hidden = kibitz::games::chess::net::MAX_TRAINED_HIDDEN;
    if !(1..=max_hidden).contains(&o.hidden) {
        bail!("--hidden {}: 1 to {max_hidden}", o.hidden);
    }
    let max_buckets = kibitz::games::chess::net::MAX_BUCKETS;
    if !(1..=max_buckets).contains(&o.buckets) {
        bail!("--buckets {}: 1 to {max_buckets}", o.buckets);
    }
    if o.epochs == 0 || o.batch == 0 || !(1..=64).contains(&o.threads) {
        bail!("--epochs and --batch must be at least 1, --threads 1 to 64");
    }
    if !((0.0..=1.0).contains(&o.lambda) && o.rate > 0.0 && o.rate.is_finite()) {
        bail!("--lambda is 0 to 1 and --rate a positive number");
    }
    let hidden = kibitz::games::chess::net::HIDDEN;
    if o.hidden != hidden {
        eprintln!(
            "note: --hidden {}: this engine reads networks of {hidden} hidden values; to play with this one, set \
             `HIDDEN` in src/games/chess/net.rs to {} and build it again",
            o.hidden, o.hidden
        );
    }
    let start = Instant::now();
    let trained =
        net::train::<Chess>(&data, &o, &mut |line| eprintln!("{line} ({:.0} s)", start.elapsed().as_secs_f64()))
            .map_err(anyhow::Error::msg)?;
    eprintln!(
        "best epoch {}: held-out error {:.6} (the hand-written evaluation's {:.6}); {:.1} centi-pawns an output unit",
        trained.best_epoch, trained.best_error, trained.hand_error, trained.scale
    );
    let bytes =
        kibitz::games::chess::net::write(&trained.net, trained.scale, o.residual).map_err(anyhow::Error::msg)?;
    if o.hidden == hidden {
        kibitz::games::chess::net::Network::from_bytes(&bytes).map_err(anyhow::Error::msg)?;
    }
    std::fs::write(&out, bytes).with_context(|| out.clone())?;
    eprintln!("wrote {out}");
    Ok(())
}
