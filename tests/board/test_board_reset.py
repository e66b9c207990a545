#!/usr/bin/env python3
"""Resets on the board path (docs/board-sim.md "Resets").

  1. The host killed mid-run: gmc run over uart:<pty> gets SIGKILL while it
     pages (its progress line shows evictions), then a new gmc run on the
     same board simulation must open (ending the DMA burst the dead host
     left open) and give the sim backend's digest, every byte read back
     equal. Then the board is reset between sessions (SIGUSR1) and a third
     run must do the same. Byte-level link model (--link byte), for time.
  2. The board reset mid-run (gmc-board-sim --reset-at, the board's power-on
     reset, byte-level link too): the running gmc must stop with
     GMC_E_UART_BOARD_RESET in the wait it was in, before any of the reset
     board's cycles counted as time (not at the wait's timeout) and with
     nothing verified from the reset board, and the next gmc run on the
     same board must give the sim backend's digest.

Prints "test_board_reset: N passed, M failed" last.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import procs  # tests/board/procs.py: children bounded and never left running
from boardtest import BOARD_SIM, BUILD, GMC, ROOT, check  # tests/board/boardtest.py
import boardtest

TRACE = os.path.join(ROOT, "examples", "board_loop.trace")
SIM_DEV = ("sim:seg1=0/0x10000/0x84,seg2=0x10000/0xf000/0x88/0/3,"
           "seg3=0x80000000/0x100000/0x191")
# board_loop takes about 9 M board cycles on the byte-level link (29 M on
# the bit-level one): a reset at 3 M lands in its paging, whatever the
# host's speed (board cycles; an idle board runs about 130 000 cycles/s).
RESET_AT = 3000000

def start_board(tmp, tag, *args):
    pf, sf = os.path.join(tmp, tag + ".pty"), os.path.join(tmp, tag + ".json")
    proc = procs.start([BOARD_SIM, "--path-file", pf, "--stats", sf, *args], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    path = open(pf).read().strip() if procs.wait_path(pf, proc, 120) else None
    return proc, path, sf


def stop_board(proc, sf, err_so_far=""):
    """Its stats (None when it did not exit on SIGTERM) and all it wrote on
    stderr (err_so_far: what was read from it already)."""
    rc = procs.stop(proc, 120)
    err = err_so_far + proc.stderr.read().decode(errors="replace")
    if rc is None or not os.path.exists(sf):
        return None, err
    with open(sf) as f:
        return json.load(f), err


def gmc_run(tmp, tag, device):
    rep = os.path.join(tmp, tag)
    t0 = time.monotonic()
    r = procs.run([GMC, "run", TRACE, "--device", device, "--progress", "none", "--report", rep],
                  timeout=600, env=dict(os.environ, GMC_NO_PNG="1"))
    r.wall = time.monotonic() - t0
    st = {}
    if os.path.exists(os.path.join(rep, "stats.json")):
        with open(os.path.join(rep, "stats.json")) as f:
            st = json.load(f)
    return r, st


def complete(tmp, tag, device, digest):
    r, st = gmc_run(tmp, tag, device)
    check(r.returncode == 0 and st.get("digest") == digest and st.get("run", {}).get("bytes_verified") == 32768
          and st.get("run", {}).get("failed") == 0,
          f"{tag}: the next run completes, digest {st.get('digest')} (sim {digest}), 32 KiB read back equal "
          f"(exit {r.returncode}: {r.stderr.strip()[-300:]})")


def killed_host(tmp, digest):
    proc, path, sf = start_board(tmp, "kill", "--link", "byte")
    check(path is not None, f"kill: gmc-board-sim --link byte serves {path}")
    if path is None:
        proc.kill()
        return
    g = procs.start([GMC, "run", TRACE, "--device", "uart:" + path, "--progress", "plain", "--report",
                     os.path.join(tmp, "killed")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    env=dict(os.environ, GMC_NO_PNG="1"))
    # Once pages go out (evictions), DMA bursts are on the link. (Bounded:
    # the whole run takes under a minute on a loaded machine.)
    line, _ = procs.wait_line(g.stderr, lambda l: " evictions " in l and " evictions 0 " not in l, 600)
    paging = line is not None
    g.send_signal(signal.SIGKILL)
    g.wait(timeout=60)
    check(paging and g.returncode == -signal.SIGKILL, "kill: gmc run got SIGKILL while paging")
    complete(tmp, "after-kill", "uart:" + path, digest)
    # The reset happens when the simulation next looks at its flag; the next
    # run must start after it (else the run sees the board reset under it):
    # wait for the simulation to say so, not a fixed time. The simulation
    # is held stopped for 0.7 s around the signal, as a loaded machine may
    # hold it, so the reset always comes late (a fixed 0.5 s pause here
    # used to start the run before it).
    proc.send_signal(signal.SIGSTOP)
    proc.send_signal(signal.SIGUSR1)
    time.sleep(0.7)
    proc.send_signal(signal.SIGCONT)
    line, err = procs.wait_line(proc.stderr, lambda l: "board reset at cycle" in l, 120)
    check(line is not None, f"kill: the board reset on SIGUSR1 ({line})")
    complete(tmp, "after-sigusr1", "uart:" + path, digest)
    bst, err = stop_board(proc, sf, err)
    check(bst is not None and bst["resets"] == 1 and "board reset at cycle" in err,
          f"kill: SIGUSR1 reset the board once ({bst and bst['resets']})")


def board_reset(tmp, digest):
    proc, path, sf = start_board(tmp, "reset", "--link", "byte", "--reset-at", str(RESET_AT))
    check(path is not None, f"reset: gmc-board-sim --reset-at {RESET_AT} serves {path}")
    if path is None:
        proc.kill()
        return
    r, st = gmc_run(tmp, "reset-run", "uart:" + path)
    run = st.get("run", {})
    check(r.returncode != 0 and "GMC_E_UART_BOARD_RESET" in r.stderr and run.get("failed") == 1,
          f"reset: the running gmc stops with GMC_E_UART_BOARD_RESET, one step failed (exit {r.returncode}: "
          f"{r.stderr.strip()[-300:]})")
    # Nothing was taken from the reset board as data: the read-back check
    # (the workload's last steps) never ran. And no wait ran into its
    # timeout: the step the run was in (a wait, usually) failed with the
    # status at a device time short of the reset cycle (the host took no
    # cycle of the reset board as time; a wait that ran into its timeout,
    # 5 s nominal, would end 60 M cycles on). In board cycles, not wall
    # time: a loaded machine slows the run, not this.
    check(run.get("bytes_verified") == 0, f"reset: nothing verified after the reset ({run.get('bytes_verified')})")
    steps = st.get("steps", [])
    last = steps[-1] if steps else {}
    check(last.get("status") == "GMC_E_UART_BOARD_RESET" and 0 < last.get("cycles", 0) < RESET_AT,
          f"reset: the step it was in stopped with the status at device cycle {last.get('cycles')} "
          f"(< {RESET_AT}), not at a timeout ({last.get('op')} {last.get('status')}; {r.wall:.1f} s wall)")
    complete(tmp, "after-reset", "uart:" + path, digest)
    bst, err = stop_board(proc, sf)
    check(bst is not None and bst["resets"] == 1 and f"board reset at cycle {RESET_AT}" in err,
          f"reset: the board was reset once, at cycle {RESET_AT}")


def main():
    check(os.access(GMC, os.X_OK) and os.access(BOARD_SIM, os.X_OK), f"gmc and gmc-board-sim built in {BUILD}")
    with tempfile.TemporaryDirectory() as tmp:
        r, st = gmc_run(tmp, "sim", SIM_DEV)
        digest = st.get("digest")
        check(r.returncode == 0 and digest is not None, f"board_loop on the sim backend: digest {digest}")
        killed_host(tmp, digest)
        board_reset(tmp, digest)
    return boardtest.summary("test_board_reset")


if __name__ == "__main__":
    sys.exit(main())
