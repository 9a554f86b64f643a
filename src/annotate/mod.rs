//! Batch annotation: every move of whole games judged — the evaluation before and after it, the loss for the
//! mover, a class, the better line — as persisted jobs that share the worker pool with interactive requests.
//!
//! * [`judge`]: the verdict on one move from the evaluations of the positions around it (no game, no search);
//! * [`runner`]: jobs as rows in the store from the first byte, their positions evaluated one after the other
//!   (each game backwards, so the shared transposition table is warm with the positions that follow), from
//!   the analysis cache when it already knows one, at low priority in the pool, each result written as it
//!   finishes so that a restarted server resumes a job where it stopped;
//! * [`report`]: a job's results as JSON, as readable text, and as the game's own annotated format (PGN/PDN
//!   with `[%eval]` comments, NAGs and better lines) when the game has one.
//!
//! The module is generic over [`Game`]; the store keeps games and results as JSON text in the game's main
//! notation ([`StoredRecord`], [`PositionEval`]).

pub mod judge;
pub mod report;
mod runner;

use serde::{Deserialize, Serialize};

use crate::game::{Game, GameEnd, GameRecord, MoveRemarks, Outcome, Remarks, play_moves};
use crate::pool::Priority;
use crate::search::Limits;
use crate::store::{CachedAnalysis, CachedScore};
pub use runner::{
    Annotator, AnnotatorConfig, DEFAULT_LEASE, DEFAULT_POLL, ErrorJson, Progress, SubmitError, Submitted,
};

/// The default GUIDE threshold, in centi-units (one man).
pub const DEFAULT_THRESHOLD: i32 = 100;

/// How a job's positions are searched and judged (stored with the job, so a resumed job goes on alike).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub movetime_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    /// GUIDE's convention: a move losing at least this many centi-units is flagged (0: never).
    pub threshold: i32,
    /// `low` (the default: batch work yields to interactive requests) or `normal`.
    pub priority: JobPriority,
    /// The external engine the positions are searched with (`None`: the game's default when the job was made,
    /// kibitz's own if there was none). A resumed job uses the same engine, or fails saying it is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// The limits of the submission lowered to the server's maxima (the settings above are the ones used).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clamped: Vec<crate::analysis::Clamped>,
}

/// The pool priority of a job's searches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum JobPriority {
    #[default]
    Low,
    Normal,
}

/// Read from a string only, as [`crate::analysis::CacheMode`].
impl TryFrom<String> for JobPriority {
    type Error = String;

    fn try_from(text: String) -> Result<JobPriority, String> {
        match text.as_str() {
            "low" => Ok(JobPriority::Low),
            "normal" => Ok(JobPriority::Normal),
            _ => Err(format!("unknown variant `{text}`, expected `low` or `normal`")),
        }
    }
}

impl Default for Settings {
    /// The game's analysis depth is not known here: no limit given means depth 1 (see [`Settings::limits`]).
    fn default() -> Self {
        Settings {
            depth: None,
            movetime_ms: None,
            nodes: None,
            threshold: DEFAULT_THRESHOLD,
            priority: JobPriority::Low,
            engine: None,
            clamped: Vec::new(),
        }
    }
}

impl Settings {
    /// The search limits of one position.
    pub fn limits(&self) -> Limits {
        let mut limits = Limits::default();
        if let Some(ms) = self.movetime_ms {
            limits.movetime = Some(std::time::Duration::from_millis(ms));
        } else if let Some(nodes) = self.nodes {
            limits.nodes = Some(nodes);
        } else {
            limits.depth = Some(self.depth.unwrap_or(1).max(1));
        }
        limits
    }

    pub fn pool_priority(&self) -> Priority {
        match self.priority {
            JobPriority::Low => Priority::Low,
            JobPriority::Normal => Priority::Normal,
        }
    }
}

/// A game as a job stores it: positions and moves in the game's main notations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRecord {
    pub tags: Vec<(String, String)>,
    /// The position before the first move, in the game's main position format.
    pub start: String,
    /// The moves in the game's main notation.
    pub moves: Vec<String>,
    pub result: Option<String>,
    /// The line of the submitted text where the game began.
    pub line: usize,
    /// What the record's author wrote besides the moves ([`GameRecord::remarks`]); absent when it wrote nothing.
    #[serde(default, skip_serializing_if = "Remarks::is_empty")]
    pub remarks: Remarks,
    /// The comment after each move, as jobs stored them before glyphs and variations were kept (read into
    /// `remarks`, never written).
    #[serde(default, skip_serializing)]
    pub comments: Vec<Option<String>>,
}

impl StoredRecord {
    /// The stored form of a record read from a client.
    pub fn of<G: Game>(record: &GameRecord<G>) -> Result<StoredRecord, String> {
        let start = record.start.format_position(None).map_err(|e| e.to_string())?;
        let mut game = record.start.clone();
        let mut moves = Vec::with_capacity(record.moves.len());
        for &m in &record.moves {
            moves.push(game.format_move(m));
            game.make(m);
        }
        Ok(StoredRecord {
            tags: record.tags.clone(),
            start,
            moves,
            result: record.result.clone(),
            line: record.line,
            remarks: record.remarks.clone(),
            comments: Vec::new(),
        })
    }

    /// The record again, every move checked.
    pub fn replay<G: Game>(&self) -> Result<GameRecord<G>, String> {
        let start = G::parse_position(&self.start, None).map_err(|e| format!("stored start position: {e}"))?;
        let mut game = start.clone();
        let moves = play_moves(&mut game, &self.moves).map_err(|e| format!("stored moves: {e}"))?;
        let mut remarks = self.remarks.clone();
        if remarks.is_empty() && !self.comments.is_empty() {
            remarks.moves =
                self.comments.iter().map(|c| MoveRemarks { comment: c.clone(), ..MoveRemarks::default() }).collect();
        }
        Ok(GameRecord { tags: self.tags.clone(), start, moves, result: self.result.clone(), line: self.line, remarks })
    }
}

