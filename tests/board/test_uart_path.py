#!/usr/bin/env python3
"""The whole board path: examples/board_hx8k.trace on the simulator strapped
to the HX8K board's segments, then through the uart backend (uart:<pty>)
against gmc-board-sim running the real board top (bridge included), with
and without injected link faults. The digest covers every decision and the
bytes read back, so equal digests mean the same decisions and the same
data; the trace's `read ... verify` checks the bytes against their
patterns. The decision log's first line names the device, so the logs are
compared without it (the digest hashes that line too). Prints 'uart_path: N passed, M failed'."""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
GMC = os.path.join(BUILD, "rel", "bin", "gmc")
BOARD_SIM = os.path.join(BUILD, "rel", "bin", "gmc-board-sim")
TRACE = os.path.join(ROOT, "examples", "board_hx8k.trace")
results = []


def check(name, cond, detail=""):
    results.append((name, bool(cond)))
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else f": {detail}"))


def digest(out):
    m = re.search(r"^digest ([0-9a-f]{16}) .* (\d+) failed$", out, re.M)
    return (m.group(1), int(m.group(2))) if m else (None, None)


def log_body(path):
    with open(path) as f:
        return f.read().splitlines()[1:]


def run_board(extra):
    tmp = tempfile.mkdtemp(prefix="gmc_board_")
    log = os.path.join(tmp, "decisions.log")
    stats = os.path.join(tmp, "stats.json")
    with open(stats, "w") as err:
        sim = subprocess.Popen([BOARD_SIM, "--board", "hx8k", *extra], stdout=subprocess.PIPE,
                               stderr=err, text=True)
        path = sim.stdout.readline().strip()
        try:
            r = subprocess.run([GMC, "replay", TRACE, "--device", f"uart:{path}", "--log", log],
                               capture_output=True, text=True, timeout=900)
        finally:
            sim.terminate()
            sim.wait(timeout=30)
    with open(stats) as f:
        lines = [l for l in f.read().splitlines() if l.startswith("{")]
    return r, (json.loads(lines[-1]) if lines else {}), log_body(log) if os.path.exists(log) else None


REF_LOG = os.path.join(tempfile.mkdtemp(prefix="gmc_board_ref_"), "decisions.log")
r = subprocess.run([GMC, "replay", TRACE, "--log", REF_LOG], capture_output=True, text=True, timeout=300)
ref_log = log_body(REF_LOG)
ref, ref_failed = digest(r.stdout)
check("board workload on sim (HX8K segments): no failed operation", r.returncode == 0 and ref_failed == 0,
      r.stdout + r.stderr)

r, st, body = run_board([])
d, failed = digest(r.stdout)
check("board workload through uart:<pty> (no faults): same decisions and bytes as sim",
      body == ref_log and failed == 0, f"{r.stdout}{r.stderr}")
check("board sim saw the link traffic", st.get("bytes_down", 0) > 1000 and st.get("bytes_up", 0) > 1000, st)

r, st, body = run_board(["--faults", "0.002", "--seed", "7", "--fault-dir", "down"])
d, failed = digest(r.stdout)
injected = sum(st.get(k, 0) for k in ("flips", "drops", "dups", "gaps"))
check("faults were injected host->board", injected > 0, st)
check("board workload with injected faults: same decisions and bytes as sim",
      body == ref_log and failed == 0, f"{r.stdout}{r.stderr}")

passed = sum(1 for _, ok in results if ok)
failed = len(results) - passed
print(f"uart_path: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
