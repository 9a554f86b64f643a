//! Static evaluation, in centi-men from the side to move's point of view.
//!
//! Every value is learned (`examples/tune.rs`, [`crate::tuning`]) and lives in the generated `weights.rs`, a
//! (full board, empty board) pair per line, tapered by the number of pieces on the board:
//! - material: men and kings, and in the ending (16 pieces or fewer) the side ahead's material once more,
//!   weighted by the pieces already off the board (trading down helps the side ahead);
//! - a piece-square value for men on each square, counted from the man's own side, and one for kings (the
//!   same at every phase: kings are rare on a full board);
//! - the back-rank guard (the bridge on 1 and 3 above all) while the opponent still has men to crown;
//! - mobility (the empty squares the side's pieces can step to);
//! - runaway men (no opposing piece in the cone ahead of them), a man in the dog-hole, Oreo's triangle, kings
//!   with no empty square beside them, the balance of men between the two halves of the board, and the move
//!   (the opposition) with equal numbers;
//! - in the ending (10 pieces or fewer), the stronger side's kings closing in on the weaker side's pieces,
//!   and the weaker side's kings holding the double corners.
//!
//! Every term is written once, for either side: White's masks are Black's turned half a turn (square `s`
//! becomes `33 - s`, which in the ghost layout is reversing the 35 bits), so the evaluation is symmetric (a
//! unit test checks it on mirrored positions). One generic function per group of terms writes them either
//! into the engine's integer sum or into the tuner's linear view ([`Terms`]), so the two cannot disagree.

use super::board::{BLACK, BOARD, Board, SQ_BIT};
use super::weights::VALUES;
use crate::tuning::LinearEval;

/// The pieces of a full board: the phase runs from 0 (24 pieces or more) to 24 (none).
pub const FULL: i32 = 24;

/// The material pairs.
const MAN: usize = 0;
const KING: usize = 1;
const TRADE_MAN: usize = 2;
const TRADE_KING: usize = 3;
/// The piece-square pairs: men on squares 1-32, then kings, counted from the piece's own side (Black's
/// numbering for Black, `33 - s` for White).
const MAN_SQUARE: usize = 4;
const KING_SQUARE: usize = MAN_SQUARE + 32;
/// The other terms' pairs, in the order of [`TERMS`].
const TERM: usize = KING_SQUARE + 32;

/// The terms beside material and position.
pub const TERMS: [&str; 11] = [
    "man on its own back rank while the opponent has men",
    "bridge: men on 1 and 3 while the opponent has men",
    "mobility: an empty square a piece can step to",
    "ending: the stronger side's king, 7 - its distance to the nearest weaker piece",
    "ending: the weaker side's king in a double corner",
    "runaway man: no opposing piece in the cone ahead",
    "man in the dog-hole (28, a piece of the opponent on 32)",
    "Oreo's triangle (men on 2, 3 and 7)",
    "king with no empty square beside it",
    "balance: the difference of men between the board's left and right halves",
    "the move: equal numbers and an odd count in the side to move's system",
];
const BACK_RANK: usize = TERM;
const BRIDGE: usize = TERM + 1;
const MOBILITY: usize = TERM + 2;
const DRIVE: usize = TERM + 3;
const DOUBLE_CORNER: usize = TERM + 4;
const RUNAWAY: usize = TERM + 5;
const DOG_HOLE: usize = TERM + 6;
const OREO: usize = TERM + 7;
const TRAPPED_KING: usize = TERM + 8;
const BALANCE: usize = TERM + 9;
const THE_MOVE: usize = TERM + 10;

/// Value pairs in all.
pub const PAIRS: usize = TERM + TERMS.len();

/// The pair is a king's square: one value at every phase.
pub fn untapered(pair: usize) -> bool {
    (KING_SQUARE..TERM).contains(&pair)
}

/// The name of value pair `pair`.
pub fn pair_name(pair: usize) -> String {
    match pair {
        MAN => "man".into(),
        KING => "king".into(),
        TRADE_MAN => "ending: a man ahead, times the pieces off the board / 48".into(),
        TRADE_KING => "ending: a king ahead, times the pieces off the board / 48".into(),
        p if p < KING_SQUARE => format!("man on {}", p - MAN_SQUARE + 1),
        p if p < TERM => format!("king on {}", p - KING_SQUARE + 1),
        p => TERMS[p - TERM].to_string(),
    }
}

