#!/usr/bin/env bash
# Make sure the Debian packages a make target needs are installed.
#   tools/deps.sh test|run|bench|lint|fuzz|all
# Missing packages are installed with apt-get (through sudo when not root).
# When that is impossible, print the exact command to run and fail.
set -u
set_name=${1:-all}
base="make gcc g++ python3 pkg-config zlib1g-dev verilator iverilog libcmocka-dev yosys z3 librsvg2-bin"
case "$set_name" in
  test|run|lint) pkgs="$base" ;;
  fuzz) pkgs="$base clang-14 libclang-rt-14-dev" ;;   # make fuzz (libFuzzer); make test needs neither
  bench|firmware|all) pkgs="$base nextpnr-ice40 fpga-icestorm openfpgaloader" ;;
  *) echo "deps.sh: unknown set '$set_name' (test|run|lint|fuzz|bench|firmware|all)" >&2; exit 2 ;;
esac
# The eviction benchmark's optimum (bench/evict_opt.py: SciPy's milp, HiGHS) and its test.
case "$set_name" in test|bench|firmware|all) pkgs="$pkgs python3-scipy" ;; esac
# Instruction counts (callgrind) and time shares (perf) in make bench.
case "$set_name" in bench|firmware|all) pkgs="$pkgs valgrind linux-perf" ;; esac
missing=""
for p in $pkgs; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
  case "$st" in *" installed") ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
cmd="apt-get install -y --no-install-recommends$missing"
echo "deps: installing$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive $cmd -qq) >&2 && exit 0
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  (sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive $cmd -qq) >&2 && exit 0
fi
echo "deps: could not install the packages. Run this, then try again:" >&2
echo "  sudo apt-get update && sudo $cmd" >&2
exit 1
