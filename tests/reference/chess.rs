//! Chess written from the printed (FIDE) rules, for clarity rather than speed: an 8x8 array of squares, one
//! function per piece, legality by playing the move and asking whether the own king is attacked.
//!
//! `grid[rank][file]`, rank 0 = White's first rank, file 0 = the a-file. White moves first.
//!
//! * Pieces move as usual; a pawn steps one square forward, two from its first rank when both squares are
//!   empty, captures one square diagonally forward, and is promoted on the last rank to a queen, rook, bishop
//!   or knight of its colour.
//! * En passant: right after a pawn's double step, an enemy pawn that could have captured it on the square it
//!   passed may do so, removing it.
//! * Castling: the king and a rook that have not moved, nothing between them, the king not in check and not
//!   crossing or landing on an attacked square; the king goes two squares toward the rook, the rook to the
//!   square the king crossed.
//! * No move may leave the own king attacked. No legal move: checkmate (a loss) when in check, else stalemate
//!   (a draw).
//! * kibitz's draws: the third occurrence of a position (same side to move, same pieces, same castling rights
//!   and the same en passant captures possible); 100 plies without a capture or a pawn move unless the last
//!   move mated; and insufficient material (as kibitz documents it: no pawns, rooks or queens, and either at
//!   most one knight or bishop, or only bishops all on squares of one colour).

use kibitz::game::{Game, Outcome, Side};
use kibitz::games::chess::Chess;

use super::common::{self, Prng, Reference, Stats};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Color {
    White,
    Black,
}

impl Color {
    fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    fn forward(self) -> i32 {
        match self {
            Color::White => 1,
            Color::Black => -1,
        }
    }

    fn home_rank(self) -> i32 {
        match self {
            Color::White => 0,
            Color::Black => 7,
        }
    }

    fn side(self) -> Side {
        match self {
            Color::White => Side::First,
            Color::Black => Side::Second,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    King,
    Queen,
    Rook,
    Bishop,
    Knight,
    Pawn,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Piece {
    color: Color,
    kind: Kind,
}

type Grid = [[Option<Piece>; 8]; 8];
type Square = (i32, i32);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Special {
    None,
    DoubleStep,
    EnPassant,
    Castle,
    Promotion(Kind),
}

/// A move as (file, rank) squares; a castling move is the king's two-square move.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RefMove {
    from: Square,
    to: Square,
    special: Special,
}

/// Castling rights: `[White king side, White queen side, Black king side, Black queen side]`.
type Rights = [bool; 4];

/// What makes two positions the same for the repetition rule.
type Key = (Grid, Color, Rights, Option<Square>);

#[derive(Clone)]
pub struct RefChess {
    grid: Grid,
    to_move: Color,
    rights: Rights,
    /// The square a pawn just passed with its double step.
    en_passant: Option<Square>,
    /// Plies since the last capture or pawn move.
    quiet_plies: u32,
    history: Vec<Key>,
    played: Vec<RefMove>,
    repeat_bias: bool,
    /// Playouts of this game avoid captures (long games: the 50-move rule).
    quiet_bias: bool,
}

const ROOK_DIRECTIONS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRECTIONS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
const KNIGHT_JUMPS: [(i32, i32); 8] = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)];
const KING_STEPS: [(i32, i32); 8] = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)];

fn on_board((f, r): Square) -> bool {
    (0..8).contains(&f) && (0..8).contains(&r)
}

fn name((f, r): Square) -> String {
    format!("{}{}", (b'a' + f as u8) as char, r + 1)
}

fn letter(kind: Kind) -> char {
    match kind {
        Kind::King => 'k',
        Kind::Queen => 'q',
        Kind::Rook => 'r',
        Kind::Bishop => 'b',
        Kind::Knight => 'n',
        Kind::Pawn => 'p',
    }
}

fn at(grid: &Grid, (f, r): Square) -> Option<Piece> {
    grid[r as usize][f as usize]
}

