/*
 * gmc_resid.h - residency (gmc_resid.c): placement under pressure,
 * page-in, eviction, submissions, fences and the TDR path (private to the
 * host library; docs/residency.md).
 */
#ifndef GMC_RESID_H
#define GMC_RESID_H

#include <stdint.h>

#include "gmc_paging.h"
#include "gmc_vobj.h"

int gmc_resid_init(gmc_device *dev, uint32_t pbuf_bytes, uint64_t tdr_cycles);
/* Point every aperture page at the dummy page, and wait. */
int gmc_resid_clear_gart(gmc_device *dev);
/* Wait for everything queued (TDR on timeout). */
int gmc_resid_wait_all(gmc_device *dev);
/* Bit mask of the aperture segments. */
uint32_t gmc_resid_aperture_mask(const gmc_device *dev);
void gmc_resid_fini(gmc_device *dev);
/* A new allocation: link it, keep_sys backing, eager placement. */
int gmc_resid_create(gmc_device *dev, struct gmc_valloc *a);
/* The last handle went: wait for the GPU, release placement and copies. */
void gmc_resid_destroy(gmc_device *dev, struct gmc_valloc *a);
/* Place `a` (evicting unreferenced allocations when evict is set) in a
 * segment whose bit is in `mask` (0: the allocation's supported set). */
int gmc_resid_place(gmc_device *dev, struct gmc_valloc *a, uint32_t mask, int evict,
                    uint64_t *bytes_needed);
/* Make the placed copy hold the content (fill or copy in); queue only. */
int gmc_resid_page_in(gmc_device *dev, struct gmc_valloc *a);
/* Save the content to the system copy (if needed) and release the
 * placement. */
int gmc_resid_evict_one(gmc_device *dev, struct gmc_valloc *a);
/* Copy the placed content to the system copy and keep the placement. */
int gmc_resid_save(gmc_device *dev, struct gmc_valloc *a);
/* Wait for a fence; a timeout or a fault runs the TDR path and answers
 * GMC_E_DEVICE_RESET. */
int gmc_resid_wait(gmc_device *dev, uint64_t fence);
/* Queue one paging operation (counting it). */
int gmc_resid_queue(gmc_device *dev, struct gmc_paging_args *args, uint64_t *fence);
int gmc_resid_ensure_sys(gmc_device *dev, struct gmc_valloc *a);
/* Discard renaming of a placed allocation: move it to a free range of the
 * segments in mask (no eviction) and hold its old range until the GPU work
 * queued so far completes. GMC_E_NO_SPACE when no range is free (nothing
 * changes). The content of the new range is undefined. */
int gmc_resid_rename_placement(gmc_device *dev, struct gmc_valloc *a, uint32_t mask);
/* Free a system buffer once the engine is done with it. */
void gmc_resid_defer_sysbuf(gmc_device *dev, struct gmc_sysbuf *b);
/* Bytes the client sees: the placed size, or the page-rounded Size. */
uint64_t gmc_resid_user_size(const struct gmc_valloc *a);
/* Establish first content in the system copy: zeros for Zeroed, else
 * GMC_FILL_UNINITIALISED (the first page-in of a system-held allocation). */
void gmc_resid_fill_sys(gmc_device *dev, struct gmc_valloc *a);

#endif /* GMC_RESID_H */
