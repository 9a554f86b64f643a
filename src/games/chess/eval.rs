//! Static evaluation: tapered middlegame/endgame terms for material, piece-square tables, mobility, king
//! safety, pawn structure (passed, protected and blocked passers, isolated, doubled), threats (pieces
//! attacked by pawns or by lesser pieces, pieces attacked and undefended), outposts, bishop pair and rooks on
//! open files.
//!
//! Every weight is one entry of [`Weights`] (a middlegame and an endgame value), and [`evaluate_with`]
//! evaluates with any set of them, so that a tuner can fit them to game results. The piece-square tables are
//! shapes (advance, centralisation, seventh rank, king home) computed from a few of those weights, plus a
//! learned correction for every piece on every square ([`Squares`]): the shapes give a sensible table from
//! few values, the corrections what the games teach beyond them.
//! Scores are centipawns from the side to move's point of view.

use cozy_chess::{
    BitBoard, Board, Color, Piece, Square, get_bishop_moves, get_king_moves, get_knight_moves, get_rook_moves,
};

/// A middlegame and an endgame value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct S(pub i32, pub i32);

/// The names of the weights, in [`Weights`] order (for the tuner's report).
pub const NAMES: [&str; COUNT] = [
    "pawn",
    "knight",
    "bishop",
    "rook",
    "queen",
    "pawn_advance",
    "pawn_center",
    "knight_center",
    "bishop_center",
    "rook_seventh",
    "queen_center",
    "king_center",
    "king_home",
    "mob_knight",
    "mob_bishop",
    "mob_rook",
    "mob_queen",
    "passed_r2",
    "passed_r3",
    "passed_r4",
    "passed_r5",
    "passed_r6",
    "passed_r7",
    "passed_king_distance",
    "isolated",
    "doubled",
    "bishop_pair",
    "rook_open",
    "rook_semi_open",
    "shield_near",
    "shield_far",
    "king_attack",
    "tempo",
    "threat_pawn",
    "threat_minor",
    "threat_rook",
    "hanging",
    "outpost_knight",
    "outpost_bishop",
    "passed_protected",
    "passed_blocked",
];

/// Number of weights.
pub const COUNT: usize = 41;

/// All the evaluation's weights, indexed as [`NAMES`].
pub type Weights = [S; COUNT];

const PAWN: usize = 0;
const PAWN_ADVANCE: usize = 5;
const PAWN_CENTER: usize = 6;
const KNIGHT_CENTER: usize = 7;
const BISHOP_CENTER: usize = 8;
const ROOK_SEVENTH: usize = 9;
const QUEEN_CENTER: usize = 10;
const KING_CENTER: usize = 11;
const KING_HOME: usize = 12;
const MOBILITY: usize = 13;
const PASSED: usize = 17;
const PASSED_KING_DISTANCE: usize = 23;
const ISOLATED: usize = 24;
const DOUBLED: usize = 25;
const BISHOP_PAIR: usize = 26;
const ROOK_OPEN: usize = 27;
const ROOK_SEMI_OPEN: usize = 28;
const SHIELD_NEAR: usize = 29;
const SHIELD_FAR: usize = 30;
const KING_ATTACK: usize = 31;
const TEMPO: usize = 32;
/// The first of the four threat weights, in [`Attacks::threats`] order: `threat_pawn`, `threat_minor`,
/// `threat_rook`, `hanging`.
const THREAT_PAWN: usize = 33;
/// The knight's outpost weight; the bishop's follows.
const OUTPOST: usize = 37;
const PASSED_PROTECTED: usize = 39;
const PASSED_BLOCKED: usize = 40;

/// Per-square corrections added to the shape tables, `[piece][square from White's side]` (pawn to king; a1
/// is 0, h8 63, Black's squares mirrored to White's).
pub type Squares = [[S; 64]; 6];

/// The weights and square corrections in use, in the generated `weights.rs` (written by `examples/tune.rs`):
/// the history and commands of every fit are in BENCHMARKS.md ("evaluation weights"). The hand-set weights
/// that preceded the first fit are kept in `tests/data/chess/weights-hand.txt`.
pub use super::weights::{SQUARES, WEIGHTS};

/// Game phase weights (knight, bishop, rook, queen); the opening has [`PHASE_MAX`].
const PHASE: [i32; 6] = [0, 1, 1, 2, 4, 0];
pub const PHASE_MAX: i32 = 24;

/// Piece-square tables built from the shape weights and the square corrections: `[piece][square from White's
/// side]`, mg and eg.
#[derive(Clone, Debug)]
pub struct Tables {
    pub weights: Weights,
    pst: [[S; 64]; 6],
}

const fn abs(x: i32) -> i32 {
    if x < 0 { -x } else { x }
}

/// Closeness to the centre, 0 (corner) to 6 (d4, e4, d5, e5).
const fn centrality(sq: usize) -> i32 {
    let f = (sq % 8) as i32;
    let r = (sq / 8) as i32;
    7 - (abs(2 * f - 7) + abs(2 * r - 7)) / 2
}

impl Tables {
    pub const fn new(w: &Weights, squares: &Squares) -> Tables {
        let mut pst = [[S(0, 0); 64]; 6];
        let mut sq = 0;
        while sq < 64 {
            let f = (sq % 8) as i32;
            let r = (sq / 8) as i32;
            let c = centrality(sq);
            // Pawns: forward, and the d/e pawns in the centre.
            let centre_pawn = if (f == 3 || f == 4) && r >= 2 && r <= 4 { 1 } else { 0 };
            pst[0][sq] = S(
                w[PAWN_ADVANCE].0 * (r - 1) + w[PAWN_CENTER].0 * centre_pawn,
                w[PAWN_ADVANCE].1 * (r - 1) + w[PAWN_CENTER].1 * centre_pawn,
            );
            pst[1][sq] = S(w[KNIGHT_CENTER].0 * (c - 3), w[KNIGHT_CENTER].1 * (c - 3));
            pst[2][sq] = S(w[BISHOP_CENTER].0 * (c - 3), w[BISHOP_CENTER].1 * (c - 3));
            let seventh = if r == 6 { 1 } else { 0 };
            pst[3][sq] = S(w[ROOK_SEVENTH].0 * seventh, w[ROOK_SEVENTH].1 * seventh);
            pst[4][sq] = S(w[QUEEN_CENTER].0 * (c - 3), w[QUEEN_CENTER].1 * (c - 3));
            let home = if r == 0 { 1 } else { 0 };
            pst[5][sq] = S(
                w[KING_CENTER].0 * (c - 3) + w[KING_HOME].0 * home,
                w[KING_CENTER].1 * (c - 3) + w[KING_HOME].1 * home,
            );
            let mut p = 0;
            while p < 6 {
                if p < 5 {
                    pst[p][sq].0 += w[PAWN + p].0;
                    pst[p][sq].1 += w[PAWN + p].1;
                }
                pst[p][sq].0 += squares[p][sq].0;
                pst[p][sq].1 += squares[p][sq].1;
                p += 1;
            }
            sq += 1;
        }
        Tables { weights: *w, pst }
    }
}

