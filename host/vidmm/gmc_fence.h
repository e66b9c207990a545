/*
 * gmc_fence.h - paging fences and the TDR path (gmc_fence.c; private to
 * the host library; docs/residency.md). Below placement (gmc_resid.c) and
 * submissions (gmc_submit.c), above the candidate bookkeeping
 * (gmc_cand.c).
 */
#ifndef GMC_FENCE_H
#define GMC_FENCE_H

#include <stdint.h>

#include "gmc_paging.h"
#include "gmc_vobj.h"

/* What an allocation's last paging operation did (its pend): what a
 * recovery must undo when that operation's fence never completes. */
enum gmc_pend {
    GMC_PEND_NONE = 0,
    GMC_PEND_FILL,      /* first page-in fill */
    GMC_PEND_PAGE_IN,   /* system copy -> placed copy */
    GMC_PEND_MAP,       /* aperture placement mapped */
    GMC_PEND_SAVE_KEEP, /* placed copy -> system copy, placement kept */
    GMC_PEND_EVICT,     /* placed copy -> system copy, placement released */
    GMC_PEND_MOVE       /* placed copy -> another placement */
};

/* The device's paging queue (none without a DMA engine: paging calls then
 * answer dev->no_paging_status), the TDR timeout (0: the default for the
 * engine), the candidate bookkeeping, and every aperture page pointed at
 * the dummy page. */
int gmc_fence_init(gmc_device *dev, uint32_t pbuf_bytes, uint64_t tdr_cycles);
/* The default TDR timeout in device cycles for a device's CAPS: 4,000,000
 * for the full engine (or none), 32 times that for the compact engine,
 * 128 times for the micro-sequenced one (slower engines). */
uint64_t gmc_fence_default_tdr(uint32_t caps);
/* Point every aperture page at the dummy page, and wait. */
int gmc_fence_clear_gart(gmc_device *dev);
void gmc_fence_fini(gmc_device *dev);
/* GMC_OK when paging is possible now, else why not (no engine, power). */
int gmc_fence_need_paging(const gmc_device *dev);
/* Queue one paging operation (counting it). */
int gmc_fence_queue(gmc_device *dev, struct gmc_paging_args *args, uint64_t *fence);
/* Wait for a fence; a timeout or a fault runs the TDR path and answers
 * GMC_E_DEVICE_RESET. */
int gmc_fence_await(gmc_device *dev, uint64_t fence);
/* Wait for everything queued (TDR on timeout). */
int gmc_fence_wait_all(gmc_device *dev);
/* Free a system buffer once the engine is done with it. */
void gmc_fence_defer_sysbuf(gmc_device *dev, struct gmc_sysbuf *b);

#endif /* GMC_FENCE_H */
