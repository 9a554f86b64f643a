//! Perft of the English checkers move generator against published counts.

use kibitz::game::{Game, perft_generic};
use kibitz::games::checkers::Checkers;

const START: [u64; 10] = [
    7, 49, 302, 1469, 7361, 36768, 179740, 845931, 3963680, 18391564,
];

#[test]
fn start_position_perft_1_to_10() {
    let mut g = Checkers::start();
    for (i, &want) in START.iter().enumerate() {
        let depth = i as u32 + 1;
        assert_eq!(
            g.perft(depth),
            want,
            "perft({depth}) from the start position"
        );
    }
}

#[test]
fn generic_perft_agrees_with_specialised() {
    // make/unmake through the trait (incremental hash, history) against the copy-make perft.
    let mut g = Checkers::start();
    for depth in 1..=7 {
        assert_eq!(
            perft_generic(&mut g, depth),
            START[depth as usize - 1],
            "generic perft({depth})"
        );
    }
    assert_eq!(g.plies(), 0);
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
