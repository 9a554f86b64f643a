#!/usr/bin/env bash
# Two kibitz nodes sharing one PostgreSQL behind haproxy, as processes on loopback: the topology of
# docker/compose.yaml for machines without Docker. Needs Debian's postgresql and haproxy
# (apt-get install postgresql haproxy) and a built kibitz (cargo build --release, or set KIBITZ_BIN).
#
#   scripts/multinode.sh           bring it up and keep it running until Ctrl-C (then stop everything)
#   scripts/multinode.sh --check   bring it up, check that one port answers from both nodes, stop
#
# Ports (loopback only; change with the variables): API 8080 and GUIDE 27533 through haproxy, the nodes on
# 8081/8082 (GUIDE 27534/27535), PostgreSQL on 55432. Everything lives in a temporary directory (or
# KIBITZ_MULTINODE_DIR), removed at the end unless KIBITZ_MULTINODE_KEEP=1.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
[ "${1:-}" = "--check" ] && check=1

API_PORT=${API_PORT:-8080}
GUIDE_PORT=${GUIDE_PORT:-27533}
NODE_PORTS=(${NODE_A_PORT:-8081} ${NODE_B_PORT:-8082})
NODE_GUIDE_PORTS=(${NODE_A_GUIDE_PORT:-27534} ${NODE_B_GUIDE_PORT:-27535})
PG_PORT=${PG_PORT:-55432}
LEASE_S=${KIBITZ_JOB_LEASE_S:-10}

die() { echo "multinode: $*" >&2; exit 1; }

KIBITZ_BIN=${KIBITZ_BIN:-}
if [ -z "$KIBITZ_BIN" ]; then
    for candidate in target/release/kibitz target/debug/kibitz; do
        [ -x "$candidate" ] && { KIBITZ_BIN=$candidate; break; }
    done
fi
[ -n "$KIBITZ_BIN" ] && [ -x "$KIBITZ_BIN" ] || die "no kibitz binary: run cargo build --release or set KIBITZ_BIN"
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
[ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ] || die "PostgreSQL's initdb/pg_ctl not found (apt-get install postgresql, or set PG_BIN)"
command -v haproxy >/dev/null || die "haproxy not found (apt-get install haproxy)"
command -v curl >/dev/null || die "curl not found"

WORK=${KIBITZ_MULTINODE_DIR:-$(mktemp -d /tmp/kibitz-multinode.XXXXXX)}
mkdir -p "$WORK"
# PostgreSQL refuses to run as root: as root, the cluster belongs to the postgres user.
as_pg=()
if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root and there is no postgres user"
    chown postgres "$WORK"
    as_pg=(runuser -u postgres --)
fi

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$WORK/pg" -m fast -w stop >/dev/null 2>&1 || true
    if [ "${KIBITZ_MULTINODE_KEEP:-0}" != 1 ]; then rm -rf "$WORK"; else echo "multinode: kept $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "multinode: PostgreSQL on 127.0.0.1:$PG_PORT ($WORK/pg)"
"${as_pg[@]}" "$PG_BIN/initdb" -D "$WORK/pg" -A trust -U kibitz -E UTF8 --no-instructions >/dev/null
"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$WORK/pg" -l "$WORK/pg.log" -w \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $WORK" start >/dev/null
"${as_pg[@]}" "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U kibitz -d postgres -qc "CREATE DATABASE kibitz"
DB="postgres://kibitz@127.0.0.1:$PG_PORT/kibitz"

for i in 0 1; do
    name=$([ $i = 0 ] && echo a || echo b)
    KIBITZ_LOG=${KIBITZ_LOG:-info} "$KIBITZ_BIN" serve --db "$DB" --http "127.0.0.1:${NODE_PORTS[$i]}" \
        --guide "127.0.0.1:${NODE_GUIDE_PORTS[$i]}" --job-lease-s "$LEASE_S" \
        >"$WORK/node-$name.out" 2>"$WORK/node-$name.log" &
    pids+=($!)
    echo "multinode: node $name on 127.0.0.1:${NODE_PORTS[$i]} (GUIDE ${NODE_GUIDE_PORTS[$i]}), log $WORK/node-$name.log"
done

cat >"$WORK/haproxy.cfg" <<EOF
global
    maxconn 1024
defaults
    timeout connect 5s
    timeout client 130s
    timeout server 130s
    timeout tunnel 1h
frontend api
    mode http
    bind 127.0.0.1:$API_PORT
    default_backend kibitz_http
backend kibitz_http
    mode http
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server check inter 1s fall 2 rise 1
    server a 127.0.0.1:${NODE_PORTS[0]}
    server b 127.0.0.1:${NODE_PORTS[1]}
frontend guide
    mode tcp
    bind 127.0.0.1:$GUIDE_PORT
    default_backend kibitz_guide
backend kibitz_guide
    mode tcp
    balance leastconn
    option httpchk GET /readyz
    http-check expect status 200
    server a 127.0.0.1:${NODE_GUIDE_PORTS[0]} check port ${NODE_PORTS[0]} inter 1s fall 2 rise 1
    server b 127.0.0.1:${NODE_GUIDE_PORTS[1]} check port ${NODE_PORTS[1]} inter 1s fall 2 rise 1
EOF
haproxy -q -db -f "$WORK/haproxy.cfg" >"$WORK/haproxy.log" 2>&1 &
pids+=($!)

ready() { curl -fs -o /dev/null --max-time 3 "http://127.0.0.1:$1/readyz"; }
for port in "${NODE_PORTS[@]}" "$API_PORT"; do
    for _ in $(seq 1 120); do ready "$port" && break; sleep 0.5; done
    ready "$port" || die "127.0.0.1:$port is not ready (see $WORK)"
done
echo "multinode: ready: API http://127.0.0.1:$API_PORT, GUIDE 127.0.0.1:$GUIDE_PORT (either node)"

if [ $check = 1 ]; then
    # haproxy takes a node in once its check passed: wait until it balances over both.
    sleep 3
    requests() { curl -fsS "http://127.0.0.1:$1/metrics" | awk '/^kibitz_http_requests_total\{route="\/v1\/analysis"/ { n += $NF } END { print n + 0 }'; }
    before=($(requests "${NODE_PORTS[0]}") $(requests "${NODE_PORTS[1]}"))
    body='{"game":"chess","depth":4}'
    first=$(curl -fsS -H 'content-type: application/json' -d "$body" "http://127.0.0.1:$API_PORT/v1/analysis")
    for _ in 1 2 3 4 5 6; do
        curl -fsS -H 'content-type: application/json' -d "$body" "http://127.0.0.1:$API_PORT/v1/analysis" >"$WORK/last.json"
        grep -q '"cached":true' "$WORK/last.json" || die "a repeated analysis was not answered from the shared cache: $(cat "$WORK/last.json")"
    done
    grep -q '"cached":false' <<<"$first" || die "the first analysis was cached already: $first"
    after=($(requests "${NODE_PORTS[0]}") $(requests "${NODE_PORTS[1]}"))
    [ $((after[0] - before[0])) -gt 0 ] && [ $((after[1] - before[1])) -gt 0 ] \
        || die "the requests were not spread over both nodes (a: ${before[0]}→${after[0]}, b: ${before[1]}→${after[1]})"
    echo "multinode: check passed: one port, both nodes answering, one shared cache"
    exit 0
fi
echo "multinode: Ctrl-C stops everything"
wait "${pids[0]}"