/// The tables of [`WEIGHTS`] and [`SQUARES`], built at compile time.
pub static TABLES: Tables = Tables::new(&WEIGHTS, &SQUARES);

const FILE_A: u64 = 0x0101_0101_0101_0101;
const FILE_H: u64 = FILE_A << 7;

/// Squares ahead of a pawn on its own and the adjacent files, `[color][square]`.
static PASSED_MASK: [[u64; 64]; 2] = {
    let mut t = [[0u64; 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        let f = sq % 8;
        let r = sq / 8;
        let mut files = FILE_A << f;
        if f > 0 {
            files |= FILE_A << (f - 1);
        }
        if f < 7 {
            files |= FILE_A << (f + 1);
        }
        let above = if r == 7 { 0 } else { !0u64 << ((r + 1) * 8) };
        let below = if r == 0 { 0 } else { !0u64 >> ((8 - r) * 8) };
        t[0][sq] = files & above;
        t[1][sq] = files & below;
        sq += 1;
    }
    t
};

#[inline]
fn pawn_attacks(pawns: u64, color: Color) -> u64 {
    match color {
        Color::White => ((pawns & !FILE_A) << 7) | ((pawns & !FILE_H) << 9),
        Color::Black => ((pawns & !FILE_A) >> 9) | ((pawns & !FILE_H) >> 7),
    }
}

#[inline]
fn adjacent_files(f: usize) -> u64 {
    let mut m = 0;
    if f > 0 {
        m |= FILE_A << (f - 1);
    }
    if f < 7 {
        m |= FILE_A << (f + 1);
    }
    m
}

#[inline]
fn distance(a: Square, b: Square) -> i32 {
    let df = (a.file() as i32 - b.file() as i32).abs();
    let dr = (a.rank() as i32 - b.rank() as i32).abs();
    df.max(dr)
}

/// Steps between two squares along files and ranks (Manhattan distance).
fn manhattan(a: Square, b: Square) -> i32 {
    (a.file() as i32 - b.file() as i32).abs() + (a.rank() as i32 - b.rank() as i32).abs()
}

/// Squares attacked by each side's pieces, gathered while the pieces are evaluated: by knights and bishops, by
/// rooks, and by anything (pawns and king included once [`Attacks::finish`] has run).
#[derive(Default)]
struct Attacks {
    minor: [u64; 2],
    rook: [u64; 2],
    all: [u64; 2],
}

impl Attacks {
    #[inline]
    fn add(&mut self, ci: usize, piece: Piece, att: u64) {
        match piece {
            Piece::Knight | Piece::Bishop => self.minor[ci] |= att,
            Piece::Rook => self.rook[ci] |= att,
            _ => {}
        }
        self.all[ci] |= att;
    }

    fn finish(&mut self, pawn_att: [u64; 2], kings: [Square; 2]) {
        for ci in 0..2 {
            self.all[ci] |= pawn_att[ci] | get_king_moves(kings[ci]).0;
        }
    }

    /// What side `ci` threatens: enemy pieces attacked by its pawns, rooks and queens by its minor pieces,
    /// queens by its rooks, and enemy pieces but the king attacked and not defended (in [`THREAT_PAWN`]
    /// order).
    #[inline]
    fn threats(&self, board: &Board, ci: usize, pawn_att: [u64; 2]) -> [i32; 4] {
        let them = 1 - ci;
        let color = if them == 0 { Color::White } else { Color::Black };
        let theirs = board.colors(color).0;
        let pawns = board.colored_pieces(color, Piece::Pawn).0;
        let queens = board.colored_pieces(color, Piece::Queen).0;
        let heavy = board.colored_pieces(color, Piece::Rook).0 | queens;
        let king = board.colored_pieces(color, Piece::King).0;
        [
            (pawn_att[ci] & theirs & !pawns & !king).count_ones() as i32,
            (self.minor[ci] & heavy).count_ones() as i32,
            (self.rook[ci] & queens).count_ones() as i32,
            (self.all[ci] & !self.all[them] & theirs & !king).count_ones() as i32,
        ]
    }
}

/// A knight or bishop of side `ci` on its fourth to sixth rank, defended by an own pawn, where no enemy pawn
/// can ever attack it.
#[inline]
fn is_outpost(ci: usize, sq: Square, rel_rank: usize, pawn_att: [u64; 2], enemy_pawns: u64) -> bool {
    (3..=5).contains(&rel_rank)
        && pawn_att[ci] & sq.bitboard().0 != 0
        && PASSED_MASK[ci][sq as usize] & adjacent_files(sq.file() as usize) & enemy_pawns == 0
}

/// A side's pawn structure from bitboards, the same counts a pawn-by-pawn look gives: pawns with no own pawn
/// on an adjacent file, pawns beyond the first on each file, and the passed pawns (no enemy pawn ahead on the
/// pawn's own or an adjacent file, [`PASSED_MASK`]).
struct PawnStructure {
    isolated: i32,
    doubled: i32,
    passed: u64,
}

impl PawnStructure {
    #[inline]
    fn of(ci: usize, mine: u64, theirs: u64) -> PawnStructure {
        let files = file_fill(mine);
        let isolated = (mine & !beside(files)).count_ones() as i32;
        let doubled = mine.count_ones() as i32 - (files & 0xFF).count_ones() as i32;
        // The squares behind each enemy pawn (from this side's view) on its own file, then on the adjacent
        // files too: where a pawn of this side is not passed.
        let behind = if ci == 0 { south_fill(theirs >> 8) } else { north_fill(theirs << 8) };
        let passed = mine & !(behind | beside(behind));
        PawnStructure { isolated, doubled, passed }
    }
}

/// `b` and every square below its squares on their files.
#[inline]
fn south_fill(mut b: u64) -> u64 {
    b |= b >> 8;
    b |= b >> 16;
    b | b >> 32
}

/// `b` and every square above its squares on their files.
#[inline]
fn north_fill(mut b: u64) -> u64 {
    b |= b << 8;
    b |= b << 16;
    b | b << 32
}

/// The whole files `b` has a square on.
#[inline]
fn file_fill(b: u64) -> u64 {
    north_fill(south_fill(b))
}

/// The squares one file to either side of `b`'s.
#[inline]
fn beside(b: u64) -> u64 {
    ((b & !FILE_H) << 1) | ((b & !FILE_A) >> 1)
}

/// The square in front of a pawn of side `ci` (pawns never stand on the last rank).
#[inline]
fn square_ahead(ci: usize, sq: Square) -> u64 {
    if ci == 0 { sq.bitboard().0 << 8 } else { sq.bitboard().0 >> 8 }
}

/// For knights, bishops, rooks and queens: the mobility the mobility weight counts from (fewer safe squares
/// score below zero), and the units each square of the enemy king's zone it attacks adds to the king attack.
/// The evaluation and its trace both read it.
const BASE_AND_UNIT: [(i32, i32); 4] = [(4, 2), (6, 2), (7, 3), (13, 5)];

/// What [`evaluate_any`] knows of one side while it sums that side's pieces.
#[derive(Clone, Copy)]
struct SideView {
    ci: usize,
    /// 0 for White, 56 for Black: a square from this side's view (`sq ^ flip`).
    flip: usize,
    occ: BitBoard,
    /// Squares neither this side's own nor attacked by an enemy pawn (where mobility counts).
    safe: u64,
    /// The enemy king's square and the squares around it.
    zone: u64,
    pawn_att: [u64; 2],
    enemy_pawns: u64,
    own_pawns: u64,
}

/// One side's running sums in [`evaluate_any`]: middlegame and endgame, and the attack on the enemy king.
#[derive(Default)]
struct Sums {
    mg: i32,
    eg: i32,
    attack_units: i32,
    attackers: i32,
}

impl Sums {
    /// The table values of the pieces of type `pi` on `set`.
    #[inline(always)]
    fn squares(&mut self, t: &Tables, pi: usize, set: BitBoard, flip: usize) {
        for sq in set {
            let s = t.pst[pi][sq as usize ^ flip];
            self.mg += s.0;
            self.eg += s.1;
        }
    }

    /// The knights (`PI` 1), bishops (2), rooks (3) or queens (4) on `set`: table values, mobility, outposts,
    /// the attack on the enemy king's zone and (rooks) open files; their attacks go to `attacks`. One copy
    /// for each piece type, so that nothing asks which piece it is square by square.
    #[inline(always)]
    fn pieces<const PI: usize>(&mut self, t: &Tables, set: BitBoard, v: &SideView, attacks: &mut Attacks) {
        let w = &t.weights;
        let (base, unit) = BASE_AND_UNIT[PI - 1];
        let mw = w[MOBILITY + PI - 1];
        let ci = v.ci;
        for sq in set {
            let rel = sq as usize ^ v.flip;
            let s = t.pst[PI][rel];
            self.mg += s.0;
            self.eg += s.1;
            let att = match PI {
                1 => get_knight_moves(sq).0,
                2 => get_bishop_moves(sq, v.occ).0,
                3 => get_rook_moves(sq, v.occ).0,
                _ => get_bishop_moves(sq, v.occ).0 | get_rook_moves(sq, v.occ).0,
            };
            attacks.add(ci, Piece::ALL[PI], att);
            let mob = (att & v.safe).count_ones() as i32 - base;
            self.mg += mw.0 * mob;
            self.eg += mw.1 * mob;
            if PI <= 2 && is_outpost(ci, sq, rel >> 3, v.pawn_att, v.enemy_pawns) {
                self.mg += w[OUTPOST + PI - 1].0;
                self.eg += w[OUTPOST + PI - 1].1;
            }
            let hits = (att & v.zone).count_ones() as i32;
            if hits > 0 {
                self.attackers += 1;
                self.attack_units += unit * hits;
            }
            if PI == 3 {
                let file = FILE_A << sq.file() as usize;
                if file & v.own_pawns == 0 {
                    let k = if file & v.enemy_pawns == 0 { ROOK_OPEN } else { ROOK_SEMI_OPEN };
                    self.mg += w[k].0;
                    self.eg += w[k].1;
                }
            }
        }
    }
}

/// Evaluation from the side to move's point of view, with the given tables (the tuner's entry point).
pub fn evaluate_with(t: &Tables, board: &Board) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if super::net::has_avx2() {
        // SAFETY: the processor has every feature `evaluate_avx2` is compiled for.
        return unsafe { evaluate_avx2(t, board) };
    }
    evaluate_any(t, board)
}

