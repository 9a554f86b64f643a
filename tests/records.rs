//! Game records: the fixtures in `tests/data/records/` read through the public interface, and the exported
//! chess PGN read back by an independent parser (python-chess). Without python-chess the check is skipped
//! with a note, unless `CI` is set (then it fails).
//!
//! `generate_fixtures` (ignored) is how the engine-played fixtures were made: random openings, then the
//! engine at a small depth; it writes them under `target/record-fixtures/`.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use kibitz::game::{Game, GameRecord, PlyNote, RecordBudget, Side};
use kibitz::games::checkers::Checkers;
use kibitz::games::chess::Chess;
use kibitz::games::draughts::Draughts;
use kibitz::games::hive::{GameType, Hive};
use kibitz::games::xiangqi::Xiangqi;
use kibitz::search::{Limits, SearchOptions, TranspositionTable, search};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/data/records/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn records<G: Game>(name: &str, format: Option<&str>) -> Vec<GameRecord<G>> {
    G::parse_records(&fixture(name), format, &mut RecordBudget::new(10_000, 1_000_000))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{name}: {e}")))
        .collect()
}

#[test]
fn every_fixture_reads() {
    let chess = Chess::parse_records(&fixture("chess_collection.pgn"), None, &mut RecordBudget::new(10_000, 1_000_000))
        .unwrap();
    assert_eq!(chess.len(), 4);
    assert_eq!(chess.iter().filter(|r| r.is_err()).count(), 1);
    let d = records::<Draughts>("draughts.pdn", None);
    assert_eq!(d.len(), 1);
    assert!(d[0].moves.len() >= 40);
    assert!(d[0].moves.iter().any(|m| m.is_capture()));
    assert!(!records::<Draughts>("draughts_guide.txt", None).is_empty());
    let c = records::<Checkers>("checkers.pdn", None);
    assert_eq!(c.len(), 1);
    assert!(c[0].moves.len() >= 40);
    let h = records::<Hive>("hive.txt", None);
    assert_eq!(h.len(), 2);
    assert!(h.iter().any(|r| r.start.game_type() == GameType::parse("Base+MLP").unwrap()));
    assert!(!records::<Xiangqi>("xiangqi.pgn", None).is_empty());
    assert!(!records::<Xiangqi>("xiangqi_moves.txt", None).is_empty());
}

#[test]
fn exported_pgn_reads_back_in_python_chess() {
    let have = Command::new("python3").args(["-c", "import chess.pgn"]).status().is_ok_and(|s| s.success());
    if !have {
        assert!(std::env::var_os("CI").is_none(), "python-chess is required when CI is set (pip install chess)");
        eprintln!("note: python-chess not installed (pip install chess): exported PGN not checked");
        return;
    }
    let mut export = String::new();
    let mut expected = Vec::new();
    for rec in Chess::parse_records(&fixture("chess_collection.pgn"), None, &mut RecordBudget::new(10_000, 1_000_000))
        .unwrap()
        .into_iter()
        .flatten()
    {
        // A note on every move: an eval comment, a NAG and a better line when there is another move.
        let mut g = rec.start.clone();
        let mut notes = Vec::new();
        let mut sans = Vec::new();
        for (i, &m) in rec.moves.iter().enumerate() {
            let mut legal = Vec::new();
            g.generate_moves(&mut legal);
            let other: Vec<_> = legal.iter().copied().filter(|&o| o != m).take(1).collect();
            let nag = [None, Some(6), Some(2), Some(4)][i % 4];
            notes.push(PlyNote {
                comment: Some(format!("[%eval {}.{:02}] note {i}", i % 3, i)),
                nag,
                variation: other,
                ..PlyNote::empty()
            });
            sans.push(g.move_to_san(m));
            g.make(m);
        }
        expected.push((rec.start.to_fen(), sans, rec.moves.len()));
        export.push_str(&Chess::export_record(&rec, &notes).unwrap());
        export.push('\n');
    }
    let script = r#"
import sys, chess.pgn
while True:
    game = chess.pgn.read_game(sys.stdin)
    if game is None:
        break
    if game.errors:
        print("ERROR", game.errors)
    board = game.board()
    sans = []
    evals = 0
    for node in game.mainline():
        sans.append(board.san(node.move))
        board.push(node.move)
        if node.eval() is not None:
            evals += 1
    print(game.board().fen(), "|", " ".join(sans), "|", evals, "|", len(game.variations[0].variations) if game.variations else 0)
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    child.stdin.take().unwrap().write_all(export.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), expected.len(), "{text}\n{export}");
    for (line, (fen, sans, n)) in lines.iter().zip(&expected) {
        assert!(!line.starts_with("ERROR"), "{line}\n{export}");
        let parts: Vec<&str> = line.split(" | ").map(str::trim).collect();
        assert_eq!(parts[0], fen, "{export}");
        assert_eq!(parts[1], sans.join(" "), "{export}");
        assert_eq!(parts[2], n.to_string(), "every move's [%eval] is read: {export}");
    }
}

