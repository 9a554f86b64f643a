//! Differential test of the English checkers move generator against pydraughts.
//!
//! `tests/data/checkers_oracle.txt` was written by `tests/oracle/checkers_pydraughts.py`: one position a line,
//! its FEN, a tab, and every legal move as its full path and captured squares (`11x18x25:15,22`, `9-13:`).
//! pydraughts lists each jump path separately, as we do, so the comparison is exact: the same set of
//! (start, every landing square, captured set). With `KIBITZ_ORACLE=1` the script is also run live on fresh
//! random positions (python3 with pydraughts must then be installed).

use std::collections::BTreeSet;
use std::process::Command;

use kibitz::game::Game;
use kibitz::games::checkers::{Checkers, Move};

fn our_line(g: &Checkers) -> BTreeSet<String> {
    let mut moves = Vec::new();
    g.generate_moves(&mut moves);
    let set: BTreeSet<String> = moves.iter().map(|&m| describe(g, m)).collect();
    assert_eq!(set.len(), moves.len(), "duplicate moves generated in {}", g.to_fen());
    set
}

fn describe(g: &Checkers, m: Move) -> String {
    let caps: Vec<String> = m.captured_squares().iter().map(|s| s.to_string()).collect();
    format!("{}:{}", g.format_move(m), caps.join(","))
}

/// Compare every position of an oracle listing; returns the number of positions checked.
fn check_listing(text: &str, origin: &str) -> usize {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (fen, moves) = line.split_once('\t').unwrap_or_else(|| panic!("{origin}:{}: no tab", n + 1));
        let g = Checkers::from_fen(fen).unwrap_or_else(|e| panic!("{origin}:{}: {e}", n + 1));
        let want: BTreeSet<String> = moves.split_whitespace().map(str::to_string).collect();
        let got = our_line(&g);
        if got != want {
            let missing: Vec<_> = want.difference(&got).collect();
            let extra: Vec<_> = got.difference(&want).collect();
            failures.push(format!("{origin}:{}: {fen}: missing {missing:?}, extra {extra:?}", n + 1));
        }
        // Every move must also read back from its own notation.
        for m in g.legal_moves() {
            assert_eq!(g.parse_move(&g.format_move(m)), Ok(m), "{fen}: {}", g.format_move(m));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{} positions differ:\n{}", failures.len(), failures.join("\n"));
    checked
}

#[test]
fn fixture_agrees_with_pydraughts() {
    let text = include_str!("data/checkers_oracle.txt");
    let n = check_listing(text, "checkers_oracle.txt");
    assert!(n >= 300, "only {n} positions in the fixture");
}

#[test]
fn live_pydraughts() {
    if std::env::var("KIBITZ_ORACLE").as_deref() != Ok("1") {
        eprintln!("KIBITZ_ORACLE is not 1: live pydraughts comparison skipped");
        return;
    }
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() % 1_000_000)
        .unwrap_or(7);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracle/checkers_pydraughts.py");
    let out = Command::new("python3")
        .arg(script)
        .args(["--seed", &seed.to_string(), "--games", "3", "--placements", "100"])
        .output()
        .expect("KIBITZ_ORACLE=1 but python3 could not be run");
    assert!(
        out.status.success(),
        "KIBITZ_ORACLE=1 but the oracle script failed (is pydraughts installed?):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("oracle output is UTF-8");
    let n = check_listing(&text, &format!("live oracle, seed {seed}"));
    assert!(n >= 100, "the live oracle produced only {n} positions");
}
