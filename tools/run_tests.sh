#!/usr/bin/env bash
# Run test executables, tally the cmocka cases, print one closing line:
#   tests: N passed, M failed
# Each binary's output is kept in build/test-logs/<name>.log; a failing
# binary's log is printed in full.
set -u
logdir=${TEST_LOGDIR:-build/test-logs}
mkdir -p "$logdir"
pass=0; fail=0; bad_bins=""
for bin in "$@"; do
  name=$(basename "$bin")
  [ "${bin%/*}" != "$bin" ] && name=$(basename "$(dirname "$bin")")_$name
  log="$logdir/$name.log"
  "$bin" >"$log" 2>&1; rc=$?
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$log" | awk '{s+=$1} END {print s+0}')
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed or a non-cmocka check failed
  if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then p=1; fi    # a plain check program that exited 0
  pass=$((pass + p)); fail=$((fail + f))
  if [ "$rc" -ne 0 ]; then
    bad_bins="$bad_bins $name"
    echo "---- FAIL $bin (exit $rc) ----"; cat "$log"
  else
    printf '  ok   %-40s %4d case(s)\n' "$name" "$p"
  fi
done
echo "tests: $pass passed, $fail failed"
[ -z "$bad_bins" ] || { echo "failing:$bad_bins"; exit 1; }
