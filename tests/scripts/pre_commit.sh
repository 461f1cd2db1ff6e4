#!/usr/bin/env bash
# Verify .pre-commit-hooks.yaml with the real pre-commit from PyPI.
#
#   bash tests/scripts/pre_commit.sh          # VERBOSE=1 prints every command's output
#
# Needs python3, git, network access to PyPI and crates.io, and a cargo that can
# build toolshape: pre-commit builds the hook environment with `cargo install`
# (a release build, a few minutes on 2 cores). Everything happens in a temporary
# folder removed at exit, PRE_COMMIT_HOME included: the hooks are taken from a
# snapshot repository of the working tree (uncommitted work too), so the real
# repository is only read. A CARGO_TARGET_DIR in the environment is used by the
# hook's `cargo install`, which makes repeated runs faster.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/harness.sh" toolshape-pre-commit

# Keep pre-commit's cache and git's config out of the user's home.
export PRE_COMMIT_HOME="$TMP/pre-commit-home"
export GIT_CONFIG_GLOBAL="$TMP/gitconfig" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=toolshape-test GIT_AUTHOR_EMAIL=toolshape-test@example.invalid
export GIT_COMMITTER_NAME=toolshape-test GIT_COMMITTER_EMAIL=toolshape-test@example.invalid
: >"$GIT_CONFIG_GLOBAL"
git config --global init.defaultBranch main
git config --global advice.detachedHead false

# --- pre-commit from PyPI ------------------------------------------------------
t=$SECONDS
python3 -m venv "$TMP/venv" || die "python3 -m venv"
"$TMP/venv/bin/python" -m pip install -q --disable-pip-version-check pre-commit \
    || die "pip install pre-commit"
PC="$TMP/venv/bin/pre-commit"
echo "info  $("$PC" --version) in a fresh venv ($((SECONDS - t))s)"

# --- a snapshot repository of the working tree ---------------------------------
# Tracked and untracked-but-not-ignored files, as they are on disk now.
SNAP="$TMP/toolshape-snapshot"
mkdir -p "$SNAP"
git -C "$REPO" ls-files -z -co --exclude-standard --deduplicate \
    | while IFS= read -r -d '' f; do
        if [[ -e $REPO/$f || -L $REPO/$f ]]; then printf '%s\0' "$f"; fi
    done \
    | tar -C "$REPO" --null -T - -cf - | tar -C "$SNAP" -xf -
git -C "$SNAP" init -q
git -C "$SNAP" add -A -f .
git -C "$SNAP" commit -q -m "toolshape working tree snapshot"
REV=$(git -C "$SNAP" rev-parse HEAD)
[[ -f $SNAP/.pre-commit-hooks.yaml ]] || die "no .pre-commit-hooks.yaml in $REPO"
echo "info  snapshot of $REPO: $(git -C "$SNAP" ls-files | wc -l) files at $REV"

# --- the user's project ---------------------------------------------------------
PROJ="$TMP/project"
mkdir -p "$PROJ/tools"
git -C "$PROJ" init -q
cat >"$PROJ/.pre-commit-config.yaml" <<EOF
repos:
  - repo: $SNAP
    rev: $REV
    hooks:
      - id: toolshape-check
      - id: toolshape-fix
EOF
BAD=tools/bad_tool.py
printf 'def t():\n    return {"status": "success", "content": [{"text": "done"}], "frames": 512}\n' \
    >"$PROJ/$BAD"
cat >"$PROJ/tools/good_tool.py" <<'EOF'
def t():
    return {"status": "success", "content": [{"text": "done"}, {"json": {"frames": 512}}]}
EOF
# Not Python: the hooks must not be given it (toolshape checks any file it is given).
printf 'return {"status": "success", "content": [], "frames": 512}\n' >"$PROJ/tools/notes.txt"
# Excluded by the project's configuration: pre-commit names it, and the hooks'
# --force-exclude must keep it out all the same.
GEN=tools/generated/gen_tool.py
mkdir -p "$PROJ/tools/generated"
printf 'def g():\n    return {"status": "success", "content": [], "gen": 1}\n' >"$PROJ/$GEN"
printf '[project]\nname = "demo"\n\n[tool.toolshape]\nextend-exclude = ["generated"]\n' >"$PROJ/pyproject.toml"
git -C "$PROJ" add -A
git -C "$PROJ" commit -q -m "a project with a tool result that breaks the contract"

# run NAME ARGS...: run pre-commit in the project; sets $out and $rc.
run() {
    rc=0
    out=$(cd "$PROJ" && "$PC" "$@" 2>&1) || rc=$?
}

# Whether the tool result in FILE has only status/content and {"json": {"frames": 512}}.
fixed_shape() {
    python3 - "$1" <<'EOF'
import ast, sys
src = open(sys.argv[1]).read()
tree = ast.parse(src)
ret = next(n.value for n in ast.walk(tree) if isinstance(n, ast.Return))
result = ast.literal_eval(ret)
assert set(result) == {"status", "content"}, result
assert {"json": {"frames": 512}} in result["content"], result
EOF
}

