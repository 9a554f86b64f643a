//! `kibitz perft hive` through the real executable: the position argument takes a GameTypeString or a
//! GameString, and the counts are Mzinga's. (Every value of Mzinga's table to depth 6 is checked in the
//! rules' unit tests, `games::hive::tests::perft_to_depth_5` and `perft_depth_6`.)

use std::process::Command;

fn perft(args: &[&str]) -> Vec<(u32, u64)> {
    let out = Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(["perft", "hive"])
        .args(args)
        .env("KIBITZ_LOG", "warn")
        .output()
        .expect("run kibitz perft");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    text.lines()
        .map(|line| {
            let t: Vec<&str> = line.split_whitespace().collect();
            assert_eq!((t[0], t[2]), ("depth", "nodes"), "{line}");
            (t[1].parse().expect("depth"), t[3].parse().expect("nodes"))
        })
        .collect()
}

#[test]
fn perft_hive_5_base_mlp() {
    assert_eq!(perft(&["5", "--position", "Base+MLP"]), [(1, 7), (2, 294), (3, 6678), (4, 151686), (5, 5427108)]);
}

#[test]
fn perft_hive_from_a_gamestring() {
    // The four first moves' subtrees add up to the table's depth 3 (and 4) from the start.
    let (mut d2, mut d3) = (0, 0);
    for piece in ["wS1", "wB1", "wG1", "wA1"] {
        let counts = perft(&["3", "--position", &format!("Base;InProgress;Black[1];{piece}")]);
        assert_eq!(counts[0], (1, 24), "{piece}");
        d2 += counts[1].1;
        d3 += counts[2].1;
    }
    assert_eq!((d2, d3), (1440, 21600));
    assert_eq!(perft(&["1", "--position", "Base;NotStarted;White[1]"]), [(1, 4)]);
}

#[test]
fn perft_hive_counts_every_spider_walk() {
    // Two walks of the spider bS1 cross one cell at different steps; 26 if the first walk claims the cell.
    let position = "Base;InProgress;Black[5];wS1;bB1 -wS1;wB1 wS1\\;bS1 /bB1;wS2 /wB1;bG1 -bS1;wQ /wS2;bQ -bB1;wB2 -wQ";
    assert_eq!(perft(&["1", "--position", position]), [(1, 28)]);
}

#[test]
fn perft_hive_rejects_a_bad_position() {
    let out = Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .args(["perft", "hive", "1", "--position", "Base;InProgress;White[2];wQ"])
        .env("KIBITZ_LOG", "warn")
        .output()
        .expect("run kibitz perft");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Queen Bee"), "{}", String::from_utf8_lossy(&out.stderr));
}