/// [`evaluate_with`] compiled for processors since about 2013 (AVX2, and BMI1, BMI2, LZCNT and POPCNT, whose bit
/// instructions shorten the bitboard loops): the same evaluation in about 6% fewer instructions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
fn evaluate_avx2(t: &Tables, board: &Board) -> i32 {
    evaluate_any(t, board)
}

#[inline(always)]
fn evaluate_any(t: &Tables, board: &Board) -> i32 {
    let w = &t.weights;
    let occ = board.occupied();
    let pawns_of =
        [board.colored_pieces(Color::White, Piece::Pawn).0, board.colored_pieces(Color::Black, Piece::Pawn).0];
    let pawn_att = [pawn_attacks(pawns_of[0], Color::White), pawn_attacks(pawns_of[1], Color::Black)];
    let kings = [board.king(Color::White), board.king(Color::Black)];
    let zones =
        [get_king_moves(kings[0]).0 | kings[0].bitboard().0, get_king_moves(kings[1]).0 | kings[1].bitboard().0];

    let mut mg = 0i32;
    let mut eg = 0i32;
    let count = |piece: Piece| board.pieces(piece).len() as i32;
    let phase = PHASE[1] * count(Piece::Knight)
        + PHASE[2] * count(Piece::Bishop)
        + PHASE[3] * count(Piece::Rook)
        + PHASE[4] * count(Piece::Queen);
    let mut non_pawn = [0i32; 2];
    let mut attacks = Attacks::default();

    for (ci, color) in [Color::White, Color::Black].into_iter().enumerate() {
        let sign = if ci == 0 { 1 } else { -1 };
        let them = 1 - ci;
        let own = board.colors(color).0;
        let view = SideView {
            ci,
            flip: if ci == 0 { 0 } else { 56 },
            occ,
            safe: !own & !pawn_att[them],
            zone: zones[them],
            pawn_att,
            enemy_pawns: pawns_of[them],
            own_pawns: pawns_of[ci],
        };
        let mut sums = Sums::default();
        let set = |piece: Piece| board.colored_pieces(color, piece);
        sums.squares(t, 0, set(Piece::Pawn), view.flip);
        sums.squares(t, 5, set(Piece::King), view.flip);
        sums.pieces::<1>(t, set(Piece::Knight), &view, &mut attacks);
        sums.pieces::<2>(t, set(Piece::Bishop), &view, &mut attacks);
        sums.pieces::<3>(t, set(Piece::Rook), &view, &mut attacks);
        sums.pieces::<4>(t, set(Piece::Queen), &view, &mut attacks);
        for (pi, piece) in [(1, Piece::Knight), (2, Piece::Bishop), (3, Piece::Rook), (4, Piece::Queen)] {
            non_pawn[ci] += w[pi].0 * set(piece).len() as i32;
        }
        let Sums { mg: mut smg, eg: mut seg, attack_units, attackers } = sums;
        if attackers >= 2 {
            let u = attack_units.min(24);
            smg += w[KING_ATTACK].0 * u * u / 8;
            seg += w[KING_ATTACK].1 * u * u / 8;
        }
        if board.colored_pieces(color, Piece::Bishop).len() >= 2 {
            smg += w[BISHOP_PAIR].0;
            seg += w[BISHOP_PAIR].1;
        }
        // Pawn structure, the whole side's pawns at once (see [`PawnStructure`]); passed pawns one by one.
        let pawns = PawnStructure::of(ci, pawns_of[ci], pawns_of[them]);
        smg += w[ISOLATED].0 * pawns.isolated + w[DOUBLED].0 * pawns.doubled;
        seg += w[ISOLATED].1 * pawns.isolated + w[DOUBLED].1 * pawns.doubled;
        for sq in BitBoard(pawns.passed) {
            let rel_rank = if ci == 0 { sq.rank() as usize } else { 7 - sq.rank() as usize };
            if rel_rank >= 1 {
                let k = PASSED + rel_rank - 1;
                smg += w[k].0;
                seg += w[k].1;
                let d = distance(kings[them], sq) - distance(kings[ci], sq);
                seg += w[PASSED_KING_DISTANCE].1 * d * rel_rank as i32 / 4;
                smg += w[PASSED_KING_DISTANCE].0 * d;
                if pawn_att[ci] & sq.bitboard().0 != 0 {
                    smg += w[PASSED_PROTECTED].0;
                    seg += w[PASSED_PROTECTED].1;
                }
                if square_ahead(ci, sq) & board.colors(if ci == 0 { Color::Black } else { Color::White }).0 != 0 {
                    smg += w[PASSED_BLOCKED].0;
                    seg += w[PASSED_BLOCKED].1;
                }
            }
        }
        let mine = pawns_of[ci];
        // King shelter: own pawns in front of the king on its three files.
        let k = kings[ci];
        let k_rel_rank = if ci == 0 { k.rank() as i32 } else { 7 - k.rank() as i32 };
        if k_rel_rank <= 1 {
            let files = (FILE_A << k.file() as usize) | adjacent_files(k.file() as usize);
            let (near, far) = if ci == 0 {
                let r = k.rank() as usize;
                (0xFFu64 << ((r + 1) * 8), 0xFFu64 << ((r + 2) * 8))
            } else {
                let r = k.rank() as usize;
                (0xFFu64 << ((r - 1) * 8), 0xFFu64 << ((r - 2) * 8))
            };
            let n_near = (mine & files & near).count_ones() as i32;
            let n_far = (mine & files & far).count_ones() as i32;
            smg += w[SHIELD_NEAR].0 * n_near + w[SHIELD_FAR].0 * n_far;
            seg += w[SHIELD_NEAR].1 * n_near + w[SHIELD_FAR].1 * n_far;
        }
        mg += sign * smg;
        eg += sign * seg;
    }
    attacks.finish(pawn_att, kings);
    for ci in 0..2 {
        let sign = if ci == 0 { 1 } else { -1 };
        for (k, n) in attacks.threats(board, ci, pawn_att).into_iter().enumerate() {
            mg += sign * w[THREAT_PAWN + k].0 * n;
            eg += sign * w[THREAT_PAWN + k].1 * n;
        }
    }
    let stm = board.side_to_move();
    let tempo = if stm == Color::White { 1 } else { -1 };
    mg += tempo * w[TEMPO].0;
    eg += tempo * w[TEMPO].1;

    let phase = phase.min(PHASE_MAX);
    let mut score = (mg * phase + eg * (PHASE_MAX - phase)) / PHASE_MAX;

    // Without pawns, an advantage of less than a rook rarely wins: scale it down.
    let strong = if score >= 0 { 0 } else { 1 };
    if pawns_of[strong] == 0 && non_pawn[strong] - non_pawn[1 - strong] < w[3].0 {
        score /= 4;
    }
    if stm == Color::White { score } else { -score }
}

