/*
 * gmc_vobj.c - the lookups the whole manager shares: a client's handle to
 * its reference, and whether a client may lock an allocation (the lock
 * rules of docs/residency.md). See gmc_vobj.h.
 */
#include <stdint.h>

#include "gmc.h"
#include "gmc_handle.h"
#include "gmc_status.h"
#include "gmc_vobj.h"

#define NO_CPU_FLAGS (GMC_ALLOC_PROTECTED | GMC_ALLOC_HARDWARE_PROTECTED)

struct gmc_vref *gmc_vidmm_ref(const gmc_client *c, gmc_handle h)
{
    struct gmc_vref *r = gmc_htab_get(&c->dev->handles, h, GMC_HK_ALLOC);
    return r != NULL && r->client == c ? r : NULL;
}

int gmc_vidmm_lock_check(const gmc_client *c, const struct gmc_valloc *a, uint32_t lock_flags)
{
    if (lock_flags & ~GMC_LOCK_FLAGS_MASK)
        return GMC_E_INVALID_ARG;
    if ((lock_flags & GMC_LOCK_READ_ONLY) && (lock_flags & (GMC_LOCK_WRITE_ONLY | GMC_LOCK_DISCARD)))
        return GMC_E_LOCK_FLAGS;
    /* CPU-accessible: CpuVisible, or CpuVisibleOnDemand (the same access,
     * the address given at lock time), or a primary, which is implicitly
     * accessible to the CPU (with UseAlternateVA through the swizzling
     * range set up at creation). docs/residency.md, "CPU access". */
    const uint32_t cpu = GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_CPU_VISIBLE_ON_DEMAND;
    if (!(a->desc.flags & cpu) && !(a->desc.info2_flags & GMC_INFO2_PRIMARY))
        return GMC_E_NOT_CPU_VISIBLE;
    if (a->desc.flags & NO_CPU_FLAGS)
        return GMC_E_PROTECTED;
    if ((a->desc.kmt_flags & GMC_KMT_CREATE_SHARED) && c->serial != a->creator)
        return GMC_E_NOT_CREATOR;
    if ((a->desc.kmt_flags & GMC_KMT_READ_ONLY) && !(lock_flags & GMC_LOCK_READ_ONLY))
        return GMC_E_READ_ONLY;
    return GMC_OK;
}
