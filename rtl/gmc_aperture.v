// gmc: CPU aperture (BAR1), an AXI4 slave onto the CPU-visible VRAM window.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// BAR1 offset o maps to VRAM byte WINDOW_VRAM_BASE + o for o < WINDOW_BYTES.
// Every burst is checked whole when its address is accepted. A burst that
// leaves the window answers DECERR on every beat; one that touches a
// protected range, or is illegal (reserved burst type, bad WRAP, beat wider
// than the bus), answers SLVERR. A refused burst moves no data and logs a
// fault. Nothing wraps or aliases. One read and one write burst are in
// progress at a time, and one burst checker (gmc_aperture_chk) serves both
// address channels, so an address is taken on one channel a cycle (AR
// first); reads stream one beat per cycle through a 2-entry
// FIFO, writes take one beat per cycle when the VRAM write port is free.
module gmc_aperture #(
    // Bytes of VRAM the window exposes.
    parameter integer WINDOW_BYTES = 2 * 1024 * 1024,
    // VRAM byte address of BAR1 offset 0.
    parameter [31:0] WINDOW_VRAM_BASE = 32'd0,
    // Protected-range register pairs.
    parameter integer PROT_RANGES = 4,
    // AXI ID width.
    parameter integer ID_WIDTH = 4,
    // VRAM word address width.
    parameter integer VRAM_AW = 20
) (
    input  wire                    clk,
    input  wire                    rst,

    // AXI4 slave: write address.
    input  wire [ID_WIDTH-1:0]     s_axi_awid,
    input  wire [31:0]             s_axi_awaddr,
    input  wire [7:0]              s_axi_awlen,
    input  wire [2:0]              s_axi_awsize,
    input  wire [1:0]              s_axi_awburst,
    input  wire                    s_axi_awvalid,
    output wire                    s_axi_awready,
    // Write data.
    input  wire [63:0]             s_axi_wdata,
    input  wire [7:0]              s_axi_wstrb,
    input  wire                    s_axi_wvalid,
    output wire                    s_axi_wready,
    // Write response.
    output reg  [ID_WIDTH-1:0]     s_axi_bid,
    output reg  [1:0]              s_axi_bresp,
    output reg                     s_axi_bvalid,
    input  wire                    s_axi_bready,
    // Read address.
    input  wire [ID_WIDTH-1:0]     s_axi_arid,
    input  wire [31:0]             s_axi_araddr,
    input  wire [7:0]              s_axi_arlen,
    input  wire [2:0]              s_axi_arsize,
    input  wire [1:0]              s_axi_arburst,
    input  wire                    s_axi_arvalid,
    output wire                    s_axi_arready,
    // Read data.
    output wire [ID_WIDTH-1:0]     s_axi_rid,
    output wire [63:0]             s_axi_rdata,
    output wire [1:0]              s_axi_rresp,
    output wire                    s_axi_rlast,
    output wire                    s_axi_rvalid,
    input  wire                    s_axi_rready,

    // Protected ranges, VRAM byte addresses, range i in bits [32*i +: 32].
    input  wire [32*PROT_RANGES-1:0] prot_base,
    input  wire [32*PROT_RANGES-1:0] prot_limit,

    // VRAM ports (to the arbiter).
    output wire                    vr_req,
    output wire [VRAM_AW-1:0]      vr_addr,
    input  wire                    vr_gnt,
    input  wire                    vr_valid,
    input  wire [63:0]             vr_data,
    output wire                    vw_req,
    output wire [VRAM_AW-1:0]      vw_addr,
    output wire [63:0]             vw_data,
    output wire [7:0]              vw_strb,
    input  wire                    vw_gnt,

    // Refused bursts, one-cycle pulses with the BAR1 offset and kind.
    output reg                     flt_rd_valid,
    output reg  [1:0]              flt_rd_kind,
    output reg  [31:0]             flt_rd_addr,
    output reg                     flt_wr_valid,
    output reg  [1:0]              flt_wr_kind,
    output reg  [31:0]             flt_wr_addr,

    // Byte counts moved this cycle, for the performance counters.
    output wire [3:0]              cnt_rd_bytes,
    output wire [3:0]              cnt_wr_bytes
);

    `include "gmc_regs.vh"

    localparam [1:0] RESP_OKAY = 2'd0, RESP_SLVERR = 2'd2, RESP_DECERR = 2'd3;
    localparam [1:0] BURST_FIXED = 2'd0, BURST_WRAP = 2'd2;  // anything else legal is INCR

    // A burst is served only when all of it lies in the window, so its
    // beats' addresses are AB bits wide.
    localparam integer AB = $clog2(WINDOW_BYTES);

    initial begin
        if (WINDOW_BYTES % 4096 != 0 || WINDOW_BYTES == 0)
            $error("gmc_aperture: WINDOW_BYTES must be a non-zero multiple of 4096 (instance %m)");
        if (PROT_RANGES < 1 || PROT_RANGES > GMC_MAX_PROT_RANGES)
            $error("gmc_aperture: PROT_RANGES out of range (instance %m)");
    end

    // ------------------------------------------------------------ helpers

    // Address of the beat after one at addr. A burst is served only when
    // all of it lies in the window, so its beats' addresses are AB bits wide
    // (below 2^AB).
    function [AB-1:0] next_addr;
        input [AB-1:0] addr;
        input [7:0]    len;
        input [2:0]    size;
        input [1:0]    burst;
        reg   [AB-1:0] bytes, span, base, nxt;
        begin
            bytes = {{(AB-1){1'b0}}, 1'b1} << size;
            span  = ({{(AB-8){1'b0}}, len} + {{(AB-1){1'b0}}, 1'b1}) << size;
            nxt   = (addr & ~(bytes - {{(AB-1){1'b0}}, 1'b1})) + bytes;
            if (burst == BURST_FIXED) begin
                next_addr = addr;
            end else if (burst == BURST_WRAP) begin
                base = addr & ~(span - {{(AB-1){1'b0}}, 1'b1});
                next_addr = (nxt == base + span) ? base : nxt;
            end else begin
                next_addr = nxt;
            end
        end
    endfunction

    // Byte lanes a beat at addr of 2^size bytes may touch.
    function [7:0] lanes;
        input [2:0] a;
        input [2:0] size;
        reg   [3:0] hi;
        begin
            // Lanes [a, hi): two shifted masks (the same function as a
            // per-lane compare, in fewer host operations).
            hi = ({1'b0, a} & ~((4'd1 << size) - 4'd1)) + (4'd1 << size);
            lanes = (8'hFF << a) & ~(8'hFF << hi);
        end
    endfunction

    function [3:0] popcount8;
        input [7:0] v;
        integer k;
        begin
            popcount8 = 4'd0;
            for (k = 0; k < 8; k = k + 1)
                popcount8 = popcount8 + {3'd0, v[k]};
        end
    endfunction

    /* verilator lint_off UNUSEDSIGNAL */
    function [VRAM_AW-1:0] word;
        input [AB-1:0] bar_off;
        reg   [32:0]   v;  // the window is checked, so only the word bits matter
        begin
            v = {{(33-AB){1'b0}}, bar_off} + {1'b0, WINDOW_VRAM_BASE};
            word = v[3 +: VRAM_AW];
        end
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    // --------------------------------------------------------- read side

    reg                r_busy_reg, r_err_reg;
    reg [ID_WIDTH-1:0] r_id_reg;
    reg [AB-1:0]       r_addr_reg;     // next beat to issue
    reg [7:0]          r_len_reg;
    reg [2:0]          r_size_reg;
    reg [1:0]          r_burst_reg;
    reg [1:0]          r_resp_reg;
    reg [8:0]          r_issued_reg;   // beats read from VRAM
    reg [8:0]          r_sent_reg;     // beats handed over
    reg                r_inflight_reg; // read issued last cycle
    reg [63:0]         r_fifo [0:1];
    reg                r_wp_reg, r_rp_reg;
    reg [1:0]          r_cnt_reg;

    assign s_axi_arready = !r_busy_reg;
    wire ar_take = s_axi_arvalid && s_axi_arready;
    wire [1:0] chk_verdict;  // the burst checker's answer on the address taken

    assign s_axi_rvalid = r_busy_reg && (r_err_reg || r_cnt_reg != 2'd0);
    assign s_axi_rdata  = r_err_reg ? 64'd0 : r_fifo[r_rp_reg];
    assign s_axi_rresp  = r_err_reg ? r_resp_reg : RESP_OKAY;
    assign s_axi_rlast  = (r_sent_reg == {1'b0, r_len_reg});
    assign s_axi_rid    = r_id_reg;
    wire r_pop = s_axi_rvalid && s_axi_rready;
    // Counted in the cycle the beat is handed over, so a register read
    // that follows the burst sees it.
    assign cnt_rd_bytes = (r_pop && !r_err_reg) ? (4'd1 << r_size_reg) : 4'd0;

    // Room for one more read: what is held, plus what arrives now, minus what leaves.
    wire [2:0] r_occ = {1'b0, r_cnt_reg} + {2'b00, r_inflight_reg};
    assign vr_req  = r_busy_reg && !r_err_reg && (r_issued_reg <= {1'b0, r_len_reg})
                     && (r_occ < 3'd2 || (r_occ == 3'd2 && r_pop));
    assign vr_addr = word(r_addr_reg);

    always @(posedge clk) begin
        flt_rd_valid <= 1'b0;

        if (ar_take) begin
            r_busy_reg <= 1'b1;
            r_err_reg <= (chk_verdict != 2'd0);
            r_resp_reg <= (chk_verdict == GMC_APF_KIND_WINDOW[1:0]) ? RESP_DECERR : RESP_SLVERR;
            r_id_reg <= s_axi_arid;
            r_addr_reg <= s_axi_araddr[AB-1:0];
            r_len_reg <= s_axi_arlen;
            r_size_reg <= s_axi_arsize;
            r_burst_reg <= s_axi_arburst;
            r_issued_reg <= 9'd0;
            r_sent_reg <= 9'd0;
            // Kind and address load on every burst (they only matter with
            // the valid pulse): the verdict then feeds one flop, not the
            // clock enables of 34, which keeps it off the critical path.
            flt_rd_valid <= (chk_verdict != 2'd0);
            flt_rd_kind <= chk_verdict;
            flt_rd_addr <= s_axi_araddr;
        end

        if (vr_req && vr_gnt) begin
            r_issued_reg <= r_issued_reg + 9'd1;
            r_addr_reg <= next_addr(r_addr_reg, r_len_reg, r_size_reg, r_burst_reg);
        end
        r_inflight_reg <= vr_req && vr_gnt;

        if (vr_valid) begin
            r_fifo[r_wp_reg] <= vr_data;
            r_wp_reg <= !r_wp_reg;
        end
        if (r_pop) begin
            r_sent_reg <= r_sent_reg + 9'd1;
            if (!r_err_reg) r_rp_reg <= !r_rp_reg;
            if (s_axi_rlast) r_busy_reg <= 1'b0;
        end
        r_cnt_reg <= r_cnt_reg + {1'b0, vr_valid} - {1'b0, r_pop && !r_err_reg};

        if (rst) begin
            r_busy_reg <= 1'b0;
            r_err_reg <= 1'b0;
            r_inflight_reg <= 1'b0;
            r_wp_reg <= 1'b0;
            r_rp_reg <= 1'b0;
            r_cnt_reg <= 2'd0;
            flt_rd_valid <= 1'b0;
        end
    end

    // -------------------------------------------------------- write side

    reg                w_busy_reg, w_err_reg, w_resp_pending_reg;
    reg [AB-1:0]       w_addr_reg;
    reg [7:0]          w_len_reg;
    reg [2:0]          w_size_reg;
    reg [1:0]          w_burst_reg;
    reg [8:0]          w_beat_reg;

    // One burst checker serves both channels, so an address is taken on one
    // channel a cycle: AR first. A read burst keeps AR busy for at least two
    // cycles (its beat and the last one handed over), so a waiting AW is
    // taken then, however many reads follow.
    assign s_axi_awready = !w_busy_reg && !(s_axi_arvalid && !r_busy_reg);
    wire aw_take = s_axi_awvalid && s_axi_awready;

    gmc_aperture_chk #(
        .WINDOW_BYTES(WINDOW_BYTES), .WINDOW_VRAM_BASE(WINDOW_VRAM_BASE), .PROT_RANGES(PROT_RANGES)
    ) u_chk (
        .bar_addr(ar_take ? s_axi_araddr : s_axi_awaddr),
        .len(ar_take ? s_axi_arlen : s_axi_awlen),
        .size(ar_take ? s_axi_arsize : s_axi_awsize),
        .burst(ar_take ? s_axi_arburst : s_axi_awburst),
        .prot_base(prot_base), .prot_limit(prot_limit),
        .verdict(chk_verdict)
    );

    wire w_data_phase = w_busy_reg && !w_resp_pending_reg;
    // The lane mask is worked out only while a data beat is offered (the
    // VRAM port and the counter look at it only then; 0 otherwise).
    reg  [7:0] w_strb_eff;
    always @* begin
        w_strb_eff = 8'd0;
        if (w_data_phase && s_axi_wvalid)
            w_strb_eff = s_axi_wstrb & lanes(w_addr_reg[2:0], w_size_reg);
    end
    assign vw_req  = w_data_phase && !w_err_reg && s_axi_wvalid;
    assign vw_addr = word(w_addr_reg);
    assign vw_data = s_axi_wdata;
    assign vw_strb = w_strb_eff;
    assign s_axi_wready = w_data_phase && (w_err_reg || vw_gnt);
    wire w_take = s_axi_wvalid && s_axi_wready;
    wire w_final = (w_beat_reg == {1'b0, w_len_reg});
    // The counter takes the ungated mask (w_take implies the gate), which
    // keeps the gate off the counter's path on the boards. (Counted only
    // at a beat, 0 otherwise.)
    reg [3:0] cnt_wr_c;
    always @* begin
        cnt_wr_c = 4'd0;
        if (w_take && !w_err_reg)
            cnt_wr_c = popcount8(s_axi_wstrb & lanes(w_addr_reg[2:0], w_size_reg));
    end
    assign cnt_wr_bytes = cnt_wr_c;

    always @(posedge clk) begin
        flt_wr_valid <= 1'b0;

        if (aw_take) begin
            w_busy_reg <= 1'b1;
            w_resp_pending_reg <= 1'b0;
            w_err_reg <= (chk_verdict != 2'd0);
            s_axi_bresp <= (chk_verdict == 2'd0) ? RESP_OKAY
                         : (chk_verdict == GMC_APF_KIND_WINDOW[1:0]) ? RESP_DECERR : RESP_SLVERR;
            s_axi_bid <= s_axi_awid;
            w_addr_reg <= s_axi_awaddr[AB-1:0];
            w_len_reg <= s_axi_awlen;
            w_size_reg <= s_axi_awsize;
            w_burst_reg <= s_axi_awburst;
            w_beat_reg <= 9'd0;
            flt_wr_valid <= (chk_verdict != 2'd0);
            flt_wr_kind <= chk_verdict;
            flt_wr_addr <= s_axi_awaddr;
        end

        if (w_take) begin
            w_beat_reg <= w_beat_reg + 9'd1;
            w_addr_reg <= next_addr(w_addr_reg, w_len_reg, w_size_reg, w_burst_reg);
            if (w_final) begin
                w_resp_pending_reg <= 1'b1;
                s_axi_bvalid <= 1'b1;
            end
        end

        if (s_axi_bvalid && s_axi_bready) begin
            s_axi_bvalid <= 1'b0;
            w_busy_reg <= 1'b0;
            w_resp_pending_reg <= 1'b0;
        end

        if (rst) begin
            w_busy_reg <= 1'b0;
            w_err_reg <= 1'b0;
            w_resp_pending_reg <= 1'b0;
            s_axi_bvalid <= 1'b0;
            flt_wr_valid <= 1'b0;
        end
    end

`ifdef FORMAL
    // ---------------------------------------------------------------------
    // AXI4 slave properties (yosys -formal; tools/formal.sh proves them).
    // Assumptions: a legal master, and a VRAM port whose read data arrives
    // one cycle after a granted request. Assertions: this slave's duties.
    reg f_past_valid = 1'b0;
    always @(posedge clk) f_past_valid <= 1'b1;
    always @(*) if (!f_past_valid) assume(rst);

    reg                f_r_open, f_w_open;
    reg [7:0]          f_r_len, f_w_len;
    reg [8:0]          f_r_beats, f_w_beats;
    reg [ID_WIDTH-1:0] f_r_id, f_w_id;
    always @(posedge clk) begin
        if (s_axi_arvalid && s_axi_arready) begin
            f_r_open <= 1'b1; f_r_len <= s_axi_arlen; f_r_beats <= 9'd0; f_r_id <= s_axi_arid;
        end
        if (s_axi_rvalid && s_axi_rready) begin
            f_r_beats <= f_r_beats + 9'd1;
            if (s_axi_rlast) f_r_open <= 1'b0;
        end
        if (s_axi_awvalid && s_axi_awready) begin
            f_w_open <= 1'b1; f_w_len <= s_axi_awlen; f_w_beats <= 9'd0; f_w_id <= s_axi_awid;
        end
        if (s_axi_wvalid && s_axi_wready) f_w_beats <= f_w_beats + 9'd1;
        if (s_axi_bvalid && s_axi_bready) f_w_open <= 1'b0;
        if (rst) begin
            f_r_open <= 1'b0;
            f_w_open <= 1'b0;
        end
    end

    always @(posedge clk) if (f_past_valid && !$past(rst) && !rst) begin
        // Master: requests and write data held unchanged until taken.
        if ($past(s_axi_arvalid && !s_axi_arready))
            assume(s_axi_arvalid && s_axi_araddr == $past(s_axi_araddr) && s_axi_arlen == $past(s_axi_arlen)
                   && s_axi_arsize == $past(s_axi_arsize) && s_axi_arburst == $past(s_axi_arburst)
                   && s_axi_arid == $past(s_axi_arid));
        if ($past(s_axi_awvalid && !s_axi_awready))
            assume(s_axi_awvalid && s_axi_awaddr == $past(s_axi_awaddr) && s_axi_awlen == $past(s_axi_awlen)
                   && s_axi_awsize == $past(s_axi_awsize) && s_axi_awburst == $past(s_axi_awburst)
                   && s_axi_awid == $past(s_axi_awid));
        if ($past(s_axi_wvalid && !s_axi_wready))
            assume(s_axi_wvalid && s_axi_wdata == $past(s_axi_wdata) && s_axi_wstrb == $past(s_axi_wstrb));
        // Slave: responses held unchanged until taken.
        if ($past(s_axi_rvalid && !s_axi_rready))
            assert(s_axi_rvalid && s_axi_rdata == $past(s_axi_rdata) && s_axi_rresp == $past(s_axi_rresp)
                   && s_axi_rlast == $past(s_axi_rlast) && s_axi_rid == $past(s_axi_rid));
        if ($past(s_axi_bvalid && !s_axi_bready))
            assert(s_axi_bvalid && s_axi_bresp == $past(s_axi_bresp) && s_axi_bid == $past(s_axi_bid));
    end
    // VRAM: data one cycle after a read granted outside reset, and only
    // then (the arbiter is reset with this block).
    reg f_vr_due = 1'b0;
    always @(posedge clk) f_vr_due <= vr_req && vr_gnt && !rst;
    always @(*) assume(vr_valid == f_vr_due);
    // The VRAM arbiter grants a waiting request within F_GNT_WAIT cycles.
    localparam integer F_GNT_WAIT = 2;
    reg [2:0] f_vr_wait = 3'd0, f_vw_wait = 3'd0;
    always @(posedge clk) begin
        f_vr_wait <= (vr_req && !vr_gnt && !rst) ? f_vr_wait + 3'd1 : 3'd0;
        f_vw_wait <= (vw_req && !vw_gnt && !rst) ? f_vw_wait + 3'd1 : 3'd0;
    end
    always @(*) begin
        assume(f_vr_wait <= F_GNT_WAIT && f_vw_wait <= F_GNT_WAIT);
        if (f_vr_wait == F_GNT_WAIT && vr_req) assume(vr_gnt);
        if (f_vw_wait == F_GNT_WAIT && vw_req) assume(vw_gnt);
    end

    // Bounded response: cycles a read burst has owed its next beat without
    // presenting it, a write burst with all its data in has owed its B,
    // and a W beat has been offered without being taken. A slave that
    // deadlocks (never raises RVALID or BVALID, or stops taking W) fails.
    localparam integer F_MAX_WAIT = 6;
    reg [3:0] f_rwait = 4'd0, f_bwait = 4'd0, f_wwait = 4'd0;
    always @(posedge clk) begin
        f_rwait <= (f_r_open && !s_axi_rvalid && !rst) ? f_rwait + 4'd1 : 4'd0;
        f_bwait <= (f_w_open && f_w_beats == {1'b0, f_w_len} + 9'd1 && !s_axi_bvalid && !rst) ? f_bwait + 4'd1 : 4'd0;
        f_wwait <= (f_w_open && s_axi_wvalid && !s_axi_wready && !s_axi_bvalid && !rst) ? f_wwait + 4'd1 : 4'd0;
    end
    always @(*) if (f_past_valid && !rst) begin
        assert(f_rwait <= F_MAX_WAIT && f_bwait <= F_MAX_WAIT && f_wwait <= F_MAX_WAIT);
        // No exclusive access (the port has no AxLOCK): never EXOKAY.
        if (s_axi_rvalid) assert(s_axi_rresp != 2'b01);
        if (s_axi_bvalid) assert(s_axi_bresp != 2'b01);
    end
    // The response registers are data (not reset): they start as anything
    // but EXOKAY and never take it (this also closes the induction over a
    // response the master stalls for longer than the window).
    always @(*) if (!f_past_valid) assume(s_axi_bresp != 2'b01 && r_resp_reg != 2'b01);
    always @(*) assert(s_axi_bresp != 2'b01 && r_resp_reg != 2'b01);

    always @(*) if (f_past_valid && !rst) begin
        // Read data only for an accepted burst, RLAST on exactly its last beat.
        if (s_axi_rvalid) assert(f_r_open && s_axi_rid == f_r_id
                                 && s_axi_rlast == (f_r_beats == {1'b0, f_r_len}));
        assert(!f_r_open || f_r_beats <= {1'b0, f_r_len});
        // Write data only after its address, never more beats than the burst.
        if (s_axi_wready) assert(f_w_open && !s_axi_bvalid && f_w_beats <= {1'b0, f_w_len});
        assert(!f_w_open || f_w_beats <= {1'b0, f_w_len} + 9'd1);
        // The response follows the last data beat, once.
        if (s_axi_bvalid) assert(f_w_open && f_w_beats == {1'b0, f_w_len} + 9'd1 && s_axi_bid == f_w_id);
        // One burst per direction at a time.
        if (s_axi_arready) assert(!f_r_open);
        if (s_axi_awready) assert(!f_w_open);
        // No VRAM traffic for a refused burst or outside a burst.
        if (vr_req) assert(f_r_open && !r_err_reg);
        if (vw_req) assert(f_w_open && !w_err_reg && !s_axi_bvalid);
        // Internal state matches the bus view (closes the induction).
        assert(r_busy_reg == f_r_open && w_busy_reg == f_w_open);
        // (burst registers only mean something while a burst is open)
        if (f_r_open) assert(r_sent_reg == f_r_beats && r_len_reg == f_r_len && r_id_reg == f_r_id);
        if (f_w_open) assert(w_beat_reg == f_w_beats && w_len_reg == f_w_len);
        assert(r_inflight_reg == f_vr_due);
        assert(r_cnt_reg <= 2'd2 && {1'b0, r_cnt_reg} + {2'b00, r_inflight_reg} <= 3'd2);
        assert(r_wp_reg == (r_rp_reg ^ r_cnt_reg[0]));
        if (r_busy_reg && !r_err_reg)
            assert(r_issued_reg == r_sent_reg + {7'd0, r_cnt_reg} + {8'd0, r_inflight_reg}
                   && r_issued_reg <= {1'b0, r_len_reg} + 9'd1);
        if (!r_busy_reg || r_err_reg) assert(r_cnt_reg == 2'd0 && !r_inflight_reg);
        assert(s_axi_bvalid == w_resp_pending_reg);
        if (f_w_open && !s_axi_bvalid) assert(f_w_beats <= {1'b0, f_w_len});
    end
`endif

endmodule

`resetall
