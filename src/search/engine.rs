//! The search proper: one [`Searcher`] per thread, all sharing the transposition table and the stop flags.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::time::TimeBudget;
use super::tt::{Bound, TranspositionTable};
use super::{Done, Event, Info, Limits, Line, MAX_MULTIPV, ScoreBound, SearchOptions, to_score};
use crate::game::{Game, GameEnd, Outcome};

/// A win at the root scores `MATE`; a win `n` plies away scores `MATE - n`.
pub(crate) const MATE: i32 = 32000;
/// Scores at least this far from zero are wins or losses, not evaluations.
pub(crate) const MATE_BOUND: i32 = MATE - 1000;
const INF: i32 = MATE + 1;
/// Nodes between two polls of the stop flags, the clock and the node limit.
const POLL_INTERVAL: u64 = 256;
const HISTORY_SIZE: usize = 1 << 14;
const HISTORY_MAX: i32 = 1 << 14;

/// What every thread of one search shares.
struct Shared<'a> {
    tt: &'a TranspositionTable,
    /// The caller's stop flag.
    stop: &'a AtomicBool,
    /// Set by the main thread when the search is over (limits reached): helpers stop too.
    finished: AtomicBool,
    nodes: AtomicU64,
    neval: AtomicU64,
    budget: TimeBudget,
    node_limit: Option<u64>,
}

struct RootMove<M> {
    m: M,
    score: i32,
    previous: i32,
    pv: Vec<M>,
    seldepth: u32,
}

struct Searcher<'a, G: Game> {
    game: G,
    shared: &'a Shared<'a>,
    main: bool,
    moves: Vec<Vec<G::Move>>,
    order: Vec<Vec<i32>>,
    pv: Vec<Vec<G::Move>>,
    killers: Vec<[Option<u32>; 2]>,
    history: Vec<i32>,
    lmr: Vec<[u8; 64]>,
    root: Vec<RootMove<G::Move>>,
    root_depth: i32,
    /// Nodes searched by this thread and not yet added to the shared count.
    pending_nodes: u64,
    pending_neval: u64,
    seldepth: u32,
    /// Iterations completed; stops are ignored until the first one is, so there is always a move.
    completed: u32,
    stopped: bool,
}

fn lmr_table() -> Vec<[u8; 64]> {
    (0..64)
        .map(|depth| {
            let mut row = [0u8; 64];
            for (count, r) in row.iter_mut().enumerate() {
                if depth > 0 && count > 0 {
                    let v = 0.5 + (depth as f64).ln() * (count as f64).ln() / 2.25;
                    *r = v.max(0.0) as u8;
                }
            }
            row
        })
        .collect()
}

fn end_score(end: GameEnd, side_to_move: crate::game::Side, ply: usize) -> i32 {
    match end.outcome {
        Outcome::Draw => 0,
        Outcome::Win(side) if side == side_to_move => MATE - ply as i32,
        Outcome::Win(_) => -(MATE - ply as i32),
    }
}

fn to_tt(score: i32, ply: usize) -> i16 {
    let s = if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    };
    s.clamp(-MATE, MATE) as i16
}

fn from_tt(score: i16, ply: usize) -> i32 {
    let s = score as i32;
    if s >= MATE_BOUND {
        s - ply as i32
    } else if s <= -MATE_BOUND {
        s + ply as i32
    } else {
        s
    }
}

impl<'a, G: Game> Searcher<'a, G> {
    fn new(game: &G, shared: &'a Shared<'a>, main: bool) -> Self {
        let plies = G::MAX_PLY + 2;
        Searcher {
            game: game.clone(),
            shared,
            main,
            moves: (0..plies).map(|_| Vec::with_capacity(64)).collect(),
            order: (0..plies).map(|_| Vec::with_capacity(64)).collect(),
            pv: (0..plies).map(|_| Vec::with_capacity(16)).collect(),
            killers: vec![[None; 2]; plies],
            history: vec![0; 2 * HISTORY_SIZE],
            lmr: lmr_table(),
            root: Vec::new(),
            root_depth: 0,
            pending_nodes: 0,
            pending_neval: 0,
            seldepth: 0,
            completed: 0,
            stopped: false,
        }
    }

