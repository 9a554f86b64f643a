//! Static evaluation, in centi-men from the side to move's point of view.
//!
//! Every positional term is written once, for White: Black's masks are White's turned half a turn (square
//! `s` becomes `51 - s`, which in the ghost layout is reversing the 54 bits), so the evaluation is symmetric
//! (a unit test checks it on mirrored positions).
//!
//! Terms:
//! * material: man 100, king 300 (a little less with many men on the board, a little more without);
//! * men's piece-square values by the number of men on the board: advancement (tempo), worth more as the
//!   board empties, centre control, and the back-rank guard (47-49 for White) while the opponent has men;
//! * formation: the balance between the left and the right wing, outposts supported from behind, and men
//!   hanging on the edge;
//! * mobility: the men's simple moves;
//! * runaway men: a man whose way to the crowning row is free of opponents (and the opponent has no king);
//! * endgame: the side with a king against only men is told to use it, and materials the FMJD rules call
//!   draws (up to three pieces with a king against a lone king; a king against a king and few pieces) are
//!   scaled toward zero;
//! * learned patterns: the men on 16 overlapping 4x4 regions, each configuration valued ([`patterns`]).

use super::board::{BOARD, Board, NEXT, SQ_BIT, WHITE, shift};
use super::patterns;

pub const MAN: i32 = 100;
/// King value with a full board and with an empty one (interpolated by the number of men).
pub const KING_OPENING: i32 = 280;
pub const KING_ENDING: i32 = 320;

const fn squares(list: &[u8]) -> u64 {
    let mut b = 0;
    let mut i = 0;
    while i < list.len() {
        b |= 1u64 << SQ_BIT[(list[i] - 1) as usize];
        i += 1;
    }
    b
}

/// Square `s` to `51 - s`: the board seen from the other side.
#[inline(always)]
const fn turn(b: u64) -> u64 {
    b.reverse_bits() >> 10
}

/// Row 0 is squares 1-5 (White crowns there), row 9 squares 46-50.
const fn row_of(i: usize) -> usize {
    i / 5
}

/// Column 0-9 of square index `i`, left to right as White sees the board.
const fn col_of(i: usize) -> usize {
    let r = i / 5;
    let k = i % 5;
    if r & 1 == 0 { 2 * k + 1 } else { 2 * k }
}

/// White's squares on the left half of the board (columns 0-4).
const LEFT: u64 = {
    let mut b = 0u64;
    let mut i = 0;
    while i < 50 {
        if col_of(i) < 5 {
            b |= 1u64 << SQ_BIT[i];
        }
        i += 1;
    }
    b
};
const RIGHT: u64 = BOARD & !LEFT;

/// The edge columns.
const EDGE: u64 = squares(&[6, 16, 26, 36, 46, 5, 15, 25, 35, 45]);

/// White's back-rank guard squares.
const GUARD: u64 = squares(&[47, 48, 49]);
const GUARD_BLACK: u64 = turn(GUARD);

/// White's central outpost squares.
const OUTPOST: u64 = squares(&[22, 23, 24, 27, 28, 29]);
const OUTPOST_BLACK: u64 = turn(OUTPOST);

/// Men values by rows advanced (0 = own back rank), with a full board and with few men.
const ADVANCE_OPENING: [i32; 10] = [0, 2, 4, 6, 8, 10, 12, 15, 20, 0];
const ADVANCE_ENDING: [i32; 10] = [0, 6, 12, 18, 25, 33, 42, 55, 75, 0];

/// Number of men buckets (total men on the board / 2, 0-20).
const PHASES: usize = 21;

/// Piece-square values of men, `[side][phase][bit]`. White's row `r` is `9 - r` rows advanced; Black's are
/// White's turned half a turn.
const MEN_PST: [[[i16; 64]; PHASES]; 2] = {
    let mut t = [[[0i16; 64]; PHASES]; 2];
    let mut phase = 0;
    while phase < PHASES {
        let mut i = 0;
        while i < 50 {
            let adv = 9 - row_of(i);
            let c = col_of(i);
            let full = phase as i32;
            let empty = (PHASES - 1 - phase) as i32;
            let mut v = (ADVANCE_OPENING[adv] * full + ADVANCE_ENDING[adv] * empty) / (PHASES as i32 - 1);
            // Centre columns, more while the board is full.
            if c >= 3 && c <= 6 && adv >= 2 && adv <= 6 {
                v += 2 + 6 * full / 20;
            }
            let bit = SQ_BIT[i] as usize;
            t[0][phase][bit] = v as i16;
            t[1][phase][SQ_BIT[49 - i] as usize] = v as i16;
            i += 1;
        }
        phase += 1;
    }
    t
};

