// gmc: DMA source side: reads the source words of an operation into the data FIFO.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The source is a byte range that starts at offset so12 of its first page;
// its pages come translated from a gmc_dma_xlate. This unit reads every
// 8-byte word the range touches, in order, and pushes it into the data
// FIFO unchanged (the destination side realigns):
//   VRAM   one read per cycle through the VRAM read port;
//   bus    INCR bursts of 8-byte beats inside one (8 * MAX_BURST)-byte
//          aligned block of the page, each requested only when the FIFO
//          has room for all of its beats (credits come back on pops), so
//          several bursts are in flight and the host latency is hidden.
// A source fault is recorded as the index of the first word that will
// never be pushed (sf_word): a faulting page (its first word), or the
// first beat answered with an error (BUS, the burst's address). Words
// after it are dropped.
module gmc_dma_rd #(
    // VRAM word address width.
    parameter integer VRAM_AW = 20,
    // Data FIFO entries.
    parameter integer FIFO_DEPTH = 512,
    // Beats per read burst, a power of two, 2..256, <= FIFO_DEPTH / 2.
    parameter integer MAX_BURST = 32,
    // Read bursts in flight at most, a power of two >= 2. A hung burst
    // keeps the later ones of its ID waiting on the bus: this bounds what
    // one hang leaves owed.
    parameter integer MAX_OUT = 8
) (
    input  wire               clk,
    input  wire               rst,

    input  wire               start,
    input  wire               flush,
    input  wire               vram,
    input  wire [11:0]        so12,
    input  wire [31:0]        len,

    // Source pages.
    input  wire               pg_valid,
    input  wire [35:0]        pg_phys,
    input  wire               pg_fault,
    output wire               pg_pop,
    input  wire [3:0]         xf_code,
    input  wire [47:0]        xf_addr,

    // Data FIFO.
    output wire               push_valid,
    output wire [63:0]        push_data,
    input  wire               fifo_pop,

    // VRAM read port.
    output wire               vr_req,
    output wire [VRAM_AW-1:0] vr_addr,
    input  wire               vr_gnt,
    input  wire               vr_valid,
    input  wire [63:0]        vr_data,

    // Bus reads (data stream).
    output wire               ar_valid,
    input  wire               ar_ready,
    output wire [47:0]        ar_addr,
    output wire [7:0]         ar_len,
    input  wire [7:0]         ar_seq,
    input  wire               r_valid,
    input  wire [63:0]        r_data,
    input  wire [1:0]         r_resp,
    input  wire               r_last,

    // Progress and the source fault.
    output wire [29:0]        pushed,
    output reg                sf_valid,
    output reg  [29:0]        sf_word,
    output reg  [3:0]         sf_code,
    output reg  [47:0]        sf_addr,

    output wire               old_valid,
    output wire [7:0]         old_seq,
    output wire [47:0]        old_addr,

    // Source bytes pushed this cycle (counters).
    output wire [3:0]         cnt_bytes,

    // Nothing to issue and nothing in flight.
    output wire               quiet
);

    `include "gmc_regs.vh"

    localparam integer CW = $clog2(FIFO_DEPTH) + 1;
    localparam integer BL = $clog2(MAX_BURST);
    localparam integer TQD = (FIFO_DEPTH / MAX_BURST < MAX_OUT) ? FIFO_DEPTH / MAX_BURST : MAX_OUT;

    initial begin
        if (MAX_BURST < 2 || MAX_BURST > 256 || (MAX_BURST & (MAX_BURST - 1)) != 0)
            $error("gmc_dma_rd: MAX_BURST must be a power of two 2..256 (instance %m)");
        if (FIFO_DEPTH < 2 * MAX_BURST)
            $error("gmc_dma_rd: FIFO_DEPTH must be >= 2 * MAX_BURST (instance %m)");
        if (MAX_OUT < 2 || (MAX_OUT & (MAX_OUT - 1)) != 0)
            $error("gmc_dma_rd: MAX_OUT must be a power of two >= 2 (instance %m)");
    end

    reg          run_reg, vram_reg, stop_reg, have_pg_reg, rx_dead_reg;
    reg [29:0]   iss_left_reg, iss_word_reg, pushed_reg, ns_reg;
    reg [8:0]    pw_reg;
    reg [35:0]   pg_reg;
    reg [CW-1:0] credit_reg;
    reg [2:0]    so3_reg, last_lane_reg;

    wire act = run_reg && !stop_reg && !flush && !start && (iss_left_reg != 30'd0);

    // Page entries.
    assign pg_pop = act && !have_pg_reg && pg_valid;

    // VRAM reads.
    wire [44:0] vword = {pg_reg, pw_reg};
    assign vr_req  = act && have_pg_reg && vram_reg && (credit_reg != {CW{1'b0}});
    assign vr_addr = vword[VRAM_AW-1:0];
    wire v_take = vr_req && vr_gnt;

    // Bus bursts: up to the end of the aligned block (which divides the page).
    wire [8:0]  blk_left = MAX_BURST[8:0] - {{(9 - BL){1'b0}}, pw_reg[BL-1:0]};
    wire [8:0]  b_beats  = (iss_left_reg < {21'd0, blk_left}) ? iss_left_reg[8:0] : blk_left;
    wire        tq_full, tq_empty;
    wire [55:0] tq_head;
    wire [$clog2(TQD):0] tq_count;
    wire [CW+8:0] b_beats_x = {{CW{1'b0}}, b_beats};
    wire [CW+8:0] credit_x  = {9'd0, credit_reg};
    assign ar_valid = act && have_pg_reg && !vram_reg && (b_beats_x <= credit_x) && !tq_full;
    assign ar_addr  = {pg_reg, pw_reg, 3'd0};
    assign ar_len   = b_beats[7:0] - 8'd1;
    wire b_take = ar_valid && ar_ready;

    wire [8:0] adv = v_take ? 9'd1 : (b_take ? b_beats : 9'd0);
    wire [9:0] pw_sum = {1'b0, pw_reg} + {1'b0, adv};

    // Receive.
    wire v_push = vr_valid && run_reg && !flush;
    wire r_ok   = r_valid && run_reg && !rx_dead_reg && !flush && (r_resp == 2'd0);
    wire r_bad  = r_valid && run_reg && !rx_dead_reg && !flush && (r_resp != 2'd0);
    assign push_valid = v_push || r_ok;
    assign push_data  = vram_reg ? vr_data : r_data;
    assign pushed     = pushed_reg;

    // Bytes of the range in the pushed word.
    wire [3:0] lo = (pushed_reg == 30'd0) ? {1'b0, so3_reg} : 4'd0;
    wire [3:0] hi = (pushed_reg == ns_reg - 30'd1) ? {1'b0, last_lane_reg} + 4'd1 : 4'd8;
    assign cnt_bytes = push_valid ? hi - lo : 4'd0;

    wire [32:0] ns_full = {30'd0, so12[2:0]} + {1'b0, len} + 33'd7;
    wire [11:0] last_b  = so12 + len[11:0] - 12'd1;

    always @(posedge clk) begin
        if (v_take || b_take) begin
            iss_left_reg <= iss_left_reg - {21'd0, adv};
            iss_word_reg <= iss_word_reg + {21'd0, adv};
            pw_reg <= pw_sum[8:0];
            if (pw_sum[9])
                have_pg_reg <= 1'b0;
        end
        credit_reg <= credit_reg - (v_take ? {{(CW - 1){1'b0}}, 1'b1} : {CW{1'b0}})
                      - (b_take ? b_beats_x[CW-1:0] : {CW{1'b0}})
                      + {{(CW - 1){1'b0}}, fifo_pop};
        if (pg_pop) begin
            if (pg_fault) begin
                stop_reg <= 1'b1;
                if (!sf_valid) begin
                    sf_valid <= 1'b1;
                    sf_word <= iss_word_reg;
                    sf_code <= xf_code;
                    sf_addr <= xf_addr;
                end
            end else begin
                have_pg_reg <= 1'b1;
                pg_reg <= pg_phys;
            end
        end
        if (push_valid)
            pushed_reg <= pushed_reg + 30'd1;
        if (r_bad) begin
            rx_dead_reg <= 1'b1;
            stop_reg <= 1'b1;
            sf_valid <= 1'b1;
            sf_word <= pushed_reg;
            sf_code <= GMC_DMA_FAULT_BUS;
            sf_addr <= tq_head[47:0];
        end

        if (start) begin
            run_reg <= 1'b1;
            vram_reg <= vram;
            stop_reg <= 1'b0;
            have_pg_reg <= 1'b0;
            rx_dead_reg <= 1'b0;
            iss_left_reg <= ns_full[32:3];
            ns_reg <= ns_full[32:3];
            iss_word_reg <= 30'd0;
            pushed_reg <= 30'd0;
            pw_reg <= so12[11:3];
            so3_reg <= so12[2:0];
            last_lane_reg <= last_b[2:0];
            sf_valid <= 1'b0;
            sf_word <= 30'd0;
            sf_code <= GMC_DMA_FAULT_NONE;
            sf_addr <= 48'd0;
        end
        if (start || flush || rst)
            credit_reg <= FIFO_DEPTH[CW-1:0];
        if (rst || flush) begin
            run_reg <= 1'b0;
            stop_reg <= 1'b0;
            have_pg_reg <= 1'b0;
            rx_dead_reg <= 1'b0;
            iss_left_reg <= 30'd0;
        end
        if (rst) begin
            vram_reg <= 1'b0;
            pushed_reg <= 30'd0;
            iss_word_reg <= 30'd0;
            ns_reg <= 30'd0;
            pw_reg <= 9'd0;
            pg_reg <= 36'd0;
            so3_reg <= 3'd0;
            last_lane_reg <= 3'd0;
            sf_valid <= 1'b0;
            sf_word <= 30'd0;
            sf_code <= GMC_DMA_FAULT_NONE;
            sf_addr <= 48'd0;
        end
    end

    gmc_dma_tagq #(
        .WIDTH(56), .DEPTH(TQD)
    ) u_tags (
        .clk(clk), .rst(rst), .clear(flush || start),
        .push(b_take), .push_data({ar_seq, ar_addr}), .pop(r_valid && r_last),
        .head(tq_head), .empty(tq_empty), .full(tq_full), .count(tq_count)
    );

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, tq_count, vword, ns_full[2:0], last_b[11:3]};
    /* verilator lint_on UNUSEDSIGNAL */

    assign old_valid = !tq_empty;
    assign old_seq   = tq_head[55:48];
    assign old_addr  = tq_head[47:0];

    assign quiet = !act && tq_empty && !vr_valid;

endmodule

`resetall