const fn squares(list: &[u8]) -> u64 {
    let mut b = 0;
    let mut i = 0;
    while i < list.len() {
        b |= 1u64 << SQ_BIT[(list[i] - 1) as usize];
        i += 1;
    }
    b
}

/// Square `s` to `33 - s`, colours aside: the board seen from the other side.
#[inline(always)]
const fn turn(b: u64) -> u64 {
    b.reverse_bits() >> 29
}

/// A mask for Black and the same turned for White.
const fn both(black: u64) -> [u64; 2] {
    [black, turn(black)]
}

const BACK: [u64; 2] = both(squares(&[1, 2, 3, 4]));
const BRIDGE_MEN: [u64; 2] = both(squares(&[1, 3]));
const DOG_HOLE_MAN: [u64; 2] = both(squares(&[28]));
const DOG_HOLE_BLOCK: [u64; 2] = both(squares(&[32]));
const OREO_MEN: [u64; 2] = both(squares(&[2, 3, 7]));
const DOUBLE_CORNERS: u64 = squares(&[1, 5, 28, 32]);
/// Black's system (rows 1, 3, 5 and 7 from Black's side), for the move; White's is it turned.
const SYSTEM: [u64; 2] = both(squares(&[1, 2, 3, 4, 9, 10, 11, 12, 17, 18, 19, 20, 25, 26, 27, 28]));

/// (row, column) of each bit, for distances and cones.
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

/// The board's left half (columns 0-3 seen from Black's side); turned, it is the right half.
const LEFT: u64 = {
    let mut b = 0u64;
    let mut i = 0;
    while i < 32 {
        if COORD[SQ_BIT[i] as usize].1 < 4 {
            b |= 1u64 << SQ_BIT[i];
        }
        i += 1;
    }
    b
};
const RIGHT: u64 = turn(LEFT);

/// The cone ahead of a man of each side on each bit: every square it could reach moving forward.
const CONE: [[u64; 64]; 2] = {
    let mut t = [[0u64; 64]; 2];
    let mut i = 0;
    while i < 32 {
        let (r, c) = COORD[SQ_BIT[i] as usize];
        let mut j = 0;
        while j < 32 {
            let (r2, c2) = COORD[SQ_BIT[j] as usize];
            let dc = if c2 > c { c2 - c } else { c - c2 };
            if r2 > r && dc <= r2 - r {
                t[0][SQ_BIT[i] as usize] |= 1u64 << SQ_BIT[j];
            }
            if r2 < r && dc <= r - r2 {
                t[1][SQ_BIT[i] as usize] |= 1u64 << SQ_BIT[j];
            }
            j += 1;
        }
        i += 1;
    }
    t
};

