// gmc: the compact DMA engine's range checks, one comparison per cycle.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// gmc_dma_check decides a packet's fault from the packet alone; six of
// its inputs need address arithmetic: whether W1's / W2's range of LENGTH
// bytes lies wholly in VRAM or in the aperture, whether W2's range of
// LENGTH pages lies in the aperture (MAP/UNMAP), and whether W1's range
// overlaps a protected range. The full engine computes them at once (five
// 45-bit sums and, per protected range, three comparators). Here one
// 33-bit adder and one 33-bit comparator work through them while the
// engine waits in its check state (run), in 3 * PROT_RANGES + 11 cycles:
//
//   S = W1 + LENGTH      s_vram = !(VRAM_END < S)  s_ap = !(AP_END < S) && !(W1 < AP_BASE)
//   per range i:         prot |= (BASE_i < LIMIT_i) && (W1 < LIMIT_i) && (BASE_i < S)
//   S = W2 + LENGTH      d_vram, d_ap as for W1
//   S = W2 + 4096 * LENGTH (LENGTH < 2^20, else outside)   m_ap = !(AP_END < S) && !(W2 < AP_BASE)
//
// 33 bits hold every sum: addresses and LENGTH are 32-bit, VRAM_END and
// AP_END are below 2^32 (checked at elaboration). done is set in the last
// cycle, with the results (gmc_dma_check's RANGE inputs); run low resets
// the sequence.
module gmc_dmc_range #(
    parameter integer VRAM_BYTES = 8 * 1024 * 1024,
    parameter [31:0]  APERTURE_BASE = 32'h8000_0000,
    parameter integer APERTURE_PAGES = 4096,
    parameter integer PROT_RANGES = 4
) (
    input  wire                      clk,
    input  wire                      run,
    input  wire [31:0]               w1,
    input  wire [31:0]               w2,
    input  wire [31:0]               len,
    input  wire [32*PROT_RANGES-1:0] prot_base,
    input  wire [32*PROT_RANGES-1:0] prot_limit,

    output wire                      done,
    // {s_vram, s_ap, d_vram, d_ap, m_ap, s_prot}
    output wire [5:0]                ranges
);

    // (Functions keep Verilator 5.006 from calling a parent's integer
    // parameter unsized.)
    function [32:0] zext33;
        input [31:0] v;
        begin
            zext33 = {1'b0, v};
        end
    endfunction
    /* verilator lint_off UNUSEDSIGNAL */
    function [1:0] low2;
        input [31:0] v;
        begin
            low2 = v[1:0];
        end
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */
    localparam [44:0] AP_END45 = {13'd0, APERTURE_BASE} + APERTURE_PAGES * 45'd4096;
    localparam [32:0] AP_END   = AP_END45[32:0];
    localparam [32:0] VRAM_END = zext33(VRAM_BYTES);
    localparam [32:0] AP_BASE  = {1'b0, APERTURE_BASE};
    localparam [1:0]  LAST_RANGE = low2(PROT_RANGES - 1);

    initial begin
        if (PROT_RANGES < 1 || PROT_RANGES > 4)
            $error("gmc_dmc_range: PROT_RANGES must be 1..4 (instance %m)");
        if (AP_END45 >= 45'h1_0000_0000)
            $error("gmc_dmc_range: the aperture must end below 4 GiB (instance %m)");
    end

    // Steps: a sum, then the comparisons that use it.
    localparam [3:0] C_S1 = 4'd0,  C_V1 = 4'd1,  C_A1 = 4'd2,  C_B1 = 4'd3,
                     C_P0 = 4'd4,  C_P1 = 4'd5,  C_P2 = 4'd6,
                     C_S2 = 4'd7,  C_V2 = 4'd8,  C_A2 = 4'd9,  C_B2 = 4'd10,
                     C_S3 = 4'd11, C_M3 = 4'd12, C_DONE = 4'd13;

    reg [3:0]  step;
    reg [1:0]  ri;                   // protected range of C_P0..C_P2
    reg [32:0] sum;
    reg        pages_big;            // LENGTH >= 2^20: LENGTH pages exceed 4 GiB
    reg        s_vram, s_ap, d_vram, d_ap, m_ap, s_prot, p_t;

    wire [31:0] pb = prot_base[32 * ri +: 32];
    wire [31:0] pl = prot_limit[32 * ri +: 32];

    // The comparator: x < y.
    reg  [32:0] x, y;
    always @* begin
        case (step)
            C_V1, C_V2:       x = VRAM_END;
            C_A1, C_A2, C_M3: x = AP_END;
            C_B1, C_P1:       x = {1'b0, w1};
            C_B2:             x = {1'b0, w2};
            default:          x = {1'b0, pb};          // C_P0, C_P2
        endcase
        case (step)
            C_B1, C_B2:       y = AP_BASE;
            C_P0, C_P1:       y = {1'b0, pl};
            default:          y = sum;                 // C_V*, C_A*, C_M3, C_P2
        endcase
    end
    wire lt = x < y;

    // The adder: W1 or W2 plus LENGTH, or plus LENGTH pages.
    wire [31:0] addend = (step == C_S3) ? {len[19:0], 12'd0} : len;
    wire [32:0] sum_next = {1'b0, (step == C_S1) ? w1 : w2} + {1'b0, addend};

    always @(posedge clk) begin
        case (step)
            C_S1, C_S2, C_S3: sum <= sum_next;
            C_V1: s_vram <= !lt;
            C_A1: s_ap <= !lt;
            C_B1: begin s_ap <= s_ap && !lt; s_prot <= 1'b0; end
            C_P0: p_t <= lt;
            C_P1: p_t <= p_t && lt;
            C_P2: if (p_t && lt) s_prot <= 1'b1;
            C_V2: d_vram <= !lt;
            C_A2: d_ap <= !lt;
            C_B2: begin d_ap <= d_ap && !lt; m_ap <= !lt; end
            C_M3: m_ap <= m_ap && !lt && !pages_big;
            default: ;
        endcase
        pages_big <= len[31:20] != 12'd0;
        if (step == C_P2 && ri != LAST_RANGE) begin
            ri <= ri + 2'd1;
            step <= C_P0;
        end else if (step != C_DONE) begin
            step <= step + 4'd1;
        end
        if (!run) begin
            step <= C_S1;
            ri <= 2'd0;
        end
    end

    assign done = step == C_DONE;
    assign ranges = {s_vram, s_ap, d_vram, d_ap, m_ap, s_prot};

endmodule

`resetall
