/*
 * test_adapter.c - the driver's adapter query and the segment rules at
 * open: identity and version checks, descriptors read from the registers
 * (never hard-coded), and model configurations (straps) that break every
 * DXGK_SEGMENTFLAGS rule family, each refused with its own status and
 * reported with its rule and descriptor.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gmc.h"
#include "gmc_backend.h"
#include "gmc_device.h"
#include "gmc_devstr.h"
#include "gmc_rules.h"
#include "gmc_sim.h"
#include "gmc_test.h"
#include "gmc_test_device.h"
#include "gmc_vidmm.h"
#include "rules_cases.h"

#define F(x) GMC_SEGFLAGS_##x##_MASK
#define MiB (1024u * 1024u)

/* ---------------------------------------------------------------- helpers */

struct cfg {
    struct gmc_sim_config sim;
};

/* The default three segments of docs/hardware.md, as straps to edit. */
static void cfg_default(struct gmc_sim_config *c)
{
    gmc_sim_config_default(c);
    c->strap_segments = 1;
    c->seg_count = 3;
    c->seg[0] = (struct gmc_sim_segment){ 0, 2 * MiB, 0, F(CPU_VISIBLE) | F(PRESERVED_DURING_STANDBY), 0, 0 };
    c->seg[1] = (struct gmc_sim_segment){ 2 * MiB, 0x5F0000, 0, F(USE_BANKING) | F(PRESERVED_DURING_STANDBY), 4, 0 };
    c->seg[2] = (struct gmc_sim_segment){ 0x80000000u, 16 * MiB, 0,
                                          F(APERTURE) | F(CACHE_COHERENT) | F(PRESERVED_DURING_STANDBY) |
                                              F(PRESERVED_DURING_HIBERNATE),
                                          0, 0 };
}

/* Open with straps; assert status, failing rule and descriptor. */
static void expect_open(const struct gmc_sim_config *c, int status, const char *rule_id,
                        unsigned segment, const char *what)
{
    gmc_device *dev = (gmc_device *)&dev;
    struct gmc_open_report rep;
    int rc = gmc_device_open_sim(c, &rep, &dev);
    const char *got_rule = rep.rule != NULL ? gmc_rule_id(rep.rule) : "(none)";
    if (rc != status || (rule_id != NULL && strcmp(got_rule, rule_id) != 0) ||
        (rule_id == NULL && rep.rule != NULL) || rep.segment != segment)
        fail_msg("%s: expected %s rule %s segment %u, got %s rule %s segment %u", what,
                 gmc_status_name(status), rule_id ? rule_id : "(none)", segment, gmc_status_name(rc),
                 got_rule, rep.segment);
    if (rc == GMC_OK) {
        assert_non_null(dev);
        gmc_device_close(dev);
    } else {
        assert_null(dev);
        if (rule_id != NULL)
            assert_int_equal(gmc_rule_status(rep.rule), status);
    }
}

/* ------------------------------------------------- descriptors from registers */

static void test_default_segments(void **state)
{
    (void)state;
    gmc_device *dev = NULL;
    assert_int_equal(gmc_device_open("sim", &dev), GMC_OK);
    struct gmc_sim_config c;
    cfg_default(&c);
    for (unsigned i = 0; i < 3; i++) {
        struct gmc_segment_info si;
        assert_int_equal(gmc_segment_query(dev, i + 1u, &si), GMC_OK);
        assert_int_equal(si.desc.id, i + 1u);
        assert_int_equal(si.desc.base, c.seg[i].base);
        assert_int_equal(si.desc.size, c.seg[i].size);
        assert_int_equal(si.desc.flags, c.seg[i].flags);
        assert_int_equal(si.desc.banks, c.seg[i].banks);
        assert_int_equal(si.used, 0);
        assert_int_equal(si.free, c.seg[i].size);
        assert_int_equal(si.largest_free, c.seg[i].size);
        assert_int_equal(si.pinned_start, c.seg[i].size - gmc_pinned_region_size(c.seg[i].size));
    }
    struct gmc_device_info info;
    assert_int_equal(gmc_device_query(dev, &info), GMC_OK);
    assert_int_equal(info.vram_size, 8 * MiB);
    assert_int_equal(info.cpu_window_size, 2 * MiB);
    assert_int_equal(info.aperture_base, 0x80000000u);
    assert_int_equal(info.aperture_pages, 4096);
    assert_true(info.caps & GMC_CAPS_SIM_STRAPS_MASK);
    gmc_device_close(dev);
}

