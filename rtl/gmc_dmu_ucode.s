; gmc: microcode of the micro-sequenced DMA engine (rtl/gmc_dmu.v), assembled
; by tools/dmu_asm.py into rtl/gmc_dmu_ucode.vh (make gen).
;
; docs/dma.md is the contract. The engine fetches a packet (one 4-beat
; read), checks it in the contract's order and executes it one destination
; word at a time, like the compact engine (gmc_dmc): the word's bytes are
; gathered from the response buffer, which holds one source word (a VRAM
; word or an 8-byte bus beat), then the word is written (one VRAM write, or
; a one-beat AXI write whose response is awaited). A translated side
; (aperture: the GART; MDL: an entry read) is translated when its byte
; stream enters a page. One bus transaction at a time; every BUS and TIMEOUT
; fault names the burst the full engine would have issued (XA).
;
; Calls do not nest (one return register): subroutines call none.
; ---- register file: 0x00..0x7F private, 0x80..0xFF read by the register block
.equ W00 0x00        ; packet word 0, bits 15:0 (opcode, flags)
.equ W01 0x01        ; W0[31:16], reserved
.equ W02 0x02        ; LENGTH, counted down in place while data moves
.equ W03 0x03
.equ W10 0x04
.equ W11 0x05
.equ W12 0x06
.equ W13 0x07
.equ W20 0x08
.equ W21 0x09
.equ W22 0x0A
.equ W23 0x0B
.equ W30 0x0C
.equ W31 0x0D
.equ W32 0x0E
.equ W33 0x0F
.equ T0 0x10         ; scratch
.equ T1 0x11
.equ T2 0x12
.equ T3 0x13
.equ PK0 0x14        ; address of the packet being executed (DMA_FAULT_PKT)
.equ PK1 0x15
.equ PK2 0x16
.equ XA0 0x17        ; burst address of the transaction owed (BUS, TIMEOUT)
.equ XA1 0x18
.equ XA2 0x19
.equ FA0 0x1A        ; DMA_FAULT_ADDR of the fault being raised
.equ FA1 0x1B
.equ FA2 0x1C
.equ FERR 0x1D       ; the packet fetch had an error beat
.equ SWV 0x1E        ; 1: the response buffer holds the source word
.equ ZERO 0x1F
.equ IBP0 0x20       ; indirect buffer: the packet being executed
.equ IBP1 0x21
.equ IBP2 0x22
.equ IBL0 0x23       ; indirect buffer: bytes not fetched yet
.equ IBL1 0x24
.equ N 0x25          ; bytes of the destination block
.equ J 0x26          ; bytes of the block still to gather
.equ K 0x27          ; bytes of a byte-op run
.equ D 0x28          ; destination block's first byte in its word
.equ KFFF 0x29       ; constants
.equ KF000 0x2A
.equ KF00 0x2B
.equ KFF8 0x2C
.equ K8 0x2D
.equ OP 0x2E         ; opcode, flags
.equ FL 0x2F
.equ SV0 0x30        ; the source word, saved around a destination translation
.equ SV1 0x31
.equ SV2 0x32
.equ SV3 0x33
.equ RA0 0x34        ; range check: address, length, end
.equ RA1 0x35
.equ RN0 0x36
.equ RN1 0x37
.equ RN2 0x38
.equ E0 0x39
.equ E1 0x3A
.equ E2 0x3B
.equ RV 0x3C         ; range check results: wholly in VRAM, wholly in the aperture
.equ RAP 0x3D
.equ SVR 0x3E        ; the source range is in VRAM
.equ DVR 0x3F        ; the destination range is in VRAM
; The two sides, the same layout: the source at 0x40, the destination at
; 0x50. The bank (out bank) maps the X names onto the destination's.
.equ SL0 0x40        ; linear address of the next byte / block (MDL: 4096 * PAGE + OFFSET)
.equ SL1 0x41
.equ SL2 0x42
.equ STB0 0x43       ; the page's translated bus base (bits 47:12)
.equ STB1 0x44
.equ STB2 0x45
.equ STV 0x46        ; 1: STB holds the page's translation
.equ S0F 0x47        ; 1: still in the side's first page
.equ SSEG 0x48       ; the side's first byte address, bits 11:3
.equ SENT0 0x49      ; the MDL entry to read next (MAP: on the destination side)
.equ SENT1 0x4A
.equ SENT2 0x4B
.equ SEB0 0x4C       ; burst address of that entry's read
.equ SEB1 0x4D
.equ SEB2 0x4E
.equ SK 0x4F         ; kind: 1 VRAM, 2 aperture, 4 MDL, 8 bus, 16 the buffer (source) /
                     ; DMA_READ_RESULT (destination), 32 bus uncounted (destination)
