/*
 * test_rules.c - the rule table (spec/rules.toml) and its validator.
 *
 * The table-driven tests take every row's passing and failing case from
 * tests/host/rules_cases.h (generated) and check the exact status. The
 * hand-written tests below them probe boundaries the cases do not reach.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gmc_alloc.h"
#include "gmc_rules.h"
#include "gmc_status.h"
#include "rules_cases.h"

static const char *const seed_files[] = {
    "000_2cd98ca701b2a8cf.txt", "001_233b3c18f5ce9a23.txt", "002_34ebff9780861717.txt",
    "003_514edaf6af042189.txt", "004_cc4bdaa586ec47c0.txt",
};

/* Backing for cases with existing system memory. */
static _Alignas(GMC_PAGE_SIZE) unsigned char sysbuf[RULES_CASE_BUF_SIZE];

/* ---------------------------------------------------------------- helpers */

struct call {
    struct gmc_alloc_desc desc;
    struct gmc_segment_desc segs[RULES_CASE_MAX_SEGS];
    unsigned nsegs;
};

static void load_case(const struct rules_case *c, struct call *k)
{
    k->desc = c->desc;
    if (c->sysmem_offset != RULES_CASE_NO_SYSMEM)
        k->desc.system_mem = sysbuf + c->sysmem_offset;
    memcpy(k->segs, c->segs, sizeof(k->segs));
    k->nsegs = c->nsegs;
}

/* The row's own passing case: a valid call to start edge cases from. */
static void load_row(const char *id, int fail_case, struct call *k)
{
    for (unsigned i = 0; i < RULES_CASE_COUNT; i++) {
        if (strcmp(rules_cases[i].id, id) == 0) {
            load_case(fail_case ? &rules_cases[i].fail : &rules_cases[i].pass, k);
            return;
        }
    }
    fail_msg("no row %s", id);
}

/* A valid allocation on the default layout. */
static void base_call(struct call *k)
{
    load_row("ALLOC_PRIORITY_NONZERO", 0, k);
    k->desc.priority = GMC_PRIORITY_NORMAL;
}

static int status_of(const char *id)
{
    const struct gmc_rule *r = gmc_rule_find(id);
    if (r == NULL)
        fail_msg("no rule %s", id);
    return gmc_rule_status(r);
}

static int check(const struct call *k, const struct gmc_rule **failed)
{
    return gmc_rules_check_alloc(&k->desc, k->segs, k->nsegs, failed);
}

/* Assert an exact status, naming both codes on failure. */
#define assert_status(got, want)                                                   \
    do {                                                                           \
        int got_ = (got), want_ = (want);                                          \
        if (got_ != want_)                                                         \
            fail_msg("got %s (%d), want %s (%d)", gmc_status_name(got_), got_,     \
                     gmc_status_name(want_), want_);                               \
    } while (0)

#define assert_rule(k, id) assert_status(check((k), NULL), status_of(id))
#define assert_ok(k) assert_status(check((k), NULL), GMC_OK)

static int same_group(const struct gmc_rule *a, const struct gmc_rule *b)
{
    return (a->scope == GMC_RULE_SCOPE_ALLOC) == (b->scope == GMC_RULE_SCOPE_ALLOC);
}

/* ----------------------------------------------------- table-driven tests */

static void test_every_row_has_cases(void **state)
{
    (void)state;
    assert_int_equal(RULES_CASE_COUNT, GMC_RULE_COUNT);
    assert_int_equal(gmc_rule_count(), GMC_RULE_COUNT);
    for (unsigned i = 0; i < GMC_RULE_COUNT; i++) {
        const struct gmc_rule *r = &gmc_rule_table[i];
        assert_ptr_equal(gmc_rule_at(i), r);
        assert_string_equal(rules_cases[i].id, r->id);
        assert_true(r->id[0] != '\0' && r->statement[0] != '\0');
        int seed_known = 0;
        for (size_t s = 0; s < sizeof(seed_files) / sizeof(seed_files[0]); s++)
            seed_known |= strcmp(r->seed, seed_files[s]) == 0;
        if (!seed_known)
            fail_msg("%s: unknown seed %s", r->id, r->seed);
        if (r->kind == GMC_RULE_CUSTOM)
            assert_non_null(r->pred);
        else
            assert_null(r->pred);
        assert_ptr_equal(gmc_rule_find(r->id), r);
    }
}

static void test_rule_statuses_distinct(void **state)
{
    (void)state;
    for (unsigned i = 0; i < GMC_RULE_COUNT; i++) {
        const struct gmc_rule *r = &gmc_rule_table[i];
        assert_true(r->status < 0);
        assert_string_equal(gmc_status_name(r->status), r->status_name);
        assert_string_equal(gmc_strerror(r->status), r->statement);
        assert_int_equal(strncmp(r->status_name, "GMC_E_RULE_", 11), 0);
        for (unsigned j = 0; j < i; j++) {
            if (gmc_rule_table[j].status == r->status || strcmp(gmc_rule_table[j].id, r->id) == 0)
                fail_msg("%s and %s share a status or id", gmc_rule_table[j].id, r->id);
        }
    }
}

static void test_status_names_and_messages(void **state)
{
    (void)state;
    assert_int_equal(GMC_OK, 0);
    assert_int_equal(gmc_status_table[0].code, GMC_OK);
    for (unsigned i = 0; i < GMC_STATUS_COUNT; i++) {
        const struct gmc_status_info *s = &gmc_status_table[i];
        assert_non_null(s->name);
        assert_non_null(s->message);
        assert_true(s->name[0] != '\0' && s->message[0] != '\0');
        assert_string_equal(gmc_status_name(s->code), s->name);
        assert_string_equal(gmc_strerror(s->code), s->message);
        if (i > 0)
            assert_true(s->code < 0);
        for (unsigned j = 0; j < i; j++) {
            assert_int_not_equal(gmc_status_table[j].code, s->code);
            assert_string_not_equal(gmc_status_table[j].name, s->name);
        }
    }
    assert_string_equal(gmc_status_name(GMC_E_BUSY), "GMC_E_BUSY");
    const int unknown[] = { 1, 12345, -999, -1099, -100000, INT_MIN, INT_MAX };
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        assert_string_equal(gmc_status_name(unknown[i]), "GMC_STATUS_UNKNOWN");
        assert_string_equal(gmc_strerror(unknown[i]), "unknown status code");
    }
}

