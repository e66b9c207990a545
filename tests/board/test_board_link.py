#!/usr/bin/env python3
"""The whole board path in one test (docs/board-sim.md).

examples/board_loop.trace runs three ways and must decide the same:
  1. on the sim backend strapped with the iCEBreaker's segments;
  2. through uart:<pty> against gmc-board-sim (the board top, UART bridge
     included, Verilated with the DMA engine on), a clean link;
  3. the same with faults injected on the host->board line (flipped,
     dropped and duplicated bytes and idle gaps, fixed seed).
Checked: the same decision log and digest, the read-back buffer verified
byte for byte on every run, the link's retries counted in stats.json and
matching faults that were really injected (gmc-board-sim --stats), and no
link error on the clean run. Then the board simulation's own options
(a bad option exits 2 with its usage).

Prints "test_board_link: N passed, M failed" last.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", "build")
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)
GMC = os.path.join(BUILD, "rel", "bin", "gmc")
BOARD_SIM = os.path.join(BUILD, "rel", "bin", "gmc-board-sim")
TRACE = os.path.join(ROOT, "examples", "board_loop.trace")
# The iCEBreaker's segments (docs/boards.md), strapped on the sim backend.
SIM_DEV = ("sim:seg1=0/0x10000/0x84,seg2=0x10000/0xf000/0x88/0/3,"
           "seg3=0x80000000/0x100000/0x191")
FAULT_RATE = "0.001"
FAULT_SEED = "3"

passed = 0
failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
        print(f"PASS: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}")


class BoardSim:
    """gmc-board-sim in the background; .path is its pty."""

    def __init__(self, tmp, *args):
        self.path_file = os.path.join(tmp, "pty.%d" % id(self))
        self.stats_file = os.path.join(tmp, "stats.%d.json" % id(self))
        self.proc = subprocess.Popen([BOARD_SIM, "--path-file", self.path_file, "--stats", self.stats_file,
                                      *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.time() + 30
        while not os.path.exists(self.path_file) and time.time() < deadline and self.proc.poll() is None:
            time.sleep(0.05)
        self.path = open(self.path_file).read().strip() if os.path.exists(self.path_file) else None
        self.banner = self.proc.stdout.readline() if self.path else ""

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        with open(self.stats_file) as f:
            return json.load(f)


def run(tmp, tag, device):
    rep = os.path.join(tmp, tag)
    log = os.path.join(tmp, tag + ".log")
    p = subprocess.run([GMC, "replay", TRACE, "--device", device, "--log", log], capture_output=True, text=True,
                       timeout=600)
    r = subprocess.run([GMC, "run", TRACE, "--device", device, "--progress", "none", "--report", rep],
                       capture_output=True, text=True, timeout=600, env=dict(os.environ, GMC_NO_PNG="1"))
    stats = {}
    if os.path.exists(os.path.join(rep, "stats.json")):
        with open(os.path.join(rep, "stats.json")) as f:
            stats = json.load(f)
    decisions = ""
    if os.path.exists(log):
        # The first line names the device (not hashed); the rest is the decisions.
        decisions = "".join(l for l in open(log) if not l.startswith("# device "))
    return p, r, stats, decisions


def main():
    check(os.access(GMC, os.X_OK) and os.access(BOARD_SIM, os.X_OK), f"gmc and gmc-board-sim built in {BUILD}")
    with tempfile.TemporaryDirectory() as tmp:
        ps, rs, ss, ds = run(tmp, "sim", SIM_DEV)
        check(ps.returncode == 0 and rs.returncode == 0, "board_loop on the sim backend (board segments): exit 0")
        digest = ss.get("digest")
        check(ss.get("run", {}).get("bytes_verified") == 32768 and ss.get("run", {}).get("failed") == 0,
              "sim: 32 KiB read back and verified, no step failed")

        for tag, args in (("clean", []), ("faults", ["--faults", FAULT_RATE, "--seed", FAULT_SEED,
                                                     "--fault-dir", "down"])):
            board = BoardSim(tmp, *args)
            check(board.path is not None and board.path.startswith("/dev/pts/")
                  and board.path in board.banner, f"{tag}: gmc-board-sim prints its pty ({board.path})")
            if board.path is None:
                board.proc.kill()
                continue
            pu, ru, su, du = run(tmp, tag, "uart:" + board.path)
            bstats = board.stop()
            check(pu.returncode == 0 and ru.returncode == 0,
                  f"{tag}: board_loop through uart: exit 0 ({pu.stdout.strip()} {pu.stderr.strip()[-300:]} {ru.stderr.strip()[-300:]})")
            check(su.get("digest") == digest and pu.stdout.split()[1:2] == [digest],
                  f"{tag}: same digest as the sim backend ({su.get('digest')} vs {digest})")
            check(du == ds and du != "", f"{tag}: same decision log, line for line")
            check(su.get("run", {}).get("bytes_verified") == 32768,
                  f"{tag}: 32 KiB read back through the link, every byte equal")
            link = su.get("link", {})
            check(link.get("baud") == 3000000 and link.get("bridge_version") == 2,
                  f"{tag}: stats.json link block: 3 Mbaud, bridge protocol 2")
            injected = sum(bstats["faults_down"].values()) + sum(bstats["faults_up"].values())
            if tag == "clean":
                # (Retries may still happen on a loaded machine: a reply late
                # past the timeout is asked for again; nothing is damaged.)
                check(injected == 0 and link.get("bad_frames") == 0 and link.get("junk") == 0
                      and link.get("dma_broken") == 0 and link.get("dma_refused") == 0,
                      f"clean: no fault injected, no damaged frame, no refused DMA ({link})")
            else:
                check(injected > 20 and bstats["faults_up"] == {"flip": 0, "drop": 0, "dup": 0, "gap": 0},
                      f"faults: {injected} faults injected host->board")
                check(link.get("retries", 0) > 0 and link.get("dma_broken") == 0,
                      f"faults: retries counted ({link.get('retries')}), no DMA burst broken")

    # The board simulation refuses a bad option with its usage.
    bad = subprocess.run([BOARD_SIM, "--board", "ecp5"], capture_output=True, text=True, timeout=30)
    check(bad.returncode == 2 and "usage:" in bad.stderr, "gmc-board-sim --board ecp5: usage, exit 2")
    print(f"test_board_link: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
