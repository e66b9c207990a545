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
# AXI4 aperture slave. One protected range, a small window and narrow IDs
# keep the proof quick; they do not change the protocol logic. (The
# default parameters prove too, in about a minute.)
prove gmc_aperture 12 "chparam -set PROT_RANGES 1 -set WINDOW_BYTES 8192 -set ID_WIDTH 2 -set VRAM_AW 10 gmc_aperture"
echo "formal: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
