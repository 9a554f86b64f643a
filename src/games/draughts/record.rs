//! International draughts game records: PDN collections and GUIDE game strings (one a line), and the
//! annotated PDN export.

use super::{Draughts, Move, notation};
use crate::game::{
    BudgetError, GameRecord, NotationError, PlyNote, ReadError, RecordBudget, RecordError, Records, gather_records,
};
use crate::games::pgn;

/// Read a PDN collection (`pdn`) or GUIDE game strings (`guide`); `None` picks GUIDE when the first line
/// starts with a GUIDE position (`white`/`black` and 50 squares).
pub fn parse(text: &str, format: Option<&str>, budget: &mut RecordBudget) -> Result<Records<Draughts>, ReadError> {
    let format = match format {
        Some(f) => f,
        None if notation::looks_like_guide(pgn::first_line(text)) => "guide",
        None => "pdn",
    };
    match format {
        "pdn" => Ok(pgn::parse_pdn(text, "20", budget, |g: &Draughts, t| g.parse_pdn_move(t))?),
        "guide" => Ok(parse_guide(text, budget)?),
        f => Err(NotationError::new(f, "unknown record format (known: pdn, guide)").into()),
    }
}

/// GUIDE game strings, one a line (`<position> <nr_moves> m <move> m <move> ...`); blank lines and lines
/// starting with `#` are skipped.
fn parse_guide(text: &str, budget: &mut RecordBudget) -> Result<Records<Draughts>, BudgetError> {
    let lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let games = lines.enumerate().map(|(index, (n, line))| {
        // Each move is written after an `m`.
        let written = line.split_whitespace().filter(|t| t.eq_ignore_ascii_case("m")).count() as u64;
        let read = move || match Draughts::parse_guide_game(line) {
            Ok((start, moves)) => Ok(GameRecord { tags: Vec::new(), start, moves, result: None, line: n + 1, remarks: Default::default() }),
            Err(e) => Err(RecordError {
                index,
                line: n + 1,
                token: e.token,
                message: e.message.replacen("illegal move", "illegal in this position", 1),
            }),
        };
        (n + 1, written, read)
    });
    gather_records(games, budget)
}

/// Write an annotated game as PDN, moves in the shortest unambiguous PDN.
pub fn export(record: &GameRecord<Draughts>, notes: &[PlyNote<Move>]) -> String {
    pgn::export_pdn(record, notes, "20", |g: &Draughts, m| g.pdn_move(m))
}
