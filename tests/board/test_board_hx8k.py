#!/usr/bin/env python3
"""The HX8K board with the engine its bitstream carries, over the link
(docs/board-sim.md, "The HX8K and its micro-sequenced engine").

gmc-board-sim --board hx8k runs the HX8K top with the DMA engine of the
Makefile's FW_ENGINE_hx8k, the one make firmware puts in the image: the
micro-sequenced engine (DMA_ENGINE=3). examples/board_hx8k.trace pages on
its 8 KiB of VRAM (one 4 KiB page of CPU window beside the page table's
reserve, the aperture as segment 2): three 4 KiB buffers filled by the
engine, evicted through the aperture, two paged back in and read through
BAR1. It runs:
  1. on the sim backend strapped with the HX8K's segments (the reference);
  2. through uart:<pty> against the micro-engine board, bit-level link:
     the banner and --stats name the engine and the bitstream's, CAPS
     read over the link says MICRO, the same decision log and digest as
     the reference, 8 KiB read back equal, the engine's counters (bytes
     per target, packets, faults) equal to the reference's and to the
     trace's arithmetic, every packet fetched as one 4-beat burst on the
     wire, a clean link;
  3. the same with faults injected on both lines (rate 0.001, seed 3):
     same digest, 8 KiB equal, no DMA burst refused;
  4. the HX8K with the compact engine (--engine compact, simulation
     only): labelled as such, CAPS says COMPACT, same digest and counters.
Each board run is a fresh board simulation; the counters count from the
open (the uart backend clears them there, as the pci backend does: the
micro run's gmc run follows a gmc replay on the same board).

Prints "test_board_hx8k: N passed, M failed" last.
"""
import os
import sys
import tempfile

from boardtest import BOARD_SIM, BUILD, GMC, ROOT, BoardSim, check  # tests/board/boardtest.py
import boardtest

TRACE = os.path.join(ROOT, "examples", "board_hx8k.trace")
# The HX8K's segments (docs/boards.md): the CPU window, then the aperture.
SIM_DEV = "sim:seg1=0/0x1000/0x84,seg2=0x80000000/0x100000/0x191"
# CAPS.DMA_ENGINE (spec/gmc.toml): bits 5:4; enum DMA_ENGINE.
CAPS_ENGINE_LSB, CAPS_ENGINE_MASK = 4, 0x30
ENGINE = {"full": 1, "compact": 2, "micro": 3}
PAGE = 4096

def board_run(tmp, tag, args, replay):
    """A fresh gmc-board-sim --board hx8k with args, the trace through it,
    then its --stats: (banner, replay, run, stats.json, log, board stats)."""
    board = BoardSim(tmp, "--board", "hx8k", *args)
    if board.path is None:
        board.proc.kill()
        return "", None, None, {}, "", None
    p, r, stats, log = boardtest.run(tmp, tag, "uart:" + board.path, TRACE, replay, timeout=300)
    return board.banner, p, r, stats, log, board.stop()


COUNTERS = ("dma_rd_vram", "dma_wr_vram", "dma_rd_sys", "dma_wr_sys", "dma_rd_aperture", "dma_wr_aperture",
            "dma_packets", "dma_faults")


def check_engine_run(tag, engine, ref, banner, p, r, stats, log, bstats, ref_log):
    caps = stats.get("device_info", {}).get("caps", 0)
    check((caps & CAPS_ENGINE_MASK) >> CAPS_ENGINE_LSB == ENGINE[engine],
          f"{tag}: CAPS read over the link names the {engine} engine (CAPS {caps:#x})")
    run_stats = stats.get("run", {})
    check(r is not None and r.returncode == 0 and run_stats.get("failed") == 0
          and run_stats.get("bytes_verified") == 2 * PAGE,
          f"{tag}: gmc run through uart: exit 0, no step failed, 8 KiB read back equal "
          f"({'' if r is None else r.stderr.strip()[-300:]})")
    check(stats.get("digest") == ref.get("digest") and stats.get("digest"),
          f"{tag}: same digest as the sim backend ({stats.get('digest')} vs {ref.get('digest')})")
    if p is not None:
        check(p.returncode == 0 and log == ref_log and log != "",
              f"{tag}: gmc replay through uart: exit 0, same decision log line for line")
    hw, ref_hw = stats.get("hw_counters", {}), ref.get("hw_counters", {})
    check(hw.get("valid") == 1 and all(hw.get(k) == ref_hw.get(k) for k in COUNTERS),
          f"{tag}: the engine's counters equal the sim backend's "
          f"({ {k: hw.get(k) for k in COUNTERS} } vs { {k: ref_hw.get(k) for k in COUNTERS} })")
    # The trace's arithmetic: three 4 KiB buffers evicted through the
    # aperture, two paged back in from system memory, no fault.
    check(hw.get("dma_wr_aperture") == 3 * PAGE and hw.get("dma_rd_sys") == 2 * PAGE and hw.get("dma_faults") == 0,
          f"{tag}: 12 KiB evicted through the aperture, 8 KiB paged in, no DMA fault")
    ds = stats.get("device_stats", {})
    check(ds.get("fences_issued") == ds.get("fences_completed") == ds.get("paging_ops") and ds.get("faults") == 0
          and ds.get("resets") == 0,
          f"{tag}: every paging fence completed ({ds.get('fences_completed')} of {ds.get('fences_issued')}), "
          f"no fault, no TDR reset")
    check(bstats is not None and bstats.get("board") == "hx8k" and bstats.get("engine") == engine
          and bstats.get("bitstream_engine") == "micro",
          f"{tag}: gmc-board-sim --stats: board hx8k, {engine} engine, bitstream's micro")
    if bstats is None:
        return None
    # Packets are 32 bytes: the engine fetches each as one 4-beat read
    # burst (the paging bursts are single beats), so the wire shows as
    # many 4-beat bursts as the engine counted packets, in each session
    # (gmc replay, then gmc run: the same work twice; the counters count
    # from the open).
    sessions = 2 if p is not None else 1
    rd = bstats["figures"]["dma_rd"]
    check(rd["beats_per_burst"].get("4") == sessions * hw.get("dma_packets", -1) and rd["bursts"] > 1000,
          f"{tag}: {rd['beats_per_burst'].get('4')} four-beat read bursts on the wire in {sessions} session(s) "
          f"of {hw.get('dma_packets')} packets counted by the engine")
    # The board's own turn between bursts is measured (--stats, for make
    # bench): one per burst that ended cleanly and was followed by another.
    turn = bstats["figures"].get("board_turn", {})
    n_turns = turn.get("after_rd", {}).get("count", 0) + turn.get("after_wr", {}).get("count", 0)
    n_bursts = rd["bursts"] + bstats["figures"]["dma_wr"]["bursts"]
    check(n_bursts - sessions - 2 <= n_turns < n_bursts and turn["after_rd"]["min_cycles"] > 0,
          f"{tag}: the board's turn timed after {n_turns} of {n_bursts} bursts")
    return bstats


