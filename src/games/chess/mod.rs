//! Chess, also Chess960 positions: the rules come from the `cozy-chess` crate (legal move generation, make,
//! Zobrist hashing); notations, draw rules, evaluation and search hooks are ours.
//!
//! White is `Side::First`. The game ends by checkmate, stalemate (a draw), threefold repetition, the 50-move
//! rule (100 plies without a capture or a pawn move, unless the position is mate or stalemate) and insufficient
//! material (K v K, K+minor v K, and kings with bishops all on one colour of square; also said of a stalemate
//! with such material, as python-chess says).
//!
//! Moves are `cozy_chess::Move`, where castling is "king takes own rook"; the notations convert it to the
//! standard `e1g1` / `O-O` (or keep king-takes-rook in Chess960 positions, as UCI does).

mod eval;
mod hashing;
pub mod net;
pub(crate) mod notation;
mod picture;
mod record;
mod tuning;
mod weights;

pub use cozy_chess::Move;
use cozy_chess::{
    BitBoard, Board, Color, Piece, Rank, Square, get_between_rays, get_bishop_moves, get_bishop_rays, get_king_moves,
    get_knight_moves, get_line_rays, get_pawn_attacks, get_rook_moves, get_rook_rays,
};
pub use eval::{
    COUNT as EVAL_WEIGHT_COUNT, NAMES as EVAL_WEIGHT_NAMES, PHASE_MAX, S, SQUARES, Squares, Tables, Trace, WEIGHTS,
    Weights, evaluate_with, see, trace,
};

use crate::game::{
    Game, GameEnd, GameRecord, NotationError, PlyNote, ReadError, RecordBudget, Records, RepetitionHistory, Side,
};

/// Plies without a capture or a pawn move that draw the game (the 50-move rule).
pub const FIFTY_MOVE_PLIES: u8 = 100;

/// A chess game: the position, the boards before each move (for `unmake`) and the hashes for repetition.
#[derive(Debug)]
pub struct Chess {
    board: Board,
    stack: Vec<Board>,
    history: RepetitionHistory,
    /// The castling rights of the position it was set up from were not the standard ones: castling is written
    /// king-takes-rook.
    chess960: bool,
    /// The evaluation's tables: the built-in ones unless [`Chess::with_tables`] chose others.
    tables: EvalTables,
    /// The network evaluation, if any (instead of the tables' evaluation, or correcting it).
    net: Option<&'static net::Network>,
    /// With a network: its hidden values for each position from the `acc_base`-th of the game on (the position
    /// after `acc_base + i` moves at index `i`), the current one's at `stack.len() - acc_base`; entries past that
    /// are left from deeper lines, kept so that a move writes its position's values in place, neither copied in
    /// nor out. Only the positions before the `fresh`-th are up to date: a move leaves its position's values to
    /// be made when the search evaluates it ([`Game::evaluate_in_search`]), from the nearest position before it
    /// that has them, so a position the search leaves without evaluating (a table cut-off, a move pruned once
    /// made, an evaluation found in the search's cache) costs nothing.
    accs: Vec<net::Accumulator>,
    /// The position (by moves from the start) whose values are `accs[0]`: a copy of the game keeps only the
    /// current position's ([`Clone`]), since a search never takes back a move before its root (a game of
    /// thousands of plies copied for each position annotated took memory growing with the square of its
    /// length). A position taken back before it has its values made afresh.
    acc_base: usize,
    /// The positions before the `fresh`-th (by moves from the start) hold their hidden values, from `acc_base`
    /// on; `fresh <= acc_base`: none does.
    fresh: usize,
    /// The keys that tell a move's hash before it is made ([`Game::hash_after`]), if they could be read.
    keys: Option<&'static hashing::Keys>,
}

/// A reference to evaluation tables, shown by address only in `Debug` output.
#[derive(Clone, Copy)]
struct EvalTables(&'static Tables);

impl std::fmt::Debug for EvalTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tables@{:p}", self.0)
    }
}

/// The hash the repetition rule compares: cozy-chess's hash, less the en passant file when no en passant
/// capture is legal. Positions are the same when the same moves are possible (FIDE 9.2.3), so a double step
/// that no pawn can take en passant does not make a new position.
fn repetition_hash(b: &Board) -> u64 {
    if b.en_passant().is_none() || en_passant_legal(b) { b.hash() } else { b.hash_without_ep() }
}

