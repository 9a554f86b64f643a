//! The xiangqi board: a padded 11x14 mailbox with piece lists, legal move generation and attack tests.
//!
//! Squares are indices into a mailbox of 14 rows of 11 cells: the nine files sit in columns 1-9 and the ten
//! ranks in rows 2-11, so that every step and every horse jump from a board point lands either on the board
//! or on an off-board cell (a horse jump of two files from file I lands in the next row's column 0, a
//! padding column). Rank 0 is Red's back rank, file 0 is Red's left (ICCS `A`).
//!
//! A cell holds 0 (empty), [`OFF`] (off the board) or `16 + id`, where `id` (0-31) indexes the piece list:
//! ids 0-15 are Red's, 16-31 Black's, and within a side the slot fixes the piece type (see [`SLOT_TYPE`]).
//! So `cell & own_mask(side)` tests a piece of `side`, and the piece lists give each side's pieces without
//! scanning the board.
//!
//! Legal moves come from pseudo-legal generation filtered by a per-node analysis from the mover's general:
//! pieces whose departure could uncover an attack (pinned by a chariot or the other general, screens of a
//! cannon, horse legs) and empty points whose occupation would give a cannon its screen are marked; only
//! moves touching a marked point, general moves and every move while in check get the full attack test,
//! done on the board as it would be after the move without changing it.

/// Columns per mailbox row.
pub const W: usize = 11;
/// Mailbox cells: 154 are used (14 rows of 11); the arrays have 256 so that any `u8` index is in bounds and
/// the compiler drops the bounds checks.
pub const CELLS: usize = 256;
/// The content of an off-board cell.
pub const OFF: u8 = 64;

pub const KING: u8 = 0;
pub const ADVISOR: u8 = 1;
pub const ELEPHANT: u8 = 2;
pub const HORSE: u8 = 3;
pub const CHARIOT: u8 = 4;
pub const CANNON: u8 = 5;
pub const SOLDIER: u8 = 6;

pub const RED: usize = 0;
pub const BLACK: usize = 1;

/// The piece type of each slot of a side's piece list.
pub const SLOT_TYPE: [u8; 16] = [
    KING, ADVISOR, ADVISOR, ELEPHANT, ELEPHANT, HORSE, HORSE, CHARIOT, CHARIOT, CANNON, CANNON, SOLDIER, SOLDIER,
    SOLDIER, SOLDIER, SOLDIER,
];
/// The first slot of each piece type, and one past its last.
pub const SLOT_RANGE: [(usize, usize); 7] = [(0, 1), (1, 3), (3, 5), (5, 7), (7, 9), (9, 11), (11, 16)];

/// Piece code of a cell: 0 empty, `side * 8 + type + 1` for a piece, 0x80 off the board.
pub static CODE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut id = 0;
    while id < 32 {
        t[16 + id] = ((id / 16) * 8) as u8 + SLOT_TYPE[id % 16] + 1;
        id += 1;
    }
    t[OFF as usize] = 0x80;
    t
};

#[inline(always)]
pub const fn code(side: usize, kind: u8) -> u8 {
    (side * 8) as u8 + kind + 1
}

#[inline(always)]
pub const fn own_mask(side: usize) -> u8 {
    16 << side
}

#[inline(always)]
pub const fn square(file: usize, rank: usize) -> usize {
    (rank + 2) * W + file + 1
}

/// The file (0-8) of a board square.
#[inline(always)]
pub const fn file_of(sq: usize) -> usize {
    sq % W - 1
}

/// The rank (0-9, from Red's side) of a board square.
#[inline(always)]
pub const fn rank_of(sq: usize) -> usize {
    sq / W - 2
}

/// Bit flags per cell: 1 on the board, 2 in a palace, 4 on Red's half (ranks 0-4), 8 an elephant point,
/// 16 an advisor point.
pub static GEOMETRY: [u8; CELLS] = {
    let mut t = [0u8; CELLS];
    let mut rank = 0;
    while rank < 10 {
        let mut file = 0;
        while file < 9 {
            let mut g = 1u8;
            if file >= 3 && file <= 5 && (rank <= 2 || rank >= 7) {
                g |= 2;
            }
            if rank <= 4 {
                g |= 4;
            }
            let r = if rank <= 4 { rank } else { 9 - rank };
            if (r == 0 || r == 4) && (file == 2 || file == 6) || r == 2 && (file == 0 || file == 4 || file == 8) {
                g |= 8;
            }
            if (r == 0 || r == 2) && (file == 3 || file == 5) || r == 1 && file == 4 {
                g |= 16;
            }
            t[square(file, rank)] = g;
            file += 1;
        }
        rank += 1;
    }
    t
};
pub const ON_BOARD: u8 = 1;
pub const PALACE: u8 = 2;
pub const RED_HALF: u8 = 4;
pub const ELEPHANT_POINT: u8 = 8;
pub const ADVISOR_POINT: u8 = 16;

