#!/usr/bin/env python3
"""Synthetic crawl-log URLs with realistic duplicates, for bench/dedup.sh.

Stand-in until `mgz sim urls` lands. Deterministic for a given --seed.
Shape: 60k hosts with Zipf-skewed popularity (a few huge sites, a long tail),
paths of 1-3 segments from a 3k-word vocabulary plus ids, some queries;
about 7 % of lines repeat a recent URL (link dumps repeat nav links nearby).
Mean line length is about 47 bytes, like the issue's reference input.

usage: gen_urls.py COUNT [--seed S] > urls.txt
"""
import argparse
import itertools
import random
import sys

TLDS = ["com", "org", "net", "de", "co.uk", "fr", "io", "info", "nl", "jp"]
EXTS = ["", "", "", ".html", ".php", "/"]


def vocabulary(rng, size):
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(4, 10))))
    return sorted(words)


def hosts(rng, words, count):
    out = []
    for i in range(count):
        prefix = rng.choice(["www.", "www.", "", "blog.", "shop.", "en."])
        out.append(f"{prefix}{rng.choice(words)}{i}.{rng.choice(TLDS)}")
    return out


def path(rng, words):
    segs = [rng.choice(words) for _ in range(rng.choice((1, 1, 2, 2, 3)))]
    p = "/" + "/".join(segs)
    r = rng.random()
    if r < 0.6:
        p += f"/{rng.randrange(10_000_000)}"
    p += rng.choice(EXTS)
    if r > 0.85:
        p += f"?{rng.choice(('id', 'page', 'q', 'ref'))}={rng.randrange(100_000)}"
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("count", type=int)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    words = vocabulary(rng, 3000)
    host_names = hosts(rng, words, 60_000)
    weights = list(itertools.accumulate(1.0 / (i + 1) ** 1.1 for i in range(len(host_names))))
    recent = []
    out = sys.stdout
    batch = []
    for _ in range(args.count):
        if recent and rng.random() < 0.07:
            url = recent[int(len(recent) * (1 - rng.random() ** 3)) - 1]
        else:
            host = rng.choices(host_names, cum_weights=weights)[0]
            scheme = "https" if rng.random() < 0.8 else "http"
            url = f"{scheme}://{host}{path(rng, words)}"
            recent.append(url)
            if len(recent) > 200_000:
                del recent[:100_000]
        batch.append(url)
        if len(batch) >= 100_000:
            out.write("\n".join(batch) + "\n")
            batch.clear()
    if batch:
        out.write("\n".join(batch) + "\n")


if __name__ == "__main__":
    main()
