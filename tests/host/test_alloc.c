/*
 * test_alloc.c - allocations through the public API: every allocation rule
 * of the table wired into gmc_alloc_create (exact status, nothing changed
 * on failure), handles (stale, freed, forged, fuzzed), query, CPU access
 * through the aperture, Zeroed, ReadOnly and the lock-permission checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gmc.h"
#include "gmc_rules.h"
#include "gmc_sim.h"
#include "gmc_test.h"
#include "gmc_test_device.h"
#include "gmc_vidmm.h"
#include "rules_cases.h"

#define F(x) GMC_SEGFLAGS_##x##_MASK
#define KiB 1024u
#define MiB (1024u * 1024u)

static _Alignas(GMC_PAGE_SIZE) unsigned char sysbuf[RULES_CASE_BUF_SIZE];

/* ---------------------------------------------------------------- helpers */

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* Everything the library reports about its state. */
struct snap {
    struct gmc_device_info info;
    struct gmc_segment_info seg[GMC_MAX_SEGMENTS];
};

static void take(const gmc_device *dev, struct snap *s)
{
    memset(s, 0, sizeof(*s));
    assert_int_equal(gmc_device_query(dev, &s->info), GMC_OK);
    for (unsigned i = 0; i < s->info.segment_count; i++)
        assert_int_equal(gmc_segment_query(dev, i + 1u, &s->seg[i]), GMC_OK);
}

#define assert_unchanged(dev, before, what) assert_unchanged_at((dev), (before), (what), __FILE__, __LINE__)
static void assert_unchanged_at(const gmc_device *dev, const struct snap *before, const char *what,
                                const char *file, int line)
{
    struct snap now;
    take(dev, &now);
    if (now.info.allocations != before->info.allocations || now.info.handles != before->info.handles)
        fail_msg("%s:%d %s: allocations %llu -> %llu, handles %llu -> %llu", file, line, what,
                 (unsigned long long)before->info.allocations, (unsigned long long)now.info.allocations,
                 (unsigned long long)before->info.handles, (unsigned long long)now.info.handles);
    for (unsigned i = 0; i < now.info.segment_count; i++) {
        const struct gmc_segment_info *a = &before->seg[i], *b = &now.seg[i];
        if (a->used != b->used || a->free != b->free || a->largest_free != b->largest_free ||
            a->allocations != b->allocations)
            fail_msg("%s:%d %s: segment %u used %llu -> %llu, allocations %llu -> %llu", file, line, what,
                     i + 1u, (unsigned long long)a->used, (unsigned long long)b->used,
                     (unsigned long long)a->allocations, (unsigned long long)b->allocations);
    }
    if (memcmp(&now, before, sizeof(now)) != 0)
        fail_msg("%s:%d %s: device state changed", file, line, what);
}

#define assert_status(got, want) assert_status_at((got), (want), __FILE__, __LINE__)
static void assert_status_at(int got, int want, const char *file, int line)
{
    if (got != want)
        fail_msg("%s:%d: expected %s, got %s", file, line, gmc_status_name(want), gmc_status_name(got));
}

/* The default hardware (docs/hardware.md) and one client on it. */
struct env {
    gmc_device *dev;
    gmc_client *cl;
};

static void env_open(struct env *e, const struct gmc_sim_config *cfg)
{
    assert_int_equal(gmc_device_open_sim(cfg, NULL, &e->dev), GMC_OK);
    assert_int_equal(gmc_client_create(e->dev, NULL, &e->cl), GMC_OK);
}

static void env_close(struct env *e)
{
    gmc_device_close(e->dev);
    e->dev = NULL;
    e->cl = NULL;
}

/* A CPU-visible allocation in segment 1 of the default hardware. */
static void desc_visible(struct gmc_alloc_desc *d, uint64_t size)
{
    gmc_alloc_desc_init(d);
    d->size = size;
    d->flags = GMC_ALLOC_CPU_VISIBLE;
    d->supported_segments = GMC_SEGMENT_BIT(1);
}

static gmc_handle create_ok(gmc_client *cl, const struct gmc_alloc_desc *d)
{
    gmc_handle h = 0;
    int rc = gmc_alloc_create(cl, d, &h);
    if (rc != GMC_OK)
        fail_msg("create: %s", gmc_status_name(rc));
    assert_true(h != GMC_HANDLE_NONE);
    return h;
}

/* --------------------------------- every allocation rule, both ways */

