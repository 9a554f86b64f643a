//! Judging moves: a value for each position, the loss a move costs its player, a class for it, and each
//! player's summary. Pure functions of the evaluations; no game, no search.
//!
//! Classes follow the lichess convention: a move's cost is the drop of the mover's winning chances,
//! `2 / (1 + exp(-0.00368208 · cp)) - 1` (centi-units clamped to ±1000, a forced win counting as +1), and
//! drops of at least 0.1, 0.2 and 0.3 are an inaccuracy, a mistake and a blunder. A move after which the
//! mover has a forced win is "mate found"; a move that lets a forced win go is "mate missed". The GUIDE
//! convention (draughts and checkers GUIs) is kept beside it: a move whose loss in centi-units reaches the
//! threshold is flagged. The per-move accuracy is lichess's formula on the drop of the win percentage.

use serde::{Deserialize, Serialize};

use crate::game::{GameEnd, Outcome, Score, Side};

/// The slope of the win-chance curve (per centi-unit).
pub const WIN_CHANCE_SLOPE: f64 = 0.003_682_08;

/// Centi-unit evaluations are clamped to this before they are compared (a forced win counts as this much).
pub const CP_CAP: i32 = 1000;

/// Win-chance drops from which a move is an inaccuracy, a mistake, a blunder.
pub const INACCURACY: f64 = 0.1;
pub const MISTAKE: f64 = 0.2;
pub const BLUNDER: f64 = 0.3;

/// The winning chances (-1 lost, 0 even, +1 won) of `cp` centi-units.
pub fn win_chance(cp: i32) -> f64 {
    let cp = f64::from(cp.clamp(-CP_CAP, CP_CAP));
    2.0 / (1.0 + (-WIN_CHANCE_SLOPE * cp).exp()) - 1.0
}

/// What a position is worth to one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// Centi-units.
    Cp(i32),
    /// A forced end in this many plies: positive when this side wins.
    Mate(i32),
    /// The game is over: this side has won.
    Won,
    /// The game is over: this side has lost.
    Lost,
    /// The game is over: drawn.
    Drawn,
}

impl Value {
    /// A search's score for the side to move.
    pub fn of_score(score: Score) -> Value {
        match score {
            Score::Cp(cp) => Value::Cp(cp),
            Score::Mate(plies) => Value::Mate(plies),
        }
    }

    /// A finished game's value for the side to move.
    pub fn of_end(end: GameEnd, to_move: Side) -> Value {
        match end.outcome {
            Outcome::Win(side) if side == to_move => Value::Won,
            Outcome::Win(_) => Value::Lost,
            Outcome::Draw => Value::Drawn,
        }
    }

    /// The same position from the other side.
    pub fn negate(self) -> Value {
        match self {
            Value::Cp(cp) => Value::Cp(-cp),
            Value::Mate(n) => Value::Mate(-n),
            Value::Won => Value::Lost,
            Value::Lost => Value::Won,
            Value::Drawn => Value::Drawn,
        }
    }

    /// Winning chances in [-1, 1].
    pub fn chance(self) -> f64 {
        match self {
            Value::Cp(cp) => win_chance(cp),
            Value::Mate(n) if n > 0 => 1.0,
            Value::Mate(_) => -1.0,
            Value::Won => 1.0,
            Value::Lost => -1.0,
            Value::Drawn => 0.0,
        }
    }

    /// Centi-units, a forced result counting as ±[`CP_CAP`].
    pub fn capped_cp(self) -> i32 {
        match self {
            Value::Cp(cp) => cp.clamp(-CP_CAP, CP_CAP),
            Value::Mate(n) if n > 0 => CP_CAP,
            Value::Mate(_) => -CP_CAP,
            Value::Won => CP_CAP,
            Value::Lost => -CP_CAP,
            Value::Drawn => 0,
        }
    }

    /// This side has a forced win (or has won).
    pub fn is_winning_by_force(self) -> bool {
        matches!(self, Value::Won) || matches!(self, Value::Mate(n) if n > 0)
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Value::Cp(cp) => write!(f, "{cp:+}"),
            Value::Mate(n) if n > 0 => write!(f, "a win in {n} plies"),
            Value::Mate(n) => write!(f, "a loss in {} plies", -n),
            Value::Won => f.write_str("a won game"),
            Value::Lost => f.write_str("a lost game"),
            Value::Drawn => f.write_str("a drawn game"),
        }
    }
}

