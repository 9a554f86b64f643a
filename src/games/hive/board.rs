//! The Hive board and its move generator, following Mzinga's rules exactly.
//!
//! Cells live on a 32x32 grid in axial coordinates, indexed `r * 32 + q` and wrapping helically
//! (`(index + delta) & 1023`): two different cells that share an index are at least 32 steps apart, and a
//! connected hive of at most 28 pieces with its border spans no more than 29, so nothing ever aliases. Each
//! cell keeps its stack height, its top and bottom piece, and how many top pieces of each colour touch it
//! (for placements); each piece keeps its cell, its level in the stack and the piece below it.
//!
//! Directions are numbered as Mzinga numbers them, clockwise from north-west: NW, NE, E, SE, SW, W. The
//! two cells shared by a cell and its neighbour in direction `d` are its neighbours in `d - 1` and `d + 1`.

use std::sync::atomic::{AtomicU32, Ordering};

/// Cells on the wrapping grid.
pub const CELLS: usize = 1024;
const MASK: u16 = (CELLS - 1) as u16;
/// "Not on the board" (a piece in hand, or the pass move's destination).
pub const NO_CELL: u16 = u16::MAX;
/// "No piece" (an empty cell's top, the pass move's piece).
pub const NO_PIECE: u8 = u8::MAX;
/// Where the first piece is placed.
pub const ORIGIN: u16 = 16 * 32 + 16;
/// Pieces of both sides (14 each with every expansion).
pub const PIECES: usize = 28;
/// Pieces of one side.
pub const PER_SIDE: u8 = 14;

/// Index deltas of the six directions (NW, NE, E, SE, SW, W), as wrapping u16.
const DELTA: [u16; 6] = [(-32i16) as u16, (-31i16) as u16, 1, 32, 31, (-1i16) as u16];

/// The neighbour of `c` in direction `d` (0..6).
#[inline(always)]
pub fn nb(c: u16, d: usize) -> u16 {
    c.wrapping_add(DELTA[d]) & MASK
}

/// For each 6-bit mask of occupied neighbours: true when they form two or more separate arcs (only then can
/// lifting the piece split the hive).
const SPLITS: [bool; 64] = {
    let mut t = [false; 64];
    let mut m = 0;
    while m < 64 {
        let mut edges = 0;
        let mut d = 0;
        while d < 6 {
            let a = (m >> d) & 1;
            let b = (m >> ((d + 1) % 6)) & 1;
            if a == 1 && b == 0 {
                edges += 1;
            }
            d += 1;
        }
        t[m] = edges >= 2;
        m += 1;
    }
    t
};

/// The bug types, in the order their pieces are numbered.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum Bug {
    Queen = 0,
    Spider = 1,
    Beetle = 2,
    Grasshopper = 3,
    Ant = 4,
    Mosquito = 5,
    Ladybug = 6,
    Pillbug = 7,
}

impl Bug {
    pub const ALL: [Bug; 8] =
        [Bug::Queen, Bug::Spider, Bug::Beetle, Bug::Grasshopper, Bug::Ant, Bug::Mosquito, Bug::Ladybug, Bug::Pillbug];

    /// The letter of the bug in piece names.
    pub fn letter(self) -> char {
        ['Q', 'S', 'B', 'G', 'A', 'M', 'L', 'P'][self as usize]
    }

    pub fn from_letter(c: char) -> Option<Bug> {
        Bug::ALL.iter().copied().find(|b| b.letter() == c.to_ascii_uppercase())
    }

    /// The range of kind indices (0..14) of this bug's pieces.
    pub fn kinds(self) -> (u8, u8) {
        KIND_RANGE[self as usize]
    }
}

/// The bug of each kind index (a side's pieces, in Mzinga's order: Q, S1, S2, B1, B2, G1-3, A1-3, M, L, P).
pub const KIND_BUG: [Bug; 14] = [
    Bug::Queen,
    Bug::Spider,
    Bug::Spider,
    Bug::Beetle,
    Bug::Beetle,
    Bug::Grasshopper,
    Bug::Grasshopper,
    Bug::Grasshopper,
    Bug::Ant,
    Bug::Ant,
    Bug::Ant,
    Bug::Mosquito,
    Bug::Ladybug,
    Bug::Pillbug,
];
/// The number written after the bug letter (0: none, the bug is unique).
pub const KIND_NUMBER: [u8; 14] = [0, 1, 2, 1, 2, 1, 2, 3, 1, 2, 3, 0, 0, 0];
const KIND_RANGE: [(u8, u8); 8] = [(0, 1), (1, 3), (3, 5), (5, 8), (8, 11), (11, 12), (12, 13), (13, 14)];

#[inline(always)]
pub fn bug_of(p: u8) -> Bug {
    KIND_BUG[(p % PER_SIDE) as usize]
}

