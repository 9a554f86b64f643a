//! The root: iterative deepening with aspiration windows and MultiPV (each line searched with the better ones
//! excluded), the search of the root moves, and the progress reports (`info` lines) of the main thread.

use std::time::Duration;

use super::params::{ASPIRATION_MAX_DELTA, ASPIRATION_MIN_DEPTH, MATE_STOP_MARGIN};
use super::searcher::{INF, MATE, MATE_BOUND, RootMove, Searcher};
use super::{Event, Info, Limits, Line, MAX_MULTIPV, ScoreBound, SearchOptions, to_score};
use crate::game::Game;

impl<G: Game> Searcher<'_, G> {
    /// Search the root moves from `first` on (the earlier ones are the better lines of MultiPV).
    pub(super) fn search_root(
        &mut self,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        first: usize,
        sink: &mut dyn FnMut(Event<G::Move>),
        currmove_after: Duration,
    ) -> i32 {
        let mut best = -INF;
        self.pv[0].clear();
        self.cutoffs[2] = 0;
        for i in first..self.root.len() {
            let m = self.root[i].m;
            if self.main && !currmove_after.is_zero() && self.shared.budget.elapsed() >= currmove_after {
                self.emit_currmove(sink, m, (i + 1 - first) as u32, depth as u32);
            }
            self.seldepth = self.seldepth.max(1);
            self.played[0] = G::move_key(m);
            self.game.make(m);
            let score = if i == first {
                -self.search(depth - 1, -beta, -alpha, 1, true)
            } else {
                let s = -self.search(depth - 1, -alpha - 1, -alpha, 1, true);
                if s > alpha && s < beta { -self.search(depth - 1, -beta, -alpha, 1, true) } else { s }
            };
            self.game.unmake();
            if self.stopped {
                return best;
            }
            let rm = &mut self.root[i];
            if i == first || score > alpha {
                rm.score = score;
                rm.upper = score <= alpha;
                rm.seldepth = self.seldepth;
                rm.pv.clear();
                rm.pv.push(m);
                rm.pv.extend_from_slice(&self.pv[1]);
                // A line that failed high ends at the reply that came nearest (see `search`): the table
                // continues it.
                if depth > 1 && (rm.pv.len() < 2 || score >= beta) {
                    let mut line = std::mem::take(&mut rm.pv);
                    self.extend_from_tt(&mut line, depth as usize);
                    self.root[i].pv = line;
                }
            } else {
                rm.score = -INF;
                rm.upper = false;
            }
            if score > best {
                best = score;
            }
            if score > alpha {
                alpha = score;
                if score >= beta {
                    break;
                }
            }
        }
        best
    }

    fn emit_currmove(&self, sink: &mut dyn FnMut(Event<G::Move>), m: G::Move, number: u32, depth: u32) {
        let elapsed = self.shared.budget.elapsed();
        let nodes = self.total_nodes();
        sink(Event::Info(Info {
            depth,
            seldepth: self.seldepth,
            multipv: 1,
            score: to_score(self.root[0].previous),
            bound: ScoreBound::Exact,
            nodes,
            nps: nps(nodes, elapsed),
            time_ms: elapsed.as_millis() as u64,
            pv: Vec::new(),
            currmove: Some(m),
            currmovenumber: Some(number),
            neval: self.total_neval(),
            hashfull: self.shared.tt.hashfull(),
        }));
    }

    fn line_info(&self, index: usize, depth: u32, bound: ScoreBound) -> Info<G::Move> {
        let rm = &self.root[index];
        let elapsed = self.shared.budget.elapsed();
        let nodes = self.total_nodes();
        let score = if rm.score == -INF { rm.previous } else { rm.score };
        Info {
            depth,
            seldepth: rm.seldepth.max(depth.min(1)),
            multipv: index as u32 + 1,
            score: to_score(score),
            bound,
            nodes,
            nps: nps(nodes, elapsed),
            time_ms: elapsed.as_millis() as u64,
            pv: rm.pv.clone(),
            currmove: None,
            currmovenumber: None,
            neval: self.total_neval(),
            hashfull: self.shared.tt.hashfull(),
        }
    }

    /// Stable sort of the root moves from `from` on, best score first (unsearched moves keep their order).
    fn sort_root(&mut self, from: usize) {
        self.root[from..].sort_by_key(|rm| std::cmp::Reverse(rm.score));
    }

    /// Iterative deepening. Helpers (`main == false`) start one ply deeper on odd threads and report nothing.
    pub(super) fn iterate(
        &mut self,
        limits: &Limits,
        options: &SearchOptions,
        offset: u32,
        sink: &mut dyn FnMut(Event<G::Move>),
    ) -> u32 {
        let max_depth = if limits.infinite || limits.depth.is_none() && !limits.is_unlimited() {
            (G::MAX_PLY - 1) as u32
        } else {
            limits.depth.unwrap_or(Limits::DEFAULT_DEPTH).clamp(1, (G::MAX_PLY - 1) as u32)
        };
        let multipv = options.multipv.clamp(1, MAX_MULTIPV).min(self.root.len());
        let mut depth = 1 + offset;
        let mut completed_depth = 0;
        while depth <= max_depth {
            self.root_depth = depth as i32;
            // Scores of the last iteration become the previous ones; a move this iteration does not search
            // to the end (a stop, or a fail low) keeps -INF and its place in the order.
            for rm in &mut self.root {
                if rm.score != -INF {
                    rm.previous = rm.score;
                    rm.previous_pv.clone_from(&rm.pv);
                }
                rm.score = -INF;
                rm.upper = false;
            }
            self.lines_finished = 0;
            for pv_index in 0..multipv {
                self.seldepth = 0;
                let previous = self.root[pv_index].previous;
                let mut delta = self.tuning.aspiration_delta;
                let (mut alpha, mut beta) = if depth >= ASPIRATION_MIN_DEPTH && previous.abs() < MATE_BOUND {
                    ((previous - delta).max(-INF), (previous + delta).min(INF))
                } else {
                    (-INF, INF)
                };
                loop {
                    let score = self.search_root(depth as i32, alpha, beta, pv_index, sink, options.currmove_after);
                    self.sort_root(pv_index);
                    if self.stopped {
                        break;
                    }
                    if score <= alpha {
                        if self.main {
                            sink(Event::Info(self.line_info(pv_index, depth, ScoreBound::Upper)));
                        }
                        beta = (alpha + beta) / 2;
                        alpha = (score - delta).max(-INF);
                    } else if score >= beta {
                        if self.main {
                            sink(Event::Info(self.line_info(pv_index, depth, ScoreBound::Lower)));
                        }
                        beta = (score + delta).min(INF);
                    } else {
                        break;
                    }
                    delta += delta;
                    if delta > ASPIRATION_MAX_DELTA {
                        alpha = -INF;
                        beta = INF;
                    }
                }
                self.sort_root(0);
                if self.stopped {
                    break;
                }
                self.lines_finished = pv_index + 1;
            }
            if self.stopped {
                break;
            }
            completed_depth = depth;
            self.completed = depth;
            if self.main && multipv > 1 {
                self.last_lines.clear();
                self.last_lines.extend(self.root[..multipv].iter().map(|rm| answer_line(rm, depth)));
            }
            if self.main {
                for i in 0..multipv {
                    sink(Event::Info(self.line_info(i, depth, ScoreBound::Exact)));
                }
                let elapsed = self.shared.budget.elapsed();
                let forced = self.root.len() == 1 && limits.clock.is_some();
                if forced || !self.shared.budget.next_iteration_fits(elapsed) {
                    break;
                }
                if self.shared.node_limit.is_some_and(|n| self.total_nodes() >= n) {
                    break;
                }
                // A decided game: once the iterations reach well past the end, deeper ones only repeat it.
                let best = score_of(&self.root[0]);
                if !limits.infinite && multipv == 1 && best.abs() >= MATE_BOUND {
                    let plies = (MATE - best.abs()) as u32;
                    if depth >= 2 * plies + MATE_STOP_MARGIN {
                        break;
                    }
                }
            }
            depth += 1;
        }
        completed_depth
    }
}

