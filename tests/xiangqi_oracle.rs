//! Differential test of the xiangqi move generator against Fairy-Stockfish.
//!
//! `tests/data/xiangqi_oracle.txt` was written by `tests/oracle/xiangqi_fairy_stockfish.py`: one position a
//! line, its FEN, a tab, and every legal move in coordinates (`h2e2`, ranks 0-9 from Red's side). The
//! positions come from random games and from random placements of few pieces (checks, pins, generals on
//! one file, cannon screens). With `KIBITZ_ORACLE=1` the script is also run live on fresh random positions
//! (Debian's `fairy-stockfish` must then be installed).

use std::collections::BTreeSet;
use std::process::Command;

use kibitz::game::Game;
use kibitz::games::xiangqi::Xiangqi;

/// Compare every position of an oracle listing; returns the number of positions checked and how many of
/// them had the side to move in check.
fn check_listing(text: &str, origin: &str) -> (usize, usize) {
    let mut checked = 0;
    let mut in_check = 0;
    let mut failures = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (fen, moves) = line.split_once('\t').unwrap_or((line, ""));
        let g = Xiangqi::from_fen(fen).unwrap_or_else(|e| panic!("{origin}:{}: {e}", n + 1));
        let want: BTreeSet<String> = moves.split_whitespace().map(str::to_string).collect();
        let legal = g.legal_moves();
        let got: BTreeSet<String> = legal.iter().map(|&m| Xiangqi::move_to_coord(m)).collect();
        assert_eq!(got.len(), legal.len(), "duplicate moves generated in {fen}");
        if got != want {
            let missing: Vec<_> = want.difference(&got).collect();
            let extra: Vec<_> = got.difference(&want).collect();
            failures.push(format!("{origin}:{}: {fen}: missing {missing:?}, extra {extra:?}", n + 1));
        }
        assert_eq!(g.count_moves(), legal.len() as u64, "{fen}: count_moves");
        // Every move reads back from both notations, and the FEN reads back to the same position.
        for m in legal {
            assert_eq!(g.parse_move(&g.format_move(m)), Ok(m), "{fen}");
            assert_eq!(g.parse_move(&Xiangqi::move_to_coord(m)), Ok(m), "{fen}");
        }
        let again = Xiangqi::from_fen(&g.to_fen()).unwrap_or_else(|e| panic!("{fen}: own FEN: {e}"));
        assert_eq!(again.to_fen(), g.to_fen());
        in_check += g.in_check() as usize;
        checked += 1;
    }
    assert!(failures.is_empty(), "{} positions differ:\n{}", failures.len(), failures.join("\n"));
    (checked, in_check)
}

#[test]
fn fixture_agrees_with_fairy_stockfish() {
    let text = include_str!("data/xiangqi_oracle.txt");
    let (n, checks) = check_listing(text, "xiangqi_oracle.txt");
    assert!(n >= 500, "only {n} positions in the fixture");
    assert!(checks >= 20, "only {checks} positions in check in the fixture");
}

#[test]
fn live_fairy_stockfish() {
    if std::env::var("KIBITZ_ORACLE").as_deref() != Ok("1") {
        eprintln!("KIBITZ_ORACLE is not 1: live Fairy-Stockfish comparison skipped");
        return;
    }
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() % 1_000_000)
        .unwrap_or(7);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracle/xiangqi_fairy_stockfish.py");
    let out = Command::new("python3")
        .arg(script)
        .args(["--seed", &seed.to_string(), "--games", "2", "--placements", "100"])
        .output()
        .expect("KIBITZ_ORACLE=1 but python3 could not be run");
    assert!(
        out.status.success(),
        "KIBITZ_ORACLE=1 but the oracle script failed (is fairy-stockfish installed?):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("oracle output is UTF-8");
    let (n, _) = check_listing(&text, &format!("live oracle, seed {seed}"));
    assert!(n >= 100, "the live oracle produced only {n} positions");
}
