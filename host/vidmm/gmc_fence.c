/*
 * gmc_fence.c - paging fences and the TDR path: queueing paging
 * operations, waiting for their fences, recovery when a fence never
 * arrives or the engine faults, buffers and ranges released once the
 * engine is done with them, the device's paging queue and its residency
 * notifications, the controller's counters kept across resets (see
 * gmc_fence.h, docs/residency.md).
 *
 * DOC: Recovery
 *
 * The residency bookkeeping is optimistic (gmc_resid.c): an allocation's
 * state changes when its paging operation is queued. When a wait times
 * out or the engine faults, recover() resets the engine and the
 * controller (as DxgkDdiResetFromTimeout does), then walks the
 * allocations: those whose last paging operation (pend, paging_fence)
 * did not complete get back what they had before it (a page-in or fill
 * loses the placement and is redone when needed; a save keeps the placed
 * copy), those whose content was in flight (an eviction's copy-out, a
 * move, a submission that wrote it) are lost. It is the only walk over
 * every allocation on the paging path, once per reset.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmc.h"
#include "gmc_backend.h"
#include "gmc_cand.h"
#include "gmc_check.h"
#include "gmc_fence.h"
#include "gmc_kmd.h"
#include "gmc_paging.h"
#include "gmc_range.h"
#include "gmc_regs.h"
#include "gmc_status.h"
#include "gmc_vobj.h"
#include "gmc_record.h"

#define DEFAULT_TDR_CYCLES 4000000u

/* The compact engine (CAPS.DMA_ENGINE = COMPACT) moves one word and one bus
 * transaction at a time: its default TDR timeout is this many times longer.
 * The micro-sequenced engine (MICRO) is slower still (docs/dma.md
 * estimates about 40 cycles per word of a copy against the compact
 * engine's 14): four times the compact engine's. */
#define COMPACT_TDR_FACTOR 32u
#define MICRO_TDR_FACTOR 128u

/* Nominal device clock for timeouts given in microseconds: 100 MHz. */
#define CYCLES_PER_US 100u

int gmc_fence_queue(gmc_device *dev, struct gmc_paging_args *args, uint64_t *fence)
{
    uint64_t f = 0;
    int rc = gmc_paging_queue(dev->pg, args, &f);
    if (rc != GMC_OK)
        return rc;
    dev->stats.paging_ops++;
    dev->stats.fences_issued++;
    if (fence != NULL)
        *fence = f;
    return GMC_OK;
}

/* Free a system buffer once the queued work that may use it completed. */
void gmc_fence_defer_sysbuf(gmc_device *dev, struct gmc_sysbuf *b)
{
    if (b->host == NULL)
        return;
    uint64_t fence = gmc_paging_last_issued(dev->pg);
    struct gmc_deferred *d = calloc(1, sizeof(*d));
    if (d == NULL || fence <= gmc_paging_completed(dev->pg)) {
        /* Nothing queued can still touch it (or no memory to defer: wait). */
        if (d == NULL)
            (void)gmc_paging_idle(dev->pg, dev->tdr_cycles);
        free(d);
        gmc_sysmem_free(dev->pg, b);
        memset(b, 0, sizeof(*b));
        return;
    }
    d->buf = *b;
    d->fence = fence;
    d->next = dev->deferred;
    dev->deferred = d;
    memset(b, 0, sizeof(*b));
}

/* Release system buffers whose last user completed (all: force). */
static void reap(gmc_device *dev, int force)
{
    uint64_t done = dev->pg != NULL ? gmc_paging_completed(dev->pg) : 0u;
    struct gmc_deferred **pp = &dev->deferred;
    while (*pp != NULL) {
        struct gmc_deferred *d = *pp;
        if (force || d->fence <= done) {
            *pp = d->next;
            if (d->node != NULL) {
                gmc_range_remove(&dev->seg[d->seg].mgr, d->node);
                free(d->node); /* the holder allocation (node is its first member) */
            } else {
                gmc_sysmem_free(dev->pg, &d->buf);
            }
            free(d);
        } else {
            pp = &d->next;
        }
    }
}

