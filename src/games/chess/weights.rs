//! Chess's evaluation weights: (middlegame, endgame) pairs in centipawns, named as `eval::NAMES`. Generated
//! by `examples/tune.rs` (`tune chess ... -o src/games/chess/weights.rs`); the commands that made these
//! values are in BENCHMARKS.md.

use super::eval::{S, Weights};

pub const WEIGHTS: Weights = [
    S(79, 96), // pawn
    S(319, 315), // knight
    S(352, 340), // bishop
    S(436, 651), // rook
    S(1072, 1106), // queen
    S(5, 8), // pawn_advance
    S(26, -28), // pawn_center
    S(4, 13), // knight_center
    S(4, 0), // bishop_center
    S(52, -5), // rook_seventh
    S(2, 10), // queen_center
    S(-21, -8), // king_center
    S(6, -25), // king_home
    S(6, 7), // mob_knight
    S(4, 6), // mob_bishop
    S(4, 6), // mob_rook
    S(2, 12), // mob_queen
    S(6, -6), // passed_r2
    S(-13, 7), // passed_r3
    S(-83, 63), // passed_r4
    S(-33, 87), // passed_r5
    S(100, 142), // passed_r6
    S(56, 220), // passed_r7
    S(-9, 27), // passed_king_distance
    S(-4, -25), // isolated
    S(-34, 26), // doubled
    S(22, 44), // bishop_pair
    S(40, -19), // rook_open
    S(24, 9), // rook_semi_open
    S(13, -3), // shield_near
    S(-14, 6), // shield_far
    S(4, -2), // king_attack
    S(4, -5), // tempo
];
