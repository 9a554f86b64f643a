//! The Game trait and the small types every game, the search and the front ends share.
//!
//! The one search in `search/` is generic over [`Game`] and monomorphised per game, so nothing here is
//! dynamically dispatched in the hot loop. The trait is shaped for all five games as they really are:
//!
//! * moves are a small `Copy` value of the game's own type (a checkers jump with its captured set, a Hive
//!   placement or a pass, a xiangqi or chess move); the search never looks inside one, it only asks the game
//!   for a compact [`Game::move_key`] to store in the transposition table and to index its history;
//! * `make`/`unmake` keep an internal history, so undo in every protocol is cheap and repetition detection
//!   sees the whole game;
//! * the end of a game is split in two: [`Game::rule_end`] is what the rules decide without generating moves
//!   (repetition, move-count draws, a surrounded Queen), [`Game::no_move_end`] what it means to have no legal
//!   move (a loss in checkers, draughts and xiangqi; mate or stalemate in chess; Hive passes instead);
//! * evaluation is in centi-units from the side to move's point of view, one man / pawn / soldier = 100.

use std::fmt::Debug;

/// The two sides. `First` is the side that moves first in the game's start position (Black in English
/// checkers, White in draughts, Hive and chess, Red in xiangqi); each game names its sides.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Side {
    First,
    Second,
}

impl Side {
    #[inline]
    pub fn opponent(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// How a game ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    Win(Side),
    Draw,
}

/// A finished game: its outcome and the rule that decided it, in a few words ("no legal move",
/// "threefold repetition", "40-move rule", ...).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct GameEnd {
    pub outcome: Outcome,
    pub reason: &'static str,
}

impl GameEnd {
    pub fn draw(reason: &'static str) -> Self {
        GameEnd { outcome: Outcome::Draw, reason }
    }

    pub fn win(side: Side, reason: &'static str) -> Self {
        GameEnd { outcome: Outcome::Win(side), reason }
    }
}

/// A score as the front ends report it, from the side to move's point of view.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Score {
    /// Centi-units: one man / pawn / soldier = 100.
    Cp(i32),
    /// Distance to the end of the game in plies: positive when the side to move wins, negative when it loses.
    Mate(i32),
}

/// A position or move text that could not be read, naming the offending token.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("{}: `{token}`", message.trim_end_matches('.'))]
pub struct NotationError {
    /// The bad token, as it appeared in the input (shortened when very long).
    pub token: String,
    /// What was wrong with it.
    pub message: String,
}

impl NotationError {
    pub fn new(token: impl AsRef<str>, message: impl Into<String>) -> Self {
        let token = token.as_ref();
        let token = if token.chars().count() > 80 {
            let mut short: String = token.chars().take(77).collect();
            short.push_str("...");
            short
        } else {
            token.to_string()
        };
        NotationError { token, message: message.into() }
    }
}

/// One game read from a game record: its tags, where it starts, the moves played, the result.
#[derive(Clone, Debug)]
pub struct GameRecord<G: Game> {
    /// Header tags in their order (`Event`, `White`, `FEN`...); empty for formats without tags.
    pub tags: Vec<(String, String)>,
    /// The position before the first move.
    pub start: G,
    /// The moves, each legal in the position the previous ones lead to.
    pub moves: Vec<G::Move>,
    /// The result as the record wrote it (`1-0`, `2-0`, `1/2-1/2`, `*`...), if it did.
    pub result: Option<String>,
    /// The 1-based line of the text where this game begins.
    pub line: usize,
    /// What the record's author wrote besides the moves (comments, NAGs, variations): kept for annotated
    /// exports, which write it beside their own notes.
    pub remarks: Remarks,
}

/// What a record's author wrote besides the moves of its main line (PGN-family records): the comment before the
/// first move, and for each move its annotation glyphs, the comment after it and the variations that stand
/// beside it. Empty for records without any, and for formats that have none.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Remarks {
    /// The comment before the first move (a game's introduction), whitespace collapsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// By move, from the first; it ends at the last move that has a remark.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moves: Vec<MoveRemarks>,
}

impl Remarks {
    pub fn is_empty(&self) -> bool {
        self.before.is_none() && self.moves.is_empty()
    }

    /// The remarks of move `k` (0-based), if it has any.
    pub fn of_move(&self, k: usize) -> Option<&MoveRemarks> {
        self.moves.get(k)
    }
}

/// What a record's author wrote about one move of its main line.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MoveRemarks {
    /// Numeric annotation glyphs, as `$n` or as the move's suffix (`!` is 1, `?` 2, `!!` 3, `??` 4, `!?` 5,
    /// `?!` 6), in their order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nags: Vec<u8>,
    /// The comments after the move (joined by a space, whitespace collapsed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The variations standing beside the move (each an alternative to it), as movetext with their parentheses,
    /// moves, numbers, NAGs, comments and nested variations as written; not checked against the rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variations: Vec<String>,
}

