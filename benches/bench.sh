#!/usr/bin/env bash
# toolshape benchmark: `toolshape check` against ruff, ripgrep and the Python
# reference scanner, on a sparse tree (this machine's stdlib + site-packages)
# and a dense one (the strands-agents and strands-agents-tools sdists).
#
# Usage: benches/bench.sh [--quick] [--only sparse|dense] [--markdown]
#                         [--runs N] [--warmup N] [--no-build] [--report-only]
# See benches/README.md for what is measured and why.
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true # keep '&' literal in ${x//a/b}

usage() {
    cat <<'EOF'
usage: benches/bench.sh [options]

  --quick            1 warmup + 3 runs instead of 2 + 10 (numbers are rougher)
  --only TREE        run one tree only: sparse or dense
  --markdown         print the results as Markdown tables (for the main README)
  --runs N           hyperfine runs per command (default 10, --quick 3)
  --warmup N         hyperfine warmup runs per command (default 2, --quick 1)
  --no-build         do not run `cargo build --release` first
  --report-only      only print the table of the last run (with --markdown: as Markdown)
  -h, --help         this help

environment:
  TOOLSHAPE_BIN      binary to measure      (default: target/release/toolshape)
  REFERENCE_SCAN     Python reference scan  (default: tests/reference/scan.py)
  PYTHON             interpreter            (default: python3; its stdlib is the sparse tree)
  DENSE_PKGS         sdists for the dense tree
                     (default: "strands-agents-tools==0.8.10 strands-agents==1.62.0")
  BENCH_CORPUS       corpus cache           (default: target/bench-corpus)
  BENCH_RESULTS      results                (default: target/bench-results)
EOF
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

QUICK=0 ONLY="" MARKDOWN=0 BUILD=1 REPORT_ONLY=0 RUNS="" WARMUP=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --only) ONLY=${2:?--only needs sparse or dense}; shift ;;
        --only=*) ONLY=${1#--only=} ;;
        --markdown) MARKDOWN=1 ;;
        --runs) RUNS=${2:?}; shift ;;
        --warmup) WARMUP=${2:?}; shift ;;
        --no-build) BUILD=0 ;;
        --report-only) REPORT_ONLY=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "bench.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
case "$ONLY" in ""|sparse|dense) ;; *) echo "bench.sh: --only takes sparse or dense" >&2; exit 2 ;; esac
if [ "$QUICK" = 1 ]; then RUNS=${RUNS:-3} WARMUP=${WARMUP:-1}; else RUNS=${RUNS:-10} WARMUP=${WARMUP:-2}; fi
TREES=(sparse dense)
[ -n "$ONLY" ] && TREES=("$ONLY")

PY=${PYTHON:-python3}
TS=${TOOLSHAPE_BIN:-$ROOT/target/release/toolshape}
REF=${REFERENCE_SCAN:-$ROOT/tests/reference/scan.py}
CORPUS=${BENCH_CORPUS:-$ROOT/target/bench-corpus}
RESULTS=${BENCH_RESULTS:-$ROOT/target/bench-results}
DENSE_PKGS=${DENSE_PKGS:-"strands-agents-tools==0.8.10 strands-agents==1.62.0"}
REPORT="$ROOT/benches/report.py"

log() { printf '\n>>> %s\n' "$*" >&2; }
die() { printf 'bench.sh: %s\n' "$*" >&2; exit 2; }

print_report() {
    local args=(table "$RESULTS")
    [ -n "$ONLY" ] && args+=(--only "$ONLY")
    [ "$MARKDOWN" = 1 ] && args+=(--markdown)
    "$PY" "$REPORT" "${args[@]}"
}

if [ "$REPORT_ONLY" = 1 ]; then print_report; exit 0; fi