static void test_passing_cases(void **state)
{
    (void)state;
    unsigned bad = 0;
    for (unsigned i = 0; i < GMC_RULE_COUNT; i++) {
        const struct gmc_rule *r = &gmc_rule_table[i];
        struct call k;
        const struct gmc_rule *failed = r;
        load_case(&rules_cases[i].pass, &k);
        int rc = check(&k, &failed);
        int seg_rc = gmc_rules_check_segments(k.segs, k.nsegs, NULL);
        if (rc != GMC_OK || failed != NULL || seg_rc != GMC_OK ||
            !gmc_rule_holds(r, &k.desc, k.segs, k.nsegs)) {
            print_error("%s: passing case gives %s (rule %s)\n", r->id, gmc_status_name(rc),
                        failed ? failed->id : "-");
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

static void test_failing_cases(void **state)
{
    (void)state;
    unsigned bad = 0;
    for (unsigned i = 0; i < GMC_RULE_COUNT; i++) {
        const struct gmc_rule *r = &gmc_rule_table[i];
        struct call k;
        const struct gmc_rule *failed = NULL;
        load_case(&rules_cases[i].fail, &k);
        int rc = check(&k, &failed);
        if (rc != r->status || failed != r) {
            print_error("%s: failing case gives %s (rule %s), want %s\n", r->id,
                        gmc_status_name(rc), failed ? failed->id : "-", r->status_name);
            bad++;
        }
        int seg_rc = gmc_rules_check_segments(k.segs, k.nsegs, &failed);
        int seg_want = r->scope == GMC_RULE_SCOPE_ALLOC ? GMC_OK : r->status;
        if (seg_rc != seg_want) {
            print_error("%s: segment check gives %s, want %s\n", r->id, gmc_status_name(seg_rc),
                        gmc_status_name(seg_want));
            bad++;
        }
        /* The failing case breaks this row only, among the rows of its group. */
        for (unsigned j = 0; j < GMC_RULE_COUNT; j++) {
            const struct gmc_rule *o = &gmc_rule_table[j];
            if (!same_group(r, o))
                continue;
            int holds = gmc_rule_holds(o, &k.desc, k.segs, k.nsegs);
            if (holds != (j != i)) {
                print_error("%s: failing case %s %s\n", r->id, holds ? "passes" : "also breaks",
                            o->id);
                bad++;
            }
        }
    }
    assert_int_equal(bad, 0);
}

/* ------------------------------------------------------- argument checks */

static void test_null_arguments(void **state)
{
    (void)state;
    struct call k;
    base_call(&k);
    const struct gmc_rule *failed = gmc_rule_at(0);
    assert_status(gmc_rules_check_alloc(NULL, k.segs, k.nsegs, &failed), GMC_E_NULL_POINTER);
    assert_null(failed);
    failed = gmc_rule_at(0);
    assert_status(gmc_rules_check_alloc(&k.desc, NULL, 3, &failed), GMC_E_NULL_POINTER);
    assert_null(failed);
    failed = gmc_rule_at(0);
    assert_status(gmc_rules_check_segments(NULL, 2, &failed), GMC_E_NULL_POINTER);
    assert_null(failed);
    /* No segments at all is a rule violation, not a NULL pointer. */
    assert_status(gmc_rules_check_segments(NULL, 0, &failed), status_of("SEG_COUNT_VALID"));
    assert_ptr_equal(failed, gmc_rule_find("SEG_COUNT_VALID"));
    assert_status(gmc_rules_check_alloc(&k.desc, NULL, 0, NULL), status_of("SEG_COUNT_VALID"));
    /* failed is optional. */
    assert_status(gmc_rules_check_alloc(&k.desc, k.segs, k.nsegs, NULL), GMC_OK);
    assert_status(gmc_rules_check_segments(k.segs, k.nsegs, NULL), GMC_OK);
}

static void test_accessors(void **state)
{
    (void)state;
    assert_null(gmc_rule_at(GMC_RULE_COUNT));
    assert_null(gmc_rule_find("NO_SUCH_RULE"));
    assert_null(gmc_rule_find(NULL));
    assert_null(gmc_rule_id(NULL));
    assert_null(gmc_rule_seed(NULL));
    assert_null(gmc_rule_statement(NULL));
    assert_int_equal(gmc_rule_status(NULL), GMC_E_NULL_POINTER);
    const struct gmc_rule *r = gmc_rule_find("INFO2_STEREO_NEEDS_PRIMARY");
    assert_non_null(r);
    assert_string_equal(gmc_rule_id(r), "INFO2_STEREO_NEEDS_PRIMARY");
    assert_string_equal(gmc_rule_seed(r), "004_cc4bdaa586ec47c0.txt");
    assert_int_equal(gmc_rule_status(r), GMC_E_RULE_STEREO_NOT_PRIMARY);
    assert_non_null(gmc_rule_statement(r));
}

static void test_desc_init(void **state)
{
    (void)state;
    struct call k;
    base_call(&k);
    gmc_alloc_desc_init(NULL); /* harmless */
    gmc_alloc_desc_init(&k.desc);
    assert_int_equal(k.desc.priority, GMC_PRIORITY_NORMAL);
    assert_int_equal(k.desc.vidpn_source_id, GMC_VIDPN_SOURCE_NONE);
    assert_int_equal(k.desc.flags, 0);
    assert_null(k.desc.system_mem);
    /* Needs a size and a segment, and then is valid. */
    assert_rule(&k, "ALLOC_SIZE_VALID");
    k.desc.size = 4096;
    assert_rule(&k, "ALLOC_SUPPORTED_SET_VALID");
    k.desc.supported_segments = GMC_SEGMENT_BIT(2);
    assert_ok(&k);
}

/* ------------------------------------------------------------ edge cases */

static void test_reserved_bits(void **state)
{
    (void)state;
    struct call k;
    for (unsigned bit = 0; bit < 32; bit++) {
        uint32_t m = UINT32_C(1) << bit;
        if (m & GMC_ALLOC_RESERVED_MASK) {
            base_call(&k);
            k.desc.flags = m;
            assert_rule(&k, "ALLOC_FLAGS_RESERVED_ZERO");
        }
        if (m & GMC_KMT_RESERVED_MASK) {
            base_call(&k);
            k.desc.kmt_flags = m;
            assert_rule(&k, "KMT_RESERVED_ZERO");
        }
        if (m & GMC_INFO2_RESERVED_MASK) {
            base_call(&k);
            k.desc.info2_flags = m;
            assert_rule(&k, "INFO2_RESERVED_ZERO");
        }
        if (m & GMC_SEG_RESERVED_MASK) {
            base_call(&k);
            k.segs[1].flags = m;
            assert_rule(&k, "SEG_RESERVED_ZERO");
            assert_status(gmc_rules_check_segments(k.segs, k.nsegs, NULL), status_of("SEG_RESERVED_ZERO"));
        }
    }
    /* The masks cover exactly the reserved fields of the seeds. */
    assert_int_equal(GMC_ALLOC_RESERVED_MASK & (GMC_ALLOC_CPU_VISIBLE_ON_DEMAND << 1) , GMC_ALLOC_RESERVED16);
    assert_int_equal(GMC_KMT_RESERVED_MASK, ~((GMC_KMT_EXISTING_SECTION << 1) - 1u));
    assert_int_equal(GMC_SEG_RESERVED_MASK, 0xFFFF0000u);
    /* The reserved-for-use KMT members each have their own row. */
    const struct { uint32_t bit; const char *id; } kmt[] = {
        { GMC_KMT_CREATE_PROTECTED, "KMT_CREATEPROTECTED_RESERVED" },
        { GMC_KMT_CREATE_WRITE_COMBINED, "KMT_CREATEWRITECOMBINED_RESERVED" },
        { GMC_KMT_CREATE_CACHED, "KMT_CREATECACHED_RESERVED" },
        { GMC_KMT_SWAP_CHAIN_BACK_BUFFER, "KMT_SWAPCHAINBACKBUFFER_RESERVED" },
    };
    for (size_t i = 0; i < sizeof(kmt) / sizeof(kmt[0]); i++) {
        base_call(&k);
        k.desc.kmt_flags = kmt[i].bit;
        assert_rule(&k, kmt[i].id);
    }
}

static void test_flag_positions(void **state)
{
    (void)state;
    /* Values the seeds state (DXGK_ALLOCATIONINFOFLAGS) and the headers use. */
    assert_int_equal(GMC_ALLOC_CPU_VISIBLE, 0x1);
    assert_int_equal(GMC_ALLOC_SWIZZLED, 0x80);
    assert_int_equal(GMC_ALLOC_USE_ALTERNATE_VA, 0x400);
    assert_int_equal(GMC_ALLOC_HISTORY_BUFFER, 0x4000);
    assert_int_equal(GMC_ALLOC_ACCESSED_PHYSICALLY, 0x8000);
    assert_int_equal(GMC_ALLOC_EXPLICIT_RESIDENCY_NOTIFICATION, 0x10000);
    assert_int_equal(GMC_ALLOC_RESERVED0, 0x80000000u);
    assert_int_equal(GMC_KMT_CREATE_SHARED, 0x2);
    assert_int_equal(GMC_KMT_STANDARD_ALLOCATION, 0x10000);
    assert_int_equal(GMC_KMT_EXISTING_SECTION, 0x20000);
    assert_int_equal(GMC_INFO2_STEREO, 0x2);
    assert_int_equal(GMC_SEGFLAGS_APPLICATION_TARGET_MASK, 0x8000);
    assert_int_equal(GMC_PRIORITY_MINIMUM, 0x28000000u);
    assert_int_equal(GMC_PRIORITY_LOW, 0x50000000u);
    assert_int_equal(GMC_PRIORITY_NORMAL, 0x78000000u);
    assert_int_equal(GMC_PRIORITY_HIGH, 0xa0000000u);
    assert_int_equal(GMC_PRIORITY_MAXIMUM, 0xc8000000u);
}

static void test_preferences_outside_supported_set(void **state)
{
    (void)state;
    struct call k;
    const uint8_t outside[] = { 3, 4, 31, 32, 33, 255 };
    for (size_t i = 0; i < sizeof(outside); i++) {
        base_call(&k); /* supported {1,2} */
        k.desc.preferred[0].id = outside[i];
        assert_rule(&k, "ALLOC_PREFERENCE_IN_SUPPORTED_SET");
    }
    /* The last of five, and with a direction bit. */
    base_call(&k);
    k.desc.supported_segments = GMC_SEGMENT_BIT(1) | GMC_SEGMENT_BIT(2) | GMC_SEGMENT_BIT(3);
    k.desc.preferred[1] = (struct gmc_segment_pref){ 2, 1 };
    k.desc.preferred[2] = (struct gmc_segment_pref){ 3, 0 };
    assert_ok(&k);
    k.desc.supported_segments &= ~GMC_SEGMENT_BIT(3);
    assert_rule(&k, "ALLOC_PREFERENCE_IN_SUPPORTED_SET");
    /* No preference at all is fine. */
    base_call(&k);
    k.desc.preferred[0].id = 0;
    assert_ok(&k);
    /* A direction on an unused entry, a gap, a repeat. */
    k.desc.preferred[3].top_down = 1;
    assert_rule(&k, "ALLOC_PREFERENCE_PACKED");
    base_call(&k);
    k.desc.preferred[1].id = 0;
    k.desc.preferred[4].id = 2;
    assert_rule(&k, "ALLOC_PREFERENCE_PACKED");
    base_call(&k);
    k.desc.preferred[1].id = 2;
    k.desc.preferred[2].id = 2;
    assert_rule(&k, "ALLOC_PREFERENCE_DISTINCT");
    /* Supported set: empty, or naming segments that do not exist. */
    base_call(&k);
    k.desc.supported_segments = 0;
    assert_rule(&k, "ALLOC_SUPPORTED_SET_VALID");
    k.desc.supported_segments = 0x80000001u;
    assert_rule(&k, "ALLOC_SUPPORTED_SET_VALID");
}

static void test_eviction_set(void **state)
{
    (void)state;
    struct call k;
    const unsigned bad_ids[] = { 1, 2, 4, 32 };
    for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
        base_call(&k);
        k.desc.eviction_segments = GMC_SEGMENT_BIT(3) | GMC_SEGMENT_BIT(bad_ids[i]);
        assert_rule(&k, "ALLOC_EVICTION_SET_APERTURE_ONLY");
    }
    base_call(&k);
    k.desc.eviction_segments = 0;
    assert_ok(&k);
    /* An AGP segment is an aperture. */
    base_call(&k);
    k.segs[2].flags = GMC_SEGFLAGS_AGP_MASK;
    assert_ok(&k);
    /* 80 % of the 16 MiB aperture, to the page. */
    base_call(&k);
    k.desc.supported_segments = GMC_SEGMENT_BIT(2) | GMC_SEGMENT_BIT(3);
    k.desc.preferred[0].id = 2;
    k.desc.size = gmc_eviction_limit(k.segs[2].size);
    assert_ok(&k);
    /* past it too (the seed's limit is advice; -1020 retired): such an
     * allocation evicts through its MDL (test_resid.c) */
    k.desc.size += 1;
    assert_ok(&k);
    k.desc.size = k.segs[2].size;
    assert_ok(&k);
    /* A PitchAlignment aperture never serves eviction. */
    base_call(&k);
    k.segs[2].flags |= GMC_SEGFLAGS_PITCH_ALIGNMENT_MASK;
    assert_rule(&k, "ALLOC_EVICTION_NOT_PITCH_SEGMENT");
}

static void test_pitch_aligned_size(void **state)
{
    (void)state;
    struct call k;
    base_call(&k);
    const uint64_t size = k.desc.size;
    const uint64_t below[] = { 1, 0x800, GMC_PAGE_SIZE, size / 2, size - GMC_PAGE_SIZE, size - 1 };
    for (size_t i = 0; i < sizeof(below) / sizeof(below[0]); i++) {
        base_call(&k);
        k.desc.pitch_aligned_size = below[i];
        assert_rule(&k, "ALLOC_PITCHALIGNEDSIZE_GE_SIZE");
        k.segs[1].flags = GMC_SEGFLAGS_PITCH_ALIGNMENT_MASK;
        assert_rule(&k, "ALLOC_PITCHALIGNEDSIZE_GE_SIZE");
    }
    base_call(&k);
    k.segs[1].flags = GMC_SEGFLAGS_PITCH_ALIGNMENT_MASK;
    k.desc.pitch_aligned_size = size;
    assert_ok(&k);
    k.desc.pitch_aligned_size = 0;
    assert_rule(&k, "ALLOC_PITCH_SEGMENT_NEEDS_PITCHALIGNEDSIZE");
    /* Pitch segment outside the supported set: PitchAlignedSize must be 0. */
    k.desc.supported_segments = GMC_SEGMENT_BIT(1);
    assert_ok(&k);
    k.desc.pitch_aligned_size = size * 2;
    assert_rule(&k, "ALLOC_PITCHALIGNEDSIZE_ZERO_WITHOUT_PITCH_SEGMENT");
}

struct sysmem_flavour {
    uint32_t flags, kmt;
    const char *range, *aligned, *multiple;
};

static void test_existing_memory(void **state)
{
    (void)state;
    const uint32_t standard = GMC_KMT_EXISTING_SYS_MEM | GMC_KMT_STANDARD_ALLOCATION |
                              GMC_KMT_CREATE_SHARED | GMC_KMT_CREATE_RESOURCE | GMC_KMT_CROSS_ADAPTER;
    const struct sysmem_flavour fl[] = {
        { GMC_ALLOC_EXISTING_SYS_MEM, 0, "ALLOC_EXISTINGSYSMEM_NEEDS_RANGE",
          "ALLOC_EXISTINGSYSMEM_PAGE_ALIGNED", "ALLOC_EXISTINGSYSMEM_PAGE_MULTIPLE" },
        { GMC_ALLOC_EXISTING_KERNEL_SYS_MEM, 0, "ALLOC_EXISTINGKERNELSYSMEM_NEEDS_RANGE",
          "ALLOC_EXISTINGKERNELSYSMEM_PAGE_ALIGNED", "ALLOC_EXISTINGKERNELSYSMEM_PAGE_MULTIPLE" },
        { 0, standard, "KMT_EXISTINGSYSMEM_NEEDS_RANGE", "KMT_EXISTINGSYSMEM_PAGE_ALIGNED",
          "KMT_EXISTINGSYSMEM_PAGE_MULTIPLE" },
    };
    for (size_t f = 0; f < sizeof(fl) / sizeof(fl[0]); f++) {
        struct call k;
        base_call(&k);
        k.desc.flags = fl[f].flags;
        k.desc.kmt_flags = fl[f].kmt;
        k.desc.system_mem = sysbuf;
        k.desc.system_mem_size = k.desc.size;
        assert_ok(&k);
        const size_t offsets[] = { 1, 8, 0x800, GMC_PAGE_SIZE - 1, GMC_PAGE_SIZE + 4 };
        for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
            k.desc.system_mem = sysbuf + offsets[i];
            assert_rule(&k, fl[f].aligned);
        }
        k.desc.system_mem = sysbuf + GMC_PAGE_SIZE;
        assert_ok(&k);
        const uint64_t sizes[] = { 1, 0x800, 0x10001, 0x10800, 0x10FFF };
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            k.desc.system_mem_size = sizes[i];
            assert_rule(&k, sizes[i] < k.desc.size ? fl[f].range : fl[f].multiple);
        }
        k.desc.system_mem_size = 2 * k.desc.size;
        assert_ok(&k);
        k.desc.system_mem = NULL;
        assert_rule(&k, fl[f].range);
        /* A size below a page still needs a whole page of memory. */
        k.desc.system_mem = sysbuf;
        k.desc.size = 100;
        k.desc.system_mem_size = GMC_PAGE_SIZE;
        assert_ok(&k);
    }
    /* Memory handed in without any flag that uses it. */
    struct call k;
    base_call(&k);
    k.desc.system_mem_size = GMC_PAGE_SIZE;
    assert_rule(&k, "INFO2_SYSMEM_NEEDS_EXISTING_FLAG");
}

