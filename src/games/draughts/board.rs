//! The board: 50 squares in a `u64` with ghost bits, the move type, and the move generator.
//!
//! Squares are numbered 1-50 as in international draughts: square 1 is the leftmost dark square of the top
//! row seen from White, Black starts on 1-20 and moves toward higher numbers, White on 31-50. Square `s`
//! (1-50) is bit `i + i / 10` with `i = s - 1`: one ghost bit (10, 21, 32, 43) after every two rows, so that
//! every diagonal step is a constant shift (-6 up-left, -5 up-right, +5 down-left, +6 down-right, as White
//! sees the board) and a step off the side of the board lands on a ghost bit or outside bits 0-53.
//!
//! Captures follow the FMJD rules: men capture forward and backward, kings fly, the sequence capturing the
//! most pieces must be played, pieces are removed only after the whole sequence (they still block, and none
//! is jumped twice), and two sequences with the same start, end and captured set are one move.

/// White's pieces are `pieces[0]` (Side::First, moves first), Black's `pieces[1]`.
pub const WHITE: usize = 0;
pub const BLACK: usize = 1;

/// The bit of square index `i` (square number - 1).
pub const fn bit_index(i: usize) -> usize {
    i + i / 10
}

/// The bit of each square index 0-49.
pub const SQ_BIT: [u8; 50] = {
    let mut t = [0u8; 50];
    let mut i = 0;
    while i < 50 {
        t[i] = bit_index(i) as u8;
        i += 1;
    }
    t
};

/// The square number (1-50) of each bit (0 for ghost bits and bits past the board).
pub const BIT_SQ: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 50 {
        t[SQ_BIT[i] as usize] = i as u8 + 1;
        i += 1;
    }
    t
};

/// Every square of the board.
pub const BOARD: u64 = {
    let mut b = 0u64;
    let mut i = 0;
    while i < 50 {
        b |= 1u64 << SQ_BIT[i];
        i += 1;
    }
    b
};

/// The bits of squares 1-5 (White crowns here) and 46-50 (Black crowns here).
pub const ROW_TOP: u64 = 0b11111;
pub const ROW_BOTTOM: u64 = 0b11111 << 49;
/// The row each side crowns on, by side index.
pub const CROWN_ROW: [u64; 2] = [ROW_TOP, ROW_BOTTOM];

/// Directions: 0 = -6 (up-left), 1 = -5 (up-right), 2 = +5 (down-left), 3 = +6 (down-right), "up" being
/// toward square 1 (White's forward). The opposite of `d` is `3 - d`.
pub const STEP: [i32; 4] = [-6, -5, 5, 6];

/// The two directions square to `d`.
#[inline(always)]
pub const fn perpendicular(d: usize) -> [usize; 2] {
    if d == 0 || d == 3 { [1, 2] } else { [0, 3] }
}

/// Every square's neighbour in each direction (255 off the board).
pub const NEXT: [[u8; 64]; 4] = {
    let mut t = [[255u8; 64]; 4];
    let mut d = 0;
    while d < 4 {
        let mut i = 0;
        while i < 50 {
            let b = SQ_BIT[i] as i32;
            let n = b + STEP[d];
            if n >= 0 && n < 64 && (BOARD >> n) & 1 == 1 {
                t[d][b as usize] = n as u8;
            }
            i += 1;
        }
        d += 1;
    }
    t
};

/// Every square beyond a square in each direction, up to the edge (the square itself excluded).
pub const RAY: [[u64; 64]; 4] = {
    let mut t = [[0u64; 64]; 4];
    let mut d = 0;
    while d < 4 {
        let mut i = 0;
        while i < 50 {
            let b = SQ_BIT[i] as usize;
            let mut r = 0u64;
            let mut n = NEXT[d][b];
            while n != 255 {
                r |= 1u64 << n;
                n = NEXT[d][n as usize];
            }
            t[d][b] = r;
            i += 1;
        }
        d += 1;
    }
    t
};

/// One diagonal step of every bit of `b` in direction `d` (ghost bits and bits past the board dropped).
#[inline(always)]
pub const fn shift(b: u64, d: usize) -> u64 {
    (match d {
        0 => b >> 6,
        1 => b >> 5,
        2 => b << 5,
        _ => b << 6,
    }) & BOARD
}

/// The nearest of `bits` (non-empty, all on one ray) seen from the ray's start in direction `d`.
#[inline(always)]
pub const fn nearest(d: usize, bits: u64) -> u32 {
    if d < 2 { 63 - bits.leading_zeros() } else { bits.trailing_zeros() }
}

/// The bit of a square number (1-50).
#[inline(always)]
pub const fn bit_of_square(square: u8) -> u64 {
    1u64 << SQ_BIT[(square - 1) as usize]
}

