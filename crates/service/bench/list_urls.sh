#!/usr/bin/env bash
# ListURLs of a whole crawl through `mgz serve`: serves a copy of the
# frontier state STATE (e.g. a crawl's STATE/frontier) on 127.0.0.1:PORT,
# times `mgz frontier list-urls` of every URL, prints the output's md5 (to
# compare binaries) and the time, then stops the server.
# Usage: crates/service/bench/list_urls.sh BINARY STATE PORT
# Session 52's state: `mgz sim urls --count 1000000 --dup-rate 0 > seeds`,
# `mgz crawl --seeds seeds --state S --db D --resolve '*=127.0.0.1:9'
# --allow-private --max-time 20`, then STATE = S/frontier.
set -u
b=$1; state=$2; port=$3
d=$(mktemp -d); cp -r "$state/." "$d"
"$b" serve --state "$d" --listen "127.0.0.1:$port" > "$d.log" 2>&1 &
sp=$!
for _ in $(seq 1 100); do grep -q "Started" "$d.log" && break; sleep 0.2; done
s=$(date +%s.%N)
timeout 900 "$b" frontier --server "127.0.0.1:$port" list-urls --size 4294967295 \
  2> "$d.err" | md5sum
e=$(date +%s.%N)
echo "$b list-urls: $(echo "$e - $s" | bc) s; $(tail -1 "$d.err")"
kill -INT $sp; wait $sp
rm -rf "$d" "$d.log" "$d.err"