fn set(grid: &mut Grid, (f, r): Square, p: Option<Piece>) {
    grid[r as usize][f as usize] = p;
}

/// `sq` is attacked by a piece of `by`.
fn attacked(grid: &Grid, sq: Square, by: Color) -> bool {
    let is = |s: Square, kinds: &[Kind]| {
        on_board(s) && matches!(at(grid, s), Some(p) if p.color == by && kinds.contains(&p.kind))
    };
    // Pawns of `by` attack diagonally forward (from `by`'s point of view), so look backward from `sq`.
    let back = -by.forward();
    if is((sq.0 - 1, sq.1 + back), &[Kind::Pawn]) || is((sq.0 + 1, sq.1 + back), &[Kind::Pawn]) {
        return true;
    }
    if KNIGHT_JUMPS.iter().any(|&(df, dr)| is((sq.0 + df, sq.1 + dr), &[Kind::Knight])) {
        return true;
    }
    if KING_STEPS.iter().any(|&(df, dr)| is((sq.0 + df, sq.1 + dr), &[Kind::King])) {
        return true;
    }
    for (directions, kinds) in
        [(ROOK_DIRECTIONS, [Kind::Rook, Kind::Queen]), (BISHOP_DIRECTIONS, [Kind::Bishop, Kind::Queen])]
    {
        for (df, dr) in directions {
            let mut s = (sq.0 + df, sq.1 + dr);
            while on_board(s) {
                if at(grid, s).is_some() {
                    if is(s, &kinds) {
                        return true;
                    }
                    break;
                }
                s = (s.0 + df, s.1 + dr);
            }
        }
    }
    false
}

/// The piece on `from` attacks `target` (for counting the pieces that give check).
fn attacks_from(grid: &Grid, from: Square, target: Square) -> bool {
    let p = at(grid, from).expect("a piece");
    let (df, dr) = (target.0 - from.0, target.1 - from.1);
    let clear_line = |step: (i32, i32)| {
        let mut s = (from.0 + step.0, from.1 + step.1);
        while s != target {
            if at(grid, s).is_some() {
                return false;
            }
            s = (s.0 + step.0, s.1 + step.1);
        }
        true
    };
    let straight = (df == 0) != (dr == 0);
    let diagonal = df != 0 && df.abs() == dr.abs();
    match p.kind {
        Kind::Pawn => dr == p.color.forward() && df.abs() == 1,
        Kind::Knight => KNIGHT_JUMPS.contains(&(df, dr)),
        Kind::King => KING_STEPS.contains(&(df, dr)),
        Kind::Rook => straight && clear_line((df.signum(), dr.signum())),
        Kind::Bishop => diagonal && clear_line((df.signum(), dr.signum())),
        Kind::Queen => (straight || diagonal) && clear_line((df.signum(), dr.signum())),
    }
}

fn king_square(grid: &Grid, color: Color) -> Square {
    for r in 0..8 {
        for f in 0..8 {
            if at(grid, (f, r)) == Some(Piece { color, kind: Kind::King }) {
                return (f, r);
            }
        }
    }
    panic!("no {color:?} king");
}

fn in_check(grid: &Grid, color: Color) -> bool {
    attacked(grid, king_square(grid, color), color.other())
}

impl RefChess {
    fn new(grid: Grid, to_move: Color, rights: Rights) -> Self {
        let mut c = RefChess {
            grid,
            to_move,
            rights,
            en_passant: None,
            quiet_plies: 0,
            history: Vec::new(),
            played: Vec::new(),
            repeat_bias: false,
            quiet_bias: false,
        };
        c.history.push(c.key());
        c
    }

