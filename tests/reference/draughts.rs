//! International draughts (10x10, FMJD rules) written from the printed rules, for clarity rather than speed:
//! a 10x10 array of squares, one loop per rule.
//!
//! Row 0 is the top row as White sees the board (squares 1-5), row 9 the bottom (46-50); the playable squares
//! are those whose row and column have an odd sum. White moves first, its men move up and are crowned on row
//! 0; Black's men move down and are crowned on row 9.
//!
//! * A man steps one square diagonally forward. A king moves any distance along a diagonal over empty squares.
//! * Capturing is compulsory. A man captures an adjacent enemy piece forward or backward by jumping to the
//!   empty square beyond; a king captures an enemy piece at any distance on a diagonal (only empty squares
//!   between) and lands on any empty square beyond it (before the next piece). A capture goes on while it can.
//! * The sequence that captures the most pieces must be played (kings and men count the same).
//! * Captured pieces are removed only when the whole sequence is over: a piece is never jumped twice and a
//!   captured piece still on the board blocks; empty squares may be crossed again. The capturing piece's own
//!   start square is empty during its capture.
//! * A man is crowned when its move ends on the far row; passing it during a capture does not crown it.
//! * Two sequences with the same start, the same end and the same captured pieces are one move (kibitz's
//!   convention, from the rules: the move is what it does to the board).
//! * A side that cannot move loses. kibitz's draws: the third occurrence of one position with one side to
//!   move; 50 plies (25 moves each) of king moves without a capture; and the FMJD endgame rules: a lone king
//!   against three pieces including a king is a draw after 32 plies, against one or two pieces including a
//!   king after 10 plies, counted from the moment that material arises (a capture or a promotion can make it
//!   arise; a promotion inside the same class of material keeps the count).

