#!/usr/bin/python3
"""Relocation as measured by bench/evict_breakdown.py (docs/eviction-bench.md,
"Issue 19's third round: relocation"):
 - by hand: a placement whose scan would evict (and write back) a two-page
   allocation moves a one-page one out of a window instead, for exactly
   one page moved and nothing paged; with a move weight that makes the
   move cost as much as the eviction, it evicts; an allocation the step
   references is never moved;
 - on random traces: relocation fits every step the scan fits, placed
   allocations never overlap and stay inside the segment, nothing a step
   references moves during the step, and every move and the bytes moved
   are counted;
 - the replica's plain LRU pages what evict_opt's LRU pages.
Prints "test_evict_reloc: N passed, M failed"."""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import evict_breakdown as eb  # noqa: E402
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


def make(sizes_pages, cap_pages, steps, prios=None):
    t = eo.Trace("t")
    t.cap = cap_pages * PAGE
    t.sizes = [s * PAGE for s in sizes_pages]
    t.prios = list(prios) if prios is not None else [0] * len(sizes_pages)
    t.names = [f"a{i}" for i in range(len(sizes_pages))]
    t.steps = [[list(r), set(w), list(d)] for r, w, d in steps]
    return t


# 1. By hand. Six pages: A (2 pages, priority 0) at 0-1, B at 2, C (priority
# 1) at 3, F at 4, E at 5, all written by their first step. B and F are
# destroyed: holes at 2 and 4, two free pages. D (2 pages) then needs a
# contiguous pair with E referenced. The scan takes A first (lowest
# priority): the run 0-2 holds D, so A goes, written back (2 pages).
# Relocation: no shortfall (two pages free); the window 2-3 holds only C,
# which fits the hole at 4: one page moved, weighed 2 x 1 against A's
# write-back plus its refault (2 + 2).
def hand(e_refs_c=False):
    refs2 = [4, 2, 5] if e_refs_c else [4, 5]
    return make([2, 1, 1, 1, 1, 2], 6,
                [([0, 1, 2, 3, 4], {0, 1, 2, 3, 4}, [1, 3]), (refs2, {5}, [])],
                prios=[0, 0, 1, 0, 0, 0])


# ids: 0 A, 1 B, 2 C, 3 F, 4 E, 5 D
r = eb.Replica(hand())
c = r.run()
check(c["out"] == 2 * PAGE and c["in"] == 0 and c["moved"] == 0 and c["moves"] == 0,
      f"hand, no relocation: A written back: {c}")
check(not r.a[0].placed and r.a[5].placed and r.a[5].start == 0, "hand, no relocation: D where A was")
r = eb.Replica(hand(), relocate=True)
c = r.run()
check(c["out"] == 0 and c["in"] == 0 and c["moved"] == PAGE and c["moves"] == 1,
      f"hand, relocation: C moved, nothing paged: {c}")
check(r.a[0].placed and r.a[0].start == 0 and r.a[2].start == 4 * PAGE and r.a[5].start == 2 * PAGE
      and r.a[4].start == 5 * PAGE, "hand, relocation: A stays, C at page 4, D at pages 2-3, E stays")
# The comparison: a move weighed 4 x 1 costs what evicting A costs (4): the
# tie evicts.
saved = eb.MOVE_WEIGHT
eb.MOVE_WEIGHT = 4.0
c = eb.Replica(hand(), relocate=True).run()
check(c["out"] == 2 * PAGE and c["moved"] == 0, f"hand, move as dear as the eviction: evicts: {c}")
eb.MOVE_WEIGHT = 3.99
c = eb.Replica(hand(), relocate=True).run()
check(c["out"] == 0 and c["moved"] == PAGE, f"hand, move a little cheaper: moves: {c}")
eb.MOVE_WEIGHT = saved
# C referenced by the step: never moved, so no window opens by moving; A goes.
r = eb.Replica(hand(e_refs_c=True), relocate=True)
c = r.run()
check(c["out"] == 2 * PAGE and c["moved"] == 0 and r.a[2].start == 3 * PAGE,
      f"hand, C referenced: not moved, A evicted: {c}")


# 2. Random traces: layout invariants after every placement, moves counted.
class Checked(eb.Replica):
    def _place_evict(self, x):
        before = {y.id: y.start for y in self.a if y.placed and y.refs > 0 and y is not x}
        m0, n0 = self.c["moved"], self.c["moves"]
        starts = {y.id: y.start for y in self.a if y.placed}
        super()._place_evict(x)
        blocks = sorted((y.start, y.size) for y in self.a if y.placed)
        ok = all(s + n <= nxt for (s, n), (nxt, _) in zip(blocks, blocks[1:]))
        ok &= all(0 <= s and s + n <= self.t.cap for s, n in blocks)
        self.bad |= not ok
        self.bad |= any(self.a[i].start != s or not self.a[i].placed for i, s in before.items())
        moved = [y for y in self.a if y.placed and y.id in starts and y.start != starts[y.id]]
        self.bad |= self.c["moves"] - n0 != len(moved) or self.c["moved"] - m0 != sum(y.size for y in moved)
        self.total_moves += len(moved)


def random_trace(rng):
    n, cap = rng.randint(8, 16), rng.randint(10, 20)
    sizes = [rng.randint(1, 4) for _ in range(n)]
    steps, dead = [], set()
    for _ in range(rng.randint(20, 40)):
        alive = [i for i in range(n) if i not in dead]
        rng.shuffle(alive)
        refs, tot = [], 0
        for i in alive[:rng.randint(1, 5)]:
            if tot + sizes[i] <= cap // 2:
                refs.append(i)
                tot += sizes[i]
        writes = {i for i in refs if rng.random() < 0.4}
        dels = [i for i in alive if i not in refs and rng.random() < 0.05]
        dead.update(dels)
        steps.append((refs, writes, dels))
    return make(sizes, cap, steps, prios=[rng.randint(0, 2) for _ in range(n)])


rng = random.Random(1905)
done = moves = lru_ok = 0
for k in range(200):
    t = random_trace(rng)
    try:  # traces a placed run cannot fit (the library would answer NO_SPACE) are drawn again
        plain = {order: eb.Replica(t, order).run() for order in ("policy", "lru")}
    except eo.TraceError:
        continue
    done += 1
    for order in ("policy", "lru"):
        # relocation falls back to the scan's victims, so it fits whatever the scan fits
        r = Checked(t, order, True, True)
        r.bad, r.total_moves = False, 0
        try:
            r.run()
        except eo.TraceError as e:
            r.bad = True
            print(f"random trace {k} ({order}): {e}")
        check(not r.bad, f"random trace {k} ({order}): overlap, a referenced allocation moved, a move miscounted "
              "or no room")
        moves += r.total_moves
    lru_ok += plain["lru"]["bytes"] == eo.simulate(t, "lru")["bytes"]
check(done >= 100, f"only {done} random traces placed")
check(moves > 0, "random traces: relocation never moved anything")
check(lru_ok == done, f"replica LRU equals evict_opt's LRU on {lru_ok} of {done} traces")

print(f"test_evict_reloc: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