// ---------------------------------------------------------------- fixture generator

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// Play from `start`: `random` random plies, then the engine at `depth`, until the game ends or `max` plies.
fn self_play<G: Game>(
    start: &G,
    seed: u64,
    random: usize,
    depth: u32,
    max: usize,
) -> (Vec<G::Move>, Option<Side>, bool) {
    let mut rng = Rng(seed);
    let mut g = start.clone();
    let mut moves = Vec::new();
    let tt = Arc::new(TranspositionTable::new(16));
    let stop = Arc::new(AtomicBool::new(false));
    let mut legal = Vec::new();
    while moves.len() < max {
        if let Some(end) = g.outcome() {
            let winner = match end.outcome {
                kibitz::game::Outcome::Win(s) => Some(s),
                kibitz::game::Outcome::Draw => None,
            };
            return (moves, winner, true);
        }
        g.generate_moves(&mut legal);
        let m = if moves.len() < random {
            legal[rng.below(legal.len())]
        } else {
            let done = search(&g, &Limits::depth(depth), &SearchOptions::default(), &tt, &stop, &mut |_| {});
            done.best.unwrap_or(legal[0])
        };
        g.make(m);
        moves.push(m);
    }
    (moves, None, false)
}

fn strip_annotator(text: &str) -> String {
    text.lines().filter(|l| !l.starts_with("[Annotator ")).map(|l| format!("{l}\n")).collect()
}

