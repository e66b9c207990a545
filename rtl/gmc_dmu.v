// gmc: the micro-sequenced DMA engine: a 16-bit processor whose state lives in block RAM.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// docs/dma.md, "A micro-sequenced engine", is the design. This module is
// the datapath and sequencer; its microcode (rtl/gmc_dmu_ucode.s,
// assembled by tools/dmu_asm.py) implements the DMA contract, and gmc_top
// builds it with DMA_ENGINE = 3. It runs on a gated clock (gmc_clk_gate)
// that stops while it is quiet (below, and docs/dma.md, Clock gating).
//
// The machine:
//   - a register file of 256 x 16 bits in block RAM, two copies with the
//     same writes for the two ALU operands (A = ui[15:8], B = ui[7:0]);
//     registers 0x80..0xFF are mirrored into a 32 x 64 status RAM that the
//     register block reads through st_ra / st_rd (one cycle later), a
//     64-bit register (four file registers 0x80 + 4g .. 0x83 + 4g, lane 0
//     the low half) per word g: 0 DMA_FENCE, 1 DMA_READ_RESULT,
//     2 DMA_FAULT_PKT, 3 DMA_FAULT_ADDR, 4..11 the counters
//     CNT_DMA_RD_VRAM, _WR_VRAM, _RD_SYS, _WR_SYS, _RD_APERTURE,
//     _WR_APERTURE, _PACKETS, _FAULTS (the microcode adds to them);
//   - the status RAM takes a register's lanes 0..2 written by consecutive
//     micro-instructions (a run) together with its lane 3, or when the
//     run ends without it (the first instruction that writes none of that
//     register's lanes 0..2), so the register block never reads a 64-bit
//     value half updated: lane 3 is written last (its RAM is written at
//     once, the others' from a 48-bit staging register);
//   - CNT_CLEAR (cnt_clear) marks the eight counters cleared: while
//     marked, a counter reads 0 to the register block and to the ALU's A
//     operand, and a run that writes lanes 0, 1, 2 and then 3 of it clears
//     its mark, unless cnt_clear came again during the run (that run's
//     sum, taken before the clear, is dropped);
//   - 768 x 32 bits of microcode in block RAM (gmc_dmu_rom);
//   - a 16-bit ALU (add, subtract with carry chaining, logic, funnel
//     shifts by 4, 8 and 12 bits), flags C and Z;
//   - in flip-flops only what a bus needs at once: one 48-bit address
//     register shared by AR, AW, the GART request and the VRAM ports (the
//     engine has one transaction in flight), the 64-bit write word and
//     strobes, the 64-bit response buffer (R beat, VRAM word or GART
//     answer), the AXI valid bits, epochs and owe flags, the watchdog,
//     HEAD (read continuously by the register block).
// A micro-instruction takes two cycles: D (instruction word out of the
// ROM, file read addresses) and X (operands out of the file, execute,
// write back; the ROM reads the next instruction's address), after F (the
// first address) at reset. A branch to itself that is taken (a wait for a
// flag: `wait: brn can_fetch, wait`) stays in X, its condition tested in
// every cycle, so a waiting engine's state does not change from cycle to
// cycle and its clock can stop. Hardware events redirect the
// sequencer to a vector: reset 0, RESET command 1, watchdog 2, SKIP 3.
//
// Micro-instruction (32 bits), class in [31:28]:
//   0 ALU  f[27:24] rd[23:16] ra[15:8] rb[7:0]     rd <= A f B
//   1 ALUI f[27:24] rd[23:16] ra[15:8] imm[7:0]    rd <= A f imm
//   2 LDI  rd[23:16] imm[15:0]
//   3 IN   rd[23:16] src[5:0]                      rd <= input src
//   4 OUT  dst[27:22] ra[15:8] aux[7:0]            bus action with A
//   5 BR   cond[27:22] pol[21] call[20] target {[17:16], [7:0]} (cond 32+k: bit k of A, ra[15:8])
//   6 RET
//   7 TST  mask[15:0]                              Z <= (nzm & mask) == 0
module gmc_dmu #(
    parameter integer VRAM_BYTES = 8 * 1024 * 1024,
    parameter [31:0]  APERTURE_BASE = 32'h8000_0000,
    parameter integer APERTURE_PAGES = 4096,
    // AXI ID width of the master, >= 4.
    parameter integer ID_WIDTH = 4,
    // VRAM word address width, derived.
    // 0: no clock gate, the engine on clk (gmc_clk_gate GATE; FPGA builds).
    parameter integer CLOCK_GATE = 1,
    parameter integer VRAM_AW = $clog2(VRAM_BYTES / 8)
) (
    input  wire                      clk,
    input  wire                      rst,

    // Any register write (its cycle), DMA_CTRL.CLOCK_ON, and the cycles in
    // which the engine's clock has an edge (CNT_DMA_CLOCK).
    input  wire                      reg_write,
    input  wire                      clk_on,
    output wire                      clk_run,

    input  wire                      enable,
    input  wire [4:0]                ring_log2,
    input  wire [19:0]               tail,
    input  wire [31:0]               watchdog,
    // The configuration the microcode reads (ring base, page table base,
    // dummy page, protected ranges): written by the register block into a
    // 32 x 32 configuration RAM as the host writes it, read by IN.
    // cfg_we: a byte write enable per byte of cfg_wd.
    input  wire [3:0]                cfg_we,
    input  wire [4:0]                cfg_wa,
    input  wire [31:0]               cfg_wd,
    input  wire                      cmd_skip,
    input  wire                      cmd_reset,
    // A write to CNT_CLEAR.
    input  wire                      cnt_clear,

    output wire [1:0]                st_state,
    output wire                      st_indirect,
    output wire [7:0]                st_rd_out,
    output wire [7:0]                st_wr_out,
    output wire [19:0]               st_head,
    output wire [8:0]                st_fault_code,
    // Status RAM read port: word st_ra holds file registers 0x80 + 4*st_ra
    // (bits 15:0) .. 0x83 + 4*st_ra (bits 63:48), st_rz (with it) that it
    // is a counter marked cleared (it reads 0).
    input  wire [4:0]                st_ra,
    output wire [63:0]               st_rd,
    output reg                       st_rz,
    output reg  [1:0]                ev_packets,
    output reg                       ev_fault,
    output reg                       ev_fence_irq,

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
    // gating): the sequencer waits in a branch to itself, nothing is owed
    // by the bus, the VRAM ports or the GART, no request waits for a ready
    // and no status RAM write is staged. Its other inputs change only
    // through register writes and commands: a write opens the gate for the
    // edge at the end of its cycle (CNT_CLEAR is taken there), a command
    // pulse for the edge after it, and a write that ends the wait (TAIL,
    // ENABLE) makes the engine not quiet in the next cycle. The status
    // RAM (read by the register block at any time) and the configuration
    // RAM (written by it) stay on clk; the status RAM is written only in a
    // cycle with an engine edge (clk_run).
    wire gclk;
    wire quiet;
    gmc_clk_gate #(.GATE(CLOCK_GATE)) u_gate (
        .clk(clk), .en(rst || clk_on || reg_write || cmd_skip || cmd_reset || !quiet),
        .gclk(gclk), .on(clk_run)
    );

    // ------------------------------------------------------------ sequencer

    localparam [1:0] PH_F = 2'd0, PH_D = 2'd1, PH_X = 2'd2;
    localparam [3:0] C_ALU = 4'd0, C_ALUI = 4'd1, C_LDI = 4'd2, C_IN = 4'd3,
                     C_OUT = 4'd4, C_BR = 4'd5, C_RET = 4'd6, C_TST = 4'd7;
    localparam [9:0] V_RESET = 10'd1, V_TIMEOUT = 10'd2, V_SKIP = 10'd3;

    reg  [1:0]  ph;
    reg  [9:0]  pc, ret;
    wire [31:0] ui;
    wire [3:0]  cls = {1'b0, ui[30:28]};
    wire [3:0]  fn  = ui[27:24];
    wire [7:0]  rd  = ui[23:16];
    wire [7:0]  ra  = ui[15:8];
    wire [7:0]  rb  = ui[7:0];
    wire [5:0]  sel = ui[27:22];
    // A run of byte ops (out rep) holds the next instruction in X.
    reg  [3:0]  rep;
    reg  [1:0]  rep_op;
    wire        rep_on = rep != 4'd0;
    wire        x   = ph == PH_X && !rep_on;

    reg  [9:0]  pc_next;
    wire        vec_reset, vec_to, vec_skip;
    wire        vec = vec_reset || vec_to || vec_skip;
    wire [9:0]  vec_pc = vec_reset ? V_RESET : vec_to ? V_TIMEOUT : V_SKIP;
    // The ROM reads the instruction of the next X (or the vector's).
    wire [9:0]  rom_a = vec ? vec_pc : (x ? pc_next : pc);

    gmc_dmu_rom u_rom (.clk(gclk), .a(rom_a), .q(ui));

    // ------------------------------------------------------------ register file

    wire [15:0] a_rf, b_q;
    reg  [15:0] res;
    reg         rf_we;
    // The bank (out bank) maps registers 0x40..0x4F (the source side's
    // state) onto 0x50..0x5F (the destination's), so one routine serves
    // both sides; it also picks the GART side and the MDL entry stream.
    reg         bank;
    function [7:0] bmap;
        input [7:0] r;
        input       bk;
        begin
            bmap = {r[7:5], r[4] ^ (bk && r[7:5] == 3'b010), r[3:0]};
        end
    endfunction
    // The packet fetch's beat index (out wix): file writes of registers
    // 0x00..0x03 go to 0x00 + 4 * wix .. 0x03 + 4 * wix (the packet's word
    // wix), so one loop stores the four beats.
    reg  [1:0]  wix;
    wire [7:0]  rd_w = {rd[7:4], rd[3:2] | (rd[7:4] == 4'd0 ? wix : 2'd0), rd[1:0]};
    wire [7:0]  rd_b = bmap(rd_w, bank);
    // (The file is written only in X, and what it reads then, for the
    // instruction in X again, is not used: the next instruction's operands
    // are read in its D. So a read in a write's cycle may return anything.)
    gmc_dmu_rf #(.AW(8), .DW(16), .RW_ANY(1)) u_rfa (.clk(gclk), .we(rf_we), .wa(rd_b), .wd(res),
                                                     .ra(bmap(ra, bank)), .rd(a_rf));
    gmc_dmu_rf #(.AW(8), .DW(16), .RW_ANY(1)) u_rfb (.clk(gclk), .we(rf_we), .wa(rd_b), .wd(res),
                                                     .ra(bmap(rb, bank)), .rd(b_q));

    // Counter k (0..7) is status word 4 + k, file registers 0x90 + 4k ..
    // 0x93 + 4k; c_pend[k] marks it cleared.
    reg  [7:0]  c_pend;
    function is_ctr;
        input [4:0] g;
        begin
            is_ctr = g >= 5'd4 && g <= 5'd11;
        end
    endfunction
    // (Words 4..11: k = g - 4 in three bits.)
    function [2:0] ctr_of;
        input [2:0] g;
        begin
            ctr_of = g - 3'd4;
        end
    endfunction
    // Operand A reads 0 from a counter marked cleared.
    wire [15:0] a_q = (ra[7] && is_ctr(ra[6:2]) && c_pend[ctr_of(ra[4:2])]) ? 16'd0 : a_rf;

    // The status RAM's staging: lanes 0..2 (sg_m) of word sg_g written so
    // far by the current run, and whether cnt_clear came during it. Lane
    // 3's RAM is written directly (st_w3).
    reg  [47:0] sg_d;
    reg  [2:0]  sg_m;
    reg  [4:0]  sg_g;
    reg         sg_clr;
    wire        st_w = rf_we && rd[7] && rd[1:0] != 2'd3;
    wire        st_w3 = rf_we && rd[7] && rd[1:0] == 2'd3;
    wire        sg_same = st_w && sg_m != 3'd0 && rd[6:2] == sg_g;
    wire        sg_commit = x && sg_m != 3'd0 && !sg_same;
    genvar gl;
    generate
        for (gl = 0; gl < 3; gl = gl + 1) begin : g_st
            gmc_dmu_rf #(.AW(5), .DW(16)) u_st (.clk(clk), .we(sg_commit && sg_m[gl] && clk_run), .wa(sg_g),
                                                .wd(sg_d[16*gl +: 16]), .ra(st_ra), .rd(st_rd[16*gl +: 16]));
        end
    endgenerate
    gmc_dmu_rf #(.AW(5), .DW(16)) u_st3 (.clk(clk), .we(st_w3 && clk_run), .wa(rd[6:2]), .wd(res),
                                         .ra(st_ra), .rd(st_rd[63:48]));
    always @(posedge clk) st_rz <= is_ctr(st_ra) && c_pend[ctr_of(st_ra[2:0])];

    // ------------------------------------------------------------ bus state

    reg  [47:0] addr;            // the one address: AR, AW, GART request, VRAM word
    reg  [63:0] wdata;
    reg  [7:0]  wstrb;
    reg  [63:0] buf_q;           // response buffer: R beat, VRAM word, GART answer
    reg         rsp, rsp_err, rsp_inv;
    reg         brsp, brsp_err;
    reg         ar_v, aw_v, w_v, g_v, g_w, g_side, vr_v, vr_w, vw_v, vw_all;
    reg  [1:0]  ar_s;
    reg         ar_l3;
    reg  [1:0]  ar_e, aw_e, ep;
    reg  [3:0]  owe_rd, owe_wr;
    reg  [31:0] wd_cnt;
    reg  [19:0] head;
    reg         busy, faulted, in_ib;
    reg  [7:0]  f_code;
    reg         fc, fz;          // ALU flags
    // Which of the last sixteen halves read from the response buffer (IN
    // buf0..buf3) are not zero, the last in bit 15: after a packet's fetch
    // (W00, W01, .. W33 in that order), half h of its word b is bit 4b + h,
    // and bit 0 is W00[15:8] only (the flags), so its reserved fields are
    // tested at once (TST).
    reg  [15:0] nzm;

    wire ar_room = !owe_rd[ar_e];
    wire aw_room = !owe_wr[aw_e];
    wire ar_hs = ar_v && ar_room && m_axi_arready;
    wire aw_hs = aw_v && aw_room && m_axi_awready;
    wire w_hs  = w_v && m_axi_wready;
    wire [1:0] r_e = m_axi_rid[3:2];
    wire [1:0] b_e = m_axi_bid[3:2];
    // A beat of the engine's read (taken only while the buffer is free; a
    // beat of an older epoch is taken and dropped at once).
    wire r_mine = m_axi_rvalid && r_e == ep && !ar_v;
    wire r_take = r_mine && !rsp;
    wire b_cur = m_axi_bvalid && b_e == ep && !aw_v;

    wire owes_cur = owe_rd[ep] || owe_wr[ep]
                    || (ar_v && ar_e == ep) || (aw_v && aw_e == ep) || w_v;
    wire any_hs = ar_hs || aw_hs || w_hs || m_axi_rvalid || m_axi_bvalid;
    wire wd_owes = owes_cur || ar_v || aw_v;
    wire can_fetch = !faulted && enable && (in_ib || head != tail);
    // (wd_cnt counts down from WATCHDOG: it fires when it is 1.)
    wire wd_fire = watchdog != 32'd0 && wd_owes && !any_hs && wd_cnt == 32'd1;

    // A counter's run of four lanes is not cut by the RESET or watchdog
    // vector (v_hold): a RESET command in it is taken when it ends.
    wire v_hold = sg_m != 3'd0 && is_ctr(sg_g);
    reg  reset_p;
    // to_taken: the watchdog's vector was taken and the bus has not moved
    // since (it stays wd_fire): without it the vector would be taken again
    // in every cycle, and its microcode would never run.
    reg  to_taken;
    assign vec_reset = (cmd_reset || reset_p) && !v_hold;
    assign vec_to = wd_fire && !faulted && (busy || can_fetch) && !v_hold && !to_taken;
    assign vec_skip = cmd_skip && faulted;

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
    assign m_axi_araddr = addr;
    assign m_axi_arlen = {6'd0, ar_l3, ar_l3};
    assign m_axi_arsize = 3'd3;
    assign m_axi_arburst = 2'd1;
    assign m_axi_arlock = 1'b0;
    assign m_axi_arcache = 4'b0011;
    assign m_axi_arprot = 3'b000;
    assign m_axi_arvalid = ar_v && ar_room;
    assign m_axi_rready = !r_mine || !rsp;
    assign m_axi_awid = {{(ID_WIDTH-4){1'b0}}, aw_e, 2'd3};
    assign m_axi_awaddr = {addr[47:3], 3'd0};
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

    assign g_req_valid = {g_v && g_side, g_v && !g_side};
    assign g_req_addr = {addr[31:12], 12'd0, addr[31:12], 12'd0};
    assign g_req_write = 2'b10;
    assign inv_page = addr[31:0];

    assign vr_req = vr_v;
    assign vr_addr = addr[VRAM_AW+2:3];
    assign vw_req = vw_v;
    assign vw_addr = addr[VRAM_AW+2:3];
    assign vw_data = wdata;
    assign vw_strb = vw_all ? 8'hFF : wstrb;

    assign st_state = faulted ? 2'd2 : (busy || in_ib || (enable && head != tail)) ? 2'd1 : 2'd0;
    assign st_indirect = in_ib;
    assign st_rd_out = {7'd0, owe_rd[0]} + {7'd0, owe_rd[1]} + {7'd0, owe_rd[2]} + {7'd0, owe_rd[3]};
    assign st_wr_out = {7'd0, owe_wr[0]} + {7'd0, owe_wr[1]} + {7'd0, owe_wr[2]} + {7'd0, owe_wr[3]};
    assign st_head = head;
    assign st_fault_code = {faulted && in_ib, f_code};

    // ------------------------------------------------------------ ALU

    wire [15:0] opb = (cls == C_ALUI) ? {8'd0, rb} : b_q;
    wire        sub = fn[1];
    wire        cin = fn[0] ? fc : sub;
    wire [16:0] sum = {1'b0, a_q} + {1'b0, sub ? ~opb : opb} + {16'd0, cin};
    wire [31:0] fun = {opb, a_q};
    reg  [15:0] alu;
    always @(*) begin
        case (fn)
            4'd0, 4'd1, 4'd2, 4'd3: alu = sum[15:0];
            4'd4: alu = a_q & opb;
            4'd5: alu = a_q | opb;
            4'd6: alu = a_q ^ opb;
            4'd7: alu = opb;
            4'd8: alu = fun[19:4];
            4'd9: alu = fun[23:8];
            4'd11: alu = fun[28:13];
            default: alu = fun[27:12];
        endcase
    end

    // Inputs (IN): src 0..3 the response buffer, 4..5 HEAD, 8..10
    // the end of VRAM, 11..12 the aperture's base, 13..15 its end (the
    // bounds of the range checks, 48-bit), 64..127 the configuration RAM's
    // halves (word (src - 64) / 2).
    // (A function keeps Verilator 5.006 from calling an integer parameter
    // unsized in a concatenation.)
    function [47:0] zext48;
        input [31:0] v;
        begin
            zext48 = {16'd0, v};
        end
    endfunction
    localparam [47:0] VRAM_END = zext48(VRAM_BYTES);
    localparam [47:0] AP_END = {16'd0, APERTURE_BASE} + APERTURE_PAGES * 48'd4096;
    wire [31:0] cfg_q;
    // The protected range the microcode checks (out pidx): configuration
    // words 8..11 and 12..15 are read as 8 + pidx and 12 + pidx.
    reg  [1:0]  pidx;
    wire [4:0]  cfg_ra = {rb[5:3], rb[2:1] | pidx};
    gmc_dmu_rf #(.AW(5), .DW(16), .NWE(2)) u_cfgl (.clk(clk), .we(cfg_we[1:0]), .wa(cfg_wa), .wd(cfg_wd[15:0]),
                                                   .ra(cfg_ra), .rd(cfg_q[15:0]));
    gmc_dmu_rf #(.AW(5), .DW(16), .NWE(2)) u_cfgh (.clk(clk), .we(cfg_we[3:2]), .wa(cfg_wa), .wd(cfg_wd[31:16]),
                                                   .ra(cfg_ra), .rd(cfg_q[31:16]));
    reg [15:0] in_v;
    always @(*) begin
        if (rb[6]) in_v = rb[0] ? cfg_q[31:16] : cfg_q[15:0];
        else case (rb[3:0])
            4'd0: in_v = buf_q[15:0];
            4'd1: in_v = buf_q[31:16];
            4'd2: in_v = buf_q[47:32];
            4'd3: in_v = buf_q[63:48];
            4'd4: in_v = head[15:0];
            4'd5: in_v = {12'd0, head[19:16]};
            4'd8: in_v = VRAM_END[15:0];
            4'd9: in_v = VRAM_END[31:16];
            4'd10: in_v = VRAM_END[47:32];
            4'd11: in_v = APERTURE_BASE[15:0];
            4'd12: in_v = APERTURE_BASE[31:16];
            4'd13: in_v = AP_END[15:0];
            4'd14: in_v = AP_END[31:16];
            default: in_v = AP_END[47:32];
        endcase
    end

    always @(*) begin
        rf_we = x && (cls == C_ALU || cls == C_ALUI || cls == C_LDI || cls == C_IN);
        case (cls)
            C_LDI: res = ui[15:0];
            C_IN: res = in_v;
            default: res = alu;
        endcase
    end

    // Branch conditions.
    reg cond;
    always @(*) begin
        if (sel[5]) cond = a_q[sel[3:0]];
        else case (sel[4:0])
            5'd0: cond = 1'b1;
            5'd1: cond = fz;
            5'd2: cond = fc;
            5'd4: cond = rsp;
            5'd5: cond = rsp_err;
            5'd7: cond = rsp_inv;
            5'd8: cond = brsp;
            5'd9: cond = brsp_err;
            // (A VRAM read or GART answer still to come counts: it lands
            // in the response buffer.)
            5'd10: cond = ar_v || aw_v || w_v || vr_v || vw_v || g_v || vr_w || g_w;
            5'd12: cond = vr_v || vw_v || g_v || vr_w || g_w;
            5'd13: cond = can_fetch;
            5'd14: cond = in_ib;
            5'd15: cond = faulted;
            5'd17: cond = owes_cur;
            default: cond = 1'b0;
        endcase
    end
    wire taken = cls == C_BR && (cond ^ ui[21]);
    always @(*) begin
        if (cls == C_RET) pc_next = ret;
        else if (taken) pc_next = {ui[17:16], ui[7:0]};
        else pc_next = pc + 10'd1;
    end
    // A taken branch to itself (not a call) stays in X: the ROM reads the
    // same instruction, the file the same operands, and the condition is
    // tested again in the next cycle.
    wire spin = x && cls == C_BR && !ui[20] && taken && {ui[17:16], ui[7:0]} == pc;
    // Quiet: the next edge would change no register the engine looks at
    // while its inputs stay the same. (No one-cycle pulse is pending in
    // X of a branch: they are set only by OUT and end at the next edge. A
    // pending RESET or SKIP is a vector; the watchdog fires only with
    // something owed; wd_cnt and to_taken, reloaded at every edge while
    // nothing is owed, are looked at only while something is.)
    assign quiet = spin && sg_m == 3'd0 && !reset_p
                   && !ar_v && !aw_v && !w_v && owe_rd == 4'd0 && owe_wr == 4'd0
                   && !g_v && !g_w && !vr_v && !vr_w && !vw_v;

    // ------------------------------------------------------------ execute

    wire        is_out = x && cls == C_OUT;
    wire        b_gather = rep_on && rep_op == 2'd0;
    wire        b_skip = rep_on && rep_op == 2'd1;
    wire        b_rot = (is_out && sel == 6'd6) || (rep_on && rep_op == 2'd2);
    integer b;

    always @(posedge gclk) begin
        ev_packets <= 2'd0;
        ev_fault <= 1'b0;
        ev_fence_irq <= 1'b0;
        inv_all <= 1'b0;
        inv_page_valid <= 1'b0;

        // Status RAM staging and the counters' clear marks.
        if (sg_m != 3'd0 && cnt_clear) sg_clr <= 1'b1;
        if (sg_commit) begin
            sg_m <= 3'd0;
            if (st_w3 && rd[6:2] == sg_g && is_ctr(sg_g) && sg_m == 3'd7 && !sg_clr)
                c_pend[ctr_of(sg_g[2:0])] <= 1'b0;
        end
        if (st_w) begin
            if (!sg_same) begin
                sg_g <= rd[6:2];
                sg_m <= 3'd1 << rd[1:0];
                sg_clr <= cnt_clear;
            end else
                sg_m <= sg_m | (3'd1 << rd[1:0]);
            case (rd[1:0])
                2'd0: sg_d[15:0] <= res;
                2'd1: sg_d[31:16] <= res;
                default: sg_d[47:32] <= res;
            endcase
        end
        if (cnt_clear) c_pend <= 8'hFF;

        if (ar_hs) ar_v <= 1'b0;
        if (aw_hs) aw_v <= 1'b0;
        if (w_hs) w_v <= 1'b0;
        for (b = 0; b < 4; b = b + 1) begin
            if (ar_hs && ar_e == b[1:0]) owe_rd[b] <= 1'b1;
            else if (m_axi_rvalid && m_axi_rready && m_axi_rlast && r_e == b[1:0]) owe_rd[b] <= 1'b0;
            if (aw_hs && aw_e == b[1:0]) owe_wr[b] <= 1'b1;
            else if (m_axi_bvalid && b_e == b[1:0]) owe_wr[b] <= 1'b0;
        end
        if (!wd_owes || any_hs || (!busy && !can_fetch)) wd_cnt <= watchdog;
        else if (wd_cnt > 32'd1) wd_cnt <= wd_cnt - 32'd1;
        // (A new count once it fires: the vector is taken once, and the
        // microcode then raises TIMEOUT.)
        if (vec_to) wd_cnt <= watchdog;

        // Responses into the buffer.
        if (r_take) begin
            buf_q <= m_axi_rdata;
            rsp <= 1'b1;
            rsp_err <= m_axi_rresp[1];
        end
        if (b_cur) begin
            brsp <= 1'b1;
            brsp_err <= m_axi_bresp[1];
        end
        if (g_v && g_req_ready[g_side]) g_v <= 1'b0;
        if (g_resp_valid[g_side] && !g_v) begin
            g_w <= 1'b0;
            buf_q[47:0] <= g_resp_addr;
            rsp <= 1'b1;
            rsp_err <= g_resp_fault || !g_resp_system;
            rsp_inv <= g_resp_code == GMC_XLATE_CODE_INVALID || !g_resp_system;
        end
        if (vr_v && vr_gnt) vr_v <= 1'b0;
        if (vr_w && vr_valid) begin
            buf_q <= vr_data;
            rsp <= 1'b1;
            rsp_err <= 1'b0;
            vr_w <= 1'b0;
        end
        if (vw_v && vw_gnt) vw_v <= 1'b0;

        // Flags.
        if (x && (cls == C_ALU || cls == C_ALUI)) begin
            fz <= alu == 16'd0;
            if (fn[3:2] == 2'd0) fc <= sum[16];
        end
        if (x && cls == C_IN && rb[6:2] == 5'd0)
            nzm <= {in_v[15:8] != 8'd0 || (in_v[7:0] != 8'd0 && rd_w != 8'd0), nzm[15:1]};
        if (x && cls == C_TST) fz <= (nzm & ui[15:0]) == 16'd0;

        // The write word fills from the top, a byte or a half at a time, so
        // the microcode gathers the destination block's bytes in order (a
        // byte of no strobe for each one skipped): a byte of the response
        // buffer (which rotates by a byte, so its next byte comes down), an
        // empty byte; or the buffer turns by a byte: A[3:0] of one kind in
        // a run, one a cycle (out rep, aux the kind), or one turn (out rot).
        if (b_gather) begin wdata <= {buf_q[7:0], wdata[63:8]}; wstrb <= {1'b1, wstrb[7:1]}; end
        if (b_skip) begin wdata <= {8'd0, wdata[63:8]}; wstrb <= {1'b0, wstrb[7:1]}; end
        if (b_gather || b_rot) buf_q <= {buf_q[7:0], buf_q[63:8]};
        if (rep_on) rep <= rep - 4'd1;
        if (is_out && sel == 6'd27) begin rep <= a_q[3:0]; rep_op <= rb[1:0]; end

        if (is_out) begin
            case (sel)
                6'd0: addr[15:0] <= a_q;
                6'd1: addr[31:16] <= a_q;
                6'd2: addr[47:32] <= a_q;
                // (6'd6: a turn of the buffer, below.)
                6'd5: begin wdata <= {a_q, wdata[63:16]}; wstrb <= {2'b11, wstrb[7:2]}; end
                // The response buffer loaded from the file a half at a
                // time (a source word saved around a translation, FILL's
                // pattern, WRITE_PHYSICAL's value), or from the write word
                // (READ_PHYSICAL's gathered result).
                6'd8: buf_q <= {a_q, buf_q[63:16]};
                6'd9: buf_q <= wdata;
                6'd10: begin ar_v <= 1'b1; ar_s <= rb[1:0] ^ {bank, bank}; ar_l3 <= rb[2]; ar_e <= ep; end
                6'd11: begin aw_v <= 1'b1; w_v <= 1'b1; aw_e <= ep; end
                6'd12: begin g_v <= 1'b1; g_w <= 1'b1; g_side <= rb[0] ^ bank; end
                6'd28: bank <= rb[0];
                6'd22: wix <= a_q[1:0];
                6'd23: pidx <= a_q[1:0];
                6'd13: begin vr_v <= 1'b1; vr_w <= 1'b1; end
                6'd14: begin vw_v <= 1'b1; vw_all <= rb[0]; end
                6'd15: begin
                    if (rb[0]) rsp <= 1'b0;
                    if (rb[1]) brsp <= 1'b0;
                end
                6'd16: head <= (head + 20'd32) & ~(20'hFFFFF << ring_log2);
                6'd17: begin
                    ev_packets <= rb[1:0];
                    ev_fence_irq <= rb[2];
                    inv_all <= rb[3];
                    inv_page_valid <= rb[4];
                end
                6'd19: begin
                    faulted <= 1'b1;
                    f_code <= a_q[7:0];
                    ev_fault <= 1'b1;
                    busy <= 1'b0;
                    g_v <= 1'b0;
                    if (g_v) g_w <= 1'b0;
                    if (owes_cur) ep <= next_epoch(ep, owe_rd, owe_wr, ar_v, ar_e, aw_v, aw_e);
                end
                6'd20: in_ib <= rb[0];
                6'd21: busy <= rb[0];
                default: ;
            endcase
        end

        // Sequencer.
        case (ph)
            PH_F: ph <= PH_D;
            PH_D: ph <= PH_X;
            default: if (x && !spin) begin
                ph <= PH_D;
                pc <= pc_next;
                if (cls == C_BR && ui[20] && taken) ret <= pc + 10'd1;
            end
        endcase

        // SKIP clears the fault at once (DMA_STATUS reads it in the next
        // cycle); the microcode's SKIP vector moves HEAD on.
        if (cmd_skip && faulted) begin
            faulted <= 1'b0;
            f_code <= 8'd0;
        end
        if (vec) begin
            rep <= 4'd0;
            bank <= 1'b0;
            wix <= 2'd0;
            pidx <= 2'd0;
            pc <= vec_pc;
            ph <= PH_D;   // (the ROM reads the vector in this cycle)
            busy <= 1'b0;
        end
        if (!wd_fire) to_taken <= 1'b0;
        else if (vec_to && !vec_reset) to_taken <= 1'b1;
        if (vec_reset) reset_p <= 1'b0;
        else if (cmd_reset) reset_p <= 1'b1;
        if (cmd_reset) begin
            faulted <= 1'b0;
            f_code <= 8'd0;
            in_ib <= 1'b0;
            head <= tail;
            g_v <= 1'b0;
            if (g_v) g_w <= 1'b0;
            if (owes_cur) ep <= next_epoch(ep, owe_rd, owe_wr, ar_v, ar_e, aw_v, aw_e);
        end

        if (rst) begin
            ph <= PH_F;
            rep <= 4'd0;
            bank <= 1'b0;
            wix <= 2'd0;
            pidx <= 2'd0;
            pc <= 10'd0;
            ret <= 10'd0;
            busy <= 1'b0;
            faulted <= 1'b0;
            f_code <= 8'd0;
            in_ib <= 1'b0;
            head <= 20'd0;
            ar_v <= 1'b0; aw_v <= 1'b0; w_v <= 1'b0; g_v <= 1'b0; g_w <= 1'b0;
            vr_v <= 1'b0; vr_w <= 1'b0; vw_v <= 1'b0;
            rsp <= 1'b0; brsp <= 1'b0;
            ep <= 2'd0;
            owe_rd <= 4'd0;
            owe_wr <= 4'd0;
            wd_cnt <= 32'hFFFF_FFFF;
            ev_packets <= 2'd0;
            ev_fault <= 1'b0;
            ev_fence_irq <= 1'b0;
            inv_all <= 1'b0;
            inv_page_valid <= 1'b0;
            sg_m <= 3'd0;
            sg_clr <= 1'b0;
            reset_p <= 1'b0;
            to_taken <= 1'b0;
            // (The counters read 0 until the microcode first writes them.)
            c_pend <= 8'hFF;
        end
    end

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, m_axi_rid, m_axi_bid, m_axi_rresp[0], m_axi_bresp[0], fun[31:29], fun[3:0],
                    addr[2:0], rb[7], ui[31], ui[19:18]};
    /* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
