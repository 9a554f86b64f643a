//! Chess notations: FEN (with X-FEN / Shredder castling letters for Chess960), UCI coordinates and SAN.
//!
//! cozy-chess writes castling as "king takes own rook"; outside this module a castling move is written the
//! standard way (`e1g1`, `O-O`) in standard chess and king-takes-rook (`e1h1`) in Chess960 positions, as UCI
//! does with `UCI_Chess960`. Both spellings are read in either case.

use cozy_chess::{
    BitBoard, Board, BoardBuilder, CastleRights, Color, FenParseError, File, Move, Piece, Rank, Square, get_king_moves,
};

use crate::game::NotationError;

// ---------------------------------------------------------------- FEN

/// Read a FEN. The halfmove clock and fullmove number may be left out (`0 1`); a halfmove clock above 100 is
/// read as 100 (the 50-move rule applies either way). Castling rights are `KQkq` (the outermost rook on
/// that side of the king), Shredder file letters (`HAha`) or a mix (X-FEN). Returns the board and whether
/// the castling setup is not the standard one (a Chess960 position).
pub fn parse_fen(text: &str) -> Result<(Board, bool), NotationError> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() < 4 {
        return Err(NotationError::new(text, "a FEN needs at least 4 fields (placement, side, castling, en passant)"));
    }
    if fields.len() > 6 {
        return Err(NotationError::new(fields[6], "unexpected field after the FEN"));
    }
    let (placement, side, castling, ep) = (fields[0], fields[1], fields[2], fields[3]);
    let halfmove = match fields.get(4) {
        None => 0u32,
        Some(t) => t.parse::<u32>().map_err(|_| NotationError::new(*t, "bad halfmove clock"))?.min(100),
    };
    let fullmove = match fields.get(5) {
        None => 1u32,
        Some(t) => t.parse::<u32>().map_err(|_| NotationError::new(*t, "bad fullmove number"))?.clamp(1, 9999),
    };
    if placement.len() > 100 || placement.split('/').count() != 8 {
        return Err(NotationError::new(placement, "the piece placement needs 8 ranks separated by `/`"));
    }
    if !matches!(side, "w" | "b" | "W" | "B") {
        return Err(NotationError::new(side, "the side to move is `w` or `b`"));
    }
    let side = side.to_ascii_lowercase();
    // cozy-chess reads everything but the castling rights, which are set below from the X-FEN letters.
    let plain = format!("{placement} {side} - {ep} {halfmove} {fullmove}");
    let board = Board::from_fen(&plain, false).map_err(|e| match e {
        FenParseError::InvalidEnPassant => NotationError::new(ep, "bad en passant square"),
        FenParseError::InvalidSideToMove => NotationError::new(&side, "bad side to move"),
        FenParseError::InvalidBoard => NotationError::new(
            placement,
            "impossible position (one king each, no pawn on the first or last rank, the side not to move not in check)",
        ),
        _ => NotationError::new(text, "bad FEN"),
    })?;
    // cozy-chess lets the kings stand side by side (one could then take the other, and its rules panic on a
    // board without a king).
    if !(get_king_moves(board.king(Color::White)) & board.colored_pieces(Color::Black, Piece::King)).is_empty() {
        return Err(NotationError::new(placement, "impossible position: the two kings stand next to each other"));
    }
    if castling == "-" {
        return Ok((board, false));
    }
    let mut builder = BoardBuilder::from_board(&board);
    let mut chess960 = false;
    for c in castling.chars() {
        let color = if c.is_ascii_uppercase() { Color::White } else { Color::Black };
        let back = Rank::First.relative_to(color);
        let king = board.king(color);
        // `KQkq` where the king or the rook has left (set-up positions written with every right by default):
        // a right that cannot be is dropped, as other programs read it. A rook's file letter (X-FEN,
        // Shredder-FEN) says more, and is checked.
        let letter = matches!(c, 'K' | 'Q' | 'k' | 'q');
        if letter && king.rank() != back {
            continue;
        }
        if king.rank() != back {
            return Err(NotationError::new(
                castling,
                format!("castling right `{c}` without the king on its first rank"),
            ));
        }
        let rooks = board.colored_pieces(color, Piece::Rook) & back.bitboard();
        let rook_file = match c.to_ascii_lowercase() {
            'k' => rooks.iter().filter(|s| s.file() > king.file()).map(|s| s.file()).max(),
            'q' => rooks.iter().filter(|s| s.file() < king.file()).map(|s| s.file()).min(),
            f @ 'a'..='h' => File::try_index((f as u8 - b'a') as usize).filter(|&f| rooks.has(Square::new(f, back))),
            _ => return Err(NotationError::new(castling, format!("bad castling letter `{c}`"))),
        };
        let Some(file) = rook_file else {
            if letter {
                continue;
            }
            return Err(NotationError::new(castling, format!("castling right `{c}` without its rook")));
        };
        if file == king.file() {
            return Err(NotationError::new(castling, format!("bad castling letter `{c}`")));
        }
        let rights: &mut CastleRights = builder.castle_rights_mut(color);
        let slot = if file > king.file() { &mut rights.short } else { &mut rights.long };
        if slot.is_some() {
            return Err(NotationError::new(castling, format!("castling right `{c}` given twice")));
        }
        *slot = Some(file);
        let standard_rook = if file > king.file() { File::H } else { File::A };
        if king.file() != File::E || file != standard_rook {
            chess960 = true;
        }
    }
    let board = builder.build().map_err(|_| NotationError::new(castling, "impossible castling rights"))?;
    Ok((board, chess960))
}

