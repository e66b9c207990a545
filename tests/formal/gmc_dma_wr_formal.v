// gmc: formal harness for the DMA engine's write side alone (gmc_dma_wr):
// its AXI4 write channels, reached within a few cycles of reset.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// In the whole engine (gmc_dma_formal.v) a write burst needs a packet
// fetched, decoded and executed first, about 20 cycles, deeper than the
// BMC gets; here the writer's inputs are free, so a start, a page and the
// source words can come in the first cycles. The environment keeps only
// what the engine guarantees the writer:
//   - start only while the writer is idle, never with abort;
//   - the epoch changes only in the cycle after an abort;
//   - b_valid (the engine passes on B responses of the current epoch
//     only) only for a burst issued since the last abort whose last W
//     beat was taken, and b_resp free but never EXOKAY;
//   - the bus' AWREADY and WREADY free; everything else (lengths,
//     offsets, pages, page faults, source words and source faults, the
//     VRAM port) free.
// Asserted:
//   - AW and W held with their payload until taken; nothing valid right
//     after reset;
//   - every burst legal: at most MAX_BURST beats, inside one 4 KiB page;
//   - W beats only for a burst already announced (loaded into AW), WLAST
//     on exactly the last beat of each burst, as many beats as AWLEN + 1;
//   - IDs: stream 3, the epoch of the cycle the burst was planned, held;
//   - no request without its response: the writer reports done only when
//     every burst issued since the last abort has had its B.
// Covered (yosys-smtbmc -c: each must be reached within the depth): a W
// beat taken, a last W beat taken, a B handshake, done after a bus burst,
// two bursts' AWs taken.
module gmc_dma_wr_formal #(
    // 1: only the assertions about the AW channel (held, legal, IDs), for
    // k-induction: the W and B ones rest on the writer's queues, which the
    // harness cannot see.
    parameter integer AW_ONLY = 0
) (
    input wire clk
);
    localparam integer MAXB = 4;
    localparam integer IDW = 4;

    (* anyseq *) wire rst, start, abort, cmode, pg_valid, pg_fault, fifo_valid, sf_valid;
    (* anyseq *) wire [1:0] epoch, b_resp;
    (* anyseq *) wire [11:0] do12;
    (* anyseq *) wire [7:0] len_lo, pushed_lo, sf_word_lo;
    (* anyseq *) wire [2:0] so3;
    (* anyseq *) wire [3:0] pg_lo, xf_code, sf_code;
    // Data and fault addresses do not steer the write channels' control:
    // constants, so the solver does not carry 64-bit shifters. Lengths and
    // word counts up to 255 words, pages anywhere in 64 KiB: enough for
    // several bursts, partial blocks and every offset in a page.
    // Bus destinations only (a VRAM one never uses the write channels).
    wire vram = 1'b0, nocount = 1'b1;
    wire [63:0] cdata = 64'd0, fifo_data = 64'd0;
    wire [47:0] xf_addr = 48'd0, sf_addr = 48'd0;
    wire [31:0] len = {24'd0, len_lo};
    wire [29:0] pushed = {22'd0, pushed_lo}, sf_word = {22'd0, sf_word_lo};
    wire [35:0] pg_phys = {32'd0, pg_lo};
    (* anyseq *) wire vw_gnt, awready, wready, b_valid;
    (* anyseq *) wire [7:0] aw_seq;

    wire pg_pop, fifo_pop, vw_req, aw_load, awvalid, wvalid, wlast, done, fault, idle, quiet, old_valid;
    wire [IDW-1:0] awid;
    wire [47:0] awaddr, f_addr, old_addr;
    wire [7:0] awlen, wstrb, old_seq;
    wire [63:0] wdata, vw_data;
    wire [7:0] vw_strb;
    wire [9:0] vw_addr;
    wire [3:0] f_code, cnt_bytes;

    gmc_dma_wr #(
        .VRAM_AW(10), .MAX_BURST(MAXB), .WQ_DEPTH(4), .B_DEPTH(2), .ID_WIDTH(IDW)
    ) dut (
        .clk(clk), .rst(rst), .start(start), .abort(abort), .epoch(epoch), .vram(vram), .do12(do12),
        .len(len), .so3(so3), .cmode(cmode), .cdata(cdata), .nocount(nocount),
        .pg_valid(pg_valid), .pg_phys(pg_phys), .pg_fault(pg_fault), .pg_pop(pg_pop),
        .xf_code(xf_code), .xf_addr(xf_addr),
        .fifo_valid(fifo_valid), .fifo_data(fifo_data), .fifo_pop(fifo_pop), .pushed(pushed),
        .sf_valid(sf_valid), .sf_word(sf_word), .sf_code(sf_code), .sf_addr(sf_addr),
        .vw_req(vw_req), .vw_addr(vw_addr), .vw_data(vw_data), .vw_strb(vw_strb), .vw_gnt(vw_gnt),
        .m_axi_awid(awid), .m_axi_awaddr(awaddr), .m_axi_awlen(awlen), .m_axi_awvalid(awvalid),
        .m_axi_awready(awready), .aw_load(aw_load), .aw_seq(aw_seq),
        .m_axi_wdata(wdata), .m_axi_wstrb(wstrb), .m_axi_wlast(wlast), .m_axi_wvalid(wvalid),
        .m_axi_wready(wready), .b_valid(b_valid), .b_resp(b_resp),
        .done(done), .fault(fault), .f_code(f_code), .f_addr(f_addr), .idle(idle),
        .old_valid(old_valid), .old_seq(old_seq), .old_addr(old_addr), .cnt_bytes(cnt_bytes), .quiet(quiet)
    );

    reg f_past_valid = 1'b0;
    always @(posedge clk) f_past_valid <= 1'b1;
    always @(*) if (!f_past_valid) assume(rst);

    // ------------------------------------------------------ the environment
    always @(*) begin
        if (start) assume(idle && !abort);
        assume(b_resp != 2'b01);
    end
    always @(posedge clk) if (f_past_valid && !$past(abort)) assume(epoch == $past(epoch));

    // Bursts planned (AW loaded) whose W beats are not all taken, oldest
    // first: their beats (AWLEN + 1); w_done beats of the oldest taken.
    // stale: how many of them were planned before the last abort (their B
    // belongs to an older epoch and never reaches the writer); b_owed:
    // bursts since the last abort with all W beats taken and no B yet.
    localparam integer QD = 8;
    reg [8:0] q_beats [0:QD-1];
    reg [3:0] q_n, stale;
    reg [8:0] w_done;
    reg [3:0] b_owed;
    reg       bus_burst;  // a bus burst since the last start (for the cover)
    reg [1:0] aw_taken;
    reg       ld;         // an AW was loaded in the cycle before
    integer i;
    wire w_hs = wvalid && wready, aw_hs = awvalid && awready;
    wire w_end = w_hs && wlast;
    always @(*) if (b_valid) assume(b_owed != 4'd0);

    always @(posedge clk) begin
        if (rst) begin
            q_n <= 4'd0; stale <= 4'd0; w_done <= 9'd0; b_owed <= 4'd0; bus_burst <= 1'b0; aw_taken <= 2'd0;
            ld <= 1'b0;
        end else begin
            ld <= aw_load;
            if (w_end) begin
                for (i = 0; i < QD - 1; i = i + 1) q_beats[i] <= q_beats[i + 1];
                w_done <= 9'd0;
            end else if (w_hs) begin
                w_done <= w_done + 9'd1;
            end
            // (The AW loaded in the cycle before is on the bus now.)
            if (ld) q_beats[q_n - (w_end ? 4'd1 : 4'd0)] <= {1'b0, awlen} + 9'd1;
            q_n <= q_n + {3'd0, ld} - {3'd0, w_end};
            if (abort) begin
                stale <= q_n - (w_end ? 4'd1 : 4'd0) + (ld ? 4'd1 : 4'd0) + (aw_load ? 4'd1 : 4'd0);
                b_owed <= 4'd0;
            end else begin
                stale <= stale - ((w_end && stale != 4'd0) ? 4'd1 : 4'd0);
                b_owed <= b_owed + ((w_end && stale == 4'd0) ? 4'd1 : 4'd0) - (b_valid ? 4'd1 : 4'd0);
            end
            if (start) bus_burst <= 1'b0;
            else if (aw_load) bus_burst <= 1'b1;
            if (aw_hs && aw_taken != 2'd3) aw_taken <= aw_taken + 2'd1;
        end
    end

    // ------------------------------------------------------- the master's duties
    always @(posedge clk) if (f_past_valid && !$past(rst) && !rst) begin
        if ($past(awvalid && !awready))
            assert(awvalid && awaddr == $past(awaddr) && awlen == $past(awlen) && awid == $past(awid));
        if ($past(wvalid && !wready) && AW_ONLY == 0)
            assert(wvalid && wdata == $past(wdata) && wstrb == $past(wstrb) && wlast == $past(wlast));
        // The ID carries the epoch of the cycle the burst was planned.
        if ($past(aw_load)) assert(awid[3:2] == $past(epoch));
    end
    always @(posedge clk) if (f_past_valid && $past(rst) && !rst)
        assert(!awvalid && (AW_ONLY != 0 || !wvalid));

    always @(*) if (f_past_valid && !rst) begin
        // Legal bursts: 1..MAX_BURST beats inside one 4 KiB page.
        if (awvalid) assert(awlen < MAXB);
        if (awvalid) assert({1'b0, awaddr[11:0]} + ({5'd0, awlen} + 13'd1) * 13'd8 <= 13'd4096);
        if (awvalid) assert(awid[1:0] == 2'd3);
        if (AW_ONLY == 0) begin
        // W only for an announced burst, WLAST on exactly its last beat
        // (AWLEN + 1 beats).
        if (wvalid) assert(q_n != 4'd0 && wlast == (w_done + 9'd1 == q_beats[0]));
        assert(q_n == 4'd0 || w_done < q_beats[0]);
        // Every burst answered before done.
        if (done) assert(b_owed == 4'd0 && q_n == 4'd0 && !awvalid);
        assert(q_n < QD && b_owed < 4'd8);
        end
    end

    // Reachability within the depth.
    always @(*) if (f_past_valid && !rst) begin
        cover(w_hs);
        cover(w_end);
        cover(b_valid);
        cover(done && bus_burst);
        cover(aw_taken == 2'd2);
    end
endmodule

`resetall
