#!/usr/bin/env python3
"""Legal moves of xiangqi positions according to Fairy-Stockfish (Debian: `apt-get install fairy-stockfish`).

Prints one position a line: its FEN as Fairy-Stockfish writes it, a tab, then every legal move, space
separated and sorted, in coordinates with ranks 0-9 from Red's side (`h2e2`; Fairy-Stockfish itself counts
ranks 1-10). Comment lines start with `#`.

Positions come from random games from the start position and from random placements of a few pieces on
points they can reach (generals in their palaces, often on one file; chariots and cannons on open lines), so
that checks, pins, flying-general situations and cannon screens are frequent. A placement whose side not to
move is in check is dropped. Usage:

    xiangqi_fairy_stockfish.py [--seed N] [--games N] [--placements N] [--engine PATH]
    xiangqi_fairy_stockfish.py --perft FEN DEPTH    (leaf count)
"""

import argparse
import os
import random
import shutil
import subprocess
import sys

FILES = "abcdefghi"


class Engine:
    def __init__(self, path):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.send("uci")
        self.until("uciok")
        self.send("setoption name UCI_Variant value xiangqi")
        self.send("isready")
        self.until("readyok")

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def until(self, prefix):
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("fairy-stockfish closed its output")
            line = line.rstrip("\n")
            lines.append(line)
            if line.startswith(prefix):
                return lines

    def position(self, fen, moves=()):
        cmd = "position fen " + fen
        if moves:
            cmd += " moves " + " ".join(moves)
        self.send(cmd)

    def legal(self, fen):
        """Legal moves in Fairy-Stockfish's notation (ranks 1-10)."""
        self.position(fen)
        self.send("go perft 1")
        out = []
        for line in self.until("Nodes searched"):
            if ":" in line and not line.startswith("Nodes"):
                out.append(line.split(":")[0].strip())
        return out

    def perft(self, fen, depth):
        self.position(fen)
        self.send("go perft %d" % depth)
        last = self.until("Nodes searched")[-1]
        return int(last.split(":")[1])

    def display(self, fen, moves=()):
        """(FEN, checkers) after the moves."""
        self.position(fen, moves)
        self.send("d")
        fen_out, checkers = None, ""
        for line in self.until("Checkers"):
            if line.startswith("Fen:"):
                fen_out = line[4:].strip()
            if line.startswith("Checkers:"):
                checkers = line[9:].strip()
        return fen_out, checkers

    def close(self):
        self.send("quit")
        self.p.wait(timeout=10)


def to_ours(move):
    """`h3e3` (ranks 1-10) to `h2e2` (ranks 0-9)."""
    i = 1
    while move[i].isdigit():
        i += 1
    return "%s%d%s%d" % (move[0], int(move[1:i]) - 1, move[i], int(move[i + 1:]) - 1)


def emit(engine, fen, seen):
    key = " ".join(fen.split()[:2])
    if key in seen:
        return []
    seen.add(key)
    moves = engine.legal(fen)
    print("%s\t%s" % (fen, " ".join(sorted(to_ours(m) for m in moves))))
    return moves


def random_game(engine, rng, seen, start, max_plies):
    fen = start
    for _ in range(max_plies):
        moves = emit(engine, fen, seen) or engine.legal(fen)
        if not moves:
            break
        fen, _ = engine.display(fen, [rng.choice(moves)])


PALACE = [[(f, r) for f in (3, 4, 5) for r in (0, 1, 2)], [(f, r) for f in (3, 4, 5) for r in (7, 8, 9)]]
ADVISOR = [[(3, 0), (5, 0), (4, 1), (3, 2), (5, 2)], [(3, 9), (5, 9), (4, 8), (3, 7), (5, 7)]]
ELEPHANT = [[(2, 0), (6, 0), (0, 2), (4, 2), (8, 2), (2, 4), (6, 4)],
            [(2, 9), (6, 9), (0, 7), (4, 7), (8, 7), (2, 5), (6, 5)]]
ANY = [(f, r) for f in range(9) for r in range(10)]


def soldier_points(side):
    own = [(f, r) for f in (0, 2, 4, 6, 8) for r in ((3, 4) if side == 0 else (5, 6))]
    across = [(f, r) for f in range(9) for r in (range(5, 10) if side == 0 else range(0, 5))]
    return own + across


def random_placement(rng):
    board = {}

    def place(letter, points):
        free = [p for p in points if p not in board]
        if free:
            board[rng.choice(free)] = letter

    # Generals on one file half of the time, so that the flying-general rule matters.
    if rng.random() < 0.5:
        f = rng.choice((3, 4, 5))
        board[(f, rng.choice((0, 1, 2)))] = "K"
        board[(f, rng.choice((7, 8, 9)))] = "k"
    else:
        place("K", PALACE[0])
        place("k", PALACE[1])
    for side in (0, 1):
        up = (lambda c: c.upper()) if side == 0 else (lambda c: c)
        for _ in range(rng.choice((0, 0, 1, 2))):
            place(up("a"), ADVISOR[side])
        for _ in range(rng.choice((0, 0, 1, 2))):
            place(up("b"), ELEPHANT[side])
        for letter in "nrc":
            for _ in range(rng.choice((0, 0, 1, 1, 2))):
                place(up(letter), ANY)
        for _ in range(rng.choice((0, 1, 2, 3, 5))):
            place(up("p"), soldier_points(side))
    rows = []
    for r in range(9, -1, -1):
        row, empty = "", 0
        for f in range(9):
            c = board.get((f, r))
            if c is None:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += c
        if empty:
            row += str(empty)
        rows.append(row)
    return "/".join(rows), board


def generals_face(board):
    red = next(p for p, c in board.items() if c == "K")
    black = next(p for p, c in board.items() if c == "k")
    if red[0] != black[0]:
        return False
    return not any((red[0], r) in board for r in range(red[1] + 1, black[1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perft", nargs=2, metavar=("FEN", "DEPTH"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--placements", type=int, default=150)
    ap.add_argument("--max-plies", type=int, default=100)
    ap.add_argument("--engine", default=shutil.which("fairy-stockfish") or "/usr/games/fairy-stockfish")
    args = ap.parse_args()
    if not os.path.exists(args.engine):
        sys.exit("fairy-stockfish not found (apt-get install fairy-stockfish)")
    engine = Engine(args.engine)
    if args.perft:
        for depth in range(1, int(args.perft[1]) + 1):
            print("%d %d" % (depth, engine.perft(args.perft[0], depth)))
        engine.close()
        return
    rng = random.Random(args.seed)
    seen = set()
    print("# xiangqi_fairy_stockfish.py --seed %d --games %d --placements %d --max-plies %d"
          % (args.seed, args.games, args.placements, args.max_plies))
    start = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
    for _ in range(args.games):
        random_game(engine, rng, seen, start, args.max_plies)
    made = 0
    while made < args.placements:
        placement, board = random_placement(rng)
        if generals_face(board):
            continue
        side = rng.choice("wb")
        other = "b" if side == "w" else "w"
        # The side not to move may not be in check.
        _, checkers = engine.display("%s %s - - 0 1" % (placement, other))
        if checkers:
            continue
        made += 1
        fen = "%s %s - - 0 1" % (placement, side)
        # A few random moves on from there too.
        for _ in range(rng.randint(1, 5)):
            moves = emit(engine, fen, seen)
            if not moves:
                break
            fen, _ = engine.display(fen, [rng.choice(moves)])
    engine.close()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
