//! The HTTP API of a real `kibitz serve` process: analysis in every format of every game, the cache, MultiPV,
//! legal moves, conversion, every class of error, shared searches, health, metrics and the OpenAPI document.
//! Every answer of a documented path is checked against `api/openapi.json` by the client (see `common`).

mod common;

use std::sync::{Arc, Barrier};

use common::{Server, Ws, document, games, negate, score_value};
use serde_json::{Value, json};

/// Percent-encode a query parameter value.
fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().expect("array").iter().map(|s| s.as_str().expect("string").to_string()).collect()
}

/// The legal moves of a position after `moves`, written in `move_format`, and the normalised position.
fn legal_moves(
    server: &Server,
    game: &str,
    position: &str,
    moves: &[String],
    move_format: &str,
) -> (Vec<String>, String) {
    let r = server.post_ok(
        "/v1/moves",
        &json!({ "game": game, "position": position, "moves": moves, "move_format": move_format }),
    );
    let list = r["moves"].as_array().expect("moves").iter().map(|m| m["move"].as_str().expect("move").to_string());
    (list.collect(), r["position"].as_str().expect("position").to_string())
}

/// Every line of an analysis is playable from its position, and the best move is the first move of line one.
fn assert_lines_legal(server: &Server, game: &str, analysis: &Value) {
    let position = analysis["position"].as_str().expect("position");
    let lines = analysis["lines"].as_array().expect("lines");
    assert!(!lines.is_empty(), "no lines: {analysis}");
    assert_eq!(analysis["bestmove"], lines[0]["moves"][0], "{analysis}");
    for line in lines {
        let moves = strings(&line["moves"]);
        assert!(!moves.is_empty(), "empty line: {analysis}");
        let r = server.post("/v1/moves", &json!({ "game": game, "position": position, "moves": moves }));
        assert_eq!(r.status, 200, "line {moves:?} is not playable from {position}: {}", r.text());
    }
}

#[test]
fn every_game_is_analysed_in_each_of_its_formats() {
    let server = Server::start(&[]);
    for (info, fixture) in games(&server) {
        let game = fixture.game;
        let position_formats = strings(&info["position_formats"]);
        let move_formats = strings(&info["move_formats"]);
        for format in &position_formats {
            assert!(
                fixture.positions.iter().any(|(f, _, _)| f == format),
                "no {game} fixture in the position format `{format}`"
            );
        }
        for (format, position, moves) in fixture.positions {
            let moves: Vec<String> = moves.iter().map(|m| m.to_string()).collect();
            // What the position is once the moves are played, as the server normalises it.
            let (_, expected) = legal_moves(&server, game, position, &moves, &move_formats[0]);
            let mut first: Option<Value> = None;
            for move_format in &move_formats {
                let request = json!({ "game": game, "position": position, "format": format, "moves": moves,
                    "depth": fixture.quick_depth, "move_format": move_format });
                let a = server.post_ok("/v1/analysis", &request);
                assert_eq!(a["game"], json!(game));
                assert_eq!(a["position"], json!(expected), "the moves are applied before analysing");
                assert!(a["depth"].as_u64().expect("depth") >= u64::from(fixture.quick_depth), "{a}");
                // The first request searches; the others are the same question, answered from the cache
                // and written in their own notation.
                assert_eq!(a["cached"], json!(first.is_some()), "{a}");
                let (legal, _) = legal_moves(&server, game, &expected, &[], move_format);
                let best = a["bestmove"].as_str().expect("bestmove");
                assert!(legal.iter().any(|m| m == best), "{best} is not a legal {move_format} move: {legal:?}");
                for line in a["lines"].as_array().expect("lines") {
                    let first_move = line["moves"][0].as_str().expect("move");
                    assert!(legal.iter().any(|m| m == first_move), "{first_move} is not written in {move_format}");
                }
                assert_lines_legal(&server, game, &a);
                if let Some(first) = &first {
                    let scores = |v: &Value| -> Vec<Value> {
                        v["lines"].as_array().expect("lines").iter().map(|x| x["score"].clone()).collect()
                    };
                    assert_eq!(scores(first), scores(&a));
                }
                first.get_or_insert(a);
            }
            // White's point of view: the same scores when White is to move, negated otherwise.
            let first = first.expect("analysed");
            let pov = server.post_ok(
                "/v1/analysis",
                &json!({ "game": game, "position": position, "format": format, "moves": moves,
                    "depth": fixture.quick_depth, "white_pov": true }),
            );
            assert_eq!(pov["white_pov"], json!(true));
            assert_eq!(pov["cached"], json!(true));
            let white_to_move = pov["side_to_move"] == json!(fixture.white);
            for (plain, seen) in
                first["lines"].as_array().expect("lines").iter().zip(pov["lines"].as_array().expect("lines"))
            {
                let expected = if white_to_move { plain["score"].clone() } else { negate(&plain["score"]) };
                assert_eq!(seen["score"], expected, "white_pov of {first} is {pov}");
            }
        }
    }
}