# --------------------------------------------------------------------------
# The measured commands. One line per command, "name|shell command":
#   {TREE}   the tree's root paths (shell-quoted)
#   {PYTREE} the same files for the reference scan, which does not skip
#            site-packages/build/dist/venv: the roots split one level down
#            with those left out (see `report.py pyroots`)
#   {TS} the toolshape binary, {PY} the interpreter, {REF} the reference scan
#   {TS_SCOPE} toolshape's project scope: on sparse `--project-root` its
#            first root (which holds the other), so that toolshape reads
#            the files the peers read and not, say, every interpreter of a
#            pyenv checkout whose `.git` sits above the stdlib; empty on
#            dense, whose sdists are projects of their own
#   {TS_OK}  the highest exit status toolshape may give: 1 ("findings"), or 2
#            when the checked run showed that the tree holds files toolshape
#            reports as unreadable (e.g. non-UTF-8 sources in the stdlib)
# The reference scan and rg also exit 1 when they find something, so those
# commands end in `[ $? -le 1 ]`: 1 passes, anything higher fails the run.
# Every command is timed by hyperfine and gets a peak-RSS measurement; the
# names toolshape, ruff, rg and python-ast are the ones the ratio table uses.
#
# Every tool is made to see the files toolshape's default walk sees: *.py and
# *.pyi, no folder named like toolshape's SKIPPED_DIRS (src/discovery.rs) or
# hidden below a root, no .gitignore handling. The counts are checked and
# printed on every run.
SKIPPED_DIRS="__pycache__ node_modules .tox .nox build dist site-packages .git venv"
RUFF_EXCLUDE="'.*'"
for d in $SKIPPED_DIRS; do RUFF_EXCLUDE+=", '$d'"; done
RUFF_SELECT="--no-respect-gitignore --config \"exclude=[$RUFF_EXCLUDE]\" --config \"include=['*.py', '*.pyi']\""
RG_SELECT="-u -g \"*.py\" -g \"*.pyi\" -g \"!{${SKIPPED_DIRS// /,}}/\""
PEERS=(
    'toolshape|{TS} check --format json {TS_SCOPE} {TREE} > /dev/null; [ $? -le {TS_OK} ]'
    "ruff|{RUFF} check --select F401 --no-cache --isolated $RUFF_SELECT --exit-zero {TREE} > /dev/null"
    'python-ast|{PY} {REF} --literal-only {PYTREE} > /dev/null; [ $? -le 1 ]'
    "rg|rg -l $RG_SELECT status {TREE} > /dev/null; [ \$? -le 1 ]"
    'toolshape-fix|{TS} fix --diff {TS_SCOPE} {TREE} > /dev/null 2>&1; [ $? -le {TS_OK} ]'
)

