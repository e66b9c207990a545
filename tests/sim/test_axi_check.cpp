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
    s.bvalid = true;
    s.bready = false;
    s.bid = 1;
    e.slave.edge(s, 1);
    s.bid = 2;
    e.slave.edge(s, 2);
    assert_true(has(e, "aperture B dropped or changed while stalled"));
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
