"""The one reader of spec/*.toml: every spec file parsed (tomllib) and
checked here, once, for every generator (tools/gen.py and the renderers
it runs: tools/gen_spec.py, tools/gen_host.py, tools/gen_bridge.py).

load(root) returns every spec as plain data:
  "gmc"      spec/gmc.toml: registers, layouts, enums, gmc_top's defaults
  "bridge"   spec/bridge.toml: the UART bridge protocol
  "general"  spec/status.toml: the general status codes
  "rules"    spec/rules.toml (seeds, rules, unenforced statements), with
             "flags" (spec/flags.toml, the flag words and their WDDM names)
             and "sim_status" (spec/sim_status.toml)
A spec that breaks a rule raises SpecError naming the problem.

Only the Python standard library is used (tomllib, Python >= 3.11).
"""
import os
import re
import tomllib


class SpecError(Exception):
    pass


def read(path):
    """One spec file as parsed TOML (tomllib.TOMLDecodeError when it is not)."""
    with open(path, "rb") as f:
        return tomllib.load(f)


# ------------------------------------------------------------ spec/gmc.toml

ACCESS = ("ro", "rw", "wo")


def field_mask(f):
    return ((1 << f["width"]) - 1) << f["lsb"]


def reg_fields(spec, r):
    """The fields of a register: its own, its layout's, or one VALUE field."""
    if "layout" in r:
        for lay in spec["layout"]:
            if lay["name"] == r["layout"]:
                return lay["fields"]
        raise SpecError(f"register {r['name']}: unknown layout {r['layout']}")
    return r.get("fields", [{"name": "VALUE", "lsb": 0, "width": 32, "desc": ""}])


def check_fields(owner, fields, width):
    used = 0
    names = set()
    for f in fields:
        if f["name"] in names:
            raise SpecError(f"{owner}: field {f['name']} twice")
        names.add(f["name"])
        if f["width"] < 1 or f["lsb"] < 0 or f["lsb"] + f["width"] > width:
            raise SpecError(f"{owner}: field {f['name']} outside {width} bits")
        m = field_mask(f)
        if used & m:
            raise SpecError(f"{owner}: field {f['name']} overlaps another")
        used |= m
    return used


def validate(spec):
    names = set()
    for lay in spec.get("layout", []):
        check_fields("layout " + lay["name"], lay["fields"], lay["width"])
    for en in spec.get("enum", []):
        vals = [v["value"] for v in en["values"]]
        if len(set(vals)) != len(vals):
            raise SpecError(f"enum {en['name']}: duplicate value")
        if any(not 0 <= v < 16 for v in vals):
            raise SpecError(f"enum {en['name']}: a value outside 0..15 (enums are 4-bit localparams)")
    taken = {}
    for r in spec["register"]:
        n = r["name"]
        if n in names:
            raise SpecError(f"register {n} twice")
        names.add(n)
        if r["access"] not in ACCESS:
            raise SpecError(f"register {n}: access {r['access']}")
        if r["offset"] % 4:
            raise SpecError(f"register {n}: offset not 4-byte aligned")
        used = check_fields("register " + n, reg_fields(spec, r), 32)
        reset = r["reset"]
        if reset != "param":
            if not isinstance(reset, int) or reset & ~used:
                raise SpecError(f"register {n}: reset value sets reserved bits")
        count = r.get("count", 1)
        stride = r.get("stride", 4)
        if count > 1 and stride % 4:
            raise SpecError(f"register {n}: stride not 4-byte aligned")
        for i in range(count):
            off = r["offset"] + i * stride
            if off in taken:
                raise SpecError(f"register {n}[{i}] at {off:#x} overlaps {taken[off]}")
            if off >= 0x10000:
                raise SpecError(f"register {n}[{i}] beyond the 64 KiB register space")
            taken[off] = n
    top_defaults(spec)
    return spec


