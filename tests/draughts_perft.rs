//! Perft of the international draughts move generator against published counts.

use kibitz::game::{Game, perft_generic};
use kibitz::games::draughts::Draughts;

/// From the start position, depths 1-11.
const START: [u64; 11] = [9, 81, 658, 4265, 27117, 167140, 1049442, 6483961, 41022423, 258895763, 1665861398];

/// The Woldouby position, depths 1-15.
const WOLDOUBY_FEN: &str = "W:W25,27,28,30,32,33,34,35,37,38:B12,13,14,16,18,19,21,23,24,26";
const WOLDOUBY: [u64; 15] =
    [6, 12, 30, 73, 215, 590, 1944, 6269, 22369, 88050, 377436, 1910989, 9872645, 58360286, 346184885];

/// Twenty kings against twenty kings, depths 1-11.
const KINGS_FEN: &str = "W:WK31,K32,K33,K34,K35,K36,K37,K38,K39,K40,K41,K42,K43,K44,K45,K46,K47,K48,K49,K50:\
                         BK1,K2,K3,K4,K5,K6,K7,K8,K9,K10,K11,K12,K13,K14,K15,K16,K17,K18,K19,K20";
const KINGS: [u64; 11] = [17, 79, 352, 1399, 7062, 37589, 217575, 1333217, 8558321, 58381162, 417920283];

fn check(fen: &str, counts: &[u64], max_depth: usize) {
    let mut g = Draughts::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
    for (i, &want) in counts.iter().enumerate().take(max_depth) {
        let depth = i as u32 + 1;
        assert_eq!(g.perft(depth), want, "{fen}: perft({depth})");
    }
}

#[test]
fn start_position_perft_1_to_9() {
    let mut g = Draughts::start();
    for (i, &want) in START.iter().enumerate().take(9) {
        let depth = i as u32 + 1;
        assert_eq!(g.perft(depth), want, "perft({depth}) from the start position");
    }
}

#[test]
fn woldouby_perft_1_to_12() {
    check(WOLDOUBY_FEN, &WOLDOUBY, 12);
}

#[test]
fn twenty_kings_perft_1_to_8() {
    check(KINGS_FEN, &KINGS, 8);
}

#[test]
fn generic_perft_agrees_with_specialised() {
    // make/unmake through the trait (incremental hash, history, draw counters) against the copy-make perft.
    let mut g = Draughts::start();
    for depth in 1..=6 {
        assert_eq!(perft_generic(&mut g, depth), START[depth as usize - 1], "generic perft({depth})");
    }
    assert_eq!(g.plies(), 0);
    let mut g = Draughts::from_fen(WOLDOUBY_FEN).unwrap();
    for depth in 1..=8 {
        assert_eq!(perft_generic(&mut g, depth), WOLDOUBY[depth as usize - 1], "generic Woldouby perft({depth})");
    }
    let mut g = Draughts::from_fen(KINGS_FEN).unwrap();
    for depth in 1..=4 {
        assert_eq!(perft_generic(&mut g, depth), KINGS[depth as usize - 1], "generic kings perft({depth})");
    }
}

/// The Turkish strike: the king may not jump a piece twice, and jumped pieces stay on the board until the
/// end of the sequence, so the most it can take here is four (a generator removing pieces at once finds five).
#[test]
fn turkish_strike_trap() {
    let g = Draughts::from_fen("W:WK2:B7,8,17,18,24").unwrap();
    let moves = g.legal_moves();
    assert!(!moves.is_empty());
    for m in &moves {
        assert_eq!(m.captures(), 4, "{}", g.format_move(*m));
    }
}

/// The slow depths: `cargo test --release --test draughts_perft -- --ignored --nocapture`.
#[test]
#[ignore]
fn slow_depths() {
    check(WOLDOUBY_FEN, &WOLDOUBY, 15);
    check(KINGS_FEN, &KINGS, 10);
}

/// Speed figures: `cargo test --release --test draughts_perft -- --ignored --nocapture perft_speed`.
#[test]
#[ignore]
fn perft_speed() {
    let mut g = Draughts::start();
    for depth in [9u32, 10, 11] {
        let t = std::time::Instant::now();
        let n = g.perft(depth);
        let s = t.elapsed().as_secs_f64();
        println!("perft({depth}) = {n} in {s:.3} s: {:.1} M nodes/s", n as f64 / s / 1e6);
        assert_eq!(n, START[depth as usize - 1]);
    }
}