/// Centi-pawns a lone defending king is worth to the other side for each step it stands nearer the edge
/// ([`mop_up`]).
const MOP_UP_EDGE: i32 = 40;
/// Centi-pawns for each step the kings stand nearer each other, Manhattan distance ([`mop_up`]).
const MOP_UP_KINGS: i32 = 8;
/// Centi-pawns for each step (Manhattan distance) the defending king stands nearer a corner of the bishop's
/// colour, with bishop and knight against a bare king, in place of the edge's ([`mop_up`]).
const MOP_UP_BISHOP_CORNER: i32 = 30;

/// The technique of pawnless endings won by driving the defending king to the edge (king and queen or rook
/// against king, bishop and knight against king, queen against rook): where no pawns are left and one side is
/// at least a rook ahead in pieces (the built-in middlegame values), that side gains for each step the other
/// king stands nearer the edge (with bishop and knight, nearer a corner of the bishop's colour) and the kings
/// nearer each other. The evaluation otherwise gives such positions no direction, and the search, finding
/// no mate within its horizon, shuffles until the fifty-move rule. (Two knights against a bare king are driven
/// the same way, harmlessly: they cannot force mate.) From the side to move's point of view; 0 where it does not
/// apply (every position with a pawn).
pub fn mop_up(board: &Board) -> i32 {
    if !board.pieces(Piece::Pawn).is_empty() {
        return 0;
    }
    let rook = WEIGHTS[3].0;
    let count = |c: Color, p: Piece| board.colored_pieces(c, p).len() as i32;
    let (white, black) = (pieces_value(board, Color::White), pieces_value(board, Color::Black));
    let strong = if white - black >= rook {
        Color::White
    } else if black - white >= rook {
        Color::Black
    } else {
        return 0;
    };
    let (mine, theirs) = (board.king(strong), board.king(!strong));
    let mut bonus = MOP_UP_KINGS * (14 - manhattan(mine, theirs));
    let bare = board.colors(!strong) == theirs.bitboard();
    let minors_only = count(strong, Piece::Rook) + count(strong, Piece::Queen) == 0;
    if bare
        && minors_only
        && count(strong, Piece::Bishop) == 1
        && count(strong, Piece::Knight) == 1
        && let Some(bishop) = board.colored_pieces(strong, Piece::Bishop).next_square()
    {
        // Mate is forced only in a corner the bishop can reach: the defending king is driven there.
        let dark = BitBoard::DARK_SQUARES.has(bishop);
        let corners = if dark { [Square::A1, Square::H8] } else { [Square::H1, Square::A8] };
        let near = manhattan(corners[0], theirs).min(manhattan(corners[1], theirs));
        bonus += MOP_UP_BISHOP_CORNER * (14 - near);
    } else {
        bonus += MOP_UP_EDGE * (6 - centrality(theirs as usize));
    }
    if board.side_to_move() == strong { bonus } else { -bonus }
}

