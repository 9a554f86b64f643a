//! A small neural network evaluation for chess: 768 inputs (a piece of each colour and type on each square,
//! seen from each side) into one hidden layer per side with squared clipped ReLU, then one output.
//!
//! The file format (written by the tuner's network trainer, [`crate::tuning::net`]), little-endian:
//!
//! ```text
//! "KBZNET1\n"                  8 bytes
//! inputs: u32 (768), hidden: u32 (H), flags: u32 (bit 0: the output corrects the hand-written evaluation)
//! centi-pawns per output unit: f32
//! W1: inputs × H i16, input-major (scaled by QA)
//! b1: H i16 (QA)
//! w2: 2 × H i16 (QB; the side to move's half first)
//! b2: i32 (QA × QB)
//! ```
//!
//! The hidden values are clipped to [0, QA] and squared, so the output is
//! `(Σ clip(h)² · w2 / QA + b2) / (QA · QB)` output units. A side's view of a piece is its colour relative to
//! the side (own 0, other 1), its type (pawn to king) and its square, mirrored top to bottom for Black:
//! `(relative colour · 6 + type) · 64 + square`.
//!
//! The game keeps both sides' hidden values before activation ([`Accumulator`]) along the moves it makes: a
//! move changes them by the rows of the few pieces that left or arrived ([`Network::update`]).

use cozy_chess::{Board, Color, Piece};

/// The hidden values' scale: a float of 1.0 is stored as 255.
pub const QA: i32 = 255;
/// The output weights' scale.
pub const QB: i32 = 64;
// The output's sum of 2 · HIDDEN terms, each at most QA² · 2 · QB (the reader refuses output weights beyond
// ±2 · QB), fits an i32: a wider layer needs a smaller QB or a wider sum.
const _: () = assert!(2 * HIDDEN as i64 * (QA as i64 * QA as i64) * 2 * QB as i64 <= i32::MAX as i64);
/// Inputs: 2 colours × 6 types × 64 squares.
pub const INPUTS: usize = 768;
/// The hidden layer's size the engine is built for.
pub const HIDDEN: usize = 128;
/// The file's first eight bytes.
pub const MAGIC: &[u8; 8] = b"KBZNET1\n";
/// Flag bit: the network's output is added to the hand-written evaluation.
pub const FLAG_RESIDUAL: u32 = 1;

/// A network, quantized.
#[derive(Clone)]
pub struct Network {
    w1: Vec<[i16; HIDDEN]>,
    b1: [i16; HIDDEN],
    w2: [[i16; HIDDEN]; 2],
    b2: i32,
    /// Centi-pawns per output unit.
    scale: f32,
    /// The output corrects the hand-written evaluation instead of replacing it.
    pub residual: bool,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Network({INPUTS}x{HIDDEN}, residual {})", self.residual)
    }
}

/// The feature index of a piece seen from `view`'s side.
#[inline]
pub fn feature(view: Color, color: Color, piece: Piece, square: usize) -> usize {
    let relative = usize::from(color != view);
    let sq = if view == Color::White { square } else { square ^ 56 };
    (relative * 6 + piece as usize) * 64 + sq
}

/// Every piece of the board as its feature from White's view; [`black_view`] gives the same piece's from
/// Black's.
pub fn white_features(board: &Board, out: &mut Vec<u16>) {
    out.clear();
    for color in [Color::White, Color::Black] {
        for piece in Piece::ALL {
            for sq in board.colored_pieces(color, piece) {
                out.push(feature(Color::White, color, piece, sq as usize) as u16);
            }
        }
    }
}

/// A White-view feature seen from Black's side.
#[inline]
pub fn black_view(white_feature: usize) -> usize {
    // The colour swapped (own and other are the two halves of the inputs), the square mirrored.
    let swapped = if white_feature < INPUTS / 2 { white_feature + INPUTS / 2 } else { white_feature - INPUTS / 2 };
    swapped ^ 56
}

