#!/usr/bin/env bash
# Server benchmark: cached POST /v1/analysis throughput and latency, uncached depth-limited throughput against
# workers x single-search speed, and the WebSocket time from `analyse` to the first `info`.
#
#   scripts/bench-server.sh
#
# Settings (environment): DURATION (s per wrk run, 10), THREADS (wrk threads, 2), CONNECTIONS (cached run, 50),
# WORKERS (search workers, one per core), UNCACHED_DEPTH (11), POSITIONS (distinct positions, 1500),
# WS_RUNS (WebSocket analyses, 200), WS_DEPTH (10).
# Needs wrk (Debian: `apt-get install wrk`; installed here when running as root), curl and python3.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-50}
WORKERS=${WORKERS:-$(nproc)}
UNCACHED_DEPTH=${UNCACHED_DEPTH:-11}
POSITIONS=${POSITIONS:-1500}
WS_RUNS=${WS_RUNS:-200}
WS_DEPTH=${WS_DEPTH:-10}

if ! command -v wrk >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing wrk (apt-get install wrk)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y wrk >/dev/null
    else
        echo "wrk is missing: install it (Debian/Ubuntu: sudo apt-get install wrk; macOS: brew install wrk)" >&2
        exit 1
    fi
fi
for tool in curl python3; do
    command -v "$tool" >/dev/null || { echo "$tool is missing" >&2; exit 1; }
done

echo "== building (release)"
cargo build --release --quiet --bin kibitz --example ws_first_info

tmp=$(mktemp -d)
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

target/release/kibitz serve --http 127.0.0.1:0 --no-guide --db "$tmp/bench.db" --workers "$WORKERS" \
    >"$tmp/stdout" 2>"$tmp/stderr" &
server_pid=$!
addr=
for _ in $(seq 100); do
    addr=$(sed -n 's|^kibitz listening on http://||p' "$tmp/stdout")
    [ -n "$addr" ] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/stderr" >&2; exit 1; }
    sleep 0.1
done
[ -n "$addr" ] || { echo "the server printed no address" >&2; cat "$tmp/stderr" >&2; exit 1; }
url="http://$addr"
echo "== server $url (pid $server_pid, $WORKERS workers, $(nproc) cores)"

post() { curl -sS --max-time 60 -H 'Content-Type: application/json' -d "$1" "$url/v1/analysis"; }

# ---- 1. cached POST ----
export KIBITZ_BENCH_BODY='{"game":"checkers","depth":8}'
post "$KIBITZ_BENCH_BODY" >/dev/null
sleep 0.2 # the first answer is stored after it is sent
post "$KIBITZ_BENCH_BODY" | grep -q '"cached":true' || { echo "the warm-up result is not cached" >&2; exit 1; }
echo
echo "== 1. cached POST /v1/analysis: wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s --latency"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s scripts/wrk-analysis.lua "$url/v1/analysis"

# ---- 2. uncached, depth-limited ----
echo
echo "== 2. uncached depth-$UNCACHED_DEPTH analyses of $POSITIONS distinct positions (cache: refresh)"
python3 - "$url" "$POSITIONS" "$UNCACHED_DEPTH" >"$tmp/bodies.jsonl" <<'PY'
import json, random, sys, urllib.request
url, count, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(20261122)
def legal(moves):
    req = urllib.request.Request(url + "/v1/moves", json.dumps({"game": "checkers", "moves": moves}).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return [m["move"] for m in json.load(r)["moves"]]
seen = set()
while len(seen) < count:
    moves = []
    for _ in range(rng.randint(4, 16)):
        options = legal(moves)
        if not options:
            break
        moves.append(rng.choice(options))
    key = " ".join(moves)
    if key in seen:
        continue
    seen.add(key)
    print(json.dumps({"game": "checkers", "moves": moves, "depth": depth, "cache": "refresh"}))
PY
export KIBITZ_BENCH_BODIES="$tmp/bodies.jsonl"

rate() { sed -n 's/^Requests\/sec: *//p' "$1"; }

echo "-- one connection (single-search speed): wrk -t1 -c1 -d${DURATION}s"
wrk -t1 -c1 -d"${DURATION}s" --latency -s scripts/wrk-uncached.lua "$url" | tee "$tmp/single.txt"
many=$((WORKERS * 4))
echo "-- $many connections: wrk -t$THREADS -c$many -d${DURATION}s (sampling kibitz_pool_busy_workers)"
(
    end=$((SECONDS + DURATION))
    while [ "$SECONDS" -lt "$end" ]; do
        curl -s --max-time 2 "$url/metrics" | sed -n 's/^kibitz_pool_busy_workers //p'
        sleep 0.2
    done
) >"$tmp/busy.txt" &
sampler=$!
wrk -t"$THREADS" -c"$many" -d"${DURATION}s" --latency -s scripts/wrk-uncached.lua "$url" | tee "$tmp/many.txt"
wait "$sampler" || true
single=$(rate "$tmp/single.txt")
parallel=$(rate "$tmp/many.txt")
python3 - "$single" "$parallel" "$WORKERS" "$tmp/busy.txt" <<'PY'
import sys
single, parallel, workers = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
busy = [float(x) for x in open(sys.argv[4]).read().split()]
ideal = single * workers
print(f"single search: {single:.1f} analyses/s; {workers} workers: {parallel:.1f} analyses/s; "
      f"workers x single = {ideal:.1f}; ratio {parallel / ideal:.2f} (target >= 0.90)")
if busy:
    print(f"busy workers sampled {len(busy)} times: mean {sum(busy) / len(busy):.2f} of {workers}, "
          f"min {min(busy):.0f}")
PY

# ---- 3. WebSocket: analyse -> first info ----
echo
echo "== 3. WebSocket analyse -> first info: target/release/examples/ws_first_info $addr $WS_RUNS checkers $WS_DEPTH"
target/release/examples/ws_first_info "$addr" "$WS_RUNS" checkers "$WS_DEPTH"

echo
curl -s "$url/metrics" | grep -E '^kibitz_(searches|cache|pool_workers|nodes)' || true
