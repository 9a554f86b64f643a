//! Learning evaluation values from kibitz's own games, for every game whose evaluation is (mostly) linear in
//! its values: self-play positions labelled with the game's result and the search's score
//! ([`selfplay`]), possibly labelled again by a deeper search ([`label`]), and a logistic fit of the values to
//! them ([`fit`]). `examples/tune.rs` is the command
//! line over both; the commands that made every shipped weight file are in BENCHMARKS.md.
//!
//! A game takes part by implementing [`Tunable`]: its evaluation from the first side's view written as a
//! constant plus a weighted sum of its parameters, the parameters it ships, and the file format it reads them
//! from. The fit never sees a board, only these linear views, so one fitter serves every game.
//!
//! A game can also learn a small network on the same data ([`net`], [`net::NetTrainable`]): chess's corrects
//! its hand-written evaluation.

pub mod fit;
pub mod label;
pub mod net;
pub mod selfplay;
pub mod spsa;

use crate::game::Game;

/// A position's evaluation from the first side's view (White, Red), as the fitter sees it:
/// `constant + Σ coefficient · parameter[index]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinearEval {
    /// The part of the evaluation no parameter changes.
    pub constant: f32,
    /// `(parameter index, coefficient)`; an index may appear more than once.
    pub terms: Vec<(u32, f32)>,
}

impl LinearEval {
    pub fn clear(&mut self) {
        self.constant = 0.0;
        self.terms.clear();
    }

    /// Add `coefficient · parameter[index]` (nothing when the coefficient is zero).
    #[inline]
    pub fn add(&mut self, index: usize, coefficient: f32) {
        if coefficient != 0.0 {
            self.terms.push((index as u32, coefficient));
        }
    }

    /// The evaluation at parameters `p`.
    pub fn value(&self, p: &[f32]) -> f32 {
        self.constant + self.terms.iter().map(|&(i, c)| c * p[i as usize]).sum::<f32>()
    }
}

/// A game whose evaluation values can be learned.
pub trait Tunable: Game {
    /// How many values the fit learns.
    fn parameter_count() -> usize;

    /// The name of value `i` (for the fit's report and the written file).
    fn parameter_name(i: usize) -> String;

    /// The values the engine uses now (the fit starts from them).
    fn shipped_parameters() -> Vec<f32>;

    /// The evaluation of this position from the first side's view as a linear function of the values, written
    /// into `out`; false where the evaluation is not linear here (a score scaled toward a draw, say), and the
    /// position is left out of the fit.
    fn linear_eval(&self, out: &mut LinearEval) -> bool;

    /// The weight file the engine reads, holding the values `p` (rounded as the engine stores them).
    fn write_parameters(p: &[f32]) -> Result<Vec<u8>, String>;

    /// The values as the engine stores them, e.g. rounded to integers (to report the error the shipped file
    /// will really have).
    fn stored_parameters(p: &[f32]) -> Vec<f32> {
        // `+ 0.0` turns a rounded -0 into 0, so that a written file never says `-0`.
        p.iter().map(|x| x.round() + 0.0).collect()
    }

    /// Self-play records this position, about to play `best`: no capture pending that would make the
    /// static evaluation meaningless. The default: not in check, and the move played is not noisy.
    fn is_quiet_for_training(&self, best: Self::Move) -> bool {
        !self.in_check() && !self.is_noisy(best)
    }

    /// Self-play's settings for this game (adjudication, openings).
    fn self_play_settings() -> selfplay::Settings {
        selfplay::Settings::default()
    }
}
