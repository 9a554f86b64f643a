//! Xiangqi (Chinese chess): rules, notations, evaluation.
//!
//! Red (`Side::First`) moves first from the bottom of the board (ranks 0-4), Black from the top. The general
//! and advisors stay in the palace; the two generals may never face each other on an open file; a horse is
//! blocked by a piece next to it on its leg; elephants move two points diagonally, blocked at the eye, and
//! never cross the river; chariots move like rooks; cannons move like rooks and capture by jumping exactly
//! one screen; soldiers step forward, and also sideways once across the river. A side with no legal move
//! loses (stalemate included).
//!
//! Repetition: when a position repeats, a side that gave check with every one of its moves of the cycle,
//! while the other side did not, loses (perpetual check); any other repetition is a draw. 60 moves by each
//! side (120 plies) without a capture draw. The chase rules of the Asian Xiangqi Federation are not
//! implemented.

mod board;
mod eval;
mod notation;
mod picture;
mod record;
mod tuning;
mod weights;

pub use board::Move;
use board::{BLACK, Board, CANNON, CELLS, CHARIOT, HORSE, RED, SLOT_RANGE};
pub use notation::Letters;

use crate::game::{
    Game, GameEnd, NotationError, ReadError, RecordBudget, Records, RepetitionHistory, Side,
};

/// Plies without a capture that draw the game (60 moves by each side).
pub const NO_CAPTURE_PLIES: u32 = 120;

/// Zobrist keys: `[piece code][cell]`, and the key of Black to move.
static ZOBRIST: [[u64; CELLS]; 16] = crate::game::zobrist_keys(0x2F1E_5C37_A9B4_D061, 1);
const ZOBRIST_BLACK_TO_MOVE: u64 = 0xC4CE_B9FE_1A85_EC53;

/// The start position.
pub const START_FEN: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

/// What `make` saves for `unmake`.
#[derive(Clone, Copy, Debug)]
struct Undo {
    /// The move; `Move::default()` (from 0) for a null move.
    m: Move,
    captured: u8,
    hash: u64,
    pst: i32,
    rev: u32,
    rep: u32,
    check: bool,
}

/// A xiangqi game: the position and the moves that led to it.
#[derive(Clone, Debug)]
pub struct Xiangqi {
    board: Board,
    hash: u64,
    /// Material and piece-square sum, Red minus Black.
    pst: i32,
    /// Plies since the last capture.
    rev: u32,
    /// Plies since the last capture or null move: how far back a repetition can reach.
    rep: u32,
    /// The side to move is in check.
    check: bool,
    /// The full move number of the position the game was set up from.
    fullmove0: u32,
    stack: Vec<Undo>,
    /// For every move made: whether it gave check.
    checks: Vec<bool>,
    history: RepetitionHistory,
}

fn hash_from_scratch(b: &Board) -> u64 {
    let mut h = if b.stm == BLACK { ZOBRIST_BLACK_TO_MOVE } else { 0 };
    for id in 0..32 {
        let sq = b.pos[id] as usize;
        if sq != 0 {
            h ^= ZOBRIST[b.code_at(sq) as usize][sq];
        }
    }
    h
}

/// MVV-LVA weights per piece type (general, advisor, elephant, horse, chariot, cannon, soldier).
const VICTIM: [i32; 7] = [20, 2, 2, 4, 9, 4, 1];
const ATTACKER: [i32; 7] = [6, 2, 2, 4, 9, 4, 1];

impl Xiangqi {
    fn from_parsed(p: notation::ParsedFen) -> Xiangqi {
        let board = p.board;
        let hash = hash_from_scratch(&board);
        let mut history = RepetitionHistory::new();
        history.push(hash);
        Xiangqi {
            pst: eval::pst_from_scratch(&board),
            check: board.in_check(),
            hash,
            rev: p.reversible,
            rep: p.reversible,
            fullmove0: p.fullmove,
            board,
            stack: Vec::with_capacity(256),
            checks: Vec::with_capacity(256),
            history,
        }
    }

    /// A position from FEN (`rnbakabnr/9/1c5c1/... w - - 0 1`; side and counters optional; `w` or `r` for
    /// Red, `b` for Black; `N`/`H` horse, `B`/`E` elephant).
    pub fn from_fen(text: &str) -> Result<Xiangqi, NotationError> {
        notation::parse_fen(text).map(Xiangqi::from_parsed)
    }