/// Whether `sq` is on `side`'s own half of the board.
#[inline(always)]
pub fn own_half(side: usize, sq: usize) -> bool {
    ((GEOMETRY[sq] & RED_HALF) != 0) == (side == RED)
}

const ORTH: [isize; 4] = [W as isize, -(W as isize), 1, -1];
const DIAG: [isize; 4] = [W as isize + 1, W as isize - 1, -(W as isize) + 1, -(W as isize) - 1];
/// Horse moves: the leg (an orthogonal step) and the two destinations beyond it.
const HORSE_MOVES: [(isize, [isize; 2]); 4] = [
    (W as isize, [2 * W as isize + 1, 2 * W as isize - 1]),
    (-(W as isize), [-2 * (W as isize) + 1, -2 * (W as isize) - 1]),
    (1, [W as isize + 2, -(W as isize) + 2]),
    (-1, [W as isize - 2, -(W as isize) - 2]),
];

/// One step from a square (a `u8` index, so always within the cell arrays).
#[inline(always)]
pub fn step(sq: usize, d: isize) -> usize {
    (sq as u8).wrapping_add(d as i8 as u8) as usize
}

/// A move: from and to as mailbox squares.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Move {
    pub(crate) from: u8,
    pub(crate) to: u8,
}

impl Move {
    #[inline(always)]
    pub(crate) fn new(from: usize, to: usize) -> Move {
        Move { from: from as u8, to: to as u8 }
    }

    /// The point the piece leaves, as (file 0-8 from Red's left, rank 0-9 from Red's side).
    pub fn from_point(self) -> (u8, u8) {
        (file_of(self.from as usize) as u8, rank_of(self.from as usize) as u8)
    }

    /// The point the piece lands on, as (file, rank).
    pub fn to_point(self) -> (u8, u8) {
        (file_of(self.to as usize) as u8, rank_of(self.to as usize) as u8)
    }
}

/// Cell flag: a piece whose departure needs the full test.
const FROM_FLAG: u8 = 1;
/// Cell flag: an empty point whose occupation needs the full test.
const TO_FLAG: u8 = 2;

/// The per-node legality analysis from the mover's general.
pub struct Legality {
    flags: [u8; CELLS],
    king: usize,
    pub in_check: bool,
}

/// Where generated moves go.
pub trait Sink {
    fn add(&mut self, b: &Board, l: &Legality, from: usize, to: usize);
}

/// Counts legal moves.
pub struct Counter(pub u64);

impl Sink for Counter {
    #[inline(always)]
    fn add(&mut self, b: &Board, l: &Legality, from: usize, to: usize) {
        self.0 += b.legal(l, from, to) as u64;
    }
}

impl Sink for Vec<Move> {
    #[inline(always)]
    fn add(&mut self, b: &Board, l: &Legality, from: usize, to: usize) {
        if b.legal(l, from, to) {
            self.push(Move::new(from, to));
        }
    }
}

/// A fixed-size move list (no allocation), for perft.
pub struct MoveList {
    pub moves: [Move; 160],
    pub len: usize,
}

impl MoveList {
    pub fn new() -> Self {
        MoveList { moves: [Move::default(); 160], len: 0 }
    }
}

impl Sink for MoveList {
    #[inline(always)]
    fn add(&mut self, b: &Board, l: &Legality, from: usize, to: usize) {
        if b.legal(l, from, to) && self.len < self.moves.len() {
            self.moves[self.len] = Move::new(from, to);
            self.len += 1;
        }
    }
}

/// The position without its history: cells, piece lists and the side to move.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Board {
    pub cells: [u8; CELLS],
    /// The square of each piece id, 0 when the piece is not on the board.
    pub pos: [u8; 32],
    pub stm: usize,
    /// Pieces on the board per side and type.
    pub counts: [[u8; 8]; 2],
}

