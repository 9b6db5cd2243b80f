#!/usr/bin/env bash
# Benchmark `mgz dedup` against huniq, runiq, `sort -u` and awk, in one run.
#
# For each input: wall time and peak RSS (/usr/bin/time -v) of every tool,
# ratios against huniq measured in the same run, and whether the output is
# byte-identical to huniq's. Prints a markdown table per input (also saved
# under $SCRATCH) and checks the issue's two targets on the synthetic input.
#
# usage: bench/dedup.sh [synthetic|pg|wiki|edge]...   (default: all)
# env:   N=10000000        synthetic URL count
#        DUP_RATE=0.07    share of synthetic lines repeating a recent one
#                         (0.07: ~93 % distinct, the shape of the issue's reference run)
#        REPS=1            runs per tool; the best wall time is kept
#        SCRATCH=target/bench-dedup   inputs, outputs, tables
#        PEERS=target/bench-peers     cargo install --root for huniq/runiq
#        BACKENDS="compact fingerprint bloom hash"
#        PEER_SET=all     or "huniq": skip runiq, sort and awk (quick target re-checks)
#        DATA=../shared/data (found next to the checkout by default)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
N=${N:-10000000}
DUP_RATE=${DUP_RATE:-0.07}
REPS=${REPS:-1}
SCRATCH=${SCRATCH:-$ROOT/target/bench-dedup}
PEERS=${PEERS:-$ROOT/target/bench-peers}
BACKENDS=${BACKENDS:-compact fingerprint bloom hash}
PEER_SET=${PEER_SET:-all}
DATA=${DATA:-$(for d in "$ROOT/../shared/data" "$ROOT/../../shared/data"; do [[ -d $d ]] && echo "$d" && break; done)}
export LC_ALL=C # byte semantics for sort and awk, like the other tools
mkdir -p "$SCRATCH"

install_peers() {
    if [[ ! -x $PEERS/bin/huniq || ! -x $PEERS/bin/runiq ]]; then
        echo "== installing huniq 2.7.0 and runiq 2.1.0 into $PEERS" >&2
        cargo install --locked --root "$PEERS" huniq@2.7.0 runiq@2.1.0 >&2
    fi
    HUNIQ=$PEERS/bin/huniq
    RUNIQ=$PEERS/bin/runiq
}

build_mgz() {
    echo "== building mgz (release)" >&2
    cargo build --release --locked -p mgz >&2
    MGZ=${CARGO_TARGET_DIR:-$ROOT/target}/release/mgz
}

# The synthetic input: `mgz sim urls` once it exists, else bench/gen_urls.py.
make_synthetic() {
    local f=$SCRATCH/synthetic-$N-$DUP_RATE.txt
    if [[ ! -s $f ]]; then
        if "$MGZ" sim urls --count 1 >/dev/null 2>&1; then
            echo "== generating $N URLs with mgz sim urls" >&2
            "$MGZ" sim urls --count "$N" --dup-rate "$DUP_RATE" >"$f.tmp"
        else
            echo "== generating $N URLs with bench/gen_urls.py (mgz sim urls not built)" >&2
            python3 bench/gen_urls.py "$N" >"$f.tmp"
        fi
        mv "$f.tmp" "$f"
    fi
    echo "$f"
}

make_pg() {
    local f=$SCRATCH/pg-hrefs.txt
    [[ -s $f ]] || { python3 bench/pg_hrefs.py >"$f.tmp" && mv "$f.tmp" "$f"; }
    echo "$f"
}

# Edge cases where huniq and mgz must agree byte for byte (`huniq -t`, since
# mgz prints a missing final newline back as missing).
make_edge() {
    local f=$SCRATCH/edge.txt
    python3 - "$f" <<'EOF'
import random, sys
rng = random.Random(7)
parts = [b"a", b"a\r", b"", b"\xff\xfe", b"\x00x", b"http://e.com/", b"c" * 70_000]
lines = [rng.choice(parts) + str(rng.randrange(500)).encode() for _ in range(20_000)]
big = b"b" * 3_000_000
lines[100:100] = [big, big + b"!", big]
open(sys.argv[1], "wb").write(b"\n".join(lines))  # no final newline
EOF
    echo "$f"
}