static void on_notify(void *user, uint64_t cookie, int resident)
{
    gmc_device *dev = user;
    struct gmc_valloc *a = gmc_cand_find_notified(dev, cookie);
    if (a == NULL)
        return; /* destroyed since */
    /* Each client with a callback, in the device's order, hears it once,
     * with its newest handle to the allocation (the allocation's handles
     * are newest first): O(clients x handles of this allocation). */
    for (gmc_client *c = dev->clients; c != NULL; c = c->next) {
        if (c->notify_fn == NULL)
            continue;
        for (struct gmc_vref *r = a->handles; r != NULL; r = r->anext)
            if (r->client == c) {
                c->notify_fn(c->notify_user, r->handle, resident);
                break;
            }
        /* The callback may have closed handles: look the allocation up again. */
        if ((a = gmc_cand_find_notified(dev, cookie)) == NULL)
            return;
    }
}

static void recover(gmc_device *dev)
{
    uint64_t done = 0;
    /* The controller reset below zeroes the performance counters: keep
     * what they counted so far (gmc_device_hw_counters adds it back). */
    struct gmc_hw_counters hw;
    if (gmc_device_hw_counters(dev, &hw) == GMC_OK)
        dev->hw_base = hw;
    (void)gmc_paging_reset(dev->pg, &done);
    /* The engine reset cannot take back transactions a hung bus still owes
     * (each keeps an outstanding slot until answered), so reset the whole
     * controller as DxgkDdiResetFromTimeout does, then program the queue
     * again. VRAM and the page table survive. */
    if (dev->kmd.ddi->reset_from_timeout(&dev->kmd) == GMC_OK)
        (void)gmc_paging_restart(dev->pg);
    uint64_t recovered = 0, lost = 0;
    for (struct gmc_valloc *a = dev->allocs; a != NULL; a = a->dnext) {
        int was_lost = 0;
        if (a->paging_fence > done) {
            switch (a->pend) {
            case GMC_PEND_PAGE_IN:
            case GMC_PEND_MAP:
            case GMC_PEND_FILL:
                /* The placed copy is incomplete; the system copy (if any)
                 * is still whole (a page-in keeps it). Page it in again
                 * when it is needed. */
                if (a->pend == GMC_PEND_FILL)
                    a->state &= ~(uint32_t)GMC_ALLOC_STATE_HAS_CONTENT;
                gmc_cand_unplace(dev, a);
                break;
            case GMC_PEND_SAVE_KEEP:
                a->sys_valid = 0; /* the placed copy is intact */
                gmc_cand_sync(dev, a);
                break;
            case GMC_PEND_EVICT:
            case GMC_PEND_MOVE:
                was_lost = 1;
                break;
            default:
                break;
            }
        }
        if (a->write_fence > done)
            was_lost = 1; /* a submission that wrote it never completed */
        if (was_lost) {
            gmc_cand_unplace(dev, a);
            a->sys_valid = 0;
            a->state &= ~(uint32_t)GMC_ALLOC_STATE_HAS_CONTENT;
            a->state |= GMC_ALLOC_STATE_LOST;
            lost++;
        } else if (a->state & GMC_ALLOC_STATE_HAS_CONTENT) {
            recovered++;
        }
        a->pend = GMC_PEND_NONE;
        if (a->paging_fence > done)
            a->paging_fence = done;
        if (a->busy_fence > done)
            a->busy_fence = done;
        if (a->write_fence > done)
            a->write_fence = done;
    }
    reap(dev, 1);
    dev->sync_wait_fence = 0;
    dev->recovery.resets++;
    dev->recovery.recovered = recovered;
    dev->recovery.lost = lost;
    dev->recovery.fence_completed = done;
    dev->stats.resets++;
    (void)gmc_cand_protect(dev, NULL, NULL); /* the reset cleared the ranges too */
}

int gmc_fence_await(gmc_device *dev, uint64_t fence)
{
    if (fence == 0u)
        return GMC_OK;
    int rc = gmc_paging_wait(dev->pg, fence, dev->tdr_cycles);
    if (rc == GMC_OK) {
        reap(dev, 0);
        return GMC_OK;
    }
    if (rc == GMC_E_TIMEOUT || rc == GMC_E_FAULT) {
        if (rc == GMC_E_FAULT)
            dev->stats.faults++;
        recover(dev);
        return GMC_E_DEVICE_RESET;
    }
    return rc;
}

