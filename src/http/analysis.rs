//! Analysis, legal moves, format conversion and the game list: reading requests into a game's own types
//! (through the registry), the cache and the pool, and writing answers in the notation the client used.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};

use super::auth::Client;
use super::extract::{ApiJson, ApiQuery};
use super::problem::Problem;
use super::{ApiConfig, AppState, ENGINE};
use crate::access::{CHEAP, search_cost};
pub use crate::analysis::CacheMode;
use crate::analysis::{Analysis, AnalysisError, Answer, Clamped, EngineChoice, Request};
use crate::game::{Game, GameEnd, Outcome, Side};
use crate::games::GameKind;
use crate::search::Limits;
use crate::store::{CachedAnalysis, CachedScore};
use crate::with_game;

/// `POST /v1/analysis` (and the WebSocket's `analyse`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnalysisRequest {
    pub game: String,
    /// The position (default: the start position).
    #[serde(default)]
    pub position: Option<String>,
    /// The position's format (default: detected).
    #[serde(default)]
    pub format: Option<String>,
    /// Moves played from the position before analysing.
    #[serde(default)]
    pub moves: Vec<String>,
    #[serde(default)]
    pub depth: Option<u64>,
    #[serde(default)]
    pub movetime_ms: Option<u64>,
    #[serde(default)]
    pub nodes: Option<u64>,
    #[serde(default)]
    pub multipv: Option<u32>,
    #[serde(default)]
    pub cache: CacheMode,
    /// Notation of the moves in the answer (default: the game's main notation).
    #[serde(default)]
    pub move_format: Option<String>,
    /// Scores from White's point of view instead of the side to move's.
    #[serde(default)]
    pub white_pov: bool,
    /// The engine to analyse with (`GET /v1/engines`): default, the game's default engine.
    #[serde(default)]
    pub engine: Option<String>,
}

/// A position read from a request, with the moves applied.
pub(super) struct Setup<G: Game> {
    pub game: G,
    /// The position before the moves, and the moves (an external engine is given the history).
    pub root: G,
    pub played: Vec<G::Move>,
    /// The position in the game's main format.
    pub position: String,
    pub move_format: Option<String>,
}

/// An analysis request read and validated: nothing malformed gets past this.
pub(super) struct Prepared<G: Game> {
    pub setup: Setup<G>,
    pub multipv: u32,
    pub limits: Limits,
    /// Which limits were lowered to the server's maxima.
    pub clamped: Vec<Clamped>,
    pub white_pov: bool,
    pub cache: CacheMode,
    pub engine: EngineChoice,
}

pub(super) fn game_kind(name: &str) -> Result<GameKind, Problem> {
    name.parse::<GameKind>().map_err(|e| Problem::invalid("game", e.to_string()).with_token(name))
}

pub(super) fn check_format(field: &str, format: Option<&str>, known: &[&str]) -> Result<(), Problem> {
    match format {
        Some(f) if !known.contains(&f) => {
            Err(Problem::invalid(field, format!("unknown {field} `{f}` (known: {})", known.join(", "))).with_token(f))
        }
        _ => Ok(()),
    }
}

/// Read a position and play moves on it.
pub(super) fn setup<G: Game>(
    position: Option<&str>,
    format: Option<&str>,
    moves: &[String],
    move_format: Option<&str>,
    config: &ApiConfig,
) -> Result<Setup<G>, Problem> {
    check_format("format", format, G::POSITION_FORMATS)?;
    check_format("move_format", move_format, G::MOVE_FORMATS)?;
    if moves.len() > config.max_moves {
        return Err(Problem::invalid(
            "moves",
            format!("{} moves given; at most {} are accepted", moves.len(), config.max_moves),
        ));
    }
    let root = match position {
        Some(text) => G::parse_position(text, format).map_err(|e| Problem::notation("position", &e))?,
        None => G::start(),
    };
    // A position that holds its moves (a Hive GameString) counts them with `moves`: found by an audit, 20,000
    // moves in a GameString passed the limit, and their text was stored as a cache key.
    if root.plies() + moves.len() > config.max_moves {
        let field = if moves.is_empty() { "position" } else { "moves" };
        return Err(Problem::invalid(
            field,
            format!(
                "the position holds {} moves and {} more are given; at most {} in all are accepted",
                root.plies(),
                moves.len(),
                config.max_moves
            ),
        ));
    }
    let mut game = root.clone();
    let mut played = Vec::with_capacity(moves.len());
    for (i, text) in moves.iter().enumerate() {
        let m = game.parse_move(text).map_err(|e| Problem::notation(&format!("moves[{i}]"), &e))?;
        game.make(m);
        played.push(m);
    }
    let position = game.format_position(None).map_err(|e| Problem::internal(e.to_string()))?;
    Ok(Setup { game, root, played, position, move_format: move_format.map(str::to_string) })
}