struct layout_dev {
    unsigned nsegs;
    struct gmc_segment_desc segs[RULES_CASE_MAX_SEGS];
    struct env env;
};

static struct env *env_for(struct layout_dev *cache, unsigned *n, const struct rules_case *c)
{
    for (unsigned i = 0; i < *n; i++) {
        if (cache[i].nsegs == c->nsegs && memcmp(cache[i].segs, c->segs, sizeof(c->segs)) == 0)
            return &cache[i].env;
    }
    assert_true(*n < 16u);
    struct layout_dev *l = &cache[(*n)++];
    l->nsegs = c->nsegs;
    memcpy(l->segs, c->segs, sizeof(c->segs));
    struct gmc_sim_config cfg;
    gmc_sim_config_default(&cfg);
    cfg.strap_segments = 1;
    cfg.seg_count = c->nsegs;
    for (unsigned i = 0; i < c->nsegs; i++) {
        const struct gmc_segment_desc *s = &c->segs[i];
        cfg.seg[i] = (struct gmc_sim_segment){ s->base, s->size, s->cpu_offset, s->flags, (uint8_t)s->banks, s->sysmem_end };
    }
    env_open(&l->env, &cfg);
    return &l->env;
}

static void load(const struct rules_case *c, struct gmc_alloc_desc *d)
{
    *d = c->desc;
    if (c->sysmem_offset != RULES_CASE_NO_SYSMEM)
        d->system_mem = sysbuf + c->sysmem_offset;
}

static void test_rule_rows_through_create(void **state)
{
    (void)state;
    struct layout_dev cache[16];
    unsigned ncache = 0, rows = 0;
    for (unsigned i = 0; i < RULES_CASE_COUNT; i++) {
        const struct gmc_rule *r = gmc_rule_find(rules_cases[i].id);
        assert_non_null(r);
        if (r->scope != GMC_RULE_SCOPE_ALLOC)
            continue;
        rows++;
        struct gmc_alloc_desc d;
        struct snap before;

        /* passing case: created, placed in its supported set, destroyed */
        struct env *e = env_for(cache, &ncache, &rules_cases[i].pass);
        load(&rules_cases[i].pass, &d);
        take(e->dev, &before);
        gmc_handle h = 0;
        int rc = gmc_alloc_create(e->cl, &d, &h);
        if (rc != GMC_OK)
            fail_msg("%s pass: got %s", r->id, gmc_status_name(rc));
        struct gmc_alloc_info ai;
        assert_int_equal(gmc_alloc_query(e->cl, h, &ai), GMC_OK);
        assert_true(d.supported_segments & GMC_SEGMENT_BIT(ai.segment));
        assert_int_equal(ai.flags, d.flags);
        assert_int_equal(ai.kmt_flags, d.kmt_flags);
        if (d.flags & (GMC_ALLOC_OVERLAY | GMC_ALLOC_CAPTURE)) {
            struct gmc_segment_info si;
            assert_int_equal(gmc_segment_query(e->dev, ai.segment, &si), GMC_OK);
            assert_true(ai.offset >= si.pinned_start);
        }
        assert_int_equal(gmc_alloc_destroy(e->cl, h), GMC_OK);
        assert_unchanged(e->dev, &before, r->id);

        /* failing case: its own status, no handle, nothing changed */
        e = env_for(cache, &ncache, &rules_cases[i].fail);
        load(&rules_cases[i].fail, &d);
        take(e->dev, &before);
        h = 0xDEADull;
        rc = gmc_alloc_create(e->cl, &d, &h);
        if (rc != r->status)
            fail_msg("%s fail: expected %s, got %s", r->id, gmc_status_name(r->status), gmc_status_name(rc));
        assert_int_equal(h, GMC_HANDLE_NONE);
        assert_ptr_equal(gmc_rule_for_status(rc), r);
        assert_unchanged(e->dev, &before, r->id);
    }
    assert_int_equal(rows, 68); /* -1020, -1027, -1208 retired */
    for (unsigned i = 0; i < ncache; i++)
        env_close(&cache[i].env);
}

/* ------------------------------------------------ create, query, destroy */

