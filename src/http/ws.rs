//! `GET /v1/stream`: analysis over a WebSocket, lines streamed as they deepen.
//!
//! Client messages: `{"type":"analyse","id":"…", <the fields of POST /v1/analysis>, "infinite": true?}` and
//! `{"type":"stop","id":"…"}`. Server messages: `{"type":"info","id",…}` (throttled to one every 100 ms per
//! analysis, plus every line of each completed depth), `{"type":"bestmove","id",…}` (the analysis answer) and
//! `{"type":"error","id"?,…}` (a problem document). Several analyses may run at once on one socket; all of
//! them are cancelled when the socket closes.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use axum::Extension;
use axum::extract::State;
use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::AppState;
use super::analysis::{self, AnalysisRequest, Prepared, convert_line, pov_score};
use super::auth::Client;
use super::extract::{from_value, parse_json};
use super::problem::Problem;
use crate::access::{CHEAP, INFINITE_PERIOD, search_cost};
use crate::analysis::{Progress, Started};
use crate::game::{Game, format_line};
use crate::pool::Priority;
use crate::search::{Info, Limits, ScoreBound};
use crate::store::Store;
use crate::with_game;

/// Messages a socket may have waiting to be sent; progress beyond that is dropped, answers wait.
const OUTGOING: usize = 256;
/// Least time between two progress messages of one analysis (lines of a completed depth always go).
const THROTTLE: Duration = Duration::from_millis(100);
/// How often a socket following a job that another server runs (shared store) reads its progress.
const STORE_POLL: Duration = Duration::from_secs(1);
/// Longest an analysis id may be.
const MAX_ID: usize = 128;
/// Annotation jobs one socket may follow at once (each follower is a task, and on a shared store a poll).
const MAX_SUBSCRIPTIONS: usize = 16;

enum Outgoing {
    Text(String),
    /// The analysis `id` is over; its answer follows.
    Finished {
        id: String,
        text: String,
    },
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    id: Option<String>,
}

pub(super) async fn stream(
    State(state): State<AppState>,
    client: Option<Extension<Client>>,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Response {
    let client = client.map(|Extension(c)| c);
    let upgrade = match upgrade {
        Ok(u) => u,
        Err(e) => {
            let mut p = Problem::new(
                axum::http::StatusCode::UPGRADE_REQUIRED,
                "websocket-required",
                "A WebSocket upgrade is required",
                format!("{}: connect with a WebSocket client (Upgrade: websocket)", e.body_text()),
            );
            p.field = None;
            let mut response = p.into_response();
            response
                .headers_mut()
                .insert(axum::http::header::UPGRADE, axum::http::HeaderValue::from_static("websocket"));
            return response;
        }
    };
    let address = client.as_ref().map_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), |c| c.address);
    let max = state.config.max_ws_per_address;
    let Some(slot) = state.websockets.take(address, max) else {
        let mut p = Problem::new(
            axum::http::StatusCode::TOO_MANY_REQUESTS,
            "too-many-websockets",
            "Too many WebSockets",
            format!("{address} has {max} WebSockets open, the most this server allows; close one first"),
        );
        p.retry_after = Some(1);
        return p.into_response();
    };
    let limit = state.config.max_body_bytes;
    upgrade.max_message_size(limit).max_frame_size(limit).on_upgrade(move |socket| async move {
        let _slot = slot;
        session(state, client, socket).await;
    })
}

/// A problem as an `error` message: the problem document's members, its type as `problem`, and the seconds
/// to wait before trying again (HTTP's `Retry-After`) as `retry_after_s` when it has them.
fn error_text(id: Option<&str>, p: &Problem) -> String {
    let mut v = serde_json::to_value(p).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut v {
        map.insert("problem".into(), map.get("type").cloned().unwrap_or(Value::Null));
        map.insert("type".into(), json!("error"));
        if let Some(id) = id {
            map.insert("id".into(), json!(id));
        }
        if let Some(seconds) = p.retry_after {
            map.insert("retry_after_s".into(), json!(seconds));
        }
    }
    v.to_string()
}

/// How often a socket opened with a key that runs analyses or follows jobs looks the key up again (each of
/// its messages also does), so that a revoked key's socket is closed.
const KEY_RECHECK: Duration = Duration::from_secs(10);

