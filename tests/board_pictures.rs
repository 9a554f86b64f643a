//! Board pictures: each game's SVG read back into a position (every piece on its square, nothing extra, Hive's
//! stacks and hands) for a start position and a middlegame; the pictures rendered to pixels (resvg) and a few
//! pixels and element counts checked; `GET /v1/board.svg` and `kibitz board` end to end.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::Command;

use common::{Server, TempDir};
use kibitz::game::{self, Game};
use kibitz::games::checkers::Checkers;
use kibitz::games::chess::Chess;
use kibitz::games::draughts::Draughts;
use kibitz::games::hive::Hive;
use kibitz::games::xiangqi::Xiangqi;
use kibitz::picture::{self, Options};

// ---- reading the SVG back ----

/// One start tag: its name and attributes (entities decoded).
#[derive(Debug, Clone)]
struct Tag {
    name: String,
    attrs: HashMap<String, String>,
}

impl Tag {
    fn get(&self, key: &str) -> Option<&str> {
        self.attrs.get(key).map(String::as_str)
    }

    fn num(&self, key: &str) -> f64 {
        self.get(key).unwrap_or_else(|| panic!("no {key} in {self:?}")).parse().expect("number")
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'").replace("&amp;", "&")
}

/// Every start tag of the document, in order (a small scanner: the pictures quote every attribute).
fn tags(svg: &str) -> Vec<Tag> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        if rest.starts_with('/') || rest.starts_with('?') || rest.starts_with('!') {
            continue;
        }
        let end = rest.find('>').expect("unclosed tag");
        let body = rest[..end].trim_end_matches('/');
        let name_end = body.find(|c: char| c.is_whitespace()).unwrap_or(body.len());
        let mut tag = Tag { name: body[..name_end].to_string(), attrs: HashMap::new() };
        let mut a = &body[name_end..];
        while let Some(eq) = a.find("=\"") {
            let key = a[..eq].trim().to_string();
            let after = &a[eq + 2..];
            let close = after.find('"').expect("unclosed attribute");
            assert!(tag.attrs.insert(key.clone(), unescape(&after[..close])).is_none(), "{key} twice");
            a = &after[close + 1..];
        }
        out.push(tag);
        rest = &rest[end..];
    }
    out
}

/// The root's contract, the board's squares (name -> tag) and the pieces (square -> code).
struct Read {
    root: Tag,
    squares: BTreeMap<String, Tag>,
    pieces: BTreeMap<String, String>,
}

fn read(svg: &str, game: &str, position: &str, flipped: bool) -> Read {
    let all = tags(svg);
    let root = all[0].clone();
    assert_eq!(root.name, "svg");
    assert_eq!(root.get("xmlns"), Some("http://www.w3.org/2000/svg"));
    assert_eq!(root.get("data-game"), Some(game));
    assert_eq!(root.get("data-position"), Some(position));
    assert_eq!(root.get("data-flipped"), Some(if flipped { "true" } else { "false" }));
    let mut squares = BTreeMap::new();
    let mut pieces = BTreeMap::new();
    for t in &all {
        match (t.get("data-square"), t.get("data-piece")) {
            (Some(sq), Some(code)) => {
                assert!(pieces.insert(sq.to_string(), code.to_string()).is_none(), "two pieces on {sq}");
            }
            (Some(sq), None) => {
                assert!(squares.insert(sq.to_string(), t.clone()).is_none(), "square {sq} twice");
            }
            (None, Some(_)) => assert!(t.get("data-hex").is_some(), "a piece without a square: {t:?}"),
            (None, None) => {}
        }
    }
    for sq in pieces.keys() {
        assert!(squares.contains_key(sq), "a piece on {sq}, which is not a square of the board");
    }
    Read { root, squares, pieces }
}

fn draw<G: Game>(game: &G) -> String {
    picture::render(game, None, &[], Options::default())
}

fn play<G: Game>(moves: &[&str]) -> G {
    let mut g = G::start();
    game::play_moves(&mut g, moves).unwrap_or_else(|e| panic!("{}: {e}", G::NAME));
    g
}