static void test_create_query_destroy(void **state)
{
    (void)state;
    struct env e;
    env_open(&e, NULL);
    struct gmc_alloc_desc d;
    desc_visible(&d, 1);
    d.info2_flags = GMC_INFO2_OVERRIDE_PRIORITY;
    d.umd_priority = GMC_PRIORITY_HIGH;
    gmc_handle h = create_ok(e.cl, &d);
    struct gmc_alloc_info ai;
    assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
    assert_int_equal(ai.size, GMC_PAGE_SIZE); /* expanded to whole pages */
    assert_int_equal(ai.placed_size, GMC_PAGE_SIZE);
    assert_int_equal(ai.segment, 1);
    assert_int_equal(ai.offset, 0);
    assert_int_equal(ai.gpu_address, 0);
    assert_int_equal(ai.alignment, GMC_PAGE_SIZE);
    assert_int_equal(ai.priority, GMC_PRIORITY_HIGH);
    /* placed at once (there is room), no content until its first page-in */
    assert_int_equal(ai.state, GMC_ALLOC_STATE_CREATOR | GMC_ALLOC_STATE_CPU_REACHABLE | GMC_ALLOC_STATE_PLACED);
    assert_int_equal(ai.open_count, 1);
    assert_int_equal(ai.share_handle, GMC_HANDLE_NONE);

    struct gmc_segment_info si;
    assert_int_equal(gmc_segment_query(e.dev, 1, &si), GMC_OK);
    assert_int_equal(si.used, GMC_PAGE_SIZE);
    assert_int_equal(si.allocations, 1);
    struct gmc_device_info di;
    assert_int_equal(gmc_device_query(e.dev, &di), GMC_OK);
    assert_int_equal(di.allocations, 1);
    assert_int_equal(di.handles, 1);
    assert_int_equal(di.clients, 1);

    /* a pinned overlay, in the aperture segment, at normal priority */
    gmc_alloc_desc_init(&d);
    d.size = 0x3000;
    d.flags = GMC_ALLOC_OVERLAY;
    d.supported_segments = GMC_SEGMENT_BIT(3);
    gmc_handle o = create_ok(e.cl, &d);
    assert_int_equal(gmc_alloc_query(e.cl, o, &ai), GMC_OK);
    assert_int_equal(ai.segment, 3);
    assert_int_equal(ai.gpu_address, 0x80000000u + ai.offset);
    assert_int_equal(ai.priority, GMC_PRIORITY_NORMAL);
    /* pinned: placed and paged in at creation (its content is the system
     * copy the aperture maps) */
    assert_int_equal(ai.state, GMC_ALLOC_STATE_CREATOR | GMC_ALLOC_STATE_PINNED | GMC_ALLOC_STATE_PLACED |
                                   GMC_ALLOC_STATE_HAS_CONTENT);

    /* destroy: gone, and a second destroy is refused */
    assert_int_equal(gmc_alloc_destroy(e.cl, h), GMC_OK);
    assert_status(gmc_alloc_destroy(e.cl, h), GMC_E_BAD_HANDLE);
    assert_status(gmc_alloc_query(e.cl, h, &ai), GMC_E_BAD_HANDLE);
    assert_int_equal(ai.size, 0); /* the out-parameter is zeroed */
    assert_int_equal(gmc_segment_query(e.dev, 1, &si), GMC_OK);
    assert_int_equal(si.used, 0);

    /* NULL arguments change nothing and leave safe outputs */
    struct snap before;
    take(e.dev, &before);
    h = 77;
    assert_status(gmc_alloc_create(NULL, &d, &h), GMC_E_NULL_POINTER);
    assert_int_equal(h, 0);
    h = 77;
    assert_status(gmc_alloc_create(e.cl, NULL, &h), GMC_E_NULL_POINTER);
    assert_int_equal(h, 0);
    assert_status(gmc_alloc_create(e.cl, &d, NULL), GMC_E_NULL_POINTER);
    assert_status(gmc_alloc_destroy(NULL, o), GMC_E_NULL_POINTER);
    assert_status(gmc_alloc_query(NULL, o, &ai), GMC_E_NULL_POINTER);
    assert_status(gmc_alloc_query(e.cl, o, NULL), GMC_E_NULL_POINTER);
    assert_status(gmc_alloc_can_lock(NULL, o, 0), GMC_E_NULL_POINTER);
    assert_status(gmc_alloc_read(e.cl, o, 0, NULL, 1), GMC_E_NULL_POINTER);
    assert_status(gmc_alloc_write(e.cl, o, 0, NULL, 1), GMC_E_NULL_POINTER);
    gmc_client *cl2 = (gmc_client *)&h;
    assert_status(gmc_client_create(NULL, NULL, &cl2), GMC_E_NULL_POINTER);
    assert_null(cl2);
    assert_status(gmc_client_create(e.dev, NULL, NULL), GMC_E_NULL_POINTER);
    struct gmc_client_desc cd = { 0x2u, 0 };
    cl2 = (gmc_client *)&h;
    assert_status(gmc_client_create(e.dev, &cd, &cl2), GMC_E_INVALID_ARG);
    assert_null(cl2);
    assert_status(gmc_device_query(NULL, &di), GMC_E_NULL_POINTER);
    assert_status(gmc_segment_query(e.dev, 1, NULL), GMC_E_NULL_POINTER);
    gmc_client_destroy(NULL);
    assert_unchanged(e.dev, &before, "NULL arguments");
    env_close(&e);
}

