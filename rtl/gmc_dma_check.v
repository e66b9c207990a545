// gmc: DMA packet checks that need only the packet (and the configuration).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Combinational, evaluated only while en is set (the packet is being
// decoded): otherwise every output is 0. The first failing check names the fault, in the order
// docs/dma.md gives: OPCODE; RESERVED for W0[31:16]; NESTED (INDIRECT in
// an indirect buffer); RESERVED for the flags and words an opcode does not
// use; SIZE; RANGE (source, then destination); FILL_APERTURE; PROTECTED.
// chk_addr is DMA_FAULT_ADDR. s_vram / d_vram: the source (W1) / destination
// (W2) range of LENGTH bytes lies wholly in VRAM.
// EXT_RANGES = 1 (the compact engine): the six range results come from
// the ranges input (gmc_dmc_range works them out over several cycles)
// instead of this module's own adders and comparators.
module gmc_dma_check #(
    parameter integer VRAM_BYTES = 8 * 1024 * 1024,
    parameter [31:0]  APERTURE_BASE = 32'h8000_0000,
    parameter integer APERTURE_PAGES = 4096,
    parameter integer PROT_RANGES = 4,
    parameter integer EXT_RANGES = 0
) (
    input  wire                      en,
    input  wire [63:0]               w0,
    input  wire [63:0]               w1,
    input  wire [63:0]               w2,
    input  wire [63:0]               w3,
    input  wire                      in_ib,
    input  wire [32*PROT_RANGES-1:0] prot_base,
    input  wire [32*PROT_RANGES-1:0] prot_limit,
    // With EXT_RANGES: {s_vram, s_ap, d_vram, d_ap, m_ap, s_prot}.
    input  wire [5:0]                ranges,

    output reg  [3:0]                chk_code,
    output reg  [47:0]               chk_addr,
    output reg                       s_vram,
    output reg                       d_vram
);

    `include "gmc_regs.vh"

    // (A function keeps Verilator 5.006 from calling a parent's integer
    // parameter unsized in a concatenation.)
    function [44:0] zext45;
        input [31:0] v;
        begin
            zext45 = {13'd0, v};
        end
    endfunction
    localparam [44:0] AP_END = {13'd0, APERTURE_BASE} + APERTURE_PAGES * 45'd4096;
    localparam [44:0] VRAM_END = zext45(VRAM_BYTES);

    initial begin
        if (PROT_RANGES < 1)
            $error("gmc_dma_check: PROT_RANGES must be >= 1 (instance %m)");
    end

    reg [7:0]  op, flags, flags_ok;
    reg [31:0] len;
    reg        f_src_mdl, f_dst_mdl, f_gpu, f_wmem;
    reg        op_nop, op_xfer, op_fill, op_disc, op_rdp, op_wrp, op_map, op_unmap, op_flush, op_fence;
    reg        op_ind, op_known;
    reg        gpu1, gpu2, bus1, bus2, z1, z2, z3, zl;
    reg [63:0] wrp_keep;
    reg        rsv_bad, size_bad, phys_len_bad;
    reg [3:0]  phys_end1, phys_end2;
    reg [44:0] n_bytes, n_pages;
    reg        s_ap, d_ap, m_ap, s_prot;

    localparam [63:0] MAP_W3_OK = GMC_PKT_MAP_W3_MDL_PAGE_MASK | GMC_PKT_MAP_W3_SNOOPED_MASK
                                | GMC_PKT_MAP_W3_READABLE_MASK | GMC_PKT_MAP_W3_WRITEABLE_MASK;

    // Ranges: [a, a + n) wholly inside VRAM, or wholly inside the aperture.
    function in_vram;
        input [31:0] a;
        input [44:0] n;
        begin
            in_vram = ({13'd0, a} + n <= VRAM_END);
        end
    endfunction
    function in_ap;
        input [31:0] a;
        input [44:0] n;
        begin
            in_ap = (a >= APERTURE_BASE) && ({13'd0, a} + n <= AP_END);
        end
    endfunction
    function prot_hit;
        input [31:0] a;
        input [44:0] n;
        input [32*PROT_RANGES-1:0] pb;
        input [32*PROT_RANGES-1:0] pl;
        integer i;
        begin
            prot_hit = 1'b0;
            for (i = 0; i < PROT_RANGES; i = i + 1)
                if (pl[32 * i +: 32] > pb[32 * i +: 32] && a < pl[32 * i +: 32]
                    && {13'd0, a} + n > {13'd0, pb[32 * i +: 32]})
                    prot_hit = 1'b1;
        end
    endfunction

    always @* begin
        op = 8'd0; flags = 8'd0; flags_ok = 8'd0; len = 32'd0;
        f_src_mdl = 1'b0; f_dst_mdl = 1'b0; f_gpu = 1'b0; f_wmem = 1'b0;
        op_nop = 1'b0; op_xfer = 1'b0; op_fill = 1'b0; op_disc = 1'b0; op_rdp = 1'b0; op_wrp = 1'b0;
        op_map = 1'b0; op_unmap = 1'b0; op_flush = 1'b0; op_fence = 1'b0; op_ind = 1'b0; op_known = 1'b0;
        gpu1 = 1'b0; gpu2 = 1'b0; bus1 = 1'b0; bus2 = 1'b0; z1 = 1'b0; z2 = 1'b0; z3 = 1'b0; zl = 1'b0;
        wrp_keep = 64'd0; rsv_bad = 1'b0; size_bad = 1'b0; phys_len_bad = 1'b0;
        phys_end1 = 4'd0; phys_end2 = 4'd0; n_bytes = 45'd0; n_pages = 45'd0;
        s_vram = 1'b0; d_vram = 1'b0; s_ap = 1'b0; d_ap = 1'b0; m_ap = 1'b0; s_prot = 1'b0;
        chk_code = GMC_DMA_FAULT_NONE;
        chk_addr = 48'd0;
        if (en) begin
            op    = w0[7:0];
            flags = w0[15:8];
            len   = w0[63:32];
            f_src_mdl = flags[GMC_PKT_FLAG_SRC_MDL_LSB];
            f_dst_mdl = flags[GMC_PKT_FLAG_DST_MDL_LSB];
            f_gpu     = flags[GMC_PKT_FLAG_GPU_LSB];
            f_wmem    = flags[GMC_PKT_FLAG_WRITE_MEM_LSB];

            op_nop   = (op == {4'd0, GMC_DMA_OP_NOP});
            op_xfer  = (op == {4'd0, GMC_DMA_OP_TRANSFER});
            op_fill  = (op == {4'd0, GMC_DMA_OP_FILL});
            op_disc  = (op == {4'd0, GMC_DMA_OP_DISCARD});
            op_rdp   = (op == {4'd0, GMC_DMA_OP_READ_PHYSICAL});
            op_wrp   = (op == {4'd0, GMC_DMA_OP_WRITE_PHYSICAL});
            op_map   = (op == {4'd0, GMC_DMA_OP_MAP_APERTURE});
            op_unmap = (op == {4'd0, GMC_DMA_OP_UNMAP_APERTURE});
            op_flush = (op == {4'd0, GMC_DMA_OP_FLUSH_TLB});
            op_fence = (op == {4'd0, GMC_DMA_OP_FENCE});
            op_ind   = (op == {4'd0, GMC_DMA_OP_INDIRECT});
            op_known = op_nop || op_xfer || op_fill || op_disc || op_rdp || op_wrp || op_map
                       || op_unmap || op_flush || op_fence || op_ind;

            // Flags each opcode takes.
            if (op_xfer)          flags_ok = GMC_PKT_FLAG_SRC_MDL_MASK | GMC_PKT_FLAG_DST_MDL_MASK;
            if (op_disc)          flags_ok = GMC_PKT_FLAG_POISON_MASK;
            if (op_rdp || op_wrp) flags_ok = GMC_PKT_FLAG_GPU_MASK;
            if (op_fence)         flags_ok = GMC_PKT_FLAG_WRITE_MEM_MASK | GMC_PKT_FLAG_IRQ_MASK;

            gpu1 = (w1[63:32] == 32'd0);
            gpu2 = (w2[63:32] == 32'd0);
            bus1 = (w1[63:48] == 16'd0);
            bus2 = (w2[63:48] == 16'd0);
            z1 = (w1 == 64'd0);
            z2 = (w2 == 64'd0);
            z3 = (w3 == 64'd0);
            zl = (len == 32'd0);

            // WRITE_PHYSICAL: the bytes of W3 above LENGTH are reserved.
            wrp_keep = ~(64'hFFFF_FFFF_FFFF_FFFF << {len[2:0], 3'd0});
            rsv_bad = ((flags & ~flags_ok) != 8'd0);
            if (op_nop || op_flush)
                rsv_bad = rsv_bad || !zl || !z1 || !z2 || !z3;
            if (op_xfer)
                rsv_bad = rsv_bad || (f_src_mdl ? !bus1 : (!gpu1 || w3[31:0] != 32'd0))
                                  || (f_dst_mdl ? !bus2 : (!gpu2 || w3[63:32] != 32'd0));
            if (op_fill)
                rsv_bad = rsv_bad || !z1 || !gpu2 || (w3[63:32] != 32'd0);
            if (op_disc || op_unmap)
                rsv_bad = rsv_bad || !z1 || !gpu2 || !z3;
            if (op_rdp)
                rsv_bad = rsv_bad || (f_gpu ? !gpu1 : !bus1) || !z2 || !z3;
            if (op_wrp)
                rsv_bad = rsv_bad || !z1 || (f_gpu ? !gpu2 : !bus2)
                          || (len >= 32'd1 && len <= 32'd7 && (w3 & ~wrp_keep) != 64'd0);
            if (op_map)
                rsv_bad = rsv_bad || !bus1 || !gpu2 || ((w3 & ~MAP_W3_OK) != 64'd0);
            if (op_fence)
                rsv_bad = rsv_bad || !zl || !z1 || (f_wmem ? !bus2 : !z2);
            if (op_ind)
                rsv_bad = rsv_bad || !bus1 || !z2 || !z3;

            phys_end1 = {1'b0, w1[2:0]} + len[3:0];
            phys_end2 = {1'b0, w2[2:0]} + len[3:0];
            phys_len_bad = zl || (len > 32'd8);
            if (op_xfer)
                size_bad = zl || (f_src_mdl && w1[2:0] != 3'd0) || (f_dst_mdl && w2[2:0] != 3'd0);
            if (op_fill || op_disc)
                size_bad = zl;
            if (op_rdp)
                size_bad = phys_len_bad || (phys_end1 > 4'd8);
            if (op_wrp)
                size_bad = phys_len_bad || (phys_end2 > 4'd8);
            if (op_map)
                size_bad = zl || (w1[2:0] != 3'd0) || (w2[11:0] != 12'd0);
            if (op_unmap)
                size_bad = zl || (w2[11:0] != 12'd0);
            if (op_fence)
                size_bad = f_wmem && (w2[2:0] != 3'd0);
            if (op_ind)
                size_bad = zl || (len[4:0] != 5'd0) || (w1[4:0] != 5'd0);

            n_bytes = {13'd0, len};
            n_pages = {1'b0, len, 12'd0};
            if (EXT_RANGES != 0) begin
                {s_vram, s_ap, d_vram, d_ap, m_ap, s_prot} = ranges;
            end else begin
                s_vram = in_vram(w1[31:0], n_bytes);
                s_ap   = in_ap(w1[31:0], n_bytes);
                d_vram = in_vram(w2[31:0], n_bytes);
                d_ap   = in_ap(w2[31:0], n_bytes);
                m_ap   = in_ap(w2[31:0], n_pages);
                s_prot = prot_hit(w1[31:0], n_bytes, prot_base, prot_limit);
            end

            if (op == 8'd0 || !op_known) begin
                chk_code = GMC_DMA_FAULT_OPCODE;
            end else if (w0[31:16] != 16'd0) begin
                chk_code = GMC_DMA_FAULT_RESERVED;
            end else if (op_ind && in_ib) begin
                chk_code = GMC_DMA_FAULT_NESTED;
            end else if (rsv_bad) begin
                chk_code = GMC_DMA_FAULT_RESERVED;
            end else if (size_bad) begin
                chk_code = GMC_DMA_FAULT_SIZE;
            end else if (op_xfer) begin
                if (!f_src_mdl && !s_vram && !s_ap) begin
                    chk_code = GMC_DMA_FAULT_RANGE;
                    chk_addr = {16'd0, w1[31:0]};
                end else if (!f_dst_mdl && !d_vram && !d_ap) begin
                    chk_code = GMC_DMA_FAULT_RANGE;
                    chk_addr = {16'd0, w2[31:0]};
                end else if (!f_src_mdl && s_vram && (f_dst_mdl || !d_vram) && s_prot) begin
                    chk_code = GMC_DMA_FAULT_PROTECTED;
                    chk_addr = {16'd0, w1[31:0]};
                end
            end else if ((op_fill || op_disc) && !d_vram) begin
                chk_code = d_ap ? GMC_DMA_FAULT_FILL_APERTURE : GMC_DMA_FAULT_RANGE;
                chk_addr = {16'd0, w2[31:0]};
            end else if (op_rdp && f_gpu) begin
                if (!s_vram && !s_ap) begin
                    chk_code = GMC_DMA_FAULT_RANGE;
                    chk_addr = {16'd0, w1[31:0]};
                end else if (s_vram && s_prot) begin
                    chk_code = GMC_DMA_FAULT_PROTECTED;
                    chk_addr = {16'd0, w1[31:0]};
                end
            end else if (op_wrp && f_gpu && !d_vram && !d_ap) begin
                chk_code = GMC_DMA_FAULT_RANGE;
                chk_addr = {16'd0, w2[31:0]};
            end else if ((op_map || op_unmap) && !m_ap) begin
                chk_code = GMC_DMA_FAULT_RANGE;
                chk_addr = {16'd0, w2[31:0]};
            end
        end
    end

endmodule

`resetall
