/*
 * gmc_rules.c - the allocation and segment validator.
 *
 * DOC: Overview
 *
 * The rules live in one table, spec/rules.toml, generated into
 * gmc_rule_table[] (gmc_rules_gen.c). This file walks that table and holds
 * the custom predicates its rows name; it has no rule of its own. A row
 * applies when all its `when` bits are set; its kind then says what must
 * hold (see gmc_rules.h).
 *
 * Cost: O(rules * segments), plus O(segments^2) for the overlap rows; the
 * segment count is at most GMC_MAX_SEGMENTS once SEG_COUNT_VALID passed.
 * Locking: none needed. Everything here reads its arguments and the const
 * table only, so any number of threads may call in at once.
 *
 * Predicates must be total: gmc_rule_holds() may run any row on any
 * descriptor (the tests do), so each one copes with segment ids that do not
 * exist, odd sizes and NULL pointers, and never overflows.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gmc_alloc.h"
#include "gmc_check.h"
#include "gmc_rules.h"
#include "gmc_status.h"

_Static_assert(GMC_MAX_SEGMENTS >= 1u && GMC_MAX_SEGMENTS <= GMC_SEGMENT_ID_MAX,
               "segment sets are 32-bit masks of 5-bit segment ids");
_Static_assert(GMC_64KB_PAGE_SIZE % GMC_PAGE_SIZE == 0u, "64 KiB pages are whole pages");

#define PAGE_MASK ((uint64_t)GMC_PAGE_SIZE - 1u)

/* ---------------------------------------------------------------- helpers */

/* Size rounded up to whole pages; saturates instead of wrapping. */
static uint64_t page_round(uint64_t size)
{
    if (size > UINT64_MAX - PAGE_MASK)
        return UINT64_MAX;
    return (size + PAGE_MASK) & ~PAGE_MASK;
}

/* The segment with a 1-based id, or NULL when there is none. */
static const struct gmc_segment_desc *seg_by_id(const struct gmc_rule_ctx *ctx, unsigned id)
{
    if (id == 0u || id > ctx->nsegs)
        return NULL;
    return &ctx->segs[id - 1u];
}

/* Segment-set bits that name existing segments. */
static uint32_t existing_set(const struct gmc_rule_ctx *ctx)
{
    if (ctx->nsegs >= 32u)
        return UINT32_MAX;
    return (UINT32_C(1) << ctx->nsegs) - 1u;
}

/* Whether some existing segment of `set` has any of `flags`. */
static int set_has_flag(const struct gmc_rule_ctx *ctx, uint32_t set, uint32_t flags)
{
    set &= existing_set(ctx);
    for (unsigned i = 0; i < ctx->nsegs && i < 32u; i++) {
        if ((set >> i & 1u) && (ctx->segs[i].flags & flags))
            return 1;
    }
    return 0;
}

/* Exclusive end of [base, base + size), saturated at UINT64_MAX. */
static uint64_t range_end(uint64_t base, uint64_t size)
{
    return size > UINT64_MAX - base ? UINT64_MAX : base + size;
}

static int ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    if (alen == 0u || blen == 0u)
        return 0;
    return a < range_end(b, blen) && b < range_end(a, alen);
}

static int has_hinted_banks(const struct gmc_alloc_desc *d)
{
    for (unsigned i = 0; i < GMC_MAX_HINTED_BANKS; i++) {
        if (d->hinted_banks[i] != 0u)
            return 1;
    }
    return 0;
}

/* ------------------------------------------- predicates: existing memory */

int gmc_rule_pred_sysmem_covers_size(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    return d->system_mem != NULL && d->system_mem_size >= page_round(d->size);
}

int gmc_rule_pred_sysmem_page_aligned(const struct gmc_rule_ctx *ctx)
{
    return ((uintptr_t)ctx->desc->system_mem & (uintptr_t)PAGE_MASK) == 0u;
}

int gmc_rule_pred_sysmem_page_multiple(const struct gmc_rule_ctx *ctx)
{
    return (ctx->desc->system_mem_size & PAGE_MASK) == 0u;
}

int gmc_rule_pred_sysmem_needs_flag(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    if (d->system_mem == NULL && d->system_mem_size == 0u)
        return 1;
    return gmc_check_existing_sys_mem(d);
}

int gmc_rule_pred_section_nonzero(const struct gmc_rule_ctx *ctx)
{
    return ctx->desc->section != 0u;
}

