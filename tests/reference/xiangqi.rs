//! Xiangqi written from the printed rules, for clarity rather than speed: a 10x9 array of points, one function
//! per piece, legality by playing the move and looking at the position.
//!
//! Ranks 0-9 run from Red's side, files 0-8 (ICCS `A`-`I`) from Red's left. Red moves first.
//!
//! * General: one step along a rank or file, inside its palace (files 3-5, ranks 0-2 for Red, 7-9 for Black).
//! * Advisor: one step diagonally, inside its palace.
//! * Elephant: two steps diagonally, not over an occupied point (the eye), never across the river.
//! * Horse: one step along a rank or file then one diagonally outward; the first point (the leg) must be empty.
//! * Chariot: any distance along a rank or file over empty points.
//! * Cannon: moves like a chariot; captures by jumping exactly one piece (the screen) along a rank or file.
//! * Soldier: one step forward; once across the river, also one step sideways. Never backward.
//! * No move may leave its own general attacked, nor the two generals facing each other on a file with nothing
//!   between them.
//! * A side with no legal move loses (checkmate and stalemate alike).
//! * kibitz's repetition rule: at the third occurrence of a position (same side to move), the moves since its
//!   previous occurrence are the cycle; a side that gave check with every one of its moves of the cycle while
//!   the other did not loses (perpetual check), any other repetition draws. 120 plies without a capture draw.

use kibitz::game::{Game, Outcome, Side};
use kibitz::games::xiangqi::{Move, Xiangqi};

use super::common::{self, Prng, Reference, Stats};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Color {
    Red,
    Black,
}

impl Color {
    fn other(self) -> Color {
        match self {
            Color::Red => Color::Black,
            Color::Black => Color::Red,
        }
    }

    fn forward(self) -> i32 {
        match self {
            Color::Red => 1,
            Color::Black => -1,
        }
    }

    /// The point is on this side's half of the board.
    fn own_half(self, rank: i32) -> bool {
        match self {
            Color::Red => rank <= 4,
            Color::Black => rank >= 5,
        }
    }

    fn in_palace(self, file: i32, rank: i32) -> bool {
        let ranks = match self {
            Color::Red => 0..=2,
            Color::Black => 7..=9,
        };
        (3..=5).contains(&file) && ranks.contains(&rank)
    }

