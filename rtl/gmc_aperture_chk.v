// gmc: the CPU aperture's burst checker (combinational).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The verdict on a whole AXI burst at BAR1 offset bar_addr: 0 accept, else the
// APF_KIND to log. BURST: a reserved burst type, a beat wider than the bus,
// or a WRAP burst of another length than 2, 4, 8 or 16 beats or with an
// unaligned address. WINDOW: a byte of the burst at or past WINDOW_BYTES.
// PROTECTED: a byte of the burst, at VRAM byte WINDOW_VRAM_BASE + offset,
// in a protected range [base, limit) that is not empty (limit > base).
//
// The burst's extent is worked out at the window's width: its bytes past
// its aligned first byte are at most 2,047 (12 bits), and it can lie in the
// window only if its address is below 2^AB (AB = clog2(WINDOW_BYTES)), so
// its last byte is an (AB + 1)-bit sum, not a 34-bit one.
// Both ends of a burst inside the window lie below VRAM_TOP =
// WINDOW_VRAM_BASE + WINDOW_BYTES (at most 2^32), so VW = clog2(VRAM_TOP)
// bits hold them. A range can hold one of their bytes only when its base is
// below 2^VW too, and a limit at or above 2^VW is then above the base and
// above the burst's first byte: every compare against a range is VW bits
// wide, not 32 (on a board's 4 KiB window, 12).
// (tests/formal/gmc_aperture_chk_ref.v is the same verdict in 34-bit
// arithmetic throughout; tests/formal/test_formal.sh proves them equal.)
module gmc_aperture_chk #(
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

    localparam [1:0] BURST_FIXED = 2'd0, BURST_WRAP = 2'd2;  // anything else legal is INCR
    localparam [31:0] WIN_BYTES32 = WINDOW_BYTES;
    localparam [32:0] VRAM_TOP = {1'b0, WINDOW_VRAM_BASE} + WINDOW_BYTES;
    localparam integer VW = $clog2(VRAM_TOP);
    localparam [31:0] LOW_MASK = (VW >= 32) ? 32'hFFFF_FFFF : ((32'd1 << VW) - 32'd1);
    localparam [31:0] HIGH_MASK = ~LOW_MASK;

    // A burst's bytes past its aligned first byte number at most 16 x 8 (WRAP)
    // or 256 x 8 (INCR): 12 bits. Its first byte is in the window only if
    // the address is below 2^AB (AB >= 12), so its last byte's place is an
    // (AB + 1)-bit sum.
    localparam integer AB = $clog2(WINDOW_BYTES);
    localparam [31:0] AB_HIGH = ~((32'd1 << AB) - 32'd1);
    localparam [AB:0] WIN_AB = WIN_BYTES32[AB:0];

    reg [11:0] bytes, span, ext;
    reg [31:0] lo, al, vlo, vhi, pb, pl;
    reg [AB:0] hsum;
    reg        hit;
    integer    k;
    always @* begin
        bytes = 12'd1 << size;
        span  = ({4'd0, len} + 12'd1) << size;
        lo = bar_addr;
        al = bar_addr & ~{20'd0, bytes - 12'd1};
        ext = span - 12'd1;
        vlo = 32'd0;
        vhi = 32'd0;
        pb = 32'd0;
        pl = 32'd0;
        hit = 1'b0;
        k = 0;
        verdict = 2'd0;
        if (size > 3'd3 || burst == 2'd3) begin
            verdict = GMC_APF_KIND_BURST[1:0];
        end else if (burst == BURST_WRAP) begin
            if ((len != 8'd1 && len != 8'd3 && len != 8'd7 && len != 8'd15)
                || (bar_addr[2:0] & (bytes[2:0] - 3'd1)) != 3'd0)
                verdict = GMC_APF_KIND_BURST[1:0];
            lo = bar_addr & ~{20'd0, span - 12'd1};
            al = lo;
        end else if (burst == BURST_FIXED) begin
            ext = bytes - 12'd1;
        end
        hsum = {1'b0, al[AB-1:0]} + {{(AB-11){1'b0}}, ext};
        if (verdict == 2'd0) begin
            if ((al & AB_HIGH) != 32'd0 || hsum >= WIN_AB) begin
                verdict = GMC_APF_KIND_WINDOW[1:0];
            end else begin
                vlo = ({{(32-AB){1'b0}}, lo[AB-1:0]} + WINDOW_VRAM_BASE) & LOW_MASK;
                vhi = ({{(32-AB){1'b0}}, hsum[AB-1:0]} + WINDOW_VRAM_BASE) & LOW_MASK;
                for (k = 0; k < PROT_RANGES; k = k + 1) begin
                    pb = prot_base[32*k +: 32];
                    pl = prot_limit[32*k +: 32];
                    if ((pb & HIGH_MASK) == 32'd0 && vhi >= (pb & LOW_MASK)
                        && ((pl & HIGH_MASK) != 32'd0
                            || ((pl & LOW_MASK) > (pb & LOW_MASK) && (pl & LOW_MASK) > vlo)))
                        hit = 1'b1;
                end
                if (hit) verdict = GMC_APF_KIND_PROTECTED[1:0];
            end
        end
    end

endmodule

`resetall
