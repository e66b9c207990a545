/*
 * gmc_resid.c - residency: placement under pressure, page-in, eviction,
 * submissions, fences and the TDR path.
 *
 * DOC: Overview
 *
 * docs/residency.md is the contract. The bookkeeping is optimistic: when
 * a paging operation is queued, the allocation's state (placed, which
 * copy holds the content) changes at once, as if the operation had
 * completed. This is safe because the engine executes in queue order and
 * every CPU access to an allocation first waits for that allocation's
 * last paging fence. If a fence never arrives (a TDR), recover() undoes
 * what the lost operations promised, and reports each allocation as
 * recovered or lost.
 *
 * An allocation's content lives in at most two copies: the placed copy
 * (VRAM, or for an aperture placement the system copy itself, seen
 * through the GART) and the system copy. gpu_valid and sys_valid say
 * which of them hold the current content; with neither, it has none yet
 * (first page-in fills it) or lost it.
 *
 * Eviction picks, among the allocations of one candidate segment that no
 * client references as resident and that are neither pinned nor locked,
 * the lowest priority first; within a priority, the cold allocations
 * least recently used first, then the hot ones, the one that joined the
 * hot set last first (ties: the older allocation). Candidate segments are
 * tried in the allocation's placement order (docs/placement.md).
 *
 * DOC: Hot and cold (LRU with refault-aware admission)
 *
 * Each segment keeps a hot set, after LIRS (Jiang and Zhang, SIGMETRICS
 * 2002) and CLOCK-Pro, with evictions as the misses. Only placed
 * allocations are hot. An allocation placed without evicting is hot while
 * the set holds at most hot_budget bytes with it. One placed by evicting
 * is cold unless it is a refault (an eviction took its content out) and
 * either the set has room, or it was used more recently than the least
 * recently used hot allocation of its priority (its reuse distance is
 * shorter than the recency of the set's oldest member): then those leave
 * the set, least recently used first, until it fits. When the scan has to
 * evict a hot allocation (the cold ones cannot make room), the set was too
 * big for the segment: hot_budget, the segment's size at first, becomes
 * what stays hot. A loop over more than fits thus keeps its hot part
 * resident and pages only the rest, where plain LRU pages every
 * allocation of the loop on every pass.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmc.h"
#include "gmc_backend.h"
#include "gmc_cand.h"
#include "gmc_kmd.h"
#include "gmc_paging.h"
#include "gmc_place.h"
#include "gmc_range.h"
#include "gmc_regs.h"
#include "gmc_status.h"
#include "gmc_resid.h"
#include "gmc_vobj.h"

#define DEFAULT_TDR_CYCLES 4000000u
/* The compact engine (CAPS.DMA_ENGINE = COMPACT) moves one word and one bus
 * transaction at a time: its default TDR timeout is this many times longer. */
#define COMPACT_TDR_FACTOR 32u
/* Nominal device clock for timeouts given in microseconds: 100 MHz. */
#define CYCLES_PER_US 100u

enum pend {
    PEND_NONE = 0,
    PEND_FILL,      /* first page-in fill */
    PEND_PAGE_IN,   /* system copy -> placed copy */
    PEND_MAP,       /* aperture placement mapped */
    PEND_SAVE_KEEP, /* placed copy -> system copy, placement kept */
    PEND_EVICT,     /* placed copy -> system copy, placement released */
    PEND_MOVE       /* placed copy -> another placement */
};

static uint64_t page_round(uint64_t v)
{
    return (v + (GMC_PAGE_SIZE - 1u)) & ~(uint64_t)(GMC_PAGE_SIZE - 1u);
}

/* Bytes of content: the largest size the allocation takes in any segment. */
static uint64_t content_size(const struct gmc_valloc *a)
{
    uint64_t s = page_round(a->desc.size);
    uint64_t p = page_round(a->desc.pitch_aligned_size);
    return p > s ? p : s;
}

uint64_t gmc_resid_user_size(const struct gmc_valloc *a)
{
    return a->node.mgr != NULL ? a->sz.size : page_round(a->desc.size);
}

static uint64_t xfer_size(const struct gmc_valloc *a)
{
    uint64_t c = a->sys.host != NULL && a->sys.size < a->sz.size ? a->sys.size : a->sz.size;
    return c;
}

static uint32_t fill_pattern(const struct gmc_valloc *a)
{
    return (a->desc.kmt_flags & GMC_KMT_ZEROED) ? 0u : GMC_FILL_UNINITIALISED;
}

/* ------------------------------------------------------------ queueing */

int gmc_resid_queue(gmc_device *dev, struct gmc_paging_args *args, uint64_t *fence)
{
    uint64_t f = 0;
    int rc = gmc_paging_queue(dev->pg, args, &f);
    if (rc != GMC_OK)
        return rc;
    dev->stats.paging_ops++;
    dev->stats.fences_issued++;
    if (fence != NULL)
        *fence = f;
    return GMC_OK;
}

/* Free a system buffer once the queued work that may use it completed. */
void gmc_resid_defer_sysbuf(gmc_device *dev, struct gmc_sysbuf *b)
{
    if (b->host == NULL)
        return;
    uint64_t fence = gmc_paging_last_issued(dev->pg);
    struct gmc_deferred *d = calloc(1, sizeof(*d));
    if (d == NULL || fence <= gmc_paging_completed(dev->pg)) {
        /* Nothing queued can still touch it (or no memory to defer: wait). */
        if (d == NULL)
            (void)gmc_paging_idle(dev->pg, dev->tdr_cycles);
        free(d);
        gmc_sysmem_free(dev->pg, b);
        memset(b, 0, sizeof(*b));
        return;
    }
    d->buf = *b;
    d->fence = fence;
    d->next = dev->deferred;
    dev->deferred = d;
    memset(b, 0, sizeof(*b));
}

/* Release system buffers whose last user completed (all: force). */
static void reap(gmc_device *dev, int force)
{
    uint64_t done = dev->pg != NULL ? gmc_paging_completed(dev->pg) : 0u;
    struct gmc_deferred **pp = &dev->deferred;
    while (*pp != NULL) {
        struct gmc_deferred *d = *pp;
        if (force || d->fence <= done) {
            *pp = d->next;
            if (d->node != NULL) {
                gmc_range_remove(&dev->seg[d->seg].mgr, d->node);
                free(d->node); /* the holder allocation (node is its first member) */
            } else {
                gmc_sysmem_free(dev->pg, &d->buf);
            }
            free(d);
        } else {
            pp = &d->next;
        }
    }
}