/// Whether the key this socket was opened with was revoked (or deleted) since: the problem to tell the client
/// before the socket is closed. A store that cannot say lets the socket go on.
async fn key_revoked(state: &AppState, client: Option<&Client>) -> Option<Problem> {
    let digest = client?.digest.as_deref()?;
    match crate::access::check_digest(&state.store, digest).await {
        Ok(_) => None,
        Err(crate::access::KeyError::Store(error)) => {
            tracing::debug!(%error, "cannot look a socket's key up again");
            None
        }
        Err(e) => Some(Problem::unauthorized(format!("{e}: this socket is closed"))),
    }
}

/// Close a socket whose key was revoked: the problem as an error message, then close code 1008 (policy).
async fn close_revoked(socket: &mut WebSocket, p: &Problem) {
    use axum::extract::ws::CloseFrame;
    let _ = send(socket, error_text(None, p)).await;
    let frame = CloseFrame { code: 1008, reason: Utf8Bytes::from_static("the API key was revoked") };
    let _ = socket.send(Message::Close(Some(frame))).await;
    let _ = tokio::time::timeout(CLOSE_WAIT, socket.recv()).await;
}

async fn session(state: AppState, client: Option<Client>, mut socket: WebSocket) {
    state.metrics.ws_connections.fetch_add(1, Ordering::Relaxed);
    let (tx, mut rx) = mpsc::channel::<Outgoing>(OUTGOING);
    let mut running: HashMap<String, Running> = HashMap::new();
    let mut following: Vec<tokio::task::JoinHandle<()>> = Vec::new();
    let mut shutdown = state.shutdown.subscribe();
    let keyed = client.as_ref().is_some_and(|c| c.digest.is_some());
    let mut recheck = tokio::time::interval_at(tokio::time::Instant::now() + KEY_RECHECK, KEY_RECHECK);
    recheck.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            incoming = socket.recv() => {
                let text = match incoming {
                    Some(Ok(Message::Text(t))) => t,
                    Some(Ok(Message::Binary(_))) => {
                        // Charged and checked as every message is (found by an audit: binary messages were free,
                        // and passed a revoked key).
                        if keyed && let Some(p) = key_revoked(&state, client.as_ref()).await {
                            close_revoked(&mut socket, &p).await;
                            break;
                        }
                        let p = pay(client.as_ref())
                            .err()
                            .unwrap_or_else(|| Problem::bad_request("send JSON text messages, not binary ones"));
                        if send(&mut socket, error_text(None, &p)).await.is_err() { break; }
                        continue;
                    }
                    Some(Ok(Message::Close(_))) => {
                        // The library has queued the answering close frame (RFC 6455 5.5.1); reading on sends it
                        // and sees the connection end.
                        let _ = tokio::time::timeout(CLOSE_WAIT, socket.recv()).await;
                        break;
                    }
                    None => break,
                    Some(Err(e)) => {
                        close_on_error(&mut socket, &e, state.config.max_body_bytes).await;
                        break;
                    }
                    Some(Ok(_)) => continue,
                };
                if keyed && let Some(p) = key_revoked(&state, client.as_ref()).await {
                    close_revoked(&mut socket, &p).await;
                    break;
                }
                if let Some(reply) = handle(&state, client.as_ref(), &text, &tx, &mut running, &mut following).await
                    && send(&mut socket, reply).await.is_err()
                {
                    break;
                }
            }
            Some(out) = rx.recv() => {
                let text = match out {
                    Outgoing::Text(t) => t,
                    Outgoing::Finished { id, text } => {
                        running.remove(&id);
                        text
                    }
                };
                if send(&mut socket, text).await.is_err() { break; }
            }
            _ = recheck.tick(), if keyed => {
                following.retain(|task| !task.is_finished());
                if (!running.is_empty() || !following.is_empty())
                    && let Some(p) = key_revoked(&state, client.as_ref()).await
                {
                    close_revoked(&mut socket, &p).await;
                    break;
                }
            }
            _ = shutdown.changed() => {
                // The server stops, and its searches with it: their answers are sent before the socket closes,
                // with 1001 (found by an audit: the socket closed at once, without them and without a code).
                let _ = tokio::time::timeout(SHUTDOWN_ANSWERS, async {
                    while !running.is_empty() {
                        let Some(out) = rx.recv().await else { break };
                        let text = match out {
                            Outgoing::Text(t) => t,
                            Outgoing::Finished { id, text } => {
                                running.remove(&id);
                                text
                            }
                        };
                        if send(&mut socket, text).await.is_err() {
                            break;
                        }
                    }
                })
                .await;
                use axum::extract::ws::CloseFrame;
                let frame = CloseFrame { code: 1001, reason: Utf8Bytes::from_static("the server is shutting down") };
                let _ = tokio::time::timeout(CLOSE_WAIT, socket.send(Message::Close(Some(frame)))).await;
                break;
            }
        }
    }
    // Dropping the followers leaves every analysis of this socket (a search nobody else follows stops).
    drop(running);
    for task in following {
        task.abort();
    }
    state.metrics.ws_connections.fetch_sub(1, Ordering::Relaxed);
}

