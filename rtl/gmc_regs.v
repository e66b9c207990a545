// gmc: the register file: identification, segments, IRQ, fault log, GART control, counters.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Offsets, access types, reset values and writable masks come from
// gmc_regs.vh, generated from spec/gmc.toml. A write to a read-only register
// answers SLVERR and changes nothing; an offset with no register answers
// DECERR. Segment descriptors are constants from parameters; a simulator
// build (GMC_SIM_STRAPS) holds them in strap registers the model can set.
module gmc_regs #(
    parameter integer VRAM_BYTES = 8 * 1024 * 1024,
    parameter integer TLB_ENTRIES = 16,
    parameter [31:0]  APERTURE_BASE = 32'h8000_0000,
    parameter integer APERTURE_PAGES = 4096,
    parameter integer CPU_WINDOW_BYTES = 2 * 1024 * 1024,
    parameter integer PROT_RANGES = 4,
    // Which DMA paging engine is present (CAPS.DMA_ENGINE): 0 none, 1 full,
    // 2 compact, 3 micro-sequenced (enum DMA_ENGINE). CAPS.DMA is 1 for
    // any engine. With 3, DMA_FENCE, DMA_READ_RESULT, DMA_FAULT_PKT,
    // DMA_FAULT_ADDR and the counters CNT_DMA_{RD,WR}_{VRAM,SYS,APERTURE},
    // _PACKETS and _FAULTS are read from the engine's 64-bit status RAM
    // (dma_st_ra / dma_st_rd, answered a cycle later through reg_rd_late;
    // the LO read snapshots HI), CNT_CLEAR clears those counters in the
    // engine (dma_cnt_clear), and the configuration the engine reads is
    // copied into its configuration RAM (dma_cfg_*).
    parameter integer DMA_ENGINE = 1,
    // Width of the CNT_* performance counters, 32..64.
    parameter integer COUNTER_WIDTH = 64,
    parameter [31:0]  PT_BASE_RESET = 32'h007F_0000,
    parameter integer SEG_COUNT = 3,
    parameter [63:0]  SEG1_BASE = 64'd0,
    parameter [63:0]  SEG1_SIZE = 64'd0,
    parameter [31:0]  SEG1_FLAGS = 32'd0,
    parameter [63:0]  SEG1_CPU_OFFSET = 64'd0,
    parameter [7:0]   SEG1_BANKS = 8'd0,
    // SEGn_SYSMEM_END: SystemMemoryEndAddress (SEG_SYSMEM_END_*), 0 unless
    // the segment is partially preserved during hibernate.
    parameter [63:0]  SEG1_SYSMEM_END = 64'd0,
    parameter [63:0]  SEG2_BASE = 64'd0,
    parameter [63:0]  SEG2_SIZE = 64'd0,
    parameter [31:0]  SEG2_FLAGS = 32'd0,
    parameter [63:0]  SEG2_CPU_OFFSET = 64'd0,
    parameter [7:0]   SEG2_BANKS = 8'd0,
    parameter [63:0]  SEG2_SYSMEM_END = 64'd0,
    parameter [63:0]  SEG3_BASE = 64'd0,
    parameter [63:0]  SEG3_SIZE = 64'd0,
    parameter [31:0]  SEG3_FLAGS = 32'd0,
    parameter [63:0]  SEG3_CPU_OFFSET = 64'd0,
    parameter [7:0]   SEG3_BANKS = 8'd0,
    parameter [63:0]  SEG3_SYSMEM_END = 64'd0,
    parameter [63:0]  SEG4_BASE = 64'd0,
    parameter [63:0]  SEG4_SIZE = 64'd0,
    parameter [31:0]  SEG4_FLAGS = 32'd0,
    parameter [63:0]  SEG4_CPU_OFFSET = 64'd0,
    parameter [7:0]   SEG4_BANKS = 8'd0,
    parameter [63:0]  SEG4_SYSMEM_END = 64'd0
) (
    input  wire                      clk,
    input  wire                      rst,

    // Register strobes from gmc_axil_regif.
    input  wire                      reg_wr_en,
    input  wire [15:0]               reg_wr_addr,
    input  wire [31:0]               reg_wr_data,
    input  wire [3:0]                reg_wr_strb,
    output reg  [1:0]                reg_wr_resp,
    input  wire                      reg_rd_en,
    input  wire [15:0]               reg_rd_addr,
    output reg  [31:0]               reg_rd_data,
    output reg  [1:0]                reg_rd_resp,

    output wire                      irq,

    // Aperture fault pulses and byte counts.
    input  wire                      apf_rd_valid,
    input  wire [1:0]                apf_rd_kind,
    input  wire [31:0]               apf_rd_addr,
    input  wire                      apf_wr_valid,
    input  wire [1:0]                apf_wr_kind,
    input  wire [31:0]               apf_wr_addr,
    input  wire [3:0]                ap_rd_bytes,
    input  wire [3:0]                ap_wr_bytes,

    // Protection and GART configuration.
    output wire [32*PROT_RANGES-1:0] prot_base,
    output wire [32*PROT_RANGES-1:0] prot_limit,
    output wire [31:0]               pt_base,
    output wire [47:12]              dummy_page,
    output reg                       inv_all,
    output reg                       inv_page_valid,
    output reg  [31:0]               inv_page,

    // Debug translation port, a GART requester.
    output reg                       xl_req_valid,
    input  wire                      xl_req_ready,
    output wire [31:0]               xl_req_addr,
    output reg                       xl_req_write,
    input  wire                      xl_resp_valid,
    input  wire                      xl_resp_fault,
    input  wire [3:0]                xl_resp_code,
    input  wire [47:0]               xl_resp_addr,
    input  wire                      xl_resp_system,
    input  wire                      xl_resp_hit,
    input  wire                      xl_resp_dummy,

    // GART counter pulses.
    input  wire                      tlb_hit,
    input  wire                      tlb_miss,
    input  wire                      tlb_dummy,

    // DMA engine configuration and commands (one-cycle pulses).
    output wire                      dma_enable,
    output wire                      dma_clk_on,
    output wire [47:12]              dma_ring_base,
    output wire [4:0]                dma_ring_log2,
    output wire [19:0]               dma_tail,
    output wire [31:0]               dma_watchdog,
    output reg                       dma_cmd_skip,
    output reg                       dma_cmd_reset,

    // DMA engine state, events and byte counts.
    input  wire [1:0]                dma_state,
    input  wire                      dma_indirect,
    input  wire [7:0]                dma_rd_out,
    input  wire [7:0]                dma_wr_out,
    input  wire [19:0]               dma_head,
    input  wire [63:0]               dma_fence,
    input  wire [8:0]                dma_fault_code,
    input  wire [47:0]               dma_fault_pkt,
    input  wire [47:0]               dma_fault_addr,
    input  wire [63:0]               dma_read_result,
    input  wire [1:0]                dma_ev_packets,
    input  wire                      dma_ev_fault,
    input  wire                      dma_clk_run,
    input  wire                      dma_ev_fence_irq,
    input  wire [3:0]                dma_rd_vram,
    input  wire [3:0]                dma_rd_sys,
    input  wire [3:0]                dma_rd_ap,
    input  wire [3:0]                dma_wr_vram,
    input  wire [3:0]                dma_wr_sys,
    input  wire [3:0]                dma_wr_ap,
    output wire [4:0]                dma_st_ra,
    input  wire [63:0]               dma_st_rd,
    input  wire                      dma_st_rz,
    output wire                      dma_cnt_clear,
    output wire                      reg_rd_late,
    output wire [31:0]               reg_rd_late_data,
    output reg  [3:0]                dma_cfg_we,
    output reg  [4:0]                dma_cfg_wa,
    output reg  [31:0]               dma_cfg_wd
);

    `include "gmc_regs.vh"

    localparam [1:0] RESP_OKAY = 2'd0, RESP_SLVERR = 2'd2, RESP_DECERR = 2'd3;
    localparam integer CW = COUNTER_WIDTH;

    initial begin
        if (CW < 32 || CW > 64)
            $error("gmc_regs: COUNTER_WIDTH must be 32..64 (instance %m)");
        if (SEG_COUNT < 1 || SEG_COUNT > GMC_MAX_SEGMENTS)
            $error("gmc_regs: SEG_COUNT must be 1..%0d (instance %m)", GMC_MAX_SEGMENTS);
    end

    // -------------------------------------------------- segment descriptors

`ifdef GMC_SIM_STRAPS
    reg [31:0] strap_seg_count /*verilator public_flat_rw*/;
    reg [63:0] strap_seg_base [0:3] /*verilator public_flat_rw*/;
    reg [63:0] strap_seg_size [0:3] /*verilator public_flat_rw*/;
    reg [31:0] strap_seg_flags [0:3] /*verilator public_flat_rw*/;
    reg [63:0] strap_seg_cpu [0:3] /*verilator public_flat_rw*/;
    reg [7:0]  strap_seg_banks [0:3] /*verilator public_flat_rw*/;
    reg [63:0] strap_seg_sysend [0:3] /*verilator public_flat_rw*/;
    initial begin
        strap_seg_count = SEG_COUNT;
        strap_seg_base[0] = SEG1_BASE;  strap_seg_size[0] = SEG1_SIZE;  strap_seg_flags[0] = SEG1_FLAGS;
        strap_seg_cpu[0] = SEG1_CPU_OFFSET;  strap_seg_banks[0] = SEG1_BANKS;
        strap_seg_sysend[0] = SEG1_SYSMEM_END;
        strap_seg_base[1] = SEG2_BASE;  strap_seg_size[1] = SEG2_SIZE;  strap_seg_flags[1] = SEG2_FLAGS;
        strap_seg_cpu[1] = SEG2_CPU_OFFSET;  strap_seg_banks[1] = SEG2_BANKS;
        strap_seg_sysend[1] = SEG2_SYSMEM_END;
        strap_seg_base[2] = SEG3_BASE;  strap_seg_size[2] = SEG3_SIZE;  strap_seg_flags[2] = SEG3_FLAGS;
        strap_seg_cpu[2] = SEG3_CPU_OFFSET;  strap_seg_banks[2] = SEG3_BANKS;
        strap_seg_sysend[2] = SEG3_SYSMEM_END;
        strap_seg_base[3] = SEG4_BASE;  strap_seg_size[3] = SEG4_SIZE;  strap_seg_flags[3] = SEG4_FLAGS;
        strap_seg_cpu[3] = SEG4_CPU_OFFSET;  strap_seg_banks[3] = SEG4_BANKS;
        strap_seg_sysend[3] = SEG4_SYSMEM_END;
    end
    localparam STRAPS = 1'b1;
    wire [31:0] seg_count = strap_seg_count;
    function [31:0] seg_word;
        input [1:0] idx;
        input [4:0] off;
        begin
            case (off)
                5'h00: seg_word = strap_seg_base[idx][31:0];
                5'h04: seg_word = strap_seg_base[idx][63:32];
                5'h08: seg_word = strap_seg_size[idx][31:0];
                5'h0C: seg_word = strap_seg_size[idx][63:32];
                5'h10: seg_word = strap_seg_flags[idx];
                5'h14: seg_word = strap_seg_cpu[idx][31:0];
                5'h18: seg_word = strap_seg_cpu[idx][63:32];
                5'h1C: seg_word = {24'd0, strap_seg_banks[idx]};
                default: seg_word = 32'd0;
            endcase
        end
    endfunction
    function [31:0] seg_end_word;
        input [1:0] idx;
        input       hi;
        seg_end_word = hi ? strap_seg_sysend[idx][63:32] : strap_seg_sysend[idx][31:0];
    endfunction
