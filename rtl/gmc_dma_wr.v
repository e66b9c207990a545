// gmc: DMA destination side: realigns source words and writes VRAM or AXI bursts with strobes.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The destination is a byte range that starts at offset do12 of its first
// page; its pages come translated from a gmc_dma_xlate. A planner cuts the
// range into blocks (the words of one (8 * MAX_BURST)-byte aligned block
// of a page) and a writer emits their words in order.
//   VRAM  a block is queued as soon as its page is known; the writer
//         writes one word per cycle as source words arrive.
//   bus   a block is one INCR burst. Its AW is issued only when every
//         source word its beats need is in the FIFO (or was), so W beats
//         stream without waiting, several bursts are posted and their B
//         responses are awaited at the end. A W burst always completes:
//         after abort its remaining beats go out with zero strobes.
// Each destination word is bytes sh..sh+7 of {source word k+1, source
// word k}; sh and whether the first source word is preloaded follow from
// the source and destination offsets modulo 8. Strobes cover only the
// range. In constant mode (FILL, WRITE_PHYSICAL, FENCE) every word is
// cdata and no source word is used.
//
// Faults, in destination order: the planner stops at a block whose page
// faulted or whose source words will never come (the source side's
// sf_word); a B error stops it too. When the bursts already issued have
// all answered, the first B error is reported if there was one, else the
// stop reason.
module gmc_dma_wr #(
    // VRAM word address width.
    parameter integer VRAM_AW = 20,
    // Beats per write burst, a power of two, 2..256.
    parameter integer MAX_BURST = 32,
    // Blocks planned ahead of the writer, a power of two.
    parameter integer WQ_DEPTH = 4,
    // Write bursts awaiting their B response, a power of two.
    parameter integer B_DEPTH = 8,
    // AXI ID width, >= 4.
    parameter integer ID_WIDTH = 4
) (
    input  wire                clk,
    input  wire                rst,

    input  wire                start,
    input  wire                abort,
    input  wire [1:0]          epoch,
    input  wire                vram,
    input  wire [11:0]         do12,
    input  wire [31:0]         len,
    input  wire [2:0]          so3,
    input  wire                cmode,
    input  wire [63:0]         cdata,
    input  wire                nocount,

    // Destination pages.
    input  wire                pg_valid,
    input  wire [35:0]         pg_phys,
    input  wire                pg_fault,
    output wire                pg_pop,
    input  wire [3:0]          xf_code,
    input  wire [47:0]         xf_addr,

    // Source words and the source side's progress.
    input  wire                fifo_valid,
    input  wire [63:0]         fifo_data,
    output wire                fifo_pop,
    input  wire [29:0]         pushed,
    input  wire                sf_valid,
    input  wire [29:0]         sf_word,
    input  wire [3:0]          sf_code,
    input  wire [47:0]         sf_addr,

    // VRAM write port.
    output wire                vw_req,
    output wire [VRAM_AW-1:0]  vw_addr,
    output wire [63:0]         vw_data,
    output wire [7:0]          vw_strb,
    input  wire                vw_gnt,

    // AXI4 write channels.
    output wire [ID_WIDTH-1:0] m_axi_awid,
    output wire [47:0]         m_axi_awaddr,
    output wire [7:0]          m_axi_awlen,
    output wire                m_axi_awvalid,
    input  wire                m_axi_awready,
    output wire                aw_load,
    input  wire [7:0]          aw_seq,
    output wire [63:0]         m_axi_wdata,
    output wire [7:0]          m_axi_wstrb,
    output wire                m_axi_wlast,
    output wire                m_axi_wvalid,
    input  wire                m_axi_wready,
    input  wire                b_valid,
    input  wire [1:0]          b_resp,

    // Outcome.
    output reg                 done,
    output reg                 fault,
    output reg  [3:0]          f_code,
    output reg  [47:0]         f_addr,
    output wire                idle,

    output wire                old_valid,
    output wire [7:0]          old_seq,
    output wire [47:0]         old_addr,

    // Destination bytes written this cycle (counters).
    output wire [3:0]          cnt_bytes,

    // Stopped, with no burst or response outstanding and no pulse to clear.
    output wire                quiet
);

    `include "gmc_regs.vh"

    localparam integer BL = $clog2(MAX_BURST);
    localparam integer WQW = VRAM_AW + 9;
    localparam integer BQA = $clog2(B_DEPTH);

    initial begin
        if (MAX_BURST < 2 || MAX_BURST > 256 || (MAX_BURST & (MAX_BURST - 1)) != 0)
            $error("gmc_dma_wr: MAX_BURST must be a power of two 2..256 (instance %m)");
        if (ID_WIDTH < 4)
            $error("gmc_dma_wr: ID_WIDTH must be >= 4 (instance %m)");
        if (B_DEPTH > 128)
            $error("gmc_dma_wr: B_DEPTH must be <= 128 (instance %m)");
    end

    // ------------------------------------------------------------ transfer

    reg          run_reg, vram_reg, cmode_reg, nocount_reg, preload_reg;
    reg [3:0]    sh_reg;
    reg [63:0]   cdata_reg;
    reg [7:0]    head_strb_reg, tail_strb_reg;
    reg [29:0]   nd_reg, ns_reg;

    // Start-time values. (Blocks of combinational logic that matter only in
    // some cycles are computed under that condition, 0 otherwise.)
    reg [32:0] nd_full, ns_full;
    reg [2:0]  last_ln;
    always @* begin
        nd_full = 33'd0;
        ns_full = 33'd0;
        last_ln = 3'd0;
        if (start) begin
            nd_full = {30'd0, do12[2:0]} + {1'b0, len} + 33'd7;
            ns_full = {30'd0, so3} + {1'b0, len} + 33'd7;
            last_ln = do12[2:0] + len[2:0] - 3'd1;
        end
    end

    // -------------------------------------------------------------- planner

    reg          have_pg_reg, stop_reg, b_err_reg;
    reg [35:0]   pg_reg;
    reg [29:0]   pl_left_reg, pl_word_reg;
    reg [8:0]    dpw_reg;
    reg [3:0]    stop_code_reg;
    reg [47:0]   stop_addr_reg, b_err_addr_reg;

    reg                awvalid_reg;
    reg [47:0]         awaddr_reg;
    reg [7:0]          awlen_reg;
    reg  [1:0]         awepoch_reg;

    wire wq_full, wq_empty, bq_full, bq_empty;
    wire [$clog2(WQ_DEPTH):0] wq_count;
    wire [WQW-1:0] wq_head;
    wire [55:0]    bq_head;
    wire [BQA:0]   bq_count;   // (the wrapper counts owed bursts itself)

    wire pl_act = run_reg && !stop_reg && !b_err_reg && !abort && !start && (pl_left_reg != 30'd0);
    assign pg_pop = pl_act && !have_pg_reg && pg_valid;

    // The next block: its beats, the source words it needs, and whether
    // they are in (or never will be).
    reg  [8:0]  blk_left, beats;
    reg  [29:0] last_j, needed;
    reg         avail, srcfail;
    always @* begin
        blk_left = 9'd0;
        beats = 9'd0;
        last_j = 30'd0;
        needed = 30'd0;
        avail = 1'b0;
        srcfail = 1'b0;
        if (pl_act && have_pg_reg) begin
            blk_left = MAX_BURST[8:0] - {{(9 - BL){1'b0}}, dpw_reg[BL-1:0]};
            beats = (pl_left_reg < {21'd0, blk_left}) ? pl_left_reg[8:0] : blk_left;
            last_j = pl_word_reg + {21'd0, beats} - 30'd1 + {29'd0, preload_reg};
            needed = ((last_j < ns_reg) ? last_j : ns_reg - 30'd1) + 30'd1;
            avail = cmode_reg || (pushed >= needed);
            srcfail = !cmode_reg && sf_valid && (pushed == sf_word) && (needed > sf_word);
        end
    end
    wire        aw_free  = !awvalid_reg || m_axi_awready;

    wire pl_ready = pl_act && have_pg_reg && !wq_full;
    wire plan_v   = pl_ready && vram_reg;
    wire plan_b   = pl_ready && !vram_reg && !srcfail && avail && !bq_full && aw_free;
    wire pl_src_stop = pl_ready && !vram_reg && srcfail;
    wire plan     = plan_v || plan_b;
    wire [9:0] dpw_sum = {1'b0, dpw_reg} + {1'b0, beats};
    wire [44:0] vstart = {pg_reg, dpw_reg};

    assign aw_load = plan_b;

    // --------------------------------------------------------------- writer

    reg          abort_mode_reg, pre_done_reg;
    reg [8:0]    wk_reg;
    reg [29:0]   wj_reg, pops_reg;
    reg [63:0]   prev_reg;

    wire [8:0]          wq_beats = wq_head[8:0];
    wire [VRAM_AW-1:0]  wq_vaddr = wq_head[WQW-1:9];
    // The writer's conditions, worked out only while it runs or finishes
    // an aborted burst (all are 0 otherwise).
    reg  need_pre, need_pop, have, beat_ok, wlast, w_load, pre_pop, need_word, wr_src_stop;
    wire w_free = !wvalid_reg || m_axi_wready;
    always @* begin
        need_pre = 1'b0;
        need_pop = 1'b0;
        have = 1'b0;
        beat_ok = 1'b0;
        wlast = 1'b0;
        w_load = 1'b0;
        pre_pop = 1'b0;
        need_word = 1'b0;
        wr_src_stop = 1'b0;
        if (run_reg || abort_mode_reg) begin
            need_pre = run_reg && preload_reg && !pre_done_reg;
            need_pop = !cmode_reg && (pops_reg < ns_reg);
            have     = !need_pop || fifo_valid;
            beat_ok  = run_reg && !wq_empty && !need_pre && have;
            wlast    = (wk_reg == wq_beats - 9'd1);
            w_load   = w_free && !wq_empty && (abort_mode_reg || (beat_ok && !vram_reg && !abort));
            pre_pop  = need_pre && fifo_valid && !abort;
            // A VRAM destination meets a source fault in the writer.
            need_word = need_pre || (!wq_empty && need_pop && run_reg);
            wr_src_stop = vram_reg && run_reg && need_word && !fifo_valid && sf_valid
                          && (pushed == pops_reg) && (sf_word == pops_reg) && !abort;
        end
    end

    // Bytes sh..sh+7 of {hi, lo}, sh in 1..8.
    function [63:0] realign;
        input [63:0] hi;
        input [63:0] lo;
        input [3:0]  sh;
        begin
            realign = (lo >> {sh, 3'd0}) | (hi << (7'd64 - {sh, 3'd0}));
        end
    endfunction

    reg [63:0] wdata;
    reg [7:0]  wstrb;
    always @* begin
        wdata = 64'd0;
        wstrb = 8'd0;
        if (run_reg && !wq_empty) begin
            wdata = cmode_reg ? cdata_reg : realign(need_pop ? fifo_data : 64'd0, prev_reg, sh_reg);
            wstrb = ((wj_reg == 30'd0) ? head_strb_reg : 8'hFF)
                  & ((wj_reg == nd_reg - 30'd1) ? tail_strb_reg : 8'hFF);
        end
    end

    assign vw_req  = beat_ok && vram_reg && !abort;
    assign vw_addr = wq_vaddr + {{(VRAM_AW - 9){1'b0}}, wk_reg};
    assign vw_data = wdata;
    assign vw_strb = wstrb;
    wire v_beat = vw_req && vw_gnt;

    // W beats go through an output register, so a beat on the bus keeps
    // its payload until WREADY whatever happens behind it (abort).
    reg        wvalid_reg, wlast_reg;
    reg [63:0] wdata_reg;
    reg [7:0]  wstrb_reg;
    assign m_axi_wvalid = wvalid_reg;
    assign m_axi_wdata  = wdata_reg;
    assign m_axi_wstrb  = wstrb_reg;
    assign m_axi_wlast  = wlast_reg;
    wire d_beat = v_beat || (w_load && !abort_mode_reg);   // a beat carrying data
    wire any_beat = v_beat || w_load;

    assign fifo_pop = pre_pop || (d_beat && need_pop);

    // Population count of a strobe: pairs, then nibbles, then the byte.
    function [3:0] popcnt;
        input [7:0] v;
        reg [7:0] a, b;
        begin
            a = v - ((v >> 1) & 8'h55);
            b = (a & 8'h33) + ((a >> 2) & 8'h33);
            popcnt = b[3:0] + b[7:4];
        end
    endfunction
    reg [3:0] cnt_bytes_c;
    always @* begin
        cnt_bytes_c = 4'd0;
        if (d_beat && !nocount_reg)
            cnt_bytes_c = popcnt(wstrb);
    end
    assign cnt_bytes = cnt_bytes_c;

    // --------------------------------------------------------------- finish

    wire drained   = wq_empty && bq_empty && !awvalid_reg && !wvalid_reg;
    wire fin_ok    = run_reg && !abort && !start && !stop_reg && !b_err_reg && (pl_left_reg == 30'd0) && drained;
    wire fin_fault = run_reg && !abort && !start && (stop_reg || b_err_reg) && drained;

    assign idle = !run_reg && wq_empty && !abort_mode_reg && !wvalid_reg;

    always @(posedge clk) begin
        done <= 1'b0;
        fault <= 1'b0;

        // Planner.
        if (pg_pop) begin
            if (pg_fault) begin
                stop_reg <= 1'b1;
                stop_code_reg <= xf_code;
                stop_addr_reg <= xf_addr;
            end else begin
                have_pg_reg <= 1'b1;
                pg_reg <= pg_phys;
            end
        end
        if (pl_src_stop) begin
            stop_reg <= 1'b1;
            stop_code_reg <= sf_code;
            stop_addr_reg <= sf_addr;
        end
        if (plan) begin
            pl_left_reg <= pl_left_reg - {21'd0, beats};
            pl_word_reg <= pl_word_reg + {21'd0, beats};
            dpw_reg <= dpw_sum[8:0];
            if (dpw_sum[9])
                have_pg_reg <= 1'b0;
        end
        if (m_axi_awready)
            awvalid_reg <= 1'b0;
        if (plan_b) begin
            awvalid_reg <= 1'b1;
            awaddr_reg <= {pg_reg, dpw_reg, 3'd0};
            awlen_reg <= beats[7:0] - 8'd1;
            awepoch_reg <= epoch;
        end

        // Writer.
        if (pre_pop) begin
            prev_reg <= fifo_data;
            pops_reg <= pops_reg + 30'd1;
            pre_done_reg <= 1'b1;
        end
        if (d_beat) begin
            if (need_pop) begin
                prev_reg <= fifo_data;
                pops_reg <= pops_reg + 30'd1;
            end
            wj_reg <= wj_reg + 30'd1;
        end
        if (any_beat)
            wk_reg <= wlast ? 9'd0 : wk_reg + 9'd1;
        if (m_axi_wready)
            wvalid_reg <= 1'b0;
        if (w_load) begin
            wvalid_reg <= 1'b1;
            wdata_reg <= abort_mode_reg ? 64'd0 : wdata;
            wstrb_reg <= abort_mode_reg ? 8'd0 : wstrb;
            wlast_reg <= wlast;
        end
        if (abort_mode_reg && wq_empty)
            abort_mode_reg <= 1'b0;

        // B responses.
        if (b_valid && !bq_empty && b_resp != 2'd0 && !b_err_reg) begin
            b_err_reg <= 1'b1;
            b_err_addr_reg <= bq_head[47:0];
        end

        // Outcome.
        if (wr_src_stop) begin
            fault <= 1'b1;
            f_code <= sf_code;
            f_addr <= sf_addr;
            run_reg <= 1'b0;
        end else if (fin_ok) begin
            done <= 1'b1;
            run_reg <= 1'b0;
        end else if (fin_fault) begin
            fault <= 1'b1;
            f_code <= b_err_reg ? GMC_DMA_FAULT_BUS : stop_code_reg;
            f_addr <= b_err_reg ? b_err_addr_reg : stop_addr_reg;
            run_reg <= 1'b0;
        end

        if (start) begin
            run_reg <= 1'b1;
            vram_reg <= vram;
            cmode_reg <= cmode;
            cdata_reg <= cdata;
            nocount_reg <= nocount;
            preload_reg <= !cmode && (so3 > do12[2:0]);
            sh_reg <= (so3 > do12[2:0]) ? {1'b0, so3 - do12[2:0]} : 4'd8 - {1'b0, do12[2:0] - so3};
            head_strb_reg <= 8'hFF << do12[2:0];
            tail_strb_reg <= 8'hFF >> (3'd7 - last_ln);
            nd_reg <= nd_full[32:3];
            ns_reg <= ns_full[32:3];
            have_pg_reg <= 1'b0;
            stop_reg <= 1'b0;
            b_err_reg <= 1'b0;
            pl_left_reg <= nd_full[32:3];
            pl_word_reg <= 30'd0;
            dpw_reg <= do12[11:3];
            pre_done_reg <= 1'b0;
            wk_reg <= 9'd0;
            wj_reg <= 30'd0;
            pops_reg <= 30'd0;
        end
        if (abort) begin
            run_reg <= 1'b0;
            stop_reg <= 1'b0;
            b_err_reg <= 1'b0;
            pl_left_reg <= 30'd0;
            // AXI owes the W beats of every burst whose AW was issued.
            abort_mode_reg <= !vram_reg && !wq_empty;
            if (vram_reg)
                wk_reg <= 9'd0;
        end
        if (rst) begin
            run_reg <= 1'b0;
            vram_reg <= 1'b0;
            cmode_reg <= 1'b0;
            nocount_reg <= 1'b0;
            preload_reg <= 1'b0;
            have_pg_reg <= 1'b0;
            stop_reg <= 1'b0;
            b_err_reg <= 1'b0;
            pl_left_reg <= 30'd0;
            awvalid_reg <= 1'b0;
            wvalid_reg <= 1'b0;
            abort_mode_reg <= 1'b0;
            pre_done_reg <= 1'b0;
            wk_reg <= 9'd0;
            done <= 1'b0;
            fault <= 1'b0;
            f_code <= GMC_DMA_FAULT_NONE;
            f_addr <= 48'd0;
        end
    end

    // Planned blocks: VRAM start word and beats.
    gmc_dma_tagq #(
        .WIDTH(WQW), .DEPTH(WQ_DEPTH)
    ) u_wq (
        .clk(clk), .rst(rst), .clear(start || (abort && vram_reg)),
        .push(plan), .push_data({vstart[VRAM_AW-1:0], beats}), .pop(any_beat && wlast),
        .head(wq_head), .empty(wq_empty), .full(wq_full), .count(wq_count)
    );

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, wq_count, bq_count, nd_full[2:0], ns_full[2:0], vstart};
    /* verilator lint_on UNUSEDSIGNAL */

    // Bursts awaiting B: issue order and address.
    gmc_dma_tagq #(
        .WIDTH(56), .DEPTH(B_DEPTH)
    ) u_bq (
        .clk(clk), .rst(rst), .clear(start || abort),
        .push(plan_b), .push_data({aw_seq, pg_reg, dpw_reg, 3'd0}), .pop(b_valid),
        .head(bq_head), .empty(bq_empty), .full(bq_full), .count(bq_count)
    );

    assign m_axi_awid    = {{(ID_WIDTH - 4){1'b0}}, awepoch_reg, 2'd3};
    assign m_axi_awaddr  = awaddr_reg;
    assign m_axi_awlen   = awlen_reg;
    assign m_axi_awvalid = awvalid_reg;

    assign old_valid   = !bq_empty;
    assign old_seq     = bq_head[55:48];
    assign old_addr    = bq_head[47:0];

    assign quiet = idle && !awvalid_reg && bq_empty && !done && !fault;

endmodule

`resetall
