#!/usr/bin/env python3
"""Run every benchmark and write build/bench/results.json, a flat JSON
object of name -> number. Ratios compare against baselines measured in the
same run. Usage: run_bench.py BUILD_DIR [NEXTPNR_REPORT.json ...]"""
import json
import os
import subprocess
import sys
import time
from statistics import median

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPEAT = 5


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def icarus_rate(vvp):
    """Simulated cycles per second of the Icarus testbench, from two run
    lengths so that elaboration and start-up cancel out."""
    def one(rounds):
        t0 = time.monotonic()
        out = subprocess.run(["vvp", "-n", vvp, f"+rounds={rounds}"], check=True,
                             capture_output=True, text=True).stdout
        dt = time.monotonic() - t0
        words = out.split()
        if words[-2] != "errors" or words[-1] != "0":
            raise RuntimeError(f"icarus bench reported errors: {out!r}")
        return int(words[words.index("cycles") + 1]), dt
    c1, t1 = one(100)
    c2, t2 = one(1100)
    return (c2 - c1) / (t2 - t1), c2 - c1


def yosys_cells(log, cell):
    """The last count of a cell type in a yosys stat report."""
    n = None
    with open(log, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2 and parts[0] == cell:
                n = int(parts[1])
    if n is None:
        raise RuntimeError(f"{log}: no {cell} count")
    return n


def main():
    build = sys.argv[1]
    reports = sys.argv[2:]
    res = {}
    # Wall-clock speeds are taken as the best of REPEAT runs, the model and
    # Icarus interleaved: other load on the machine only ever slows a run
    # down, so the fastest one is the closest to the simulator's own speed.
    # The medians are kept next to them.
    sims, rates = [], []
    for _ in range(REPEAT):
        sims.append(run_json([os.path.join(build, "rel/bin/bench-sim"), "300000"]))
        rates.append(icarus_rate(os.path.join(build, "bench/tb_bench.vvp")))
    sim = max(sims, key=lambda r: r["sim_cycles_per_s"])
    rate, cycles = max(rates)
    res.update(sim)
    res["sim_cycles_per_s_median"] = round(median([r["sim_cycles_per_s"] for r in sims]))
    res["icarus_cycles_per_s"] = round(rate)
    res["icarus_bench_cycles"] = cycles
    res["sim_vs_icarus"] = round(sim["sim_cycles_per_s"] / rate, 1)
    res["sim_vs_icarus_median"] = round(median([r["sim_cycles_per_s"] for r in sims]) /
                                        median([r[0] for r in rates]), 1)
    res.update(run_json([os.path.join(build, "rel/bin/bench-alloc")]))
    res.update(run_json([os.path.join(build, "rel/bin/bench-api")]))
    # The DMA figures are exact model cycles, the same in every run (checked);
    # only the model's wall-clock speed varies.
    dmas = [run_json([os.path.join(build, "rel/bin/bench-dma")]) for _ in range(REPEAT)]
    exact = [{k: v for k, v in r.items() if k != "sim_cycles_per_s_dma"} for r in dmas]
    if any(e != exact[0] for e in exact):
        raise RuntimeError("bench-dma: the exact cycle figures differ between runs")
    res.update(max(dmas, key=lambda r: r["sim_cycles_per_s_dma"]))
    res["sim_cycles_per_s_dma_median"] = round(median([r["sim_cycles_per_s_dma"] for r in dmas]))
    # The compact engine (DMA_ENGINE=2): its VRAM -> VRAM copy cost from the
    # same bench on its model (exact model cycles), and its size alone.
    cmp = run_json([os.path.join(build, "cmp/bin/bench-dma")])
    res["dma_compact_copy_cycles_per_byte"] = cmp["dma_copy_cycles_per_byte"]
    res["dma_compact_small_packet_cycles"] = cmp["dma_small_packet_cycles"]
    res["dma_compact_fence_latency_cycles"] = cmp["fence_latency_cycles"]
    res["dma_compact_lut4"] = yosys_cells(os.path.join(build, "fw/dmc/yosys.log"), "SB_LUT4")
    # Eviction policy vs offline LRU and Belady, paging throughput and host
    # cost (bench/bench_evict.c, docs/residency.md "Eviction benchmark").
    res.update(run_json([os.path.join(build, "rel/bin/bench-evict")]))
    if reports:
        fpga = run_json([sys.executable, os.path.join(ROOT, "tools/fpga_report.py"), *reports])
        # Numbers only: names of critical-path cells stay in build/fw/report.json.
        res.update({k: int(v) if isinstance(v, bool) else v for k, v in fpga.items()
                    if isinstance(v, (int, float))})
    os.makedirs(os.path.join(build, "bench"), exist_ok=True)
    path = os.path.join(build, "bench", "results.json")
    with open(path, "w") as f:
        json.dump(res, f, indent=2, sort_keys=True)
        f.write("\n")
    print(json.dumps(res, indent=2, sort_keys=True))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
