// gmc: testbench for the UART bridge, over real serial bytes (Icarus, -g2005).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Link 0: the iCEBreaker board top (gmc_top small configuration, VRAM in the
// behavioural SPRAM model) with a fast UART (4 clocks per bit). Checks the
// register and aperture commands, AXI error responses, the error replies of
// the framing layer, recovery, PING and the IRQ notification.
// Link 1: a bare gmc_uart_bridge whose DMA slave port is driven by this
// testbench as the AXI master that gmc_top's DMA engine will be. Checks the
// forwarding of read and write bursts, sequence errors, DMA_ABORT, and that
// an unanswered DMA read does not block commands.
// Prints PASS/FAIL per check and ends with "fw_bridge: N passed, M failed";
// any failure ends the run through $fatal (exit code 1).
module tb_fw_bridge;

    localparam integer CPB = 4;            // clocks per UART bit
    localparam integer TIMEOUT_LOG2 = 10;  // receive timeout inside a frame
    localparam integer BYTE_CYCLES = 10 * CPB;
    // Link 1's write replay window: 8 beats (block RAM branch), so that a
    // 12-beat burst fills it.
    localparam integer WIN1_LOG2 = 3;

    // Protocol constants (docs/uart-bridge.md), generated from spec/bridge.toml.
    `include "gmc_bridge.vh"
    localparam [7:0] SYNC = BRIDGE_SYNC;

    // gmc registers used here (docs/registers.md).
    localparam [15:0] R_ID = 16'h000, R_VERSION = 16'h004, R_SCRATCH = 16'h028,
                      R_UNMAPPED = 16'h030, R_IRQ_STATUS = 16'h040, R_IRQ_MASK = 16'h044,
                      R_IRQ_ACK = 16'h048, R_APF_STATUS = 16'h060, R_CPU_WINDOW = 16'h024;

    reg clk = 1'b0;
    always #5 clk = !clk;

    // Reset of the bare bridge (the board top has its own power-on reset).
    reg br_rst = 1'b1;
    initial begin
        repeat (20) @(posedge clk);
        br_rst = 1'b0;
    end

    integer passed = 0;
    integer failed = 0;

    task check;
        input        cond;
        input [8*96-1:0] name;
        begin
            if (cond) begin
                passed = passed + 1;
                $display("PASS: %0s", name);
            end else begin
                failed = failed + 1;
                $display("FAIL: %0s", name);
            end
        end
    endtask

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

    // ------------------------------------------------------------- DUTs

    reg  rxd0 = 1'b1, rxd1 = 1'b1;
    wire txd0, txd1;
    wire led_r_n, led_g_n;

    // GMC_GATE_SIM: u_board is the synthesised netlist, built with these
    // parameters already applied (see docs/boards.md).
`ifdef GMC_GATE_SIM
    gmc_board_icebreaker u_board (
`else
    gmc_board_icebreaker #(
        .CLKS_PER_BIT(CPB), .TIMEOUT_LOG2(TIMEOUT_LOG2), .POR_LOG2(4), .ACT_LOG2(4)
    ) u_board (
`endif
        .clk_12m(clk), .uart_rx(rxd0), .uart_tx(txd0), .led_r_n(led_r_n), .led_g_n(led_g_n)
    );

    // Link 1: bare bridge. Its register and aperture masters are not used.
    reg  [3:0]  dma_awid = 4'd0, dma_arid = 4'd0;
    reg  [47:0] dma_awaddr = 48'd0, dma_araddr = 48'd0;
    reg  [7:0]  dma_awlen = 8'd0, dma_arlen = 8'd0;
    reg         dma_awvalid = 1'b0, dma_arvalid = 1'b0, dma_wvalid = 1'b0, dma_wlast = 1'b0;
    reg  [63:0] dma_wdata = 64'd0;
    reg  [7:0]  dma_wstrb = 8'd0;
    reg         dma_irq = 1'b0;
    wire        dma_awready, dma_wready, dma_bvalid, dma_arready, dma_rvalid, dma_rlast;
    wire [3:0]  dma_bid, dma_rid;
    wire [1:0]  dma_bresp, dma_rresp;
    wire [63:0] dma_rdata;
    wire        br_activity;

    /* verilator lint_off PINCONNECTEMPTY */
    gmc_uart_bridge #(
        .CLKS_PER_BIT(CPB), .TIMEOUT_LOG2(TIMEOUT_LOG2), .M_ID_WIDTH(4), .S_ID_WIDTH(4),
        .WIN_LOG2(WIN1_LOG2)
    ) u_br (
        .clk(clk), .rst(br_rst), .rxd(rxd1), .txd(txd1),
        .m_axil_awaddr(), .m_axil_awprot(), .m_axil_awvalid(), .m_axil_awready(1'b0),
        .m_axil_wdata(), .m_axil_wstrb(), .m_axil_wvalid(), .m_axil_wready(1'b0),
        .m_axil_bresp(2'd0), .m_axil_bvalid(1'b0), .m_axil_bready(),
        .m_axil_araddr(), .m_axil_arprot(), .m_axil_arvalid(), .m_axil_arready(1'b0),
        .m_axil_rdata(32'd0), .m_axil_rresp(2'd0), .m_axil_rvalid(1'b0), .m_axil_rready(),
        .m_axi_awid(), .m_axi_awaddr(), .m_axi_awlen(), .m_axi_awsize(), .m_axi_awburst(),
        .m_axi_awlock(), .m_axi_awcache(), .m_axi_awprot(), .m_axi_awvalid(), .m_axi_awready(1'b0),
        .m_axi_wdata(), .m_axi_wstrb(), .m_axi_wlast(), .m_axi_wvalid(), .m_axi_wready(1'b0),
        .m_axi_bid(4'd0), .m_axi_bresp(2'd0), .m_axi_bvalid(1'b0), .m_axi_bready(),
        .m_axi_arid(), .m_axi_araddr(), .m_axi_arlen(), .m_axi_arsize(), .m_axi_arburst(),
        .m_axi_arlock(), .m_axi_arcache(), .m_axi_arprot(), .m_axi_arvalid(), .m_axi_arready(1'b0),
        .m_axi_rid(4'd0), .m_axi_rdata(64'd0), .m_axi_rresp(2'd0), .m_axi_rlast(1'b0),
        .m_axi_rvalid(1'b0), .m_axi_rready(),
        .s_axi_awid(dma_awid), .s_axi_awaddr(dma_awaddr), .s_axi_awlen(dma_awlen),
        .s_axi_awsize(3'd3), .s_axi_awburst(2'd1), .s_axi_awlock(1'b0), .s_axi_awcache(4'd3),
        .s_axi_awprot(3'd0), .s_axi_awvalid(dma_awvalid), .s_axi_awready(dma_awready),
        .s_axi_wdata(dma_wdata), .s_axi_wstrb(dma_wstrb), .s_axi_wlast(dma_wlast),
        .s_axi_wvalid(dma_wvalid), .s_axi_wready(dma_wready),
        .s_axi_bid(dma_bid), .s_axi_bresp(dma_bresp), .s_axi_bvalid(dma_bvalid), .s_axi_bready(1'b1),
        .s_axi_arid(dma_arid), .s_axi_araddr(dma_araddr), .s_axi_arlen(dma_arlen),
        .s_axi_arsize(3'd3), .s_axi_arburst(2'd1), .s_axi_arlock(1'b0), .s_axi_arcache(4'd3),
        .s_axi_arprot(3'd0), .s_axi_arvalid(dma_arvalid), .s_axi_arready(dma_arready),
        .s_axi_rid(dma_rid), .s_axi_rdata(dma_rdata), .s_axi_rresp(dma_rresp),
        .s_axi_rlast(dma_rlast), .s_axi_rvalid(dma_rvalid), .s_axi_rready(1'b1),
        .irq(dma_irq), .activity(br_activity)
    );
    /* verilator lint_on PINCONNECTEMPTY */

    // The DMA master drops ARVALID/AWVALID after the handshake.
    always @(posedge clk) begin
        if (dma_arvalid && dma_arready) dma_arvalid <= 1'b0;
        if (dma_awvalid && dma_awready) dma_awvalid <= 1'b0;
    end

    task wait_ar_done;
        begin
            while (dma_arvalid) @(posedge clk);
        end
    endtask

    task wait_aw_done;
        begin
            while (dma_awvalid) @(posedge clk);
        end
    endtask

    // R and B beats seen by the DMA master (RREADY and BREADY are held high).
    integer     r_count = 0, b_count = 0;
    reg  [63:0] r_data_log [0:15];
    reg  [1:0]  r_resp_log [0:15];
    reg         r_last_log [0:15];
    reg  [3:0]  r_id_log [0:15];
    reg  [1:0]  b_resp_last;
    reg  [3:0]  b_id_last;

    always @(posedge clk) begin
        if (dma_rvalid && r_count < 16) begin
            r_data_log[r_count] <= dma_rdata;
            r_resp_log[r_count] <= dma_rresp;
            r_last_log[r_count] <= dma_rlast;
            r_id_log[r_count] <= dma_rid;
            r_count <= r_count + 1;
        end
        if (dma_bvalid) begin
            b_resp_last <= dma_bresp;
            b_id_last <= dma_bid;
            b_count <= b_count + 1;
        end
    end

    // ------------------------------------------------ serial receivers

    // Bytes from each DUT's TX line, decoded at the middle of each bit.
    reg [7:0] rxq0 [0:4095];
    reg [7:0] rxq1 [0:4095];
    integer   rxq0_wp = 0, rxq1_wp = 0, rxq0_rp = 0, rxq1_rp = 0;
    integer   frame_errors = 0;

    always begin : dec0
        reg [7:0] b;
        integer   k;
        @(negedge txd0);
        repeat (CPB / 2) @(posedge clk);
        if (!txd0) begin
            for (k = 0; k < 8; k = k + 1) begin
                repeat (CPB) @(posedge clk);
                b[k] = txd0;
            end
            repeat (CPB) @(posedge clk);
            if (!txd0) frame_errors = frame_errors + 1;
            rxq0[rxq0_wp % 4096] = b;
            rxq0_wp = rxq0_wp + 1;
        end
    end

    always begin : dec1
        reg [7:0] b;
        integer   k;
        @(negedge txd1);
        repeat (CPB / 2) @(posedge clk);
        if (!txd1) begin
            for (k = 0; k < 8; k = k + 1) begin
                repeat (CPB) @(posedge clk);
                b[k] = txd1;
            end
            repeat (CPB) @(posedge clk);
            if (!txd1) frame_errors = frame_errors + 1;
            rxq1[rxq1_wp % 4096] = b;
            rxq1_wp = rxq1_wp + 1;
        end
    end

    // ------------------------------------------------------- host side

    // Outgoing payload and the last packet received.
    reg [7:0] tx_pl [0:15];
    reg [7:0] rx_pl [0:15];
    reg [7:0] rx_op, rx_len;
    reg       rx_ok;
    integer   irq_pkts = 0;
    reg       irq_level_seen = 1'b0;

    task send_byte;
        input integer link;
        input [7:0]   b;
        integer       k;
        begin
            if (link == 0) rxd0 = 1'b0; else rxd1 = 1'b0;
            repeat (CPB) @(posedge clk);
            for (k = 0; k < 8; k = k + 1) begin
                if (link == 0) rxd0 = b[k]; else rxd1 = b[k];
                repeat (CPB) @(posedge clk);
            end
            if (link == 0) rxd0 = 1'b1; else rxd1 = 1'b1;
            repeat (CPB) @(posedge clk);
        end
    endtask

    // SYNC, op, len, tx_pl[0..len-1], CRC (xor crc_flip, to corrupt it).
    task send_pkt_x;
        input integer link;
        input [7:0]   op;
        input [7:0]   len;
        input [7:0]   crc_flip;
        reg   [7:0]   c;
        integer       k;
        begin
            send_byte(link, SYNC);
            send_byte(link, op);
            send_byte(link, len);
            c = crc8(crc8(8'd0, op), len);
            for (k = 0; k < len; k = k + 1) begin
                send_byte(link, tx_pl[k]);
                c = crc8(c, tx_pl[k]);
            end
            send_byte(link, c ^ crc_flip);
        end
    endtask

    task send_pkt;
        input integer link;
        input [7:0]   op;
        input [7:0]   len;
        begin
            send_pkt_x(link, op, len, 8'd0);
        end
    endtask

    task get_byte;
        input  integer link;
        output [7:0]   b;
        output         ok;
        integer        waited;
        begin
            ok = 1'b0;
            b = 8'd0;
            waited = 0;
            while (!ok && waited < 200 * BYTE_CYCLES) begin
                if (link == 0 && rxq0_rp < rxq0_wp) begin
                    b = rxq0[rxq0_rp % 4096];
                    rxq0_rp = rxq0_rp + 1;
                    ok = 1'b1;
                end else if (link == 1 && rxq1_rp < rxq1_wp) begin
                    b = rxq1[rxq1_rp % 4096];
                    rxq1_rp = rxq1_rp + 1;
                    ok = 1'b1;
                end else begin
                    @(posedge clk);
                    waited = waited + 1;
                end
            end
        end
    endtask

    // Next packet from a link; rx_ok is 0 on a timeout or a CRC mismatch.
    task recv_pkt;
        input integer link;
        reg   [7:0]   b, c;
        reg           ok;
        integer       k;
        begin
            rx_ok = 1'b0;
            rx_op = 8'd0;
            rx_len = 8'd0;
            b = 8'd0;
            ok = 1'b1;
            while (ok && b != SYNC)
                get_byte(link, b, ok);
            if (ok) get_byte(link, rx_op, ok);
            if (ok) get_byte(link, rx_len, ok);
            c = crc8(crc8(8'd0, rx_op), rx_len);
            for (k = 0; ok && k < rx_len && k < 16; k = k + 1) begin
                get_byte(link, rx_pl[k], ok);
                c = crc8(c, rx_pl[k]);
            end
            if (ok) get_byte(link, b, ok);
            rx_ok = ok && (crc8(c, b) == 8'd0) && (rx_len <= 16);
        end
    endtask

    // Next packet that is not an IRQ notification (those are recorded).
    task recv_reply;
        input integer link;
        begin
            recv_pkt(link);
            while (rx_ok && rx_op == OP_IRQ) begin
                irq_pkts = irq_pkts + 1;
                irq_level_seen = rx_pl[0][0];
                recv_pkt(link);
            end
        end
    endtask

    reg [1:0]  resp;
    reg [31:0] rdata;
    reg [63:0] rdata64;
    // Protocol 2: every command carries a SEQ (its last byte), echoed as the
    // last byte of its reply; the tests below step it per command.
    reg [7:0]  seq = 8'd0;
    reg        seq_ok;
    // The TAG of the read burst in progress on link 1 (from DMA_RD_REQ).
    reg [7:0]  rd_tag = 8'd0;

    task reg_read;
        input [15:0] addr;
        begin
            seq = seq + 8'd1;
            tx_pl[0] = addr[7:0];
            tx_pl[1] = addr[15:8];
            tx_pl[2] = seq;
            send_pkt(0, OP_REG_RD, 8'd3);
            recv_reply(0);
            resp = 2'bxx;
            rdata = 32'hxxxxxxxx;
            if (rx_ok && rx_op == (OP_REG_RD | 8'h80) && rx_len == 8'd6 && rx_pl[5] == seq) begin
                resp = rx_pl[0][1:0];
                rdata = {rx_pl[4], rx_pl[3], rx_pl[2], rx_pl[1]};
            end
        end
    endtask

    task reg_write;
        input [15:0] addr;
        input [31:0] data;
        input [3:0]  strb;
        begin
            seq = seq + 8'd1;
            reg_write_seq(addr, data, strb);
        end
    endtask

    // REG_WR with the current SEQ (a retry when it was sent before).
    task reg_write_seq;
        input [15:0] addr;
        input [31:0] data;
        input [3:0]  strb;
        begin
            tx_pl[0] = addr[7:0];
            tx_pl[1] = addr[15:8];
            tx_pl[2] = data[7:0];
            tx_pl[3] = data[15:8];
            tx_pl[4] = data[23:16];
            tx_pl[5] = data[31:24];
            tx_pl[6] = {4'd0, strb};
            tx_pl[7] = seq;
            send_pkt(0, OP_REG_WR, 8'd8);
            recv_reply(0);
            resp = 2'bxx;
            if (rx_ok && rx_op == (OP_REG_WR | 8'h80) && rx_len == 8'd2 && rx_pl[1] == seq)
                resp = rx_pl[0][1:0];
            else
                $display("  reg_write %h: got ok=%b op=%h len=%0d pl0=%h", addr, rx_ok, rx_op, rx_len, rx_pl[0]);
        end
    endtask

    task ap_write;
        input [31:0] addr;
        input [63:0] data;
        input [7:0]  strb;
        integer      k;
        begin
            seq = seq + 8'd1;
            for (k = 0; k < 4; k = k + 1) tx_pl[k] = addr[8*k +: 8];
            tx_pl[4] = strb;
            for (k = 0; k < 8; k = k + 1) tx_pl[5 + k] = data[8*k +: 8];
            tx_pl[13] = seq;
            send_pkt(0, OP_AP_WR, 8'd14);
            recv_reply(0);
            resp = 2'bxx;
            if (rx_ok && rx_op == (OP_AP_WR | 8'h80) && rx_len == 8'd2 && rx_pl[1] == seq)
                resp = rx_pl[0][1:0];
        end
    endtask

    task ap_read;
        input [31:0] addr;
        integer      k;
        begin
            seq = seq + 8'd1;
            for (k = 0; k < 4; k = k + 1) tx_pl[k] = addr[8*k +: 8];
            tx_pl[4] = seq;
            send_pkt(0, OP_AP_RD, 8'd5);
            recv_reply(0);
            resp = 2'bxx;
            rdata64 = {64{1'bx}};
            if (rx_ok && rx_op == (OP_AP_RD | 8'h80) && rx_len == 8'd10 && rx_pl[9] == seq) begin
                resp = rx_pl[0][1:0];
                for (k = 0; k < 8; k = k + 1) rdata64[8*k +: 8] = rx_pl[1 + k];
            end
        end
    endtask

    task ping;
        input integer link;
        input [7:0]   nonce;
        begin
            tx_pl[0] = nonce;
            send_pkt(link, OP_PING, 8'd1);
            recv_reply(link);
        end
    endtask

    task dma_rd_data;
        input [7:0]  beat;
        input [1:0]  rresp;
        input [63:0] data;
        integer      k;
        begin
            tx_pl[0] = beat;
            tx_pl[1] = {6'd0, rresp};
            for (k = 0; k < 8; k = k + 1) tx_pl[2 + k] = data[8*k +: 8];
            tx_pl[10] = rd_tag;
            send_pkt(1, OP_DMA_RD_DATA, 8'd11);
        end
    endtask

    // DMA_WR_ACK: every beat below `beat` received; flags; write TAG.
    task wr_ack;
        input [7:0] beat;
        input [7:0] flags;
        input [7:0] tag;
        begin
            tx_pl[0] = beat;
            tx_pl[1] = flags;
            tx_pl[2] = tag;
            send_pkt(1, OP_DMA_WR_ACK, 8'd3);
        end
    endtask

    // Wait until n IRQ notifications have arrived in total on link 0 (they
    // may come before or after the reply of the command that caused them).
    task wait_irq_pkts;
        input integer n;
        begin
            rx_ok = 1'b1;
            while (rx_ok && irq_pkts < n) begin
                recv_pkt(0);
                if (rx_ok && rx_op == OP_IRQ) begin
                    irq_pkts = irq_pkts + 1;
                    irq_level_seen = rx_pl[0][0];
                end else begin
                    rx_ok = 1'b0;
                end
            end
        end
    endtask

    // ------------------------------------------------------------ tests

    reg     okv;
    integer wbeat, rbeat, wr_data_pkts, b_base, w_taken;
    reg [7:0] req_copy [0:10];
    reg [7:0] wr_tag1;

    initial begin
        // Power-on reset of the board top (2^4 cycles) and a quiet line.
        repeat (100) @(posedge clk);

        // ---------------------------------------------------- registers
        reg_read(R_ID);
        check(resp == 2'd0 && rdata == 32'h474D4300, "REG_RD ID = 0x474D4300, OKAY");

        reg_write(R_SCRATCH, 32'hDEADBEEF, 4'hF);
        okv = (resp == 2'd0);
        reg_read(R_SCRATCH);
        check(okv && resp == 2'd0 && rdata == 32'hDEADBEEF, "SCRATCH write + read back");

        reg_write(R_SCRATCH, 32'h00AA0055, 4'b0101);
        reg_read(R_SCRATCH);
        check(resp == 2'd0 && rdata == 32'hDEAABE55, "SCRATCH byte strobes");

        reg_write(R_VERSION, 32'h12345678, 4'hF);
        check(resp == 2'd2, "write to read-only VERSION answers SLVERR (2)");

        reg_read(R_UNMAPPED);
        check(resp == 2'd3, "read of unmapped offset answers DECERR (3)");

        reg_write(R_UNMAPPED, 32'h1, 4'hF);
        check(resp == 2'd3, "write to unmapped offset answers DECERR (3)");

        reg_read(R_CPU_WINDOW);
        check(resp == 2'd0 && rdata == 32'd65536, "CPU_WINDOW_SIZE = 64 KiB (board configuration)");

        // ----------------------------------------------------- aperture
        ap_write(32'h100, 64'h1122334455667788, 8'hFF);
        okv = (resp == 2'd0);
        ap_write(32'h100, 64'hAABBCCDDEEFF0011, 8'h0F);
        okv = okv && (resp == 2'd0);
        ap_read(32'h100);
        check(okv && resp == 2'd0 && rdata64 == 64'h11223344EEFF0011,
              "aperture beat write + strobed write + read");

        ap_write(32'h108, 64'd0, 8'hFF);
        ap_write(32'h108, 64'h0123456789ABCDEF, 8'b1010_0101);
        ap_read(32'h108);
        check(resp == 2'd0 && rdata64 == 64'h0100_4500_00AB_00EF, "aperture sparse strobes");

        // Outside the 64 KiB window: DECERR, a logged fault and the IRQ.
        reg_write(R_IRQ_MASK, 32'h1, 4'hF);
        ap_read(32'h0001_0000);
        check(resp == 2'd3, "aperture read outside the window answers DECERR");
        wait_irq_pkts(1);
        check(irq_pkts == 1 && irq_level_seen && !led_r_n, "IRQ rise sent upstream (IRQ packet, level 1)");
        reg_read(R_APF_STATUS);
        check(resp == 2'd0 && rdata[0] == 1'b1 && rdata[5:4] == 2'd1, "APF_STATUS logs a WINDOW fault");
        reg_write(R_IRQ_ACK, 32'h1, 4'hF);
        okv = (resp == 2'd0);
        wait_irq_pkts(2);
        check(okv && irq_pkts == 2 && !irq_level_seen && led_r_n,
              "IRQ fall after IRQ_ACK sent upstream (level 0)");

        // ------------------------------------------------ framing errors
        tx_pl[0] = 8'h00;
        tx_pl[1] = 8'h00;
        tx_pl[2] = 8'h00;
        send_pkt_x(0, OP_REG_RD, 8'd3, 8'h5A);
        recv_reply(0);
        check(rx_ok && rx_op == OP_ERR && rx_len == 8'd7 && rx_pl[0] == E_CRC && rx_pl[1] == OP_REG_RD,
              "bad checksum answers ERR(CRC) naming the opcode");

        reg_read(R_ID);
        check(resp == 2'd0 && rdata == 32'h474D4300, "normal operation after a bad checksum");

        send_pkt(0, 8'h3C, 8'd0);
        recv_reply(0);
        check(rx_ok && rx_op == OP_ERR && rx_pl[0] == E_OPCODE && rx_pl[1] == 8'h3C,
              "unknown opcode answers ERR(OPCODE)");

        tx_pl[0] = 8'h00;
        send_pkt(0, OP_REG_RD, 8'd1);
        recv_reply(0);
        check(rx_ok && rx_op == OP_ERR && rx_pl[0] == E_LEN, "wrong length answers ERR(LEN)");

        send_byte(0, SYNC);
        send_byte(0, OP_REG_RD);
        send_byte(0, 8'd200);
        recv_reply(0);
        check(rx_ok && rx_op == OP_ERR && rx_pl[0] == E_LEN, "oversized LEN answers ERR(LEN) at once");

        // A truncated packet: the receiver times out instead of hanging.
        send_byte(0, SYNC);
        send_byte(0, OP_REG_WR);
        send_byte(0, 8'd8);
        send_byte(0, 8'h28);
        recv_reply(0);
        check(rx_ok && rx_op == OP_ERR && rx_pl[0] == E_TIMEOUT && rx_pl[1] == OP_REG_WR,
              "truncated packet answers ERR(TIMEOUT)");

        // Line noise before a packet is skipped.
        send_byte(0, 8'h00);
        send_byte(0, 8'hFF);
        reg_read(R_SCRATCH);
        check(resp == 2'd0 && rdata == 32'hDEAABE55, "normal operation after errors and line noise");

        // A second command before the first one's reply: ERR(BUSY), no stall.
        tx_pl[0] = R_ID[7:0];
        tx_pl[1] = R_ID[15:8];
        tx_pl[2] = 8'hE7;
        send_pkt(0, OP_REG_RD, 8'd3);
        tx_pl[0] = 8'h42;
        send_pkt(0, OP_PING, 8'd1);
        recv_reply(0);
        okv = rx_ok && rx_op == (OP_REG_RD | 8'h80) && {rx_pl[4], rx_pl[3], rx_pl[2], rx_pl[1]} == 32'h474D4300;
        recv_reply(0);
        check(okv && rx_ok && rx_op == OP_ERR && rx_pl[0] == E_BUSY && rx_pl[1] == OP_PING,
              "command during a pending reply answers ERR(BUSY), first reply intact");

        ping(0, 8'h5C);
        check(rx_ok && rx_op == (OP_PING | 8'h80) && rx_len == 8'd5 && rx_pl[0] == 8'h5C
              && rx_pl[1] == 8'h03 && rx_pl[2] == 8'h00 && rx_pl[3] == 8'hE7 && rx_pl[4] == 8'd6,
              "PING echoes the nonce, version 3, idle status, the last SEQ answered, window 2^6");

        // ------------------------------------------ exactly once (SEQ)
        // A REG_WR repeated with its SEQ (its reply was lost) is answered
        // again and not executed again: here the repeat carries other data,
        // and SCRATCH keeps the first write's.
        reg_write(R_SCRATCH, 32'h0000_1111, 4'hF);
        okv = (resp == 2'd0);
        reg_write_seq(R_SCRATCH, 32'h0000_2222, 4'hF);
        okv = okv && (resp == 2'd0);
        reg_read(R_SCRATCH);
        check(okv && resp == 2'd0 && rdata == 32'h0000_1111, "REG_WR repeated with its SEQ: replayed OKAY, not executed");
        reg_write(R_VERSION, 32'h1, 4'hF);
        okv = (resp == 2'd2);
        reg_write_seq(R_VERSION, 32'h1, 4'hF);
        check(okv && resp == 2'd2, "a repeated REG_WR replays its SLVERR");
        reg_write(R_SCRATCH, 32'h0000_3333, 4'hF);
        reg_read(R_SCRATCH);
        check(resp == 2'd0 && rdata == 32'h0000_3333, "the next SEQ executes");
        // AP_WR repeated with its SEQ: not executed again.
        ap_write(32'h200, 64'h0101_0101_0101_0101, 8'hFF);
        okv = (resp == 2'd0);
        for (wbeat = 0; wbeat < 8; wbeat = wbeat + 1) tx_pl[5 + wbeat] = 8'h77;
        send_pkt(0, OP_AP_WR, 8'd14);
        recv_reply(0);
        okv = okv && rx_ok && rx_op == (OP_AP_WR | 8'h80) && rx_pl[0] == 8'd0 && rx_pl[1] == seq;
        ap_read(32'h200);
        check(okv && resp == 2'd0 && rdata64 == 64'h0101_0101_0101_0101, "AP_WR repeated with its SEQ: not executed");

        // ------------------------------------------------ DMA forwarding
        // Read burst: 2 beats from bus address 0x1234_5678_9AB0.
        dma_arid = 4'd5;
        dma_araddr = 48'h1234_5678_9AB0;
        dma_arlen = 8'd1;
        dma_arvalid = 1'b1;
        recv_pkt(1);
        rd_tag = rx_pl[10];
        check(rx_ok && rx_op == OP_DMA_RD_REQ && rx_len == 8'd11 && rx_pl[0] == 8'd5 && rx_pl[10] == 8'd1
              && {rx_pl[6], rx_pl[5], rx_pl[4], rx_pl[3], rx_pl[2], rx_pl[1]} == 48'h1234_5678_9AB0
              && rx_pl[7] == 8'd1 && rx_pl[8] == 8'd3 && rx_pl[9] == 8'd1,
              "DMA read burst forwarded as DMA_RD_REQ (id, addr, len, size, burst)");
        wait_ar_done;
        for (wbeat = 0; wbeat < 11; wbeat = wbeat + 1) req_copy[wbeat] = rx_pl[wbeat];

        // A DMA_RD_REQ damaged on the way up: the host asks for it again
        // and gets the same bytes (the bridge latched the AR fields).
        tx_pl[0] = C_DIR_READ;
        send_pkt(1, OP_DMA_REQ_AGAIN, 8'd1);
        recv_pkt(1);
        okv = rx_ok && rx_op == OP_DMA_RD_REQ && rx_len == 8'd11;
        for (wbeat = 0; wbeat < 11; wbeat = wbeat + 1) okv = okv && rx_pl[wbeat] == req_copy[wbeat];
        check(okv, "DMA_REQ_AGAIN(read) sends the burst's DMA_RD_REQ again, byte for byte");

        rd_tag = 8'd0;
        dma_rd_data(8'd0, 2'd0, 64'hBAD1BAD1BAD1BAD1);
        recv_reply(1);
        check(rx_ok && rx_op == OP_ERR && rx_pl[0] == E_STATE && rx_pl[1] == OP_DMA_RD_DATA && rx_pl[4] == 8'd1,
              "DMA_RD_DATA with another burst's TAG answers ERR(STATE), TAG in byte 4");
        rd_tag = 8'd1;
        dma_rd_data(8'd0, 2'd0, 64'hA0A1A2A3A4A5A6A7);
        dma_rd_data(8'd2, 2'd0, 64'hBAD0BAD0BAD0BAD0);
        recv_reply(1);
        check(rx_ok && rx_op == OP_ERR && rx_pl[0] == E_SEQ && rx_pl[1] == OP_DMA_RD_DATA
              && rx_pl[2] == 8'd1, "out-of-order DMA_RD_DATA answers ERR(SEQ) with the expected beat");
        dma_rd_data(8'd1, 2'd0, 64'hB0B1B2B3B4B5B6B7);
        repeat (20) @(posedge clk);
        check(r_count == 2 && r_data_log[0] == 64'hA0A1A2A3A4A5A6A7 && !r_last_log[0]
              && r_data_log[1] == 64'hB0B1B2B3B4B5B6B7 && r_last_log[1] && r_id_log[1] == 4'd5
              && r_resp_log[0] == 2'd0, "DMA read data delivered on R (data, RLAST, RID)");

        // Write burst: 2 beats.
        dma_awid = 4'd3;
        dma_awaddr = 48'h0000_ABCD_0000;
        dma_awlen = 8'd1;
        dma_awvalid = 1'b1;
        recv_pkt(1);
        check(rx_ok && rx_op == OP_DMA_WR_REQ && rx_pl[0] == 8'd3
              && {rx_pl[6], rx_pl[5], rx_pl[4], rx_pl[3], rx_pl[2], rx_pl[1]} == 48'h0000_ABCD_0000
              && rx_pl[7] == 8'd1 && rx_len == 8'd11 && rx_pl[10] == 8'd1, "DMA write burst forwarded as DMA_WR_REQ (TAG 1)");
        wait_aw_done;
        fork
            begin
                dma_wdata = 64'h1111_2222_3333_4444;
                dma_wstrb = 8'hFF;
                dma_wvalid = 1'b1;
                @(posedge clk);
                while (!dma_wready) @(posedge clk);
                dma_wdata = 64'h5555_6666_7777_8888;
                dma_wstrb = 8'h0F;
                dma_wlast = 1'b1;
                @(posedge clk);
                while (!dma_wready) @(posedge clk);
                dma_wvalid = 1'b0;
                dma_wlast = 1'b0;
            end
            begin
                recv_pkt(1);
                okv = rx_ok && rx_op == OP_DMA_WR_DATA && rx_len == 8'd11 && rx_pl[0] == 8'd0 && rx_pl[1] == 8'hFF
                      && rx_pl[2] == 8'h44 && rx_pl[9] == 8'h11 && rx_pl[10] == 8'd1;
                recv_pkt(1);
                check(okv && rx_ok && rx_op == OP_DMA_WR_DATA && rx_pl[0] == 8'd1 && rx_pl[1] == 8'h0F
                      && rx_pl[2] == 8'h88 && rx_pl[9] == 8'h55 && rx_pl[10] == 8'd1,
                      "DMA write beats forwarded as DMA_WR_DATA (beat, strobe, data, TAG 1)");
            end
        join

        // The DMA_WR_REQ again on request, byte for byte.
        tx_pl[0] = C_DIR_WRITE;
        send_pkt(1, OP_DMA_REQ_AGAIN, 8'd1);
        recv_pkt(1);
        check(rx_ok && rx_op == OP_DMA_WR_REQ && rx_len == 8'd11 && rx_pl[0] == 8'd3
              && {rx_pl[6], rx_pl[5], rx_pl[4], rx_pl[3], rx_pl[2], rx_pl[1]} == 48'h0000_ABCD_0000
              && rx_pl[7] == 8'd1 && rx_pl[8] == 8'd3 && rx_pl[9] == 8'd1 && rx_pl[10] == 8'd1,
              "DMA_REQ_AGAIN(write) sends the burst's DMA_WR_REQ again");
        // Both beats lost on the way up: resend from beat 0, from the window.
        wr_ack(8'd0, C_WR_ACK_RESEND, 8'd1);
        recv_pkt(1);
        okv = rx_ok && rx_op == OP_DMA_WR_DATA && rx_pl[0] == 8'd0 && rx_pl[1] == 8'hFF
              && {rx_pl[9], rx_pl[8], rx_pl[7], rx_pl[6], rx_pl[5], rx_pl[4], rx_pl[3], rx_pl[2]} == 64'h1111_2222_3333_4444
              && rx_pl[10] == 8'd1;
        recv_pkt(1);
        check(okv && rx_ok && rx_op == OP_DMA_WR_DATA && rx_pl[0] == 8'd1 && rx_pl[1] == 8'h0F
              && {rx_pl[9], rx_pl[8], rx_pl[7], rx_pl[6], rx_pl[5], rx_pl[4], rx_pl[3], rx_pl[2]} == 64'h5555_6666_7777_8888,
              "DMA_WR_ACK(0, RESEND) sends beats 0 and 1 again from the replay window");
        // A plain acknowledgement sends nothing: the next packet is PING's reply.
        wr_ack(8'd1, 8'd0, 8'd1);
        ping(1, 8'h66);
        check(rx_ok && rx_op == (OP_PING | 8'h80) && rx_pl[0] == 8'h66 && rx_pl[2] == 8'h04 && rx_pl[4] == 8'd3,
              "DMA_WR_ACK without RESEND sends nothing; PING: DMA_WR busy, window 2^3");
        wr_ack(8'd0, 8'd0, 8'd1);
        recv_pkt(1);
        check(rx_ok && rx_op == OP_ERR && rx_pl[0] == E_SEQ && rx_pl[1] == OP_DMA_WR_ACK && rx_pl[5] == 8'd1
              && rx_pl[6] == 8'd1, "DMA_WR_ACK below the last acknowledgement answers ERR(SEQ)");
        wr_ack(8'd3, 8'd0, 8'd1);
        recv_pkt(1);
        check(rx_ok && rx_op == OP_ERR && rx_pl[0] == E_SEQ && rx_pl[1] == OP_DMA_WR_ACK,
              "DMA_WR_ACK past the beats taken answers ERR(SEQ)");
        wr_ack(8'd2, 8'd0, 8'd2);
        recv_pkt(1);
        check(rx_ok && rx_op == OP_ERR && rx_pl[0] == E_STATE && rx_pl[1] == OP_DMA_WR_ACK && rx_pl[6] == 8'd2,
              "DMA_WR_ACK with another burst's TAG answers ERR(STATE)");
        tx_pl[0] = 8'd0;
        tx_pl[1] = 8'd0;
        send_pkt(1, OP_DMA_WR_RESP, 8'd2);
        recv_reply(1);
        check(rx_ok && rx_op == OP_ERR && rx_len == 8'd7 && rx_pl[0] == E_STATE && rx_pl[1] == OP_DMA_WR_RESP
              && rx_pl[5] == 8'd1 && rx_pl[6] == 8'd0,
              "DMA_WR_RESP with another burst's TAG answers ERR(STATE): bridge TAG in byte 5, refused TAG in byte 6");
        tx_pl[1] = 8'd1;
        send_pkt(1, OP_DMA_WR_RESP, 8'd2);
        repeat (20) @(posedge clk);
        check(b_count == 1 && b_resp_last == 2'd0 && b_id_last == 4'd3, "DMA_WR_RESP delivered on B (BID, OKAY)");

        tx_pl[0] = 8'd0;
        send_pkt(1, OP_DMA_WR_RESP, 8'd2);
        recv_reply(1);
        check(rx_ok && rx_op == OP_ERR && rx_pl[0] == E_STATE && b_count == 1,
              "DMA_WR_RESP sent again after its burst was answered: ERR(STATE), B not given twice");

        // No burst in flight: DMA_REQ_AGAIN and DMA_WR_ACK answer ERR(STATE)
        // (byte 6: the direction asked for, or the TAG).
        tx_pl[0] = C_DIR_WRITE;
        send_pkt(1, OP_DMA_REQ_AGAIN, 8'd1);
        recv_pkt(1);
        okv = rx_ok && rx_op == OP_ERR && rx_pl[0] == E_STATE && rx_pl[1] == OP_DMA_REQ_AGAIN && rx_pl[6] == 8'd1;
        tx_pl[0] = C_DIR_READ;
        send_pkt(1, OP_DMA_REQ_AGAIN, 8'd1);
        recv_pkt(1);
        okv = okv && rx_ok && rx_op == OP_ERR && rx_pl[0] == E_STATE && rx_pl[1] == OP_DMA_REQ_AGAIN
              && rx_pl[6] == 8'd0;
        tx_pl[0] = 8'd2;
        send_pkt(1, OP_DMA_REQ_AGAIN, 8'd1);
        recv_pkt(1);
        check(okv && rx_ok && rx_op == OP_ERR && rx_pl[0] == E_STATE && rx_pl[6] == 8'd2,
              "DMA_REQ_AGAIN with no burst in flight (or a bad direction) answers ERR(STATE)");
        wr_ack(8'd0, 8'd0, 8'd1);
        recv_pkt(1);
        check(rx_ok && rx_op == OP_ERR && rx_pl[0] == E_STATE && rx_pl[1] == OP_DMA_WR_ACK,
              "DMA_WR_ACK with no write burst answers ERR(STATE)");

        // A read the host never answers does not block commands; DMA_ABORT ends it.
        dma_arid = 4'd7;
        dma_arlen = 8'd3;
        dma_arvalid = 1'b1;
        recv_pkt(1);
        okv = rx_ok && rx_op == OP_DMA_RD_REQ && rx_pl[7] == 8'd3 && rx_pl[10] == 8'd2;
        rd_tag = rx_pl[10];
        wait_ar_done;
        dma_rd_data(8'd0, 2'd0, 64'hC0C1C2C3C4C5C6C7);
        ping(1, 8'h77);
        check(okv && rx_ok && rx_op == (OP_PING | 8'h80) && rx_pl[0] == 8'h77 && rx_pl[2][1],
              "commands still served while a DMA read waits for the host");
        tx_pl[0] = 8'h31;
        send_pkt(1, OP_DMA_ABORT, 8'd1);
        recv_reply(1);
        okv = rx_ok && rx_op == (OP_DMA_ABORT | 8'h80);
        repeat (20) @(posedge clk);
        check(okv && r_count == 6 && r_data_log[2] == 64'hC0C1C2C3C4C5C6C7 && r_resp_log[2] == 2'd0
              && r_resp_log[3] == 2'd2 && r_resp_log[5] == 2'd2 && !r_last_log[4] && r_last_log[5]
              && r_id_log[5] == 4'd7, "DMA_ABORT completes the read burst with SLVERR beats");

        ping(1, 8'h01);
        check(rx_ok && rx_op == (OP_PING | 8'h80) && rx_pl[2] == 8'h00, "DMA engines idle after the abort");

        // A write burst the host stops answering: DMA_ABORT drains W, B = SLVERR.
        dma_awid = 4'd9;
        dma_awlen = 8'd2;
        dma_awvalid = 1'b1;
        fork
            begin
                dma_wvalid = 1'b1;
                dma_wstrb = 8'hFF;
                for (wbeat = 0; wbeat < 3; wbeat = wbeat + 1) begin
                    dma_wdata = {8{wbeat[7:0]}};
                    dma_wlast = (wbeat == 2);
                    @(posedge clk);
                    while (!dma_wready) @(posedge clk);
                end
                dma_wvalid = 1'b0;
                dma_wlast = 1'b0;
            end
            begin
                recv_pkt(1);
                okv = rx_ok && rx_op == OP_DMA_WR_REQ && rx_pl[0] == 8'd9 && rx_pl[7] == 8'd2;
                recv_pkt(1);
                okv = okv && rx_ok && rx_op == OP_DMA_WR_DATA && rx_pl[0] == 8'd0;
                tx_pl[0] = 8'h32;
                send_pkt(1, OP_DMA_ABORT, 8'd1);
                wr_data_pkts = 1;
                recv_reply(1);
                while (rx_ok && rx_op == OP_DMA_WR_DATA) begin
                    wr_data_pkts = wr_data_pkts + 1;
                    recv_reply(1);
                end
                okv = okv && rx_ok && rx_op == (OP_DMA_ABORT | 8'h80);
            end
        join
        repeat (20) @(posedge clk);
        check(okv && wr_data_pkts < 3 && b_count == 2 && b_resp_last == 2'd2 && b_id_last == 4'd9
              && !dma_wvalid, "DMA_ABORT drains an unanswered write burst, B = SLVERR");

        // A burst longer than the window: 12 beats, window 8. W stalls
        // after 8 beats until the host acknowledges; beats 8-11 reuse the
        // first slots.
        b_base = b_count;
        w_taken = 0;
        dma_awid = 4'd6;
        dma_awaddr = 48'h0000_0001_0000;
        dma_awlen = 8'd11;
        dma_awvalid = 1'b1;
        fork
            begin
                // W changes at the falling edge; WREADY (combinational in
                // the bridge) is looked at there, before the rising edge
                // that takes the beat.
                for (wbeat = 0; wbeat < 12; wbeat = wbeat + 1) begin
                    @(negedge clk);
                    dma_wvalid = 1'b1;
                    dma_wdata = {8'hC0 | wbeat[7:0], 48'h0, 8'h10 + wbeat[7:0]};
                    dma_wstrb = 8'hF0 | wbeat[7:0];
                    dma_wlast = (wbeat == 11);
                    while (!dma_wready) @(negedge clk);
                    w_taken = w_taken + 1;
                end
                @(negedge clk);
                dma_wvalid = 1'b0;
                dma_wlast = 1'b0;
            end
            begin
                recv_pkt(1);
                okv = rx_ok && rx_op == OP_DMA_WR_REQ && rx_pl[0] == 8'd6 && rx_pl[7] == 8'd11;
                wr_tag1 = rx_pl[10];
                for (rbeat = 0; rbeat < 8; rbeat = rbeat + 1) begin
                    recv_pkt(1);
                    okv = okv && rx_ok && rx_op == OP_DMA_WR_DATA && rx_pl[0] == rbeat[7:0]
                          && rx_pl[1] == (8'hF0 | rbeat[7:0]) && rx_pl[2] == 8'h10 + rbeat[7:0]
                          && rx_pl[9] == (8'hC0 | rbeat[7:0]) && rx_pl[10] == wr_tag1;
                end
                // Window full: nothing more is sent and W waits.
                repeat (30 * BYTE_CYCLES) @(posedge clk);
                check(okv && w_taken == 8 && rxq1_rp == rxq1_wp,
                      "window full (8 beats): 8 DMA_WR_DATA sent, W stalled, nothing more sent");
                tx_pl[0] = 8'd0;
                tx_pl[1] = wr_tag1;
                send_pkt(1, OP_DMA_WR_RESP, 8'd2);
                recv_pkt(1);
                check(rx_ok && rx_op == OP_ERR && rx_pl[0] == E_STATE && rx_pl[1] == OP_DMA_WR_RESP
                      && b_count == b_base, "DMA_WR_RESP before every beat was taken answers ERR(STATE)");
                wr_ack(8'd4, 8'd0, wr_tag1);
                okv = 1'b1;
                for (rbeat = 8; rbeat < 12; rbeat = rbeat + 1) begin
                    recv_pkt(1);
                    okv = okv && rx_ok && rx_op == OP_DMA_WR_DATA && rx_pl[0] == rbeat[7:0]
                          && rx_pl[1] == (8'hF0 | rbeat[7:0]) && rx_pl[2] == 8'h10 + rbeat[7:0]
                          && rx_pl[9] == (8'hC0 | rbeat[7:0]);
                end
                check(okv && w_taken == 12, "DMA_WR_ACK(4) frees the window: beats 8-11 taken and sent");
                wr_ack(8'd10, C_WR_ACK_RESEND, wr_tag1);
                recv_pkt(1);
                okv = rx_ok && rx_op == OP_DMA_WR_DATA && rx_pl[0] == 8'd10 && rx_pl[1] == 8'hFA
                      && rx_pl[2] == 8'h1A && rx_pl[9] == 8'hCA;
                recv_pkt(1);
                check(okv && rx_ok && rx_op == OP_DMA_WR_DATA && rx_pl[0] == 8'd11 && rx_pl[1] == 8'hFB
                      && rx_pl[2] == 8'h1B && rx_pl[9] == 8'hCB, "resend from beat 10 after the window wrapped");
                tx_pl[0] = 8'd0;
                tx_pl[1] = wr_tag1;
                send_pkt(1, OP_DMA_WR_RESP, 8'd2);
                repeat (20) @(posedge clk);
                check(b_count == b_base + 1 && b_resp_last == 2'd0 && b_id_last == 4'd6,
                      "12-beat burst through an 8-beat window answered on B (OKAY)");
            end
        join

        // IRQ on link 1 as well (the bare bridge).
        dma_irq = 1'b1;
        recv_pkt(1);
        check(rx_ok && rx_op == OP_IRQ && rx_pl[0] == 8'd1, "IRQ level change notified");

        check(frame_errors == 0, "no framing errors on the upstream lines");

        $display("fw_bridge: %0d passed, %0d failed", passed, failed);
        if (failed != 0)
            $fatal(1, "fw_bridge: %0d passed, %0d failed", passed, failed);
        $finish;
    end

    // Watchdog: the whole run takes well under this.
    initial begin
        #10_000_000;
        $display("FAIL: testbench watchdog expired");
        $display("fw_bridge: %0d passed, %0d failed", passed, failed + 1);
        $fatal(1, "fw_bridge: %0d passed, %0d failed", passed, failed + 1);
    end

endmodule

`resetall
