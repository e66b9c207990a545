#!/usr/bin/env python3
"""Check the scheduler layout the sim shim's shortcut relies on.

sim/gmc_sim.cpp skips Verilator's full eval() on clock edges and runs the
input-combinational pass (when inputs changed) and the clocked region
itself. That is right only when the input pass runs once (its trigger is
"first iteration") and for the trigger order Verilator 5.006 chose for
gmc_top: [0] posedge clk,
[1] posedge gclk (the DMA engine's gated clock), [2] negedge clk (the clock
gate's enable flop), and nothing else; and only when gclk is assigned
nowhere but as clk & en_n. This reads the generated code and writes
gmc_sched.h with GMC_SIM_SCHED_SHORTCUT 1 when all of that holds, else 0
(the shim then uses eval(); slower, never wrong).

It also finds whether the master's R and B inputs (which the DMA engine
takes through registers) are read only by the clocked region: then a
change of them alone needs no input pass, and gmc_sched.h says so with
GMC_SCHED_RB_SAMPLED 1 (the shim then drives them without marking the
inputs changed).

    check_sched.py [--force-eval] VOBJ_DIR

--force-eval writes GMC_SIM_SCHED_SHORTCUT 0 whatever the layout: the
build variant evl uses it so that the tests run the fallback (the plain
eval()) as another Verilator version would.
"""
import glob
import os
import re
import sys

GCLK = "gmc_top__DOT__g_dma__DOT__u_dma__DOT__gclk"
EN = "gmc_top__DOT__g_dma__DOT__u_dma__DOT__u_cg__DOT__en_n"


def squash(text):
    return re.sub(r"\s+", "", text)


def check(vobj):
    code = ""
    for path in sorted(glob.glob(os.path.join(vobj, "Vgmc_top___024root__DepSet_*.cpp"))):
        if path.endswith("__Slow.cpp"):
            continue
        with open(path) as f:
            code += f.read()
    flat = squash(code)
    m = re.search(r"voidVgmc_top___024root___eval_triggers__act\(Vgmc_top___024root\*vlSelf\)\{(.*?)\n?#ifdef",
                  flat, re.S)
    if not m:
        return "eval_triggers__act not found"
    trig = m.group(1)
    want = [
        "vlSelf->__VactTriggered.at(0U)=((IData)(vlSelf->clk)&(~(IData)(vlSelf->__Vtrigrprev__TOP__clk)));",
        "vlSelf->__VactTriggered.at(1U)=((IData)(vlSelf->%s)&(~(IData)(vlSelf->__Vtrigrprev__TOP__%s)));"
        % (GCLK, GCLK),
        "vlSelf->__VactTriggered.at(2U)=((~(IData)(vlSelf->clk))&(IData)(vlSelf->__Vtrigrprev__TOP__clk));",
    ]
    for i, w in enumerate(want):
        if w not in trig:
            return "trigger %d is not the expected edge" % i
    if "__VactTriggered.at(3U)" in trig:
        return "more than three triggers"
    m = re.search(r"voidVgmc_top___024root___eval_triggers__ico\(Vgmc_top___024root\*vlSelf\)\{(.*?)#ifdef", flat)
    if not m or "vlSelf->__VicoTriggered.at(0U)=(0U==vlSelf->__VicoIterCount);" not in m.group(1) \
            or "__VicoTriggered.at(1U)" in m.group(1):
        return "the input-combinational pass is not a single first-iteration trigger"
    if "voidVgmc_top___024root___eval_ico(Vgmc_top___024root*vlSelf){" not in flat:
        return "eval_ico not found"
    assigns = re.findall(r"vlSelf->%s=([^;]*);" % GCLK, flat)
    if not assigns or any(a != "((IData)(vlSelf->clk)&(IData)(vlSelf->%s))" % EN for a in assigns):
        return "gclk is assigned other than as clk & en_n"
    # Nothing else may read clk outside an edge: the shortcut recomputes
    # only gclk when clk changes. Remove the trigger function, the debug
    # assertions and gclk's assignments; no read of clk may remain.
    rest = re.sub(r"voidVgmc_top___024root___eval_triggers__act\(Vgmc_top___024root\*vlSelf\)\{.*?#endif\}", "",
                  flat)
    rest = re.sub(r"voidVgmc_top___024root___eval_debug_assertions\(Vgmc_top___024root\*vlSelf\)\{.*?\n?\}#endif",
                  "", rest)
    rest = rest.replace("vlSelf->%s=((IData)(vlSelf->clk)&(IData)(vlSelf->%s));" % (GCLK, EN), "")
    if re.search(r"vlSelf->clk(?!\w)", rest):
        return "logic other than the gated clock reads clk"
    return None