/// Read the one search limit a request may give (depth, time or nodes), clamped to the server's maxima; the
/// names of the clamped ones are added to `clamped`. None given: `default_depth`.
pub(super) fn read_limits(
    depth: Option<u64>,
    movetime_ms: Option<u64>,
    nodes: Option<u64>,
    default_depth: u32,
    config: &ApiConfig,
    clamped: &mut Vec<Clamped>,
) -> Result<Limits, Problem> {
    let given = [depth.is_some(), movetime_ms.is_some(), nodes.is_some()];
    if given.iter().filter(|g| **g).count() > 1 {
        let field = if depth.is_some() { "depth" } else { "movetime_ms" };
        return Err(Problem::invalid(field, "give at most one of depth, movetime_ms and nodes"));
    }
    let mut limits = Limits::default();
    if let Some(depth) = depth {
        if depth == 0 {
            return Err(Problem::invalid("depth", "depth must be at least 1"));
        }
        // Any depth past the server's largest is that one (as 10^12 would be: not refused for its size).
        if depth > u64::from(config.max_depth) {
            clamped.push(Clamped::new("depth", depth, config.max_depth));
        }
        limits.depth = Some(u32::try_from(depth).map_or(config.max_depth, |d| d.min(config.max_depth)));
    } else if let Some(ms) = movetime_ms {
        if ms == 0 {
            return Err(Problem::invalid("movetime_ms", "movetime_ms must be at least 1"));
        }
        if ms > config.max_movetime_ms {
            clamped.push(Clamped::new("movetime_ms", ms, config.max_movetime_ms));
        }
        limits.movetime = Some(Duration::from_millis(ms.min(config.max_movetime_ms)));
    } else if let Some(nodes) = nodes {
        if nodes == 0 {
            return Err(Problem::invalid("nodes", "nodes must be at least 1"));
        }
        if nodes > config.max_nodes {
            clamped.push(Clamped::new("nodes", nodes, config.max_nodes));
        }
        limits.nodes = Some(nodes.min(config.max_nodes));
    } else {
        limits.depth = Some(default_depth.min(config.max_depth));
    }
    Ok(limits)
}

pub(super) fn prepare<G: Game>(
    req: &AnalysisRequest,
    config: &ApiConfig,
    analysis: &Analysis,
) -> Result<Prepared<G>, Problem> {
    let kind = game_kind(G::NAME)?;
    let engine = analysis.choose(kind, req.engine.as_deref()).map_err(AnalysisError::from)?;
    let setup =
        setup::<G>(req.position.as_deref(), req.format.as_deref(), &req.moves, req.move_format.as_deref(), config)?;
    let mut clamped = Vec::new();
    let limits = read_limits(req.depth, req.movetime_ms, req.nodes, G::DEFAULT_DEPTH, config, &mut clamped)?;
    let multipv = match req.multipv {
        Some(0) => return Err(Problem::invalid("multipv", "multipv must be at least 1")),
        Some(k) if k > config.max_multipv => {
            clamped.push(Clamped::new("multipv", k, config.max_multipv));
            config.max_multipv
        }
        Some(k) => k,
        None => 1,
    };
    Ok(Prepared { setup, multipv, limits, clamped, white_pov: req.white_pov, cache: req.cache, engine })
}