# expand TEMPLATE -> command line (uses $tree_q, $pytree_q and $ts_ok of run_tree)
expand() {
    local c=$1
    c=${c//\{TREE\}/$tree_q}
    c=${c//\{PYTREE\}/$pytree_q}
    c=${c//\{TS_OK\}/$ts_ok}
    c=${c//\{TS_SCOPE\}/$ts_scope}
    c=${c//\{TS\}/$(printf '%q' "$TS")}
    c=${c//\{PY\}/$(printf '%q' "$PY")}
    c=${c//\{RUFF\}/$(printf '%q' "$RUFF")}
    c=${c//\{REF\}/$(printf '%q' "$REF")}
    printf '%s' "$c"
}

# --------------------------------------------------------------------------
# Tools
need() { command -v "$1" > /dev/null 2>&1 || die "$1 not found${2:+ ($2)}"; }
need hyperfine "apt-get install -y hyperfine"
need ruff "pip install ruff"
# The ruff executable itself: a version manager's shim on PATH (pyenv,
# asdf) is a shell script that costs 50-70 ms per run, which would be
# timed as ruff's work. `RUFF` overrides.
resolve_ruff() {
    local r real
    r=$(command -v ruff)
    if [ "$(head -c 2 "$r")" = '#!' ]; then
        real=$(pyenv which ruff 2> /dev/null) ||
            real=$("$PY" -c 'from ruff.__main__ import find_ruff_bin; print(find_ruff_bin())' 2> /dev/null) || real=
        if [ -x "$real" ] && [ "$(head -c 2 "$real")" != '#!' ]; then
            r=$real
        else
            log "warning: $r is a script, and its binary was not found: ruff's times include the script"
        fi
    fi
    printf '%s' "$r"
}
RUFF=${RUFF:-$(resolve_ruff)}
need rg "apt-get install -y ripgrep"
need "$PY"
TIME_BIN=/usr/bin/time
if [ ! -x "$TIME_BIN" ] && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    log "installing GNU time (for peak memory)"
    apt-get install -y time > /dev/null 2>&1 || { apt-get update > /dev/null 2>&1 && apt-get install -y time > /dev/null 2>&1; } || true
fi
if [ -x "$TIME_BIN" ] && "$TIME_BIN" -v true > /dev/null 2>&1; then HAVE_TIME=1; else
    HAVE_TIME=0; echo "bench.sh: GNU /usr/bin/time missing: peak memory will not be measured" >&2
fi

if [ "$BUILD" = 1 ]; then
    need cargo
    log "cargo build --release"
    cargo build --release
fi
[ -x "$TS" ] || die "toolshape binary not found at $TS (build it, or set TOOLSHAPE_BIN)"
[ -f "$REF" ] || die "reference scanner not found at $REF (set REFERENCE_SCAN)"

# --------------------------------------------------------------------------
# Corpora. Each tree is a list of root paths, one per line, in $CORPUS/TREE.roots.
mkdir -p "$CORPUS" "$RESULTS"

prepare_sparse() {
    # The interpreter's own stdlib and site-packages, used in place (no copy).
    # Both are named as roots: toolshape skips site-packages directories while
    # walking, but walks one that is named on the command line.
    "$PY" - > "$CORPUS/sparse.roots" <<'EOF'
import os, sysconfig
paths = sysconfig.get_paths()
roots = []
for key in ("stdlib", "platstdlib", "purelib", "platlib"):
    p = os.path.realpath(paths[key])
    if os.path.isdir(p) and p not in roots:
        roots.append(p)
print("\n".join(roots))
EOF
}

prepare_dense() {
    local dir="$CORPUS/dense" stamp="$CORPUS/dense.stamp"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$DENSE_PKGS" ] && [ -d "$dir" ]; then
        log "dense corpus cached: $dir ($DENSE_PKGS)"
    else
        log "fetching dense corpus sdists: $DENSE_PKGS"
        rm -rf "$dir" "$CORPUS/sdists" "$stamp"
        mkdir -p "$CORPUS/sdists" "$dir"
        # shellcheck disable=SC2086 # DENSE_PKGS is a list of requirement specs
        "$PY" -m pip download --quiet --disable-pip-version-check --no-deps \
            --no-binary :all: -d "$CORPUS/sdists" $DENSE_PKGS
        local f
        for f in "$CORPUS"/sdists/*; do
            case "$f" in
                *.tar.gz|*.tgz) tar -xzf "$f" -C "$dir" ;;
                *.zip) "$PY" -m zipfile -e "$f" "$dir" ;;
                *) die "unexpected sdist: $f" ;;
            esac
        done
        printf '%s\n' "$DENSE_PKGS" > "$stamp"
    fi
    printf '%s\n' "$dir" > "$CORPUS/dense.roots"
}

# --------------------------------------------------------------------------
versions() {
    echo "toolshape=$("$TS" --version 2>/dev/null | sed -n 1p || echo '?')"
    echo "ruff=$("$RUFF" --version | sed -n 1p) ($RUFF)"
    echo "rg=$(rg --version | sed -n 1p)"
    echo "python=$("$PY" -c 'import platform; print(platform.python_implementation(), platform.python_version())')"
    echo "hyperfine=$(hyperfine --version | sed -n 1p)"
    echo "cpus=$(nproc) cpus"
}

quote_lines() { # FILE -> its lines, shell-quoted, on one line
    local out="" line
    while IFS= read -r line; do out+="$(printf '%q' "$line") "; done < "$1"
    printf '%s' "${out% }"
}

get() { sed -n "s/^$1=//p" "$2" | tail -1; }

run_tree() {
    local tree=$1
    local meta="$RESULTS/$tree.meta" out="$RESULTS/$tree"
    local -a roots=()
    mapfile -t roots < "$CORPUS/$tree.roots"
    "$PY" "$REPORT" pyroots "${roots[@]}" > "$CORPUS/$tree.pyroots"
    local tree_q pytree_q ts_ok=1 rc ts_scope=
    tree_q=$(quote_lines "$CORPUS/$tree.roots")
    [ "$tree" = sparse ] && ts_scope="--project-root $(printf '%q' "${roots[0]}")"
    pytree_q=$(quote_lines "$CORPUS/$tree.pyroots")

    log "$tree tree: ${roots[*]}"
    {
        echo "tree=$tree"
        echo "roots=${roots[*]}"
        "$PY" "$REPORT" count "${roots[@]}"
        echo "files_ruff=$(eval "$(printf '%q' "$RUFF") check --select F401 --no-cache --isolated $RUFF_SELECT --show-files $tree_q" 2>/dev/null | grep -c .)"
        echo "files_rg=$(eval "rg --files $RG_SELECT $tree_q" | grep -c .)"
        echo "with_status=$(eval "rg -l $RG_SELECT status $tree_q" | grep -c .)"
        versions
    } > "$meta"

    # Checked runs of toolshape and the reference scan: exit codes, files
    # seen, finding counts (a cross-check, not a test), and a cache warm-up.
    set +e
    eval "$(printf '%q' "$TS") check --format json $ts_scope $tree_q" > "$out.toolshape.json" 2> "$out.toolshape.err"
    rc=$?
    set -e
    if [ "$rc" = 2 ] && [ -s "$out.toolshape.err" ] && ! grep -qv '^error: .*: ' "$out.toolshape.err" \
        && grep -q '^\[' "$out.toolshape.json"; then
        # Per-file errors only (files it cannot read); the scan itself ran.
        ts_ok=2
        echo "note: toolshape reports $(grep -c . "$out.toolshape.err") file(s) it cannot read on $tree (exit 2); see $out.toolshape.err" >&2
    elif [ "$rc" -gt 1 ]; then
        cat "$out.toolshape.err" >&2; die "toolshape exited $rc on $tree"
    fi
    echo "toolshape_errors=$(grep -c '^error: ' "$out.toolshape.err" || true)" >> "$meta"
    echo "findings_toolshape=$("$PY" "$REPORT" findings "$out.toolshape.json")" >> "$meta"
    # Files toolshape read: counted with strace where it is installed, else
    # from its text summary (which gives the number only when nothing is found).
    local checked=""
    if command -v strace > /dev/null 2>&1; then
        eval "strace -f -qq -e trace=openat -o $(printf '%q' "$out.strace") $(printf '%q' "$TS") check --format json $ts_scope $tree_q" > /dev/null 2>&1 || true
        checked=$(grep -oE 'openat\([^,]*, "[^"]*\.pyi?", O_RDONLY' "$out.strace" | sort -u | grep -c . || true)
        rm -f "$out.strace"
    else
        checked=$(eval "$(printf '%q' "$TS") check --color never $ts_scope $tree_q" 2>/dev/null \
            | sed -n 's/^All checked: no violations in \([0-9][0-9]*\) files*\.$/\1/p' || true)
        [ -z "$checked" ] || checked=$((checked + $(get toolshape_errors "$meta")))
    fi
    [ -z "$checked" ] || echo "files_toolshape=$checked" >> "$meta"

    set +e
    eval "$(printf '%q' "$PY") $(printf '%q' "$REF") --stats $pytree_q" > "$out.python.json" 2> "$out.python.err"
    rc=$?
    set -e
    [ "$rc" -le 1 ] || { tail -5 "$out.python.err" >&2; die "reference scan exited $rc on $tree"; }
    echo "findings_python=$("$PY" "$REPORT" findings "$out.python.json")" >> "$meta"
    "$PY" "$REPORT" pystats "$out.python.err" >> "$meta"

    local files
    files=$(get files "$meta")
    echo "files: $files ($(awk -F= '/^bytes=/{printf "%.1f MB", $2/1e6}' "$meta")); ruff sees $(get files_ruff "$meta"), rg $(get files_rg "$meta"), toolshape $(get files_toolshape "$meta"), python $(get files_python "$meta")" >&2
    local k v
    for k in files_ruff files_rg files_toolshape files_python; do
        v=$(get "$k" "$meta")
        if [ -n "$v" ] && [ "$v" != "$files" ]; then
            echo "WARNING: ${k#files_} sees $v files on $tree, not $files" >&2
        fi
    done
    [ "$(get gitignores "$meta")" = 0 ] || echo "note: $tree holds $(get gitignores "$meta") .gitignore file(s): toolshape honours them, ruff and rg here do not; compare the counts above" >&2

    local -a hf_args=(); local p name cmd kb
    for p in "${PEERS[@]}"; do
        name=${p%%|*}
        cmd=$(expand "${p#*|}")
        printf 'cmd.%s=%s\n' "$name" "$cmd" >> "$meta"
        hf_args+=(--command-name "$name" "$cmd")
        if [ "$HAVE_TIME" = 1 ]; then
            log "$tree: peak memory of $name"
            kb=$("$TIME_BIN" -v bash -c "$cmd" 2>&1 > /dev/null | sed -n 's/.*Maximum resident set size (kbytes): *//p' | tail -1)
            echo "rss_kb.$name=${kb:-?}" >> "$meta"
        fi
    done

    # Other work on the machine skews the numbers (2 cores: a `cargo test`
    # next door can double ruff's time); say so, and keep the load with them.
    local load
    load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
    echo "load_before=$load" >> "$meta"
    if awk -v l="$load" 'BEGIN { exit !(l + 0 > 0.5) }'; then
        echo "WARNING: load average is $load before timing $tree: other work is running, numbers will be noisy" >&2
    fi
    log "$tree: hyperfine (warmup $WARMUP, runs $RUNS)"
    hyperfine --shell bash --warmup "$WARMUP" --runs "$RUNS" \
        --export-json "$RESULTS/$tree.json" "${hf_args[@]}"
    echo "load_after=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')" >> "$meta"
}

for tree in "${TREES[@]}"; do
    "prepare_$tree"
done
for tree in "${TREES[@]}"; do
    run_tree "$tree"
done

"$PY" "$REPORT" table "$RESULTS" ${ONLY:+--only "$ONLY"} --markdown > "$RESULTS/results.md"
echo
print_report
echo
echo "(hyperfine JSON, meta and outputs: $RESULTS; Markdown copy: $RESULTS/results.md)"
