/*
 * gmc_resid.c - residency: placement under pressure (the eviction scan),
 * page-in, eviction and write-back, the system copy, creation and
 * destruction of an allocation's residency state, MakeResident and Evict.
 * The victim order and hot-set rules are gmc_victim.c's (pure functions),
 * the candidate trees gmc_cand.c's, fences and the TDR path gmc_fence.c's,
 * submissions gmc_submit.c's: calls go gmc_submit -> gmc_resid ->
 * gmc_fence -> gmc_cand -> gmc_victim, never back.
 *
 * DOC: Overview
 *
 * docs/residency.md is the contract. The bookkeeping is optimistic: when
 * a paging operation is queued, the allocation's state (placed, which
 * copy holds the content) changes at once, as if the operation had
 * completed. This is safe because the engine executes in queue order and
 * every CPU access to an allocation first waits for that allocation's
 * last paging fence. If a fence never arrives (a TDR), gmc_fence.c undoes
 * what the lost operations promised (each allocation's pend says what its
 * last paging operation did), and reports each allocation as recovered or
 * lost.
 *
 * An allocation's content lives in at most two copies: the placed copy
 * (VRAM, or for an aperture placement the system copy itself, seen
 * through the GART) and the system copy. gpu_valid and sys_valid say
 * which of them hold the current content; with neither, it has none yet
 * (first page-in fills it) or lost it.
 *
 * Eviction picks, among the allocations of one candidate segment that no
 * client references as resident and that are neither pinned nor locked,
 * the lowest priority first; within a priority, the clean allocations
 * (dropped without a copy) before the dirty ones, and within those the
 * cold allocations least recently used first, then the hot ones, the one
 * that joined the hot set last first (ties: the older allocation).
 * Candidate segments are tried in the allocation's placement order
 * (docs/placement.md).
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
 * evict a hot allocation (what comes before it cannot make room), the set
 * was too big for the segment: hot_budget, the segment's size at first,
 * becomes what stays hot. A loop over more than fits thus keeps its hot part
 * resident and pages only the rest, where plain LRU pages every
 * allocation of the loop on every pass.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmc.h"
#include "gmc_budget.h"
#include "gmc_cache.h"
#include "gmc_cand.h"
#include "gmc_check.h"
#include "gmc_fence.h"
#include "gmc_paging.h"
#include "gmc_place.h"
#include "gmc_range.h"
#include "gmc_status.h"
#include "gmc_resid.h"
#include "gmc_vobj.h"
#include "gmc_record.h"

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

/* Swizzled: a memory segment holds the swizzled layout, system memory the
 * linear one (GMC_SWIZZLE_*): copies between them take the flag. */
static uint32_t swizzle(const struct gmc_valloc *a, uint32_t flag)
{
    return (a->desc.flags & GMC_ALLOC_SWIZZLED) ? flag : 0u;
}

static uint32_t fill_pattern(const struct gmc_valloc *a)
{
    return (a->desc.kmt_flags & GMC_KMT_ZEROED) ? 0u : GMC_FILL_UNINITIALISED;
}

