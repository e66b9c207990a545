/* DMA packet encoders and the ring driver (see gmc_dma_pkt.h): a helper
 * library for the DMA tests and bench, not a test; the tests that call it
 * (tests/rtl/test_dma_*.c) assert the outcomes.
 *
 * Encoders place every argument verbatim in its field (masked to the
 * field's width) and never check it: a test that wants a bad packet gets
 * exactly the bits it asked for. The ring driver keeps the host's copy of
 * the ring and the arena in one page-aligned block mapped into the model. */
#include "gmc_dma_pkt.h"

#include <stdlib.h>
#include <string.h>

#include "gmc_regs.h"

#define PKT_BYTES 32u

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

/* mem_addr goes into W2 as given, also without write_mem (which makes the
 * packet fault RESERVED unless it is 0). */
struct gmc_pkt gmc_pkt_fence(uint64_t value, uint64_t mem_addr, int write_mem, int irq)
{
    unsigned flags = (write_mem ? GMC_PKT_FLAG_WRITE_MEM_MASK : 0) | (irq ? GMC_PKT_FLAG_IRQ_MASK : 0);
    return pkt(w0(GMC_DMA_OP_FENCE, flags, 0), 0, mem_addr, value);
}

struct gmc_pkt gmc_pkt_indirect(uint64_t bus_addr, uint32_t length)
{
    return pkt(w0(GMC_DMA_OP_INDIRECT, 0, length), bus_addr, 0, 0);
}

/* ------------------------------------------------------------- ring driver */

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

int gmc_ring_init(struct gmc_ring *r, gmc_sim *sim, uint64_t bus, unsigned log2, uint64_t arena_bytes)
{
    if (!r) return GMC_SIM_EINVAL;
    memset(r, 0, sizeof *r);
    if (!sim || log2 < 12 || log2 > 20 || (bus & 4095u) || bus >> 48 || arena_bytes > (1ull << 40))
        return GMC_SIM_EINVAL;
    const uint64_t ring_bytes = 1ull << log2;
    const uint64_t total = (ring_bytes + arena_bytes + 4095u) & ~4095ull;
    if (bus + total > (1ull << 48)) return GMC_SIM_EINVAL;
    void *mem = NULL;
    if (posix_memalign(&mem, 4096, (size_t)total)) return GMC_SIM_ENOMEM;
    memset(mem, 0, (size_t)total);
    int st = gmc_sim_host_map(sim, bus, mem, (size_t)total);
    if (st) {
        free(mem);
        return st;
    }
    r->sim = sim;
    r->bus = bus;
    r->mem = mem;
    r->ring_bytes = (uint32_t)ring_bytes;
    r->arena_bytes = total - ring_bytes;
    r->arena_used = 0;
    r->tail = 0;

    /* Stop the engine, place the ring, and make HEAD = TAIL = 0 (RESET
     * sets HEAD to TAIL), then start it. */
    const struct {
        uint32_t off, val;
    } seq[] = {
        {GMC_REG_DMA_CTRL, 0},
        {GMC_REG_DMA_RING_BASE_LO, (uint32_t)bus & 0xFFFFF000u},
        {GMC_REG_DMA_RING_BASE_HI, (uint32_t)(bus >> 32)},
        {GMC_REG_DMA_RING_SIZE, log2},
        {GMC_REG_DMA_RING_TAIL, 0},
        {GMC_REG_DMA_CMD, GMC_DMA_CMD_RESET_MASK},
        {GMC_REG_DMA_CTRL, GMC_DMA_CTRL_ENABLE_MASK},
    };
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        st = gmc_sim_reg_write(sim, seq[i].off, seq[i].val);
        if (st) {
            gmc_ring_fini(r);
            return st;
        }
    }
    return GMC_SIM_OK;
}

void gmc_ring_fini(struct gmc_ring *r)
{
    if (!r || !r->mem) return;
    if (r->sim) {
        gmc_sim_reg_write(r->sim, GMC_REG_DMA_CTRL, 0);
        gmc_sim_host_unmap(r->sim, r->bus);
    }
    free(r->mem);
    memset(r, 0, sizeof *r);
}

