//! The search's tuning numbers, in one place. Each one is used by exactly the code that the doc comment names;
//! changing one changes the search (and `kibitz bench`'s node counts), so measure before and after. The ones
//! [`SearchTuning`] names are defaults: the search reads them from the tuning it was given.

// --- Stop conditions -------------------------------------------------------------------------------------

/// Nodes between two polls of the stop flags, the clock and the node limit (each thread counts its own).
pub(super) const POLL_INTERVAL: u64 = 256;

// --- Move ordering ---------------------------------------------------------------------------------------

/// Ordering score of the transposition table's move in the node search: always tried first.
pub(super) const ORDER_TT_MOVE: i32 = i32::MAX;
/// Ordering score of a noisy move in the node search, before adding [`Game::noisy_order`]'s hint: above the
/// killers and any history score.
///
/// [`Game::noisy_order`]: crate::game::Game::noisy_order
pub(super) const ORDER_NOISY: i32 = 1_000_000_000;
/// Ordering score of the first (most recent) killer move of a ply.
pub(super) const ORDER_KILLER_1: i32 = 900_000_000;
/// Ordering score of the second killer move of a ply.
pub(super) const ORDER_KILLER_2: i32 = 800_000_000;
/// Ordering score of the counter move: the quiet move that last refuted the opponent's previous move.
pub(super) const ORDER_COUNTER: i32 = 700_000_000;
/// Ordering score of a noisy move whose hint is negative (a capture expected to lose material), before adding
/// the hint: after every quiet move, whose history scores stay within `±HISTORY_MAX` and whose threat adjustments
/// (`Game::threat_order`) are far smaller than this.
pub(super) const ORDER_LOSING_NOISY: i32 = -(1 << 20);
/// Ordering score of a noisy move in quiescence, before adding its hint (quiet moves, only searched there
/// when in check, score 0).
pub(super) const QUIESCENCE_ORDER_NOISY: i32 = 1_000_000;
/// Ordering score in quiescence of the transposition table's move (above every noisy move's).
pub(super) const QUIESCENCE_ORDER_TT: i32 = 2_000_000_000;
/// Initial order of the root moves: the table's move first.
pub(super) const ROOT_ORDER_TT_MOVE: i64 = i64::MAX;
/// Initial order of the root moves: a noisy move's key is this plus its hint, so noisy moves come after the
/// table's move and before the quiet ones (key 0).
pub(super) const ROOT_ORDER_NOISY: i64 = 1 << 32;

// --- Evaluation cache ------------------------------------------------------------------------------------

/// Fewest entries of each search thread's cache of static evaluations (8 bytes each; the most are the game's
/// `Game::EVAL_CACHE_ENTRIES`): a search limited to a few nodes gets four to eight entries a node (at least
/// these), few enough that self-play's short searches do not each clear a large table, enough that their
/// evaluations seldom meet in an entry.
pub(super) const EVAL_CACHE_MIN_ENTRIES: usize = 1 << 10;

/// The number of entries of the evaluation cache of a search limited to `node_limit` nodes (if any), in a game
/// whose searches have at most `max` (a power of two).
pub(super) fn eval_cache_entries(node_limit: Option<u64>, max: usize) -> usize {
    match node_limit {
        Some(n) => usize::try_from(n.saturating_mul(4))
            .unwrap_or(usize::MAX)
            .checked_next_power_of_two()
            .unwrap_or(max)
            .clamp(EVAL_CACHE_MIN_ENTRIES, max.max(EVAL_CACHE_MIN_ENTRIES)),
        None => max,
    }
}

/// Picking the next move to search scans the rest of the list in two passes (the highest order, then where it
/// is) from this many moves on, and in one below.
pub(super) const PICK_PASSES_FROM: usize = 12;

// --- History heuristic -----------------------------------------------------------------------------------

