//! Rules tests: every piece's movement, the palace, the river, the flying general, the end of the game,
//! repetition, notations, hashing and the evaluation's symmetry.

use super::*;
use crate::game::Outcome;

fn game(fen: &str) -> Xiangqi {
    Xiangqi::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

/// Every legal move in coordinates, sorted.
fn moves(g: &Xiangqi) -> Vec<String> {
    let mut v: Vec<String> = g.legal_moves().into_iter().map(Xiangqi::move_to_coord).collect();
    v.sort();
    v
}

/// The destinations (sorted) of the piece on `point` (`e4`).
fn from(g: &Xiangqi, point: &str) -> Vec<String> {
    moves(g).into_iter().filter(|m| m.starts_with(point)).map(|m| m[2..].to_string()).collect()
}

fn play(g: &mut Xiangqi, text: &str) {
    let m = g.parse_move(text).unwrap_or_else(|e| panic!("{}: {e}", g.to_fen()));
    g.make(m);
}

/// Tiny xorshift for reproducible random play.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn start_position() {
    let g = Xiangqi::start();
    assert_eq!(g.to_fen(), START_FEN);
    assert_eq!(g.side_to_move(), Side::First);
    assert_eq!(Xiangqi::side_name(Side::First), "red");
    assert_eq!(Xiangqi::side_name(Side::Second), "black");
    assert_eq!(g.legal_moves().len(), 44);
    assert_eq!(g.hash(), g.hash_from_scratch());
    assert!(!g.in_check());
    assert_eq!(g.piece_at(4, 0), Some('K'));
    assert_eq!(g.piece_at(1, 7), Some('c'));
    assert_eq!(g.piece_at(4, 4), None);
    // Symmetric start: the side to move has only the tempo.
    assert_eq!(g.evaluate(), eval::evaluate(&g.board, 0));
    let mut noisy = vec![Move::default()];
    g.generate_noisy(&mut noisy);
    // The two cannons can take the horses behind the black cannons' screens.
    assert_eq!(noisy.iter().map(|&m| Xiangqi::move_to_coord(m)).collect::<Vec<_>>(), ["b2b9", "h2h9"]);
}

#[test]
fn flying_general() {
    // The red general may not step onto the black general's open file.
    let g = game("4k4/9/9/9/9/9/9/9/9/3K5 w");
    assert_eq!(moves(&g), ["d0d1"]);
    // A horse between the generals is pinned to its file: it cannot move at all.
    let g = game("4k4/9/9/9/9/4N4/9/9/9/4K4 w");
    assert_eq!(from(&g, "e4"), Vec::<String>::new());
    assert_eq!(moves(&g), ["e0d0", "e0e1", "e0f0"]);
    // Generals facing with the other side to move is not a position.
    let err = Xiangqi::from_fen("4k4/9/9/9/9/9/9/9/9/4K4 w").unwrap_err();
    assert!(err.message.contains("face"), "{err}");
    // The advisor between the generals may not leave the file.
    let g = game("4k4/9/9/9/9/9/9/9/4A4/4K4 w");
    assert_eq!(moves(&g), ["e0d0", "e0f0"]);
}

#[test]
fn horse_leg() {
    // Horse on e4; a red soldier on e3 blocks the two jumps downwards.
    let g = game("3k5/9/9/9/9/4N4/4P4/9/9/5K3 w");
    assert_eq!(from(&g, "e4"), ["c3", "c5", "d6", "f6", "g3", "g5"]);
    // A horse on d7 checks the general on e9 through its own leg d8; a piece on e8 does not block it.
    let g = game("4k4/4r4/3N5/9/9/9/9/9/9/5K3 b");
    assert!(g.in_check());
    let g = game("4k4/3r5/3N5/9/9/9/9/9/9/5K3 b");
    assert!(!g.in_check());
    // Moving that leg away uncovers the check: the chariot on d8 may only take the horse.
    assert_eq!(from(&g, "d8"), ["d7"]);
}

