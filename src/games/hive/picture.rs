//! The Hive picture: the hive on a grid of hexagons (point at the top), each piece a tile of its colour with its
//! bug's letter on a disc of the bug's colour, stacks with their height, the empty cells around the hive, and
//! both sides' pieces in hand beside it (White's on the left, Black's on the right).
//!
//! Cells are named by axial coordinates `q,r` from the cell of the first piece placed: `q` grows to the east,
//! `r` to the south-east (UHP's `wS1-` is `q + 1`, `wS1\` is `r + 1`, `wS1/` is `q + 1, r - 1`).

use std::collections::BTreeMap;

use super::Hive;
use super::board::{Board, Bug, CELLS, KIND_NUMBER, Move, NO_CELL, NO_PIECE, ORIGIN, PER_SIDE, PIECES, bug_of, nb};
use super::board::{color_of, piece_name};
use crate::picture::{self, Element, Scene, View};

/// Corner radius of a board cell and of a tile in hand.
const CELL: f64 = 34.0;
const HAND: f64 = 22.0;
const PAD: f64 = 16.0;
const SQRT3: f64 = 1.732_050_807_568_877_2;
const BACKGROUND: &str = "#f4f1ea";

fn bug_colour(bug: Bug) -> &'static str {
    match bug {
        Bug::Queen => "#e0a100",
        Bug::Spider => "#8d5a2b",
        Bug::Beetle => "#7b4fa0",
        Bug::Grasshopper => "#3f9b3f",
        Bug::Ant => "#2f6fc0",
        Bug::Mosquito => "#8a8a8a",
        Bug::Ladybug => "#d0342c",
        Bug::Pillbug => "#2a9d8f",
    }
}

/// The offset of cell `c` from cell `from` on the wrapping grid, as axial (q, r): the grid wraps helically
/// every 32 columns, so the smallest offset with `q` in -16..16 is the one the hive means (it spans less).
fn offset(from: u16, c: u16) -> (i32, i32) {
    let mut d = (c as i32 - from as i32).rem_euclid(CELLS as i32);
    if d >= CELLS as i32 / 2 {
        d -= CELLS as i32;
    }
    let r = (d + 16).div_euclid(32);
    (d - 32 * r, r)
}

/// The axial step of each direction of [`nb`] (0 north-west of a point-top hexagon, clockwise: `(0, -1)`,
/// `(1, -1)`, `(1, 0)`, `(0, 1)`, `(-1, 1)`, `(-1, 0)`).
const STEPS: [(i32, i32); 6] = [(0, -1), (1, -1), (1, 0), (0, 1), (-1, 1), (-1, 0)];

/// How cells map to coordinates in one position. The occupied cell nearest the first piece's cell is placed by
/// its offset from that cell; every other occupied cell by a walk through the hive from it, step by step, and
/// an empty cell next to the hive one step from an occupied neighbour. The grid wraps every 32 columns, so an
/// offset alone could not place a hive spanning 16 columns or more from the anchor (found by an audit: a hive
/// stretched east was drawn as two islands); the hive is connected and spans fewer than 32 cells, so the walk
/// places every cell where the game means it.
#[derive(Clone)]
struct Frame {
    anchor: u16,
    at: (i32, i32),
    placed: std::collections::HashMap<u16, (i32, i32)>,
}