static int queue_notify(gmc_device *dev, struct gmc_valloc *a, int resident)
{
    if (!(a->desc.flags & GMC_ALLOC_EXPLICIT_RESIDENCY_NOTIFICATION) || a->notified == resident)
        return GMC_OK;
    struct gmc_paging_args n = { .op = GMC_PAGING_NOTIFY_RESIDENCY };
    n.u.notify.cookie = a->serial;
    n.u.notify.resident = resident;
    uint64_t f = 0;
    int rc = gmc_fence_queue(dev, &n, &f);
    if (rc != GMC_OK)
        return rc;
    a->notified = resident;
    /* "Before evict": the client hears it before the content moves. */
    return resident ? GMC_OK : gmc_fence_await(dev, f);
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

/* One sweep of least_evicted(): candidate window starts in increasing
 * order, each ends_at = 0 the start at or after a victim's end, 1 the start
 * that makes the window end at or before a victim's start (the run's start
 * or end closes the sequence). The window's victims are the nodes between
 * two cursors that only move forward, so a sweep is O(victims in the run). */
struct win_sweep {
    const struct gmc_range_node *first, *stop; /* the run's victims: first .. stop (exclusive) */
    uint64_t lo, hi, n, mask;
    uint64_t best, best_b;                     /* the cheapest window so far */
};

static void sweep(struct win_sweep *w, int ends_at)
{
    const struct gmc_range_node *l = w->first, *r = w->first, *x = w->first;
    const uint64_t up = ~w->mask; /* align - 1 */
    uint64_t bytes = 0;
    int edge = 1; /* the run's own edge is still to try: first when starting, last when ending */
    for (;;) {
        uint64_t at;
        if (!ends_at && edge) {
            at = (w->lo + up) & w->mask;
            edge = 0;
        } else if (x != w->stop) {
            const struct gmc_range_node *v = x;
            x = x->next;
            if (!ends_at)
                at = (v->start + v->size + up) & w->mask;
            else if (v->start >= w->n)
                at = (v->start - w->n) & w->mask;
            else
                continue; /* a window ending there would start below 0 */
        } else if (ends_at && edge) {
            at = (w->hi - w->n) & w->mask;
            edge = 0;
        } else {
            break;
        }
        if (at < w->lo || at > w->hi || w->hi - at < w->n)
            continue;
        while (r != w->stop && r->start < at + w->n) {
            bytes += r->size;
            r = r->next;
        }
        while (l != r && l->start + l->size <= at) {
            bytes -= l->size;
            l = l->next;
        }
        if (bytes < w->best_b || (bytes == w->best_b && at < w->best)) {
            w->best = at;
            w->best_b = bytes;
        }
    }
}

/*
 * The window in the free run [lo, hi) (holes and the scan's victims
 * between the nodes l and r, which stay) whose victims add up to the
 * fewest bytes; the lowest of equal ones. A window that evicts the fewest
 * bytes has an edge at an edge of the run or of a victim, so only those
 * positions are tried: the run's start and the end of each victim (the
 * window starts there), the run's end and the start of each victim (the
 * window ends there), aligned inwards. Two sweeps over the run's victims,
 * which the scan has looked at: O(those victims).
 */
static uint64_t least_evicted(const struct gmc_range_node *l, const struct gmc_range_node *r, uint64_t lo,
                              uint64_t hi, const struct gmc_place_size *sz)
{
    struct win_sweep w = { .first = l->next, .stop = r, .lo = lo, .hi = hi, .n = sz->placed,
                           .mask = ~(sz->align - 1u), .best = UINT64_MAX, .best_b = UINT64_MAX };
    sweep(&w, 0);
    sweep(&w, 1);
    return w.best;
}

/*
 * The eviction scan, after drm_mm's: walk the segment's eviction
 * candidates in victim order (gmc_cand.h), adding each to the scan, until
 * the free space around them (holes plus victims already added) holds an
 * aligned range of sz->placed bytes; evicting only the victims inside that
 * range then makes room, and victims elsewhere stay. vs gets the victims
 * looked at (a prefix of the victim order); *upto is how many when they
 * open a range, 0 when none does (then every candidate was looked at);
 * *win is the range's start: of the free run the victims opened, the
 * window whose victims add up to the fewest bytes (least_evicted). Nothing
 * but the segment's candidates is visited.
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
            *win = least_evicted(l, r, lo, hi, sz);
            *upto = vs->n;
            break;
        }
    }
    for (size_t k = 0; k < vs->n; k++)
        vs->v[k]->scan = 0;
    return rc;
}

static int place_in(gmc_device *dev, struct gmc_valloc *a, uint32_t mask, int evict, uint64_t *bytes_needed);

int gmc_resid_budget_precheck(gmc_device *dev, struct gmc_valloc *a, uint32_t mask)
{
    if (dev->bud_client == NULL)
        return GMC_OK;
    uint64_t trim;
    uint32_t group;
    if (gmc_budget_room(dev->bud_client, a, mask, &trim, &group) != 0u)
        return GMC_OK;
    gmc_budget_refuse(dev->bud_client, trim, group);
    return GMC_E_OVER_BUDGET;
}

int gmc_resid_place(gmc_device *dev, struct gmc_valloc *a, uint32_t mask, int evict,
                    uint64_t *bytes_needed)
{
    if (bytes_needed != NULL)
        *bytes_needed = 0;
    uint32_t want = mask != 0u ? mask : a->desc.supported_segments;
    /* Under budgets (gmc_budget.h), only where the client has room. */
    uint64_t trim = 0;
    uint32_t group = 0;
    if (evict && dev->bud_client != NULL) {
        want = gmc_budget_room(dev->bud_client, a, want, &trim, &group);
        if (want == 0u) {
            gmc_budget_refuse(dev->bud_client, trim, group);
            return GMC_E_OVER_BUDGET;
        }
    }
    int rc = place_in(dev, a, want, evict, bytes_needed);
    if (rc == GMC_E_NO_SPACE && trim > 0u) {
        /* Only segments over budget could have held it. */
        gmc_budget_refuse(dev->bud_client, trim, group);
        rc = GMC_E_OVER_BUDGET;
    }
    return rc;
}

