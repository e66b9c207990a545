#!/usr/bin/env python3
"""The layers of gmc's C code, written once, and their checker.

docs/architecture.md draws the layers. This table is the one place that
says which folder belongs to which layer and which layers each may
include from; the Makefile asks it for each layer's include paths
(`flags LAYER`), and `make lint` runs `check`, which fails on:

  - an include that goes up or sideways: a quoted #include of a header
    that belongs to a layer the including file may not use;
  - a header included from tests/ by anything but a test;
  - a circle of includes between files (a .c counts as one node with the
    header of the same name).

`calls LIB.a` (make test, on libgmc.a) fails on a circle of calls between
the library's files, read from the symbol tables (nm).

Usage:
  check_layers.py check [ROOT]     exit 1 and one line per finding
  check_layers.py flags LAYER      the -I options LAYER compiles with
  check_layers.py flags FILE       the same for a file of FILE_EXTRA
  check_layers.py calls LIB.a      exit 1 on a circle of calls between its members
"""
import os
import re
import subprocess
import sys

# name: (folders, layers its sources may include from, layers its headers
# may include from). Bottom up. A layer may always include its own headers.
LAYERS = {
    # The public API (generated gmc_regs.h, gmc_status.h and gmc_flags.h, gmc_alloc.h, gmc.h).
    "include": (["include"], [], []),
    # The Verilated model's C API. gmc_sim.cpp includes Verilator's
    # generated headers, which are no layer's.
    "sim": (["sim"], ["include"], ["include"]),
    # Hardware interface, pure C: packet encoders, the ring driver on the model.
    "hw": (["hw"], ["include", "sim"], ["include"]),
    # Device-free helpers every host layer may use.
    "common": (["host/common"], ["include"], ["include"]),
    # Backends and device strings.
    "backend": (["host/backend"], ["include", "sim", "common"], ["include", "common"]),
    # The driver for gmc hardware.
    "kmd": (["host/kmd"], ["include", "hw", "common", "backend"], ["include", "common", "backend"]),
    # The device-independent memory manager and the public API's entry points.
    "vidmm": (["host/vidmm"], ["include", "common", "backend", "kmd"],
              ["include", "common", "backend", "kmd"]),
    # Users of the public API.
    "cli": (["cli"], ["include"], ["include"]),
    "examples": (["examples"], ["include", "sim"], ["include", "sim"]),
    "bench": (["bench"], ["include", "sim", "hw"], ["include", "sim", "hw"]),
    # Tests may use every layer; nothing else may use tests/.
    "tests": (["tests"], ["include", "sim", "hw", "common", "backend", "kmd", "vidmm", "cli"],
              ["include", "sim", "hw", "common", "backend", "kmd", "vidmm", "cli"]),
}

# Benchmarks of library internals (the range allocator, the paging
# counters behind the eviction figures) see the host layers too.
FILE_EXTRA = {
    # The ring driver runs on the model; the packet encoders (gmc_pkt.h,
    # all the driver uses) do not, so the driver's paths hold no sim/.
    "hw/gmc_dma_pkt.h": ["sim"],
    # The release model's training program (docs/sim.md, "Profile-guided
    # build") drives the model through the ring driver: a program on the
    # model, built with it, not part of its C API.
    "sim/gmc_sim_train.c": ["hw"],
    "bench/bench_alloc.c": ["common"],
    "bench/bench_api.c": ["common", "backend", "kmd", "vidmm"],
    "bench/bench_evict.c": ["common", "backend", "kmd", "vidmm"],
}

# Where a layer's shared headers are, when not its whole folder.
INCLUDE_DIRS = {"tests": ["tests/common"]}

SOURCE_EXT = (".c", ".h", ".cpp")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    for name, (dirs, _, _) in LAYERS.items():
        for d in dirs:
            if path == d or path.startswith(d + "/"):
                return name
    return None


def flags(what):
    """-I options for a layer, or for one file (its layer plus FILE_EXTRA):
    the layer, the layers its sources use, and whatever those layers'
    headers use in turn (they are included transitively)."""
    layer = what if what in LAYERS else layer_of(what)
    seen, order = set(), []

    def add(name, via_header):
        if name in seen:
            return
        seen.add(name)
        order.append(name)
        for sub in LAYERS[name][2]:
            add(sub, True)

    add(layer, False)
    for used in LAYERS[layer][1] + FILE_EXTRA.get(what, []):
        add(used, True)
    dirs = []
    for name in order:
        dirs += INCLUDE_DIRS.get(name, LAYERS[name][0])
    # include/ first, then bottom-up table order, own folder last but one.
    rank = {n: i for i, n in enumerate(LAYERS)}
    dirs = sorted(set(dirs), key=lambda d: (rank[layer_of(d)], d))
    return " ".join("-I" + d for d in dirs)


