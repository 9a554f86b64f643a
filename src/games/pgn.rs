//! The PGN family of game records, shared by chess PGN, draughts and checkers PDN and xiangqi PGN.
//!
//! Reading splits a collection into games and gives each its tag pairs and the moves of its main line as
//! tokens with their 1-based line numbers; the game's own module then sets up the start position from the
//! tags and plays the moves with its own notation. Move numbers (`12.`, `12...`) and `%` escape lines are
//! skipped. What the author wrote besides the moves is kept with them for annotated exports, unchecked
//! ([`MoveRemarks`]): comments (`{...}`, `;` to the end of the line), NAGs (`$n`) and move suffixes (`!`,
//! `?`, `!?`...) as glyphs, and nested variations `(...)` as their text. A game ends at its result token or
//! where the next tag section begins, so a malformed game never swallows the next one: after an error the
//! reader skips to the next result token or tag section, and a comment or variation left open ends at the next
//! line that looks like a tag pair.
//!
//! Writing gives tags, movetext with move numbers, comments, NAGs, variations (kibitz's better lines and the
//! record's own) and the result, wrapped at 80 columns.
//!
//! Everything is bounded: a token longer than [`MAX_TOKEN`] bytes, a comment longer than [`MAX_COMMENT`] or
//! variations nested deeper than [`MAX_DEPTH`] fail the game they are in.

use crate::game::{
    BudgetError, Game, GameRecord, MoveRemarks, NotationError, Outcome, PlyNote, RecordBudget, RecordError, Records,
    Remarks, Side, gather_records,
};

/// The longest move, symbol, tag name or tag value read (bytes).
pub const MAX_TOKEN: usize = 1024;
/// The longest comment read (bytes).
pub const MAX_COMMENT: usize = 64 * 1024;
/// The deepest nesting of variations read.
pub const MAX_DEPTH: usize = 64;
/// The width movetext is wrapped to.
pub const LINE_WIDTH: usize = 80;

/// Result tokens of chess and xiangqi PGN.
pub const PGN_RESULTS: &[&str] = &["1-0", "0-1", "1/2-1/2", "*"];
/// Result tokens of draughts and checkers PDN: the 2-point forms of international draughts besides the
/// 1-point ones.
pub const PDN_RESULTS: &[&str] = &["2-0", "0-2", "1-1", "0-0", "1-0", "0-1", "1/2-1/2", "*"];

/// A tag pair and the line it is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    pub name: String,
    pub value: String,
    pub line: usize,
}

/// A move of the main line as written (move number and suffix annotations removed), its line, and what the
/// record says about it ([`MoveRemarks`]): glyphs, the comments right after it in the main line (joined by a
/// space), the variations beside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveToken {
    pub text: String,
    pub line: usize,
    pub remarks: MoveRemarks,
}

impl MoveToken {
    /// A move without remarks.
    pub fn new(text: &str, line: usize) -> Self {
        MoveToken { text: text.to_string(), line, remarks: MoveRemarks::default() }
    }
}

/// What went wrong in a game, where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub line: usize,
    pub token: String,
    pub message: String,
}

/// One game of a collection as read, before its moves are checked.
#[derive(Clone, Debug, Default)]
pub struct RawGame {
    /// The 1-based line where the game begins.
    pub line: usize,
    pub tags: Vec<Tag>,
    pub moves: Vec<MoveToken>,
    pub result: Option<String>,
    /// The first error in the game's text, if any.
    pub error: Option<Fault>,
    /// The move tokens of the main line as written, `moves` and those a reader's limit left out of it.
    pub moves_written: usize,
    /// The comment before the first move.
    pub before: Option<String>,
}

impl RawGame {
    /// The tag of this name (case-insensitive), the first if repeated.
    pub fn tag(&self, name: &str) -> Option<&Tag> {
        self.tags.iter().find(|t| t.name.eq_ignore_ascii_case(name))
    }

    /// The tags as a record keeps them.
    pub fn tag_pairs(&self) -> Vec<(String, String)> {
        self.tags.iter().map(|t| (t.name.clone(), t.value.clone())).collect()
    }

    /// A fault for this game's record error.
    pub fn error_at(index: usize, fault: Fault) -> RecordError {
        RecordError { index, line: fault.line, token: fault.token, message: fault.message }
    }
}

/// Shorten a token for an error message.
fn short(token: &str) -> String {
    if token.chars().count() > 80 {
        let mut s: String = token.chars().take(77).collect();
        s.push_str("...");
        s
    } else {
        token.to_string()
    }
}

fn fault(line: usize, token: &str, message: impl Into<String>) -> Fault {
    Fault { line, token: short(token), message: message.into() }
}

// ---------------------------------------------------------------- lexer

enum Tok<'a> {
    Tag(String, String),
    Open,
    Close,
    Nag(u8),
    /// A comment's text (`{...}` or `; ...` to the end of the line), without its delimiters.
    Comment(&'a str),
    Symbol(&'a str),
    Error(Fault),
    /// A tag pair that could not be read: the game's error, still in its tag section.
    TagError(Fault),
}

struct Lexer<'a> {
    s: &'a str,
    b: &'a [u8],
    pos: usize,
    line: usize,
}

/// Bytes that end a symbol.
fn is_delimiter(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'{' | b'}' | b'(' | b')' | b'[' | b']' | b';' | b'$' | b'"')
}

impl<'a> Lexer<'a> {
    fn new(s: &'a str) -> Self {
        Lexer { s, b: s.as_bytes(), pos: 0, line: 1 }
    }

    fn at_line_start(&self, pos: usize) -> bool {
        pos == 0 || self.b[pos - 1] == b'\n'
    }

    /// The line at `pos` starts like a tag pair: `[Name "`.
    fn tag_line_at(&self, pos: usize) -> bool {
        let b = self.b;
        if b.get(pos) != Some(&b'[') {
            return false;
        }
        let mut i = pos + 1;
        let name_start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        if i == name_start {
            return false;
        }
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        b.get(i) == Some(&b'"')
    }

    /// Skip to the end of the current line (the newline itself is left).
    fn skip_line(&mut self) {
        while self.pos < self.b.len() && self.b[self.pos] != b'\n' {
            self.pos += 1;
        }
    }