impl Frame {
    fn of(b: &Board) -> Frame {
        let dist = |(q, r): (i32, i32)| q.abs().max(r.abs()).max((q + r).abs());
        let occupied: std::collections::HashSet<u16> =
            (0..PIECES as u8).filter(|&p| b.enabled(p) && b.in_play(p)).map(|p| b.pos(p)).collect();
        let anchor = occupied.iter().copied().min_by_key(|&c| (dist(offset(ORIGIN, c)), c)).unwrap_or(ORIGIN);
        let at = offset(ORIGIN, anchor);
        let mut placed = std::collections::HashMap::with_capacity(occupied.len());
        if occupied.contains(&anchor) {
            placed.insert(anchor, at);
            let mut queue = std::collections::VecDeque::from([anchor]);
            while let Some(c) = queue.pop_front() {
                let (q, r) = placed[&c];
                for (d, (dq, dr)) in STEPS.iter().enumerate() {
                    let n = nb(c, d);
                    if occupied.contains(&n) && !placed.contains_key(&n) {
                        placed.insert(n, (q + dq, r + dr));
                        queue.push_back(n);
                    }
                }
            }
        }
        Frame { anchor, at, placed }
    }

    fn coords(&self, c: u16) -> (i32, i32) {
        if let Some(&at) = self.placed.get(&c) {
            return at;
        }
        // An empty cell: from an occupied neighbour, the nearest to the anchor (any would do).
        let beside = (0..6)
            .filter_map(|d| {
                let from = nb(c, d);
                let (q, r) = *self.placed.get(&from)?;
                // `c` is the neighbour of `from` in the opposite direction.
                let (dq, dr) = STEPS[(d + 3) % 6];
                Some((q + dq, r + dr))
            })
            .min_by_key(|&(q, r)| ((q - self.at.0).abs() + (r - self.at.1).abs(), q, r));
        beside.unwrap_or_else(|| {
            let (dq, dr) = offset(self.anchor, c);
            (self.at.0 + dq, self.at.1 + dr)
        })
    }
}

fn name((q, r): (i32, i32)) -> String {
    format!("{q},{r}")
}

fn parse_name(text: &str) -> Option<(i32, i32)> {
    let (q, r) = text.split_once(',')?;
    Some((q.trim().parse().ok()?, r.trim().parse().ok()?))
}

/// The pieces of a stack from the bottom up.
fn stack(b: &Board, top: u8) -> Vec<u8> {
    let mut out = vec![top];
    let mut p = b.below(top);
    while p != NO_PIECE && out.len() < PIECES {
        out.push(p);
        p = b.below(p);
    }
    out.reverse();
    out
}

/// A tile: a hexagon of the piece's colour, a disc of its bug's colour, the bug's letter and number.
fn tile(e: Element, p: u8, (cx, cy): (f64, f64), r: f64) -> Element {
    let (fill, stroke) = if color_of(p) == 0 { (picture::LIGHT_PIECE, "#6b6b6b") } else { (picture::DARK_PIECE, "#000000") };
    let bug = bug_of(p);
    let mut text = bug.letter().to_string();
    let n = KIND_NUMBER[(p % PER_SIDE) as usize];
    if n > 0 {
        text.push((b'0' + n) as char);
    }
    e.child(picture::polygon(&picture::hexagon(cx, cy, r * 0.94), fill).attr("stroke", stroke).num("stroke-width", r * 0.06))
        .child(picture::circle(cx, cy, r * 0.52, bug_colour(bug)))
        .child(picture::label(cx, cy, r * 0.48, "#ffffff", &text))
}

