#!/usr/bin/env bash
# npm run reference:setup — the reference environment of the conformance harness
# (docs/conformance.md): NVIDIA's aisimulate with the Dynamo stack (ai-dynamo, the Planner's
# packages) in a git-ignored virtual environment, .reference/venv, at the pinned versions of
# requirements.txt + constraints.txt, and the offline model directories in .reference/models.
# A development tool only: the CLI, the package and `npm test` never need Python.
#
#   FLEETSIM_REFERENCE_PYTHON=python3.12 npm run reference:setup   # pick the interpreter
#   npm run reference:setup -- --refreeze                          # re-resolve and rewrite constraints.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/reference
venv=.reference/venv
refreeze=0
[ "${1:-}" = "--refreeze" ] && refreeze=1

pick_python() {
  for candidate in "${FLEETSIM_REFERENCE_PYTHON:-}" python3.13 python3.12 python3.11 python3; do
    [ -n "$candidate" ] || continue
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] <= (3, 13) else 1)' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

python=$(pick_python) || {
  echo "reference:setup: aisimulate needs CPython 3.11-3.13 (abi3 wheel); none found (set FLEETSIM_REFERENCE_PYTHON)" >&2
  exit 2
}
echo "== interpreter: $($python --version) ($python)"

if [ ! -x "$venv/bin/python" ]; then
  echo "== creating $venv"
  "$python" -m venv "$venv"
fi

echo "== installing the reference (one resolver call; see $here/requirements.txt)"
if [ "$refreeze" -eq 1 ]; then
  "$venv/bin/pip" install --disable-pip-version-check -q -r "$here/requirements.txt"
else
  "$venv/bin/pip" install --disable-pip-version-check -q -r "$here/requirements.txt" -c "$here/constraints.txt"
fi

echo "== pip check"
"$venv/bin/pip" check

if [ "$refreeze" -eq 1 ]; then
  { sed -n '1,2p' "$here/constraints.txt"; "$venv/bin/pip" freeze --exclude-editable; } > "$here/constraints.txt.new"
  mv "$here/constraints.txt.new" "$here/constraints.txt"
  echo "== rewrote $here/constraints.txt"
fi

echo "== the stacks aisimulate finds (engine built in, dynamo from ai-dynamo)"
"$venv/bin/python" - <<'PY'
import importlib.metadata as md
eps = sorted(e.name for e in md.entry_points().select(group="aisimulate.runner_factories"))
print("  runner factories:", ", ".join(["engine", *eps]))
for name in ("aisimulate", "ai-dynamo", "ai-dynamo-runtime"):
    print(f"  {name} {md.version(name)}")
import dynamo.replay.simulation  # noqa: F401  (the dynamo stack imports: fails here, not mid-harness)
import dynamo.planner.core.load.predictors  # noqa: F401
PY

echo "== offline model directories (.reference/models)"
"$venv/bin/python" "$here/models.py" .reference/models

echo "== ok: npm run conformance runs the harness"