impl MoveRemarks {
    pub fn is_empty(&self) -> bool {
        self.nags.is_empty() && self.comment.is_none() && self.variations.is_empty()
    }
}

/// A game of a collection that could not be read: which one, where, and the offending token.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("game {} (line {line}): {message}: `{token}`", index + 1)]
pub struct RecordError {
    /// 0-based index of the game in the collection.
    pub index: usize,
    /// 1-based line of the offending token.
    pub line: usize,
    pub token: String,
    pub message: String,
}

/// `text` without the byte-order mark some editors put before a UTF-8 file's first line (read as part of the first
/// token, it made the first move or tag unreadable). For texts of game records, before they are read.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// A file of game records as text: UTF-8 when it is, else Windows-1252 (Latin-1 with the printable characters
/// Windows puts at 0x80-0x9F), which is what older PGN and PDN collections are written in (ChessBase's and
/// many databases' exports: `Réti`, `Ljubojević`, as bytes). The second value is where the text stopped being
/// UTF-8 when it was read as Windows-1252 instead, for the reader's warning.
pub fn decode_records(bytes: Vec<u8>) -> (String, Option<usize>) {
    match String::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            (e.into_bytes().iter().map(|&b| windows_1252(b)).collect(), Some(at))
        }
    }
}

/// One byte of Windows-1252 as a character (the five bytes it leaves undefined as the C1 controls Latin-1
/// reads them as).
fn windows_1252(byte: u8) -> char {
    const HIGH: [char; 32] = [
        '\u{20ac}', '\u{81}', '\u{201a}', '\u{192}', '\u{201e}', '\u{2026}', '\u{2020}', '\u{2021}', '\u{2c6}',
        '\u{2030}', '\u{160}', '\u{2039}', '\u{152}', '\u{8d}', '\u{17d}', '\u{8f}', '\u{90}', '\u{2018}', '\u{2019}',
        '\u{201c}', '\u{201d}', '\u{2022}', '\u{2013}', '\u{2014}', '\u{2dc}', '\u{2122}', '\u{161}', '\u{203a}',
        '\u{153}', '\u{9d}', '\u{17e}', '\u{178}',
    ];
    match byte {
        0x80..=0x9f => HIGH[usize::from(byte - 0x80)],
        _ => char::from(byte),
    }
}

/// How much one reading of game records may hold: the games read (those that cannot be read included) and
/// the positions of the games read (a game of `n` moves has `n + 1`). Reading counts as it goes and stops at
/// the first game over either limit, before the rest of the text is read; one budget may be spent over
/// several texts (a submission of many).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RecordBudget {
    max_games: usize,
    max_positions: u64,
    games: usize,
    positions: u64,
}

impl RecordBudget {
    /// A budget of at most `max_games` games and `max_positions` positions.
    pub const fn new(max_games: usize, max_positions: u64) -> Self {
        RecordBudget { max_games, max_positions, games: 0, positions: 0 }
    }

    pub fn max_games(&self) -> usize {
        self.max_games
    }

    pub fn max_positions(&self) -> u64 {
        self.max_positions
    }

    /// Games counted so far.
    pub fn games(&self) -> usize {
        self.games
    }

    /// Positions counted so far.
    pub fn positions(&self) -> u64 {
        self.positions
    }

    /// Positions that may still be read.
    pub fn positions_left(&self) -> u64 {
        self.max_positions.saturating_sub(self.positions)
    }

    /// Count a game about to be read, beginning at `line`: an error when it is one game too many.
    pub fn game(&mut self, line: usize) -> Result<(), BudgetError> {
        if self.games >= self.max_games {
            return Err(BudgetError::TooManyGames { max: self.max_games, game: self.games + 1, line });
        }
        self.games += 1;
        Ok(())
    }

    /// Whether `positions` more positions, of the game last counted (beginning at `line`), are within the
    /// budget; nothing is counted.
    pub fn room_for(&self, positions: u64, line: usize) -> Result<(), BudgetError> {
        if positions > self.positions_left() {
            return Err(BudgetError::TooManyPositions { max: self.max_positions, game: self.games.max(1), line });
        }
        Ok(())
    }

    /// Count the positions of the game last counted, as it was read: none when it could not be read.
    pub fn read<G: Game>(&mut self, record: &Result<GameRecord<G>, RecordError>) -> Result<(), BudgetError> {
        if let Ok(r) = record {
            let positions = r.moves.len() as u64 + 1;
            self.room_for(positions, r.line)?;
            self.positions += positions;
        }
        Ok(())
    }
}

/// A text of game records that holds more than its reader's [`RecordBudget`]: which limit, and where reading
/// stopped (the game over the limit, 1-based over everything the budget counted, and its line in its text).
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum BudgetError {
    #[error("more than {max} games: reading stopped at game {game} (line {line}); at most {max} are read at once")]
    TooManyGames { max: usize, game: usize, line: usize },
    #[error("more than {max} positions: reading stopped at game {game} (line {line}); at most {max} are read at once")]
    TooManyPositions { max: u64, game: usize, line: usize },
}

