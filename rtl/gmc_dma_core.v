// gmc: DMA engine control: packet loading, checks, execution, ring head, faults and recovery.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Packets are assembled from the fetch unit's words (one packet is loaded
// ahead while the previous one executes), checked, and executed one at a
// time by starting the translation, source and destination units (or by
// this module itself: MAP/UNMAP_APERTURE, FENCE, INDIRECT). docs/dma.md is
// the specification; gmc_dma_check makes the checks on the packet alone.
//
// A fault stops the engine: the fault registers are loaded, flush aborts
// every unit (the wrapper changes epoch when bus transactions are still
// owed) and the fetch unit is stopped. SKIP restarts fetching after the
// faulting packet; RESET (in any state) restarts it at RING_TAIL.
module gmc_dma_core #(
    parameter integer VRAM_BYTES = 8 * 1024 * 1024,
    parameter [31:0]  APERTURE_BASE = 32'h8000_0000,
    parameter integer APERTURE_PAGES = 4096,
    parameter integer PROT_RANGES = 4,
    // VRAM word address width, derived.
    parameter integer VRAM_AW = $clog2(VRAM_BYTES / 8)
) (
    input  wire                      clk,
    input  wire                      rst,

    // Configuration and commands.
    input  wire                      enable,
    input  wire [47:12]              ring_base,
    input  wire [4:0]                ring_log2,
    input  wire [19:0]               tail,
    input  wire [31:0]               pt_base,
    input  wire [47:12]              dummy_page,
    input  wire [32*PROT_RANGES-1:0] prot_base,
    input  wire [32*PROT_RANGES-1:0] prot_limit,
    input  wire                      cmd_skip,
    input  wire                      cmd_reset,
    input  wire                      timeout,
    input  wire [47:0]               timeout_addr,

    // Abort of every unit (one-cycle pulse).
    output reg                       flush,

    // Fetch unit.
    output reg                       f_restart,
    output reg                       f_restart_drop,
    output reg                       f_restart_ib,
    output reg  [19:0]               f_restart_off,
    output reg  [47:0]               f_restart_ib_addr,
    output reg  [31:0]               f_restart_ib_len,
    input  wire                      fw_valid,
    input  wire [63:0]               fw_data,
    input  wire                      fw_err,
    output wire                      fw_pop,

    // Source and destination translation.
    output reg                       xs_start,
    output reg                       xd_start,
    output reg  [1:0]                xs_kind,
    output reg  [1:0]                xd_kind,
    output reg  [35:0]               xs_page0,
    output reg  [35:0]               xd_page0,
    output reg  [20:0]               xs_npages,
    output reg  [20:0]               xd_npages,
    output reg  [47:0]               xs_mdl,
    output reg  [47:0]               xd_mdl,
    input  wire                      xd_pg_valid,
    input  wire [35:0]               xd_pg_phys,
    input  wire                      xd_pg_fault,
    output wire                      xd_pg_pop,
    input  wire [3:0]                xd_f_code,
    input  wire [47:0]               xd_f_addr,

    // Source side.
    output reg                       rd_start,
    output reg                       rd_vram,
    output reg  [11:0]               rd_so12,
    output reg  [31:0]               rd_len,
    output reg  [1:0]                rd_tgt,
    input  wire [29:0]               rd_pushed,
    input  wire                      rd_sf_valid,
    input  wire [3:0]                rd_sf_code,
    input  wire [47:0]               rd_sf_addr,

    // Destination side.
    output reg                       wr_start,
    output reg                       wr_vram,
    output reg  [11:0]               wr_do12,
    output reg  [31:0]               wr_len,
    output reg  [2:0]                wr_so3,
    output reg                       wr_cmode,
    output reg  [63:0]               wr_cdata,
    output reg                       wr_nocount,
    output reg  [1:0]                wr_tgt,
    input  wire                      wr_done,
    input  wire                      wr_fault,
    input  wire [3:0]                wr_f_code,
    input  wire [47:0]               wr_f_addr,
    input  wire                      wr_idle,

    // Data FIFO head (READ_PHYSICAL).
    input  wire                      fifo_valid,
    input  wire [63:0]               fifo_data,
    output wire                      fifo_pop,

    // VRAM writes of page-table entries; map_active selects this port.
    output wire                      map_active,
    output wire                      cw_req,
    output wire [VRAM_AW-1:0]        cw_addr,
    output wire [63:0]               cw_data,
    input  wire                      cw_gnt,

    // TLB invalidation (one-cycle pulses).
    output reg                       inv_all,
    output reg                       inv_page_valid,
    output reg  [31:0]               inv_page,

    // State for the registers.
    output wire [1:0]                st_state,
    output wire                      st_indirect,
    output reg  [19:0]               head,
    output reg  [63:0]               fence,
    output reg  [7:0]                fault_code,
    output reg                       fault_ind,
    output reg  [47:0]               fault_pkt,
    output reg  [47:0]               fault_addr,
    output reg  [63:0]               read_result,
    output wire                      faulted,
    output reg  [1:0]                ev_packets,
    output reg                       ev_fault,
    output reg                       ev_fence_irq,
    // Nothing to do at the next clock edge while the inputs stay as they are.
    output wire                      quiet
);

    `include "gmc_regs.vh"

    localparam [1:0] K_VRAM = 2'd0, K_BUS = 2'd1, K_AP = 2'd2, K_MDL = 2'd3;
    localparam [1:0] T_VRAM = 2'd0, T_SYS = 2'd1, T_AP = 2'd2;
    localparam [2:0] S_IDLE = 3'd0, S_DECODE = 3'd1, S_XFER = 3'd2, S_RDP = 3'd3,
                     S_MAP = 3'd4, S_FAULTED = 3'd5, S_DRAIN = 3'd6;

    initial begin
        if (VRAM_BYTES < 4096)
            $error("gmc_dma_core: VRAM_BYTES must be >= 4096 (instance %m)");
        if (PROT_RANGES < 1)
            $error("gmc_dma_core: PROT_RANGES must be >= 1 (instance %m)");
    end

    reg [2:0] state_reg;

    // Ring geometry.
    wire [19:0] ring_mask = (20'hFFFFF >> (5'd20 - ring_log2));
    // The tail within the ring: needed only when idle (status) and at a
    // reset command; 0 otherwise.
    reg  [19:0] tail_m;
    always @* begin
        tail_m = 20'd0;
        if (state_reg == S_IDLE || cmd_reset)
            tail_m = tail & ring_mask;
    end

    // -------------------------------------------------------------- loader
    // Assembles four words into the next-packet buffer. Packet positions
    // follow the fetch unit's order: the ring from ld_off, or an indirect
    // buffer from ld_ib_addr for ld_ib_left packets, then the ring again.

    reg          ld_ib_reg;
    reg [19:0]   ld_off_reg, ld_ret_reg;
    reg [47:0]   ld_ib_addr_reg;
    reg [26:0]   ld_ib_left_reg;
    reg [1:0]    asm_cnt_reg;
    reg [191:0]  asm_reg;
    reg          asm_err_reg;

    reg          nxt_valid_reg, nxt_err_reg, nxt_ib_reg, nxt_last_reg;
    reg [255:0]  nxt_reg;
    reg [47:0]   nxt_addr_reg;
    reg [19:0]   nxt_off_reg;
    reg [26:0]   nxt_rem_reg;

    // Faults found this cycle, most urgent first (worked out below).
    reg        do_fault;
    reg [3:0]  new_code;
    reg [47:0] new_addr;

    // The loading packet's address: needed when its last word comes in,
    // and for a fault's context.
    reg  [47:0] ld_addr;
    always @* begin
        ld_addr = 48'd0;
        if (fw_pop || do_fault)
            ld_addr = ld_ib_reg ? ld_ib_addr_reg : ({ring_base, 12'd0} | {28'd0, ld_off_reg});
    end
    // (take, and the map and read-physical conditions below, are worked
    // out in the state that uses them only, 0 in the others.)
    reg take;
    assign fw_pop = fw_valid && !nxt_valid_reg && !f_restart;

    // -------------------------------------------------------------- packet

    reg          pkt_err_reg, pkt_ib_reg, pkt_last_reg;
    reg [63:0]   w0, w1, w2, w3;
    reg [47:0]   pkt_addr_reg;
    reg [19:0]   pkt_off_reg;
    reg [26:0]   pkt_rem_reg;
    reg          in_ib_reg;
    reg [19:0]   ib_off_reg;

    wire [7:0]  op    = w0[7:0];
    wire [7:0]  flags = w0[15:8];
    wire [31:0] len   = w0[63:32];
    wire        f_src_mdl = flags[GMC_PKT_FLAG_SRC_MDL_LSB];
    wire        f_dst_mdl = flags[GMC_PKT_FLAG_DST_MDL_LSB];
    wire        f_gpu     = flags[GMC_PKT_FLAG_GPU_LSB];
    wire        f_poison  = flags[GMC_PKT_FLAG_POISON_LSB];
    wire        f_wmem    = flags[GMC_PKT_FLAG_WRITE_MEM_LSB];
    wire        f_irq     = flags[GMC_PKT_FLAG_IRQ_LSB];

    wire op_nop   = (op == {4'd0, GMC_DMA_OP_NOP});
    wire op_xfer  = (op == {4'd0, GMC_DMA_OP_TRANSFER});
    wire op_fill  = (op == {4'd0, GMC_DMA_OP_FILL});
    wire op_disc  = (op == {4'd0, GMC_DMA_OP_DISCARD});
    wire op_rdp   = (op == {4'd0, GMC_DMA_OP_READ_PHYSICAL});
    wire op_wrp   = (op == {4'd0, GMC_DMA_OP_WRITE_PHYSICAL});
    wire op_map   = (op == {4'd0, GMC_DMA_OP_MAP_APERTURE});
    wire op_unmap = (op == {4'd0, GMC_DMA_OP_UNMAP_APERTURE});
    wire op_flush = (op == {4'd0, GMC_DMA_OP_FLUSH_TLB});
    wire op_fence = (op == {4'd0, GMC_DMA_OP_FENCE});
    wire op_ind   = (op == {4'd0, GMC_DMA_OP_INDIRECT});

    // ----------------------------------------------------------------- checks

    wire [3:0]  pc_code;
    wire [47:0] pc_addr;
    wire        s_vram, d_vram;

    gmc_dma_check #(
        .VRAM_BYTES(VRAM_BYTES), .APERTURE_BASE(APERTURE_BASE), .APERTURE_PAGES(APERTURE_PAGES),
        .PROT_RANGES(PROT_RANGES)
    ) u_check (
        .en(state_reg == S_DECODE),
        .w0(w0), .w1(w1), .w2(w2), .w3(w3), .in_ib(pkt_ib_reg),
        .prot_base(prot_base), .prot_limit(prot_limit), .ranges(6'd0),
        .chk_code(pc_code), .chk_addr(pc_addr), .s_vram(s_vram), .d_vram(d_vram)
    );

    // A packet fetched with an error beat faults before any check.
    wire [3:0]  chk_code = pkt_err_reg ? GMC_DMA_FAULT_BUS : pc_code;
    wire [47:0] chk_addr = pkt_err_reg ? pkt_addr_reg : pc_addr;

    // -------------------------------------------------------- side setup

    // Used only while the packet is decoded (state S_DECODE); 0 otherwise.
    reg [11:0] s12, d12;
    reg [32:0] s_pg_sum, d_pg_sum;
    reg [1:0]  s_kind, d_kind;
    reg [35:0] s_page0, d_page0;
    always @* begin
        s12 = 12'd0;
        d12 = 12'd0;
        s_pg_sum = 33'd0;
        d_pg_sum = 33'd0;
        s_kind = K_VRAM;
        d_kind = K_VRAM;
        s_page0 = 36'd0;
        d_page0 = 36'd0;
        if (state_reg == S_DECODE) begin
            s12 = f_src_mdl ? w3[GMC_PKT_MDL_W3_SRC_OFFSET_LSB +: 12] : w1[11:0];
            d12 = f_dst_mdl ? w3[GMC_PKT_MDL_W3_DST_OFFSET_LSB +: 12] : w2[11:0];
            s_pg_sum = {21'd0, s12} + {1'b0, len} + 33'd4095;
            d_pg_sum = {21'd0, d12} + {1'b0, len} + 33'd4095;
            s_kind = (op_rdp && !f_gpu) ? K_BUS : (op_xfer && f_src_mdl) ? K_MDL : s_vram ? K_VRAM : K_AP;
            d_kind = ((op_wrp && !f_gpu) || op_fence) ? K_BUS : (op_xfer && f_dst_mdl) ? K_MDL
                   : d_vram ? K_VRAM : K_AP;
            s_page0 = (op_xfer && f_src_mdl) ? {16'd0, w3[GMC_PKT_MDL_W3_SRC_PAGE_LSB +: 20]}
                    : (s_kind == K_BUS) ? w1[47:12] : {16'd0, w1[31:12]};
            d_page0 = (op_xfer && f_dst_mdl) ? {16'd0, w3[GMC_PKT_MDL_W3_DST_PAGE_LSB +: 20]}
                    : (d_kind == K_BUS) ? w2[47:12] : {16'd0, w2[31:12]};
        end
    end

    function [1:0] tgt_of;
        input [1:0] k;
        begin
            tgt_of = (k == K_VRAM) ? T_VRAM : (k == K_AP) ? T_AP : T_SYS;
        end
    endfunction

    // -------------------------------------------------------- map / unmap

    reg  [20:0] map_i_reg, map_n_reg;
    reg         map_unmap_reg;
    reg  [63:0] map_flags_reg;
    reg  [31:0] map_apage_reg;
    wire [31:0] map_page = map_apage_reg + {11'd0, map_i_reg};
    reg         map_go, map_fail, cw_req_c;
    wire [47:12] pte_page = map_unmap_reg ? dummy_page : xd_pg_phys;
    assign map_active = (state_reg == S_MAP);
    assign cw_req  = cw_req_c;
    wire [31:0] pte_word = {3'd0, pt_base[31:3]} + map_page;
    assign cw_addr = pte_word[VRAM_AW-1:0];
    assign cw_data = {16'd0, pte_page, 12'd0} | map_flags_reg;
    wire map_wrote = cw_req && cw_gnt;

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, pt_base[2:0], s_pg_sum[11:0], d_pg_sum[11:0], pte_word};
    /* verilator lint_on UNUSEDSIGNAL */
    assign xd_pg_pop = map_wrote && !map_unmap_reg;

    // ------------------------------------------------------ read physical

    // The source side sees rd_start one cycle after S_RDP is entered.
    reg rdp_data, rdp_fail;
    always @* begin
        take = 1'b0;
        map_go = 1'b0;
        map_fail = 1'b0;
        cw_req_c = 1'b0;
        rdp_data = 1'b0;
        rdp_fail = 1'b0;
        case (state_reg)
            S_IDLE: take = enable && nxt_valid_reg && !cmd_reset && !f_restart;
            S_MAP: begin
                map_go   = !xd_start && (map_i_reg != map_n_reg) && !cmd_reset;
                map_fail = map_go && !map_unmap_reg && xd_pg_valid && xd_pg_fault;
                cw_req_c = map_go && (map_unmap_reg || (xd_pg_valid && !xd_pg_fault));
            end
            S_RDP: begin
                rdp_data = !rd_start && fifo_valid && !cmd_reset;
                rdp_fail = !rd_start && !fifo_valid && rd_sf_valid && (rd_pushed == 30'd0) && !cmd_reset;
            end
            default: ;
        endcase
    end
    assign fifo_pop = rdp_data;

    // --------------------------------------------------------------- status

    assign faulted     = (state_reg == S_FAULTED);
    reg [1:0] st_state_c;
    always @* begin
        case (state_reg)
            S_FAULTED: st_state_c = GMC_DMA_STATE_FAULTED[1:0];
            S_IDLE:    st_state_c = (in_ib_reg || (enable && head != tail_m)) ? GMC_DMA_STATE_BUSY[1:0]
                                                                             : GMC_DMA_STATE_IDLE[1:0];
            default:   st_state_c = GMC_DMA_STATE_BUSY[1:0];
        endcase
    end
    assign st_state    = st_state_c;
    assign st_indirect = in_ib_reg;

    // Context of a fault: the executing packet, else the next one. (Worked
    // out only at a fault, below; 0 otherwise.)
    wire exec = (state_reg == S_DECODE) || (state_reg == S_XFER) || (state_reg == S_RDP)
                || (state_reg == S_MAP);
    reg  [47:0] ctx_addr;
    reg         ctx_ib, ctx_last;
    reg  [19:0] ctx_off;
    reg  [26:0] ctx_rem;

    // A packet completes.
    reg complete;
    always @* begin
        complete = 1'b0;
        case (state_reg)
            S_DECODE: complete = (chk_code == GMC_DMA_FAULT_NONE)
                                 && (op_nop || op_flush || (op_disc && !f_poison) || (op_fence && !f_wmem));
            S_XFER:   complete = wr_done;
            S_RDP:    complete = rdp_data;
            S_MAP:    complete = (map_i_reg == map_n_reg);
            default:  complete = 1'b0;
        endcase
        if (cmd_reset)
            complete = 1'b0;
    end

    // Faults found this cycle, most urgent first (declared above).
    always @* begin
        do_fault = 1'b0;
        new_code = GMC_DMA_FAULT_NONE;
        new_addr = 48'd0;
        if (state_reg == S_DECODE && chk_code != GMC_DMA_FAULT_NONE) begin
            do_fault = 1'b1;
            new_code = chk_code;
            new_addr = chk_addr;
        end else if (state_reg == S_XFER && wr_fault) begin
            do_fault = 1'b1;
            new_code = wr_f_code;
            new_addr = wr_f_addr;
        end else if (rdp_fail) begin
            do_fault = 1'b1;
            new_code = rd_sf_code;
            new_addr = rd_sf_addr;
        end else if (map_fail) begin
            do_fault = 1'b1;
            new_code = xd_f_code;
            new_addr = xd_f_addr;
        end else if (timeout && !complete && state_reg != S_FAULTED && state_reg != S_DRAIN) begin
            do_fault = 1'b1;
            new_code = GMC_DMA_FAULT_TIMEOUT;
            new_addr = timeout_addr;
        end
        if (cmd_reset)
            do_fault = 1'b0;
    end

    always @* begin
        ctx_addr = 48'd0;
        ctx_ib = 1'b0;
        ctx_last = 1'b0;
        ctx_off = 20'd0;
        ctx_rem = 27'd0;
        if (do_fault) begin
            if (exec) begin
                ctx_addr = pkt_addr_reg;
                ctx_ib = pkt_ib_reg;
                ctx_last = pkt_last_reg;
                ctx_off = pkt_off_reg;
                ctx_rem = pkt_rem_reg;
            end else if (nxt_valid_reg) begin
                ctx_addr = nxt_addr_reg;
                ctx_ib = nxt_ib_reg;
                ctx_last = nxt_last_reg;
                ctx_off = nxt_off_reg;
                ctx_rem = nxt_rem_reg;
            end else begin
                ctx_addr = ld_addr;
                ctx_ib = ld_ib_reg;
                ctx_last = ld_ib_reg && (ld_ib_left_reg == 27'd1);
                ctx_off = ld_off_reg;
                ctx_rem = ld_ib_left_reg - 27'd1;
            end
        end
    end

    // The ring offsets after the packet: needed when it completes, when it
    // is an INDIRECT (decoded), and when a fault is skipped (worked out
    // only then; 0 otherwise).
    reg [19:0] pkt_next_off, ib_next_off;
    always @* begin
        pkt_next_off = 20'd0;
        ib_next_off = 20'd0;
        if (complete || state_reg == S_DECODE || state_reg == S_FAULTED) begin
            pkt_next_off = (pkt_off_reg + 20'd32) & ring_mask;
            ib_next_off = (ib_off_reg + 20'd32) & ring_mask;
        end
    end

    // ------------------------------------------------------ next state
    // Each part of the unit (the loader, the packet and its execution, the
    // fault registers, the commands to the other units) has its control
    // registers as X_reg (or the output X) with X_next worked out in one
    // always @* block, and its data registers loaded by store_* strobes
    // worked out there too (the verilog-axi style). Within a block later
    // rules win, in the order: loading, take, the state's own step,
    // completion, a fault, RESET, so that a fault overrides a completion in
    // the same cycle and RESET overrides both. The clocked block below only
    // loads the _next values and the stored data, and applies rst.

    // Whether the decoded packet passed its checks; a SKIP command in the
    // faulted state, inside a buffer with packets left or not.
    wire dec_ok     = (state_reg == S_DECODE) && (chk_code == GMC_DMA_FAULT_NONE);
    wire dec_ind    = dec_ok && op_ind;
    wire skip       = (state_reg == S_FAULTED) && cmd_skip;
    wire skip_in_ib = pkt_ib_reg && !pkt_last_reg;
    // Where the ring continues after a skipped packet.
    wire [19:0] skip_off = pkt_ib_reg ? ib_next_off : pkt_next_off;

    // Loader. Data: a word into the assembly register at each pop, the
    // whole packet into the next-packet buffer at its fourth.
    wire         store_asm = fw_pop;
    wire         store_nxt = fw_pop && (asm_cnt_reg == 2'd3);
    reg          ld_ib_next;
    reg [19:0]   ld_off_next, ld_ret_next;
    reg [47:0]   ld_ib_addr_next;
    reg [26:0]   ld_ib_left_next;
    reg [1:0]    asm_cnt_next;
    reg          asm_err_next;
    reg          nxt_valid_next;

    always @* begin
        ld_ib_next = ld_ib_reg;
        ld_off_next = ld_off_reg;
        ld_ret_next = ld_ret_reg;
        ld_ib_addr_next = ld_ib_addr_reg;
        ld_ib_left_next = ld_ib_left_reg;
        asm_cnt_next = asm_cnt_reg;
        asm_err_next = asm_err_reg;
        nxt_valid_next = nxt_valid_reg;

        // The loader moves only on a fetched word, a take, an INDIRECT,
        // SKIP, a fault or RESET.
        if (store_asm || take || dec_ind || skip || do_fault || cmd_reset) begin
            if (store_asm) begin
                asm_err_next = asm_err_reg || fw_err;
                asm_cnt_next = asm_cnt_reg + 2'd1;
            end
            if (store_nxt) begin
                nxt_valid_next = 1'b1;
                asm_err_next = 1'b0;
                if (ld_ib_reg) begin
                    ld_ib_addr_next = ld_ib_addr_reg + 48'd32;
                    ld_ib_left_next = ld_ib_left_reg - 27'd1;
                    if (ld_ib_left_reg == 27'd1) begin
                        ld_ib_next = 1'b0;
                        ld_off_next = ld_ret_reg;
                    end
                end else begin
                    ld_off_next = (ld_off_reg + 20'd32) & ring_mask;
                end
            end
            if (take)
                nxt_valid_next = 1'b0;
            // An INDIRECT: load the buffer's packets, then the ring after it.
            if (dec_ind) begin
                ld_ib_next = 1'b1;
                ld_ib_addr_next = w1[47:0];
                ld_ib_left_next = len[31:5];
                ld_ret_next = pkt_next_off;
                nxt_valid_next = 1'b0;
                asm_cnt_next = 2'd0;
                asm_err_next = 1'b0;
            end
            // SKIP: load again after the faulting packet.
            if (skip) begin
                asm_cnt_next = 2'd0;
                asm_err_next = 1'b0;
                nxt_valid_next = 1'b0;
                if (skip_in_ib) begin
                    ld_ib_next = 1'b1;
                    ld_ib_addr_next = pkt_addr_reg + 48'd32;
                    ld_ib_left_next = pkt_rem_reg;
                    ld_ret_next = ib_next_off;
                end else begin
                    ld_ib_next = 1'b0;
                    ld_off_next = skip_off;
                end
            end
            if (do_fault) begin
                nxt_valid_next = 1'b0;
                asm_cnt_next = 2'd0;
                asm_err_next = 1'b0;
            end
            if (cmd_reset) begin
                ld_ib_next = 1'b0;
                ld_off_next = tail_m;
                nxt_valid_next = 1'b0;
                asm_cnt_next = 2'd0;
                asm_err_next = 1'b0;
            end
        end
    end

    // Packet and execution. Data: the packet and its context at a take
    // (the context again at a fault), a fence value, a read result, the
    // mapping's parameters when a MAP or UNMAP is decoded.
    wire         store_fence  = (dec_ok && op_fence && !f_wmem) || (state_reg == S_XFER && wr_done && op_fence);
    wire         store_result = (state_reg == S_RDP) && rdp_data;
    wire         store_map    = dec_ok && (op_map || op_unmap);
    reg [2:0]    state_next;
    reg          in_ib_next;
    reg [19:0]   ib_off_next;
    reg [19:0]   head_next;
    reg [20:0]   map_i_next;

    always @* begin
        state_next = state_reg;
        in_ib_next = in_ib_reg;
        ib_off_next = ib_off_reg;
        head_next = head;
        map_i_next = map_i_reg;

        // While a transfer runs only its completion, a fault or RESET
        // moves the packet's state.
        if (state_reg != S_XFER || complete || do_fault || cmd_reset) begin
            if (take)
                state_next = S_DECODE;
            case (state_reg)
                S_DECODE: begin
                    if (chk_code == GMC_DMA_FAULT_NONE) begin
                        if (op_xfer || op_fill || (op_disc && f_poison) || op_wrp || (op_fence && f_wmem))
                            state_next = S_XFER;
                        if (op_rdp)
                            state_next = S_RDP;
                        if (op_map || op_unmap) begin
                            map_i_next = 21'd0;
                            state_next = S_MAP;
                        end
                        if (op_ind) begin
                            // Run the buffer; the ring continues after it.
                            in_ib_next = 1'b1;
                            ib_off_next = pkt_off_reg;
                            state_next = S_IDLE;
                        end
                    end
                end
                S_MAP: begin
                    if (map_wrote)
                        map_i_next = map_i_reg + 21'd1;
                end
                S_DRAIN: begin
                    if (wr_idle)
                        state_next = S_IDLE;
                end
                S_FAULTED: begin
                    if (cmd_skip) begin
                        if (!skip_in_ib) begin
                            head_next = skip_off;
                            in_ib_next = 1'b0;
                        end
                        state_next = S_DRAIN;
                    end
                end
                default: ;
            endcase
            if (complete) begin
                state_next = S_IDLE;
                if (!pkt_ib_reg)
                    head_next = pkt_next_off;
                if (pkt_ib_reg && pkt_last_reg) begin
                    head_next = ib_next_off;
                    in_ib_next = 1'b0;
                end
            end
            if (do_fault)
                state_next = S_FAULTED;
            if (cmd_reset) begin
                head_next = tail_m;
                in_ib_next = 1'b0;
                state_next = S_DRAIN;
            end
        end
    end

    // Fault registers: loaded at a fault, cleared by SKIP and RESET (a
    // fault and RESET never come together: do_fault excludes cmd_reset).
    wire store_fault = do_fault;
    wire clear_fault = skip || cmd_reset;

    // Commands to the other units: one-cycle pulses (flush, the restart and
    // start strobes, invalidations, events) as _next, and the values they
    // carry: the fetch restart's, stored with it; both sides' set-up,
    // stored when a packet passes its checks; the invalidated page.
    wire         store_setup = dec_ok;
    wire         store_inv   = (state_reg == S_MAP) && map_wrote;
    reg          flush_next, f_restart_next, f_restart_drop_next, f_restart_ib_next;
    reg [19:0]   f_restart_off_next;
    reg [47:0]   f_restart_ib_addr_next;
    reg [31:0]   f_restart_ib_len_next;
    reg          xs_start_next, xd_start_next, rd_start_next, wr_start_next;
    reg          inv_all_next, inv_page_valid_next;
    reg [1:0]    ev_packets_next;
    reg          ev_fault_next, ev_fence_irq_next;

    always @* begin
        flush_next = 1'b0;
        f_restart_next = 1'b0;
        f_restart_drop_next = f_restart_drop;
        f_restart_ib_next = f_restart_ib;
        f_restart_off_next = f_restart_off;
        f_restart_ib_addr_next = f_restart_ib_addr;
        f_restart_ib_len_next = f_restart_ib_len;
        xs_start_next = 1'b0;
        xd_start_next = 1'b0;
        rd_start_next = 1'b0;
        wr_start_next = 1'b0;
        inv_all_next = 1'b0;
        inv_page_valid_next = store_inv;
        ev_packets_next = 2'd0;
        ev_fault_next = 1'b0;
        ev_fence_irq_next = 1'b0;

        // Commands come only from a decoded packet, a stored fence, SKIP,
        // a completion, a fault or RESET.
        if (dec_ok || store_fence || skip || complete || do_fault || cmd_reset) begin
            if (dec_ok) begin
                // Start the units the packet uses.
                if (op_xfer) begin
                    xs_start_next = 1'b1;
                    xd_start_next = 1'b1;
                    rd_start_next = 1'b1;
                    wr_start_next = 1'b1;
                end
                if (op_fill || (op_disc && f_poison) || op_wrp || (op_fence && f_wmem)) begin
                    xd_start_next = 1'b1;
                    wr_start_next = 1'b1;
                end
                if (op_rdp) begin
                    xs_start_next = 1'b1;
                    rd_start_next = 1'b1;
                end
                if (op_map)
                    xd_start_next = 1'b1;
                if (op_flush)
                    inv_all_next = 1'b1;
                if (op_ind) begin
                    f_restart_next = 1'b1;
                    f_restart_drop_next = 1'b1;
                    f_restart_ib_next = 1'b1;
                    f_restart_off_next = pkt_next_off;
                    f_restart_ib_addr_next = w1[47:0];
                    f_restart_ib_len_next = len;
                end
            end
            if (store_fence)
                ev_fence_irq_next = f_irq;
            if (skip) begin
                f_restart_next = 1'b1;
                f_restart_drop_next = 1'b0;
                if (skip_in_ib) begin
                    // Resume inside the buffer.
                    f_restart_ib_next = 1'b1;
                    f_restart_off_next = ib_next_off;
                    f_restart_ib_addr_next = pkt_addr_reg + 48'd32;
                    f_restart_ib_len_next = {pkt_rem_reg, 5'd0};
                end else begin
                    f_restart_ib_next = 1'b0;
                    f_restart_off_next = skip_off;
                    if (pkt_ib_reg)
                        ev_packets_next = 2'd1;
                end
            end
            if (complete)
                ev_packets_next = (pkt_ib_reg && pkt_last_reg) ? 2'd2 : 2'd1;
            if (do_fault) begin
                ev_fault_next = 1'b1;
                ev_packets_next = 2'd0;
                flush_next = 1'b1;
                // Stop fetching: an empty indirect buffer.
                f_restart_next = 1'b1;
                f_restart_drop_next = 1'b0;
                f_restart_ib_next = 1'b1;
                f_restart_ib_len_next = 32'd0;
            end
            if (cmd_reset) begin
                flush_next = 1'b1;
                f_restart_next = 1'b1;
                f_restart_drop_next = 1'b0;
                f_restart_ib_next = 1'b0;
                f_restart_off_next = tail_m;
                ev_packets_next = 2'd0;
            end
        end
    end

    // ---------------------------------------------------------- registers

    always @(posedge clk) begin
        // Loader.
        ld_ib_reg <= ld_ib_next;
        ld_off_reg <= ld_off_next;
        ld_ret_reg <= ld_ret_next;
        ld_ib_addr_reg <= ld_ib_addr_next;
        ld_ib_left_reg <= ld_ib_left_next;
        asm_cnt_reg <= asm_cnt_next;
        asm_err_reg <= asm_err_next;
        nxt_valid_reg <= nxt_valid_next;
        if (store_asm)
            asm_reg <= {fw_data, asm_reg[191:64]};
        if (store_nxt) begin
            nxt_reg <= {fw_data, asm_reg};
            nxt_err_reg <= asm_err_reg || fw_err;
            nxt_addr_reg <= ld_addr;
            nxt_ib_reg <= ld_ib_reg;
            nxt_last_reg <= ld_ib_reg && (ld_ib_left_reg == 27'd1);
            nxt_off_reg <= ld_off_reg;
            nxt_rem_reg <= ld_ib_left_reg - 27'd1;
        end

        // Packet and execution.
        state_reg <= state_next;
        in_ib_reg <= in_ib_next;
        ib_off_reg <= ib_off_next;
        head <= head_next;
        map_i_reg <= map_i_next;
        if (take) begin
            {w3, w2, w1, w0} <= nxt_reg;
            pkt_err_reg <= nxt_err_reg;
            pkt_addr_reg <= nxt_addr_reg;
            pkt_ib_reg <= nxt_ib_reg;
            pkt_last_reg <= nxt_last_reg;
            pkt_off_reg <= nxt_off_reg;
            pkt_rem_reg <= nxt_rem_reg;
        end
        // A fault keeps its packet's context, for SKIP.
        if (do_fault) begin
            pkt_addr_reg <= ctx_addr;
            pkt_ib_reg <= ctx_ib;
            pkt_last_reg <= ctx_last;
            pkt_off_reg <= ctx_off;
            pkt_rem_reg <= ctx_rem;
        end
        if (store_fence)
            fence <= w3;
        if (store_result)
            read_result <= (fifo_data >> {w1[2:0], 3'd0})
                           & ((len[3:0] == 4'd8) ? 64'hFFFF_FFFF_FFFF_FFFF
                              : ~(64'hFFFF_FFFF_FFFF_FFFF << {len[2:0], 3'd0}));
        if (store_map) begin
            map_n_reg <= len[20:0];
            map_unmap_reg <= op_unmap;
            map_apage_reg <= (w2[31:0] - APERTURE_BASE) >> 12;
            map_flags_reg <= op_unmap
                ? (GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK)
                : (GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK
                   | (w3[GMC_PKT_MAP_W3_SNOOPED_LSB] ? GMC_PTE_SNOOPED_MASK : 64'd0)
                   | (w3[GMC_PKT_MAP_W3_READABLE_LSB] ? GMC_PTE_READABLE_MASK : 64'd0)
                   | (w3[GMC_PKT_MAP_W3_WRITEABLE_LSB] ? GMC_PTE_WRITEABLE_MASK : 64'd0));
        end

        // Fault registers.
        if (clear_fault) begin
            fault_code <= 8'd0;
            fault_ind <= 1'b0;
            fault_pkt <= 48'd0;
            fault_addr <= 48'd0;
        end
        if (store_fault) begin
            fault_code <= {4'd0, new_code};
            fault_ind <= ctx_ib;
            fault_pkt <= ctx_addr;
            fault_addr <= new_addr;
        end

        // Commands.
        flush <= flush_next;
        f_restart <= f_restart_next;
        f_restart_drop <= f_restart_drop_next;
        f_restart_ib <= f_restart_ib_next;
        f_restart_off <= f_restart_off_next;
        f_restart_ib_addr <= f_restart_ib_addr_next;
        f_restart_ib_len <= f_restart_ib_len_next;
        xs_start <= xs_start_next;
        xd_start <= xd_start_next;
        rd_start <= rd_start_next;
        wr_start <= wr_start_next;
        inv_all <= inv_all_next;
        inv_page_valid <= inv_page_valid_next;
        ev_packets <= ev_packets_next;
        ev_fault <= ev_fault_next;
        ev_fence_irq <= ev_fence_irq_next;
        if (store_inv)
            inv_page <= map_page;
        if (store_setup) begin
            xs_kind <= s_kind;
            xs_page0 <= s_page0;
            xs_npages <= op_rdp ? 21'd1 : s_pg_sum[32:12];
            xs_mdl <= w1[47:0];
            xd_kind <= (op_map || op_unmap) ? K_MDL : d_kind;
            xd_page0 <= op_map ? {16'd0, w3[GMC_PKT_MAP_W3_MDL_PAGE_LSB +: 20]} : d_page0;
            xd_npages <= op_map ? len[20:0] : op_fence ? 21'd1 : d_pg_sum[32:12];
            xd_mdl <= op_map ? w1[47:0] : w2[47:0];
            rd_vram <= (s_kind == K_VRAM);
            rd_so12 <= s12;
            rd_len <= len;
            rd_tgt <= tgt_of(s_kind);
            wr_vram <= (d_kind == K_VRAM);
            wr_do12 <= op_fence ? w2[11:0] : d12;
            wr_len <= op_fence ? 32'd8 : len;
            wr_so3 <= s12[2:0];
            wr_cmode <= !op_xfer;
            wr_cdata <= op_fill ? {w3[31:0], w3[31:0]} : op_disc ? {2{32'hDEADBEEF}}
                      : op_wrp ? (w3 << {w2[2:0], 3'd0}) : w3;
            wr_nocount <= op_fence;
            wr_tgt <= tgt_of(d_kind);
        end

        if (rst) begin
            state_reg <= S_IDLE;
            flush <= 1'b0;
            f_restart <= 1'b0;
            f_restart_drop <= 1'b0;
            f_restart_ib <= 1'b0;
            f_restart_off <= 20'd0;
            f_restart_ib_addr <= 48'd0;
            f_restart_ib_len <= 32'd0;
            ld_ib_reg <= 1'b0;
            ld_off_reg <= 20'd0;
            ld_ret_reg <= 20'd0;
            ld_ib_addr_reg <= 48'd0;
            ld_ib_left_reg <= 27'd0;
            asm_cnt_reg <= 2'd0;
            asm_err_reg <= 1'b0;
            nxt_valid_reg <= 1'b0;
            in_ib_reg <= 1'b0;
            ib_off_reg <= 20'd0;
            head <= 20'd0;
            fence <= 64'd0;
            fault_code <= 8'd0;
            fault_ind <= 1'b0;
            fault_pkt <= 48'd0;
            fault_addr <= 48'd0;
            read_result <= 64'd0;
            map_i_reg <= 21'd0;
            map_n_reg <= 21'd0;
            inv_all <= 1'b0;
            inv_page_valid <= 1'b0;
            ev_packets <= 2'd0;
            ev_fault <= 1'b0;
            ev_fence_irq <= 1'b0;
        end
    end

    // ---------------------------------------------------------------- quiet

    // Idle or faulted with no packet to take, nothing arriving from the
    // fetch unit and no pulse to clear: with unchanged inputs the next
    // clock edge leaves every register of this unit as it is.
    assign quiet = ((state_reg == S_IDLE && !(enable && nxt_valid_reg)) || state_reg == S_FAULTED)
                   && !fw_valid && !flush && !f_restart && !xs_start && !xd_start && !rd_start
                   && !wr_start && !inv_all && !inv_page_valid && (ev_packets == 2'd0) && !ev_fault
                   && !ev_fence_irq;

endmodule

`resetall