/// How long a socket whose client sent a close frame is given to send the answering one.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// How long a stop asked of an analysis that has not reported yet waits for its answer before the analysis is
/// dropped, if it is still waiting for a worker (an `error` then ends it).
const STOP_UNSTARTED: Duration = Duration::from_secs(1);

/// How long a socket of a stopping server waits for its analyses' answers before it closes.
const SHUTDOWN_ANSWERS: Duration = Duration::from_secs(3);

/// A message the socket could not take ends the socket with a close code and a reason (RFC 6455 7.4.1): 1009
/// for a message or frame larger than the limit, 1007 for text that is not UTF-8, 1002 for any other breach
/// of the protocol. A connection already gone gets nothing.
async fn close_on_error(socket: &mut WebSocket, error: &axum::Error, limit: usize) {
    use axum::extract::ws::CloseFrame;
    use tungstenite::Error as WsError;
    // axum wraps the WebSocket library's error: its kind is read from the error itself, not from its message.
    let kind = std::error::Error::source(error).and_then(|e| e.downcast_ref::<WsError>());
    let (code, reason) = match kind {
        Some(WsError::Capacity(_)) => (1009, format!("message too big: at most {limit} bytes")),
        Some(WsError::Utf8(_)) => (1007, "a text message must be UTF-8".to_string()),
        Some(WsError::Io(_) | WsError::ConnectionClosed | WsError::AlreadyClosed) => return,
        _ => (1002, "WebSocket protocol error".to_string()),
    };
    tracing::debug!(%error, code, "closing a WebSocket after a bad message");
    let frame = CloseFrame { code, reason: Utf8Bytes::from(reason) };
    let _ = socket.send(Message::Close(Some(frame))).await;
}

async fn send(socket: &mut WebSocket, text: String) -> Result<(), axum::Error> {
    socket.send(Message::Text(Utf8Bytes::from(text))).await
}