/// Why a text of game records was not read at all: an unknown format, or more than the reader's budget.
/// (Each game of a collection that was read fails or succeeds on its own, as a [`RecordError`].)
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Notation(#[from] NotationError),
    #[error(transparent)]
    Budget(#[from] BudgetError),
}

/// What [`Game::parse_records`] reads: each game of the text, read or not.
pub type Records<G> = Vec<Result<GameRecord<G>, RecordError>>;

/// Gather the games of a text under `budget`. `games` gives, for each game, its first line, the number of moves
/// written in it (known before its moves are played) and a way to read it. Each game is counted before it is
/// read (and refused when its moves alone are more than the positions left), its positions as soon as it is
/// read; the first game over the budget stops the reading, and the games after it are never read.
pub fn gather_records<G: Game, R: FnOnce() -> Result<GameRecord<G>, RecordError>>(
    games: impl IntoIterator<Item = (usize, u64, R)>,
    budget: &mut RecordBudget,
) -> Result<Records<G>, BudgetError> {
    let mut out = Vec::new();
    for (line, written, read) in games {
        budget.game(line)?;
        budget.room_for(written, line)?;
        let record = read();
        budget.read(&record)?;
        out.push(record);
    }
    Ok(out)
}

/// The check every game's record formats pass: reading stops at the first game over the budget, naming the
/// limit, however the rest of the text looks.
#[cfg(test)]
pub(crate) mod budget_check {
    use super::*;

    /// Ten games in `format`, each `good` (one game of `moves` moves, ending in a newline) but the fifth, `bad`
    /// (one game that cannot be read), joined by `sep`.
    pub fn check<G: Game + Debug>(format: &str, good: &str, bad: &str, moves: usize, sep: &str) {
        let games: Vec<&str> = (0..10).map(|i| if i == 4 { bad } else { good }).collect();
        let text = games.join(sep);
        // The 1-based line each game begins on.
        let mut lines = Vec::new();
        let mut line = 1;
        for g in &games {
            lines.push(line);
            line += g.matches('\n').count() + sep.matches('\n').count();
        }
        let read = |budget: RecordBudget| G::parse_records(&text, Some(format), &mut { budget });

        let all = read(RecordBudget::new(10, 1_000)).unwrap_or_else(|e| panic!("{}: {e}", G::NAME));
        assert_eq!(all.len(), 10, "{}", G::NAME);
        for (i, r) in all.iter().enumerate() {
            match r {
                Ok(r) => {
                    assert_ne!(i, 4, "{}: the bad game read", G::NAME);
                    assert_eq!((r.moves.len(), r.line), (moves, lines[i]), "{}: game {}", G::NAME, i + 1);
                }
                Err(e) => assert_eq!(i, 4, "{}: game {} did not read: {e}", G::NAME, i + 1),
            }
        }
        // Exactly the budget: read.
        assert!(read(RecordBudget::new(10, 9 * (moves as u64 + 1))).is_ok(), "{}", G::NAME);

        // Three games: reading stops at the fourth, before the bad fifth, and says so.
        let e = read(RecordBudget::new(3, 1_000)).expect_err("over budget");
        assert_eq!(e, ReadError::Budget(BudgetError::TooManyGames { max: 3, game: 4, line: lines[3] }), "{}", G::NAME);
        assert!(e.to_string().starts_with("more than 3 games: reading stopped at game 4"), "{e}");

        // Room for two games and a position less than the third: reading stops at the third.
        let max = 3 * (moves as u64 + 1) - 1;
        let e = read(RecordBudget::new(10, max)).expect_err("over budget");
        assert_eq!(e, ReadError::Budget(BudgetError::TooManyPositions { max, game: 3, line: lines[2] }), "{}", G::NAME);
        assert!(e.to_string().starts_with(&format!("more than {max} positions")), "{e}");

        // One budget over two texts: the second is read only as far as what the first left.
        let mut budget = RecordBudget::new(13, 1_000);
        assert_eq!(G::parse_records(&text, Some(format), &mut budget).map(|r| r.len()), Ok(10), "{}", G::NAME);
        let e = G::parse_records(&text, Some(format), &mut budget).expect_err("over budget");
        assert_eq!(
            e,
            ReadError::Budget(BudgetError::TooManyGames { max: 13, game: 14, line: lines[3] }),
            "{}",
            G::NAME
        );
    }
}

/// What an annotated export writes about one move: a comment, a NAG, a better line after it, and what the record
/// itself said about it.
#[derive(Clone, Debug)]
pub struct PlyNote<M> {
    /// Comment text without braces, e.g. `[%eval 0.48] Mistake. Nf3 was best.`.
    pub comment: Option<String>,
    /// Numeric annotation glyph: 1 `!`, 2 `?`, 4 `??`, 6 `?!`.
    pub nag: Option<u8>,
    /// A better line, starting from the position before this move (empty: none).
    pub variation: Vec<M>,
    /// A comment written before the move (the record's comment before its first move).
    pub before: Option<String>,
    /// The record's own glyphs for this move, written after [`PlyNote::nag`].
    pub record_nags: Vec<u8>,
    /// The record's own variations beside this move (movetext as [`MoveRemarks::variations`]), written after
    /// the better line.
    pub record_variations: Vec<String>,
}

impl<M> PlyNote<M> {
    /// A note of nothing.
    pub fn empty() -> Self {
        PlyNote {
            comment: None,
            nag: None,
            variation: Vec::new(),
            before: None,
            record_nags: Vec::new(),
            record_variations: Vec::new(),
        }
    }
}

/// The rules of one game, as the search and the front ends need them.
pub trait Game: Clone + Send + Sync + 'static {
    /// A move in the game's own compact representation.
    type Move: Copy + Eq + Debug + Send + Sync + 'static;
    /// What [`Game::threats`] finds in a position for ordering its quiet moves ([`Game::threat_order`]); `()` in a
    /// game that orders them by history alone.
    type Threats: Copy + Default;

    /// The name the registry and the API know the game by (`checkers`, `draughts`, ...).
    const NAME: &'static str;

    /// Position formats [`Game::parse_position`] and [`Game::format_position`] understand; the first is the
    /// game's main format.
    const POSITION_FORMATS: &'static [&'static str];
    /// Move formats [`Game::format_move_as`] understands; the first is the game's main notation.
    const MOVE_FORMATS: &'static [&'static str];
    /// Positions `kibitz bench` searches (in the main position format): openings, middlegames, endgames.
    const BENCH_POSITIONS: &'static [&'static str];
    /// The depth `kibitz bench` searches them to.
    const BENCH_DEPTH: u32;
    /// The depth an analysis searches when the request sets no limit (about a second on one core).
    const DEFAULT_DEPTH: u32;
    /// The side the API calls White when a client asks for scores from White's point of view (`white_pov`):
    /// White in most games, Red in xiangqi.
    const WHITE_SIDE: Side = Side::First;

    // ---- per-game search switches ----

    /// Null-move pruning is sound (false where zugzwang is common: draughts, checkers, Hive).
    const NULL_MOVE: bool;
    /// Late-move reductions of quiet moves.
    const LMR: bool = true;
    /// Forward pruning near the leaves, which trusts the static evaluation to within a margin and assumes
    /// that a move usually helps the side that plays it: a node whose evaluation is far above beta returns it
    /// (reverse futility), and quiet moves that cannot lift a hopeless evaluation to alpha, or that come late in
    /// the order, are not searched (futility, late-move pruning). Sound where zugzwang is rare and the
    /// evaluation steady (chess, xiangqi), not where waiting moves and forced captures decide (the
    /// draughts family, Hive).
    const FORWARD_PRUNING: bool = false;
    /// Refinements of the search (chess; draughts, which has no forward pruning or static exchange, for the
    /// rest; measured neutral in xiangqi, so off there): the reductions depend on whether the evaluation rose
    /// since the side's previous move ("improving"), and quiet moves are reduced less or more by their history;
    /// the counter move (the last refutation of the opponent's move) is tried after the killers and reduced
    /// less; a node without a move from the table is searched one ply shallower (internal iterative
    /// reduction). Where the game has them, also: moves that lose material by static exchange are not searched
    /// near the leaves and losing captures come after the quiet moves ([`Game::exchange_at_least`],
    /// [`Game::noisy_order`]); the forward pruning's margins depend on "improving" ([`Game::FORWARD_PRUNING`]);
    /// the null move's reduction grows with the evaluation's lead ([`Game::NULL_MOVE`]).
    const SEARCH_REFINEMENTS: bool = false;
    /// Singular extensions (chess): where the table's entry says one move is best by a margin, the other moves
    /// are searched to half the depth against that margin; if none reaches it the move is searched a ply deeper,
    /// if the others reach it and that margin's bound is itself at or above beta the node fails high outside PV
    /// nodes (multi-cut), and if the table's score alone is at or above beta the move is searched a ply shallower
    /// (`search/params.rs`, `SINGULAR_*`). Measured without gain in draughts (BENCHMARKS.md, "Search refinements
    /// in chess").
    const SINGULAR_EXTENSIONS: bool = false;
    /// The numbers the search prunes, reduces and extends this game's positions by (`search/params.rs`); a
    /// game tuned by self-play (`tune spsa`) gives its own.
    const SEARCH_TUNING: crate::search::SearchTuning = crate::search::SearchTuning::DEFAULT;
    /// Captures are compulsory: quiescence never stands pat while the side to move has a capture, it
    /// searches all of them (checkers, draughts).
    const FORCED_CAPTURES: bool;
    /// Extend the search by one ply when the side to move is in check (chess, xiangqi).
    const CHECK_EXTENSION: bool = false;
    /// Most entries (a power of two, 8 bytes each) of each search thread's cache of static evaluations: a search
    /// limited to fewer nodes gets fewer (`search/params.rs`, `eval_cache_entries`). Larger pays where an
    /// evaluation costs far more than a memory access (chess's tables and network); 16,384 keep the cache in
    /// the nearest memory where the evaluation is cheap.
    const EVAL_CACHE_ENTRIES: usize = 1 << 14;
    /// Deepest the search may go (plies); also the size of its per-ply stacks.
    const MAX_PLY: usize = 128;
    /// Plies quiescence may search beyond the horizon before it stands pat whatever the position (where
    /// noisy moves need not run out: in Hive a piece can keep arriving next to a Queen). Captures that must
    /// be played ([`Game::FORCED_CAPTURES`]) and check evasions are searched at any depth.
    const QUIESCENCE_PLIES: usize = 128;
    /// Quiescence reads and writes the transposition table (chess): outside PV windows an entry whose bound
    /// settles the window ends the node, an entry's bound beyond the static evaluation (or an exact score)
    /// replaces it as the standing score, the entry's move is tried first, and each node's result is stored at depth 0 (which
    /// no full-width node takes for a cut). The same table entry also refines the static evaluation that the
    /// full-width nodes prune by.
    const QUIESCENCE_TABLE: bool = false;

    // ---- positions and moves ----

    /// The standard start position.
    fn start() -> Self;

    fn side_to_move(&self) -> Side;

    /// What the game calls a side ("black", "white", "red").
    fn side_name(side: Side) -> &'static str;

    /// Every legal move, written into `out` (cleared first). Never empty in a game that passes instead (Hive).
    fn generate_moves(&self, out: &mut Vec<Self::Move>);

    /// The moves quiescence searches: captures (and promotions where they exist). In games with compulsory
    /// captures this is all legal moves when a capture exists and nothing otherwise.
    fn generate_noisy(&self, out: &mut Vec<Self::Move>);

    /// The number of legal moves; games may count faster than they generate (perft's bulk counting).
    fn count_moves(&self) -> u64 {
        let mut moves = Vec::new();
        self.generate_moves(&mut moves);
        moves.len() as u64
    }

    /// Play a legal move (one produced by `generate_moves` for this position).
    fn make(&mut self, m: Self::Move);

    /// Take back the last move made with [`Game::make`] (or the last null move). Does nothing at the start of
    /// the recorded history.
    fn unmake(&mut self);

    /// Pass the turn without moving, for null-move pruning. Returns false (and changes nothing) where the game
    /// does not support it; [`Game::unmake`] takes a null move back.
    fn make_null(&mut self) -> bool {
        false
    }

    /// Zobrist hash of the position (pieces, side to move and whatever else decides the legal moves), kept
    /// incrementally.
    fn hash(&self) -> u64;

    /// Number of moves made since the position was set up (the length of the recorded history).
    fn plies(&self) -> usize;

    /// The end the rules decide without generating moves: repetition, move-count draws, a surrounded Queen.
    /// `plies_since_root` is how many of the recorded moves the search itself made: a position repeated
    /// inside that window is treated as the repetition draw it would become (each game may decide
    /// otherwise, e.g. perpetual check in xiangqi). Called at every search node, so it must be cheap.
    fn rule_end(&self, plies_since_root: usize) -> Option<GameEnd>;

    /// What having no legal move means for the side to move (only called when `generate_moves` is empty).
    fn no_move_end(&self) -> GameEnd;

    /// Turn on the optional rules a match between engines plays by. Hive's threefold repetition draw is
    /// not in the printed rules and off by default, but engines such as nokamute apply it and refuse any move
    /// after the third repetition, so `kibitz match` plays Hive with it (both players then see the same game
    /// end). The other games' rules have no options: nothing changes.
    fn adopt_match_rules(&mut self) {}

    /// The side to move is in check (chess, xiangqi); evasions are searched in quiescence.
    fn in_check(&self) -> bool {
        false
    }

    /// Static evaluation in centi-units from the side to move's point of view. It must be a function of the
    /// position as [`Game::hash`] identifies it: the search caches it by hash.
    fn evaluate(&self) -> i32;

    /// [`Game::evaluate`] for the search, the same value: a game that keeps state for its evaluation along the
    /// moves (chess's network) may bring it up to date here, where the search asks for an evaluation, rather
    /// than at every move.
    fn evaluate_in_search(&mut self) -> i32 {
        self.evaluate()
    }

    /// What the analysis cache adds to kibitz's engine version for this game's results when its evaluation is
    /// data that can change without a rebuild (chess's network, which `KIBITZ_CHESS_NET` can name; the built-in
    /// data is in the version's digest of the sources already): results of different data never mix.
    fn evaluation_tag() -> Option<&'static str> {
        None
    }

    /// The move is a capture or promotion (searched in quiescence, never reduced, never a killer).
    fn is_noisy(&self, m: Self::Move) -> bool;

    /// A hint for ordering noisy moves, larger first (MVV-LVA, number of captured pieces, ...). A negative hint
    /// marks a move expected to lose material (a capture losing by static exchange): the node search tries it
    /// after the quiet moves.
    fn noisy_order(&self, _m: Self::Move) -> i32 {
        0
    }

    /// The threats the side to move's pieces stand under, made once for a node whose moves are ordered
    /// ([`Game::threat_order`]), and whatever else [`Game::gives_check`] and [`Game::exchange_at_least`] answer
    /// that node's moves from. The default finds none.
    fn threats(&self) -> Self::Threats {
        Self::Threats::default()
    }

    /// An adjustment to quiet move `m`'s history order, from `threats` (this position's [`Game::threats`]): larger
    /// for a piece that leaves a square a lesser piece attacks for one no lesser piece attacks. The search also
    /// reduces a late move with a positive adjustment less (`LMR_ESCAPE_LESS_PERCENT`). The default, 0, orders by
    /// history alone.
    fn threat_order(&self, _m: Self::Move, _threats: &Self::Threats) -> i32 {
        0
    }

    /// Quiescence may leave out this noisy move when the side to move is not in check: a capture that loses
    /// material by static exchange, for example. `hint` is the move's [`Game::noisy_order`], already computed
    /// (so that a static exchange it needed is not made twice). The default searches every noisy move.
    fn skip_in_quiescence(&self, _m: Self::Move, _hint: i32) -> bool {
        false
    }

    /// Whether the move's static exchange (what it wins, less what the opponent's recaptures on its square then
    /// win back) is at least `threshold` centi-units: the search leaves out moves that hang material near the
    /// leaves. A quiet move's exchange is 0 or the loss of the piece moved. `threats` is this position's
    /// [`Game::threats`]. The default, `true`, prunes nothing (for games without a static exchange evaluator).
    fn exchange_at_least(&self, _m: Self::Move, _threshold: i32, _threats: &Self::Threats) -> bool {
        true
    }

    /// The [`Game::hash`] legal move `m` would give, where the game can tell without making it (`None` where it
    /// cannot). A hint only: the search asks for the child's transposition table line with it before it makes
    /// the move, and probes with the hash of the position made. The default tells none.
    fn hash_after(&self, _m: Self::Move) -> Option<u64> {
        None
    }

    /// Whether legal move `m` would give check, where the game can tell without making it; `None` where it
    /// cannot (the search then makes the move to see). Only asked when [`Game::CHECK_EXTENSION`] is set, for
    /// quiet moves the search would otherwise prune unless they give check; `threats` is this position's
    /// [`Game::threats`]. The default knows nothing.
    fn gives_check(&self, _m: Self::Move, _threats: &Self::Threats) -> Option<bool> {
        None
    }

    /// Whether [`Game::gives_check`] answers for most moves (not `None`): where it does, a node whose later quiet
    /// moves are all pruned unless they give check takes those it can tell do not out of its list at once.
    const TELLS_CHECKS: bool = false;

    /// A compact key for a move in this position, stored in the transposition table and used to index the
    /// history heuristic. Different legal moves of one position should get different keys; a rare clash only
    /// costs move ordering, never correctness (the search only plays moves it generated).
    fn move_key(m: Self::Move) -> u32;

    // ---- notation ----

    /// Read a position. `format` names one of [`Game::POSITION_FORMATS`]; `None` detects it.
    fn parse_position(text: &str, format: Option<&str>) -> Result<Self, NotationError>;

    /// Write the position in one of [`Game::POSITION_FORMATS`] (`None`: the main format).
    fn format_position(&self, format: Option<&str>) -> Result<String, NotationError>;

    /// The position as the analysis cache knows it: the main format less what does not change the analysis
    /// (move counters), so that one position reached at different move numbers is one cache entry.
    fn position_key(&self) -> String {
        self.format_position(None).unwrap_or_default()
    }

    /// What the draw rules remember beyond [`Game::position_key`] when it could change a search: a counter
    /// toward a draw near its limit, earlier positions a repetition could return to (see [`rule_state_text`]
    /// and [`RepetitionHistory::window_digest`]). The analysis cache keys a result by both, so that no answer
    /// is served where those rules judge otherwise; empty in ordinary play, and for a game whose position
    /// already says it all.
    fn rule_state_key(&self) -> String {
        String::new()
    }

    /// Read a move in any notation the game accepts and check that it is legal here.
    fn parse_move(&self, text: &str) -> Result<Self::Move, NotationError>;

    /// Write a legal move of this position in the game's main notation.
    fn format_move(&self, m: Self::Move) -> String;

    /// Write a legal move of this position in one of [`Game::MOVE_FORMATS`].
    fn format_move_as(&self, m: Self::Move, format: &str) -> Result<String, NotationError> {
        if Self::MOVE_FORMATS.first() == Some(&format) {
            Ok(self.format_move(m))
        } else {
            Err(NotationError::new(format, "unknown move format"))
        }
    }

    // ---- pictures ----

    /// The position as a board picture (squares, pieces, hands), in the game's own geometry; see
    /// [`crate::picture`] for what the picture must contain. Highlights and arrows are added by the caller
    /// through [`Game::move_squares`].
    fn draw(&self, view: &crate::picture::View) -> crate::picture::Scene;

    /// The squares a legal move of this position passes through, by the names [`Game::draw`] gives them: its
    /// start, the landing squares of a multiple capture, its end. A piece placed from hand has only its end; a
    /// pass has none.
    fn move_squares(&self, m: Self::Move) -> Vec<String>;

    // ---- game records (annotation) ----

    /// The whole-game record formats this game reads (`pgn`, `pdn`, `gamestring`...), main format first.
    /// Empty when the game has none yet.
    const RECORD_FORMATS: &'static [&'static str] = &[];

    /// The format [`Game::export_record`] writes (`pgn`, `pdn`), if the game has a native annotated format.
    const EXPORT_FORMAT: Option<&'static str> = None;

    /// Read one game or a collection of games. `format` names one of [`Game::RECORD_FORMATS`]; `None`
    /// detects it. The outer error is for the text as a whole: an unknown format, or more games or positions
    /// than `budget` allows (counted while reading: the reading stops at the first game over it, so a text
    /// over budget is never held whole). Each game of a collection then succeeds or fails on its own, so one
    /// malformed game does not lose the others.
    fn parse_records(text: &str, format: Option<&str>, budget: &mut RecordBudget) -> Result<Records<Self>, ReadError> {
        let _ = (text, budget);
        Err(NotationError::new(format.unwrap_or(Self::NAME), "this game reads no game records yet").into())
    }

    /// Write one annotated game in [`Game::EXPORT_FORMAT`]: `notes` has one entry per move of
    /// `record.moves` (a comment, a NAG, a better line starting from the position before that move).
    /// `None` when the game has no native annotated format (the caller then writes JSON and text).
    fn export_record(record: &GameRecord<Self>, notes: &[PlyNote<Self::Move>]) -> Option<String> {
        let _ = (record, notes);
        None
    }

    // ---- provided ----

    /// The game's end under its full rules, if it is over.
    fn outcome(&self) -> Option<GameEnd> {
        if let Some(end) = self.rule_end(0) {
            return Some(end);
        }
        let mut moves = Vec::new();
        self.generate_moves(&mut moves);
        if moves.is_empty() { Some(self.no_move_end()) } else { None }
    }

    /// Leaf nodes at `depth` plies (bulk-counted at the last ply). Games may override it with something faster.
    fn perft(&mut self, depth: u32) -> u64 {
        perft_generic(self, depth)
    }
}

