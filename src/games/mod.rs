//! Every game's rules and notations, one folder each, and [`GameKind`]: the one registry that maps a name to a
//! game. Front ends that take a game by name (the CLI, the API) dispatch through [`with_game!`], which
//! monomorphises their generic code for each game.

pub mod checkers;
pub mod chess;
pub mod draughts;
pub mod hive;
pub mod pdn;
pub mod pgn;
pub mod xiangqi;

use std::fmt;
use std::str::FromStr;

/// The games kibitz knows. Adding a game is one folder in `games/` and one line in each list below.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GameKind {
    Checkers,
    Draughts,
    Hive,
    Xiangqi,
    Chess,
}

impl GameKind {
    /// Every game, in the order the API lists them.
    pub const ALL: &'static [GameKind] =
        &[GameKind::Checkers, GameKind::Draughts, GameKind::Hive, GameKind::Xiangqi, GameKind::Chess];

    /// Names that are reserved for games still to come: asking for one answers "not yet" rather than
    /// "unknown".
    pub const PLANNED: &'static [&'static str] = &[];

    pub fn name(self) -> &'static str {
        use crate::game::Game;
        match self {
            GameKind::Checkers => checkers::Checkers::NAME,
            GameKind::Draughts => draughts::Draughts::NAME,
            GameKind::Hive => hive::Hive::NAME,
            GameKind::Xiangqi => xiangqi::Xiangqi::NAME,
            GameKind::Chess => chess::Chess::NAME,
        }
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A game name that is not (yet) served.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnknownGame {
    #[error("game `{0}` is not implemented yet")]
    NotYet(String),
    #[error("unknown game `{0}` (known: {1})")]
    Unknown(String, String),
}

impl FromStr for GameKind {
    type Err = UnknownGame;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        if let Some(kind) = GameKind::ALL.iter().find(|k| k.name() == wanted) {
            return Ok(*kind);
        }
        if GameKind::PLANNED.contains(&wanted.as_str()) {
            return Err(UnknownGame::NotYet(s.to_string()));
        }
        let known: Vec<&str> = GameKind::ALL.iter().map(|k| k.name()).collect();
        Err(UnknownGame::Unknown(s.to_string(), known.join(", ")))
    }
}

/// Run generic code for the game a [`GameKind`] names: `with_game!(kind, G => body)` evaluates `body` with
/// the type alias `G` bound to that game's type.
#[macro_export]
macro_rules! with_game {
    ($kind:expr, $g:ident => $body:expr) => {
        match $kind {
            $crate::games::GameKind::Checkers => {
                type $g = $crate::games::checkers::Checkers;
                $body
            }
            $crate::games::GameKind::Draughts => {
                type $g = $crate::games::draughts::Draughts;
                $body
            }
            $crate::games::GameKind::Hive => {
                type $g = $crate::games::hive::Hive;
                $body
            }
            $crate::games::GameKind::Xiangqi => {
                type $g = $crate::games::xiangqi::Xiangqi;
                $body
            }
            $crate::games::GameKind::Chess => {
                type $g = $crate::games::chess::Chess;
                $body
            }
        }
    };
}
