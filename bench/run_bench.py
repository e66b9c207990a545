#!/usr/bin/env python3
"""Run every benchmark and write build/bench/results.json, a flat JSON
object of name -> number. Ratios compare against baselines measured in the
same run. Usage: run_bench.py BUILD_DIR [NEXTPNR_REPORT.json ...]"""
import json
import tomllib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from statistics import median

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPEAT = 5


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        # The command line may list hundreds of traces: name the program and
        # show what it said instead.
        sys.stderr.write(p.stderr)
        raise RuntimeError(f"{' '.join(cmd[:3])} ... exited with status {p.returncode}")
    return json.loads(p.stdout.strip().splitlines()[-1])


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


def packed_lcs(log):
    """(used, available) logic cells from a nextpnr-ice40 --pack-only log."""
    with open(log, encoding="utf-8") as f:
        for line in f:
            m = re.search(r"ICESTORM_LC:\s*(\d+)/\s*(\d+)", line)
            if m:
                return int(m.group(1)), int(m.group(2))
    raise RuntimeError(f"{log}: no ICESTORM_LC count")


# Debian's python3 carries python3-scipy (tools/deps.sh); the interpreter
# running this script may be another one.
SCIPY_PYTHON = os.environ.get("GMC_SCIPY_PYTHON", "/usr/bin/python3")
TRACES = os.path.join(ROOT, "bench", "traces")
INSAMPLE = ("loop", "stream", "mixed")


def eviction_vs_optimum(build, insample, res):
    """The library's bytes paged (gmc run) on the in-sample traces and on the
    out-of-sample families, over the exact optimum (docs/eviction-bench.md)."""
    out = {}
    # The checked-in copies of bench-evict's traces and the generated families
    # must be what the generators write now.
    for t in INSAMPLE:
        with open(os.path.join(insample, t + ".trace")) as a, open(os.path.join(TRACES, "insample", t + ".trace")) as b:
            if a.read() != b.read():
                raise RuntimeError(f"bench/traces/insample/{t}.trace is stale: bench-evict --dump bench/traces/insample")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_traces.py"), "--check"], check=True)
    fams = sorted(d for d in os.listdir(TRACES) if d != "insample")
    args = [f"{t}={os.path.join(TRACES, 'insample', t + '.trace')}" for t in INSAMPLE]
    for fam in fams:
        d = os.path.join(TRACES, fam)
        args += [f"fam_{fam}={os.path.join(d, f)}" for f in sorted(os.listdir(d)) if f.endswith(".trace")]
    ev = run_json([SCIPY_PYTHON, os.path.join(ROOT, "bench", "evict_eval.py"), os.path.join(build, "rel/bin/gmc"),
                   os.path.join(build, "bench", "evict_rows.json"), *args])
    out.update(ev)
    # gmc run must page exactly what bench-evict's own run of the library paged.
    out["evict_trace_run_match"] = int(all(ev[f"evict_{t}_policy_bytes"] == res[f"evict_{t}_policy_bytes"]
                                           for t in INSAMPLE))
    # The Python LRU model (evict_opt.simulate) must page what bench-evict's C model pages.
    out["evict_lru_model_match"] = int(all(ev[f"evict_{t}_lru_bytes"] == res[f"evict_{t}_lru_bytes"]
                                           for t in INSAMPLE))
    r = [ev[f"evict_{t}_vs_opt"] for t in INSAMPLE]
    out["evict_vs_opt"] = round(sum(r) / len(r), 3)
    out["evict_vs_opt_worst"] = round(max(r), 3)
    pol = sum(ev[f"evict_{t}_policy_bytes"] for t in INSAMPLE)
    out["evict_vs_opt_bytes_weighted"] = round(pol / sum(ev[f"evict_{t}_opt_bytes"] for t in INSAMPLE), 3)
    out["evict_oos_vs_opt_mean"] = round(sum(ev[f"evict_fam_{f}_vs_opt_mean"] for f in fams) / len(fams), 3)
    out["evict_oos_vs_opt_worst"] = max(ev[f"evict_fam_{f}_vs_opt_worst"] for f in fams)
    # Where the gap comes from, per family (bench/evict_breakdown.py): the
    # library's run replayed by a replica (checked against gmc run's bytes),
    # its write-backs and evictions beyond the room needed, and the same
    # order or a clairvoyant one with and without contiguous placement.
    out.update(run_json([SCIPY_PYTHON, os.path.join(ROOT, "bench", "evict_breakdown.py"),
                         os.path.join(build, "bench", "evict_rows.json")]))
    return out


