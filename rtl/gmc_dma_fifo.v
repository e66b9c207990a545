// gmc: first-word-fall-through FIFO over a synchronous-read RAM (block RAM on iCE40).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The RAM is read every cycle at the address the read pointer will have
// after this cycle's pop, so the head word is always registered and ready.
// A word pushed into the slot being read is forwarded from a bypass
// register instead. The writer never pushes into a full FIFO: its users
// keep credits (count is exported for that). flush empties the FIFO; a
// push in the same cycle is dropped.
module gmc_dma_fifo #(
    // Bits per entry.
    parameter integer WIDTH = 64,
    // Entries, a power of two >= 2.
    parameter integer DEPTH = 512,
    // Pointer width, derived.
    parameter integer AW = $clog2(DEPTH)
) (
    input  wire             clk,
    input  wire             rst,
    input  wire             flush,

    input  wire             in_valid,
    input  wire [WIDTH-1:0] in_data,

    output wire             out_valid,
    output wire [WIDTH-1:0] out_data,
    input  wire             out_pop,

    output wire [AW:0]      count
);

    initial begin
        if (DEPTH < 2 || (DEPTH & (DEPTH - 1)) != 0)
            $error("gmc_dma_fifo: DEPTH must be a power of two >= 2 (instance %m)");
    end

    reg [WIDTH-1:0] mem [0:DEPTH-1];
    reg [AW:0]      wr_ptr_reg, rd_ptr_reg;
    reg [WIDTH-1:0] ram_q_reg, byp_data_reg;
    reg             byp_sel_reg;

    wire          pop     = out_pop && out_valid;
    wire [AW:0]   rd_next = rd_ptr_reg + {{AW{1'b0}}, pop};

    assign out_valid = (wr_ptr_reg != rd_ptr_reg);
    assign out_data  = byp_sel_reg ? byp_data_reg : ram_q_reg;
    assign count     = wr_ptr_reg - rd_ptr_reg;

    // The RAM is read only while the FIFO holds or takes a word, and the
    // bypass register loads only with a push: in other cycles neither is
    // looked at before it is loaded again (outputs are identical; the model
    // skips the copies when idle).
    // An edge without a push, a pop or a bypassed word changes nothing:
    // rd_next is then rd_ptr, and ram_q already holds mem[rd_ptr] (a word
    // pushed into the slot being read is bypassed for one cycle, and
    // reloaded at the next edge). act marks the edges that do work.
    wire act = in_valid || pop || byp_sel_reg;

    always @(posedge clk) begin
        if (in_valid)
            mem[wr_ptr_reg[AW-1:0]] <= in_data;
        if (act && (out_valid || in_valid))
            ram_q_reg <= mem[rd_next[AW-1:0]];
        if (in_valid)
            byp_data_reg <= in_data;
    end

    always @(posedge clk) begin
        if (act) begin
            if (in_valid)
                wr_ptr_reg <= wr_ptr_reg + 1'b1;
            rd_ptr_reg <= rd_next;
            byp_sel_reg <= in_valid && (wr_ptr_reg[AW-1:0] == rd_next[AW-1:0]);
        end

        if (rst || flush) begin
            wr_ptr_reg <= {(AW + 1){1'b0}};
            rd_ptr_reg <= {(AW + 1){1'b0}};
            byp_sel_reg <= 1'b0;
        end
    end

endmodule

`resetall
