#!/usr/bin/env bash
# Does serving the status page slow a crawl? Runs `mgz demo` (in-process
# synthetic web, same seed every run) alternately without and with
# `--status`, the latter polled for /status.json and / every 0.5 s (4x more
# often than the page's own refresh), and prints pages/s of each run and the
# ratio of the medians. Usage: bench/status_overhead.sh [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-3}
mgz=${MGZ:-target/release/mgz}
[ -x "$mgz" ] || cargo build --release -p mgz
port=$((20000 + RANDOM % 20000))
run() {
  if [ "$1" = with ]; then
    ( while sleep 0.5; do
        curl -s "http://127.0.0.1:$port/status.json" >/dev/null || true
        curl -s "http://127.0.0.1:$port/" >/dev/null || true
      done ) &
    poller=$!
    "$mgz" demo --json --status "127.0.0.1:$port" 2>/dev/null | tail -1
    kill "$poller" 2>/dev/null || true
  else
    "$mgz" demo --json 2>/dev/null | tail -1
  fi
}
for i in $(seq "$pairs"); do
  for mode in without with; do
    pps=$(run "$mode" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pages_per_s"])')
    echo "$mode $pps"
  done
done | tee /tmp/status_overhead.txt
python3 - <<'PY'
import statistics
rows=[l.split() for l in open('/tmp/status_overhead.txt')]
w=[float(v) for m,v in rows if m=='with']; wo=[float(v) for m,v in rows if m=='without']
print(f"median pages/s without {statistics.median(wo):.1f}, with {statistics.median(w):.1f}, "
      f"ratio {statistics.median(w)/statistics.median(wo):.3f}")
PY
