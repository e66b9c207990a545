// gmc_sim: an extern "C" shim over the Verilated gmc_top (see gmc_sim.h).
//
// One clock cycle is: clk low, eval (combinational outputs settle on the
// inputs the drivers set), sample every handshake (valid && ready) and the
// payloads the model drives, clk high, eval (the rising edge). The drivers
// and the host-memory model then react to what was sampled and set the
// inputs for the next cycle. Each handle owns its VerilatedContext, so
// handles are independent. C++ is confined to this file.

#include "gmc_sim.h"
#include "gmc_axi_check.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "Vgmc_top.h"
#include "Vgmc_top___024root.h"
#include "verilated.h"
#include "verilated_fst_c.h"

namespace {

constexpr uint32_t kDefaultLatency = 100;
constexpr uint32_t kDefaultTimeout = 100000;
constexpr uint64_t kHalfPeriodPs = 5000;  // waveform time: 10 ns per cycle
constexpr size_t kMaxOutstanding = 16;     // host-memory requests per direction
// Host memory holds the bus's bytes in order, and the host-memory model
// moves whole 8-byte beats with memcpy: bus (AXI) and host byte order agree.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the host-memory model needs a little-endian host");
constexpr int kRespOkay = 0, kRespSlverr = 2, kRespDecerr = 3;

struct Region {
    uint64_t bus;
    uint8_t *ptr;
    uint64_t len;
};

struct Inject {
    uint64_t bus, len;
    int kind;
};

// One burst of the controller's AXI4 master.
struct HostBurst {
    uint32_t id;
    uint64_t addr;  // address of the next beat
    uint32_t len;   // beats - 1
    uint32_t size;
    uint32_t burst;
    uint32_t beat;  // next beat index
    uint64_t ready_at;
    bool hang;
    int resp;       // write: worst response so far; read: SLVERR once released
    bool beat_started() const { return beat != 0; }
};

struct BResp {
    uint32_t id;
    int resp;
    uint64_t ready_at;
    bool hang;
    bool beat_started() const { return false; }
};

// What the last cycle sampled just before its rising edge.
struct Sampled {
    AxiHandshakes l;                  // AXI4-Lite
    uint32_t l_rdata;
    int l_rresp, l_bresp;
    AxiHandshakes a;                  // aperture
    uint64_t a_rdata;
    int a_rresp, a_bresp;
    bool a_rlast;
    AxiHandshakes m;                  // master
};

uint64_t beat_addr_next(uint64_t addr, uint32_t len, uint32_t size, uint32_t burst)
{
    const uint64_t bytes = 1ull << size;
    const uint64_t nxt = (addr & ~(bytes - 1)) + bytes;
    if (burst == 0) return addr;
    if (burst == 2) {
        const uint64_t span = bytes * (len + 1ull);
        const uint64_t base = addr & ~(span - 1);
        return nxt == base + span ? base : nxt;
    }
    return nxt;
}

}  // namespace

struct gmc_sim {
    VerilatedContext *ctx = nullptr;
    Vgmc_top *top = nullptr;
    VerilatedFstC *tfp = nullptr;
    uint64_t trace_start = 0, trace_end = 0;
    gmc_sim_config cfg{};
    uint64_t cycles = 0;
    Sampled s{};
    std::vector<Region> regions;
    std::vector<Inject> injects;
    // (Vectors: at most a few dozen entries, indexed every cycle.)
    std::vector<HostBurst> rd_q;  // accepted reads, in order
    std::vector<HostBurst> wr_q;  // accepted writes waiting for data
    std::vector<BResp> b_q;
    long r_sel = -1;             // rd_q entry driven on R this cycle
    long b_sel = -1;             // b_q entry driven on B this cycle
    gmc_sim_irq_fn irq_fn = nullptr;
    void *irq_user = nullptr;
    int irq_level = 0;
    gmc_sim_stats st{};
    AxiCheck check;
    // An input changed since the last eval (see cycle()).
    bool in_dirty = true;
};