    fn start() -> Self {
        let mut grid: Grid = [[None; 8]; 8];
        let back =
            [Kind::Rook, Kind::Knight, Kind::Bishop, Kind::Queen, Kind::King, Kind::Bishop, Kind::Knight, Kind::Rook];
        for (color, home, pawns) in [(Color::White, 0, 1), (Color::Black, 7, 6)] {
            for f in 0..8 {
                set(&mut grid, (f, home), Some(Piece { color, kind: back[f as usize] }));
                set(&mut grid, (f, pawns), Some(Piece { color, kind: Kind::Pawn }));
            }
        }
        RefChess::new(grid, Color::White, [true; 4])
    }

    /// The position for the repetition rule: the en passant square only when such a capture is legal.
    fn key(&self) -> Key {
        let ep = self.en_passant.filter(|_| self.moves().iter().any(|m| m.special == Special::EnPassant));
        (self.grid, self.to_move, self.rights, ep)
    }

    /// Moves by the pieces' rules, before the own king's safety (castling checks its own squares).
    fn pseudo_moves(&self) -> Vec<RefMove> {
        let mut out = Vec::new();
        let me = self.to_move;
        let grid = &self.grid;
        let mut add = |from: Square, to: Square, special: Special| out.push(RefMove { from, to, special });
        for r in 0..8 {
            for f in 0..8 {
                let from = (f, r);
                let Some(p) = at(grid, from) else { continue };
                if p.color != me {
                    continue;
                }
                let free_or_enemy = |s: Square| on_board(s) && at(grid, s).is_none_or(|q| q.color != me);
                match p.kind {
                    Kind::Pawn => {
                        let fwd = me.forward();
                        let last = me.other().home_rank();
                        let mut pawn_to = |to: Square, special: Special| {
                            if to.1 == last {
                                for k in [Kind::Queen, Kind::Rook, Kind::Bishop, Kind::Knight] {
                                    add(from, to, Special::Promotion(k));
                                }
                            } else {
                                add(from, to, special);
                            }
                        };
                        let one = (f, r + fwd);
                        if on_board(one) && at(grid, one).is_none() {
                            pawn_to(one, Special::None);
                            let two = (f, r + 2 * fwd);
                            if r == me.home_rank() + fwd && at(grid, two).is_none() {
                                pawn_to(two, Special::DoubleStep);
                            }
                        }
                        for df in [-1, 1] {
                            let to = (f + df, r + fwd);
                            if !on_board(to) {
                                continue;
                            }
                            if matches!(at(grid, to), Some(q) if q.color != me) {
                                pawn_to(to, Special::None);
                            } else if self.en_passant == Some(to) {
                                pawn_to(to, Special::EnPassant);
                            }
                        }
                    }
                    Kind::Knight => {
                        for (df, dr) in KNIGHT_JUMPS {
                            if free_or_enemy((f + df, r + dr)) {
                                add(from, (f + df, r + dr), Special::None);
                            }
                        }
                    }
                    Kind::King => {
                        for (df, dr) in KING_STEPS {
                            if free_or_enemy((f + df, r + dr)) {
                                add(from, (f + df, r + dr), Special::None);
                            }
                        }
                    }
                    Kind::Rook | Kind::Bishop | Kind::Queen => {
                        let directions: Vec<(i32, i32)> = match p.kind {
                            Kind::Rook => ROOK_DIRECTIONS.to_vec(),
                            Kind::Bishop => BISHOP_DIRECTIONS.to_vec(),
                            _ => [ROOK_DIRECTIONS, BISHOP_DIRECTIONS].concat(),
                        };
                        for (df, dr) in directions {
                            let mut to = (f + df, r + dr);
                            while on_board(to) {
                                match at(grid, to) {
                                    None => add(from, to, Special::None),
                                    Some(q) => {
                                        if q.color != me {
                                            add(from, to, Special::None);
                                        }
                                        break;
                                    }
                                }
                                to = (to.0 + df, to.1 + dr);
                            }
                        }
                    }
                }
            }
        }
        // Castling.
        let home = me.home_rank();
        let (king_side, queen_side) = if me == Color::White { (0, 1) } else { (2, 3) };
        let king = Some(Piece { color: me, kind: Kind::King });
        let rook = Some(Piece { color: me, kind: Kind::Rook });
        if at(grid, (4, home)) == king {
            for (right, rook_file, between, king_path) in
                [(king_side, 7, vec![5, 6], [4, 5, 6]), (queen_side, 0, vec![1, 2, 3], [4, 3, 2])]
            {
                if !self.rights[right] || at(grid, (rook_file, home)) != rook {
                    continue;
                }
                if between.iter().any(|&f| at(grid, (f, home)).is_some()) {
                    continue;
                }
                if king_path.iter().any(|&f| attacked(grid, (f, home), me.other())) {
                    continue;
                }
                out.push(RefMove { from: (4, home), to: (king_path[2], home), special: Special::Castle });
            }
        }
        out
    }

