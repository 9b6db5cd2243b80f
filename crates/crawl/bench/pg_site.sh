# Sourced by nginx_vs_wget2.sh and ab.sh: serves the Debian postgresql-doc-15
# HTML (or SITE=DIR, another documentation site with an index.html, such as
# python3.11-doc's /usr/share/doc/python3.11/html) with nginx on
# 127.0.0.1:$port from a fresh $work directory, removed (and nginx stopped)
# on exit. Callers set `port` first.
site=${SITE:-/usr/share/doc/postgresql-doc-15/html}
work=$(mktemp -d)
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
# The benchmarks' crawl of the site (politeness off) with its state and
# database in DIR: `pg_crawl_args DIR` sets `crawl_args`, then run
# `"$mgz" "${crawl_args[@]}"`. DEPTH (default 100) caps the link depth;
# MGZ_ARGS adds mgz crawl options (e.g. --no-text).
pg_crawl_args() {
  crawl_args=(crawl http://pg.test/index.html --resolve "pg.test=127.0.0.1:$port" --allow-private
    --delay 0 --per-host 16 --concurrency 32 --max-depth "${DEPTH:-100}" --loose-depth
    --state "$1/state" --db "$1/pages.db" --json)
  # shellcheck disable=SC2206 # MGZ_ARGS is split into options on purpose
  crawl_args+=(${MGZ_ARGS:-})
}