/// The board field of a FEN (chess, xiangqi) from pieces on named squares.
fn fen_board(pieces: &BTreeMap<String, String>, files: &[char], ranks: &[String]) -> String {
    let mut rows = Vec::new();
    for rank in ranks {
        let mut row = String::new();
        let mut empty = 0;
        for file in files {
            match pieces.get(&format!("{file}{rank}")) {
                Some(code) => {
                    if empty > 0 {
                        row.push_str(&empty.to_string());
                        empty = 0;
                    }
                    row.push_str(code);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            row.push_str(&empty.to_string());
        }
        rows.push(row);
    }
    rows.join("/")
}

fn check_chess(g: &Chess) {
    let position = g.format_position(None).expect("fen");
    let r = read(&draw(g), "chess", &position, false);
    assert_eq!(r.squares.len(), 64);
    let files: Vec<char> = ('a'..='h').collect();
    let ranks: Vec<String> = (1..=8).rev().map(|r| r.to_string()).collect();
    assert_eq!(fen_board(&r.pieces, &files, &ranks), position.split(' ').next().expect("board"));
}

fn check_xiangqi(g: &Xiangqi) {
    let position = g.format_position(None).expect("fen");
    let r = read(&draw(g), "xiangqi", &position, false);
    assert_eq!(r.squares.len(), 90);
    let files: Vec<char> = ('a'..='i').collect();
    let ranks: Vec<String> = (0..=9).rev().map(|r| r.to_string()).collect();
    assert_eq!(fen_board(&r.pieces, &files, &ranks), position.split(' ').next().expect("board"));
}

/// Checkers and draughts: the pieces read back as a PDN FEN, parsed by the game, equal the game's position.
fn check_numbered<G: Game>(g: &G, squares: usize) {
    let position = g.format_position(None).expect("fen");
    let r = read(&draw(g), G::NAME, &position, false);
    assert_eq!(r.squares.len(), squares);
    assert_eq!(
        r.squares.keys().map(|k| k.parse::<usize>().expect("number")).collect::<BTreeSet<_>>(),
        (1..=squares).collect()
    );
    let mut white = Vec::new();
    let mut black = Vec::new();
    for (sq, code) in &r.pieces {
        let list = if code.starts_with('W') { &mut white } else { &mut black };
        list.push(if code.ends_with('K') { format!("K{sq}") } else { sq.clone() });
        assert!(["W", "WK", "B", "BK"].contains(&code.as_str()), "{code}");
    }
    let side = &position[..1];
    let text = format!("{side}:W{}:B{}", white.join(","), black.join(","));
    let back = G::parse_position(&text, None).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(back.position_key(), g.position_key(), "{text}");
}

const CHESS_GAME: &[&str] = &[
    "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5c6", "d7c6", "e1g1", "f7f6", "d2d4", "e5d4", "f3d4", "c6c5",
    "d4b3", "d8d1", "f1d1", "c8g4", "f2f3", "g4e6",
];
const XIANGQI_GAME: &[&str] = &[
    "I0-I2", "B7-B3", "H2-H4", "B3-B6", "H4-A4", "H9-G7", "B0-A2", "I9-I7", "I2-I1", "B6-B3", "I1-B1", "C6-C5",
    "B2-B9", "H7-H5",
];
const CHECKERS_GAME: &[&str] = &[
    "12-16", "24-20", "16-19", "23x16", "10-14", "27-23", "14-17", "21x14", "9x18x27", "31x24", "7-10", "16x7", "2x11",
    "22-17",
];
const DRAUGHTS_GAME: &[&str] = &[
    "34-29", "20-25", "33-28", "18-23", "29x18", "13x33", "39x28", "8-13", "35-30", "25x34", "40x29", "17-21", "32-27",
    "21x34", "38-32", "3-8",
];
const HIVE_GAME: &[&str] =
    &["wS1", "bS1 wS1-", "wQ -wS1", "bQ bS1-", "wB1 \\wQ", "bA1 bQ/", "wB1 wQ", "bB1 bQ\\", "wG1 /wS1", "bB1 bQ"];

#[test]
fn chess_pictures_read_back_to_the_position() {
    check_chess(&Chess::start());
    for n in [4, 9, CHESS_GAME.len()] {
        check_chess(&play::<Chess>(&CHESS_GAME[..n]));
    }
}

#[test]
fn xiangqi_pictures_read_back_to_the_position() {
    check_xiangqi(&Xiangqi::start());
    check_xiangqi(&play::<Xiangqi>(XIANGQI_GAME));
}

#[test]
fn checkers_and_draughts_pictures_read_back_to_the_position() {
    check_numbered(&Checkers::start(), 32);
    check_numbered(&play::<Checkers>(CHECKERS_GAME), 32);
    check_numbered(&Draughts::start(), 50);
    check_numbered(&play::<Draughts>(DRAUGHTS_GAME), 50);
    // A king looks different and reads back as one.
    let kings = Checkers::parse_position("W:WK10,22:BK27,3", None).expect("fen");
    check_numbered(&kings, 32);
    let svg = draw(&kings);
    assert_eq!(svg.matches("data-piece=\"WK\"").count(), 1);
    assert_eq!(svg.matches("data-piece=\"BK\"").count(), 1);
    let draughts_kings = Draughts::parse_position("B:WK46,31:BK5,20", None).expect("fen");
    check_numbered(&draughts_kings, 50);
}

/// Hive: the test's own model of where each piece went, from the move strings alone (UHP's relative
/// positions), compared with the picture's cells, stacks and hands.
fn check_hive(moves: &[&str]) {
    let g = play::<Hive>(moves);
    let position = g.format_position(None).expect("gamestring");
    let svg = draw(&g);
    let all = tags(&svg);
    assert_eq!(all[0].get("data-game"), Some("hive"));
    assert_eq!(all[0].get("data-position"), Some(position.as_str()));
    // The model: each piece's hex, each hex's stack from the bottom up.
    let mut at: HashMap<String, (i32, i32)> = HashMap::new();
    let mut stacks: BTreeMap<(i32, i32), Vec<String>> = BTreeMap::new();
    for mv in moves {
        let mut words = mv.split_whitespace();
        let piece = words.next().expect("piece").to_string();
        let hex = match words.next() {
            None => (0, 0),
            Some(target) => {
                let (dir, name) = match (target.chars().next(), target.chars().last()) {
                    (Some(c @ ('-' | '/' | '\\')), _) => (Some((c, true)), &target[1..]),
                    (_, Some(c @ ('-' | '/' | '\\'))) => (Some((c, false)), &target[..target.len() - 1]),
                    _ => (None, target),
                };
                let (q, r) = at[name];
                match dir {
                    None => (q, r),
                    Some(('-', false)) => (q + 1, r),
                    Some(('/', false)) => (q + 1, r - 1),
                    Some(('\\', false)) => (q, r + 1),
                    Some(('-', true)) => (q - 1, r),
                    Some(('/', true)) => (q - 1, r + 1),
                    Some(('\\', true)) => (q, r - 1),
                    Some(_) => unreachable!(),
                }
            }
        };
        if let Some(old) = at.insert(piece.clone(), hex) {
            let s = stacks.get_mut(&old).expect("old stack");
            assert_eq!(s.pop().as_deref(), Some(piece.as_str()), "only a top piece moves");
            if s.is_empty() {
                stacks.remove(&old);
            }
        }
        stacks.entry(hex).or_default().push(piece);
    }
    // The picture: pieces, cells, hands.
    let mut drawn: BTreeMap<(i32, i32), (String, usize, String)> = BTreeMap::new();
    let mut cells = BTreeSet::new();
    let mut hand = BTreeSet::new();
    let hex_of = |t: &Tag| {
        let text = t.get("data-hex").expect("data-hex");
        let (q, r) = text.split_once(',').expect("q,r");
        (q.parse::<i32>().expect("q"), r.parse::<i32>().expect("r"))
    };
    for t in &all {
        if let Some(code) = t.get("data-hand") {
            assert!(hand.insert(code.to_string()), "{code} twice in hand");
        } else if let Some(code) = t.get("data-piece") {
            let h = t.get("data-height").expect("data-height").parse::<usize>().expect("height");
            let below = t.get("data-below").unwrap_or("").to_string();
            assert!(drawn.insert(hex_of(t), (code.to_string(), h, below)).is_none(), "two tops on one hex");
        } else if t.get("data-hex").is_some() {
            assert!(cells.insert(hex_of(t)), "cell twice");
        }
    }
    let expected: BTreeMap<(i32, i32), (String, usize, String)> = stacks
        .iter()
        .map(|(&hex, s)| (hex, (s.last().expect("top").clone(), s.len(), s[..s.len() - 1].join(" "))))
        .collect();
    assert_eq!(drawn, expected, "{position}");
    // Every occupied cell and every empty cell next to one, nothing else.
    let mut want = BTreeSet::new();
    for &(q, r) in stacks.keys() {
        want.insert((q, r));
        for (dq, dr) in [(1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1)] {
            want.insert((q + dq, r + dr));
        }
    }
    if want.is_empty() {
        want.insert((0, 0));
    }
    assert_eq!(cells, want);
    let mut all_pieces = BTreeSet::new();
    for c in ["w", "b"] {
        for p in ["Q", "S1", "S2", "B1", "B2", "G1", "G2", "G3", "A1", "A2", "A3", "M", "L", "P"] {
            all_pieces.insert(format!("{c}{p}"));
        }
    }
    let placed: BTreeSet<String> = at.keys().cloned().collect();
    assert_eq!(hand, all_pieces.difference(&placed).cloned().collect::<BTreeSet<_>>());
}

#[test]
fn hive_pictures_read_back_to_the_position() {
    check_hive(&[]);
    check_hive(&HIVE_GAME[..1]);
    check_hive(&HIVE_GAME[..7]);
    check_hive(HIVE_GAME);
    // Two beetles on one stack: three high.
    let svg = draw(&play::<Hive>(HIVE_GAME));
    assert!(svg.contains("data-height=\"2\""), "{svg}");
}

#[test]
fn flipped_pictures_keep_their_squares_and_pieces() {
    let g = play::<Chess>(&CHESS_GAME[..6]);
    let flat = picture::render(&g, None, &[], Options { flip: false, size: 400 });
    let turned = picture::render(&g, None, &[], Options { flip: true, size: 400 });
    let a = read(&flat, "chess", &g.format_position(None).expect("fen"), false);
    let b = read(&turned, "chess", &g.format_position(None).expect("fen"), true);
    assert_eq!(a.pieces, b.pieces);
    // a1 is at the bottom left, then at the top right.
    let (x1, y1) = (a.squares["a1"].num("x"), a.squares["a1"].num("y"));
    let (x2, y2) = (b.squares["a1"].num("x"), b.squares["a1"].num("y"));
    assert!(x1 < x2 && y1 > y2, "{x1},{y1} {x2},{y2}");
    assert_eq!(a.root.get("width"), Some("400"));
}

#[test]
fn last_move_and_arrows_are_marked() {
    let before = Chess::start();
    let m = before.parse_move("e2e4").expect("move");
    let mut after = before.clone();
    after.make(m);
    let reply = after.parse_move("e7e5").expect("move");
    let mut next = after.clone();
    next.make(reply);
    let knight = next.parse_move("g1f3").expect("move");
    let svg = picture::render(&after, Some((&before, m)), &[reply, knight], Options::default());
    let all = tags(&svg);
    let marked: BTreeSet<&str> =
        all.iter().filter(|t| t.get("class") == Some("last-move")).filter_map(|t| t.get("data-square")).collect();
    assert_eq!(marked, BTreeSet::from(["e2", "e4"]));
    let arrows: Vec<&str> =
        all.iter().filter(|t| t.get("class") == Some("arrow")).filter_map(|t| t.get("data-move")).collect();
    assert_eq!(arrows, ["e7e5", "g1f3"]);
    // A multiple capture: the arrow passes through every landing square.
    let g = Checkers::parse_position("B:W10,19,27:B1,15", None).expect("fen");
    let jump = g.parse_move("15x24x31").expect("move");
    let text = g.format_move(jump);
    let svg = picture::render(&g, None, &[jump], Options::default());
    assert!(svg.contains(&format!("class=\"arrow\" data-move=\"{text}\"")), "{svg}");
    let polyline = tags(&svg).into_iter().find(|t| t.name == "polyline").expect("arrow shaft");
    assert_eq!(polyline.get("points").expect("points").split(' ').count(), text.split('x').count());
    // Hive: a placement is a ring on the cell it goes to, a movement an arrow from its cell.
    let g = play::<Hive>(&HIVE_GAME[..6]);
    let place = g.parse_move("wG1 /wS1").expect("placement");
    let svg = picture::render(&g, None, &[place], Options::default());
    assert_eq!(svg.matches("class=\"arrow\"").count(), 1);
    assert!(svg.contains("data-hex=\"-1,1\""), "the target cell is drawn");
}

// ---- pixels ----

/// The picture rendered by resvg (shapes only: resvg is built without text support).
struct Pixels {
    pixmap: resvg::tiny_skia::Pixmap,
    scale: f64,
}

impl Pixels {
    fn of(svg: &str) -> Pixels {
        let tree = resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default()).expect("resvg reads the SVG");
        let size = tree.size().to_int_size();
        let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).expect("pixmap");
        resvg::render(&tree, resvg::tiny_skia::Transform::default(), &mut pixmap.as_mut());
        let root = &tags(svg)[0];
        let view_width: f64 = root.get("viewBox").expect("viewBox").split(' ').nth(2).expect("w").parse().expect("w");
        Pixels { scale: size.width() as f64 / view_width, pixmap }
    }

    /// The colour at a point of the picture's own coordinates.
    fn at(&self, (x, y): (f64, f64)) -> (u8, u8, u8) {
        let p = self.pixmap.pixel((x * self.scale) as u32, (y * self.scale) as u32).expect("inside").demultiply();
        (p.red(), p.green(), p.blue())
    }
}

