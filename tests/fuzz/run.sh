#!/bin/sh
# tests/fuzz/run.sh BUILD "LIBFUZZER OPTIONS" NAME... - runs each harness
# BUILD/fuzz/fuzz_NAME over its committed corpus (tests/fuzz/corpus/NAME,
# read only) and a scratch one (BUILD/corpus/NAME, where new inputs go),
# with the options given, and prints one line per harness: executions, and
# what it found.  Crashing inputs are saved in BUILD/artifacts/NAME/.
# Exits 1 when any harness found something.
set -u
build=$1
opts=$2
shift 2
here=$(dirname "$0")
status=0
for name in "$@"; do
    bin=$build/fuzz/fuzz_$name
    scratch=$build/corpus/$name
    artifacts=$build/artifacts/$name
    log=$build/logs/$name.log
    mkdir -p "$scratch" "$artifacts" "$(dirname "$log")"
    # shellcheck disable=SC2086 # opts is a list of options
    "$bin" $opts -print_final_stats=1 -artifact_prefix="$artifacts/" \
        "$scratch" "$here/corpus/$name" </dev/null >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    found=$(grep -c '^==[0-9]*==ERROR\|property broken\|^SUMMARY: ' "$log")
    if [ "$rc" -eq 0 ]; then
        printf '%-12s %10s executions, nothing found\n' "$name" "${execs:-?}"
    else
        status=1
        printf '%-12s %10s executions, FAILED (exit %d, %d report lines): see %s\n' \
            "$name" "${execs:-?}" "$rc" "$found" "$log"
        grep -m 3 'property broken\|^==[0-9]*==ERROR\|^SUMMARY' "$log" | sed 's/^/    /'
    fi
done
exit $status
