// gmc: top level of the GPU memory controller: registers, VRAM, CPU aperture, GART, DMA engine.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Ports as in docs/architecture.md 3.1: an AXI4-Lite register slave (BAR0), an AXI4
// aperture slave (BAR1), an AXI4 master toward system memory (the DMA
// paging engine's port, docs/dma.md), and a level IRQ.
// Segment descriptors are parameters. The default layout has three
// segments: 1 CPU-visible VRAM, 2 banked VRAM that the CPU cannot see,
// 3 the GART aperture. The top of VRAM holds the page table.
// The parameter defaults (`GMC_TOP_*) are generated from spec/gmc.toml
// [top_defaults]: the reference configuration of docs/hardware.md.
`include "gmc_defaults.vh"
module gmc_top #(
    // Bytes of local VRAM (power of two).
    parameter integer VRAM_BYTES = `GMC_TOP_VRAM_BYTES,
    // 1 for a single-ported VRAM (iCE40 SPRAM).
    parameter integer VRAM_SINGLE_PORT = `GMC_TOP_VRAM_SINGLE_PORT,
    // GART TLB entries.
    parameter integer TLB_ENTRIES = `GMC_TOP_TLB_ENTRIES,
    // GPU address and page count of the GART aperture.
    parameter [31:0]  APERTURE_BASE = `GMC_TOP_APERTURE_BASE,
    parameter integer APERTURE_PAGES = `GMC_TOP_APERTURE_PAGES,
    // Bytes of VRAM visible through BAR1, from VRAM address 0.
    parameter integer CPU_WINDOW_BYTES = `GMC_TOP_CPU_WINDOW_BYTES,
    // Protected-range register pairs.
    parameter integer PROT_RANGES = `GMC_TOP_PROT_RANGES,
    // Width of the performance counters (32..64).
    parameter integer COUNTER_WIDTH = `GMC_TOP_COUNTER_WIDTH,
    // VRAM reserved at the top for the page table (reset value of PT_BASE).
    parameter integer PT_RESERVE_BYTES = `GMC_TOP_PT_RESERVE_BYTES,
    parameter [31:0]  PT_BASE_RESET = VRAM_BYTES - PT_RESERVE_BYTES,
    // AXI ID widths of the aperture slave and the DMA master (>= 4).
    parameter integer S_ID_WIDTH = `GMC_TOP_S_ID_WIDTH,
    parameter integer M_ID_WIDTH = `GMC_TOP_M_ID_WIDTH,
    // Which DMA paging engine to build (enum DMA_ENGINE, CAPS.DMA_ENGINE):
    // 1 full (gmc_dma), 2 compact (gmc_dmc, for the iCE40 boards), 0 none
    // (the master stays idle, CAPS.DMA = 0). The DMA_FIFO_DEPTH ..
    // DMA_WR_OUTSTANDING parameters below size the full engine only.
    parameter integer DMA_ENGINE = `GMC_TOP_DMA_ENGINE,
    // DMA data FIFO in 8-byte words (block RAM), a power of two >= 2 * DMA_MAX_BURST.
    parameter integer DMA_FIFO_DEPTH = `GMC_TOP_DMA_FIFO_DEPTH,
    // DMA data burst length in beats, a power of two 2..256.
    parameter integer DMA_MAX_BURST = `GMC_TOP_DMA_MAX_BURST,
    // DMA packet read-ahead in 8-byte words, a power of two >= 32.
    parameter integer DMA_FETCH_DEPTH = `GMC_TOP_DMA_FETCH_DEPTH,
    // DMA page translations buffered ahead per side, a power of two >= 8.
    parameter integer DMA_PAGEQ_DEPTH = `GMC_TOP_DMA_PAGEQ_DEPTH,
    // DMA data read bursts in flight, a power of two >= 2.
    parameter integer DMA_RD_OUTSTANDING = `GMC_TOP_DMA_RD_OUTSTANDING,
    // DMA write bursts awaiting their response, a power of two 2..128.
    parameter integer DMA_WR_OUTSTANDING = `GMC_TOP_DMA_WR_OUTSTANDING,
    // 0: the engine's clock gate passes clk (gmc_clk_gate GATE; FPGA builds).
    parameter integer DMA_CLOCK_GATE = `GMC_TOP_DMA_CLOCK_GATE,
    // Segment descriptors (DXGK_SEGMENTFLAGS layout for the flags).
    parameter integer SEG_COUNT = `GMC_TOP_SEG_COUNT,
    parameter [63:0]  SEG1_BASE = 64'd0,
    // A parent passing CPU_WINDOW_BYTES from an integer parameter makes the
    // 32-bit concatenations below look unsized to Verilator.
    /* verilator lint_off WIDTHCONCAT */
    parameter [63:0]  SEG1_SIZE = {32'd0, CPU_WINDOW_BYTES[31:0]},
    parameter [31:0]  SEG1_FLAGS = `GMC_TOP_SEG1_FLAGS,   // CpuVisible, PreservedDuringStandby
    parameter [63:0]  SEG1_CPU_OFFSET = 64'd0,
    parameter [7:0]   SEG1_BANKS = `GMC_TOP_SEG1_BANKS,
    parameter [63:0]  SEG1_SYSMEM_END = 64'd0,
    parameter [63:0]  SEG2_BASE = {32'd0, CPU_WINDOW_BYTES[31:0]},
    parameter [63:0]  SEG2_SIZE = {32'd0, PT_BASE_RESET - CPU_WINDOW_BYTES[31:0]},
    parameter [31:0]  SEG2_FLAGS = `GMC_TOP_SEG2_FLAGS,   // UseBanking, PreservedDuringStandby
    parameter [63:0]  SEG2_CPU_OFFSET = 64'd0,
    /* verilator lint_on WIDTHCONCAT */
    parameter [7:0]   SEG2_BANKS = `GMC_TOP_SEG2_BANKS,
    parameter [63:0]  SEG2_SYSMEM_END = 64'd0,
    parameter [63:0]  SEG3_BASE = {32'd0, APERTURE_BASE},
    parameter [63:0]  SEG3_SIZE = APERTURE_PAGES * 4096,
    parameter [31:0]  SEG3_FLAGS = `GMC_TOP_SEG3_FLAGS,   // Aperture, CacheCoherent, Preserved (standby, hibernate)
    parameter [63:0]  SEG3_CPU_OFFSET = 64'd0,
    parameter [7:0]   SEG3_BANKS = `GMC_TOP_SEG3_BANKS,
    parameter [63:0]  SEG3_SYSMEM_END = 64'd0,
    parameter [63:0]  SEG4_BASE = 64'd0,
    parameter [63:0]  SEG4_SIZE = 64'd0,
    parameter [31:0]  SEG4_FLAGS = 32'd0,
    parameter [63:0]  SEG4_CPU_OFFSET = 64'd0,
    parameter [7:0]   SEG4_BANKS = 8'd0,
    parameter [63:0]  SEG4_SYSMEM_END = 64'd0
) (
    input  wire                  clk,
    input  wire                  rst,

    // ---------------------------------------------- AXI4-Lite registers (BAR0)
    input  wire [15:0]           s_axil_awaddr,
    input  wire [2:0]            s_axil_awprot,
    input  wire                  s_axil_awvalid,
    output wire                  s_axil_awready,
    input  wire [31:0]           s_axil_wdata,
    input  wire [3:0]            s_axil_wstrb,
    input  wire                  s_axil_wvalid,
    output wire                  s_axil_wready,
    output wire [1:0]            s_axil_bresp,
    output wire                  s_axil_bvalid,
    input  wire                  s_axil_bready,
    input  wire [15:0]           s_axil_araddr,
    input  wire [2:0]            s_axil_arprot,
    input  wire                  s_axil_arvalid,
    output wire                  s_axil_arready,
    output wire [31:0]           s_axil_rdata,
    output wire [1:0]            s_axil_rresp,
    output wire                  s_axil_rvalid,
    input  wire                  s_axil_rready,

    // ------------------------------------------------ AXI4 CPU aperture (BAR1)
    input  wire [S_ID_WIDTH-1:0] s_axi_awid,
    input  wire [31:0]           s_axi_awaddr,
    input  wire [7:0]            s_axi_awlen,
    input  wire [2:0]            s_axi_awsize,
    input  wire [1:0]            s_axi_awburst,
    input  wire                  s_axi_awlock,
    input  wire [3:0]            s_axi_awcache,
    input  wire [2:0]            s_axi_awprot,
    input  wire                  s_axi_awvalid,
    output wire                  s_axi_awready,
    input  wire [63:0]           s_axi_wdata,
    input  wire [7:0]            s_axi_wstrb,
    input  wire                  s_axi_wlast,
    input  wire                  s_axi_wvalid,
    output wire                  s_axi_wready,
    output wire [S_ID_WIDTH-1:0] s_axi_bid,
    output wire [1:0]            s_axi_bresp,
    output wire                  s_axi_bvalid,
    input  wire                  s_axi_bready,
    input  wire [S_ID_WIDTH-1:0] s_axi_arid,
    input  wire [31:0]           s_axi_araddr,
    input  wire [7:0]            s_axi_arlen,
    input  wire [2:0]            s_axi_arsize,
    input  wire [1:0]            s_axi_arburst,
    input  wire                  s_axi_arlock,
    input  wire [3:0]            s_axi_arcache,
    input  wire [2:0]            s_axi_arprot,
    input  wire                  s_axi_arvalid,
    output wire                  s_axi_arready,
    output wire [S_ID_WIDTH-1:0] s_axi_rid,
    output wire [63:0]           s_axi_rdata,
    output wire [1:0]            s_axi_rresp,
    output wire                  s_axi_rlast,
    output wire                  s_axi_rvalid,
    input  wire                  s_axi_rready,

    // ------------------------------------- AXI4 master to system memory (DMA)
    output wire [M_ID_WIDTH-1:0] m_axi_awid,
    output wire [47:0]           m_axi_awaddr,
    output wire [7:0]            m_axi_awlen,
    output wire [2:0]            m_axi_awsize,
    output wire [1:0]            m_axi_awburst,
    output wire                  m_axi_awlock,
    output wire [3:0]            m_axi_awcache,
    output wire [2:0]            m_axi_awprot,
    output wire                  m_axi_awvalid,
    input  wire                  m_axi_awready,
    output wire [63:0]           m_axi_wdata,
    output wire [7:0]            m_axi_wstrb,
    output wire                  m_axi_wlast,
    output wire                  m_axi_wvalid,
    input  wire                  m_axi_wready,
    input  wire [M_ID_WIDTH-1:0] m_axi_bid,
    input  wire [1:0]            m_axi_bresp,
    input  wire                  m_axi_bvalid,
    output wire                  m_axi_bready,
    output wire [M_ID_WIDTH-1:0] m_axi_arid,
    output wire [47:0]           m_axi_araddr,
    output wire [7:0]            m_axi_arlen,
    output wire [2:0]            m_axi_arsize,
    output wire [1:0]            m_axi_arburst,
    output wire                  m_axi_arlock,
    output wire [3:0]            m_axi_arcache,
    output wire [2:0]            m_axi_arprot,
    output wire                  m_axi_arvalid,
    input  wire                  m_axi_arready,
    input  wire [M_ID_WIDTH-1:0] m_axi_rid,
    input  wire [63:0]           m_axi_rdata,
    input  wire [1:0]            m_axi_rresp,
    input  wire                  m_axi_rlast,
    input  wire                  m_axi_rvalid,
    output wire                  m_axi_rready,

    output wire                  irq
);

    localparam integer VRAM_AW = $clog2(VRAM_BYTES / 8);

    initial begin
        if (PT_BASE_RESET % 4096 != 0 || PT_BASE_RESET + APERTURE_PAGES * 8 > VRAM_BYTES)
            $error("gmc_top: the page table does not fit at PT_BASE_RESET (instance %m)");
        if (CPU_WINDOW_BYTES > VRAM_BYTES)
            $error("gmc_top: CPU window larger than VRAM (instance %m)");
    end

    // Inputs this design does not use: protection and cache attributes are
    // accepted and ignored, WLAST is implied by the burst length.
    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, s_axil_awprot, s_axil_arprot, s_axi_awlock, s_axi_awcache,
                    s_axi_awprot, s_axi_wlast, s_axi_arlock, s_axi_arcache, s_axi_arprot};
    /* verilator lint_on UNUSEDSIGNAL */

    // ------------------------------------------------------------ registers

    wire        reg_wr_en, reg_rd_en;
    wire [15:0] reg_wr_addr, reg_rd_addr;
    wire [31:0] reg_wr_data, reg_rd_data, reg_rd_late_data;
    wire        reg_rd_late;
    wire [3:0]  reg_wr_strb;
    wire [1:0]  reg_wr_resp, reg_rd_resp;

    gmc_axil_regif #(
        .ADDR_WIDTH(16), .LATE_RD(DMA_ENGINE == 3 ? 1 : 0)
    ) u_regif (
        .clk(clk), .rst(rst),
        .s_axil_awaddr(s_axil_awaddr), .s_axil_awvalid(s_axil_awvalid), .s_axil_awready(s_axil_awready),
        .s_axil_wdata(s_axil_wdata), .s_axil_wstrb(s_axil_wstrb), .s_axil_wvalid(s_axil_wvalid),
        .s_axil_wready(s_axil_wready), .s_axil_bresp(s_axil_bresp), .s_axil_bvalid(s_axil_bvalid),
        .s_axil_bready(s_axil_bready), .s_axil_araddr(s_axil_araddr), .s_axil_arvalid(s_axil_arvalid),
        .s_axil_arready(s_axil_arready), .s_axil_rdata(s_axil_rdata), .s_axil_rresp(s_axil_rresp),
        .s_axil_rvalid(s_axil_rvalid), .s_axil_rready(s_axil_rready),
        .reg_wr_en(reg_wr_en), .reg_wr_addr(reg_wr_addr), .reg_wr_data(reg_wr_data),
        .reg_wr_strb(reg_wr_strb), .reg_wr_resp(reg_wr_resp),
        .reg_rd_en(reg_rd_en), .reg_rd_addr(reg_rd_addr), .reg_rd_data(reg_rd_data),
        .reg_rd_resp(reg_rd_resp), .reg_rd_late(reg_rd_late), .reg_rd_late_data(reg_rd_late_data)
    );

    wire                      apf_rd_valid, apf_wr_valid;
    wire [1:0]                apf_rd_kind, apf_wr_kind;
    wire [31:0]               apf_rd_addr, apf_wr_addr;
    wire [3:0]                ap_rd_bytes, ap_wr_bytes;
    wire [32*PROT_RANGES-1:0] prot_base, prot_limit;
    wire [31:0]               pt_base;
    wire [47:12]              dummy_page;
    wire                      inv_all, inv_page_valid;
    wire [31:0]               inv_page;
    wire                      xl_req_valid, xl_req_ready, xl_req_write;
    wire [31:0]               xl_req_addr;
    wire                      xl_resp_valid, xl_resp_fault, xl_resp_system, xl_resp_hit, xl_resp_dummy;
    wire [3:0]                xl_resp_code;
    wire [47:0]               xl_resp_addr;
    wire                      tlb_hit, tlb_miss, tlb_dummy;
    wire                      reg_inv_all, reg_inv_page_valid;
    wire [31:0]               reg_inv_page;

    // DMA engine <-> registers.
    wire                      dma_enable, dma_clk_on, dma_clk_run, dma_cmd_skip, dma_cmd_reset;
    wire [47:12]              dma_ring_base;
    wire [4:0]                dma_ring_log2;
    wire [19:0]               dma_tail, dma_head;
    wire [31:0]               dma_watchdog;
    wire [1:0]                dma_state, dma_ev_packets;
    wire                      dma_indirect, dma_ev_fault, dma_ev_fence_irq;
    wire [7:0]                dma_rd_out, dma_wr_out;
    wire [63:0]               dma_fence, dma_read_result;
    wire [8:0]                dma_fault_code;
    wire [47:0]               dma_fault_pkt, dma_fault_addr;
    wire [3:0]                dma_rd_vram, dma_rd_sys, dma_rd_ap, dma_wr_vram, dma_wr_sys, dma_wr_ap;
    wire                      dma_inv_all, dma_inv_page_valid;
    wire [31:0]               dma_inv_page;
    // The micro-sequenced engine's status and configuration RAM ports.
    wire [4:0]                dma_st_ra;
    wire [63:0]               dma_st_rd;
    wire                      dma_cnt_clear;
    wire [3:0]                dma_cfg_we;
    wire                      dma_st_rz;
    wire [4:0]                dma_cfg_wa;
    wire [31:0]               dma_cfg_wd;

    gmc_regs #(
        .VRAM_BYTES(VRAM_BYTES), .TLB_ENTRIES(TLB_ENTRIES), .APERTURE_BASE(APERTURE_BASE),
        .APERTURE_PAGES(APERTURE_PAGES), .CPU_WINDOW_BYTES(CPU_WINDOW_BYTES),
        .PROT_RANGES(PROT_RANGES), .DMA_ENGINE(DMA_ENGINE), .COUNTER_WIDTH(COUNTER_WIDTH),
        .PT_BASE_RESET(PT_BASE_RESET), .SEG_COUNT(SEG_COUNT),
        .SEG1_BASE(SEG1_BASE), .SEG1_SIZE(SEG1_SIZE), .SEG1_FLAGS(SEG1_FLAGS),
        .SEG1_CPU_OFFSET(SEG1_CPU_OFFSET), .SEG1_BANKS(SEG1_BANKS),
        .SEG2_BASE(SEG2_BASE), .SEG2_SIZE(SEG2_SIZE), .SEG2_FLAGS(SEG2_FLAGS),
        .SEG2_CPU_OFFSET(SEG2_CPU_OFFSET), .SEG2_BANKS(SEG2_BANKS),
        .SEG3_BASE(SEG3_BASE), .SEG3_SIZE(SEG3_SIZE), .SEG3_FLAGS(SEG3_FLAGS),
        .SEG3_CPU_OFFSET(SEG3_CPU_OFFSET), .SEG3_BANKS(SEG3_BANKS),
        .SEG4_BASE(SEG4_BASE), .SEG4_SIZE(SEG4_SIZE), .SEG4_FLAGS(SEG4_FLAGS),
        .SEG4_CPU_OFFSET(SEG4_CPU_OFFSET), .SEG4_BANKS(SEG4_BANKS),
        .SEG1_SYSMEM_END(SEG1_SYSMEM_END), .SEG2_SYSMEM_END(SEG2_SYSMEM_END),
        .SEG3_SYSMEM_END(SEG3_SYSMEM_END), .SEG4_SYSMEM_END(SEG4_SYSMEM_END)
    ) u_regs (
        .clk(clk), .rst(rst),
        .reg_wr_en(reg_wr_en), .reg_wr_addr(reg_wr_addr), .reg_wr_data(reg_wr_data),
        .reg_wr_strb(reg_wr_strb), .reg_wr_resp(reg_wr_resp),
        .reg_rd_en(reg_rd_en), .reg_rd_addr(reg_rd_addr), .reg_rd_data(reg_rd_data),
        .reg_rd_resp(reg_rd_resp),
        .irq(irq),
        .apf_rd_valid(apf_rd_valid), .apf_rd_kind(apf_rd_kind), .apf_rd_addr(apf_rd_addr),
        .apf_wr_valid(apf_wr_valid), .apf_wr_kind(apf_wr_kind), .apf_wr_addr(apf_wr_addr),
        .ap_rd_bytes(ap_rd_bytes), .ap_wr_bytes(ap_wr_bytes),
        .prot_base(prot_base), .prot_limit(prot_limit), .pt_base(pt_base), .dummy_page(dummy_page),
        .inv_all(reg_inv_all), .inv_page_valid(reg_inv_page_valid), .inv_page(reg_inv_page),
        .xl_req_valid(xl_req_valid), .xl_req_ready(xl_req_ready), .xl_req_addr(xl_req_addr),
        .xl_req_write(xl_req_write), .xl_resp_valid(xl_resp_valid), .xl_resp_fault(xl_resp_fault),
        .xl_resp_code(xl_resp_code), .xl_resp_addr(xl_resp_addr), .xl_resp_system(xl_resp_system),
        .xl_resp_hit(xl_resp_hit), .xl_resp_dummy(xl_resp_dummy),
        .tlb_hit(tlb_hit), .tlb_miss(tlb_miss), .tlb_dummy(tlb_dummy),
        .dma_enable(dma_enable), .dma_clk_on(dma_clk_on), .dma_clk_run(dma_clk_run),
        .dma_ring_base(dma_ring_base), .dma_ring_log2(dma_ring_log2),
        .dma_tail(dma_tail), .dma_watchdog(dma_watchdog), .dma_cmd_skip(dma_cmd_skip),
        .dma_cmd_reset(dma_cmd_reset),
        .dma_state(dma_state), .dma_indirect(dma_indirect), .dma_rd_out(dma_rd_out),
        .dma_wr_out(dma_wr_out), .dma_head(dma_head), .dma_fence(dma_fence),
        .dma_fault_code(dma_fault_code), .dma_fault_pkt(dma_fault_pkt),
        .dma_fault_addr(dma_fault_addr), .dma_read_result(dma_read_result),
        .dma_ev_packets(dma_ev_packets), .dma_ev_fault(dma_ev_fault),
        .dma_ev_fence_irq(dma_ev_fence_irq),
        .dma_rd_vram(dma_rd_vram), .dma_rd_sys(dma_rd_sys), .dma_rd_ap(dma_rd_ap),
        .dma_wr_vram(dma_wr_vram), .dma_wr_sys(dma_wr_sys), .dma_wr_ap(dma_wr_ap),
        .dma_st_ra(dma_st_ra), .dma_st_rd(dma_st_rd), .dma_st_rz(dma_st_rz), .dma_cnt_clear(dma_cnt_clear), .reg_rd_late(reg_rd_late),
        .reg_rd_late_data(reg_rd_late_data),
        .dma_cfg_we(dma_cfg_we), .dma_cfg_wa(dma_cfg_wa), .dma_cfg_wd(dma_cfg_wd)
    );

    // TLB invalidation from the registers and from the DMA engine; two
    // single-page requests in one cycle become a full flush.
    assign inv_all = reg_inv_all || dma_inv_all || (reg_inv_page_valid && dma_inv_page_valid);
    assign inv_page_valid = reg_inv_page_valid || dma_inv_page_valid;
    assign inv_page = dma_inv_page_valid ? dma_inv_page : reg_inv_page;

    // ----------------------------------------------------------------- VRAM

    wire               g_rd_req, g_rd_gnt, g_rd_valid;
    wire [VRAM_AW-1:0] g_rd_addr;
    wire               a_rd_req, a_rd_gnt, a_rd_valid, a_wr_req, a_wr_gnt;
    wire [VRAM_AW-1:0] a_rd_addr, a_wr_addr;
    wire [63:0]        a_wr_data;
    wire [7:0]         a_wr_strb;
    wire               d_rd_req, d_rd_gnt, d_rd_valid, d_wr_req, d_wr_gnt;
    wire [VRAM_AW-1:0] d_rd_addr, d_wr_addr;
    wire [63:0]        d_wr_data;
    wire [7:0]         d_wr_strb;
    wire               m_rd_en, m_wr_en;
    wire [VRAM_AW-1:0] m_rd_addr, m_wr_addr;
    wire [63:0]        m_wr_data, vram_rd_data;
    wire [7:0]         m_wr_strb;

    gmc_vram_arb #(
        .AW(VRAM_AW), .SINGLE_PORT(VRAM_SINGLE_PORT)
    ) u_arb (
        .clk(clk), .rst(rst),
        .g_rd_req(g_rd_req), .g_rd_addr(g_rd_addr), .g_rd_gnt(g_rd_gnt), .g_rd_valid(g_rd_valid),
        .a_rd_req(a_rd_req), .a_rd_addr(a_rd_addr), .a_rd_gnt(a_rd_gnt), .a_rd_valid(a_rd_valid),
        .a_wr_req(a_wr_req), .a_wr_addr(a_wr_addr), .a_wr_data(a_wr_data), .a_wr_strb(a_wr_strb),
        .a_wr_gnt(a_wr_gnt),
        .d_rd_req(d_rd_req), .d_rd_addr(d_rd_addr), .d_rd_gnt(d_rd_gnt), .d_rd_valid(d_rd_valid),
        .d_wr_req(d_wr_req), .d_wr_addr(d_wr_addr), .d_wr_data(d_wr_data), .d_wr_strb(d_wr_strb),
        .d_wr_gnt(d_wr_gnt),
        .m_rd_en(m_rd_en), .m_rd_addr(m_rd_addr), .m_wr_en(m_wr_en), .m_wr_addr(m_wr_addr),
        .m_wr_data(m_wr_data), .m_wr_strb(m_wr_strb)
    );

    gmc_vram #(
        .BYTES(VRAM_BYTES), .SINGLE_PORT(VRAM_SINGLE_PORT)
    ) u_vram (
        .clk(clk),
        .rd_en(m_rd_en), .rd_addr(m_rd_addr), .rd_data(vram_rd_data),
        .wr_en(m_wr_en), .wr_addr(m_wr_addr), .wr_data(m_wr_data), .wr_strb(m_wr_strb)
    );

    // ------------------------------------------------------------- aperture

    gmc_aperture #(
        .WINDOW_BYTES(CPU_WINDOW_BYTES), .WINDOW_VRAM_BASE(32'd0), .PROT_RANGES(PROT_RANGES),
        .ID_WIDTH(S_ID_WIDTH), .VRAM_AW(VRAM_AW)
    ) u_aperture (
        .clk(clk), .rst(rst),
        .s_axi_awid(s_axi_awid), .s_axi_awaddr(s_axi_awaddr), .s_axi_awlen(s_axi_awlen),
        .s_axi_awsize(s_axi_awsize), .s_axi_awburst(s_axi_awburst), .s_axi_awvalid(s_axi_awvalid),
        .s_axi_awready(s_axi_awready), .s_axi_wdata(s_axi_wdata), .s_axi_wstrb(s_axi_wstrb),
        .s_axi_wvalid(s_axi_wvalid), .s_axi_wready(s_axi_wready), .s_axi_bid(s_axi_bid),
        .s_axi_bresp(s_axi_bresp), .s_axi_bvalid(s_axi_bvalid), .s_axi_bready(s_axi_bready),
        .s_axi_arid(s_axi_arid), .s_axi_araddr(s_axi_araddr), .s_axi_arlen(s_axi_arlen),
        .s_axi_arsize(s_axi_arsize), .s_axi_arburst(s_axi_arburst), .s_axi_arvalid(s_axi_arvalid),
        .s_axi_arready(s_axi_arready), .s_axi_rid(s_axi_rid), .s_axi_rdata(s_axi_rdata),
        .s_axi_rresp(s_axi_rresp), .s_axi_rlast(s_axi_rlast), .s_axi_rvalid(s_axi_rvalid),
        .s_axi_rready(s_axi_rready),
        .prot_base(prot_base), .prot_limit(prot_limit),
        .vr_req(a_rd_req), .vr_addr(a_rd_addr), .vr_gnt(a_rd_gnt), .vr_valid(a_rd_valid),
        .vr_data(vram_rd_data),
        .vw_req(a_wr_req), .vw_addr(a_wr_addr), .vw_data(a_wr_data), .vw_strb(a_wr_strb),
        .vw_gnt(a_wr_gnt),
        .flt_rd_valid(apf_rd_valid), .flt_rd_kind(apf_rd_kind), .flt_rd_addr(apf_rd_addr),
        .flt_wr_valid(apf_wr_valid), .flt_wr_kind(apf_wr_kind), .flt_wr_addr(apf_wr_addr),
        .cnt_rd_bytes(ap_rd_bytes), .cnt_wr_bytes(ap_wr_bytes)
    );

    // ----------------------------------------------------------------- GART

    // Requesters: [0] the debug translation port, [1] DMA source, [2] DMA
    // destination.
    wire        g_req_valid, g_req_ready, g_req_write;
    wire [31:0] g_req_addr;
    wire        g_resp_valid, g_resp_fault, g_resp_system, g_resp_hit, g_resp_dummy;
    wire [3:0]  g_resp_code;
    wire [47:0] g_resp_addr;
    wire [2:0]  ga_valid, ga_ready, ga_write, ga_resp;
    wire [95:0] ga_addr;
    wire [1:0]  dg_valid, dg_write;
    wire [63:0] dg_addr;

    assign ga_valid = {dg_valid, xl_req_valid};
    assign ga_addr  = {dg_addr, xl_req_addr};
    assign ga_write = {dg_write, xl_req_write};
    assign xl_req_ready = ga_ready[0];
    assign xl_resp_valid = ga_resp[0];
    assign xl_resp_fault = g_resp_fault;
    assign xl_resp_code = g_resp_code;
    assign xl_resp_addr = g_resp_addr;
    assign xl_resp_system = g_resp_system;
    assign xl_resp_hit = g_resp_hit;
    assign xl_resp_dummy = g_resp_dummy;

    gmc_gart_arb #(
        .PORTS(3)
    ) u_gart_arb (
        .clk(clk), .rst(rst),
        .s_req_valid(ga_valid), .s_req_ready(ga_ready), .s_req_addr(ga_addr), .s_req_write(ga_write),
        .s_resp_valid(ga_resp),
        .m_req_valid(g_req_valid), .m_req_ready(g_req_ready), .m_req_addr(g_req_addr),
        .m_req_write(g_req_write), .m_resp_valid(g_resp_valid)
    );

    gmc_gart #(
        .TLB_ENTRIES(TLB_ENTRIES), .APERTURE_BASE(APERTURE_BASE), .APERTURE_PAGES(APERTURE_PAGES),
        .VRAM_AW(VRAM_AW)
    ) u_gart (
        .clk(clk), .rst(rst),
        .req_valid(g_req_valid), .req_ready(g_req_ready), .req_addr(g_req_addr),
        .req_write(g_req_write),
        .resp_valid(g_resp_valid), .resp_fault(g_resp_fault), .resp_code(g_resp_code),
        .resp_addr(g_resp_addr), .resp_system(g_resp_system), .resp_hit(g_resp_hit),
        .resp_dummy(g_resp_dummy),
        .pt_base(pt_base), .dummy_page(dummy_page),
        .inv_all(inv_all), .inv_page_valid(inv_page_valid), .inv_page(inv_page),
        .vr_req(g_rd_req), .vr_addr(g_rd_addr), .vr_gnt(g_rd_gnt), .vr_valid(g_rd_valid),
        .vr_data(vram_rd_data),
        .cnt_hit(tlb_hit), .cnt_miss(tlb_miss), .cnt_dummy(tlb_dummy)
    );

    // ------------------------------------------------------------------ DMA

    generate
        if (DMA_ENGINE == 1) begin : g_dma
            gmc_dma #(
                .VRAM_BYTES(VRAM_BYTES), .APERTURE_BASE(APERTURE_BASE), .APERTURE_PAGES(APERTURE_PAGES),
                .PROT_RANGES(PROT_RANGES), .ID_WIDTH(M_ID_WIDTH), .FIFO_DEPTH(DMA_FIFO_DEPTH),
                .MAX_BURST(DMA_MAX_BURST), .FETCH_DEPTH(DMA_FETCH_DEPTH),
                .PAGEQ_DEPTH(DMA_PAGEQ_DEPTH), .RD_OUTSTANDING(DMA_RD_OUTSTANDING),
                .WR_OUTSTANDING(DMA_WR_OUTSTANDING), .CLOCK_GATE(DMA_CLOCK_GATE),
                .VRAM_AW(VRAM_AW)
            ) u_dma (
                `include "gmc_dma_conn.vh"
            );
            // (The micro-sequenced engine's RAM ports are not used.)
            assign dma_st_rd = 64'd0;
            assign dma_st_rz = 1'b0;
            /* verilator lint_off UNUSEDSIGNAL */
            wire unused_dmu = &{1'b0, dma_st_ra, dma_cnt_clear, dma_cfg_we, dma_cfg_wa, dma_cfg_wd};
            /* verilator lint_on UNUSEDSIGNAL */
        end else if (DMA_ENGINE == 2) begin : g_dmc
            // The compact engine: the same ports and contract, one packet,
            // one word and one bus transaction at a time (docs/dma.md).
            gmc_dmc #(
                .VRAM_BYTES(VRAM_BYTES), .APERTURE_BASE(APERTURE_BASE), .APERTURE_PAGES(APERTURE_PAGES),
                .PROT_RANGES(PROT_RANGES), .ID_WIDTH(M_ID_WIDTH), .VRAM_AW(VRAM_AW),
                .CLOCK_GATE(DMA_CLOCK_GATE)
            ) u_dmc (
                `include "gmc_dma_conn.vh"
            );
            // (The micro-sequenced engine's RAM ports are not used.)
            assign dma_st_rd = 64'd0;
            assign dma_st_rz = 1'b0;
            /* verilator lint_off UNUSEDSIGNAL */
            wire unused_dmu = &{1'b0, dma_st_ra, dma_cnt_clear, dma_cfg_we, dma_cfg_wa, dma_cfg_wd};
            /* verilator lint_on UNUSEDSIGNAL */
        end else if (DMA_ENGINE == 3) begin : g_dmu
            // The micro-sequenced engine (docs/dma.md).
            // Its fence, read result, fault registers and counters are in
            // its status RAM, read by u_regs.
            gmc_dmu #(
                .VRAM_BYTES(VRAM_BYTES), .APERTURE_BASE(APERTURE_BASE), .APERTURE_PAGES(APERTURE_PAGES),
                .ID_WIDTH(M_ID_WIDTH), .VRAM_AW(VRAM_AW), .CLOCK_GATE(DMA_CLOCK_GATE)
            ) u_dmu (
                .clk(clk), .rst(rst), .reg_write(reg_wr_en), .clk_on(dma_clk_on), .clk_run(dma_clk_run),
                .enable(dma_enable), .ring_log2(dma_ring_log2), .tail(dma_tail), .watchdog(dma_watchdog),
                .cfg_we(dma_cfg_we), .cfg_wa(dma_cfg_wa), .cfg_wd(dma_cfg_wd),
                .cmd_skip(dma_cmd_skip), .cmd_reset(dma_cmd_reset), .cnt_clear(dma_cnt_clear),
                .st_state(dma_state), .st_indirect(dma_indirect), .st_rd_out(dma_rd_out),
                .st_wr_out(dma_wr_out), .st_head(dma_head), .st_fault_code(dma_fault_code),
                .st_ra(dma_st_ra), .st_rd(dma_st_rd), .st_rz(dma_st_rz),
                .ev_packets(dma_ev_packets), .ev_fault(dma_ev_fault), .ev_fence_irq(dma_ev_fence_irq),
                .g_req_valid(dg_valid), .g_req_ready(ga_ready[2:1]), .g_req_addr(dg_addr),
                .g_req_write(dg_write), .g_resp_valid(ga_resp[2:1]), .g_resp_fault(g_resp_fault),
                .g_resp_code(g_resp_code), .g_resp_addr(g_resp_addr), .g_resp_system(g_resp_system),
                .inv_all(dma_inv_all), .inv_page_valid(dma_inv_page_valid), .inv_page(dma_inv_page),
                .vr_req(d_rd_req), .vr_addr(d_rd_addr), .vr_gnt(d_rd_gnt), .vr_valid(d_rd_valid),
                .vr_data(vram_rd_data),
                .vw_req(d_wr_req), .vw_addr(d_wr_addr), .vw_data(d_wr_data), .vw_strb(d_wr_strb),
                .vw_gnt(d_wr_gnt),
                .m_axi_awid(m_axi_awid), .m_axi_awaddr(m_axi_awaddr), .m_axi_awlen(m_axi_awlen),
                .m_axi_awsize(m_axi_awsize), .m_axi_awburst(m_axi_awburst), .m_axi_awlock(m_axi_awlock),
                .m_axi_awcache(m_axi_awcache), .m_axi_awprot(m_axi_awprot),
                .m_axi_awvalid(m_axi_awvalid), .m_axi_awready(m_axi_awready),
                .m_axi_wdata(m_axi_wdata), .m_axi_wstrb(m_axi_wstrb), .m_axi_wlast(m_axi_wlast),
                .m_axi_wvalid(m_axi_wvalid), .m_axi_wready(m_axi_wready),
                .m_axi_bid(m_axi_bid), .m_axi_bresp(m_axi_bresp), .m_axi_bvalid(m_axi_bvalid),
                .m_axi_bready(m_axi_bready),
                .m_axi_arid(m_axi_arid), .m_axi_araddr(m_axi_araddr), .m_axi_arlen(m_axi_arlen),
                .m_axi_arsize(m_axi_arsize), .m_axi_arburst(m_axi_arburst), .m_axi_arlock(m_axi_arlock),
                .m_axi_arcache(m_axi_arcache), .m_axi_arprot(m_axi_arprot),
                .m_axi_arvalid(m_axi_arvalid), .m_axi_arready(m_axi_arready),
                .m_axi_rid(m_axi_rid), .m_axi_rdata(m_axi_rdata), .m_axi_rresp(m_axi_rresp),
                .m_axi_rlast(m_axi_rlast), .m_axi_rvalid(m_axi_rvalid), .m_axi_rready(m_axi_rready)
            );
            // (The ring base reaches it through its configuration RAM.)
            /* verilator lint_off UNUSEDSIGNAL */
            wire unused_cfg = &{1'b0, dma_ring_base};
            /* verilator lint_on UNUSEDSIGNAL */
            // (Its byte, packet and fault counters are in its register file.)
            assign {dma_rd_vram, dma_rd_sys, dma_rd_ap, dma_wr_vram, dma_wr_sys, dma_wr_ap} = 24'd0;
            assign dma_fence = 64'd0;
            assign dma_read_result = 64'd0;
            assign dma_fault_pkt = 48'd0;
            assign dma_fault_addr = 48'd0;
        end else begin : g_no_dma
            // (The micro-sequenced engine's RAM ports are not used.)
            assign dma_st_rd = 64'd0;
            assign dma_st_rz = 1'b0;
            /* verilator lint_off UNUSEDSIGNAL */
            wire unused_dmu = &{1'b0, dma_st_ra, dma_cnt_clear, dma_cfg_we, dma_cfg_wa, dma_cfg_wd};
            /* verilator lint_on UNUSEDSIGNAL */
            // No engine: the master never issues a request and accepts any
            // response; the DMA registers keep their reset values.
            assign m_axi_awid = {M_ID_WIDTH{1'b0}};
            assign m_axi_awaddr = 48'd0;
            assign m_axi_awlen = 8'd0;
            assign m_axi_awsize = 3'd3;
            assign m_axi_awburst = 2'd1;
            assign m_axi_awlock = 1'b0;
            assign m_axi_awcache = 4'b0011;
            assign m_axi_awprot = 3'b000;
            assign m_axi_awvalid = 1'b0;
            assign m_axi_wdata = 64'd0;
            assign m_axi_wstrb = 8'd0;
            assign m_axi_wlast = 1'b0;
            assign m_axi_wvalid = 1'b0;
            assign m_axi_bready = 1'b1;
            assign m_axi_arid = {M_ID_WIDTH{1'b0}};
            assign m_axi_araddr = 48'd0;
            assign m_axi_arlen = 8'd0;
            assign m_axi_arsize = 3'd3;
            assign m_axi_arburst = 2'd1;
            assign m_axi_arlock = 1'b0;
            assign m_axi_arcache = 4'b0011;
            assign m_axi_arprot = 3'b000;
            assign m_axi_arvalid = 1'b0;
            assign m_axi_rready = 1'b1;
            assign dma_state = 2'd0;
            assign dma_indirect = 1'b0;
            assign dma_rd_out = 8'd0;
            assign dma_wr_out = 8'd0;
            assign dma_head = 20'd0;
            assign dma_fence = 64'd0;
            assign dma_fault_code = 9'd0;
            assign dma_fault_pkt = 48'd0;
            assign dma_fault_addr = 48'd0;
            assign dma_read_result = 64'd0;
            assign dma_ev_packets = 2'd0;
            assign dma_ev_fault = 1'b0;
            assign dma_ev_fence_irq = 1'b0;
            assign {dma_rd_vram, dma_rd_sys, dma_rd_ap, dma_wr_vram, dma_wr_sys, dma_wr_ap} = 24'd0;
            assign dg_valid = 2'b00;
            assign dg_write = 2'b00;
            assign dg_addr = 64'd0;
            assign dma_inv_all = 1'b0;
            assign dma_inv_page_valid = 1'b0;
            assign dma_inv_page = 32'd0;
            assign d_rd_req = 1'b0;
            assign d_rd_addr = {VRAM_AW{1'b0}};
            assign d_wr_req = 1'b0;
            assign dma_clk_run = 1'b0;
            assign d_wr_addr = {VRAM_AW{1'b0}};
            assign d_wr_data = 64'd0;
            assign d_wr_strb = 8'd0;
            /* verilator lint_off UNUSEDSIGNAL */
            wire unused_no_dma = &{1'b0, m_axi_awready, m_axi_wready, m_axi_bid, m_axi_bresp,
                                   m_axi_bvalid, m_axi_arready, m_axi_rid, m_axi_rdata, m_axi_rresp,
                                   m_axi_rlast, m_axi_rvalid, dma_enable, dma_clk_on, dma_ring_base, dma_ring_log2,
                                   dma_tail, dma_watchdog, dma_cmd_skip, dma_cmd_reset, d_rd_gnt,
                                   d_rd_valid, d_wr_gnt, ga_ready[2:1], ga_resp[2:1]};
            /* verilator lint_on UNUSEDSIGNAL */
        end
    endgenerate

endmodule

`resetall
