#!/bin/bash
# Crawls a site of large pages served by nginx on 127.0.0.1, to measure what
# bodies in flight cost: an index linking PAGES (120) HTML pages of MIB (9)
# MiB each, generated once under $SITE (/dev/shm/mgz-big-pages).
#
# Usage: bench/big_pages.sh MGZ_BINARY [crawl options, e.g. --concurrency 128
#        --per-host 128 --body-memory 128]
# Prints /usr/bin/time's wall, CPU and peak RSS and the crawl's own figures.
set -euo pipefail
mgz=$1; shift
pages=${PAGES:-120}; mib=${MIB:-9}
export SITE=${SITE:-/dev/shm/mgz-big-pages}
if [ ! -f "$SITE/p$((pages - 1)).html" ]; then
  python3 - "$SITE" "$pages" "$mib" <<'PY'
import os, sys
d, n, mb = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
os.makedirs(d, exist_ok=True)
para = ("<p>" + " ".join(f"word{i % 97} text{i % 13}" for i in range(200)) + "</p>\n").encode()
body = para * int(mb * 1024 * 1024 / len(para))
with open(f"{d}/index.html", "w") as f:
    f.write("<html><head><title>big</title></head><body>\n")
    f.writelines(f'<a href="p{i}.html">p{i}</a>\n' for i in range(n))
    f.write("</body></html>\n")
for i in range(n):
    with open(f"{d}/p{i}.html", "wb") as f:
        f.write(b"<html><head><title>page %d</title></head><body>\n" % i + body + b"</body></html>\n")
PY
fi
port=18097
here=$(cd "$(dirname "$0")" && pwd)
source "$here/pg_site.sh"
out=$(mktemp -d -p /dev/shm)
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work" "$out"' EXIT
/usr/bin/time -f "%e s wall, %U s user, %S s system, %M KB peak RSS" -o "$out/time" \
  "$mgz" crawl http://big.test/index.html --resolve "big.test=127.0.0.1:$port" --allow-private \
  --delay 0 --state "$out/state" --db "$out/pages.db" --json "$@" > "$out/summary.json"
cat "$out/time"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print({k: d[k] for k in ['pages_fetched', 'pages_stored', 'bytes', 'peak_rss_bytes']})" "$out/summary.json"
