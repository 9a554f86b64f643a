#!/usr/bin/env bash
# Several nodes on one PostgreSQL, measured (BENCHMARKS.md, "Several nodes"):
#   1. cached POST /v1/analysis on SQLite and on PostgreSQL, with the in-memory front (the default) and
#      without it (--cache-entries 0: every hit read from the database), same wrk script;
#   2. annotation positions per second with one node and with two nodes (one job submitted to each);
#   3. the time from a node's death (SIGKILL) to the job's resumption on the other node.
#
#   scripts/bench-multinode.sh
#
# Settings (environment): KIBITZ_BIN (default target/release/kibitz), DURATION (s per wrk run, 10),
# CONNECTIONS (50), GAMES (games per job, 10), DEPTH (annotation depth, 6), LEASE_S (job lease, 5).
# Needs wrk, curl, python3 and PostgreSQL's programs (Debian: apt-get install wrk postgresql).
set -euo pipefail
cd "$(dirname "$0")/.."

KIBITZ_BIN=${KIBITZ_BIN:-target/release/kibitz}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-50}
GAMES=${GAMES:-10}
DEPTH=${DEPTH:-6}
LEASE_S=${LEASE_S:-5}
[ -x "$KIBITZ_BIN" ] || { echo "no $KIBITZ_BIN: cargo build --release (or set KIBITZ_BIN)" >&2; exit 1; }
for tool in wrk curl python3; do command -v "$tool" >/dev/null || { echo "$tool is missing" >&2; exit 1; }; done
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
[ -x "$PG_BIN/pg_ctl" ] || { echo "PostgreSQL's programs are missing (apt-get install postgresql)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/kibitz-bench-multinode.XXXXXX)
as_pg=()
if [ "$(id -u)" = 0 ]; then chown postgres "$tmp"; as_pg=(runuser -u postgres --); fi
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$tmp/pg" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${as_pg[@]}" "$PG_BIN/initdb" -D "$tmp/pg" -A trust -U kibitz -E UTF8 --no-instructions >/dev/null
"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$tmp/pg" -l "$tmp/pg.log" -w -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $tmp" start >/dev/null
# A fresh database (called in $(...): the name must not depend on a variable of this shell).
new_db() {
    local name="b$(date +%s%N)"
    "${as_pg[@]}" "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U kibitz -d postgres -qc "CREATE DATABASE $name"
    echo "postgres://kibitz@127.0.0.1:$PG_PORT/$name"
}

# start_node NAME DB ARGS...: prints the node's address; its pid goes to $tmp/NAME.pid.
start_node() {
    local name=$1 db=$2; shift 2
    "$KIBITZ_BIN" serve --http 127.0.0.1:0 --no-guide --db "$db" --job-lease-s "$LEASE_S" "$@" \
        >"$tmp/$name.out" 2>"$tmp/$name.log" &
    echo $! >"$tmp/$name.pid"
    for _ in $(seq 300); do
        addr=$(sed -n 's|^kibitz listening on http://||p' "$tmp/$name.out")
        [ -n "$addr" ] && { echo "$addr"; return; }
        sleep 0.1
    done
    echo "node $name did not start" >&2; cat "$tmp/$name.log" >&2; exit 1
}
stop_node() { kill -TERM "$(cat "$tmp/$1.pid")" 2>/dev/null || true; wait "$(cat "$tmp/$1.pid")" 2>/dev/null || true; }

echo "== 1. cached POST /v1/analysis (wrk -t2 -c$CONNECTIONS -d${DURATION}s, scripts/wrk-analysis.lua)"
body='{"game":"checkers","depth":8}'
for store in sqlite postgres; do
    for entries in 100000 0; do
        if [ $store = sqlite ]; then db="$tmp/bench-$entries.db"; else db=$(new_db); fi
        addr=$(start_node cached "$db" --cache-entries "$entries")
        curl -fsS -H 'content-type: application/json' -d "$body" "http://$addr/v1/analysis" >/dev/null
        result=$(KIBITZ_BENCH_BODY=$body wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s scripts/wrk-analysis.lua "http://$addr/v1/analysis")
        rps=$(awk '/^Requests\/sec/ { print $2 }' <<<"$result")
        p50=$(awk '$1 == "50%" { print $2 }' <<<"$result")
        p99=$(awk '$1 == "99%" { print $2 }' <<<"$result")
        echo "$store, memory front $entries entries: $rps req/s, p50 $p50, p99 $p99"
        stop_node cached
    done
done

# A job of $GAMES different international draughts games (the formula of tests/multinode_pg.rs), numbered
# from $2 (jobs with other numbers have other games: no position of one is in the cache for the other).
games_json() {
    python3 - "$1" "$GAMES" "$2" <<'EOF'
import json, sys, urllib.request
addr, count, first = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def post(path, body):
    req = urllib.request.Request(f"http://{addr}{path}", json.dumps(body).encode(), {"content-type": "application/json"})
    return json.load(urllib.request.urlopen(req))
text = ""
for g in range(first, first + count):
    moves = []
    for ply in range(40):
        legal = post("/v1/moves", {"game": "draughts", "moves": moves})
        options = legal.get("moves") or []
        if not options:
            break
        moves.append(options[(g * 7 + ply * 3 + g * ply) % len(options)]["move"])
    numbered = " ".join(f"{i // 2 + 1}. {' '.join(moves[i:i + 2])}" for i in range(0, len(moves), 2))
    text += f'[Event "game {g}"]\n[GameType "20"]\n[Result "*"]\n\n' + numbered + " *\n\n"
print(json.dumps({"game": "draughts", "text": text}))
EOF
}

submit() { curl -fsS -H 'content-type: application/json' --data-binary @"$2" "http://$1/v1/annotations" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'; }
progress() { curl -fsS "http://$1/v1/annotations/$2" | python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["status"], v["progress"]["done"], v["progress"]["total"])'; }
wait_done() { while true; do read -r status done total < <(progress "$1" "$2"); [ "$status" = running ] || [ "$status" = queued ] || break; sleep 0.2; done; echo "$total"; }
now() { python3 -c 'import time; print(time.monotonic())'; }

echo "== 2. annotation positions per second (depth $DEPTH, $GAMES games per job)"
db=$(new_db)
a=$(start_node a "$db" --workers 1)
for j in 1 2 3; do
    games_json "$a" $(((j - 1) * GAMES)) | python3 -c "import json,sys; b=json.load(sys.stdin); b['depth']=$DEPTH; print(json.dumps(b))" >"$tmp/job$j.json"
done
stop_node a
# Each run below uses a fresh database: no cache shared between the runs.
for nodes in 1 2; do
    db=$(new_db)
    a=$(start_node a "$db" --workers 1)
    b=$a
    [ $nodes = 2 ] && b=$(start_node b "$db" --workers 1)
    start=$(now)
    ja=$(submit "$a" "$tmp/job1.json")
    jb=$(submit "$b" "$tmp/job2.json")
    ta=$(wait_done "$a" "$ja"); tb=$(wait_done "$a" "$jb")
    end=$(now)
    python3 -c "print(f'{$nodes} node(s), --workers 1 each: {($ta+$tb)/($end-$start):.1f} positions/s ({$ta+$tb} positions, two jobs, {$end-$start:.1f} s)')"
    stop_node a; [ $nodes = 2 ] && stop_node b
done

echo "== 3. from a node's death to the job's resumption (lease ${LEASE_S} s)"
db=$(new_db)
a=$(start_node a "$db" --workers 1)
b=$(start_node b "$db" --workers 1)
job=$(submit "$a" "$tmp/job3.json")
while read -r status done total < <(progress "$b" "$job"); [ "$done" -lt 10 ]; do sleep 0.1; done
kill -9 "$(cat "$tmp/a.pid")"
killed=$(now)
sleep 0.2
read -r status before total < <(progress "$b" "$job")
while read -r status done total < <(progress "$b" "$job"); [ "$done" -le "$before" ]; do
    sleep 0.05
done
resumed=$(now)
python3 -c "print(f'death to the first position written by the other node: {$resumed-$killed:.2f} s (lease $LEASE_S s)')"
wait_done "$b" "$job" >/dev/null
stop_node b
