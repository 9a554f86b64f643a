//! Rules and notation tests: perft against the published counts, FEN, UCI and SAN round trips, the draw
//! rules, static exchange, evaluation symmetry.

use super::*;
use crate::game::Outcome;

fn game(fen: &str) -> Chess {
    Chess::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn play(g: &mut Chess, text: &str) {
    let m = g.parse_move(text).unwrap_or_else(|e| panic!("{}: {e}", g.to_fen()));
    g.make(m);
}

pub(super) const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
/// Kiwipete as the wiki gives it (white pawn on d5, black pawn on h3).
pub(super) const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
pub(super) const POS3: &str = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1";
pub(super) const POS4: &str = "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1";
pub(super) const POS4_MIRRORED: &str = "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1";
pub(super) const POS5: &str = "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8";
pub(super) const POS6: &str = "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10";

/// The published counts (chessprogramming wiki, "Perft Results"), checked with Stockfish's `go perft`.
pub(super) const PERFT: &[(&str, &[u64])] = &[
    (START, &[20, 400, 8902, 197_281, 4_865_609, 119_060_324]),
    (KIWIPETE, &[48, 2039, 97_862, 4_085_603, 193_690_690]),
    (POS3, &[14, 191, 2812, 43_238, 674_624, 11_030_083]),
    (POS4, &[6, 264, 9467, 422_333, 15_833_292]),
    (POS4_MIRRORED, &[6, 264, 9467, 422_333, 15_833_292]),
    (POS5, &[44, 1486, 62_379, 2_103_487, 89_941_194]),
    (POS6, &[46, 2079, 89_890, 3_894_594, 164_075_551]),
];

fn check_perft(max_leaves: u64) {
    for (fen, counts) in PERFT {
        let mut g = game(fen);
        for (d, &expected) in counts.iter().enumerate() {
            if expected > max_leaves {
                break;
            }
            assert_eq!(g.perft(d as u32 + 1), expected, "{fen} depth {}", d + 1);
        }
    }
}

#[test]
fn perft_published_counts() {
    check_perft(20_000_000);
}

#[test]
#[ignore = "slow: every count up to 200 M leaves (about a minute)"]
fn perft_published_counts_deep() {
    check_perft(200_000_000);
}

#[test]
fn generic_perft_through_make_unmake_agrees() {
    for (fen, counts) in PERFT {
        let mut g = game(fen);
        assert_eq!(crate::game::perft_generic(&mut g, 3), counts[2], "{fen}");
        assert_eq!(g.to_fen(), game(fen).to_fen(), "make/unmake restores the position");
    }
}

/// Every legal move of every position down to `depth` plies: SAN and UCI written, read back to the same move.
fn round_trip(g: &mut Chess, depth: u32, seen: &mut usize) {
    if depth == 0 {
        return;
    }
    for m in g.legal_moves() {
        let san = g.move_to_san(m);
        let uci = g.move_to_uci(m);
        assert_eq!(g.parse_move(&san), Ok(m), "{} san {san}", g.to_fen());
        assert_eq!(g.parse_san(&san), Ok(m), "{} san {san}", g.to_fen());
        assert_eq!(g.parse_move(&uci), Ok(m), "{} uci {uci}", g.to_fen());
        // Lenient forms: no check mark, no `x`, no `=`.
        let bare: String = san.chars().filter(|c| !matches!(c, '+' | '#' | 'x' | '=')).collect();
        assert_eq!(g.parse_move(&bare), Ok(m), "{} bare {bare}", g.to_fen());
        *seen += 1;
        g.make(m);
        round_trip(g, depth - 1, seen);
        g.unmake();
    }
}

#[test]
fn san_and_uci_round_trip_on_the_perft_positions() {
    let mut seen = 0;
    for (fen, _) in PERFT {
        let mut g = game(fen);
        round_trip(&mut g, 3, &mut seen);
    }
    assert!(seen > 200_000, "{seen}");
}

#[test]
fn san_details() {
    let g = game(KIWIPETE);
    let san = |t: &str| g.move_to_san(g.parse_move(t).expect(t));
    assert_eq!(san("e1g1"), "O-O");
    assert_eq!(san("e1c1"), "O-O-O");
    assert_eq!(san("e5f7"), "Nxf7");
    assert_eq!(san("c3b1"), "Nb1");
    assert_eq!(san("d2c1"), "Bc1");
    assert_eq!(san("e2a6"), "Bxa6");
    assert_eq!(g.parse_move("0-0").map(|m| g.move_to_uci(m)), Ok("e1g1".to_string()));
    assert_eq!(g.parse_move("O-O-O").map(|m| g.move_to_uci(m)), Ok("e1c1".to_string()));
    // Disambiguation by file, by rank, by both.
    let g = game("4k3/8/8/8/8/8/8/R4RK1 w - - 0 1");
    assert_eq!(g.move_to_san(g.parse_move("a1d1").expect("a1d1")), "Rad1");
    let g = game("4k3/R7/8/8/8/8/8/R3K3 w - - 0 1");
    assert_eq!(g.move_to_san(g.parse_move("a1a4").expect("a1a4")), "R1a4");
    // By rank where a bishop's SAN is also a legal rook move in coordinates (`b8b7`): the capital is a bishop
    // (found by the notation round trip's random games). Coordinates in capitals are read where SAN is not.
    let g = game("Brb2r2/2Np4/1kb3Pb/p4p2/1q3P2/1P1P4/3Rn3/3K4 b - - 0 1");
    assert_eq!(g.move_to_san(g.parse_move("c8b7").expect("c8b7")), "B8b7");
    assert_eq!(g.parse_move("B8b7").map(|m| g.move_to_uci(m)), Ok("c8b7".to_string()));
    assert_eq!(g.parse_move("b8b7").map(|m| g.move_to_uci(m)), Ok("b8b7".to_string()));
    assert_eq!(g.parse_move("B8B7").map(|m| g.move_to_uci(m)), Ok("b8b7".to_string()));
    let g = game("6k1/8/8/8/Q2Q4/8/8/Q6K w - - 0 1");
    assert_eq!(g.move_to_san(g.parse_move("a4d1").expect("a4d1")), "Qa4d1");
    assert_eq!(g.move_to_san(g.parse_move("a1d1").expect("a1d1")), "Q1d1");
    assert_eq!(g.move_to_san(g.parse_move("d4d8").expect("d4d8")), "Qd8+");
    // Promotion, with check; mate.
    let g = game("8/P7/8/8/8/8/8/k6K w - - 0 1");
    assert_eq!(g.move_to_san(g.parse_move("a7a8q").expect("a7a8q")), "a8=Q+");
    for t in ["a8=Q", "a8Q", "a8q", "a8=Q+", "a7a8q", "a7a8Q"] {
        assert_eq!(g.parse_move(t).map(|m| m.promotion), Ok(Some(Piece::Queen)), "{t}");
    }
    assert_eq!(g.parse_move("a8=N").map(|m| m.promotion), Ok(Some(Piece::Knight)));
    assert_eq!(g.parse_move("a8").unwrap_err().message, "a pawn reaching the last rank must name its promotion (=Q)");
    let g = game("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    assert_eq!(g.move_to_san(g.parse_move("Ra8").expect("Ra8")), "Ra8#");
    // En passant, and bad input.
    let g = game("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2");
    assert_eq!(g.move_to_san(g.parse_move("e5d6").expect("ep")), "exd6");
    assert_eq!(g.parse_move("exd6 e.p."), g.parse_move("e5d6"));
    // A pawn move without its file is a push on that file, never a capture from the next one (found by an
    // audit: `d6` and `xd6` were read as `exd6`, and a corrupt PGN as another game).
    for t in ["d6", "xd6", "d6 e.p."] {
        assert!(g.parse_move(t).is_err(), "{t}");
    }
    let g = game("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 2");
    assert!(g.parse_move("d5").is_err());
    assert_eq!(g.parse_move("exd5").map(|m| g.move_to_uci(m)), Ok("e4d5".to_string()));
    assert_eq!(g.parse_move("e5").map(|m| g.move_to_uci(m)), Ok("e4e5".to_string()));
    let g = Chess::start();
    assert_eq!(g.parse_move("e5").unwrap_err().message, "illegal move");
    assert_eq!(g.parse_move("e2e5").unwrap_err().message, "illegal move");
    assert_eq!(g.parse_move("Zz9").unwrap_err().token, "Zz9");
    assert_eq!(g.parse_move("").unwrap_err().message, "empty move");
    let g = game("4k3/8/8/8/8/8/8/1N3N1K w - - 0 1");
    assert_eq!(g.parse_move("Nd2").unwrap_err().message, "ambiguous move");
    assert!(g.parse_move("Nbd2").is_ok() && g.parse_move("N1d2").is_err());
}

#[test]
fn fen_round_trip_and_errors() {
    for (fen, _) in PERFT {
        assert_eq!(game(fen).to_fen(), *fen);
    }
    // Clocks may be left out.
    assert_eq!(game("8/8/8/8/8/8/8/K1k5 w - -").to_fen(), "8/8/8/8/8/8/8/K1k5 w - - 0 1");
    for (bad, token) in [
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "x"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkz - 0 1", "KQkz"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1", "e9"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1", "x"),
        ("8/8/8/8/8/8/8/K7 w - - 0 1", "8/8/8/8/8/8/8/K7"),
        // Kings side by side, which cozy-chess reads (its rules then take a king and panic without one).
        ("k7/1K6/8/8/8/8/8/7R w - - 0 1", "k7/1K6/8/8/8/8/8/7R"),
        ("8/8/8/8/8/8/k7/K7 b - - 0 1", "8/8/8/8/8/8/k7/K7"),
        // A rook's file given where no rook stands.
        ("1nbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQka - 0 1", "KQka"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/1NBQKBNR w Akq - 0 1", "Akq"),
        ("", ""),
    ] {
        let e = Chess::from_fen(bad).expect_err(bad);
        assert_eq!(e.token, token, "{bad}: {e}");
    }
    // `KQkq` written where a king or a rook has left (set-up positions, puzzles): the rights that cannot be
    // are dropped, as python-chess and Stockfish read them.
    for (given, read) in [
        ("1nbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "1nbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQk - 0 1"),
        ("4k3/8/8/8/8/8/4P3/4K3 w KQkq - 0 1", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"),
        ("r3k3/8/8/8/8/8/8/R3K3 b KQkq - 0 1", "r3k3/8/8/8/8/8/8/R3K3 b Qq - 0 1"),
        ("r3k3/8/8/8/8/8/4K3/R7 b KQkq - 0 1", "r3k3/8/8/8/8/8/4K3/R7 b q - 0 1"),
    ] {
        assert_eq!(game(given).to_fen(), read, "{given}");
    }
}

#[test]
fn chess960_castling_letters() {
    // X-FEN: the king on b1, rooks on a1 and c1 ... here rooks on a and h but the king on f.
    let fen = "rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w KQkq - 0 1";
    let g = game(fen);
    assert!(g.is_chess960());
    assert_eq!(g.to_fen(), fen);
    let shredder = game("rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w EAea - 0 1");
    assert_eq!(shredder.to_fen(), fen);
    // Two rooks on one side: the inner one's right is written by its file.
    let g = game("1r1kr1r1/8/8/8/8/8/8/1R1KR1R1 w Ee - 0 1");
    assert_eq!(g.to_fen(), "1r1kr1r1/8/8/8/8/8/8/1R1KR1R1 w Ee - 0 1");
    // Standard chess writes castling e1g1, Chess960 as king takes rook; both read.
    let g = game("rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w KQkq - 0 1");
    assert_eq!(g.parse_move("O-O-O").map(|m| g.move_to_uci(m)), Ok("b1a1".to_string()));
}

#[test]
fn the_end_of_the_game() {
    // Fool's mate.
    let mut g = Chess::start();
    for m in ["f3", "e5", "g4", "Qh4#"] {
        play(&mut g, m);
    }
    assert_eq!(g.outcome(), Some(GameEnd::win(Side::Second, "checkmate")));
    // Stalemate.
    let g = game("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    assert_eq!(g.outcome(), Some(GameEnd::draw("stalemate")));
    // Threefold repetition.
    let mut g = Chess::start();
    for m in ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"] {
        play(&mut g, m);
        assert_eq!(g.outcome(), None);
    }
    play(&mut g, "Ng8");
    assert_eq!(g.outcome().map(|e| e.reason), Some("threefold repetition"));
    // A double step that no pawn can take en passant makes no new position: the position right after it
    // is the first of the three.
    let mut g = game("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1");
    play(&mut g, "e4");
    for m in ["Kd8", "Kd1", "Ke8", "Ke1", "Kd8", "Kd1", "Ke8"] {
        assert_eq!(g.outcome(), None);
        play(&mut g, m);
    }
    play(&mut g, "Ke1");
    assert_eq!(g.outcome().map(|e| e.reason), Some("threefold repetition"));
    // When it can be taken en passant, the position after it is a different one.
    let mut g = game("4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1");
    play(&mut g, "e4");
    for m in ["Kd8", "Kd1", "Ke8", "Ke1", "Kd8", "Kd1", "Ke8", "Ke1"] {
        assert_eq!(g.outcome(), None);
        play(&mut g, m);
    }
    assert_eq!(g.outcome(), None, "the position after e4 differs from the later ones");
    play(&mut g, "Kd8");
    assert_eq!(g.outcome().map(|e| e.reason), Some("threefold repetition"));
    // 50 moves: a draw, unless the 100th ply mates.
    let g = game("4k3/8/8/8/8/8/8/R3K3 w - - 100 80");
    assert_eq!(g.outcome(), Some(GameEnd::draw("50-move rule")));
    let mut g = game("6k1/5ppp/8/8/8/8/8/R5K1 w - - 99 80");
    play(&mut g, "Ra8");
    assert_eq!(g.outcome().map(|e| e.outcome), Some(Outcome::Win(Side::First)));
    // A stalemate is one whatever the clock (found by an audit: "50-move rule" was said; python-chess says
    // stalemate). With a lone minor piece it is said to be insufficient material, as python-chess says.
    let g = game("7k/5Q2/6K1/8/8/8/8/8 b - - 100 80");
    assert_eq!(g.outcome(), Some(GameEnd::draw("stalemate")));
    let g = game("k7/2K5/8/8/8/4B3/8/8 b - - 0 60");
    assert_eq!(g.outcome(), Some(GameEnd::draw("insufficient material")));
    // Insufficient material.
    // Bishops all on one colour of square draw however many there are (three here, on dark squares).
    for fen in [
        "8/8/4k3/8/8/3K4/8/8 w - - 0 1",
        "8/8/4k3/8/8/3KN3/8/8 w - - 0 1",
        "8/2b5/4k3/8/8/3KB3/8/8 w - - 0 1",
        "8/8/8/4B2k/3b4/b7/8/7K w - - 0 1",
    ] {
        assert_eq!(game(fen).outcome(), Some(GameEnd::draw("insufficient material")), "{fen}");
    }
    for fen in [
        "8/3b4/4k3/8/8/3KB3/8/8 w - - 0 1",
        "8/8/4k3/8/8/3KNN2/8/8 w - - 0 1",
        "8/8/4k3/8/8/3KP3/8/8 w - - 0 1",
        "8/8/8/4B2k/3b4/1b6/8/7K w - - 0 1",
    ] {
        assert_eq!(game(fen).outcome(), None, "{fen}");
    }
}

#[test]
fn null_move_rules_and_hash() {
    let mut g = Chess::start();
    let h = g.hash();
    assert!(g.make_null());
    assert_ne!(g.hash(), h);
    g.unmake();
    assert_eq!(g.hash(), h);
    // In check, or only king and pawns: no null move.
    assert!(!game("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1").make_null());
    assert!(!game("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1").make_null());
    // Transpositions hash alike.
    let mut a = Chess::start();
    let mut b = Chess::start();
    for m in ["Nf3", "Nf6", "Nc3", "Nc6"] {
        play(&mut a, m);
    }
    for m in ["Nc3", "Nc6", "Nf3", "Nf6"] {
        play(&mut b, m);
    }
    assert_eq!(a.hash(), b.hash());
}

#[test]
fn noisy_moves_and_exchanges() {
    let g = game(KIWIPETE);
    let mut noisy = Vec::new();
    g.generate_noisy(&mut noisy);
    let mut names: Vec<String> = noisy.iter().map(|&m| g.move_to_san(m)).collect();
    names.sort();
    assert_eq!(names, ["Bxa6", "Nxd7", "Nxf7", "Nxg6", "Qxf6", "Qxh3", "dxe6", "gxh3"]);
    assert!(noisy.iter().all(|&m| g.is_noisy(m)));
    let castle = g.parse_move("O-O").expect("castle");
    assert!(!g.is_noisy(castle));
    // Exchanges: a defended pawn taken by the queen loses; an undefended one wins.
    let g = game("4k3/8/3p4/4p3/8/8/8/4QK2 w - - 0 1");
    assert_eq!(g.see(g.parse_move("Qxe5").expect("Qxe5")), 100 - 950);
    let g = game("4k3/8/8/4p3/8/8/8/4QK2 w - - 0 1");
    assert_eq!(g.see(g.parse_move("Qxe5").expect("Qxe5")), 100);
    // R takes a pawn defended by a pawn, backed by another rook: rook for two pawns.
    let g = game("4k3/8/3p4/4p3/8/8/4R3/4RK2 w - - 0 1");
    assert_eq!(g.see(g.parse_move("Rxe5").expect("Rxe5")), 100 - 500 + 100);
    // Promotions are noisy; under-promotions are not searched in quiescence.
    let g = game("8/P7/8/8/8/8/8/k6K w - - 0 1");
    g.generate_noisy(&mut noisy);
    assert_eq!(noisy.len(), 1);
}

#[test]
fn evaluation_is_symmetric_and_sensible() {
    // The start: a small edge for the side to move at most (the network learned the searches' scores there).
    let start = Chess::start().evaluate();
    assert!((0..=40).contains(&start), "{start}");
    assert!(Chess::start().with_network(None).evaluate().abs() <= 20);
    for (fen, _) in PERFT {
        let g = game(fen);
        // The same position with colours swapped and the board mirrored.
        let mirrored = mirror(fen);
        let m = game(&mirrored);
        assert_eq!(g.evaluate(), m.evaluate(), "{fen} vs {mirrored}");
    }
    // A queen up is a lot; K+N v K is scaled down.
    assert!(game("4k3/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1").evaluate() > 2000);
    assert!(game("4k3/8/8/8/8/8/8/3QK3 w - - 0 1").evaluate() > 700);
    assert!(game("4k3/8/8/8/8/8/8/3NK3 w - - 0 1").evaluate() < 150);
}

/// A FEN with the colours swapped and the board turned upside down.
fn mirror(fen: &str) -> String {
    let f: Vec<&str> = fen.split(' ').collect();
    let swap = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_uppercase() { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() })
            .collect()
    };
    let placement: Vec<String> = f[0].split('/').rev().map(swap).collect();
    let side = if f[1] == "w" { "b" } else { "w" };
    let castling = if f[2] == "-" { "-".to_string() } else { swap(f[2]) };
    let castling = {
        let mut v: Vec<char> = castling.chars().collect();
        v.sort_by_key(|c| (c.is_ascii_lowercase(), *c != 'K' && *c != 'k'));
        v.into_iter().collect::<String>()
    };
    let ep = if f[3] == "-" {
        "-".to_string()
    } else {
        let b = f[3].as_bytes();
        format!("{}{}", b[0] as char, if b[1] == b'3' { '6' } else { '3' })
    };
    format!("{} {side} {castling} {ep} {} {}", placement.join("/"), f[4], f[5])
}

#[test]
fn search_finds_a_mate_and_wins_material() {
    use crate::search::{Limits, SearchOptions, TranspositionTable, search};
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let tt = Arc::new(TranspositionTable::new(8));
    let stop = Arc::new(AtomicBool::new(false));
    let run = |fen: &str, depth: u32| {
        let g = game(fen);
        let done = search(&g, &Limits::depth(depth), &SearchOptions::default(), &tt, &stop, &mut |_| {});
        (g.move_to_san(done.best.expect("a move")), done.lines[0].score)
    };
    // Back-rank mate in one.
    assert_eq!(run("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", 4), ("Ra8#".to_string(), crate::game::Score::Mate(1)));
    // A free queen.
    let (best, _) = run("4k3/8/8/3q4/8/8/8/3RK3 w - - 0 1", 4);
    assert_eq!(best, "Rxd5");
}

#[test]
fn multipv_lines_stopped_inside_an_iteration_come_best_first() {
    // Searches of four lines stopped by node limits of every size, mostly inside an iteration: the lines are
    // distinct, those of the stopped iteration (one ply deeper than the answer's depth) come first, and lines of
    // one depth come best first. Before the answer took the last completed iteration's order, moves the stopped
    // iteration had not reached kept their old places whatever their last scores.
    use crate::game::Score;
    use crate::search::{Limits, SearchOptions, TranspositionTable, search};
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let value = |s: Score| match s {
        Score::Mate(n) if n > 0 => 100_000 - n,
        Score::Mate(n) => -100_000 - n,
        Score::Cp(c) => c,
    };
    let tt = Arc::new(TranspositionTable::new(8));
    let stop = Arc::new(AtomicBool::new(false));
    let options = SearchOptions { multipv: 4, ..SearchOptions::default() };
    let mut stopped_inside = 0;
    for fen in [START, KIWIPETE, POS4, POS6] {
        let g = game(fen);
        for nodes in (1..=60).map(|i| 700 * i) {
            tt.clear();
            let done = search(&g, &Limits::nodes(nodes), &options, &tt, &stop, &mut |_| {});
            let why = format!("{fen} at {nodes} nodes: {:?}", done.lines);
            assert_eq!(done.lines.len(), 4, "{why}");
            assert_eq!(done.best, Some(done.lines[0].pv[0]), "{why}");
            assert_eq!(done.ponder, done.lines[0].pv.get(1).copied(), "{why}");
            for (i, line) in done.lines.iter().enumerate() {
                assert!(done.lines[..i].iter().all(|l| l.pv[0] != line.pv[0]), "{why}");
                assert!(line.depth == done.depth || line.depth == done.depth + 1, "{why}");
                if let Some(before) = i.checked_sub(1).map(|j| &done.lines[j]) {
                    assert!(before.depth >= line.depth, "{why}");
                    assert!(before.depth > line.depth || value(before.score) >= value(line.score), "{why}");
                }
            }
            stopped_inside += usize::from(done.lines[0].depth > done.depth);
        }
    }
    assert!(stopped_inside > 20, "only {stopped_inside} searches stopped after a line of a new iteration");
}

#[test]
fn the_pawnless_mates_are_won_before_the_fifty_move_rule() {
    // Bishop and knight (either colour of bishop), queen against rook, rook: the stronger side, searching 20,000
    // nodes a move, mates the same search defending. Without the technique of `eval::mop_up`, the first ends in
    // the fifty-move rule.
    use crate::search::{Limits, SearchOptions, TranspositionTable, search};
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let tt = Arc::new(TranspositionTable::new(16));
    let stop = Arc::new(AtomicBool::new(false));
    for fen in [
        "8/8/3k4/8/8/8/8/4KBN1 w - - 0 1",
        "8/8/8/4k3/8/8/8/2B1K1N1 w - - 0 1",
        "8/1K6/8/8/8/5rk1/3Q4/8 w - - 0 1",
        "8/8/3k4/8/8/8/8/R3K3 w - - 0 1",
    ] {
        let mut g = game(fen);
        let strong = g.side_to_move();
        let mut plies = 0;
        while g.outcome().is_none() && plies < 200 {
            tt.clear();
            let done = search(&g, &Limits::nodes(20_000), &SearchOptions::default(), &tt, &stop, &mut |_| {});
            g.make(done.best.expect("a move"));
            plies += 1;
        }
        let end = g.outcome().map(|e| e.outcome);
        assert_eq!(end, Some(Outcome::Win(strong)), "{fen}: {} after {plies} plies", g.to_fen());
    }
}

#[test]
fn bench_positions_are_playable() {
    for fen in Chess::BENCH_POSITIONS {
        let g = game(fen);
        assert_eq!(g.outcome(), None, "{fen}");
        assert_eq!(g.to_fen(), *fen);
    }
}

mod records {
    use crate::game::{Game, GameRecord, PlyNote, RecordError};
    use crate::games::chess::Chess;

    const COLLECTION: &str = include_str!("../../../tests/data/records/chess_collection.pgn");

    fn parse(text: &str) -> Vec<Result<GameRecord<Chess>, RecordError>> {
        Chess::parse_records(text, None, &mut crate::game::RecordBudget::new(10_000, 1_000_000)).unwrap()
    }

    fn same(a: &GameRecord<Chess>, b: &GameRecord<Chess>) {
        let strip = |t: &[(String, String)]| -> Vec<(String, String)> {
            t.iter().filter(|(n, _)| n != "Annotator").cloned().collect()
        };
        assert_eq!(strip(&a.tags), strip(&b.tags));
        assert_eq!(a.start.to_fen(), b.start.to_fen());
        assert_eq!(a.moves, b.moves);
        assert_eq!(a.result, b.result);
    }

    #[test]
    fn collection_fixture() {
        let games = parse(COLLECTION);
        assert_eq!(games.len(), 4);
        let opera = games[0].as_ref().unwrap();
        assert_eq!(opera.moves.len(), 33);
        assert_eq!(opera.result.as_deref(), Some("1-0"));
        assert_eq!(opera.line, 1);
        assert_eq!(opera.tags[4], ("White".to_string(), "Paul Morphy".to_string()));
        let ruy = games[1].as_ref().unwrap();
        assert_eq!(ruy.start.side_to_move(), crate::game::Side::Second);
        assert_eq!(ruy.moves.len(), 15);
        assert_eq!(ruy.result.as_deref(), Some("1/2-1/2"));
        let e = games[2].as_ref().unwrap_err();
        assert_eq!((e.index, e.line, e.token.as_str()), (2, 36, "Qxd5"));
        assert!(e.message.contains("7. Qxd5") && e.message.contains("illegal in this position"), "{e}");
        let trap = games[3].as_ref().unwrap();
        assert_eq!(trap.moves.len(), 7);
        assert_eq!(trap.start.format_move_as(trap.moves[0], "san").unwrap(), "e4");
    }

    #[test]
    fn errors_name_game_line_and_token() {
        let text = "[Event \"a\"]\n1. e4 e5 2. Nf3 Nc6\n3. Bb5 Nf6 4. Bxf7 *\n\n[Event \"b\"]\n[Variant \"Atomic\"]\n1. e4 *\n\n[Event \"c\"]\n[FEN \"8/8/8 w - -\"]\n*\n\n[Event \"d\"]\n1. e4 e5 2. Ke3 1-0\n1. e4 e5 2. Nf3 {unclosed\n\n[Event \"e\"]\n1. e4 *\n";
        let games = parse(text);
        assert_eq!(games.len(), 6);
        let e = games[0].as_ref().unwrap_err();
        assert_eq!((e.index, e.line, e.token.as_str()), (0, 3, "Bxf7"));
        let e = games[1].as_ref().unwrap_err();
        assert_eq!((e.line, e.token.as_str()), (6, "Atomic"));
        assert!(e.message.contains("variant"), "{e}");
        let e = games[2].as_ref().unwrap_err();
        assert_eq!(e.line, 10);
        assert!(e.message.contains("FEN"), "{e}");
        let e = games[3].as_ref().unwrap_err();
        assert_eq!((e.line, e.token.as_str()), (14, "Ke3"));
        let e = games[4].as_ref().unwrap_err();
        assert_eq!((e.index, e.line, e.token.as_str()), (4, 15, "{"));
        assert_eq!(games[5].as_ref().unwrap().moves.len(), 1);
        assert_eq!(e.to_string(), "game 5 (line 15): unterminated comment: `{`");
        assert!(Chess::parse_records("", Some("pdn"), &mut crate::game::RecordBudget::new(10_000, 1_000_000)).is_err());
        assert!(parse("").is_empty());
    }

    #[test]
    fn results_castling_and_promotions() {
        for r in ["1-0", "0-1", "1/2-1/2", "*"] {
            let g = parse(&format!("1. e4 {r}"));
            assert_eq!(g[0].as_ref().unwrap().result.as_deref(), Some(r));
        }
        let g = parse(
            "[FEN \"r3k2r/1P6/8/8/8/8/6p1/R3K2R w KQkq - 0 1\"]\n1. bxa8=Q+ Ke7 2. O-O-O gxh1=N 3. Rd7+ Ke6 4. e4 0-0 *",
        );
        let e = g[0].as_ref().unwrap_err();
        assert_eq!(e.token, "e4");
        let g =
            parse("[FEN \"r3k2r/1P6/8/8/8/8/6p1/R3K2R w KQkq - 0 1\"]\n1. bxa8=Q+ Ke7 2. O-O-O gxh1=N 3. Rd7+ Ke6 *");
        assert_eq!(g[0].as_ref().unwrap().moves.len(), 6);
        let g = parse("1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. 0-0 Nf6 5. d3 0-0 *");
        assert_eq!(g[0].as_ref().unwrap().moves.len(), 10);
    }

    #[test]
    fn export_round_trips() {
        for rec in parse(COLLECTION).into_iter().flatten() {
            let plain = Chess::export_record(&rec, &[]).unwrap();
            let back = parse(&plain);
            same(&rec, back[0].as_ref().unwrap());
            // With notes on every move: eval comments, NAGs, better lines.
            let mut g = rec.start.clone();
            let mut notes = Vec::new();
            for &m in &rec.moves {
                let mut legal = Vec::new();
                g.generate_moves(&mut legal);
                let better: Vec<_> = legal.iter().copied().filter(|&o| o != m).take(1).collect();
                notes.push(PlyNote {
                    comment: Some("[%eval 0.48] Mistake. {x} was best.".into()),
                    nag: Some(2),
                    variation: better,
                    ..PlyNote::empty()
                });
                g.make(m);
            }
            let text = Chess::export_record(&rec, &notes).unwrap();
            assert!(text.lines().filter(|l| !l.starts_with('[')).all(|l| l.len() <= 80), "{text}");
            assert!(text.contains("[Annotator \"kibitz "), "{text}");
            assert!(text.contains("{ [%eval 0.48] Mistake."), "{text}");
            let back = parse(&text);
            same(&rec, back[0].as_ref().unwrap());
        }
        let ruy = parse(COLLECTION).into_iter().nth(1).unwrap().unwrap();
        let text = Chess::export_record(&ruy, &[]).unwrap();
        assert!(text.contains("\n3... a6 4. Ba4"), "{text}");
        // The Seven Tag Roster comes first and in its order, whatever order the record had; then its other tags.
        let odd = parse("[White \"A\"]\n[Custom \"x\"]\n[Event \"E\"]\n[Result \"1-0\"]\n[Black \"B\"]\n\n1. e4 1-0\n");
        let text = Chess::export_record(odd[0].as_ref().unwrap(), &[]).unwrap();
        let names: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix('['))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert_eq!(names, ["Event", "Site", "Date", "Round", "White", "Black", "Result", "Custom", "Annotator"], "{text}");
        assert!(text.contains("[Event \"E\"]\n") && text.contains("[Result \"1-0\"]\n"), "{text}");
        // The Result tag says what the moves end with (found by an audit: `[Result "1-0"]` over moves ending
        // `0-1` was kept, and python-chess read the tag); where the moves end without a result, the tag's when
        // it is one.
        for (input, want) in [
            ("[Result \"1-0\"]\n\n1. e4 e5 0-1\n", "0-1"),
            ("[Result \"white wins\"]\n\n1. e4 e5 *\n", "*"),
            ("[Result \"1/2-1/2\"]\n\n1. e4 e5 *\n", "1/2-1/2"),
            ("[Result \"1-0\"]\n\n1. e4 e5\n", "1-0"),
            ("\n1. e4 e5 1-0\n", "1-0"),
            // Moves ending in a mate or a stalemate state what it makes, whatever the record said (found by an
            // audit); a draw the players could have played on from is not read into the record.
            ("[Result \"0-1\"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 0-1\n", "1-0"),
            ("\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# *\n", "1-0"),
            ("[FEN \"7k/4Q3/6K1/8/8/8/8/8 w - - 0 1\"]\n\n1. Qf7 1-0\n", "1/2-1/2"),
            ("\n1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 Ng8 1-0\n", "1-0"),
        ] {
            let text = Chess::export_record(parse(input)[0].as_ref().unwrap(), &[]).unwrap();
            assert!(text.contains(&format!("[Result \"{want}\"]\n")), "{input}: {text}");
            assert!(text.trim_end().ends_with(&format!(" {want}")), "{input}: {text}");
        }
    }

    #[test]
    fn reading_stops_at_the_budget() {
        let good = "[Event \"x\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n";
        let bad = "[Event \"x\"]\n\n1. e4 e5 2. Ke3 Nc6 *\n";
        crate::game::budget_check::check::<Chess>("pgn", good, bad, 4, "\n");
    }
}

/// Positions from a few dozen pseudo-random playouts of every perft and bench position.
fn sample_positions() -> Vec<Chess> {
    let mut seed = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut out = Vec::new();
    let mut moves = Vec::new();
    let starts = PERFT.iter().map(|(fen, _)| *fen).chain(Chess::BENCH_POSITIONS.iter().copied());
    for fen in starts {
        for _ in 0..4 {
            let mut g = game(fen);
            for _ in 0..60 {
                g.generate_moves(&mut moves);
                if moves.is_empty() || g.rule_end(0).is_some() {
                    break;
                }
                g.make(moves[(next() % moves.len() as u64) as usize]);
                out.push(g.clone());
            }
        }
    }
    out
}

#[test]
fn trace_is_the_evaluation_term_by_term() {
    // With the built-in weights and with random ones (square corrections too), the linear form equals the
    // evaluation up to the integer rounding of the taper, the king attack and the passed pawns' king distance.
    let positions = sample_positions();
    assert!(positions.len() > 1000);
    let mut seed = 99u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 33) as i32 % 41 - 20, (seed >> 45) as i32 % 41 - 20)
    };
    let mut weight_sets = vec![(WEIGHTS, SQUARES)];
    for _ in 0..3 {
        let (mut w, mut squares) = (WEIGHTS, SQUARES);
        for s in w.iter_mut().chain(squares.iter_mut().flatten()) {
            let (a, b) = next();
            *s = S(s.0 + a, s.1 + b);
        }
        weight_sets.push((w, squares));
    }
    for (w, squares) in &weight_sets {
        let tables = Tables::new(w, squares);
        let mut big = 0;
        for g in &positions {
            let exact = evaluate_with(&tables, g.board());
            let linear = trace(g.board()).evaluate(w, squares);
            let diff = (linear - f64::from(exact)).abs();
            assert!(diff <= 4.0, "{}: linear {linear}, evaluation {exact}", g.to_fen());
            big += usize::from(exact.abs() >= 200);
        }
        // The comparison is not vacuous: many evaluations are large.
        assert!(big > positions.len() / 10, "{big} of {}", positions.len());
    }
    // Tables chosen per game are the ones the search evaluates with.
    let other: &'static Tables = Box::leak(Box::new(Tables::new(&weight_sets[1].0, &weight_sets[1].1)));
    let g = positions[500].clone().with_network(None);
    assert_eq!(g.clone().with_tables(other).evaluate(), evaluate_with(other, g.board()));
    assert_eq!(g.evaluate(), evaluate_with(&Tables::new(&WEIGHTS, &SQUARES), g.board()));
}

