#!/usr/bin/env bash
# Run test executables, tally the cmocka cases, print one closing line:
#   tests: N passed, M failed, K skipped
# A test that cannot run here (privileges, hardware) is skipped, never
# passed: cmocka's "[  SKIPPED ] N test(s)" or a plain program's
# "name: N passed, M failed, K skipped".
# Each binary's output is kept in build/test-logs/<name>.log; a failing
# binary's log is printed in full.
# A binary that runs longer than GMC_TEST_TIMEOUT seconds (900 unless set;
# the longest takes about 140 s on an idle 2-core machine) is stopped and
# counted as failed, its log printed: a hang costs minutes, never the run.
set -u
limit=${GMC_TEST_TIMEOUT:-900}
logdir=${TEST_LOGDIR:-build/test-logs}
mkdir -p "$logdir"
pass=0; fail=0; skipped=0; bad_bins=""
for bin in "$@"; do
  name=$(printf '%s' "$bin" | sed -e 's|^.*build/||' -e 's|^tests/||' -e 's|/tests/|/|' -e 's|/|_|g')
  log="$logdir/$name.log"
  timeout -k 30 "$limit" "$bin" >"$log" 2>&1; rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "---- TIMEOUT $bin: stopped after ${limit} s ----" >>"$log"
  fi
  p=$(grep -o '\[  PASSED  \] [0-9]* test(s)' "$log" | awk '{s+=$4} END {print s+0}')
  f=$(grep -o '\[  FAILED  \] [0-9]* test(s), listed below' "$log" | awk '{s+=$4} END {print s+0}')
  k=$(grep -o '\[  SKIPPED \] [0-9]* test(s)' "$log" | awk '{s+=$4} END {print s+0}')
  # A plain test program reports its own "name: N passed, M failed" line.
  plain=$(grep -E '^[A-Za-z0-9_]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  if [ -n "$plain" ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
    p=$(printf '%s' "$plain" | sed -E 's/^[^:]*: ([0-9]+) passed.*/\1/')
    f=$(printf '%s' "$plain" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    k=$(printf '%s' "$plain" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
    k=${k:-0}
  fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed or a non-cmocka check failed
  if [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$k" -eq 0 ]; then p=1; fi    # a plain check program that exited 0
  pass=$((pass + p)); fail=$((fail + f)); skipped=$((skipped + k))
  if [ "$rc" -ne 0 ]; then
    bad_bins="$bad_bins $name"
    echo "---- FAIL $bin (exit $rc) ----"; cat "$log"
  else
    printf '  ok   %-40s %4d case(s)%s\n' "$name" "$p" "$([ "$k" -gt 0 ] && echo ", $k skipped")"
  fi
done
echo "tests: $pass passed, $fail failed, $skipped skipped"
[ -z "$bad_bins" ] || { echo "failing:$bad_bins"; exit 1; }
