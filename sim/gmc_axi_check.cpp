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
    // A response raised (not one still stalled from the last edge) needs
    // its request accepted at an earlier edge: never in the same cycle,
    // never without one (also when the master never takes it). The port
    // has no exclusive access: EXOKAY is never a legal answer.
    const bool new_b = s.bvalid && !(have_prev_ && p_.bvalid && !p_.bready);
    const bool new_r = s.rvalid && !(have_prev_ && p_.rvalid && !p_.rready);
    const bool hs_aw = s.awvalid && s.awready, hs_w = s.wvalid && s.wready, hs_ar = s.arvalid && s.arready;
    if (new_b) {
        if (b_ >= aw_ || b_ >= w_)
            log_.fail(c, (b_ < aw_ + hs_aw && b_ < w_ + hs_w) ? "AXI4-Lite B in the same cycle as its write"
                                                               : "AXI4-Lite B without a write");
        if (s.bresp == 1) log_.fail(c, "AXI4-Lite B with EXOKAY (no exclusive access)");
    }
    if (new_r) {
        if (r_ >= ar_)
            log_.fail(c, r_ < ar_ + hs_ar ? "AXI4-Lite R in the same cycle as its read" : "AXI4-Lite R without a read");
        if (s.rresp == 1) log_.fail(c, "AXI4-Lite R with EXOKAY (no exclusive access)");
    }
    aw_ += hs_aw;
    w_ += hs_w;
    ar_ += hs_ar;
    if (s.bvalid && s.bready) b_++;
    if (s.rvalid && s.rready) r_++;
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
    // A response raised (not one still stalled) needs its request
    // accepted at an earlier edge; the port has no AxLOCK, so every access
    // is a normal one and EXOKAY is never legal.
    const bool new_b = s.bvalid && !(have_prev_ && p_.bvalid && !p_.bready);
    const bool new_r = s.rvalid && !(have_prev_ && p_.rvalid && !p_.rready);
    if (new_r) {
        if (reads_.empty())
            log_.fail(c, s.arvalid && s.arready ? "aperture R in the same cycle as its read request"
                                                : "aperture R beat without a read burst");
        if (s.rresp == 1) log_.fail(c, "aperture R with EXOKAY on a non-exclusive read");
    }
    if (new_b) {
        if (wdone_.empty())
            log_.fail(c, (s.awvalid && s.awready) || (s.wvalid && s.wready)
                             ? "aperture B in the same cycle as its write"
                             : "aperture B before the burst's last W beat");
        if (s.bresp == 1) log_.fail(c, "aperture B with EXOKAY on a non-exclusive write");
    }
    const bool r_owed = !reads_.empty(), b_owed = !wdone_.empty();
    if (s.arvalid && s.arready) reads_.push_back(Burst{s.arid, s.arlen + 1u, 0});
    if (s.rvalid && s.rready) {
        if (!r_owed) {
            // reported when it was raised
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
        if (!b_owed) {
            // reported when it was raised
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
    aw_.clear();
    wq_.clear();
    wbeat_ = 0;
}

// The byte lanes beat k of a burst may strobe (AXI4 A3.4.3): the bytes
// from the beat's address up to the end of its 2^size container, on an
// 8-byte bus. The first beat starts at the burst's (maybe unaligned)
// address, later ones at aligned addresses.
static unsigned beat_lanes(uint64_t addr, unsigned size, unsigned k)
{
    const uint64_t bytes = 1ull << size;
    const uint64_t aligned = addr & ~(bytes - 1);
    const uint64_t a = k == 0 ? addr : aligned + static_cast<uint64_t>(k) * bytes;
    const unsigned lo = static_cast<unsigned>(a & 7u);
    const unsigned hi = static_cast<unsigned>(((a & ~(bytes - 1)) & 7u) + bytes);
    return ((1u << hi) - 1u) & ~((1u << lo) - 1u) & 0xFFu;
}

// Match W beats with the bursts announced on AW, in order, as both are
// known: WLAST on exactly the last beat, no more beats than AWLEN, and
// strobes only on the beat's lanes. (AXI4 lets W beats come before their
// AW; they wait in wq_ until it arrives.)
void AxiMasterCheck::drain(uint64_t c)
{
    while (!aw_.empty() && !wq_.empty()) {
        const Wbeat w = wq_.front();
        wq_.pop_front();
        const AwInfo &a = aw_.front();
        const unsigned k = wbeat_++;
        if (a.size <= 3 && (w.strb & ~beat_lanes(a.addr, a.size, k)) != 0)
            log_.fail(c, "master WSTRB outside the beat's byte lanes (AWSIZE, AWADDR)");
        if (w.last != (wbeat_ == a.beats)) log_.fail(c, "master WLAST not on the last beat");
        if (wbeat_ == a.beats || w.last) {
            aw_.pop_front();
            wbeat_ = 0;
        }
    }
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
        aw_.push_back(AwInfo{s.awaddr, s.awlen + 1u, s.awsize});
    }
    if (s.wvalid && s.wready) wq_.push_back(Wbeat{s.wstrb, s.wlast});
    drain(c);
    keep(s);
}
