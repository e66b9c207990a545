/* A DMA packet generator driven by a byte stream (a fuzz input, or
 * pseudo-random bytes): mostly valid packets whose addresses are snapped
 * into two VRAM windows, the first aperture pages, an MDL of data pages
 * and the data pages' bus addresses, plus raw packets (any 32 bytes,
 * INDIRECT excluded), TRANSFERs with a GPU address anywhere, and valid
 * TRANSFERs with one bit flipped. Used by tests/fuzz/fuzz_dma.c and
 * tests/rtl/test_dma_soak.c. Bytes that run out read as zeros. */
#ifndef GMC_DMA_GEN_H
#define GMC_DMA_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "gmc_pkt.h"

struct gmc_dma_gen_in {
    const uint8_t *p;
    size_t n;
};

struct gmc_dma_gen_env {
    uint64_t meta;       /* bus address of the MDL (data_pages entries) */
    uint64_t data;       /* bus address of the data pages */
    unsigned data_pages; /* >= 1 */
    unsigned ap_pages;   /* aperture pages 0..ap_pages-1 are the targets */
    uint32_t ap_base;    /* aperture GPU base */
    uint32_t vwin[2];    /* two 64 KiB VRAM windows (GPU addresses) */
};

struct gmc_pkt gmc_dma_gen_packet(const struct gmc_dma_gen_env *e, struct gmc_dma_gen_in *in);

#endif
