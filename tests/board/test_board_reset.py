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
     GMC_E_UART_BOARD_RESET, promptly and with nothing verified from the
     reset board, and the next gmc run on the same board must give the
     sim backend's digest.

Prints "test_board_reset: N passed, M failed" last.
"""
import json
import os
import signal
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
SIM_DEV = ("sim:seg1=0/0x10000/0x84,seg2=0x10000/0xf000/0x88/0/3,"
           "seg3=0x80000000/0x100000/0x191")
# board_loop takes about 9 M board cycles on the byte-level link (29 M on
# the bit-level one): a reset at 3 M lands in its paging, whatever the
# host's speed (board cycles; an idle board runs about 130 000 cycles/s).
RESET_AT = 3000000

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


def start_board(tmp, tag, *args):
    pf, sf = os.path.join(tmp, tag + ".pty"), os.path.join(tmp, tag + ".json")
    proc = subprocess.Popen([BOARD_SIM, "--path-file", pf, "--stats", sf, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while not os.path.exists(pf) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    path = open(pf).read().strip() if os.path.exists(pf) else None
    return proc, path, sf


def stop_board(proc, sf):
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=60)[1]
    with open(sf) as f:
        return json.load(f), err


def gmc_run(tmp, tag, device):
    rep = os.path.join(tmp, tag)
    r = subprocess.run([GMC, "run", TRACE, "--device", device, "--progress", "none", "--report", rep],
                       capture_output=True, text=True, timeout=600, env=dict(os.environ, GMC_NO_PNG="1"))
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
    g = subprocess.Popen([GMC, "run", TRACE, "--device", "uart:" + path, "--progress", "plain", "--report",
                          os.path.join(tmp, "killed")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=dict(os.environ, GMC_NO_PNG="1"))
    paging = False
    for line in g.stderr:
        # Once pages go out (evictions), DMA bursts are on the link.
        if " evictions " in line and " evictions 0 " not in line:
            paging = True
            break
    g.send_signal(signal.SIGKILL)
    g.wait(timeout=30)
    check(paging and g.returncode == -signal.SIGKILL, "kill: gmc run got SIGKILL while paging")
    complete(tmp, "after-kill", "uart:" + path, digest)
    proc.send_signal(signal.SIGUSR1)
    time.sleep(0.5)
    complete(tmp, "after-sigusr1", "uart:" + path, digest)
    bst, err = stop_board(proc, sf)
    check(bst["resets"] == 1 and "board reset at cycle" in err, f"kill: SIGUSR1 reset the board once ({bst['resets']})")


def board_reset(tmp, digest):
    proc, path, sf = start_board(tmp, "reset", "--link", "byte", "--reset-at", str(RESET_AT))
    check(path is not None, f"reset: gmc-board-sim --reset-at {RESET_AT} serves {path}")
    if path is None:
        proc.kill()
        return
    t0 = time.monotonic()
    r, st = gmc_run(tmp, "reset-run", "uart:" + path)
    dt = time.monotonic() - t0
    run = st.get("run", {})
    check(r.returncode != 0 and "GMC_E_UART_BOARD_RESET" in r.stderr and run.get("failed") == 1,
          f"reset: the running gmc stops with GMC_E_UART_BOARD_RESET, one step failed (exit {r.returncode}: "
          f"{r.stderr.strip()[-300:]})")
    # Nothing was taken from the reset board as data: the read-back check
    # (the workload's last steps) never ran. And no wait ran into its
    # timeout: the status came at the next look at the cycle counter.
    check(run.get("bytes_verified") == 0, f"reset: nothing verified after the reset ({run.get('bytes_verified')})")
    check(dt < 120, f"reset: reported in {dt:.1f} s, not a hang")
    complete(tmp, "after-reset", "uart:" + path, digest)
    bst, err = stop_board(proc, sf)
    check(bst["resets"] == 1 and f"board reset at cycle {RESET_AT}" in err,
          f"reset: the board was reset once, at cycle {RESET_AT}")


def main():
    check(os.access(GMC, os.X_OK) and os.access(BOARD_SIM, os.X_OK), f"gmc and gmc-board-sim built in {BUILD}")
    with tempfile.TemporaryDirectory() as tmp:
        r, st = gmc_run(tmp, "sim", SIM_DEV)
        digest = st.get("digest")
        check(r.returncode == 0 and digest is not None, f"board_loop on the sim backend: digest {digest}")
        killed_host(tmp, digest)
        board_reset(tmp, digest)
    print(f"test_board_reset: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
