/* The ring driver (see gmc_dma_pkt.h): a helper library for the DMA tests
 * and bench, not a test; the tests that call it (tests/rtl/test_dma_*.c)
 * assert the outcomes. The packet encoders are the host library's
 * (hw/gmc_pkt.c). The ring driver keeps the host's copy of the ring
 * and the arena in one page-aligned block mapped into the model. */
#include "gmc_dma_pkt.h"

#include <stdlib.h>
#include <string.h>

#include "gmc_regs.h"

#define PKT_BYTES GMC_PKT_BYTES

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
        gmc_pkt_store(r->mem + r->tail, &p[i]);
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