    fn total_nodes(&self) -> u64 {
        self.shared.nodes.load(Ordering::Relaxed) + self.pending_nodes
    }

    fn total_neval(&self) -> u64 {
        self.shared.neval.load(Ordering::Relaxed) + self.pending_neval
    }

    /// Count a node; every [`POLL_INTERVAL`] nodes, publish the count and look at the stop conditions.
    #[inline]
    fn count_node(&mut self) {
        self.pending_nodes += 1;
        if self.pending_nodes >= POLL_INTERVAL {
            self.poll();
        }
    }

    #[cold]
    fn poll(&mut self) {
        let total = self.shared.nodes.fetch_add(self.pending_nodes, Ordering::Relaxed) + self.pending_nodes;
        self.shared.neval.fetch_add(self.pending_neval, Ordering::Relaxed);
        self.pending_nodes = 0;
        self.pending_neval = 0;
        if self.completed == 0 {
            return;
        }
        if self.shared.stop.load(Ordering::Relaxed) || self.shared.finished.load(Ordering::Relaxed) {
            self.stopped = true;
            return;
        }
        if self.main {
            let over_nodes = self.shared.node_limit.is_some_and(|n| total >= n);
            let over_time = self.shared.budget.hard.is_some_and(|h| self.shared.budget.elapsed() >= h);
            if over_nodes || over_time {
                self.stopped = true;
            }
        }
    }

    #[inline]
    fn evaluate(&mut self) -> i32 {
        self.pending_neval += 1;
        self.game.evaluate().clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
    }

    #[inline]
    fn history_index(&self, key: u32) -> usize {
        let side = self.game.side_to_move().index();
        side * HISTORY_SIZE + ((key ^ (key >> 14) ^ (key >> 28)) as usize & (HISTORY_SIZE - 1))
    }

    fn update_history(&mut self, key: u32, bonus: i32) {
        let i = self.history_index(key);
        let h = &mut self.history[i];
        // Gravity: the entry moves towards the bonus and stays within +-HISTORY_MAX.
        *h += bonus - *h * bonus.abs() / HISTORY_MAX;
    }

    /// Score the moves at `ply` for ordering: the table's move, then noisy moves, killers, history.
    fn score_moves(&mut self, ply: usize, tt_key: Option<u32>) {
        let mut order = std::mem::take(&mut self.order[ply]);
        order.clear();
        let killers = self.killers[ply];
        for &m in &self.moves[ply] {
            let key = G::move_key(m);
            let s = if Some(key) == tt_key {
                i32::MAX
            } else if self.game.is_noisy(m) {
                1_000_000_000 + self.game.noisy_order(m)
            } else if Some(key) == killers[0] {
                900_000_000
            } else if Some(key) == killers[1] {
                800_000_000
            } else {
                self.history[self.history_index(key)]
            };
            order.push(s);
        }
        self.order[ply] = order;
    }

    /// Move the best-ordered remaining move to index `i` and return it.
    #[inline]
    fn pick(&mut self, ply: usize, i: usize) -> G::Move {
        let order = &mut self.order[ply];
        let moves = &mut self.moves[ply];
        let mut best = i;
        for j in i + 1..order.len() {
            if order[j] > order[best] {
                best = j;
            }
        }
        order.swap(i, best);
        moves.swap(i, best);
        moves[i]
    }

    fn update_pv(&mut self, ply: usize, m: G::Move) {
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let line = &mut head[ply];
        line.clear();
        line.push(m);
        line.extend_from_slice(&tail[0]);
    }

