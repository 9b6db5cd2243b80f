#!/usr/bin/env bash
# Crawls the Debian postgresql-doc-15 site served by nginx on 127.0.0.1 with
# `mgz crawl --delay 0 --per-host 16` and with `wget2 -r --max-threads=16`,
# RUNS times each, alternating, and prints wall time and peak RSS
# (/usr/bin/time -v) of every run. Usage: bench/nginx_vs_wget2.sh [RUNS]
set -euo pipefail
runs=${1:-3}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
mgz="$repo/target/release/mgz"
port=18089
source "$(dirname "$0")/pg_site.sh"
measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -v "$@" > /dev/null 2> "$work/time"
  local wall rss cpu
  wall=$(grep "Elapsed (wall clock)" "$work/time" | awk '{print $NF}')
  rss=$(grep "Maximum resident" "$work/time" | awk '{print $NF}')
  cpu=$(awk '/User time|System time/{s+=$NF} END{printf "%.2f", s}' "$work/time")
  echo "$label wall=$wall cpu_s=$cpu peak_rss_kb=$rss load=$(cut -d' ' -f1 /proc/loadavg)"
}
for i in $(seq "$runs"); do
  rm -rf "$work/m" "$work/w"
  measure mgz "$mgz" crawl http://pg.test/index.html --resolve "pg.test=127.0.0.1:$port" --allow-private \
    --delay 0 --per-host 16 --concurrency 32 --max-depth 100 --loose-depth \
    --state "$work/m/state" --db "$work/m/pages.db" --json
  echo "  mgz stored $(sqlite3 "$work/m/pages.db" 'select count(*) from pages' 2>/dev/null || echo '?') pages"
  measure wget2 wget2 -q -r -l 100 --no-parent --max-threads=16 -P "$work/w" "http://127.0.0.1:$port/index.html"
  echo "  wget2 saved $(find "$work/w" -name '*.html' | wc -l) pages"
done
