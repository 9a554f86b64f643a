//! Evaluation in centi-units (soldier = 100) from the side to move's point of view, tapered between a
//! middlegame and an endgame value by the attacking material left (chariots, horses, cannons).
//!
//! Every value is learned (`examples/tune.rs`, [`crate::tuning`]) and lives in the generated `weights.rs`, a
//! (middlegame, endgame) pair per line:
//! - material and position of each piece type on each point from its own side, left and right folded
//!   together (kept incrementally by the game, both halves of the pair packed in one `i32`);
//! - the general's shelter: missing advisors and elephants times the attackers the other side has left;
//! - chariot and horse mobility, horses hemmed in by their own pieces;
//! - cannons mounted on the enemy general's file behind one screen, chariots on that file;
//! - crossed soldiers side by side, the advisor and elephant pairs;
//! - horses against cannons as the board empties, and the tempo.
//!
//! A side with nothing left that can cross the river and attack (no chariot, horse, cannon or soldier) cannot
//! win: its advantage is scaled almost to zero.

use super::board::{
    ADVISOR, BLACK, Board, CANNON, CELLS, CHARIOT, ELEPHANT, HORSE, OFF, RED, SOLDIER, W, file_of, own_half,
    own_mask, rank_of, square, step,
};
use super::weights::VALUES;
use crate::tuning::LinearEval;

/// Piece types (general, advisor, elephant, horse, chariot, cannon, soldier).
pub const KINDS: usize = 7;
/// Points of one half of the board: ranks 0-9 from the piece's own side, files 0-4 (file 8 - f folded onto f).
pub const POINTS: usize = 50;

/// The terms beside material and position, in the order of their values after the piece-square values.
pub const TERMS: [&str; 11] = [
    "shelter: missing defenders x enemy attackers",
    "chariot mobility",
    "horse mobility",
    "horse against cannon as the board empties",
    "tempo",
    "cannon mounted on the enemy general's file",
    "chariot on the enemy general's file",
    "crossed soldiers side by side",
    "advisor pair",
    "elephant pair",
    "horse leg blocked by its own side",
];
const SHELTER: usize = 0;
const CHARIOT_MOBILITY: usize = 1;
const HORSE_MOBILITY: usize = 2;
const HORSE_VS_CANNON: usize = 3;
const TEMPO: usize = 4;
const CANNON_MOUNT: usize = 5;
const CHARIOT_ON_KING_FILE: usize = 6;
const SOLDIERS_SIDE_BY_SIDE: usize = 7;
const ADVISOR_PAIR: usize = 8;
const ELEPHANT_PAIR: usize = 9;
const HORSE_HEMMED: usize = 10;

/// Value pairs: the piece-square values, then the terms.
pub const PAIRS: usize = KINDS * POINTS + TERMS.len();

/// The phase weight of a chariot, a horse and a cannon; the phase is at most `PHASE_MAX` (the start).
const PHASE_CHARIOT: i32 = 6;
const PHASE_MINOR: i32 = 3;
pub const PHASE_MAX: i32 = 4 * PHASE_CHARIOT + 8 * PHASE_MINOR;

/// The index of a piece-square pair.
pub const fn point_pair(kind: usize, file: usize, own_rank: usize) -> usize {
    let f = if file > 4 { 8 - file } else { file };
    kind * POINTS + own_rank * 5 + f
}

/// The index of a term's pair.
const fn term_pair(term: usize) -> usize {
    KINDS * POINTS + term
}

/// The name of value pair `pair`.
pub fn pair_name(pair: usize) -> String {
    const NAMES: [&str; KINDS] = ["general", "advisor", "elephant", "horse", "chariot", "cannon", "soldier"];
    if pair < KINDS * POINTS {
        let point = pair % POINTS;
        format!("{} rank {} file {}", NAMES[pair / POINTS], point / 5, point % 5)
    } else {
        TERMS[pair - KINDS * POINTS].to_string()
    }
}

/// A (middlegame, endgame) pair packed in one `i32`, so that sums of pairs are sums of `i32`s.
const fn pack(mg: i32, eg: i32) -> i32 {
    eg * 65536 + mg
}

#[inline(always)]
fn unpack(s: i32) -> (i32, i32) {
    let mg = s as i16 as i32;
    ((mg), (s - mg) >> 16)
}

/// Material and position, packed, of every piece code (`side * 8 + type + 1`) on every cell, from that
/// side's view.
pub static PST: [[i32; CELLS]; 16] = {
    let mut t = [[0i32; CELLS]; 16];
    let mut side = 0;
    while side < 2 {
        let mut kind = 0;
        while kind < KINDS {
            let code = side * 8 + kind + 1;
            let mut rank = 0;
            while rank < 10 {
                let mut file = 0;
                while file < 9 {
                    let own_rank = if side == 0 { rank } else { 9 - rank };
                    let v = VALUES[point_pair(kind, file, own_rank)];
                    t[code][square(file, rank)] = pack(v[0] as i32, v[1] as i32);
                    file += 1;
                }
                rank += 1;
            }
            kind += 1;
        }
        side += 1;
    }
    t
};