/// 0 for White, 1 for Black.
#[inline(always)]
pub fn color_of(p: u8) -> usize {
    (p >= PER_SIDE) as usize
}

/// The queen of a colour.
#[inline(always)]
pub fn queen_of(color: usize) -> u8 {
    color as u8 * PER_SIDE
}

/// The piece's name as UHP writes it (`wQ`, `bA2`, `wM`).
pub fn piece_name(p: u8) -> String {
    let mut s = String::with_capacity(3);
    s.push(if color_of(p) == 0 { 'w' } else { 'b' });
    s.push(bug_of(p).letter());
    let n = KIND_NUMBER[(p % PER_SIDE) as usize];
    if n > 0 {
        s.push((b'0' + n) as char);
    }
    s
}

/// Which expansion pieces a game has.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct GameType {
    pub mosquito: bool,
    pub ladybug: bool,
    pub pillbug: bool,
}

impl GameType {
    pub const BASE: GameType = GameType { mosquito: false, ladybug: false, pillbug: false };
    pub const MLP: GameType = GameType { mosquito: true, ladybug: true, pillbug: true };

    /// Every game type, in canonical order.
    pub fn all() -> [GameType; 8] {
        let mut out = [GameType::BASE; 8];
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = GameType { mosquito: i & 1 != 0, ladybug: i & 2 != 0, pillbug: i & 4 != 0 };
        }
        out.sort_by_key(|t| (t.mosquito as u8 + t.ladybug as u8 + t.pillbug as u8, !t.mosquito, !t.ladybug));
        out
    }

    /// Bitmask of the enabled kind indices of one side.
    pub fn kinds_mask(self) -> u32 {
        ((1 << 11) - 1) | ((self.mosquito as u32) << 11) | ((self.ladybug as u32) << 12) | ((self.pillbug as u32) << 13)
    }

    /// The canonical GameTypeString (`Base`, `Base+M`, ..., `Base+MLP`).
    pub fn name(self) -> String {
        let mut s = String::from("Base");
        if self.mosquito || self.ladybug || self.pillbug {
            s.push('+');
            if self.mosquito {
                s.push('M');
            }
            if self.ladybug {
                s.push('L');
            }
            if self.pillbug {
                s.push('P');
            }
        }
        s
    }

    /// Read a GameTypeString (case-insensitive; the expansion letters in any order, each at most once, as
    /// the spec's "any combination of M, L, P" allows: `Base+PM` is `Base+MP`).
    pub fn parse(text: &str) -> Option<GameType> {
        let t = text.trim();
        let (base, letters) = t.split_once('+').unwrap_or((t, ""));
        if !base.eq_ignore_ascii_case("Base") || (t.contains('+') && letters.is_empty()) {
            return None;
        }
        let mut g = GameType::BASE;
        for c in letters.chars() {
            let slot = match c.to_ascii_uppercase() {
                'M' => &mut g.mosquito,
                'L' => &mut g.ladybug,
                'P' => &mut g.pillbug,
                _ => return None,
            };
            if std::mem::replace(slot, true) {
                return None;
            }
        }
        Some(g)
    }

}

/// A move: a piece and the cell it goes to (on top of whatever is there). Placements and movements look
/// alike: the board knows whether the piece is in hand. The pass is [`Move::PASS`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Move {
    pub piece: u8,
    pub to: u16,
}

impl Move {
    pub const PASS: Move = Move { piece: NO_PIECE, to: NO_CELL };

    #[inline]
    pub fn is_pass(self) -> bool {
        self.piece == NO_PIECE
    }
}

/// A set of cells.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Cells(pub [u64; CELLS / 64]);

impl Cells {
    pub const EMPTY: Cells = Cells([0; CELLS / 64]);

    #[inline(always)]
    pub fn set(&mut self, c: u16) {
        self.0[(c >> 6) as usize] |= 1 << (c & 63);
    }

    #[inline(always)]
    pub fn has(&self, c: u16) -> bool {
        self.0[(c >> 6) as usize] >> (c & 63) & 1 != 0
    }

    #[inline(always)]
    pub fn clear(&mut self, c: u16) {
        self.0[(c >> 6) as usize] &= !(1 << (c & 63));
    }

    #[inline]
    pub fn count(&self) -> u32 {
        let mut n = 0;
        for &w in &self.0 {
            if w != 0 {
                n += w.count_ones();
            }
        }
        n
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// Call `f` with every cell of the set, ascending.
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(u16)) {
        for (i, &w) in self.0.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                let b = w.trailing_zeros() as u16;
                w &= w - 1;
                f((i as u16) << 6 | b);
            }
        }
    }
}

