//! Board pictures: a small scene (squares or cells, lines, pieces, labels, arrows, highlights) that each game
//! fills with its own geometry ([`crate::game::Game::draw`]), written to SVG text here, in one place.
//!
//! The pictures draw everything with SVG shapes and a generic `font-family`: nothing is fetched when they are
//! shown (no web fonts, no images).
//!
//! # The contract inside the SVG
//!
//! Web pages and tests read the picture's elements, so these attributes are stable:
//!
//! * the root: `<svg xmlns="http://www.w3.org/2000/svg" viewBox=... width=... height=... data-game="<game>"
//!   data-position="<the position in the game's main position format>" data-flipped="true|false">`, where
//!   `<game>` is the game's name in `/v1/games`;
//! * every board square is one element with `data-square="<name>"`, the square's name in the game's move
//!   notation: chess `e4`; checkers `1`..`32` and draughts `1`..`50`; xiangqi the lower-case ICCS point
//!   `e3` (files `a`..`i` from Red's left, ranks `0`..`9` from Red's side). Hive cells have
//!   `data-hex="q,r"` instead (axial coordinates, the first piece's cell is `0,0`, `q` grows to the east and `r`
//!   to the south-east), and the empty cells next to the hive are drawn too;
//! * every piece on the board is one element with `data-piece="<code>"` and `data-square` (Hive: `data-hex`,
//!   with `data-height`, the height of the stack it tops, and `data-below`, the codes of the pieces under it
//!   from the bottom up, space-separated). Codes: chess and xiangqi the FEN letters (upper case White or Red);
//!   checkers and draughts `W`, `B` for men and `WK`, `BK` for kings; Hive the UHP piece names (`wQ`, `bS2`);
//! * a piece in hand (Hive) is one element with `data-hand="<code>"`;
//! * each arrow is one element `class="arrow" data-move="<the move in the game's main notation>"`;
//! * the start and end squares of the last move played carry `class="last-move"`.

use std::collections::HashMap;
use std::fmt::{Display, Write};

use crate::game::Game;

/// The smallest and largest picture width in pixels, and the default.
pub const MIN_SIZE: u32 = 100;
pub const MAX_SIZE: u32 = 2000;
pub const DEFAULT_SIZE: u32 = 480;

/// Colours every game shares.
pub const HIGHLIGHT: &str = "#f2cf3c";
pub const ARROW: &str = "#1f6fd1";
/// Piece colours of the two sides (light and dark discs).
pub const LIGHT_PIECE: &str = "#f7f3e8";
pub const DARK_PIECE: &str = "#262626";
pub const RED_PIECE: &str = "#c4281c";

/// What a game's drawing must take into account besides its position.
#[derive(Clone, Debug, Default)]
pub struct View {
    /// Turn the board: the second side's home at the bottom.
    pub flip: bool,
    /// Squares (or cells) that highlights and arrows will use: a game whose board grows with the position (Hive)
    /// draws these too.
    pub spots: Vec<String>,
}

/// An SVG element: a name, attributes in order, children.
#[derive(Clone, Debug, PartialEq)]
pub struct Element {
    name: &'static str,
    attrs: Vec<(&'static str, String)>,
    children: Vec<Content>,
}

#[derive(Clone, Debug, PartialEq)]
enum Content {
    Element(Element),
    Text(String),
}

impl Element {
    pub fn new(name: &'static str) -> Self {
        Element { name, attrs: Vec::new(), children: Vec::new() }
    }

    /// Set an attribute (replacing a previous value).
    pub fn attr(mut self, key: &'static str, value: impl Display) -> Self {
        self.set(key, value.to_string());
        self
    }

    /// A coordinate or length attribute, written with at most two decimals.
    pub fn num(self, key: &'static str, value: f64) -> Self {
        self.attr(key, num(value))
    }

    pub fn child(mut self, e: Element) -> Self {
        self.children.push(Content::Element(e));
        self
    }

    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.children.push(Content::Text(text.into()));
        self
    }

    fn set(&mut self, key: &'static str, value: String) {
        match self.attrs.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.attrs.push((key, value)),
        }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| *k == key).map(|(_, v)| v.as_str())
    }

    fn write(&self, out: &mut String) {
        out.push('<');
        out.push_str(self.name);
        for (k, v) in &self.attrs {
            let _ = write!(out, " {k}=\"");
            escape_into(out, v);
            out.push('"');
        }
        if self.children.is_empty() {
            out.push_str("/>");
            return;
        }
        out.push('>');
        for c in &self.children {
            match c {
                Content::Element(e) => e.write(out),
                Content::Text(t) => escape_into(out, t),
            }
        }
        let _ = write!(out, "</{}>", self.name);
    }
}

/// Escape text for an XML attribute value or element content.
pub fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 does not allow at all are left out.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
}

