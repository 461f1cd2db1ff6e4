#!/usr/bin/env bash
# Verify the install routes: a real `pip install <repo>` into a fresh venv
# (pyproject.toml, maturin `bindings = "bin"`), `pipx install <repo>`,
# `cargo install --path <repo>`, each installed `toolshape` binary run, then an
# sdist built with `python -m build --sdist` and installed into a second venv.
#
#   bash tests/scripts/pip_install.sh     # SKIP_SDIST=1 skips the sdist part, VERBOSE=1 shows logs
#
# Needs python3, network access to PyPI (maturin, build) and crates.io, and
# cargo (each install is a release build: minutes on 2 cores). Everything is
# built in a temporary folder removed at exit; CARGO_TARGET_DIR defaults to one
# inside it (and another for the sdist, so that its build starts from nothing)
# so that the repository's own target/ is never locked or written. Set
# CARGO_TARGET_DIR to a folder of your own to make repeated runs faster.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/harness.sh" toolshape-pip
USER_TARGET_DIR=${CARGO_TARGET_DIR:-}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$TMP/target}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

VERSION=$(awk -F'"' '/^\[/ { section = $0 } section == "[package]" && /^version *=/ { print $2; exit }' \
    "$REPO/Cargo.toml")
[[ -n $VERSION ]] || { echo "FAIL  no [package] version in $REPO/Cargo.toml"; exit 1; }
echo "info  toolshape $VERSION from $REPO"

# check_binary LABEL BIN: the installed binary's version, check, fix and completions.
check_binary() {
    local label=$1 bin=$2 out rc dir
    dir=$(mktemp -d "$TMP/work.XXXXXX")

    out=$("$bin" --version 2>&1) || true
    if [[ $out == "toolshape $VERSION" ]]; then pass "$label: toolshape --version prints 'toolshape $VERSION'"
    else fail "$label: toolshape --version printed '$out', expected 'toolshape $VERSION'"; fi

    printf 'def t():\n    return {"status": "success", "content": [{"text": "done"}], "frames": 512}\n' \
        >"$dir/bad_tool.py"
    rc=0
    out=$(cd "$dir" && "$bin" check bad_tool.py 2>&1) || rc=$?
    verbose "$out"
    if [[ $rc == 1 ]] && grep -q '^bad_tool.py:2:[0-9]*: TS001' <<<"$out"; then
        pass "$label: toolshape check exits 1 and names bad_tool.py and TS001"
    else fail "$label: toolshape check exited $rc"; show "$out"; fi

    rc=0
    out=$(cd "$dir" && "$bin" fix bad_tool.py 2>&1) || rc=$?
    verbose "$out"
    if [[ $rc == 0 ]] && grep -q '{"json": {"frames": 512}}' "$dir/bad_tool.py" \
        && python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' "$dir/bad_tool.py"; then
        pass "$label: toolshape fix moves \"frames\" into a {\"json\": ...} block (exit 0, parses)"
    else fail "$label: toolshape fix exited $rc"; show "$out"; show "$(cat "$dir/bad_tool.py")"; fi

    rc=0
    out=$(cd "$dir" && "$bin" check bad_tool.py 2>&1) || rc=$?
    if [[ $rc == 0 ]]; then pass "$label: toolshape check exits 0 on the fixed file"
    else fail "$label: toolshape check exited $rc on the fixed file"; show "$out"; fi

    rc=0
    out=$("$bin" completions bash 2>&1) || rc=$?
    if [[ $rc == 0 ]] && grep -q 'complete .*toolshape' <<<"$out" && bash -n <<<"$out"; then
        pass "$label: toolshape completions bash prints a valid bash completion"
    else fail "$label: toolshape completions bash exited $rc"; show "$(head -20 <<<"$out")"; fi
}

# --- pip install <repo> ----------------------------------------------------------
VENV="$TMP/venv"
python3 -m venv "$VENV"
t=$SECONDS
rc=0
"$VENV/bin/python" -m pip install "$REPO" >"$TMP/pip-install.log" 2>&1 || rc=$?
verbose "$(cat "$TMP/pip-install.log")"
if [[ $rc == 0 ]]; then pass "pip install $REPO ($((SECONDS - t))s)"
else fail "pip install $REPO exited $rc"; show "$(tail -40 "$TMP/pip-install.log")"; exit 1; fi

found=$(PATH="$VENV/bin:$PATH" command -v toolshape || true)
if [[ $found == "$VENV/bin/toolshape" ]]; then pass "the venv puts toolshape on PATH ($VENV/bin/toolshape)"
else fail "toolshape on the venv's PATH is '$found', expected $VENV/bin/toolshape"; fi

