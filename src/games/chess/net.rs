//! A small neural network evaluation for chess: 768 inputs (a piece of each colour and type on each square,
//! seen from each side) into one hidden layer per side with squared clipped ReLU, then one output.
//!
//! The file format (written by the tuner's network trainer, [`crate::tuning::net`]), little-endian:
//!
//! ```text
//! "KBZNET3\n"                  8 bytes ("KBZNET2\n": no king regions, and no count of them; "KBZNET1\n":
//!                              one output bucket either, and no count of those)
//! inputs: u32 (768), hidden: u32 (H), flags: u32 (bit 0: the output corrects the hand-written evaluation)
//! centi-pawns per output unit: f32
//! output buckets: u32 (B, 1 to 32)
//! king regions: u32 (K, 1 or KING_BUCKETS)
//! W1: K × inputs × H i16, region-major, then input-major (scaled by QA)
//! b1: H i16 (QA)
//! w2: B × 2 × H i16 (QB; each bucket's side to move's half first)
//! b2: B × i32 (QA × QB)
//! ```
//!
//! The output weights and bias are chosen by how many pieces are on the board ([`output_bucket`]): the
//! hidden layer is shared, and each stage of the game weighs it its own way. With king regions, each side's
//! first layer has a set of weights for each region of the board its own king may stand in ([`king_bucket`]):
//! a piece's value to a side depends on where that side's king is. A king move into another region sums that
//! side's hidden values afresh.
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
// Each term of the output's sum is at most QA² · 2 · QB (the reader refuses output weights beyond ±2 · QB). The
// sums are made in i64, but the vector forms first add a quarter of one side's HIDDEN terms in each 32-bit lane
// ([`simd`]), which must fit an i32: a wider layer than 1,024 needs a smaller QB or wider lanes.
const _: () = assert!((HIDDEN / 4) as i64 * (QA as i64 * QA as i64) * 2 * QB as i64 <= i32::MAX as i64);
/// Inputs: 2 colours × 6 types × 64 squares.
pub const INPUTS: usize = 768;
/// The hidden layer's size the engine is built for.
pub const HIDDEN: usize = 256;
/// The file's first eight bytes, with king regions.
pub const MAGIC_V3: &[u8; 8] = b"KBZNET3\n";
/// The first eight bytes of the format before king regions (none, no count).
pub const MAGIC: &[u8; 8] = b"KBZNET2\n";
/// The first eight bytes of the format before output buckets (one bucket, no count).
pub const MAGIC_V1: &[u8; 8] = b"KBZNET1\n";
/// The regions a side's own king may stand in, each with its own first-layer weights, where a network has them.
pub const KING_BUCKETS: usize = 7;
/// Each square's king region, seen from the king's side (rank 1 its own back rank): the back rank's queen
/// side, centre and king side (castled long, not castled, castled short), the second rank's halves, the third
/// and fourth ranks, and the rest (kings out in the endgame).
#[rustfmt::skip]
const KING_BUCKET: [u8; 64] = [
    0, 0, 0, 1, 1, 2, 2, 2,
    3, 3, 3, 3, 4, 4, 4, 4,
    5, 5, 5, 5, 5, 5, 5, 5,
    5, 5, 5, 5, 5, 5, 5, 5,
    6, 6, 6, 6, 6, 6, 6, 6,
    6, 6, 6, 6, 6, 6, 6, 6,
    6, 6, 6, 6, 6, 6, 6, 6,
    6, 6, 6, 6, 6, 6, 6, 6,
];

/// The king region ([`KING_BUCKETS`]) of a king on `square`, as its own side sees it (mirrored top to bottom
/// for Black, as [`feature`] does).
#[inline]
pub fn king_bucket(square: usize) -> usize {
    usize::from(KING_BUCKET[square])
}
/// The most output buckets a file may have.
pub const MAX_BUCKETS: usize = 32;
/// The widest hidden layer a network file may have to be read for training ([`read_float`]) or trained at all.
pub const MAX_TRAINED_HIDDEN: usize = 1024;
/// Flag bit: the network's output is added to the hand-written evaluation.
pub const FLAG_RESIDUAL: u32 = 1;

