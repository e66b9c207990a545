#!/usr/bin/env bash
# Formal proofs of the bus ports (tools/formal.sh: BMC from reset, then
# k-induction, with yosys-smtbmc and z3). Prints "formal: N passed, M failed".
set -u
cd "$(dirname "$0")/../.."
pass=0; fail=0
prove() {
  if out=$(tools/formal.sh "$@" 2>&1); then pass=$((pass + 1)); else fail=$((fail + 1)); printf '%s\n' "$out"; fi
}
# AXI4-Lite register slave.
prove gmc_axil_regif 16
echo "formal: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