.equ DL0 0x50
.equ DL1 0x51
.equ DL2 0x52
.equ DTB0 0x53
.equ DTB1 0x54
.equ DTB2 0x55
.equ DTV 0x56
.equ D0F 0x57
.equ DSEG 0x58
.equ DENT0 0x59
.equ DENT1 0x5A
.equ DENT2 0x5B
.equ DEB0 0x5C
.equ DEB1 0x5D
.equ DEB2 0x5E
.equ DK 0x5F
.equ XL0 0x40        ; the side the bank selects
.equ XL1 0x41
.equ XL2 0x42
.equ XTB0 0x43
.equ XTB1 0x44
.equ XTB2 0x45
.equ XTV 0x46
.equ X0F 0x47
.equ XSEG 0x48
.equ XENT0 0x49
.equ XENT1 0x4A
.equ XENT2 0x4B
.equ XEB0 0x4C
.equ XEB1 0x4D
.equ XEB2 0x4E
.equ XK 0x4F
.equ SPH 0x60        ; the source range meets a protected range
.equ P0 0x61         ; a protected range's base and limit; a physical address
.equ P1 0x62
.equ P2 0x63
.equ Q0 0x64
.equ Q1 0x65
.equ PG0 0x66        ; MAP / UNMAP: aperture page, PTE address, PTE flags
.equ PG1 0x67
.equ PA0 0x68
.equ PA1 0x69
.equ PF 0x6A
.equ LN0 0x6B        ; LENGTH of the data packet (bytes moved: LN - LENGTH left)
.equ LN1 0x6C
.equ XACT 0x6D       ; 1: a data packet is moving bytes (count them if it stops)
.equ CB0 0x6E        ; bytes to count
.equ CB1 0x6F
.equ FENCE0 0x80     ; DMA_FENCE
.equ FENCE1 0x81
.equ FENCE2 0x82
.equ FENCE3 0x83
.equ RES0 0x84       ; DMA_READ_RESULT
.equ RES1 0x85
.equ RES2 0x86
.equ RES3 0x87
.equ FPKT0 0x88      ; DMA_FAULT_PKT
.equ FPKT1 0x89
.equ FPKT2 0x8A
.equ FPKT3 0x8B
.equ FADR0 0x8C      ; DMA_FAULT_ADDR
.equ FADR1 0x8D
.equ FADR2 0x8E
.equ FADR3 0x8F
; The counters CNT_DMA_*: 64 bits each, four lanes (lane 0 bits 15:0).
; Any update of one: its four lanes written by four consecutive
; instructions, lane 0 first, each with the counter lane as operand A
; (rtl/gmc_dmu.v, the status RAM's staging and CNT_CLEAR).
.equ CRV0 0x90       ; CNT_DMA_RD_VRAM
.equ CRV1 0x91
.equ CRV2 0x92
.equ CRV3 0x93
.equ CWV0 0x94       ; CNT_DMA_WR_VRAM
.equ CWV1 0x95
.equ CWV2 0x96
.equ CWV3 0x97
.equ CRS0 0x98       ; CNT_DMA_RD_SYS
.equ CRS1 0x99
.equ CRS2 0x9A
.equ CRS3 0x9B
.equ CWS0 0x9C       ; CNT_DMA_WR_SYS
.equ CWS1 0x9D
.equ CWS2 0x9E
.equ CWS3 0x9F
.equ CRA0 0xA0       ; CNT_DMA_RD_APERTURE
.equ CRA1 0xA1
.equ CRA2 0xA2
.equ CRA3 0xA3
.equ CWA0 0xA4       ; CNT_DMA_WR_APERTURE
.equ CWA1 0xA5
.equ CWA2 0xA6
.equ CWA3 0xA7
.equ CPK0 0xA8       ; CNT_DMA_PACKETS
.equ CPK1 0xA9
.equ CPK2 0xAA
.equ CPK3 0xAB
.equ CFL0 0xAC       ; CNT_DMA_FAULTS
.equ CFL1 0xAD
.equ CFL2 0xAE
.equ CFL3 0xAF

.equ F_OPCODE 1
.equ F_RESERVED 2
.equ F_SIZE 3
.equ F_RANGE 4
.equ F_FILL_APERTURE 5
.equ F_PTE_INVALID 6
.equ F_PTE_PERM 7
.equ F_BUS 8
.equ F_PROTECTED 9
.equ F_TIMEOUT 10
.equ F_NESTED 11

; ---- vectors
.org 0
        jmp init
        jmp reset           ; 1: RESET command (HEAD, fault, epoch done in hardware)
        jmp timeout         ; 2: watchdog
        jmp skip            ; 3: SKIP while faulted (the fault is cleared in hardware)

init:   ldi FENCE0, #0
        ldi FENCE1, #0
        ldi FENCE2, #0
        ldi FENCE3, #0
        ldi RES0, #0
        ldi RES1, #0
        ldi RES2, #0
        ldi RES3, #0
        ldi FPKT3, #0
        ldi FADR3, #0
        ldi XACT, #0
; (A RESET command may cut the above short, not the constants.)
reset:  out ack, ZERO, #7
        bitn XACT, 0, reset2
        call xcount
reset2:
        ldi ZERO, #0
        ldi KFFF, #0x0FFF
        ldi KF000, #0xF000
        ldi KF00, #0x0F00
        ldi KFF8, #0x0FF8
        ldi K8, #8
        jmp idle

skip:   out ack, ZERO, #7
        brn in_ib, hd_next
        or T0, IBL0, IBL1
        brn z, ib_adv
        add CPK0, CPK0, #1      ; the INDIRECT (the skipped packet is not counted)
        adc CPK1, CPK1, ZERO
        adc CPK2, CPK2, ZERO
        adc CPK3, CPK3, ZERO
        jmp ib_end

; ---- wait for a packet, fetch it (one 4-beat read into W0..W3)
idle:   out busy, ZERO, #0
        ldi XACT, #0
wait:   brn can_fetch, wait
        br in_ib, wait_ib
        in T0, ring0
        in T1, ring1
        in T2, ring2
        in PK0, head0
        in PK1, head1
        add PK0, T0, PK0
        adc PK1, T1, PK1
        adc PK2, T2, ZERO
        jmp wait_go
wait_ib: mov PK0, IBP0
        mov PK1, IBP1
        mov PK2, IBP2
; (Not while an address of an aborted packet still waits for the bus, nor
; while a VRAM read or GART answer of one is still to come.)
wait_go: br bus_busy, wait
        out ack, ZERO, #3
        mov XA0, PK0
        mov XA1, PK1
        mov XA2, PK2
        out addr0, PK0
        out addr1, PK1
        out addr2, PK2
        out busy, ZERO, #1
        out ar, ZERO, #4        ; stream 0, 4 beats
        ldi FERR, #0
        ldi K, #0
; Beat K into W(K)0..W(K)3 (out wix: the file writes of W00..W03 go to
; those of word K); an error beat sets FERR.
fetch:  out wix, K
beat:   brn rsp, beat
        brn rsp_err, beat_ok
        ldi FERR, #1
beat_ok: in W00, buf0
        in W01, buf1
        in W02, buf2
        in W03, buf3
        out ack, ZERO, #1
        add K, K, #1
        bitn K, 2, fetch
        out wix, ZERO
        br in_ib, fetch_ib
        jmp check
fetch_ib: sub IBL0, IBL0, #32
        sbc IBL1, IBL1, ZERO
        jmp check

; ---- the packet checks, in docs/dma.md's order: OPCODE; RESERVED for
; W0[31:16]; NESTED; RESERVED for the rest; SIZE; RANGE (source, then
; destination); FILL_APERTURE; PROTECTED. `tst` tests the packet's
; reserved 16-bit halves for zero at once (mask bit 4b + h: Wbh; bit 0 the
; flags, W00[15:8]).
check:  bit FERR, 0, f_bus      ; (XA: the packet's address)
        and OP, W00, #0xFF
        shr8 FL, W00, ZERO
        sub T0, OP, #1
        brn c, f_opcode
        sub T0, OP, #12
        br c, f_opcode
        or T0, W01, ZERO
        brn z, f_rsv
        sub T0, OP, #11
        brn z, ck_op
        br in_ib, f_nested
ck_op:  bit OP, 3, op_8_11
        bit OP, 2, op_4_7
        bit OP, 1, op_2_3
        jmp op_nop
op_2_3: bit OP, 0, op_fill
        jmp op_xfer
op_4_7: bit OP, 1, op_6_7
        bit OP, 0, op_rdp
        jmp op_disc
op_6_7: bit OP, 0, op_map
        jmp op_wrp
op_8_11: bit OP, 1, op_10_11
        bit OP, 0, op_nop       ; FLUSH_TLB: NOP's fields
        jmp op_unmap
op_10_11: bit OP, 0, op_ind
        jmp op_fence

; NOP, FLUSH_TLB: everything but the opcode zero.
op_nop: tst #0xFFFF
        brn z, f_rsv
        bitn OP, 3, done
        out ev, ZERO, #8        ; FLUSH_TLB: drop the whole TLB
        jmp done

; FENCE: flags WRITE_MEM, IRQ; LENGTH and W1 zero; W2 a bus address
; (8-aligned) with WRITE_MEM, else zero.
op_fence: and T0, FL, #0xCF
        brn z, f_rsv
        tst #0x08FC             ; W02, W03, W1, W23
        brn z, f_rsv
        bit FL, 4, fe_wm
        tst #0x0700             ; W20..W22
        brn z, f_rsv
        jmp fence_fin
fe_wm:  and T0, W20, #7
        brn z, f_size
        ; W3 written to W2: an 8-byte transfer from the buffer, not counted.
        call bw3
        ldi SK, #16
        ldi DK, #32
        mov DL0, W20
        mov DL1, W21
        mov DL2, W22
        ldi W02, #8
        ldi W03, #0
        jmp xgo

; (The packet is counted first, as soon as its memory write is answered:
; a host that saw the fence reads CNT_DMA_PACKETS soon after.)
fence_fin: call cnt_pk
        mov FENCE0, W30
        mov FENCE1, W31
        mov FENCE2, W32
        mov FENCE3, W33
        bitn FL, 5, fin         ; IRQ
        out ev, ZERO, #4
        jmp fin

; INDIRECT: W1 a bus address (32-aligned), W2 and W3 zero, LENGTH a
; multiple of 32.
op_ind: tst #0xFF81             ; flags, W13, W2, W3
        brn z, f_rsv
        or T0, W02, W03
        br z, f_size
        and T0, W02, #31
        brn z, f_size
        and T0, W10, #31
        brn z, f_size
        mov IBP0, W10
        mov IBP1, W11
        mov IBP2, W12
        mov IBL0, W02
        mov IBL1, W03
        out ib, ZERO, #1
        jmp idle

; TRANSFER: flags SRC_MDL, DST_MDL; a GPU side's upper half and MDL field
; zero; an MDL base a bus address, 8-aligned.
op_xfer: and T0, FL, #0xFC
        brn z, f_rsv
        tst #0x0880             ; W13, W23
        brn z, f_rsv
        bit FL, 0, xf_d
        tst #0x3040             ; not an MDL: W12, W30, W31
        brn z, f_rsv
xf_d:   bit FL, 1, xf_sz
        tst #0xC400             ; W22, W32, W33
        brn z, f_rsv
xf_sz:  or T0, W02, W03
        br z, f_size
        bitn FL, 0, xf_sz2
        and T0, W10, #7
        brn z, f_size
xf_sz2: bitn FL, 1, xf_rs
        and T0, W20, #7
        brn z, f_size
xf_rs:  ldi SPH, #0
        ldi SVR, #0
        ldi DVR, #0
        bit FL, 0, xf_rd
        call range1
        br z, f_range1
        mov SVR, RV
        jmp protck
xf_rd:  bit FL, 1, xf_pchk
        call range2
        br z, f_range2
        mov DVR, RV
xf_pchk: bit FL, 0, xf_go
        bitn SVR, 0, xf_go
        bit FL, 1, xf_p2
        bit DVR, 0, xf_go
xf_p2:  bit SPH, 0, f_prot1
xf_go:  mov T2, SVR
        and T0, FL, #1
        call side
        ; The destination the same way, on the bank: its fields copied to
        ; the source's (W1, W3[31:0]), which are not read again.
        mov W10, W20
        mov W11, W21
        mov W12, W22
        mov W30, W32
        mov W31, W33
        mov T2, DVR
        out bank, ZERO, #1
        and T0, FL, #2
        call side
        out bank, ZERO, #0
        jmp xgo

; The side the bank selects (XK, XL and an MDL's XENT, XEB): flag Z clear,
; an MDL from W1 and W3[31:0]; else (sd_gpu) the address W1, in VRAM if
; T2 bit 0, else in the aperture (W12 is zero then).
side:   brn z, sd_mdl
sd_gpu: mov XL0, W10
        mov XL1, W11
        mov XL2, W12
        ldi XK, #1
        bit T2, 0, sd_r
        ldi XK, #2
sd_r:   ret
sd_mdl: ldi XK, #4
        shr4 XL0, W31, W30
        shr4 XL1, W30, W31
        ldi XL2, #0
; An MDL's first entry (XENT, and its burst XEB): W1 + 8 * W3[19:0].
sent:   and T1, W31, #15
        shr13 T1, W30, T1
        shr13 T0, ZERO, W30
        add XENT0, W10, T0
        adc XENT1, W11, T1
        adc XENT2, W12, ZERO
        mov XEB0, XENT0
        mov XEB1, XENT1
        mov XEB2, XENT2
        ret

; The protected ranges against the source range [RA, E) (left by range):
; SPH. Back to TRANSFER or READ_PHYSICAL.
; Range K (out pidx: pbase0..1 and plimit0..1 read range K's) [P, Q):
; hit when Q > P, RA < Q and E > P.
protck: ldi K, #0
pr_l:   out pidx, K
        in P0, pbase0
        in P1, pbase1
        in Q0, plimit0
        in Q1, plimit1
        sub T0, P0, Q0
        sbc T1, P1, Q1
        br c, pr_nx
        sub T0, RA0, Q0
        sbc T1, RA1, Q1
        br c, pr_nx
        sub T0, P0, E0
        sbc T1, P1, E1
        sbc T2, ZERO, E2
        br c, pr_nx
        ldi SPH, #1
pr_nx:  add K, K, #1
        bitn K, 2, pr_l
        out pidx, ZERO
        bit OP, 0, rdp_pr
        jmp xf_rd

; [RA, RA + RN) wholly in VRAM (RV) or wholly in the aperture (RAP); E the
; end; flag Z: in neither. range1 / range2: RA = W1 / W2, RN = LENGTH.
range1: mov RA0, W10
        mov RA1, W11
        jmp rangel
range2: mov RA0, W20
        mov RA1, W21
rangel: mov RN0, W02
        mov RN1, W03
        ldi RN2, #0
range:  add E0, RA0, RN0
        adc E1, RA1, RN1
        adc E2, RN2, ZERO
        ldi RV, #0
        ldi RAP, #0
        in T0, vend0
        in T1, vend1
        in T2, vend2
        sub T0, T0, E0
        sbc T1, T1, E1
        sbc T2, T2, E2
        brn c, rg_ap
        ldi RV, #1
rg_ap:  in T0, apb0
        in T1, apb1
        sub T0, RA0, T0
        sbc T1, RA1, T1
        brn c, rg_ret
        in T0, apend0
        in T1, apend1
        in T2, apend2
        sub T0, T0, E0
        sbc T1, T1, E1
        sbc T2, T2, E2
        brn c, rg_ret
        ldi RAP, #1
rg_ret: or T0, RV, RAP
        ret

; FILL, DISCARD: W1 zero, W2 a GPU address, W3 the pattern (FILL, [31:0])
; or zero; DISCARD takes POISON.
op_fill: tst #0xCCF1             ; flags, W1, W22, W23, W32, W33
        brn z, f_rsv
        jmp fd_sz
op_disc: and T0, FL, #0xF7
        brn z, f_rsv
        tst #0xFCF0             ; W1, W22, W23, W3
        brn z, f_rsv
fd_sz:  or T0, W02, W03
        br z, f_size
        call range2
        bit RV, 0, fd_go
        bit RAP, 0, f_fillap
        jmp f_range2
fd_go:  bit OP, 0, fl_pat
        bitn FL, 3, done        ; DISCARD without POISON changes nothing
        ldi T0, #0xBEEF
        ldi T1, #0xDEAD
        jmp fl_go
fl_pat: mov T0, W30
        mov T1, W31
; The pattern in the buffer twice, turned so its byte (address % 4) comes first.
fl_go:  out bufin, T0
        out bufin, T1
        out bufin, T0
        out bufin, T1
        and K, W20, #3
        out rep, K, #2
        ldi SK, #16
        ldi DK, #1
        mov DL0, W20
        mov DL1, W21
        ldi DL2, #0
        jmp xgo

; READ_PHYSICAL: flag GPU; W1 a GPU (GPU) or bus address; W2, W3 zero;
; LENGTH 1..8 inside one 8-byte word.
op_rdp: and T0, FL, #0xFB
        brn z, f_rsv
        tst #0xFF80             ; W13, W2, W3
        brn z, f_rsv
        bitn FL, 2, rdp_sz
        tst #0x0040             ; W12
        brn z, f_rsv
rdp_sz: and T3, W10, #7
        call physz
        ldi SVR, #0
        bitn FL, 2, rdp_go
        call range1             ; (LENGTH: W03 is zero)
        br z, f_range1
        mov SVR, RV
        ldi SPH, #0
        jmp protck
rdp_pr: bitn SVR, 0, rdp_go
        bit SPH, 0, f_prot1
rdp_go: mov T2, SVR
        call sd_gpu             ; (SL: W1, also a bus address)
        bit FL, 2, rdp_g1
        ldi SK, #8
rdp_g1: ldi DK, #16
        ldi DL0, #0
        ldi DL1, #0
        ldi DL2, #0
        jmp xgo

; W3 into the response buffer.
bw3:    out bufin, W30
        out bufin, W31
        out bufin, W32
        out bufin, W33
        ret

; SIZE of a physical access at word offset T3: LENGTH 1..8, T3 + LENGTH <= 8.
physz:  or T0, W03, ZERO
        brn z, f_size
        sub T0, W02, #1
        brn c, f_size
        sub T0, W02, #9
        br c, f_size
        add T0, T3, W02
        sub T0, T0, #9
        br c, f_size
        ret

; WRITE_PHYSICAL: flag GPU; W1 zero; W2 a GPU (GPU) or bus address; the
; bytes of W3 above LENGTH (1..7) zero.
op_wrp: and T0, FL, #0xFB
        brn z, f_rsv
        tst #0x08F0             ; W1, W23
        brn z, f_rsv
        bitn FL, 2, wrp_r3
        tst #0x0400             ; W22
        brn z, f_rsv
wrp_r3: or T0, W03, ZERO
        brn z, wrp_sz
        sub T0, W02, #1
        brn c, wrp_sz
        sub T0, W02, #8
        br c, wrp_sz
        call bw3
        out rep, W02, #2
        sub J, K8, W02
wrp_l:  in T0, buf0
        and T0, T0, #0xFF
        brn z, f_rsv
        out rot, ZERO
        sub J, J, #1
        brn z, wrp_l
wrp_sz: and T3, W20, #7
        call physz
        ldi DVR, #0
        bitn FL, 2, wrp_go
        call range2             ; (LENGTH: W03 is zero)
        br z, f_range2
        mov DVR, RV
wrp_go: call bw3
        ldi SK, #16
        mov DL0, W20
        mov DL1, W21
        mov DL2, W22
        ldi DK, #8
        bitn FL, 2, xgo
        ldi DK, #1
        bit DVR, 0, xgo
        ldi DK, #2
        jmp xgo

; MAP_APERTURE: W1 an MDL base (bus, 8-aligned), W2 a page of the
; aperture, W3 PKT_MAP_W3. UNMAP_APERTURE: W1 and W3 zero.
op_map: tst #0x8C81              ; flags, W13, W22, W23, W33
        brn z, f_rsv
        shr4 T0, W31, ZERO
        brn z, f_rsv
        sub T0, W32, #8
        br c, f_rsv
        and T0, W10, #7
        brn z, f_size
        jmp mp_sz
op_unmap: tst #0xFCF1            ; flags, W1, W22, W23, W3
        brn z, f_rsv
mp_sz:  or T0, W02, W03
        br z, f_size
        and T0, W20, KFFF
        brn z, f_size
        mov RA0, W20
        mov RA1, W21
        shr4 RN0, ZERO, W02
        shr4 RN1, W02, W03
        shr4 RN2, W03, ZERO
        call range
        bitn RAP, 0, f_range2
        ; PG: the page (from the aperture's base), PA: its PTE in VRAM.
        in T0, apb0
        in T1, apb1
        sub T0, W20, T0
        sbc T1, W21, T1
        shr12 PG0, T0, T1
        shr12 PG1, T1, ZERO
        shr13 T3, PG0, PG1
        shr13 T2, ZERO, PG0
        in T0, pt0
        in T1, pt1
        add PA0, T0, T2
        adc PA1, T1, T3
        bit OP, 3, mp_lp
        ; The MDL entries on the destination side (DENT, DEB: stream 2),
        ; read through xl.
        out bank, ZERO, #1
        call sent
        out bank, ZERO, #0
        ldi DK, #4
        ; PTE flags: VALID, SYSTEM, and SNOOPED (bit 2), READABLE (5),
        ; WRITEABLE (6) from W3[34:32].
        and T0, W32, #1
        add T0, T0, T0
        add T0, T0, T0
        and T1, W32, #6
        shr12 T1, ZERO, T1
        or T0, T0, T1
        or PF, T0, #3
mp_lp:  or T0, W02, W03
        br z, done
        bit OP, 3, um_pte
        out bank, ZERO, #1
        call xl
        out bank, ZERO, #0
        or T0, DTB0, PF
        mov T1, DTB1
        mov T2, DTB2
        jmp mp_pte
um_pte: in T0, dummy0
        or T0, T0, #0x63
        in T1, dummy1
        in T2, dummy2
; The PTE (T2:T1:T0) into VRAM at PA, then its page dropped from the TLB.
mp_pte: out wpush, T0
        out wpush, T1
        out wpush, T2
        out wpush, ZERO
        out addr0, PA0
        out addr1, PA1
        out vwr, ZERO, #1
mp_vw:  br port_busy, mp_vw
        out addr0, PG0
        out addr1, PG1
        out ev, ZERO, #16
        add PG0, PG0, #1
        adc PG1, PG1, ZERO
        add PA0, PA0, #8
        adc PA1, PA1, ZERO
        sub W02, W02, #1
        sbc W03, W03, ZERO
        jmp mp_lp

; ---- data: one destination block (the bytes of one destination word) at
; a time. SK / SL the source, DK / DL the destination, W0's LENGTH the
; bytes left.
xgo:    mov LN0, W02
        mov LN1, W03
        ldi XACT, #1
        ldi STV, #0
        ldi DTV, #0
        ldi SWV, #0
        ldi S0F, #1
        ldi D0F, #1
        and SSEG, SL0, KFF8
        and DSEG, DL0, KFF8
blk:    and D, DL0, #7
        sub N, K8, D
        or T1, W03, ZERO
        brn z, blk1
        sub T1, W02, N
        br c, blk1
        mov N, W02
blk1:   and T0, DK, #6
        br z, blk2
        bit DTV, 0, blk2
        ; (The translation answer comes through the buffer: the source word
        ; is kept around it.)
        in SV0, buf0
        in SV1, buf1
        in SV2, buf2
        in SV3, buf3
        out bank, ZERO, #1
        call xl
        out bank, ZERO, #0
        out bufin, SV0
        out bufin, SV1
        out bufin, SV2
        out bufin, SV3
blk2:   out rep, D, #1
        mov J, N
seg:    or T0, J, ZERO
        br z, wrt
        bit SK, 4, seg_imm
        and T0, SK, #6
        br z, seg1
        bit STV, 0, seg1
        call xl
        ldi SWV, #0
seg1:   bit SWV, 0, seg2
        bit SK, 0, sr_v
        call pburst
        out ar, ZERO, #3
sr_w:   brn rsp, sr_w
        br rsp_err, f_bus
        jmp sr_ok
sr_v:   out addr0, SL0
        out addr1, SL1
        out vrd, ZERO
sr_vw:  brn rsp, sr_vw
sr_ok:  out ack, ZERO, #1
        and K, SL0, #7
        out rep, K, #2
        ldi SWV, #1
; K: the bytes to take from this source word.
seg2:   and T0, SL0, #7
        sub K, K8, T0
        sub T0, J, K
        br c, seg3
        mov K, J
seg3:   sub J, J, K
        add SL0, SL0, K
        adc SL1, SL1, ZERO
        adc SL2, SL2, ZERO
        out rep, K, #0
        and T0, SL0, #7
        brn z, seg
        ldi SWV, #0
        and T0, SL0, KFFF
        brn z, seg
        ldi STV, #0
        ldi S0F, #0
        jmp seg
seg_imm: out rep, J, #0
; The block's word is complete (empty bytes after it): write it.
wrt:    sub T0, K8, D
        sub K, T0, N
        out rep, K, #1
        bit DK, 4, w_res
        bit DK, 0, w_vram
        out bank, ZERO, #1
        call pburst
        out bank, ZERO, #0
        out aw, ZERO
w_bw:   brn brsp, w_bw
        br brsp_err, f_bus
        out ack, ZERO, #2
        bit DK, 5, fence_fin    ; FENCE's memory write: one word, uncounted
        jmp w_next
w_vram: out addr0, DL0
        out addr1, DL1
        out vwr, ZERO, #0
w_vw:   br port_busy, w_vw
        jmp w_next
w_res:  out wtob, ZERO
        in RES0, buf0
        in RES1, buf1
        in RES2, buf2
        in RES3, buf3
; The block is done: move on.
w_next: sub W02, W02, N
        sbc W03, W03, ZERO
        add DL0, DL0, N
        adc DL1, DL1, ZERO
        adc DL2, DL2, ZERO
        and T0, DL0, KFFF
        brn z, w_n2
        ldi DTV, #0
        ldi D0F, #0
w_n2:   or T0, W02, W03
        brn z, blk
        call xcount
        sub T0, OP, #10
        br z, fence_fin

; ---- completion: the packet counted (CNT_DMA_PACKETS), then HEAD (or the
; indirect buffer) moves on.
done:   call cnt_pk
fin:    br in_ib, fin_ib
hd_next: out headnext, ZERO
        jmp idle
; (IBL counted the packet at its fetch: zero, it was the buffer's last.)
fin_ib: or T0, IBL0, IBL1
        brn z, ib_adv
ib_end: out ib, ZERO, #0
        jmp hd_next
ib_adv: add IBP0, IBP0, #32
        adc IBP1, IBP1, ZERO
        adc IBP2, IBP2, ZERO
        jmp idle

; CNT_DMA_PACKETS: the packet completing, and the INDIRECT with the
; buffer's last packet.
cnt_pk: br in_ib, cp_ib
cp_1:   add CPK0, CPK0, #1
        adc CPK1, CPK1, ZERO
        adc CPK2, CPK2, ZERO
        adc CPK3, CPK3, ZERO
        ret
cp_ib:  or T0, IBL0, IBL1
        brn z, cp_1
        add CPK0, CPK0, #2
        adc CPK1, CPK1, ZERO
        adc CPK2, CPK2, ZERO
        adc CPK3, CPK3, ZERO
        ret

; Count the bytes moved (LN - LENGTH left) on the source's and the
; destination's counters.
xcount: ldi XACT, #0
        sub CB0, LN0, W02
        sbc CB1, LN1, W03
        bit SK, 0, xc_rv
        bit SK, 1, xc_ra
        and T0, SK, #12
        br z, xc_w
        add CRS0, CRS0, CB0
        adc CRS1, CRS1, CB1
        adc CRS2, CRS2, ZERO
        adc CRS3, CRS3, ZERO
        jmp xc_w
xc_rv:  add CRV0, CRV0, CB0
        adc CRV1, CRV1, CB1
        adc CRV2, CRV2, ZERO
        adc CRV3, CRV3, ZERO
        jmp xc_w
xc_ra:  add CRA0, CRA0, CB0
        adc CRA1, CRA1, CB1
        adc CRA2, CRA2, ZERO
        adc CRA3, CRA3, ZERO
xc_w:   bit DK, 0, xc_wv
        bit DK, 1, xc_wa
        and T0, DK, #12
        br z, xc_r
        add CWS0, CWS0, CB0
        adc CWS1, CWS1, CB1
        adc CWS2, CWS2, ZERO
        adc CWS3, CWS3, ZERO
        ret
xc_wv:  add CWV0, CWV0, CB0
        adc CWV1, CWV1, CB1
        adc CWV2, CWV2, ZERO
        adc CWV3, CWV3, ZERO
        ret
xc_wa:  add CWA0, CWA0, CB0
        adc CWA1, CWA1, CB1
        adc CWA2, CWA2, ZERO
        adc CWA3, CWA3, ZERO
xc_r:   ret

; ---- translation of the side the bank selects (GART for the aperture, an
; MDL entry read for an MDL; the hardware takes the GART side and the MDL
; stream from the bank).
xl:     bit XK, 2, xl_mdl
        out addr0, XL0
        out addr1, XL1
        out greq, ZERO, #0
xl_gw:  brn rsp, xl_gw
        br rsp_err, xl_pte
        jmp xl_tb
xl_pte: and FA0, XL0, KF000
        mov FA1, XL1
        ldi T0, #F_PTE_PERM
        brn rsp_inv, f_fa2
        ldi T0, #F_PTE_INVALID
        jmp f_fa2
xl_mdl: mov XA0, XEB0
        mov XA1, XEB1
        mov XA2, XEB2
        out addr0, XENT0
        out addr1, XENT1
        out addr2, XENT2
        out ar, ZERO, #1
xl_rw:  brn rsp, xl_rw
        br rsp_err, f_bus
; The page's bus base from the answer; an MDL moves on to its next entry.
xl_tb:  in T0, buf0
        and XTB0, T0, KF000
        in XTB1, buf1
        in XTB2, buf2
        bitn XK, 2, xl_ok
        add XENT0, XENT0, #8
        adc XENT1, XENT1, ZERO
        adc XENT2, XENT2, ZERO
        and T0, XENT0, #0x18
        brn z, xl_ok
        mov XEB0, XENT0
        mov XEB1, XENT1
        mov XEB2, XENT2
xl_ok:  out ack, ZERO, #1
        ldi XTV, #1
        ret

; The bus address P of the side's next byte (block), onto the address
; register, and the burst the full engine moves it in (XA): inside its
; 256-byte block, from the side's first word while in that block.
pburst: and T0, XK, #6
        br z, pb_p
        and T0, XL0, KFFF
        or P0, XTB0, T0
        mov P1, XTB1
        mov P2, XTB2
        jmp pb_b
pb_p:   mov P0, XL0
        mov P1, XL1
        mov P2, XL2
pb_b:   and T0, XL0, KF00
        mov T1, T0
        bitn X0F, 0, pb_b2
        and T2, XSEG, KF00
        sub T2, T2, T0
        brn z, pb_b2
        mov T1, XSEG
pb_b2:  and T2, P0, KF000
        or XA0, T2, T1
        mov XA1, P1
        mov XA2, P2
        out addr0, P0
        out addr1, P1
        out addr2, P2
        ret

; ---- faults: T0 the code, FA DMA_FAULT_ADDR; the packet's address is
; DMA_FAULT_PKT.
timeout: ldi T0, #F_TIMEOUT
        jmp f_xa
f_bus:  ldi T0, #F_BUS
f_xa:   mov FA0, XA0
        mov FA1, XA1
        mov FA2, XA2
        jmp fault
f_range1: ldi T0, #F_RANGE
f_w1:   mov FA0, W10
        mov FA1, W11
        jmp f_fa2
f_prot1: ldi T0, #F_PROTECTED
        jmp f_w1
f_fillap: ldi T0, #F_FILL_APERTURE
        jmp f_w2
f_opcode: ldi T0, #F_OPCODE
        jmp f_zero
f_rsv:  ldi T0, #F_RESERVED
        jmp f_zero
f_nested: ldi T0, #F_NESTED
        jmp f_zero
f_size: ldi T0, #F_SIZE
f_zero: ldi FA0, #0
        ldi FA1, #0
        jmp f_fa2
f_range2: ldi T0, #F_RANGE
f_w2:   mov FA0, W20
        mov FA1, W21
f_fa2:  ldi FA2, #0
fault:  out ack, ZERO, #3
        out bank, ZERO, #0
        bitn XACT, 0, fault2
        mov SV0, T0
        call xcount
        mov T0, SV0
fault2: add CFL0, CFL0, #1      ; CNT_DMA_FAULTS
        adc CFL1, CFL1, ZERO
        adc CFL2, CFL2, ZERO
        adc CFL3, CFL3, ZERO
        mov FPKT0, PK0
        mov FPKT1, PK1
        mov FPKT2, PK2
        mov FADR0, FA0
        mov FADR1, FA1
        mov FADR2, FA2
        out fault, T0
        jmp idle
