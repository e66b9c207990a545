"""What the board tests share: where the binaries are, the PASS/FAIL tally,
a board simulation in the background, and a trace run through a device.

Children are started through procs (bounded, never left running).
"""
import json
import os
import subprocess

import procs  # tests/board/procs.py: children bounded and never left running

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", "build")
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)
GMC = os.path.join(BUILD, "rel", "bin", "gmc")
BOARD_SIM = os.path.join(BUILD, "rel", "bin", "gmc-board-sim")

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


def summary(name):
    """Prints the closing line; the exit status (1 when anything failed)."""
    print(f"{name}: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


class BoardSim:
    """gmc-board-sim in the background; .path is its pty (None when it
    never wrote one), .banner the line it printed then."""

    def __init__(self, tmp, *args):
        self.path_file = os.path.join(tmp, "pty.%d" % id(self))
        self.stats_file = os.path.join(tmp, "stats.%d.json" % id(self))
        self.proc = procs.start([BOARD_SIM, "--path-file", self.path_file, "--stats", self.stats_file, *args],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        ok = procs.wait_path(self.path_file, self.proc, 120)
        self.path = open(self.path_file).read().strip() if ok else None
        self.banner = ""
        if self.path:
            # Printed right after the path file is written.
            self.banner = procs.wait_line(self.proc.stdout, lambda line: True, 120)[0] or ""

    def stop(self):
        """Its stats (written on SIGTERM), or None when it did not exit."""
        if procs.stop(self.proc, 120) is None or not os.path.exists(self.stats_file):
            return None
        with open(self.stats_file) as f:
            return json.load(f)


def run(tmp, tag, device, trace, replay=True, timeout=600):
    """gmc replay (decision log) unless replay is False, then gmc run:
    (replay, run, stats.json, the decision log without its device line)."""
    rep = os.path.join(tmp, tag)
    log = os.path.join(tmp, tag + ".log")
    p = None
    if replay:
        p = procs.run([GMC, "replay", trace, "--device", device, "--log", log], timeout=timeout)
    r = procs.run([GMC, "run", trace, "--device", device, "--progress", "none", "--report", rep],
                  timeout=timeout, env=dict(os.environ, GMC_NO_PNG="1"))
    stats = {}
    if os.path.exists(os.path.join(rep, "stats.json")):
        with open(os.path.join(rep, "stats.json")) as f:
            stats = json.load(f)
    decisions = ""
    if os.path.exists(log):
        # The first line names the device (not hashed); the rest is the decisions.
        decisions = "".join(l for l in open(log) if not l.startswith("# device "))
    return p, r, stats, decisions