#[test]
fn elephant_eye_and_river() {
    // Elephant on c4: e2 is blocked at the eye d3; a6 and e6 are across the river.
    let g = game("3k5/9/9/9/9/2B6/3P5/9/9/4K4 w");
    assert_eq!(from(&g, "c4"), ["a2"]);
    let g = game("3k5/9/9/9/9/2B6/9/9/9/4K4 w");
    assert_eq!(from(&g, "c4"), ["a2", "e2"]);
    // A black elephant on c5 stays on its side too.
    let g = game("3k5/9/9/9/2b6/9/9/9/9/4K4 b");
    assert_eq!(from(&g, "c5"), ["a7", "e7"]);
    // An elephant off its seven points is not a position.
    let err = Xiangqi::from_fen("3k5/9/9/9/9/3B5/9/9/9/4K4 w").unwrap_err();
    assert_eq!(err.token, "B");
}

#[test]
fn cannon_screens() {
    // Cannon on b2: quiet moves up to the screen on b5, one capture beyond it (b8), none of the screen.
    let g = game("3k5/1r7/9/9/1p7/9/9/1C7/9/4K4 w");
    assert_eq!(from(&g, "b2"), ["a2", "b0", "b1", "b3", "b4", "b8", "c2", "d2", "e2", "f2", "g2", "h2", "i2"]);
    // A cannon checks through exactly one screen, of either colour.
    assert!(game("3k5/9/9/9/3p5/9/9/3C5/9/4K4 b").in_check());
    assert!(game("3k5/9/9/9/3P5/9/9/3C5/9/4K4 b").in_check());
    assert!(!game("3k5/9/3r5/9/3P5/9/9/3C5/9/4K4 b").in_check());
    assert!(!game("3k5/9/9/9/9/9/9/3C5/9/5K3 b").in_check());
    // With no screen between them, no black piece may step onto the file: the horse may not go to d7 or d5.
    let g = game("3k5/9/9/1n7/9/9/9/3C5/9/5K3 b");
    assert_eq!(from(&g, "b6"), ["a4", "a8", "c4", "c8"]);
    assert_eq!(from(&g, "d9"), ["d8", "e9"]);
}

#[test]
fn palace() {
    // General on d2 (palace corner): d1 and e2 only.
    let g = game("5k3/9/9/9/9/9/9/3K5/9/9 w");
    assert_eq!(from(&g, "d2"), ["d1", "e2"]);
    // Advisor on e1: the four palace corners; advisor on d2: only back to the centre.
    let g = game("4k4/9/9/9/9/9/9/9/4A4/3K5 w");
    assert_eq!(from(&g, "e1"), ["d2", "f0", "f2"]);
    let g = game("4k4/9/9/9/9/9/9/3A5/9/5K3 w");
    assert_eq!(from(&g, "d2"), ["e1"]);
    let err = Xiangqi::from_fen("4k4/9/9/9/9/9/9/9/9/2K6 w").unwrap_err();
    assert_eq!(err.token, "K");
    assert!(err.message.contains("C0"), "{err}");
}

#[test]
fn soldiers_before_and_after_the_river() {
    let g = game("3k5/9/9/9/9/9/4P4/9/9/5K3 w");
    assert_eq!(from(&g, "e3"), ["e4"]);
    let g = game("3k5/9/9/9/4P4/9/9/9/9/5K3 w");
    assert_eq!(from(&g, "e5"), ["d5", "e6", "f5"]);
    // On the last rank only sideways.
    let g = game("P2k5/9/9/9/9/9/9/9/9/5K3 w");
    assert_eq!(from(&g, "a9"), ["b9"]);
    // Black soldiers move down.
    let g = game("3k5/9/9/4p4/9/9/9/9/9/5K3 b");
    assert_eq!(from(&g, "e6"), ["e5"]);
    let g = game("3k5/9/9/9/9/4p4/9/9/9/5K3 b");
    assert_eq!(from(&g, "e4"), ["d4", "e3", "f4"]);
    // A soldier behind its start rank is not a position.
    assert_eq!(Xiangqi::from_fen("3k5/9/9/9/9/9/9/4P4/9/5K3 w").unwrap_err().token, "P");
}

