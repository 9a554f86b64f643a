//! How a game's positions and moves are written for a UCI engine: the per-game hook [`UciNotation`].
//!
//! Each game writes and reads through its own notation functions (`format_position`, `format_move_as`,
//! `parse_move`), so every move an engine sends is checked by kibitz's rules; this file only adapts the text
//! where an engine's coordinates differ from kibitz's.

use crate::game::{Game, NotationError};
use crate::games::chess::Chess;
use crate::games::xiangqi::Xiangqi;

/// An option a game needs set on the engine before it searches a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciSetting {
    pub name: &'static str,
    pub value: String,
    /// An engine without the option cannot search the position (otherwise the setting is skipped there).
    pub required: bool,
}

/// A game a UCI engine can analyse.
pub trait UciNotation: Game {
    /// Options this position needs (the variant for multi-variant engines, Chess960 castling...).
    fn uci_settings(&self) -> Vec<UciSetting>;

    /// The position for `position fen`.
    fn uci_position(&self) -> Result<String, NotationError> {
        self.format_position(None)
    }

    /// A legal move of this position as the engine writes it.
    fn uci_move(&self, m: Self::Move) -> String;

    /// A move as the engine wrote it, checked legal here by the game's own rules.
    fn parse_uci_move(&self, text: &str) -> Result<Self::Move, NotationError>;

    /// This position set up afresh, without the moves that led to it, when none of them can matter any more
    /// (the last move was irreversible, so no earlier position can come again); `None` otherwise. A long
    /// move list is kept short this way: each copy of a game (one per search thread) carries its moves.
    fn without_history(&self) -> Option<Self> {
        None
    }
}

impl UciNotation for Chess {
    fn uci_settings(&self) -> Vec<UciSetting> {
        vec![
            UciSetting { name: "UCI_Variant", value: "chess".into(), required: false },
            UciSetting { name: "UCI_Chess960", value: self.is_chess960().to_string(), required: self.is_chess960() },
        ]
    }

    fn uci_move(&self, m: Self::Move) -> String {
        self.move_to_uci(m)
    }

    fn parse_uci_move(&self, text: &str) -> Result<Self::Move, NotationError> {
        // A promotion letter in upper case, as some GUIs write it (`a7a8Q`), is the same move.
        let lowered;
        let text = match text.as_bytes() {
            [.., b'Q' | b'R' | b'B' | b'N'] if text.len() == 5 => {
                lowered = format!("{}{}", &text[..4], text[4..].to_ascii_lowercase());
                lowered.as_str()
            }
            _ => text,
        };
        coordinate_shaped(text)?;
        // The strict reader: the game's own (`parse_move`) also takes SAN and what follows a move in records
        // (`e2e4x` read as e2e4), which an engine's answer must not be.
        match crate::games::chess::notation::parse_uci(self.board(), text) {
            Some(m) => Ok(m),
            None => Err(self.parse_move(text).err().unwrap_or_else(|| {
                NotationError::new(text, "not a move in coordinates (a promotion is one of q, r, b, n)")
            })),
        }
    }

    fn without_history(&self) -> Option<Self> {
        // After a capture or a pawn move no earlier position can come again; from the fifty-move count on, the
        // game is drawn whatever came before (until such a move starts the count again). A Chess960 set-up
        // keeps its own castling notation, which a FEN does not always say: it is left as it is.
        let count = self.board().halfmove_clock();
        if (count != 0 && count < crate::games::chess::FIFTY_MOVE_PLIES) || self.is_chess960() {
            return None;
        }
        Chess::parse_position(&self.format_position(None).ok()?, None).ok()
    }
}

impl UciNotation for Xiangqi {
    fn uci_settings(&self) -> Vec<UciSetting> {
        vec![UciSetting { name: "UCI_Variant", value: "xiangqi".into(), required: true }]
    }

    /// Fairy-Stockfish numbers the ranks 1-10 where kibitz's coordinates use 0-9: `h2e2` is `h3e3` there.
    fn uci_move(&self, m: Self::Move) -> String {
        let coord = Xiangqi::move_to_coord(m);
        shift_ranks(&coord, 1).unwrap_or(coord)
    }

    fn parse_uci_move(&self, text: &str) -> Result<Self::Move, NotationError> {
        let ours = shift_ranks(text, -1).ok_or_else(|| NotationError::new(text, "not a move in coordinates"))?;
        self.parse_move(&ours).map_err(|e| NotationError::new(text, e.message))
    }
}

/// A UCI move is two squares (a letter and a number each) and an optional promotion letter, nothing else.
fn coordinate_shaped(text: &str) -> Result<(), NotationError> {
    let b = text.as_bytes();
    let square =
        |i: usize| b.get(i).is_some_and(u8::is_ascii_lowercase) && b.get(i + 1).is_some_and(u8::is_ascii_digit);
    let ok = (4..=5).contains(&b.len()) && square(0) && square(2) && b.get(4).is_none_or(u8::is_ascii_lowercase);
    if ok { Ok(()) } else { Err(NotationError::new(text, "not a move in coordinates")) }
}

