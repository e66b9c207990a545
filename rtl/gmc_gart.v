// gmc: GART translation, a fully associative TLB over a flat page table in VRAM.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// A request carries a GPU address inside the aperture and the access kind.
// A TLB hit answers on the next cycle and a new request may be taken every
// cycle. A miss reads the PTE at PT_BASE + 8 * page through the VRAM read
// port, fills a TLB entry (first free one, else round-robin) when the PTE is
// VALID, and answers. Only valid PTEs are cached. An invalidation that hits
// the page under walk keeps the walked entry out of the TLB.
module gmc_gart #(
    // TLB entries, 1..64.
    parameter integer TLB_ENTRIES = 16,
    // GPU address of the aperture.
    parameter [31:0] APERTURE_BASE = 32'h8000_0000,
    // Pages in the aperture.
    parameter integer APERTURE_PAGES = 4096,
    // VRAM word address width.
    parameter integer VRAM_AW = 20,
    // Width of an aperture page index, derived.
    parameter integer PW = (APERTURE_PAGES > 1) ? $clog2(APERTURE_PAGES) : 1
) (
    input  wire                clk,
    input  wire                rst,

    // Translation request.
    input  wire                req_valid,
    output wire                req_ready,
    input  wire [31:0]         req_addr,
    input  wire                req_write,

    // Translation response, one cycle wide; the requester always takes it.
    output reg                 resp_valid,
    output reg                 resp_fault,
    output reg  [3:0]          resp_code,
    output reg  [47:0]         resp_addr,
    output reg                 resp_system,
    output reg                 resp_hit,
    output reg                 resp_dummy,

    // Configuration from registers.
    input  wire [31:0]         pt_base,
    input  wire [47:12]        dummy_page,

    // Invalidation, one-cycle pulses.
    input  wire                inv_all,
    input  wire                inv_page_valid,
    input  wire [31:0]         inv_page,

    // VRAM read port (to the arbiter).
    output wire                vr_req,
    output wire [VRAM_AW-1:0]  vr_addr,
    input  wire                vr_gnt,
    input  wire                vr_valid,
    input  wire [63:0]         vr_data,

    // Counter pulses.
    output reg                 cnt_hit,
    output reg                 cnt_miss,
    output reg                 cnt_dummy
);

    `include "gmc_regs.vh"

    initial begin
        if (TLB_ENTRIES < 1 || TLB_ENTRIES > 64)
            $error("gmc_gart: TLB_ENTRIES must be 1..64 (instance %m)");
        if (APERTURE_PAGES < 1 || APERTURE_BASE[11:0] != 12'd0)
            $error("gmc_gart: bad aperture geometry (instance %m)");
    end

    // TLB index width.
    localparam integer TW = (TLB_ENTRIES > 1) ? $clog2(TLB_ENTRIES) : 1;
    localparam integer TLB_LAST_I = TLB_ENTRIES - 1;
    localparam [TW-1:0] TLB_LAST = TLB_LAST_I[TW-1:0];

    localparam [1:0] S_IDLE = 2'd0, S_WALK_REQ = 2'd1, S_WALK_WAIT = 2'd2;

    // TLB storage: tag, page address and the two permission bits.
    reg [TLB_ENTRIES-1:0] tlb_valid;
    reg [PW-1:0]          tlb_tag   [0:TLB_ENTRIES-1];
    reg [47:12]           tlb_page  [0:TLB_ENTRIES-1];
    reg [TLB_ENTRIES-1:0] tlb_sys;
    reg [TLB_ENTRIES-1:0] tlb_rd;
    reg [TLB_ENTRIES-1:0] tlb_wr;
    reg [TW-1:0]          rr_reg;

    reg [1:0]    state_reg;
    reg [PW-1:0] walk_page_reg;
    reg [11:0]   walk_off_reg;
    reg          walk_write_reg;
    reg          walk_stale_reg;

    // Range check and page index of the incoming request.
    wire [31:0] rel      = req_addr - APERTURE_BASE;
    wire        in_range = (req_addr >= APERTURE_BASE) && ((rel >> 12) < APERTURE_PAGES);
    wire [PW-1:0] page   = rel[12 +: PW];

    assign req_ready = (state_reg == S_IDLE);
    wire   take      = req_valid && req_ready;

    // Lookup, a one-hot match folded into the hit data. Looked at only in
    // a take, so worked out only then (no hit otherwise).
    reg                   hit;
    reg [47:12]           hit_page;
    reg                   hit_sys, hit_rd, hit_wr;
    reg [TLB_ENTRIES-1:0] match;
    integer i;
    always @* begin
        hit = 1'b0;
        hit_page = 36'd0;
        hit_sys = 1'b0;
        hit_rd = 1'b0;
        hit_wr = 1'b0;
        match = {TLB_ENTRIES{1'b0}};
        i = 0;
        if (take) begin
            for (i = 0; i < TLB_ENTRIES; i = i + 1) begin
                match[i] = tlb_valid[i] && (tlb_tag[i] == page);
                if (match[i]) begin
                    hit = 1'b1;
                    hit_page = hit_page | tlb_page[i];
                    hit_sys = hit_sys | tlb_sys[i];
                    hit_rd = hit_rd | tlb_rd[i];
                    hit_wr = hit_wr | tlb_wr[i];
                end
            end
        end
    end

    // Victim: the first free entry, else the round-robin pointer. Needed
    // only while a walk waits for its PTE.
    reg                   have_free;
    reg [TW-1:0]          free_idx;
    always @* begin
        have_free = 1'b0;
        free_idx = {TW{1'b0}};
        i = 0;
        if (state_reg == S_WALK_WAIT) begin
            for (i = TLB_ENTRIES - 1; i >= 0; i = i - 1)
                if (!tlb_valid[i]) begin
                    have_free = 1'b1;
                    free_idx = i[TW-1:0];
                end
        end
    end
    wire [TW-1:0] victim = have_free ? free_idx : rr_reg;

    assign vr_req  = (state_reg == S_WALK_REQ);
    // PTE word address; PT_BASE is page aligned and inside VRAM, so the low
    // and high bits carry nothing.
    /* verilator lint_off UNUSEDSIGNAL */
    wire [2:0]  unused_pt_low = pt_base[2:0];
    wire [31:0] pte_word = {3'b000, pt_base[31:3]} + {{(32 - PW){1'b0}}, walk_page_reg};
    /* verilator lint_on UNUSEDSIGNAL */
    assign vr_addr = pte_word[VRAM_AW-1:0];

    // The walked PTE.
    wire        pte_valid = vr_data[GMC_PTE_VALID_LSB];
    wire        pte_sys   = vr_data[GMC_PTE_SYSTEM_LSB];
    wire        pte_rd    = vr_data[GMC_PTE_READABLE_LSB];
    wire        pte_wr    = vr_data[GMC_PTE_WRITEABLE_LSB];
    wire [47:12] pte_page = vr_data[47:12];

    wire inv_hits_walk = inv_all || (inv_page_valid && inv_page[PW-1:0] == walk_page_reg
                                     && inv_page < APERTURE_PAGES);

    always @(posedge clk) begin
        resp_valid <= 1'b0;
        cnt_hit <= 1'b0;
        cnt_miss <= 1'b0;
        cnt_dummy <= 1'b0;

        case (state_reg)
            S_IDLE: begin
                if (take) begin
                    walk_page_reg <= page;
                    walk_off_reg <= req_addr[11:0];
                    walk_write_reg <= req_write;
                    walk_stale_reg <= 1'b0;
                    if (!in_range) begin
                        resp_valid <= 1'b1;
                        resp_fault <= 1'b1;
                        resp_code <= GMC_XLATE_CODE_RANGE;
                        resp_addr <= 48'd0;
                        resp_system <= 1'b0;
                        resp_hit <= 1'b0;
                        resp_dummy <= 1'b0;
                    end else if (hit) begin
                        resp_valid <= 1'b1;
                        resp_hit <= 1'b1;
                        resp_system <= hit_sys;
                        resp_addr <= {hit_page, req_addr[11:0]};
                        cnt_hit <= 1'b1;
                        if (req_write ? !hit_wr : !hit_rd) begin
                            resp_fault <= 1'b1;
                            resp_code <= req_write ? GMC_XLATE_CODE_NO_WRITE : GMC_XLATE_CODE_NO_READ;
                            resp_dummy <= 1'b0;
                        end else begin
                            resp_fault <= 1'b0;
                            resp_code <= GMC_XLATE_CODE_OK;
                            resp_dummy <= hit_sys && (hit_page == dummy_page);
                            cnt_dummy <= hit_sys && (hit_page == dummy_page);
                        end
                    end else begin
                        state_reg <= S_WALK_REQ;
                        cnt_miss <= 1'b1;
                    end
                end
            end
            S_WALK_REQ: begin
                if (vr_gnt) state_reg <= S_WALK_WAIT;
                if (inv_hits_walk) walk_stale_reg <= 1'b1;
            end
            S_WALK_WAIT: begin
                if (inv_hits_walk) walk_stale_reg <= 1'b1;
                if (vr_valid) begin
                    state_reg <= S_IDLE;
                    resp_valid <= 1'b1;
                    resp_hit <= 1'b0;
                    resp_system <= pte_sys;
                    resp_addr <= {pte_page, walk_off_reg};
                    resp_dummy <= 1'b0;
                    if (!pte_valid) begin
                        resp_fault <= 1'b1;
                        resp_code <= GMC_XLATE_CODE_INVALID;
                        resp_addr <= 48'd0;
                    end else if (walk_write_reg ? !pte_wr : !pte_rd) begin
                        resp_fault <= 1'b1;
                        resp_code <= walk_write_reg ? GMC_XLATE_CODE_NO_WRITE : GMC_XLATE_CODE_NO_READ;
                    end else begin
                        resp_fault <= 1'b0;
                        resp_code <= GMC_XLATE_CODE_OK;
                        resp_dummy <= pte_sys && (pte_page == dummy_page);
                        cnt_dummy <= pte_sys && (pte_page == dummy_page);
                    end
                    if (pte_valid && !walk_stale_reg && !inv_hits_walk) begin
                        tlb_valid[victim] <= 1'b1;
                        tlb_tag[victim] <= walk_page_reg;
                        tlb_page[victim] <= pte_page;
                        tlb_sys[victim] <= pte_sys;
                        tlb_rd[victim] <= pte_rd;
                        tlb_wr[victim] <= pte_wr;
                        if (!have_free)
                            rr_reg <= (rr_reg == TLB_LAST) ? {TW{1'b0}} : rr_reg + 1'b1;
                    end
                end
            end
            default: state_reg <= S_IDLE;
        endcase

        // Invalidation wins over a fill in the same cycle.
        if (inv_all)
            tlb_valid <= {TLB_ENTRIES{1'b0}};
        else if (inv_page_valid)
            for (i = 0; i < TLB_ENTRIES; i = i + 1)
                if (tlb_tag[i] == inv_page[PW-1:0] && inv_page < APERTURE_PAGES)
                    tlb_valid[i] <= 1'b0;

        if (rst) begin
            state_reg <= S_IDLE;
            tlb_valid <= {TLB_ENTRIES{1'b0}};
            rr_reg <= {TW{1'b0}};
            resp_valid <= 1'b0;
            cnt_hit <= 1'b0;
            cnt_miss <= 1'b0;
            cnt_dummy <= 1'b0;
        end
    end

endmodule

`resetall