/// The drawish-ending rule of [`evaluate_with`] could scale a score here, whichever side it favoured: a side
/// has no pawns and less than a rook more in pieces than the other (at the built-in piece values).
pub fn drawish_possible(board: &Board) -> bool {
    [Color::White, Color::Black].into_iter().any(|strong| {
        board.colored_pieces(strong, Piece::Pawn).is_empty()
            && pieces_value(board, strong) - pieces_value(board, !strong) < WEIGHTS[3].0
    })
}

/// The pieces of `color` other than pawns and king, at the built-in middlegame values.
fn pieces_value(board: &Board, color: Color) -> i32 {
    (1..5).map(|p| WEIGHTS[p].0 * board.colored_pieces(color, Piece::ALL[p]).len() as i32).sum()
}

/// The evaluation of one position as a linear function of the weights: what each weight is multiplied by,
/// White's terms minus Black's, before the middlegame/endgame taper. [`evaluate_with`] equals
/// [`Trace::evaluate`] up to its integer rounding, for every set of weights; a tuner precomputes traces once.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// Coefficient of each weight's middlegame value.
    pub mg: [f32; COUNT],
    /// Coefficient of each weight's endgame value.
    pub eg: [f32; COUNT],
    /// The square corrections in play: `(piece · 64 + square from its owner's side, +1 for White or -1 for
    /// Black)`, one per piece on the board; each applies to both halves of its [`Squares`] entry.
    pub squares: Vec<(u16, f32)>,
    /// Game phase, 0 (bare kings and pawns) to [`PHASE_MAX`] (all pieces).
    pub phase: i32,
    /// Knights, bishops, rooks and queens of White and Black (for the drawish-ending scale).
    pub pieces: [[i32; 4]; 2],
    /// White and Black have pawns.
    pub has_pawns: [bool; 2],
    pub white_to_move: bool,
}

impl Trace {
    /// The evaluation from White's point of view with the given weights and square corrections, in real
    /// numbers.
    pub fn evaluate_white(&self, w: &Weights, squares: &Squares) -> f64 {
        let (mut mg, mut eg) = (0.0f64, 0.0f64);
        for (i, s) in w.iter().enumerate() {
            mg += f64::from(self.mg[i]) * f64::from(s.0);
            eg += f64::from(self.eg[i]) * f64::from(s.1);
        }
        for &(i, sign) in &self.squares {
            let s = squares[i as usize / 64][i as usize % 64];
            mg += f64::from(sign) * f64::from(s.0);
            eg += f64::from(sign) * f64::from(s.1);
        }
        let phase = f64::from(self.phase);
        let score = (mg * phase + eg * (f64::from(PHASE_MAX) - phase)) / f64::from(PHASE_MAX);
        score * self.scale(w, score)
    }

    /// The factor of the drawish-ending rule (1 or 1/4) for weights `w`, given the unscaled score.
    pub fn scale(&self, w: &Weights, score: f64) -> f64 {
        let strong = if score >= 0.0 { 0 } else { 1 };
        let non_pawn = |c: usize| (0..4).map(|p| self.pieces[c][p] * w[1 + p].0).sum::<i32>();
        if !self.has_pawns[strong] && non_pawn(strong) - non_pawn(1 - strong) < w[3].0 { 0.25 } else { 1.0 }
    }

    /// The evaluation from the side to move's point of view, as [`evaluate_with`] gives it.
    pub fn evaluate(&self, w: &Weights, squares: &Squares) -> f64 {
        let s = self.evaluate_white(w, squares);
        if self.white_to_move { s } else { -s }
    }
}