fn rgb(hex: &str) -> (u8, u8, u8) {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).expect("hex colour");
    ((v >> 16) as u8, (v >> 8) as u8, v as u8)
}

fn assert_colour(got: (u8, u8, u8), want: &str, what: &str) {
    let w = rgb(want);
    let close = |a: u8, b: u8| a.abs_diff(b) <= 6;
    assert!(close(got.0, w.0) && close(got.1, w.1) && close(got.2, w.2), "{what}: {got:?}, expected {want}");
}

/// The centre of a square (rect or polygon) read from its attributes.
fn centre(t: &Tag) -> (f64, f64) {
    if let Some(points) = t.get("points") {
        let pts: Vec<(f64, f64)> = points
            .split(' ')
            .map(|p| {
                let (x, y) = p.split_once(',').expect("x,y");
                (x.parse().expect("x"), y.parse().expect("y"))
            })
            .collect();
        let n = pts.len() as f64;
        (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n)
    } else {
        (t.num("x") + t.num("width") / 2.0, t.num("y") + t.num("height") / 2.0)
    }
}

fn below((x, y): (f64, f64), dy: f64) -> (f64, f64) {
    (x, y + dy)
}

#[test]
fn pictures_render_with_pieces_where_the_position_says() {
    // Chess: a white piece, a black piece, an empty square, the last move's squares highlighted.
    let before = Chess::start();
    let m = before.parse_move("e2e4").expect("move");
    let mut g = before.clone();
    g.make(m);
    let svg = picture::render(&g, Some((&before, m)), &[], Options::default());
    let r = read(&svg, "chess", &g.format_position(None).expect("fen"), false);
    assert_eq!(r.pieces.len(), 32);
    let px = Pixels::of(&svg);
    // Below the letter, inside the disc.
    assert_colour(px.at(below(centre(&r.squares["d1"]), 18.0)), picture::LIGHT_PIECE, "white queen");
    assert_colour(px.at(below(centre(&r.squares["d8"]), 18.0)), picture::DARK_PIECE, "black queen");
    let d4 = r.squares["d4"].get("fill").expect("fill").to_string();
    assert_colour(px.at(centre(&r.squares["d4"])), &d4, "empty d4");
    let e2 = px.at(centre(&r.squares["e2"]));
    assert!(e2.0 > 180 && e2.1 > 150 && e2.2 < 100, "e2 is highlighted: {e2:?}");

    // Checkers and draughts: men of both colours, a king's ring, an empty dark square.
    let g = Checkers::parse_position("B:WK10,22:B1,15", None).expect("fen");
    let svg = draw(&g);
    let r = read(&svg, "checkers", &g.format_position(None).expect("fen"), false);
    let px = Pixels::of(&svg);
    assert_colour(px.at(centre(&r.squares["22"])), picture::LIGHT_PIECE, "white man");
    assert_colour(px.at(centre(&r.squares["1"])), picture::DARK_PIECE, "black man");
    assert_colour(px.at(centre(&r.squares["10"])), picture::LIGHT_PIECE, "white king's centre");
    assert_colour(px.at(below(centre(&r.squares["10"]), 0.62 * 0.38 * 60.0)), "#d4a017", "white king's ring");
    assert_colour(px.at(centre(&r.squares["18"])), "#7a5230", "empty dark square");
    assert_eq!(r.pieces.len(), 4);
    let g = play::<Draughts>(DRAUGHTS_GAME);
    let svg = draw(&g);
    let r = read(&svg, "draughts", &g.format_position(None).expect("fen"), false);
    let px = Pixels::of(&svg);
    for sq in 1..=50 {
        let name = sq.to_string();
        let want = match r.pieces.get(&name).map(String::as_str) {
            Some("W") => picture::LIGHT_PIECE,
            Some("B") => picture::DARK_PIECE,
            Some(other) => panic!("{other} in the middlegame"),
            None => "#7a5230",
        };
        assert_colour(px.at(centre(&r.squares[&name])), want, &name);
    }

    // Xiangqi: red and black discs on the points, the wood between the lines.
    let g = play::<Xiangqi>(XIANGQI_GAME);
    let svg = draw(&g);
    let r = read(&svg, "xiangqi", &g.format_position(None).expect("fen"), false);
    let px = Pixels::of(&svg);
    assert_eq!(r.pieces.len(), 31);
    for (sq, code) in &r.pieces {
        let want = if code.chars().all(|c| c.is_ascii_uppercase()) { picture::RED_PIECE } else { picture::DARK_PIECE };
        assert_colour(px.at(below(centre(&r.squares[sq]), 18.0)), want, sq);
    }
    let (x, y) = centre(&r.squares["e4"]);
    assert_colour(px.at((x + 15.0, y + 15.0)), "#eed29f", "between the lines");

    // Hive: tiles of each side's colour, the bug's disc, the empty cells, the pieces in hand.
    let g = play::<Hive>(HIVE_GAME);
    let svg = draw(&g);
    let all = tags(&svg);
    let px = Pixels::of(&svg);
    let cells: HashMap<&str, &Tag> = all
        .iter()
        .filter(|t| t.get("data-piece").is_none() && t.get("data-hex").is_some())
        .map(|t| (t.get("data-hex").unwrap_or(""), t))
        .collect();
    let mut tops = 0;
    for t in all.iter().filter(|t| t.get("data-piece").is_some()) {
        tops += 1;
        let code = t.get("data-piece").expect("code");
        let c = centre(cells[t.get("data-hex").expect("hex")]);
        let side = if code.starts_with('w') { picture::LIGHT_PIECE } else { picture::DARK_PIECE };
        assert_colour(px.at(below(c, 34.0 * 0.72)), side, code);
        if code.contains('B') {
            assert_colour(px.at(below(c, 34.0 * 0.3)), "#7b4fa0", "a beetle's disc");
        }
    }
    assert_eq!(tops, 6, "wB1 tops wQ, bB1 tops bQ");
    let empty: Vec<&&Tag> = cells.values().filter(|t| t.get("fill") == Some("#e6dfcf")).collect();
    assert!(!empty.is_empty());
    for t in empty {
        let hex = t.get("data-hex").expect("hex");
        if all.iter().any(|p| p.get("data-piece").is_some() && p.get("data-hex") == Some(hex)) {
            continue;
        }
        assert_colour(px.at(centre(t)), "#e6dfcf", hex);
    }
    assert_eq!(all.iter().filter(|t| t.get("data-hand").is_some()).count(), 28 - 8);
}