uint64_t gmc_ring_alloc(struct gmc_ring *r, uint64_t bytes, uint64_t align, uint8_t **host)
{
    if (host) *host = NULL;
    if (!r || !r->mem || !align || (align & (align - 1))) return 0;
    const uint64_t start = (r->arena_used + align - 1) & ~(align - 1);
    const uint64_t base = r->ring_bytes;
    /* Alignment is of the bus address; the ring is 4 KiB aligned, so
     * larger alignments are taken relative to the bus address. */
    uint64_t off = base + start;
    if (align > 4096) off = ((r->bus + off + align - 1) & ~(align - 1)) - r->bus;
    if (off < base || off - base > r->arena_bytes || bytes > r->arena_bytes - (off - base)) return 0;
    r->arena_used = off - base + bytes;
    if (host) *host = r->mem + off;
    return r->bus + off;
}

int gmc_ring_put(struct gmc_ring *r, const struct gmc_pkt *p, unsigned n)
{
    if (!r || !r->mem || (!p && n)) return GMC_SIM_EINVAL;
    uint32_t head = 0;
    int st = gmc_sim_reg_read(r->sim, GMC_REG_DMA_RING_HEAD, &head);
    if (st) return st;
    const uint32_t mask = r->ring_bytes - 1;
    const uint32_t used = (r->tail - head) & mask;
    const uint32_t slots = r->ring_bytes / PKT_BYTES - 1;
    if (n > slots - used / PKT_BYTES) return GMC_SIM_EINVAL;
    for (unsigned i = 0; i < n; i++) {
        uint8_t *dst = r->mem + r->tail;
        for (int k = 0; k < 4; k++) put_le64(dst + 8 * k, p[i].w[k]);
        r->tail = (r->tail + PKT_BYTES) & mask;
    }
    return GMC_SIM_OK;
}

int gmc_ring_kick(struct gmc_ring *r)
{
    if (!r || !r->mem) return GMC_SIM_EINVAL;
    return gmc_sim_reg_write(r->sim, GMC_REG_DMA_RING_TAIL, r->tail);
}

int gmc_ring_wait(struct gmc_ring *r, uint64_t max_cycles, unsigned poll)
{
    if (!r || !r->mem) return GMC_SIM_EINVAL;
    if (poll == 0) poll = 1;
    const uint64_t t0 = gmc_sim_cycles(r->sim);
    for (;;) {
        uint32_t status = 0, head = 0;
        int st = gmc_sim_reg_read(r->sim, GMC_REG_DMA_STATUS, &status);
        if (st) return st;
        const uint32_t state = (status & GMC_DMA_STATUS_STATE_MASK) >> GMC_DMA_STATUS_STATE_LSB;
        if (state == 2) return 1;
        if (state == 0) {
            st = gmc_sim_reg_read(r->sim, GMC_REG_DMA_RING_HEAD, &head);
            if (st) return st;
            if (head == r->tail) return GMC_SIM_OK;
        }
        if (gmc_sim_cycles(r->sim) - t0 >= max_cycles) return GMC_SIM_ETIMEOUT;
        st = gmc_sim_step(r->sim, poll);
        if (st) return st;
    }
}

int gmc_ring_run(struct gmc_ring *r, const struct gmc_pkt *p, unsigned n, uint64_t max_cycles)
{
    int st = gmc_ring_put(r, p, n);
    if (st) return st;
    st = gmc_ring_kick(r);
    if (st) return st;
    return gmc_ring_wait(r, max_cycles, 16);
}

uint64_t gmc_ring_mdl(struct gmc_ring *r, const uint64_t *pages, unsigned n)
{
    uint8_t *host = NULL;
    if (!r || (!pages && n)) return 0;
    const uint64_t bus = gmc_ring_alloc(r, 8ull * (n ? n : 1), 8, &host);
    if (!bus) return 0;
    for (unsigned i = 0; i < n; i++) put_le64(host + 8 * i, pages[i]);
    return bus;
}
