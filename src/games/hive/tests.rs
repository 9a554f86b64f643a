//! Rules tests: perft against Mzinga's tables, each rule on positions of its own, notation round trips.

use super::*;

fn perft_of(kind: &str, depth: u32) -> u64 {
    let mut g = Hive::from_game_string(kind).unwrap_or_else(|e| panic!("{kind}: {e}"));
    g.perft(depth)
}

#[test]
fn perft_shallow() {
    let table: [(&str, [u64; 4]); 8] = [
        ("Base", [4, 96, 1440, 21600]),
        ("Base+M", [5, 150, 2610, 45414]),
        ("Base+L", [5, 150, 2610, 45414]),
        ("Base+P", [5, 150, 2610, 45414]),
        ("Base+ML", [6, 216, 4320, 86400]),
        ("Base+MP", [6, 216, 4320, 86400]),
        ("Base+LP", [6, 216, 4320, 86400]),
        ("Base+MLP", [7, 294, 6678, 151686]),
    ];
    for (kind, counts) in table {
        for (i, &n) in counts.iter().enumerate() {
            assert_eq!(perft_of(kind, i as u32 + 1), n, "{kind} depth {}", i + 1);
        }
    }
}
