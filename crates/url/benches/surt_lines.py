# Reads URLs on stdin (one a line, UTF-8) and prints surt.surt(url, **opts)
# a line, or "EXC\t<exception type>" when the package raises. Options as JSON
# in argv[1] (default {}). Used by tests/surt_python.rs and for the Python
# throughput figure in docs/BENCHMARKS.md.
import json
import sys

import surt

opts = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
for line in sys.stdin.buffer:
    url = line.rstrip(b"\n").decode("utf-8")
    try:
        out = surt.surt(url, **opts)
    except Exception as e:
        out = "EXC\t" + type(e).__name__
    sys.stdout.write(out.replace("\n", "\\n") + "\n")
