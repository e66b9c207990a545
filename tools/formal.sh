#!/usr/bin/env bash
# Prove a module's `ifdef FORMAL properties with yosys-smtbmc and z3:
# a bounded model check from reset, then k-induction (unbounded).
#   tools/formal.sh MODULE DEPTH ["chparam -set P V ... MODULE"] [BMC_ONLY]
# FORMAL_SRC replaces rtl/MODULE.v (a seeded-bug copy, tests/formal) and
# FORMAL_OUT the output directory; FORMAL_COVER=1 also requires every
# cover() to be reached within DEPTH steps. BMC_ONLY=1 skips the induction (a
# seeded bug only has to fail the BMC).
# Memories are mapped to flip-flops (z3 is slow on array theory); a
# chparam command can shrink widths that do not change the protocol logic.
# --unroll: z3 4.8 is pathologically slow expanding the write_smt2
# define-fun macros (one per wire, applied to the state argument) inside
# the two-argument transition relation; gmc_aperture never got past
# step 0. Unrolled, smtbmc hands z3 plain constants per step instead.
# Prints "formal MODULE: N passed, M failed".
set -u
mod=$1; depth=$2; params=${3:-}; bmc_only=${4:-0}
src=${FORMAL_SRC:-rtl/$mod.v}
out=${FORMAL_OUT:-${BUILD:-build}/formal/$mod}
mkdir -p "$out"
yosys -q -l "$out/yosys.log" -p "read_verilog -formal -DFORMAL -Irtl $src; $params; prep -top $mod; \
  memory_map; opt -fast; async2sync; dffunmap; write_smt2 -wires $out/$mod.smt2" || { echo "formal $mod: 0 passed, 1 failed"; exit 1; }
pass=0; fail=0
if yosys-smtbmc -s z3 --unroll --presat -t "$depth" --dump-vcd "$out/bmc.vcd" "$out/$mod.smt2" >"$out/bmc.log" 2>&1; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "BMC of $mod failed (trace: $out/bmc.vcd):"; tail -5 "$out/bmc.log"
fi
# FORMAL_COVER=1: every cover() must be reached within the depth.
if [ "${FORMAL_COVER:-0}" = 1 ]; then
  if yosys-smtbmc -s z3 --unroll -c -t "$depth" --dump-vcd "$out/cover.vcd" "$out/$mod.smt2" >"$out/cover.log" 2>&1; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "cover of $mod failed:"; grep -i 'unreached\|failed' "$out/cover.log" | tail -5
  fi
fi
if [ "$bmc_only" = 1 ]; then
  :
elif yosys-smtbmc -s z3 --unroll -i -t "$depth" --dump-vcd "$out/ind.vcd" "$out/$mod.smt2" >"$out/ind.log" 2>&1; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "induction of $mod failed (trace: $out/ind.vcd):"; tail -5 "$out/ind.log"
fi
echo "formal $mod: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
