// gmc: UART bridge packet transmitter: framing and CRC-8.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Sends SYNC, OP, LEN, LEN payload bytes and the CRC (CRC-8, polynomial
// 0x07, initial 0, over OP, LEN and the payload). The payload is not
// copied: while a packet is being sent the module asks for payload byte
// byte_idx and the owner of the packet answers combinationally on
// byte_data, holding its fields stable until done. done pulses in the
// cycle after the CRC byte is handed to the UART; the next packet can
// start in the cycle after done.
module gmc_bridge_pkt_tx #(
    // Width of the payload length (longest payload 2^LEN_WIDTH - 1 bytes).
    parameter integer LEN_WIDTH = 4
) (
    input  wire                 clk,
    input  wire                 rst,

    // Start a packet.
    input  wire                 start_valid,
    output wire                 start_ready,
    input  wire [7:0]           start_op,
    input  wire [LEN_WIDTH-1:0] start_len,

    // Payload bytes, fetched by index.
    output wire [LEN_WIDTH-1:0] byte_idx,
    input  wire [7:0]           byte_data,

    output reg                  done,

    // Bytes to the UART transmitter.
    output reg  [7:0]           m_data,
    output wire                 m_valid,
    input  wire                 m_ready
);

    localparam [7:0] SYNC = 8'hA5;
    localparam [2:0] ST_IDLE = 3'd0, ST_SYNC = 3'd1, ST_OP = 3'd2, ST_LEN = 3'd3, ST_DATA = 3'd4,
                     ST_CRC = 3'd5;

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

    reg [2:0]           state_reg;
    reg [7:0]           op_reg;
    reg [LEN_WIDTH-1:0] len_reg;
    reg [LEN_WIDTH-1:0] idx_reg;
    reg [7:0]           crc_reg;

    // Not in the cycle of done: the owner of the packet just finished sees
    // done in that cycle and must not start it again.
    assign start_ready = (state_reg == ST_IDLE) && !done;
    assign byte_idx = idx_reg;
    assign m_valid = (state_reg != ST_IDLE);

    always @* begin
        case (state_reg)
            ST_SYNC: m_data = SYNC;
            ST_OP:   m_data = op_reg;
            ST_LEN:  m_data = {{(8 - LEN_WIDTH){1'b0}}, len_reg};
            ST_DATA: m_data = byte_data;
            default: m_data = crc_reg;
        endcase
    end

    always @(posedge clk) begin
        done <= 1'b0;

        if (start_valid && start_ready) begin
            state_reg <= ST_SYNC;
            op_reg <= start_op;
            len_reg <= start_len;
            idx_reg <= {LEN_WIDTH{1'b0}};
            crc_reg <= 8'd0;
        end

        if (m_valid && m_ready) begin
            if (state_reg != ST_SYNC)
                crc_reg <= crc8(crc_reg, m_data);
            case (state_reg)
                ST_SYNC: state_reg <= ST_OP;
                ST_OP:   state_reg <= ST_LEN;
                ST_LEN:  state_reg <= (len_reg == {LEN_WIDTH{1'b0}}) ? ST_CRC : ST_DATA;
                ST_DATA: begin
                    idx_reg <= idx_reg + 1'b1;
                    if (idx_reg == len_reg - 1'b1)
                        state_reg <= ST_CRC;
                end
                default: begin
                    state_reg <= ST_IDLE;
                    done <= 1'b1;
                end
            endcase
        end

        if (rst) begin
            state_reg <= ST_IDLE;
            done <= 1'b0;
        end
    end

endmodule

`resetall