/// Entries per side in the history table (a power of two: a move's key is folded into it).
pub(super) const HISTORY_SIZE: usize = 1 << 14;
/// History scores stay within `±HISTORY_MAX` (the "gravity" update pulls them back towards zero).
pub(super) const HISTORY_MAX: i32 = 1 << 14;
/// History bonus of a quiet move that fails high at `depth`: `HISTORY_BONUS_SCALE * depth * depth`, capped at
/// [`HISTORY_BONUS_MAX`]; the quiet moves tried before it get the same amount as a malus.
pub(super) const HISTORY_BONUS_SCALE: i32 = 32;
/// The largest history bonus (or malus) given at once (at most [`HISTORY_MAX`]).
pub(super) const HISTORY_BONUS_MAX: i32 = HISTORY_MAX / 4;
/// Quiet moves remembered per node for the history malus when a later quiet move fails high.
pub(super) const QUIETS_TRIED_MAX: usize = 32;

// --- Null move pruning -----------------------------------------------------------------------------------

/// Null move pruning is tried from this remaining depth on (and never in PV nodes, in check, or near mates).
pub(super) const NULL_MOVE_MIN_DEPTH: i32 = 3;
/// Depth reduction of the null-move search, in hundredths of a ply: `NULL_MOVE_REDUCTION_PERCENT +
/// NULL_MOVE_DEPTH_PERCENT * depth`, rounded down to whole plies (3 plies and one more for every 4 of depth), on
/// top of the ply the null move itself uses; in games with `Game::SEARCH_REFINEMENTS`, one more ply for each
/// [`NULL_MOVE_EVAL_DIVISOR`] the static evaluation stands above beta, up to [`NULL_MOVE_EVAL_MAX`].
pub(super) const NULL_MOVE_REDUCTION_PERCENT: i32 = 300;
/// See [`NULL_MOVE_REDUCTION_PERCENT`].
pub(super) const NULL_MOVE_DEPTH_PERCENT: i32 = 25;
/// See [`NULL_MOVE_REDUCTION_PERCENT`] (centi-units).
pub(super) const NULL_MOVE_EVAL_DIVISOR: i32 = 200;
/// See [`NULL_MOVE_REDUCTION_PERCENT`].
pub(super) const NULL_MOVE_EVAL_MAX: i32 = 3;

// --- Forward pruning (games with `Game::FORWARD_PRUNING`) ------------------------------------------------

/// Reverse futility pruning: a non-PV node at remaining depth up to this (the default of
/// `SearchTuning::reverse_futility_max_depth`), not in check, whose static evaluation is at least beta plus
/// [`REVERSE_FUTILITY_MARGIN`] per ply of depth (less [`REVERSE_FUTILITY_IMPROVING_PERCENT`] hundredths of a ply when
/// the evaluation is improving, in games with `Game::SEARCH_REFINEMENTS`: higher than at the side's previous move),
/// returns its evaluation.
pub(super) const REVERSE_FUTILITY_MAX_DEPTH: i32 = 6;
/// See [`REVERSE_FUTILITY_MAX_DEPTH`] (centi-units per ply).
pub(super) const REVERSE_FUTILITY_MARGIN: i32 = 90;
/// See [`REVERSE_FUTILITY_MAX_DEPTH`] (hundredths of a ply).
pub(super) const REVERSE_FUTILITY_IMPROVING_PERCENT: i32 = 100;
/// Futility pruning: at remaining depth up to this, in a non-PV node not in check, a quiet move that does not
/// give check is skipped when the static evaluation plus [`FUTILITY_MARGIN`] per ply of depth (plus
/// [`FUTILITY_BASE`]) is still at most alpha.
pub(super) const FUTILITY_MAX_DEPTH: i32 = 4;
/// See [`FUTILITY_MAX_DEPTH`] (centi-units).
pub(super) const FUTILITY_BASE: i32 = 60;
/// See [`FUTILITY_MAX_DEPTH`] (centi-units per ply).
pub(super) const FUTILITY_MARGIN: i32 = 100;
/// Late-move pruning: at remaining depth up to this (the default of `SearchTuning::lmp_max_depth`), in a non-PV node
/// not in check, quiet moves that do not give check are skipped once `LMP_BASE + depth * depth` moves have been
/// searched (with `Game::SEARCH_REFINEMENTS`, [`LMP_NOT_IMPROVING_PERCENT`] of them, rounded down, when the evaluation
/// is not improving).
pub(super) const LMP_MAX_DEPTH: i32 = 4;
/// See [`LMP_MAX_DEPTH`].
pub(super) const LMP_BASE: usize = 4;
/// See [`LMP_MAX_DEPTH`] (percent).
pub(super) const LMP_NOT_IMPROVING_PERCENT: i32 = 50;
/// Static exchange pruning (`Game::SEARCH_REFINEMENTS`): at remaining depth up to this, not in check, once a
/// move has been searched, a move whose static exchange loses more than its margin is skipped
/// (`Game::exchange_at_least`).
pub(super) const SEE_PRUNE_MAX_DEPTH: i32 = 8;
/// See [`SEE_PRUNE_MAX_DEPTH`]: the margin of a noisy move or a check, per ply of depth (centi-units).
pub(super) const SEE_PRUNE_NOISY: i32 = 100;
/// See [`SEE_PRUNE_MAX_DEPTH`]: the margin of a quiet move, per square of the depth (centi-units).
pub(super) const SEE_PRUNE_QUIET: i32 = 30;
/// Internal iterative reduction (`Game::SEARCH_REFINEMENTS`): a node from this remaining depth on without a
/// move from the table is searched one ply shallower (its move ordering is a guess; the next visit finds the
/// table's move).
pub(super) const IIR_MIN_DEPTH: i32 = 4;

