/*
 * test_place.c - placement through the public API, in the manner of
 * drm_mm_test: table-driven boundary cases, seeded random insertion and
 * removal orders, exact error codes, and checkers that print expected and
 * actual values. The last test runs 10,000 allocations against a naive
 * reference of the policy kept here (docs/placement.md, "Policy").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gmc.h"
#include "gmc_sim.h"

#define F(x) GMC_SEGFLAGS_##x##_MASK
#define KiB 1024ull
#define MiB (1024ull * 1024ull)
#define PG 4096ull
#define BIT(id) GMC_SEGMENT_BIT(id)
#define SEG1_PINNED 208896ull /* gmc_pinned_region_size(1 MiB): 51 pages */

/* 1: CPU-visible VRAM; 2: VRAM in 4 banks of 256 KiB; 3: VRAM with 64 KiB
 * pages; 4: an aperture. Every segment is 1 MiB. */
static const struct gmc_sim_segment place_layout[4] = {
    { 0x000000, 1 * MiB, 0, F(CPU_VISIBLE), 0, 0 },
    { 0x100000, 1 * MiB, 0, F(USE_BANKING), 4, 0 },
    { 0x200000, 1 * MiB, 0, F(USE_64KB_PAGES), 0, 0 },
    { 0x80000000ull, 1 * MiB, 0, F(APERTURE), 0, 0 },
};

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* ---------------------------------------------------------------- helpers */

struct env {
    gmc_device *dev;
    gmc_client *cl;
    const char *what; /* the table row under test, for messages */
};

static void env_open_with(struct env *e, const struct gmc_sim_segment *segs, unsigned n)
{
    struct gmc_sim_config c;
    gmc_sim_config_default(&c);
    c.strap_segments = 1;
    c.seg_count = n;
    memcpy(c.seg, segs, n * sizeof(segs[0]));
    assert_int_equal(gmc_device_open_sim(&c, NULL, &e->dev), GMC_OK);
    assert_int_equal(gmc_client_create(e->dev, NULL, &e->cl), GMC_OK);
    e->what = "";
}

static void env_open(struct env *e)
{
    env_open_with(e, place_layout, 4);
}

static void env_close(struct env *e)
{
    gmc_device_close(e->dev);
}

/* A request: the descriptor fields placement reads. */
struct req {
    uint64_t size;
    uint32_t align;
    uint32_t supported;
    struct gmc_segment_pref pref[GMC_MAX_PREFERRED_SEGMENTS];
    uint32_t flags;
    uint8_t banks[GMC_MAX_HINTED_BANKS];
};

static void desc_of(const struct req *r, struct gmc_alloc_desc *d)
{
    gmc_alloc_desc_init(d);
    d->size = r->size;
    d->alignment = r->align;
    d->supported_segments = r->supported;
    memcpy(d->preferred, r->pref, sizeof(r->pref));
    d->flags = r->flags;
    memcpy(d->hinted_banks, r->banks, sizeof(r->banks));
}

struct where {
    unsigned seg;
    uint64_t off;
};

/* Create and check the placement; prints both sides on a mismatch. */
#define expect_place(e, r, seg, off) expect_place_at((e), (r), (seg), (off), __FILE__, __LINE__)
static gmc_handle expect_place_at(struct env *e, const struct req *r, unsigned seg, uint64_t off,
                                  const char *file, int line)
{
    struct gmc_alloc_desc d;
    desc_of(r, &d);
    gmc_handle h = 0;
    int rc = gmc_alloc_create(e->cl, &d, &h);
    if (rc != GMC_OK)
        fail_msg("%s:%d: %s: expected segment %u offset %#llx, got %s", file, line, e->what, seg,
                 (unsigned long long)off, gmc_status_name(rc));
    struct gmc_alloc_info ai;
    assert_int_equal(gmc_alloc_query(e->cl, h, &ai), GMC_OK);
    if (ai.segment != seg || ai.offset != off)
        fail_msg("%s:%d: %s: expected segment %u offset %#llx, got segment %u offset %#llx", file, line, e->what,
                 seg, (unsigned long long)off, ai.segment, (unsigned long long)ai.offset);
    return h;
}

struct snap {
    struct gmc_device_info info;
    struct gmc_segment_info seg[4];
};

static void take(const struct env *e, struct snap *s)
{
    memset(s, 0, sizeof(*s));
    assert_int_equal(gmc_device_query(e->dev, &s->info), GMC_OK);
    for (unsigned i = 0; i < s->info.segment_count && i < 4u; i++)
        assert_int_equal(gmc_segment_query(e->dev, i + 1u, &s->seg[i]), GMC_OK);
}

/* Refused with exactly `status`, and nothing changed. */
#define expect_refused(e, r, status) expect_refused_at((e), (r), (status), __FILE__, __LINE__)
static void expect_refused_at(struct env *e, const struct req *r, int status, const char *file, int line)
{
    struct snap before, after;
    take(e, &before);
    struct gmc_alloc_desc d;
    desc_of(r, &d);
    gmc_handle h = 1;
    int rc = gmc_alloc_create(e->cl, &d, &h);
    if (status == GMC_E_NO_SPACE && !(d.flags & (GMC_ALLOC_OVERLAY | GMC_ALLOC_CAPTURE))) {
        /* No room: the allocation is created unplaced (it is placed when
         * made resident), and nothing already placed moves. */
        if (rc != GMC_OK)
            fail_msg("%s:%d: %s: expected an unplaced create, got %s", file, line, e->what, gmc_status_name(rc));
        struct gmc_alloc_info ai;
        assert_int_equal(gmc_alloc_query(e->cl, h, &ai), GMC_OK);
        if (ai.segment != 0u || (ai.state & GMC_ALLOC_STATE_PLACED))
            fail_msg("%s:%d: %s: expected no placement, got segment %u", file, line, e->what, ai.segment);
        assert_int_equal(gmc_alloc_destroy(e->cl, h), GMC_OK);
        take(e, &after);
        if (memcmp(&before, &after, sizeof(before)) != 0)
            fail_msg("%s:%d: state changed by an unplaced create", file, line);
        return;
    }
    if (rc != status)
        fail_msg("%s:%d: %s: expected %s, got %s", file, line, e->what, gmc_status_name(status),
                 gmc_status_name(rc));
    assert_int_equal(h, GMC_HANDLE_NONE);
    take(e, &after);
    if (memcmp(&before, &after, sizeof(before)) != 0)
        fail_msg("%s:%d: state changed by a refused create", file, line);
}

