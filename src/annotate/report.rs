//! A job's results, read back from the store rows: as JSON (the API's status document), as readable text,
//! and in the game's own annotated format when it has one.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde::Serialize;

use super::judge::{Class, Judgement, PlayerSummary, judge};
use super::runner::ErrorJson;
use super::{EndResult, PositionEval, Settings, StoredRecord};
use crate::game::{Game, GameRecord, PlyNote, Side};
use crate::store::{JobGameRow, JobRow, PositionRow};

/// Longest better line an export writes, in plies.
pub const EXPORT_LINE_PLIES: usize = 8;

/// Positions done of positions to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ProgressView {
    pub done: u64,
    pub total: u64,
}

/// A value as the API writes it: `{"cp": n}`, `{"mate": n}` (plies, positive when the side wins) or
/// `{"result": "win"|"loss"|"draw"}` when the game is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EvalView {
    Cp(i32),
    Mate(i32),
    Result(EndResult),
}

/// One judged move.
#[derive(Clone, Debug, Serialize)]
pub struct MoveView {
    /// 1-based: the n-th move of the game.
    pub ply: u32,
    pub side: &'static str,
    #[serde(rename = "move")]
    pub played: String,
    /// The mover's value of the position before the move (its best line).
    pub eval_before: EvalView,
    /// The mover's value of the position after it.
    pub eval_after: EvalView,
    /// Centi-units the move cost its player.
    pub loss: i32,
    pub class: Class,
    /// The loss reaches the job's threshold (GUIDE's convention).
    pub over_threshold: bool,
    /// lichess's per-move accuracy, 0-100.
    pub accuracy: f64,
    /// The engine's move in the position before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best: Option<String>,
    /// The engine's line from the position before.
    pub best_line: Vec<String>,
    /// Depth of the search before the move.
    pub depth: u32,
}

/// One game of a job.
#[derive(Clone, Debug, Serialize)]
pub struct GameView {
    /// 0-based index in the submission.
    pub index: u32,
    /// queued, running, done, or failed (could not be read).
    pub status: &'static str,
    pub progress: ProgressView,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorJson>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// The moves judged so far (a move is judged once the positions before and after it are evaluated).
    pub moves: Vec<MoveView>,
    /// Each side's summary over the moves judged so far, by side name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub players: BTreeMap<&'static str, PlayerSummary>,
}

/// A job as `GET /v1/annotations/{id}` shows it.
#[derive(Clone, Debug, Serialize)]
pub struct JobView {
    pub id: String,
    pub game: String,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why nobody runs the job, while it is not over, when a server that let it go said (several servers on
    /// PostgreSQL: one lacking the job's external engine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<String>,
    pub engine: String,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub settings: Settings,
    pub progress: ProgressView,
    pub games: Vec<GameView>,
}

/// One game replayed with its evaluations and judgements (the common ground of every report).
struct Judged<G: Game> {
    record: GameRecord<G>,
    /// The side to move after each number of moves (positions themselves are made one at a time where they
    /// are needed: a game's positions all at once, each carrying the game's history, took memory growing with
    /// the square of its length, gigabytes for a legal game of a few thousand plies).
    sides: Vec<Side>,
    evals: Vec<Option<PositionEval>>,
    /// Per move: its judgement, when both positions around it are evaluated and have a value.
    judgements: Vec<Option<Judgement>>,
}

fn judged<G: Game>(
    stored: &StoredRecord,
    evals_by_ply: &HashMap<u32, PositionEval>,
    threshold: i32,
) -> Result<Judged<G>, String> {
    let record = stored.replay::<G>()?;
    let mut game = record.start.clone();
    let mut sides = Vec::with_capacity(record.moves.len() + 1);
    sides.push(game.side_to_move());
    for &m in &record.moves {
        game.make(m);
        sides.push(game.side_to_move());
    }
    let evals: Vec<Option<PositionEval>> =
        (0..sides.len()).map(|ply| evals_by_ply.get(&(ply as u32)).cloned()).collect();
    let judgements = (0..record.moves.len())
        .map(|k| {
            let (Some(before), Some(after)) = (&evals[k], &evals[k + 1]) else { return None };
            let (Some(before_value), Some(after_value)) = (before.value(), after.value()) else { return None };
            let same_side = sides[k] == sides[k + 1];
            let after_value = if same_side { after_value } else { after_value.negate() };
            let played_best = before.best.as_deref() == Some(stored.moves[k].as_str());
            Some(judge(before_value, after_value, played_best, threshold))
        })
        .collect();
    Ok(Judged { record, sides, evals, judgements })
}

fn eval_view(value: super::judge::Value) -> EvalView {
    use super::judge::Value;
    match value {
        Value::Cp(cp) => EvalView::Cp(cp),
        Value::Mate(n) => EvalView::Mate(n),
        Value::Won => EvalView::Result(EndResult::Win),
        Value::Lost => EvalView::Result(EndResult::Loss),
        Value::Drawn => EvalView::Result(EndResult::Draw),
    }
}

fn game_status(row: &JobGameRow, done: u64) -> &'static str {
    if row.error.is_some() {
        "failed"
    } else if done >= u64::from(row.positions) {
        "done"
    } else if done == 0 {
        "queued"
    } else {
        "running"
    }
}

