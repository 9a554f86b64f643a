//! Static evaluation, in centi-units from the side to move's point of view.
//!
//! The scale: 100 is one more piece around the enemy Queen than the opponent has around yours (the
//! surround difference is what wins Hive, so it is the "man" of this game). Every value is learned
//! (`examples/tune.rs`, [`crate::tuning`]) and lives in the generated `weights.rs`, an (opening, late game)
//! pair per line, tapered by the number of pieces in play. The terms, each written once for either colour:
//!
//! * Queen surround: the value of the enemy Queen having 1 to 5 occupied neighbours, and per neighbour
//!   who fills it (an attacker, or a defender's piece that could still step away);
//! * mobility: a piece that could move (on top of its stack, not holding the hive together), by bug; a
//!   pinned or covered piece is worth nothing;
//! * pieces in hand, by bug, while there is a cell to place them; a flat value per piece when there is none;
//! * Beetles (and Mosquitos) on top of, next to, or free two steps from the enemy Queen; one's Pillbug next
//!   to one's own Queen (it can throw attackers off); one's own stuck pieces next to one's Queen; a Queen
//!   that can still slide away; free Ants while the enemy Queen has a liberty one can slide into; an enemy
//!   Queen stuck with three neighbours or more; the move.
//!
//! It costs one articulation-point pass and a few neighbour scans, no move generation. One generic function
//! writes the terms either into the engine's integer sum or into the tuner's linear view ([`Terms`]), so the
//! two cannot disagree.

use super::board::{Board, Bug, Cells, NO_CELL, PER_SIDE, Sink, bug_of, nb, queen_of};
use super::board::{Move, color_of};
use super::weights::VALUES;
use crate::tuning::LinearEval;

/// Pieces in play at which the late-game half of a pair counts alone (the phase runs from 0 to this).
pub const LATE: i32 = 20;

/// The enemy Queen with 1-5 occupied neighbours (one of these pairs, by the count).
const SURROUND: usize = 0;
/// A piece in play free to move, by bug (8 pairs in [`Bug`] order).
const FREE: usize = SURROUND + 5;
/// A piece in hand while there is a cell to place it, by bug.
const HAND: usize = FREE + 8;
/// A neighbour of the enemy Queen filled by one's own piece, by bug (the top piece of the cell).
const ATTACKER: usize = HAND + 8;
/// The other terms' pairs, in the order of [`TERMS`].
const TERM: usize = ATTACKER + 8;

/// The terms beside the surround, mobility, pieces in hand and attackers.
pub const TERMS: [&str; 14] = [
    "a neighbour of the enemy Queen filled by a free piece of the defender",
    "a Beetle or Mosquito on top of the enemy Queen",
    "a Beetle or Mosquito next to the enemy Queen",
    "a free Beetle or Mosquito two steps from the enemy Queen",
    "a Pillbug next to its own Queen",
    "one's own Queen can slide to a neighbouring cell (per cell)",
    "a stuck piece of one's own next to one's own Queen",
    "a free Ant while the enemy Queen has a liberty one can slide into",
    "the enemy Queen stuck with three neighbours or more",
    "a piece in hand with no cell to place it",
    "the side to move",
    "an empty neighbour of the enemy Queen that a piece can slide into from outside",
    "a Beetle or Mosquito on top of an enemy piece other than the Queen",
    "a cell to place a piece on, while one has pieces in hand (at most 6 counted)",
];
const FILLED_BY_FREE_DEFENDER: usize = TERM;
const BEETLE_ON_QUEEN: usize = TERM + 1;
const BEETLE_NEXT_TO_QUEEN: usize = TERM + 2;
const CLIMBER_NEAR: usize = TERM + 3;
const PILLBUG_GUARD: usize = TERM + 4;
const QUEEN_SLIDE: usize = TERM + 5;
const OWN_STUCK_AT_QUEEN: usize = TERM + 6;
const RUNNER_THREAT: usize = TERM + 7;
const QUEEN_TRAPPED: usize = TERM + 8;
const NO_PLACEMENT: usize = TERM + 9;
const TEMPO: usize = TERM + 10;
const OPEN_LIBERTY: usize = TERM + 11;
const BEETLE_ON_ENEMY: usize = TERM + 12;
const PLACEMENT_CELLS: usize = TERM + 13;
/// The most placement cells counted.
const PLACEMENT_CELLS_MAX: i32 = 6;

