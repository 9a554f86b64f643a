#!/usr/bin/env python3
"""How long a plain analysis waits while endless analyses hold every worker.

Starts `KIBITZ serve` with WORKERS workers (no clock worker), opens as many GUIDE sessions running an infinite
analysis (`levelsinfiniteanalysis`, `go`), then posts REQUESTS international draughts analyses at DEPTH one
after another (`cache: refresh`, so each is searched) and reports how long each took, or its status when it
was not answered. Nothing but the Python standard library.

    scripts/endless-share.py target/release/kibitz [--workers 2] [--requests 10] [--depth 8] [--timeout 30]
"""

import argparse
import http.client
import json
import socket
import statistics
import subprocess
import sys
import threading
import time


def guide_analyst(addr):
    """One GUIDE session in infinite analysis, read and dropped on a thread until its socket is shut."""
    host, port = addr.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30)
    reader = sock.makefile("r", encoding="utf-8", newline="\n")
    while not reader.readline().startswith("engineok"):
        pass
    sock.sendall(b"levelsinfiniteanalysis\ngo\n")
    sock.settimeout(None)

    def drain():
        try:
            while reader.readline():
                pass
        except OSError:
            pass

    threading.Thread(target=drain, daemon=True).start()
    return sock


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kibitz")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds the server and client give a request")
    args = parser.parse_args()

    server = subprocess.Popen(
        [args.kibitz, "serve", "--http", "127.0.0.1:0", "--guide", "127.0.0.1:0", "--db", ":memory:",
         "--workers", str(args.workers), "--clock-workers", "0", "--request-timeout-s", str(int(args.timeout))],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    guide = http_addr = None
    for line in server.stdout:
        if line.startswith("kibitz GUIDE gateway listening on "):
            guide = line.split()[-1]
        if line.startswith("kibitz listening on http://"):
            http_addr = line.strip().removeprefix("kibitz listening on http://")
            break
    analysts = [guide_analyst(guide) for _ in range(args.workers)]
    time.sleep(1.0)
    host, port = http_addr.rsplit(":", 1)
    latencies, failures = [], []
    body = json.dumps({"game": "draughts", "depth": args.depth, "cache": "refresh"})
    for _ in range(args.requests):
        started = time.monotonic()
        try:
            conn = http.client.HTTPConnection(host, int(port), timeout=args.timeout + 5)
            conn.request("POST", "/v1/analysis", body, {"Content-Type": "application/json"})
            status = conn.getresponse().status
            conn.close()
        except OSError as e:
            status = type(e).__name__
        elapsed = time.monotonic() - started
        if status == 200:
            latencies.append(elapsed)
        else:
            failures.append(f"{status} after {elapsed:.1f} s")
    for sock in analysts:
        sock.shutdown(socket.SHUT_RDWR)
        sock.close()
    server.terminate()
    server.wait()
    print(f"{args.workers} workers, each held by a GUIDE infinite analysis; {args.requests} analyses at depth "
          f"{args.depth}, one after another")
    if latencies:
        print(f"answered: {len(latencies)}; seconds: median {statistics.median(latencies):.2f}, "
              f"max {max(latencies):.2f}, min {min(latencies):.2f}")
    if failures:
        print(f"not answered: {len(failures)} ({', '.join(failures[:3])}{', ...' if len(failures) > 3 else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