#[test]
fn hash_after_is_the_hash_the_move_gives() {
    // The keys read off cozy-chess's hashes predict the hash of every move they predict, on every legal move
    // of the sample, and they predict most moves (all but castling, en passant, double steps and moves that
    // take a castling right away).
    let (mut predicted, mut moves) = (0, 0);
    for g in &sample_positions() {
        for m in g.legal_moves() {
            moves += 1;
            let mut after = g.clone();
            after.make(m);
            if let Some(h) = g.hash_after(m) {
                assert_eq!(h, after.hash(), "{} {}", g.to_fen(), g.move_to_uci(m));
                predicted += 1;
            }
        }
    }
    assert!(moves > 20_000 && predicted * 10 > moves * 8, "{predicted} of {moves} moves predicted");
}

#[test]
fn gives_check_is_what_making_the_move_shows() {
    let mut positions = sample_positions();
    // Discovered checks, promotions with check, checks by castling and en passant.
    for fen in [
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        "4k3/8/8/2KPp2r/8/8/8/8 w - e6 0 1",
        "5k2/8/8/8/8/8/8/4K2R w K - 0 1",
        "3k4/1P6/8/8/8/8/8/4K3 w - - 0 1",
        "4k3/8/8/8/1b6/8/3N4/4K2R w K - 0 1",
    ] {
        positions.push(game(fen));
    }
    let (mut told, mut checks) = (0, 0);
    for g in &positions {
        let threats = g.threats();
        for m in g.legal_moves() {
            let mut after = g.clone();
            after.make(m);
            if let Some(check) = g.gives_check(m, &threats) {
                assert_eq!(check, after.in_check(), "{} {}", g.to_fen(), g.move_to_uci(m));
                told += 1;
                checks += usize::from(check);
            }
        }
    }
    assert!(told > 10_000 && checks > 300, "{told} moves told, {checks} checks");
}