impl Board {
    /// An empty board, Red to move.
    pub fn empty() -> Board {
        let mut cells = [OFF; CELLS];
        for (sq, c) in cells.iter_mut().enumerate() {
            if GEOMETRY[sq] & ON_BOARD != 0 {
                *c = 0;
            }
        }
        Board { cells, pos: [0; 32], stm: RED, counts: [[0; 8]; 2] }
    }

    /// Put a piece of `side` and `kind` on `sq` (empty); false when the side has no free slot of that kind.
    pub fn put(&mut self, side: usize, kind: u8, sq: usize) -> bool {
        let (lo, hi) = SLOT_RANGE[kind as usize];
        for slot in lo..hi {
            let id = side * 16 + slot;
            if self.pos[id] == 0 {
                self.pos[id] = sq as u8;
                self.cells[sq] = 16 + id as u8;
                self.counts[side][kind as usize] += 1;
                return true;
            }
        }
        false
    }

    /// The piece code (`side * 8 + type + 1`) on a square, 0 when empty.
    #[inline(always)]
    pub fn code_at(&self, sq: usize) -> u8 {
        CODE[self.cells[sq] as usize]
    }

    #[inline(always)]
    pub fn king(&self, side: usize) -> usize {
        self.pos[side * 16] as usize
    }

    /// Move a piece (no legality check); returns the captured cell (0 if none).
    #[inline(always)]
    pub fn apply(&mut self, m: Move) -> u8 {
        let (from, to) = (m.from as usize, m.to as usize);
        let moving = self.cells[from];
        let captured = self.cells[to];
        if captured != 0 {
            let id = captured as usize - 16;
            self.pos[id] = 0;
            self.counts[id >> 4][SLOT_TYPE[id & 15] as usize] -= 1;
        }
        self.cells[to] = moving;
        self.cells[from] = 0;
        self.pos[moving as usize - 16] = to as u8;
        self.stm ^= 1;
        captured
    }

    /// Take back [`Board::apply`].
    #[inline(always)]
    pub fn retract(&mut self, m: Move, captured: u8) {
        let (from, to) = (m.from as usize, m.to as usize);
        let moving = self.cells[to];
        self.cells[from] = moving;
        self.cells[to] = captured;
        self.pos[moving as usize - 16] = from as u8;
        if captured != 0 {
            let id = captured as usize - 16;
            self.pos[id] = to as u8;
            self.counts[id >> 4][SLOT_TYPE[id & 15] as usize] += 1;
        }
        self.stm ^= 1;
    }

    /// Whether `k` is attacked by `enemy`, reading cells through `cell` (the board as it is or as it would be).
    #[inline(always)]
    fn attacked_with(&self, k: usize, enemy: usize, cell: impl Fn(usize) -> u8) -> bool {
        let chariot = code(enemy, CHARIOT);
        let general = code(enemy, KING);
        let cannon = code(enemy, CANNON);
        for d in ORTH {
            let mut s = step(k, d);
            let mut c = cell(s);
            while c == 0 {
                s = step(s, d);
                c = cell(s);
            }
            if c == OFF {
                continue;
            }
            let p = CODE[c as usize];
            if p == chariot || p == general {
                return true;
            }
            s = step(s, d);
            c = cell(s);
            while c == 0 {
                s = step(s, d);
                c = cell(s);
            }
            if c != OFF && CODE[c as usize] == cannon {
                return true;
            }
        }
        let horse = code(enemy, HORSE);
        for (i, d) in DIAG.iter().enumerate() {
            let leg = step(k, *d);
            if cell(leg) == 0 {
                // The horse squares beyond this leg: one file or one rank further out.
                let (a, b) = horse_squares(leg, i);
                if CODE[cell(a) as usize] == horse || CODE[cell(b) as usize] == horse {
                    return true;
                }
            }
        }
        let soldier = code(enemy, SOLDIER);
        let ahead = if enemy == BLACK { step(k, W as isize) } else { step(k, -(W as isize)) };
        CODE[cell(ahead) as usize] == soldier
            || CODE[cell(step(k, 1)) as usize] == soldier
            || CODE[cell(step(k, -1)) as usize] == soldier
    }

