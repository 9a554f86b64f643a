//! What the fuzz targets share: one generic checker per kind of input, so that each target in
//! `fuzz_targets/` is a line or two naming the game or the session it drives.
//!
//! Every checker asserts properties rather than only running the code: a position or move that was read is
//! written in every format and read back to the same thing; a game record that was read is legal move by
//! move and, where the game exports records, exported and read back to the same game.

pub mod ceboard;
pub mod http;
pub mod proxy;
pub mod sessions;

use kibitz::game::{Game, PlyNote, RecordBudget};

/// Longest input the checkers look at (bytes): longer texts only cost time, not coverage.
pub const MAX_INPUT: usize = 16 * 1024;
/// Most moves a move-list input plays.
const MAX_MOVES: usize = 300;

/// The text of an input: invalid UTF-8 is replaced rather than rejected, so the fuzzer's byte mutations still
/// reach the parsers.
pub fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(&data[..data.len().min(MAX_INPUT)]).into_owned()
}

/// `formats[i]`, or `None` (detect the format) just past the end: the selector byte picks one of both.
fn pick<'a>(formats: &[&'a str], selector: u8) -> Option<&'a str> {
    formats.get(usize::from(selector) % (formats.len() + 1)).copied()
}

/// One game's notations and records. The first byte picks what the rest is:
/// `0 mod 3` a position (the second byte picks its format), `1 mod 3` a position line followed by one move
/// per line, played in turn, `2 mod 3` a game record (the second byte picks its format).
pub fn game<G: Game>(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else { return };
    match mode % 3 {
        0 => {
            let Some((&selector, rest)) = rest.split_first() else { return };
            let format = pick(G::POSITION_FORMATS, selector);
            if let Ok(p) = G::parse_position(&text(rest), format) {
                check_position(&p);
            }
        }
        1 => moves::<G>(&text(rest)),
        _ => {
            let Some((&selector, rest)) = rest.split_first() else { return };
            records::<G>(&text(rest), pick(G::RECORD_FORMATS, selector));
        }
    }
}

/// The legal moves of a position, each in the main notation, sorted: two positions with the same list have
/// the same moves.
fn legal_names<G: Game>(p: &G) -> Vec<String> {
    let mut legal = Vec::new();
    p.generate_moves(&mut legal);
    let mut names: Vec<String> = legal.iter().map(|&m| p.format_move(m)).collect();
    names.sort();
    names
}

/// Write `p` in every position format, read it back, and check it is the same position with the same legal
/// moves; then the same for every legal move in every move format.
pub fn check_position<G: Game>(p: &G) {
    let key = p.position_key();
    let names = legal_names(p);
    for &f in G::POSITION_FORMATS {
        // A format may be unable to hold some positions (an error, not a wrong text).
        let Ok(written) = p.format_position(Some(f)) else { continue };
        let back = G::parse_position(&written, Some(f))
            .unwrap_or_else(|e| panic!("{f} `{written}` was written for `{key}` but not read back: {e}"));
        assert_eq!(back.format_position(Some(f)).as_deref(), Ok(written.as_str()), "{f} of `{key}`");
        assert_eq!(back.position_key(), key, "{f} `{written}` read back as another position");
        assert_eq!(back.side_to_move(), p.side_to_move(), "{f} `{written}`");
        assert_eq!(legal_names(&back), names, "{f} `{written}` read back with other legal moves");
        let detected =
            G::parse_position(&written, None).unwrap_or_else(|e| panic!("{f} `{written}` is not detected: {e}"));
        assert_eq!(detected.position_key(), key, "{f} `{written}` detected as another position");
    }
    check_moves(p);
}

/// Every legal move of `p`, written in every move format, reads back to itself.
pub fn check_moves<G: Game>(p: &G) {
    let mut legal = Vec::new();
    p.generate_moves(&mut legal);
    for &m in &legal {
        let main = p.format_move(m);
        for &f in G::MOVE_FORMATS {
            let written =
                p.format_move_as(m, f).unwrap_or_else(|e| panic!("legal move {m:?} ({main}) not written in {f}: {e}"));
            let back = p.parse_move(&written).unwrap_or_else(|e| {
                panic!("{f} `{written}` was written for {m:?} in `{}` but not read back: {e}", p.position_key())
            });
            assert_eq!(back, m, "{f} `{written}` in `{}` read back as another move", p.position_key());
        }
        assert_eq!(
            p.format_move_as(m, G::MOVE_FORMATS[0]).as_deref(),
            Ok(main.as_str()),
            "the main notation is the first format"
        );
    }
}

