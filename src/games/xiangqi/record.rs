//! Xiangqi game records: PGN with ICCS moves (`[Format "ICCS"]`, also plain coordinate moves; a `FEN` tag),
//! and `moves`: a FEN line followed by ICCS or coordinate moves, games separated by blank lines (a game with
//! no FEN line starts from the start position). No annotated export: xiangqi has no common one.

use super::{Move, Xiangqi, notation};
use crate::game::{Game, GameRecord, NotationError, RecordError};
use crate::games::pgn::{self, MoveToken, RawGame};

/// Read a record; `None` picks `pgn` when the text starts with a tag pair or numbers its moves (`1.`),
/// else `moves`.
pub fn parse(text: &str, format: Option<&str>) -> Result<Vec<Result<GameRecord<Xiangqi>, RecordError>>, NotationError> {
    let format = match format {
        Some(f) => f,
        None => {
            let first = pgn::first_line(text);
            let numbered = || {
                text.split_whitespace().take(64).any(|t| {
                    let d = t.bytes().take_while(u8::is_ascii_digit).count();
                    d > 0 && t.as_bytes().get(d) == Some(&b'.')
                })
            };
            if first.starts_with('[') || !first.contains('/') && numbered() { "pgn" } else { "moves" }
        }
    };
    match format {
        "pgn" => Ok(parse_pgn(text)),
        "moves" => Ok(parse_moves(text)),
        f => Err(NotationError::new(f, "unknown record format (known: pgn, moves)")),
    }
}

/// Read an ICCS (`H2-E2`) or coordinate (`h2e2`) move; a well-formed move that cannot be played here is
/// called illegal.
fn parse_move(g: &Xiangqi, text: &str) -> Result<Move, NotationError> {
    let well_formed = notation::parse_points(text).is_ok();
    g.parse_move_text(text).map_err(|e| {
        if well_formed && !e.message.starts_with("illegal move") {
            NotationError { token: e.token, message: format!("illegal move: {}", e.message) }
        } else {
            e
        }
    })
}

fn parse_pgn(text: &str) -> Vec<Result<GameRecord<Xiangqi>, RecordError>> {
    let one = |index: usize, raw: RawGame| -> Result<GameRecord<Xiangqi>, RecordError> {
        if let Some(f) = raw.error.clone() {
            return Err(RawGame::error_at(index, f));
        }
        if let Some(tag) = raw.tag("Format")
            && !tag.value.trim().eq_ignore_ascii_case("ICCS")
        {
            return Err(pgn::tag_error(index, tag, "move format not supported (ICCS and coordinate moves only)"));
        }
        let start = match raw.tag("FEN") {
            Some(tag) => Xiangqi::from_fen(&tag.value).map_err(|e| RecordError {
                index,
                line: tag.line,
                token: e.token,
                message: format!("FEN tag: {}", e.message),
            })?,
            None => Xiangqi::start(),
        };
        let first = start.fullmove();
        pgn::build_record(index, raw, start, first, parse_move)
    };
    pgn::read_games(text, pgn::PGN_RESULTS).into_iter().enumerate().map(|(i, raw)| one(i, raw)).collect()
}

/// Games separated by blank lines: an optional FEN line, then moves (move numbers and a final result
/// token allowed); lines starting with `#` are skipped.
fn parse_moves(text: &str) -> Vec<Result<GameRecord<Xiangqi>, RecordError>> {
    let mut blocks: Vec<Vec<(usize, &str)>> = Vec::new();
    let mut cur: Vec<(usize, &str)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            if !cur.is_empty() {
                blocks.push(std::mem::take(&mut cur));
            }
        } else if !t.starts_with('#') {
            cur.push((n + 1, t));
        }
    }
    if !cur.is_empty() {
        blocks.push(cur);
    }
    blocks.into_iter().enumerate().map(|(index, block)| moves_game(index, &block)).collect()
}

fn moves_game(index: usize, block: &[(usize, &str)]) -> Result<GameRecord<Xiangqi>, RecordError> {
    let (first_line, first) = block[0];
    let fen = first.split_whitespace().next().is_some_and(|t| t.contains('/'));
    let start = if fen {
        Xiangqi::from_fen(first).map_err(|e| RecordError {
            index,
            line: first_line,
            token: e.token,
            message: format!("FEN: {}", e.message),
        })?
    } else {
        Xiangqi::start()
    };
    let mut raw = RawGame { line: first_line, ..RawGame::default() };
    for &(line, text) in &block[usize::from(fen)..] {
        for tok in text.split_whitespace() {
            if let Some(r) = &raw.result {
                return Err(RecordError {
                    index,
                    line,
                    token: tok.chars().take(80).collect(),
                    message: format!("unexpected text after the result `{r}`"),
                });
            }
            if pgn::PGN_RESULTS.contains(&tok) {
                raw.result = Some(tok.to_string());
                continue;
            }
            let digits = tok.bytes().take_while(u8::is_ascii_digit).count();
            let dots = tok[digits..].bytes().take_while(|&c| c == b'.').count();
            let m = if digits > 0 && dots > 0 { &tok[digits + dots..] } else { tok };
            if !m.is_empty() {
                raw.moves.push(MoveToken { text: m.to_string(), line });
            }
        }
    }
    let first_number = start.fullmove();
    pgn::build_record(index, raw, start, first_number, parse_move)
}
