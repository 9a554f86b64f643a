//! Annotation jobs: `POST /v1/annotations` (202 with the job's id), `GET /v1/annotations/{id}` (status,
//! progress, results so far), `GET /v1/annotations/{id}/export` (the annotated games), `DELETE` (cancel, or
//! with `?purge=true` remove), `GET /v1/annotations` (the jobs of the key that asks).
//!
//! Reading a submission (parsing whole game collections) and building a report (replaying every game) are
//! CPU work: they run on the blocking thread pool, never on the async workers.

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};

use super::AppState;
use super::analysis::{check_format, game_kind, read_limits};
use super::auth::Client;
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::problem::Problem;
use crate::access::{AuthMode, CHEAP, LimitStatus, annotation_cost, utc_day};
use crate::analysis::{AnalysisError, Clamped, EngineChoice};
use crate::annotate::{DEFAULT_THRESHOLD, ErrorJson, JobPriority, Settings, report};
use crate::game::{Game, RecordBudget, Records};
use crate::games::GameKind;
use crate::search::Limits;
use crate::store::{JobGameRow, JobRow, JobStatus, PositionRow};
use crate::with_game;

/// Submissions read (parsed) at once, over the whole server. Reading stops at the submission's budget of games
/// and positions (`--max-record-games`, `--max-annotation-positions`), so each reader holds a bounded amount;
/// a few may read at once (BENCHMARKS.md, "Hostile load": four 11 MB bodies read together stay far under
/// 500 MB), the others wait their turn.
static READING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(4);

/// Longest a job id may be (ids are UUIDs, 36 characters; older ones 32 hex digits).
const MAX_ID: usize = 64;

/// `POST /v1/annotations`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnnotationRequest {
    pub game: String,
    /// One or many games in one text.
    #[serde(default)]
    pub text: Option<String>,
    /// Games as separate texts (each may also hold several).
    #[serde(default)]
    pub games: Option<Vec<String>>,
    /// The record format (default: detected).
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default)]
    pub depth: Option<u64>,
    #[serde(default)]
    pub movetime_ms: Option<u64>,
    #[serde(default)]
    pub nodes: Option<u64>,
    /// GUIDE threshold in centi-units (default 100: one man).
    #[serde(default)]
    pub threshold: Option<i32>,
    #[serde(default)]
    pub priority: Option<JobPriority>,
    /// The engine to search with (`GET /v1/engines`): default, the game's default engine.
    #[serde(default)]
    pub engine: Option<String>,
}

#[derive(Serialize)]
struct Accepted {
    id: String,
    status_url: String,
    export_url: String,
    /// Games in the submission, those that could not be read included.
    games: usize,
    /// Positions to evaluate.
    positions: u64,
    /// The games that could not be read (they are not annotated; the others are).
    errors: Vec<ErrorJson>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    clamped: Vec<Clamped>,
}

/// Read every game of a submission, numbering the games across the texts of `games`, under one budget of
/// games and positions for the whole submission: reading stops at the first game over it, before the rest is
/// read and before anything is prepared for the store.
fn read_records<G: Game>(req: &AnnotationRequest, mut budget: RecordBudget) -> Result<Records<G>, Problem> {
    let format = req.format.as_deref();
    let texts: Vec<(&str, &str)> = match (&req.text, &req.games) {
        (Some(text), None) => vec![("text", text.as_str())],
        (None, Some(games)) => games.iter().map(|g| ("games", g.as_str())).collect(),
        (Some(_), Some(_)) => return Err(Problem::invalid("games", "give either `text` or `games`, not both")),
        (None, None) => return Err(Problem::invalid("text", "give the games to annotate in `text` or `games`")),
    };
    let mut all = Vec::new();
    for (i, (field, text)) in texts.into_iter().enumerate() {
        let field = if field == "games" { format!("games[{i}]") } else { field.to_string() };
        let records = G::parse_records(crate::game::without_bom(text), format, &mut budget)
            .map_err(|e| Problem::records(&field, &e))?;
        for record in records {
            let index = all.len();
            all.push(record.map_err(|mut e| {
                e.index = index;
                e
            }));
        }
    }
    Ok(all)
}

/// What a submission was charged, to give back if the job is not made after all.
struct Charged {
    /// Bucket units beyond the request's [`CHEAP`].
    extra: u32,
    /// The key, the UTC day and the positions charged to its daily quota.
    quota: Option<(String, i64, u64)>,
}

impl Charged {
    async fn give_back(self, state: &AppState, client: &Client) {
        client.refund(self.extra);
        if let Some((name, day, positions)) = self.quota
            && let Err(error) = state.store.refund_key_quota(&name, day, positions).await
        {
            tracing::warn!(%error, key = %name, positions, "a job not made: its quota could not be given back");
        }
    }
}