static int place_in(gmc_device *dev, struct gmc_valloc *a, uint32_t mask, int evict, uint64_t *bytes_needed)
{
    struct gmc_alloc_desc d;
    restrict_desc(&a->desc, mask, &d);
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
            /* What comes before it could not make room: the hot set keeps
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
    gmc_cache_release(dev, &a->sys);
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
    return gmc_fence_await(dev, a->busy_fence);
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
    int rc = ff > gmc_paging_completed(dev->pg) ? gmc_fence_await(dev, ff) : GMC_OK;
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

static int coherent(const struct gmc_vseg *s)
{
    return (s->desc.flags & GMC_SEGFLAGS_CACHE_COHERENT_MASK) != 0u;
}

static int map_aperture(gmc_device *dev, struct gmc_valloc *a, uint64_t gpu, uint64_t *fence)
{
    /* From here the GPU reads and writes the system copy. */
    gmc_cache_gpu_access(dev, a, coherent(&dev->seg[a->seg]), 1);
    struct gmc_paging_args m = { .op = GMC_PAGING_MAP_APERTURE_SEGMENT };
    m.u.map.gpu_address = gpu;
    m.u.map.pages = a->sys.npages < a->sz.placed / GMC_PAGE_SIZE ? a->sys.npages : a->sz.placed / GMC_PAGE_SIZE;
    m.u.map.mdl = &a->sys;
    m.u.map.mdl_offset = 0;
    m.u.map.snooped = coherent(&dev->seg[a->seg]);
    m.u.map.readable = 1;
    m.u.map.writeable = 1;
    return gmc_fence_queue(dev, &m, fence);
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
        rc = gmc_fence_await(dev, dev->freed_fence[a->seg]);
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
        a->pend = GMC_PEND_MAP;
    } else if (a->sys_valid) {
        struct gmc_paging_args t = { .op = GMC_PAGING_TRANSFER };
        uint64_t n = xfer_size(a);
        t.u.transfer.size = n;
        t.u.transfer.flags = GMC_PAGING_TRANSFER_START | GMC_PAGING_TRANSFER_END;
        t.u.transfer.src.mdl = &a->sys;
        t.u.transfer.dst.segment_id = s->desc.id;
        t.u.transfer.dst.segment_address = a->node.start;
        t.u.transfer.flags |= swizzle(a, GMC_PAGING_TRANSFER_SWIZZLE);
        gmc_cache_gpu_access(dev, a, 0, 0); /* a memory segment is not cache-coherent */
        rc = gmc_fence_queue(dev, &t, &f);
        if (rc != GMC_OK)
            return rc;
        dev->stats.bytes_paged_in += n;
        a->pend = GMC_PEND_PAGE_IN;
        /* The system copy stays, current until something writes the VRAM
         * copy (a submission with GMC_REF_WRITE, a write lock on the BAR):
         * evicting a clean allocation then drops the VRAM copy. */
    } else {
        struct gmc_paging_args fl = { .op = GMC_PAGING_FILL };
        fl.u.fill.gpu_address = a->node.start;
        fl.u.fill.size = a->sz.size;
        fl.u.fill.pattern = fill_pattern(a);
        rc = gmc_fence_queue(dev, &fl, &f);
        if (rc != GMC_OK)
            return rc;
        dev->stats.bytes_filled += a->sz.size;
        a->pend = GMC_PEND_FILL;
        a->state |= GMC_ALLOC_STATE_HAS_CONTENT;
        a->state &= ~(uint32_t)(GMC_ALLOC_STATE_ZERO_PENDING | GMC_ALLOC_STATE_LOST);
        if (a->keep_sys && a->sys.host != NULL) {
            gmc_cache_release(dev, &a->sys);
            fill_host(a->sys.host, a->sys.size, fill_pattern(a));
            a->sys_valid = 1;
        }
    }
    a->gpu_valid = 1;
    gmc_cand_sync(dev, a);
    sync_after(dev, a, f);
    dev->stats.page_ins++;
    return queue_notify(dev, a, 1);
}

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
        t.u.transfer.flags |= swizzle(a, GMC_PAGING_TRANSFER_UNSWIZZLE);
        struct gmc_paging_args u = { .op = GMC_PAGING_UNMAP_APERTURE_SEGMENT };
        u.u.map.gpu_address = node->start;
        u.u.map.pages = pages;
        gmc_cache_gpu_access(dev, a, m.u.map.snooped, 1);
        rc = gmc_fence_queue(dev, &m, NULL);
        if (rc == GMC_OK)
            rc = gmc_fence_queue(dev, &t, NULL);
        if (rc == GMC_OK)
            rc = gmc_fence_queue(dev, &u, fence);
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
    t.u.transfer.flags |= swizzle(a, GMC_PAGING_TRANSFER_UNSWIZZLE);
    gmc_cache_gpu_access(dev, a, 0, 1);
    rc = gmc_fence_queue(dev, &t, fence);
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
    gmc_cand_sync(dev, a);
    a->pend = pend;
    sync_after(dev, a, f);
    return GMC_OK;
}