/* Whatever the hardware describes is what the manager uses. */
static void test_strapped_segments_read_back(void **state)
{
    (void)state;
    static const struct gmc_sim_segment layouts[][4] = {
        { { 0x10000, 0x30000, 0x1000, F(CPU_VISIBLE), 0, 0 },
          { 0x100000, 0x400000, 0, F(USE_BANKING) | F(USE_64KB_PAGES), 8, 0 },
          { 0x40000000, 0x2000, 0, F(APERTURE), 0, 0 },
          { 0x7F000000, 0x100000, 0, F(PITCH_ALIGNMENT), 0, 0 } },
        { { 0xFFFFFFFF00000000ull, 0xFFFFF000ull, 0, 0, 0, 0 }, { 0 }, { 0 }, { 0 } },
    };
    static const unsigned counts[] = { 4, 1 };
    for (unsigned l = 0; l < 2; l++) {
        struct gmc_sim_config c;
        gmc_sim_config_default(&c);
        c.strap_segments = 1;
        c.seg_count = counts[l];
        memcpy(c.seg, layouts[l], sizeof(c.seg));
        gmc_device *dev = NULL;
        assert_int_equal(gmc_device_open_sim(&c, NULL, &dev), GMC_OK);
        struct gmc_device_info info;
        assert_int_equal(gmc_device_query(dev, &info), GMC_OK);
        assert_int_equal(info.segment_count, counts[l]);
        for (unsigned i = 0; i < counts[l]; i++) {
            struct gmc_segment_info si;
            assert_int_equal(gmc_segment_query(dev, i + 1u, &si), GMC_OK);
            assert_int_equal(si.desc.base, c.seg[i].base);
            assert_int_equal(si.desc.size, c.seg[i].size);
            assert_int_equal(si.desc.flags, c.seg[i].flags);
            assert_int_equal(si.desc.cpu_offset, c.seg[i].cpu_offset);
            assert_int_equal(si.desc.banks, c.seg[i].banks);
        }
        assert_int_equal(gmc_segment_query(dev, counts[l] + 1u, &(struct gmc_segment_info){ 0 }),
                         GMC_E_NOT_FOUND);
        assert_int_equal(gmc_segment_query(dev, 0, &(struct gmc_segment_info){ 0 }), GMC_E_NOT_FOUND);
        gmc_device_close(dev);
    }
}

/* ----------------------------------------------- a backend that lies */

/* Wraps the sim backend and replaces chosen register reads, to present
 * hardware the model cannot: another ID, version or page size, more
 * segments than the register array holds, a bus error. */
struct wrap {
    void *inner;
    uint32_t off[4];
    uint32_t val[4];
    int err[4]; /* nonzero: answer this status instead */
    unsigned n;
    int *closed;
};

static void wrap_close(void *ctx)
{
    struct wrap *w = ctx;
    gmc_backend_sim.close(w->inner);
    (*w->closed)++;
    free(w);
}

static int wrap_read32(void *ctx, uint32_t off, uint32_t *val)
{
    struct wrap *w = ctx;
    for (unsigned i = 0; i < w->n; i++) {
        if (w->off[i] == off) {
            *val = w->err[i] ? 0u : w->val[i];
            return w->err[i] ? w->err[i] : GMC_OK;
        }
    }
    return gmc_backend_sim.read32(w->inner, off, val);
}