#[test]
fn the_exchange_the_search_asks_with_the_nodes_threats_is_the_whole_exchange() {
    // `exchange_at_least` answers a move onto a square no enemy piece attacks from the node's threats, without
    // the exchange: on every legal move of the sample, at thresholds either side of zero, it must answer as the
    // exchange itself does.
    let (mut compared, mut enough, mut short) = (0, 0, 0);
    for g in &sample_positions() {
        let threats = g.threats();
        for m in g.legal_moves() {
            for threshold in [-500, -100, -33, -1, 0, 1, 100, 350] {
                let expected = g.see_at_least(m, threshold);
                assert_eq!(g.exchange_at_least(m, threshold, &threats), expected, "{} {m} {threshold}", g.to_fen());
                compared += 1;
                enough += usize::from(expected);
            }
            short += usize::from(!threats.by_any.has(m.to) && !threats.by_any.has(m.from));
        }
    }
    // Both answers are common, and so are the moves answered without the exchange.
    assert!(compared > 100_000 && enough > compared / 4 && enough < compared * 3 / 4, "{enough} of {compared}");
    assert!(short > compared / 80, "{short} moves onto unattacked squares");
}

#[test]
fn quiescence_skips_exactly_the_captures_losing_by_exchange() {
    // The noisy moves generated are the legal noisy ones. Quiescence hands `skip_in_quiescence` the ordering
    // hint instead of making the static exchange again: the moves it skips must be the captures (not
    // promotions) of a piece worth less than the capturer that lose material by static exchange, as the
    // exchange itself says.
    let mut noisy = Vec::new();
    let (mut skipped, mut kept) = (0, 0);
    for g in &sample_positions() {
        g.generate_noisy(&mut noisy);
        // The reference: the legal moves that are noisy, less the under-promotions quiescence never searches.
        let mut expected: Vec<Move> = g
            .legal_moves()
            .into_iter()
            .filter(|&m| g.is_noisy(m) && matches!(m.promotion, None | Some(Piece::Queen)))
            .collect();
        let mut generated = noisy.clone();
        let key = |m: &Move| (m.from as u8, m.to as u8, m.promotion.map(|p| p as u8));
        expected.sort_by_key(key);
        generated.sort_by_key(key);
        assert_eq!(generated, expected, "{}", g.to_fen());
        for &m in &noisy {
            // A piece other than a pawn moving to the en-passant square once came out here, a quiet move.
            assert!(g.is_noisy(m), "{} {}", g.to_fen(), g.move_to_uci(m));
            let b = g.board();
            let order = |p: Option<Piece>| p.map_or(1, |p| PIECE_ORDER[p as usize]);
            let losing = m.promotion.is_none() && order(b.piece_on(m.from)) > order(b.piece_on(m.to)) && g.see(m) < 0;
            let skip = g.skip_in_quiescence(m, g.noisy_order(m));
            assert_eq!(skip, losing, "{} {}", g.to_fen(), g.move_to_uci(m));
            if skip {
                skipped += 1;
            } else {
                kept += 1;
            }
        }
    }
    assert!(skipped > 100 && kept > 1_000, "{skipped} skipped, {kept} kept");
}