/// Write a FEN; castling rights as `KQkq` where the rook is the outermost one on its side, else as the
/// rook's file letter (X-FEN).
pub fn format_fen(board: &Board) -> String {
    let full = board.to_string();
    let mut fields: Vec<String> = full.split(' ').map(str::to_string).collect();
    let mut castling = String::new();
    for color in [Color::White, Color::Black] {
        let rights = board.castle_rights(color);
        let back = Rank::First.relative_to(color);
        let king = board.king(color);
        let rooks = board.colored_pieces(color, Piece::Rook) & back.bitboard();
        for (file, short) in [(rights.short, true), (rights.long, false)] {
            let Some(file) = file else { continue };
            let outer = if short {
                rooks.iter().filter(|s| s.file() > king.file()).map(|s| s.file()).max()
            } else {
                rooks.iter().filter(|s| s.file() < king.file()).map(|s| s.file()).min()
            };
            let mut c = if outer == Some(file) { if short { 'k' } else { 'q' } } else { char::from(file) };
            if color == Color::White {
                c = c.to_ascii_uppercase();
            }
            castling.push(c);
        }
    }
    if castling.is_empty() {
        castling.push('-');
    }
    if fields.len() == 6 {
        fields[2] = castling;
    }
    fields.join(" ")
}

// ---------------------------------------------------------------- moves

/// Every legal move (allocates; for notation, not for the search).
pub fn legal_moves(board: &Board) -> Vec<Move> {
    let mut v = Vec::with_capacity(64);
    board.generate_moves(|pm| {
        v.extend(pm);
        false
    });
    v
}

/// The move castles (cozy-chess: the king takes its own rook).
#[inline]
pub fn is_castle(board: &Board, m: Move) -> bool {
    board.colors(board.side_to_move()).has(m.to)
}

/// The square the king lands on when `m` castles.
fn castle_king_target(board: &Board, m: Move) -> Square {
    let back = Rank::First.relative_to(board.side_to_move());
    if m.to.file() > m.from.file() { Square::new(File::G, back) } else { Square::new(File::C, back) }
}

/// A move in UCI coordinates: `e2e4`, `e7e8q`; castling `e1g1` in standard chess, king-takes-rook in
/// Chess960.
pub fn format_uci(board: &Board, m: Move, chess960: bool) -> String {
    let to = if !chess960 && is_castle(board, m) { castle_king_target(board, m) } else { m.to };
    let mut s = format!("{}{}", m.from, to);
    if let Some(p) = m.promotion {
        s.push(char::from(p));
    }
    s
}