#define expect_segment(e, id, used, largest) expect_segment_at((e), (id), (used), (largest), __FILE__, __LINE__)
static void expect_segment_at(struct env *e, unsigned id, uint64_t used, uint64_t largest, const char *file,
                              int line)
{
    struct gmc_segment_info si;
    assert_int_equal(gmc_segment_query(e->dev, id, &si), GMC_OK);
    if (si.used != used || si.largest_free != largest || si.free != si.desc.size - used)
        fail_msg("%s:%d: segment %u: expected used %#llx largest %#llx, got used %#llx largest %#llx free %#llx",
                 file, line, id, (unsigned long long)used, (unsigned long long)largest,
                 (unsigned long long)si.used, (unsigned long long)si.largest_free, (unsigned long long)si.free);
}

static void destroy(struct env *e, gmc_handle h)
{
    assert_int_equal(gmc_alloc_destroy(e->cl, h), GMC_OK);
}

/* ---------------------------------------------------------- fill order */

struct fillcase {
    const char *what;
    uint32_t flags;
    uint8_t pref_dir; /* 0xFF: no preference */
    int top_down;     /* expected */
};

static void test_fill_order(void **state)
{
    (void)state;
    const struct fillcase cases[] = {
        { "default: bottom-up", 0, 0xFF, 0 },
        { "FromEndOfSegment: top-down", GMC_ALLOC_FROM_END_OF_SEGMENT, 0xFF, 1 },
        { "preference top-down", 0, 1, 1 },
        { "preference bottom-up", 0, 0, 0 },
        { "preference bottom-up outranks FromEndOfSegment", GMC_ALLOC_FROM_END_OF_SEGMENT, 0, 0 },
        { "preference top-down with FromEndOfSegment", GMC_ALLOC_FROM_END_OF_SEGMENT, 1, 1 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct env e;
        env_open(&e);
        e.what = cases[c].what;
        struct req r = { .size = PG, .supported = BIT(1), .flags = cases[c].flags };
        if (cases[c].pref_dir != 0xFF)
            r.pref[0] = (struct gmc_segment_pref){ 1, cases[c].pref_dir };
        for (uint64_t i = 0; i < 256; i++) {
            uint64_t off = cases[c].top_down ? 1 * MiB - (i + 1u) * PG : i * PG;
            expect_place(&e, &r, 1, off);
        }
        expect_segment(&e, 1, 1 * MiB, 0);
        expect_refused(&e, &r, GMC_E_NO_SPACE);
        env_close(&e);
    }
}

/* Fill, free one (in a seeded random order), re-insert: same place. */
static void test_fill_free_reinsert(void **state)
{
    (void)state;
    static const uint64_t sizes[] = { PG, 4 * PG, 64 * KiB };
    for (int top = 0; top < 2; top++) {
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            struct env e;
            env_open(&e);
            struct req r = { .size = sizes[s], .supported = BIT(1) };
            r.pref[0] = (struct gmc_segment_pref){ 1, (uint8_t)top };
            unsigned n = (unsigned)(1 * MiB / sizes[s]);
            gmc_handle h[256];
            uint64_t off[256];
            for (unsigned i = 0; i < n; i++) {
                off[i] = top ? 1 * MiB - (i + 1u) * sizes[s] : i * sizes[s];
                h[i] = expect_place(&e, &r, 1, off[i]);
            }
            uint64_t seed = 0x1234u + s * 7u + (uint64_t)top;
            for (unsigned k = 0; k < 64; k++) {
                unsigned i = (unsigned)(rnd(&seed) % n);
                destroy(&e, h[i]);
                expect_segment(&e, 1, 1 * MiB - sizes[s], sizes[s]);
                h[i] = expect_place(&e, &r, 1, off[i]);
            }
            /* free two, re-insert: the lower comes back first bottom-up, the higher top-down */
            unsigned a = (unsigned)(rnd(&seed) % n), b = (a + 1u + (unsigned)(rnd(&seed) % (n - 1u))) % n;
            destroy(&e, h[a]);
            destroy(&e, h[b]);
            uint64_t lo = off[a] < off[b] ? off[a] : off[b], hi = off[a] < off[b] ? off[b] : off[a];
            expect_place(&e, &r, 1, top ? hi : lo);
            expect_place(&e, &r, 1, top ? lo : hi);
            env_close(&e);
        }
    }
}

/* ------------------------------------------------------ hole selection */

struct holecase {
    const char *what;
    uint64_t pages;
    uint32_t align;
    int top;
    int64_t page; /* expected first page, -1: no space */
};

