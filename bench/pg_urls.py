#!/usr/bin/env python3
"""Extract every href from Debian's postgresql-doc-15 HTML as absolute URLs.

Each page is treated as if served at https://www.postgresql.org/docs/15/<file>
(where the real manual lives), and every <a href>, <link href>, <area href>
is resolved against that page URL (urljoin), one URL per line, in document
order, duplicates kept (a crawler sees every link, not every distinct one).

    python3 bench/pg_urls.py [HTML_DIR] > target/pg-urls.txt

Standard library only (html.parser, urllib.parse).
"""
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

BASE = "https://www.postgresql.org/docs/15/"
DEFAULT_DIR = "/usr/share/doc/postgresql-doc-15/html"


class Hrefs(HTMLParser):
    def __init__(self, page_url):
        super().__init__(convert_charrefs=True)
        self.page_url = page_url
        self.base = page_url
        self.urls = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        href = attrs.get("href")
        if tag == "base" and href:
            self.base = urljoin(self.page_url, href)
        elif tag in ("a", "link", "area") and href is not None:
            self.urls.append(urljoin(self.base, href.strip()))


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DIR)
    pages = sorted(root.glob("*.html"))
    if not pages:
        sys.exit(f"no .html files in {root}")
    out = sys.stdout
    for page in pages:
        parser = Hrefs(urljoin(BASE, page.name))
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        for url in parser.urls:
            out.write(url + "\n")


if __name__ == "__main__":
    main()
