# Joins order.txt (first input: one mangled name per line, in layout order)
# with `nm --defined-only` output (second input) and prints "RANK NAME" for
# each function symbol to lay out, for `sort -n` to put in the list's order:
# a symbol whose exact name is listed gets its rank; one whose name is not
# listed gets the rank of its hash-free form (key below) when no symbol of
# that form matched exactly — a toolchain or dependency update changed the
# hashes, and every instance that may be the listed one is kept together.
function key(s) {
    sub(/\.llvm\.[0-9]+$/, "", s)
    if (s ~ /^_R/) gsub(/Cs[0-9A-Za-z]+_/, "C", s) # v0: crate disambiguators
    else sub(/17h[0-9a-f]+E$/, "E", s)            # legacy: the trailing hash
    return s
}
NR == FNR {
    if (!($0 in exact)) exact[$0] = FNR
    k = key($0)
    if (!(k in byKey)) byKey[k] = FNR
    next
}
NF == 3 && $2 ~ /^[tTwW]$/ {
    if ($3 in exact) {
        print exact[$3], $3
        matched[key($3)] = 1
    } else {
        k = key($3)
        if (k in byKey) { n++; restName[n] = $3; restKey[n] = k }
    }
}
END {
    for (i = 1; i <= n; i++)
        if (!(restKey[i] in matched)) print byKey[restKey[i]], restName[i]
}