/// For each square, the squares a White man there can still reach on its way to the crowning row, widened
/// by one column on each side (opponents there can step into its way): `[side][bit]`.
const CONE: [[u64; 64]; 2] = {
    let mut t = [[0u64; 64]; 2];
    let mut i = 0;
    while i < 50 {
        let r = row_of(i) as i32;
        let c = col_of(i) as i32;
        let mut cone = 0u64;
        let mut j = 0;
        while j < 50 {
            let rj = row_of(j) as i32;
            let cj = col_of(j) as i32;
            let up = r - rj;
            if up >= 1 && (cj - c).abs() <= up + 1 {
                cone |= 1u64 << SQ_BIT[j];
            }
            j += 1;
        }
        t[0][SQ_BIT[i] as usize] = cone;
        t[1][SQ_BIT[49 - i] as usize] = turn(cone);
        i += 1;
    }
    t
};

/// The rows (from White's side) within reach of a runaway: White's men on rows 0-3 (squares 1-20).
const RUNAWAY_ZONE: [u64; 2] = [squares_range(1, 20), squares_range(31, 50)];

const fn squares_range(lo: u8, hi: u8) -> u64 {
    let mut b = 0u64;
    let mut s = lo;
    while s <= hi {
        b |= 1u64 << SQ_BIT[(s - 1) as usize];
        s += 1;
    }
    b
}

/// Runaway bonus by rows still to go (1-4).
const RUNAWAY: [i32; 5] = [0, 150, 110, 70, 40];

/// The number of rows a man of `side` on `bit` still has to go.
#[inline(always)]
fn rows_to_go(side: usize, bit: u32) -> i32 {
    let sq = super::board::square_of_bit(bit) as i32 - 1;
    let r = sq / 5;
    if side == WHITE { r } else { 9 - r }
}

/// Evaluation from White's point of view.
fn white_score(b: &Board) -> i32 {
    let (hand, m, k) = hand_score(b);
    drawish(hand + patterns::white_score(b, m[0] + m[1]), m, k)
}

/// What the tuner needs of a position: the hand-written terms from White's view, the number of men, and the
/// learned patterns' terms ([`patterns::terms`]). `None` when the position's material is one whose score is
/// scaled toward a draw (the scaling is not linear in the weights).
pub fn training_terms(b: &Board) -> Option<TrainingTerms> {
    let (hand, m, k) = hand_score(b);
    let big = 10 * KING_ENDING;
    if drawish(big, m, k) != big || drawish(-big, m, k) != -big {
        return None;
    }
    Some(TrainingTerms { hand, men: m[0] + m[1], patterns: patterns::terms(b) })
}

/// A position's evaluation as the tuner sees it (see [`training_terms`]).
#[derive(Clone, Copy, Debug)]
pub struct TrainingTerms {
    /// The hand-written terms, from White's view.
    pub hand: i32,
    /// Men on the board.
    pub men: i32,
    /// Per region: the index into the stored values (`region * CONFIGS + config`) and its sign.
    pub patterns: [(u32, i8); patterns::REGIONS],
}

