#!/usr/bin/env bash
# The pci backend against the real RTL: libpciaccess opens a fake gmc
# device (tests/pci/fakepci_run.c) whose BARs are the Verilated gmc_top
# through trapped accesses (tests/pci/pci_trap.c, preloaded). The unmodified
# gmc command's `info` and a register/aperture workload that needs no DMA
# (tests/pci/pci_workload.c) must give the same answers on `pci` as on `sim`.
# Without root or unshare -m every case is reported skipped, with the reason.
set -u
build=${BUILD:-build}
bin=$build/rel/tests/pci
gmc=$build/rel/bin/gmc
dev=0000:01:00.0
ncases=7
pass=0; fail=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
check() { if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $*"; fi; }

"$bin/fakepci-run" true 2>"$out/why"; rc=$?
if [ "$rc" -eq 77 ]; then
  echo "pci_rtl: skipped: $(cat "$out/why")"
  echo "pci_rtl: 0 passed, 0 failed, $ncases skipped"
  exit 0
fi
check test "$rc" -eq 0

# gmc list: the simulator and the one gmc device, not the other device
# (lines starting with # say why something is not a device: no serial board)
"$bin/fakepci-run" "$gmc" list >"$out/list.txt" 2>&1
check test "$(grep -v '^#' "$out/list.txt" | cut -c1-24 | sed 's/ *$//' | tr '\n' ' ')" = "sim pci:$dev "
# 1. gmc info: the same report, but for the first line (device string, backend)
"$gmc" info --device sim >"$out/sim.txt" 2>&1
"$bin/fakepci-run" env GMC_TRAP_DEV=/sys/bus/pci/devices/$dev LD_PRELOAD="$bin/pci_trap.so" \
  "$gmc" info --device pci:$dev >"$out/pci.txt" 2>"$out/pci.err"
check test "$(head -1 "$out/pci.txt")" = "device pci:$dev (backend pci)"
check diff <(tail -n +2 "$out/sim.txt") <(tail -n +2 "$out/pci.txt")
# "pci" alone finds the same device (the other fake device is not a gmc)
"$bin/fakepci-run" env GMC_TRAP_DEV=/sys/bus/pci/devices/$dev LD_PRELOAD="$bin/pci_trap.so" \
  "$gmc" info --device pci >"$out/pci2.txt" 2>>"$out/pci.err"
check diff <(tail -n +2 "$out/sim.txt") <(tail -n +2 "$out/pci2.txt")
# 2. the workload: each run checks its own values, and the transcripts agree
"$bin/pci-workload" sim >"$out/wsim.txt" 2>"$out/wsim.err"; wsim=$?
"$bin/fakepci-run" env GMC_TRAP_DEV=/sys/bus/pci/devices/$dev LD_PRELOAD="$bin/pci_trap.so" \
  "$bin/pci-workload" pci:$dev >"$out/wpci.txt" 2>"$out/wpci.err"; wpci=$?
check test "$wsim" -eq 0 -a "$wpci" -eq 0
check diff "$out/wsim.txt" "$out/wpci.txt"
if [ "$fail" -ne 0 ]; then
  for f in list.txt sim.txt pci.txt pci2.txt pci.err wsim.txt wsim.err wpci.txt wpci.err; do
    echo "---- $f"; cat "$out/$f"
  done
fi
echo "pci_rtl: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
