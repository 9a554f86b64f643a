//! International draughts (10x10, 50 squares, FMJD rules): rules, notations, evaluation.
//!
//! White (`Side::First`) starts on squares 31-50 and moves first; Black on 1-20. Men move one square
//! diagonally forward and capture forward and backward; kings fly. Capturing is compulsory and the sequence
//! capturing the most pieces must be played (kings and men count the same); captured pieces are removed
//! after the whole sequence (Turkish strike: none is jumped twice, and jumped pieces still block). A man is
//! crowned only when its move ends on the far row. A side with no legal move loses.
//!
//! Draws: threefold repetition; 25 moves by each side (50 plies) with only kings moved and no capture; and the
//! FMJD endgame rules: three pieces including a king (three kings, two kings and a man, a king and two men)
//! against a lone king is a draw after 16 moves by each side (32 plies), two kings, a king and a man, or a
//! king against a lone king after 5 moves by each side (10 plies), counted from the moment the material
//! arises (a promotion keeps the count, a capture restarts it).

mod board;
mod eval;
mod notation;
mod patterns;
mod picture;
mod record;
mod tuning;

use board::{BLACK, BOARD, Board, WHITE};
pub use board::{CapturePath, Move};

use crate::game::{
    Game, GameEnd, GameRecord, NotationError, PlyNote, ReadError, RecordBudget, Records, RepetitionHistory, Side,
};

pub use eval::TrainingTerms;
pub use patterns::{
    CONFIGS as PATTERN_CONFIGS, FULL as PATTERN_FULL, REGIONS as PATTERN_REGIONS, STORED as PATTERN_STORED,
    read_table as read_pattern_table, write_table as write_pattern_table,
};

/// Plies with only king moves and no capture that draw the game (25 moves by each side).
pub const KING_MOVE_PLIES: u32 = 50;
/// Plies of the FMJD endgame rules: three pieces with a king against a lone king, and fewer against it.
pub const ENDGAME_LONG_PLIES: u32 = 32;
pub const ENDGAME_SHORT_PLIES: u32 = 10;

/// Zobrist keys: `[white man, white king, black man, black king][bit]`.
const ZOBRIST: [[u64; 64]; 4] = crate::game::zobrist_keys(0x2545_F491_4F6C_DD1D, 0);
const ZOBRIST_BLACK_TO_MOVE: u64 = 0x7A3C_55E1_0B96_D24F;

/// The state that `make` saves and `unmake` restores.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct State {
    board: Board,
    hash: u64,
    /// Plies since the last capture or man move.
    reversible: u16,
    /// Plies played in the current FMJD endgame material (see `endgame_limit`).
    endgame: u16,
    /// The draw limit of the current material under the FMJD endgame rules (0: the rules do not apply).
    endgame_limit: u16,
}

/// An international draughts game: the position and the moves that led to it.
#[derive(Clone, Debug)]
pub struct Draughts {
    cur: State,
    stack: Vec<State>,
    history: RepetitionHistory,
}