/// One client message; returns an immediate reply, if any. It never waits for the socket's outgoing queue,
/// which only the socket's own loop (the caller) empties.
async fn handle(
    state: &AppState,
    client: Option<&Client>,
    text: &str,
    tx: &mpsc::Sender<Outgoing>,
    running: &mut HashMap<String, Running>,
    following: &mut Vec<tokio::task::JoinHandle<()>>,
) -> Option<String> {
    let mut value: Value = match parse_json(text.as_bytes()) {
        Ok(v) => v,
        Err(p) => return Some(error_text(None, &pay(client).err().unwrap_or(p))),
    };
    // The member at fault is named (`id` of the wrong type, a missing `type`).
    let envelope: Envelope = match from_value(value.clone()) {
        Ok(e) => e,
        Err(p) => return Some(error_text(None, &pay(client).err().unwrap_or(p))),
    };
    // Every message but a stop costs what a request does (a stop gives a worker back: it is free), refused
    // ones too: a socket is limited as its requests over HTTP would be.
    if envelope.kind != "stop"
        && let Err(p) = pay(client)
    {
        return Some(error_text(envelope.id.as_deref(), &p));
    }
    let id = match envelope.id {
        Some(id) if !id.is_empty() && id.len() <= MAX_ID => id,
        Some(_) => return Some(error_text(None, &Problem::invalid("id", format!("id must be 1 to {MAX_ID} bytes")))),
        None => return Some(error_text(None, &Problem::invalid("id", "every message needs an `id`"))),
    };
    match envelope.kind.as_str() {
        "stop" => {
            match running.get(&id) {
                Some(r) => r.stop(),
                None => {
                    let p = Problem::not_found(format!("no analysis `{id}` is running"));
                    return Some(error_text(Some(&id), &p));
                }
            }
            None
        }
        "analyse" | "analyze" => {
            if running.contains_key(&id) {
                let p = Problem::invalid("id", format!("analysis `{id}` is already running"));
                return Some(error_text(Some(&id), &p));
            }
            if running.len() >= state.config.max_ws_analyses {
                let p = Problem::busy(format!(
                    "{} analyses are running on this socket; stop one first",
                    state.config.max_ws_analyses
                ));
                return Some(error_text(Some(&id), &p));
            }
            let infinite = match infinite_of(&value) {
                Ok(infinite) => infinite,
                Err(p) => return Some(error_text(Some(&id), &p)),
            };
            if let Value::Object(map) = &mut value {
                map.remove("type");
                map.remove("id");
                map.remove("infinite");
            }
            let req: AnalysisRequest = match from_value(value) {
                Ok(r) => r,
                Err(p) => return Some(error_text(Some(&id), &p)),
            };
            let kind = match analysis::game_kind(&req.game) {
                Ok(k) => k,
                Err(p) => return Some(error_text(Some(&id), &p)),
            };
            let started = with_game!(kind, G => start::<G>(state, client, &req, infinite, &id, tx).await);
            match started {
                Ok(Begun::Running(follower)) => {
                    running.insert(id, follower);
                    None
                }
                Ok(Begun::Answered(text)) => Some(text),
                Err(p) => Some(error_text(Some(&id), &p)),
            }
        }
        "subscribe" => {
            let Some(job) = value.get("job").and_then(Value::as_str).map(str::to_string) else {
                let p = Problem::invalid("job", "`subscribe` needs the annotation job's id in `job`");
                return Some(error_text(Some(&id), &p));
            };
            following.retain(|task| !task.is_finished());
            if following.len() >= MAX_SUBSCRIPTIONS {
                let p = Problem::busy(format!(
                    "{MAX_SUBSCRIPTIONS} annotation jobs are followed on this socket, the most it may follow; \
                     wait for one to end or follow it on another socket"
                ));
                return Some(error_text(Some(&id), &p));
            }
            match subscribe(state, client, id, job, tx.clone()).await {
                Followed::Reply(text) => Some(text),
                Followed::Task(task) => {
                    following.push(task);
                    None
                }
            }
        }
        other => {
            let p =
                Problem::invalid("type", format!("unknown message type `{other}` (known: analyse, stop, subscribe)"))
                    .with_token(other);
            Some(error_text(Some(&id), &p))
        }
    }
}

/// Pay [`CHEAP`] for a message.
fn pay(client: Option<&Client>) -> Result<(), Problem> {
    client.map_or(Ok(()), |c| c.charge(CHEAP))
}

/// The `infinite` member of an `analyse` message: absent is false; anything but a boolean is an error.
fn infinite_of(message: &Value) -> Result<bool, Problem> {
    match message.get("infinite") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => {
            let found = match other {
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Array(_) => "an array",
                _ => "an object",
            };
            Err(Problem::invalid("infinite", format!("infinite: expected true or false, found {found}")))
        }
    }
}

/// What following a job gave: a reply at once (an error, or a job that is over), or the follower's task.
enum Followed {
    Reply(String),
    Task(tokio::task::JoinHandle<()>),
}

