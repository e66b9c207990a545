// gmc: 8N1 UART receiver with a one-byte output register (valid/ready).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The line is synchronised with two flip-flops. A falling edge starts a
// byte; the start bit is checked at its middle (a glitch shorter than half
// a bit is ignored), then each data bit is sampled at its middle, LSB
// first. The stop bit is sampled at its middle too and the receiver is
// ready for the next start bit from there, so back-to-back bytes with a
// slightly faster sender are not lost.
//
// A byte with a low stop bit is dropped and reported on frame_err. A byte
// that completes while the previous one is still held (m_valid and not
// m_ready) is dropped and reported on overrun. Both are one-cycle pulses.
module gmc_uart_rx #(
    // Clock cycles per bit (clock frequency / baud rate), at least 4.
    parameter integer CLKS_PER_BIT = 4
) (
    input  wire       clk,
    input  wire       rst,

    // Serial input (idle high).
    input  wire       rxd,

    // Received bytes.
    output reg  [7:0] m_data,
    output reg        m_valid,
    input  wire       m_ready,

    // One-cycle error pulses.
    output reg        frame_err,
    output reg        overrun
);

    localparam integer CW = $clog2(CLKS_PER_BIT + 1);
    localparam [31:0] FULL32 = CLKS_PER_BIT - 1;
    localparam [31:0] HALF32 = CLKS_PER_BIT / 2 - 1;
    localparam [CW-1:0] FULL = FULL32[CW-1:0];
    localparam [CW-1:0] HALF = HALF32[CW-1:0];

    initial begin
        if (CLKS_PER_BIT < 4)
            $error("gmc_uart_rx: CLKS_PER_BIT must be at least 4 (instance %m)");
    end

    // Two-stage synchroniser, idle high from configuration on.
    reg rxd_meta_reg = 1'b1;
    reg rxd_sync_reg = 1'b1;

    reg          busy_reg;
    reg [CW-1:0] tick_reg;   // cycles left to the next sample point
    reg [3:0]    bit_reg;    // 0: start bit, 1..8: data, 9: stop bit
    reg [7:0]    shift_reg;

    always @(posedge clk) begin
        rxd_meta_reg <= rxd;
        rxd_sync_reg <= rxd_meta_reg;
        frame_err <= 1'b0;
        overrun <= 1'b0;

        if (m_valid && m_ready)
            m_valid <= 1'b0;

        if (!busy_reg) begin
            if (!rxd_sync_reg) begin
                busy_reg <= 1'b1;
                tick_reg <= HALF;
                bit_reg <= 4'd0;
            end
        end else if (tick_reg != {CW{1'b0}}) begin
            tick_reg <= tick_reg - 1'b1;
        end else begin
            tick_reg <= FULL;
            bit_reg <= bit_reg + 4'd1;
            if (bit_reg == 4'd0) begin
                // Middle of the start bit: a high line was a glitch.
                if (rxd_sync_reg)
                    busy_reg <= 1'b0;
            end else if (bit_reg != 4'd9) begin
                shift_reg <= {rxd_sync_reg, shift_reg[7:1]};
            end else begin
                busy_reg <= 1'b0;
                if (!rxd_sync_reg) begin
                    frame_err <= 1'b1;
                end else if (m_valid && !m_ready) begin
                    overrun <= 1'b1;
                end else begin
                    m_valid <= 1'b1;
                    m_data <= shift_reg;
                end
            end
        end

        if (rst) begin
            busy_reg <= 1'b0;
            m_valid <= 1'b0;
            frame_err <= 1'b0;
            overrun <= 1'b0;
        end
    end

endmodule

`resetall
