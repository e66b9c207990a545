/*
 * gmc_lock.c - CPU locks: pfnLockCb / pfnUnlockCb, and CPU access through
 * a lock's mapping.
 *
 * DOC: Overview
 *
 * A lock maps one of the allocation's two copies (docs/residency.md):
 *   - the system copy, for allocations that keep one (PermanentSysMem,
 *     ExistingSysMem, ExistingKernelSysMem) and for allocations placed in
 *     an aperture segment (whose content lives in system memory);
 *   - otherwise the BAR1 window onto CPU-visible VRAM: the allocation is
 *     paged into a CPU-reachable memory segment first (moved there if it
 *     sits elsewhere, unless DonotEvict).
 * The mapping does not move while the lock is held: locked allocations are
 * never eviction victims. Before the CPU sees the bytes, the lock waits
 * for the allocation's paging and for the GPU work that uses it
 * (DonotWait: GMC_E_STILL_DRAWING instead; Discard: rename, so the CPU
 * gets fresh memory and the GPU keeps the old until it is done).
 * Unlocking a written system copy of an allocation that also has a VRAM
 * copy updates the VRAM copy through a paging operation.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmc.h"
#include "gmc_budget.h"
#include "gmc_check.h"
#include "gmc_kmd.h"
#include "gmc_paging.h"
#include "gmc_status.h"
#include "gmc_cache.h"
#include "gmc_cand.h"
#include "gmc_lock.h"
#include "gmc_fence.h"
#include "gmc_resid.h"
#include "gmc_vobj.h"
#include "gmc_record.h"

static int is_aperture(const gmc_device *dev, const struct gmc_valloc *a)
{
    return a->node.mgr != NULL && gmc_vseg_is_aperture(&dev->seg[a->seg]);
}

static uint32_t cpu_mask(const gmc_device *dev, const struct gmc_valloc *a)
{
    uint32_t m = 0;
    for (unsigned i = 0; i < dev->nsegs; i++)
        if (gmc_kmd_cpu_reachable(&dev->seg[i].desc))
            m |= GMC_SEGMENT_BIT(i + 1u);
    return m & a->desc.supported_segments;
}

/* A Swizzled allocation the CPU reaches in VRAM through a swizzling range:
 * a primary created with UseAlternateVA gets one at creation (seed 000). */
static int swizzling_range(const struct gmc_valloc *a)
{
    return (a->desc.flags & GMC_ALLOC_SWIZZLED) && (a->desc.flags & GMC_ALLOC_USE_ALTERNATE_VA) &&
           (a->desc.info2_flags & GMC_INFO2_PRIMARY);
}

/* Whether a lock maps the system copy: a kept one, an aperture placement,
 * a Swizzled allocation without a swizzling range (VRAM holds the swizzled
 * layout; the system copy is the linear view), or an allocation no
 * CPU-visible memory segment can take but an aperture can (its content is
 * reached through the system copy). */
static int sys_mapped(const gmc_device *dev, const struct gmc_valloc *a)
{
    if (a->keep_sys || is_aperture(dev, a))
        return 1;
    if ((a->desc.flags & GMC_ALLOC_SWIZZLED) && !swizzling_range(a))
        return 1;
    return cpu_mask(dev, a) == 0u && (a->desc.supported_segments & gmc_resid_aperture_mask(dev));
}

