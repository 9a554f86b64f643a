//! Self-play positions labelled again by a deeper search: each chosen line `POSITION;result;score` of a self-play
//! file ([`super::selfplay`]) is searched afresh at more nodes than its game was played at, and written again
//! with that search's score in place of the old one (the game's result kept), so that a training can learn
//! from searches deeper than the self-play's without playing its games again.
//!
//! The lines are chosen by their number in the input: every `every`-th line from the file's start (so that the
//! same work covers more games), from line `from` on. The output keeps the input's order whatever the number
//! of threads and is written a chunk at a time; a stopped run is taken up with `from` set to the last input
//! line its progress report names as done. A position the deeper search finds not quiet (its best move noisy,
//! or in check), mated, or over by the rules is left out, as self-play leaves such positions out.
//!
//! At 0 nodes ([`STATIC_NODES`]) no search is made: each line's score becomes the static evaluation of the
//! position (with the network the process loads), every line not over by the rules kept. A network trained on
//! those labels learns the evaluation itself, its hand-written part included, from as many positions as are
//! at hand (the labels cost no search).

use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{Tunable, fit};
use crate::game::{Score, Side};
use crate::search::{Limits, SearchOptions, TranspositionTable, search};

/// Each thread's transposition table (MiB), emptied before every position: as self-play's.
const LABEL_TABLE_MB: usize = 4;

/// The node count that asks for the static evaluation in place of a search.
pub const STATIC_NODES: u64 = 0;

/// Input lines handled between two writes of the output (and progress reports).
const CHUNK_LINES: usize = 20_000;

/// What a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Input lines chosen and searched.
    pub searched: usize,
    /// Lines written (the rest left out as not quiet, mated or over).
    pub written: usize,
}

/// A chosen line's outcome: the line to write (`None`: left out), or why the input line is bad.
type Outcome = Result<Option<String>, String>;

/// One input line read: the position, its text as written, and the game's result.
struct Labelled<G> {
    game: G,
    text: String,
    result: f32,
}

/// Read line `number` (1-based, for the error) of a self-play file, as the fit reads it ([`fit::parse_line`]).
fn parse_line<G: Tunable>(line: &str, number: usize) -> Result<Labelled<G>, String> {
    let (text, result, _) = fit::parse_line(line).map_err(|e| format!("line {number}: {e}"))?;
    let game = G::parse_position(text, None).map_err(|e| format!("line {number}: {e}"))?;
    Ok(Labelled { game, text: text.to_string(), result })
}

/// The deeper search's score of `game` from the first side's view, where the position is one self-play would
/// have written; with `nodes` 0, the static evaluation's (a teacher's labels for a network to learn the
/// evaluation from, [`STATIC_NODES`]).
fn deeper_score<G: Tunable>(game: &G, nodes: u64, tt: &Arc<TranspositionTable>, stop: &Arc<AtomicBool>) -> Option<i32> {
    if game.rule_end(0).is_some() {
        return None;
    }
    if nodes == STATIC_NODES {
        let e = game.evaluate();
        return Some(if game.side_to_move() == Side::First { e } else { -e });
    }
    tt.clear();
    let done = search(game, &Limits::nodes(nodes), &SearchOptions::default(), tt, stop, &mut |_| {});
    let best = done.best?;
    match done.lines.first()?.score {
        Score::Cp(cp) if game.is_quiet_for_training(best) => {
            Some(if game.side_to_move() == Side::First { cp } else { -cp })
        }
        _ => None,
    }
}