def callgrind_collected(cmd, fn):
    """Instructions executed inside fn (callgrind --toggle-collect), or None
    without valgrind (tools/deps.sh bench installs it)."""
    if shutil.which("valgrind") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--toggle-collect={fn}", "--collect-atstart=no",
                            f"--callgrind-out-file={os.path.join(tmp, 'cg.out')}", *cmd],
                           check=True, capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if not m:
        raise RuntimeError(f"callgrind: no count in {p.stderr[-500:]!r}")
    return int(m.group(1))


def alloc_instructions(build):
    """Instructions per free+allocate pair (bench/bench_alloc.c --count),
    counted by callgrind: independent of the machine's load."""
    out = {}
    pairs = 20000
    for live, name in ((1000, "1k"), (10000, "10k"), (100000, "100k")):
        counts = {}
        for kind in ("low", "best", "bestfit", "driver"):
            n = callgrind_collected([os.path.join(build, "rel/bin/bench-alloc"), "--count", kind, str(live),
                                     str(pairs)], "measured_pairs")
            if n is not None:
                counts[kind] = n / pairs
        for kind in ("low", "best", "bestfit"):
            if kind in counts:
                # The allocator's own: the driver's instructions (the random
                # generator, the slots) taken off.
                out[f"alloc_insn_per_pair_{kind}_{name}"] = round(counts[kind] - counts["driver"])
    return out


def resid_scaling(build):
    """Host CPU per make-resident step at 1k/10k/100k allocations on the
    device (bench/bench_resid.c), with callgrind's instruction counts."""
    exe = os.path.join(build, "rel/bin/bench-resid")
    out = run_json([exe])
    if shutil.which("valgrind"):
        for live, name, steps in ((1000, "1k", 10), (10000, "10k", 10), (100000, "100k", 3)):
            with tempfile.TemporaryDirectory() as tmp:
                p = subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no",
                                    f"--callgrind-out-file={os.path.join(tmp, 'cg.out')}", exe, "--count",
                                    str(live), str(steps)], check=True, capture_output=True, text=True)
            m = re.search(r"Collected : (\d+)", p.stderr)
            if not m:
                raise RuntimeError(f"callgrind: no count in {p.stderr[-500:]!r}")
            out[f"resid_insn_per_step_{name}"] = round(int(m.group(1)) / steps)
    out["resid_growth_1k_to_100k"] = round(out["resid_us_per_step_100k"] / out["resid_us_per_step_1k"], 1)
    return out


def defined_symbols(paths):
    names = set()
    for p in paths:
        r = subprocess.run(["nm", "--defined-only", p], check=True, capture_output=True, text=True)
        for line in r.stdout.splitlines():
            w = line.split()
            if len(w) == 3 and w[1] in "TtWw":
                names.add(w[2])
    return names


# Examples written for a board's segments, run on the sim backend strapped
# with them (as tests/board/test_board_link.py runs board_hx8k, HX8K_DEV).
EXAMPLE_DEVICES = {"board_hx8k": "sim:seg1=0/0x1000/0x84,seg2=0x80000000/0x100000/0x191"}


