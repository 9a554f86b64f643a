//! Static evaluation, in centi-men from the side to move's point of view.
//!
//! Every positional term is written once, for either side: White's masks are Black's turned half a turn
//! (square `s` becomes `33 - s`, which in the ghost layout is reversing the 35 bits), so the evaluation is
//! symmetric (a unit test checks it on mirrored positions).
//!
//! Terms: material (man 100, king 130-150 growing as the board empties), the back-rank guard while the
//! opponent still has men to crown, centre control, advancement of men (worth more as the board empties),
//! mobility (simple moves, by popcount), and in the ending: trading pieces when ahead, the stronger side's
//! kings closing in on the weaker side's pieces, the weaker side's kings holding the double corners.

use super::board::{BLACK, BOARD, Board, SQ_BIT};

pub const MAN: i32 = 100;
/// King value with a full board and with an empty one (interpolated by the number of pieces).
pub const KING_OPENING: i32 = 130;
pub const KING_ENDING: i32 = 150;

const fn squares(list: &[u8]) -> u64 {
    let mut b = 0;
    let mut i = 0;
    while i < list.len() {
        b |= 1u64 << SQ_BIT[(list[i] - 1) as usize];
        i += 1;
    }
    b
}

/// Row `r` (0 = squares 1-4, Black's back rank).
const ROWS: [u64; 8] = {
    let mut t = [0u64; 8];
    let mut r = 0;
    while r < 8 {
        let mut k = 0;
        while k < 4 {
            t[r] |= 1u64 << SQ_BIT[r * 4 + k];
            k += 1;
        }
        r += 1;
    }
    t
};

/// Square `s` to `33 - s`, colours aside: the board seen from the other side.
#[inline(always)]
const fn turn(b: u64) -> u64 {
    b.reverse_bits() >> 29
}

const CENTRE: u64 = squares(&[14, 15, 18, 19]);
const INNER: u64 = squares(&[10, 11, 22, 23]);
/// Black's back-rank bridge and the double corner at Black's end.
const BRIDGE: u64 = squares(&[1, 3]);
const BRIDGE_WHITE: u64 = turn(BRIDGE);
const DOUBLE_CORNERS: u64 = squares(&[1, 5, 28, 32]);
const EDGES: u64 = squares(&[1, 2, 3, 4, 5, 12, 13, 20, 21, 28, 29, 30, 31, 32]);

/// Bonus of a man by rows advanced (0 = on its own back rank), with many pieces and with few.
const ADVANCE_OPENING: [i32; 8] = [0, 1, 2, 3, 4, 6, 8, 0];
const ADVANCE_ENDING: [i32; 8] = [0, 4, 8, 12, 17, 23, 30, 0];

/// Piece-square values of men, `[side][phase][bit]`: centre control and advancement (interpolated between
/// `ADVANCE_OPENING` and `ADVANCE_ENDING` by the phase). White's are Black's turned half a turn.
const MEN_PST: [[[i16; 64]; 25]; 2] = {
    let mut t = [[[0i16; 64]; 25]; 2];
    let mut phase = 0;
    while phase < 25 {
        let mut i = 0;
        while i < 32 {
            let r = i / 4;
            let bit = SQ_BIT[i];
            let mut v = (ADVANCE_OPENING[r] * (24 - phase as i32) + ADVANCE_ENDING[r] * phase as i32) / 24;
            if CENTRE & (1u64 << bit) != 0 {
                v += 6;
            } else if INNER & (1u64 << bit) != 0 {
                v += 2;
            }
            t[0][phase][bit as usize] = v as i16;
            t[1][phase][SQ_BIT[31 - i] as usize] = v as i16;
            i += 1;
        }
        phase += 1;
    }
    t
};

/// Piece-square values of kings (the same for both sides): the centre, away from the edges.
const KING_PST: [i16; 64] = {
    let mut t = [0i16; 64];
    let mut i = 0;
    while i < 32 {
        let b = 1u64 << SQ_BIT[i];
        t[SQ_BIT[i] as usize] = if CENTRE & b != 0 {
            8
        } else if EDGES & b != 0 {
            -6
        } else {
            0
        };
        i += 1;
    }
    t
};

/// (row, column) of each bit, for distances.
const COORD: [(i8, i8); 64] = {
    let mut t = [(0i8, 0i8); 64];
    let mut i = 0;
    while i < 32 {
        let r = (i / 4) as i8;
        let k = (i % 4) as i8;
        let c = if r % 2 == 0 { 2 * k + 1 } else { 2 * k };
        t[SQ_BIT[i] as usize] = (r, c);
        i += 1;
    }
    t
};

#[inline(always)]
fn distance(a: u32, b: u32) -> i32 {
    let (ra, ca) = COORD[a as usize];
    let (rb, cb) = COORD[b as usize];
    ((ra - rb).abs()).max((ca - cb).abs()) as i32
}