/// A network, quantized.
#[derive(Clone)]
pub struct Network {
    /// `kings` × [`INPUTS`] rows.
    w1: Vec<Row>,
    /// King regions: 1 (none) or [`KING_BUCKETS`].
    kings: usize,
    b1: Row,
    /// Per output bucket: the side to move's half, the other's.
    w2: Vec<[Row; 2]>,
    b2: Vec<i32>,
    /// Centi-pawns per output unit.
    scale: f32,
    /// The output corrects the hand-written evaluation instead of replacing it.
    pub residual: bool,
    /// The processor has AVX2 (and the bit instructions of its time, [`has_avx2`]): the hidden layer's loops run
    /// 16 values at a time instead of 8.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    avx2: bool,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Network({}x{INPUTS}x{HIDDEN}x{}, residual {})", self.kings, self.b2.len(), self.residual)
    }
}

/// The feature index of a piece seen from `view`'s side.
#[inline]
pub fn feature(view: Color, color: Color, piece: Piece, square: usize) -> usize {
    let relative = usize::from(color != view);
    let sq = if view == Color::White { square } else { square ^ 56 };
    (relative * 6 + piece as usize) * 64 + sq
}

/// The output bucket of a position with `pieces` pieces (kings included) among `buckets`: the 32 possible
/// counts in equal runs, fewest pieces first.
#[inline]
pub fn output_bucket(pieces: usize, buckets: usize) -> usize {
    (pieces.saturating_sub(1) * buckets / 32).min(buckets - 1)
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

/// What a network file's header says.
struct Header {
    hidden: usize,
    /// King regions: 1 or [`KING_BUCKETS`].
    kings: usize,
    residual: bool,
    /// Centi-pawns per output unit.
    scale: f32,
    buckets: usize,
}

/// The header of a network file of any of the three formats, checked but for the hidden size (the engine and
/// the trainer accept different ones).
fn header(b: &mut &[u8]) -> Result<Header, String> {
    let version = match take(b, 8, "the header")? {
        m if m == MAGIC_V3 => 3,
        m if m == MAGIC => 2,
        m if m == MAGIC_V1 => 1,
        _ => return Err("not a kibitz chess network (the file does not start with KBZNET3, 2 or 1)".into()),
    };
    let inputs = u32_at(b, "the header")?;
    let hidden = u32_at(b, "the header")?;
    let flags = u32_at(b, "the header")?;
    let scale = f32::from_bits(u32_at(b, "the header")?);
    if inputs as usize != INPUTS {
        return Err(format!("the network has {inputs} inputs; chess's have {INPUTS}"));
    }
    if flags & !FLAG_RESIDUAL != 0 {
        return Err(format!("unknown flags {flags:#x} in the network's header"));
    }
    if !scale.is_finite() || scale <= 0.0 || scale > 10_000.0 {
        return Err(format!("the network's scale {scale} is not a positive number of centi-pawns"));
    }
    let buckets = if version >= 2 { u32_at(b, "the header")? as usize } else { 1 };
    if !(1..=MAX_BUCKETS).contains(&buckets) {
        return Err(format!("the network has {buckets} output buckets; 1 to {MAX_BUCKETS} are allowed"));
    }
    let kings = if version >= 3 { u32_at(b, "the header")? as usize } else { 1 };
    if kings != 1 && kings != KING_BUCKETS {
        return Err(format!("the network has {kings} king regions; 1 or {KING_BUCKETS} are read"));
    }
    Ok(Header { hidden: hidden as usize, kings, residual: flags & FLAG_RESIDUAL != 0, scale, buckets })
}

/// A network file of any hidden size (1 to [`MAX_TRAINED_HIDDEN`]) read back into floating point, to train
/// further from: the network, its centi-pawns per output unit, and whether it corrects the hand-written
/// evaluation. Writing the result again ([`write`]) gives the same bytes.
pub fn read_float(mut bytes: &[u8]) -> Result<(crate::tuning::net::FloatNet, f32, bool), String> {
    let b = &mut bytes;
    let Header { hidden, kings, residual, scale, buckets } = header(b)?;
    if !(1..=MAX_TRAINED_HIDDEN).contains(&hidden) {
        return Err(format!("the network has {hidden} hidden values; 1 to {MAX_TRAINED_HIDDEN} are read"));
    }
    let mut floats = |n: usize, q: f32, what: &str| -> Result<Vec<f32>, String> {
        let mut raw = vec![0i16; n];
        i16s(b, &mut raw, what)?;
        Ok(raw.into_iter().map(|x| f32::from(x) / q).collect())
    };
    let w1 = floats(kings * INPUTS * hidden, QA as f32, "the first layer's weights")?;
    let b1 = floats(hidden, QA as f32, "the first layer's biases")?;
    let w2 = floats(buckets * 2 * hidden, QB as f32, "the output weights")?;
    let mut b2 = Vec::with_capacity(buckets);
    for _ in 0..buckets {
        b2.push(u32_at(b, "the output biases")? as i32 as f32 / (QA * QB) as f32);
    }
    if !b.is_empty() {
        return Err(format!("{} bytes after the network's end", b.len()));
    }
    Ok((crate::tuning::net::FloatNet { inputs: kings * INPUTS, hidden, w1, b1, w2, b2 }, scale, residual))
}

impl Network {
    /// Read a network file; an error names what is wrong with it.
    pub fn from_bytes(mut bytes: &[u8]) -> Result<Network, String> {
        let b = &mut bytes;
        let Header { hidden, kings, residual, scale, buckets } = header(b)?;
        if hidden != HIDDEN {
            return Err(format!("the network has {hidden} hidden values; this engine is built for {HIDDEN}"));
        }
        let mut w1 = vec![Row::ZERO; kings * INPUTS];
        for row in &mut w1 {
            i16s(b, &mut row.0, "the first layer's weights")?;
        }
        let mut b1 = Row::ZERO;
        i16s(b, &mut b1.0, "the first layer's biases")?;
        let mut w2 = vec![[Row::ZERO; 2]; buckets];
        for half in w2.iter_mut().flatten() {
            i16s(b, &mut half.0, "the output weights")?;
        }
        // Each term QA² · |w2| of the output's sum must leave the vector forms' 32-bit lanes room.
        if let Some(w) = w2.iter().flatten().flat_map(|r| &r.0).find(|w| i32::from(w.unsigned_abs()) > 2 * QB) {
            return Err(format!("an output weight {w} is beyond ±{} (the sum could overflow)", 2 * QB));
        }
        let mut b2 = Vec::with_capacity(buckets);
        for _ in 0..buckets {
            b2.push(u32_at(b, "the output biases")? as i32);
        }
        if !b.is_empty() {
            return Err(format!("{} bytes after the network's end", b.len()));
        }
        Ok(Network { w1, kings, b1, w2, b2, scale, residual, avx2: has_avx2() })
    }

    /// The same network computed without AVX2, as on a processor that lacks it (for tests).
    #[cfg(test)]
    pub(crate) fn without_avx2(mut self) -> Network {
        self.avx2 = false;
        self
    }

    /// The hidden values of both sides for `board`, summed from every piece.
    pub fn accumulate(&self, board: &Board) -> Accumulator {
        let mut acc = Accumulator([self.b1; 2]);
        for view in [Color::White, Color::Black] {
            self.accumulate_view(board, view, &mut acc.0[view as usize]);
        }
        acc
    }

    /// `view`'s hidden values for `board`, summed from every piece.
    fn accumulate_view(&self, board: &Board, view: Color, out: &mut Row) {
        *out = self.b1;
        let region = self.king_offset(board, view);
        for color in [Color::White, Color::Black] {
            for piece in Piece::ALL {
                for sq in board.colored_pieces(color, piece) {
                    add(out, &self.w1[region + feature(view, color, piece, sq as usize)]);
                }
            }
        }
    }

    /// The first row of `view`'s king region on `board`: 0 without regions.
    #[inline(always)]
    fn king_offset(&self, board: &Board, view: Color) -> usize {
        if self.kings == 1 {
            return 0;
        }
        let king = board.king(view) as usize;
        king_bucket(if view == Color::White { king } else { king ^ 56 }) * INPUTS
    }

    /// `next` made the hidden values of `after` from `prev`, those of `before`, by the rows of the pieces that
    /// left or arrived: every move, castling, en passant and promotions included, changes at most two of each,
    /// and the common cases sum them into `next` in one pass. Boards further apart are summed afresh, and so is
    /// the view of a side whose king moved into another region.
    pub fn update(&self, prev: &Accumulator, next: &mut Accumulator, before: &Board, after: &Board) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is set only where the processor has every feature `update_avx2` is compiled for.
            return unsafe { self.update_avx2(prev, next, before, after) };
        }
        self.update_any::<false>(prev, next, before, after)
    }

    /// [`Network::update`] compiled for AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    fn update_avx2(&self, prev: &Accumulator, next: &mut Accumulator, before: &Board, after: &Board) {
        self.update_any::<true>(prev, next, before, after)
    }

    /// [`Network::update`]; `AVX2`: called where the processor has AVX2 (from a function compiled for it).
    #[inline(always)]
    fn update_any<const AVX2: bool>(&self, prev: &Accumulator, next: &mut Accumulator, before: &Board, after: &Board) {
        // The White-view features that left (`gone`) and arrived (`came`).
        let (mut gone, mut came) = ([0usize; 2], [0usize; 2]);
        let (mut n_gone, mut n_came) = (0, 0);
        for color in [Color::White, Color::Black] {
            for piece in Piece::ALL {
                let (b, a) = (before.colored_pieces(color, piece), after.colored_pieces(color, piece));
                if a == b {
                    continue;
                }
                for sq in b & !a {
                    if n_gone == 2 {
                        *next = self.accumulate(after);
                        return;
                    }
                    gone[n_gone] = feature(Color::White, color, piece, sq as usize);
                    n_gone += 1;
                }
                for sq in a & !b {
                    if n_came == 2 {
                        *next = self.accumulate(after);
                        return;
                    }
                    came[n_came] = feature(Color::White, color, piece, sq as usize);
                    n_came += 1;
                }
            }
        }
        for view in 0..2 {
            let side = if view == 0 { Color::White } else { Color::Black };
            let region = self.king_offset(after, side);
            if region != self.king_offset(before, side) {
                self.accumulate_view(after, side, &mut next.0[view]);
                continue;
            }
            let row = |white: usize| &self.w1[region + if view == 0 { white } else { black_view(white) }];
            let (from, to) = (&prev.0[view], &mut next.0[view]);
            match (n_gone, n_came) {
                (1, 1) => combine::<AVX2, 1, 1>(to, from, [row(gone[0])], [row(came[0])]),
                (2, 1) => combine::<AVX2, 2, 1>(to, from, [row(gone[0]), row(gone[1])], [row(came[0])]),
                (2, 2) => combine::<AVX2, 2, 2>(to, from, [row(gone[0]), row(gone[1])], [row(came[0]), row(came[1])]),
                _ => {
                    *to = *from;
                    for &g in &gone[..n_gone] {
                        sub(to, row(g));
                    }
                    for &c in &came[..n_came] {
                        add(to, row(c));
                    }
                }
            }
        }
    }

    /// The output for `board`'s side to move from its hidden values `acc`, in centi-pawns.
    pub fn evaluate_from(&self, acc: &Accumulator, board: &Board) -> i32 {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is set only where the processor has every feature `evaluate_from_avx2` is compiled
            // for.
            return unsafe { self.evaluate_from_avx2(acc, board) };
        }
        self.evaluate_from_any(acc, board)
    }

    /// [`Network::evaluate_from`] compiled for AVX2, the activations inlined.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    fn evaluate_from_avx2(&self, acc: &Accumulator, board: &Board) -> i32 {
        self.evaluate_from_any(acc, board)
    }

    #[inline(always)]
    fn evaluate_from_any(&self, acc: &Accumulator, board: &Board) -> i32 {
        let stm = board.side_to_move();
        let bucket = output_bucket(board.occupied().len() as usize, self.b2.len());
        let (own, other) = (&acc.0[stm as usize], &acc.0[!stm as usize]);
        let w2 = &self.w2[bucket];
        let sum = self.activate(own, &w2[0]) + self.activate(other, &w2[1]);
        let units = (sum / i64::from(QA) + i64::from(self.b2[bucket])) as f32 / (QA * QB) as f32;
        (units * self.scale).round() as i32
    }

    /// Σ clip(h)² · w over one side's hidden values, the fastest way this processor has (the same sum as
    /// [`activate`] always).
    #[inline(always)]
    fn activate(&self, acc: &Row, w: &Row) -> i64 {
        #[cfg(target_arch = "x86_64")]
        {
            if self.avx2 {
                // SAFETY: `avx2` is set only where the processor has AVX2.
                unsafe { simd::activate_avx2(acc, w) }
            } else {
                simd::activate_sse2(acc, w)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        activate(&acc.0, &w.0)
    }

    /// The output for the side to move of `board`, in centi-pawns, summed from the board.
    pub fn evaluate(&self, board: &Board) -> i32 {
        self.evaluate_from(&self.accumulate(board), board)
    }
}

/// The hidden values before activation, from White's view and from Black's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accumulator([Row; 2]);

impl Default for Accumulator {
    fn default() -> Accumulator {
        Accumulator([Row::ZERO; 2])
    }
}

/// One side's hidden values, or one input's (or output's) weights to them, on a cache line of their own: the
/// vector forms then load whole vectors (a 32-byte load the compiler cannot prove aligned, it splits in two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
struct Row([i16; HIDDEN]);

impl Row {
    const ZERO: Row = Row([0; HIDDEN]);
}

/// Whether the processor has AVX2 and the bit instructions of its time (BMI1, BMI2, LZCNT, POPCNT): every
/// feature the AVX2 forms here, and the hand-written evaluation's, are compiled for. Asked once.
pub(super) fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static HAS: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
            std::is_x86_feature_detected!("avx2")
                && std::is_x86_feature_detected!("bmi1")
                && std::is_x86_feature_detected!("bmi2")
                && std::is_x86_feature_detected!("lzcnt")
                && std::is_x86_feature_detected!("popcnt")
        });
        *HAS
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// `to` = `from` − every row of `gone` + every row of `came`, in one pass; `AVX2`: the processor has it.
#[inline(always)]
fn combine<const AVX2: bool, const G: usize, const C: usize>(
    to: &mut Row,
    from: &Row,
    gone: [&Row; G],
    came: [&Row; C],
) {
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: `AVX2` is true only where the processor has AVX2.
        return unsafe { simd::combine_avx2(to, from, gone, came) };
    }
    for i in 0..HIDDEN {
        let mut v = from.0[i];
        for g in gone {
            v = v.wrapping_sub(g.0[i]);
        }
        for c in came {
            v = v.wrapping_add(c.0[i]);
        }
        to.0[i] = v;
    }
}