namespace {

const Region *find_region(const gmc_sim *sim, uint64_t addr, uint64_t n)
{
    for (const Region &r : sim->regions)
        if (addr >= r.bus && addr - r.bus < r.len && n <= r.len - (addr - r.bus)) return &r;
    return nullptr;
}

// Injected behaviour for [addr, addr + n): 0 none, else the kind.
int find_inject(const gmc_sim *sim, uint64_t addr, uint64_t n)
{
    int kind = 0;
    for (const Inject &in : sim->injects)
        if (addr < in.bus + in.len && in.bus < addr + n) kind = in.kind > kind ? in.kind : kind;
    return kind;
}

bool burst_hangs(const gmc_sim *sim, uint64_t addr, uint32_t len, uint32_t size, uint32_t burst)
{
    for (uint32_t i = 0; i <= len; i++) {
        if (find_inject(sim, addr, 1ull << size) == GMC_SIM_INJECT_HANG) return true;
        addr = beat_addr_next(addr, len, size, burst);
    }
    return false;
}

// Drive an input; note whether it changed (cycle() evaluates the model
// before sampling only when some input did).
template <typename F, typename V>
inline void drive(gmc_sim *sim, F &field, V v)
{
    if (field != static_cast<F>(v)) {
        field = static_cast<F>(v);
        sim->in_dirty = true;
    }
}

// The scheduler shortcut: the shim runs the steps eval() would run on a
// clock edge itself, and skips eval()'s trigger loops (docs/sim.md, The
// cycle). It relies on Verilator 5.006's scheduler members and on the
// layout of gmc_top's generated scheduler, which the build checks:
// tools/check_sched.py writes gmc_sched.h with the trigger numbers and the
// gated clock's members (GMC_SCHED_*) when the layout is the expected one.
// Any other Verilator version or layout, and any run with a waveform
// open, gets the real eval().
#include "gmc_sched.h"
#if GMC_SIM_SCHED_SHORTCUT && defined(VERILATOR_VERSION_INTEGER) && VERILATOR_VERSION_INTEGER == 5006000
#define GMC_SIM_SHORTCUT_ON 1
}  // namespace
void Vgmc_top___024root___eval_nba(Vgmc_top___024root *vlSelf);
void Vgmc_top___024root___eval_ico(Vgmc_top___024root *vlSelf);
namespace {

// clk falls: gclk falls with it, and the gate samples its enable. When
// the drivers changed inputs since the last eval (dirty), the input-
// combinational pass runs first, once, as eval() runs it (its trigger is
// "first iteration"); it settles the outputs on the new inputs and can
// fire no edge but clk's own.
bool negedge_only(Vgmc_top *t, bool dirty)
{
    Vgmc_top___024root *r = t->rootp;
    t->clk = 0;
    if (dirty) {
        r->__VicoTriggered.clear();
        r->__VicoTriggered.at(0) = 1;
        Vgmc_top___024root___eval_ico(r);
    }
    if (!r->__Vtrigrprev__TOP__clk) return true;  // not an edge: eval would do no more
    r->__Vtrigrprev__TOP__clk = 0;
    r->GMC_SCHED_GCLK = 0;
    r->GMC_SCHED_GCLK_PREV = 0;
    r->__VnbaTriggered.clear();
    r->__VnbaTriggered.at(GMC_SCHED_CLK_FALL) = 1;
    Vgmc_top___024root___eval_nba(r);
    return true;
}

// clk rises: gclk rises with it when the gate is open.
bool posedge_only(Vgmc_top *t)
{
    Vgmc_top___024root *r = t->rootp;
    t->clk = 1;
    if (r->__Vtrigrprev__TOP__clk) return true;
    r->__Vtrigrprev__TOP__clk = 1;
    r->GMC_SCHED_GCLK = r->GMC_SCHED_GATE_EN;
    r->__VnbaTriggered.clear();
    r->__VnbaTriggered.at(GMC_SCHED_CLK_RISE) = 1;
    if (r->GMC_SCHED_GCLK && !r->GMC_SCHED_GCLK_PREV) r->__VnbaTriggered.at(GMC_SCHED_GCLK_RISE) = 1;
    r->GMC_SCHED_GCLK_PREV = r->GMC_SCHED_GCLK;
    Vgmc_top___024root___eval_nba(r);
    return true;
}
#else
bool negedge_only(Vgmc_top *, bool)
{
    return false;
}
bool posedge_only(Vgmc_top *)
{
    return false;
}
#endif

// Drive one of the master's R and B inputs. The DMA engine takes them
// through registers, and when check_sched.py found them read only by the
// clocked region (GMC_SCHED_RB_SAMPLED), a change of them alone needs no
// input pass before the next edge: the clocked region reads them there.
// (Streaming reads change them in almost every cycle.)
template <typename F, typename V>
inline void drive_sampled(gmc_sim *sim, F &field, V v)
{
#if defined(GMC_SIM_SHORTCUT_ON) && GMC_SCHED_RB_SAMPLED
    field = static_cast<F>(v);
    (void)sim;
#else
    drive(sim, field, v);
#endif
}

void trace_dump(gmc_sim *sim, uint64_t t)
{
    if (sim->tfp && sim->cycles >= sim->trace_start) sim->tfp->dump(t);
}

void trace_finish(gmc_sim *sim)
{
    if (sim->tfp) {
        sim->tfp->close();
        delete sim->tfp;
        sim->tfp = nullptr;
    }
}

// The response to drive next: AXI keeps order only among the same ID, so
// the first ready entry with no older entry of its ID goes. A hung entry
// blocks only its own ID. A read burst that has started runs to its end.
template <typename Q, typename Ready>
long pick(const Q &q, Ready ready)
{
    for (size_t i = 0; i < q.size(); i++) {
        if (q[i].beat_started()) return static_cast<long>(i);
    }
    for (size_t i = 0; i < q.size(); i++) {
        bool older_same_id = false;
        for (size_t k = 0; k < i; k++)
            if (q[k].id == q[i].id) older_same_id = true;
        if (!older_same_id && !q[i].hang && ready(q[i])) return static_cast<long>(i);
    }
    return -1;
}

// Drive the master-side outputs of the host-memory model for the next cycle.
void host_drive(gmc_sim *sim)
{
    Vgmc_top *t = sim->top;
    drive(sim, t->m_axi_arready, sim->rd_q.size() < kMaxOutstanding);
    drive(sim, t->m_axi_awready, sim->wr_q.size() < kMaxOutstanding);
    drive(sim, t->m_axi_wready, !sim->wr_q.empty());

    const uint64_t now = sim->cycles;
    sim->r_sel = pick(sim->rd_q, [now](const HostBurst &h) { return h.ready_at <= now; });
    if (sim->r_sel >= 0) {
        const HostBurst &h = sim->rd_q[static_cast<size_t>(sim->r_sel)];
        {
            const uint64_t bytes = 1ull << h.size;
            const uint64_t lane0 = h.addr & ~(bytes - 1);
            int resp = kRespOkay;
            uint64_t data = 0;
            const int inj = find_inject(sim, lane0, bytes);
            if (h.resp != kRespOkay) {
                resp = h.resp;  // released after a hang (gmc_sim_host_release)
            } else if (inj == GMC_SIM_INJECT_SLVERR || inj == GMC_SIM_INJECT_DECERR) {
                resp = inj;
            } else if (const Region *r = find_region(sim, h.addr & ~7ull, 8)) {
                std::memcpy(&data, r->ptr + ((h.addr & ~7ull) - r->bus), 8);
            } else if (const Region *r2 = find_region(sim, lane0, bytes)) {
                // A narrow beat at the edge of a region: fill only its lanes.
                std::memcpy(reinterpret_cast<uint8_t *>(&data) + (lane0 & 7),
                            r2->ptr + (lane0 - r2->bus), bytes);
            } else {
                resp = kRespDecerr;
            }
            drive_sampled(sim, t->m_axi_rvalid, 1);
            drive_sampled(sim, t->m_axi_rid, h.id);
            drive_sampled(sim, t->m_axi_rdata, data);
            drive_sampled(sim, t->m_axi_rresp, resp);
            drive_sampled(sim, t->m_axi_rlast, h.beat == h.len);
        }
    } else {
        drive_sampled(sim, t->m_axi_rvalid, 0);
    }

    sim->b_sel = pick(sim->b_q, [now](const BResp &b) { return b.ready_at <= now; });
    if (sim->b_sel >= 0) {
        const BResp &b = sim->b_q[static_cast<size_t>(sim->b_sel)];
        drive_sampled(sim, t->m_axi_bvalid, 1);
        drive_sampled(sim, t->m_axi_bid, b.id);
        drive_sampled(sim, t->m_axi_bresp, b.resp);
    } else {
        drive_sampled(sim, t->m_axi_bvalid, 0);
    }
}

// React to the master handshakes sampled in the cycle that just ended.
void host_update(gmc_sim *sim, const HostBurst &ar, const HostBurst &aw, uint64_t wdata,
                 unsigned wstrb, bool wlast)
{
    const Sampled &s = sim->s;
    if (s.m.r) {
        HostBurst &h = sim->rd_q[static_cast<size_t>(sim->r_sel)];
        sim->st.host_read_beats++;
        if (sim->top->m_axi_rresp != kRespOkay) sim->st.host_errors++;
        if (h.beat == h.len) {
            sim->rd_q.erase(sim->rd_q.begin() + sim->r_sel);
        } else {
            h.beat++;
            h.addr = beat_addr_next(h.addr, h.len, h.size, h.burst);
        }
    }
    if (s.m.ar) sim->rd_q.push_back(ar);
    if (s.m.aw) sim->wr_q.push_back(aw);
    if (s.m.w) {
        HostBurst &h = sim->wr_q.front();
        const uint64_t bytes = 1ull << h.size;
        const uint64_t lane0 = h.addr & ~(bytes - 1);
        const int inj = find_inject(sim, lane0, bytes);
        sim->st.host_write_beats++;
        if (inj == GMC_SIM_INJECT_SLVERR || inj == GMC_SIM_INJECT_DECERR) {
            h.resp = h.resp > inj ? h.resp : inj;
        } else if (inj == GMC_SIM_INJECT_HANG) {
            h.hang = true;
        } else {
            const uint64_t word = h.addr & ~7ull;
            // One lookup for the whole word, byte by byte only at a
            // region's edge.
            const Region *whole = find_region(sim, word, 8);
            if (whole && wstrb == 0xFFu) {
                std::memcpy(whole->ptr + (word - whole->bus), &wdata, 8);  // a whole word
            } else {
                for (unsigned i = 0; i < 8; i++) {
                    if (!(wstrb >> i & 1)) continue;
                    const Region *r = whole ? whole : find_region(sim, word + i, 1);
                    if (r)
                        r->ptr[word + i - r->bus] = static_cast<uint8_t>(wdata >> (8 * i));
                    else
                        h.resp = kRespDecerr;
                }
            }
        }
        if (h.beat == h.len || wlast) {
            if (h.resp != kRespOkay) sim->st.host_errors++;
            sim->b_q.push_back(BResp{h.id, h.resp, sim->cycles + sim->cfg.host_latency, h.hang});
            sim->wr_q.erase(sim->wr_q.begin());
        } else {
            h.beat++;
            h.addr = beat_addr_next(h.addr, h.len, h.size, h.burst);
        }
    }
    if (s.m.b) sim->b_q.erase(sim->b_q.begin() + sim->b_sel);
    host_drive(sim);
}

void cycle(gmc_sim *sim)
{
    Vgmc_top *t = sim->top;
    Sampled &s = sim->s;

    // clk low: the combinational outputs settle on the inputs the drivers
    // set. When no input changed since the last eval, the model already
    // holds exactly that state and only the falling edge's flop runs.
    if (sim->tfp || !negedge_only(t, sim->in_dirty)) {
        t->clk = 0;
        t->eval();
    }
    sim->in_dirty = false;
    trace_dump(sim, sim->cycles * 2 * kHalfPeriodPs + kHalfPeriodPs);

    // Sample each port's handshakes and feed its protocol checker. A port
    // with every valid low has no handshake and nothing to check (when it
    // had none at the previous edge either), so its payloads are not read:
    // in most cycles only one port, or none, is busy.
    const bool rst = t->rst != 0;
    const bool l_any = t->s_axil_awvalid | t->s_axil_wvalid | t->s_axil_bvalid | t->s_axil_arvalid |
                       t->s_axil_rvalid;
    if (!l_any && sim->check.lite.edge_quiet(rst)) {
        s.l = AxiHandshakes{};
    } else {
        AxiLiteSample a;
        a.awvalid = t->s_axil_awvalid; a.awready = t->s_axil_awready;
        a.wvalid = t->s_axil_wvalid; a.wready = t->s_axil_wready;
        a.bvalid = t->s_axil_bvalid; a.bready = t->s_axil_bready;
        a.arvalid = t->s_axil_arvalid; a.arready = t->s_axil_arready;
        a.rvalid = t->s_axil_rvalid; a.rready = t->s_axil_rready;
        a.rdata = t->s_axil_rdata; a.bresp = t->s_axil_bresp; a.rresp = t->s_axil_rresp;
        a.rst = rst;
        sim->check.lite.edge(a, sim->cycles);
        s.l = axi_handshakes(a);
        s.l_rdata = a.rdata;
        s.l_rresp = a.rresp;
        s.l_bresp = a.bresp;
    }
    const bool a_any = t->s_axi_awvalid | t->s_axi_wvalid | t->s_axi_bvalid | t->s_axi_arvalid | t->s_axi_rvalid;
    if (!a_any && sim->check.slave.edge_quiet(rst)) {
        s.a = AxiHandshakes{};
    } else {
        AxiSlaveSample a;
        a.awvalid = t->s_axi_awvalid; a.awready = t->s_axi_awready;
        a.wvalid = t->s_axi_wvalid; a.wready = t->s_axi_wready;
        a.bvalid = t->s_axi_bvalid; a.bready = t->s_axi_bready;
        a.arvalid = t->s_axi_arvalid; a.arready = t->s_axi_arready;
        a.rvalid = t->s_axi_rvalid; a.rready = t->s_axi_rready; a.rlast = t->s_axi_rlast;
        a.awid = t->s_axi_awid; a.arid = t->s_axi_arid; a.bid = t->s_axi_bid; a.rid = t->s_axi_rid;
        a.awlen = t->s_axi_awlen; a.arlen = t->s_axi_arlen; a.bresp = t->s_axi_bresp;
        a.rresp = t->s_axi_rresp; a.rdata = t->s_axi_rdata;
        a.rst = rst;
        sim->check.slave.edge(a, sim->cycles);
        s.a = axi_handshakes(a);
        s.a_rdata = a.rdata;
        s.a_rresp = a.rresp;
        s.a_rlast = a.rlast;
        s.a_bresp = a.bresp;
    }
    const bool m_any = t->m_axi_awvalid | t->m_axi_wvalid | t->m_axi_bvalid | t->m_axi_arvalid | t->m_axi_rvalid;
    if (!m_any && sim->check.master.edge_quiet(rst)) {
        s.m = AxiHandshakes{};
    } else {
        AxiMasterSample a;
        a.awvalid = t->m_axi_awvalid; a.awready = t->m_axi_awready;
        a.wvalid = t->m_axi_wvalid; a.wready = t->m_axi_wready;
        a.bvalid = t->m_axi_bvalid; a.bready = t->m_axi_bready;
        a.arvalid = t->m_axi_arvalid; a.arready = t->m_axi_arready;
        a.rvalid = t->m_axi_rvalid; a.rready = t->m_axi_rready; a.wlast = t->m_axi_wlast;
        a.awid = t->m_axi_awid; a.arid = t->m_axi_arid;
        a.awaddr = t->m_axi_awaddr; a.araddr = t->m_axi_araddr; a.wdata = t->m_axi_wdata;
        a.awlen = t->m_axi_awlen; a.arlen = t->m_axi_arlen; a.awsize = t->m_axi_awsize;
        a.arsize = t->m_axi_arsize; a.awburst = t->m_axi_awburst; a.arburst = t->m_axi_arburst;
        a.wstrb = t->m_axi_wstrb;
        a.rst = rst;
        sim->check.master.edge(a, sim->cycles);
        s.m = axi_handshakes(a);
    }

    const bool master_busy = s.m.any();
    HostBurst ar{}, aw{};
    uint64_t wdata = 0;
    unsigned wstrb = 0;
    bool wlast = false;
    if (s.m.ar) {
        ar = HostBurst{t->m_axi_arid, t->m_axi_araddr, t->m_axi_arlen, t->m_axi_arsize,
                       t->m_axi_arburst, 0, sim->cycles + sim->cfg.host_latency, false, 0};
        ar.hang = burst_hangs(sim, ar.addr, ar.len, ar.size, ar.burst);
    }
    if (s.m.aw)
        aw = HostBurst{t->m_axi_awid, t->m_axi_awaddr, t->m_axi_awlen, t->m_axi_awsize,
                       t->m_axi_awburst, 0, 0, false, kRespOkay};
    if (s.m.w) {
        wdata = t->m_axi_wdata;
        wstrb = t->m_axi_wstrb;
        wlast = t->m_axi_wlast;
    }

    // clk high: the rising edge. No input changed since the clk-low eval
    // (the drivers react after it), so without a waveform open only the
    // clocked region needs to run.
    if (sim->in_dirty || sim->tfp || !posedge_only(t)) {
        t->clk = 1;
        t->eval();
    }
    sim->cycles++;
    sim->st.cycles = sim->cycles;
    trace_dump(sim, sim->cycles * 2 * kHalfPeriodPs);
    if (sim->tfp && sim->trace_end && sim->cycles >= sim->trace_end) trace_finish(sim);

    // Responses become visible once their latency has passed, so the model
    // is re-driven every cycle while anything is queued.
    if (master_busy || !sim->rd_q.empty() || !sim->b_q.empty())
        host_update(sim, ar, aw, wdata, wstrb, wlast);

    const int level = t->irq ? 1 : 0;
    if (level != sim->irq_level) {
        sim->irq_level = level;
        if (sim->irq_fn) sim->irq_fn(sim->irq_user, level, sim->cycles);
    }
}

int resp_status(int resp)
{
    return resp == kRespSlverr ? GMC_SIM_ESLVERR : resp == kRespDecerr ? GMC_SIM_EDECERR : GMC_SIM_OK;
}

void idle_inputs(Vgmc_top *t)
{
    t->s_axil_awvalid = 0;
    t->s_axil_wvalid = 0;
    t->s_axil_bready = 0;
    t->s_axil_arvalid = 0;
    t->s_axil_rready = 0;
    t->s_axi_awvalid = 0;
    t->s_axi_wvalid = 0;
    t->s_axi_bready = 0;
    t->s_axi_arvalid = 0;
    t->s_axi_rready = 0;
}

void apply_straps(gmc_sim *sim)
{
    if (!sim->cfg.strap_segments) return;
    sim->in_dirty = true;
    Vgmc_top___024root *r = sim->top->rootp;
    r->gmc_top__DOT__u_regs__DOT__strap_seg_count = sim->cfg.seg_count;
    for (unsigned i = 0; i < GMC_SIM_MAX_SEGMENTS; i++) {
        const gmc_sim_segment &g = sim->cfg.seg[i];
        r->gmc_top__DOT__u_regs__DOT__strap_seg_base[i] = g.base;
        r->gmc_top__DOT__u_regs__DOT__strap_seg_size[i] = g.size;
        r->gmc_top__DOT__u_regs__DOT__strap_seg_flags[i] = g.flags;
        r->gmc_top__DOT__u_regs__DOT__strap_seg_cpu[i] = g.cpu_offset;
        r->gmc_top__DOT__u_regs__DOT__strap_seg_banks[i] = g.banks;
        r->gmc_top__DOT__u_regs__DOT__strap_seg_sysend[i] = g.sysmem_end;
    }
}

constexpr uint64_t kVramWords =
    sizeof(Vgmc_top___024root::gmc_top__DOT__u_vram__DOT__mem) / sizeof(QData);

int burst_args_ok(const struct gmc_sim_burst *b)
{
    return b && b->size <= 7 && b->burst <= 3;
}

// Split [off, off + len) into INCR bursts of 8-byte beats: at most 256
// beats, never across 4 KiB. Calls fn(first_byte, bytes, word_addr, beats).
template <typename F>
int split_bursts(uint64_t off, size_t len, F fn)
{
    while (len) {
        const uint64_t word = off & ~7ull;
        const uint64_t page_end = (off & ~4095ull) + 4096;
        const uint64_t max_end = word + 256 * 8;
        uint64_t end = off + len;
        if (end > page_end) end = page_end;
        if (end > max_end) end = max_end;
        const unsigned beats = static_cast<unsigned>(((end + 7) & ~7ull) - word) / 8;
        const int st = fn(off, static_cast<size_t>(end - off), word, beats);
        if (st) return st;
        len -= static_cast<size_t>(end - off);
        off = end;
    }
    return GMC_SIM_OK;
}

}  // namespace

