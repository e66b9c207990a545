#!/usr/bin/env python3
"""The register map's generated views (tools/gen.py, renderer
tools/gen_spec.py, loader tools/gmc_spec.py): fresh in the tree, detected
when stale, and the spec validator refuses a broken spec. Prints
'gen_spec: N passed, M failed' and exits non-zero on a failure."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True  # leave no __pycache__ in tools/
sys.path.insert(0, os.path.join(ROOT, "tools"))
import gen as gen_tool  # noqa: E402  (for the list of generated files only)

results = []
VIEWS = ("rtl/gmc_regs.vh", "rtl/gmc_defaults.vh", "include/gmc_regs.h", "docs/registers.md")


def check(name, cond, detail=""):
    results.append((name, bool(cond)))
    if not cond:
        print(f"FAIL {name}: {detail}")


def gen(root, *args):
    return subprocess.run([sys.executable, os.path.join(root, "tools", "gen.py"), *args],
                          capture_output=True, text=True)


def copy_tree():
    tmp = tempfile.mkdtemp(prefix="gmc_gen_")
    # tests/host: the [[behaviour]] rows of spec/rules.toml name tests there,
    # and the one loader checks them whatever is generated.
    for d in ("spec", "tools", os.path.join("tests", "host")):
        shutil.copytree(os.path.join(ROOT, d), os.path.join(tmp, d))
    for f in gen_tool.OUTPUTS + gen_tool.INPUTS:
        os.makedirs(os.path.join(tmp, os.path.dirname(f)), exist_ok=True)
        shutil.copy(os.path.join(ROOT, f), os.path.join(tmp, f))
    return tmp


r = gen(ROOT, "check")
check("committed views are fresh", r.returncode == 0, r.stderr)

for view in VIEWS:
    tmp = copy_tree()
    with open(os.path.join(tmp, view), "a") as f:
        f.write("\n")
    r = gen(tmp, "check")
    check(f"stale {view} detected", r.returncode == 1 and view in r.stderr, r.stderr)
    r = gen(tmp, "write")
    r2 = gen(tmp, "check")
    check(f"write repairs {view}", r.returncode == 0 and r2.returncode == 0, r2.stderr)
    shutil.rmtree(tmp)

# A spec edit without regeneration is stale too.
tmp = copy_tree()
spec = os.path.join(tmp, "spec", "gmc.toml")
text = open(spec).read().replace('name = "SCRATCH"\noffset = 0x028', 'name = "SCRATCH"\noffset = 0x02C')
open(spec, "w").write(text)
r = gen(tmp, "check")
check("spec change without regeneration detected", r.returncode == 1, r.stderr)
shutil.rmtree(tmp)

# A changed gmc_top default makes exactly its three views stale, and write
# puts the new value into both.
tmp = copy_tree()
spec = os.path.join(tmp, "spec", "gmc.toml")
text = open(spec).read()
old = '{ name = "TLB_ENTRIES",        value = 16,'
assert old in text, old
open(spec, "w").write(text.replace(old, '{ name = "TLB_ENTRIES",        value = 32,', 1))
r = gen(tmp, "check")
stale = sorted(line.split(" is stale")[0] for line in r.stderr.splitlines() if " is stale" in line)
check("changed default makes exactly gmc_defaults.vh, gmc_regs.h and registers.md stale",
      r.returncode == 1 and stale == ["docs/registers.md", "include/gmc_regs.h", "rtl/gmc_defaults.vh"], stale)
gen(tmp, "write")
vh = open(os.path.join(tmp, "rtl", "gmc_defaults.vh")).read()
ch = open(os.path.join(tmp, "include", "gmc_regs.h")).read()
check("write puts the new default into the RTL and C views",
      "`define GMC_TOP_TLB_ENTRIES         32 " in vh and "#define GMC_TOP_TLB_ENTRIES 32u " in ch,
      [line for line in (vh + ch).splitlines() if "TLB_ENTRIES" in line])
shutil.rmtree(tmp)

# The validator refuses broken specs, naming the problem.
broken = [
    ('offset = 0x028', 'offset = 0x004', "overlaps"),
    ('offset = 0x028', 'offset = 0x029', "aligned"),
    ('access = "rw"\nreset = 0\ndesc = "Free', 'access = "rx"\nreset = 0\ndesc = "Free', "access"),
    ('{ name = "MAJOR", lsb = 16, width = 16', '{ name = "MAJOR", lsb = 8, width = 16', "overlaps"),
    ('reset = 0x1000', 'reset = 0x100000000', "reserved"),
    ('value = ["USE_BANKING", "PRESERVED_DURING_STANDBY"]', 'value = ["BANKING", "PRESERVED_DURING_STANDBY"]',
     "not a SEGFLAGS field"),
    ('value = 4,          bits = 8,', 'value = 256,        bits = 8,', "does not fit 8 bits"),
    ('value = 0x80000000, bits = 32,', 'value = 0x80000000,', "does not fit an integer"),
    ('{ name = "M_ID_WIDTH",', '{ name = "S_ID_WIDTH",', "new [A-Z0-9_]* name"),
]
for old, new, word in broken:
    tmp = copy_tree()
    spec = os.path.join(tmp, "spec", "gmc.toml")
    text = open(spec).read()
    assert old in text, old
    open(spec, "w").write(text.replace(old, new, 1))
    r = gen(tmp, "check")
    check(f"broken spec refused ({word})", r.returncode == 1 and word in r.stderr, r.stderr)
    shutil.rmtree(tmp)

passed = sum(1 for _, ok in results if ok)
failed = len(results) - passed
print(f"gen_spec: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
