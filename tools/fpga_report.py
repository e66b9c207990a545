#!/usr/bin/env python3
"""Summarise nextpnr-ice40 reports as one flat JSON object.

Usage: fpga_report.py [--clock-mhz MHZ] REPORT.json [REPORT.json ...]

Each argument is a report written by ``nextpnr-ice40 --report``. The board
is taken from the directory name (build/fw/<board>/report.json); the device
key prefix is ``up5k`` for the iCEBreaker and ``hx8k`` for the HX8K
breakout, and the board name itself for anything else.

Printed keys, per device prefix P:
  P_lc, P_lc_avail        ICESTORM_LC used / available
  P_lc_pct                LC use in percent
  P_ram, P_ram_avail      ICESTORM_RAM (4 Kbit block RAM) used / available
  P_spram                 ICESTORM_SPRAM used (UP5K only)
  P_dsp                   ICESTORM_DSP used (UP5K only)
  P_io, P_gb              SB_IO and SB_GB (global buffers) used
  P_fmax_mhz              achieved Fmax of the main clock (the slowest clock
                          when there are several)
  P_constraint_mhz        the frequency nextpnr was asked for
  P_timing_met            achieved >= constraint
  P_clock_mhz             the board's clock (--clock-mhz), and
  P_fmax_margin           achieved Fmax over it (the build asks nextpnr for
                          twice the clock, so timing_met means >= 2)
  P_dma_engine            the DMA engine the image carries (enum DMA_ENGINE
                          of spec/gmc.toml, lower case: none, full, compact,
                          micro), from dma_engine next to the report
  P_crit_from, P_crit_to  first and last cell of the reported critical path
  P_crit_ns               its delay in ns
Python 3 standard library only.
"""

import json
import os
import sys
import tomllib

PREFIX = {"icebreaker": "up5k", "hx8k": "hx8k"}
SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "spec", "gmc.toml")


def engine_names():
    """{value: lower-case name} of the spec's enum DMA_ENGINE."""
    with open(SPEC, "rb") as f:
        spec = tomllib.load(f)
    for enum in spec["enum"]:
        if enum["name"] == "DMA_ENGINE":
            return {v["value"]: v["name"].lower() for v in enum["values"]}
    raise ValueError("spec/gmc.toml has no enum DMA_ENGINE")


def prefix_for(path):
    board = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return PREFIX.get(board, board)


def summarise(path, out, clock_mhz=None):
    with open(path, encoding="utf-8") as f:
        rep = json.load(f)
    p = prefix_for(path)
    util = rep.get("utilization", {})

    def used(name):
        return util.get(name, {}).get("used")

    def avail(name):
        return util.get(name, {}).get("available")

    eng = os.path.join(os.path.dirname(os.path.abspath(path)), "dma_engine")
    if os.path.exists(eng):
        with open(eng, encoding="utf-8") as f:
            code = int(f.read().strip() or "0")
        names = engine_names()
        if code not in names:
            raise ValueError("dma_engine %d is not a value of enum DMA_ENGINE" % code)
        out[p + "_dma_engine"] = names[code]
    lc, lc_avail = used("ICESTORM_LC"), avail("ICESTORM_LC")
    out[p + "_lc"] = lc
    out[p + "_lc_avail"] = lc_avail
    if lc is not None and lc_avail:
        out[p + "_lc_pct"] = round(100.0 * lc / lc_avail, 1)
    out[p + "_ram"] = used("ICESTORM_RAM")
    out[p + "_ram_avail"] = avail("ICESTORM_RAM")
    if "ICESTORM_SPRAM" in util:
        out[p + "_spram"] = used("ICESTORM_SPRAM")
    if "ICESTORM_DSP" in util:
        out[p + "_dsp"] = used("ICESTORM_DSP")
    out[p + "_io"] = used("SB_IO")
    out[p + "_gb"] = used("SB_GB")

    fmax = rep.get("fmax", {})
    if fmax:
        # The main clock is the slowest one when there are several.
        clk = min(fmax, key=lambda k: fmax[k].get("achieved", float("inf")))
        ach = fmax[clk].get("achieved")
        con = fmax[clk].get("constraint")
        out[p + "_fmax_mhz"] = round(ach, 2) if ach is not None else None
        out[p + "_constraint_mhz"] = con
        if ach is not None and con is not None:
            out[p + "_timing_met"] = ach >= con
        if clock_mhz:
            out[p + "_clock_mhz"] = clock_mhz
            if ach is not None:
                out[p + "_fmax_margin"] = round(ach / clock_mhz, 2)

    paths = [cp for cp in rep.get("critical_paths", [])
             if cp.get("from", "").startswith("posedge")
             and cp.get("to", "").startswith("posedge")]
    if paths and paths[0].get("path"):
        steps = paths[0]["path"]
        # The clk-to-q step names the launching flip-flop's cell on its "to" side.
        first = steps[0]
        src = first.get("to" if first.get("type") == "clk-to-q" else "from", {})
        out[p + "_crit_from"] = src.get("cell")
        out[p + "_crit_to"] = steps[-1].get("to", {}).get("cell")
        out[p + "_crit_ns"] = round(sum(s.get("delay", 0.0) for s in steps), 2)


def main(argv):
    args = argv[1:]
    clock_mhz = None
    if args[:1] == ["--clock-mhz"]:
        if len(args) < 2:
            sys.stderr.write(__doc__)
            return 2
        try:
            clock_mhz = float(args[1])
        except ValueError:
            sys.stderr.write("fpga_report: --clock-mhz %r is not a number\n" % args[1])
            return 2
        if clock_mhz <= 0:
            sys.stderr.write("fpga_report: --clock-mhz must be above 0\n")
            return 2
        args = args[2:]
    if not args:
        sys.stderr.write(__doc__)
        return 2
    out = {}
    for path in args:
        try:
            summarise(path, out, clock_mhz)
        except (OSError, ValueError) as exc:
            sys.stderr.write("fpga_report: %s: %s\n" % (path, exc))
            return 1
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
