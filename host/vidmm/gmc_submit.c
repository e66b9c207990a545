/*
 * gmc_submit.c - submissions (gmc_submit in gmc.h): checking the
 * operations, making every referenced allocation reachable by the GPU
 * (paged in, a locked one through an aperture, a FILL target moved out of
 * an aperture), the SynchronousPaging wait, queueing the operations as
 * paging packets behind the paging work, and the fences each allocation
 * then carries (see gmc_submit.h, docs/residency.md).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmc.h"
#include "gmc_budget.h"
#include "gmc_cache.h"
#include "gmc_cand.h"
#include "gmc_fence.h"
#include "gmc_paging.h"
#include "gmc_status.h"
#include "gmc_resid.h"
#include "gmc_submit.h"
#include "gmc_vobj.h"
#include "gmc_record.h"

static uint64_t page_round(uint64_t v)
{
    return (v + (GMC_PAGE_SIZE - 1u)) & ~(uint64_t)(GMC_PAGE_SIZE - 1u);
}

static int check_op(const struct gmc_submit *s, const struct gmc_gpu_op *op,
                    struct gmc_valloc *const *al)
{
    if (op->kind != GMC_GPU_COPY && op->kind != GMC_GPU_FILL)
        return GMC_E_INVALID_ARG;
    if (op->dst >= s->nrefs || (op->kind == GMC_GPU_COPY && op->src >= s->nrefs))
        return GMC_E_INVALID_ARG;
    if (op->size == 0u)
        return GMC_E_INVALID_ARG;
    if (!(s->refs[op->dst].flags & GMC_REF_WRITE))
        return GMC_E_PERMISSION;
    const struct gmc_valloc *d = al[op->dst];
    uint64_t dsz = page_round(d->desc.size);
    if (op->dst_offset > dsz || op->size > dsz - op->dst_offset)
        return GMC_E_OUT_OF_BOUNDS;
    if (op->kind == GMC_GPU_FILL && op->src != 0u)
        return GMC_E_INVALID_ARG;
    if (op->kind == GMC_GPU_COPY) {
        const struct gmc_valloc *sa = al[op->src];
        uint64_t ssz = page_round(sa->desc.size);
        if (op->src_offset > ssz || op->size > ssz - op->src_offset)
            return GMC_E_OUT_OF_BOUNDS;
        /* One allocation on both sides: the ranges must not share a byte
         * (docs/dma.md, TRANSFER: the engine reads ahead of its writes by
         * a timing-dependent amount). */
        if (sa == d && op->src_offset < op->dst_offset + op->size && op->dst_offset < op->src_offset + op->size)
            return GMC_E_OVERLAP;
    } else if (op->src_offset != 0u) {
        return GMC_E_INVALID_ARG;
    }
    if (op->size > UINT32_MAX)
        return GMC_E_INVALID_ARG;
    return GMC_OK;
}

/* Move a GPU-accessible allocation into the segments of mask (its content
 * goes through its system copy). */
static int move_to(gmc_device *dev, struct gmc_valloc *a, uint32_t mask)
{
    if (gmc_valloc_pinned(a))
        return GMC_E_PINNED; /* scanned out where it is */
    int rc = gmc_resid_budget_precheck(dev, a, mask);
    if (rc == GMC_OK)
        rc = gmc_resid_evict_one(dev, a);
    if (rc != GMC_OK)
        return rc;
    a->resident++; /* not a victim of its own placement */
    rc = gmc_resid_place(dev, a, mask, 1, NULL);
    a->resident--;
    gmc_cand_sync(dev, a);
    if (rc == GMC_OK)
        rc = gmc_resid_page_in(dev, a);
    return rc;
}

/* A locked allocation the GPU must reach without moving the CPU pointer. */
static int reach_locked(gmc_device *dev, struct gmc_valloc *a)
{
    if (a->lock_map.kind == GMC_LOCK_MAP_BAR)
        return GMC_OK; /* in CPU-visible VRAM: the GPU reaches it too */
    if (a->node.mgr != NULL && gmc_vseg_is_aperture(&dev->seg[a->seg]) && a->gpu_valid)
        return GMC_OK; /* the aperture maps the locked system copy itself */
    /* The content is the locked system copy (the lock made it hold the
     * content): the GPU must see those very pages, so through an aperture
     * (WDDM: evict it to an aperture segment, or refuse). A VRAM copy would
     * not see what the CPU writes while locked. */
    uint32_t mask = gmc_resid_aperture_mask(dev);
    mask &= a->desc.supported_segments | a->desc.eviction_segments;
    if (mask == 0u || a->sys.host == NULL || !a->sys_valid)
        return GMC_E_SUBMIT_LOCKED;
    if (gmc_valloc_pinned(a))
        return GMC_E_PINNED; /* scanned out where it is: it cannot go to the aperture */
    int brc = gmc_resid_budget_precheck(dev, a, mask);
    if (brc != GMC_OK)
        return brc;
    if (a->node.mgr != NULL) {
        /* Drop the VRAM copy once the GPU work that used it completed (the
         * lock waited for it, unless it renamed). */
        uint64_t until = a->busy_fence > a->paging_fence ? a->busy_fence : a->paging_fence;
        if (until > gmc_paging_completed(dev->pg)) {
            int rc = gmc_fence_await(dev, until);
            if (rc != GMC_OK)
                return rc;
        }
        gmc_cand_unplace(dev, a);
    }
    struct gmc_alloc_desc keep = a->desc;
    a->desc.supported_segments |= mask;
    int rc = gmc_resid_place(dev, a, mask, 1, NULL);
    a->desc = keep;
    if (rc == GMC_E_NO_SPACE)
        return GMC_E_SUBMIT_LOCKED;
    if (rc == GMC_OK)
        rc = gmc_resid_page_in(dev, a);
    return rc;
}

