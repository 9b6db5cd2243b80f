#!/usr/bin/env bash
# Large run of `mgz serve`: PutDiscovered of N URLs, then GetURLs with 1000 per queue (also the
# in-flight cap per queue, so queues larger than 1000 give 1000), peak RSS of the server.
# Usage: crates/service/benches/serve_bench_large.sh N HOSTS   (after cargo build --release -p mgz)
N=$1; HOSTS=$2
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd); MGZ=$ROOT/target/release/mgz; W=$(mktemp -d)
python3 $ROOT/crates/service/benches/gen_urls.py "$N" "$HOSTS" > $W/urls.txt
/usr/bin/time -v $MGZ serve --listen 127.0.0.1:7399 --state $W/s 2> $W/time.log & S=$!
for _ in $(seq 100); do grep -q "Started URLFrontierServer" $W/time.log && break; sleep 0.1; done
echo "PutDiscovered: $($MGZ frontier --server 127.0.0.1:7399 put --batch 256 $W/urls.txt)"
$MGZ frontier --server 127.0.0.1:7399 set-delay 0
echo "GetURLs (crawler loop 1000/queue, no completion): $($MGZ frontier --server 127.0.0.1:7399 get --total "$N" --max-queues 0 --per-queue 1000 --lease 3600 --quiet 2>&1)"
kill -TERM $(pgrep -P $S); wait $S || true
echo "peak RSS: $(grep 'Maximum resident' $W/time.log | awk '{print $NF}') kB; disk $(du -sb $W/s | cut -f1)"
rm -rf $W