#[test]
fn the_networks_hidden_values_follow_the_moves() {
    // Along random games, with null moves and take-backs, the hidden values the game keeps equal those summed
    // from the board, and the evaluation equals the network's from the board.
    // With AVX2 where this processor has it, and without.
    for net in [shipped_network().expect("the shipped network loads"), shipped_network().unwrap().without_avx2()] {
        hidden_values_follow_the_moves(Box::leak(Box::new(net)));
    }
    // The other layout too: king regions, whose first layers differ (a king moving into another region sums its
    // side's values afresh), made from a shipped network without them; or, from a shipped network with them, its
    // first region alone.
    let (mut f, scale, residual) = net::read_float(NET_FILE).unwrap();
    let rows = net::INPUTS * f.hidden;
    if f.inputs == net::INPUTS {
        f.w1 = f.w1.repeat(net::KING_BUCKETS);
        f.inputs *= net::KING_BUCKETS;
        for (i, w) in f.w1.iter_mut().enumerate() {
            *w += (i / rows) as f32 * 0.01 * ((i % 7) as f32 - 3.0);
        }
    } else {
        f.w1.truncate(rows);
        f.inputs = net::INPUTS;
    }
    let other = net::Network::from_bytes(&net::write(&f, scale, residual).unwrap()).unwrap();
    assert_ne!(other.evaluate(game(START).board()), shipped_network().unwrap().evaluate(game(START).board()));
    for net in [other.clone(), other.without_avx2()] {
        hidden_values_follow_the_moves(Box::leak(Box::new(net)));
    }
}