/// The packed material and position sum, Red minus Black, computed from scratch.
pub fn pst_from_scratch(b: &Board) -> i32 {
    let mut s = 0;
    for id in 0..32 {
        let sq = b.pos[id] as usize;
        if sq != 0 {
            let v = PST[b.code_at(sq) as usize][sq];
            s += if id < 16 { v } else { -v };
        }
    }
    s
}

/// Where the terms go: the engine sums their values, the tuner records them.
trait Terms {
    /// `count` times value pair `pair` for Red (`sign` 1) or Black (`sign` -1).
    fn add(&mut self, sign: i32, pair: usize, count: i32);
}

/// The engine's sum, Red minus Black.
struct Sum {
    mg: i32,
    eg: i32,
}

impl Terms for Sum {
    #[inline(always)]
    fn add(&mut self, sign: i32, pair: usize, count: i32) {
        let v = VALUES[pair];
        self.mg += sign * count * v[0] as i32;
        self.eg += sign * count * v[1] as i32;
    }
}

/// The tuner's view: value `2 · pair` is a pair's middlegame half, `2 · pair + 1` its endgame half.
struct Linear<'a> {
    out: &'a mut LinearEval,
    mg: f32,
}

impl Terms for Linear<'_> {
    fn add(&mut self, sign: i32, pair: usize, count: i32) {
        let c = (sign * count) as f32;
        self.out.add(2 * pair, c * self.mg);
        self.out.add(2 * pair + 1, c * (1.0 - self.mg));
    }
}

/// The game phase: `PHASE_MAX` with every attacker on the board, 0 with none.
#[inline]
fn phase(b: &Board) -> i32 {
    let n = |kind: u8| (b.counts[RED][kind as usize] + b.counts[BLACK][kind as usize]) as i32;
    (PHASE_CHARIOT * n(CHARIOT) + PHASE_MINOR * (n(HORSE) + n(CANNON))).min(PHASE_MAX)
}

/// Everything but material and position.
#[inline]
fn dynamic<T: Terms>(b: &Board, t: &mut T) {
    // Pieces per side and type, and (last) soldiers across the river.
    let mut n = [[0i32; 8]; 2];
    for side in [RED, BLACK] {
        for kind in ADVISOR..=SOLDIER {
            n[side][kind as usize] = b.counts[side][kind as usize] as i32;
        }
        for slot in 11..16 {
            let sq = b.pos[side * 16 + slot] as usize;
            n[side][7] += (sq != 0 && !own_half(side, sq)) as i32;
        }
    }
    let attack = |s: usize| 3 * n[s][CHARIOT as usize] + 2 * n[s][HORSE as usize] + 2 * n[s][CANNON as usize] + n[s][7];
    let majors: i32 = (0..2).map(|s| n[s][CHARIOT as usize] + n[s][HORSE as usize] + n[s][CANNON as usize]).sum();
    for side in [RED, BLACK] {
        let sign = if side == RED { 1 } else { -1 };
        // A general short of advisors and elephants suffers in proportion to what can attack it.
        let missing = 6 - 2 * n[side][ADVISOR as usize] - n[side][ELEPHANT as usize];
        t.add(sign, term_pair(SHELTER), missing * attack(side ^ 1).min(12));
        // Cannons need screens, horses room: their worth shifts as the board empties.
        if majors <= 6 {
            t.add(sign, term_pair(HORSE_VS_CANNON), (6 - majors) * (n[side][HORSE as usize] - n[side][CANNON as usize]));
        }
        t.add(sign, term_pair(ADVISOR_PAIR), (n[side][ADVISOR as usize] == 2) as i32);
        t.add(sign, term_pair(ELEPHANT_PAIR), (n[side][ELEPHANT as usize] == 2) as i32);
        pieces(b, side, sign, t);
    }
    t.add(if b.stm == RED { 1 } else { -1 }, term_pair(TEMPO), 1);
}