#[test]
fn stalemate_loses() {
    // Black's general has no move (d8 is covered by the chariot, e9 faces the red general) and is not in
    // check: Black loses.
    let g = game("3k5/R8/9/9/9/9/9/9/9/4K4 b");
    assert!(!g.in_check());
    assert!(g.legal_moves().is_empty());
    assert_eq!(g.outcome(), Some(GameEnd::win(Side::First, "no legal move")));
    // Mate is a loss too.
    let g = game("3k5/R8/3R5/9/9/9/9/9/9/4K4 b");
    assert!(g.in_check());
    assert_eq!(g.outcome(), Some(GameEnd::win(Side::First, "no legal move")));
}

#[test]
fn perpetual_check_loses() {
    let mut g = game("4k4/9/9/9/9/9/9/9/R8/3K5 w");
    play(&mut g, "a1-a9");
    assert!(g.in_check());
    let cycle = ["e9-e8", "a9-a8", "e8-e9", "a8-a9"];
    for m in cycle {
        assert_eq!(g.rule_end(100), None);
        play(&mut g, m);
    }
    // The position after the first check is back, Black to move: inside the search that decides; in the
    // game it takes a third occurrence.
    assert_eq!(g.rule_end(4), Some(GameEnd::win(Side::Second, "perpetual check")));
    assert_eq!(g.outcome(), None);
    for m in cycle {
        play(&mut g, m);
    }
    assert_eq!(g.outcome(), Some(GameEnd::win(Side::Second, "perpetual check")));
    // One move earlier the checking side is to move, and it is the one that loses.
    g.unmake();
    assert_eq!(g.side_to_move(), Side::First);
    assert_eq!(g.rule_end(100), Some(GameEnd::win(Side::Second, "perpetual check")));
}

#[test]
fn repetition_without_checks_draws() {
    let mut g = game("4k4/9/9/9/9/9/9/9/9/R2K5 w");
    let cycle = ["a0-a1", "e9-e8", "a1-a0", "e8-e9"];
    for m in cycle {
        play(&mut g, m);
    }
    assert_eq!(g.rule_end(4), Some(GameEnd::draw("repetition")));
    assert_eq!(g.rule_end(3), None);
    for m in cycle {
        play(&mut g, m);
    }
    assert_eq!(g.outcome(), Some(GameEnd::draw("repetition")));
    assert!(matches!(g.outcome(), Some(GameEnd { outcome: Outcome::Draw, .. })));
}

#[test]
fn sixty_move_rule() {
    let mut g = game("4k4/9/9/9/9/9/9/9/9/R2K5 w - - 118 70");
    assert_eq!(g.reversible_plies(), 118);
    play(&mut g, "a0-a1");
    assert_eq!(g.rule_end(0), None);
    play(&mut g, "e9-e8");
    assert_eq!(g.reversible_plies(), 120);
    assert_eq!(g.rule_end(0), Some(GameEnd::draw("60-move rule")));
    assert_eq!(g.to_fen(), "9/4k4/9/9/9/9/9/9/R8/3K5 w - - 120 71");
    // A capture resets the counter.
    let mut g = game("4k4/9/9/9/9/9/9/9/p8/R2K5 w - - 119 70");
    play(&mut g, "a0-a1");
    assert_eq!(g.reversible_plies(), 0);
    assert_eq!(g.rule_end(0), None);
}

/// Found by an audit: a mate on the 120th quiet ply was scored a draw by the 60-move rule (Fairy-Stockfish
/// reads it as mate in one).
#[test]
fn a_mate_on_the_last_ply_of_the_sixty_moves_is_a_mate() {
    let mut g = game("3k5/9/9/9/9/9/9/9/4R4/4K4 w - - 119 1");
    play(&mut g, "e1-d1");
    assert_eq!(g.reversible_plies(), 120);
    assert_eq!(g.rule_end(0), None);
    assert_eq!(g.outcome().map(|e| e.outcome), Some(Outcome::Win(crate::game::Side::First)));
    // The search finds it so.
    use crate::search::{Limits, SearchOptions, TranspositionTable, search};
    let tt = std::sync::Arc::new(TranspositionTable::new(1));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let g = game("3k5/9/9/9/9/9/9/9/4R4/4K4 w - - 119 1");
    let done = search(&g, &Limits::depth(3), &SearchOptions::default(), &tt, &stop, &mut |_| {});
    assert_eq!(done.lines[0].score, crate::game::Score::Mate(1), "{:?}", done.lines[0]);
}