#[test]
fn white_pov_flips_scores_only_when_the_other_side_moves() {
    let server = Server::start(&[]);
    for (info, fixture) in games(&server) {
        let game = fixture.game;
        let start = info["start_position"].as_str().expect("start");
        let (legal, _) = legal_moves(&server, game, start, &[], info["move_formats"][0].as_str().expect("format"));
        // The start position and the one after a move: one of them has White to move, the other not.
        let mut sides = Vec::new();
        for moves in [vec![], vec![legal[0].clone()]] {
            let request = json!({ "game": game, "moves": moves, "depth": fixture.quick_depth });
            let plain = server.post_ok("/v1/analysis", &request);
            let mut pov_request = request.clone();
            pov_request["white_pov"] = json!(true);
            let pov = server.post_ok("/v1/analysis", &pov_request);
            let white = plain["side_to_move"] == json!(fixture.white);
            sides.push(white);
            let score = &plain["lines"][0]["score"];
            assert_eq!(pov["lines"][0]["score"], if white { score.clone() } else { negate(score) });
        }
        assert_ne!(sides[0], sides[1], "one move changes the side to move");
    }
}

#[test]
fn a_second_request_is_answered_from_the_cache() {
    let server = Server::start(&[]);
    for (_, fixture) in games(&server) {
        let request = json!({ "game": fixture.game, "depth": fixture.quick_depth + 2 });
        let hits = server.metric("kibitz_cache_hits_total");
        let first = server.post_ok("/v1/analysis", &request);
        assert_eq!(first["cached"], json!(false));
        let second = server.post_ok("/v1/analysis", &request);
        assert_eq!(second["cached"], json!(true));
        for member in ["bestmove", "lines", "depth", "nodes", "position"] {
            assert_eq!(first[member], second[member], "{member}");
        }
        // A shallower question is answered by the deeper result; a deeper one searches again.
        let shallower = server.post_ok("/v1/analysis", &json!({ "game": fixture.game, "depth": fixture.quick_depth }));
        assert_eq!(shallower["cached"], json!(true));
        assert_eq!(shallower["depth"], first["depth"]);
        let deeper = server.post_ok("/v1/analysis", &json!({ "game": fixture.game, "depth": fixture.quick_depth + 3 }));
        assert_eq!(deeper["cached"], json!(false));
        // `cache: refresh` searches even though the cache could answer.
        let refreshed = server.post_ok(
            "/v1/analysis",
            &json!({ "game": fixture.game, "depth": fixture.quick_depth, "cache": "refresh" }),
        );
        assert_eq!(refreshed["cached"], json!(false));
        assert!(server.metric("kibitz_cache_hits_total") >= hits + 2.0);
    }
}

#[test]
fn the_same_board_nearer_a_draw_is_another_cache_entry() {
    let server = Server::start(&[]);
    // A rook up, one ply from the 50-move rule: every move draws (none mates, none resets the count).
    let late = "7k/8/8/8/8/8/8/R6K w - - 99 150";
    let drawn = server.post_ok("/v1/analysis", &json!({ "game": "chess", "position": late, "depth": 6 }));
    assert_eq!(drawn["lines"][0]["score"], json!({ "cp": 0 }), "{drawn}");
    // The same board with a fresh count is won: not answered with the draw.
    let fresh = "7k/8/8/8/8/8/8/R6K w - - 0 1";
    let won = server.post_ok("/v1/analysis", &json!({ "game": "chess", "position": fresh, "depth": 6 }));
    assert_eq!(won["cached"], json!(false), "{won}");
    assert!(score_value(&won["lines"][0]["score"]) > 300, "{won}");
    // Each is its own entry: asked again, each comes from the cache with its own score.
    let again = server.post_ok("/v1/analysis", &json!({ "game": "chess", "position": late, "depth": 6 }));
    assert_eq!((again["cached"].clone(), again["lines"][0]["score"].clone()), (json!(true), json!({ "cp": 0 })));
    // The knights out and back: the start position seen once before changes no line, so it is the same entry.
    let start = server.post_ok("/v1/analysis", &json!({ "game": "chess", "depth": 4 }));
    assert_eq!(start["cached"], json!(false));
    let moves = ["g1f3", "g8f6", "f3g1", "f6g8"];
    let back = server.post_ok("/v1/analysis", &json!({ "game": "chess", "moves": moves, "depth": 4 }));
    assert_eq!(back["cached"], json!(true), "{back}");
    // 1. Nf3 with the start position twice behind it (a return would be the third) is not 1. Nf3 played once.
    let once = server.post_ok("/v1/analysis", &json!({ "game": "chess", "moves": ["g1f3"], "depth": 4 }));
    assert_eq!(once["cached"], json!(false));
    let moves = ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3"];
    let again = server.post_ok("/v1/analysis", &json!({ "game": "chess", "moves": moves, "depth": 4 }));
    let board = |v: &Value| v["position"].as_str().expect("position").split(' ').take(4).collect::<Vec<_>>().join(" ");
    assert_eq!(board(&again), board(&once));
    assert_eq!(again["cached"], json!(false), "{again}");
    server.stop();
}