/// The generic perft: make/unmake over the trait, bulk counting at the last ply.
/// Whether the side to move has a legal move: the count rules (draughts' 25 moves, checkers' 40, xiangqi's 60)
/// give way to the end a position without a move makes. Generates the moves; meant for the rare positions
/// where a count has run out.
pub fn has_move<G: Game>(game: &G) -> bool {
    let mut moves = Vec::new();
    game.generate_moves(&mut moves);
    !moves.is_empty()
}

pub fn perft_generic<G: Game>(game: &mut G, depth: u32) -> u64 {
    fn go<G: Game>(game: &mut G, depth: u32, buffers: &mut [Vec<G::Move>]) -> u64 {
        if depth == 0 {
            return 1;
        }
        if depth == 1 {
            return game.count_moves();
        }
        let (buf, rest) = buffers.split_first_mut().expect("one buffer per ply");
        game.generate_moves(buf);
        let mut nodes = 0;
        for &m in buf.iter() {
            game.make(m);
            nodes += go(game, depth - 1, rest);
            game.unmake();
        }
        nodes
    }
    let mut buffers: Vec<Vec<G::Move>> = (0..depth.max(1)).map(|_| Vec::with_capacity(64)).collect();
    go(game, depth, &mut buffers)
}

/// perft split by the first move: each legal move in the main notation with its leaf count.
pub fn perft_divide<G: Game>(game: &mut G, depth: u32) -> Vec<(String, u64)> {
    let mut moves = Vec::new();
    game.generate_moves(&mut moves);
    moves
        .into_iter()
        .map(|m| {
            let name = game.format_move(m);
            game.make(m);
            let n = if depth <= 1 { 1 } else { game.perft(depth - 1) };
            game.unmake();
            (name, n)
        })
        .collect()
}