/* --------------------------------------------------- handles, fuzzed */

static int holds(const gmc_handle *v, unsigned n, gmc_handle h)
{
    for (unsigned i = 0; i < n; i++) {
        if (v[i] == h)
            return 1;
    }
    return 0;
}

static void test_handles_fuzzed(void **state)
{
    (void)state;
    struct env e;
    env_open(&e, NULL);
    gmc_client *other = NULL;
    assert_int_equal(gmc_client_create(e.dev, NULL, &other), GMC_OK);
    enum { N = 64 };
    gmc_handle mine[N], theirs[N], stale[N];
    unsigned nmine = 0, nstale = 0;
    struct gmc_alloc_desc d;
    desc_visible(&d, 0x1000);
    d.supported_segments = GMC_SEGMENT_BIT(1) | GMC_SEGMENT_BIT(2);
    for (unsigned i = 0; i < N; i++) {
        gmc_handle h = create_ok(e.cl, &d);
        if (i % 2u) {
            assert_int_equal(gmc_alloc_destroy(e.cl, h), GMC_OK);
            stale[nstale++] = h;
        } else {
            mine[nmine++] = h;
        }
        theirs[i] = create_ok(other, &d);
    }
    /* a reused slot gets a new generation: the stale value stays dead */
    gmc_handle again = create_ok(e.cl, &d);
    assert_false(holds(stale, nstale, again));
    mine[nmine++] = again;

    struct snap before;
    take(e.dev, &before);
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    unsigned valid = 0;
    for (unsigned i = 0; i < 6000; i++) {
        gmc_handle v;
        switch (i % 6u) {
        case 0: v = rnd(&seed); break;                                    /* random */
        case 1: v = mine[rnd(&seed) % nmine] ^ (1ull << (rnd(&seed) % 64)); break; /* one bit flipped */
        case 2: v = stale[rnd(&seed) % nstale]; break;                     /* freed */
        case 3: v = theirs[rnd(&seed) % N]; break;                         /* another client's */
        case 4: v = rnd(&seed) & 0xFFFFFFFFull; break;                     /* small values */
        default: v = mine[rnd(&seed) % nmine]; break;                      /* valid */
        }
        int ok = holds(mine, nmine, v);
        valid += (unsigned)ok;
        struct gmc_alloc_info ai;
        assert_status(gmc_alloc_query(e.cl, v, &ai), ok ? GMC_OK : GMC_E_BAD_HANDLE);
        if (!ok) {
            unsigned char b[8];
            assert_status(gmc_alloc_destroy(e.cl, v), GMC_E_BAD_HANDLE);
            assert_status(gmc_alloc_can_lock(e.cl, v, 0), GMC_E_BAD_HANDLE);
            assert_status(gmc_alloc_read(e.cl, v, 0, b, sizeof(b)), GMC_E_BAD_HANDLE);
            assert_status(gmc_alloc_write(e.cl, v, 0, b, sizeof(b)), GMC_E_BAD_HANDLE);
            gmc_handle out = 1;
            assert_status(gmc_alloc_open(e.cl, v, &out), GMC_E_BAD_HANDLE);
            assert_int_equal(out, 0);
            assert_status(gmc_alloc_share_nt(e.cl, v, other, &out), GMC_E_BAD_HANDLE);
        }
    }
    assert_true(valid >= 1000u);
    assert_unchanged(e.dev, &before, "fuzzed handles");
    /* every valid handle still works, and the other client's too */
    for (unsigned i = 0; i < nmine; i++)
        assert_int_equal(gmc_alloc_destroy(e.cl, mine[i]), GMC_OK);
    for (unsigned i = 0; i < N; i++)
        assert_int_equal(gmc_alloc_query(other, theirs[i], &(struct gmc_alloc_info){ 0 }), GMC_OK);
    gmc_client_destroy(other);
    struct gmc_device_info di;
    assert_int_equal(gmc_device_query(e.dev, &di), GMC_OK);
    assert_int_equal(di.allocations, 0);
    assert_int_equal(di.handles, 0);
    env_close(&e);
}