#[inline(always)]
fn add(acc: &mut Row, w: &Row) {
    for (a, w) in acc.0.iter_mut().zip(&w.0) {
        *a = a.wrapping_add(*w);
    }
}

#[inline(always)]
fn sub(acc: &mut Row, w: &Row) {
    for (a, w) in acc.0.iter_mut().zip(&w.0) {
        *a = a.wrapping_sub(*w);
    }
}

/// Σ clip(h)² · w over one side's hidden values, one at a time: what the vector forms in [`simd`] compute.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn activate(acc: &[i16; HIDDEN], w: &[i16; HIDDEN]) -> i64 {
    let mut sum = 0i64;
    for (&a, &w) in acc.iter().zip(w) {
        let v = i32::from(a).clamp(0, QA);
        sum += i64::from(v * i32::from(w) * v);
    }
    sum
}

/// The activation's sum in vectors of 16-bit values. With h clipped to [0, QA] and |w| at most 2 · QB (the
/// reader refuses larger output weights), h · w lies within ±32,640 and fits 16 bits, so it is one 16-bit
/// multiply; a multiply-add of h by it then gives h² · w summed in pairs as 32-bit values, exactly the sum
/// [`activate`] makes. The compiler does not find this form itself (it widens to 32 bits first).
#[cfg(target_arch = "x86_64")]
mod simd {
    use super::{HIDDEN, QA, Row};
    use std::arch::x86_64::*;