#[test]
fn multipv_gives_distinct_ordered_lines_and_clamps_above_the_maximum() {
    // The largest quick depth of the fixtures is 6: a deeper request is clamped to it, and the clamped
    // search (10 lines) stays small on a loaded machine.
    let server = Server::start(&["--max-depth", "6"]);
    for (info, fixture) in games(&server) {
        let game = fixture.game;
        let start = info["start_position"].as_str().expect("start");
        let (legal, _) = legal_moves(&server, game, start, &[], info["move_formats"][0].as_str().expect("format"));
        for (asked, expected) in [(1, 1), (3, 3.min(legal.len())), (10, 10.min(legal.len()))] {
            let a = server
                .post_ok("/v1/analysis", &json!({ "game": game, "depth": fixture.quick_depth, "multipv": asked }));
            let lines = a["lines"].as_array().expect("lines");
            assert_eq!(lines.len(), expected, "multipv {asked}: {a}");
            let firsts: std::collections::HashSet<&str> =
                lines.iter().map(|l| l["moves"][0].as_str().expect("move")).collect();
            assert_eq!(firsts.len(), lines.len(), "first moves repeat: {a}");
            let scores: Vec<i64> = lines.iter().map(|l| score_value(&l["score"])).collect();
            assert!(scores.windows(2).all(|w| w[0] >= w[1]), "scores out of order: {scores:?}");
            assert!(a.get("clamped").is_none(), "{a}");
            assert_lines_legal(&server, game, &a);
        }
        let a = server.post_ok("/v1/analysis", &json!({ "game": game, "depth": fixture.quick_depth, "multipv": 11 }));
        assert_eq!(a["clamped"], json!([{ "field": "multipv", "requested": 11, "used": 10 }]));
        assert_eq!(a["lines"].as_array().expect("lines").len(), 10.min(legal.len()));
        let a = server.post_ok("/v1/analysis", &json!({ "game": game, "depth": 7, "multipv": 50 }));
        assert_eq!(
            a["clamped"],
            json!([{ "field": "depth", "requested": 7, "used": 6 }, { "field": "multipv", "requested": 50, "used": 10 }])
        );
        assert!(a["depth"].as_u64().expect("depth") <= 6, "{a}");
        // A depth past 32 bits is clamped like any other, not refused for its size.
        let a = server.post_ok("/v1/analysis", &json!({ "game": game, "depth": 5_000_000_000u64 }));
        assert_eq!(a["clamped"], json!([{ "field": "depth", "requested": 5_000_000_000u64, "used": 6 }]));
    }
}

