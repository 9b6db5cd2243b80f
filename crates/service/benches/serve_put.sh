#!/usr/bin/env bash
# PutDiscovered alone into `mgz serve` (docs/BENCHMARKS.md, "URLFrontier service"): N URLs over
# HOSTS hosts (gen_urls.py), batches of 256 on STREAMS concurrent streams (mgz frontier put),
# into a server on a fresh state; prints the rate, the server's peak RSS and its CPU seconds.
# Usage: crates/service/benches/serve_put.sh N HOSTS [STREAMS]   (MGZ=binary to test another build)
N=$1; HOSTS=$2; STREAMS=${3:-2}
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"
start_server "$WORK/s" "$WORK/time.log"
echo "PutDiscovered, $STREAMS streams: $(cli put --batch 256 --streams "$STREAMS" "$WORK/urls.txt")"
stop_server
echo "server peak RSS: $(grep 'Maximum resident' "$WORK/time.log" | awk '{print $NF}') kB;" \
  "CPU user $(grep 'User time' "$WORK/time.log" | awk '{print $NF}') s," \
  "system $(grep 'System time' "$WORK/time.log" | awk '{print $NF}') s"
echo "load: $(uptime)"
