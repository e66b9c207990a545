// gmc: round-robin arbiter that shares the GART's request port between requesters.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The GART takes one request at a time (a hit answers on the next cycle,
// a miss when its walk ends) and answers with a one-cycle pulse, so at
// most one request is unanswered: the owner register routes the response.
// The response payload is broadcast; only the owner's valid rises.
module gmc_gart_arb #(
    // Requesters, 1..4.
    parameter integer PORTS = 3
) (
    input  wire               clk,
    input  wire               rst,

    input  wire [PORTS-1:0]   s_req_valid,
    output wire [PORTS-1:0]   s_req_ready,
    input  wire [32*PORTS-1:0] s_req_addr,
    input  wire [PORTS-1:0]   s_req_write,
    output wire [PORTS-1:0]   s_resp_valid,

    output wire               m_req_valid,
    input  wire               m_req_ready,
    output wire [31:0]        m_req_addr,
    output wire               m_req_write,
    input  wire               m_resp_valid
);

    initial begin
        if (PORTS < 1 || PORTS > 4)
            $error("gmc_gart_arb: PORTS must be 1..4 (instance %m)");
    end

    reg [1:0] rr_reg, owner_reg;

    localparam integer LAST_I = PORTS - 1;
    localparam [1:0] LAST = LAST_I[1:0];
    reg       pick_valid;
    reg [1:0] pick;
    integer   k;
    /* verilator lint_off UNUSEDSIGNAL */
    integer   kk;
    /* verilator lint_on UNUSEDSIGNAL */
    // (Searched only when some port asks; no grant otherwise.)
    always @* begin
        pick_valid = 1'b0;
        pick = 2'd0;
        kk = 0;
        k = 0; // assigned on every path: no latch for the loop variable
        if (s_req_valid != {PORTS{1'b0}}) begin
            for (k = 2 * PORTS - 1; k >= 0; k = k - 1) begin
                kk = k % PORTS;
                if (k >= {30'd0, rr_reg} && k < {30'd0, rr_reg} + PORTS && s_req_valid[kk]) begin
                    pick_valid = 1'b1;
                    pick = kk[1:0];
                end
            end
        end
    end

    wire take = pick_valid && m_req_ready;

    // (The chosen request's address and write bit are selected in every
    // cycle: gating them with the search result puts the round-robin
    // search on the GART's address path, which cost the UP5K board 3 MHz.)
    assign m_req_valid = pick_valid;
    assign m_req_addr  = s_req_addr[32 * pick +: 32];
    assign m_req_write = s_req_write[pick];

    genvar g;
    generate
        for (g = 0; g < PORTS; g = g + 1) begin : g_port
            assign s_req_ready[g]  = m_req_ready && pick_valid && (pick == g);
            assign s_resp_valid[g] = m_resp_valid && (owner_reg == g);
        end
    endgenerate

    always @(posedge clk) begin
        if (take) begin
            owner_reg <= pick;
            rr_reg <= (pick == LAST) ? 2'd0 : pick + 2'd1;
        end
        if (rst) begin
            rr_reg <= 2'd0;
            owner_reg <= 2'd0;
        end
    end

endmodule

`resetall