// --- Extensions ------------------------------------------------------------------------------------------

/// Singular extensions (`Game::SINGULAR_EXTENSIONS`): from this remaining depth on, a node whose table entry (a
/// lower bound or an exact score, at most [`SINGULAR_TT_DEPTH_SLACK`] plies shallower) names a move searches
/// every other move to half the depth against the table's score less [`SINGULAR_MARGIN`] per ply. If none
/// reaches it, the table's move is extended by a ply; if that bound is at or above beta anyway, the node fails
/// high at once (a multi-cut); if the table's score alone is at or above beta, the table's move is reduced by
/// a ply instead.
pub(super) const SINGULAR_MIN_DEPTH: i32 = 8;
/// See [`SINGULAR_MIN_DEPTH`].
pub(super) const SINGULAR_TT_DEPTH_SLACK: i32 = 3;
/// See [`SINGULAR_MIN_DEPTH`] (centi-units per ply).
pub(super) const SINGULAR_MARGIN: i32 = 2;

/// Checks and single replies are extended by one ply only while the ply is below this many times the
/// iteration's depth (so extensions cannot make a line endless).
pub(super) const EXTENSION_PLY_FACTOR: i32 = 2;

// --- Late-move reductions --------------------------------------------------------------------------------

/// Rows (remaining depth) and columns (move number) of the reduction table; larger values use the last one.
pub(super) const LMR_TABLE_SIZE: usize = 64;
/// Reduction table entry: `LMR_BASE + ln(depth) * ln(move number) / LMR_DIVISOR`, rounded down.
pub(super) const LMR_BASE: f64 = 0.5;
/// See [`LMR_BASE`].
pub(super) const LMR_DIVISOR: f64 = 2.25;
/// Late moves are reduced from this remaining depth on.
pub(super) const LMR_MIN_DEPTH: i32 = 3;
/// Moves before this index (in search order) are never reduced.
pub(super) const LMR_MIN_MOVE_INDEX: usize = 2;
/// Hundredths of a ply taken off the reduction in PV nodes. This and the next two adjustments are summed, and
/// the sum rounded down to whole plies is added to the table's reduction (at 100 each, one ply each).
pub(super) const LMR_PV_LESS_PERCENT: i32 = 100;
/// In games with `Game::SEARCH_REFINEMENTS`: hundredths of a ply added to the reduction where the evaluation is
/// not improving (see [`LMR_PV_LESS_PERCENT`]).
pub(super) const LMR_NOT_IMPROVING_PERCENT: i32 = 100;
/// In games with `Game::SEARCH_REFINEMENTS`: hundredths of a ply taken off the reduction of the counter move
/// (see [`LMR_PV_LESS_PERCENT`]).
pub(super) const LMR_COUNTER_LESS_PERCENT: i32 = 100;
/// In games with `Game::SEARCH_REFINEMENTS`: hundredths of a ply taken off the reduction of a quiet move that
/// takes a piece out of a lesser piece's attack (`Game::threat_order`; see [`LMR_PV_LESS_PERCENT`]).
pub(super) const LMR_ESCAPE_LESS_PERCENT: i32 = 100;
/// In games with `Game::SEARCH_REFINEMENTS`: hundredths of a ply added to the reduction of a late move where more
/// than [`LMR_MANY_CUTOFFS`] fail highs have happened at the child's ply since this node's parent began
/// (the replies here tend to be cut nodes; see [`LMR_PV_LESS_PERCENT`]). The default is 0 (none); chess
/// sets its own (`Game::SEARCH_TUNING`).
pub(super) const LMR_CUTOFFS_MORE_PERCENT: i32 = 0;
/// See [`LMR_CUTOFFS_MORE_PERCENT`].
pub(super) const LMR_MANY_CUTOFFS: u32 = 3;
/// In games with `Game::SEARCH_REFINEMENTS`: a quiet move's reduction shrinks by one ply per this much history
/// score (and grows for a negative one).
pub(super) const LMR_HISTORY_DIVISOR: i32 = 8192;

