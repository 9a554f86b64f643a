#!/usr/bin/env python3
"""Two clients on one kibitz server with keys (issue 15): a flooder sends uncached analyses at ten times its
key's rate while a well-behaved client runs its own, one at a time. Measures the well-behaved client's latency
on the idle server and under the flood, the flooder's answers (200/429/503), whether its Retry-After is right
(a request sent when it says is accepted), and the server's resident memory.

    scripts/rate-limit-bench.py --binary target/release/kibitz

It starts its own server (`--auth required`) on a fresh database and makes the two keys with `kibitz keys
create`. Every analysis has `"cache": "refresh"`, so each one searches. Python 3 standard library only.
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


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def analyse(host, port, key, movetime_ms, timeout=120):
    body = json.dumps({"game": "checkers", "movetime_ms": movetime_ms, "cache": "refresh"})
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    started = time.monotonic()
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("POST", "/v1/analysis", body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        retry = response.getheader("Retry-After")
        return response.status, (int(retry) if retry else None), time.monotonic() - started
    except (OSError, http.client.HTTPException, ValueError):
        return None, None, time.monotonic() - started
    finally:
        conn.close()


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(p / 100.0 * (len(values) - 1)))))
    return values[k]


def make_key(binary, db, name, rate, burst):
    out = subprocess.run(
        [binary, "keys", "create", "--name", name, "--rate", str(rate), "--burst", str(burst), "--db", db],
        check=True, capture_output=True, text=True)
    return out.stdout.strip()


def start_server(binary, db, workers):
    args = [binary, "serve", "--http", "127.0.0.1:0", "--no-guide", "--db", db, "--auth", "required",
            "--workers", str(workers)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.match(r"kibitz listening on http://([^:]+):(\d+)", line)
        if m:
            return proc, m.group(1), int(m.group(2))
    proc.kill()
    sys.exit("the server printed no address")


def steady_run(host, port, key, count, movetime_ms):
    latencies, statuses = [], {}
    for _ in range(count):
        status, _, elapsed = analyse(host, port, key, movetime_ms)
        statuses[status] = statuses.get(status, 0) + 1
        if status == 200:
            latencies.append(elapsed * 1000.0)
    return latencies, statuses


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, help="the kibitz binary (a release build)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--movetime-ms", type=int, default=100, help="each analysis's search time (cost 1 unit)")
    ap.add_argument("--flood-rate", type=float, default=2.0, help="the flooder key's rate, units per second")
    ap.add_argument("--flood-burst", type=int, default=4)
    ap.add_argument("--requests", type=int, default=60, help="the well-behaved client's requests per phase")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    directory = tempfile.mkdtemp(prefix="kibitz-ratelimit-")
    db = os.path.join(directory, "bench.db")
    flood_key = make_key(args.binary, db, "flooder", args.flood_rate, args.flood_burst)
    steady_key = make_key(args.binary, db, "steady", 1000, 1000)
    proc, host, port = start_server(args.binary, db, args.workers)
    try:
        rss = [rss_mb(proc.pid)]
        # Warm up (the first searches allocate the table and start threads).
        steady_run(host, port, steady_key, 5, args.movetime_ms)
        idle, idle_statuses = steady_run(host, port, steady_key, args.requests, args.movetime_ms)

        stop = threading.Event()
        flood = {"sent": 0, "statuses": {}, "retry_after": []}
        lock = threading.Lock()
        interval = 1.0 / (10.0 * args.flood_rate)

        def flooder():
            # Ten times the key's rate: one request every `interval`, each on its own thread so that a slow
            # answer does not lower the rate.
            next_at = time.monotonic()
            threads = []
            while not stop.is_set():
                def one():
                    status, retry, _ = analyse(host, port, flood_key, args.movetime_ms)
                    with lock:
                        flood["statuses"][status] = flood["statuses"].get(status, 0) + 1
                        if status == 429 and retry is not None:
                            flood["retry_after"].append(retry)
                t = threading.Thread(target=one, daemon=True)
                t.start()
                threads.append(t)
                flood["sent"] += 1
                next_at += interval
                time.sleep(max(0.0, next_at - time.monotonic()))
            for t in threads:
                t.join(timeout=120)

        def sampler():
            while not stop.is_set():
                rss.append(rss_mb(proc.pid))
                time.sleep(0.2)

        workers = [threading.Thread(target=flooder), threading.Thread(target=sampler)]
        for t in workers:
            t.start()
        time.sleep(1.0)
        started = time.monotonic()
        loaded, loaded_statuses = steady_run(host, port, steady_key, args.requests, args.movetime_ms)
        flood_seconds = time.monotonic() - started + 1.0
        stop.set()
        for t in workers:
            t.join(timeout=180)

        # Is Retry-After right? Spend the flooder's bucket, wait what the 429 says, and try again.
        probe = None
        for _ in range(args.flood_burst * 4 + 4):
            status, retry, _ = analyse(host, port, flood_key, args.movetime_ms)
            if status == 429 and retry is not None:
                time.sleep(retry)
                after, _, _ = analyse(host, port, flood_key, args.movetime_ms)
                probe = {"retry_after": retry, "status_after_waiting": after}
                break
        rss.append(rss_mb(proc.pid))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()

    rss = [r for r in rss if r is not None]
    accepted = flood["statuses"].get(200, 0)
    result = {
        "workers": args.workers,
        "movetime_ms": args.movetime_ms,
        "flooder": {
            "rate": args.flood_rate, "burst": args.flood_burst, "sent": flood["sent"],
            "seconds": round(flood_seconds, 1),
            "statuses": {str(k): v for k, v in sorted(flood["statuses"].items(), key=lambda kv: str(kv[0]))},
            "accepted_per_s": round(accepted / flood_seconds, 2),
            "retry_after_min": min(flood["retry_after"]) if flood["retry_after"] else None,
            "retry_after_max": max(flood["retry_after"]) if flood["retry_after"] else None,
            "probe": probe,
        },
        "steady_idle_ms": {"p50": round(percentile(idle, 50), 1), "p99": round(percentile(idle, 99), 1),
                           "statuses": {str(k): v for k, v in idle_statuses.items()}},
        "steady_flooded_ms": {"p50": round(percentile(loaded, 50), 1), "p99": round(percentile(loaded, 99), 1),
                              "statuses": {str(k): v for k, v in loaded_statuses.items()}},
        "rss_mb": {"start": round(rss[0], 1) if rss else None, "peak": round(max(rss), 1) if rss else None,
                   "end": round(rss[-1], 1) if rss else None},
    }
    if args.json:
        print(json.dumps(result))
        return
    f = result["flooder"]
    print(f"flooder: {f['sent']} analyses in {f['seconds']} s at 10x its rate of {f['rate']}/s; answers {f['statuses']}; "
          f"accepted {f['accepted_per_s']}/s; Retry-After {f['retry_after_min']}..{f['retry_after_max']} s; "
          f"probe {f['probe']}")
    i, l = result["steady_idle_ms"], result["steady_flooded_ms"]
    print(f"well-behaved client, {args.requests} analyses of {args.movetime_ms} ms each: idle p50 {i['p50']} ms "
          f"p99 {i['p99']} ms {i['statuses']}; under the flood p50 {l['p50']} ms p99 {l['p99']} ms {l['statuses']}")
    r = result["rss_mb"]
    print(f"server RSS: start {r['start']} MB, peak {r['peak']} MB, end {r['end']} MB")


if __name__ == "__main__":
    main()
