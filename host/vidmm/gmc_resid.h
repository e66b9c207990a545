/*
 * gmc_resid.h - residency (gmc_resid.c): placement under pressure,
 * page-in, eviction and the system copy (private to the host library;
 * docs/residency.md). Fences and the TDR path are gmc_fence.h's,
 * submissions gmc_submit.c's.
 */
#ifndef GMC_RESID_H
#define GMC_RESID_H

#include <stdint.h>

#include "gmc_paging.h"
#include "gmc_vobj.h"

/* Bit mask of the aperture segments. */
uint32_t gmc_resid_aperture_mask(const gmc_device *dev);
/* A new allocation: link it, keep_sys backing, eager placement. */
int gmc_resid_create(gmc_device *dev, struct gmc_valloc *a);
/* The last handle went: wait for the GPU, release placement and copies. */
void gmc_resid_destroy(gmc_device *dev, struct gmc_valloc *a);
/* Place `a` (evicting unreferenced allocations when evict is set) in a
 * segment whose bit is in `mask` (0: the allocation's supported set). */
int gmc_resid_place(gmc_device *dev, struct gmc_valloc *a, uint32_t mask, int evict,
                    uint64_t *bytes_needed);
/* Before moving a into the segments of mask for dev->bud_client (when a
 * call under budgets set it): GMC_E_OVER_BUDGET when none of them has room
 * in its budgets (the refusal counted), so nothing moves. */
int gmc_resid_budget_precheck(gmc_device *dev, struct gmc_valloc *a, uint32_t mask);
/* Place (evicting) when not placed, and page in: GPU-accessible. */
int gmc_resid_bring_in(gmc_device *dev, struct gmc_valloc *a, uint64_t *needed);
/* Make the placed copy hold the content (fill or copy in); queue only. */
int gmc_resid_page_in(gmc_device *dev, struct gmc_valloc *a);
/* Save the content to the system copy (if needed) and release the
 * placement. */
int gmc_resid_evict_one(gmc_device *dev, struct gmc_valloc *a);
/* Copy the placed content to the system copy and keep the placement. */
int gmc_resid_save(gmc_device *dev, struct gmc_valloc *a);
int gmc_resid_ensure_sys(gmc_device *dev, struct gmc_valloc *a);
/* Discard renaming of a placed allocation: move it to a free range of the
 * segments in mask (no eviction) and hold its old range until the GPU work
 * queued so far completes. GMC_E_NO_SPACE when no range is free (nothing
 * changes). The content of the new range is undefined. */
int gmc_resid_rename_placement(gmc_device *dev, struct gmc_valloc *a, uint32_t mask);
/* Bytes the client sees: the placed size, or the page-rounded Size. */
uint64_t gmc_resid_user_size(const struct gmc_valloc *a);
/* Establish first content in the system copy: zeros for Zeroed, else
 * GMC_FILL_UNINITIALISED (the first page-in of a system-held allocation). */
void gmc_resid_fill_sys(gmc_device *dev, struct gmc_valloc *a);

#endif /* GMC_RESID_H */