/// The hand-written terms from White's point of view, with the men and kings of each side.
fn hand_score(b: &Board) -> (i32, [i32; 2], [i32; 2]) {
    let kings = b.kings;
    let men = [b.pieces[0] & !kings, b.pieces[1] & !kings];
    let k = [(b.pieces[0] & kings).count_ones() as i32, (b.pieces[1] & kings).count_ones() as i32];
    let m = [men[0].count_ones() as i32, men[1].count_ones() as i32];
    let total_men = m[0] + m[1];
    let phase = ((total_men / 2) as usize).min(PHASES - 1);
    let king_value = (KING_OPENING * total_men + KING_ENDING * (40 - total_men.min(40))) / 40;

    let mut score = (m[0] - m[1]) * MAN + (k[0] - k[1]) * king_value;

    // Men's squares.
    let mut pst = 0i32;
    let mut w = men[0];
    while w != 0 {
        pst += MEN_PST[0][phase][w.trailing_zeros() as usize] as i32;
        w &= w - 1;
    }
    let mut bl = men[1];
    while bl != 0 {
        pst -= MEN_PST[1][phase][bl.trailing_zeros() as usize] as i32;
        bl &= bl - 1;
    }
    score += pst;

    if total_men >= 8 {
        // Back-rank guard while the opponent still has men to crown.
        score += 5 * ((men[0] & GUARD).count_ones() as i32 - (men[1] & GUARD_BLACK).count_ones() as i32);
        // Wing balance: a side crowded on one wing is weaker.
        let wl = (men[0] & LEFT).count_ones() as i32 - (men[0] & RIGHT).count_ones() as i32;
        let bl = (men[1] & LEFT).count_ones() as i32 - (men[1] & RIGHT).count_ones() as i32;
        score -= 3 * (wl.abs() - bl.abs());
        // Edge men are less useful in the middle game.
        score -= 4 * ((men[0] & EDGE).count_ones() as i32 - (men[1] & EDGE).count_ones() as i32);
        // Outposts supported by both men behind them.
        let w_support = shift(men[0], 0) & shift(men[0], 1); // squares with White men behind on both sides
        let b_support = shift(men[1], 2) & shift(men[1], 3);
        score += 8
            * ((men[0] & OUTPOST & w_support).count_ones() as i32
                - (men[1] & OUTPOST_BLACK & b_support).count_ones() as i32);
    }

    // Mobility of the men.
    let empty = b.empty();
    let mob_w = (shift(men[0], 0) & empty).count_ones() + (shift(men[0], 1) & empty).count_ones();
    let mob_b = (shift(men[1], 2) & empty).count_ones() + (shift(men[1], 3) & empty).count_ones();
    score += 2 * (mob_w as i32 - mob_b as i32);

    // Runaway men (only against a side without kings, which could stop them anywhere).
    for side in 0..2 {
        let opp = side ^ 1;
        if k[opp] != 0 {
            continue;
        }
        let mut cand = men[side] & RUNAWAY_ZONE[side];
        let mut bonus = 0;
        while cand != 0 {
            let bit = cand.trailing_zeros();
            cand &= cand - 1;
            if CONE[side][bit as usize] & b.pieces[opp] == 0 {
                let togo = rows_to_go(side, bit);
                if (1..=4).contains(&togo) {
                    bonus = bonus.max(RUNAWAY[togo as usize]);
                }
            }
        }
        score += if side == WHITE { bonus } else { -bonus };
    }

    // A king against men only: the men cannot stop it from hunting.
    if k[0] > 0 && k[1] == 0 && m[1] > 0 {
        score += 20;
    } else if k[1] > 0 && k[0] == 0 && m[0] > 0 {
        score -= 20;
    }

    (score, m, k)
}

/// Scale scores of materials that are (nearly always) drawn.
#[inline]
fn drawish(score: i32, m: [i32; 2], k: [i32; 2]) -> i32 {
    let pieces = [m[0] + k[0], m[1] + k[1]];
    let (strong, weak) = if score >= 0 { (0, 1) } else { (1, 0) };
    if k[weak] == 0 {
        return score;
    }
    // A lone king against up to three pieces is a draw (the FMJD endgame rules count it down); against
    // four kings it usually loses.
    if pieces[weak] == 1 && pieces[strong] <= 3 {
        return score / 16;
    }
    // A king and a few pieces against little more: hard to win.
    if pieces[strong] <= pieces[weak] + 1 && pieces[strong] <= 4 {
        return score / 4;
    }
    score
}

/// Static evaluation from the side to move's point of view.
#[inline]
pub fn evaluate(b: &Board) -> i32 {
    let s = white_score(b);
    if b.stm == WHITE { s } else { -s }
}

/// The position turned half a turn with the colours swapped (for the symmetry test).
#[cfg(test)]
pub fn mirrored(b: &Board) -> Board {
    Board { pieces: [turn(b.pieces[1]), turn(b.pieces[0])], kings: turn(b.kings), stm: b.stm ^ 1 }
}

const _: () = assert!(turn(BOARD) == BOARD && NEXT[0][0] == 255);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use crate::games::draughts::Draughts;

    #[test]
    fn mirrored_positions_score_the_same() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut g = Draughts::start();
        for i in 0..4000 {
            let b = *g.board();
            let mb = mirrored(&b);
            assert_eq!(evaluate(&b), evaluate(&mb), "{}", g.to_fen());
            let moves = g.legal_moves();
            if moves.is_empty() || i % 150 == 149 {
                g = Draughts::start();
                continue;
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            g.make(moves[(x % moves.len() as u64) as usize]);
        }
    }

    #[test]
    fn material_and_runaways() {
        let eval = |fen: &str| evaluate(Draughts::from_fen(fen).unwrap().board());
        assert_eq!(eval("W:W31-50:B1-20"), 0);
        assert!(eval("W:W31-50:B1-19") > 60);
        assert!(eval("B:W31-50:B1-19") < -60);
        // A king is worth about three men.
        let k = eval("W:WK28,40:B10,11,12") - eval("W:W40:B10,11,12");
        assert!((250..=350).contains(&k), "{k}");
        // A free man on 7 is close to crowning.
        assert!(eval("W:W7,45:B40,41") > eval("W:W27,45:B40,41") + 50);
        // A lone king against three kings is drawish.
        assert!(eval("W:WK1,K2,K3:BK50").abs() < 60);
    }
}