static void test_hole_selection(void **state)
{
    (void)state;
    /* Holes (in pages): [0,1) and [255,256) too small at the edges for most
     * requests, [10,13), [50,52), [100,104), [200,203). */
    static const unsigned holes[][2] = { { 0, 1 }, { 10, 13 }, { 50, 52 }, { 100, 104 }, { 200, 203 }, { 255, 256 } };
    const struct holecase cases[] = {
        { "3 pages, the lower of the two smallest holes that fit", 3, 0, 0, 10 },
        { "3 pages, highest fitting hole", 3, 0, 1, 200 },
        { "4 pages, the one hole", 4, 0, 0, 100 },
        { "4 pages top-down, the one hole", 4, 0, 1, 100 },
        { "2 pages, the smallest hole that fits (best fit)", 2, 0, 0, 50 },
        { "2 pages top-down, top of the highest", 2, 0, 1, 201 },
        { "1 page, the bottom edge", 1, 0, 0, 0 },
        { "1 page top-down, the top edge", 1, 0, 1, 255 },
        { "5 pages: nothing fits", 5, 0, 0, -1 },
        { "5 pages top-down: nothing fits", 5, 0, 1, -1 },
        { "2 pages at 16 KiB, misaligned holes skipped, the smaller", 2, 16 * 1024, 0, 200 },
        { "2 pages at 16 KiB top-down", 2, 16 * 1024, 1, 200 },
        { "4 pages at 16 KiB", 4, 16 * 1024, 0, 100 },
        { "3 pages at 32 KiB: only page 200 is aligned", 3, 32 * 1024, 0, 200 },
        { "4 pages at 32 KiB: none aligned", 4, 32 * 1024, 0, -1 },
        { "1 page at 1 MiB: only page 0", 1, 1024 * 1024, 1, 0 },
    };
    struct env e;
    env_open(&e);
    struct req fill = { .size = PG, .supported = BIT(1) };
    gmc_handle h[256];
    for (unsigned i = 0; i < 256; i++)
        h[i] = expect_place(&e, &fill, 1, i * PG);
    for (size_t k = 0; k < sizeof(holes) / sizeof(holes[0]); k++) {
        for (unsigned p = holes[k][0]; p < holes[k][1]; p++)
            destroy(&e, h[p]);
    }
    expect_segment(&e, 1, (256 - 14) * PG, 4 * PG);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const struct holecase *t = &cases[c];
        e.what = t->what;
        struct req r = { .size = t->pages * PG, .align = t->align, .supported = BIT(1) };
        r.pref[0] = (struct gmc_segment_pref){ 1, (uint8_t)t->top };
        if (t->page < 0) {
            expect_refused(&e, &r, GMC_E_NO_SPACE);
            continue;
        }
        gmc_handle x = expect_place(&e, &r, 1, (uint64_t)t->page * PG);
        destroy(&e, x); /* back to the same holes for the next row */
    }
    env_close(&e);
}

/* ------------------------------------------------ segment preferences */

struct prefcase {
    const char *what;
    uint32_t supported;
    uint8_t pref[3][2];
    uint32_t flags;
    uint32_t full; /* segments filled beforehand */
    unsigned seg;
    uint64_t off;
};