// ---- the endpoint and the command ----

fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[test]
fn the_endpoint_draws_every_game_and_names_bad_input() {
    let server = Server::start(&[]);
    let cases: [(&str, &[&str]); 5] = [
        ("checkers", CHECKERS_GAME),
        ("draughts", DRAUGHTS_GAME),
        ("hive", HIVE_GAME),
        ("xiangqi", XIANGQI_GAME),
        ("chess", CHESS_GAME),
    ];
    for (game, moves) in cases {
        let r = server.get(&format!("/v1/board.svg?game={game}"));
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.content_type(), "image/svg+xml");
        assert!(r.text().starts_with("<svg "), "{}", r.text());
        // Opened in a browser directly: not sniffed, and allowed to run nothing.
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        assert!(r.header("content-security-policy").is_some_and(|c| c.starts_with("default-src 'none'")));
        let list = encode(&moves.join(","));
        let r = server.get(&format!("/v1/board.svg?game={game}&moves={list}&flip=true&size=300"));
        assert_eq!(r.status, 200, "{game}: {}", r.text());
        let root = tags(&r.text())[0].clone();
        assert_eq!(root.get("data-flipped"), Some("true"));
        assert_eq!(root.get("width"), Some("300"));
        // The position it reports is the one the moves reach, and drawing that position gives the same board.
        let position = root.get("data-position").expect("position").to_string();
        let again = server.get(&format!("/v1/board.svg?game={game}&position={}&flip=true&size=300", encode(&position)));
        assert_eq!(again.status, 200, "{}", again.text());
        assert_eq!(piece_places(&r.text()), piece_places(&again.text()), "{game}");
    }
    // An illegal move is named with its index and text.
    let r = server.get("/v1/board.svg?game=chess&moves=e2e4,e2e4");
    let p = r.problem(422);
    assert_eq!(p["field"], "moves[1]", "{p}");
    assert_eq!(p["token"], "e2e4", "{p}");
    let p = server.get("/v1/board.svg?game=chess&arrows=e2e5").problem(422);
    assert_eq!(p["field"], "arrows[0]", "{p}");
    for size in ["99", "2001", "abc", "-5"] {
        let p = server.get(&format!("/v1/board.svg?game=chess&size={size}")).problem(422);
        assert_eq!(p["field"], "size", "{p}");
    }
    let p = server.get("/v1/board.svg?game=chess&position=nonsense").problem(422);
    assert_eq!(p["field"], "position", "{p}");
    let p = server.get("/v1/board.svg?game=go").problem(422);
    assert_eq!(p["field"], "game", "{p}");
    let p = server.get("/v1/board.svg?game=chess&colour=red").problem(422);
    assert_eq!(p["field"], "colour", "{p}");
    // Arrows and the last move in the answer.
    let r = server.get("/v1/board.svg?game=chess&moves=e2e4&arrows=e7e5,g1f3");
    assert_eq!(r.status, 200);
    let text = r.text();
    assert_eq!(text.matches("class=\"arrow\"").count(), 2);
    assert_eq!(text.matches("class=\"last-move\"").count(), 2);
}

