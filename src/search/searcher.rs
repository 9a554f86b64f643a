//! One [`Searcher`] per thread, all sharing the transposition table and the stop flags ([`Shared`]): its state
//! (move lists, killers, history, principal variations, root moves), node counting with the stop polls, move
//! ordering, and the score conventions (mate distances, table scores). The search itself is in the sibling
//! files: `node.rs`, `quiescence.rs`, `root.rs`, and `threads.rs` starts it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::Line;
use super::params::{
    HISTORY_MAX, HISTORY_SIZE, LmrTable, ORDER_COUNTER, ORDER_KILLER_1, ORDER_KILLER_2, ORDER_LOSING_NOISY,
    ORDER_NOISY, ORDER_TT_MOVE, PICK_PASSES_FROM, POLL_INTERVAL, SearchTuning, eval_cache_entries, lmr_table,
};
use super::time::TimeBudget;
use super::tt::{Bound, TranspositionTable, TtEntry};
use crate::game::{Game, GameEnd, Outcome};

/// A win at the root scores `MATE`; a win `n` plies away scores `MATE - n`.
pub(crate) const MATE: i32 = 32000;
/// Scores at least this far from zero are wins or losses, not evaluations.
pub(crate) const MATE_BOUND: i32 = MATE - 1000;
/// Beyond every score: the open window's bounds, and the score of a root move not searched to the end.
pub(super) const INF: i32 = MATE + 1;
/// [`Searcher::evals`] where no static evaluation was computed.
pub(super) const NO_EVAL: i32 = i32::MIN;

/// What every thread of one search shares.
pub(super) struct Shared<'a> {
    pub(super) tt: &'a TranspositionTable,
    /// The caller's stop flag.
    pub(super) stop: &'a AtomicBool,
    /// Set by the main thread when the search is over (limits reached): helpers stop too.
    pub(super) finished: AtomicBool,
    pub(super) nodes: AtomicU64,
    pub(super) neval: AtomicU64,
    pub(super) budget: TimeBudget,
    pub(super) node_limit: Option<u64>,
    /// The numbers this search prunes, reduces and extends by.
    pub(super) tuning: SearchTuning,
    /// The late-move reductions of `tuning`, by remaining depth and move number.
    pub(super) lmr: Arc<LmrTable>,
}

pub(super) struct RootMove<M> {
    pub(super) m: M,
    /// This iteration's score (-INF until the move is searched to the end, or when it is not the best).
    pub(super) score: i32,
    /// `score` is only an upper bound: the move failed low at this iteration's window.
    pub(super) upper: bool,
    /// The last completed iteration's score and line (`previous` is -INF when it had none).
    pub(super) previous: i32,
    pub(super) previous_pv: Vec<M>,
    pub(super) pv: Vec<M>,
    pub(super) seldepth: u32,
}

impl<M: Copy> RootMove<M> {
    pub(super) fn new(m: M) -> Self {
        RootMove { m, score: -INF, upper: false, previous: -INF, previous_pv: Vec::new(), pv: vec![m], seldepth: 0 }
    }
}

pub(super) struct Searcher<'a, G: Game> {
    pub(super) game: G,
    pub(super) shared: &'a Shared<'a>,
    /// The shared tuning numbers, copied next to the rest of this thread's state.
    pub(super) tuning: SearchTuning,
    pub(super) main: bool,
    pub(super) moves: Vec<Vec<G::Move>>,
    pub(super) order: Vec<Vec<i32>>,
    /// The orders of the moves a node took out of its list unsearched (`take_out_pruned`), by ply.
    pub(super) taken: Vec<Vec<i32>>,
    pub(super) pv: Vec<Vec<G::Move>>,
    pub(super) killers: Vec<[Option<u32>; 2]>,
    pub(super) history: Vec<i32>,
    /// Counter moves: by side to move and the opponent's previous move (folded like the history), the key of
    /// the quiet move that last failed high in reply (0: none).
    pub(super) counters: Vec<u32>,
    /// The key of the move played at each ply of the current line (0: a null move).
    pub(super) played: Vec<u32>,
    /// The move a singular-extension search at each ply leaves out (0: none).
    pub(super) excluded: Vec<u32>,
    /// The static evaluation at each ply of the current line ([`NO_EVAL`] where none was computed, as in
    /// check), to tell whether the side to move's evaluation is improving.
    pub(super) evals: Vec<i32>,
    /// Fail highs at each ply of the current line, counted since the node two plies up began (the root's
    /// iteration, for ply 2): many at a node's child ply say its replies tend to be cut nodes
    /// (`SearchTuning::lmr_cutoffs_more_percent`).
    pub(super) cutoffs: Vec<u32>,
    /// Static evaluations already computed by this thread, by position hash: `[hash % size]` holds the hash's
    /// upper 48 bits and the score as an `i16` (0: empty). The evaluation is a function of the position, so
    /// a hit returns exactly what [`Game::evaluate`] would: the search is unchanged, only faster.
    eval_cache: Vec<u64>,
    pub(super) root: Vec<RootMove<G::Move>>,
    pub(super) root_depth: i32,
    /// Nodes searched by this thread and not yet added to the shared count.
    pub(super) pending_nodes: u64,
    pub(super) pending_neval: u64,
    pub(super) seldepth: u32,
    /// Iterations completed; stops are ignored until the first one is, so there is always a move.
    pub(super) completed: u32,
    /// Lines of MultiPV the current iteration has searched to the end (the first ones of `root`).
    pub(super) lines_finished: usize,
    /// With MultiPV, the main thread's lines of the last completed iteration, best first, at its depth: what
    /// a search stopped inside the next iteration answers for the lines that iteration has not finished.
    pub(super) last_lines: Vec<Line<G::Move>>,
    pub(super) stopped: bool,
}