    fn side(self) -> Side {
        match self {
            Color::Red => Side::First,
            Color::Black => Side::Second,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    General,
    Advisor,
    Elephant,
    Horse,
    Chariot,
    Cannon,
    Soldier,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Piece {
    color: Color,
    kind: Kind,
}

/// `grid[rank][file]`.
type Grid = [[Option<Piece>; 9]; 10];

/// A move from one point to another, as (file, rank).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RefMove {
    from: (i32, i32),
    to: (i32, i32),
}

#[derive(Clone)]
pub struct RefXiangqi {
    grid: Grid,
    to_move: Color,
    /// Plies since the last capture.
    quiet_plies: u32,
    /// Every position of the game (the current one last).
    history: Vec<(Grid, Color)>,
    /// For every move played: whether it gave check.
    gave_check: Vec<bool>,
    played: Vec<RefMove>,
    /// Playouts of this game favour moving a piece back where it came from.
    repeat_bias: bool,
    /// Playouts of this game favour checks (with `repeat_bias`: perpetual checks).
    check_bias: bool,
}

const ORTHOGONAL: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const DIAGONAL: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

fn on_board(file: i32, rank: i32) -> bool {
    (0..9).contains(&file) && (0..10).contains(&rank)
}

fn letter(kind: Kind) -> char {
    match kind {
        Kind::General => 'k',
        Kind::Advisor => 'a',
        Kind::Elephant => 'b',
        Kind::Horse => 'n',
        Kind::Chariot => 'r',
        Kind::Cannon => 'c',
        Kind::Soldier => 'p',
    }
}

fn point_name((file, rank): (i32, i32)) -> String {
    format!("{}{}", (b'A' + file as u8) as char, rank)
}

impl RefXiangqi {
    fn new(grid: Grid, to_move: Color) -> Self {
        RefXiangqi {
            grid,
            to_move,
            quiet_plies: 0,
            history: vec![(grid, to_move)],
            gave_check: Vec::new(),
            played: Vec::new(),
            repeat_bias: false,
            check_bias: false,
        }
    }

    fn start() -> Self {
        let mut grid: Grid = [[None; 9]; 10];
        let back = [
            Kind::Chariot,
            Kind::Horse,
            Kind::Elephant,
            Kind::Advisor,
            Kind::General,
            Kind::Advisor,
            Kind::Elephant,
            Kind::Horse,
            Kind::Chariot,
        ];
        for (color, back_rank, cannon_rank, soldier_rank) in [(Color::Red, 0, 2, 3), (Color::Black, 9, 7, 6)] {
            for (file, &kind) in back.iter().enumerate() {
                grid[back_rank][file] = Some(Piece { color, kind });
            }
            for file in [1, 7] {
                grid[cannon_rank][file] = Some(Piece { color, kind: Kind::Cannon });
            }
            for file in [0, 2, 4, 6, 8] {
                grid[soldier_rank][file] = Some(Piece { color, kind: Kind::Soldier });
            }
        }
        RefXiangqi::new(grid, Color::Red)
    }

    fn at(grid: &Grid, (file, rank): (i32, i32)) -> Option<Piece> {
        grid[rank as usize][file as usize]
    }

    /// The moves of the piece on `from` by its own rules, before looking at its general's safety. Each target
    /// is empty or holds an enemy piece. `notes` collects what the rules refused on the way.
    fn piece_moves(grid: &Grid, from: (i32, i32), notes: &mut Vec<&'static str>) -> Vec<(i32, i32)> {
        let piece = Self::at(grid, from).expect("a piece");
        let (f, r) = from;
        let mut targets = Vec::new();
        let free_or_enemy =
            |t: (i32, i32)| on_board(t.0, t.1) && Self::at(grid, t).is_none_or(|p| p.color != piece.color);
        match piece.kind {
            Kind::General => {
                for (df, dr) in ORTHOGONAL {
                    let t = (f + df, r + dr);
                    if piece.color.in_palace(t.0, t.1) && free_or_enemy(t) {
                        targets.push(t);
                    }
                }
            }
            Kind::Advisor => {
                for (df, dr) in DIAGONAL {
                    let t = (f + df, r + dr);
                    if piece.color.in_palace(t.0, t.1) && free_or_enemy(t) {
                        targets.push(t);
                    }
                }
            }
            Kind::Elephant => {
                for (df, dr) in DIAGONAL {
                    let t = (f + 2 * df, r + 2 * dr);
                    if !on_board(t.0, t.1) || !piece.color.own_half(t.1) || !free_or_enemy(t) {
                        continue;
                    }
                    if Self::at(grid, (f + df, r + dr)).is_some() {
                        notes.push("elephant eye blocked");
                        continue;
                    }
                    targets.push(t);
                }
            }
            Kind::Horse => {
                for (df, dr) in ORTHOGONAL {
                    let leg = (f + df, r + dr);
                    // The two diagonal steps outward from the leg.
                    let outward = if df == 0 { [(1, dr), (-1, dr)] } else { [(df, 1), (df, -1)] };
                    for (ef, er) in outward {
                        let t = (leg.0 + ef, leg.1 + er);
                        if !free_or_enemy(t) {
                            continue;
                        }
                        if Self::at(grid, leg).is_some() {
                            notes.push("horse leg blocked");
                            continue;
                        }
                        targets.push(t);
                    }
                }
            }
            Kind::Chariot => {
                for (df, dr) in ORTHOGONAL {
                    let mut t = (f + df, r + dr);
                    while on_board(t.0, t.1) {
                        match Self::at(grid, t) {
                            None => targets.push(t),
                            Some(p) => {
                                if p.color != piece.color {
                                    targets.push(t);
                                }
                                break;
                            }
                        }
                        t = (t.0 + df, t.1 + dr);
                    }
                }
            }
            Kind::Cannon => {
                for (df, dr) in ORTHOGONAL {
                    let mut t = (f + df, r + dr);
                    // Empty points before the screen.
                    while on_board(t.0, t.1) && Self::at(grid, t).is_none() {
                        targets.push(t);
                        t = (t.0 + df, t.1 + dr);
                    }
                    // `t` is the screen (or off the board); the first piece beyond it may be captured.
                    t = (t.0 + df, t.1 + dr);
                    while on_board(t.0, t.1) {
                        if let Some(p) = Self::at(grid, t) {
                            if p.color != piece.color {
                                targets.push(t);
                            }
                            break;
                        }
                        t = (t.0 + df, t.1 + dr);
                    }
                }
            }
            Kind::Soldier => {
                let fwd = (f, r + piece.color.forward());
                if free_or_enemy(fwd) {
                    targets.push(fwd);
                }
                if !piece.color.own_half(r) {
                    for t in [(f - 1, r), (f + 1, r)] {
                        if free_or_enemy(t) {
                            targets.push(t);
                            notes.push("soldier sideways");
                        }
                    }
                }
            }
        }
        targets
    }

    fn general(grid: &Grid, color: Color) -> (i32, i32) {
        for rank in 0..10 {
            for file in 0..9 {
                if Self::at(grid, (file, rank)) == Some(Piece { color, kind: Kind::General }) {
                    return (file, rank);
                }
            }
        }
        panic!("no {color:?} general");
    }

    /// `color`'s general can be captured by a move of the other side (by the rules of its pieces).
    fn attacked(grid: &Grid, color: Color) -> bool {
        let g = Self::general(grid, color);
        let mut notes = Vec::new();
        for rank in 0..10 {
            for file in 0..9 {
                if let Some(p) = Self::at(grid, (file, rank))
                    && p.color != color
                    && Self::piece_moves(grid, (file, rank), &mut notes).contains(&g)
                {
                    return true;
                }
            }
        }
        false
    }

    /// The two generals stand on one file with no piece between them.
    fn generals_face(grid: &Grid) -> bool {
        let (rf, rr) = Self::general(grid, Color::Red);
        let (bf, br) = Self::general(grid, Color::Black);
        rf == bf && (rr + 1..br).all(|rank| Self::at(grid, (rf, rank)).is_none())
    }

    fn after(grid: &Grid, m: RefMove) -> Grid {
        let mut g = *grid;
        let piece = Self::at(&g, m.from);
        g[m.from.1 as usize][m.from.0 as usize] = None;
        g[m.to.1 as usize][m.to.0 as usize] = piece;
        g
    }

    fn moves_and_notes(&self) -> (Vec<RefMove>, Vec<&'static str>) {
        let mut notes = Vec::new();
        let mut legal = Vec::new();
        for rank in 0..10 {
            for file in 0..9 {
                let Some(p) = Self::at(&self.grid, (file, rank)) else { continue };
                if p.color != self.to_move {
                    continue;
                }
                for to in Self::piece_moves(&self.grid, (file, rank), &mut notes) {
                    let m = RefMove { from: (file, rank), to };
                    let g = Self::after(&self.grid, m);
                    if Self::generals_face(&g) {
                        notes.push("move refused: generals would face");
                    } else if Self::attacked(&g, self.to_move) {
                        notes.push("move refused: general left attacked");
                    } else {
                        legal.push(m);
                    }
                }
            }
        }
        (legal, notes)
    }

    fn gives_check(&self, m: RefMove) -> bool {
        Self::attacked(&Self::after(&self.grid, m), self.to_move.other())
    }

    fn fen(&self) -> String {
        let mut rows = Vec::new();
        for rank in (0..10).rev() {
            let mut row = String::new();
            let mut empty = 0;
            for file in 0..9 {
                match Self::at(&self.grid, (file, rank)) {
                    None => empty += 1,
                    Some(p) => {
                        if empty > 0 {
                            row.push_str(&empty.to_string());
                            empty = 0;
                        }
                        let c = letter(p.kind);
                        row.push(if p.color == Color::Red { c.to_ascii_uppercase() } else { c });
                    }
                }
            }
            if empty > 0 {
                row.push_str(&empty.to_string());
            }
            rows.push(row);
        }
        format!("{} {} - - 0 1", rows.join("/"), if self.to_move == Color::Red { "w" } else { "b" })
    }
}

impl Reference for RefXiangqi {
    type Move = RefMove;

    fn legal_moves(&self) -> Vec<(String, RefMove)> {
        let (legal, _) = self.moves_and_notes();
        legal.into_iter().map(|m| (format!("{}-{}", point_name(m.from), point_name(m.to)), m)).collect()
    }

    fn outcome(&self, legal: usize) -> Option<(Outcome, &'static str)> {
        let now = (self.grid, self.to_move);
        let seen: Vec<usize> = (0..self.history.len()).filter(|&i| self.history[i] == now).collect();
        if seen.len() >= 3 {
            // The cycle: the moves since the previous occurrence. The side that just moved made the last one.
            let previous = seen[seen.len() - 2];
            let cycle = &self.gave_check[previous..];
            let n = cycle.len();
            let mover_all_checks = (0..n).filter(|i| (n - 1 - i).is_multiple_of(2)).all(|i| cycle[i]);
            let other_all_checks = (0..n).filter(|i| (n - 1 - i) % 2 == 1).all(|i| cycle[i]);
            let mover = self.to_move.other();
            return Some(match (mover_all_checks, other_all_checks) {
                (true, false) => (Outcome::Win(self.to_move.side()), "end: perpetual check by the side that moved"),
                (false, true) => (Outcome::Win(mover.side()), "end: perpetual check by the side to move"),
                _ => (Outcome::Draw, "end: repetition"),
            });
        }
        if self.quiet_plies >= 120 && legal > 0 {
            return Some((Outcome::Draw, "end: 60-move rule"));
        }
        if legal == 0 {
            let reason = if Self::attacked(&self.grid, self.to_move) { "end: checkmate" } else { "end: stalemate" };
            return Some((Outcome::Win(self.to_move.other().side()), reason));
        }
        None
    }

    fn play(&mut self, m: &RefMove) {
        let capture = Self::at(&self.grid, m.to).is_some();
        let check = self.gives_check(*m);
        self.grid = Self::after(&self.grid, *m);
        self.quiet_plies = if capture { 0 } else { self.quiet_plies + 1 };
        self.to_move = self.to_move.other();
        self.history.push((self.grid, self.to_move));
        self.gave_check.push(check);
        self.played.push(*m);
    }

    fn features(&self, m: &RefMove) -> Vec<&'static str> {
        let piece = Self::at(&self.grid, m.from).expect("a piece moves");
        let mut f = Vec::new();
        if let Some(victim) = Self::at(&self.grid, m.to) {
            f.push(match piece.kind {
                Kind::Cannon => "cannon capture",
                Kind::Horse => "horse capture",
                Kind::Soldier => "soldier capture",
                Kind::General => "general capture",
                _ => "other capture",
            });
            if victim.kind == Kind::General {
                f.push("BUG: captures a general");
            }
        }
        if self.gives_check(*m) {
            f.push("check");
        }
        f
    }

    fn position_features(&self) -> Vec<&'static str> {
        let (_, mut notes) = self.moves_and_notes();
        if Self::attacked(&self.grid, self.to_move) {
            notes.push("in check");
        }
        notes.sort();
        notes.dedup();
        notes
    }

