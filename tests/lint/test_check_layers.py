#!/usr/bin/env python3
"""Tests of tools/check_layers.py: the repository passes, and the check
fails, naming file and line, on each kind of include it exists to refuse
(planted into a scratch copy of the C sources). Also: the include paths
the Makefile gets from it keep a layer from compiling an upward include.

Prints "check_layers: N passed, M failed"; exits 1 when anything failed.
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "check_layers.py")
DIRS = ["include", "sim", "hw", "host", "cli", "examples", "bench", "tests"]
results = []


def case(name, ok, detail=""):
    results.append(ok)
    print(f"  {'ok  ' if ok else 'FAIL'} {name}" + (f": {detail}" if not ok and detail else ""))


def run(*args):
    p = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def scratch():
    d = tempfile.mkdtemp(prefix="gmc_layers_")
    for top in DIRS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith((".c", ".h", ".cpp")):
                    src = os.path.join(dirpath, f)
                    dst = os.path.join(d, os.path.relpath(src, ROOT))
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copy(src, dst)
    return d


def plant(d, path, line):
    """Insert `line` after the file's first #include; return its line number."""
    full = os.path.join(d, path)
    with open(full) as f:
        lines = f.read().split("\n")
    at = next(i for i, l in enumerate(lines) if l.startswith("#include")) + 1
    lines.insert(at, line)
    with open(full, "w") as f:
        f.write("\n".join(lines))
    return at + 1


def expect_refused(name, path, line, needle):
    d = scratch()
    try:
        rc, _, err = run("check", d)
        if rc != 0:
            case(f"{name}: scratch copy passes before planting", False, err.strip())
            return
        n = plant(d, path, line)
        rc, _, err = run("check", d)
        want = f"{path}:{n}: includes"
        ok = rc == 1 and want in err and needle in err
        case(f"refused: {name}", ok, f"rc={rc} want '{want}' and '{needle}' in: {err.strip()}")
    finally:
        shutil.rmtree(d)


def test_circle():
    d = scratch()
    try:
        plant(d, "host/kmd/gmc_kmd.h", '#include "gmc_paging.h"')
        rc, _, err = run("check", d)
        ok = rc == 1 and "include circle: host/kmd/gmc_kmd -> host/kmd/gmc_paging -> host/kmd/gmc_kmd" in err
        case("refused: a circle of includes inside one layer", ok, err.strip())
    finally:
        shutil.rmtree(d)


def test_compile_enforced():
    """The hw layer's include paths do not reach the memory manager: a
    planted upward include does not compile."""
    d = tempfile.mkdtemp(prefix="gmc_layers_cc_")
    try:
        src = os.path.join(d, "up.c")
        with open(src, "w") as f:
            f.write('#include "gmc_pkt.h"\n#include "gmc_vidmm.h"\nint x;\n')
        _, out, _ = run("flags", "hw")
        cc = os.environ.get("CC", "cc")
        p = subprocess.run([cc, "-std=c11", "-fsyntax-only", *out.split(), src], cwd=ROOT,
                           capture_output=True, text=True)
        ok = p.returncode != 0 and "gmc_vidmm.h" in p.stderr and "No such file" in p.stderr
        case("hw's include paths refuse gmc_vidmm.h at compile time", ok, p.stderr.strip())
        with open(src, "w") as f:
            f.write('#include "gmc_pkt.h"\nint x;\n')
        p = subprocess.run([cc, "-std=c11", "-fsyntax-only", *out.split(), src], cwd=ROOT,
                           capture_output=True, text=True)
        case("hw's include paths compile hw's own header", p.returncode == 0, p.stderr.strip())
    finally:
        shutil.rmtree(d)


def main():
    print("check_layers:")
    rc, out, err = run("check")
    case("repository passes", rc == 0 and "no circles" in out, err.strip())
    expect_refused("hw includes the memory manager (up)", "hw/gmc_pkt.c", '#include "gmc_vidmm.h"', "layer vidmm")
    expect_refused("the CLI includes the driver (internal)", "cli/trace.c", '#include "gmc_kmd.h"', "layer kmd")
    expect_refused("a backend header includes the driver (up)", "host/backend/gmc_backend.h",
                   '#include "gmc_kmd.h"', "layer kmd")
    expect_refused("the driver includes the memory manager (up)", "host/kmd/gmc_pbuild.c",
                   '#include "gmc_place.h"', "layer vidmm")
    expect_refused("the library includes a test header", "host/kmd/gmc_kmd.c", '#include "gmc_test.h"',
                   "a test header")
    expect_refused("a bench includes the driver", "bench/bench_sim.c", '#include "gmc_paging.h"', "layer kmd")
    test_circle()
    _, out, _ = run("flags", "cli")
    case("the CLI compiles with include/ and cli/ only", out.split() == ["-Iinclude", "-Icli"], out)
    _, out, _ = run("flags", "kmd")
    case("the driver's paths hold no host/vidmm or tests", "-Ihost/vidmm" not in out.split()
         and not any(f.startswith("-Itests") for f in out.split()), out)
    rc, _, err = run("flags", "nosuchlayer")
    case("unknown layer prints usage and exits 2", rc == 2 and "flags LAYER" in err)
    test_compile_enforced()
    passed = sum(results)
    failed = len(results) - passed
    print(f"check_layers: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
