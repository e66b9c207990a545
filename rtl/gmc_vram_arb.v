// gmc: VRAM port arbiter for the GART walker, the CPU aperture and the DMA engine.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Reads: the GART walker first (it is rare and on the translation critical
// path), then the aperture and the DMA engine in round-robin order. Writes:
// aperture and DMA in round-robin order. A grant is combinational on the
// request; read data returns one cycle later with the owner's rd_valid.
// With SINGLE_PORT a granted write blocks every read in that cycle.
module gmc_vram_arb #(
    // VRAM word address width.
    parameter integer AW = 20,
    // 1 when VRAM has one shared address port.
    parameter integer SINGLE_PORT = 0
) (
    input  wire          clk,
    input  wire          rst,

    // GART page-table walker: read only.
    input  wire          g_rd_req,
    input  wire [AW-1:0] g_rd_addr,
    output wire          g_rd_gnt,
    output reg           g_rd_valid,

    // CPU aperture.
    input  wire          a_rd_req,
    input  wire [AW-1:0] a_rd_addr,
    output wire          a_rd_gnt,
    output reg           a_rd_valid,
    input  wire          a_wr_req,
    input  wire [AW-1:0] a_wr_addr,
    input  wire [63:0]   a_wr_data,
    input  wire [7:0]    a_wr_strb,
    output wire          a_wr_gnt,

    // DMA engine.
    input  wire          d_rd_req,
    input  wire [AW-1:0] d_rd_addr,
    output wire          d_rd_gnt,
    output reg           d_rd_valid,
    input  wire          d_wr_req,
    input  wire [AW-1:0] d_wr_addr,
    input  wire [63:0]   d_wr_data,
    input  wire [7:0]    d_wr_strb,
    output wire          d_wr_gnt,

    // To the RAM.
    output wire          m_rd_en,
    output wire [AW-1:0] m_rd_addr,
    output wire          m_wr_en,
    output wire [AW-1:0] m_wr_addr,
    output wire [63:0]   m_wr_data,
    output wire [7:0]    m_wr_strb
);

    // Round-robin state: 1 means the DMA engine is preferred next.
    reg rd_pref_dma_reg = 1'b0;
    reg wr_pref_dma_reg = 1'b0;

    // Writes.
    wire wr_pick_d = d_wr_req && (!a_wr_req || wr_pref_dma_reg);
    assign d_wr_gnt = wr_pick_d;
    assign a_wr_gnt = a_wr_req && !wr_pick_d;
    assign m_wr_en   = a_wr_gnt || d_wr_gnt;
    assign m_wr_addr = wr_pick_d ? d_wr_addr : a_wr_addr;
    assign m_wr_data = wr_pick_d ? d_wr_data : a_wr_data;
    assign m_wr_strb = wr_pick_d ? d_wr_strb : a_wr_strb;

    // Reads.
    wire rd_blocked = (SINGLE_PORT != 0) && m_wr_en;
    wire rd_pick_d  = d_rd_req && (!a_rd_req || rd_pref_dma_reg);
    assign g_rd_gnt = g_rd_req && !rd_blocked;
    assign d_rd_gnt = !rd_blocked && !g_rd_req && rd_pick_d;
    assign a_rd_gnt = !rd_blocked && !g_rd_req && a_rd_req && !rd_pick_d;
    assign m_rd_en   = g_rd_gnt || a_rd_gnt || d_rd_gnt;
    assign m_rd_addr = g_rd_req ? g_rd_addr : (rd_pick_d ? d_rd_addr : a_rd_addr);

    always @(posedge clk) begin
        g_rd_valid <= g_rd_gnt;
        a_rd_valid <= a_rd_gnt;
        d_rd_valid <= d_rd_gnt;
        if (a_rd_gnt) rd_pref_dma_reg <= 1'b1;
        if (d_rd_gnt) rd_pref_dma_reg <= 1'b0;
        if (a_wr_gnt) wr_pref_dma_reg <= 1'b1;
        if (d_wr_gnt) wr_pref_dma_reg <= 1'b0;

        if (rst) begin
            g_rd_valid <= 1'b0;
            a_rd_valid <= 1'b0;
            d_rd_valid <= 1'b0;
            rd_pref_dma_reg <= 1'b0;
            wr_pref_dma_reg <= 1'b0;
        end
    end

endmodule

`resetall
