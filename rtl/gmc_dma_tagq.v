// gmc: small register FIFO for per-burst tags (bus address, issue order).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The head is combinational (registers, not RAM): the DMA units read the
// oldest outstanding burst's tag for fault addresses and the watchdog.
// Push and pop may coincide. Pushing into a full queue is the caller's
// error (callers check full).
module gmc_dma_tagq #(
    // Bits per tag.
    parameter integer WIDTH = 56,
    // Entries, a power of two >= 2.
    parameter integer DEPTH = 4,
    // Pointer width, derived.
    parameter integer AW = $clog2(DEPTH)
) (
    input  wire             clk,
    input  wire             rst,
    input  wire             clear,

    input  wire             push,
    input  wire [WIDTH-1:0] push_data,
    input  wire             pop,

    output wire [WIDTH-1:0] head,
    output wire             empty,
    output wire             full,
    output wire [AW:0]      count
);

    initial begin
        if (DEPTH < 2 || (DEPTH & (DEPTH - 1)) != 0)
            $error("gmc_dma_tagq: DEPTH must be a power of two >= 2 (instance %m)");
    end

    reg [WIDTH-1:0] mem [0:DEPTH-1];
    reg [AW:0]      wr_ptr_reg, rd_ptr_reg;

    assign head  = mem[rd_ptr_reg[AW-1:0]];
    assign count = wr_ptr_reg - rd_ptr_reg;
    assign empty = (wr_ptr_reg == rd_ptr_reg);
    assign full  = (count == DEPTH[AW:0]);

    always @(posedge clk) begin
        if (push)
            mem[wr_ptr_reg[AW-1:0]] <= push_data;
        if (push)
            wr_ptr_reg <= wr_ptr_reg + 1'b1;
        if (pop && !empty)
            rd_ptr_reg <= rd_ptr_reg + 1'b1;

        if (rst || clear) begin
            wr_ptr_reg <= {(AW + 1){1'b0}};
            rd_ptr_reg <= {(AW + 1){1'b0}};
        end
    end

endmodule

`resetall
