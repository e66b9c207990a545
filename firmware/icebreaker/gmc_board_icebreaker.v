// gmc: iCEBreaker (iCE40UP5K-SG48) board top: gmc_top behind the UART bridge.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// 12 MHz clock, FTDI channel B as the host link (3 Mbaud by default: 4
// clocks per bit), VRAM in the four SPRAMs (128 KiB, single-ported).
// Configuration: CPU window 64 KiB (segment 1), segment 2 the next 60 KiB
// in 3 banks of 5 pages, page table in the top 4 KiB (256 aperture pages,
// 2 KiB of PTEs), 4 TLB entries, 32-bit counters.
// LEDs (active low): red = IRQ line, green = link activity (stretched).
// Reset comes from a power-on counter: 2^POR_LOG2 cycles after configuration.
module gmc_board_icebreaker #(
    // 12 MHz / baud rate.
    parameter integer CLKS_PER_BIT = 4,
    // Receive timeout inside a packet: 2^17 cycles, about 11 ms.
    parameter integer TIMEOUT_LOG2 = 17,
    // Power-on reset length, 2^POR_LOG2 cycles.
    parameter integer POR_LOG2 = 12,
    // Activity LED stretch, 2^ACT_LOG2 cycles.
    parameter integer ACT_LOG2 = 20,
    // DMA paging engine (enum DMA_ENGINE): 0 none, 1 full, 2 compact,
    // 3 micro-sequenced. The image carries none: no engine fits the UP5K
    // (docs/boards.md). The board simulation (sim/board/, docs/board-sim.md)
    // sets 2 or 1 so that paging runs end to end over the link.
    parameter integer DMA_ENGINE = 0
) (
    input  wire clk_12m,
    input  wire uart_rx,
    output wire uart_tx,
    output wire led_r_n,
    output wire led_g_n
);

    // Power-on reset: the counter starts at 0 from configuration.
    reg [POR_LOG2:0] por_cnt_reg = {(POR_LOG2 + 1){1'b0}};
    wire rst = !por_cnt_reg[POR_LOG2];

    always @(posedge clk_12m) begin
        if (rst)
            por_cnt_reg <= por_cnt_reg + 1'b1;
    end

    wire irq, activity;

    gmc_fpga_core #(
        .CLKS_PER_BIT(CLKS_PER_BIT), .TIMEOUT_LOG2(TIMEOUT_LOG2),
        .VRAM_BYTES(131072), .VRAM_SINGLE_PORT(1), .TLB_ENTRIES(4), .APERTURE_PAGES(256),
        .CPU_WINDOW_BYTES(65536), .PROT_RANGES(4), .COUNTER_WIDTH(32), .PT_RESERVE_BYTES(4096),
        .SEG2_BANKS(8'd3), .DMA_ENGINE(DMA_ENGINE),
        // Write replay window: 64 beats in two of the 30 free block RAMs.
        .BRIDGE_WIN_LOG2(6)
    ) u_core (
        .clk(clk_12m), .rst(rst),
        .rxd(uart_rx), .txd(uart_tx),
        .irq(irq), .activity(activity)
    );

    reg [ACT_LOG2-1:0] act_cnt_reg;

    always @(posedge clk_12m) begin
        if (activity)
            act_cnt_reg <= {ACT_LOG2{1'b1}};
        else if (act_cnt_reg != {ACT_LOG2{1'b0}})
            act_cnt_reg <= act_cnt_reg - 1'b1;

        if (rst)
            act_cnt_reg <= {ACT_LOG2{1'b0}};
    end

    assign led_r_n = !irq;
    assign led_g_n = (act_cnt_reg == {ACT_LOG2{1'b0}});

endmodule

`resetall
