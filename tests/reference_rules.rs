//! Differential tests of the move generators: for each game a second, independent generator written from the
//! printed rules for clarity (tests/reference/), compared with kibitz's on random playouts of whole games: the
//! legal moves, the end of the game and its result in every position. Each game has a quick test and an
//! `#[ignore]`d one that compares a million positions (or `KIBITZ_DIFF_POSITIONS`):
//!
//! ```text
//! KIBITZ_DIFF_POSITIONS=1000000 cargo test --test reference_rules -- --ignored --nocapture
//! ```

#[path = "reference/common.rs"]
mod common;

#[path = "reference/checkers.rs"]
mod checkers;

#[path = "reference/draughts.rs"]
mod draughts;

#[path = "reference/xiangqi.rs"]
mod xiangqi;

#[path = "reference/chess.rs"]
mod chess;
