// gmc: one block RAM of the micro-sequenced DMA engine's register file: one write port, one read port.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// 2^AW words of DW bits, written and read on the same clock; the read data
// is registered (one cycle after the address), as an iCE40 SB_RAM40_4K
// gives it. With NWE > 1 each bit of we writes its DW / NWE bits of the
// word (the block RAM's bit mask), so a write can leave bytes as they are.
// With RW_ANY = 1 a read of the word being written may return anything
// (no_rw_check): the iCE40 block RAM does not return the old contents
// then, and yosys otherwise adds about 42 flip-flops and 23 LUTs to make
// it; only for a RAM whose reads in a write's cycle are not used. A read of the word being written returns the old contents.
// gmc_dmu keeps several of these with the same writes to get more read
// ports. The contents start undefined: the microcode writes every word it
// reads after reset first.
module gmc_dmu_rf #(
    parameter integer AW = 8,
    parameter integer DW = 16,
    parameter integer NWE = 1,
    parameter integer RW_ANY = 0
) (
    input  wire          clk,
    input  wire [NWE-1:0] we,
    input  wire [AW-1:0] wa,
    input  wire [DW-1:0] wd,
    input  wire [AW-1:0] ra,
    output reg  [DW-1:0] rd
);

    localparam integer SW = DW / NWE;

    integer j;
    generate
        if (RW_ANY != 0) begin : g_any
            (* no_rw_check *) reg [DW-1:0] mem [0:(1 << AW) - 1];
            always @(posedge clk) begin
                for (j = 0; j < NWE; j = j + 1)
                    if (we[j])
                        mem[wa][j*SW +: SW] <= wd[j*SW +: SW];
                rd <= mem[ra];
            end
        end else begin : g_old
            reg [DW-1:0] mem [0:(1 << AW) - 1];
            always @(posedge clk) begin
                for (j = 0; j < NWE; j = j + 1)
                    if (we[j])
                        mem[wa][j*SW +: SW] <= wd[j*SW +: SW];
                rd <= mem[ra];
            end
        end
    endgenerate

endmodule

`resetall