/* Discard while busy: fresh memory for the CPU, the old stays with the GPU. */
static int rename_alloc(gmc_device *dev, struct gmc_valloc *a, int sys_map)
{
    int rc;
    if (sys_map) {
        struct gmc_sysbuf fresh;
        rc = gmc_sysmem_alloc(dev->pg, a->sys.size, &fresh);
        if (rc != GMC_OK)
            return rc;
        if (a->desc.system_mem != NULL || gmc_valloc_pinned(a)) {
            /* The caller's memory cannot be renamed, nor the pages a pinned
             * allocation is scanned out of: wait instead. */
            gmc_sysmem_free(dev->pg, &fresh);
            return gmc_fence_await(dev, a->busy_fence > a->paging_fence ? a->busy_fence
                                                                      : a->paging_fence);
        }
        gmc_cache_release(dev, &a->sys);
        gmc_fence_defer_sysbuf(dev, &a->sys);
        a->sys = fresh;
        a->sys_valid = 1;
        if (is_aperture(dev, a)) {
            a->gpu_valid = 0; /* remap onto the fresh pages */
            rc = gmc_resid_page_in(dev, a);
            if (rc != GMC_OK)
                return rc;
        } else if (a->node.mgr != NULL) {
            a->gpu_valid = 0; /* the VRAM copy is stale; unlock uploads */
        }
    } else {
        /* The GPU keeps the old range until its work completes: the new
         * one is taken while the old is still held. No room without
         * evicting: wait instead. */
        uint32_t mask = cpu_mask(dev, a);
        rc = mask != 0u && a->node.mgr != NULL && !gmc_valloc_pinned(a) ? gmc_resid_rename_placement(dev, a, mask)
                                                                        : GMC_E_NO_SPACE;
        if (rc == GMC_E_NO_SPACE) {
            dev->stats.lock_waits++;
            return gmc_fence_await(dev, a->busy_fence > a->paging_fence ? a->busy_fence
                                                                      : a->paging_fence);
        }
        if (rc != GMC_OK)
            return rc;
        a->gpu_valid = 1; /* content undefined: Discard promises to overwrite it */
        a->sys_valid = 0;
    }
    a->state |= GMC_ALLOC_STATE_HAS_CONTENT;
    a->state &= ~(uint32_t)(GMC_ALLOC_STATE_ZERO_PENDING | GMC_ALLOC_STATE_LOST);
    a->busy_fence = 0;
    a->write_fence = 0;
    a->paging_fence = 0;
    dev->stats.renames++;
    return GMC_OK;
}

/* Make the system copy hold the content. */
static int prepare_sys(gmc_device *dev, struct gmc_valloc *a)
{
    if (a->node.mgr != NULL && !is_aperture(dev, a) && a->gpu_valid && !a->sys_valid) {
        int rc = gmc_resid_save(dev, a);
        if (rc == GMC_OK)
            rc = gmc_fence_await(dev, a->paging_fence);
        return rc;
    }
    if (!(a->state & GMC_ALLOC_STATE_HAS_CONTENT) && !a->sys_valid) {
        gmc_resid_fill_sys(dev, a); /* first page-in, into the system copy */
        if (a->node.mgr != NULL && !is_aperture(dev, a))
            a->gpu_valid = 0; /* a placed, never-filled copy: upload on use */
    }
    return GMC_OK;
}

/* Put the content in CPU-visible VRAM. */
static int prepare_bar(gmc_device *dev, struct gmc_valloc *a, uint32_t flags)
{
    uint32_t mask = cpu_mask(dev, a);
    if (mask == 0u)
        return GMC_E_NOT_CPU_VISIBLE;
    int rc = GMC_OK;
    if (a->node.mgr != NULL && !(mask & GMC_SEGMENT_BIT(a->seg + 1u))) {
        if (gmc_valloc_pinned(a))
            return GMC_E_PINNED; /* scanned out where it is */
        if (flags & GMC_LOCK_DONOT_EVICT)
            return GMC_E_NEEDS_EVICT;
        rc = gmc_resid_budget_precheck(dev, a, mask);
        if (rc != GMC_OK)
            return rc;
        rc = gmc_resid_evict_one(dev, a);
        if (rc != GMC_OK)
            return rc;
    }
    if (a->node.mgr == NULL) {
        a->locker = (gmc_client *)1; /* not a victim of its own placement */
        rc = gmc_resid_place(dev, a, mask, 1, NULL);
        a->locker = NULL;
        gmc_cand_sync(dev, a);
        if (rc != GMC_OK)
            return rc;
    }
    rc = gmc_resid_page_in(dev, a);
    if (rc == GMC_OK)
        rc = gmc_fence_await(dev, a->paging_fence);
    return rc;
}

