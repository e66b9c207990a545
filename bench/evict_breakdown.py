#!/usr/bin/python3
"""Where the library's eviction cost differs from the optimum's
(docs/eviction-bench.md, "Where the gap comes from").

For every trace of bench/evict_eval.py's rows (OUT.json), a replica of the
library's policy in Python (victim order, hot set, best-fit placement, the
eviction scan and its window, the write-back rule: host/vidmm/gmc_victim.c,
gmc_cand.c, gmc_resid.c) is run seven ways:

  policy      the library's decisions; must page exactly what `gmc run`
              paged (`evict_breakdown_replica_match`), which checks the
              replica, so the counters below describe the library's run;
  policy_cap  the same victim order, capacity only: an allocation fits when
              the free bytes suffice, evictions go in victim order until
              they do (no fragmentation, the optimum's model of room);
  belady      the clairvoyant order (the allocation used again furthest in
              the future first, never again first), the library's
              placement and scan: what no online order can beat by much;
  belady_cap  the same, capacity only;
  policy_reloc  the library's order with relocation (issue 19's third
              round, not in the library): when a placement needs a hole,
              the scan's victims, or the victims the capacity shortfall
              needs (in victim order) plus moves of candidates inside a
              window to holes outside it (a VRAM -> VRAM TRANSFER each),
              whichever costs less (Replica._relocation);
  lru, lru_reloc  plain LRU (no priorities, no hot set; must page what
              evict_opt's LRU pages, `evict_breakdown_lru_match`), without
              and with the same relocation.

Per trace: bytes paged in, bytes written back, of those the write-backs of
allocations never used again (dead: the trace destroys them or ends), and
of the bytes evicted, those the capacity shortfall needed and those the
contiguous window took beyond it (fragmentation); with relocation, the
bytes moved, reported apart and added at full weight (`_full_`): a move
costs the engine what a page transfer costs (8 bytes a cycle either way,
docs/dma.md). The optimum's own split
(paged in / written back) is one optimal schedule's (evict_opt.optimum).

Usage: evict_breakdown.py ROWS.json [--table]   (one flat JSON object; with
--table a Markdown table per family on stderr)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evict_opt as eo  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _A:
    __slots__ = ("id", "size", "prio", "placed", "start", "gpu", "sysv", "content", "hot", "hot_seq", "lru",
                 "refault", "refs", "dead")


# Relocation (docs/eviction-bench.md, "Relocation"): a move is weighed at
# MOVE_WEIGHT bytes per byte moved against an eviction's write-back plus
# REFAULT_WEIGHT bytes per byte evicted (its page-in if it comes back);
# windows are tried at the edges of the RELOC_HOLES largest holes.
MOVE_WEIGHT = 2.0
REFAULT_WEIGHT = 1.0
RELOC_HOLES = 4


def _fit_moves(blocks, holes):
    """Destinations for blocks (largest first, best fit: the smallest hole,
    the lowest of equal ones, at its bottom) in holes [[size, start]]; None
    when one does not fit."""
    holes = [list(h) for h in holes]
    out = []
    for y in sorted(blocks, key=lambda y: (-y.size, y.start)):
        h = [hh for hh in holes if hh[0] >= y.size]
        if not h:
            return None
        hh = min(h)
        out.append((y, hh[1]))
        hh[0] -= y.size
        hh[1] += y.size
    return out


class Replica:
    def __init__(self, t, order="policy", contiguous=True, relocate=False):
        self.t, self.order, self.contiguous, self.relocate = t, order, contiguous, relocate
        self.a = []
        for i, s in enumerate(t.sizes):
            x = _A()
            x.id, x.size, x.prio = i, s, t.prios[i]
            x.placed = x.gpu = x.sysv = x.content = x.hot = x.refault = x.dead = False
            x.start = x.hot_seq = x.lru = x.refs = 0
            self.a.append(x)
        self.uses, _ = eo.uses_of(t)
        self.tick = self.hseq = self.hot_bytes = self.used = 0
        self.budget = float("inf")
        self.step = 0
        self.c = {"in": 0, "out": 0, "dead_out": 0, "evicted": 0, "evicted_needed": 0, "evicted_frag": 0,
                  "moved": 0, "moves": 0}

    # -- placement (best fit: the smallest hole, the lowest of equal ones, at its bottom)
    def _blocks(self, skip=()):
        return sorted((x.start, x.size, x.id) for x in self.a if x.placed and x.id not in skip)

    def _run(self, skip=()):
        """(size, start, end) of every hole when the allocations in skip are gone."""
        pos, out = 0, []
        for s, n, _ in self._blocks(skip) + [(self.t.cap, 0, None)]:
            if s > pos:
                out.append((s - pos, pos, s))
            pos = max(pos, s + n)
        return out

    def _best_fit(self, size, skip=()):
        h = [x for x in self._run(skip) if x[0] >= size]
        return min(h)[1] if h else None

    def _place(self, x):
        if self.contiguous:
            at = self._best_fit(x.size)
        else:
            at = 0 if self.t.cap - self.used >= x.size else None
        if at is None:
            return False
        x.placed, x.start, x.gpu, x.refault = True, at, False, False
        self.used += x.size
        return True

    def _unplace(self, x):
        if x.placed:
            x.placed, x.gpu = False, False
            self.used -= x.size
            if x.hot:
                self.hot_bytes -= x.size
                x.hot = False

    def _set_hot(self, x, h):
        if x.hot == h or not x.placed:
            return
        x.hot = h
        if h:
            self.hseq += 1
            x.hot_seq = self.hseq
            self.hot_bytes += x.size
        else:
            self.hot_bytes -= x.size

    # -- the policy (gmc_victim.c)
    def _dirty(self, x):
        return x.placed and x.gpu and not x.sysv

    def _next_use(self, x):
        for u in self.uses[x.id]:
            if u > self.step:
                return u
        return 1 << 30

    def _key(self, x):
        if self.order == "belady":
            return (-self._next_use(x), x.id)
        if self.order == "lru":
            return (x.lru, x.id)
        return (x.prio, self._dirty(x), x.hot, -x.hot_seq if x.hot else x.lru, x.id)

    def _oldest_hot(self, p):
        h = [x for x in self.a if x.hot and x.placed and x.prio == p]
        return min(h, key=lambda x: (x.lru, x.id)) if h else None

    def _admit(self, x):
        if self.order != "policy" or not x.refault:
            return False
        if self.hot_bytes + x.size <= self.budget:
            return True
        o = self._oldest_hot(x.prio)
        if o is None or o.lru > x.lru:
            return False
        while self.hot_bytes + x.size > self.budget and o is not None:
            self._set_hot(o, False)
            o = self._oldest_hot(x.prio)
        return True

    def _evict(self, x):
        if x.gpu and not x.sysv:
            self.c["out"] += x.size
            x.sysv = True
            if self._next_use(x) == 1 << 30:
                self.c["dead_out"] += x.size
        self.c["evicted"] += x.size
        self._unplace(x)
        x.refault = x.content

    def _least_evicted(self, run, lo, hi, size):
        def cost(at):
            return sum(v.size for v in run if v.start < at + size and v.start + v.size > at)
        best, best_b = lo, cost(lo)
        for v in run:
            for at in (v.start + v.size, v.start - size if v.start >= size else lo, hi - size):
                if lo <= at and at + size <= hi:
                    b = cost(at)
                    if b < best_b or (b == best_b and at < best):
                        best, best_b = at, b
        return best

    def _place_evict(self, x):
        if self._place(x):
            if self.order == "policy" and self.hot_bytes + x.size <= self.budget:
                self._set_hot(x, True)
            return
        join = self._admit(x)
        order = sorted((y for y in self.a if y.placed and y.refs == 0 and not y.dead and y is not x), key=self._key)
        need = x.size - (self.t.cap - self.used)
        chosen, gone = set(), []
        for v in order:
            chosen.add(v.id)
            if not self.contiguous:
                gone.append(v)
                if sum(y.size for y in gone) >= need:
                    break
                continue
            fit = [h for h in self._run(chosen) if h[0] >= x.size and h[1] <= v.start < h[2]]
            if not fit:
                continue
            _, lo, hi = fit[0]
            run = [self.a[i] for i in chosen if lo <= self.a[i].start < hi]
            at = self._least_evicted(run, lo, hi, x.size)
            gone = [y for y in run if y.start < at + x.size and y.start + y.size > at]
            break
        else:
            if self.contiguous or sum(y.size for y in gone) < need:
                raise eo.TraceError(f"{self.t.name}: no room")
        moves = []
        if self.relocate:
            gone, moves = self._relocation(x, order, need, gone)
        freed = sum(y.size for y in gone)
        self.c["evicted_needed"] += min(freed, need)
        self.c["evicted_frag"] += freed - min(freed, need)
        hot_out = any(y.hot for y in gone)
        for y in gone:
            self._evict(y)
        for y, dst in moves:
            y.start = dst
            self.c["moved"] += y.size
            self.c["moves"] += 1
        if hot_out:
            self.budget = self.hot_bytes
        if not self._place(x):
            raise eo.TraceError(f"{self.t.name}: scan placement")
        self._set_hot(x, join)

    def _evict_cost(self, ys):
        return sum((y.size if self._dirty(y) else 0) + REFAULT_WEIGHT * y.size for y in ys)

    def _relocation(self, x, order, need, gone):
        """The scan's victims (gone), or the victims the shortfall needs in
        victim order plus moves that open a contiguous window, whichever
        costs less (evictions: _evict_cost; moves: MOVE_WEIGHT per byte).
        Windows start at a large hole's start or end at its end (the
        RELOC_HOLES largest holes once the shortfall's victims are gone);
        every allocation inside must be a candidate, and all of them must
        fit in holes outside the window. Returns (evicted, [(moved, to)])."""
        capv, fr = [], 0
        for v in order:
            if fr >= need:
                break
            capv.append(v)
            fr += v.size
        skip = {y.id for y in capv}
        movable = {y.id for y in order} - skip
        holes = self._run(skip)
        big = sorted(holes, key=lambda h: (-h[0], h[1]))[:RELOC_HOLES]
        blocks = sorted((y for y in self.a if y.placed and y.id not in skip), key=lambda y: y.start)
        S, best = x.size, None
        for at in sorted({h[1] for h in big} | {h[2] - S for h in big}):
            if at < 0 or at + S > self.t.cap:
                continue
            inside = [y for y in blocks if y.start < at + S and y.start + y.size > at]
            if any(y.id not in movable for y in inside):
                continue
            b = sum(y.size for y in inside)
            if best is not None and b >= best[0]:
                continue
            out = []
            for n, lo, hi in holes:
                for a, e in ((lo, min(hi, at)), (max(lo, at + S), hi)):
                    if e > a:
                        out.append([e - a, a])
            plan = _fit_moves(inside, out)
            if plan is not None:
                best = (b, plan)
        if best is None or self._evict_cost(capv) + MOVE_WEIGHT * best[0] >= self._evict_cost(gone):
            return gone, []
        return capv, best[1]

    def run(self):
        t = self.t
        made = [False] * len(t.sizes)
        for k, (refs, writes, dels) in enumerate(t.steps):
            self.step = k
            for i in refs:  # alloc: placed only where there is room
                if not made[i]:
                    made[i] = True
                    x = self.a[i]
                    if self._place(x) and self.order == "policy" and self.hot_bytes + x.size <= self.budget:
                        self._set_hot(x, True)
                    self.tick += 1
                    x.lru = self.tick
            for i in refs:
                self.a[i].refs += 1
            for i in refs:  # gmc_make_resident
                x = self.a[i]
                if not x.placed:
                    self._place_evict(x)
                if not x.gpu:
                    if x.sysv:
                        self.c["in"] += x.size
                    x.content = x.gpu = True
                self.tick += 1
                x.lru = self.tick
            for i in refs:  # gmc_submit, gmc_evict
                x = self.a[i]
                if i in writes:
                    x.sysv = False
                self.tick += 1
                x.lru = self.tick
                x.refs -= 1
            for i in dels:
                self._unplace(self.a[i])
                self.a[i].dead = True
        self.c["bytes"] = self.c["in"] + self.c["out"]
        return self.c


VARIANTS = (("policy", "policy", True, False), ("policy_cap", "policy", False, False),
            ("belady", "belady", True, False), ("belady_cap", "belady", False, False),
            ("policy_reloc", "policy", True, True), ("lru", "lru", True, False), ("lru_reloc", "lru", True, True))


def _mean(v):
    return round(sum(v) / len(v), 3)


def main(argv):
    rows = json.load(open(argv[0]))
    table = "--table" in argv
    res, fams, match, lru_match = {}, {}, True, True
    for r in rows:
        if not r["group"].startswith("fam_") or "error" in r["library"] or r["opt"]["bytes"] == 0:
            continue
        t = eo.parse(os.path.join(ROOT, r["trace"]))
        got = {name: Replica(t, order, cont, rel).run() for name, order, cont, rel in VARIANTS}
        match &= got["policy"]["bytes"] == r["library"]["bytes"]
        lru_match &= got["lru"]["bytes"] == r["lru"]
        fams.setdefault(r["group"][4:], []).append((r, got))
    res["evict_breakdown_replica_match"] = int(match)
    res["evict_breakdown_lru_match"] = int(lru_match)
    for f, items in sorted(fams.items()):
        pre = f"evict_fam_{f}"
        for name in ("policy_cap", "belady", "belady_cap", "policy_reloc", "lru_reloc"):
            res[f"{pre}_{name}_vs_opt_mean"] = _mean([g[name]["bytes"] / r["opt"]["bytes"] for r, g in items])
        for name in ("policy_reloc", "lru_reloc"):
            # moved bytes at full weight: a move costs the engine what a page transfer costs
            v = [(g[name]["bytes"] + g[name]["moved"]) / r["opt"]["bytes"] for r, g in items]
            res[f"{pre}_{name}_full_vs_opt_mean"] = _mean(v)
            res[f"{pre}_{name}_full_vs_opt_worst"] = round(max(v), 3)
        res[f"{pre}_policy_reloc_vs_opt_worst"] = round(max(g["policy_reloc"]["bytes"] / r["opt"]["bytes"]
                                                            for r, g in items), 3)
        mv = sum(g["policy_reloc"]["moved"] for _, g in items)
        res[f"{pre}_policy_reloc_moved_share"] = round(mv / (mv + sum(g["policy_reloc"]["bytes"] for _, g in items)), 3)
        tot = {k: sum(g["policy"][k] for _, g in items) for k in items[0][1]["policy"]}
        res[f"{pre}_policy_wb_share"] = round(tot["out"] / tot["bytes"], 3)
        res[f"{pre}_policy_dead_wb_share"] = round(tot["dead_out"] / tot["bytes"], 3)
        res[f"{pre}_policy_evicted_frag_share"] = round(tot["evicted_frag"] / tot["evicted"], 3) if tot["evicted"] else 0
        ob = sum(r["opt"]["bytes"] for r, _ in items)
        res[f"{pre}_opt_wb_share"] = round(sum(r["opt"].get("wb_bytes", 0) for r, _ in items) / ob, 3)
    # Relocation over all families (mean of the family means), beside the library's own figure.
    for name in ("policy_reloc", "policy_reloc_full", "lru_reloc", "lru_reloc_full"):
        res[f"evict_oos_{name}_vs_opt_mean"] = _mean([res[f"evict_fam_{f}_{name}_vs_opt_mean"] for f in fams])
    if table:
        w = sys.stderr.write
        w("| family | policy in / wb (MB) | of which dead wb | evicted: needed / beyond (fragmentation) | "
          "optimum in / wb (MB) | policy, capacity only | Belady placed | Belady, capacity only |\n")
        w("|---|---|---|---|---|---|---|---|\n")
        for f, items in sorted(fams.items()):
            p = {k: sum(g["policy"][k] for _, g in items) / 1e6 for k in items[0][1]["policy"]}
            oi = sum(r["opt"].get("in_bytes", 0) for r, _ in items) / 1e6
            ow = sum(r["opt"].get("wb_bytes", 0) for r, _ in items) / 1e6
            pre = f"evict_fam_{f}"
            w(f"| `{f}` | {p['in']:.1f} / {p['out']:.1f} | {p['dead_out']:.1f} | {p['evicted_needed']:.1f} / "
              f"{p['evicted_frag']:.1f} | {oi:.1f} / {ow:.1f} | {res[pre + '_policy_cap_vs_opt_mean']:.3f} | "
              f"{res[pre + '_belady_vs_opt_mean']:.3f} | {res[pre + '_belady_cap_vs_opt_mean']:.3f} |\n")
        w("\n| family | policy | with relocation: paged | paged + moved | moved share | moves | "
          "LRU | LRU with relocation: paged | paged + moved |\n")
        w("|---|---|---|---|---|---|---|---|---|\n")
        for f, items in sorted(fams.items()):
            pre = f"evict_fam_{f}"
            pm = _mean([g["policy"]["bytes"] / r["opt"]["bytes"] for r, g in items])
            lm = _mean([g["lru"]["bytes"] / r["opt"]["bytes"] for r, g in items])
            nm = sum(g["policy_reloc"]["moves"] for _, g in items)
            w(f"| `{f}` | {pm:.3f} | {res[pre + '_policy_reloc_vs_opt_mean']:.3f} | "
              f"{res[pre + '_policy_reloc_full_vs_opt_mean']:.3f} | {res[pre + '_policy_reloc_moved_share']:.3f} | "
              f"{nm} | {lm:.3f} | {res[pre + '_lru_reloc_vs_opt_mean']:.3f} | "
              f"{res[pre + '_lru_reloc_full_vs_opt_mean']:.3f} |\n")
    print(json.dumps(res))


if __name__ == "__main__":
    main(sys.argv[1:])
