# Shared by the hand-run verification scripts in this folder: sourced as
#   source "$(dirname "${BASH_SOURCE[0]}")/harness.sh" NAME
# it sets REPO (the repository's root), START, and TMP (a temporary folder
# named after NAME, removed at exit), traps unexpected errors, and defines
# pass / fail / die (counted PASS and FAIL lines), show / verbose (indented
# output; verbose only with VERBOSE=1) and finish (the summary line and the
# exit status).

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
START=$SECONDS
TMP=$(mktemp -d "${TMPDIR:-/tmp}/${1:?a name for the temporary folder}.XXXXXX")
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT
trap 'echo "FAIL  unexpected error (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

failures=0
passes=0
pass() { passes=$((passes + 1)); printf 'PASS  %s\n' "$1"; }
fail() { failures=$((failures + 1)); printf 'FAIL  %s\n' "$1"; }
die() { printf 'FAIL  %s\n' "$1" >&2; exit 1; }
show() { sed 's/^/      | /' <<<"$1"; }
verbose() { if [[ ${VERBOSE:-0} == 1 ]]; then show "$1"; fi; }

finish() {
    echo "----"
    echo "$passes passed, $failures failed ($((SECONDS - START))s)"
    if ((failures > 0)); then exit 1; fi
}