def end_to_end(build):
    """Per example workload: simulated cycles per wall second under gmc run,
    and where the time goes: perf's cpu-clock samples attributed to the host
    library (symbols defined in libgmc.a), the CLI (cli/*.o, its report
    included) and the rest (the Verilated model, its C++ glue and checkers,
    the C runtime, the kernel)."""
    out = {}
    gmc = os.path.join(build, "rel/bin/gmc")
    host = defined_symbols([os.path.join(build, "rel/lib/libgmc.a")])
    cli_objs = os.path.join(build, "rel/obj/cli")
    cli = defined_symbols([os.path.join(cli_objs, f) for f in sorted(os.listdir(cli_objs)) if f.endswith(".o")])
    env = dict(os.environ, GMC_NO_PNG="1")
    for ex in sorted(f[:-6] for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".trace")):
        trace = os.path.join(ROOT, "examples", ex + ".trace")
        dev = ["--device", EXAMPLE_DEVICES[ex]] if ex in EXAMPLE_DEVICES else []
        with tempfile.TemporaryDirectory() as tmp:
            rep = os.path.join(tmp, "rep")
            subprocess.run([gmc, "run", trace, *dev, "--progress", "none", "--report", rep], check=True,
                           capture_output=True, env=env)
            with open(os.path.join(rep, "stats.json")) as f:
                st = json.load(f)
            out[f"run_cycles_per_s_{ex}"] = round(st["device_stats"]["cycles"] / st["run"]["wall_seconds"])
            out[f"run_cycles_{ex}"] = st["device_stats"]["cycles"]
            if shutil.which("perf") is None:
                continue
            data = os.path.join(tmp, "perf.data")
            r = subprocess.run(["perf", "record", "-e", "cpu-clock", "-F", "4000", "-o", data, gmc, "run", trace,
                                *dev, "--progress", "none", "--report", rep], capture_output=True, env=env)
            if r.returncode != 0:
                print(f"run_bench: perf record failed, no time shares: {r.stderr[-300:]!r}", file=sys.stderr)
                continue
            rep_txt = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "sym", "--stdio",
                                      "--percent-limit", "0"], check=True, capture_output=True, text=True).stdout
        shares = {"host": 0.0, "cli": 0.0, "rest": 0.0}
        for line in rep_txt.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+\[(.)\]\s+(\S+)", line)
            if not m:
                continue
            pct, space, sym = float(m.group(1)), m.group(2), m.group(3)
            key = "host" if space == "." and sym in host else "cli" if space == "." and sym in cli else "rest"
            shares[key] += pct
        tot = sum(shares.values()) or 1.0
        out[f"run_host_share_{ex}"] = round(shares["host"] / tot, 4)
        out[f"run_cli_share_{ex}"] = round(shares["cli"] / tot, 4)
        out[f"run_model_share_{ex}"] = round(shares["rest"] / tot, 4)
    return out


# The serial link (docs/board-sim.md "Link figures"): board_loop through
# uart:<pty> against gmc-board-sim, the bit-level link at 3 Mbaud. Frame
# bytes per DMA beat, from the protocol's one description (spec/bridge.toml):
# SYNC, OP, LEN, the payload, CRC. A read beat is DMA_RD_DATA host->board,
# a write beat DMA_WR_DATA board->host (15 bytes each for 8 of data in
# protocol 3).
def _beat_bytes(op_name):
    with open(os.path.join(ROOT, "spec", "bridge.toml"), "rb") as f:
        ops = {o["name"]: o for o in tomllib.load(f)["op"]}
    return 4 + ops[op_name]["len"]


RD_BEAT_BYTES = _beat_bytes("DMA_RD_DATA")
WR_BEAT_BYTES = _beat_bytes("DMA_WR_DATA")
BOARD_TRACE = os.path.join(ROOT, "examples", "board_loop.trace")
BOARD_FAULTS = ("0.001", "3")  # tests/board/test_board_link.py's rate and seed


