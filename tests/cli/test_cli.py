#!/usr/bin/env python3
"""The gmc command end to end, on the simulated controller.

Runs every check against $BUILD/rel/bin/gmc and $BUILD/asan/bin/gmc:
help and error paths (exit status and message), `gmc info` against the
model's configured and strapped segments, replay determinism (digest and
decision log), the report files (stats.json parses and carries every
counter; each SVG parses as XML and draws exactly the placements and
evictions the decision log and the library's counters report), waveforms,
progress lines, and every example trace passing `gmc check`.

Prints "test_cli: N passed, M failed" last.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", "build")
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)

passed = 0
failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def gmc(binary, *args, cwd=None):
    p = subprocess.run([binary] + list(args), cwd=cwd or ROOT, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


# A small workload that over-commits segment 2 of the default device and
# pages through the aperture: quick even under AddressSanitizer.
SMALL = """\
# small over-committing workload for the CLI tests: segment 2 is 1 MiB here
device sim:segs=3,seg1=0/0x100000/0x84,seg2=0x100000/0x100000/0x88/0/2,seg3=0x80000000/0x1000000/0x191
client app
client tool owner=3
alloc keep size=128K segments=2 priority=high client=tool
repeat 6 as i
  alloc buf{i} size={256 + 64*rand(4)}K segments=2 evict-to=3
end
alloc staging size=64K segments=1 flags=CpuVisible
resident keep
frames 3 as f
  repeat 6 as i
    resident buf{i}
    submit
      fill buf{i} pattern={0x100 + i}
    end
    evict buf{i}
  end
  wait
