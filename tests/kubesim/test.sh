#!/usr/bin/env bash
# Runs every kubesim test: the unittest suites (API and simulated cluster),
# then the scripted session with the real kubectl. Prints a final
# "N passed, N failed" line and exits non-zero when anything failed.
# Run from anywhere; `make test` calls it.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
LOG=$(mktemp /tmp/kubesim-unittest.XXXXXX)
trap 'rm -f "$LOG"' EXIT

cd "$HERE/../.." || exit 2      # the repository root, where discovery paths are relative
if [ ! -d "$HERE/cel/node_modules/@bufbuild/cel" ]; then
    echo "kubesim: $HERE/cel/node_modules missing: run 'make deps' (npm ci in tests/kubesim/cel)" >&2
fi

timeout 900 python3 -m unittest discover -s tests/kubesim/tests -t tests/kubesim -v >"$LOG" 2>&1
urc=$?
grep -E '(\.\.\. (ok|FAIL|ERROR|skipped)|^(FAIL|ERROR):)' "$LOG" | grep -v '^\(FAIL\|ERROR\):' || true
ran=$(sed -n 's/^Ran \([0-9]*\) tests\? in.*/\1/p' "$LOG" | tail -1)
ran=${ran:-0}
ufail=$(sed -n 's/^FAILED (\(.*\))$/\1/p' "$LOG" | tr ',' '\n' | sed -n 's/.*\(failures\|errors\)=\([0-9]*\).*/\2/p' |
    awk '{s += $1} END {print s + 0}')
uskip=$(sed -n 's/.*skipped=\([0-9]*\).*/\1/p' "$LOG" | tail -1)
uskip=${uskip:-0}
if [ "$urc" != 0 ] && [ "$ufail" = 0 ]; then
    ufail=1     # crashed or timed out before reporting
fi
if [ "$urc" != 0 ]; then
    echo "---- unittest output (failures) ----"
    sed -n '/^======/,$p' "$LOG" | head -200
    [ "$ufail" = 1 ] && [ "$ran" = 0 ] && tail -40 "$LOG"
fi
upass=$((ran - ufail - uskip))
echo "unittest: $upass passed, $ufail failed, $uskip skipped"

SLOG=$(mktemp /tmp/kubesim-session.XXXXXX)
timeout 600 "$HERE/tests/test_kubectl_session.sh" >"$SLOG" 2>&1
src=$?
cat "$SLOG"
spass=$(grep -c '^ok - ' "$SLOG")
sfail=$(grep -c '^not ok - ' "$SLOG")
if [ "$src" != 0 ] && [ "$sfail" = 0 ]; then
    sfail=1
fi
rm -f "$SLOG"

pass=$((upass + spass))
fail=$((ufail + sfail))
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