static int gmc_lock_do(gmc_client *c, gmc_handle h, uint32_t flags, struct gmc_lock_map *out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    memset(out, 0, sizeof(*out));
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    struct gmc_vref *r = gmc_vidmm_ref(c, h);
    if (r == NULL)
        return GMC_E_BAD_HANDLE;
    struct gmc_valloc *a = r->alloc;
    gmc_device *dev = c->dev;
    int rc = gmc_vidmm_lock_check(c, a, flags);
    if (rc != GMC_OK)
        return rc;
    if (a->locker != NULL)
        return GMC_E_ALREADY_LOCKED;
    if (dev->pg == NULL)
        return dev->no_paging_status;
    rc = gmc_check_powered(dev->power);
    if (rc != GMC_OK)
        return rc;
    const int budget = gmc_budget_active(dev);
    struct gmc_budget_snap snap;
    if (budget) {
        /* A locked allocation counts for its locker (docs/budgets.md):
         * where it is placed now, refused before anything moves. */
        uint64_t trim;
        uint32_t group;
        gmc_budget_snap(c, &snap);
        a->locker = c;
        gmc_cand_sync(dev, a);
        rc = gmc_budget_admit(c, &snap, &trim, &group);
        a->locker = NULL;
        gmc_cand_sync(dev, a);
        if (rc != GMC_OK)
            return rc;
    }
    int sys_map = sys_mapped(dev, a);
    uint64_t until = a->busy_fence > a->paging_fence ? a->busy_fence : a->paging_fence;
    if (until > gmc_paging_completed(dev->pg)) {
        if (flags & GMC_LOCK_DISCARD) {
            rc = rename_alloc(dev, a, sys_map);
        } else if (flags & GMC_LOCK_DONOT_WAIT) {
            return GMC_E_STILL_DRAWING;
        } else {
            dev->stats.lock_waits++;
            rc = gmc_fence_await(dev, until);
        }
        if (rc != GMC_OK)
            return rc;
    }
    sys_map = sys_mapped(dev, a);
    if (sys_map) {
        if (a->sys.host == NULL)
            rc = gmc_resid_ensure_sys(dev, a);
        if (rc == GMC_OK)
            rc = prepare_sys(dev, a);
        if (rc == GMC_OK)
            gmc_cache_cpu_access(dev, a); /* after the GPU's writes, before the CPU's reads */
    } else {
        if (budget)
            dev->bud_client = c; /* placed only where c has room */
        rc = prepare_bar(dev, a, flags);
        dev->bud_client = NULL;
    }
    if (rc != GMC_OK)
        return rc;
    struct gmc_lock_map m;
    memset(&m, 0, sizeof(m));
    if (sys_map) {
        m.kind = GMC_LOCK_MAP_SYSTEM;
        m.ptr = a->sys.host;
        m.size = a->sys.size;
    } else {
        const struct gmc_segment_desc *g = &dev->seg[a->seg].desc;
        m.kind = GMC_LOCK_MAP_BAR;
        m.bar_offset = g->cpu_offset + (a->node.start - g->base);
        m.size = a->sz.size;
    }
    a->locker = c;
    gmc_cand_sync(dev, a);
    if (budget) {
        /* Where the lock put it. */
        uint64_t trim;
        uint32_t group;
        rc = gmc_budget_admit(c, &snap, &trim, &group);
        if (rc != GMC_OK) {
            a->locker = NULL;
            gmc_cand_sync(dev, a);
            return rc;
        }
    }
    a->lock_flags = flags;
    a->lock_map = m;
    a->lock_wrote = !(flags & GMC_LOCK_READ_ONLY);
    if (a->lock_wrote && !sys_map)
        a->sys_valid = 0; /* the VRAM copy is about to be newer */
    dev->stats.locks++;
    gmc_cand_touch(dev, a);
    *out = m;
    return GMC_OK;
}

int gmc_lock(gmc_client *c, gmc_handle h, uint32_t flags, struct gmc_lock_map *out)
{
    int rc = gmc_lock_do(c, h, flags, out);
    gmc_rec_lock(c, h, flags, rc);
    return rc;
}