    fn search(&mut self, depth: i32, mut alpha: i32, mut beta: i32, ply: usize, null_ok: bool) -> i32 {
        let pv_node = beta - alpha > 1;
        self.pv[ply].clear();
        if depth <= 0 {
            return self.quiesce(alpha, beta, ply);
        }
        self.count_node();
        if self.stopped {
            return 0;
        }
        if ply >= G::MAX_PLY {
            return self.evaluate();
        }
        let stm = self.game.side_to_move();
        if let Some(end) = self.game.rule_end(ply) {
            return end_score(end, stm, ply);
        }
        // Mate-distance pruning: no line from here beats a win found nearer the root.
        alpha = alpha.max(-(MATE - ply as i32));
        beta = beta.min(MATE - ply as i32 - 1);
        if alpha >= beta {
            return alpha;
        }

        let key = self.game.hash();
        let entry = self.shared.tt.probe(key);
        let tt_key = entry.map(|e| e.move_key).filter(|&k| k != 0);
        if let Some(e) = entry
            && !pv_node
            && e.depth as i32 >= depth
        {
            let s = from_tt(e.score, ply);
            let usable = match e.bound {
                Bound::Exact => true,
                Bound::Lower => s >= beta,
                Bound::Upper => s <= alpha,
            };
            if usable {
                return s;
            }
        }

        let in_check = G::CHECK_EXTENSION && self.game.in_check();
        if G::NULL_MOVE && null_ok && !pv_node && !in_check && depth >= 3 && beta.abs() < MATE_BOUND {
            let eval = self.evaluate();
            if eval >= beta && self.game.make_null() {
                let r = 3 + depth / 4;
                let score = -self.search(depth - 1 - r, -beta, -beta + 1, ply + 1, false);
                self.game.unmake();
                if self.stopped {
                    return 0;
                }
                if score >= beta {
                    return if score >= MATE_BOUND { beta } else { score };
                }
            }
        }

        let mut moves = std::mem::take(&mut self.moves[ply]);
        self.game.generate_moves(&mut moves);
        self.moves[ply] = moves;
        let count = self.moves[ply].len();
        if count == 0 {
            return end_score(self.game.no_move_end(), stm, ply);
        }
        // Extensions: a forced reply (one legal move) and a check cost no depth.
        let mut depth = depth;
        if (count == 1 || in_check) && (ply as i32) < 2 * self.root_depth {
            depth += 1;
        }

        self.score_moves(ply, tt_key);
        let original_alpha = alpha;
        let mut best = -INF;
        let mut best_key = 0u32;
        let mut quiets_tried: [u32; 32] = [0; 32];
        let mut quiet_count = 0;
        for i in 0..count {
            let m = self.pick(ply, i);
            let mk = G::move_key(m);
            let quiet = !self.game.is_noisy(m);
            let is_killer = self.killers[ply].contains(&Some(mk));
            self.game.make(m);
            let new_depth = depth - 1;
            let score = if i == 0 {
                -self.search(new_depth, -beta, -alpha, ply + 1, true)
            } else {
                let mut r = 0;
                if G::LMR && depth >= 3 && i >= 2 && quiet && !in_check && !is_killer {
                    r = self.lmr[(depth as usize).min(63)][i.min(63)] as i32;
                    if pv_node {
                        r -= 1;
                    }
                    r = r.clamp(0, new_depth - 1);
                }
                let mut s = -self.search(new_depth - r, -alpha - 1, -alpha, ply + 1, true);
                if s > alpha && r > 0 {
                    s = -self.search(new_depth, -alpha - 1, -alpha, ply + 1, true);
                }
                if s > alpha && s < beta {
                    s = -self.search(new_depth, -beta, -alpha, ply + 1, true);
                }
                s
            };
            self.game.unmake();
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    best_key = mk;
                    alpha = score;
                    if pv_node {
                        self.update_pv(ply, m);
                    }
                    if score >= beta {
                        if quiet {
                            let k = &mut self.killers[ply];
                            if k[0] != Some(mk) {
                                k[1] = k[0];
                                k[0] = Some(mk);
                            }
                            let bonus = (32 * depth * depth).min(HISTORY_MAX / 4);
                            self.update_history(mk, bonus);
                            for &q in &quiets_tried[..quiet_count] {
                                self.update_history(q, -bonus);
                            }
                        }
                        break;
                    }
                }
            }
            if quiet && quiet_count < quiets_tried.len() {
                quiets_tried[quiet_count] = mk;
                quiet_count += 1;
            }
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if alpha > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.shared.tt.store(key, best_key, to_tt(best, ply), depth.clamp(0, 255) as u8, bound);
        best
    }

    fn quiesce(&mut self, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.pv[ply].clear();
        self.count_node();
        if self.stopped {
            return 0;
        }
        if ply as u32 > self.seldepth {
            self.seldepth = ply as u32;
        }
        if ply >= G::MAX_PLY {
            return self.evaluate();
        }
        let stm = self.game.side_to_move();
        if let Some(end) = self.game.rule_end(ply) {
            return end_score(end, stm, ply);
        }
        let in_check = G::CHECK_EXTENSION && self.game.in_check();
        let mut moves = std::mem::take(&mut self.moves[ply]);
        let mut best;
        if in_check {
            self.game.generate_moves(&mut moves);
            if moves.is_empty() {
                self.moves[ply] = moves;
                return end_score(self.game.no_move_end(), stm, ply);
            }
            best = -INF;
        } else {
            self.game.generate_noisy(&mut moves);
            if G::FORCED_CAPTURES && !moves.is_empty() {
                // The capture must be played: no standing pat.
                best = -INF;
            } else {
                let stand = self.evaluate();
                if stand >= beta || moves.is_empty() {
                    self.moves[ply] = moves;
                    return stand;
                }
                alpha = alpha.max(stand);
                best = stand;
            }
        }
        self.moves[ply] = moves;
        let count = self.moves[ply].len();
        let mut order = std::mem::take(&mut self.order[ply]);
        order.clear();
        for &m in &self.moves[ply] {
            order.push(if self.game.is_noisy(m) { 1_000_000 + self.game.noisy_order(m) } else { 0 });
        }
        self.order[ply] = order;
        for i in 0..count {
            let m = self.pick(ply, i);
            if !in_check && self.game.skip_in_quiescence(m) {
                continue;
            }
            self.game.make(m);
            let score = -self.quiesce(-beta, -alpha, ply + 1);
            self.game.unmake();
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    self.update_pv(ply, m);
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        best
    }

    /// Search the root moves from `first` on (the earlier ones are the better lines of MultiPV).
    fn search_root(
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
        for i in first..self.root.len() {
            let m = self.root[i].m;
            if self.main && !currmove_after.is_zero() && self.shared.budget.elapsed() >= currmove_after {
                self.emit_currmove(sink, m, (i + 1 - first) as u32, depth as u32);
            }
            self.seldepth = self.seldepth.max(1);
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
                rm.seldepth = self.seldepth;
                rm.pv.clear();
                rm.pv.push(m);
                rm.pv.extend_from_slice(&self.pv[1]);
            } else {
                rm.score = -INF;
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
    fn iterate(
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
                }
                rm.score = -INF;
            }
            for pv_index in 0..multipv {
                self.seldepth = 0;
                let previous = self.root[pv_index].previous;
                let mut delta = 30;
                let (mut alpha, mut beta) = if depth >= 4 && previous.abs() < MATE_BOUND {
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
                    if delta > 1000 {
                        alpha = -INF;
                        beta = INF;
                    }
                }
                self.sort_root(0);
                if self.stopped {
                    break;
                }
            }
            if self.stopped {
                break;
            }
            completed_depth = depth;
            self.completed = depth;
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
                    if depth >= 2 * plies + 4 {
                        break;
                    }
                }
            }
            depth += 1;
        }
        completed_depth
    }
}