/// Zobrist keys for `P` piece kinds on `N` cells, drawn from splitmix64 seeded with `seed`, row by row; rows
/// before `first` stay zero (for piece codes that mean "empty"). A `const fn`, so games build their tables at
/// compile time.
pub const fn zobrist_keys<const P: usize, const N: usize>(seed: u64, first: usize) -> [[u64; N]; P] {
    let mut t = [[0u64; N]; P];
    let mut s = seed;
    let mut p = first;
    while p < P {
        let mut c = 0;
        while c < N {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            t[p][c] = z ^ (z >> 31);
            c += 1;
        }
        p += 1;
    }
    t
}

/// A [`Game::rule_state_key`] from a game's counters toward a draw, each with the count that draws, and its
/// [`RepetitionHistory::window_digest`]. A count under half its limit is left out, so that the positions of
/// ordinary play share their entries: for it to count, a line of the search would have to go on for more than
/// half the limit without a capture (or whatever resets the count), and the answer of a search of that length
/// does not turn on it.
pub fn rule_state_text(counts: &[(u32, u32)], window: Option<u64>) -> String {
    let mut text = String::new();
    for &(count, limit) in counts {
        if limit > 0 && count.saturating_mul(2) >= limit {
            text.push_str(&format!(" r{count}/{limit}"));
        }
    }
    if let Some(digest) = window {
        text.push_str(&format!(" h{digest:016x}"));
    }
    text
}

