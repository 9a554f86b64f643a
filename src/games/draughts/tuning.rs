//! The pattern values as the tuner ([`crate::tuning`]) learns them: value `2i` is stored entry `i`'s
//! full-board value, `2i + 1` its empty-board value (entry `i = region * CONFIGS + config`, regions 0-7; the
//! mirrored regions 8-15 count against the same entries). The hand-written terms are the constant part.

use super::Draughts;
use super::patterns::{self, CONFIGS, FULL, STORED};
use crate::tuning::{LinearEval, Tunable};

impl Tunable for Draughts {
    fn parameter_count() -> usize {
        STORED * CONFIGS * 2
    }

    fn parameter_name(i: usize) -> String {
        let entry = i / 2;
        let phase = if i.is_multiple_of(2) { "full" } else { "empty" };
        format!("region {} configuration {} ({phase})", entry / CONFIGS, entry % CONFIGS)
    }

    fn shipped_parameters() -> Vec<f32> {
        patterns::shipped_values().iter().flat_map(|v| [v[0] as f32, v[1] as f32]).collect()
    }

    fn linear_eval(&self, out: &mut LinearEval) -> bool {
        let Some(t) = self.training_terms() else { return false };
        let full = t.men.min(FULL) as f32 / FULL as f32;
        out.constant = t.hand as f32;
        for &(i, sign) in &t.patterns {
            out.add(2 * i as usize, sign as f32 * full);
            out.add(2 * i as usize + 1, sign as f32 * (1.0 - full));
        }
        true
    }

    fn stored_parameters(p: &[f32]) -> Vec<f32> {
        p.iter().map(|x| x.round().clamp(-2000.0, 2000.0)).collect()
    }

    fn write_parameters(p: &[f32]) -> Result<Vec<u8>, String> {
        if p.len() != Self::parameter_count() {
            return Err(format!("{} values; draughts has {}", p.len(), Self::parameter_count()));
        }
        let stored = Self::stored_parameters(p);
        let values: Vec<[i16; 2]> = stored.chunks(2).map(|v| [v[0] as i16, v[1] as i16]).collect();
        let bytes = patterns::write_table(&values);
        patterns::read_table(&bytes).map_err(|e| format!("the written table does not read back: {e}"))?;
        Ok(bytes)
    }

    /// Draughts records a position only when neither side can capture.
    fn is_quiet_for_training(&self, _best: Self::Move) -> bool {
        self.is_quiet()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;

    #[test]
    fn the_linear_view_is_the_engines_evaluation() {
        let p = Draughts::shipped_parameters();
        let written = Draughts::write_parameters(&p).unwrap();
        assert_eq!(patterns::read_table(&written).unwrap()[..STORED * CONFIGS], patterns::shipped_values()[..]);
        let mut eval = LinearEval::default();
        for game in [Draughts::from_fen("W:W31,32,33,40,45:B1,2,3,19,20").unwrap(), Draughts::start()] {
            eval.clear();
            assert!(game.linear_eval(&mut eval));
            let white = eval.value(&p);
            let engine = if game.side_to_move() == crate::game::Side::First { game.evaluate() } else { -game.evaluate() };
            // The engine rounds the interpolation once; the linear view does not round.
            assert!((white - engine as f32).abs() <= 1.5, "{}: linear {white}, engine {engine}", game.to_fen());
        }
    }
}
