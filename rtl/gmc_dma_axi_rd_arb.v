// gmc: AXI4 read-address arbiter of the DMA engine's read streams, and the R demultiplexer.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Each stream (packet fetch, source MDL entries, destination MDL entries,
// data) offers one read burst at a time. A round-robin choice is loaded
// into the AR output register, which holds the payload until ARREADY
// (AXI: valid stays up with a stable payload). A request counts as issued
// when it is loaded. ARID = {epoch[1:0], stream[1:0]}: the epoch is the one
// current at load time. R beats go to the stream named by RID[1:0] when
// RID's epoch is the current one; beats from another epoch are accepted
// and dropped. RREADY is always high: every stream reserves room for the
// beats it asks for before it asks.
module gmc_dma_axi_rd_arb #(
    // Streams (ports), 1..4.
    parameter integer PORTS = 4,
    // AXI ID width, >= 4.
    parameter integer ID_WIDTH = 4
) (
    input  wire                  clk,
    input  wire                  rst,
    input  wire [1:0]            epoch,

    // Requests, one per stream.
    input  wire [PORTS-1:0]      req_valid,
    output wire [PORTS-1:0]      req_ready,
    input  wire [48*PORTS-1:0]   req_addr,
    input  wire [8*PORTS-1:0]    req_len,
    // A request was loaded this cycle (for the issue order and epoch counts).
    output wire                  load,

    // Beats, one valid per stream (current epoch only).
    output wire [PORTS-1:0]      r_valid,
    output wire [63:0]           r_data,
    output wire [1:0]            r_resp,
    output wire                  r_last,
    // A last beat of either epoch, and its epoch.
    output wire                  r_done,
    output wire [1:0]            r_done_epoch,
    output wire                  r_cur,

    // AXI4 read channels.
    output wire [ID_WIDTH-1:0]   m_axi_arid,
    output wire [47:0]           m_axi_araddr,
    output wire [7:0]            m_axi_arlen,
    output wire                  m_axi_arvalid,
    input  wire                  m_axi_arready,
    input  wire [ID_WIDTH-1:0]   m_axi_rid,
    input  wire [63:0]           m_axi_rdata,
    input  wire [1:0]            m_axi_rresp,
    input  wire                  m_axi_rlast,
    input  wire                  m_axi_rvalid,
    output wire                  m_axi_rready,

    // No request waiting and no address on the bus.
    output wire                  quiet
);

    initial begin
        if (PORTS < 1 || PORTS > 4)
            $error("gmc_dma_axi_rd_arb: PORTS must be 1..4 (instance %m)");
        if (ID_WIDTH < 4)
            $error("gmc_dma_axi_rd_arb: ID_WIDTH must be >= 4 (instance %m)");
    end

    reg          arvalid_reg;
    reg [1:0]    arstream_reg;
    reg [1:0]    arepoch_reg;
    reg [47:0]   araddr_reg;
    reg [7:0]    arlen_reg;
    reg [2:0]    rr_reg;

    wire free = !arvalid_reg || m_axi_arready;

    // Round robin: the first valid port at or after rr_reg, wrapping.
    localparam integer LAST_I = PORTS - 1;
    localparam [2:0] LAST = LAST_I[2:0];
    reg       pick_valid;
    reg [2:0] pick;
    integer   k;
    /* verilator lint_off UNUSEDSIGNAL */
    integer   kk;
    /* verilator lint_on UNUSEDSIGNAL */
    // (Searched only when some stream asks; no grant otherwise.)
    always @* begin
        pick_valid = 1'b0;
        pick = 3'd0;
        kk = 0;
        k = 0; // assigned on every path: no latch for the loop variable
        if (req_valid != {PORTS{1'b0}}) begin
            for (k = 2 * PORTS - 1; k >= 0; k = k - 1) begin
                kk = k % PORTS;
                if (k >= {29'd0, rr_reg} && k < {29'd0, rr_reg} + PORTS && req_valid[kk]) begin
                    pick_valid = 1'b1;
                    pick = kk[2:0];
                end
            end
        end
    end

    assign load = free && pick_valid;
    genvar g;
    generate
        for (g = 0; g < PORTS; g = g + 1) begin : g_ready
            assign req_ready[g] = load && (pick == g);
        end
    endgenerate

    always @(posedge clk) begin
        if (m_axi_arready)
            arvalid_reg <= 1'b0;
        if (load) begin
            arvalid_reg <= 1'b1;
            arstream_reg <= pick[1:0];
            arepoch_reg <= epoch;
            araddr_reg <= req_addr[48 * pick +: 48];
            arlen_reg <= req_len[8 * pick +: 8];
            rr_reg <= (pick == LAST) ? 3'd0 : pick + 3'd1;
        end
        if (rst) begin
            arvalid_reg <= 1'b0;
            rr_reg <= 3'd0;
        end
    end

    assign m_axi_arid    = {{(ID_WIDTH - 4){1'b0}}, arepoch_reg, arstream_reg};
    assign m_axi_araddr  = araddr_reg;
    assign m_axi_arlen   = arlen_reg;
    assign m_axi_arvalid = arvalid_reg;

    // Read data.
    assign m_axi_rready = 1'b1;
    assign r_cur = m_axi_rvalid && (m_axi_rid[3:2] == epoch);
    generate
        for (g = 0; g < PORTS; g = g + 1) begin : g_r
            assign r_valid[g] = r_cur && (m_axi_rid[1:0] == g);
        end
    endgenerate
    assign r_data = m_axi_rdata;
    assign r_resp = m_axi_rresp;
    assign r_last = m_axi_rlast;
    assign r_done = m_axi_rvalid && m_axi_rlast;
    assign r_done_epoch = m_axi_rid[3:2];

    // Upper ID bits are always zero from this master.
    generate
        if (ID_WIDTH > 4) begin : g_unused_id
            /* verilator lint_off UNUSEDSIGNAL */
            wire unused_rid = &{1'b0, m_axi_rid[ID_WIDTH-1:4]};
            /* verilator lint_on UNUSEDSIGNAL */
        end
    endgenerate

    assign quiet = !arvalid_reg && (req_valid == {PORTS{1'b0}});

endmodule

`resetall
