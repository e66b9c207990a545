// gmc: FPGA core shared by the board tops: gmc_top behind the UART bridge.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The bridge's register and aperture masters drive gmc_top's AXI4-Lite and
// AXI4 slaves; gmc_top's DMA master is forwarded to the host through the
// bridge. The gmc_top parameters a board chooses are passed through; the
// segment descriptors follow from them (gmc_top's defaults: segment 1 is
// the CPU window, segment 2 the rest of VRAM below the page table,
// segment 3 the GART aperture). When the CPU window and the page table
// take the whole VRAM there is no segment 2: two segments, the CPU window
// and the aperture.
`include "gmc_defaults.vh"
module gmc_fpga_core #(
    // UART clock cycles per bit and receive timeout (see gmc_uart_bridge).
    parameter integer CLKS_PER_BIT = 4,
    parameter integer TIMEOUT_LOG2 = 17,
    // gmc_top configuration.
    parameter integer VRAM_BYTES = 131072,
    parameter integer VRAM_SINGLE_PORT = 1,
    parameter integer TLB_ENTRIES = 4,
    parameter integer APERTURE_PAGES = 256,
    parameter integer CPU_WINDOW_BYTES = 65536,
    parameter integer PROT_RANGES = 4,
    parameter integer COUNTER_WIDTH = 32,
    parameter integer PT_RESERVE_BYTES = 4096,
    parameter [7:0]   SEG2_BANKS = 8'd3,
    // AXI ID width of the aperture and DMA ports.
    parameter integer ID_WIDTH = 4,
    // Which DMA paging engine gmc_top builds (enum DMA_ENGINE): 0 none,
    // 1 full (about 9.5k LUT4s, fits neither iCE40), 2 compact,
    // 3 micro-sequenced.
    parameter integer DMA_ENGINE = 0,
    // The engine's clock gate passes clk (gmc_clk_gate GATE = 0): an FPGA
    // gets no clock made in logic.
    parameter integer DMA_CLOCK_GATE = 0,
    // The bridge's write replay window, 2^BRIDGE_WIN_LOG2 beats
    // (docs/uart-bridge.md): 6 takes two 4 Kbit block RAMs, 2 or less is
    // built from logic cells.
    parameter integer BRIDGE_WIN_LOG2 = 6
) (
    input  wire clk,
    input  wire rst,

    // Serial link to the host.
    input  wire rxd,
    output wire txd,

    // gmc_top's interrupt line and a pulse per bridge packet.
    output wire irq,
    output wire activity
);

    // reg: bridge m_axil_* <-> gmc_top s_axil_*
    wire [15:0] reg_awaddr;
    wire [2:0] reg_awprot;
    wire reg_awvalid;
    wire reg_awready;
    wire [31:0] reg_wdata;
    wire [3:0] reg_wstrb;
    wire reg_wvalid;
    wire reg_wready;
    wire [1:0] reg_bresp;
    wire reg_bvalid;
    wire reg_bready;
    wire [15:0] reg_araddr;
    wire [2:0] reg_arprot;
    wire reg_arvalid;
    wire reg_arready;
    wire [31:0] reg_rdata;
    wire [1:0] reg_rresp;
    wire reg_rvalid;
    wire reg_rready;
    // ap: bridge m_axi_* <-> gmc_top s_axi_*
    wire [ID_WIDTH-1:0] ap_awid;
    wire [31:0] ap_awaddr;
    wire [7:0] ap_awlen;
    wire [2:0] ap_awsize;
    wire [1:0] ap_awburst;
    wire ap_awlock;
    wire [3:0] ap_awcache;
    wire [2:0] ap_awprot;
    wire ap_awvalid;
    wire ap_awready;
    wire [63:0] ap_wdata;
    wire [7:0] ap_wstrb;
    wire ap_wlast;
    wire ap_wvalid;
    wire ap_wready;
    wire [ID_WIDTH-1:0] ap_bid;
    wire [1:0] ap_bresp;
    wire ap_bvalid;
    wire ap_bready;
    wire [ID_WIDTH-1:0] ap_arid;
    wire [31:0] ap_araddr;
    wire [7:0] ap_arlen;
    wire [2:0] ap_arsize;
    wire [1:0] ap_arburst;
    wire ap_arlock;
    wire [3:0] ap_arcache;
    wire [2:0] ap_arprot;
    wire ap_arvalid;
    wire ap_arready;
    wire [ID_WIDTH-1:0] ap_rid;
    wire [63:0] ap_rdata;
    wire [1:0] ap_rresp;
    wire ap_rlast;
    wire ap_rvalid;
    wire ap_rready;
    // dma: bridge s_axi_* <-> gmc_top m_axi_*
    wire [ID_WIDTH-1:0] dma_awid;
    wire [47:0] dma_awaddr;
    wire [7:0] dma_awlen;
    wire [2:0] dma_awsize;
    wire [1:0] dma_awburst;
    wire dma_awlock;
    wire [3:0] dma_awcache;
    wire [2:0] dma_awprot;
    wire dma_awvalid;
    wire dma_awready;
    wire [63:0] dma_wdata;
    wire [7:0] dma_wstrb;
    wire dma_wlast;
    wire dma_wvalid;
    wire dma_wready;
    wire [ID_WIDTH-1:0] dma_bid;
    wire [1:0] dma_bresp;
    wire dma_bvalid;
    wire dma_bready;
    wire [ID_WIDTH-1:0] dma_arid;
    wire [47:0] dma_araddr;
    wire [7:0] dma_arlen;
    wire [2:0] dma_arsize;
    wire [1:0] dma_arburst;
    wire dma_arlock;
    wire [3:0] dma_arcache;
    wire [2:0] dma_arprot;
    wire dma_arvalid;
    wire dma_arready;
    wire [ID_WIDTH-1:0] dma_rid;
    wire [63:0] dma_rdata;
    wire [1:0] dma_rresp;
    wire dma_rlast;
    wire dma_rvalid;
    wire dma_rready;
    // Segments 1 and 2 are passed explicitly: gmc_top's defaults for them
    // concatenate CPU_WINDOW_BYTES, which Verilator 5.006 flags as unsized
    // (WIDTHCONCAT) when the value comes from a parent's parameter.
    localparam [31:0] WIN32 = CPU_WINDOW_BYTES;
    localparam [31:0] SEG2_SIZE32 = VRAM_BYTES - PT_RESERVE_BYTES - CPU_WINDOW_BYTES;
    function [63:0] zext64;
        input [31:0] v;
        begin
            zext64 = {32'd0, v};
        end
    endfunction
    localparam [63:0] WIN64 = zext64(WIN32);
    localparam [63:0] SEG2_SIZE64 = zext64(SEG2_SIZE32);
    localparam [0:0]   NO_SEG2 = (SEG2_SIZE32 == 32'd0);
    localparam [63:0] APER_BASE64 = zext64(`GMC_TOP_APERTURE_BASE);
    localparam [63:0] APER_SIZE64 = zext64(APERTURE_PAGES * 4096);

    gmc_top #(
        .SEG_COUNT(NO_SEG2 ? 2 : 3), .SEG1_SIZE(WIN64),
        .SEG2_BASE(NO_SEG2 ? APER_BASE64 : WIN64), .SEG2_SIZE(NO_SEG2 ? APER_SIZE64 : SEG2_SIZE64),
        .SEG2_FLAGS(NO_SEG2 ? `GMC_TOP_SEG3_FLAGS : `GMC_TOP_SEG2_FLAGS),
        .SEG2_BANKS(NO_SEG2 ? `GMC_TOP_SEG3_BANKS : SEG2_BANKS),
        .SEG3_BASE(NO_SEG2 ? 64'd0 : APER_BASE64), .SEG3_SIZE(NO_SEG2 ? 64'd0 : APER_SIZE64),
        .SEG3_FLAGS(NO_SEG2 ? 32'd0 : `GMC_TOP_SEG3_FLAGS),
        .VRAM_BYTES(VRAM_BYTES), .VRAM_SINGLE_PORT(VRAM_SINGLE_PORT), .TLB_ENTRIES(TLB_ENTRIES),
        .APERTURE_PAGES(APERTURE_PAGES), .CPU_WINDOW_BYTES(CPU_WINDOW_BYTES),
        .PROT_RANGES(PROT_RANGES), .COUNTER_WIDTH(COUNTER_WIDTH),
        .PT_RESERVE_BYTES(PT_RESERVE_BYTES),
        .S_ID_WIDTH(ID_WIDTH), .M_ID_WIDTH(ID_WIDTH), .DMA_ENGINE(DMA_ENGINE),
        .DMA_CLOCK_GATE(DMA_CLOCK_GATE)
    ) u_gmc (
        .clk(clk), .rst(rst),
        .s_axil_awaddr(reg_awaddr), .s_axil_awprot(reg_awprot), .s_axil_awvalid(reg_awvalid),
        .s_axil_awready(reg_awready), .s_axil_wdata(reg_wdata), .s_axil_wstrb(reg_wstrb),
        .s_axil_wvalid(reg_wvalid), .s_axil_wready(reg_wready), .s_axil_bresp(reg_bresp),
        .s_axil_bvalid(reg_bvalid), .s_axil_bready(reg_bready), .s_axil_araddr(reg_araddr),
        .s_axil_arprot(reg_arprot), .s_axil_arvalid(reg_arvalid), .s_axil_arready(reg_arready),
        .s_axil_rdata(reg_rdata), .s_axil_rresp(reg_rresp), .s_axil_rvalid(reg_rvalid),
        .s_axil_rready(reg_rready), .s_axi_awid(ap_awid), .s_axi_awaddr(ap_awaddr),
        .s_axi_awlen(ap_awlen), .s_axi_awsize(ap_awsize), .s_axi_awburst(ap_awburst),
        .s_axi_awlock(ap_awlock), .s_axi_awcache(ap_awcache), .s_axi_awprot(ap_awprot),
        .s_axi_awvalid(ap_awvalid), .s_axi_awready(ap_awready), .s_axi_wdata(ap_wdata),
        .s_axi_wstrb(ap_wstrb), .s_axi_wlast(ap_wlast), .s_axi_wvalid(ap_wvalid),
        .s_axi_wready(ap_wready), .s_axi_bid(ap_bid), .s_axi_bresp(ap_bresp),
        .s_axi_bvalid(ap_bvalid), .s_axi_bready(ap_bready), .s_axi_arid(ap_arid),
        .s_axi_araddr(ap_araddr), .s_axi_arlen(ap_arlen), .s_axi_arsize(ap_arsize),
        .s_axi_arburst(ap_arburst), .s_axi_arlock(ap_arlock), .s_axi_arcache(ap_arcache),
        .s_axi_arprot(ap_arprot), .s_axi_arvalid(ap_arvalid), .s_axi_arready(ap_arready),
        .s_axi_rid(ap_rid), .s_axi_rdata(ap_rdata), .s_axi_rresp(ap_rresp), .s_axi_rlast(ap_rlast),
        .s_axi_rvalid(ap_rvalid), .s_axi_rready(ap_rready), .m_axi_awid(dma_awid),
        .m_axi_awaddr(dma_awaddr), .m_axi_awlen(dma_awlen), .m_axi_awsize(dma_awsize),
        .m_axi_awburst(dma_awburst), .m_axi_awlock(dma_awlock), .m_axi_awcache(dma_awcache),
        .m_axi_awprot(dma_awprot), .m_axi_awvalid(dma_awvalid), .m_axi_awready(dma_awready),
        .m_axi_wdata(dma_wdata), .m_axi_wstrb(dma_wstrb), .m_axi_wlast(dma_wlast),
        .m_axi_wvalid(dma_wvalid), .m_axi_wready(dma_wready), .m_axi_bid(dma_bid),
        .m_axi_bresp(dma_bresp), .m_axi_bvalid(dma_bvalid), .m_axi_bready(dma_bready),
        .m_axi_arid(dma_arid), .m_axi_araddr(dma_araddr), .m_axi_arlen(dma_arlen),
        .m_axi_arsize(dma_arsize), .m_axi_arburst(dma_arburst), .m_axi_arlock(dma_arlock),
        .m_axi_arcache(dma_arcache), .m_axi_arprot(dma_arprot), .m_axi_arvalid(dma_arvalid),
        .m_axi_arready(dma_arready), .m_axi_rid(dma_rid), .m_axi_rdata(dma_rdata),
        .m_axi_rresp(dma_rresp), .m_axi_rlast(dma_rlast), .m_axi_rvalid(dma_rvalid),
        .m_axi_rready(dma_rready),
        .irq(irq)
    );

    gmc_uart_bridge #(
        .CLKS_PER_BIT(CLKS_PER_BIT), .TIMEOUT_LOG2(TIMEOUT_LOG2),
        .M_ID_WIDTH(ID_WIDTH), .S_ID_WIDTH(ID_WIDTH), .WIN_LOG2(BRIDGE_WIN_LOG2)
    ) u_bridge (
        .clk(clk), .rst(rst), .rxd(rxd), .txd(txd),
        .m_axil_awaddr(reg_awaddr), .m_axil_awprot(reg_awprot), .m_axil_awvalid(reg_awvalid),
        .m_axil_awready(reg_awready), .m_axil_wdata(reg_wdata), .m_axil_wstrb(reg_wstrb),
        .m_axil_wvalid(reg_wvalid), .m_axil_wready(reg_wready), .m_axil_bresp(reg_bresp),
        .m_axil_bvalid(reg_bvalid), .m_axil_bready(reg_bready), .m_axil_araddr(reg_araddr),
        .m_axil_arprot(reg_arprot), .m_axil_arvalid(reg_arvalid), .m_axil_arready(reg_arready),
        .m_axil_rdata(reg_rdata), .m_axil_rresp(reg_rresp), .m_axil_rvalid(reg_rvalid),
        .m_axil_rready(reg_rready), .m_axi_awid(ap_awid), .m_axi_awaddr(ap_awaddr),
        .m_axi_awlen(ap_awlen), .m_axi_awsize(ap_awsize), .m_axi_awburst(ap_awburst),
        .m_axi_awlock(ap_awlock), .m_axi_awcache(ap_awcache), .m_axi_awprot(ap_awprot),
        .m_axi_awvalid(ap_awvalid), .m_axi_awready(ap_awready), .m_axi_wdata(ap_wdata),
        .m_axi_wstrb(ap_wstrb), .m_axi_wlast(ap_wlast), .m_axi_wvalid(ap_wvalid),
        .m_axi_wready(ap_wready), .m_axi_bid(ap_bid), .m_axi_bresp(ap_bresp),
        .m_axi_bvalid(ap_bvalid), .m_axi_bready(ap_bready), .m_axi_arid(ap_arid),
        .m_axi_araddr(ap_araddr), .m_axi_arlen(ap_arlen), .m_axi_arsize(ap_arsize),
        .m_axi_arburst(ap_arburst), .m_axi_arlock(ap_arlock), .m_axi_arcache(ap_arcache),
        .m_axi_arprot(ap_arprot), .m_axi_arvalid(ap_arvalid), .m_axi_arready(ap_arready),
        .m_axi_rid(ap_rid), .m_axi_rdata(ap_rdata), .m_axi_rresp(ap_rresp), .m_axi_rlast(ap_rlast),
        .m_axi_rvalid(ap_rvalid), .m_axi_rready(ap_rready), .s_axi_awid(dma_awid),
        .s_axi_awaddr(dma_awaddr), .s_axi_awlen(dma_awlen), .s_axi_awsize(dma_awsize),
        .s_axi_awburst(dma_awburst), .s_axi_awlock(dma_awlock), .s_axi_awcache(dma_awcache),
        .s_axi_awprot(dma_awprot), .s_axi_awvalid(dma_awvalid), .s_axi_awready(dma_awready),
        .s_axi_wdata(dma_wdata), .s_axi_wstrb(dma_wstrb), .s_axi_wlast(dma_wlast),
        .s_axi_wvalid(dma_wvalid), .s_axi_wready(dma_wready), .s_axi_bid(dma_bid),
        .s_axi_bresp(dma_bresp), .s_axi_bvalid(dma_bvalid), .s_axi_bready(dma_bready),
        .s_axi_arid(dma_arid), .s_axi_araddr(dma_araddr), .s_axi_arlen(dma_arlen),
        .s_axi_arsize(dma_arsize), .s_axi_arburst(dma_arburst), .s_axi_arlock(dma_arlock),
        .s_axi_arcache(dma_arcache), .s_axi_arprot(dma_arprot), .s_axi_arvalid(dma_arvalid),
        .s_axi_arready(dma_arready), .s_axi_rid(dma_rid), .s_axi_rdata(dma_rdata),
        .s_axi_rresp(dma_rresp), .s_axi_rlast(dma_rlast), .s_axi_rvalid(dma_rvalid),
        .s_axi_rready(dma_rready),
        .irq(irq), .activity(activity)
    );

endmodule

`resetall