/// Whether the side to move can capture en passant (a double step leaves an en passant square whether or not a
/// pawn can take on it).
fn en_passant_legal(b: &Board) -> bool {
    let Some(file) = b.en_passant() else { return false };
    let us = b.side_to_move();
    let target = Square::new(file, Rank::Sixth.relative_to(us));
    // A pawn's only move to the square a pawn just passed is the en passant capture.
    b.generate_moves_for(b.colors(us) & b.pieces(Piece::Pawn), |pm| pm.to.has(target))
}

impl Clone for Chess {
    /// The game with its history, but the network's hidden values of the current position only (see
    /// `acc_base`): the entries of earlier positions are made again should the copy take their moves back.
    fn clone(&self) -> Chess {
        let current = self.stack.len();
        let mut accs = Vec::with_capacity(64);
        let fresh = match self.net {
            Some(_) => {
                let own = current.checked_sub(self.acc_base).and_then(|i| self.accs.get(i)).copied();
                accs.push(own.unwrap_or_default());
                if own.is_some() && self.fresh > current { current + 1 } else { current }
            }
            None => current,
        };
        Chess {
            board: self.board.clone(),
            stack: self.stack.clone(),
            history: self.history.clone(),
            chess960: self.chess960,
            tables: self.tables,
            net: self.net,
            accs,
            acc_base: current,
            fresh,
            keys: self.keys,
        }
    }
}

impl Chess {
    fn from_board(board: Board, chess960: bool) -> Chess {
        let mut history = RepetitionHistory::new();
        history.push(repetition_hash(&board));
        let net = default_net();
        let mut accs = Vec::with_capacity(256);
        accs.extend(net.map(|n| n.accumulate(&board)));
        Chess {
            board,
            stack: Vec::with_capacity(256),
            history,
            chess960,
            tables: EvalTables(&eval::TABLES),
            net,
            fresh: accs.len(),
            acc_base: 0,
            accs,
            keys: hash_keys(),
        }
    }

    /// The same game, evaluated with other tables from now on (a tuner's match between two weight sets).
    pub fn with_tables(mut self, tables: &'static Tables) -> Chess {
        self.tables = EvalTables(tables);
        self
    }

    /// The same game, evaluated by the tables alone, or with network `net`.
    pub fn with_network(mut self, net: Option<&'static net::Network>) -> Chess {
        self.net = net;
        self.acc_base = self.stack.len();
        self.accs.clear();
        self.accs.extend(net.map(|n| n.accumulate(&self.board)));
        self.fresh = self.acc_base + self.accs.len();
        self
    }

    /// Right after a move (or a null move) was pushed on `stack`: the new current position's hidden values
    /// are not made yet (an entry is added for them if the line is deeper than any before).
    #[inline]
    fn moved(&mut self) {
        if self.net.is_some() {
            let plies = self.stack.len();
            // The base is at most the position before the move (see `unmake`).
            if self.accs.len() <= plies - self.acc_base {
                self.accs.push(net::Accumulator::default());
            }
            self.fresh = self.fresh.min(plies);
        }
    }

    /// Bring the hidden values up to date along the line, to the current position's, from the nearest position
    /// that has them: each one from the one before, by the pieces the move between them moved.
    #[inline]
    fn refresh(&mut self) {
        let Some(net) = self.net else { return };
        let current = self.stack.len();
        let base = self.acc_base;
        if self.fresh <= base {
            // No position from the base on has its values: the base's are summed afresh.
            let board = if base == current { &self.board } else { &self.stack[base] };
            self.accs[0] = net.accumulate(board);
            self.fresh = base + 1;
        }
        while self.fresh <= current {
            let ply = self.fresh;
            let (done, rest) = self.accs.split_at_mut(ply - base);
            let after = if ply == current { &self.board } else { &self.stack[ply] };
            net.update(&done[ply - base - 1], &mut rest[0], &self.stack[ply - 1], after);
            self.fresh += 1;
        }
    }

    /// The static evaluation of the current position, from the side to move's view: the tables' evaluation,
    /// corrected by the network (or replaced by it, for a network trained to replace it). Where the drawish-ending
    /// rule could apply (no pawns for a side), the network's training left the position out, so the tables'
    /// evaluation stands alone (with the technique of the pawnless endings won against a bare king or a rook,
    /// [`eval::mop_up`]).
    pub fn static_eval(&self) -> i32 {
        let hand = || eval::evaluate_with(self.tables.0, &self.board) + eval::mop_up(&self.board);
        let Some(net) = self.net else { return hand() };
        if eval::drawish_possible(&self.board) {
            return hand();
        }
        // Outside the search (which brings them up to date first), the hidden values may be left to make.
        let at = self.stack.len().checked_sub(self.acc_base);
        let v = match at.and_then(|i| self.accs.get(i)).filter(|_| self.fresh > self.stack.len()) {
            Some(acc) => net.evaluate_from(acc, &self.board),
            None => net.evaluate(&self.board),
        };
        if net.residual { hand() + v } else { v }
    }

