/*
 * gmc_cand.h - residency bookkeeping (gmc_cand.c): what is placed where,
 * each segment's eviction candidates and hot set kept in policy order,
 * the device's list of allocations, and the protected VRAM ranges
 * (private to the host library; docs/residency.md, "Candidate
 * structures").
 *
 * Every change to what makes an allocation an eviction candidate (placed,
 * residency references, lock, pin) or to its place in the victim order
 * (priority, last use, hot set) goes through here, so the trees always
 * hold exactly the candidates, ordered as gmc_victim_cmp() orders them.
 */
#ifndef GMC_CAND_H
#define GMC_CAND_H

#include <stdint.h>

#include "gmc_vobj.h"

void gmc_cand_init(gmc_device *dev);
/* Put a where it belongs in its segment's trees after a change to its
 * placement, residency references, lock, pin, priority, use or heat.
 * O(log n); nothing when nothing changed. */
void gmc_cand_sync(gmc_device *dev, struct gmc_valloc *a);
/* A use: the device's LRU tick. */
void gmc_cand_touch(gmc_device *dev, struct gmc_valloc *a);
/* The first eviction candidate of segment seg in victim order, and the
 * next one (NULL at the end). Each step counts in dev->cand_visits. */
struct gmc_valloc *gmc_cand_first(gmc_device *dev, unsigned seg);
struct gmc_valloc *gmc_cand_next(gmc_device *dev, const struct gmc_valloc *a);

/* a now holds the placement pl (its node already in the segment). */
void gmc_cand_placed(gmc_device *dev, struct gmc_valloc *a, const struct gmc_placement *pl);
/* Release a's placement (nothing when not placed). */
void gmc_cand_unplace(gmc_device *dev, struct gmc_valloc *a);

/* Hot set (gmc_victim.h). Only placed allocations are hot;
 * dev->hot_bytes[seg] sums their placed sizes. */
void gmc_cand_set_hot(gmc_device *dev, struct gmc_valloc *a, int hot);
/* Placed without evicting: hot while the segment's hot set has room. */
void gmc_cand_heat_placed(gmc_device *dev, struct gmc_valloc *a);
/* a (placed size n there) needs room in segment seg: whether it joins the
 * hot set once placed; displaced members leave the set now. */
int gmc_cand_admit(gmc_device *dev, const struct gmc_valloc *a, unsigned seg, uint64_t n);

/* The device's allocations: link a new one, unlink one that goes. */
void gmc_cand_link(gmc_device *dev, struct gmc_valloc *a);
void gmc_cand_unlink(gmc_device *dev, struct gmc_valloc *a);
/* The allocation with this serial among those with residency
 * notification, or NULL (destroyed since). */
struct gmc_valloc *gmc_cand_find_notified(gmc_device *dev, uint64_t serial);

/* Protected or HardwareProtected. */
int gmc_cand_is_protected(const struct gmc_valloc *a);
/* Program the protected ranges over the resident protected allocations,
 * plus add, minus skip (gmc_cand.c). */
int gmc_cand_protect(gmc_device *dev, const struct gmc_valloc *add, const struct gmc_valloc *skip);

#endif /* GMC_CAND_H */