    fn rest_of_line(&self, from: usize) -> &'a str {
        let end = self.b[from..].iter().position(|&c| c == b'\n').map_or(self.b.len(), |n| from + n);
        self.s[from..end].trim_end()
    }

    fn next(&mut self) -> Option<(usize, Tok<'a>)> {
        let b = self.b;
        loop {
            while self.pos < b.len() && b[self.pos].is_ascii_whitespace() {
                if b[self.pos] == b'\n' {
                    self.line += 1;
                }
                self.pos += 1;
            }
            if self.pos >= b.len() {
                return None;
            }
            if b[self.pos] == b'%' && self.at_line_start(self.pos) {
                self.skip_line();
                continue;
            }
            break;
        }
        let line = self.line;
        let start = self.pos;
        let tok = match b[start] {
            b'[' => self.tag(),
            b'{' => self.comment(),
            b';' => {
                self.skip_line();
                Tok::Comment(&self.s[start + 1..self.pos])
            }
            b'(' => {
                self.pos += 1;
                Tok::Open
            }
            b')' => {
                self.pos += 1;
                Tok::Close
            }
            b'$' => {
                self.pos += 1;
                while self.pos < b.len() && b[self.pos].is_ascii_digit() {
                    self.pos += 1;
                }
                let text = &self.s[start..self.pos];
                match text[1..].parse::<u8>() {
                    Ok(n) => Tok::Nag(n),
                    _ => Tok::Error(fault(line, text, "not a NAG ($0 to $255)")),
                }
            }
            b'}' | b']' | b'"' => {
                self.pos += 1;
                Tok::Error(fault(line, &self.s[start..self.pos], "unexpected character in the movetext"))
            }
            _ => {
                while self.pos < b.len() && !is_delimiter(b[self.pos]) {
                    self.pos += 1;
                }
                let text = &self.s[start..self.pos];
                if text.len() > MAX_TOKEN {
                    Tok::Error(fault(line, text, format!("token longer than {MAX_TOKEN} bytes")))
                } else {
                    Tok::Symbol(text)
                }
            }
        };
        Some((line, tok))
    }

    /// `[Name "value"]`, with `\"` and `\\` escapes in the value. On error the rest of the line is skipped.
    fn tag(&mut self) -> Tok<'a> {
        let b = self.b;
        let start = self.pos;
        let line = self.line;
        let fail = |lx: &mut Self, message: &str| {
            let token = lx.rest_of_line(start);
            lx.skip_line();
            Tok::TagError(fault(line, token, message))
        };
        let mut i = start + 1;
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        let name_start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        if i == name_start {
            return fail(self, "a tag pair is `[Name \"value\"]`");
        }
        if i - name_start > MAX_TOKEN {
            return fail(self, "tag name too long");
        }
        let name = self.s[name_start..i].to_string();
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        if b.get(i) != Some(&b'"') {
            return fail(self, "a tag pair is `[Name \"value\"]`");
        }
        i += 1;
        let value_start = i;
        // The limit is on the value as read (escapes undone), so that every value accepted can be written back
        // escaped and read again.
        let mut len = 0;
        loop {
            match b.get(i) {
                None | Some(b'\n') | Some(b'\r') => return fail(self, "unterminated tag value"),
                Some(b'"') => break,
                Some(b'\\') if matches!(b.get(i + 1), Some(b'"') | Some(b'\\')) => i += 2,
                Some(_) => i += 1,
            }
            len += 1;
            if len > MAX_TOKEN {
                return fail(self, "tag value longer than 1024 bytes");
            }
        }
        let mut value_end = i;
        i += 1;
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        if b.get(i) != Some(&b']') {
            // A quote inside the value left unescaped (`[Event "The "Big" Open"]`, as older databases write
            // them): the value runs to the line's last quote when `]` and nothing else follows it.
            let Some((last, close)) = self.closing_quote(value_end) else {
                return fail(self, "a tag pair ends with `]`");
            };
            (value_end, i) = (last, close);
        }
        let value = unescape(&self.s[value_start..value_end]);
        if value.len() > MAX_TOKEN {
            return fail(self, "tag value longer than 1024 bytes");
        }
        self.pos = i + 1;
        Tok::Tag(name, value)
    }

    /// The `"` that closes a tag value holding unescaped quotes, and its `]`: the first `"` of the line from
    /// `from` on that blanks and `]` follow, where after that `]` the line ends or another tag pair starts
    /// (`[Event "The "Big" Open"] [Site "x"]` is two tags).
    fn closing_quote(&self, from: usize) -> Option<(usize, usize)> {
        let b = self.b;
        let end = b[from..].iter().position(|&c| c == b'\n' || c == b'\r').map_or(b.len(), |n| from + n);
        let blank = |c: u8| c == b' ' || c == b'\t';
        for quote in from + 1..end {
            if b[quote] != b'"' {
                continue;
            }
            let mut close = quote + 1;
            while close < end && blank(b[close]) {
                close += 1;
            }
            if close == end || b[close] != b']' {
                continue;
            }
            let mut next = close + 1;
            while next < end && blank(b[next]) {
                next += 1;
            }
            if next == end || self.tag_line_at(next) {
                return Some((quote, close));
            }
        }
        None
    }

    /// `{...}`: ends at `}`; a comment still open at a line that looks like a tag pair (or at the end) is an
    /// error and the reader goes on from that line.
    fn comment(&mut self) -> Tok<'a> {
        let b = self.b;
        let line = self.line;
        let start = self.pos;
        self.pos += 1;
        while self.pos < b.len() {
            match b[self.pos] {
                b'}' => {
                    self.pos += 1;
                    if self.pos - start > MAX_COMMENT {
                        return Tok::Error(fault(line, "{", format!("comment longer than {MAX_COMMENT} bytes")));
                    }
                    return Tok::Comment(&self.s[start + 1..self.pos - 1]);
                }
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                    if self.tag_line_at(self.pos) {
                        return Tok::Error(fault(line, "{", "unterminated comment"));
                    }
                }
                _ => self.pos += 1,
            }
        }
        Tok::Error(fault(line, "{", "unterminated comment"))
    }
}

// ---------------------------------------------------------------- reader

struct Builder {
    game: RawGame,
    movetext: bool,
    depth: usize,
    /// Line of the outermost open variation.
    open_line: usize,
    /// The outermost open variation's movetext so far.
    variation: String,
}

impl Builder {
    fn new(line: usize) -> Self {
        Builder {
            game: RawGame { line, ..RawGame::default() },
            movetext: false,
            depth: 0,
            open_line: 0,
            variation: String::new(),
        }
    }

    /// The remarks of the last move read, while every move read is kept (those past a reader's limit have none).
    fn last_remarks(&mut self) -> Option<&mut MoveRemarks> {
        let all_kept = self.game.moves.len() == self.game.moves_written;
        self.game.moves.last_mut().filter(|_| all_kept).map(|m| &mut m.remarks)
    }

    /// One more token of the open variation: `(` and `)` hug what they enclose.
    fn variation_token(&mut self, token: &str) {
        if !(self.variation.is_empty() || self.variation.ends_with('(') || token == ")") {
            self.variation.push(' ');
        }
        self.variation.push_str(token);
    }

    fn fail(&mut self, f: Fault) {
        if self.game.error.is_none() {
            self.game.error = Some(f);
        }
    }

    /// The game as read; a game cut off before its result token takes the result of its `Result` tag.
    fn finish(mut self, results: &[&str]) -> RawGame {
        if self.depth > 0 {
            let line = self.open_line;
            self.fail(fault(line, "(", "unclosed variation"));
        }
        if self.game.result.is_none()
            && let Some(tag) = self.game.tag("Result")
            && results.contains(&tag.value.trim())
        {
            self.game.result = Some(tag.value.trim().to_string());
        }
        self.game
    }
}