/// How a finished game ended, from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndResult {
    Win,
    Loss,
    Draw,
}

/// One evaluated position of a job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PositionEval {
    /// From the side to move's point of view; absent when the game is over here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<CachedScore>,
    /// The game is over here: how it ended for the side to move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<EndResult>,
    /// Why the game is over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The engine's move, main notation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best: Option<String>,
    /// The best line, main notation.
    #[serde(default)]
    pub line: Vec<String>,
    pub depth: u32,
    pub nodes: u64,
    pub time_ms: u64,
    /// Answered from the analysis cache.
    pub cached: bool,
}

impl PositionEval {
    /// A position where the game is over.
    pub fn ended<G: Game>(game: &G, end: GameEnd) -> PositionEval {
        let result = match end.outcome {
            Outcome::Draw => EndResult::Draw,
            Outcome::Win(side) if side == game.side_to_move() => EndResult::Win,
            Outcome::Win(_) => EndResult::Loss,
        };
        PositionEval {
            score: None,
            end: Some(result),
            reason: Some(end.reason.to_string()),
            best: None,
            line: Vec::new(),
            depth: 0,
            nodes: 0,
            time_ms: 0,
            cached: false,
        }
    }

    /// A search result (fresh or from the cache). `None` when it has no line to judge by.
    pub fn searched(result: &CachedAnalysis, cached: bool) -> Option<PositionEval> {
        let first = result.lines.first()?;
        Some(PositionEval {
            score: Some(first.score),
            end: None,
            reason: None,
            best: result.bestmove.clone().or_else(|| first.moves.first().cloned()),
            line: first.moves.clone(),
            depth: result.depth,
            nodes: if cached { 0 } else { result.nodes },
            time_ms: if cached { 0 } else { result.time_ms },
            cached,
        })
    }

    /// A search that gave no line to judge by: kibitz's own always gives one where the game is not over, but an
    /// external engine may report no evaluation (UHP has none; Hub and the Checkers Protocol leave it optional).
    /// Such a position has no value, and the moves around it are not judged.
    pub fn unjudged(result: &CachedAnalysis) -> PositionEval {
        PositionEval {
            score: None,
            end: None,
            reason: None,
            best: result.bestmove.clone(),
            line: Vec::new(),
            depth: result.depth,
            nodes: result.nodes,
            time_ms: result.time_ms,
            cached: false,
        }
    }

    /// Whether this stored evaluation can be `position`'s: over where the game is over, and otherwise its move
    /// and line legal there. The store is read as untrusted (a row written by hand or by another program).
    pub fn check<G: Game>(&self, position: &G) -> Result<(), String> {
        match (position.outcome(), self.end) {
            (Some(_), None) => return Err("an evaluation where the game is over".into()),
            (None, Some(_)) => return Err("the game's end where it goes on".into()),
            (Some(_), Some(_)) => return Ok(()),
            (None, None) => {}
        }
        if let Some(best) = &self.best {
            crate::analysis::check_best(position, best)?;
        }
        crate::analysis::check_line(position, &self.line).map_err(|e| format!("line: {e}"))
    }

    /// The value for the side to move, when the position has one (see [`PositionEval::unjudged`]).
    pub fn value(&self) -> Option<judge::Value> {
        match (self.end, self.score) {
            (Some(EndResult::Win), _) => Some(judge::Value::Won),
            (Some(EndResult::Loss), _) => Some(judge::Value::Lost),
            (Some(EndResult::Draw), _) => Some(judge::Value::Drawn),
            (None, Some(CachedScore::Cp(cp))) => Some(judge::Value::Cp(cp)),
            (None, Some(CachedScore::Mate(n))) => Some(judge::Value::Mate(n)),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::RecordBudget;
    use crate::games::chess::Chess;

    #[test]
    fn a_stored_record_keeps_the_records_remarks() {
        let text = "{Intro} 1. e4! {[%clk 0:01:00]} e5 (1... c5 {Sicilian} $5) 2. Nf3 *";
        let record = Chess::parse_records(text, Some("pgn"), &mut RecordBudget::new(1, 10))
            .expect("read")
            .remove(0)
            .expect("the game");
        let stored = StoredRecord::of(&record).expect("stored");
        let json = serde_json::to_string(&stored).expect("json");
        assert!(!json.contains("\"comments\""), "{json}");
        let back: StoredRecord = serde_json::from_str(&json).expect("read back");
        let replayed = back.replay::<Chess>().expect("replay");
        assert_eq!(replayed.remarks, record.remarks);
        assert_eq!(replayed.remarks.before.as_deref(), Some("Intro"));
        assert_eq!(replayed.remarks.moves[0].nags, [1]);
        assert_eq!(replayed.remarks.moves[1].variations, ["(1... c5 {Sicilian} $5)"]);
    }

    #[test]
    fn a_job_stored_before_remarks_keeps_its_comments() {
        // Jobs stored by the version that kept comments only (session 96) wrote them as `comments`.
        let json = r#"{"tags":[],"start":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "moves":["e2e4","e7e5"],"result":"*","line":1,"comments":[null,"[%clk 0:02:58]"]}"#;
        let stored: StoredRecord = serde_json::from_str(json).expect("an older job");
        let record = stored.replay::<Chess>().expect("replay");
        assert_eq!(record.remarks.moves.len(), 2);
        assert_eq!(record.remarks.moves[0], MoveRemarks::default());
        assert_eq!(record.remarks.moves[1].comment.as_deref(), Some("[%clk 0:02:58]"));
    }
}
