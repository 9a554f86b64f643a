//! Quiescence search: at the horizon, only noisy moves (captures, promotions) are searched, with a stand-pat
//! score from the static evaluation. In check (in games that extend checks) every move is searched, and where
//! captures are compulsory there is no standing pat while one is available.

use super::params::{QUIESCENCE_ORDER_NOISY, QUIESCENCE_ORDER_TT};
use super::searcher::{INF, Searcher, end_score, from_tt, refine_eval, settles, to_tt};
use super::tt::Bound;
use crate::game::Game;

impl<G: Game> Searcher<'_, G> {
    /// `qply`: plies searched beyond the horizon so far.
    pub(super) fn quiesce(&mut self, mut alpha: i32, beta: i32, ply: usize, qply: usize) -> i32 {
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
        // The standing score's evaluation comes before the table's probe, which then finds the line the parent
        // asked for when it made the move already in the cache. (In check, or where captures are compulsory,
        // there is no standing pat, and no evaluation is made here.)
        let evaluation = if in_check || G::FORCED_CAPTURES { 0 } else { self.evaluate() };
        // The table (where the game uses it here): a bound that settles a null window ends the node.
        let pv_node = beta - alpha > 1;
        let key = self.game.hash();
        let entry = if G::QUIESCENCE_TABLE { self.shared.tt.probe(key) } else { None };
        if let Some(e) = entry
            && !pv_node
        {
            let s = from_tt(e.score, ply);
            if settles(e.bound, s, alpha, beta) {
                return s;
            }
        }
        let tt_key = entry.map(|e| e.move_key).filter(|&k| k != 0);
        let original_alpha = alpha;
        let mut moves = std::mem::take(&mut self.moves[ply]);
        let mut best;
        if in_check {
            self.game.generate_moves(&mut moves);
            if moves.is_empty() {
                self.moves[ply] = moves;
                return end_score(self.game.no_move_end(), stm, ply);
            }
            best = -INF;
        } else if G::FORCED_CAPTURES {
            self.game.generate_noisy(&mut moves);
            if !moves.is_empty() {
                // The capture must be played: no standing pat.
                best = -INF;
            } else {
                self.moves[ply] = moves;
                return self.evaluate();
            }
        } else {
            // Standing pat first: a position that fails high on its evaluation needs no move generation. A
            // table bound beyond the evaluation (a search of this position found more, or less) stands instead.
            let stand = refine_eval(evaluation, entry, ply);
            if stand >= beta || qply >= G::QUIESCENCE_PLIES {
                self.moves[ply] = moves;
                return stand;
            }
            self.game.generate_noisy(&mut moves);
            if moves.is_empty() {
                self.moves[ply] = moves;
                return stand;
            }
            alpha = alpha.max(stand);
            best = stand;
        }
        self.moves[ply] = moves;
        let count = self.moves[ply].len();
        let mut order = std::mem::take(&mut self.order[ply]);
        order.clear();
        for &m in &self.moves[ply] {
            // Each child's table line asked for now, where the game can tell its hash: the lists are short, and
            // most of their moves are searched.
            if G::QUIESCENCE_TABLE
                && let Some(h) = self.game.hash_after(m)
            {
                self.prefetch_child(h);
            }
            order.push(if tt_key == Some(G::move_key(m)) {
                QUIESCENCE_ORDER_TT
            } else if self.game.is_noisy(m) {
                QUIESCENCE_ORDER_NOISY + self.game.noisy_order(m)
            } else {
                0
            });
        }
        self.order[ply] = order;
        let mut best_key = 0;
        for i in 0..count {
            let m = self.pick(ply, i);
            if !in_check {
                let order = self.order[ply][i];
                let hint = if order == QUIESCENCE_ORDER_TT {
                    self.game.noisy_order(m)
                } else {
                    order - QUIESCENCE_ORDER_NOISY
                };
                if self.game.skip_in_quiescence(m, hint) {
                    continue;
                }
            }
            self.game.make(m);
            if G::QUIESCENCE_TABLE {
                self.shared.tt.prefetch(self.game.hash());
            }
            let score = -self.quiesce(-beta, -alpha, ply + 1, qply + 1);
            self.game.unmake();
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    best_key = G::move_key(m);
                    self.update_pv(ply, m);
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        if G::QUIESCENCE_TABLE && best > -INF {
            let bound = if best >= beta {
                Bound::Lower
            } else if pv_node && best > original_alpha {
                Bound::Exact
            } else {
                Bound::Upper
            };
            self.shared.tt.store(key, best_key, to_tt(best, ply), 0, bound);
        }
        best
    }
}