    const _: () = assert!(HIDDEN.is_multiple_of(16));

    /// The four 32-bit lanes of `v` summed as 64-bit values: each lane holds at most a quarter of one side's
    /// terms, which fits 32 bits, but all of them together need not (from 256 hidden values on).
    #[inline(always)]
    fn sum_lanes(v: __m128i) -> i64 {
        let mut lanes = [0i32; 4];
        // SAFETY: SSE2 is part of every x86-64 processor; the store is 16 bytes into 16, unaligned.
        unsafe { _mm_storeu_si128(lanes.as_mut_ptr().cast(), v) };
        lanes.iter().map(|&l| i64::from(l)).sum()
    }

    /// With SSE2, which every x86-64 processor has.
    #[inline]
    pub(super) fn activate_sse2(acc: &Row, w: &Row) -> i64 {
        // SAFETY: SSE2 is part of every x86-64 processor; each chunk is 8 values, 16 bytes, at a multiple of 16
        // bytes from the start of a row, which is aligned to 64.
        unsafe {
            let (zero, qa) = (_mm_setzero_si128(), _mm_set1_epi16(QA as i16));
            let mut sum = _mm_setzero_si128();
            for (a, w) in acc.0.chunks_exact(8).zip(w.0.chunks_exact(8)) {
                let (a, w) = (_mm_load_si128(a.as_ptr().cast()), _mm_load_si128(w.as_ptr().cast()));
                let h = _mm_min_epi16(_mm_max_epi16(a, zero), qa);
                sum = _mm_add_epi32(sum, _mm_madd_epi16(h, _mm_mullo_epi16(h, w)));
            }
            sum_lanes(sum)
        }
    }

