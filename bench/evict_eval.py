#!/usr/bin/python3
"""The eviction figures (docs/eviction-bench.md): for every trace file given,
the library's bytes paged, measured by running the trace with `gmc run`
(the library itself, on the simulated controller), against the exact
offline optimum (bench/evict_opt.py), with plain LRU and CLOCK under the
same placement and write-back rules beside it.

Usage: evict_eval.py GMC OUT.json [--time-limit S] NAME=TRACE... | FAMILY/...
Each argument is a trace file; its figure group is the name of the
directory it is in (bench/traces/<family>/...) or NAME= when given.
Writes OUT.json: per trace the raw numbers; and prints one flat JSON object
of figures on stdout."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evict_opt as eo  # noqa: E402


def run_gmc(gmc, path, tmp):
    rep = os.path.join(tmp, "rep")
    shutil.rmtree(rep, ignore_errors=True)
    env = dict(os.environ, GMC_NO_PNG="1")
    t0 = time.monotonic()
    p = subprocess.run([gmc, "run", path, "--progress", "none", "--report", rep], env=env,
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]}
    with open(os.path.join(rep, "stats.json")) as f:
        st = json.load(f)
    ds = st["device_stats"]
    return {"bytes": ds["bytes_paged_in"] + ds["bytes_paged_out"], "in": ds["bytes_paged_in"],
            "out": ds["bytes_paged_out"], "cycles": ds["cycles"], "wall": wall}


def main(argv):
    gmc, out = argv[0], argv[1]
    argv = argv[2:]
    tl = 30.0
    if argv[:1] == ["--time-limit"]:
        tl = float(argv[1])
        argv = argv[2:]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for a in argv:
            group, _, path = a.rpartition("=")
            group = group or os.path.basename(os.path.dirname(path))
            t = eo.parse(path)
            lib = run_gmc(gmc, path, tmp)
            row = {"group": group, "trace": os.path.relpath(path), "library": lib}
            row["opt"] = eo.optimum(t, tl)
            for pol in ("lru", "clock"):
                try:
                    row[pol] = eo.simulate(t, pol)["bytes"]
                except eo.TraceError as e:
                    row[pol] = None
                    row[pol + "_error"] = str(e)
            rows.append(row)
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
    res = {}
    groups = []
    for r in rows:
        if r["group"] not in groups:
            groups.append(r["group"])
    for g in groups:
        rs = [r for r in rows if r["group"] == g]
        ok = [r for r in rs if "error" not in r["library"] and r["opt"]["bytes"] > 0]
        pre = f"evict_{g}"
        res[f"{pre}_traces"] = len(rs)
        res[f"{pre}_failed"] = len(rs) - len([r for r in rs if "error" not in r["library"]])
        res[f"{pre}_opt_exact"] = sum(r["opt"]["kind"] == "exact" for r in rs)
        res[f"{pre}_opt_zero"] = sum(r["opt"]["bytes"] == 0 for r in rs)
        for name, get in (("vs_opt", lambda r: r["library"]["bytes"]), ("lru_vs_opt", lambda r: r["lru"]),
                          ("clock_vs_opt", lambda r: r["clock"])):
            v = [get(r) / r["opt"]["bytes"] for r in ok if get(r) is not None]
            if v and len(rs) > 1:
                res[f"{pre}_{name}_mean"] = round(sum(v) / len(v), 3)
                res[f"{pre}_{name}_worst"] = round(max(v), 3)
            elif v:
                res[f"{pre}_{name}"] = round(v[0], 3)
        # A trace whose optimum pages nothing has no ratio: what the library
        # paged on such traces is reported instead.
        res[f"{pre}_opt_zero_policy_bytes"] = sum(r["library"].get("bytes", 0) for r in rs
                                                  if r["opt"]["bytes"] == 0)
        if len(rs) == 1:
            r = rs[0]
            res[f"{pre}_policy_bytes"] = r["library"].get("bytes")
            res[f"{pre}_opt_bytes"] = r["opt"]["bytes"]
            res[f"{pre}_lru_bytes"] = r["lru"]
            res[f"{pre}_clock_bytes"] = r["clock"]
    print(json.dumps(res))
    for r in rows:
        if "error" in r["library"]:
            print(f"evict_eval: {r['trace']}: gmc run: {r['library']['error']}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
