#!/usr/bin/env bash
# Disk-full soak of the frontier: ROUNDS rounds; each mounts a tmpfs of
# START bytes, runs `full_soak` (crates/frontier/examples/full_soak.rs) until
# a write fails, grows the tmpfs a little and runs it again, STEPS times.
# Every run first checks that each URL an earlier run had acknowledged is
# still known. Needs root (mount). Prints one line per run and a verdict
# per round; a failing round keeps its directory.
# KILL=1: no tmpfs (no root needed); each run is SIGKILLed after 0.05-1 s
# instead of filling a disk (the same checks, for kills between a write's
# seen-log frame and its store batch).
# Usage: crates/frontier/bench/full_soak.sh ROUNDS [STEPS]
#   BIN=path to full_soak (default target/release/examples/full_soak)
set -u
repo=$(cd "$(dirname "$0")/../../.." && pwd)
bin=${BIN:-$repo/target/release/examples/full_soak}
rounds=${1:-3}; steps=${2:-12}
fails=0
for r in $(seq "$rounds"); do
  mnt=$(mktemp -d ${KILL:+-p /dev/shm}); acks=$(mktemp -p /dev/shm)
  size=$((192 + RANDOM % 256))
  if [ -z "${KILL:-}" ]; then
    mount -t tmpfs -o size=${size}k tmpfs "$mnt" || { echo "cannot mount a tmpfs (needs root)"; exit 2; }
  fi
  verdict=ok
  for s in $(seq "$steps"); do
    if [ -n "${KILL:-}" ]; then
      "$bin" "$mnt/fr" "$acks" "$s" > "$mnt.out" 2>"$mnt.err$s" &
      pid=$!
      sleep "$(python3 -c 'import random; print(random.uniform(0.05, 1.0))')"
      { kill -9 $pid; wait $pid; } 2>/dev/null; rc=$?
      line=$(head -1 "$mnt.out")
    else
      line=$("$bin" "$mnt/fr" "$acks" "$s" 2>"$mnt.err$s"); rc=$?
    fi
    echo "  round $r run $s (${size}k): $line"
    if [ $rc = 3 ]; then verdict=FAIL; break; fi
    [ $rc = 5 ] && break
    size=$((size + 64 + RANDOM % 512))
    [ -z "${KILL:-}" ] && mount -o remount,size=${size}k "$mnt"
  done
  echo "round $r: $verdict, $(wc -l < "$acks") URLs acknowledged"
  [ -z "${KILL:-}" ] && { cp -r "$mnt" "$mnt.copy"; umount "$mnt"; rmdir "$mnt"; mv "$mnt.copy" "$mnt"; }
  if [ $verdict = ok ]; then rm -rf "$mnt" "$mnt".err* "$mnt.out" "$acks" "$acks".*
  else fails=$((fails + 1)); echo "kept $mnt $acks"; fi
done
echo "$fails of $rounds rounds failed"
[ $fails = 0 ]