/* ------------------------------------------------------- notifications */

static void on_notify(void *user, uint64_t cookie, int resident)
{
    gmc_device *dev = user;
    struct gmc_valloc *a = gmc_cand_find_notified(dev, cookie);
    if (a == NULL)
        return; /* destroyed since */
    for (gmc_client *c = dev->clients; c != NULL; c = c->next) {
        if (c->notify_fn == NULL)
            continue;
        for (struct gmc_vref *r = c->refs; r != NULL; r = r->next)
            if (r->alloc == a) {
                c->notify_fn(c->notify_user, r->handle, resident);
                break;
            }
    }
}

static int queue_notify(gmc_device *dev, struct gmc_valloc *a, int resident)
{
    if (!(a->desc.flags & GMC_ALLOC_EXPLICIT_RESIDENCY_NOTIFICATION) || a->notified == resident)
        return GMC_OK;
    struct gmc_paging_args n = { .op = GMC_PAGING_NOTIFY_RESIDENCY };
    n.u.notify.cookie = a->serial;
    n.u.notify.resident = resident;
    uint64_t f = 0;
    int rc = gmc_resid_queue(dev, &n, &f);
    if (rc != GMC_OK)
        return rc;
    a->notified = resident;
    /* "Before evict": the client hears it before the content moves. */
    return resident ? GMC_OK : gmc_resid_wait(dev, f);
}

/* The descriptor restricted to the segments of mask. */
static void restrict_desc(const struct gmc_alloc_desc *d, uint32_t mask, struct gmc_alloc_desc *out)
{
    *out = *d;
    out->supported_segments &= mask;
    unsigned k = 0;
    for (unsigned i = 0; i < GMC_MAX_PREFERRED_SEGMENTS; i++) {
        unsigned id = d->preferred[i].id;
        if (id == 0u)
            break;
        if (mask & GMC_SEGMENT_BIT(id))
            out->preferred[k++] = d->preferred[i];
    }
    for (; k < GMC_MAX_PREFERRED_SEGMENTS; k++)
        out->preferred[k] = (struct gmc_segment_pref){ 0, 0 };
    if (out->preferred[0].id != d->preferred[0].id)
        memset(out->hinted_banks, 0, sizeof(out->hinted_banks));
}

/* The victims a scan looked at, in victim order. */
struct victims {
    struct gmc_valloc **v;
    size_t n, cap;
};

/*
 * The eviction scan, after drm_mm's: walk the segment's eviction
 * candidates in victim order (gmc_cand.h), adding each to the scan, until
 * the free space around them (holes plus victims already added) holds an
 * aligned range of sz->placed bytes; evicting only the victims inside that
 * range then makes room, and victims elsewhere stay. vs gets the victims
 * looked at (a prefix of the victim order); *upto is how many when they
 * open a range, 0 when none does (then every candidate was looked at);
 * *win is the range's start. Nothing but the segment's candidates is
 * visited.
 */
static int scan_window(gmc_device *dev, unsigned seg, const struct gmc_valloc *except,
                       const struct gmc_place_size *sz, struct victims *vs, uint64_t *win, size_t *upto)
{
    struct gmc_range_mgr *m = &dev->seg[seg].mgr;
    const uint64_t mstart = m->head.start, mend = m->last + 1u;
    int rc = GMC_OK;
    vs->n = 0;
    *upto = 0;
    for (struct gmc_valloc *x = gmc_cand_first(dev, seg); x != NULL; x = gmc_cand_next(dev, x)) {
        if (x == except)
            continue;
        if (vs->n == vs->cap) {
            size_t nc = vs->cap ? vs->cap * 2u : 64u;
            struct gmc_valloc **nvp = realloc(vs->v, nc * sizeof(*vs->v));
            if (nvp == NULL) {
                rc = GMC_E_NO_MEMORY;
                break;
            }
            vs->v = nvp;
            vs->cap = nc;
        }
        vs->v[vs->n++] = x;
        x->scan = 1;
        struct gmc_range_node *l = x->node.prev, *r = x->node.next;
        while (l != &m->head && ((struct gmc_valloc *)(void *)l)->scan)
            l = l->prev;
        while (r != &m->head && ((struct gmc_valloc *)(void *)r)->scan)
            r = r->next;
        uint64_t lo = l == &m->head ? mstart : l->start + l->size;
        uint64_t hi = r == &m->head ? mend : r->start;
        uint64_t at = (lo + (sz->align - 1u)) & ~(sz->align - 1u);
        if (at >= lo && at < hi && hi - at >= sz->placed) {
            *win = at;
            *upto = vs->n;
            break;
        }
    }
    for (size_t k = 0; k < vs->n; k++)
        vs->v[k]->scan = 0;
    return rc;
}