/// The Zobrist key of a piece at a cell and level (a hash of the three, no table).
#[inline(always)]
fn zkey(p: u8, c: u16, level: u8) -> u64 {
    let mut z = ((p as u64) << 20 | (level as u64) << 12 | c as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What `make` needs to take a move back.
#[derive(Clone, Copy, Debug)]
pub struct Undo {
    pub mv: Move,
    pub from: u16,
    pub last: u8,
    pub reversible: u32,
}

/// Receives the legal moves of a position grouped by piece: `piece` goes to each cell of `dests`.
pub trait Sink {
    fn add(&mut self, piece: u8, dests: &Cells);
    fn add_one(&mut self, piece: u8, to: u16);
}

/// Counts moves.
pub struct Counter(pub u64);

impl Sink for Counter {
    #[inline(always)]
    fn add(&mut self, _piece: u8, dests: &Cells) {
        self.0 += dests.count() as u64;
    }
    #[inline(always)]
    fn add_one(&mut self, _piece: u8, _to: u16) {
        self.0 += 1;
    }
}

impl Sink for Vec<Move> {
    #[inline]
    fn add(&mut self, piece: u8, dests: &Cells) {
        dests.for_each(|to| self.push(Move { piece, to }));
    }
    #[inline]
    fn add_one(&mut self, piece: u8, to: u16) {
        self.push(Move { piece, to });
    }
}

/// The position.
#[derive(Clone)]
pub struct Board {
    height: [u8; CELLS],
    top: [u8; CELLS],
    bottom: [u8; CELLS],
    /// Top pieces of each colour adjacent to each cell.
    adj: [[u8; CELLS]; 2],
    pos: [u16; PIECES],
    level: [u8; PIECES],
    below: [u8; PIECES],
    /// Pieces in hand (enabled ones only), bit = piece index.
    hand: u32,
    /// Plies played (Mzinga's CurrentTurn).
    turn: u32,
    /// The piece moved by the last move (placements included); none after a pass.
    last: u8,
    /// Plies since the last placement.
    reversible: u32,
    game_type: GameType,
    zhash: u64,
    /// [`Board::pinned`]'s answer for the pieces as they stand, once asked: the evaluation and the move
    /// generator of one node both need it.
    pinned: PinnedCache,
}

/// The cut-vertex mask of the current placement of the pieces, or [`PinnedCache::UNKNOWN`]. Every change of a
/// piece's cell ([`Board::remove`], [`Board::put`]) forgets it. An atomic only so that a board stays `Sync`:
/// each search thread has its own board, and relaxed loads and stores are plain moves.
#[derive(Debug)]
struct PinnedCache(AtomicU32);

impl PinnedCache {
    /// No answer kept (a mask has at most 28 bits).
    const UNKNOWN: u32 = u32::MAX;

    #[inline(always)]
    fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn set(&self, mask: u32) {
        self.0.store(mask, Ordering::Relaxed);
    }
}

impl Clone for PinnedCache {
    fn clone(&self) -> Self {
        PinnedCache(AtomicU32::new(self.get()))
    }
}

const SIDE_KEY: u64 = 0x5D2B_0C3E_71A9_F48B;

impl Board {
    pub fn new(game_type: GameType) -> Board {
        let mask = game_type.kinds_mask();
        Board {
            height: [0; CELLS],
            top: [NO_PIECE; CELLS],
            bottom: [NO_PIECE; CELLS],
            adj: [[0; CELLS]; 2],
            pos: [NO_CELL; PIECES],
            level: [0; PIECES],
            below: [NO_PIECE; PIECES],
            hand: mask | mask << PER_SIDE,
            turn: 0,
            last: NO_PIECE,
            reversible: 0,
            game_type,
            zhash: 0,
            pinned: PinnedCache(AtomicU32::new(PinnedCache::UNKNOWN)),
        }
    }

    // ---- accessors ----

    #[inline(always)]
    pub fn game_type(&self) -> GameType {
        self.game_type
    }
    #[inline(always)]
    pub fn turn(&self) -> u32 {
        self.turn
    }
    /// 0 for White, 1 for Black.
    #[inline(always)]
    pub fn to_move(&self) -> usize {
        (self.turn & 1) as usize
    }
    #[inline(always)]
    pub fn last_moved(&self) -> u8 {
        self.last
    }
    #[inline(always)]
    pub fn reversible(&self) -> u32 {
        self.reversible
    }
    #[inline(always)]
    pub fn height(&self, c: u16) -> u8 {
        self.height[c as usize]
    }
    #[inline(always)]
    pub fn top(&self, c: u16) -> u8 {
        self.top[c as usize]
    }
    #[inline(always)]
    pub fn pos(&self, p: u8) -> u16 {
        self.pos[p as usize]
    }
    #[inline(always)]
    pub fn level(&self, p: u8) -> u8 {
        self.level[p as usize]
    }
    #[inline(always)]
    pub fn below(&self, p: u8) -> u8 {
        self.below[p as usize]
    }
    #[inline(always)]
    pub fn in_hand(&self, p: u8) -> bool {
        self.hand >> p & 1 != 0
    }
    #[inline(always)]
    pub fn in_play(&self, p: u8) -> bool {
        self.pos[p as usize] != NO_CELL
    }
    /// The piece is enabled in this game type.
    #[inline(always)]
    pub fn enabled(&self, p: u8) -> bool {
        (p as usize) < PIECES && self.game_type.kinds_mask() >> (p % PER_SIDE) & 1 != 0
    }
    #[inline(always)]
    pub fn on_top(&self, p: u8) -> bool {
        let c = self.pos[p as usize];
        c != NO_CELL && self.top[c as usize] == p
    }
    /// Top pieces of `color` adjacent to cell `c`.
    #[inline(always)]
    pub fn adjacent_of(&self, color: usize, c: u16) -> u8 {
        self.adj[color][c as usize]
    }

    /// Occupied neighbours of a cell.
    #[inline]
    pub fn occupied_neighbours(&self, c: u16) -> u32 {
        (0..6).filter(|&d| self.height[nb(c, d) as usize] > 0).count() as u32
    }

    /// The queen of `color` is surrounded.
    #[inline]
    pub fn queen_surrounded(&self, color: usize) -> bool {
        let c = self.pos[queen_of(color) as usize];
        c != NO_CELL && (0..6).all(|d| self.height[nb(c, d) as usize] > 0)
    }

    /// 0: in progress, else the end: Some(Some(color)) a win, Some(None) a draw.
    #[inline]
    pub fn result(&self) -> Option<Option<usize>> {
        match (self.queen_surrounded(0), self.queen_surrounded(1)) {
            (true, true) => Some(None),
            (true, false) => Some(Some(1)),
            (false, true) => Some(Some(0)),
            (false, false) => None,
        }
    }

    /// The hash of everything that decides the legal moves from here on. The ply count matters only while a
    /// Queen is in hand before ply 8 (she must be placed by her side's fourth turn); after that, or once both
    /// are placed, only the side to move does (an audit found a position repeated from ply 4 counted as new
    /// at ply 8, so a threefold repetition came a cycle late).
    #[inline]
    pub fn hash(&self) -> u64 {
        let early = self.turn < 8 && !(self.in_play(queen_of(0)) && self.in_play(queen_of(1)));
        let t = if early { self.turn as u64 } else { 8 + (self.turn & 1) as u64 };
        let mut h = self.zhash ^ t.wrapping_mul(SIDE_KEY);
        if self.game_type.pillbug && self.last != NO_PIECE {
            h ^= zkey(self.last, 0x3FF, 0xFF);
        }
        h
    }

    /// The incremental piece hash equals the one recomputed from scratch (tests).
    pub fn hash_consistent(&self) -> bool {
        let scratch =
            (0..PIECES as u8).filter(|&p| self.in_play(p)).fold(0, |h, p| h ^ zkey(p, self.pos(p), self.level(p)));
        scratch == self.zhash
    }

    // ---- make / unmake ----

    #[inline(always)]
    fn set_top(&mut self, c: u16, old: u8, new: u8) {
        self.top[c as usize] = new;
        if old != NO_PIECE {
            let a = &mut self.adj[color_of(old)];
            for d in 0..6 {
                a[nb(c, d) as usize] -= 1;
            }
        }
        if new != NO_PIECE {
            let a = &mut self.adj[color_of(new)];
            for d in 0..6 {
                a[nb(c, d) as usize] += 1;
            }
        }
    }

    #[inline(always)]
    fn remove(&mut self, p: u8) -> u16 {
        self.pinned.set(PinnedCache::UNKNOWN);
        let c = self.pos[p as usize];
        let pi = p as usize;
        self.height[c as usize] -= 1;
        let under = self.below[pi];
        self.set_top(c, p, under);
        if self.height[c as usize] == 0 {
            self.bottom[c as usize] = NO_PIECE;
        }
        self.zhash ^= zkey(p, c, self.level[pi]);
        self.pos[pi] = NO_CELL;
        c
    }

    #[inline(always)]
    fn put(&mut self, p: u8, c: u16) {
        self.pinned.set(PinnedCache::UNKNOWN);
        let pi = p as usize;
        let old = self.top[c as usize];
        self.below[pi] = old;
        let lv = self.height[c as usize];
        self.level[pi] = lv;
        self.height[c as usize] = lv + 1;
        self.set_top(c, old, p);
        if lv == 0 {
            self.bottom[c as usize] = p;
        }
        self.pos[pi] = c;
        self.zhash ^= zkey(p, c, lv);
    }

    /// Play a move (which must be legal) and return what takes it back.
    #[inline]
    pub fn make(&mut self, m: Move) -> Undo {
        let undo = Undo { mv: m, from: NO_CELL, last: self.last, reversible: self.reversible };
        self.turn += 1;
        if m.is_pass() {
            self.last = NO_PIECE;
            self.reversible += 1;
            return undo;
        }
        let p = m.piece;
        let from = if self.in_hand(p) {
            self.hand &= !(1 << p);
            self.reversible = 0;
            NO_CELL
        } else {
            self.reversible += 1;
            self.remove(p)
        };
        self.put(p, m.to);
        self.last = p;
        Undo { from, ..undo }
    }

    #[inline]
    pub fn unmake(&mut self, u: &Undo) {
        self.turn -= 1;
        self.last = u.last;
        self.reversible = u.reversible;
        if u.mv.is_pass() {
            return;
        }
        let p = u.mv.piece;
        self.remove(p);
        if u.from == NO_CELL {
            self.hand |= 1 << p;
        } else {
            self.put(p, u.from);
        }
    }

    // ---- rules ----

    /// The piece of kind range `(lo, hi)` of `color` that would be placed next, if any.
    #[inline(always)]
    fn next_in_hand(&self, color: usize, bug: Bug) -> Option<u8> {
        let (lo, hi) = bug.kinds();
        let base = color as u32 * PER_SIDE as u32;
        let bits = (self.hand >> (base + lo as u32)) & ((1 << (hi - lo)) - 1);
        if bits == 0 { None } else { Some((base + lo as u32 + bits.trailing_zeros()) as u8) }
    }

    /// The piece may be placed now as far as the order of same-bug pieces goes (A1 before A2).
    pub fn placing_in_order(&self, p: u8) -> bool {
        !self.in_hand(p) || self.next_in_hand(color_of(p), bug_of(p)) == Some(p)
    }

    /// Height of `c` with one piece lifted off cell `lifted` (a ground piece that is moving).
    #[inline(always)]
    fn hl(&self, c: u16, lifted: u16) -> u8 {
        self.height[c as usize] - (c == lifted) as u8
    }

    /// A ground slide from `c` in direction `d` with the piece lifted from `lifted`: the target is empty
    /// and exactly one of the two shared neighbours is occupied.
    #[inline(always)]
    fn can_slide(&self, c: u16, d: usize, lifted: u16) -> bool {
        self.hl(nb(c, d), lifted) == 0
            && (self.hl(nb(c, (d + 5) % 6), lifted) == 0) != (self.hl(nb(c, (d + 1) % 6), lifted) == 0)
    }

    /// The cut vertices of the hive (cells whose removal splits it), as a mask of their bottom pieces.
    #[inline]
    pub fn pinned(&self) -> u32 {
        let known = self.pinned.get();
        if known != PinnedCache::UNKNOWN {
            return known;
        }
        let mask = self.cut_vertices();
        self.pinned.set(mask);
        mask
    }

    /// [`Board::pinned`] computed: Tarjan's articulation points by an iterative depth-first search.
    fn cut_vertices(&self) -> u32 {
        let mut disc = [0u8; PIECES];
        let mut low = [0u8; PIECES];
        // (node, next direction, parent)
        let mut stack = [(0u8, 0u8, 0u8); PIECES + 1];
        let Some(root) = (0..PIECES as u8).find(|&p| self.in_play(p) && self.level[p as usize] == 0) else {
            return 0;
        };
        let mut cut = 0u32;
        let mut time = 1u8;
        disc[root as usize] = 1;
        low[root as usize] = 1;
        let mut sp = 1;
        stack[0] = (root, 0, NO_PIECE);
        let mut root_children = 0;
        while sp > 0 {
            let (v, d, parent) = stack[sp - 1];
            if d < 6 {
                stack[sp - 1].1 = d + 1;
                let n = nb(self.pos[v as usize], d as usize);
                if self.height[n as usize] == 0 {
                    continue;
                }
                let w = self.bottom[n as usize];
                if disc[w as usize] == 0 {
                    time += 1;
                    disc[w as usize] = time;
                    low[w as usize] = time;
                    stack[sp] = (w, 0, v);
                    sp += 1;
                    if v == root {
                        root_children += 1;
                    }
                } else if w != parent {
                    low[v as usize] = low[v as usize].min(disc[w as usize]);
                }
            } else {
                sp -= 1;
                if parent != NO_PIECE {
                    let lv = low[v as usize];
                    let lp = &mut low[parent as usize];
                    *lp = (*lp).min(lv);
                    if parent != root && lv >= disc[parent as usize] {
                        cut |= 1 << parent;
                    }
                }
            }
        }
        if root_children > 1 {
            cut |= 1 << root;
        }
        cut
    }

    /// Occupied neighbours of `c` as a 6-bit mask (bit d: direction d).
    #[inline(always)]
    fn neighbour_mask(&self, c: u16) -> usize {
        let mut m = 0;
        for d in 0..6 {
            m |= ((self.height[nb(c, d) as usize] != 0) as usize) << d;
        }
        m
    }

    /// [`Board::pinned`], skipped when no ground piece of `pieces` (a mask) could be a cut vertex.
    #[inline]
    fn pinned_among(&self, pieces: u32) -> u32 {
        let known = self.pinned.get();
        if known != PinnedCache::UNKNOWN {
            return known;
        }
        let mut rest = pieces;
        while rest != 0 {
            let p = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let c = self.pos[p];
            if c != NO_CELL && self.level[p] == 0 && self.height[c as usize] == 1 && SPLITS[self.neighbour_mask(c)] {
                return self.pinned();
            }
        }
        0
    }

    fn queen_moves(&self, c: u16, out: &mut Cells) {
        for d in 0..6 {
            if self.can_slide(c, d, c) {
                out.set(nb(c, d));
            }
        }
    }

    fn ant_moves(&self, c: u16, out: &mut Cells) {
        let mut seen = Cells::EMPTY;
        seen.set(c);
        let mut stack = [0u16; 192];
        let mut sp = 1;
        stack[0] = c;
        while sp > 0 {
            sp -= 1;
            let cur = stack[sp];
            for d in 0..6 {
                let n = nb(cur, d);
                if !seen.has(n) && self.can_slide(cur, d, c) {
                    seen.set(n);
                    out.set(n);
                    if sp < stack.len() {
                        stack[sp] = n;
                        sp += 1;
                    }
                }
            }
        }
    }

    /// The spider: every cell at the end of a walk of exactly three slides that never revisits a cell of the
    /// same walk (its start included). Different walks may cross the same cell at different steps, so no cell
    /// is ever claimed by the first walk that reaches it.
    fn spider_moves(&self, c: u16, out: &mut Cells) {
        for d1 in 0..6 {
            if !self.can_slide(c, d1, c) {
                continue;
            }
            let a = nb(c, d1);
            for d2 in 0..6 {
                let b = nb(a, d2);
                if b == c || !self.can_slide(a, d2, c) {
                    continue;
                }
                for d3 in 0..6 {
                    let e = nb(b, d3);
                    if e != a && e != c && self.can_slide(b, d3, c) {
                        out.set(e);
                    }
                }
            }
        }
    }

    /// One beetle step from `c`, where the moving piece's take-off height is `cur` (the stack below it),
    /// with the piece lifted from `lifted`: Mzinga's height gate. Returns the destination height or None.
    #[inline(always)]
    fn beetle_step(&self, c: u16, d: usize, cur: u8, lifted: u16) -> Option<u8> {
        let n = nb(c, d);
        let dest = self.hl(n, lifted);
        let l = self.hl(nb(c, (d + 5) % 6), lifted);
        let r = self.hl(nb(c, (d + 1) % 6), lifted);
        if cur == 0 && dest == 0 && l == 0 && r == 0 {
            return None;
        }
        if cur.max(dest) < l.min(r) {
            return None;
        }
        Some(dest)
    }

    fn beetle_moves(&self, c: u16, level: u8, out: &mut Cells) {
        for d in 0..6 {
            if self.beetle_step(c, d, level, NO_CELL).is_some() {
                out.set(nb(c, d));
            }
        }
    }

    fn grasshopper_moves(&self, c: u16, out: &mut Cells) {
        for d in 0..6 {
            let mut n = nb(c, d);
            if self.height[n as usize] == 0 {
                continue;
            }
            let mut guard = 0;
            while self.height[n as usize] > 0 && guard < PIECES {
                n = nb(n, d);
                guard += 1;
            }
            out.set(n);
        }
    }

    fn ladybug_moves(&self, c: u16, out: &mut Cells) {
        for d1 in 0..6 {
            let Some(h1) = self.beetle_step(c, d1, 0, c) else { continue };
            if h1 == 0 {
                continue;
            }
            let n1 = nb(c, d1);
            for d2 in 0..6 {
                let Some(h2) = self.beetle_step(n1, d2, h1, c) else { continue };
                if h2 == 0 {
                    continue;
                }
                let n2 = nb(n1, d2);
                for d3 in 0..6 {
                    let n3 = nb(n2, d3);
                    if n3 != c && self.beetle_step(n2, d3, h2, c) == Some(0) {
                        out.set(n3);
                    }
                }
            }
        }
    }

    /// The bug types of the top pieces touching `c`, as a bit mask.
    #[inline]
    fn touching_bugs(&self, c: u16) -> u32 {
        let mut m = 0;
        for d in 0..6 {
            let t = self.top[nb(c, d) as usize];
            if t != NO_PIECE {
                m |= 1 << bug_of(t) as u32;
            }
        }
        m
    }

    /// A mosquito's own moves (its pillbug throws are generated with the other throws).
    fn mosquito_moves(&self, c: u16, level: u8, out: &mut Cells) {
        if level > 0 {
            self.beetle_moves(c, level, out);
            return;
        }
        let bugs = self.touching_bugs(c);
        let has = |b: Bug| bugs >> b as u32 & 1 != 0;
        if has(Bug::Ant) {
            self.ant_moves(c, out);
        } else {
            if has(Bug::Queen) || has(Bug::Pillbug) {
                self.queen_moves(c, out);
            }
            if has(Bug::Spider) {
                self.spider_moves(c, out);
            }
        }
        if has(Bug::Beetle) {
            self.beetle_moves(c, 0, out);
        }
        if has(Bug::Grasshopper) {
            self.grasshopper_moves(c, out);
        }
        if has(Bug::Ladybug) {
            self.ladybug_moves(c, out);
        }
    }

    /// The cells a thrower on `t` can put the piece on its neighbour `x` (direction `d` from `t`) down on.
    #[inline]
    fn throws(&self, t: u16, d: usize, out: &mut Cells) {
        let x = nb(t, d);
        // Up from x onto the thrower (height 1): blocked when both shared neighbours are at least 2 high.
        let l = self.height[nb(t, (d + 5) % 6) as usize];
        let r = self.height[nb(t, (d + 1) % 6) as usize];
        if l >= 2 && r >= 2 {
            return;
        }
        for d2 in 0..6 {
            let n = nb(t, d2);
            if n == x || self.height[n as usize] != 0 {
                continue;
            }
            let l = self.hl(nb(t, (d2 + 5) % 6), x);
            let r = self.hl(nb(t, (d2 + 1) % 6), x);
            if l >= 2 && r >= 2 {
                continue;
            }
            out.set(n);
        }
    }

    /// The piece `p`'s own moves (no throws), if it may move at all; `pinned` from [`Board::pinned`].
    fn piece_moves(&self, p: u8, pinned: u32, out: &mut Cells) {
        let c = self.pos[p as usize];
        let level = self.level[p as usize];
        if level == 0 && pinned >> p & 1 != 0 {
            return;
        }
        match bug_of(p) {
            Bug::Queen | Bug::Pillbug => self.queen_moves(c, out),
            Bug::Spider => self.spider_moves(c, out),
            Bug::Beetle => self.beetle_moves(c, level, out),
            Bug::Grasshopper => self.grasshopper_moves(c, out),
            Bug::Ant => self.ant_moves(c, out),
            Bug::Mosquito => self.mosquito_moves(c, level, out),
            Bug::Ladybug => self.ladybug_moves(c, out),
        }
    }

    /// Every legal move into `sink`: nothing when the game is over, a pass when nothing else is legal.
    /// Returns whether anything (a pass included) was produced.
    pub fn generate<S: Sink>(&self, sink: &mut S) -> bool {
        if self.result().is_some() {
            return false;
        }
        if !self.generate_no_pass(sink) {
            sink.add_one(NO_PIECE, NO_CELL);
        }
        true
    }

    /// Every legal move except the pass; returns whether there was any.
    pub fn generate_no_pass<S: Sink>(&self, sink: &mut S) -> bool {
        let me = self.to_move();
        let mut any = false;
        // Placements.
        if self.turn <= 1 {
            let mut cells = Cells::EMPTY;
            if self.turn == 0 {
                cells.set(ORIGIN);
            } else {
                for d in 0..6 {
                    cells.set(nb(ORIGIN, d));
                }
            }
            for bug in Bug::ALL {
                if bug == Bug::Queen {
                    continue;
                }
                if let Some(p) = self.next_in_hand(me, bug) {
                    sink.add(p, &cells);
                    any = true;
                }
            }
            return any;
        }
        let queen = queen_of(me);
        let queen_in = self.in_play(queen);
        let player_turn = 1 + self.turn / 2;
        let side_hand = self.hand >> (me as u32 * PER_SIDE as u32) & ((1 << PER_SIDE) - 1);
        if side_hand != 0 {
            let cells = self.placements(me);
            if !cells.is_empty() {
                if player_turn == 4 && !queen_in {
                    sink.add(queen, &cells);
                    return true;
                }
                for bug in Bug::ALL {
                    if let Some(p) = self.next_in_hand(me, bug) {
                        sink.add(p, &cells);
                        any = true;
                    }
                }
            } else if player_turn == 4 && !queen_in {
                return false;
            }
        }
        if !queen_in {
            return any;
        }
        any |= self.movements(me, sink);
        any
    }

    /// The cells where `me` may place a piece (after the first two placements).
    pub fn placements(&self, me: usize) -> Cells {
        let mut cells = Cells::EMPTY;
        let enemy = &self.adj[me ^ 1];
        let lo = me as u8 * PER_SIDE;
        for p in lo..lo + PER_SIDE {
            let c = self.pos[p as usize];
            if c == NO_CELL || self.top[c as usize] != p {
                continue;
            }
            for d in 0..6 {
                let n = nb(c, d);
                if self.height[n as usize] == 0 && enemy[n as usize] == 0 {
                    cells.set(n);
                }
            }
        }
        cells
    }

    /// The movements and throws of side `me` (whose queen is in play).
    fn movements<S: Sink>(&self, me: usize, sink: &mut S) -> bool {
        let own = ((1u32 << PER_SIDE) - 1) << (me as u32 * PER_SIDE as u32);
        let pinned = self.pinned_among(if self.game_type.pillbug { (1 << PIECES) - 1 } else { own });
        let lo = me as u8 * PER_SIDE;
        let mut any = false;
        // Throwers: the pillbug, and a mosquito on the ground touching a pillbug, on top and not stunned.
        let mut throwers = [NO_CELL; 2];
        let mut nthrowers = 0;
        if self.game_type.pillbug {
            let pb = lo + 13;
            if self.on_top(pb) && pb != self.last {
                throwers[nthrowers] = self.pos[pb as usize];
                nthrowers += 1;
            }
            let mq = lo + 11;
            if self.game_type.mosquito
                && self.on_top(mq)
                && mq != self.last
                && self.level[mq as usize] == 0
                && self.touching_bugs(self.pos[mq as usize]) >> Bug::Pillbug as u32 & 1 != 0
            {
                throwers[nthrowers] = self.pos[mq as usize];
                nthrowers += 1;
            }
        }
        let throwers = &throwers[..nthrowers];
        // A piece that can be thrown: alone on its cell, not just moved, not holding the hive together.
        let throwable = |p: u8| {
            let c = self.pos[p as usize];
            self.height[c as usize] == 1 && p != self.last && pinned >> p & 1 == 0
        };
        let add_throws = |p: u8, out: &mut Cells| {
            let c = self.pos[p as usize];
            for &t in throwers {
                for d in 0..6 {
                    if nb(t, d) == c {
                        self.throws(t, d, out);
                    }
                }
            }
        };
        for p in lo..lo + PER_SIDE {
            if !self.on_top(p) || p == self.last {
                // Covered or stunned (it may still be thrown if stunned? no: the last piece moved may not be).
                continue;
            }
            let mut dests = Cells::EMPTY;
            self.piece_moves(p, pinned, &mut dests);
            if !throwers.is_empty() && throwable(p) {
                add_throws(p, &mut dests);
            }
            if !dests.is_empty() {
                sink.add(p, &dests);
                any = true;
            }
        }
        if !throwers.is_empty() {
            // The opponent's pieces next to a thrower.
            let mut done = 0u32;
            for &t in throwers {
                for d in 0..6 {
                    let x = nb(t, d);
                    let p = self.top[x as usize];
                    if p == NO_PIECE || color_of(p) == me || done >> p & 1 != 0 || !throwable(p) {
                        continue;
                    }
                    done |= 1 << p;
                    let mut dests = Cells::EMPTY;
                    add_throws(p, &mut dests);
                    if !dests.is_empty() {
                        sink.add(p, &dests);
                        any = true;
                    }
                }
            }
        }
        any
    }

    /// The number of legal moves (a forced pass counts one; a finished game has none).
    #[inline]
    pub fn count_moves(&self) -> u64 {
        let mut c = Counter(0);
        self.generate(&mut c);
        c.0
    }

    /// Every legal move.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut v = Vec::with_capacity(64);
        self.generate(&mut v);
        v
    }

}

/// perft on the bare board, bulk counting at the last ply.
pub fn perft(b: &mut Board, depth: u32, bufs: &mut [Vec<Move>]) -> u64 {
    if depth == 0 {
        return 1;
    }
    if depth == 1 {
        return b.count_moves();
    }
    let Some((buf, rest)) = bufs.split_first_mut() else {
        return 0;
    };
    buf.clear();
    b.generate(buf);
    let mut n = 0;
    for &m in buf.iter() {
        let u = b.make(m);
        n += perft(b, depth - 1, rest);
        b.unmake(&u);
    }
    n
}

#[cfg(test)]
impl Board {
    /// [`Board::pinned`] computed afresh, whatever is kept (tests compare the two).
    pub fn pinned_fresh(&self) -> u32 {
        self.cut_vertices()
    }

    /// Put a piece on a cell without any rule (tests build positions with it).
    pub fn place_raw(&mut self, p: u8, c: u16) {
        self.hand &= !(1 << p);
        self.put(p, c);
    }

    /// Set the plies played and the piece moved last (tests).
    pub fn set_state_raw(&mut self, turn: u32, last: u8) {
        self.turn = turn;
        self.last = last;
    }

    /// Empty one side's hand (tests).
    pub fn clear_hand_raw(&mut self, color: usize) {
        self.hand &= !(((1u32 << PER_SIDE) - 1) << (color as u32 * PER_SIDE as u32));
    }
}

/// The cell at axial (q, r) from the origin (tests).
#[cfg(test)]
pub fn cell(q: i32, r: i32) -> u16 {
    ((ORIGIN as i32 + r * 32 + q) & MASK as i32) as u16
}
