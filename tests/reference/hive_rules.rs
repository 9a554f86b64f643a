//! A second Hive rules model, written for clarity rather than speed, to check kibitz's move generator
//! against (tests/hive_reference.rs). It shares no code or data structure with `src/games/hive/`: stacks are
//! vectors in a `HashMap` keyed by axial coordinates, and each rule of the printed rules is one function.
//!
//! The rules are those of Hive with the Mosquito, Ladybug and Pillbug, as Mzinga (the engine behind the
//! Universal Hive Protocol) applies them:
//!
//! - White places first, anywhere; Black's first piece touches it. Later placements touch at least one
//!   piece of their own colour and none of the other colour (a stack counts as the colour of its top piece).
//! - Tournament opening rule: no Queen on a side's first turn. The Queen must be in play by each side's
//!   fourth turn (turns count a side's own moves, passes included).
//! - Pieces of one bug are placed in order (`wS1` before `wS2`), as UHP's `validmoves` lists them.
//! - Nothing in play moves (nor uses the Pillbug's power) before its own Queen is placed.
//! - One hive: lifting a piece must not split the hive, and a sliding piece stays in contact with it.
//! - Freedom to move: a piece cannot slide through a gap between two occupied cells; at height, a piece
//!   cannot pass between two stacks that are both higher than where it starts and where it lands.
//! - The piece moved or placed by the last move (by the opponent, or one of one's own pieces thrown by the
//!   opponent's Pillbug) cannot move, be thrown, or use a power this turn. After a pass, nothing is stunned.
//! - A side passes only when it has no other move; the game ends when a Queen is surrounded (that side
//!   loses; both at once: a draw). Repetition is not in the printed rules.

#![allow(dead_code)] // Each test uses its own part of the model.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

/// Axial coordinates `(q, r)` of a cell; the first piece is placed at `(0, 0)`.
pub type Cell = (i32, i32);

/// The six directions in the pointy-top picture that UHP's notation assumes, clockwise from the top left:
/// top left (`\X`), top right (`X/`), right (`X-`), bottom right (`X\`), bottom left (`/X`), left (`-X`).
pub const DIRECTIONS: [Cell; 6] = [(0, -1), (1, -1), (1, 0), (0, 1), (-1, 1), (-1, 0)];

pub fn step(c: Cell, d: usize) -> Cell {
    (c.0 + DIRECTIONS[d].0, c.1 + DIRECTIONS[d].1)
}

pub fn neighbours(c: Cell) -> [Cell; 6] {
    std::array::from_fn(|d| step(c, d))
}

pub fn are_adjacent(a: Cell, b: Cell) -> bool {
    neighbours(a).contains(&b)
}