static void test_priority(void **state)
{
    (void)state;
    struct call k;
    base_call(&k);
    k.desc.priority = 0;
    assert_rule(&k, "ALLOC_PRIORITY_NONZERO");
    const uint32_t ok[] = { 1, GMC_PRIORITY_MINIMUM, GMC_PRIORITY_MINIMUM + 1, GMC_PRIORITY_LOW,
                            GMC_PRIORITY_NORMAL, 0x8c000000u, GMC_PRIORITY_HIGH,
                            GMC_PRIORITY_MAXIMUM, UINT32_MAX };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        k.desc.priority = ok[i];
        assert_ok(&k);
    }
    k.desc.info2_flags = GMC_INFO2_OVERRIDE_PRIORITY;
    assert_rule(&k, "INFO2_OVERRIDEPRIORITY_NEEDS_PRIORITY");
    k.desc.umd_priority = GMC_PRIORITY_LOW;
    assert_ok(&k);
}

static void primary(struct call *k)
{
    base_call(k);
    k->desc.info2_flags = GMC_INFO2_PRIMARY;
    k->desc.vidpn_source_id = 0;
    k->desc.supported_segments = GMC_SEGMENT_BIT(1);
}

static void test_primary_and_stereo(void **state)
{
    (void)state;
    struct call k;
    base_call(&k);
    k.desc.info2_flags = GMC_INFO2_STEREO;
    assert_rule(&k, "INFO2_STEREO_NEEDS_PRIMARY");
    primary(&k);
    k.desc.info2_flags |= GMC_INFO2_STEREO;
    assert_ok(&k);
    /* VidPnSourceId: zero-based, primaries only, and a primary needs one. */
    base_call(&k);
    k.desc.vidpn_source_id = 3;
    assert_rule(&k, "INFO2_VIDPNSOURCEID_ONLY_PRIMARY");
    primary(&k);
    k.desc.vidpn_source_id = GMC_VIDPN_SOURCE_NONE;
    assert_rule(&k, "INFO2_PRIMARY_NEEDS_VIDPNSOURCEID");
    /* Flags a primary cannot carry, each with its own row. */
    const struct { uint32_t flags; const char *id; } no[] = {
        { GMC_ALLOC_PERMANENT_SYS_MEM | GMC_ALLOC_CPU_VISIBLE, "ALLOC_PERMSYSMEM_NOT_PRIMARY" },
        { GMC_ALLOC_CACHED | GMC_ALLOC_CPU_VISIBLE, "ALLOC_CACHED_NOT_PRIMARY" },
        { GMC_ALLOC_PROTECTED, "ALLOC_PROTECTED_NOT_PRIMARY" },
    };
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        primary(&k);
        k.desc.flags = no[i].flags;
        assert_rule(&k, no[i].id);
    }
    primary(&k);
    k.desc.flags = GMC_ALLOC_EXISTING_SYS_MEM;
    k.desc.system_mem = sysbuf;
    k.desc.system_mem_size = k.desc.size;
    assert_rule(&k, "ALLOC_EXISTINGSYSMEM_NOT_PRIMARY");
    k.desc.flags = GMC_ALLOC_EXISTING_KERNEL_SYS_MEM;
    assert_rule(&k, "ALLOC_EXISTINGKERNELSYSMEM_NOT_PRIMARY");
    /* Supported segments must be CPU-visible; an aperture counts only when
     * it says CpuVisible, unless the primary uses an alternate VA. */
    primary(&k);
    k.desc.supported_segments |= GMC_SEGMENT_BIT(2);
    assert_rule(&k, "INFO2_PRIMARY_SEGMENTS_CPU_ACCESSIBLE");
    primary(&k);
    k.desc.supported_segments |= GMC_SEGMENT_BIT(3);
    assert_rule(&k, "INFO2_PRIMARY_SEGMENTS_CPU_ACCESSIBLE");
    k.desc.flags = GMC_ALLOC_USE_ALTERNATE_VA;
    assert_ok(&k);
    k.desc.flags = 0;
    k.segs[2].flags |= GMC_SEGFLAGS_CPU_VISIBLE_MASK;
    assert_ok(&k);
    /* UseAlternateVA on anything else. */
    base_call(&k);
    k.desc.flags = GMC_ALLOC_USE_ALTERNATE_VA;
    assert_rule(&k, "ALLOC_USEALTERNATEVA_NEEDS_PRIMARY");
}

