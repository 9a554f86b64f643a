#!/usr/bin/env python3
"""Legal moves of English checkers positions according to pydraughts (`pip install pydraughts`).

Prints one position a line: the PDN FEN as pydraughts writes it, a tab, then every legal move, space
separated and sorted, each as its full path (`9-13` for a simple move, every landing square of a jump
`11x18x25`), a colon and the captured squares ascending (`11x18x25:15,22`; nothing after the colon for a
simple move). Comment lines start with `#`.

Positions come from random games from the start and from random legal-looking placements (men never on their
crowning row), so that kings, multi-jumps and crowning jumps appear often. Usage:

    checkers_pydraughts.py [--seed N] [--games N] [--placements N]
    checkers_pydraughts.py --perft FEN DEPTH    (leaf count, every jump path counted; slow)
"""

import argparse
import random
import sys

from draughts import Board


def move_line(board):
    out = []
    for m in board.legal_moves():
        steps = m.board_move
        caps = sorted(c for c in (m.captures or []) if c is not None)
        if caps:
            path = "x".join(str(s) for s in [steps[0][0]] + [step[1] for step in steps])
        else:
            path = "%d-%d" % (steps[0][0], steps[-1][1])
        out.append("%s:%s" % (path, ",".join(str(c) for c in caps)))
    return " ".join(sorted(out))


def emit(board, seen):
    fen = board.fen
    if fen in seen:
        return
    seen.add(fen)
    print("%s\t%s" % (fen, move_line(board)))


def random_game(rng, seen, max_plies):
    board = Board(variant="english")
    for _ in range(max_plies):
        emit(board, seen)
        moves = board.legal_moves()
        if not moves:
            break
        board.push(rng.choice(moves))


def random_placement(rng):
    squares = list(range(1, 33))
    rng.shuffle(squares)
    nb = rng.randint(1, 12)
    nw = rng.randint(1, 12)
    black, white = [], []
    for sq in squares:
        if len(black) < nb:
            king = rng.random() < 0.4 or sq >= 29
            black.append(("K" if king else "") + str(sq))
        elif len(white) < nw:
            king = rng.random() < 0.4 or sq <= 4
            white.append(("K" if king else "") + str(sq))
        else:
            break
    side = rng.choice("BW")
    return "%s:W%s:B%s" % (side, ",".join(white), ",".join(black))


def perft(board, depth):
    moves = board.legal_moves()
    if depth <= 1:
        return len(moves) if depth == 1 else 1
    n = 0
    for m in moves:
        board.push(m)
        n += perft(board, depth - 1)
        board.pop()
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perft", nargs=2, metavar=("FEN", "DEPTH"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--placements", type=int, default=150)
    ap.add_argument("--max-plies", type=int, default=120)
    args = ap.parse_args()
    if args.perft:
        board = Board(variant="english", fen=args.perft[0])
        for depth in range(1, int(args.perft[1]) + 1):
            print("%d %d" % (depth, perft(board, depth)))
        return
    rng = random.Random(args.seed)
    seen = set()
    try:
        from importlib.metadata import version
        pyd = version("pydraughts")
    except Exception:  # the version is only informative
        pyd = "?"
    print("# checkers_pydraughts.py --seed %d --games %d --placements %d --max-plies %d (pydraughts %s)"
          % (args.seed, args.games, args.placements, args.max_plies, pyd))
    for _ in range(args.games):
        random_game(rng, seen, args.max_plies)
    for _ in range(args.placements):
        board = Board(variant="english", fen=random_placement(rng))
        emit(board, seen)
        # A few random moves on from there too, to reach positions after jumps and crownings.
        for _ in range(rng.randint(0, 6)):
            moves = board.legal_moves()
            if not moves:
                break
            board.push(rng.choice(moves))
            emit(board, seen)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
