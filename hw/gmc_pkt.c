/*
 * gmc_pkt.c - DMA packet field encoders (see gmc_pkt.h). Every argument is
 * placed verbatim in its field, masked to the field's width; nothing is
 * checked here.
 */
#include "gmc_pkt.h"

#include <stdint.h>

#include "gmc_regs.h"

static uint64_t w0(unsigned op, unsigned flags, uint32_t length)
{
    return ((uint64_t)op << GMC_PKT_W0_OPCODE_LSB) | ((uint64_t)(flags & 0xFFu) << GMC_PKT_W0_FLAGS_LSB) |
           ((uint64_t)length << GMC_PKT_W0_LENGTH_LSB);
}

static struct gmc_pkt pkt(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    struct gmc_pkt p = {{a, b, c, d}};
    return p;
}

struct gmc_pkt gmc_pkt_nop(void)
{
    return pkt(w0(GMC_DMA_OP_NOP, 0, 0), 0, 0, 0);
}

struct gmc_pkt gmc_pkt_transfer(struct gmc_side src, struct gmc_side dst, uint32_t length)
{
    unsigned flags = (src.mdl ? GMC_PKT_FLAG_SRC_MDL_MASK : 0) | (dst.mdl ? GMC_PKT_FLAG_DST_MDL_MASK : 0);
    uint64_t w3 = 0;
    if (src.mdl)
        w3 |= ((uint64_t)src.page << GMC_PKT_MDL_W3_SRC_PAGE_LSB & GMC_PKT_MDL_W3_SRC_PAGE_MASK) |
              ((uint64_t)src.offset << GMC_PKT_MDL_W3_SRC_OFFSET_LSB & GMC_PKT_MDL_W3_SRC_OFFSET_MASK);
    if (dst.mdl)
        w3 |= ((uint64_t)dst.page << GMC_PKT_MDL_W3_DST_PAGE_LSB & GMC_PKT_MDL_W3_DST_PAGE_MASK) |
              ((uint64_t)dst.offset << GMC_PKT_MDL_W3_DST_OFFSET_LSB & GMC_PKT_MDL_W3_DST_OFFSET_MASK);
    return pkt(w0(GMC_DMA_OP_TRANSFER, flags, length), src.addr, dst.addr, w3);
}

struct gmc_pkt gmc_pkt_fill(uint32_t gpu_dst, uint32_t length, uint32_t pattern)
{
    return pkt(w0(GMC_DMA_OP_FILL, 0, length), 0, gpu_dst, pattern);
}

struct gmc_pkt gmc_pkt_discard(uint32_t gpu_dst, uint32_t length, int poison)
{
    return pkt(w0(GMC_DMA_OP_DISCARD, poison ? GMC_PKT_FLAG_POISON_MASK : 0, length), 0, gpu_dst, 0);
}

struct gmc_pkt gmc_pkt_read_physical(uint64_t addr, int gpu, unsigned size)
{
    return pkt(w0(GMC_DMA_OP_READ_PHYSICAL, gpu ? GMC_PKT_FLAG_GPU_MASK : 0, size), addr, 0, 0);
}

struct gmc_pkt gmc_pkt_write_physical(uint64_t addr, int gpu, unsigned size, uint64_t value)
{
    return pkt(w0(GMC_DMA_OP_WRITE_PHYSICAL, gpu ? GMC_PKT_FLAG_GPU_MASK : 0, size), 0, addr, value);
}

struct gmc_pkt gmc_pkt_map_aperture(uint32_t gpu_dst, uint32_t pages, uint64_t mdl, uint32_t mdl_page,
                                    int snooped, int readable, int writeable)
{
    uint64_t w3 = ((uint64_t)mdl_page << GMC_PKT_MAP_W3_MDL_PAGE_LSB & GMC_PKT_MAP_W3_MDL_PAGE_MASK) |
                  (snooped ? GMC_PKT_MAP_W3_SNOOPED_MASK : 0) | (readable ? GMC_PKT_MAP_W3_READABLE_MASK : 0) |
                  (writeable ? GMC_PKT_MAP_W3_WRITEABLE_MASK : 0);
    return pkt(w0(GMC_DMA_OP_MAP_APERTURE, 0, pages), mdl, gpu_dst, w3);
}

struct gmc_pkt gmc_pkt_unmap_aperture(uint32_t gpu_dst, uint32_t pages)
{
    return pkt(w0(GMC_DMA_OP_UNMAP_APERTURE, 0, pages), 0, gpu_dst, 0);
}

struct gmc_pkt gmc_pkt_flush_tlb(void)
{
    return pkt(w0(GMC_DMA_OP_FLUSH_TLB, 0, 0), 0, 0, 0);
}

struct gmc_pkt gmc_pkt_fence(uint64_t value, uint64_t mem_addr, int write_mem, int irq)
{
    unsigned flags = (write_mem ? GMC_PKT_FLAG_WRITE_MEM_MASK : 0) | (irq ? GMC_PKT_FLAG_IRQ_MASK : 0);
    return pkt(w0(GMC_DMA_OP_FENCE, flags, 0), 0, mem_addr, value);
}

struct gmc_pkt gmc_pkt_indirect(uint64_t bus_addr, uint32_t length)
{
    return pkt(w0(GMC_DMA_OP_INDIRECT, 0, length), bus_addr, 0, 0);
}

void gmc_pkt_store(uint8_t *dst, const struct gmc_pkt *p)
{
    for (unsigned k = 0; k < 4; k++)
        for (unsigned i = 0; i < 8; i++) dst[8 * k + i] = (uint8_t)(p->w[k] >> (8 * i));
}

struct gmc_pkt gmc_pkt_load(const uint8_t *src)
{
    struct gmc_pkt p = {{0, 0, 0, 0}};
    for (unsigned k = 0; k < 4; k++)
        for (unsigned i = 0; i < 8; i++) p.w[k] |= (uint64_t)src[8 * k + i] << (8 * i);
    return p;
}
