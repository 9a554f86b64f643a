//! Chess's evaluation weights as the tuner ([`crate::tuning`]) learns them: value `2i` is weight `i`'s
//! middlegame half, `2i + 1` its endgame half (weights in [`NAMES`] order), the evaluation's trace
//! ([`trace`]) giving each half's coefficient.

use std::fmt::Write;

use super::Chess;
use super::eval::{COUNT, NAMES, PHASE_MAX, WEIGHTS, trace};
use crate::game::Game;
use crate::tuning::{LinearEval, Tunable, selfplay};

impl Tunable for Chess {
    fn parameter_count() -> usize {
        2 * COUNT
    }

    fn parameter_name(i: usize) -> String {
        format!("{} ({})", NAMES[i / 2], if i.is_multiple_of(2) { "middlegame" } else { "endgame" })
    }

    fn shipped_parameters() -> Vec<f32> {
        WEIGHTS.iter().flat_map(|s| [s.0 as f32, s.1 as f32]).collect()
    }

    /// False where the drawish-ending rule (no pawns, less than a rook ahead) could scale the score at the
    /// shipped weights, for either side.
    fn linear_eval(&self, out: &mut LinearEval) -> bool {
        let t = trace(self.board());
        if t.scale(&WEIGHTS, 1.0) != 1.0 || t.scale(&WEIGHTS, -1.0) != 1.0 {
            return false;
        }
        out.clear();
        let mg = t.phase as f32 / PHASE_MAX as f32;
        for i in 0..COUNT {
            out.add(2 * i, t.mg[i] * mg);
            out.add(2 * i + 1, t.eg[i] * (1.0 - mg));
        }
        true
    }

    /// `weights.rs`: Rust source, one commented weight a line.
    fn write_parameters(p: &[f32]) -> Result<Vec<u8>, String> {
        if p.len() != Self::parameter_count() {
            return Err(format!("{} values; chess has {}", p.len(), Self::parameter_count()));
        }
        let stored = Self::stored_parameters(p);
        let mut s = String::from(HEADER);
        for (i, name) in NAMES.iter().enumerate() {
            let _ = writeln!(s, "    S({}, {}), // {name}", stored[2 * i], stored[2 * i + 1]);
        }
        s.push_str("];\n");
        Ok(s.into_bytes())
    }

    /// Not in check, the move played no capture or promotion, and no capture that wins material by static
    /// exchange.
    fn is_quiet_for_training(&self, best: Self::Move) -> bool {
        if self.in_check() || self.is_noisy(best) {
            return false;
        }
        let mut noisy = Vec::new();
        self.generate_noisy(&mut noisy);
        noisy.iter().all(|&m| self.see(m) <= 0)
    }

    fn self_play_settings() -> selfplay::Settings {
        selfplay::Settings {
            opening_min: 6,
            opening_spread: 5,
            opening_max_score: 200,
            opening_nodes: 2000,
            win_score: 1000,
            win_plies: 6,
            draw_score: 10,
            draw_plies: 16,
            draw_from: 80,
            max_plies: 400,
        }
    }
}

const HEADER: &str = "\
//! Chess's evaluation weights: (middlegame, endgame) pairs in centipawns, named as `eval::NAMES`. Generated
//! by `examples/tune.rs` (`tune chess ... -o src/games/chess/weights.rs`); the commands that made these
//! values are in BENCHMARKS.md.

use super::eval::{S, Weights};

pub const WEIGHTS: Weights = [
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Side;

    #[test]
    fn the_shipped_file_is_what_the_writer_writes() {
        let written = Chess::write_parameters(&Chess::shipped_parameters()).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), include_str!("weights.rs"));
    }

    #[test]
    fn the_linear_view_is_the_engines_evaluation() {
        let p = Chess::shipped_parameters();
        let mut eval = LinearEval::default();
        for fen in [
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "2r3k1/pp3pp1/4p2p/3p4/3P4/P3P2P/1P3PP1/3R2K1 b - - 0 1",
        ] {
            let game = Chess::from_fen(fen).unwrap();
            assert!(game.linear_eval(&mut eval), "{fen}");
            let white = eval.value(&p);
            let stm = game.static_eval();
            let engine = if game.side_to_move() == Side::First { stm } else { -stm };
            assert!((white - engine as f32).abs() <= 3.0, "{fen}: linear {white}, evaluation {engine}");
        }
        // Bare minor pieces: the drawish-ending rule scales the score, which is not linear.
        assert!(!Chess::from_fen("4k3/8/8/8/8/8/8/3NK3 w - - 0 1").unwrap().linear_eval(&mut eval));
    }
}
