// gmc: UART bridge: host packets to gmc_top's register and aperture slaves,
// gmc_top's DMA master forwarded to the host. docs/uart-bridge.md is the spec.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Three independent engines share one serial link:
//   command   REG_RD/REG_WR (AXI4-Lite master), AP_RD/AP_WR (one 64-bit
//             beat on the AXI4 aperture master), PING, DMA_ABORT. One
//             command at a time; each gets exactly one reply or ERR. The
//             slave's response is held (RREADY/BREADY low) until its reply
//             packet has been sent, so the reply needs no copy.
//   DMA read  an AR burst from gmc_top is sent upstream as DMA_RD_REQ; the
//             host answers with one DMA_RD_DATA packet per beat, which goes
//             through a one-beat holding register onto R.
//   DMA write an AW burst is sent as DMA_WR_REQ, each W beat as DMA_WR_DATA;
//             the host answers DMA_WR_RESP, which becomes B. W beats are
//             copied into a replay window (one block RAM) as they are
//             taken and kept until the host acknowledges them (DMA_WR_ACK),
//             so a DMA_WR_DATA damaged on the way up is sent again; W
//             stalls (WREADY low) while the window is full.
// The AR and AW fields of the bursts in flight are latched, so a request
// packet damaged on the way up is sent again when the host asks
// (DMA_REQ_AGAIN). The receive path never waits on the DMA engines or the
// transmitter: a packet that cannot be taken is answered with ERR. A host
// that never answers a DMA request stalls only that DMA engine; DMA_ABORT
// completes the stalled burst with SLVERR.
module gmc_uart_bridge #(
    // Clock cycles per UART bit (clock / baud), at least 4.
    parameter integer CLKS_PER_BIT = 4,
    // Inter-byte timeout inside a received frame: 2^TIMEOUT_LOG2 cycles.
    parameter integer TIMEOUT_LOG2 = 17,
    // AXI ID widths: aperture master, DMA slave.
    parameter integer M_ID_WIDTH = 4,
    parameter integer S_ID_WIDTH = 4,
    // Write replay window: 2^WIN_LOG2 beats of 16 bytes (strobe + 8 data
    // bytes used) in a 8-bit wide RAM: WIN_LOG2 = 5 is 512 bytes (one
    // iCE40 RAM4K), 6 is two. docs/uart-bridge.md sizes it for the link.
    parameter integer WIN_LOG2 = 6
) (
    input  wire                  clk,
    input  wire                  rst,

    // ---------------------------------------------------------- serial link
    input  wire                  rxd,
    output wire                  txd,

    // ------------------------------------- AXI4-Lite master to the registers
    output wire [15:0]           m_axil_awaddr,
    output wire [2:0]            m_axil_awprot,
    output wire                  m_axil_awvalid,
    input  wire                  m_axil_awready,
    output wire [31:0]           m_axil_wdata,
    output wire [3:0]            m_axil_wstrb,
    output wire                  m_axil_wvalid,
    input  wire                  m_axil_wready,
    input  wire [1:0]            m_axil_bresp,
    input  wire                  m_axil_bvalid,
    output wire                  m_axil_bready,
    output wire [15:0]           m_axil_araddr,
    output wire [2:0]            m_axil_arprot,
    output wire                  m_axil_arvalid,
    input  wire                  m_axil_arready,
    input  wire [31:0]           m_axil_rdata,
    input  wire [1:0]            m_axil_rresp,
    input  wire                  m_axil_rvalid,
    output wire                  m_axil_rready,

    // ----------------------------------------- AXI4 master to the aperture
    output wire [M_ID_WIDTH-1:0] m_axi_awid,
    output wire [31:0]           m_axi_awaddr,
    output wire [7:0]            m_axi_awlen,
    output wire [2:0]            m_axi_awsize,
    output wire [1:0]            m_axi_awburst,
    output wire                  m_axi_awlock,
    output wire [3:0]            m_axi_awcache,
    output wire [2:0]            m_axi_awprot,
    output wire                  m_axi_awvalid,
    input  wire                  m_axi_awready,
    output wire [63:0]           m_axi_wdata,
    output wire [7:0]            m_axi_wstrb,
    output wire                  m_axi_wlast,
    output wire                  m_axi_wvalid,
    input  wire                  m_axi_wready,
    input  wire [M_ID_WIDTH-1:0] m_axi_bid,
    input  wire [1:0]            m_axi_bresp,
    input  wire                  m_axi_bvalid,
    output wire                  m_axi_bready,
    output wire [M_ID_WIDTH-1:0] m_axi_arid,
    output wire [31:0]           m_axi_araddr,
    output wire [7:0]            m_axi_arlen,
    output wire [2:0]            m_axi_arsize,
    output wire [1:0]            m_axi_arburst,
    output wire                  m_axi_arlock,
    output wire [3:0]            m_axi_arcache,
    output wire [2:0]            m_axi_arprot,
    output wire                  m_axi_arvalid,
    input  wire                  m_axi_arready,
    input  wire [M_ID_WIDTH-1:0] m_axi_rid,
    input  wire [63:0]           m_axi_rdata,
    input  wire [1:0]            m_axi_rresp,
    input  wire                  m_axi_rlast,
    input  wire                  m_axi_rvalid,
    output wire                  m_axi_rready,

    // --------------------------------- AXI4 slave for the DMA master (to host)
    input  wire [S_ID_WIDTH-1:0] s_axi_awid,
    input  wire [47:0]           s_axi_awaddr,
    input  wire [7:0]            s_axi_awlen,
    input  wire [2:0]            s_axi_awsize,
    input  wire [1:0]            s_axi_awburst,
    input  wire                  s_axi_awlock,
    input  wire [3:0]            s_axi_awcache,
    input  wire [2:0]            s_axi_awprot,
    input  wire                  s_axi_awvalid,
    output wire                  s_axi_awready,
    input  wire [63:0]           s_axi_wdata,
    input  wire [7:0]            s_axi_wstrb,
    input  wire                  s_axi_wlast,
    input  wire                  s_axi_wvalid,
    output wire                  s_axi_wready,
    output wire [S_ID_WIDTH-1:0] s_axi_bid,
    output wire [1:0]            s_axi_bresp,
    output wire                  s_axi_bvalid,
    input  wire                  s_axi_bready,
    input  wire [S_ID_WIDTH-1:0] s_axi_arid,
    input  wire [47:0]           s_axi_araddr,
    input  wire [7:0]            s_axi_arlen,
    input  wire [2:0]            s_axi_arsize,
    input  wire [1:0]            s_axi_arburst,
    input  wire                  s_axi_arlock,
    input  wire [3:0]            s_axi_arcache,
    input  wire [2:0]            s_axi_arprot,
    input  wire                  s_axi_arvalid,
    output wire                  s_axi_arready,
    output wire [S_ID_WIDTH-1:0] s_axi_rid,
    output wire [63:0]           s_axi_rdata,
    output wire [1:0]            s_axi_rresp,
    output wire                  s_axi_rlast,
    output wire                  s_axi_rvalid,
    input  wire                  s_axi_rready,

    // ------------------------------------------------------------- misc
    // Interrupt level from gmc_top; changes are reported upstream.
    input  wire                  irq,
    // One-cycle pulse per packet received or sent (for an activity LED).
    output wire                  activity
);

    // ------------------------------------------------------------ protocol

    // Opcodes, payload lengths, ERR codes and the version: spec/bridge.toml
    // (generated; replies are the command opcode | 0x80). ERR codes 1, 2, 4
    // and 5 come from the packet receiver.
    `include "gmc_bridge.vh"
    localparam integer MAX_LEN = BRIDGE_MAX_LEN;

    localparam [1:0] RESP_SLVERR = 2'd2;

    // Command engine.
    localparam [1:0] C_IDLE = 2'd0, C_ISSUE = 2'd1, C_WAIT = 2'd2, C_REPLY = 2'd3;
    // DMA read engine.
    localparam [1:0] R_IDLE = 2'd0, R_DATA = 2'd2;
    // DMA write engine.
    localparam [2:0] W_IDLE = 3'd0, W_DATA = 3'd2, W_B = 3'd4;
    localparam [31:0] WIN_LOG2_32 = WIN_LOG2;
    localparam [7:0]  WIN_LOG2_8 = WIN_LOG2_32[7:0];
    // Transmit sources, in priority order.
    localparam [2:0] SRC_REPLY = 3'd0, SRC_ERR = 3'd1, SRC_IRQ = 3'd2, SRC_RD_REQ = 3'd3,
                     SRC_WR_REQ = 3'd4, SRC_WR_DATA = 3'd5;

    initial begin
        if (M_ID_WIDTH < 1 || M_ID_WIDTH > 8 || S_ID_WIDTH < 1 || S_ID_WIDTH > 8)
            $error("gmc_uart_bridge: ID widths must be 1..8 (instance %m)");
        if (WIN_LOG2 < 1 || WIN_LOG2 > 8)
            $error("gmc_uart_bridge: WIN_LOG2 must be 1..8 (instance %m)");
    end

    // Payload length of each host-to-board opcode; 4'hF: unknown opcode.
    function [3:0] req_len;
        input [7:0] op;
        begin
            case (op)
                OP_REG_RD:      req_len = LEN_REG_RD;
                OP_REG_WR:      req_len = LEN_REG_WR;
                OP_AP_RD:       req_len = LEN_AP_RD;
                OP_AP_WR:       req_len = LEN_AP_WR;
                OP_PING:        req_len = LEN_PING;
                OP_DMA_ABORT:   req_len = LEN_DMA_ABORT;
                OP_DMA_RD_DATA: req_len = LEN_DMA_RD_DATA;
                OP_DMA_WR_RESP: req_len = LEN_DMA_WR_RESP;
                OP_DMA_WR_ACK:  req_len = LEN_DMA_WR_ACK;
                OP_DMA_REQ_AGAIN: req_len = LEN_DMA_REQ_AGAIN;
                default:        req_len = 4'hF;
            endcase
        end
    endfunction

    function [7:0] byte32;
        input [31:0] v;
        input [1:0]  i;
        begin
            byte32 = v[8*i +: 8];
        end
    endfunction

    function [7:0] byte64;
        input [63:0] v;
        input [2:0]  i;
        begin
            byte64 = v[8*i +: 8];
        end
    endfunction

    // ------------------------------------------------------------- receive

    wire [7:0] rx_data;
    wire       rx_valid, rx_ready, rx_frame_err, rx_overrun;

    gmc_uart_rx #(
        .CLKS_PER_BIT(CLKS_PER_BIT)
    ) u_rx (
        .clk(clk), .rst(rst), .rxd(rxd),
        .m_data(rx_data), .m_valid(rx_valid), .m_ready(rx_ready),
        .frame_err(rx_frame_err), .overrun(rx_overrun)
    );

    wire                 pkt_valid;
    wire [2:0]           pkt_err;
    wire [7:0]           pkt_op, pkt_len;
    wire [8*MAX_LEN-1:0] pkt_buf;
    reg  [1:0]           cmd_state_reg;

    gmc_bridge_pkt_rx #(
        .MAX_LEN(MAX_LEN), .TIMEOUT_LOG2(TIMEOUT_LOG2)
    ) u_pkt_rx (
        .clk(clk), .rst(rst),
        .s_data(rx_data), .s_valid(rx_valid), .s_ready(rx_ready), .s_frame_err(rx_frame_err),
        .hold(cmd_state_reg == C_ISSUE),
        .pkt_valid(pkt_valid), .pkt_err(pkt_err), .pkt_op(pkt_op), .pkt_len(pkt_len),
        .pkt_buf(pkt_buf)
    );

    // Payload fields: with LEN = L, byte i is at pkt_buf[8*(14-L+i)]. The
    // last byte of every command is its SEQ and the last byte of
    // DMA_RD_DATA, DMA_WR_RESP and DMA_WR_ACK its burst TAG: all at
    // pkt_buf[104 +: 8].
    wire [15:0] f_reg_rd_addr  = pkt_buf[88 +: 16];  // REG_RD      L=3
    wire [15:0] f_reg_wr_addr  = pkt_buf[48 +: 16];  // REG_WR      L=8
    wire [31:0] f_reg_wr_data  = pkt_buf[64 +: 32];
    wire [3:0]  f_reg_wr_strb  = pkt_buf[96 +: 4];
    wire [31:0] f_ap_rd_addr   = pkt_buf[72 +: 32];  // AP_RD       L=5
    wire [31:0] f_ap_wr_addr   = pkt_buf[0 +: 32];   // AP_WR       L=14
    wire [7:0]  f_ap_wr_strb   = pkt_buf[32 +: 8];
    wire [63:0] f_ap_wr_data   = pkt_buf[40 +: 64];
    wire [7:0]  f_ping_nonce   = pkt_buf[104 +: 8];  // PING        L=1
    wire [7:0]  f_seq          = pkt_buf[104 +: 8];  // other commands
    wire [7:0]  f_rd_beat      = pkt_buf[24 +: 8];   // DMA_RD_DATA L=11
    wire [1:0]  f_rd_resp      = pkt_buf[32 +: 2];
    wire [63:0] f_rd_data      = pkt_buf[40 +: 64];
    wire [7:0]  f_rd_tag       = pkt_buf[104 +: 8];
    wire [1:0]  f_wr_resp      = pkt_buf[96 +: 2];   // DMA_WR_RESP L=2
    wire [7:0]  f_wr_tag       = pkt_buf[104 +: 8];
    wire [7:0]  f_ack_beat     = pkt_buf[88 +: 8];   // DMA_WR_ACK  L=3
    wire [7:0]  f_ack_flags    = pkt_buf[96 +: 8];
    wire [7:0]  f_ack_tag      = pkt_buf[104 +: 8];
    wire [7:0]  f_dir          = pkt_buf[104 +: 8];  // DMA_REQ_AGAIN L=1

    // ----------------------------------------------------------- state

    // Command engine.
    reg  [2:0]  cmd_op_reg;        // low bits of the command opcode
    reg  [7:0]  cmd_nonce_reg;     // PING nonce, or the command's SEQ
    reg         cmd_aw_done_reg, cmd_w_done_reg;
    // Exactly once: the SEQ, opcode and AXI response of the last command
    // whose reply was sent. A write or DMA_ABORT that comes again with that
    // SEQ (its reply was lost on the way) is not executed again: the stored
    // response is replayed. Reads are executed again (no side effects).
    reg  [7:0]  last_seq_reg;
    reg  [2:0]  last_op_reg;
    reg  [1:0]  last_resp_reg;
    reg         last_valid_reg;
    reg         replay_reg;

    // ERR slot: one pending report; later ones are counted as lost.
    reg         err_valid_reg;
    reg  [3:0]  err_code_reg;
    reg  [7:0]  err_op_reg;
    reg  [7:0]  err_tag_reg;       // last payload byte of the refused frame (its SEQ or TAG)
    reg         err_lost_reg, overrun_reg;

    // IRQ level last reported upstream.
    reg         irq_sent_reg;

    // DMA read engine.
    reg  [1:0]            rd_state_reg;
    // Burst TAG: counts read bursts; DMA_RD_REQ carries it and every
    // DMA_RD_DATA must carry it back, so a beat resent for an earlier burst
    // is refused (ERR STATE) instead of landing in the next one.
    reg  [7:0]            rd_tag_reg;
    reg  [S_ID_WIDTH-1:0] rd_id_reg;
    reg  [47:0]           rd_addr_reg;
    reg  [7:0]            rd_len_reg;
    reg  [2:0]            rd_size_reg;
    reg  [1:0]            rd_burst_reg;
    reg                   rd_req_pend_reg; // DMA_RD_REQ (again) to be sent
    reg  [8:0]            rd_next_reg;    // next beat expected from the host
    reg                   rd_abort_reg;
    reg                   r_valid_reg, r_last_reg;
    reg  [63:0]           r_data_reg;
    reg  [1:0]            r_resp_reg;

    // DMA write engine.
    reg  [2:0]            wr_state_reg;
    // Write burst TAG, as rd_tag_reg: a DMA_WR_RESP sent again (its first
    // copy was damaged) is refused once its burst has been answered.
    reg  [7:0]            wr_tag_reg;
    reg  [S_ID_WIDTH-1:0] wr_id_reg;
    reg  [47:0]           wr_addr_reg;
    reg  [7:0]            wr_len_reg;
    reg  [2:0]            wr_size_reg;
    reg  [1:0]            wr_burst_reg;
    reg                   wr_req_pend_reg; // DMA_WR_REQ (again) to be sent
    // Replay window, in beats of the burst: wr_ack_reg <= wr_send_reg <=
    // wr_in_reg <= AWLEN + 1 and wr_in_reg - wr_ack_reg <= 2^WIN_LOG2.
    // Beats [ack, in) are in the window (slot = beat mod 2^WIN_LOG2);
    // wr_send_reg is the next one to send (moved back by a resend).
    reg  [8:0]            wr_in_reg;       // beats taken from W
    reg  [8:0]            wr_send_reg;     // next beat to send upstream
    reg  [7:0]            wr_ack_reg;      // every beat below it acknowledged
    reg  [3:0]            cap_idx_reg;     // byte of the W beat being copied (0 strobe, 1-8 data)
    reg  [7:0]            tx_wbeat_reg;    // beat of the DMA_WR_DATA being sent
    reg                   wr_abort_reg;
    reg  [1:0]            b_resp_reg;

    // Transmitter: the source of the packet being sent, the one picked to
    // go next (upstream priority) and the start pulse.
    reg  [2:0]  tx_src_reg;
    wire        tx_idle, tx_done;
    reg  [2:0]  pick_src;
    reg  [7:0]  pick_op;
    reg  [3:0]  pick_len;
    wire        tx_start;

    wire [7:0] status = {3'd0, err_lost_reg, overrun_reg, wr_state_reg != W_IDLE,
                         rd_state_reg != R_IDLE, irq};

    // --------------------------------------------------- packet dispatch

    wire [3:0] exp_len = req_len(pkt_op);
    wire       is_cmd  = (pkt_op[7:3] == 5'd0) && (pkt_op[2:0] != 3'd0) && (pkt_op[2:0] != 3'd7);

    reg        h_err, h_cmd, h_rd_load, h_wr_resp, h_wr_ack, h_rd_again, h_wr_again;
    reg  [3:0] h_code;

    always @* begin
        h_err = 1'b0;
        h_code = 4'd0;
        h_cmd = 1'b0;
        h_rd_load = 1'b0;
        h_wr_resp = 1'b0;
        h_wr_ack = 1'b0;
        h_rd_again = 1'b0;
        h_wr_again = 1'b0;
        if (pkt_valid) begin
            if (pkt_err != 3'd0) begin
                h_err = 1'b1;
                h_code = {1'b0, pkt_err};
            end else if (exp_len == 4'hF) begin
                h_err = 1'b1;
                h_code = E_OPCODE;
            end else if (pkt_len != {4'd0, exp_len}) begin
                h_err = 1'b1;
                h_code = 4'd2;
            end else if (is_cmd) begin
                if (cmd_state_reg != C_IDLE) begin
                    h_err = 1'b1;
                    h_code = E_BUSY;
                end else begin
                    h_cmd = 1'b1;
                end
            end else if (pkt_op == OP_DMA_RD_DATA) begin
                if (rd_state_reg != R_DATA || rd_abort_reg || f_rd_tag != rd_tag_reg) begin
                    h_err = 1'b1;
                    h_code = E_STATE;
                end else if ({1'b0, f_rd_beat} != rd_next_reg) begin
                    h_err = 1'b1;
                    h_code = E_SEQ;
                end else if (r_valid_reg) begin
                    h_err = 1'b1;
                    h_code = E_BUSY;
                end else begin
                    h_rd_load = 1'b1;
                end
            end else if (pkt_op == OP_DMA_WR_ACK) begin
                // Acknowledges beats [0, beat): beat must lie between the
                // last acknowledgement and the beats taken so far.
                if (wr_state_reg != W_DATA || wr_abort_reg || f_ack_tag != wr_tag_reg) begin
                    h_err = 1'b1;
                    h_code = E_STATE;
                end else if (f_ack_beat < wr_ack_reg || {1'b0, f_ack_beat} > wr_in_reg) begin
                    h_err = 1'b1;
                    h_code = E_SEQ;
                end else begin
                    h_wr_ack = 1'b1;
                end
            end else if (pkt_op == OP_DMA_REQ_AGAIN) begin
                if (f_dir == C_DIR_READ && rd_state_reg == R_DATA)
                    h_rd_again = 1'b1;
                else if (f_dir == C_DIR_WRITE && wr_state_reg == W_DATA)
                    h_wr_again = 1'b1;
                else begin
                    h_err = 1'b1;
                    h_code = E_STATE;
                end
            end else begin
                // DMA_WR_RESP: only once every beat has been taken from W.
                if (wr_state_reg != W_DATA || wr_abort_reg || f_wr_tag != wr_tag_reg
                    || wr_in_reg != {1'b0, wr_len_reg} + 9'd1) begin
                    h_err = 1'b1;
                    h_code = E_STATE;
                end else begin
                    h_wr_resp = 1'b1;
                end
            end
        end
    end

    // ------------------------------------------------------ command engine

    wire op_reg_rd = (cmd_op_reg == OP_REG_RD[2:0]);
    wire op_reg_wr = (cmd_op_reg == OP_REG_WR[2:0]);
    wire op_ap_rd  = (cmd_op_reg == OP_AP_RD[2:0]);
    wire op_ap_wr  = (cmd_op_reg == OP_AP_WR[2:0]);
    wire op_ping   = (cmd_op_reg == OP_PING[2:0]);
    // The command just received repeats the last one answered (same SEQ and
    // opcode): a write or abort is answered from last_resp_reg.
    wire repeat_now = last_valid_reg && (f_seq == last_seq_reg) && (pkt_op[2:0] == last_op_reg)
                   && (pkt_op == OP_REG_WR || pkt_op == OP_AP_WR || pkt_op == OP_DMA_ABORT);
    wire issuing   = (cmd_state_reg == C_ISSUE);
    wire reply_done = tx_done && (tx_src_reg == SRC_REPLY);

    assign m_axil_awaddr  = f_reg_wr_addr;
    assign m_axil_awprot  = 3'b000;
    assign m_axil_awvalid = issuing && op_reg_wr && !cmd_aw_done_reg;
    assign m_axil_wdata   = f_reg_wr_data;
    assign m_axil_wstrb   = f_reg_wr_strb;
    assign m_axil_wvalid  = issuing && op_reg_wr && !cmd_w_done_reg;
    assign m_axil_bready  = reply_done && op_reg_wr && !replay_reg;
    assign m_axil_araddr  = f_reg_rd_addr;
    assign m_axil_arprot  = 3'b000;
    assign m_axil_arvalid = issuing && op_reg_rd;
    assign m_axil_rready  = reply_done && op_reg_rd;

    assign m_axi_awid    = {M_ID_WIDTH{1'b0}};
    assign m_axi_awaddr  = f_ap_wr_addr;
    assign m_axi_awlen   = 8'd0;
    assign m_axi_awsize  = 3'd3;
    assign m_axi_awburst = 2'd1;
    assign m_axi_awlock  = 1'b0;
    assign m_axi_awcache = 4'b0000;
    assign m_axi_awprot  = 3'b000;
    assign m_axi_awvalid = issuing && op_ap_wr && !cmd_aw_done_reg;
    assign m_axi_wdata   = f_ap_wr_data;
    assign m_axi_wstrb   = f_ap_wr_strb;
    assign m_axi_wlast   = 1'b1;
    assign m_axi_wvalid  = issuing && op_ap_wr && !cmd_w_done_reg;
    assign m_axi_bready  = reply_done && op_ap_wr && !replay_reg;
    assign m_axi_arid    = {M_ID_WIDTH{1'b0}};
    assign m_axi_araddr  = f_ap_rd_addr;
    assign m_axi_arlen   = 8'd0;
    assign m_axi_arsize  = 3'd3;
    assign m_axi_arburst = 2'd1;
    assign m_axi_arlock  = 1'b0;
    assign m_axi_arcache = 4'b0000;
    assign m_axi_arprot  = 3'b000;
    assign m_axi_arvalid = issuing && op_ap_rd;
    assign m_axi_rready  = reply_done && op_ap_rd;

    // Address and data phases of the current command, done by the end of this cycle.
    wire aw_done = cmd_aw_done_reg || (m_axil_awvalid && m_axil_awready)
                                   || (m_axi_awvalid && m_axi_awready);
    wire w_done  = cmd_w_done_reg || (m_axil_wvalid && m_axil_wready)
                                  || (m_axi_wvalid && m_axi_wready);
    wire issued  = (op_reg_rd && m_axil_arready) || (op_ap_rd && m_axi_arready)
                || ((op_reg_wr || op_ap_wr) && aw_done && w_done);
    wire resp_in = (op_reg_rd && m_axil_rvalid) || (op_reg_wr && m_axil_bvalid)
                || (op_ap_rd && m_axi_rvalid) || (op_ap_wr && m_axi_bvalid);

    always @(posedge clk) begin
        case (cmd_state_reg)
            C_IDLE: begin
                if (h_cmd) begin
                    cmd_op_reg <= pkt_op[2:0];
                    cmd_nonce_reg <= f_ping_nonce;
                    cmd_aw_done_reg <= 1'b0;
                    cmd_w_done_reg <= 1'b0;
                    replay_reg <= repeat_now;
                    cmd_state_reg <= (pkt_op == OP_PING || pkt_op == OP_DMA_ABORT || repeat_now) ? C_REPLY
                                                                                                 : C_ISSUE;
                end
            end
            C_ISSUE: begin
                cmd_aw_done_reg <= aw_done;
                cmd_w_done_reg <= w_done;
                if (issued)
                    cmd_state_reg <= C_WAIT;
            end
            C_WAIT: begin
                if (resp_in)
                    cmd_state_reg <= C_REPLY;
            end
            default: begin
                if (reply_done)
                    cmd_state_reg <= C_IDLE;
            end
        endcase

        // Remember what was answered (PING has no SEQ and changes nothing).
        if (reply_done && !op_ping && !replay_reg) begin
            last_seq_reg <= cmd_nonce_reg;
            last_op_reg <= cmd_op_reg;
            last_resp_reg <= op_reg_wr ? m_axil_bresp : op_ap_wr ? m_axi_bresp : 2'd0;
            last_valid_reg <= 1'b1;
        end

        if (rst) begin
            cmd_state_reg <= C_IDLE;
            replay_reg <= 1'b0;
            last_valid_reg <= 1'b0;
            last_seq_reg <= 8'd0;
        end
    end

    // ------------------------------------------------- ERR slot and flags

    wire err_done = tx_done && (tx_src_reg == SRC_ERR);

    always @(posedge clk) begin
        if (err_done)
            err_valid_reg <= 1'b0;
        if (h_err) begin
            if (!err_valid_reg || err_done) begin
                err_valid_reg <= 1'b1;
                err_code_reg <= h_code;
                err_op_reg <= pkt_op;
                err_tag_reg <= pkt_buf[104 +: 8];
            end else begin
                err_lost_reg <= 1'b1;
            end
        end
        if (rx_overrun)
            overrun_reg <= 1'b1;
        // PING reports the sticky flags and clears them.
        if (reply_done && op_ping) begin
            err_lost_reg <= 1'b0;
            overrun_reg <= 1'b0;
        end

        if (rst) begin
            err_valid_reg <= 1'b0;
            err_lost_reg <= 1'b0;
            overrun_reg <= 1'b0;
        end
    end

    // ----------------------------------------------------- DMA read engine

    wire abort_now = h_cmd && (pkt_op == OP_DMA_ABORT) && !repeat_now;
    wire tx_busy_src_rd = !tx_idle && (tx_src_reg == SRC_RD_REQ);
    wire rdreq_done = tx_done && (tx_src_reg == SRC_RD_REQ);
    // Aborted: the bridge fills the remaining beats itself with SLVERR.
    wire rd_fill = rd_abort_reg && !r_valid_reg && (rd_next_reg <= {1'b0, rd_len_reg});

    // AR is taken (and latched) at once when no read burst is in flight;
    // not while a DMA_RD_REQ is being sent, whose bytes come from the
    // latched fields.
    assign s_axi_arready = (rd_state_reg == R_IDLE) && !tx_busy_src_rd;
    assign s_axi_rid     = rd_id_reg;
    assign s_axi_rdata   = r_data_reg;
    assign s_axi_rresp   = r_resp_reg;
    assign s_axi_rlast   = r_last_reg;
    assign s_axi_rvalid  = r_valid_reg;

    always @(posedge clk) begin
        if (rdreq_done)
            rd_req_pend_reg <= 1'b0;
        if (h_rd_again)
            rd_req_pend_reg <= 1'b1;
        case (rd_state_reg)
            R_IDLE: begin
                if (s_axi_arvalid && s_axi_arready) begin
                    rd_tag_reg <= rd_tag_reg + 8'd1;
                    rd_id_reg <= s_axi_arid;
                    rd_addr_reg <= s_axi_araddr;
                    rd_len_reg <= s_axi_arlen;
                    rd_size_reg <= s_axi_arsize;
                    rd_burst_reg <= s_axi_arburst;
                    rd_next_reg <= 9'd0;
                    rd_abort_reg <= 1'b0;
                    rd_req_pend_reg <= 1'b1;
                    rd_state_reg <= R_DATA;
                end
            end
            default: begin
                if (s_axi_rvalid && s_axi_rready) begin
                    r_valid_reg <= 1'b0;
                    if (r_last_reg) begin
                        rd_state_reg <= R_IDLE;
                        rd_req_pend_reg <= 1'b0;
                    end
                end
                if (h_rd_load || rd_fill) begin
                    r_valid_reg <= 1'b1;
                    r_data_reg <= h_rd_load ? f_rd_data : 64'd0;
                    r_resp_reg <= h_rd_load ? f_rd_resp : RESP_SLVERR;
                    r_last_reg <= (rd_next_reg[7:0] == rd_len_reg);
                    rd_next_reg <= rd_next_reg + 9'd1;
                end
                if (abort_now)
                    rd_abort_reg <= 1'b1;
            end
        endcase

        if (rst) begin
            rd_state_reg <= R_IDLE;
            rd_abort_reg <= 1'b0;
            rd_req_pend_reg <= 1'b0;
            r_valid_reg <= 1'b0;
            rd_next_reg <= 9'd0;
            rd_tag_reg <= 8'd0;
        end
    end

    // ---------------------------------------------------- DMA write engine

    localparam integer WIN = 1 << WIN_LOG2;
    localparam [31:0]  WIN32 = WIN;
    localparam [8:0]   WIN9 = WIN32[8:0];

    wire tx_busy_src_wr = !tx_idle && (tx_src_reg == SRC_WR_REQ || tx_src_reg == SRC_WR_DATA);
    wire wrreq_done = tx_done && (tx_src_reg == SRC_WR_REQ);
    wire [8:0] wr_end = {1'b0, wr_len_reg} + 9'd1;   // beats in the burst
    wire wr_all_in = (wr_in_reg == wr_end);
    // A W beat is copied into the window one byte per cycle (9 cycles);
    // WREADY rises with its last byte. W stalls while the window is full.
    wire wr_room = (wr_in_reg - {1'b0, wr_ack_reg}) < WIN9;
    wire cap_en = (wr_state_reg == W_DATA) && !wr_abort_reg && !wr_all_in && wr_room && s_axi_wvalid;
    // Aborted: remaining beats are taken without being copied or sent.
    wire wr_drain = (wr_state_reg == W_DATA) && wr_abort_reg && !wr_all_in && s_axi_wvalid;

    // AW is taken at once when no write burst is in flight, except while a
    // DMA_WR_REQ or DMA_WR_DATA is being sent (their bytes come from the
    // latched fields, the TAG and the window).
    assign s_axi_awready = (wr_state_reg == W_IDLE) && !tx_busy_src_wr;
    assign s_axi_wready  = (cap_en && cap_idx_reg == 4'd8) || wr_drain;
    assign s_axi_bid     = wr_id_reg;
    assign s_axi_bresp   = b_resp_reg;
    assign s_axi_bvalid  = (wr_state_reg == W_B);

    // The window RAM: written by the capture, read by the transmitter with
    // one cycle of latency (registered output, as the iCE40 RAM4K). The
    // transmitter asks for the next payload byte when the UART has taken
    // the previous one, which keeps the UART busy for 10 * CLKS_PER_BIT
    // cycles, so the registered byte is always ready in time.
    reg  [7:0] win_q;
    wire [3:0] tx_idx;
    wire [3:0] tx_idx_m1 = tx_idx - 4'd1;
    wire [WIN_LOG2+3:0] win_waddr = {wr_in_reg[WIN_LOG2-1:0], cap_idx_reg};
    wire [WIN_LOG2+3:0] win_raddr = {tx_wbeat_reg[WIN_LOG2-1:0], tx_idx_m1};
    wire [3:0] cap_m1 = cap_idx_reg - 4'd1;
    wire [7:0] win_wdata = (cap_idx_reg == 4'd0) ? s_axi_wstrb : byte64(s_axi_wdata, cap_m1[2:0]);

    // Up to 4 beats the window is built from flip-flops (ram_style
    // "logic"), for a device whose block RAMs are all taken; from 8 beats
    // on it is block RAM.
    generate
        if (WIN_LOG2 <= 2) begin : g_win_ff
            (* ram_style = "logic" *) reg [7:0] win_mem [0:16*WIN-1];
            always @(posedge clk) begin
                if (cap_en)
                    win_mem[win_waddr] <= win_wdata;
                win_q <= win_mem[win_raddr];
            end
        end else begin : g_win_bram
            reg [7:0] win_mem [0:16*WIN-1];
            always @(posedge clk) begin
                if (cap_en)
                    win_mem[win_waddr] <= win_wdata;
                win_q <= win_mem[win_raddr];
            end
        end
    endgenerate

    always @(posedge clk) begin
        if (wrreq_done)
            wr_req_pend_reg <= 1'b0;
        if (h_wr_again)
            wr_req_pend_reg <= 1'b1;
        case (wr_state_reg)
            W_IDLE: begin
                if (s_axi_awvalid && s_axi_awready) begin
                    wr_tag_reg <= wr_tag_reg + 8'd1;
                    wr_id_reg <= s_axi_awid;
                    wr_addr_reg <= s_axi_awaddr;
                    wr_len_reg <= s_axi_awlen;
                    wr_size_reg <= s_axi_awsize;
                    wr_burst_reg <= s_axi_awburst;
                    wr_in_reg <= 9'd0;
                    wr_send_reg <= 9'd0;
                    wr_ack_reg <= 8'd0;
                    cap_idx_reg <= 4'd0;
                    wr_abort_reg <= 1'b0;
                    wr_req_pend_reg <= 1'b1;
                    wr_state_reg <= W_DATA;
                end
            end
            W_DATA: begin
                if (cap_en)
                    cap_idx_reg <= (cap_idx_reg == 4'd8) ? 4'd0 : cap_idx_reg + 4'd1;
                if (s_axi_wvalid && s_axi_wready)
                    wr_in_reg <= wr_in_reg + 9'd1;
                // A DMA_WR_DATA starts: it carries wr_send_reg.
                if (tx_start && pick_src == SRC_WR_DATA)
                    wr_send_reg <= wr_send_reg + 9'd1;
                // Acknowledged up to f_ack_beat; with RESEND (or when the
                // send pointer is behind it) go on from that beat.
                if (h_wr_ack) begin
                    wr_ack_reg <= f_ack_beat;
                    if ((f_ack_flags & C_WR_ACK_RESEND) != 8'd0 || wr_send_reg < {1'b0, f_ack_beat})
                        wr_send_reg <= {1'b0, f_ack_beat};
                end
                if (abort_now) begin
                    wr_abort_reg <= 1'b1;
                    cap_idx_reg <= 4'd0;
                end
                if (wr_abort_reg && wr_all_in) begin
                    b_resp_reg <= RESP_SLVERR;
                    wr_state_reg <= W_B;
                end else if (h_wr_resp) begin
                    b_resp_reg <= f_wr_resp;
                    wr_state_reg <= W_B;
                end
            end
            default: begin
                if (s_axi_bready)
                    wr_state_reg <= W_IDLE;
            end
        endcase

        if (rst) begin
            wr_state_reg <= W_IDLE;
            wr_abort_reg <= 1'b0;
            wr_req_pend_reg <= 1'b0;
            wr_tag_reg <= 8'd0;
        end
    end

    // --------------------------------------------------------- transmit

    wire req_reply  = (cmd_state_reg == C_REPLY);
    wire req_err    = err_valid_reg;
    wire req_irq    = (irq != irq_sent_reg);
    wire req_rdreq  = (rd_state_reg == R_DATA) && rd_req_pend_reg;
    wire req_wrreq  = (wr_state_reg == W_DATA) && wr_req_pend_reg;
    wire req_wrdata = (wr_state_reg == W_DATA) && !wr_abort_reg && (wr_send_reg < wr_in_reg);

    always @* begin
        pick_src = SRC_REPLY;
        pick_op = {5'b10000, cmd_op_reg};
        case (cmd_op_reg)
            OP_REG_RD[2:0]: pick_len = LEN_REG_RD_REPLY;
            OP_REG_WR[2:0]: pick_len = LEN_REG_WR_REPLY;
            OP_AP_RD[2:0]:  pick_len = LEN_AP_RD_REPLY;
            OP_AP_WR[2:0]:  pick_len = LEN_AP_WR_REPLY;
            OP_PING[2:0]:   pick_len = LEN_PING_REPLY;
            default:        pick_len = LEN_DMA_ABORT_REPLY;
        endcase
        if (!req_reply) begin
            if (req_err) begin
                pick_src = SRC_ERR;
                pick_op = OP_ERR;
                pick_len = LEN_ERR;
            end else if (req_irq) begin
                pick_src = SRC_IRQ;
                pick_op = OP_IRQ;
                pick_len = LEN_IRQ;
            end else if (req_rdreq) begin
                pick_src = SRC_RD_REQ;
                pick_op = OP_DMA_RD_REQ;
                pick_len = LEN_DMA_RD_REQ;
            end else if (req_wrreq) begin
                pick_src = SRC_WR_REQ;
                pick_op = OP_DMA_WR_REQ;
                pick_len = LEN_DMA_WR_REQ;
            end else begin
                pick_src = SRC_WR_DATA;
                pick_op = OP_DMA_WR_DATA;
                pick_len = LEN_DMA_WR_DATA;
            end
        end
    end

    assign tx_start = tx_idle && (req_reply || req_err || req_irq || req_rdreq || req_wrreq || req_wrdata);

    always @(posedge clk) begin
        if (tx_start) begin
            tx_src_reg <= pick_src;
            if (pick_src == SRC_IRQ)
                irq_sent_reg <= irq;
            if (pick_src == SRC_WR_DATA)
                tx_wbeat_reg <= wr_send_reg[7:0];
        end

        if (rst)
            irq_sent_reg <= 1'b0;
    end

    // Payload bytes of the packet being sent, straight from their sources.
    reg  [7:0] tx_byte;

    always @* begin
        tx_byte = 8'd0;
        case (tx_src_reg)
            SRC_REPLY: begin
                // Every reply ends with the command's SEQ (PING: the last
                // SEQ answered, so a host that restarts can tell).
                case (cmd_op_reg)
                    OP_REG_RD[2:0]: tx_byte = (tx_idx == 4'd0) ? {6'd0, m_axil_rresp}
                                            : (tx_idx == 4'd5) ? cmd_nonce_reg
                                            : byte32(m_axil_rdata, tx_idx_m1[1:0]);
                    OP_REG_WR[2:0]: tx_byte = (tx_idx == 4'd1) ? cmd_nonce_reg
                                            : {6'd0, replay_reg ? last_resp_reg : m_axil_bresp};
                    OP_AP_RD[2:0]:  tx_byte = (tx_idx == 4'd0) ? {6'd0, m_axi_rresp}
                                            : (tx_idx == 4'd9) ? cmd_nonce_reg
                                            : byte64(m_axi_rdata, tx_idx_m1[2:0]);
                    OP_AP_WR[2:0]:  tx_byte = (tx_idx == 4'd1) ? cmd_nonce_reg
                                            : {6'd0, replay_reg ? last_resp_reg : m_axi_bresp};
                    // PING: nonce, version, STATUS, last SEQ, window size.
                    OP_PING[2:0]:   tx_byte = (tx_idx == 4'd0) ? cmd_nonce_reg
                                            : (tx_idx == 4'd1) ? BRIDGE_VERSION
                                            : (tx_idx == 4'd2) ? status
                                            : (tx_idx == 4'd3) ? last_seq_reg : WIN_LOG2_8;
                    default:        tx_byte = (tx_idx == 4'd1) ? cmd_nonce_reg : status;
                endcase
            end
            SRC_ERR: begin
                case (tx_idx[2:0])
                    3'd0: tx_byte = {4'd0, err_code_reg};
                    3'd1: tx_byte = err_op_reg;
                    3'd2: tx_byte = rd_next_reg[7:0];
                    3'd3: tx_byte = status;
                    3'd4: tx_byte = rd_tag_reg;
                    3'd5: tx_byte = wr_tag_reg;
                    default: tx_byte = err_tag_reg;
                endcase
            end
            SRC_IRQ: tx_byte = {7'd0, irq_sent_reg};
            SRC_RD_REQ, SRC_WR_REQ: begin
                // From the latched AR/AW fields: the same bytes every time
                // the request is sent.
                case (tx_idx)
                    4'd0: tx_byte = (tx_src_reg == SRC_RD_REQ) ? {{(8 - S_ID_WIDTH){1'b0}}, rd_id_reg}
                                                               : {{(8 - S_ID_WIDTH){1'b0}}, wr_id_reg};
                    4'd7: tx_byte = (tx_src_reg == SRC_RD_REQ) ? rd_len_reg : wr_len_reg;
                    4'd8: tx_byte = {5'd0, (tx_src_reg == SRC_RD_REQ) ? rd_size_reg : wr_size_reg};
                    4'd9: tx_byte = {6'd0, (tx_src_reg == SRC_RD_REQ) ? rd_burst_reg : wr_burst_reg};
                    4'd10: tx_byte = (tx_src_reg == SRC_RD_REQ) ? rd_tag_reg : wr_tag_reg;
                    default: tx_byte = byte64((tx_src_reg == SRC_RD_REQ) ? {16'd0, rd_addr_reg}
                                                                         : {16'd0, wr_addr_reg},
                                              tx_idx_m1[2:0]);
                endcase
            end
            default: begin
                // DMA_WR_DATA: beat, strobe and data from the window, TAG.
                case (tx_idx)
                    4'd0: tx_byte = tx_wbeat_reg;
                    4'd10: tx_byte = wr_tag_reg;
                    default: tx_byte = win_q;
                endcase
            end
        endcase
    end
    wire [7:0] tx_data;
    wire       tx_valid, tx_ready;

    gmc_bridge_pkt_tx #(
        .LEN_WIDTH(4)
    ) u_pkt_tx (
        .clk(clk), .rst(rst),
        .start_valid(tx_start), .start_ready(tx_idle), .start_op(pick_op), .start_len(pick_len),
        .byte_idx(tx_idx), .byte_data(tx_byte), .done(tx_done),
        .m_data(tx_data), .m_valid(tx_valid), .m_ready(tx_ready)
    );

    gmc_uart_tx #(
        .CLKS_PER_BIT(CLKS_PER_BIT)
    ) u_tx (
        .clk(clk), .rst(rst),
        .s_data(tx_data), .s_valid(tx_valid), .s_ready(tx_ready),
        .txd(txd)
    );

    assign activity = pkt_valid || tx_done;

    // Inputs the bridge does not need: IDs and RLAST of its own single-beat
    // aperture accesses, WLAST (the burst length decides), attributes.
    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, m_axi_bid, m_axi_rid, m_axi_rlast, s_axi_wlast, s_axi_awlock,
                    s_axi_awcache, s_axi_awprot, s_axi_arlock, s_axi_arcache, s_axi_arprot,
                    cap_m1[3]};
    /* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
