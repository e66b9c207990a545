// gmc: iCE40-HX8K breakout (ct256) board top: gmc_top behind the UART bridge.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// 12 MHz clock, FTDI channel B as the host link (3 Mbaud by default: 4
// clocks per bit), VRAM in block RAM, dual-ported (8 KiB: 16 of the HX8K's
// 32 4 Kbit blocks, the others for the bridge's write replay window and
// the DMA engine). Configuration: CPU window 4 KiB (segment 1), page table
// in the top 4 KiB (256 aperture pages, 2 KiB of PTEs), so no banked
// segment: segment 2 is the GART aperture. 4 TLB entries, 32-bit counters.
// LEDs D2..D9 (active high): led[0] IRQ, led[1] link activity (stretched),
// led[7] heartbeat; the rest off.
// Reset comes from a power-on counter: 2^POR_LOG2 cycles after configuration.
module gmc_board_hx8k #(
    // 12 MHz / baud rate.
    parameter integer CLKS_PER_BIT = 4,
    // Receive timeout inside a packet: 2^17 cycles, about 11 ms.
    parameter integer TIMEOUT_LOG2 = 17,
    // Power-on reset length, 2^POR_LOG2 cycles.
    parameter integer POR_LOG2 = 12,
    // Activity LED stretch, 2^ACT_LOG2 cycles.
    parameter integer ACT_LOG2 = 20,
    // DMA paging engine (enum DMA_ENGINE): 0 none, 1 full, 2 compact,
    // 3 micro-sequenced. The image and the board simulation (sim/board/,
    // docs/board-sim.md) both take the Makefile's FW_ENGINE_hx8k, 3.
    parameter integer DMA_ENGINE = 0
) (
    input  wire       clk_12m,
    input  wire       uart_rx,
    output wire       uart_tx,
    output wire [7:0] led
);

    reg [POR_LOG2:0] por_cnt_reg = {(POR_LOG2 + 1){1'b0}};
    wire rst = !por_cnt_reg[POR_LOG2];

    always @(posedge clk_12m) begin
        if (rst)
            por_cnt_reg <= por_cnt_reg + 1'b1;
    end

    wire irq, activity;

    gmc_fpga_core #(
        .CLKS_PER_BIT(CLKS_PER_BIT), .TIMEOUT_LOG2(TIMEOUT_LOG2),
        .VRAM_BYTES(8192), .VRAM_SINGLE_PORT(0), .TLB_ENTRIES(4), .APERTURE_PAGES(256),
        .CPU_WINDOW_BYTES(4096), .PROT_RANGES(4), .COUNTER_WIDTH(32), .PT_RESERVE_BYTES(4096),
        .DMA_ENGINE(DMA_ENGINE),
        // Write replay window: 2^6 beats in two block RAMs (keeps the link full).
        .BRIDGE_WIN_LOG2(6)
    ) u_core (
        .clk(clk_12m), .rst(rst),
        .rxd(uart_rx), .txd(uart_tx),
        .irq(irq), .activity(activity)
    );

    reg [ACT_LOG2-1:0] act_cnt_reg;
    reg [23:0]         beat_cnt_reg;

    always @(posedge clk_12m) begin
        beat_cnt_reg <= beat_cnt_reg + 24'd1;
        if (activity)
            act_cnt_reg <= {ACT_LOG2{1'b1}};
        else if (act_cnt_reg != {ACT_LOG2{1'b0}})
            act_cnt_reg <= act_cnt_reg - 1'b1;

        if (rst) begin
            act_cnt_reg <= {ACT_LOG2{1'b0}};
            beat_cnt_reg <= 24'd0;
        end
    end

    assign led = {beat_cnt_reg[23], 5'd0, act_cnt_reg != {ACT_LOG2{1'b0}}, irq};

endmodule

`resetall