fn hash_from_scratch(b: &Board) -> u64 {
    let mut h = if b.stm == BLACK { ZOBRIST_BLACK_TO_MOVE } else { 0 };
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

/// The FMJD endgame draw limit in plies for this material, or 0 when the rules do not apply: one side has a
/// lone king, the other three pieces with a king (32), or one or two pieces with a king (10).
#[inline]
fn endgame_limit(b: &Board) -> u16 {
    let all = b.occupied();
    if all.count_ones() > 4 {
        return 0;
    }
    for (strong, weak) in [(WHITE, BLACK), (BLACK, WHITE)] {
        let w = b.pieces[weak];
        if w.count_ones() != 1 || w & b.kings == 0 {
            continue;
        }
        let s = b.pieces[strong];
        if s & b.kings == 0 {
            continue;
        }
        match s.count_ones() {
            3 => return ENDGAME_LONG_PLIES as u16,
            1 | 2 => return ENDGAME_SHORT_PLIES as u16,
            _ => {}
        }
    }
    0
}

impl Draughts {
    /// A game starting from `board` (which must be consistent).
    fn from_board(board: Board) -> Draughts {
        let cur = State {
            board,
            hash: hash_from_scratch(&board),
            reversible: 0,
            endgame: 0,
            endgame_limit: endgame_limit(&board),
        };
        let mut history = RepetitionHistory::new();
        history.push(cur.hash);
        Draughts { cur, stack: Vec::with_capacity(256), history }
    }

    /// A position from PDN FEN (`W:W31-50:B1-20`, `B:WK3,28:B7,K44`, ...).
    pub fn from_fen(text: &str) -> Result<Draughts, NotationError> {
        notation::parse_fen(text).map(Draughts::from_board)
    }

    /// The position as canonical PDN FEN: side, White's then Black's squares ascending, kings with `K`.
    /// For the evaluation's tuner (`crate::tuning`): the hand-written terms from White's view, the
    /// number of men, and the learned patterns' `(value index, sign)` terms; `None` for materials whose score
    /// is scaled toward a draw.
    pub fn training_terms(&self) -> Option<TrainingTerms> {
        eval::training_terms(&self.cur.board)
    }

    /// Neither side has a capture: the static evaluation is a fair judge of the position.
    pub fn is_quiet(&self) -> bool {
        let b = self.cur.board;
        !b.has_capture() && !Board { stm: b.stm ^ 1, ..b }.has_capture()
    }

    pub fn to_fen(&self) -> String {
        notation::format_fen(&self.cur.board)
    }

    /// A position in GUIDE's notation: `white` or `black` and 50 characters `e`/`w`/`W`/`b`/`B` for squares
    /// 1-50 (`white bbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww`).
    pub fn from_guide(text: &str) -> Result<Draughts, NotationError> {
        notation::parse_guide_position(text).map(Draughts::from_board)
    }

    /// The position in GUIDE's notation (`white` / `black`, a space, 50 characters).
    pub fn to_guide(&self) -> String {
        notation::format_guide_position(&self.cur.board)
    }

    /// A position in Hub's notation: `W` or `B`, then 50 characters `e`/`w`/`W`/`b`/`B` for squares 1-50.
    pub fn from_hub(text: &str) -> Result<Draughts, NotationError> {
        notation::parse_hub_position(text).map(Draughts::from_board)
    }

    /// The position in Hub's notation.
    pub fn to_hub(&self) -> String {
        notation::format_hub_position(&self.cur.board)
    }

    /// Read a Hub move (`32-28`; `28x19x23`: start, end, then every captured square in any order).
    pub fn parse_hub_move(&self, text: &str) -> Result<Move, NotationError> {
        notation::parse_hub_move(self, text)
    }

    /// A legal move in Hub's notation.
    pub fn hub_move(m: Move) -> String {
        notation::format_hub_move(m)
    }

    /// Read a GUIDE move (`32 28 0`, `31 33 2 27 28`): the legal move with these ends and this captured set
    /// (the order of the captured squares does not matter).
    pub fn parse_guide_move(&self, text: &str) -> Result<Move, NotationError> {
        notation::parse_guide_move(self, text)
    }

    /// A legal move in GUIDE's notation: from, to, the number of captured pieces and the captured squares in
    /// the order they are jumped (`31 33 2 27 28`).
    pub fn guide_move(&self, m: Move) -> String {
        notation::format_guide_move(&self.cur.board, m)
    }

    /// Read a GUIDE game (`<side> <50 characters> <nr_moves> m <move> m <move> ...`): the start position and
    /// its moves, each checked to be legal where it is played. Errors name the move's index and token.
    pub fn parse_guide_game(text: &str) -> Result<(Draughts, Vec<Move>), NotationError> {
        notation::parse_guide_game(text)
    }

    /// Write a GUIDE game: `start` in GUIDE notation, the number of moves, and `m <move>` for each move (which
    /// must be legal one after another from `start`; writing stops at the first that is not).
    pub fn format_guide_game(start: &Draughts, moves: &[Move]) -> String {
        notation::format_guide_game(start, moves)
    }

    /// Read a PDN move (`32-28`, `28x19`, `26x37x48`, or any landing squares that single out one capture).
    pub fn parse_pdn_move(&self, text: &str) -> Result<Move, NotationError> {
        notation::parse_move(self, text)
    }

    /// A legal move in the shortest unambiguous PDN (`32-28`, `28x19`, `26x37x48` when needed).
    pub fn pdn_move(&self, m: Move) -> String {
        notation::format_move(self, m)
    }

    /// Every way (every choice of landing squares) of playing the legal capture `m`, at most `limit`.
    pub fn capture_paths(&self, m: Move, limit: usize) -> Vec<CapturePath> {
        board::capture_paths(&self.cur.board, m, limit)
    }

    /// Every legal move.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut v = Vec::with_capacity(48);
        self.cur.board.generate(&mut v);
        v
    }

    /// The squares (1-50, ascending) of `side`'s kings (`kings`) or men.
    pub fn squares(&self, side: Side, kings: bool) -> Vec<u8> {
        let b = &self.cur.board;
        let set = b.pieces[side.index()] & if kings { b.kings } else { !b.kings };
        board::squares_of(set)
    }

    /// Plies since the last capture or man move.
    pub fn reversible_plies(&self) -> u32 {
        self.cur.reversible as u32
    }

    /// Plies played in the current material of the FMJD endgame rules, and its limit (0 if they do not apply).
    pub fn endgame_plies(&self) -> (u32, u32) {
        (self.cur.endgame as u32, self.cur.endgame_limit as u32)
    }

    /// The hash recomputed from the pieces (for tests of the incremental one).
    pub fn hash_from_scratch(&self) -> u64 {
        hash_from_scratch(&self.cur.board)
    }

    pub(crate) fn board(&self) -> &Board {
        &self.cur.board
    }
}

