//! Notation round trips of every game of the registry, on random positions: a strategy picks a game, a
//! starting point (the start position or one of the game's bench positions), a seed and a playout length;
//! random legal moves are played from there. At every position reached, the position written in each of the
//! game's position formats reads back (in that format, and detected) as the same position: the same key, the
//! same hash, the same side to move and the same legal moves. At the last position, every legal move written
//! in each move format reads back as the same move.

use kibitz::game::Game;
use kibitz::games::GameKind;
use kibitz::with_game;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// splitmix64: the playout's moves follow from the seed alone, so a failing case replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

/// The start position (`index` 0) or one of the game's bench positions.
fn starting_point<G: Game>(index: usize) -> G {
    let fixtures = G::BENCH_POSITIONS;
    match index % (fixtures.len() + 1) {
        0 => G::start(),
        i => G::parse_position(fixtures[i - 1], None)
            .unwrap_or_else(|e| panic!("{} bench position `{}`: {e}", G::NAME, fixtures[i - 1])),
    }
}

/// The legal moves in the main notation, sorted.
fn legal_names<G: Game>(g: &G) -> Vec<String> {
    let mut legal = Vec::new();
    g.generate_moves(&mut legal);
    let mut names: Vec<String> = legal.iter().map(|&m| g.format_move(m)).collect();
    names.sort();
    names
}

fn check_position<G: Game>(g: &G) -> Result<(), TestCaseError> {
    let key = g.position_key();
    let names = legal_names(g);
    for &f in G::POSITION_FORMATS {
        let written = g
            .format_position(Some(f))
            .map_err(|e| TestCaseError::fail(format!("{}: `{key}` cannot be written in {f}: {e}", G::NAME)))?;
        for format in [Some(f), None] {
            let back = G::parse_position(&written, format).map_err(|e| {
                TestCaseError::fail(format!("{}: {f} `{written}` does not read back ({format:?}): {e}", G::NAME))
            })?;
            prop_assert_eq!(back.position_key(), key.clone(), "{}: {} `{}` ({:?})", G::NAME, f, written, format);
            prop_assert_eq!(back.hash(), g.hash(), "{}: {} `{}` ({:?})", G::NAME, f, written, format);
            prop_assert_eq!(back.side_to_move(), g.side_to_move(), "{}: {} `{}`", G::NAME, f, written);
            prop_assert_eq!(legal_names(&back), names.clone(), "{}: {} `{}`", G::NAME, f, written);
            prop_assert_eq!(back.format_position(Some(f)), Ok(written.clone()), "{}: {} `{}`", G::NAME, f, written);
        }
    }
    Ok(())
}

fn check_moves<G: Game>(g: &G) -> Result<(), TestCaseError> {
    let mut legal = Vec::new();
    g.generate_moves(&mut legal);
    for &m in &legal {
        prop_assert_eq!(g.format_move_as(m, G::MOVE_FORMATS[0]), Ok(g.format_move(m)), "{}", G::NAME);
        for &f in G::MOVE_FORMATS {
            let written = g.format_move_as(m, f).map_err(|e| {
                TestCaseError::fail(format!("{}: {m:?} in `{}` not written in {f}: {e}", G::NAME, g.position_key()))
            })?;
            let back = g.parse_move(&written).map_err(|e| {
                TestCaseError::fail(format!(
                    "{}: {f} `{written}` in `{}` does not read back: {e}",
                    G::NAME,
                    g.position_key()
                ))
            })?;
            prop_assert_eq!(back, m, "{}: {} `{}` in `{}`", G::NAME, f, written, g.position_key());
        }
    }
    Ok(())
}

/// Play up to `plies` random legal moves from a starting point, checking every position on the way and the
/// moves of the last one.
fn walk<G: Game>(start: usize, seed: u64, plies: usize) -> Result<(), TestCaseError> {
    let mut g = starting_point::<G>(start);
    let mut rng = Rng(seed);
    let mut legal = Vec::new();
    for _ in 0..plies {
        check_position(&g)?;
        check_moves(&g)?;
        if g.rule_end(0).is_some() {
            break;
        }
        g.generate_moves(&mut legal);
        if legal.is_empty() {
            break;
        }
        g.make(legal[rng.below(legal.len())]);
    }
    check_position(&g)?;
    check_moves(&g)
}

proptest! {
    #[test]
    fn positions_and_moves_read_back(
        game in 0..GameKind::ALL.len(),
        start in 0usize..16,
        seed in any::<u64>(),
        plies in 0usize..160,
    ) {
        with_game!(GameKind::ALL[game], G => walk::<G>(start, seed, plies))?;
    }
}
