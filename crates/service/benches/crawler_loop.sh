#!/usr/bin/env bash
# The crawler loop alone under `mgz serve`: PutDiscovered of N URLs over HOSTS hosts (batches of
# 256, 2 streams), crawl delay 0, then GetURLs 100 per queue with every served URL completed by
# PutURLs until all N are served; prints both rates, the server's peak RSS and CPU.
# Usage: crawler_loop.sh N HOSTS (MGZ=binary to test another build; see bench_env.sh).
set -euo pipefail
N=$1
HOSTS=$2
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
start_server "$WORK/s" "$WORK/time.log"
echo "PutDiscovered: $(cli put --batch 256 --streams 2 "$WORK/urls.txt")"
cli set-delay 0
echo "GetURLs (crawler loop, 100/queue, completing): $(cli get --total "$N" --max-queues 0 --per-queue 100 --complete --quiet 2>&1)"
stop_server
log="$WORK/time.log"
echo "server peak RSS: $(grep 'Maximum resident' "$log" | awk '{print $NF}') kB; CPU user $(grep 'User time' "$log" | awk '{print $NF}') s, system $(grep 'System time' "$log" | awk '{print $NF}') s"
echo "load: $(uptime)"