/// A number as SVG attributes write it: at most two decimals, no trailing zeros.
pub fn num(v: f64) -> String {
    let v = if v.is_finite() { (v * 100.0).round() / 100.0 } else { 0.0 };
    let mut s = format!("{v:.2}");
    while s.ends_with('0') {
        s.pop();
    }
    if s.ends_with('.') {
        s.pop();
    }
    if s == "-0" { "0".to_string() } else { s }
}

// ---- shapes ----

pub fn rect(x: f64, y: f64, w: f64, h: f64, fill: &str) -> Element {
    Element::new("rect").num("x", x).num("y", y).num("width", w).num("height", h).attr("fill", fill)
}

pub fn circle(cx: f64, cy: f64, r: f64, fill: &str) -> Element {
    Element::new("circle").num("cx", cx).num("cy", cy).num("r", r).attr("fill", fill)
}

pub fn line(x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, width: f64) -> Element {
    Element::new("line")
        .num("x1", x1)
        .num("y1", y1)
        .num("x2", x2)
        .num("y2", y2)
        .attr("stroke", stroke)
        .num("stroke-width", width)
}

pub fn polygon(points: &[(f64, f64)], fill: &str) -> Element {
    Element::new("polygon").attr("points", points_attr(points)).attr("fill", fill)
}

fn points_attr(points: &[(f64, f64)]) -> String {
    points.iter().map(|(x, y)| format!("{},{}", num(*x), num(*y))).collect::<Vec<_>>().join(" ")
}

/// The corners of a hexagon with a point at the top, centred on (cx, cy), `r` from the centre to a corner.
pub fn hexagon(cx: f64, cy: f64, r: f64) -> Vec<(f64, f64)> {
    (0..6)
        .map(|i| {
            let a = std::f64::consts::PI / 180.0 * (60.0 * i as f64 - 90.0);
            (cx + r * a.cos(), cy + r * a.sin())
        })
        .collect()
}

/// Text centred on (x, y) in a generic sans-serif face.
pub fn label(x: f64, y: f64, size: f64, fill: &str, text: &str) -> Element {
    Element::new("text")
        .num("x", x)
        .num("y", y)
        .num("font-size", size)
        .attr("font-family", "sans-serif")
        .attr("font-weight", "bold")
        .attr("text-anchor", "middle")
        .attr("dominant-baseline", "central")
        .attr("fill", fill)
        .text(text)
}

/// How a piece disc looks.
#[derive(Clone, Copy, Debug)]
pub struct Disc<'a> {
    pub fill: &'a str,
    pub stroke: &'a str,
    /// The letter or number on the disc, and its colour.
    pub label: &'a str,
    pub label_fill: &'a str,
    /// A king (or any promoted piece): a second ring inside the disc.
    pub crowned: bool,
}

/// A round piece on a square: the group carries `data-piece` and `data-square`.
pub fn disc_piece(code: &str, square: &str, (cx, cy): (f64, f64), r: f64, d: Disc) -> Element {
    let mut g = Element::new("g")
        .attr("data-piece", code)
        .attr("data-square", square)
        .child(circle(cx, cy, r, d.fill).attr("stroke", d.stroke).num("stroke-width", (r * 0.08).max(1.0)));
    if d.crowned {
        g = g
            .child(circle(cx, cy, r * 0.62, "none").attr("stroke", "#d4a017").num("stroke-width", (r * 0.16).max(1.5)));
    }
    if !d.label.is_empty() {
        g = g.child(label(cx, cy, r * 1.05, d.label_fill, d.label));
    }
    g
}

// ---- the scene ----

/// A board picture before it is written: layers drawn in order (board, squares, marks on the board, pieces,
/// arrows), and the centre of every named square so that highlights and arrows can find them.
#[derive(Clone, Debug)]
pub struct Scene {
    width: f64,
    height: f64,
    /// The size of one square (or cell), for the width of arrows.
    unit: f64,
    board: Vec<Element>,
    squares: Vec<Element>,
    decor: Vec<Element>,
    pieces: Vec<Element>,
    arrows: Vec<Element>,
    centres: HashMap<String, (f64, f64)>,
    square_of: HashMap<String, usize>,
}

impl Scene {
    /// An empty scene `width` by `height` user units whose squares are `unit` wide, filled with `background`.
    pub fn new(width: f64, height: f64, unit: f64, background: &str) -> Self {
        Scene {
            width,
            height,
            unit,
            board: vec![rect(0.0, 0.0, width, height, background)],
            squares: Vec::new(),
            decor: Vec::new(),
            pieces: Vec::new(),
            arrows: Vec::new(),
            centres: HashMap::new(),
            square_of: HashMap::new(),
        }
    }

    pub fn width(&self) -> f64 {
        self.width
    }

