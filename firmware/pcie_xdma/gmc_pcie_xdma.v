// gmc_pcie_xdma.v - REFERENCE wrapper: gmc_top behind a Xilinx XDMA
// (DMA/Bridge Subsystem for PCI Express) configured in AXI Bridge mode, on
// a 7-series part (e.g. an Artix-7 XC7A100T board with a PCIe x1 Gen2 link).
//
// UNTESTED ON HARDWARE, and not built by `make`: it instantiates Vivado IP
// the user generates (names and settings below, docs/pci.md) and has been
// neither synthesised nor run. The IP port names follow PG194's AXI Bridge
// mode; check them against the instantiation templates Vivado writes.
//
//   xdma_0   AXI Bridge mode, x1 Gen2, AXI data width 64, axi_aclk 125 MHz,
//            vendor 0x10EE device 0x6D63 (spec/gmc.toml [pci]),
//            BAR0: 64 KiB, 32-bit memory, not prefetchable -> AXI 0x0000_0000
//            BAR1:  2 MiB, 64-bit memory, prefetchable     -> AXI 0x4000_0000
//            AXI BAR0 (S_AXI_B): 256 TiB at AXI 0, translated to PCIe 0
//            (AXI address = bus address: the host's IOVA under VFIO),
//            interrupts: MSI 1 vector, legacy INTA as the fallback.
//   xbar_0   AXI Crossbar, 1 slave x 2 masters, 64-bit data, 32-bit address:
//            M00 0x0000_0000/64K (registers), M01 0x4000_0000/2M (aperture).
//   a2l_0    AXI Protocol Converter, AXI4 -> AXI4-Lite, 32-bit data.
//
// gmc_top runs on axi_aclk (GMC_PCI_CLOCK_HZ = 125 MHz in spec/gmc.toml:
// the pci backend's `cycles` are wall time at that rate). Its synchronous
// active-high reset is axi_aresetn (the bridge's reset, from PERST#)
// inverted and registered twice.
`default_nettype none

module gmc_pcie_xdma (
    input  wire       sys_clk_p,    // 100 MHz PCIe reference clock
    input  wire       sys_clk_n,
    input  wire       sys_rst_n,    // PERST#
    output wire [0:0] pci_exp_txp,
    output wire [0:0] pci_exp_txn,
    input  wire [0:0] pci_exp_rxp,
    input  wire [0:0] pci_exp_rxn,
    output wire       led_link_up
);
    wire sys_clk;
    IBUFDS_GTE2 refclk_ibuf (.I(sys_clk_p), .IB(sys_clk_n), .CEB(1'b0), .O(sys_clk), .ODIV2());

    wire axi_aclk, axi_aresetn, user_lnk_up;
    assign led_link_up = user_lnk_up;

    // gmc reset: synchronous, active high, two registers after the bridge's reset
    reg [1:0] rst_q = 2'b11;
    always @(posedge axi_aclk) rst_q <= {rst_q[0], ~axi_aresetn};
    wire rst = rst_q[1];

    // ---- bridge master (BARs) -> crossbar
    wire [31:0] b_awaddr, b_araddr;
    wire [7:0]  b_awlen, b_arlen;
    wire [2:0]  b_awsize, b_arsize, b_awprot, b_arprot;
    wire [1:0]  b_awburst, b_arburst, b_bresp, b_rresp;
    wire [3:0]  b_awid, b_arid, b_bid, b_rid, b_awcache, b_arcache;
    wire        b_awlock, b_arlock, b_awvalid, b_awready, b_wlast, b_wvalid, b_wready;
    wire        b_bvalid, b_bready, b_arvalid, b_arready, b_rlast, b_rvalid, b_rready;
    wire [63:0] b_wdata, b_rdata;
    wire [7:0]  b_wstrb;

    // ---- crossbar M00 (AXI4) -> protocol converter -> gmc s_axil
    wire [31:0] r_awaddr, r_araddr, l_awaddr, l_araddr, l_wdata, l_rdata;
    wire [7:0]  r_awlen, r_arlen;
    wire [2:0]  r_awsize, r_arsize, r_awprot, r_arprot, l_awprot, l_arprot;
    wire [1:0]  r_awburst, r_arburst, r_bresp, r_rresp, l_bresp, l_rresp;
    wire [3:0]  r_awid, r_arid, r_bid, r_rid, r_awcache, r_arcache, l_wstrb;
    wire        r_awlock, r_arlock, r_awvalid, r_awready, r_wlast, r_wvalid, r_wready;
    wire        r_bvalid, r_bready, r_arvalid, r_arready, r_rlast, r_rvalid, r_rready;
    wire [63:0] r_wdata, r_rdata;
    wire [7:0]  r_wstrb;
    wire        l_awvalid, l_awready, l_wvalid, l_wready, l_bvalid, l_bready;
    wire        l_arvalid, l_arready, l_rvalid, l_rready;

    // ---- crossbar M01 (AXI4) -> gmc s_axi (the CPU aperture)
    wire [31:0] a_awaddr, a_araddr;
    wire [7:0]  a_awlen, a_arlen;
    wire [2:0]  a_awsize, a_arsize, a_awprot, a_arprot;
    wire [1:0]  a_awburst, a_arburst, a_bresp, a_rresp;
    wire [3:0]  a_awid, a_arid, a_bid, a_rid, a_awcache, a_arcache;
    wire        a_awlock, a_arlock, a_awvalid, a_awready, a_wlast, a_wvalid, a_wready;
    wire        a_bvalid, a_bready, a_arvalid, a_arready, a_rlast, a_rvalid, a_rready;
    wire [63:0] a_wdata, a_rdata;
    wire [7:0]  a_wstrb;

    // ---- gmc DMA master -> bridge slave (bus mastering)
    wire [47:0] m_awaddr, m_araddr;
    wire [7:0]  m_awlen, m_arlen;
    wire [2:0]  m_awsize, m_arsize, m_awprot, m_arprot;
    wire [1:0]  m_awburst, m_arburst, m_bresp, m_rresp;
    wire [3:0]  m_awid, m_arid, m_bid, m_rid, m_awcache, m_arcache;
    wire        m_awlock, m_arlock, m_awvalid, m_awready, m_wlast, m_wvalid, m_wready;
    wire        m_bvalid, m_bready, m_arvalid, m_arready, m_rlast, m_rvalid, m_rready;
    wire [63:0] m_wdata, m_rdata;
    wire [7:0]  m_wstrb;

    // ---- interrupt: gmc's level irq -> legacy INTA while high; with MSI
    // enabled, one MSI per rising edge (the host re-reads IRQ_STATUS after
    // each, so a source raised while another is pending is not lost)
    wire gmc_irq, msi_enable, intx_msi_grant;
    reg  irq_q = 1'b0, req = 1'b0;
    always @(posedge axi_aclk) begin
        irq_q <= gmc_irq;
        if (rst)
            req <= 1'b0;
        else if (msi_enable)
            req <= (req & ~intx_msi_grant) | (gmc_irq & ~irq_q);
        else
            req <= gmc_irq;
    end

    xdma_0 bridge (
        .sys_clk(sys_clk), .sys_rst_n(sys_rst_n),
        .pci_exp_txp(pci_exp_txp), .pci_exp_txn(pci_exp_txn),
        .pci_exp_rxp(pci_exp_rxp), .pci_exp_rxn(pci_exp_rxn),
        .axi_aclk(axi_aclk), .axi_aresetn(axi_aresetn), .user_lnk_up(user_lnk_up),
        .axi_ctl_aresetn(),
        .intx_msi_request(req), .intx_msi_grant(intx_msi_grant), .msi_enable(msi_enable),
        .msi_vector_num(5'd0), .msi_vector_width(), .interrupt_out(),
        // PCIe -> AXI (BAR0, BAR1)
        .m_axib_awid(b_awid), .m_axib_awaddr(b_awaddr), .m_axib_awlen(b_awlen), .m_axib_awsize(b_awsize),
        .m_axib_awburst(b_awburst), .m_axib_awprot(b_awprot), .m_axib_awvalid(b_awvalid),
        .m_axib_awready(b_awready), .m_axib_awlock(b_awlock), .m_axib_awcache(b_awcache),
        .m_axib_wdata(b_wdata), .m_axib_wstrb(b_wstrb), .m_axib_wlast(b_wlast), .m_axib_wvalid(b_wvalid),
        .m_axib_wready(b_wready), .m_axib_bid(b_bid), .m_axib_bresp(b_bresp), .m_axib_bvalid(b_bvalid),
        .m_axib_bready(b_bready), .m_axib_arid(b_arid), .m_axib_araddr(b_araddr), .m_axib_arlen(b_arlen),
        .m_axib_arsize(b_arsize), .m_axib_arburst(b_arburst), .m_axib_arprot(b_arprot),
        .m_axib_arvalid(b_arvalid), .m_axib_arready(b_arready), .m_axib_arlock(b_arlock),
        .m_axib_arcache(b_arcache), .m_axib_rid(b_rid), .m_axib_rdata(b_rdata), .m_axib_rresp(b_rresp),
        .m_axib_rlast(b_rlast), .m_axib_rvalid(b_rvalid), .m_axib_rready(b_rready),
        // AXI -> PCIe (gmc's DMA master; AXI address = bus address)
        .s_axib_awid(m_awid), .s_axib_awaddr(m_awaddr), .s_axib_awregion(4'd0), .s_axib_awlen(m_awlen),
        .s_axib_awsize(m_awsize), .s_axib_awburst(m_awburst), .s_axib_awvalid(m_awvalid),
        .s_axib_awready(m_awready), .s_axib_wdata(m_wdata), .s_axib_wstrb(m_wstrb), .s_axib_wlast(m_wlast),
        .s_axib_wvalid(m_wvalid), .s_axib_wready(m_wready), .s_axib_bid(m_bid), .s_axib_bresp(m_bresp),
        .s_axib_bvalid(m_bvalid), .s_axib_bready(m_bready), .s_axib_arid(m_arid), .s_axib_araddr(m_araddr),
        .s_axib_arregion(4'd0), .s_axib_arlen(m_arlen), .s_axib_arsize(m_arsize), .s_axib_arburst(m_arburst),
        .s_axib_arvalid(m_arvalid), .s_axib_arready(m_arready), .s_axib_rid(m_rid), .s_axib_rdata(m_rdata),
        .s_axib_rresp(m_rresp), .s_axib_rlast(m_rlast), .s_axib_rvalid(m_rvalid), .s_axib_rready(m_rready),
        // the bridge's own registers are not used
        .s_axil_awaddr(32'd0), .s_axil_awprot(3'd0), .s_axil_awvalid(1'b0), .s_axil_awready(),
        .s_axil_wdata(32'd0), .s_axil_wstrb(4'd0), .s_axil_wvalid(1'b0), .s_axil_wready(),
        .s_axil_bvalid(), .s_axil_bresp(), .s_axil_bready(1'b1), .s_axil_araddr(32'd0),
        .s_axil_arprot(3'd0), .s_axil_arvalid(1'b0), .s_axil_arready(), .s_axil_rdata(),
        .s_axil_rresp(), .s_axil_rvalid(), .s_axil_rready(1'b1)
    );

    // One AXI4 slave port in, two out; the crossbar IP takes its ports as
    // concatenated vectors (M01 in the upper half, M00 in the lower).
    xbar_0 xbar (
        .aclk(axi_aclk), .aresetn(axi_aresetn),
        .s_axi_awid(b_awid), .s_axi_awaddr(b_awaddr), .s_axi_awlen(b_awlen), .s_axi_awsize(b_awsize),
        .s_axi_awburst(b_awburst), .s_axi_awlock(b_awlock), .s_axi_awcache(b_awcache), .s_axi_awprot(b_awprot),
        .s_axi_awqos(4'd0), .s_axi_awvalid(b_awvalid), .s_axi_awready(b_awready), .s_axi_wdata(b_wdata),
        .s_axi_wstrb(b_wstrb), .s_axi_wlast(b_wlast), .s_axi_wvalid(b_wvalid), .s_axi_wready(b_wready),
        .s_axi_bid(b_bid), .s_axi_bresp(b_bresp), .s_axi_bvalid(b_bvalid), .s_axi_bready(b_bready),
        .s_axi_arid(b_arid), .s_axi_araddr(b_araddr), .s_axi_arlen(b_arlen), .s_axi_arsize(b_arsize),
        .s_axi_arburst(b_arburst), .s_axi_arlock(b_arlock), .s_axi_arcache(b_arcache), .s_axi_arprot(b_arprot),
        .s_axi_arqos(4'd0), .s_axi_arvalid(b_arvalid), .s_axi_arready(b_arready), .s_axi_rid(b_rid),
        .s_axi_rdata(b_rdata), .s_axi_rresp(b_rresp), .s_axi_rlast(b_rlast), .s_axi_rvalid(b_rvalid),
        .s_axi_rready(b_rready),
        .m_axi_awid({a_awid, r_awid}), .m_axi_awaddr({a_awaddr, r_awaddr}), .m_axi_awlen({a_awlen, r_awlen}),
        .m_axi_awsize({a_awsize, r_awsize}), .m_axi_awburst({a_awburst, r_awburst}),
        .m_axi_awlock({a_awlock, r_awlock}), .m_axi_awcache({a_awcache, r_awcache}),
        .m_axi_awprot({a_awprot, r_awprot}), .m_axi_awregion(), .m_axi_awqos(),
        .m_axi_awvalid({a_awvalid, r_awvalid}), .m_axi_awready({a_awready, r_awready}),
        .m_axi_wdata({a_wdata, r_wdata}), .m_axi_wstrb({a_wstrb, r_wstrb}), .m_axi_wlast({a_wlast, r_wlast}),
        .m_axi_wvalid({a_wvalid, r_wvalid}), .m_axi_wready({a_wready, r_wready}),
        .m_axi_bid({a_bid, r_bid}), .m_axi_bresp({a_bresp, r_bresp}), .m_axi_bvalid({a_bvalid, r_bvalid}),
        .m_axi_bready({a_bready, r_bready}),
        .m_axi_arid({a_arid, r_arid}), .m_axi_araddr({a_araddr, r_araddr}), .m_axi_arlen({a_arlen, r_arlen}),
        .m_axi_arsize({a_arsize, r_arsize}), .m_axi_arburst({a_arburst, r_arburst}),
        .m_axi_arlock({a_arlock, r_arlock}), .m_axi_arcache({a_arcache, r_arcache}),
        .m_axi_arprot({a_arprot, r_arprot}), .m_axi_arregion(), .m_axi_arqos(),
        .m_axi_arvalid({a_arvalid, r_arvalid}), .m_axi_arready({a_arready, r_arready}),
        .m_axi_rid({a_rid, r_rid}), .m_axi_rdata({a_rdata, r_rdata}), .m_axi_rresp({a_rresp, r_rresp}),
        .m_axi_rlast({a_rlast, r_rlast}), .m_axi_rvalid({a_rvalid, r_rvalid}), .m_axi_rready({a_rready, r_rready})
    );

    // 64-bit AXI4 -> 32-bit AXI4-Lite (the converter splits nothing: the
    // host makes only aligned 32-bit register accesses).
    a2l_0 a2l (
        .aclk(axi_aclk), .aresetn(axi_aresetn),
        .s_axi_awid(r_awid), .s_axi_awaddr(r_awaddr), .s_axi_awlen(r_awlen), .s_axi_awsize(r_awsize),
        .s_axi_awburst(r_awburst), .s_axi_awlock(r_awlock), .s_axi_awcache(r_awcache), .s_axi_awprot(r_awprot),
        .s_axi_awregion(4'd0), .s_axi_awqos(4'd0), .s_axi_awvalid(r_awvalid), .s_axi_awready(r_awready),
        .s_axi_wdata(r_wdata), .s_axi_wstrb(r_wstrb), .s_axi_wlast(r_wlast), .s_axi_wvalid(r_wvalid),
        .s_axi_wready(r_wready), .s_axi_bid(r_bid), .s_axi_bresp(r_bresp), .s_axi_bvalid(r_bvalid),
        .s_axi_bready(r_bready), .s_axi_arid(r_arid), .s_axi_araddr(r_araddr), .s_axi_arlen(r_arlen),
        .s_axi_arsize(r_arsize), .s_axi_arburst(r_arburst), .s_axi_arlock(r_arlock), .s_axi_arcache(r_arcache),
        .s_axi_arprot(r_arprot), .s_axi_arregion(4'd0), .s_axi_arqos(4'd0), .s_axi_arvalid(r_arvalid),
        .s_axi_arready(r_arready), .s_axi_rid(r_rid), .s_axi_rdata(r_rdata), .s_axi_rresp(r_rresp),
        .s_axi_rlast(r_rlast), .s_axi_rvalid(r_rvalid), .s_axi_rready(r_rready),
        .m_axi_awaddr(l_awaddr), .m_axi_awprot(l_awprot), .m_axi_awvalid(l_awvalid), .m_axi_awready(l_awready),
        .m_axi_wdata(l_wdata), .m_axi_wstrb(l_wstrb), .m_axi_wvalid(l_wvalid), .m_axi_wready(l_wready),
        .m_axi_bresp(l_bresp), .m_axi_bvalid(l_bvalid), .m_axi_bready(l_bready),
        .m_axi_araddr(l_araddr), .m_axi_arprot(l_arprot), .m_axi_arvalid(l_arvalid), .m_axi_arready(l_arready),
        .m_axi_rdata(l_rdata), .m_axi_rresp(l_rresp), .m_axi_rvalid(l_rvalid), .m_axi_rready(l_rready)
    );

    gmc_top #(.S_ID_WIDTH(4), .M_ID_WIDTH(4)) gmc (
        .clk(axi_aclk), .rst(rst),
        .s_axil_awaddr(l_awaddr[15:0]), .s_axil_awprot(l_awprot), .s_axil_awvalid(l_awvalid),
        .s_axil_awready(l_awready), .s_axil_wdata(l_wdata), .s_axil_wstrb(l_wstrb), .s_axil_wvalid(l_wvalid),
        .s_axil_wready(l_wready), .s_axil_bresp(l_bresp), .s_axil_bvalid(l_bvalid), .s_axil_bready(l_bready),
        .s_axil_araddr(l_araddr[15:0]), .s_axil_arprot(l_arprot), .s_axil_arvalid(l_arvalid),
        .s_axil_arready(l_arready), .s_axil_rdata(l_rdata), .s_axil_rresp(l_rresp), .s_axil_rvalid(l_rvalid),
        .s_axil_rready(l_rready),
        // BAR1 offset = AXI address - 0x4000_0000
        .s_axi_awid(a_awid), .s_axi_awaddr({2'b00, a_awaddr[29:0]}), .s_axi_awlen(a_awlen),
        .s_axi_awsize(a_awsize), .s_axi_awburst(a_awburst), .s_axi_awlock(a_awlock), .s_axi_awcache(a_awcache),
        .s_axi_awprot(a_awprot), .s_axi_awvalid(a_awvalid), .s_axi_awready(a_awready), .s_axi_wdata(a_wdata),
        .s_axi_wstrb(a_wstrb), .s_axi_wlast(a_wlast), .s_axi_wvalid(a_wvalid), .s_axi_wready(a_wready),
        .s_axi_bid(a_bid), .s_axi_bresp(a_bresp), .s_axi_bvalid(a_bvalid), .s_axi_bready(a_bready),
        .s_axi_arid(a_arid), .s_axi_araddr({2'b00, a_araddr[29:0]}), .s_axi_arlen(a_arlen),
        .s_axi_arsize(a_arsize), .s_axi_arburst(a_arburst), .s_axi_arlock(a_arlock), .s_axi_arcache(a_arcache),
        .s_axi_arprot(a_arprot), .s_axi_arvalid(a_arvalid), .s_axi_arready(a_arready), .s_axi_rid(a_rid),
        .s_axi_rdata(a_rdata), .s_axi_rresp(a_rresp), .s_axi_rlast(a_rlast), .s_axi_rvalid(a_rvalid),
        .s_axi_rready(a_rready),
        .m_axi_awid(m_awid), .m_axi_awaddr(m_awaddr), .m_axi_awlen(m_awlen), .m_axi_awsize(m_awsize),
        .m_axi_awburst(m_awburst), .m_axi_awlock(m_awlock), .m_axi_awcache(m_awcache), .m_axi_awprot(m_awprot),
        .m_axi_awvalid(m_awvalid), .m_axi_awready(m_awready), .m_axi_wdata(m_wdata), .m_axi_wstrb(m_wstrb),
        .m_axi_wlast(m_wlast), .m_axi_wvalid(m_wvalid), .m_axi_wready(m_wready), .m_axi_bid(m_bid),
        .m_axi_bresp(m_bresp), .m_axi_bvalid(m_bvalid), .m_axi_bready(m_bready), .m_axi_arid(m_arid),
        .m_axi_araddr(m_araddr), .m_axi_arlen(m_arlen), .m_axi_arsize(m_arsize), .m_axi_arburst(m_arburst),
        .m_axi_arlock(m_arlock), .m_axi_arcache(m_arcache), .m_axi_arprot(m_arprot), .m_axi_arvalid(m_arvalid),
        .m_axi_arready(m_arready), .m_axi_rid(m_rid), .m_axi_rdata(m_rdata), .m_axi_rresp(m_rresp),
        .m_axi_rlast(m_rlast), .m_axi_rvalid(m_rvalid), .m_axi_rready(m_rready),
        .irq(gmc_irq)
    );
endmodule

`default_nettype wire
