// gmc: the DMA paging engine: ring fetch, translation, data path, AXI4 master, watchdog.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// docs/dma.md is the specification. Structure:
//   gmc_dma_core        packets: load, check, execute, head, faults, recovery
//   gmc_dma_fetch       ring / indirect-buffer read-ahead (read stream 0)
//   gmc_dma_xlate x2    per-page translation of the source (stream 1) and
//                       destination (stream 2): identity, GART or MDL
//   gmc_dma_rd          source words into the data FIFO (stream 3)
//   gmc_dma_fifo        the data FIFO (block RAM)
//   gmc_dma_wr          realignment, VRAM writes or AXI write bursts
//   gmc_dma_axi_rd_arb  AR arbitration and R routing
// This wrapper keeps the epoch (ID bits 3:2) and the per-epoch counts of
// transactions owed by the bus, the issue order (for "oldest"), the
// watchdog, and routes the byte counts to their counters.
module gmc_dma #(
    parameter integer VRAM_BYTES = 8 * 1024 * 1024,
    parameter [31:0]  APERTURE_BASE = 32'h8000_0000,
    parameter integer APERTURE_PAGES = 4096,
    parameter integer PROT_RANGES = 4,
    // AXI ID width of the master, >= 4.
    parameter integer ID_WIDTH = 4,
    // Data FIFO words (8 bytes), a power of two >= 2 * MAX_BURST.
    parameter integer FIFO_DEPTH = 512,
    // Beats per data burst (read and write), a power of two 2..256.
    parameter integer MAX_BURST = 32,
    // Packet read-ahead words, a power of two >= 32.
    parameter integer FETCH_DEPTH = 64,
    // Page translations buffered ahead per side, a power of two >= 8.
    parameter integer PAGEQ_DEPTH = 8,
    // Data read bursts in flight at most, a power of two >= 2.
    parameter integer RD_OUTSTANDING = 8,
    // Write bursts awaiting B, a power of two 2..128.
    parameter integer WR_OUTSTANDING = 8,
    // VRAM word address width, derived.
    // 0: no clock gate, the engine on clk (gmc_clk_gate GATE; FPGA builds).
    parameter integer CLOCK_GATE = 1,
    parameter integer VRAM_AW = $clog2(VRAM_BYTES / 8)
) (
    input  wire                      clk,
    input  wire                      rst,

    // Clock gating: a register write took effect at this edge (any
    // register: the engine's inputs change only through writes), and the
    // override that keeps the engine's clock running (DMA_CTRL.CLOCK_ON).
    input  wire                      reg_write,
    input  wire                      clk_on,
    output wire                      clk_run,    // the engine's clock has this cycle's edge

    // Configuration and commands from the registers.
    input  wire                      enable,
    input  wire [47:12]              ring_base,
    input  wire [4:0]                ring_log2,
    input  wire [19:0]               tail,
    input  wire [31:0]               watchdog,
    input  wire [31:0]               pt_base,
    input  wire [47:12]              dummy_page,
    input  wire [32*PROT_RANGES-1:0] prot_base,
    input  wire [32*PROT_RANGES-1:0] prot_limit,
    input  wire                      cmd_skip,
    input  wire                      cmd_reset,

    // State and events for the registers.
    output wire [1:0]                st_state,
    output wire                      st_indirect,
    output wire [7:0]                st_rd_out,
    output wire [7:0]                st_wr_out,
    output wire [19:0]               st_head,
    output wire [63:0]               st_fence,
    output wire [8:0]                st_fault_code,
    output wire [47:0]               st_fault_pkt,
    output wire [47:0]               st_fault_addr,
    output wire [63:0]               st_read_result,
    output wire [1:0]                ev_packets,
    output wire                      ev_fault,
    output wire                      ev_fence_irq,
    output reg  [3:0]                cnt_rd_vram,
    output reg  [3:0]                cnt_rd_sys,
    output reg  [3:0]                cnt_rd_ap,
    output reg  [3:0]                cnt_wr_vram,
    output reg  [3:0]                cnt_wr_sys,
    output reg  [3:0]                cnt_wr_ap,

    // GART requesters: [0] source, [1] destination.
    output wire [1:0]                g_req_valid,
    input  wire [1:0]                g_req_ready,
    output wire [63:0]               g_req_addr,
    output wire [1:0]                g_req_write,
    input  wire [1:0]                g_resp_valid,
    input  wire                      g_resp_fault,
    input  wire [3:0]                g_resp_code,
    input  wire [47:0]               g_resp_addr,
    input  wire                      g_resp_system,
    output wire                      inv_all,
    output wire                      inv_page_valid,
    output wire [31:0]               inv_page,

    // VRAM ports (to the arbiter).
    output wire                      vr_req,
    output wire [VRAM_AW-1:0]        vr_addr,
    input  wire                      vr_gnt,
    input  wire                      vr_valid,
    input  wire [63:0]               vr_data,
    output wire                      vw_req,
    output wire [VRAM_AW-1:0]        vw_addr,
    output wire [63:0]               vw_data,
    output wire [7:0]                vw_strb,
    input  wire                      vw_gnt,

    // AXI4 master.
    output wire [ID_WIDTH-1:0]       m_axi_awid,
    output wire [47:0]               m_axi_awaddr,
    output wire [7:0]                m_axi_awlen,
    output wire [2:0]                m_axi_awsize,
    output wire [1:0]                m_axi_awburst,
    output wire                      m_axi_awlock,
    output wire [3:0]                m_axi_awcache,
    output wire [2:0]                m_axi_awprot,
    output wire                      m_axi_awvalid,
    input  wire                      m_axi_awready,
    output wire [63:0]               m_axi_wdata,
    output wire [7:0]                m_axi_wstrb,
    output wire                      m_axi_wlast,
    output wire                      m_axi_wvalid,
    input  wire                      m_axi_wready,
    input  wire [ID_WIDTH-1:0]       m_axi_bid,
    input  wire [1:0]                m_axi_bresp,
    input  wire                      m_axi_bvalid,
    output wire                      m_axi_bready,
    output wire [ID_WIDTH-1:0]       m_axi_arid,
    output wire [47:0]               m_axi_araddr,
    output wire [7:0]                m_axi_arlen,
    output wire [2:0]                m_axi_arsize,
    output wire [1:0]                m_axi_arburst,
    output wire                      m_axi_arlock,
    output wire [3:0]                m_axi_arcache,
    output wire [2:0]                m_axi_arprot,
    output wire                      m_axi_arvalid,
    input  wire                      m_axi_arready,
    input  wire [ID_WIDTH-1:0]       m_axi_rid,
    input  wire [63:0]               m_axi_rdata,
    input  wire [1:0]                m_axi_rresp,
    input  wire                      m_axi_rlast,
    input  wire                      m_axi_rvalid,
    output wire                      m_axi_rready
);

    localparam [1:0] T_VRAM = 2'd0, T_SYS = 2'd1, T_AP = 2'd2;
    localparam integer FAW = $clog2(FIFO_DEPTH);

    initial begin
        if (ID_WIDTH < 4)
            $error("gmc_dma: ID_WIDTH must be >= 4 (instance %m)");
        if (FIFO_DEPTH < 2 * MAX_BURST || FIFO_DEPTH > 4096)
            $error("gmc_dma: FIFO_DEPTH must be 2 * MAX_BURST .. 4096 (instance %m)");
        if (FETCH_DEPTH < 32)
            $error("gmc_dma: FETCH_DEPTH must be >= 32 (instance %m)");
        if (PAGEQ_DEPTH < 8)
            $error("gmc_dma: PAGEQ_DEPTH must be >= 8 (instance %m)");
    end

    // Fixed burst attributes: INCR of 8-byte beats, normal non-cacheable
    // bufferable, unprivileged secure data.
    assign m_axi_awsize  = 3'd3;
    assign m_axi_awburst = 2'd1;
    assign m_axi_awlock  = 1'b0;
    assign m_axi_awcache = 4'b0011;
    assign m_axi_awprot  = 3'b000;
    assign m_axi_arsize  = 3'd3;
    assign m_axi_arburst = 2'd1;
    assign m_axi_arlock  = 1'b0;
    assign m_axi_arcache = 4'b0011;
    assign m_axi_arprot  = 3'b000;
    assign m_axi_bready  = 1'b1;

    // ------------------------------------------------------------ wiring

    wire        flush, faulted;
    reg  [1:0]  epoch_reg;
    reg  [7:0]  seq_reg;

    // core <-> fetch
    wire        f_restart, f_restart_drop, f_restart_ib;
    wire [19:0] f_restart_off;
    wire [47:0] f_restart_ib_addr;
    wire [31:0] f_restart_ib_len;
    wire        fw_valid, fw_err, fw_pop;
    wire [63:0] fw_data;

    // core -> xlate
    wire        xs_start, xd_start;
    wire [1:0]  xs_kind, xd_kind;
    wire [35:0] xs_page0, xd_page0;
    wire [20:0] xs_npages, xd_npages;
    wire [47:0] xs_mdl, xd_mdl;

    // xlate -> rd / wr / core
    wire        xs_pg_valid, xs_pg_fault, xs_pg_pop;
    wire [35:0] xs_pg_phys;
    wire [3:0]  xs_f_code;
    wire [47:0] xs_f_addr;
    wire        xd_pg_valid, xd_pg_fault, xd_pg_pop_wr, xd_pg_pop_core;
    wire [35:0] xd_pg_phys;
    wire [3:0]  xd_f_code;
    wire [47:0] xd_f_addr;

    // core -> rd / wr
    wire        rd_start, rd_vram;
    wire [11:0] rd_so12;
    wire [31:0] rd_len;
    wire [1:0]  rd_tgt;
    wire        wr_start, wr_vram, wr_cmode, wr_nocount;
    wire [11:0] wr_do12;
    wire [31:0] wr_len;
    wire [2:0]  wr_so3;
    wire [63:0] wr_cdata;
    wire [1:0]  wr_tgt;

    // rd / wr status
    wire [29:0] rd_pushed, rd_sf_word;
    wire        rd_sf_valid;
    wire [3:0]  rd_sf_code;
    wire [47:0] rd_sf_addr;
    wire        wr_done, wr_fault, wr_idle;
    wire [3:0]  wr_f_code;
    wire [47:0] wr_f_addr;
    wire [3:0]  rd_bytes, wr_bytes;

    // data FIFO
    wire        d_push, d_valid, d_pop_wr, d_pop_core;
    wire [63:0] d_push_data, d_data;
    wire        d_pop = d_pop_wr || d_pop_core;

    // VRAM writes: the destination side, or the core's PTE writes.
    wire               map_active, cw_req, wr_vw_req;
    wire [VRAM_AW-1:0] cw_addr, wr_vw_addr;
    wire [63:0]        cw_data, wr_vw_data;
    wire [7:0]         wr_vw_strb;
    assign vw_req  = map_active ? cw_req : wr_vw_req;
    assign vw_addr = map_active ? cw_addr : wr_vw_addr;
    assign vw_data = map_active ? cw_data : wr_vw_data;
    assign vw_strb = map_active ? 8'hFF : wr_vw_strb;

    // AXI read streams.
    localparam integer NS = 4;
    wire [NS-1:0]    ar_req, ar_rdy, r_v;
    wire [48*NS-1:0] ar_addr_bus;
    wire [8*NS-1:0]  ar_len_bus;
    wire             ar_load, r_cur, r_done;
    wire [1:0]       r_done_epoch;
    wire [63:0]      r_data;
    wire [1:0]       r_resp;
    wire             r_last;

    // Watchdog candidates.
    wire        o_f_v, o_s_v, o_d_v, o_r_v, o_w_v;
    wire [7:0]  o_f_s, o_s_s, o_d_s, o_r_s, o_w_s;
    wire [47:0] o_f_a, o_s_a, o_d_a, o_r_a, o_w_a;

    wire        aw_load;
    wire        timeout;
    reg  [47:0] timeout_addr;

    // ------------------------------------------------------- clock gating

    // The engine runs on gclk, which stops while the engine is quiet: every
    // unit idle, nothing owed by the bus, the data FIFO empty, the watchdog
    // at zero. Quiet means the next edge would leave every register as it
    // is while the inputs stay the same, and the inputs change only through
    // a register write (the bus answers only what the engine asked for), so
    // a stopped edge changes nothing: the engine is cycle for cycle the same
    // as with its clock running (test_random_clock_gate in
    // tests/rtl/test_dma_random.c checks this; tests/rtl/test_dma_gate.c
    // the gate itself).
    // A write wakes the engine for the edge after it (the enable is sampled
    // at the falling edge), at which the engine takes the new register
    // values in (below).
    wire gclk;
    wire q_core, q_fetch, q_xsrc, q_xdst, q_rd, q_wr, q_rarb;
    reg  wake_reg, rst_q;
    reg  [31:0] wd_reg;
    reg  [7:0]  rd_tot_reg, wr_tot_reg;
    reg                      enable_q;
    reg [47:12]              ring_base_q, dummy_page_q;
    reg [4:0]                ring_log2_q;
    reg [19:0]               tail_q;
    reg [31:0]               watchdog_q, pt_base_q;
    reg [32*PROT_RANGES-1:0] prot_base_q, prot_limit_q;
    // (The units' terms are looked at only when the wrapper's are all
    // quiet, in a branch of its own (docs/sim.md, Model speed).)
    reg quiet, units_quiet;
    always @* begin
        quiet = 1'b0;
        units_quiet = 1'b0;
        if (!d_valid && (rd_tot_reg == 8'd0) && (wr_tot_reg == 8'd0) && (wd_reg == 32'd0)) begin
            units_quiet = q_core && q_fetch && q_xsrc && q_xdst && q_rd && q_wr && q_rarb;
            quiet = units_quiet;
        end
    end

    always @(posedge clk) begin
        wake_reg <= reg_write;
        rst_q <= rst;
        if (rst)
            wake_reg <= 1'b0;
    end

    // The engine's reset lasts one cycle longer than rst: the register
    // file takes its reset values at rst's edges, and the engine's copies
    // of them (below) load those at the extra edge, so that however short
    // rst is the engine never runs on values from before it.
    wire rst_e = rst || rst_q;

`ifdef FORMAL
    // The formal harness (tests/formal/gmc_dma_formal.v) runs the engine on
    // clk: the gate's falling-edge flop is a second clock the proof does
    // not model, and the gate only drops edges at which nothing changes.
    assign gclk = clk;
    assign clk_run = 1'b1;
`else
    gmc_clk_gate #(.GATE(CLOCK_GATE)) u_cg (
        .clk(clk), .en(rst_e || clk_on || wake_reg || cmd_skip || cmd_reset || !quiet), .gclk(gclk),
        .on(clk_run)
    );
`endif

    // The register file's configuration outputs (DMA_CTRL.ENABLE, the ring,
    // the watchdog, the page table and dummy page, the protected ranges)
    // enter the engine's clock domain through registers, so that most of
    // the engine's logic depends on its own clock only (docs/dma.md, Clock
    // gating; docs/sim.md, Model speed). They load at the engine edge
    // after each register write (the registers change only through writes
    // and reset), and at every edge of the engine's reset (no reset value:
    // that reset outlasts rst by a cycle, in which they take the registers'
    // reset values), so they equal the registers whenever the clock stops
    // (a write always gets the edge after it).
    // The engine sees such a write one cycle after it lands: a doorbell
    // starts it one cycle later. The DMA_CMD pulses go straight in, so a
    // status read right after SKIP or RESET already sees the command taken.
    always @(posedge gclk) begin
        if (wake_reg || rst_e) begin
            enable_q <= enable;
            ring_base_q <= ring_base;
            ring_log2_q <= ring_log2;
            tail_q <= tail;
            watchdog_q <= watchdog;
            pt_base_q <= pt_base;
            dummy_page_q <= dummy_page;
            prot_base_q <= prot_base;
            prot_limit_q <= prot_limit;
        end
    end

    // The R and B channels enter through registers (the engine is always
    // ready for both, so no beat waits): the engine sees a beat the cycle
    // after the bus hands it over. Besides cutting the paths from the bus
    // into the engine, this keeps the engine's logic out of the model's
    // input pass (docs/sim.md). The clock runs whenever a beat can arrive:
    // the bus then owes the engine something (rd_tot_reg, wr_tot_reg)
    // until the edge that takes the beat from these registers.
    reg                rvalid_q, rlast_q, bvalid_q;
    reg [ID_WIDTH-1:0] rid_q, bid_q;
    reg [63:0]         rdata_q;
    reg [1:0]          rresp_q, bresp_q;
    always @(posedge gclk) begin
        rvalid_q <= m_axi_rvalid && !rst_e;
        rid_q <= m_axi_rid;
        rdata_q <= m_axi_rdata;
        rresp_q <= m_axi_rresp;
        rlast_q <= m_axi_rlast;
        bvalid_q <= m_axi_bvalid && !rst_e;
        bid_q <= m_axi_bid;
        bresp_q <= m_axi_bresp;
    end

    // -------------------------------------------------------------- units

    gmc_dma_core #(
        .VRAM_BYTES(VRAM_BYTES), .APERTURE_BASE(APERTURE_BASE), .APERTURE_PAGES(APERTURE_PAGES),
        .PROT_RANGES(PROT_RANGES), .VRAM_AW(VRAM_AW)
    ) u_core (
        .clk(gclk), .rst(rst_e),
        .enable(enable_q), .ring_base(ring_base_q), .ring_log2(ring_log2_q), .tail(tail_q),
        .pt_base(pt_base_q), .dummy_page(dummy_page_q), .prot_base(prot_base_q), .prot_limit(prot_limit_q),
        .cmd_skip(cmd_skip), .cmd_reset(cmd_reset), .timeout(timeout), .timeout_addr(timeout_addr),
        .flush(flush),
        .f_restart(f_restart), .f_restart_drop(f_restart_drop), .f_restart_ib(f_restart_ib),
        .f_restart_off(f_restart_off), .f_restart_ib_addr(f_restart_ib_addr),
        .f_restart_ib_len(f_restart_ib_len),
        .fw_valid(fw_valid), .fw_data(fw_data), .fw_err(fw_err), .fw_pop(fw_pop),
        .xs_start(xs_start), .xd_start(xd_start), .xs_kind(xs_kind), .xd_kind(xd_kind),
        .xs_page0(xs_page0), .xd_page0(xd_page0), .xs_npages(xs_npages), .xd_npages(xd_npages),
        .xs_mdl(xs_mdl), .xd_mdl(xd_mdl),
        .xd_pg_valid(xd_pg_valid), .xd_pg_phys(xd_pg_phys), .xd_pg_fault(xd_pg_fault),
        .xd_pg_pop(xd_pg_pop_core), .xd_f_code(xd_f_code), .xd_f_addr(xd_f_addr),
        .rd_start(rd_start), .rd_vram(rd_vram), .rd_so12(rd_so12), .rd_len(rd_len), .rd_tgt(rd_tgt),
        .rd_pushed(rd_pushed), .rd_sf_valid(rd_sf_valid), .rd_sf_code(rd_sf_code),
        .rd_sf_addr(rd_sf_addr),
        .wr_start(wr_start), .wr_vram(wr_vram), .wr_do12(wr_do12), .wr_len(wr_len), .wr_so3(wr_so3),
        .wr_cmode(wr_cmode), .wr_cdata(wr_cdata), .wr_nocount(wr_nocount), .wr_tgt(wr_tgt),
        .wr_done(wr_done), .wr_fault(wr_fault), .wr_f_code(wr_f_code), .wr_f_addr(wr_f_addr),
        .wr_idle(wr_idle),
        .fifo_valid(d_valid), .fifo_data(d_data), .fifo_pop(d_pop_core),
        .map_active(map_active), .cw_req(cw_req), .cw_addr(cw_addr), .cw_data(cw_data),
        .cw_gnt(vw_gnt),
        .inv_all(inv_all), .inv_page_valid(inv_page_valid), .inv_page(inv_page),
        .st_state(st_state), .st_indirect(st_indirect), .head(st_head), .fence(st_fence),
        .fault_code(st_fault_code[7:0]), .fault_ind(st_fault_code[8]), .fault_pkt(st_fault_pkt),
        .fault_addr(st_fault_addr), .read_result(st_read_result), .faulted(faulted),
        .ev_packets(ev_packets), .ev_fault(ev_fault), .ev_fence_irq(ev_fence_irq),
        .quiet(q_core)
    );

    gmc_dma_fetch #(
        .DEPTH(FETCH_DEPTH), .MAX_BURST(16), .MAX_OUT(4)
    ) u_fetch (
        .clk(gclk), .rst(rst_e),
        .enable(enable_q), .ring_base(ring_base_q), .ring_log2(ring_log2_q), .tail(tail_q),
        .restart(f_restart), .restart_drop(f_restart_drop), .restart_ib(f_restart_ib),
        .restart_off(f_restart_off), .restart_ib_addr(f_restart_ib_addr),
        .restart_ib_len(f_restart_ib_len),
        .out_valid(fw_valid), .out_data(fw_data), .out_err(fw_err), .out_pop(fw_pop),
        .ar_valid(ar_req[0]), .ar_ready(ar_rdy[0]), .ar_addr(ar_addr_bus[0 +: 48]),
        .ar_len(ar_len_bus[0 +: 8]), .ar_seq(seq_reg),
        .r_valid(r_v[0]), .r_data(r_data), .r_resp(r_resp), .r_last(r_last),
        .old_valid(o_f_v), .old_seq(o_f_s), .old_addr(o_f_a), .quiet(q_fetch)
    );

    gmc_dma_xlate #(
        .QDEPTH(PAGEQ_DEPTH), .MDL_BURST(PAGEQ_DEPTH / 2)
    ) u_xsrc (
        .clk(gclk), .rst(rst_e),
        .start(xs_start), .flush(flush), .kind(xs_kind), .page0(xs_page0), .npages(xs_npages),
        .mdl_base(xs_mdl), .write(1'b0),
        .pg_valid(xs_pg_valid), .pg_phys(xs_pg_phys), .pg_fault(xs_pg_fault), .pg_pop(xs_pg_pop),
        .f_code(xs_f_code), .f_addr(xs_f_addr),
        .g_req_valid(g_req_valid[0]), .g_req_ready(g_req_ready[0]), .g_req_addr(g_req_addr[31:0]),
        .g_req_write(g_req_write[0]), .g_resp_valid(g_resp_valid[0]), .g_resp_fault(g_resp_fault),
        .g_resp_code(g_resp_code), .g_resp_addr(g_resp_addr), .g_resp_system(g_resp_system),
        .ar_valid(ar_req[1]), .ar_ready(ar_rdy[1]), .ar_addr(ar_addr_bus[48 +: 48]),
        .ar_len(ar_len_bus[8 +: 8]), .ar_seq(seq_reg),
        .r_valid(r_v[1]), .r_data(r_data), .r_resp(r_resp), .r_last(r_last),
        .old_valid(o_s_v), .old_seq(o_s_s), .old_addr(o_s_a), .quiet(q_xsrc)
    );

    gmc_dma_xlate #(
        .QDEPTH(PAGEQ_DEPTH), .MDL_BURST(PAGEQ_DEPTH / 2)
    ) u_xdst (
        .clk(gclk), .rst(rst_e),
        .start(xd_start), .flush(flush), .kind(xd_kind), .page0(xd_page0), .npages(xd_npages),
        .mdl_base(xd_mdl), .write(1'b1),
        .pg_valid(xd_pg_valid), .pg_phys(xd_pg_phys), .pg_fault(xd_pg_fault),
        .pg_pop(xd_pg_pop_wr || xd_pg_pop_core),
        .f_code(xd_f_code), .f_addr(xd_f_addr),
        .g_req_valid(g_req_valid[1]), .g_req_ready(g_req_ready[1]), .g_req_addr(g_req_addr[63:32]),
        .g_req_write(g_req_write[1]), .g_resp_valid(g_resp_valid[1]), .g_resp_fault(g_resp_fault),
        .g_resp_code(g_resp_code), .g_resp_addr(g_resp_addr), .g_resp_system(g_resp_system),
        .ar_valid(ar_req[2]), .ar_ready(ar_rdy[2]), .ar_addr(ar_addr_bus[96 +: 48]),
        .ar_len(ar_len_bus[16 +: 8]), .ar_seq(seq_reg),
        .r_valid(r_v[2]), .r_data(r_data), .r_resp(r_resp), .r_last(r_last),
        .old_valid(o_d_v), .old_seq(o_d_s), .old_addr(o_d_a), .quiet(q_xdst)
    );

    gmc_dma_rd #(
        .VRAM_AW(VRAM_AW), .FIFO_DEPTH(FIFO_DEPTH), .MAX_BURST(MAX_BURST), .MAX_OUT(RD_OUTSTANDING)
    ) u_rd (
        .clk(gclk), .rst(rst_e),
        .start(rd_start), .flush(flush), .vram(rd_vram), .so12(rd_so12), .len(rd_len),
        .pg_valid(xs_pg_valid), .pg_phys(xs_pg_phys), .pg_fault(xs_pg_fault), .pg_pop(xs_pg_pop),
        .xf_code(xs_f_code), .xf_addr(xs_f_addr),
        .push_valid(d_push), .push_data(d_push_data), .fifo_pop(d_pop),
        .vr_req(vr_req), .vr_addr(vr_addr), .vr_gnt(vr_gnt), .vr_valid(vr_valid), .vr_data(vr_data),
        .ar_valid(ar_req[3]), .ar_ready(ar_rdy[3]), .ar_addr(ar_addr_bus[144 +: 48]),
        .ar_len(ar_len_bus[24 +: 8]), .ar_seq(seq_reg),
        .r_valid(r_v[3]), .r_data(r_data), .r_resp(r_resp), .r_last(r_last),
        .pushed(rd_pushed), .sf_valid(rd_sf_valid), .sf_word(rd_sf_word), .sf_code(rd_sf_code),
        .sf_addr(rd_sf_addr),
        .old_valid(o_r_v), .old_seq(o_r_s), .old_addr(o_r_a),
        .cnt_bytes(rd_bytes), .quiet(q_rd)
    );

    wire [FAW:0] d_count;
    gmc_dma_fifo #(
        .WIDTH(64), .DEPTH(FIFO_DEPTH)
    ) u_data (
        .clk(gclk), .rst(rst_e), .flush(flush || rd_start),
        .in_valid(d_push), .in_data(d_push_data),
        .out_valid(d_valid), .out_data(d_data), .out_pop(d_pop),
        .count(d_count)
    );

    gmc_dma_wr #(
        .VRAM_AW(VRAM_AW), .MAX_BURST(MAX_BURST), .WQ_DEPTH(4), .B_DEPTH(WR_OUTSTANDING),
        .ID_WIDTH(ID_WIDTH)
    ) u_wr (
        .clk(gclk), .rst(rst_e),
        .start(wr_start), .abort(flush), .epoch(epoch_reg), .vram(wr_vram), .do12(wr_do12),
        .len(wr_len), .so3(wr_so3), .cmode(wr_cmode), .cdata(wr_cdata), .nocount(wr_nocount),
        .pg_valid(xd_pg_valid), .pg_phys(xd_pg_phys), .pg_fault(xd_pg_fault), .pg_pop(xd_pg_pop_wr),
        .xf_code(xd_f_code), .xf_addr(xd_f_addr),
        .fifo_valid(d_valid), .fifo_data(d_data), .fifo_pop(d_pop_wr),
        .pushed(rd_pushed), .sf_valid(rd_sf_valid), .sf_word(rd_sf_word), .sf_code(rd_sf_code),
        .sf_addr(rd_sf_addr),
        .vw_req(wr_vw_req), .vw_addr(wr_vw_addr), .vw_data(wr_vw_data), .vw_strb(wr_vw_strb),
        .vw_gnt(vw_gnt && !map_active),
        .m_axi_awid(m_axi_awid), .m_axi_awaddr(m_axi_awaddr), .m_axi_awlen(m_axi_awlen),
        .m_axi_awvalid(m_axi_awvalid), .m_axi_awready(m_axi_awready), .aw_load(aw_load),
        .aw_seq(seq_reg),
        .m_axi_wdata(m_axi_wdata), .m_axi_wstrb(m_axi_wstrb), .m_axi_wlast(m_axi_wlast),
        .m_axi_wvalid(m_axi_wvalid), .m_axi_wready(m_axi_wready),
        .b_valid(bvalid_q && (bid_q[3:2] == epoch_reg)), .b_resp(bresp_q),
        .done(wr_done), .fault(wr_fault), .f_code(wr_f_code), .f_addr(wr_f_addr), .idle(wr_idle),
        .old_valid(o_w_v), .old_seq(o_w_s), .old_addr(o_w_a),
        .cnt_bytes(wr_bytes), .quiet(q_wr)
    );

    gmc_dma_axi_rd_arb #(
        .PORTS(NS), .ID_WIDTH(ID_WIDTH)
    ) u_rarb (
        .clk(gclk), .rst(rst_e), .epoch(epoch_reg),
        .req_valid(ar_req), .req_ready(ar_rdy), .req_addr(ar_addr_bus), .req_len(ar_len_bus),
        .load(ar_load),
        .r_valid(r_v), .r_data(r_data), .r_resp(r_resp), .r_last(r_last),
        .r_done(r_done), .r_done_epoch(r_done_epoch), .r_cur(r_cur),
        .m_axi_arid(m_axi_arid), .m_axi_araddr(m_axi_araddr), .m_axi_arlen(m_axi_arlen),
        .m_axi_arvalid(m_axi_arvalid), .m_axi_arready(m_axi_arready),
        .m_axi_rid(rid_q), .m_axi_rdata(rdata_q), .m_axi_rresp(rresp_q),
        .m_axi_rlast(rlast_q), .m_axi_rvalid(rvalid_q), .m_axi_rready(m_axi_rready),
        .quiet(q_rarb)
    );

    // ----------------------------------------------- epoch and bus accounting

    // Bursts owed by the bus per epoch (8 bits each), counted from the
    // moment they are loaded into the AR / AW output registers, and in all.
    reg  [31:0] rd_out_reg, wr_out_reg;
    wire        b_done = bvalid_q;
    wire [1:0]  b_epoch = bid_q[3:2];
    // (Worked out only when something is owed at all, and the next epoch
    // only at a flush; 0 otherwise.)
    reg  [3:0]  owed;
    always @* begin
        owed = 4'd0;
        if ((rd_out_reg | wr_out_reg) != 32'd0)
            owed = {(rd_out_reg[31:24] != 8'd0) || (wr_out_reg[31:24] != 8'd0),
                    (rd_out_reg[23:16] != 8'd0) || (wr_out_reg[23:16] != 8'd0),
                    (rd_out_reg[15:8] != 8'd0) || (wr_out_reg[15:8] != 8'd0),
                    (rd_out_reg[7:0] != 8'd0) || (wr_out_reg[7:0] != 8'd0)};
    end
    wire        owed_cur = owed[epoch_reg];
    wire        rd_same = ar_load && r_done && (r_done_epoch == epoch_reg);
    wire        wr_same = aw_load && b_done && (b_epoch == epoch_reg);

    // The next epoch after an abort: the first one (after the current)
    // that owes nothing, so a response that arrives late can never be
    // taken for a new one, and new bursts never queue behind a hung one of
    // the same ID; when all owe something, simply the next.
    reg  [1:0] ep1, ep2, ep3, ep_next;
    always @* begin
        ep1 = 2'd0;
        ep2 = 2'd0;
        ep3 = 2'd0;
        ep_next = 2'd0;
        if (flush) begin
            ep1 = epoch_reg + 2'd1;
            ep2 = epoch_reg + 2'd2;
            ep3 = epoch_reg + 2'd3;
            ep_next = !owed[ep1] ? ep1 : !owed[ep2] ? ep2 : !owed[ep3] ? ep3 : ep1;
        end
    end

    always @(posedge gclk) begin
        if (ar_load || r_done) begin
            if (ar_load && !rd_same)
                rd_out_reg[8 * epoch_reg +: 8] <= rd_out_reg[8 * epoch_reg +: 8] + 8'd1;
            if (r_done && !rd_same)
                rd_out_reg[8 * r_done_epoch +: 8] <= rd_out_reg[8 * r_done_epoch +: 8] - 8'd1;
            rd_tot_reg <= rd_tot_reg + {7'd0, ar_load} - {7'd0, r_done};
        end
        if (aw_load || b_done) begin
            if (aw_load && !wr_same)
                wr_out_reg[8 * epoch_reg +: 8] <= wr_out_reg[8 * epoch_reg +: 8] + 8'd1;
            if (b_done && !wr_same)
                wr_out_reg[8 * b_epoch +: 8] <= wr_out_reg[8 * b_epoch +: 8] - 8'd1;
            wr_tot_reg <= wr_tot_reg + {7'd0, aw_load} - {7'd0, b_done};
        end
        if (ar_load || aw_load)
            seq_reg <= seq_reg + 8'd1;
        // A flush with transactions still owed starts a new epoch: their
        // responses are then recognised as stale and dropped.
        if (flush && (owed_cur || ar_load || aw_load))
            epoch_reg <= ep_next;
        if (rst_e) begin
            rd_out_reg <= 32'd0;
            wr_out_reg <= 32'd0;
            rd_tot_reg <= 8'd0;
            wr_tot_reg <= 8'd0;
            seq_reg <= 8'd0;
            epoch_reg <= 2'd0;
        end
    end

    assign st_rd_out = rd_tot_reg;
    assign st_wr_out = wr_tot_reg;

    // ------------------------------------------------------------ watchdog

    // An address the bus does not take counts too, whatever its epoch: one
    // left from before an abort holds the AR (AW) register, so the work of
    // the current epoch cannot start while nothing of it is owed yet.
    wire addr_wait = m_axi_arvalid || m_axi_awvalid;
    wire wd_active = !faulted && (owed_cur || addr_wait);
    wire progress  = r_cur || (b_done && b_epoch == epoch_reg) || (m_axi_arvalid && m_axi_arready)
                     || (m_axi_awvalid && m_axi_awready) || (m_axi_wvalid && m_axi_wready);
    assign timeout = wd_active && (watchdog_q != 32'd0) && (wd_reg >= watchdog_q);

    always @(posedge gclk) begin
        if (!wd_active) begin
            if (wd_reg != 32'd0)
                wd_reg <= 32'd0;
        end else if (progress)
            wd_reg <= 32'd0;
        else if (wd_reg != 32'hFFFF_FFFF)
            wd_reg <= wd_reg + 32'd1;
        if (rst_e)
            wd_reg <= 32'd0;
    end

    // The oldest burst still owed: the largest age (seq_reg - seq). Only
    // needed at a timeout, so worked out only then.
    reg        best_v;
    reg [7:0]  best_age;
    always @* begin
        best_v = 1'b0;
        best_age = 8'd0;
        timeout_addr = 48'd0;
        if (timeout) begin
        if (o_f_v) begin best_v = 1'b1; best_age = seq_reg - o_f_s; timeout_addr = o_f_a; end
        if (o_s_v && (!best_v || seq_reg - o_s_s > best_age)) begin
            best_v = 1'b1; best_age = seq_reg - o_s_s; timeout_addr = o_s_a;
        end
        if (o_d_v && (!best_v || seq_reg - o_d_s > best_age)) begin
            best_v = 1'b1; best_age = seq_reg - o_d_s; timeout_addr = o_d_a;
        end
        if (o_r_v && (!best_v || seq_reg - o_r_s > best_age)) begin
            best_v = 1'b1; best_age = seq_reg - o_r_s; timeout_addr = o_r_a;
        end
        if (o_w_v && (!best_v || seq_reg - o_w_s > best_age)) begin
            best_v = 1'b1; best_age = seq_reg - o_w_s; timeout_addr = o_w_a;
        end
        // Nothing of the current epoch owed: the address waiting on the bus.
        if (!best_v)
            timeout_addr = m_axi_arvalid ? m_axi_araddr : m_axi_awaddr;
        end
    end

    // ------------------------------------------------------------ counters

    always @* begin
        cnt_rd_vram = (rd_tgt == T_VRAM) ? rd_bytes : 4'd0;
        cnt_rd_sys  = (rd_tgt == T_SYS) ? rd_bytes : 4'd0;
        cnt_rd_ap   = (rd_tgt == T_AP) ? rd_bytes : 4'd0;
        cnt_wr_vram = (wr_tgt == T_VRAM) ? wr_bytes : 4'd0;
        cnt_wr_sys  = (wr_tgt == T_SYS) ? wr_bytes : 4'd0;
        cnt_wr_ap   = (wr_tgt == T_AP) ? wr_bytes : 4'd0;
    end

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, d_count, bid_q};
    /* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
