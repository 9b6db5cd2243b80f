#!/usr/bin/env bash
# Kill-and-resume soak of `mgz crawl --state`: for ROUNDS random synthetic
# webs (`mgz sim serve` on 127.0.0.1, 20-99 hosts, 1,000-3,999 pages), start
# the crawl KILLS times and send it SIG (default KILL) after 0.02-2.5 s, then
# let one last run finish; the stored HTML pages must equal `mgz sim truth`
# (depth 3). Longer and more random than the test suite's
# crates/cli/tests/crawl_resume.rs; prints one line per round and the
# failures (their directories are kept in /dev/shm).
# Usage: crates/crawl/bench/kill_soak.sh ROUNDS KILLS [extra crawl args]
#   SIG=INT|TERM    Ctrl-C or SIGTERM instead of SIGKILL (prints each run's
#                   exit code and time)
#   WARC=1          also write --warc and read it with `warcio index` (the
#                   venv of .ci/install.sh: MGZ_VENV or <repo>/.venv)
#   SITEMAPS=1      read robots.txt sitemaps (the truth follows them too)
#   DEEPEN=1        first crawl to --max-depth 1 to its end, then kill and
#                   resume at depth 3 (the links kept in STATE/edge)
#   MGZ=BINARY      (default target/release/mgz)
# Not for --loose-depth: it may reach a page at more than its least depth,
# so a depth-3 crawl can miss truth pages by design.
set -u
repo=$(cd "$(dirname "$0")/../../.." && pwd)
mgz=${MGZ:-$repo/target/release/mgz}
warcio=${MGZ_VENV:-$repo/.venv}/bin/warcio
rounds=$1; kills=$2; shift 2
port=$((20000 + RANDOM % 10000))
nosm=--no-sitemaps; [ -n "${SITEMAPS:-}" ] && nosm=
fails=0
for r in $(seq "$rounds"); do
  seed=$RANDOM; hosts=$((20 + RANDOM % 80)); pages=$((1000 + RANDOM % 3000))
  web=(--seed "$seed" --hosts "$hosts" --pages "$pages")
  "$mgz" sim serve --listen "127.0.0.1:$port" "${web[@]}" --oversized-bytes 200000 > /dev/null 2>&1 &
  sp=$!
  sleep 0.5
  d=$(mktemp -d -p /dev/shm)
  "$mgz" sim truth --max-depth 3 ${SITEMAPS:+--follow-sitemaps} "${web[@]}" | sort > "$d/truth"
  mapfile -t seeds < <("$mgz" sim seeds "${web[@]}")
  run() {
    exec "$mgz" crawl "${seeds[@]}" --scope any --max-depth "${depth:-3}" --delay 0 --per-host 2 --concurrency 16 \
      $nosm --allow-private --robots-retries 0 --resolve "*.sim=127.0.0.1:$port" \
      --state "$d/state" --db "$d/pages.db" --json ${WARC:+--warc "$d/crawl.warc"} "$@" > "$d/out" 2> "$d/err"
  }
  k=0
  if [ -n "${DEEPEN:-}" ]; then depth=1; ( run "$@" ) || echo "  depth-1 run failed"; depth=3; fi
  for _ in $(seq "$kills"); do
    ( run "$@" ) &
    cp=$!
    sleep "$(python3 -c 'import random; print(random.uniform(0.02, 2.5))')"
    if kill -0 "$cp" 2>/dev/null; then
      kill "-${SIG:-KILL}" "$cp"; k=$((k + 1))
      if [ "${SIG:-KILL}" != KILL ]; then
        t0=$(date +%s%N); wait "$cp"; rc=$?
        echo "  SIG${SIG}: exit $rc after $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$d/signals"
      fi
    fi
    wait "$cp" 2>/dev/null
  done
  ( run "$@" ); rc=$?
  sqlite3 "$d/pages.db" "SELECT url FROM pages WHERE status = 200 AND content_type LIKE 'text/html%'" | sort > "$d/got"
  warc=ok
  if [ -n "${WARC:-}" ]; then
    if [ ! -x "$warcio" ]; then warc="unchecked (no $warcio)"
    elif ! "$warcio" index "$d/crawl.warc" > "$d/index" 2> "$d/warcio.err"; then warc=unreadable; fi
  fi
  [ -f "$d/signals" ] && cat "$d/signals"
  if [ "$rc" != 0 ] || [ "$warc" = unreadable ] || ! cmp -s "$d/got" "$d/truth"; then
    fails=$((fails + 1))
    echo "FAIL round $r (${web[*]}): rc $rc, $k signals, warc $warc, missing $(comm -23 "$d/truth" "$d/got" | wc -l), extra $(comm -13 "$d/truth" "$d/got" | wc -l); kept $d"
  else
    echo "ok round $r (${web[*]}): $k signals, truth $(wc -l < "$d/truth") pages, warc $warc"
    rm -rf "$d"
  fi
  kill "$sp"; wait "$sp" 2>/dev/null
done
echo "rounds $rounds, failures $fails"
[ "$fails" = 0 ]