# --- building the hook environment (cargo install) -------------------------------
t=$SECONDS
run install-hooks
if [[ $rc == 0 ]]; then
    pass "pre-commit install-hooks built toolshape with cargo install ($((SECONDS - t))s)"
    verbose "$out"
else
    fail "pre-commit install-hooks exited $rc"
    show "$out"
    exit 1
fi

# --- toolshape-check --------------------------------------------------------------
before=$(cat "$PROJ/$BAD")
run run toolshape-check --all-files
verbose "$out"
if [[ $rc == 1 ]]; then pass "toolshape-check --all-files fails (exit 1)"
else fail "toolshape-check --all-files exited $rc, expected 1"; show "$out"; fi
if grep -q "$BAD:2:[0-9]*: TS001" <<<"$out"; then pass "toolshape-check names $BAD and TS001"
else fail "toolshape-check output lacks '$BAD:2:<col>: TS001'"; show "$out"; fi
if grep -q 'notes.txt' <<<"$out"; then fail "toolshape-check was given tools/notes.txt (types_or)"; show "$out"
else pass "toolshape-check is given Python files only"; fi
if grep -q 'gen_tool.py' <<<"$out"; then fail "toolshape-check reported $GEN, which the project excludes"; show "$out"
else pass "toolshape-check leaves out $GEN, excluded in pyproject.toml (--force-exclude)"; fi
if [[ $(cat "$PROJ/$BAD") == "$before" ]]; then pass "toolshape-check changed no file"
else fail "toolshape-check changed $BAD"; fi

# --- toolshape-fix ---------------------------------------------------------------
run run toolshape-fix --all-files
verbose "$out"
if [[ $rc == 1 ]] && grep -q 'files were modified by this hook' <<<"$out"; then
    pass "toolshape-fix --all-files fails because it modified files"
else fail "toolshape-fix --all-files exited $rc without 'files were modified by this hook'"; show "$out"; fi
if grep -q '"json"' "$PROJ/$BAD" && grep -q '"frames": 512' "$PROJ/$BAD" && fixed_shape "$PROJ/$BAD"; then
    pass "$BAD now carries {\"json\": {\"frames\": 512}} in its content list"
else fail "$BAD was not fixed as expected"; show "$(cat "$PROJ/$BAD")"; fi
if python3 -c "import ast, sys; ast.parse(open(sys.argv[1]).read())" "$PROJ/$BAD"; then
    pass "the fixed $BAD parses (ast.parse)"
else fail "the fixed $BAD does not parse"; fi
if [[ $(git -C "$PROJ" status --porcelain) == " M $BAD" ]]; then pass "toolshape-fix changed $BAD and nothing else"
else fail "unexpected changes after toolshape-fix"; show "$(git -C "$PROJ" status --porcelain)"; fi

# --- both hooks pass once fixed ---------------------------------------------------
git -C "$PROJ" add -A
run run --all-files
verbose "$out"
if [[ $rc == 0 ]]; then pass "pre-commit run --all-files (both hooks) passes after the fix"
else fail "pre-commit run --all-files exited $rc after the fix"; show "$out"; fi
git -C "$PROJ" commit -q -m "fixed by toolshape" --no-verify

# --- as a git hook ------------------------------------------------------------------
run install
if [[ $rc == 0 ]]; then pass "pre-commit install"; else fail "pre-commit install exited $rc"; show "$out"; fi
NEW=tools/new_tool.py
printf 'def u(n):\n    return {"status": "error", "content": [{"text": "failed"}], "attempts": n}\n' \
    >"$PROJ/$NEW"
git -C "$PROJ" add "$NEW"
head_before=$(git -C "$PROJ" rev-parse HEAD)
rc=0
out=$(cd "$PROJ" && git commit -m "add a tool that breaks the contract" 2>&1) || rc=$?
verbose "$out"
if [[ $rc != 0 && $(git -C "$PROJ" rev-parse HEAD) == "$head_before" ]] \
    && grep -q "$NEW:2:[0-9]*: TS001" <<<"$out"; then
    pass "git commit of a violating file is refused, naming $NEW and TS001"
else fail "git commit of a violating file: exit $rc, HEAD moved or no TS001 line"; show "$out"; fi
if grep -q '{"json": {"attempts": n}}' "$PROJ/$NEW"; then
    pass "the refused commit left $NEW fixed in the working tree"
else fail "$NEW was not fixed by the git hook"; show "$(cat "$PROJ/$NEW")"; fi
git -C "$PROJ" add "$NEW"
rc=0
out=$(cd "$PROJ" && git commit -m "add a tool, fixed" 2>&1) || rc=$?
verbose "$out"
if [[ $rc == 0 && $(git -C "$PROJ" rev-parse HEAD) != "$head_before" ]]; then
    pass "git commit of the fixed file goes through"
else fail "git commit of the fixed file exited $rc"; show "$out"; fi

finish