#[test]
fn get_analysis_answers_from_the_cache_or_404() {
    let server = Server::start(&[]);
    for (_, fixture) in games(&server) {
        let game = fixture.game;
        let (_, position, moves) = fixture.positions[0];
        let query =
            format!("/v1/analysis?game={game}&position={}&moves={}", encode(position), encode(&moves[..2].join(",")));
        let p = server.get(&query).problem(404);
        assert_eq!(p["type"], json!("/problems/not-found"));
        let posted = server.post_ok(
            "/v1/analysis",
            &json!({ "game": game, "position": position, "moves": &moves[..2], "depth": fixture.quick_depth }),
        );
        let r = server.get(&query);
        assert_eq!(r.status, 200, "{}", r.text());
        let got = r.json();
        assert_eq!(got["cached"], json!(true));
        for member in ["position", "bestmove", "lines", "depth"] {
            assert_eq!(got[member], posted[member], "{member}");
        }
        // The same position reached by its normalised text, with White's point of view.
        let normalised = posted["position"].as_str().expect("position");
        let r = server.get(&format!("/v1/analysis?game={game}&position={}&white_pov=true", encode(normalised)));
        assert_eq!(r.status, 200, "{}", r.text());
        // Another line count is another question: not cached.
        server.get(&format!("{query}&multipv=2")).problem(404);
        // Bad parameters are 422, not 404.
        server.get(&format!("/v1/analysis?game={game}&bogus=1")).problem(422);
        server.get(&format!("/v1/analysis?game={game}&multipv=x")).problem(422);
        let twice = format!("{},{}", moves[0], moves[0]);
        let p = server
            .get(&format!("/v1/analysis?game={game}&position={}&moves={}", encode(position), encode(&twice)))
            .problem(422);
        assert_eq!((p["field"].clone(), p["token"].clone()), (json!("moves[1]"), json!(moves[0])));
        // The index named is the one of the client's text: an empty entry is refused as itself, not skipped
        // (which would name the entry after it by the wrong number); one comma at the end is harmless.
        let gap = format!("{},,{}", moves[0], moves[0]);
        let p = server
            .get(&format!("/v1/analysis?game={game}&position={}&moves={}", encode(position), encode(&gap)))
            .problem(422);
        assert_eq!(p["field"], json!("moves[1]"), "{p}");
        let trailing = format!("{},{},", moves[0], moves[1]);
        let r =
            server.get(&format!("/v1/analysis?game={game}&position={}&moves={}", encode(position), encode(&trailing)));
        assert_eq!(r.status, 200, "{}", r.text());
    }
}

#[test]
fn legal_moves_with_positions_and_the_outcome_of_a_finished_game() {
    let server = Server::start(&[]);
    for (info, fixture) in games(&server) {
        let game = fixture.game;
        for (format, position, _) in fixture.positions {
            let r = server.post_ok(
                "/v1/moves",
                &json!({ "game": game, "position": position, "format": format, "positions": true }),
            );
            let list = r["moves"].as_array().expect("moves");
            assert!(!list.is_empty());
            assert!(r.get("outcome").is_none(), "{r}");
            for entry in list {
                let m = entry["move"].as_str().expect("move");
                let after = server.post_ok("/v1/moves", &json!({ "game": game, "position": position, "moves": [m] }));
                assert_eq!(entry["position"], after["position"], "the position after {m}");
            }
            // Without `positions`, none are given.
            let r = server.post_ok("/v1/moves", &json!({ "game": game, "position": position }));
            assert!(r["moves"].as_array().expect("moves").iter().all(|m| m.get("position").is_none()));
        }
        for &(position, count) in fixture.move_counts {
            let r = server.post_ok("/v1/moves", &json!({ "game": game, "position": position }));
            assert_eq!(r["moves"].as_array().expect("moves").len(), count, "{position}: {r}");
        }
        // The side to move has nothing left: no moves, and the game is won by the other side.
        let sides = strings(&info["sides"]);
        let r = server.post_ok("/v1/moves", &json!({ "game": game, "position": fixture.finished }));
        assert_eq!(r["moves"], json!([]));
        let loser = r["side_to_move"].as_str().expect("side");
        let winner = sides.iter().find(|s| *s != loser).expect("two sides");
        assert_eq!(r["outcome"]["winner"], json!(winner), "{r}");
        assert!(r["outcome"]["reason"].as_str().is_some_and(|s| !s.is_empty()));
        // Analysing it answers the outcome at once, without a search.
        let a = server.post_ok("/v1/analysis", &json!({ "game": game, "position": fixture.finished, "depth": 5 }));
        assert_eq!(a["bestmove"], Value::Null);
        assert_eq!(a["lines"], json!([]));
        assert_eq!(a["outcome"], r["outcome"]);
    }
}