    /// [`super::combine`] with AVX2, 16 values at a time.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn combine_avx2<const G: usize, const C: usize>(
        to: &mut Row,
        from: &Row,
        gone: [&Row; G],
        came: [&Row; C],
    ) {
        const VECTORS: usize = HIDDEN / 16;
        // SAFETY: a row is VECTORS vectors of 16 values, 32 bytes, in a row aligned to 64: every load and store
        // below is within its row and aligned.
        unsafe {
            let at = |r: &Row, k: usize| r.0.as_ptr().cast::<__m256i>().add(k);
            let out = to.0.as_mut_ptr().cast::<__m256i>();
            for k in 0..VECTORS {
                let mut v = _mm256_load_si256(at(from, k));
                for g in gone {
                    v = _mm256_sub_epi16(v, _mm256_load_si256(at(g, k)));
                }
                for c in came {
                    v = _mm256_add_epi16(v, _mm256_load_si256(at(c, k)));
                }
                _mm256_store_si256(out.add(k), v);
            }
        }
    }

    /// With AVX2, 16 values at a time.
    #[target_feature(enable = "avx2")]
    pub(super) fn activate_avx2(acc: &Row, w: &Row) -> i64 {
        let (zero, qa) = (_mm256_setzero_si256(), _mm256_set1_epi16(QA as i16));
        let mut sum = _mm256_setzero_si256();
        for (a, w) in acc.0.chunks_exact(16).zip(w.0.chunks_exact(16)) {
            // SAFETY: each chunk is 16 values, 32 bytes, at a multiple of 32 bytes from the start of a row, which
            // is aligned to 64.
            let (a, w) = unsafe { (_mm256_load_si256(a.as_ptr().cast()), _mm256_load_si256(w.as_ptr().cast())) };
            let h = _mm256_min_epi16(_mm256_max_epi16(a, zero), qa);
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(h, _mm256_mullo_epi16(h, w)));
        }
        sum_lanes(_mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256::<1>(sum)))
    }
}

