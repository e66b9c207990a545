/* DMA packet encoders and a ring driver for tests and benchmarks.
 *
 * The encoders are the host library's (hw/gmc_pkt.h, the one encoder
 * of the packet format): they fill a 32-byte packet from the generated
 * layouts in gmc_regs.h and do not validate (tests build bad packets on
 * purpose).
 *
 * The ring driver owns a block of simulated system memory mapped into the
 * model at a bus address: the ring itself, plus an arena the test can
 * carve buffers, MDLs and indirect buffers from. */
#ifndef GMC_DMA_PKT_H
#define GMC_DMA_PKT_H

#include <stddef.h>
#include <stdint.h>

#include "gmc_sim.h"

/* struct gmc_pkt, struct gmc_side and the gmc_pkt_* encoders. */
#include "gmc_pkt.h"

/* A ring of 2^log2 bytes at bus address `bus`, followed by an arena of
 * arena_bytes of system memory, all mapped into the model. */
struct gmc_ring {
    gmc_sim *sim;
    uint64_t bus;        /* ring base bus address (4 KiB aligned) */
    uint8_t *mem;        /* host view of [bus, bus + ring_bytes + arena_bytes) */
    uint32_t ring_bytes;
    uint64_t arena_bytes;
    uint64_t arena_used;
    uint32_t tail;       /* next free byte offset in the ring */
};

/* Map memory, program DMA_RING_*, enable the engine. Returns a gmc_sim
 * status. */
int gmc_ring_init(struct gmc_ring *r, gmc_sim *sim, uint64_t bus, unsigned log2, uint64_t arena_bytes);
void gmc_ring_fini(struct gmc_ring *r);

/* Carve `bytes` (aligned to `align`, a power of two) from the arena;
 * returns the bus address and sets *host to the host pointer. */
uint64_t gmc_ring_alloc(struct gmc_ring *r, uint64_t bytes, uint64_t align, uint8_t **host);

/* Write packets into the ring at the tail (wrapping); does not ring the
 * doorbell. Fails with GMC_SIM_EINVAL when they do not fit. */
int gmc_ring_put(struct gmc_ring *r, const struct gmc_pkt *p, unsigned n);
/* Write DMA_RING_TAIL. */
int gmc_ring_kick(struct gmc_ring *r);

/* Run until DMA_STATUS.STATE is idle with HEAD == TAIL, or faulted, or
 * max_cycles pass. Returns GMC_SIM_OK when idle, 1 when faulted (the
 * caller reads DMA_FAULT_*), GMC_SIM_ETIMEOUT otherwise. Polls a register
 * every `poll` cycles (it costs bus cycles, so keep it sparse in benches). */
int gmc_ring_wait(struct gmc_ring *r, uint64_t max_cycles, unsigned poll);

/* put + kick + wait. */
int gmc_ring_run(struct gmc_ring *r, const struct gmc_pkt *p, unsigned n, uint64_t max_cycles);

/* Encode an MDL (array of page addresses) into the arena and return its
 * bus address. */
uint64_t gmc_ring_mdl(struct gmc_ring *r, const uint64_t *pages, unsigned n);

#endif