    /// A position from FEN (X-FEN / Shredder castling letters accepted).
    pub fn from_fen(text: &str) -> Result<Chess, NotationError> {
        notation::parse_fen(text).map(|(b, c960)| Chess::from_board(b, c960))
    }

    /// The position as FEN (X-FEN castling letters where `KQkq` would be ambiguous).
    pub fn to_fen(&self) -> String {
        notation::format_fen(&self.board)
    }

    /// The cozy-chess board of the current position.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// Castling is written king-takes-rook (a Chess960 position).
    pub fn is_chess960(&self) -> bool {
        self.chess960
    }

    /// Write castling king-takes-rook from now on, also where the king and rooks stand as in standard chess (a
    /// Chess960 game's start position 518, as a GUI playing Chess960 with `UCI_Chess960` expects it).
    pub fn write_chess960_castling(&mut self) {
        self.chess960 = true;
    }

    /// Every legal move.
    pub fn legal_moves(&self) -> Vec<Move> {
        notation::legal_moves(&self.board)
    }

    /// A legal move in UCI coordinates (`e2e4`, `e7e8q`, `e1g1`).
    pub fn move_to_uci(&self, m: Move) -> String {
        notation::format_uci(&self.board, m, self.chess960)
    }

    /// A legal move in SAN (`Nf3`, `exd5`, `O-O`, `e8=Q+`).
    pub fn move_to_san(&self, m: Move) -> String {
        notation::format_san(&self.board, m)
    }

    /// Read a SAN move only.
    pub fn parse_san(&self, text: &str) -> Result<Move, NotationError> {
        notation::parse_san(&self.board, text)
    }

    /// Static exchange evaluation of a move: the material it wins (negative: loses) if both sides recapture
    /// on its square while it pays.
    pub fn see(&self, m: Move) -> i32 {
        eval::see(&self.board, m.from, m.to, m.promotion)
    }

    /// Whether [`Chess::see`] of `m` is at least `threshold` (sooner than the whole exchange).
    pub fn see_at_least(&self, m: Move, threshold: i32) -> bool {
        eval::see_at_least(&self.board, m.from, m.to, m.promotion, threshold)
    }

    /// Neither side can ever mate, whatever is played.
    pub fn insufficient_material(&self) -> bool {
        let b = &self.board;
        let heavy = b.pieces(Piece::Pawn) | b.pieces(Piece::Rook) | b.pieces(Piece::Queen);
        if !heavy.is_empty() {
            return false;
        }
        let knights = b.pieces(Piece::Knight);
        let bishops = b.pieces(Piece::Bishop);
        if knights.len() + bishops.len() <= 1 {
            return true;
        }
        // Only bishops, all on squares of one colour.
        knights.is_empty() && (bishops.is_subset(BitBoard::DARK_SQUARES) || bishops.is_subset(BitBoard::LIGHT_SQUARES))
    }

    fn is_capture(&self, m: Move) -> bool {
        let b = &self.board;
        b.colors(!b.side_to_move()).has(m.to) || (b.pieces(Piece::Pawn).has(m.from) && m.from.file() != m.to.file())
    }

    /// A pawn's capture onto the empty square behind a pawn that just moved two squares.
    fn is_en_passant(&self, m: Move) -> bool {
        let b = &self.board;
        b.pieces(Piece::Pawn).has(m.from) && m.from.file() != m.to.file() && !b.occupied().has(m.to)
    }

    /// Whether the side to move has a legal move (else the game is mated or stalemated, which ends it at once,
    /// before the 50-move rule, which is a draw to claim: FIDE 5.1.1, 5.2.1, 9.3).
    fn has_move(&self) -> bool {
        self.board.generate_moves(|_| true)
    }
}

/// cozy-chess's hash keys, read once ([`hashing::Keys::new`]); `None` if they could not be read and checked (the
/// search then asks for a child's table line once the move is made, as for any game).
fn hash_keys() -> Option<&'static hashing::Keys> {
    static KEYS: std::sync::OnceLock<Option<hashing::Keys>> = std::sync::OnceLock::new();
    KEYS.get_or_init(hashing::Keys::new).as_ref()
}

