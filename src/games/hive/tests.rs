//! Rules tests: perft against Mzinga's tables, each rule on positions of its own, notation round trips,
//! random games checking the invariants, and fuzzed parsers.

use super::board::{NO_PIECE, bug_of, cell};
use super::*;
use crate::game::Outcome;

fn game(text: &str) -> Hive {
    Hive::from_game_string(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn perft_of(kind: &str, depth: u32) -> u64 {
    game(kind).perft(depth)
}

/// The legal MoveStrings of `g` that move `piece` (by name), sorted.
fn moves_of(g: &Hive, piece: &str) -> Vec<String> {
    let mut v: Vec<String> =
        g.legal_moves().into_iter().map(|m| g.move_string(m)).filter(|s| s.split(' ').next() == Some(piece)).collect();
    v.sort();
    v
}

fn err_of(g: &Hive, text: &str) -> String {
    match g.parse_move(text) {
        Ok(m) => panic!("{text} accepted as {m:?} in {}", g.game_string()),
        Err(e) => e.message,
    }
}

/// Mzinga's published perft table (depth 1 to 7, every game type).
const PERFT: [(&str, [u64; 7]); 8] = [
    ("Base", [4, 96, 1440, 21600, 516240, 12219480, 181641900]),
    ("Base+M", [5, 150, 2610, 45414, 1252800, 34233432, 527164524]),
    ("Base+L", [5, 150, 2610, 45414, 1252800, 34233672, 529630188]),
    ("Base+P", [5, 150, 2610, 45414, 1255932, 34395984, 532753872]),
    ("Base+ML", [6, 216, 4320, 86400, 2725920, 85201200, 1357078404]),
    ("Base+MP", [6, 216, 4320, 86400, 2730888, 85492248, 1363837116]),
    ("Base+LP", [6, 216, 4320, 86400, 2730240, 85457136, 1366372440]),
    ("Base+MLP", [7, 294, 6678, 151686, 5427108, 192353904, 3151035948]),
];

#[test]
fn perft_to_depth_5() {
    for (kind, counts) in PERFT {
        for (i, &n) in counts.iter().take(5).enumerate() {
            assert_eq!(perft_of(kind, i as u32 + 1), n, "{kind} depth {}", i + 1);
        }
    }
}

/// About 3 s in the test profile (1.8 s of CPU).
#[test]
fn perft_depth_6() {
    for (kind, counts) in PERFT {
        assert_eq!(perft_of(kind, 6), counts[5], "{kind} depth 6");
    }
}

#[test]
#[ignore = "about two and a half minutes of CPU in release mode; run with --release --include-ignored"]
fn perft_depth_7() {
    for (kind, counts) in PERFT {
        assert_eq!(perft_of(kind, 7), counts[6], "{kind} depth 7");
    }
}

#[test]
fn perft_matches_generic() {
    for text in [
        "Base+MLP;InProgress;White[4];wG1;bP wG1-;wQ \\wG1;bQ bP\\;wA1 /wQ;bA1 bQ\\",
        "Base;InProgress;White[4];wG1;bG1 wG1-;wQ -wG1;bQ bG1-;wB1 wQ/;bB1 bQ-",
    ] {
        let mut g = game(text);
        for d in 1..=3 {
            assert_eq!(g.perft(d), crate::game::perft_generic(&mut g, d), "{text} depth {d}");
        }
    }
}

#[test]
fn bench_positions_parse() {
    for text in Hive::BENCH_POSITIONS {
        let g = game(text);
        assert_eq!(game(&g.game_string()).game_string(), g.game_string());
        assert!(g.rule_end(0).is_none());
    }
}

#[test]
fn start_positions() {
    let g = Hive::start();
    assert_eq!(g.game_string(), "Base+MLP;NotStarted;White[1]");
    assert_eq!(g.side_to_move(), Side::First);
    assert_eq!(Hive::side_name(Side::First), "white");
    assert_eq!(Hive::side_name(Side::Second), "black");
    let base = Hive::new(GameType::BASE);
    assert_eq!(base.game_string(), "Base;NotStarted;White[1]");
    assert_eq!(base.valid_moves_string(), "wS1;wB1;wG1;wA1");
    assert_eq!(game("Base+MLP;NotStarted;White[1]").game_string(), "Base+MLP;NotStarted;White[1]");
    for t in GameType::all() {
        assert_eq!(GameType::parse(&t.name()), Some(t));
        assert_eq!(game(&t.name()).game_type(), t);
    }
    assert_eq!(GameType::parse("base+mlp"), Some(GameType::MLP));
    // Any order of the letters, as the spec's "any combination" reads (an audit found `Base+PLM` refused).
    assert_eq!(GameType::parse("Base+PLM"), Some(GameType::MLP));
    assert_eq!(GameType::parse("base+lm").map(GameType::name).as_deref(), Some("Base+ML"));
    for bad in ["Base+", "Base+MM", "Base+X", "Base+M+L", "Bases", "+M", ""] {
        assert!(GameType::parse(bad).is_none(), "{bad}");
    }
}

#[test]
fn queen_timing() {
    let g = Hive::new(GameType::BASE);
    assert_eq!(err_of(&g, "wQ"), "You can't play your Queen Bee on your first turn.");
    let g = game("Base;InProgress;Black[1];wS1");
    assert_eq!(err_of(&g, "bQ wS1-"), "You can't play your Queen Bee on your first turn.");
    // Fourth turn without the Queen: only Queen placements.
    let g = game("Base;InProgress;White[4];wS1;bS1 wS1-;wG1 -wS1;bG1 bS1-;wA1 -wG1;bA1 bG1-");
    let all = g.legal_moves();
    assert!(!all.is_empty());
    assert!(all.iter().all(|m| bug_of(m.piece) == Bug::Queen), "{}", g.valid_moves_string());
    assert_eq!(err_of(&g, "wS2 -wA1"), "You must play your Queen Bee on or before your fourth turn.");
    // Nothing moves before its own Queen is placed.
    let g = game("Base;InProgress;White[3];wS1;bS1 wS1-;wA1 -wS1;bA1 bS1-");
    assert_eq!(err_of(&g, "wA1 bA1-"), "You can't move a piece in play until you've played your Queen Bee.");
    assert!(moves_of(&g, "wA1").is_empty());
}

#[test]
fn placement_rules() {
    let g = game("Base;InProgress;White[2];wS1;bS1 wS1-");
    assert_eq!(
        err_of(&g, "wA2 -wS1"),
        "When there are multiple pieces of the same bug type, you must play the pieces in order."
    );
    // North-east of wS1 touches bS1.
    assert_eq!(err_of(&g, "wA1 wS1/"), "You can't move that piece there.");
    assert_eq!(err_of(&g, "wA1 bS1-"), "You can't move that piece there.");
    assert_eq!(err_of(&g, "wA1 wS1"), "You can't move there because a piece already exists at that position.");
    assert!(g.parse_move("wA1 -wS1").is_ok());
    // Three cells touch only White: west, north-west, south-west of wS1, times five bugs.
    assert_eq!(g.legal_moves().len(), 15);
    assert_eq!(err_of(&g, "bA1 -bS1"), "It's not that player's turn.");
    assert_eq!(err_of(&g, "wM -wS1"), "That piece is not enabled in this game.");
}

/// A line of six: wS1 wQ wG1 bG1 bQ bS1 (west to east), White to move.
const LINE: &str = "Base;InProgress;White[4];wG1;bG1 wG1-;wQ -wG1;bQ bG1-;wS1 -wQ;bS1 bQ-";

#[test]
fn spider_moves_exactly_three() {
    let g = game(LINE);
    assert_eq!(moves_of(&g, "wS1"), ["wS1 \\bG1", "wS1 wG1\\"]);
    // The Queen and wG1 hold the hive together.
    assert!(moves_of(&g, "wQ").is_empty());
    assert!(moves_of(&g, "wG1").is_empty());
    assert_eq!(err_of(&g, "wG1 \\wQ"), "You can't move that piece because it will break the hive.");
}

/// Two walks of the spider cross the same cell at different steps: a walk that reaches a cell first must
/// not cut off another walk through it (the position needs nine moves; perft from the start cannot see it).
const CROSSING_SPIDER: &str =
    "Base;InProgress;Black[5];wS1;bB1 -wS1;wB1 wS1\\;bS1 /bB1;wS2 /wB1;bG1 -bS1;wQ /wS2;bQ -bB1;wB2 -wQ";

#[test]
fn spider_walks_may_cross() {
    let g = game(CROSSING_SPIDER);
    assert_eq!(g.legal_moves().len(), 28);
    let spider = moves_of(&g, "bS1");
    assert!(spider.contains(&"bS1 -bG1".to_string()), "{spider:?}");
    assert!(spider.contains(&"bS1 /wB2".to_string()), "{spider:?}");
}

#[test]
fn grasshopper_and_ant() {
    // wG1 at the west end jumps the whole line; an ant goes anywhere around it.
    let g = game("Base;InProgress;White[4];wS1;bS1 wS1-;wQ -wS1;bQ bS1-;wG1 -wQ;bA1 bQ-");
    assert_eq!(moves_of(&g, "wG1"), ["wG1 bA1-"]);
    let g = game("Base;InProgress;White[4];wS1;bS1 wS1-;wQ -wS1;bQ bS1-;wA1 -wQ;bA1 bQ-");
    let ants = moves_of(&g, "wA1");
    // The perimeter of the other five pieces in a line has 14 cells, minus the ant's own.
    assert_eq!(ants.len(), 13, "{ants:?}");
}

#[test]
fn beetle_climbs_and_covers() {
    let mut g = game("Base;InProgress;White[4];wG1;bG1 wG1-;wQ -wG1;bQ bG1-;wB1 wQ/;bB1 bQ-");
    g.play_move_string("wB1 wG1").unwrap();
    g.play_move_string("bB1 bQ").unwrap();
    // wG1 is covered; the beetle on top moves although its cell holds the hive together.
    assert_eq!(err_of(&g, "wG1 -wQ"), "You can't move that piece because it has another piece on top of it.");
    let b = moves_of(&g, "wB1");
    assert_eq!(b.len(), 6, "{b:?}");
    assert!(b.contains(&"wB1 wQ".to_string()) && b.contains(&"wB1 bG1".to_string()));
    // Black's Queen is covered: the mosquito-less Base game leaves bQ with no move.
    g.play_move_string("wB1 bG1").unwrap();
    assert!(moves_of(&g, "bQ").is_empty());
    // Once the beetle leaves wG1 it is free again (but wG1 is still pinned in the line).
    assert_eq!(err_of(&g, "bG1 bB1-"), "You can't move that piece because it has another piece on top of it.");
}

#[test]
fn mosquito_as_queen() {
    let g = game("Base+M;InProgress;White[4];wG1;bM wG1-;wQ -wG1;bQ bM/;wM /wQ;bA1 bQ\\");
    let m = moves_of(&g, "wM");
    // wM touches wQ (Queen) only: one-step slides.
    assert_eq!(m.len(), 2, "{m:?}");
}

// Pieces by index: White 0..14, Black 14..28, in the order Q S1 S2 B1 B2 G1 G2 G3 A1 A2 A3 M L P.
const WQ: u8 = 0;
const WB1: u8 = 3;
const WG1: u8 = 5;
const WG2: u8 = 6;
const WA1: u8 = 8;
const WM: u8 = 11;
const WL: u8 = 12;
const WP: u8 = 13;
const BQ: u8 = 14;
const BB1: u8 = 17;
const BB2: u8 = 18;
const BG1: u8 = 19;
const BA1: u8 = 22;
const BA2: u8 = 23;
const BM: u8 = 25;
const BP: u8 = 27;

const BASE_P: GameType = GameType { mosquito: false, ladybug: false, pillbug: true };

fn raw(t: GameType, pieces: &[(u8, i32, i32)], turn: u32, last: u8) -> Hive {
    let mut b = Board::new(t);
    for &(p, q, r) in pieces {
        b.place_raw(p, cell(q, r));
    }
    b.set_state_raw(turn, last);
    Hive::from_board(b)
}

fn dests(g: &Hive, piece: u8) -> Vec<u16> {
    let mut v: Vec<u16> = g.legal_moves().into_iter().filter(|m| m.piece == piece).map(|m| m.to).collect();
    v.sort_unstable();
    v
}

fn sorted(mut v: Vec<u16>) -> Vec<u16> {
    v.sort_unstable();
    v
}

#[test]
fn beetle_gate_at_height() {
    // wB1 on bA1 at (0,0) wants to step east onto bA2 (1,0); the shared neighbours (1,-1) and (0,1) are
    // stacks of two: the gate is closed at height 1.
    let mut pieces =
        vec![(WQ, -1, 0), (BA1, 0, 0), (WB1, 0, 0), (BA2, 1, 0), (WG1, 1, -1), (BB1, 1, -1), (WG2, 0, 1), (BB2, 0, 1)];
    let g = raw(GameType::BASE, &pieces, 10, NO_PIECE);
    let d = dests(&g, WB1);
    assert!(!d.contains(&cell(1, 0)), "gate at height");
    assert!(d.contains(&cell(1, -1)) && d.contains(&cell(0, 1)) && d.contains(&cell(-1, 0)));
    // Lower one side of the gate and the beetle passes.
    pieces.pop();
    let g = raw(GameType::BASE, &pieces, 10, NO_PIECE);
    assert!(dests(&g, WB1).contains(&cell(1, 0)));
    // On the ground: a Queen between two pieces cannot squeeze through (freedom to move).
    // The hole at (1,-1) is ringed by (0,-1), (1,-2), (2,-2), (2,-1), (1,0) and the Queen.
    let ring = [(WQ, 0, 0), (WG1, 0, -1), (BQ, 1, -2), (BG1, 2, -2), (BA1, 2, -1), (WG2, 1, 0)];
    let g = raw(GameType::BASE, &ring, 10, NO_PIECE);
    assert_eq!(dests(&g, WQ), sorted(vec![cell(-1, 0), cell(0, 1)]));
}

#[test]
fn mosquito_rules() {
    // wM touches only bM: no move.
    let g = raw(GameType::MLP, &[(WQ, -1, 1), (WG1, -1, 0), (BM, 0, -1), (WM, 1, -2), (BQ, -1, -1)], 10, NO_PIECE);
    assert!(dests(&g, WM).is_empty());
    // wM touching a Beetle and a Grasshopper climbs and jumps.
    let g = raw(GameType::MLP, &[(WQ, 0, 1), (WM, 1, 0), (WB1, 2, 0), (BG1, 1, 1), (BQ, 2, 1)], 10, NO_PIECE);
    let d = dests(&g, WM);
    assert!(d.contains(&cell(2, 0)) && d.contains(&cell(1, 1)), "climbs like a beetle: {d:?}");
    assert!(d.contains(&cell(1, 2)), "jumps like a grasshopper over bG1: {d:?}");
    // On top of the hive it moves only as a Beetle: no jump over bG1.
    let g = raw(GameType::MLP, &[(WQ, 0, 0), (BA1, 1, 0), (WM, 1, 0), (BG1, 1, 1), (BQ, 2, 1)], 10, NO_PIECE);
    let d = dests(&g, WM);
    assert!(!d.contains(&cell(1, 2)), "no jump from the top: {d:?}");
    assert_eq!(d.len(), 6, "a beetle on top reaches all six neighbours: {d:?}");
}

#[test]
fn pillbug_throws_stun_and_pass() {
    // wP at (0,0) with wQ west and bQ east; nothing in either hand.
    let pieces = [(WQ, -1, 0), (WP, 0, 0), (BQ, 1, 0)];
    let mut g = raw(BASE_P, &pieces, 10, NO_PIECE);
    g.board.clear_hand_raw(0);
    g.board.clear_hand_raw(1);
    assert_eq!(dests(&g, BQ).len(), 4, "bQ can be thrown to the four free cells around wP");
    // The piece the opponent just moved may not be thrown.
    let mut g2 = raw(BASE_P, &pieces, 10, BQ);
    g2.board.clear_hand_raw(0);
    g2.board.clear_hand_raw(1);
    assert!(dests(&g2, BQ).is_empty());
    // Throw bQ: it may not move next turn, and Black, with nothing else, must pass.
    g.make(Move { piece: BQ, to: cell(0, -1) });
    assert_eq!(g.legal_moves(), vec![Move::PASS]);
    assert_eq!(g.parse_move("pass"), Ok(Move::PASS));
    g.make(Move::PASS);
    // The pass clears the stun: White may throw bQ again.
    assert_eq!(g.last_moved_piece(), None);
    assert!(!dests(&g, BQ).is_empty());
    let with_moves = g.clone();
    assert_eq!(err_of(&with_moves, "pass"), "You can't pass when you have valid moves.");
    // A Mosquito touching a Pillbug throws too; a stunned thrower does not.
    let g = raw(GameType::MLP, &[(WQ, -1, 0), (WM, 0, 0), (BP, 0, -1), (BQ, 1, 0)], 10, NO_PIECE);
    assert!(!dests(&g, BQ).is_empty(), "mosquito copying a pillbug throws");
    let g = raw(GameType::MLP, &[(WQ, -1, 0), (WM, 0, 0), (BP, 0, -1), (BQ, 1, 0)], 10, WM);
    assert!(dests(&g, BQ).is_empty(), "a thrown mosquito has no power next turn");
}

#[test]
fn ladybug_paths() {
    // wL at (-1,0) next to wQ (0,0) and bQ (1,0): two steps on top, then one down.
    let g = raw(GameType::MLP, &[(WL, -1, 0), (WQ, 0, 0), (BQ, 1, 0)], 10, NO_PIECE);
    let d = dests(&g, WL);
    // Only bQ's free neighbours: the second step must go onto bQ.
    let expect = sorted(vec![cell(1, -1), cell(2, -1), cell(2, 0), cell(1, 1), cell(0, 1)]);
    assert_eq!(d, expect);
    assert!(!d.contains(&cell(-1, 0)), "not back to its own cell");
}

#[test]
fn surrounded_queens() {
    // wQ (0,0) and bQ (1,0): fill every neighbour of both.
    let around = [(0, -1), (1, -1), (0, 1), (-1, 1), (-1, 0), (2, -1), (2, 0), (1, 1)];
    let fill = [WA1, 9, 10, WG1, WG2, BA1, BA2, 24];
    let mut pieces = vec![(WQ, 0, 0), (BQ, 1, 0)];
    for (i, &(q, r)) in around.iter().enumerate() {
        pieces.push((fill[i], q, r));
    }
    let g = raw(GameType::BASE, &pieces, 20, NO_PIECE);
    assert_eq!(g.rule_end(0).map(|e| e.outcome), Some(Outcome::Draw));
    assert_eq!(g.state_string(), "Draw");
    assert!(g.legal_moves().is_empty());
    // Only Black's Queen surrounded: White wins.
    let partial: Vec<_> = pieces.iter().copied().filter(|&(_, q, r)| (q, r) != (-1, 0)).collect();
    let g = raw(GameType::BASE, &partial, 20, NO_PIECE);
    assert_eq!(g.rule_end(0).map(|e| e.outcome), Some(Outcome::Win(Side::First)));
    assert_eq!(g.state_string(), "WhiteWins");
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
fn random_games_keep_invariants() {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    let mut draws = 0;
    let mut passes = 0;
    let mut wins = 0;
    let mut noisy_seen = 0;
    for game_no in 0..240 {
        let t = GameType::all()[game_no % 8];
        let mut g = Hive::new(t);
        let mut strings = Vec::new();
        for _ply in 0..160 {
            let moves = g.legal_moves();
            let mut generic = Vec::new();
            g.generate_moves(&mut generic);
            assert_eq!(moves, generic);
            assert_eq!(g.count_moves(), moves.len() as u64);
            // Quiescence's moves are exactly the legal moves that are noisy, in the generator's order.
            let mut noisy = Vec::new();
            g.generate_noisy(&mut noisy);
            let filtered: Vec<Move> = moves.iter().copied().filter(|&m| g.is_noisy(m)).collect();
            assert_eq!(noisy, filtered, "{}", g.game_string());
            noisy_seen += noisy.len();
            if let Some(end) = g.rule_end(0) {
                assert!(moves.is_empty());
                match end.outcome {
                    Outcome::Draw => draws += 1,
                    Outcome::Win(_) => wins += 1,
                }
                break;
            }
            assert!(!moves.is_empty(), "{}", g.game_string());
            // No duplicates; a pass only alone; the piece moved last never moves.
            let mut keys: Vec<u32> = moves.iter().map(|&m| Hive::move_key(m)).collect();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), moves.len(), "{}", g.game_string());
            if moves.contains(&Move::PASS) {
                assert_eq!(moves.len(), 1);
                passes += 1;
            }
            let last = g.board().last_moved();
            if last != NO_PIECE {
                assert!(moves.iter().all(|m| m.piece != last), "{}", g.game_string());
            }
            // Every move writes and reads back to itself.
            for &m in &moves {
                let s = g.move_string(m);
                assert_eq!(g.parse_move(&s), Ok(m), "{s} in {}", g.game_string());
                assert_eq!(g.parse_move(&s.to_ascii_lowercase()), Ok(m));
            }
            let m = moves[rng.below(moves.len())];
            strings.push(g.move_string(m));
            let before = g.hash();
            let pinned = g.board().pinned();
            g.make(m);
            assert!(g.board().hash_consistent());
            assert_eq!(g.board().pinned(), g.board().pinned_fresh(), "{}", g.game_string());
            g.unmake();
            assert_eq!(g.hash(), before);
            assert_eq!(g.board().pinned(), pinned, "{}", g.game_string());
            g.make(m);
        }
        // The GameString reads back to the same game.
        let text = g.game_string();
        let back = game(&text);
        assert_eq!(back.game_string(), text);
        assert_eq!(back.hash(), g.hash());
    }
    assert!(wins > 0, "some random games end");
    assert!(noisy_seen > 1000, "{noisy_seen} noisy moves compared");
    let _ = (draws, passes);
}

#[test]
fn parsers_never_panic() {
    let mut rng = Rng(0xDEAD_BEEF_CAFE_F00D);
    let alphabet: Vec<char> = "wbQSBGAMLP0123 -/\\;[]+BaseInProgressWhiteBlack\u{e9}\t".chars().collect();
    let g = game("Base+MLP;InProgress;White[3];wG1;bP wG1-;wQ \\wG1;bQ bP\\");
    for _ in 0..20000 {
        let n = rng.below(24);
        let s: String = (0..n).map(|_| alphabet[rng.below(alphabet.len())]).collect();
        let _ = g.parse_move(&s);
        let _ = Hive::from_game_string(&s);
        let _ = Hive::from_game_string(&format!("Base+MLP;InProgress;White[2];wG1;{s}"));
    }
}

mod records {
    use crate::game::Game;
    use crate::games::hive::Hive;

    const FIXTURE: &str = include_str!("../../../tests/data/records/hive.txt");

    #[test]
    fn fixture_reads() {
        let games = Hive::parse_records(FIXTURE, None, &mut crate::game::RecordBudget::new(10_000, 1_000_000)).unwrap();
        assert_eq!(games.len(), 2);
        for g in &games {
            let rec = g.as_ref().unwrap();
            let mut h = rec.start.clone();
            for &m in &rec.moves {
                h.make(m);
            }
            let line = FIXTURE.lines().nth(rec.line - 1).unwrap();
            assert_eq!(h.game_string(), line);
            assert!(rec.tags.is_empty());
        }
        assert_eq!(games[1].as_ref().unwrap().start.game_type().name(), "Base+MLP");
        assert_eq!(Hive::EXPORT_FORMAT, None);
        assert!(Hive::export_record(games[0].as_ref().unwrap(), &[]).is_none());
    }

    /// Found by an audit: a game drawn by threefold repetition, as `kibitz match` and UHP engines with the rule
    /// write it (`Draw` where the board alone says `InProgress`), could not be read back.
    #[test]
    fn a_draw_by_repetition_reads_back() {
        let drawn = "Base;Draw;White[7];wS1;bS1 wS1-;wQ -wS1;bQ bS1-;wQ \\wS1;bQ bS1/;wQ -wS1;bQ bS1-;\
                     wQ \\wS1;bQ bS1/;wQ -wS1;bQ bS1-";
        let g = Hive::from_game_string(drawn).unwrap();
        assert!(g.is_over() && g.repetition_rule());
        assert_eq!(g.game_string(), drawn);
        let games = Hive::parse_records(drawn, None, &mut crate::game::RecordBudget::new(10, 1_000)).unwrap();
        let rec = games[0].as_ref().unwrap();
        assert_eq!((rec.moves.len(), rec.result.as_deref()), (12, Some("Draw")));
        // One shuffle fewer: the position has been seen twice, no draw.
        let cut = "Base;Draw;White[5];wS1;bS1 wS1-;wQ -wS1;bQ bS1-;wQ \\wS1;bQ bS1/;wQ -wS1;bQ bS1-";
        let e = Hive::from_game_string(cut).unwrap_err();
        assert_eq!((e.token.as_str(), e.message.as_str()), ("Draw", "the moves give GameState InProgress"));
        let open = Hive::from_game_string(&drawn.replacen(";Draw;", ";InProgress;", 1)).unwrap();
        assert!(!open.is_over() && !open.repetition_rule());
        // A lone direction mark is no reference.
        let mut g = Hive::from_game_string("Base;InProgress;White[2];wS1;bS1 wS1-").unwrap();
        let e = g.play_move_string("wQ -").unwrap_err();
        assert_eq!(e.message, "a direction mark needs a reference piece");
    }

    #[test]
    fn malformed_lines_are_reported() {
        let text = "# two good, two bad\nBase;InProgress;White[2];wS1;bS1 wS1-\n\n\
                    Base;InProgress;Black[2];wS1;bS1 wS1-;wQ bS1-\n\
                    Base+Q;NotStarted;White[1]\nBase+MLP;WhiteWins;Black[1];wQ\nBase+M\n";
        let games = Hive::parse_records(text, Some("gamestring"), &mut crate::game::RecordBudget::new(10_000, 1_000_000)).unwrap();
        assert_eq!(games.len(), 5);
        let a = games[0].as_ref().unwrap();
        assert_eq!((a.line, a.moves.len(), a.result.as_deref()), (2, 2, None));
        let e = games[1].as_ref().unwrap_err();
        assert_eq!((e.index, e.line, e.token.as_str()), (1, 4, "wQ bS1-"));
        assert!(e.message.contains("move 3") && e.message.contains("illegal in this position"), "{e}");
        let e = games[2].as_ref().unwrap_err();
        assert_eq!((e.line, e.token.as_str()), (5, "Base+Q"));
        let e = games[3].as_ref().unwrap_err();
        assert_eq!(e.line, 6);
        assert!(e.to_string().starts_with("game 4 (line 6): "), "{e}");
        assert!(games[4].as_ref().unwrap().moves.is_empty());
        assert!(Hive::parse_records(text, Some("pgn"), &mut crate::game::RecordBudget::new(10_000, 1_000_000)).is_err());
    }

    #[test]
    fn reading_stops_at_the_budget() {
        let good = "Base;InProgress;White[2];wS1;bS1 wS1-\n";
        let bad = "Base;InProgress;Black[2];wS1;bS1 wS1-;wQ bS1-\n";
        crate::game::budget_check::check::<Hive>("gamestring", good, bad, 2, "");
    }
}

#[test]
fn evaluation_basics() {
    // Both Queens have five neighbours and Black is to move: whoever moves fills first, which the search
    // (quiescence on moves that add a Queen neighbour) sees; the static terms stay small and even.
    let text = "Base;InProgress;Black[14];wA1;bA1 \\wA1;wA2 wA1-;bA2 \\bA1;wA3 /wA1;bA3 bA1/;wQ wA2/;bQ /bA2;\
        wA3 \\bA2;bA3 wQ/;wS1 /wA1;bB1 \\bA3;wB1 wA1\\;bB1 -bA3;wS1 -bQ;bB1 wQ;wB2 /wS1;bB2 -bA3;wB2 wS1\\;\
        bG1 \\bA3;wG1 /wS1;bG2 bA3\\;wG2 -wS1;bG3 -bG1;wG3 wA2\\;bG3 bB1\\;wG1 /wA3";
    let g = game(text);
    assert!(g.evaluate().abs() < 300, "{}", g.evaluate());
    let mut s = crate::search::Limits::depth(2);
    s.movetime = None;
    let tt = std::sync::Arc::new(crate::search::TranspositionTable::new(1));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done = crate::search::search(&g, &s, &Default::default(), &tt, &stop, &mut |_| {});
    assert!(matches!(done.lines[0].score, crate::game::Score::Mate(1)), "{:?}", done.lines[0].score);
    // The start is balanced but for the side to move's value (its opening half: no piece is in play).
    let start = Hive::new(GameType::MLP);
    let tempo = (0..eval::PAIRS).find(|&p| eval::pair_name(p) == "the side to move").expect("a tempo term");
    assert_eq!(start.evaluate(), i32::from(weights::VALUES[tempo][0]));
}

#[test]
fn quiescence_ends_where_pieces_keep_arriving_at_a_queen() {
    // From a self-play game: both sides have pieces that can keep arriving next to the enemy Queen, and a
    // quiescence search without a bound on its plies did not finish its first iteration (when no stop is
    // taken yet). A node-limited search must answer near its limit.
    let g = game("Base+MLP;InProgress;Black[81];wL;bS1 wL\\;wM \\wL;bL bS1-;wP wL/;bP /bS1;wQ wP/;bQ /bP;wA1 /wM;\
        bA1 bL/;wM -bQ;bA1 \\wA1;wB1 /wM;bA2 bS1\\;wB1 wM\\;bA2 \\wQ;wA2 /wM;bA3 bS1\\;wA2 bQ\\;bA3 wQ/;wB2 \\wM;\
        bM \\bA2;wS1 wB1\\;bM bA3\\;wS2 /wB2;bL wA1\\;wA3 wS2\\;bA1 /wA1;wB2 -bA1;bL -wP;wG1 /wA3;bA2 -wG1;\
        wG2 wA3\\;bB1 bS1\\;wG3 wA2\\;bL -bA3;wS2 -bA2;bM wG3/;wA3 wP\\;bM bA3\\;wA3 bM-;bB2 \\bA3;wB2 bA1;\
        bA3 wG3/;wA3 \\bB2;bG1 -bL;wA3 -wB2;bM bB2\\;wA3 wP\\;bA3 bM\\;wS1 bA2\\;bG2 -bB2;wA3 \\bG2;bA3 \\wA3;\
        wS1 wB1\\;bG3 bB1\\;wG3 wB2\\;bS1 bM\\;wM bQ;bS2 bS1/;wM bP\\;bQ wL\\;wA1 \\bA3;bB1 wM;wA1 bQ\\;bB1 wA1;\
        wS1 bG3\\;bG1 \\bB2;wS1 wB1\\;bG3 -wP;wB2 /wL;bQ wP\\;wG3 \\bA1;bB1 wA1-;wB1 /bP;wM bA1\\;wG3 wA2\\;\
        bA1 wG3-;wM -wB2;bA1 \\wM;wG3 wM\\;bA1 -wM;wG3 bB1-;bA1 \\wM;wG3 wM\\;bA1 -wM;wG3 bB1-;bA1 \\wM;wG3 wM\\;\
        bA1 -wM;wG3 bB1-;bA1 \\wM;wG3 wM\\;bA1 -wM;wG3 bB1-;bA1 \\wM;wG3 wM\\;bA1 -wM;wG3 bB1-;bA1 \\wM;wG3 wM\\;\
        bA1 -wM;wG3 bB1-;bA1 \\wM;wG3 wM\\;bA1 -wM;wG3 bB1-;bA1 \\wM;wG3 wM\\;bA1 -wM;wG3 bB1-;bA1 \\wM;wG3 wM\\;\
        bA1 -wM;wG3 bB1-;bA1 \\wM;wG3 wM\\;bA1 -wM;wG3 bB1-;bA1 \\wM;wG3 wM\\;bA1 -wM;wG3 bB1-;bA1 \\wM;wG3 wM\\;\
        bA1 -wM;wG3 bB1-;bA3 -wA3;wG3 wM\\;bB1 wA1\\;wG3 \\bS2;bB2 wG3;wS2 \\wG2;bS2 \\bB2;wS2 -bA2;bB1 wA1;\
        wS2 \\wG2;bB1 wA1-;wS2 -bA2;bB1 wA1;wS2 \\wG2;bB1 wA1-;wS2 -bA2;bB1 wA1;wS2 \\wG2;bB1 wA1-;wS2 -bA2;\
        bB1 wA1;wS2 \\wG2;bB1 wA1-;wS2 wM\\;bB2 wG3-;wS2 -bA1;bB1 wA1;wS2 /bG3;bA2 bS1\\;wL \\bG3;bA2 bQ-;\
        wG1 wA2\\;bL -wQ;wL /bG2");
    let tt = std::sync::Arc::new(crate::search::TranspositionTable::new(1));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let limits = crate::search::Limits::nodes(3000);
    let done = crate::search::search(&g, &limits, &Default::default(), &tt, &stop, &mut |_| {});
    assert!(done.best.is_some());
    assert!(done.nodes < 100_000, "{} nodes for a limit of 3,000", done.nodes);
}
