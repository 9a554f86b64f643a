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

use axum::extract::State;
use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::AppState;
use super::analysis::{self, AnalysisRequest, CacheMode, Prepared, convert_line, pov_score};
use super::extract::{from_value, parse_json};
use super::problem::Problem;
use crate::game::{Game, format_line};
use crate::pool::{JobHandle, Priority, SearchRequest};
use crate::search::{Event, Info, Limits, ScoreBound, SearchOptions};
use crate::store::CacheKey;
use crate::with_game;

/// Messages a socket may have waiting to be sent; progress beyond that is dropped, answers wait.
const OUTGOING: usize = 256;
/// Least time between two progress messages of one analysis (lines of a completed depth always go).
const THROTTLE: Duration = Duration::from_millis(100);
/// Longest an analysis id may be.
const MAX_ID: usize = 128;

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
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Response {
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
    let limit = state.config.max_body_bytes;
    upgrade.max_message_size(limit).max_frame_size(limit).on_upgrade(move |socket| session(state, socket))
}

fn error_text(id: Option<&str>, p: &Problem) -> String {
    let mut v = serde_json::to_value(p).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut v {
        map.insert("problem".into(), map.get("type").cloned().unwrap_or(Value::Null));
        map.insert("type".into(), json!("error"));
        if let Some(id) = id {
            map.insert("id".into(), json!(id));
        }
    }
    v.to_string()
}

async fn session(state: AppState, mut socket: WebSocket) {
    state.metrics.ws_connections.fetch_add(1, Ordering::Relaxed);
    let (tx, mut rx) = mpsc::channel::<Outgoing>(OUTGOING);
    let mut running: HashMap<String, JobHandle> = HashMap::new();
    let mut shutdown = state.shutdown.subscribe();
    loop {
        tokio::select! {
            incoming = socket.recv() => {
                let text = match incoming {
                    Some(Ok(Message::Text(t))) => t,
                    Some(Ok(Message::Binary(_))) => {
                        let p = Problem::bad_request("send JSON text messages, not binary ones");
                        if send(&mut socket, error_text(None, &p)).await.is_err() { break; }
                        continue;
                    }
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue,
                };
                if let Some(reply) = handle(&state, &text, &tx, &mut running).await
                    && send(&mut socket, reply).await.is_err()
                {
                    break;
                }
            }
            Some(out) = rx.recv() => {
                let text = match out {
                    Outgoing::Text(t) => t,
                    Outgoing::Finished { id, text } => {
                        if let Some(h) = running.remove(&id) {
                            h.detach();
                        }
                        text
                    }
                };
                if send(&mut socket, text).await.is_err() { break; }
            }
            _ = shutdown.changed() => {
                let _ = socket.send(Message::Close(None)).await;
                break;
            }
        }
    }
    // Dropping the handles cancels every analysis of this socket.
    drop(running);
    state.metrics.ws_connections.fetch_sub(1, Ordering::Relaxed);
}

async fn send(socket: &mut WebSocket, text: String) -> Result<(), axum::Error> {
    socket.send(Message::Text(Utf8Bytes::from(text))).await
}

