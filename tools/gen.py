#!/usr/bin/env python3
"""Generate every view of spec/*.toml: one tool, one loader.

  gen.py write            rewrite the generated files that differ
  gen.py check            exit 1 naming every stale generated file
  gen.py crosscheck DIR   write DIR/xcheck.c and DIR/xcheck.v, two programs
                          that print every register constant as the C
                          compiler and the Verilog simulator see it

tools/gmc_spec.py reads and checks every spec file, once; the renderers
turn it into files (each generated file's banner names its renderer):
  tools/gen_spec.py     spec/gmc.toml: rtl/gmc_regs.vh, rtl/gmc_defaults.vh,
                        include/gmc_regs.h, docs/registers.md
  tools/gen_host.py     spec/status.toml, rules.toml, sim_status.toml,
                        flags.toml: status codes, the rule table and its
                        cases, flag macros and the CLI's flag name tables
  tools/gen_bridge.py   spec/bridge.toml: firmware/common/gmc_bridge.vh,
                        include/gmc_bridge.h
  tools/dmu_asm.py      rtl/gmc_dmu_ucode.s (not a spec file): the
                        micro-sequenced DMA engine's microcode,
                        rtl/gmc_dmu_ucode.vh

Only the Python standard library is used (tomllib, Python >= 3.11).
"""
import os
import sys
import tomllib

sys.dont_write_bytecode = True  # importing the renderers leaves no __pycache__ in tools/

import dmu_asm  # noqa: E402
import gen_bridge  # noqa: E402
import gen_host  # noqa: E402
import gen_spec  # noqa: E402
import gmc_spec  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RENDERERS = (gen_spec, gen_host, gen_bridge, dmu_asm)
# Every generated file, relative to the root.
OUTPUTS = tuple(sorted(path for r in RENDERERS for path in r.PATHS))
# Inputs outside spec/ (relative to the root), e.g. microcode source.
INPUTS = tuple(sorted(path for r in RENDERERS for path in getattr(r, "SOURCES", ())))


def render_all(specs):
    views = {}
    for r in RENDERERS:
        views.update(r.views(specs))
    return views


def sync(views, write):
    """Write the views that differ (write), or list them (check)."""
    stale = []
    for path in sorted(views):
        full = os.path.join(ROOT, path)
        try:
            with open(full) as f:
                same = f.read() == views[path]
        except FileNotFoundError:
            same = False
        if same:
            continue
        if write:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(views[path])
        else:
            stale.append(path)
    return stale


def main(argv):
    if len(argv) < 2 or argv[1] not in ("write", "check", "crosscheck") or \
            (argv[1] == "crosscheck") != (len(argv) == 3) or len(argv) > 3:
        sys.stderr.write(__doc__)
        return 2
    try:
        specs = gmc_spec.load(ROOT)
        if argv[1] == "crosscheck":
            gen_spec.crosscheck(specs["gmc"], argv[2])
            return 0
        views = render_all(specs)
    except (gmc_spec.SpecError, tomllib.TOMLDecodeError, KeyError, TypeError) as e:
        sys.stderr.write(f"spec: {e}\n")
        return 1
    stale = sync(views, argv[1] == "write")
    for path in stale:
        sys.stderr.write(f"{path} is stale: run `make gen` and commit the result\n")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