/* ------------------------------------------------ CPU access, aperture */

static void test_cpu_read_write(void **state)
{
    (void)state;
    struct env e;
    env_open(&e, NULL);
    struct gmc_alloc_desc d;
    desc_visible(&d, 0x10000);
    gmc_handle pad = create_ok(e.cl, &d); /* so the next one is not at 0 */
    d.size = 0x5000;
    gmc_handle h = create_ok(e.cl, &d);
    struct gmc_alloc_info ai;
    assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
    assert_int_equal(ai.offset, 0x10000);
    assert_int_equal(ai.size, 0x5000);

    unsigned char out[0x3000], in[0x3000];
    uint64_t seed = 42;
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (unsigned char)rnd(&seed);
    assert_int_equal(gmc_alloc_write(e.cl, h, 0x123, out, sizeof(out)), GMC_OK);
    assert_int_equal(gmc_alloc_read(e.cl, h, 0x123, in, sizeof(in)), GMC_OK);
    assert_memory_equal(in, out, sizeof(out));
    /* the bytes are in VRAM where the allocation is placed */
    unsigned char peek[0x3000];
    assert_int_equal(gmc_sim_vram_peek(gmc_device_sim(e.dev), ai.gpu_address + 0x123, peek, sizeof(peek)), 0);
    assert_memory_equal(peek, out, sizeof(out));

    /* bounds: the last byte, then one past it, and wrapping offsets */
    assert_int_equal(gmc_alloc_read(e.cl, h, 0x4FFF, in, 1), GMC_OK);
    memset(in, 0x55, 16);
    assert_status(gmc_alloc_read(e.cl, h, 0x4FFF, in, 2), GMC_E_OUT_OF_BOUNDS);
    assert_int_equal(in[0], 0x55); /* refused before any transfer: untouched */
    assert_int_equal(in[1], 0x55);
    assert_status(gmc_alloc_write(e.cl, h, 0x5000, out, 1), GMC_E_OUT_OF_BOUNDS);
    assert_status(gmc_alloc_write(e.cl, h, UINT64_MAX, out, 2), GMC_E_OUT_OF_BOUNDS);
    assert_status(gmc_alloc_read(e.cl, h, 1, in, SIZE_MAX), GMC_E_OUT_OF_BOUNDS);
    assert_int_equal(gmc_alloc_read(e.cl, h, 0x5000, NULL, 0), GMC_OK);
    /* the neighbour was not touched by the refused writes */
    assert_int_equal(gmc_alloc_read(e.cl, pad, 0xFFF0, in, 16), GMC_OK);
    assert_int_equal(gmc_sim_vram_peek(gmc_device_sim(e.dev), 0xFFF0, peek, 16), 0);
    assert_memory_equal(in, peek, 16);

    /* a CPU-visible allocation placed in VRAM the CPU cannot reach */
    d.supported_segments = GMC_SEGMENT_BIT(2);
    gmc_handle far = create_ok(e.cl, &d);
    assert_int_equal(gmc_alloc_query(e.cl, far, &ai), GMC_OK);
    assert_int_equal(ai.segment, 2);
    assert_false(ai.state & GMC_ALLOC_STATE_CPU_REACHABLE);
    assert_int_equal(gmc_alloc_can_lock(e.cl, far, 0), GMC_OK);
    assert_status(gmc_alloc_read(e.cl, far, 0, in, 4), GMC_E_NOT_CPU_VISIBLE);
    assert_status(gmc_alloc_write(e.cl, far, 0, out, 4), GMC_E_NOT_CPU_VISIBLE);
    env_close(&e);
}

/* ------------------------------------------------------------- Zeroed */

static int all_zero(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (b[i] != 0u)
            return 0;
    }
    return 1;
}

