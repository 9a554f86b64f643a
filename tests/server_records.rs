//! `POST /v1/records`: game records read into start positions and moves, for every game's record formats. Each
//! game returned is replayed through `/v1/moves`, so the moves are legal from the start and in a notation the
//! API reads; malformed games are reported, not returned.

mod common;

use std::path::Path;

use common::Server;
use serde_json::json;

/// (game, fixture file under tests/data/records, record format or null, games it holds, malformed games)
const FIXTURES: &[(&str, &str, Option<&str>, usize, usize)] = &[
    ("chess", "chess_collection.pgn", None, 4, 1),
    ("draughts", "draughts.pdn", Some("pdn"), 1, 0),
    ("draughts", "draughts_guide.txt", Some("guide"), 2, 0),
    ("checkers", "checkers.pdn", None, 1, 0),
    ("hive", "hive.txt", None, 2, 0),
    ("xiangqi", "xiangqi.pgn", Some("pgn"), 1, 0),
    ("xiangqi", "xiangqi_moves.txt", Some("moves"), 2, 0),
];

#[test]
fn records_are_read_into_positions_and_moves_the_api_replays() {
    let server = Server::start(&[]);
    for &(game, file, format, count, malformed) in FIXTURES {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/records").join(file);
        let text = std::fs::read_to_string(&path).expect("fixture");
        let mut body = json!({ "game": game, "text": text });
        if let Some(format) = format {
            body["format"] = json!(format);
        }
        let answer = server.post_ok("/v1/records", &body);
        assert_eq!(answer["game"], json!(game));
        let games = answer["games"].as_array().expect("games");
        let errors = answer["errors"].as_array().expect("errors");
        assert_eq!(games.len() + errors.len(), count, "{file}: {answer}");
        assert_eq!(errors.len(), malformed, "{file}: {answer}");
        for e in errors {
            assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{file}: {e}");
        }
        for g in games {
            let moves = g["moves"].as_array().expect("moves");
            assert!(!moves.is_empty(), "{file}: a game without moves: {g}");
            // The moves replay from the start position, one by one.
            let replay = server.post_ok("/v1/moves", &json!({ "game": game, "position": g["start"], "moves": moves }));
            assert_eq!(replay["game"], json!(game));
            // The start is in the main format: the API gives it back unchanged.
            let start = server.post_ok("/v1/moves", &json!({ "game": game, "position": g["start"] }));
            assert_eq!(start["position"], g["start"], "{file}");
        }
        // Games are numbered in the text's order.
        let mut indices: Vec<u64> = games.iter().chain(errors).map(|g| g["index"].as_u64().expect("index")).collect();
        indices.sort_unstable();
        assert_eq!(indices, (0..count as u64).collect::<Vec<_>>(), "{file}");
    }
    server.stop();
}

#[test]
fn a_bad_request_for_records_names_its_member() {
    let server = Server::start(&[]);
    let pgn = "1. e4 e5 *";
    for (body, field) in [
        (json!({ "game": "chess" }), "text"),
        (json!({ "game": "chess", "text": pgn, "format": "pdn" }), "format"),
        (json!({ "game": "shogi", "text": pgn }), "game"),
        (json!({ "game": "chess", "text": pgn, "moves": [] }), "moves"),
    ] {
        let p = server.post("/v1/records", &body).problem(422);
        assert_eq!(p["field"], json!(field), "{body}: {p}");
    }
    // A collection with a bad game: the others are returned, the bad one reported with its token.
    let two = "[Event \"a\"]\n\n1. e4 e5 *\n\n[Event \"b\"]\n\n1. e4 Zz9 *\n";
    let answer = server.post_ok("/v1/records", &json!({ "game": "chess", "text": two }));
    assert_eq!(answer["games"].as_array().map(Vec::len), Some(1), "{answer}");
    assert_eq!(answer["games"][0]["moves"], json!(["e2e4", "e7e5"]), "{answer}");
    assert_eq!(answer["errors"][0]["index"], json!(1), "{answer}");
    assert_eq!(answer["errors"][0]["token"], json!("Zz9"), "{answer}");
    // Nothing readable at all is refused, naming the token.
    let p = server.post("/v1/records", &json!({ "game": "chess", "text": "1. e4 Zz9 *" })).problem(422);
    assert_eq!(p["token"], json!("Zz9"), "{p}");
    server.stop();
}