int gmc_resid_place(gmc_device *dev, struct gmc_valloc *a, uint32_t mask, int evict,
                    uint64_t *bytes_needed)
{
    if (bytes_needed != NULL)
        *bytes_needed = 0;
    struct gmc_alloc_desc d;
    restrict_desc(&a->desc, mask != 0u ? mask : a->desc.supported_segments, &d);
    struct gmc_placement pl;
    memset(&a->node, 0, sizeof(a->node));
    int rc = gmc_place(dev->seg, dev->nsegs, &d, &a->node, &pl);
    if (rc == GMC_OK) {
        gmc_cand_placed(dev, a, &pl);
        gmc_cand_heat_placed(dev, a);
        return GMC_OK;
    }
    if (rc != GMC_E_NO_SPACE || !evict)
        return rc;
    unsigned order[GMC_MAX_PREFERRED_SEGMENTS + 32u];
    unsigned n = gmc_place_order(dev->nsegs, &d, order);
    uint64_t best_deficit = UINT64_MAX;
    struct victims vs = { NULL, 0, 0 };
    for (unsigned k = 0; k < n; k++) {
        struct gmc_vseg *s = &dev->seg[order[k]];
        struct gmc_place_size sz;
        if (gmc_place_size(&s->desc, &d, &sz) != GMC_OK || sz.placed > s->desc.size)
            continue;
        /* What evicting every candidate would free (a itself is never one). */
        uint64_t freeable = s->desc.size - s->used + dev->cand_bytes[order[k]];
        if (a->in_cand && a->tree_seg == order[k])
            freeable -= a->cand_size;
        if (freeable < sz.placed) {
            if (sz.placed - freeable < best_deficit)
                best_deficit = sz.placed - freeable;
            continue;
        }
        int join = gmc_cand_admit(dev, a, order[k], sz.placed);
        uint64_t win = 0;
        size_t upto = 0;
        rc = scan_window(dev, order[k], a, &sz, &vs, &win, &upto);
        if (rc != GMC_OK) {
            free(vs.v);
            return rc;
        }
        if (upto > 0u) {
            /* Evict only the victims inside the window the scan found. */
            int hot_out = 0;
            for (size_t i = 0; i < upto; i++) {
                struct gmc_valloc *x = vs.v[i];
                if (x->node.start + x->node.size <= win || x->node.start >= win + sz.placed)
                    continue;
                hot_out |= x->hot;
                rc = gmc_resid_evict_one(dev, x);
                if (rc != GMC_OK) {
                    free(vs.v);
                    return rc;
                }
            }
            /* The cold allocations could not make room: the hot set keeps
             * only what stays. */
            if (hot_out)
                dev->hot_budget[order[k]] = dev->hot_bytes[order[k]];
            struct gmc_alloc_desc one;
            restrict_desc(&d, GMC_SEGMENT_BIT(order[k] + 1u), &one);
            memset(&a->node, 0, sizeof(a->node));
            if (gmc_place(dev->seg, dev->nsegs, &one, &a->node, &pl) == GMC_OK) {
                free(vs.v);
                gmc_cand_placed(dev, a, &pl);
                gmc_cand_set_hot(dev, a, join);
                return GMC_OK;
            }
        }
        /* Fragmented by allocations that cannot move. */
        struct gmc_range_stats st;
        gmc_range_get_stats(&s->mgr, &st);
        uint64_t deficit = sz.placed > st.largest_hole ? sz.placed - st.largest_hole : 1u;
        if (deficit < best_deficit)
            best_deficit = deficit;
    }
    free(vs.v);
    if (bytes_needed != NULL)
        *bytes_needed = best_deficit == UINT64_MAX ? a->sz.placed : best_deficit;
    return GMC_E_NO_SPACE;
}

/* --------------------------------------------------------- system copy */

int gmc_resid_ensure_sys(gmc_device *dev, struct gmc_valloc *a)
{
    if (a->sys.host != NULL)
        return GMC_OK;
    return gmc_sysmem_alloc(dev->pg, content_size(a), &a->sys);
}

static void fill_host(void *p, uint64_t n, uint32_t pattern)
{
    uint8_t *b = p;
    for (uint64_t i = 0; i < n; i++)
        b[i] = (uint8_t)(pattern >> (8u * (i & 3u)));
}

void gmc_resid_fill_sys(gmc_device *dev, struct gmc_valloc *a)
{
    fill_host(a->sys.host, a->sys.size, fill_pattern(a));
    dev->stats.bytes_filled += a->sys.size;
    a->sys_valid = 1;
    a->state |= GMC_ALLOC_STATE_HAS_CONTENT;
    a->state &= ~(uint32_t)(GMC_ALLOC_STATE_ZERO_PENDING | GMC_ALLOC_STATE_LOST);
}

/* SynchronousPaging: wait for the allocation to go idle before paging. */
static int sync_before(gmc_device *dev, struct gmc_valloc *a)
{
    if (!(a->desc.flags & GMC_ALLOC_SYNCHRONOUS_PAGING) || a->busy_fence == 0u)
        return GMC_OK;
    return gmc_resid_wait(dev, a->busy_fence);
}

static void sync_after(gmc_device *dev, struct gmc_valloc *a, uint64_t fence)
{
    a->paging_fence = fence;
    if ((a->desc.flags & GMC_ALLOC_SYNCHRONOUS_PAGING) && fence > dev->sync_wait_fence)
        dev->sync_wait_fence = fence;
}

_Static_assert(offsetof(struct gmc_valloc, node) == 0, "a range node is its allocation");

int gmc_resid_rename_placement(gmc_device *dev, struct gmc_valloc *a, uint32_t mask)
{
    if (a->node.mgr == NULL)
        return GMC_E_INTERNAL;
    struct gmc_alloc_desc d;
    restrict_desc(&a->desc, mask, &d);
    struct gmc_range_node *fresh = calloc(1, sizeof(*fresh));
    /* The held range's node is a (blank) allocation's: scan_window() looks
     * at every node of a segment as an allocation. */
    struct gmc_valloc *holder = calloc(1, sizeof(*holder));
    struct gmc_range_node *hold = holder != NULL ? &holder->node : NULL;
    struct gmc_deferred *def = calloc(1, sizeof(*def));
    struct gmc_placement pl;
    if (fresh == NULL || hold == NULL || def == NULL) {
        free(fresh);
        free(hold);
        free(def);
        return GMC_E_NO_MEMORY;
    }
    /* The CPU writes the new range at once: queued work that still reads
     * a range released from these segments (an eviction's copy-out) must
     * be done first. */
    uint64_t ff = 0;
    for (unsigned i = 0; i < dev->nsegs; i++)
        if ((mask & GMC_SEGMENT_BIT(i + 1u)) && dev->freed_fence[i] > ff)
            ff = dev->freed_fence[i];
    int rc = ff > gmc_paging_completed(dev->pg) ? gmc_resid_wait(dev, ff) : GMC_OK;
    if (rc == GMC_OK)
        rc = gmc_place(dev->seg, dev->nsegs, &d, fresh, &pl);
    if (rc != GMC_OK) {
        free(fresh);
        free(hold);
        free(def);
        return rc;
    }
    uint64_t new_start = fresh->start;
    gmc_range_remove(&dev->seg[pl.index].mgr, fresh);
    free(fresh);
    /* The old range stays reserved (unaccounted) until the GPU is done. */
    unsigned old_seg = a->seg;
    uint64_t old_start = a->node.start, old_size = a->sz.placed;
    int was_hot = a->hot;
    uint64_t hot_seq = a->hot_seq;
    gmc_cand_unplace(dev, a);
    memset(&a->node, 0, sizeof(a->node));
    if (gmc_range_reserve(&dev->seg[old_seg].mgr, hold, old_start, old_size) != GMC_RANGE_OK ||
        gmc_range_reserve(&dev->seg[pl.index].mgr, &a->node, new_start, pl.sz.placed) != GMC_RANGE_OK) {
        free(hold);
        free(def);
        return GMC_E_INTERNAL; /* both ranges were just free */
    }
    gmc_cand_placed(dev, a, &pl);
    if (was_hot) { /* a new range, the same standing */
        gmc_cand_set_hot(dev, a, 1);
        a->hot_seq = hot_seq;
        gmc_cand_sync(dev, a);
    }
    def->node = hold;
    def->seg = old_seg;
    def->fence = gmc_paging_last_issued(dev->pg);
    def->next = dev->deferred;
    dev->deferred = def;
    return GMC_OK;
}