    /// The position as standard FEN (`N`/`B` letters, `w`/`b`, `- -`, the no-capture and full move counters).
    pub fn to_fen(&self) -> String {
        notation::format_fen(&self.board, Letters::Standard, self.rev, self.fullmove())
    }

    /// The position as FEN with the chosen letters for horse and elephant (`H`/`E` for Qianhong).
    pub fn to_fen_with(&self, letters: Letters) -> String {
        notation::format_fen(&self.board, letters, self.rev, self.fullmove())
    }

    /// The full move number of the current position.
    pub fn fullmove(&self) -> u32 {
        let black_started = (self.board.stm == BLACK) != (self.stack.len() % 2 == 1);
        self.fullmove0 + ((self.stack.len() + black_started as usize) / 2) as u32
    }

    /// Read a move in ICCS (`H2-E2`, any case) or coordinates (`h2e2`) and check that it is legal.
    pub fn parse_move_text(&self, text: &str) -> Result<Move, NotationError> {
        let (from, to) = notation::parse_points(text)?;
        let token = text.trim();
        let mover = self.board.cells[from];
        if mover & board::own_mask(self.board.stm) == 0 {
            let whose = if self.board.stm == RED { "red" } else { "black" };
            return Err(NotationError::new(token, format!("no {whose} piece on {}", notation::point_name(from))));
        }
        let m = Move::new(from, to);
        if self.legal_moves().contains(&m) { Ok(m) } else { Err(NotationError::new(token, "illegal move")) }
    }

    /// A move in ICCS, upper-case with a dash (`H2-E2`).
    pub fn move_to_iccs(m: Move) -> String {
        notation::format_iccs(m)
    }

    /// A move in coordinates, lower-case (`h2e2`).
    pub fn move_to_coord(m: Move) -> String {
        notation::format_coord(m)
    }

    /// Every legal move.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut v = Vec::with_capacity(64);
        self.generate_moves(&mut v);
        v
    }

    /// The piece on a point (file 0-8 from Red's left, rank 0-9 from Red's side) as its FEN letter.
    pub fn piece_at(&self, file: usize, rank: usize) -> Option<char> {
        if file >= 9 || rank >= 10 {
            return None;
        }
        let code = self.board.code_at(board::square(file, rank));
        (code != 0).then(|| notation::letter_of(code, Letters::Standard))
    }

    /// Plies since the last capture.
    pub fn reversible_plies(&self) -> u32 {
        self.rev
    }

    /// The hash recomputed from the pieces (for tests of the incremental one).
    pub fn hash_from_scratch(&self) -> u64 {
        hash_from_scratch(&self.board)
    }

    /// The incremental material and position sum equals the one computed from scratch (for tests).
    pub fn pst_is_consistent(&self) -> bool {
        self.pst == eval::pst_from_scratch(&self.board)
    }

    fn count(&self, side: usize, kind: u8) -> u32 {
        let (lo, hi) = SLOT_RANGE[kind as usize];
        (lo..hi).filter(|&slot| self.board.pos[side * 16 + slot] != 0).count() as u32
    }
}

impl Game for Xiangqi {
    type Move = Move;
    type Threats = ();