    fn after(&self, m: RefMove) -> Grid {
        let mut g = self.grid;
        let mut piece = at(&g, m.from);
        set(&mut g, m.from, None);
        match m.special {
            Special::EnPassant => set(&mut g, (m.to.0, m.from.1), None),
            Special::Castle => {
                let (rook_from, rook_to) = if m.to.0 == 6 { (7, 5) } else { (0, 3) };
                let rook = at(&g, (rook_from, m.from.1));
                set(&mut g, (rook_from, m.from.1), None);
                set(&mut g, (rook_to, m.from.1), rook);
            }
            Special::Promotion(kind) => piece = Some(Piece { color: self.to_move, kind }),
            Special::None | Special::DoubleStep => {}
        }
        set(&mut g, m.to, piece);
        g
    }

    fn moves(&self) -> Vec<RefMove> {
        self.pseudo_moves().into_iter().filter(|&m| !in_check(&self.after(m), self.to_move)).collect()
    }

    fn text(m: &RefMove) -> String {
        let promotion = match m.special {
            Special::Promotion(k) => letter(k).to_string(),
            _ => String::new(),
        };
        format!("{}{}{promotion}", name(m.from), name(m.to))
    }

    fn insufficient_material(&self) -> bool {
        let mut minors = Vec::new();
        for r in 0..8 {
            for f in 0..8 {
                match at(&self.grid, (f, r)) {
                    Some(Piece { kind: Kind::Pawn | Kind::Rook | Kind::Queen, .. }) => return false,
                    Some(Piece { kind: kind @ (Kind::Bishop | Kind::Knight), .. }) => minors.push((kind, (f + r) % 2)),
                    _ => {}
                }
            }
        }
        if minors.len() <= 1 {
            return true;
        }
        minors.iter().all(|&(k, _)| k == Kind::Bishop) && minors.iter().all(|&(_, colour)| colour == minors[0].1)
    }

    fn gives_check(&self, m: RefMove) -> bool {
        in_check(&self.after(m), self.to_move.other())
    }

    fn fen(&self) -> String {
        let mut rows = Vec::new();
        for r in (0..8).rev() {
            let mut row = String::new();
            let mut empty = 0;
            for f in 0..8 {
                match at(&self.grid, (f, r)) {
                    None => empty += 1,
                    Some(p) => {
                        if empty > 0 {
                            row.push_str(&empty.to_string());
                            empty = 0;
                        }
                        let c = letter(p.kind);
                        row.push(if p.color == Color::White { c.to_ascii_uppercase() } else { c });
                    }
                }
            }
            if empty > 0 {
                row.push_str(&empty.to_string());
            }
            rows.push(row);
        }
        let rights: String =
            ['K', 'Q', 'k', 'q'].iter().zip(self.rights).filter(|&(_, on)| on).map(|(c, _)| *c).collect();
        format!(
            "{} {} {} - 0 1",
            rows.join("/"),
            if self.to_move == Color::White { "w" } else { "b" },
            if rights.is_empty() { "-".to_string() } else { rights }
        )
    }
}

impl Reference for RefChess {
    type Move = RefMove;

    fn legal_moves(&self) -> Vec<(String, RefMove)> {
        self.moves().into_iter().map(|m| (Self::text(&m), m)).collect()
    }