static int unlock(gmc_device *dev, struct gmc_valloc *a)
{
    int rc = GMC_OK;
    if (a->lock_map.kind == GMC_LOCK_MAP_SYSTEM && a->lock_wrote) {
        a->sys_valid = 1;
        a->state |= GMC_ALLOC_STATE_HAS_CONTENT;
        if (a->node.mgr != NULL && !is_aperture(dev, a)) {
            /* The segment copy follows through a paging operation. */
            a->gpu_valid = 0;
            rc = gmc_resid_page_in(dev, a);
            if (rc == GMC_OK)
                rc = gmc_paging_flush(dev->pg);
        }
    }
    a->locker = NULL;
    gmc_cand_sync(dev, a);
    a->lock_flags = 0;
    a->lock_wrote = 0;
    memset(&a->lock_map, 0, sizeof(a->lock_map));
    return rc;
}

void gmc_lock_drop(gmc_device *dev, struct gmc_valloc *a)
{
    (void)unlock(dev, a);
}

static int gmc_unlock_do(gmc_client *c, gmc_handle h)
{
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    struct gmc_vref *r = gmc_vidmm_ref(c, h);
    if (r == NULL)
        return GMC_E_BAD_HANDLE;
    if (r->alloc->locker != c)
        return GMC_E_NOT_LOCKED;
    return unlock(c->dev, r->alloc);
}

int gmc_unlock(gmc_client *c, gmc_handle h)
{
    int rc = gmc_unlock_do(c, h);
    gmc_rec_unlock(c, h, rc);
    return rc;
}

static int mapped_access(gmc_client *c, gmc_handle h, uint64_t off, void *rbuf, const void *wbuf,
                         size_t len)
{
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    struct gmc_vref *r = gmc_vidmm_ref(c, h);
    if (r == NULL)
        return GMC_E_BAD_HANDLE;
    if (rbuf == NULL && wbuf == NULL && len > 0u)
        return GMC_E_NULL_POINTER;
    struct gmc_valloc *a = r->alloc;
    if (a->locker != c)
        return GMC_E_NOT_LOCKED;
    int rc = rbuf != NULL || wbuf != NULL ? gmc_check_locked_access(a->lock_flags, wbuf != NULL) : GMC_OK;
    if (rc != GMC_OK)
        return rc;
    const struct gmc_lock_map *m = &a->lock_map;
    if (off > m->size || len > m->size - off)
        return GMC_E_OUT_OF_BOUNDS;
    if (len == 0u)
        return GMC_OK;
    gmc_device *dev = c->dev;
    if (m->kind == GMC_LOCK_MAP_SYSTEM && (a->desc.flags & GMC_ALLOC_CACHED)) {
        /* Mapped cacheable: through the CPU's cache (gmc_cache.h). */
        if (rbuf != NULL)
            gmc_cache_read(dev, (const uint8_t *)m->ptr + off, rbuf, len);
        else
            gmc_cache_write(dev, (uint8_t *)m->ptr + off, wbuf, len);
        return GMC_OK;
    }
    if (m->kind == GMC_LOCK_MAP_SYSTEM) {
        if (rbuf != NULL)
            memcpy(rbuf, (const uint8_t *)m->ptr + off, len);
        else
            memcpy((uint8_t *)m->ptr + off, wbuf, len);
        return GMC_OK;
    }
    const struct gmc_segment_desc *g = &dev->seg[a->seg].desc;
    if (swizzling_range(a)) {
        /* The swizzling range: linear bytes, each block where the layout keeps it. */
        int rc2 = GMC_OK;
        for (uint64_t done = 0; done < len && rc2 == GMC_OK;) {
            uint64_t o = off + done, n = GMC_SWIZZLE_BLOCK_BYTES - o % GMC_SWIZZLE_BLOCK_BYTES;
            if (n > len - done)
                n = len - done;
            uint64_t at = a->node.start - g->base + gmc_swizzle_offset(o);
            rc2 = rbuf != NULL ? dev->kmd.ddi->cpu_read(&dev->kmd, g, at, (uint8_t *)rbuf + done, n)
                               : dev->kmd.ddi->cpu_write(&dev->kmd, g, at, (const uint8_t *)wbuf + done, n);
            done += n;
        }
        if (rc2 != GMC_OK && rbuf != NULL)
            memset(rbuf, 0, len);
        return rc2;
    }
    uint64_t at = a->node.start - g->base + off;
    if (rbuf != NULL)
        return dev->kmd.ddi->cpu_read(&dev->kmd, g, at, rbuf, len);
    return dev->kmd.ddi->cpu_write(&dev->kmd, g, at, wbuf, len);
}