def top_defaults(spec):
    """[top_defaults]: (name, value, bits, desc) of every gmc_top parameter
    default; flag lists resolved through the SEGFLAGS layout."""
    segflags = {f["name"]: f for lay in spec.get("layout", []) if lay["name"] == "SEGFLAGS"
                for f in lay["fields"]}
    out, names = [], set()
    for d in spec.get("top_defaults", {}).get("params", []):
        n = d.get("name")
        owner = f"top_defaults {n!r}"
        if set(d) - {"name", "value", "bits", "desc"} or not {"name", "value", "desc"} <= set(d):
            raise SpecError(f"{owner}: fields are name, value, bits, desc")
        if not isinstance(n, str) or not n.replace("_", "").isalnum() or not n.isupper() or n in names:
            raise SpecError(f"{owner}: name must be a new [A-Z0-9_]* name")
        names.add(n)
        v = d["value"]
        if isinstance(v, list):
            flags = v
            v = 0
            for f in flags:
                if f not in segflags:
                    raise SpecError(f"{owner}: {f!r} is not a SEGFLAGS field")
                v |= field_mask(segflags[f])
        bits = d.get("bits", 32)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < (1 << min(bits, 32)) or \
                ("bits" not in d and v > 0x7FFFFFFF):
            raise SpecError(f"{owner}: value {v!r} does not fit {'an integer' if 'bits' not in d else f'{bits} bits'}")
        out.append({"name": n, "value": v, "bits": d.get("bits"), "desc": d["desc"]})
    return out


def load_gmc(path):
    """spec/gmc.toml: the register map, checked."""
    return validate(read(path))


# --------------------------------------------------------- spec/bridge.toml

def load_bridge(path):
    """spec/bridge.toml: the UART bridge protocol."""
    spec = read(path)
    names, codes = set(), set()
    for op in spec["op"]:
        if op["name"] in names or op["code"] in codes:
            raise SpecError(f"op {op['name']}: name or code used twice")
        names.add(op["name"])
        codes.add(op["code"])
        if not 0 <= op["len"] <= spec["max_len"]:
            raise SpecError(f"op {op['name']}: len {op['len']} outside 0..{spec['max_len']}")
        if op["dir"] not in ("down", "up"):
            raise SpecError(f"op {op['name']}: dir must be down or up")
        if (op["dir"] == "up") != bool(op["code"] & 0x80):
            raise SpecError(f"op {op['name']}: board-to-host opcodes have bit 7 set, others not")
    for e in spec["err"]:
        if not 1 <= e["code"] <= 15:
            raise SpecError(f"err {e['name']}: code must be 1..15 (4 bits in the RTL)")
    for s in spec["status"]:
        if not 0 <= s["bit"] <= 7:
            raise SpecError(f"status {s['name']}: bit must be 0..7")
    for c in spec.get("const", []):
        if not 0 <= c["value"] <= 255:
            raise SpecError(f"const {c['name']}: value must be a byte")
    return spec


# ------------------------- spec/status.toml, rules.toml, sim_status.toml, flags.toml

SCOPES = {"alloc": "GMC_RULE_SCOPE_ALLOC", "segment": "GMC_RULE_SCOPE_SEGMENT",
          "segments": "GMC_RULE_SCOPE_SEGMENTS"}
KINDS = {"implies": "GMC_RULE_IMPLIES", "excludes": "GMC_RULE_EXCLUDES",
         "requires_one_of": "GMC_RULE_REQUIRES_ONE_OF", "only": "GMC_RULE_ONLY",
         "custom": "GMC_RULE_CUSTOM"}
# word -> (index in gmc_rule.when/then, macro pattern, reserved-mask macro)
WORDS = {
    "flags": (0, "GMC_ALLOC_{}", "GMC_ALLOC_RESERVED_MASK"),
    "kmt": (1, "GMC_KMT_{}", "GMC_KMT_RESERVED_MASK"),
    "info2": (2, "GMC_INFO2_{}", "GMC_INFO2_RESERVED_MASK"),
    "seg": (3, "GMC_SEGFLAGS_{}_MASK", "GMC_SEG_RESERVED_MASK"),
}
WORD_ENUM = ("GMC_RULE_W_ALLOC", "GMC_RULE_W_KMT", "GMC_RULE_W_INFO2", "GMC_RULE_W_SEG")
RULE_KEYS = {"id", "seed", "also", "derived", "scope", "statement", "status", "code",
             "kind", "when", "then", "check", "note", "pass", "fail"}
CASE_KEYS = {"size", "alignment", "pitch", "preferred", "supported", "eviction", "banks",
             "priority", "flags", "kmt", "info2", "vidpn", "umd_priority", "sysmem",
             "section", "layout", "patch", "nsegs"}