def main():
    check(os.access(GMC, os.X_OK) and os.access(BOARD_SIM, os.X_OK), f"gmc and gmc-board-sim built in {BUILD}")
    with tempfile.TemporaryDirectory() as tmp:
        sp, sr, ref, ref_log = boardtest.run(tmp, "sim", SIM_DEV, TRACE, True, timeout=300)
        check(sp.returncode == 0 and sr.returncode == 0 and ref.get("run", {}).get("bytes_verified") == 2 * PAGE,
              "sim backend (HX8K segments): exit 0, 8 KiB verified")

        # The board's default: the bitstream's engine.
        banner, p, r, stats, log, bstats = board_run(tmp, "micro", [], True)
        check("board hx8k (micro DMA engine, the bitstream's)" in banner,
              f"micro: gmc-board-sim --board hx8k runs the bitstream's micro engine ({banner.strip()})")
        bstats = check_engine_run("micro", "micro", ref, banner, p, r, stats, log, bstats, ref_log)
        if bstats is not None:
            link = stats.get("link", {})
            injected = sum(bstats["faults_down"].values()) + sum(bstats["faults_up"].values())
            check(injected == 0 and link.get("bad_frames") == 0 and link.get("junk") == 0
                  and link.get("dma_broken") == 0 and link.get("dma_refused") == 0
                  and link.get("req_recovered") == 0 and link.get("wr_resends") == 0,
                  f"micro: clean link, no damaged frame, no DMA burst refused or learnt again ({link})")
            # Cycles as the board counted them (CYCLE_LO, read over the link).
            cyc = stats.get("device_stats", {}).get("cycles", 0)
            check(0 < cyc <= bstats["cycles"] and bstats["link"] == "bit",
                  f"micro: {cyc} board cycles for the run (of {bstats['cycles']} the simulation ran), bit-level link")

        # Faults on both lines: the micro engine's bursts recovered.
        banner, p, r, stats, log, bstats = board_run(
            tmp, "faults", ["--faults", "0.001", "--seed", "3", "--fault-dir", "both"], False)
        run_stats = stats.get("run", {})
        check(r is not None and r.returncode == 0 and stats.get("digest") == ref.get("digest")
              and run_stats.get("bytes_verified") == 2 * PAGE,
              f"faults: micro engine through a faulty link: exit 0, same digest, 8 KiB equal "
              f"({'' if r is None else r.stderr.strip()[-300:]})")
        injected = 0 if bstats is None else sum(bstats["faults_down"].values()) + sum(bstats["faults_up"].values())
        link = stats.get("link", {})
        check(injected > 20 and link.get("dma_refused") == 0 and link.get("bad_frames", 0) > 0,
              f"faults: {injected} faults injected, {link.get('bad_frames')} damaged frames seen, "
              f"no DMA burst refused ({link.get('dma_refused')})")

        # The compact engine on the HX8K: simulation only, labelled so.
        banner, p, r, stats, log, bstats = board_run(tmp, "compact", ["--engine", "compact"], False)
        check("board hx8k (compact DMA engine, simulation only: the bitstream carries the micro one)" in banner,
              f"compact: labelled simulation-only ({banner.strip()})")
        check_engine_run("compact", "compact", ref, banner, p, r, stats, log, bstats, ref_log)

    return boardtest.summary("test_board_hx8k")


if __name__ == "__main__":
    sys.exit(main())