// ---- answers ----

#[derive(Serialize)]
pub(super) struct LineOut {
    pub moves: Vec<String>,
    pub score: CachedScore,
    pub depth: u32,
}

#[derive(Serialize)]
pub(super) struct OutcomeOut {
    /// The winning side, or null for a draw.
    pub winner: Option<&'static str>,
    pub reason: &'static str,
}

pub(super) fn outcome_out<G: Game>(end: GameEnd) -> OutcomeOut {
    OutcomeOut {
        winner: match end.outcome {
            Outcome::Win(side) => Some(G::side_name(side)),
            Outcome::Draw => None,
        },
        reason: end.reason,
    }
}

#[derive(Serialize)]
pub(super) struct AnalysisResponse {
    pub game: &'static str,
    pub position: String,
    pub side_to_move: &'static str,
    pub bestmove: Option<String>,
    pub lines: Vec<LineOut>,
    pub depth: u32,
    pub seldepth: u32,
    pub nodes: u64,
    pub nps: u64,
    pub time_ms: u64,
    pub cached: bool,
    /// The engine that answered, with its version.
    pub engine: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub white_pov: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clamped: Vec<Clamped>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<OutcomeOut>,
    /// The search was stopped (by the request timeout) before its limit: the answer is its deepest
    /// completed iteration.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
    /// An infinite analysis on the WebSocket the client's bucket could no longer pay for: the seconds until
    /// it could pay for another period.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_s: Option<u32>,
}

/// Rewrite a line stored in the main notation into `format`, move by move from `root`.
pub(super) fn convert_line<G: Game>(root: &G, moves: &[String], format: Option<&str>) -> Vec<String> {
    let Some(format) = format.filter(|f| Some(f) != G::MOVE_FORMATS.first()) else {
        return moves.to_vec();
    };
    let mut g = root.clone();
    let mut out = Vec::with_capacity(moves.len());
    for text in moves {
        let Ok(m) = g.parse_move(text) else { break };
        match g.format_move_as(m, format) {
            Ok(t) => out.push(t),
            Err(_) => out.push(text.clone()),
        }
        g.make(m);
    }
    out
}

pub(super) fn pov_score(score: CachedScore, flip: bool) -> CachedScore {
    match (score, flip) {
        (s, false) => s,
        (CachedScore::Cp(cp), true) => CachedScore::Cp(-cp),
        (CachedScore::Mate(n), true) => CachedScore::Mate(-n),
    }
}

pub(super) fn respond<G: Game>(p: &Prepared<G>, result: &CachedAnalysis, cached: bool) -> AnalysisResponse {
    let root = &p.setup.game;
    let format = p.setup.move_format.as_deref();
    let flip = p.white_pov && root.side_to_move() != G::WHITE_SIDE;
    let bestmove = result
        .bestmove
        .as_ref()
        .map(|b| convert_line(root, std::slice::from_ref(b), format).into_iter().next().unwrap_or_else(|| b.clone()));
    AnalysisResponse {
        game: G::NAME,
        position: p.setup.position.clone(),
        side_to_move: G::side_name(root.side_to_move()),
        bestmove,
        lines: result
            .lines
            .iter()
            .map(|l| LineOut {
                moves: convert_line(root, &l.moves, format),
                score: pov_score(l.score, flip),
                depth: l.depth,
            })
            .collect(),
        depth: result.depth,
        seldepth: result.seldepth,
        nodes: result.nodes,
        // Saturating: an external engine's node count is its own claim, up to `u64::MAX`.
        nps: result.nodes.saturating_mul(1000).checked_div(result.time_ms).unwrap_or(result.nodes.saturating_mul(1000)),
        time_ms: result.time_ms,
        cached,
        engine: p.engine.label().to_string(),
        white_pov: p.white_pov,
        clamped: p.clamped.clone(),
        outcome: None,
        stopped: false,
        retry_after_s: None,
    }
}

