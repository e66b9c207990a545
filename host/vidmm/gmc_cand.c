/*
 * gmc_cand.c - residency bookkeeping: placements, each segment's eviction
 * candidates and hot set in policy order, the device's allocation lists
 * and the protected VRAM ranges (see gmc_cand.h).
 *
 * DOC: Candidate structures
 *
 * A placement that must evict asks each candidate segment for its victims
 * in policy order. Two intrusive AVL trees per segment answer it without
 * looking at any allocation that is not placed there:
 *
 * - dev->cand[seg]: the placed allocations an eviction may take (no
 *   residency reference, not pinned, not locked, not HardwareProtected),
 *   ordered by gmc_victim_cmp() (priority, clean before dirty, then
 *   recency and heat); dev->cand_bytes[seg] sums their placed
 *   sizes (what an eviction could free);
 * - dev->hot[seg]: the segment's hot set, ordered by gmc_victim_hot_cmp()
 *   (priority, then least recently used), whose first member of a priority
 *   is the one an admission displaces.
 *
 * Each allocation carries the key both trees hold it under (a copy of its
 * priority, dirtiness, heat and last use), so a tree stays sound even if a field
 * changed before gmc_cand_sync() ran; every writer of those fields calls
 * it. Insert, remove and re-key are O(log n); walking the victims is
 * O(victims looked at).
 */
#include <stddef.h>
#include <stdint.h>

#include "gmc.h"
#include "gmc_avl.h"
#include "gmc_backend.h"
#include "gmc_budget.h"
#include "gmc_cand.h"
#include "gmc_check.h"
#include "gmc_kmd.h"
#include "gmc_paging.h"
#include "gmc_range.h"
#include "gmc_regs.h"
#include "gmc_status.h"
#include "gmc_victim.h"
#include "gmc_vobj.h"

static struct gmc_valloc *cand_of(const struct gmc_avl_node *n)
{
    return (struct gmc_valloc *)(void *)((char *)(uintptr_t)n - offsetof(struct gmc_valloc, cand_node));
}

static struct gmc_valloc *hot_of(const struct gmc_avl_node *n)
{
    return (struct gmc_valloc *)(void *)((char *)(uintptr_t)n - offsetof(struct gmc_valloc, hot_node));
}

static int cand_cmp(const struct gmc_avl_node *x, const struct gmc_avl_node *y)
{
    return gmc_victim_cmp(&cand_of(x)->key, &cand_of(y)->key);
}

static int hot_cmp(const struct gmc_avl_node *x, const struct gmc_avl_node *y)
{
    return gmc_victim_hot_cmp(&hot_of(x)->key, &hot_of(y)->key);
}

static int hot_key_cmp(const void *key, const struct gmc_avl_node *n)
{
    return gmc_victim_hot_cmp(key, &hot_of(n)->key);
}

void gmc_cand_init(gmc_device *dev)
{
    for (unsigned i = 0; i < GMC_MAX_SEGMENTS; i++) {
        gmc_avl_init(&dev->cand[i]);
        gmc_avl_init(&dev->hot[i]);
        dev->cand_bytes[i] = 0;
        dev->hot_budget[i] = UINT64_MAX; /* until a hot allocation must be evicted */
    }
}

int gmc_cand_is_protected(const struct gmc_valloc *a)
{
    return (a->desc.flags & (GMC_ALLOC_PROTECTED | GMC_ALLOC_HARDWARE_PROTECTED)) != 0u;
}

/* Whether an eviction may take a. HardwareProtected content never leaves
 * VRAM (the engine refuses to copy protected ranges out), so it is never a
 * victim; under power-down it is reported lost (gmc_power.c). Protected
 * content is evicted like any other: its system copy is the library's own
 * (kernel) memory, never mapped into a client (docs/residency.md). */
static int candidate(const struct gmc_valloc *a)
{
    return a->node.mgr != NULL && a->resident == 0u && !(a->state & GMC_ALLOC_STATE_PINNED) &&
           a->locker == NULL && !(a->desc.flags & GMC_ALLOC_HARDWARE_PROTECTED);
}

static int key_eq(const struct gmc_victim_key *x, const struct gmc_victim_key *y)
{
    return x->prio == y->prio && x->dirty == y->dirty && x->hot == y->hot && x->hot_seq == y->hot_seq && x->lru == y->lru &&
           x->serial == y->serial;
}

/* Whether evicting a writes it back (gmc_resid_evict_one): its placed copy
 * is newer than its system copy. An aperture placement is only unmapped. */
static uint32_t dirty(const gmc_device *dev, const struct gmc_valloc *a)
{
    return a->node.mgr != NULL && a->gpu_valid && !a->sys_valid && !gmc_vseg_is_aperture(&dev->seg[a->seg]);
}