pub fn draw(game: &Hive, view: &View) -> Scene {
    let b = game.board();
    let frame = Frame::of(b);
    let sign = if view.flip { -1.0 } else { 1.0 };
    // Every cell to draw, with the top piece of its stack.
    let mut cells: BTreeMap<(i32, i32), Option<u8>> = BTreeMap::new();
    for p in 0..PIECES as u8 {
        if b.enabled(p) && b.on_top(p) {
            let c = b.pos(p);
            cells.insert(frame.coords(c), Some(p));
            for d in 0..6 {
                let n = nb(c, d);
                if b.height(n) == 0 {
                    cells.entry(frame.coords(n)).or_insert(None);
                }
            }
        }
    }
    if cells.is_empty() {
        cells.insert(frame.coords(ORIGIN), None);
    }
    for spot in view.spots.iter().filter_map(|s| parse_name(s)) {
        cells.entry(spot).or_insert(None);
    }
    let centre = |(q, r): (i32, i32)| (sign * CELL * SQRT3 * (q as f64 + r as f64 / 2.0), sign * CELL * 1.5 * r as f64);
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for &k in cells.keys() {
        let (x, y) = centre(k);
        x0 = x0.min(x - CELL);
        x1 = x1.max(x + CELL);
        y0 = y0.min(y - CELL);
        y1 = y1.max(y + CELL);
    }
    // Hands: two columns of tiles on each side.
    let hand_w = 4.0 * HAND * SQRT3 / 2.0 + 2.0 * PAD;
    let hand_rows = 7.0;
    let hand_h = hand_rows * HAND * 1.9 + 2.0 * PAD + 20.0;
    let board_w = x1 - x0 + 2.0 * PAD;
    let board_h = y1 - y0 + 2.0 * PAD;
    let height = board_h.max(hand_h);
    let width = board_w + 2.0 * hand_w;
    let (dx, dy) = (hand_w + PAD - x0, (height - (y1 - y0)) / 2.0 - y0);
    let mut scene = Scene::new(width, height, CELL * SQRT3, BACKGROUND);
    for (&k, &top) in &cells {
        let (x, y) = centre(k);
        let (x, y) = (x + dx, y + dy);
        let hex = picture::polygon(&picture::hexagon(x, y, CELL), "#e6dfcf").attr("stroke", "#c4b99f").attr("stroke-width", "1.5");
        scene.cell(&name(k), hex, (x, y));
        let Some(top) = top else { continue };
        let pieces = stack(b, top);
        let height = pieces.len();
        let mut g = Element::new("g")
            .attr("data-piece", piece_name(top))
            .attr("data-hex", name(k))
            .attr("data-height", height);
        if height > 1 {
            let below: Vec<String> = pieces[..height - 1].iter().map(|&p| piece_name(p)).collect();
            g = g.attr("data-below", below.join(" "));
        }
        g = tile(g, top, (x, y), CELL);
        if height > 1 {
            let (bx, by) = (x + CELL * 0.6, y - CELL * 0.58);
            g = g
                .child(picture::circle(bx, by, CELL * 0.36, "#c62828").attr("stroke", "#ffffff").attr("stroke-width", "2"))
                .child(picture::label(bx, by, CELL * 0.5, "#ffffff", &height.to_string()));
        }
        scene.piece(g);
    }
    // Hands: White's on the left, Black's on the right (swapped when flipped).
    for colour in 0..2 {
        let left = (colour == 0) != view.flip;
        let x_base = if left { PAD } else { width - hand_w + PAD };
        let title = if colour == 0 { "White" } else { "Black" };
        scene.decor(picture::label(x_base + hand_w / 2.0 - PAD, PAD, 13.0, "#555555", title));
        let in_hand: Vec<u8> = (colour as u8 * PER_SIDE..(colour as u8 + 1) * PER_SIDE).filter(|&p| b.in_hand(p)).collect();
        for (i, &p) in in_hand.iter().enumerate() {
            let (col, row) = (i / 7, i % 7);
            let x = x_base + HAND * SQRT3 / 2.0 + col as f64 * HAND * SQRT3 * 1.05;
            let y = PAD + 20.0 + HAND + row as f64 * HAND * 1.9;
            scene.piece(tile(Element::new("g").attr("data-hand", piece_name(p)), p, (x, y), HAND));
        }
    }
    scene
}

