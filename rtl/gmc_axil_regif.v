// gmc: AXI4-Lite slave to a simple register strobe interface.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The write address and data are taken independently, in either order, and
// held; the write happens once both are held and no response is pending.
// The register block answers combinationally (reg_wr_resp, reg_rd_data,
// reg_rd_resp) in the cycle of the strobe. Responses stay valid, with
// stable payloads, until the master takes them. With LATE_RD, a read the
// register block marks reg_rd_late in its strobe cycle is answered a cycle
// later with reg_rd_late_data (OKAY): registers held in a block RAM, read
// with the strobe's address.
module gmc_axil_regif #(
    // Byte address width of the register space.
    parameter integer ADDR_WIDTH = 16,
    parameter integer LATE_RD = 0
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
    input  wire [1:0]            reg_rd_resp,
    input  wire                  reg_rd_late,
    input  wire [31:0]           reg_rd_late_data
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

    reg late_reg;
    assign s_axil_arready = !s_axil_rvalid && !late_reg;
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

        if (reg_rd_en && LATE_RD != 0 && reg_rd_late) begin
            late_reg <= 1'b1;
        end else if (reg_rd_en) begin
            s_axil_rvalid <= 1'b1;
            s_axil_rdata <= reg_rd_data;
            s_axil_rresp <= reg_rd_resp;
        end else if (late_reg) begin
            late_reg <= 1'b0;
            s_axil_rvalid <= 1'b1;
            s_axil_rdata <= reg_rd_late_data;
            s_axil_rresp <= 2'd0;
        end else if (s_axil_rvalid && s_axil_rready) begin
            s_axil_rvalid <= 1'b0;
        end

        if (rst) begin
            aw_full_reg <= 1'b0;
            w_full_reg <= 1'b0;
            s_axil_bvalid <= 1'b0;
            s_axil_rvalid <= 1'b0;
            late_reg <= 1'b0;
        end
    end

`ifdef FORMAL
    // ---------------------------------------------------------------------
    // AXI4-Lite slave properties (yosys -formal; tools/formal.sh proves them).
    // Assumptions describe a legal master; assertions are this slave's duties.
    reg f_past_valid = 1'b0;
    always @(posedge clk) f_past_valid <= 1'b1;
    always @(*) if (!f_past_valid) assume(rst);

    // Requests outstanding: accepted minus answered, per channel. The
    // differences stay small (asserted below), so no cap on the number of
    // handshakes since reset is needed and the induction covers every trace.
    reg [1:0] f_aw, f_w, f_ar;
    // Cycles a fully accepted request (a write's AW and W, or a read) has
    // waited without its response raised: bounded (F_MAX_WAIT).
    localparam integer F_MAX_WAIT = 2;
    reg [2:0] f_bwait, f_rwait;
    wire f_aw_hs = s_axil_awvalid && s_axil_awready, f_w_hs = s_axil_wvalid && s_axil_wready;
    wire f_b_hs = s_axil_bvalid && s_axil_bready, f_ar_hs = s_axil_arvalid && s_axil_arready;
    wire f_r_hs = s_axil_rvalid && s_axil_rready;
    always @(posedge clk) begin
        if (rst) begin
            f_aw <= 0; f_w <= 0; f_ar <= 0; f_bwait <= 0; f_rwait <= 0;
        end else begin
            f_aw <= f_aw + {1'b0, f_aw_hs} - {1'b0, f_b_hs};
            f_w  <= f_w  + {1'b0, f_w_hs} - {1'b0, f_b_hs};
            f_ar <= f_ar + {1'b0, f_ar_hs} - {1'b0, f_r_hs};
            f_bwait <= (f_aw != 0 && f_w != 0 && !s_axil_bvalid) ? f_bwait + 3'd1 : 3'd0;
            f_rwait <= (f_ar != 0 && !s_axil_rvalid) ? f_rwait + 3'd1 : 3'd0;
        end
    end

    // The register block answers OKAY, SLVERR or DECERR (gmc_regs.v).
    always @(*) assume(reg_wr_resp != 2'b01 && reg_rd_resp != 2'b01);

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
        // One response per request: never a response without a request
        // taken at an earlier edge (the counts are registered, so this also
        // refuses a response in the same cycle as its request).
        if (s_axil_bvalid) assert(f_aw != 0 && f_w != 0);
        if (s_axil_rvalid) assert(f_ar != 0);
        assert(f_aw <= 2'd2 && f_w <= 2'd2 && f_ar <= 2'd1);
        // Bounded response: a deadlocked slave fails here.
        assert(f_bwait <= F_MAX_WAIT && f_rwait <= F_MAX_WAIT);
        // No exclusive access: EXOKAY is never an answer.
        if (s_axil_bvalid) assert(s_axil_bresp != 2'b01);
        if (s_axil_rvalid) assert(s_axil_rresp != 2'b01);
        // Internal state agrees with the counts (closes the induction).
        assert(f_aw == {1'b0, aw_full_reg} + {1'b0, s_axil_bvalid});
        assert(f_w == {1'b0, w_full_reg} + {1'b0, s_axil_bvalid});
        assert(f_ar == {1'b0, s_axil_rvalid});
        assert(f_bwait == 3'd0 || (f_bwait == 3'd1 && s_axil_bvalid));
        assert(f_rwait == 3'd0);
    end
    always @(posedge clk) if (f_past_valid && $past(rst)) begin
        assert(!s_axil_bvalid && !s_axil_rvalid);
    end
`endif

endmodule

`resetall
