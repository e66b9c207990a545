/*
 * gmc_power.c - standby, hibernate and resume, following each segment's
 * DXGK_SEGMENTFLAGS (docs/residency.md, "Power transitions").
 *
 * DOC: Overview
 *
 * The truth table of the segment-flags seed, for a transition to state S:
 *
 *   S = standby:   a segment is purged unless PreservedDuringStandby.
 *   S = hibernate: a segment is purged unless PreservedDuringHibernate
 *                  (which implies standby). A PartiallyPreservedDuringHibernate
 *                  segment keeps its system-memory part: the allocations
 *                  that end at or below its SystemMemoryEndAddress
 *                  (SEG_SYSMEM_END) survive, the ones ending above it are
 *                  purged, and only [SystemMemoryEndAddress, end) loses
 *                  its content.
 *   Hybrid sleep acts as hibernate.
 *
 * Before powering down, every allocation with content whose current copy
 * lies in a purged memory segment is saved to its system copy (a clean
 * one already is). Content that cannot be saved is reported lost: Protected
 * and HardwareProtected content never leaves VRAM, and a save whose
 * paging fails is lost too. A purged aperture loses its page table (which
 * lives in VRAM); its allocations' content is in system memory anyway, and
 * resume maps them again. On resume the controller comes out of reset, the
 * paging engine is restarted, and every saved allocation is copied back to
 * the place it had, so placements do not change across a transition.
 */
#include <stdint.h>
#include <string.h>

#include "gmc.h"
#include "gmc_check.h"
#include "gmc_kmd.h"
#include "gmc_paging.h"
#include "gmc_status.h"
#include "gmc_cand.h"
#include "gmc_fence.h"
#include "gmc_resid.h"
#include "gmc_vobj.h"
#include "gmc_record.h"


static int purged(const struct gmc_vseg *s, enum gmc_power_state to)
{
    uint32_t f = s->desc.flags;
    if (to == GMC_POWER_STANDBY)
        return !(f & GMC_SEGFLAGS_PRESERVED_DURING_STANDBY_MASK);
    return !(f & GMC_SEGFLAGS_PRESERVED_DURING_HIBERNATE_MASK);
}

/* A partially preserved segment in hibernate: the part above
 * SystemMemoryEndAddress is purged, the system-memory part below is kept. */
static int partial(const struct gmc_vseg *s, enum gmc_power_state to)
{
    return to == GMC_POWER_HIBERNATE &&
           (s->desc.flags & GMC_SEGFLAGS_PARTIALLY_PRESERVED_DURING_HIBERNATE_MASK) != 0u;
}

/* Where the kept system-memory part of a partial segment ends (its base
 * when the segment gives no SystemMemoryEndAddress: nothing is kept). */
static uint64_t sysmem_part_end(const struct gmc_vseg *s)
{
    return s->desc.sysmem_end != 0u ? s->desc.sysmem_end : s->desc.base;
}

/* Does the transition purge this placed allocation's copy? */
static int alloc_purged(const struct gmc_vseg *s, const struct gmc_valloc *a, enum gmc_power_state to)
{
    if (!purged(s, to))
        return 0;
    if (!partial(s, to))
        return 1;
    return a->node.start + a->node.size > sysmem_part_end(s);
}

static void mark_lost(gmc_device *dev, struct gmc_valloc *a)
{
    gmc_cand_unplace(dev, a);
    a->sys_valid = 0;
    a->state &= ~(uint32_t)GMC_ALLOC_STATE_HAS_CONTENT;
    a->state |= GMC_ALLOC_STATE_LOST;
}

/* Before power-down to `to`: the content of every allocation whose placed
 * copy `to` purges is saved to system memory (or reported lost: a
 * hardware-protected one, one without system memory, one a device reset
 * took). */
static int save_content(gmc_device *dev, enum gmc_power_state to, struct gmc_power_report *r)
{
    uint64_t lost_before = dev->recovery.lost;
    for (struct gmc_valloc *a = dev->allocs; a != NULL; a = a->dnext) {
        if (a->node.mgr == NULL || !(a->state & GMC_ALLOC_STATE_HAS_CONTENT))
            continue;
        struct gmc_vseg *s = &dev->seg[a->seg];
        if (gmc_vseg_is_aperture(s) || !alloc_purged(s, a, to)) {
            r->allocations_preserved++;
            continue;
        }
        if (!a->gpu_valid || a->sys_valid) {
            r->allocations_saved++; /* the system copy already holds it */
            continue;
        }
        if (a->desc.flags & GMC_ALLOC_HARDWARE_PROTECTED) {
            mark_lost(dev, a);
            r->allocations_lost++;
            continue;
        }
        int rc = gmc_resid_save(dev, a);
        if (rc == GMC_E_NO_MEMORY) {
            mark_lost(dev, a);
            r->allocations_lost++;
            continue;
        }
        if (rc != GMC_OK)
            return rc;
        r->allocations_saved++;
        r->bytes_saved += a->sz.size < a->sys.size ? a->sz.size : a->sys.size;
    }
    int rc = gmc_fence_wait_all(dev);
    if (rc == GMC_E_DEVICE_RESET) {
        /* Saves that did not complete were reported lost by the recovery. */
        uint64_t lost = dev->recovery.lost - lost_before;
        r->allocations_lost += lost;
        r->allocations_saved -= lost < r->allocations_saved ? lost : r->allocations_saved;
    } else if (rc != GMC_OK) {
        return rc;
    }
    return GMC_OK;
}

/* The ranges `to` purges (base, size pairs into ranges, *n of them):
 * memory segments, and the page table with a purged aperture
 * (*ap_purged). */
