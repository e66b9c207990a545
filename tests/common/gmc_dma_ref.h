/* A reference model of the DMA paging engine's command semantics
 * (docs/dma.md), for differential tests against the RTL.
 *
 * State: VRAM bytes (the page table is VRAM at PT_BASE), copies of the
 * system-memory regions the test maps into the simulator, the dummy page,
 * the protected ranges, DMA_FENCE, DMA_READ_RESULT and the fault log.
 *
 * gmc_dma_ref_exec() runs one packet: it returns the fault the engine
 * would stop on (GMC_DMA_FAULT_*) and applies the packet's effect when it
 * does not fault. Checks that need only the packet come first and leave
 * everything untouched, as the spec requires. Faults found while data
 * would move (PTE_INVALID, PTE_PERM, BUS) are found by walking the whole
 * packet *before* applying anything; the model then applies nothing and
 * marks the fault "unpinned", because docs/dma.md only bounds what the
 * hardware has written by then (bytes inside the destination range).
 * Tests that need exact state avoid those faults, or resynchronise.
 *
 * INDIRECT: the model reads the buffer from its own copy of system memory
 * and runs its packets (in_indirect = 1); a fault inside the buffer is
 * logged and execution goes on with the next packet of the buffer, which
 * is what DMA_CMD.SKIP does (set stop_on_fault to model DMA_CMD.RESET
 * instead: execution stops at the first fault until the flag is cleared).
 *
 * TLB: the model has none. The hardware caches PTEs; the model is exact
 * as long as the page table changes only through MAP/UNMAP (which drop
 * their pages) or FLUSH_TLB follows any other change. */
#ifndef GMC_DMA_REF_H
#define GMC_DMA_REF_H

#include <stddef.h>
#include <stdint.h>

#include "gmc_dma_pkt.h"

#define GMC_DMA_REF_MAX_REGIONS 16
#define GMC_DMA_REF_PROT_RANGES 4

struct gmc_dma_ref_region {
    uint64_t bus;
    uint64_t len;
    uint8_t *mem; /* the model's own copy */
};

/* One engine stop. pkt is the bus address of the faulting packet: the
 * address the caller gave gmc_dma_ref_exec_at() for a ring packet, or the
 * computed one inside an indirect buffer. */
struct gmc_dma_ref_fault {
    uint32_t code;   /* GMC_DMA_FAULT_* */
    int indirect;    /* DMA_FAULT_CODE.INDIRECT */
    uint64_t pkt;    /* DMA_FAULT_PKT */
    uint64_t addr;   /* DMA_FAULT_ADDR */
    int pinned;      /* 0: found while data moves; partial effects unknown */
    uint64_t tag;    /* the caller's tag of the packet (see exec_at) */
    uint64_t fence, read_result; /* DMA_FENCE and DMA_READ_RESULT at the stop */
};

struct gmc_dma_ref {
    /* configuration (gmc_dma_ref_init sets the defaults of docs/hardware.md) */
    uint64_t vram_bytes;
    uint32_t aperture_base;
    uint32_t aperture_pages;
    uint32_t pt_base;            /* PT_BASE */
    uint64_t dummy_page;         /* DUMMY_PAGE, bus address (bits 47:12) */
    uint32_t prot_base[GMC_DMA_REF_PROT_RANGES];
    uint32_t prot_limit[GMC_DMA_REF_PROT_RANGES];

    uint8_t *vram;
    struct gmc_dma_ref_region region[GMC_DMA_REF_MAX_REGIONS];
    unsigned nregions;
    /* bus ranges that answer with an error (gmc_sim_host_inject) */
    struct {
        uint64_t bus, len;
    } err[GMC_DMA_REF_MAX_REGIONS];
    unsigned nerr;

    /* architectural results */
    uint64_t fence;              /* DMA_FENCE */
    uint64_t read_result;        /* DMA_READ_RESULT */
    int irq_fence;               /* IRQ_STATUS.DMA_FENCE raised since cleared */
    uint64_t faults_taken;       /* CNT_DMA_FAULTS */
    uint64_t packets_ok;         /* packets completed without a fault (ring + buffer) */
    uint64_t overlaps;           /* TRANSFERs whose source and destination share a byte: the
                                    destination's content is undefined (docs/dma.md) */