void gmc_cand_sync(gmc_device *dev, struct gmc_valloc *a)
{
    gmc_budget_sync(dev, a);
    int want_c = candidate(a), want_h = a->hot && a->node.mgr != NULL;
    struct gmc_victim_key k = { .prio = gmc_victim_prio(&a->desc),
                                .dirty = dirty(dev, a),
                                .hot = a->hot ? 1u : 0u,
                                .hot_seq = a->hot_seq,
                                .lru = a->lru,
                                .serial = a->serial };
    if (want_c == a->in_cand && want_h == a->in_hot &&
        (!(want_c || want_h) || (a->tree_seg == a->seg && key_eq(&k, &a->key) &&
                                 (!want_c || a->cand_size == a->sz.placed))))
        return;
    if (a->in_cand) {
        gmc_avl_remove(&dev->cand[a->tree_seg], &a->cand_node);
        dev->cand_bytes[a->tree_seg] -= a->cand_size;
        a->cand_size = 0;
        a->in_cand = 0;
    }
    if (a->in_hot) {
        gmc_avl_remove(&dev->hot[a->tree_seg], &a->hot_node);
        a->in_hot = 0;
    }
    a->key = k;
    a->tree_seg = a->seg;
    if (want_c) {
        gmc_avl_insert(&dev->cand[a->seg], &a->cand_node, cand_cmp);
        a->cand_size = a->sz.placed;
        dev->cand_bytes[a->seg] += a->cand_size;
        a->in_cand = 1;
    }
    if (want_h) {
        gmc_avl_insert(&dev->hot[a->seg], &a->hot_node, hot_cmp);
        a->in_hot = 1;
    }
}

void gmc_cand_touch(gmc_device *dev, struct gmc_valloc *a)
{
    a->lru = ++dev->tick;
    gmc_cand_sync(dev, a);
}

struct gmc_valloc *gmc_cand_first(gmc_device *dev, unsigned seg)
{
    struct gmc_avl_node *n = gmc_avl_first(&dev->cand[seg]);
    if (n == NULL)
        return NULL;
    dev->cand_visits++;
    return cand_of(n);
}

struct gmc_valloc *gmc_cand_next(gmc_device *dev, const struct gmc_valloc *a)
{
    struct gmc_avl_node *n = gmc_avl_next(&a->cand_node);
    if (n == NULL)
        return NULL;
    dev->cand_visits++;
    return cand_of(n);
}

/* ------------------------------------------------- protected VRAM ranges */

/* Program the hardware's protected ranges (PROT_BASE/PROT_LIMIT): one per
 * Protected or HardwareProtected allocation resident in a memory segment
 * (its content in VRAM), plus `add`, minus `skip` (its range is lifted for
 * the library's own copy to its kernel-memory system copy, or because it
 * leaves). More such allocations than ranges: GMC_E_PROTECT_RANGES,
 * nothing written. The CPU aperture then refuses those bytes (SLVERR) and
 * the DMA engine faults on copying them to system memory or an aperture
 * (docs/residency.md, "Protected VRAM ranges"). Only the watched list is
 * walked: it holds every protected allocation, newest first. */
int gmc_cand_protect(gmc_device *dev, const struct gmc_valloc *add, const struct gmc_valloc *skip)
{
    uint32_t caps = dev->adapter.caps;
    unsigned n = (caps & GMC_CAPS_PROTECTION_MASK) ? (caps & GMC_CAPS_PROT_RANGES_MASK) >> GMC_CAPS_PROT_RANGES_LSB : 0u;
    if (n > GMC_MAX_PROT_RANGES)
        n = GMC_MAX_PROT_RANGES;
    if (n == 0u || gmc_check_powered(dev->power) != GMC_OK)
        return GMC_OK;
    uint64_t base[GMC_MAX_PROT_RANGES] = { 0 }, limit[GMC_MAX_PROT_RANGES] = { 0 };
    unsigned k = 0;
    for (const struct gmc_valloc *a = dev->watched; a != NULL; a = a->wnext) {
        if (a == skip || !gmc_cand_is_protected(a) || a->node.mgr == NULL ||
            gmc_vseg_is_aperture(&dev->seg[a->seg]) || (a != add && !a->gpu_valid))
            continue;
        if (k == n)
            return GMC_E_PROTECT_RANGES;
        base[k] = a->node.start;
        limit[k] = a->node.start + a->sz.placed;
        k++;
    }
    for (unsigned i = 0; i < n; i++) {
        int rc = dev->kmd.be->write32(dev->kmd.be_ctx, GMC_REG_PROT_BASE_N(i), (uint32_t)base[i]);
        if (rc == GMC_OK)
            rc = dev->kmd.be->write32(dev->kmd.be_ctx, GMC_REG_PROT_LIMIT_N(i), (uint32_t)limit[i]);
        if (rc != GMC_OK)
            return rc;
    }
    dev->prot_ranges_used = k;
    return GMC_OK;
}

/* ------------------------------------------------------------ placement */

