#!/usr/bin/env bash
# Before/after for the crawler: serves the Debian postgresql-doc-15 site with
# nginx on 127.0.0.1 (as nginx_vs_wget2.sh does) and runs the same
# `mgz crawl` (politeness off) with each given binary, alternating, RUNS
# times, printing wall (the clock's, to the millisecond, /usr/bin/time's
# start included), CPU (user + system) and peak RSS (from /usr/bin/time),
# then per binary the medians and ranges.
# Usage: bench/ab.sh RUNS BIN_A BIN_B...   (keep old binaries as copies; a
# BIN may be a `#!/bin/sh` wrapper that sets variables and `exec`s mgz)
# DEPTH=0 bench/ab.sh ... times a one-page crawl (the fixed cost before
# and after the first fetch: opening and closing the state); MGZ_ARGS='...'
# adds mgz crawl options to every run (pg_site.sh, `pg_crawl_args`).
# OUT=DIR holds the crawl state and database (default /dev/shm, tmpfs, as in
# nginx_vs_wget2.sh: the shared disk's write stalls are not the crawler's).
set -euo pipefail
runs=$1; shift
port=18090
source "$(dirname "$0")/pg_site.sh"
out=$(mktemp -d -p "${OUT:-/dev/shm}")
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work" "$out"' EXIT
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$runs"); do
  for bin in "$@"; do
    rm -rf "$out/m"
    pg_crawl_args "$out/m"
    # Wall time from the clock in ms (/usr/bin/time's %e has 10 ms steps,
    # as long as a one-page crawl); CPU and peak RSS from /usr/bin/time.
    t0=$(date +%s%N)
    /usr/bin/time -f "%U %S %M" -o "$work/time" "$bin" "${crawl_args[@]}" > /dev/null
    t1=$(date +%s%N)
    echo "$(basename "$bin") $(( (t1 - t0) / 1000000 )) $(tail -1 "$work/time")" | tee -a "$work/log"
  done
done
echo "# end load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/log" <<'PY'
import statistics, sys
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    name, wall, user, sys_, rss = line.split()
    rows[name].append((int(wall) / 1000, float(user) + float(sys_), int(rss) / 1000))
def s(v, d=2):
    v = sorted(v)
    return f"{statistics.median(v):.{d}f} ({v[0]:.{d}f}-{v[-1]:.{d}f})"
for name, r in rows.items():
    print(f"{name:24} n={len(r)} wall {s([x[0] for x in r], 3)} s, CPU {s([x[1] for x in r])} s, "
          f"peak RSS {s([x[2] for x in r], 1)} MB")
PY
