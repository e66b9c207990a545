// gmc: formal harness for the DMA engine's AXI4 master port (a bounded
// configuration: small VRAM, aperture, FIFOs and outstanding counts).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Every input of gmc_dma is free (register values within the register
// file's masks and clamps, commands, translation answers, VRAM, the bus),
// except that the bus side behaves as an AXI4
// slave may: it answers only bursts it was asked for, in order per
// direction, with RLAST on the last beat, the request's ID, after the
// request (never in its cycle) and after the write's last data beat, holds
// a response until it is taken, and never says EXOKAY. The translation
// unit answers only what it was asked. Asserted on the master:
//   - AR/AW/W held, with their payload, until taken; nothing valid in the
//     cycle after reset;
//   - every burst legal: INCR, 8-byte beats, aligned, never crossing
//     4 KiB, writes of at most MAX_BURST beats, reads of at most 16 (the
//     packet fetch; data reads are MAX_BURST too);
//   - W beats never before their AW, WLAST on exactly the last beat of the
//     burst, no more beats than AWLEN + 1;
//   - IDs consistent: writes use stream 3 of the ID (bits 1:0), reads
//     the others, a stalled request keeps its ID, and every response is
//     consumed: RREADY and BREADY are high (responses of any epoch are
//     taken, so no request is left without its response consumed);
// The engine's clock gate is bypassed under FORMAL (gmc_dma.v): the gate
// only drops edges at which nothing would change (tests/rtl/test_dma_gate.c
// and test_random_clock_gate check that in simulation).
module gmc_dma_formal (
    input wire clk
);
    localparam integer IDW = 4;
    localparam integer MAXB = 4;
    localparam integer RDO = 2;  // data reads in flight
    localparam integer WRO = 2;  // writes awaiting B

    (* anyseq *) wire rst, reg_write, clk_on, enable, cmd_skip, cmd_reset;
    (* anyseq *) wire [47:12] ring_base, dummy_page;
    (* anyseq *) wire [4:0] ring_log2;
    (* anyseq *) wire [19:0] tail;
    (* anyseq *) wire [31:0] watchdog, pt_base, prot_base, prot_limit;
    (* anyseq *) wire [1:0] g_req_ready, g_resp_valid;
    (* anyseq *) wire g_resp_fault, g_resp_system;
    (* anyseq *) wire [3:0] g_resp_code;
    (* anyseq *) wire [47:0] g_resp_addr;
    (* anyseq *) wire vr_gnt, vr_valid, vw_gnt;
    (* anyseq *) wire [63:0] vr_data, rdata;
    (* anyseq *) wire awready, wready, bvalid, arready, rvalid, rlast_in;
    (* anyseq *) wire [1:0] bresp, rresp;

    wire [IDW-1:0] awid, arid;
    reg  [IDW-1:0] bid, rid;
    wire [47:0] awaddr, araddr;
    wire [7:0] awlen, arlen;
    wire [2:0] awsize, arsize, awprot, arprot;
    wire [1:0] awburst, arburst;
    wire [3:0] awcache, arcache;
    wire awlock, arlock, awvalid, wvalid, wlast, bready, arvalid, rready;
    wire [63:0] wdata;
    wire [7:0] wstrb;
    wire [1:0] g_req_valid, g_req_write;

    gmc_dma #(
        .VRAM_BYTES(65536), .APERTURE_PAGES(16), .PROT_RANGES(1), .ID_WIDTH(IDW), .FIFO_DEPTH(8),
        .MAX_BURST(MAXB), .FETCH_DEPTH(32), .PAGEQ_DEPTH(8), .RD_OUTSTANDING(RDO), .WR_OUTSTANDING(WRO)
    ) dut (
        .clk(clk), .rst(rst), .reg_write(reg_write), .clk_on(clk_on), .clk_run(),
        .enable(enable), .ring_base(ring_base), .ring_log2(ring_log2), .tail(tail), .watchdog(watchdog),
        .pt_base(pt_base), .dummy_page(dummy_page), .prot_base(prot_base), .prot_limit(prot_limit),
        .cmd_skip(cmd_skip), .cmd_reset(cmd_reset),
        .st_state(), .st_indirect(), .st_rd_out(), .st_wr_out(), .st_head(), .st_fence(), .st_fault_code(),
        .st_fault_pkt(), .st_fault_addr(), .st_read_result(), .ev_packets(), .ev_fault(), .ev_fence_irq(),
        .cnt_rd_vram(), .cnt_rd_sys(), .cnt_rd_ap(), .cnt_wr_vram(), .cnt_wr_sys(), .cnt_wr_ap(),
        .g_req_valid(g_req_valid), .g_req_ready(g_req_ready), .g_req_addr(), .g_req_write(g_req_write),
        .g_resp_valid(g_resp_valid), .g_resp_fault(g_resp_fault), .g_resp_code(g_resp_code),
        .g_resp_addr(g_resp_addr), .g_resp_system(g_resp_system), .inv_all(), .inv_page_valid(), .inv_page(),
        .vr_req(), .vr_addr(), .vr_gnt(vr_gnt), .vr_valid(vr_valid), .vr_data(vr_data),
        .vw_req(), .vw_addr(), .vw_data(), .vw_strb(), .vw_gnt(vw_gnt),
        .m_axi_awid(awid), .m_axi_awaddr(awaddr), .m_axi_awlen(awlen), .m_axi_awsize(awsize),
        .m_axi_awburst(awburst), .m_axi_awlock(awlock), .m_axi_awcache(awcache), .m_axi_awprot(awprot),
        .m_axi_awvalid(awvalid), .m_axi_awready(awready), .m_axi_wdata(wdata), .m_axi_wstrb(wstrb),
        .m_axi_wlast(wlast), .m_axi_wvalid(wvalid), .m_axi_wready(wready), .m_axi_bid(bid),
        .m_axi_bresp(bresp), .m_axi_bvalid(bvalid), .m_axi_bready(bready), .m_axi_arid(arid),
        .m_axi_araddr(araddr), .m_axi_arlen(arlen), .m_axi_arsize(arsize), .m_axi_arburst(arburst),
        .m_axi_arlock(arlock), .m_axi_arcache(arcache), .m_axi_arprot(arprot), .m_axi_arvalid(arvalid),
        .m_axi_arready(arready), .m_axi_rid(rid), .m_axi_rdata(rdata), .m_axi_rresp(rresp),
        .m_axi_rlast(rlast_in), .m_axi_rvalid(rvalid), .m_axi_rready(rready)
    );

    // The register file's values keep its write masks and clamps
    // (docs/registers.md): TAIL in 32-byte packets, the ring 2^12..2^20
    // bytes, PT_BASE 4 KiB aligned.
    always @(*) assume(tail[4:0] == 5'd0 && ring_log2 >= 5'd12 && ring_log2 <= 5'd20 && pt_base[11:0] == 12'd0);

    reg f_past_valid = 1'b0;
    always @(posedge clk) f_past_valid <= 1'b1;
    always @(*) if (!f_past_valid) assume(rst);

    // ------------------------------------------------ the slave's bookkeeping
    // Read bursts owed, oldest first (ID, beats left); write bursts whose
    // address was taken (ID, beats), the W beats of the oldest one with
    // data still due, and the bursts whose data is complete (B owed).
    localparam integer QD = 16;
    reg [IDW-1:0] rq_id [0:QD-1];
    reg [8:0]     rq_left [0:QD-1];
    reg [4:0]     rq_n;
    reg [IDW-1:0] wq_id [0:QD-1];
    reg [8:0]     wq_beats [0:QD-1];
    reg [4:0]     wq_n;     // AWs taken, data not complete
    reg [8:0]     w_done;   // beats of wq[0] taken
    reg [IDW-1:0] bq_id [0:QD-1];
    reg [4:0]     bq_n;     // data complete, B owed
    integer i;

    wire ar_hs = arvalid && arready, aw_hs = awvalid && awready, w_hs = wvalid && wready;
    wire r_hs = rvalid && rready, b_hs = bvalid && bready;

    // The slave: responses only for what is owed (registered queues, so
    // never in the cycle of the request), in order, with the ID asked.
    always @(*) begin
        if (rvalid) assume(rq_n != 0 && rlast_in == (rq_left[0] == 9'd1));
        if (bvalid) assume(bq_n != 0);
        assume(rresp != 2'b01 && bresp != 2'b01);
    end
    always @(*) begin
        rid = rq_id[0];
        bid = bq_id[0];
    end
    always @(posedge clk) if (f_past_valid && !$past(rst) && !rst) begin
        if ($past(rvalid && !rready)) assume(rvalid && rdata == $past(rdata) && rresp == $past(rresp));
        if ($past(bvalid && !bready)) assume(bvalid && bresp == $past(bresp));
    end

    always @(posedge clk) begin
        if (rst) begin
            rq_n <= 0; wq_n <= 0; bq_n <= 0; w_done <= 0;
        end else begin
            // reads
            if (r_hs && rq_left[0] == 9'd1) begin
                for (i = 0; i < QD - 1; i = i + 1) begin
                    rq_id[i] <= rq_id[i + 1];
                    rq_left[i] <= rq_left[i + 1];
                end
            end else if (r_hs) begin
                rq_left[0] <= rq_left[0] - 9'd1;
            end
            if (ar_hs) begin
                rq_id[rq_n - ((r_hs && rq_left[0] == 9'd1) ? 5'd1 : 5'd0)] <= arid;
                rq_left[rq_n - ((r_hs && rq_left[0] == 9'd1) ? 5'd1 : 5'd0)] <= {1'b0, arlen} + 9'd1;
            end
            rq_n <= rq_n + {4'b0, ar_hs} - {4'b0, r_hs && rq_left[0] == 9'd1};
            // write data
            if (w_hs && wlast) begin
                for (i = 0; i < QD - 1; i = i + 1) begin
                    wq_id[i] <= wq_id[i + 1];
                    wq_beats[i] <= wq_beats[i + 1];
                end
                w_done <= 0;
            end else if (w_hs) begin
                w_done <= w_done + 9'd1;
            end
            if (aw_hs) begin
                wq_id[wq_n - ((w_hs && wlast) ? 5'd1 : 5'd0)] <= awid;
                wq_beats[wq_n - ((w_hs && wlast) ? 5'd1 : 5'd0)] <= {1'b0, awlen} + 9'd1;
            end
            wq_n <= wq_n + {4'b0, aw_hs} - {4'b0, w_hs && wlast};
            // B owed
            if (b_hs) begin
                for (i = 0; i < QD - 1; i = i + 1) bq_id[i] <= bq_id[i + 1];
            end
            if (w_hs && wlast) bq_id[bq_n - (b_hs ? 5'd1 : 5'd0)] <= wq_id[0];
            bq_n <= bq_n + {4'b0, w_hs && wlast} - {4'b0, b_hs};
        end
    end

    // ------------------------------------------------------- the master's duties
    always @(posedge clk) if (f_past_valid && !$past(rst) && !rst) begin
        if ($past(arvalid && !arready))
            assert(arvalid && araddr == $past(araddr) && arlen == $past(arlen) && arid == $past(arid));
        if ($past(awvalid && !awready))
            assert(awvalid && awaddr == $past(awaddr) && awlen == $past(awlen) && awid == $past(awid));
        if ($past(wvalid && !wready))
            assert(wvalid && wdata == $past(wdata) && wstrb == $past(wstrb) && wlast == $past(wlast));
    end
    always @(posedge clk) if (f_past_valid && $past(rst) && !rst)
        assert(!arvalid && !awvalid && !wvalid);

    always @(*) if (f_past_valid && !rst) begin
        // Legal bursts: INCR, 8-byte beats, short, inside one 4 KiB page.
        if (arvalid) assert(arburst == 2'd1 && arsize == 3'd3 && arlen < 16 && arlock == 1'b0
                            && {1'b0, araddr[11:0]} + ({5'd0, arlen} + 13'd1) * 13'd8 <= 13'd4096
                            && araddr[2:0] == 3'd0);
        if (awvalid) assert(awburst == 2'd1 && awsize == 3'd3 && awlen < MAXB && awlock == 1'b0
                            && {1'b0, awaddr[11:0]} + ({5'd0, awlen} + 13'd1) * 13'd8 <= 13'd4096
                            && awaddr[2:0] == 3'd0);
        // W only for an announced burst, WLAST on exactly its last beat.
        if (wvalid) assert(wq_n != 0 && wlast == (w_done + 9'd1 == wq_beats[0]));
        assert(wq_n == 0 || w_done < wq_beats[0]);
        // Responses are always consumed.
        assert(rready && bready);
        // The bookkeeping never overflows within the proof's depth.
        assert(rq_n < QD && wq_n < QD && bq_n < QD);
        // IDs: writes are stream 3 (reads use 0..2, the packet fetch and
        // the data streams), so a response's ID names what it answers.
        if (awvalid) assert(awid[1:0] == 2'd3);
        if (arvalid) assert(arid[1:0] != 2'd3);
    end
    // Reachability (yosys-smtbmc -c): how deep a write burst and its
    // response first appear, so a BMC depth can be judged.
    always @(*) if (f_past_valid && !rst) begin
        cover(arvalid && arready);
        cover(awvalid && awready);
        cover(wvalid && wready && wlast);
        cover(bvalid);
    end
endmodule

`resetall
