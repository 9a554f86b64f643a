//! Hive with the Mosquito, Ladybug and Pillbug expansions, exactly as Mzinga plays it: rules, UHP notation,
//! evaluation.
//!
//! White (`Side::First`) places first. The tournament opening rule applies: no Queen Bee on either side's
//! first turn; the Queen must be placed by each side's fourth turn, and nothing moves before its own Queen
//! is placed. Placements touch only friendly top pieces (after the first two); pieces of one bug are placed
//! in order. A side passes only when it has no other move. The game ends when a Queen is surrounded (both
//! at once: a draw). Threefold repetition is not in the printed rules: it is an option, off by default
//! ([`Hive::set_repetition_rule`]).
//!
//! Moves are resolved to (piece, destination) and deduplicated, as Mzinga counts them: a Mosquito copying
//! two bugs to one cell, or a piece that could move or be thrown to one cell, is one move.

mod board;
mod eval;
mod notation;
mod picture;
mod record;
mod tuning;
mod weights;

pub use board::{Board, Bug, GameType, Move, piece_name};
use board::{NO_PIECE, Undo};

use crate::game::{
    Game, GameEnd, NotationError, ReadError, RecordBudget, Records, RepetitionHistory, Side,
};

/// Why a MoveString was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveStringError {
    /// Not a MoveString of this position (bad syntax, unknown piece, a reference not on the board).
    #[error("{0}")]
    Unreadable(NotationError),
    /// A move of this position that the rules forbid; the text is Mzinga's reason.
    #[error("{0}")]
    Invalid(&'static str),
}

/// A Hive game: the position and the moves that led to it.
#[derive(Clone)]
pub struct Hive {
    board: Board,
    undo: Vec<Undo>,
    history: RepetitionHistory,
    repetition: bool,
}

impl std::fmt::Debug for Hive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.game_string())
    }
}

impl Hive {
    /// The start position of a game type (`Hive::new(GameType::BASE)` for UHP's `newgame` without argument).
    pub fn new(game_type: GameType) -> Hive {
        let board = Board::new(game_type);
        let mut history = RepetitionHistory::new();
        history.push(board.hash());
        Hive { board, undo: Vec::with_capacity(256), history, repetition: false }
    }

    /// Read a GameString (`Base+MLP;InProgress;White[3];wS1;bS1 wS1-;...`) or a bare GameTypeString,
    /// replaying the moves with full legality checks. Errors name the move's index, its token and why it is
    /// illegal in Mzinga's words.
    ///
    /// The GameState must be what the moves give. `Draw` where the board says `InProgress` is read as a draw by
    /// threefold repetition when the last position occurred a third time: the game then has that rule on (as
    /// the engine or host that wrote it had), so that it is over and is written back as read.
    pub fn from_game_string(text: &str) -> Result<Hive, NotationError> {
        let parsed = notation::parse_game_string(text)?;
        let mut g = Hive::new(parsed.board.game_type());
        for m in parsed.moves {
            g.make(m);
        }
        if let Some(claimed) = parsed.state {
            let read = notation::state_word(&g.board);
            if !claimed.eq_ignore_ascii_case(read) {
                g.repetition = claimed.eq_ignore_ascii_case("Draw") && read == "InProgress";
                if !g.repetition_draw() {
                    return Err(NotationError::new(claimed, format!("the moves give GameState {read}")));
                }
            }
        }
        Ok(g)
    }

    /// The full GameString: game type, state, turn and every move played.
    pub fn game_string(&self) -> String {
        let text = notation::format_game_string(self.board.game_type(), &self.moves());
        if self.board.result().is_none() && self.repetition_draw() {
            // The board alone says InProgress: the repetition rule ended the game.
            text.replacen(";InProgress;", ";Draw;", 1)
        } else {
            text
        }
    }

    pub fn game_type(&self) -> GameType {
        self.board.game_type()
    }