int gmc_rule_pred_section_needs_flag(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    return d->section == 0u || (d->kmt_flags & GMC_KMT_EXISTING_SECTION) != 0u;
}

/* ------------------------------------------- predicates: size and shape */

int gmc_rule_pred_size_valid(const struct gmc_rule_ctx *ctx)
{
    uint64_t size = ctx->desc->size;
    return size != 0u && size <= UINT64_MAX - PAGE_MASK;
}

int gmc_rule_pred_alignment_pow2(const struct gmc_rule_ctx *ctx)
{
    uint32_t a = ctx->desc->alignment;
    return (a & (a - 1u)) == 0u;
}

int gmc_rule_pred_pitch_ge_size(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    return d->pitch_aligned_size == 0u || d->pitch_aligned_size >= d->size;
}

int gmc_rule_pred_pitch_segment_has_pitch_size(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    if (!set_has_flag(ctx, d->supported_segments, GMC_SEGFLAGS_PITCH_ALIGNMENT_MASK))
        return 1;
    return d->pitch_aligned_size != 0u;
}

int gmc_rule_pred_pitch_size_needs_pitch_segment(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    if (d->pitch_aligned_size == 0u)
        return 1;
    return set_has_flag(ctx, d->supported_segments, GMC_SEGFLAGS_PITCH_ALIGNMENT_MASK);
}

int gmc_rule_pred_priority_nonzero(const struct gmc_rule_ctx *ctx)
{
    return ctx->desc->priority != 0u;
}

int gmc_rule_pred_umd_priority_nonzero(const struct gmc_rule_ctx *ctx)
{
    return ctx->desc->umd_priority != 0u;
}

/* ------------------------------------- predicates: segment sets, prefs */

int gmc_rule_pred_supported_set_valid(const struct gmc_rule_ctx *ctx)
{
    uint32_t set = ctx->desc->supported_segments;
    return set != 0u && (set & ~existing_set(ctx)) == 0u;
}

int gmc_rule_pred_prefs_packed(const struct gmc_rule_ctx *ctx)
{
    int ended = 0;
    for (unsigned i = 0; i < GMC_MAX_PREFERRED_SEGMENTS; i++) {
        const struct gmc_segment_pref *p = &ctx->desc->preferred[i];
        if (p->id == 0u) {
            if (p->top_down != 0u)
                return 0;
            ended = 1;
        } else if (ended) {
            return 0;
        }
    }
    return 1;
}

int gmc_rule_pred_prefs_distinct(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_segment_pref *p = ctx->desc->preferred;
    for (unsigned i = 0; i < GMC_MAX_PREFERRED_SEGMENTS; i++) {
        for (unsigned j = i + 1u; j < GMC_MAX_PREFERRED_SEGMENTS; j++) {
            if (p[i].id != 0u && p[i].id == p[j].id)
                return 0;
        }
    }
    return 1;
}

int gmc_rule_pred_prefs_in_supported(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    for (unsigned i = 0; i < GMC_MAX_PREFERRED_SEGMENTS; i++) {
        unsigned id = d->preferred[i].id;
        if (id == 0u)
            continue;
        if (id > 32u || !(d->supported_segments & GMC_SEGMENT_BIT(id)))
            return 0;
    }
    return 1;
}

int gmc_rule_pred_eviction_apertures_only(const struct gmc_rule_ctx *ctx)
{
    uint32_t set = ctx->desc->eviction_segments;
    for (unsigned i = 0; i < 32u; i++) {
        if (!(set >> i & 1u))
            continue;
        const struct gmc_segment_desc *seg = seg_by_id(ctx, i + 1u);
        if (seg == NULL || !gmc_segment_is_aperture(seg))
            return 0;
    }
    return 1;
}

int gmc_rule_pred_eviction_not_pitch(const struct gmc_rule_ctx *ctx)
{
    return !set_has_flag(ctx, ctx->desc->eviction_segments, GMC_SEGFLAGS_PITCH_ALIGNMENT_MASK);
}

int gmc_rule_pred_fits_pinned_region(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    uint64_t size = page_round(d->size);
    for (unsigned i = 0; i < ctx->nsegs && i < 32u; i++) {
        if ((d->supported_segments >> i & 1u) && size <= gmc_pinned_region_size(ctx->segs[i].size))
            return 1;
    }
    return 0;
}

int gmc_rule_pred_align_64k(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    if (!set_has_flag(ctx, d->supported_segments, GMC_SEGFLAGS_USE_64KB_PAGES_MASK))
        return 1;
    return d->alignment != 0u && d->alignment % GMC_64KB_PAGE_SIZE == 0u;
}

