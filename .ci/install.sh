#!/usr/bin/env bash
# Installs the system packages and Python reference tools some tests use.
# Each step is best-effort: a test that needs a missing tool says so and skips.
set -uo pipefail
cd "$(dirname "$0")/.."

apt_packages=$(grep -v '^#' .ci/apt-packages.txt 2>/dev/null | tr '\n' ' ')
if [ -n "${apt_packages// }" ]; then
  missing=""
  for p in $apt_packages; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "== apt-get install$missing"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) \
      >/tmp/mgz-apt.log 2>&1 || echo "warning: apt-get install failed (see /tmp/mgz-apt.log)"
  fi
fi

# Python reference implementations (surt, warcio, grpcio) in a venv the tests find
# through MGZ_VENV (default .venv in the repo root).
if [ -s .ci/requirements.txt ]; then
  venv="${MGZ_VENV:-$PWD/.venv}"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/pip" install -q -r .ci/requirements.txt >/dev/null 2>&1; then
    echo "== python venv at $venv"
    (python3 -m venv "$venv" && "$venv/bin/pip" install -q -r .ci/requirements.txt) \
      >/tmp/mgz-pip.log 2>&1 || echo "warning: venv setup failed (see /tmp/mgz-pip.log)"
  fi
fi
exit 0