/* ------------------------------------------------------------ page-in */

static int map_aperture(gmc_device *dev, struct gmc_valloc *a, uint64_t gpu, uint64_t *fence)
{
    struct gmc_paging_args m = { .op = GMC_PAGING_MAP_APERTURE_SEGMENT };
    m.u.map.gpu_address = gpu;
    m.u.map.pages = a->sys.npages < a->sz.placed / GMC_PAGE_SIZE ? a->sys.npages : a->sz.placed / GMC_PAGE_SIZE;
    m.u.map.mdl = &a->sys;
    m.u.map.mdl_offset = 0;
    m.u.map.snooped = (dev->seg[a->seg].desc.flags & GMC_SEGFLAGS_CACHE_COHERENT_MASK) != 0u;
    m.u.map.readable = 1;
    m.u.map.writeable = 1;
    return gmc_resid_queue(dev, &m, fence);
}

int gmc_resid_page_in(gmc_device *dev, struct gmc_valloc *a)
{
    if (a->node.mgr == NULL)
        return GMC_E_INTERNAL;
    if (a->gpu_valid)
        return GMC_OK;
    int rc = sync_before(dev, a);
    if (rc != GMC_OK)
        return rc;
    struct gmc_vseg *s = &dev->seg[a->seg];
    uint64_t f = 0;
    if (gmc_cand_is_protected(a) && !gmc_vseg_is_aperture(s)) {
        /* Queued copies out of ranges released from this segment must
         * finish before the range is protected. */
        rc = gmc_resid_wait(dev, dev->freed_fence[a->seg]);
        if (rc == GMC_OK)
            rc = gmc_cand_protect(dev, a, NULL);
        if (rc != GMC_OK)
            return rc;
    }
    if (gmc_vseg_is_aperture(s)) {
        rc = gmc_resid_ensure_sys(dev, a);
        if (rc != GMC_OK)
            return rc;
        if (!a->sys_valid)
            gmc_resid_fill_sys(dev, a);
        rc = map_aperture(dev, a, a->node.start, &f);
        if (rc != GMC_OK)
            return rc;
        a->pend = PEND_MAP;
    } else if (a->sys_valid) {
        struct gmc_paging_args t = { .op = GMC_PAGING_TRANSFER };
        uint64_t n = xfer_size(a);
        t.u.transfer.size = n;
        t.u.transfer.flags = GMC_PAGING_TRANSFER_START | GMC_PAGING_TRANSFER_END;
        t.u.transfer.src.mdl = &a->sys;
        t.u.transfer.dst.segment_id = s->desc.id;
        t.u.transfer.dst.segment_address = a->node.start;
        rc = gmc_resid_queue(dev, &t, &f);
        if (rc != GMC_OK)
            return rc;
        dev->stats.bytes_paged_in += n;
        a->pend = PEND_PAGE_IN;
        /* The system copy stays, current until something writes the VRAM
         * copy (a submission with GMC_REF_WRITE, a write lock on the BAR):
         * evicting a clean allocation then drops the VRAM copy. */
    } else {
        struct gmc_paging_args fl = { .op = GMC_PAGING_FILL };
        fl.u.fill.gpu_address = a->node.start;
        fl.u.fill.size = a->sz.size;
        fl.u.fill.pattern = fill_pattern(a);
        rc = gmc_resid_queue(dev, &fl, &f);
        if (rc != GMC_OK)
            return rc;
        dev->stats.bytes_filled += a->sz.size;
        a->pend = PEND_FILL;
        a->state |= GMC_ALLOC_STATE_HAS_CONTENT;
        a->state &= ~(uint32_t)(GMC_ALLOC_STATE_ZERO_PENDING | GMC_ALLOC_STATE_LOST);
        if (a->keep_sys && a->sys.host != NULL) {
            fill_host(a->sys.host, a->sys.size, fill_pattern(a));
            a->sys_valid = 1;
        }
    }
    a->gpu_valid = 1;
    sync_after(dev, a, f);
    dev->stats.page_ins++;
    return queue_notify(dev, a, 1);
}

/* ------------------------------------------------------------ eviction */

/* Copy the placed VRAM content to the system copy; through an aperture of
 * the EvictionSegmentSet when one has room under its 80 % limit. */
