#!/usr/bin/env bash
# Crawls the Debian postgresql-doc-15 site served by nginx on 127.0.0.1 with
# `mgz crawl --delay 0 --per-host 16` and with `wget2 -r --max-threads=16`,
# RUNS pairs, alternating (which tool goes first alternates too), and prints
# every run's wall, CPU (user + system), peak RSS (/usr/bin/time) and page
# count, then medians and ranges per tool and of the per-pair ratios.
# Usage: bench/nginx_vs_wget2.sh [RUNS] [MGZ_BINARY]
#   WGET2_ARGS='...' adds wget2 options (e.g. --no-robots) for experiments;
#   MGZ_ARGS='...' adds mgz crawl options (e.g. --no-text).
#   SITE=DIR serves another documentation site (see pg_site.sh).
#   OUT=DIR puts both tools' output (mgz state + database, wget2's files) in
#   DIR (default /dev/shm, tmpfs): on the shared ext4 disk wget2's 1,169 file
#   creations cost 0.3-0.5 s of system time whenever other processes write,
#   which made its wall time bimodal (docs/BENCHMARKS.md). OUT=/tmp for disk.
set -euo pipefail
runs=${1:-21}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
mgz=${2:-"$repo/target/release/mgz"}
port=18089
here=$(cd "$(dirname "$0")" && pwd)
source "$here/pg_site.sh"
out=$(mktemp -d -p "${OUT:-/dev/shm}")
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work" "$out"' EXIT
log="$work/runs.tsv"
measure() { # tool, pair, command... → one TSV line
  local tool=$1 pair=$2; shift 2
  # wget2 exits with 8 when the server answered some request with an error
  # (a broken link on the site: python3.11-doc has one); that run counts.
  local rc=0
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" > /dev/null 2> "$work/err" || rc=$?
  if [ "$rc" != 0 ] && ! { [ "$tool" = wget2 ] && [ "$rc" = 8 ]; }; then
    echo "$tool failed ($rc):" >&2; cat "$work/err" >&2; exit 1
  fi
  local pages
  if [ "$tool" = mgz ]; then
    pages=$(sqlite3 "$out/m/pages.db" "select count(*) from pages where content_type like 'text/html%'")
  else
    pages=$(find "$out/w" -name '*.html' | wc -l)
  fi
  # /usr/bin/time puts "Command exited with non-zero status N" first.
  read -r wall user sys rss < <(tail -n 1 "$work/time")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$pair" "$wall" "$user" "$sys" "$rss" "$pages" | tee -a "$log"
}
run_mgz() {
  rm -rf "$out/m"
  pg_crawl_args "$out/m"
  measure mgz "$1" "$mgz" "${crawl_args[@]}"
}
run_wget2() {
  rm -rf "$out/w"
  # shellcheck disable=SC2086
  measure wget2 "$1" wget2 -q -r -l 100 --no-parent --max-threads=16 ${WGET2_ARGS:-} \
    -P "$out/w" "http://127.0.0.1:$port/index.html"
}
echo "# $(date -u +%FT%TZ) out $out load $(cut -d' ' -f1-3 /proc/loadavg); mgz $(git -C "$repo" rev-parse --short HEAD)"
printf 'tool\tpair\twall_s\tuser_s\tsys_s\tpeak_rss_kb\thtml_pages\n'
for i in $(seq "$runs"); do
  if [ $((i % 2)) = 1 ]; then run_mgz "$i"; run_wget2 "$i"; else run_wget2 "$i"; run_mgz "$i"; fi
done
echo "# end load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$here/summary.py" < "$log"
