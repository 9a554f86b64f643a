//! English checkers (8x8, 32 squares): rules, notation, evaluation.
//!
//! Black (`Side::First`) starts on squares 1-12 and moves first; White on 21-32. Men move one square
//! diagonally forward, kings in all four directions; captures are compulsory, any capturing sequence may be
//! chosen, a started jump must be completed, and a man that reaches the last row is crowned and stops there.
//! A side with no legal move loses; threefold repetition and 40 moves by each side without a capture or a
//! man's move are draws.

mod board;
mod eval;
mod notation;
mod picture;
mod record;
mod tuning;
mod weights;

pub use board::Move;
use board::{BOARD, Board, CROWN_ROW};

use crate::game::{
    Game, GameEnd, GameRecord, NotationError, PlyNote, ReadError, RecordBudget, Records, RepetitionHistory, Side,
};

/// Plies without a capture or a man's move that draw the game (40 moves by each side).
pub const FORTY_MOVE_PLIES: u32 = 80;

/// Zobrist keys: `[black man, black king, white man, white king][bit]`, and the side key.
const ZOBRIST: [[u64; 64]; 4] = crate::game::zobrist_keys(0x9E37_79B9_7F4A_7C15, 0);
const ZOBRIST_WHITE_TO_MOVE: u64 = 0x5D2B_0C3E_71A9_F48B;

/// The state that `make` saves and `unmake` restores.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct State {
    board: Board,
    hash: u64,
    /// Plies since the last capture or man move.
    reversible: u32,
}

/// An English checkers game: the position and the moves that led to it.
#[derive(Clone, Debug)]
pub struct Checkers {
    cur: State,
    stack: Vec<State>,
    history: RepetitionHistory,
}

fn hash_from_scratch(b: &Board) -> u64 {
    let mut h = if b.stm == board::WHITE { ZOBRIST_WHITE_TO_MOVE } else { 0 };
    for side in 0..2 {
        let mut p = b.pieces[side];
        while p != 0 {
            let bit = p.trailing_zeros() as usize;
            p &= p - 1;
            let king = (b.kings >> bit) & 1;
            h ^= ZOBRIST[side * 2 + king as usize][bit];
        }
    }
    h
}

impl Checkers {
    /// A game starting from `board` (which must be consistent: kings a subset of the pieces, no overlap).
    fn from_board(board: Board) -> Checkers {
        let cur = State { board, hash: hash_from_scratch(&board), reversible: 0 };
        let mut history = RepetitionHistory::new();
        history.push(cur.hash);
        Checkers { cur, stack: Vec::with_capacity(256), history }
    }

    /// A position from PDN FEN (`B:W21-32:B1-12`, `W:WK14,K15:B10`, ...).
    pub fn from_fen(text: &str) -> Result<Checkers, NotationError> {
        notation::parse_fen(text).map(Checkers::from_board)
    }

    /// The position as canonical PDN FEN: side, White's then Black's squares ascending, kings with `K`.
    pub fn to_fen(&self) -> String {
        notation::format_fen(&self.cur.board)
    }

    /// Parse a move in PDN (`9-13`, `11x18x25`, also `9x13` and an unambiguous `11x25`).
    pub fn parse_move_text(&self, text: &str) -> Result<Move, NotationError> {
        notation::parse_move(self, text)
    }

    /// A move in PDN: `9-13` for a simple move, `11x18x25` with every landing square for a jump.
    pub fn move_to_pdn(m: Move) -> String {
        notation::format_move(m, false)
    }

    /// A move with `x` between every square, even for a simple move (`9x13`), as the Checkers Protocol writes.
    pub fn move_to_x(m: Move) -> String {
        notation::format_move(m, true)
    }

    /// Every legal move.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut v = Vec::with_capacity(32);
        self.cur.board.generate(&mut v);
        v
    }

    /// Plies since the last capture or man move.
    pub fn reversible_plies(&self) -> u32 {
        self.cur.reversible
    }

    /// The hash recomputed from the pieces (for tests of the incremental one).
    pub fn hash_from_scratch(&self) -> u64 {
        hash_from_scratch(&self.cur.board)
    }

    pub(crate) fn board(&self) -> &Board {
        &self.cur.board
    }

    /// Neither side can capture: the static evaluation is a fair judge of the position.
    pub fn is_quiet(&self) -> bool {
        let b = self.cur.board;
        b.jumpers() == 0 && Board { stm: b.stm ^ 1, ..b }.jumpers() == 0
    }
}

