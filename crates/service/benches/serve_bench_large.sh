#!/usr/bin/env bash
# Large run of `mgz serve` (docs/BENCHMARKS.md, "URLFrontier service"): PutDiscovered of N URLs
# (batches of 256), then GetURLs with no queue limit and 1000 per queue (also the in-flight cap per
# queue, so queues larger than 1000 give 1000 per call), no completion; peak RSS of the server
# (/usr/bin/time -v); then the library baseline in the same run: the same put straight into the
# library (example direct_put put-only: 16,384-URL chunks, group commit, as the server writes).
# Usage: crates/service/benches/serve_bench_large.sh N HOSTS
#   (after cargo build --release -p mgz -p mgz-service --examples --bins)
N=$1; HOSTS=$2
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"
start_server "$WORK/s" "$WORK/time.log"
echo "PutDiscovered: $(cli put --batch 256 "$WORK/urls.txt")"
cli set-delay 0
echo "GetURLs (1000/queue, no completion): $(cli get --total "$N" --max-queues 0 --per-queue 1000 --lease 3600 --quiet 2>&1)"
stop_server
echo "server peak RSS: $(grep 'Maximum resident' "$WORK/time.log" | awk '{print $NF}') kB; state on disk $(du -sb "$WORK/s" | cut -f1) bytes"
rm -rf "$WORK/s"
echo "baseline: $("$DIRECT" "$WORK/urls.txt" "$WORK/d" 16384 put-only)"
echo "load: $(uptime)"