static int wait_all(gmc_device *dev)
{
    return gmc_fence_await(dev, gmc_paging_last_issued(dev->pg));
}

uint64_t gmc_fence_default_tdr(uint32_t caps)
{
    switch ((caps & GMC_CAPS_DMA_ENGINE_MASK) >> GMC_CAPS_DMA_ENGINE_LSB) {
    case GMC_DMA_ENGINE_COMPACT:
        return (uint64_t)DEFAULT_TDR_CYCLES * COMPACT_TDR_FACTOR;
    case GMC_DMA_ENGINE_MICRO:
        return (uint64_t)DEFAULT_TDR_CYCLES * MICRO_TDR_FACTOR;
    default:
        return DEFAULT_TDR_CYCLES;
    }
}

int gmc_fence_init(gmc_device *dev, uint32_t pbuf_bytes, uint64_t tdr_cycles)
{
    dev->tdr_cycles = tdr_cycles != 0u ? tdr_cycles : gmc_fence_default_tdr(dev->adapter.caps);
    dev->no_paging_status = GMC_E_UNSUPPORTED;
    gmc_cand_init(dev);
    if (!(dev->adapter.caps & GMC_CAPS_DMA_MASK))
        return GMC_OK; /* no paging engine: residency answers GMC_E_UNSUPPORTED */
    struct gmc_paging_config cfg;
    gmc_paging_config_default(&cfg);
    if (pbuf_bytes != 0u)
        cfg.buffer_bytes = pbuf_bytes;
    int rc = gmc_paging_init(&dev->kmd, &dev->adapter, &cfg, &dev->pg);
    if (rc == GMC_E_UNSUPPORTED || rc == GMC_E_PCI_NO_VFIO) {
        /* e.g. a backend that cannot wait, or a PCI device without VFIO:
         * no paging; paging calls answer why (GMC_E_PCI_NO_VFIO names the fix) */
        dev->pg = NULL;
        dev->no_paging_status = rc;
        return GMC_OK;
    }
    if (rc != GMC_OK)
        return rc;
    gmc_paging_set_notify(dev->pg, on_notify, dev);
    return gmc_fence_clear_gart(dev);
}

int gmc_fence_clear_gart(gmc_device *dev)
{
    /* Every aperture page starts on the dummy page (WDDM: unmapped pages
     * stay GPU-accessible), whatever VRAM held. */
    if (dev->adapter.aperture_pages == 0u)
        return GMC_OK;
    struct gmc_paging_args u = { .op = GMC_PAGING_UNMAP_APERTURE_SEGMENT };
    u.u.map.gpu_address = dev->adapter.aperture_base;
    u.u.map.pages = dev->adapter.aperture_pages;
    uint64_t f = 0;
    int rc = gmc_fence_queue(dev, &u, &f);
    return rc == GMC_OK ? gmc_fence_await(dev, f) : rc;
}

void gmc_fence_fini(gmc_device *dev)
{
    if (dev->pg == NULL)
        return;
    (void)gmc_paging_idle(dev->pg, dev->tdr_cycles);
    reap(dev, 1);
    gmc_paging_fini(dev->pg);
    dev->pg = NULL;
}

int gmc_fence_need_paging(const gmc_device *dev)
{
    if (dev->pg == NULL)
        return dev->no_paging_status;
    return gmc_check_powered(dev->power);
}

static int gmc_fence_wait_do(gmc_device *dev, uint64_t fence, uint64_t timeout_us)
{
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    if (dev->pg == NULL)
        return dev->no_paging_status;
    if (fence > gmc_paging_last_issued(dev->pg))
        return GMC_E_INVALID_ARG;
    uint64_t keep = dev->tdr_cycles;
    if (timeout_us != 0u && timeout_us < UINT64_MAX / CYCLES_PER_US)
        dev->tdr_cycles = timeout_us * CYCLES_PER_US;
    int rc = gmc_fence_await(dev, fence);
    dev->tdr_cycles = keep;
    return rc;
}