/// The [`Trace`] of a position: [`evaluate_with`] term by term.
pub fn trace(board: &Board) -> Trace {
    let mut tr = Trace {
        mg: [0.0; COUNT],
        eg: [0.0; COUNT],
        squares: Vec::new(),
        phase: 0,
        pieces: [[0; 4]; 2],
        has_pawns: [false; 2],
        white_to_move: board.side_to_move() == Color::White,
    };
    let occ = board.occupied();
    let pawns_of =
        [board.colored_pieces(Color::White, Piece::Pawn).0, board.colored_pieces(Color::Black, Piece::Pawn).0];
    let pawn_att = [pawn_attacks(pawns_of[0], Color::White), pawn_attacks(pawns_of[1], Color::Black)];
    let kings = [board.king(Color::White), board.king(Color::Black)];
    let zones =
        [get_king_moves(kings[0]).0 | kings[0].bitboard().0, get_king_moves(kings[1]).0 | kings[1].bitboard().0];
    let mut phase = 0;
    let mut squares = Vec::with_capacity(32);
    let mut attacks = Attacks::default();
    for (ci, color) in [Color::White, Color::Black].into_iter().enumerate() {
        let sign = if ci == 0 { 1.0f32 } else { -1.0 };
        let them = 1 - ci;
        let mut both = |k: usize, mg: f32, eg: f32| {
            tr.mg[k] += sign * mg;
            tr.eg[k] += sign * eg;
        };
        let own = board.colors(color).0;
        let safe = !own & !pawn_att[them];
        let mut attack_units = 0;
        let mut attackers = 0;
        for (pi, piece) in Piece::ALL.into_iter().enumerate() {
            let set = board.colored_pieces(color, piece);
            phase += PHASE[pi] * set.len() as i32;
            if (1..=4).contains(&pi) {
                tr.pieces[ci][pi - 1] += set.len() as i32;
            }
            for sq in set {
                let rel = if ci == 0 { sq as usize } else { sq as usize ^ 56 };
                let (f, r, c) = ((rel % 8) as i32, (rel / 8) as i32, centrality(rel));
                squares.push(((pi * 64 + rel) as u16, sign));
                if pi < 5 {
                    both(PAWN + pi, 1.0, 1.0);
                }
                match piece {
                    Piece::Pawn => {
                        both(PAWN_ADVANCE, (r - 1) as f32, (r - 1) as f32);
                        if (f == 3 || f == 4) && (2..=4).contains(&r) {
                            both(PAWN_CENTER, 1.0, 1.0);
                        }
                    }
                    Piece::Knight => both(KNIGHT_CENTER, (c - 3) as f32, (c - 3) as f32),
                    Piece::Bishop => both(BISHOP_CENTER, (c - 3) as f32, (c - 3) as f32),
                    Piece::Rook if r == 6 => both(ROOK_SEVENTH, 1.0, 1.0),
                    Piece::Rook => {}
                    Piece::Queen => both(QUEEN_CENTER, (c - 3) as f32, (c - 3) as f32),
                    Piece::King => {
                        both(KING_CENTER, (c - 3) as f32, (c - 3) as f32);
                        if r == 0 {
                            both(KING_HOME, 1.0, 1.0);
                        }
                    }
                }
                let att = match piece {
                    Piece::Knight => get_knight_moves(sq).0,
                    Piece::Bishop => get_bishop_moves(sq, occ).0,
                    Piece::Rook => get_rook_moves(sq, occ).0,
                    Piece::Queen => get_bishop_moves(sq, occ).0 | get_rook_moves(sq, occ).0,
                    _ => continue,
                };
                attacks.add(ci, piece, att);
                let mob = (att & safe).count_ones() as i32;
                let (base, unit) = BASE_AND_UNIT[pi - 1];
                both(MOBILITY + pi - 1, (mob - base) as f32, (mob - base) as f32);
                if pi <= 2 && is_outpost(ci, sq, rel >> 3, pawn_att, pawns_of[them]) {
                    both(OUTPOST + pi - 1, 1.0, 1.0);
                }
                let hits = (att & zones[them]).count_ones() as i32;
                if hits > 0 {
                    attackers += 1;
                    attack_units += unit * hits;
                }
                if piece == Piece::Rook {
                    let file = FILE_A << sq.file() as usize;
                    if file & pawns_of[ci] == 0 {
                        let k = if file & pawns_of[them] == 0 { ROOK_OPEN } else { ROOK_SEMI_OPEN };
                        both(k, 1.0, 1.0);
                    }
                }
            }
        }
        if attackers >= 2 {
            let u = attack_units.min(24) as f32;
            both(KING_ATTACK, u * u / 8.0, u * u / 8.0);
        }
        if board.colored_pieces(color, Piece::Bishop).len() >= 2 {
            both(BISHOP_PAIR, 1.0, 1.0);
        }
        let mine = pawns_of[ci];
        tr.has_pawns[ci] = mine != 0;
        for sq in BitBoard(mine) {
            let f = sq.file() as usize;
            let rel_rank = if ci == 0 { sq.rank() as usize } else { 7 - sq.rank() as usize };
            if mine & adjacent_files(f) == 0 {
                both(ISOLATED, 1.0, 1.0);
            }
            if PASSED_MASK[ci][sq as usize] & pawns_of[them] == 0 && rel_rank >= 1 {
                both(PASSED + rel_rank - 1, 1.0, 1.0);
                let d = (distance(kings[them], sq) - distance(kings[ci], sq)) as f32;
                both(PASSED_KING_DISTANCE, d, d * rel_rank as f32 / 4.0);
                if pawn_att[ci] & sq.bitboard().0 != 0 {
                    both(PASSED_PROTECTED, 1.0, 1.0);
                }
                if square_ahead(ci, sq) & board.colors(if ci == 0 { Color::Black } else { Color::White }).0 != 0 {
                    both(PASSED_BLOCKED, 1.0, 1.0);
                }
            }
        }
        for f in 0..8 {
            let n = (mine & (FILE_A << f)).count_ones() as i32;
            if n > 1 {
                both(DOUBLED, (n - 1) as f32, (n - 1) as f32);
            }
        }
        let k = kings[ci];
        let k_rel_rank = if ci == 0 { k.rank() as i32 } else { 7 - k.rank() as i32 };
        if k_rel_rank <= 1 {
            let files = (FILE_A << k.file() as usize) | adjacent_files(k.file() as usize);
            let r = k.rank() as usize;
            let (near, far) = if ci == 0 {
                (0xFFu64 << ((r + 1) * 8), 0xFFu64 << ((r + 2) * 8))
            } else {
                (0xFFu64 << ((r - 1) * 8), 0xFFu64 << ((r - 2) * 8))
            };
            let n_near = (mine & files & near).count_ones() as f32;
            let n_far = (mine & files & far).count_ones() as f32;
            both(SHIELD_NEAR, n_near, n_near);
            both(SHIELD_FAR, n_far, n_far);
        }
    }
    attacks.finish(pawn_att, kings);
    for ci in 0..2 {
        let sign = if ci == 0 { 1.0 } else { -1.0 };
        for (k, n) in attacks.threats(board, ci, pawn_att).into_iter().enumerate() {
            tr.mg[THREAT_PAWN + k] += sign * n as f32;
            tr.eg[THREAT_PAWN + k] += sign * n as f32;
        }
    }
    let tempo = if tr.white_to_move { 1.0 } else { -1.0 };
    tr.mg[TEMPO] += tempo;
    tr.eg[TEMPO] += tempo;
    tr.phase = phase.min(PHASE_MAX);
    tr.squares = squares;
    tr
}