static void test_preferences(void **state)
{
    (void)state;
    const uint32_t FE = GMC_ALLOC_FROM_END_OF_SEGMENT;
    const struct prefcase cases[] = {
        { "no preference: lowest id", BIT(1) | BIT(2) | BIT(4), { { 0 } }, 0, 0, 1, 0 },
        { "no preference, 1 full: next id", BIT(1) | BIT(2) | BIT(4), { { 0 } }, 0, BIT(1), 2, 0 },
        { "no preference, 1 and 2 full", BIT(1) | BIT(2) | BIT(4), { { 0 } }, 0, BIT(1) | BIT(2), 4, 0 },
        { "preferred 2", BIT(1) | BIT(2), { { 2, 0 } }, 0, 0, 2, 0 },
        { "preferred 2 top-down", BIT(1) | BIT(2), { { 2, 1 } }, 0, 0, 2, 1 * MiB - PG },
        { "preferred 4 then 1", BIT(1) | BIT(4), { { 4, 0 }, { 1, 0 } }, 0, 0, 4, 0 },
        { "preferred 4 full: then 1", BIT(1) | BIT(4), { { 4, 0 }, { 1, 1 } }, 0, BIT(4), 1, 1 * MiB - PG },
        { "preferred 2 full, not listed 1: bottom-up", BIT(1) | BIT(2), { { 2, 1 } }, 0, BIT(2), 1, 0 },
        { "preferred full, rest FromEndOfSegment", BIT(1) | BIT(2), { { 2, 0 } }, FE, BIT(2), 1, 1 * MiB - PG },
        { "FromEndOfSegment, no preference", BIT(2), { { 0 } }, FE, 0, 2, 1 * MiB - PG },
        { "preferences over id order", BIT(1) | BIT(2) | BIT(4), { { 4, 1 }, { 2, 0 } }, 0, 0, 4, 1 * MiB - PG },
        { "all full", BIT(1) | BIT(2), { { 2, 0 } }, 0, BIT(1) | BIT(2), 0, 0 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const struct prefcase *t = &cases[c];
        struct env e;
        env_open(&e);
        for (unsigned id = 1; id <= 4; id++) {
            if (t->full & BIT(id)) {
                struct req f = { .size = 1 * MiB, .supported = BIT(id), .align = id == 3 ? 64 * KiB : 0 };
                expect_place(&e, &f, id, 0);
            }
        }
        struct req r = { .size = PG, .supported = t->supported, .flags = t->flags };
        for (unsigned i = 0; i < 3; i++)
            r.pref[i] = (struct gmc_segment_pref){ t->pref[i][0], t->pref[i][1] };
        e.what = t->what;
        if (t->seg == 0)
            expect_refused(&e, &r, GMC_E_NO_SPACE);
        else
            expect_place(&e, &r, t->seg, t->off);
        env_close(&e);
    }
}

/* ----------------------------------------------------------- bank hints */

struct bankcase {
    const char *what;
    uint64_t size;
    uint8_t banks[4];
    int top;
    uint32_t flags;
    uint8_t full_banks; /* bit b-1: bank b filled beforehand */
    unsigned seg;
    uint64_t off;
};

static void test_bank_hints(void **state)
{
    (void)state;
    const uint64_t B = 256 * KiB;
    const struct bankcase cases[] = {
        { "bank 3", PG, { 3 }, 0, 0, 0, 2, 2 * B },
        { "bank 3 top-down", PG, { 3 }, 1, 0, 0, 2, 3 * B - PG },
        { "bank 1", 8 * PG, { 1 }, 0, 0, 0, 2, 0 },
        { "bank 4 top-down", PG, { 4 }, 1, 0, 0, 2, 4 * B - PG },
        { "bank 3 full: next hinted bank 1", PG, { 3, 1 }, 0, 0, 1u << 2, 2, 0 },
        { "banks 3 and 1 full: anywhere, bottom-up", PG, { 3, 1 }, 0, 0, (1u << 2) | 1u, 2, B },
        { "banks 3 and 1 full: anywhere, top-down", PG, { 3, 1 }, 1, 0, (1u << 2) | 1u, 2, 4 * B - PG },
        { "whole bank exactly", 256 * KiB, { 2 }, 0, 0, 0, 2, B },
        { "larger than a bank: anywhere", 300 * KiB, { 4 }, 0, 0, 0, 2, 0 },
        { "all banks full: next supported segment", PG, { 2 }, 0, 0, 0xF, 1, 0 },
        { "overlay, bank outside the pinned region: pinned region", PG, { 1 }, 0, GMC_ALLOC_OVERLAY, 0, 2,
          1 * MiB - SEG1_PINNED },
        { "overlay in bank 4, the part inside the pinned region", PG, { 4 }, 1, GMC_ALLOC_OVERLAY, 0, 2,
          1 * MiB - PG },
        { "hints ignored beyond the list end", PG, { 2, 0, 0, 0 }, 0, 0, 1u << 1, 2, 0 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const struct bankcase *t = &cases[c];
        struct env e;
        env_open(&e);
        for (unsigned b = 1; b <= 4; b++) {
            if (t->full_banks & (1u << (b - 1u))) {
                struct req f = { .size = B, .supported = BIT(2), .banks = { (uint8_t)b } };
                f.pref[0] = (struct gmc_segment_pref){ 2, 0 };
                expect_place(&e, &f, 2, (b - 1u) * B);
            }
        }
        struct req r = { .size = t->size, .supported = BIT(1) | BIT(2), .flags = t->flags };
        memcpy(r.banks, t->banks, sizeof(r.banks));
        r.pref[0] = (struct gmc_segment_pref){ 2, (uint8_t)t->top };
        e.what = t->what;
        expect_place(&e, &r, t->seg, t->off);
        env_close(&e);
    }
    /* the rule table guards the hints: a bank that does not exist */
    struct env e;
    env_open(&e);
    struct req r = { .size = PG, .supported = BIT(2), .banks = { 5 } };
    r.pref[0] = (struct gmc_segment_pref){ 2, 0 };
    expect_refused(&e, &r, GMC_E_RULE_HINTEDBANK_INVALID);
    r.pref[0].id = 1;
    r.supported = BIT(1);
    r.banks[0] = 1;
    expect_refused(&e, &r, GMC_E_RULE_HINTEDBANK_WITHOUT_BANKED_SEGMENT);
    env_close(&e);
}

/* ------------------------------------------------------- 64 KiB pages */

static void test_64k_pages(void **state)
{
    (void)state;
    struct env e;
    env_open(&e);
    struct req r = { .size = PG, .supported = BIT(3), .align = 4 * 1024 };
    expect_refused(&e, &r, GMC_E_RULE_ALIGNMENT_NOT_64KB);
    r.align = 0;
    expect_refused(&e, &r, GMC_E_RULE_ALIGNMENT_NOT_64KB);
    r.align = 64 * 1024;
    gmc_handle h[16];
    for (unsigned i = 0; i < 16; i++)
        h[i] = expect_place(&e, &r, 3, i * 64 * KiB);
    struct gmc_alloc_info ai;
    assert_int_equal(gmc_alloc_query(e.cl, h[0], &ai), GMC_OK);
    assert_int_equal(ai.size, PG);
    assert_int_equal(ai.placed_size, 64 * KiB);
    assert_int_equal(ai.alignment, 64 * KiB);
    expect_segment(&e, 3, 1 * MiB, 0);
    expect_refused(&e, &r, GMC_E_NO_SPACE);
    for (unsigned i = 0; i < 16; i += 2)
        destroy(&e, h[i]);
    /* 100 KiB takes two pages; the free pages are single: none fits */
    r.size = 100 * KiB;
    expect_refused(&e, &r, GMC_E_NO_SPACE);
    destroy(&e, h[1]);
    gmc_handle two = expect_place(&e, &r, 3, 0);
    assert_int_equal(gmc_alloc_query(e.cl, two, &ai), GMC_OK);
    assert_int_equal(ai.placed_size, 128 * KiB);
    assert_int_equal(ai.size, 100 * KiB);
    /* top-down at 128 KiB alignment */
    r.size = PG;
    r.align = 128 * 1024;
    r.pref[0] = (struct gmc_segment_pref){ 3, 1 };
    expect_place(&e, &r, 3, 14 * 64 * KiB);
    /* the alignment holds in a 4 KiB-page segment too, with no rounding there */
    r.supported = BIT(1) | BIT(3);
    r.pref[0] = (struct gmc_segment_pref){ 1, 0 };
    r.align = 64 * 1024;
    gmc_handle a = expect_place(&e, &r, 1, 0);
    expect_place(&e, &r, 1, 64 * KiB);
    assert_int_equal(gmc_alloc_query(e.cl, a, &ai), GMC_OK);
    assert_int_equal(ai.placed_size, PG);
    env_close(&e);
}

/* --------------------------------------------------- alignment, sizes */

static void test_alignment_and_sizes(void **state)
{
    (void)state;
    struct env e;
    env_open(&e);
    struct req r = { .size = 1, .supported = BIT(1) };
    gmc_handle h = expect_place(&e, &r, 1, 0);
    struct gmc_alloc_info ai;
    assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
    assert_int_equal(ai.size, PG); /* expanded to a page */
    r.size = PG + 1;
    h = expect_place(&e, &r, 1, PG);
    assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
    assert_int_equal(ai.size, 2 * PG);
    r.size = PG;
    r.align = 32 * 1024;
    expect_place(&e, &r, 1, 32 * KiB);
    r.align = 512 * 1024;
    expect_place(&e, &r, 1, 512 * KiB);
    r.align = 1024 * 1024; /* only offset 0 would do, and it is taken */
    expect_refused(&e, &r, GMC_E_NO_SPACE);
    r.supported = BIT(1) | BIT(2);
    expect_place(&e, &r, 2, 0); /* segment 2 starts at 1 MiB */
    r.align = 3 * 4096;
    expect_refused(&e, &r, GMC_E_RULE_ALIGNMENT_NOT_POWER_OF_TWO);
    r.align = 0;
    r.size = 2 * MiB; /* larger than any segment */
    expect_refused(&e, &r, GMC_E_NO_SPACE);
    r.size = UINT64_MAX;
    expect_refused(&e, &r, GMC_E_RULE_ALLOC_SIZE_INVALID);
    r.size = 0;
    expect_refused(&e, &r, GMC_E_RULE_ALLOC_SIZE_INVALID);
    /* AccessedPhysically: contiguous by construction, one range */
    r.size = 64 * KiB;
    r.flags = GMC_ALLOC_ACCESSED_PHYSICALLY;
    r.supported = BIT(2);
    h = expect_place(&e, &r, 2, PG); /* after the 1 MiB-aligned page at 0 */
    assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
    assert_int_equal(ai.placed_size, 64 * KiB);
    env_close(&e);

    /* PitchAlignedSize is the size in a PitchAlignment segment */
    static const struct gmc_sim_segment pitch[2] = {
        { 0, 1 * MiB, 0, F(CPU_VISIBLE), 0, 0 },
        { 1 * MiB, 1 * MiB, 0, F(PITCH_ALIGNMENT), 0, 0 },
    };
    env_open_with(&e, pitch, 2);
    struct gmc_alloc_desc d;
    gmc_alloc_desc_init(&d);
    d.size = 10 * KiB;
    d.pitch_aligned_size = 20 * KiB + 1;
    d.supported_segments = BIT(1) | BIT(2);
    d.preferred[0] = (struct gmc_segment_pref){ 2, 0 };
    assert_int_equal(gmc_alloc_create(e.cl, &d, &h), GMC_OK);
    assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
    assert_int_equal(ai.segment, 2);
    assert_int_equal(ai.size, 24 * KiB);
    d.preferred[0].id = 1;
    assert_int_equal(gmc_alloc_create(e.cl, &d, &h), GMC_OK);
    assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
    assert_int_equal(ai.segment, 1);
    assert_int_equal(ai.size, 12 * KiB);
    d.pitch_aligned_size = UINT64_MAX; /* cannot be placed in segment 2 at all */
    d.preferred[0].id = 2;
    assert_int_equal(gmc_alloc_create(e.cl, &d, &h), GMC_OK);
    assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
    assert_int_equal(ai.segment, 1);
    env_close(&e);
}

/* -------------------------------------------------- overlay, capture */

static void test_overlay_capture(void **state)
{
    (void)state;
    const uint64_t start = 1 * MiB - SEG1_PINNED;
    struct env e;
    env_open(&e);
    struct gmc_segment_info si;
    assert_int_equal(gmc_segment_query(e.dev, 1, &si), GMC_OK);
    assert_int_equal(si.pinned_start, start);

    struct req ov = { .size = PG, .supported = BIT(1), .flags = GMC_ALLOC_OVERLAY };
    expect_place(&e, &ov, 1, start);
    expect_place(&e, &ov, 1, start + PG);
    struct req cap = { .size = 2 * PG, .supported = BIT(1), .flags = GMC_ALLOC_CAPTURE };
    expect_place(&e, &cap, 1, start + 2 * PG);
    ov.flags |= GMC_ALLOC_FROM_END_OF_SEGMENT;
    gmc_handle top = expect_place(&e, &ov, 1, 1 * MiB - PG);
    struct gmc_alloc_info ai;
    assert_int_equal(gmc_alloc_query(e.cl, top, &ai), GMC_OK);
    assert_true(ai.state & GMC_ALLOC_STATE_PINNED);
    /* the rest of the pinned region, exactly */
    ov.size = SEG1_PINNED - 5 * PG;
    expect_place(&e, &ov, 1, start + 4 * PG);
    /* full: an overlay is refused while the rest of the segment is empty */
    ov.size = PG;
    expect_refused(&e, &ov, GMC_E_NO_SPACE);
    expect_segment(&e, 1, SEG1_PINNED, start);
    /* larger than the pinned region of every supported segment: the rule */
    ov.size = SEG1_PINNED + PG;
    expect_refused(&e, &ov, GMC_E_RULE_OVERLAY_TOO_LARGE);
    cap.size = SEG1_PINNED + PG;
    expect_refused(&e, &cap, GMC_E_RULE_CAPTURE_TOO_LARGE);
    /* an overlay that may also live in the aperture goes to its pinned region */
    ov.size = PG;
    ov.supported = BIT(1) | BIT(4);
    expect_place(&e, &ov, 4, 1 * MiB - PG);
    env_close(&e);

    /* normal allocations may use the pinned region when nothing else is left */
    env_open(&e);
    struct req big = { .size = start, .supported = BIT(1) };
    expect_place(&e, &big, 1, 0);
    struct req small = { .size = PG, .supported = BIT(1) };
    expect_place(&e, &small, 1, start);
    env_close(&e);
}

/* ------------------------------------------------------- fragmentation */

static void test_fragmentation(void **state)
{
    (void)state;
    struct env e;
    env_open(&e);
    struct req r = { .size = PG, .supported = BIT(1) };
    gmc_handle h[256];
    for (unsigned i = 0; i < 256; i++)
        h[i] = expect_place(&e, &r, 1, i * PG);
    for (unsigned i = 0; i < 256; i += 2)
        destroy(&e, h[i]);
    expect_segment(&e, 1, 128 * PG, PG);
    struct req two = { .size = 2 * PG, .supported = BIT(1) };
    expect_refused(&e, &two, GMC_E_NO_SPACE); /* 512 KiB free, none contiguous */
    destroy(&e, h[101]);
    expect_segment(&e, 1, 127 * PG, 3 * PG);
    expect_place(&e, &two, 1, 100 * PG);
    two.pref[0] = (struct gmc_segment_pref){ 1, 1 };
    two.size = PG;
    expect_place(&e, &two, 1, 254 * PG);
    env_close(&e);
}

/* ------------------------------------------------------------ reference */

/* A naive model of the policy: per segment, a sorted array of placed
 * ranges; candidates, windows, banks and directions as docs/placement.md
 * states them, found by scanning every gap. */
struct rseg {
    uint64_t base, size;
    uint32_t flags;
    unsigned banks;
    uint64_t (*r)[2]; /* [start, end) sorted */
    size_t n, cap;
    uint64_t used;
};

static int ref_fit(const struct rseg *s, uint64_t size, uint64_t align, int high, uint64_t wf, uint64_t wl,
                   uint64_t *at)
{
    /* gaps: before r[0], between, after r[n-1]; as inclusive [lo, hi].
     * Top-down: the highest gap that fits, at its top. Otherwise best fit:
     * the smallest gap (its whole size, before clipping to the window) that
     * fits, the lowest of equal ones, at its bottom. */
    uint64_t best_size = 0;
    int found = 0;
    for (size_t k = 0; k <= s->n; k++) {
        size_t g = high ? s->n - k : k;
        uint64_t lo = g == 0 ? s->base : s->r[g - 1][1];
        uint64_t end = g == s->n ? s->base + s->size : s->r[g][0];
        if (end == lo)
            continue;
        uint64_t gap = end - lo;
        uint64_t hi = end - 1u;
        if (lo < wf)
            lo = wf;
        if (hi > wl)
            hi = wl;
        if (lo > hi || hi - lo + 1u < size)
            continue;
        uint64_t cand = high ? (hi - size + 1u) & ~(align - 1u) : (lo + align - 1u) & ~(align - 1u);
        if (cand >= lo && cand <= hi && hi - cand + 1u >= size) {
            if (high) {
                *at = cand;
                return 1;
            }
            if (!found || gap < best_size) {
                best_size = gap;
                *at = cand;
                found = 1;
            }
        }
    }
    return found;
}

static void ref_add(struct rseg *s, uint64_t at, uint64_t size)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2u : 256u;
        s->r = realloc(s->r, s->cap * sizeof(*s->r));
        assert_non_null(s->r);
    }
    size_t i = s->n;
    while (i > 0 && s->r[i - 1][0] > at) {
        s->r[i][0] = s->r[i - 1][0];
        s->r[i][1] = s->r[i - 1][1];
        i--;
    }
    s->r[i][0] = at;
    s->r[i][1] = at + size;
    s->n++;
    s->used += size;
}

