// The always-on AXI protocol monitor (sim/gmc_axi_check.h) on hand-made
// edges: every rule it checks, broken once, gives exactly one violation
// with its text; the same traffic kept legal gives none; and a port's
// quiet shortcut applies only after an edge at which it was quiet too.
// (C++ because the monitor is part of the C++ sim shim.)
// The monitor's header first: cmocka defines a macro named fail.
#include "gmc_axi_check.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <string>

extern "C" {  // cmocka's header declares C functions without saying so
#include <cmocka.h>
}

namespace {

bool has(const AxiCheck &c, const char *text)
{
    return c.first().find(text) != std::string::npos;
}

// ------------------------------------------------------------- master

AxiMasterSample m_idle()
{
    AxiMasterSample s{};
    s.awsize = s.arsize = 3;
    s.awburst = s.arburst = 1;
    s.awready = s.wready = s.arready = true;
    s.bready = s.rready = true;
    return s;
}

void test_master_legal_write(void **)
{
    AxiCheck c;
    uint64_t cyc = 0;
    AxiMasterSample s = m_idle();
    c.master.edge(s, cyc++);
    // AW stalled one cycle with a stable payload, then 4 W beats.
    s.awvalid = true;
    s.awready = false;
    s.awaddr = 0x1000;
    s.awlen = 3;
    c.master.edge(s, cyc++);
    s.awready = true;
    c.master.edge(s, cyc++);
    s.awvalid = false;
    for (unsigned b = 0; b < 4; b++) {
        s.wvalid = true;
        s.wdata = b;
        s.wstrb = 0xFF;
        s.wlast = (b == 3);
        c.master.edge(s, cyc++);
    }
    s.wvalid = false;
    s.wlast = false;
    c.master.edge(s, cyc++);
    assert_int_equal(c.violations(), 0);
}

void test_master_crosses_4k(void **)
{
    AxiCheck c;
    AxiMasterSample s = m_idle();
    c.master.edge(s, 0);
    s.arvalid = true;
    s.araddr = 0x1FF8;  // two beats: 0x1FF8 and 0x2000
    s.arlen = 1;
    c.master.edge(s, 1);
    assert_int_equal(c.violations(), 1);
    assert_true(has(c, "cycle 1: master AR burst crosses 4 KiB"));
}

void test_master_not_incr_and_wide(void **)
{
    AxiCheck c;
    AxiMasterSample s = m_idle();
    c.master.edge(s, 0);
    s.awvalid = true;
    s.awaddr = 0x100;
    s.awburst = 2;  // WRAP
    s.awsize = 4;   // 16 bytes
    c.master.edge(s, 1);
    assert_int_equal(c.violations(), 2);
    assert_true(has(c, "master AW beat wider than the bus"));
}

void test_master_payload_changed_while_stalled(void **)
{
    AxiCheck c;
    AxiMasterSample s = m_idle();
    c.master.edge(s, 0);
    s.arvalid = true;
    s.arready = false;
    s.araddr = 0x2000;
    c.master.edge(s, 1);
    s.araddr = 0x2040;  // changed before the handshake
    c.master.edge(s, 2);
    assert_int_equal(c.violations(), 1);
    assert_true(has(c, "cycle 2: master AR dropped or changed while stalled"));

    AxiCheck d;
    s = m_idle();
    d.master.edge(s, 0);
    s.wvalid = true;
    s.wready = false;
    s.wdata = 7;
    d.master.edge(s, 1);
    s.wvalid = false;  // dropped before the handshake
    d.master.edge(s, 2);
    assert_int_equal(d.violations(), 1);
    assert_true(has(d, "master W dropped or changed while stalled"));
}

void test_master_wlast(void **)
{
    // WLAST on the second of four beats.
    AxiCheck c;
    AxiMasterSample s = m_idle();
    c.master.edge(s, 0);
    s.awvalid = true;
    s.awaddr = 0x3000;
    s.awlen = 3;
    c.master.edge(s, 1);
    s.awvalid = false;
    s.wvalid = true;
    s.wlast = false;
    c.master.edge(s, 2);
    s.wlast = true;
    c.master.edge(s, 3);
    assert_int_equal(c.violations(), 1);
    assert_true(has(c, "cycle 3: master WLAST not on the last beat"));

    // No WLAST on the last beat of a 2-beat burst.
    AxiCheck d;
    s = m_idle();
    d.master.edge(s, 0);
    s.awvalid = true;
    s.awaddr = 0x3000;
    s.awlen = 1;
    d.master.edge(s, 1);
    s.awvalid = false;
    s.wvalid = true;
    d.master.edge(s, 2);
    d.master.edge(s, 3);
    assert_int_equal(d.violations(), 1);
    assert_true(has(d, "cycle 3: master WLAST not on the last beat"));
}

void test_master_valid_after_reset(void **)
{
    AxiCheck c;
    AxiMasterSample s = m_idle();
    s.rst = true;
    c.master.edge(s, 0);
    s.rst = false;
    s.arvalid = true;
    s.araddr = 0x100;
    c.master.edge(s, 1);
    assert_int_equal(c.violations(), 1);
    assert_true(has(c, "cycle 1: master: valid high right after reset"));
}

// --------------------------------------------------------- slave ports

AxiSlaveSample a_idle()
{
    AxiSlaveSample s{};
    s.awready = s.wready = s.arready = true;
    s.bready = s.rready = true;
    return s;
}

void test_slave_read_rules(void **)
{
    // A legal 2-beat read: no violation.
    AxiCheck c;
    AxiSlaveSample s = a_idle();
    c.slave.edge(s, 0);
    s.arvalid = true;
    s.arid = 5;
    s.arlen = 1;
    c.slave.edge(s, 1);
    s.arvalid = false;
    s.rvalid = true;
    s.rid = 5;
    c.slave.edge(s, 2);
    s.rlast = true;
    c.slave.edge(s, 3);
    s.rvalid = false;
    s.rlast = false;
    c.slave.edge(s, 4);
    assert_int_equal(c.violations(), 0);

    // RLAST early, then a beat with no burst left, then a wrong RID.
    s.arvalid = true;
    s.arid = 6;
    s.arlen = 1;
    c.slave.edge(s, 5);
    s.arvalid = false;
    s.rvalid = true;
    s.rid = 6;
    s.rlast = true;
    c.slave.edge(s, 6);
    assert_int_equal(c.violations(), 1);
    assert_true(has(c, "cycle 6: aperture RLAST not on the last beat"));
    s.rlast = true;
    c.slave.edge(s, 7);  // the burst's second beat: legal
    c.slave.edge(s, 8);  // a third beat: no burst left
    assert_int_equal(c.violations(), 2);
    s.rvalid = false;
    s.rlast = false;
    c.slave.edge(s, 9);
    s.arvalid = true;
    s.arid = 1;
    s.arlen = 0;
    c.slave.edge(s, 10);
    s.arvalid = false;
    s.rvalid = true;
    s.rid = 2;
    s.rlast = true;
    c.slave.edge(s, 11);
    assert_int_equal(c.violations(), 3);
}

void test_slave_write_rules(void **)
{
    // B before the burst's last W beat.
    AxiCheck c;
    AxiSlaveSample s = a_idle();
    c.slave.edge(s, 0);
    s.awvalid = true;
    s.awid = 3;
    s.awlen = 1;
    c.slave.edge(s, 1);
    s.awvalid = false;
    s.wvalid = true;
    c.slave.edge(s, 2);
    s.wvalid = false;
    s.bvalid = true;
    s.bid = 3;
    c.slave.edge(s, 3);
    assert_int_equal(c.violations(), 1);
    assert_true(has(c, "cycle 3: aperture B before the burst's last W beat"));

    // W data before any address; a stalled B that changes its ID.
    AxiCheck d;
    s = a_idle();
    d.slave.edge(s, 0);
    s.wvalid = true;
    d.slave.edge(s, 1);
    assert_true(has(d, "cycle 1: aperture accepted W data before its address"));
    AxiCheck e;
    s = a_idle();
    e.slave.edge(s, 0);
    s.awvalid = s.wvalid = true;
    s.awid = 1;
    e.slave.edge(s, 1);
    s.awvalid = s.wvalid = false;
    s.bvalid = true;
    s.bready = false;
    s.bid = 1;
    e.slave.edge(s, 2);
    s.bid = 2;
    e.slave.edge(s, 3);
    assert_int_equal(e.violations(), 1);
    assert_true(has(e, "cycle 3: aperture B dropped or changed while stalled"));
}

void test_lite_rules(void **)
{
    AxiCheck c;
    AxiLiteSample s{};
    s.bready = s.rready = true;
    c.lite.edge(s, 0);
    s.rvalid = true;
    c.lite.edge(s, 1);
    assert_int_equal(c.violations(), 1);
    assert_true(has(c, "cycle 1: AXI4-Lite R without a read"));
    s.rvalid = false;
    s.bvalid = true;
    c.lite.edge(s, 2);
    assert_int_equal(c.violations(), 2);
    // The first violation's text is kept.
    assert_true(has(c, "cycle 1: AXI4-Lite R without a read"));

    // A legal write: AW and W together, then B.
    AxiCheck d;
    AxiLiteSample t{};
    t.awready = t.wready = t.bready = true;
    d.lite.edge(t, 0);
    t.awvalid = t.wvalid = true;
    d.lite.edge(t, 1);
    t.awvalid = t.wvalid = false;
    t.bvalid = true;
    d.lite.edge(t, 2);
    assert_int_equal(d.violations(), 0);
}

// A port's quiet shortcut: only after a quiet edge, and reset still taken.
void test_quiet_shortcut(void **)
{
    AxiCheck c;
    // Before any edge: no shortcut.
    assert_false(c.master.edge_quiet(false));
    AxiMasterSample s = m_idle();
    s.arvalid = true;
    s.araddr = 0x100;
    c.master.edge(s, 0);
    // The last edge was busy: no shortcut.
    assert_false(c.master.edge_quiet(false));
    s.arvalid = false;
    c.master.edge(s, 1);
    assert_true(c.master.edge_quiet(false));
    // A reset through the shortcut arms the after-reset rule.
    assert_true(c.master.edge_quiet(true));
    s.awvalid = true;
    s.awaddr = 0x100;
    c.master.edge(s, 3);
    assert_int_equal(c.violations(), 1);
    assert_true(has(c, "cycle 3: master: valid high right after reset"));
    // The other ports are untouched by the master's traffic.
    assert_false(c.lite.edge_quiet(false));
    assert_false(c.slave.edge_quiet(false));
}

// ------------------------------------------- issue 18: the five patterns

// 1. A response in the same cycle as its request, on both slaves.
void test_response_same_cycle(void **)
{
    AxiCheck c;
    AxiLiteSample l{};
    l.awready = l.wready = l.arready = l.bready = l.rready = true;
    c.lite.edge(l, 0);
    l.awvalid = l.wvalid = l.bvalid = true;  // B with its AW and W
    c.lite.edge(l, 1);
    assert_int_equal(c.violations(), 1);
    assert_true(has(c, "cycle 1: AXI4-Lite B in the same cycle as its write"));

    AxiCheck d;
    AxiLiteSample r{};
    r.arready = r.rready = true;
    d.lite.edge(r, 0);
    r.arvalid = r.rvalid = true;
    d.lite.edge(r, 1);
    assert_int_equal(d.violations(), 1);
    assert_true(has(d, "cycle 1: AXI4-Lite R in the same cycle as its read"));

    AxiCheck e;
    AxiSlaveSample a = a_idle();
    e.slave.edge(a, 0);
    a.arvalid = true;
    a.arid = 2;
    a.rvalid = a.rlast = true;  // single-beat read answered at once
    a.rid = 2;
    e.slave.edge(a, 1);
    assert_int_equal(e.violations(), 1);
    assert_true(has(e, "cycle 1: aperture R in the same cycle as its read request"));

    AxiCheck f;
    a = a_idle();
    f.slave.edge(a, 0);
    a.awvalid = a.wvalid = a.bvalid = true;  // single-beat write answered at once
    f.slave.edge(a, 1);
    assert_int_equal(f.violations(), 1);
    assert_true(has(f, "cycle 1: aperture B in the same cycle as its write"));

    // The same traffic a cycle later is legal.
    AxiCheck g;
    a = a_idle();
    g.slave.edge(a, 0);
    a.awvalid = a.wvalid = true;
    g.slave.edge(a, 1);
    a.awvalid = a.wvalid = false;
    a.bvalid = true;
    g.slave.edge(a, 2);
    a.bvalid = false;
    a.arvalid = true;
    g.slave.edge(a, 3);
    a.arvalid = false;
    a.rvalid = a.rlast = true;
    g.slave.edge(a, 4);
    assert_int_equal(g.violations(), 0);
}

// 2. EXOKAY: neither slave supports exclusive access.
void test_exokay(void **)
{
    AxiCheck c;
    AxiSlaveSample a = a_idle();
    c.slave.edge(a, 0);
    a.arvalid = true;
    c.slave.edge(a, 1);
    a.arvalid = false;
    a.rvalid = a.rlast = true;
    a.rresp = 1;  // EXOKAY
    c.slave.edge(a, 2);
    assert_int_equal(c.violations(), 1);
    assert_true(has(c, "cycle 2: aperture R with EXOKAY on a non-exclusive read"));

    AxiCheck d;
    AxiLiteSample l{};
    l.awready = l.wready = l.bready = true;
    d.lite.edge(l, 0);
    l.awvalid = l.wvalid = true;
    d.lite.edge(l, 1);
    l.awvalid = l.wvalid = false;
    l.bvalid = true;
    l.bresp = 1;
    d.lite.edge(l, 2);
    assert_int_equal(d.violations(), 1);
    assert_true(has(d, "cycle 2: AXI4-Lite B with EXOKAY (no exclusive access)"));

    // OKAY, SLVERR and DECERR are fine.
    AxiCheck e;
    a = a_idle();
    e.slave.edge(a, 0);
    for (uint8_t resp : {0, 2, 3}) {
        a.awvalid = a.wvalid = true;
        a.bvalid = false;
        e.slave.edge(a, 1);
        a.awvalid = a.wvalid = false;
        a.bvalid = true;
        a.bresp = resp;
        e.slave.edge(a, 2);
    }
    assert_int_equal(e.violations(), 0);
}

// 3. A BVALID nobody asked for, which the master never takes: reported
// once, when it is raised.
void test_unrequested_b_never_taken(void **)
{
    AxiCheck c;
    AxiSlaveSample a = a_idle();
    a.bready = false;
    c.slave.edge(a, 0);
    a.bvalid = true;
    for (uint64_t cyc = 1; cyc < 20; cyc++)
        c.slave.edge(a, cyc);
    assert_int_equal(c.violations(), 1);
    assert_true(has(c, "cycle 1: aperture B before the burst's last W beat"));

    AxiCheck d;
    AxiLiteSample l{};
    d.lite.edge(l, 0);
    l.bvalid = true;
    for (uint64_t cyc = 1; cyc < 20; cyc++)
        d.lite.edge(l, cyc);
    assert_int_equal(d.violations(), 1);
    assert_true(has(d, "cycle 1: AXI4-Lite B without a write"));
}

// 4. W beats before their AW: WLAST is checked when the AW arrives.
void test_master_wlast_before_aw(void **)
{
    AxiCheck c;
    AxiMasterSample s = m_idle();
    c.master.edge(s, 0);
    s.wvalid = true;
    s.wstrb = 0xFF;
    s.wlast = true;  // first of two beats marked last
    c.master.edge(s, 1);
    s.wlast = false;
    c.master.edge(s, 2);
    s.wvalid = false;
    c.master.edge(s, 3);
    assert_int_equal(c.violations(), 0);  // not known yet
    s.awvalid = true;
    s.awaddr = 0x4000;
    s.awlen = 1;
    c.master.edge(s, 4);
    assert_int_equal(c.violations(), 1);
    assert_true(has(c, "cycle 4: master WLAST not on the last beat"));

    // Legal: two beats, the second last, AW after both.
    AxiCheck d;
    s = m_idle();
    d.master.edge(s, 0);
    s.wvalid = true;
    s.wstrb = 0xFF;
    d.master.edge(s, 1);
    s.wlast = true;
    d.master.edge(s, 2);
    s.wvalid = s.wlast = false;
    s.awvalid = true;
    s.awaddr = 0x4000;
    s.awlen = 1;
    d.master.edge(s, 3);
    s.awvalid = false;
    d.master.edge(s, 4);
    assert_int_equal(d.violations(), 0);
}

// 5. WSTRB on lanes the beat's size and address do not cover.
void test_master_wstrb(void **)
{
    // A 4-byte beat at 0x1004 owns lanes 4..7: 0x0F is wrong.
    AxiCheck c;
    AxiMasterSample s = m_idle();
    c.master.edge(s, 0);
    s.awvalid = true;
    s.awaddr = 0x1004;
    s.awsize = 2;
    s.awlen = 0;
    c.master.edge(s, 1);
    s.awvalid = false;
    s.wvalid = s.wlast = true;
    s.wstrb = 0x0F;
    c.master.edge(s, 2);
    assert_int_equal(c.violations(), 1);
    assert_true(has(c, "cycle 2: master WSTRB outside the beat's byte lanes"));

    // Legal narrow and unaligned bursts: 2-byte beats from 0x2003 (first
    // beat lane 3 only, then lanes 4-5, 6-7, 0-1), and an 8-byte burst
    // from 0x3005 (first beat lanes 5..7, then all).
    AxiCheck d;
    s = m_idle();
    d.master.edge(s, 0);
    s.awvalid = true;
    s.awaddr = 0x2003;
    s.awsize = 1;
    s.awlen = 3;
    d.master.edge(s, 1);
    s.awvalid = false;
    s.wvalid = true;
    const uint8_t lanes[] = { 0x08, 0x30, 0xC0, 0x03 };
    for (unsigned b = 0; b < 4; b++) {
        s.wstrb = lanes[b];
        s.wlast = b == 3;
        d.master.edge(s, 2 + b);
    }
    s.wvalid = s.wlast = false;
    s.awvalid = true;
    s.awaddr = 0x3005;
    s.awsize = 3;
    s.awlen = 1;
    d.master.edge(s, 6);
    s.awvalid = false;
    s.wvalid = true;
    s.wstrb = 0xE0;
    d.master.edge(s, 7);
    s.wstrb = 0xFF;
    s.wlast = true;
    d.master.edge(s, 8);
    assert_int_equal(d.violations(), 0);

    // The same rule for beats that come before their AW.
    AxiCheck e;
    s = m_idle();
    e.master.edge(s, 0);
    s.wvalid = s.wlast = true;
    s.wstrb = 0x01;  // lane 0, but the beat is at 0x5006 (2 bytes: lanes 6-7)
    e.master.edge(s, 1);
    s.wvalid = s.wlast = false;
    s.awvalid = true;
    s.awaddr = 0x5006;
    s.awsize = 1;
    s.awlen = 0;
    e.master.edge(s, 2);
    assert_int_equal(e.violations(), 1);
    assert_true(has(e, "cycle 2: master WSTRB outside the beat's byte lanes"));
}

}  // namespace

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_master_legal_write),
        cmocka_unit_test(test_master_crosses_4k),
        cmocka_unit_test(test_master_not_incr_and_wide),
        cmocka_unit_test(test_master_payload_changed_while_stalled),
        cmocka_unit_test(test_master_wlast),
        cmocka_unit_test(test_master_valid_after_reset),
        cmocka_unit_test(test_slave_read_rules),
        cmocka_unit_test(test_slave_write_rules),
        cmocka_unit_test(test_lite_rules),
        cmocka_unit_test(test_quiet_shortcut),
        cmocka_unit_test(test_response_same_cycle),
        cmocka_unit_test(test_exokay),
        cmocka_unit_test(test_unrequested_b_never_taken),
        cmocka_unit_test(test_master_wlast_before_aw),
        cmocka_unit_test(test_master_wstrb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