/// The reduction table of `tuning`'s LMR numbers, made once for each pair of them: every search used to make
/// its own, 4,096 logarithms, a few percent of a self-play game's time at 1,500 nodes a move.
pub(super) fn lmr_for(tuning: &SearchTuning) -> Arc<LmrTable> {
    /// Tables by (base, divisor); self-play tuning tries many pairs, so at most this many are kept.
    const KEPT: usize = 64;
    /// A table and the (base, divisor) it was made for.
    type Kept = ((i32, i32), Arc<LmrTable>);
    static TABLES: Mutex<Vec<Kept>> = Mutex::new(Vec::new());
    let key = (tuning.lmr_base_percent, tuning.lmr_divisor_percent);
    let mut tables = TABLES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, table)) = tables.iter().find(|(k, _)| *k == key) {
        return table.clone();
    }
    if tables.len() >= KEPT {
        tables.clear();
    }
    let table = Arc::new(lmr_table(key.0, key.1));
    tables.push((key, table.clone()));
    table
}

pub(super) fn end_score(end: GameEnd, side_to_move: crate::game::Side, ply: usize) -> i32 {
    match end.outcome {
        Outcome::Draw => 0,
        Outcome::Win(side) if side == side_to_move => MATE - ply as i32,
        Outcome::Win(_) => -(MATE - ply as i32),
    }
}

pub(super) fn to_tt(score: i32, ply: usize) -> i16 {
    let s = if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    };
    s.clamp(-MATE, MATE) as i16
}

pub(super) fn from_tt(score: i16, ply: usize) -> i32 {
    let s = score as i32;
    if s >= MATE_BOUND {
        s - ply as i32
    } else if s <= -MATE_BOUND {
        s + ply as i32
    } else {
        s
    }
}

/// Whether a table entry's score `score` (already from [`from_tt`]) with its `bound` settles the window
/// `(alpha, beta)`: an exact score always, a lower bound at or above beta, an upper bound at or below alpha.
pub(super) fn settles(bound: Bound, score: i32, alpha: i32, beta: i32) -> bool {
    match bound {
        Bound::Exact => true,
        Bound::Lower => score >= beta,
        Bound::Upper => score <= alpha,
    }
}

/// A static evaluation refined by the position's table entry (where the game's quiescence uses the table,
/// [`Game::QUIESCENCE_TABLE`]): a bound beyond the evaluation, or an exact score, is what a search of the
/// position found, and stands in its place; mate scores do not.
pub(super) fn refine_eval(eval: i32, entry: Option<TtEntry>, ply: usize) -> i32 {
    let Some(e) = entry else { return eval };
    let s = from_tt(e.score, ply);
    let beyond = match e.bound {
        Bound::Exact => true,
        Bound::Lower => s > eval,
        Bound::Upper => s < eval,
    };
    if beyond && s.abs() < MATE_BOUND { s } else { eval }
}