fn hidden_values_follow_the_moves(net: &'static net::Network) {
    let mut rng = crate::matchplay::Rng(0x2545_f491_4f6c_dd1d);
    let mut moves = Vec::new();
    let mut checked = 0;
    for (fen, _) in PERFT {
        for _ in 0..3 {
            let mut g = game(fen).with_network(Some(net));
            for _ in 0..80 {
                g.generate_moves(&mut moves);
                if moves.is_empty() {
                    break;
                }
                match rng.below(10) {
                    0 if g.make_null() => {}
                    1 if !g.stack.is_empty() => g.unmake(),
                    _ => g.make(moves[rng.below(moves.len())]),
                }
                // The values are made when the search evaluates, here one time in three: the others leave
                // several plies to make at once, from the nearest position that has them.
                if rng.below(3) > 0 {
                    continue;
                }
                // Outside the search, the evaluation does not wait for them.
                let outside = g.evaluate();
                assert_eq!(g.evaluate_in_search(), outside, "{}", g.to_fen());
                assert!(g.fresh > g.stack.len(), "{}", g.to_fen());
                assert_eq!(g.accs[g.stack.len()], net.accumulate(g.board()), "{}", g.to_fen());
                assert_eq!(
                    net.evaluate_from(&g.accs[g.stack.len()], g.board()),
                    net.evaluate(g.board()),
                    "{}",
                    g.to_fen()
                );
                checked += 1;
            }
            while !g.stack.is_empty() {
                g.unmake();
                g.refresh();
                assert_eq!(g.accs[g.stack.len()], net.accumulate(g.board()));
            }
        }
    }
    assert!(checked > 300, "{checked}");
}

