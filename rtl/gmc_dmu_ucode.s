; gmc: microcode of the micro-sequenced DMA engine (rtl/gmc_dmu.v), assembled
; by tools/dmu_asm.py into rtl/gmc_dmu_ucode.vh (make gen).
;
; Work in progress: packet fetch from the ring, NOP and FENCE (without its
; memory write), HEAD and the packet events, the TIMEOUT fault and SKIP,
; CNT_DMA_PACKETS and _FAULTS, and routines that add to the byte counters
; (cnt_*, at the end).
; The packet checks, TRANSFER / FILL / DISCARD / READ_ / WRITE_PHYSICAL,
; MAP / UNMAP, FLUSH_TLB, INDIRECT and the other faults are not written yet.

; ---- register file: 0x00..0x7F private, 0x80..0xFF read by the register block
.equ W00 0x00        ; packet word 0, bits 15:0 (opcode, flags)
.equ W01 0x01
.equ W02 0x02        ; LENGTH
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
.equ PK0 0x14        ; address of the packet being executed
.equ PK1 0x15
.equ PK2 0x16
.equ XA0 0x17        ; burst address of the transaction owed (TIMEOUT)
.equ XA1 0x18
.equ XA2 0x19
.equ ZERO 0x1F
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
.equ CNTB 0x7F       ; bytes to add to a byte counter (the cnt_* routines)

.equ OP_NOP 1
.equ OP_FENCE 10
.equ F_OPCODE 1
.equ F_TIMEOUT 10

; ---- vectors
.org 0
        jmp init
        jmp idle            ; 1: RESET command (HEAD, fault, epoch done in hardware)
        jmp timeout         ; 2: watchdog
        jmp skip            ; 3: SKIP while faulted

init:   ldi ZERO, #0
        ldi FENCE0, #0
        ldi FENCE1, #0
        ldi FENCE2, #0
        ldi FENCE3, #0
        ldi RES0, #0
        ldi RES1, #0
        ldi RES2, #0
        ldi RES3, #0
        ldi FPKT3, #0
        ldi FADR3, #0

; ---- wait for a packet
idle:   out busy, ZERO, #0
wait:   brn can_fetch, wait
        br ar_busy, wait
        br wr_busy, wait
        in T0, ring0
        in T1, ring1
        in T2, ring2
        in PK0, head0
        in PK1, head1
        add PK0, T0, PK0
        adc PK1, T1, PK1
        adc PK2, T2, ZERO
        out addr0, PK0
        out addr1, PK1
        out addr2, PK2
        mov XA0, PK0
        mov XA1, PK1
        mov XA2, PK2
        out busy, ZERO, #1
        out ar, ZERO, #4        ; stream 0, 4 beats
        call beat
        mov W00, T0
        mov W01, T1
        mov W02, T2
        mov W03, T3
        call beat
        mov W10, T0
        mov W11, T1
        mov W12, T2
        mov W13, T3
        call beat
        mov W20, T0
        mov W21, T1
        mov W22, T2
        mov W23, T3
        call beat
        mov W30, T0
        mov W31, T1
        mov W32, T2
        mov W33, T3

; ---- dispatch (the packet checks come here)
        and T0, W00, #0x0F
        sub T1, T0, #OP_NOP
        br z, done
        sub T1, T0, #OP_FENCE
        br z, fence
        ldi T0, #F_OPCODE
        jmp fault_pkt

fence:  mov FENCE0, W30
        mov FENCE1, W31
        mov FENCE2, W32
        mov FENCE3, W33
        bitn W00, 13, done      ; flags[5]: IRQ
        out ev, ZERO, #4

done:   add CPK0, CPK0, #1  ; CNT_DMA_PACKETS (one run of four lanes)
        adc CPK1, CPK1, #0
        adc CPK2, CPK2, #0
        adc CPK3, CPK3, #0
        out headnext, ZERO
        out ev, ZERO, #1
        jmp idle

; One beat of a read into T0..T3 (a bus error on it: BUS fault, not yet).
beat:   brn rsp, beat
        in T0, buf0
        in T1, buf1
        in T2, buf2
        in T3, buf3
        out ack, ZERO, #1
        ret

; ---- faults: T0 holds the code; DMA_FAULT_PKT and _ADDR are recorded first.
timeout: ldi T0, #F_TIMEOUT
fault_pkt:
        mov FPKT0, PK0
        mov FPKT1, PK1
        mov FPKT2, PK2
        mov FADR0, XA0
        mov FADR1, XA1
        mov FADR2, XA2
        add CFL0, CFL0, #1  ; CNT_DMA_FAULTS, before the fault is visible
        adc CFL1, CFL1, #0
        adc CFL2, CFL2, #0
        adc CFL3, CFL3, #0
        out fault, T0
        jmp idle

skip:   out ack, ZERO, #4       ; (the fault is cleared by the hardware)
        out headnext, ZERO
        jmp idle

; ---- byte counters
; The convention for adding bytes to CNT_DMA_{RD,WR}_{VRAM,SYS,APERTURE}:
; put the number of bytes (0..65535) in CNTB and `call` the counter's
; routine below (cnt_rd_vram, cnt_wr_vram, cnt_rd_sys, cnt_wr_sys,
; cnt_rd_ap, cnt_wr_ap). It changes the counter and the flags only; CNTB
; and T0..T3 are kept. It is a leaf (it ends in ret, and there is one
; return register): from inside a routine that was itself called, write
; its four instructions inline instead. Any update of a counter must keep
; the form the hardware relies on (rtl/gmc_dmu.v): its four lanes written
; by four consecutive instructions, lane 0 first, each with the counter
; lane as operand A (add L0, L0, x / adc L1, L1, ZERO / adc L2, L2, ZERO /
; adc L3, L3, ZERO). The status RAM takes the four lanes together with
; lane 3 (any 64-bit status register: write lane 3 last), a counter
; cleared by CNT_CLEAR reads 0 as operand A until such a run has rewritten
; it, and the RESET and watchdog vectors wait for the run's end. Count bytes as they are moved (the full engine counts
; each beat); a fault's bytes moved before it are counted.
cnt_rd_vram:
        add CRV0, CRV0, CNTB
        adc CRV1, CRV1, ZERO
        adc CRV2, CRV2, ZERO
        adc CRV3, CRV3, ZERO
        ret
cnt_wr_vram:
        add CWV0, CWV0, CNTB
        adc CWV1, CWV1, ZERO
        adc CWV2, CWV2, ZERO
        adc CWV3, CWV3, ZERO
        ret
cnt_rd_sys:
        add CRS0, CRS0, CNTB
        adc CRS1, CRS1, ZERO
        adc CRS2, CRS2, ZERO
        adc CRS3, CRS3, ZERO
        ret
cnt_wr_sys:
        add CWS0, CWS0, CNTB
        adc CWS1, CWS1, ZERO
        adc CWS2, CWS2, ZERO
        adc CWS3, CWS3, ZERO
        ret
cnt_rd_ap:
        add CRA0, CRA0, CNTB
        adc CRA1, CRA1, ZERO
        adc CRA2, CRA2, ZERO
        adc CRA3, CRA3, ZERO
        ret
cnt_wr_ap:
        add CWA0, CWA0, CNTB
        adc CWA1, CWA1, ZERO
        adc CWA2, CWA2, ZERO
        adc CWA3, CWA3, ZERO
        ret