impl<'a, G: Game> Searcher<'a, G> {
    pub(super) fn new(game: &G, shared: &'a Shared<'a>, main: bool) -> Self {
        let plies = G::MAX_PLY + 2;
        Searcher {
            game: game.clone(),
            shared,
            tuning: shared.tuning,
            main,
            moves: (0..plies).map(|_| Vec::with_capacity(64)).collect(),
            order: (0..plies).map(|_| Vec::with_capacity(64)).collect(),
            taken: (0..plies).map(|_| Vec::with_capacity(64)).collect(),
            pv: (0..plies).map(|_| Vec::with_capacity(16)).collect(),
            killers: vec![[None; 2]; plies],
            history: vec![0; 2 * HISTORY_SIZE],
            counters: vec![0; 2 * HISTORY_SIZE],
            played: vec![0; plies],
            excluded: vec![0; plies],
            evals: vec![NO_EVAL; plies],
            cutoffs: vec![0; plies + 2],
            eval_cache: vec![0; eval_cache_entries(shared.node_limit, G::EVAL_CACHE_ENTRIES)],
            root: Vec::new(),
            root_depth: 0,
            pending_nodes: 0,
            pending_neval: 0,
            seldepth: 0,
            completed: 0,
            lines_finished: 0,
            last_lines: Vec::new(),
            stopped: false,
        }
    }

    pub(super) fn total_nodes(&self) -> u64 {
        self.shared.nodes.load(Ordering::Relaxed) + self.pending_nodes
    }

    pub(super) fn total_neval(&self) -> u64 {
        self.shared.neval.load(Ordering::Relaxed) + self.pending_neval
    }

    /// Count a node; every [`POLL_INTERVAL`] nodes, publish the count and look at the stop conditions.
    #[inline]
    pub(super) fn count_node(&mut self) {
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

    /// Ask the processor for what the child with hash `key` will read first: its transposition table line and
    /// its slot of the evaluation cache. A hint only: it changes no result.
    #[inline(always)]
    pub(super) fn prefetch_child(&self, key: u64) {
        self.shared.tt.prefetch(key);
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let slot: *const u64 = &self.eval_cache[key as usize & (self.eval_cache.len() - 1)];
            // SAFETY: a prefetch reads nothing and cannot fault; the address is a slot of the cache.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(slot.cast::<i8>()) };
        }
    }

    #[inline]
    pub(super) fn evaluate(&mut self) -> i32 {
        self.pending_neval += 1;
        let key = self.game.hash();
        let mask = self.eval_cache.len() - 1;
        let slot = &mut self.eval_cache[key as usize & mask];
        if *slot != 0 && (*slot ^ key) >> 16 == 0 {
            return *slot as u16 as i16 as i32;
        }
        let score = self.game.evaluate_in_search().clamp(-MATE_BOUND + 1, MATE_BOUND - 1);
        if let Ok(small) = i16::try_from(score) {
            *slot = (key & !0xFFFF) | small as u16 as u64;
        }
        score
    }

    #[inline]
    fn history_index(&self, key: u32) -> usize {
        let side = self.game.side_to_move().index();
        // Fold the whole 32-bit key into the table's 14 bits (the shifts go with HISTORY_SIZE = 1 << 14).
        side * HISTORY_SIZE + ((key ^ (key >> 14) ^ (key >> 28)) as usize & (HISTORY_SIZE - 1))
    }

    /// The history score of a quiet move of the side to move.
    #[inline]
    pub(super) fn history_of(&self, key: u32) -> i32 {
        self.history[self.history_index(key)]
    }

    /// The counter move to the previous ply's move at `ply` (0: none, or after a null move).
    #[inline]
    pub(super) fn counter_at(&self, ply: usize) -> u32 {
        match ply.checked_sub(1).map(|p| self.played[p]) {
            Some(previous) if previous != 0 => self.counters[self.history_index(previous)],
            _ => 0,
        }
    }

    /// Remember `key` as the counter move to the previous ply's move at `ply`.
    pub(super) fn update_counter(&mut self, ply: usize, key: u32) {
        if let Some(previous) = ply.checked_sub(1).map(|p| self.played[p])
            && previous != 0
        {
            let i = self.history_index(previous);
            self.counters[i] = key;
        }
    }

    pub(super) fn update_history(&mut self, key: u32, bonus: i32) {
        let i = self.history_index(key);
        let h = &mut self.history[i];
        // Gravity: the entry moves towards the bonus and stays within +-HISTORY_MAX.
        *h += bonus - *h * bonus.abs() / HISTORY_MAX;
    }