static void test_history_buffer(void **state)
{
    (void)state;
    struct call k;
    base_call(&k); /* default layout: cache-coherent aperture */
    k.desc.flags = GMC_ALLOC_HISTORY_BUFFER | GMC_ALLOC_CPU_VISIBLE;
    assert_rule(&k, "ALLOC_HISTORYBUFFER_NEEDS_CACHED");
    k.desc.flags |= GMC_ALLOC_CACHED;
    assert_ok(&k);
    for (unsigned bit = 0; bit < 19; bit++) {
        uint32_t m = UINT32_C(1) << bit;
        if (m & GMC_ALLOC_HISTORY_BUFFER_ALLOWED)
            continue;
        k.desc.flags = GMC_ALLOC_HISTORY_BUFFER_ALLOWED | m;
        int rc = check(&k, NULL);
        /* Flags that need a partner fail on their own rule first; none passes. */
        assert_int_not_equal(rc, GMC_OK);
        if (m == GMC_ALLOC_SYNCHRONOUS_PAGING || m == GMC_ALLOC_FROM_END_OF_SEGMENT ||
            m == GMC_ALLOC_SWIZZLED || m == GMC_ALLOC_ACCESSED_PHYSICALLY)
            assert_status(rc, status_of("ALLOC_HISTORYBUFFER_NO_OTHER_FLAGS"));
    }
    /* Without a coherent aperture Cached is not required. */
    base_call(&k);
    k.segs[2].flags = GMC_SEGFLAGS_APERTURE_MASK;
    k.desc.flags = GMC_ALLOC_HISTORY_BUFFER | GMC_ALLOC_CPU_VISIBLE;
    assert_ok(&k);
    k.desc.flags = GMC_ALLOC_HISTORY_BUFFER;
    assert_rule(&k, "ALLOC_HISTORYBUFFER_NEEDS_CPUVISIBLE");
}