/// The square number (1-50) of a bit index.
#[inline(always)]
pub const fn square_of_bit(bit: u32) -> u8 {
    BIT_SQ[bit as usize & 63]
}

/// A move: a step, or a capture with its captured set. Two capture sequences with the same start, end and
/// captured pieces are the same move (the rules say so), so the path is not stored: notation recovers it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Move {
    /// Captured pieces, as board bits (0 for a simple move).
    pub(crate) cap: u64,
    /// Start and end bit (equal when a capture comes back to its start square).
    pub(crate) from: u8,
    pub(crate) to: u8,
}

impl Move {
    /// Starting square, 1-50.
    pub fn from_square(self) -> u8 {
        square_of_bit(self.from as u32)
    }

    /// Final square, 1-50.
    pub fn to_square(self) -> u8 {
        square_of_bit(self.to as u32)
    }

    pub fn is_capture(self) -> bool {
        self.cap != 0
    }

    /// Number of pieces captured.
    pub fn captures(self) -> u32 {
        self.cap.count_ones()
    }

    /// Captured squares (1-50), ascending.
    pub fn captured_squares(self) -> Vec<u8> {
        squares_of(self.cap)
    }
}

/// The squares (1-50, ascending) of a set of bits.
pub fn squares_of(mut bits: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(bits.count_ones() as usize);
    while bits != 0 {
        out.push(square_of_bit(bits.trailing_zeros()));
        bits &= bits - 1;
    }
    out
}

/// The bare position: pieces and side to move.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Board {
    pub pieces: [u64; 2],
    pub kings: u64,
    pub stm: usize,
}

/// The capture generator's state for one moving piece.
struct Captures<'a> {
    out: &'a mut Vec<Move>,
    /// Most pieces captured by a sequence found so far (every move in `out` captures this many).
    best: u32,
    from: u8,
    /// Capturable pieces (the opponent's).
    opp: u64,
    /// Occupied squares, without the moving piece (its start square is empty while it moves).
    occ: u64,
}

impl Captures<'_> {
    #[inline(always)]
    fn add(&mut self, to: u32, cap: u64, n: u32) {
        if n < self.best {
            return;
        }
        if n > self.best {
            self.out.clear();
            self.best = n;
        } else if n >= 4 {
            // Two different orders of the same captures can only meet again after four or more captures;
            // fewer cannot repeat (the generator never lets one run of landing squares continue twice).
            let (from, to8) = (self.from, to as u8);
            if self.out.iter().any(|m| m.cap == cap && m.to == to8 && m.from == from) {
                return;
            }
        }
        self.out.push(Move { cap, from: self.from, to: to as u8 });
    }

    /// A man on `at` having captured `cap` (`n` pieces): continue or stop.
    fn man(&mut self, at: u32, cap: u64, n: u32) {
        let mut more = false;
        let capturable = self.opp & !cap;
        for next in &NEXT {
            let t = next[at as usize];
            if t == 255 || capturable & (1u64 << t) == 0 {
                continue;
            }
            let l = next[t as usize];
            if l == 255 || self.occ & (1u64 << l) != 0 {
                continue;
            }
            more = true;
            self.man(l as u32, cap | 1u64 << t, n + 1);
        }
        if !more && n > 0 {
            self.add(at, cap, n);
        }
    }

    /// A king on `at` having captured `cap` (`n` pieces) tries to capture along `d`; returns whether it can.
    /// Each landing square beyond the captured piece continues in the two square directions; the same
    /// direction is tried once for the whole run of landing squares (it meets the same next piece from each).
    fn king(&mut self, at: u32, d: usize, cap: u64, n: u32) -> bool {
        let ray = RAY[d][at as usize];
        let blockers = ray & self.occ;
        if blockers == 0 {
            return false;
        }
        let t = nearest(d, blockers);
        if self.opp & !cap & (1u64 << t) == 0 {
            return false;
        }
        let beyond = RAY[d][t as usize];
        let after = beyond & self.occ;
        let land = if after == 0 {
            beyond
        } else {
            let t2 = nearest(d, after);
            beyond & !(RAY[d][t2 as usize] | 1u64 << t2)
        };
        if land == 0 {
            return false;
        }
        let cap = cap | 1u64 << t;
        let n = n + 1;
        let first = nearest(d, land);
        let straight = self.king(first, d, cap, n);
        let [p, q] = perpendicular(d);
        let mut l = land;
        while l != 0 {
            let sq = l.trailing_zeros();
            l &= l - 1;
            let a = self.king(sq, p, cap, n);
            let b = self.king(sq, q, cap, n);
            if !(a || b || straight) {
                self.add(sq, cap, n);
            }
        }
        true
    }
}