    pub fn height(&self) -> f64 {
        self.height
    }

    /// Something drawn under the squares (a board's frame).
    pub fn board(&mut self, e: Element) {
        self.board.push(e);
    }

    /// A square: `shape` (a rect or polygon) gets `data-square="name"`; `centre` is where pieces and arrows go.
    pub fn square(&mut self, name: &str, shape: Element, centre: (f64, f64)) {
        self.named_square("data-square", name, shape, centre);
    }

    /// A Hive cell: like a square, with `data-hex="q,r"`.
    pub fn cell(&mut self, name: &str, shape: Element, centre: (f64, f64)) {
        self.named_square("data-hex", name, shape, centre);
    }

    fn named_square(&mut self, key: &'static str, name: &str, shape: Element, centre: (f64, f64)) {
        self.centres.insert(name.to_string(), centre);
        self.square_of.insert(name.to_string(), self.squares.len());
        self.squares.push(shape.attr(key, name));
    }

    /// The centre of a named square, if the scene has it.
    pub fn centre(&self, name: &str) -> Option<(f64, f64)> {
        self.centres.get(name).copied()
    }

    /// Lines, numbers and coordinates drawn over the squares, under the pieces.
    pub fn decor(&mut self, e: Element) {
        self.decor.push(e);
    }

    pub fn piece(&mut self, e: Element) {
        self.pieces.push(e);
    }

    /// Mark a square as the start or end of the last move: `class="last-move"` and the highlight colour.
    /// False when the scene has no such square.
    pub fn highlight(&mut self, name: &str) -> bool {
        let Some(&i) = self.square_of.get(name) else { return false };
        let sq = &mut self.squares[i];
        sq.set("class", "last-move".into());
        sq.set("fill", HIGHLIGHT.into());
        sq.set("fill-opacity", "0.8".into());
        true
    }

    /// An arrow through the named squares (start, landing squares, end); a single square (a piece placed from
    /// hand) gets a ring. False (and nothing drawn) when a square is not in the scene.
    pub fn arrow(&mut self, move_text: &str, squares: &[String]) -> bool {
        let Some(points) = squares.iter().map(|s| self.centre(s)).collect::<Option<Vec<_>>>() else { return false };
        let u = self.unit;
        let mut g = Element::new("g").attr("class", "arrow").attr("data-move", move_text).attr("opacity", "0.75");
        match points.as_slice() {
            [] => return false,
            [(x, y)] => {
                g = g.child(circle(*x, *y, u * 0.42, "none").attr("stroke", ARROW).num("stroke-width", u * 0.1));
            }
            [.., a, b] => {
                let (dx, dy) = (b.0 - a.0, b.1 - a.1);
                let len = (dx * dx + dy * dy).sqrt().max(1e-6);
                let (ux, uy) = (dx / len, dy / len);
                let head = (u * 0.45).min(len * 0.9);
                let base = (b.0 - ux * head, b.1 - uy * head);
                let mut shaft: Vec<(f64, f64)> = points[..points.len() - 1].to_vec();
                shaft.push(base);
                g = g.child(
                    Element::new("polyline")
                        .attr("points", points_attr(&shaft))
                        .attr("fill", "none")
                        .attr("stroke", ARROW)
                        .num("stroke-width", u * 0.16)
                        .attr("stroke-linecap", "round")
                        .attr("stroke-linejoin", "round"),
                );
                let w = u * 0.25;
                g = g.child(polygon(
                    &[(b.0, b.1), (base.0 - uy * w, base.1 + ux * w), (base.0 + uy * w, base.1 - ux * w)],
                    ARROW,
                ));
            }
        }
        self.arrows.push(g);
        true
    }

    /// The SVG text, `size` pixels wide.
    pub fn to_svg(&self, game: &str, position: &str, flipped: bool, size: u32) -> String {
        let height = (size as f64 * self.height / self.width.max(1.0)).round().max(1.0) as u32;
        let mut root = Element::new("svg")
            .attr("xmlns", "http://www.w3.org/2000/svg")
            .attr("viewBox", format!("0 0 {} {}", num(self.width), num(self.height)))
            .attr("width", size)
            .attr("height", height)
            .attr("data-game", game)
            .attr("data-position", position)
            .attr("data-flipped", flipped)
            // Named as an image to assistive technology, with the title's text.
            .attr("role", "img")
            .attr("aria-label", format!("{game} board: {position}"))
            .child(Element::new("title").text(format!("{game}: {position}")));
        for (class, layer) in [
            ("board", &self.board),
            ("squares", &self.squares),
            ("decor", &self.decor),
            ("pieces", &self.pieces),
            ("arrows", &self.arrows),
        ] {
            if layer.is_empty() {
                continue;
            }
            let mut g = Element::new("g").attr("class", class);
            for e in layer {
                g = g.child(e.clone());
            }
            root = root.child(g);
        }
        let mut out = String::with_capacity(16 * 1024);
        root.write(&mut out);
        out.push('\n');
        out
    }
}

