//! The board: a 35-bit "ghost" layout in a `u64` so that every diagonal step is a constant shift, the move
//! type, and the move generator.
//!
//! Squares are numbered 1-32 as in PDN: Black starts on 1-12 and moves toward higher numbers, White on 21-32.
//! Row `r` (0-7, row 0 = squares 1-4) holds four dark squares `k` = 0-3; the bit of square (r, k) is
//! `9 * (r / 2) + 4 * (r % 2) + k`. Bits 8, 17 and 26 are never on the board ("ghosts"), so one step toward
//! higher numbers is `+4` or `+5`, one step back `-4` or `-5`, and a step off the side of the board always
//! lands on a ghost bit or outside bits 0-34.

/// Black's pieces are `pieces[0]` (Side::First), White's `pieces[1]`.
pub const BLACK: usize = 0;
pub const WHITE: usize = 1;

/// The bit of each square index 0-31 (square number - 1).
pub const SQ_BIT: [u8; 32] = {
    let mut t = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        let r = i / 4;
        let k = i % 4;
        t[i] = (9 * (r / 2) + 4 * (r % 2) + k) as u8;
        i += 1;
    }
    t
};

/// The square index 0-31 of each bit 0-34 (255 for the ghost bits).
pub const BIT_SQ: [u8; 64] = {
    let mut t = [255u8; 64];
    let mut i = 0;
    while i < 32 {
        t[SQ_BIT[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// Every square of the board.
pub const BOARD: u64 = {
    let mut b = 0u64;
    let mut i = 0;
    while i < 32 {
        b |= 1u64 << SQ_BIT[i];
        i += 1;
    }
    b
};

/// Squares 1-4 (White crowns here) and 29-32 (Black crowns here).
pub const ROW_TOP: u64 = 0b1111;
pub const ROW_BOTTOM: u64 = 0b1111 << 31;

/// The row each side crowns on.
pub const CROWN_ROW: [u64; 2] = [ROW_BOTTOM, ROW_TOP];

/// The four directions, as shifts of one step: 0 = +4, 1 = +5 (toward higher numbers, Black's forward),
/// 2 = -4, 3 = -5 (toward lower numbers, White's forward).
pub const STEP: [i32; 4] = [4, 5, -4, -5];

#[inline(always)]
pub const fn shift(b: u64, d: usize) -> u64 {
    match d {
        0 => b << 4,
        1 => b << 5,
        2 => b >> 4,
        _ => b >> 5,
    }
}

#[inline(always)]
pub const fn bit_of_square(square: u8) -> u64 {
    1u64 << SQ_BIT[(square - 1) as usize]
}

/// The square number (1-32) of a bit index.
#[inline(always)]
pub const fn square_of_bit(bit: u32) -> u8 {
    BIT_SQ[bit as usize] + 1
}

/// A move: a simple step, or a jump with every captured piece and the direction of each hop (two jumps that
/// capture the same pieces and land on the same square by different paths are different moves).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Move {
    /// Captured pieces, as board bits (0 for a simple move).
    pub(crate) cap: u64,
    /// Direction of each hop, two bits each, the first hop in the low bits. A jump has at most 9 hops (a
    /// piece on the edge cannot be jumped, which leaves 9 jumpable squares of the other row parity).
    pub(crate) path: u32,
    /// Start and end bit.
    pub(crate) from: u8,
    pub(crate) to: u8,
    /// Number of hops (0 for a simple move).
    pub(crate) hops: u8,
}

impl Move {
    /// Starting square, 1-32.
    pub fn from_square(self) -> u8 {
        square_of_bit(self.from as u32)
    }

    /// Final square, 1-32.
    pub fn to_square(self) -> u8 {
        square_of_bit(self.to as u32)
    }

    pub fn is_jump(self) -> bool {
        self.hops > 0
    }

    /// Number of pieces captured.
    pub fn captures(self) -> u32 {
        self.hops as u32
    }

    /// Captured squares (1-32), ascending.
    pub fn captured_squares(self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut c = self.cap;
        while c != 0 {
            out.push(square_of_bit(c.trailing_zeros()));
            c &= c - 1;
        }
        out.sort_unstable();
        out
    }

    /// Every square the piece stands on, in order: the start, then each landing square (the last is the end).
    pub fn squares(self) -> Vec<u8> {
        let mut out = vec![self.from_square()];
        if self.hops == 0 {
            out.push(self.to_square());
            return out;
        }
        let mut at = self.from as i32;
        for i in 0..self.hops {
            let d = ((self.path >> (2 * i as u32)) & 3) as usize;
            at += 2 * STEP[d];
            out.push(square_of_bit(at as u32));
        }
        out
    }
}

/// The bare position: pieces and side to move (0 = Black, 1 = White).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Board {
    pub pieces: [u64; 2],
    pub kings: u64,
    pub stm: usize,
}

/// Somewhere to put generated moves.
pub trait MoveSink {
    fn push_move(&mut self, m: Move);
}

impl MoveSink for Vec<Move> {
    #[inline(always)]
    fn push_move(&mut self, m: Move) {
        self.push(m);
    }
}

/// Counts moves without storing them.
pub struct Counter(pub u64);

impl MoveSink for Counter {
    #[inline(always)]
    fn push_move(&mut self, _m: Move) {
        self.0 += 1;
    }
}

impl Board {
    pub const fn start() -> Board {
        let mut black = 0u64;
        let mut white = 0u64;
        let mut i = 0;
        while i < 12 {
            black |= 1u64 << SQ_BIT[i];
            white |= 1u64 << SQ_BIT[i + 20];
            i += 1;
        }
        Board { pieces: [black, white], kings: 0, stm: BLACK }
    }

    #[inline(always)]
    pub fn empty(&self) -> u64 {
        BOARD & !(self.pieces[0] | self.pieces[1])
    }

    /// The pieces of the side to move that can jump.
    #[inline(always)]
    pub fn jumpers(&self) -> u64 {
        let me = self.pieces[self.stm];
        let opp = self.pieces[self.stm ^ 1];
        let empty = self.empty();
        // Pieces moving toward higher numbers: all of Black's, White's kings.
        let down = if self.stm == BLACK { me } else { me & self.kings };
        let up = if self.stm == WHITE { me } else { me & self.kings };
        let mut j = 0;
        if down != 0 {
            j |= down & (((opp >> 4) & (empty >> 8)) | ((opp >> 5) & (empty >> 10)));
        }
        if up != 0 {
            j |= up & (((opp << 4) & (empty << 8)) | ((opp << 5) & (empty << 10)));
        }
        j
    }

    /// Simple moves' targets per direction, for pieces `movers` (the caller filters by direction).
    #[inline(always)]
    fn movers_by_dir(&self) -> [u64; 4] {
        let me = self.pieces[self.stm];
        let kings = me & self.kings;
        if self.stm == BLACK { [me, me, kings, kings] } else { [kings, kings, me, me] }
    }

    /// The number of legal moves (every jump path counted).
    #[inline]
    pub fn count_moves(&self) -> u64 {
        let jumpers = self.jumpers();
        if jumpers != 0 {
            let mut c = Counter(0);
            self.gen_jumps(jumpers, &mut c);
            return c.0;
        }
        let empty = self.empty();
        let m = self.movers_by_dir();
        (((m[0] << 4) & empty).count_ones()
            + ((m[1] << 5) & empty).count_ones()
            + ((m[2] >> 4) & empty).count_ones()
            + ((m[3] >> 5) & empty).count_ones()) as u64
    }

    /// Every legal move.
    #[inline]
    pub fn generate<S: MoveSink>(&self, out: &mut S) {
        let jumpers = self.jumpers();
        if jumpers != 0 {
            self.gen_jumps(jumpers, out);
        } else {
            self.gen_simple(out);
        }
    }

    /// Jumps only (nothing when there are none).
    #[inline]
    pub fn generate_jumps<S: MoveSink>(&self, out: &mut S) {
        let jumpers = self.jumpers();
        if jumpers != 0 {
            self.gen_jumps(jumpers, out);
        }
    }

    #[inline]
    fn gen_simple<S: MoveSink>(&self, out: &mut S) {
        let empty = self.empty();
        let m = self.movers_by_dir();
        for (d, &movers) in m.iter().enumerate() {
            if movers == 0 {
                continue;
            }
            let mut t = shift(movers, d) & empty;
            while t != 0 {
                let to = t.trailing_zeros() as i32;
                t &= t - 1;
                let from = to - STEP[d];
                out.push_move(Move { cap: 0, path: 0, from: from as u8, to: to as u8, hops: 0 });
            }
        }
    }

    fn gen_jumps<S: MoveSink>(&self, mut jumpers: u64, out: &mut S) {
        let me = self.stm;
        let opp = self.pieces[me ^ 1];
        while jumpers != 0 {
            let from = jumpers.trailing_zeros();
            jumpers &= jumpers - 1;
            let fb = 1u64 << from;
            // The jumping piece leaves its square: a king may come back over or onto it.
            let empty = self.empty() | fb;
            let from = from as u8;
            match (self.kings & fb != 0, me == BLACK) {
                (true, _) => jump_dfs::<true, true, S>(from, fb, opp, empty, 0, 0, 0, out),
                (false, true) => jump_dfs::<false, true, S>(from, fb, opp, empty, 0, 0, 0, out),
                (false, false) => jump_dfs::<false, false, S>(from, fb, opp, empty, 0, 0, 0, out),
            }
        }
    }
}

/// Continue a jump from `at` (one bit). `opp` is the opponent's pieces not yet captured; captured pieces are
/// gone, and a jumped square can never be a landing square (landing squares keep the parity of the start
/// square, jumped squares do not), so `empty` stays the same along the whole jump.
/// `KING`: the jumping piece is a king (all four directions); otherwise a man of Black (`DOWN`, toward higher
/// squares) or of White.
#[allow(clippy::too_many_arguments)]
#[inline]
fn jump_dfs<const KING: bool, const DOWN: bool, S: MoveSink>(
    from: u8,
    at: u64,
    opp: u64,
    empty: u64,
    cap: u64,
    path: u32,
    hops: u8,
    out: &mut S,
) {
    let mut any = false;
    for d in 0..4 {
        if !KING {
            // Men jump forward only: Black toward higher numbers (directions 0, 1), White lower (2, 3).
            if DOWN != (d < 2) {
                continue;
            }
        }
        let mid = shift(at, d);
        if mid & opp == 0 {
            continue;
        }
        let land = shift(mid, d);
        if land & empty == 0 {
            continue;
        }
        any = true;
        let cap2 = cap | mid;
        let path2 = path | ((d as u32) << (2 * hops as u32));
        if !KING && land & if DOWN { CROWN_ROW[BLACK] } else { CROWN_ROW[WHITE] } != 0 {
            // A man that reaches the crowning row is crowned and the move ends there.
            out.push_move(Move { cap: cap2, path: path2, from, to: land.trailing_zeros() as u8, hops: hops + 1 });
        } else {
            jump_dfs::<KING, DOWN, S>(from, land, opp & !mid, empty, cap2, path2, hops + 1, out);
        }
    }
    if !any && hops > 0 {
        out.push_move(Move { cap, path, from, to: at.trailing_zeros() as u8, hops });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        assert_eq!(BOARD.count_ones(), 32);
        assert_eq!(BOARD & ((1 << 8) | (1 << 17) | (1 << 26)), 0);
        assert_eq!(BOARD >> 35, 0);
        for sq in 1..=32u8 {
            assert_eq!(square_of_bit(bit_of_square(sq).trailing_zeros()), sq);
        }
    }

    #[test]
    fn start_moves() {
        let b = Board::start();
        let mut v = Vec::new();
        b.generate(&mut v);
        let mut s: Vec<(u8, u8)> = v.iter().map(|m| (m.from_square(), m.to_square())).collect();
        s.sort();
        assert_eq!(s, vec![(9, 13), (9, 14), (10, 14), (10, 15), (11, 15), (11, 16), (12, 16)]);
        assert_eq!(b.count_moves(), 7);
    }
}