static int copy_out(gmc_device *dev, struct gmc_valloc *a, uint64_t *fence)
{
    int rc = gmc_resid_ensure_sys(dev, a);
    if (rc != GMC_OK)
        return rc;
    struct gmc_vseg *src = &dev->seg[a->seg];
    uint64_t n = xfer_size(a);
    uint64_t pages = a->sys.npages;
    for (unsigned i = 0; i < dev->nsegs && a->desc.eviction_segments != 0u; i++) {
        struct gmc_vseg *ap = &dev->seg[i];
        if (!(a->desc.eviction_segments & GMC_SEGMENT_BIT(i + 1u)) || !gmc_vseg_is_aperture(ap))
            continue;
        uint64_t bytes = pages * GMC_PAGE_SIZE;
        /* Eviction mappings never take more than 80 % of an aperture. */
        if (bytes > gmc_eviction_limit(ap->desc.size))
            continue;
        struct gmc_range_node *node = calloc(1, sizeof(*node));
        if (node == NULL)
            return GMC_E_NO_MEMORY;
        if (gmc_range_insert(&ap->mgr, node, bytes, GMC_PAGE_SIZE, GMC_RANGE_BEST) != GMC_RANGE_OK) {
            free(node);
            continue;
        }
        struct gmc_paging_args m = { .op = GMC_PAGING_MAP_APERTURE_SEGMENT };
        m.u.map.gpu_address = node->start;
        m.u.map.pages = pages;
        m.u.map.mdl = &a->sys;
        m.u.map.snooped = (ap->desc.flags & GMC_SEGFLAGS_CACHE_COHERENT_MASK) != 0u;
        m.u.map.readable = 1;
        m.u.map.writeable = 1;
        struct gmc_paging_args t = { .op = GMC_PAGING_TRANSFER };
        t.u.transfer.size = n;
        t.u.transfer.flags = GMC_PAGING_TRANSFER_START | GMC_PAGING_TRANSFER_END;
        t.u.transfer.src.segment_id = src->desc.id;
        t.u.transfer.src.segment_address = a->node.start;
        t.u.transfer.dst.segment_id = ap->desc.id;
        t.u.transfer.dst.segment_address = node->start;
        struct gmc_paging_args u = { .op = GMC_PAGING_UNMAP_APERTURE_SEGMENT };
        u.u.map.gpu_address = node->start;
        u.u.map.pages = pages;
        rc = gmc_resid_queue(dev, &m, NULL);
        if (rc == GMC_OK)
            rc = gmc_resid_queue(dev, &t, NULL);
        if (rc == GMC_OK)
            rc = gmc_resid_queue(dev, &u, fence);
        /* The aperture range is free for the next eviction once the unmap
         * is queued: later maps are ordered after it. */
        gmc_range_remove(&ap->mgr, node);
        free(node);
        if (rc != GMC_OK)
            return rc;
        dev->stats.evictions_via_aperture++;
        dev->stats.bytes_paged_out += n;
        return GMC_OK;
    }
    struct gmc_paging_args t = { .op = GMC_PAGING_TRANSFER };
    t.u.transfer.size = n;
    t.u.transfer.flags = GMC_PAGING_TRANSFER_START | GMC_PAGING_TRANSFER_END;
    t.u.transfer.src.segment_id = src->desc.id;
    t.u.transfer.src.segment_address = a->node.start;
    t.u.transfer.dst.mdl = &a->sys;
    rc = gmc_resid_queue(dev, &t, fence);
    if (rc == GMC_OK)
        dev->stats.bytes_paged_out += n;
    return rc;
}

/* Copy the placed content to the system copy, which then holds it. */
static int write_back(gmc_device *dev, struct gmc_valloc *a, int pend)
{
    uint64_t f = 0;
    int rc = gmc_cand_is_protected(a) ? gmc_cand_protect(dev, NULL, a) : GMC_OK; /* the library's own copy */
    if (rc == GMC_OK)
        rc = copy_out(dev, a, &f);
    if (rc != GMC_OK)
        return rc;
    a->sys_valid = 1;
    a->pend = pend;
    sync_after(dev, a, f);
    return GMC_OK;
}

int gmc_resid_save(gmc_device *dev, struct gmc_valloc *a)
{
    if (a->node.mgr == NULL || !a->gpu_valid || a->sys_valid || gmc_vseg_is_aperture(&dev->seg[a->seg]))
        return GMC_OK;
    int rc = sync_before(dev, a);
    return rc == GMC_OK ? write_back(dev, a, PEND_SAVE_KEEP) : rc;
}

int gmc_resid_evict_one(gmc_device *dev, struct gmc_valloc *a)
{
    if (a->node.mgr == NULL)
        return GMC_OK;
    int rc = queue_notify(dev, a, 0);
    if (rc == GMC_OK)
        rc = sync_before(dev, a);
    if (rc != GMC_OK)
        return rc;
    struct gmc_vseg *s = &dev->seg[a->seg];
    uint64_t f = 0;
    if (gmc_vseg_is_aperture(s)) {
        if (a->gpu_valid) {
            struct gmc_paging_args u = { .op = GMC_PAGING_UNMAP_APERTURE_SEGMENT };
            u.u.map.gpu_address = a->node.start;
            u.u.map.pages = a->sz.placed / GMC_PAGE_SIZE;
            rc = gmc_resid_queue(dev, &u, &f);
            if (rc != GMC_OK)
                return rc;
            sync_after(dev, a, f);
        }
        dev->stats.discards++;
    } else if (a->gpu_valid && a->sys_valid) {
        dev->stats.discards++; /* clean: the system copy already holds it */
    } else if (a->gpu_valid) {
        rc = write_back(dev, a, PEND_EVICT);
        if (rc != GMC_OK)
            return rc;
    }
    gmc_cand_unplace(dev, a); /* cold from now on */
    a->refault = (a->state & GMC_ALLOC_STATE_HAS_CONTENT) != 0u;
    dev->stats.evictions++;
    for (gmc_client *c = dev->clients; c != NULL; c = c->next)
        if (c->serial == a->creator) {
            c->evictions++;
            break;
        }
    return GMC_OK;
}

/* ------------------------------------------------------------ waiting */

