//! `kibitz board <game>`: the picture of a position as SVG, on stdout or into a file.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

use kibitz::game::{self, Game};
use kibitz::games::GameKind;
use kibitz::picture::{self, Options};
use kibitz::with_game;

use super::read_position;

#[derive(Args)]
pub struct BoardArgs {
    /// checkers, draughts, hive, xiangqi or chess.
    pub game: String,
    /// The position in any format the game accepts (default: the start position).
    #[arg(long)]
    pub position: Option<String>,
    /// Moves played from the position, comma-separated; the last one is highlighted.
    #[arg(long, value_delimiter = ',')]
    pub moves: Vec<String>,
    /// A line of moves played from the position reached, comma-separated, drawn as arrows.
    #[arg(long, value_delimiter = ',')]
    pub arrows: Vec<String>,
    /// Turn the board round.
    #[arg(long)]
    pub flip: bool,
    /// Width in pixels (100-2000).
    #[arg(long, default_value_t = picture::DEFAULT_SIZE)]
    pub size: u32,
    /// Write the SVG to this file instead of stdout.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
}

pub fn run(args: BoardArgs) -> Result<()> {
    let kind: GameKind = args.game.parse()?;
    let svg = with_game!(kind, G => board::<G>(&args))?;
    match &args.output {
        Some(path) => std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display())),
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(svg.as_bytes())?;
            out.flush()?;
            Ok(())
        }
    }
}

fn words(list: &[String]) -> Vec<&str> {
    list.iter().map(|s| s.trim()).filter(|s| !s.is_empty()).collect()
}

fn board<G: Game>(args: &BoardArgs) -> Result<String> {
    let size = match picture::check_size(args.size) {
        Ok(size) => size,
        Err(e) => bail!("--size: {e}"),
    };
    let root: G = read_position(args.position.as_deref())?;
    let mut g = root.clone();
    let played = game::play_moves(&mut g, &words(&args.moves)).context("--moves")?;
    let mut after = g.clone();
    let line = game::play_moves(&mut after, &words(&args.arrows)).context("--arrows")?;
    let before = played.split_last().map(|(&last, earlier)| {
        let mut b = root.clone();
        for &m in earlier {
            b.make(m);
        }
        (b, last)
    });
    let last = before.as_ref().map(|(b, m)| (b, *m));
    Ok(picture::render(&g, last, &line, Options { flip: args.flip, size }))
}