#[test]
fn quiet_moves_ordered_first_when_they_escape_a_threat() {
    // (position, move in UCI, its threat adjustment): each also with the colours swapped and the board turned.
    let cases: &[(&str, &str, i32)] = &[
        // A knight attacked by a pawn: away to a safe square, to another square a pawn attacks, or a pawn and
        // the king moving (none).
        ("4k3/2p5/8/3p4/2N5/8/7P/4K3 w - - 0 1", "c4a5", 12_288),
        ("4k3/2p5/8/3p4/2N5/8/7P/4K3 w - - 0 1", "c4e5", 12_288),
        ("4k3/2p5/8/3p4/2N5/8/7P/4K3 w - - 0 1", "c4d6", 0),
        ("4k3/2p5/8/3p4/2N5/8/7P/4K3 w - - 0 1", "h2h3", 0),
        ("4k3/2p5/8/3p4/2N5/8/7P/4K3 w - - 0 1", "e1e2", 0),
        // A knight not attacked, into a pawn's attack or not: nothing either way.
        ("4k3/8/8/8/4p3/8/8/4K1N1 w - - 0 1", "g1f3", 0),
        ("4k3/8/8/8/4p3/8/8/4K1N1 w - - 0 1", "g1h3", 0),
        // A queen attacked by a rook; attacked by a queen only (no threat); moving into a rook's attack (nothing).
        ("3rk3/8/8/8/8/8/8/3QK3 w - - 0 1", "d1a4", 32_768),
        ("3rk3/8/8/8/8/8/8/3QK3 w - - 0 1", "d1d4", 0),
        ("3qk3/8/8/8/8/8/8/3QK3 w - - 0 1", "d1a4", 0),
        ("r3k3/8/8/8/8/8/8/3QK3 w - - 0 1", "d1a4", 0),
        ("r3k3/8/8/8/8/8/8/3QK3 w - - 0 1", "d1d4", 0),
        // A rook attacked by a knight: to a square the knight does not reach, or one it does.
        ("4k3/8/8/8/8/1n6/8/R3K3 w - - 0 1", "a1a2", 16_384),
        ("4k3/8/8/8/8/1n6/8/R3K3 w - - 0 1", "a1c1", 0),
        // A bishop's attack on a rook seen through the empty squares, not through a piece.
        ("4k3/8/8/8/8/8/1b6/R3K3 w - - 0 1", "a1a2", 16_384),
        ("4k3/8/8/8/8/8/1b6/R3K3 w - - 0 1", "a1a3", 0),
        ("4k3/8/8/8/3b4/8/1P6/R3K3 w - - 0 1", "a1a2", 0),
    ];
    let turn = |uci: &str| -> String {
        uci.chars().map(|c| if c.is_ascii_digit() { char::from(b'9' - (c as u8 - b'0')) } else { c }).collect()
    };
    for &(fen, uci, expected) in cases {
        for (fen, uci) in [(fen.to_string(), uci.to_string()), (mirror(fen), turn(uci))] {
            let g = game(&fen);
            let m = g.parse_move(&uci).unwrap_or_else(|e| panic!("{fen} {uci}: {e}"));
            assert!(!g.is_noisy(m), "{fen} {uci}");
            assert_eq!(g.threat_order(m, &g.threats()), expected, "{fen} {uci}");
        }
    }
}