/// The service's request for a prepared API request.
pub(super) fn request_of<G: Game>(p: &Prepared<G>) -> Request<G> {
    Request::new(p.setup.game.clone(), p.limits.clone())
        .multipv(p.multipv)
        .cache(p.cache)
        .engine(p.engine.clone())
        .history(p.setup.root.clone(), p.setup.played.clone())
}

/// The API's answer for the service's.
pub(super) fn answer_out<G: Game>(p: &Prepared<G>, answer: &Answer) -> AnalysisResponse {
    let mut r = respond(p, &answer.result, answer.cached);
    r.engine = answer.engine.to_string();
    r.outcome = answer.end.map(outcome_out::<G>);
    r
}

/// What a prepared request costs beyond [`CHEAP`] (paid by every request): its search, unless it only
/// reads the cache or its game is over (answered with the outcome, no search runs).
pub(super) fn search_extra<G: Game>(p: &Prepared<G>) -> u32 {
    if p.cache == CacheMode::Only || p.setup.game.outcome().is_some() {
        return 0;
    }
    search_cost(&p.limits, p.multipv).saturating_sub(CHEAP)
}

/// The rest of a search's cost once it has answered: a search limited by depth alone is priced by its depth
/// (four plies a unit) but may run until the request timeout, so it pays for the time it took beyond what that
/// bought, at [`search_cost`]'s time rate, into debt if it must (found by an audit: `depth` 64 held a worker
/// for the whole request timeout for 17 units). `waited` bounds the time charged for a search the request joined.
pub(super) fn charge_overrun<G: Game>(client: &Client, p: &Prepared<G>, answer: &Answer, waited: Duration) {
    if answer.cached || answer.end.is_some() || p.limits.movetime.is_some() || p.limits.nodes.is_some() {
        return;
    }
    let searched = Duration::from_millis(answer.result.time_ms).min(waited);
    let paid = search_extra(p).saturating_add(CHEAP);
    let owed = crate::access::time_cost(searched, p.multipv);
    if owed > paid {
        client.debit(owed - paid);
    }
}

async fn analyse<G: Game>(
    state: &AppState,
    req: &AnalysisRequest,
    client: Option<&Client>,
) -> Result<AnalysisResponse, Problem> {
    let p = prepare::<G>(req, &state.config, &state.analysis)?;
    let extra = search_extra(&p);
    if let Some(client) = client {
        client.charge_rest(extra)?;
    }
    let asked = std::time::Instant::now();
    let deadline = asked + state.config.request_timeout;
    let request = request_of(&p).client(client.map(|c| Arc::clone(&c.id)));
    let timed = match super::deadline::answer_by(&state.analysis, request, deadline, state.shutdown.subscribe()).await {
        Ok(timed) => timed,
        Err(e) => {
            // No answer (every worker busy, the engine failed, the server stopping): the search is not paid for.
            if let Some(client) = client {
                client.refund(extra);
            }
            return Err(e.into());
        }
    };
    if let Some(client) = client {
        if timed.answer.cached {
            client.refund(extra);
        }
        charge_overrun(client, &p, &timed.answer, asked.elapsed());
    }
    let mut out = answer_out(&p, &timed.answer);
    out.stopped = timed.stopped;
    Ok(out)
}

pub(super) async fn post_analysis(
    State(state): State<AppState>,
    client: Option<Extension<Client>>,
    ApiJson(req): ApiJson<AnalysisRequest>,
) -> Result<Json<AnalysisResponse>, Problem> {
    let kind = game_kind(&req.game)?;
    let client = client.as_ref().map(|Extension(c)| c);
    with_game!(kind, G => analyse::<G>(&state, &req, client).await.map(Json))
}

/// `GET /v1/analysis`: the cache only, like a cloud evaluation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AnalysisQuery {
    game: String,
    #[serde(default)]
    position: Option<String>,
    #[serde(default)]
    format: Option<String>,
    /// Comma-separated moves played from the position.
    #[serde(default)]
    moves: Option<String>,
    #[serde(default)]
    multipv: Option<u32>,
    #[serde(default)]
    move_format: Option<String>,
    #[serde(default)]
    white_pov: bool,
    #[serde(default)]
    engine: Option<String>,
}

