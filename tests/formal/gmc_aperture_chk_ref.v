// gmc: the aperture's burst verdict written plainly, for the equivalence
// proof of rtl/gmc_aperture_chk.v (tests/formal/test_formal.sh): every
// address in 34-bit arithmetic, every protected-range bound compared whole.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module gmc_aperture_chk_ref #(
    parameter integer WINDOW_BYTES = 2 * 1024 * 1024,
    parameter [31:0] WINDOW_VRAM_BASE = 32'd0,
    parameter integer PROT_RANGES = 4
) (
    input  wire [31:0]               bar_addr,
    input  wire [7:0]                len,
    input  wire [2:0]                size,
    input  wire [1:0]                burst,
    input  wire [32*PROT_RANGES-1:0] prot_base,
    input  wire [32*PROT_RANGES-1:0] prot_limit,
    output reg  [1:0]                verdict
);

    `include "gmc_regs.vh"

    localparam [31:0] WIN_BYTES32 = WINDOW_BYTES;
    reg [33:0] lo, hi, bytes, span, vlo, vhi;
    reg        hit;
    integer    k;
    always @* begin
        bytes = 34'd1 << size;
        span  = ({26'd0, len} + 34'd1) << size;
        lo = {2'b00, bar_addr};
        hi = 34'd0;
        vlo = 34'd0;
        vhi = 34'd0;
        hit = 1'b0;
        verdict = 2'd0;
        if (size > 3'd3 || burst == 2'd3) begin
            verdict = GMC_APF_KIND_BURST[1:0];
        end else if (burst == 2'd2) begin
            if ((len != 8'd1 && len != 8'd3 && len != 8'd7 && len != 8'd15)
                || (lo & (bytes - 34'd1)) != 34'd0)
                verdict = GMC_APF_KIND_BURST[1:0];
            lo = lo & ~(span - 34'd1);
            hi = lo + span - 34'd1;
        end else if (burst == 2'd0) begin
            hi = (lo & ~(bytes - 34'd1)) + bytes - 34'd1;
        end else begin
            hi = (lo & ~(bytes - 34'd1)) + span - 34'd1;
        end
        if (verdict == 2'd0) begin
            if (hi >= {2'b00, WIN_BYTES32}) begin
                verdict = GMC_APF_KIND_WINDOW[1:0];
            end else begin
                vlo = lo + {2'b00, WINDOW_VRAM_BASE};
                vhi = hi + {2'b00, WINDOW_VRAM_BASE};
                for (k = 0; k < PROT_RANGES; k = k + 1)
                    if (prot_limit[32*k +: 32] > prot_base[32*k +: 32]
                        && vlo < {2'b00, prot_limit[32*k +: 32]}
                        && vhi >= {2'b00, prot_base[32*k +: 32]})
                        hit = 1'b1;
                if (hit) verdict = GMC_APF_KIND_PROTECTED[1:0];
            end
        end
    end

endmodule

`resetall
