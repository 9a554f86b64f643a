//! The OpenAPI 3.1 document of the API. It is written here beside the handlers, served at
//! `/v1/openapi.json`, printed by `kibitz openapi`, and committed as `api/openapi.json`; a test keeps the
//! committed file equal to this one, and the integration tests check the handlers against it.

use serde_json::{Value, json};

use crate::games::GameKind;

fn problem_ref() -> Value {
    json!({ "application/problem+json": { "schema": { "$ref": "#/components/schemas/Problem" } } })
}

fn errors(codes: &[(&str, &str)]) -> Value {
    let mut map = serde_json::Map::new();
    for (code, text) in codes {
        map.insert(code.to_string(), json!({ "description": text, "content": problem_ref() }));
    }
    Value::Object(map)
}

/// Why a request that needs the store may be answered 503.
const STORE_AWAY: &str = "The store (SQLite file or PostgreSQL) cannot be reached now (see Retry-After).";
const STORE_AWAY_OR_STOPPING: &str =
    "The server is shutting down, or the store cannot be reached now (see Retry-After).";

fn with_errors(ok: Value, codes: &[(&str, &str)]) -> Value {
    let mut responses = errors(codes);
    if let (Value::Object(map), Value::Object(ok)) = (&mut responses, ok) {
        for (k, v) in ok {
            map.insert(k, v);
        }
    }
    responses
}

fn json_body(schema: &str) -> Value {
    json!({ "required": true, "content": { "application/json": { "schema": { "$ref": format!("#/components/schemas/{schema}") } } } })
}

fn json_ok(description: &str, schema: &str) -> Value {
    json!({ "200": { "description": description,
        "content": { "application/json": { "schema": { "$ref": format!("#/components/schemas/{schema}") } } } } })
}

const BAD_INPUT: [(&str, &str); 4] = [
    ("400", "The body is not JSON."),
    ("413", "The body is too large."),
    ("415", "The body is not sent as JSON, or is sent compressed (`Content-Encoding`)."),
    ("422", "A member is invalid: unknown game, unreadable position or move (the token is named), bad limits."),
];

