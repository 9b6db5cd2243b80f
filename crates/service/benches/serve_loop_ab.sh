#!/usr/bin/env bash
# The crawler loop only, server against library, alternated on copies of one store
# (docs/BENCHMARKS.md, "URLFrontier service"). Usage: serve_loop_ab.sh N HOSTS REPS
#   (after cargo build --release -p mgz -p mgz-service --examples --bins)
# The N URLs are put once (PutURLs) into a state directory, crawl delay 0, server stopped;
# then each repetition copies it and runs `mgz frontier get --per-queue 100 --complete`
# against `mgz serve` (client and server CPU printed), then copies it again and runs the
# library's loop (`direct_put … loop-only`). Medians are the reader's job.
set -euo pipefail
N=${1:-1000000}; HOSTS=${2:-20000}; REPS=${3:-3}
source "$(dirname "$0")/bench_env.sh"
TICK=$(getconf CLK_TCK)
start_server "$WORK/s0" "$WORK/time0.log"
cli put --put-urls "$WORK/urls.txt" > /dev/null
cli set-delay 0
stop_server
for rep in $(seq "$REPS"); do
  rm -rf "$WORK/s"; cp -a "$WORK/s0" "$WORK/s"; PORT=$((PORT + 1))
  start_server "$WORK/s" "$WORK/time.log"
  pid=$(pgrep -P $SERVER); before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  echo "rep $rep server (load $(cut -d' ' -f1 /proc/loadavg)): $(/usr/bin/time -f "client CPU %U+%S s" \
    "$MGZ" frontier --server 127.0.0.1:$PORT get --total "$N" --max-queues 0 --per-queue 100 --complete --quiet 2>&1 | tr '\n' ' ')"
  echo "  server CPU $(awk -v b="$before" -v t="$TICK" '{printf "%.1f", ($14 + $15 - b) / t}' "/proc/$pid/stat") s"
  stop_server
  rm -rf "$WORK/s"; cp -a "$WORK/s0" "$WORK/s"
  echo "rep $rep library (load $(cut -d' ' -f1 /proc/loadavg)):"; "$DIRECT" "$WORK/urls.txt" "$WORK/s" 16384 loop-only
done
