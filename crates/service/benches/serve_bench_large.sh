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
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
MGZ=${MGZ:-$ROOT/target/release/mgz}
DIRECT=${DIRECT:-$ROOT/target/release/examples/direct_put}
mkdir -p "$ROOT/target/scratch"
W=$(mktemp -d -p "$ROOT/target/scratch")
trap 'rm -rf "$W"' EXIT
PORT=$((20000 + RANDOM % 20000))
python3 "$ROOT/crates/service/benches/gen_urls.py" "$N" "$HOSTS" > "$W/urls.txt"
echo "load: $(uptime)"
/usr/bin/time -v "$MGZ" serve --listen 127.0.0.1:$PORT --state "$W/s" 2> "$W/time.log" & S=$!
for _ in $(seq 100); do grep -q "Started URLFrontierServer" "$W/time.log" && break; sleep 0.1; done
cli() { "$MGZ" frontier --server 127.0.0.1:$PORT "$@"; }
echo "PutDiscovered: $(cli put --batch 256 "$W/urls.txt")"
cli set-delay 0
echo "GetURLs (1000/queue, no completion): $(cli get --total "$N" --max-queues 0 --per-queue 1000 --lease 3600 --quiet 2>&1)"
kill -TERM "$(pgrep -P $S)"; wait $S || true
echo "server peak RSS: $(grep 'Maximum resident' "$W/time.log" | awk '{print $NF}') kB; state on disk $(du -sb "$W/s" | cut -f1) bytes"
rm -rf "$W/s"
echo "baseline: $("$DIRECT" "$W/urls.txt" "$W/d" 16384 put-only)"
echo "load: $(uptime)"