/// The network chess evaluates with unless told otherwise, built in (its training is in BENCHMARKS.md).
const NET_FILE: &[u8] = include_bytes!("net.bin");

/// The environment variable naming a network file to evaluate chess with instead of the built-in one (one made by
/// `tune net`, say). Every executable that plays chess reads it when it starts ([`check_network`]) and stops with
/// the reason when the file cannot be used.
pub const NET_ENV: &str = "KIBITZ_CHESS_NET";

/// No network file is this large (one of 256 hidden values is 0.4 MB); a larger one is not read into memory.
const NET_FILE_LIMIT: u64 = 64 << 20;

/// The network chess evaluates with, and what tells its results apart in the cache.
struct Chosen {
    net: net::Network,
    tag: String,
}

/// The network chess evaluates with, read once: the file [`NET_ENV`] names, or the built-in one.
fn chosen_network() -> &'static Result<Chosen, String> {
    static NET: std::sync::OnceLock<Result<Chosen, String>> = std::sync::OnceLock::new();
    NET.get_or_init(|| match std::env::var_os(NET_ENV) {
        Some(path) if !path.is_empty() => {
            let path = std::path::Path::new(&path);
            let (net, digest) = network_file(path).map_err(|e| format!("{NET_ENV}={}: {e}", path.display()))?;
            tracing::info!("chess evaluates with the network of {} ({digest:016x})", path.display());
            Ok(Chosen { net, tag: network_tag_of(digest) })
        }
        _ => {
            let net = shipped_network().map_err(|e| format!("the built-in network: {e}"))?;
            Ok(Chosen { net, tag: network_tag_of(crate::fnv1a64(NET_FILE)) })
        }
    })
}

fn network_tag_of(digest: u64) -> String {
    format!("chess network {digest:016x}")
}

/// The network of a file and a digest of its bytes (64-bit FNV-1a), or why it cannot be used. No more than
/// [`NET_FILE_LIMIT`] bytes are read, whatever the file's size.
fn network_file(path: &std::path::Path) -> Result<(net::Network, u64), String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(NET_FILE_LIMIT + 1).read_to_end(&mut bytes))
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > NET_FILE_LIMIT {
        return Err(format!("more than {NET_FILE_LIMIT} bytes, larger than any network file"));
    }
    Ok((net::Network::from_bytes(&bytes)?, crate::fnv1a64(&bytes)))
}

/// The network chess evaluates with; `None` (the tables evaluate alone) only when it does not load, which
/// [`check_network`] reports at startup (a test checks that the built-in one loads).
fn default_net() -> Option<&'static net::Network> {
    chosen_network().as_ref().ok().map(|c| &c.net)
}

/// Whether chess has its network: the file [`NET_ENV`] names when it is set, else the built-in one; an error
/// names the file and what is wrong with it. Executables that play chess call it before they start.
pub fn check_network() -> Result<(), String> {
    chosen_network().as_ref().map(|_| ()).map_err(Clone::clone)
}

/// The built-in network, or why it does not load.
pub fn shipped_network() -> Result<net::Network, String> {
    net::Network::from_bytes(NET_FILE)
}

/// Copy-make perft over cozy-chess directly, bulk counting at the last ply.
fn perft_board(b: &Board, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut n = 0u64;
    if depth == 1 {
        b.generate_moves(|pm| {
            n += pm.len() as u64;
            false
        });
        return n;
    }
    b.generate_moves(|pm| {
        for m in pm {
            let mut c = b.clone();
            c.play_unchecked(m);
            n += perft_board(&c, depth - 1);
        }
        false
    });
    n
}

const PIECE_ORDER: [i32; 6] = [1, 3, 3, 5, 9, 20];

/// A quiet move's order bonus for moving each type of piece out of a lesser piece's attack to a square no lesser
/// piece attacks ([`Threats`]); pawns and kings none. On the scale of the history scores (at most 16,384 either
/// way): a queen escaping goes before any move ordered by history alone. (A malus as large for a move into such an
/// attack was tried too and lost what the bonus gained: BENCHMARKS.md.)
const THREAT_ORDER: [i32; 6] = [0, 12_288, 12_288, 16_384, 32_768, 0];