static void recover(gmc_device *dev)
{
    uint64_t done = 0;
    /* The controller reset below zeroes the performance counters: keep
     * what they counted so far (gmc_device_hw_counters adds it back). */
    struct gmc_hw_counters hw;
    if (gmc_device_hw_counters(dev, &hw) == GMC_OK)
        dev->hw_base = hw;
    (void)gmc_paging_reset(dev->pg, &done);
    /* The engine reset cannot take back transactions a hung bus still owes
     * (each keeps an outstanding slot until answered), so reset the whole
     * controller as DxgkDdiResetFromTimeout does, then program the queue
     * again. VRAM and the page table survive. */
    if (dev->kmd.ddi->reset_from_timeout(&dev->kmd) == GMC_OK)
        (void)gmc_paging_restart(dev->pg);
    uint64_t recovered = 0, lost = 0;
    for (struct gmc_valloc *a = dev->allocs; a != NULL; a = a->dnext) {
        int was_lost = 0;
        if (a->paging_fence > done) {
            switch (a->pend) {
            case PEND_PAGE_IN:
            case PEND_MAP:
            case PEND_FILL:
                /* The placed copy is incomplete; the system copy (if any)
                 * is still whole (a page-in keeps it). Page it in again
                 * when it is needed. */
                if (a->pend == PEND_FILL)
                    a->state &= ~(uint32_t)GMC_ALLOC_STATE_HAS_CONTENT;
                gmc_cand_unplace(dev, a);
                break;
            case PEND_SAVE_KEEP:
                a->sys_valid = 0; /* the placed copy is intact */
                break;
            case PEND_EVICT:
            case PEND_MOVE:
                was_lost = 1;
                break;
            default:
                break;
            }
        }
        if (a->write_fence > done)
            was_lost = 1; /* a submission that wrote it never completed */
        if (was_lost) {
            gmc_cand_unplace(dev, a);
            a->sys_valid = 0;
            a->state &= ~(uint32_t)GMC_ALLOC_STATE_HAS_CONTENT;
            a->state |= GMC_ALLOC_STATE_LOST;
            lost++;
        } else if (a->state & GMC_ALLOC_STATE_HAS_CONTENT) {
            recovered++;
        }
        a->pend = PEND_NONE;
        if (a->paging_fence > done)
            a->paging_fence = done;
        if (a->busy_fence > done)
            a->busy_fence = done;
        if (a->write_fence > done)
            a->write_fence = done;
    }
    reap(dev, 1);
    dev->sync_wait_fence = 0;
    dev->recovery.resets++;
    dev->recovery.recovered = recovered;
    dev->recovery.lost = lost;
    dev->recovery.fence_completed = done;
    dev->stats.resets++;
    (void)gmc_cand_protect(dev, NULL, NULL); /* the reset cleared the ranges too */
}

int gmc_resid_wait(gmc_device *dev, uint64_t fence)
{
    if (fence == 0u)
        return GMC_OK;
    int rc = gmc_paging_wait(dev->pg, fence, dev->tdr_cycles);
    if (rc == GMC_OK) {
        reap(dev, 0);
        return GMC_OK;
    }
    if (rc == GMC_E_TIMEOUT || rc == GMC_E_FAULT) {
        if (rc == GMC_E_FAULT)
            dev->stats.faults++;
        recover(dev);
        return GMC_E_DEVICE_RESET;
    }
    return rc;
}

static int wait_all(gmc_device *dev)
{
    return gmc_resid_wait(dev, gmc_paging_last_issued(dev->pg));
}

/* ------------------------------------------------------- device hooks */

int gmc_resid_init(gmc_device *dev, uint32_t pbuf_bytes, uint64_t tdr_cycles)
{
    const uint32_t engine = (dev->adapter.caps & GMC_CAPS_DMA_ENGINE_MASK) >> GMC_CAPS_DMA_ENGINE_LSB;
    dev->tdr_cycles = tdr_cycles != 0u ? tdr_cycles
                      : DEFAULT_TDR_CYCLES * (engine == GMC_DMA_ENGINE_COMPACT ? COMPACT_TDR_FACTOR : 1u);
    dev->no_paging_status = GMC_E_UNSUPPORTED;
    gmc_cand_init(dev);
    for (unsigned i = 0; i < GMC_MAX_SEGMENTS; i++)
        dev->hot_budget[i] = UINT64_MAX; /* until a hot allocation must be evicted */
    if (!(dev->adapter.caps & GMC_CAPS_DMA_MASK))
        return GMC_OK; /* no paging engine: residency answers GMC_E_UNSUPPORTED */
    struct gmc_paging_config cfg;
    gmc_paging_config_default(&cfg);
    if (pbuf_bytes != 0u)
        cfg.buffer_bytes = pbuf_bytes;
    int rc = gmc_paging_init(&dev->kmd, &dev->adapter, &cfg, &dev->pg);
    if (rc == GMC_E_UNSUPPORTED || rc == GMC_E_PCI_NO_VFIO) {
        /* e.g. a backend that cannot wait, or a PCI device without VFIO:
         * no paging; paging calls answer why (GMC_E_PCI_NO_VFIO names the fix) */
        dev->pg = NULL;
        dev->no_paging_status = rc;
        return GMC_OK;
    }
    if (rc != GMC_OK)
        return rc;
    gmc_paging_set_notify(dev->pg, on_notify, dev);
    return gmc_resid_clear_gart(dev);
}

int gmc_resid_clear_gart(gmc_device *dev)
{
    /* Every aperture page starts on the dummy page (WDDM: unmapped pages
     * stay GPU-accessible), whatever VRAM held. */
    if (dev->adapter.aperture_pages == 0u)
        return GMC_OK;
    struct gmc_paging_args u = { .op = GMC_PAGING_UNMAP_APERTURE_SEGMENT };
    u.u.map.gpu_address = dev->adapter.aperture_base;
    u.u.map.pages = dev->adapter.aperture_pages;
    uint64_t f = 0;
    int rc = gmc_resid_queue(dev, &u, &f);
    return rc == GMC_OK ? gmc_resid_wait(dev, f) : rc;
}

void gmc_resid_fini(gmc_device *dev)
{
    if (dev->pg == NULL)
        return;
    (void)gmc_paging_idle(dev->pg, dev->tdr_cycles);
    reap(dev, 1);
    gmc_paging_fini(dev->pg);
    dev->pg = NULL;
}