/// Follow an annotation job's progress: `{"type":"progress","id","job","status","done","total"}` at each
/// change (at most one every [`THROTTLE`]) until the job is over. A job not running on this server: on SQLite
/// its stored state once (nobody else runs it); on a shared store its stored progress every [`STORE_POLL`]
/// until it is over (another server runs it). Another key's job is not found. The follower ends with the socket
/// (its task is aborted then).
async fn subscribe(
    state: &AppState,
    client: Option<&Client>,
    id: String,
    job: String,
    tx: mpsc::Sender<Outgoing>,
) -> Followed {
    // Another key's job does not exist for this client.
    match state.store.job(&job).await {
        Ok(Some(row)) if super::annotations::may_see(&row, client) => {}
        Ok(_) => {
            return Followed::Reply(error_text(Some(&id), &Problem::not_found(format!("no annotation job `{job}`"))));
        }
        Err(e) => return Followed::Reply(error_text(Some(&id), &Problem::from(e))),
    };
    if let Some(mut rx) = state.annotator.watch(&job) {
        let (id, job, store) = (id.clone(), job.clone(), state.store.clone());
        return Followed::Task(tokio::spawn(async move {
            let mut sent: Option<JobProgress> = None;
            loop {
                let now = rx.borrow_and_update().clone();
                let state = JobProgress { status: now.status, done: now.done, total: now.total, waiting: None };
                // A job that has not counted its positions yet has nothing to say.
                let counted = now.total > 0 || now.status != "queued";
                if counted && sent.as_ref() != Some(&state) {
                    if tx.send(Outgoing::Text(message(&id, &job, &state))).await.is_err() {
                        return;
                    }
                    sent = Some(state);
                }
                if is_over(now.status) {
                    return;
                }
                if rx.changed().await.is_err() {
                    // The job's task here ended before the job did. On a shared store another server goes on
                    // with it (this one lost its lease, or let it go in an outage): follow it there. Otherwise
                    // this server is stopping, and the socket with it.
                    if store.is_shared() {
                        follow_stored(&store, &id, &job, &tx, sent, None).await;
                    }
                    return;
                }
                tokio::time::sleep(THROTTLE).await;
            }
        }));
    }
    // Not running here: from the store. On a shared store another server may be running it: follow the
    // stored progress every `STORE_POLL` until the job is over or the socket closes.
    let store = state.store.clone();
    let mut total = None;
    let now = match stored_progress(&store, &job, &mut total).await {
        Ok(Some(found)) => found,
        Ok(None) => {
            return Followed::Reply(error_text(Some(&id), &Problem::not_found(format!("no annotation job `{job}`"))));
        }
        Err(e) => return Followed::Reply(error_text(Some(&id), &Problem::from(e))),
    };
    if is_over(now.status) || !store.is_shared() {
        return Followed::Reply(message(&id, &job, &now));
    }
    Followed::Task(tokio::spawn(async move {
        if tx.send(Outgoing::Text(message(&id, &job, &now))).await.is_err() {
            return;
        }
        follow_stored(&store, &id, &job, &tx, Some(now), total).await;
    }))
}

/// A job's status, positions done and positions in all, and why nobody runs it when a server said
/// ([`crate::store::JobRow::waiting`]).
#[derive(Clone, Debug, PartialEq)]
struct JobProgress {
    status: &'static str,
    done: u64,
    total: u64,
    waiting: Option<String>,
}

fn message(id: &str, job: &str, p: &JobProgress) -> String {
    let mut m = json!({"type": "progress", "id": id, "job": job, "status": p.status, "done": p.done, "total": p.total});
    if let Some(why) = &p.waiting {
        m["waiting"] = json!(why);
    }
    m.to_string()
}

fn is_over(status: &str) -> bool {
    matches!(status, "done" | "failed" | "cancelled")
}

/// A job's stored progress. Its positions in all are read once (`total`): they are written with the job and
/// never change, and reading every game of a large job at each poll cost more than the rest.
async fn stored_progress(
    store: &Store,
    job: &str,
    total: &mut Option<u64>,
) -> Result<Option<JobProgress>, crate::store::StoreError> {
    let Some(row) = store.job(job).await? else { return Ok(None) };
    let all = match *total {
        Some(all) => all,
        None => {
            let all = store.job_games(job).await?.iter().map(|g| u64::from(g.positions)).sum();
            *total = Some(all);
            all
        }
    };
    let done = store.job_position_count(job).await?;
    let waiting = row.waiting.filter(|_| !row.status.is_final());
    Ok(Some(JobProgress { status: row.status.as_str(), done, total: all, waiting }))
}

/// Send a job's stored progress every [`STORE_POLL`] when it changed (`sent` was the last sent), until the
/// job is over or the socket closes. A failing store is asked again at the next poll.
async fn follow_stored(
    store: &Store,
    id: &str,
    job: &str,
    tx: &mpsc::Sender<Outgoing>,
    mut sent: Option<JobProgress>,
    mut total: Option<u64>,
) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(STORE_POLL) => {}
            _ = tx.closed() => return,
        }
        let Ok(Some(now)) = stored_progress(store, job, &mut total).await else { continue };
        let over = is_over(now.status);
        if sent.as_ref() != Some(&now) {
            if tx.send(Outgoing::Text(message(id, job, &now))).await.is_err() {
                return;
            }
            sent = Some(now);
        }
        if over {
            return;
        }
    }
}

/// One analysis of a socket being followed: its task sends the progress and the answer, and ends with it.
struct Running {
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    fn stop(&self) {
        self.stop.send_replace(true);
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Leaving the analysis: its subscription is dropped with the task.
        self.task.abort();
    }
}