/// What a move was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// The engine's own choice.
    Best,
    /// Another move that costs less than an inaccuracy.
    Good,
    Inaccuracy,
    Mistake,
    Blunder,
    /// After it, the mover wins by force.
    MateFound,
    /// The mover had a forced win and let it go.
    MateMissed,
}

impl Class {
    pub const ALL: [Class; 7] = [
        Class::Best,
        Class::Good,
        Class::Inaccuracy,
        Class::Mistake,
        Class::Blunder,
        Class::MateFound,
        Class::MateMissed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Class::Best => "best",
            Class::Good => "good",
            Class::Inaccuracy => "inaccuracy",
            Class::Mistake => "mistake",
            Class::Blunder => "blunder",
            Class::MateFound => "mate_found",
            Class::MateMissed => "mate_missed",
        }
    }

    /// The numeric annotation glyph an export writes: `?!` $6, `?` $2, `??` $4.
    pub fn nag(self) -> Option<u8> {
        match self {
            Class::Inaccuracy => Some(6),
            Class::Mistake | Class::MateMissed => Some(2),
            Class::Blunder => Some(4),
            _ => None,
        }
    }

    /// Whether an export shows the better line after such a move.
    pub fn wants_better_line(self) -> bool {
        matches!(self, Class::Inaccuracy | Class::Mistake | Class::Blunder | Class::MateMissed)
    }

    /// A capitalised word for comments.
    pub fn label(self) -> &'static str {
        match self {
            Class::Best => "Best move",
            Class::Good => "Good move",
            Class::Inaccuracy => "Inaccuracy",
            Class::Mistake => "Mistake",
            Class::Blunder => "Blunder",
            Class::MateFound => "Forced win",
            Class::MateMissed => "Missed a forced win",
        }
    }
}

/// The verdict on one move, from the mover's point of view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Judgement {
    pub before: Value,
    pub after: Value,
    /// Centi-units the move cost (0 for the engine's own choice), at most 2 × [`CP_CAP`].
    pub loss: i32,
    /// The drop of the winning chances, in [0, 2].
    pub drop: f64,
    pub class: Class,
    /// The loss reaches the GUIDE threshold.
    pub over_threshold: bool,
    /// lichess's per-move accuracy, 0-100.
    pub accuracy: f64,
}

/// Judge a move: `before` is the mover's value of the position before it (the best line), `after` the
/// mover's value of the position it leads to, `played_best` whether it was the engine's own choice.
pub fn judge(before: Value, after: Value, played_best: bool, threshold: i32) -> Judgement {
    let (loss, drop) = if played_best {
        (0, 0.0)
    } else {
        ((before.capped_cp() - after.capped_cp()).max(0), (before.chance() - after.chance()).max(0.0))
    };
    let class = if after.is_winning_by_force() {
        Class::MateFound
    } else if before.is_winning_by_force() && !played_best {
        Class::MateMissed
    } else if drop >= BLUNDER {
        Class::Blunder
    } else if drop >= MISTAKE {
        Class::Mistake
    } else if drop >= INACCURACY {
        Class::Inaccuracy
    } else if played_best {
        Class::Best
    } else {
        Class::Good
    };
    // Win percentages (0-100): 50 + 50 × chance; the drop between them drives the accuracy.
    let percent_drop = 50.0 * drop;
    let accuracy = (103.1668 * (-0.04354 * percent_drop).exp() - 3.1669).clamp(0.0, 100.0);
    Judgement { before, after, loss, drop, class, over_threshold: threshold > 0 && loss >= threshold, accuracy }
}

/// One player's moves summed up.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PlayerSummary {
    pub moves: u32,
    pub best: u32,
    pub good: u32,
    pub inaccuracies: u32,
    pub mistakes: u32,
    pub blunders: u32,
    pub mates_found: u32,
    pub mates_missed: u32,
    /// Moves whose loss reached the threshold.
    pub over_threshold: u32,
    /// Mean loss per move, centi-units.
    pub average_loss: f64,
    /// Mean per-move accuracy, 0-100.
    pub accuracy: f64,
}

