//! The alpha-beta node search (principal variation search below the root): transposition table cut-offs,
//! mate-distance pruning, null move pruning, check and single-reply extensions, singular extensions (where the
//! game has them), late-move reductions, and the killer and history updates on a fail high. At depth 0 it hands
//! over to quiescence (`quiescence.rs`).

use super::params::{
    EXTENSION_PLY_FACTOR, FUTILITY_MAX_DEPTH, IIR_MIN_DEPTH, LMR_ESCAPE_LESS_PERCENT, LMR_MANY_CUTOFFS, LMR_MIN_DEPTH,
    LMR_MIN_MOVE_INDEX, LMR_TABLE_SIZE, NULL_MOVE_MIN_DEPTH, QUIETS_TRIED_MAX, SEE_PRUNE_MAX_DEPTH, SINGULAR_MIN_DEPTH,
    SINGULAR_TT_DEPTH_SLACK,
};
use super::searcher::{INF, MATE, MATE_BOUND, NO_EVAL, Searcher, end_score, from_tt, refine_eval, settles, to_tt};
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
        self.cutoffs[ply + 2] = 0;
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

        // In a singular-extension search (the move the table names left out), the table's entry is about the
        // whole node: it neither cuts this search off nor is replaced by its result.
        let excluded = self.excluded[ply];
        let key = self.game.hash();
        let entry = self.shared.tt.probe(key);
        let tt_key = entry.map(|e| e.move_key).filter(|&k| k != 0);
        if let Some(e) = entry
            && !pv_node
            && excluded == 0
            && e.depth as i32 >= depth
        {
            let s = from_tt(e.score, ply);
            if settles(e.bound, s, alpha, beta) {
                return s;
            }
        }

        let in_check = G::CHECK_EXTENSION && self.game.in_check();
        // The static evaluation, where pruning asks for it (once per node); with the search refinements at every node
        // not in check, to tell whether it is improving.
        let prunable = !pv_node && !in_check && beta.abs() < MATE_BOUND && alpha.abs() < MATE_BOUND;
        let static_eval = if G::SEARCH_REFINEMENTS && !in_check
            || prunable
                && (G::NULL_MOVE && null_ok && depth >= NULL_MOVE_MIN_DEPTH
                    || G::FORWARD_PRUNING && depth <= self.tuning.reverse_futility_max_depth.max(FUTILITY_MAX_DEPTH))
        {
            Some(self.evaluate())
        } else {
            None
        };
        self.evals[ply] = static_eval.unwrap_or(NO_EVAL);
        // Improving: higher than at this side's previous move (two plies up), where both were evaluated.
        let improving = G::SEARCH_REFINEMENTS
            && ply >= 2
            && static_eval.is_some_and(|e| self.evals[ply - 2] != NO_EVAL && e > self.evals[ply - 2]);
        let prune_eval = static_eval
            .filter(|_| prunable)
            .map(|eval| if G::QUIESCENCE_TABLE && excluded == 0 { refine_eval(eval, entry, ply) } else { eval });
        // Reverse futility: far enough above beta that no quiet continuation is expected to fall back.
        if G::FORWARD_PRUNING
            && depth <= self.tuning.reverse_futility_max_depth
            && let Some(eval) = prune_eval
            && eval
                - self.tuning.reverse_futility_margin
                    * (100 * depth - self.tuning.reverse_futility_improving_percent * i32::from(improving))
                    / 100
                >= beta
        {
            return eval;
        }
        if G::NULL_MOVE
            && null_ok
            && excluded == 0
            && depth >= NULL_MOVE_MIN_DEPTH
            && let Some(eval) = prune_eval
            && eval >= beta
            && self.game.make_null()
        {
            let mut r = (self.tuning.null_move_reduction_percent + self.tuning.null_move_depth_percent * depth) / 100;
            if G::SEARCH_REFINEMENTS {
                r += ((eval - beta) / self.tuning.null_move_eval_divisor).min(self.tuning.null_move_eval_max);
            }
            self.played[ply] = 0;
            let score = -self.search(depth - 1 - r, -beta, -beta + 1, ply + 1, false);
            self.game.unmake();
            if self.stopped {
                return 0;
            }
            if score >= beta {
                return if score >= MATE_BOUND { beta } else { score };
            }
        }

        // Singular extension: is the table's move the only good one here? (Before this node's move list is
        // made: the search without it runs at this same ply.)
        let mut singular_extension = 0;
        if G::SINGULAR_EXTENSIONS
            && excluded == 0
            && depth >= SINGULAR_MIN_DEPTH
            && let Some(e) = entry
            && let Some(tk) = tt_key
            && e.bound != Bound::Upper
            && e.depth as i32 >= depth - SINGULAR_TT_DEPTH_SLACK
            && (ply as i32) < EXTENSION_PLY_FACTOR * self.root_depth
        {
            let tt_score = from_tt(e.score, ply);
            if tt_score.abs() < MATE_BOUND {
                let singular_beta = tt_score - self.tuning.singular_margin * depth;
                self.excluded[ply] = tk;
                let s = self.search((depth - 1) / 2, singular_beta - 1, singular_beta, ply, false);
                self.excluded[ply] = 0;
                self.pv[ply].clear();
                if self.stopped {
                    return 0;
                }
                if s < singular_beta {
                    singular_extension = 1;
                } else if singular_beta >= beta && !pv_node {
                    return singular_beta;
                } else if tt_score >= beta {
                    singular_extension = -1;
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
        let mut depth = depth;
        // Internal iterative reduction: without the table's move the ordering is a guess.
        if G::SEARCH_REFINEMENTS && tt_key.is_none() && excluded == 0 && depth >= IIR_MIN_DEPTH {
            depth -= 1;
        }
        // Extensions: a forced reply (one legal move) and a check cost no depth.
        if (count == 1 || in_check) && (ply as i32) < EXTENSION_PLY_FACTOR * self.root_depth {
            depth += 1;
        }

        let counter = if G::SEARCH_REFINEMENTS { self.counter_at(ply) } else { 0 };
        let threats = self.score_moves(ply, tt_key, counter);
        // Futility and late-move pruning of quiet moves near the leaves (never the first move).
        let futile = G::FORWARD_PRUNING
            && depth <= FUTILITY_MAX_DEPTH
            && prune_eval.is_some_and(|e| e + self.tuning.futility_base + self.tuning.futility_margin * depth <= alpha);
        let late_after = if G::FORWARD_PRUNING && prune_eval.is_some() && depth <= self.tuning.lmp_max_depth {
            let n = (self.tuning.lmp_base + depth * depth) as usize;
            if improving || !G::SEARCH_REFINEMENTS {
                n
            } else {
                n * self.tuning.lmp_not_improving_percent as usize / 100
            }
        } else {
            usize::MAX
        };
        // Static exchange pruning applies near the leaves, out of check, once a move has been searched.
        let see_prune = G::SEARCH_REFINEMENTS && !in_check && depth <= SEE_PRUNE_MAX_DEPTH;
        let original_alpha = alpha;
        let mut best = -INF;
        let mut best_key = 0u32;
        // The best-scoring move, kept only for the line shown at the root (see the end).
        let mut best_move = None;
        let mut quiets_tried: [u32; QUIETS_TRIED_MAX] = [0; QUIETS_TRIED_MAX];
        let mut quiet_count = 0;
        // Once every later quiet move is pruned unless it gives check, those known not to are taken out of the
        // list at once (`take_out_pruned`), so that `pick` no longer scans them for each move it picks; a
        // move picked after that is numbered as if they were still there (`taken` holds their orders).
        let mut count = count;
        let mut taken = std::mem::take(&mut self.taken[ply]);
        taken.clear();
        let mut taken_out = false;
        let mut at = 0;
        while at < count {
            if !taken_out && at > 0 && (futile || at >= late_after) && (G::TELLS_CHECKS || !G::CHECK_EXTENSION) {
                taken_out = true;
                count = self.take_out_pruned(ply, at, &mut taken, &threats);
                if at >= count {
                    break;
                }
            }
            let m = self.pick(ply, at);
            // The child's table line asked for now, where the game can tell its hash, not once the move is made;
            // not for the table's move, whose child the previous iteration read.
            if (at > 0 || tt_key.is_none())
                && let Some(h) = self.game.hash_after(m)
            {
                self.prefetch_child(h);
            }
            // The move's number: its place in the list, with the moves taken out that `pick` would have
            // chosen before it (a higher order).
            let i = if taken.is_empty() {
                at
            } else {
                let o = self.order[ply][at];
                at + taken.iter().filter(|&&t| t > o).count()
            };
            at += 1;
            let mk = G::move_key(m);
            if mk == excluded {
                continue;
            }
            let quiet = !self.game.is_noisy(m);
            let is_killer = self.killers[ply].contains(&Some(mk));
            let is_counter = counter != 0 && mk == counter;
            let history = if quiet && G::SEARCH_REFINEMENTS { self.history_of(mk) } else { 0 };
            // A quiet move futility or late-move pruning leaves out unless it gives check: where the game can
            // tell that it does not without making it, it is left out here (the same moves as below, sooner).
            let pruned_unless_check = i > 0 && quiet && (futile || i >= late_after);
            if pruned_unless_check && (!G::CHECK_EXTENSION || self.game.gives_check(m, &threats) == Some(false)) {
                continue;
            }
            // Static exchange: a quiet move by its margin, a noisy move (and a quiet check, known once the move
            // is made) by the noisy margin or the quiet one, whichever is wider.
            let (see_ok, see_ok_checking) = if see_prune && i > 0 && best > -MATE_BOUND {
                let noisy_margin = self.tuning.see_prune_noisy * depth;
                let noisy_ok = |game: &G| game.exchange_at_least(m, -noisy_margin, &threats);
                if quiet {
                    let ok = self.game.exchange_at_least(m, -self.tuning.see_prune_quiet * depth * depth, &threats);
                    (ok, ok || noisy_ok(&self.game))
                } else {
                    let ok = noisy_ok(&self.game);
                    (ok, ok)
                }
            } else {
                (true, true)
            };
            // Whether late-move reductions may apply, as far as is known before the move is made; and a quiet move
            // that takes a piece out of a lesser piece's attack is reduced less (asked only where it may be reduced).
            let reducible =
                G::LMR && depth >= LMR_MIN_DEPTH && i >= LMR_MIN_MOVE_INDEX && quiet && !in_check && !is_killer;
            let escapes = reducible && G::SEARCH_REFINEMENTS && self.game.threat_order(m, &threats) > 0;
            self.game.make(m);
            if depth > 1 || G::QUIESCENCE_TABLE {
                self.shared.tt.prefetch(self.game.hash());
            }
            let gives_check = G::CHECK_EXTENSION && self.game.in_check();
            let pruned = pruned_unless_check && !gives_check;
            let see_bad = if gives_check { !see_ok_checking } else { !see_ok };
            if pruned || see_bad {
                self.game.unmake();
                continue;
            }
            self.played[ply] = mk;
            let new_depth = if Some(mk) == tt_key { depth - 1 + singular_extension } else { depth - 1 };
            let score = if i == 0 {
                -self.search(new_depth, -beta, -alpha, ply + 1, true)
            } else {
                let mut r = 0;
                if reducible {
                    r = self.shared.lmr[(depth as usize).min(LMR_TABLE_SIZE - 1)][i.min(LMR_TABLE_SIZE - 1)] as i32;
                    // The adjustments in hundredths of a ply, summed and then rounded down.
                    let mut adjust = if pv_node { -self.tuning.lmr_pv_less_percent } else { 0 };
                    if G::SEARCH_REFINEMENTS {
                        adjust += self.tuning.lmr_not_improving_percent * i32::from(!improving)
                            - self.tuning.lmr_counter_less_percent * i32::from(is_counter)
                            - LMR_ESCAPE_LESS_PERCENT * i32::from(escapes)
                            + self.tuning.lmr_cutoffs_more_percent
                                * i32::from(self.cutoffs[ply + 1] > LMR_MANY_CUTOFFS);
                        r -= history / self.tuning.lmr_history_divisor;
                    }
                    r += adjust.div_euclid(100);
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
                best_move = Some(m);
                if score > alpha {
                    best_key = mk;
                    alpha = score;
                    if pv_node {
                        self.update_pv(ply, m);
                    }
                    if score >= beta {
                        self.cutoffs[ply] += 1;
                        if quiet {
                            let k = &mut self.killers[ply];
                            if k[0] != Some(mk) {
                                k[1] = k[0];
                                k[0] = Some(mk);
                            }
                            if G::SEARCH_REFINEMENTS {
                                self.update_counter(ply, mk);
                            }
                            let bonus =
                                (self.tuning.history_bonus_scale * depth * depth).min(self.tuning.history_bonus_max);
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
        self.taken[ply] = taken;
        if excluded != 0 {
            // Every other move was pruned or there was none: nothing reached the window.
            return if best == -INF { alpha } else { best };
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if alpha > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.shared.tt.store(key, best_key, to_tt(best, ply), depth.clamp(0, 255) as u8, bound);
        // A reply to a root move where no move reached alpha has no line, and the root move then failed high
        // (or, searched first, failed low): its line shows the reply that came nearest, the table continues it.
        if ply == 1
            && self.pv[1].is_empty()
            && let Some(m) = best_move
        {
            self.pv[1].push(m);
        }
        best
    }
}