int gmc_rule_pred_memory_segments_only(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    return d->eviction_segments == 0u &&
           !set_has_flag(ctx, d->supported_segments, GMC_SEG_APERTURE_FLAGS);
}

int gmc_rule_pred_cached_if_coherent_aperture(const struct gmc_rule_ctx *ctx)
{
    for (unsigned i = 0; i < ctx->nsegs; i++) {
        const struct gmc_segment_desc *seg = &ctx->segs[i];
        if ((seg->flags & GMC_SEGFLAGS_APERTURE_MASK) && (seg->flags & GMC_SEGFLAGS_CACHE_COHERENT_MASK))
            return (ctx->desc->flags & GMC_ALLOC_CACHED) != 0u;
    }
    return 1;
}

/* ---------------------------------------------------- predicates: banks */

int gmc_rule_pred_banks_need_banked_pref(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    if (!has_hinted_banks(d))
        return 1;
    const struct gmc_segment_desc *seg = seg_by_id(ctx, d->preferred[0].id);
    return seg != NULL && (seg->flags & GMC_SEGFLAGS_USE_BANKING_MASK) != 0u;
}

int gmc_rule_pred_banks_valid(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    const struct gmc_segment_desc *seg = seg_by_id(ctx, d->preferred[0].id);
    if (!has_hinted_banks(d) || seg == NULL || !(seg->flags & GMC_SEGFLAGS_USE_BANKING_MASK))
        return 1; /* nothing to check, or ALLOC_HINTEDBANK_NEEDS_BANKED_PREFERENCE's case */
    int ended = 0;
    for (unsigned i = 0; i < GMC_MAX_HINTED_BANKS; i++) {
        unsigned b = d->hinted_banks[i];
        if (b == 0u) {
            ended = 1;
            continue;
        }
        if (ended || b > seg->banks)
            return 0;
        for (unsigned j = 0; j < i; j++) {
            if (d->hinted_banks[j] == b)
                return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------- predicates: primary */

int gmc_rule_pred_vidpn_only_primary(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    return d->vidpn_source_id == GMC_VIDPN_SOURCE_NONE || (d->info2_flags & GMC_INFO2_PRIMARY) != 0u;
}

int gmc_rule_pred_primary_has_vidpn(const struct gmc_rule_ctx *ctx)
{
    return ctx->desc->vidpn_source_id != GMC_VIDPN_SOURCE_NONE;
}

int gmc_rule_pred_primary_segments_cpu_visible(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_alloc_desc *d = ctx->desc;
    int alternate_va = (d->flags & GMC_ALLOC_USE_ALTERNATE_VA) != 0u;
    for (unsigned i = 0; i < ctx->nsegs && i < 32u; i++) {
        const struct gmc_segment_desc *seg = &ctx->segs[i];
        if (!(d->supported_segments >> i & 1u))
            continue;
        if (gmc_segment_is_aperture(seg) && alternate_va)
            continue; /* CpuVisible has no meaning on this aperture */
        if (!(seg->flags & GMC_SEGFLAGS_CPU_VISIBLE_MASK))
            return 0;
    }
    return 1;
}

/* ------------------------------------------------ predicates: segments */

int gmc_rule_pred_seg_count(const struct gmc_rule_ctx *ctx)
{
    return ctx->nsegs >= 1u && ctx->nsegs <= GMC_MAX_SEGMENTS;
}

int gmc_rule_pred_seg_ids(const struct gmc_rule_ctx *ctx)
{
    for (unsigned i = 0; i < ctx->nsegs; i++) {
        if (ctx->segs[i].id != i + 1u)
            return 0;
    }
    return 1;
}

int gmc_rule_pred_agp_count(const struct gmc_rule_ctx *ctx)
{
    unsigned n = 0;
    for (unsigned i = 0; i < ctx->nsegs; i++) {
        if (ctx->segs[i].flags & GMC_SEGFLAGS_AGP_MASK)
            n++;
    }
    return n <= 1u;
}

int gmc_rule_pred_seg_no_overlap(const struct gmc_rule_ctx *ctx)
{
    for (unsigned i = 0; i < ctx->nsegs; i++) {
        for (unsigned j = i + 1u; j < ctx->nsegs; j++) {
            const struct gmc_segment_desc *a = &ctx->segs[i], *b = &ctx->segs[j];
            if (ranges_overlap(a->base, a->size, b->base, b->size))
                return 0;
        }
    }
    return 1;
}

int gmc_rule_pred_seg_cpu_no_overlap(const struct gmc_rule_ctx *ctx)
{
    for (unsigned i = 0; i < ctx->nsegs; i++) {
        for (unsigned j = i + 1u; j < ctx->nsegs; j++) {
            const struct gmc_segment_desc *a = &ctx->segs[i], *b = &ctx->segs[j];
            if (gmc_segment_cpu_window(a) && gmc_segment_cpu_window(b) &&
                ranges_overlap(a->cpu_offset, a->size, b->cpu_offset, b->size))
                return 0;
        }
    }
    return 1;
}

int gmc_rule_pred_banking_has_banks(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_segment_desc *seg = ctx->seg;
    if (seg->banks == 0u)
        return 0;
    return seg->size % ((uint64_t)seg->banks * GMC_PAGE_SIZE) == 0u;
}

int gmc_rule_pred_banks_need_flag(const struct gmc_rule_ctx *ctx)
{
    return ctx->seg->banks == 0u || (ctx->seg->flags & GMC_SEGFLAGS_USE_BANKING_MASK) != 0u;
}

int gmc_rule_pred_seg_size(const struct gmc_rule_ctx *ctx)
{
    return ctx->seg->size != 0u && (ctx->seg->size & PAGE_MASK) == 0u;
}

int gmc_rule_pred_seg_base(const struct gmc_rule_ctx *ctx)
{
    return (ctx->seg->base & PAGE_MASK) == 0u;
}

int gmc_rule_pred_seg_no_wrap(const struct gmc_rule_ctx *ctx)
{
    return ctx->seg->size <= UINT64_MAX - ctx->seg->base;
}

int gmc_rule_pred_sysmem_end_needs_partial(const struct gmc_rule_ctx *ctx)
{
    return ctx->seg->sysmem_end == 0u ||
           (ctx->seg->flags & GMC_SEGFLAGS_PARTIALLY_PRESERVED_DURING_HIBERNATE_MASK) != 0u;
}

int gmc_rule_pred_sysmem_end_in_segment(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_segment_desc *s = ctx->seg;
    if (s->sysmem_end == 0u)
        return 1; /* no system-memory part: the whole segment is purged */
    return s->sysmem_end >= s->base && s->sysmem_end - s->base <= s->size &&
           (s->sysmem_end & PAGE_MASK) == 0u;
}

int gmc_rule_pred_seg_64k(const struct gmc_rule_ctx *ctx)
{
    const uint64_t m = GMC_64KB_PAGE_SIZE - 1u;
    return (ctx->seg->base & m) == 0u && (ctx->seg->size & m) == 0u;
}

int gmc_rule_pred_seg_cpu_offset(const struct gmc_rule_ctx *ctx)
{
    const struct gmc_segment_desc *seg = ctx->seg;
    if (gmc_segment_is_aperture(seg))
        return 1; /* no CPU window of its own */
    return (seg->cpu_offset & PAGE_MASK) == 0u && seg->size <= UINT64_MAX - seg->cpu_offset;
}

/* ------------------------------------------------------------ the walk */

static int masks_hold(const struct gmc_rule *r, const uint32_t w[GMC_RULE_WORDS],
                      const struct gmc_rule_ctx *ctx)
{
    for (unsigned i = 0; i < GMC_RULE_WORDS; i++) {
        if ((w[i] & r->when[i]) != r->when[i])
            return 1; /* not triggered */
    }
    switch (r->kind) {
    case GMC_RULE_IMPLIES:
        for (unsigned i = 0; i < GMC_RULE_WORDS; i++) {
            if ((w[i] & r->then[i]) != r->then[i])
                return 0;
        }
        return 1;
    case GMC_RULE_EXCLUDES:
        for (unsigned i = 0; i < GMC_RULE_WORDS; i++) {
            if (w[i] & r->then[i])
                return 0;
        }
        return 1;
    case GMC_RULE_REQUIRES_ONE_OF:
        for (unsigned i = 0; i < GMC_RULE_WORDS; i++) {
            if (w[i] & r->then[i])
                return 1;
        }
        return 0;
    case GMC_RULE_ONLY:
        for (unsigned i = 0; i < GMC_RULE_WORDS; i++) {
            if (r->then[i] != 0u && (w[i] & ~r->then[i]))
                return 0;
        }
        return 1;
    case GMC_RULE_CUSTOM:
        return r->pred != NULL && r->pred(ctx);
    }
    return 0; /* a kind this walker does not know never passes */
}

int gmc_rule_holds(const struct gmc_rule *r, const struct gmc_alloc_desc *desc,
                   const struct gmc_segment_desc *segs, unsigned nsegs)
{
    struct gmc_rule_ctx ctx = { .desc = desc, .segs = segs, .nsegs = nsegs, .seg = NULL };
    uint32_t w[GMC_RULE_WORDS] = { 0 };

    switch (r->scope) {
    case GMC_RULE_SCOPE_ALLOC:
        w[GMC_RULE_W_ALLOC] = desc->flags;
        w[GMC_RULE_W_KMT] = desc->kmt_flags;
        w[GMC_RULE_W_INFO2] = desc->info2_flags;
        return masks_hold(r, w, &ctx);
    case GMC_RULE_SCOPE_SEGMENT:
        for (unsigned i = 0; i < nsegs; i++) {
            ctx.seg = &segs[i];
            w[GMC_RULE_W_SEG] = segs[i].flags;
            if (!masks_hold(r, w, &ctx))
                return 0;
        }
        return 1;
    case GMC_RULE_SCOPE_SEGMENTS:
        return masks_hold(r, w, &ctx);
    }
    return 0;
}

static int segments_ok(const struct gmc_segment_desc *segs, unsigned n,
                       const struct gmc_rule **failed)
{
    for (unsigned i = 0; i < GMC_RULE_COUNT; i++) {
        const struct gmc_rule *r = &gmc_rule_table[i];
        if (r->scope == GMC_RULE_SCOPE_ALLOC || gmc_rule_holds(r, NULL, segs, n))
            continue;
        if (failed != NULL)
            *failed = r;
        return r->status;
    }
    return GMC_OK;
}

int gmc_rules_check_segments(const struct gmc_segment_desc *segs, unsigned n,
                             const struct gmc_rule **failed)
{
    if (failed != NULL)
        *failed = NULL;
    if (segs == NULL && n != 0u)
        return GMC_E_NULL_POINTER;
    return segments_ok(segs, n, failed);
}

int gmc_rules_check_alloc(const struct gmc_alloc_desc *desc,
                          const struct gmc_segment_desc *segs, unsigned nsegs,
                          const struct gmc_rule **failed)
{
    if (failed != NULL)
        *failed = NULL;
    if (desc == NULL || (segs == NULL && nsegs != 0u))
        return GMC_E_NULL_POINTER;
    int rc = segments_ok(segs, nsegs, failed);
    if (rc != GMC_OK)
        return rc;
    for (unsigned i = 0; i < GMC_RULE_COUNT; i++) {
        const struct gmc_rule *r = &gmc_rule_table[i];
        if (r->scope != GMC_RULE_SCOPE_ALLOC || gmc_rule_holds(r, desc, segs, nsegs))
            continue;
        if (failed != NULL)
            *failed = r;
        return r->status;
    }
    return GMC_OK;
}

/* ------------------------------------------------------------ accessors */

void gmc_alloc_desc_init(struct gmc_alloc_desc *desc)
{
    if (desc == NULL)
        return;
    memset(desc, 0, sizeof(*desc));
    desc->priority = GMC_PRIORITY_NORMAL;
    desc->vidpn_source_id = GMC_VIDPN_SOURCE_NONE;
}

unsigned gmc_rule_count(void)
{
    return GMC_RULE_COUNT;
}

const struct gmc_rule *gmc_rule_at(unsigned index)
{
    return index < GMC_RULE_COUNT ? &gmc_rule_table[index] : NULL;
}

const struct gmc_rule *gmc_rule_find(const char *id)
{
    if (id == NULL)
        return NULL;
    for (unsigned i = 0; i < GMC_RULE_COUNT; i++) {
        if (strcmp(gmc_rule_table[i].id, id) == 0)
            return &gmc_rule_table[i];
    }
    return NULL;
}

const char *gmc_rule_id(const struct gmc_rule *rule)
{
    return rule != NULL ? rule->id : NULL;
}

const char *gmc_rule_seed(const struct gmc_rule *rule)
{
    return rule != NULL ? rule->seed : NULL;
}

const char *gmc_rule_statement(const struct gmc_rule *rule)
{
    return rule != NULL ? rule->statement : NULL;
}

int gmc_rule_status(const struct gmc_rule *rule)
{
    return rule != NULL ? rule->status : GMC_E_NULL_POINTER;
}
