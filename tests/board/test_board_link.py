#!/usr/bin/env python3
"""The whole board path in one test (docs/board-sim.md).

examples/board_loop.trace runs three ways and must decide the same:
  1. on the sim backend strapped with the iCEBreaker's segments;
  2. through uart:<pty> against gmc-board-sim (the board top, UART bridge
     included, Verilated with the DMA engine on), a clean link;
  3. the same with faults injected on both lines (flipped, dropped and
     duplicated bytes and idle gaps, fixed seed): protocol 3 recovers
     damaged command frames and replies (SEQ), DMA request frames
     (DMA_REQ_AGAIN) and write beats (the bridge's replay window);
  4. the same on the byte-level link model (gmc-board-sim --link byte);
  5. the same with the full DMA engine (--engine full, byte-level link).
The iCEBreaker's bitstream carries no DMA engine: its board simulation runs
the compact one by default, and says so (banner, --stats). (The HX8K top,
with its bitstream's micro-sequenced engine: tests/board/test_board_hx8k.py.)
Checked: the same digest (and on the clean run the same decision log, line
for line), the read-back buffer verified byte for byte on every run, the
link's recoveries counted in stats.json and consistent with the faults
that were really injected (gmc-board-sim --stats), no DMA burst refused and
broken ones (a damaged frame past the CRC) within the CRC-8 budget, and
no recovery on the clean run. The clean run's link figures (--stats
"figures", docs/board-sim.md) against the protocol's frame sizes. Then
the board simulation's own options: an FST trace window whose header
holds exactly the cycles asked for, and bad options exit 2 with the usage.

Prints "test_board_link: N passed, M failed" last.
"""
import os
import struct
import sys
import tempfile

import procs  # tests/board/procs.py: children bounded and never left running
from boardtest import BOARD_SIM, BUILD, GMC, ROOT, BoardSim, check  # tests/board/boardtest.py
import boardtest

TRACE = os.path.join(ROOT, "examples", "board_loop.trace")
# The iCEBreaker's segments (docs/boards.md), strapped on the sim backend.
SIM_DEV = ("sim:seg1=0/0x10000/0x84,seg2=0x10000/0xf000/0x88/0/3,"
           "seg3=0x80000000/0x100000/0x191")
FAULT_RATE = "0.001"
FAULT_SEED = "3"

def run(tmp, tag, device, replay=True, trace=TRACE):
    """gmc replay (decision log) unless replay is False, then gmc run."""
    return boardtest.run(tmp, tag, device, trace, replay)


# Frame sizes (docs/uart-bridge.md): SYNC, OP, LEN, payload, CRC.
REQ_BYTES = 3 + 11 + 1       # DMA_RD_REQ / DMA_WR_REQ
RD_BEAT_BYTES = 3 + 11 + 1   # DMA_RD_DATA
WR_BEAT_BYTES = 3 + 11 + 1   # DMA_WR_DATA (protocol 3: with its TAG)
WR_RESP_BYTES = 3 + 2 + 1    # DMA_WR_RESP
REG_RD_BYTES = (3 + 3 + 1) + (3 + 6 + 1)  # REG_RD and its reply
BYTE_CYCLES = 40             # 10 bits of 4 clocks at 3 Mbaud, 12 MHz


def check_figures(fig):
    """The clean run's link figures against the protocol: a write burst of n
    beats is its request, n data frames and the response on the wire, back
    to back, a read burst its request and n beats (host time and other
    frames taken out, bursts with a beat sent again or that the host asked
    about while in flight counted apart)."""
    check(fig["wire_byte_cycles"] == BYTE_CYCLES, "figures: a byte is 40 board cycles on the wire")
    wr, rd = fig["dma_wr"], fig["dma_rd"]
    wr_min = sum((REQ_BYTES + n * WR_BEAT_BYTES + WR_RESP_BYTES) * BYTE_CYCLES * c
                 for n, c in ((int(k), v) for k, v in wr["beats_per_burst"].items()))
    rd_min = sum((REQ_BYTES + n * RD_BEAT_BYTES) * BYTE_CYCLES * c
                 for n, c in ((int(k), v) for k, v in rd["beats_per_burst"].items()))
    check(wr["bursts"] > 1000 and wr["cycles"] == wr_min,
          f"figures: {wr['bursts']} write bursts take exactly their frames' wire time ({wr['cycles']} vs {wr_min}; "
          f"{wr['host_asked_bursts']} the host asked about counted apart)")
    check(rd["bursts"] > 1000 and rd["cycles"] == rd_min,
          f"figures: {rd['bursts']} read bursts take exactly their frames' wire time ({rd['cycles']} vs {rd_min}; "
          f"{rd['resent_bursts'] + rd['host_asked_bursts']} with a beat sent again or asked about counted apart)")
    check(REG_RD_BYTES * BYTE_CYCLES <= fig["reg_rd"]["min_cycles"] < (REG_RD_BYTES + 1) * BYTE_CYCLES,
          f"figures: REG_RD round trip {fig['reg_rd']['min_cycles']} cycles: its 17 bytes and under a byte time more")


