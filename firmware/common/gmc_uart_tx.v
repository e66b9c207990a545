// gmc: 8N1 UART transmitter with a valid/ready byte input.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// A byte is taken when the transmitter is idle (s_ready) and sent as a
// start bit, eight data bits LSB first and one stop bit. s_ready rises in
// the last cycle of the stop bit, so a stream of bytes is sent with no gap.
module gmc_uart_tx #(
    // Clock cycles per bit (clock frequency / baud rate), at least 2.
    parameter integer CLKS_PER_BIT = 4
) (
    input  wire       clk,
    input  wire       rst,

    // Bytes to send.
    input  wire [7:0] s_data,
    input  wire       s_valid,
    output wire       s_ready,

    // Serial output (idle high).
    output reg        txd = 1'b1
);

    localparam integer CW = $clog2(CLKS_PER_BIT + 1);
    localparam [31:0] FULL32 = CLKS_PER_BIT - 1;
    localparam [CW-1:0] FULL = FULL32[CW-1:0];

    initial begin
        if (CLKS_PER_BIT < 2)
            $error("gmc_uart_tx: CLKS_PER_BIT must be at least 2 (instance %m)");
    end

    reg          busy_reg;
    reg [CW-1:0] tick_reg;   // cycles left in the current bit
    reg [3:0]    bit_reg;    // bits left after the current one
    reg [8:0]    shift_reg;  // data bits then the stop bit

    wire last = (bit_reg == 4'd0) && (tick_reg == {CW{1'b0}});
    assign s_ready = !busy_reg || last;

    always @(posedge clk) begin
        if (busy_reg) begin
            if (tick_reg != {CW{1'b0}}) begin
                tick_reg <= tick_reg - 1'b1;
            end else if (bit_reg != 4'd0) begin
                tick_reg <= FULL;
                bit_reg <= bit_reg - 4'd1;
                txd <= shift_reg[0];
                shift_reg <= {1'b1, shift_reg[8:1]};
            end else begin
                busy_reg <= 1'b0;
            end
        end

        if (s_valid && s_ready) begin
            busy_reg <= 1'b1;
            tick_reg <= FULL;
            bit_reg <= 4'd9;
            txd <= 1'b0;
            shift_reg <= {1'b1, s_data};
        end

        if (rst) begin
            busy_reg <= 1'b0;
            txd <= 1'b1;
        end
    end

endmodule

`resetall
