/*
 * gmc_flip.c - DirectFlip scan-out pinning (DXGK_SEGMENTFLAGS.DirectFlip,
 * seed 003: "the driver must ensure that Direct Flip allocations can be
 * pinned and scanned out from this segment"; docs/residency.md
 * "DirectFlip").
 *
 * DOC: Overview
 *
 * gmc_alloc_pin_direct_flip() makes an allocation a DirectFlip allocation
 * for the display: placed in a DirectFlip segment of its supported set
 * (moved there, evicting others if needed), paged in, and pinned: from
 * then on it is never an eviction victim and never moves (no eviction, no
 * move for a lock or a submission, no Discard rename) until
 * gmc_alloc_unpin_direct_flip(). An allocation whose supported set has no
 * DirectFlip segment is refused with GMC_E_NOT_DIRECT_FLIP.
 */
#include <stdint.h>

#include "gmc.h"
#include "gmc_cand.h"
#include "gmc_check.h"
#include "gmc_paging.h"
#include "gmc_resid.h"
#include "gmc_status.h"
#include "gmc_vobj.h"
#include "gmc_record.h"

/* Pinned without DirectFlip: primaries, overlays and captures. */
static int pinned_by_kind(const struct gmc_valloc *a)
{
    return (a->desc.info2_flags & GMC_INFO2_PRIMARY) ||
           (a->desc.flags & (GMC_ALLOC_OVERLAY | GMC_ALLOC_CAPTURE));
}

static uint32_t direct_flip_mask(const gmc_device *dev)
{
    uint32_t m = 0;
    for (unsigned i = 0; i < dev->nsegs; i++)
        if (dev->seg[i].desc.flags & GMC_SEGFLAGS_DIRECT_FLIP_MASK)
            m |= GMC_SEGMENT_BIT(i + 1u);
    return m;
}

/* The client's allocation behind h. */
static int lookup(gmc_client *c, gmc_handle h, struct gmc_valloc **out)
{
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    struct gmc_vref *r = gmc_vidmm_ref(c, h);
    if (r == NULL)
        return GMC_E_BAD_HANDLE;
    *out = r->alloc;
    return GMC_OK;
}

static int gmc_alloc_pin_direct_flip_do(gmc_client *c, gmc_handle h)
{
    struct gmc_valloc *a = NULL;
    int rc = lookup(c, h, &a);
    if (rc != GMC_OK)
        return rc;
    gmc_device *dev = c->dev;
    uint32_t mask = direct_flip_mask(dev) & a->desc.supported_segments;
    if (mask != 0u && !a->flip_pinned && dev->pg == NULL)
        return dev->no_paging_status;
    rc = gmc_check_flip_pin(mask, a->flip_pinned, (enum gmc_power_state)dev->power);
    if (rc != GMC_OK || a->flip_pinned)
        return rc;
    if (a->node.mgr != NULL && !(mask & GMC_SEGMENT_BIT(a->seg + 1u))) {
        /* Placed elsewhere: it moves, unless it cannot. */
        if (a->state & GMC_ALLOC_STATE_PINNED)
            return GMC_E_PINNED;
        if (a->locker != NULL)
            return GMC_E_LOCKED;
        rc = gmc_resid_evict_one(dev, a);
        if (rc != GMC_OK)
            return rc;
    }
    if (a->node.mgr == NULL) {
        a->resident++; /* not a victim of its own placement */
        rc = gmc_resid_place(dev, a, mask, 1, NULL);
        a->resident--;
        gmc_cand_sync(dev, a);
        if (rc != GMC_OK)
            return rc;
    }
    rc = gmc_resid_page_in(dev, a);
    if (rc == GMC_OK)
        rc = gmc_paging_flush(dev->pg);
    if (rc != GMC_OK)
        return rc;
    a->flip_pinned = 1;
    a->state |= GMC_ALLOC_STATE_PINNED;
    gmc_cand_sync(dev, a);
    return GMC_OK;
}

int gmc_alloc_pin_direct_flip(gmc_client *c, gmc_handle h)
{
    int rc = gmc_alloc_pin_direct_flip_do(c, h);
    gmc_rec_flip(c, h, 1, rc);
    return rc;
}

static int gmc_alloc_unpin_direct_flip_do(gmc_client *c, gmc_handle h)
{
    struct gmc_valloc *a = NULL;
    int rc = lookup(c, h, &a);
    if (rc != GMC_OK)
        return rc;
    rc = gmc_check_flip_unpin(a->flip_pinned);
    if (rc != GMC_OK)
        return rc;
    a->flip_pinned = 0;
    if (!pinned_by_kind(a))
        a->state &= ~(uint32_t)GMC_ALLOC_STATE_PINNED;
    gmc_cand_sync(c->dev, a);
    return GMC_OK;
}

int gmc_alloc_unpin_direct_flip(gmc_client *c, gmc_handle h)
{
    int rc = gmc_alloc_unpin_direct_flip_do(c, h);
    gmc_rec_flip(c, h, 0, rc);
    return rc;
}