/// The annotation endpoints (a separate `json!` to stay within the macro's recursion limit).
fn annotation_paths() -> Value {
    let annotation_errors: Vec<(&str, &str)> = BAD_INPUT
        .iter()
        .copied()
        .filter(|(status, _)| *status != "422")
        .chain([
            (
                "422",
                "A member is invalid: unknown game, no readable game, bad limits, more positions than the server takes \
                 in one job or than the key's whole daily quota (`/problems/larger-than-quota`).",
            ),
            ("503", STORE_AWAY_OR_STOPPING),
        ])
        .collect();
    json!({
            "/v1/annotations": { "get": {
                "summary": "The annotation jobs of the key that asks, newest first.",
                "description": "A job made without a key is read by its id only (whoever holds the id may read it): it is in no list. Jobs over are kept until removed (`DELETE` with `purge=true`) or, on a server started with `--keep-annotations-days`, until that long after their last change.",
                "operationId": "listAnnotations",
                "parameters": [ { "name": "limit", "in": "query", "schema": { "type": "integer", "minimum": 1, "maximum": 1000, "default": 100 },
                    "description": "How many jobs." } ],
                "responses": with_errors(json_ok("The key's jobs.", "AnnotationList"),
                    &[("422", "`limit` is not 1 to 1000."), ("503", STORE_AWAY)])
            }, "post": {
                "summary": "Annotate one game or a collection: every move judged (evaluation before and after, loss, class, better line), as a persisted job.",
                "description": "The job is stored before the answer and runs on the worker pool at low priority; each evaluated position is written as it finishes, so a restarted server resumes the job. Games that cannot be read are reported with their index, line and token; the others are annotated.",
                "operationId": "createAnnotation",
                "requestBody": json_body("AnnotationRequest"),
                "responses": with_errors(
                    json!({ "202": { "description": "Accepted; follow `status_url`.",
                        "headers": { "Location": { "description": "The job's status URL.", "schema": { "type": "string" } } },
                        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/AnnotationAccepted" } } } } }),
                    &annotation_errors)
            }},
            "/v1/annotations/{id}": {
                "parameters": [ { "name": "id", "in": "path", "required": true, "schema": { "type": "string" } } ],
                "get": {
                    "summary": "A job's status, progress and the results so far.",
                    "operationId": "getAnnotation",
                    "parameters": [ { "name": "moves", "in": "query", "schema": { "type": "boolean", "default": true },
                        "description": "`false`: the progress only, each game's `moves` empty and no `players` (cheap to ask often)." } ],
                    "responses": with_errors(json_ok("The job.", "AnnotationJob"),
                        &[("404", "No such job."), ("422", "A query parameter is invalid (`moves` not `true` or `false`)."), ("503", STORE_AWAY)])
                },
                "delete": {
                    "summary": "Cancel a job (its results so far are kept), or with `purge=true` remove it and its results.",
                    "operationId": "cancelAnnotation",
                    "parameters": [ { "name": "purge", "in": "query", "schema": { "type": "boolean", "default": false },
                        "description": "`true`: remove the job, its games and results from the store, cancelling it first if it is not over (status `removed`)." } ],
                    "responses": with_errors(json_ok("Cancelled or removed.", "AnnotationCancelled"),
                        &[("404", "No such job."), ("409", "The job is already over (and `purge` not asked)."),
                          ("422", "A query parameter is invalid (`purge` not `true` or `false`)."), ("503", STORE_AWAY)])
                }
            },
            "/v1/annotations/{id}/export": {
                "parameters": [ { "name": "id", "in": "path", "required": true, "schema": { "type": "string" } } ],
                "get": {
                    "summary": "The annotated games: the game's own format (PGN/PDN with `[%eval]` comments, NAGs and better lines beside the record's own comments, glyphs and variations), readable text, or JSON.",
                    "operationId": "exportAnnotation",
                    "parameters": [ { "name": "format", "in": "query", "schema": { "type": "string" },
                        "description": "The game's export format (see /v1/games), `text` or `json`; default: the game's own, else text." } ],
                    "responses": with_errors(json!({ "200": { "description": "The export.",
                        "content": { "text/plain": {}, "application/json": { "schema": { "$ref": "#/components/schemas/AnnotationJob" } } } } }),
                        &[("404", "No such job."), ("422", "Unknown export format."), ("503", STORE_AWAY)])
                }
            }
    })
}

fn annotation_schemas(games: &[&str]) -> Value {
    json!({
            "AnnotationRequest": {
                "type": "object", "required": ["game"], "additionalProperties": false,
                "properties": {
                    "game": { "type": "string", "enum": games },
                    "text": { "type": "string", "description": "One game or many (PGN, PDN, GUIDE game strings, GameStrings, FEN + moves: see `record_formats` in /v1/games)." },
                    "games": { "type": "array", "items": { "type": "string" }, "description": "Games as separate texts (instead of `text`)." },
                    "format": { "type": "string", "description": "The record format; detected when absent." },
                    "depth": { "type": "integer", "minimum": 1, "description": "Per position." },
                    "movetime_ms": { "type": "integer", "minimum": 1, "description": "Per position." },
                    "nodes": { "type": "integer", "minimum": 1, "description": "Per position." },
                    "threshold": { "type": "integer", "minimum": 0, "default": 100, "description": "GUIDE's convention: moves losing at least this many centi-units are flagged." },
                    "priority": { "type": "string", "enum": ["low", "normal"], "default": "low" },
                    "engine": { "type": "string", "description": "The engine to search with (see /v1/engines): `kibitz` or a configured engine; default, the game's default engine. Fixed when the job is made." }
                }
            },
            "RecordError": {
                "type": "object", "required": ["index", "line", "token", "message"],
                "properties": {
                    "index": { "type": "integer", "description": "0-based index of the game." },
                    "line": { "type": "integer" },
                    "token": { "type": "string" },
                    "message": { "type": "string" }
                }
            },
            "AnnotationAccepted": {
                "type": "object", "required": ["id", "status_url", "export_url", "games", "positions", "errors"],
                "properties": {
                    "id": { "type": "string" },
                    "status_url": { "type": "string" },
                    "export_url": { "type": "string" },
                    "games": { "type": "integer" },
                    "positions": { "type": "integer" },
                    "errors": { "type": "array", "items": { "$ref": "#/components/schemas/RecordError" } },
                    "clamped": { "type": "array", "items": { "$ref": "#/components/schemas/Clamped" }, "description": "Limits lowered to the server's maxima (they are also in the job's settings)." }
                }
            },
            "Eval": {
                "description": "From the mover's point of view: centi-units, plies to a forced end, or the result of a finished game.",
                "oneOf": [
                    { "type": "object", "required": ["cp"], "properties": { "cp": { "type": "integer" } }, "additionalProperties": false },
                    { "type": "object", "required": ["mate"], "properties": { "mate": { "type": "integer" } }, "additionalProperties": false },
                    { "type": "object", "required": ["result"], "properties": { "result": { "type": "string", "enum": ["win", "loss", "draw"] } }, "additionalProperties": false }
                ]
            },
            "PlayerSummary": {
                "type": "object",
                "required": ["moves", "best", "good", "inaccuracies", "mistakes", "blunders", "mates_found", "mates_missed", "over_threshold", "average_loss", "accuracy"],
                "properties": {
                    "moves": { "type": "integer" }, "best": { "type": "integer" }, "good": { "type": "integer" },
                    "inaccuracies": { "type": "integer" }, "mistakes": { "type": "integer" }, "blunders": { "type": "integer" },
                    "mates_found": { "type": "integer" }, "mates_missed": { "type": "integer" },
                    "over_threshold": { "type": "integer" },
                    "average_loss": { "type": "number", "description": "Centi-units per move." },
                    "accuracy": { "type": "number", "description": "0-100 (lichess's formula)." }
                }
            },
            "AnnotatedMove": {
                "type": "object",
                "required": ["ply", "side", "move", "eval_before", "eval_after", "loss", "class", "over_threshold", "accuracy", "best_line", "depth"],
                "properties": {
                    "ply": { "type": "integer", "description": "1-based: the n-th move of the game." },
                    "side": { "type": "string" },
                    "move": { "type": "string", "description": "In the game's main notation." },
                    "eval_before": { "$ref": "#/components/schemas/Eval" },
                    "eval_after": { "$ref": "#/components/schemas/Eval" },
                    "loss": { "type": "integer", "description": "Centi-units the move cost its player." },
                    "class": { "type": "string", "enum": ["best", "good", "inaccuracy", "mistake", "blunder", "mate_found", "mate_missed"] },
                    "over_threshold": { "type": "boolean" },
                    "accuracy": { "type": "number" },
                    "best": { "type": "string" },
                    "best_line": { "type": "array", "items": { "type": "string" } },
                    "depth": { "type": "integer" }
                }
            },
            "AnnotatedGame": {
                "type": "object", "required": ["index", "status", "progress", "moves"],
                "properties": {
                    "index": { "type": "integer" },
                    "status": { "type": "string", "enum": ["queued", "running", "done", "failed"] },
                    "progress": { "$ref": "#/components/schemas/Progress" },
                    "line": { "type": "integer" },
                    "error": { "$ref": "#/components/schemas/RecordError" },
                    "tags": { "type": "object" },
                    "start": { "type": "string" },
                    "result": { "type": "string" },
                    "moves": { "type": "array", "items": { "$ref": "#/components/schemas/AnnotatedMove" } },
                    "players": { "type": "object", "description": "By side name.", "additionalProperties": { "$ref": "#/components/schemas/PlayerSummary" } }
                }
            },
            "Progress": {
                "type": "object", "required": ["done", "total"],
                "properties": { "done": { "type": "integer" }, "total": { "type": "integer" } }
            },
            "AnnotationJob": {
                "type": "object", "required": ["id", "game", "status", "engine", "created_ms", "updated_ms", "settings", "progress", "games"],
                "properties": {
                    "id": { "type": "string" },
                    "game": { "type": "string" },
                    "status": { "type": "string", "enum": ["queued", "running", "done", "failed", "cancelled"] },
                    "error": { "type": "string" },
                    "waiting": { "type": "string", "description": "While the job is not over, why nobody runs it, when a server that let it go said: with several servers on PostgreSQL, one lacking the job's external engine. The job waits until a server that has it claims it (or until it is cancelled)." },
                    "engine": { "type": "string" },
                    "created_ms": { "type": "integer" },
                    "updated_ms": { "type": "integer" },
                    "settings": { "type": "object" },
                    "progress": { "$ref": "#/components/schemas/Progress" },
                    "games": { "type": "array", "items": { "$ref": "#/components/schemas/AnnotatedGame" } }
                }
            },
            "AnnotationCancelled": {
                "type": "object", "required": ["id", "status"],
                "properties": { "id": { "type": "string" }, "status": { "type": "string", "enum": ["cancelled", "removed"] } }
            },
            "AnnotationList": {
                "type": "object", "required": ["jobs"],
                "properties": { "jobs": { "type": "array", "items": {
                    "type": "object", "required": ["id", "game", "status", "created_ms", "updated_ms", "status_url"],
                    "properties": {
                        "id": { "type": "string" },
                        "game": { "type": "string" },
                        "status": { "type": "string", "enum": ["queued", "running", "done", "failed", "cancelled"] },
                        "error": { "type": "string" },
                        "created_ms": { "type": "integer" },
                        "updated_ms": { "type": "integer" },
                        "status_url": { "type": "string" }
                    } } } }
            }
    })
}

/// The document.
/// `GET /v1/engines`'s answer.
fn engine_schemas() -> Value {
    json!({
            "Engines": {
                "type": "object", "required": ["games", "limits"],
                "properties": {
                    "games": { "type": "array", "items": { "type": "object", "required": ["game", "default", "engines"],
                        "properties": {
                            "game": { "type": "string" },
                            "default": { "type": "string", "description": "The engine of requests that name none." },
                            "engines": { "type": "array", "items": { "type": "object", "required": ["name", "id", "protocol", "default"],
                                "properties": {
                                    "name": { "type": "string", "description": "What requests name it by." },
                                    "id": { "type": ["string", "null"], "description": "Its own name and version (null until a process started)." },
                                    "protocol": { "type": "string", "description": "`builtin`, `uci`, `uhp`, `hub` or `checkers`." },
                                    "default": { "type": "boolean" },
                                    "processes": { "type": "object", "properties": {
                                        "configured": { "type": "integer" }, "idle": { "type": "integer" }, "busy": { "type": "integer" } } },
                                    "searches": { "type": "integer" },
                                    "failures": { "type": "integer" },
                                    "restarts": { "type": "integer" },
                                    "last_error": { "type": "string" }
                                } } }
                        } } },
                    "limits": { "type": "object" }
                }
            }
    })
}

/// `POST /v1/records` (a separate `json!` to stay within the macro's recursion limit).
fn record_paths() -> Value {
    json!({
        "/v1/records": { "post": {
            "summary": "Read a game record (PGN, PDN, GameStrings: see `record_formats` in /v1/games) into each game's start position and moves.",
            "description": "Positions and moves come in the game's main formats, ready for /v1/moves, /v1/analysis and /v1/board.svg. Games that cannot be read are reported with their index, line and token; the others are returned. A text with no readable game is refused (422, naming the first bad token).",
            "operationId": "readRecords",
            "requestBody": json_body("RecordsRequest"),
            "responses": with_errors(json_ok("The games read.", "Records"), &BAD_INPUT)
        }}
    })
}

fn record_schemas(games: &[&str]) -> Value {
    json!({
        "RecordsRequest": {
            "type": "object", "required": ["game", "text"], "additionalProperties": false,
            "properties": {
                "game": { "type": "string", "enum": games },
                "text": { "type": "string", "description": "One game or many." },
                "format": { "type": "string", "description": "The record format; detected when absent." }
            }
        },
        "Records": {
            "type": "object", "required": ["game", "games", "errors"],
            "properties": {
                "game": { "type": "string" },
                "games": { "type": "array", "items": {
                    "type": "object", "required": ["index", "line", "start", "moves"],
                    "properties": {
                        "index": { "type": "integer", "description": "0-based index of the game in the text." },
                        "line": { "type": "integer", "description": "1-based line where the game begins." },
                        "tags": { "type": "object", "additionalProperties": { "type": "string" } },
                        "start": { "type": "string", "description": "The position before the first move, in the game's main format." },
                        "moves": { "type": "array", "items": { "type": "string" }, "description": "In the game's main notation." },
                        "result": { "type": "string" }
                    }
                } },
                "errors": { "type": "array", "items": { "$ref": "#/components/schemas/RecordError" } }
            }
        }
    })
}

pub fn document() -> Value {
    let games: Vec<&str> = GameKind::ALL.iter().map(|k| k.name()).collect();
    let analysis_errors: Vec<(&str, &str)> = BAD_INPUT
        .iter()
        .copied()
        .chain([
            ("404", "`cache: only` and nothing is cached."),
            ("502", "The external engine failed (its process is restarted; `engine` names it)."),
            ("503", "Every worker (or every process of the engine) is busy, or (`cache: only`) the store cannot be asked (see Retry-After)."),
        ])
        .collect();
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "kibitz",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Analysis of board-game positions: evaluations, best lines streamed as they deepen, legal moves and notation conversion. Scores are from the side to move (or White with `white_pov`) in centi-units where one man, pawn or soldier is 100; mate scores count plies to the end of the game."
        },
        "paths": {
            "/v1/games": { "get": {
                "summary": "The games served, their formats, start positions and the server's limits.",
                "operationId": "listGames",
                "responses": json_ok("The games.", "Games")
            }},
            "/v1/analysis": {
                "post": {
                    "summary": "Analyse a position (from the cache when it holds a deep enough result).",
                    "operationId": "analyse",
                    "requestBody": json_body("AnalysisRequest"),
                    "responses": with_errors(json_ok("The analysis.", "Analysis"), &analysis_errors)
                },
                "get": {
                    "summary": "The deepest cached analysis of a position, without searching.",
                    "operationId": "cachedAnalysis",
                    "parameters": [
                        { "name": "game", "in": "query", "required": true, "schema": { "type": "string", "enum": games } },
                        { "name": "position", "in": "query", "schema": { "type": "string" } },
                        { "name": "format", "in": "query", "schema": { "type": "string" } },
                        { "name": "moves", "in": "query", "description": "Comma-separated moves played first.", "schema": { "type": "string" } },
                        { "name": "multipv", "in": "query", "schema": { "type": "integer", "minimum": 1 } },
                        { "name": "move_format", "in": "query", "schema": { "type": "string" } },
                        { "name": "white_pov", "in": "query", "schema": { "type": "boolean" } },
                        { "name": "engine", "in": "query", "description": "Whose cached analysis (default: the game's default engine).", "schema": { "type": "string" } }
                    ],
                    "responses": with_errors(json_ok("The cached analysis.", "Analysis"),
                        &[("404", "Nothing cached for this position."), ("422", "A parameter is invalid."),
                          ("503", STORE_AWAY_OR_STOPPING)])
                }
            },
            "/v1/engines": { "get": {
                "summary": "The engines each game can be analysed with: kibitz's own and the engines file's, with their own names and versions, processes and counters.",
                "operationId": "listEngines",
                "responses": json_ok("The engines per game.", "Engines")
            }},
            "/v1/moves": { "post": {
                "summary": "The legal moves of a position and its outcome if the game is over.",
                "operationId": "legalMoves",
                "requestBody": json_body("MovesRequest"),
                "responses": with_errors(json_ok("The legal moves.", "Moves"), &BAD_INPUT)
            }},
            "/v1/convert": { "post": {
                "summary": "Translate a position and a move list between the formats of one game.",
                "operationId": "convert",
                "requestBody": json_body("ConvertRequest"),
                "responses": with_errors(json_ok("The converted position and moves.", "Converted"), &BAD_INPUT)
            }},
            "/v1/board.svg": { "get": {
                "summary": "The position as an SVG picture: the board, the pieces (and Hive's pieces in hand), the last move highlighted, arrows for a line.",
                "description": "The SVG carries data for scripts: the root has `data-game`, `data-position` (the game's main position format) and `data-flipped`; each square `data-square` (Hive cells `data-hex=\"q,r\"`), each piece `data-piece` with its square (Hive: `data-hex`, `data-height`, `data-below`), each piece in hand `data-hand`, each arrow `class=\"arrow\"` with `data-move`, and the last move's squares `class=\"last-move\"`.",
                "operationId": "boardPicture",
                "parameters": [
                    { "name": "game", "in": "query", "required": true, "schema": { "type": "string", "enum": games } },
                    { "name": "position", "in": "query", "description": "In any position format of the game (default: the start position).", "schema": { "type": "string" } },
                    { "name": "format", "in": "query", "description": "The position's format; detected when absent.", "schema": { "type": "string" } },
                    { "name": "moves", "in": "query", "description": "Comma-separated moves played first; the last is highlighted.", "schema": { "type": "string" } },
                    { "name": "arrows", "in": "query", "description": "Comma-separated moves, a line played from the position reached, drawn as arrows.", "schema": { "type": "string" } },
                    { "name": "flip", "in": "query", "description": "Turn the board round.", "schema": { "type": "boolean", "default": false } },
                    { "name": "size", "in": "query", "description": "Width in pixels.", "schema": { "type": "integer", "minimum": 100, "maximum": 2000, "default": 480 } }
                ],
                "responses": with_errors(json!({ "200": { "description": "The picture.", "content": { "image/svg+xml": {} } } }),
                    &[("422", "A parameter is invalid: unknown game, unreadable position or move (the token is named), size out of range.")])
            }},
            "/v1/stream": { "get": {
                "summary": "WebSocket: streamed analysis.",
                "description": "Upgrade to a WebSocket. Client messages: `{\"type\":\"analyse\",\"id\":\"…\", <the AnalysisRequest members>, \"infinite\": true?}` `{\"type\":\"stop\",\"id\":\"…\"}` and `{\"type\":\"subscribe\",\"id\":\"…\",\"job\":\"<annotation job id>\"}`. Server messages: `{\"type\":\"info\",\"id\",\"depth\",\"seldepth\",\"multipv\",\"score\",\"bound\"?,\"nodes\",\"nps\",\"time_ms\",\"pv\",\"currmove\"?,\"currmovenumber\"?,\"neval\",\"hashfull\"}` (at most one every 100 ms per analysis, plus every line of each completed depth), `{\"type\":\"bestmove\",\"id\", <the Analysis members>}` `{\"type\":\"progress\",\"id\",\"job\",\"status\",\"done\",\"total\",\"waiting\"?}` (an annotation job's progress, at each change until it is over; `waiting` as in the job's view) and `{\"type\":\"error\",\"id\"?, <the Problem members, its `type` as `problem`>, \"retry_after_s\"?}` (`retry_after_s` where HTTP would send `Retry-After`). Several analyses may run on one socket; closing it cancels them. Where clients are limited, every message but `stop` costs what a request does from the client's bucket (an `analyse` its search besides); a socket whose key is revoked gets an `error` and is closed with code 1008.",
                "operationId": "stream",
                "responses": { "101": { "description": "Switching to the WebSocket protocol." },
                    "426": { "description": "The request is not a WebSocket upgrade.", "content": problem_ref() } }
            }},
            "/v1/openapi.json": { "get": {
                "summary": "This document.", "operationId": "openapi",
                "responses": { "200": { "description": "The OpenAPI document.", "content": { "application/json": {} } } }
            }},
            "/healthz": { "get": {
                "summary": "Liveness.", "operationId": "health",
                "responses": { "200": { "description": "The process is serving.", "content": { "text/plain": {} } } }
            }},
            "/readyz": { "get": {
                "summary": "Readiness: the store answers.", "operationId": "ready",
                "responses": { "200": { "description": "Ready.", "content": { "text/plain": {} } },
                    "503": { "description": "Not ready.", "content": problem_ref() } }
            }},
            "/metrics": { "get": {
                "summary": "Prometheus metrics (text exposition format).", "operationId": "metrics",
                "responses": { "200": { "description": "The metrics.", "content": { "text/plain": {} } } }
            }}
        },
        "components": { "schemas": {
            "Score": {
                "description": "Centi-units (`cp`) or plies to the end of the game (`mate`, negative when losing).",
                "oneOf": [
                    { "type": "object", "required": ["cp"], "properties": { "cp": { "type": "integer" } }, "additionalProperties": false },
                    { "type": "object", "required": ["mate"], "properties": { "mate": { "type": "integer" } }, "additionalProperties": false }
                ]
            },
            "Line": {
                "type": "object", "required": ["moves", "score", "depth"],
                "properties": {
                    "moves": { "type": "array", "items": { "type": "string" } },
                    "score": { "$ref": "#/components/schemas/Score" },
                    "depth": {
                        "type": "integer",
                        "description": "The depth this line was searched to: the answer's `depth`, or one more for the lines a search stopped inside an iteration had finished there, which come first; lines of one depth come best first."
                    }
                }
            },
            "Outcome": {
                "type": "object", "required": ["winner", "reason"],
                "properties": { "winner": { "type": ["string", "null"] }, "reason": { "type": "string" } }
            },
            "AnalysisRequest": {
                "type": "object", "required": ["game"], "additionalProperties": false,
                "properties": {
                    "game": { "type": "string", "enum": games },
                    "position": { "type": "string", "description": "Default: the start position." },
                    "format": { "type": "string", "description": "The position's format (see /v1/games); detected when absent." },
                    "moves": { "type": "array", "items": { "type": "string" }, "description": "Moves played from the position first." },
                    "depth": { "type": "integer", "minimum": 1 },
                    "movetime_ms": { "type": "integer", "minimum": 1 },
                    "nodes": { "type": "integer", "minimum": 1 },
                    "multipv": { "type": "integer", "minimum": 1, "default": 1 },
                    "cache": { "type": "string", "enum": ["use", "refresh", "only"], "default": "use" },
                    "move_format": { "type": "string", "description": "Notation of the moves in the answer." },
                    "white_pov": { "type": "boolean", "default": false },
                    "engine": { "type": "string", "description": "The engine to analyse with (see /v1/engines): `kibitz` or a configured engine; default, the game's default engine." }
                }
            },
            "Analysis": {
                "type": "object",
                "required": ["game", "position", "side_to_move", "bestmove", "lines", "depth", "seldepth", "nodes", "nps", "time_ms", "cached", "engine"],
                "properties": {
                    "game": { "type": "string" },
                    "position": { "type": "string", "description": "Normalised, in the game's main format, after the moves." },
                    "side_to_move": { "type": "string" },
                    "bestmove": { "type": ["string", "null"] },
                    "lines": { "type": "array", "items": { "$ref": "#/components/schemas/Line" } },
                    "depth": { "type": "integer" },
                    "seldepth": { "type": "integer" },
                    "nodes": { "type": "integer" },
                    "nps": { "type": "integer" },
                    "time_ms": { "type": "integer" },
                    "cached": { "type": "boolean" },
                    "engine": { "type": "string", "description": "The engine that answered: kibitz's name and version, or a configured engine's name with its own name and version in parentheses." },
                    "white_pov": { "type": "boolean" },
                    "clamped": { "type": "array", "items": { "$ref": "#/components/schemas/Clamped" }, "description": "Limits lowered to the server's maxima." },
                    "outcome": { "$ref": "#/components/schemas/Outcome" },
                    "stopped": { "type": "boolean", "description": "The request timeout stopped the search before its limit (on the WebSocket, the client's rate limit stopped an infinite analysis: see `retry_after_s`): the answer is its deepest completed iteration (see `depth`). Absent when false." },
                    "retry_after_s": { "type": "integer", "minimum": 0, "description": "WebSocket only: an infinite analysis pays for 4 s of search at its start and again every 4 s it runs; when the client's bucket could not pay, the analysis was stopped, and this is the seconds until it could. Absent otherwise." }
                }
            },
            "Clamped": {
                "type": "object", "required": ["field", "requested", "used"],
                "description": "A limit of the request lowered to the server's maximum.",
                "properties": {
                    "field": { "type": "string", "description": "The request member (`depth`, `movetime_ms`, `nodes`, `multipv`)." },
                    "requested": { "type": "integer" },
                    "used": { "type": "integer" }
                }
            },
            "MovesRequest": {
                "type": "object", "required": ["game"], "additionalProperties": false,
                "properties": {
                    "game": { "type": "string", "enum": games },
                    "position": { "type": "string" },
                    "format": { "type": "string" },
                    "moves": { "type": "array", "items": { "type": "string" } },
                    "move_format": { "type": "string" },
                    "positions": { "type": "boolean", "default": false, "description": "Also give the position after each move." }
                }
            },
            "Moves": {
                "type": "object", "required": ["game", "position", "side_to_move", "moves"],
                "properties": {
                    "game": { "type": "string" },
                    "position": { "type": "string" },
                    "side_to_move": { "type": "string" },
                    "moves": { "type": "array", "items": { "type": "object", "required": ["move"],
                        "properties": { "move": { "type": "string" }, "position": { "type": "string" } } } },
                    "outcome": { "$ref": "#/components/schemas/Outcome" }
                }
            },
            "ConvertRequest": {
                "type": "object", "required": ["game"], "additionalProperties": false,
                "properties": {
                    "game": { "type": "string", "enum": games },
                    "position": { "type": "string" },
                    "format": { "type": "string", "description": "The format the position is in; detected when absent." },
                    "to": { "type": "string", "description": "The position format to write." },
                    "moves": { "type": "array", "items": { "type": "string" } },
                    "move_format": { "type": "string", "description": "The move notation to write." }
                }
            },
            "Converted": {
                "type": "object", "required": ["game", "position", "format", "moves", "move_format"],
                "properties": {
                    "game": { "type": "string" },
                    "position": { "type": "string" },
                    "format": { "type": "string" },
                    "moves": { "type": "array", "items": { "type": "string" } },
                    "move_format": { "type": "string" }
                }
            },
            "Games": {
                "type": "object", "required": ["engine", "games", "limits"],
                "properties": {
                    "engine": { "type": "string" },
                    "games": { "type": "array", "items": { "type": "object",
                        "required": ["name", "position_formats", "move_formats", "start_position", "sides", "default_depth"],
                        "properties": {
                            "name": { "type": "string" },
                            "position_formats": { "type": "array", "items": { "type": "string" } },
                            "move_formats": { "type": "array", "items": { "type": "string" } },
                            "start_position": { "type": "string" },
                            "sides": { "type": "array", "items": { "type": "string" } },
                            "default_depth": { "type": "integer" },
                            "record_formats": { "type": "array", "items": { "type": "string" }, "description": "Game record formats `POST /v1/annotations` reads." },
                            "export_format": { "type": ["string", "null"], "description": "The annotated format annotations export to (else text and JSON)." }
                        } } },
                    "limits": { "type": "object", "properties": {
                        "max_depth": { "type": "integer" }, "max_movetime_ms": { "type": "integer" },
                        "max_nodes": { "type": "integer" }, "max_multipv": { "type": "integer" },
                        "max_moves": { "type": "integer" },
                        "max_body_bytes": { "type": "integer", "description": "Largest request body, annotation submissions aside." },
                        "max_annotation_bytes": { "type": "integer", "description": "Largest body of `POST /v1/annotations`." },
                        "max_annotation_positions": { "type": "integer", "description": "Most positions one annotation submission may hold (`POST /v1/records` reads no more in one body); reading stops at the first game past it." },
                        "max_record_games": { "type": "integer", "description": "Most games, readable or not, one body of `POST /v1/annotations` or `POST /v1/records` may hold; reading stops at the first game past it." },
                        "request_timeout_s": { "type": "number", "description": "Longest an HTTP request may take; a search still running then answers with what it has (`stopped`)." } } }
                }
            },
            "Problem": {
                "type": "object", "required": ["type", "title", "status", "detail"],
                "description": "RFC 9457 problem details.",
                "properties": {
                    "type": { "type": "string" },
                    "title": { "type": "string" },
                    "status": { "type": "integer" },
                    "detail": { "type": "string" },
                    "field": { "type": "string", "description": "The request member at fault." },
                    "token": { "type": "string", "description": "The offending text." },
                    "engine": { "type": "string", "description": "The external engine that failed or is busy." },
                    "request_id": { "type": "string", "description": "The request's id (also in the `x-request-id` header and the server's log lines)." }
                }
            }
        }}
    });
    for (section, extra) in [
        ("/paths", annotation_paths()),
        ("/components/schemas", annotation_schemas(&games)),
        ("/components/schemas", engine_schemas()),
        ("/paths", record_paths()),
        ("/components/schemas", record_schemas(&games)),
    ] {
        if let (Some(Value::Object(into)), Value::Object(extra)) = (doc.pointer_mut(section), extra) {
            into.extend(extra);
        }
    }
    // An optional member given as null is taken as absent (the handlers read them as `Option`s).
    for (schema, members) in [
        (
            "AnalysisRequest",
            &["position", "format", "depth", "movetime_ms", "nodes", "multipv", "move_format", "engine"][..],
        ),
        ("MovesRequest", &["position", "format", "move_format"][..]),
        ("ConvertRequest", &["position", "format", "to", "move_format"][..]),
        ("RecordsRequest", &["format"][..]),
        (
            "AnnotationRequest",
            &["text", "games", "format", "depth", "movetime_ms", "nodes", "threshold", "priority", "engine"][..],
        ),
    ] {
        for member in members {
            if let Some(Value::Object(property)) =
                doc.pointer_mut(&format!("/components/schemas/{schema}/properties/{member}"))
            {
                nullable(property);
            }
        }
    }
    add_access(&mut doc);
    doc
}