    fn outcome(&self, legal: usize) -> Option<(Outcome, &'static str)> {
        let now = self.history.last().expect("the current position");
        if self.history.iter().filter(|&k| k == now).count() >= 3 {
            return Some((Outcome::Draw, "end: threefold repetition"));
        }
        let check = in_check(&self.grid, self.to_move);
        if self.quiet_plies >= 100 && !(check && legal == 0) {
            return Some((Outcome::Draw, "end: 50-move rule"));
        }
        if self.insufficient_material() {
            return Some((Outcome::Draw, "end: insufficient material"));
        }
        if legal == 0 {
            return Some(if check {
                (Outcome::Win(self.to_move.other().side()), "end: checkmate")
            } else {
                (Outcome::Draw, "end: stalemate")
            });
        }
        None
    }

    fn play(&mut self, m: &RefMove) {
        let piece = at(&self.grid, m.from).expect("a piece moves");
        let capture = at(&self.grid, m.to).is_some() || m.special == Special::EnPassant;
        self.grid = self.after(*m);
        // A king's move, or anything leaving or arriving on a rook's corner, ends those castling rights.
        for (i, corner) in [(7, 0), (0, 0), (7, 7), (0, 7)].into_iter().enumerate() {
            if m.from == corner || m.to == corner {
                self.rights[i] = false;
            }
        }
        if piece.kind == Kind::King {
            let (a, b) = if piece.color == Color::White { (0, 1) } else { (2, 3) };
            self.rights[a] = false;
            self.rights[b] = false;
        }
        self.en_passant =
            if m.special == Special::DoubleStep { Some((m.from.0, m.from.1 + piece.color.forward())) } else { None };
        self.quiet_plies = if capture || piece.kind == Kind::Pawn { 0 } else { self.quiet_plies + 1 };
        self.to_move = self.to_move.other();
        self.played.push(*m);
        let key = self.key();
        self.history.push(key);
    }

    fn features(&self, m: &RefMove) -> Vec<&'static str> {
        let mut f = Vec::new();
        match m.special {
            Special::Castle => f.push(if m.to.0 == 6 { "castling king side" } else { "castling queen side" }),
            Special::EnPassant => f.push("en passant"),
            Special::Promotion(Kind::Queen) => f.push("promotion to a queen"),
            Special::Promotion(_) => f.push("underpromotion"),
            Special::DoubleStep => f.push("double step"),
            Special::None => {}
        }
        if at(&self.grid, m.to).is_some() {
            f.push("capture");
        }
        if self.gives_check(*m) {
            f.push("check");
        }
        f
    }

    fn position_features(&self) -> Vec<&'static str> {
        let mut f = Vec::new();
        let me = self.to_move;
        let (kf, kr) = king_square(&self.grid, me);
        let checkers = (0..8)
            .flat_map(|r| (0..8).map(move |file| (file, r)))
            .filter(|&sq| {
                matches!(at(&self.grid, sq), Some(p) if p.color != me) && attacks_from(&self.grid, sq, (kf, kr))
            })
            .count();
        if checkers >= 1 {
            f.push("in check");
        }
        if checkers >= 2 {
            f.push("double check");
        }
        let pseudo = self.pseudo_moves();
        for m in &pseudo {
            let illegal = in_check(&self.after(*m), me);
            if m.special == Special::EnPassant && illegal {
                f.push("en passant refused: own king left attacked");
            }
            if illegal && at(&self.grid, m.from).is_some_and(|p| p.kind != Kind::King) && checkers == 0 {
                f.push("pinned piece");
            }
        }
        // Castling refused only because of an attacked square (rights and empty squares all there).
        let home = me.home_rank();
        if at(&self.grid, (4, home)) == Some(Piece { color: me, kind: Kind::King }) {
            let rights =
                if me == Color::White { [self.rights[0], self.rights[1]] } else { [self.rights[2], self.rights[3]] };
            for (i, (rook_file, between)) in [(7, vec![5, 6]), (0, vec![1, 2, 3])].into_iter().enumerate() {
                if rights[i]
                    && at(&self.grid, (rook_file, home)) == Some(Piece { color: me, kind: Kind::Rook })
                    && between.iter().all(|&file| at(&self.grid, (file, home)).is_none())
                    && !pseudo.iter().any(|m| m.special == Special::Castle && (m.to.0 == 6) == (i == 0))
                {
                    f.push("castling refused: king in check or crossing attack");
                }
            }
        }
        f.sort();
        f.dedup();
        f
    }

    fn weight(&self, m: &RefMove) -> u32 {
        let n = self.played.len();
        let mut w = 2;
        if self.repeat_bias && n >= 2 && self.played[n - 2].from == m.to && self.played[n - 2].to == m.from {
            w += 60;
        }
        let capture = at(&self.grid, m.to).is_some();
        if capture {
            w = if self.quiet_bias { 1 } else { w + 4 };
        }
        match m.special {
            Special::Castle | Special::EnPassant => w += 40,
            Special::Promotion(_) => w += 10,
            Special::DoubleStep => {
                let beside = [-1, 1].iter().any(|&df| {
                    let s = (m.to.0 + df, m.to.1);
                    on_board(s) && at(&self.grid, s) == Some(Piece { color: self.to_move.other(), kind: Kind::Pawn })
                });
                w += if beside { 40 } else { 3 };
            }
            Special::None => {}
        }
        if self.gives_check(*m) {
            w += 3;
        }
        w
    }
}