    /// The GameState word: `NotStarted`, `InProgress`, `Draw`, `WhiteWins` or `BlackWins` (`Draw` also after
    /// a threefold repetition when that rule is on).
    pub fn state_string(&self) -> &'static str {
        if self.board.result().is_none() && self.repetition_draw() { "Draw" } else { notation::state_word(&self.board) }
    }

    /// The game is over: a Queen is surrounded, or (with the rule on) a position occurred a third time.
    pub fn is_over(&self) -> bool {
        self.rule_end(0).is_some()
    }

    fn repetition_draw(&self) -> bool {
        let rev = self.board.reversible() as usize;
        self.repetition && rev >= 4 && self.history.is_draw(self.board.hash(), rev, 0)
    }

    /// The TurnString: `White[1]`, `Black[1]`, `White[2]`, ...
    pub fn turn_string(&self) -> String {
        notation::turn_string(&self.board)
    }

    /// Threefold repetition draws (off by default: it is not in the printed rules).
    pub fn set_repetition_rule(&mut self, on: bool) {
        self.repetition = on;
    }

    pub fn repetition_rule(&self) -> bool {
        self.repetition
    }

    /// Every legal move (a lone pass when nothing else is legal; nothing once the game is over).
    pub fn legal_moves(&self) -> Vec<Move> {
        self.board.legal_moves()
    }

    /// UHP `validmoves`: every legal MoveString, separated by `;` (empty once the game is over).
    pub fn valid_moves_string(&self) -> String {
        let moves = self.legal_moves();
        let names: Vec<String> = moves.iter().map(|&m| notation::format_move(&self.board, m)).collect();
        names.join(";")
    }

    /// A legal move in canonical UHP notation.
    pub fn move_string(&self, m: Move) -> String {
        notation::format_move(&self.board, m)
    }

    /// Read a MoveString and play it. The error's message is Mzinga's reason (for UHP's `invalidmove`).
    pub fn play_move_string(&mut self, text: &str) -> Result<Move, NotationError> {
        let m = notation::parse_move(&self.board, text)?;
        self.make(m);
        Ok(m)
    }

    /// Read a MoveString and play it, telling a text that is no move here ([`MoveStringError::Unreadable`])
    /// from a move the rules forbid ([`MoveStringError::Invalid`], with Mzinga's reason). A finished game
    /// (including a repetition draw) accepts no move.
    pub fn play_checked(&mut self, text: &str) -> Result<Move, MoveStringError> {
        if self.board.result().is_none() && self.repetition_draw() {
            let pass = text.trim().eq_ignore_ascii_case("pass");
            return Err(MoveStringError::Invalid(if pass {
                "You can't pass, the game is over."
            } else {
                "You can't play, the game is over."
            }));
        }
        match notation::parse_move(&self.board, text) {
            Ok(m) => {
                self.make(m);
                Ok(m)
            }
            Err(e) => match notation::ILLEGAL_REASONS.iter().find(|r| **r == e.message) {
                Some(reason) => Err(MoveStringError::Invalid(reason)),
                None => Err(MoveStringError::Unreadable(e)),
            },
        }
    }

    /// The moves played so far.
    pub fn moves(&self) -> Vec<Move> {
        self.undo.iter().map(|u| u.mv).collect()
    }

    /// The piece the last move moved (placements included; none after a pass or at the start). It may not
    /// move, be thrown or use its power this turn.
    pub fn last_moved_piece(&self) -> Option<String> {
        let p = self.board.last_moved();
        (p != NO_PIECE).then(|| piece_name(p))
    }

    /// Take back up to `n` moves; returns how many were taken back.
    pub fn undo_moves(&mut self, n: usize) -> usize {
        let k = n.min(self.undo.len());
        for _ in 0..k {
            self.unmake();
        }
        k
    }

    /// The board (for evaluation and tests).
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// A game starting from a board built by hand (tests).
    #[cfg(test)]
    pub(crate) fn from_board(board: Board) -> Hive {
        let mut history = RepetitionHistory::new();
        history.push(board.hash());
        Hive { board, undo: Vec::new(), history, repetition: false }
    }

    /// The reason Mzinga gives for a move that is not legal here.
    pub fn illegal_reason(&self, m: Move) -> &'static str {
        notation::illegal_reason(&self.board, m)
    }
}

