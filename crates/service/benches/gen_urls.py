#!/usr/bin/env python3
"""Writes N distinct URLs, one per line, for the `mgz serve` benchmark.

Hosts follow a Zipf-like law (a few big sites, a long tail), paths mix words,
numeric ids and query strings, like outlinks of real pages; the run is
deterministic (seeded). Usage: gen_urls.py N HOSTS > urls.txt
"""
import random
import sys

WORDS = ("news article product category search user page item blog tag about "
         "help archive video photo wiki docs story sport world science").split()
TLDS = ["com", "org", "net", "de", "co.uk", "fr", "io", "info"]


def main():
    n, hosts = int(sys.argv[1]), int(sys.argv[2])
    rnd = random.Random(42)
    weights = [1.0 / (h + 1) ** 0.8 for h in range(hosts)]
    names = [f"{'www.' if h % 3 else ''}site{h}.{TLDS[h % len(TLDS)]}" for h in range(hosts)]
    picks = rnd.choices(range(hosts), weights=weights, k=n)
    out = sys.stdout
    for i, h in enumerate(picks):
        a, b = rnd.choice(WORDS), rnd.choice(WORDS)
        if i % 4 == 0:
            path = f"/{a}/{b}?id={i}&ref={rnd.randrange(1000)}"
        elif i % 4 == 1:
            path = f"/{a}/{i}/{b}-{rnd.randrange(10**6)}.html"
        else:
            path = f"/{a}/{b}/{i}"
        out.write(f"https://{names[h]}{path}\n")


if __name__ == "__main__":
    main()
