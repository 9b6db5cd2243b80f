#!/usr/bin/env bash
# A 1M-page crawl of the synthetic web (mgz-sim) across HOSTS hosts, for the
# crawler's memory bound (peak RSS < 1 GB). The sim serves in its own process;
# the crawler runs under /usr/bin/time -v, and its RSS is sampled every
# SAMPLE seconds next to the pages it has fetched (from its log lines).
# Usage: bench/million.sh [PAGES] [HOSTS] [WORKDIR]   (MGZ=BINARY, default target/release/mgz)
# DELAY=MS sets --delay (default 0: politeness off); LATENCY=MS makes the
# sim answer that much later (default 0: loopback speed); PER_HOST=N sets
# --per-host (default 2); ROBOTS=1 obeys robots.txt (default: ignored);
# NOFILE=N runs the crawl under an open-file limit of N, soft and hard
# (default: the hard limit); EXTRA="..." adds crawl flags (--max-connections 0).
# Output: WORKDIR/time.txt, WORKDIR/rss.csv (elapsed_s,rss_kb,sockets,fds,log line),
# WORKDIR/summary.json. Politeness is off (--delay 0, robots ignored, so no
# Crawl-delay): this measures memory and throughput, not manners.
# SAMPLE=S samples RSS, open sockets and all descriptors every S seconds (default 15).
set -euo pipefail
pages=${1:-1000000}
hosts=${2:-10000}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
work=${3:-$repo/target/million}
mgz=${MGZ:-$repo/target/release/mgz}
port=${PORT:-18123}
sample=${SAMPLE:-15}
rm -rf "$work" && mkdir -p "$work"
ulimit -n "${NOFILE:-$(ulimit -Hn)}"
"$mgz" sim serve --listen "127.0.0.1:$port" --hosts "$hosts" --pages "$pages" \
  --log-capacity 1000 --oversized-bytes 262144 --latency-ms "${LATENCY:-0}" > "$work/sim.log" 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null || true' EXIT
sleep 2
"$mgz" sim seeds --hosts "$hosts" --pages "$pages" > "$work/seeds.txt"
/usr/bin/time -v -o "$work/time.txt" "$mgz" crawl --seeds "$work/seeds.txt" \
  --resolve "*.sim=127.0.0.1:$port" --allow-private --scope any --max-depth 1000 \
  --loose-depth --delay "${DELAY:-0}" --per-host "${PER_HOST:-2}" --concurrency 128 $( [ "${ROBOTS:-0}" = 1 ] || echo --ignore-robots) --no-sitemaps \
  --max-pages "$pages" ${EXTRA:-} --state "$work/state" --db "$work/pages.db" --json \
  > "$work/summary.json" 2> "$work/crawl.log" &
timer=$!
start=$(date +%s)
echo "elapsed_s,rss_kb,sockets,fds,last_log_line" > "$work/rss.csv"
while kill -0 $timer 2>/dev/null; do
  sleep "$sample"
  pid=$(pgrep -P $timer | head -1 || true)
  rss=$( [ -n "$pid" ] && awk '/VmRSS/{print $2}' /proc/$pid/status 2>/dev/null || echo 0)
  socks=$( [ -n "$pid" ] && find /proc/$pid/fd -lname 'socket:*' 2>/dev/null | wc -l || echo 0)
  fds=$( [ -n "$pid" ] && ls /proc/$pid/fd 2>/dev/null | wc -l || echo 0)
  echo "$(( $(date +%s) - start )),${rss:-0},${socks:-0},${fds:-0},\"$(tail -c 300 "$work/crawl.log" | tr '\r' '\n' | grep -v '^$' | tail -1)\"" >> "$work/rss.csv"
done
wait $timer || true
grep -E "Elapsed|Maximum resident" "$work/time.txt"
cat "$work/summary.json"
du -sh "$work/state" "$work/pages.db"