/// A tag value as written, its escapes (`\"`, `\\`) undone.
fn unescape(raw: &str) -> String {
    let mut value = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some(next @ ('"' | '\\'))) => {
                value.push(next);
                chars.next();
            }
            _ => value.push(c),
        }
    }
    value
}

/// A comment's text with its whitespace collapsed and no braces (a `;` comment may hold `}`, which would end it
/// once written in braces; `{` is turned the same way so that none is left unbalanced).
fn comment_text(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").replace('}', ")").replace('{', "(")
}

/// `more` after `text`, a space between.
fn join_comment(text: &mut Option<String>, more: String) {
    if more.is_empty() {
        return;
    }
    *text = Some(match text.take() {
        Some(before) => format!("{before} {more}"),
        None => more,
    });
}

/// The glyph a move's suffix stands for (`!` 1, `?` 2, `!!` 3, `??` 4, `!?` 5, `?!` 6).
fn suffix_nag(suffix: &str) -> Option<u8> {
    match suffix {
        "!" => Some(1),
        "?" => Some(2),
        "!!" => Some(3),
        "??" => Some(4),
        "!?" => Some(5),
        "?!" => Some(6),
        _ => None,
    }
}

/// A symbol less its move number prefix (`12.`, `12...`) and suffix annotations (`!`, `?!`): the move, or
/// nothing when the symbol is only a number or an annotation.
fn move_text(sym: &str) -> &str {
    let digits = sym.bytes().take_while(u8::is_ascii_digit).count();
    // `3 Bb5`: a move number written without its dot, as some programs and hands do (no game's move is a bare
    // number: PDN's have a separator, `32-28`).
    if digits == sym.len() {
        return "";
    }
    let dots = sym[digits..].bytes().take_while(|&c| c == b'.').count();
    let rest = if dots > 0 { &sym[digits + dots..] } else { sym };
    // `exd6 e.p.`: the en passant mark written apart from its capture says nothing more.
    if rest.eq_ignore_ascii_case("e.p.") || rest.eq_ignore_ascii_case("ep") {
        return "";
    }
    rest.trim_end_matches(['!', '?'])
}

/// The games of `text`, one at a time. `results` are the result tokens of the dialect. A game keeps at most
/// `max_moves` move tokens (it counts them all in [`RawGame::moves_written`]), so that one game of a huge text
/// holds no more than its reader will accept.
pub struct RawGames<'a> {
    lexer: Lexer<'a>,
    results: &'a [&'a str],
    cur: Option<Builder>,
    max_moves: usize,
    /// Comments read outside any game: the next game's comment before its first move if its movetext follows
    /// (a game without tags), dropped if a tag section does.
    pending: Option<String>,
}

impl<'a> RawGames<'a> {
    pub fn new(text: &'a str, results: &'a [&'a str], max_moves: usize) -> Self {
        RawGames { lexer: Lexer::new(text), results, cur: None, max_moves, pending: None }
    }
}

impl Iterator for RawGames<'_> {
    type Item = RawGame;

    fn next(&mut self) -> Option<RawGame> {
        let results = self.results;
        while let Some((line, tok)) = self.lexer.next() {
            // Glyphs outside any game are dropped; comments wait to see what follows them.
            if self.cur.is_none() && matches!(tok, Tok::Comment(_) | Tok::Nag(_)) {
                if let Tok::Comment(text) = tok {
                    join_comment(&mut self.pending, comment_text(text));
                }
                continue;
            }
            if let Tok::Tag(name, value) = tok {
                self.pending = None;
                let tag = Tag { name, value, line };
                // A tag after movetext or a result begins the next game.
                if self.cur.as_ref().is_some_and(|c| c.movetext || c.game.result.is_some())
                    && let Some(done) = self.cur.take()
                {
                    let mut next = Builder::new(line);
                    next.game.tags.push(tag);
                    self.cur = Some(next);
                    return Some(done.finish(results));
                }
                self.cur.get_or_insert_with(|| Builder::new(line)).game.tags.push(tag);
                continue;
            }
            let pending = &mut self.pending;
            let c = self.cur.get_or_insert_with(|| {
                let mut b = Builder::new(line);
                b.game.before = pending.take();
                b
            });
            match tok {
                Tok::Tag(..) => {}
                Tok::Error(f) => {
                    c.movetext = true;
                    c.fail(f);
                }
                // The game's tag section goes on: its later tags are still its own, not the next game's.
                Tok::TagError(f) => c.fail(f),
                // Comments and glyphs are kept for exports: in a variation as part of it, in the main line as the
                // last move's (or the game's, before its first move). After an error nothing is kept.
                Tok::Comment(text) if c.game.error.is_none() => {
                    let text = comment_text(text);
                    if c.depth > 0 {
                        c.variation_token(&format!("{{{text}}}"));
                    } else if c.game.moves_written == 0 {
                        join_comment(&mut c.game.before, text);
                    } else if let Some(last) = c.last_remarks() {
                        join_comment(&mut last.comment, text);
                    }
                }
                Tok::Nag(n) if c.game.error.is_none() => {
                    if c.depth > 0 {
                        c.variation_token(&format!("${n}"));
                    } else if let Some(last) = c.last_remarks() {
                        last.nags.push(n);
                    }
                }
                Tok::Comment(_) | Tok::Nag(_) => {}
                _ if c.game.error.is_some() => {
                    // After an error: skip to a result token (or the next tag section).
                    c.movetext = true;
                    if let Tok::Symbol(s) = tok
                        && results.contains(&s)
                    {
                        c.game.result = Some(s.to_string());
                        c.depth = 0;
                        if let Some(done) = self.cur.take() {
                            return Some(done.finish(results));
                        }
                    }
                }
                Tok::Open => {
                    c.movetext = true;
                    if c.depth == 0 {
                        c.open_line = line;
                        c.variation.clear();
                    }
                    c.variation_token("(");
                    c.depth += 1;
                    if c.depth > MAX_DEPTH {
                        c.fail(fault(line, "(", format!("variations nested deeper than {MAX_DEPTH}")));
                    }
                }
                Tok::Close => {
                    c.movetext = true;
                    if c.depth == 0 {
                        c.fail(fault(line, ")", "`)` without `(`"));
                    } else {
                        c.variation_token(")");
                        c.depth -= 1;
                        // A variation is an alternative to the move before it (none before the first move).
                        if c.depth == 0 {
                            let variation = std::mem::take(&mut c.variation);
                            if let Some(last) = c.last_remarks() {
                                last.variations.push(variation);
                            }
                        }
                    }
                }
                Tok::Symbol(s) if c.depth > 0 => c.variation_token(s),
                Tok::Symbol(s) => {
                    c.movetext = true;
                    if results.contains(&s) {
                        c.game.result = Some(s.to_string());
                        if let Some(done) = self.cur.take() {
                            return Some(done.finish(results));
                        }
                        continue;
                    }
                    let m = move_text(s);
                    let nag = suffix_nag(&s[s.trim_end_matches(['!', '?']).len()..]);
                    if !m.is_empty() && !m.bytes().all(|c| c == b'.') {
                        c.game.moves_written += 1;
                        if c.game.moves.len() < self.max_moves {
                            c.game.moves.push(MoveToken::new(m, line));
                        }
                    }
                    // `e4!`, or `e4 !` (a glyph written apart from its move).
                    if let Some(n) = nag
                        && let Some(last) = c.last_remarks()
                    {
                        last.nags.push(n);
                    }
                }
            }
        }
        self.cur.take().map(|done| done.finish(results))
    }
}

