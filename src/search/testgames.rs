//! Two tiny games whose values are known exactly, for testing the search and the pool: Nim (take 1-3 stones,
//! taking the last one wins: a pile that is a multiple of four loses) and tic-tac-toe (a draw with best play).

use crate::game::{Game, GameEnd, NotationError, Side};

#[derive(Clone)]
pub(crate) struct Nim {
    pile: u32,
    side: Side,
    history: Vec<u32>,
}

impl Game for Nim {
    type Move = u32;
    type Threats = ();
    const NAME: &'static str = "nim";
    const POSITION_FORMATS: &'static [&'static str] = &["count"];
    const MOVE_FORMATS: &'static [&'static str] = &["count"];
    const BENCH_POSITIONS: &'static [&'static str] = &["21"];
    const BENCH_DEPTH: u32 = 20;
    const DEFAULT_DEPTH: u32 = 20;
    const NULL_MOVE: bool = false;
    const FORCED_CAPTURES: bool = false;

    fn start() -> Self {
        Nim { pile: 21, side: Side::First, history: Vec::new() }
    }
    fn side_to_move(&self) -> Side {
        self.side
    }
    fn side_name(side: Side) -> &'static str {
        if side == Side::First { "first" } else { "second" }
    }
    fn generate_moves(&self, out: &mut Vec<u32>) {
        out.clear();
        out.extend((1..=3).filter(|&n| n <= self.pile));
    }
    fn generate_noisy(&self, out: &mut Vec<u32>) {
        out.clear();
    }
    fn make(&mut self, m: u32) {
        self.pile -= m;
        self.history.push(m);
        self.side = self.side.opponent();
    }
    fn unmake(&mut self) {
        if let Some(m) = self.history.pop() {
            self.pile += m;
            self.side = self.side.opponent();
        }
    }
    fn hash(&self) -> u64 {
        (self.pile as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ self.side as u64
    }
    fn plies(&self) -> usize {
        self.history.len()
    }
    fn rule_end(&self, _: usize) -> Option<GameEnd> {
        None
    }
    fn no_move_end(&self) -> GameEnd {
        GameEnd::win(self.side.opponent(), "took the last stone")
    }
    fn evaluate(&self) -> i32 {
        0
    }
    fn is_noisy(&self, _: u32) -> bool {
        false
    }
    fn move_key(m: u32) -> u32 {
        m
    }
    fn parse_position(text: &str, _: Option<&str>) -> Result<Self, NotationError> {
        let pile = text.trim().parse().map_err(|_| NotationError::new(text, "not a count"))?;
        Ok(Nim { pile, side: Side::First, history: Vec::new() })
    }
    fn format_position(&self, _: Option<&str>) -> Result<String, NotationError> {
        Ok(self.pile.to_string())
    }
    fn parse_move(&self, text: &str) -> Result<u32, NotationError> {
        text.trim().parse().map_err(|_| NotationError::new(text, "not a count"))
    }
    fn format_move(&self, m: u32) -> String {
        m.to_string()
    }
    /// The pile as a row of stones, one square each (named by its count from 1).
    fn draw(&self, _view: &crate::picture::View) -> crate::picture::Scene {
        let width = 20.0 * self.pile.max(1) as f64;
        let mut scene = crate::picture::Scene::new(width, 20.0, 20.0, "#ffffff");
        for i in 0..self.pile {
            let x = 20.0 * i as f64;
            let name = (i + 1).to_string();
            scene.square(&name, crate::picture::rect(x, 0.0, 20.0, 20.0, "#eeeeee"), (x + 10.0, 10.0));
            scene.piece(crate::picture::disc_piece("stone", &name, (x + 10.0, 10.0), 8.0, STONE));
        }
        scene
    }
    /// Taking stones takes them from the end of the row.
    fn move_squares(&self, m: u32) -> Vec<String> {
        (self.pile.saturating_sub(m) + 1..=self.pile).map(|i| i.to_string()).collect()
    }
}

const STONE: crate::picture::Disc<'static> =
    crate::picture::Disc { fill: "#555555", stroke: "#000000", label: "", label_fill: "#ffffff", crowned: false };

#[derive(Clone)]
pub(crate) struct TicTacToe {
    cells: [u8; 9],
    side: Side,
    history: Vec<u8>,
}

const LINES: [[usize; 3]; 8] = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];

