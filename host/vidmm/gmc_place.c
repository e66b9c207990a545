/*
 * gmc_place.c - where an allocation goes.
 *
 * DOC: Overview
 *
 * The policy of docs/placement.md ("Policy"), over one drm_mm-style range
 * manager per segment (gmc_range.c):
 *
 *   1. Candidates: the preferred segments in preference order, each with
 *      its direction (top-down: GMC_RANGE_HIGH, else GMC_RANGE_BEST, the
 *      smallest hole that fits, docs/placement.md "Allocator benchmark"); then
 *      the rest of the supported set in id order, top-down when
 *      FromEndOfSegment is set. A preference's direction outranks
 *      FromEndOfSegment.
 *   2. In a candidate, the window is the whole segment, or its last 20 %
 *      (gmc_pinned_region_size) for overlay and capture allocations.
 *   3. In the most preferred segment, with hinted banks, each hinted bank
 *      (the segment split into SEG_BANKS equal banks) in order, clipped to
 *      the window; then the whole window.
 *   4. The first fit wins; none is GMC_E_NO_SPACE.
 *
 * Sizes and alignments come from gmc_place_size(). Everything depends only
 * on the descriptor and the managers' state, so it is deterministic.
 * Cost: at most (5 + GMC_MAX_HINTED_BANKS + segments) range searches,
 * each O(log n) in the common case (gmc_range.c).
 */
#include <stdint.h>

#include "gmc_alloc.h"
#include "gmc_place.h"
#include "gmc_range.h"
#include "gmc_status.h"

#define PAGE_MASK ((uint64_t)GMC_PAGE_SIZE - 1u)

struct cand {
    unsigned index;
    enum gmc_range_mode mode;
};

/* x rounded up to a power of two m; -1 on overflow. */
static int round_up(uint64_t x, uint64_t m, uint64_t *out)
{
    if (x > UINT64_MAX - (m - 1u))
        return -1;
    *out = (x + m - 1u) & ~(m - 1u);
    return 0;
}

int gmc_place_size(const struct gmc_segment_desc *seg, const struct gmc_alloc_desc *d,
                   struct gmc_place_size *out)
{
    int pitch = (seg->flags & GMC_SEGFLAGS_PITCH_ALIGNMENT_MASK) != 0u;
    int big = (seg->flags & GMC_SEGFLAGS_USE_64KB_PAGES_MASK) != 0u;
    uint64_t want = pitch ? d->pitch_aligned_size : d->size;
    out->align = d->alignment > GMC_PAGE_SIZE ? d->alignment : GMC_PAGE_SIZE;
    if (big && out->align < GMC_64KB_PAGE_SIZE)
        out->align = GMC_64KB_PAGE_SIZE;
    if (want == 0u || round_up(want, GMC_PAGE_SIZE, &out->size) != 0)
        return GMC_E_OVERFLOW;
    out->placed = out->size;
    if (big && round_up(out->size, GMC_64KB_PAGE_SIZE, &out->placed) != 0)
        return GMC_E_OVERFLOW;
    return GMC_OK;
}

static unsigned candidates(unsigned nsegs, const struct gmc_alloc_desc *d, struct cand *c)
{
    unsigned n = 0;
    uint32_t listed = 0;
    for (unsigned i = 0; i < GMC_MAX_PREFERRED_SEGMENTS; i++) {
        unsigned id = d->preferred[i].id;
        if (id == 0u)
            break;
        if (id > nsegs || (listed & GMC_SEGMENT_BIT(id)))
            continue;
        listed |= GMC_SEGMENT_BIT(id);
        c[n++] = (struct cand){ id - 1u, d->preferred[i].top_down ? GMC_RANGE_HIGH : GMC_RANGE_BEST };
    }
    enum gmc_range_mode rest =
        (d->flags & GMC_ALLOC_FROM_END_OF_SEGMENT) ? GMC_RANGE_HIGH : GMC_RANGE_BEST;
    for (unsigned i = 0; i < nsegs; i++) {
        uint32_t bit = GMC_SEGMENT_BIT(i + 1u);
        if ((d->supported_segments & bit) && !(listed & bit)) {
            listed |= bit;
            c[n++] = (struct cand){ i, rest };
        }
    }
    return n;
}

