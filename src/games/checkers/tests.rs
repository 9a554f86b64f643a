//! Rules tests: crowning, forced and multi-jumps, kings, draws, the end of the game, hashing.

use super::*;
use crate::game::Outcome;

fn game(fen: &str) -> Checkers {
    Checkers::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn moves(g: &Checkers) -> Vec<String> {
    let mut v: Vec<String> = g.legal_moves().into_iter().map(|m| g.format_move(m)).collect();
    v.sort();
    v
}

fn play(g: &mut Checkers, text: &str) {
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
    let g = Checkers::start();
    assert_eq!(g.to_fen(), "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12");
    assert_eq!(g.side_to_move(), Side::First);
    assert_eq!(Checkers::side_name(Side::First), "black");
    assert_eq!(Checkers::side_name(Side::Second), "white");
    assert_eq!(moves(&g), ["10-14", "10-15", "11-15", "11-16", "12-16", "9-13", "9-14"]);
    assert_eq!(g.hash(), g.hash_from_scratch());
    let mut noisy = vec![Move { cap: 0, path: 0, from: 0, to: 0, hops: 0 }];
    g.generate_noisy(&mut noisy);
    assert!(noisy.is_empty());
}

#[test]
fn published_special_positions() {
    assert_eq!(moves(&game("W:W21,22:B11,17,18")), ["21x14", "22x13", "22x15x8"]);
    assert_eq!(moves(&game("W:W11:B6,7")), ["11x2"]);
    // Two paths capturing the same four pieces and coming back to the start square: two moves.
    let g = game("B:WK14,K15,K22,K23:BK10");
    assert_eq!(moves(&g), ["10x17x26x19x10", "10x19x26x17x10"]);
    let ms = g.legal_moves();
    assert_ne!(Checkers::move_key(ms[0]), Checkers::move_key(ms[1]));
}

#[test]
fn crowning_ends_the_move() {
    // White's man jumps 10x3 and is crowned: it may not go on to jump 8 as a king.
    let mut g = game("W:W10:B7,8");
    assert_eq!(moves(&g), ["10x3"]);
    play(&mut g, "10x3");
    assert_eq!(g.to_fen(), "B:WK3:B8");
    // A black man crowning by a simple move.
    let mut g = game("B:W5:B25");
    play(&mut g, "25-29");
    assert_eq!(g.to_fen(), "W:W5:BK29");
    assert_eq!(g.hash(), g.hash_from_scratch());
}

#[test]
fn captures_are_compulsory() {
    // Black could play many simple moves but must take 14x23.
    let g = game("B:W18,30:B1,2,3,14");
    assert_eq!(moves(&g), ["14x23"]);
    let err = g.parse_move("1-5").unwrap_err();
    assert_eq!(err.token, "1-5");
    assert!(err.message.contains("compulsory"), "{err}");
    let mut noisy = Vec::new();
    g.generate_noisy(&mut noisy);
    assert_eq!(noisy.len(), 1);
    assert!(g.is_noisy(noisy[0]));
}

#[test]
fn multi_jumps_are_completed() {
    // 9x18x27: the man cannot stop after the first jump.
    let g = game("B:W14,23:B9");
    assert_eq!(moves(&g), ["9x18x27"]);
    let m = g.legal_moves()[0];
    assert_eq!(m.captured_squares(), vec![14, 23]);
    assert_eq!(m.squares(), vec![9, 18, 27]);
    assert_eq!(m.captures(), 2);
    // Branching: both continuations are separate moves.
    assert_eq!(moves(&game("B:W14,22,23:B9")), ["9x18x25", "9x18x27"]);
}

#[test]
fn men_do_not_jump_backward_kings_do() {
    assert_eq!(moves(&game("B:W14:B18")), ["18-22", "18-23"]);
    assert_eq!(moves(&game("B:W14:BK18")), ["18x9"]);
    assert_eq!(moves(&game("W:WK9:B14")), ["9x18"]);
    assert_eq!(moves(&game("W:W9:B14")), ["9-5", "9-6"]);
}

#[test]
fn king_multi_jump_makes_and_unmakes() {
    let mut g = game("B:WK14,K15,K22,K23:BK10");
    let before = (g.to_fen(), g.hash());
    for m in g.legal_moves() {
        g.make(m);
        assert_eq!(g.to_fen(), "W:W:BK10");
        assert_eq!(g.hash(), g.hash_from_scratch());
        assert_eq!(g.outcome(), Some(GameEnd::win(Side::First, "no legal move")));
        g.unmake();
        assert_eq!((g.to_fen(), g.hash()), before);
    }
}

#[test]
fn no_move_loses() {
    for fen in ["B:W32:B28", "B:W5:B", "W:W:B5", "W:W5:B1,2"] {
        let g = game(fen);
        assert!(g.legal_moves().is_empty(), "{fen}");
        let winner = g.side_to_move().opponent();
        assert_eq!(g.outcome(), Some(GameEnd::win(winner, "no legal move")), "{fen}");
    }
    assert_eq!(Checkers::start().outcome(), None);
}

#[test]
fn threefold_repetition() {
    let mut g = game("B:WK32:BK1");
    assert_eq!(g.rule_end(0), None);
    for (i, m) in ["1-5", "32-27", "5-1", "27-32"].iter().enumerate() {
        play(&mut g, m);
        if i < 3 {
            assert_eq!(g.rule_end(100), None);
        }
    }
    // Back to the start: a repetition inside the search window, not yet threefold.
    assert_eq!(g.rule_end(4), Some(GameEnd::draw("threefold repetition")));
    assert_eq!(g.rule_end(3), None);
    assert_eq!(g.rule_end(0), None);
    for m in ["1-5", "32-27", "5-1", "27-32"] {
        play(&mut g, m);
    }
    assert_eq!(g.rule_end(0), Some(GameEnd::draw("threefold repetition")));
    g.unmake();
    assert_eq!(g.rule_end(0), None);
}

#[test]
fn man_move_resets_the_draw_counters() {
    let mut g = game("B:WK32:BK1,12");
    for m in ["1-5", "32-27", "5-1", "27-32"] {
        play(&mut g, m);
    }
    assert_eq!(g.reversible_plies(), 4);
    play(&mut g, "12-16");
    assert_eq!(g.reversible_plies(), 0);
    for m in ["32-27", "1-5", "27-32", "5-1"] {
        play(&mut g, m);
    }
    // The position after 12-16 comes back, but the earlier ones (with the man on 12) cannot.
    assert_eq!(g.rule_end(0), None);
    assert_eq!(g.rule_end(4), Some(GameEnd::draw("threefold repetition")));
}

/// Quiet king moves that never repeat a position and never allow a capture, `plies` of them (depth-first).
fn wander(g: &mut Checkers, seen: &mut std::collections::HashSet<u64>, plies: u32) -> bool {
    if plies == 0 {
        return true;
    }
    assert_eq!(g.rule_end(0), None, "{}", g.to_fen());
    for m in g.legal_moves() {
        g.make(m);
        if !m.is_jump() && g.board().jumpers() == 0 && seen.insert(g.hash()) {
            if wander(g, seen, plies - 1) {
                return true;
            }
            seen.remove(&g.hash());
        }
        g.unmake();
    }
    false
}

#[test]
fn forty_move_rule() {
    let mut g = game("B:WK32,K28:BK1,K5");
    let mut seen = std::collections::HashSet::new();
    seen.insert(g.hash());
    assert!(wander(&mut g, &mut seen, FORTY_MOVE_PLIES));
    assert_eq!(g.plies(), FORTY_MOVE_PLIES as usize);
    assert_eq!(g.reversible_plies(), FORTY_MOVE_PLIES);
    assert_eq!(g.rule_end(0), Some(GameEnd::draw("40-move rule")));
    assert_eq!(g.outcome().map(|e| e.outcome), Some(Outcome::Draw));
    g.unmake();
    assert_eq!(g.rule_end(0), None);
}

/// Found by an audit of xiangqi's rule: a side left without a move on the count's last ply has lost.
#[test]
fn a_side_without_a_move_on_the_fortieth_move_has_lost() {
    let mut g = game("B:WK31:B");
    g.cur.reversible = FORTY_MOVE_PLIES;
    assert_eq!(g.rule_end(0), None);
    assert_eq!(g.outcome().map(|e| e.outcome), Some(Outcome::Win(Side::Second)));
    let mut g = game("B:WK31:BK1");
    g.cur.reversible = FORTY_MOVE_PLIES;
    assert_eq!(g.rule_end(0), Some(GameEnd::draw("40-move rule")));
}

#[test]
fn capture_resets_the_forty_move_counter() {
    let mut g = game("B:WK32,K19:BK1,K10");
    play(&mut g, "1-5");
    play(&mut g, "19-15");
    assert_eq!(g.reversible_plies(), 2);
    play(&mut g, "10x19");
    assert_eq!(g.reversible_plies(), 0);
}

#[test]
fn incremental_hash_matches_scratch_in_random_games() {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    for _ in 0..40 {
        let mut g = Checkers::start();
        let mut fens = vec![g.to_fen()];
        let mut hashes = vec![g.hash()];
        for _ in 0..200 {
            let ms = g.legal_moves();
            if ms.is_empty() {
                break;
            }
            // Now and then take a few moves back.
            if rng.below(8) == 0 && g.plies() > 2 {
                for _ in 0..2 {
                    g.unmake();
                    fens.pop();
                    hashes.pop();
                }
                assert_eq!(g.to_fen(), *fens.last().unwrap());
                assert_eq!(g.hash(), *hashes.last().unwrap());
                continue;
            }
            let m = ms[rng.below(ms.len())];
            g.make(m);
            assert_eq!(g.hash(), g.hash_from_scratch(), "after {} in {}", g.format_move(m), fens.last().unwrap());
            // The position read back from its FEN hashes the same.
            assert_eq!(Checkers::from_fen(&g.to_fen()).unwrap().hash(), g.hash());
            fens.push(g.to_fen());
            hashes.push(g.hash());
        }
        while g.plies() > 0 {
            g.unmake();
        }
        g.unmake(); // at the start of the history: nothing happens
        assert_eq!(g.to_fen(), fens[0]);
        assert_eq!(g.hash(), hashes[0]);
    }
}

#[test]
fn side_to_move_is_hashed() {
    let b = game("B:W21:B5");
    let w = game("W:W21:B5");
    assert_ne!(b.hash(), w.hash());
}

#[test]
fn move_keys_differ_within_positions() {
    let mut rng = Rng(99);
    for _ in 0..30 {
        let mut g = Checkers::start();
        for _ in 0..120 {
            let ms = g.legal_moves();
            if ms.is_empty() {
                break;
            }
            let keys: std::collections::HashSet<u32> = ms.iter().map(|&m| Checkers::move_key(m)).collect();
            assert_eq!(keys.len(), ms.len(), "{}", g.to_fen());
            g.make(ms[rng.below(ms.len())]);
        }
    }
}

#[test]
fn noisy_moves_and_order() {
    let g = game("B:W14,22,23,K15:B9,10");
    let all = g.legal_moves();
    let mut noisy = Vec::new();
    g.generate_noisy(&mut noisy);
    assert_eq!(noisy, all);
    let best = noisy.iter().max_by_key(|&&m| g.noisy_order(m)).unwrap();
    assert_eq!(best.captures(), 2);
}

#[test]
fn perft_counts_match_generic() {
    for fen in ["B:W5,14,18,21,K27,28,30,31:B1,2,K9,10,12,K16,19,20", "W:WK1,K3,11:BK30,K32,28,24"] {
        let mut g = game(fen);
        for d in 1..=5 {
            assert_eq!(g.perft(d), crate::game::perft_generic(&mut g, d), "{fen} depth {d}");
        }
    }
}

mod records {
    use crate::game::{Game, GameRecord, PlyNote, RecordError};
    use crate::games::checkers::Checkers;

    const PDN: &str = include_str!("../../../tests/data/records/checkers.pdn");

    fn parse(text: &str) -> Vec<Result<GameRecord<Checkers>, RecordError>> {
        Checkers::parse_records(text, None, &mut crate::game::RecordBudget::new(10_000, 1_000_000)).unwrap()
    }

    fn round_trip(rec: &GameRecord<Checkers>) {
        let mut g = rec.start.clone();
        let mut notes = Vec::new();
        for &m in &rec.moves {
            let better: Vec<_> = g.legal_moves().into_iter().filter(|&o| o != m).take(1).collect();
            notes.push(PlyNote { comment: Some("[%eval -0.30] Inaccuracy.".into()), nag: Some(6), variation: better, ..PlyNote::empty() });
            g.make(m);
        }
        for notes in [Vec::new(), notes] {
            let text = Checkers::export_record(rec, &notes).unwrap();
            let back = parse(&text).remove(0).unwrap();
            // The export adds `Annotator`, and `GameType` and `Result` where the record had none.
            let added = |n: &str| rec.tags.iter().all(|(t, _)| t != n) && ["GameType", "Result"].contains(&n);
            let tags: Vec<_> =
                back.tags.iter().filter(|(n, _)| n != "Annotator" && n != "FEN" && !added(n)).cloned().collect();
            let want: Vec<_> = rec.tags.iter().filter(|(n, _)| n != "FEN").cloned().collect();
            assert_eq!(tags, want);
            assert_eq!(back.start.to_fen(), rec.start.to_fen());
            assert_eq!(back.moves, rec.moves);
            assert_eq!(back.result, rec.result);
        }
    }

    #[test]
    fn the_export_names_its_game_and_one_result() {
        // Found by an audit: a game read without `GameType` was written without one (a reader took it for
        // international draughts), and its `Result` tag could say another result than its moves' end.
        let rec = parse("[Result \"1-0\"]\n\n1. 11-15 23-19 0-1\n").remove(0).unwrap();
        let text = Checkers::export_record(&rec, &[]).unwrap();
        assert!(text.starts_with("[GameType \"21\"]\n"), "{text}");
        assert!(text.contains("[Result \"0-1\"]\n") && !text.contains("1-0"), "{text}");
        assert!(text.trim_end().ends_with(" 0-1"), "{text}");
        let rec = parse("[GameType \"21\"]\n\n1. 11-15 *\n").remove(0).unwrap();
        let text = Checkers::export_record(&rec, &[]).unwrap();
        assert_eq!(text.matches("GameType").count(), 1, "{text}");
        assert!(text.contains("[Result \"*\"]\n"), "{text}");
    }

    #[test]
    fn fixture_reads_and_round_trips() {
        let games = parse(PDN);
        assert_eq!(games.len(), 1);
        let rec = games[0].as_ref().unwrap();
        assert!(rec.moves.len() >= 40);
        round_trip(rec);
    }

    #[test]
    fn fen_tags_jumps_and_results() {
        let text = "[GameType \"21\"]\n[FEN \"B:W21-32:B1-12\"]\n1. 9-13 22-18 2. 13-17 1-0\n\n\
                    [FEN \"B:W15,22,K30:B11\"]\n1. 11x18x25 0-1\n";
        let games = parse(text);
        let a = games[0].as_ref().unwrap();
        assert_eq!((a.moves.len(), a.result.as_deref()), (3, Some("1-0")));
        let b = games[1].as_ref().unwrap();
        assert_eq!(Checkers::move_to_pdn(b.moves[0]), "11x18x25");
        round_trip(b);
        for r in ["2-0", "0-2", "1-1", "0-0", "1-0", "0-1", "1/2-1/2", "*"] {
            let g = parse(&format!("1. 11-15 {r}"));
            assert_eq!(g[0].as_ref().unwrap().result.as_deref(), Some(r));
        }
    }

    #[test]
    fn malformed_games_are_reported() {
        let text =
            "[Event \"1\"]\n1. 11-15 22-18\n2. 15-19 *\n[GameType \"20\"]\n1. 32-28 *\n[FEN \"B:W1:B2\"]\n*\n1. 9-14 *";
        let games = parse(text);
        assert_eq!(games.len(), 4);
        let e = games[0].as_ref().unwrap_err();
        assert_eq!((e.index, e.line, e.token.as_str()), (0, 3, "15-19"));
        assert!(e.message.contains("illegal in this position"), "{e}");
        let e = games[1].as_ref().unwrap_err();
        assert_eq!((e.line, e.token.as_str()), (4, "20"));
        let e = games[2].as_ref().unwrap_err();
        assert_eq!(e.line, 6);
        assert_eq!(games[3].as_ref().unwrap().moves.len(), 1);
        assert!(Checkers::parse_records("", Some("guide"), &mut crate::game::RecordBudget::new(10_000, 1_000_000)).is_err());
    }

    #[test]
    fn reading_stops_at_the_budget() {
        let good = "[Event \"x\"]\n1. 11-15 23-19 2. 8-11 22-17 *\n";
        let bad = "[Event \"x\"]\n1. 11-15 23-19 2. 8-11 22-11 *\n";
        crate::game::budget_check::check::<Checkers>("pdn", good, bad, 4, "\n");
    }
}

/// A king on 10 can jump once to 1, or take a longer way round back to 1: `10x1` names the one-jump capture
/// (every landing square given), and every legal move reads back from its own notation (found by the live
/// pydraughts comparison).
#[test]
fn a_short_jump_reads_back_when_a_longer_one_has_the_same_ends() {
    let g = Checkers::from_fen("B:W13,16,18,20,21,6,7,K11,K15,K23,K27,K8:B25,28,5,K10,K29,K32").expect("fen");
    let moves = g.legal_moves();
    let ends = |m: &Move| (m.squares()[0], *m.squares().last().expect("squares"));
    assert!(
        moves.iter().any(|a| moves.iter().any(|b| a != b && ends(a) == ends(b))),
        "two jumps share their ends"
    );
    for m in moves {
        assert_eq!(g.parse_move(&g.format_move(m)), Ok(m), "{}", g.format_move(m));
    }
}