static void ref_del(struct rseg *s, uint64_t at)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->r[i][0] == at) {
            s->used -= s->r[i][1] - s->r[i][0];
            memmove(&s->r[i], &s->r[i + 1], (s->n - i - 1u) * sizeof(*s->r));
            s->n--;
            return;
        }
    }
    fail_msg("reference: nothing at %#llx", (unsigned long long)at);
}

struct rplace {
    unsigned seg; /* 1-based, 0: no space */
    uint64_t at, size;
};

static struct rplace ref_place(struct rseg *segs, unsigned nsegs, const struct gmc_alloc_desc *d)
{
    unsigned ids[8], n = 0;
    int high[8];
    uint32_t listed = 0;
    for (unsigned i = 0; i < GMC_MAX_PREFERRED_SEGMENTS && d->preferred[i].id; i++) {
        ids[n] = d->preferred[i].id;
        high[n++] = d->preferred[i].top_down;
        listed |= BIT(d->preferred[i].id);
    }
    for (unsigned id = 1; id <= nsegs; id++) {
        if ((d->supported_segments & BIT(id)) && !(listed & BIT(id))) {
            ids[n] = id;
            high[n++] = (d->flags & GMC_ALLOC_FROM_END_OF_SEGMENT) != 0;
        }
    }
    for (unsigned c = 0; c < n; c++) {
        struct rseg *s = &segs[ids[c] - 1u];
        uint64_t size = (d->size + PG - 1u) & ~(PG - 1u);
        uint64_t align = d->alignment > PG ? d->alignment : PG;
        uint64_t wf = s->base, wl = s->base + s->size - 1u, at;
        if (d->flags & (GMC_ALLOC_OVERLAY | GMC_ALLOC_CAPTURE)) {
            uint64_t pinned = (s->size / 5u) & ~(PG - 1u);
            if (pinned == 0)
                continue;
            wf = wl - pinned + 1u;
        }
        if (c == 0 && d->preferred[0].id && d->hinted_banks[0] && (s->flags & F(USE_BANKING))) {
            uint64_t bank = s->size / s->banks;
            for (unsigned b = 0; b < GMC_MAX_HINTED_BANKS && d->hinted_banks[b]; b++) {
                uint64_t bf = s->base + (d->hinted_banks[b] - 1u) * bank, bl = bf + bank - 1u;
                if (ref_fit(s, size, align, high[c], bf > wf ? bf : wf, bl < wl ? bl : wl, &at))
                    return (struct rplace){ ids[c], at, size };
            }
        }
        if (ref_fit(s, size, align, high[c], wf, wl, &at))
            return (struct rplace){ ids[c], at, size };
    }
    return (struct rplace){ 0, 0, 0 };
}