/// Material values for exchanges (pawn, knight, bishop, rook, queen, king).
pub const SEE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 20000];

/// An exchange on the target square once the first move is made: what it captured (with a promotion's gain),
/// the piece now standing there, the squares still occupied, and the sliders of both sides (diagonal, straight).
struct Exchange {
    captured: i32,
    moving: Piece,
    occ: u64,
    bishops: u64,
    rooks: u64,
}

impl Exchange {
    /// `None` without a piece on `from`.
    #[inline]
    fn start(board: &Board, from: Square, to: Square, promotion: Option<Piece>) -> Option<Exchange> {
        let mut moving = board.piece_on(from)?;
        let mut captured = match board.piece_on(to) {
            Some(p) if board.color_on(to) != board.color_on(from) => SEE_VALUE[p as usize],
            _ if moving == Piece::Pawn && from.file() != to.file() => SEE_VALUE[0],
            _ => 0,
        };
        let mut occ = board.occupied().0 & !from.bitboard().0;
        if moving == Piece::Pawn && from.file() != to.file() && board.piece_on(to).is_none() {
            // En passant: the captured pawn leaves its square too.
            occ &= !Square::new(to.file(), from.rank()).bitboard().0;
        }
        if let Some(p) = promotion {
            captured += SEE_VALUE[p as usize] - SEE_VALUE[0];
            moving = p;
        }
        let bishops = (board.pieces(Piece::Bishop) | board.pieces(Piece::Queen)).0;
        let rooks = (board.pieces(Piece::Rook) | board.pieces(Piece::Queen)).0;
        Some(Exchange { captured, moving, occ, bishops, rooks })
    }
}

/// The pieces of either side on `occ` attacking `to` through `occ` (`bishops` and `rooks`: the diagonal and
/// straight sliders, queens in both).
#[inline]
fn exchange_attackers(board: &Board, to: Square, occ: u64, bishops: u64, rooks: u64) -> u64 {
    let o = BitBoard(occ);
    ((get_knight_moves(to).0 & board.pieces(Piece::Knight).0)
        | (get_king_moves(to).0 & board.pieces(Piece::King).0)
        | (get_bishop_moves(to, o).0 & bishops)
        | (get_rook_moves(to, o).0 & rooks)
        | (cozy_chess::get_pawn_attacks(to, Color::Black).0 & board.colored_pieces(Color::White, Piece::Pawn).0)
        | (cozy_chess::get_pawn_attacks(to, Color::White).0 & board.colored_pieces(Color::Black, Piece::Pawn).0))
        & occ
}

/// Static exchange evaluation of a capture (or any move) `from -> to`: the material the side to move wins
/// with the best sequence of recaptures on `to`, both sides free to stop. Pins are ignored.
pub fn see(board: &Board, from: Square, to: Square, promotion: Option<Piece>) -> i32 {
    let Some(Exchange { captured, moving, mut occ, bishops, rooks }) = Exchange::start(board, from, to, promotion)
    else {
        return 0;
    };
    let mut gain = [0i32; 34];
    let attackers_to = |occ: u64| exchange_attackers(board, to, occ, bishops, rooks);
    let mut attackers = attackers_to(occ);
    let mut side = !board.side_to_move();
    gain[0] = captured;
    let mut on_square = SEE_VALUE[moving as usize];
    let mut d = 0;
    loop {
        let mine = attackers & board.colors(side).0;
        if mine == 0 || d + 1 >= gain.len() {
            break;
        }
        // The least valuable attacker.
        let mut found = None;
        for p in Piece::ALL {
            let set = mine & board.pieces(p).0;
            if set != 0 {
                found = Some((p, set & set.wrapping_neg()));
                break;
            }
        }
        let Some((p, bit)) = found else { break };
        d += 1;
        gain[d] = on_square - gain[d - 1];
        if p == Piece::King && attackers & board.colors(!side).0 & !bit != 0 {
            // The king may not capture into a defended square.
            d -= 1;
            break;
        }
        on_square = SEE_VALUE[p as usize];
        occ &= !bit;
        attackers = attackers_to(occ);
        side = !side;
    }
    while d > 0 {
        gain[d - 1] = -(-gain[d - 1]).max(gain[d]);
        d -= 1;
    }
    gain[0]
}

