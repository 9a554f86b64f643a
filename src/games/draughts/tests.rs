//! Rules tests: maximum capture, Turkish strike, crowning, flying kings, draws, the end of the game, hashing,
//! and the generator against a slow reference that lists every capture path.

use std::collections::{BTreeSet, HashSet};

use super::board::{NEXT, RAY, king_ray, nearest};
use super::*;
use crate::game::{Outcome, perft_generic};

fn game(fen: &str) -> Draughts {
    Draughts::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn moves(g: &Draughts) -> Vec<String> {
    let mut v: Vec<String> = g.legal_moves().into_iter().map(|m| g.format_move(m)).collect();
    v.sort();
    v
}

fn play(g: &mut Draughts, text: &str) {
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
    let g = Draughts::start();
    assert_eq!(
        g.to_fen(),
        "W:W31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50:B1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20"
    );
    assert_eq!(g.side_to_move(), Side::First);
    assert_eq!(Draughts::side_name(Side::First), "white");
    assert_eq!(Draughts::side_name(Side::Second), "black");
    assert_eq!(moves(&g), ["31-26", "31-27", "32-27", "32-28", "33-28", "33-29", "34-29", "34-30", "35-30"]);
    assert_eq!(g.hash(), g.hash_from_scratch());
    let mut noisy = vec![Move { cap: 0, from: 0, to: 0 }];
    g.generate_noisy(&mut noisy);
    assert!(noisy.is_empty());
    assert_eq!(g.outcome(), None);
}

#[test]
fn the_most_pieces_must_be_captured() {
    // 33 can take one piece (28) or, from 32, two (27 and 18): only the two-piece capture is legal.
    let g = game("W:W32,33:B27,28,18");
    let ms = g.legal_moves();
    assert!(!ms.is_empty());
    let most = ms.iter().map(|m| m.captures()).max().unwrap_or(0);
    assert!(ms.iter().all(|m| m.captures() == most && most >= 2), "{:?}", moves(&g));
    // Kings and men count the same: two men beat one king (33x24 alone is not allowed).
    let g = game("W:W32,33:B27,28,18,K29");
    assert_eq!(moves(&g), ["32x12", "32x34", "33x13", "33x31"]);
    let err = game("W:W32,33:B27,28,18").parse_move("33x22").unwrap_err();
    assert!(err.message.contains("most pieces"), "{err}");
}

#[test]
fn turkish_strike() {
    // A generator that removed pieces at once would find five captures here; the rules allow four.
    let g = game("W:WK2:B7,8,17,18,24");
    assert_eq!(moves(&g), ["2x2", "2x30", "2x35"]);
    for m in g.legal_moves() {
        let want: &[u8] = if m.to_square() == 2 { &[7, 8, 17, 18] } else { &[7, 17, 18, 24] };
        assert_eq!(m.captured_squares(), want);
    }
}

#[test]
fn crowning_only_at_the_end_of_the_move() {
    // 13x2 lands on the crowning row but must go on (2x11) and ends there as a man.
    let mut g = game("W:W13:B7,8");
    assert_eq!(moves(&g), ["13x11"]);
    play(&mut g, "13x11");
    assert_eq!(g.to_fen(), "B:W11:B");
    // Ending on the row crowns.
    let mut g = game("W:W13,40:B8,45");
    play(&mut g, "13x2");
    assert_eq!(g.to_fen(), "B:WK2,40:B45");
    assert_eq!(g.hash(), g.hash_from_scratch());
    // A black man crowning by a step.
    let mut g = game("B:W6:B44");
    play(&mut g, "44-50");
    assert_eq!(g.to_fen(), "W:W6:BK50");
}

#[test]
fn men_capture_backward_but_step_forward() {
    assert_eq!(moves(&game("W:W28:B33")), ["28x39"]);
    assert_eq!(moves(&game("W:W28:B5")), ["28-22", "28-23"]);
    assert_eq!(moves(&game("B:W6:B28")), ["28-32", "28-33"]);
}

#[test]
fn kings_fly() {
    // Any distance along the long diagonal, capture at a distance, landing on any square beyond.
    assert_eq!(moves(&game("W:WK46:B23")), ["46x10", "46x14", "46x19", "46x5"]);
    assert_eq!(game("W:WK46:B1").legal_moves().len(), 9);
    // A piece right behind the captured one stops the king.
    assert!(game("W:WK46:B23,19").legal_moves().iter().all(|m| !m.is_capture()));
}

#[test]
fn same_start_end_and_captures_is_one_move() {
    // The man takes the four pieces round the square clockwise or anticlockwise, back to 33: one move.
    let g = game("W:W33:B28,29,18,19");
    assert_eq!(moves(&g), ["33x33"]);
    assert_eq!(g.legal_moves()[0].captured_squares(), [18, 19, 28, 29]);
    assert_eq!(g.capture_paths(g.legal_moves()[0], 8).len(), 2);
}

#[test]
fn no_move_loses() {
    for fen in ["W:W46:B41,37", "W:W:B5", "B:WK1:B", "B:W1:B46,41?"] {
        let Ok(g) = Draughts::from_fen(fen) else { continue };
        assert!(g.legal_moves().is_empty(), "{fen}");
        let winner = g.side_to_move().opponent();
        assert_eq!(g.outcome(), Some(GameEnd::win(winner, "no legal move")), "{fen}");
    }
}

#[test]
fn threefold_repetition() {
    let mut g = game("W:WK47,6:BK4,45");
    assert_eq!(g.rule_end(0), None);
    for (i, m) in ["47-41", "4-9", "41-47", "9-4"].iter().enumerate() {
        play(&mut g, m);
        if i < 3 {
            assert_eq!(g.rule_end(100), None);
        }
    }
    assert_eq!(g.rule_end(4), Some(GameEnd::draw("threefold repetition")));
    assert_eq!(g.rule_end(3), None);
    assert_eq!(g.rule_end(0), None);
    for m in ["47-41", "4-9", "41-47", "9-4"] {
        play(&mut g, m);
    }
    assert_eq!(g.rule_end(0), Some(GameEnd::draw("threefold repetition")));
    g.unmake();
    assert_eq!(g.rule_end(0), None);
}

/// Quiet king moves that never repeat a position and never allow a capture, `plies` of them (depth-first).
fn wander(g: &mut Draughts, seen: &mut HashSet<u64>, plies: u32, check: &dyn Fn(&Draughts)) -> bool {
    if plies == 0 {
        return true;
    }
    check(g);
    for m in g.legal_moves() {
        g.make(m);
        if !m.is_capture() && !g.board().has_capture() && seen.insert(g.hash()) {
            if wander(g, seen, plies - 1, check) {
                return true;
            }
            seen.remove(&g.hash());
        }
        g.unmake();
    }
    false
}

/// Found by an audit of xiangqi's rule: a side left without a move on a count's last ply has lost.
#[test]
fn a_side_without_a_move_when_a_count_runs_out_has_lost() {
    for (endgame, limit) in [(0, 0), (32, 32), (10, 10)] {
        let mut g = game("B:WK46:B");
        g.cur.reversible = KING_MOVE_PLIES as u16;
        (g.cur.endgame, g.cur.endgame_limit) = (endgame, limit);
        assert_eq!(g.rule_end(0), None);
        assert_eq!(g.outcome().map(|e| e.outcome), Some(Outcome::Win(Side::First)));
    }
    let mut g = game("B:WK46:BK5");
    g.cur.reversible = KING_MOVE_PLIES as u16;
    assert_eq!(g.rule_end(0), Some(GameEnd::draw("25-move rule")));
}

#[test]
fn twenty_five_move_king_rule() {
    let mut g = game("W:WK46,K50,K45,6:BK1,K5,K10,45?".trim_end_matches(",45?"));
    let mut seen = HashSet::new();
    seen.insert(g.hash());
    assert!(wander(&mut g, &mut seen, KING_MOVE_PLIES, &|g| assert_eq!(g.rule_end(0), None, "{}", g.to_fen())));
    assert_eq!(g.reversible_plies(), KING_MOVE_PLIES);
    assert_eq!(g.rule_end(0), Some(GameEnd::draw("25-move rule")));
    assert_eq!(g.outcome().map(|e| e.outcome), Some(Outcome::Draw));
    g.unmake();
    assert_eq!(g.rule_end(0), None);
    // A man's move resets the count.
    let mut g = game("W:WK47,36:BK4");
    play(&mut g, "47-41");
    play(&mut g, "4-9");
    assert_eq!(g.reversible_plies(), 2);
    play(&mut g, "36-31");
    assert_eq!(g.reversible_plies(), 0);
}

#[test]
fn fmjd_endgame_rules() {
    // Two kings against one: five moves each.
    let mut g = game("W:WK36,K45:BK28");
    assert_eq!(g.endgame_plies(), (0, ENDGAME_SHORT_PLIES));
    let mut seen = HashSet::new();
    seen.insert(g.hash());
    assert!(wander(&mut g, &mut seen, ENDGAME_SHORT_PLIES, &|g| assert_eq!(g.rule_end(0), None)));
    assert_eq!(g.rule_end(0), Some(GameEnd::draw("5-move endgame rule")));
    // Three kings against one: sixteen moves each.
    let mut g = game("W:WK36,K45,K1:BK28");
    assert_eq!(g.endgame_plies(), (0, ENDGAME_LONG_PLIES));
    let mut seen = HashSet::new();
    seen.insert(g.hash());
    assert!(wander(&mut g, &mut seen, ENDGAME_LONG_PLIES, &|g| assert_eq!(g.rule_end(0), None)));
    assert_eq!(g.rule_end(0), Some(GameEnd::draw("16-move endgame rule")));
    // A king and two men against a king counts too, and crowning keeps the count.
    let mut g = game("W:WK46,7,36:BK5");
    assert_eq!(g.endgame_plies(), (0, ENDGAME_LONG_PLIES));
    play(&mut g, "7-2");
    assert_eq!(g.endgame_plies(), (1, ENDGAME_LONG_PLIES));
    // Three men against a king: the rules do not apply.
    assert_eq!(game("W:W46,47,48:BK5").endgame_plies(), (0, 0));
    // Four pieces against a king: no rule either.
    assert_eq!(game("W:WK46,K47,K48,K49:BK5").endgame_plies(), (0, 0));
    // A capture into the material starts the count.
    let mut g = game("W:WK1,K36,K45:BK4,12");
    assert_eq!(g.endgame_plies(), (0, 0));
    let m = g.legal_moves()[0];
    assert_eq!(m.captured_squares(), [12]);
    g.make(m);
    assert_eq!(g.endgame_plies(), (0, ENDGAME_LONG_PLIES));
    // A crowning without a capture can bring the material under the rules: the count starts there.
    let mut g = game("B:WK38:B35");
    assert_eq!(g.endgame_plies(), (0, 0));
    for (i, mv) in ["35-40", "38-15", "40-44", "15-24", "44-49"].into_iter().enumerate() {
        play(&mut g, mv);
        assert_eq!(g.endgame_plies(), (0, if i == 4 { ENDGAME_SHORT_PLIES } else { 0 }), "after {mv}");
    }
    play(&mut g, "24-8");
    assert_eq!(g.endgame_plies(), (1, ENDGAME_SHORT_PLIES));
    let mut g = game("W:WK47,6,7,8:BK45");
    play(&mut g, "6-1");
    assert_eq!(g.endgame_plies(), (0, 0), "four pieces against a king");
    let mut g = game("W:WK47,6,7:B45,40");
    play(&mut g, "6-1");
    assert_eq!(g.endgame_plies(), (0, 0), "the other side has two men");
    let mut g = game("W:W6,7,8:BK45");
    play(&mut g, "6-1");
    assert_eq!(g.endgame_plies(), (0, ENDGAME_LONG_PLIES), "a king and two men against a king");
}

#[test]
fn incremental_hash_matches_scratch_in_random_games() {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    for _ in 0..40 {
        let mut g = Draughts::start();
        let mut fens = vec![g.to_fen()];
        let mut hashes = vec![g.hash()];
        for _ in 0..250 {
            let ms = g.legal_moves();
            if ms.is_empty() {
                break;
            }
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
            assert_eq!(g.hash(), g.hash_from_scratch(), "after {:?} in {}", m, fens.last().unwrap());
            assert_eq!(Draughts::from_fen(&g.to_fen()).unwrap().hash(), g.hash());
            assert_eq!(Draughts::from_guide(&g.to_guide()).unwrap().to_fen(), g.to_fen());
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
fn move_keys_differ_within_positions() {
    let mut rng = Rng(99);
    for _ in 0..30 {
        let mut g = Draughts::start();
        for _ in 0..150 {
            let ms = g.legal_moves();
            if ms.is_empty() {
                break;
            }
            let keys: HashSet<u32> = ms.iter().map(|&m| Draughts::move_key(m)).collect();
            assert_eq!(keys.len(), ms.len(), "{}", g.to_fen());
            g.make(ms[rng.below(ms.len())]);
        }
    }
}

#[test]
fn noisy_moves_and_order() {
    let g = game("W:W32,33,K45:B27,28,18,K40");
    let all = g.legal_moves();
    let mut noisy = Vec::new();
    g.generate_noisy(&mut noisy);
    assert_eq!(noisy, all);
    assert!(noisy.iter().all(|&m| g.is_noisy(m)));
    let quiet = Draughts::start().legal_moves();
    assert!(quiet.iter().all(|&m| !Draughts::start().is_noisy(m)));
    // Capturing a king orders before capturing a man.
    let g = game("W:W33:B28,K29");
    let ms = g.legal_moves();
    let best = ms.iter().max_by_key(|&&m| g.noisy_order(m)).unwrap();
    assert_eq!(best.captured_squares(), [29]);
}

/// The slow reference: every capture path with every landing square, the most captures kept, one move per
/// (start, end, captured set).
fn reference_moves(b: &Board) -> BTreeSet<(u8, u8, u64)> {
    fn walk(b: &Board, king: bool, from: u8, at: u32, cap: u64, occ: u64, out: &mut Vec<(u8, u8, u64)>) {
        let opp = b.pieces[b.stm ^ 1];
        let mut more = false;
        for d in 0..4 {
            let (t, land) = if king {
                let blockers = RAY[d][at as usize] & occ;
                if blockers == 0 {
                    continue;
                }
                let t = nearest(d, blockers);
                (t, king_ray(d, t as usize, occ))
            } else {
                let t = NEXT[d][at as usize];
                if t == 255 {
                    continue;
                }
                let l = NEXT[d][t as usize];
                (t as u32, if l == 255 { 0 } else { (1u64 << l) & !occ })
            };
            if opp & !cap & (1u64 << t) == 0 || land == 0 {
                continue;
            }
            let mut l = land;
            while l != 0 {
                let sq = l.trailing_zeros();
                l &= l - 1;
                more = true;
                walk(b, king, from, sq, cap | 1u64 << t, occ, out);
            }
        }
        if !more && cap != 0 {
            out.push((from, at as u8, cap));
        }
    }
    let mut caps = Vec::new();
    let mut p = b.pieces[b.stm];
    while p != 0 {
        let s = p.trailing_zeros();
        p &= p - 1;
        walk(b, b.kings & (1u64 << s) != 0, s as u8, s, 0, b.occupied() & !(1u64 << s), &mut caps);
    }
    let most = caps.iter().map(|c| c.2.count_ones()).max().unwrap_or(0);
    if most > 0 {
        return caps.into_iter().filter(|c| c.2.count_ones() == most).collect();
    }
    let mut v = Vec::new();
    b.generate_quiet(&mut v);
    v.into_iter().map(|m| (m.from, m.to, m.cap)).collect()
}

#[test]
fn generator_matches_the_slow_reference() {
    let mut rng = Rng(0xDEAD_BEEF_1234_5678);
    let mut captures = 0;
    for _ in 0..3000 {
        // Random placements with many kings and scattered pieces: long captures and many paths.
        let mut pieces = [0u64; 2];
        let mut kings = 0u64;
        let n = [1 + rng.below(12), 1 + rng.below(12)];
        let king_rate = rng.below(3);
        for side in 0..2 {
            let mut placed = 0;
            while placed < n[side] {
                let sq = 1 + rng.below(50) as u8;
                let bit = board::bit_of_square(sq);
                if (pieces[0] | pieces[1]) & bit != 0 {
                    continue;
                }
                pieces[side] |= bit;
                let crown = board::CROWN_ROW[side] & bit != 0;
                if crown || rng.below(3) < king_rate {
                    kings |= bit;
                }
                placed += 1;
            }
        }
        let b = Board { pieces, kings, stm: rng.below(2) };
        let mut fast = Vec::new();
        b.generate(&mut fast);
        let set: BTreeSet<(u8, u8, u64)> = fast.iter().map(|m| (m.from, m.to, m.cap)).collect();
        assert_eq!(set.len(), fast.len(), "duplicates in {}", notation::format_fen(&b));
        assert_eq!(set, reference_moves(&b), "{}", notation::format_fen(&b));
        assert_eq!(b.count_moves(&mut Vec::new()), fast.len() as u64);
        if fast.first().is_some_and(|m| m.is_capture()) {
            captures += 1;
        }
    }
    assert!(captures > 500, "{captures}");
}

#[test]
fn perft_counts_match_generic() {
    for fen in ["W:W25,27,28,30,32,33,34,35,37,38:B12,13,14,16,18,19,21,23,24,26", "W:WK3,28,33,K45:B7,K12,19,22,K40"] {
        let mut g = game(fen);
        for d in 1..=5 {
            assert_eq!(g.perft(d), perft_generic(&mut g, d), "{fen} depth {d}");
        }
    }
}

mod records {
    use crate::game::{Game, GameRecord, PlyNote, RecordError};
    use crate::games::draughts::Draughts;

    const PDN: &str = include_str!("../../../tests/data/records/draughts.pdn");
    const GUIDE: &str = include_str!("../../../tests/data/records/draughts_guide.txt");

    fn parse(text: &str, format: Option<&str>) -> Vec<Result<GameRecord<Draughts>, RecordError>> {
        Draughts::parse_records(text, format, &mut crate::game::RecordBudget::new(10_000, 1_000_000)).unwrap()
    }

    fn notes_for(rec: &GameRecord<Draughts>) -> Vec<PlyNote<super::Move>> {
        let mut g = rec.start.clone();
        let mut notes = Vec::new();
        for (i, &m) in rec.moves.iter().enumerate() {
            let better: Vec<_> = g.legal_moves().into_iter().filter(|&o| o != m).take(1).collect();
            notes.push(PlyNote {
                comment: Some(format!("[%eval {i}.25] note")),
                nag: Some(6),
                variation: better,
                ..PlyNote::empty()
            });
            g.make(m);
        }
        notes
    }

    fn round_trip(rec: &GameRecord<Draughts>) {
        for notes in [Vec::new(), notes_for(rec)] {
            let text = Draughts::export_record(rec, &notes).unwrap();
            assert!(text.lines().filter(|l| !l.starts_with('[')).all(|l| l.len() <= 80), "{text}");
            let back = parse(&text, Some("pdn")).remove(0).unwrap();
            // The export adds `Annotator`, and `GameType` and `Result` where the record had none.
            let added = |n: &str| rec.tags.iter().all(|(t, _)| t != n) && ["GameType", "Result"].contains(&n);
            let tags: Vec<_> = back.tags.iter().filter(|(n, _)| n != "Annotator" && !added(n)).cloned().collect();
            assert!(back.tags.iter().any(|(n, v)| n == "GameType" && v.starts_with("20")), "{text}");
            assert_eq!(
                tags,
                rec.tags
                    .iter()
                    .filter(|(n, _)| n != "FEN")
                    .cloned()
                    .chain(back.tags.iter().filter(|(n, _)| n == "FEN").cloned())
                    .collect::<Vec<_>>()
            );
            assert_eq!(back.start.to_fen(), rec.start.to_fen());
            assert_eq!(back.moves, rec.moves);
            assert_eq!(back.result, rec.result.clone().or(Some("*".into())));
        }
    }

    #[test]
    fn fixtures_read_and_round_trip() {
        let games = parse(PDN, None);
        assert_eq!(games.len(), 1);
        let rec = games[0].as_ref().unwrap();
        assert!(rec.moves.len() >= 40 && rec.moves.iter().any(|m| m.is_capture()));
        assert_eq!(rec.tags.iter().find(|(n, _)| n == "GameType").map(|(_, v)| v.as_str()), Some("20"));
        round_trip(rec);
        let guide = parse(GUIDE, None);
        assert_eq!(guide.len(), 2);
        for (i, g) in guide.iter().enumerate() {
            let g = g.as_ref().unwrap();
            assert_eq!(g.line, i + 1);
            assert!(!g.moves.is_empty());
            round_trip(g);
        }
        assert_ne!(guide[1].as_ref().unwrap().start.to_fen(), Draughts::start().to_fen());
    }

    #[test]
    fn fen_tags_results_and_full_paths() {
        let text = "[FEN \"W:W31-50:B1-20\"]\n1. 32-28 19-23 2. 28x19 14x23 2-0\n\n\
                    [GameType \"20,W,10,10,N2,0\"]\n[FEN \"B:WK2,K5,11,18,21,23,25,26,30,36,44,45,48,49:B4,K50\"]\n\
                    1... 50x22x13x35 0-2\n";
        let games = parse(text, None);
        let a = games[0].as_ref().unwrap();
        assert_eq!((a.moves.len(), a.result.as_deref()), (4, Some("2-0")));
        let b = games[1].as_ref().unwrap();
        assert_eq!(b.moves[0].captured_squares(), [18, 30, 44]);
        let out = Draughts::export_record(b, &[]).unwrap();
        assert!(out.contains("1... 50x22x35 0-2"), "{out}");
        round_trip(b);
        for r in ["2-0", "0-2", "1-1", "0-0", "1-0", "0-1", "1/2-1/2", "*"] {
            let g = parse(&format!("1. 32-28 {r}"), Some("pdn"));
            assert_eq!(g[0].as_ref().unwrap().result.as_deref(), Some(r));
        }
    }

    #[test]
    fn malformed_games_are_reported_and_the_others_go_on() {
        let text = "[Event \"1\"]\n1. 32-28 19-23\n2. 28-22 *\n\n[Event \"2\"]\n[GameType \"21\"]\n1. 11-15 *\n\n\
                    [Event \"3\"]\n[FEN \"W:W51:B1\"]\n*\n\n[Event \"4\"]\n1. 32-28 18-23 2-0\n";
        let games = parse(text, None);
        assert_eq!(games.len(), 4);
        let e = games[0].as_ref().unwrap_err();
        assert_eq!((e.index, e.line, e.token.as_str()), (0, 3, "28-22"));
        assert!(e.message.contains("2. 28-22") && e.message.contains("illegal in this position"), "{e}");
        let e = games[1].as_ref().unwrap_err();
        assert_eq!((e.index, e.line, e.token.as_str()), (1, 6, "21"));
        let e = games[2].as_ref().unwrap_err();
        assert_eq!((e.index, e.line, e.token.as_str()), (2, 10, "51"));
        assert_eq!(games[3].as_ref().unwrap().moves.len(), 2);
        // GUIDE lines.
        let start = Draughts::start().to_guide();
        let text = format!("# games\n{start} 1 m 32 28 0\n\n{start} 2 m 32 28 0 m 28 23 0\n{start} 0\n");
        let games = parse(&text, None);
        assert_eq!(games.len(), 3);
        assert_eq!(games[0].as_ref().unwrap().line, 2);
        let e = games[1].as_ref().unwrap_err();
        assert_eq!((e.index, e.line, e.token.as_str()), (1, 4, "28 23 0"));
        assert!(e.message.contains("move 2") && e.message.contains("illegal in this position"), "{e}");
        assert!(games[2].as_ref().unwrap().moves.is_empty());
        let e = Draughts::parse_records("", Some("sgf"), &mut crate::game::RecordBudget::new(10, 100)).unwrap_err();
        assert!(matches!(e, crate::game::ReadError::Notation(ref e) if e.token == "sgf"), "{e:?}");
    }

    #[test]
    fn reading_stops_at_the_budget() {
        use crate::game::budget_check::check;
        let good = "[Event \"x\"]\n1. 32-28 19-23 2. 28x19 14x23 *\n";
        let bad = "[Event \"x\"]\n1. 32-28 19-23 2. 31-27 14x23 *\n";
        check::<Draughts>("pdn", good, bad, 4, "\n");
        // The same game as a GUIDE game string; the bad one does not take.
        let rec = parse(good, Some("pdn")).remove(0).unwrap();
        let good = format!("{}\n", Draughts::format_guide_game(&rec.start, &rec.moves));
        let bad = good.replace("m 28 19 1 23", "m 31 27 0");
        assert_ne!(good, bad);
        check::<Draughts>("guide", &good, &bad, 4, "");
    }
}

#[test]
fn hub_positions_and_moves() {
    let start = Draughts::start();
    let hub = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww";
    assert_eq!(start.to_hub(), hub);
    assert_eq!(Draughts::from_hub(hub).map(|g| g.to_fen()), Ok(start.to_fen()));
    for bad in ["", "X", "Wbbb", &format!("{hub}e"), "W bbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww"] {
        assert!(Draughts::from_hub(bad).is_err(), "{bad}");
    }
    let m = start.parse_hub_move("32-28").expect("legal");
    assert_eq!(Draughts::hub_move(m), "32-28");
    for bad in ["32-23", "32x28", "32-28-23", "", "x", "32-", "99-28"] {
        assert!(start.parse_hub_move(bad).is_err(), "{bad}");
    }
    // White 28 takes 23 and lands on 19... here 28x19 over 23, and a double capture written in any order.
    let g = Draughts::from_fen("W:W28:B23,14").expect("FEN");
    let legal = g.legal_moves();
    assert_eq!(legal.len(), 1);
    let text = Draughts::hub_move(legal[0]);
    assert_eq!(text, "28x10x14x23");
    assert_eq!(g.parse_hub_move("28x10x23x14"), Ok(legal[0]));
    for bad in ["28x10x23", "28x10", "28x10x14x23x23", "28-10", "28x10x14x23x19"] {
        assert!(g.parse_hub_move(bad).is_err(), "{bad}");
    }
}