#[test]
fn fen_round_trips_and_variants() {
    for fen in [
        START_FEN,
        "r1ba1a3/4kn3/2n1b4/pNp1p1p1p/4c4/6P2/P1P2R2P/1CcC5/9/2BAKAB2 w - - 0 1",
        "1cbak4/9/n2a5/2p1p3p/5cp2/2n2N3/6PCP/3AB4/2C6/3A1K1N1 w - - 0 1",
        "5a3/3k5/3aR4/9/5r3/5n3/9/3A1A3/5K3/2BC2B2 b - - 7 31",
    ] {
        assert_eq!(game(fen).to_fen(), fen);
    }
    // Side and counters optional; `r` for Red; H and E letters (Qianhong).
    let a = game("rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR r");
    assert_eq!(a.to_fen(), START_FEN);
    assert_eq!(game("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR").to_fen(), START_FEN);
    assert_eq!(
        a.to_fen_with(Letters::Qianhong),
        "rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR w - - 0 1"
    );
    let mut g = Xiangqi::start();
    play(&mut g, "h2-e2");
    assert_eq!(g.to_fen(), "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1");
    play(&mut g, "h9-g7");
    assert_eq!(g.to_fen(), "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR w - - 2 2");
    let mut again = game(&g.to_fen());
    assert_eq!(again.hash(), g.hash());
    again.make(again.parse_move("e2e6").unwrap());
    assert_eq!(again.reversible_plies(), 0);
}

#[test]
fn fen_errors_name_the_token() {
    let cases: &[(&str, &str, &str)] = &[
        ("", "", "empty"),
        (
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/RNBAKABNR w",
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/RNBAKABNR",
            "10 ranks",
        ),
        ("rnbakabnr1/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", "rnbakabnr1", "more than 9"),
        ("rnbakabn/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", "rnbakabn", "8 points"),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5X1/9/RNBAKABNR w", "X", "unknown piece letter"),
        (
            "rnba1abnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w",
            "rnba1abnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR",
            "black general is missing",
        ),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR x", "x", "side to move"),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - z 1", "z", "counter"),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 9", "9", "unexpected"),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/R8/RNBAKABNR w", "R", "too many red chariots"),
        ("4k4/9/9/9/9/9/9/9/9/3KA4 w", "A", "advisor cannot stand on E0"),
        ("3k5/9/9/9/9/9/9/9/9/3R1K3 w", "3k5/9/9/9/9/9/9/9/9/3R1K3", "in check"),
    ];
    for (fen, token, message) in cases {
        let err = Xiangqi::from_fen(fen).err().unwrap_or_else(|| panic!("{fen} should not read"));
        assert_eq!(&err.token, token, "{fen}: {err}");
        assert!(err.message.contains(message), "{fen}: {err}");
    }
    assert!(Xiangqi::parse_position(START_FEN, Some("pgn")).is_err());
    assert!(Xiangqi::start().format_position(Some("pgn")).is_err());
}