SEG_KEYS = {"id", "base", "size", "flags", "cpu_offset", "banks", "sysmem_end"}
MAX_PREFERRED = 5
MAX_BANKS = 4
CASE_MAX_SEGS = 8
CASE_BUF_SIZE = 0x40000
U32 = (1 << 32) - 1
U64 = (1 << 64) - 1
IDENT = re.compile(r"^[A-Z][A-Z0-9_]*$")
CHECK = re.compile(r"^[a-z][a-z0-9_]*$")


def one_line(owner, what, s):
    if not isinstance(s, str) or not s.strip():
        raise SpecError(f"{owner}: {what} must be a non-empty string")
    if "\n" in s or not s.isascii() or not s.isprintable():
        raise SpecError(f"{owner}: {what} must be one line of printable ASCII")
    return s


def integer(owner, what, v, hi):
    if isinstance(v, str):
        try:
            v = int(v, 0)
        except ValueError:
            raise SpecError(f"{owner}: {what} {v!r} is not an integer")
    if isinstance(v, bool) or not isinstance(v, int) or v < 0 or v > hi:
        raise SpecError(f"{owner}: {what} {v!r} out of range 0..{hi:#x}")
    return v


def flag_term(owner, word, name, macros):
    """C expression for one flag of a word: a macro name or a raw integer."""
    if isinstance(name, int) and not isinstance(name, bool):
        return f"0x{integer(owner, word + ' bits', name, U32):X}u"
    if not isinstance(name, str) or not IDENT.match(name):
        raise SpecError(f"{owner}: bad {word} flag {name!r}")
    _, pattern, reserved = WORDS[word]
    macro = reserved if name == "RESERVED" else pattern.format(name)
    if macro not in macros:
        raise SpecError(f"{owner}: {word}.{name} has no macro {macro}")
    return macro


def qualified_terms(owner, names, macros):
    """when/then lists: 'word.NAME' -> {word: [macro, ...]}."""
    if not isinstance(names, list):
        raise SpecError(f"{owner}: flag list expected")
    out = {}
    for q in names:
        if not isinstance(q, str) or q.count(".") != 1:
            raise SpecError(f"{owner}: flag {q!r} must be word.NAME")
        word, name = q.split(".")
        if word not in WORDS:
            raise SpecError(f"{owner}: unknown flag word {word!r}")
        term = flag_term(owner, word, name, macros)
        if term in out.get(word, []):
            raise SpecError(f"{owner}: {q} twice")
        out.setdefault(word, []).append(term)
    return out


def segment(owner, s, macros):
    if not isinstance(s, dict) or set(s) - SEG_KEYS:
        raise SpecError(f"{owner}: segment fields are {sorted(SEG_KEYS)}")
    return {
        "id": integer(owner, "segment id", s.get("id", 0), U32),
        "base": integer(owner, "segment base", s.get("base", 0), U64),
        "size": integer(owner, "segment size", s.get("size", 0), U64),
        "flags": [flag_term(owner, "seg", n, macros) for n in s.get("flags", [])],
        "cpu_offset": integer(owner, "segment cpu_offset", s.get("cpu_offset", 0), U64),
        "banks": integer(owner, "segment banks", s.get("banks", 0), U32),
        "sysmem_end": integer(owner, "segment sysmem_end", s.get("sysmem_end", 0), U64),
    }


def apply_patch(owner, segs, patch, macros):
    if not isinstance(patch, list):
        raise SpecError(f"{owner}: patch must be a list")
    segs = [dict(s) for s in segs]
    for p in patch:
        if not isinstance(p, dict) or "seg" not in p:
            raise SpecError(f"{owner}: each patch names a segment position: seg = N")
        pos = p["seg"]
        if not isinstance(pos, int) or not 1 <= pos <= len(segs):
            raise SpecError(f"{owner}: patch seg {pos!r} outside the layout")
        fields = {k: v for k, v in p.items() if k != "seg"}
        fresh = segment(owner, fields, macros)
        for k in fields:
            segs[pos - 1][k] = fresh[k]
    return segs