#[test]
fn convert_translates_positions_and_moves_between_formats() {
    let server = Server::start(&[]);
    for (info, fixture) in games(&server) {
        let game = fixture.game;
        let move_formats = strings(&info["move_formats"]);
        for (format, position, moves) in fixture.positions {
            for to in strings(&info["position_formats"]) {
                for move_format in &move_formats {
                    let c = server.post_ok(
                        "/v1/convert",
                        &json!({ "game": game, "position": position, "format": format, "to": to,
                            "moves": moves, "move_format": move_format }),
                    );
                    assert_eq!(c["format"], json!(to));
                    assert_eq!(c["move_format"], json!(move_format));
                    let converted = strings(&c["moves"]);
                    assert_eq!(converted.len(), moves.len());
                    // Each converted move is the legal move of that notation, and converting back is exact.
                    let (legal, _) = legal_moves(&server, game, position, &[], move_format);
                    assert!(legal.contains(&converted[0]), "{converted:?} vs {legal:?}");
                    let back = server.post_ok(
                        "/v1/convert",
                        &json!({ "game": game, "position": c["position"], "format": to, "to": to,
                            "moves": converted, "move_format": move_formats[0] }),
                    );
                    assert_eq!(back["position"], c["position"]);
                    // Back into the main format: the position the game normalises to.
                    let main = server.post_ok(
                        "/v1/convert",
                        &json!({ "game": game, "position": c["position"], "format": to, "moves": converted,
                            "move_format": move_formats[0] }),
                    );
                    let (_, original) = legal_moves(&server, game, position, &[], &move_formats[0]);
                    assert_eq!(main["position"], json!(original));
                    assert_eq!(strings(&main["moves"]), strings(&back["moves"]));
                }
            }
            // Without `to` and `move_format`: the main formats.
            let c = server.post_ok("/v1/convert", &json!({ "game": game, "position": position }));
            assert_eq!(c["format"], info["position_formats"][0]);
            assert_eq!(c["move_format"], info["move_formats"][0]);
        }
        let p = server.post("/v1/convert", &json!({ "game": game, "to": "no-such-format" })).problem(422);
        assert_eq!((p["field"].clone(), p["token"].clone()), (json!("to"), json!("no-such-format")));
        let p = server.post("/v1/convert", &json!({ "game": game, "move_format": "no-such-notation" })).problem(422);
        assert_eq!(p["field"], json!("move_format"));
    }
}

/// One request that must fail with `status`, naming `field` and `token` when given.
struct Bad {
    what: &'static str,
    method: &'static str,
    path: String,
    content_type: Option<&'static str>,
    body: Vec<u8>,
    status: u16,
    field: Option<String>,
    token: Option<String>,
}

fn bad(what: &'static str, path: &str, body: Value, status: u16, field: Option<&str>, token: Option<&str>) -> Bad {
    Bad {
        what,
        method: "POST",
        path: path.to_string(),
        content_type: Some("application/json"),
        body: body.to_string().into_bytes(),
        status,
        field: field.map(str::to_string),
        token: token.map(str::to_string),
    }
}

