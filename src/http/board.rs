//! `GET /v1/board.svg`: the picture of a position (see [`crate::picture`] for what the SVG holds).

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::analysis::{game_kind, setup};
use super::extract::{ApiQuery, comma_list};
use super::problem::Problem;
use super::{ApiConfig, AppState};
use crate::game::Game;
use crate::picture::{self, Options};
use crate::with_game;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BoardQuery {
    game: String,
    /// The position in any format the game reads (default: the start position).
    #[serde(default)]
    position: Option<String>,
    /// The position's format (default: detected).
    #[serde(default)]
    format: Option<String>,
    /// Comma-separated moves played from the position; the last one is highlighted.
    #[serde(default)]
    moves: Option<String>,
    /// Comma-separated moves, a line played from the position reached, drawn as arrows.
    #[serde(default)]
    arrows: Option<String>,
    #[serde(default)]
    flip: bool,
    #[serde(default)]
    size: Option<u32>,
}

fn picture_of<G: Game>(q: &BoardQuery, config: &ApiConfig) -> Result<String, Problem> {
    let size = picture::check_size(q.size.unwrap_or(picture::DEFAULT_SIZE))
        .map_err(|e| Problem::invalid("size", e).with_token(q.size.unwrap_or_default().to_string()))?;
    let moves = comma_list("moves", q.moves.as_deref())?;
    let s = setup::<G>(q.position.as_deref(), q.format.as_deref(), &moves, None, config)?;
    let arrows = comma_list("arrows", q.arrows.as_deref())?;
    if arrows.len() > config.max_moves {
        return Err(Problem::invalid(
            "arrows",
            format!("{} arrows given; at most {} are accepted", arrows.len(), config.max_moves),
        ));
    }
    let mut line = Vec::with_capacity(arrows.len());
    let mut after = s.game.clone();
    for (i, text) in arrows.iter().enumerate() {
        let m = after.parse_move(text).map_err(|e| Problem::notation(&format!("arrows[{i}]"), &e))?;
        after.make(m);
        line.push(m);
    }
    let before = s.played.split_last().map(|(&last, earlier)| {
        let mut g = s.root.clone();
        for &m in earlier {
            g.make(m);
        }
        (g, last)
    });
    let last = before.as_ref().map(|(g, m)| (g, *m));
    Ok(picture::render(&s.game, last, &line, Options { flip: q.flip, size }))
}

pub(super) async fn board_svg(State(state): State<AppState>, ApiQuery(q): ApiQuery<BoardQuery>) -> Response {
    let result = game_kind(&q.game).and_then(|kind| with_game!(kind, G => picture_of::<G>(&q, &state.config)));
    match result {
        // The picture is the same for the same query, holds no script, and is opened in browsers directly: it is
        // kept an hour, not sniffed, and may run nothing even if it ever held something unexpected.
        Ok(svg) => (
            [
                (header::CONTENT_TYPE, "image/svg+xml"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                (header::CONTENT_SECURITY_POLICY, "default-src 'none'; style-src 'unsafe-inline'"),
                (header::CACHE_CONTROL, "public, max-age=3600"),
            ],
            svg,
        )
            .into_response(),
        Err(p) => p.into_response(),
    }
}