/// Split `text` into games, all of them (tests and small texts; readers of outside text use [`read_records`]).
pub fn read_games(text: &str, results: &[&str]) -> Vec<RawGame> {
    RawGames::new(text, results, usize::MAX).collect()
}

/// Read the games of a PGN-family `text` under `budget`, each made a record by `one` (its index in the text
/// and the game as read), stopping at the first game over the budget.
pub fn read_records<G: Game>(
    text: &str,
    results: &[&str],
    budget: &mut RecordBudget,
    one: impl Fn(usize, RawGame) -> Result<GameRecord<G>, RecordError>,
) -> Result<Records<G>, BudgetError> {
    let one = &one;
    let max_moves = usize::try_from(budget.positions_left()).unwrap_or(usize::MAX);
    let games = RawGames::new(text, results, max_moves)
        .enumerate()
        .map(|(index, raw)| (raw.line, raw.moves_written as u64, move || one(index, raw)));
    gather_records(games, budget)
}

// ---------------------------------------------------------------- playing the moves

/// The label of ply `i` of a game starting at move `first_number` with `first` to move: `12.` or `12...`.
fn move_label(first_number: u32, first: Side, i: usize) -> (u32, bool) {
    let offset = usize::from(first == Side::Second);
    let number = first_number as usize + (i + offset) / 2;
    let second = (i + offset) % 2 == 1;
    (u32::try_from(number).unwrap_or(u32::MAX), second)
}

fn label(number: u32, second: bool) -> String {
    if second { format!("{number}...") } else { format!("{number}.") }
}

/// Play a game's moves from `start` with `parse`, giving the record or the error of the first bad move
/// (its index, line and token; an illegal move is said to be illegal in that position).
pub fn build_record<G: Game>(
    index: usize,
    raw: RawGame,
    start: G,
    first_number: u32,
    parse: impl Fn(&G, &str) -> Result<G::Move, NotationError>,
) -> Result<GameRecord<G>, RecordError> {
    if let Some(f) = raw.error {
        return Err(RawGame::error_at(index, f));
    }
    let mut game = start.clone();
    let mut moves = Vec::with_capacity(raw.moves.len());
    let first = start.side_to_move();
    for (i, tok) in raw.moves.iter().enumerate() {
        match parse(&game, &tok.text) {
            Ok(m) => {
                game.make(m);
                moves.push(m);
            }
            Err(e) => {
                let (n, second) = move_label(first_number, first, i);
                let message = match e.message.strip_prefix("illegal move") {
                    Some(rest) => format!("move {} {}: illegal in this position{rest}", label(n, second), tok.text),
                    None => format!("move {} {}: {}", label(n, second), tok.text, e.message),
                };
                return Err(RecordError { index, line: tok.line, token: short(&tok.text), message });
            }
        }
    }
    // A record holds its start position for as long as the collection is held: a copy keeps only what the
    // position is, not the room a freshly set-up game reserves for the moves to come (kilobytes per game,
    // hundreds of megabytes over a collection of tens of thousands).
    let start = start.clone();
    let tags = raw.tag_pairs();
    let mut remarks = Remarks { before: raw.before, moves: raw.moves.into_iter().map(|tok| tok.remarks).collect() };
    while remarks.moves.last().is_some_and(MoveRemarks::is_empty) {
        remarks.moves.pop();
    }
    Ok(GameRecord { tags, start, moves, result: raw.result, line: raw.line, remarks })
}

/// A tag section's error: the tag's line and value.
pub fn tag_error(index: usize, tag: &Tag, message: impl Into<String>) -> RecordError {
    RecordError { index, line: tag.line, token: short(&tag.value), message: message.into() }
}

// ---------------------------------------------------------------- writer

/// Movetext words, wrapped at [`LINE_WIDTH`]. A word may hold a space (a move number and its move stay on one
/// line).
struct Wrapper {
    out: String,
    col: usize,
}

impl Wrapper {
    fn word(&mut self, w: &str) {
        let len = w.chars().count();
        // A line beginning with `%` is an escape line, skipped to its end by readers, and one beginning with `[`
        // and a name (`[Event "`) may be read as a tag pair ending whatever comment it is in: a word of a comment
        // beginning so stays on the line before (`[%eval` may begin one).
        let tag_like =
            w.strip_prefix('[').and_then(|r| r.chars().next()).is_some_and(|c| c.is_alphanumeric() || c == '_');
        if self.col > 0 && self.col + 1 + len > LINE_WIDTH && !w.starts_with('%') && !tag_like {
            self.out.push('\n');
            self.col = 0;
        }
        if self.col > 0 {
            self.out.push(' ');
            self.col += 1;
        }
        self.out.push_str(w);
        self.col += len;
    }
}

fn escape(value: &str) -> String {
    let mut s = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' | '"' => {
                s.push('\\');
                s.push(c);
            }
            '\n' | '\r' | '\t' => s.push(' '),
            _ => s.push(c),
        }
    }
    s
}

/// The comment words: `{`, the text's words (with no `}`), `}`.
fn comment_words(text: &str) -> Vec<String> {
    let mut words = vec!["{".to_string()];
    words.extend(comment_text(text).split_whitespace().map(str::to_string));
    words.push("}".to_string());
    words
}

/// Movetext for a line of moves from `pos`, numbered from `number`/`second`: each move in its position's
/// notation. Stops at the first move that is not legal where it stands.
fn line_words<G: Game>(
    pos: &G,
    moves: &[G::Move],
    first_number: u32,
    fmt: &impl Fn(&G, G::Move) -> String,
) -> Vec<String> {
    let mut g = pos.clone();
    let mut legal = Vec::new();
    let mut words = Vec::new();
    let first = pos.side_to_move();
    for (i, &m) in moves.iter().enumerate() {
        g.generate_moves(&mut legal);
        if !legal.contains(&m) {
            break;
        }
        let (n, second) = move_label(first_number, first, i);
        if !second || i == 0 {
            words.push(format!("{} {}", label(n, second), fmt(&g, m)));
        } else {
            words.push(fmt(&g, m));
        }
        g.make(m);
    }
    words
}

