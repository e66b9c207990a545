#!/usr/bin/python3
"""The offline optimum of bench/evict_opt.py (docs/eviction-bench.md):
 - a hand-worked trace gives the bytes worked out by hand;
 - on tiny random traces the integer program equals an exhaustive search
   over every eviction schedule (which may evict at any step and tracks
   dirtiness step by step, so it checks the program's formulation);
 - on small random traces it is at most what LRU and CLOCK (placed, with
   the library's scan and write-back rule) page, and at least its own LP
   relaxation;
 - the parser refuses what the models do not know, and a step that cannot fit.
Runs with Debian's python3 (python3-scipy). Prints "test_evict_opt: N passed, M failed"."""
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import evict_opt as eo  # noqa: E402

PAGE = 4096
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {what}")


def make(sizes_pages, cap_pages, steps, name="t"):
    """steps: list of (refs, writes, dels) with allocation ids."""
    t = eo.Trace(name)
    t.cap = cap_pages * PAGE
    t.sizes = [s * PAGE for s in sizes_pages]
    t.prios = [0] * len(sizes_pages)
    t.names = [f"a{i}" for i in range(len(sizes_pages))]
    t.steps = [[list(r), set(w), list(d)] for r, w, d in steps]
    return t


def random_trace(rng, nalloc, nsteps, maxsize, cap_pages, maxref):
    sizes = [rng.randint(1, maxsize) for _ in range(nalloc)]
    steps = []
    dead = set()
    for _ in range(nsteps):
        alive = [i for i in range(nalloc) if i not in dead]
        rng.shuffle(alive)
        refs, tot = [], 0
        for i in alive[:rng.randint(1, maxref)]:
            if tot + sizes[i] <= cap_pages:
                refs.append(i)
                tot += sizes[i]
        writes = {i for i in refs if rng.random() < 0.3}
        dels = [i for i in alive if i not in refs and rng.random() < 0.05]
        dead.update(dels)
        steps.append((refs, writes, dels))
    return make(sizes, cap_pages, steps)


# 1. By hand: three one-page allocations A B C A B C, room for two. The
# first touches leave them dirty. The best: at C evict B (write-back), at
# the second B evict A (write-back: never paged in since its fill) and page
# B in: 3 pages. Every other choice pays a reload more.
t = make([1, 1, 1], 2, [([0], [], []), ([1], [], []), ([2], [], []), ([0], [], []), ([1], [], []), ([2], [], [])])
o = eo.optimum(t)
check(o["bytes"] == 3 * PAGE and o["kind"] == "exact", f"hand trace: {o}")
check(eo.brute_force(t) == 3 * PAGE, "hand trace: brute force")
# Clean evictions are free: the same loop where B is paged in before it is
# needed again costs the reloads only once it has a system copy.
t = make([1, 1], 1, [([0], [], []), ([1], [], []), ([0], [], []), ([1], [], [])])
# A fill, evict A (wb 1), B fill, evict B (wb 1) + A in (1), evict A clean, B in (1): 4 pages
o = eo.optimum(t)
check(o["bytes"] == 4 * PAGE, "one-slot alternation: 4 pages")
# Every switch is forced, so the split is unique: A and B written back once
# each, then each paged in once.
check(o["in_bytes"] == 2 * PAGE and o["wb_bytes"] == 2 * PAGE, f"one-slot alternation: the split {o}")
# A write after the page-in makes the next eviction write back again.
t = make([1, 1], 1, [([0], [], []), ([1], [], []), ([0], [0], []), ([1], [], []), ([0], [], [])])
# wb A, fill B; wb B, in A (written); wb A, in B; B clean dropped, in A: 1+1+1+1+1+1 = 6
o = eo.optimum(t)
check(o["bytes"] == 6 * PAGE, "write after page-in: 6 pages")
check(o["in_bytes"] == 3 * PAGE and o["wb_bytes"] == 3 * PAGE, f"write after page-in: the split {o}")
# Destroying is free: a dirty allocation destroyed instead of evicted pays nothing.
t = make([2, 2], 2, [([0], [0], [0]), ([1], [], [])])
check(eo.optimum(t)["bytes"] == 0, "destroyed before the next step: 0")

# 2. Tiny random traces: the program equals the exhaustive search.
rng = random.Random(19)
for k in range(40):
    t = random_trace(rng, rng.randint(3, 5), rng.randint(4, 8), 3, rng.randint(3, 6), 3)
    o = eo.optimum(t)
    bf = eo.brute_force(t)
    check(o["kind"] == "exact" and o["bytes"] == bf, f"tiny trace {k}: program {o['bytes']} brute force {bf}")

# 3. Small random traces: optimum <= LRU, CLOCK; >= LP relaxation. A trace
# where a placed model cannot fit a step (its own allocations fragment the
# segment; the library would answer NO_SPACE too) is drawn again.
done = tries = 0
while done < 25 and tries < 200:
    tries += 1
    t = random_trace(rng, rng.randint(8, 16), rng.randint(20, 40), 4, rng.randint(8, 16), 5)
    try:
        lru, clk = eo.simulate(t, "lru")["bytes"], eo.simulate(t, "clock")["bytes"]
    except eo.TraceError:
        continue
    o = eo.optimum(t)
    check(o["kind"] == "exact" and o["bytes"] <= lru and o["bytes"] <= clk and o["lp_bytes"] <= o["bytes"],
          f"small trace {done}: opt {o} lru {lru} clock {clk}")
    done += 1
check(done == 25, f"only {done} of 25 small traces placed without fragmentation in {tries} draws")

# 4. The parser: the subset it knows, and refusals.
with tempfile.TemporaryDirectory() as d:
    def write(name, text):
        p = os.path.join(d, name)
        with open(p, "w") as f:
            f.write(text)
        return p
    dev = "device sim:segs=3,seg1=0/0x200000/0x84,seg2=0x200000/0x20000/0x88/0/4,seg3=0x80000000/0x1000000/0x191\n"
    p = write("ok.trace", dev + "client c\nalloc x size=64K segments=2\nalloc y size=4K segments=2 priority=low\n"
              "resident x y\nsubmit\n  fill x size=4K\n  use y\nend\nwait\nevict x y\ndestroy y\n"
              "resident x\nsubmit\n  use x write\nend\nevict x\n")
    t = eo.parse(p)
    check(t.cap == 0x20000 and t.sizes == [65536, 4096] and t.steps == [[[0, 1], {0}, [1]], [[0], {0}, []]]
          and t.prios[1] == eo.PRIOS["low"], f"parse: {t.cap} {t.sizes} {t.steps}")
    for name, body, why in [
        ("lock.trace", "client c\nalloc x size=4K segments=2 flags=CpuVisible\nlock x\n", "'lock' is not in the bench subset"),
        ("big.trace", "client c\nalloc x size=256K segments=2\nresident x\n", "do not fit"),
        ("two.trace", "client c\nalloc x size=4K segments=2\nalloc y size=4K segments=1\n", "same segment"),
    ]:
        try:
            eo.parse(write(name, dev + body))
            check(False, f"{name}: accepted")
        except eo.TraceError as e:
            check(why in str(e), f"{name}: {e}")

print(f"test_evict_opt: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
