#!/usr/bin/env bash
# Benchmark of `mgz serve` over loopback (docs/BENCHMARKS.md, "URLFrontier service").
# Usage: crates/service/benches/serve_bench.sh N [HOSTS]   (after cargo build --release)
# Runs, each server on a fresh state directory (crawl delay set to 0 before serving, so the rate
# measured is the server's, not politeness):
#   server 1: PutDiscovered, batches of 256 (mgz frontier put), then GetURLs draining everything
#             due with no per-queue cap (mgz frontier get --per-queue 0); peak RSS (/usr/bin/time -v)
#   server 1b: PutDiscovered as server 1 on two concurrent streams (mgz frontier put --streams 2)
#   server 2: PutURLs, one message per URL (mgz frontier put --put-urls), then a crawler loop:
#             GetURLs 100 per queue, every served URL completed with PutURLs (get --complete)
#   server 3: the null store (example null_serve: the gRPC layer, no store) under the same
#             crawler loop: what the service layer alone carries
#   baseline: the library with no gRPC (example direct_put): the put written as a PutDiscovered
#             stream writes it (16,384-URL chunks, group commit), then a drain and the crawler
#             loop (get 100/queue + put_known) on the same store
set -euo pipefail
N=${1:-1000000}
HOSTS=${2:-20000}
source "$(dirname "$0")/bench_env.sh"

start_server "$WORK/s1" "$WORK/time1.log"
echo "PutDiscovered: $(cli put --batch 256 "$WORK/urls.txt")"
cli set-delay 0
echo "GetURLs (drain, no per-queue cap): $(cli get --total "$N" --max-queues 0 --per-queue 0 --quiet 2>&1)"
stop_server
RSS=$(grep 'Maximum resident' "$WORK/time1.log" | awk '{print $NF}')
DISK=$(du -sb "$WORK/s1" | cut -f1)
echo "server 1 peak RSS: $RSS kB; state on disk: $DISK bytes"

PORT=$((PORT + 1))
start_server "$WORK/s1b" "$WORK/time1b.log"
echo "PutDiscovered, 2 streams: $(cli put --batch 256 --streams 2 "$WORK/urls.txt")"
stop_server
rm -rf "$WORK/s1b"

PORT=$((PORT + 1))
start_server "$WORK/s2" "$WORK/time2.log"
echo "PutURLs:       $(cli put --put-urls "$WORK/urls.txt")"
cli set-delay 0
echo "GetURLs (crawler loop, 100/queue, completing): $(cli get --total "$N" --max-queues 0 --per-queue 100 --complete --quiet 2>&1)"
stop_server
echo "server 2 peak RSS: $(grep 'Maximum resident' "$WORK/time2.log" | awk '{print $NF}') kB"


PORT=$((PORT + 1))
start_server "" "$WORK/time3.log" "$NULL"
echo "null store crawler loop: $(cli get --total "$N" --max-queues 0 --per-queue 100 --complete --quiet 2>&1)"
stop_server

echo "baseline:"
"$DIRECT" "$WORK/urls.txt" "$WORK/s3"
echo "load: $(uptime)"