fn nps(nodes: u64, elapsed: Duration) -> u64 {
    let micros = elapsed.as_micros().max(1) as u64;
    nodes.saturating_mul(1_000_000) / micros
}

fn score_of(rm: &RootMove<impl Copy>) -> i32 {
    if rm.score == -INF { rm.previous } else { rm.score }
}

pub(super) fn run<G: Game>(
    game: &G,
    limits: &Limits,
    options: &SearchOptions,
    tt: &Arc<TranspositionTable>,
    stop: &Arc<AtomicBool>,
    sink: &mut dyn FnMut(Event<G::Move>),
) -> Done<G::Move> {
    let start = Instant::now();
    tt.new_search();
    let shared = Shared {
        tt,
        stop,
        finished: AtomicBool::new(false),
        nodes: AtomicU64::new(0),
        neval: AtomicU64::new(0),
        budget: TimeBudget::new(limits, start),
        node_limit: if limits.infinite { None } else { limits.nodes },
    };
    let game_end = game.rule_end(0);

    let mut main = Searcher::new(game, &shared, true);
    let mut moves = Vec::new();
    main.game.generate_moves(&mut moves);
    if !options.excluded.is_empty() && moves.iter().any(|&m| !options.excluded.contains(&G::move_key(m))) {
        moves.retain(|&m| !options.excluded.contains(&G::move_key(m)));
    }
    if moves.is_empty() {
        return Done {
            best: None,
            ponder: None,
            lines: Vec::new(),
            depth: 0,
            seldepth: 0,
            nodes: 0,
            nps: 0,
            time_ms: start.elapsed().as_millis() as u64,
            neval: 0,
            game_end: Some(game_end.unwrap_or_else(|| game.no_move_end())),
        };
    }
    // Initial order: the table's move, then noisy moves by their hint, then the rest as generated.
    let tt_key = tt.probe(game.hash()).map(|e| e.move_key).filter(|&k| k != 0);
    let mut keyed: Vec<(i64, G::Move)> = moves
        .iter()
        .map(|&m| {
            let k = if Some(G::move_key(m)) == tt_key {
                i64::MAX
            } else if game.is_noisy(m) {
                1 << 32 | game.noisy_order(m) as i64
            } else {
                0
            };
            (k, m)
        })
        .collect();
    keyed.sort_by_key(|k| std::cmp::Reverse(k.0));
    let root: Vec<RootMove<G::Move>> =
        keyed.into_iter().map(|(_, m)| RootMove { m, score: -INF, previous: -INF, pv: vec![m], seldepth: 0 }).collect();
    main.root = root;

    let threads = options.threads.max(1);
    let completed = std::thread::scope(|scope| {
        for t in 1..threads {
            let shared = &shared;
            let root_moves: Vec<G::Move> = main.root.iter().map(|r| r.m).collect();
            let helper_limits = Limits { infinite: true, ..limits.clone() };
            let helper_options = SearchOptions { multipv: 1, ..options.clone() };
            std::thread::Builder::new()
                .name(format!("kibitz-smp-{t}"))
                .spawn_scoped(scope, move || {
                    let mut helper = Searcher::new(game, shared, false);
                    helper.root = root_moves
                        .into_iter()
                        .map(|m| RootMove { m, score: -INF, previous: -INF, pv: vec![m], seldepth: 0 })
                        .collect();
                    let mut ignore = |_: Event<G::Move>| {};
                    helper.iterate(&helper_limits, &helper_options, (t as u32) & 1, &mut ignore);
                    shared.nodes.fetch_add(helper.pending_nodes, Ordering::Relaxed);
                    shared.neval.fetch_add(helper.pending_neval, Ordering::Relaxed);
                })
                .ok();
        }
        let completed = main.iterate(limits, options, 0, sink);
        shared.finished.store(true, Ordering::Relaxed);
        completed
    });
    shared.nodes.fetch_add(main.pending_nodes, Ordering::Relaxed);
    shared.neval.fetch_add(main.pending_neval, Ordering::Relaxed);
    main.pending_nodes = 0;
    main.pending_neval = 0;

    let multipv = options.multipv.clamp(1, MAX_MULTIPV).min(main.root.len());
    let lines: Vec<Line<G::Move>> = main.root[..multipv]
        .iter()
        .map(|rm| Line { pv: rm.pv.clone(), score: to_score(score_of(rm)), depth: completed, seldepth: rm.seldepth })
        .collect();
    let best = main.root[0].m;
    let ponder = main.root[0].pv.get(1).copied();
    let elapsed = start.elapsed();
    let nodes = shared.nodes.load(Ordering::Relaxed);
    Done {
        best: Some(best),
        ponder,
        seldepth: lines.first().map_or(0, |l| l.seldepth),
        lines,
        depth: completed,
        nodes,
        nps: nps(nodes, elapsed),
        time_ms: elapsed.as_millis() as u64,
        neval: shared.neval.load(Ordering::Relaxed),
        game_end,
    }
}
