#!/usr/bin/env bash
# Runs every `mgz bench seen` measurement behind docs/BENCHMARKS.md
# ("Seen-set" section), writes JSON lines to target/bench-seen/, then renders
# the tables (target/bench-seen/tables.md) and the plot (docs/seen-bytes-per-url.svg).
#
#   bash bench/seen.sh            # everything (~8 minutes on the shared 2-core box)
#   QUICK=1 bash bench/seen.sh    # skip the 10M run
#
# Backend lists: "all" is every backend built into mgz-seen plus the peers;
# "-name" drops one. xtrie and tst are left out at 10M: at ~1 KB and ~0.5 KB
# per URL they would need 10 and 5 GB.
set -euo pipefail
cd "$(dirname "$0")/.."
# shared/ sits beside the clone (CI, main) or two levels up (helper worktrees).
SHARED=${SHARED:-$( [ -d ../shared ] && echo ../shared || echo ../../shared )}
OUT=target/bench-seen
mkdir -p "$OUT"
cargo build --release -p mgz
MGZ=target/release/mgz

# Peak RSS and wall time come from GNU time (Debian package `time`) when present.
TIME=()
[ -x /usr/bin/time ] && TIME=(/usr/bin/time -v)

run() { # name, then mgz bench seen arguments
    local name=$1; shift
    echo "== $name: mgz bench seen $*" >&2
    "${TIME[@]}" "$MGZ" bench seen --json "$@" > "$OUT/$name.jsonl" 2> "$OUT/$name.log"
    grep -E "Maximum resident|Elapsed" "$OUT/$name.log" >&2 || true
}

run wiki --input "$SHARED/data/wiki-urls-10000" --backends all,bloom-blocked,bloom-scalable
python3 bench/pg_urls.py > target/pg-urls.txt
run postgres --input target/pg-urls.txt --backends all,bloom-blocked,bloom-scalable
for n in 10000 100000 1000000; do
    run "gen-$n" --generate "$n" --backends all,bloom-blocked,bloom-scalable
done
if [ -z "${QUICK:-}" ]; then
    # The issue's exact command (the default leaves out xtrie and tst above 2M URLs).
    run gen-10000000 --generate 10000000
    # Bloom layouts at equal FPR, best of 3 (the choice of the default `bloom`).
    run layouts-10000000 --generate 10000000 --backends bloom-classic,bloom-blocked,bloom-scalable,fastbloom --repeat 3
fi
python3 bench/seen_report.py "$OUT" docs/seen-bytes-per-url.svg > "$OUT/tables.md"
echo "tables: $OUT/tables.md; plot: docs/seen-bytes-per-url.svg" >&2