# The master's R and B inputs.
RB_INPUTS = ("m_axi_rvalid", "m_axi_rid", "m_axi_rdata", "m_axi_rresp", "m_axi_rlast",
             "m_axi_bvalid", "m_axi_bid", "m_axi_bresp")


def rb_sampled(vobj):
    """True when the R and B inputs are read only in the clocked region's
    sequential functions (nba_sequent), so no input-pass logic reads them."""
    code = ""
    for path in sorted(glob.glob(os.path.join(vobj, "Vgmc_top___024root__DepSet_*.cpp"))):
        if path.endswith("__Slow.cpp"):
            continue
        with open(path) as f:
            code += f.read()
    # Every module must be inlined into the root class (the generated code
    # then has no other class whose functions could read the inputs).
    others = [p for p in glob.glob(os.path.join(vobj, "Vgmc_top_*__DepSet_*.cpp"))
              if not os.path.basename(p).startswith("Vgmc_top___024root__")]
    if others:
        return False
    read = re.compile(r"vlSelf->(%s)(?!\w)" % "|".join(RB_INPUTS))
    funcs = re.split(r"\n(?=(?:VL_INLINE_OPT |VL_ATTR_COLD )?void Vgmc_top___024root___)", code)
    seen = False
    for body in funcs:
        if not read.search(body):
            continue
        m = re.match(r"(?:VL_INLINE_OPT |VL_ATTR_COLD )?void Vgmc_top___024root___(\w+)\(", body)
        if m and m.group(1) == "eval_debug_assertions":
            continue  # range checks of the inputs (VL_DEBUG builds only)
        if not m or not m.group(1).startswith("nba_sequent__"):
            return False
        seen = True
    return seen


def main():
    args = sys.argv[1:]
    force = args[:1] == ["--force-eval"]
    if force:
        args = args[1:]
    if len(args) != 1:
        sys.stderr.write(__doc__)
        sys.exit(2)
    vobj = args[0]
    why = "forced by --force-eval" if force else check(vobj)
    rb = not why and rb_sampled(vobj)
    with open(os.path.join(vobj, "gmc_sched.h"), "w") as f:
        f.write("/* Written by tools/check_sched.py. */\n")
        if why:
            f.write("/* Shortcut off: %s. */\n#define GMC_SIM_SCHED_SHORTCUT 0\n" % why)
        else:
            f.write("#define GMC_SIM_SCHED_SHORTCUT 1\n"
                    "/* Triggers of eval_nba: the edges of clk and of the gated clock. */\n"
                    "#define GMC_SCHED_CLK_RISE 0\n#define GMC_SCHED_GCLK_RISE 1\n#define GMC_SCHED_CLK_FALL 2\n"
                    "/* The gated clock, its value at the last trigger check, the gate's enable flop. */\n"
                    "#define GMC_SCHED_GCLK %s\n#define GMC_SCHED_GCLK_PREV __Vtrigrprev__TOP__%s\n"
                    "#define GMC_SCHED_GATE_EN %s\n" % (GCLK, GCLK, EN))
            f.write("/* The master's R and B inputs are read only by the clocked region. */\n"
                    "#define GMC_SCHED_RB_SAMPLED %d\n" % (1 if rb else 0))
    print("check_sched: %s" % ("shortcut off: " + why if why else "scheduler layout as expected, shortcut on"
                               + ("; R and B inputs sampled only" if rb else "")))


if __name__ == "__main__":
    main()