// --- Iterative deepening and aspiration windows ----------------------------------------------------------

/// Aspiration windows are used from this iteration on (earlier ones search the full window).
pub(super) const ASPIRATION_MIN_DEPTH: u32 = 4;
/// Half-width of the first aspiration window around the previous iteration's score; it doubles after each
/// fail high or low.
pub(super) const ASPIRATION_DELTA: i32 = 30;
/// Once the half-width grows past this, the window opens to the full range.
pub(super) const ASPIRATION_MAX_DELTA: i32 = 1000;
/// With a forced win or loss `n` plies away, iterative deepening stops at depth `2 * n + MATE_STOP_MARGIN`
/// (deeper iterations only repeat it).
pub(super) const MATE_STOP_MARGIN: u32 = 4;

// --- The numbers self-play tuning moves ------------------------------------------------------------------

/// The search's numbers that self-play tuning may move (`tune spsa`, [`crate::tuning::spsa`]), each the
/// constant of this file its field's doc names, which is its default ([`SearchTuning::DEFAULT`]). A game may
/// search with its own ([`Game::SEARCH_TUNING`]) and one search with others ([`SearchOptions::tuning`]).
///
/// [`Game::SEARCH_TUNING`]: crate::game::Game::SEARCH_TUNING
/// [`SearchOptions::tuning`]: crate::search::SearchOptions::tuning
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchTuning {
    /// The default is `REVERSE_FUTILITY_MARGIN`.
    pub reverse_futility_margin: i32,
    /// The default is `FUTILITY_BASE`.
    pub futility_base: i32,
    /// The default is `FUTILITY_MARGIN`.
    pub futility_margin: i32,
    /// The default is `LMP_BASE`.
    pub lmp_base: i32,
    /// The default is `SEE_PRUNE_NOISY`.
    pub see_prune_noisy: i32,
    /// The default is `SEE_PRUNE_QUIET`.
    pub see_prune_quiet: i32,
    /// The default is `NULL_MOVE_EVAL_DIVISOR`.
    pub null_move_eval_divisor: i32,
    /// The default is `LMR_BASE`, in hundredths.
    pub lmr_base_percent: i32,
    /// The default is `LMR_DIVISOR`, in hundredths.
    pub lmr_divisor_percent: i32,
    /// The default is `LMR_HISTORY_DIVISOR`.
    pub lmr_history_divisor: i32,
    /// The default is `SINGULAR_MARGIN`.
    pub singular_margin: i32,
    /// The default is `ASPIRATION_DELTA`.
    pub aspiration_delta: i32,
    /// The default is `HISTORY_BONUS_SCALE`.
    pub history_bonus_scale: i32,
    /// The default is `HISTORY_BONUS_MAX`.
    pub history_bonus_max: i32,
    /// The default is `NULL_MOVE_REDUCTION_PERCENT`.
    pub null_move_reduction_percent: i32,
    /// The default is `NULL_MOVE_DEPTH_PERCENT`.
    pub null_move_depth_percent: i32,
    /// The default is `NULL_MOVE_EVAL_MAX`.
    pub null_move_eval_max: i32,
    /// The default is `REVERSE_FUTILITY_IMPROVING_PERCENT`.
    pub reverse_futility_improving_percent: i32,
    /// The default is `LMP_NOT_IMPROVING_PERCENT`.
    pub lmp_not_improving_percent: i32,
    /// The default is `LMR_PV_LESS_PERCENT`.
    pub lmr_pv_less_percent: i32,
    /// The default is `LMR_NOT_IMPROVING_PERCENT`.
    pub lmr_not_improving_percent: i32,
    /// The default is `LMR_COUNTER_LESS_PERCENT`.
    pub lmr_counter_less_percent: i32,
    /// The default is `REVERSE_FUTILITY_MAX_DEPTH`.
    pub reverse_futility_max_depth: i32,
    /// The default is `LMP_MAX_DEPTH`.
    pub lmp_max_depth: i32,
    /// The default is `LMR_CUTOFFS_MORE_PERCENT`.
    pub lmr_cutoffs_more_percent: i32,
}