`else
    localparam STRAPS = 1'b0;
    wire [31:0] seg_count = SEG_COUNT;
    function [31:0] seg_word;
        input [1:0] idx;
        input [4:0] off;
        reg [63:0] b, s, c;
        reg [31:0] f;
        reg [7:0]  k;
        begin
            case (idx)
                2'd0: begin b = SEG1_BASE; s = SEG1_SIZE; f = SEG1_FLAGS; c = SEG1_CPU_OFFSET; k = SEG1_BANKS; end
                2'd1: begin b = SEG2_BASE; s = SEG2_SIZE; f = SEG2_FLAGS; c = SEG2_CPU_OFFSET; k = SEG2_BANKS; end
                2'd2: begin b = SEG3_BASE; s = SEG3_SIZE; f = SEG3_FLAGS; c = SEG3_CPU_OFFSET; k = SEG3_BANKS; end
                default: begin b = SEG4_BASE; s = SEG4_SIZE; f = SEG4_FLAGS; c = SEG4_CPU_OFFSET; k = SEG4_BANKS; end
            endcase
            case (off)
                5'h00: seg_word = b[31:0];
                5'h04: seg_word = b[63:32];
                5'h08: seg_word = s[31:0];
                5'h0C: seg_word = s[63:32];
                5'h10: seg_word = f;
                5'h14: seg_word = c[31:0];
                5'h18: seg_word = c[63:32];
                5'h1C: seg_word = {24'd0, k};
                default: seg_word = 32'd0;
            endcase
        end
    endfunction
    function [31:0] seg_end_word;
        input [1:0] idx;
        input       hi;
        reg [63:0] e;
        begin
            case (idx)
                2'd0: e = SEG1_SYSMEM_END;
                2'd1: e = SEG2_SYSMEM_END;
                2'd2: e = SEG3_SYSMEM_END;
                default: e = SEG4_SYSMEM_END;
            endcase
            seg_end_word = hi ? e[63:32] : e[31:0];
        end
    endfunction
`endif

    // ------------------------------------------------------------- state

    reg [31:0]  scratch_reg;
    reg [31:0]  irq_status_reg, irq_mask_reg;
    reg [63:0]  cycle_reg;
    reg         apf_valid_reg, apf_write_reg, apf_overflow_reg;
    reg [1:0]   apf_kind_reg;
    reg [31:0]  apf_addr_reg, apf_count_reg;
    reg [31:0]  prot_base_reg [0:PROT_RANGES-1];
    reg [31:0]  prot_limit_reg [0:PROT_RANGES-1];
    reg [31:0]  pt_base_reg;
    reg [31:0]  dummy_lo_reg, dummy_hi_reg;
    reg [31:0]  xl_addr_reg;
    reg         xl_busy_reg, xl_done_reg, xl_fault_reg, xl_hit_reg, xl_dummy_reg, xl_system_reg;
    reg [3:0]   xl_code_reg;
    reg [47:0]  xl_result_reg;
    reg [CW-1:0] cnt_hit_reg, cnt_miss_reg, cnt_dummy_reg, cnt_ap_rd_reg, cnt_ap_wr_reg;
    reg [31:0]  snap_hi_reg;
    reg [4:0]   snap_sel_reg;
    reg         dma_enable_reg, dma_clk_on_reg;
    wire [31:0] dma_ctrl_word = ({31'd0, dma_enable_reg} << GMC_DMA_CTRL_ENABLE_LSB)
                              | ({31'd0, dma_clk_on_reg} << GMC_DMA_CTRL_CLOCK_ON_LSB);
    reg [31:0]  dma_base_lo_reg, dma_base_hi_reg, dma_tail_reg, dma_watchdog_reg;
    reg [4:0]   dma_log2_reg;
    reg [CW-1:0] cnt_dma_busy_reg, cnt_dma_rd_vram_reg, cnt_dma_wr_vram_reg, cnt_dma_rd_sys_reg,
                 cnt_dma_wr_sys_reg, cnt_dma_rd_ap_reg, cnt_dma_wr_ap_reg, cnt_dma_pkt_reg,
                 cnt_dma_fault_reg, cnt_dma_clock_reg;

    genvar g;
    generate
        for (g = 0; g < PROT_RANGES; g = g + 1) begin : g_prot
            assign prot_base[32*g +: 32] = prot_base_reg[g];
            assign prot_limit[32*g +: 32] = prot_limit_reg[g];
        end
    endgenerate
    assign pt_base = pt_base_reg;
    assign dummy_page = {dummy_hi_reg[15:0], dummy_lo_reg[31:12]};
    assign xl_req_addr = xl_addr_reg;
    assign irq = |(irq_status_reg & irq_mask_reg);
    assign dma_enable = dma_enable_reg;
    assign dma_clk_on = dma_clk_on_reg;
    assign dma_ring_base = {dma_base_hi_reg[15:0], dma_base_lo_reg[31:12]};
    assign dma_ring_log2 = dma_log2_reg;
    assign dma_tail = dma_tail_reg[19:0];
    assign dma_watchdog = dma_watchdog_reg;

    // A counter's low and high words, zero-extended to 64 bits. Called in
    // the read decode and the snapshot, only in a read handshake.
    function [31:0] half;
        input [CW-1:0] v;
        input          hi;
        reg   [63:0]   e;
        begin
            e = 64'd0;
            e[CW-1:0] = v;
            half = hi ? e[63:32] : e[31:0];
        end
    endfunction

    wire [63:0] dma_fault_pkt64 = {16'd0, dma_fault_pkt};
    wire [63:0] dma_fault_addr64 = {16'd0, dma_fault_addr};

    // 64-bit values read as LO/HI pairs; reading LO snapshots HI.
    localparam [4:0] SN_NONE = 5'd0, SN_CYCLE = 5'd1, SN_HIT = 5'd2, SN_MISS = 5'd3,
                     SN_DUMMY = 5'd4, SN_AP_RD = 5'd5, SN_AP_WR = 5'd6,
                     SN_DMA_BUSY = 5'd7, SN_DMA_RD_VRAM = 5'd8, SN_DMA_WR_VRAM = 5'd9,
                     SN_DMA_RD_SYS = 5'd10, SN_DMA_WR_SYS = 5'd11, SN_DMA_RD_AP = 5'd12,
                     SN_DMA_WR_AP = 5'd13, SN_DMA_PKT = 5'd14, SN_DMA_FAULT = 5'd15,
                     SN_DMA_FENCE = 5'd16, SN_DMA_FPKT = 5'd17, SN_DMA_FADDR = 5'd18,
                     SN_DMA_RDRES = 5'd19, SN_DMA_CLOCK = 5'd20;

    // ------------------------------------------------------------ reads

    reg  [1:0]  rd_acc;
    wire [15:0] prot_rel = reg_rd_addr - GMC_REG_PROT_BASE;
    wire [15:0] seg_rel = reg_rd_addr - GMC_REG_SEG_BASE_LO;
    localparam integer PIW = (PROT_RANGES > 1) ? $clog2(PROT_RANGES) : 1;
    localparam integer PROT_SPAN = GMC_REG_PROT_BASE_COUNT * GMC_REG_PROT_BASE_STRIDE;
    localparam integer SEG_SPAN = GMC_REG_SEG_BASE_LO_COUNT * GMC_REG_SEG_BASE_LO_STRIDE;
    wire [15:0] end_rel = reg_rd_addr - GMC_REG_SEG_SYSMEM_END_LO;
    localparam integer END_SPAN = GMC_REG_SEG_SYSMEM_END_LO_COUNT * GMC_REG_SEG_SYSMEM_END_LO_STRIDE;
    wire [PIW-1:0] prot_idx = prot_rel[3 +: PIW];
    wire           prot_idx_ok = ({19'd0, prot_rel[15:3]} < PROT_RANGES);

    function [31:0] hi_or_snap;
        input [4:0]  sel;
        input [31:0] live_hi;
        begin
            hi_or_snap = (snap_sel_reg == sel) ? snap_hi_reg : live_hi;
        end
    endfunction

    // The read data is decoded only in a read handshake (the register port
    // samples it then); 0 otherwise.
    always @* begin
        reg_rd_data = 32'd0;
        reg_rd_resp = RESP_OKAY;
        rd_acc = GMC_ACC_NONE;
        if (reg_rd_en) begin
            rd_acc = gmc_reg_access(reg_rd_addr);
            reg_rd_resp = (rd_acc == GMC_ACC_NONE) ? RESP_DECERR : RESP_OKAY;
            case (reg_rd_addr)
                GMC_REG_ID:              reg_rd_data = GMC_ID;
                GMC_REG_VERSION:         reg_rd_data = {GMC_VERSION_MAJOR, GMC_VERSION_MINOR};
                GMC_REG_CAPS:            reg_rd_data = (32'd1 << GMC_CAPS_GART_LSB)
                                                     | ((DMA_ENGINE != 0 ? 32'd1 : 32'd0) << GMC_CAPS_DMA_LSB)
                                                     | ((DMA_ENGINE == 3 ? 32'd3 : DMA_ENGINE == 2 ? 32'd2 : DMA_ENGINE == 1 ? 32'd1 : 32'd0) << GMC_CAPS_DMA_ENGINE_LSB)
                                                     | (32'd1 << GMC_CAPS_PROTECTION_LSB)
                                                     | ({31'd0, STRAPS} << GMC_CAPS_SIM_STRAPS_LSB)
                                                     | (PROT_RANGES << GMC_CAPS_PROT_RANGES_LSB)
                                                     | (CW << GMC_CAPS_COUNTER_BITS_LSB);
                GMC_REG_VRAM_SIZE:       reg_rd_data = VRAM_BYTES;
                GMC_REG_TLB_ENTRIES:     reg_rd_data = TLB_ENTRIES;
                GMC_REG_SEG_COUNT:       reg_rd_data = seg_count;
                GMC_REG_APERTURE_BASE:   reg_rd_data = APERTURE_BASE;
                GMC_REG_APERTURE_PAGES:  reg_rd_data = APERTURE_PAGES;
                GMC_REG_PAGE_SIZE:       reg_rd_data = GMC_REG_PAGE_SIZE_RESET;
                GMC_REG_CPU_WINDOW_SIZE: reg_rd_data = CPU_WINDOW_BYTES;
                GMC_REG_SCRATCH:         reg_rd_data = scratch_reg;
                GMC_REG_IRQ_STATUS:      reg_rd_data = irq_status_reg;
                GMC_REG_IRQ_MASK:        reg_rd_data = irq_mask_reg;
                GMC_REG_CYCLE_LO:        reg_rd_data = cycle_reg[31:0];
                GMC_REG_CYCLE_HI:        reg_rd_data = hi_or_snap(SN_CYCLE, cycle_reg[63:32]);
                GMC_REG_APF_STATUS:      reg_rd_data = ({31'd0, apf_valid_reg} << GMC_APF_STATUS_VALID_LSB)
                                                     | ({31'd0, apf_write_reg} << GMC_APF_STATUS_WRITE_LSB)
                                                     | ({30'd0, apf_kind_reg} << GMC_APF_STATUS_KIND_LSB)
                                                     | ({31'd0, apf_overflow_reg} << GMC_APF_STATUS_OVERFLOW_LSB);
                GMC_REG_APF_ADDR_LO:     reg_rd_data = apf_addr_reg;
                GMC_REG_APF_COUNT:       reg_rd_data = apf_count_reg;
                GMC_REG_PT_BASE:         reg_rd_data = pt_base_reg;
                GMC_REG_DUMMY_PAGE_LO:   reg_rd_data = dummy_lo_reg;
                GMC_REG_DUMMY_PAGE_HI:   reg_rd_data = dummy_hi_reg;
                GMC_REG_XLATE_ADDR:      reg_rd_data = xl_addr_reg;
                GMC_REG_XLATE_STATUS:    reg_rd_data = ({31'd0, xl_busy_reg} << GMC_XLATE_STATUS_BUSY_LSB)
                                                     | ({31'd0, xl_done_reg} << GMC_XLATE_STATUS_DONE_LSB)
                                                     | ({31'd0, xl_fault_reg} << GMC_XLATE_STATUS_FAULT_LSB)
                                                     | ({31'd0, xl_hit_reg} << GMC_XLATE_STATUS_HIT_LSB)
                                                     | ({31'd0, xl_dummy_reg} << GMC_XLATE_STATUS_DUMMY_LSB)
                                                     | ({31'd0, xl_system_reg} << GMC_XLATE_STATUS_SYSTEM_LSB)
                                                     | ({28'd0, xl_code_reg} << GMC_XLATE_STATUS_CODE_LSB);
                GMC_REG_XLATE_RESULT_LO: reg_rd_data = xl_result_reg[31:0];
                GMC_REG_XLATE_RESULT_HI: reg_rd_data = {16'd0, xl_result_reg[47:32]};
                GMC_REG_CNT_TLB_HIT_LO:      reg_rd_data = half(cnt_hit_reg, 1'b0);
                GMC_REG_CNT_TLB_HIT_HI:      reg_rd_data = hi_or_snap(SN_HIT, half(cnt_hit_reg, 1'b1));
                GMC_REG_CNT_TLB_MISS_LO:     reg_rd_data = half(cnt_miss_reg, 1'b0);
                GMC_REG_CNT_TLB_MISS_HI:     reg_rd_data = hi_or_snap(SN_MISS, half(cnt_miss_reg, 1'b1));
                GMC_REG_CNT_DUMMY_HIT_LO:    reg_rd_data = half(cnt_dummy_reg, 1'b0);
                GMC_REG_CNT_DUMMY_HIT_HI:    reg_rd_data = hi_or_snap(SN_DUMMY, half(cnt_dummy_reg, 1'b1));
                GMC_REG_CNT_APERTURE_RD_LO:  reg_rd_data = half(cnt_ap_rd_reg, 1'b0);
                GMC_REG_CNT_APERTURE_RD_HI:  reg_rd_data = hi_or_snap(SN_AP_RD, half(cnt_ap_rd_reg, 1'b1));
                GMC_REG_CNT_APERTURE_WR_LO:  reg_rd_data = half(cnt_ap_wr_reg, 1'b0);
                GMC_REG_CNT_APERTURE_WR_HI:  reg_rd_data = hi_or_snap(SN_AP_WR, half(cnt_ap_wr_reg, 1'b1));
                GMC_REG_CNT_DMA_BUSY_LO:     reg_rd_data = half(cnt_dma_busy_reg, 1'b0);
                GMC_REG_CNT_DMA_BUSY_HI:     reg_rd_data = hi_or_snap(SN_DMA_BUSY, half(cnt_dma_busy_reg, 1'b1));
                GMC_REG_CNT_DMA_RD_VRAM_LO:  reg_rd_data = half(cnt_dma_rd_vram_reg, 1'b0);
                GMC_REG_CNT_DMA_RD_VRAM_HI:  reg_rd_data = hi_or_snap(SN_DMA_RD_VRAM, half(cnt_dma_rd_vram_reg, 1'b1));
                GMC_REG_CNT_DMA_WR_VRAM_LO:  reg_rd_data = half(cnt_dma_wr_vram_reg, 1'b0);
                GMC_REG_CNT_DMA_WR_VRAM_HI:  reg_rd_data = hi_or_snap(SN_DMA_WR_VRAM, half(cnt_dma_wr_vram_reg, 1'b1));
                GMC_REG_CNT_DMA_RD_SYS_LO:   reg_rd_data = half(cnt_dma_rd_sys_reg, 1'b0);
                GMC_REG_CNT_DMA_RD_SYS_HI:   reg_rd_data = hi_or_snap(SN_DMA_RD_SYS, half(cnt_dma_rd_sys_reg, 1'b1));
                GMC_REG_CNT_DMA_WR_SYS_LO:   reg_rd_data = half(cnt_dma_wr_sys_reg, 1'b0);
                GMC_REG_CNT_DMA_WR_SYS_HI:   reg_rd_data = hi_or_snap(SN_DMA_WR_SYS, half(cnt_dma_wr_sys_reg, 1'b1));
                GMC_REG_CNT_DMA_RD_APERTURE_LO: reg_rd_data = half(cnt_dma_rd_ap_reg, 1'b0);
                GMC_REG_CNT_DMA_RD_APERTURE_HI: reg_rd_data = hi_or_snap(SN_DMA_RD_AP, half(cnt_dma_rd_ap_reg, 1'b1));
                GMC_REG_CNT_DMA_WR_APERTURE_LO: reg_rd_data = half(cnt_dma_wr_ap_reg, 1'b0);
                GMC_REG_CNT_DMA_WR_APERTURE_HI: reg_rd_data = hi_or_snap(SN_DMA_WR_AP, half(cnt_dma_wr_ap_reg, 1'b1));
                GMC_REG_CNT_DMA_PACKETS_LO:  reg_rd_data = half(cnt_dma_pkt_reg, 1'b0);
                GMC_REG_CNT_DMA_PACKETS_HI:  reg_rd_data = hi_or_snap(SN_DMA_PKT, half(cnt_dma_pkt_reg, 1'b1));
                GMC_REG_CNT_DMA_FAULTS_LO:   reg_rd_data = half(cnt_dma_fault_reg, 1'b0);
                GMC_REG_CNT_DMA_FAULTS_HI:   reg_rd_data = hi_or_snap(SN_DMA_FAULT, half(cnt_dma_fault_reg, 1'b1));
                GMC_REG_CNT_DMA_CLOCK_LO:    reg_rd_data = half(cnt_dma_clock_reg, 1'b0);
                GMC_REG_CNT_DMA_CLOCK_HI:    reg_rd_data = hi_or_snap(SN_DMA_CLOCK, half(cnt_dma_clock_reg, 1'b1));
                GMC_REG_DMA_CTRL:        reg_rd_data = dma_ctrl_word;
                GMC_REG_DMA_STATUS:      reg_rd_data = ({30'd0, dma_state} << GMC_DMA_STATUS_STATE_LSB)
                                                     | ({31'd0, dma_indirect} << GMC_DMA_STATUS_INDIRECT_LSB)
                                                     | ({24'd0, dma_rd_out} << GMC_DMA_STATUS_RD_OUTSTANDING_LSB)
                                                     | ({24'd0, dma_wr_out} << GMC_DMA_STATUS_WR_OUTSTANDING_LSB);
                GMC_REG_DMA_RING_BASE_LO: reg_rd_data = dma_base_lo_reg;
                GMC_REG_DMA_RING_BASE_HI: reg_rd_data = dma_base_hi_reg;
                GMC_REG_DMA_RING_SIZE:   reg_rd_data = {27'd0, dma_log2_reg};
                GMC_REG_DMA_RING_HEAD:   reg_rd_data = {12'd0, dma_head};
                GMC_REG_DMA_RING_TAIL:   reg_rd_data = dma_tail_reg;
                GMC_REG_DMA_FENCE_LO:    reg_rd_data = dma_fence[31:0];
                GMC_REG_DMA_FENCE_HI:    reg_rd_data = hi_or_snap(SN_DMA_FENCE, dma_fence[63:32]);
                GMC_REG_DMA_FAULT_CODE:  reg_rd_data = {23'd0, dma_fault_code};
                GMC_REG_DMA_FAULT_PKT_LO: reg_rd_data = dma_fault_pkt64[31:0];
                GMC_REG_DMA_FAULT_PKT_HI: reg_rd_data = hi_or_snap(SN_DMA_FPKT, dma_fault_pkt64[63:32]);
                GMC_REG_DMA_FAULT_ADDR_LO: reg_rd_data = dma_fault_addr64[31:0];
                GMC_REG_DMA_FAULT_ADDR_HI: reg_rd_data = hi_or_snap(SN_DMA_FADDR, dma_fault_addr64[63:32]);
                GMC_REG_DMA_WATCHDOG:    reg_rd_data = dma_watchdog_reg;
                GMC_REG_DMA_READ_RESULT_LO: reg_rd_data = dma_read_result[31:0];
                GMC_REG_DMA_READ_RESULT_HI: reg_rd_data = hi_or_snap(SN_DMA_RDRES, dma_read_result[63:32]);
                default: begin
                    if (reg_rd_addr >= GMC_REG_PROT_BASE && {16'd0, prot_rel} < PROT_SPAN
                        && prot_idx_ok && rd_acc != GMC_ACC_NONE)
                        reg_rd_data = prot_rel[2] ? prot_limit_reg[prot_idx] : prot_base_reg[prot_idx];
                    else if (reg_rd_addr >= GMC_REG_SEG_BASE_LO
                             && {16'd0, seg_rel} < SEG_SPAN)
                        reg_rd_data = seg_word(seg_rel[6:5], seg_rel[4:0]);
                    else if (reg_rd_addr >= GMC_REG_SEG_SYSMEM_END_LO
                             && {16'd0, end_rel} < END_SPAN)
                        reg_rd_data = seg_end_word(end_rel[4:3], end_rel[2]);
                end
            endcase
        end
    end

    // The micro-sequenced engine's status RAM (DMA_ENGINE 3): 64-bit word
    // st_grp is DMA_FENCE (0), DMA_READ_RESULT (1), DMA_FAULT_PKT (2),
    // DMA_FAULT_ADDR (3), CNT_DMA_RD_VRAM, _WR_VRAM, _RD_SYS, _WR_SYS,
    // _RD_APERTURE, _WR_APERTURE, _PACKETS, _FAULTS (4..11). A LO read
    // answers bits 31:0 and snapshots bits 63:32 (snap_hi_reg, in the cycle
    // of the answer) as for the other engines; a HI read answers the
    // snapshot if the last LO read was of the same register, else bits
    // 63:32. The fault registers read 0 unless the engine is faulted; the
    // counters are cut to COUNTER_WIDTH bits.
    reg  [4:0]  st_grp, st_sn;
    reg         st_late, st_hi;
    always @* begin
        st_late = 1'b1;
        st_hi = 1'b0;
        st_grp = 5'd0;
        st_sn = SN_NONE;
        case (reg_rd_addr)
            GMC_REG_DMA_FENCE_LO:          begin st_grp = 5'd0; st_sn = SN_DMA_FENCE; end
            GMC_REG_DMA_FENCE_HI:          begin st_grp = 5'd0; st_sn = SN_DMA_FENCE; st_hi = 1'b1; end
            GMC_REG_DMA_READ_RESULT_LO:    begin st_grp = 5'd1; st_sn = SN_DMA_RDRES; end
            GMC_REG_DMA_READ_RESULT_HI:    begin st_grp = 5'd1; st_sn = SN_DMA_RDRES; st_hi = 1'b1; end
            GMC_REG_DMA_FAULT_PKT_LO:      begin st_grp = 5'd2; st_sn = SN_DMA_FPKT; end
            GMC_REG_DMA_FAULT_PKT_HI:      begin st_grp = 5'd2; st_sn = SN_DMA_FPKT; st_hi = 1'b1; end
            GMC_REG_DMA_FAULT_ADDR_LO:     begin st_grp = 5'd3; st_sn = SN_DMA_FADDR; end
            GMC_REG_DMA_FAULT_ADDR_HI:     begin st_grp = 5'd3; st_sn = SN_DMA_FADDR; st_hi = 1'b1; end
            GMC_REG_CNT_DMA_RD_VRAM_LO:    begin st_grp = 5'd4; st_sn = SN_DMA_RD_VRAM; end
            GMC_REG_CNT_DMA_RD_VRAM_HI:    begin st_grp = 5'd4; st_sn = SN_DMA_RD_VRAM; st_hi = 1'b1; end
            GMC_REG_CNT_DMA_WR_VRAM_LO:    begin st_grp = 5'd5; st_sn = SN_DMA_WR_VRAM; end
            GMC_REG_CNT_DMA_WR_VRAM_HI:    begin st_grp = 5'd5; st_sn = SN_DMA_WR_VRAM; st_hi = 1'b1; end
            GMC_REG_CNT_DMA_RD_SYS_LO:     begin st_grp = 5'd6; st_sn = SN_DMA_RD_SYS; end
            GMC_REG_CNT_DMA_RD_SYS_HI:     begin st_grp = 5'd6; st_sn = SN_DMA_RD_SYS; st_hi = 1'b1; end
            GMC_REG_CNT_DMA_WR_SYS_LO:     begin st_grp = 5'd7; st_sn = SN_DMA_WR_SYS; end
            GMC_REG_CNT_DMA_WR_SYS_HI:     begin st_grp = 5'd7; st_sn = SN_DMA_WR_SYS; st_hi = 1'b1; end
            GMC_REG_CNT_DMA_RD_APERTURE_LO: begin st_grp = 5'd8; st_sn = SN_DMA_RD_AP; end
            GMC_REG_CNT_DMA_RD_APERTURE_HI: begin st_grp = 5'd8; st_sn = SN_DMA_RD_AP; st_hi = 1'b1; end
            GMC_REG_CNT_DMA_WR_APERTURE_LO: begin st_grp = 5'd9; st_sn = SN_DMA_WR_AP; end
            GMC_REG_CNT_DMA_WR_APERTURE_HI: begin st_grp = 5'd9; st_sn = SN_DMA_WR_AP; st_hi = 1'b1; end
            GMC_REG_CNT_DMA_PACKETS_LO:    begin st_grp = 5'd10; st_sn = SN_DMA_PKT; end
            GMC_REG_CNT_DMA_PACKETS_HI:    begin st_grp = 5'd10; st_sn = SN_DMA_PKT; st_hi = 1'b1; end
            GMC_REG_CNT_DMA_FAULTS_LO:     begin st_grp = 5'd11; st_sn = SN_DMA_FAULT; end
            GMC_REG_CNT_DMA_FAULTS_HI:     begin st_grp = 5'd11; st_sn = SN_DMA_FAULT; st_hi = 1'b1; end
            default:                       st_late = 1'b0;
        endcase
    end
    reg         late_fault_reg, late_ctr_reg, late_hi_reg, late_lo_reg;
    reg  [4:0]  late_sn_reg;
    assign dma_st_ra = st_grp;
    assign reg_rd_late = DMA_ENGINE == 3 && reg_rd_en && st_late;
    // Bits 63:32 cut to the counter width.
    localparam [31:0] CNT_HI_MASK = (CW >= 64) ? 32'hFFFF_FFFF : (CW <= 32) ? 32'd0
                                  : ((32'd1 << (CW - 32)) - 32'd1);
    // (A counter marked cleared by CNT_CLEAR reads 0: dma_st_rz.)
    wire        st_gone = (late_fault_reg && {2'd0, dma_state} != GMC_DMA_STATE_FAULTED) || dma_st_rz;
    wire [31:0] st_lo_v = st_gone ? 32'd0 : dma_st_rd[31:0];
    wire [31:0] st_hi_v = st_gone ? 32'd0 : late_ctr_reg ? dma_st_rd[63:32] & CNT_HI_MASK : dma_st_rd[63:32];
    assign reg_rd_late_data = !late_hi_reg ? st_lo_v
                            : (snap_sel_reg == late_sn_reg) ? snap_hi_reg : st_hi_v;

    // ----------------------------------------------------------- writes

    wire [15:0] wr_prot_rel = reg_wr_addr - GMC_REG_PROT_BASE;

    reg  [1:0]  wr_acc;
    wire        wr_ok = reg_wr_en && (wr_acc == GMC_ACC_RW || wr_acc == GMC_ACC_WO);
    // CNT_CLEAR, to the micro-sequenced engine's counters (in the same cycle
    // as the others').
    assign dma_cnt_clear = DMA_ENGINE == 3 && wr_ok && reg_wr_addr == GMC_REG_CNT_CLEAR;
    // The strobe mask and the written data are functions, called only
    // under wr_ok (in a write).
    function [31:0] smask;
        input [3:0] s;
        begin
            smask = {{8{s[3]}}, {8{s[2]}}, {8{s[1]}}, {8{s[0]}}};
        end
    endfunction

    // One written bit under its strobe.
    function wbit;
        input integer b;
        begin
            wbit = reg_wr_data[b] & reg_wr_strb[b / 8];
        end
    endfunction

    function [31:0] wval;
        input [31:0] d;
        input [3:0]  s;
        begin
            wval = d & smask(s);
        end
    endfunction

    // Decoded only in a write (the register port samples the response then).
    always @* begin
        wr_acc = GMC_ACC_NONE;
        reg_wr_resp = RESP_OKAY;
        if (reg_wr_en) begin
            wr_acc = gmc_reg_access(reg_wr_addr);
            case (wr_acc)
                GMC_ACC_NONE: reg_wr_resp = RESP_DECERR;
                GMC_ACC_RO:   reg_wr_resp = RESP_SLVERR;
                default:      reg_wr_resp = RESP_OKAY;
            endcase
        end
    end

    // New value of a read-write register under its writable mask and the strobes.
    function [31:0] merge;
        input [31:0] old;
        input [31:0] mask;
        begin
            merge = (old & ~(mask & smask(reg_wr_strb))) | (reg_wr_data & mask & smask(reg_wr_strb));
        end
    endfunction

    // DMA_RING_SIZE.LOG2 is kept inside 12..20.
    function [4:0] clamp_log2;
        input [4:0] v;
        begin
            clamp_log2 = (v < 5'd12) ? 5'd12 : (v > 5'd20) ? 5'd20 : v;
        end
    endfunction
    /* verilator lint_off UNUSEDSIGNAL */
    function [4:0] size_new;
        input [4:0] old;
        reg   [31:0] m;
        begin
            m = merge({27'd0, old}, GMC_REG_DMA_RING_SIZE_WMASK);
            size_new = m[4:0];
        end
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    // The micro-sequenced engine's configuration RAM: word 0/1 the ring
    // base LO/HI, 2 PT_BASE, 3/4 DUMMY_PAGE LO/HI, 8+i / 12+i PROT_BASE /
    // PROT_LIMIT of range i. A host write is copied under its byte strobes
    // (the RAM's byte write enables keep the other bytes) and the
    // register's writable mask. After a reset, words 0..15 are written
    // with the registers' reset values (cfg_init counts them), except a
    // word the host has written since the reset (cfg_host): a host write
    // takes the RAM's port first.
    reg  [4:0]  cfg_init;
    // The written word under a register's writable mask; its other bits
    // keep their reset values.
    function [31:0] cfg_v;
        input [31:0] wmask;
        input [31:0] rv;
        begin
            cfg_v = (reg_wr_data & wmask) | (rv & ~wmask);
        end
    endfunction
    reg  [15:0] cfg_host;
    reg         cfg_hw;
    reg  [4:0]  cfg_hwa;
    reg  [31:0] cfg_hwd;
    always @* begin
        cfg_hw = 1'b0;
        cfg_hwa = 5'd0;
        cfg_hwd = reg_wr_data;
        if (DMA_ENGINE == 3 && wr_ok) begin
            case (reg_wr_addr)
                GMC_REG_DMA_RING_BASE_LO: begin cfg_hw = 1'b1; cfg_hwa = 5'd0;
                                          cfg_hwd = cfg_v(GMC_REG_DMA_RING_BASE_LO_WMASK, GMC_REG_DMA_RING_BASE_LO_RESET); end
                GMC_REG_DMA_RING_BASE_HI: begin cfg_hw = 1'b1; cfg_hwa = 5'd1;
                                          cfg_hwd = cfg_v(GMC_REG_DMA_RING_BASE_HI_WMASK, GMC_REG_DMA_RING_BASE_HI_RESET); end
                GMC_REG_PT_BASE:          begin cfg_hw = 1'b1; cfg_hwa = 5'd2;
                                          cfg_hwd = cfg_v(GMC_REG_PT_BASE_WMASK, PT_BASE_RESET); end
                GMC_REG_DUMMY_PAGE_LO:    begin cfg_hw = 1'b1; cfg_hwa = 5'd3;
                                          cfg_hwd = cfg_v(GMC_REG_DUMMY_PAGE_LO_WMASK, GMC_REG_DUMMY_PAGE_LO_RESET); end
                GMC_REG_DUMMY_PAGE_HI:    begin cfg_hw = 1'b1; cfg_hwa = 5'd4;
                                          cfg_hwd = cfg_v(GMC_REG_DUMMY_PAGE_HI_WMASK, GMC_REG_DUMMY_PAGE_HI_RESET); end
                default:
                    if (reg_wr_addr >= GMC_REG_PROT_BASE && {16'd0, wr_prot_rel} < PROT_SPAN
                        && {19'd0, wr_prot_rel[15:3]} < PROT_RANGES) begin
                        cfg_hw = 1'b1;
                        cfg_hwa = {2'b01, wr_prot_rel[2], wr_prot_rel[4:3]};
                        cfg_hwd = wr_prot_rel[2] ? cfg_v(GMC_REG_PROT_LIMIT_WMASK, GMC_REG_PROT_LIMIT_RESET)
                                                 : cfg_v(GMC_REG_PROT_BASE_WMASK, GMC_REG_PROT_BASE_RESET);
                    end
            endcase
        end
    end
    // A word's reset value.
    function [31:0] cfg_reset;
        input [3:0] w;
        begin
            case (w)
                4'd0: cfg_reset = GMC_REG_DMA_RING_BASE_LO_RESET;
                4'd1: cfg_reset = GMC_REG_DMA_RING_BASE_HI_RESET;
                4'd2: cfg_reset = PT_BASE_RESET;
                4'd3: cfg_reset = GMC_REG_DUMMY_PAGE_LO_RESET;
                4'd4: cfg_reset = GMC_REG_DUMMY_PAGE_HI_RESET;
                4'd8, 4'd9, 4'd10, 4'd11: cfg_reset = GMC_REG_PROT_BASE_RESET;
                4'd12, 4'd13, 4'd14, 4'd15: cfg_reset = GMC_REG_PROT_LIMIT_RESET;
                default: cfg_reset = 32'd0;
            endcase
        end
    endfunction

    integer i;
    always @(posedge clk) begin
        late_fault_reg <= st_grp == 5'd2 || st_grp == 5'd3;
        late_ctr_reg <= st_grp >= 5'd4;
        late_hi_reg <= st_hi;
        late_lo_reg <= DMA_ENGINE == 3 && reg_rd_en && st_late && !st_hi;
        late_sn_reg <= st_sn;
        dma_cfg_we <= 4'd0;
        if (cfg_hw) begin
            dma_cfg_we <= reg_wr_strb;
            dma_cfg_wa <= cfg_hwa;
            dma_cfg_wd <= cfg_hwd;
            cfg_host[cfg_hwa[3:0]] <= 1'b1;
        end else if (DMA_ENGINE == 3 && !cfg_init[4]) begin
            dma_cfg_we <= cfg_host[cfg_init[3:0]] ? 4'd0 : 4'hF;
            dma_cfg_wa <= cfg_init;
            dma_cfg_wd <= cfg_reset(cfg_init[3:0]);
            cfg_init <= cfg_init + 5'd1;
        end
        if (rst) begin
            dma_cfg_we <= 4'd0;
            late_lo_reg <= 1'b0;
            cfg_init <= 5'd0;
            cfg_host <= 16'd0;
        end
    end

    always @(posedge clk) begin
        inv_all <= 1'b0;
        inv_page_valid <= 1'b0;
        dma_cmd_skip <= 1'b0;
        dma_cmd_reset <= 1'b0;
        cycle_reg <= cycle_reg + 64'd1;

        // DMA counters.
        cnt_dma_busy_reg <= cnt_dma_busy_reg + {{(CW-1){1'b0}}, dma_state != GMC_DMA_STATE_IDLE[1:0]};
        // (With the micro-sequenced engine these eight are in its
        // register file and stay 0 here.)
        if (DMA_ENGINE != 3) begin
            cnt_dma_rd_vram_reg <= cnt_dma_rd_vram_reg + {{(CW-4){1'b0}}, dma_rd_vram};
            cnt_dma_wr_vram_reg <= cnt_dma_wr_vram_reg + {{(CW-4){1'b0}}, dma_wr_vram};
            cnt_dma_rd_sys_reg <= cnt_dma_rd_sys_reg + {{(CW-4){1'b0}}, dma_rd_sys};
            cnt_dma_wr_sys_reg <= cnt_dma_wr_sys_reg + {{(CW-4){1'b0}}, dma_wr_sys};
            cnt_dma_rd_ap_reg <= cnt_dma_rd_ap_reg + {{(CW-4){1'b0}}, dma_rd_ap};
            cnt_dma_wr_ap_reg <= cnt_dma_wr_ap_reg + {{(CW-4){1'b0}}, dma_wr_ap};
            cnt_dma_pkt_reg <= cnt_dma_pkt_reg + {{(CW-2){1'b0}}, dma_ev_packets};
            cnt_dma_fault_reg <= cnt_dma_fault_reg + {{(CW-1){1'b0}}, dma_ev_fault};
        end
        cnt_dma_clock_reg <= cnt_dma_clock_reg + {{(CW-1){1'b0}}, dma_clk_run};

        // Counters.
        cnt_hit_reg <= cnt_hit_reg + {{(CW-1){1'b0}}, tlb_hit};
        cnt_miss_reg <= cnt_miss_reg + {{(CW-1){1'b0}}, tlb_miss};
        cnt_dummy_reg <= cnt_dummy_reg + {{(CW-1){1'b0}}, tlb_dummy};
        cnt_ap_rd_reg <= cnt_ap_rd_reg + {{(CW-4){1'b0}}, ap_rd_bytes};
        cnt_ap_wr_reg <= cnt_ap_wr_reg + {{(CW-4){1'b0}}, ap_wr_bytes};

        // Snapshots for LO/HI reads.
        if (reg_rd_en) begin
            case (reg_rd_addr)
                GMC_REG_CYCLE_LO: begin snap_sel_reg <= SN_CYCLE; snap_hi_reg <= cycle_reg[63:32]; end
                GMC_REG_CNT_TLB_HIT_LO: begin snap_sel_reg <= SN_HIT; snap_hi_reg <= half(cnt_hit_reg, 1'b1); end
                GMC_REG_CNT_TLB_MISS_LO: begin snap_sel_reg <= SN_MISS; snap_hi_reg <= half(cnt_miss_reg, 1'b1); end
                GMC_REG_CNT_DUMMY_HIT_LO: begin snap_sel_reg <= SN_DUMMY; snap_hi_reg <= half(cnt_dummy_reg, 1'b1); end
                GMC_REG_CNT_APERTURE_RD_LO: begin snap_sel_reg <= SN_AP_RD; snap_hi_reg <= half(cnt_ap_rd_reg, 1'b1); end
                GMC_REG_CNT_APERTURE_WR_LO: begin snap_sel_reg <= SN_AP_WR; snap_hi_reg <= half(cnt_ap_wr_reg, 1'b1); end
                GMC_REG_CNT_DMA_BUSY_LO: begin snap_sel_reg <= SN_DMA_BUSY; snap_hi_reg <= half(cnt_dma_busy_reg, 1'b1); end
                GMC_REG_CNT_DMA_RD_VRAM_LO: begin snap_sel_reg <= SN_DMA_RD_VRAM; snap_hi_reg <= half(cnt_dma_rd_vram_reg, 1'b1); end
                GMC_REG_CNT_DMA_WR_VRAM_LO: begin snap_sel_reg <= SN_DMA_WR_VRAM; snap_hi_reg <= half(cnt_dma_wr_vram_reg, 1'b1); end
                GMC_REG_CNT_DMA_RD_SYS_LO: begin snap_sel_reg <= SN_DMA_RD_SYS; snap_hi_reg <= half(cnt_dma_rd_sys_reg, 1'b1); end
                GMC_REG_CNT_DMA_WR_SYS_LO: begin snap_sel_reg <= SN_DMA_WR_SYS; snap_hi_reg <= half(cnt_dma_wr_sys_reg, 1'b1); end
                GMC_REG_CNT_DMA_RD_APERTURE_LO: begin snap_sel_reg <= SN_DMA_RD_AP; snap_hi_reg <= half(cnt_dma_rd_ap_reg, 1'b1); end
                GMC_REG_CNT_DMA_WR_APERTURE_LO: begin snap_sel_reg <= SN_DMA_WR_AP; snap_hi_reg <= half(cnt_dma_wr_ap_reg, 1'b1); end
                GMC_REG_CNT_DMA_PACKETS_LO: begin snap_sel_reg <= SN_DMA_PKT; snap_hi_reg <= half(cnt_dma_pkt_reg, 1'b1); end
                GMC_REG_CNT_DMA_FAULTS_LO: begin snap_sel_reg <= SN_DMA_FAULT; snap_hi_reg <= half(cnt_dma_fault_reg, 1'b1); end
                GMC_REG_CNT_DMA_CLOCK_LO: begin snap_sel_reg <= SN_DMA_CLOCK; snap_hi_reg <= half(cnt_dma_clock_reg, 1'b1); end
                GMC_REG_DMA_FENCE_LO: begin snap_sel_reg <= SN_DMA_FENCE; snap_hi_reg <= dma_fence[63:32]; end
                GMC_REG_DMA_FAULT_PKT_LO: begin snap_sel_reg <= SN_DMA_FPKT; snap_hi_reg <= dma_fault_pkt64[63:32]; end
                GMC_REG_DMA_FAULT_ADDR_LO: begin snap_sel_reg <= SN_DMA_FADDR; snap_hi_reg <= dma_fault_addr64[63:32]; end
                GMC_REG_DMA_READ_RESULT_LO: begin snap_sel_reg <= SN_DMA_RDRES; snap_hi_reg <= dma_read_result[63:32]; end
                default: ;
            endcase
        end
        // (The micro-sequenced engine's LO read: its HI half in the cycle of the answer.)
        if (DMA_ENGINE == 3 && late_lo_reg) snap_hi_reg <= st_hi_v;

        // Debug translation port.
        if (xl_req_valid && xl_req_ready)
            xl_req_valid <= 1'b0;
        if (xl_resp_valid && xl_busy_reg) begin
            xl_busy_reg <= 1'b0;
            xl_done_reg <= 1'b1;
            xl_fault_reg <= xl_resp_fault;
            xl_code_reg <= xl_resp_code;
            xl_result_reg <= xl_resp_addr;
            xl_system_reg <= xl_resp_system;
            xl_hit_reg <= xl_resp_hit;
            xl_dummy_reg <= xl_resp_dummy;
        end

        // Register writes.
        if (wr_ok) begin
            case (reg_wr_addr)
                GMC_REG_SCRATCH:       scratch_reg <= merge(scratch_reg, GMC_REG_SCRATCH_WMASK);
                GMC_REG_IRQ_MASK:      irq_mask_reg <= merge(irq_mask_reg, GMC_REG_IRQ_MASK_WMASK);
                GMC_REG_IRQ_ACK:       irq_status_reg <= irq_status_reg & ~(wval(reg_wr_data, reg_wr_strb) & GMC_REG_IRQ_ACK_WMASK);
                GMC_REG_APF_CLEAR: begin
                    apf_valid_reg <= 1'b0;
                    apf_write_reg <= 1'b0;
                    apf_overflow_reg <= 1'b0;
                    apf_kind_reg <= 2'd0;
                    apf_addr_reg <= 32'd0;
                    apf_count_reg <= 32'd0;
                end
                GMC_REG_PT_BASE:       pt_base_reg <= merge(pt_base_reg, GMC_REG_PT_BASE_WMASK);
                GMC_REG_DUMMY_PAGE_LO: dummy_lo_reg <= merge(dummy_lo_reg, GMC_REG_DUMMY_PAGE_LO_WMASK);
                GMC_REG_DUMMY_PAGE_HI: dummy_hi_reg <= merge(dummy_hi_reg, GMC_REG_DUMMY_PAGE_HI_WMASK);
                GMC_REG_TLB_INV_PAGE: begin
                    inv_page_valid <= 1'b1;
                    inv_page <= wval(reg_wr_data, reg_wr_strb);
                end
                GMC_REG_TLB_INV_ALL:   inv_all <= 1'b1;
                GMC_REG_XLATE_ADDR:    xl_addr_reg <= merge(xl_addr_reg, GMC_REG_XLATE_ADDR_WMASK);
                GMC_REG_XLATE_CTRL: begin
                    if (wbit(GMC_XLATE_CTRL_GO_LSB) && !xl_busy_reg) begin
                        xl_busy_reg <= 1'b1;
                        xl_done_reg <= 1'b0;
                        xl_req_valid <= 1'b1;
                        xl_req_write <= wbit(GMC_XLATE_CTRL_WRITE_LSB);
                    end
                end
                GMC_REG_CNT_CLEAR: begin
                    cnt_hit_reg <= {CW{1'b0}};
                    cnt_miss_reg <= {CW{1'b0}};
                    cnt_dummy_reg <= {CW{1'b0}};
                    cnt_ap_rd_reg <= {CW{1'b0}};
                    cnt_ap_wr_reg <= {CW{1'b0}};
                    cnt_dma_busy_reg <= {CW{1'b0}};
                    cnt_dma_rd_vram_reg <= {CW{1'b0}};
                    cnt_dma_wr_vram_reg <= {CW{1'b0}};
                    cnt_dma_rd_sys_reg <= {CW{1'b0}};
                    cnt_dma_wr_sys_reg <= {CW{1'b0}};
                    cnt_dma_rd_ap_reg <= {CW{1'b0}};
                    cnt_dma_wr_ap_reg <= {CW{1'b0}};
                    cnt_dma_pkt_reg <= {CW{1'b0}};
                    cnt_dma_fault_reg <= {CW{1'b0}};
                    cnt_dma_clock_reg <= {CW{1'b0}};
                end
                GMC_REG_DMA_CTRL: begin
                    dma_enable_reg <= (merge(dma_ctrl_word, GMC_REG_DMA_CTRL_WMASK)
                                       & (32'd1 << GMC_DMA_CTRL_ENABLE_LSB)) != 32'd0;
                    dma_clk_on_reg <= (merge(dma_ctrl_word, GMC_REG_DMA_CTRL_WMASK)
                                       & (32'd1 << GMC_DMA_CTRL_CLOCK_ON_LSB)) != 32'd0;
                end
                GMC_REG_DMA_CMD: begin
                    dma_cmd_skip <= wbit(GMC_DMA_CMD_SKIP_LSB);
                    dma_cmd_reset <= wbit(GMC_DMA_CMD_RESET_LSB);
                end
                GMC_REG_DMA_RING_BASE_LO: dma_base_lo_reg <= merge(dma_base_lo_reg, GMC_REG_DMA_RING_BASE_LO_WMASK);
                GMC_REG_DMA_RING_BASE_HI: dma_base_hi_reg <= merge(dma_base_hi_reg, GMC_REG_DMA_RING_BASE_HI_WMASK);
                GMC_REG_DMA_RING_SIZE: dma_log2_reg <= clamp_log2(size_new(dma_log2_reg));
                GMC_REG_DMA_RING_TAIL: dma_tail_reg <= merge(dma_tail_reg, GMC_REG_DMA_RING_TAIL_WMASK);
                GMC_REG_DMA_WATCHDOG:  dma_watchdog_reg <= merge(dma_watchdog_reg, GMC_REG_DMA_WATCHDOG_WMASK);
                default: begin
                    for (i = 0; i < PROT_RANGES; i = i + 1) begin
                        if ({16'd0, reg_wr_addr} == {16'd0, GMC_REG_PROT_BASE} + i * {16'd0, GMC_REG_PROT_BASE_STRIDE})
                            prot_base_reg[i] <= merge(prot_base_reg[i], GMC_REG_PROT_BASE_WMASK);
                        if ({16'd0, reg_wr_addr} == {16'd0, GMC_REG_PROT_LIMIT} + i * {16'd0, GMC_REG_PROT_LIMIT_STRIDE})
                            prot_limit_reg[i] <= merge(prot_limit_reg[i], GMC_REG_PROT_LIMIT_WMASK);
                    end
                end
            endcase
        end

        // Aperture fault log: the first fault since APF_CLEAR is kept.
        if (apf_rd_valid || apf_wr_valid) begin
            if (!apf_valid_reg) begin
                apf_valid_reg <= 1'b1;
                apf_write_reg <= !apf_rd_valid;
                apf_kind_reg <= apf_rd_valid ? apf_rd_kind : apf_wr_kind;
                apf_addr_reg <= apf_rd_valid ? apf_rd_addr : apf_wr_addr;
                apf_overflow_reg <= apf_rd_valid && apf_wr_valid;
            end else begin
                apf_overflow_reg <= 1'b1;
            end
            apf_count_reg <= apf_count_reg + {31'd0, apf_rd_valid} + {31'd0, apf_wr_valid};
        end

        // Interrupt sources: a new event wins over an acknowledge in the same cycle.
        if (apf_rd_valid || apf_wr_valid)
            irq_status_reg[GMC_IRQ_APERTURE_FAULT_LSB] <= 1'b1;
        if (xl_resp_valid && xl_busy_reg)
            irq_status_reg[GMC_IRQ_XLATE_DONE_LSB] <= 1'b1;
        if (dma_ev_fence_irq)
            irq_status_reg[GMC_IRQ_DMA_FENCE_LSB] <= 1'b1;
        if (dma_ev_fault)
            irq_status_reg[GMC_IRQ_DMA_FAULT_LSB] <= 1'b1;

        if (rst) begin
            scratch_reg <= GMC_REG_SCRATCH_RESET;
            irq_status_reg <= GMC_REG_IRQ_STATUS_RESET;
            irq_mask_reg <= GMC_REG_IRQ_MASK_RESET;
            cycle_reg <= 64'd0;
            apf_valid_reg <= 1'b0;
            apf_write_reg <= 1'b0;
            apf_overflow_reg <= 1'b0;
            apf_kind_reg <= 2'd0;
            apf_addr_reg <= 32'd0;
            apf_count_reg <= 32'd0;
            for (i = 0; i < PROT_RANGES; i = i + 1) begin
                prot_base_reg[i] <= GMC_REG_PROT_BASE_RESET;
                prot_limit_reg[i] <= GMC_REG_PROT_LIMIT_RESET;
            end
            pt_base_reg <= PT_BASE_RESET;
            dummy_lo_reg <= GMC_REG_DUMMY_PAGE_LO_RESET;
            dummy_hi_reg <= GMC_REG_DUMMY_PAGE_HI_RESET;
            inv_all <= 1'b0;
            inv_page_valid <= 1'b0;
            inv_page <= 32'd0;
            xl_addr_reg <= GMC_REG_XLATE_ADDR_RESET;
            xl_req_valid <= 1'b0;
            xl_req_write <= 1'b0;
            xl_busy_reg <= 1'b0;
            xl_done_reg <= 1'b0;
            xl_fault_reg <= 1'b0;
            xl_hit_reg <= 1'b0;
            xl_dummy_reg <= 1'b0;
            xl_system_reg <= 1'b0;
            xl_code_reg <= 4'd0;
            xl_result_reg <= 48'd0;
            cnt_hit_reg <= {CW{1'b0}};
            cnt_miss_reg <= {CW{1'b0}};
            cnt_dummy_reg <= {CW{1'b0}};
            cnt_ap_rd_reg <= {CW{1'b0}};
            cnt_ap_wr_reg <= {CW{1'b0}};
            snap_sel_reg <= SN_NONE;
            snap_hi_reg <= 32'd0;
            dma_cmd_skip <= 1'b0;
            dma_cmd_reset <= 1'b0;
            dma_enable_reg <= GMC_REG_DMA_CTRL_RESET[GMC_DMA_CTRL_ENABLE_LSB];
            dma_clk_on_reg <= GMC_REG_DMA_CTRL_RESET[GMC_DMA_CTRL_CLOCK_ON_LSB];
            dma_base_lo_reg <= GMC_REG_DMA_RING_BASE_LO_RESET;
            dma_base_hi_reg <= GMC_REG_DMA_RING_BASE_HI_RESET;
            dma_log2_reg <= GMC_REG_DMA_RING_SIZE_RESET[4:0];
            dma_tail_reg <= GMC_REG_DMA_RING_TAIL_RESET;
            dma_watchdog_reg <= GMC_REG_DMA_WATCHDOG_RESET;
            cnt_dma_busy_reg <= {CW{1'b0}};
            cnt_dma_rd_vram_reg <= {CW{1'b0}};
            cnt_dma_wr_vram_reg <= {CW{1'b0}};
            cnt_dma_rd_sys_reg <= {CW{1'b0}};
            cnt_dma_wr_sys_reg <= {CW{1'b0}};
            cnt_dma_rd_ap_reg <= {CW{1'b0}};
            cnt_dma_wr_ap_reg <= {CW{1'b0}};
            cnt_dma_pkt_reg <= {CW{1'b0}};
            cnt_dma_fault_reg <= {CW{1'b0}};
            cnt_dma_clock_reg <= {CW{1'b0}};
        end
    end

endmodule

`resetall
