#!/usr/bin/env python3
"""A real URL list: every href of Debian's postgresql-doc-15 HTML, in page order,
resolved against the page's URL on www.postgresql.org, for bench/dedup.sh.

The 1,173 pages hold ~30k hrefs, too few to measure memory, so the same real
link graph is emitted once per PostgreSQL major version that postgresql.org
hosts docs for (base https://www.postgresql.org/docs/VERSION/PAGE): the
shape of a crawl of the docs site, its nav links repeating within and across
versions, external links repeating everywhere. Fragments are kept, as in a
raw link dump.

usage: pg_hrefs.py [--versions N] [--dir DIR] > urls.txt
"""
import argparse
import os
import sys
from html.parser import HTMLParser
from urllib.parse import urljoin

VERSIONS = ["6.3", "6.4", "6.5", "7.0", "7.1", "7.2", "7.3", "7.4", "8.0", "8.1",
            "8.2", "8.3", "8.4", "9.0", "9.1", "9.2", "9.3", "9.4", "9.5", "9.6",
            "10", "11", "12", "13", "14", "15", "16", "17"]


class Hrefs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "href" and value:
                self.hrefs.append(value.strip())


def page_hrefs(directory):
    pages = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".html"):
            parser = Hrefs()
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                parser.feed(f.read())
            pages.append((name, parser.hrefs))
    return pages


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--versions", type=int, default=len(VERSIONS))
    ap.add_argument("--dir", default="/usr/share/doc/postgresql-doc-15/html")
    args = ap.parse_args()
    pages = page_hrefs(args.dir)
    out = sys.stdout
    for version in VERSIONS[-args.versions:]:
        for name, hrefs in pages:
            base = f"https://www.postgresql.org/docs/{version}/{name}"
            out.write("".join(urljoin(base, h) + "\n" for h in hrefs))


if __name__ == "__main__":
    main()