/// Charge a submission of `positions` positions searched with `limits` to `client`: its bucket (by
/// [`annotation_cost`]) and its key's daily quota. 429 when either is exhausted, the quota's with the seconds
/// to the next UTC day; 422 for a job larger than the whole quota (no day would take it).
async fn charge<G: Game>(
    state: &AppState,
    client: &Client,
    positions: u64,
    limits: &Limits,
) -> Result<Charged, Problem> {
    if let (Some(name), Some(quota)) = (client.key.as_deref(), client.quota_positions)
        && positions > quota
    {
        return Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "larger-than-quota",
            "Job larger than the daily quota",
            format!(
                "the key `{name}` may annotate {quota} positions a day and this job has {positions}: split the \
                 games into jobs of at most {quota} positions"
            ),
        ));
    }
    let usual = Limits::depth(G::DEFAULT_DEPTH);
    let extra = annotation_cost(positions, limits, &usual).saturating_sub(CHEAP);
    client.charge_rest(extra)?;
    let (Some(name), Some(quota)) = (client.key.as_deref(), client.quota_positions) else {
        return Ok(Charged { extra, quota: None });
    };
    let (day, reset_s) = utc_day();
    let charged = state.store.charge_key_quota(name, day, positions, quota).await;
    let used = match charged {
        Ok((true, _)) => return Ok(Charged { extra, quota: Some((name.to_string(), day, positions)) }),
        Ok((false, used)) => used,
        Err(e) => {
            client.refund(extra);
            return Err(e.into());
        }
    };
    client.refund(extra);
    let left = quota.saturating_sub(used);
    let mut p = Problem::new(
        StatusCode::TOO_MANY_REQUESTS,
        "quota-exhausted",
        "Daily annotation quota exhausted",
        format!(
            "the key `{name}` may annotate {quota} positions a day; {left} are left today and this job has \
             {positions}; the quota renews in {reset_s} s (at 00:00 UTC)"
        ),
    );
    p.retry_after = Some(u32::try_from(reset_s).unwrap_or(u32::MAX));
    p.limit = Some(Box::new(LimitStatus {
        limit: u32::try_from(quota).unwrap_or(u32::MAX),
        remaining: u32::try_from(left).unwrap_or(u32::MAX),
        reset_s,
    }));
    Err(p)
}

async fn create<G: Game>(
    state: &AppState,
    req: AnnotationRequest,
    client: Option<&Client>,
) -> Result<Response, Problem> {
    if G::RECORD_FORMATS.is_empty() {
        return Err(Problem::invalid("game", format!("{} has no game record format to annotate yet", G::NAME)));
    }
    check_format("format", req.format.as_deref(), G::RECORD_FORMATS)?;
    let mut clamped = Vec::new();
    let limits = read_limits(req.depth, req.movetime_ms, req.nodes, G::DEFAULT_DEPTH, &state.config, &mut clamped)?;
    let threshold = req.threshold.unwrap_or(DEFAULT_THRESHOLD);
    if !(0..=100_000).contains(&threshold) {
        return Err(Problem::invalid("threshold", "threshold must be between 0 and 100000 centi-units"));
    }
    let settings = Settings {
        depth: limits.depth,
        movetime_ms: limits.movetime.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
        nodes: limits.nodes,
        threshold,
        priority: req.priority.unwrap_or_default(),
        clamped: clamped.clone(),
        engine: None,
    };
    // The engine is fixed when the job is made: a default engine configured later does not change it.
    let kind = super::analysis::game_kind(G::NAME)?;
    let settings = match state.analysis.choose(kind, req.engine.as_deref()).map_err(AnalysisError::from)? {
        EngineChoice::Own => settings,
        EngineChoice::External(e) => Settings { engine: Some(e.name.clone()), ..settings },
    };
    let budget = RecordBudget::new(state.config.max_record_games, state.annotator.config().max_positions as u64);
    let _reading = READING.acquire().await.map_err(|_| Problem::unavailable("the server is shutting down"))?;
    let records = tokio::task::spawn_blocking(move || read_records::<G>(&req, budget))
        .await
        .map_err(|e| Problem::internal(format!("reading the games failed: {e}")))??;
    let positions: u64 = records.iter().flatten().map(|r| r.moves.len() as u64 + 1).sum();
    let charged = match client {
        Some(client) if positions > 0 => Some(charge::<G>(state, client, positions, &limits).await?),
        _ => None,
    };
    let owner = client.and_then(|c| c.key.clone());
    let submitted = match state.annotator.submit::<G>(records, settings, owner).await {
        Ok(submitted) => submitted,
        Err(e) => {
            // Not made (the server is stopping, the store failed, no game could be read): it costs nothing.
            if let (Some(charged), Some(client)) = (charged, client) {
                charged.give_back(state, client).await;
            }
            return Err(e.into());
        }
    };
    let status_url = format!("/v1/annotations/{}", submitted.id);
    let body = Accepted {
        export_url: format!("{status_url}/export"),
        status_url: status_url.clone(),
        id: submitted.id,
        games: submitted.games,
        positions: submitted.positions,
        errors: submitted.errors.iter().map(ErrorJson::of).collect(),
        clamped,
    };
    let mut response = (StatusCode::ACCEPTED, Json(body)).into_response();
    if let Ok(location) = HeaderValue::from_str(&status_url) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    Ok(response)
}

