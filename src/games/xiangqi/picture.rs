//! The xiangqi board picture: pieces stand on the points of 9 x 10 lines, with the river across the middle and
//! the diagonals of both palaces; points are named as the ICCS notation names them, in lower case (`e3`).

use super::Xiangqi;
use super::board::Move;
use crate::picture::{self, Disc, Scene, View};

const UNIT: f64 = 60.0;
const MARGIN: f64 = 50.0;
const WOOD: &str = "#eed29f";
const INK: &str = "#5a3a1a";

/// Where the point (file, rank) is drawn: rank 0 (Red's side) at the bottom unless flipped.
fn point(file: usize, rank: usize, flip: bool) -> (f64, f64) {
    let (col, row) = if flip { (8 - file, rank) } else { (file, 9 - rank) };
    (MARGIN + col as f64 * UNIT, MARGIN + row as f64 * UNIT)
}

fn point_name(file: usize, rank: usize) -> String {
    format!("{}{}", (b'a' + file as u8) as char, rank)
}

pub fn draw(game: &Xiangqi, view: &View) -> Scene {
    let flip = view.flip;
    let mut scene = Scene::new(8.0 * UNIT + 2.0 * MARGIN, 9.0 * UNIT + 2.0 * MARGIN, UNIT, WOOD);
    let seg = |scene: &mut Scene, a: (usize, usize), b: (usize, usize), width: f64| {
        let (x1, y1) = point(a.0, a.1, flip);
        let (x2, y2) = point(b.0, b.1, flip);
        scene.decor(picture::line(x1, y1, x2, y2, INK, width));
    };
    for rank in 0..10 {
        let w = if rank == 0 || rank == 9 { 3.0 } else { 1.6 };
        seg(&mut scene, (0, rank), (8, rank), w);
    }
    seg(&mut scene, (0, 0), (0, 9), 3.0);
    seg(&mut scene, (8, 0), (8, 9), 3.0);
    for file in 1..8 {
        // The river cuts the inner files between ranks 4 and 5.
        seg(&mut scene, (file, 0), (file, 4), 1.6);
        seg(&mut scene, (file, 5), (file, 9), 1.6);
    }
    for (low, high) in [(0, 2), (7, 9)] {
        seg(&mut scene, (3, low), (5, high), 1.6);
        seg(&mut scene, (5, low), (3, high), 1.6);
    }
    for file in 0..9 {
        for rank in 0..10 {
            let (x, y) = point(file, rank, flip);
            let name = point_name(file, rank);
            let target = picture::rect(x - UNIT / 2.0, y - UNIT / 2.0, UNIT, UNIT, "#ffffff").attr("fill-opacity", "0");
            scene.square(&name, target, (x, y));
            if let Some(letter) = game.piece_at(file, rank) {
                let red = letter.is_ascii_uppercase();
                let text = letter.to_ascii_uppercase().to_string();
                let disc = Disc {
                    fill: if red { picture::RED_PIECE } else { picture::DARK_PIECE },
                    stroke: "#f4e4c1",
                    label: &text,
                    label_fill: "#fff8e8",
                    crowned: false,
                };
                scene.piece(picture::disc_piece(&letter.to_string(), &name, (x, y), UNIT * 0.42, disc));
            }
        }
    }
    for file in 0..9 {
        let (x, _) = point(file, 0, flip);
        let name = ((b'a' + file as u8) as char).to_string();
        scene.decor(picture::label(x, 9.0 * UNIT + MARGIN * 1.7, MARGIN * 0.36, INK, &name));
    }
    for rank in 0..10 {
        let (_, y) = point(0, rank, flip);
        scene.decor(picture::label(MARGIN * 0.4, y, MARGIN * 0.36, INK, &rank.to_string()));
    }
    scene
}

pub fn move_squares(m: Move) -> Vec<String> {
    let (ff, fr) = m.from_point();
    let (tf, tr) = m.to_point();
    vec![point_name(ff as usize, fr as usize), point_name(tf as usize, tr as usize)]
}
