//! Rules tests: every piece's movement, the palace, the river, the flying general, the end of the game,
//! repetition, notations and hashing.

use super::*;

#[test]
fn start_position() {
    let g = Xiangqi::start();
    assert_eq!(g.to_fen(), START_FEN);
    assert_eq!(g.legal_moves().len(), 44);
}