impl Board {
    pub const fn start() -> Board {
        let mut white = 0u64;
        let mut black = 0u64;
        let mut i = 0;
        while i < 20 {
            black |= 1u64 << SQ_BIT[i];
            white |= 1u64 << SQ_BIT[i + 30];
            i += 1;
        }
        Board { pieces: [white, black], kings: 0, stm: WHITE }
    }

    #[inline(always)]
    pub fn occupied(&self) -> u64 {
        self.pieces[0] | self.pieces[1]
    }

    #[inline(always)]
    pub fn empty(&self) -> u64 {
        BOARD & !self.occupied()
    }

    /// The pieces of the side to move that can capture.
    #[inline]
    pub fn capturers(&self) -> u64 {
        let me = self.pieces[self.stm];
        let opp = self.pieces[self.stm ^ 1];
        let empty = self.empty();
        let men = me & !self.kings;
        let mut found = 0;
        if men != 0 {
            for d in 0..4 {
                // Opponents with an empty square beyond them along `d`, then the men just before them.
                found |= men & shift(shift(empty, 3 - d) & opp, 3 - d);
            }
        }
        let mut kings = me & self.kings;
        if kings != 0 {
            let occ = self.occupied();
            while kings != 0 {
                let k = kings.trailing_zeros() as usize;
                kings &= kings - 1;
                for d in 0..4 {
                    let blockers = RAY[d][k] & occ;
                    if blockers != 0 {
                        let t = nearest(d, blockers) as usize;
                        if opp & (1u64 << t) != 0 {
                            let l = NEXT[d][t];
                            if l != 255 && empty & (1u64 << l) != 0 {
                                found |= 1u64 << k;
                                break;
                            }
                        }
                    }
                }
            }
        }
        found
    }

    /// The side to move can capture.
    #[inline]
    pub fn has_capture(&self) -> bool {
        self.capturers() != 0
    }

    /// Every legal move, appended to `out` (which must be empty).
    #[inline]
    pub fn generate(&self, out: &mut Vec<Move>) {
        let capturers = self.capturers();
        if capturers != 0 {
            self.captures_of(capturers, out);
        } else {
            self.generate_quiet(out);
        }
    }

    /// Every legal capture (the sequences capturing the most pieces), appended to `out` (which must be empty).
    pub fn generate_captures(&self, out: &mut Vec<Move>) {
        let capturers = self.capturers();
        if capturers != 0 {
            self.captures_of(capturers, out);
        }
    }

    /// The legal captures, given the pieces that can capture.
    fn captures_of(&self, capturers: u64, out: &mut Vec<Move>) {
        let opp = self.pieces[self.stm ^ 1];
        let occ = self.occupied();
        let mut caps = Captures { out, best: 1, from: 0, opp, occ };
        let mut men = capturers & !self.kings;
        while men != 0 {
            let s = men.trailing_zeros();
            men &= men - 1;
            caps.from = s as u8;
            caps.occ = occ & !(1u64 << s);
            caps.man(s, 0, 0);
        }
        let mut kings = capturers & self.kings;
        while kings != 0 {
            let s = kings.trailing_zeros();
            kings &= kings - 1;
            caps.from = s as u8;
            caps.occ = occ & !(1u64 << s);
            for d in 0..4 {
                caps.king(s, d, 0, 0);
            }
        }
    }

    /// Every simple move (no capture is possible), appended to `out`.
    pub fn generate_quiet(&self, out: &mut Vec<Move>) {
        let me = self.pieces[self.stm];
        let empty = self.empty();
        let men = me & !self.kings;
        let (d0, d1) = if self.stm == WHITE { (0, 1) } else { (2, 3) };
        for d in [d0, d1] {
            let mut to = shift(men, d) & empty;
            let back = -STEP[d];
            while to != 0 {
                let t = to.trailing_zeros();
                to &= to - 1;
                out.push(Move { cap: 0, from: (t as i32 + back) as u8, to: t as u8 });
            }
        }
        let mut kings = me & self.kings;
        if kings != 0 {
            let occ = self.occupied();
            while kings != 0 {
                let k = kings.trailing_zeros() as usize;
                kings &= kings - 1;
                for d in 0..4 {
                    let mut to = king_ray(d, k, occ);
                    while to != 0 {
                        let t = to.trailing_zeros();
                        to &= to - 1;
                        out.push(Move { cap: 0, from: k as u8, to: t as u8 });
                    }
                }
            }
        }
    }

