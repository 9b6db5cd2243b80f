#!/usr/bin/env python3
"""Render `mgz bench seen --json` results: Markdown tables and an SVG plot.

    python3 bench/seen_report.py target/bench-seen docs/seen-bytes-per-url.svg > tables.md

Reads every *.jsonl in the directory. Tables: one per file, with ratios
against `hash` from the same run. Plot: bytes per URL against N for the
gen-<N>.jsonl runs, one line per backend, both axes logarithmic.
Standard library only.
"""
import json
import math
import sys
from pathlib import Path

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
          "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]


def load(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def table(name, rows):
    base = next((r for r in rows if r["backend"] == "hash"), None)
    out = [f"### {name}", "",
           f"{rows[0]['urls']} URLs, {rows[0]['unique']} unique.", "",
           "| backend | B/URL | peak MB | ns/insert | ns/lookup | FP | FN | B/URL vs hash | insert vs hash | lookup vs hash |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        def ratio(key):
            return f"{r[key] / base[key]:.3f}" if base and base[key] else "-"
        out.append(f"| {r['backend']} | {r['bytes_per_url']:.2f} | {r['peak_bytes'] / 1e6:.1f} | "
                   f"{r['ns_insert']:.0f} | {r['ns_lookup']:.0f} | {r['false_positives']} | "
                   f"{r['false_negatives']} | {ratio('bytes_per_url')} | {ratio('ns_insert')} | "
                   f"{ratio('ns_lookup')} |")
    return "\n".join(out) + "\n"


def plot(series, path):
    """series: {backend: [(n, bytes_per_url)]} -> log-log SVG line plot."""
    w, h, left, right, top, bottom = 720, 440, 70, 150, 30, 50
    ns = [n for pts in series.values() for n, _ in pts]
    ys = [y for pts in series.values() for _, y in pts if y > 0]
    x0, x1 = math.log10(min(ns)), math.log10(max(ns))
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    sx = lambda n: left + (math.log10(n) - x0) / max(x1 - x0, 1e-9) * (w - left - right)
    sy = lambda y: top + (y1 - math.log10(y)) / max(y1 - y0, 1e-9) * (h - top - bottom)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="14">Seen-set memory: bytes per unique URL '
           f'(mgz bench seen --generate N)</text>']
    for e in range(y0, y1 + 1):
        y = sy(10 ** e)
        svg.append(f'<line x1="{left}" x2="{w - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        svg.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{10 ** e:g}</text>')
    for n in sorted(set(ns)):
        x = sx(n)
        svg.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{h - bottom}" stroke="#eee"/>')
        svg.append(f'<text x="{x:.1f}" y="{h - bottom + 16}" text-anchor="middle">{n:,}</text>')
    svg.append(f'<text x="{(left + w - right) / 2}" y="{h - 10}" text-anchor="middle">N (URLs generated)</text>')
    svg.append(f'<text x="16" y="{(top + h - bottom) / 2}" transform="rotate(-90 16 {(top + h - bottom) / 2})" '
               f'text-anchor="middle">bytes per unique URL (log)</text>')
    for i, (name, pts) in enumerate(sorted(series.items(), key=lambda kv: -kv[1][-1][1])):
        c = COLORS[i % len(COLORS)]
        pts = sorted(pts)
        path_d = " ".join(f"{'M' if j == 0 else 'L'}{sx(n):.1f},{sy(y):.1f}" for j, (n, y) in enumerate(pts))
        svg.append(f'<path d="{path_d}" fill="none" stroke="{c}" stroke-width="2"/>')
        for n, y in pts:
            svg.append(f'<circle cx="{sx(n):.1f}" cy="{sy(y):.1f}" r="3" fill="{c}"/>')
        ly = top + 16 * i + 10
        svg.append(f'<line x1="{w - right + 10}" x2="{w - right + 30}" y1="{ly}" y2="{ly}" stroke="{c}" stroke-width="2"/>')
        svg.append(f'<text x="{w - right + 35}" y="{ly + 4}">{name}</text>')
    svg.append("</svg>")
    Path(path).write_text("\n".join(svg) + "\n")


def main():
    d = Path(sys.argv[1])
    files = sorted(d.glob("*.jsonl"), key=lambda p: (not p.stem.startswith("gen-"),
                   int(p.stem[4:]) if p.stem.startswith("gen-") else 0, p.stem))
    series = {}
    for f in files:
        rows = load(f)
        if not rows:
            continue
        print(table(f.stem, rows))
        if f.stem.startswith("gen-"):
            for r in rows:
                series.setdefault(r["backend"], []).append((r["urls"], r["bytes_per_url"]))
    if len(sys.argv) > 2 and series:
        plot(series, sys.argv[2])


if __name__ == "__main__":
    main()