/// Repetition bookkeeping every game can reuse: the hash of each position reached, and how far back a
/// repetition is possible (the last irreversible move).
#[derive(Clone, Debug, Default)]
pub struct RepetitionHistory {
    hashes: Vec<u64>,
}

impl RepetitionHistory {
    pub fn new() -> Self {
        RepetitionHistory { hashes: Vec::with_capacity(256) }
    }

    /// Record the hash of a position as it is reached.
    #[inline]
    pub fn push(&mut self, hash: u64) {
        self.hashes.push(hash);
    }

    #[inline]
    pub fn pop(&mut self) {
        self.hashes.pop();
    }

    pub fn clear(&mut self) {
        self.hashes.clear();
    }

    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// A digest of what the earlier positions a repetition could return to (those within `reversible` plies
    /// before the current one, the last pushed) can change in a search, with `extra` (a game's further
    /// repetition state); `None` when they can change nothing. Under [`RepetitionHistory::is_draw`] an earlier
    /// position seen once judges every line as it would without it (a line that reaches it a second time is a
    /// repetition inside the search anyway), so they count only when one of them was seen twice; then the
    /// whole window does, in order. Positions alike in placement, counters and this digest judge every
    /// repetition alike ([`Game::rule_state_key`]).
    pub fn window_digest(&self, reversible: usize, extra: &[u8]) -> Option<u64> {
        let n = self.hashes.len();
        if n == 0 {
            return None;
        }
        let back = reversible.min(n - 1);
        let window = &self.hashes[n - 1 - back..n - 1];
        let mut sorted = window.to_vec();
        sorted.sort_unstable();
        if !sorted.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
        let mut bytes = Vec::with_capacity(window.len() * 8 + extra.len());
        for hash in window {
            bytes.extend_from_slice(&hash.to_le_bytes());
        }
        bytes.extend_from_slice(extra);
        Some(crate::fnv1a64(&bytes))
    }

