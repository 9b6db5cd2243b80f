#!/usr/bin/env bash
# Disk-full soak of `mgz crawl --state`: per round a random synthetic web
# (`mgz sim serve` on 127.0.0.1), the crawl's state and database on a tmpfs
# of START bytes that fills, grown step by step (SIZES) and the same command
# run again after each failure; the stored HTML pages must then equal
# `mgz sim truth` (depth 3). Each failed run must stop with an error naming
# the full device. Needs root (mount). A failing round keeps its directory
# (in /dev/shm) with a copy of the tmpfs.
# Usage: crates/crawl/bench/full_soak.sh ROUNDS [extra crawl args]
#   MGZ=BINARY (default target/release/mgz); SEED=N fixes the first web;
#   HOSTS, PAGES (default 60, 4000); START (default 256k); SIZES (a list).
#   WARC=1 also writes --warc on the tmpfs and reads it whole with
#   `warcio index` at the end (the venv of .ci/install.sh: MGZ_VENV or
#   <repo>/.venv).
set -u
repo=$(cd "$(dirname "$0")/../../.." && pwd)
mgz=${MGZ:-$repo/target/release/mgz}
warcio=${MGZ_VENV:-$repo/.venv}/bin/warcio
rounds=${1:-3}; shift
fails=0
for r in $(seq "$rounds"); do
  port=$((20000 + RANDOM % 10000))
  seed=${SEED:-$RANDOM}; SEED=; hosts=${HOSTS:-60}; pages=${PAGES:-4000}
  web=(--seed "$seed" --hosts "$hosts" --pages "$pages")
  "$mgz" sim serve --listen "127.0.0.1:$port" "${web[@]}" --oversized-bytes 200000 > /dev/null 2>&1 &
  sp=$!
  sleep 0.5
  mnt=$(mktemp -d)
  mount -t tmpfs -o size="${START:-256k}" tmpfs "$mnt" || { echo "cannot mount a tmpfs (needs root)"; kill $sp; exit 2; }
  d=$(mktemp -d -p /dev/shm)
  "$mgz" sim truth --max-depth 3 "${web[@]}" | sort > "$d/truth"
  mapfile -t seeds < <("$mgz" sim seeds "${web[@]}")
  i=0; bad=""
  for size in ${SIZES:-512k 768k 1M 1500k 2M 3M 4M 6M 8M 12M 16M 24M 32M 64M 300M}; do
    i=$((i+1))
    "$mgz" crawl "${seeds[@]}" --scope any --max-depth 3 --delay 0 --per-host 2 --concurrency 16 \
        --no-sitemaps --allow-private --robots-retries 0 --resolve "*.sim=127.0.0.1:$port" \
        --state "$mnt/state" --db "$mnt/pages.db" --json ${WARC:+--warc "$mnt/crawl.warc"} "$@" > "$d/out$i" 2> "$d/err$i"
    rc=$?
    [ $rc = 0 ] && break
    last=$(grep '^mgz: error' "$d/err$i" | tail -1)
    case "$last" in *"o space left"*|*"disk is full"*) ;; *) bad="run $i: $last";; esac
    mount -o remount,size="$size" "$mnt"
  done
  sqlite3 "$mnt/pages.db" "SELECT url FROM pages WHERE status = 200 AND content_type LIKE 'text/html%'" | sort > "$d/got"
  if [ -n "${WARC:-}" ] && ! "$warcio" index "$mnt/crawl.warc" > /dev/null 2>&1; then
    bad="$bad warc unreadable"
  fi
  if [ $rc = 0 ] && [ -z "$bad" ] && cmp -s "$d/got" "$d/truth"; then
    echo "ok round $r (seed $seed): $((i-1)) disk-full stops, truth $(wc -l < "$d/truth") pages"
    rm -rf "$d"
  else
    fails=$((fails+1))
    echo "FAIL round $r (seed $seed): rc $rc after $i runs ${bad:+($bad) }missing $(comm -23 "$d/truth" "$d/got" | wc -l) extra $(comm -13 "$d/truth" "$d/got" | wc -l); kept $d"
    cp -r "$mnt" "$d/mnt"
  fi
  kill $sp; umount "$mnt"; rmdir "$mnt"
done
echo "$fails of $rounds rounds failed"
[ $fails = 0 ]