/* The submission checked before anything moves: every handle and flag
 * (al[i]: the allocation of refs[i]), every operation, paging possible now,
 * every allocation resident (and writable where it is written), every FILL
 * target able to live in a memory segment. */
static int submit_check(gmc_client *c, const struct gmc_submit *s, struct gmc_valloc **al)
{
    gmc_device *dev = c->dev;
    int rc = GMC_OK;
    for (unsigned i = 0; i < s->nrefs && rc == GMC_OK; i++) {
        struct gmc_vref *r = gmc_vidmm_ref(c, s->refs[i].handle);
        if (r == NULL)
            rc = GMC_E_BAD_HANDLE;
        else if (s->refs[i].flags & ~(uint32_t)GMC_REF_WRITE)
            rc = GMC_E_INVALID_ARG;
        else
            al[i] = r->alloc;
    }
    for (unsigned i = 0; i < s->nops && rc == GMC_OK; i++)
        rc = check_op(s, &s->ops[i], al);
    if (rc == GMC_OK)
        rc = gmc_fence_need_paging(dev);
    for (unsigned i = 0; i < s->nrefs && rc == GMC_OK; i++) {
        struct gmc_vref *r = gmc_vidmm_ref(c, s->refs[i].handle);
        if (r->resident == 0u)
            rc = GMC_E_NOT_RESIDENT;
        else if ((s->refs[i].flags & GMC_REF_WRITE) && (al[i]->desc.kmt_flags & GMC_KMT_READ_ONLY))
            rc = GMC_E_READ_ONLY;
    }
    /* FILL reaches memory segments only (the engine refuses the aperture). */
    for (unsigned i = 0; i < s->nops && rc == GMC_OK; i++) {
        const struct gmc_valloc *d = al[s->ops[i].dst];
        if (s->ops[i].kind == GMC_GPU_FILL && !(d->desc.supported_segments & ~gmc_resid_aperture_mask(dev)))
            rc = GMC_E_UNSUPPORTED;
    }
    return rc;
}

/* Every referenced allocation GPU-accessible, every FILL target in a
 * memory segment. */
static int submit_reach(gmc_device *dev, const struct gmc_submit *s, struct gmc_valloc **al)
{
    int rc = GMC_OK;
    for (unsigned i = 0; i < s->nrefs && rc == GMC_OK; i++) {
        struct gmc_valloc *a = al[i];
        if (a->locker != NULL)
            rc = reach_locked(dev, a);
        else if (!(a->node.mgr != NULL && a->gpu_valid))
            rc = gmc_resid_bring_in(dev, a, NULL);
    }
    /* A FILL target that landed in an aperture (placed there, or evicted
     * there by a lock): move it to a memory segment it supports. */
    for (unsigned i = 0; i < s->nops && rc == GMC_OK; i++) {
        struct gmc_valloc *d = al[s->ops[i].dst];
        if (s->ops[i].kind != GMC_GPU_FILL || !gmc_vseg_is_aperture(&dev->seg[d->seg]))
            continue;
        uint32_t mem = d->desc.supported_segments & ~gmc_resid_aperture_mask(dev);
        if (d->locker != NULL)
            rc = GMC_E_SUBMIT_LOCKED;
        else if (mem == 0u)
            rc = GMC_E_UNSUPPORTED;
        else
            rc = move_to(dev, d, mem);
    }
    return rc;
}

/* The GPU reaches an aperture placement's system copy itself: the CPU
 * cache model flushes (or, for a write, invalidates after) the Cached
 * allocations there. */
static void submit_cache(gmc_device *dev, const struct gmc_submit *s, struct gmc_valloc **al)
{
    for (unsigned i = 0; i < s->nrefs; i++) {
        struct gmc_valloc *a = al[i];
        const struct gmc_vseg *g = &dev->seg[a->seg];
        if (gmc_vseg_is_aperture(g))
            gmc_cache_gpu_access(dev, a, (g->desc.flags & GMC_SEGFLAGS_CACHE_COHERENT_MASK) != 0u,
                                 (s->refs[i].flags & GMC_REF_WRITE) != 0u);
    }
}

