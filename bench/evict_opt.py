#!/usr/bin/python3
"""Offline eviction models over gmc trace files (docs/eviction-bench.md).

* `parse(path)`: the bench subset of the trace format (docs/trace-format.md)
  turned into steps: the allocations a `resident` line lists, the ones the
  following `submit` writes, the ones destroyed before the next `resident`.
* `optimum(trace)`: the exact offline optimum of bytes paged (paged in +
  written back) as an integer program solved by SciPy's `milp` (HiGHS), or,
  past a time limit, HiGHS's proven lower bound (its dual bound, at least
  the LP relaxation's), labelled `exact` or `lower_bound`.
* `simulate(trace, 'lru'|'clock')`: plain LRU and CLOCK with the library's
  placement (best fit, the drm_mm-style eviction scan, its window the one
  with the fewest victim bytes) and write-back rule.
* `brute_force(trace)`: exhaustive search of every eviction schedule (tiny
  traces only), the check on the integer program's formulation.

The model of the optimum (assumptions, stated in docs/eviction-bench.md):
capacity only (the allocations resident at a step fit if their sizes add up
to at most the segment: fragmentation is ignored, so the optimum is a lower
bound for any schedule under contiguous placement); an allocation's first
reference fills it (not counted, paid by every schedule) and leaves it
dirty; a page-in costs its size and leaves it clean; an eviction costs its
size when the allocation was written since it was last paged in, nothing
otherwise (the library keeps the system copy); a step's allocations are all
resident together; destroying costs nothing.

Usage: evict_opt.py [--time-limit S] TRACE...  (one JSON line per trace)
"""
import json
import os
import re
import sys
import time

UNIT = 4096  # sizes are whole pages; the program works in pages


class TraceError(Exception):
    pass


class Trace:
    def __init__(self, name):
        self.name = name
        self.cap = None       # bytes of the segment every allocation lives in
        self.seg = None       # that segment's id
        self.sizes = []       # per allocation id, bytes (page-rounded)
        self.prios = []
        self.names = []
        self.steps = []       # [refs: list of ids, writes: set of ids, dels: list of ids]


def _num(s):
    m = re.fullmatch(r"(0x[0-9a-fA-F]+|[0-9]+)(K|M|G|KiB|MiB|GiB)?", s)
    if not m:
        raise TraceError(f"bad number {s!r}")
    v = int(m.group(1), 0)
    mul = {"K": 1 << 10, "KiB": 1 << 10, "M": 1 << 20, "MiB": 1 << 20, "G": 1 << 30, "GiB": 1 << 30}
    return v * mul.get(m.group(2), 1)


PRIOS = {"minimum": 0x28000000, "low": 0x50000000, "normal": 0x78000000, "high": 0xa0000000,
         "maximum": 0xc8000000}