/// Found by an audit: the cache key after 1. e4 kept the en passant square `e3` no pawn can take on, so a lookup
/// with the FEN python-chess and lichess write (`-`) missed it. Where a pawn can take, the square stays.
#[test]
fn the_cache_key_has_an_en_passant_square_only_where_a_pawn_can_take() {
    let mut g = game(START);
    play(&mut g, "e4");
    assert_eq!(g.position_key(), game("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").position_key());
    assert!(g.position_key().ends_with(" b KQkq -"), "{}", g.position_key());
    let mut g = game("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3");
    play(&mut g, "c4");
    assert!(g.position_key().ends_with(" b KQkq c3"), "{}", g.position_key());
}

#[test]
fn the_draw_rules_memory_keys_the_cache_beside_the_position() {
    let fresh = game("7k/8/8/8/8/8/8/R6K w - - 0 1");
    assert_eq!(fresh.rule_state_key(), "");
    // One ply from the 50-move rule: the same board, another answer.
    let late = game("7k/8/8/8/8/8/8/R6K w - - 99 150");
    assert_eq!(late.position_key(), fresh.position_key());
    assert_eq!(late.rule_state_key(), " r99/100");
    // Under half the rule's count, and with no earlier position seen twice: nothing to remember.
    assert_eq!(game("7k/8/8/8/8/8/8/R6K w - - 49 150").rule_state_key(), "");
    let mut g = game(START);
    for m in ["Nf3", "Nf6", "Ng1", "Ng8"] {
        play(&mut g, m);
    }
    assert_eq!(g.rule_state_key(), "", "the start position seen once before changes no line");
    // After 1. Nf3 a second time, with the start position twice behind it: a return to it would be the third.
    play(&mut g, "Nf3");
    let mut once = game(START);
    play(&mut once, "Nf3");
    assert_eq!(g.position_key(), once.position_key());
    assert_eq!(once.rule_state_key(), "");
    let key = g.rule_state_key();
    assert!(key.starts_with(" h"), "{key}");
    // Another way to the same board and the same repetitions remembers other positions.
    let mut other = game(START);
    for m in ["Nc3", "Nc6", "Nb1", "Nb8", "Nf3"] {
        play(&mut other, m);
    }
    assert_ne!(other.rule_state_key(), key);
    // A pawn move forgets them all.
    play(&mut g, "e6");
    assert_eq!(g.rule_state_key(), "");
}