def layouts(spec, macros):
    raw = spec.get("layout", {})
    if "default" not in raw:
        raise SpecError("rules.toml: [layout.default] is required")
    done = {}

    def build(name, stack):
        if name in done:
            return done[name]
        if name not in raw:
            raise SpecError(f"layout {name!r} is not defined")
        if name in stack:
            raise SpecError(f"layout {name!r} derives from itself")
        lay = raw[name]
        owner = f"layout {name}"
        if "segments" in lay:
            if "from" in lay:
                raise SpecError(f"{owner}: segments and from are exclusive")
            segs = [segment(owner, s, macros) for s in lay["segments"]]
        elif "from" in lay:
            segs = build(lay["from"], stack + [name])
        else:
            raise SpecError(f"{owner}: needs segments or from")
        segs = apply_patch(owner, segs, lay.get("patch", []), macros)
        if len(segs) > CASE_MAX_SEGS:
            raise SpecError(f"{owner}: more than {CASE_MAX_SEGS} segments")
        done[name] = segs
        return segs

    for name in raw:
        build(name, [])
    return done


def seg_set(owner, what, ids):
    if not isinstance(ids, list):
        raise SpecError(f"{owner}: {what} must be a list of segment ids")
    m = 0
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, int) or not 1 <= i <= 32:
            raise SpecError(f"{owner}: {what} id {i!r} outside 1..32")
        m |= 1 << (i - 1)
    return m


def case(owner, base, over, lays, macros):
    """A case: [base] with the fields of `over` replaced, fully expanded."""
    if not isinstance(over, dict):
        raise SpecError(f"{owner}: case must be a table")
    unknown = set(over) - CASE_KEYS
    if unknown:
        raise SpecError(f"{owner}: unknown case fields {sorted(unknown)}")
    c = dict(base)
    c.update(over)
    prefs = []
    for p in c["preferred"]:
        if isinstance(p, dict):
            if set(p) - {"id", "top_down"}:
                raise SpecError(f"{owner}: preference fields are id, top_down")
            prefs.append((integer(owner, "preferred id", p.get("id", 0), 255),
                           integer(owner, "top_down", p.get("top_down", 0), 1)))
        else:
            prefs.append((integer(owner, "preferred id", p, 255), 0))
    if len(prefs) > MAX_PREFERRED:
        raise SpecError(f"{owner}: more than {MAX_PREFERRED} preferred segments")
    banks = [integer(owner, "hinted bank", b, 255) for b in c["banks"]]
    if len(banks) > MAX_BANKS:
        raise SpecError(f"{owner}: more than {MAX_BANKS} hinted banks")
    sysmem = c["sysmem"]
    if sysmem == "none":
        sysmem = None
    else:
        if not isinstance(sysmem, dict) or set(sysmem) != {"offset", "size"}:
            raise SpecError(f"{owner}: sysmem is \"none\" or {{ offset, size }}")
        off = integer(owner, "sysmem offset", sysmem["offset"], CASE_BUF_SIZE)
        size = integer(owner, "sysmem size", sysmem["size"], CASE_BUF_SIZE)
        if off + size > CASE_BUF_SIZE:
            raise SpecError(f"{owner}: sysmem beyond the {CASE_BUF_SIZE:#x}-byte test buffer")
        sysmem = (off, size)
    vidpn = c["vidpn"]
    vidpn = None if vidpn == "none" else integer(owner, "vidpn", vidpn, U32 - 1)
    if c["layout"] not in lays:
        raise SpecError(f"{owner}: layout {c['layout']!r} is not defined")
    segs = apply_patch(owner, lays[c["layout"]], c.get("patch", []), macros)
    nsegs = integer(owner, "nsegs", c.get("nsegs", len(segs)), len(segs))
    return {
        "size": integer(owner, "size", c["size"], U64),
        "alignment": integer(owner, "alignment", c["alignment"], U32),
        "pitch": integer(owner, "pitch", c["pitch"], U64),
        "preferred": prefs,
        "supported": seg_set(owner, "supported", c["supported"]),
        "eviction": seg_set(owner, "eviction", c["eviction"]),
        "banks": banks,
        "priority": integer(owner, "priority", c["priority"], U32),
        "flags": [flag_term(owner, "flags", n, macros) for n in c["flags"]],
        "kmt": [flag_term(owner, "kmt", n, macros) for n in c["kmt"]],
        "info2": [flag_term(owner, "info2", n, macros) for n in c["info2"]],
        "vidpn": vidpn,
        "umd_priority": integer(owner, "umd_priority", c["umd_priority"], U32),
        "sysmem": sysmem,
        "section": integer(owner, "section", c["section"], U64),
        "segs": segs,
        "nsegs": nsegs,
    }