fn side_of(color: usize) -> Side {
    if color == 0 { Side::First } else { Side::Second }
}

impl Game for Hive {
    type Move = Move;
    type Threats = ();

    const NAME: &'static str = "hive";
    const POSITION_FORMATS: &'static [&'static str] = &["gamestring"];
    const MOVE_FORMATS: &'static [&'static str] = &["movestring"];
    const BENCH_POSITIONS: &'static [&'static str] = &[
        "Base+MLP",
        "Base+MLP;InProgress;White[4];wG1;bP wG1-;wQ \\wG1;bQ bP\\;wA1 /wQ;bA1 bQ\\",
        "Base+MLP;InProgress;White[9];wG1;bG1 wG1\\;wA1 -wG1;bQ /bG1;wQ wG1/;bS1 bG1-;wM \\wA1;bS1 wQ/;wM -bQ;bS2 \\bS1;wA1 bS2/;bM bG1-;wA2 \\wA1;bA1 bG1\\;wA2 bA1\\;bM /bS2",
        "Base+MLP;InProgress;White[13];wG1;bG1 wG1\\;wA1 -wG1;bQ /bG1;wQ wG1/;bS1 bG1-;wM \\wA1;bS1 wQ/;wM -bQ;bS2 \\bS1;wA1 bS2/;bM bG1-;wA2 \\wA1;bA1 bG1\\;wA2 bA1\\;bM /bS2;wA3 -wG1;bL -bS2;wA3 wM\\;bA2 \\bL;wA2 bA1-;bA2 \\wA1;wL /wM;bL bS1\\",
        "Base+MLP;InProgress;White[9];wS1;bP wS1\\;wQ \\wS1;bL bP-;wA1 wS1/;bQ bP\\;wA1 /bQ;bA1 bL/;wA2 wA1\\;bA1 /wA2;wM -wA1;bL wS1/;wM bQ\\;bM -bA1;wB1 wM-;bM \\wQ",
        "Base+MLP;InProgress;White[13];wS1;bP wS1\\;wQ \\wS1;bL bP-;wA1 wS1/;bQ bP\\;wA1 /bQ;bA1 bL/;wA2 wA1\\;bA1 /wA2;wM -wA1;bL wS1/;wM bQ\\;bM -bA1;wB1 wM-;bM \\wQ;wB1 wM/;bA2 \\bM;wG1 wB1\\;bA2 /bM;wB2 -wA1;bA3 -bA1;wA3 wB1/;bA3 \\wA3",
        "Base+MLP;InProgress;White[15];wS1;bP wS1\\;wQ \\wS1;bL bP-;wA1 wS1/;bQ bP\\;wA1 /bQ;bA1 bL/;wA2 wA1\\;bA1 /wA2;wM -wA1;bL wS1/;wM bQ\\;bM -bA1;wB1 wM-;bM \\wQ;wB1 wM/;bA2 \\bM;wG1 wB1\\;bA2 /bM;wB2 -wA1;bA3 -bA1;wA3 wB1/;bA3 \\wA3;wL wA3\\;bB1 bM/;wL /bA3;bQ /wS1",
        "Base;InProgress;White[11];wS1;bS1 wS1/;wQ /wS1;bA1 \\bS1;wA1 -wS1;bQ bS1/;wA1 \\bA1;bA2 bQ/;wA2 -wS1;bA2 \\wA2;wA3 \\wA1;bA3 \\bA2;wA3 -bA3;bG1 bQ/;wQ /wA2;bG1 wA2\\;wQ /bG1;bQ bS1-;wS2 \\wA1;bS2 bQ\\",
    ];
    const BENCH_DEPTH: u32 = 5;
    const DEFAULT_DEPTH: u32 = 6;
    const NULL_MOVE: bool = false;
    const FORCED_CAPTURES: bool = false;
    /// Pieces can keep arriving next to a Queen (and leave again by quiet moves): quiescence looks a few
    /// arrivals deep, not until they run out.
    const QUIESCENCE_PLIES: usize = 4;

    fn start() -> Self {
        Hive::new(GameType::MLP)
    }

    #[inline]
    fn side_to_move(&self) -> Side {
        side_of(self.board.to_move())
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
        self.board.generate(out);
    }

    fn generate_noisy(&self, out: &mut Vec<Move>) {
        out.clear();
        let mut sink = eval::QueenNeighbourMoves::new(&self.board, out);
        if sink.any_target() {
            self.board.generate(&mut sink);
        }
    }

    #[inline]
    fn count_moves(&self) -> u64 {
        self.board.count_moves()
    }

    #[inline]
    fn make(&mut self, m: Move) {
        let u = self.board.make(m);
        self.undo.push(u);
        self.history.push(self.board.hash());
    }

    #[inline]
    fn unmake(&mut self) {
        if let Some(u) = self.undo.pop() {
            self.board.unmake(&u);
            self.history.pop();
        }
    }

    #[inline]
    fn hash(&self) -> u64 {
        self.board.hash()
    }

    #[inline]
    fn plies(&self) -> usize {
        self.undo.len()
    }

    #[inline]
    fn rule_end(&self, plies_since_root: usize) -> Option<GameEnd> {
        match self.board.result() {
            Some(None) => return Some(GameEnd::draw("both queens surrounded")),
            Some(Some(c)) => return Some(GameEnd::win(side_of(c), "queen surrounded")),
            None => {}
        }
        if self.repetition {
            let rev = self.board.reversible() as usize;
            if rev >= 4 && self.history.is_draw(self.board.hash(), rev, plies_since_root) {
                return Some(GameEnd::draw("threefold repetition"));
            }
        }
        None
    }

    fn adopt_match_rules(&mut self) {
        self.set_repetition_rule(true);
    }

    fn no_move_end(&self) -> GameEnd {
        // Only a finished game has no move (a side with nothing else passes).
        self.rule_end(0).unwrap_or(GameEnd::draw("no legal move"))
    }

    #[inline]
    fn evaluate(&self) -> i32 {
        eval::evaluate(&self.board)
    }

    #[inline]
    fn is_noisy(&self, m: Move) -> bool {
        eval::adds_queen_neighbour(&self.board, m)
    }

    #[inline]
    fn move_key(m: Move) -> u32 {
        ((m.piece as u32) << 10 | (m.to as u32 & 1023)) + 1
    }

    const RECORD_FORMATS: &'static [&'static str] = &["gamestring"];

    fn parse_records(text: &str, format: Option<&str>, budget: &mut RecordBudget) -> Result<Records<Self>, ReadError> {
        record::parse(text, format, budget)
    }

    fn parse_position(text: &str, format: Option<&str>) -> Result<Self, NotationError> {
        match format {
            None | Some("gamestring") => Hive::from_game_string(text),
            Some(f) => Err(NotationError::new(f, "unknown position format (known: gamestring)")),
        }
    }

    fn format_position(&self, format: Option<&str>) -> Result<String, NotationError> {
        match format {
            None | Some("gamestring") => Ok(self.game_string()),
            Some(f) => Err(NotationError::new(f, "unknown position format (known: gamestring)")),
        }
    }

    fn parse_move(&self, text: &str) -> Result<Move, NotationError> {
        notation::parse_move(&self.board, text)
    }

    fn draw(&self, view: &crate::picture::View) -> crate::picture::Scene {
        picture::draw(self, view)
    }

    fn move_squares(&self, m: Move) -> Vec<String> {
        picture::move_squares(self, m)
    }

    fn format_move(&self, m: Move) -> String {
        notation::format_move(&self.board, m)
    }

    fn perft(&mut self, depth: u32) -> u64 {
        let mut bufs: Vec<Vec<Move>> = (0..depth.max(1)).map(|_| Vec::with_capacity(128)).collect();
        let mut b = self.board.clone();
        board::perft(&mut b, depth, &mut bufs)
    }
}

#[cfg(test)]
mod tests;