def board_run(build, tmp, tag, *sim_args, trace=BOARD_TRACE, verified=32768):
    """board_loop (or trace) over the board simulation: (gmc's stats.json, gmc-board-sim's --stats)."""
    pf, sf = os.path.join(tmp, tag + ".pty"), os.path.join(tmp, tag + ".json")
    sim = subprocess.Popen([os.path.join(build, "rel/bin/gmc-board-sim"), "--path-file", pf, "--stats", sf,
                            *sim_args], stdout=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while not os.path.exists(pf) and time.time() < deadline:
            time.sleep(0.05)
        pty = open(pf).read().strip()
        rep = os.path.join(tmp, tag + ".rep")
        subprocess.run([os.path.join(build, "rel/bin/gmc"), "run", trace, "--device", "uart:" + pty,
                        "--progress", "none", "--report", rep], check=True, capture_output=True,
                       env=dict(os.environ, GMC_NO_PNG="1"), timeout=900)
    finally:
        sim.terminate()
        sim.wait(timeout=60)
    with open(os.path.join(rep, "stats.json")) as f:
        gst = json.load(f)
    with open(sf) as f:
        bst = json.load(f)
    if gst["run"]["failed"] != 0 or gst["run"]["bytes_verified"] != verified:
        raise RuntimeError(f"{os.path.basename(trace)} over the link ({tag}): {gst['run']}")
    return gst, bst


HX8K_TRACE = os.path.join(ROOT, "examples", "board_hx8k.trace")
HX8K_REPEAT = 3


def uart_hx8k(build):
    """board_hx8k on the HX8K board simulation with its bitstream's micro-
    sequenced engine and with the compact one (docs/board-sim.md, "The HX8K
    and its micro-sequenced engine"): board cycles of the run from the
    board's cycle counter, less the host's turns inside DMA bursts; the
    least of HX8K_REPEAT runs each (load only adds host time), the median
    of the raw counts beside it, gmc run's wall time (median), and the
    board's turn between one-beat bursts (the engine's work on a beat)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        runs = {"micro": [], "compact": []}
        for i in range(HX8K_REPEAT):
            for eng in runs:
                gst, bst = board_run(build, tmp, f"hx8k_{eng}_{i}", "--board", "hx8k", "--engine", eng,
                                     trace=HX8K_TRACE, verified=8192)
                fig = bst["figures"]
                runs[eng].append((gst["device_stats"]["cycles"],
                                  fig["dma_rd"]["host_cycles"] + fig["dma_wr"]["host_cycles"],
                                  gst["run"]["wall_seconds"], gst["digest"]))
                # The board's own turn between bursts (median board
                # cycles, no host in it: the same in every run).
                out[f"uart_hx8k_turn_after_rd_cycles_{eng}"] = fig["board_turn"]["after_rd"]["median_cycles"]
                out[f"uart_hx8k_turn_after_wr_cycles_{eng}"] = fig["board_turn"]["after_wr"]["median_cycles"]
        digests = {r[3] for v in runs.values() for r in v}
        if len(digests) != 1:
            raise RuntimeError(f"board_hx8k over the link: digests {digests}")
        for eng, v in runs.items():
            out[f"uart_hx8k_cycles_{eng}"] = min(c - h for c, h, _, _ in v)
            out[f"uart_hx8k_cycles_raw_median_{eng}"] = median([c for c, _, _, _ in v])
            out[f"uart_hx8k_wall_s_median_{eng}"] = median([w for _, _, w, _ in v])
    return out


def uart_link(build):
    """DMA payload over the wire limit per direction, the REG_RD round trip,
    and the faults a run survives with every byte read back equal. All from
    board cycles counted on the simulated wire: the host's own turn (from a
    frame it must answer to its answer) is left out, so the figures do not
    depend on this machine (docs/board-sim.md)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        gst, bst = board_run(build, tmp, "clean")
        fig = bst["figures"]
        byte = fig["wire_byte_cycles"]
        hz = 12e6
        rd, wr = fig["dma_rd"], fig["dma_wr"]
        # Wire limit: every cycle of the direction carrying beats, back to back.
        out["uart_dma_read_fraction"] = round(rd["beats"] * RD_BEAT_BYTES * byte / rd["cycles"], 4)
        out["uart_dma_write_fraction"] = round(wr["beats"] * WR_BEAT_BYTES * byte / wr["cycles"], 4)
        out["uart_dma_read_beats_per_burst"] = round(rd["beats"] / rd["bursts"], 3)
        out["uart_dma_write_beats_per_burst"] = round(wr["beats"] / wr["bursts"], 3)
        out["uart_dma_read_host_turn_us"] = round(rd["host_cycles"] / rd["bursts"] / hz * 1e6, 1)
        out["uart_dma_write_host_turn_us"] = round(wr["host_cycles"] / wr["bursts"] / hz * 1e6, 1)
        out["uart_reg_roundtrip_us"] = round(fig["reg_rd"]["min_cycles"] / hz * 1e6, 2)
        out["uart_reg_roundtrip_median_us"] = round(fig["reg_rd"]["median_cycles"] / hz * 1e6, 2)
        out["uart_board_loop_cycles"] = bst["cycles"]
        digest = gst["digest"]
        # The same on the full engine (bursts of up to 32 beats): the link
        # streaming when the engine does (the boards' compact engine issues
        # one-beat bursts for paging).
        ust, ubst = board_run(build, tmp, "full", "--engine", "full")
        if ust["digest"] != digest:
            raise RuntimeError(f"board_loop on the full engine: digest {ust['digest']} != {digest}")
        urd, uwr = ubst["figures"]["dma_rd"], ubst["figures"]["dma_wr"]
        out["uart_dma_read_fraction_full_engine"] = round(urd["beats"] * RD_BEAT_BYTES * byte / urd["cycles"], 4)
        out["uart_dma_write_fraction_full_engine"] = round(uwr["beats"] * WR_BEAT_BYTES * byte / uwr["cycles"], 4)
        out["uart_dma_read_beats_per_burst_full_engine"] = round(urd["beats"] / urd["bursts"], 3)
        out["uart_dma_write_beats_per_burst_full_engine"] = round(uwr["beats"] / uwr["bursts"], 3)
        fst, fbst = board_run(build, tmp, "faults", "--faults", BOARD_FAULTS[0], "--seed", BOARD_FAULTS[1],
                              "--fault-dir", "both")
        if fst["digest"] != digest:
            raise RuntimeError(f"board_loop with link faults: digest {fst['digest']} != {digest}")
        out["uart_faults_recovered"] = sum(fbst["faults_down"].values()) + sum(fbst["faults_up"].values())
        out["uart_faults_retries"] = fst["link"]["retries"]
    return out