#[test]
fn the_board_command_writes_the_picture() {
    let kibitz = env!("CARGO_BIN_EXE_kibitz");
    let out = Command::new(kibitz).args(["board", "xiangqi", "--moves", "h2e2,h9g7"]).output().expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = String::from_utf8(out.stdout).expect("utf-8");
    let g = play::<Xiangqi>(&["h2e2", "h9g7"]);
    read(&svg, "xiangqi", &g.format_position(None).expect("fen"), false);
    assert_eq!(svg.matches("class=\"last-move\"").count(), 2);

    let dir = TempDir::new("board");
    let file = dir.path().join("hive.svg");
    let out = Command::new(kibitz)
        .args([
            "board",
            "hive",
            "--moves",
            &HIVE_GAME.join(","),
            "--arrows",
            "wA1 -wB1",
            "--flip",
            "--size",
            "640",
            "-o",
        ])
        .arg(&file)
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty());
    let svg = std::fs::read_to_string(&file).expect("written");
    let root = tags(&svg)[0].clone();
    assert_eq!(root.get("data-flipped"), Some("true"));
    assert_eq!(root.get("width"), Some("640"));

    let out = Command::new(kibitz).args(["board", "chess", "--moves", "e2e4,e2e4"]).output().expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--moves") && err.contains("e2e4"), "{err}");
    let out = Command::new(kibitz).args(["board", "chess", "--size", "50"]).output().expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--size"));
}