/// Where the piece stands (if it is on the board) and where it goes.
pub fn move_squares(game: &Hive, m: Move) -> Vec<String> {
    if m.is_pass() || m.to == NO_CELL {
        return Vec::new();
    }
    let b = game.board();
    let frame = Frame::of(b);
    let mut out = Vec::with_capacity(2);
    if b.in_play(m.piece) {
        out.push(name(frame.coords(b.pos(m.piece))));
    }
    out.push(name(frame.coords(m.to)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_undo_the_wrapping() {
        assert_eq!(offset(ORIGIN, ORIGIN), (0, 0));
        assert_eq!(offset(ORIGIN, nb(ORIGIN, 2)), (1, 0));
        assert_eq!(offset(ORIGIN, nb(ORIGIN, 3)), (0, 1));
        assert_eq!(offset(ORIGIN, nb(ORIGIN, 1)), (1, -1));
        assert_eq!(offset(ORIGIN, nb(ORIGIN, 4)), (-1, 1));
        assert_eq!(offset(ORIGIN, nb(ORIGIN, 0)), (0, -1));
        assert_eq!(offset(ORIGIN, nb(ORIGIN, 5)), (-1, 0));
        // Across the seam of the grid.
        let far = (ORIGIN + 15 * 32 + 15) % CELLS as u16;
        assert_eq!(offset(far, nb(far, 2)), (1, 0));
        assert_eq!(offset(far, nb(nb(far, 3), 3)), (0, 2));
    }

    /// Found by an audit: a hive stretched 16 columns east of its anchor was drawn as two islands (the grid
    /// wraps every 32 columns), its last piece and the arrows to it on the wrong hexes.
    #[test]
    fn a_hive_stretched_far_is_drawn_in_one_piece() {
        use crate::game::Game;
        let moves = "wB1;bL wB1-;wB2 \\wB1;bS1 bL-;wQ /wB2;bP bS1-;wG1 -wQ;bQ bP/;wM \\wG1;bM bQ-;wA1 wM/;\
                     bB1 bM/;wA1 bB1-;bG1 -bQ;wP wA1/;bA1 bQ\\;wA2 wP/;bA1 wA2-;wG2 wP\\;bS2 bA1/;wG2 -bB1;\
                     bB2 bS2-;wG3 \\wB2;bA2 bB2-;wL wG3/;bG2 bA2/;wL wB2/;bA3 bG2/;wA3 /wM;bG3 bA3/";
        let game = Hive::parse_position(&format!("Base+MLP;InProgress;White[16];{moves}"), None).expect("the game");
        let svg = draw(&game, &View::default()).to_svg("hive", "", false, 480);
        let hex = |piece: &str| -> (i32, i32) {
            let at = svg.find(&format!("data-piece=\"{piece}\"")).unwrap_or_else(|| panic!("{piece} drawn"));
            let rest = &svg[at..];
            let value = rest.split("data-hex=\"").nth(1).and_then(|v| v.split('"').next()).expect("its hex");
            parse_name(value).expect("a hex name")
        };
        // bA3 stands on 15,-7 and bG3 was placed north-east of it.
        let (q, r) = hex("bA3");
        assert_eq!(hex("bG3"), (q + 1, r - 1));
        // Every piece on top of a cell touches another one: the hive is drawn connected.
        let tops: Vec<(i32, i32)> = svg
            .split("data-piece=\"")
            .skip(1)
            .filter_map(|rest| rest.split("data-hex=\"").nth(1)?.split('"').next().and_then(parse_name))
            .collect();
        assert!(tops.len() > 20, "{svg}");
        for &(q, r) in &tops {
            let touches = STEPS.iter().any(|(dq, dr)| tops.contains(&(q + dq, r + dr)));
            assert!(touches, "{q},{r} is drawn apart from the hive");
        }
        // The arrow of a move to that end of the hive names the hexes the picture draws.
        let mut list = Vec::new();
        game.generate_moves(&mut list);
        for m in list {
            for square in move_squares(&game, m) {
                let (q, r) = parse_name(&square).expect("a hex name");
                let near = STEPS.iter().any(|(dq, dr)| tops.contains(&(q + dq, r + dr))) || tops.contains(&(q, r));
                assert!(near, "{}: {square} is away from the hive", game.format_move(m));
            }
        }
    }
}
