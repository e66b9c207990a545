; gmc: microcode of the micro-sequenced DMA engine (rtl/gmc_dmu.v), assembled
; by tools/dmu_asm.py into rtl/gmc_dmu_ucode.vh (make gen).
;
; Work in progress: packet fetch from the ring, NOP and FENCE (without its
; memory write), HEAD and the packet events, the TIMEOUT fault and SKIP.
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

done:   out headnext, ZERO
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
        out fault, T0
        jmp idle

skip:   out ack, ZERO, #4       ; (the fault is cleared by the hardware)
        out headnext, ZERO
        jmp idle