fn take<'a>(bytes: &mut &'a [u8], n: usize, what: &str) -> Result<&'a [u8], String> {
    if bytes.len() < n {
        return Err(format!("the network file ends inside {what}"));
    }
    let (head, rest) = bytes.split_at(n);
    *bytes = rest;
    Ok(head)
}

fn u32_at(bytes: &mut &[u8], what: &str) -> Result<u32, String> {
    Ok(u32::from_le_bytes(take(bytes, 4, what)?.try_into().expect("4 bytes")))
}

fn i16s(bytes: &mut &[u8], out: &mut [i16], what: &str) -> Result<(), String> {
    let raw = take(bytes, 2 * out.len(), what)?;
    for (o, c) in out.iter_mut().zip(raw.chunks_exact(2)) {
        *o = i16::from_le_bytes([c[0], c[1]]);
    }
    Ok(())
}

impl Network {
    /// Read a network file; an error names what is wrong with it.
    pub fn from_bytes(mut bytes: &[u8]) -> Result<Network, String> {
        let b = &mut bytes;
        if take(b, 8, "the header")? != MAGIC {
            return Err("not a kibitz chess network (the file does not start with KBZNET1)".into());
        }
        let inputs = u32_at(b, "the header")?;
        let hidden = u32_at(b, "the header")?;
        let flags = u32_at(b, "the header")?;
        let scale = f32::from_bits(u32_at(b, "the header")?);
        if inputs as usize != INPUTS {
            return Err(format!("the network has {inputs} inputs; chess's have {INPUTS}"));
        }
        if hidden as usize != HIDDEN {
            return Err(format!("the network has {hidden} hidden values; this engine is built for {HIDDEN}"));
        }
        if flags & !FLAG_RESIDUAL != 0 {
            return Err(format!("unknown flags {flags:#x} in the network's header"));
        }
        if !scale.is_finite() || scale <= 0.0 || scale > 10_000.0 {
            return Err(format!("the network's scale {scale} is not a positive number of centi-pawns"));
        }
        let mut w1 = vec![[0i16; HIDDEN]; INPUTS];
        for row in &mut w1 {
            i16s(b, row, "the first layer's weights")?;
        }
        let mut b1 = [0i16; HIDDEN];
        i16s(b, &mut b1, "the first layer's biases")?;
        let mut w2 = [[0i16; HIDDEN]; 2];
        for half in &mut w2 {
            i16s(b, half, "the output weights")?;
        }
        // Σ of 2H terms of QA² · |w2| must fit an i32.
        if let Some(w) = w2.iter().flatten().find(|w| i32::from(w.unsigned_abs()) > 2 * QB) {
            return Err(format!("an output weight {w} is beyond ±{} (the sum could overflow)", 2 * QB));
        }
        let b2 = u32_at(b, "the output bias")? as i32;
        if !b.is_empty() {
            return Err(format!("{} bytes after the network's end", b.len()));
        }
        Ok(Network { w1, b1, w2, b2, scale, residual: flags & FLAG_RESIDUAL != 0 })
    }

    /// The hidden values of both sides for `board`, summed from every piece.
    pub fn accumulate(&self, board: &Board) -> Accumulator {
        let mut acc = Accumulator([self.b1; 2]);
        for color in [Color::White, Color::Black] {
            for piece in Piece::ALL {
                for sq in board.colored_pieces(color, piece) {
                    self.change(&mut acc, color, piece, sq as usize, add);
                }
            }
        }
        acc
    }

    /// `acc`, the hidden values of `before`, made those of `after` by the pieces that left or arrived (every
    /// move, castling, en passant and promotions included, changes only a few).
    pub fn update(&self, acc: &mut Accumulator, before: &Board, after: &Board) {
        for color in [Color::White, Color::Black] {
            for piece in Piece::ALL {
                let (b, a) = (before.colored_pieces(color, piece), after.colored_pieces(color, piece));
                if a == b {
                    continue;
                }
                for sq in b & !a {
                    self.change(acc, color, piece, sq as usize, sub);
                }
                for sq in a & !b {
                    self.change(acc, color, piece, sq as usize, add);
                }
            }
        }
    }