static void test_zeroed(void **state)
{
    (void)state;
    struct env e;
    env_open(&e, NULL);
    gmc_sim *sim = gmc_device_sim(e.dev);
    static unsigned char buf[0x20000];
    struct gmc_alloc_desc d;
    desc_visible(&d, sizeof(buf));

    /* leave a pattern in VRAM; a plain re-create in the same place does not
     * see it: its first page-in fills GMC_FILL_UNINITIALISED */
    gmc_handle h = create_ok(e.cl, &d);
    memset(buf, 0xA5, sizeof(buf));
    assert_int_equal(gmc_alloc_write(e.cl, h, 0, buf, sizeof(buf)), GMC_OK);
    assert_int_equal(gmc_sim_vram_peek(sim, sizeof(buf) - 1, buf, 1), 0);
    assert_int_equal(buf[0], 0xA5);
    assert_int_equal(gmc_alloc_destroy(e.cl, h), GMC_OK);
    h = create_ok(e.cl, &d);
    struct gmc_alloc_info ai;
    assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
    assert_int_equal(ai.offset, 0);
    assert_false(ai.state & GMC_ALLOC_STATE_HAS_CONTENT);
    assert_int_equal(gmc_alloc_read(e.cl, h, 0, buf, sizeof(buf)), GMC_OK);
    for (size_t i = 0; i < sizeof(buf); i++)
        if (buf[i] != (uint8_t)(GMC_FILL_UNINITIALISED >> (8u * (i & 3u))))
            fail_msg("byte %zu: %#x, expected the uninitialised pattern", i, buf[i]);
    assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
    assert_true(ai.state & GMC_ALLOC_STATE_HAS_CONTENT);
    assert_int_equal(gmc_alloc_destroy(e.cl, h), GMC_OK);

    /* Zeroed in the same place reads back zeros, through BAR1 and in VRAM */
    d.kmt_flags = GMC_KMT_ZEROED;
    h = create_ok(e.cl, &d);
    assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
    assert_int_equal(ai.offset, 0);
    assert_true(ai.state & GMC_ALLOC_STATE_ZERO_PENDING);
    memset(buf, 0xFF, sizeof(buf));
    assert_int_equal(gmc_alloc_read(e.cl, h, 0, buf, sizeof(buf)), GMC_OK);
    assert_true(all_zero(buf, sizeof(buf)));
    assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
    assert_false(ai.state & GMC_ALLOC_STATE_ZERO_PENDING);
    memset(buf, 0xFF, sizeof(buf));
    assert_int_equal(gmc_sim_vram_peek(sim, 0, buf, sizeof(buf)), 0);
    assert_true(all_zero(buf, sizeof(buf)));

    /* not CPU-reachable: zero-filled by the engine on first page-in */
    d.supported_segments = GMC_SEGMENT_BIT(2);
    d.flags = 0;
    gmc_handle z2 = create_ok(e.cl, &d);
    assert_int_equal(gmc_alloc_query(e.cl, z2, &ai), GMC_OK);
    assert_int_equal(ai.segment, 2);
    assert_true(ai.state & GMC_ALLOC_STATE_ZERO_PENDING);
    memset(buf, 0xEE, sizeof(buf));
    assert_int_equal(gmc_sim_vram_peek(sim, ai.gpu_address, buf, 64), 0);
    struct gmc_residency_result rr;
    assert_int_equal(gmc_make_resident(e.cl, &z2, 1, &rr), GMC_OK);
    assert_true(rr.paging_fence > 0);
    assert_int_equal(gmc_fence_wait(e.dev, rr.paging_fence, 0), GMC_OK);
    assert_int_equal(gmc_sim_vram_peek(sim, ai.gpu_address, buf, sizeof(buf)), 0);
    assert_true(all_zero(buf, sizeof(buf)));
    assert_int_equal(gmc_alloc_query(e.cl, z2, &ai), GMC_OK);
    assert_false(ai.state & GMC_ALLOC_STATE_ZERO_PENDING);
    assert_true(ai.state & GMC_ALLOC_STATE_RESIDENT);
    d.supported_segments = GMC_SEGMENT_BIT(3);
    d.flags = GMC_ALLOC_CACHED | GMC_ALLOC_CPU_VISIBLE;
    gmc_handle z3 = create_ok(e.cl, &d);
    assert_int_equal(gmc_alloc_query(e.cl, z3, &ai), GMC_OK);
    assert_int_equal(ai.segment, 3);
    assert_true(ai.state & GMC_ALLOC_STATE_ZERO_PENDING);
    /* the aperture's content lives in system memory: zeros there */
    memset(buf, 0xFF, sizeof(buf));
    assert_int_equal(gmc_alloc_read(e.cl, z3, 0, buf, sizeof(buf)), GMC_OK);
    assert_true(all_zero(buf, sizeof(buf)));
    env_close(&e);
}