/// Positions by game, decoded (an undecodable row is skipped: that position simply shows as not done).
fn evals_by_game(positions: &[PositionRow]) -> HashMap<u32, HashMap<u32, PositionEval>> {
    let mut out: HashMap<u32, HashMap<u32, PositionEval>> = HashMap::new();
    for p in positions {
        match serde_json::from_str::<PositionEval>(&p.result) {
            Ok(eval) => {
                out.entry(p.game_idx).or_default().insert(p.ply, eval);
            }
            Err(error) => tracing::warn!(%error, game = p.game_idx, ply = p.ply, "undecodable annotation result"),
        }
    }
    out
}

/// A job's stored settings. Undecodable ones (the runner fails such a job) are reported with the defaults,
/// and logged.
pub fn settings_of(job: &JobRow) -> Settings {
    serde_json::from_str(&job.settings).unwrap_or_else(|error| {
        tracing::warn!(job = %job.id, %error, "undecodable annotation settings; reporting with the defaults");
        Settings::default()
    })
}

/// The status document of a job with the results so far.
pub fn job_view<G: Game>(job: &JobRow, games: &[JobGameRow], positions: &[PositionRow]) -> JobView {
    job_view_with::<G>(job, games, positions, true)
}

/// [`job_view`] without the judged moves and players' summaries: what following a job's progress needs, without
/// replaying and judging every game at every look (found by an audit: a job of 119,000 positions took two to
/// three seconds of a core per look, and `kibitz annotate` looked twice a second).
pub fn job_progress<G: Game>(job: &JobRow, games: &[JobGameRow], positions: &[PositionRow]) -> JobView {
    job_view_with::<G>(job, games, positions, false)
}

fn job_view_with<G: Game>(job: &JobRow, games: &[JobGameRow], positions: &[PositionRow], moves: bool) -> JobView {
    let settings = settings_of(job);
    let evals = evals_by_game(positions);
    let empty = HashMap::new();
    let mut views = Vec::with_capacity(games.len());
    let (mut done_all, mut total_all) = (0u64, 0u64);
    for row in games {
        let game_evals = evals.get(&row.idx).unwrap_or(&empty);
        let done = game_evals.len() as u64;
        done_all += done;
        total_all += u64::from(row.positions);
        let mut view = GameView {
            index: row.idx,
            status: game_status(row, done),
            progress: ProgressView { done, total: u64::from(row.positions) },
            line: None,
            error: row.error.as_deref().and_then(|e| serde_json::from_str(e).ok()),
            tags: BTreeMap::new(),
            start: None,
            result: None,
            moves: Vec::new(),
            players: BTreeMap::new(),
        };
        let stored = row.record.as_deref().map(serde_json::from_str::<StoredRecord>);
        if let Some(Ok(stored)) = stored {
            view.line = Some(stored.line);
            view.tags = stored.tags.iter().cloned().collect();
            view.start = Some(stored.start.clone());
            view.result = stored.result.clone();
            if moves {
                match judged::<G>(&stored, game_evals, settings.threshold) {
                    Ok(j) => fill_moves(&mut view, &stored, &j),
                    Err(e) => {
                        let line = stored.line;
                        view.error = Some(ErrorJson { index: row.idx as usize, line, token: String::new(), message: e })
                    }
                }
            }
        }
        views.push(view);
    }
    JobView {
        id: job.id.clone(),
        game: job.game.clone(),
        status: job.status.as_str(),
        error: job.error.clone(),
        waiting: job.waiting.clone().filter(|_| !job.status.is_final()),
        // The external engine the job names judges its moves, not the kibitz that stored it (found by an audit).
        engine: settings
            .engine
            .clone()
            .filter(|e| !e.eq_ignore_ascii_case("kibitz"))
            .unwrap_or_else(|| job.engine.clone()),
        created_ms: job.created_ms,
        updated_ms: job.updated_ms,
        settings,
        progress: ProgressView { done: done_all, total: total_all },
        games: views,
    }
}

