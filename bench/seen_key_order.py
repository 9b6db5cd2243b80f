#!/usr/bin/env python3
"""How much key order matters to a front-coded seen set (issue 3's design notes).

Reads keys (`key_bytes()` form, one per line: `mgz bench seen ... --dump-keys
KEYS`), keeps the first copy of each, and front-codes every key against a
reference: in arrival order per host (`hostlog`: the path against the previous
key of the same host, restarting every BLOCK keys of that host; a design whose
log is never rewritten), or in sorted order (`sorted`: the whole key against the
previous key, restarting every BLOCK keys; what compact's runs do). Prints the
plain suffix bytes per key and an order-0 entropy estimate of their coded size.

    python3 bench/seen_key_order.py KEYS [BLOCK]
"""
import collections
import math
import sys


def lcp(a, b):
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def report(name, n, suffix, hist, extra=""):
    total = sum(hist.values())
    h = -sum(c / total * math.log2(c / total) for c in hist.values()) if total else 0.0
    print(f"{name:8} keys {n} plain suffix {suffix / n:.2f} B/key, order-0 entropy "
          f"{h:.2f} bits/byte -> coded suffix ~{suffix * h / 8 / n:.2f} B/key{extra}")


def main():
    path = sys.argv[1]
    block = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    keys, seen = [], set()
    with open(path, "rb") as f:
        for line in f:
            k = line.rstrip(b"\n")
            if k not in seen:
                seen.add(k)
                keys.append(k)
    hosts = {}
    suffix, hist, host_text = 0, collections.Counter(), 0
    for k in keys:
        i = k.find(b"/")
        i = len(k) if i < 0 else i
        host, p = k[:i], k[i:]
        st = hosts.get(host)
        if st is None:
            st = hosts[host] = [0, b""]
            host_text += len(host) + 1
        s = p if st[0] % block == 0 else p[lcp(st[1], p):]
        suffix += len(s)
        hist.update(s)
        st[0] += 1
        st[1] = p
    report("hostlog", len(keys), suffix, hist,
           f"; host names once: {host_text / len(keys):.2f} B/key over {len(hosts)} hosts")
    suffix, hist, prev = 0, collections.Counter(), b""
    for i, k in enumerate(sorted(keys)):
        s = k if i % block == 0 else k[lcp(prev, k):]
        suffix += len(s)
        hist.update(s)
        prev = k
    report("sorted", len(keys), suffix, hist)


if __name__ == "__main__":
    main()
