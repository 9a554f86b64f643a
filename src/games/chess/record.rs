//! Chess game records: PGN collections (tags, SAN or UCI moves, `FEN`/`SetUp` tags, Chess960 through the
//! `Variant` tag), and the annotated PGN export.

use super::Chess;
use crate::game::{Game, GameRecord, NotationError, PlyNote, ReadError, RecordBudget, RecordError, Records};
use crate::games::pgn;

/// `Variant` tag values this module plays: standard chess (lichess writes `From Position` for a game from a
/// set-up position) and Chess960.
const VARIANTS: &[&str] = &[
    "",
    "standard",
    "chess",
    "from position",
    "chess960",
    "chess 960",
    "960",
    "fischerandom",
    "fischer random",
    "fischer random chess",
];

/// The Seven Tag Roster and the values an export writes when a record lacks one.
const ROSTER: [(&str, &str); 6] =
    [("Event", "?"), ("Site", "?"), ("Date", "????.??.??"), ("Round", "?"), ("White", "?"), ("Black", "?")];

/// Read a PGN collection.
pub fn parse(text: &str, format: Option<&str>, budget: &mut RecordBudget) -> Result<Records<Chess>, ReadError> {
    match format {
        None | Some("pgn") => {}
        Some(f) => return Err(NotationError::new(f, "unknown record format (known: pgn)").into()),
    }
    Ok(pgn::read_records(text, pgn::PGN_RESULTS, budget, game)?)
}

fn game(index: usize, raw: pgn::RawGame) -> Result<GameRecord<Chess>, RecordError> {
    if let Some(f) = raw.error.clone() {
        return Err(pgn::RawGame::error_at(index, f));
    }
    if let Some(tag) = raw.tag("Variant")
        && !VARIANTS.contains(&tag.value.trim().to_ascii_lowercase().as_str())
    {
        return Err(pgn::tag_error(index, tag, "chess variant not supported (standard chess and Chess960 only)"));
    }
    let start = match raw.tag("FEN") {
        Some(tag) => Chess::from_fen(&tag.value).map_err(|e| RecordError {
            index,
            line: tag.line,
            token: e.token,
            message: format!("FEN tag: {}", e.message),
        })?,
        None => Chess::start(),
    };
    let first = u32::from(start.board().fullmove_number());
    pgn::build_record(index, raw, start, first, |g, t| g.parse_move(t))
}

/// Write an annotated game: the record's tags (the Seven Tag Roster completed, `SetUp`/`FEN` for a set-up
/// position, an `Annotator` tag added), SAN moves, each note's NAG, comment and better line, the result.
pub fn export(record: &GameRecord<Chess>, notes: &[PlyNote<super::Move>]) -> String {
    let result = pgn::export_result_of(record, pgn::PGN_RESULTS);
    let has = |tags: &[(String, String)], name: &str| tags.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let find = |name: &str| record.tags.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone());
    // The Seven Tag Roster first and in its order (as PGN's export format asks), the record's values where it
    // has them (the result the one written after the moves); then the record's other tags as they came.
    let roster = ROSTER.iter().copied().chain([("Result", result.as_str())]);
    let mut tags: Vec<(String, String)> = Vec::with_capacity(record.tags.len() + 10);
    for (name, placeholder) in roster.clone() {
        let value = if name == "Result" { None } else { find(name) };
        tags.push((name.to_string(), value.unwrap_or_else(|| placeholder.to_string())));
    }
    let set_up = record.start.position_key() != Chess::start().position_key();
    for (name, value) in &record.tags {
        let skip = set_up && (name.eq_ignore_ascii_case("FEN") || name.eq_ignore_ascii_case("SetUp"));
        if !skip && !roster.clone().any(|(r, _)| r.eq_ignore_ascii_case(name)) {
            tags.push((name.clone(), value.clone()));
        }
    }
    if record.start.is_chess960() && !has(&tags, "Variant") {
        tags.push(("Variant".to_string(), "Chess960".to_string()));
    }
    if set_up {
        tags.push(("SetUp".to_string(), "1".to_string()));
        tags.push(("FEN".to_string(), record.start.to_fen()));
    }
    let tags = pgn::export_tags(&tags);
    let first = u32::from(record.start.board().fullmove_number());
    pgn::write_game(&tags, &record.start, first, &record.moves, notes, &result, |g, m| g.move_to_san(m))
}
