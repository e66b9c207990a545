// gmc: the compact DMA paging engine: the same contract as gmc_dma, one packet, one word, one bus transaction at a time.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// docs/dma.md is the specification; this engine implements it with a
// single state machine for the iCE40 boards (gmc_top DMA_ENGINE = 2,
// CAPS.DMA_ENGINE = COMPACT). Its ports are gmc_dma's, so gmc_top wires
// either the same way. What it keeps small:
//   - one packet: fetched as one 4-beat burst into four 64-bit registers,
//     checked by gmc_dma_check (the full engine's checker, so the packet
//     checks and their order are the same logic), then executed;
//   - one destination word at a time: the bytes of the word are gathered
//     one per cycle from a one-word source buffer (refilled with a
//     single-beat read when the source moves to another word), then
//     written (one VRAM word, or an AXI burst of one beat whose response
//     is awaited before anything else moves);
//   - one translation per side, cached: a source or destination page is
//     translated (GART request or MDL entry read) when the byte stream
//     enters it;
//   - one bus transaction in flight.
// The epoch (ID bits 3:2) and the watchdog work as in gmc_dma: after an
// abort with transactions owed, responses of older epochs are accepted
// and dropped. BUS and TIMEOUT faults name the address of the burst the
// full engine (default DMA_MAX_BURST = 32, MDL entry bursts in aligned
// 32-byte blocks) would have issued for the failing beat, so both
// engines report the same DMA_FAULT_ADDR. The engine runs on a gated
// clock (gmc_clk_gate) that stops while it is quiet.
module gmc_dmc #(
    parameter integer VRAM_BYTES = 8 * 1024 * 1024,
    parameter [31:0]  APERTURE_BASE = 32'h8000_0000,
    parameter integer APERTURE_PAGES = 4096,
    parameter integer PROT_RANGES = 4,
    // AXI ID width of the master, >= 4.
    parameter integer ID_WIDTH = 4,
    // VRAM word address width, derived.
    // 0: no clock gate, the engine on clk (gmc_clk_gate GATE; FPGA builds).
    parameter integer CLOCK_GATE = 1,
    parameter integer VRAM_AW = $clog2(VRAM_BYTES / 8)
) (
    input  wire                      clk,
    input  wire                      rst,

    input  wire                      reg_write,
    input  wire                      clk_on,
    output wire                      clk_run,

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
    output reg  [1:0]                ev_packets,
    output reg                       ev_fault,
    output reg                       ev_fence_irq,
    output reg  [3:0]                cnt_rd_vram,
    output reg  [3:0]                cnt_rd_sys,
    output reg  [3:0]                cnt_rd_ap,
    output reg  [3:0]                cnt_wr_vram,
    output reg  [3:0]                cnt_wr_sys,
    output reg  [3:0]                cnt_wr_ap,

    output wire [1:0]                g_req_valid,
    input  wire [1:0]                g_req_ready,
    output wire [63:0]               g_req_addr,
    output wire [1:0]                g_req_write,
    input  wire [1:0]                g_resp_valid,
    input  wire                      g_resp_fault,
    input  wire [3:0]                g_resp_code,
    input  wire [47:0]               g_resp_addr,
    input  wire                      g_resp_system,
    output reg                       inv_all,
    output reg                       inv_page_valid,
    output wire [31:0]               inv_page,

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

    `include "gmc_regs.vh"

    // ------------------------------------------------------------ clock

    // The engine's clock stops while it is quiet (docs/dma.md, Clock
    // gating): idle or faulted with nothing it could start, nothing owed
    // by the bus, no request waiting for a ready, no pulse pending. Its
    // inputs change only through register writes and commands, which wake
    // it for the edge after them; its reset is stretched by a cycle so the
    // gate's enable flop has sampled it before the first gated edge.
    reg  rst_d;
    wire erst = rst || rst_d;
    wire quiet;
    wire gclk;
    always @(posedge clk) rst_d <= rst;
    gmc_clk_gate #(.GATE(CLOCK_GATE)) u_gate (
        .clk(clk), .en(erst || clk_on || reg_write || cmd_skip || cmd_reset || !quiet),
        .gclk(gclk), .on(clk_run)
    );

    // ------------------------------------------------------------ state

    localparam [4:0] S_IDLE = 5'd0,                 S_FR = 5'd2,   S_CHK = 5'd3,
                     S_BLK = 5'd4,   S_XL = 5'd5,   S_XLW = 5'd6,  S_XLR = 5'd7,
                     S_GATH = 5'd8,  S_SRD = 5'd9,  S_SRDW = 5'd10, S_VRW = 5'd11,
                     S_WR = 5'd12,   S_WB = 5'd13,  S_MAP = 5'd14, S_MAPR = 5'd15,
                     S_MAPW = 5'd16,                                 S_DONE = 5'd19;
    // Kinds of a side: where byte k of it lives.
    localparam [2:0] K_VRAM = 3'd0, K_AP = 3'd1, K_MDL = 3'd2, K_BUS = 3'd3,
                     K_IMM = 3'd4,  // WRITE_PHYSICAL's W3 (source)
                     K_PAT = 3'd5,  // FILL / POISON pattern (source)
                     K_RES = 3'd6;  // DMA_READ_RESULT (destination)

    reg [4:0]  st;
    // The packet. Bits only ever checked for zero are held as one flag
    // bit (see S_FR): W0[31:16] as W0[16], W1/W2[63:48] as bit 48; the
    // bits above the flag are 0, so the checker's zero tests of those
    // fields and of the whole word see the same result.
    reg [63:0] w0, w1, w2, w3;
    reg [1:0]  beat;
    reg        fetch_err;
    reg        in_ib;
    reg [47:0] ib_next;          // indirect packet being executed (moves on when it completes or is skipped)
    reg [26:0] ib_left;          // indirect packets not fetched yet
    reg [19:0] head;
    reg        faulted;
    reg [7:0]  f_code;
    reg [63:0] fence, rresult;

    // The data movement of one packet.
    reg [2:0]  skind, dkind;
    // Both sides walk forward only (the source one byte, the destination
    // one block at a time), so their addresses are counters rather than
    // start + offset sums, and every cache below is dropped when its
    // counter crosses the boundary the cache covers instead of comparing
    // addresses.
    reg [47:0] sl, dl;           // linear address of the next source byte / destination block (MDL: 4096 * PAGE + OFFSET)
                                 // (MAP/UNMAP: dl[31:0] is the aperture page of the current PTE, inv_page)
    // Bytes (MAP/UNMAP: pages) still to move: W0's LENGTH, counted down
    // in place once the packet is checked.
    wire [31:0] left = w0[63:32];
    reg        s0, d0;           // the side is still in its first page
    reg [11:3] sseg, dseg;       // word of the side's first byte in that page
    reg [1:0]  so, dof;          // bits 4:3 of the side's first MDL entry
    reg [2:0]  spc, dpc;         // pages translated on the side so far (saturating at 4)
    reg        stv, dtv;         // translation caches (valid until the page is left), bus page
    reg [47:12] stbase, dtbase;
    reg        swv;              // source word buffer (valid until the source leaves the word)
    reg [63:0] swdata;
    reg [63:0] wdata;
    reg [7:0]  wstrb;
    reg [3:0]  j, n;
    reg        xs;               // side being translated: 0 source, 1 destination
    reg [4:0]  xret;             // state to return to after a translation

    // AXI request registers (held until ready) and the epoch bookkeeping.
    reg        ar_v, aw_v, w_v;
    reg [47:0] ar_a;
    reg [1:0]  ar_s;
    reg [7:0]  ar_l;
    reg [1:0]  ar_e, aw_e;
    reg [1:0]  ep;
    reg [3:0]  owe_rd, owe_wr;   // per epoch: a read (write) is owed by the bus
    reg [31:0] wd_cnt;
    reg [47:0] xact_addr;        // burst address of the transaction owed (TIMEOUT)
    reg        g_v;

    // ------------------------------------------------------- packet check

    // The checks of gmc_dma (the same module, so the same checks in the
    // same order), its range arithmetic done one comparison per cycle by
    // gmc_dmc_range while the engine waits in S_CHK for chk_done.
    wire [3:0]  chk_code;
    wire [47:0] chk_addr;
    wire        s_vram, d_vram;
    wire        chk_done;
    wire [5:0]  chk_ranges;
    gmc_dmc_range #(
        .VRAM_BYTES(VRAM_BYTES), .APERTURE_BASE(APERTURE_BASE), .APERTURE_PAGES(APERTURE_PAGES),
        .PROT_RANGES(PROT_RANGES)
    ) u_range (
        .clk(gclk), .run(st == S_CHK), .w1(w1[31:0]), .w2(w2[31:0]), .len(w0[63:32]),
        .prot_base(prot_base), .prot_limit(prot_limit), .done(chk_done), .ranges(chk_ranges)
    );
    gmc_dma_check #(
        .VRAM_BYTES(VRAM_BYTES), .APERTURE_BASE(APERTURE_BASE), .APERTURE_PAGES(APERTURE_PAGES),
        .PROT_RANGES(PROT_RANGES), .EXT_RANGES(1)
    ) u_check (
        .en(st == S_CHK && chk_done), .w0(w0), .w1(w1), .w2(w2), .w3(w3), .in_ib(in_ib),
        .prot_base(prot_base), .prot_limit(prot_limit), .ranges(chk_ranges),
        .chk_code(chk_code), .chk_addr(chk_addr), .s_vram(s_vram), .d_vram(d_vram)
    );

    wire [7:0]  op    = w0[7:0];
    wire        rd_hi16_nz  = m_axi_rdata[31:16] != 16'd0;
    wire        rd_top16_nz = m_axi_rdata[63:48] != 16'd0;
    wire [7:0]  flags = w0[15:8];

    // ------------------------------------------------------- addresses

    // The next byte of each side (destination: the first byte of the block).
    wire [47:0] dlin = dl;
    wire [47:0] slin = sl;
    wire        s_tr = skind == K_AP || skind == K_MDL;   // translated sides
    wire        d_tr = dkind == K_AP || dkind == K_MDL;
    wire [47:0] dphys = d_tr ? {dtbase, dlin[11:0]} : dlin;
    wire [47:0] sphys = s_tr ? {stbase, slin[11:0]} : slin;
    // Bytes of the destination block: to the end of its word or of the range.
    wire [3:0]  to_end = 4'd8 - {1'b0, dlin[2:0]};
    wire [3:0]  nblk = (left < {28'd0, to_end}) ? left[3:0] : to_end;

    // The burst the full engine issues for a data beat: inside the 256-byte
    // block, from the first word of the side's range in this page.
    function [11:0] burst_lo;
        input [11:8] blk;
        input        first;
        input [11:3] seg;
        begin
            burst_lo = (first && seg[11:8] >= blk) ? {seg, 3'd0} : {blk, 8'd0};
        end
    endfunction
    wire [47:0] s_burst = {sphys[47:12], burst_lo(slin[11:8], s0, sseg)};
    wire [47:0] d_burst = {dphys[47:12], burst_lo(dlin[11:8], d0, dseg)};

    // MDL entry of the page being translated (MAP/UNMAP: of the next PTE,
    // on the source side). The full engine reads entries in aligned
    // 32-byte blocks from the side's first entry: the burst starts at that
    // first entry while the entry is in its block, i.e. while the first
    // entry's bits 4:3 plus the pages translated since stay below 4.
    wire [47:0] x_lin   = xs ? dlin : slin;
    wire [47:0] x_mdl   = xs ? w2[47:0] : w1[47:0];   // MDL base addresses
    wire [47:0] x_ent   = x_mdl + {12'd0, x_lin[44:12], 3'd0};
    wire [1:0]  x_o     = xs ? dof : so;
    wire [2:0]  x_pc    = xs ? dpc : spc;
    wire [47:0] x_eburst = ({1'b0, x_o} + x_pc <= 3'd3) ? {x_ent[47:5], x_o, 3'd0} : {x_ent[47:5], 5'd0};
    wire [2:0]  x_kind  = xs ? dkind : skind;

    wire [47:0] ring_addr = {ring_base, 12'd0} + {28'd0, head};
    wire [19:0] ring_mask = ~(20'hFFFFF << ring_log2);
    wire [19:0] head_next = (head + 20'd32) & ring_mask;
    // The packet being fetched or executed: HEAD's ring slot, or the
    // indirect buffer's current packet (ib_next moves on only when that
    // packet completes or is skipped, so this is also DMA_FAULT_PKT).
    wire [47:0] pkt_addr = in_ib ? ib_next : ring_addr;

    // ------------------------------------------------------ bus bookkeeping

    // An epoch owes at most one read and one write. An address goes onto
    // the bus only when its epoch owes nothing on that channel, and a
    // response is taken as the engine's only while no address of its own
    // waits: so after an abort into an epoch that still owes (once all
    // four epochs owe a hung transaction the epoch simply advances), the
    // late responses of that epoch are dropped rather than taken for new
    // ones, and the owed transactions never outnumber the flags, however
    // many the bus holds. A waiting address (epoch, stream and all) is held
    // meanwhile, so the watchdog counts and TIMEOUT names it. Only its own
    // handshake sets its epoch's flag, so ARVALID and AWVALID never drop
    // before it. In normal running the engine has one transaction in
    // flight and awaits it before the next, so nothing waits.
    wire ar_room = !owe_rd[ar_e];
    wire aw_room = !owe_wr[aw_e];
    wire ar_hs = ar_v && ar_room && m_axi_arready;
    wire aw_hs = aw_v && aw_room && m_axi_awready;
    wire w_hs  = w_v && m_axi_wready;
    wire [1:0] r_e = m_axi_rid[3:2];
    wire [1:0] b_e = m_axi_bid[3:2];
    wire r_cur = m_axi_rvalid && r_e == ep && !ar_v;   // a beat of the engine's read
    wire b_cur = m_axi_bvalid && b_e == ep && !aw_v;
    wire r_err = m_axi_rresp[1];
    wire b_err = m_axi_bresp[1];

    wire owes_cur = owe_rd[ep] || owe_wr[ep]
                    || (ar_v && ar_e == ep) || (aw_v && aw_e == ep) || w_v;
    wire owes_any = (owe_rd | owe_wr) != 4'd0 || ar_v || aw_v || w_v;
    wire any_hs = ar_hs || aw_hs || w_hs || m_axi_rvalid || m_axi_bvalid;
    // The watchdog also counts while an address waits for the bus, whatever
    // its epoch: one left from before an abort holds AR (AW), so the next
    // packet cannot even be fetched while nothing of this epoch is owed.
    wire wd_owes = owes_cur || ar_v || aw_v;
    wire wd_fire = watchdog != 32'd0 && wd_owes && !any_hs && wd_cnt + 32'd1 >= watchdog;

    // The next epoch after an abort: the first after ep that owes nothing,
    // else simply ep + 1.
    function [1:0] next_epoch;
        input [1:0] e;
        input [3:0] ord;
        input [3:0] owr;
        input       arp;
        input [1:0] are;
        input       awp;
        input [1:0] awe;
        reg   [1:0] c;
        reg         found;
        integer     i;
        begin
            next_epoch = e + 2'd1;
            found = 1'b0;
            for (i = 1; i < 4; i = i + 1) begin
                c = e + i[1:0];
                if (!found && !ord[c] && !owr[c]
                    && !(arp && are == c) && !(awp && awe == c)) begin
                    next_epoch = c;
                    found = 1'b1;
                end
            end
        end
    endfunction

    // ------------------------------------------------------------ outputs

    assign m_axi_arid = {{(ID_WIDTH-4){1'b0}}, ar_e, ar_s};
    assign m_axi_araddr = ar_a;
    assign m_axi_arlen = ar_l;
    assign m_axi_arsize = 3'd3;
    assign m_axi_arburst = 2'd1;
    assign m_axi_arlock = 1'b0;
    assign m_axi_arcache = 4'b0011;
    assign m_axi_arprot = 3'b000;
    assign m_axi_arvalid = ar_v && ar_room;
    assign m_axi_rready = 1'b1;
    assign m_axi_awid = {{(ID_WIDTH-4){1'b0}}, aw_e, 2'd3};
    // The write's address and data are the destination block's: dl,
    // dtbase, wdata and wstrb do not move from the write's issue to its
    // response, and no packet is fetched while AW or W is still owed.
    assign m_axi_awaddr = {dphys[47:3], 3'd0};
    assign m_axi_awlen = 8'd0;
    assign m_axi_awsize = 3'd3;
    assign m_axi_awburst = 2'd1;
    assign m_axi_awlock = 1'b0;
    assign m_axi_awcache = 4'b0011;
    assign m_axi_awprot = 3'b000;
    assign m_axi_awvalid = aw_v && aw_room;
    assign m_axi_wdata = wdata;
    assign m_axi_wstrb = wstrb;
    assign m_axi_wlast = 1'b1;
    assign m_axi_wvalid = w_v;
    assign m_axi_bready = 1'b1;

    assign g_req_valid = {g_v && xs, g_v && !xs};
    // (Held while g_v: x_lin does not move in S_XLW.)
    wire [31:0] g_a = {x_lin[31:12], 12'd0};
    assign g_req_addr = {g_a, g_a};
    assign g_req_write = 2'b10;
    // The page of the PTE being written, still held in the cycle of
    // inv_page_valid (dl moves on only when the next PTE starts).
    assign inv_page = dl[31:0];

    // VRAM: the source word read, and the destination / PTE write.
    wire [47:0] pte_word = {16'd0, 3'd0, pt_base[31:3]} + {16'd0, dl[31:0]};
    assign vr_req = (st == S_SRD) && skind == K_VRAM;
    assign vr_addr = sphys[VRAM_AW+2:3];
    assign vw_req = (st == S_WR && dkind == K_VRAM) || st == S_MAPW;
    assign vw_addr = (st == S_MAPW) ? pte_word[VRAM_AW-1:0] : dphys[VRAM_AW+2:3];
    assign vw_data = wdata;
    assign vw_strb = (st == S_MAPW) ? 8'hFF : wstrb;

    assign st_state = faulted ? 2'd2
                    : (st != S_IDLE || in_ib || (enable && head != tail)) ? 2'd1 : 2'd0;
    assign st_indirect = in_ib;
    assign st_rd_out = {7'd0, owe_rd[0]} + {7'd0, owe_rd[1]} + {7'd0, owe_rd[2]} + {7'd0, owe_rd[3]};
    assign st_wr_out = {7'd0, owe_wr[0]} + {7'd0, owe_wr[1]} + {7'd0, owe_wr[2]} + {7'd0, owe_wr[3]};
    assign st_head = head;
    assign st_fence = fence;
    assign st_fault_code = {faulted && in_ib, f_code};
    // The fault registers: pkt_addr (HEAD's slot or the indirect packet)
    // and xact_addr do not move while the engine is faulted (nothing is
    // fetched, completed or issued until skip or reset, which clear the
    // fault), so they are the latched values.
    assign st_fault_pkt = faulted ? pkt_addr : 48'd0;
    assign st_fault_addr = faulted ? xact_addr : 48'd0;
    assign st_read_result = rresult;

    wire pulses = ev_packets != 2'd0 || ev_fault || ev_fence_irq || inv_all || inv_page_valid
                  || {cnt_rd_vram, cnt_rd_sys, cnt_rd_ap, cnt_wr_vram, cnt_wr_sys, cnt_wr_ap} != 24'd0;
    wire can_fetch = !faulted && enable && (in_ib || head != tail);
    assign quiet = (st == S_IDLE) && !can_fetch && !owes_any && wd_cnt == 32'd0 && !pulses
                   && !m_axi_rvalid && !m_axi_bvalid;

    // The destination block is written: move to the next one (or finish).
    task next_block;
        begin
            dl <= dl_next;
            w0[63:32] <= left - {28'd0, n};
            if (dl_next[11:0] == 12'd0) begin dtv <= 1'b0; d0 <= 1'b0; end
            wdata <= 64'd0;
            wstrb <= 8'd0;
            st <= (left == {28'd0, n}) ? S_DONE : S_BLK;
        end
    endtask

    // Count n bytes moved for a source and a destination kind.
    task count;
        input [2:0] sk;
        input [2:0] dk;
        input [3:0] nb;
        begin
            if (sk == K_VRAM) cnt_rd_vram <= nb;
            if (sk == K_AP) cnt_rd_ap <= nb;
            if (sk == K_MDL || sk == K_BUS) cnt_rd_sys <= nb;
            if (dk == K_VRAM) cnt_wr_vram <= nb;
            if (dk == K_AP) cnt_wr_ap <= nb;
            if (dk == K_MDL || dk == K_BUS) cnt_wr_sys <= nb;
        end
    endtask

    // Stop on a fault: record it; a new epoch when the bus owes anything.
    task fault;
        input [3:0]  code;
        input [47:0] addr;
        begin
            faulted <= 1'b1;
            f_code <= {4'd0, code};
            xact_addr <= addr;
            ev_fault <= 1'b1;
            st <= S_IDLE;
            if (owes_cur) ep <= next_epoch(ep, owe_rd, owe_wr, ar_v, ar_e, aw_v, aw_e);
            g_v <= 1'b0;
        end
    endtask

    // Issue a read (held until ARREADY) of len+1 beats on a stream.
    task rd;
        input [47:0] a;
        input [1:0]  s;
        input [7:0]  l;
        input [47:0] burst;
        begin
            ar_v <= 1'b1;
            ar_a <= a;
            ar_s <= s;
            ar_l <= l;
            ar_e <= ep;
            xact_addr <= burst;
        end
    endtask

    // Issue a one-beat write of the destination block (wdata, wstrb) to
    // its word.
    task wr;
        input [47:0] burst;
        begin
            aw_v <= 1'b1;
            aw_e <= ep;
            w_v <= 1'b1;
            xact_addr <= burst;
        end
    endtask

    // Start moving len bytes from one side to another.
    task xfer;
        input [2:0]  sk;
        input [47:0] ss;
        input [2:0]  dk;
        input [47:0] ds;
        begin
            skind <= sk;
            sl <= ss;
            s0 <= 1'b1;
            sseg <= ss[11:3];
            dkind <= dk;
            dl <= ds;
            d0 <= 1'b1;
            dseg <= ds[11:3];
            stv <= 1'b0;
            dtv <= 1'b0;
            swv <= 1'b0;
            wdata <= 64'd0;
            wstrb <= 8'd0;
            st <= S_BLK;
        end
    endtask

    // One byte of the source for the byte j of the block.
    // (WRITE_PHYSICAL's source starts at 0, so its byte index is slin too.)
    wire [2:0]  d_pos  = dlin[2:0] + j[2:0];
    wire [63:0] s_word = (skind == K_IMM) ? w3 : swdata;
    // FILL's pattern is W3[31:0]; DISCARD's poison is 0xDEADBEEF.
    wire [31:0] pat    = (op[3:0] == GMC_DMA_OP_DISCARD) ? 32'hDEADBEEF : w3[31:0];
    wire [7:0]  pat_b  = pat[8*d_pos[1:0] +: 8];
    wire [7:0]  s_byte = (skind == K_PAT) ? pat_b : s_word[8*slin[2:0] +: 8];
    wire        s_mem  = skind == K_VRAM || skind == K_AP || skind == K_MDL || skind == K_BUS;
    wire        s_xl   = s_tr && !stv;
    wire        d_xl   = d_tr && !dtv;
    // (One adder: the source moves a byte, or MAP/UNMAP's MDL walk a page.)
    wire [47:0] sl_next = sl + ((st == S_MAPW) ? 48'h1000 : 48'd1);
    wire [47:0] dl_next = dl + {44'd0, n};

    // Faults of the current state. Every bus fault names the burst address
    // recorded when the transaction was issued; the watchdog's TIMEOUT
    // wins over any other fault of the same cycle.
    wire f_bus = (st == S_FR && r_cur && m_axi_rlast && (fetch_err || r_err))
                 || ((st == S_SRDW || st == S_XLR || st == S_MAPR) && r_cur && r_err)
                 || (st == S_WB && b_cur && b_err);
    wire f_chk = st == S_CHK && chk_done && chk_code != GMC_DMA_FAULT_NONE;
    wire f_pte = st == S_XLW && g_resp_valid[xs] && (g_resp_fault || !g_resp_system);
    wire f_to  = wd_fire && (st != S_IDLE || can_fetch);
    wire flt   = f_bus || f_chk || f_pte || f_to;
    wire [3:0]  flt_code = f_to ? GMC_DMA_FAULT_TIMEOUT : f_bus ? GMC_DMA_FAULT_BUS
                         : f_chk ? chk_code
                         : (g_resp_code == GMC_XLATE_CODE_INVALID || !g_resp_system)
                           ? GMC_DMA_FAULT_PTE_INVALID : GMC_DMA_FAULT_PTE_PERM;
    wire [47:0] flt_addr = (f_to || f_bus) ? xact_addr : f_chk ? chk_addr : {16'd0, x_lin[31:12], 12'd0};

    integer b;

    always @(posedge gclk) begin
        // One-cycle pulses.
        ev_packets <= 2'd0;
        ev_fault <= 1'b0;
        ev_fence_irq <= 1'b0;
        inv_all <= 1'b0;
        inv_page_valid <= 1'b0;
        {cnt_rd_vram, cnt_rd_sys, cnt_rd_ap, cnt_wr_vram, cnt_wr_sys, cnt_wr_ap} <= 24'd0;

        // Requests leave at their handshake; the bus then owes a response.
        if (ar_hs) ar_v <= 1'b0;
        if (aw_hs) aw_v <= 1'b0;
        if (w_hs) w_v <= 1'b0;
        // (A handshake needs its epoch's flag clear, a response its flag
        // set, so the two never meet on one flag.)
        for (b = 0; b < 4; b = b + 1) begin
            if (ar_hs && ar_e == b[1:0]) owe_rd[b] <= 1'b1;
            else if (m_axi_rvalid && m_axi_rlast && r_e == b[1:0]) owe_rd[b] <= 1'b0;
            if (aw_hs && aw_e == b[1:0]) owe_wr[b] <= 1'b1;
            else if (m_axi_bvalid && b_e == b[1:0]) owe_wr[b] <= 1'b0;
        end

        // Watchdog: cycles with transactions of this epoch owed (or an
        // address waiting) and no handshake on any channel, while the
        // engine has work: idle, it only waits for late responses (it can
        // fault only with work, f_to), so new work starts a full count and
        // a fetch held back meanwhile is what TIMEOUT names.
        if (!wd_owes || any_hs || (st == S_IDLE && !can_fetch)) wd_cnt <= 32'd0;
        else wd_cnt <= wd_cnt + 32'd1;

        if (g_v && g_req_ready[xs]) g_v <= 1'b0;

        case (st)
            S_IDLE: begin
                // (Not while a write is on the bus: its address and data
                // are the live destination and word registers, which the
                // next packet would change.)
                if (can_fetch && !ar_v && !aw_v && !w_v) begin
                    rd(pkt_addr, 2'd0, 8'd3, pkt_addr);
                    if (in_ib) ib_left <= ib_left - 27'd1;
                    beat <= 2'd0;
                    fetch_err <= 1'b0;
                    st <= S_FR;
                end
            end
            S_FR: if (r_cur) begin
                // W0[31:16] and W1/W2[63:48] are only checked for zero:
                // one flag bit each is kept instead (bit 16, bit 48).
                case (beat)
                    2'd0: w0 <= {m_axi_rdata[63:32], 15'd0, rd_hi16_nz, m_axi_rdata[15:0]};
                    2'd1: w1 <= {15'd0, rd_top16_nz, m_axi_rdata[47:0]};
                    2'd2: w2 <= {15'd0, rd_top16_nz, m_axi_rdata[47:0]};
                    default: w3 <= m_axi_rdata;
                endcase
                beat <= beat + 2'd1;
                if (r_err) fetch_err <= 1'b1;
                if (m_axi_rlast && !fetch_err && !r_err) st <= S_CHK;
            end
            S_CHK: begin
                if (chk_done && !f_chk) begin   // (a fault below instead)
                    st <= S_DONE;
                    // MAP/UNMAP: PTEs from (W2 - APERTURE_BASE) / 4096, MDL
                    // entries from W3's MDL_PAGE, walked on the source side.
                    dl <= {16'd0, ((w2[31:0] - APERTURE_BASE) >> 12) - 32'd1};
                    n <= 4'd1;   // (MAP/UNMAP: dl and left step by one)
                    sl <= {17'd0, w3[18:0], 12'd0};
                    xs <= 1'b0;
                    so <= w1[4:3] + w3[1:0];
                    dof <= w2[4:3] + w3[33:32];
                    spc <= 3'd0;
                    dpc <= 3'd0;
                    case (op[3:0])
                        GMC_DMA_OP_TRANSFER:
                            xfer(flags[0] ? K_MDL : (s_vram ? K_VRAM : K_AP),
                                 flags[0] ? {16'd0, w3[19:0], w3[31:20]} : w1[47:0],
                                 flags[1] ? K_MDL : (d_vram ? K_VRAM : K_AP),
                                 flags[1] ? {16'd0, w3[51:32], w3[63:52]} : w2[47:0]);
                        GMC_DMA_OP_FILL: begin
                            xfer(K_PAT, 48'd0, K_VRAM, w2[47:0]);
                        end
                        GMC_DMA_OP_DISCARD: if (flags[3]) begin
                            xfer(K_PAT, 48'd0, K_VRAM, w2[47:0]);
                        end
                        GMC_DMA_OP_READ_PHYSICAL:
                            xfer(!flags[2] ? K_BUS : (s_vram ? K_VRAM : K_AP), w1[47:0], K_RES, 48'd0);
                        GMC_DMA_OP_WRITE_PHYSICAL:
                            xfer(K_IMM, 48'd0, !flags[2] ? K_BUS : (d_vram ? K_VRAM : K_AP), w2[47:0]);
                        GMC_DMA_OP_MAP_APERTURE, GMC_DMA_OP_UNMAP_APERTURE: st <= S_MAP;
                        GMC_DMA_OP_FLUSH_TLB: inv_all <= 1'b1;
                        // WRITE_MEM: W3 written to W2 as an 8-byte transfer
                        // (not counted), then DMA_FENCE in S_DONE.
                        GMC_DMA_OP_FENCE: if (flags[4]) begin
                            xfer(K_IMM, 48'd0, K_BUS, w2[47:0]);
                            w0[63:32] <= 32'd8;   // (LENGTH is 0, checked)
                        end
                        GMC_DMA_OP_INDIRECT: begin
                            in_ib <= 1'b1;
                            ib_next <= w1[47:0];
                            ib_left <= left[31:5];
                            st <= S_IDLE;
                        end
                        default: ;
                    endcase
                end
            end

            // ---- data: one destination block (word) at a time
            S_BLK: begin
                n <= nblk;
                j <= 4'd0;
                if (d_xl) begin
                    xs <= 1'b1;
                    xret <= S_BLK;
                    st <= S_XL;
                end else st <= S_GATH;
            end
            S_GATH: begin
                if (j == n) st <= S_WR;
                else if (s_mem && s_xl) begin
                    xs <= 1'b0;
                    xret <= S_GATH;
                    st <= S_XL;
                end else if (s_mem && !swv) begin
                    st <= S_SRD;
                end else begin
                    wdata[8*d_pos +: 8] <= s_byte;
                    wstrb[d_pos] <= 1'b1;
                    j <= j + 4'd1;
                    sl <= sl_next;
                    if (sl_next[2:0] == 3'd0) swv <= 1'b0;
                    if (sl_next[11:0] == 12'd0) begin stv <= 1'b0; s0 <= 1'b0; end
                end
            end
            S_SRD: begin
                if (skind == K_VRAM) begin
                    if (vr_gnt) st <= S_VRW;
                end else if (!ar_v) begin
                    rd({sphys[47:3], 3'd0}, 2'd3, 8'd0, s_burst);
                    st <= S_SRDW;
                end
            end
            S_VRW: if (vr_valid) begin
                swdata <= vr_data;
                swv <= 1'b1;
                st <= S_GATH;
            end
            S_SRDW: if (r_cur) begin
                if (!r_err) begin
                    swdata <= m_axi_rdata;
                    swv <= 1'b1;
                    st <= S_GATH;
                end
            end
            S_WR: begin
                if (dkind == K_VRAM) begin
                    if (vw_gnt) begin
                        count(skind, dkind, n);
                        next_block;
                    end
                end else if (dkind == K_RES) begin
                    count(skind, dkind, n);
                    rresult <= wdata;
                    st <= S_DONE;
                end else if (!aw_v && !w_v) begin
                    wr(d_burst);
                    st <= S_WB;
                end
            end
            S_WB: if (b_cur) begin
                if (!b_err) begin
                    if (op[3:0] != GMC_DMA_OP_FENCE) count(skind, dkind, n);
                    next_block;
                end
            end

            // ---- translation of the page holding x_lin for side xs
            S_XL: begin
                if (x_kind == K_AP) begin
                    g_v <= 1'b1;
                    st <= S_XLW;
                end else if (!ar_v) begin
                    rd(x_ent, xs ? 2'd2 : 2'd1, 8'd0, x_eburst);
                    st <= S_XLR;
                end
            end
            S_XLW: if (g_resp_valid[xs]) begin
                if (!f_pte) begin
                    if (xs) begin dtv <= 1'b1; dtbase <= g_resp_addr[47:12]; end
                    else begin stv <= 1'b1; stbase <= g_resp_addr[47:12]; swv <= 1'b0; end
                    st <= xret;
                end
            end
            S_XLR: if (r_cur) begin
                if (!r_err) begin
                    if (xs) begin dtv <= 1'b1; dtbase <= m_axi_rdata[47:12]; if (dpc != 3'd4) dpc <= dpc + 3'd1; end
                    else begin stv <= 1'b1; stbase <= m_axi_rdata[47:12]; swv <= 1'b0; if (spc != 3'd4) spc <= spc + 3'd1; end
                    st <= xret;
                end
            end

            // ---- MAP / UNMAP: one PTE at a time
            S_MAP: begin
                if (left == 32'd0) st <= S_DONE;
                else if (op[3:0] == GMC_DMA_OP_UNMAP_APERTURE) begin
                    dl <= dl_next;
                    wdata <= {16'd0, dummy_page, 12'd0} | GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK
                           | GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK;
                    st <= S_MAPW;
                end else if (!ar_v) begin
                    dl <= dl_next;
                    rd(x_ent, 2'd2, 8'd0, x_eburst);
                    st <= S_MAPR;
                end
            end
            S_MAPR: if (r_cur) begin
                if (!r_err) begin
                    wdata <= {16'd0, m_axi_rdata[47:12], 12'd0} | GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK
                           | (w3[GMC_PKT_MAP_W3_SNOOPED_LSB] ? GMC_PTE_SNOOPED_MASK : 64'd0)
                           | (w3[GMC_PKT_MAP_W3_READABLE_LSB] ? GMC_PTE_READABLE_MASK : 64'd0)
                           | (w3[GMC_PKT_MAP_W3_WRITEABLE_LSB] ? GMC_PTE_WRITEABLE_MASK : 64'd0);
                    st <= S_MAPW;
                end
            end
            S_MAPW: if (vw_gnt) begin
                inv_page_valid <= 1'b1;
                w0[63:32] <= left - {28'd0, n};
                sl <= sl_next;
                if (spc != 3'd4) spc <= spc + 3'd1;
                st <= S_MAP;
            end

            // ---- completion
            S_DONE: begin
                if (op[3:0] == GMC_DMA_OP_FENCE) begin
                    fence <= w3;
                    ev_fence_irq <= flags[5];
                end
                ib_next <= ib_next + 48'd32;
                if (in_ib && ib_left == 27'd0) begin
                    in_ib <= 1'b0;
                    head <= head_next;
                    ev_packets <= 2'd2;
                end else begin
                    if (!in_ib) head <= head_next;
                    ev_packets <= 2'd1;
                end
                st <= S_IDLE;
            end
            default: st <= S_IDLE;
        endcase

        // Faults (one site: the state's own update above is overridden).
        if (flt) fault(flt_code, flt_addr);

        // Commands.
        if (cmd_reset) begin
            faulted <= 1'b0;
            f_code <= 8'd0;
            in_ib <= 1'b0;
            head <= tail;
            st <= S_IDLE;
            g_v <= 1'b0;
            if (owes_cur) ep <= next_epoch(ep, owe_rd, owe_wr, ar_v, ar_e, aw_v, aw_e);
        end else if (cmd_skip && faulted) begin
            faulted <= 1'b0;
            f_code <= 8'd0;
            ib_next <= ib_next + 48'd32;
            if (in_ib && ib_left == 27'd0) begin
                in_ib <= 1'b0;
                head <= head_next;
                ev_packets <= 2'd1;
            end else if (!in_ib) head <= head_next;
        end

        if (erst) begin
            st <= S_IDLE;
            faulted <= 1'b0;
            f_code <= 8'd0;
            in_ib <= 1'b0;
            head <= 20'd0;
            fence <= 64'd0;
            rresult <= 64'd0;
            ar_v <= 1'b0; aw_v <= 1'b0; w_v <= 1'b0;
            ep <= 2'd0;
            owe_rd <= 4'd0;
            owe_wr <= 4'd0;
            wd_cnt <= 32'd0;
            g_v <= 1'b0;
            ev_packets <= 2'd0;
            ev_fault <= 1'b0;
            ev_fence_irq <= 1'b0;
            inv_all <= 1'b0;
            inv_page_valid <= 1'b0;
            {cnt_rd_vram, cnt_rd_sys, cnt_rd_ap, cnt_wr_vram, cnt_wr_sys, cnt_wr_ap} <= 24'd0;
        end
    end

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, w0[31:16], pt_base[2:0], flags[7:6], x_lin[47:45], x_lin[11:0], sl_next[47:12],
                    dl_next[47:12], m_axi_rid, m_axi_bid, m_axi_rresp[0], m_axi_bresp[0], g_resp_addr[11:0],
                    x_ent[2:0], pte_word, op[7:4], dphys[2:0], sphys[2:0]};
    /* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