    /// Scan the earlier positions with the same side to move, no further back than `reversible` plies (the
    /// moves since the last irreversible one), for the current position `hash` (the last one pushed).
    /// Returns the number of earlier occurrences and the distance in plies to the nearest one.
    pub fn repetitions(&self, hash: u64, reversible: usize) -> (u32, usize) {
        let n = self.hashes.len();
        if n < 5 {
            return (0, 0);
        }
        let limit = reversible.min(n - 1);
        let mut count = 0;
        let mut nearest = 0;
        let mut back = 4;
        while back <= limit {
            if self.hashes[n - 1 - back] == hash {
                count += 1;
                if nearest == 0 {
                    nearest = back;
                }
            }
            back += 2;
        }
        (count, nearest)
    }

    /// The usual rule: a position seen before inside the search (within `plies_since_root`) or twice before in
    /// the game (threefold repetition) is a draw.
    pub fn is_draw(&self, hash: u64, reversible: usize, plies_since_root: usize) -> bool {
        let (count, nearest) = self.repetitions(hash, reversible);
        count >= 2 || (count >= 1 && nearest <= plies_since_root)
    }
}

/// Write a sequence of moves played from `game` (a principal variation, a game record), each in the main
/// notation of the position it is played in. Stops at the first move that is not legal where it stands.
pub fn format_line<G: Game>(game: &G, moves: &[G::Move]) -> Vec<String> {
    let mut g = game.clone();
    let mut legal = Vec::new();
    let mut out = Vec::with_capacity(moves.len());
    for &m in moves {
        g.generate_moves(&mut legal);
        if !legal.contains(&m) {
            break;
        }
        out.push(g.format_move(m));
        g.make(m);
    }
    out
}

/// Read moves one after another from `game`, playing each; the error names the move's index (1-based) and
/// its token.
pub fn play_moves<G: Game, S: AsRef<str>>(game: &mut G, moves: &[S]) -> Result<Vec<G::Move>, NotationError> {
    let mut played = Vec::with_capacity(moves.len());
    for (i, text) in moves.iter().enumerate() {
        let text = text.as_ref();
        let m = game
            .parse_move(text)
            .map_err(|e| NotationError { token: e.token, message: format!("move {}: {}", i + 1, e.message) })?;
        game.make(m);
        played.push(m);
    }
    Ok(played)
}