impl TicTacToe {
    fn winner(&self) -> Option<Side> {
        LINES.iter().find_map(|l| match (self.cells[l[0]], self.cells[l[1]], self.cells[l[2]]) {
            (1, 1, 1) => Some(Side::First),
            (2, 2, 2) => Some(Side::Second),
            _ => None,
        })
    }
}

impl Game for TicTacToe {
    type Move = u8;
    type Threats = ();
    const NAME: &'static str = "tictactoe";
    const POSITION_FORMATS: &'static [&'static str] = &["cells"];
    const MOVE_FORMATS: &'static [&'static str] = &["cell"];
    const BENCH_POSITIONS: &'static [&'static str] = &["........."];
    const BENCH_DEPTH: u32 = 9;
    const DEFAULT_DEPTH: u32 = 9;
    const NULL_MOVE: bool = false;
    const FORCED_CAPTURES: bool = false;

    fn start() -> Self {
        TicTacToe { cells: [0; 9], side: Side::First, history: Vec::new() }
    }
    fn side_to_move(&self) -> Side {
        self.side
    }
    fn side_name(side: Side) -> &'static str {
        if side == Side::First { "x" } else { "o" }
    }
    fn generate_moves(&self, out: &mut Vec<u8>) {
        out.clear();
        if self.winner().is_none() {
            out.extend((0..9u8).filter(|&c| self.cells[c as usize] == 0));
        }
    }
    fn generate_noisy(&self, out: &mut Vec<u8>) {
        out.clear();
    }
    fn make(&mut self, m: u8) {
        self.cells[m as usize] = if self.side == Side::First { 1 } else { 2 };
        self.history.push(m);
        self.side = self.side.opponent();
    }
    fn unmake(&mut self) {
        if let Some(m) = self.history.pop() {
            self.cells[m as usize] = 0;
            self.side = self.side.opponent();
        }
    }
    fn hash(&self) -> u64 {
        self.cells.iter().fold(self.side as u64, |h, &c| h.wrapping_mul(31).wrapping_add(c as u64 + 1))
    }
    fn plies(&self) -> usize {
        self.history.len()
    }
    fn rule_end(&self, _: usize) -> Option<GameEnd> {
        self.winner().map(|s| GameEnd::win(s, "three in a row"))
    }
    fn no_move_end(&self) -> GameEnd {
        GameEnd::draw("board full")
    }
    fn evaluate(&self) -> i32 {
        0
    }
    fn is_noisy(&self, _: u8) -> bool {
        false
    }
    fn move_key(m: u8) -> u32 {
        m as u32
    }
    fn parse_position(text: &str, _: Option<&str>) -> Result<Self, NotationError> {
        let mut g = Self::start();
        let mut xs = 0;
        let mut os = 0;
        for (i, ch) in text.chars().enumerate().take(9) {
            g.cells[i] = match ch {
                'x' => {
                    xs += 1;
                    1
                }
                'o' => {
                    os += 1;
                    2
                }
                _ => 0,
            };
        }
        g.side = if xs > os { Side::Second } else { Side::First };
        Ok(g)
    }
    fn format_position(&self, _: Option<&str>) -> Result<String, NotationError> {
        Ok(self.cells.iter().map(|c| ['.', 'x', 'o'][*c as usize]).collect())
    }
    fn parse_move(&self, text: &str) -> Result<u8, NotationError> {
        text.trim().parse().map_err(|_| NotationError::new(text, "not a cell"))
    }
    fn format_move(&self, m: u8) -> String {
        m.to_string()
    }
    /// Three by three cells named 0-8, X and O as labelled discs.
    fn draw(&self, _view: &crate::picture::View) -> crate::picture::Scene {
        let mut scene = crate::picture::Scene::new(60.0, 60.0, 20.0, "#ffffff");
        for (i, &c) in self.cells.iter().enumerate() {
            let (x, y) = (20.0 * (i % 3) as f64, 20.0 * (i / 3) as f64);
            let name = i.to_string();
            let centre = (x + 10.0, y + 10.0);
            scene.square(&name, crate::picture::rect(x, y, 20.0, 20.0, "#eeeeee"), centre);
            let label = match c {
                1 => "X",
                2 => "O",
                _ => continue,
            };
            scene.piece(crate::picture::disc_piece(label, &name, centre, 8.0, crate::picture::Disc { label, ..STONE }));
        }
        scene
    }
    fn move_squares(&self, m: u8) -> Vec<String> {
        vec![m.to_string()]
    }
}
