// gmc: smoke test of the micro-sequenced DMA engine (gmc_dmu, work in progress): one FENCE packet from the ring.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// A one-outstanding AXI read slave serves a 64-word memory. The ring (at
// 0x1000, 32 packets) holds one FENCE packet with IRQ; the test checks what
// the engine's microcode does with it: one 4-beat read of the slot, the
// fence value in the status RAM (DMA_FENCE), the fence IRQ pulse, HEAD
// moved to 32, the engine idle and not faulted, CNT_DMA_PACKETS 1 and
// CNT_DMA_FAULTS 0 in the status RAM (the packet pulses are not used with
// this engine: it counts in its register file).
module tb_dmu_smoke;

    reg clk = 1'b0;
    always #5 clk = !clk;
    reg rst = 1'b1;

    reg [3:0]  cfg_we = 4'd0;
    reg [4:0]  cfg_wa = 5'd0;
    reg [31:0] cfg_wd = 32'd0;
    reg [19:0] tail = 20'd0;
    reg        enable = 1'b0;
    reg [4:0]  st_ra = 5'd0;
    wire [63:0] st_rd;
    wire        st_rz;
    wire [1:0]  st_state;
    wire [19:0] st_head;
    wire [8:0]  st_fault_code;
    wire [1:0]  ev_packets;
    wire        ev_fence_irq, ev_fault;

    wire [3:0]  arid;
    wire [47:0] araddr;
    wire [7:0]  arlen;
    wire        arvalid, rready;
    reg         rvalid = 1'b0;
    reg  [3:0]  rid = 4'd0;
    reg  [63:0] rdata = 64'd0;
    reg         rlast = 1'b0;

    /* verilator lint_off PINCONNECTEMPTY */
    gmc_dmu #(.VRAM_BYTES(8192)) dut (
        .clk(clk), .rst(rst), .reg_write(1'b0), .clk_on(1'b0), .clk_run(), .enable(enable), .ring_log2(5'd10), .tail(tail), .watchdog(32'd0),
        .cfg_we(cfg_we), .cfg_wa(cfg_wa), .cfg_wd(cfg_wd),
        .cmd_skip(1'b0), .cmd_reset(1'b0), .cnt_clear(1'b0),
        .st_state(st_state), .st_indirect(), .st_rd_out(), .st_wr_out(), .st_head(st_head),
        .st_fault_code(st_fault_code), .st_ra(st_ra), .st_rd(st_rd), .st_rz(st_rz),
        .ev_packets(ev_packets), .ev_fault(ev_fault), .ev_fence_irq(ev_fence_irq),
        .g_req_valid(), .g_req_ready(2'b11), .g_req_addr(), .g_req_write(), .g_resp_valid(2'b00),
        .g_resp_fault(1'b0), .g_resp_code(4'd0), .g_resp_addr(48'd0), .g_resp_system(1'b0),
        .inv_all(), .inv_page_valid(), .inv_page(),
        .vr_req(), .vr_addr(), .vr_gnt(1'b0), .vr_valid(1'b0), .vr_data(64'd0),
        .vw_req(), .vw_addr(), .vw_data(), .vw_strb(), .vw_gnt(1'b0),
        .m_axi_awid(), .m_axi_awaddr(), .m_axi_awlen(), .m_axi_awsize(), .m_axi_awburst(), .m_axi_awlock(),
        .m_axi_awcache(), .m_axi_awprot(), .m_axi_awvalid(), .m_axi_awready(1'b1),
        .m_axi_wdata(), .m_axi_wstrb(), .m_axi_wlast(), .m_axi_wvalid(), .m_axi_wready(1'b1),
        .m_axi_bid(4'd0), .m_axi_bresp(2'd0), .m_axi_bvalid(1'b0), .m_axi_bready(),
        .m_axi_arid(arid), .m_axi_araddr(araddr), .m_axi_arlen(arlen), .m_axi_arsize(), .m_axi_arburst(),
        .m_axi_arlock(), .m_axi_arcache(), .m_axi_arprot(), .m_axi_arvalid(arvalid), .m_axi_arready(1'b1),
        .m_axi_rid(rid), .m_axi_rdata(rdata), .m_axi_rresp(2'd0), .m_axi_rlast(rlast), .m_axi_rvalid(rvalid),
        .m_axi_rready(rready)
    );
    /* verilator lint_on PINCONNECTEMPTY */

    // Memory: 64 words from 0x1000.
    reg [63:0] mem [0:63];
    reg [5:0]  rptr;
    reg [7:0]  rleft;
    integer    n_ar = 0, n_fence_irq = 0, i, errors = 0;

    always @(posedge clk) begin
        if (arvalid) begin
            n_ar <= n_ar + 1;
            if (araddr !== 48'h1000 || arlen !== 8'd3 || arid[1:0] !== 2'd0) begin
                $display("FAIL: AR addr %h len %0d id %h", araddr, arlen, arid);
                errors = errors + 1;
            end
            rptr <= araddr[8:3];
            rleft <= arlen;
            rid <= arid;
            rvalid <= 1'b1;
            rdata <= mem[araddr[8:3]];
            rlast <= arlen == 8'd0;
        end else if (rvalid && rready) begin
            if (rlast) rvalid <= 1'b0;
            else begin
                rptr <= rptr + 6'd1;
                rdata <= mem[rptr + 6'd1];
                rleft <= rleft - 8'd1;
                rlast <= rleft == 8'd1;
            end
        end
        if (ev_fence_irq) n_fence_irq <= n_fence_irq + 1;
        if (ev_fault) begin
            $display("FAIL: fault %h", st_fault_code);
            errors = errors + 1;
        end
    end

    task check64;
        input [4:0]  a;
        input [63:0] want;
        begin
            @(negedge clk) st_ra = a;
            @(negedge clk);
            if ((st_rz ? 64'd0 : st_rd) !== want) begin
                $display("FAIL: status word %0d is %h, want %h", a, st_rd, want);
                errors = errors + 1;
            end
        end
    endtask

    initial begin
        for (i = 0; i < 64; i = i + 1) mem[i] = 64'd0;
        // FENCE (opcode 10), flags IRQ (bit 5 of W0[15:8]), value in W3.
        mem[0] = 64'h0000_0000_0000_200A;
        mem[3] = 64'h1122_3344_5566_7788;
        repeat (4) @(posedge clk);
        @(negedge clk) rst = 1'b0;
        // The ring base (configuration word 0), as the register block writes it.
        cfg_we = 4'hF; cfg_wa = 5'd0; cfg_wd = 32'h0000_1000;
        @(negedge clk) cfg_we = 4'hF; cfg_wa = 5'd1; cfg_wd = 32'd0;
        @(negedge clk) cfg_we = 4'd0;
        repeat (200) @(negedge clk);
        enable = 1'b1;
        tail = 20'd32;
        repeat (1000) @(negedge clk);
        if (n_ar != 1) begin $display("FAIL: %0d reads, want 1", n_ar); errors = errors + 1; end
        if (n_fence_irq != 1) begin $display("FAIL: %0d fence IRQs, want 1", n_fence_irq); errors = errors + 1; end
        if (st_head != 20'd32) begin $display("FAIL: HEAD %0d, want 32", st_head); errors = errors + 1; end
        if (st_state != 2'd0) begin $display("FAIL: state %0d, want 0 (idle)", st_state); errors = errors + 1; end
        // DMA_FENCE, CNT_DMA_PACKETS, CNT_DMA_FAULTS.
        check64(5'd0, 64'h1122_3344_5566_7788);
        check64(5'd10, 64'd1);
        check64(5'd11, 64'd0);
        // (tools/run_tests.sh reads this line.)
        if (errors == 0) $display("dmu_smoke: 1 passed, 0 failed");
        else $display("dmu_smoke: 0 passed, 1 failed (%0d errors)", errors);
        $finish;
    end

endmodule

`resetall