// ------------------------------------------------------------------ API

extern "C" {

const char *gmc_sim_status_name(int status)
{
    switch (status) {
#define GMC_SIM_NAME_CASE(name, message, host) case name: return #name;
    GMC_SIM_STATUS_LIST(GMC_SIM_NAME_CASE)
#undef GMC_SIM_NAME_CASE
    default: return "GMC_SIM_UNKNOWN";
    }
}

const char *gmc_sim_strerror(int status)
{
    switch (status) {
#define GMC_SIM_MESSAGE_CASE(name, message, host) case name: return message;
    GMC_SIM_STATUS_LIST(GMC_SIM_MESSAGE_CASE)
#undef GMC_SIM_MESSAGE_CASE
    default: return "unknown gmc_sim status";
    }
}

void gmc_sim_config_default(struct gmc_sim_config *cfg)
{
    if (!cfg) return;
    std::memset(cfg, 0, sizeof *cfg);
    cfg->host_latency = kDefaultLatency;
    cfg->bus_timeout = kDefaultTimeout;
}

int gmc_sim_create(const struct gmc_sim_config *cfg, gmc_sim **out)
{
    if (!out) return GMC_SIM_EINVAL;
    *out = nullptr;
    gmc_sim_config c;
    gmc_sim_config_default(&c);
    if (cfg) c = *cfg;
    if (c.bus_timeout == 0) return GMC_SIM_EINVAL;
    if (c.strap_segments && c.seg_count > GMC_SIM_MAX_SEGMENTS) return GMC_SIM_EINVAL;

    gmc_sim *sim = new (std::nothrow) gmc_sim;
    if (!sim) return GMC_SIM_ENOMEM;
    sim->cfg = c;
    sim->ctx = new (std::nothrow) VerilatedContext;
    if (!sim->ctx) {
        delete sim;
        return GMC_SIM_ENOMEM;
    }
    sim->ctx->traceEverOn(true);
    sim->ctx->fatalOnError(false);
    sim->top = new (std::nothrow) Vgmc_top{sim->ctx, "gmc_top"};
    if (!sim->top) {
        delete sim->ctx;
        delete sim;
        return GMC_SIM_ENOMEM;
    }
    idle_inputs(sim->top);
    sim->in_dirty = true;
    drive(sim, sim->top->clk, 0);
    drive(sim, sim->top->rst, 1);
    sim->top->eval();  // runs the initial blocks, which load the straps' defaults
    apply_straps(sim);
    host_drive(sim);
    gmc_sim_reset(sim, 8);
    *out = sim;
    return GMC_SIM_OK;
}

void gmc_sim_destroy(gmc_sim *sim)
{
    if (!sim) return;
    trace_finish(sim);
    // Verilator 5.006's scope destructors look up the thread's current
    // context: point it at this model's, or destroying a model while an
    // older one lives hangs.
    Verilated::threadContextp(sim->ctx);
    sim->top->final();
    delete sim->top;
    delete sim->ctx;
    delete sim;
}

int gmc_sim_reset(gmc_sim *sim, uint32_t cycles)
{
    if (!sim || cycles == 0) return GMC_SIM_EINVAL;
    idle_inputs(sim->top);
    sim->in_dirty = true;
    sim->rd_q.clear();
    sim->wr_q.clear();
    sim->b_q.clear();
    sim->r_sel = sim->b_sel = -1;
    host_drive(sim);
    drive(sim, sim->top->rst, 1);
    for (uint32_t i = 0; i < cycles; i++) cycle(sim);
    drive(sim, sim->top->rst, 0);
    return GMC_SIM_OK;
}

int gmc_sim_step(gmc_sim *sim, uint64_t n)
{
    if (!sim) return GMC_SIM_EINVAL;
    for (uint64_t i = 0; i < n; i++) cycle(sim);
    return GMC_SIM_OK;
}

uint64_t gmc_sim_cycles(const gmc_sim *sim)
{
    return sim ? sim->cycles : 0;
}

int gmc_sim_reg_read(gmc_sim *sim, uint32_t off, uint32_t *val)
{
    if (val) *val = 0;
    if (!sim || !val || off > 0xFFFF || (off & 3)) return GMC_SIM_EINVAL;
    Vgmc_top *t = sim->top;
    drive(sim, t->s_axil_araddr, off);
    drive(sim, t->s_axil_arvalid, 1);
    drive(sim, t->s_axil_rready, 1);
    for (uint32_t n = 0; n < sim->cfg.bus_timeout; n++) {
        cycle(sim);
        if (sim->s.l.ar) drive(sim, t->s_axil_arvalid, 0);
        if (sim->s.l.r) {
            drive(sim, t->s_axil_rready, 0);
            sim->st.reg_reads++;
            const int st = resp_status(sim->s.l_rresp);
            if (st == GMC_SIM_OK) *val = sim->s.l_rdata;
            return st;
        }
    }
    drive(sim, t->s_axil_arvalid, 0);
    drive(sim, t->s_axil_rready, 0);
    return GMC_SIM_ETIMEOUT;
}

int gmc_sim_reg_write_strb(gmc_sim *sim, uint32_t off, uint32_t val, unsigned strb)
{
    if (!sim || off > 0xFFFF || (off & 3) || strb > 0xF) return GMC_SIM_EINVAL;
    Vgmc_top *t = sim->top;
    drive(sim, t->s_axil_awaddr, off);
    drive(sim, t->s_axil_awvalid, 1);
    drive(sim, t->s_axil_wdata, val);
    drive(sim, t->s_axil_wstrb, strb);
    drive(sim, t->s_axil_wvalid, 1);
    drive(sim, t->s_axil_bready, 1);
    for (uint32_t n = 0; n < sim->cfg.bus_timeout; n++) {
        cycle(sim);
        if (sim->s.l.aw) drive(sim, t->s_axil_awvalid, 0);
        if (sim->s.l.w) drive(sim, t->s_axil_wvalid, 0);
        if (sim->s.l.b) {
            drive(sim, t->s_axil_bready, 0);
            sim->st.reg_writes++;
            return resp_status(sim->s.l_bresp);
        }
    }
    idle_inputs(t);
    sim->in_dirty = true;
    return GMC_SIM_ETIMEOUT;
}

int gmc_sim_reg_write(gmc_sim *sim, uint32_t off, uint32_t val)
{
    return gmc_sim_reg_write_strb(sim, off, val, 0xF);
}

int gmc_sim_reg_read64(gmc_sim *sim, uint32_t lo_off, uint64_t *val)
{
    if (val) *val = 0;
    if (!val || lo_off > 0xFFFF - 4) return GMC_SIM_EINVAL;
    uint32_t lo, hi;
    int st = gmc_sim_reg_read(sim, lo_off, &lo);
    if (st) return st;
    st = gmc_sim_reg_read(sim, lo_off + 4, &hi);
    if (st) return st;
    *val = (uint64_t)hi << 32 | lo;
    return GMC_SIM_OK;
}

int gmc_sim_aperture_burst_read(gmc_sim *sim, const struct gmc_sim_burst *b, uint64_t *data,
                                uint8_t *resp)
{
    if (!sim || !burst_args_ok(b) || !data || !resp) return GMC_SIM_EINVAL;
    const unsigned beats = b->len + 1u;
    std::memset(data, 0, beats * sizeof *data);
    std::memset(resp, 0, beats);
    Vgmc_top *t = sim->top;
    drive(sim, t->s_axi_arid, b->id);
    drive(sim, t->s_axi_araddr, b->addr);
    drive(sim, t->s_axi_arlen, b->len);
    drive(sim, t->s_axi_arsize, b->size);
    drive(sim, t->s_axi_arburst, b->burst);
    drive(sim, t->s_axi_arlock, 0);
    drive(sim, t->s_axi_arcache, 0);
    drive(sim, t->s_axi_arprot, 0);
    drive(sim, t->s_axi_arvalid, 1);
    drive(sim, t->s_axi_rready, 1);
    unsigned got = 0;
    for (uint32_t n = 0; n < sim->cfg.bus_timeout; n++) {
        cycle(sim);
        if (sim->s.a.ar) drive(sim, t->s_axi_arvalid, 0);
        if (sim->s.a.r) {
            data[got] = sim->s.a_rdata;
            resp[got] = static_cast<uint8_t>(sim->s.a_rresp);
            got++;
            const bool last = sim->s.a_rlast;
            if (last || got == beats) {
                drive(sim, t->s_axi_rready, 0);
                sim->st.aperture_read_bursts++;
                // rlast on exactly the final beat is part of the protocol.
                return (last && got == beats) ? GMC_SIM_OK : GMC_SIM_EINVAL;
            }
        }
    }
    drive(sim, t->s_axi_arvalid, 0);
    drive(sim, t->s_axi_rready, 0);
    return GMC_SIM_ETIMEOUT;
}

int gmc_sim_aperture_burst_write(gmc_sim *sim, const struct gmc_sim_burst *b, const uint64_t *data,
                                 const uint8_t *strb, uint8_t *bresp)
{
    if (bresp) *bresp = 0;
    if (!sim || !burst_args_ok(b) || !data || !strb || !bresp) return GMC_SIM_EINVAL;
    const unsigned beats = b->len + 1u;
    Vgmc_top *t = sim->top;
    drive(sim, t->s_axi_awid, b->id);
    drive(sim, t->s_axi_awaddr, b->addr);
    drive(sim, t->s_axi_awlen, b->len);
    drive(sim, t->s_axi_awsize, b->size);
    drive(sim, t->s_axi_awburst, b->burst);
    drive(sim, t->s_axi_awlock, 0);
    drive(sim, t->s_axi_awcache, 0);
    drive(sim, t->s_axi_awprot, 0);
    drive(sim, t->s_axi_awvalid, 1);
    unsigned sent = 0;
    drive(sim, t->s_axi_wdata, data[0]);
    drive(sim, t->s_axi_wstrb, strb[0]);
    drive(sim, t->s_axi_wlast, beats == 1);
    drive(sim, t->s_axi_wvalid, 1);
    drive(sim, t->s_axi_bready, 1);
    for (uint32_t n = 0; n < sim->cfg.bus_timeout; n++) {
        cycle(sim);
        if (sim->s.a.aw) drive(sim, t->s_axi_awvalid, 0);
        if (sim->s.a.w) {
            sent++;
            if (sent == beats) {
                drive(sim, t->s_axi_wvalid, 0);
            } else {
                drive(sim, t->s_axi_wdata, data[sent]);
                drive(sim, t->s_axi_wstrb, strb[sent]);
                drive(sim, t->s_axi_wlast, sent + 1 == beats);
            }
        }
        if (sim->s.a.b) {
            drive(sim, t->s_axi_bready, 0);
            drive(sim, t->s_axi_wvalid, 0);
            sim->st.aperture_write_bursts++;
            *bresp = static_cast<uint8_t>(sim->s.a_bresp);
            // The response may only follow the last data beat.
            return sent == beats ? GMC_SIM_OK : GMC_SIM_EINVAL;
        }
    }
    idle_inputs(t);
    sim->in_dirty = true;
    return GMC_SIM_ETIMEOUT;
}

int gmc_sim_aperture_read(gmc_sim *sim, uint64_t off, void *buf, size_t len)
{
    if (!sim || (!buf && len) || off > UINT32_MAX || len > (uint64_t)UINT32_MAX + 1 - off)
        return GMC_SIM_EINVAL;
    uint8_t *out = static_cast<uint8_t *>(buf);
    const uint64_t start = off;
    const int st = split_bursts(off, len, [&](uint64_t a, size_t n, uint64_t word, unsigned beats) {
        uint64_t data[256];
        uint8_t resp[256];
        const gmc_sim_burst b{static_cast<uint32_t>(word), static_cast<uint8_t>(beats - 1), 3, 1, 0};
        int s = gmc_sim_aperture_burst_read(sim, &b, data, resp);
        if (s) return s;
        for (unsigned i = 0; i < beats; i++)
            if (resp[i]) return resp_status(resp[i]);
        std::memcpy(out + (a - start), reinterpret_cast<uint8_t *>(data) + (a - word), n);
        return static_cast<int>(GMC_SIM_OK);
    });
    if (st) {
        // Zero what was not read, as documented: callers never see stale bytes.
        std::memset(out, 0, len);
    }
    return st;
}

int gmc_sim_aperture_write(gmc_sim *sim, uint64_t off, const void *buf, size_t len)
{
    if (!sim || (!buf && len) || off > UINT32_MAX || len > (uint64_t)UINT32_MAX + 1 - off)
        return GMC_SIM_EINVAL;
    const uint8_t *in = static_cast<const uint8_t *>(buf);
    const uint64_t start = off;
    return split_bursts(off, len, [&](uint64_t a, size_t n, uint64_t word, unsigned beats) {
        uint64_t data[256] = {0};
        uint8_t strb[256];
        std::memcpy(reinterpret_cast<uint8_t *>(data) + (a - word), in + (a - start), n);
        // Every beat overlaps [a, a + n): bytes from b0 up to (not incl.) e.
        for (unsigned i = 0; i < beats; i++) {
            const uint64_t lo = word + 8ull * i;
            const unsigned b0 = a > lo ? static_cast<unsigned>(a - lo) : 0u;
            const unsigned e = a + n < lo + 8 ? static_cast<unsigned>(a + n - lo) : 8u;
            strb[i] = static_cast<uint8_t>((0xFFu << b0) & (0xFFu >> (8u - e)));
        }
        const gmc_sim_burst b{static_cast<uint32_t>(word), static_cast<uint8_t>(beats - 1), 3, 1, 0};
        uint8_t bresp = 0;
        int s = gmc_sim_aperture_burst_write(sim, &b, data, strb, &bresp);
        return s ? s : resp_status(bresp);
    });
}

int gmc_sim_host_map(gmc_sim *sim, uint64_t bus, void *ptr, size_t len)
{
    if (!sim || !ptr || len == 0 || bus + len < bus || bus + len > (1ull << 48)) return GMC_SIM_EINVAL;
    for (const Region &r : sim->regions)
        if (bus < r.bus + r.len && r.bus < bus + len) return GMC_SIM_EOVERLAP;
    try {
        sim->regions.push_back(Region{bus, static_cast<uint8_t *>(ptr), len});
    } catch (const std::bad_alloc &) {
        return GMC_SIM_ENOMEM;
    }
    return GMC_SIM_OK;
}

int gmc_sim_host_unmap(gmc_sim *sim, uint64_t bus)
{
    if (!sim) return GMC_SIM_EINVAL;
    for (size_t i = 0; i < sim->regions.size(); i++)
        if (sim->regions[i].bus == bus) {
            sim->regions.erase(sim->regions.begin() + static_cast<long>(i));
            return GMC_SIM_OK;
        }
    return GMC_SIM_ENOENT;
}

int gmc_sim_set_host_latency(gmc_sim *sim, uint32_t cycles)
{
    if (!sim) return GMC_SIM_EINVAL;
    sim->cfg.host_latency = cycles;
    return GMC_SIM_OK;
}

int gmc_sim_host_inject(gmc_sim *sim, uint64_t bus, uint64_t len, int kind)
{
    if (!sim || len == 0 || bus + len < bus) return GMC_SIM_EINVAL;
    if (kind != GMC_SIM_INJECT_SLVERR && kind != GMC_SIM_INJECT_DECERR && kind != GMC_SIM_INJECT_HANG)
        return GMC_SIM_EINVAL;
    try {
        sim->injects.push_back(Inject{bus, len, kind});
    } catch (const std::bad_alloc &) {
        return GMC_SIM_ENOMEM;
    }
    return GMC_SIM_OK;
}

void gmc_sim_host_inject_clear(gmc_sim *sim)
{
    if (sim) sim->injects.clear();
}

int gmc_sim_host_release(gmc_sim *sim)
{
    if (!sim) return GMC_SIM_EINVAL;
    for (HostBurst &h : sim->rd_q)
        if (h.hang) {
            h.hang = false;
            h.resp = kRespSlverr;
        }
    for (BResp &b : sim->b_q)
        if (b.hang) {
            b.hang = false;
            b.resp = kRespSlverr;
        }
    return GMC_SIM_OK;
}

uint64_t gmc_sim_host_hung(const gmc_sim *sim)
{
    if (!sim) return 0;
    uint64_t n = 0;
    for (const HostBurst &h : sim->rd_q)
        if (h.hang) n++;
    for (const BResp &b : sim->b_q)
        if (b.hang) n++;
    return n;
}

int gmc_sim_irq(const gmc_sim *sim)
{
    return sim ? (sim->top->irq ? 1 : 0) : 0;
}

void gmc_sim_set_irq_callback(gmc_sim *sim, gmc_sim_irq_fn fn, void *user)
{
    if (!sim) return;
    sim->irq_fn = fn;
    sim->irq_user = user;
}

int gmc_sim_trace_open(gmc_sim *sim, const char *path, uint64_t start, uint64_t end)
{
    if (!sim || !path || !*path || (end && end <= start)) return GMC_SIM_EINVAL;
    if (sim->tfp) return GMC_SIM_EBUSY;
    if (end && end <= sim->cycles) return GMC_SIM_EINVAL;
    // Verilator's FST writer does not report a failed open; probe the path.
    FILE *probe = std::fopen(path, "wb");
    if (!probe) return GMC_SIM_EIO;
    std::fclose(probe);
    VerilatedFstC *tfp = new (std::nothrow) VerilatedFstC;
    if (!tfp) return GMC_SIM_ENOMEM;
    sim->top->trace(tfp, 99);
    tfp->open(path);
    if (!tfp->isOpen()) {
        delete tfp;
        return GMC_SIM_EIO;
    }
    sim->tfp = tfp;
    sim->trace_start = start;
    sim->trace_end = end;
    return GMC_SIM_OK;
}

int gmc_sim_trace_close(gmc_sim *sim)
{
    if (!sim) return GMC_SIM_EINVAL;
    if (!sim->tfp) return GMC_SIM_ENOENT;
    trace_finish(sim);
    return GMC_SIM_OK;
}

int gmc_sim_vram_peek(const gmc_sim *sim, uint64_t addr, void *buf, size_t len)
{
    if (!sim || (!buf && len) || addr > kVramWords * 8 || len > kVramWords * 8 - addr)
        return GMC_SIM_EINVAL;
    const auto &mem = sim->top->rootp->gmc_top__DOT__u_vram__DOT__mem;
    uint8_t *out = static_cast<uint8_t *>(buf);
    size_t i = 0;
    // Bytes up to a word boundary, whole words, then the tail. (Whole
    // words: the soak peeks all of VRAM after every batch.)
    for (; i < len && ((addr + i) & 7) != 0; i++) {
        const uint64_t a = addr + i;
        out[i] = static_cast<uint8_t>(mem[a >> 3] >> (8 * (a & 7)));
    }
    for (; len - i >= 8; i += 8) {
        const uint64_t w = mem[(addr + i) >> 3];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        std::memcpy(out + i, &w, 8);  // byte b of the word is bits 8b+7:8b
#else
        for (unsigned b = 0; b < 8; b++) out[i + b] = static_cast<uint8_t>(w >> (8 * b));
#endif
    }
    for (; i < len; i++) {
        const uint64_t a = addr + i;
        out[i] = static_cast<uint8_t>(mem[a >> 3] >> (8 * (a & 7)));
    }
    return GMC_SIM_OK;
}

int gmc_sim_vram_scramble(gmc_sim *sim, uint64_t addr, uint64_t len, uint64_t seed)
{
    if (!sim || addr > kVramWords * 8 || len > kVramWords * 8 - addr)
        return GMC_SIM_EINVAL;
    auto &mem = sim->top->rootp->gmc_top__DOT__u_vram__DOT__mem;
    uint64_t x = seed ^ 0x9E3779B97F4A7C15ull;
    for (uint64_t i = 0; i < len; i++) {
        // xorshift64*: a fresh pseudo-random byte per address.
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        const uint64_t a = addr + i;
        const uint64_t shift = 8 * (a & 7);
        const uint64_t byte = (x * 0x2545F4914F6CDD1Dull) >> 56;
        mem[a >> 3] = (mem[a >> 3] & ~(0xFFull << shift)) | (byte << shift);
    }
    return GMC_SIM_OK;
}

uint64_t gmc_sim_vram_size(const gmc_sim *sim)
{
    return sim ? kVramWords * 8 : 0;
}

uint64_t gmc_sim_protocol_violations(const gmc_sim *sim, char *msg, size_t n)
{
    if (msg && n) msg[0] = 0;
    if (!sim) return 0;
    if (msg && n) std::snprintf(msg, n, "%s", sim->check.first().c_str());
    return sim->check.violations();
}

int gmc_sim_get_stats(const gmc_sim *sim, struct gmc_sim_stats *out)
{
    if (out) std::memset(out, 0, sizeof *out);
    if (!sim || !out) return GMC_SIM_EINVAL;
    *out = sim->st;
    return GMC_SIM_OK;
}

}  // extern "C"