impl SearchTuning {
    /// Every number at this file's constant.
    pub const DEFAULT: SearchTuning = SearchTuning {
        reverse_futility_margin: REVERSE_FUTILITY_MARGIN,
        futility_base: FUTILITY_BASE,
        futility_margin: FUTILITY_MARGIN,
        lmp_base: LMP_BASE as i32,
        see_prune_noisy: SEE_PRUNE_NOISY,
        see_prune_quiet: SEE_PRUNE_QUIET,
        null_move_eval_divisor: NULL_MOVE_EVAL_DIVISOR,
        lmr_base_percent: (LMR_BASE * 100.0) as i32,
        lmr_divisor_percent: (LMR_DIVISOR * 100.0) as i32,
        lmr_history_divisor: LMR_HISTORY_DIVISOR,
        singular_margin: SINGULAR_MARGIN,
        aspiration_delta: ASPIRATION_DELTA,
        history_bonus_scale: HISTORY_BONUS_SCALE,
        history_bonus_max: HISTORY_BONUS_MAX,
        null_move_reduction_percent: NULL_MOVE_REDUCTION_PERCENT,
        null_move_depth_percent: NULL_MOVE_DEPTH_PERCENT,
        null_move_eval_max: NULL_MOVE_EVAL_MAX,
        reverse_futility_improving_percent: REVERSE_FUTILITY_IMPROVING_PERCENT,
        lmp_not_improving_percent: LMP_NOT_IMPROVING_PERCENT,
        lmr_pv_less_percent: LMR_PV_LESS_PERCENT,
        lmr_not_improving_percent: LMR_NOT_IMPROVING_PERCENT,
        lmr_counter_less_percent: LMR_COUNTER_LESS_PERCENT,
        reverse_futility_max_depth: REVERSE_FUTILITY_MAX_DEPTH,
        lmp_max_depth: LMP_MAX_DEPTH,
        lmr_cutoffs_more_percent: LMR_CUTOFFS_MORE_PERCENT,
    };

    /// How many numbers there are.
    pub const COUNT: usize = 25;