def load_status(path):
    """spec/status.toml: the general status codes."""
    spec = read(path)
    out = []
    names, codes = set(), set()
    for s in spec.get("status", []):
        owner = f"status {s.get('name')!r}"
        name = s.get("name")
        if not isinstance(name, str) or not IDENT.match(name) or not name.startswith("GMC_"):
            raise SpecError(f"{owner}: name must be GMC_[A-Z0-9_]*")
        code = s.get("code")
        if isinstance(code, bool) or not isinstance(code, int):
            raise SpecError(f"{owner}: code must be an integer")
        if name == "GMC_OK":
            if code != 0:
                raise SpecError("GMC_OK must be 0")
        elif not name.startswith("GMC_E_") or name.startswith("GMC_E_RULE_"):
            raise SpecError(f"{owner}: general codes are GMC_E_*, not GMC_E_RULE_*")
        elif not -999 <= code <= -1:
            raise SpecError(f"{owner}: general codes lie in -999..-1")
        if name in names or code in codes:
            raise SpecError(f"{owner}: name or code used twice")
        names.add(name)
        codes.add(code)
        out.append({"name": name, "code": code,
                    "message": one_line(owner, "message", s.get("message"))})
    if "GMC_OK" not in names:
        raise SpecError("status.toml: GMC_OK is missing")
    return out


