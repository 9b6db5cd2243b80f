#!/usr/bin/env python3
"""URL-list statistics for calibrating `mgz sim urls` (see crates/sim/README.md).

usage: stats.py NAME FILE [NAME FILE ...]      one URL per line, in discovery order
       stats.py --pg-hrefs DIR > FILE          print every <a href> of an HTML doc tree,
                                               resolved as if served at http://www.postgresql.org/docs/15/
Prints one markdown table, one column per list.
"""
import gzip, html.parser, os, statistics, sys, urllib.parse
from collections import Counter


class Hrefs(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            for k, v in attrs:
                if k == "href" and v:
                    self.hrefs.append(v)


def pg_hrefs(root):
    base = "http://www.postgresql.org/docs/15/"
    for name in sorted(os.listdir(root)):
        if not name.endswith(".html"):
            continue
        p = Hrefs()
        with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
            p.feed(f.read())
        for h in p.hrefs:
            url = urllib.parse.urljoin(base + name, h.strip())
            url = urllib.parse.urldefrag(url)[0]
            if url.startswith("http"):
                print(url)


def pct(xs, q):
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def stats(urls):
    lens = sorted(len(u) for u in urls)
    hosts = Counter(urllib.parse.urlsplit(u).netloc.lower() for u in urls)
    uniq = sorted(set(urls))
    raw = ("\n".join(uniq) + "\n").encode()
    lcp = [len(os.path.commonprefix([a, b])) for a, b in zip(uniq, uniq[1:])]
    top = hosts.most_common(1)[0][1]
    return [
        ("URLs", f"{len(urls):,}"),
        ("distinct URLs", f"{len(uniq):,} ({100 * len(uniq) / len(urls):.1f}%)"),
        ("length mean", f"{statistics.mean(lens):.1f}"),
        ("length p10 / p50 / p90 / max", f"{pct(lens, .1)} / {pct(lens, .5)} / {pct(lens, .9)} / {lens[-1]}"),
        ("hosts", f"{len(hosts):,}"),
        ("URLs per host: mean / top host share", f"{len(urls) / len(hosts):,.1f} / {100 * top / len(urls):.1f}%"),
        ("share with a query", f"{100 * sum('?' in u for u in urls) / len(urls):.1f}%"),
        ("shared prefix with predecessor (sorted, mean)", f"{statistics.mean(lcp) if lcp else 0:.1f} bytes"),
        ("gzip -9 of sorted distinct list", f"{len(gzip.compress(raw, 9)) / len(raw):.3f} ({8 * len(gzip.compress(raw, 9)) / len(uniq):.1f} bits/URL)"),
    ]


def main(argv):
    if argv[:1] == ["--pg-hrefs"]:
        pg_hrefs(argv[1])
        return
    cols = []
    for name, path in zip(argv[::2], argv[1::2]):
        with open(path, encoding="utf-8", errors="replace") as f:
            cols.append((name, stats([l.strip() for l in f if l.strip()])))
    print("| statistic | " + " | ".join(n for n, _ in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for i, (label, _) in enumerate(cols[0][1]):
        print(f"| {label} | " + " | ".join(c[i][1] for _, c in cols) + " |")


main(sys.argv[1:])
