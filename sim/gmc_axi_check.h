// gmc_axi_check: an always-on AXI protocol monitor for the model's ports.
//
// Fed the signals of every clock edge (what cycle() samples), it checks
// the rules the RTL side of each port must keep:
//   - a valid, once raised, stays until its handshake, with a stable
//     payload (every channel the RTL drives);
//   - valids are low in the cycle after a reset edge;
//   - slaves: one response per request, raised at an edge after its
//     request's (never in the same cycle, never unrequested, whether or
//     not the master takes it), RLAST on exactly the last beat of the
//     burst, B only after the burst's last W beat, IDs as requested, and
//     never EXOKAY (neither port supports exclusive access);
//   - the master: bursts never cross 4 KiB, beats are at most 8 bytes,
//     WLAST on exactly the last beat of its burst and WSTRB only on the
//     beat's byte lanes (W beats that come before their AW are checked
//     when it arrives), at most the announced number of beats, only INCR
//     bursts.
// Each port has its own checker, fed only while that port is busy: an
// edge at which every valid of the port is low, after an edge at which
// they were low too, can break no rule and has no handshake, so the
// caller passes just the reset level (edge_quiet). The first violation's
// text and a count are kept, over all ports (within one edge the ports
// are checked in the order register port, aperture, master); nothing is
// printed.
#ifndef GMC_AXI_CHECK_H
#define GMC_AXI_CHECK_H

#include <cstdint>
#include <deque>
#include <string>

// AXI4-Lite slave (registers).
struct AxiLiteSample {
    bool awvalid, awready, wvalid, wready, bvalid, bready;
    bool arvalid, arready, rvalid, rready;
    uint32_t rdata;
    uint8_t bresp, rresp;
    bool rst;
};

// AXI4 slave (aperture).
struct AxiSlaveSample {
    bool awvalid, awready, wvalid, wready, bvalid, bready;
    bool arvalid, arready, rvalid, rready, rlast;
    uint32_t awid, arid, bid, rid;
    uint8_t awlen, arlen, bresp, rresp;
    uint64_t rdata;
    bool rst;
};

// AXI4 master (DMA).
struct AxiMasterSample {
    bool awvalid, awready, wvalid, wready, bvalid, bready;
    bool arvalid, arready, rvalid, rready, wlast;
    uint32_t awid, arid;
    uint64_t awaddr, araddr, wdata;
    uint8_t awlen, arlen, awsize, arsize, awburst, arburst, wstrb;
    bool rst;
};

// The handshakes of one edge on a port (valid and ready both high).
struct AxiHandshakes {
    bool aw, w, b, ar, r;
    bool any() const { return aw || w || b || ar || r; }
};

// Any of the port's five valids high; and its handshakes. (Every sample
// type names its channels alike.)
template <typename S>
bool axi_any_valid(const S &s)
{
    return s.awvalid || s.wvalid || s.bvalid || s.arvalid || s.rvalid;
}
template <typename S>
AxiHandshakes axi_handshakes(const S &s)
{
    return AxiHandshakes{s.awvalid && s.awready, s.wvalid && s.wready, s.bvalid && s.bready,
                         s.arvalid && s.arready, s.rvalid && s.rready};
}

// Violations of all the ports: a count and the first one's text.
class AxiLog {
public:
    void fail(uint64_t cycle, const char *what);
    uint64_t violations() const { return count_; }
    const std::string &first() const { return first_; }

private:
    uint64_t count_ = 0;
    std::string first_;
};

// What every port's checker D shares: the previous edge's sample, and the
// cheap form of an edge at which every valid of the port is low.
template <typename S, typename D>
class AxiPortCheck {
public:
    explicit AxiPortCheck(AxiLog &log) : log_(log) {}
    // When the previous edge had every valid low too, no rule can fail and
    // no handshake happens: only the reset state is kept. Returns false
    // (and does nothing) otherwise; then edge() must be called.
    bool edge_quiet(bool rst)
    {
        if (!have_prev_ || p_any_) return false;
        if (rst) static_cast<D *>(this)->reset();
        p_.rst = rst;
        return true;
    }

protected:
    // Called by edge(): p_ becomes this sample.
    void keep(const S &s)
    {
        p_ = s;
        p_any_ = axi_any_valid(s);
        have_prev_ = true;
    }
    AxiLog &log_;
    bool have_prev_ = false;
    bool p_any_ = true;  // some valid of p_ is high
    S p_{};
};

class AxiLiteCheck : public AxiPortCheck<AxiLiteSample, AxiLiteCheck> {
public:
    using AxiPortCheck::AxiPortCheck;
    void reset();
    void edge(const AxiLiteSample &s, uint64_t cycle);

private:
    unsigned aw_ = 0, w_ = 0, b_ = 0, ar_ = 0, r_ = 0;
};

class AxiSlaveCheck : public AxiPortCheck<AxiSlaveSample, AxiSlaveCheck> {
public:
    using AxiPortCheck::AxiPortCheck;
    void reset();
    void edge(const AxiSlaveSample &s, uint64_t cycle);

private:
    // Outstanding bursts in order of acceptance.
    struct Burst {
        uint32_t id;
        unsigned beats;
        unsigned done;
    };
    std::deque<Burst> reads_, writes_;
    std::deque<unsigned> wdone_;  // writes whose data is complete, awaiting B
};

class AxiMasterCheck : public AxiPortCheck<AxiMasterSample, AxiMasterCheck> {
public:
    using AxiPortCheck::AxiPortCheck;
    void reset();
    void edge(const AxiMasterSample &s, uint64_t cycle);

private:
    void burst_ok(uint64_t c, uint64_t addr, unsigned len, unsigned size, unsigned burst, const char *ch);
    void drain(uint64_t c);
    // Write bursts announced on AW and not yet complete; W beats sent and
    // not yet matched with their AW; beats of aw_.front() matched so far.
    struct AwInfo {
        uint64_t addr;
        unsigned beats, size;
    };
    struct Wbeat {
        uint8_t strb;
        bool last;
    };
    std::deque<AwInfo> aw_;
    std::deque<Wbeat> wq_;
    unsigned wbeat_ = 0;
};

// The three ports' checkers over one log.
struct AxiCheck {
    AxiLog log;
    AxiLiteCheck lite{log};
    AxiSlaveCheck slave{log};
    AxiMasterCheck master{log};
    uint64_t violations() const { return log.violations(); }
    const std::string &first() const { return log.first(); }
};

#endif