unsigned gmc_place_order(unsigned nsegs, const struct gmc_alloc_desc *d, unsigned *idx)
{
    struct cand c[GMC_MAX_PREFERRED_SEGMENTS + 32u];
    unsigned n = candidates(nsegs, d, c);
    for (unsigned i = 0; i < n; i++)
        idx[i] = c[i].index;
    return n;
}

/* Insert into [first, last] (inclusive) clipped to the window [wf, wl]. */
static int try_range(struct gmc_vseg *s, struct gmc_range_node *node, const struct gmc_place_size *sz,
                     enum gmc_range_mode mode, uint64_t first, uint64_t last, uint64_t wf, uint64_t wl)
{
    if (first < wf)
        first = wf;
    if (last > wl)
        last = wl;
    if (first > last)
        return GMC_RANGE_ENOSPC;
    /* range_end is exclusive and taken modulo 2^64: last + 1 may be 0. */
    return gmc_range_insert_in_range(&s->mgr, node, sz->placed, sz->align, mode, first, last + 1u);
}

/* Hinted banks of the most preferred segment, in order. */
static int try_banks(struct gmc_vseg *s, struct gmc_range_node *node, const struct gmc_place_size *sz,
                     enum gmc_range_mode mode, const struct gmc_alloc_desc *d, uint64_t wf, uint64_t wl)
{
    const struct gmc_segment_desc *g = &s->desc;
    if (!(g->flags & GMC_SEGFLAGS_USE_BANKING_MASK) || g->banks == 0u)
        return GMC_RANGE_ENOSPC;
    uint64_t bank = g->size / g->banks;
    for (unsigned i = 0; i < GMC_MAX_HINTED_BANKS; i++) {
        unsigned b = d->hinted_banks[i];
        if (b == 0u)
            break;
        if (b > g->banks)
            continue;
        uint64_t first = g->base + (uint64_t)(b - 1u) * bank;
        int rc = try_range(s, node, sz, mode, first, first + (bank - 1u), wf, wl);
        if (rc != GMC_RANGE_ENOSPC && rc != GMC_RANGE_ERANGE)
            return rc;
    }
    return GMC_RANGE_ENOSPC;
}

static int try_segment(struct gmc_vseg *s, struct gmc_range_node *node, const struct cand *c,
                       int most_preferred, const struct gmc_alloc_desc *d, struct gmc_place_size *sz)
{
    const struct gmc_segment_desc *g = &s->desc;
    if (gmc_place_size(g, d, sz) != GMC_OK || sz->placed > g->size)
        return GMC_RANGE_ENOSPC;
    uint64_t wl = g->base + (g->size - 1u);
    uint64_t wf = g->base;
    if (d->flags & (GMC_ALLOC_OVERLAY | GMC_ALLOC_CAPTURE)) {
        uint64_t pinned = gmc_pinned_region_size(g->size);
        if (pinned == 0u)
            return GMC_RANGE_ENOSPC;
        wf = wl - (pinned - 1u);
    }
    if (most_preferred && d->hinted_banks[0] != 0u) {
        int rc = try_banks(s, node, sz, c->mode, d, wf, wl);
        if (rc != GMC_RANGE_ENOSPC)
            return rc;
    }
    return try_range(s, node, sz, c->mode, wf, wl, wf, wl);
}

int gmc_place(struct gmc_vseg *segs, unsigned nsegs, const struct gmc_alloc_desc *d,
              struct gmc_range_node *node, struct gmc_placement *out)
{
    struct cand c[GMC_MAX_PREFERRED_SEGMENTS + 32u];
    unsigned n = candidates(nsegs, d, c);
    for (unsigned i = 0; i < n; i++) {
        struct gmc_place_size sz;
        int most_preferred = i == 0u && d->preferred[0].id != 0u;
        int rc = try_segment(&segs[c[i].index], node, &c[i], most_preferred, d, &sz);
        if (rc == GMC_RANGE_OK) {
            out->index = c[i].index;
            out->sz = sz;
            return GMC_OK;
        }
        if (rc != GMC_RANGE_ENOSPC && rc != GMC_RANGE_ERANGE)
            return GMC_E_INTERNAL;
    }
    return GMC_E_NO_SPACE;
}