def check_trace(tmp):
    """--trace: an FST file whose header block (type 0: start and end time,
    big-endian, in ps) covers exactly board cycles [from, to)."""
    fst = os.path.join(tmp, "w.fst")
    period = 83334
    p = procs.run([BOARD_SIM, "--trace", fst, "--trace-from", "1000", "--trace-to", "5000",
                   "--max-cycles", "20000", "--path-file", os.path.join(tmp, "w.pty")], timeout=300)
    ok = p.returncode == 0 and os.path.exists(fst)
    start = end = None
    if ok:
        with open(fst, "rb") as f:
            d = f.read()
        if len(d) > 25 and d[0] == 0:
            start, end = struct.unpack(">QQ", d[9:25])
    check(ok and start == 1000 * period and end == 4999 * period + period // 2,
          f"--trace-from 1000 --trace-to 5000: FST header times {start}..{end} ps")


def main():
    check(os.access(GMC, os.X_OK) and os.access(BOARD_SIM, os.X_OK), f"gmc and gmc-board-sim built in {BUILD}")
    with tempfile.TemporaryDirectory() as tmp:
        ps, rs, ss, ds = run(tmp, "sim", SIM_DEV)
        check(ps.returncode == 0 and rs.returncode == 0, "board_loop on the sim backend (board segments): exit 0")
        digest = ss.get("digest")
        check(ss.get("run", {}).get("bytes_verified") == 32768 and ss.get("run", {}).get("failed") == 0,
              "sim: 32 KiB read back and verified, no step failed")

        # The faulty run only runs (stats.json carries the digest): the
        # decision log's line-for-line comparison is the clean run's.
        for tag, args in (("clean", []), ("faults", ["--faults", FAULT_RATE, "--seed", FAULT_SEED,
                                                     "--fault-dir", "both"]), ("byte", ["--link", "byte"]),
                          ("full", ["--engine", "full", "--link", "byte"])):
            board = BoardSim(tmp, *args)
            check(board.path is not None and board.path.startswith("/dev/pts/")
                  and board.path in board.banner, f"{tag}: gmc-board-sim prints its pty ({board.path})")
            label = "full" if tag == "full" else "compact"
            check(f"board icebreaker ({label} DMA engine, simulation only: the bitstream carries none)"
                  in board.banner, f"{tag}: the banner names the {label} engine as simulation-only "
                  f"({board.banner.strip()})")
            if board.path is None:
                board.proc.kill()
                continue
            pu, ru, su, du = run(tmp, tag, "uart:" + board.path, replay=(tag == "clean"))
            bstats = board.stop()
            check(bstats is not None, f"{tag}: gmc-board-sim exits on SIGTERM and writes its stats")
            if bstats is None:
                continue
            if pu is not None:
                check(pu.returncode == 0 and pu.stdout.split()[1:2] == [digest],
                      f"{tag}: gmc replay through uart: exit 0, same digest ({pu.stdout.strip()} {pu.stderr.strip()[-300:]})")
                check(du == ds and du != "", f"{tag}: same decision log, line for line")
            check(ru.returncode == 0, f"{tag}: gmc run through uart: exit 0 ({ru.stderr.strip()[-300:]})")
            check(su.get("digest") == digest,
                  f"{tag}: same digest as the sim backend ({su.get('digest')} vs {digest})")
            check(su.get("run", {}).get("bytes_verified") == 32768,
                  f"{tag}: 32 KiB read back through the link, every byte equal")
            link = su.get("link", {})
            check(link.get("baud") == 3000000 and link.get("bridge_version") == 3,
                  f"{tag}: stats.json link block: 3 Mbaud, bridge protocol 3")
            injected = sum(bstats["faults_down"].values()) + sum(bstats["faults_up"].values())
            check(bstats["link"] == ("byte" if tag in ("byte", "full") else "bit")
                  and bstats["engine"] == ("full" if tag == "full" else "compact")
                  and bstats["bitstream_engine"] == "none",
                  f"{tag}: gmc-board-sim ran the {bstats['link']} link, the {bstats['engine']} engine")
            if tag == "full":
                # The full engine pages in bursts (of up to 32 beats).
                fig = bstats["figures"]
                check(fig["dma_rd"]["beats"] > 4 * fig["dma_rd"]["bursts"] > 0
                      and fig["dma_wr"]["beats"] > 4 * fig["dma_wr"]["bursts"] > 0,
                      f"full: bursts of several beats ({fig['dma_rd']['beats_per_burst']}, {fig['dma_wr']['beats_per_burst']})")
                continue
            if tag == "byte":
                # Bytes went through the bridge's byte ports: no bit was shifted.
                check(bstats["bytes_in"] > 100000 and bstats["busy_in_cycles"] == 0 and bstats["busy_out_cycles"] == 0
                      and injected == 0, f"byte: {bstats['bytes_in']} bytes in, none shifted bit by bit")
                continue
            # Faults that damage a frame on the board->host line (a gap only delays).
            up_damage = sum(bstats["faults_up"][k] for k in ("flip", "drop", "dup"))
            down_damage = sum(bstats["faults_down"][k] for k in ("flip", "drop", "dup"))
            if tag == "clean":
                check_figures(bstats["figures"])
                # (Retries may still happen on a loaded machine: a reply late
                # past the timeout is asked for again; nothing is damaged.)
                check(injected == 0 and link.get("bad_frames") == 0 and link.get("junk") == 0
                      and link.get("dma_broken") == 0 and link.get("dma_refused") == 0,
                      f"clean: no fault injected, no damaged frame, no refused DMA ({link})")
                # (DMA_REQ_AGAIN may still be sent on a loaded machine: a
                # STATUS naming a burst whose request is late; nothing is
                # then counted as learnt again.)
                check(link.get("req_recovered") == 0 and link.get("wr_resends") == 0,
                      "clean: no DMA burst learnt from a request sent again, no write beat sent again")
            else:
                check(up_damage > 20 and down_damage > 20,
                      f"faults: {up_damage} frame-damaging faults board->host, {down_damage} host->board "
                      f"({injected} with gaps)")
                # Every damaged upstream frame is seen (CRC, length, bytes
                # outside a frame): at least one sign, at most a few per fault.
                seen = link.get("bad_frames", 0)
                check(0 < seen <= 3 * up_damage and link.get("junk", 0) > 0,
                      f"faults: damaged frames seen ({seen} bad, {link.get('junk')} junk bytes) "
                      f"for {up_damage} upstream faults")
                # DMA request frames lost on the way up were asked for again
                # and learnt; each needs a damaged upstream frame.
                check(0 < link.get("req_recovered", 0) <= up_damage and link.get("req_asks", 0) > 0,
                      f"faults: {link.get('req_recovered')} DMA bursts learnt from a request sent again "
                      f"({link.get('req_asks')} DMA_REQ_AGAIN)")
                check(link.get("retries", 0) > 0 and link.get("probes", 0) > 0,
                      f"faults: retries ({link.get('retries')}) and probes ({link.get('probes')}) counted")
                # No burst refused. A burst is broken (the host drops the
                # beats it gathered and learns the bridge's burst again) only
                # when a damaged frame passed the CRC: CRC-8 lets about 1 in
                # 256 through (docs/uart-bridge.md), so allow 1 per 64
                # upstream damaging faults; the bytes read back above show
                # that each was recovered.
                broken_max = up_damage // 64
                check(link.get("dma_refused") == 0 and link.get("dma_broken", 1) <= broken_max,
                      f"faults: no DMA burst refused ({link.get('dma_refused')}), {link.get('dma_broken')} broken and learnt again "
                      f"(at most {broken_max} for {up_damage} upstream faults)")

        check_trace(tmp)

    # The board simulation refuses a bad option with its usage.
    for args in (["--board", "ecp5"], ["--link", "word"], ["--trace-from", "5"], ["--board", "hx8k", "--engine", "full"],
                 ["--engine", "micro"], ["--engine", "none"], ["--engine", "fast"],
                 ["--trace", "x.fst", "--trace-from", "9", "--trace-to", "9"], ["--reset-at", "-1"]):
        bad = procs.run([BOARD_SIM, *args], timeout=120)
        check(bad.returncode == 2 and "usage:" in bad.stderr, f"gmc-board-sim {' '.join(args)}: usage, exit 2")
    return boardtest.summary("test_board_link")


if __name__ == "__main__":
    sys.exit(main())