pub(super) async fn post_annotations(
    State(state): State<AppState>,
    client: Option<Extension<Client>>,
    ApiJson(req): ApiJson<AnnotationRequest>,
) -> Result<Response, Problem> {
    let kind = game_kind(&req.game)?;
    let client = client.as_ref().map(|Extension(c)| c);
    with_game!(kind, G => create::<G>(&state, req, client).await)
}

/// Whether `client` may see `job`: a job made with a key belongs to that key; one made without a key to
/// whoever has its id.
pub(super) fn may_see(job: &JobRow, client: Option<&Client>) -> bool {
    match &job.owner {
        None => true,
        Some(owner) => client.and_then(|c| c.key.as_deref()) == Some(owner.as_str()),
    }
}

/// A job, or 404 (also for a job of another key: its existence is not told).
async fn find(state: &AppState, id: &str, client: Option<&Client>) -> Result<JobRow, Problem> {
    if id.is_empty() || id.len() > MAX_ID || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(Problem::not_found(format!("no annotation job `{}`", id.chars().take(MAX_ID).collect::<String>())));
    }
    state
        .store
        .job(id)
        .await?
        .filter(|job| may_see(job, client))
        .ok_or_else(|| Problem::not_found(format!("no annotation job `{id}`")))
}

/// A job's rows, or 404 (see [`find`]).
async fn load(
    state: &AppState,
    id: &str,
    client: Option<&Client>,
) -> Result<(JobRow, Vec<JobGameRow>, Vec<PositionRow>), Problem> {
    let job = find(state, id, client).await?;
    let games = state.store.job_games(id).await?;
    let positions = state.store.job_positions(id).await?;
    Ok((job, games, positions))
}

