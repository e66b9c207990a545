#!/usr/bin/env bash
# The Verilator 5.006 scheduler shortcut and its fallback (docs/sim.md,
# The cycle). tools/check_sched.py decides from the generated code whether
# the shim may skip eval()'s trigger loops; when the layout check fails the
# shim runs the plain eval(). This checks that decision on the release
# model's generated code, on copies of it with the layout broken, and that
# the evl model (built with --force-eval, on which the DMA tests with exact
# cycle counts run again: EVL_TESTS) really was built without the shortcut.
# Prints "sched_fallback: N passed, M failed, K skipped".
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
pass=0; fail=0; skip=0
ok() { pass=$((pass + 1)); echo "  ok   $1"; }
bad() { fail=$((fail + 1)); echo "  FAIL $1"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

rel=$BUILD/rel/vobj
if [ ! -f "$rel/gmc_sched.h" ]; then
  bad "release model not built ($rel/gmc_sched.h missing)"
elif grep -q '^#define GMC_SIM_SCHED_SHORTCUT 1' "$rel/gmc_sched.h"; then
  ok "release model: layout as expected, shortcut on"
  # Copies of its generated scheduler: as built, forced, and with the
  # layout broken in the ways another Verilator version would break it.
  cp "$rel"/Vgmc_top___024root__DepSet_*.cpp "$tmp/"
  decide() { python3 tools/check_sched.py "$@" "$tmp" >/dev/null && cat "$tmp/gmc_sched.h"; }
  h=$(decide)
  if printf '%s' "$h" | grep -q '^#define GMC_SIM_SCHED_SHORTCUT 1'; then ok "copy: shortcut on"; else bad "copy: $h"; fi
  h=$(decide --force-eval)
  if printf '%s' "$h" | grep -q 'Shortcut off: forced by --force-eval' &&
     printf '%s' "$h" | grep -q '^#define GMC_SIM_SCHED_SHORTCUT 0'; then
    ok "--force-eval: shortcut off"; else bad "--force-eval: $h"; fi
  broken() {  # name, sed expression applied to the copy
    rm -f "$tmp"/*.cpp; cp "$rel"/Vgmc_top___024root__DepSet_*.cpp "$tmp/"
    sed -i "$2" "$tmp"/Vgmc_top___024root__DepSet_*.cpp
    h=$(decide)
    if printf '%s' "$h" | grep -q '^#define GMC_SIM_SCHED_SHORTCUT 0' && printf '%s' "$h" | grep -q "$3"; then
      ok "$1: shortcut off"; else bad "$1: $h"; fi
  }
  broken "a fourth trigger" 's/__VactTriggered.at(2U) = /__VactTriggered.at(3U) = (IData)(vlSelf->clk);\n    vlSelf->__VactTriggered.at(2U) = /' "more than three triggers"
  broken "another trigger order" 's/__VactTriggered.at(1U)/__VactTriggered.at(9U)/' "trigger 1 is not the expected edge"
  broken "no trigger function" 's/___eval_triggers__act(/___eval_triggers_act_renamed(/' "eval_triggers__act not found"
else
  skip=$((skip + 4))
  echo "  skip release model built without the shortcut ($(grep 'Shortcut off' "$rel/gmc_sched.h")): nothing to fall back from"
fi

evl=$BUILD/evl/vobj/gmc_sched.h
if [ -f "$evl" ] && grep -q 'Shortcut off: forced by --force-eval' "$evl" &&
   grep -q '^#define GMC_SIM_SCHED_SHORTCUT 0' "$evl"; then
  ok "evl model: built for the plain eval()"
else
  bad "evl model: $evl missing or not forced off"
fi
echo "sched_fallback: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