    /// Whether `sq` is attacked by `enemy` on the board as it is.
    #[inline]
    pub fn attacked(&self, sq: usize, enemy: usize) -> bool {
        self.attacked_with(sq, enemy, |s| self.cells[s])
    }

    /// The side to move's general is attacked (or faces the other general).
    #[inline]
    pub fn in_check(&self) -> bool {
        let k = self.king(self.stm);
        k != 0 && self.attacked(k, self.stm ^ 1)
    }

    /// The full test: after moving `from`-`to`, is the mover's general safe?
    #[inline]
    fn safe_after(&self, l: &Legality, from: usize, to: usize) -> bool {
        let me = self.stm;
        let k = if from == l.king { to } else { l.king };
        let mover = self.cells[from];
        !self.attacked_with(k, me ^ 1, |s| {
            if s == to {
                mover
            } else if s == from {
                0
            } else {
                self.cells[s]
            }
        })
    }

    #[inline(always)]
    fn legal(&self, l: &Legality, from: usize, to: usize) -> bool {
        if l.in_check || (l.flags[from] & FROM_FLAG) | (l.flags[to] & TO_FLAG) != 0 {
            self.safe_after(l, from, to)
        } else {
            true
        }
    }

    /// The legality analysis for the side to move.
    pub fn legality(&self) -> Legality {
        let me = self.stm;
        let enemy = me ^ 1;
        let k = self.king(me);
        let mut l = Legality { flags: [0; CELLS], king: k, in_check: false };
        if k == 0 {
            return l;
        }
        l.flags[k] = FROM_FLAG;
        let chariot = code(enemy, CHARIOT);
        let general = code(enemy, KING);
        let cannon = code(enemy, CANNON);
        let cells = &self.cells;
        for d in ORTH {
            // The first three pieces along the ray.
            let mut s = step(k, d);
            while cells[s] == 0 {
                s = step(s, d);
            }
            if cells[s] == OFF {
                continue;
            }
            let p1 = s;
            let c1 = CODE[cells[p1] as usize];
            if c1 == chariot || c1 == general {
                l.in_check = true;
                continue;
            }
            if c1 == cannon {
                // Any piece landing between the general and the cannon gives it a screen.
                let mut e = step(k, d);
                while e != p1 {
                    l.flags[e] |= TO_FLAG;
                    e = step(e, d);
                }
            }
            s = step(p1, d);
            while cells[s] == 0 {
                s = step(s, d);
            }
            if cells[s] == OFF {
                continue;
            }
            let p2 = s;
            let c2 = CODE[cells[p2] as usize];
            if c2 == cannon {
                l.in_check = true;
                continue;
            }
            if c2 == chariot || c2 == general {
                l.flags[p1] |= FROM_FLAG;
                continue;
            }
            s = step(p2, d);
            while cells[s] == 0 {
                s = step(s, d);
            }
            if cells[s] != OFF && CODE[cells[s] as usize] == cannon {
                l.flags[p1] |= FROM_FLAG;
                l.flags[p2] |= FROM_FLAG;
            }
        }
        let horse = code(enemy, HORSE);
        for (i, d) in DIAG.iter().enumerate() {
            let leg = step(k, *d);
            let (a, b) = horse_squares(leg, i);
            if CODE[cells[a] as usize] == horse || CODE[cells[b] as usize] == horse {
                if cells[leg] == 0 {
                    l.in_check = true;
                } else {
                    l.flags[leg] |= FROM_FLAG;
                }
            }
        }
        let soldier = code(enemy, SOLDIER);
        let ahead = if enemy == BLACK { step(k, W as isize) } else { step(k, -(W as isize)) };
        if CODE[cells[ahead] as usize] == soldier
            || CODE[cells[step(k, 1)] as usize] == soldier
            || CODE[cells[step(k, -1)] as usize] == soldier
        {
            l.in_check = true;
        }
        l
    }