fn fill_moves<G: Game>(view: &mut GameView, stored: &StoredRecord, j: &Judged<G>) {
    let mut by_side: [Vec<Judgement>; 2] = [Vec::new(), Vec::new()];
    for (k, judgement) in j.judgements.iter().enumerate() {
        let (Some(judgement), Some(before)) = (judgement, &j.evals[k]) else { continue };
        let side = j.sides[k];
        by_side[side.index()].push(*judgement);
        view.moves.push(MoveView {
            ply: k as u32 + 1,
            side: G::side_name(side),
            played: stored.moves[k].clone(),
            eval_before: eval_view(judgement.before),
            eval_after: eval_view(judgement.after),
            loss: judgement.loss,
            class: judgement.class,
            over_threshold: judgement.over_threshold,
            accuracy: (judgement.accuracy * 10.0).round() / 10.0,
            best: before.best.clone(),
            best_line: before.line.clone(),
            depth: before.depth,
        });
    }
    for side in [Side::First, Side::Second] {
        if !by_side[side.index()].is_empty() {
            view.players.insert(G::side_name(side), PlayerSummary::of(&by_side[side.index()]));
        }
    }
}

/// A value written from one side's view as `[%eval]` does: pawns with two decimals, or `#n` in moves.
fn eval_command(value: super::judge::Value) -> Option<String> {
    use super::judge::Value;
    match value {
        Value::Cp(cp) => Some(format!("{:.2}", f64::from(cp) / 100.0)),
        Value::Mate(n) => {
            let moves = (n.abs() + 1) / 2;
            Some(if n > 0 { format!("#{moves}") } else { format!("#-{moves}") })
        }
        Value::Won | Value::Lost | Value::Drawn => None,
    }
}

