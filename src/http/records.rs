//! `POST /v1/records`: a game record (PGN, PDN, GameStrings: the game's record formats) read into each game's
//! start position and moves, in the game's main formats, so that a client can replay a record without reading
//! its format itself. Games that cannot be read are reported with their index, line and token; the others are
//! returned; a text with no readable game is refused (422), naming the first bad token.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::AppState;
use super::analysis::{check_format, game_kind};
use super::extract::ApiJson;
use super::problem::Problem;
use crate::annotate::{ErrorJson, SubmitError};
use crate::game::{Game, RecordBudget};
use crate::with_game;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RecordsRequest {
    game: String,
    /// One game or a collection.
    text: String,
    /// The record format (default: detected).
    #[serde(default)]
    format: Option<String>,
}

#[derive(Serialize)]
struct RecordOut {
    /// 0-based index in the text.
    index: usize,
    /// The 1-based line where the game begins.
    line: usize,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    tags: BTreeMap<String, String>,
    /// The position before the first move, in the game's main format.
    start: String,
    /// The moves in the game's main notation.
    moves: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<String>,
}

#[derive(Serialize)]
struct RecordsResponse {
    game: &'static str,
    games: Vec<RecordOut>,
    /// The games that could not be read.
    errors: Vec<ErrorJson>,
}

fn read<G: Game>(req: &RecordsRequest, mut budget: RecordBudget) -> Result<RecordsResponse, Problem> {
    if G::RECORD_FORMATS.is_empty() {
        return Err(Problem::invalid("game", format!("{} has no game record format yet", G::NAME)));
    }
    check_format("format", req.format.as_deref(), G::RECORD_FORMATS)?;
    let text = crate::game::without_bom(&req.text);
    let records =
        G::parse_records(text, req.format.as_deref(), &mut budget).map_err(|e| Problem::records("text", &e))?;
    let mut games = Vec::new();
    let mut errors = Vec::new();
    let mut first_error = None;
    for (index, record) in records.into_iter().enumerate() {
        let record = match record {
            Ok(r) => r,
            Err(mut e) => {
                e.index = index;
                errors.push(ErrorJson::of(&e));
                first_error.get_or_insert(e);
                continue;
            }
        };
        let start = record.start.format_position(None).map_err(|e| Problem::internal(e.to_string()))?;
        let mut game = record.start.clone();
        let mut moves = Vec::with_capacity(record.moves.len());
        for &m in &record.moves {
            moves.push(game.format_move(m));
            game.make(m);
        }
        games.push(RecordOut {
            index,
            line: record.line,
            tags: record.tags.into_iter().collect(),
            start,
            moves,
            result: record.result,
        });
    }
    // Nothing readable at all is refused, like an annotation submission, naming the first bad token.
    if games.is_empty() {
        let e = match first_error {
            Some(e) => SubmitError::NoGames(e),
            None => SubmitError::Empty,
        };
        return Err(Problem::from(e));
    }
    Ok(RecordsResponse { game: G::NAME, games, errors })
}

pub(super) async fn records(State(state): State<AppState>, ApiJson(req): ApiJson<RecordsRequest>) -> Response {
    let kind = match game_kind(&req.game) {
        Ok(kind) => kind,
        Err(p) => return p.into_response(),
    };
    // Reading a collection is CPU work: off the async workers.
    // As many games and positions as an annotation submission: reading stops at the first game past them.
    let budget = RecordBudget::new(state.config.max_record_games, state.annotator.config().max_positions as u64);
    let result = tokio::task::spawn_blocking(move || with_game!(kind, G => read::<G>(&req, budget)))
        .await
        .unwrap_or_else(|e| Err(Problem::internal(format!("reading the records failed: {e}"))));
    match result {
        Ok(r) => Json(r).into_response(),
        Err(p) => p.into_response(),
    }
}