/// Whether [`see`] of the move is at least `threshold`, without the whole exchange where it is not needed: the
/// same answer (a test compares them), in the usual swap form that stops as soon as the side to recapture can no
/// longer change it, adding only the sliders a capture uncovers instead of finding every attacker again.
pub fn see_at_least(board: &Board, from: Square, to: Square, promotion: Option<Piece>, threshold: i32) -> bool {
    let Some(Exchange { captured, moving, mut occ, bishops, rooks }) = Exchange::start(board, from, to, promotion)
    else {
        return 0 >= threshold;
    };
    // `swap`: what the side that captured last stands to keep beyond the threshold if the other side stops.
    let mut swap = captured - threshold;
    if swap < 0 {
        // Even unanswered, the capture is not enough.
        return false;
    }
    swap = SEE_VALUE[moving as usize] - swap;
    if swap <= 0 {
        // Even losing the capturing piece for nothing leaves enough.
        return true;
    }
    let mut attackers = exchange_attackers(board, to, occ, bishops, rooks);
    let mut side = board.side_to_move();
    // Whether the side to move gets at least the threshold, if the exchange stopped after the last capture.
    let mut enough = true;
    loop {
        side = !side;
        attackers &= occ;
        let mine = attackers & board.colors(side).0;
        if mine == 0 {
            break;
        }
        enough = !enough;
        // The least valuable attacker (the lowest square of its kind).
        let Some((piece, bit)) = Piece::ALL.into_iter().find_map(|p| {
            let set = mine & board.pieces(p).0;
            (set != 0).then(|| (p, set & set.wrapping_neg()))
        }) else {
            break;
        };
        if piece == Piece::King {
            // The king captures only where nothing can take it back.
            return if attackers & board.colors(!side).0 != 0 { !enough } else { enough };
        }
        swap = SEE_VALUE[piece as usize] - swap;
        if swap < i32::from(enough) {
            break;
        }
        occ &= !bit;
        // The sliders behind the piece that captured.
        if matches!(piece, Piece::Pawn | Piece::Bishop | Piece::Queen) {
            attackers |= get_bishop_moves(to, BitBoard(occ)).0 & bishops;
        }
        if matches!(piece, Piece::Rook | Piece::Queen) {
            attackers |= get_rook_moves(to, BitBoard(occ)).0 & rooks;
        }
    }
    enough
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `games` random games of at most `plies` plies from each of `fens` (generator seeded with `seed`), calling
    /// `visit` with every position on the way and its legal moves (also the last, which has none).
    fn along_random_games(
        fens: &[&str],
        games: usize,
        plies: usize,
        seed: u64,
        mut visit: impl FnMut(&Board, &[cozy_chess::Move]),
    ) {
        let mut rng = crate::matchplay::Rng(seed);
        for fen in fens {
            for _ in 0..games {
                let mut board: Board = fen.parse().unwrap();
                for _ in 0..plies {
                    let mut moves = Vec::new();
                    board.generate_moves(|pm| {
                        moves.extend(pm);
                        false
                    });
                    visit(&board, &moves);
                    if moves.is_empty() {
                        break;
                    }
                    board.play_unchecked(moves[(rng.next_u64() % moves.len() as u64) as usize]);
                }
            }
        }
    }

    /// `see_at_least` answers as `see` does, for every move of positions along random games (captures,
    /// recaptures, promotions, en passant, quiet moves) at thresholds around every exchange's values.
    #[test]
    fn see_at_least_answers_as_the_whole_exchange_does() {
        let thresholds = [-20_000, -1_000, -951, -950, -620, -501, -500, -330, -320, -101, -100, -1, 0, 1, 99, 100, 101];
        let (mut moves_tried, mut not_zero) = (0, 0);
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        ];
        along_random_games(&fens, 30, 100, 0x5EE0_A7EA_5700_0001, |board, moves| {
            for m in moves {
                let value = see(board, m.from, m.to, m.promotion);
                not_zero += usize::from(value != 0);
                moves_tried += 1;
                for t in thresholds.into_iter().chain([value - 1, value, value + 1]) {
                    assert_eq!(
                        see_at_least(board, m.from, m.to, m.promotion, t),
                        value >= t,
                        "{board} {m} see {value} threshold {t}"
                    );
                }
            }
        });
        assert!(moves_tried > 100_000 && not_zero > 5_000, "{moves_tried} {not_zero}");
    }

    /// The evaluation compiled for AVX2 and BMI2 (where this processor has them, as `evaluate_with` chooses) and
    /// for any x86-64 processor give the same score, along random games.
    #[test]
    fn the_evaluation_is_the_same_whatever_it_is_compiled_for() {
        let mut positions = 0;
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        ];
        along_random_games(&fens, 20, 120, 0x0DDB_1A5E_5BAD_5EED, |board, _| {
            assert_eq!(evaluate_with(&TABLES, board), evaluate_any(&TABLES, board), "{board}");
            positions += 1;
        });
        assert!(positions > 3_000, "{positions}");
    }

    /// The bitboard pawn structure against a pawn-by-pawn look, on random pawns of both sides on the second
    /// to seventh ranks, some boards crowded, some sparse.
    #[test]
    fn the_pawn_structure_counts_what_each_pawn_shows() {
        let mut rng = crate::matchplay::Rng(0x5DEE_CE66_D1CE_4E5B);
        for round in 0..20_000 {
            let ranks = 0x00FF_FFFF_FFFF_FF00u64;
            // Half of the squares, or a quarter (two draws' common bits) in every other round.
            let mut draw = || if round % 2 == 0 { rng.next_u64() & rng.next_u64() } else { rng.next_u64() };
            let white = draw() & ranks;
            let black = draw() & ranks & !white;
            for (ci, mine, theirs) in [(0, white, black), (1, black, white)] {
                let got = PawnStructure::of(ci, mine, theirs);
                let mut isolated = 0;
                let mut passed = 0u64;
                for (sq, ahead) in PASSED_MASK[ci].iter().enumerate() {
                    if mine & (1 << sq) == 0 {
                        continue;
                    }
                    isolated += i32::from(mine & adjacent_files(sq % 8) == 0);
                    if ahead & theirs == 0 {
                        passed |= 1 << sq;
                    }
                }
                let doubled: i32 = (0..8).map(|f| ((mine & (FILE_A << f)).count_ones() as i32 - 1).max(0)).sum();
                assert_eq!(got.isolated, isolated, "{mine:#x} {theirs:#x}");
                assert_eq!(got.doubled, doubled, "{mine:#x} {theirs:#x}");
                assert_eq!(got.passed, passed, "{mine:#x} {theirs:#x}");
            }
        }
    }
}