/// The annotated games in the game's own format (PGN, PDN), or `None` when it has none.
pub fn export_native<G: Game>(games: &[JobGameRow], positions: &[PositionRow], threshold: i32) -> Option<String> {
    G::EXPORT_FORMAT?;
    let evals = evals_by_game(positions);
    let empty = HashMap::new();
    let mut out = String::new();
    for row in games {
        let Some(Ok(stored)) = row.record.as_deref().map(serde_json::from_str::<StoredRecord>) else { continue };
        let Ok(j) = judged::<G>(&stored, evals.get(&row.idx).unwrap_or(&empty), threshold) else { continue };
        // Each position made from the one before as the notes are written.
        let mut position = j.record.start.clone();
        let mut notes: Vec<PlyNote<G::Move>> = Vec::with_capacity(j.record.moves.len());
        for (k, &m) in j.record.moves.iter().enumerate() {
            notes.push(note(&j, k, &position));
            position.make(m);
        }
        let text = G::export_record(&j.record, &notes)?;
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    Some(out)
}

/// The note of the `k`-th move, played from `before` (the position after `k` moves).
fn note<G: Game>(j: &Judged<G>, k: usize, before_move: &G) -> PlyNote<G::Move> {
    let mut note = PlyNote::empty();
    let mut comment = String::new();
    if let Some(after) = &j.evals[k + 1] {
        let white = after.value().map(|v| if j.sides[k + 1] == G::WHITE_SIDE { v } else { v.negate() });
        if let Some(text) = white.and_then(eval_command) {
            let _ = write!(comment, "[%eval {text}]");
        } else if let Some(reason) = &after.reason {
            comment.push_str(reason);
        }
    }
    if let Some(judgement) = &j.judgements[k]
        && judgement.class.wants_better_line()
    {
        note.nag = judgement.class.nag();
        if !comment.is_empty() {
            comment.push(' ');
        }
        let _ = write!(comment, "{}.", judgement.class.label());
        if let Some(before) = &j.evals[k] {
            let mut game = before_move.clone();
            for text in before.line.iter().take(EXPORT_LINE_PLIES) {
                let Ok(m) = game.parse_move(text) else { break };
                note.variation.push(m);
                game.make(m);
            }
        }
    }
    // What the record said itself is kept beside kibitz's notes: its comment before the first move, its glyphs
    // and variations, its comment after the move (a clock, a remark) after kibitz's, where an evaluation command
    // gives way to kibitz's own.
    if k == 0 {
        note.before = j.record.remarks.before.clone();
    }
    let own = j.record.remarks.of_move(k);
    if let Some(own) = own {
        note.record_nags = own.nags.clone();
        note.record_variations = own.variations.clone();
    }
    if let Some(own) = own.and_then(|r| r.comment.as_deref()) {
        let own = if comment.starts_with("[%eval ") { without_command(own, "eval") } else { own.to_string() };
        if !own.is_empty() {
            if !comment.is_empty() {
                comment.push(' ');
            }
            comment.push_str(&own);
        }
    }
    note.comment = (!comment.is_empty()).then_some(comment);
    note
}

/// A comment without its `[%name ...]` commands (PGN's embedded commands, as lichess writes `[%eval 0.3]`).
fn without_command(comment: &str, name: &str) -> String {
    let open = format!("[%{name} ");
    let mut rest = comment;
    let mut kept = String::with_capacity(comment.len());
    while let Some(at) = rest.find(&open) {
        kept.push_str(&rest[..at]);
        match rest[at..].find(']') {
            Some(end) => rest = &rest[at + end + 1..],
            None => {
                rest = "";
            }
        }
    }
    kept.push_str(rest);
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn show(view: EvalView) -> String {
    match view {
        EvalView::Cp(cp) => format!("{:+.2}", f64::from(cp) / 100.0),
        EvalView::Mate(n) if n > 0 => format!("#{}", (n + 1) / 2),
        EvalView::Mate(n) => format!("#-{}", (-n + 1) / 2),
        EvalView::Result(EndResult::Win) => "won".into(),
        EvalView::Result(EndResult::Loss) => "lost".into(),
        EvalView::Result(EndResult::Draw) => "drawn".into(),
    }
}

/// A line of moves as text: separated by spaces, or by commas where a move holds a space (Hive's `wS1 -bQ`),
/// so that the moves can be told apart.
fn line_text(line: &[String]) -> String {
    line.join(if line.iter().any(|m| m.contains(' ')) { ", " } else { " " })
}

/// The job as readable text: each game's moves with their evaluations, classes and better moves, and each
/// side's summary.
pub fn export_text(view: &JobView) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kibitz annotation {} ({}, {}), {} of {} positions",
        view.id, view.game, view.status, view.progress.done, view.progress.total
    );
    for game in &view.games {
        let _ = writeln!(out);
        let mut title = format!("Game {}", game.index + 1);
        for tag in ["Event", "White", "Black", "Result"] {
            if let Some(value) = game.tags.get(tag) {
                let _ = write!(title, " | {tag}: {value}");
            }
        }
        let _ = writeln!(out, "{title}");
        if let Some(error) = &game.error {
            let _ = writeln!(out, "  not annotated: line {}: {}: `{}`", error.line, error.message, error.token);
            continue;
        }
        if let Some(start) = &game.start {
            let _ = writeln!(out, "  start: {start}");
        }
        let _ = writeln!(
            out,
            "  {:>4} {:<6} {:<14} {:>8} {:>8} {:>6}  {:<12} better",
            "move", "side", "played", "before", "after", "loss", "class"
        );
        for m in &game.moves {
            let better = if m.class.wants_better_line() {
                line_text(&m.best_line[..m.best_line.len().min(EXPORT_LINE_PLIES)])
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {:>4} {:<6} {:<14} {:>8} {:>8} {:>6}  {:<12} {}",
                m.ply,
                m.side,
                m.played,
                show(m.eval_before),
                show(m.eval_after),
                m.loss,
                m.class.as_str(),
                better
            );
        }
        for (side, s) in &game.players {
            let _ = writeln!(
                out,
                "  {side}: {} moves, {} inaccuracies, {} mistakes, {} blunders, {} over threshold, average loss {:.1}, accuracy {:.1}",
                s.moves, s.inaccuracies, s.mistakes, s.blunders, s.over_threshold, s.average_loss, s.accuracy
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::line_text;

    #[test]
    fn a_line_of_moves_that_hold_spaces_is_written_with_commas() {
        let line = |moves: &[&str]| line_text(&moves.iter().map(|m| m.to_string()).collect::<Vec<_>>());
        assert_eq!(line(&["e2e4", "e7e5"]), "e2e4 e7e5");
        // Found by an audit: `bA1 \\wS1 wA1 wS1-` could not be split back into Hive's moves.
        assert_eq!(line(&["bA1 \\wS1", "wA1 wS1-"]), "bA1 \\wS1, wA1 wS1-");
        assert_eq!(line(&[]), "");
    }
}
