// gmc: UART bridge packet receiver: framing, length check, CRC-8, timeout.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Frame: SYNC, OP, LEN, LEN payload bytes, CRC. The CRC is CRC-8 with
// polynomial 0x07, initial value 0, over OP, LEN and the payload; running
// it over the CRC byte too leaves 0. Bytes outside a frame that are not
// SYNC are ignored. Every frame that starts ends in exactly one pkt_valid
// pulse with pkt_err saying how it ended:
//   OK       frame complete and the CRC matched;
//   CRC      frame complete, CRC mismatch;
//   LEN      LEN larger than MAX_LEN (the frame is abandoned at once and
//            the receiver hunts for SYNC again);
//   TIMEOUT  no byte for 2^TIMEOUT_LOG2 cycles inside a frame;
//   FRAMING  the UART saw a bad stop bit inside a frame.
// The payload is shifted in from the top of pkt_buf: with LEN = L, payload
// byte i ends up at pkt_buf[8*(MAX_LEN-L+i) +: 8]. pkt_buf holds still
// while hold is high and the receiver is in a payload (it stops taking
// bytes), so a consumer can read fields a few cycles after pkt_valid.
module gmc_bridge_pkt_rx #(
    // Longest payload accepted, in bytes.
    parameter integer MAX_LEN = 13,
    // Inter-byte timeout inside a frame: 2^TIMEOUT_LOG2 clock cycles.
    parameter integer TIMEOUT_LOG2 = 17
) (
    input  wire                 clk,
    input  wire                 rst,

    // Bytes from the UART receiver.
    input  wire [7:0]           s_data,
    input  wire                 s_valid,
    output wire                 s_ready,
    input  wire                 s_frame_err,

    // Do not take payload bytes (the consumer still reads pkt_buf).
    input  wire                 hold,

    // One pulse per frame.
    output reg                  pkt_valid,
    output reg  [2:0]           pkt_err,
    output reg  [7:0]           pkt_op,
    output reg  [7:0]           pkt_len,
    output reg  [8*MAX_LEN-1:0] pkt_buf
);

    localparam [7:0] SYNC = 8'hA5;
    localparam [2:0] ERR_OK = 3'd0, ERR_CRC = 3'd1, ERR_LEN = 3'd2, ERR_TIMEOUT = 3'd4,
                     ERR_FRAMING = 3'd5;
    localparam [2:0] ST_HUNT = 3'd0, ST_OP = 3'd1, ST_LEN = 3'd2, ST_DATA = 3'd3, ST_CRC = 3'd4;
    localparam [31:0] MAX_LEN32 = MAX_LEN;
    localparam [7:0] MAX_LEN8 = MAX_LEN32[7:0];

    initial begin
        if (MAX_LEN < 1 || MAX_LEN > 255)
            $error("gmc_bridge_pkt_rx: MAX_LEN must be 1..255 (instance %m)");
        if (TIMEOUT_LOG2 < 4 || TIMEOUT_LOG2 > 30)
            $error("gmc_bridge_pkt_rx: TIMEOUT_LOG2 must be 4..30 (instance %m)");
    end

    // CRC-8, polynomial x^8 + x^2 + x + 1, one byte at a time.
    function [7:0] crc8;
        input [7:0] crc;
        input [7:0] data;
        reg   [7:0] c;
        integer     k;
        begin
            c = crc ^ data;
            for (k = 0; k < 8; k = k + 1)
                c = c[7] ? ({c[6:0], 1'b0} ^ 8'h07) : {c[6:0], 1'b0};
            crc8 = c;
        end
    endfunction

    reg [2:0]            state_reg;
    reg [7:0]            left_reg;    // payload bytes still to come
    reg [7:0]            crc_reg;
    reg [TIMEOUT_LOG2:0] idle_reg;    // cycles since the last byte, in a frame

    assign s_ready = !(hold && state_reg == ST_DATA);
    wire take = s_valid && s_ready;
    wire [7:0] crc_next = crc8(crc_reg, s_data);
    wire in_frame = (state_reg != ST_HUNT);

    always @(posedge clk) begin
        pkt_valid <= 1'b0;

        if (in_frame && !take)
            idle_reg <= idle_reg + 1'b1;
        else
            idle_reg <= {(TIMEOUT_LOG2 + 1){1'b0}};

        if (take) begin
            crc_reg <= crc_next;
            case (state_reg)
                ST_HUNT: begin
                    if (s_data == SYNC)
                        state_reg <= ST_OP;
                    crc_reg <= 8'd0;
                    pkt_op <= 8'd0;
                    pkt_len <= 8'd0;
                end
                ST_OP: begin
                    pkt_op <= s_data;
                    state_reg <= ST_LEN;
                end
                ST_LEN: begin
                    pkt_len <= s_data;
                    left_reg <= s_data;
                    if (s_data > MAX_LEN8) begin
                        pkt_valid <= 1'b1;
                        pkt_err <= ERR_LEN;
                        state_reg <= ST_HUNT;
                    end else if (s_data == 8'd0) begin
                        state_reg <= ST_CRC;
                    end else begin
                        state_reg <= ST_DATA;
                    end
                end
                ST_DATA: begin
                    pkt_buf <= {s_data, pkt_buf[8*MAX_LEN-1:8]};
                    left_reg <= left_reg - 8'd1;
                    if (left_reg == 8'd1)
                        state_reg <= ST_CRC;
                end
                default: begin
                    pkt_valid <= 1'b1;
                    pkt_err <= (crc_next == 8'd0) ? ERR_OK : ERR_CRC;
                    state_reg <= ST_HUNT;
                end
            endcase
        end else if (in_frame && s_frame_err) begin
            pkt_valid <= 1'b1;
            pkt_err <= ERR_FRAMING;
            state_reg <= ST_HUNT;
        end else if (in_frame && idle_reg[TIMEOUT_LOG2]) begin
            pkt_valid <= 1'b1;
            pkt_err <= ERR_TIMEOUT;
            state_reg <= ST_HUNT;
        end

        if (rst) begin
            state_reg <= ST_HUNT;
            pkt_valid <= 1'b0;
            idle_reg <= {(TIMEOUT_LOG2 + 1){1'b0}};
        end
    end

endmodule

`resetall