    fn weight(&self, m: &RefMove) -> u32 {
        let n = self.played.len();
        let mut w = 1;
        if self.repeat_bias && n >= 2 && self.played[n - 2] == (RefMove { from: m.to, to: m.from }) {
            w += 30;
        }
        if Self::at(&self.grid, m.to).is_some() {
            w += 3;
        }
        if self.gives_check(*m) {
            w += if self.check_bias { 40 } else { 4 };
        }
        w
    }
}

fn describe(g: &Xiangqi, m: Move) -> String {
    g.format_move(m)
}

/// A random position: both generals, a random subset of the other pieces on points they may stand on, the
/// side not to move not in check and the generals not facing.
fn random_position(rng: &mut Prng) -> RefXiangqi {
    loop {
        let mut grid: Grid = [[None; 9]; 10];
        for color in [Color::Red, Color::Black] {
            let flip = |(f, r): (i32, i32)| if color == Color::Red { (f, r) } else { (f, 9 - r) };
            let palace: Vec<(i32, i32)> = (3..=5).flat_map(|f| (0..=2).map(move |r| (f, r))).collect();
            let advisor_points = [(3, 0), (5, 0), (4, 1), (3, 2), (5, 2)];
            let elephant_points = [(2, 0), (6, 0), (0, 2), (4, 2), (8, 2), (2, 4), (6, 4)];
            let mut soldier_points: Vec<(i32, i32)> = vec![(0, 3), (2, 3), (4, 3), (6, 3), (8, 3)];
            soldier_points.extend([0, 2, 4, 6, 8].map(|f| (f, 4)));
            soldier_points.extend((5..10).flat_map(|r| (0..9).map(move |f| (f, r))));
            let anywhere: Vec<(i32, i32)> = (0..10).flat_map(|r| (0..9).map(move |f| (f, r))).collect();
            let mut put = |kind: Kind, points: &[(i32, i32)], rng: &mut Prng| {
                for _ in 0..20 {
                    let (f, r) = flip(points[rng.below(points.len())]);
                    if grid[r as usize][f as usize].is_none() {
                        grid[r as usize][f as usize] = Some(Piece { color, kind });
                        return;
                    }
                }
            };
            put(Kind::General, &palace, rng);
            let keep = 2 + rng.below(5);
            for (kind, count, points) in [
                (Kind::Advisor, 2, &advisor_points[..]),
                (Kind::Elephant, 2, &elephant_points[..]),
                (Kind::Horse, 2, &anywhere[..]),
                (Kind::Chariot, 2, &anywhere[..]),
                (Kind::Cannon, 2, &anywhere[..]),
                (Kind::Soldier, 5, &soldier_points[..]),
            ] {
                for _ in 0..count {
                    if rng.below(8) < keep {
                        put(kind, points, rng);
                    }
                }
            }
        }
        let to_move = if rng.chance(1, 2) { Color::Red } else { Color::Black };
        let complete = [Color::Red, Color::Black]
            .iter()
            .all(|&c| grid.iter().flatten().any(|p| *p == Some(Piece { color: c, kind: Kind::General })));
        if complete && !RefXiangqi::generals_face(&grid) && !RefXiangqi::attacked(&grid, to_move.other()) {
            return RefXiangqi::new(grid, to_move);
        }
    }
}

