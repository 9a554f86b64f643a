//! English checkers written from the printed rules, for clarity rather than speed: an 8x8 array of squares,
//! one loop per rule.
//!
//! The board is seen from Black's side of the numbering: row 0 holds squares 1-4, row 7 squares 29-32, and the
//! playable squares are those whose row and column have an odd sum. Black moves first, its men move toward
//! row 7 and are crowned there; White's men move toward row 0.
//!
//! * A man steps one square diagonally forward; a king one square diagonally in any direction.
//! * A man jumps an adjacent enemy piece diagonally forward (a king in any direction) onto the empty square
//!   beyond. Jumping is compulsory: when any jump exists, only jumps may be played (any of them, not
//!   necessarily the longest). After a jump the same piece must go on jumping while it can; a piece is never
//!   jumped twice.
//! * A man that reaches the far row becomes a king and its move ends there, even in the middle of a jump.
//! * A side that cannot move loses. kibitz's draw rules: the third occurrence of one position with one side to
//!   move, and 80 plies (40 moves by each side) without a capture or a man's move.

use kibitz::game::{Game, Outcome, Side};
use kibitz::games::checkers::{Checkers, Move};

use super::common::{self, Prng, Reference, Stats};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Color {
    Black,
    White,
}

impl Color {
    fn other(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// The row direction its men move in.
    fn forward(self) -> i32 {
        match self {
            Color::Black => 1,
            Color::White => -1,
        }
    }

    /// The row where its men are crowned.
    fn crown_row(self) -> i32 {
        match self {
            Color::Black => 7,
            Color::White => 0,
        }
    }

    fn side(self) -> Side {
        match self {
            Color::Black => Side::First,
            Color::White => Side::Second,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Piece {
    color: Color,
    king: bool,
}

type Grid = [[Option<Piece>; 8]; 8];

/// A move: every square the piece stands on (start, then each landing square), and the pieces it jumps.
#[derive(Clone, Debug)]
pub struct RefMove {
    path: Vec<(i32, i32)>,
    captured: Vec<(i32, i32)>,
}

#[derive(Clone)]
pub struct RefCheckers {
    grid: Grid,
    to_move: Color,
    /// Plies since the last capture or man's move.
    quiet_plies: u32,
    /// Every position of the game so far (the current one last), for repetitions.
    history: Vec<(Grid, Color)>,
}

/// The square number (1-32) of a playable square.
fn number(r: i32, c: i32) -> u32 {
    (4 * r + c / 2 + 1) as u32
}

fn square_of(n: u32) -> (i32, i32) {
    let r = ((n - 1) / 4) as i32;
    let k = ((n - 1) % 4) as i32;
    let c = if r % 2 == 0 { 2 * k + 1 } else { 2 * k };
    (r, c)
}

fn on_board(r: i32, c: i32) -> bool {
    (0..8).contains(&r) && (0..8).contains(&c)
}

const ALL_DIRECTIONS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

impl RefCheckers {
    fn new(grid: Grid, to_move: Color) -> Self {
        RefCheckers { grid, to_move, quiet_plies: 0, history: vec![(grid, to_move)] }
    }

    fn start() -> Self {
        let mut grid: Grid = [[None; 8]; 8];
        for n in 1..=12 {
            let (r, c) = square_of(n);
            grid[r as usize][c as usize] = Some(Piece { color: Color::Black, king: false });
        }
        for n in 21..=32 {
            let (r, c) = square_of(n);
            grid[r as usize][c as usize] = Some(Piece { color: Color::White, king: false });
        }
        RefCheckers::new(grid, Color::Black)
    }

    fn at(&self, r: i32, c: i32) -> Option<Piece> {
        self.grid[r as usize][c as usize]
    }

    fn directions(piece: Piece) -> Vec<(i32, i32)> {
        if piece.king {
            ALL_DIRECTIONS.to_vec()
        } else {
            let f = piece.color.forward();
            vec![(f, 1), (f, -1)]
        }
    }

    /// Continue a jump of `piece`, which started on `path[0]` and now stands on the last square of `path`.
    fn continue_jump(
        &self,
        piece: Piece,
        path: &mut Vec<(i32, i32)>,
        captured: &mut Vec<(i32, i32)>,
        out: &mut Vec<RefMove>,
    ) {
        let (r, c) = *path.last().expect("a path has a start");
        let mut went_on = false;
        for (dr, dc) in Self::directions(piece) {
            let (mr, mc) = (r + dr, c + dc);
            let (lr, lc) = (r + 2 * dr, c + 2 * dc);
            if !on_board(lr, lc) {
                continue;
            }
            let jumped = match self.at(mr, mc) {
                Some(p) => p.color != piece.color && !captured.contains(&(mr, mc)),
                None => false,
            };
            // The landing square must be empty; the square the piece started from is empty now.
            let empty = self.at(lr, lc).is_none() || (lr, lc) == path[0];
            if !jumped || !empty {
                continue;
            }
            went_on = true;
            path.push((lr, lc));
            captured.push((mr, mc));
            if !piece.king && lr == piece.color.crown_row() {
                // Crowned: the move ends here.
                out.push(RefMove { path: path.clone(), captured: captured.clone() });
            } else {
                self.continue_jump(piece, path, captured, out);
            }
            path.pop();
            captured.pop();
        }
        if !went_on && path.len() > 1 {
            out.push(RefMove { path: path.clone(), captured: captured.clone() });
        }
    }

    fn moves(&self) -> Vec<RefMove> {
        let mut jumps = Vec::new();
        let mut steps = Vec::new();
        for r in 0..8 {
            for c in 0..8 {
                let Some(piece) = self.at(r, c) else { continue };
                if piece.color != self.to_move {
                    continue;
                }
                self.continue_jump(piece, &mut vec![(r, c)], &mut Vec::new(), &mut jumps);
                for (dr, dc) in Self::directions(piece) {
                    let (tr, tc) = (r + dr, c + dc);
                    if on_board(tr, tc) && self.at(tr, tc).is_none() {
                        steps.push(RefMove { path: vec![(r, c), (tr, tc)], captured: Vec::new() });
                    }
                }
            }
        }
        if jumps.is_empty() { steps } else { jumps }
    }

    fn text(m: &RefMove) -> String {
        let sep = if m.captured.is_empty() { "-" } else { "x" };
        let path: Vec<String> = m.path.iter().map(|&(r, c)| number(r, c).to_string()).collect();
        let mut caps: Vec<u32> = m.captured.iter().map(|&(r, c)| number(r, c)).collect();
        caps.sort();
        let caps: Vec<String> = caps.iter().map(|n| n.to_string()).collect();
        format!("{}:{}", path.join(sep), caps.join(","))
    }

    /// The position as PDN FEN (`B:W21,K22:B1,2`).
    fn fen(&self) -> String {
        let mut out = String::from(if self.to_move == Color::Black { "B" } else { "W" });
        for color in [Color::White, Color::Black] {
            out.push_str(if color == Color::White { ":W" } else { ":B" });
            let mut squares = Vec::new();
            for n in 1..=32 {
                let (r, c) = square_of(n);
                if let Some(p) = self.at(r, c)
                    && p.color == color
                {
                    squares.push(format!("{}{n}", if p.king { "K" } else { "" }));
                }
            }
            out.push_str(&squares.join(","));
        }
        out
    }
}

impl Reference for RefCheckers {
    type Move = RefMove;

    fn legal_moves(&self) -> Vec<(String, RefMove)> {
        self.moves().into_iter().map(|m| (Self::text(&m), m)).collect()
    }

    fn outcome(&self, legal: usize) -> Option<(Outcome, &'static str)> {
        let now = (self.grid, self.to_move);
        if self.history.iter().filter(|&&p| p == now).count() >= 3 {
            return Some((Outcome::Draw, "end: threefold repetition"));
        }
        if self.quiet_plies >= 80 && legal > 0 {
            return Some((Outcome::Draw, "end: 40-move rule"));
        }
        if legal == 0 {
            return Some((Outcome::Win(self.to_move.other().side()), "end: no legal move"));
        }
        None
    }

    fn play(&mut self, m: &RefMove) {
        let (fr, fc) = m.path[0];
        let (tr, tc) = *m.path.last().expect("a move has an end");
        let mut piece = self.at(fr, fc).expect("a piece moves");
        self.grid[fr as usize][fc as usize] = None;
        for &(r, c) in &m.captured {
            self.grid[r as usize][c as usize] = None;
        }
        let man_moved = !piece.king;
        if tr == piece.color.crown_row() {
            piece.king = true;
        }
        self.grid[tr as usize][tc as usize] = Some(piece);
        self.quiet_plies = if man_moved || !m.captured.is_empty() { 0 } else { self.quiet_plies + 1 };
        self.to_move = self.to_move.other();
        self.history.push((self.grid, self.to_move));
    }

    fn features(&self, m: &RefMove) -> Vec<&'static str> {
        let (fr, fc) = m.path[0];
        let piece = self.at(fr, fc).expect("a piece moves");
        let (tr, _) = *m.path.last().expect("a move has an end");
        let mut f = Vec::new();
        match (piece.king, m.captured.len()) {
            (true, 0) => f.push("king step"),
            (true, _) => f.push("king jump"),
            (false, 0) => f.push("man step"),
            (false, _) => f.push("man jump"),
        }
        if m.captured.len() >= 2 {
            f.push("multiple jump");
        }
        if m.captured.len() >= 3 {
            f.push("jump of 3+");
        }
        if !piece.king && tr == piece.color.crown_row() {
            f.push(if m.captured.is_empty() { "crowning step" } else { "crowning jump" });
        }
        if !piece.king && !m.captured.is_empty() && tr == piece.color.crown_row() {
            // Would the new king have had another jump? Then the rule "the move ends" was exercised.
            let mut after = self.clone();
            after.play(m);
            after.to_move = piece.color;
            let king = Piece { color: piece.color, king: true };
            let mut more = Vec::new();
            after.continue_jump(king, &mut vec![m.path[m.path.len() - 1]], &mut Vec::new(), &mut more);
            if !more.is_empty() {
                f.push("crowning ends a jump");
            }
        }
        f
    }

    fn weight(&self, m: &RefMove) -> u32 {
        let (fr, fc) = m.path[0];
        let piece = self.at(fr, fc).expect("a piece moves");
        let (tr, _) = *m.path.last().expect("a move has an end");
        if !piece.king && tr == piece.color.crown_row() { 6 } else { 1 + m.captured.len() as u32 }
    }
}

/// kibitz's move in the reference's text: the path in PDN, a colon, the captured squares ascending.
fn describe(g: &Checkers, m: Move) -> String {
    let caps: Vec<String> = m.captured_squares().iter().map(|s| s.to_string()).collect();
    format!("{}:{}", g.format_move(m), caps.join(","))
}

/// A random legal-looking position: a few men and kings of each side (no man on its own crowning row).
fn random_position(rng: &mut Prng) -> RefCheckers {
    let mut grid: Grid = [[None; 8]; 8];
    for color in [Color::Black, Color::White] {
        let count = 1 + rng.below(7);
        let mut placed = 0;
        while placed < count {
            let (r, c) = square_of(1 + rng.below(32) as u32);
            if grid[r as usize][c as usize].is_some() {
                continue;
            }
            let king = rng.chance(2, 5) || r == color.crown_row();
            grid[r as usize][c as usize] = Some(Piece { color, king });
            placed += 1;
        }
    }
    RefCheckers::new(grid, if rng.chance(1, 2) { Color::Black } else { Color::White })
}

fn setup(rng: &mut Prng, game: u64) -> (RefCheckers, Checkers) {
    let reference = if game.is_multiple_of(3) { RefCheckers::start() } else { random_position(rng) };
    let fen = reference.fen();
    let kibitz = Checkers::parse_position(&fen, None).unwrap_or_else(|e| panic!("{fen}: {e}"));
    (reference, kibitz)
}

fn run(positions: u64, seed: u64) -> Stats {
    common::run(positions, seed, 1000, &setup, &describe)
}

#[test]
fn checkers_agrees_with_the_reference_rules() {
    let stats = run(200_000, 1);
    stats.assert_clean(&[
        ("man jump", 10_000),
        ("king jump", 4000),
        ("king step", 100_000),
        ("multiple jump", 2000),
        ("jump of 3+", 100),
        ("crowning step", 5000),
        ("crowning jump", 1000),
        ("crowning ends a jump", 100),
        ("end: no legal move", 1000),
        ("end: threefold repetition", 70),
        ("end: 40-move rule", 5),
    ]);
}

#[test]
#[ignore = "long: a million positions or KIBITZ_DIFF_POSITIONS"]
fn checkers_agrees_with_the_reference_rules_long() {
    run(common::long_run_positions(), 0xC4EC).assert_clean(&[]);
}
