//! Evaluation in centi-units (soldier = 100) from the side to move's point of view: material and
//! piece-square values (kept incrementally by the game), the general's shelter of advisors and elephants
//! against the attackers left on the board, the mobility of chariots and horses, and a small tempo bonus.

use super::board::{
    ADVISOR, BLACK, Board, CANNON, CELLS, CHARIOT, ELEPHANT, HORSE, KING, RED, SOLDIER, W, own_half, square,
};

/// Material per piece type (general, advisor, elephant, horse, chariot, cannon, soldier).
pub const MATERIAL: [i32; 7] = [0, 200, 200, 430, 950, 450, 100];

/// Positional value of a piece type on (file, rank) from its own side (rank 0 = its own back rank), before
/// material. Every table is symmetric left to right.
const fn positional(kind: u8, file: usize, rank: usize) -> i32 {
    // 0 at the edge, 4 on the middle file.
    let off_centre = file.abs_diff(4);
    let centre = 4 - off_centre as i32;
    let r = rank as i32;
    match kind {
        KING => {
            let base = if file == 4 { 0 } else { -8 };
            base - 8 * r
        }
        ADVISOR => {
            if file == 4 && rank == 1 {
                6
            } else {
                0
            }
        }
        ELEPHANT => {
            if file == 4 && rank == 2 {
                6
            } else if file == 0 || file == 8 {
                -4
            } else {
                0
            }
        }
        HORSE => {
            let mut v = 3 * centre + 3 * if r < 7 { r } else { 13 - r };
            if r >= 6 && r <= 8 && file >= 2 && file <= 6 {
                v += 12; // near the enemy palace
            }
            if r == 0 && (file == 0 || file == 8) {
                v -= 10;
            }
            if file == 0 || file == 8 {
                v -= 8;
            }
            v - 12
        }
        CHARIOT => {
            let mut v = 2 * centre;
            if r >= 5 {
                v += 10;
            }
            if r == 6 || r == 7 {
                v += 8;
            }
            if r == 0 && file != 3 && file != 5 {
                v -= 6;
            }
            v
        }
        CANNON => {
            let mut v = if file == 4 { 14 } else { centre };
            if r == 2 || r == 3 {
                v += 4;
            }
            if r == 9 {
                v += 8; // the "bottom cannon" behind the enemy general
            }
            if r == 7 {
                v += 4;
            }
            v
        }
        _ => {
            // Soldiers: little before the river, a lot after it, most near the palace; an old soldier on the
            // last rank is worth little more than an uncrossed one.
            if r <= 4 {
                if r == 4 && file == 4 { 8 } else { 0 }
            } else {
                let advance = match r {
                    5 => 70,
                    6 => 85,
                    7 => 100,
                    8 => 90,
                    _ => 30,
                };
                let middle = if file >= 3 && file <= 5 { 20 } else { 2 * centre };
                advance + if r == 9 { 0 } else { middle }
            }
        }
    }
}

/// Material and position of every piece code (`side * 8 + type + 1`) on every cell, from that side's view.
pub static PST: [[i16; CELLS]; 16] = {
    let mut t = [[0i16; CELLS]; 16];
    let mut side = 0;
    while side < 2 {
        let mut kind = 0u8;
        while kind < 7 {
            let code = side * 8 + kind as usize + 1;
            let mut rank = 0;
            while rank < 10 {
                let mut file = 0;
                while file < 9 {
                    let own_rank = if side == 0 { rank } else { 9 - rank };
                    t[code][square(file, rank)] = (MATERIAL[kind as usize] + positional(kind, file, own_rank)) as i16;
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

/// The material and position sum, Red minus Black, computed from scratch.
pub fn pst_from_scratch(b: &Board) -> i32 {
    let mut s = 0;
    for id in 0..32 {
        let sq = b.pos[id] as usize;
        if sq != 0 {
            let v = PST[b.code_at(sq) as usize][sq] as i32;
            s += if id < 16 { v } else { -v };
        }
    }
    s
}

const TEMPO: i32 = 10;

/// Everything but the incremental material and position, Red minus Black.
fn dynamic(b: &Board) -> i32 {
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
    let mut score = 0;
    for side in [RED, BLACK] {
        let sign = if side == RED { 1 } else { -1 };
        // A general short of advisors and elephants suffers in proportion to what can attack it.
        let missing = 6 - 2 * n[side][ADVISOR as usize] - n[side][ELEPHANT as usize];
        let threat = attack(side ^ 1).min(12);
        score -= sign * missing * threat * 3;
        // Cannons need screens, horses room: their worth shifts as the board empties.
        if majors <= 6 {
            score += sign * (6 - majors) * 5 * (n[side][HORSE as usize] - n[side][CANNON as usize]);
        }
        score += sign * mobility(b, side);
    }
    score
}

/// Chariot and horse mobility, cheap: empty points along the chariots' lines and horse jumps not blocked at
/// the leg nor onto an own piece.
fn mobility(b: &Board, side: usize) -> i32 {
    let cells = &b.cells;
    let own = super::board::own_mask(side);
    let mut m = 0;
    for id in side * 16 + 7..side * 16 + 9 {
        let from = b.pos[id] as usize;
        if from == 0 {
            continue;
        }
        for d in [W as isize, -(W as isize), 1, -1] {
            let mut s = super::board::step(from, d);
            while cells[s] == 0 {
                m += 2;
                s = super::board::step(s, d);
            }
        }
    }
    for id in side * 16 + 5..side * 16 + 7 {
        let from = b.pos[id] as usize;
        if from == 0 {
            continue;
        }
        let mut n = 0;
        for (leg, dests) in [
            (W as isize, [2 * W as isize + 1, 2 * W as isize - 1]),
            (-(W as isize), [-2 * (W as isize) + 1, -2 * (W as isize) - 1]),
            (1, [W as isize + 2, -(W as isize) + 2]),
            (-1, [W as isize - 2, -(W as isize) - 2]),
        ] {
            if cells[super::board::step(from, leg)] != 0 {
                continue;
            }
            for d in dests {
                let c = cells[super::board::step(from, d)];
                if c & (own | super::board::OFF) == 0 {
                    n += 1;
                }
            }
        }
        m += 5 * n - 10;
    }
    m
}

/// The evaluation from the side to move's point of view, given the incremental material and position sum
/// (Red minus Black).
#[inline]
pub fn evaluate(b: &Board, pst: i32) -> i32 {
    let red = pst + dynamic(b);
    (if b.stm == RED { red } else { -red }) + TEMPO
}