def parse(path, cap=None):
    """The bench subset: device (a strapped sim segment list), client, alloc
    with size/segments/priority, resident, submit blocks (use/fill/copy),
    wait, evict, destroy. Anything else is refused: the models would not
    know what it does to residency."""
    t = Trace(os.path.splitext(os.path.basename(path))[0])
    live = {}           # name -> id
    segs = {}
    in_submit = False
    cur = None
    with open(path) as f:
        lines = f.read().splitlines()
    for ln, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        w = line.split()
        op, args = w[0], w[1:]
        kv = dict(a.split("=", 1) for a in args if "=" in a)
        pos = [a for a in args if "=" not in a]
        try:
            if in_submit:
                if op == "end":
                    in_submit = False
                elif op == "use":
                    if "write" in pos[1:]:
                        cur[1].add(live[pos[0]])
                elif op == "fill":
                    cur[1].add(live[pos[0]])
                elif op == "copy":
                    cur[1].add(live[pos[1]])
                else:
                    raise TraceError(f"'{op}' in a submit block")
                continue
            if op == "device":
                m = re.fullmatch(r"sim:(.*)", args[0])
                if not m:
                    raise TraceError("device: a strapped sim device is expected")
                for opt in m.group(1).split(","):
                    k, _, v = opt.partition("=")
                    if re.fullmatch(r"seg[1-4]", k):
                        segs[int(k[3:])] = _num(v.split("/")[1])
            elif op in ("client", "seed", "wait", "evict"):
                pass  # evict: drops the step's references (the bench's traces evict what they made resident)
            elif op == "alloc":
                name = pos[0]
                if name in live:
                    raise TraceError(f"{name} created twice")
                sset = [int(s) for s in kv.get("segments", "").split(",") if s]
                if len(sset) != 1:
                    raise TraceError("alloc: exactly one segment (segments=N) is expected")
                if t.seg is None:
                    t.seg = sset[0]
                elif t.seg != sset[0]:
                    raise TraceError("every allocation must live in the same segment")
                size = -(-_num(kv["size"]) // UNIT) * UNIT
                p = kv.get("priority", "normal")
                live[name] = len(t.sizes)
                t.sizes.append(size)
                t.prios.append(PRIOS[p] if p in PRIOS else _num(p))
                t.names.append(name)
            elif op == "resident":
                cur = [[live[n] for n in pos], set(), []]
                if len(set(cur[0])) != len(cur[0]):
                    raise TraceError("resident: a name listed twice")
                t.steps.append(cur)
            elif op == "submit":
                if cur is None:
                    raise TraceError("submit before any resident")
                in_submit = True
            elif op == "destroy":
                i = live.pop(pos[0])
                if cur is None:
                    raise TraceError("destroy before any resident")
                cur[2].append(i)
            else:
                raise TraceError(f"'{op}' is not in the bench subset")
        except (KeyError, IndexError, ValueError) as e:
            raise TraceError(f"{path}:{ln}: {e!r}") from None
        except TraceError as e:
            raise TraceError(f"{path}:{ln}: {e}") from None
    if cap is not None:
        t.cap = cap
    elif t.seg in segs:
        t.cap = segs[t.seg]
    else:
        raise TraceError(f"{path}: no strapped size for segment {t.seg} (give cap=)")
    for k, (refs, _, _) in enumerate(t.steps):
        if sum(t.sizes[i] for i in refs) > t.cap:
            raise TraceError(f"{path}: step {k}: its allocations do not fit in the segment")
    return t


def uses_of(t):
    """Per allocation: the steps that reference it, and the step after which
    it is destroyed (len(steps)-1 when it lives to the end)."""
    uses = [[] for _ in t.sizes]
    end = [len(t.steps) - 1] * len(t.sizes)
    for k, (refs, _, dels) in enumerate(t.steps):
        for i in refs:
            uses[i].append(k)
        for i in dels:
            end[i] = k
    return uses, end


# ------------------------------------------------------------- the optimum

def build_program(t):
    """Variables: e[g] = 1 when the allocation leaves VRAM in gap g (between
    two uses, or after its last use until it is destroyed), wb[m] = 1 when
    write episode m (a use that writes, up to the next one) is written back.
    Leaving at the start of a gap is as good as any time in it (the cost is
    the same, the room only larger), so one binary per gap is exact."""
    import numpy as np
    from scipy.sparse import coo_matrix
    uses, end = uses_of(t)
    nsteps = len(t.steps)
    cost = []            # objective coefficient per variable (pages)
    rows, cols, vals = [], [], []   # capacity rows (one per step) then episode rows
    cap_rhs = [t.cap // UNIT - sum(t.sizes[i] for i in refs) // UNIT for refs, _, _ in t.steps]
    ep_rows = 0
    ep_r, ep_c, ep_v = [], [], []
    for i, us in enumerate(uses):
        if not us:
            continue
        s = t.sizes[i] // UNIT
        gaps = []  # per use j: variable of gap j or None (no step inside)
        for j, u in enumerate(us):
            lo, hi = u + 1, (us[j + 1] - 1 if j + 1 < len(us) else end[i])
            if hi < lo:
                gaps.append(None)
                continue
            v = len(cost)
            cost.append(s if j + 1 < len(us) else 0)  # reload at the next use
            for k in range(lo, hi + 1):
                cap_rhs[k] -= s          # kept: occupies s at every step of the gap
                rows.append(k)
                cols.append(v)
                vals.append(-s)          # ... unless it left: -s*e
            gaps.append(v)
        # write episodes: use 0 (the first touch) and every use that writes
        wr = [j for j, u in enumerate(us) if j == 0 or i in t.steps[u][1]]
        for a, m in enumerate(wr):
            last = wr[a + 1] - 1 if a + 1 < len(wr) else len(us) - 1
            ev = [gaps[j] for j in range(m, last + 1) if gaps[j] is not None]
            if not ev:
                continue
            w = len(cost)
            cost.append(s)
            for g in ev:                  # wb >= e[g]:  e[g] - wb <= 0
                ep_r += [ep_rows, ep_rows]
                ep_c += [g, w]
                ep_v += [1, -1]
                ep_rows += 1
    n = len(cost)
    A = coo_matrix((vals + ep_v, (rows + [nsteps + r for r in ep_r], cols + ep_c)),
                   shape=(nsteps + ep_rows, max(n, 1))).tocsr()
    ub = np.array(cap_rhs + [0] * ep_rows, dtype=float)
    return np.array(cost if cost else [0], dtype=float), A, ub, n


def optimum(t, time_limit=60.0):
    """{'bytes', 'kind': 'exact'|'lower_bound', 'lp_bytes', 'seconds'}."""
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    t0 = time.monotonic()
    c, A, ub, n = build_program(t)
    cons = LinearConstraint(A, -np.inf, ub)
    # The write-back variables: the only ones with a -1 in an episode row.
    Ac = A.tocoo()
    wb = np.zeros(len(c), dtype=bool)
    wb[Ac.col[(Ac.row >= len(t.steps)) & (Ac.data < 0)]] = True
    if n == 0:
        return {"bytes": 0, "kind": "exact", "lp_bytes": 0, "seconds": 0.0, "in_bytes": 0, "wb_bytes": 0}
    lp = milp(c, constraints=cons, bounds=Bounds(0, 1), integrality=np.zeros(len(c)))
    if lp.status != 0:
        raise TraceError(f"{t.name}: LP relaxation: {lp.message}")
    lp_pages = lp.fun
    r = milp(c, constraints=cons, bounds=Bounds(0, 1), integrality=np.ones(len(c)),
             options={"time_limit": time_limit, "mip_rel_gap": 0.0})
    if r.status == 0:
        # Proven optimal (gap 0); the objective is a whole number of pages.
        # Split into bytes paged in and written back by the schedule found.
        x = np.round(r.x)
        wbp = int(round(float(c[wb] @ x[wb])))
        return {"bytes": int(round(r.fun)) * UNIT, "kind": "exact", "lp_bytes": int(np.ceil(lp_pages - 1e-6)) * UNIT,
                "seconds": round(time.monotonic() - t0, 2), "in_bytes": (int(round(r.fun)) - wbp) * UNIT,
                "wb_bytes": wbp * UNIT}
    bound = lp_pages
    if getattr(r, "mip_dual_bound", None) is not None and np.isfinite(r.mip_dual_bound):
        bound = max(bound, r.mip_dual_bound)
    return {"bytes": int(np.ceil(bound - 1e-6)) * UNIT, "kind": "lower_bound",
            "lp_bytes": int(np.ceil(lp_pages - 1e-6)) * UNIT, "seconds": round(time.monotonic() - t0, 2)}


def schedule_cost(t, evicted):
    """Bytes paged by a schedule given as the set of (allocation, use index)
    gaps it leaves VRAM in, simulated step by step with the write-back rule
    (used by the tests to check the program's objective independently)."""
    uses, end = uses_of(t)
    total = 0
    for i, us in enumerate(uses):
        dirty = False
        for j, u in enumerate(us):
            if j == 0 or i in t.steps[u][1]:
                dirty = True
            if (i, j) in evicted:
                total += t.sizes[i] * (dirty + (j + 1 < len(us)))
                dirty = False
    return total


# ------------------------------------------------------------- brute force

def brute_force(t):
    """Minimum bytes paged over every schedule: at every step, any set of
    unreferenced resident allocations may leave (at any step, not only at
    the start of a gap), then the step's allocations are made resident.
    Exponential: for traces of a handful of allocations."""
    from functools import lru_cache
    nsteps = len(t.steps)

    @lru_cache(maxsize=None)
    def go(k, resident, dirty, content):
        # resident, dirty, content: bitmasks of allocation ids
        if k == nsteps:
            return 0
        refs, writes, dels = t.steps[k]
        rmask = 0
        for i in refs:
            rmask |= 1 << i
        others = [i for i in range(len(t.sizes)) if resident >> i & 1 and not rmask >> i & 1]
        best = None
        for sub in range(1 << len(others)):
            res, dt, c = resident, dirty, 0
            for b, i in enumerate(others):
                if sub >> b & 1:
                    res &= ~(1 << i)
                    if dt >> i & 1:
                        c += t.sizes[i]
                        dt &= ~(1 << i)
            con = content
            for i in refs:
                if not res >> i & 1:
                    if con >> i & 1:
                        c += t.sizes[i]          # page-in: clean
                    else:
                        con |= 1 << i            # first touch: a fill, dirty
                        dt |= 1 << i
                    res |= 1 << i
            if sum(t.sizes[i] for i in range(len(t.sizes)) if res >> i & 1) > t.cap:
                continue
            for i in writes:
                dt |= 1 << i
            for i in dels:
                res &= ~(1 << i)
                dt &= ~(1 << i)
                con &= ~(1 << i)
            v = c + go(k + 1, res, dt, con)
            if best is None or v < best:
                best = v
        return best if best is not None else float("inf")

    return go(0, 0, 0, 0)


# ------------------------------------------------ LRU and CLOCK, placed

class _Item:
    __slots__ = ("placed", "start", "gpu", "content", "written", "in_step", "deleted", "last", "ref")

    def __init__(self):
        self.placed = self.gpu = self.content = self.written = self.in_step = self.deleted = False
        self.start = 0
        self.last = 0
        self.ref = False


class _Sim:
    """Best fit (GMC_RANGE_BEST, the library's default, with page
    alignment: every size is a whole number of pages), the library's
    eviction scan, and its write-back rule (as bench/bench_evict.c's
    models; its LRU model is the cross-check, evict_lru_model_match)."""

    def __init__(self, t, pol):
        self.t, self.pol = t, pol
        self.it = [_Item() for _ in t.sizes]
        self.tick = 0
        self.inb = self.outb = self.clean = 0
        self.ring, self.hand = [], 0   # CLOCK: resident allocations in ring order

    def _blocks(self, skip=()):
        return sorted((x.start, self.t.sizes[i]) for i, x in enumerate(self.it)
                      if x.placed and i not in skip)

    def _hole(self, size, skip=()):
        """Best fit: the smallest hole that fits, the lowest of equal ones,
        at its bottom."""
        pos, best = 0, None
        for s, n in self._blocks(skip) + [(self.t.cap, 0)]:
            if s - pos >= size and (best is None or s - pos < best[0]):
                best = (s - pos, pos)
            pos = s + n
        return best[1] if best is not None else None

    def _place(self, i):
        at = self._hole(self.t.sizes[i])
        if at is None:
            return False
        x = self.it[i]
        x.placed, x.start, x.gpu = True, at, False
        if self.pol == "clock":
            self.ring.insert(self.hand, i)   # just behind the hand: swept last
            self.hand += 1
        return True

    def _unplace(self, i):
        x = self.it[i]
        if not x.placed:
            return
        x.placed = False
        if self.pol == "clock":
            p = self.ring.index(i)
            del self.ring[p]
            if p < self.hand:
                self.hand -= 1
            if self.hand >= len(self.ring):
                self.hand = 0

    def _evict(self, i):
        x = self.it[i]
        if x.gpu and x.written:
            self.outb += self.t.sizes[i]
            x.written = False
        elif x.gpu:
            self.clean += self.t.sizes[i]
        x.gpu = False
        self._unplace(i)

    def _order(self):
        """Victims in policy order, and for CLOCK the hand's sweep: the
        allocations whose reference bit is clear from the hand on, then (a
        second pass, their bits cleared) the others."""
        cand = [i for i, x in enumerate(self.it) if x.placed and not x.deleted and not x.in_step]
        if self.pol == "lru":
            return sorted(cand, key=lambda i: (self.it[i].last, i)), None
        n = len(self.ring)
        sweep = [self.ring[(self.hand + k) % n] for k in range(n)]
        sweep = [i for i in sweep if not self.it[i].in_step]
        first = [i for i in sweep if not self.it[i].ref]
        second = [i for i in sweep if self.it[i].ref]
        return first + second, (sweep, len(first))

    def _least_evicted(self, victims, chosen, lo, size):
        """As the library's scan (gmc_resid.c, least_evicted): in the free
        run starting at lo (holes and the scan's victims), the window of
        `size` bytes whose victims add up to the fewest bytes, the lowest of
        equal ones; tried at the run's ends and at each victim's ends."""
        hi = min([s for s, _ in self._blocks(chosen) if s >= lo] + [self.t.cap])
        run = [v for v in victims if self.it[v].placed and lo <= self.it[v].start < hi]

        def cost(at):
            return sum(self.t.sizes[v] for v in run
                       if self.it[v].start < at + size and self.it[v].start + self.t.sizes[v] > at)
        best, best_b = lo, cost(lo)
        for v in run:
            s = self.it[v].start
            for at in (s + self.t.sizes[v], s - size if s >= size else lo, hi - size):
                if at < lo or at + size > hi:
                    continue
                b = cost(at)
                if b < best_b or (b == best_b and at < best):
                    best, best_b = at, b
        return best

    def _place_evict(self, i):
        if self._place(i):
            return
        size = self.t.sizes[i]
        order, clk = self._order()
        chosen = set()
        for k, v in enumerate(order):
            chosen.add(v)
            ws = self._hole(size, chosen)
            if ws is None:
                continue
            ws = self._least_evicted(order[:k + 1], chosen, ws, size)
            if clk is not None:
                # the hand swept up to v: reference bits passed over are cleared
                sweep, nfirst = clk
                upto = sweep.index(v) if k < nfirst else len(sweep) - 1
                for j in (sweep[:upto + 1] if k < nfirst else sweep):
                    self.it[j].ref = False
                p = self.ring.index(v)
                self.hand = (p + 1) % len(self.ring)
            for v2 in order[:k + 1]:
                x = self.it[v2]
                if x.placed and x.start < ws + size and x.start + self.t.sizes[v2] > ws:
                    self._evict(v2)
            if not self._place(i):
                raise TraceError("scan placement")
            return
        raise TraceError(f"{self.t.name}: {self.pol}: no room even after evicting every candidate")

    def run(self):
        t = self.t
        created = [False] * len(t.sizes)
        for refs, writes, dels in t.steps:
            for i in refs:
                self.it[i].in_step = True
            for i in refs:             # gmc_alloc_create: placed when there is room
                if not created[i]:
                    created[i] = True
                    self._place(i)
                    self.tick += 1
                    self.it[i].last = self.tick
            for i in refs:             # gmc_make_resident
                x = self.it[i]
                if not x.placed:
                    self._place_evict(i)
                if not x.gpu:
                    if x.content:
                        self.inb += t.sizes[i]
                        x.written = False
                    else:
                        x.content = x.written = True
                    x.gpu = True
                self.tick += 1
                x.last = self.tick
                x.ref = True
            for i in refs:             # gmc_submit, gmc_evict
                x = self.it[i]
                if i in writes:
                    x.written = True
                self.tick += 1
                x.last = self.tick
                x.in_step = False
            for i in dels:
                self._unplace(i)
                self.it[i].deleted = True
                self.it[i].gpu = False
        return {"bytes": self.inb + self.outb, "in": self.inb, "out": self.outb, "clean": self.clean}


def simulate(t, pol):
    return _Sim(t, pol).run()


def main(argv):
    tl = 60.0
    if len(argv) > 1 and argv[0] == "--time-limit":
        tl = float(argv[1])
        argv = argv[2:]
    for path in argv:
        t = parse(path)
        o = optimum(t, tl)
        o.update({"trace": path, "lru_bytes": simulate(t, "lru")["bytes"],
                  "clock_bytes": simulate(t, "clock")["bytes"]})
        print(json.dumps(o), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
