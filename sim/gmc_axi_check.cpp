// gmc_axi_check: see gmc_axi_check.h.
#include "gmc_axi_check.h"

#include <cstdio>

void AxiLog::fail(uint64_t cycle, const char *what)
{
    if (count_++ == 0) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "cycle %llu: %s", static_cast<unsigned long long>(cycle), what);
        first_ = buf;
    }
}

// ------------------------------------------------------------ AXI4-Lite

void AxiLiteCheck::reset()
{
    aw_ = w_ = b_ = ar_ = r_ = 0;
}

void AxiLiteCheck::edge(const AxiLiteSample &s, uint64_t c)
{
    if (s.rst) {
        reset();
        keep(s);
        return;
    }
    if (have_prev_ && p_.rst && (s.bvalid || s.rvalid)) log_.fail(c, "AXI4-Lite: valid high right after reset");
    if (have_prev_ && !p_.rst) {
        // Stability: a valid not taken stays, with its payload.
        if (p_.bvalid && !p_.bready && !(s.bvalid && s.bresp == p_.bresp))
            log_.fail(c, "AXI4-Lite B dropped or changed while stalled");
        if (p_.rvalid && !p_.rready && !(s.rvalid && s.rdata == p_.rdata && s.rresp == p_.rresp))
            log_.fail(c, "AXI4-Lite R dropped or changed while stalled");
    }
    // Never a response without its request.
    if (s.awvalid && s.awready) aw_++;
    if (s.wvalid && s.wready) w_++;
    if (s.arvalid && s.arready) ar_++;
    if (s.bvalid && s.bready) {
        if (b_ >= aw_ || b_ >= w_) log_.fail(c, "AXI4-Lite B without a write");
        b_++;
    }
    if (s.rvalid && s.rready) {
        if (r_ >= ar_) log_.fail(c, "AXI4-Lite R without a read");
        r_++;
    }
    keep(s);
}

// ------------------------------------------------------ aperture slave

void AxiSlaveCheck::reset()
{
    reads_.clear();
    writes_.clear();
    wdone_.clear();
}

void AxiSlaveCheck::edge(const AxiSlaveSample &s, uint64_t c)
{
    if (s.rst) {
        reset();
        keep(s);
        return;
    }
    if (have_prev_ && p_.rst && (s.bvalid || s.rvalid)) log_.fail(c, "aperture: valid high right after reset");
    if (have_prev_ && !p_.rst) {
        if (p_.bvalid && !p_.bready && !(s.bvalid && s.bresp == p_.bresp && s.bid == p_.bid))
            log_.fail(c, "aperture B dropped or changed while stalled");
        if (p_.rvalid && !p_.rready &&
            !(s.rvalid && s.rdata == p_.rdata && s.rresp == p_.rresp && s.rid == p_.rid && s.rlast == p_.rlast))
            log_.fail(c, "aperture R dropped or changed while stalled");
    }
    if (s.arvalid && s.arready) reads_.push_back(Burst{s.arid, s.arlen + 1u, 0});
    if (s.rvalid && s.rready) {
        if (reads_.empty()) {
            log_.fail(c, "aperture R beat without a read burst");
        } else {
            Burst &b = reads_.front();
            if (s.rid != b.id) log_.fail(c, "aperture RID differs from ARID");
            b.done++;
            if (s.rlast != (b.done == b.beats)) log_.fail(c, "aperture RLAST not on the last beat");
            if (b.done == b.beats) reads_.pop_front();
        }
    }
    if (s.awvalid && s.awready) writes_.push_back(Burst{s.awid, s.awlen + 1u, 0});
    if (s.wvalid && s.wready) {
        // W beats belong to the oldest write whose data is not complete.
        size_t i = wdone_.size();
        if (i >= writes_.size()) {
            log_.fail(c, "aperture accepted W data before its address");
        } else if (++writes_[i].done == writes_[i].beats) {
            wdone_.push_back(writes_[i].id);
        }
    }
    if (s.bvalid && s.bready) {
        if (wdone_.empty()) {
            log_.fail(c, "aperture B before the burst's last W beat");
        } else {
            if (s.bid != wdone_.front()) log_.fail(c, "aperture BID differs from AWID");
            wdone_.pop_front();
            writes_.pop_front();
        }
    }
    keep(s);
}

// ---------------------------------------------------------- DMA master

void AxiMasterCheck::reset()
{
    aw_beats_.clear();
    wbeat_ = 0;
}

void AxiMasterCheck::burst_ok(uint64_t c, uint64_t addr, unsigned len, unsigned size, unsigned burst, const char *ch)
{
    char msg[96];
    if (size > 3) {
        std::snprintf(msg, sizeof msg, "master %s beat wider than the bus", ch);
        log_.fail(c, msg);
    }
    if (burst != 1) {
        std::snprintf(msg, sizeof msg, "master %s burst is not INCR", ch);
        log_.fail(c, msg);
    }
    const uint64_t first = addr & ~((1ull << size) - 1);
    const uint64_t last = first + (static_cast<uint64_t>(len) + 1) * (1ull << size) - 1;
    if ((first >> 12) != (last >> 12)) {
        std::snprintf(msg, sizeof msg, "master %s burst crosses 4 KiB", ch);
        log_.fail(c, msg);
    }
}

void AxiMasterCheck::edge(const AxiMasterSample &s, uint64_t c)
{
    if (s.rst) {
        reset();
        keep(s);
        return;
    }
    if (have_prev_ && p_.rst && (s.awvalid || s.wvalid || s.arvalid))
        log_.fail(c, "master: valid high right after reset");
    if (have_prev_ && !p_.rst) {
        if (p_.awvalid && !p_.awready &&
            !(s.awvalid && s.awaddr == p_.awaddr && s.awlen == p_.awlen && s.awsize == p_.awsize &&
              s.awburst == p_.awburst && s.awid == p_.awid))
            log_.fail(c, "master AW dropped or changed while stalled");
        if (p_.wvalid && !p_.wready &&
            !(s.wvalid && s.wdata == p_.wdata && s.wstrb == p_.wstrb && s.wlast == p_.wlast))
            log_.fail(c, "master W dropped or changed while stalled");
        if (p_.arvalid && !p_.arready &&
            !(s.arvalid && s.araddr == p_.araddr && s.arlen == p_.arlen && s.arsize == p_.arsize &&
              s.arburst == p_.arburst && s.arid == p_.arid))
            log_.fail(c, "master AR dropped or changed while stalled");
    }
    if (s.arvalid && s.arready) burst_ok(c, s.araddr, s.arlen, s.arsize, s.arburst, "AR");
    if (s.awvalid && s.awready) {
        burst_ok(c, s.awaddr, s.awlen, s.awsize, s.awburst, "AW");
        aw_beats_.push_back(s.awlen + 1u);
    }
    if (s.wvalid && s.wready) {
        // AXI4 lets W lead AW; check WLAST once the burst length is known.
        wbeat_++;
        if (!aw_beats_.empty()) {
            const unsigned n = aw_beats_.front();
            if (wbeat_ > n) log_.fail(c, "master sent more W beats than AWLEN");
            if (s.wlast != (wbeat_ == n)) log_.fail(c, "master WLAST not on the last beat");
            if (wbeat_ == n || s.wlast) {
                aw_beats_.pop_front();
                wbeat_ = 0;
            }
        }
    }
    keep(s);
}