    /// The fields' names, in the order of [`SearchTuning::values`].
    pub const NAMES: [&'static str; Self::COUNT] = [
        "reverse_futility_margin",
        "futility_base",
        "futility_margin",
        "lmp_base",
        "see_prune_noisy",
        "see_prune_quiet",
        "null_move_eval_divisor",
        "lmr_base_percent",
        "lmr_divisor_percent",
        "lmr_history_divisor",
        "singular_margin",
        "aspiration_delta",
        "history_bonus_scale",
        "history_bonus_max",
        "null_move_reduction_percent",
        "null_move_depth_percent",
        "null_move_eval_max",
        "reverse_futility_improving_percent",
        "lmp_not_improving_percent",
        "lmr_pv_less_percent",
        "lmr_not_improving_percent",
        "lmr_counter_less_percent",
        "reverse_futility_max_depth",
        "lmp_max_depth",
        "lmr_cutoffs_more_percent",
    ];

    /// The numbers in the order of [`SearchTuning::NAMES`].
    pub fn values(&self) -> [i32; Self::COUNT] {
        [
            self.reverse_futility_margin,
            self.futility_base,
            self.futility_margin,
            self.lmp_base,
            self.see_prune_noisy,
            self.see_prune_quiet,
            self.null_move_eval_divisor,
            self.lmr_base_percent,
            self.lmr_divisor_percent,
            self.lmr_history_divisor,
            self.singular_margin,
            self.aspiration_delta,
            self.history_bonus_scale,
            self.history_bonus_max,
            self.null_move_reduction_percent,
            self.null_move_depth_percent,
            self.null_move_eval_max,
            self.reverse_futility_improving_percent,
            self.lmp_not_improving_percent,
            self.lmr_pv_less_percent,
            self.lmr_not_improving_percent,
            self.lmr_counter_less_percent,
            self.reverse_futility_max_depth,
            self.lmp_max_depth,
            self.lmr_cutoffs_more_percent,
        ]
    }

    /// The numbers from [`SearchTuning::values`]' order. A divisor below 1 is 1, the null move's reduction at
    /// least a ply, and every number but the LMR base and its adjustments at least 0: any values make a search
    /// that ends.
    pub fn from_values(v: [i32; Self::COUNT]) -> SearchTuning {
        SearchTuning {
            reverse_futility_margin: v[0].max(0),
            futility_base: v[1].max(0),
            futility_margin: v[2].max(0),
            lmp_base: v[3].max(0),
            see_prune_noisy: v[4].max(0),
            see_prune_quiet: v[5].max(0),
            null_move_eval_divisor: v[6].max(1),
            lmr_base_percent: v[7],
            lmr_divisor_percent: v[8].max(1),
            lmr_history_divisor: v[9].max(1),
            singular_margin: v[10].max(0),
            aspiration_delta: v[11].max(1),
            history_bonus_scale: v[12].max(0),
            history_bonus_max: v[13].clamp(0, HISTORY_MAX),
            null_move_reduction_percent: v[14].max(100),
            null_move_depth_percent: v[15].max(0),
            null_move_eval_max: v[16].max(0),
            reverse_futility_improving_percent: v[17].max(0),
            lmp_not_improving_percent: v[18].max(0),
            lmr_pv_less_percent: v[19],
            lmr_not_improving_percent: v[20],
            lmr_counter_less_percent: v[21],
            reverse_futility_max_depth: v[22].max(0),
            lmp_max_depth: v[23].max(0),
            lmr_cutoffs_more_percent: v[24],
        }
    }
}

/// Late-move reductions by remaining depth and move number.
pub(super) type LmrTable = [[u8; LMR_TABLE_SIZE]; LMR_TABLE_SIZE];

/// The reduction table of an LMR base and divisor (hundredths): `base + ln(depth) * ln(move number) /
/// divisor`, rounded down, at least 0.
pub(super) fn lmr_table(base_percent: i32, divisor_percent: i32) -> LmrTable {
    let (base, divisor) = (f64::from(base_percent) / 100.0, f64::from(divisor_percent.max(1)) / 100.0);
    std::array::from_fn(|depth| {
        std::array::from_fn(|count| {
            if depth > 0 && count > 0 {
                let v = base + (depth as f64).ln() * (count as f64).ln() / divisor;
                v.clamp(0.0, 255.0) as u8
            } else {
                0
            }
        })
    })
}