static int gmc_lock_read_do(gmc_client *c, gmc_handle h, uint64_t off, void *buf, size_t len)
{
    if (buf == NULL && len > 0u)
        return GMC_E_NULL_POINTER;
    return mapped_access(c, h, off, buf != NULL ? buf : (void *)&len, NULL, len);
}

int gmc_lock_read(gmc_client *c, gmc_handle h, uint64_t off, void *buf, size_t len)
{
    int rc = gmc_lock_read_do(c, h, off, buf, len);
    gmc_rec_access(c, h, off, buf, len, 0, 1, rc);
    return rc;
}

static int gmc_lock_write_do(gmc_client *c, gmc_handle h, uint64_t off, const void *buf, size_t len)
{
    if (buf == NULL && len > 0u)
        return GMC_E_NULL_POINTER;
    return mapped_access(c, h, off, NULL, buf != NULL ? buf : (const void *)&len, len);
}

int gmc_lock_write(gmc_client *c, gmc_handle h, uint64_t off, const void *buf, size_t len)
{
    int rc = gmc_lock_write_do(c, h, off, buf, len);
    gmc_rec_access(c, h, off, buf, len, 1, 1, rc);
    return rc;
}

/* Lock for one access unless the client already holds a lock. */
static int oneshot(gmc_client *c, gmc_handle h, uint64_t off, void *rbuf, const void *wbuf,
                   size_t len)
{
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    if (rbuf == NULL && wbuf == NULL)
        return GMC_E_NULL_POINTER;
    struct gmc_vref *r = gmc_vidmm_ref(c, h);
    if (r == NULL)
        return GMC_E_BAD_HANDLE;
    struct gmc_valloc *a = r->alloc;
    if (a->locker == c)
        return mapped_access(c, h, off, rbuf, wbuf, len);
    uint32_t flags = rbuf != NULL ? GMC_LOCK_READ_ONLY : GMC_LOCK_WRITE_ONLY;
    int rc = gmc_vidmm_lock_check(c, a, flags);
    if (rc != GMC_OK)
        return rc;
    uint64_t size = gmc_resid_user_size(a);
    if (off > size || len > size - off)
        return GMC_E_OUT_OF_BOUNDS;
    struct gmc_lock_map m;
    rc = gmc_lock(c, h, flags, &m);
    if (rc != GMC_OK)
        return rc;
    rc = mapped_access(c, h, off, rbuf, wbuf, len);
    int urc = gmc_unlock(c, h);
    return rc != GMC_OK ? rc : urc;
}

static int gmc_alloc_read_do(gmc_client *c, gmc_handle h, uint64_t off, void *buf, size_t len)
{
    if (buf == NULL && len > 0u)
        return GMC_E_NULL_POINTER;
    uint8_t dummy;
    return oneshot(c, h, off, buf != NULL ? buf : &dummy, NULL, len);
}

int gmc_alloc_read(gmc_client *c, gmc_handle h, uint64_t off, void *buf, size_t len)
{
    if (c != NULL)
        gmc_rec_mute(c->dev, 1);
    int rc = gmc_alloc_read_do(c, h, off, buf, len);
    if (c != NULL)
        gmc_rec_mute(c->dev, -1);
    gmc_rec_access(c, h, off, buf, len, 0, 0, rc);
    return rc;
}

static int gmc_alloc_write_do(gmc_client *c, gmc_handle h, uint64_t off, const void *buf, size_t len)
{
    if (buf == NULL && len > 0u)
        return GMC_E_NULL_POINTER;
    uint8_t dummy = 0;
    return oneshot(c, h, off, NULL, buf != NULL ? buf : &dummy, len);
}

int gmc_alloc_write(gmc_client *c, gmc_handle h, uint64_t off, const void *buf, size_t len)
{
    if (c != NULL)
        gmc_rec_mute(c->dev, 1);
    int rc = gmc_alloc_write_do(c, h, off, buf, len);
    if (c != NULL)
        gmc_rec_mute(c->dev, -1);
    gmc_rec_access(c, h, off, buf, len, 1, 0, rc);
    return rc;
}