/// Value pairs in all.
pub const PAIRS: usize = TERM + TERMS.len();

const BUG_NAMES: [&str; 8] = ["Queen", "Spider", "Beetle", "Grasshopper", "Ant", "Mosquito", "Ladybug", "Pillbug"];

/// The name of value pair `pair`.
pub fn pair_name(pair: usize) -> String {
    match pair {
        p if p < FREE => format!("the enemy Queen with {} neighbours", p - SURROUND + 1),
        p if p < HAND => format!("a free {}", BUG_NAMES[p - FREE]),
        p if p < ATTACKER => format!("a {} in hand", BUG_NAMES[p - HAND]),
        p if p < TERM => format!("a neighbour of the enemy Queen filled by one's {}", BUG_NAMES[p - ATTACKER]),
        p => TERMS[p - TERM].to_string(),
    }
}

/// Where the evaluation's terms go: the engine's sum or the tuner's linear view.
trait Terms {
    /// `count` times value pair `pair` for White (`sign` 1) or Black (`sign` -1).
    fn add(&mut self, sign: i32, pair: usize, count: i32);
}

/// The engine's sum, White minus Black: the opening and late halves, tapered once at the end.
struct Sum {
    opening: i32,
    late: i32,
}

impl Terms for Sum {
    #[inline(always)]
    fn add(&mut self, sign: i32, pair: usize, count: i32) {
        let v = VALUES[pair];
        self.opening += sign * count * v[0] as i32;
        self.late += sign * count * v[1] as i32;
    }
}

/// The tuner's view: value `2 · pair` is a pair's opening half, `2 · pair + 1` its late half.
struct Linear<'a> {
    out: &'a mut LinearEval,
    /// The opening half's share.
    opening: f32,
}

impl Terms for Linear<'_> {
    fn add(&mut self, sign: i32, pair: usize, count: i32) {
        let c = (sign * count) as f32;
        self.out.add(2 * pair, c * self.opening);
        self.out.add(2 * pair + 1, c * (1.0 - self.opening));
    }
}

/// The phase: pieces in play, up to [`LATE`].
fn phase(b: &Board) -> i32 {
    let mut n = 0;
    for p in 0..2 * PER_SIDE {
        if b.in_play(p) {
            n += 1;
        }
    }
    n.min(LATE)
}

/// The distance between two cells, capped at 3 (exact through the wrapping grid, by neighbour steps).
#[inline]
fn near(a: u16, b: u16) -> i32 {
    if a == b {
        return 0;
    }
    let mut two = false;
    for d in 0..6 {
        let n = nb(a, d);
        if n == b {
            return 1;
        }
        two |= (0..6).any(|k| nb(n, k) == b);
    }
    if two { 2 } else { 3 }
}

/// An empty cell outside slides into empty cell `c` (one of its empty neighbours has exactly one of its two
/// common neighbours occupied).
#[inline]
fn slides_into(b: &Board, c: u16) -> u32 {
    (0..6)
        .filter(|&d| {
            b.height(nb(c, d)) == 0 && (b.height(nb(c, (d + 5) % 6)) == 0) != (b.height(nb(c, (d + 1) % 6)) == 0)
        })
        .count() as u32
}

/// The cells where `color` may place a piece (empty, next to one of its top pieces, next to none of the
/// enemy's), counted up to [`PLACEMENT_CELLS_MAX`]; the maximum on the first two turns.
fn placement_cells(b: &Board, color: usize) -> i32 {
    if b.turn() < 2 {
        return PLACEMENT_CELLS_MAX;
    }
    let lo = color as u8 * PER_SIDE;
    let mut seen = [NO_CELL; PLACEMENT_CELLS_MAX as usize];
    let mut n = 0;
    for p in lo..lo + PER_SIDE {
        if !b.on_top(p) {
            continue;
        }
        let c = b.pos(p);
        for d in 0..6 {
            let cell = nb(c, d);
            if b.height(cell) == 0 && b.adjacent_of(color ^ 1, cell) == 0 && !seen[..n].contains(&cell) {
                seen[n] = cell;
                n += 1;
                if n == seen.len() {
                    return n as i32;
                }
            }
        }
    }
    n as i32
}