#[test]
fn every_error_is_a_problem_document_and_the_server_goes_on() {
    let server = Server::start(&["--max-body-bytes", "4096"]);
    let (info, fixture) = games(&server).remove(0);
    let game = fixture.game;
    let (_, position, moves) = fixture.positions[0];
    let (bad_position, bad_token) = fixture.bad_position;
    let mut cases = vec![
        Bad {
            what: "not JSON",
            content_type: Some("application/json"),
            body: b"{\"game\": nope".to_vec(),
            ..bad("", "/v1/analysis", json!({}), 400, None, None)
        },
        Bad {
            what: "wrong content type",
            content_type: Some("text/plain"),
            ..bad("", "/v1/analysis", json!({ "game": game }), 415, None, None)
        },
        Bad {
            what: "no content type",
            content_type: None,
            ..bad("", "/v1/moves", json!({ "game": game }), 415, None, None)
        },
        Bad {
            what: "body too large",
            body: json!({ "game": game, "position": "x".repeat(8000) }).to_string().into_bytes(),
            ..bad("", "/v1/analysis", json!({}), 413, None, None)
        },
        bad("unknown field", "/v1/analysis", json!({ "game": game, "colour": 1 }), 422, Some("colour"), None),
        bad("bad type", "/v1/analysis", json!({ "game": game, "depth": "deep" }), 422, Some("depth"), None),
        bad("bad nested type", "/v1/moves", json!({ "game": game, "moves": [1] }), 422, Some("moves[0]"), None),
        bad("missing game", "/v1/analysis", json!({ "depth": 3 }), 422, Some("game"), None),
        bad("unknown game", "/v1/analysis", json!({ "game": "tiddlywinks" }), 422, Some("game"), Some("tiddlywinks")),
        bad(
            "unknown position format",
            "/v1/analysis",
            json!({ "game": game, "format": "nope" }),
            422,
            Some("format"),
            Some("nope"),
        ),
        bad(
            "bad position",
            "/v1/analysis",
            json!({ "game": game, "position": bad_position }),
            422,
            Some("position"),
            Some(bad_token),
        ),
        bad(
            "bad position (moves)",
            "/v1/moves",
            json!({ "game": game, "position": bad_position }),
            422,
            Some("position"),
            Some(bad_token),
        ),
        bad(
            "bad position (convert)",
            "/v1/convert",
            json!({ "game": game, "position": bad_position }),
            422,
            Some("position"),
            Some(bad_token),
        ),
        bad(
            "illegal move",
            "/v1/analysis",
            json!({ "game": game, "position": position, "moves": [moves[0], moves[0]] }),
            422,
            Some("moves[1]"),
            Some(moves[0]),
        ),
        bad(
            "illegal move (moves)",
            "/v1/moves",
            json!({ "game": game, "position": position, "moves": [moves[0], moves[0]] }),
            422,
            Some("moves[1]"),
            Some(moves[0]),
        ),
        bad(
            "unreadable move",
            "/v1/convert",
            json!({ "game": game, "position": position, "moves": ["%%"] }),
            422,
            Some("moves[0]"),
            Some("%%"),
        ),
        bad(
            "conflicting limits",
            "/v1/analysis",
            json!({ "game": game, "depth": 3, "nodes": 1000 }),
            422,
            Some("depth"),
            None,
        ),
        bad(
            "conflicting limits",
            "/v1/analysis",
            json!({ "game": game, "movetime_ms": 30, "nodes": 1000 }),
            422,
            Some("movetime_ms"),
            None,
        ),
        bad("multipv 0", "/v1/analysis", json!({ "game": game, "multipv": 0 }), 422, Some("multipv"), None),
        bad("depth 0", "/v1/analysis", json!({ "game": game, "depth": 0 }), 422, Some("depth"), None),
        bad("movetime 0", "/v1/analysis", json!({ "game": game, "movetime_ms": 0 }), 422, Some("movetime_ms"), None),
        bad("negative depth", "/v1/analysis", json!({ "game": game, "depth": -1 }), 422, Some("depth"), None),
        bad("bad cache mode", "/v1/analysis", json!({ "game": game, "cache": "sometimes" }), 422, Some("cache"), None),
        bad("cache only, nothing cached", "/v1/analysis", json!({ "game": game, "cache": "only" }), 404, None, None),
        Bad { what: "unknown route", method: "GET", ..bad("", "/v2/analysis", json!({}), 404, None, None) },
        Bad { what: "stream without upgrade", method: "GET", ..bad("", "/v1/stream", json!({}), 426, None, None) },
        Bad {
            what: "bad query parameter type",
            method: "GET",
            ..bad("", &format!("/v1/analysis?game={game}&multipv=many"), json!({}), 422, Some("multipv"), None)
        },
        Bad {
            what: "unknown query parameter",
            method: "GET",
            ..bad("", &format!("/v1/analysis?game={game}&colour=1"), json!({}), 422, Some("colour"), None)
        },
        Bad {
            what: "missing query parameter",
            method: "GET",
            ..bad("", "/v1/analysis?multipv=1", json!({}), 422, Some("game"), None)
        },
        Bad { what: "unknown route (POST)", ..bad("", "/v1/analyse", json!({ "game": game }), 404, None, None) },
    ];
    if let Some(move_format) = info["move_formats"][0].as_str() {
        cases.push(bad(
            "unknown move format",
            "/v1/analysis",
            json!({ "game": game, "move_format": format!("{move_format}-ish") }),
            422,
            Some("move_format"),
            None,
        ));
    }
    for case in &cases {
        let what = if case.what.is_empty() { "?" } else { case.what };
        let r = server.request(case.method, &case.path, case.content_type, &case.body);
        assert_eq!(r.status, case.status, "{what}: {}", r.text());
        let p = r.problem(case.status);
        if let Some(field) = &case.field {
            assert_eq!(p["field"], json!(field), "{what}: {p}");
        }
        if let Some(token) = &case.token {
            assert_eq!(p["token"], json!(token), "{what}: {p}");
        }
        common::validate_named("Problem", &p);
        // The server keeps serving.
        assert_eq!(server.get("/healthz").status, 200, "after {what}");
    }
    let a = server.post_ok("/v1/analysis", &json!({ "game": game, "depth": fixture.quick_depth }));
    assert_eq!(a["cached"], json!(false));
    assert_eq!(server.get("/readyz").status, 200);
    let metrics = server.get("/metrics").text();
    assert!(metrics.contains("kibitz_http_requests_total{route=\"/v1/analysis\",status=\"422\"}"), "{metrics}");
}

