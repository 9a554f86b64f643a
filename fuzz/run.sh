#!/bin/sh
# Run fuzz targets one after another at the lowest priority, each for SECONDS (default 600), logging to
# fuzz/logs/<target>.log; a crash stops that target (its input is in fuzz/artifacts/<target>/) and the next
# one starts. Seeds come from ./seed.sh.
#
#   fuzz/run.sh                    every target, 10 minutes each (the runs BENCHMARKS.md reports)
#   SECONDS_EACH=10 fuzz/run.sh    a smoke run: 10 seconds per target
#   fuzz/run.sh game_chess http_bodies
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
secs=${SECONDS_EACH:-600}
targets=${*:-$(cargo +nightly fuzz list)}
./seed.sh
mkdir -p logs
cargo +nightly fuzz build || exit 1
status=0
for t in $targets; do
    echo "== $t ($secs s)"
    nice -n 19 cargo +nightly fuzz run "$t" -- -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 > "logs/$t.log" 2>&1
    rc=$?
    [ "$rc" -ne 0 ] && status=1
    grep -a -E '^Done [0-9]+ runs|^#[0-9]+[[:space:]]+DONE' "logs/$t.log" | tail -n 2
    [ "$rc" -ne 0 ] && grep -a -m1 -E 'panicked at|ERROR: libFuzzer' "logs/$t.log"
    echo "   exit $rc"
done
exit $status