    #[inline]
    fn change(&self, acc: &mut Accumulator, color: Color, piece: Piece, sq: usize, op: fn(&mut [i16; HIDDEN], &[i16; HIDDEN])) {
        op(&mut acc.0[0], &self.w1[feature(Color::White, color, piece, sq)]);
        op(&mut acc.0[1], &self.w1[feature(Color::Black, color, piece, sq)]);
    }

    /// The output for `stm`, the side to move, from the hidden values, in centi-pawns.
    pub fn evaluate_from(&self, acc: &Accumulator, stm: Color) -> i32 {
        let (own, other) = (&acc.0[stm as usize], &acc.0[!stm as usize]);
        let sum = activate(own, &self.w2[0]) + activate(other, &self.w2[1]);
        let units = (sum / QA + self.b2) as f32 / (QA * QB) as f32;
        (units * self.scale).round() as i32
    }

    /// The output for the side to move of `board`, in centi-pawns, summed from the board.
    pub fn evaluate(&self, board: &Board) -> i32 {
        self.evaluate_from(&self.accumulate(board), board.side_to_move())
    }
}

/// The hidden values before activation, from White's view and from Black's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accumulator([[i16; HIDDEN]; 2]);

impl Default for Accumulator {
    fn default() -> Accumulator {
        Accumulator([[0; HIDDEN]; 2])
    }
}

#[inline]
fn add(acc: &mut [i16; HIDDEN], w: &[i16; HIDDEN]) {
    for (a, w) in acc.iter_mut().zip(w) {
        *a = a.wrapping_add(*w);
    }
}

#[inline]
fn sub(acc: &mut [i16; HIDDEN], w: &[i16; HIDDEN]) {
    for (a, w) in acc.iter_mut().zip(w) {
        *a = a.wrapping_sub(*w);
    }
}

#[inline]
fn activate(acc: &[i16; HIDDEN], w: &[i16; HIDDEN]) -> i32 {
    let mut sum = 0i32;
    for (&a, &w) in acc.iter().zip(w) {
        let v = i32::from(a).clamp(0, QA);
        sum += v * i32::from(w) * v;
    }
    sum
}

/// The network file of a trained network: weights rounded to the engine's fixed point. Any hidden size is
/// written; the engine reads only [`HIDDEN`].
pub fn write(net: &crate::tuning::net::FloatNet, scale: f32, residual: bool) -> Result<Vec<u8>, String> {
    if net.inputs != INPUTS {
        return Err(format!("a network of {} inputs; chess's have {INPUTS}", net.inputs));
    }
    let quantize = |x: f32, q: i32, limit: i32| -> i16 { (x * q as f32).round().clamp(-limit as f32, limit as f32) as i16 };
    let mut out = Vec::with_capacity(32 + 2 * (net.w1.len() + 3 * net.hidden) + 4);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(INPUTS as u32).to_le_bytes());
    out.extend_from_slice(&(net.hidden as u32).to_le_bytes());
    out.extend_from_slice(&(if residual { FLAG_RESIDUAL } else { 0 }).to_le_bytes());
    out.extend_from_slice(&scale.to_bits().to_le_bytes());
    for &w in net.w1.iter().chain(&net.b1) {
        out.extend_from_slice(&quantize(w, QA, i32::from(i16::MAX)).to_le_bytes());
    }
    for &w in &net.w2 {
        out.extend_from_slice(&quantize(w, QB, 2 * QB).to_le_bytes());
    }
    out.extend_from_slice(&((net.b2 * (QA * QB) as f32).round() as i32).to_le_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn black_view_is_the_feature_black_sees() {
        let board: Board = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4".parse().unwrap();
        for color in [Color::White, Color::Black] {
            for piece in Piece::ALL {
                for sq in board.colored_pieces(color, piece) {
                    let white = feature(Color::White, color, piece, sq as usize);
                    assert_eq!(black_view(white), feature(Color::Black, color, piece, sq as usize));
                    assert_eq!(black_view(black_view(white)), white);
                }
            }
        }
    }
}
