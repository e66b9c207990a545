#!/usr/bin/env python3
"""Tests of tools/fpga_report.py on hand-written nextpnr-ice40 reports: the
device prefix from the board directory, utilisation, the slowest clock as
the main one, the margin over the board clock, the DMA engine named from
spec/gmc.toml's enum DMA_ENGINE, and clear refusals of bad arguments, an
unknown engine value and a damaged report.

Prints "fpga_report: N passed, M failed"; exits 1 when anything failed.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "fpga_report.py")
results = []


def check(name, cond, detail=""):
    results.append(cond)
    if not cond:
        print(f"FAIL {name}: {detail}")


def run(*args):
    p = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def board_dir(root, board, report, engine):
    d = os.path.join(root, board)
    os.makedirs(d)
    with open(os.path.join(d, "report.json"), "w", encoding="utf-8") as f:
        json.dump(report, f)
    if engine is not None:
        with open(os.path.join(d, "dma_engine"), "w", encoding="utf-8") as f:
            f.write(f"{engine}\n")
    return os.path.join(d, "report.json")


HX8K = {
    "utilization": {"ICESTORM_LC": {"used": 7000, "available": 7680},
                    "ICESTORM_RAM": {"used": 32, "available": 32},
                    "SB_IO": {"used": 11, "available": 206},
                    "SB_GB": {"used": 8, "available": 8}},
    # Two clocks: the slower one is the main clock.
    "fmax": {"clk_a": {"achieved": 50.0, "constraint": 24.0},
             "clk_12m": {"achieved": 30.0, "constraint": 24.0}},
}
UP5K = {
    "utilization": {"ICESTORM_LC": {"used": 4400, "available": 5280},
                    "ICESTORM_RAM": {"used": 2, "available": 30},
                    "ICESTORM_SPRAM": {"used": 4, "available": 4},
                    "ICESTORM_DSP": {"used": 0, "available": 8}},
    "fmax": {"clk": {"achieved": 22.0, "constraint": 24.0}},
}

with tempfile.TemporaryDirectory() as tmp:
    hx = board_dir(tmp, "hx8k", HX8K, 3)
    up = board_dir(tmp, "icebreaker", UP5K, 0)
    rc, out, err = run("--clock-mhz", "12", hx, up)
    check("two boards: exit 0", rc == 0, err)
    r = json.loads(out) if rc == 0 else {}
    check("hx8k lc", r.get("hx8k_lc") == 7000 and r.get("hx8k_lc_avail") == 7680, r)
    check("hx8k lc pct", r.get("hx8k_lc_pct") == 91.1, r.get("hx8k_lc_pct"))
    check("hx8k ram", r.get("hx8k_ram") == 32 and r.get("hx8k_ram_avail") == 32, r)
    check("main clock is the slowest", r.get("hx8k_fmax_mhz") == 30.0, r.get("hx8k_fmax_mhz"))
    check("margin over the board clock", r.get("hx8k_fmax_margin") == 2.5, r.get("hx8k_fmax_margin"))
    check("timing met", r.get("hx8k_timing_met") is True, r.get("hx8k_timing_met"))
    check("engine 3 is micro", r.get("hx8k_dma_engine") == "micro", r.get("hx8k_dma_engine"))
    check("engine 0 is none", r.get("up5k_dma_engine") == "none", r.get("up5k_dma_engine"))
    check("up5k prefix and spram", r.get("up5k_spram") == 4 and r.get("up5k_dsp") == 0, r)
    check("up5k timing missed", r.get("up5k_timing_met") is False, r.get("up5k_timing_met"))
    check("up5k margin", r.get("up5k_fmax_margin") == 1.83, r.get("up5k_fmax_margin"))

    rc, out, _ = run(hx)
    r = json.loads(out) if rc == 0 else {}
    check("no clock given: no margin", rc == 0 and "hx8k_fmax_margin" not in r
          and "hx8k_clock_mhz" not in r, out)

    for eng, name in ((1, "full"), (2, "compact")):
        d = os.path.join(tmp, f"e{eng}")
        rep = board_dir(d, "hx8k", HX8K, eng)
        rc, out, _ = run(rep)
        check(f"engine {eng} is {name}", rc == 0 and json.loads(out).get("hx8k_dma_engine") == name, out)

    bad = board_dir(os.path.join(tmp, "bad"), "hx8k", HX8K, 7)
    rc, out, err = run(bad)
    check("unknown engine value refused", rc == 1 and out == ""
          and "dma_engine 7 is not a value of enum DMA_ENGINE" in err, (rc, out, err))

    broken = os.path.join(tmp, "broken", "hx8k")
    os.makedirs(broken)
    with open(os.path.join(broken, "report.json"), "w", encoding="utf-8") as f:
        f.write('{"utilization": ')
    rc, out, err = run(os.path.join(broken, "report.json"))
    check("damaged report refused", rc == 1 and out == "" and "fpga_report:" in err, (rc, err))
    rc, out, err = run(os.path.join(tmp, "missing", "report.json"))
    check("missing report refused", rc == 1 and out == "" and "fpga_report:" in err, (rc, err))

    for args, what in ((["--clock-mhz", "x", hx], "is not a number"),
                       (["--clock-mhz", "0", hx], "must be above 0"),
                       (["--clock-mhz"], "Usage"), ([], "Usage"), (["--clock-mhz", "12"], "Usage")):
        rc, out, err = run(*args)
        check(f"bad arguments {args}", rc == 2 and out == "" and what in err, (rc, err))

passed = sum(results)
failed = len(results) - passed
print(f"fpga_report: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