static int wrap_write32(void *ctx, uint32_t off, uint32_t val)
{
    return gmc_backend_sim.write32(((struct wrap *)ctx)->inner, off, val);
}

static int wrap_aperture_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    return gmc_backend_sim.aperture_read(((struct wrap *)ctx)->inner, off, buf, len);
}

static int wrap_aperture_write(void *ctx, uint64_t off, const void *buf, size_t len)
{
    return gmc_backend_sim.aperture_write(((struct wrap *)ctx)->inner, off, buf, len);
}

static int wrap_host_map(void *ctx, uint64_t bus, void *ptr, size_t len)
{
    return gmc_backend_sim.host_map(((struct wrap *)ctx)->inner, bus, ptr, len);
}

static int wrap_host_unmap(void *ctx, uint64_t bus)
{
    return gmc_backend_sim.host_unmap(((struct wrap *)ctx)->inner, bus);
}

static int wrap_irq(void *ctx)
{
    return gmc_backend_sim.irq(((struct wrap *)ctx)->inner);
}

static int wrap_wait(void *ctx, uint64_t cycles, int until_irq, uint64_t *ran)
{
    return gmc_backend_sim.wait(((struct wrap *)ctx)->inner, cycles, until_irq, ran);
}

static uint64_t wrap_cycles(void *ctx)
{
    return gmc_backend_sim.cycles(((struct wrap *)ctx)->inner);
}

static int wrap_power(void *ctx, int state, const uint64_t *ranges, unsigned n)
{
    return gmc_backend_sim.power(((struct wrap *)ctx)->inner, state, ranges, n);
}

static int wrap_reset(void *ctx)
{
    return gmc_backend_sim.reset(((struct wrap *)ctx)->inner);
}

static const struct gmc_backend_ops wrap_ops = {
    .name = "wrap",
    .open = NULL,
    .close = wrap_close,
    .read32 = wrap_read32,
    .write32 = wrap_write32,
    .aperture_read = wrap_aperture_read,
    .aperture_write = wrap_aperture_write,
    .host_map = wrap_host_map,
    .host_unmap = wrap_host_unmap,
    .irq = wrap_irq,
    .wait = wrap_wait,
    .cycles = wrap_cycles,
    .power = wrap_power,
    .reset = wrap_reset,
};

struct lie {
    const char *what;
    unsigned n;
    uint32_t off[2];
    uint32_t val[2];
    int err[2];
    int status;
    const char *rule;
};