static uint64_t ref_largest(const struct rseg *s)
{
    uint64_t best = 0;
    for (size_t g = 0; g <= s->n; g++) {
        uint64_t lo = g == 0 ? s->base : s->r[g - 1][1];
        uint64_t end = g == s->n ? s->base + s->size : s->r[g][0];
        if (end - lo > best)
            best = end - lo;
    }
    return best;
}

/* A random descriptor for the default hardware's three segments. */
static void random_desc(uint64_t *seed, struct gmc_alloc_desc *d)
{
    gmc_alloc_desc_init(d);
    uint64_t x = rnd(seed) % 100u;
    uint64_t pages = x < 80 ? 1u + rnd(seed) % 2u : x < 95 ? 3u + rnd(seed) % 6u : 9u + rnd(seed) % 24u;
    d->size = pages * PG - rnd(seed) % PG;
    static const uint32_t aligns[] = { 0, 0, 0, 4096, 8192, 65536 };
    d->alignment = aligns[rnd(seed) % 6u];
    do
        d->supported_segments = (uint32_t)(rnd(seed) & 7u);
    while (d->supported_segments == 0);
    unsigned np = 0;
    for (unsigned id = 1; id <= 3; id++) {
        if ((d->supported_segments & BIT(id)) && rnd(seed) % 2u)
            d->preferred[np++] = (struct gmc_segment_pref){ (uint8_t)id, (uint8_t)(rnd(seed) % 2u) };
    }
    if (np == 2 && rnd(seed) % 2u) { /* other preference orders too */
        struct gmc_segment_pref t = d->preferred[0];
        d->preferred[0] = d->preferred[1];
        d->preferred[1] = t;
    }
    if (rnd(seed) % 10u < 3u)
        d->flags |= GMC_ALLOC_FROM_END_OF_SEGMENT;
    if (rnd(seed) % 20u == 0u)
        d->flags |= GMC_ALLOC_OVERLAY;
    if (d->preferred[0].id == 2 && rnd(seed) % 10u < 4u) {
        unsigned a = 1u + (unsigned)(rnd(seed) % 4u), b = 1u + (unsigned)(rnd(seed) % 4u);
        d->hinted_banks[0] = (uint8_t)a;
        if (b != a)
            d->hinted_banks[1] = (uint8_t)b;
    }
    if (d->flags & GMC_ALLOC_OVERLAY)
        d->size = PG;
}