def load_rules(path, general=(), macros=frozenset()):
    """spec/rules.toml: the allocation and segment rule table."""
    spec = read(path)
    seeds = spec.get("seed", [])
    seed_files = [s["file"] for s in seeds]
    if not seeds or len(set(seed_files)) != len(seed_files):
        raise SpecError("rules.toml: [[seed]] files missing or repeated")
    for s in seeds:
        one_line(f"seed {s['file']}", "title", s.get("title"))
    lays = layouts(spec, macros)
    base = spec.get("base")
    if not isinstance(base, dict) or set(base) != CASE_KEYS - {"patch", "nsegs"}:
        raise SpecError(f"rules.toml: [base] must set {sorted(CASE_KEYS - {'patch', 'nsegs'})}")
    taken_names = {s["name"] for s in general}
    taken_codes = {s["code"] for s in general}
    ids = set()
    rules = []
    for r in spec.get("rule", []):
        rid = r.get("id")
        owner = f"rule {rid!r}"
        if not isinstance(rid, str) or not IDENT.match(rid):
            raise SpecError(f"{owner}: id must be [A-Z][A-Z0-9_]*")
        if rid in ids:
            raise SpecError(f"{owner}: id used twice")
        ids.add(rid)
        unknown = set(r) - RULE_KEYS
        if unknown:
            raise SpecError(f"{owner}: unknown fields {sorted(unknown)}")
        for k in ("seed", "scope", "statement", "status", "code", "kind", "pass", "fail"):
            if k not in r:
                raise SpecError(f"{owner}: {k} is missing")
        if r["seed"] not in seed_files:
            raise SpecError(f"{owner}: seed {r['seed']!r} is not a [[seed]]")
        also = r.get("also", [])
        if any(a not in seed_files or a == r["seed"] for a in also):
            raise SpecError(f"{owner}: also names an unknown or the same seed")
        if r["scope"] not in SCOPES:
            raise SpecError(f"{owner}: scope {r['scope']!r}")
        if r["kind"] not in KINDS:
            raise SpecError(f"{owner}: kind {r['kind']!r}")
        status = r["status"]
        if not isinstance(status, str) or not IDENT.match(status) or not status.startswith("GMC_E_RULE_"):
            raise SpecError(f"{owner}: status must be GMC_E_RULE_*")
        code = r["code"]
        block = -1000 - 100 * seed_files.index(r["seed"])
        if isinstance(code, bool) or not isinstance(code, int) or not block - 99 <= code <= block - 1:
            raise SpecError(f"{owner}: code must lie in {block - 99}..{block - 1} (its seed's block)")
        if status in taken_names or code in taken_codes:
            raise SpecError(f"{owner}: status {status} or code {code} used twice")
        taken_names.add(status)
        taken_codes.add(code)
        when = qualified_terms(owner + " when", r.get("when", []), macros)
        then = qualified_terms(owner + " then", r.get("then", []), macros)
        words = set(when) | set(then)
        if r["scope"] == "alloc" and "seg" in words:
            raise SpecError(f"{owner}: allocation rows cannot name seg.* flags")
        if r["scope"] != "alloc" and words - {"seg"}:
            raise SpecError(f"{owner}: segment rows name seg.* flags only")
        check = r.get("check")
        if r["kind"] == "custom":
            if not isinstance(check, str) or not CHECK.match(check):
                raise SpecError(f"{owner}: custom rows need check = \"name\"")
            if then:
                raise SpecError(f"{owner}: custom rows have no then")
        else:
            if check is not None:
                raise SpecError(f"{owner}: check is for custom rows")
            if not then:
                raise SpecError(f"{owner}: {r['kind']} needs a then list")
            if r["scope"] == "segments":
                raise SpecError(f"{owner}: segments rows are custom")
        derived = r.get("derived", False)
        if not isinstance(derived, bool):
            raise SpecError(f"{owner}: derived is true or false")
        note = r.get("note")
        if note is not None:
            one_line(owner, "note", note)
        rules.append({
            "id": rid, "seed": r["seed"], "also": also, "derived": derived,
            "scope": r["scope"], "statement": one_line(owner, "statement", r["statement"]),
            "status": status, "code": code, "kind": r["kind"], "when": when, "then": then,
            "when_names": list(r.get("when", [])), "then_names": list(r.get("then", [])),
            "check": check, "note": note,
            "pass": case(owner + " pass", base, r["pass"], lays, macros),
            "fail": case(owner + " fail", base, r["fail"], lays, macros),
        })
    if not rules:
        raise SpecError("rules.toml: no [[rule]]")
    unenforced = []
    for u in spec.get("unenforced", []):
        owner = "unenforced statement"
        if u.get("seed") not in seed_files or set(u) != {"seed", "statement", "where"}:
            raise SpecError(f"{owner}: seed (a [[seed]]), statement and where")
        unenforced.append({k: one_line(owner, k, u[k]) for k in ("seed", "statement", "where")})
    return {"seeds": seeds, "rules": rules, "unenforced": unenforced,
            "behaviour": load_behaviour(spec, seed_files, general, os.path.dirname(os.path.dirname(path)))}


def load_behaviour(spec, seed_files, general, root):
    """[[behaviour]] rows: seed statements the library enforces as behaviour,
    each with the statuses it answers and the cmocka tests (under root's
    tests/) that try it both ways."""
    behaviour = []
    general_names = {s["name"] for s in general}
    for b in spec.get("behaviour", []):
        owner = "behaviour statement"
        if b.get("seed") not in seed_files or not {"seed", "statement", "where", "tests"} <= set(b) or \
                set(b) - {"seed", "statement", "where", "tests", "status"}:
            raise SpecError(f"{owner}: seed (a [[seed]]), statement, where, tests and optional status")
        row = {k: one_line(owner, k, b[k]) for k in ("seed", "statement", "where")}
        owner = f"behaviour statement {row['statement'][:40]!r}"
        status = b.get("status", [])
        if not isinstance(status, list) or any(s not in general_names for s in status):
            raise SpecError(f"{owner}: status lists names of spec/status.toml")
        tests = b["tests"]
        if not isinstance(tests, list) or not tests:
            raise SpecError(f"{owner}: tests lists \"tests/FILE.c:function\" entries")
        for t in tests:
            fpath, _, fn = str(t).partition(":")
            full = os.path.join(root, fpath)
            text = open(full).read() if fpath.startswith("tests/") and os.path.isfile(full) else ""
            if not CHECK.match(fn) or f"static void {fn}(void **state)" not in text or \
                    f"cmocka_unit_test({fn})" not in text:
                raise SpecError(f"{owner}: no test {t} (a cmocka test run by its file's main)")
        row["status"] = status
        row["tests"] = tests
        behaviour.append(row)
    return behaviour