int gmc_resid_save(gmc_device *dev, struct gmc_valloc *a)
{
    if (a->node.mgr == NULL || !a->gpu_valid || a->sys_valid || gmc_vseg_is_aperture(&dev->seg[a->seg]))
        return GMC_OK;
    int rc = sync_before(dev, a);
    return rc == GMC_OK ? write_back(dev, a, GMC_PEND_SAVE_KEEP) : rc;
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
            rc = gmc_fence_queue(dev, &u, &f);
            if (rc != GMC_OK)
                return rc;
            sync_after(dev, a, f);
        }
        dev->stats.discards++;
    } else if (a->gpu_valid && a->sys_valid) {
        dev->stats.discards++; /* clean: the system copy already holds it */
    } else if (a->gpu_valid) {
        rc = write_back(dev, a, GMC_PEND_EVICT);
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

int gmc_resid_create(gmc_device *dev, struct gmc_valloc *a)
{
    a->serial = ++dev->alloc_serial;
    a->keep_sys = (a->desc.flags & GMC_ALLOC_PERMANENT_SYS_MEM) != 0u || gmc_check_existing_sys_mem(&a->desc);
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
        gmc_cache_release(dev, &a->sys);
        if (a->desc.system_mem != NULL) {
            /* The caller's memory: the engine must be done with it now. */
            if (a->paging_fence > 0u || a->busy_fence > 0u)
                (void)gmc_fence_await(dev, a->paging_fence > a->busy_fence ? a->paging_fence
                                                                         : a->busy_fence);
            gmc_sysmem_free(dev->pg, &a->sys);
        } else {
            gmc_fence_defer_sysbuf(dev, &a->sys);
        }
    }
}

/* Place and page in; the allocation becomes GPU-accessible. */
int gmc_resid_bring_in(gmc_device *dev, struct gmc_valloc *a, uint64_t *needed)
{
    int rc = GMC_OK;
    if (a->node.mgr == NULL)
        rc = gmc_resid_place(dev, a, 0u, 1, needed);
    if (rc == GMC_OK)
        rc = gmc_resid_page_in(dev, a);
    return rc;
}

/* The first of the handles whose allocation this call made count for the
 * client in group g (its first reference, no lock of its own), else n. */