fn kind_of(job: &JobRow) -> Result<GameKind, Problem> {
    job.game.parse::<GameKind>().map_err(|e| Problem::internal(format!("job {}: {e}", job.id)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ViewQuery {
    /// `false`: progress only, without the judged moves and players' summaries (cheap to ask often).
    #[serde(default)]
    moves: Option<bool>,
}

pub(super) async fn get_annotation(
    State(state): State<AppState>,
    client: Option<Extension<Client>>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(query): ApiQuery<ViewQuery>,
) -> Result<Response, Problem> {
    let (job, games, positions) = load(&state, &id, client.as_ref().map(|Extension(c)| c)).await?;
    let kind = kind_of(&job)?;
    let moves = query.moves.unwrap_or(true);
    let view = tokio::task::spawn_blocking(move || {
        with_game!(kind, G => if moves {
            report::job_view::<G>(&job, &games, &positions)
        } else {
            report::job_progress::<G>(&job, &games, &positions)
        })
    })
    .await
    .map_err(|e| Problem::internal(format!("building the report failed: {e}")))?;
    Ok(Json(view).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ExportQuery {
    /// The game's own format (`pgn`, `pdn`), `text` or `json` (default: the game's own, else text).
    #[serde(default)]
    format: Option<String>,
}

fn export_with<G: Game>(
    format: Option<&str>,
    job: &JobRow,
    games: &[JobGameRow],
    positions: &[PositionRow],
) -> Result<(String, &'static str, String), Problem> {
    let native = G::EXPORT_FORMAT;
    let wanted = format.or(native).unwrap_or("text");
    if Some(wanted) == native {
        let threshold = report::settings_of(job).threshold;
        let text = report::export_native::<G>(games, positions, threshold)
            .ok_or_else(|| Problem::internal("the game's export format is not available"))?;
        return Ok((text, "text/plain; charset=utf-8", wanted.to_string()));
    }
    match wanted {
        "text" => Ok((
            report::export_text(&report::job_view::<G>(job, games, positions)),
            "text/plain; charset=utf-8",
            "txt".into(),
        )),
        "json" => {
            let view = report::job_view::<G>(job, games, positions);
            let text = serde_json::to_string_pretty(&view).map_err(|e| Problem::internal(e.to_string()))?;
            Ok((text, "application/json", "json".into()))
        }
        other => {
            let known: Vec<&str> = native.into_iter().chain(["text", "json"]).collect();
            Err(Problem::invalid("format", format!("unknown export format `{other}` (known: {})", known.join(", ")))
                .with_token(other))
        }
    }
}

pub(super) async fn export(
    State(state): State<AppState>,
    client: Option<Extension<Client>>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(query): ApiQuery<ExportQuery>,
) -> Result<Response, Problem> {
    let (job, games, positions) = load(&state, &id, client.as_ref().map(|Extension(c)| c)).await?;
    let kind = kind_of(&job)?;
    let format = query.format;
    let id_for_name = job.id.clone();
    let (text, content_type, extension) = tokio::task::spawn_blocking(
        move || with_game!(kind, G => export_with::<G>(format.as_deref(), &job, &games, &positions)),
    )
    .await
    .map_err(|e| Problem::internal(format!("building the export failed: {e}")))??;
    let mut response = ([(header::CONTENT_TYPE, content_type)], text).into_response();
    if let Ok(value) = HeaderValue::from_str(&format!("inline; filename=\"kibitz-{id_for_name}.{extension}\"")) {
        response.headers_mut().insert(header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}

#[derive(Serialize)]
struct Cancelled {
    id: String,
    status: &'static str,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DeleteQuery {
    /// `true`: remove the job with its results (cancelling it first if it runs), not only cancel it.
    #[serde(default)]
    purge: Option<bool>,
}

pub(super) async fn delete_annotation(
    State(state): State<AppState>,
    client: Option<Extension<Client>>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(query): ApiQuery<DeleteQuery>,
) -> Result<Response, Problem> {
    let job = find(&state, &id, client.as_ref().map(|Extension(c)| c)).await?;
    if query.purge == Some(true) {
        if !state.annotator.remove(&job.id).await? {
            return Err(Problem::not_found(format!("no annotation job `{}`", job.id)));
        }
        return Ok(Json(Cancelled { id: job.id, status: "removed" }).into_response());
    }
    let cancelled = state.annotator.cancel(&job.id).await?;
    if !cancelled && job.status != JobStatus::Cancelled {
        let status = state.store.job(&job.id).await.ok().flatten().map_or(job.status, |j| j.status);
        if status != JobStatus::Cancelled {
            return Err(Problem::new(
                StatusCode::CONFLICT,
                "job-over",
                "The job is already over",
                format!(
                    "annotation job `{}` is {status} and cannot be cancelled (remove it with `?purge=true`)",
                    job.id
                ),
            ));
        }
    }
    Ok(Json(Cancelled { id: job.id, status: JobStatus::Cancelled.as_str() }).into_response())
}

/// Most jobs `GET /v1/annotations` lists at once, and how many it lists unless asked.
const MAX_LISTED: u32 = 1000;
const DEFAULT_LISTED: u32 = 100;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ListQuery {
    /// How many jobs, newest first (default 100, at most 1000).
    #[serde(default)]
    limit: Option<u32>,
}

/// One job of `GET /v1/annotations`.
#[derive(Serialize)]
struct Listed {
    id: String,
    game: String,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    created_ms: i64,
    updated_ms: i64,
    status_url: String,
}

#[derive(Serialize)]
struct JobList {
    jobs: Vec<Listed>,
}

/// `GET /v1/annotations`: the jobs of the key that asks, newest first. A job made without a key is found by
/// its id only (whoever holds it may read it): a list of them would hand every client everyone's games.
pub(super) async fn list_annotations(
    State(state): State<AppState>,
    client: Option<Extension<Client>>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Response, Problem> {
    let Some(owner) = client.as_ref().and_then(|Extension(c)| c.key.clone()) else {
        let why = if state.config.auth == AuthMode::Off {
            "this server takes no API keys (`--auth off`): a job is read by its id only, and there is no list"
        } else {
            "listing annotation jobs needs an API key (`Authorization: Bearer <key>`): the list is the key's own \
             jobs; a job made without a key is read by its id only"
        };
        return Ok(super::auth::unauthorized(why, false));
    };
    let limit = query.limit.unwrap_or(DEFAULT_LISTED);
    if limit == 0 || limit > MAX_LISTED {
        return Err(Problem::invalid("limit", format!("give 1 to {MAX_LISTED} jobs, not {limit}")));
    }
    let jobs = state.store.jobs_of(&owner, limit).await?;
    let jobs = jobs
        .into_iter()
        .map(|job| Listed {
            status_url: format!("/v1/annotations/{}", job.id),
            id: job.id,
            game: job.game,
            status: job.status.as_str(),
            error: job.error,
            created_ms: job.created_ms,
            updated_ms: job.updated_ms,
        })
        .collect();
    Ok(Json(JobList { jobs }).into_response())
}