fn describe(g: &Chess, m: <Chess as Game>::Move) -> String {
    g.format_move(m)
}

/// A random position: the kings (apart), a random set of other pieces (no pawn on the first or last rank),
/// castling rights where king and rook stand at home, the side not to move not in check.
fn random_position(rng: &mut Prng) -> RefChess {
    loop {
        let mut grid: Grid = [[None; 8]; 8];
        // En passant: a pawn on its fifth rank and an enemy pawn beside it about to double-step, often with the
        // capturer's king on that rank and an enemy rook or queen there too (the capture may then be illegal).
        let en_passant = rng.chance(1, 4);
        let mut to_move = if rng.chance(1, 2) { Color::White } else { Color::Black };
        if en_passant {
            let capturer = to_move.other();
            let fifth = if capturer == Color::White { 4 } else { 3 };
            let pf = rng.below(8) as i32;
            let af = if pf == 0 || (pf < 7 && rng.chance(1, 2)) { pf + 1 } else { pf - 1 };
            set(&mut grid, (pf, fifth), Some(Piece { color: capturer, kind: Kind::Pawn }));
            set(&mut grid, (af, fifth - 2 * to_move.forward()), Some(Piece { color: to_move, kind: Kind::Pawn }));
            if rng.chance(2, 3) {
                for (color, kind) in
                    [(capturer, Kind::King), (to_move, if rng.chance(1, 2) { Kind::Rook } else { Kind::Queen })]
                {
                    let files: Vec<i32> =
                        (0..8).filter(|&f| f != pf && f != af && at(&grid, (f, fifth)).is_none()).collect();
                    set(&mut grid, (files[rng.below(files.len())], fifth), Some(Piece { color, kind }));
                }
            }
        }
        let castling = !en_passant && rng.chance(1, 2);
        for color in [Color::White, Color::Black] {
            let home = color.home_rank();
            if grid.iter().flatten().any(|&p| p == Some(Piece { color, kind: Kind::King })) {
                continue;
            }
            if castling {
                set(&mut grid, (4, home), Some(Piece { color, kind: Kind::King }));
                for f in [0, 7] {
                    if rng.chance(3, 4) {
                        set(&mut grid, (f, home), Some(Piece { color, kind: Kind::Rook }));
                    }
                }
            } else {
                loop {
                    let s = (rng.below(8) as i32, rng.below(8) as i32);
                    if at(&grid, s).is_none() {
                        set(&mut grid, s, Some(Piece { color, kind: Kind::King }));
                        break;
                    }
                }
            }
        }
        let pawns_only = rng.chance(1, 4);
        let no_pawns = !pawns_only && rng.chance(1, 4);
        let count = rng.below(14);
        for _ in 0..count {
            let color = if rng.chance(1, 2) { Color::White } else { Color::Black };
            let kind = if pawns_only {
                Kind::Pawn
            } else {
                let kinds = if no_pawns {
                    &[Kind::Queen, Kind::Rook, Kind::Rook, Kind::Bishop, Kind::Knight][..]
                } else {
                    &[Kind::Queen, Kind::Rook, Kind::Bishop, Kind::Knight, Kind::Pawn, Kind::Pawn, Kind::Pawn][..]
                };
                kinds[rng.below(kinds.len())]
            };
            let s = (rng.below(8) as i32, rng.below(8) as i32);
            if at(&grid, s).is_none() && (kind != Kind::Pawn || (1..7).contains(&s.1)) {
                set(&mut grid, s, Some(Piece { color, kind }));
            }
        }
        let (wk, bk) = (king_square(&grid, Color::White), king_square(&grid, Color::Black));
        if (wk.0 - bk.0).abs() <= 1 && (wk.1 - bk.1).abs() <= 1 {
            continue;
        }
        if !en_passant && rng.chance(1, 2) {
            to_move = to_move.other();
        }
        if in_check(&grid, to_move.other()) {
            continue;
        }
        let mut rights = [false; 4];
        for (i, (color, file)) in
            [(Color::White, 7), (Color::White, 0), (Color::Black, 7), (Color::Black, 0)].into_iter().enumerate()
        {
            let home = color.home_rank();
            rights[i] = at(&grid, (4, home)) == Some(Piece { color, kind: Kind::King })
                && at(&grid, (file, home)) == Some(Piece { color, kind: Kind::Rook });
        }
        return RefChess::new(grid, to_move, rights);
    }
}