/// The network file of a trained network: weights rounded to the engine's fixed point. Any hidden size is
/// written; the engine reads only [`HIDDEN`]. One output bucket is written in the first format (as files
/// were before buckets), more in the second, king regions in the third.
pub fn write(net: &crate::tuning::net::FloatNet, scale: f32, residual: bool) -> Result<Vec<u8>, String> {
    if net.inputs != INPUTS && net.inputs != KING_BUCKETS * INPUTS {
        return Err(format!(
            "a network of {} inputs; chess's have {INPUTS}, or {} with king regions",
            net.inputs,
            KING_BUCKETS * INPUTS
        ));
    }
    let kings = net.inputs / INPUTS;
    let buckets = net.b2.len();
    if !(1..=MAX_BUCKETS).contains(&buckets) || net.w2.len() != buckets * 2 * net.hidden {
        return Err(format!("{buckets} output buckets (1 to {MAX_BUCKETS}, each of 2 × the hidden size)"));
    }
    let quantize = |x: f32, q: i32, limit: i32| -> i16 { (x * q as f32).round().clamp(-limit as f32, limit as f32) as i16 };
    let mut out = Vec::with_capacity(36 + 2 * (net.w1.len() + net.b1.len() + net.w2.len()) + 4 * buckets);
    out.extend_from_slice(match (kings, buckets) {
        (1, 1) => MAGIC_V1,
        (1, _) => MAGIC,
        _ => MAGIC_V3,
    });
    out.extend_from_slice(&(INPUTS as u32).to_le_bytes());
    out.extend_from_slice(&(net.hidden as u32).to_le_bytes());
    out.extend_from_slice(&(if residual { FLAG_RESIDUAL } else { 0 }).to_le_bytes());
    out.extend_from_slice(&scale.to_bits().to_le_bytes());
    if buckets > 1 || kings > 1 {
        out.extend_from_slice(&(buckets as u32).to_le_bytes());
    }
    if kings > 1 {
        out.extend_from_slice(&(kings as u32).to_le_bytes());
    }
    for &w in net.w1.iter().chain(&net.b1) {
        out.extend_from_slice(&quantize(w, QA, i32::from(i16::MAX)).to_le_bytes());
    }
    for &w in &net.w2 {
        out.extend_from_slice(&quantize(w, QB, 2 * QB).to_le_bytes());
    }
    for &b in &net.b2 {
        out.extend_from_slice(&((b * (QA * QB) as f32).round() as i32).to_le_bytes());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector forms of the activation against the scalar one, on hidden values across the whole 16-bit
    /// range (below zero and above QA too) and output weights up to the reader's ±2 · QB.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_vector_activations_sum_what_the_scalar_one_does() {
        let mut rng = crate::matchplay::Rng(0x9E37_79B9_7F4A_7C15);
        let extremes = [i16::MIN, -1, 0, 1, QA as i16 - 1, QA as i16, QA as i16 + 1, i16::MAX];
        for round in 0..2000 {
            let (mut acc, mut w) = (Row::ZERO, Row::ZERO);
            for (i, (a, w)) in acc.0.iter_mut().zip(&mut w.0).enumerate() {
                let r = rng.next_u64();
                *a = match round % 3 {
                    0 => extremes[(r % 8) as usize],
                    1 => (r % (QA as u64 + 40)) as i16 - 20,
                    _ => r as i16,
                };
                *w = if round % 2 == 0 && i % 3 == 0 {
                    [-2 * QB, 2 * QB][(r >> 20) as usize % 2] as i16
                } else {
                    ((r >> 32) % (4 * QB as u64 + 1)) as i16 - 2 * QB as i16
                };
            }
            let want = activate(&acc.0, &w.0);
            assert_eq!(simd::activate_sse2(&acc, &w), want, "SSE2, round {round}");
            if has_avx2() {
                // SAFETY: the processor has AVX2.
                assert_eq!(unsafe { simd::activate_avx2(&acc, &w) }, want, "AVX2, round {round}");
            }
        }
    }

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
