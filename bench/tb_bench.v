// gmc: Icarus testbench driving the load of bench/bench_sim.c, for the model-speed comparison.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// One round: a 16-beat aperture write, a 16-beat aperture read, a register
// write and a register read, with the same handshakes the C driver uses.
// +rounds=N sets the number of rounds; the end prints "cycles N".
module tb_bench;

    reg clk = 1'b0;
    reg rst = 1'b1;
    always #5 clk = ~clk;

    reg  [15:0] l_awaddr = 16'd0, l_araddr = 16'd0;
    reg         l_awvalid = 1'b0, l_wvalid = 1'b0, l_bready = 1'b0, l_arvalid = 1'b0, l_rready = 1'b0;
    reg  [31:0] l_wdata = 32'd0;
    wire        l_awready, l_wready, l_bvalid, l_arready, l_rvalid;
    wire [1:0]  l_bresp, l_rresp;
    wire [31:0] l_rdata;

    reg  [31:0] a_awaddr = 32'd0, a_araddr = 32'd0;
    reg  [7:0]  a_awlen = 8'd0, a_arlen = 8'd0;
    reg         a_awvalid = 1'b0, a_wvalid = 1'b0, a_wlast = 1'b0, a_bready = 1'b0;
    reg         a_arvalid = 1'b0, a_rready = 1'b0;
    reg  [63:0] a_wdata = 64'd0;
    wire        a_awready, a_wready, a_bvalid, a_arready, a_rvalid, a_rlast;
    wire [3:0]  a_bid, a_rid;
    wire [1:0]  a_bresp, a_rresp;
    wire [63:0] a_rdata;

    wire [3:0]  m_awid, m_arid;
    wire [47:0] m_awaddr, m_araddr;
    wire [7:0]  m_awlen, m_arlen;
    wire [2:0]  m_awsize, m_arsize, m_awprot, m_arprot;
    wire [1:0]  m_awburst, m_arburst;
    wire        m_awlock, m_arlock, m_awvalid, m_arvalid, m_wlast, m_wvalid, m_bready, m_rready;
    wire [3:0]  m_awcache, m_arcache;
    wire [63:0] m_wdata;
    wire [7:0]  m_wstrb;
    wire        irq;

    gmc_top dut (
        .clk(clk), .rst(rst),
        .s_axil_awaddr(l_awaddr), .s_axil_awprot(3'd0), .s_axil_awvalid(l_awvalid), .s_axil_awready(l_awready),
        .s_axil_wdata(l_wdata), .s_axil_wstrb(4'hF), .s_axil_wvalid(l_wvalid), .s_axil_wready(l_wready),
        .s_axil_bresp(l_bresp), .s_axil_bvalid(l_bvalid), .s_axil_bready(l_bready),
        .s_axil_araddr(l_araddr), .s_axil_arprot(3'd0), .s_axil_arvalid(l_arvalid), .s_axil_arready(l_arready),
        .s_axil_rdata(l_rdata), .s_axil_rresp(l_rresp), .s_axil_rvalid(l_rvalid), .s_axil_rready(l_rready),
        .s_axi_awid(4'd0), .s_axi_awaddr(a_awaddr), .s_axi_awlen(a_awlen), .s_axi_awsize(3'd3),
        .s_axi_awburst(2'd1), .s_axi_awlock(1'b0), .s_axi_awcache(4'd0), .s_axi_awprot(3'd0),
        .s_axi_awvalid(a_awvalid), .s_axi_awready(a_awready), .s_axi_wdata(a_wdata), .s_axi_wstrb(8'hFF),
        .s_axi_wlast(a_wlast), .s_axi_wvalid(a_wvalid), .s_axi_wready(a_wready), .s_axi_bid(a_bid),
        .s_axi_bresp(a_bresp), .s_axi_bvalid(a_bvalid), .s_axi_bready(a_bready),
        .s_axi_arid(4'd0), .s_axi_araddr(a_araddr), .s_axi_arlen(a_arlen), .s_axi_arsize(3'd3),
        .s_axi_arburst(2'd1), .s_axi_arlock(1'b0), .s_axi_arcache(4'd0), .s_axi_arprot(3'd0),
        .s_axi_arvalid(a_arvalid), .s_axi_arready(a_arready), .s_axi_rid(a_rid), .s_axi_rdata(a_rdata),
        .s_axi_rresp(a_rresp), .s_axi_rlast(a_rlast), .s_axi_rvalid(a_rvalid), .s_axi_rready(a_rready),
        .m_axi_awid(m_awid), .m_axi_awaddr(m_awaddr), .m_axi_awlen(m_awlen), .m_axi_awsize(m_awsize),
        .m_axi_awburst(m_awburst), .m_axi_awlock(m_awlock), .m_axi_awcache(m_awcache), .m_axi_awprot(m_awprot),
        .m_axi_awvalid(m_awvalid), .m_axi_awready(1'b1), .m_axi_wdata(m_wdata), .m_axi_wstrb(m_wstrb),
        .m_axi_wlast(m_wlast), .m_axi_wvalid(m_wvalid), .m_axi_wready(1'b1), .m_axi_bid(4'd0),
        .m_axi_bresp(2'd0), .m_axi_bvalid(1'b0), .m_axi_bready(m_bready),
        .m_axi_arid(m_arid), .m_axi_araddr(m_araddr), .m_axi_arlen(m_arlen), .m_axi_arsize(m_arsize),
        .m_axi_arburst(m_arburst), .m_axi_arlock(m_arlock), .m_axi_arcache(m_arcache), .m_axi_arprot(m_arprot),
        .m_axi_arvalid(m_arvalid), .m_axi_arready(1'b1), .m_axi_rid(4'd0), .m_axi_rdata(64'd0),
        .m_axi_rresp(2'd0), .m_axi_rlast(1'b0), .m_axi_rvalid(1'b0), .m_axi_rready(m_rready),
        .irq(irq)
    );

    reg [63:0] cycles = 64'd0;
    always @(posedge clk) cycles <= cycles + 64'd1;

    integer errors = 0;

    task reg_write(input [15:0] a, input [31:0] d);
        reg aw_done, w_done, b_done;
        begin
            aw_done = 1'b0;
            w_done = 1'b0;
            l_awaddr = a; l_wdata = d; l_awvalid = 1'b1; l_wvalid = 1'b1; l_bready = 1'b1;
            b_done = 1'b0;
            while (!b_done) begin
                @(posedge clk);
                if (l_awvalid && l_awready) aw_done = 1'b1;
                if (l_wvalid && l_wready) w_done = 1'b1;
                b_done = l_bvalid && l_bready;
                #1;
                if (aw_done) l_awvalid = 1'b0;
                if (w_done) l_wvalid = 1'b0;
            end
            l_bready = 1'b0;
        end
    endtask

    task reg_read(input [15:0] a, output [31:0] d);
        reg ar_hs, r_done;
        begin
            l_araddr = a; l_arvalid = 1'b1; l_rready = 1'b1;
            r_done = 1'b0;
            while (!r_done) begin
                @(posedge clk);
                ar_hs = l_arvalid && l_arready;
                r_done = l_rvalid && l_rready;
                d = l_rdata;
                #1;
                if (ar_hs) l_arvalid = 1'b0;
            end
            l_rready = 1'b0;
        end
    endtask

    task ap_write16(input [31:0] a, input [63:0] seed);
        integer beat;
        reg aw_hs, w_hs, b_done;
        begin
            a_awaddr = a; a_awlen = 8'd15; a_awvalid = 1'b1; a_bready = 1'b1;
            beat = 0;
            a_wdata = seed; a_wlast = 1'b0; a_wvalid = 1'b1;
            b_done = 1'b0;
            while (!b_done) begin
                @(posedge clk);
                aw_hs = a_awvalid && a_awready;
                w_hs = a_wvalid && a_wready;
                b_done = a_bvalid && a_bready;
                #1;
                if (aw_hs) a_awvalid = 1'b0;
                if (w_hs) begin
                    beat = beat + 1;
                    if (beat == 16) a_wvalid = 1'b0;
                    else begin a_wdata = seed + beat; a_wlast = (beat == 15); end
                end
            end
            a_bready = 1'b0;
        end
    endtask

    task ap_read16(input [31:0] a, input [63:0] seed);
        integer beat;
        reg ar_hs;
        begin
            a_araddr = a; a_arlen = 8'd15; a_arvalid = 1'b1; a_rready = 1'b1;
            beat = 0;
            while (beat < 16) begin
                @(posedge clk);
                ar_hs = a_arvalid && a_arready;
                if (a_rvalid && a_rready) begin
                    if (a_rdata != seed + beat) errors = errors + 1;
                    beat = beat + 1;
                end
                #1;
                if (ar_hs) a_arvalid = 1'b0;
            end
            a_rready = 1'b0;
        end
    endtask

    integer rounds, i;
    reg [31:0] v;
    initial begin
        if (!$value$plusargs("rounds=%d", rounds)) rounds = 1000;
        repeat (8) @(posedge clk);
        #1 rst = 1'b0;
        for (i = 0; i < rounds; i = i + 1) begin
            ap_write16((i * 128) & 32'hFFF80, i * 16);
            ap_read16((i * 128) & 32'hFFF80, i * 16);
            reg_write(16'h0028, i);
            reg_read(16'h0028, v);
            if (v != i) errors = errors + 1;
        end
        $display("cycles %0d errors %0d", cycles, errors);
        if (errors != 0) $fatal(1, "tb_bench: %0d data errors", errors);
        $finish;
    end

endmodule

`resetall