fn setup(rng: &mut Prng, game: u64) -> (RefChess, Chess) {
    loop {
        let mut reference = if game.is_multiple_of(3) { RefChess::start() } else { random_position(rng) };
        reference.repeat_bias = rng.chance(1, 3);
        reference.quiet_bias = !reference.repeat_bias && rng.chance(1, 3);
        // cozy-chess refuses some positions no game can reach (three pieces giving check, a pawn and a bishop
        // checking together ...): draw another one.
        if let Ok(kibitz) = Chess::parse_position(&reference.fen(), None) {
            return (reference, kibitz);
        }
        assert!(!game.is_multiple_of(3), "the start position must be read");
    }
}

fn run(positions: u64, seed: u64) -> Stats {
    common::run(positions, seed, 3000, &setup, &describe)
}

#[test]
fn chess_agrees_with_the_reference_rules() {
    let stats = run(150_000, 1);
    stats.assert_clean(&[
        ("capture", 50_000),
        ("check", 50_000),
        ("in check", 5000),
        ("double check", 20),
        ("pinned piece", 1000),
        ("castling king side", 300),
        ("castling queen side", 200),
        ("castling refused: king in check or crossing attack", 300),
        ("double step", 20_000),
        ("en passant", 250),
        ("en passant refused: own king left attacked", 8),
        ("promotion to a queen", 1000),
        ("underpromotion", 3000),
        ("end: checkmate", 50),
        ("end: stalemate", 10),
        ("end: threefold repetition", 150),
        ("end: 50-move rule", 30),
        ("end: insufficient material", 200),
    ]);
}

#[test]
#[ignore = "long: a million positions or KIBITZ_DIFF_POSITIONS"]
fn chess_agrees_with_the_reference_rules_long() {
    run(common::long_run_positions(), 0xC4E5).assert_clean(&[]);
}
