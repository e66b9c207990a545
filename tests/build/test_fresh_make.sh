#!/usr/bin/env bash
# The newcomer's path on a machine where the tools are not installed yet.
#
# `make run` is started in a copy of the source tree with a PATH on which
# the tools tools/deps.sh installs (verilator, g++, iverilog, yosys,
# rsvg-convert) are missing. In the copy, tools/deps.sh is a stand-in that
# "installs" them: it puts them on that PATH, then runs the real
# tools/deps.sh, which finds every package present. Everything else is the
# project's own Makefile, in a fresh build directory. The run must succeed the first time and be built
# as on a machine that had the tools all along: the model profile-guided
# (PGO asks g++ which compiler it is) and compiled against Verilator's
# headers (VLT_ROOT asks verilator). A Makefile that asks a tool while it
# reads itself gets an empty answer here and fails, as it would on a new
# machine.
#
# Prints "test_fresh_make: N passed, M failed".
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }

late="verilator verilator_bin g++ c++ x86_64-linux-gnu-g++ iverilog vvp yosys rsvg-convert"
bin="$tmp/bin"
mkdir -p "$bin"
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -d "$d" ] || continue
  for f in "$d"/*; do
    n=${f##*/}
    case " $late " in *" $n "*) continue ;; esac
    [ -x "$f" ] && [ ! -e "$bin/$n" ] && ln -s "$f" "$bin/$n"
  done
done
for t in $late; do
  real=$(command -v "$t") || { echo "test_fresh_make: $t is not installed here; run tools/deps.sh test"; exit 1; }
  echo "$t $real" >>"$tmp/late.list"
done

# The stand-in for the install step: the late tools appear on the PATH
# only now, then the real dependency check runs.
src="$tmp/src"
mkdir -p "$src"
(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$src")
cat >"$src/tools/deps.sh" <<EOF
#!/usr/bin/env bash
while read -r name real; do ln -sf "\$real" "$bin/\$name"; done <"$tmp/late.list"
echo "\$*" >>"$tmp/deps.calls"
exec "$root/tools/deps.sh" "\$@"
EOF

check '! PATH="$bin" command -v verilator >/dev/null && ! PATH="$bin" command -v g++ >/dev/null' \
  "verilator and g++ are off the PATH before the dependency step"

out="$tmp/make.log"
(cd "$src" && env -i PATH="$bin" HOME="$HOME" make BUILD="$tmp/build" run) >"$out" 2>&1
rc=$?
check '[ $rc -eq 0 ]' "first make run succeeds (exit $rc); log: $(tail -15 "$out")"
check 'grep -q "^  digest            [0-9a-f]\{16\}$" "$out"' "make run printed the run's digest"
check 'grep -q "^pictures: .*, and .png copies$" "$out" && [ -s "$tmp/build/run/segment-2.png" ]' \
  "the PNG copies were drawn with rsvg-convert installed by the dependency step"
check '[ -s "$tmp/deps.calls" ] && head -1 "$tmp/deps.calls" | grep -qx test' "the dependency step ran, for the test set"
check 'ls "$tmp/build/rel/pgo"/*.gcda >/dev/null 2>&1' \
  "the model was built profile-guided (g++ found after the dependency step)"
vroot=$(verilator --getenv VERILATOR_ROOT)
check 'grep -q -- "-I$vroot/include -I$vroot/include/vltstd -c sim/gmc_sim.cpp" "$out"' \
  "the shim was compiled against Verilator's headers (VLT_ROOT found after the dependency step)"

echo "test_fresh_make: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