/// What starting an analysis gave.
enum Begun {
    /// The answer at once (from the cache, or a finished game): the caller replies with it.
    Answered(String),
    Running(Running),
}

/// Start one analysis through the analysis path.
async fn start<G: Game>(
    state: &AppState,
    client: Option<&Client>,
    req: &AnalysisRequest,
    infinite: bool,
    id: &str,
    tx: &mpsc::Sender<Outgoing>,
) -> Result<Begun, Problem> {
    let p: Prepared<G> = analysis::prepare(req, &state.config, &state.analysis)?;
    let mut request = analysis::request_of(&p)
        .priority(Priority::High)
        .currmove_after(Duration::from_millis(200))
        .client(client.map(|c| std::sync::Arc::clone(&c.id)));
    if infinite {
        request.limits = Limits::infinite();
    }
    // A message costs what a request does: the cheap part (paid as it came) and its search (given back when
    // the cache answers, or when no search could start).
    let cost = if infinite && p.setup.game.outcome().is_none() {
        search_cost(&request.limits, p.multipv)
    } else {
        analysis::search_extra(&p)
    };
    if let Some(client) = client {
        client.charge_rest(cost)?;
    }
    let started = match state.analysis.start(request).await {
        Ok(started) => started,
        Err(e) => {
            if let Some(client) = client {
                client.refund(cost);
            }
            return Err(e.into());
        }
    };
    let mut subscription = match started {
        Started::Answered(answer) => {
            if answer.cached
                && let Some(client) = client
            {
                client.refund(cost);
            }
            let mut v = serde_json::to_value(analysis::answer_out(&p, &answer))
                .map_err(|e| Problem::internal(e.to_string()))?;
            tag(&mut v, "bestmove", id);
            return Ok(Begun::Answered(v.to_string()));
        }
        Started::Running(subscription) => subscription,
    };
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let tx = tx.clone();
    let id = id.to_string();
    // An infinite analysis pays for its first period above, and for each further one as it runs: when the
    // client's bucket cannot pay, it is stopped and answers with what it has. So does one limited by depth
    // alone once it has run a period (its depth priced it, but a socket has no request timeout: found by an
    // audit, `depth` 64 held a worker for minutes for 17 units).
    let depth_only = p.limits.movetime.is_none() && p.limits.nodes.is_none();
    let payer = client.filter(|_| infinite || depth_only).cloned();
    let period_cost = search_cost(&Limits::movetime(INFINITE_PERIOD), p.multipv);
    let mut periods = tokio::time::interval_at(tokio::time::Instant::now() + INFINITE_PERIOD, INFINITE_PERIOD);
    periods.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // A search with limits is stopped at the request timeout, as over HTTP, and answers with what it has (found
    // by an audit: `depth` 64 on a socket held a worker with no end, while every HTTP request behind it got 408).
    let deadline = tokio::time::Instant::now() + state.config.request_timeout;
    let mut shutdown = state.shutdown.subscribe();
    let task = tokio::spawn(async move {
        let root = &p.setup.game;
        let flip = p.white_pov && root.side_to_move() != G::WHITE_SIDE;
        let format = p.setup.move_format.as_deref();
        let mut last_sent: Option<Instant> = None;
        // The depth and line number of the last complete line sent: each complete line of a deeper iteration goes
        // at once, anything else at most every THROTTLE (an external engine repeating its line was not held back).
        let mut last_line: Option<(u32, u32)> = None;
        let mut stop_asked = false;
        // Stopped by the request timeout or the server stopping, rather than by the client.
        let mut cut = false;
        let mut unpaid: Option<u32> = None;
        // Whether the search has reported since the last period was paid: one waiting in the queue, or an endless
        // one paused between its slices, reports nothing and is not charged for the time (found by an audit).
        let mut reported = false;
        // Whether it has reported at all (it has a worker, or had one).
        let mut began = false;
        // When a stop asked of a search that has not reported yet gives up waiting for its answer: a search still
        // queued behind busy workers is dropped then, and its place on the socket and in the queue freed (found by
        // an audit: stopped analyses kept both until a worker came free).
        let far = tokio::time::Instant::now() + Duration::from_secs(86_400 * 365);
        let mut give_up = far;
        loop {
            let next = tokio::select! {
                next = subscription.next() => next,
                _ = stopped.wait_for(|s| *s), if !stop_asked => {
                    subscription.stop();
                    stop_asked = true;
                    if !began {
                        give_up = tokio::time::Instant::now() + STOP_UNSTARTED;
                    }
                    continue;
                }
                _ = tokio::time::sleep_until(give_up), if give_up != far => break,
                _ = tokio::time::sleep_until(deadline), if !infinite && !stop_asked => {
                    subscription.stop();
                    (stop_asked, cut) = (true, true);
                    continue;
                }
                Ok(_) = shutdown.wait_for(|stopping| *stopping), if !stop_asked => {
                    subscription.stop();
                    (stop_asked, cut) = (true, true);
                    continue;
                }
                _ = periods.tick(), if payer.is_some() && !stop_asked => {
                    if !std::mem::take(&mut reported) {
                        continue;
                    }
                    if let Some(Err(refused)) = payer.as_ref().map(|c| c.charge(period_cost)) {
                        unpaid = Some(refused.retry_after.unwrap_or(1));
                        subscription.stop();
                        stop_asked = true;
                    }
                    continue;
                }
            };
            let text = match next {
                Ok(Progress::Info(info)) => {
                    (reported, began) = (true, true);
                    give_up = far;
                    let line = (info.depth, info.multipv);
                    let complete = !info.pv.is_empty()
                        && info.bound == ScoreBound::Exact
                        && last_line.is_none_or(|last| line > last);
                    if complete || last_sent.is_none_or(|t| t.elapsed() >= THROTTLE) {
                        last_sent = Some(Instant::now());
                        if complete {
                            last_line = Some(line);
                        }
                        let _ = tx.try_send(Outgoing::Text(info_text(root, &info, format, flip, &id)));
                    }
                    continue;
                }
                Ok(Progress::Done(answer)) => {
                    let mut out = analysis::answer_out(&p, &answer);
                    if cut && (infinite || !crate::analysis::satisfies(&answer.result, &p.limits)) {
                        out.stopped = true;
                    }
                    if let Some(retry) = unpaid {
                        out.stopped = true;
                        out.retry_after_s = Some(retry);
                    }
                    let mut v = serde_json::to_value(out).unwrap_or_else(|_| json!({}));
                    tag(&mut v, "bestmove", &id);
                    v.to_string()
                }
                Err(e) => error_text(Some(&id), &Problem::from(e)),
            };
            let _ = tx.send(Outgoing::Finished { id: id.clone(), text }).await;
            return;
        }
        // Given up: the search is dropped (cancelled, if nobody else follows it), and its place with it.
        drop(subscription);
        let p = Problem::new(
            axum::http::StatusCode::CONFLICT,
            "stopped-before-start",
            "Stopped before it started",
            "the analysis was stopped while it waited for a worker: it has no result",
        );
        let _ = tx.send(Outgoing::Finished { id: id.clone(), text: error_text(Some(&id), &p) }).await;
    });
    Ok(Begun::Running(Running { stop, task }))
}

