//! `GET /v1/engines`: the engines each game can be analysed with (kibitz's own and the engines file's), with
//! their own names and versions, their processes and counters, and the API's limits.

use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::State;
use serde::Serialize;

use super::AppState;
use super::analysis::ApiLimits;
use crate::analysis::ENGINE;
use crate::games::GameKind;

#[derive(Serialize)]
pub(super) struct EngineOut {
    /// What a request names it by (`"engine": "<name>"`).
    name: String,
    /// The engine's own name and version (null until one of its processes has started).
    id: Option<String>,
    /// `builtin` for kibitz's own search, else the protocol spoken with the engine.
    protocol: &'static str,
    /// Whether it answers this game's requests that name no engine.
    default: bool,
    /// External engines: processes configured, idle, and handed out or starting.
    #[serde(skip_serializing_if = "Option::is_none")]
    processes: Option<ProcessesOut>,
    /// External engines: searches answered, failures (the process was killed), restarts.
    #[serde(skip_serializing_if = "Option::is_none")]
    searches: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failures: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    restarts: Option<u64>,
    /// Why the last start failed, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    last_error: Option<String>,
}

#[derive(Serialize)]
struct ProcessesOut {
    configured: usize,
    idle: usize,
    busy: usize,
}

#[derive(Serialize)]
pub(super) struct GameEngines {
    game: &'static str,
    /// The engine used when a request names none.
    default: String,
    engines: Vec<EngineOut>,
}

#[derive(Serialize)]
pub(super) struct EnginesResponse {
    games: Vec<GameEngines>,
    limits: ApiLimits,
}

pub(super) async fn engines(State(state): State<AppState>) -> Json<EnginesResponse> {
    let registry = state.analysis.engines();
    let games = GameKind::ALL
        .iter()
        .map(|&game| {
            let external: Vec<_> = registry.list().iter().filter(|e| e.game == game).collect();
            let default = external.iter().find(|e| e.default).map_or("kibitz".to_string(), |e| e.name.clone());
            let mut engines = vec![EngineOut {
                name: "kibitz".into(),
                id: Some(ENGINE.into()),
                protocol: "builtin",
                default: default == "kibitz",
                processes: None,
                searches: None,
                failures: None,
                restarts: None,
                last_error: None,
            }];
            engines.extend(external.iter().map(|e| {
                let (idle, busy) = e.processes();
                EngineOut {
                    name: e.name.clone(),
                    id: e.id(),
                    protocol: e.protocol().name(),
                    default: e.default,
                    processes: Some(ProcessesOut { configured: e.spec.processes, idle, busy }),
                    searches: Some(e.stats.searches.load(Ordering::Relaxed)),
                    failures: Some(e.stats.failures.load(Ordering::Relaxed)),
                    restarts: Some(e.stats.restarts.load(Ordering::Relaxed)),
                    last_error: e.last_error(),
                }
            }));
            GameEngines { game: game.name(), default, engines }
        })
        .collect();
    Json(EnginesResponse { games, limits: ApiLimits::of(&state) })
}
