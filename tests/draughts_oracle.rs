//! Differential test of the international draughts move generator against an independent Python library.
//!
//! `tests/data/draughts_oracle.txt` was written by `tests/oracle/draughts_pydraughts.py` with py-draughts
//! (and checked equal with pydraughts): one position a line, its FEN, a tab, and every legal move as
//! `<from>-<to>:` or `<from>x<to>:<captured squares>:<one full path>`. The rules make one move of every
//! (start, end, captured set), so that is what is compared; each full path must also read back as its move
//! in our PDN parser, and every move we write must read back as itself. With `KIBITZ_ORACLE=1` the script is
//! also run live on fresh random positions (python3 with py-draughts or pydraughts must then be installed).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use kibitz::game::Game;
use kibitz::games::draughts::{Draughts, Move};

fn key(m: Move) -> String {
    let caps: Vec<String> = m.captured_squares().iter().map(|s| s.to_string()).collect();
    let sep = if m.is_capture() { 'x' } else { '-' };
    format!("{}{sep}{}:{}", m.from_square(), m.to_square(), caps.join(","))
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
        let g = Draughts::from_fen(fen).unwrap_or_else(|e| panic!("{origin}:{}: {e}", n + 1));
        // Oracle: key -> one full path (empty for steps).
        let want: BTreeMap<String, String> = moves
            .split_whitespace()
            .map(|m| match m.rsplit_once(':') {
                Some((k, path)) if m.contains('x') => (k.to_string(), path.to_string()),
                _ => (m.to_string(), String::new()),
            })
            .collect();
        let legal = g.legal_moves();
        let got: BTreeSet<String> = legal.iter().map(|&m| key(m)).collect();
        assert_eq!(got.len(), legal.len(), "duplicate moves generated in {fen}");
        let want_keys: BTreeSet<String> = want.keys().cloned().collect();
        if got != want_keys {
            let missing: Vec<_> = want_keys.difference(&got).collect();
            let extra: Vec<_> = got.difference(&want_keys).collect();
            failures.push(format!("{origin}:{}: {fen}: missing {missing:?}, extra {extra:?}", n + 1));
            continue;
        }
        for &m in &legal {
            let text = g.format_move(m);
            assert_eq!(g.parse_move(&text), Ok(m), "{fen}: our {text}");
            let guide = g.format_move_as(m, "guide").unwrap();
            assert_eq!(g.parse_guide_move(&guide), Ok(m), "{fen}: our GUIDE {guide}");
            let path = &want[&key(m)];
            if !path.is_empty() {
                assert_eq!(g.parse_move(path), Ok(m), "{fen}: the oracle's path {path}");
            }
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{} positions differ:\n{}", failures.len(), failures.join("\n"));
    checked
}

#[test]
fn fixture_agrees_with_the_oracle() {
    let text = include_str!("data/draughts_oracle.txt");
    let n = check_listing(text, "draughts_oracle.txt");
    assert!(n >= 500, "only {n} positions in the fixture");
}

#[test]
fn live_oracle() {
    if std::env::var("KIBITZ_ORACLE").as_deref() != Ok("1") {
        eprintln!("KIBITZ_ORACLE is not 1: live draughts oracle comparison skipped");
        return;
    }
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() % 1_000_000)
        .unwrap_or(7);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracle/draughts_pydraughts.py");
    let out = Command::new("python3")
        .arg(script)
        .args(["--seed", &seed.to_string(), "--games", "2", "--placements", "80"])
        .output()
        .expect("KIBITZ_ORACLE=1 but python3 could not be run");
    assert!(
        out.status.success(),
        "KIBITZ_ORACLE=1 but the oracle script failed (is py-draughts or pydraughts installed?):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("oracle output is UTF-8");
    let n = check_listing(&text, &format!("live oracle, seed {seed}"));
    assert!(n >= 100, "the live oracle produced only {n} positions");
}