/* A CPU access the bus refuses answers GMC_E_BUS and leaves no lock behind. */
static void test_bar_refusal_releases_lock(void **state)
{
    (void)state;
    struct gmc_sim_config c;
    gmc_sim_config_default(&c);
    c.strap_segments = 1;
    c.seg_count = 1;
    /* BAR1 offsets [1 MiB, 3 MiB): the upper half is past the 2 MiB window */
    c.seg[0] = (struct gmc_sim_segment){ 0, 2 * MiB, 1 * MiB, F(CPU_VISIBLE), 0, 0 };
    struct env e;
    env_open(&e, &c);
    struct gmc_alloc_desc d;
    desc_visible(&d, 1536 * KiB);
    d.kmt_flags = GMC_KMT_ZEROED;
    gmc_handle h = create_ok(e.cl, &d);
    unsigned char b[64];
    memset(b, 0x77, sizeof(b));
    /* the engine zero-fills all of it; the CPU reaches only the window */
    assert_status(gmc_alloc_read(e.cl, h, 1536 * KiB - 64, b, sizeof(b)), GMC_E_BUS);
    assert_true(all_zero(b, sizeof(b))); /* a failed read zeroes the buffer */
    struct gmc_alloc_info ai;
    assert_int_equal(gmc_alloc_query(e.cl, h, &ai), GMC_OK);
    assert_false(ai.state & GMC_ALLOC_STATE_LOCKED);
    assert_true(ai.state & GMC_ALLOC_STATE_HAS_CONTENT);
    memset(b, 0x77, sizeof(b));
    assert_int_equal(gmc_alloc_read(e.cl, h, 512 * KiB - 64, b, sizeof(b)), GMC_OK);
    assert_true(all_zero(b, sizeof(b)));
    uint8_t z[64];
    assert_int_equal(gmc_sim_vram_peek(gmc_device_sim(e.dev), 1536 * KiB - 64, z, sizeof(z)), 0);
    assert_true(all_zero(z, sizeof(z)));
    env_close(&e);
}

/* ------------------------------------------- ReadOnly and lock rights */

static void test_read_only(void **state)
{
    (void)state;
    struct env e;
    env_open(&e, NULL);
    struct gmc_alloc_desc d;
    desc_visible(&d, 0x2000);
    d.kmt_flags = GMC_KMT_READ_ONLY | GMC_KMT_ZEROED;
    gmc_handle h = create_ok(e.cl, &d);
    unsigned char b[16];
    memset(b, 0x77, sizeof(b));
    assert_status(gmc_alloc_write(e.cl, h, 0, b, sizeof(b)), GMC_E_READ_ONLY);
    assert_status(gmc_alloc_can_write(e.cl, h), GMC_E_READ_ONLY);
    assert_status(gmc_alloc_can_lock(e.cl, h, 0), GMC_E_READ_ONLY);
    assert_status(gmc_alloc_can_lock(e.cl, h, GMC_LOCK_WRITE_ONLY), GMC_E_READ_ONLY);
    assert_int_equal(gmc_alloc_can_lock(e.cl, h, GMC_LOCK_READ_ONLY), GMC_OK);
    assert_int_equal(gmc_alloc_read(e.cl, h, 0, b, sizeof(b)), GMC_OK);
    assert_true(all_zero(b, sizeof(b))); /* the refused write wrote nothing */
    d.kmt_flags = 0;
    gmc_handle w = create_ok(e.cl, &d);
    assert_int_equal(gmc_alloc_can_write(e.cl, w), GMC_OK);
    assert_int_equal(gmc_alloc_write(e.cl, w, 0, b, sizeof(b)), GMC_OK);
    env_close(&e);
}

struct lockcase {
    const char *what;
    uint32_t flags, kmt;
    uint32_t lock;
    int status;
};

