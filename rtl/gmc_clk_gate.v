// gmc: glitch-free clock gate for a block that is idle most of the time.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// gclk follows clk while the enable sampled at the last falling edge is
// high. The enable is taken while clk is low, so it never changes during
// the high phase and gclk has no glitch: a cycle either has its whole
// rising edge or none. This is the flop form of an integrated clock-gating
// cell; an ASIC flow maps it onto its ICG cell. The enable must be high
// during reset so that the gated block sees its synchronous reset.
//
// GATE = 0 (the FPGA boards) passes clk through: a clock made in a LUT would
// reach its flops later than clk reaches theirs, and the timing analysis
// does not relate the two, so an FPGA build gates nothing. `on` still says
// which edges the gate would pass (CNT_DMA_CLOCK counts them). A gated
// block's state does not change at an edge the gate drops, so both forms
// behave the same cycle for cycle; only the power differs.
module gmc_clk_gate #(
    parameter integer GATE = 1
) (
    input  wire clk,
    input  wire en,
    output wire gclk,
    // gclk has its rising edge with the next rising edge of clk.
    output wire on
);

    reg en_n;

    always @(negedge clk)
        en_n <= en;

    assign gclk = (GATE != 0) ? (clk & en_n) : clk;
    assign on   = en_n;

endmodule

`resetall