    /// The number of simple moves (no capture is possible).
    #[inline]
    pub fn count_quiet(&self) -> u64 {
        let me = self.pieces[self.stm];
        let empty = self.empty();
        let men = me & !self.kings;
        let (d0, d1) = if self.stm == WHITE { (0, 1) } else { (2, 3) };
        let mut n = ((shift(men, d0) & empty).count_ones() + (shift(men, d1) & empty).count_ones()) as u64;
        let mut kings = me & self.kings;
        if kings != 0 {
            let occ = self.occupied();
            while kings != 0 {
                let k = kings.trailing_zeros() as usize;
                kings &= kings - 1;
                for d in 0..4 {
                    n += king_ray(d, k, occ).count_ones() as u64;
                }
            }
        }
        n
    }

    /// The number of legal moves; `scratch` holds captures while they are deduplicated.
    #[inline]
    pub fn count_moves(&self, scratch: &mut Vec<Move>) -> u64 {
        let capturers = self.capturers();
        if capturers != 0 {
            scratch.clear();
            self.captures_of(capturers, scratch);
            scratch.len() as u64
        } else {
            self.count_quiet()
        }
    }

    /// The board after the legal move `m`.
    #[inline(always)]
    pub fn play(&self, m: Move) -> Board {
        let me = self.stm;
        let fb = 1u64 << m.from;
        let tb = 1u64 << m.to;
        let mut pieces = self.pieces;
        let mut kings = self.kings & !m.cap;
        pieces[me] ^= fb ^ tb;
        pieces[me ^ 1] &= !m.cap;
        if kings & fb != 0 {
            kings ^= fb ^ tb;
        } else {
            kings |= tb & CROWN_ROW[me];
        }
        Board { pieces, kings, stm: me ^ 1 }
    }
}

/// The empty squares a king on `k` reaches along `d` (up to the first piece).
#[inline(always)]
pub fn king_ray(d: usize, k: usize, occ: u64) -> u64 {
    let ray = RAY[d][k];
    let blockers = ray & occ;
    if blockers == 0 {
        ray
    } else {
        let t = nearest(d, blockers) as usize;
        ray & !(RAY[d][t] | 1u64 << t)
    }
}

/// One complete capture path: the squares the piece stands on (start, then every landing square) and the
/// captured squares in the order they are jumped, all as square numbers 1-50.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CapturePath {
    pub squares: Vec<u8>,
    pub captured: Vec<u8>,
}

/// Every path (every choice of landing squares) that plays the capture `m`, up to `limit` paths and a bounded
/// amount of work. Notation uses them; the move generator never does.
pub fn capture_paths(b: &Board, m: Move, limit: usize) -> Vec<CapturePath> {
    struct Walk {
        m: Move,
        king: bool,
        occ: u64,
        limit: usize,
        budget: u32,
        squares: Vec<u32>,
        captured: Vec<u32>,
        out: Vec<CapturePath>,
    }
    impl Walk {
        fn go(&mut self, at: u32, cap: u64) {
            if self.out.len() >= self.limit || self.budget == 0 {
                return;
            }
            self.budget -= 1;
            if cap == self.m.cap {
                if at == self.m.to as u32 {
                    self.out.push(CapturePath {
                        squares: self.squares.iter().map(|&s| square_of_bit(s)).collect(),
                        captured: self.captured.iter().map(|&s| square_of_bit(s)).collect(),
                    });
                }
                return;
            }
            let wanted = self.m.cap & !cap;
            for d in 0..4 {
                let (t, land) = if self.king {
                    let blockers = RAY[d][at as usize] & self.occ;
                    if blockers == 0 {
                        continue;
                    }
                    let t = nearest(d, blockers);
                    (t, king_ray(d, t as usize, self.occ))
                } else {
                    let t = NEXT[d][at as usize];
                    if t == 255 {
                        continue;
                    }
                    let l = NEXT[d][t as usize];
                    let land = if l == 255 { 0 } else { (1u64 << l) & !self.occ };
                    (t as u32, land)
                };
                if wanted & (1u64 << t) == 0 {
                    continue;
                }
                let mut l = land;
                while l != 0 {
                    let sq = l.trailing_zeros();
                    l &= l - 1;
                    self.squares.push(sq);
                    self.captured.push(t);
                    self.go(sq, cap | 1u64 << t);
                    self.squares.pop();
                    self.captured.pop();
                }
            }
        }
    }
    if m.cap == 0 {
        return Vec::new();
    }
    let fb = 1u64 << m.from;
    let mut w = Walk {
        m,
        king: b.kings & fb != 0,
        occ: b.occupied() & !fb,
        limit: limit.max(1),
        budget: 200_000,
        squares: vec![m.from as u32],
        captured: Vec::new(),
        out: Vec::new(),
    };
    w.go(m.from as u32, 0);
    w.out
}