/// The index 0-31 of each bit counted from each side (square `s` of White is `33 - s` of Black).
const OWN_INDEX: [[u8; 64]; 2] = {
    let mut t = [[0u8; 64]; 2];
    let mut i = 0;
    while i < 32 {
        t[0][SQ_BIT[i] as usize] = i as u8;
        t[1][SQ_BIT[31 - i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// A pair at phase `phase`, rounded toward zero.
const fn taper(v: [i16; 2], phase: i32) -> i32 {
    (v[0] as i32 * (FULL - phase) + v[1] as i32 * phase) / FULL
}

/// A pair at every phase.
const fn by_phase(pair: usize) -> [i32; 25] {
    let mut t = [0; 25];
    let mut p = 0;
    while p < 25 {
        t[p] = taper(VALUES[pair], p as i32);
        p += 1;
    }
    t
}

const MAN_VALUE: [i32; 25] = by_phase(MAN);
const KING_VALUE: [i32; 25] = by_phase(KING);
const TRADE_MAN_VALUE: [i32; 25] = by_phase(TRADE_MAN);
const TRADE_KING_VALUE: [i32; 25] = by_phase(TRADE_KING);

/// Piece-square values at each phase, `[side][phase][bit]`, from the pairs starting at `first`; `tapered`:
/// false takes each pair's first value at every phase.
const fn square_table(first: usize, tapered: bool) -> [[[i16; 64]; 25]; 2] {
    let mut t = [[[0i16; 64]; 25]; 2];
    let mut phase = 0;
    while phase < 25 {
        let mut i = 0;
        while i < 32 {
            let v = if tapered { taper(VALUES[first + i], phase as i32) } else { VALUES[first + i][0] as i32 } as i16;
            t[0][phase][SQ_BIT[i] as usize] = v;
            t[1][phase][SQ_BIT[31 - i] as usize] = v;
            i += 1;
        }
        phase += 1;
    }
    t
}

static MEN_PST: [[[i16; 64]; 25]; 2] = square_table(MAN_SQUARE, true);
/// Kings are rare on a full board: a king's square has one value at every phase (its pair's first; the
/// second is written equal to it), which its endings fit, rather than a full-board half fitted on a few
/// positions.
static KING_PST: [[[i16; 64]; 25]; 2] = square_table(KING_SQUARE, false);

#[inline(always)]
fn distance(a: u32, b: u32) -> i32 {
    let (ra, ca) = COORD[a as usize];
    let (rb, cb) = COORD[b as usize];
    ((ra - rb).abs()).max((ca - cb).abs()) as i32
}

/// Where the terms go: the engine sums their values, the tuner records them.
trait Terms {
    /// `count` times value pair `pair` for Black (`sign` 1) or White (`sign` -1).
    fn add(&mut self, sign: i32, pair: usize, count: i32);
    /// A man of `side` on `bit`.
    fn man(&mut self, side: usize, bit: u32);
    /// A king of `side` on `bit`.
    fn king(&mut self, side: usize, bit: u32);
}

/// The engine's sum, Black minus White, of one group of terms: the full-board and empty-board halves of the
/// pairs (tapered once, when the group is done) and the piece-square values (already tapered).
struct Sum {
    phase: usize,
    full: i32,
    empty: i32,
    tapered: i32,
}

impl Sum {
    fn new(phase: usize) -> Sum {
        Sum { phase, full: 0, empty: 0, tapered: 0 }
    }

    #[inline(always)]
    fn value(&self) -> i32 {
        self.tapered + (self.full * (FULL - self.phase as i32) + self.empty * self.phase as i32) / FULL
    }
}

impl Terms for Sum {
    #[inline(always)]
    fn add(&mut self, sign: i32, pair: usize, count: i32) {
        let v = VALUES[pair];
        self.full += sign * count * v[0] as i32;
        self.empty += sign * count * v[1] as i32;
    }

    #[inline(always)]
    fn man(&mut self, side: usize, bit: u32) {
        let v = MEN_PST[side][self.phase][bit as usize] as i32;
        self.tapered += if side == BLACK { v } else { -v };
    }

    #[inline(always)]
    fn king(&mut self, side: usize, bit: u32) {
        let v = KING_PST[side][self.phase][bit as usize] as i32;
        self.tapered += if side == BLACK { v } else { -v };
    }
}

/// The tuner's view: value `2 · pair` is a pair's full-board half, `2 · pair + 1` its empty-board half.
struct Linear<'a> {
    out: &'a mut LinearEval,
    /// The full-board half's share, `(24 - phase) / 24`.
    full: f32,
}

impl Terms for Linear<'_> {
    fn add(&mut self, sign: i32, pair: usize, count: i32) {
        let c = (sign * count) as f32;
        self.out.add(2 * pair, c * self.full);
        self.out.add(2 * pair + 1, c * (1.0 - self.full));
    }

    fn man(&mut self, side: usize, bit: u32) {
        let sign = if side == BLACK { 1 } else { -1 };
        self.add(sign, MAN_SQUARE + OWN_INDEX[side][bit as usize] as usize, 1);
    }

    fn king(&mut self, side: usize, bit: u32) {
        let sign = if side == BLACK { 1.0 } else { -1.0 };
        self.out.add(2 * (KING_SQUARE + OWN_INDEX[side][bit as usize] as usize), sign);
    }
}

/// One side's positional terms: Black (`DOWN`, moving toward higher squares) or White. The masks of White
/// are those of Black turned half a turn.
#[inline(always)]
fn side_terms<const DOWN: bool, T: Terms>(me: u64, opp: u64, kings: u64, t: &mut T) {
    let (side, sign) = if DOWN { (0, 1) } else { (1, -1) };
    let men = me & !kings;
    let my_kings = me & kings;
    let empty = BOARD & !(me | opp);

    // Back rank: while the opponent has men that could crown, keep the guard (the bridge above all).
    if opp & !kings != 0 {
        t.add(sign, BACK_RANK, (men & BACK[side]).count_ones() as i32);
        t.add(sign, BRIDGE, (men & BRIDGE_MEN[side] == BRIDGE_MEN[side]) as i32);
    }

    // Men square by square, and the runaways among them.
    let mut runaway = 0;
    let mut m = men;
    while m != 0 {
        let bit = m.trailing_zeros();
        t.man(side, bit);
        runaway += (CONE[side][bit as usize] & opp == 0) as i32;
        m &= m - 1;
    }
    t.add(sign, RUNAWAY, runaway);

    // Kings square by square, and those with no empty square beside them.
    let mut trapped = 0;
    let mut k = my_kings;
    while k != 0 {
        let bit = k.trailing_zeros();
        t.king(side, bit);
        let b = 1u64 << bit;
        trapped += (((b << 4) | (b << 5) | (b >> 4) | (b >> 5)) & empty == 0) as i32;
        k &= k - 1;
    }
    t.add(sign, TRAPPED_KING, trapped);

    // Mobility: the empty squares the side's pieces can step to.
    let (forward, backward) = if DOWN { (me, my_kings) } else { (my_kings, me) };
    let reach = (forward << 4) | (forward << 5) | (backward >> 4) | (backward >> 5);
    t.add(sign, MOBILITY, (reach & empty).count_ones() as i32);

    // Formations.
    t.add(sign, DOG_HOLE, (men & DOG_HOLE_MAN[side] != 0 && opp & DOG_HOLE_BLOCK[side] != 0) as i32);
    t.add(sign, OREO, (men & OREO_MEN[side] == OREO_MEN[side]) as i32);
    let (left, right) = if DOWN { (LEFT, RIGHT) } else { (RIGHT, LEFT) };
    t.add(sign, BALANCE, ((men & left).count_ones() as i32 - (men & right).count_ones() as i32).abs());
}

/// The move (the opposition): with equal numbers, the side to move has it when the pieces in its system
/// are odd in number.
#[inline(always)]
fn the_move<T: Terms>(b: &Board, t: &mut T) {
    let (black, white) = (b.pieces[0], b.pieces[1]);
    if black.count_ones() == white.count_ones() {
        let odd = ((black | white) & SYSTEM[b.stm]).count_ones() as i32 & 1;
        t.add(if b.stm == BLACK { 1 } else { -1 }, THE_MOVE, odd);
    }
}

/// The ending with 10 pieces or fewer: the stronger side's kings close in on the weaker side's pieces (which
/// must exist), and the weaker side's kings hold out best in the double corners.
#[inline]
fn ending_terms<T: Terms>(b: &Board, strong: usize, t: &mut T) {
    let weak = strong ^ 1;
    let sign = if strong == BLACK { 1 } else { -1 };
    let weak_pieces = b.pieces[weak];
    let mut drive = 0;
    let mut k = b.pieces[strong] & b.kings;
    while k != 0 {
        let from = k.trailing_zeros();
        k &= k - 1;
        let mut nearest = 8;
        let mut w = weak_pieces;
        while w != 0 {
            nearest = nearest.min(distance(from, w.trailing_zeros()));
            w &= w - 1;
        }
        drive += 7 - nearest;
    }
    t.add(sign, DRIVE, drive);
    t.add(-sign, DOUBLE_CORNER, (weak_pieces & b.kings & DOUBLE_CORNERS).count_ones() as i32);
}

/// Numbers of men and kings, Black minus White, the pieces on the board and the phase.
#[inline(always)]
fn counts(b: &Board) -> (i32, i32, i32, usize) {
    let men = |s: usize| (b.pieces[s] & !b.kings).count_ones() as i32;
    let kings = |s: usize| (b.pieces[s] & b.kings).count_ones() as i32;
    let total = (b.pieces[0] | b.pieces[1]).count_ones() as i32;
    (men(0) - men(1), kings(0) - kings(1), total, (FULL - total).max(0) as usize)
}

/// Evaluate for the side to move.
pub fn evaluate(b: &Board) -> i32 {
    let (dm, dk, total, phase) = counts(b);
    let mut black = Sum::new(phase);
    side_terms::<true, _>(b.pieces[0], b.pieces[1], b.kings, &mut black);
    let mut white = Sum::new(phase);
    side_terms::<false, _>(b.pieces[1], b.pieces[0], b.kings, &mut white);
    let material = MAN_VALUE[phase] * dm + KING_VALUE[phase] * dk;
    let mut score = material + black.value() + white.value();
    let mut shared = Sum::new(phase);
    the_move(b, &mut shared);
    if material != 0 && total <= 16 {
        score += (TRADE_MAN_VALUE[phase] * dm + TRADE_KING_VALUE[phase] * dk) * (24 - total) / 48;
        let strong = if material > 0 { 0 } else { 1 };
        if total <= 10 && b.pieces[strong ^ 1] != 0 {
            ending_terms(b, strong, &mut shared);
        }
    }
    score += shared.value();
    if b.stm == BLACK { score } else { -score }
}

/// The evaluation from Black's view as a linear function of the values (value `2 · pair` a pair's full-board
/// half, `2 · pair + 1` its empty-board half), up to the engine's rounding of the tapered values. Which side
/// is ahead (for the ending's terms) is decided as the engine decides it, with the shipped values: with more
/// men on one side and more kings on the other it depends on the values, and the fit takes the engine's
/// present choice as given.
pub fn linear_eval(b: &Board, out: &mut LinearEval) -> bool {
    let (dm, dk, total, phase) = counts(b);
    out.clear();
    let mut t = Linear { out, full: (FULL - phase as i32) as f32 / FULL as f32 };
    side_terms::<true, _>(b.pieces[0], b.pieces[1], b.kings, &mut t);
    side_terms::<false, _>(b.pieces[1], b.pieces[0], b.kings, &mut t);
    t.add(1, MAN, dm);
    t.add(1, KING, dk);
    the_move(b, &mut t);
    let material = MAN_VALUE[phase] * dm + KING_VALUE[phase] * dk;
    if material != 0 && total <= 16 {
        let trade = (24 - total) as f32 / 48.0;
        for (pair, n) in [(TRADE_MAN, dm), (TRADE_KING, dk)] {
            let c = n as f32 * trade;
            t.out.add(2 * pair, c * t.full);
            t.out.add(2 * pair + 1, c * (1.0 - t.full));
        }
        let strong = if material > 0 { 0 } else { 1 };
        if total <= 10 && b.pieces[strong ^ 1] != 0 {
            ending_terms(b, strong, &mut t);
        }
    }
    true
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
        assert_eq!(LEFT | RIGHT, BOARD);
        assert_eq!(LEFT & RIGHT, 0);
        assert_eq!(LEFT.count_ones(), 16);
        assert_eq!(turn(SYSTEM[0]) | SYSTEM[0], BOARD);
        // The cone ahead of a Black man on 1 holds 5, 6, 9, 10, 13, 14 and 15 but not 11, 16 nor 2.
        let cone = CONE[0][SQ_BIT[0] as usize];
        assert_eq!(cone & squares(&[5, 6, 9, 10, 11, 13, 14, 15, 16, 2]), squares(&[5, 6, 9, 10, 13, 14, 15]));
        assert_eq!(CONE[1][SQ_BIT[31] as usize], turn(cone));
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
            "B:W32,26,30,31:B28,2,3,7",
            "W:W5,K6,K10,29:B1,K2,9,K27",
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

    #[test]
    fn names() {
        assert_eq!(pair_name(MAN_SQUARE), "man on 1");
        assert_eq!(pair_name(KING_SQUARE + 31), "king on 32");
        assert_eq!(pair_name(THE_MOVE), TERMS[10]);
        assert_eq!(PAIRS, 79);
    }
}
