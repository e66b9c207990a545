// gmc_axi_check: an always-on AXI protocol monitor for the model's ports.
//
// Fed the signals of every clock edge (what cycle() samples), it checks
// the rules the RTL side of each port must keep:
//   - a valid, once raised, stays until its handshake, with a stable
//     payload (every channel the RTL drives);
//   - valids are low in the cycle after a reset edge;
//   - slaves: one response per request, RLAST on exactly the last beat of
//     the burst, B only after the burst's last W beat, IDs as requested;
//   - the master: bursts never cross 4 KiB, beats are at most 8 bytes,
//     WLAST on exactly the last beat of its burst, at most the announced
//     number of beats, only INCR bursts.
// The first violation's text and a count are kept; nothing is printed.
#ifndef GMC_AXI_CHECK_H
#define GMC_AXI_CHECK_H

#include <cstdint>
#include <deque>
#include <string>

struct AxiSample {
    // AXI4-Lite slave (registers).
    bool l_awvalid, l_awready, l_wvalid, l_wready, l_bvalid, l_bready;
    bool l_arvalid, l_arready, l_rvalid, l_rready;
    uint32_t l_rdata;
    uint8_t l_bresp, l_rresp;
    // AXI4 slave (aperture).
    bool a_awvalid, a_awready, a_wvalid, a_wready, a_bvalid, a_bready;
    bool a_arvalid, a_arready, a_rvalid, a_rready, a_rlast;
    uint32_t a_awid, a_arid, a_bid, a_rid;
    uint8_t a_awlen, a_arlen, a_bresp, a_rresp;
    uint64_t a_rdata;
    // AXI4 master (DMA).
    bool m_awvalid, m_awready, m_wvalid, m_wready, m_bvalid, m_bready;
    bool m_arvalid, m_arready, m_rvalid, m_rready, m_wlast;
    uint32_t m_awid, m_arid;
    uint64_t m_awaddr, m_araddr, m_wdata;
    uint8_t m_awlen, m_arlen, m_awsize, m_arsize, m_awburst, m_arburst, m_wstrb;
    bool rst;
};

class AxiCheck {
public:
    void edge(const AxiSample &s, uint64_t cycle);
    // The cheap form of edge() for an edge at which every valid is low:
    // when the previous edge had every valid low too, no rule can fail and
    // no handshake happens, so only the reset state is kept. Returns false
    // (and does nothing) otherwise; then edge() must be called.
    bool edge_quiet(bool rst);
    void reset_state();
    uint64_t violations() const { return count_; }
    const std::string &first() const { return first_; }

private:
    void fail(uint64_t cycle, const char *what);
    bool have_prev_ = false;
    AxiSample p_{};
    bool p_any_valid_ = true;          // some valid of p_ is high
    uint64_t count_ = 0;
    std::string first_;
    // Aperture slave: outstanding bursts in order of acceptance.
    struct Burst {
        uint32_t id;
        unsigned beats;
        unsigned done;
    };
    std::deque<Burst> a_reads_, a_writes_;
    unsigned a_wbeats_ = 0;            // W beats of the oldest unanswered write
    std::deque<unsigned> a_wdone_;     // writes whose data is complete, awaiting B
    // AXI4-Lite slave.
    unsigned l_aw_ = 0, l_w_ = 0, l_b_ = 0, l_ar_ = 0, l_r_ = 0;
    // Master: write bursts announced on AW, and W beats sent.
    std::deque<unsigned> m_aw_beats_;
    unsigned m_wbeat_ = 0;
};

#endif