/// Write one game: tags, then the moves from `start` (numbered from `first_number`) with each ply's note
/// (NAG, comment, better line), then `result`. `fmt` writes a legal move of a position. Writing stops at the
/// first move that is not legal where it stands.
pub fn write_game<G: Game>(
    tags: &[(String, String)],
    start: &G,
    first_number: u32,
    moves: &[G::Move],
    notes: &[PlyNote<G::Move>],
    result: &str,
    fmt: impl Fn(&G, G::Move) -> String,
) -> String {
    let mut out = String::new();
    for (name, value) in tags {
        let name: String = name.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !name.is_empty() {
            out.push_str(&format!("[{name} \"{}\"]\n", escape(value)));
        }
    }
    out.push('\n');
    let mut w = Wrapper { out, col: 0 };
    let mut g = start.clone();
    let mut legal = Vec::new();
    let first = start.side_to_move();
    let mut need_number = true;
    for (i, &m) in moves.iter().enumerate() {
        g.generate_moves(&mut legal);
        if !legal.contains(&m) {
            break;
        }
        let note = notes.get(i);
        if let Some(text) = note.and_then(|n| n.before.as_deref()) {
            for word in comment_words(text) {
                w.word(&word);
            }
            need_number = true;
        }
        let (n, second) = move_label(first_number, first, i);
        if !second || need_number {
            w.word(&format!("{} {}", label(n, second), fmt(&g, m)));
        } else {
            w.word(&fmt(&g, m));
        }
        need_number = false;
        let nag = note.and_then(|n| n.nag);
        if let Some(nag) = nag {
            w.word(&format!("${nag}"));
        }
        // The record's own glyphs; its judgement of the move (`!`, `?`...) gives way to kibitz's where kibitz
        // judged the move.
        for &own in note.map_or(&[][..], |n| &n.record_nags) {
            if nag.is_none() || !(1..=6).contains(&own) {
                w.word(&format!("${own}"));
            }
        }
        if let Some(text) = note.and_then(|n| n.comment.as_deref()) {
            for word in comment_words(text) {
                w.word(&word);
            }
            need_number = true;
        }
        if let Some(var) = note.map(|n| &n.variation).filter(|v| !v.is_empty()) {
            let mut words = line_words(&g, var, n, &fmt);
            if !words.is_empty() {
                words[0].insert(0, '(');
                if let Some(last) = words.last_mut() {
                    last.push(')');
                }
                for word in &words {
                    w.word(word);
                }
                need_number = true;
            }
        }
        for variation in note.map_or(&[][..], |n| &n.record_variations) {
            for word in variation.split_whitespace() {
                w.word(word);
            }
            need_number = true;
        }
        g.make(m);
    }
    w.word(result);
    w.out.push('\n');
    w.out
}

/// The result an exported game states, in its `Result` tag and after its moves alike (PGN asks them to be
/// equal): the result after the record's moves, or where that is missing or `*`, its `Result` tag when the tag
/// is one of `results`; else `*`.
pub fn export_result(record_result: Option<&str>, tags: &[(String, String)], results: &[&str]) -> String {
    let tag = tags.iter().find(|(n, _)| n.eq_ignore_ascii_case("Result")).map(|(_, v)| v.trim());
    match record_result {
        Some(r) if r != "*" => r.to_string(),
        _ => tag.filter(|t| results.contains(t)).unwrap_or("*").to_string(),
    }
}

/// [`export_result`] for `record`, unless its moves end where the side to move has no move (a mate, a stalemate, a
/// side blocked or without pieces): then the result that end makes, whatever the record said (found by an audit:
/// a game ending in White's mate stated `0-1` in its export, as its record did). A record's token meaning the
/// same end (`2-0` for `1-0` in PDN) is kept. Draws by a rule the players may not have claimed (repetition, a
/// count of moves) are not read into a record.
pub fn export_result_of<G: Game>(record: &GameRecord<G>, results: &[&str]) -> String {
    let stated = export_result(record.result.as_deref(), &record.tags, results);
    let mut game = record.start.clone();
    for &m in &record.moves {
        game.make(m);
    }
    if crate::game::has_move(&game) {
        return stated;
    }
    let end = game.no_move_end().outcome;
    let black = G::WHITE_SIDE.opponent();
    let means = match stated.as_str() {
        "1-0" | "2-0" => Some(Outcome::Win(G::WHITE_SIDE)),
        "0-1" | "0-2" => Some(Outcome::Win(black)),
        "1/2-1/2" | "1-1" => Some(Outcome::Draw),
        _ => None,
    };
    if means == Some(end) {
        return stated;
    }
    match end {
        Outcome::Draw => "1/2-1/2",
        Outcome::Win(side) if side == G::WHITE_SIDE => "1-0",
        Outcome::Win(_) => "0-1",
    }
    .to_string()
}

/// The tags of an exported game: the record's, less any `Annotator`, then `Annotator "kibitz <version>"`.
pub fn export_tags(tags: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> =
        tags.iter().filter(|(n, _)| !n.eq_ignore_ascii_case("Annotator")).cloned().collect();
    out.push(("Annotator".to_string(), format!("kibitz {}", env!("CARGO_PKG_VERSION"))));
    out
}

/// Read a PDN collection of a draughts game whose `GameType` number is `game_type` (an absent tag means this
/// game), starting from the `FEN` tag (in the game's `fen` position format) when there is one.
pub fn parse_pdn<G: Game>(
    text: &str,
    game_type: &str,
    budget: &mut RecordBudget,
    parse: impl Fn(&G, &str) -> Result<G::Move, NotationError> + Copy,
) -> Result<Records<G>, BudgetError> {
    let one = |index: usize, raw: RawGame| -> Result<GameRecord<G>, RecordError> {
        if let Some(f) = raw.error.clone() {
            return Err(RawGame::error_at(index, f));
        }
        if let Some(tag) = raw.tag("GameType")
            && tag.value.split(',').next().map(str::trim) != Some(game_type)
        {
            return Err(tag_error(index, tag, format!("not a {} game (GameType {game_type})", G::NAME)));
        }
        let start = match raw.tag("FEN") {
            Some(tag) => G::parse_position(&tag.value, Some("fen")).map_err(|e| RecordError {
                index,
                line: tag.line,
                token: e.token,
                message: format!("FEN tag: {}", e.message),
            })?,
            None => G::start(),
        };
        build_record(index, raw, start, 1, parse)
    };
    read_records(text, PDN_RESULTS, budget, one)
}

/// Write an annotated PDN game: `GameType` (`game_type`) when the record has none, so that a reader knows
/// the game, the record's tags (`Result` agreeing with the result after the moves, a `FEN` tag for a set-up
/// position, an `Annotator` tag added), the moves written by `fmt`, each note's NAG, comment (`[%eval]` as
/// kibitz's extension of PDN) and better line, the result.
pub fn export_pdn<G: Game>(
    record: &GameRecord<G>,
    notes: &[PlyNote<G::Move>],
    game_type: &str,
    fmt: impl Fn(&G, G::Move) -> String,
) -> String {
    let set_up = record.start.position_key() != G::start().position_key();
    let result = export_result_of(record, PDN_RESULTS);
    let mut tags: Vec<(String, String)> = Vec::with_capacity(record.tags.len() + 4);
    if !record.tags.iter().any(|(n, _)| n.eq_ignore_ascii_case("GameType")) {
        tags.push(("GameType".to_string(), game_type.to_string()));
    }
    for (name, value) in &record.tags {
        if name.eq_ignore_ascii_case("Result") {
            tags.push((name.clone(), result.clone()));
        } else if !(set_up && name.eq_ignore_ascii_case("FEN")) {
            tags.push((name.clone(), value.clone()));
        }
    }
    if !record.tags.iter().any(|(n, _)| n.eq_ignore_ascii_case("Result")) {
        tags.push(("Result".to_string(), result.clone()));
    }
    if set_up {
        tags.push(("FEN".to_string(), record.start.format_position(Some("fen")).unwrap_or_default()));
    }
    let tags = export_tags(&tags);
    write_game(&tags, &record.start, 1, &record.moves, notes, &result, fmt)
}