/// A copy of a game carries the network's hidden values of its current position only (a game of thousands of
/// plies copied for each position annotated took memory growing with the square of its length): it evaluates as
/// the original does, also after taking back moves before the position it was copied at and playing others.
#[test]
fn a_copy_evaluates_as_the_original_before_and_after_its_first_position() {
    let fresh = |g: &Chess| Chess::from_fen(&g.to_fen()).expect("a FEN").evaluate();
    let mut rng = crate::matchplay::Rng(0x5eed_acc5);
    let mut g = game(START);
    let mut moves = Vec::new();
    for ply in 0..60 {
        g.generate_moves(&mut moves);
        if moves.is_empty() {
            break;
        }
        let m = moves[(rng.next_u64() % moves.len() as u64) as usize];
        g.make(m);
        if ply % 2 == 0 {
            let _ = g.evaluate_in_search();
        }
        let mut copy = g.clone();
        assert_eq!(copy.evaluate_in_search(), fresh(&g), "ply {ply}");
        // Back before the copy's first position, and forward again on another move.
        let back = (rng.next_u64() % 4) as usize + 1;
        for _ in 0..back.min(copy.plies()) {
            copy.unmake();
            assert_eq!(copy.evaluate_in_search(), fresh(&copy), "ply {ply}, taken back");
        }
        copy.generate_moves(&mut moves);
        if let Some(&other) = moves.first() {
            copy.make(other);
            assert_eq!(copy.evaluate_in_search(), fresh(&copy), "ply {ply}, another move");
            assert_eq!(copy.evaluate(), fresh(&copy), "ply {ply}, outside the search");
        }
    }
}
