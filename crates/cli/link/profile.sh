#!/usr/bin/env bash
# Regenerates order.txt: the functions the release `mgz` binary runs in a
# crawl, by mangled name (see `cc` and `order.awk` beside it), in three
# stretches: those that run only once the crawl is set up, those that run
# both then and during set-up, and those that ran only during set-up (each
# hottest first). The crawl drops its code pages when set-up ends and every
# 100 ms after (`code_pages.rs`), and the kernel maps code back by 64 KiB
# windows: so the crawl's code is the first two stretches, set-up's the
# last two, and neither brings the other's back with it.
# Runs the nginx benchmark's crawl of the PostgreSQL documentation
# (`pg_crawl_args` of crates/crawl/bench/pg_site.sh; needs nginx and
# postgresql-doc-15) under callgrind (~9 minutes), which writes its counts
# when set-up ends (on entering `release_code_pages`) and at exit, counts
# each function's own instructions in each part, and keeps the functions
# `nm` finds in the binary.
# Usage: crates/cli/link/profile.sh [MGZ_BINARY]   (default target/release/mgz)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
bin=${1:-"$repo/target/release/mgz"}
port=18091
source "$repo/crates/crawl/bench/pg_site.sh"
out=$(mktemp -d -p "${OUT:-/dev/shm}")
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work" "$out"' EXIT
pg_crawl_args "$out/m"
# MGZ_CODE_PAGES=keep: the crawl's code-page release does not change what
# runs, and valgrind need not see it.
MGZ_CODE_PAGES=keep valgrind --tool=callgrind --demangle=no --callgrind-out-file="$out/cg" \
    --dump-before='_ZN3mgz9crawl_cmd18release_code_pages*' \
    "$bin" "${crawl_args[@]}" > /dev/null 2> "$out/err"
if [ ! -s "$out/cg.1" ]; then
    echo "no count at the end of set-up: is crawl_cmd::release_code_pages still a function?" >&2
    exit 1
fi
nm --defined-only "$bin" | awk '$2 ~ /^[tTwW]$/ {print $3}' > "$out/syms"
# cg.1: set-up; cg: the crawl and its close.
python3 - "$out/cg" "$out/cg.1" "$out/syms" "$(basename "$bin")" > "$out/order.txt" <<'PY'
import re, sys
from collections import Counter
crawl, setup, syms, exe = sys.argv[1:]
defined = set(open(syms).read().split())

def costs(cg):
    """Each function's own instructions in one callgrind output."""
    names, objs, cost = {}, {}, Counter()
    fn, ob, after_call = None, "", False
    for line in open(cg):
        m = re.match(r"(c?)(ob|fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if m:
            table = objs if m[2] == "ob" else names
            if m[4]:
                table[m[3]] = m[4]
            if not m[1]:
                if m[2] == "ob":
                    ob = objs.get(m[3], "")
                else:
                    fn = names[m[3]] if ob.endswith(exe) else None
                    if fn:
                        cost[fn] += 0
            continue
        if line.startswith("calls="):
            after_call = True  # the next cost line is the call's inclusive cost
            continue
        if line[:1].isdigit() or line[:1] in "+-*":
            if after_call:
                after_call = False
            elif fn:
                parts = line.split()
                if len(parts) > 1 and parts[1].isdigit():
                    cost[fn] += int(parts[1])
    return cost

crawl, setup = costs(crawl), costs(setup)
def hottest(part, keep):
    return [n for n, _ in sorted(part.items(), key=lambda kv: -kv[1]) if n in defined and keep(n)]
# The crawl's own, then those it shares with set-up, then set-up's own: each
# phase's functions are one stretch of the layout.
for name in (hottest(crawl, lambda n: n not in setup)
             + hottest(crawl, lambda n: n in setup)
             + hottest(setup, lambda n: n not in crawl)):
    print(name)
PY
mv "$out/order.txt" "$here/order.txt"
echo "$(wc -l < "$here/order.txt") functions in $here/order.txt; relink with:"
echo "  touch crates/cli/src/main.rs && cargo build --release -p mgz"