pub(super) fn nps(nodes: u64, elapsed: Duration) -> u64 {
    let micros = elapsed.as_micros().max(1) as u64;
    nodes.saturating_mul(1_000_000) / micros
}

/// The final answer's lines, best first: `multipv` of them (no more than there are moves), from the main
/// thread's root moves after its search, the deepest iteration it `completed`, the lines of MultiPV the next
/// iteration `finished` before a stop, and the `last` completed iteration's lines.
///
/// Where the last iteration was completed, or there is one line, each root move in order with its
/// [`reported`] score, at the completed depth. A MultiPV search stopped inside an iteration: first the lines
/// that iteration finished, at its depth (each at least as good there as every move after it), with the
/// line it was searching if it has found a move for it at that depth (a fail high, or a score inside the
/// window), then the other moves' lines of the last completed iteration in that iteration's order, at its
/// depth. The root's order alone would mix the iterations: moves the stopped iteration had not reached keep
/// their old places below the moves it had, whatever their last scores.
pub(super) fn answer_lines<M: Copy + PartialEq>(
    root: &[RootMove<M>],
    multipv: usize,
    completed: u32,
    finished: usize,
    last: &[Line<M>],
) -> Vec<Line<M>> {
    let multipv = multipv.min(root.len());
    if multipv <= 1 || finished >= multipv || last.is_empty() {
        return root[..multipv].iter().map(|rm| answer_line(rm, completed)).collect();
    }
    // The root is sorted by this iteration's scores: the finished lines, and the best move so far of the line
    // being searched, come first among the moves with such a score.
    let mut lines: Vec<Line<M>> = root
        .iter()
        .filter(|rm| searched_this_iteration(rm))
        .take(finished + 1)
        .map(|rm| answer_line(rm, completed + 1))
        .collect();
    let fresh = lines.len();
    let listed = |lines: &[Line<M>], m: M| lines.iter().any(|l| l.pv.first() == Some(&m));
    for line in last {
        if lines.len() < multipv && line.pv.first().is_some_and(|&m| !listed(&lines[..fresh], m)) {
            lines.push(line.clone());
        }
    }
    // The last iteration's lines are `multipv` distinct moves, so this only fills in after a change of
    // `multipv` between iterations, which does not happen; it keeps the count whatever the input.
    for rm in root {
        if lines.len() < multipv && !listed(&lines, rm.m) {
            lines.push(answer_line(rm, completed));
        }
    }
    lines
}