#[test]
fn move_notations() {
    let g = Xiangqi::start();
    let m = g.parse_move("H2-E2").unwrap();
    for text in ["h2-e2", "h2e2", "H2E2", " H2-e2 "] {
        assert_eq!(g.parse_move(text), Ok(m), "{text}");
    }
    assert_eq!(g.format_move(m), "H2-E2");
    assert_eq!(g.format_move_as(m, "iccs").unwrap(), "H2-E2");
    assert_eq!(g.format_move_as(m, "coord").unwrap(), "h2e2");
    assert!(g.format_move_as(m, "wxf").is_err());
    assert_eq!(m.from_point(), (7, 2));
    assert_eq!(m.to_point(), (4, 2));
    assert_ne!(Xiangqi::move_key(m), 0);
    for (text, token, message) in [
        ("h2-h8", "h2-h8", "illegal"),
        ("e5-e6", "e5-e6", "no red piece on E5"),
        ("a9-a8", "a9-a8", "no red piece"),
        ("z2-e2", "z2-e2", "file a-i"),
        ("h2-e2x", "h2-e2x", "expected a move"),
        ("h2", "h2", "expected a move"),
        ("", "", "expected a move"),
    ] {
        let err = g.parse_move(text).unwrap_err();
        assert_eq!(err.token, token, "{text}: {err}");
        assert!(err.message.contains(message), "{text}: {err}");
    }
}

#[test]
fn random_text_never_panics() {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    let alphabet: Vec<char> = "rnbakcpRNBAKCPheHE0123456789/ -wbrxé中".chars().collect();
    let g = Xiangqi::start();
    for _ in 0..20000 {
        let len = rng.below(70);
        let text: String = (0..len).map(|_| alphabet[rng.below(alphabet.len())]).collect();
        let _ = Xiangqi::from_fen(&text);
        let _ = g.parse_move(&text);
        let _ = g.parse_move(&text.chars().take(5).collect::<String>());
    }
    // Mutations of a real FEN.
    let base: Vec<char> = START_FEN.chars().collect();
    for _ in 0..20000 {
        let mut t = base.clone();
        for _ in 0..1 + rng.below(3) {
            let i = rng.below(t.len());
            t[i] = alphabet[rng.below(alphabet.len())];
        }
        let text: String = t.into_iter().collect();
        if let Ok(p) = Xiangqi::from_fen(&text) {
            // Whatever reads must write back and read again to the same position.
            assert_eq!(game(&p.to_fen()).to_fen(), p.to_fen());
            let _ = p.legal_moves();
        }
    }
}

#[test]
fn incremental_state_matches_scratch_over_random_play() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut noisy = Vec::new();
    for _ in 0..30 {
        let mut g = Xiangqi::start();
        let root = g.to_fen();
        let mut made = 0;
        for _ in 0..200 {
            let ms = g.legal_moves();
            if ms.is_empty() || g.rule_end(0).is_some() {
                break;
            }
            // Captures and the generated noisy moves agree.
            g.generate_noisy(&mut noisy);
            let caps: Vec<Move> = ms.iter().copied().filter(|&m| g.is_noisy(m)).collect();
            assert_eq!(noisy, caps, "{}", g.to_fen());
            let m = ms[rng.below(ms.len())];
            g.make(m);
            made += 1;
            assert_eq!(g.hash(), g.hash_from_scratch(), "{}", g.to_fen());
            assert!(g.pst_is_consistent(), "{}", g.to_fen());
            assert_eq!(g.in_check(), g.board.in_check());
            if rng.below(5) == 0 && g.make_null() {
                assert_eq!(g.hash(), g.hash_from_scratch());
                g.unmake();
            }
        }
        for _ in 0..made {
            g.unmake();
        }
        assert_eq!(g.to_fen(), root);
        assert_eq!(g.hash(), Xiangqi::start().hash());
        assert_eq!(g.plies(), 0);
    }
}

#[test]
fn null_move_is_refused_when_unsafe() {
    // In check.
    let mut g = game("4k4/9/9/9/9/9/9/9/9/R2K5 w");
    play(&mut g, "a0-a9");
    assert!(g.in_check());
    assert!(!g.make_null());
    // Only defenders and soldiers left for the side to move.
    let mut g = game("3ak4/9/9/9/9/9/9/9/4A4/R2K5 b");
    assert!(!g.make_null());
    assert_eq!(g.plies(), 0);
    let mut g = Xiangqi::start();
    let h = g.hash();
    assert!(g.make_null());
    assert_eq!(g.side_to_move(), Side::Second);
    g.unmake();
    assert_eq!((g.hash(), g.side_to_move()), (h, Side::First));
}