def load_sim_status(path, general):
    """spec/sim_status.toml: the simulator API's status codes, each with
    the host status the sim backend reports for it."""
    spec = read(path)
    host_names = {s["name"] for s in general}
    out, names, codes = [], set(), set()
    for s in spec.get("sim_status", []):
        owner = f"sim_status {s.get('name')!r}"
        if set(s) != {"name", "code", "message", "host"}:
            raise SpecError(f"{owner}: fields are name, code, message, host")
        name, code = s["name"], s["code"]
        if not isinstance(name, str) or not IDENT.match(name) or not name.startswith("GMC_SIM_"):
            raise SpecError(f"{owner}: name must be GMC_SIM_[A-Z0-9_]*")
        if isinstance(code, bool) or not isinstance(code, int):
            raise SpecError(f"{owner}: code must be an integer")
        if (name == "GMC_SIM_OK") != (code == 0) or code > 0 or \
                (name != "GMC_SIM_OK" and not name.startswith("GMC_SIM_E")):
            raise SpecError(f"{owner}: GMC_SIM_OK is 0, the others GMC_SIM_E* and negative")
        if name in names or code in codes:
            raise SpecError(f"{owner}: name or code used twice")
        if s["host"] not in host_names:
            raise SpecError(f"{owner}: host status {s['host']!r} is not in spec/status.toml")
        names.add(name)
        codes.add(code)
        out.append({"name": name, "code": code, "message": one_line(owner, "message", s["message"]),
                    "host": s["host"]})
    if "GMC_SIM_OK" not in names:
        raise SpecError("sim_status.toml: GMC_SIM_OK is missing")
    return out


# ------------------------------------------------------------------ flags

WORD_KEYS = {"key", "prefix", "wddm", "desc", "reserved_mask", "defined_mask", "flags"}
FLAG_KEYS = {"bit", "name", "macro", "reserved", "note"}
WDDM_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")