static void purged_ranges(gmc_device *dev, enum gmc_power_state to, uint64_t *ranges, unsigned *n,
                          int *ap_purged)
{
    *n = 0;
    *ap_purged = 0;
    for (unsigned i = 0; i < dev->nsegs; i++) {
        struct gmc_vseg *s = &dev->seg[i];
        if (!purged(s, to))
            continue;
        if (gmc_vseg_is_aperture(s)) {
            *ap_purged = 1;
            continue;
        }
        uint64_t lo = s->desc.base, end = s->desc.base + s->desc.size;
        if (partial(s, to))
            lo = sysmem_part_end(s); /* the segment rules keep it in [base, end] */
        if (lo == end)
            continue;
        ranges[2 * *n] = lo;
        ranges[2 * *n + 1] = end - lo;
        (*n)++;
    }
    if (*ap_purged) {
        uint64_t ptb = 0;
        if (gmc_paging_pt_range(dev->pg, &ptb, &ranges[2 * *n + 1]) == GMC_OK) {
            ranges[2 * *n] = ptb;
            (*n)++;
        }
    }
}

static int gmc_device_power_do(gmc_device *dev, enum gmc_power_state to, struct gmc_power_report *rep)
{
    if (rep != NULL)
        memset(rep, 0, sizeof(*rep));
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    if (to != GMC_POWER_STANDBY && to != GMC_POWER_HIBERNATE)
        return GMC_E_INVALID_ARG;
    int rc = gmc_check_power_change(dev->power, to, 0u);
    if (rc != GMC_OK)
        return rc;
    if (dev->pg == NULL || dev->kmd.ddi->set_power == NULL)
        return GMC_E_UNSUPPORTED;
    unsigned locked = 0;
    for (struct gmc_valloc *a = dev->allocs; a != NULL; a = a->dnext)
        locked += a->locker != NULL;
    rc = gmc_check_power_change(dev->power, to, locked);
    if (rc != GMC_OK)
        return rc; /* GMC_E_LOCKED: a CPU mapping cannot survive power-down */
    rc = gmc_fence_wait_all(dev);
    if (rc != GMC_OK)
        return rc;
    struct gmc_power_report r;
    memset(&r, 0, sizeof(r));
    rc = save_content(dev, to, &r);
    if (rc != GMC_OK)
        return rc;
    uint64_t ranges[2 * (GMC_MAX_SEGMENTS + 1)];
    unsigned n;
    int ap_purged;
    purged_ranges(dev, to, ranges, &n, &ap_purged);
    rc = dev->kmd.ddi->set_power(&dev->kmd, (int)to, ranges, n);
    if (rc != GMC_OK)
        return rc;
    for (struct gmc_valloc *a = dev->allocs; a != NULL; a = a->dnext) {
        if (a->node.mgr == NULL)
            continue;
        struct gmc_vseg *s = &dev->seg[a->seg];
        int gone = gmc_vseg_is_aperture(s) ? ap_purged : alloc_purged(s, a, to);
        if (gone && a->gpu_valid) {
            a->gpu_valid = 0; /* the placed copy (or mapping) is gone; the system copy holds it */
            a->power_purged = 1;
            gmc_cand_sync(dev, a);
        }
    }
    dev->power = to;
    dev->gart_purged = ap_purged;
    if (rep != NULL)
        *rep = r;
    return GMC_OK;
}

int gmc_device_power(gmc_device *dev, enum gmc_power_state to, struct gmc_power_report *rep)
{
    int rc = gmc_device_power_do(dev, to, rep);
    gmc_rec_power(dev, (int)to, rc);
    return rc;
}

static int gmc_device_resume_do(gmc_device *dev, struct gmc_power_report *rep)
{
    if (rep != NULL)
        memset(rep, 0, sizeof(*rep));
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    int rc = gmc_check_power_change(dev->power, GMC_POWER_D0, 0u);
    if (rc != GMC_OK)
        return rc;
    rc = dev->kmd.ddi->set_power(&dev->kmd, GMC_POWER_D0, NULL, 0);
    if (rc == GMC_OK)
        rc = gmc_paging_restart(dev->pg);
    if (rc != GMC_OK)
        return rc;
    dev->power = GMC_POWER_D0;
    if (dev->gart_purged) {
        rc = gmc_fence_clear_gart(dev);
        if (rc != GMC_OK)
            return rc;
        dev->gart_purged = 0;
    }
    struct gmc_power_report r;
    memset(&r, 0, sizeof(r));
    for (struct gmc_valloc *a = dev->allocs; a != NULL; a = a->dnext) {
        int was_purged = a->power_purged;
        a->power_purged = 0;
        /* Only what the power-down took is restored; content-less
         * allocations are filled on their first page-in. */
        if (!was_purged || a->node.mgr == NULL || a->gpu_valid ||
            !(a->state & GMC_ALLOC_STATE_HAS_CONTENT))
            continue;
        rc = gmc_resid_page_in(dev, a);
        if (rc != GMC_OK)
            return rc;
        r.allocations_saved++;
        if (!gmc_vseg_is_aperture(&dev->seg[a->seg]))
            r.bytes_restored += a->sz.size;
    }
    rc = gmc_fence_wait_all(dev);
    if (rc == GMC_OK)
        rc = gmc_cand_protect(dev, NULL, NULL); /* the registers did not survive */
    if (rep != NULL)
        *rep = r;
    return rc;
}

int gmc_device_resume(gmc_device *dev, struct gmc_power_report *rep)
{
    int rc = gmc_device_resume_do(dev, rep);
    gmc_rec_power(dev, GMC_POWER_D0, rc);
    return rc;
}
