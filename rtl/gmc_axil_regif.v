// gmc: AXI4-Lite slave to a simple register strobe interface.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The write address and data are taken independently, in either order, and
// held; the write happens once both are held and no response is pending.
// The register block answers combinationally (reg_wr_resp, reg_rd_data,
// reg_rd_resp) in the cycle of the strobe. Responses stay valid, with
// stable payloads, until the master takes them.
module gmc_axil_regif #(
    // Byte address width of the register space.
    parameter integer ADDR_WIDTH = 16
) (
    input  wire                  clk,
    input  wire                  rst,

    // AXI4-Lite slave.
    input  wire [ADDR_WIDTH-1:0] s_axil_awaddr,
    input  wire                  s_axil_awvalid,
    output wire                  s_axil_awready,
    input  wire [31:0]           s_axil_wdata,
    input  wire [3:0]            s_axil_wstrb,
    input  wire                  s_axil_wvalid,
    output wire                  s_axil_wready,
    output reg  [1:0]            s_axil_bresp,
    output reg                   s_axil_bvalid,
    input  wire                  s_axil_bready,
    input  wire [ADDR_WIDTH-1:0] s_axil_araddr,
    input  wire                  s_axil_arvalid,
    output wire                  s_axil_arready,
    output reg  [31:0]           s_axil_rdata,
    output reg  [1:0]            s_axil_rresp,
    output reg                   s_axil_rvalid,
    input  wire                  s_axil_rready,

    // Register strobes.
    output wire                  reg_wr_en,
    output wire [ADDR_WIDTH-1:0] reg_wr_addr,
    output wire [31:0]           reg_wr_data,
    output wire [3:0]            reg_wr_strb,
    input  wire [1:0]            reg_wr_resp,
    output wire                  reg_rd_en,
    output wire [ADDR_WIDTH-1:0] reg_rd_addr,
    input  wire [31:0]           reg_rd_data,
    input  wire [1:0]            reg_rd_resp
);

    reg                  aw_full_reg, w_full_reg;
    reg [ADDR_WIDTH-1:0] aw_addr_reg;
    reg [31:0]           w_data_reg;
    reg [3:0]            w_strb_reg;

    // Registers are word-aligned: the two low address bits select nothing.
    /* verilator lint_off UNUSEDSIGNAL */
    wire [1:0] unused_low = s_axil_araddr[1:0] | aw_addr_reg[1:0];
    /* verilator lint_on UNUSEDSIGNAL */

    assign s_axil_awready = !aw_full_reg;
    assign s_axil_wready  = !w_full_reg;

    assign reg_wr_en   = aw_full_reg && w_full_reg && !s_axil_bvalid;
    assign reg_wr_addr = {aw_addr_reg[ADDR_WIDTH-1:2], 2'b00};
    assign reg_wr_data = w_data_reg;
    assign reg_wr_strb = w_strb_reg;

    assign s_axil_arready = !s_axil_rvalid;
    assign reg_rd_en   = s_axil_arvalid && s_axil_arready;
    assign reg_rd_addr = {s_axil_araddr[ADDR_WIDTH-1:2], 2'b00};

    always @(posedge clk) begin
        if (s_axil_awvalid && s_axil_awready) begin
            aw_full_reg <= 1'b1;
            aw_addr_reg <= s_axil_awaddr;
        end
        if (s_axil_wvalid && s_axil_wready) begin
            w_full_reg <= 1'b1;
            w_data_reg <= s_axil_wdata;
            w_strb_reg <= s_axil_wstrb;
        end
        if (reg_wr_en) begin
            aw_full_reg <= 1'b0;
            w_full_reg <= 1'b0;
            s_axil_bvalid <= 1'b1;
            s_axil_bresp <= reg_wr_resp;
        end else if (s_axil_bvalid && s_axil_bready) begin
            s_axil_bvalid <= 1'b0;
        end

        if (reg_rd_en) begin
            s_axil_rvalid <= 1'b1;
            s_axil_rdata <= reg_rd_data;
            s_axil_rresp <= reg_rd_resp;
        end else if (s_axil_rvalid && s_axil_rready) begin
            s_axil_rvalid <= 1'b0;
        end

        if (rst) begin
            aw_full_reg <= 1'b0;
            w_full_reg <= 1'b0;
            s_axil_bvalid <= 1'b0;
            s_axil_rvalid <= 1'b0;
        end
    end

`ifdef FORMAL
    // ---------------------------------------------------------------------
    // AXI4-Lite slave properties (yosys -formal; tools/formal.sh proves them).
    // Assumptions describe a legal master; assertions are this slave's duties.
    reg f_past_valid = 1'b0;
    always @(posedge clk) f_past_valid <= 1'b1;
    always @(*) if (!f_past_valid) assume(rst);

    // Requests accepted and responses given since reset.
    reg [3:0] f_aw, f_w, f_b, f_ar, f_r;
    always @(posedge clk) begin
        if (rst) begin
            f_aw <= 0; f_w <= 0; f_b <= 0; f_ar <= 0; f_r <= 0;
        end else begin
            f_aw <= f_aw + (s_axil_awvalid && s_axil_awready);
            f_w  <= f_w  + (s_axil_wvalid && s_axil_wready);
            f_b  <= f_b  + (s_axil_bvalid && s_axil_bready);
            f_ar <= f_ar + (s_axil_arvalid && s_axil_arready);
            f_r  <= f_r  + (s_axil_rvalid && s_axil_rready);
        end
    end

    always @(posedge clk) if (f_past_valid && !$past(rst)) begin
        // The master holds a request, unchanged, until it is taken.
        if ($past(s_axil_awvalid && !s_axil_awready))
            assume(s_axil_awvalid && s_axil_awaddr == $past(s_axil_awaddr));
        if ($past(s_axil_wvalid && !s_axil_wready))
            assume(s_axil_wvalid && s_axil_wdata == $past(s_axil_wdata)
                   && s_axil_wstrb == $past(s_axil_wstrb));
        if ($past(s_axil_arvalid && !s_axil_arready))
            assume(s_axil_arvalid && s_axil_araddr == $past(s_axil_araddr));
        // The slave holds a response, unchanged, until it is taken.
        if ($past(s_axil_bvalid && !s_axil_bready))
            assert(s_axil_bvalid && s_axil_bresp == $past(s_axil_bresp));
        if ($past(s_axil_rvalid && !s_axil_rready))
            assert(s_axil_rvalid && s_axil_rdata == $past(s_axil_rdata)
                   && s_axil_rresp == $past(s_axil_rresp));
    end

    always @(*) if (f_past_valid && !rst) begin
        // Bounded traffic keeps the counters from wrapping in the proof.
        assume(f_aw < 4'd12 && f_ar < 4'd12);
        // One response per request: never a response without a request.
        assert(f_b <= f_aw && f_b <= f_w && f_r <= f_ar);
        assert(f_aw - f_b <= 4'd1 + {3'd0, s_axil_bvalid} && f_w - f_b <= 4'd1 + {3'd0, s_axil_bvalid});
        if (s_axil_bvalid) assert(f_b < f_aw && f_b < f_w);
        if (s_axil_rvalid) assert(f_r < f_ar);
        assert(f_ar - f_r == {3'd0, s_axil_rvalid});
        // Internal state agrees with the counts (closes the induction).
        assert(f_aw - f_b == {3'd0, aw_full_reg} + {3'd0, s_axil_bvalid});
        assert(f_w - f_b == {3'd0, w_full_reg} + {3'd0, s_axil_bvalid});
    end
    always @(posedge clk) if (f_past_valid && $past(rst)) begin
        assert(!s_axil_bvalid && !s_axil_rvalid);
    end
`endif

endmodule

`resetall