fn setup(rng: &mut Prng, game: u64) -> (RefXiangqi, Xiangqi) {
    let mut reference = if game.is_multiple_of(3) { RefXiangqi::start() } else { random_position(rng) };
    reference.repeat_bias = rng.chance(1, 2);
    reference.check_bias = rng.chance(1, 2);
    let fen = reference.fen();
    let kibitz = Xiangqi::parse_position(&fen, None).unwrap_or_else(|e| panic!("{fen}: {e}"));
    (reference, kibitz)
}

fn run(positions: u64, seed: u64) -> Stats {
    common::run(positions, seed, 3000, &setup, &describe)
}

#[test]
fn xiangqi_agrees_with_the_reference_rules() {
    let stats = run(60_000, 1);
    stats.assert_clean(&[
        ("cannon capture", 5000),
        ("horse capture", 2000),
        ("soldier capture", 2000),
        ("general capture", 1000),
        ("check", 10_000),
        ("in check", 2000),
        ("soldier sideways", 10_000),
        ("elephant eye blocked", 3000),
        ("horse leg blocked", 5000),
        ("move refused: general left attacked", 5000),
        ("move refused: generals would face", 5000),
        ("end: checkmate", 80),
        ("end: stalemate", 10),
        ("end: repetition", 80),
        ("end: perpetual check by the side that moved", 12),
        ("end: perpetual check by the side to move", 12),
        ("end: 60-move rule", 20),
    ]);
}

#[test]
#[ignore = "long: a million positions or KIBITZ_DIFF_POSITIONS"]
fn xiangqi_agrees_with_the_reference_rules_long() {
    run(common::long_run_positions(), 0x5A49).assert_clean(&[]);
}
