//! Quiescence search: at the horizon, only noisy moves (captures, promotions) are searched, with a stand-pat
//! score from the static evaluation. In check (in games that extend checks) every move is searched, and where
//! captures are compulsory there is no standing pat while one is available.

use super::params::QUIESCENCE_ORDER_NOISY;
use super::searcher::{INF, Searcher, end_score};
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
            // Standing pat first: a position that fails high on its evaluation needs no move generation.
            let stand = self.evaluate();
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
            order.push(if self.game.is_noisy(m) { QUIESCENCE_ORDER_NOISY + self.game.noisy_order(m) } else { 0 });
        }
        self.order[ply] = order;
        for i in 0..count {
            let m = self.pick(ply, i);
            if !in_check && self.game.skip_in_quiescence(m, self.order[ply][i] - QUIESCENCE_ORDER_NOISY) {
                continue;
            }
            self.game.make(m);
            let score = -self.quiesce(-beta, -alpha, ply + 1, qply + 1);
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
}