#[test]
fn identical_concurrent_requests_share_one_search() {
    let server = Arc::new(Server::start(&[]));
    let (_, fixture) = games(&server).remove(0);
    let clients = 4;
    let mut shared = false;
    // Identical requests that overlap join one search; on a loaded machine they may not overlap, so a deeper
    // search is tried before giving up.
    for depth in [fixture.slow_depth - 6, fixture.slow_depth - 3, fixture.slow_depth] {
        let before = server.metric("kibitz_searches_shared_total");
        let started = server.metric("kibitz_searches_started_total");
        let barrier = Arc::new(Barrier::new(clients));
        let threads: Vec<_> = (0..clients)
            .map(|_| {
                let server = Arc::clone(&server);
                let barrier = Arc::clone(&barrier);
                let game = fixture.game;
                std::thread::spawn(move || {
                    barrier.wait();
                    server.post_ok("/v1/analysis", &json!({ "game": game, "depth": depth, "cache": "refresh" }))
                })
            })
            .collect();
        let answers: Vec<Value> = threads.into_iter().map(|t| t.join().expect("client")).collect();
        let joined = server.metric("kibitz_searches_shared_total") - before;
        let searches = server.metric("kibitz_searches_started_total") - started;
        assert_eq!(joined + searches, clients as f64, "every request either searched or joined a search");
        if joined > 0.0 {
            // Requests that shared a search got the same answer.
            let distinct: std::collections::HashSet<String> =
                answers.iter().map(|a| format!("{} {} {}", a["bestmove"], a["lines"], a["nodes"])).collect();
            assert!(distinct.len() as f64 <= searches, "{distinct:?}");
            shared = true;
            break;
        }
    }
    assert!(shared, "identical concurrent requests never shared a search");
}

#[test]
fn health_readiness_and_metrics() {
    let server = Server::start(&[]);
    let r = server.get("/healthz");
    assert_eq!((r.status, r.text().trim()), (200, "ok"));
    let r = server.get("/readyz");
    assert_eq!(r.status, 200);
    let (_, fixture) = games(&server).remove(0);
    server.post_ok("/v1/analysis", &json!({ "game": fixture.game, "depth": fixture.quick_depth }));
    server.post_ok("/v1/analysis", &json!({ "game": fixture.game, "depth": fixture.quick_depth }));
    let r = server.get("/metrics");
    assert!(r.content_type().starts_with("text/plain"), "{}", r.content_type());
    let text = r.text();
    for name in [
        "kibitz_http_requests_total",
        "kibitz_http_request_duration_seconds",
        "kibitz_pool_workers",
        "kibitz_pool_busy_workers",
        "kibitz_pool_queue_depth",
        "kibitz_pool_queue_capacity",
        "kibitz_searches_completed_total",
        "kibitz_nodes_searched_total",
        "kibitz_cache_hits_total",
        "kibitz_cache_misses_total",
        "kibitz_searches_started_total",
        "kibitz_searches_shared_total",
        "kibitz_store_hits_total",
        "kibitz_store_memory_hits_total",
        "kibitz_store_misses_total",
        "kibitz_store_writes_total",
        "kibitz_websocket_connections",
    ] {
        assert!(text.contains(&format!("# TYPE {name} ")), "no TYPE line for {name}");
        assert!(text.contains(&format!("# HELP {name} ")), "no HELP line for {name}");
    }
    // Every sample line is `name{labels} number`.
    for line in text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (name, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("bad line {line}"));
        assert!(name.starts_with("kibitz_"), "{line}");
        assert!(value.parse::<f64>().is_ok(), "{line}");
    }
    assert!(text.contains("kibitz_http_requests_total{route=\"/v1/analysis\",status=\"200\"} 2"), "{text}");
    assert!(text.contains("kibitz_http_request_duration_seconds_bucket{route=\"/v1/analysis\",le=\"+Inf\"} 2"));
    assert_eq!(common::metric_value(&text, "kibitz_pool_workers"), Some(2.0));
    assert_eq!(common::metric_value(&text, "kibitz_cache_hits_total"), Some(1.0));
    assert_eq!(common::metric_value(&text, "kibitz_cache_misses_total"), Some(1.0));
    assert_eq!(common::metric_value(&text, "kibitz_store_writes_total"), Some(1.0), "stored before answered");
    // The worker counts its nodes once the search has returned, which may be after the answer.
    server.wait_metric("kibitz_nodes_searched_total", |n| n > 0.0);
}

