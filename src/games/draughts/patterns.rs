//! Learned pattern values: the men on every 4x4 region of the board, valued as a whole.
//!
//! The board is covered by 16 overlapping regions of 4x4 squares, whose top-left corners are on rows and
//! columns 0, 2, 4 and 6 (as White sees the board). Each region holds 8 playable squares, and each square is
//! empty, holds a White man or a Black man (kings count as empty here: they are valued by the hand-written
//! terms): 3^8 = 6561 configurations per region. A configuration has two values, one for a full board and one
//! for an empty one, interpolated by the number of men. The values were fitted by logistic regression on
//! positions from kibitz's own games (`examples/tune.rs`; the command is in BENCHMARKS.md).
//!
//! The evaluation is colour-symmetric by construction: the board turned half a turn with the colours swapped
//! maps region `w` onto region `15 - w` with its squares in reverse order, and region `15 - w`'s values are
//! region `w`'s negated (with the configuration mirrored). So only regions 0-7 are stored.
//!
//! # The weights file (`patterns.bin`)
//!
//! Little-endian throughout:
//!
//! | bytes | content |
//! |---|---|
//! | 8 | the magic `KBZPAT01` |
//! | 2 | the number of stored regions, 8 |
//! | 2 | the number of configurations per region, 6561 |
//! | 8 × 6561 × 4 | for region 0-7, for configuration 0-6560: the full-board value, then the empty-board value, each an `i16` in centi-men |
//!
//! A configuration's number is `Σ 3^i · c_i` over the region's squares `i` = 0-7 in increasing square
//! number, with `c_i` 0 for empty, 1 for a White man and 2 for a Black man.

use std::sync::LazyLock;

use super::board::Board;

/// Regions on the board.
pub const REGIONS: usize = 16;
/// Regions whose values are stored (the others are their mirror images).
pub const STORED: usize = REGIONS / 2;
/// Configurations of one region's 8 squares.
pub const CONFIGS: usize = 6561;
/// The number of men at which the full-board value applies entirely.
pub const FULL: i32 = 40;

const MAGIC: &[u8; 8] = b"KBZPAT01";
const HEADER: usize = 12;
/// The size of a weights file.
pub const FILE_BYTES: usize = HEADER + STORED * CONFIGS * 4;

/// The shipped weights.
static SHIPPED: &[u8] = include_bytes!("patterns.bin");

/// The value table of every region, mirrored regions expanded: `[region * CONFIGS + config] = [full, empty]`.
pub type Table = Box<[[i16; 2]]>;

static TABLE: LazyLock<Table> = LazyLock::new(|| read_table(SHIPPED).expect("the shipped pattern weights are valid"));

/// The lowest bit of each region in the board's bit layout (square index `i` is bit `i + i / 10`): the region
/// with corner row `2r` and column `2c` starts at square index `10r + c`, bit `11r + c`.
const REGION_BIT: [u32; REGIONS] = {
    let mut t = [0u32; REGIONS];
    let mut w = 0;
    while w < REGIONS {
        t[w] = (11 * (w / 4) + w % 4) as u32;
        w += 1;
    }
    t
};

/// A region's 8 squares as 8 bits (in increasing square number). From the region's lowest bit the squares
/// are at offsets 0, 1 (first row), 5, 6 (second), 11, 12 (third: a ghost bit lies between), 16, 17.
#[inline(always)]
fn gather(bits: u64, region: usize) -> usize {
    let x = bits >> REGION_BIT[region];
    ((x & 0x3) | ((x >> 3) & 0xC) | ((x >> 7) & 0x30) | ((x >> 10) & 0xC0)) as usize
}

/// The base-3 value of 8 bits: bit `i` counts `3^i`.
const TERNARY: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut x = 0;
    while x < 256 {
        let (mut v, mut p, mut i) = (0u16, 1u16, 0);
        while i < 8 {
            if x >> i & 1 == 1 {
                v += p;
            }
            p *= 3;
            i += 1;
        }
        t[x] = v;
        x += 1;
    }
    t
};

