//! Hive game records: UHP GameStrings, one a line (blank lines and lines starting with `#` skipped). No
//! annotated export: Hive has no common annotated format.

use super::Hive;
use crate::game::{GameRecord, NotationError, ReadError, RecordBudget, RecordError, Records, gather_records};

/// Read GameStrings, one a line.
pub fn parse(text: &str, format: Option<&str>, budget: &mut RecordBudget) -> Result<Records<Hive>, ReadError> {
    match format {
        None | Some("gamestring") => {}
        Some(f) => return Err(NotationError::new(f, "unknown record format (known: gamestring)").into()),
    }
    let lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let games = lines.enumerate().map(|(index, (n, line))| {
        // The moves are the fields after GameType;GameState;Turn.
        let written = line.bytes().filter(|&b| b == b';').count().saturating_sub(2) as u64;
        (n + 1, written, move || game(index, n + 1, line))
    });
    Ok(gather_records(games, budget)?)
}

fn game(index: usize, line: usize, text: &str) -> Result<GameRecord<Hive>, RecordError> {
    let game = Hive::from_game_string(text).map_err(|e| {
        // Move errors read "move N `token`: reason"; a reason in Mzinga's words (a sentence) is a move that
        // is well formed but not legal where it is played.
        let message = match e.message.split_once("`: ") {
            Some((head, reason)) if head.starts_with("move ") && reason.ends_with('.') => {
                format!("{head}`: illegal in this position: {reason}")
            }
            _ => e.message,
        };
        RecordError { index, line, token: e.token, message }
    })?;
    let start = Hive::new(game.game_type());
    let state = text.split(';').nth(1).map(str::trim).unwrap_or("");
    let result =
        ["WhiteWins", "BlackWins", "Draw"].iter().find(|s| s.eq_ignore_ascii_case(state)).map(|s| s.to_string());
    Ok(GameRecord { tags: Vec::new(), start, moves: game.moves(), result, line, remarks: Default::default() })
}
