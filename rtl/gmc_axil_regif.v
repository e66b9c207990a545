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

endmodule

`resetall
