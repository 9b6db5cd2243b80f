#!/usr/bin/env bash
# Disk-full soak of the frontier: ROUNDS rounds; each mounts a tmpfs of
# START bytes, runs `full_soak` (crates/frontier/examples/full_soak.rs) until
# a write fails, grows the tmpfs a little and runs it again, STEPS times.
# Every run first checks that each URL an earlier run had acknowledged is
# still known. Needs root (mount). Prints one line per run and a verdict
# per round; a failing round keeps its directory.
# Usage: crates/frontier/bench/full_soak.sh ROUNDS [STEPS]
#   BIN=path to full_soak (default target/release/examples/full_soak)
set -u
repo=$(cd "$(dirname "$0")/../../.." && pwd)
bin=${BIN:-$repo/target/release/examples/full_soak}
rounds=${1:-3}; steps=${2:-12}
fails=0
for r in $(seq "$rounds"); do
  mnt=$(mktemp -d); acks=$(mktemp -p /dev/shm)
  size=$((192 + RANDOM % 256))
  mount -t tmpfs -o size=${size}k tmpfs "$mnt" || { echo "cannot mount a tmpfs (needs root)"; exit 2; }
  verdict=ok
  for s in $(seq "$steps"); do
    line=$("$bin" "$mnt/fr" "$acks" "$s" 2>"$mnt.err$s"); rc=$?
    echo "  round $r run $s (${size}k): $line"
    if [ $rc = 3 ]; then verdict=FAIL; break; fi
    [ $rc = 5 ] && break
    size=$((size + 64 + RANDOM % 512))
    mount -o remount,size=${size}k "$mnt"
  done
  echo "round $r: $verdict, $(wc -l < "$acks") URLs acknowledged"
  if [ $verdict = ok ]; then umount "$mnt"; rm -rf "$mnt" "$mnt".err* "$acks" "$acks.failed" "$acks.failed.old"
  else fails=$((fails + 1)); cp -r "$mnt" "$mnt.kept"; umount "$mnt"; echo "kept $mnt.kept $acks"; fi
done
echo "$fails of $rounds rounds failed"
[ $fails = 0 ]