pub(super) async fn get_analysis(
    State(state): State<AppState>,
    client: Option<Extension<Client>>,
    ApiQuery(q): ApiQuery<AnalysisQuery>,
) -> Result<Json<AnalysisResponse>, Problem> {
    let moves = super::extract::comma_list("moves", q.moves.as_deref())?;
    let req = AnalysisRequest {
        game: q.game,
        position: q.position,
        format: q.format,
        moves,
        depth: None,
        movetime_ms: None,
        nodes: None,
        multipv: q.multipv,
        cache: CacheMode::Only,
        move_format: q.move_format,
        white_pov: q.white_pov,
        engine: q.engine,
    };
    post_analysis(State(state), client, ApiJson(req)).await
}

// ---- legal moves ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MovesRequest {
    game: String,
    #[serde(default)]
    position: Option<String>,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    moves: Vec<String>,
    #[serde(default)]
    move_format: Option<String>,
    /// Also give the position after each move.
    #[serde(default)]
    positions: bool,
}

#[derive(Serialize)]
struct LegalMove {
    #[serde(rename = "move")]
    mv: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    position: Option<String>,
}

#[derive(Serialize)]
struct MovesResponse {
    game: &'static str,
    position: String,
    side_to_move: &'static str,
    moves: Vec<LegalMove>,
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome: Option<OutcomeOut>,
}

fn legal_moves<G: Game>(req: &MovesRequest, config: &ApiConfig) -> Result<MovesResponse, Problem> {
    let s = setup::<G>(req.position.as_deref(), req.format.as_deref(), &req.moves, req.move_format.as_deref(), config)?;
    let mut game = s.game;
    let outcome = game.outcome();
    let mut list = Vec::new();
    if outcome.is_none() {
        game.generate_moves(&mut list);
    }
    let mut moves = Vec::with_capacity(list.len());
    for m in list {
        let text = match s.move_format.as_deref() {
            Some(f) => game.format_move_as(m, f).map_err(|e| Problem::notation("move_format", &e))?,
            None => game.format_move(m),
        };
        let position = if req.positions {
            game.make(m);
            // In the main format, like the answer's own `position`.
            let p = game.format_position(None).map_err(|e| Problem::internal(e.to_string()))?;
            game.unmake();
            Some(p)
        } else {
            None
        };
        moves.push(LegalMove { mv: text, position });
    }
    Ok(MovesResponse {
        game: G::NAME,
        position: s.position,
        side_to_move: G::side_name(game.side_to_move()),
        moves,
        outcome: outcome.map(outcome_out::<G>),
    })
}

pub(super) async fn moves(State(state): State<AppState>, ApiJson(req): ApiJson<MovesRequest>) -> Response {
    let result = game_kind(&req.game).and_then(|kind| with_game!(kind, G => legal_moves::<G>(&req, &state.config)));
    match result {
        Ok(r) => Json(r).into_response(),
        Err(p) => p.into_response(),
    }
}

// ---- format conversion ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ConvertRequest {
    game: String,
    #[serde(default)]
    position: Option<String>,
    /// The format the position is in (default: detected).
    #[serde(default)]
    format: Option<String>,
    /// The format to write the position in (default: the game's main format).
    #[serde(default)]
    to: Option<String>,
    /// Moves played from the position, to convert.
    #[serde(default)]
    moves: Vec<String>,
    /// The notation to write the moves in (default: the game's main notation).
    #[serde(default)]
    move_format: Option<String>,
}

#[derive(Serialize)]
struct ConvertResponse {
    game: &'static str,
    position: String,
    format: &'static str,
    moves: Vec<String>,
    move_format: &'static str,
}

