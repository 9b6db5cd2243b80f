#!/usr/bin/env bash
# Ceiling of the service layer (docs/BENCHMARKS.md, "URLFrontier service", ceiling table).
# Usage: crates/service/benches/serve_ceiling.sh N [HOSTS] [REPS]
#   (after cargo build --release -p mgz -p mgz-service --examples; OLD_MGZ=path adds a run of an
#   older mgz build, server and client, against the same store settings)
# Each repetition, back to back on one URL file, PutDiscovered in batches of 256 (mgz frontier put):
#   library: direct_put put-only: the file into Frontier::put_discovered_nowait as the server
#            writes it (16,384-URL chunks), hash seen set, Durability::OsBuffer (no fsync)
#   serve:   mgz serve --seen hash --commit-ms 0 (the same store settings) + mgz frontier put
#   null:    examples/null_serve (mgz serve's gRPC stack and item conversion, no store) + put
# Prints URLs/s and CPU seconds of server and client (from /proc and /usr/bin/time).
set -euo pipefail
N=${1:-1000000}
HOSTS=${2:-20000}
REPS=${3:-1}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
MGZ=$ROOT/target/release/mgz
NULL=$ROOT/target/release/examples/null_serve
DIRECT=$ROOT/target/release/examples/direct_put
WORK=$(mktemp -d -p "$ROOT/target")
trap 'rm -rf "$WORK"' EXIT
PORT=$((20000 + RANDOM % 20000))
TICK=$(getconf CLK_TCK)
python3 "$ROOT/crates/service/benches/gen_urls.py" "$N" "$HOSTS" > "$WORK/urls.txt"

cpu() { awk -v t="$TICK" '{printf "%.2f", ($14 + $15) / t}' "/proc/$1/stat"; }
start() { # $1 = log, rest = server command
  local log=$1; shift
  "$@" 2> "$log" & SERVER=$!
  for _ in $(seq 200); do grep -q "Started URLFrontierServer" "$log" && return; sleep 0.1; done
  echo "server did not start" >&2; cat "$log" >&2; exit 1
}
measure() { # $1 = label, $2 = client binary; server already started on $PORT
  local before after out client
  before=$(cpu $SERVER)
  out=$(/usr/bin/time -f "%U %S" -o "$WORK/client.time" \
    "$2" frontier --server 127.0.0.1:$PORT put --batch 256 "$WORK/urls.txt")
  after=$(cpu $SERVER)
  client=$(awk '{printf "%.2f", $1 + $2}' "$WORK/client.time")
  echo "$1: $out | server CPU $(echo "$after - $before" | bc) s, client CPU $client s"
  kill -TERM $SERVER; wait $SERVER || true
  PORT=$((PORT + 1))
}

echo "load: $(uptime)"
for rep in $(seq "$REPS"); do
  echo "--- repetition $rep"
  rm -rf "$WORK/lib"
  echo "library: $("$DIRECT" "$WORK/urls.txt" "$WORK/lib" 16384 osbuffer put-only seen=hash)"
  rm -rf "$WORK/lib" "$WORK/s"
  start "$WORK/serve.log" "$MGZ" serve --listen 127.0.0.1:$PORT --state "$WORK/s" --seen hash --commit-ms 0
  measure "serve (hash, OsBuffer)" "$MGZ"
  rm -rf "$WORK/s"
  start "$WORK/null.log" "$NULL" 127.0.0.1:$PORT
  measure "null store" "$MGZ"
  if [ -n "${OLD_MGZ:-}" ]; then
    start "$WORK/old.log" "$OLD_MGZ" serve --listen 127.0.0.1:$PORT --state "$WORK/s" --seen hash --commit-ms 0
    measure "old build: serve (hash, OsBuffer)" "$OLD_MGZ"
    rm -rf "$WORK/s"
  fi
done
echo "load: $(uptime)"