/// What one node's move ordering and pruning ask of its position, made once for the node ([`Game::threats`]).
///
/// Where the side not to move attacks with its pawns, with its minor pieces or pawns, and with its rooks, minor
/// pieces or pawns: the squares where a knight or bishop, a rook, a queen of the side to move stands attacked by a
/// lesser piece, whether or not it is defended (for ordering quiet moves). And what tells, by a lookup a move,
/// whether a move gives check ([`Game::gives_check`]) and whether it can lose material by exchange at all
/// ([`Game::exchange_at_least`]).
#[derive(Clone, Copy)]
pub struct Threats {
    by_pawn: BitBoard,
    by_minor: BitBoard,
    by_rook: BitBoard,
    /// Every square a piece of the side not to move attacks, through the board as it stands.
    by_any: BitBoard,
    /// The pieces of the side to move that stand attacked by a lesser piece (where [`Threats::against`] them).
    endangered: BitBoard,
    /// For each type of piece of the side to move (pawn to king), the squares from which it would attack the
    /// enemy king through the board as it stands.
    checks: [BitBoard; 6],
    /// Every square of `checks`.
    any_check: BitBoard,
    /// The pieces of the side to move that alone stand between one of its sliders and the enemy king: one that
    /// leaves the line between them gives check.
    discoverers: BitBoard,
    /// The enemy king's square.
    king: Square,
}

/// No threats, and every square attacked (so that no exchange is taken as safe): what the trait asks to exist.
/// `gives_check` and `exchange_at_least` answer rightly only from the position's own ([`Game::threats`]).
impl Default for Threats {
    fn default() -> Self {
        let empty = BitBoard::EMPTY;
        Threats {
            by_pawn: empty,
            by_minor: empty,
            by_rook: empty,
            by_any: BitBoard::FULL,
            endangered: empty,
            checks: [empty; 6],
            any_check: empty,
            discoverers: empty,
            king: Square::A1,
        }
    }
}

impl Threats {
    /// The squares where `piece` of the side to move is attacked by a lesser piece (none for pawns and kings).
    fn against(&self, piece: Piece) -> BitBoard {
        match piece {
            Piece::Knight | Piece::Bishop => self.by_pawn,
            Piece::Rook => self.by_minor,
            Piece::Queen => self.by_rook,
            Piece::Pawn | Piece::King => BitBoard::EMPTY,
        }
    }
}

impl Game for Chess {
    type Move = Move;
    type Threats = Threats;

