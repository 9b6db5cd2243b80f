#!/usr/bin/env bash
# Before/after for the crawler: serves the Debian postgresql-doc-15 site with
# nginx on 127.0.0.1 (as nginx_vs_wget2.sh does) and runs the same
# `mgz crawl` (politeness off) with each given binary, alternating, RUNS
# times, printing wall, CPU (user + system) and peak RSS from /usr/bin/time.
# Usage: bench/ab.sh RUNS BIN_A BIN_B...   (keep old binaries as copies)
# DEPTH=0 bench/ab.sh ... times a one-page crawl (the fixed cost before
# and after the first fetch: opening and closing the state).
set -euo pipefail
runs=$1; shift
port=18090
source "$(dirname "$0")/pg_site.sh"
for i in $(seq "$runs"); do
  for bin in "$@"; do
    rm -rf "$work/m"
    /usr/bin/time -f "$(basename "$bin") wall=%e cpu_s=%U+%S peak_rss_kb=%M" \
      "$bin" crawl http://pg.test/index.html --resolve "pg.test=127.0.0.1:$port" --allow-private \
      --delay 0 --per-host 16 --concurrency 32 --max-depth "${DEPTH:-100}" --loose-depth \
      --state "$work/m/state" --db "$work/m/pages.db" --json 2>&1 >/dev/null | tail -1 |
      sed "s/\$/ load=$(cut -d' ' -f1 /proc/loadavg)/"
  done
done