/// A root move's line as the answer gives it: its [`reported`] score and moves at `depth`.
fn answer_line<M: Copy>(rm: &RootMove<M>, depth: u32) -> Line<M> {
    let (score, pv) = reported(rm);
    Line { pv: pv.to_vec(), score: to_score(score), depth, seldepth: rm.seldepth }
}

/// Whether [`reported`] gives this iteration's score for `rm` (not the last completed iteration's).
fn searched_this_iteration<M>(rm: &RootMove<M>) -> bool {
    rm.score != -INF && !(rm.upper && rm.previous != -INF)
}

pub(super) fn score_of(rm: &RootMove<impl Copy>) -> i32 {
    if rm.score == -INF { rm.previous } else { rm.score }
}

/// A root move's score and line as the final answer gives them: this iteration's when it has one that is not a
/// fail-low bound (exact, or a fail high: the move is at least that good); otherwise the last completed
/// iteration's, which is exact at the depth the answer claims. (A search stopped inside an iteration leaves
/// its moves part-searched.)
pub(super) fn reported<M: Copy>(rm: &RootMove<M>) -> (i32, &[M]) {
    if searched_this_iteration(rm) {
        (rm.score, &rm.pv)
    } else if rm.previous != -INF && !rm.previous_pv.is_empty() {
        (rm.previous, &rm.previous_pv)
    } else {
        (score_of(rm), &rm.pv)
    }
}
