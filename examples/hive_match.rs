//! A self-play match between two Hive evaluations at a fixed search depth: the candidate
//! (`Evaluation::Pressure`) against the default (`Evaluation::Classic`).
//!
//! ```text
//! cargo run --release --example hive_match -- [games] [depth] [seed]     # defaults: 100 games, depth 3, seed 1
//! ```
//!
//! Games come in pairs: each opening (two to four random plies from the Base+MLP start, from the seed) is
//! played twice with the colours swapped. A game still running after 160 plies counts as a draw. Prints
//! each game's result and the total from the candidate's point of view.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use kibitz::game::{Game, Outcome, Side};
use kibitz::games::hive::{Evaluation, GameType, Hive};
use kibitz::matchplay::Rng;
use kibitz::search::{self, Limits, SearchOptions, TranspositionTable};

const MAX_PLIES: usize = 160;

fn opening(rng: &mut Rng) -> Hive {
    loop {
        let mut g = Hive::new(GameType::MLP);
        let plies = 2 + rng.next_u64() % 3;
        for _ in 0..plies {
            let moves = g.legal_moves();
            let m = moves[(rng.next_u64() % moves.len() as u64) as usize];
            g.make(m);
        }
        if g.outcome().is_none() {
            return g;
        }
    }
}

/// Play one game; the result for the candidate evaluation: 1 win, 0.5 draw, 0 loss.
fn play(start: &Hive, current_is: Side, depth: u32) -> (f64, usize, String) {
    let mut g = start.clone();
    let tts = [Arc::new(TranspositionTable::new(16)), Arc::new(TranspositionTable::new(16))];
    let stop = Arc::new(AtomicBool::new(false));
    let options = SearchOptions { threads: 1, ..SearchOptions::default() };
    for ply in 0..MAX_PLIES {
        if let Some(end) = g.outcome() {
            let r = match end.outcome {
                Outcome::Draw => 0.5,
                Outcome::Win(side) if side == current_is => 1.0,
                Outcome::Win(_) => 0.0,
            };
            return (r, ply, g.state_string().to_string());
        }
        let mover_current = g.side_to_move() == current_is;
        let mut searched = g.clone();
        searched.set_evaluation(if mover_current { Evaluation::Pressure } else { Evaluation::Classic });
        let tt = &tts[usize::from(!mover_current)];
        let done = search::search(&searched, &Limits::depth(depth), &options, tt, &stop, &mut |_| {});
        let Some(m) = done.best else { break };
        g.make(m);
    }
    (0.5, MAX_PLIES, "Unfinished".to_string())
}

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let games = args.first().copied().unwrap_or(100).max(2);
    let depth = args.get(1).copied().unwrap_or(3) as u32;
    let mut rng = Rng(args.get(2).copied().unwrap_or(1));
    let (mut wins, mut draws, mut losses) = (0, 0, 0);
    let mut i = 0;
    while i < games {
        let start = opening(&mut rng);
        for current_is in [Side::First, Side::Second] {
            let (r, plies, state) = play(&start, current_is, depth);
            match r {
                1.0 => wins += 1,
                0.0 => losses += 1,
                _ => draws += 1,
            }
            i += 1;
            println!(
                "game {i:>3} candidate plays {} result {r} after {plies} plies ({state}) opening {}",
                if current_is == Side::First { "white" } else { "black" },
                start.game_string()
            );
        }
    }
    let n = (wins + draws + losses) as f64;
    let score = (wins as f64 + draws as f64 / 2.0) / n;
    let elo = if score > 0.0 && score < 1.0 { -400.0 * (1.0 / score - 1.0).log10() } else { f64::NAN };
    println!(
        "Pressure vs Classic at depth {depth}: +{wins} ={draws} -{losses} of {} games, score {:.1}%, about {elo:+.0} Elo",
        wins + draws + losses,
        score * 100.0
    );
}
