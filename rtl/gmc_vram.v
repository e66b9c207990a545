// gmc: local VRAM, a behavioural 64-bit RAM with byte write enables.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// One read port and one write port (read-first on a collision). With
// SINGLE_PORT = 1 the two share one address, as in an iCE40 SPRAM; the
// arbiter then never grants a read and a write in the same cycle.
module gmc_vram #(
    // Size in bytes; a power of two, at least 64.
    parameter integer BYTES = 8 * 1024 * 1024,
    // 1: one shared address port (SPRAM); 0: separate read and write ports.
    parameter integer SINGLE_PORT = 0,
    // Word address width, derived.
    parameter integer AW = $clog2(BYTES / 8)
) (
    input  wire          clk,

    input  wire          rd_en,
    input  wire [AW-1:0] rd_addr,
    output reg  [63:0]   rd_data,

    input  wire          wr_en,
    input  wire [AW-1:0] wr_addr,
    input  wire [63:0]   wr_data,
    input  wire [7:0]    wr_strb
);

    initial begin
        if (BYTES < 64 || (BYTES & (BYTES - 1)) != 0)
            $error("gmc_vram: BYTES must be a power of two >= 64 (instance %m)");
    end

    // Simulation backdoor: the sim library reads it for checksums.
    reg [63:0] mem [0:(BYTES / 8) - 1] /*verilator public_flat_rw*/;

    // A whole-word write is written as one (synthesis merges both forms
    // into the same byte-enabled write port; docs/sim.md, Model speed).
    integer i;

    generate
        if (SINGLE_PORT != 0) begin : g_single
            wire [AW-1:0] addr = wr_en ? wr_addr : rd_addr;
            always @(posedge clk) begin
                if (wr_en && wr_strb == 8'hFF)
                    mem[addr] <= wr_data;
                else
                    for (i = 0; i < 8; i = i + 1)
                        if (wr_en && wr_strb[i])
                            mem[addr][8*i +: 8] <= wr_data[8*i +: 8];
                if (rd_en && !wr_en)
                    rd_data <= mem[addr];
            end
        end else begin : g_dual
            always @(posedge clk) begin
                if (wr_en && wr_strb == 8'hFF)
                    mem[wr_addr] <= wr_data;
                else
                    for (i = 0; i < 8; i = i + 1)
                        if (wr_en && wr_strb[i])
                            mem[wr_addr][8*i +: 8] <= wr_data[8*i +: 8];
                if (rd_en)
                    rd_data <= mem[rd_addr];
            end
        end
    endgenerate

endmodule

`resetall
