"""Summarises nginx_vs_wget2.sh's TSV runs (stdin): per tool the median and
range of wall, CPU and peak RSS, and of the per-pair mgz/wget2 ratios, with
how many pairs meet the issue's bounds (wall <= 1.5x, RSS <= 2x)."""

import statistics
import sys
from collections import defaultdict

runs = defaultdict(dict)  # pair -> tool -> (wall, cpu, rss_mb, pages)
for line in sys.stdin:
    tool, pair, wall, user, sys_, rss, pages = line.split("\t")
    runs[int(pair)][tool] = (
        float(wall),
        float(user) + float(sys_),
        int(rss) / 1000,
        int(pages),
    )


def spread(values, unit, digits=2):
    v = sorted(values)
    return f"median {statistics.median(v):.{digits}f}{unit} ({v[0]:.{digits}f}-{v[-1]:.{digits}f})"


pairs = [p for p in runs.values() if "mgz" in p and "wget2" in p]
for tool in ("mgz", "wget2"):
    rows = [p[tool] for p in pairs]
    print(
        f"{tool:6} wall {spread([r[0] for r in rows], ' s')}, "
        f"CPU {spread([r[1] for r in rows], ' s')}, "
        f"peak RSS {spread([r[2] for r in rows], ' MB', 1)}, "
        f"HTML pages {sorted({r[3] for r in rows})}"
    )
wall = [p["mgz"][0] / p["wget2"][0] for p in pairs]
cpu = [p["mgz"][1] / max(p["wget2"][1], 0.01) for p in pairs]
rss = [p["mgz"][2] / p["wget2"][2] for p in pairs]
n = len(pairs)
print(f"ratio  wall {spread(wall, 'x')}; within 1.5x in {sum(w <= 1.5 for w in wall)}/{n}")
print(f"ratio  CPU  {spread(cpu, 'x')}")
print(f"ratio  RSS  {spread(rss, 'x')}; within 2x in {sum(r <= 2.0 for r in rss)}/{n}")
