//! Every game's rules and notations, one folder each, and [`GameKind`]: the one registry that maps a name to a
//! game. Front ends that take a game by name (the CLI, the API) dispatch through [`with_game!`], which
//! monomorphises their generic code for each game.

pub mod pdn;
pub mod pgn;

use std::fmt;
use std::str::FromStr;

/// The one list of games: a game is one folder in `games/` and one line here (its variant, its module and its
/// type). The game modules, [`GameKind`], [`GameKind::ALL`], [`GameKind::name`] and [`with_game!`] are all
/// generated from it.
#[macro_export]
#[doc(hidden)]
macro_rules! __kibitz_games {
    ($callback:ident { $($args:tt)* }) => {
        $crate::$callback! { { $($args)* }
            Checkers => checkers::Checkers,
            Draughts => draughts::Draughts,
            Hive => hive::Hive,
            Xiangqi => xiangqi::Xiangqi,
            Chess => chess::Chess,
        }
    };
}

/// Generates [`GameKind`] from the list.
#[macro_export]
#[doc(hidden)]
macro_rules! __kibitz_game_kinds {
    ({} $($variant:ident => $module:ident :: $ty:ident,)*) => {
        $(pub mod $module;)*

        /// The games kibitz knows (see the list in `games/mod.rs`).
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        pub enum GameKind {
            $($variant,)*
        }

        impl GameKind {
            /// Every game, in the order the API lists them.
            pub const ALL: &'static [GameKind] = &[$(GameKind::$variant,)*];

            pub fn name(self) -> &'static str {
                use $crate::game::Game;
                match self {
                    $(GameKind::$variant => $module::$ty::NAME,)*
                }
            }
        }
    };
}

__kibitz_games!(__kibitz_game_kinds {});

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A game name that is not served.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown game `{name}` (known: {known})")]
pub struct UnknownGame {
    pub name: String,
    pub known: String,
}

impl FromStr for GameKind {
    type Err = UnknownGame;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        if let Some(kind) = GameKind::ALL.iter().find(|k| k.name() == wanted) {
            return Ok(*kind);
        }
        let known: Vec<&str> = GameKind::ALL.iter().map(|k| k.name()).collect();
        Err(UnknownGame { name: s.to_string(), known: known.join(", ") })
    }
}

/// Generates the `match` of [`with_game!`] from the list.
#[macro_export]
#[doc(hidden)]
macro_rules! __kibitz_game_dispatch {
    ({ $kind:expr, $g:ident, $body:expr } $($variant:ident => $module:ident :: $ty:ident,)*) => {
        match $kind {
            $($crate::games::GameKind::$variant => {
                type $g = $crate::games::$module::$ty;
                $body
            })*
        }
    };
}

/// Run generic code for the game a [`GameKind`] names: `with_game!(kind, G => body)` evaluates `body` with
/// the type alias `G` bound to that game's type.
#[macro_export]
macro_rules! with_game {
    ($kind:expr, $g:ident => $body:expr) => {
        $crate::__kibitz_games!(__kibitz_game_dispatch { $kind, $g, $body })
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;

    #[test]
    fn every_kind_parses_its_own_name_and_dispatches_to_its_game() {
        assert!(!GameKind::ALL.is_empty());
        for &kind in GameKind::ALL {
            assert_eq!(kind.name().parse::<GameKind>(), Ok(kind));
            assert_eq!(kind.name().to_ascii_uppercase().parse::<GameKind>(), Ok(kind));
            assert_eq!(with_game!(kind, G => G::NAME), kind.name());
        }
        let names: std::collections::HashSet<&str> = GameKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names.len(), GameKind::ALL.len(), "two games share a name");
        let e = "go".parse::<GameKind>().expect_err("not a game");
        assert!(e.to_string().contains(GameKind::ALL[0].name()), "{e}");
    }
}
