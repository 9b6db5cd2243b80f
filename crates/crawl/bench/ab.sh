#!/usr/bin/env bash
# Before/after for the crawler: serves the Debian postgresql-doc-15 site with
# nginx on 127.0.0.1 (as nginx_vs_wget2.sh does) and runs the same
# `mgz crawl` (politeness off) with each given binary, alternating, RUNS
# times, printing wall, CPU (user + system) and peak RSS from /usr/bin/time.
# Usage: bench/ab.sh RUNS BIN_A BIN_B...   (keep old binaries as copies)
set -euo pipefail
runs=$1; shift
site=/usr/share/doc/postgresql-doc-15/html
work=$(mktemp -d)
port=18090
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
cat > "$work/nginx.conf" <<CONF
daemon off; master_process off; worker_processes 1; pid $work/nginx.pid; error_log $work/error.log;
events { worker_connections 1024; }
http { include /etc/nginx/mime.types; access_log off; keepalive_requests 100000;
  client_body_temp_path $work/t1; proxy_temp_path $work/t2; fastcgi_temp_path $work/t3; uwsgi_temp_path $work/t4; scgi_temp_path $work/t5;
  server { listen 127.0.0.1:$port; root $site; index index.html; } }
CONF
nginx -p "$work" -c "$work/nginx.conf" &
sleep 1
for i in $(seq "$runs"); do
  for bin in "$@"; do
    rm -rf "$work/m"
    /usr/bin/time -f "$(basename "$bin") wall=%e cpu_s=%U+%S peak_rss_kb=%M" \
      "$bin" crawl http://pg.test/index.html --resolve "pg.test=127.0.0.1:$port" --allow-private \
      --delay 0 --per-host 16 --concurrency 32 --max-depth 100 --loose-depth \
      --state "$work/m/state" --db "$work/m/pages.db" --json 2>&1 >/dev/null | tail -1 |
      sed "s/\$/ load=$(cut -d' ' -f1 /proc/loadavg)/"
  done
done