/// Label again the chosen lines of `input` (every `every`-th from the file's start, from line `from`, 0-based)
/// with a search of `nodes` nodes on `threads` threads, appending them to `out` in the input's order. A line
/// that is not `POSITION;result;score` stops the run with an error naming it; what was written before stays.
pub fn relabel<G: Tunable>(
    input: &str,
    out: &str,
    nodes: u64,
    every: usize,
    threads: usize,
    from: usize,
) -> Result<Tally, String> {
    let every = every.max(1);
    let text = std::fs::read_to_string(input).map_err(|e| format!("cannot read {input}: {e}"))?;
    let lines: Vec<&str> = text.lines().collect();
    let chosen: Vec<usize> = (from..lines.len()).filter(|i| i % every == 0).collect();
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)
        .map_err(|e| format!("cannot open {out}: {e}"))?;
    let mut file = BufWriter::new(file);
    let stop = Arc::new(AtomicBool::new(false));
    let tables: Vec<_> = (0..threads.max(1)).map(|_| Arc::new(TranspositionTable::new(LABEL_TABLE_MB))).collect();
    let start = Instant::now();
    let mut tally = Tally::default();
    for chunk in chosen.chunks(CHUNK_LINES.div_ceil(every)) {
        let results: Vec<Mutex<Option<Outcome>>> = chunk.iter().map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for tt in &tables {
                let (next, results, stop, lines) = (&next, &results, &stop, &lines);
                scope.spawn(move || {
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&i) = chunk.get(k) else { return };
                        let labelled = parse_line::<G>(lines[i], i + 1).map(|l| {
                            deeper_score(&l.game, nodes, tt, stop).map(|s| format!("{};{:.1};{s}\n", l.text, l.result))
                        });
                        *results[k].lock().unwrap() = Some(labelled);
                    }
                });
            }
        });
        for result in results {
            // A bad line ends the run; the lines before it are written first.
            let line = match result.into_inner().unwrap().expect("every chosen line is searched") {
                Ok(line) => line,
                Err(e) => {
                    file.flush().map_err(|e| format!("{out}: {e}"))?;
                    return Err(e);
                }
            };
            tally.searched += 1;
            if let Some(line) = line {
                file.write_all(line.as_bytes()).map_err(|e| format!("{out}: {e}"))?;
                tally.written += 1;
            }
        }
        file.flush().map_err(|e| format!("{out}: {e}"))?;
        let last = chunk.last().copied().unwrap_or(from);
        crate::errln!(
            "input lines to {} done (take up with from = {}): {} searched, {} written, {:.0} s",
            last + 1,
            last + 1,
            tally.searched,
            tally.written,
            start.elapsed().as_secs_f64()
        );
    }
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use crate::games::checkers::Checkers;
    use crate::matchplay::Rng;
    use crate::tuning::selfplay::{Settings, play_game, random_opening};

    /// A few short self-play games' lines, as `gen` writes them.
    fn self_play_lines() -> Vec<String> {
        let tt = Arc::new(TranspositionTable::new(1));
        let settings = Settings { max_plies: 40, ..Settings::default() };
        let mut lines = Vec::new();
        for g in 0..3 {
            let mut rng = Rng(40 + g);
            let opening: Checkers = random_opening(&mut rng, &settings, &tt);
            let played = play_game(opening, [300, 300], &settings, &tt);
            for (position, score) in &played.positions {
                lines.push(format!("{};{:.1};{score}", position.format_position(None).unwrap(), played.result));
            }
        }
        lines
    }

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("kibitz-label-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        dir
    }

    #[test]
    fn chosen_lines_are_searched_again_in_order() {
        let lines = self_play_lines();
        assert!(lines.len() > 20, "{}", lines.len());
        let input = temp("in");
        std::fs::write(&input, lines.join("\n") + "\n").unwrap();
        let (inp, every, from, nodes) = (input.to_str().unwrap(), 3, 4, 2000);
        let out = temp("out");
        let tally = relabel::<Checkers>(inp, out.to_str().unwrap(), nodes, every, 2, from).unwrap();
        let written = std::fs::read_to_string(&out).unwrap();
        // The same run on one thread writes the same file.
        let out1 = temp("out1");
        assert_eq!(relabel::<Checkers>(inp, out1.to_str().unwrap(), nodes, every, 1, from).unwrap(), tally);
        assert_eq!(std::fs::read_to_string(&out1).unwrap(), written);

        // Each chosen line in turn: its position and result kept, its score a fresh search's from the first
        // side's view, or left out.
        let tt = Arc::new(TranspositionTable::new(LABEL_TABLE_MB));
        let stop = Arc::new(AtomicBool::new(false));
        let mut expected = String::new();
        let mut changed = 0;
        let chosen: Vec<usize> = (from..lines.len()).filter(|i| i % every == 0).collect();
        for &i in &chosen {
            let mut fields = lines[i].split(';');
            let (text, result, old) = (fields.next().unwrap(), fields.next().unwrap(), fields.next().unwrap());
            let game = Checkers::parse_position(text, None).unwrap();
            if let Some(s) = deeper_score(&game, nodes, &tt, &stop) {
                expected.push_str(&format!("{text};{result};{s}\n"));
                changed += usize::from(s.to_string() != old);
            }
        }
        assert_eq!(written, expected);
        assert_eq!(tally.searched, chosen.len());
        assert_eq!(tally.written, written.lines().count());
        assert!(tally.written > chosen.len() / 2, "{tally:?}");
        // The deeper search does not simply copy the old scores.
        assert!(changed > 0);

        // A run taken up from a later line appends only the lines from there.
        let later = temp("later");
        relabel::<Checkers>(inp, later.to_str().unwrap(), nodes, every, 2, chosen[chosen.len() / 2]).unwrap();
        let rest = std::fs::read_to_string(&later).unwrap();
        assert!(!rest.is_empty() && rest.len() < written.len() && written.ends_with(&rest));
        for f in [input, out, out1, later] {
            let _ = std::fs::remove_file(f);
        }
    }

    #[test]
    fn zero_nodes_label_every_line_with_the_static_evaluation() {
        let lines = self_play_lines();
        let input = temp("static-in");
        std::fs::write(&input, lines.join("\n") + "\n").unwrap();
        let out = temp("static-out");
        let tally = relabel::<Checkers>(input.to_str().unwrap(), out.to_str().unwrap(), STATIC_NODES, 1, 2, 0).unwrap();
        assert_eq!(tally, Tally { searched: lines.len(), written: lines.len() });
        let written = std::fs::read_to_string(&out).unwrap();
        let mut differs = 0;
        for (old, new) in lines.iter().zip(written.lines()) {
            let (old_fields, new_fields): (Vec<&str>, Vec<&str>) = (old.split(';').collect(), new.split(';').collect());
            // The position and the result kept, the score the evaluation's from the first side's view.
            assert_eq!(old_fields[..2], new_fields[..2]);
            let game = Checkers::parse_position(new_fields[0], None).unwrap();
            let e = game.evaluate();
            let first = if game.side_to_move() == Side::First { e } else { -e };
            assert_eq!(new_fields[2], first.to_string(), "{new}");
            differs += usize::from(old_fields[2] != new_fields[2]);
        }
        // Not the searches' scores copied.
        assert!(differs > 0);
        let _ = std::fs::remove_file(input);
        let _ = std::fs::remove_file(out);
    }

    #[test]
    fn a_bad_line_is_named() {
        let input = temp("bad");
        let good = self_play_lines().remove(0);
        for (bad, says) in [
            ("no fields", "line 2: expected"),
            ("W:W21:B1;0.5;x", "line 2: score `x`"),
            ("W:W21:B1;0.7;12", "line 2: result `0.7`"),
            ("nonsense;1.0;12", "line 2:"),
        ] {
            std::fs::write(&input, format!("{good}\n{bad}\n")).unwrap();
            let out = temp("bad-out");
            let e = relabel::<Checkers>(input.to_str().unwrap(), out.to_str().unwrap(), 500, 1, 1, 0).unwrap_err();
            assert!(e.contains(says), "{e}");
            let _ = std::fs::remove_file(out);
        }
        let _ = std::fs::remove_file(input);
    }
}