/// Copy-make perft on the bare board (no hash, no history), bulk counting at the last ply.
fn perft_board(b: &Board, depth: u32, bufs: &mut [Vec<Move>]) -> u64 {
    if depth <= 1 {
        return if depth == 0 { 1 } else { b.count_moves() };
    }
    let Some((buf, rest)) = bufs.split_first_mut() else {
        return 0;
    };
    buf.clear();
    b.generate(buf);
    let mut n = 0;
    for &m in buf.iter() {
        let c = play(b, m);
        n += perft_board(&c, depth - 1, rest);
    }
    n
}

/// The board after `m`.
#[inline(always)]
fn play(b: &Board, m: Move) -> Board {
    let me = b.stm;
    let fb = 1u64 << m.from;
    let tb = 1u64 << m.to;
    let mut pieces = b.pieces;
    let mut kings = b.kings;
    pieces[me] ^= fb ^ tb;
    pieces[me ^ 1] &= !m.cap;
    kings &= !m.cap;
    if kings & fb != 0 {
        kings ^= fb ^ tb;
    } else {
        kings |= tb & CROWN_ROW[me];
    }
    Board { pieces, kings, stm: me ^ 1 }
}

impl Game for Checkers {
    type Move = Move;
    type Threats = ();

    const NAME: &'static str = "checkers";
    const POSITION_FORMATS: &'static [&'static str] = &["fen"];
    const MOVE_FORMATS: &'static [&'static str] = &["pdn", "x"];
    const BENCH_POSITIONS: &'static [&'static str] = &[
        "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12",
        "B:W10,18,19,21,22,24,27,28,29,30,31,32:B1,3,4,5,6,7,9,11,12,13,15",
        "B:W18,19,20,21,23,25,26,28,29,31,32:B1,3,4,5,6,8,9,10,11,12,14",
        "B:W17,18,21,22,24,26,28,31,32:B1,5,8,9,10,11,13,15,16",
        "B:W14,15,19,22,23,26,28,31,32:B1,5,6,7,8,10,12,13",
        "B:W16,18,23,24,28,29,32:B1,3,4,5,8,9,10",
        "B:W17,21,23,24,26,31:B8,10,13,14,16,22",
        "B:W15,18,19,20,23,24,32:B1,5,6,8,11,12,K29",
        "B:W7,15,20,24,27:B5,8,9,12,22,K29",
        "B:WK3,K9,20,24,27:B5,12,14,15,K25,K30",
    ];
    const BENCH_DEPTH: u32 = 16;
    const DEFAULT_DEPTH: u32 = 17;
    const WHITE_SIDE: Side = Side::Second;
    const NULL_MOVE: bool = false;
    const FORCED_CAPTURES: bool = true;

    fn start() -> Self {
        Checkers::from_board(Board::start())
    }

    #[inline]
    fn side_to_move(&self) -> Side {
        if self.cur.board.stm == board::BLACK { Side::First } else { Side::Second }
    }

    fn side_name(side: Side) -> &'static str {
        match side {
            Side::First => "black",
            Side::Second => "white",
        }
    }

    #[inline]
    fn generate_moves(&self, out: &mut Vec<Move>) {
        out.clear();
        self.cur.board.generate(out);
    }

    #[inline]
    fn generate_noisy(&self, out: &mut Vec<Move>) {
        out.clear();
        self.cur.board.generate_jumps(out);
    }

    #[inline]
    fn count_moves(&self) -> u64 {
        self.cur.board.count_moves()
    }

    #[inline]
    fn make(&mut self, m: Move) {
        let old = self.cur;
        self.stack.push(old);
        let b = &old.board;
        let me = b.stm;
        let fb = 1u64 << m.from;
        let was_king = b.kings & fb != 0;
        let new = play(b, m);
        let kind_from = me * 2 + was_king as usize;
        let kind_to = me * 2 + ((new.kings >> m.to) & 1) as usize;
        let mut h =
            old.hash ^ ZOBRIST_WHITE_TO_MOVE ^ ZOBRIST[kind_from][m.from as usize] ^ ZOBRIST[kind_to][m.to as usize];
        let mut c = m.cap;
        let opp = me ^ 1;
        while c != 0 {
            let bit = c.trailing_zeros() as usize;
            c &= c - 1;
            h ^= ZOBRIST[opp * 2 + ((b.kings >> bit) & 1) as usize][bit];
        }
        let reversible = if m.cap != 0 || !was_king { 0 } else { old.reversible + 1 };
        self.cur = State { board: new, hash: h, reversible };
        self.history.push(h);
    }

    #[inline]
    fn unmake(&mut self) {
        if let Some(s) = self.stack.pop() {
            self.cur = s;
            self.history.pop();
        }
    }

    #[inline]
    fn hash(&self) -> u64 {
        self.cur.hash
    }

    #[inline]
    fn plies(&self) -> usize {
        self.stack.len()
    }

    #[inline]
    fn rule_end(&self, plies_since_root: usize) -> Option<GameEnd> {
        let rev = self.cur.reversible;
        if rev >= 4 && self.history.is_draw(self.cur.hash, rev as usize, plies_since_root) {
            return Some(GameEnd::draw("threefold repetition"));
        }
        // A side left without a move on the last ply of the count has lost: that ends the game first.
        if rev >= FORTY_MOVE_PLIES && crate::game::has_move(self) {
            return Some(GameEnd::draw("40-move rule"));
        }
        None
    }

    fn no_move_end(&self) -> GameEnd {
        GameEnd::win(self.side_to_move().opponent(), "no legal move")
    }

    #[inline]
    fn evaluate(&self) -> i32 {
        eval::evaluate(&self.cur.board)
    }

    #[inline]
    fn is_noisy(&self, m: Move) -> bool {
        m.hops > 0
    }

    #[inline]
    fn noisy_order(&self, m: Move) -> i32 {
        let k = (m.cap & self.cur.board.kings).count_ones() as i32;
        m.hops as i32 * 100 + k * 40
    }

    #[inline]
    fn move_key(m: Move) -> u32 {
        let mut k = m.from as u32 | (m.to as u32) << 6;
        if m.hops > 0 {
            let mix = (m.cap ^ ((m.path as u64) << 35)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            k |= ((mix >> 44) as u32) << 12;
        }
        k
    }

    fn parse_position(text: &str, format: Option<&str>) -> Result<Self, NotationError> {
        match format {
            None | Some("fen") => Checkers::from_fen(text),
            Some(f) => Err(NotationError::new(f, "unknown position format (known: fen)")),
        }
    }

    fn format_position(&self, format: Option<&str>) -> Result<String, NotationError> {
        match format {
            None | Some("fen") => Ok(self.to_fen()),
            Some(f) => Err(NotationError::new(f, "unknown position format (known: fen)")),
        }
    }

    fn rule_state_key(&self) -> String {
        // The 40-move count and the positions a repetition could return to.
        let rev = self.cur.reversible;
        crate::game::rule_state_text(&[(rev, FORTY_MOVE_PLIES)], self.history.window_digest(rev as usize, &[]))
    }

    fn parse_move(&self, text: &str) -> Result<Move, NotationError> {
        notation::parse_move(self, text)
    }

    fn draw(&self, view: &crate::picture::View) -> crate::picture::Scene {
        picture::draw(self, view)
    }

    fn move_squares(&self, m: Move) -> Vec<String> {
        picture::move_squares(m)
    }

    fn format_move(&self, m: Move) -> String {
        notation::format_move(m, false)
    }

    fn format_move_as(&self, m: Move, format: &str) -> Result<String, NotationError> {
        match format {
            "pdn" => Ok(notation::format_move(m, false)),
            "x" => Ok(notation::format_move(m, true)),
            _ => Err(NotationError::new(format, "unknown move format (known: pdn, x)")),
        }
    }

    const RECORD_FORMATS: &'static [&'static str] = &["pdn"];
    const EXPORT_FORMAT: Option<&'static str> = Some("pdn");

    fn parse_records(text: &str, format: Option<&str>, budget: &mut RecordBudget) -> Result<Records<Self>, ReadError> {
        record::parse(text, format, budget)
    }

    fn export_record(record: &GameRecord<Self>, notes: &[PlyNote<Move>]) -> Option<String> {
        Some(record::export(record, notes))
    }

    fn perft(&mut self, depth: u32) -> u64 {
        let mut bufs: Vec<Vec<Move>> = (0..depth.max(1)).map(|_| Vec::with_capacity(64)).collect();
        perft_board(&self.cur.board, depth, &mut bufs)
    }
}

const _: () = assert!(CROWN_ROW[0] & BOARD == CROWN_ROW[0] && CROWN_ROW[1] & BOARD == CROWN_ROW[1]);

#[cfg(test)]
mod tests;