    /// Score the moves at `ply` for ordering: the table's move, then noisy moves, killers, the counter move
    /// (`counter`, 0 for none), history (raised for a piece escaping a threat, [`Game::threat_order`]), and last
    /// the noisy moves with a negative hint (losing captures). Returns the position's threats, for the reductions.
    pub(super) fn score_moves(&mut self, ply: usize, tt_key: Option<u32>, counter: u32) -> G::Threats {
        let mut order = std::mem::take(&mut self.order[ply]);
        order.clear();
        let killers = self.killers[ply];
        let threats = self.game.threats();
        for &m in &self.moves[ply] {
            let key = G::move_key(m);
            let s = if Some(key) == tt_key {
                ORDER_TT_MOVE
            } else if self.game.is_noisy(m) {
                let hint = self.game.noisy_order(m);
                // A losing capture's hint is bounded so that its score stays below every quiet move's history
                // and cannot overflow.
                if hint < 0 { ORDER_LOSING_NOISY + hint.max(-(1 << 19)) } else { ORDER_NOISY + hint }
            } else if Some(key) == killers[0] {
                ORDER_KILLER_1
            } else if Some(key) == killers[1] {
                ORDER_KILLER_2
            } else if key == counter && counter != 0 {
                ORDER_COUNTER
            } else {
                self.history_of(key) + self.game.threat_order(m, &threats)
            };
            order.push(s);
        }
        self.order[ply] = order;
        threats
    }

    /// Take out of the move list at `ply`, from index `from` on, the quiet moves known not to give check (the
    /// game tells without making them, or has no check extension), for a node that prunes every later quiet
    /// move unless it gives check. Their orders go to `taken`; the other moves keep their order. Returns the
    /// list's new length.
    pub(super) fn take_out_pruned(
        &mut self,
        ply: usize,
        from: usize,
        taken: &mut Vec<i32>,
        threats: &G::Threats,
    ) -> usize {
        let moves = &mut self.moves[ply];
        let order = &mut self.order[ply];
        let mut kept = from;
        for j in from..moves.len() {
            let m = moves[j];
            if !self.game.is_noisy(m) && (!G::CHECK_EXTENSION || self.game.gives_check(m, threats) == Some(false)) {
                taken.push(order[j]);
            } else {
                moves[kept] = m;
                order[kept] = order[j];
                kept += 1;
            }
        }
        moves.truncate(kept);
        order.truncate(kept);
        kept
    }

    /// Move the best-ordered remaining move to index `i` and return it.
    #[inline]
    pub(super) fn pick(&mut self, ply: usize, i: usize) -> G::Move {
        let order = &mut self.order[ply];
        let moves = &mut self.moves[ply];
        // The first of the highest. On long lists (chess, xiangqi, Hive), two passes that vectorise, where one
        // comparing as it goes does not; on short ones (the draughts family's), that one.
        let rest = &order[i..];
        let best = if rest.len() >= PICK_PASSES_FROM {
            let high = rest.iter().copied().max().unwrap_or(0);
            i + rest.iter().position(|&o| o == high).unwrap_or(0)
        } else {
            let mut best = i;
            for j in i + 1..order.len() {
                if order[j] > order[best] {
                    best = j;
                }
            }
            best
        };
        order.swap(i, best);
        moves.swap(i, best);
        moves[i]
    }

    /// Lengthen `line` (moves from the root) with the transposition table's moves, to at most `max` moves.
    /// A move that fails high at the root has no line below it (its reply failed low, so nothing beat alpha
    /// there); the table still holds the moves that refuted each reply. Each table move is played only if
    /// it is among the legal moves generated there, the walk stops where the game ends or a position
    /// repeats, and the position is restored.
    pub(super) fn extend_from_tt(&mut self, line: &mut Vec<G::Move>, max: usize) {
        for &m in line.iter() {
            self.game.make(m);
        }
        let mut seen: Vec<u64> = Vec::with_capacity(max);
        let mut legal = Vec::new();
        while line.len() < max {
            let key = self.game.hash();
            if seen.contains(&key) || self.game.rule_end(line.len()).is_some() {
                break;
            }
            seen.push(key);
            let Some(move_key) = self.shared.tt.probe(key).map(|e| e.move_key).filter(|&k| k != 0) else {
                break;
            };
            legal.clear();
            self.game.generate_moves(&mut legal);
            let Some(&m) = legal.iter().find(|&&m| G::move_key(m) == move_key) else {
                break;
            };
            self.game.make(m);
            line.push(m);
        }
        for _ in 0..line.len() {
            self.game.unmake();
        }
    }

    pub(super) fn update_pv(&mut self, ply: usize, m: G::Move) {
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let line = &mut head[ply];
        line.clear();
        line.push(m);
        line.extend_from_slice(&tail[0]);
    }
}
