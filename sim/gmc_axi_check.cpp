// gmc_axi_check: see gmc_axi_check.h.
#include "gmc_axi_check.h"

#include <cstdio>

void AxiCheck::fail(uint64_t cycle, const char *what)
{
    if (count_++ == 0) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "cycle %llu: %s", static_cast<unsigned long long>(cycle), what);
        first_ = buf;
    }
}

void AxiCheck::reset_state()
{
    a_reads_.clear();
    a_writes_.clear();
    a_wdone_.clear();
    a_wbeats_ = 0;
    l_aw_ = l_w_ = l_b_ = l_ar_ = l_r_ = 0;
    m_aw_beats_.clear();
    m_wbeat_ = 0;
}

static bool any_valid(const AxiSample &s)
{
    return s.l_awvalid || s.l_wvalid || s.l_bvalid || s.l_arvalid || s.l_rvalid || s.a_awvalid || s.a_wvalid ||
           s.a_bvalid || s.a_arvalid || s.a_rvalid || s.m_awvalid || s.m_wvalid || s.m_bvalid || s.m_arvalid ||
           s.m_rvalid;
}

bool AxiCheck::edge_quiet(bool rst)
{
    // p_'s payloads are only read behind one of its valids, all low here.
    if (!have_prev_ || p_any_valid_) return false;
    if (rst) reset_state();
    p_.rst = rst;
    return true;
}