    const NAME: &'static str = "chess";
    const POSITION_FORMATS: &'static [&'static str] = &["fen"];
    const MOVE_FORMATS: &'static [&'static str] = &["uci", "san"];
    const BENCH_POSITIONS: &'static [&'static str] = &[
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
        "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        "2r3k1/pp3pp1/4p2p/3p4/3P4/P3P2P/1P3PP1/3R2K1 w - - 0 1",
        "4r1k1/5pp1/7p/8/8/7P/5PP1/3R2K1 w - - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "8/8/1p2k3/p1p5/P1P2K2/1P6/8/8 w - - 0 1",
    ];
    const BENCH_DEPTH: u32 = 9;
    const DEFAULT_DEPTH: u32 = 10;
    const NULL_MOVE: bool = true;
    const FORWARD_PRUNING: bool = true;
    const SEARCH_REFINEMENTS: bool = true;
    const SINGULAR_EXTENSIONS: bool = true;
    const QUIESCENCE_TABLE: bool = true;
    /// Tuned by SPSA on self-play at 20,000 nodes a move (BENCHMARKS.md, "The search's numbers tuned by SPSA at
    /// 20,000 nodes: landed").
    const SEARCH_TUNING: crate::search::SearchTuning = crate::search::SearchTuning {
        reverse_futility_margin: 76,
        futility_base: 56,
        futility_margin: 101,
        lmp_base: 6,
        see_prune_noisy: 109,
        see_prune_quiet: 33,
        null_move_eval_divisor: 157,
        lmr_base_percent: 37,
        lmr_divisor_percent: 208,
        lmr_history_divisor: 7607,
        singular_margin: 2,
        aspiration_delta: 26,
        history_bonus_scale: 32,
        // BENCHMARKS.md, "Five search changes at 20,000 nodes; the fail-high count landed".
        lmr_cutoffs_more_percent: 100,
        ..crate::search::SearchTuning::DEFAULT
    };
    /// 1 MiB a thread: an evaluation (tables and network) costs thousands of instructions, a probe of this much
    /// memory tens of cycles (BENCHMARKS.md, "The evaluation cache made larger in chess").
    const EVAL_CACHE_ENTRIES: usize = 1 << 17;
    const FORCED_CAPTURES: bool = false;
    const CHECK_EXTENSION: bool = true;
    const TELLS_CHECKS: bool = true;

    fn start() -> Self {
        Chess::from_board(Board::default(), false)
    }

    #[inline]
    fn side_to_move(&self) -> Side {
        match self.board.side_to_move() {
            Color::White => Side::First,
            Color::Black => Side::Second,
        }
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
        self.board.generate_moves(|pm| {
            out.extend(pm);
            false
        });
    }

    fn generate_noisy(&self, out: &mut Vec<Move>) {
        out.clear();
        let b = &self.board;
        let us = b.side_to_move();
        let targets = b.colors(!us);
        // A pawn also takes en passant and promotes; only a pawn's move to the en-passant square is a capture.
        let mut pawn_targets = targets | cozy_chess::Rank::Eighth.relative_to(us).bitboard();
        if let Some(f) = b.en_passant() {
            pawn_targets |= Square::new(f, cozy_chess::Rank::Sixth.relative_to(us)).bitboard();
        }
        let pawns = b.pieces(Piece::Pawn);
        b.generate_moves(|mut pm| {
            let mask = if pawns.has(pm.from) { pawn_targets } else { targets };
            // Castling (king takes own rook) is not noisy: `targets` holds no piece of ours.
            pm.to &= mask;
            for m in pm {
                if m.promotion.is_none() || m.promotion == Some(Piece::Queen) {
                    out.push(m);
                }
            }
            false
        });
    }

    #[inline]
    fn count_moves(&self) -> u64 {
        let mut n = 0u64;
        self.board.generate_moves(|pm| {
            n += pm.len() as u64;
            false
        });
        n
    }

    #[inline]
    fn make(&mut self, m: Move) {
        self.stack.push(self.board.clone());
        self.board.play_unchecked(m);
        self.history.push(repetition_hash(&self.board));
        self.moved();
    }

    #[inline]
    fn unmake(&mut self) {
        if let Some(b) = self.stack.pop() {
            self.board = b;
            self.history.pop();
            self.fresh = self.fresh.min(self.stack.len() + 1);
            if self.stack.len() < self.acc_base {
                // Before the base (a copy taking back its first position's move): this position becomes the
                // base, its values made when next asked.
                self.acc_base = self.stack.len();
                self.fresh = self.acc_base;
                if self.accs.is_empty() && self.net.is_some() {
                    self.accs.push(net::Accumulator::default());
                }
            }
        }
    }

    fn make_null(&mut self) -> bool {
        let b = &self.board;
        let us = b.side_to_move();
        let pieces = b.colors(us) & !(b.pieces(Piece::Pawn) | b.pieces(Piece::King));
        if pieces.is_empty() {
            return false;
        }
        let Some(mut next) = b.null_move() else { return false };
        // A repetition across a null move is not one: the window restarts here.
        next.set_halfmove_clock(0);
        self.stack.push(std::mem::replace(&mut self.board, next));
        self.history.push(repetition_hash(&self.board));
        // The same pieces: bringing the values up to date copies the ones before.
        self.moved();
        true
    }

    #[inline]
    fn hash(&self) -> u64 {
        self.board.hash()
    }

    #[inline]
    fn hash_after(&self, m: Move) -> Option<u64> {
        self.keys?.after(&self.board, m)
    }

    #[inline]
    fn plies(&self) -> usize {
        self.stack.len()
    }

    #[inline]
    fn rule_end(&self, plies_since_root: usize) -> Option<GameEnd> {
        let rev = self.board.halfmove_clock();
        if rev >= 4 && self.history.is_draw(repetition_hash(&self.board), rev as usize, plies_since_root) {
            return Some(GameEnd::draw("threefold repetition"));
        }
        // A position without a move is mate or stalemate whatever the clock: `no_move_end` names it.
        if rev >= FIFTY_MOVE_PLIES && self.has_move() {
            return Some(GameEnd::draw("50-move rule"));
        }
        if self.insufficient_material() {
            return Some(GameEnd::draw("insufficient material"));
        }
        None
    }

    fn no_move_end(&self) -> GameEnd {
        if self.board.checkers().is_empty() {
            GameEnd::draw("stalemate")
        } else {
            GameEnd::win(self.side_to_move().opponent(), "checkmate")
        }
    }

    #[inline]
    fn in_check(&self) -> bool {
        !self.board.checkers().is_empty()
    }

    #[inline]
    fn evaluate(&self) -> i32 {
        self.static_eval()
    }

    #[inline]
    fn evaluate_in_search(&mut self) -> i32 {
        self.refresh();
        self.static_eval()
    }

    /// A digest of the network's bytes, built in or from [`NET_ENV`]: different networks' results never mix (in
    /// one database, or in several servers sharing one; a new built-in network does not answer with its
    /// predecessor's results), while the same bytes share them. `None` only when the network does not load.
    fn evaluation_tag() -> Option<&'static str> {
        chosen_network().as_ref().ok().map(|c| c.tag.as_str())
    }

    #[inline]
    fn is_noisy(&self, m: Move) -> bool {
        m.promotion == Some(Piece::Queen) || self.is_capture(m) && !notation::is_castle(&self.board, m)
    }

    fn noisy_order(&self, m: Move) -> i32 {
        // MVV-LVA, with captures that lose material by static exchange after all the others.
        let b = &self.board;
        let victim = match b.piece_on(m.to) {
            Some(p) if b.color_on(m.to) != Some(b.side_to_move()) => PIECE_ORDER[p as usize],
            _ => i32::from(self.is_capture(m)),
        };
        let attacker = b.piece_on(m.from).map_or(0, |p| PIECE_ORDER[p as usize]);
        let promo = if m.promotion.is_some() { 8 } else { 0 };
        let base = (victim + promo) * 32 - attacker;
        if attacker > victim + promo && !self.see_at_least(m, 0) { base - 10_000 } else { base }
    }

    fn threats(&self) -> Threats {
        let b = &self.board;
        let us = b.side_to_move();
        let them = !us;
        let occupied = b.occupied();
        let mut by_pawn = BitBoard::EMPTY;
        for sq in b.colored_pieces(them, Piece::Pawn) {
            by_pawn |= get_pawn_attacks(sq, them);
        }
        let mut by_minor = by_pawn;
        for sq in b.colored_pieces(them, Piece::Knight) {
            by_minor |= get_knight_moves(sq);
        }
        for sq in b.colored_pieces(them, Piece::Bishop) {
            by_minor |= get_bishop_moves(sq, occupied);
        }
        let mut by_rook = by_minor;
        for sq in b.colored_pieces(them, Piece::Rook) {
            by_rook |= get_rook_moves(sq, occupied);
        }
        let mut by_any = by_rook | get_king_moves(b.king(them));
        for sq in b.colored_pieces(them, Piece::Queen) {
            by_any |= get_bishop_moves(sq, occupied) | get_rook_moves(sq, occupied);
        }
        let king = b.king(them);
        let (diagonal, straight) = (get_bishop_moves(king, occupied), get_rook_moves(king, occupied));
        let checks = [
            get_pawn_attacks(king, them),
            get_knight_moves(king),
            diagonal,
            straight,
            diagonal | straight,
            BitBoard::EMPTY,
        ];
        let queens = b.pieces(Piece::Queen);
        let sliders = b.colors(us)
            & (get_bishop_rays(king) & (b.pieces(Piece::Bishop) | queens)
                | get_rook_rays(king) & (b.pieces(Piece::Rook) | queens));
        let mut discoverers = BitBoard::EMPTY;
        for slider in sliders {
            let between = get_between_rays(slider, king) & occupied;
            if between.len() == 1 && between.is_subset(b.colors(us)) {
                discoverers |= between;
            }
        }
        let ours = |piece: Piece| b.colored_pieces(us, piece);
        let endangered = (ours(Piece::Knight) | ours(Piece::Bishop)) & by_pawn
            | ours(Piece::Rook) & by_minor
            | ours(Piece::Queen) & by_rook;
        let any_check = checks[0] | checks[1] | checks[4];
        Threats { by_pawn, by_minor, by_rook, by_any, endangered, checks, any_check, discoverers, king }
    }

    #[inline]
    fn threat_order(&self, m: Move, threats: &Threats) -> i32 {
        if !threats.endangered.has(m.from) {
            return 0;
        }
        let Some(piece) = self.board.piece_on(m.from) else { return 0 };
        let attacked = threats.against(piece);
        if attacked.has(m.from) && !attacked.has(m.to) { THREAT_ORDER[piece as usize] } else { 0 }
    }

    fn skip_in_quiescence(&self, m: Move, hint: i32) -> bool {
        // `noisy_order` marks a capture losing by static exchange with a negative hint (never a promotion).
        m.promotion.is_none() && hint < 0
    }

    /// A move whose square no enemy piece attacks, even through the square it leaves, loses nothing by
    /// exchange (an en passant capture, which empties a third square, is left to the whole exchange).
    fn exchange_at_least(&self, m: Move, threshold: i32, threats: &Threats) -> bool {
        let unattacked = !threats.by_any.has(m.to) && !threats.by_any.has(m.from);
        if threshold <= 0 && unattacked && !self.is_en_passant(m) {
            return true;
        }
        self.see_at_least(m, threshold)
    }

    /// The attacks on the enemy king with the moved piece on its new square: direct and discovered checks,
    /// promotions included. Castling and en passant (a second piece moves or leaves) are left to make. A direct
    /// check is a lookup in `threats` (the moved piece attacks the king from its new square through the board
    /// as it stood: the square it left cannot have been in the way, or it attacked the king before), and so is
    /// a discovered one (a lone piece between a slider and the king leaves the line); a promotion, whose new
    /// piece may attack through the square the pawn left, is worked out on the board after it.
    fn gives_check(&self, m: Move, threats: &Threats) -> Option<bool> {
        let b = &self.board;
        let us = b.side_to_move();
        if b.colors(us).has(m.to) || self.is_en_passant(m) {
            return None;
        }
        let discovered =
            threats.discoverers.has(m.from) && !get_line_rays(m.from, threats.king).has(m.to);
        let Some(moved) = m.promotion else {
            // Most moves land where no piece of any type would check: the moved piece's type is not needed.
            if discovered || !threats.any_check.has(m.to) {
                return Some(discovered);
            }
            return Some(threats.checks[b.piece_on(m.from)? as usize].has(m.to));
        };
        let king = threats.king;
        let occupied = (b.occupied() & !m.from.bitboard()) | m.to.bitboard();
        let direct = match moved {
            Piece::Knight => get_knight_moves(king).has(m.to),
            Piece::Bishop => get_bishop_moves(king, occupied).has(m.to),
            Piece::Rook => get_rook_moves(king, occupied).has(m.to),
            _ => (get_bishop_moves(king, occupied) | get_rook_moves(king, occupied)).has(m.to),
        };
        Some(direct || discovered)
    }

    #[inline]
    fn move_key(m: Move) -> u32 {
        let promo = m.promotion.map_or(0, |p| p as u32 + 1);
        m.from as u32 | (m.to as u32) << 6 | promo << 12
    }

    fn parse_position(text: &str, format: Option<&str>) -> Result<Self, NotationError> {
        match format {
            None | Some("fen") => Chess::from_fen(text),
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
        // Placement, side, castling and en passant: the move counters do not change the analysis. An en passant
        // square no pawn can take on is left out, as python-chess and lichess write FENs (found by an audit: the
        // position after 1. e4 kept `e3`, and a lookup by their FEN missed it).
        let fen = self.to_fen();
        let mut fields: Vec<&str> = fen.split(' ').take(4).collect();
        if fields.len() == 4 && fields[3] != "-" && !en_passant_legal(&self.board) {
            fields[3] = "-";
        }
        fields.join(" ")
    }

    fn rule_state_key(&self) -> String {
        // The 50-move count and the positions a repetition could return to.
        let rev = self.board.halfmove_clock();
        let counts = [(u32::from(rev), u32::from(FIFTY_MOVE_PLIES))];
        crate::game::rule_state_text(&counts, self.history.window_digest(rev as usize, &[]))
    }

    fn parse_move(&self, text: &str) -> Result<Move, NotationError> {
        notation::parse_move(&self.board, text)
    }

    fn draw(&self, view: &crate::picture::View) -> crate::picture::Scene {
        picture::draw(self, view)
    }

    fn move_squares(&self, m: Move) -> Vec<String> {
        picture::move_squares(&self.move_to_uci(m))
    }

    fn format_move(&self, m: Move) -> String {
        self.move_to_uci(m)
    }

    fn format_move_as(&self, m: Move, format: &str) -> Result<String, NotationError> {
        match format {
            "uci" => Ok(self.move_to_uci(m)),
            "san" => Ok(self.move_to_san(m)),
            _ => Err(NotationError::new(format, "unknown move format (known: uci, san)")),
        }
    }

    const RECORD_FORMATS: &'static [&'static str] = &["pgn"];
    const EXPORT_FORMAT: Option<&'static str> = Some("pgn");

    fn parse_records(text: &str, format: Option<&str>, budget: &mut RecordBudget) -> Result<Records<Self>, ReadError> {
        record::parse(text, format, budget)
    }

    fn export_record(record: &GameRecord<Self>, notes: &[PlyNote<Move>]) -> Option<String> {
        Some(record::export(record, notes))
    }

    fn perft(&mut self, depth: u32) -> u64 {
        perft_board(&self.board, depth)
    }
}

#[cfg(test)]
mod tests;