/* One paging operation per GPU operation, on the allocations' current
 * places; *f: the fence of the last one queued. */
static int submit_queue(gmc_device *dev, const struct gmc_submit *s, struct gmc_valloc **al, uint64_t *f)
{
    int rc = GMC_OK;
    for (unsigned i = 0; i < s->nops && rc == GMC_OK; i++) {
        const struct gmc_gpu_op *op = &s->ops[i];
        struct gmc_valloc *d = al[op->dst];
        struct gmc_paging_args x;
        memset(&x, 0, sizeof(x));
        if (op->kind == GMC_GPU_FILL) {
            x.op = GMC_PAGING_FILL;
            x.u.fill.gpu_address = d->node.start + op->dst_offset;
            x.u.fill.size = op->size;
            x.u.fill.pattern = op->pattern;
        } else {
            struct gmc_valloc *sa = al[op->src];
            x.op = GMC_PAGING_TRANSFER;
            x.u.transfer.size = op->size;
            x.u.transfer.flags = GMC_PAGING_TRANSFER_START | GMC_PAGING_TRANSFER_END;
            x.u.transfer.src.segment_id = dev->seg[sa->seg].desc.id;
            x.u.transfer.src.segment_address = sa->node.start + op->src_offset;
            x.u.transfer.dst.segment_id = dev->seg[d->seg].desc.id;
            x.u.transfer.dst.segment_address = d->node.start + op->dst_offset;
        }
        rc = gmc_fence_queue(dev, &x, f);
    }
    return rc;
}

/* The job is queued up to fence f: every allocation it uses is busy until
 * then, the ones it writes hold content newer on the GPU. */
static void submit_retire(gmc_device *dev, const struct gmc_submit *s, struct gmc_valloc **al, uint64_t f)
{
    for (unsigned i = 0; i < s->nrefs; i++) {
        struct gmc_valloc *a = al[i];
        if (f > a->busy_fence)
            a->busy_fence = f;
        if (s->refs[i].flags & GMC_REF_WRITE) {
            a->write_fence = f;
            if (!gmc_vseg_is_aperture(&dev->seg[a->seg]))
                a->sys_valid = 0; /* the GPU copy is newer */
            a->state |= GMC_ALLOC_STATE_HAS_CONTENT;
        }
        gmc_cand_touch(dev, a);
    }
}

static int gmc_submit_do(gmc_client *c, const struct gmc_submit *s, uint64_t *fence)
{
    if (fence != NULL)
        *fence = 0;
    if (c == NULL || s == NULL || (s->refs == NULL && s->nrefs > 0u) ||
        (s->ops == NULL && s->nops > 0u))
        return GMC_E_NULL_POINTER;
    gmc_device *dev = c->dev;
    struct gmc_valloc **al = calloc(s->nrefs ? s->nrefs : 1u, sizeof(*al));
    if (al == NULL)
        return GMC_E_NO_MEMORY;
    int rc = submit_check(c, s, al);
    /* Budgets: what the moves of submit_reach make count for the client;
     * they place only where it has room. */
    const int budget = rc == GMC_OK && gmc_budget_active(dev);
    struct gmc_budget_snap snap;
    if (budget) {
        gmc_budget_snap(c, &snap);
        dev->bud_client = c;
    }
    if (rc == GMC_OK)
        rc = submit_reach(dev, s, al);
    dev->bud_client = NULL;
    if (rc == GMC_OK && budget) {
        uint64_t trim;
        uint32_t group;
        rc = gmc_budget_admit(c, &snap, &trim, &group);
    }
    if (rc == GMC_OK && dev->sync_wait_fence > gmc_paging_completed(dev->pg)) {
        dev->stats.sync_waits++;
        rc = gmc_fence_await(dev, dev->sync_wait_fence);
    }
    if (rc == GMC_OK)
        submit_cache(dev, s, al);
    uint64_t f = 0;
    if (rc == GMC_OK)
        rc = submit_queue(dev, s, al, &f);
    if (rc == GMC_OK && f == 0u)
        f = gmc_paging_last_issued(dev->pg);
    if (rc == GMC_OK)
        rc = gmc_paging_flush(dev->pg);
    if (rc == GMC_OK) {
        submit_retire(dev, s, al, f);
        dev->stats.submits++;
        if (fence != NULL)
            *fence = f;
    }
    free(al);
    return rc;
}

int gmc_submit(gmc_client *c, const struct gmc_submit *s, uint64_t *fence)
{
    uint64_t own = 0;
    int rc = gmc_submit_do(c, s, fence != NULL ? fence : &own);
    gmc_rec_submit(c, s, fence != NULL ? *fence : own, rc);
    return rc;
}
