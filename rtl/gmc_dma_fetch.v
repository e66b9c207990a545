// gmc: DMA packet fetch: reads the ring (or an indirect buffer) ahead into a word FIFO.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Ring mode reads from the fetch offset up to DMA_RING_TAIL, wrapping at
// the ring size; indirect mode reads a buffer of a given length and then
// returns by itself to ring mode at the saved return offset. Bursts are
// INCR, at most MAX_BURST beats, never across 4 KiB (the ring is 4 KiB
// aligned, so this also stops at its end), and are issued only when the
// whole burst has room in the FIFO. Each word carries an error bit (the
// beat's RRESP was not OKAY); the engine faults on a packet with one.
//
// restart moves the fetch point. With restart_drop the bursts still in
// flight belong to the current epoch and their beats are dropped as they
// arrive; without it the engine has changed epoch and they never reach
// this unit.
module gmc_dma_fetch #(
    // FIFO words (8 bytes each), a power of two >= 2 * MAX_BURST.
    parameter integer DEPTH = 64,
    // Beats per burst, a power of two, 4..256.
    parameter integer MAX_BURST = 16,
    // Bursts in flight, a power of two.
    parameter integer MAX_OUT = 4
) (
    input  wire          clk,
    input  wire          rst,

    // Configuration.
    input  wire          enable,
    input  wire [47:12]  ring_base,
    input  wire [4:0]    ring_log2,
    input  wire [19:0]   tail,

    // Restart.
    input  wire          restart,
    input  wire          restart_drop,
    input  wire          restart_ib,
    input  wire [19:0]   restart_off,
    input  wire [47:0]   restart_ib_addr,
    input  wire [31:0]   restart_ib_len,

    // Words, first-word-fall-through.
    output wire          out_valid,
    output wire [63:0]   out_data,
    output wire          out_err,
    input  wire          out_pop,

    // Read requests and their beats (stream 0).
    output wire          ar_valid,
    input  wire          ar_ready,
    output wire [47:0]   ar_addr,
    output wire [7:0]    ar_len,
    input  wire [7:0]    ar_seq,
    input  wire          r_valid,
    input  wire [63:0]   r_data,
    input  wire [1:0]    r_resp,
    input  wire          r_last,

    // Oldest burst in flight (watchdog).
    output wire          old_valid,
    output wire [7:0]    old_seq,
    output wire [47:0]   old_addr,

    // Nothing requested, in flight or buffered.
    output wire          quiet
);

    localparam integer FAW = $clog2(DEPTH);
    localparam integer MAX_OUT_Q = (MAX_OUT > 1) ? MAX_OUT : 2;

    initial begin
        if (MAX_BURST < 4 || MAX_BURST > 256 || (MAX_BURST & (MAX_BURST - 1)) != 0)
            $error("gmc_dma_fetch: MAX_BURST must be a power of two 4..256 (instance %m)");
        if (DEPTH < 2 * MAX_BURST)
            $error("gmc_dma_fetch: DEPTH must be >= 2 * MAX_BURST (instance %m)");
    end

    reg          ib_reg;
    reg [19:0]   off_reg;        // ring offset of the next word to request
    reg [47:0]   ib_addr_reg;    // indirect: next word to request
    reg [31:0]   ib_left_reg;    // indirect: bytes left to request
    reg [19:0]   ret_off_reg;    // ring offset to return to
    reg [9:0]    resv_reg;       // beats requested that will enter the FIFO
    reg [9:0]    drop_reg;       // beats in flight to drop

    // Ring geometry: offsets wrap at 2^ring_log2 bytes.
    wire [19:0] ring_mask = (20'hFFFFF >> (5'd20 - ring_log2));

    wire [FAW:0] fifo_count;
    wire [10:0]  room = DEPTH[10:0] - {{(10 - FAW){1'b0}}, fifo_count} - {1'b0, resv_reg};

    wire tq_full, tq_empty;
    wire [55:0] tq_head;
    wire [$clog2(MAX_OUT_Q):0] tq_count;

    // The next burst: its address and beats (words to the next 4 KiB
    // boundary, and words that remain), and whether to ask for it. Worked
    // out only while enabled and with words left to fetch (0 otherwise:
    // most of a long packet's run).
    reg  [19:0] to_tail;
    reg  [47:0] cur_addr;
    reg  [9:0]  to_4k;
    reg  [28:0] left_w;
    reg  [9:0]  beats;
    reg         want;
    always @* begin
        to_tail = 20'd0;
        cur_addr = 48'd0;
        to_4k = 10'd0;
        left_w = 29'd0;
        beats = 10'd0;
        want = 1'b0;
        if (enable) begin
            to_tail = (tail - off_reg) & ring_mask;
            left_w  = ib_reg ? ib_left_reg[31:3] : {12'd0, to_tail[19:3]};
            if (left_w != 29'd0) begin
                cur_addr = ib_reg ? ib_addr_reg : ({ring_base, 12'd0} | {28'd0, off_reg & ring_mask});
                to_4k    = 10'd512 - {1'b0, cur_addr[11:3]};
                beats    = MAX_BURST[9:0];
                if (to_4k < beats) beats = to_4k;
                if (left_w < {19'd0, beats}) beats = left_w[9:0];
                want = (room >= {1'b0, beats}) && !tq_full && !restart;
            end
        end
    end

    assign ar_valid = want;
    assign ar_addr  = cur_addr;
    assign ar_len   = beats[7:0] - 8'd1;
    wire issue = want && ar_ready;

    wire push_beat = r_valid && (drop_reg == 10'd0);
    wire drop_beat = r_valid && (drop_reg != 10'd0);

    always @(posedge clk) begin
        if (issue) begin
            if (ib_reg) begin
                ib_addr_reg <= ib_addr_reg + {35'd0, beats, 3'd0};
                ib_left_reg <= ib_left_reg - {19'd0, beats, 3'd0};
                if (ib_left_reg == {19'd0, beats, 3'd0}) begin
                    // The buffer is fully requested: back to the ring.
                    ib_reg <= 1'b0;
                    off_reg <= ret_off_reg;
                end
            end else begin
                off_reg <= (off_reg + {7'd0, beats, 3'd0}) & ring_mask;
            end
        end
        resv_reg <= resv_reg + (issue ? beats : 10'd0) - {9'd0, push_beat};
        if (drop_beat)
            drop_reg <= drop_reg - 10'd1;

        if (restart) begin
            ib_reg <= restart_ib;
            off_reg <= restart_off;
            ret_off_reg <= restart_off;
            ib_addr_reg <= restart_ib_addr;
            ib_left_reg <= restart_ib_len;
            resv_reg <= 10'd0;
            drop_reg <= restart_drop ? (drop_reg - {9'd0, drop_beat} + resv_reg - {9'd0, push_beat})
                                     : 10'd0;
        end

        if (rst) begin
            ib_reg <= 1'b0;
            off_reg <= 20'd0;
            ret_off_reg <= 20'd0;
            ib_addr_reg <= 48'd0;
            ib_left_reg <= 32'd0;
            resv_reg <= 10'd0;
            drop_reg <= 10'd0;
        end
    end

    gmc_dma_fifo #(
        .WIDTH(65), .DEPTH(DEPTH)
    ) u_fifo (
        .clk(clk), .rst(rst), .flush(restart),
        .in_valid(push_beat), .in_data({r_resp != 2'd0, r_data}),
        .out_valid(out_valid), .out_data({out_err, out_data}), .out_pop(out_pop),
        .count(fifo_count)
    );

    // Bursts in flight, oldest first. Without drop, a restart forgets them.
    gmc_dma_tagq #(
        .WIDTH(56), .DEPTH(MAX_OUT_Q)
    ) u_tags (
        .clk(clk), .rst(rst), .clear(restart && !restart_drop),
        .push(issue), .push_data({ar_seq, cur_addr}), .pop(r_valid && r_last),
        .head(tq_head), .empty(tq_empty), .full(tq_full), .count(tq_count)
    );

    assign old_valid = !tq_empty;
    assign old_seq   = tq_head[55:48];
    assign old_addr  = tq_head[47:0];

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, tq_count, to_tail[2:0]};
    /* verilator lint_on UNUSEDSIGNAL */

    assign quiet = !want && (resv_reg == 10'd0) && (drop_reg == 10'd0) && tq_empty && !out_valid;

endmodule

`resetall
