//! The `kibitz` command line: serve, analyse, annotate, match, perft, bench, engine, engines, dxp, board,
//! openapi. This file parses the arguments, starts the logging and dispatches; each subcommand's code is in `cli/`.

mod cli;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "kibitz", version, about = "An analysis engine server for board games")]
struct Cli {
    /// Log lines as text, or as one JSON object per line (for log collectors).
    #[arg(long, global = true, env = "KIBITZ_LOG_FORMAT", value_enum, default_value = "text")]
    log_format: kibitz::logging::LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server.
    Serve(cli::serve::ServeArgs),
    /// Analyse one position and print the lines as they deepen.
    Analyse(cli::analyse::AnalyseArgs),
    /// Annotate a file of games: every move judged, the better line shown.
    Annotate(cli::annotate::AnnotateArgs),
    /// Play a match between two engines (kibitz's own or external ones) and rate the result.
    Match(cli::match_cmd::MatchArgs),
    /// Count the leaf nodes of the move tree (move generator check and speed).
    Perft(cli::perft::PerftArgs),
    /// Search a fixed set of positions per game and print the speed.
    Bench(cli::bench::BenchArgs),
    /// Speak a legacy engine protocol on stdin/stdout.
    Engine {
        /// The protocol: `uci` (the Universal Chess Interface: chess, and xiangqi through `UCI_Variant`), `hub`
        /// (Hub version 2: international draughts), `ucci` (the Universal Chinese Chess Interface), `checkers` (the Checkers Protocol), `qianhong` (the Qianhong plugin protocol), `uhp` (the Universal
        /// Hive Protocol) or `guide` (GUIDE, which GUIs speak over TCP: see `kibitz-guide`; on
        /// stdin/stdout for testing by hand).
        protocol: String,
        /// `-engine NAME` (or `--engine NAME`): analyse and play with that external engine of the engines file
        /// instead of kibitz's own; `-engines PATH` (or `--engines PATH`): the engines file, by default
        /// `KIBITZ_ENGINES`. A bad name or file exits with 2 before the session starts.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "-engine NAME -engines PATH")]
        args: Vec<String>,
    },
    /// External engines of an engines file.
    #[command(subcommand)]
    Engines(cli::engines::EnginesCommand),
    /// Play international draughts against another program over DXP (the DamExchange Protocol, TCP).
    Dxp(cli::dxp::DxpArgs),
    /// Draw a position as an SVG picture (the last move highlighted, arrows for a line).
    Board(cli::board::BoardArgs),
    /// Print the API's OpenAPI document.
    Openapi,
    /// Make, list and revoke API keys (for `kibitz serve --auth optional|required`).
    #[command(subcommand)]
    Keys(cli::keys::KeysCommand),
    /// What the analysis cache holds by engine, and deleting the results of kibitz's other builds.
    #[command(subcommand)]
    Cache(cli::cache::CacheCommand),
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    // The annotate command draws progress bars on stderr: only warnings go there unless KIBITZ_LOG says more.
    let default_level = if matches!(cli.command, Command::Annotate(_)) { "warn" } else { "info" };
    kibitz::logging::init_as(default_level, cli.log_format);
    // A chess network named by KIBITZ_CHESS_NET that cannot be used stops every command that searches before
    // it starts, not in its first chess search.
    let searches = matches!(
        cli.command,
        Command::Serve(_) | Command::Analyse(_) | Command::Annotate(_) | Command::Match(_) | Command::Bench(_)
    );
    if searches {
        kibitz::games::chess::check_network().map_err(anyhow::Error::msg)?;
    }
    match cli.command {
        Command::Serve(args) => cli::serve::run(args),
        Command::Analyse(args) => cli::analyse::run(args),
        Command::Annotate(args) => cli::annotate::run(args),
        Command::Match(args) => cli::match_cmd::run(args),
        Command::Perft(args) => cli::perft::run(args),
        Command::Bench(args) => cli::bench::run(&args),
        Command::Engine { protocol, args } => cli::engine::run(&protocol, &args),
        Command::Engines(command) => cli::engines::run(command),
        Command::Dxp(args) => cli::dxp::run(args),
        Command::Board(args) => cli::board::run(args),
        Command::Keys(command) => cli::keys::run(command),
        Command::Cache(command) => cli::cache::run(command),
        Command::Openapi => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(kibitz::http::openapi::document_text().as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| anyhow::anyhow!("cannot write to standard output: {e}"))
        }
    }
}