/// The first line of `text` that is neither blank nor a `#` comment, trimmed (for format detection).
pub fn first_line(text: &str) -> &str {
    text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_games_and_reads_tags() {
        let text = "[Event \"A \\\"quoted\\\" \\\\ one\"]\n[White \"x\"]\n\n1. e4 {a comment\nover lines} e5 $1 2. Nf3!? (2. d4 (2. c4) d5) 2... Nc6 ; rest\n% escape 1-0\n1-0\n\n[Event \"B\"]\n1.d4 d5 *\n1. c4 0-1";
        let games = read_games(text, PGN_RESULTS);
        assert_eq!(games.len(), 3);
        let g = &games[0];
        assert_eq!(g.line, 1);
        assert_eq!(g.tags[0].value, "A \"quoted\" \\ one");
        assert_eq!(g.tag("white").map(|t| t.line), Some(2));
        let moves: Vec<&str> = g.moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(moves, ["e4", "e5", "Nf3", "Nc6"]);
        assert_eq!(g.moves[1].line, 5);
        assert_eq!(g.result.as_deref(), Some("1-0"));
        assert!(g.error.is_none());
        assert_eq!(games[1].line, 9);
        assert_eq!(games[1].result.as_deref(), Some("*"));
        assert_eq!(games[2].line, 11);
        assert_eq!(games[2].moves[0].text, "c4");
        let cut = read_games("[Result \"0-1\"]\n1. e4 e5", PGN_RESULTS);
        assert_eq!(cut[0].result.as_deref(), Some("0-1"));
        assert_eq!(games[2].result.as_deref(), Some("0-1"));
    }

    #[test]
    fn a_comment_of_the_main_line_belongs_to_the_move_before_it() {
        let text = "{before} 1. e4 {[%clk 0:03:00]} {two\n  lines} e5 (1... c5 {in a variation}) 2. Nf3 ; to the end\n2... Nc6 *";
        let g = &read_games(text, PGN_RESULTS)[0];
        let comments: Vec<Option<&str>> = g.moves.iter().map(|m| m.remarks.comment.as_deref()).collect();
        assert_eq!(comments, [Some("[%clk 0:03:00] two lines"), None, Some("to the end"), None]);
        assert_eq!(g.before.as_deref(), Some("before"));
        let record =
            build_record(0, g.clone(), crate::games::chess::Chess::start(), 1, |p, t| p.parse_move(t)).expect("record");
        // Up to the last move with a remark.
        assert_eq!(record.remarks.moves.len(), 3);
        assert_eq!(record.remarks.moves[2].comment.as_deref(), Some("to the end"));
        assert_eq!(record.remarks.moves[1].variations, ["(1... c5 {in a variation})"]);
        // A record without remarks keeps none.
        let g = &read_games("1. e4 e5 *", PGN_RESULTS)[0];
        let record =
            build_record(0, g.clone(), crate::games::chess::Chess::start(), 1, |p, t| p.parse_move(t)).expect("record");
        assert!(record.remarks.is_empty());
    }

    #[test]
    fn glyphs_and_variations_of_the_main_line_are_kept_as_written() {
        // ChessBase and lichess studies: glyphs as suffixes and `$n`, nested variations with their own comments,
        // glyphs and `;` comments, a null move `--` inside a variation.
        let text = "1. e4! $14 e5 (1... c5?! {Sicilian} (1... e6 $2 ; French }\n 2. d4) 2. -- {null}) \
                    (1... d5) 2. Nf3 !? Nc6 (2... Nf6 {Petroff}) *";
        let g = &read_games(text, PGN_RESULTS)[0];
        assert!(g.error.is_none(), "{:?}", g.error);
        let moves: Vec<&str> = g.moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(moves, ["e4", "e5", "Nf3", "Nc6"]);
        let r: Vec<&MoveRemarks> = g.moves.iter().map(|m| &m.remarks).collect();
        assert_eq!(r[0].nags, [1, 14]);
        assert_eq!(r[1].variations, ["(1... c5?! {Sicilian} (1... e6 $2 {French )} 2. d4) 2. -- {null})", "(1... d5)"]);
        assert_eq!(r[2].nags, [5]);
        assert_eq!(r[3].variations, ["(2... Nf6 {Petroff})"]);
        // Read again, each variation is the same text.
        for v in r.iter().flat_map(|r| &r.variations) {
            let again = read_games(&format!("1. e4 e5 {v} *"), PGN_RESULTS);
            assert_eq!(again[0].moves[1].remarks.variations, std::slice::from_ref(v), "{v}");
        }
        // A variation before the first move stands beside no move: dropped, the game read.
        let g = &read_games("(1. d4) 1. e4 *", PGN_RESULTS)[0];
        assert!(g.error.is_none() && g.moves.iter().all(|m| m.remarks.is_empty()));
    }

    #[test]
    fn the_writer_keeps_the_records_remarks_beside_its_own_notes() {
        use crate::games::chess::Chess;
        let text = "{A game} 1. e4 $1 e5 {[%clk 0:01:00]} (1... c5 {Sicilian}) 2. Nf3 Nc6 $14 *";
        let g = read_games(text, PGN_RESULTS).remove(0);
        let record = build_record(0, g, Chess::start(), 1, |p, t| p.parse_move(t)).expect("record");
        let mut notes: Vec<PlyNote<_>> = (0..record.moves.len()).map(|_| PlyNote::empty()).collect();
        for (k, note) in notes.iter_mut().enumerate() {
            if let Some(own) = record.remarks.of_move(k) {
                note.record_nags = own.nags.clone();
                note.record_variations = own.variations.clone();
                note.comment = own.comment.clone();
            }
        }
        notes[0].before = record.remarks.before.clone();
        // kibitz judged the first move: its `?` stands, the record's `!` gives way.
        notes[0].nag = Some(2);
        let out = write_game(&[], &record.start, 1, &record.moves, &notes, "*", |g: &Chess, m| g.move_to_san(m));
        assert_eq!(
            out.trim(),
            "{ A game } 1. e4 $2 e5 { [%clk 0:01:00] } (1... c5 {Sicilian}) 2. Nf3 Nc6 $14 *",
            "{out}"
        );
        let back = read_games(&out, PGN_RESULTS).remove(0);
        assert_eq!(back.before.as_deref(), Some("A game"));
        assert_eq!(back.moves[1].remarks.variations, ["(1... c5 {Sicilian})"]);
    }

    #[test]
    fn a_comment_word_that_would_change_a_lines_meaning_never_begins_one() {
        // A line beginning with `%` is an escape line: a comment's `%` word there would hide the rest of the line.
        let mut w = Wrapper { out: String::new(), col: 0 };
        w.word(&"x".repeat(LINE_WIDTH - 2));
        w.word("%100");
        w.word("y");
        assert_eq!(w.out, format!("{} %100\ny", "x".repeat(LINE_WIDTH - 2)));
        // One beginning with `[Name "` ends the comment it is in: `[Event "x"]` stays one game's comment.
        let text = format!("1. e4 {{{} [Event \"x\"] and more}} e5 *", "w ".repeat(36));
        let g = read_games(&text, PGN_RESULTS).remove(0);
        let comment = g.moves[0].remarks.comment.clone().expect("the comment");
        let record = build_record(0, g, crate::games::chess::Chess::start(), 1, |p, t| p.parse_move(t)).expect("ok");
        let mut notes: Vec<PlyNote<_>> = (0..2).map(|_| PlyNote::empty()).collect();
        notes[0].comment = Some(comment.clone());
        let out = write_game(&[], &record.start, 1, &record.moves, &notes, "*", |g, m| g.move_to_san(m));
        let back = read_games(&out, PGN_RESULTS);
        assert_eq!(back.len(), 1, "{out}");
        assert_eq!(back[0].moves[0].remarks.comment.as_deref(), Some(comment.as_str()), "{out}");
    }

    #[test]
    fn a_move_number_without_its_dot_is_a_move_number() {
        let g = read_games("1 e4 e5 2 Nf3 Nc6 3 Bb5 *", PGN_RESULTS);
        let moves: Vec<&str> = g[0].moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(moves, ["e4", "e5", "Nf3", "Nc6", "Bb5"]);
        let g = read_games("1 32-28 19-23 2 28x19 14x23 *", PDN_RESULTS);
        let moves: Vec<&str> = g[0].moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(moves, ["32-28", "19-23", "28x19", "14x23"]);
    }

    #[test]
    fn every_result_form() {
        for r in PGN_RESULTS {
            let g = read_games(&format!("1. e4 {r}"), PGN_RESULTS);
            assert_eq!(g.len(), 1);
            assert_eq!(g[0].result.as_deref(), Some(*r));
        }
        for r in PDN_RESULTS {
            let g = read_games(&format!("1. 32-28 {r} 1. 33-29"), PDN_RESULTS);
            assert_eq!(g.len(), 2, "{r}");
            assert_eq!(g[0].result.as_deref(), Some(*r));
        }
        // `0-0` is castling in chess, not a result.
        let g = read_games("1. e4 e5 2. 0-0 *", PGN_RESULTS);
        assert_eq!(g[0].moves.len(), 3);
    }

    #[test]
    fn errors_resynchronise() {
        let text = "[Event \"1\"]\n1. e4 { never closed\n\n[Event \"2\"]\n1. d4 *\n[Event \"3\"]\n1. e4 (1. d4 \n[Event \"4\"]\n1. c4 ) 1-0 1. Nf3 *\n[Event \"5\n1. e4 *";
        let games = read_games(text, PGN_RESULTS);
        let errs: Vec<Option<(usize, String)>> =
            games.iter().map(|g| g.error.as_ref().map(|f| (f.line, f.token.clone()))).collect();
        assert_eq!(games.len(), 6, "{errs:?}");
        assert_eq!(errs[0], Some((2, "{".to_string())));
        assert_eq!(games[1].moves[0].text, "d4");
        assert!(errs[1].is_none());
        assert_eq!(errs[2], Some((7, "(".to_string())));
        assert_eq!(errs[3], Some((9, ")".to_string())));
        assert_eq!(games[3].result.as_deref(), Some("1-0"));
        assert!(errs[4].is_none());
        assert_eq!(games[4].moves[0].text, "Nf3");
        assert_eq!(errs[5].as_ref().map(|e| e.0), Some(10));
        assert!(games[5].error.as_ref().is_some_and(|f| f.message.contains("unterminated tag value")));
    }

    #[test]
    fn a_tag_that_cannot_be_read_is_its_games_error_and_splits_nothing() {
        // Found reading real files: the game after a bad tag lost its tags and every later game its number.
        let huge = "v".repeat(MAX_TOKEN + 10);
        for bad in ["[Event \"A]", "[Event \"A\" x]", &format!("[Event \"{huge}\"]")] {
            let text = format!("{bad}\n[Site \"B\"]\n\n1. e4 e5 1-0\n\n[Event \"C\"]\n1. d4\n\n[Event \"D\"]\n1. c4 *");
            let games = read_games(&text, PGN_RESULTS);
            assert_eq!(games.len(), 3, "{bad}");
            assert_eq!(games[0].error.as_ref().map(|f| f.line), Some(1), "{bad}");
            assert_eq!(games[0].tag("Site").map(|t| t.value.as_str()), Some("B"), "{bad}");
            assert_eq!(games[0].result.as_deref(), Some("1-0"), "{bad}");
            // A game with an error and no result ends at the next tag section all the same.
            assert_eq!(games[1].tag("Event").map(|t| t.value.as_str()), Some("C"), "{bad}");
            assert_eq!(games[2].tag("Event").map(|t| t.value.as_str()), Some("D"), "{bad}");
            assert!(games[1].error.is_none() && games[2].error.is_none(), "{bad}");
        }
    }

    #[test]
    fn a_quote_left_unescaped_in_a_tag_value_is_read_as_older_databases_mean_it() {
        let text = "[Event \"The \"Big\" Open\" ]  \n[White \"O\\\"Neil \"Jr\"\"]\n[Site \"x\"]\n\n1. e4 *";
        let games = read_games(text, PGN_RESULTS);
        assert_eq!(games.len(), 1);
        assert!(games[0].error.is_none(), "{:?}", games[0].error);
        let values: Vec<&str> = games[0].tags.iter().map(|t| t.value.as_str()).collect();
        assert_eq!(values, ["The \"Big\" Open", "O\"Neil \"Jr\"", "x"]);
        // Two tags on one line, the first with quotes left unescaped: two tags.
        let games = read_games("[Event \"The \"Big\" Open\"] [Site \"x\"]\n1. e4 *", PGN_RESULTS);
        assert!(games[0].error.is_none(), "{:?}", games[0].error);
        let pairs: Vec<(&str, &str)> = games[0].tags.iter().map(|t| (t.name.as_str(), t.value.as_str())).collect();
        assert_eq!(pairs, [("Event", "The \"Big\" Open"), ("Site", "x")]);
        // Not when something other than `]` follows the line's last quote, or the value is too long.
        for bad in ["[Event \"The \"Big\" Open\"] x", "[Event \"a\" b]"] {
            let games = read_games(&format!("{bad}\n1. e4 *"), PGN_RESULTS);
            assert!(games[0].error.is_some(), "{bad}");
        }
        let long = format!("[Event \"\"{}\"]\n*", "v".repeat(MAX_TOKEN));
        assert!(read_games(&long, PGN_RESULTS)[0].error.is_some());
    }

    #[test]
    fn an_en_passant_mark_apart_from_its_move_is_no_move() {
        let games = read_games("1. e4 d5 2. e5 f5 3. exf6 e.p. Nxf6 4. d4 ep *", PGN_RESULTS);
        let moves: Vec<&str> = games[0].moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(moves, ["e4", "d5", "e5", "f5", "exf6", "Nxf6", "d4"]);
    }

    #[test]
    fn bounds() {
        let long = format!("1. {} *", "a".repeat(MAX_TOKEN + 1));
        let g = read_games(&long, PGN_RESULTS);
        assert!(g[0].error.as_ref().is_some_and(|f| f.message.contains("longer")));
        let deep = format!("1. e4 {} e5 {} *", "(".repeat(MAX_DEPTH + 1), ")".repeat(MAX_DEPTH + 1));
        let g = read_games(&deep, PGN_RESULTS);
        assert!(g[0].error.as_ref().is_some_and(|f| f.message.contains("nested")));
        let g = read_games("1. e4 $999 *", PGN_RESULTS);
        assert_eq!(g[0].error.as_ref().map(|f| f.token.as_str()), Some("$999"));
        let g = read_games(&format!("[Event \"{}\"]\n*", "v".repeat(MAX_TOKEN + 10)), PGN_RESULTS);
        assert!(g[0].error.is_some());
    }

    #[test]
    fn an_accepted_tag_value_reads_back_once_escaped() {
        // Backslashes that escape nothing are kept as they are, and doubled when written: the raw text grows,
        // the value does not.
        let value = "\\a".repeat(MAX_TOKEN * 2 / 5);
        let g = read_games(&format!("[Event \"{value}\"]\n*"), PDN_RESULTS);
        assert!(g[0].error.is_none(), "{:?}", g[0].error);
        assert_eq!(g[0].tags[0].value, value);
        let written = format!("[Event \"{}\"]\n*", escape(&value));
        assert!(written.len() > MAX_TOKEN + 10);
        let again = read_games(&written, PDN_RESULTS);
        assert_eq!(again.len(), 1);
        assert!(again[0].error.is_none(), "{:?}", again[0].error);
        assert_eq!(again[0].tags[0].value, value);
        let too_long = format!("[Event \"{}\"]\n*", "\\\\".repeat(MAX_TOKEN + 1));
        assert!(read_games(&too_long, PDN_RESULTS)[0].error.is_some());
    }

    #[test]
    fn random_text_never_panics() {
        let alphabet: Vec<char> = "[]{}()\";$%!?.-*/ \n\t01e4Nfx=\\é".chars().collect();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 40) as usize;
            let text: String =
                (0..len).map(|i| alphabet[((x >> (i % 8 * 8)) as usize + i * 7) % alphabet.len()]).collect();
            let _ = read_games(&text, PDN_RESULTS);
        }
    }

    #[test]
    fn a_game_keeps_no_more_moves_than_its_reader_takes() {
        let text = format!("[Event \"x\"]\n1. {} *\n[Event \"y\"]\n1. e4 *", "e4 e5 Nf3 Nf6 ".repeat(1000));
        let games: Vec<RawGame> = RawGames::new(&text, PGN_RESULTS, 5).collect();
        assert_eq!(games.len(), 2);
        assert_eq!((games[0].moves.len(), games[0].moves_written), (5, 4000));
        assert_eq!((games[1].moves.len(), games[1].moves_written, games[1].line), (1, 1, 3));
    }

    #[test]
    fn gathering_stops_at_the_first_game_over_the_budget() {
        use crate::game::{GameRecord, gather_records};
        use crate::games::chess::Chess;
        use std::cell::Cell;
        let (pulled, read) = (Cell::new(0), Cell::new(0));
        let games = (0..10).map(|i| {
            pulled.set(pulled.get() + 1);
            let read = &read;
            (i * 2 + 1, 0, move || {
                read.set(read.get() + 1);
                Ok(GameRecord {
                    tags: Vec::new(),
                    start: Chess::start(),
                    moves: Vec::new(),
                    result: None,
                    line: i * 2 + 1,
                    remarks: Default::default(),
                })
            })
        });
        let e = gather_records::<Chess, _>(games, &mut RecordBudget::new(3, 100)).expect_err("over budget");
        assert_eq!(e, BudgetError::TooManyGames { max: 3, game: 4, line: 7 });
        // The fourth game was looked at and refused, unread; the fifth and later were never looked at.
        assert_eq!((pulled.get(), read.get()), (4, 3));

        // A game whose moves as written are more than the positions left is refused before it is read.
        let (pulled, read) = (Cell::new(0), Cell::new(0));
        let games = (0..10).map(|i| {
            pulled.set(pulled.get() + 1);
            let read = &read;
            (i + 1, if i == 1 { 1_000 } else { 0 }, move || {
                read.set(read.get() + 1);
                Ok(GameRecord {
                    tags: Vec::new(),
                    start: Chess::start(),
                    moves: Vec::new(),
                    result: None,
                    line: i + 1,
                    remarks: Default::default(),
                })
            })
        });
        let e = gather_records::<Chess, _>(games, &mut RecordBudget::new(10, 100)).expect_err("over budget");
        assert_eq!(e, BudgetError::TooManyPositions { max: 100, game: 2, line: 2 });
        assert_eq!((pulled.get(), read.get()), (2, 1));
    }

    #[test]
    fn reading_stops_before_the_games_past_the_budget_are_played() {
        use crate::game::{BudgetError, RecordBudget};
        use crate::games::draughts::Draughts;
        use std::cell::Cell;
        // Ten games; the fifth has a move that cannot be read. Each move read is counted.
        let good = "[Event \"x\"]\n1. 32-28 19-23 *\n";
        let text: String = (0..10).map(|i| if i == 4 { "[Event \"x\"]\n1. 32-28 99-98 *\n" } else { good }).collect();
        let played = Cell::new(0);
        let parse = |g: &Draughts, t: &str| {
            played.set(played.get() + 1);
            g.parse_pdn_move(t)
        };
        let all = parse_pdn(&text, "20", &mut RecordBudget::new(10, 100), parse).expect("within budget");
        assert_eq!((all.len(), all.iter().filter(|r| r.is_err()).count(), played.get()), (10, 1, 20));
        played.set(0);
        let e = parse_pdn(&text, "20", &mut RecordBudget::new(3, 100), parse).expect_err("over budget");
        assert_eq!(e, BudgetError::TooManyGames { max: 3, game: 4, line: 7 });
        // Three games of two moves: nothing after them was played.
        assert_eq!(played.get(), 6);
        // A game with more moves than the positions left is not played at all.
        played.set(0);
        let e = parse_pdn(&text, "20", &mut RecordBudget::new(10, 7), parse).expect_err("over budget");
        assert_eq!(e, BudgetError::TooManyPositions { max: 7, game: 3, line: 5 });
        assert_eq!(played.get(), 4);
    }

    #[test]
    fn wraps_at_80_columns() {
        let mut w = Wrapper { out: String::new(), col: 0 };
        for i in 0..100 {
            w.word(&format!("{i}."));
            w.word("Nxe4");
        }
        assert!(w.out.lines().all(|l| l.len() <= LINE_WIDTH));
        assert!(w.out.lines().count() > 5);
    }
}