def sources(root):
    for name, (dirs, _, _) in LAYERS.items():
        for d in dirs:
            top = os.path.join(root, d)
            for dirpath, dirnames, filenames in os.walk(top):
                dirnames.sort()
                for f in sorted(filenames):
                    if f.endswith(SOURCE_EXT):
                        yield os.path.relpath(os.path.join(dirpath, f), root)


def check(root):
    files = list(sources(root))
    by_name = {}
    for f in files:
        by_name.setdefault(os.path.basename(f), []).append(f)
    problems = []
    for name, paths in sorted(by_name.items()):
        if name.endswith(".h") and len(paths) > 1:
            problems.append(f"{paths[1]}: header name {name} also used by {paths[0]} "
                            "(headers are included by bare name)")
    graph = {}
    for f in files:
        layer = layer_of(f)
        allowed = set(LAYERS[layer][2 if f.endswith(".h") else 1]) | {layer}
        allowed |= set(FILE_EXTRA.get(f, []))
        node = node_of(f)
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                target = os.path.basename(m.group(1))
                owners = by_name.get(target)
                if not owners:
                    continue  # generated by Verilator, or a system header
                # A file's own folder wins (tests/ keeps private helpers).
                same = [o for o in owners if os.path.dirname(o) == os.path.dirname(f)]
                owner = (same or owners)[0]
                to = layer_of(owner)
                if to not in allowed:
                    kind = "a test header" if to == "tests" else f"layer {to}"
                    problems.append(f"{f}:{lineno}: includes {m.group(1)} ({owner}), {kind}; "
                                    f"layer {layer} may use only {', '.join(sorted(allowed))}")
                dst = node_of(owner)
                if dst != node:
                    graph.setdefault(node, set()).add(dst)
    for cycle in cycles(graph):
        problems.append("include circle: " + " -> ".join(cycle + [cycle[0]]))
    return problems


def node_of(path):
    """A .c and the header of the same name are one node."""
    base, ext = os.path.splitext(path)
    return base if ext in (".c", ".h", ".cpp") else path


def cycles(graph):
    """One representative circle per strongly connected component (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(path_in(graph, sorted(comp)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def path_in(graph, comp):
    """A circle through comp[0] staying inside the component (BFS back to it)."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ())):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path))
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


# A generated table and its walker call each other by design: the table
# (gmc_rules_gen.c) names the predicates of gmc_rules.c, which walks it.
CALL_PAIRS_ALLOWED = {frozenset({"gmc_rules", "gmc_rules_gen"})}


def call_graph(archive):
    """Which member of a static library calls which (nm: U against T/D/R/B)."""
    p = subprocess.run(["nm", archive], capture_output=True, text=True)
    if p.returncode != 0:
        raise OSError(f"nm {archive}: {p.stderr.strip() or 'failed'}")
    out = p.stdout
    defs, undef, member = {}, {}, None
    for line in out.splitlines():
        if line.endswith(".o:"):
            member = line[:-3]
            undef.setdefault(member, set())
            continue
        parts = line.split()
        if member is None or not parts:
            continue
        if len(parts) == 3 and parts[1] in "TDRB":
            defs[parts[2]] = member
        elif len(parts) == 2 and parts[0] == "U":
            undef[member].add(parts[1])
    return {m: {defs[u] for u in us if u in defs and defs[u] != m} for m, us in undef.items()}


def check_calls(archive):
    graph = call_graph(archive)
    for a, outs in graph.items():
        for b in list(outs):
            if frozenset({a, b}) in CALL_PAIRS_ALLOWED:
                outs.discard(b)
    return ["call circle: " + " -> ".join(c + [c[0]]) for c in cycles(graph)]


def main(argv):
    if len(argv) == 3 and argv[1] == "calls":
        try:
            problems = check_calls(argv[2])
        except OSError as e:
            print(f"check_layers: {e}", file=sys.stderr)
            return 1
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            return 1
        print(f"check_layers: no circle of calls between the files of {argv[2]}")
        return 0
    if len(argv) >= 2 and argv[1] == "check" and len(argv) <= 3:
        root = argv[2] if len(argv) == 3 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        problems = check(root)
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            print(f"check_layers: {len(problems)} problem(s)", file=sys.stderr)
            return 1
        print("check_layers: includes go only downward, no circles")
        return 0
    if len(argv) == 3 and argv[1] == "flags" and (argv[2] in LAYERS or argv[2] in FILE_EXTRA):
        print(flags(argv[2]))
        return 0
    print(__doc__.split("Usage:")[1].rstrip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