def load_flags(path, gmc):
    """spec/flags.toml: every flag word with its WDDM names, and the WDDM
    names of the SEGFLAGS fields of spec/gmc.toml (gmc: load_gmc's)."""
    spec = read(path)
    words, keys, macros = [], set(), set()
    for w in spec.get("word", []):
        owner = f"flags word {w.get('key')!r}"
        if set(w) - WORD_KEYS or not {"key", "prefix", "wddm", "desc", "flags"} <= set(w):
            raise SpecError(f"{owner}: fields are {sorted(WORD_KEYS)}")
        if w["key"] in keys:
            raise SpecError(f"{owner}: key used twice")
        keys.add(w["key"])
        if not IDENT.match(w["prefix"]) or not w["prefix"].startswith("GMC_") or not w["prefix"].endswith("_"):
            raise SpecError(f"{owner}: prefix must be GMC_..._")
        one_line(owner, "desc", w["desc"])
        bits, names, defined = set(), set(), 0
        flags = []
        for fl in w["flags"]:
            fo = f"{owner} flag {fl.get('name')!r}"
            if set(fl) - FLAG_KEYS or not {"bit", "name", "macro"} <= set(fl):
                raise SpecError(f"{fo}: fields are {sorted(FLAG_KEYS)}")
            bit = integer(fo, "bit", fl["bit"], 31)
            if not isinstance(fl["name"], str) or not WDDM_NAME.match(fl["name"]):
                raise SpecError(f"{fo}: name must be a WDDM field name (CamelCase)")
            if not isinstance(fl["macro"], str) or not IDENT.match(fl["macro"]):
                raise SpecError(f"{fo}: macro must be [A-Z][A-Z0-9_]*")
            if bit in bits or fl["name"] in names:
                raise SpecError(f"{fo}: bit or name used twice")
            bits.add(bit)
            names.add(fl["name"])
            macro = w["prefix"] + fl["macro"]
            if macro in macros:
                raise SpecError(f"{fo}: macro {macro} used twice")
            macros.add(macro)
            reserved = fl.get("reserved", False)
            if not isinstance(reserved, bool):
                raise SpecError(f"{fo}: reserved must be true or false")
            if not reserved:
                defined |= 1 << bit
            flags.append({"bit": bit, "name": fl["name"], "macro": macro, "reserved": reserved,
                          "note": one_line(fo, "note", fl["note"]) if "note" in fl else ""})
        if "reserved_mask" not in w and "defined_mask" not in w:
            raise SpecError(f"{owner}: name a reserved_mask or a defined_mask")
        for m in ("reserved_mask", "defined_mask"):
            if m in w:
                if not IDENT.match(w[m]) or not w[m].startswith(w["prefix"]) or w[m] in macros:
                    raise SpecError(f"{owner}: {m} must be a new {w['prefix']}* macro")
                macros.add(w[m])
        words.append({"key": w["key"], "prefix": w["prefix"], "wddm": w["wddm"], "desc": w["desc"],
                      "reserved_mask": w.get("reserved_mask"), "defined_mask": w.get("defined_mask"),
                      "defined": defined, "flags": sorted(flags, key=lambda f: f["bit"])})
    seg = spec.get("seg")
    if not isinstance(seg, dict) or set(seg) != {"key", "layout", "wddm", "defined_mask",
                                                   "reserved_mask", "names"}:
        raise SpecError("flags.toml: [seg] needs key, layout, wddm, defined_mask, reserved_mask, names")
    lay = next((lay for lay in gmc.get("layout", []) if lay["name"] == seg["layout"]), None)
    if lay is None:
        raise SpecError(f"flags.toml: [seg] layout {seg['layout']} is not in spec/gmc.toml")
    by_field = {}
    for n in seg["names"]:
        if set(n) != {"field", "name"} or not WDDM_NAME.match(str(n["name"])):
            raise SpecError(f"flags.toml: [seg] names entry {n!r} needs field and a CamelCase name")
        if n["field"] in by_field or n["name"] in by_field.values():
            raise SpecError(f"flags.toml: [seg] field or name {n['field']!r} used twice")
        by_field[n["field"]] = n["name"]
    fields = {f["name"]: f for f in lay["fields"]}
    if set(by_field) != set(fields):
        raise SpecError(f"flags.toml: [seg] names must cover the {seg['layout']} fields exactly; "
                        f"missing {sorted(set(fields) - set(by_field))}, unknown {sorted(set(by_field) - set(fields))}")
    seg_flags, seg_defined = [], 0
    for f in sorted(lay["fields"], key=lambda f: f["lsb"]):
        if f["width"] != 1:
            raise SpecError(f"flags.toml: {seg['layout']}.{f['name']} is not one bit")
        seg_defined |= 1 << f["lsb"]
        seg_flags.append({"bit": f["lsb"], "name": by_field[f["name"]],
                          "macro": f"GMC_{seg['layout']}_{f['name']}_MASK", "reserved": False, "note": ""})
        macros.add(f"GMC_{seg['layout']}_{f['name']}_MASK")
    macros.update((seg["defined_mask"], seg["reserved_mask"]))
    return {"words": words, "macros": macros,
            "seg": {"key": seg["key"], "wddm": seg["wddm"], "layout": seg["layout"],
                    "defined_mask": seg["defined_mask"], "reserved_mask": seg["reserved_mask"],
                    "defined": seg_defined, "flags": seg_flags}}


def flag_macros(flags):
    return flags["macros"]


# ------------------------------------------------------------------ all

def load(root):
    """Every spec file under root/spec."""
    spec = os.path.join(root, "spec")
    try:
        gmc = load_gmc(os.path.join(spec, "gmc.toml"))
    except (SpecError, tomllib.TOMLDecodeError, KeyError, TypeError) as e:
        raise SpecError(f"spec/gmc.toml: {e}")
    try:
        bridge = load_bridge(os.path.join(spec, "bridge.toml"))
    except (SpecError, tomllib.TOMLDecodeError, KeyError, TypeError) as e:
        raise SpecError(f"spec/bridge.toml: {e}")
    general = load_status(os.path.join(spec, "status.toml"))
    flags = load_flags(os.path.join(spec, "flags.toml"), gmc)
    rules = load_rules(os.path.join(spec, "rules.toml"), general, flag_macros(flags))
    rules["flags"] = flags
    rules["sim_status"] = load_sim_status(os.path.join(spec, "sim_status.toml"), general)
    return {"gmc": gmc, "bridge": bridge, "general": general, "rules": rules}