/// The configuration number of `region` with White's men `white` and Black's men `black`.
#[inline(always)]
fn config(white: u64, black: u64, region: usize) -> usize {
    TERNARY[gather(white, region)] as usize + 2 * TERNARY[gather(black, region)] as usize
}

/// The configuration of the turned board: squares in reverse order, colours swapped.
pub fn mirror(config: usize) -> usize {
    let mut digits = [0usize; 8];
    let mut c = config;
    for d in &mut digits {
        *d = c % 3;
        c /= 3;
    }
    let mut out = 0;
    for i in (0..8).rev() {
        let swapped = [0, 2, 1][digits[7 - i]];
        out = out * 3 + swapped;
    }
    out
}

/// Every region's configuration for the men `white` and `black`.
#[cfg(test)]
pub fn configs(white: u64, black: u64) -> [usize; REGIONS] {
    std::array::from_fn(|w| config(white, black, w))
}

/// Read a weights file (the format is in the module's documentation).
pub fn read_table(bytes: &[u8]) -> Result<Table, String> {
    if bytes.len() != FILE_BYTES {
        return Err(format!("a pattern weights file has {FILE_BYTES} bytes, this one {}", bytes.len()));
    }
    if &bytes[..8] != MAGIC {
        return Err("not a pattern weights file (no KBZPAT01 at its start)".into());
    }
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
    if u16_at(8) as usize != STORED || u16_at(10) as usize != CONFIGS {
        return Err(format!("{} regions of {} configurations; expected {STORED} of {CONFIGS}", u16_at(8), u16_at(10)));
    }
    let mut table = vec![[0i16; 2]; REGIONS * CONFIGS].into_boxed_slice();
    for w in 0..STORED {
        for c in 0..CONFIGS {
            let at = HEADER + (w * CONFIGS + c) * 4;
            let v = [u16_at(at) as i16, u16_at(at + 2) as i16];
            table[w * CONFIGS + c] = v;
            table[(REGIONS - 1 - w) * CONFIGS + mirror(c)] = [v[0].saturating_neg(), v[1].saturating_neg()];
        }
    }
    Ok(table)
}

/// The shipped values of regions 0-7 (`[region * CONFIGS + config] = [full, empty]`), as
/// [`write_table`] takes them.
pub fn shipped_values() -> Vec<[i16; 2]> {
    TABLE[..STORED * CONFIGS].to_vec()
}

/// A weights file of `values[(region * CONFIGS + config)] = [full, empty]` for regions 0-7.
pub fn write_table(values: &[[i16; 2]]) -> Vec<u8> {
    assert_eq!(values.len(), STORED * CONFIGS, "values of the stored regions");
    let mut out = Vec::with_capacity(FILE_BYTES);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(STORED as u16).to_le_bytes());
    out.extend_from_slice(&(CONFIGS as u16).to_le_bytes());
    for v in values {
        out.extend_from_slice(&v[0].to_le_bytes());
        out.extend_from_slice(&v[1].to_le_bytes());
    }
    out
}

/// The patterns' value from White's point of view, with `men` men on the board.
#[inline]
pub fn white_score(b: &Board, men: i32) -> i32 {
    let table: &[[i16; 2]] = &TABLE;
    let (white, black) = (b.pieces[0] & !b.kings, b.pieces[1] & !b.kings);
    let (mut full, mut empty) = (0i32, 0i32);
    for w in 0..REGIONS {
        let v = table[w * CONFIGS + config(white, black, w)];
        full += v[0] as i32;
        empty += v[1] as i32;
    }
    let men = men.min(FULL);
    (full * men + empty * (FULL - men)) / FULL
}