static void test_pinned_sizes(void **state)
{
    (void)state;
    struct call k;
    const uint32_t pinned[] = { GMC_ALLOC_OVERLAY, GMC_ALLOC_CAPTURE };
    const char *ids[] = { "ALLOC_OVERLAY_FITS_PINNED_REGION", "ALLOC_CAPTURE_FITS_PINNED_REGION" };
    for (size_t i = 0; i < 2; i++) {
        base_call(&k);
        k.desc.flags = pinned[i];
        k.desc.size = gmc_pinned_region_size(k.segs[1].size); /* segment 2 is the larger */
        assert_ok(&k);
        k.desc.size += 1;
        assert_rule(&k, ids[i]);
        k.desc.supported_segments = GMC_SEGMENT_BIT(3) | GMC_SEGMENT_BIT(1);
        assert_ok(&k); /* the aperture's fifth is 3.2 MiB */
    }
    assert_int_equal(gmc_pinned_region_size(0x1000000), 0x333000);
    assert_int_equal(gmc_eviction_limit(0x1000000), 0xCCD000);
}

static void test_exclusive_flags(void **state)
{
    (void)state;
    struct call k;
    base_call(&k);
    k.desc.system_mem = sysbuf;
    k.desc.system_mem_size = k.desc.size;
    k.desc.flags = GMC_ALLOC_PROTECTED | GMC_ALLOC_EXISTING_SYS_MEM;
    assert_rule(&k, "ALLOC_PROTECTED_EXCLUSIVE");
    k.desc.flags = GMC_ALLOC_PROTECTED | GMC_ALLOC_EXISTING_KERNEL_SYS_MEM;
    assert_rule(&k, "ALLOC_PROTECTED_EXCLUSIVE");
    k.desc.flags = GMC_ALLOC_EXISTING_SYS_MEM | GMC_ALLOC_EXISTING_KERNEL_SYS_MEM;
    assert_rule(&k, "ALLOC_EXISTINGSYSMEM_EXCLUSIVE");
    /* Table order decides between two broken rows. */
    k.desc.flags = GMC_ALLOC_PERMANENT_SYS_MEM;
    k.desc.info2_flags = GMC_INFO2_PRIMARY;
    k.desc.vidpn_source_id = 0;
    k.desc.system_mem = NULL;
    k.desc.system_mem_size = 0;
    assert_rule(&k, "ALLOC_PERMSYSMEM_NEEDS_CPUVISIBLE");
    /* Sharing flags. */
    base_call(&k);
    k.desc.kmt_flags = GMC_KMT_NT_SECURITY_SHARING | GMC_KMT_CREATE_SHARED;
    assert_rule(&k, "KMT_CREATESHARED_NEEDS_CREATERESOURCE");
    k.desc.kmt_flags |= GMC_KMT_CREATE_RESOURCE;
    assert_ok(&k);
    /* Standard allocation over a section. */
    base_call(&k);
    k.desc.kmt_flags = GMC_KMT_STANDARD_ALLOCATION | GMC_KMT_EXISTING_SECTION |
                       GMC_KMT_CREATE_SHARED | GMC_KMT_CREATE_RESOURCE | GMC_KMT_CROSS_ADAPTER;
    assert_rule(&k, "INFO2_EXISTINGSECTION_NEEDS_HSECTION");
    k.desc.section = 0x44;
    assert_ok(&k);
    k.desc.kmt_flags &= ~GMC_KMT_CROSS_ADAPTER;
    assert_rule(&k, "KMT_STANDARD_NEEDS_SHARED_CROSSADAPTER");
    /* HardwareProtected stays in VRAM. */
    base_call(&k);
    k.desc.flags = GMC_ALLOC_HARDWARE_PROTECTED;
    k.desc.eviction_segments = 0;
    k.desc.supported_segments = GMC_SEGMENT_BIT(2);
    k.desc.preferred[0].id = 2;
    assert_ok(&k);
    k.desc.supported_segments |= GMC_SEGMENT_BIT(3);
    assert_rule(&k, "ALLOC_HWPROTECTED_VRAM_ONLY");
}

