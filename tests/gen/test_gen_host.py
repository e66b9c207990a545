#!/usr/bin/env python3
"""Tests of tools/gen.py (one tool, one loader: tools/gmc_spec.py) on the
status, rule, flag and bridge specs: the committed files are fresh, and
`check` really fails when any generated file, or the spec, changes.

Each case runs the generator as a program, in the repository or in a
scratch copy of spec/, tools/, include/ and every generated file.
Prints "gen_host: N passed, M failed"; exits 1 when anything failed.
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True  # leave no __pycache__ in tools/
sys.path.insert(0, os.path.join(ROOT, "tools"))
import gen  # noqa: E402  (for the list of generated files only)

OUTPUTS = sorted(gen.OUTPUTS)
results = []


def run(root, *args):
    p = subprocess.run([sys.executable, os.path.join(root, "tools", "gen.py"), *args],
                       capture_output=True, text=True, cwd=root)
    return p.returncode, p.stderr


def stale_paths(stderr):
    return sorted(line.split(" is stale")[0] for line in stderr.splitlines() if " is stale" in line)


def case(name, ok, detail=""):
    results.append(ok)
    print(f"  {'ok  ' if ok else 'FAIL'} {name}" + (f": {detail}" if not ok and detail else ""))


def scratch():
    d = tempfile.mkdtemp(prefix="gmc_gen_host_")
    for sub in ("spec", "tools", "include", "cli", "tests/host"):
        shutil.copytree(os.path.join(ROOT, sub), os.path.join(d, sub))
    for rel in OUTPUTS + sorted(gen.INPUTS):
        src = os.path.join(ROOT, rel)
        dst = os.path.join(d, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.exists(dst):
            shutil.copyfile(src, dst)
    return d


def edit(path, old, new):
    with open(path) as f:
        text = f.read()
    if old not in text:
        raise AssertionError(f"{old!r} not in {path}")
    with open(path, "w") as f:
        f.write(text.replace(old, new, 1))


def test_repo_fresh():
    rc, err = run(ROOT, "check")
    case("repository: generated files are up to date", rc == 0, err.strip())


def test_each_output_detected(d):
    for rel in OUTPUTS:
        path = os.path.join(d, rel)
        with open(path) as f:
            good = f.read()
        with open(path, "a") as f:
            f.write("\n/* edited by hand */\n")
        rc, err = run(d, "check")
        case(f"hand edit of {rel} is reported stale", rc == 1 and stale_paths(err) == [rel], err.strip())
        with open(path, "w") as f:
            f.write(good)


def test_missing_and_write(d):
    rel = "tests/host/rules_cases.h"
    os.remove(os.path.join(d, rel))
    rc, err = run(d, "check")
    case("a missing generated file is reported stale", rc == 1 and stale_paths(err) == [rel], err.strip())
    rc, err = run(d, "write")
    case("write regenerates it", rc == 0 and os.path.exists(os.path.join(d, rel)), err.strip())
    rc, err = run(d, "check")
    case("check passes after write", rc == 0, err.strip())
    with open(os.path.join(d, rel)) as a, open(os.path.join(ROOT, rel)) as b:
        case("write reproduces the committed file byte for byte", a.read() == b.read())


def stale_after_edit(d, path, old, new):
    """Edit path, run check, put path back: check's exit status and the
    files it named stale."""
    with open(path) as f:
        good = f.read()
    edit(path, old, new)
    rc, err = run(d, "check")
    with open(path, "w") as f:
        f.write(good)
    return rc, stale_paths(err)


def test_spec_edits(d):
    spec = os.path.join(d, "spec")
    rules = os.path.join(spec, "rules.toml")
    rc, stale = stale_after_edit(d, rules, 'statement = "0 is an invalid initial allocation priority."',
                                 'statement = "Priority 0 is invalid."')
    want = sorted(["docs/rules.md", "host/vidmm/gmc_rules_gen.c", "host/common/gmc_status_gen.c"])
    case("a changed statement makes exactly its views stale", rc == 1 and stale == want, f"{stale}")

    rc, stale = stale_after_edit(d, rules, 'fail = { priority = 0 }', 'fail = { priority = 1 }')
    case("a changed case makes only the case file stale", rc == 1 and stale == ["tests/host/rules_cases.h"],
         f"{stale}")

    rc, stale = stale_after_edit(d, os.path.join(spec, "status.toml"), 'name = "GMC_E_BUSY"\ncode = -7',
                                 'name = "GMC_E_BUSY"\ncode = -70')
    case("a changed status code makes the header stale", rc == 1 and "include/gmc_status.h" in stale, f"{stale}")

    rc, stale = stale_after_edit(d, os.path.join(spec, "sim_status.toml"), 'message = "a waveform is already open"',
                                 'message = "a waveform is open"')
    case("a changed simulator message makes exactly sim/gmc_sim_status.h stale",
         rc == 1 and stale == ["sim/gmc_sim_status.h"], f"{stale}")

    flags = os.path.join(spec, "flags.toml")
    rc, stale = stale_after_edit(d, flags, 'name = "DonotEvict"', 'name = "DoNotEvict"')
    case("a renamed WDDM flag name makes exactly the name tables (CLI and recorder share them) and the header comment stale",
         rc == 1 and stale == ["host/common/gmc_flag_names.c", "include/gmc_flags.h"],
         f"{stale}")
    with open(flags) as f:
        flags_good = f.read()
    edit(flags, '{ bit = 7,  name = "Discard"', '{ bit = 8,  name = "Discard"')
    rc, err = run(d, "check")
    case("a moved lock bit makes exactly include/gmc_flags.h stale (the mask with it)",
         rc == 1 and stale_paths(err) == ["include/gmc_flags.h"], f"{stale_paths(err)}")
    if rc == 1:
        rc2, _ = run(d, "write")
        with open(os.path.join(d, "include", "gmc_flags.h")) as f:
            text = f.read()
        case("write puts the moved bit and the new mask in the header",
             rc2 == 0 and "(1u << 8)   /* Discard" in text and "GMC_LOCK_FLAGS_MASK                       0x00000127u" in text,
             text[-600:])
        for rel in ("include/gmc_flags.h", "host/common/gmc_flag_names.c"):
            shutil.copyfile(os.path.join(ROOT, rel), os.path.join(d, rel))
    with open(flags, "w") as f:
        f.write(flags_good)

    rc, stale = stale_after_edit(d, os.path.join(spec, "bridge.toml"), "\nversion = 3\n", "\nversion = 4\n")
    case("a changed bridge version makes exactly the two bridge files stale",
         rc == 1 and stale == ["firmware/common/gmc_bridge.vh", "include/gmc_bridge.h"], f"{stale}")

    rc, err = run(d, "check")
    case("restored spec is fresh again", rc == 0, err.strip())


def test_bad_specs(d):
    rules = os.path.join(d, "spec", "rules.toml")
    status = os.path.join(d, "spec", "status.toml")
    bad = [
        ("duplicate rule id", rules,
         'id = "ALLOC_PRIORITY_NONZERO"', 'id = "ALLOC_SIZE_VALID"', "used twice"),
        ("duplicate rule code", rules, "code = -1113", "code = -1112", "used twice"),
        ("code outside its seed's block", rules, "code = -1113", "code = -1213", "block"),
        ("rule status clashing with a general one", rules,
         'status = "GMC_E_RULE_PRIORITY_ZERO"', 'status = "GMC_E_BUSY"', "GMC_E_RULE_"),
        ("unknown flag name", rules,
         'when = ["flags.PERMANENT_SYS_MEM"]', 'when = ["flags.PERMANENT_SYSMEM"]', "no macro"),
        ("unknown flag word", rules,
         'when = ["flags.PERMANENT_SYS_MEM"]', 'when = ["dxgk.PERMANENT_SYS_MEM"]', "unknown flag word"),
        ("row without a failing case", rules, "fail = { priority = 0 }\n", "\n", "fail is missing"),
        ("segment row naming an allocation flag", rules,
         'then = ["seg.RESERVED_SYS_MEM"]', 'then = ["flags.CPU_VISIBLE"]', "seg.* flags only"),
        ("case with an unknown field", rules,
         "fail = { priority = 0 }", "fail = { prio = 0 }", "unknown case fields"),
        ("case naming an undefined layout", rules,
         'fail = { pitch = 0, layout = "pitch2" }', 'fail = { pitch = 0, layout = "nope" }', "not defined"),
        ("custom row without a predicate", rules,
         'check = "priority_nonzero"\n', "", "check"),
        ("unknown seed", rules,
         'seed = "004_cc4bdaa586ec47c0.txt"\nscope = "alloc"\nstatement = "Flags.Reserved',
         'seed = "005.txt"\nscope = "alloc"\nstatement = "Flags.Reserved', "not a [[seed]]"),
        ("duplicate general status code", status, "code = -8", "code = -7", "used twice"),
        ("GMC_OK not zero", status, 'name = "GMC_OK"\ncode = 0', 'name = "GMC_OK"\ncode = 1', "GMC_OK"),
        ("TOML syntax error", status, 'name = "GMC_OK"', 'name = "GMC_OK', ""),
        ("simulator status mapped to an unknown host status", os.path.join(d, "spec", "sim_status.toml"),
         'host = "GMC_E_IN_USE"', 'host = "GMC_E_NO_SUCH_STATUS"', "not in spec/status.toml"),
        ("duplicate simulator status code", os.path.join(d, "spec", "sim_status.toml"),
         "code = -9", "code = -8", "used twice"),
        ("positive simulator status code", os.path.join(d, "spec", "sim_status.toml"),
         "code = -9", "code = 9", "negative"),
        ("two flags on one bit", os.path.join(d, "spec", "flags.toml"),
         '{ bit = 1,  name = "Stereo"', '{ bit = 0,  name = "Stereo"', "used twice"),
        ("one WDDM name twice in a word", os.path.join(d, "spec", "flags.toml"),
         '{ bit = 1,  name = "WriteOnly"', '{ bit = 1,  name = "ReadOnly"', "used twice"),
        ("flag bit beyond 31", os.path.join(d, "spec", "flags.toml"),
         '{ bit = 7,  name = "Discard"', '{ bit = 32, name = "Discard"', "out of range"),
        ("flag name not CamelCase", os.path.join(d, "spec", "flags.toml"),
         'name = "Primary"', 'name = "primary flag"', "CamelCase"),
        ("segment flag without a WDDM name", os.path.join(d, "spec", "flags.toml"),
         '  { field = "AGP", name = "Agp" },\n', "", "missing ['AGP']"),
        ("WDDM name for a segment field gmc.toml lacks", os.path.join(d, "spec", "flags.toml"),
         'field = "AGP"', 'field = "AGP2"', "unknown ['AGP2']"),
        ("behaviour naming a test its file lacks", rules,
         '"tests/host/test_flip.c:test_pin_refused"', '"tests/host/test_flip.c:test_pin_refusd"', "no test"),
        ("behaviour naming a test outside tests/", rules,
         '"tests/host/test_flip.c:test_pin_refused"', '"host/vidmm/gmc_flip.c:test_pin_refused"', "no test"),
        ("behaviour naming an unknown status", rules,
         '"GMC_E_NOT_DIRECT_FLIP", "GMC_E_PINNED"', '"GMC_E_NOT_DIRECT_FLIP", "GMC_E_PINNED_X"', "status lists"),
        ("behaviour without tests", rules,
         'tests = ["tests/host/test_flip.c:test_pin_moves_and_stays", "tests/host/test_flip.c:test_pinned_never_moves", '
         '"tests/host/test_flip.c:test_pin_refused"]', 'tests = []', "tests"),
        ("rule naming a flag flags.toml lacks", rules,
         'when = ["flags.PERMANENT_SYS_MEM"]', 'when = ["flags.RESERVED17"]', "no macro"),
        ("bridge error code beyond its 4 bits", os.path.join(d, "spec", "bridge.toml"),
         'name = "CRC"\ncode = 1\n', 'name = "CRC"\ncode = 16\n', "spec/bridge.toml: err CRC: code must be 1..15"),
        ("bridge opcode used twice", os.path.join(d, "spec", "bridge.toml"),
         "code = 0x02", "code = 0x01", "spec/bridge.toml: op"),
    ]
    for name, path, old, new, needle in bad:
        with open(path) as f:
            good = f.read()
        edit(path, old, new)
        rc, err = run(d, "check")
        ok = rc == 1 and err.startswith("spec:") and needle in err and "Traceback" not in err
        case(f"refused: {name}", ok, err.strip())
        with open(path, "w") as f:
            f.write(good)
    rc, err = run(d, "frobnicate")
    case("unknown mode prints usage and exits 2", rc == 2 and "gen.py write" in err)


def main():
    print("gen_host:")
    test_repo_fresh()
    d = scratch()
    try:
        rc, err = run(d, "check")
        case("scratch copy starts fresh", rc == 0, err.strip())
        test_each_output_detected(d)
        test_missing_and_write(d)
        test_spec_edits(d)
        test_bad_specs(d)
    finally:
        shutil.rmtree(d)
    passed = sum(results)
    failed = len(results) - passed
    print(f"gen_host: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