struct live {
    gmc_handle h;
    unsigned seg;
    uint64_t at, size;
};

static void check_all(struct env *e, struct rseg *segs, const struct live *lv, size_t n)
{
    struct gmc_device_info di;
    assert_int_equal(gmc_device_query(e->dev, &di), GMC_OK);
    assert_int_equal(di.allocations, n);
    assert_int_equal(di.handles, n);
    for (size_t i = 0; i < n; i++) {
        struct gmc_alloc_info ai;
        assert_int_equal(gmc_alloc_query(e->cl, lv[i].h, &ai), GMC_OK);
        if (ai.segment != lv[i].seg || ai.gpu_address != lv[i].at || ai.placed_size != lv[i].size)
            fail_msg("allocation %zu: expected segment %u at %#llx size %#llx, got segment %u at %#llx size %#llx",
                     i, lv[i].seg, (unsigned long long)lv[i].at, (unsigned long long)lv[i].size, ai.segment,
                     (unsigned long long)ai.gpu_address, (unsigned long long)ai.placed_size);
    }
    for (unsigned s = 0; s < 3; s++) {
        for (size_t i = 1; i < segs[s].n; i++)
            assert_true(segs[s].r[i - 1][1] <= segs[s].r[i][0]); /* no overlap */
        struct gmc_segment_info si;
        assert_int_equal(gmc_segment_query(e->dev, s + 1u, &si), GMC_OK);
        if (si.used != segs[s].used || si.allocations != segs[s].n || si.largest_free != ref_largest(&segs[s]))
            fail_msg("segment %u: expected used %#llx count %zu largest %#llx, got %#llx %llu %#llx", s + 1u,
                     (unsigned long long)segs[s].used, segs[s].n, (unsigned long long)ref_largest(&segs[s]),
                     (unsigned long long)si.used, (unsigned long long)si.allocations,
                     (unsigned long long)si.largest_free);
    }
}