int gmc_resid_create(gmc_device *dev, struct gmc_valloc *a)
{
    a->serial = ++dev->alloc_serial;
    uint32_t sysflags = GMC_ALLOC_PERMANENT_SYS_MEM | GMC_ALLOC_EXISTING_SYS_MEM |
                        GMC_ALLOC_EXISTING_KERNEL_SYS_MEM;
    a->keep_sys = (a->desc.flags & sysflags) != 0u || (a->desc.kmt_flags & GMC_KMT_EXISTING_SYS_MEM);
    int rc = GMC_OK;
    if (a->keep_sys && dev->pg != NULL) {
        if (a->desc.system_mem != NULL) {
            /* ExistingSysMem: the caller's memory is the system copy and
             * already holds the content. */
            rc = gmc_sysmem_wrap(dev->pg, (void *)(uintptr_t)a->desc.system_mem,
                                 a->desc.system_mem_size, &a->sys);
            if (rc == GMC_OK) {
                a->sys_valid = 1;
                a->state |= GMC_ALLOC_STATE_HAS_CONTENT;
            }
        } else {
            rc = gmc_resid_ensure_sys(dev, a);
        }
        if (rc != GMC_OK)
            return rc;
    }
    int pinned = (a->state & GMC_ALLOC_STATE_PINNED) != 0u;
    rc = gmc_resid_place(dev, a, 0u, 0, NULL);
    if (rc == GMC_E_NO_SPACE && !pinned)
        rc = GMC_OK; /* placed when first made resident */
    if (rc == GMC_OK && pinned && dev->pg != NULL)
        rc = gmc_resid_page_in(dev, a);
    if (rc != GMC_OK) {
        gmc_cand_unplace(dev, a);
        if (a->desc.system_mem != NULL)
            gmc_sysmem_free(dev->pg, &a->sys);
        else if (a->sys.host != NULL)
            gmc_sysmem_free(dev->pg, &a->sys);
        return rc;
    }
    gmc_cand_touch(dev, a);
    gmc_cand_link(dev, a);
    return GMC_OK;
}

void gmc_resid_destroy(gmc_device *dev, struct gmc_valloc *a)
{
    gmc_cand_unlink(dev, a);
    gmc_cand_unplace(dev, a);
    if (a->sys.host != NULL) {
        if (a->desc.system_mem != NULL) {
            /* The caller's memory: the engine must be done with it now. */
            if (a->paging_fence > 0u || a->busy_fence > 0u)
                (void)gmc_resid_wait(dev, a->paging_fence > a->busy_fence ? a->paging_fence
                                                                         : a->busy_fence);
            gmc_sysmem_free(dev->pg, &a->sys);
        } else {
            gmc_resid_defer_sysbuf(dev, &a->sys);
        }
    }
}

/* ---------------------------------------------------------- public API */

static int need_paging(const gmc_device *dev)
{
    if (dev->pg == NULL)
        return dev->no_paging_status;
    if (dev->power != GMC_POWER_D0)
        return GMC_E_POWER_STATE;
    return GMC_OK;
}

/* Place and page in; the allocation becomes GPU-accessible. */
static int bring_in(gmc_device *dev, struct gmc_valloc *a, uint64_t *needed)
{
    int rc = GMC_OK;
    if (a->node.mgr == NULL)
        rc = gmc_resid_place(dev, a, 0u, 1, needed);
    if (rc == GMC_OK)
        rc = gmc_resid_page_in(dev, a);
    return rc;
}

int gmc_make_resident(gmc_client *c, const gmc_handle *h, unsigned n,
                      struct gmc_residency_result *res)
{
    if (res != NULL)
        memset(res, 0, sizeof(*res));
    if (c == NULL || (h == NULL && n > 0u))
        return GMC_E_NULL_POINTER;
    if (res != NULL)
        res->failed_index = n;
    gmc_device *dev = c->dev;
    struct gmc_vref **refs = calloc(n ? n : 1u, sizeof(*refs));
    if (refs == NULL)
        return GMC_E_NO_MEMORY;
    int rc = GMC_OK;
    for (unsigned i = 0; i < n; i++) {
        refs[i] = gmc_vidmm_ref(c, h[i]);
        if (refs[i] == NULL) {
            if (res != NULL)
                res->failed_index = i;
            free(refs);
            return GMC_E_BAD_HANDLE;
        }
    }
    rc = need_paging(dev);
    if (rc != GMC_OK) {
        free(refs);
        return rc;
    }
    dev->stats.make_resident_calls++;
    /* Take the references first, so nothing this call brings in is chosen
     * as a victim by a later one of its own handles. */
    for (unsigned i = 0; i < n; i++) {
        refs[i]->resident++;
        refs[i]->alloc->resident++;
        gmc_cand_sync(dev, refs[i]->alloc);
    }
    uint64_t before = gmc_paging_last_issued(dev->pg);
    for (unsigned i = 0; i < n && rc == GMC_OK; i++) {
        struct gmc_valloc *a = refs[i]->alloc;
        uint64_t needed = 0;
        rc = bring_in(dev, a, &needed);
        if (rc != GMC_OK) {
            if (res != NULL) {
                res->failed_index = i;
                res->bytes_needed = needed;
            }
            break;
        }
        gmc_cand_touch(dev, a);
    }
    if (rc != GMC_OK) {
        for (unsigned i = 0; i < n; i++) {
            refs[i]->resident--;
            refs[i]->alloc->resident--;
            gmc_cand_sync(dev, refs[i]->alloc);
        }
    }
    uint64_t after = dev->pg != NULL ? gmc_paging_last_issued(dev->pg) : 0u;
    if (res != NULL && after > before)
        res->paging_fence = after;
    if (rc == GMC_OK && after > before)
        rc = gmc_paging_flush(dev->pg);
    free(refs);
    return rc;
}

int gmc_evict(gmc_client *c, const gmc_handle *h, unsigned n)
{
    if (c == NULL || (h == NULL && n > 0u))
        return GMC_E_NULL_POINTER;
    /* Count per handle first: a handle listed twice needs two references. */
    for (unsigned i = 0; i < n; i++) {
        struct gmc_vref *r = gmc_vidmm_ref(c, h[i]);
        if (r == NULL)
            return GMC_E_BAD_HANDLE;
        uint32_t want = 0;
        for (unsigned j = 0; j < n; j++)
            if (h[j] == h[i])
                want++;
        if (r->resident < want)
            return GMC_E_NOT_RESIDENT;
    }
    c->dev->stats.evict_calls++;
    for (unsigned i = 0; i < n; i++) {
        struct gmc_vref *r = gmc_vidmm_ref(c, h[i]);
        r->resident--;
        r->alloc->resident--;
        gmc_cand_sync(c->dev, r->alloc);
    }
    return GMC_OK;
}

int gmc_client_set_residency_callback(gmc_client *c, gmc_residency_fn fn, void *user)
{
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    c->notify_fn = fn;
    c->notify_user = fn != NULL ? user : NULL;
    return GMC_OK;
}

/* ---------------------------------------------------------- submission */