static void test_alignment(void **state)
{
    (void)state;
    struct call k;
    base_call(&k);
    const uint32_t bad[] = { 3, 0x1800, 0x3000, 0x80000001u };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        k.desc.alignment = bad[i];
        assert_rule(&k, "ALLOC_ALIGNMENT_POWER_OF_TWO");
    }
    k.desc.alignment = 0x80000000u;
    assert_ok(&k);
    k.desc.size = 0;
    assert_rule(&k, "ALLOC_SIZE_VALID");
    k.desc.size = UINT64_MAX;
    assert_rule(&k, "ALLOC_SIZE_VALID");
    /* Use64KBPages on segment 2: allocations there need 64 KiB alignment. */
    base_call(&k);
    k.segs[1].flags = GMC_SEGFLAGS_USE_64KB_PAGES_MASK;
    assert_rule(&k, "ALLOC_64KB_PAGES_ALIGNMENT");
    k.desc.alignment = 0;
    assert_rule(&k, "ALLOC_64KB_PAGES_ALIGNMENT");
    k.desc.alignment = GMC_64KB_PAGE_SIZE;
    assert_ok(&k);
    k.desc.alignment = GMC_PAGE_SIZE;
    k.desc.supported_segments = GMC_SEGMENT_BIT(1);
    assert_ok(&k);
}