/// The position seen from the other side: colours swapped, ranks reversed, the other side to move.
fn mirrored(g: &Xiangqi) -> Xiangqi {
    let fen = g.to_fen();
    let mut fields = fen.split(' ');
    let placement = fields.next().unwrap_or_default();
    let side = fields.next().unwrap_or("w");
    let rows: Vec<String> = placement
        .split('/')
        .rev()
        .map(|r| {
            r.chars()
                .map(|c| if c.is_ascii_uppercase() { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() })
                .collect()
        })
        .collect();
    game(&format!("{} {}", rows.join("/"), if side == "w" { "b" } else { "w" }))
}

/// The position reflected left to right.
fn reflected(g: &Xiangqi) -> Xiangqi {
    let fen = g.to_fen();
    let (placement, rest) = fen.split_once(' ').unwrap_or((&fen, ""));
    let rows: Vec<String> = placement.split('/').map(|r| r.chars().rev().collect()).collect();
    game(&format!("{} {rest}", rows.join("/")))
}

#[test]
fn evaluation_is_symmetric() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut seen = 0;
    for _ in 0..20 {
        let mut g = Xiangqi::start();
        for _ in 0..120 {
            let ms = g.legal_moves();
            if ms.is_empty() {
                break;
            }
            g.make(ms[rng.below(ms.len())]);
            let e = g.evaluate();
            assert_eq!(mirrored(&g).evaluate(), e, "{}", g.to_fen());
            assert_eq!(reflected(&g).evaluate(), e, "{}", g.to_fen());
            seen += 1;
        }
    }
    assert!(seen > 1000);
    // Material counts: a chariot up is worth roughly a chariot (its learned endgame value, above its
    // middlegame one, plus its mobility on the empty board).
    let up = game("4k4/9/9/9/9/9/9/9/9/R2K5 w").evaluate();
    assert!((800..1500).contains(&up), "{up}");
    let down = game("4k4/9/9/9/9/9/9/9/9/R2K5 b").evaluate();
    assert!((-1500..-800).contains(&down), "{down}");
}

#[test]
fn the_cache_key_ignores_the_move_counters() {
    let a = Xiangqi::from_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1").expect("fen");
    let b = Xiangqi::from_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 7 30").expect("fen");
    assert_ne!(a.to_fen(), b.to_fen());
    assert_eq!(a.position_key(), b.position_key());
    assert_eq!(a.position_key(), "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w");
}

mod records {
    use crate::game::{Game, GameRecord, RecordError};
    use crate::games::xiangqi::Xiangqi;

    const PGN: &str = include_str!("../../../tests/data/records/xiangqi.pgn");
    const MOVES: &str = include_str!("../../../tests/data/records/xiangqi_moves.txt");

    fn parse(text: &str, format: Option<&str>) -> Vec<Result<GameRecord<Xiangqi>, RecordError>> {
        Xiangqi::parse_records(text, format, &mut crate::game::RecordBudget::new(10_000, 1_000_000)).unwrap()
    }

    #[test]
    fn fixtures_read() {
        let games = parse(PGN, None);
        assert_eq!(games.len(), 1);
        let rec = games[0].as_ref().unwrap();
        assert!(rec.moves.len() >= 40);
        assert!(rec.tags.contains(&("Format".to_string(), "ICCS".to_string())));
        let games = parse(MOVES, None);
        assert_eq!(games.len(), 2);
        let a = games[0].as_ref().unwrap();
        assert_ne!(a.start.to_fen(), Xiangqi::start().to_fen());
        assert!(a.moves.len() >= 20);
        let b = games[1].as_ref().unwrap();
        assert_eq!(b.start.to_fen(), Xiangqi::start().to_fen());
        assert_eq!(b.moves[..], rec.moves[..b.moves.len()]);
        assert_eq!(Xiangqi::EXPORT_FORMAT, None);
    }