# run NAME INPUT CMD...: best-of-REPS wall seconds, the CPU seconds (user +
# sys) of that run, and the peak RSS kB into $WALL/$CPU/$RSS; output in
# $SCRATCH/out.NAME, stderr in $SCRATCH/err.NAME.
run() {
    local name=$1 input=$2
    shift 2
    WALL="" RSS="" CPU=""
    local rep t c
    for ((rep = 0; rep < REPS; rep++)); do
        /usr/bin/time -v -o "$SCRATCH/time.$name" "$@" <"$input" \
            >"$SCRATCH/out.$name" 2>"$SCRATCH/err.$name" || {
            WALL=fail RSS=fail CPU=fail
            return
        }
        t=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s}' "$SCRATCH/time.$name")
        local r
        r=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$SCRATCH/time.$name")
        c=$(awk -F': ' '/(User|System) time \(seconds\)/ {s += $2} END {print s}' "$SCRATCH/time.$name")
        if [[ -z $WALL ]] || awk "BEGIN {exit !($t < $WALL)}"; then WALL=$t CPU=$c; fi
        if [[ -z $RSS ]] || ((r > RSS)); then RSS=$r; fi
    done
}

# How NAME's output compares with huniq's.
verdict() {
    local name=$1 kind=$2
    local ref=$SCRATCH/out.huniq out=$SCRATCH/out.$name
    if cmp -s "$ref" "$out"; then
        echo "identical"
    elif [[ $kind == set ]]; then
        sort "$ref" | cmp -s - "$out" && echo "same lines, sorted" || echo "DIFFERENT"
    else
        local want got
        want=$(wc -l <"$ref")
        got=$(wc -l <"$out")
        if ((got < want)); then
            echo "$((want - got)) of $want lines dropped (false positives)"
        else
            echo "DIFFERENT"
        fi
    fi
}

bench_input() {
    local label=$1 input=$2
    local lines bytes table=$SCRATCH/table-$label.md
    lines=$(wc -l <"$input")
    bytes=$(wc -c <"$input")
    cat "$input" >/dev/null # warm the page cache for everyone
    run huniq "$input" "$HUNIQ"
    local h_wall=$WALL h_rss=$RSS h_cpu=$CPU distinct
    distinct=$(wc -l <"$SCRATCH/out.huniq")
    {
        echo "### $label: $lines lines, $distinct distinct, $((bytes / lines)) B/line mean"
        echo
        echo "| tool | command | wall s | CPU s | peak RSS MB | wall / huniq | RSS / huniq | set B/distinct | output vs huniq |"
        echo "|---|---|---|---|---|---|---|---|---|"
    } | tee "$table"
    CPU=$h_cpu row huniq "huniq" "-" "identical" "$h_wall" "$h_rss" "$h_wall" "$h_rss" | tee -a "$table"
    local b
    for b in $BACKENDS; do
        run "mgz-$b" "$input" "$MGZ" dedup --seen "$b" --stats
        local kind=order
        [[ $b == bloom || $b == fingerprint ]] && kind=prob
        local v="unavailable" per="-"
        if [[ $WALL != fail ]]; then
            v=$(verdict "mgz-$b" $kind)
            per=$(awk '/bytes per distinct line/ {gsub(/[(,]/, ""); for (i = 1; i <= NF; i++) if ($i == "bytes" && $(i + 1) == "per") print $(i - 1)}' "$SCRATCH/err.mgz-$b")
        fi
        row "mgz dedup --seen $b" "mgz dedup --seen $b" "$per" "$v" "$WALL" "$RSS" "$h_wall" "$h_rss" | tee -a "$table"
        eval "WALL_$b=\$WALL RSS_$b=\$RSS CPU_$b=\$CPU"
    done
    if [[ $PEER_SET == all ]]; then
        bench_peers "$input" "$table" "$h_wall" "$h_rss"
    fi
    echo | tee -a "$table"
    # The targets are stated for the 10M synthetic run; small inputs measure
    # process start-up more than the set.
    [[ $label == synthetic-* ]] && check_targets "$label" "$h_wall" "$h_rss" "$h_cpu" | tee -a "$table"
    return 0
}