static void test_lock_permissions(void **state)
{
    (void)state;
    struct env e;
    env_open(&e, NULL);
    const uint32_t V = GMC_ALLOC_CPU_VISIBLE;
    const struct lockcase cases[] = {
        { "CPU-visible, read-write", V, 0, 0, GMC_OK },
        { "CPU-visible, read-only lock", V, 0, GMC_LOCK_READ_ONLY, GMC_OK },
        { "CPU-visible, write-only lock", V, 0, GMC_LOCK_WRITE_ONLY, GMC_OK },
        { "both lock directions", V, 0, GMC_LOCK_READ_ONLY | GMC_LOCK_WRITE_ONLY, GMC_E_LOCK_FLAGS },
        { "read-only discard", V, 0, GMC_LOCK_READ_ONLY | GMC_LOCK_DISCARD, GMC_E_LOCK_FLAGS },
        { "unknown lock flag", V, 0, 0x8, GMC_E_INVALID_ARG },
        { "reserved lock flag", V, 0, 0x80000000u, GMC_E_INVALID_ARG },
        { "not CpuVisible", 0, 0, 0, GMC_E_NOT_CPU_VISIBLE },
        { "not CpuVisible, read-only lock", 0, 0, GMC_LOCK_READ_ONLY, GMC_E_NOT_CPU_VISIBLE },
        { "Protected", V | GMC_ALLOC_PROTECTED, 0, GMC_LOCK_READ_ONLY, GMC_E_PROTECTED },
        { "HardwareProtected", GMC_ALLOC_HARDWARE_PROTECTED, 0, GMC_LOCK_READ_ONLY, GMC_E_NOT_CPU_VISIBLE },
        { "ReadOnly, read lock", V, GMC_KMT_READ_ONLY, GMC_LOCK_READ_ONLY, GMC_OK },
        { "ReadOnly, write lock", V, GMC_KMT_READ_ONLY, GMC_LOCK_WRITE_ONLY, GMC_E_READ_ONLY },
        { "shared, creator", V, GMC_KMT_CREATE_SHARED | GMC_KMT_CREATE_RESOURCE, 0, GMC_OK },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct lockcase *c = &cases[i];
        struct gmc_alloc_desc d;
        gmc_alloc_desc_init(&d);
        d.size = 0x1000;
        d.flags = c->flags;
        d.kmt_flags = c->kmt;
        d.supported_segments = (c->flags & GMC_ALLOC_HARDWARE_PROTECTED) ? GMC_SEGMENT_BIT(2) : GMC_SEGMENT_BIT(1);
        gmc_handle h = create_ok(e.cl, &d);
        int rc = gmc_alloc_can_lock(e.cl, h, c->lock);
        if (rc != c->status)
            fail_msg("%s: expected %s, got %s", c->what, gmc_status_name(c->status), gmc_status_name(rc));
        unsigned char b[4];
        if (c->lock == GMC_LOCK_READ_ONLY && c->status != GMC_OK)
            assert_status(gmc_alloc_read(e.cl, h, 0, b, sizeof(b)), c->status);
        assert_int_equal(gmc_alloc_destroy(e.cl, h), GMC_OK);
    }
    env_close(&e);
}

/* ------------------------------------------------- clients own handles */

static void test_client_destroy_releases(void **state)
{
    (void)state;
    struct env e;
    env_open(&e, NULL);
    gmc_client *a = NULL, *b = NULL;
    assert_int_equal(gmc_client_create(e.dev, NULL, &a), GMC_OK);
    assert_int_equal(gmc_client_create(e.dev, NULL, &b), GMC_OK);
    struct gmc_alloc_desc d;
    desc_visible(&d, 0x3000);
    d.supported_segments = GMC_SEGMENT_BIT(1) | GMC_SEGMENT_BIT(2);
    for (unsigned i = 0; i < 100; i++) {
        create_ok(a, &d);
        create_ok(b, &d);
    }
    struct gmc_device_info di;
    assert_int_equal(gmc_device_query(e.dev, &di), GMC_OK);
    assert_int_equal(di.allocations, 200);
    assert_int_equal(di.clients, 3);
    gmc_client_destroy(a);
    assert_int_equal(gmc_device_query(e.dev, &di), GMC_OK);
    assert_int_equal(di.allocations, 100);
    assert_int_equal(di.handles, 100);
    assert_int_equal(di.clients, 2);
    struct gmc_segment_info s1, s2;
    assert_int_equal(gmc_segment_query(e.dev, 1, &s1), GMC_OK);
    assert_int_equal(gmc_segment_query(e.dev, 2, &s2), GMC_OK);
    assert_true(s2.allocations > 0); /* 200 x 12 KiB overflowed segment 1 */
    assert_int_equal(s1.used + s2.used, 100u * 0x3000u);
    assert_int_equal(s1.allocations + s2.allocations, 100);
    /* the device closes with b's allocations still live (no leak under ASan) */
    env_close(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_rows_through_create),
        cmocka_unit_test(test_create_query_destroy),
        cmocka_unit_test(test_handles_fuzzed),
        cmocka_unit_test(test_cpu_read_write),
        cmocka_unit_test(test_zeroed),
        cmocka_unit_test(test_bar_refusal_releases_lock),
        cmocka_unit_test(test_read_only),
        cmocka_unit_test(test_lock_permissions),
        cmocka_unit_test(test_client_destroy_releases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