    #[test]
    fn formats_results_and_detection() {
        // No FEN line: from the start position; coordinates and ICCS mixed, numbers and a result allowed.
        let games = parse("h2e2 h9g7\n1. H0-G2 i9h9 1-0\n", None);
        let g = games[0].as_ref().unwrap();
        assert_eq!((g.moves.len(), g.result.as_deref()), (4, Some("1-0")));
        for r in ["1-0", "0-1", "1/2-1/2", "*"] {
            let g = parse(&format!("[Event \"x\"]\n1. H2-E2 H9-G7 {r}"), None);
            assert_eq!(g[0].as_ref().unwrap().result.as_deref(), Some(r));
        }
        let g = parse("1. h2e2 h9g7 *", None);
        assert_eq!(g[0].as_ref().unwrap().moves.len(), 2);
        let fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1";
        let g = parse(&format!("[Format \"ICCS\"]\n[FEN \"{fen}\"]\n1... H7-E7 2. H2-E2 *"), None);
        assert_eq!(g[0].as_ref().unwrap().moves.len(), 2);
        assert!(Xiangqi::parse_records("", Some("wxf"), &mut crate::game::RecordBudget::new(10_000, 1_000_000)).is_err());
    }

    #[test]
    fn malformed_games_are_reported() {
        let text = "[Event \"1\"]\n1. H2-E2 H9-G7\n2. E2-E9 *\n\n[Format \"WXF\"]\n1. C2.5 *\n\n[FEN \"9/9 w\"]\n*\n\n1. B2-B9 *";
        let games = parse(text, None);
        assert_eq!(games.len(), 4);
        let e = games[0].as_ref().unwrap_err();
        assert_eq!((e.index, e.line, e.token.as_str()), (0, 3, "E2-E9"));
        assert!(e.message.contains("illegal in this position"), "{e}");
        let e = games[1].as_ref().unwrap_err();
        assert_eq!((e.line, e.token.as_str()), (5, "WXF"));
        assert_eq!(games[2].as_ref().unwrap_err().line, 8);
        assert_eq!(games[3].as_ref().unwrap().moves.len(), 1);
        let text = "h2e2 h9g7\nh0g2 e3e5\n\nzz 1-0\n\nh2e2 * h9g7\n";
        let games = parse(text, Some("moves"));
        let e = games[0].as_ref().unwrap_err();
        assert_eq!((e.line, e.token.as_str()), (2, "e3e5"));
        assert!(e.message.contains("2... e3e5") && e.message.contains("illegal in this position"), "{e}");
        let e = games[1].as_ref().unwrap_err();
        assert_eq!((e.index, e.line, e.token.as_str()), (1, 4, "zz"));
        let e = games[2].as_ref().unwrap_err();
        assert_eq!((e.line, e.token.as_str()), (6, "h9g7"));
    }

    #[test]
    fn reading_stops_at_the_budget() {
        use crate::game::budget_check::check;
        let good = "[Event \"x\"]\n\n1. h2e2 h9g7 2. h0g2 i9h9 *\n";
        let bad = "[Event \"x\"]\n\n1. h2e2 h9g7 2. h0g2 a0a9 *\n";
        check::<Xiangqi>("pgn", good, bad, 4, "\n");
        check::<Xiangqi>("moves", "h2e2 h9g7\nh0g2 i9h9\n", "h2e2 h9g7\nh0g2 a0a9\n", 4, "\n");
    }
}

#[test]
fn the_draw_rules_memory_keys_the_cache_beside_the_position() {
    let mut g = Xiangqi::start();
    assert_eq!(g.rule_state_key(), "");
    for m in ["h2e2", "h9g7", "e2h2", "g7h9", "h2e2"] {
        let mv = g.parse_move(m).unwrap_or_else(|e| panic!("{m}: {e}"));
        g.make(mv);
    }
    // The cannon's move again, with the start position twice behind it: remembered beside the board.
    let mut once = Xiangqi::start();
    let mv = once.parse_move("h2e2").expect("legal");
    once.make(mv);
    assert_eq!(g.position_key(), once.position_key());
    assert_eq!(once.rule_state_key(), "");
    assert!(g.rule_state_key().starts_with(" h"), "{}", g.rule_state_key());
}