/// Positional terms for one side: Black (`DOWN`, moving toward higher squares) or White. `phase` runs from 0
/// (full board) to 24 (empty board). The masks of White are those of Black turned half a turn.
/// Returns the terms and the side's numbers of men and kings.
#[inline(always)]
fn side_terms<const DOWN: bool>(me: u64, opp: u64, kings: u64, phase: i32) -> (i32, i32, i32) {
    let men = me & !kings;
    let my_kings = me & kings;
    let empty = BOARD & !(me | opp);
    let opp_men = opp & !kings;
    let mut s = 0;

    // Back rank: while the opponent has men that could crown, keep the guard (the bridge above all).
    if opp_men != 0 {
        let bridge = if DOWN { BRIDGE } else { BRIDGE_WHITE };
        let back = (men & if DOWN { ROWS[0] } else { ROWS[7] }).count_ones() as i32;
        let guard = 6 * back + if men & bridge == bridge { 8 } else { 0 };
        s += guard * (24 - phase) / 24 + guard / 2;
    }

    // Centre control and advancement, square by square (no popcount instruction on the baseline target).
    let pst = &MEN_PST[if DOWN { 0 } else { 1 }][phase as usize];
    let (mut nm, mut nk) = (0, 0);
    let mut m = men;
    while m != 0 {
        s += pst[m.trailing_zeros() as usize] as i32;
        m &= m - 1;
        nm += 1;
    }
    let mut k = my_kings;
    while k != 0 {
        s += KING_PST[k.trailing_zeros() as usize] as i32;
        k &= k - 1;
        nk += 1;
    }

    // Mobility: the empty squares the side's pieces can step to.
    let (forward, backward) = if DOWN { (me, my_kings) } else { (my_kings, me) };
    let reach = (forward << 4) | (forward << 5) | (backward >> 4) | (backward >> 5);
    s += 3 * (reach & empty).count_ones() as i32;
    (s, nm, nk)
}

/// The ending: trade pieces when ahead, bring the kings to the weaker side's pieces, and (for the weaker
/// side) sit in the double corners. From Black's point of view.
fn ending_terms(b: &Board, material: i32, total: i32) -> i32 {
    let (strong, weak, sign) = if material > 0 { (0, 1, 1) } else { (1, 0, -1) };
    let strong_kings = b.pieces[strong] & b.kings;
    let weak_pieces = b.pieces[weak];
    let mut s = 0;
    // Trading down helps the side ahead.
    s += material.abs() * (24 - total) / 48;
    // Kings drive: the stronger side's kings close to the weaker side's pieces.
    if total <= 10 && weak_pieces != 0 {
        let mut k = strong_kings;
        while k != 0 {
            let from = k.trailing_zeros();
            k &= k - 1;
            let mut nearest = 8;
            let mut w = weak_pieces;
            while w != 0 {
                nearest = nearest.min(distance(from, w.trailing_zeros()));
                w &= w - 1;
            }
            s += 4 * (7 - nearest);
        }
        // The weaker side's kings hold out best in the double corners.
        s -= 12 * (weak_pieces & b.kings & DOUBLE_CORNERS).count_ones() as i32;
    }
    sign * s
}

/// Evaluate for the side to move.
pub fn evaluate(b: &Board) -> i32 {
    let black = b.pieces[0];
    let white = b.pieces[1];
    let kings = b.kings;
    let total = (black | white).count_ones() as i32;
    let phase = (24 - total).max(0);
    let (bs, bm, bk) = side_terms::<true>(black, white, kings, phase);
    let (ws, wm, wk) = side_terms::<false>(white, black, kings, phase);
    let king = (KING_OPENING * (24 - phase) + KING_ENDING * phase) / 24;
    let material = MAN * (bm - wm) + king * (bk - wk);
    let mut score = material + bs - ws;
    if material != 0 && total <= 16 {
        score += ending_terms(b, material, total);
    }
    if b.stm == BLACK { score } else { -score }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::checkers::Checkers;

    fn eval(fen: &str) -> i32 {
        evaluate(Checkers::from_fen(fen).unwrap().board())
    }

    /// The same position seen from the other side: squares `s` to `33 - s`, colours and side to move swapped.
    fn mirror(fen: &str) -> String {
        let g = Checkers::from_fen(fen).unwrap();
        let b = g.board();
        let list = |side: usize| {
            let mut v: Vec<String> = (1..=32u8)
                .filter(|&s| b.pieces[side] & squares(&[s]) != 0)
                .map(|s| format!("{}{}", if b.kings & squares(&[s]) != 0 { "K" } else { "" }, 33 - s))
                .collect();
            v.reverse();
            v.join(",")
        };
        format!("{}:W{}:B{}", if b.stm == BLACK { "W" } else { "B" }, list(0), list(1))
    }

    #[test]
    fn turning_the_board() {
        for s in 1..=32u8 {
            assert_eq!(turn(squares(&[s])), squares(&[33 - s]));
        }
        assert_eq!(turn(BOARD), BOARD);
    }

    #[test]
    fn symmetric() {
        assert_eq!(eval("B:W21-32:B1-12"), -eval("W:W21-32:B1-12"));
        assert_eq!(eval("B:W21-32:B1-12"), 0);
        for fen in [
            "B:W5,14,18,21,K27,28,30,31:B1,2,K9,10,12,K16,19,20",
            "W:WK1,K3,11:BK30,K32,28,24",
            "B:W18,19,25,26,K2:BK9,10,11,15,23",
            "W:W14,15,22,23,24,K31:B3,10,K11",
            "B:WK5:BK20,K27",
        ] {
            assert_eq!(eval(fen), eval(&mirror(fen)), "{fen} / {}", mirror(fen));
        }
    }

    #[test]
    fn sensible() {
        // A man up is good for the side that has it, whoever is to move.
        assert!(eval("B:W21-31:B1-12") > 60);
        assert!(eval("W:W21-31:B1-12") < -60);
        // A king is worth more than a man.
        assert!(eval("B:W20:BK13") > eval("B:W20:B13"));
        // Ahead, trading is good: 3 v 2 is better than 8 v 7 (same side to move, same difference).
        assert!(eval("B:WK14,K19:BK1,K2,K3") > eval("B:WK14,K19,K5,K6,K7,K8,K9:BK1,K2,K3,K10,K11,K12,K13,K28"));
    }
}