static void test_identity_and_lies(void **state)
{
    (void)state;
    const struct lie lies[] = {
        { "truth", 0, { 0 }, { 0 }, { 0 }, GMC_OK, NULL },
        { "another ID", 1, { GMC_REG_ID }, { 0x474D4301u }, { 0 }, GMC_E_VERSION, NULL },
        { "ID zero", 1, { GMC_REG_ID }, { 0 }, { 0 }, GMC_E_VERSION, NULL },
        { "major 2", 1, { GMC_REG_VERSION }, { 0x00020000u }, { 0 }, GMC_E_VERSION, NULL },
        { "major 0", 1, { GMC_REG_VERSION }, { 0x00000005u }, { 0 }, GMC_E_VERSION, NULL },
        { "newer minor", 1, { GMC_REG_VERSION }, { 0x0001FFFFu }, { 0 }, GMC_OK, NULL },
        { "64 KiB GART pages", 1, { GMC_REG_PAGE_SIZE }, { 0x10000u }, { 0 }, GMC_E_UNSUPPORTED, NULL },
        { "five segments", 1, { GMC_REG_SEG_COUNT }, { 5 }, { 0 }, GMC_E_RULE_SEG_COUNT, "SEG_COUNT_VALID" },
        { "2^32-1 segments", 1, { GMC_REG_SEG_COUNT }, { 0xFFFFFFFFu }, { 0 }, GMC_E_RULE_SEG_COUNT,
          "SEG_COUNT_VALID" },
        { "no segments", 1, { GMC_REG_SEG_COUNT }, { 0 }, { 0 }, GMC_E_RULE_SEG_COUNT, "SEG_COUNT_VALID" },
        { "bus error on ID", 1, { GMC_REG_ID }, { 0 }, { GMC_E_BUS }, GMC_E_BUS, NULL },
        { "timeout on a descriptor", 1, { GMC_REG_SEG_SIZE_HI_N(2) }, { 0 }, { GMC_E_TIMEOUT }, GMC_E_TIMEOUT,
          NULL },
        { "segment 2 flags say AGP too", 1, { GMC_REG_SEG_FLAGS_N(1) }, { F(USE_BANKING) | F(AGP) }, { 0 },
          GMC_E_RULE_SEG_AGP_NOT_ALONE, "SEG_AGP_ALONE" },
        { "banks field upper bits ignored", 1, { GMC_REG_SEG_BANKS_N(1) }, { 0xFFFFFF04u }, { 0 }, GMC_OK, NULL },
    };
    for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
        const struct lie *l = &lies[i];
        struct gmc_devspec spec;
        int closed = 0;
        assert_int_equal(gmc_devstr_parse("sim", &spec, NULL), GMC_OK);
        struct wrap *w = calloc(1, sizeof(*w));
        assert_non_null(w);
        assert_int_equal(gmc_backend_sim.open(&spec, &w->inner), GMC_OK);
        w->n = l->n;
        memcpy(w->off, l->off, sizeof(l->off));
        memcpy(w->val, l->val, sizeof(l->val));
        memcpy(w->err, l->err, sizeof(l->err));
        w->closed = &closed;
        gmc_device *dev = (gmc_device *)&dev;
        struct gmc_open_report rep;
        memset(&rep, 0, sizeof(rep));
        int rc = gmc_device_open_backend(&wrap_ops, w, &rep, &dev);
        if (rc != l->status)
            fail_msg("%s: expected %s, got %s", l->what, gmc_status_name(l->status), gmc_status_name(rc));
        if (l->rule != NULL)
            assert_string_equal(gmc_rule_id(rep.rule), l->rule);
        else
            assert_null(rep.rule);
        if (rc == GMC_OK) {
            struct gmc_device_info info;
            assert_int_equal(gmc_device_query(dev, &info), GMC_OK);
            assert_string_equal(info.backend, "wrap");
            assert_null(gmc_device_sim(dev));
            assert_int_equal(closed, 0);
            gmc_device_close(dev);
        } else {
            assert_null(dev);
        }
        assert_int_equal(closed, 1); /* the backend is released on every path */
    }
}

/* ------------------------------------------ straps that break the rules */

struct brk {
    const char *what;
    unsigned seg;   /* 1-based descriptor to change, 0: none */
    uint64_t base, size, cpu;
    uint32_t flags; /* replaces the flags when `set_flags` */
    int set_flags;
    int banks;      /* >= 0: replaces the banks */
    unsigned count; /* nonzero: replaces seg_count */
    int status;
    const char *rule;
    unsigned bad;   /* descriptor the report names (per-segment rules) */
};

#define KEEP UINT64_MAX