def main():
    args = sys.argv[1:]
    clock = []
    if args[:1] == ["--fw-clock-mhz"]:
        clock, args = ["--clock-mhz", args[1]], args[2:]
    build = args[0]
    reports = args[1:]
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
    res.update(alloc_instructions(build))
    res.update(run_json([os.path.join(build, "rel/bin/bench-api")]))
    res.update(resid_scaling(build))
    res.update(end_to_end(build))
    res.update(uart_link(build))
    res.update(uart_hx8k(build))
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
    # The micro-sequenced engine (DMA_ENGINE=3, the HX8K image's): the same
    # figures from its model, and its size alone (make dmu-size: LUT4s, and
    # logic cells packed).
    mic = run_json([os.path.join(build, "mic/bin/bench-dma")])
    res["dma_micro_copy_cycles_per_byte"] = mic["dma_copy_cycles_per_byte"]
    res["dma_micro_small_packet_cycles"] = mic["dma_small_packet_cycles"]
    res["dma_micro_fence_latency_cycles"] = mic["fence_latency_cycles"]
    res["dma_micro_lut4"] = yosys_cells(os.path.join(build, "fw/dmu/stat.txt"), "SB_LUT4")
    res["dma_micro_lc"] = packed_lcs(os.path.join(build, "fw/dmu/pack.log"))[0]
    # Board tops with an engine their bitstream does not carry, packed (the
    # Makefile's fit probes): logic cells, whether that fits the device, and
    # by how many cells it is short (0 when it fits).
    for probe, prefix in (("hx8k-dmc", "hx8k_dmc"), ("icebreaker-dmc", "up5k_dmc"),
                          ("icebreaker-dmu", "up5k_dmu")):
        used, avail = packed_lcs(os.path.join(build, f"fw/{probe}/pack.log"))
        res[f"{prefix}_lc"] = used
        res[f"{prefix}_fits"] = int(used <= avail)
        res[f"{prefix}_short_lc"] = max(0, used - avail)
    # Whether a board can carry an engine at all (the smallest one), and by
    # how much it is short when not.
    res["up5k_dma"] = res["up5k_dmu_fits"]
    res["up5k_dma_short_lc"] = res["up5k_dmu_short_lc"]
    # Eviction policy vs offline LRU, paging throughput and host cost
    # (bench/bench_evict.c, docs/residency.md "Eviction benchmark"); its
    # traces are written as trace files for the optimum (docs/eviction-bench.md).
    insample = os.path.join(build, "bench", "traces-insample")
    os.makedirs(insample, exist_ok=True)
    res.update(run_json([os.path.join(build, "rel/bin/bench-evict"), "--dump", insample]))
    res.update(eviction_vs_optimum(build, insample, res))
    if reports:
        fpga = run_json([sys.executable, os.path.join(ROOT, "tools/fpga_report.py"), *clock, *reports])
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
