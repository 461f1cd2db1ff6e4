#!/usr/bin/env bash
# Instructions executed by each toolshape binary on the same command, counted
# by valgrind's callgrind: an A/B measure that a noisy machine does not move
# (wall and CPU times on a shared 2-core VM swing by 30% between minutes).
# It counts work, not time: cache misses, allocator stalls and parallelism are
# not in it, so a change is kept on both this count and a side-by-side
# hyperfine run. Not a test, and not a comparison with peers (bench.sh is).
#
# Usage: benches/instructions.sh BIN_A BIN_B [-- ARGS...]
#   default ARGS: check --format json target/bench-corpus/dense
# Example: benches/instructions.sh /tmp/toolshape-before target/release/toolshape
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,12p "$0" >&2; exit 2; }
a=$1 b=$2
shift 2
[ "${1:-}" = "--" ] && shift
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(check --format json target/bench-corpus/dense)
command -v valgrind > /dev/null || { echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
count() {
    local out
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" "$1" "${args[@]}" > /dev/null 2>&1 || true
    awk '/^(summary|totals):/ { print $2; exit }' "$out"
    rm -f "$out"
}
ia=$(count "$a")
ib=$(count "$b")
[ -n "$ia" ] && [ -n "$ib" ] || { echo "instructions.sh: callgrind gave no count" >&2; exit 2; }
printf 'A %15s  %s\nB %15s  %s\nB/A %.3f\n' "$ia" "$a" "$ib" "$b" "$(echo "$ib / $ia" | bc -l)"