static void test_rule_families(void **state)
{
    (void)state;
    const uint32_t std = F(PRESERVED_DURING_STANDBY);
    const struct brk cases[] = {
        { "Agp with Aperture", 3, KEEP, KEEP, KEEP, F(AGP) | F(APERTURE), 1, -1, 0,
          GMC_E_RULE_SEG_AGP_NOT_ALONE, "SEG_AGP_ALONE", 3 },
        { "Agp with PreservedDuringStandby", 2, KEEP, KEEP, KEEP, F(AGP) | std, 1, 0, 0,
          GMC_E_RULE_SEG_AGP_NOT_ALONE, "SEG_AGP_ALONE", 2 },
        { "two AGP segments", 2, KEEP, KEEP, KEEP, F(AGP), 1, 0, 4, GMC_E_RULE_SEG_AGP_TWICE,
          "SEG_AGP_AT_MOST_ONE", 0 },
        { "CacheCoherent on a memory segment", 1, KEEP, KEEP, KEEP, F(CPU_VISIBLE) | F(CACHE_COHERENT), 1, -1, 0,
          GMC_E_RULE_SEG_CACHECOHERENT_NOT_APERTURE, "SEG_CACHECOHERENT_NEEDS_APERTURE", 1 },
        { "hibernate without standby", 3, KEEP, KEEP, KEEP, F(APERTURE) | F(PRESERVED_DURING_HIBERNATE), 1, -1,
          0, GMC_E_RULE_SEG_HIBERNATE_WITHOUT_STANDBY, "SEG_HIBERNATE_NEEDS_STANDBY", 3 },
        { "partial without standby", 2, KEEP, KEEP, KEEP,
          F(USE_BANKING) | F(PARTIALLY_PRESERVED_DURING_HIBERNATE), 1, -1, 0,
          GMC_E_RULE_SEG_PARTIAL_WITHOUT_STANDBY, "SEG_PARTIAL_NEEDS_STANDBY", 2 },
        { "partial and hibernate", 2, KEEP, KEEP, KEEP,
          F(USE_BANKING) | std | F(PRESERVED_DURING_HIBERNATE) | F(PARTIALLY_PRESERVED_DURING_HIBERNATE), 1, -1,
          0, GMC_E_RULE_SEG_PARTIAL_AND_HIBERNATE, "SEG_PARTIAL_EXCLUDES_HIBERNATE", 2 },
        { "partial on an aperture", 3, KEEP, KEEP, KEEP,
          F(APERTURE) | std | F(PARTIALLY_PRESERVED_DURING_HIBERNATE), 1, -1, 0,
          GMC_E_RULE_SEG_PARTIAL_ON_APERTURE, "SEG_PARTIAL_NOT_APERTURE", 3 },
        { "SupportsCpuHostAperture with CpuVisible", 1, KEEP, KEEP, KEEP,
          F(CPU_VISIBLE) | F(SUPPORTS_CPU_HOST_APERTURE), 1, -1, 0, GMC_E_RULE_SEG_HOSTAPERTURE_AND_CPUVISIBLE,
          "SEG_HOSTAPERTURE_EXCLUDES_CPUVISIBLE", 1 },
        { "cached host aperture without host aperture", 2, KEEP, KEEP, KEEP,
          F(USE_BANKING) | F(SUPPORTS_CACHED_CPU_HOST_APERTURE), 1, -1, 0,
          GMC_E_RULE_SEG_CACHEDHOSTAPERTURE_ALONE, "SEG_CACHEDHOSTAPERTURE_NEEDS_HOSTAPERTURE", 2 },
        { "Use64KBPages with a 4 KiB-aligned size", 2, KEEP, 0x5F1000, KEEP, F(USE_64KB_PAGES), 1, 0, 0,
          GMC_E_RULE_SEG_64KB_UNALIGNED, "SEG_64KB_PAGES_ALIGNED", 2 },
        { "Use64KBPages at a 4 KiB-aligned base", 2, 0x201000, 0x5E0000, KEEP, F(USE_64KB_PAGES), 1, 0, 0,
          GMC_E_RULE_SEG_64KB_UNALIGNED, "SEG_64KB_PAGES_ALIGNED", 2 },
        { "size not a page multiple", 1, KEEP, 2 * MiB - 512, KEEP, 0, 0, -1, 0, GMC_E_RULE_SEG_SIZE,
          "SEG_SIZE_PAGE_MULTIPLE", 1 },
        { "size zero", 3, KEEP, 0, KEEP, 0, 0, -1, 0, GMC_E_RULE_SEG_SIZE, "SEG_SIZE_PAGE_MULTIPLE", 3 },
        { "base not page aligned", 3, 0x80000800u, KEEP, KEEP, 0, 0, -1, 0, GMC_E_RULE_SEG_BASE_UNALIGNED,
          "SEG_BASE_PAGE_ALIGNED", 3 },
        { "segment wraps 2^64", 3, 0xFFFFFFFFFF800000ull, KEEP, KEEP, 0, 0, -1, 0, GMC_E_RULE_SEG_WRAPS,
          "SEG_RANGE_NO_WRAP", 3 },
        { "overlapping segments", 2, 2 * MiB - 0x1000, KEEP, KEEP, 0, 0, -1, 0, GMC_E_RULE_SEG_OVERLAP,
          "SEG_NO_OVERLAP", 0 },
        { "aperture inside VRAM segment", 3, 0x100000, KEEP, KEEP, 0, 0, -1, 0, GMC_E_RULE_SEG_OVERLAP,
          "SEG_NO_OVERLAP", 0 },
        { "CPU windows overlap", 2, KEEP, KEEP, 0x100000, F(CPU_VISIBLE), 1, 0, 0,
          GMC_E_RULE_SEG_CPU_WINDOW_OVERLAP, "SEG_CPU_WINDOWS_NO_OVERLAP", 0 },
        { "CPU offset not page aligned", 1, KEEP, KEEP, 0x10, 0, 0, -1, 0, GMC_E_RULE_SEG_CPU_OFFSET,
          "SEG_CPU_OFFSET_VALID", 1 },
        { "UseBanking without banks", 2, KEEP, KEEP, KEEP, 0, 0, 0, 0, GMC_E_RULE_SEG_BANKS_INVALID,
          "SEG_USEBANKING_NEEDS_BANKS", 2 },
        { "banks that do not split the size", 2, KEEP, KEEP, KEEP, 0, 0, 7, 0, GMC_E_RULE_SEG_BANKS_INVALID,
          "SEG_USEBANKING_NEEDS_BANKS", 2 },
        { "banks without UseBanking", 1, KEEP, KEEP, KEEP, 0, 0, 2, 0, GMC_E_RULE_SEG_BANKS_WITHOUT_USEBANKING,
          "SEG_BANKS_NEED_USEBANKING", 1 },
        { "reserved flag bit", 1, KEEP, KEEP, KEEP, F(CPU_VISIBLE) | 0x80000000u, 1, -1, 0,
          GMC_E_RULE_SEG_RESERVED, "SEG_RESERVED_ZERO", 1 },
        { "ReservedSysMem set by the driver", 2, KEEP, KEEP, KEEP, F(RESERVED_SYS_MEM), 1, 0, 0,
          GMC_E_RULE_SEG_RESERVEDSYSMEM, "SEG_RESERVEDSYSMEM_NOT_SET", 2 },
        { "PopulatedFromSystemMemory on an aperture", 3, KEEP, KEEP, KEEP,
          F(APERTURE) | std | F(POPULATED_FROM_SYSTEM_MEMORY), 1, -1, 0, GMC_E_RULE_SEG_POPULATED_ON_APERTURE,
          "SEG_POPULATEDFROMSYSMEM_NOT_APERTURE", 3 },
        /* the seed's "should" (-1326 retired): opens, purged as its flags say */
        { "PopulatedFromSystemMemory not preserved", 2, KEEP, KEEP, KEEP, F(POPULATED_FROM_SYSTEM_MEMORY), 1,
          0, 0, GMC_OK, NULL, 0 },
        { "no segments", 0, KEEP, KEEP, KEEP, 0, 0, -1, 100, GMC_E_RULE_SEG_COUNT, "SEG_COUNT_VALID", 0 },
        { "a valid edit: CPU-visible segment 2 after segment 1's window", 2, KEEP, KEEP, 2 * MiB,
          F(CPU_VISIBLE), 1, 0, 0, GMC_OK, NULL, 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct brk *b = &cases[i];
        struct gmc_sim_config c;
        cfg_default(&c);
        if (b->count == 100u)
            c.seg_count = 0;
        else if (b->count != 0u)
            c.seg_count = b->count;
        if (b->count == 4u)
            c.seg[3] = (struct gmc_sim_segment){ 0x90000000u, 0x100000, 0, F(AGP), 0, 0 };
        if (b->seg != 0u) {
            struct gmc_sim_segment *g = &c.seg[b->seg - 1u];
            if (b->base != KEEP)
                g->base = b->base;
            if (b->size != KEEP)
                g->size = b->size;
            if (b->cpu != KEEP)
                g->cpu_offset = b->cpu;
            if (b->set_flags)
                g->flags = b->flags;
            if (b->banks >= 0)
                g->banks = (uint8_t)b->banks;
        }
        expect_open(&c, b->status, b->rule, b->bad, b->what);
    }
}

/* ---------------------------- every segment row of the table, both ways */

static void strap_case(const struct rules_case *rc, struct gmc_sim_config *c)
{
    gmc_sim_config_default(c);
    c->strap_segments = 1;
    c->seg_count = rc->nsegs;
    for (unsigned i = 0; i < GMC_SIM_MAX_SEGMENTS && i < RULES_CASE_MAX_SEGS; i++) {
        const struct gmc_segment_desc *s = &rc->segs[i];
        c->seg[i] = (struct gmc_sim_segment){ s->base, s->size, s->cpu_offset, s->flags, (uint8_t)s->banks, s->sysmem_end };
    }
}

/* The straps describe the ids the registers imply (descriptor i is id i+1);
 * a case that tests other ids cannot be presented by hardware. */
static int presentable(const struct rules_case *rc)
{
    if (rc->nsegs > GMC_SIM_MAX_SEGMENTS)
        return 0;
    for (unsigned i = 0; i < rc->nsegs; i++) {
        if (rc->segs[i].id != i + 1u || rc->segs[i].banks > 255u)
            return 0;
    }
    return 1;
}

static void test_segment_rows(void **state)
{
    (void)state;
    unsigned rows = 0, skipped = 0;
    for (unsigned i = 0; i < RULES_CASE_COUNT; i++) {
        const struct gmc_rule *r = gmc_rule_find(rules_cases[i].id);
        assert_non_null(r);
        if (r->scope == GMC_RULE_SCOPE_ALLOC)
            continue;
        rows++;
        struct gmc_sim_config c;
        const struct rules_case *pass = &rules_cases[i].pass, *fail = &rules_cases[i].fail;
        assert_true(presentable(pass));
        strap_case(pass, &c);
        expect_open(&c, GMC_OK, NULL, 0, r->id);
        if (!presentable(fail)) {
            skipped++; /* SEG_IDS_SEQUENTIAL: ids come from register positions */
            assert_string_equal(r->id, "SEG_IDS_SEQUENTIAL");
            continue;
        }
        strap_case(fail, &c);
        gmc_device *dev = (gmc_device *)&dev;
        struct gmc_open_report rep;
        int rc = gmc_device_open_sim(&c, &rep, &dev);
        if (rc != r->status || rep.rule != r)
            fail_msg("%s: expected %s, got %s (rule %s)", r->id, gmc_status_name(r->status), gmc_status_name(rc),
                     rep.rule ? gmc_rule_id(rep.rule) : "(none)");
        assert_null(dev);
        assert_ptr_equal(gmc_rule_for_status(rc), r);
        if (r->scope == GMC_RULE_SCOPE_SEGMENT)
            assert_true(rep.segment >= 1u && rep.segment <= fail->nsegs);
        else
            assert_int_equal(rep.segment, 0);
    }
    assert_int_equal(rows, 25); /* the seed-003 rows of scope segment or segments (-1326 retired) */
    assert_int_equal(skipped, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_segments),
        cmocka_unit_test(test_strapped_segments_read_back),
        cmocka_unit_test(test_identity_and_lies),
        cmocka_unit_test(test_rule_families),
        cmocka_unit_test(test_segment_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
