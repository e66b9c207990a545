// gmc: formal harness for the DMA engine's read side alone: the source
// reader (gmc_dma_rd) behind the AR arbiter and R router
// (gmc_dma_axi_rd_arb), reached within a few cycles of reset.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// In the whole engine (gmc_dma_formal.v) the data stream's bursts come
// only after a packet is fetched and decoded, deeper than the BMC gets;
// here the reader's inputs are free, so a start, a page and read bursts
// come in the first cycles. The other three streams (packet fetch, MDL
// entries) are free requesters that hold a request with its payload until
// it is taken and ask only for legal bursts (INCR, 8-byte aligned, at most
// 16 beats, inside a 4 KiB page). The environment keeps what the engine
// guarantees the reader:
//   - start only with nothing of the data stream owed in the current
//     epoch, never with flush;
//   - the epoch changes only in the cycle after a flush, always when
//     something of the current epoch is owed then, and only to an epoch
//     that owes nothing (fewer than three older epochs owe: docs/dma.md);
//   - the data FIFO is cleared at start and flush and popped only when
//     not empty;
//   - a bus source (the VRAM port is not the bus's business);
// and the bus is a legal AXI4 slave that answers its accepted bursts in
// order (legal: any order among IDs is allowed), ARLEN + 1 beats each with
// RLAST on the last, never EXOKAY, ARREADY free (but no more than QD
// bursts accepted and unanswered).
// Asserted:
//   - AR held with its payload until taken; nothing valid after reset;
//   - every burst legal: INCR of 8-byte beats, 8-byte aligned, at most
//     16 beats (MAX_BURST for the data stream), inside one 4 KiB page;
//   - IDs: the epoch of the cycle the burst was loaded; a data burst on
//     stream 3 with the reader's address and length;
//   - every response consumed (RREADY always high), and the reader takes
//     only beats of its own stream and epoch;
//   - the data FIFO never overflows (a burst is requested only when the
//     FIFO has room for all of its beats), and the reader never pushes
//     more words than its range has.
// Covered (each must be reached within the depth): a data AR taken, a
// data word pushed, a full FIFO, two data bursts owed at once.
module gmc_dma_rd_formal #(
    // 1: leave out the assertions about the data FIFO and the words pushed
    // (for k-induction: they rest on the reader's credit count, which the
    // harness cannot see), keeping those about the bus.
    parameter integer BUS_ONLY = 0
) (
    input wire clk
);
    localparam integer MAXB = 2;
    localparam integer FD = 4;
    localparam integer QD = 4;

    (* anyseq *) wire rst, start, flush, pg_valid, pg_fault, fifo_pop, arready, rvalid;
    (* anyseq *) wire [1:0] epoch, rresp;
    (* anyseq *) wire [11:0] so12;
    (* anyseq *) wire [5:0] len_lo;
    (* anyseq *) wire [3:0] pg_lo, xf_code;
    (* anyseq *) wire [2:0] o_valid;
    (* anyseq *) wire [11:0] o_off0, o_off1, o_off2;
    (* anyseq *) wire [3:0] o_len0, o_len1, o_len2;
    (* anyseq *) wire [7:0] ar_seq;
    // Data words, fault addresses, VRAM data: constants (they steer no
    // control). Ranges up to 64 bytes, pages anywhere in 64 KiB.
    wire [31:0] len = {26'd0, len_lo};
    wire [35:0] pg_phys = {32'd0, pg_lo};
    wire [47:0] xf_addr = 48'd0;
    wire [63:0] rdata = 64'd0;

    wire        rd_arv, rd_arr, pg_pop, push, vr_req, sf_valid, old_valid, quiet_rd;
    wire [47:0] rd_ara, sf_addr, old_addr;
    wire [7:0]  rd_arl, old_seq;
    wire [63:0] push_data;
    wire [3:0]  vr_addr;
    wire [29:0] pushed, sf_word;
    wire [3:0]  sf_code, cnt_bytes;

    wire [3:0]  r_v;
    wire [63:0] r_data;
    wire [1:0]  r_resp;
    wire        r_last, r_done, r_cur, load, arvalid, rready, quiet_arb;
    wire [1:0]  r_done_epoch;
    wire [3:0]  arid, req_ready;
    wire [47:0] araddr;
    wire [7:0]  arlen;

    // The bus: accepted bursts, oldest first, with their ID and beats;
    // rbeat beats of the oldest answered.
    reg [3:0] q_id [0:QD-1];
    reg [8:0] q_beats [0:QD-1];
    reg [2:0] q_n;
    reg [8:0] rbeat;
    wire ar_hs = arvalid && arready;
    wire rlast = rbeat + 9'd1 == q_beats[0];
    wire r_hs = rvalid && rready;
    integer i, j, m;

    gmc_dma_rd #(
        .VRAM_AW(4), .FIFO_DEPTH(FD), .MAX_BURST(MAXB), .MAX_OUT(2)
    ) dut (
        .clk(clk), .rst(rst), .start(start), .flush(flush), .vram(1'b0), .so12(so12), .len(len),
        .pg_valid(pg_valid), .pg_phys(pg_phys), .pg_fault(pg_fault), .pg_pop(pg_pop),
        .xf_code(xf_code), .xf_addr(xf_addr),
        .push_valid(push), .push_data(push_data), .fifo_pop(fifo_pop),
        .vr_req(vr_req), .vr_addr(vr_addr), .vr_gnt(1'b0), .vr_valid(1'b0), .vr_data(64'd0),
        .ar_valid(rd_arv), .ar_ready(rd_arr), .ar_addr(rd_ara), .ar_len(rd_arl), .ar_seq(ar_seq),
        .r_valid(r_v[3]), .r_data(r_data), .r_resp(r_resp), .r_last(r_last),
        .pushed(pushed), .sf_valid(sf_valid), .sf_word(sf_word), .sf_code(sf_code), .sf_addr(sf_addr),
        .old_valid(old_valid), .old_seq(old_seq), .old_addr(old_addr), .cnt_bytes(cnt_bytes), .quiet(quiet_rd)
    );

    // The other streams' requests: page offset and length (payload).
    wire [47:0] o_addr0 = {36'd1, o_off0[11:3], 3'd0};
    wire [47:0] o_addr1 = {36'd2, o_off1[11:3], 3'd0};
    wire [47:0] o_addr2 = {36'd3, o_off2[11:3], 3'd0};

    gmc_dma_axi_rd_arb #(
        .PORTS(4), .ID_WIDTH(4)
    ) arb (
        .clk(clk), .rst(rst), .epoch(epoch),
        .req_valid({rd_arv, o_valid}), .req_ready(req_ready),
        .req_addr({rd_ara, o_addr2, o_addr1, o_addr0}), .req_len({rd_arl, 4'd0, o_len2, 4'd0, o_len1, 4'd0, o_len0}),
        .load(load),
        .r_valid(r_v), .r_data(r_data), .r_resp(r_resp), .r_last(r_last),
        .r_done(r_done), .r_done_epoch(r_done_epoch), .r_cur(r_cur),
        .m_axi_arid(arid), .m_axi_araddr(araddr), .m_axi_arlen(arlen), .m_axi_arvalid(arvalid),
        .m_axi_arready(arready),
        .m_axi_rid(q_id[0]), .m_axi_rdata(rdata), .m_axi_rresp(rresp), .m_axi_rlast(rlast),
        .m_axi_rvalid(rvalid), .m_axi_rready(rready),
        .quiet(quiet_arb)
    );
    assign rd_arr = req_ready[3];

    reg f_past_valid = 1'b0;
    always @(posedge clk) f_past_valid <= 1'b1;
    always @(*) if (!f_past_valid) assume(rst);

    // ------------------------------------------------------------ the bus
    always @(*) begin
        if (ar_hs) assume(q_n < QD);
        if (rvalid) assume(q_n != 3'd0);
        assume(rresp != 2'b01);
    end
    always @(posedge clk) begin
        if (rst) begin
            q_n <= 3'd0;
            rbeat <= 9'd0;
        end else begin
            if (r_hs && rlast) begin
                for (i = 0; i < QD - 1; i = i + 1) begin
                    q_id[i] <= q_id[i + 1];
                    q_beats[i] <= q_beats[i + 1];
                end
                rbeat <= 9'd0;
            end else if (r_hs) begin
                rbeat <= rbeat + 9'd1;
            end
            if (ar_hs) begin
                q_id[q_n - ((r_hs && rlast) ? 3'd1 : 3'd0)] <= arid;
                q_beats[q_n - ((r_hs && rlast) ? 3'd1 : 3'd0)] <= {1'b0, arlen} + 9'd1;
            end
            q_n <= q_n + (ar_hs ? 3'd1 : 3'd0) - ((r_hs && rlast) ? 3'd1 : 3'd0);
        end
    end

    // ------------------------------------------------ the engine's guarantees
    // Bursts owed per epoch (counted from their load into AR, as the engine
    // does), and the data stream's in the current epoch.
    reg [3:0] owed [0:3];
    reg [3:0] d_owed;
    wire d_load = load && req_ready[3];
    wire d_done = r_hs && rlast && q_id[0] == {epoch, 2'd3};
    always @(posedge clk) begin
        if (rst) begin
            for (j = 0; j < 4; j = j + 1) owed[j] <= 4'd0;
            d_owed <= 4'd0;
        end else begin
            for (j = 0; j < 4; j = j + 1)
                owed[j] <= owed[j] + ((load && epoch == j) ? 4'd1 : 4'd0)
                           - ((r_hs && rlast && q_id[0][3:2] == j) ? 4'd1 : 4'd0);
            d_owed <= ((f_past_valid && epoch != $past(epoch)) ? 4'd0 : d_owed) + (d_load ? 4'd1 : 4'd0)
                      - (d_done ? 4'd1 : 4'd0);
        end
    end
    always @(*) begin
        if (start) assume(!flush && d_owed == 4'd0);
    end
    wire [3:0] owed_cur = owed[epoch];
    always @(posedge clk) if (f_past_valid && !$past(rst)) begin
        if (!$past(flush)) assume(epoch == $past(epoch));
        if ($past(flush) && $past(owed_cur) != 4'd0) assume(epoch != $past(epoch));
        if (epoch != $past(epoch)) assume(owed_cur == 4'd0);
    end
    always @(posedge clk) if (f_past_valid && $past(rst)) assume(epoch == 2'd0);

    // The other streams hold a request and its payload until taken.
    reg [2:0] o_v_q;
    reg [11:0] o_off_q [0:2];
    reg [3:0] o_len_q [0:2];
    always @(posedge clk) begin
        o_v_q <= o_valid & ~req_ready[2:0];
        o_off_q[0] <= o_off0; o_off_q[1] <= o_off1; o_off_q[2] <= o_off2;
        o_len_q[0] <= o_len0; o_len_q[1] <= o_len1; o_len_q[2] <= o_len2;
    end
    always @(*) begin
        // legal shapes: inside the page
        assume({1'b0, o_off0[11:3], 3'd0} + ({9'd0, o_len0} + 13'd1) * 13'd8 <= 13'd4096);
        assume({1'b0, o_off1[11:3], 3'd0} + ({9'd0, o_len1} + 13'd1) * 13'd8 <= 13'd4096);
        assume({1'b0, o_off2[11:3], 3'd0} + ({9'd0, o_len2} + 13'd1) * 13'd8 <= 13'd4096);
    end
    always @(posedge clk) if (f_past_valid && !$past(rst) && !rst) begin
        for (m = 0; m < 3; m = m + 1)
            if (o_v_q[m]) assume(o_valid[m]);
        if (o_v_q[0]) assume(o_off0[11:3] == o_off_q[0][11:3] && o_len0 == o_len_q[0]);
        if (o_v_q[1]) assume(o_off1[11:3] == o_off_q[1][11:3] && o_len1 == o_len_q[1]);
        if (o_v_q[2]) assume(o_off2[11:3] == o_off_q[2][11:3] && o_len2 == o_len_q[2]);
    end

    // The data FIFO: cleared at start and flush, popped only when not empty.
    reg [3:0] fifo_n;
    reg [6:0] f_ns;  // words of the range of the current start
    always @(*) if (fifo_pop) assume(fifo_n != 4'd0 && !start && !flush);
    always @(posedge clk) begin
        if (rst || start || flush)
            fifo_n <= 4'd0;
        else
            fifo_n <= fifo_n + (push ? 4'd1 : 4'd0) - (fifo_pop ? 4'd1 : 4'd0);
        if (start) f_ns <= ({4'd0, so12[2:0]} + {1'b0, len_lo} + 7'd7) >> 3;
        if (rst) f_ns <= 7'd0;
    end

    // ------------------------------------------------------- the master's duties
    always @(posedge clk) if (f_past_valid && !$past(rst) && !rst) begin
        if ($past(arvalid && !arready))
            assert(arvalid && araddr == $past(araddr) && arlen == $past(arlen) && arid == $past(arid));
        // The ID carries the epoch of the cycle the burst was loaded; a
        // data burst is the reader's, on stream 3.
        if ($past(load)) assert(arid[3:2] == $past(epoch));
        if ($past(d_load))
            assert(arid[1:0] == 2'd3 && araddr == $past(rd_ara) && arlen == $past(rd_arl));
    end
    always @(posedge clk) if (f_past_valid && $past(rst) && !rst)
        assert(!arvalid);

    always @(*) if (f_past_valid && !rst) begin
        // Legal bursts: 1..16 beats (MAX_BURST for data), 8-byte aligned,
        // inside one 4 KiB page.
        if (arvalid) assert(araddr[2:0] == 3'd0 && arlen < 8'd16);
        if (arvalid && arid[1:0] == 2'd3) assert(arlen < MAXB);
        if (arvalid) assert({1'b0, araddr[11:0]} + ({5'd0, arlen} + 13'd1) * 13'd8 <= 13'd4096);
        // Every response consumed; the reader takes only its own beats.
        assert(rready);
        if (r_v[3]) assert(rvalid && q_id[0] == {epoch, 2'd3});
        // The FIFO never overflows; no more words than the range has.
        if (BUS_ONLY == 0) begin
            assert(fifo_n <= FD);
            if (push && !fifo_pop) assert(fifo_n < FD);
            assert({1'b0, pushed} <= {24'd0, f_ns});
        end
    end

    // Reachability within the depth.
    always @(*) if (f_past_valid && !rst) begin
        cover(ar_hs && arid[1:0] == 2'd3);
        cover(push);
        cover(fifo_n == FD);
        cover(d_owed == 4'd2);
    end

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, pg_pop, push_data, vr_req, vr_addr, sf_valid, sf_addr, sf_word, sf_code, old_valid,
                    old_addr, old_seq, cnt_bytes, quiet_rd, quiet_arb, r_v[2:0], r_data, r_done, r_done_epoch,
                    r_cur};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule

`resetall