fn tags(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
#[ignore = "writes fixtures under target/record-fixtures/"]
fn generate_fixtures() {
    let dir = format!("{}/target/record-fixtures", env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| std::fs::write(format!("{dir}/{name}"), text).unwrap();

    // Draughts: one PDN game and GUIDE game strings.
    let start = Draughts::start();
    let (moves, winner, over) = self_play(&start, 7, 4, 6, 90);
    let result = match (over, winner) {
        (false, _) => "*",
        (true, None) => "1-1",
        (true, Some(Side::First)) => "2-0",
        (true, Some(Side::Second)) => "0-2",
    };
    let rec = GameRecord {
        tags: tags(&[
            ("Event", "Club match"),
            ("Date", "2024.05.11"),
            ("White", "Engine A"),
            ("Black", "Engine B"),
            ("Result", result),
            ("GameType", "20"),
        ]),
        start: start.clone(),
        moves: moves.clone(),
        result: Some(result.to_string()),
        line: 1,
        remarks: Default::default(),
    };
    write("draughts.pdn", &strip_annotator(&Draughts::export_record(&rec, &[]).unwrap()));
    let mut guide = Draughts::format_guide_game(&start, &moves[..40.min(moves.len())]);
    guide.push('\n');
    let mut mid = start.clone();
    for &m in &moves[..20.min(moves.len())] {
        mid.make(m);
    }
    let (more, _, _) = self_play(&mid, 11, 2, 4, 24);
    guide.push_str(&Draughts::format_guide_game(&mid, &more));
    guide.push('\n');
    write("draughts_guide.txt", &guide);

    // Checkers.
    let start = Checkers::start();
    let (moves, _, over) = self_play(&start, 5, 3, 8, 80);
    let result = if over { "1/2-1/2" } else { "*" };
    let rec = GameRecord {
        tags: tags(&[
            ("Event", "Friendly"),
            ("Date", "2024.05.12"),
            ("Black", "Engine A"),
            ("White", "Engine B"),
            ("Result", result),
            ("GameType", "21"),
        ]),
        start,
        moves,
        result: Some(result.to_string()),
        line: 1,
        remarks: Default::default(),
    };
    write("checkers.pdn", &strip_annotator(&Checkers::export_record(&rec, &[]).unwrap()));

    // Hive: Base and Base+MLP GameStrings.
    let mut hive = String::from("# UHP GameStrings, one a line\n");
    for (ty, seed) in [("Base", 3u64), ("Base+MLP", 9)] {
        let start = Hive::new(GameType::parse(ty).unwrap());
        let (moves, _, _) = self_play(&start, seed, 6, 2, 30);
        let mut g = start.clone();
        for m in moves {
            g.make(m);
        }
        hive.push_str(&g.game_string());
        hive.push('\n');
    }
    write("hive.txt", &hive);

    // Xiangqi: an ICCS PGN and FEN + moves.
    let start = Xiangqi::start();
    let (moves, winner, over) = self_play(&start, 13, 2, 5, 60);
    let result = match (over, winner) {
        (false, _) => "*",
        (true, None) => "1/2-1/2",
        (true, Some(Side::First)) => "1-0",
        (true, Some(Side::Second)) => "0-1",
    };
    let t = tags(&[
        ("Game", "Chinese Chess"),
        ("Event", "Friendly"),
        ("Date", "2024.05.13"),
        ("Red", "Engine A"),
        ("Black", "Engine B"),
        ("Result", result),
        ("Format", "ICCS"),
    ]);
    let pgn = kibitz::games::pgn::write_game(&t, &start, 1, &moves, &[], result, |g: &Xiangqi, m| g.format_move(m));
    write("xiangqi.pgn", &pgn);
    let mut text = String::new();
    let mut mid = start.clone();
    for &m in &moves[..10.min(moves.len())] {
        mid.make(m);
    }
    let (more, _, _) = self_play(&mid, 17, 0, 4, 24);
    text.push_str(&mid.to_fen());
    text.push('\n');
    let mut g = mid.clone();
    for (i, &m) in more.iter().enumerate() {
        text.push_str(&g.format_move_as(m, "coord").unwrap());
        text.push(if i % 8 == 7 { '\n' } else { ' ' });
        g.make(m);
    }
    text.push_str("\n\n");
    text.push_str(&start.to_fen());
    text.push('\n');
    for &m in &moves[..12.min(moves.len())] {
        text.push_str(&Xiangqi::move_to_iccs(m));
        text.push(' ');
    }
    text.push('\n');
    write("xiangqi_moves.txt", &text);
}

/// Every game's reader on mangled fixtures (bytes dropped, duplicated, swapped, lines cut): errors, never a
/// panic, and every record it accepts replays legally.
#[test]
fn mangled_records_never_panic() {
    fn check<G: Game>(text: &str) {
        for format in G::RECORD_FORMATS.iter().map(|f| Some(*f)).chain([None]) {
            let Ok(games) = G::parse_records(text, format, &mut RecordBudget::new(10_000, 1_000_000)) else { continue };
            for rec in games.into_iter().flatten() {
                let mut g = rec.start.clone();
                let mut legal = Vec::new();
                for &m in &rec.moves {
                    g.generate_moves(&mut legal);
                    assert!(legal.contains(&m));
                    g.make(m);
                }
                let _ = G::export_record(&rec, &[]);
            }
        }
    }
    let names = [
        "chess_collection.pgn",
        "draughts.pdn",
        "draughts_guide.txt",
        "checkers.pdn",
        "hive.txt",
        "xiangqi.pgn",
        "xiangqi_moves.txt",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for name in names {
        let text = fixture(name);
        let chars: Vec<char> = text.chars().collect();
        for _ in 0..60 {
            let mut v = chars.clone();
            for _ in 0..1 + rng.below(6) {
                let i = rng.below(v.len());
                let j = rng.below(v.len());
                match rng.below(4) {
                    0 => {
                        v.remove(i);
                    }
                    1 => v.insert(i, v[j]),
                    2 => v.swap(i, j),
                    _ => v.truncate(i),
                }
                if v.is_empty() {
                    break;
                }
            }
            let t: String = v.into_iter().collect();
            check::<Chess>(&t);
            check::<Draughts>(&t);
            check::<Checkers>(&t);
            check::<Hive>(&t);
            check::<Xiangqi>(&t);
        }
    }
}