/// Every term of both sides, into `t`.
fn terms<T: Terms>(b: &Board, t: &mut T) {
    let pinned = b.pinned();
    let stuck = |p: u8| !b.on_top(p) || (b.level(p) == 0 && pinned >> p & 1 != 0);
    for color in 0..2 {
        let sign = if color == 0 { 1 } else { -1 };
        let enemy = color ^ 1;
        let eq = queen_of(enemy);
        let eq_cell = b.pos(eq);
        let own_q = queen_of(color);
        let own_q_cell = b.pos(own_q);
        let mut open_liberty = false;
        if eq_cell != NO_CELL {
            let (mut occupied, mut free_defenders, mut open) = (0, 0, 0);
            for d in 0..6 {
                let n = nb(eq_cell, d);
                if b.height(n) > 0 {
                    occupied += 1;
                    let top = b.top(n);
                    if color_of(top) == color {
                        t.add(sign, ATTACKER + bug_of(top) as usize, 1);
                    } else if !stuck(top) {
                        free_defenders += 1;
                    }
                } else if slides_into(b, n) > 0 {
                    open += 1;
                }
            }
            open_liberty = open > 0;
            if occupied > 0 {
                t.add(sign, SURROUND + occupied.min(5) - 1, 1);
            }
            t.add(sign, FILLED_BY_FREE_DEFENDER, free_defenders);
            t.add(sign, OPEN_LIBERTY, open);
            if occupied >= 3 && stuck(eq) {
                t.add(sign, QUEEN_TRAPPED, 1);
            }
        }
        let lo = color as u8 * PER_SIDE;
        let mut placeable = None;
        let (mut free_ants, mut stuck_at_queen) = (0, 0);
        for p in lo..lo + PER_SIDE {
            if !b.enabled(p) {
                continue;
            }
            let bug = bug_of(p);
            if b.in_hand(p) {
                let cells = *placeable.get_or_insert_with(|| {
                    let cells = placement_cells(b, color);
                    t.add(sign, PLACEMENT_CELLS, cells);
                    cells
                });
                if cells > 0 {
                    t.add(sign, HAND + bug as usize, 1);
                } else {
                    t.add(sign, NO_PLACEMENT, 1);
                }
                continue;
            }
            let c = b.pos(p);
            let top = b.on_top(p);
            let free = top && (b.level(p) > 0 || pinned >> p & 1 == 0);
            if free {
                t.add(sign, FREE + bug as usize, 1);
                if bug == Bug::Ant {
                    free_ants += 1;
                }
            }
            if top && b.level(p) > 0 && color_of(b.below(p)) != color && c != eq_cell {
                t.add(sign, BEETLE_ON_ENEMY, 1);
            }
            if top && matches!(bug, Bug::Beetle | Bug::Mosquito) && eq_cell != NO_CELL {
                match near(c, eq_cell) {
                    0 => t.add(sign, BEETLE_ON_QUEEN, 1),
                    1 => t.add(sign, BEETLE_NEXT_TO_QUEEN, 1),
                    2 if free => t.add(sign, CLIMBER_NEAR, 1),
                    _ => {}
                }
            }
            if own_q_cell != NO_CELL && p != own_q && near(c, own_q_cell) == 1 {
                if bug == Bug::Pillbug && top {
                    t.add(sign, PILLBUG_GUARD, 1);
                } else if stuck(p) {
                    stuck_at_queen += 1;
                }
            }
        }
        t.add(sign, OWN_STUCK_AT_QUEEN, stuck_at_queen);
        if open_liberty {
            t.add(sign, RUNNER_THREAT, free_ants);
        }
        if own_q_cell != NO_CELL && b.on_top(own_q) && pinned >> own_q & 1 == 0 {
            t.add(sign, QUEEN_SLIDE, slides_into(b, own_q_cell) as i32);
        }
    }
    t.add(if b.to_move() == 0 { 1 } else { -1 }, TEMPO, 1);
}