/// The terms that look at the pieces' surroundings: mobility, the files of the enemy general, soldiers.
#[inline]
fn pieces<T: Terms>(b: &Board, side: usize, sign: i32, t: &mut T) {
    let cells = &b.cells;
    let own = own_mask(side);
    let enemy_king = b.king(side ^ 1);
    let king_file = if enemy_king != 0 { file_of(enemy_king) } else { 9 };
    // Chariots: empty points along their lines, and the enemy general's file.
    let mut empty = 0;
    let mut on_king_file = 0;
    for id in side * 16 + 7..side * 16 + 9 {
        let from = b.pos[id] as usize;
        if from == 0 {
            continue;
        }
        for d in [W as isize, -(W as isize), 1, -1] {
            let mut s = step(from, d);
            while cells[s] == 0 {
                empty += 1;
                s = step(s, d);
            }
        }
        on_king_file += (file_of(from) == king_file) as i32;
    }
    t.add(sign, term_pair(CHARIOT_MOBILITY), empty);
    t.add(sign, term_pair(CHARIOT_ON_KING_FILE), on_king_file);
    // Horses: jumps not blocked at the leg nor onto an own piece; legs blocked by an own piece.
    let (mut jumps, mut hemmed) = (0, 0);
    for id in side * 16 + 5..side * 16 + 7 {
        let from = b.pos[id] as usize;
        if from == 0 {
            continue;
        }
        for (leg, dests) in [
            (W as isize, [2 * W as isize + 1, 2 * W as isize - 1]),
            (-(W as isize), [-2 * (W as isize) + 1, -2 * (W as isize) - 1]),
            (1, [W as isize + 2, -(W as isize) + 2]),
            (-1, [W as isize - 2, -(W as isize) - 2]),
        ] {
            let l = cells[step(from, leg)];
            if l != 0 {
                hemmed += (l & own != 0) as i32;
                continue;
            }
            for d in dests {
                jumps += (cells[step(from, d)] & (own | OFF) == 0) as i32;
            }
        }
    }
    t.add(sign, term_pair(HORSE_MOBILITY), jumps);
    t.add(sign, term_pair(HORSE_HEMMED), hemmed);
    // Cannons on the enemy general's file with exactly one piece between: a mount.
    let mut mounted = 0;
    if enemy_king != 0 {
        for id in side * 16 + 9..side * 16 + 11 {
            let from = b.pos[id] as usize;
            if from == 0 || file_of(from) != king_file {
                continue;
            }
            let d = if enemy_king > from { W as isize } else { -(W as isize) };
            let mut between = 0;
            let mut s = step(from, d);
            while s != enemy_king {
                between += (cells[s] != 0) as i32;
                s = step(s, d);
            }
            mounted += (between == 1) as i32;
        }
    }
    t.add(sign, term_pair(CANNON_MOUNT), mounted);
    // Crossed soldiers with an own soldier beside them (each pair counted once, from its left soldier).
    let mut pairs = 0;
    for slot in 11..16 {
        let sq = b.pos[side * 16 + slot] as usize;
        if sq == 0 || own_half(side, sq) {
            continue;
        }
        let right = cells[step(sq, 1)];
        pairs += (right & own != 0 && b.code_at(step(sq, 1)) == super::board::code(side, SOLDIER)) as i32;
    }
    t.add(sign, term_pair(SOLDIERS_SIDE_BY_SIDE), pairs);
}

/// A side that has nothing left to attack with (no chariot, horse, cannon or soldier) cannot win.
#[inline]
fn can_win(b: &Board, side: usize) -> bool {
    let c = &b.counts[side];
    c[CHARIOT as usize] + c[HORSE as usize] + c[CANNON as usize] + c[SOLDIER as usize] != 0
}

/// The evaluation from the side to move's point of view, given the incremental packed material and position
/// sum (Red minus Black).
#[inline]
pub fn evaluate(b: &Board, pst: i32) -> i32 {
    let (mg, eg) = unpack(pst);
    let mut sum = Sum { mg, eg };
    dynamic(b, &mut sum);
    let phase = phase(b);
    let mut red = (sum.mg * phase + sum.eg * (PHASE_MAX - phase)) / PHASE_MAX;
    if (red > 0 && !can_win(b, RED)) || (red < 0 && !can_win(b, BLACK)) {
        red /= 16;
    }
    if b.stm == RED { red } else { -red }
}

/// The evaluation from Red's view as a linear function of the values (value `2 · pair` a pair's middlegame
/// half, `2 · pair + 1` its endgame half); false where a side cannot win (the scaling is not linear).
pub fn linear_eval(b: &Board, out: &mut LinearEval) -> bool {
    if !can_win(b, RED) || !can_win(b, BLACK) {
        return false;
    }
    out.clear();
    let mut t = Linear { out, mg: phase(b) as f32 / PHASE_MAX as f32 };
    for id in 0..32 {
        let sq = b.pos[id] as usize;
        if sq == 0 {
            continue;
        }
        let (side, kind) = (id / 16, super::board::SLOT_TYPE[id % 16] as usize);
        let own_rank = if side == RED { rank_of(sq) } else { 9 - rank_of(sq) };
        t.add(if side == RED { 1 } else { -1 }, point_pair(kind, file_of(sq), own_rank), 1);
    }
    dynamic(b, &mut t);
    true
}

#[cfg(test)]
mod tests {
    use super::super::board::KING;
    use super::*;

    #[test]
    fn packed_pairs_add_and_come_apart() {
        for (a, b) in [((950, 1100), (-430, 20)), ((-5, -7), (3, -9000)), ((12000, -15000), (-9000, 9000))] {
            let s = pack(a.0, a.1) + pack(b.0, b.1);
            assert_eq!(unpack(s), (a.0 + b.0, a.1 + b.1));
            assert_eq!(unpack(-s), (-(a.0 + b.0), -(a.1 + b.1)));
        }
    }

    #[test]
    fn the_general_and_every_table_are_symmetric_left_to_right() {
        for kind in 0..KINDS {
            for rank in 0..10 {
                for file in 0..9 {
                    assert_eq!(point_pair(kind, file, rank), point_pair(kind, 8 - file, rank));
                }
            }
        }
        assert_eq!(pair_name(point_pair(KING as usize, 4, 0)), "general rank 0 file 4");
        assert_eq!(pair_name(term_pair(TEMPO)), "tempo");
    }
}
