//! Perft of the xiangqi move generator against the published counts (chessprogramming wiki, "Chinese Chess
//! Perft Results", verified with Fairy-Stockfish).

use kibitz::game::{Game, perft_generic};
use kibitz::games::xiangqi::Xiangqi;

/// Positions and their counts at depths 1-5.
const PUBLISHED: &[(&str, [u64; 5])] = &[
    ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1", [44, 1920, 79666, 3290240, 133312995]),
    ("r1ba1a3/4kn3/2n1b4/pNp1p1p1p/4c4/6P2/P1P2R2P/1CcC5/9/2BAKAB2 w", [38, 1128, 43929, 1339047, 53112976]),
    ("1cbak4/9/n2a5/2p1p3p/5cp2/2n2N3/6PCP/3AB4/2C6/3A1K1N1 w", [7, 281, 8620, 326201, 10369923]),
    ("5a3/3k5/3aR4/9/5r3/5n3/9/3A1A3/5K3/2BC2B2 w", [25, 424, 9850, 202884, 4739553]),
    ("CRN1k1b2/3ca4/4ba3/9/2nr5/9/9/4B4/4A4/4KA3 w", [28, 516, 14808, 395483, 11842230]),
    ("R1N1k1b2/9/3aba3/9/2nr5/2B6/9/4B4/4A4/4KA3 w", [21, 364, 7626, 162837, 3500505]),
];

fn game(fen: &str) -> Xiangqi {
    Xiangqi::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

#[test]
fn published_positions_to_depth_4() {
    for (fen, counts) in PUBLISHED {
        let mut g = game(fen);
        for (i, &want) in counts[..4].iter().enumerate() {
            let depth = i as u32 + 1;
            assert_eq!(g.perft(depth), want, "{fen} perft({depth})");
        }
    }
}

#[test]
fn start_position_depth_5() {
    let mut g = Xiangqi::start();
    assert_eq!(g.perft(5), PUBLISHED[0].1[4]);
}

#[test]
fn published_positions_depth_5() {
    for (fen, counts) in &PUBLISHED[1..] {
        assert_eq!(game(fen).perft(5), counts[4], "{fen} perft(5)");
    }
}

#[test]
fn generic_perft_agrees_with_specialised() {
    // make/unmake through the trait (incremental hash and evaluation, check flags, history) against the
    // bare-board perft.
    for (fen, counts) in PUBLISHED {
        let mut g = game(fen);
        for depth in 1..=3 {
            assert_eq!(perft_generic(&mut g, depth), counts[depth as usize - 1], "{fen} generic perft({depth})");
        }
        assert_eq!(g.plies(), 0);
    }
}

/// Speed figures: `cargo test --release --test xiangqi_perft -- --ignored --nocapture`.
#[test]
#[ignore]
fn perft_speed() {
    let mut g = Xiangqi::start();
    for depth in [5, 6] {
        let t = std::time::Instant::now();
        let n = g.perft(depth);
        let s = t.elapsed().as_secs_f64();
        println!("perft({depth}) = {n} in {s:.3} s: {:.1} M nodes/s", n as f64 / s / 1e6);
    }
    let t = std::time::Instant::now();
    let n = perft_generic(&mut g, 5);
    let s = t.elapsed().as_secs_f64();
    println!("generic perft(5) = {n} in {s:.3} s: {:.1} M nodes/s", n as f64 / s / 1e6);
}

/// Speed of make/unmake through the trait and of the evaluation:
/// `cargo test --release --test xiangqi_perft -- --ignored --nocapture`.
#[test]
#[ignore]
fn eval_speed() {
    let mut positions = Vec::new();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..20 {
        let mut g = Xiangqi::start();
        for _ in 0..100 {
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
    let rounds = 2000;
    for _ in 0..rounds {
        for p in &positions {
            sum += std::hint::black_box(p).evaluate() as i64;
        }
    }
    let s = t.elapsed().as_secs_f64();
    let evals = (rounds * positions.len()) as f64;
    println!("evaluate: {:.1} M evals/s ({:.1} ns each, checksum {sum})", evals / s / 1e6, s / evals * 1e9);
}