/// The stored values a position's pattern score is made of: for each region, the index into regions 0-7's
/// values (`region * CONFIGS + config`) and its sign (+1, or -1 for a mirrored region).
pub fn terms(b: &Board) -> [(u32, i8); REGIONS] {
    let (white, black) = (b.pieces[0] & !b.kings, b.pieces[1] & !b.kings);
    std::array::from_fn(|w| {
        let c = config(white, black, w);
        if w < STORED {
            ((w * CONFIGS + c) as u32, 1)
        } else {
            (((REGIONS - 1 - w) * CONFIGS + mirror(c)) as u32, -1)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use crate::games::draughts::Draughts;
    use crate::games::draughts::board::{BIT_SQ, SQ_BIT};

    #[test]
    fn regions_cover_the_board_with_eight_squares_each() {
        let mut covered = 0u64;
        for w in 0..REGIONS {
            let mut squares = Vec::new();
            for (bit, &square) in BIT_SQ.iter().enumerate() {
                if gather(1u64 << bit, w) != 0 {
                    squares.push(square as usize);
                    covered |= 1u64 << bit;
                }
            }
            assert_eq!(squares.len(), 8, "region {w}: {squares:?}");
            assert!(squares.iter().all(|&s| s >= 1), "region {w} holds a ghost bit: {squares:?}");
            // A 4x4 block: two squares on each of four consecutive rows, within four columns.
            let rows: Vec<usize> = squares.iter().map(|s| (s - 1) / 5).collect();
            assert_eq!(rows, [0, 0, 1, 1, 2, 2, 3, 3].map(|r| r + 2 * (w / 4)), "region {w}");
        }
        let board: u64 = SQ_BIT.iter().map(|&b| 1u64 << b).sum();
        assert_eq!(covered, board);
    }

    #[test]
    fn the_turned_board_maps_region_onto_its_mirror() {
        let turn = |b: u64| b.reverse_bits() >> 10;
        let mut x: u64 = 0x1234_5678_9ABC_DEF1;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let board: u64 = SQ_BIT.iter().map(|&b| 1u64 << b).sum();
            let white = x & board;
            let black = x.rotate_left(17) & board & !white;
            let turned = configs(turn(black), turn(white));
            let plain = configs(white, black);
            for w in 0..REGIONS {
                assert_eq!(turned[REGIONS - 1 - w], mirror(plain[w]), "region {w}");
            }
        }
        for c in 0..CONFIGS {
            assert_eq!(mirror(mirror(c)), c);
        }
    }

    #[test]
    fn the_shipped_weights_load_and_match_their_terms() {
        assert_eq!(SHIPPED.len(), FILE_BYTES);
        let table = read_table(SHIPPED).unwrap();
        assert!(table.iter().any(|v| v[0] != 0 || v[1] != 0), "the shipped weights are all zero");
        let mut g = Draughts::start();
        let mut x: u64 = 7;
        for _ in 0..300 {
            let b = g.cur.board;
            let men = ((b.pieces[0] | b.pieces[1]) & !b.kings).count_ones() as i32;
            let (mut full, mut empty) = (0i32, 0i32);
            for (i, s) in terms(&b) {
                let v = table[i as usize];
                full += s as i32 * v[0] as i32;
                empty += s as i32 * v[1] as i32;
            }
            let m = men.min(FULL);
            assert_eq!((full * m + empty * (FULL - m)) / FULL, white_score(&b, men), "{}", g.to_fen());
            let moves = g.legal_moves();
            if moves.is_empty() {
                g = Draughts::start();
                continue;
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            g.make(moves[(x % moves.len() as u64) as usize]);
        }
    }

    #[test]
    fn bad_weights_files_are_named() {
        assert!(read_table(&[0; 10]).unwrap_err().contains("bytes"));
        let mut bytes = SHIPPED.to_vec();
        bytes[0] = b'X';
        assert!(read_table(&bytes).unwrap_err().contains("KBZPAT01"));
        let values = vec![[3i16, -4]; STORED * CONFIGS];
        let table = read_table(&write_table(&values)).unwrap();
        assert_eq!(table[5], [3, -4]);
        assert_eq!(table[(REGIONS - 1) * CONFIGS + mirror(5)], [-3, 4]);
    }
}
