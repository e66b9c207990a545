#!/usr/bin/env bash
# make install into a staging DESTDIR, then build tests/install/consumer.c
# outside the tree against it: with pkg-config (shared) and statically.
set -u
build=${1:-${BUILD:-build}}
stage=$(mktemp -d)
out=$(mktemp -d)
trap 'rm -rf "$stage" "$out"' EXIT
pass=0; fail=0
check() { if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $*"; fi; }
expect='id 474d4300 segments 3
segment 1 base 0 size 200000 flags 84
segment 2 base 200000 size 5f0000 flags 88
segment 3 base 80000000 size 1000000 flags 191
aperture through BAR1'

make -s install BUILD="$build" PREFIX=/opt/gmc DESTDIR="$stage" >"$out/install.log" 2>&1
check test -f "$stage/opt/gmc/include/gmc/gmc_sim.h"
check test -f "$stage/opt/gmc/lib/pkgconfig/gmc_sim.pc"
export PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$stage/opt/gmc/lib/pkgconfig"
cp tests/install/consumer.c "$out/"
(cd "$out" && cc -std=c11 -Wall -Werror consumer.c $(pkg-config --cflags --libs gmc_sim) -o shared) >>"$out/install.log" 2>&1
check test -x "$out/shared"
check test "$(LD_LIBRARY_PATH="$stage/opt/gmc/lib" "$out/shared" 2>&1)" = "$expect"
(cd "$out" && cc -std=c11 -Wall -Werror consumer.c $(pkg-config --cflags gmc_sim) \
   "$stage/opt/gmc/lib/libgmc_sim.a" $(pkg-config --libs-only-l --static gmc_sim | sed 's/-lgmc_sim//') \
   -o static) >>"$out/install.log" 2>&1
check test -x "$out/static"
check test "$("$out/static" 2>&1)" = "$expect"
# The host library, through pkg-config gmc (which requires gmc_sim). A
# 0-byte allocation breaks rule ALLOC_SIZE_VALID (spec/rules.toml).
cp tests/install/consumer_gmc.c "$out/"
(cd "$out" && cc -std=c11 -Wall -Werror consumer_gmc.c $(pkg-config --cflags gmc) \
   "$stage/opt/gmc/lib/libgmc.a" "$stage/opt/gmc/lib/libgmc_sim.a" $(pkg-config --libs-only-l --static gmc | sed -E 's/-lgmc(_sim)?( |$)/ /g') \
   -o gmc_static) >>"$out/install.log" 2>&1
check test -x "$out/gmc_static"
check test "$("$out/gmc_static" 2>&1)" = "create: GMC_OK
bad create: GMC_E_RULE_ALLOC_SIZE_INVALID"
check test -f "$stage/opt/gmc/lib/pkgconfig/gmc.pc"
# The gmc command, installed and run from the staging tree.
check test -x "$stage/opt/gmc/bin/gmc"
check test "$("$stage/opt/gmc/bin/gmc" info --device sim 2>&1 | grep -c '^ *[123]: ')" = 3
[ "$fail" -eq 0 ] || cat "$out/install.log"
echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