end
lock staging flags=WriteOnly
write staging
unlock staging
read staging verify
"""


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def svg_counts(path):
    root = ET.parse(path).getroot()
    counts = {}
    for e in root.iter():
        c = e.get("class")
        if c:
            counts[c] = counts.get(c, 0) + 1
    return root, counts


def run_checks(binary, tmp, tag):
    # ---------------------------------------------------------- help
    rc, out, err = gmc(binary, "--help")
    check(rc == 0 and "usage: gmc COMMAND" in out, f"{tag}: gmc --help")
    for cmd in ("info", "list", "run", "replay", "check"):
        rc, out, err = gmc(binary, cmd, "--help")
        check(rc == 0 and out.startswith(f"usage: gmc {cmd}"), f"{tag}: gmc {cmd} --help ({rc}, {out[:40]!r})")
    rc, out, err = gmc(binary)
    check(rc == 2 and "usage: gmc COMMAND" in err, f"{tag}: gmc without a command")

    # ---------------------------------------------------------- error paths
    rc, out, err = gmc(binary, "frobnicate")
    check(rc == 2 and "gmc: unknown command 'frobnicate'" in err, f"{tag}: unknown command: {err!r}")
    rc, out, err = gmc(binary, "info", "--bogus")
    check(rc == 2 and "gmc info: unknown option '--bogus'" in err, f"{tag}: bad option: {err!r}")
    rc, out, err = gmc(binary, "run", "examples/frame_loop.trace", "--seed")
    check(rc == 2 and "gmc run: option '--seed' needs a value" in err, f"{tag}: option without value: {err!r}")
    rc, out, err = gmc(binary, "run", "examples/frame_loop.trace", "--seed", "x")
    check(rc == 2 and "gmc run: bad --seed 'x' (a number)" in err, f"{tag}: bad seed: {err!r}")
    rc, out, err = gmc(binary, "run")
    check(rc == 2 and "gmc run: missing WORKLOAD" in err, f"{tag}: run without a workload: {err!r}")
    rc, out, err = gmc(binary, "run", "examples/frame_loop.trace", "--trace-window", "0:10")
    check(rc == 2 and "--trace-window needs --trace FILE.fst" in err, f"{tag}: window without trace: {err!r}")
    rc, out, err = gmc(binary, "run", "examples/frame_loop.trace", "--trace", "x.fst", "--trace-window", "9:3")
    check(rc == 2 and "bad --trace-window '9:3'" in err, f"{tag}: inverted window: {err!r}")
    rc, out, err = gmc(binary, "run", os.path.join(tmp, "missing.trace"))
    check(rc == 2 and f"gmc: {tmp}/missing.trace: cannot read: No such file or directory" in err,
          f"{tag}: missing file: {err!r}")
    rc, out, err = gmc(binary, "info", "--device", "nope")
    check(rc == 2 and "gmc: cannot open device 'nope'" in err and "GMC_E_BAD_DEVICE_STRING" in err,
          f"{tag}: unknown device string: {err!r}")
    rc, out, err = gmc(binary, "info", "--device", "sim:latency=x")
    check(rc == 2 and "GMC_E_DEVSTR_NUMBER" in err and "at byte 12" in err, f"{tag}: bad number in device string: {err!r}")
    rc, out, err = gmc(binary, "list")
    check(rc == 0 and out.splitlines()[0].split()[0] == "sim", f"{tag}: gmc list: {out!r} {err!r}")
    # The trace checker and the library agree (both ask gmc_check.h): a
    # CpuVisibleOnDemand allocation is locked, written and read back.
    od = os.path.join(tmp, "on_demand.trace")
    write(od, "alloc a size=8K flags=CpuVisibleOnDemand\nlock a\nwrite a pattern=0x5a\nunlock a\n"
              "read a verify\nlock a flags=ReadOnly\nunlock a\n")
    rc, out, err = gmc(binary, "run", od)
    check(rc == 0 and "digest" in out and od not in err, f"{tag}: CpuVisibleOnDemand lock runs: {rc} {err!r}")
    rc, out, err = gmc(binary, "list", "extra")
    check(rc == 2 and "unexpected argument 'extra'" in err, f"{tag}: gmc list extra: {err!r}")
    # No PCI function ever sits at ffff:ff:1f.7; without sysfs libpciaccess cannot start.
    want = "GMC_E_PCI_NO_DEVICE" if os.path.isdir("/sys/bus/pci/devices") else "GMC_E_PCI_INIT"
    rc, out, err = gmc(binary, "info", "--device", "pci:ffff:ff:1f.7")
    check(rc == 2 and want in err, f"{tag}: pci backend, no such device: {err!r}")
    small = os.path.join(tmp, "small.trace")
    write(small, SMALL)
    rc, out, err = gmc(binary, "run", small, "--device", "sim:bogus=1", "--progress", "none")
    check(rc == 2 and "cannot open device 'sim:bogus=1'" in err and "GMC_E_DEVSTR_OPTION" in err,
          f"{tag}: run with a bad device: {err!r}")

    # A malformed trace: the message names FILE:LINE, and nothing runs (no
    # report, no waveform).
    bad = os.path.join(tmp, "bad.trace")
    write(bad, SMALL.replace("  wait\n", "  wiat\n"))
    line = SMALL.split("\n").index("  wait") + 1
    rep = os.path.join(tmp, "bad-report")
    fst = os.path.join(tmp, "bad.fst")
    rc, out, err = gmc(binary, "run", bad, "--report", rep, "--trace", fst)
    check(rc == 2 and err.strip() == f"gmc: {bad}:{line}: unknown operation 'wiat'", f"{tag}: malformed trace: {err!r}")
    check(not os.path.exists(rep) and not os.path.exists(fst), f"{tag}: nothing runs on a malformed trace")
    check(out == "", f"{tag}: no summary for a malformed trace")
    # An allocation this device's segments refuse: rejected before anything runs.
    rule = os.path.join(tmp, "rule.trace")
    write(rule, "alloc a size=64K segments=1 evict-to=1\nresident a\n")
    rc, out, err = gmc(binary, "run", rule, "--report", rep)
    check(rc == 2 and f"{rule}:1: alloc a: breaks rule" in err and "GMC_E_RULE_EVICTION_NOT_APERTURE" in err,
          f"{tag}: rule broken for this device: {err!r}")
    check(not os.path.exists(rep), f"{tag}: nothing runs when a rule is broken")
    # A status the trace does not expect: exit 1, FILE:LINE and the status;
    # the same with expect= runs to the end with exit 0.
    nospace = os.path.join(tmp, "nospace.trace")
    write(nospace, "alloc a size=7M segments=2\nresident a\nalloc b size=4K\n")
    rc, out, err = gmc(binary, "run", nospace, "--progress", "none")
    check(rc == 1 and f"gmc: {nospace}:2: resident: GMC_E_NO_SPACE" in err and "operations        3 of 4 run, 1 failed" in out,
          f"{tag}: unexpected status: rc {rc} {err!r}")
    write(nospace, "alloc a size=7M segments=2\nresident a expect=NO_SPACE\nalloc b size=4K\n")
    rc, out, err = gmc(binary, "run", nospace, "--progress", "none")
    check(rc == 0 and "4 of 4 run, 0 failed, 1 refused as expected" in out, f"{tag}: expected status: rc {rc} {out!r}")

    # ---------------------------------------------------------- info
    rc, out, err = gmc(binary, "info")
    segs = re.findall(r"^  (\d): base 0x([0-9a-f]+)  size 0x([0-9a-f]+) \([^)]*\)  banks (\d+)  cpu_offset 0x([0-9a-f]+)  flags (\S+)$",
                      out, re.M)
    check(rc == 0 and "segments: 3" in out and len(segs) == 3, f"{tag}: gmc info: {out!r}")
    want = [("1", 0, 2 << 20, "0", "CpuVisible,PreservedDuringStandby"),
            ("2", 2 << 20, 6080 << 10, "4", "UseBanking,PreservedDuringStandby"),
            ("3", 0x80000000, 16 << 20, "0", "Aperture,CacheCoherent,PreservedDuringStandby,PreservedDuringHibernate")]
    got = [(s[0], int(s[1], 16), int(s[2], 16), s[3], s[5]) for s in segs]
    check(got == want, f"{tag}: default segments: {got}")
    check("page size    4096 bytes" in out and "tlb          16 entries" in out and "id           0x474d4300" in out
          and "version      1." in out, f"{tag}: info page/tlb/id")
    # strapped segments: exactly those
    dev = "sim:segs=2,seg1=0/0x100000/0x84,seg2=0x100000/0x300000/0x88/0/2"
    rc, out, err = gmc(binary, "info", "--device", dev)
    segs = re.findall(r"^  (\d): base 0x([0-9a-f]+)  size 0x([0-9a-f]+) \([^)]*\)  banks (\d+)  cpu_offset 0x([0-9a-f]+)  flags (\S+)$",
                      out, re.M)
    got = [(s[0], int(s[1], 16), int(s[2], 16), s[3], s[5]) for s in segs]
    check(rc == 0 and "segments: 2" in out and got == [("1", 0, 0x100000, "0", "CpuVisible,PreservedDuringStandby"),
                                                       ("2", 0x100000, 0x300000, "2", "UseBanking,PreservedDuringStandby")],
          f"{tag}: strapped segments: {got} {err!r}")
    # a strapped descriptor that breaks a segment rule
    rc, out, err = gmc(binary, "info", "--device", "sim:segs=1,seg1=0/0x100000/0x12")
    check(rc == 2 and "breaks rule" in err, f"{tag}: rule-breaking strap: {err!r}")

    # ---------------------------------------------------------- check
    for ex in ("frame_loop", "streaming_uploads", "large_weights", "budgets"):
        rc, out, err = gmc(binary, "check", f"examples/{ex}.trace")
        check(rc == 0 and ": ok: " in out, f"{tag}: check {ex}: {err!r}")
    rc, out, err = gmc(binary, "check", bad)
    check(rc == 2 and f"{bad}:{line}: unknown operation 'wiat'" in err, f"{tag}: check malformed")

    # ---------------------------------------------------------- replay
    logs = [os.path.join(tmp, f"log{i}.txt") for i in range(3)]
    r1 = gmc(binary, "replay", small, "--log", logs[0])
    r2 = gmc(binary, "replay", small, "--log", logs[1])
    r3 = gmc(binary, "replay", small, "--seed", "2", "--log", logs[2])
    d = [re.match(r"digest ([0-9a-f]{16}) ", r[1]) for r in (r1, r2, r3)]
    check(all(r[0] == 0 for r in (r1, r2, r3)) and all(d), f"{tag}: replay ran: {r1} {r3}")
    if all(d):
        check(d[0].group(1) == d[1].group(1), f"{tag}: same trace and seed, same digest")
        check(open(logs[0]).read() == open(logs[1]).read(), f"{tag}: same decision log")
        check(d[0].group(1) != d[2].group(1), f"{tag}: another seed, another digest")
    other = os.path.join(tmp, "other.trace")
    write(other, SMALL.replace("alloc keep size=128K", "alloc keep size=192K"))
    r4 = gmc(binary, "replay", other)
    d4 = re.match(r"digest ([0-9a-f]{16}) ", r4[1])
    check(r4[0] == 0 and d4 and d[0] and d4.group(1) != d[0].group(1), f"{tag}: another trace, another digest")
    log = open(logs[0]).read()
    # First line: the trace's device, a comment outside the digest; then the header.
    first, _, rest = log.partition("\n")
    small_dev = re.search(r"^device (\S+)$", SMALL, re.M).group(1)
    check(first == f"# device {small_dev}" and rest.startswith("gmc decision log: ") and " evict buf" in log
          and " place buf" in log,
          f"{tag}: decision log has placements and evictions")

    # ---------------------------------------------------------- run + report
    rep = os.path.join(tmp, "report")
    rc, out, err = gmc(binary, "run", small, "--report", rep, "--progress", "plain")
    check(rc == 0 and "digest            " + (d[0].group(1) if d[0] else "?") in out,
          f"{tag}: run digest equals replay digest: {out!r} {err!r}")
    check(re.search(r"^gmc: step \d+/\d+ \(\d+%\)", err, re.M) is not None, f"{tag}: plain progress lines: {err!r}")
    for key in ("allocations", "evictions", "paged in", "paged out", "faults", "fences", "CPU cache", "simulated cycles",
                "wall time"):
        check(re.search(r"^  " + key, out, re.M) is not None, f"{tag}: summary has {key}")
    check(f"pictures: {rep}/segment-N.svg" in out, f"{tag}: summary says where the pictures are")
    stats = json.load(open(os.path.join(rep, "stats.json")))
    ds = stats["device_stats"]
    for k in ("make_resident_calls", "evict_calls", "submits", "page_ins", "evictions", "discards", "bytes_paged_in",
              "bytes_paged_out", "bytes_filled", "paging_ops", "paging_buffers", "multipass", "fences_issued",
              "fences_completed", "faults", "resets", "locks", "lock_waits", "renames", "cache_flushes",
              "cache_invalidates", "cycles"):
        check(isinstance(ds.get(k), int), f"{tag}: stats.json device_stats.{k}")
    check(ds["evictions"] > 0 and ds["bytes_paged_out"] > 0 and ds["cycles"] > 0, f"{tag}: the workload evicts: {ds}")
    hw = stats["hw_counters"]
    check(hw["valid"] == 1 and hw["dma_faults"] == 0 and hw["dma_packets"] > 0 and
          hw["dma_rd_vram"] >= ds["bytes_paged_out"] and
          hw["dma_wr_vram"] >= ds["bytes_paged_in"] + ds["bytes_filled"], f"{tag}: stats.json hw_counters: {hw}")
    for key in ("hardware DMA", "hardware GART", "hardware BAR1"):
        check(re.search(r"^  " + key, out, re.M) is not None, f"{tag}: summary has {key}")
    check(len(stats["segments"]) == 3 and stats["segments"][1]["size"] == 1 << 20 and stats["run"]["steps_run"] == stats["run"]["operations"] and
          len(stats["steps"]) == stats["run"]["steps_run"] and stats["run"]["failed"] == 0, f"{tag}: stats.json run")
    check(sum(s["paged_in"] for s in stats["steps"]) == ds["bytes_paged_in"] and
          sum(s["paged_out"] for s in stats["steps"]) == ds["bytes_paged_out"], f"{tag}: per-step bytes add up")
    # placements and evictions per segment, from the decision log
    seg_of, places, evicts = {}, {}, {}
    for ln in log.splitlines():
        m = re.match(r"  place (\S+) seg (\d+) ", ln)
        if m:
            seg_of[m.group(1)] = int(m.group(2))
            places[int(m.group(2))] = places.get(int(m.group(2)), 0) + 1
        m = re.match(r"  evict (\S+)$", ln)
        if m:
            evicts[seg_of[m.group(1)]] = evicts.get(seg_of[m.group(1)], 0) + 1
    drawn_evictions = 0
    for s in stats["segments"]:
        path = os.path.join(rep, f"segment-{s['id']}.svg")
        root, counts = svg_counts(path)
        check(root.tag == "{http://www.w3.org/2000/svg}svg", f"{tag}: {path} is SVG")
        check(counts.get("alloc", 0) == s["placements"] == places.get(s["id"], 0),
              f"{tag}: segment {s['id']}: {counts.get('alloc', 0)} rectangles, stats {s['placements']}, log {places.get(s['id'], 0)}")
        check(counts.get("evict", 0) == s["evictions_drawn"] == evicts.get(s["id"], 0),
              f"{tag}: segment {s['id']}: eviction marks {counts.get('evict', 0)}, log {evicts.get(s['id'], 0)}")
        drawn_evictions += counts.get("evict", 0)
        texts = "".join(root.itertext())
        check(f"Segment {s['id']}" in texts and "offset in segment" in texts and "step" in texts and "evicted" in texts,
              f"{tag}: segment {s['id']} has a title, axes and a legend")
    check(drawn_evictions == ds["evictions"], f"{tag}: eviction marks {drawn_evictions} = library evictions {ds['evictions']}")
    root, counts = svg_counts(os.path.join(rep, "paging.svg"))
    check(counts.get("in", 0) > 0 and counts.get("out", 0) > 0 and "paged in" in "".join(root.itertext()),
          f"{tag}: paging chart has both directions: {counts}")
    png_checks(binary, tmp, tag, small, rep, out)

    # ---------------------------------------------------------- waveform
    fst = os.path.join(tmp, "w.fst")
    rc, out, err = gmc(binary, "run", small, "--trace", fst, "--trace-window", "0:100000", "--progress", "none")
    check(rc == 0 and os.path.exists(fst) and os.path.getsize(fst) > 100, f"{tag}: FST waveform written: {err!r}")
    with open(fst, "rb") as f:
        check(f.read(1) == b"\x00", f"{tag}: FST file starts with a header block")
    rc, out, err = gmc(binary, "run", small, "--trace", fst, "--trace-window", "10:20", "--progress", "none")
    check(rc == 2 and "the waveform window ends at cycle 20, before the run starts" in err, f"{tag}: past window: {err!r}")


def run_hostile(binary, tmp, tag):
    """Issue 18: an overlapping GPU copy and host memory that follows use."""
    ov = os.path.join(tmp, "overlap.trace")
    base = "alloc a size=64K flags=CpuVisible\nresident a\nwrite a\nsubmit{}\n copy a a src-offset=0 dst-offset=4K size=32K\nend\nread a verify\n"
    write(ov, base.format(""))
    rc, out, err = gmc(binary, "check", ov)
    check(rc == 2 and "overlap.trace:5: copy: the source and destination ranges of 'a' overlap" in err,
          f"{tag}: an overlapping copy is refused before the run: {rc} {err!r}")
    write(ov, base.format(" expect=OVERLAP"))
    rc, out, err = gmc(binary, "run", ov, "--progress", "none")
    check(rc == 0 and re.search(r"reads verified +1 \(64\.0 KiB compared\)", out),
          f"{tag}: the library refuses it (OVERLAP) and the content is intact: {rc} {out!r} {err!r}")
    # A 1.5 GiB allocation with one 64 KiB write: the shadow is sparse, so
    # the run fits in 3 GB of address space (it needed 1.5 + 2 x 1.5 GiB).
    # Address-space limits do not work under ASan: rel only.
    if tag != "rel":
        print(f"skipped: {tag}: host-memory bound (ASan reserves terabytes of address space)")
        return
    big = os.path.join(tmp, "big.trace")
    write(big, "alloc a size=1536M flags=CpuVisible segments=3\nwrite a offset=1G size=64K\n"
               "read a offset=1G size=64K verify\n")
    p = subprocess.run(["prlimit", "--as=3000000000", binary, "run", big, "--progress", "none"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    check(p.returncode == 0 and re.search(r"reads verified +1 \(64\.0 KiB compared\)", p.stdout),
          f"{tag}: a 1.5 GiB allocation runs in 3 GB of address space: {p.returncode} {p.stderr!r}")


def png_size(path):
    """(width, height) from a PNG's signature and IHDR chunk, or None."""
    try:
        with open(path, "rb") as f:
            head = f.read(33)
    except OSError:
        return None
    if len(head) < 33 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    if struct.unpack(">I", head[8:12])[0] != 13:
        return None
    ihdr = head[12:29]
    if struct.unpack(">I", head[29:33])[0] != zlib.crc32(ihdr):
        return None
    return struct.unpack(">II", head[16:24])