/// A position line (the start position if it does not parse) and moves, one per line: each move read is
/// legal, every legal move round-trips, and undoing every move restores the position.
fn moves<G: Game>(text: &str) {
    let mut lines = text.lines();
    let mut g = lines.next().and_then(|l| G::parse_position(l, None).ok()).unwrap_or_else(G::start);
    let start_key = g.position_key();
    let start_hash = g.hash();
    let mut legal = Vec::new();
    let mut played = 0;
    for line in lines.take(MAX_MOVES) {
        let Ok(m) = g.parse_move(line) else { continue };
        g.generate_moves(&mut legal);
        assert!(legal.contains(&m), "`{line}` read as {m:?}, which is not legal in `{}`", g.position_key());
        check_moves(&g);
        g.make(m);
        played += 1;
    }
    check_position(&g);
    for _ in 0..played {
        g.unmake();
    }
    assert_eq!(g.position_key(), start_key, "undoing every move");
    assert_eq!(g.hash(), start_hash, "undoing every move");
}

/// Read a record (or a collection); every game read is legal move by move, and an exported game reads back
/// as the same game.
fn records<G: Game>(text: &str, format: Option<&str>) {
    // Loose limits: an input is at most MAX_INPUT bytes; a budget error is a refusal like any other.
    let Ok(games) = G::parse_records(text, format, &mut RecordBudget::new(10_000, 10_000_000)) else { return };
    let mut legal = Vec::new();
    for record in games.into_iter().flatten() {
        let mut g = record.start.clone();
        for &m in &record.moves {
            g.generate_moves(&mut legal);
            assert!(legal.contains(&m), "record move {m:?} not legal in `{}`", g.position_key());
            g.make(m);
        }
        // The record's own remarks go out with it, as an annotation job writes them.
        let mut notes: Vec<PlyNote<G::Move>> = record.moves.iter().map(|_| PlyNote::empty()).collect();
        for (k, note) in notes.iter_mut().enumerate() {
            if let Some(own) = record.remarks.of_move(k) {
                note.comment = own.comment.clone();
                note.record_nags = own.nags.clone();
                note.record_variations = own.variations.clone();
            }
        }
        if let Some(first) = notes.first_mut() {
            first.before = record.remarks.before.clone();
        }
        let Some(exported) = G::export_record(&record, &notes) else { continue };
        let again = G::parse_records(&exported, G::EXPORT_FORMAT, &mut RecordBudget::new(1, u64::MAX))
            .unwrap_or_else(|e| panic!("exported record not read back: {e}\n{exported}"));
        assert_eq!(again.len(), 1, "one game exported, {} read back:\n{exported}", again.len());
        let back = match &again[0] {
            Ok(back) => back,
            Err(e) => panic!("exported record not read back: {e}\n{exported}"),
        };
        assert_eq!(back.start.position_key(), record.start.position_key(), "start of\n{exported}");
        assert_eq!(back.moves, record.moves, "moves of\n{exported}");
        // The record's own remarks read back as they were (a game without moves has nowhere to write its opening
        // comment).
        let mut remarks = record.remarks.clone();
        if record.moves.is_empty() {
            remarks.before = None;
        }
        assert_eq!(back.remarks, remarks, "remarks of\n{exported}");
        // The result after the moves agrees with the `Result` tag (PGN asks it), and a record's decided result
        // stays decided. (An undecided `*` or a missing one may take the record's `Result` tag, and a result that
        // contradicts a mate on the board gives way to it: `pgn::export_result_of`.)
        let tag = back.tags.iter().find(|(n, _)| n.eq_ignore_ascii_case("Result")).map(|(_, v)| v.as_str());
        if let Some(tag) = tag {
            assert_eq!(back.result.as_deref(), Some(tag), "result and Result tag of\n{exported}");
        }
        if record.result.as_deref().is_some_and(|r| r != "*") {
            assert!(back.result.as_deref().is_some_and(|r| r != "*"), "result of\n{exported}");
        }
    }
}
