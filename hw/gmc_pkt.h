/*
 * gmc_pkt.h - the DMA packet field encoders (private to the host library;
 * also used by the RTL tests and benches through hw/gmc_dma_pkt.h).
 *
 * DOC: Overview
 *
 * The one encoder of the packet format of docs/dma.md: each function places
 * its arguments in the fields of a 32-byte packet (four little-endian 64-bit
 * words) from the layouts generated into gmc_regs.h, masked to the field's
 * width, and checks nothing, so a test can build a bad packet on purpose.
 * The paging-buffer builder (gmc_pbuild.c) validates before it encodes.
 */
#ifndef GMC_PKT_H
#define GMC_PKT_H

#include <stdint.h>

#define GMC_PKT_BYTES 32u

struct gmc_pkt {
    uint64_t w[4];
};

/* A TRANSFER side: a GPU address, or an MDL (bus address of the array,
 * first entry, byte offset in the first page). */
struct gmc_side {
    int mdl;
    uint64_t addr;   /* GPU address, or MDL base bus address */
    uint32_t page;   /* MDL: first entry */
    uint32_t offset; /* MDL: byte offset in the first page */
};

/* A side at a GPU address (VRAM or aperture). */
static inline struct gmc_side gmc_side_gpu(uint64_t addr)
{
    struct gmc_side s = {0, addr, 0, 0};
    return s;
}

struct gmc_pkt gmc_pkt_nop(void);
struct gmc_pkt gmc_pkt_transfer(struct gmc_side src, struct gmc_side dst, uint32_t length);
struct gmc_pkt gmc_pkt_fill(uint32_t gpu_dst, uint32_t length, uint32_t pattern);
struct gmc_pkt gmc_pkt_discard(uint32_t gpu_dst, uint32_t length, int poison);
struct gmc_pkt gmc_pkt_read_physical(uint64_t addr, int gpu, unsigned size);
struct gmc_pkt gmc_pkt_write_physical(uint64_t addr, int gpu, unsigned size, uint64_t value);
struct gmc_pkt gmc_pkt_map_aperture(uint32_t gpu_dst, uint32_t pages, uint64_t mdl, uint32_t mdl_page,
                                    int snooped, int readable, int writeable);
struct gmc_pkt gmc_pkt_unmap_aperture(uint32_t gpu_dst, uint32_t pages);
struct gmc_pkt gmc_pkt_flush_tlb(void);
/* mem_addr goes into W2 as given, also without write_mem (which makes the
 * packet fault RESERVED unless it is 0). */
struct gmc_pkt gmc_pkt_fence(uint64_t value, uint64_t mem_addr, int write_mem, int irq);
struct gmc_pkt gmc_pkt_indirect(uint64_t bus_addr, uint32_t length);

/* Store a packet as 32 little-endian bytes at dst. */
void gmc_pkt_store(uint8_t *dst, const struct gmc_pkt *p);
/* The reverse (for readers of a buffer or ring). */
struct gmc_pkt gmc_pkt_load(const uint8_t *src);

#endif /* GMC_PKT_H */