    const NAME: &'static str = "xiangqi";
    const POSITION_FORMATS: &'static [&'static str] = &["fen"];
    const MOVE_FORMATS: &'static [&'static str] = &["iccs", "coord"];
    const BENCH_POSITIONS: &'static [&'static str] = &[
        START_FEN,
        "r1baka2r/9/1cn4cb/p1N1pC2p/2P1P4/6p2/P5n1P/6C2/9/R1BAKABNR b - - 7 10",
        "2bakabn1/9/n3c4/p1p1p1p1p/9/2P6/Pr2P1P1P/1C2B1N2/R2N5/3AKAB2 b - - 4 10",
        "2r1kabr1/4a4/1cn1b1n2/p1p1p4/6p1R/2P1C4/P3P1c1P/4C1N1B/9/RNBAKA3 b - - 3 11",
        "2bakab1r/9/2c2cn2/p3p3p/2pn2P2/9/P1P1PC2P/2N1C1N2/9/2BAKAB1R b - - 10 11",
        "2b1kab2/4a4/n3c4/2p1n3p/3R2p2/2P1p3P/2C1P1P2/4B1N2/1r1N5/3AKAB2 w - - 3 18",
        "r1bak1r2/4aN3/1c2c3b/p1P1C3p/9/3n1p3/P7P/4B4/9/R1BAKA1NR w - - 7 18",
        "1rba1k3/1P2a4/2c5b/p7p/9/2C1n4/P7P/2R5R/3KA4/7r1 w - - 4 33",
        "4kab2/2n1a4/4b4/2p2N2p/4C4/2P2R2P/3rc1P2/4B4/4A4/4KAB2 w - - 15 33",
        "2b1kab2/9/9/3C5/4c4/3p4P/P8/4B4/4K4/3A1A3 w - - 3 34",
    ];
    const BENCH_DEPTH: u32 = 8;
    const DEFAULT_DEPTH: u32 = 10;
    const WHITE_SIDE: Side = Side::First;
    const NULL_MOVE: bool = true;
    const FORWARD_PRUNING: bool = true;
    const FORCED_CAPTURES: bool = false;
    const CHECK_EXTENSION: bool = true;

    fn start() -> Self {
        match Xiangqi::from_fen(START_FEN) {
            Ok(g) => g,
            Err(e) => unreachable!("the start position reads: {e}"),
        }
    }

    #[inline]
    fn side_to_move(&self) -> Side {
        if self.board.stm == RED { Side::First } else { Side::Second }
    }

    fn side_name(side: Side) -> &'static str {
        match side {
            Side::First => "red",
            Side::Second => "black",
        }
    }

    #[inline]
    fn generate_moves(&self, out: &mut Vec<Move>) {
        out.clear();
        let l = self.board.legality();
        self.board.generate::<Vec<Move>, false>(&l, out);
    }

    #[inline]
    fn generate_noisy(&self, out: &mut Vec<Move>) {
        out.clear();
        let l = self.board.legality();
        self.board.generate::<Vec<Move>, true>(&l, out);
    }

    #[inline]
    fn count_moves(&self) -> u64 {
        self.board.count_moves()
    }

    #[inline]
    fn make(&mut self, m: Move) {
        let b = &mut self.board;
        let (from, to) = (m.from as usize, m.to as usize);
        let mover = b.code_at(from) as usize;
        let captured = b.cells[to];
        self.stack.push(Undo {
            m,
            captured,
            hash: self.hash,
            pst: self.pst,
            rev: self.rev,
            rep: self.rep,
            check: self.check,
        });
        let sign = if b.stm == RED { 1 } else { -1 };
        let mut h = self.hash ^ ZOBRIST_BLACK_TO_MOVE ^ ZOBRIST[mover][from] ^ ZOBRIST[mover][to];
        let mut pst = self.pst + sign * (eval::PST[mover][to] - eval::PST[mover][from]);
        if captured != 0 {
            let cap = board::CODE[captured as usize] as usize;
            h ^= ZOBRIST[cap][to];
            pst += sign * eval::PST[cap][to];
            self.rev = 0;
            self.rep = 0;
        } else {
            self.rev += 1;
            self.rep += 1;
        }
        b.apply(m);
        self.hash = h;
        self.pst = pst;
        self.check = b.in_check();
        self.checks.push(self.check);
        self.history.push(h);
    }

    #[inline]
    fn unmake(&mut self) {
        let Some(u) = self.stack.pop() else {
            return;
        };
        if u.m.from == 0 {
            self.board.stm ^= 1;
        } else {
            self.board.retract(u.m, u.captured);
        }
        self.hash = u.hash;
        self.pst = u.pst;
        self.rev = u.rev;
        self.rep = u.rep;
        self.check = u.check;
        self.checks.pop();
        self.history.pop();
    }

    fn make_null(&mut self) -> bool {
        if self.check {
            return false;
        }
        let me = self.board.stm;
        // Zugzwang is real when only defenders and soldiers are left: refuse then.
        if 2 * self.count(me, CHARIOT) + self.count(me, HORSE) + self.count(me, CANNON) < 2 {
            return false;
        }
        self.stack.push(Undo {
            m: Move::default(),
            captured: 0,
            hash: self.hash,
            pst: self.pst,
            rev: self.rev,
            rep: self.rep,
            check: self.check,
        });
        self.board.stm ^= 1;
        self.hash ^= ZOBRIST_BLACK_TO_MOVE;
        self.rev += 1;
        self.rep = 0;
        self.check = false;
        self.checks.push(false);
        self.history.push(self.hash);
        true
    }

    #[inline]
    fn hash(&self) -> u64 {
        self.hash
    }

    #[inline]
    fn plies(&self) -> usize {
        self.stack.len()
    }

    #[inline]
    fn rule_end(&self, plies_since_root: usize) -> Option<GameEnd> {
        if self.rep >= 4 {
            let (count, nearest) = self.history.repetitions(self.hash, self.rep as usize);
            if count >= 2 || (count >= 1 && nearest <= plies_since_root) {
                // The cycle is the last `nearest` moves: the side that just moved made those at even
                // distances from the end, the side to move those at odd distances.
                let n = self.checks.len();
                let mover_checked = (0..nearest).step_by(2).all(|i| self.checks[n - 1 - i]);
                let other_checked = (1..nearest).step_by(2).all(|i| self.checks[n - 1 - i]);
                let stm = self.side_to_move();
                return Some(match (mover_checked, other_checked) {
                    (true, false) => GameEnd::win(stm, "perpetual check"),
                    (false, true) => GameEnd::win(stm.opponent(), "perpetual check"),
                    _ => GameEnd::draw("repetition"),
                });
            }
        }
        // A position without a move is lost whatever the count: the move that mated on the last ply wins.
        if self.rev >= NO_CAPTURE_PLIES && crate::game::has_move(self) {
            return Some(GameEnd::draw("60-move rule"));
        }
        None
    }

    fn no_move_end(&self) -> GameEnd {
        GameEnd::win(self.side_to_move().opponent(), "no legal move")
    }

    #[inline]
    fn in_check(&self) -> bool {
        self.check
    }

    #[inline]
    fn evaluate(&self) -> i32 {
        eval::evaluate(&self.board, self.pst)
    }

    #[inline]
    fn is_noisy(&self, m: Move) -> bool {
        self.board.cells[m.to as usize] != 0
    }

    #[inline]
    fn noisy_order(&self, m: Move) -> i32 {
        let victim = self.board.code_at(m.to as usize);
        let attacker = self.board.code_at(m.from as usize);
        if victim == 0 {
            return 0;
        }
        VICTIM[((victim - 1) % 8) as usize] * 16 - ATTACKER[((attacker.max(1) - 1) % 8) as usize]
    }

    #[inline]
    fn move_key(m: Move) -> u32 {
        m.from as u32 | (m.to as u32) << 8
    }

    const RECORD_FORMATS: &'static [&'static str] = &["pgn", "moves"];

    fn parse_records(text: &str, format: Option<&str>, budget: &mut RecordBudget) -> Result<Records<Self>, ReadError> {
        record::parse(text, format, budget)
    }

    fn parse_position(text: &str, format: Option<&str>) -> Result<Self, NotationError> {
        match format {
            None | Some("fen") => Xiangqi::from_fen(text),
            Some(f) => Err(NotationError::new(f, "unknown position format (known: fen)")),
        }
    }

    fn format_position(&self, format: Option<&str>) -> Result<String, NotationError> {
        match format {
            None | Some("fen") => Ok(self.to_fen()),
            Some(f) => Err(NotationError::new(f, "unknown position format (known: fen)")),
        }
    }

    fn position_key(&self) -> String {
        // The board and the side to move: the counters do not change the analysis.
        let fen = self.to_fen();
        let mut fields = fen.split(' ');
        format!("{} {}", fields.next().unwrap_or(""), fields.next().unwrap_or("w"))
    }

    fn rule_state_key(&self) -> String {
        // The 60-move count and the positions a repetition could return to, with the checks of the moves since
        // each (they decide a perpetual check).
        let window = (self.rep as usize).min(self.checks.len());
        let checks: Vec<u8> = self.checks[self.checks.len() - window..].iter().map(|&c| u8::from(c)).collect();
        crate::game::rule_state_text(&[(self.rev, NO_CAPTURE_PLIES)], self.history.window_digest(self.rep as usize, &checks))
    }

    fn parse_move(&self, text: &str) -> Result<Move, NotationError> {
        self.parse_move_text(text)
    }

    fn draw(&self, view: &crate::picture::View) -> crate::picture::Scene {
        picture::draw(self, view)
    }

    fn move_squares(&self, m: Move) -> Vec<String> {
        picture::move_squares(m)
    }

    fn format_move(&self, m: Move) -> String {
        notation::format_iccs(m)
    }

    fn format_move_as(&self, m: Move, format: &str) -> Result<String, NotationError> {
        match format {
            "iccs" => Ok(notation::format_iccs(m)),
            "coord" => Ok(notation::format_coord(m)),
            _ => Err(NotationError::new(format, "unknown move format (known: iccs, coord)")),
        }
    }

    fn perft(&mut self, depth: u32) -> u64 {
        let mut b = self.board.clone();
        b.perft(depth)
    }
}

#[cfg(test)]
mod tests;