uint32_t gmc_resid_aperture_mask(const gmc_device *dev)
{
    uint32_t mask = 0;
    for (unsigned i = 0; i < dev->nsegs; i++)
        if (gmc_vseg_is_aperture(&dev->seg[i]))
            mask |= GMC_SEGMENT_BIT(i + 1u);
    return mask;
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
    int rc = gmc_resid_evict_one(dev, a);
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
    if (a->node.mgr != NULL) {
        /* Drop the VRAM copy once the GPU work that used it completed (the
         * lock waited for it, unless it renamed). */
        uint64_t until = a->busy_fence > a->paging_fence ? a->busy_fence : a->paging_fence;
        if (until > gmc_paging_completed(dev->pg)) {
            int rc = gmc_resid_wait(dev, until);
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

int gmc_submit(gmc_client *c, const struct gmc_submit *s, uint64_t *fence)
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
        rc = need_paging(dev);
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
    /* Every referenced allocation GPU-accessible. */
    for (unsigned i = 0; i < s->nrefs && rc == GMC_OK; i++) {
        struct gmc_valloc *a = al[i];
        if (a->locker != NULL)
            rc = reach_locked(dev, a);
        else if (!(a->node.mgr != NULL && a->gpu_valid))
            rc = bring_in(dev, a, NULL);
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
    if (rc == GMC_OK && dev->sync_wait_fence > gmc_paging_completed(dev->pg)) {
        dev->stats.sync_waits++;
        rc = gmc_resid_wait(dev, dev->sync_wait_fence);
    }
    uint64_t f = 0;
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
        rc = gmc_resid_queue(dev, &x, &f);
    }
    if (rc == GMC_OK && f == 0u)
        f = gmc_paging_last_issued(dev->pg);
    if (rc == GMC_OK)
        rc = gmc_paging_flush(dev->pg);
    if (rc == GMC_OK) {
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
        dev->stats.submits++;
        if (fence != NULL)
            *fence = f;
    }
    free(al);
    return rc;
}

int gmc_fence_wait(gmc_device *dev, uint64_t fence, uint64_t timeout_us)
{
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    if (dev->pg == NULL)
        return dev->no_paging_status;
    if (fence > gmc_paging_last_issued(dev->pg))
        return GMC_E_INVALID_ARG;
    uint64_t keep = dev->tdr_cycles;
    if (timeout_us != 0u && timeout_us < UINT64_MAX / CYCLES_PER_US)
        dev->tdr_cycles = timeout_us * CYCLES_PER_US;
    int rc = gmc_resid_wait(dev, fence);
    dev->tdr_cycles = keep;
    return rc;
}

uint64_t gmc_fence_completed(gmc_device *dev)
{
    return dev != NULL && dev->pg != NULL ? gmc_paging_completed(dev->pg) : 0u;
}

int gmc_device_recovery(const gmc_device *dev, struct gmc_recovery_report *out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    memset(out, 0, sizeof(*out));
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    *out = dev->recovery;
    return GMC_OK;
}

int gmc_resid_wait_all(gmc_device *dev)
{
    return dev->pg != NULL ? wait_all(dev) : GMC_OK;
}

/* The controller's counters (gmc.h). Here, beside the TDR that keeps
 * their base across a controller reset, so that the reset path reads them
 * without calling up into gmc_device.c. */
int gmc_device_hw_counters(gmc_device *dev, struct gmc_hw_counters *out)
{
    if (out != NULL)
        memset(out, 0, sizeof(*out));
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    if (dev->power != GMC_POWER_D0)
        return GMC_E_POWER_STATE;
    /* Reading a counter's LO half latches its HI half: one 64-bit value. */
    static const struct {
        uint32_t lo;
        size_t at;
    } map[] = {
        { GMC_REG_CNT_DMA_RD_VRAM_LO, offsetof(struct gmc_hw_counters, dma_rd_vram) },
        { GMC_REG_CNT_DMA_WR_VRAM_LO, offsetof(struct gmc_hw_counters, dma_wr_vram) },
        { GMC_REG_CNT_DMA_RD_SYS_LO, offsetof(struct gmc_hw_counters, dma_rd_sys) },
        { GMC_REG_CNT_DMA_WR_SYS_LO, offsetof(struct gmc_hw_counters, dma_wr_sys) },
        { GMC_REG_CNT_DMA_RD_APERTURE_LO, offsetof(struct gmc_hw_counters, dma_rd_aperture) },
        { GMC_REG_CNT_DMA_WR_APERTURE_LO, offsetof(struct gmc_hw_counters, dma_wr_aperture) },
        { GMC_REG_CNT_DMA_PACKETS_LO, offsetof(struct gmc_hw_counters, dma_packets) },
        { GMC_REG_CNT_DMA_FAULTS_LO, offsetof(struct gmc_hw_counters, dma_faults) },
        { GMC_REG_CNT_DMA_BUSY_LO, offsetof(struct gmc_hw_counters, dma_busy_cycles) },
        { GMC_REG_CNT_TLB_HIT_LO, offsetof(struct gmc_hw_counters, tlb_hits) },
        { GMC_REG_CNT_TLB_MISS_LO, offsetof(struct gmc_hw_counters, tlb_misses) },
        { GMC_REG_CNT_DUMMY_HIT_LO, offsetof(struct gmc_hw_counters, dummy_hits) },
        { GMC_REG_CNT_APERTURE_RD_LO, offsetof(struct gmc_hw_counters, aperture_rd_bytes) },
        { GMC_REG_CNT_APERTURE_WR_LO, offsetof(struct gmc_hw_counters, aperture_wr_bytes) },
    };
    struct gmc_hw_counters hw;
    memset(&hw, 0, sizeof(hw));
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        uint64_t v = 0;
        int rc = gmc_kmd_read64(&dev->kmd, map[i].lo, &v);
        if (rc != GMC_OK)
            return rc;
        uint64_t base;
        memcpy(&base, (const uint8_t *)&dev->hw_base + map[i].at, sizeof(base));
        v += base; /* since the device was opened, across controller resets */
        memcpy((uint8_t *)&hw + map[i].at, &v, sizeof(v));
    }
    hw.valid = 1;
    dev->stats.hw = hw;
    if (out != NULL)
        *out = hw;
    return GMC_OK;
}