fn convert_request<G: Game>(req: &ConvertRequest, config: &ApiConfig) -> Result<ConvertResponse, Problem> {
    check_format("to", req.to.as_deref(), G::POSITION_FORMATS)?;
    let start = setup::<G>(req.position.as_deref(), req.format.as_deref(), &[], req.move_format.as_deref(), config)?;
    let to =
        G::POSITION_FORMATS.iter().copied().find(|f| Some(*f) == req.to.as_deref()).unwrap_or(G::POSITION_FORMATS[0]);
    let move_format =
        G::MOVE_FORMATS.iter().copied().find(|f| Some(*f) == req.move_format.as_deref()).unwrap_or(G::MOVE_FORMATS[0]);
    let mut game = start.game;
    let position = game.format_position(Some(to)).map_err(|e| Problem::notation("to", &e))?;
    if req.moves.len() > config.max_moves {
        return Err(Problem::invalid("moves", format!("at most {} moves are accepted", config.max_moves)));
    }
    let mut moves = Vec::with_capacity(req.moves.len());
    for (i, text) in req.moves.iter().enumerate() {
        let m = game.parse_move(text).map_err(|e| Problem::notation(&format!("moves[{i}]"), &e))?;
        moves.push(game.format_move_as(m, move_format).map_err(|e| Problem::notation("move_format", &e))?);
        game.make(m);
    }
    Ok(ConvertResponse { game: G::NAME, position, format: to, moves, move_format })
}

pub(super) async fn convert(State(state): State<AppState>, ApiJson(req): ApiJson<ConvertRequest>) -> Response {
    let result = game_kind(&req.game).and_then(|kind| with_game!(kind, G => convert_request::<G>(&req, &state.config)));
    match result {
        Ok(r) => Json(r).into_response(),
        Err(p) => p.into_response(),
    }
}

// ---- the game list ----

#[derive(Serialize)]
struct GameInfo {
    name: &'static str,
    position_formats: &'static [&'static str],
    move_formats: &'static [&'static str],
    start_position: String,
    sides: [&'static str; 2],
    default_depth: u32,
    /// Game record formats `POST /v1/annotations` reads.
    record_formats: &'static [&'static str],
    /// The annotated format an annotation exports to, if the game has one.
    export_format: Option<&'static str>,
}

#[derive(Serialize)]
pub(super) struct ApiLimits {
    max_depth: u32,
    max_movetime_ms: u64,
    max_nodes: u64,
    max_multipv: u32,
    max_moves: usize,
    max_body_bytes: usize,
    max_annotation_bytes: usize,
    max_annotation_positions: usize,
    max_record_games: usize,
    request_timeout_s: f64,
}

#[derive(Serialize)]
struct GamesResponse {
    engine: &'static str,
    games: Vec<GameInfo>,
    limits: ApiLimits,
}

impl ApiLimits {
    pub(super) fn of(state: &AppState) -> ApiLimits {
        let c = &state.config;
        ApiLimits {
            max_depth: c.max_depth,
            max_movetime_ms: c.max_movetime_ms,
            max_nodes: c.max_nodes,
            max_multipv: c.max_multipv,
            max_moves: c.max_moves,
            max_body_bytes: c.max_body_bytes,
            max_annotation_bytes: c.max_annotation_bytes,
            max_annotation_positions: state.annotator.config().max_positions,
            max_record_games: c.max_record_games,
            request_timeout_s: c.request_timeout.as_secs_f64(),
        }
    }
}

fn game_info<G: Game>() -> GameInfo {
    GameInfo {
        name: G::NAME,
        position_formats: G::POSITION_FORMATS,
        move_formats: G::MOVE_FORMATS,
        start_position: G::start().format_position(None).unwrap_or_default(),
        sides: [G::side_name(Side::First), G::side_name(Side::Second)],
        default_depth: G::DEFAULT_DEPTH,
        record_formats: G::RECORD_FORMATS,
        export_format: G::EXPORT_FORMAT,
    }
}

pub(super) async fn games(State(state): State<AppState>) -> Response {
    let games = GameKind::ALL.iter().map(|&kind| with_game!(kind, G => game_info::<G>())).collect();
    let body = GamesResponse { engine: ENGINE, games, limits: ApiLimits::of(&state) };
    (StatusCode::OK, Json(body)).into_response()
}