int gmc_fence_wait(gmc_device *dev, uint64_t fence, uint64_t timeout_us)
{
    int rc = gmc_fence_wait_do(dev, fence, timeout_us);
    gmc_rec_wait(dev, fence, timeout_us, rc);
    return rc;
}

uint64_t gmc_fence_completed(gmc_device *dev)
{
    return dev != NULL && dev->pg != NULL ? gmc_paging_completed(dev->pg) : 0u;
}

int gmc_device_recovery(const gmc_device *dev, struct gmc_recovery_report *out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    memset(out, 0, sizeof(*out));
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    *out = dev->recovery;
    return GMC_OK;
}

int gmc_fence_wait_all(gmc_device *dev)
{
    return dev->pg != NULL ? wait_all(dev) : GMC_OK;
}

/* The controller's counters (gmc.h). Here, beside the TDR that keeps
 * their base across a controller reset, so that the reset path reads them
 * without calling up into gmc_device.c. */
int gmc_device_hw_counters(gmc_device *dev, struct gmc_hw_counters *out)
{
    if (out != NULL)
        memset(out, 0, sizeof(*out));
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    const int rc = gmc_check_powered(dev->power);
    if (rc != GMC_OK)
        return rc;
    /* Reading a counter's LO half latches its HI half: one 64-bit value. */
    static const struct {
        uint32_t lo;
        size_t at;
    } map[] = {
        { GMC_REG_CNT_DMA_RD_VRAM_LO, offsetof(struct gmc_hw_counters, dma_rd_vram) },
        { GMC_REG_CNT_DMA_WR_VRAM_LO, offsetof(struct gmc_hw_counters, dma_wr_vram) },
        { GMC_REG_CNT_DMA_RD_SYS_LO, offsetof(struct gmc_hw_counters, dma_rd_sys) },
        { GMC_REG_CNT_DMA_WR_SYS_LO, offsetof(struct gmc_hw_counters, dma_wr_sys) },
        { GMC_REG_CNT_DMA_RD_APERTURE_LO, offsetof(struct gmc_hw_counters, dma_rd_aperture) },
        { GMC_REG_CNT_DMA_WR_APERTURE_LO, offsetof(struct gmc_hw_counters, dma_wr_aperture) },
        { GMC_REG_CNT_DMA_PACKETS_LO, offsetof(struct gmc_hw_counters, dma_packets) },
        { GMC_REG_CNT_DMA_FAULTS_LO, offsetof(struct gmc_hw_counters, dma_faults) },
        { GMC_REG_CNT_DMA_BUSY_LO, offsetof(struct gmc_hw_counters, dma_busy_cycles) },
        { GMC_REG_CNT_TLB_HIT_LO, offsetof(struct gmc_hw_counters, tlb_hits) },
        { GMC_REG_CNT_TLB_MISS_LO, offsetof(struct gmc_hw_counters, tlb_misses) },
        { GMC_REG_CNT_DUMMY_HIT_LO, offsetof(struct gmc_hw_counters, dummy_hits) },
        { GMC_REG_CNT_APERTURE_RD_LO, offsetof(struct gmc_hw_counters, aperture_rd_bytes) },
        { GMC_REG_CNT_APERTURE_WR_LO, offsetof(struct gmc_hw_counters, aperture_wr_bytes) },
    };
    struct gmc_hw_counters hw;
    memset(&hw, 0, sizeof(hw));
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        uint64_t v = 0;
        int rc = gmc_kmd_read64(&dev->kmd, map[i].lo, &v);
        if (rc != GMC_OK)
            return rc;
        uint64_t base;
        memcpy(&base, (const uint8_t *)&dev->hw_base + map[i].at, sizeof(base));
        v += base; /* since the device was opened, across controller resets */
        memcpy((uint8_t *)&hw + map[i].at, &v, sizeof(v));
    }
    hw.valid = 1;
    dev->stats.hw = hw;
    if (out != NULL)
        *out = hw;
    return GMC_OK;
}