#[test]
fn the_served_document_is_the_committed_one_and_every_path_answers() {
    let server = Server::start(&[]);
    let r = server.get("/v1/openapi.json");
    assert_eq!(r.status, 200);
    let committed = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/api/openapi.json")).expect("file");
    assert_eq!(r.text(), committed);
    assert_eq!(&r.json(), document());

    let (_, fixture) = games(&server).remove(0);
    let game = fixture.game;
    server.post_ok("/v1/analysis", &json!({ "game": game, "depth": fixture.quick_depth }));
    // A job for the paths that name one.
    let pgn = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/records/chess_collection.pgn"))
        .expect("fixture");
    let r = server.post("/v1/annotations", &json!({ "game": "chess", "text": pgn, "depth": 1 }));
    assert_eq!(r.status, 202, "{}", r.text());
    let job = r.json()["id"].as_str().map(str::to_string);
    let paths = document()["paths"].as_object().expect("paths");
    assert!(paths.len() >= 9);
    for (template, operations) in paths {
        let path = match &job {
            Some(id) => template.replace("{id}", id),
            None => template.replace("{id}", "0123456789abcdef"),
        };
        for method in operations.as_object().expect("operations").keys().filter(|k| *k != "parameters") {
            let status = match (method.as_str(), path.as_str()) {
                ("get", "/v1/stream") => {
                    let mut ws = Ws::connect(server.addr); // asserts 101
                    ws.send(&json!({ "type": "stop", "id": "nothing" }));
                    assert_eq!(ws.recv()["type"], json!("error"));
                    101
                }
                ("get", "/v1/analysis") => server.get(&format!("{path}?game={game}")).status,
                ("get", _) => server.get(&path).status,
                ("post", _) => server.post(&path, &json!({ "game": game })).status,
                ("delete", _) => server.request("DELETE", &path, None, b"").status,
                (other, _) => panic!("untested method {other}"),
            };
            assert!(status != 404 && status < 500, "{method} {path} answered {status}");
        }
    }
}

#[test]
fn the_schema_check_rejects_what_does_not_fit() {
    let doc = document();
    let check = |name: &str, v: Value| {
        common::validate(doc, &json!({ "$ref": format!("#/components/schemas/{name}") }), &v, "$")
    };
    assert!(check("Score", json!({ "cp": 12 })).is_ok());
    assert!(check("Score", json!({ "mate": -3 })).is_ok());
    assert!(check("Score", json!({ "cp": 1, "mate": 2 })).is_err(), "oneOf with extra members");
    assert!(check("Score", json!({ "cp": 1.5 })).is_err(), "integer");
    assert!(check("Line", json!({ "moves": ["a"], "score": { "cp": 0 } })).is_err(), "required");
    assert!(check("Line", json!({ "moves": [1], "score": { "cp": 0 }, "depth": 1 })).is_err(), "items");
    assert!(check("Outcome", json!({ "winner": null, "reason": "draw" })).is_ok(), "type lists");
    assert!(check("AnalysisRequest", json!({ "game": "no-such-game" })).is_err(), "enum");
    assert!(check("AnalysisRequest", json!({ "game": "checkers", "depth": 0 })).is_err(), "minimum");
    assert!(check("AnalysisRequest", json!({ "game": "checkers", "colour": 1 })).is_err(), "additionalProperties");
    assert!(check("Problem", json!({ "type": "t", "title": "t", "status": "422", "detail": "d" })).is_err());
}

/// Found by an audit: a Hive GameString holds its moves, and 20,000 of them passed the limit on `moves` (2,000)
/// and were stored whole as a cache key. The position's moves count with the request's.
#[test]
fn a_position_holding_its_moves_counts_them_against_the_limit() {
    use kibitz::game::Game;
    use kibitz::games::hive::Hive;
    // A legal Base game of 2,001 moves: random moves that do not end it.
    let mut rng = kibitz::matchplay::Rng(7);
    let mut game = Hive::start();
    let mut moves = Vec::new();
    while game.plies() < 2001 {
        game.generate_moves(&mut moves);
        let mut made = false;
        for _ in 0..moves.len() {
            let m = moves[(rng.next_u64() % moves.len() as u64) as usize];
            game.make(m);
            if game.outcome().is_none() {
                made = true;
                break;
            }
            game.unmake();
        }
        assert!(made, "no move that goes on at ply {}", game.plies());
    }
    let long = game.format_position(None).expect("a GameString");
    game.unmake();
    let at_limit = game.format_position(None).expect("a GameString");
    let server = Server::start(&[]);
    for path in ["/v1/moves", "/v1/analysis", "/v1/convert"] {
        let p = server.post(path, &json!({ "game": "hive", "position": long })).problem(422);
        assert_eq!(p["field"], json!("position"), "{path}: {p}");
        assert!(p["detail"].as_str().is_some_and(|d| d.contains("2001")), "{path}: {p}");
    }
    let p = server.post("/v1/moves", &json!({ "game": "hive", "position": at_limit, "moves": ["pass"] })).problem(422);
    assert_eq!(p["field"], json!("moves"), "{p}");
    let ok = server.post_ok("/v1/moves", &json!({ "game": "hive", "position": at_limit }));
    assert!(ok["moves"].as_array().is_some_and(|m| !m.is_empty()), "{ok}");
    server.stop();
}