static void test_stress_10k(void **state)
{
    (void)state;
    struct env e;
    assert_int_equal(gmc_device_open("sim", &e.dev), GMC_OK);
    assert_int_equal(gmc_client_create(e.dev, NULL, &e.cl), GMC_OK);
    struct rseg segs[3];
    memset(segs, 0, sizeof(segs));
    for (unsigned s = 0; s < 3; s++) {
        struct gmc_segment_info si;
        assert_int_equal(gmc_segment_query(e.dev, s + 1u, &si), GMC_OK);
        segs[s].base = si.desc.base;
        segs[s].size = si.desc.size;
        segs[s].flags = si.desc.flags;
        segs[s].banks = si.desc.banks;
    }
    enum { CREATES = 10000 };
    struct live *lv = calloc(CREATES, sizeof(*lv));
    assert_non_null(lv);
    size_t n = 0;
    unsigned placed = 0, nospace = 0, freed = 0;
    uint64_t seed = 0xC0FFEEull;
    /* 10,000 successful creates; frees start once the segments are busy */
    for (unsigned i = 0; placed < CREATES; i++) {
        assert_true(i < 4u * CREATES);
        if (placed >= 2000u && n > 0 && rnd(&seed) % 100u < 50u) {
            size_t k = rnd(&seed) % n;
            assert_int_equal(gmc_alloc_destroy(e.cl, lv[k].h), GMC_OK);
            ref_del(&segs[lv[k].seg - 1u], lv[k].at);
            lv[k] = lv[--n];
            freed++;
        }
        struct gmc_alloc_desc d;
        random_desc(&seed, &d);
        struct rplace want = ref_place(segs, 3, &d);
        gmc_handle h = 0;
        int rc = gmc_alloc_create(e.cl, &d, &h);
        if (want.seg == 0 && (d.flags & (GMC_ALLOC_OVERLAY | GMC_ALLOC_CAPTURE))) {
            /* Pinned: placed at creation or refused. */
            if (rc != GMC_E_NO_SPACE)
                fail_msg("create %u: expected GMC_E_NO_SPACE for a pinned allocation, got %s", i,
                         gmc_status_name(rc));
            nospace++;
            continue;
        }
        if (want.seg == 0) {
            /* No room: created unplaced; it would be placed when made resident. */
            struct gmc_alloc_info ai;
            if (rc != GMC_OK)
                fail_msg("create %u: expected an unplaced create, got %s", i, gmc_status_name(rc));
            assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
            if (ai.segment != 0u)
                fail_msg("create %u: expected no placement, got segment %u", i, ai.segment);
            assert_int_equal(gmc_alloc_destroy(e.cl, h), GMC_OK);
            nospace++;
            continue;
        }
        if (rc != GMC_OK)
            fail_msg("create %u: expected segment %u at %#llx, got %s", i, want.seg, (unsigned long long)want.at,
                     gmc_status_name(rc));
        struct gmc_alloc_info ai;
        assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
        if (ai.segment != want.seg || ai.gpu_address != want.at || ai.placed_size != want.size)
            fail_msg("create %u: expected segment %u at %#llx size %#llx, got segment %u at %#llx size %#llx", i,
                     want.seg, (unsigned long long)want.at, (unsigned long long)want.size, ai.segment,
                     (unsigned long long)ai.gpu_address, (unsigned long long)ai.placed_size);
        ref_add(&segs[want.seg - 1u], want.at, want.size);
        lv[n++] = (struct live){ h, want.seg, want.at, want.size };
        placed++;
        if (i % 1000u == 999u)
            check_all(&e, segs, lv, n);
    }
    check_all(&e, segs, lv, n);
    print_message("stress: %u placed, %u refused (no space), %u freed, %zu live\n", placed, nospace, freed, n);
    assert_true(placed == CREATES && nospace > 100u && freed > 3000u);
    while (n > 0) {
        assert_int_equal(gmc_alloc_destroy(e.cl, lv[n - 1u].h), GMC_OK);
        ref_del(&segs[lv[n - 1u].seg - 1u], lv[n - 1u].at);
        n--;
    }
    check_all(&e, segs, lv, 0);
    for (unsigned s = 0; s < 3; s++)
        free(segs[s].r);
    free(lv);
    env_close(&e);
}

/* Same inputs, same decisions: two devices replay one script. */
static void test_deterministic(void **state)
{
    (void)state;
    struct env a, b;
    assert_int_equal(gmc_device_open("sim", &a.dev), GMC_OK);
    assert_int_equal(gmc_client_create(a.dev, NULL, &a.cl), GMC_OK);
    assert_int_equal(gmc_device_open("sim", &b.dev), GMC_OK);
    assert_int_equal(gmc_client_create(b.dev, NULL, &b.cl), GMC_OK);
    gmc_handle ha[600], hb[600];
    size_t n = 0;
    uint64_t seed = 7;
    for (unsigned i = 0; i < 2000; i++) {
        if (n > 0 && rnd(&seed) % 3u == 0u) {
            size_t k = rnd(&seed) % n;
            assert_int_equal(gmc_alloc_destroy(a.cl, ha[k]), GMC_OK);
            assert_int_equal(gmc_alloc_destroy(b.cl, hb[k]), GMC_OK);
            ha[k] = ha[n - 1u];
            hb[k] = hb[--n];
        }
        struct gmc_alloc_desc d;
        random_desc(&seed, &d);
        int ra = gmc_alloc_create(a.cl, &d, &ha[n]);
        int rb = gmc_alloc_create(b.cl, &d, &hb[n]);
        assert_int_equal(ra, rb);
        if (ra != GMC_OK || n + 1u >= 600u)
            continue;
        struct gmc_alloc_info ia, ib;
        assert_int_equal(gmc_alloc_query(a.cl, ha[n], &ia), GMC_OK);
        assert_int_equal(gmc_alloc_query(b.cl, hb[n], &ib), GMC_OK);
        assert_int_equal(ia.segment, ib.segment);
        assert_int_equal(ia.gpu_address, ib.gpu_address);
        assert_int_equal(ha[n], hb[n]); /* handle values too */
        n++;
    }
    gmc_device_close(a.dev); /* oldest first (see test_share.c) */
    gmc_device_close(b.dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_order),
        cmocka_unit_test(test_fill_free_reinsert),
        cmocka_unit_test(test_hole_selection),
        cmocka_unit_test(test_preferences),
        cmocka_unit_test(test_bank_hints),
        cmocka_unit_test(test_64k_pages),
        cmocka_unit_test(test_alignment_and_sizes),
        cmocka_unit_test(test_overlay_capture),
        cmocka_unit_test(test_fragmentation),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_stress_10k),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
