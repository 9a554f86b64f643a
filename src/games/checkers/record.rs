//! English checkers game records: PDN collections (`GameType "21"`), and the annotated PDN export.

use super::{Checkers, Move};
use crate::game::{GameRecord, NotationError, PlyNote, ReadError, RecordBudget, Records};
use crate::games::pgn;

/// Read a PDN collection.
pub fn parse(text: &str, format: Option<&str>, budget: &mut RecordBudget) -> Result<Records<Checkers>, ReadError> {
    match format {
        None | Some("pdn") => Ok(pgn::parse_pdn(text, "21", budget, |g: &Checkers, t| g.parse_move_text(t))?),
        Some(f) => Err(NotationError::new(f, "unknown record format (known: pdn)").into()),
    }
}

/// Write an annotated game as PDN (jumps with every landing square).
pub fn export(record: &GameRecord<Checkers>, notes: &[PlyNote<Move>]) -> String {
    pgn::export_pdn(record, notes, "21", |_: &Checkers, m| Checkers::move_to_pdn(m))
}