    /// Generate the legal moves (all, or captures only) of the side to move into `sink`.
    #[inline(always)]
    pub fn generate<S: Sink, const CAPTURES: bool>(&self, l: &Legality, sink: &mut S) {
        let me = self.stm;
        let base = me * 16;
        let enemy = own_mask(me ^ 1);
        let cells = &self.cells;
        // A destination that is empty (unless only captures are wanted) or holds an enemy piece.
        let target = |c: u8| if CAPTURES { c & enemy != 0 } else { c == 0 || c & enemy != 0 };

        // Chariots.
        for id in base + 7..base + 9 {
            let from = self.pos[id] as usize;
            if from == 0 {
                continue;
            }
            for d in ORTH {
                let mut s = step(from, d);
                while cells[s] == 0 {
                    if !CAPTURES {
                        sink.add(self, l, from, s);
                    }
                    s = step(s, d);
                }
                if cells[s] & enemy != 0 {
                    sink.add(self, l, from, s);
                }
            }
        }
        // Cannons.
        for id in base + 9..base + 11 {
            let from = self.pos[id] as usize;
            if from == 0 {
                continue;
            }
            for d in ORTH {
                let mut s = step(from, d);
                while cells[s] == 0 {
                    if !CAPTURES {
                        sink.add(self, l, from, s);
                    }
                    s = step(s, d);
                }
                if cells[s] == OFF {
                    continue;
                }
                s = step(s, d);
                while cells[s] == 0 {
                    s = step(s, d);
                }
                if cells[s] & enemy != 0 {
                    sink.add(self, l, from, s);
                }
            }
        }
        // Horses.
        for id in base + 5..base + 7 {
            let from = self.pos[id] as usize;
            if from == 0 {
                continue;
            }
            for (leg, dests) in HORSE_MOVES {
                if cells[step(from, leg)] != 0 {
                    continue;
                }
                for d in dests {
                    let to = step(from, d);
                    if target(cells[to]) {
                        sink.add(self, l, from, to);
                    }
                }
            }
        }
        // Soldiers.
        let forward = if me == RED { W as isize } else { -(W as isize) };
        for id in base + 11..base + 16 {
            let from = self.pos[id] as usize;
            if from == 0 {
                continue;
            }
            let to = step(from, forward);
            if target(cells[to]) {
                sink.add(self, l, from, to);
            }
            if !own_half(me, from) {
                for to in [step(from, 1), step(from, -1)] {
                    if target(cells[to]) {
                        sink.add(self, l, from, to);
                    }
                }
            }
        }
        // Elephants.
        for id in base + 3..base + 5 {
            let from = self.pos[id] as usize;
            if from == 0 {
                continue;
            }
            for d in DIAG {
                let eye = step(from, d);
                if cells[eye] != 0 {
                    continue;
                }
                let to = step(eye, d);
                if GEOMETRY[to] & ELEPHANT_POINT != 0 && own_half(me, to) && target(cells[to]) {
                    sink.add(self, l, from, to);
                }
            }
        }
        // Advisors.
        for id in base + 1..base + 3 {
            let from = self.pos[id] as usize;
            if from == 0 {
                continue;
            }
            for d in DIAG {
                let to = step(from, d);
                if GEOMETRY[to] & PALACE != 0 && target(cells[to]) {
                    sink.add(self, l, from, to);
                }
            }
        }
        // The general.
        let from = self.pos[base] as usize;
        if from != 0 {
            for d in ORTH {
                let to = step(from, d);
                if GEOMETRY[to] & PALACE != 0 && target(cells[to]) {
                    sink.add(self, l, from, to);
                }
            }
        }
    }

    /// The number of legal moves.
    #[inline]
    pub fn count_moves(&self) -> u64 {
        let l = self.legality();
        let mut c = Counter(0);
        self.generate::<Counter, false>(&l, &mut c);
        c.0
    }

    /// Leaf nodes at `depth` (make/unmake on the bare board, bulk counting at the last ply).
    pub fn perft(&mut self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        if depth == 1 {
            return self.count_moves();
        }
        let l = self.legality();
        let mut list = MoveList::new();
        self.generate::<MoveList, false>(&l, &mut list);
        let mut n = 0;
        for &m in &list.moves[..list.len] {
            let cap = self.apply(m);
            n += self.perft(depth - 1);
            self.retract(m, cap);
        }
        n
    }
}

/// The two horse squares that attack through the leg `leg`, the diagonal neighbour `i` (index into DIAG) of
/// the attacked point: one step further out along each of the diagonal's two components.
#[inline(always)]
fn horse_squares(leg: usize, i: usize) -> (usize, usize) {
    let d = DIAG[i];
    let vertical = if d > 0 { W as isize } else { -(W as isize) };
    let horizontal = d - vertical;
    (step(leg, vertical), step(leg, horizontal))
}
