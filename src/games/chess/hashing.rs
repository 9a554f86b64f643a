//! The hash a move will give, known before the move is made: so that the search can ask for the child's
//! transposition table line earlier than making the move allows (a probe of a large table waits on memory more
//! than anything else in the search, and the sooner the line is asked for, the less of that wait is left).
//!
//! cozy-chess's position hash is a Zobrist hash: the exclusive or of one key for each piece of each colour on
//! each square, one for Black to move, one for each castling right and one for the en passant file. Its keys
//! are not public, but each is the difference between the hashes of two positions that differ in that one
//! thing, which cozy-chess builds: [`Keys::new`] reads them off such pairs once, and checks them on
//! every move of a few positions before they are used. A prediction is only a hint for a prefetch: a wrong one
//! (which the check makes unlikely) costs a wasted memory read, never a wrong result, since the table is always
//! probed with the hash the made move really gives.

use cozy_chess::{Board, BoardBuilder, Color, File, Piece, Rank, Square};

/// The keys of cozy-chess's hash that a move without castling, en passant or a double step changes.
pub(super) struct Keys {
    /// Black to move.
    black_to_move: u64,
    /// Each piece but the king, by colour, type and square (pawns on the first and last ranks: 0, never
    /// asked).
    pieces: [[[u64; 64]; 6]; 2],
    /// A king's key on each square, by colour, less its key on a fixed square (a king moves, and only the two
    /// squares' keys together are asked, in which the fixed one cancels).
    kings: [[u64; 64]; 2],
}

/// The hash of the position with only the given pieces (square, colour, piece) and `to_move` to move, no
/// castling or en passant, if cozy-chess takes it as a position.
fn hash_of(pieces: &[(Square, Color, Piece)], to_move: Color) -> Option<u64> {
    let mut builder = BoardBuilder::empty();
    for &(sq, color, piece) in pieces {
        *builder.square_mut(sq) = Some((piece, color));
    }
    builder.side_to_move = to_move;
    builder.build().ok().map(|b| b.hash())
}

/// Whether two squares are the same or touch.
fn near(a: Square, b: Square) -> bool {
    (a.file() as i32 - b.file() as i32).abs() <= 1 && (a.rank() as i32 - b.rank() as i32).abs() <= 1
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keys")
    }
}

impl Keys {
    /// The keys read off pairs of positions, then checked on every legal move of a few positions; `None` if any
    /// position is refused or any move's hash is not the one predicted.
    pub(super) fn new() -> Option<Keys> {
        let kings_apart = [(Square::A1, Square::H8), (Square::H1, Square::A8), (Square::A8, Square::H1)];
        let kings = [(Square::E1, Color::White, Piece::King), (Square::E8, Color::Black, Piece::King)];
        let black_to_move = hash_of(&kings, Color::Black)? ^ hash_of(&kings, Color::White)?;
        let mut keys = Keys { black_to_move, pieces: [[[0; 64]; 6]; 2], kings: [[0; 64]; 2] };
        for color in [Color::White, Color::Black] {
            for piece in [Piece::Pawn, Piece::Knight, Piece::Bishop, Piece::Rook, Piece::Queen] {
                for sq in Square::ALL {
                    if piece == Piece::Pawn && matches!(sq.rank(), Rank::First | Rank::Eighth) {
                        continue;
                    }
                    // Kings away from the square; the other side to move, so that a check the piece gives is
                    // one the position may have.
                    let &(wk, bk) = kings_apart.iter().find(|(w, b)| *w != sq && *b != sq)?;
                    let kings = [(wk, Color::White, Piece::King), (bk, Color::Black, Piece::King)];
                    let with: Vec<_> = kings.iter().copied().chain([(sq, color, piece)]).collect();
                    keys.pieces[color as usize][piece as usize][sq as usize] =
                        hash_of(&with, !color)? ^ hash_of(&kings, !color)?;
                }
            }
            // The king on each square against the king on its fixed square, the other king on a corner near
            // neither.
            let fixed = if color == Color::White { Square::A1 } else { Square::H8 };
            for sq in Square::ALL {
                let other = [Square::A1, Square::H1, Square::A8, Square::H8]
                    .into_iter()
                    .find(|&o| !near(o, sq) && !near(o, fixed))?;
                let board = |king| hash_of(&[(king, color, Piece::King), (other, !color, Piece::King)], Color::White);
                keys.kings[color as usize][sq as usize] = board(sq)? ^ board(fixed)?;
            }
        }
        keys.checked().then_some(keys)
    }

    /// Whether every legal move of a few positions (castling, en passant, promotions, captures of rooks that
    /// could castle among them) that [`Keys::after`] predicts gives the hash predicted, and most are predicted.
    fn checked(&self) -> bool {
        let (mut predicted, mut moves) = (0, 0);
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "4k3/8/8/2KPp2r/8/8/8/8 w - e6 0 1",
        ] {
            let Ok(board) = Board::from_fen(fen, false) else { return false };
            let mut ok = true;
            board.generate_moves(|pm| {
                for m in pm {
                    moves += 1;
                    if let Some(h) = self.after(&board, m) {
                        let mut child = board.clone();
                        child.play_unchecked(m);
                        ok &= child.hash() == h;
                        predicted += 1;
                    }
                }
                !ok
            });
            if !ok {
                return false;
            }
        }
        predicted * 4 > moves * 3
    }

    /// The hash of `board` after legal move `m`, where the move changes only its pieces and the side to move:
    /// `None` for castling, en passant, a double step (which may open an en passant capture) and a move that
    /// takes away a castling right.
    #[inline]
    pub(super) fn after(&self, board: &Board, m: cozy_chess::Move) -> Option<u64> {
        let us = board.side_to_move();
        if board.colors(us).has(m.to) {
            return None;
        }
        let piece = piece_at(board, m.from);
        let captures = board.occupied().has(m.to);
        if piece == Piece::Pawn as usize
            && (m.from.file() != m.to.file() && !captures || (m.from as i32 - m.to as i32).abs() == 16)
        {
            return None;
        }
        for color in [Color::White, Color::Black] {
            let rights = board.castle_rights(color);
            if rights.short.is_none() && rights.long.is_none() {
                continue;
            }
            let back = Rank::First.relative_to(color);
            let touches = |file: Option<File>| file.is_some_and(|f| [m.from, m.to].contains(&Square::new(f, back)));
            if touches(rights.short) || touches(rights.long) || m.from == board.king(color) {
                return None;
            }
        }
        let (ours, theirs) = (&self.pieces[us as usize], &self.pieces[!us as usize]);
        // The en passant file of the position, if any, is gone after any move.
        let mut h = board.hash_without_ep() ^ self.black_to_move;
        h ^= if piece == Piece::King as usize {
            self.kings[us as usize][m.from as usize] ^ self.kings[us as usize][m.to as usize]
        } else {
            let arrives = m.promotion.map_or(piece, |p| p as usize);
            ours[piece][m.from as usize] ^ ours[arrives][m.to as usize]
        };
        if captures {
            h ^= theirs[piece_at(board, m.to)][m.to as usize];
        }
        Some(h)
    }
}

/// The type of the piece on `sq` (which holds one), as an index, without a branch for each type.
#[inline(always)]
fn piece_at(board: &Board, sq: Square) -> usize {
    Piece::ALL.iter().map(|&p| ((board.pieces(p).0 >> sq as u32) & 1) as usize * p as usize).sum()
}
