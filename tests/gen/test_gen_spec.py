#!/usr/bin/env python3
"""The register map's generated views: fresh in the tree, detected when
stale, and the spec validator refuses a broken spec. Prints
'gen_spec: N passed, M failed' and exits non-zero on a failure."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
results = []


def check(name, cond, detail=""):
    results.append((name, bool(cond)))
    if not cond:
        print(f"FAIL {name}: {detail}")


def gen(root, *args):
    return subprocess.run([sys.executable, os.path.join(root, "tools", "gen_spec.py"), *args],
                          capture_output=True, text=True)


def copy_tree():
    tmp = tempfile.mkdtemp(prefix="gmc_gen_")
    for d in ("spec", "tools"):
        shutil.copytree(os.path.join(ROOT, d), os.path.join(tmp, d))
    for f in ("rtl/gmc_regs.vh", "include/gmc_regs.h", "docs/registers.md"):
        os.makedirs(os.path.join(tmp, os.path.dirname(f)), exist_ok=True)
        shutil.copy(os.path.join(ROOT, f), os.path.join(tmp, f))
    return tmp


r = gen(ROOT, "check")
check("committed views are fresh", r.returncode == 0, r.stderr)

for view in ("rtl/gmc_regs.vh", "include/gmc_regs.h", "docs/registers.md"):
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

# The validator refuses broken specs, naming the problem.
broken = [
    ('offset = 0x028', 'offset = 0x004', "overlaps"),
    ('offset = 0x028', 'offset = 0x029', "aligned"),
    ('access = "rw"\nreset = 0\ndesc = "Free', 'access = "rx"\nreset = 0\ndesc = "Free', "access"),
    ('{ name = "MAJOR", lsb = 16, width = 16', '{ name = "MAJOR", lsb = 8, width = 16', "overlaps"),
    ('reset = 0x1000', 'reset = 0x100000000', "reserved"),
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