    /* fault log, oldest first; the caller consumes it (gmc_dma_ref_clear_faults) */
    struct gmc_dma_ref_fault *faults;
    size_t nfaults, faults_cap;

    /* DMA_CMD.RESET modelling: stop at the first fault (stopped := 1) */
    int stop_on_fault;
    int stopped;

    /* Attribution for diagnostics: the tag of the packet that last wrote
     * each 4 KiB VRAM page and each region page (UINT64_MAX: never). */
    uint64_t cur_tag;
    uint64_t *vram_writer;
    uint64_t *region_writer[GMC_DMA_REF_MAX_REGIONS];
};

/* gmc_top's defaults (GMC_TOP_* in gmc_regs.h: 8 MiB VRAM, aperture
 * 0x80000000 x 4096 pages, PT_BASE = VRAM - 64 KiB); VRAM zeroed.
 * Returns 0 or -1. */
int gmc_dma_ref_init(struct gmc_dma_ref *r);
void gmc_dma_ref_fini(struct gmc_dma_ref *r);

/* Add a system-memory region (zero-filled copy). Returns 0, or -1 when it
 * overlaps another or there is no room. */
int gmc_dma_ref_map(struct gmc_dma_ref *r, uint64_t bus, uint64_t len);
/* The model's copy of [bus, bus + len), wholly inside one region, or NULL. */
uint8_t *gmc_dma_ref_sys(struct gmc_dma_ref *r, uint64_t bus, uint64_t len);
/* The model's VRAM bytes at addr, or NULL when [addr, addr + len) is outside. */
uint8_t *gmc_dma_ref_vram(struct gmc_dma_ref *r, uint64_t addr, uint64_t len);

/* Accesses touching [bus, bus + len) fail (BUS), as the simulator's
 * SLVERR/DECERR injection makes them; clear removes every range. */
int gmc_dma_ref_inject(struct gmc_dma_ref *r, uint64_t bus, uint64_t len);
void gmc_dma_ref_inject_clear(struct gmc_dma_ref *r);

void gmc_dma_ref_set_prot(struct gmc_dma_ref *r, unsigned i, uint32_t base, uint32_t limit);
/* Is any byte of VRAM [addr, addr + len) in an active protected range? */
int gmc_dma_ref_protected(const struct gmc_dma_ref *r, uint64_t addr, uint64_t len);

/* GART translation as the engine does it: aperture GPU address -> bus
 * address. Returns GMC_DMA_FAULT_NONE, _RANGE, _PTE_INVALID or _PTE_PERM. */
uint32_t gmc_dma_ref_translate(const struct gmc_dma_ref *r, uint32_t gpu, int write, uint64_t *bus);
/* The PTE of aperture page `page` (read from the model's VRAM). */
uint64_t gmc_dma_ref_pte(const struct gmc_dma_ref *r, uint32_t page);

/* The checks that need only the packet (and the registers: VRAM size,
 * aperture, protected ranges); no effect. Returns the fault, *addr its
 * DMA_FAULT_ADDR. */
uint32_t gmc_dma_ref_check(const struct gmc_dma_ref *r, const struct gmc_pkt *p, int in_indirect,
                           uint64_t *addr);

/* Run one packet (see above). pkt_bus is the packet's bus address (for
 * DMA_FAULT_PKT) and tag an opaque caller id recorded in faults and
 * writer maps; inner packets of an INDIRECT get tag + 1 + index.
 * Returns the code of the first fault this call logged, or NONE. */
uint32_t gmc_dma_ref_exec_at(struct gmc_dma_ref *r, const struct gmc_pkt *p, int in_indirect,
                             uint64_t pkt_bus, uint64_t tag);
uint32_t gmc_dma_ref_exec(struct gmc_dma_ref *r, const struct gmc_pkt *p, int in_indirect);

void gmc_dma_ref_clear_faults(struct gmc_dma_ref *r);

const char *gmc_dma_ref_op_name(unsigned opcode);
const char *gmc_dma_ref_fault_name(unsigned code);
/* One-line description of a packet into buf (returns buf). */
char *gmc_dma_ref_describe(const struct gmc_pkt *p, char *buf, size_t len);

#endif