/// Static evaluation from the side to move's point of view.
pub fn evaluate(b: &Board) -> i32 {
    let mut sum = Sum { opening: 0, late: 0 };
    terms(b, &mut sum);
    let phase = phase(b);
    let v = (sum.opening * (LATE - phase) + sum.late * phase) / LATE;
    if b.to_move() == 0 { v } else { -v }
}

/// The evaluation from White's view as a linear function of the values (value `2 · pair` a pair's opening
/// half, `2 · pair + 1` its late half), up to the engine's rounding of the tapered sum.
pub fn linear_eval(b: &Board, out: &mut LinearEval) -> bool {
    out.clear();
    let opening = (LATE - phase(b)) as f32 / LATE as f32;
    terms(b, &mut Linear { out, opening });
    true
}

/// Collects the moves [`adds_queen_neighbour`] keeps straight from the generator's destination sets, masked
/// with the empty neighbours of the enemy Queen, without listing every other move first.
pub struct QueenNeighbourMoves<'a> {
    board: &'a Board,
    out: &'a mut Vec<Move>,
    /// The enemy Queen's empty neighbours.
    targets: Cells,
    /// The enemy Queen's cell (`NO_CELL`: not in play, no move is noisy).
    queen: u16,
}

impl<'a> QueenNeighbourMoves<'a> {
    pub fn new(board: &'a Board, out: &'a mut Vec<Move>) -> Self {
        let queen = board.pos(queen_of(board.to_move() ^ 1));
        let mut targets = Cells::EMPTY;
        if queen != NO_CELL {
            for d in 0..6 {
                let n = nb(queen, d);
                if board.height(n) == 0 {
                    targets.set(n);
                }
            }
        }
        QueenNeighbourMoves { board, out, targets, queen }
    }

    /// Some move could be noisy (the enemy Queen is in play with an empty neighbour).
    pub fn any_target(&self) -> bool {
        self.queen != NO_CELL && !self.targets.is_empty()
    }

    /// The piece is not next to the enemy Queen already (a piece in hand is not).
    #[inline]
    fn arrives(&self, piece: u8) -> bool {
        let from = self.board.pos(piece);
        from == NO_CELL || !(0..6).any(|d| nb(self.queen, d) == from)
    }
}

impl Sink for QueenNeighbourMoves<'_> {
    #[inline]
    fn add(&mut self, piece: u8, dests: &Cells) {
        if !self.arrives(piece) {
            return;
        }
        for (w, (d, t)) in dests.0.iter().zip(self.targets.0.iter()).enumerate() {
            let mut m = d & t;
            while m != 0 {
                let b = m.trailing_zeros() as u16;
                m &= m - 1;
                self.out.push(Move { piece, to: (w as u16) << 6 | b });
            }
        }
    }

    #[inline]
    fn add_one(&mut self, piece: u8, to: u16) {
        let m = Move { piece, to };
        if adds_queen_neighbour(self.board, m) {
            self.out.push(m);
        }
    }
}

/// The move puts one more piece next to the side to move's enemy Queen (a placement, a piece arriving from
/// elsewhere, or one thrown there).
#[inline]
pub fn adds_queen_neighbour(b: &Board, m: Move) -> bool {
    if m.is_pass() {
        return false;
    }
    // The side to move's enemy Queen (a Pillbug may throw a piece of either colour there).
    let q = b.pos(queen_of(b.to_move() ^ 1));
    if q == NO_CELL || b.height(m.to) != 0 {
        return false;
    }
    let touches = |c: u16| c != NO_CELL && (0..6).any(|d| nb(q, d) == c);
    touches(m.to) && !touches(b.pos(m.piece))
}