static void test_hinted_banks(void **state)
{
    (void)state;
    struct call k;
    base_call(&k);
    k.segs[1].flags = GMC_SEGFLAGS_USE_BANKING_MASK;
    k.segs[1].banks = 4;
    k.desc.preferred[0].id = 2;
    k.desc.preferred[1].id = 1;
    k.desc.hinted_banks[0] = 3;
    k.desc.hinted_banks[1] = 1;
    assert_ok(&k);
    k.desc.hinted_banks[2] = 3;
    assert_rule(&k, "ALLOC_HINTEDBANK_VALID");
    k.desc.hinted_banks[2] = 0;
    k.desc.hinted_banks[3] = 2;
    assert_rule(&k, "ALLOC_HINTEDBANK_VALID");
    k.desc.hinted_banks[3] = 0;
    k.desc.hinted_banks[1] = 5;
    assert_rule(&k, "ALLOC_HINTEDBANK_VALID");
    k.desc.hinted_banks[1] = 0;
    k.desc.preferred[0].id = 1;
    k.desc.preferred[1].id = 2;
    assert_rule(&k, "ALLOC_HINTEDBANK_NEEDS_BANKED_PREFERENCE");
    k.desc.preferred[0].id = 0;
    k.desc.preferred[1].id = 0;
    assert_rule(&k, "ALLOC_HINTEDBANK_NEEDS_BANKED_PREFERENCE");
}

/* ---------------------------------------------------------- segment set */

static void test_default_layout(void **state)
{
    (void)state;
    struct call k;
    base_call(&k);
    assert_int_equal(k.nsegs, 3);
    assert_int_equal(k.segs[0].base, 0);
    assert_int_equal(k.segs[0].size, 2u << 20);
    assert_int_equal(k.segs[0].flags, GMC_SEGFLAGS_CPU_VISIBLE_MASK);
    assert_int_equal(k.segs[1].base, 2u << 20);
    assert_int_equal(k.segs[1].base + k.segs[1].size, (8u << 20) - 0x10000u);
    assert_int_equal(k.segs[2].base, 0x80000000u);
    assert_int_equal(k.segs[2].size, 16u << 20);
    assert_int_equal(k.segs[2].flags, GMC_SEGFLAGS_APERTURE_MASK | GMC_SEGFLAGS_CACHE_COHERENT_MASK);
    assert_status(gmc_rules_check_segments(k.segs, k.nsegs, NULL), GMC_OK);
}

struct seg_case {
    unsigned seg; /* 0-based */
    uint32_t flags;
    const char *id; /* NULL: valid */
};

static void test_segment_flag_rules(void **state)
{
    (void)state;
    const uint32_t A = GMC_SEGFLAGS_APERTURE_MASK, CC = GMC_SEGFLAGS_CACHE_COHERENT_MASK,
                   SB = GMC_SEGFLAGS_PRESERVED_DURING_STANDBY_MASK,
                   HB = GMC_SEGFLAGS_PRESERVED_DURING_HIBERNATE_MASK,
                   PH = GMC_SEGFLAGS_PARTIALLY_PRESERVED_DURING_HIBERNATE_MASK,
                   CV = GMC_SEGFLAGS_CPU_VISIBLE_MASK,
                   HA = GMC_SEGFLAGS_SUPPORTS_CPU_HOST_APERTURE_MASK,
                   HC = GMC_SEGFLAGS_SUPPORTS_CACHED_CPU_HOST_APERTURE_MASK,
                   AGP = GMC_SEGFLAGS_AGP_MASK;
    const struct seg_case cases[] = {
        { 2, AGP, NULL },
        { 2, AGP | A, "SEG_AGP_ALONE" },
        { 2, AGP | SB, "SEG_AGP_ALONE" },
        { 2, AGP | CV, "SEG_AGP_ALONE" },
        { 1, CC, "SEG_CACHECOHERENT_NEEDS_APERTURE" },
        { 0, CV | CC, "SEG_CACHECOHERENT_NEEDS_APERTURE" },
        { 2, A, NULL },
        { 1, HB, "SEG_HIBERNATE_NEEDS_STANDBY" },
        { 1, PH, "SEG_PARTIAL_NEEDS_STANDBY" },
        { 1, SB | HB | PH, "SEG_PARTIAL_EXCLUDES_HIBERNATE" },
        { 1, SB | PH, NULL },
        { 1, SB, NULL },
        { 2, A | CC | SB | HB, NULL },
        { 2, A | SB | PH, "SEG_PARTIAL_NOT_APERTURE" },
        { 2, A | GMC_SEGFLAGS_POPULATED_FROM_SYSTEM_MEMORY_MASK, "SEG_POPULATEDFROMSYSMEM_NOT_APERTURE" },
        { 0, CV | HA, "SEG_HOSTAPERTURE_EXCLUDES_CPUVISIBLE" },
        { 1, HA | HC, NULL },
        { 1, HC, "SEG_CACHEDHOSTAPERTURE_NEEDS_HOSTAPERTURE" },
        { 1, GMC_SEGFLAGS_RESERVED_SYS_MEM_MASK, "SEG_RESERVEDSYSMEM_NOT_SET" },
        { 1, GMC_SEGFLAGS_USE_BANKING_MASK, "SEG_USEBANKING_NEEDS_BANKS" },
        { 1, GMC_SEGFLAGS_DIRECT_FLIP_MASK | GMC_SEGFLAGS_APPLICATION_TARGET_MASK, NULL },
        { 1, GMC_SEGFLAGS_USE_64KB_PAGES_MASK, NULL },
        { 0, CV | GMC_SEGFLAGS_USE_64KB_PAGES_MASK, NULL },
        { 2, A | CC | GMC_SEGFLAGS_PITCH_ALIGNMENT_MASK, NULL },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct call k;
        base_call(&k);
        k.desc.eviction_segments = 0; /* keep the allocation out of it */
        k.desc.alignment = GMC_64KB_PAGE_SIZE;
        k.segs[cases[i].seg].flags = cases[i].flags;
        int want = cases[i].id ? status_of(cases[i].id) : GMC_OK;
        const struct gmc_rule *failed = NULL;
        int rc = gmc_rules_check_segments(k.segs, k.nsegs, &failed);
        if (rc != want)
            fail_msg("case %zu: got %s, want %s", i, gmc_status_name(rc), gmc_status_name(want));
        if (cases[i].id)
            assert_string_equal(gmc_rule_id(failed), cases[i].id);
        assert_status(check(&k, NULL), want);
    }
}

