//! The alpha-beta node search (principal variation search below the root): transposition table cut-offs,
//! mate-distance pruning, null move pruning, check and single-reply extensions, late-move reductions, and the
//! killer and history updates on a fail high. At depth 0 it hands over to quiescence (`quiescence.rs`).

use super::params::{
    EXTENSION_PLY_FACTOR, FUTILITY_BASE, FUTILITY_MARGIN, FUTILITY_MAX_DEPTH, HISTORY_BONUS_MAX, HISTORY_BONUS_SCALE,
    LMP_BASE, LMP_MAX_DEPTH, LMR_MIN_DEPTH, LMR_MIN_MOVE_INDEX, LMR_PV_LESS, LMR_TABLE_SIZE, NULL_MOVE_MIN_DEPTH,
    NULL_MOVE_REDUCTION, NULL_MOVE_REDUCTION_DIVISOR, QUIETS_TRIED_MAX, REVERSE_FUTILITY_MARGIN,
    REVERSE_FUTILITY_MAX_DEPTH,
};
use super::searcher::{INF, MATE, MATE_BOUND, Searcher, end_score, from_tt, to_tt};
use super::tt::Bound;
use crate::game::Game;

impl<G: Game> Searcher<'_, G> {
    /// Search the current position to `depth` plies (then quiescence) within the window `(alpha, beta)`,
    /// `ply` plies from the root; `null_ok` allows a null move here (not right after one).
    pub(super) fn search(&mut self, depth: i32, mut alpha: i32, mut beta: i32, ply: usize, null_ok: bool) -> i32 {
        let pv_node = beta - alpha > 1;
        self.pv[ply].clear();
        if depth <= 0 {
            return self.quiesce(alpha, beta, ply, 0);
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
        // The static evaluation, where pruning asks for it (once per node).
        let prunable = !pv_node && !in_check && beta.abs() < MATE_BOUND && alpha.abs() < MATE_BOUND;
        let static_eval = if prunable
            && (G::NULL_MOVE && null_ok && depth >= NULL_MOVE_MIN_DEPTH
                || G::FORWARD_PRUNING && depth <= REVERSE_FUTILITY_MAX_DEPTH.max(FUTILITY_MAX_DEPTH))
        {
            Some(self.evaluate())
        } else {
            None
        };
        // Reverse futility: far enough above beta that no quiet continuation is expected to fall back.
        if G::FORWARD_PRUNING
            && depth <= REVERSE_FUTILITY_MAX_DEPTH
            && let Some(eval) = static_eval
            && eval - REVERSE_FUTILITY_MARGIN * depth >= beta
        {
            return eval;
        }
        if G::NULL_MOVE
            && null_ok
            && depth >= NULL_MOVE_MIN_DEPTH
            && let Some(eval) = static_eval
            && eval >= beta
            && self.game.make_null()
        {
            let r = NULL_MOVE_REDUCTION + depth / NULL_MOVE_REDUCTION_DIVISOR;
            let score = -self.search(depth - 1 - r, -beta, -beta + 1, ply + 1, false);
            self.game.unmake();
            if self.stopped {
                return 0;
            }
            if score >= beta {
                return if score >= MATE_BOUND { beta } else { score };
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
        if (count == 1 || in_check) && (ply as i32) < EXTENSION_PLY_FACTOR * self.root_depth {
            depth += 1;
        }

        self.score_moves(ply, tt_key);
        // Futility and late-move pruning of quiet moves near the leaves (never the first move).
        let futile = G::FORWARD_PRUNING
            && depth <= FUTILITY_MAX_DEPTH
            && static_eval.is_some_and(|e| e + FUTILITY_BASE + FUTILITY_MARGIN * depth <= alpha);
        let late_after = if G::FORWARD_PRUNING && static_eval.is_some() && depth <= LMP_MAX_DEPTH {
            LMP_BASE + (depth * depth) as usize
        } else {
            usize::MAX
        };
        let original_alpha = alpha;
        let mut best = -INF;
        let mut best_key = 0u32;
        let mut quiets_tried: [u32; QUIETS_TRIED_MAX] = [0; QUIETS_TRIED_MAX];
        let mut quiet_count = 0;
        for i in 0..count {
            let m = self.pick(ply, i);
            let mk = G::move_key(m);
            let quiet = !self.game.is_noisy(m);
            let is_killer = self.killers[ply].contains(&Some(mk));
            self.game.make(m);
            if i > 0 && quiet && (futile || i >= late_after) && !(G::CHECK_EXTENSION && self.game.in_check()) {
                self.game.unmake();
                continue;
            }
            let new_depth = depth - 1;
            let score = if i == 0 {
                -self.search(new_depth, -beta, -alpha, ply + 1, true)
            } else {
                let mut r = 0;
                if G::LMR && depth >= LMR_MIN_DEPTH && i >= LMR_MIN_MOVE_INDEX && quiet && !in_check && !is_killer {
                    r = self.lmr[(depth as usize).min(LMR_TABLE_SIZE - 1)][i.min(LMR_TABLE_SIZE - 1)] as i32;
                    if pv_node {
                        r -= LMR_PV_LESS;
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
                            let bonus = (HISTORY_BONUS_SCALE * depth * depth).min(HISTORY_BONUS_MAX);
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
}