meta=$(cat "$VENV"/lib/python3*/site-packages/toolshape-"$VERSION".dist-info/METADATA 2>/dev/null || true)
if grep -qx 'Name: toolshape' <<<"$meta" && grep -qx "Version: $VERSION" <<<"$meta" \
    && grep -qx 'License-Expression: MIT' <<<"$meta"; then
    pass "installed metadata: toolshape $VERSION, License-Expression: MIT"
else fail "installed METADATA is not as expected"; show "$(head -20 <<<"$meta")"; fi

check_binary "pip install ." "$VENV/bin/toolshape"

# --- pipx install <repo> ---------------------------------------------------------
# pipx from PyPI, its home and bin folder inside TMP; the build reuses the
# target folder above.
t=$SECONDS
rc=0
{ "$VENV/bin/python" -m pip install -q pipx \
    && PIPX_HOME="$TMP/pipx-home" PIPX_BIN_DIR="$TMP/pipx-bin" PIPX_MAN_DIR="$TMP/pipx-man" \
        "$VENV/bin/python" -m pipx install "$REPO"; } >"$TMP/pipx.log" 2>&1 || rc=$?
verbose "$(cat "$TMP/pipx.log")"
if [[ $rc == 0 && -x $TMP/pipx-bin/toolshape ]]; then pass "pipx install $REPO ($((SECONDS - t))s)"
else fail "pipx install $REPO exited $rc"; show "$(tail -40 "$TMP/pipx.log")"; fi
if [[ -x $TMP/pipx-bin/toolshape ]]; then check_binary "pipx install ." "$TMP/pipx-bin/toolshape"; fi

# --- cargo install --path <repo> -------------------------------------------------
t=$SECONDS
rc=0
cargo install --locked --quiet --path "$REPO" --root "$TMP/cargo-root" >"$TMP/cargo-install.log" 2>&1 || rc=$?
verbose "$(cat "$TMP/cargo-install.log")"
if [[ $rc == 0 ]]; then pass "cargo install --path $REPO ($((SECONDS - t))s)"
else fail "cargo install --path exited $rc"; show "$(tail -40 "$TMP/cargo-install.log")"; fi
if [[ -x $TMP/cargo-root/bin/toolshape ]]; then check_binary "cargo install" "$TMP/cargo-root/bin/toolshape"; fi

# --- python -m build --sdist, then pip install <sdist> ----------------------------
if [[ ${SKIP_SDIST:-0} == 1 ]]; then
    echo "info  SKIP_SDIST=1: sdist not checked"
else
    t=$SECONDS
    rc=0
    { "$VENV/bin/python" -m pip install -q build \
        && "$VENV/bin/python" -m build --sdist --outdir "$TMP/dist" "$REPO"; } >"$TMP/sdist.log" 2>&1 || rc=$?
    verbose "$(cat "$TMP/sdist.log")"
    SDIST="$TMP/dist/toolshape-$VERSION.tar.gz"
    if [[ $rc == 0 && -f $SDIST ]]; then pass "python -m build --sdist: $(basename "$SDIST") ($((SECONDS - t))s)"
    else fail "python -m build --sdist exited $rc"; show "$(tail -40 "$TMP/sdist.log")"; exit 1; fi

    listing=$(tar tzf "$SDIST" | sed "s|^toolshape-$VERSION/||")
    missing=""
    for f in pyproject.toml Cargo.toml Cargo.lock README.md src/main.rs src/lib.rs PKG-INFO; do
        grep -qx "$f" <<<"$listing" || missing="$missing $f"
    done
    extra=$(grep -E '^(target|tests|benches|snapshots|examples)/|/target/' <<<"$listing" || true)
    if [[ -z $missing && -z $extra ]]; then
        pass "the sdist has the crate ($(wc -l <<<"$listing") files, $(du -k "$SDIST" | cut -f1) KiB) and no target/, tests/, benches/"
    else fail "sdist contents: missing [$missing ], unexpected:"; show "$extra"; fi

    VENV2="$TMP/venv-sdist"
    python3 -m venv "$VENV2"
    t=$SECONDS
    rc=0
    # A target folder of its own, so that this build reads nothing but the sdist.
    CARGO_TARGET_DIR="${USER_TARGET_DIR:-$TMP/target-sdist}" \
        "$VENV2/bin/python" -m pip install "$SDIST" >"$TMP/pip-sdist.log" 2>&1 || rc=$?
    verbose "$(cat "$TMP/pip-sdist.log")"
    if [[ $rc == 0 ]]; then pass "pip install of the sdist in a fresh venv ($((SECONDS - t))s)"
    else fail "pip install of the sdist exited $rc"; show "$(tail -40 "$TMP/pip-sdist.log")"; fi
    if [[ -x $VENV2/bin/toolshape ]]; then check_binary "sdist" "$VENV2/bin/toolshape"; fi
fi

finish