void AxiCheck::edge(const AxiSample &s, uint64_t c)
{
    if (s.rst) {
        reset_state();
        p_ = s;
        p_any_valid_ = any_valid(s);
        have_prev_ = true;
        return;
    }
    if (have_prev_ && p_.rst) {
        if (s.l_bvalid || s.l_rvalid) fail(c, "AXI4-Lite: valid high right after reset");
        if (s.a_bvalid || s.a_rvalid) fail(c, "aperture: valid high right after reset");
        if (s.m_awvalid || s.m_wvalid || s.m_arvalid) fail(c, "master: valid high right after reset");
    }
    if (have_prev_ && !p_.rst) {
        // Stability: a valid not taken stays, with its payload.
        if (p_.l_bvalid && !p_.l_bready && !(s.l_bvalid && s.l_bresp == p_.l_bresp))
            fail(c, "AXI4-Lite B dropped or changed while stalled");
        if (p_.l_rvalid && !p_.l_rready && !(s.l_rvalid && s.l_rdata == p_.l_rdata && s.l_rresp == p_.l_rresp))
            fail(c, "AXI4-Lite R dropped or changed while stalled");
        if (p_.a_bvalid && !p_.a_bready && !(s.a_bvalid && s.a_bresp == p_.a_bresp && s.a_bid == p_.a_bid))
            fail(c, "aperture B dropped or changed while stalled");
        if (p_.a_rvalid && !p_.a_rready &&
            !(s.a_rvalid && s.a_rdata == p_.a_rdata && s.a_rresp == p_.a_rresp && s.a_rid == p_.a_rid &&
              s.a_rlast == p_.a_rlast))
            fail(c, "aperture R dropped or changed while stalled");
        if (p_.m_awvalid && !p_.m_awready &&
            !(s.m_awvalid && s.m_awaddr == p_.m_awaddr && s.m_awlen == p_.m_awlen && s.m_awsize == p_.m_awsize &&
              s.m_awburst == p_.m_awburst && s.m_awid == p_.m_awid))
            fail(c, "master AW dropped or changed while stalled");
        if (p_.m_wvalid && !p_.m_wready &&
            !(s.m_wvalid && s.m_wdata == p_.m_wdata && s.m_wstrb == p_.m_wstrb && s.m_wlast == p_.m_wlast))
            fail(c, "master W dropped or changed while stalled");
        if (p_.m_arvalid && !p_.m_arready &&
            !(s.m_arvalid && s.m_araddr == p_.m_araddr && s.m_arlen == p_.m_arlen && s.m_arsize == p_.m_arsize &&
              s.m_arburst == p_.m_arburst && s.m_arid == p_.m_arid))
            fail(c, "master AR dropped or changed while stalled");
    }

    // AXI4-Lite: never a response without its request.
    if (s.l_awvalid && s.l_awready) l_aw_++;
    if (s.l_wvalid && s.l_wready) l_w_++;
    if (s.l_arvalid && s.l_arready) l_ar_++;
    if (s.l_bvalid && s.l_bready) {
        if (l_b_ >= l_aw_ || l_b_ >= l_w_) fail(c, "AXI4-Lite B without a write");
        l_b_++;
    }
    if (s.l_rvalid && s.l_rready) {
        if (l_r_ >= l_ar_) fail(c, "AXI4-Lite R without a read");
        l_r_++;
    }

    // Aperture slave.
    if (s.a_arvalid && s.a_arready) a_reads_.push_back(Burst{s.a_arid, s.a_arlen + 1u, 0});
    if (s.a_rvalid && s.a_rready) {
        if (a_reads_.empty()) {
            fail(c, "aperture R beat without a read burst");
        } else {
            Burst &b = a_reads_.front();
            if (s.a_rid != b.id) fail(c, "aperture RID differs from ARID");
            b.done++;
            if (s.a_rlast != (b.done == b.beats)) fail(c, "aperture RLAST not on the last beat");
            if (b.done == b.beats) a_reads_.pop_front();
        }
    }
    if (s.a_awvalid && s.a_awready) a_writes_.push_back(Burst{s.a_awid, s.a_awlen + 1u, 0});
    if (s.a_wvalid && s.a_wready) {
        // W beats belong to the oldest write whose data is not complete.
        size_t i = a_wdone_.size();
        if (i >= a_writes_.size()) {
            fail(c, "aperture accepted W data before its address");
        } else if (++a_writes_[i].done == a_writes_[i].beats) {
            a_wdone_.push_back(a_writes_[i].id);
        }
    }
    if (s.a_bvalid && s.a_bready) {
        if (a_wdone_.empty()) {
            fail(c, "aperture B before the burst's last W beat");
        } else {
            if (s.a_bid != a_wdone_.front()) fail(c, "aperture BID differs from AWID");
            a_wdone_.pop_front();
            a_writes_.pop_front();
        }
    }

    // Master.
    auto burst_ok = [&](uint64_t addr, unsigned len, unsigned size, unsigned burst, const char *ch) {
        char msg[96];
        if (size > 3) {
            std::snprintf(msg, sizeof msg, "master %s beat wider than the bus", ch);
            fail(c, msg);
        }
        if (burst != 1) {
            std::snprintf(msg, sizeof msg, "master %s burst is not INCR", ch);
            fail(c, msg);
        }
        const uint64_t first = addr & ~((1ull << size) - 1);
        const uint64_t last = first + (static_cast<uint64_t>(len) + 1) * (1ull << size) - 1;
        if ((first >> 12) != (last >> 12)) {
            std::snprintf(msg, sizeof msg, "master %s burst crosses 4 KiB", ch);
            fail(c, msg);
        }
    };
    if (s.m_arvalid && s.m_arready) burst_ok(s.m_araddr, s.m_arlen, s.m_arsize, s.m_arburst, "AR");
    if (s.m_awvalid && s.m_awready) {
        burst_ok(s.m_awaddr, s.m_awlen, s.m_awsize, s.m_awburst, "AW");
        m_aw_beats_.push_back(s.m_awlen + 1u);
    }
    if (s.m_wvalid && s.m_wready) {
        // AXI4 lets W lead AW; check WLAST once the burst length is known.
        m_wbeat_++;
        if (!m_aw_beats_.empty()) {
            const unsigned n = m_aw_beats_.front();
            if (m_wbeat_ > n) fail(c, "master sent more W beats than AWLEN");
            if (s.m_wlast != (m_wbeat_ == n)) fail(c, "master WLAST not on the last beat");
            if (m_wbeat_ == n || s.m_wlast) {
                m_aw_beats_.pop_front();
                m_wbeat_ = 0;
            }
        }
    }
    p_ = s;
    p_any_valid_ = any_valid(s);
    have_prev_ = true;
}