/// Keys and limits: the bearer scheme (optional or required by the server's `--auth`), and on every API
/// operation the 401 of a missing or bad key and the 429 of a spent bucket or quota, with their headers.
fn add_access(doc: &mut Value) {
    let header = |description: &str| json!({ "description": description, "schema": { "type": "integer" } });
    let limited = json!({
        "description": "The client's token bucket (or its key's daily annotation quota) is spent: retry after `Retry-After` seconds.",
        "headers": {
            "Retry-After": header("Seconds to wait."),
            "RateLimit-Limit": header("The bucket's size (or the daily quota)."),
            "RateLimit-Remaining": header("Units left."),
            "RateLimit-Reset": header("Seconds until the bucket is full (or the quota renews).")
        },
        "content": problem_ref()
    });
    let unauthorized = json!({
        "description": "No API key where the server requires one (or, listing annotation jobs, no key at all), or an unknown or revoked key.",
        "headers": { "WWW-Authenticate": { "description": "`Bearer`.", "schema": { "type": "string" } } },
        "content": problem_ref()
    });
    if let Some(Value::Object(components)) = doc.pointer_mut("/components") {
        components.insert(
            "securitySchemes".into(),
            json!({
                "bearer": { "type": "http", "scheme": "bearer", "description": "An API key from `kibitz keys create`. Needed when the server runs with `--auth required`; with `--auth optional` a key gives its own limits instead of the address's." },
                "queryKey": { "type": "apiKey", "in": "query", "name": "key", "description": "The API key as a query parameter: only on `/v1/stream` (browsers cannot set headers on a WebSocket)." }
            }),
        );
    }
    if let Value::Object(root) = &mut *doc {
        root.insert("security".into(), json!([{ "bearer": [] }, {}]));
    }
    // What any request may be answered before it reaches its route, or once it has taken too long.
    let too_long_uri = json!({ "description": "The request's URI is too long.", "content": problem_ref() });
    let too_many_headers = json!({
        "description": "The request's header fields are too many or too large.", "content": problem_ref()
    });
    let timed_out = json!({
        "description": "The request took longer than the server's request timeout (`--request-timeout-s`), or its body came too slowly.",
        "content": problem_ref()
    });
    let Some(Value::Object(paths)) = doc.pointer_mut("/paths") else { return };
    for (path, item) in paths.iter_mut() {
        let Value::Object(operations) = item else { continue };
        let open = !path.starts_with("/v1/") || path == "/v1/openapi.json";
        for operation in operations.values_mut() {
            let Value::Object(operation) = operation else { continue };
            if let Some(Value::Object(responses)) = operation.get_mut("responses") {
                responses.insert("414".into(), too_long_uri.clone());
                responses.insert("431".into(), too_many_headers.clone());
                let timed = (path.starts_with("/v1/") && path != "/v1/stream")
                    || ["/healthz", "/readyz", "/metrics"].contains(&path.as_str());
                if timed {
                    responses.insert("408".into(), timed_out.clone());
                }
            }
            if open {
                operation.insert("security".into(), json!([]));
                continue;
            }
            if path == "/v1/stream" {
                operation.insert("security".into(), json!([{ "bearer": [] }, { "queryKey": [] }, {}]));
            }
            if let Some(Value::Object(responses)) = operation.get_mut("responses") {
                responses.insert("401".into(), unauthorized.clone());
                responses.insert("429".into(), limited.clone());
            }
        }
    }
}

/// Let a property's schema take null as well.
fn nullable(property: &mut serde_json::Map<String, Value>) {
    if let Some(Value::String(t)) = property.get("type").cloned() {
        property.insert("type".into(), json!([t, "null"]));
    }
    if let Some(Value::Array(values)) = property.get_mut("enum") {
        values.push(Value::Null);
    }
}

/// The document as committed in `api/openapi.json`: pretty-printed, with a final newline.
pub fn document_text() -> String {
    let mut text = serde_json::to_string_pretty(&document()).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn committed_document_is_current() {
        let committed = include_str!("../../api/openapi.json");
        assert!(
            committed == super::document_text(),
            "api/openapi.json is stale: run `cargo run -- openapi > api/openapi.json`"
        );
    }
}