def svg_size(path):
    root = ET.parse(path).getroot()
    return int(root.get("width")), int(root.get("height"))


def fake_converter(tmp, name, body):
    """A directory holding an `rsvg-convert` shell script with this body."""
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, "rsvg-convert")
    with open(p, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(p, 0o755)
    return d


def png_checks(binary, tmp, tag, small, rep, out):
    """PNG copies: rsvg-convert is a declared dependency (tools/deps.sh), so
    the PNGs must be there and decode to the SVG's size; a missing converter
    is said in the summary, a failing one stops the run with its reason."""
    check(shutil.which("rsvg-convert") is not None, f"{tag}: rsvg-convert installed (tools/deps.sh installs librsvg2-bin)")
    check("and .png copies" in out, f"{tag}: summary names the PNG copies: {out!r}")
    names = sorted(n for n in os.listdir(rep) if n.endswith(".svg"))
    check(len(names) >= 2, f"{tag}: SVG pictures written: {names}")
    for n in names:
        svg = os.path.join(rep, n)
        png = svg[:-4] + ".png"
        got = png_size(png)
        check(got is not None and got == svg_size(svg), f"{tag}: {png} decodes to the SVG's size: {got} vs {svg_size(svg)}")
    env = dict(os.environ)
    # No rsvg-convert on the PATH: the SVGs are written, the summary says why no PNGs.
    nobin = os.path.join(tmp, "nobin")
    os.makedirs(nobin, exist_ok=True)
    env["PATH"] = nobin
    rep2 = os.path.join(tmp, "report-nopng")
    p = subprocess.run([binary, "run", small, "--report", rep2, "--progress", "none"], cwd=ROOT, capture_output=True,
                       text=True, timeout=600, env=env)
    check(p.returncode == 0 and "pictures: no PNG copies: rsvg-convert is not installed (apt-get install librsvg2-bin)" in p.stdout
          and "and .png copies" not in p.stdout, f"{tag}: no converter: said in the summary: {p.stdout!r} {p.stderr!r}")
    check(os.path.exists(os.path.join(rep2, "segment-2.svg")) and not any(n.endswith(".png") for n in os.listdir(rep2)),
          f"{tag}: no converter: SVGs written, no PNG")
    # A converter that fails: the run's report fails with its reason.
    env["PATH"] = fake_converter(tmp, "failbin", 'echo "rsvg-convert: out of cheese" >&2; exit 3') + ":" + os.environ["PATH"]
    p = subprocess.run([binary, "run", small, "--report", os.path.join(tmp, "report-fail"), "--progress", "none"],
                       cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    check(p.returncode == 2 and "rsvg-convert failed on" in p.stderr and "(exit status 3): rsvg-convert: out of cheese" in p.stderr,
          f"{tag}: failing converter: exit 2 and its message: {p.returncode} {p.stderr!r}")
    # A converter that exits 0 but writes no PNG.
    env["PATH"] = fake_converter(tmp, "junkbin", 'echo junk > "$2"') + ":" + os.environ["PATH"]
    p = subprocess.run([binary, "run", small, "--report", os.path.join(tmp, "report-junk"), "--progress", "none"],
                       cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    check(p.returncode == 2 and "is not a PNG file" in p.stderr, f"{tag}: converter writing junk: {p.returncode} {p.stderr!r}")


# Segments 1 and 3 ApplicationTarget, segment 2 not (docs/budgets.md).
AT_DEVICE = "device sim:seg1=0/0x200000/0x8084,seg2=0x200000/0x5f0000/0x88/0/4,seg3=0x80000000/0x1000000/0x8191\n"


def run_budgets(binary, tmp, tag):
    """Budget operations: the example's figures, refusals with the bytes to
    trim, checks that fail the run, parse errors, and a device without
    ApplicationTarget segments."""
    rep = os.path.join(tmp, "budgets")
    rc, out, err = gmc(binary, "run", "examples/budgets.trace", "--report", rep, "--progress", "none")
    check(rc == 0 and "0 failed, 3 refused as expected" in out, f"{tag}: budgets example runs: {out!r} {err!r}")
    # figures worked out from the trace: local capacity = segment 1 (2 MiB),
    # application budget 1536K, the game's target and shadow map (768K +
    # 256K) counted, its 1M reservation; the readback buffer in the aperture
    check("  budget local      1.0 MiB used of 1.5 MiB (capacity 2.0 MiB), 1.0 MiB reserved, 2 refused\n" in out,
          f"{tag}: budget summary line (local): {out!r}")
    check("  budget non-local  256.0 KiB used of 16.0 MiB (capacity 16.0 MiB), 0 B reserved, 0 refused\n" in out,
          f"{tag}: budget summary line (non-local): {out!r}")
    if rc == 0:
        with open(os.path.join(rep, "stats.json")) as f:
            js = json.load(f)
        b = {g["group"]: g for g in js["budgets"]}
        check(b["local"] == {"group": "local", "capacity": 2 << 20, "budget": 1536 << 10, "usage": 1 << 20,
                             "reservation": 1 << 20, "refusals": 2}, f"{tag}: stats.json budgets local: {b}")
        check(b["non_local"]["usage"] == 256 << 10 and b["non_local"]["capacity"] == 16 << 20,
              f"{tag}: stats.json budgets non_local: {b}")
        cl = {c["name"]: c for c in js["clients"]}
        check(cl["game"]["local"] == {"budget": 1280 << 10, "usage": 1 << 20, "reservation": 1 << 20,
                                      "available": 1280 << 10}, f"{tag}: stats.json game local: {cl['game']}")
        check(cl["tool"].get("exited") is True, f"{tag}: the tool exited: {cl['tool']}")
    r1 = gmc(binary, "replay", "examples/budgets.trace")
    r2 = gmc(binary, "replay", "examples/budgets.trace")
    check(r1[0] == 0 and r1[1] == r2[1] and r1[1].startswith("digest "), f"{tag}: budgets replay: {r1} {r2}")

    head = AT_DEVICE + "client c\nalloc a size=128K segments=1\nalloc b size=192K segments=1\nalloc v size=1M segments=2\n"
    cases = [
        # (body, exit status, text on stderr)
        ("budget local=256K\nresident v a\nresident b expect=OVER_BUDGET trim=64K\n"
         "memory-info usage=128K budget=256K available=256K\n", 0, ""),
        ("budget local=256K\nresident a\nresident b expect=OVER_BUDGET trim=32K\n", 1,
         "65536 bytes to trim, expected 32768"),
        ("budget local=256K\nresident a\nresident b\n", 1,
         "resident: GMC_E_OVER_BUDGET (the client would go over its video memory budget"),
        ("resident a\nmemory-info usage=64K\n", 1, "memory-info: GMC_E_CORRUPT"),
        ("resident a\nmemory-info usage=64K\n", 1, "usage is 131072, expected 65536"),
        ("app-budget local=1M\nreserve local={1024+4}K expect=RESERVATION\nmemory-info reservation=0\n"
         "reserve local=1M\nmemory-info reservation=1M available=1M\n", 0, ""),
        ("app-budget local=1M\nreserve local=1M\nbudget local=512K expect=RESERVATION\n"
         "memory-info reservation=1M budget=1M\n", 0, ""),
        ("budget local=1M non-local=1M\n", 2, "budget: give local= or non-local= (one group per line)"),
        ("resident a trim=4K\n", 2, "resident: trim= goes with expect=OVER_BUDGET"),
        ("memory-info group=remote\n", 2, "memory-info: group is local or non-local, not 'remote'"),
        ("budget client=nobody local=1M\n", 2, "budget: unknown client 'nobody'"),
    ]
    for i, (body, want_rc, text) in enumerate(cases):
        path = os.path.join(tmp, f"budget{i}.trace")
        write(path, head + body)
        rc, out, err = gmc(binary, "run", path, "--progress", "none")
        check(rc == want_rc and text in err, f"{tag}: budget case {i}: rc {rc} {err!r}")

    # no ApplicationTarget segment: nothing counts, no summary line
    path = os.path.join(tmp, "budget_default.trace")
    write(path, "client c\nalloc a size=128K segments=1\nbudget local=0\nresident a\nmemory-info usage=0 budget=0\n")
    rc, out, err = gmc(binary, "run", path, "--progress", "none", "--report", os.path.join(tmp, "bdef"))
    check(rc == 0 and "budget local" not in out, f"{tag}: default device, no budget lines: {out!r} {err!r}")


# Segment 1 (1 MiB, CpuVisible) is DirectFlip, segment 2 (1 MiB) is not,
# segment 3 the aperture (tests/host/test_flip.c's device).
FLIP_DEVICE = ("device sim:segs=3,seg1=0/0x100000/0x484/0,seg2=0x100000/0x100000/0x80,"
               "seg3=0x80000000/0x1000000/0x191\n")

FLIP_TRACE = FLIP_DEVICE + """\
client c
alloc f size=256K segments=1,2 prefer=2 flags=CpuVisible
resident f
pin-flip f
pin-flip f
evict f
write f pattern=0x5a5a5a5a
repeat 12 as i
  alloc b{i} size=128K segments=1
  resident b{i}
  evict b{i}
end
alloc whole size=1M segments=1
resident whole expect=NO_SPACE
read f verify
unpin-flip f
resident whole
"""


def run_flip(binary, tmp, tag):
    """pin-flip / unpin-flip (docs/trace-format.md, "DirectFlip"): a pin
    that moves the allocation into the DirectFlip segment and keeps it there
    while 12 allocations of 128 KiB go through the rest of the segment, a
    refused pin, the checker's own refusals and bad syntax."""
    path = os.path.join(tmp, "flip.trace")
    write(path, FLIP_TRACE)
    rep = os.path.join(tmp, "flip")
    rc, out, err = gmc(binary, "run", path, "--report", rep, "--progress", "none")
    check(rc == 0 and "0 failed, 1 refused as expected" in out, f"{tag}: flip trace runs: {out!r} {err!r}")
    if rc == 0:
        with open(os.path.join(rep, "stats.json")) as f:
            steps = json.load(f)["steps"]
        pins = [s for s in steps if s["op"] == "pin-flip"]
        # the first pin moves f (resident in segment 2) with its 256 KiB;
        # the second changes nothing
        check(len(pins) == 2 and pins[0]["evictions"] == 1 and pins[0]["paged_in"] == 256 << 10 and
              pins[0]["paged_out"] == 256 << 10 and pins[1]["evictions"] == 0 and pins[1]["paged_in"] == 0,
              f"{tag}: flip pin steps: {pins}")
        refused = [s for s in steps if s["op"] == "resident" and s["line"] == 15]
        check([s["status"] for s in refused] == ["GMC_E_NO_SPACE"], f"{tag}: whole segment refused: {refused}")
        # after the unpin, the 1 MiB allocation evicts f and the six 128 KiB
        # allocations left in the 768 KiB f did not hold
        check(steps[-1]["op"] == "resident" and steps[-1]["evictions"] == 7, f"{tag}: last step: {steps[-1]}")
    log = os.path.join(tmp, "flip.log")
    rc, out, err = gmc(binary, "replay", path, "--log", log)
    rc2, out2, _ = gmc(binary, "replay", path)
    check(rc == 0 and rc2 == 0 and out == out2 and out.startswith("digest "), f"{tag}: flip replay: {out!r} {out2!r}")
    if rc == 0:
        with open(log) as f:
            lines = f.read().splitlines()
        first = lines.index("step 3 line 5 pin-flip OK") if "step 3 line 5 pin-flip OK" in lines else -1
        unpin = lines.index("step 46 line 17 unpin-flip OK") if "step 46 line 17 unpin-flip OK" in lines else -1
        check(0 < first < unpin, f"{tag}: flip log steps: {first} {unpin}")
        check("  flip-pinned f seg 1 off 0x0" in lines[:first] and "  flip-unpinned f" in lines[first:unpin],
              f"{tag}: flip log pin lines")
        check(lines[first + 1:first + 3] == ["  move f", "  place f seg 1 off 0x0 size 0x40000"],
              f"{tag}: the pin moves f: {lines[first + 1:first + 3]}")
        moved = [ln for ln in lines[first + 3:unpin] if ln.split()[:2] in (["move", "f"], ["evict", "f"],
                                                                           ["place", "f"], ["lost", "f"])]
        check(moved == [], f"{tag}: f stays put while pinned: {moved}")
        check("  evict f" in lines[unpin:], f"{tag}: f evicted after the unpin")

    head = FLIP_DEVICE + "client c\nalloc f size=256K segments=1,2 flags=CpuVisible\nalloc g size=64K segments=2\n"
    cases = [
        # (command, body, exit status, text on stderr)
        ("run", "pin-flip g expect=NOT_DIRECT_FLIP\nunpin-flip g expect=BAD_STATE\n", 0, ""),
        ("run", "pin-flip g\n", 1, "pin-flip g: GMC_E_NOT_DIRECT_FLIP"),
        ("run", "unpin-flip f expect=BAD_STATE\n", 0, ""),
        ("check", "unpin-flip f\n", 2, "unpin-flip: 'f' is not pinned for DirectFlip (the library answers BAD_STATE)"),
        ("run", "pin-flip f\nunpin-flip f\nunpin-flip f\n", 2, "flip.trace:7: unpin-flip: 'f' is not pinned"),
        ("run", "pin-flip f\ndestroy f\nalloc f size=4K segments=1\nunpin-flip f\n", 2, "unpin-flip: 'f' is not pinned"),
        ("run", "standby\npin-flip f\n", 2, "pin-flip: the device is in standby since line 5 (resume first)"),
        # pinned already: the library answers OK before it looks at the power state
        ("run", "pin-flip f\nstandby\npin-flip f\nunpin-flip f\nresume\n", 0, ""),
        ("run", "pin-flip f\nlock f flags=WriteOnly\nwrite f\nunlock f\nread f verify\n", 0, ""),
        ("check", "pin-flip\n", 2, "pin-flip: missing allocation name"),
        ("check", "pin-flip f g\n", 2, "pin-flip: unexpected word 'g'"),
        ("check", "unpin-flip f size=4K\n", 2, "unpin-flip: unknown key 'size'"),
        ("check", "pin-flip nothing\n", 2, "pin-flip: unknown allocation 'nothing'"),
        ("check", "pin-flip f client=nobody\n", 2, "pin-flip: unknown client 'nobody'"),
    ]
    for i, (cmd, body, want_rc, text) in enumerate(cases):
        path = os.path.join(tmp, "flip.trace")
        write(path, head + body)
        rc, out, err = gmc(binary, cmd, path, *(["--progress", "none"] if cmd == "run" else []))
        check(rc == want_rc and text in err, f"{tag}: flip case {i}: rc {rc} {err!r}")

    # the default device has no DirectFlip segment
    path = os.path.join(tmp, "flip_default.trace")
    write(path, "client c\nalloc f size=64K\npin-flip f expect=NOT_DIRECT_FLIP\npin-flip f\n")
    rc, out, err = gmc(binary, "run", path, "--progress", "none")
    check(rc == 1 and "flip_default.trace:4: pin-flip f: GMC_E_NOT_DIRECT_FLIP" in err,
          f"{tag}: default device refuses the pin: {rc} {err!r}")


def decisions(log_path):
    """The decision log without names and line numbers: what was placed
    where, evicted, moved, paged, read, per step and operation kind."""
    out = []
    with open(log_path) as f:
        for ln in f:
            if ln.startswith("#") or ln.startswith("gmc decision log"):
                continue
            w = ln.split()
            if w[0] == "step":            # step N line L OP STATUS
                out.append(("step", w[4], w[5]))
            elif w[0] in ("place", "evict", "move", "read", "map"):
                out.append((w[0],) + tuple(w[2:]))
            else:
                out.append(tuple(w))
    return out


def run_record(binary, tmp, tag):
    """GMC_RECORD on the gmc command itself: the recording of a replay
    replays with the same decisions, and refuses a bad recording option."""
    small = os.path.join(tmp, "rec_small.trace")
    write(small, SMALL)
    rec = os.path.join(tmp, "rec.trace")
    env = dict(os.environ, GMC_RECORD=rec)
    log1, log2 = os.path.join(tmp, "rec1.log"), os.path.join(tmp, "rec2.log")
    p = subprocess.run([binary, "replay", small, "--log", log1], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=600)
    check(p.returncode == 0 and os.path.exists(rec) and os.path.exists(rec + ".data"),
          f"{tag}: GMC_RECORD gmc replay writes the recording ({p.returncode}, {p.stderr!r})")
    rc, out, err = gmc(binary, "replay", rec, "--log", log2)
    check(rc == 0 and " 0 failed" in out, f"{tag}: the recording replays ({rc}, {out!r}, {err!r})")
    with open(rec) as f:
        text = f.read()
    check(" hash=0x" in text and "\nsubmit client=c1\n  use a" in text and "# not recorded" not in text,
          f"{tag}: the recording has read hashes and submit blocks, nothing left out")
    d1, d2 = decisions(log1), decisions(log2)
    check(len(d1) > 50 and d1 == d2,
          f"{tag}: the recording's replay decides as the original ({len(d1)} and {len(d2)} decisions)")
    env = dict(os.environ, GMC_RECORD=rec, GMC_RECORD_OPTIONS="gzip")
    p = subprocess.run([binary, "replay", small], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=600)
    check(p.returncode == 2 and "GMC_E_RECORD_OPTION" in p.stderr,
          f"{tag}: a bad GMC_RECORD_OPTIONS stops the open ({p.returncode}, {p.stderr!r})")
    env = dict(os.environ, GMC_RECORD=os.path.join(tmp, "no-such-dir", "r.trace"))
    p = subprocess.run([binary, "replay", small], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=600)
    check(p.returncode == 2 and "GMC_E_RECORD_IO" in p.stderr,
          f"{tag}: an unwritable GMC_RECORD stops the open ({p.returncode}, {p.stderr!r})")


def main():
    binaries = [(v, os.path.join(BUILD, v, "bin", "gmc")) for v in ("rel", "asan")]
    binaries = [(v, b) for v, b in binaries if os.path.exists(b)]
    check(len(binaries) == 2, f"gmc binaries in {BUILD}/rel/bin and {BUILD}/asan/bin")
    for tag, b in binaries:
        with tempfile.TemporaryDirectory(prefix=f"gmc-cli-{tag}-") as tmp:
            run_checks(b, tmp, tag)
            run_hostile(b, tmp, tag)
            run_budgets(b, tmp, tag)
            run_flip(b, tmp, tag)
            run_record(b, tmp, tag)
    print(f"test_cli: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
