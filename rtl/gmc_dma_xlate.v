// gmc: per-page address translation for one side of a DMA operation, ahead of the data.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// A side is a run of npages 4 KiB pages. This unit produces, in order, one
// entry per page: the physical page (VRAM page or bus page, bits 47:12) or
// a fault. It runs up to QDEPTH entries ahead of its consumer.
//   VRAM, BUS  identity: page0 + i.
//   APERTURE   a GART request for GPU page page0 + i, one at a time; the
//              PTE must be VALID and SYSTEM (else PTE_INVALID) and grant
//              the access (else PTE_PERM).
//   MDL        entry page0 + i of the MDL at mdl_base, read over AXI in
//              bursts of up to MDL_BURST entries that never cross an
//              (8 * MDL_BURST)-byte boundary of the MDL and cover only the
//              entries the side needs; a burst is requested only when all
//              of its entries have room. An error beat faults that entry
//              (BUS, the burst's address).
// After a fault entry nothing more is produced; f_code and f_addr hold the
// fault until the next start.
module gmc_dma_xlate #(
    // Entries buffered ahead, a power of two >= 2 * MDL_BURST.
    parameter integer QDEPTH = 8,
    // Entries per MDL burst, a power of two >= 1.
    parameter integer MDL_BURST = 4
) (
    input  wire          clk,
    input  wire          rst,

    input  wire          start,
    input  wire          flush,
    input  wire [1:0]    kind,
    input  wire [35:0]   page0,
    input  wire [20:0]   npages,
    input  wire [47:0]   mdl_base,
    input  wire          write,

    // Page entries, first-word-fall-through.
    output wire          pg_valid,
    output wire [35:0]   pg_phys,
    output wire          pg_fault,
    input  wire          pg_pop,
    output reg  [3:0]    f_code,
    output reg  [47:0]   f_addr,

    // GART requester.
    output wire          g_req_valid,
    input  wire          g_req_ready,
    output wire [31:0]   g_req_addr,
    output wire          g_req_write,
    input  wire          g_resp_valid,
    input  wire          g_resp_fault,
    input  wire [3:0]    g_resp_code,
    input  wire [47:0]   g_resp_addr,
    input  wire          g_resp_system,

    // MDL reads.
    output wire          ar_valid,
    input  wire          ar_ready,
    output wire [47:0]   ar_addr,
    output wire [7:0]    ar_len,
    input  wire [7:0]    ar_seq,
    input  wire          r_valid,
    input  wire [63:0]   r_data,
    input  wire [1:0]    r_resp,
    input  wire          r_last,

    output wire          old_valid,
    output wire [7:0]    old_seq,
    output wire [47:0]   old_addr,

    // Nothing to request, in flight or queued.
    output wire          quiet
);

    `include "gmc_regs.vh"

    localparam [1:0] K_VRAM = 2'd0, K_BUS = 2'd1, K_AP = 2'd2, K_MDL = 2'd3;
    localparam integer QAW = $clog2(QDEPTH);
    localparam integer BL = (MDL_BURST > 1) ? $clog2(MDL_BURST) : 0;
    localparam integer TQD = (QDEPTH / MDL_BURST > 1) ? QDEPTH / MDL_BURST : 2;

    initial begin
        if (MDL_BURST < 1 || MDL_BURST > 64 || (MDL_BURST & (MDL_BURST - 1)) != 0)
            $error("gmc_dma_xlate: MDL_BURST must be a power of two 1..64 (instance %m)");
        if (QDEPTH < 2 * MDL_BURST || QDEPTH > 256)
            $error("gmc_dma_xlate: QDEPTH must be 2 * MDL_BURST .. 256 (instance %m)");
    end

    reg          run_reg, dead_reg, gpend_reg, write_reg;
    reg [1:0]    kind_reg;
    reg [47:0]   cur_reg;       // identity/GART: next page; MDL: next entry's bus address
    reg [20:0]   left_reg;      // pages not yet requested
    reg [8:0]    resv_reg;      // entries requested, not yet in the queue
    reg [19:0]   gpage_reg;     // GART: page of the request in flight

    wire [QAW:0] q_count;
    wire [8:0]   m_beats;
    wire tq_full, tq_empty;
    wire [55:0] tq_head;
    wire [$clog2(TQD):0] tq_count;

    // MDL: a burst up to the next (8 * MDL_BURST)-byte boundary.
    wire [7:0] blk_off;
    generate
        if (BL > 0) begin : g_blk
            assign blk_off = {{(8 - BL){1'b0}}, cur_reg[3 +: BL]};
        end else begin : g_noblk
            assign blk_off = 8'd0;
        end
    endgenerate

    // Requests: the next page, once there is room for it. Worked out only
    // while the side runs, and the kind's request only when there is room
    // (0 otherwise, in most cycles: a side stays a queue ahead of its
    // consumer).
    reg  [9:0] room;
    reg        go, id_push, g_req_c, ar_c;
    reg  [8:0] blk_left, m_beats_c;
    always @* begin
        room = 10'd0;
        go = 1'b0;
        id_push = 1'b0;
        g_req_c = 1'b0;
        ar_c = 1'b0;
        blk_left = 9'd0;
        m_beats_c = 9'd0;
        if (run_reg) begin
            room = QDEPTH[9:0] - {{(9 - QAW){1'b0}}, q_count} - {1'b0, resv_reg};
            go = !dead_reg && (left_reg != 21'd0) && !flush && !start;
            if (go && room != 10'd0) begin
                case (kind_reg)
                    K_AP: g_req_c = !gpend_reg;
                    K_MDL: begin
                        blk_left = MDL_BURST[8:0] - {1'b0, blk_off};
                        m_beats_c = (left_reg < {12'd0, blk_left}) ? left_reg[8:0] : blk_left;
                        ar_c = ({1'b0, m_beats_c} <= room) && !tq_full;
                    end
                    K_VRAM, K_BUS: id_push = 1'b1;   // identity
                endcase
            end
        end
    end
    assign m_beats = m_beats_c;

    // GART.
    assign g_req_valid = g_req_c;
    assign g_req_addr  = {cur_reg[19:0], 12'd0};
    assign g_req_write = write_reg;
    wire g_take = g_req_valid && g_req_ready;
    wire g_resp = g_resp_valid && gpend_reg && !flush;
    wire g_bad  = g_resp_fault || !g_resp_system;

    // MDL reads.
    assign ar_valid = ar_c;
    assign ar_addr  = cur_reg;
    assign ar_len   = m_beats[7:0] - 8'd1;
    wire m_take = ar_valid && ar_ready;
    wire m_beat = r_valid && run_reg && !dead_reg && !flush;
    wire m_bad  = (r_resp != 2'd0);

    // Queue pushes.
    reg        q_push;
    reg [36:0] q_data;
    always @* begin
        q_push = 1'b0;
        q_data = {1'b0, cur_reg[35:0]};
        if (id_push) begin
            q_push = 1'b1;
        end else if (g_resp) begin
            q_push = 1'b1;
            q_data = {g_bad, g_resp_addr[47:12]};
        end else if (m_beat) begin
            q_push = 1'b1;
            q_data = {m_bad, r_data[47:12]};
        end
    end

    always @(posedge clk) begin
        if (id_push) begin
            cur_reg <= cur_reg + 48'd1;
            left_reg <= left_reg - 21'd1;
        end
        if (g_take) begin
            gpend_reg <= 1'b1;
            gpage_reg <= cur_reg[19:0];
            cur_reg <= cur_reg + 48'd1;
            left_reg <= left_reg - 21'd1;
        end
        if (m_take) begin
            cur_reg <= cur_reg + {36'd0, m_beats, 3'd0};
            left_reg <= left_reg - {12'd0, m_beats};
        end
        if (g_take || m_take || g_resp || m_beat)
            resv_reg <= resv_reg + (g_take ? 9'd1 : 9'd0) + (m_take ? m_beats : 9'd0)
                        - ((g_resp || m_beat) ? 9'd1 : 9'd0);
        if (g_resp) begin
            gpend_reg <= 1'b0;
            if (g_bad) begin
                dead_reg <= 1'b1;
                f_code <= (g_resp_code == GMC_XLATE_CODE_INVALID || !g_resp_system)
                          ? GMC_DMA_FAULT_PTE_INVALID : GMC_DMA_FAULT_PTE_PERM;
                f_addr <= {16'd0, gpage_reg, 12'd0};
            end
        end
        if (m_beat && m_bad) begin
            dead_reg <= 1'b1;
            f_code <= GMC_DMA_FAULT_BUS;
            f_addr <= tq_head[47:0];
        end

        if (start) begin
            run_reg <= 1'b1;
            dead_reg <= 1'b0;
            kind_reg <= kind;
            write_reg <= write;
            left_reg <= npages;
            resv_reg <= 9'd0;
            gpend_reg <= 1'b0;
            cur_reg <= (kind == K_MDL) ? mdl_base + {9'd0, page0, 3'd0} : {12'd0, page0};
            f_code <= GMC_DMA_FAULT_NONE;
            f_addr <= 48'd0;
        end
        if (rst || flush) begin
            run_reg <= 1'b0;
            dead_reg <= 1'b0;
            gpend_reg <= 1'b0;
            resv_reg <= 9'd0;
            left_reg <= 21'd0;
        end
        if (rst) begin
            kind_reg <= K_VRAM;
            write_reg <= 1'b0;
            cur_reg <= 48'd0;
            gpage_reg <= 20'd0;
            f_code <= GMC_DMA_FAULT_NONE;
            f_addr <= 48'd0;
        end
    end

    gmc_dma_fifo #(
        .WIDTH(37), .DEPTH(QDEPTH)
    ) u_q (
        .clk(clk), .rst(rst), .flush(flush || start),
        .in_valid(q_push), .in_data(q_data),
        .out_valid(pg_valid), .out_data({pg_fault, pg_phys}), .out_pop(pg_pop),
        .count(q_count)
    );

    gmc_dma_tagq #(
        .WIDTH(56), .DEPTH(TQD)
    ) u_tags (
        .clk(clk), .rst(rst), .clear(flush || start),
        .push(m_take), .push_data({ar_seq, cur_reg}), .pop(r_valid && r_last),
        .head(tq_head), .empty(tq_empty), .full(tq_full), .count(tq_count)
    );

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, tq_count, g_resp_addr[11:0], r_data[63:48], r_data[11:0]};
    /* verilator lint_on UNUSEDSIGNAL */

    assign old_valid = !tq_empty;
    assign old_seq   = tq_head[55:48];
    assign old_addr  = tq_head[47:0];

    assign quiet = !go && !gpend_reg && (resv_reg == 9'd0) && tq_empty && !pg_valid;

endmodule

`resetall
