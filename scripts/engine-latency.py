#!/usr/bin/env python3
"""The latency kibitz adds to an external engine (issue 13): `go depth 1` answered by Stockfish alone over its
pipes, against `POST /v1/analysis` at depth 1 through a kibitz server that has Stockfish as its chess engine
(`"cache": "refresh"`, so every request reaches the engine). Prints the median and p99 of each and their
difference. Standard library only.

    scripts/engine-latency.py --kibitz target/release/kibitz --engine /usr/games/stockfish [--n 300]
"""
import argparse, json, os, statistics, subprocess, tempfile, time, urllib.request


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def alone(engine, n):
    proc = subprocess.Popen([engine], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    def say(line):
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    def until(prefix):
        while True:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit("the engine died")
            if line.startswith(prefix):
                return line
    say("uci"); until("uciok")
    say("setoption name Threads value 1"); say("setoption name Hash value 16")
    say("isready"); until("readyok")
    times = []
    for _ in range(n):
        start = time.perf_counter()
        say("position startpos moves e2e4 e7e5")
        say("go depth 1")
        until("bestmove")
        times.append((time.perf_counter() - start) * 1000)
    say("quit")
    proc.wait(5)
    return times


def through_kibitz(kibitz, engine, n):
    with tempfile.TemporaryDirectory() as tmp:
        engines = os.path.join(tmp, "engines.toml")
        with open(engines, "w") as f:
            f.write(f'[[engine]]\nname = "sf"\ngame = "chess"\nprotocol = "uci"\ncommand = "{engine}"\n'
                    'default = true\n[engine.options]\nThreads = 1\nHash = 16\n')
        server = subprocess.Popen([kibitz, "serve", "--http", "127.0.0.1:0", "--no-guide", "--db",
                                   os.path.join(tmp, "k.db"), "--engines", engines, "--workers", "1"],
                                  stdout=subprocess.PIPE, text=True, env={**os.environ, "KIBITZ_LOG": "warn"})
        try:
            while True:
                line = server.stdout.readline()
                if line.startswith("kibitz listening on "):
                    url = line.split()[-1]
                    break
            body = json.dumps({"game": "chess", "moves": ["e2e4", "e7e5"], "depth": 1, "cache": "refresh"}).encode()
            def post():
                req = urllib.request.Request(url + "/v1/analysis", body, {"content-type": "application/json"})
                with urllib.request.urlopen(req) as r:
                    answer = json.load(r)
                assert answer["engine"].startswith("sf ("), answer
            post()  # the first search starts the process
            times = []
            for _ in range(n):
                start = time.perf_counter()
                post()
                times.append((time.perf_counter() - start) * 1000)
            return times
        finally:
            server.terminate()
            server.wait(15)


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--kibitz", default="target/release/kibitz")
    a.add_argument("--engine", default="/usr/games/stockfish")
    a.add_argument("--n", type=int, default=300)
    args = a.parse_args()
    engine = alone(args.engine, args.n)
    served = through_kibitz(args.kibitz, args.engine, args.n)
    for name, t in [("engine alone", engine), ("through kibitz", served)]:
        print(f"{name:15} median {statistics.median(t):6.2f} ms  p99 {pct(t, 99):6.2f} ms  (n={len(t)})")
    print(f"{'added':15} median {statistics.median(served) - statistics.median(engine):6.2f} ms  "
          f"p99 {pct(served, 99) - pct(engine, 99):6.2f} ms")


if __name__ == "__main__":
    main()