/// Read a UCI move (`e2e4`, `e7e8q`, castling as `e1g1` or `e1h1`), checking it is legal.
pub fn parse_uci(board: &Board, text: &str) -> Option<Move> {
    let t = text.trim();
    if !(4..=5).contains(&t.len()) || !t.is_ascii() {
        return None;
    }
    let from: Square = t[0..2].to_ascii_lowercase().parse().ok()?;
    let to: Square = t[2..4].to_ascii_lowercase().parse().ok()?;
    let promotion = match t[4..].chars().next() {
        None => None,
        Some(c) => Some(Piece::try_from(c.to_ascii_lowercase()).ok()?),
    };
    legal_moves(board).into_iter().find(|&m| {
        m.from == from
            && m.promotion == promotion
            && (m.to == to || is_castle(board, m) && castle_king_target(board, m) == to && m.from.file() == File::E)
    })
}

fn piece_letter(p: Piece) -> char {
    char::from(p).to_ascii_uppercase()
}

fn is_capture(board: &Board, m: Move) -> bool {
    board.colors(!board.side_to_move()).has(m.to)
        || board.piece_on(m.from) == Some(Piece::Pawn) && m.from.file() != m.to.file()
}

/// A move in Standard Algebraic Notation: `Nf3`, `exd5`, `Rad1`, `e8=Q+`, `O-O`, `Qh7#`.
pub fn format_san(board: &Board, m: Move) -> String {
    let mut s = String::with_capacity(8);
    let piece = board.piece_on(m.from).unwrap_or(Piece::Pawn);
    if piece == Piece::King && is_castle(board, m) {
        s.push_str(if m.to.file() > m.from.file() { "O-O" } else { "O-O-O" });
    } else {
        let capture = is_capture(board, m);
        if piece == Piece::Pawn {
            if capture {
                s.push(char::from(m.from.file()));
            }
        } else {
            s.push(piece_letter(piece));
            let mut rivals = BitBoard::EMPTY;
            board.generate_moves_for(board.pieces(piece) & !m.from.bitboard(), |pm| {
                if pm.to.has(m.to) {
                    rivals |= pm.from.bitboard();
                }
                false
            });
            if !rivals.is_empty() {
                if (rivals & m.from.file().bitboard()).is_empty() {
                    s.push(char::from(m.from.file()));
                } else if (rivals & m.from.rank().bitboard()).is_empty() {
                    s.push(char::from(m.from.rank()));
                } else {
                    s.push_str(&m.from.to_string());
                }
            }
        }
        if capture {
            s.push('x');
        }
        s.push_str(&m.to.to_string());
        if let Some(p) = m.promotion {
            s.push('=');
            s.push(piece_letter(p));
        }
    }
    let mut after = board.clone();
    after.play_unchecked(m);
    if !after.checkers().is_empty() {
        s.push(if after.generate_moves(|_| true) { '+' } else { '#' });
    }
    s
}

