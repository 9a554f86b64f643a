//! Chess's evaluation weights: (middlegame, endgame) pairs in centipawns, named as `eval::NAMES`. Generated
//! by `examples/tune.rs` (`tune chess ... -o src/games/chess/weights.rs`); the commands that made these
//! values are in BENCHMARKS.md.

use super::eval::{S, Weights};

pub const WEIGHTS: Weights = [
    S(70, 107), // pawn
    S(296, 354), // knight
    S(356, 355), // bishop
    S(440, 618), // rook
    S(1124, 1096), // queen
    S(6, 4), // pawn_advance
    S(24, -12), // pawn_center
    S(6, 21), // knight_center
    S(7, -3), // bishop_center
    S(13, 4), // rook_seventh
    S(-2, 6), // queen_center
    S(-32, 8), // king_center
    S(1, -19), // king_home
    S(8, 0), // mob_knight
    S(7, 6), // mob_bishop
    S(8, 0), // mob_rook
    S(3, 7), // mob_queen
    S(-14, 7), // passed_r2
    S(-48, 15), // passed_r3
    S(-36, 41), // passed_r4
    S(-15, 85), // passed_r5
    S(80, 112), // passed_r6
    S(111, 210), // passed_r7
    S(-2, 20), // passed_king_distance
    S(-10, -6), // isolated
    S(-28, 0), // doubled
    S(7, 75), // bishop_pair
    S(69, -6), // rook_open
    S(33, 22), // rook_semi_open
    S(15, 0), // shield_near
    S(-6, -3), // shield_far
    S(3, 0), // king_attack
    S(8, -9), // tempo
];
