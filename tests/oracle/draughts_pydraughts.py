#!/usr/bin/env python3
"""Legal moves of international draughts positions according to an independent Python library.

Two libraries install the same module name `draughts`, so only one of them can be importable at a time
(set DRAUGHTS_ORACLE_PATH to a `pip install --target` directory to pick one without touching the other):

* py-draughts (`pip install py-draughts`): `StandardBoard.from_fen`, `board.legal_moves` (one move per
  start, end and captured set, as the FMJD rules say);
* pydraughts (`pip install pydraughts`): `Board(variant="standard", fen=...)`, `board.legal_moves()`, which
  lists every capture path: moves with the same start, end and captured set are merged here.

Prints one position a line: the PDN FEN, a tab, then every legal move, space separated and sorted, each as
`<from>-<to>:` for a step or `<from>x<to>:<captured squares ascending, comma separated>:<one full path>` for a
capture (`26x48:31,42:26x37x48`). Comment lines start with `#`.

Positions come from random games from the start and from random placements (men never on their crowning
row), with a few random moves on from each, so that kings, long captures and choices between captures of
the same size appear often. Usage:

    draughts_pydraughts.py [--seed N] [--games N] [--placements N] [--max-plies N]
    draughts_pydraughts.py --fens FILE          (the positions of FILE, e.g. to compare the two libraries)
    draughts_pydraughts.py --perft FEN DEPTH    (leaf count; slow)
"""

import argparse
import os
import random
import sys

# The two libraries cannot share one site-packages: DRAUGHTS_ORACLE_PATH may name a directory where one of
# them was installed on its own (`pip install --target DIR py-draughts`).
if os.environ.get("DRAUGHTS_ORACLE_PATH"):
    sys.path.insert(0, os.environ["DRAUGHTS_ORACLE_PATH"])

import draughts  # noqa: E402

if hasattr(draughts, "StandardBoard"):
    LIB = "py-draughts"
else:
    LIB = "pydraughts"


def version():
    if getattr(draughts, "__version__", None):
        return draughts.__version__
    try:
        from importlib.metadata import version as v
        return v(LIB)
    except Exception:  # only informative
        return "?"


class Position:
    """The little both libraries are asked: FEN, legal moves (start, end, captured set, one path), play."""

    def __init__(self, fen=None):
        if LIB == "py-draughts":
            self.b = draughts.StandardBoard.from_fen(fen) if fen else draughts.StandardBoard()
        else:
            if fen:
                self.b = draughts.Board(variant="standard", fen=fen)
            else:
                self.b = draughts.Board(variant="standard")

    def fen(self):
        f = self.b.fen
        if f.startswith("[FEN"):
            f = f.split('"')[1]
        return f

    def moves(self):
        """[(key, path string, library move)], one per (start, end, captured set)."""
        out = {}
        if LIB == "py-draughts":
            for m in self.b.legal_moves:
                path = [s + 1 for s in m.square_list]
                caps = sorted(c + 1 for c in m.captured_list)
                out.setdefault(key(path, caps), (path_text(path, caps), m))
        else:
            for m in self.b.legal_moves():
                steps = m.board_move
                path = [steps[0][0]] + [step[1] for step in steps]
                caps = sorted(c for c in (m.captures or []) if c is not None)
                out.setdefault(key(path, caps), (path_text(path, caps), m))
        return [(k, p, m) for k, (p, m) in out.items()]

    def push(self, m):
        self.b.push(m)


def key(path, caps):
    if caps:
        return "%dx%d:%s" % (path[0], path[-1], ",".join(str(c) for c in caps))
    return "%d-%d:" % (path[0], path[-1])


def path_text(path, caps):
    return "x".join(str(s) for s in path) if caps else "%d-%d" % (path[0], path[-1])


def move_line(pos):
    out = []
    for k, p, _ in pos.moves():
        out.append(k + ":" + p if k.split(":")[1] else k)
    return " ".join(sorted(out))


def emit(pos, seen):
    fen = pos.fen()
    if fen in seen:
        return
    seen.add(fen)
    print("%s\t%s" % (fen, move_line(pos)))


def random_game(rng, seen, max_plies):
    pos = Position()
    for _ in range(max_plies):
        emit(pos, seen)
        moves = pos.moves()
        if not moves:
            break
        pos.push(rng.choice(moves)[2])


def random_placement(rng):
    squares = list(range(1, 51))
    rng.shuffle(squares)
    nw = rng.randint(1, 14)
    nb = rng.randint(1, 14)
    kings = rng.choice([0.0, 0.15, 0.5])
    white, black = [], []
    for sq in squares:
        if len(white) < nw:
            king = rng.random() < kings or sq <= 5
            white.append(("K" if king else "") + str(sq))
        elif len(black) < nb:
            king = rng.random() < kings or sq >= 46
            black.append(("K" if king else "") + str(sq))
        else:
            break
    side = rng.choice("WB")
    return "%s:W%s:B%s" % (side, ",".join(white), ",".join(black))


def perft(pos, depth):
    moves = pos.moves()
    if depth <= 1:
        return len(moves) if depth == 1 else 1
    n = 0
    for _, _, m in moves:
        child = Position(pos.fen())
        child.push(m)
        n += perft(child, depth - 1)
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perft", nargs=2, metavar=("FEN", "DEPTH"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--games", type=int, default=3)
    ap.add_argument("--placements", type=int, default=300)
    ap.add_argument("--max-plies", type=int, default=150)
    ap.add_argument("--fens", metavar="FILE", help="list these positions (first tab-separated field a line)")
    args = ap.parse_args()
    if args.fens:
        with open(args.fens) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    fen = line.split("\t")[0].strip()
                    print("%s\t%s" % (fen, move_line(Position(fen))))
        return
    if args.perft:
        pos = Position(args.perft[0])
        for depth in range(1, int(args.perft[1]) + 1):
            print("%d %d" % (depth, perft(pos, depth)))
        return
    rng = random.Random(args.seed)
    seen = set()
    print("# draughts_pydraughts.py --seed %d --games %d --placements %d --max-plies %d (%s %s)"
          % (args.seed, args.games, args.placements, args.max_plies, LIB, version()))
    for _ in range(args.games):
        random_game(rng, seen, args.max_plies)
    for _ in range(args.placements):
        pos = Position(random_placement(rng))
        emit(pos, seen)
        # A few random moves on from there, to reach positions after captures and crownings.
        for _ in range(rng.randint(0, 5)):
            moves = pos.moves()
            if not moves:
                break
            pos.push(rng.choice(moves)[2])
            emit(pos, seen)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