void gmc_cand_placed(gmc_device *dev, struct gmc_valloc *a, const struct gmc_placement *pl)
{
    struct gmc_vseg *s = &dev->seg[pl->index];
    a->seg = pl->index;
    a->sz = pl->sz;
    s->used += pl->sz.placed;
    s->count++;
    a->gpu_valid = 0;
    a->refault = 0;
    a->state |= GMC_ALLOC_STATE_PLACED;
    gmc_cand_sync(dev, a);
}

void gmc_cand_unplace(gmc_device *dev, struct gmc_valloc *a)
{
    if (a->node.mgr == NULL)
        return;
    struct gmc_vseg *s = &dev->seg[a->seg];
    if (dev->pg != NULL && gmc_paging_last_issued(dev->pg) > dev->freed_fence[a->seg])
        dev->freed_fence[a->seg] = gmc_paging_last_issued(dev->pg);
    gmc_range_remove(&s->mgr, &a->node);
    s->used -= a->sz.placed;
    s->count--;
    if (a->hot) {
        dev->hot_bytes[a->seg] -= a->sz.placed; /* only placed allocations are hot */
        a->hot = 0;
    }
    a->gpu_valid = 0;
    a->state &= ~(uint32_t)GMC_ALLOC_STATE_PLACED;
    gmc_cand_sync(dev, a);
    if (gmc_cand_is_protected(a))
        (void)gmc_cand_protect(dev, NULL, a); /* fewer ranges: cannot run short */
}

/* -------------------------------------------------------------- hot set */

void gmc_cand_set_hot(gmc_device *dev, struct gmc_valloc *a, int hot)
{
    if (a->hot == hot || a->node.mgr == NULL)
        return;
    a->hot = hot;
    if (hot) {
        a->hot_seq = ++dev->hot_seq;
        dev->hot_bytes[a->seg] += a->sz.placed;
    } else {
        dev->hot_bytes[a->seg] -= a->sz.placed;
    }
    gmc_cand_sync(dev, a);
}

/* The least recently used hot allocation of priority p in segment seg. */
static struct gmc_valloc *oldest_hot(gmc_device *dev, unsigned seg, uint32_t p)
{
    const struct gmc_victim_key k = { .prio = p };
    struct gmc_avl_node *n = gmc_avl_lower_bound(&dev->hot[seg], &k, hot_key_cmp);
    return n != NULL && hot_of(n)->key.prio == p ? hot_of(n) : NULL;
}

void gmc_cand_heat_placed(gmc_device *dev, struct gmc_valloc *a)
{
    if (gmc_victim_heat_placed(dev->hot_bytes[a->seg], a->sz.placed, dev->hot_budget[a->seg]))
        gmc_cand_set_hot(dev, a, 1);
}

int gmc_cand_admit(gmc_device *dev, const struct gmc_valloc *a, unsigned seg, uint64_t n)
{
    const uint32_t p = gmc_victim_prio(&a->desc);
    struct gmc_valloc *o = NULL;
    if (a->refault && dev->hot_bytes[seg] + n > dev->hot_budget[seg])
        o = oldest_hot(dev, seg, p);
    switch (gmc_victim_admit(a->refault, a->lru, n, dev->hot_bytes[seg], dev->hot_budget[seg],
                             o != NULL ? &o->key : NULL)) {
    case GMC_ADMIT_HOT:
        return 1;
    case GMC_ADMIT_DISPLACE:
        do
            gmc_cand_set_hot(dev, o, 0);
        while (dev->hot_bytes[seg] + n > dev->hot_budget[seg] && (o = oldest_hot(dev, seg, p)) != NULL);
        return 1;
    case GMC_ADMIT_COLD:
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------- lists */

static int watched(const struct gmc_valloc *a)
{
    return gmc_cand_is_protected(a) || (a->desc.flags & GMC_ALLOC_EXPLICIT_RESIDENCY_NOTIFICATION);
}

void gmc_cand_link(gmc_device *dev, struct gmc_valloc *a)
{
    a->dprev = NULL;
    a->dnext = dev->allocs;
    if (dev->allocs != NULL)
        dev->allocs->dprev = a;
    dev->allocs = a;
    if (watched(a)) {
        a->wprev = NULL;
        a->wnext = dev->watched;
        if (dev->watched != NULL)
            dev->watched->wprev = a;
        dev->watched = a;
    }
}

void gmc_cand_unlink(gmc_device *dev, struct gmc_valloc *a)
{
    if (a->dprev != NULL)
        a->dprev->dnext = a->dnext;
    else
        dev->allocs = a->dnext;
    if (a->dnext != NULL)
        a->dnext->dprev = a->dprev;
    if (watched(a)) {
        if (a->wprev != NULL)
            a->wprev->wnext = a->wnext;
        else
            dev->watched = a->wnext;
        if (a->wnext != NULL)
            a->wnext->wprev = a->wprev;
    }
}

struct gmc_valloc *gmc_cand_find_notified(gmc_device *dev, uint64_t serial)
{
    for (struct gmc_valloc *a = dev->watched; a != NULL; a = a->wnext)
        if (a->serial == serial)
            return a;
    return NULL;
}