/// The pieces of a picture with their places and attributes (marks left out).
fn piece_places(svg: &str) -> BTreeSet<String> {
    tags(svg)
        .into_iter()
        .filter(|t| t.get("data-piece").is_some() || t.get("data-hand").is_some())
        .map(|t| {
            let mut v: Vec<_> = t.attrs.into_iter().filter(|(k, _)| k.starts_with("data-")).collect();
            v.sort();
            format!("{v:?}")
        })
        .collect()
}

fn check_doc<G: Game>() {
    let path = format!("{}/docs/board-{}.svg", env!("CARGO_MANIFEST_DIR"), G::NAME);
    let svg = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let root = tags(&svg)[0].clone();
    assert_eq!(root.get("data-game"), Some(G::NAME));
    let position = root.get("data-position").expect("data-position");
    let g = G::parse_position(position, None).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(piece_places(&svg), piece_places(&draw(&g)), "{path} is stale: regenerate it with `kibitz board`");
    assert!(svg.contains("class=\"arrow\"") && svg.contains("class=\"last-move\""), "{path}");
}

#[test]
fn the_pictures_in_the_readme_show_their_positions() {
    check_doc::<Checkers>();
    check_doc::<Draughts>();
    check_doc::<Hive>();
    check_doc::<Xiangqi>();
    check_doc::<Chess>();
}