/// One client message; returns an immediate reply, if any.
async fn handle(
    state: &AppState,
    text: &str,
    tx: &mpsc::Sender<Outgoing>,
    running: &mut HashMap<String, JobHandle>,
) -> Option<String> {
    let mut value: Value = match parse_json(text.as_bytes()) {
        Ok(v) => v,
        Err(p) => return Some(error_text(None, &p)),
    };
    let envelope: Envelope = match serde_json::from_value(value.clone()) {
        Ok(e) => e,
        Err(e) => return Some(error_text(None, &Problem::invalid("type", e.to_string()))),
    };
    let id = match envelope.id {
        Some(id) if !id.is_empty() && id.len() <= MAX_ID => id,
        Some(_) => return Some(error_text(None, &Problem::invalid("id", format!("id must be 1 to {MAX_ID} bytes")))),
        None => return Some(error_text(None, &Problem::invalid("id", "every message needs an `id`"))),
    };
    match envelope.kind.as_str() {
        "stop" => {
            match running.get(&id) {
                Some(h) => h.stop(),
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
            let infinite = value.get("infinite").and_then(Value::as_bool).unwrap_or(false);
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
            let started = with_game!(kind, G => start::<G>(state, &req, infinite, &id, tx).await);
            match started {
                Ok(Some(handle)) => {
                    running.insert(id, handle);
                    None
                }
                Ok(None) => None,
                Err(p) => Some(error_text(Some(&id), &p)),
            }
        }
        "subscribe" => {
            let Some(job) = value.get("job").and_then(Value::as_str).map(str::to_string) else {
                let p = Problem::invalid("job", "`subscribe` needs the annotation job's id in `job`");
                return Some(error_text(Some(&id), &p));
            };
            subscribe(state, id, job, tx.clone()).await
        }
        other => {
            let p =
                Problem::invalid("type", format!("unknown message type `{other}` (known: analyse, stop, subscribe)"))
                    .with_token(other);
            Some(error_text(Some(&id), &p))
        }
    }
}

/// Follow an annotation job's progress: `{"type":"progress","id","job","status","done","total"}` at each
/// change (at most one every [`THROTTLE`]) until the job is over; a job not running on this server gets its
/// stored state once. The follower ends with the socket.
async fn subscribe(state: &AppState, id: String, job: String, tx: mpsc::Sender<Outgoing>) -> Option<String> {
    let message = |status: &str, done: u64, total: u64| {
        json!({"type": "progress", "id": id, "job": job, "status": status, "done": done, "total": total}).to_string()
    };
    if let Some(mut rx) = state.annotator.watch(&job) {
        let (id, job) = (id.clone(), job.clone());
        tokio::spawn(async move {
            let mut sent: Option<(&'static str, u64, u64)> = None;
            let mut closed = false;
            loop {
                let now = rx.borrow_and_update().clone();
                let state = (now.status, now.done, now.total);
                // A job that has not counted its positions yet has nothing to say.
                let counted = now.total > 0 || now.status != "queued";
                if counted && sent != Some(state) {
                    let text = json!({"type": "progress", "id": id, "job": job, "status": now.status,
                                      "done": now.done, "total": now.total})
                    .to_string();
                    if tx.send(Outgoing::Text(text)).await.is_err() {
                        return;
                    }
                    sent = Some(state);
                }
                if closed || matches!(now.status, "done" | "failed" | "cancelled") {
                    return;
                }
                // A closed channel (the job task ended) still gets its last state sent, once.
                closed = rx.changed().await.is_err();
                if !closed {
                    tokio::time::sleep(THROTTLE).await;
                }
            }
        });
        return None;
    }
    let store = &state.store;
    let row = match store.job(&job).await {
        Ok(Some(row)) => row,
        Ok(None) => return Some(error_text(Some(&id), &Problem::not_found(format!("no annotation job `{job}`")))),
        Err(e) => return Some(error_text(Some(&id), &Problem::unavailable(format!("the job store failed: {e}")))),
    };
    let total: u64 = store.job_games(&job).await.map_or(0, |g| g.iter().map(|g| u64::from(g.positions)).sum());
    let done = store.job_positions(&job).await.map_or(0, |p| p.len() as u64);
    Some(message(row.status.as_str(), done, total))
}

/// Start one analysis; `Ok(None)` when it was answered at once (from the cache, or a finished game).
async fn start<G: Game>(
    state: &AppState,
    req: &AnalysisRequest,
    infinite: bool,
    id: &str,
    tx: &mpsc::Sender<Outgoing>,
) -> Result<Option<JobHandle>, Problem> {
    let p: Prepared<G> = analysis::prepare(req, &state.config)?;
    let key = CacheKey { game: G::NAME.to_string(), position: p.setup.key.clone(), multipv: p.multipv };
    if p.setup.game.outcome().is_some() || (!infinite && p.cache != CacheMode::Refresh) {
        let answer = analysis::immediate_answer(state, &p, &key).await?;
        if let Some(answer) = answer {
            let mut v = serde_json::to_value(&answer).map_err(|e| Problem::internal(e.to_string()))?;
            tag(&mut v, "bestmove", id);
            let _ = tx.send(Outgoing::Text(v.to_string())).await;
            return Ok(None);
        }
    }
    let limits = if infinite { Limits::infinite() } else { p.limits.clone() };
    let root = p.setup.game.clone();
    let format = p.setup.move_format.clone();
    let flip = p.white_pov && root.side_to_move() != G::WHITE_SIDE;
    let id_owned = id.to_string();
    let tx = tx.clone();
    let store = state.store.clone();
    let writes = state.pending_writes.clone();
    let runtime = tokio::runtime::Handle::current();
    let prepared = std::sync::Arc::new(p);
    let answer_prepared = std::sync::Arc::clone(&prepared);
    let mut last_sent: Option<Instant> = None;
    let sink = move |event: Event<G::Move>| match event {
        Event::Info(info) => {
            let complete = !info.pv.is_empty() && info.bound == ScoreBound::Exact;
            if complete || last_sent.is_none_or(|t| t.elapsed() >= THROTTLE) {
                last_sent = Some(Instant::now());
                let text = info_text(&root, &info, format.as_deref(), flip, &id_owned);
                let _ = tx.try_send(Outgoing::Text(text));
            }
        }
        Event::Done(done) => {
            let result = crate::store::CachedAnalysis::from_search(&root, &done);
            let mut v =
                serde_json::to_value(analysis::respond(&answer_prepared, &result, false)).unwrap_or_else(|_| json!({}));
            tag(&mut v, "bestmove", &id_owned);
            let finished = Outgoing::Finished { id: id_owned.clone(), text: v.to_string() };
            if done.depth > 0 {
                // Stored before it is sent, so that the client finds it cached when it asks again.
                let store = store.clone();
                let key = key.clone();
                let pending = writes.start();
                let tx = tx.clone();
                runtime.spawn(async move {
                    let _pending = pending;
                    if let Err(e) = store.put_analysis(&key, &result).await {
                        tracing::warn!(error = %e, "could not store an analysis");
                    }
                    let _ = tx.send(finished).await;
                });
            } else {
                // The answer must arrive: wait for room (this runs on a worker thread, not the runtime).
                let _ = tx.blocking_send(finished);
            }
        }
    };
    let request = SearchRequest {
        game: prepared.setup.game.clone(),
        limits,
        options: SearchOptions {
            multipv: prepared.multipv as usize,
            threads: 1,
            currmove_after: Duration::from_millis(200),
            ..SearchOptions::default()
        },
        priority: Priority::High,
    };
    let handle = state.pool.submit(request, sink)?;
    state.metrics.searches.fetch_add(1, Ordering::Relaxed);
    Ok(Some(handle))
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
