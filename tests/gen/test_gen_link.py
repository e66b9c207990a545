#!/usr/bin/env python3
"""The serial protocol's generated views (spec/uart_link.toml ->
firmware/common/gmc_link.vh, include/gmc_link.h): fresh in the tree,
detected when stale, repaired by write, and the validator refuses a broken
spec. The C header and the Verilog include are compiled and their
constants compared. Prints 'gen_link: N passed, M failed'."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VIEWS = ("firmware/common/gmc_link.vh", "include/gmc_link.h")
results = []


def check(name, cond, detail=""):
    results.append((name, bool(cond)))
    if not cond:
        print(f"FAIL {name}: {detail}")


def gen(root, *args):
    return subprocess.run([sys.executable, os.path.join(root, "tools", "gen_link.py"), *args],
                          capture_output=True, text=True)


def copy_tree():
    tmp = tempfile.mkdtemp(prefix="gmc_genlink_")
    for d in ("spec", "tools"):
        shutil.copytree(os.path.join(ROOT, d), os.path.join(tmp, d))
    for f in VIEWS:
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

# A protocol change without regeneration is stale in both views.
tmp = copy_tree()
spec = os.path.join(tmp, "spec", "uart_link.toml")
text = open(spec).read().replace("version = 2 ", "version = 3 ", 1)
open(spec, "w").write(text)
r = gen(tmp, "check")
check("spec change without regeneration detected in both views",
      r.returncode == 1 and all(v in r.stderr for v in VIEWS), r.stderr)
shutil.rmtree(tmp)

broken = [
    ('code = 0x02\n', 'code = 0x01\n', "used by"),
    ('len = 14\nkind', 'len = 15\nkind', "max_len"),
    ('name = "DMA_ABORT"\ncode = 0x06', 'name = "DMA_ABORT"\ncode = 0x08', "0x01..0x07"),
    ('bit = 4\n', 'bit = 3\n', "duplicate"),
]
for old, new, word in broken:
    tmp = copy_tree()
    spec = os.path.join(tmp, "spec", "uart_link.toml")
    text = open(spec).read()
    assert old in text, old
    open(spec, "w").write(text.replace(old, new, 1))
    r = gen(tmp, "check")
    check(f"broken spec refused ({word})", r.returncode == 1 and word in r.stderr, r.stderr)
    shutil.rmtree(tmp)

# Cross-check: every constant as the C compiler and Icarus see it.
tmp = tempfile.mkdtemp(prefix="gmc_linkx_")
vh = open(os.path.join(ROOT, VIEWS[0])).read()
names = re.findall(r"localparam(?:\s+\[\d+:0\]|\s+integer)?\s+(\w+)\s*=", vh)
cmap = {}
for n in names:
    if n.startswith("LINK_"):
        cmap[n] = "GMC_" + n
    elif n.startswith("ST_"):
        cmap[n] = None  # a bit number in Verilog, a mask in C
    else:
        cmap[n] = "GMC_LINK_" + n
with open(os.path.join(tmp, "x.c"), "w") as f:
    f.write('#include <stdio.h>\n#include "gmc_link.h"\nint main(void){\n')
    for n, c in cmap.items():
        if c is None:
            f.write(f'printf("{n} %u\\n", (unsigned)__builtin_ctz(GMC_LINK_{n}));\n')
        else:
            f.write(f'printf("{n} %u\\n", (unsigned)({c}));\n')
    f.write("return 0;}\n")
with open(os.path.join(tmp, "x.v"), "w") as f:
    f.write('module x;\n`include "gmc_link.vh"\ninitial begin\n')
    for n in cmap:
        f.write(f'$display("{n} %0d", {n});\n')
    f.write("end\nendmodule\n")
cc = subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-I" + os.path.join(ROOT, "include"),
                     os.path.join(tmp, "x.c"), "-o", os.path.join(tmp, "xc")], capture_output=True, text=True)
iv = subprocess.run(["iverilog", "-g2005", "-I" + os.path.join(ROOT, "firmware", "common"), "-o",
                     os.path.join(tmp, "xv"), os.path.join(tmp, "x.v")], capture_output=True, text=True)
if cc.returncode == 0 and iv.returncode == 0:
    a = subprocess.run([os.path.join(tmp, "xc")], capture_output=True, text=True).stdout
    b = subprocess.run(["vvp", "-n", os.path.join(tmp, "xv")], capture_output=True, text=True).stdout
    check(f"C and Verilog agree on {len(cmap)} protocol constants", a == b and len(cmap) > 40, a + "\n---\n" + b)
else:
    check("C and Verilog views compile", False, cc.stderr + iv.stderr)
shutil.rmtree(tmp)

passed = sum(1 for _, ok in results if ok)
failed = len(results) - passed
print(f"gen_link: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