fn tag(v: &mut Value, kind: &str, id: &str) {
    if let Value::Object(map) = v {
        map.insert("type".into(), json!(kind));
        map.insert("id".into(), json!(id));
    }
}

fn info_text<G: Game>(root: &G, info: &Info<G::Move>, format: Option<&str>, flip: bool, id: &str) -> String {
    let pv = convert_line(root, &format_line(root, &info.pv), format);
    let currmove = info.currmove.map(|m| {
        let main = root.format_move(m);
        convert_line(root, std::slice::from_ref(&main), format).into_iter().next().unwrap_or(main)
    });
    let score = pov_score(info.score.into(), flip);
    let mut v = json!({
        "type": "info", "id": id, "depth": info.depth, "seldepth": info.seldepth, "multipv": info.multipv,
        "score": score, "nodes": info.nodes, "nps": info.nps, "time_ms": info.time_ms, "pv": pv,
        "neval": info.neval, "hashfull": info.hashfull,
    });
    if let Value::Object(map) = &mut v {
        match info.bound {
            ScoreBound::Exact => {}
            ScoreBound::Lower => {
                map.insert("bound".into(), json!("lower"));
            }
            ScoreBound::Upper => {
                map.insert("bound".into(), json!("upper"));
            }
        }
        if let Some(m) = currmove {
            map.insert("currmove".into(), json!(m));
            map.insert("currmovenumber".into(), json!(info.currmovenumber));
        }
    }
    v.to_string()
}