/// Read a SAN move, leniently: `O-O`/`0-0`, check and mate marks and annotations optional (`+`, `#`, `!?`),
/// `x` optional, `e8Q`/`e8=Q`/`e8q`, `Ng1f3`, `Ng1-f3`. Lowercase first letters are pawn files (`bxc3`).
pub fn parse_san(board: &Board, text: &str) -> Result<Move, NotationError> {
    let t = text.trim().trim_end_matches(['+', '#', '!', '?']);
    let t = t.strip_suffix("e.p.").unwrap_or(t).trim();
    let legal = legal_moves(board);
    let castle = t.replace('0', "O").to_ascii_uppercase();
    if castle == "O-O" || castle == "O-O-O" {
        let short = castle == "O-O";
        return legal
            .into_iter()
            .find(|&m| is_castle(board, m) && (m.to.file() > m.from.file()) == short)
            .ok_or_else(|| NotationError::new(text, "castling is not legal here"));
    }
    let mut chars: Vec<char> = t.chars().filter(|&c| !matches!(c, 'x' | 'X' | ':' | '-')).collect();
    if chars.len() < 2 || chars.len() > 7 || !chars.iter().all(char::is_ascii_alphanumeric) && !chars.contains(&'=') {
        return Err(NotationError::new(text, "not a move"));
    }
    // Promotion: a piece letter after the destination square, with or without `=`.
    let mut promotion = None;
    if let Some(&last) = chars.last()
        && chars.len() >= 3
        && "qrbnQRBN".contains(last)
    {
        let before = chars[chars.len() - 2];
        if before == '=' || before.is_ascii_digit() {
            promotion = Piece::try_from(last.to_ascii_lowercase()).ok();
            chars.pop();
            if chars.last() == Some(&'=') {
                chars.pop();
            }
        }
    }
    if chars.contains(&'=') || chars.len() < 2 {
        return Err(NotationError::new(text, "not a move"));
    }
    let n = chars.len();
    let to: Square = chars[n - 2..]
        .iter()
        .collect::<String>()
        .parse()
        .map_err(|_| NotationError::new(text, "no destination square"))?;
    let mut prefix = &chars[..n - 2];
    let mut piece = Piece::Pawn;
    if let Some(&c) = prefix.first()
        && "NBRQK".contains(c)
    {
        piece = Piece::try_from(c.to_ascii_lowercase()).map_err(|_| NotationError::new(text, "bad piece"))?;
        prefix = &prefix[1..];
    }
    let mut from_file = None;
    let mut from_rank = None;
    for &c in prefix {
        match c {
            'a'..='h' if from_file.is_none() && from_rank.is_none() => {
                from_file = File::try_index((c as u8 - b'a') as usize);
            }
            '1'..='8' if from_rank.is_none() => from_rank = Rank::try_index((c as u8 - b'1') as usize),
            _ => return Err(NotationError::new(text, "not a move")),
        }
    }
    // A pawn move without its file is a push on the destination's file: `d5` is never `exd5` (found by an audit:
    // it was read as the capture, so a corrupt record was silently read as another game).
    if piece == Piece::Pawn && from_file.is_none() {
        from_file = Some(to.file());
    }
    if piece == Piece::Pawn && to.rank() == Rank::Eighth.relative_to(board.side_to_move()) && promotion.is_none() {
        return Err(NotationError::new(text, "a pawn reaching the last rank must name its promotion (=Q)"));
    }
    let candidates: Vec<Move> = legal
        .into_iter()
        .filter(|&m| {
            board.piece_on(m.from) == Some(piece)
                && m.to == to
                && !is_castle(board, m)
                && m.promotion == promotion
                && from_file.is_none_or(|f| m.from.file() == f)
                && from_rank.is_none_or(|r| m.from.rank() == r)
        })
        .collect();
    match candidates.as_slice() {
        [m] => Ok(*m),
        [] => Err(NotationError::new(text, "illegal move")),
        _ => Err(NotationError::new(text, "ambiguous move")),
    }
}

/// Read a move in UCI coordinates or SAN.
pub fn parse_move(board: &Board, text: &str) -> Result<Move, NotationError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(NotationError::new(text, "empty move"));
    }
    if t.len() > 16 {
        return Err(NotationError::new(text, "not a move"));
    }
    // A capital first letter names a piece in SAN: `B8b7` is the bishop from the eighth rank, though `b8b7`
    // may be legal too. So SAN is read first there, and coordinates in capitals (`E2E4`) only when SAN cannot.
    let san_first = t.as_bytes()[0].is_ascii_uppercase();
    if !san_first && let Some(m) = parse_uci(board, t) {
        return Ok(m);
    }
    // Looks like coordinates but is not legal: say so rather than "not a move".
    let b = t.as_bytes();
    let coordinate = (4..=5).contains(&b.len())
        && matches!(b[0].to_ascii_lowercase(), b'a'..=b'h')
        && matches!(b[1], b'1'..=b'8')
        && matches!(b[2].to_ascii_lowercase(), b'a'..=b'h')
        && matches!(b[3], b'1'..=b'8');
    match parse_san(board, t) {
        Ok(m) => Ok(m),
        Err(_) if san_first && let Some(m) = parse_uci(board, t) => Ok(m),
        Err(_) if coordinate => Err(NotationError::new(text, "illegal move")),
        Err(e) => Err(e),
    }
}