/// Coordinates (`h3e3`, `a10a9`) with every rank number moved by `delta`; `None` when the text is not a
/// sequence of squares (a lower-case letter and a number) or a rank would become negative.
pub fn shift_ranks(text: &str, delta: i32) -> Option<String> {
    let b = text.as_bytes();
    if b.is_empty() || b.len() > 12 {
        return None;
    }
    let mut out = String::with_capacity(b.len() + 2);
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_lowercase() {
            return None;
        }
        out.push(b[i] as char);
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start || i - start > 2 {
            return None;
        }
        let rank: i32 = text[start..i].parse().ok()?;
        let shifted = rank + delta;
        if shifted < 0 {
            return None;
        }
        out.push_str(&shifted.to_string());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_move_is_coordinates_and_nothing_else() {
        let g = Chess::start();
        assert!(g.parse_uci_move("e2e4").is_ok());
        for bad in ["e2e4x", "e2e4+", "e2-e4", "E2E4", "e4", "e2e4q", "Nf3", "e2e4 "] {
            assert!(g.parse_uci_move(bad).is_err(), "{bad} was read");
        }
        let promote = Chess::parse_position("8/P6k/8/8/8/8/8/K7 w - - 0 1", None).expect("fen");
        assert!(promote.parse_uci_move("a7a8Q").is_ok() && promote.parse_uci_move("a7a8q").is_ok());
        assert!(promote.parse_uci_move("a7a8").is_err(), "a promotion says its piece");
        let x = Xiangqi::start();
        assert!(x.parse_uci_move("h3e3").is_ok());
        for bad in ["h3e3x", "h3e3+", "h3-e3", "h2e2", "H3E3"] {
            assert!(x.parse_uci_move(bad).is_err(), "{bad} was read");
        }
    }

    #[test]
    fn a_chess_game_forgets_its_moves_only_when_they_cannot_matter() {
        let play = |g: &mut Chess, moves: &[&str]| {
            for m in moves {
                let mv = g.parse_uci_move(m).expect("legal");
                g.make(mv);
            }
        };
        let mut g = Chess::start();
        play(&mut g, &["g1f3", "g8f6"]);
        assert!(g.without_history().is_none(), "a repetition could still come back to the start");
        play(&mut g, &["e2e4"]);
        let fresh = g.without_history().expect("a pawn move");
        assert_eq!(fresh.format_position(None).ok(), g.format_position(None).ok());
        assert_eq!(fresh.rule_state_key(), g.rule_state_key());
        // Past the fifty-move count the game is drawn however it came there, and stays drawn once set up afresh.
        for _ in 0..26 {
            play(&mut g, &["f6g8", "f3g1", "g8f6", "g1f3"]);
        }
        assert!(g.outcome().is_some());
        let fresh = g.without_history().expect("past the count");
        // (Drawn by the count rather than by the repetition it forgot.)
        assert_eq!(fresh.outcome().map(|e| e.outcome), g.outcome().map(|e| e.outcome));
        assert_eq!(fresh.format_position(None).ok(), g.format_position(None).ok());
        // A Chess960 set-up is left as it is.
        let g = Chess::parse_position("nrbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBKQBRN w GBgb - 0 1", None).expect("960");
        assert!(g.is_chess960() && g.without_history().is_none());
    }

    #[test]
    fn ranks_shift_both_ways() {
        assert_eq!(shift_ranks("h2e2", 1).as_deref(), Some("h3e3"));
        assert_eq!(shift_ranks("a9a8", 1).as_deref(), Some("a10a9"));
        assert_eq!(shift_ranks("a10a9", -1).as_deref(), Some("a9a8"));
        assert_eq!(shift_ranks("a1a0", -1), None);
        assert_eq!(shift_ranks("h3", -1).as_deref(), Some("h2"));
        for bad in ["", "H3E3", "h3-e3", "hh", "h123a1", "(none)", "0000"] {
            assert_eq!(shift_ranks(bad, -1), None, "{bad}");
        }
    }

    #[test]
    fn xiangqi_moves_round_trip_through_engine_coordinates() {
        let game = Xiangqi::start();
        let mut moves = Vec::new();
        game.generate_moves(&mut moves);
        assert_eq!(moves.len(), 44);
        for m in moves {
            let text = game.uci_move(m);
            assert_eq!(game.parse_uci_move(&text), Ok(m), "{text}");
        }
        let cannon = game.parse_uci_move("h3e3").expect("the central cannon opening");
        assert_eq!(Xiangqi::move_to_coord(cannon), "h2e2");
        assert!(game.parse_uci_move("h2e2").is_err(), "h2 is empty in the engine's numbering");
    }

    #[test]
    fn chess_moves_are_coordinates_only() {
        let game = Chess::start();
        let m = game.parse_uci_move("g1f3").expect("legal");
        assert_eq!(game.uci_move(m), "g1f3");
        assert!(game.parse_uci_move("Nf3").is_err());
        assert!(game.parse_uci_move("e2e5").is_err());
        assert!(game.parse_uci_move("e7e8qq").is_err());
    }
}