// ---- square grids ----

/// A board of `files` x `ranks` squares of `unit` size, at `origin` (the top-left corner): where the square
/// at (file, rank) is drawn, rank 0 at the bottom, turned round when `flip`.
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    pub files: usize,
    pub ranks: usize,
    pub unit: f64,
    pub origin: (f64, f64),
    pub flip: bool,
}

impl Grid {
    /// The top-left corner of a square.
    pub fn corner(&self, file: usize, rank: usize) -> (f64, f64) {
        let (col, row) = if self.flip { (self.files - 1 - file, rank) } else { (file, self.ranks - 1 - rank) };
        (self.origin.0 + col as f64 * self.unit, self.origin.1 + row as f64 * self.unit)
    }

    pub fn centre(&self, file: usize, rank: usize) -> (f64, f64) {
        let (x, y) = self.corner(file, rank);
        (x + self.unit / 2.0, y + self.unit / 2.0)
    }
}

// ---- drawing a game ----

/// How to draw: turned or not, how wide.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub flip: bool,
    /// Width in pixels ([`MIN_SIZE`]..=[`MAX_SIZE`]).
    pub size: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { flip: false, size: DEFAULT_SIZE }
    }
}

/// Check a requested width, with a message that says what is allowed.
pub fn check_size(size: u32) -> Result<u32, String> {
    if (MIN_SIZE..=MAX_SIZE).contains(&size) {
        Ok(size)
    } else {
        Err(format!("size must be between {MIN_SIZE} and {MAX_SIZE} pixels, not {size}"))
    }
}

/// The SVG picture of `game`: `last` is the position before the last move played and that move (highlighted),
/// `arrows` a line of moves played from `game` (each legal after the ones before it), drawn as arrows.
pub fn render<G: Game>(game: &G, last: Option<(&G, G::Move)>, arrows: &[G::Move], options: Options) -> String {
    let last_spots = last.map(|(before, m)| before.move_squares(m)).unwrap_or_default();
    let mut line = Vec::with_capacity(arrows.len());
    let mut g = game.clone();
    for &m in arrows {
        line.push((g.format_move(m), g.move_squares(m)));
        g.make(m);
    }
    let mut spots = last_spots.clone();
    spots.extend(line.iter().flat_map(|(_, s)| s.iter().cloned()));
    let mut scene = game.draw(&View { flip: options.flip, spots });
    if let (Some(first), Some(end)) = (last_spots.first(), last_spots.last()) {
        scene.highlight(first);
        scene.highlight(end);
    }
    for (text, squares) in &line {
        scene.arrow(text, squares);
    }
    let position = game.format_position(None).unwrap_or_default();
    scene.to_svg(G::NAME, &position, options.flip, options.size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_attributes_are_escaped() {
        let mut out = String::new();
        Element::new("text").attr("data-position", "a\"b<c>&'d").text("x < y & z\u{1}").write(&mut out);
        assert_eq!(out, "<text data-position=\"a&quot;b&lt;c&gt;&amp;&apos;d\">x &lt; y &amp; z</text>");
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(1.5), "1.5");
        assert_eq!(num(1.256), "1.26");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(f64::NAN), "0");
    }

    #[test]
    fn sizes_are_bounded() {
        assert_eq!(check_size(100), Ok(100));
        assert_eq!(check_size(2000), Ok(2000));
        assert!(check_size(99).unwrap_err().contains("between 100 and 2000"));
        assert!(check_size(2001).is_err());
    }

    #[test]
    fn highlights_and_arrows_find_their_squares() {
        let mut s = Scene::new(100.0, 100.0, 50.0, "#fff");
        s.square("a", rect(0.0, 0.0, 50.0, 50.0, "#000"), (25.0, 25.0));
        s.square("b", rect(50.0, 0.0, 50.0, 50.0, "#000"), (75.0, 25.0));
        assert!(s.highlight("a"));
        assert!(!s.highlight("z"));
        assert!(s.arrow("a-b", &["a".into(), "b".into()]));
        assert!(!s.arrow("a-z", &["a".into(), "z".into()]));
        let svg = s.to_svg("game", "pos&", true, 200);
        assert!(svg.contains(r#"width="200" height="200""#), "{svg}");
        assert!(svg.contains(r#"data-position="pos&amp;" data-flipped="true""#), "{svg}");
        assert_eq!(svg.matches("class=\"last-move\"").count(), 1);
        assert_eq!(svg.matches("class=\"arrow\" data-move=\"a-b\"").count(), 1);
        assert!(!svg.contains("a-z"));
    }
}
