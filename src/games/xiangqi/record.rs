//! Xiangqi game records: PGN with ICCS moves (`[Format "ICCS"]`, also plain coordinate moves; a `FEN` tag),
//! and `moves`: a FEN line followed by ICCS or coordinate moves, games separated by blank lines (a game with
//! no FEN line starts from the start position). No annotated export: xiangqi has no common one.

use super::{Move, Xiangqi, notation};
use crate::game::{
    BudgetError, Game, GameRecord, NotationError, ReadError, RecordBudget, RecordError, Records, gather_records,
};
use crate::games::pgn::{self, MoveToken, RawGame};

/// Read a record; `None` picks `pgn` when the text starts with a tag pair or numbers its moves (`1.`),
/// else `moves`.
pub fn parse(text: &str, format: Option<&str>, budget: &mut RecordBudget) -> Result<Records<Xiangqi>, ReadError> {
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
        "pgn" => Ok(parse_pgn(text, budget)?),
        "moves" => Ok(parse_moves(text, budget)?),
        f => Err(NotationError::new(f, "unknown record format (known: pgn, moves)").into()),
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

fn parse_pgn(text: &str, budget: &mut RecordBudget) -> Result<Records<Xiangqi>, BudgetError> {
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
    pgn::read_records(text, pgn::PGN_RESULTS, budget, one)
}

/// Games separated by blank lines: an optional FEN line, then moves (move numbers and a final result
/// token allowed); lines starting with `#` are skipped.
fn parse_moves(text: &str, budget: &mut RecordBudget) -> Result<Records<Xiangqi>, BudgetError> {
    let games = Blocks { rest: text, line: 1 }.enumerate().map(|(index, block)| {
        let written = block.move_tokens().filter(|(_, t)| !pgn::PGN_RESULTS.contains(t)).count() as u64;
        (block.first_line, written, move || moves_game(index, &block))
    });
    gather_records(games, budget)
}

/// The games of a `moves` text, one at a time, each as the part of the text it spans.
struct Blocks<'a> {
    rest: &'a str,
    /// The line `rest` begins on.
    line: usize,
}

/// The text of one game of a `moves` text: its lines, from its first that is neither blank nor a comment up
/// to the next blank line.
struct Block<'a> {
    text: &'a str,
    first_line: usize,
}

impl<'a> Iterator for Blocks<'a> {
    type Item = Block<'a>;

    fn next(&mut self) -> Option<Block<'a>> {
        let text = self.rest;
        let mut start = None;
        let mut offset = 0;
        for piece in text.split_inclusive('\n') {
            let t = piece.trim();
            if t.is_empty() {
                if let Some((from, first_line)) = start {
                    self.rest = &text[offset..];
                    return Some(Block { text: &text[from..offset], first_line });
                }
            } else if start.is_none() && !t.starts_with('#') {
                start = Some((offset, self.line));
            }
            offset += piece.len();
            self.line += 1;
        }
        self.rest = "";
        start.map(|(from, first_line)| Block { text: &text[from..], first_line })
    }
}

impl<'a> Block<'a> {
    /// The lines that are not comments, trimmed, with their numbers.
    fn lines(&self) -> impl Iterator<Item = (usize, &'a str)> + use<'a> {
        let first = self.first_line;
        self.text.lines().enumerate().map(move |(i, l)| (first + i, l.trim())).filter(|(_, l)| !l.starts_with('#'))
    }

    /// Whether the first line is a FEN.
    fn has_fen(&self) -> bool {
        self.lines().next().is_some_and(|(_, l)| l.split_whitespace().next().is_some_and(|t| t.contains('/')))
    }

    /// The tokens after the FEN line, move numbers (`12.`) taken off, empty ones left out: moves and results.
    fn move_tokens(&self) -> impl Iterator<Item = (usize, &'a str)> + use<'a> {
        self.lines().skip(usize::from(self.has_fen())).flat_map(|(line, text)| {
            text.split_whitespace().map(move |tok| (line, tok))
        }).filter_map(|(line, tok)| {
            let digits = tok.bytes().take_while(u8::is_ascii_digit).count();
            let dots = tok[digits..].bytes().take_while(|&c| c == b'.').count();
            let m = if digits > 0 && dots > 0 { &tok[digits + dots..] } else { tok };
            (!m.is_empty()).then_some((line, m))
        })
    }
}

fn moves_game(index: usize, block: &Block) -> Result<GameRecord<Xiangqi>, RecordError> {
    let first_line = block.first_line;
    let fen = block.has_fen();
    let start = match block.lines().next() {
        Some((_, first)) if fen => Xiangqi::from_fen(first).map_err(|e| RecordError {
            index,
            line: first_line,
            token: e.token,
            message: format!("FEN: {}", e.message),
        })?,
        _ => Xiangqi::start(),
    };
    let mut raw = RawGame { line: first_line, ..RawGame::default() };
    for (line, text) in block.lines().skip(usize::from(fen)) {
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
                raw.moves.push(MoveToken::new(m, line));
            }
        }
    }
    let first_number = start.fullmove();
    pgn::build_record(index, raw, start, first_number, parse_move)
}
