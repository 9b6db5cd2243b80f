# Sourced by serve_bench.sh and serve_bench_large.sh (set N and HOSTS first): paths, a scratch
# WORK directory removed on exit, N URLs over HOSTS hosts in $WORK/urls.txt, a loopback PORT,
# and start_server / stop_server / cli. SERVE_ARGS adds flags to `mgz serve` (e.g. "--store-workers 2").
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
MGZ=${MGZ:-$ROOT/target/release/mgz}
DIRECT=${DIRECT:-$ROOT/target/release/examples/direct_put}
NULL=${NULL:-$ROOT/target/release/examples/null_serve}
mkdir -p "$ROOT/target/scratch"
WORK=$(mktemp -d -p "$ROOT/target/scratch")
trap 'rm -rf "$WORK"' EXIT
PORT=$((20000 + RANDOM % 20000))
python3 "$ROOT/crates/service/benches/gen_urls.py" "$N" "$HOSTS" > "$WORK/urls.txt"
# The file (~0.7 GB at 10M) reaches the disk now, not while the server's journal is fsynced.
sync
echo "load: $(uptime)"

start_server() { # $1 = state dir, $2 = time log [, $3 = server binary instead of mgz serve]
  if [ -n "${3:-}" ]; then
    /usr/bin/time -v "$3" 127.0.0.1:$PORT 2> "$2" &
  else
    /usr/bin/time -v "$MGZ" serve --listen 127.0.0.1:$PORT --state "$1" ${SERVE_ARGS:-} 2> "$2" &
  fi
  SERVER=$!
  for _ in $(seq 100); do grep -q "Started URLFrontierServer" "$2" && return; sleep 0.1; done
  echo "server did not start" >&2; cat "$2" >&2; exit 1
}
stop_server() { kill -TERM "$(pgrep -P $SERVER)"; wait $SERVER || true; }
cli() { "$MGZ" frontier --server 127.0.0.1:$PORT "$@"; }