static void test_segment_geometry(void **state)
{
    (void)state;
    struct call k;
    /* Two AGP segments. */
    base_call(&k);
    k.segs[1].flags = GMC_SEGFLAGS_AGP_MASK;
    k.segs[2].flags = GMC_SEGFLAGS_AGP_MASK;
    assert_rule(&k, "SEG_AGP_AT_MOST_ONE");
    /* Sizes and bases in whole pages. */
    base_call(&k);
    k.segs[0].size = 0x1FF800;
    assert_rule(&k, "SEG_SIZE_PAGE_MULTIPLE");
    k.segs[0].size = 0;
    assert_rule(&k, "SEG_SIZE_PAGE_MULTIPLE");
    base_call(&k);
    k.segs[2].base += 0x10;
    assert_rule(&k, "SEG_BASE_PAGE_ALIGNED");
    /* 64 KiB pages need 64 KiB geometry. */
    base_call(&k);
    k.segs[2].flags |= GMC_SEGFLAGS_USE_64KB_PAGES_MASK;
    k.segs[2].base += GMC_PAGE_SIZE;
    assert_rule(&k, "SEG_64KB_PAGES_ALIGNED");
    /* Overlap: touching is fine, one byte (page) more is not. */
    base_call(&k);
    k.segs[2].base = k.segs[1].base + k.segs[1].size;
    assert_ok(&k);
    k.segs[2].base -= GMC_PAGE_SIZE;
    assert_rule(&k, "SEG_NO_OVERLAP");
    base_call(&k);
    k.segs[0].base = 0x80800000u; /* inside the aperture */
    assert_rule(&k, "SEG_NO_OVERLAP");
    /* Wrapping the address space. */
    base_call(&k);
    k.segs[2].base = UINT64_MAX - 0xFFFu;
    assert_rule(&k, "SEG_RANGE_NO_WRAP");
    /* Bank counts. */
    base_call(&k);
    k.segs[1].banks = 2;
    assert_rule(&k, "SEG_BANKS_NEED_USEBANKING");
    k.segs[1].flags = GMC_SEGFLAGS_USE_BANKING_MASK;
    assert_ok(&k);
    k.segs[1].banks = 3; /* 0x5F0000 is not three whole-page banks */
    assert_rule(&k, "SEG_USEBANKING_NEEDS_BANKS");
    /* CPU windows. */
    base_call(&k);
    k.segs[0].cpu_offset = 0x10;
    assert_rule(&k, "SEG_CPU_OFFSET_VALID");
    base_call(&k);
    k.segs[1].flags = GMC_SEGFLAGS_CPU_VISIBLE_MASK;
    k.segs[1].cpu_offset = 0x1FF000;
    assert_rule(&k, "SEG_CPU_WINDOWS_NO_OVERLAP");
    k.segs[1].cpu_offset = 0x200000;
    assert_ok(&k);
    /* Ids and counts. */
    base_call(&k);
    k.segs[0].id = 0;
    assert_rule(&k, "SEG_IDS_SEQUENTIAL");
    base_call(&k);
    k.segs[1].id = 3;
    k.segs[2].id = 2;
    assert_rule(&k, "SEG_IDS_SEQUENTIAL");
    base_call(&k);
    for (unsigned i = k.nsegs; i < RULES_CASE_MAX_SEGS; i++) {
        k.segs[i] = k.segs[1];
        k.segs[i].id = i + 1u;
        k.segs[i].base = 0x100000000ull + (uint64_t)i * 0x1000000u;
    }
    k.nsegs = GMC_MAX_SEGMENTS;
    assert_ok(&k);
    k.nsegs = GMC_MAX_SEGMENTS + 1u;
    assert_rule(&k, "SEG_COUNT_VALID");
    /* A broken segment table wins over a broken allocation. */
    base_call(&k);
    k.desc.priority = 0;
    k.segs[1].flags = GMC_SEGFLAGS_CACHE_COHERENT_MASK;
    assert_rule(&k, "SEG_CACHECOHERENT_NEEDS_APERTURE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row_has_cases),
        cmocka_unit_test(test_rule_statuses_distinct),
        cmocka_unit_test(test_status_names_and_messages),
        cmocka_unit_test(test_passing_cases),
        cmocka_unit_test(test_failing_cases),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_accessors),
        cmocka_unit_test(test_desc_init),
        cmocka_unit_test(test_reserved_bits),
        cmocka_unit_test(test_flag_positions),
        cmocka_unit_test(test_preferences_outside_supported_set),
        cmocka_unit_test(test_eviction_set),
        cmocka_unit_test(test_pitch_aligned_size),
        cmocka_unit_test(test_existing_memory),
        cmocka_unit_test(test_priority),
        cmocka_unit_test(test_primary_and_stereo),
        cmocka_unit_test(test_history_buffer),
        cmocka_unit_test(test_pinned_sizes),
        cmocka_unit_test(test_exclusive_flags),
        cmocka_unit_test(test_alignment),
        cmocka_unit_test(test_hinted_banks),
        cmocka_unit_test(test_default_layout),
        cmocka_unit_test(test_segment_flag_rules),
        cmocka_unit_test(test_segment_geometry),
    };
    return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