# runiq (three filters), sort -u and awk on INPUT, rows into TABLE.
bench_peers() {
    local input=$1 table=$2 h_wall=$3 h_rss=$4
    local f
    for f in quick simple compact; do
        run "runiq-$f" "$input" "$RUNIQ" -f "$f"
        local kind=order
        [[ $f == compact ]] && kind=prob
        row "runiq -f $f" "runiq -f $f" "-" "$(verdict "runiq-$f" $kind)" "$WALL" "$RSS" "$h_wall" "$h_rss" | tee -a "$table"
        eval "WALL_runiq_$f=\$WALL RSS_runiq_$f=\$RSS"
    done
    run sort "$input" sort -u
    row "sort -u" "LC_ALL=C sort -u" "-" "$(verdict sort set)" "$WALL" "$RSS" "$h_wall" "$h_rss" | tee -a "$table"
    run awk "$input" awk '!seen[$0]++'
    row "awk" "LC_ALL=C awk '!seen[\$0]++'" "-" "$(verdict awk order)" "$WALL" "$RSS" "$h_wall" "$h_rss" | tee -a "$table"
}

# row TOOL COMMAND PER VERDICT WALL RSS HWALL HRSS
row() {
    local wall=$5 rss=$6 hw=$7 hr=$8
    if [[ $wall == fail ]]; then
        echo "| $1 | \`$2\` | - | - | - | - | - | - | $4 |"
        return
    fi
    awk -v t="$1" -v c="$2" -v p="$3" -v v="$4" -v w="$wall" -v u="$CPU" -v r="$rss" -v hw="$hw" -v hr="$hr" 'BEGIN {
        printf "| %s | `%s` | %.2f | %.2f | %.1f | %.2f | %.3f | %s | %s |\n", t, c, w, u, r / 1024, w / hw, r / hr, p, v }'
}

# The issue's targets: fingerprint <= 1/4 huniq RSS in <= huniq wall;
# compact <= 1/8 runiq-simple RSS in <= 1.5x huniq wall.
check_targets() {
    local label=$1 hw=$2 hr=$3 hc=$4
    if [[ ${WALL_fingerprint:-fail} != fail ]]; then
        awk -v w="$WALL_fingerprint" -v r="$RSS_fingerprint" -v c="$CPU_fingerprint" -v hw="$hw" -v hr="$hr" -v hc="$hc" -v l="$label" 'BEGIN {
            ok = (r <= hr / 4 && w <= hw)
            printf "- %s: fingerprint RSS %.3f x huniq (target <= 0.25), wall %.2f x huniq (target <= 1; CPU %.2f x): %s\n", l, r / hr, w / hw, c / hc, ok ? "PASS" : "FAIL" }'
    fi
    if [[ ${WALL_compact:-fail} != fail && ${RSS_runiq_simple:-fail} != fail ]]; then
        awk -v w="$WALL_compact" -v r="$RSS_compact" -v c="$CPU_compact" -v hw="$hw" -v hc="$hc" -v rs="$RSS_runiq_simple" -v l="$label" 'BEGIN {
            ok = (r <= rs / 8 && w <= 1.5 * hw)
            printf "- %s: compact RSS %.3f x runiq -f simple (target <= 0.125), wall %.2f x huniq (target <= 1.5; CPU %.2f x): %s\n", l, r / rs, w / hw, c / hc, ok ? "PASS" : "FAIL" }'
    fi
}

edge_check() {
    local f
    f=$(make_edge)
    "$HUNIQ" -t <"$f" >"$SCRATCH/edge.huniq"
    local b
    for b in $BACKENDS; do
        [[ $b == bloom ]] && continue # probabilistic at 1 %: may drop a line
        if "$MGZ" dedup --seen "$b" <"$f" >"$SCRATCH/edge.$b" 2>/dev/null; then
            cmp -s "$SCRATCH/edge.huniq" "$SCRATCH/edge.$b" &&
                echo "- edge cases (CRLF, empty, non-UTF-8, NUL, 3 MB lines, no final newline): mgz --seen $b identical to huniq -t" ||
                echo "- edge cases: mgz --seen $b DIFFERS from huniq -t"
        fi
    done
}

main() {
    local what=("$@")
    ((${#what[@]})) || what=(edge wiki pg synthetic)
    install_peers
    build_mgz
    echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
    echo "versions: $("$HUNIQ" --version), $("$RUNIQ" --version), $(sort --version | head -1), $(awk -W version 2>&1 | head -1), mgz $(git rev-parse --short HEAD)"
    echo
    local w
    for w in "${what[@]}"; do
        case $w in
        edge) edge_check ;;
        wiki) bench_input wiki-urls-10000 "$DATA/wiki-urls-10000" ;;
        pg) bench_input postgresql-doc-15-hrefs "$(make_pg)" ;;
        synthetic) bench_input "synthetic-$N" "$(make_synthetic)" ;;
        *) echo "unknown input $w" >&2 && exit 2 ;;
        esac
        echo
    done
}

main "$@"