static unsigned first_counted(const gmc_client *c, struct gmc_vref *const *refs, unsigned n, uint32_t g)
{
    for (unsigned i = 0; i < n; i++) {
        const struct gmc_valloc *a = refs[i]->alloc;
        uint32_t ag;
        unsigned mine = 0;
        for (unsigned j = 0; j < n; j++)
            mine += refs[j] == refs[i];
        if (refs[i]->resident == mine && a->locker != c && a->node.mgr != NULL &&
            gmc_budget_seg_counts(c->dev, a->seg, &ag) && ag == g)
            return i;
    }
    return n;
}

static int gmc_make_resident_do(gmc_client *c, const gmc_handle *h, unsigned n,
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
    rc = gmc_fence_need_paging(dev);
    if (rc != GMC_OK) {
        free(refs);
        return rc;
    }
    dev->stats.make_resident_calls++;
    /* Budgets (gmc_budget.h): the usage before this call. */
    const int budget = gmc_budget_active(dev);
    struct gmc_budget_snap snap;
    uint64_t trim = 0;
    uint32_t group = 0;
    if (budget)
        gmc_budget_snap(c, &snap);
    /* Take the references first, so nothing this call brings in is chosen
     * as a victim by a later one of its own handles. */
    for (unsigned i = 0; i < n; i++) {
        refs[i]->resident++;
        refs[i]->alloc->resident++;
        gmc_cand_sync(dev, refs[i]->alloc);
    }
    /* What is already placed counts now: refused before any paging. */
    if (budget) {
        rc = gmc_budget_admit(c, &snap, &trim, &group);
        if (rc != GMC_OK && res != NULL)
            res->failed_index = first_counted(c, refs, n, group);
    }
    uint64_t before = gmc_paging_last_issued(dev->pg);
    if (budget)
        dev->bud_client = c; /* placements only where c has room */
    for (unsigned i = 0; i < n && rc == GMC_OK; i++) {
        struct gmc_valloc *a = refs[i]->alloc;
        uint64_t needed = 0;
        const int placed = a->node.mgr != NULL;
        rc = gmc_resid_bring_in(dev, a, &needed);
        if (rc == GMC_OK && budget && !placed)
            rc = gmc_budget_admit(c, &snap, &trim, &group);
        if (rc != GMC_OK) {
            if (res != NULL) {
                res->failed_index = i;
                res->bytes_needed = needed;
            }
            break;
        }
        gmc_cand_touch(dev, a);
    }
    dev->bud_client = NULL;
    if (rc == GMC_E_OVER_BUDGET && res != NULL) {
        res->bytes_to_trim = c->last_trim;
        res->budget_group = c->last_trim_group;
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

int gmc_make_resident(gmc_client *c, const gmc_handle *h, unsigned n, struct gmc_residency_result *res)
{
    struct gmc_residency_result own;
    int rc = gmc_make_resident_do(c, h, n, res != NULL ? res : &own);
    const struct gmc_residency_result *r = res != NULL ? res : &own;
    gmc_rec_residency(c, 0, h, n, rc == GMC_E_OVER_BUDGET ? r->bytes_to_trim : 0u, rc);
    return rc;
}

static int gmc_evict_do(gmc_client *c, const gmc_handle *h, unsigned n)
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

int gmc_evict(gmc_client *c, const gmc_handle *h, unsigned n)
{
    int rc = gmc_evict_do(c, h, n);
    gmc_rec_residency(c, 1, h, n, 0u, rc);
    return rc;
}

static int gmc_client_set_residency_callback_do(gmc_client *c, gmc_residency_fn fn, void *user)
{
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    c->notify_fn = fn;
    c->notify_user = fn != NULL ? user : NULL;
    return GMC_OK;
}

int gmc_client_set_residency_callback(gmc_client *c, gmc_residency_fn fn, void *user)
{
    int rc = gmc_client_set_residency_callback_do(c, fn, user);
    if (rc == GMC_OK)
        gmc_rec_callback(c, fn != NULL);
    return rc;
}

uint32_t gmc_resid_aperture_mask(const gmc_device *dev)
{
    uint32_t mask = 0;
    for (unsigned i = 0; i < dev->nsegs; i++)
        if (gmc_vseg_is_aperture(&dev->seg[i]))
            mask |= GMC_SEGMENT_BIT(i + 1u);
    return mask;
}