use kibitz::game::{Game, Outcome, Side};
use kibitz::games::draughts::{Draughts, Move};

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
            Color::White => -1,
            Color::Black => 1,
        }
    }

    fn crown_row(self) -> i32 {
        match self {
            Color::White => 0,
            Color::Black => 9,
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
struct Piece {
    color: Color,
    king: bool,
}

type Grid = [[Option<Piece>; 10]; 10];

const DIRECTIONS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

/// A move: the squares the piece stands on (start, each landing square), the pieces captured in order, and a
/// few facts about how it was found, for the coverage counts.
#[derive(Clone, Debug)]
pub struct RefMove {
    path: Vec<(i32, i32)>,
    captured: Vec<(i32, i32)>,
    /// Shorter capture sequences existed in the position and were ruled out by the majority rule.
    majority_cut: bool,
    /// A man crossed the far row in the middle of its capture.
    passed_crown_row: bool,
    /// A captured piece, still on the board, stopped a king's ray or a man's jump in this sequence.
    blocked_by_captured: bool,
    /// The sequence landed on, or crossed, some square twice.
    recrossed: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Endgame {
    None,
    /// A lone king against one or two pieces including a king: 10 plies.
    Short,
    /// A lone king against three pieces including a king: 32 plies.
    Long,
}

#[derive(Clone)]
pub struct RefDraughts {
    grid: Grid,
    to_move: Color,
    /// Plies since the last capture or man's move.
    king_plies: u32,
    /// Plies played since the current endgame material arose.
    endgame_plies: u32,
    history: Vec<(Grid, Color)>,
    /// The start and end square of every move played, for the playouts' bias toward repetitions.
    played: Vec<((i32, i32), (i32, i32))>,
    /// Playouts of this game favour moving a king back where it came from.
    repeat_bias: bool,
    /// Playouts of this game favour moves after which the opponent has no capture (long king endings).
    safe_bias: bool,
}

fn number(r: i32, c: i32) -> u32 {
    (5 * r + c / 2 + 1) as u32
}

fn square_of(n: u32) -> (i32, i32) {
    let r = ((n - 1) / 5) as i32;
    let k = ((n - 1) % 5) as i32;
    let c = if r % 2 == 0 { 2 * k + 1 } else { 2 * k };
    (r, c)
}

fn on_board(r: i32, c: i32) -> bool {
    (0..10).contains(&r) && (0..10).contains(&c)
}

/// A capture in progress.
struct Capture {
    piece: Piece,
    path: Vec<(i32, i32)>,
    captured: Vec<(i32, i32)>,
    passed_crown_row: bool,
    blocked_by_captured: bool,
}

impl RefDraughts {
    fn new(grid: Grid, to_move: Color) -> Self {
        RefDraughts {
            grid,
            to_move,
            king_plies: 0,
            endgame_plies: 0,
            history: vec![(grid, to_move)],
            played: Vec::new(),
            repeat_bias: false,
            safe_bias: false,
        }
    }

    fn start() -> Self {
        let mut grid: Grid = [[None; 10]; 10];
        for n in 1..=20 {
            let (r, c) = square_of(n);
            grid[r as usize][c as usize] = Some(Piece { color: Color::Black, king: false });
        }
        for n in 31..=50 {
            let (r, c) = square_of(n);
            grid[r as usize][c as usize] = Some(Piece { color: Color::White, king: false });
        }
        RefDraughts::new(grid, Color::White)
    }

    fn at(&self, r: i32, c: i32) -> Option<Piece> {
        self.grid[r as usize][c as usize]
    }

    /// The square holds no piece, or only the capturing piece's own start square.
    fn empty_during(&self, cap: &Capture, r: i32, c: i32) -> bool {
        self.at(r, c).is_none() || (r, c) == cap.path[0]
    }

    fn is_enemy(&self, cap: &Capture, r: i32, c: i32) -> bool {
        matches!(self.at(r, c), Some(p) if p.color != cap.piece.color)
    }

    /// Every complete capture sequence from here (`cap` is restored on return).
    fn extend(&self, cap: &mut Capture, out: &mut Vec<RefMove>) {
        let (r, c) = *cap.path.last().expect("a path has a start");
        let mut went_on = false;
        for (dr, dc) in DIRECTIONS {
            // Find the piece to jump in this direction.
            let (mut tr, mut tc) = (r + dr, c + dc);
            if cap.piece.king {
                while on_board(tr, tc) && self.empty_during(cap, tr, tc) {
                    tr += dr;
                    tc += dc;
                }
            }
            if !on_board(tr, tc) || !self.is_enemy(cap, tr, tc) {
                continue;
            }
            if cap.captured.contains(&(tr, tc)) {
                // Already jumped: it cannot be jumped again, and it blocks.
                cap.blocked_by_captured = true;
                continue;
            }
            // The landing squares: the next one for a man, every empty one up to the next piece for a king.
            let (mut lr, mut lc) = (tr + dr, tc + dc);
            while on_board(lr, lc) && self.empty_during(cap, lr, lc) {
                went_on = true;
                let passed = cap.passed_crown_row;
                cap.path.push((lr, lc));
                cap.captured.push((tr, tc));
                self.extend(cap, out);
                cap.path.pop();
                cap.captured.pop();
                cap.passed_crown_row = passed;
                if !cap.piece.king {
                    break;
                }
                lr += dr;
                lc += dc;
            }
        }
        if !went_on && !cap.captured.is_empty() {
            let end = *cap.path.last().expect("a path has an end");
            let mut seen = cap.path.clone();
            // Squares crossed by the king between landings count too.
            for w in cap.path.windows(2) {
                let (dr, dc) = ((w[1].0 - w[0].0).signum(), (w[1].1 - w[0].1).signum());
                let (mut r, mut c) = (w[0].0 + dr, w[0].1 + dc);
                while (r, c) != w[1] {
                    if !cap.captured.contains(&(r, c)) {
                        seen.push((r, c));
                    }
                    r += dr;
                    c += dc;
                }
            }
            let distinct = {
                let mut s = seen.clone();
                s.sort();
                s.dedup();
                s.len()
            };
            let passed = !cap.piece.king
                && cap.path[1..cap.path.len() - 1].iter().any(|&(r, _)| r == cap.piece.color.crown_row())
                && end.0 != cap.piece.color.crown_row();
            out.push(RefMove {
                path: cap.path.clone(),
                captured: cap.captured.clone(),
                majority_cut: false,
                passed_crown_row: passed,
                blocked_by_captured: cap.blocked_by_captured,
                recrossed: distinct < seen.len(),
            });
        }
    }

    fn moves(&self) -> Vec<RefMove> {
        let mut captures = Vec::new();
        let mut steps = Vec::new();
        for r in 0..10 {
            for c in 0..10 {
                let Some(piece) = self.at(r, c) else { continue };
                if piece.color != self.to_move {
                    continue;
                }
                let mut cap = Capture {
                    piece,
                    path: vec![(r, c)],
                    captured: Vec::new(),
                    passed_crown_row: false,
                    blocked_by_captured: false,
                };
                self.extend(&mut cap, &mut captures);
                for (dr, dc) in DIRECTIONS {
                    if !piece.king && dr != piece.color.forward() {
                        continue;
                    }
                    let (mut tr, mut tc) = (r + dr, c + dc);
                    while on_board(tr, tc) && self.at(tr, tc).is_none() {
                        steps.push(RefMove {
                            path: vec![(r, c), (tr, tc)],
                            captured: Vec::new(),
                            majority_cut: false,
                            passed_crown_row: false,
                            blocked_by_captured: false,
                            recrossed: false,
                        });
                        if !piece.king {
                            break;
                        }
                        tr += dr;
                        tc += dc;
                    }
                }
            }
        }
        if captures.is_empty() {
            return steps;
        }
        let most = captures.iter().map(|m| m.captured.len()).max().expect("some capture");
        let cut = captures.iter().any(|m| m.captured.len() < most);
        captures.retain(|m| m.captured.len() == most);
        for m in &mut captures {
            m.majority_cut = cut;
        }
        captures
    }

    /// `from-to:captured` or `fromxto:captured`, the captured squares ascending.
    fn text(m: &RefMove) -> String {
        let (fr, fc) = m.path[0];
        let (tr, tc) = *m.path.last().expect("a move has an end");
        let sep = if m.captured.is_empty() { "-" } else { "x" };
        let mut caps: Vec<u32> = m.captured.iter().map(|&(r, c)| number(r, c)).collect();
        caps.sort();
        let caps: Vec<String> = caps.iter().map(|n| n.to_string()).collect();
        format!("{}{sep}{}:{}", number(fr, fc), number(tr, tc), caps.join(","))
    }

    fn pieces(&self, color: Color) -> (usize, usize) {
        let (mut men, mut kings) = (0, 0);
        for row in &self.grid {
            for p in row.iter().flatten() {
                if p.color == color {
                    if p.king {
                        kings += 1;
                    } else {
                        men += 1;
                    }
                }
            }
        }
        (men, kings)
    }

    fn endgame(&self) -> Endgame {
        for (strong, weak) in [(Color::White, Color::Black), (Color::Black, Color::White)] {
            if self.pieces(weak) != (0, 1) {
                continue;
            }
            let (men, kings) = self.pieces(strong);
            if kings == 0 {
                continue;
            }
            match men + kings {
                1 | 2 => return Endgame::Short,
                3 => return Endgame::Long,
                _ => {}
            }
        }
        Endgame::None
    }

    fn fen(&self) -> String {
        let mut out = String::from(if self.to_move == Color::White { "W" } else { "B" });
        for color in [Color::White, Color::Black] {
            out.push_str(if color == Color::White { ":W" } else { ":B" });
            let mut squares = Vec::new();
            for n in 1..=50 {
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

impl Reference for RefDraughts {
    type Move = RefMove;

    fn legal_moves(&self) -> Vec<(String, RefMove)> {
        // Sequences with the same start, end and captured pieces are one move: keep the first path of each.
        let mut out: Vec<(String, RefMove)> = Vec::new();
        for m in self.moves() {
            let text = Self::text(&m);
            if !out.iter().any(|(t, _)| *t == text) {
                out.push((text, m));
            }
        }
        out
    }

    fn outcome(&self, legal: usize) -> Option<(Outcome, &'static str)> {
        let now = (self.grid, self.to_move);
        if self.history.iter().filter(|&&p| p == now).count() >= 3 {
            return Some((Outcome::Draw, "end: threefold repetition"));
        }
        if self.king_plies >= 50 && legal > 0 {
            return Some((Outcome::Draw, "end: 25-move rule"));
        }
        match self.endgame() {
            Endgame::Long if self.endgame_plies >= 32 && legal > 0 => {
                return Some((Outcome::Draw, "end: 16-move endgame rule"));
            }
            Endgame::Short if self.endgame_plies >= 10 && legal > 0 => {
                return Some((Outcome::Draw, "end: 5-move endgame rule"));
            }
            _ => {}
        }
        if legal == 0 {
            return Some((Outcome::Win(self.to_move.other().side()), "end: no legal move"));
        }
        None
    }

    fn play(&mut self, m: &RefMove) {
        let before = self.endgame();
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
        self.king_plies = if man_moved || !m.captured.is_empty() { 0 } else { self.king_plies + 1 };
        let after = self.endgame();
        self.endgame_plies =
            if after != Endgame::None && after == before && m.captured.is_empty() { self.endgame_plies + 1 } else { 0 };
        self.to_move = self.to_move.other();
        self.history.push((self.grid, self.to_move));
        self.played.push(((fr, fc), (tr, tc)));
    }

    fn features(&self, m: &RefMove) -> Vec<&'static str> {
        let (fr, fc) = m.path[0];
        let piece = self.at(fr, fc).expect("a piece moves");
        let (tr, tc) = *m.path.last().expect("a move has an end");
        let mut f = Vec::new();
        match (piece.king, m.captured.len()) {
            (true, 0) if (tr - fr).abs() > 1 => f.push("king flying move"),
            (true, 0) => f.push("king step"),
            (true, _) => f.push("king capture"),
            (false, 0) => f.push("man step"),
            (false, _) => f.push("man capture"),
        }
        if !piece.king
            && !m.captured.is_empty()
            && m.path.windows(2).any(|w| (w[1].0 - w[0].0) != 2 * piece.color.forward())
        {
            f.push("man captures backward");
        }
        if piece.king && m.path.windows(2).any(|w| (w[1].0 - w[0].0).abs() > 2) {
            f.push("king captures at distance");
        }
        if m.captured.len() >= 3 {
            f.push("capture of 3+");
        }
        if m.captured.len() >= 5 {
            f.push("capture of 5+");
        }
        if m.majority_cut {
            f.push("majority rule");
        }
        if m.passed_crown_row {
            f.push("man passes the crowning row");
        }
        if m.blocked_by_captured {
            f.push("captured piece blocks");
        }
        if m.recrossed {
            f.push("square crossed twice");
        }
        if (tr, tc) == (fr, fc) {
            f.push("capture back to its start");
        }
        if !piece.king && tr == piece.color.crown_row() {
            f.push("crowning");
        }
        f
    }

    fn weight(&self, m: &RefMove) -> u32 {
        let (fr, fc) = m.path[0];
        let piece = self.at(fr, fc).expect("a piece moves");
        let (tr, tc) = *m.path.last().expect("a move has an end");
        let undoes_own_last = self.played.len() >= 2 && self.played[self.played.len() - 2] == ((tr, tc), (fr, fc));
        if !piece.king && tr == piece.color.crown_row() {
            8
        } else if self.repeat_bias && undoes_own_last && m.captured.is_empty() {
            // Going back where it came from: repetitions.
            30
        } else if self.safe_bias && m.captured.is_empty() {
            let mut after = self.clone();
            after.play(m);
            if after.moves().iter().all(|m| m.captured.is_empty()) { 20 } else { 1 }
        } else {
            1
        }
    }
}

/// kibitz's move in the reference's text: from, `-` or `x`, to, a colon, the captured squares ascending.
fn describe(_: &Draughts, m: Move) -> String {
    let caps: Vec<String> = m.captured_squares().iter().map(|s| s.to_string()).collect();
    let sep = if caps.is_empty() { "-" } else { "x" };
    format!("{}{sep}{}:{}", m.from_square(), m.to_square(), caps.join(","))
}

/// A random position: a few men and kings of each side (no man on its own crowning row); often an endgame
/// of the FMJD draw rules, or one promotion away from it.
fn random_position(rng: &mut Prng) -> RefDraughts {
    let mut grid: Grid = [[None; 10]; 10];
    let endgame = rng.chance(1, 3);
    let kings_only = !endgame && rng.chance(1, 2);
    for color in [Color::White, Color::Black] {
        let count = if endgame {
            if color == Color::Black { 1 } else { 1 + rng.below(4) }
        } else if kings_only {
            2 + rng.below(3)
        } else {
            1 + rng.below(12)
        };
        let mut placed = 0;
        while placed < count {
            let (r, c) = square_of(1 + rng.below(50) as u32);
            if grid[r as usize][c as usize].is_some() {
                continue;
            }
            let king = if endgame { color == Color::Black || rng.chance(1, 3) } else { kings_only || rng.chance(1, 3) };
            let king = king || r == color.crown_row();
            grid[r as usize][c as usize] = Some(Piece { color, king });
            placed += 1;
        }
    }
    if endgame && rng.chance(1, 2) {
        // Swap the colours, so that either side may be the lone king.
        for row in grid.iter_mut() {
            for p in row.iter_mut().flatten() {
                p.color = p.color.other();
            }
        }
        grid.reverse();
        for row in grid.iter_mut() {
            row.reverse();
        }
    }
    let mut position = RefDraughts::new(grid, if rng.chance(1, 2) { Color::White } else { Color::Black });
    position.safe_bias = kings_only;
    position
}

fn setup(rng: &mut Prng, game: u64) -> (RefDraughts, Draughts) {
    let mut reference = if game.is_multiple_of(3) { RefDraughts::start() } else { random_position(rng) };
    reference.repeat_bias = rng.chance(1, 3);
    let fen = reference.fen();
    let kibitz = Draughts::parse_position(&fen, None).unwrap_or_else(|e| panic!("{fen}: {e}"));
    (reference, kibitz)
}

fn run(positions: u64, seed: u64) -> Stats {
    common::run(positions, seed, 2000, &setup, &describe)
}

#[test]
fn draughts_agrees_with_the_reference_rules() {
    let stats = run(150_000, 1);
    stats.assert_clean(&[
        ("man capture", 10_000),
        ("man captures backward", 2000),
        ("king capture", 5000),
        ("king captures at distance", 50_000),
        ("king flying move", 100_000),
        ("capture of 3+", 1000),
        ("capture of 5+", 50),
        ("majority rule", 2000),
        ("man passes the crowning row", 60),
        ("captured piece blocks", 10_000),
        ("square crossed twice", 50),
        ("capture back to its start", 3),
        ("crowning", 1500),
        ("end: no legal move", 800),
        ("end: threefold repetition", 40),
        ("end: 25-move rule", 30),
        ("end: 5-move endgame rule", 100),
        ("end: 16-move endgame rule", 20),
    ]);
}

#[test]
#[ignore = "long: a million positions or KIBITZ_DIFF_POSITIONS"]
fn draughts_agrees_with_the_reference_rules_long() {
    run(common::long_run_positions(), 0xD7A6).assert_clean(&[]);
}