/// Copy-make perft on the bare board (no hash, no history), bulk counting at the last ply.
fn perft_board(b: &Board, depth: u32, bufs: &mut [Vec<Move>]) -> u64 {
    let Some((buf, rest)) = bufs.split_first_mut() else {
        return 0;
    };
    if depth <= 1 {
        return if depth == 0 { 1 } else { b.count_moves(buf) };
    }
    buf.clear();
    b.generate(buf);
    let mut n = 0;
    for &m in buf.iter() {
        n += perft_board(&b.play(m), depth - 1, rest);
    }
    n
}

impl Game for Draughts {
    type Move = Move;
    type Threats = ();

    const NAME: &'static str = "draughts";
    const POSITION_FORMATS: &'static [&'static str] = &["fen", "guide"];
    const MOVE_FORMATS: &'static [&'static str] = &["pdn", "guide"];
    const BENCH_POSITIONS: &'static [&'static str] = &[
        "W:W31-50:B1-20",
        "W:W28,31,32,34,35,36,38,39,40,41,43,45,46,47,48,49,50:B1,2,3,4,5,7,9,10,11,13,16,17,18,19,20,21,25",
        "W:W27,29,31,32,33,35,37,42,44,45,46,47,48,49,50:B1,2,3,4,5,6,9,12,15,16,17,19,20,21,24",
        "W:W28,33,34,35,36,37,38,40,41,45,47,48,49,50:B2,3,4,5,7,9,10,12,14,17,19,21,22,27",
        "W:W31,32,33,35,37,38,39,41,42,43,45,49:B2,3,6,7,13,14,15,16,19,20,24,26,40",
        "W:W21,28,33,34,36,38,40,41,42,43,49,50:B2,3,4,12,13,15,17,18,19,22,24,26",
        "W:W27,28,30,32,33,35,36,37,38,39,44:B2,8,12,14,16,17,19,23,24,25,26",
        "W:W11,16,34,41,49,50:B8,12,13,14,18,19,24,26,44",
        "W:W22,27,28,32,34,35,36,37,38:B11,16,19,20,21,23,25,26,29",
        "B:WK34,29,39,44:BK3,13,18",
    ];
    const BENCH_DEPTH: u32 = 12;
    const DEFAULT_DEPTH: u32 = 14;
    const WHITE_SIDE: Side = Side::First;
    const NULL_MOVE: bool = false;
    /// The reductions by history, "improving" and the counter move, and internal iterative reduction
    /// (draughts has no forward pruning or static exchanges for the rest): +55 Elo at 20,000 nodes a move
    /// (BENCHMARKS.md, international draughts).
    const SEARCH_REFINEMENTS: bool = true;
    const FORCED_CAPTURES: bool = true;

    fn start() -> Self {
        Draughts::from_board(Board::start())
    }

    #[inline]
    fn side_to_move(&self) -> Side {
        if self.cur.board.stm == WHITE { Side::First } else { Side::Second }
    }

    fn side_name(side: Side) -> &'static str {
        match side {
            Side::First => "white",
            Side::Second => "black",
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
        self.cur.board.generate_captures(out);
    }

    #[inline]
    fn count_moves(&self) -> u64 {
        let b = &self.cur.board;
        if b.has_capture() {
            let mut v = Vec::with_capacity(32);
            b.generate_captures(&mut v);
            v.len() as u64
        } else {
            b.count_quiet()
        }
    }

    #[inline]
    fn make(&mut self, m: Move) {
        let old = self.cur;
        self.stack.push(old);
        let b = &old.board;
        let me = b.stm;
        let was_king = b.kings & (1u64 << m.from) != 0;
        let new = b.play(m);
        let kind_from = me * 2 + was_king as usize;
        let kind_to = me * 2 + ((new.kings >> m.to) & 1) as usize;
        let mut h =
            old.hash ^ ZOBRIST_BLACK_TO_MOVE ^ ZOBRIST[kind_from][m.from as usize] ^ ZOBRIST[kind_to][m.to as usize];
        let mut c = m.cap;
        let opp = me ^ 1;
        while c != 0 {
            let bit = c.trailing_zeros() as usize;
            c &= c - 1;
            h ^= ZOBRIST[opp * 2 + ((b.kings >> bit) & 1) as usize][bit];
        }
        let reversible = if m.cap != 0 || !was_king { 0 } else { old.reversible.saturating_add(1) };
        // Without a capture the material changes only by a crowning, which can bring it under the endgame
        // rules (three men and a king against a king becoming king and two men; a lone man crowned).
        let crowned = !was_king && kind_to != kind_from;
        let (endgame, endgame_limit) = if m.cap == 0 && old.endgame_limit == 0 && !crowned {
            (0, 0)
        } else {
            let limit = endgame_limit(&new);
            if limit != 0 && m.cap == 0 && limit == old.endgame_limit {
                (old.endgame.saturating_add(1), limit)
            } else {
                (0, limit)
            }
        };
        self.cur = State { board: new, hash: h, reversible, endgame, endgame_limit };
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
        let rev = self.cur.reversible as u32;
        if rev >= 4 && self.history.is_draw(self.cur.hash, rev as usize, plies_since_root) {
            return Some(GameEnd::draw("threefold repetition"));
        }
        // A side left without a move on the last ply of a count has lost: that ends the game first.
        if rev >= KING_MOVE_PLIES && crate::game::has_move(self) {
            return Some(GameEnd::draw("25-move rule"));
        }
        let limit = self.cur.endgame_limit;
        if limit != 0 && self.cur.endgame >= limit && crate::game::has_move(self) {
            return Some(GameEnd::draw(if limit as u32 == ENDGAME_LONG_PLIES {
                "16-move endgame rule"
            } else {
                "5-move endgame rule"
            }));
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
        m.cap != 0
    }

    #[inline]
    fn noisy_order(&self, m: Move) -> i32 {
        let k = (m.cap & self.cur.board.kings).count_ones() as i32;
        m.cap.count_ones() as i32 * 100 + k * 150
    }

    #[inline]
    fn move_key(m: Move) -> u32 {
        let mut k = m.from as u32 | (m.to as u32) << 6;
        if m.cap != 0 {
            let mix = m.cap.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            k |= ((mix >> 44) as u32) << 12;
        }
        k
    }

    fn parse_position(text: &str, format: Option<&str>) -> Result<Self, NotationError> {
        match format {
            None => {
                if notation::looks_like_guide(text) {
                    Draughts::from_guide(text)
                } else {
                    Draughts::from_fen(text)
                }
            }
            Some("fen") => Draughts::from_fen(text),
            Some("guide") => Draughts::from_guide(text),
            Some(f) => Err(NotationError::new(f, "unknown position format (known: fen, guide)")),
        }
    }

    fn format_position(&self, format: Option<&str>) -> Result<String, NotationError> {
        match format {
            None | Some("fen") => Ok(self.to_fen()),
            Some("guide") => Ok(self.to_guide()),
            Some(f) => Err(NotationError::new(f, "unknown position format (known: fen, guide)")),
        }
    }

    fn rule_state_key(&self) -> String {
        // The 25-move count, the endgame rules' count and the positions a repetition could return to.
        let rev = self.cur.reversible as usize;
        let counts = [
            (u32::from(self.cur.reversible), KING_MOVE_PLIES),
            (u32::from(self.cur.endgame), u32::from(self.cur.endgame_limit)),
        ];
        crate::game::rule_state_text(&counts, self.history.window_digest(rev, &[]))
    }

    fn parse_move(&self, text: &str) -> Result<Move, NotationError> {
        notation::parse_any_move(self, text)
    }

    fn draw(&self, view: &crate::picture::View) -> crate::picture::Scene {
        picture::draw(self, view)
    }

    fn move_squares(&self, m: Move) -> Vec<String> {
        picture::move_squares(self, m)
    }

    fn format_move(&self, m: Move) -> String {
        notation::format_move(self, m)
    }

    fn format_move_as(&self, m: Move, format: &str) -> Result<String, NotationError> {
        match format {
            "pdn" => Ok(notation::format_move(self, m)),
            "guide" => Ok(notation::format_guide_move(&self.cur.board, m)),
            _ => Err(NotationError::new(format, "unknown move format (known: pdn, guide)")),
        }
    }

    const RECORD_FORMATS: &'static [&'static str] = &["pdn", "guide"];
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

const _: () = assert!(BOARD.count_ones() == 50);

#[cfg(test)]
mod tests;