/// The two cells that touch both `a` and its neighbour `b`: the sides of the gap a piece passes through.
pub fn gap_sides(a: Cell, b: Cell) -> (Cell, Cell) {
    let d = (0..6).find(|&d| step(a, d) == b).expect("gap_sides of cells that are not neighbours");
    (step(a, (d + 5) % 6), step(a, (d + 1) % 6))
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Colour {
    White,
    Black,
}

impl Colour {
    pub fn other(self) -> Colour {
        match self {
            Colour::White => Colour::Black,
            Colour::Black => Colour::White,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Bug {
    Queen,
    Spider,
    Beetle,
    Grasshopper,
    Ant,
    Mosquito,
    Ladybug,
    Pillbug,
}

impl Bug {
    const LETTERS: [(Bug, char); 8] = [
        (Bug::Queen, 'Q'),
        (Bug::Spider, 'S'),
        (Bug::Beetle, 'B'),
        (Bug::Grasshopper, 'G'),
        (Bug::Ant, 'A'),
        (Bug::Mosquito, 'M'),
        (Bug::Ladybug, 'L'),
        (Bug::Pillbug, 'P'),
    ];

    /// How many pieces of this bug each side has.
    pub fn count(self) -> u8 {
        match self {
            Bug::Spider | Bug::Beetle => 2,
            Bug::Grasshopper | Bug::Ant => 3,
            _ => 1,
        }
    }

    fn letter(self) -> char {
        Bug::LETTERS.iter().find(|(b, _)| *b == self).map(|(_, c)| *c).expect("every bug has a letter")
    }

    fn from_letter(c: char) -> Option<Bug> {
        Bug::LETTERS.iter().find(|(_, l)| *l == c).map(|(b, _)| *b)
    }
}

/// One piece: `number` is 1, 2 or 3 for bugs a side has several of, and 0 for the others.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Piece {
    pub colour: Colour,
    pub bug: Bug,
    pub number: u8,
}

impl Piece {
    /// The UHP short name: `wQ`, `bS2`, `wM`.
    pub fn name(self) -> String {
        let colour = if self.colour == Colour::White { 'w' } else { 'b' };
        let number = if self.number > 0 { self.number.to_string() } else { String::new() };
        format!("{colour}{}{number}", self.bug.letter())
    }

    pub fn parse(text: &str) -> Option<Piece> {
        let mut chars = text.chars();
        let colour = match chars.next()? {
            'w' => Colour::White,
            'b' => Colour::Black,
            _ => return None,
        };
        let bug = Bug::from_letter(chars.next()?)?;
        let number = match chars.next() {
            None => 0,
            Some(c) => c.to_digit(10)? as u8,
        };
        if chars.next().is_some() {
            return None;
        }
        let valid = if bug.count() == 1 { number == 0 } else { (1..=bug.count()).contains(&number) };
        valid.then_some(Piece { colour, bug, number })
    }
}

/// A move as a canonical pair: the piece and the cell where it ends (whatever the rule that took it there).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Action {
    Pass,
    /// The piece (from the hand or from the board) goes to this cell, on top of whatever is there.
    To(Piece, Cell),
}

/// Which rule produced a move (for coverage counts).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Rule {
    Pass,
    Placement,
    /// The piece moves by the rules of this bug (a Mosquito by the bug it copies).
    Walk(Bug),
    /// The piece is thrown by a Pillbug (or a Mosquito copying one).
    Throw,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    WhiteWins,
    BlackWins,
    Draw,
}

/// The cells of the board: each holds its stack, bottom piece first. Empty cells are absent.
pub type Stacks = HashMap<Cell, Vec<Piece>>;

fn height(stacks: &Stacks, c: Cell) -> usize {
    stacks.get(&c).map_or(0, |s| s.len())
}

fn is_occupied(stacks: &Stacks, c: Cell) -> bool {
    height(stacks, c) > 0
}

fn top(stacks: &Stacks, c: Cell) -> Option<Piece> {
    stacks.get(&c).and_then(|s| s.last().copied())
}

/// The stacks with the top piece of `c` lifted off (the board as a moving piece sees it).
fn lifted(stacks: &Stacks, c: Cell) -> Stacks {
    let mut s = stacks.clone();
    if let Some(stack) = s.get_mut(&c) {
        stack.pop();
        if stack.is_empty() {
            s.remove(&c);
        }
    }
    s
}

/// One hive: every occupied cell is reached from any other through occupied neighbours.
fn is_one_hive(stacks: &Stacks) -> bool {
    let Some(&start) = stacks.keys().next() else { return true };
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([start]);
    while let Some(c) = queue.pop_front() {
        for n in neighbours(c) {
            if is_occupied(stacks, n) && seen.insert(n) {
                queue.push_back(n);
            }
        }
    }
    seen.len() == stacks.len()
}

/// One-hive rule when lifting the top piece of `c`: the rest stays one hive.
fn can_lift(stacks: &Stacks, c: Cell) -> bool {
    is_one_hive(&lifted(stacks, c))
}

/// A slide on the ground from `from` to its empty neighbour `to`, the moving piece already lifted: exactly
/// one side of the gap is occupied. Both occupied: the gap is too narrow (freedom to move). Neither: the
/// piece would lose contact with the hive on the way (one hive during the move).
fn can_slide(stacks: &Stacks, from: Cell, to: Cell) -> bool {
    let (a, b) = gap_sides(from, to);
    !is_occupied(stacks, to) && (is_occupied(stacks, a) != is_occupied(stacks, b))
}

/// One step of a climbing piece (Beetle, Ladybug, a thrown piece) from `from` to its neighbour `to`, the
/// moving piece already lifted. On the ground at both ends it is a slide. Otherwise it moves at height:
/// it cannot pass between two stacks that are both higher than the stack it leaves and the one it lands on.
fn can_step_at_height(stacks: &Stacks, from: Cell, to: Cell) -> bool {
    let (a, b) = gap_sides(from, to);
    let (h_from, h_to) = (height(stacks, from), height(stacks, to));
    if h_from == 0 && h_to == 0 {
        return can_slide(stacks, from, to);
    }
    let gate = height(stacks, a).min(height(stacks, b));
    gate <= h_from.max(h_to)
}

/// Queen Bee (and the Pillbug's own move): one slide.
fn queen_destinations(stacks: &Stacks, from: Cell) -> Vec<Cell> {
    neighbours(from).into_iter().filter(|&to| can_slide(stacks, from, to)).collect()
}

/// Beetle: one step in any direction, onto the hive or down from it.
fn beetle_destinations(stacks: &Stacks, from: Cell) -> Vec<Cell> {
    neighbours(from).into_iter().filter(|&to| can_step_at_height(stacks, from, to)).collect()
}

/// Grasshopper: a straight jump over one or more occupied cells to the first empty one.
fn grasshopper_destinations(stacks: &Stacks, from: Cell) -> Vec<Cell> {
    let mut out = Vec::new();
    for d in 0..6 {
        let mut c = step(from, d);
        if !is_occupied(stacks, c) {
            continue;
        }
        while is_occupied(stacks, c) {
            c = step(c, d);
        }
        out.push(c);
    }
    out
}

/// Spider: exactly three slides, never entering a cell twice (its start included).
fn spider_destinations(stacks: &Stacks, from: Cell) -> Vec<Cell> {
    fn walk(stacks: &Stacks, path: &mut Vec<Cell>, out: &mut BTreeSet<Cell>) {
        let here = *path.last().expect("a walk has a start");
        if path.len() == 4 {
            out.insert(here);
            return;
        }
        for to in neighbours(here) {
            if !path.contains(&to) && can_slide(stacks, here, to) {
                path.push(to);
                walk(stacks, path, out);
                path.pop();
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(stacks, &mut vec![from], &mut out);
    out.into_iter().collect()
}

/// Soldier Ant: any number of slides; every cell it can reach.
fn ant_destinations(stacks: &Stacks, from: Cell) -> Vec<Cell> {
    let mut seen = HashSet::from([from]);
    let mut queue = VecDeque::from([from]);
    let mut out = Vec::new();
    while let Some(c) = queue.pop_front() {
        for to in neighbours(c) {
            if can_slide(stacks, c, to) && seen.insert(to) {
                out.push(to);
                queue.push_back(to);
            }
        }
    }
    out
}

/// Ladybug: two steps on top of the hive, then one step down to an empty cell (not where it started).
fn ladybug_destinations(stacks: &Stacks, from: Cell) -> Vec<Cell> {
    let mut out = BTreeSet::new();
    for first in neighbours(from) {
        if !is_occupied(stacks, first) || !can_step_at_height(stacks, from, first) {
            continue;
        }
        for second in neighbours(first) {
            if !is_occupied(stacks, second) || !can_step_at_height(stacks, first, second) {
                continue;
            }
            for down in neighbours(second) {
                if down != from && !is_occupied(stacks, down) && can_step_at_height(stacks, second, down) {
                    out.insert(down);
                }
            }
        }
    }
    out.into_iter().collect()
}

/// The destinations of a piece that moves by `bug`'s rules from `from` (the piece already lifted).
fn walk_destinations(bug: Bug, stacks: &Stacks, from: Cell) -> Vec<Cell> {
    match bug {
        Bug::Queen | Bug::Pillbug => queen_destinations(stacks, from),
        Bug::Beetle => beetle_destinations(stacks, from),
        Bug::Grasshopper => grasshopper_destinations(stacks, from),
        Bug::Spider => spider_destinations(stacks, from),
        Bug::Ant => ant_destinations(stacks, from),
        Bug::Ladybug => ladybug_destinations(stacks, from),
        Bug::Mosquito => Vec::new(), // A Mosquito copying only Mosquitoes cannot move.
    }
}

/// A position: the stacks, whose turn (from the number of plies played) and the piece the last move moved.
#[derive(Clone, Debug)]
pub struct Position {
    pub mosquito: bool,
    pub ladybug: bool,
    pub pillbug: bool,
    pub stacks: Stacks,
    pub plies: u32,
    pub last_moved: Option<Piece>,
}

impl Position {
    /// The start of a game from its GameTypeString (`Base`, `Base+M`, ..., `Base+MLP`).
    pub fn new(game_type: &str) -> Option<Position> {
        let expansions = match game_type.strip_prefix("Base") {
            Some("") => "",
            Some(rest) => rest.strip_prefix('+').filter(|e| !e.is_empty())?,
            None => return None,
        };
        let valid = ["", "M", "L", "P", "ML", "MP", "LP", "MLP"].contains(&expansions);
        valid.then(|| Position {
            mosquito: expansions.contains('M'),
            ladybug: expansions.contains('L'),
            pillbug: expansions.contains('P'),
            stacks: Stacks::new(),
            plies: 0,
            last_moved: None,
        })
    }

    pub fn to_move(&self) -> Colour {
        if self.plies.is_multiple_of(2) { Colour::White } else { Colour::Black }
    }

    /// The side to move's turn number: 1 on its first turn.
    pub fn turn(&self) -> u32 {
        self.plies / 2 + 1
    }

    /// Every piece of the game type, both colours.
    pub fn all_pieces(&self) -> Vec<Piece> {
        let mut bugs = vec![Bug::Queen, Bug::Spider, Bug::Beetle, Bug::Grasshopper, Bug::Ant];
        for (on, bug) in [(self.mosquito, Bug::Mosquito), (self.ladybug, Bug::Ladybug), (self.pillbug, Bug::Pillbug)] {
            if on {
                bugs.push(bug);
            }
        }
        let mut out = Vec::new();
        for colour in [Colour::White, Colour::Black] {
            for &bug in &bugs {
                if bug.count() == 1 {
                    out.push(Piece { colour, bug, number: 0 });
                } else {
                    out.extend((1..=bug.count()).map(|number| Piece { colour, bug, number }));
                }
            }
        }
        out
    }

    /// Where a piece is: its cell and its level in the stack (0 on the ground).
    pub fn find(&self, piece: Piece) -> Option<(Cell, usize)> {
        self.stacks.iter().find_map(|(&c, stack)| stack.iter().position(|&p| p == piece).map(|level| (c, level)))
    }

    pub fn in_hand(&self, piece: Piece) -> bool {
        self.find(piece).is_none()
    }

    pub fn height(&self, c: Cell) -> usize {
        height(&self.stacks, c)
    }

    pub fn top(&self, c: Cell) -> Option<Piece> {
        top(&self.stacks, c)
    }

    fn queen_in_play(&self, colour: Colour) -> bool {
        !self.in_hand(Piece { colour, bug: Bug::Queen, number: 0 })
    }

    /// What makes two positions the same for a repetition count: the stacks and the side to move.
    pub fn key(&self) -> (Vec<(Cell, Vec<Piece>)>, Colour) {
        let mut stacks: Vec<(Cell, Vec<Piece>)> = self.stacks.iter().map(|(&c, s)| (c, s.clone())).collect();
        stacks.sort();
        (stacks, self.to_move())
    }

    /// A Queen is surrounded when all six cells around it are occupied.
    pub fn queen_surrounded(&self, colour: Colour) -> bool {
        match self.find(Piece { colour, bug: Bug::Queen, number: 0 }) {
            Some((c, _)) => neighbours(c).iter().all(|&n| is_occupied(&self.stacks, n)),
            None => false,
        }
    }

    /// The end of the game: a surrounded Queen loses; both at once is a draw.
    pub fn outcome(&self) -> Option<Outcome> {
        match (self.queen_surrounded(Colour::White), self.queen_surrounded(Colour::Black)) {
            (true, true) => Some(Outcome::Draw),
            (true, false) => Some(Outcome::BlackWins),
            (false, true) => Some(Outcome::WhiteWins),
            (false, false) => None,
        }
    }

    /// The pieces the side to move may place now: the lowest-numbered piece in hand of each bug, no Queen on
    /// the first turn, nothing but the Queen from the fourth turn while the Queen is still in hand.
    fn placeable_pieces(&self) -> Vec<Piece> {
        let me = self.to_move();
        let mut out = Vec::new();
        for piece in self.all_pieces() {
            if piece.colour != me || !self.in_hand(piece) {
                continue;
            }
            let lower_in_hand = (1..piece.number).any(|n| self.in_hand(Piece { number: n, ..piece }));
            if lower_in_hand {
                continue;
            }
            let is_queen = piece.bug == Bug::Queen;
            if self.turn() == 1 && is_queen {
                continue;
            }
            if self.turn() >= 4 && !self.queen_in_play(me) && !is_queen {
                continue;
            }
            out.push(piece);
        }
        out
    }

    /// The cells where the side to move may place a piece.
    fn placement_cells(&self) -> Vec<Cell> {
        if self.stacks.is_empty() {
            return vec![(0, 0)];
        }
        if self.plies == 1 {
            // Black's first piece touches White's first piece.
            return neighbours((0, 0)).to_vec();
        }
        let me = self.to_move();
        let mut candidates = BTreeSet::new();
        for &c in self.stacks.keys() {
            candidates.extend(neighbours(c).into_iter().filter(|n| !is_occupied(&self.stacks, *n)));
        }
        candidates
            .into_iter()
            .filter(|&c| {
                let colours: Vec<Colour> =
                    neighbours(c).iter().filter_map(|&n| self.top(n)).map(|p| p.colour).collect();
                colours.contains(&me) && !colours.contains(&me.other())
            })
            .collect()
    }

    fn placements(&self, out: &mut Vec<(Action, Rule)>) {
        let cells = self.placement_cells();
        for piece in self.placeable_pieces() {
            out.extend(cells.iter().map(|&c| (Action::To(piece, c), Rule::Placement)));
        }
    }

    /// The pieces of the side to move that may act this turn: on top of their stacks, not moved by the last
    /// move, and only once their Queen is in play.
    fn active_pieces(&self) -> Vec<(Piece, Cell, usize)> {
        let me = self.to_move();
        if !self.queen_in_play(me) {
            return Vec::new();
        }
        let mut out: Vec<(Piece, Cell, usize)> = self
            .stacks
            .iter()
            .filter_map(|(&c, stack)| stack.last().map(|&p| (p, c, stack.len() - 1)))
            .filter(|&(p, _, _)| p.colour == me && Some(p) != self.last_moved)
            .collect();
        out.sort();
        out
    }

    /// The bugs a Mosquito on the ground at `c` copies: those of the top pieces around it.
    fn copied_bugs(&self, c: Cell) -> BTreeSet<Bug> {
        neighbours(c).iter().filter_map(|&n| self.top(n)).map(|p| p.bug).collect()
    }

    /// A piece's own moves: lifting it must keep one hive; then it moves by its bug's rules. A Mosquito on
    /// top of the hive moves as a Beetle; on the ground, as any bug whose top piece it touches.
    fn walks(&self, piece: Piece, from: Cell, level: usize, out: &mut Vec<(Action, Rule)>) {
        if !can_lift(&self.stacks, from) {
            return;
        }
        let board = lifted(&self.stacks, from);
        let bugs: Vec<Bug> = match piece.bug {
            Bug::Mosquito if level > 0 => vec![Bug::Beetle],
            Bug::Mosquito => self.copied_bugs(from).into_iter().collect(),
            bug => vec![bug],
        };
        for bug in bugs {
            for to in walk_destinations(bug, &board, from) {
                assert_ne!(to, from, "{bug:?} moved to its own cell");
                out.push((Action::To(piece, to), Rule::Walk(bug)));
            }
        }
    }

    /// The Pillbug's power (also a Mosquito's on the ground touching a Pillbug): it throws a neighbouring
    /// piece over itself onto an empty cell next to it. Not a piece in a stack, not the piece the last move
    /// moved, not if lifting that piece splits the hive, and not through a gate of stacks on the way up or
    /// down (a climbing step onto the thrower, then a step down).
    fn throws(&self, thrower: Piece, at: Cell, level: usize, out: &mut Vec<(Action, Rule)>) {
        self.throws_heeding(thrower, at, level, true, out);
    }

    /// The throws of the side to move that only a height gate forbids (for coverage counts).
    pub fn throws_refused_by_gates(&self) -> usize {
        let (mut free, mut heeded) = (Vec::new(), Vec::new());
        if self.outcome().is_none() {
            for (piece, at, level) in self.active_pieces() {
                self.throws_heeding(piece, at, level, false, &mut free);
                self.throws_heeding(piece, at, level, true, &mut heeded);
            }
        }
        free.len() - heeded.len()
    }

    fn throws_heeding(&self, thrower: Piece, at: Cell, level: usize, gates: bool, out: &mut Vec<(Action, Rule)>) {
        let has_power = match thrower.bug {
            Bug::Pillbug => true,
            Bug::Mosquito => level == 0 && self.copied_bugs(at).contains(&Bug::Pillbug),
            _ => false,
        };
        if !has_power || level != 0 {
            return;
        }
        for from in neighbours(at) {
            let Some(victim) = self.top(from) else { continue };
            if self.height(from) != 1 || Some(victim) == self.last_moved || !can_lift(&self.stacks, from) {
                continue;
            }
            let board = lifted(&self.stacks, from);
            if gates && !can_step_at_height(&board, from, at) {
                continue;
            }
            for to in neighbours(at) {
                if to != from && !is_occupied(&board, to) && (!gates || can_step_at_height(&board, at, to)) {
                    out.push((Action::To(victim, to), Rule::Throw));
                }
            }
        }
    }

    /// Every legal move with the rule that allows it (a move may appear once per rule). Nothing once the game
    /// is over; a lone pass when nothing else is legal.
    pub fn legal_moves_explained(&self) -> Vec<(Action, Rule)> {
        let mut out = Vec::new();
        if self.outcome().is_some() {
            return out;
        }
        self.placements(&mut out);
        for (piece, at, level) in self.active_pieces() {
            self.walks(piece, at, level, &mut out);
            self.throws(piece, at, level, &mut out);
        }
        if out.is_empty() {
            out.push((Action::Pass, Rule::Pass));
        }
        out
    }

    pub fn legal_moves(&self) -> BTreeSet<Action> {
        self.legal_moves_explained().into_iter().map(|(a, _)| a).collect()
    }

    /// Play a move (trusted: the caller took it from `legal_moves`).
    pub fn play(&mut self, action: Action) {
        match action {
            Action::Pass => self.last_moved = None,
            Action::To(piece, to) => {
                if let Some((from, level)) = self.find(piece) {
                    let stack = self.stacks.get_mut(&from).expect("the piece's stack");
                    assert_eq!(level + 1, stack.len(), "{} is covered", piece.name());
                    stack.pop();
                    if stack.is_empty() {
                        self.stacks.remove(&from);
                    }
                }
                self.stacks.entry(to).or_default().push(piece);
                self.last_moved = Some(piece);
                assert!(is_one_hive(&self.stacks), "{} to {to:?} split the hive", piece.name());
            }
        }
        self.plies += 1;
    }

    /// Read a UHP MoveString of this position as a canonical action: `pass`, `wS1` (the first move),
    /// `wB1 bQ` (on top of bQ), `wS1 bQ-` and the five other directions (next to bQ). The reference piece
    /// must be on the board; where the notation points is not checked against the rules here.
    pub fn parse_move_string(&self, text: &str) -> Result<Action, String> {
        if text == "pass" {
            return Ok(Action::Pass);
        }
        let mut words = text.split(' ');
        let piece_text = words.next().unwrap_or_default();
        let piece = Piece::parse(piece_text).ok_or_else(|| format!("no piece `{piece_text}` in `{text}`"))?;
        let Some(reference) = words.next() else {
            return if self.stacks.is_empty() {
                Ok(Action::To(piece, (0, 0)))
            } else {
                Err(format!("`{text}` has no reference piece"))
            };
        };
        if words.next().is_some() {
            return Err(format!("`{text}` has more than two words"));
        }
        let (direction, name) = match (reference.chars().next(), reference.chars().last()) {
            (Some('\\'), _) => (Some(0), &reference[1..]),
            (_, Some('/')) => (Some(1), &reference[..reference.len() - 1]),
            (_, Some('-')) => (Some(2), &reference[..reference.len() - 1]),
            (_, Some('\\')) => (Some(3), &reference[..reference.len() - 1]),
            (Some('/'), _) => (Some(4), &reference[1..]),
            (Some('-'), _) => (Some(5), &reference[1..]),
            _ => (None, reference),
        };
        let other = Piece::parse(name).ok_or_else(|| format!("no piece `{name}` in `{text}`"))?;
        let (cell, _) = self.find(other).ok_or_else(|| format!("`{name}` is not on the board in `{text}`"))?;
        Ok(Action::To(piece, direction.map_or(cell, |d| step(cell, d))))
    }

    /// Every MoveString UHP allows for a legal action: next to any piece touching the destination (the
    /// moving piece excepted), or on top of the destination's top piece.
    pub fn move_strings(&self, action: Action) -> Vec<String> {
        let Action::To(piece, to) = action else { return vec!["pass".to_string()] };
        if self.stacks.is_empty() {
            return vec![piece.name()];
        }
        let board = match self.find(piece) {
            Some((from, _)) => lifted(&self.stacks, from),
            None => self.stacks.clone(),
        };
        if let Some(below) = top(&board, to) {
            return vec![format!("{} {}", piece.name(), below.name())];
        }
        let mut out = Vec::new();
        for d in 0..6 {
            // `to` is in direction d from this neighbour (the opposite of the neighbour's direction from `to`).
            let from_reference = step(to, (d + 3) % 6);
            for other in board.get(&from_reference).into_iter().flatten() {
                let name = other.name();
                let text = match d {
                    0 => format!("\\{name}"),
                    1 => format!("{name}/"),
                    2 => format!("{name}-"),
                    3 => format!("{name}\\"),
                    4 => format!("/{name}"),
                    _ => format!("-{name}"),
                };
                out.push(format!("{} {text}", piece.name()));
            }
        }
        out
    }
}
