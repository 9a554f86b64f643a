//! The chess board picture: 8x8 squares `a1`..`h8`, pieces as discs with their letter, file and rank
//! coordinates along the edges.

use cozy_chess::{Color, File, Rank, Square};

use super::Chess;
use crate::picture::{self, Disc, Grid, Scene, View};

const UNIT: f64 = 60.0;
const MARGIN: f64 = 24.0;
const LIGHT: &str = "#efd9b4";
const DARK: &str = "#b07d52";
const FRAME: &str = "#5b3b22";

pub fn draw(game: &Chess, view: &View) -> Scene {
    let board = game.board();
    let size = 8.0 * UNIT;
    let mut scene = Scene::new(size + MARGIN, size + MARGIN, UNIT, FRAME);
    let grid = Grid { files: 8, ranks: 8, unit: UNIT, origin: (MARGIN, 0.0), flip: view.flip };
    for rank in 0..8 {
        for file in 0..8 {
            let (x, y) = grid.corner(file, rank);
            let name = square_name(file, rank);
            let fill = if (file + rank).is_multiple_of(2) { DARK } else { LIGHT };
            let centre = grid.centre(file, rank);
            scene.square(&name, picture::rect(x, y, UNIT, UNIT, fill), centre);
            let sq = Square::new(File::index(file), Rank::index(rank));
            if let (Some(piece), Some(colour)) = (board.piece_on(sq), board.color_on(sq)) {
                let letter = char::from(piece).to_ascii_uppercase().to_string();
                let (code, disc) = match colour {
                    Color::White => (
                        letter.clone(),
                        Disc {
                            fill: picture::LIGHT_PIECE,
                            stroke: "#3a3a3a",
                            label: &letter,
                            label_fill: "#202020",
                            crowned: false,
                        },
                    ),
                    Color::Black => (
                        letter.to_ascii_lowercase(),
                        Disc {
                            fill: picture::DARK_PIECE,
                            stroke: "#000000",
                            label: &letter,
                            label_fill: "#f5f5f5",
                            crowned: false,
                        },
                    ),
                };
                scene.piece(picture::disc_piece(&code, &name, centre, UNIT * 0.4, disc));
            }
        }
    }
    for i in 0..8 {
        let (x, _) = grid.centre(i, 0);
        let (_, y) = grid.centre(0, i);
        let file = ((b'a' + i as u8) as char).to_string();
        scene.decor(picture::label(x, size + MARGIN / 2.0, MARGIN * 0.6, "#f3e6d0", &file));
        scene.decor(picture::label(MARGIN / 2.0, y, MARGIN * 0.6, "#f3e6d0", &(i + 1).to_string()));
    }
    scene
}

fn square_name(file: usize, rank: usize) -> String {
    format!("{}{}", (b'a' + file as u8) as char, rank + 1)
}

/// From and to as UCI writes them (castling as the king's two-square step).
pub fn move_squares(uci: &str) -> Vec<String> {
    match (uci.get(0..2), uci.get(2..4)) {
        (Some(from), Some(to)) => vec![from.to_string(), to.to_string()],
        _ => Vec::new(),
    }
}
