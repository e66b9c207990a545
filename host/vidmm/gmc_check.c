/*
 * gmc_check.c - the CPU-access, sharing and power rules of gmc's calls as
 * pure predicates (see gmc_check.h). gmc_lock.c, gmc_vobj.c, gmc_vidmm.c
 * and gmc_power.c apply them; the gmc command's trace checker asks them.
 */
#include <stdint.h>

#include "gmc_check.h"
#include "gmc_status.h"

int gmc_check_lock(const struct gmc_alloc_desc *d, uint32_t lock_flags, int by_creator)
{
    if (d == NULL)
        return GMC_E_NULL_POINTER;
    if (lock_flags & ~GMC_LOCK_FLAGS_MASK)
        return GMC_E_INVALID_ARG;
    if ((lock_flags & GMC_LOCK_READ_ONLY) && (lock_flags & (GMC_LOCK_WRITE_ONLY | GMC_LOCK_DISCARD)))
        return GMC_E_LOCK_FLAGS;
    /* CPU-accessible: CpuVisible, or CpuVisibleOnDemand (the same access,
     * the address given at lock time), or a primary, which is implicitly
     * accessible to the CPU (with UseAlternateVA through the swizzling
     * range set up at creation). docs/residency.md, "CPU access". */
    const uint32_t cpu = GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_CPU_VISIBLE_ON_DEMAND;
    if (!(d->flags & cpu) && !(d->info2_flags & GMC_INFO2_PRIMARY))
        return GMC_E_NOT_CPU_VISIBLE;
    if (d->flags & (GMC_ALLOC_PROTECTED | GMC_ALLOC_HARDWARE_PROTECTED))
        return GMC_E_PROTECTED;
    if ((d->kmt_flags & GMC_KMT_CREATE_SHARED) && !by_creator)
        return GMC_E_NOT_CREATOR;
    if ((d->kmt_flags & GMC_KMT_READ_ONLY) && !(lock_flags & GMC_LOCK_READ_ONLY))
        return GMC_E_READ_ONLY;
    return GMC_OK;
}

int gmc_check_locked_access(uint32_t lock_flags, int writes)
{
    if (writes && (lock_flags & GMC_LOCK_READ_ONLY))
        return GMC_E_PERMISSION;
    if (!writes && (lock_flags & GMC_LOCK_WRITE_ONLY))
        return GMC_E_PERMISSION;
    return GMC_OK;
}

enum gmc_share_kind gmc_check_share_kind(const struct gmc_alloc_desc *d)
{
    if (d == NULL || !(d->kmt_flags & GMC_KMT_CREATE_SHARED))
        return GMC_SHARE_NONE;
    return (d->kmt_flags & GMC_KMT_NT_SECURITY_SHARING) ? GMC_SHARE_NT : GMC_SHARE_GLOBAL;
}

int gmc_check_power_change(enum gmc_power_state from, enum gmc_power_state to, unsigned locked)
{
    if (to == GMC_POWER_D0)
        return from != GMC_POWER_D0 ? GMC_OK : GMC_E_POWER_STATE;
    if (to != GMC_POWER_STANDBY && to != GMC_POWER_HIBERNATE)
        return GMC_E_INVALID_ARG;
    if (from != GMC_POWER_D0)
        return GMC_E_POWER_STATE;
    return locked != 0u ? GMC_E_LOCKED : GMC_OK;
}

int gmc_check_powered(enum gmc_power_state s)
{
    return s == GMC_POWER_D0 ? GMC_OK : GMC_E_POWER_STATE;
}

uint32_t gmc_check_priority(const struct gmc_alloc_desc *d)
{
    return (d->info2_flags & GMC_INFO2_OVERRIDE_PRIORITY) ? d->umd_priority : d->priority;
}

int gmc_check_existing_sys_mem(const struct gmc_alloc_desc *d)
{
    return (d->flags & (GMC_ALLOC_EXISTING_SYS_MEM | GMC_ALLOC_EXISTING_KERNEL_SYS_MEM)) != 0u ||
           (d->kmt_flags & GMC_KMT_EXISTING_SYS_MEM) != 0u;
}

int gmc_check_flip_pin(uint32_t direct_flip, int pinned, enum gmc_power_state s)
{
    if (direct_flip == 0u)
        return GMC_E_NOT_DIRECT_FLIP;
    return pinned ? GMC_OK : gmc_check_powered(s);
}

int gmc_check_flip_unpin(int pinned)
{
    return pinned ? GMC_OK : GMC_E_BAD_STATE;
}
