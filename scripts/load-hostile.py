#!/usr/bin/env python3
"""Hostile load on a kibitz server: large annotation bodies and huge-depth analyses sent concurrently, while
the server's resident memory and the latency of /healthz are sampled (issue 20's repros).

    scripts/load-hostile.py --binary target/release/kibitz            # starts its own server on a free port
    scripts/load-hostile.py --url http://127.0.0.1:8080 --pid 1234    # an already running server

Prints one summary (and `--json` one JSON object): the answers of the hostile requests, peak and final
resident memory, /healthz p50/p99/max. Python 3 standard library only.
"""

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

GAME = '[Event "x"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 *\n\n'


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def request(host, port, method, path, body=None, timeout=600):
    started = time.monotonic()
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
        return response.status, data, time.monotonic() - started
    except (OSError, http.client.HTTPException) as e:
        return None, str(e).encode(), time.monotonic() - started
    finally:
        conn.close()


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(p / 100.0 * (len(values) - 1)))))
    return values[k]


def start_server(binary, extra):
    directory = tempfile.mkdtemp(prefix="kibitz-load-")
    args = [binary, "serve", "--http", "127.0.0.1:0", "--no-guide", "--db", os.path.join(directory, "load.db")]
    args += extra
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.match(r"kibitz listening on http://(\S+)", line)
        if m:
            return proc, "http://" + m.group(1)
    proc.kill()
    sys.exit("the server printed no address")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", help="start this kibitz binary (else --url and --pid)")
    ap.add_argument("--server-arg", action="append", default=[], help="extra `serve` argument (repeatable)")
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--pid", type=int, help="the server's process id (for resident memory)")
    ap.add_argument("--games", type=int, default=75_000, help="games per annotation body (75,000: 11.4 MB)")
    ap.add_argument("--bodies", type=int, default=4, help="annotation bodies sent at once")
    ap.add_argument("--rounds", type=int, default=2, help="times each body sender sends")
    ap.add_argument("--deep", type=int, default=2, help="huge-depth analyses sent at once")
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between samples")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    proc = None
    if args.binary:
        proc, args.url = start_server(args.binary, args.server_arg)
        args.pid = proc.pid
    url = urllib.parse.urlparse(args.url)
    host, port = url.hostname, url.port or 80

    body = json.dumps({"game": "chess", "text": GAME * args.games}).encode()
    deep = json.dumps({"game": "chess", "depth": 1_000_000_000}).encode()
    results = {"annotation": [], "analysis": []}
    lock = threading.Lock()
    stop = threading.Event()
    samples = []  # (seconds, rss MB or None, healthz seconds or None)

    def sampler():
        t0 = time.monotonic()
        while not stop.is_set():
            status, _, took = request(host, port, "GET", "/healthz", timeout=30)
            samples.append((time.monotonic() - t0, rss_mb(args.pid) if args.pid else None,
                            took if status == 200 else None))
            time.sleep(args.interval)

    def send_body():
        for _ in range(args.rounds):
            status, data, took = request(host, port, "POST", "/v1/annotations", body)
            with lock:
                results["annotation"].append((status, took, data[:200].decode(errors="replace")))

    def send_deep():
        status, data, took = request(host, port, "POST", "/v1/analysis", deep)
        summary = data[:200].decode(errors="replace")
        try:
            answer = json.loads(data)
            summary = {k: answer.get(k) for k in ("depth", "stopped", "clamped", "detail")}
        except ValueError:
            pass
        with lock:
            results["analysis"].append((status, took, summary))

    before = rss_mb(args.pid) if args.pid else None
    threads = [threading.Thread(target=sampler)]
    threads += [threading.Thread(target=send_body) for _ in range(args.bodies)]
    threads += [threading.Thread(target=send_deep) for _ in range(args.deep)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads[1:]:
        t.join()
    elapsed = time.monotonic() - started
    time.sleep(2)  # memory after the load, once idle
    stop.set()
    threads[0].join()
    after = rss_mb(args.pid) if args.pid else None
    if proc:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()

    rss = [s[1] for s in samples if s[1] is not None]
    health = [s[2] * 1000 for s in samples if s[2] is not None]
    failed = sum(1 for s in samples if s[2] is None)
    report = {
        "body_bytes": len(body),
        "bodies": args.bodies * args.rounds,
        "seconds": round(elapsed, 1),
        "annotation": results["annotation"],
        "analysis": results["analysis"],
        "rss_mb": {"before": before, "peak": max(rss) if rss else None, "after": after},
        "healthz_ms": {"samples": len(health), "failed": failed, "p50": percentile(health, 50),
                       "p99": percentile(health, 99), "max": max(health) if health else None},
    }
    if args.json:
        print(json.dumps(report))
        return
    print(f"{args.bodies} x {args.rounds} annotation bodies of {len(body):,} bytes and {args.deep} depth-1e9 "
          f"analyses in {elapsed:.1f} s")
    for status, took, text in results["annotation"]:
        print(f"  annotation: {status} in {took:.2f} s: {text[:120]!r}")
    for status, took, summary in results["analysis"]:
        print(f"  analysis: {status} in {took:.2f} s: {summary}")
    r = report["rss_mb"]
    fmt = lambda v: "?" if v is None else f"{v:.0f}"
    print(f"resident memory MB: before {fmt(r['before'])}, peak {fmt(r['peak'])}, after {fmt(r['after'])}")
    h = report["healthz_ms"]
    print(f"/healthz ms over {h['samples']} samples ({failed} failed): p50 {h['p50']:.1f}, p99 {h['p99']:.1f}, "
          f"max {h['max'] if h['max'] is None else round(h['max'], 1)}")


if __name__ == "__main__":
    main()
