#!/usr/bin/env bash
# The crawler loop alone under `mgz serve`: PutDiscovered of N URLs over HOSTS hosts (batches of
# 256, 2 streams), crawl delay 0, then GetURLs 100 per queue with every served URL completed by
# PutURLs until all N are served; prints both rates, the server's peak RSS and CPU.
# Usage: crawler_loop.sh N HOSTS (MGZ=binary to test another build; see bench_env.sh).
# WINDOWS=1 also prints, per 10 s of the loop: GetURLs calls, URLs served, empty answers.
set -euo pipefail
N=$1
HOSTS=$2
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
start_server "$WORK/s" "$WORK/time.log"
echo "PutDiscovered: $(cli put --batch 256 --streams 2 "$WORK/urls.txt")"
cli set-delay 0
echo "GetURLs (crawler loop, 100/queue, completing): $(cli get --total "$N" --max-queues 0 --per-queue 100 --complete --quiet --log-calls 2> "$WORK/calls.log"; grep -v '^call ' "$WORK/calls.log")"
if [ -n "${WINDOWS:-}" ]; then
  echo "per 10 s of the loop (from, calls, URLs, empty):"
  awk '/^call /{w=int($4/10); c[w]++; u[w]+=$6; if($6==0)e[w]++; if(w>m)m=w} END{for(i=0;i<=m;i++) if(c[i]) printf "  %d s: %d calls, %d URLs, %d empty\n", i*10, c[i], u[i], e[i]}' "$WORK/calls.log"
fi
stop_server
log="$WORK/time.log"
echo "server peak RSS: $(grep 'Maximum resident' "$log" | awk '{print $NF}') kB; CPU user $(grep 'User time' "$log" | awk '{print $NF}') s, system $(grep 'System time' "$log" | awk '{print $NF}') s"
echo "load: $(uptime)"
