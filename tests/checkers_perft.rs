//! Perft of the English checkers move generator against published counts.

use kibitz::game::{Game, perft_generic};
use kibitz::games::checkers::Checkers;

const START: [u64; 10] = [7, 49, 302, 1469, 7361, 36768, 179740, 845931, 3963680, 18391564];

#[test]
fn start_position_perft_1_to_10() {
    let mut g = Checkers::start();
    for (i, &want) in START.iter().enumerate() {
        let depth = i as u32 + 1;
        assert_eq!(g.perft(depth), want, "perft({depth}) from the start position");
    }
}

#[test]
fn generic_perft_agrees_with_specialised() {
    // make/unmake through the trait (incremental hash, history) against the copy-make perft.
    let mut g = Checkers::start();
    for depth in 1..=7 {
        assert_eq!(perft_generic(&mut g, depth), START[depth as usize - 1], "generic perft({depth})");
    }
    assert_eq!(g.plies(), 0);
}

/// Published special positions: three captures for White; a single forced jump; two different move strings
/// (paths) for the same captures by a king that comes back to its square.
#[test]
fn published_special_positions() {
    for (fen, want) in [("W:W21,22:B11,17,18", 3), ("W:W11:B6,7", 1), ("B:WK14,K15,K22,K23:BK10", 2)] {
        let mut g = Checkers::from_fen(fen).unwrap();
        assert_eq!(g.perft(1), want, "{fen}");
    }
    let g = Checkers::from_fen("W:W11:B6,7").unwrap();
    let only: Vec<String> = g.legal_moves().into_iter().map(|m| g.format_move(m)).collect();
    assert_eq!(only, ["11x2"]);
}

/// Positions of our own, counted by pydraughts (`tests/oracle/checkers_pydraughts.py --perft FEN 6`): kings on
/// both sides, forced multi-jumps, men crowning in the middle of a jump, king endings.
const OWN: &[(&str, [u64; 6])] = &[
    // Middle game with kings on both sides; Black starts with a forced jump.
    ("B:W5,14,18,21,K27,28,30,31:B1,2,K9,10,12,K16,19,20", [1, 1, 9, 67, 308, 1845]),
    // Multi-jumps for men and a king.
    ("B:W14,15,22,23,24,K31:B3,10,K11", [6, 27, 175, 1098, 5826, 34806]),
    // Crowning jumps for both sides (the move ends on the crowning row).
    ("B:W14,22,23,26,27,K7:B3,9,K2,K12", [3, 8, 33, 180, 1070, 5970]),
    // Kings against kings and men.
    ("W:WK1,K3,11:BK30,K32,28,24", [6, 24, 136, 714, 4578, 25724]),
    ("W:W18,19,25,26,K2:BK9,10,11,15,23", [7, 23, 63, 221, 830, 4325]),
];

#[test]
fn own_positions_match_pydraughts() {
    for (fen, counts) in OWN {
        let mut g = Checkers::from_fen(fen).unwrap();
        for (i, &want) in counts.iter().enumerate() {
            let depth = i as u32 + 1;
            assert_eq!(g.perft(depth), want, "{fen} perft({depth})");
            if depth <= 5 {
                assert_eq!(perft_generic(&mut g, depth), want, "{fen} generic perft({depth})");
            }
        }
    }
}

/// Speed figures: `cargo test --release --test checkers_perft -- --ignored --nocapture`.
#[test]
#[ignore]
fn perft_speed() {
    let mut g = Checkers::start();
    for (depth, want) in [(10, 18391564u64), (11, 85242128), (12, 388623673)] {
        let t = std::time::Instant::now();
        let n = g.perft(depth);
        let s = t.elapsed().as_secs_f64();
        println!("perft({depth}) = {n} in {s:.3} s: {:.1} M nodes/s", n as f64 / s / 1e6);
        assert_eq!(n, want);
    }
}

/// Speed through the trait (make/unmake with hash and history) and of the evaluation:
/// `cargo test --release --test checkers_perft -- --ignored --nocapture`.
#[test]
#[ignore]
fn trait_and_eval_speed() {
    let mut g = Checkers::start();
    let t = std::time::Instant::now();
    let n = perft_generic(&mut g, 10);
    let s = t.elapsed().as_secs_f64();
    println!("generic perft(10) = {n} in {s:.3} s: {:.1} M nodes/s", n as f64 / s / 1e6);

    // Positions from a few pseudo-random games, each evaluated many times.
    let mut positions = Vec::new();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..20 {
        let mut g = Checkers::start();
        for _ in 0..80 {
            let ms = g.legal_moves();
            if ms.is_empty() {
                break;
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            g.make(ms[(x % ms.len() as u64) as usize]);
            positions.push(g.clone());
        }
    }
    let t = std::time::Instant::now();
    let mut sum = 0i64;
    let rounds = 5000;
    for _ in 0..rounds {
        for p in &positions {
            sum += std::hint::black_box(p).evaluate() as i64;
        }
    }
    let s = t.elapsed().as_secs_f64();
    let evals = (rounds * positions.len()) as f64;
    println!("evaluate: {:.1} M evals/s ({:.1} ns each, checksum {sum})", evals / s / 1e6, s / evals * 1e9);
}
