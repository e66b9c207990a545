/*
 * gmc_vobj.c - the lookups the whole manager shares: a client's handle to
 * its reference, and whether a client may lock an allocation (the lock
 * rules of docs/residency.md, in gmc_check.c). See gmc_vobj.h.
 */
#include <stdint.h>

#include "gmc.h"
#include "gmc_check.h"
#include "gmc_handle.h"
#include "gmc_status.h"
#include "gmc_vobj.h"

struct gmc_vref *gmc_vidmm_ref(const gmc_client *c, gmc_handle h)
{
    struct gmc_vref *r = gmc_htab_get(&c->dev->handles, h, GMC_HK_ALLOC);
    return r != NULL && r->client == c ? r : NULL;
}

int gmc_vidmm_lock_check(const gmc_client *c, const struct gmc_valloc *a, uint32_t lock_flags)
{
    return gmc_check_lock(&a->desc, lock_flags, c->serial == a->creator);
}