impl PlayerSummary {
    /// Sum up the judgements of one player's moves.
    pub fn of<'a>(judgements: impl IntoIterator<Item = &'a Judgement>) -> PlayerSummary {
        let mut s = PlayerSummary::default();
        let (mut loss, mut accuracy) = (0i64, 0.0);
        for j in judgements {
            s.moves += 1;
            loss += i64::from(j.loss);
            accuracy += j.accuracy;
            s.over_threshold += u32::from(j.over_threshold);
            match j.class {
                Class::Best => s.best += 1,
                Class::Good => s.good += 1,
                Class::Inaccuracy => s.inaccuracies += 1,
                Class::Mistake => s.mistakes += 1,
                Class::Blunder => s.blunders += 1,
                Class::MateFound => s.mates_found += 1,
                Class::MateMissed => s.mates_missed += 1,
            }
        }
        if s.moves > 0 {
            s.average_loss = round1(loss as f64 / f64::from(s.moves));
            s.accuracy = round1(accuracy / f64::from(s.moves));
        }
        s
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn win_chances_follow_the_curve() {
        assert_eq!(win_chance(0), 0.0);
        assert!((win_chance(100) - 0.1820).abs() < 1e-3, "{}", win_chance(100));
        assert!((win_chance(-300) + 0.5022).abs() < 1e-3, "{}", win_chance(-300));
        assert_eq!(win_chance(5000), win_chance(1000));
        assert_eq!(Value::Mate(3).chance(), 1.0);
        assert_eq!(Value::Mate(-2).chance(), -1.0);
    }

    #[test]
    fn classes_by_win_chance_drop() {
        // +50 to -20: drop ≈ 0.13 → inaccuracy.
        let j = judge(Value::Cp(50), Value::Cp(-20), false, 100);
        assert_eq!((j.class, j.loss, j.over_threshold), (Class::Inaccuracy, 70, false));
        assert_eq!(j.class.nag(), Some(6));
        // +50 to -120: drop ≈ 0.30 → blunder, flagged at threshold 100.
        let j = judge(Value::Cp(50), Value::Cp(-120), false, 100);
        assert_eq!((j.class, j.loss, j.over_threshold), (Class::Blunder, 170, true));
        // +30 to -60: drop ≈ 0.16 → inaccuracy; +30 to -90: ≈ 0.22 → mistake.
        assert_eq!(judge(Value::Cp(30), Value::Cp(-90), false, 0).class, Class::Mistake);
        // Deep in a won position a pawn costs little: +900 to +700 is good, not a mistake.
        assert_eq!(judge(Value::Cp(900), Value::Cp(700), false, 0).class, Class::Good);
        // The engine's own move is best and costs nothing, even if the deeper look after it differs.
        let j = judge(Value::Cp(40), Value::Cp(-10), true, 1);
        assert_eq!((j.class, j.loss, j.accuracy.round()), (Class::Best, 0, 100.0));
    }

    #[test]
    fn forced_wins_found_and_missed() {
        assert_eq!(judge(Value::Cp(200), Value::Mate(5), false, 0).class, Class::MateFound);
        assert_eq!(judge(Value::Mate(3), Value::Won, true, 0).class, Class::MateFound);
        let j = judge(Value::Mate(3), Value::Cp(400), false, 100);
        assert_eq!((j.class, j.loss, j.over_threshold), (Class::MateMissed, 600, true));
        // Walking into a forced loss is a blunder.
        assert_eq!(judge(Value::Cp(0), Value::Mate(-4), false, 0).class, Class::Blunder);
        assert_eq!(judge(Value::Cp(10), Value::Lost, false, 0).class, Class::Blunder);
    }

    #[test]
    fn summaries_count_and_average() {
        let js = [
            judge(Value::Cp(20), Value::Cp(20), true, 100),
            judge(Value::Cp(50), Value::Cp(-120), false, 100),
            judge(Value::Cp(10), Value::Cp(0), false, 100),
        ];
        let s = PlayerSummary::of(&js);
        assert_eq!((s.moves, s.best, s.good, s.blunders, s.over_threshold), (3, 1, 1, 1, 1));
        assert_eq!(s.average_loss, 60.0);
        assert!(s.accuracy > 0.0 && s.accuracy < 100.0);
        assert_eq!(PlayerSummary::of(&[]).moves, 0);
    }
}
