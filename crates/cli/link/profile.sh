#!/usr/bin/env bash
# Regenerates order.txt: the functions the release `mgz` binary runs in a
# crawl, hottest first, by mangled name (see `cc` and `order.awk` beside it).
# Runs the nginx benchmark's crawl of the PostgreSQL documentation
# (`pg_crawl_args` of crates/crawl/bench/pg_site.sh; needs nginx and
# postgresql-doc-15) under callgrind (~7 minutes), counts each function's
# own instructions, and keeps the ones `nm` finds in the binary.
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
    "$bin" "${crawl_args[@]}" > /dev/null 2> "$out/err"
nm --defined-only "$bin" | awk '$2 ~ /^[tTwW]$/ {print $3}' > "$out/syms"
python3 - "$out/cg" "$out/syms" "$(basename "$bin")" > "$out/order.txt" <<'PY'
import re, sys
from collections import Counter
cg, syms, exe = sys.argv[1:]
defined = set(open(syms).read().split())
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
seen = set()
for name, _ in sorted(cost.items(), key=lambda kv: -kv[1]):
    if name in defined and name not in seen:
        seen.add(name)
        print(name)
PY
mv "$out/order.txt" "$here/order.txt"
echo "$(wc -l < "$here/order.txt") functions in $here/order.txt; relink with:"
echo "  touch crates/cli/src/main.rs && cargo build --release -p mgz"
