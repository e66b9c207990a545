/*
 * test_resid.c - residency (docs/residency.md) on the model through the
 * public API: MakeResident/Evict reference counts per client, submissions
 * of non-resident allocations, eviction under pressure (priority first;
 * within a priority cold allocations least recently used first, then hot
 * ones last-joined first; refaults joining the hot set; a loop keeping its
 * hot part; referenced, locked and pinned allocations never chosen; exact
 * bytes_needed), eviction through an aperture versus an MDL,
 * PermanentSysMem, ExistingSysMem and the kept system copy of an ordinary
 * allocation (clean eviction is a discard, dirty content is copied), the
 * first page-in (FILL pattern or zeros, in
 * VRAM), NOTIFY_RESIDENCY callbacks, SynchronousPaging ordering,
 * submission copies and fills byte for byte, every submission refusal and
 * fence-wait argument errors. Every model is checked for AXI protocol
 * violations when its device closes.
 */
#include "vidmm_test.h"

/* ------------------------------------------------ reference counts */

static void test_refcounts(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c1 = t_client(dev), *c2 = t_client(dev);
    struct gmc_alloc_desc d;
    t_desc(&d, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    d.kmt_flags = GMC_KMT_CREATE_RESOURCE | GMC_KMT_CREATE_SHARED;
    gmc_handle h1 = t_create(c1, &d);
    gmc_handle h2 = GMC_HANDLE_NONE;
    ok(gmc_alloc_open(c2, t_info(c1, h1).share_handle, &h2));

    gmc_handle twice[2] = { h1, h1 };
    struct gmc_residency_result res;
    ok(gmc_make_resident(c1, twice, 2, &res));
    assert_int_equal(res.failed_index, 2);
    assert_int_equal(res.bytes_needed, 0);
    assert_true(res.paging_fence != 0u); /* the first page-in */
    assert_int_equal(t_info(c1, h1).resident_refs, 2);
    assert_int_equal(t_info(c1, h1).resident_total, 2);
    assert_int_equal(t_info(c2, h2).resident_refs, 0);
    assert_int_equal(t_info(c2, h2).resident_total, 2);
    ok(t_resident1(c2, h2));
    assert_int_equal(t_info(c2, h2).resident_refs, 1);
    assert_int_equal(t_info(c1, h1).resident_total, 3);
    struct gmc_client_stats cs;
    ok(gmc_client_stats(c2, &cs));
    assert_int_equal(cs.bytes_resident, 64 * KiB);

    /* already in memory: a second MakeResident pages nothing */
    ok(gmc_make_resident(c1, &h1, 1, &res));
    assert_int_equal(res.paging_fence, 0);
    ok(t_evict1(c1, h1));

    ok(t_evict1(c2, h2));
    struct gmc_device_stats before = t_stats(dev);
    assert_status(t_evict1(c2, h2), GMC_E_NOT_RESIDENT);
    struct gmc_device_stats after = t_stats(dev);
    assert_int_equal(after.evict_calls, before.evict_calls);
    assert_int_equal(t_info(c1, h1).resident_refs, 2);
    assert_int_equal(t_info(c1, h1).resident_total, 2);
    assert_int_equal(t_info(c2, h2).resident_refs, 0);
    ok(gmc_client_stats(c2, &cs));
    assert_int_equal(cs.bytes_resident, 0);

    /* three references asked, two held: nothing changes */
    gmc_handle thrice[3] = { h1, h1, h1 };
    assert_status(gmc_evict(c1, thrice, 3), GMC_E_NOT_RESIDENT);
    assert_int_equal(t_info(c1, h1).resident_refs, 2);
    /* another client's handle is not this client's */
    assert_status(gmc_evict(c2, &h1, 1), GMC_E_BAD_HANDLE);
    res.failed_index = 99;
    assert_status(gmc_make_resident(c2, &h1, 1, &res), GMC_E_BAD_HANDLE);
    assert_int_equal(res.failed_index, 0);
    assert_int_equal(t_info(c1, h1).resident_total, 2);
    assert_status(gmc_make_resident(NULL, &h1, 1, NULL), GMC_E_NULL_POINTER);
    assert_status(gmc_make_resident(c1, NULL, 1, NULL), GMC_E_NULL_POINTER);
    assert_status(gmc_evict(c1, NULL, 1), GMC_E_NULL_POINTER);
    ok(gmc_make_resident(c1, NULL, 0, NULL));

    ok(gmc_evict(c1, twice, 2));
    struct gmc_alloc_info ai = t_info(c1, h1);
    assert_int_equal(ai.resident_refs, 0);
    assert_int_equal(ai.resident_total, 0);
    assert_false(ai.state & GMC_ALLOC_STATE_RESIDENT);
    assert_true(ai.state & GMC_ALLOC_STATE_PLACED); /* unreferenced, not moved */

    /* a destroyed handle drops its references */
    ok(t_resident1(c2, h2));
    assert_int_equal(t_info(c1, h1).resident_total, 1);
    ok(gmc_alloc_destroy(c2, h2));
    assert_int_equal(t_info(c1, h1).resident_total, 0);
    t_close(dev);
}

/* ------------------------------------------ eviction under pressure */

struct slot {
    gmc_handle h;
    uint32_t prio;
    uint64_t offset;
};

static int placed_at(gmc_client *c, gmc_handle h, unsigned seg)
{
    struct gmc_alloc_info ai = t_info(c, h);
    return (ai.state & GMC_ALLOC_STATE_PLACED) && ai.segment == seg;
}

static void test_pressure_policy(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    enum { N = 8 };
    const uint64_t SZ = 256 * KiB;
    static const uint32_t prio[N] = { GMC_PRIORITY_HIGH, GMC_PRIORITY_LOW, GMC_PRIORITY_NORMAL,
                                      GMC_PRIORITY_LOW, GMC_PRIORITY_NORMAL, GMC_PRIORITY_LOW,
                                      GMC_PRIORITY_HIGH, GMC_PRIORITY_NORMAL };
    struct slot a[N];
    for (unsigned i = 0; i < N; i++) {
        struct gmc_alloc_desc d;
        t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
        d.priority = prio[i];
        a[i].h = t_create(c, &d);
        a[i].prio = prio[i];
        struct gmc_alloc_info ai = t_info(c, a[i].h);
        assert_int_equal(ai.segment, SEG_VIS); /* 8 x 256 KiB fill the 2 MiB exactly */
        assert_int_equal(ai.offset, i * SZ);
        a[i].offset = ai.offset;
        assert_int_equal(ai.priority, prio[i]);
        t_write_pattern(c, a[i].h, SZ, 100 + i);
    }
    /* LRU order: touch 0 first ... 7 last */
    for (unsigned i = 0; i < N; i++) {
        ok(t_resident1(c, a[i].h));
        ok(t_evict1(c, a[i].h));
    }
    /* a[3] (LOW) stays referenced, a[5] (LOW) locked: never victims */
    ok(t_resident1(c, a[3].h));
    struct gmc_lock_map m;
    ok(gmc_lock(c, a[5].h, GMC_LOCK_READ_ONLY, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_BAR);
    assert_int_equal(m.bar_offset, a[5].offset);

    /* each new 256 KiB allocation evicts exactly one, in policy order. All
     * eight are hot (placed with room at creation, in index order), so
     * within a priority the last to join the hot set goes first, against
     * the LRU order (which would take a2, a4, a7 and a0, a6): LOW a1;
     * NORMAL a7, a4, a2; HIGH a6, a0. The new ones come in cold but stay
     * referenced. */
    static const unsigned order[] = { 1, 7, 4, 2, 6, 0 };
    gmc_handle n[6];
    struct gmc_device_stats st0 = t_stats(dev);
    for (unsigned k = 0; k < 6; k++) {
        struct gmc_alloc_desc d;
        t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
        n[k] = t_create(c, &d);
        assert_false(t_info(c, n[k]).state & GMC_ALLOC_STATE_PLACED); /* creation never evicts */
        struct gmc_residency_result res;
        ok(gmc_make_resident(c, &n[k], 1, &res));
        assert_true(res.paging_fence != 0u);
        unsigned v = order[k];
        struct gmc_alloc_info ai = t_info(c, a[v].h);
        if (ai.state & GMC_ALLOC_STATE_PLACED)
            fail_msg("step %u: a%u should have been evicted", k, v);
        assert_true(ai.state & GMC_ALLOC_STATE_IN_SYSTEM);
        assert_true(ai.state & GMC_ALLOC_STATE_HAS_CONTENT);
        assert_int_equal(t_info(c, n[k]).offset, a[v].offset); /* took its place */
        for (unsigned j = 0; j < N; j++) {
            int gone = 0;
            for (unsigned q = 0; q <= k; q++)
                gone |= order[q] == j;
            if (placed_at(c, a[j].h, SEG_VIS) == gone)
                fail_msg("step %u: a%u placed=%d", k, j, !gone);
        }
    }
    struct gmc_device_stats st1 = t_stats(dev);
    assert_int_equal(st1.evictions - st0.evictions, 6);
    assert_int_equal(st1.bytes_paged_out - st0.bytes_paged_out, 6 * SZ); /* all dirty: copied */
    assert_int_equal(st1.discards, st0.discards);
    assert_int_equal(st1.evictions_via_aperture, st0.evictions_via_aperture);
    struct gmc_client_stats cs;
    ok(gmc_client_stats(c, &cs));
    assert_int_equal(cs.evictions, 6);

    /* full of referenced and locked allocations: NO_SPACE, exact */
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle big = t_create(c, &d);
    struct gmc_residency_result res;
    struct gmc_device_stats sb = t_stats(dev);
    assert_status(gmc_make_resident(c, &big, 1, &res), GMC_E_NO_SPACE);
    assert_int_equal(res.bytes_needed, SZ);
    assert_int_equal(res.failed_index, 0);
    assert_int_equal(t_stats(dev).evictions, sb.evictions);
    /* one unreferenced 256 KiB: 512 KiB still 256 KiB short, nothing evicted */
    ok(t_evict1(c, n[0]));
    d.size = 2 * SZ;
    gmc_handle big2 = t_create(c, &d);
    gmc_handle two[2] = { a[3].h, big2 };
    uint32_t refs3 = t_info(c, a[3].h).resident_refs;
    assert_status(gmc_make_resident(c, two, 2, &res), GMC_E_NO_SPACE);
    assert_int_equal(res.bytes_needed, SZ);
    assert_int_equal(res.failed_index, 1);
    assert_int_equal(t_info(c, a[3].h).resident_refs, refs3); /* all or nothing */
    assert_true(placed_at(c, n[0], SEG_VIS));
    assert_int_equal(t_stats(dev).evictions, sb.evictions);
    /* the 256 KiB one fits by evicting n[0] */
    ok(gmc_make_resident(c, &big, 1, &res));
    assert_false(t_info(c, n[0]).state & GMC_ALLOC_STATE_PLACED);

    /* every evicted allocation's content is intact */
    ok(gmc_unlock(c, a[5].h));
    for (unsigned i = 0; i < N; i++)
        if (!t_check_pattern(c, a[i].h, SZ, 100 + i))
            fail_msg("a%u content changed", i);
    t_close(dev);
}

static void test_pinned_never_evicted(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    struct gmc_alloc_desc d;
    t_desc(&d, 64 * KiB, GMC_ALLOC_OVERLAY | GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    d.priority = GMC_PRIORITY_MINIMUM;
    gmc_handle ov = t_create(c, &d);
    struct gmc_alloc_info oi = t_info(c, ov);
    assert_true(oi.state & GMC_ALLOC_STATE_PINNED);
    assert_true(oi.state & GMC_ALLOC_STATE_PLACED);
    gmc_handle small = t_new(c, 512 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    assert_true(placed_at(c, small, SEG_VIS));
    /* the whole segment: everything but the overlay could go */
    t_desc(&d, 2 * MiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle all = t_create(c, &d);
    struct gmc_residency_result res;
    assert_status(gmc_make_resident(c, &all, 1, &res), GMC_E_NO_SPACE);
    assert_int_equal(res.bytes_needed, 64 * KiB);
    assert_true(placed_at(c, ov, SEG_VIS));
    assert_true(placed_at(c, small, SEG_VIS)); /* not evicted in vain */
    assert_int_equal(t_stats(dev).evictions, 0);
    t_close(dev);
}

/* Within a priority: cold allocations (placed by evicting) least recently
 * used first, then hot ones (placed with room, or refaults admitted) the
 * last to join first. A refault joins a full hot set when it was used more
 * recently than the set's least recently used allocation of its priority,
 * which leaves the set; the set shrinks to what stays when a hot one had
 * to go. Priority comes first, hot or cold. */
/* The GPU writes the first 4 KiB of h (resident): its placed copy is then
 * newer than its system copy. */
static void gpu_write(gmc_device *dev, gmc_client *c, gmc_handle h)
{
    const struct gmc_submit_ref r[1] = { { h, GMC_REF_WRITE } };
    const struct gmc_gpu_op op[1] = { { GMC_GPU_FILL, 0, 0, 0, 0, 4096, 0x5A5A5A5Au } };
    const struct gmc_submit sub = { r, 1, op, 1 };
    uint64_t f = 0;
    ok(gmc_submit(c, &sub, &f));
    ok(gmc_fence_wait(dev, f, 0));
}

static void test_hot_set(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    enum { N = 8 };
    const uint64_t SZ = 256 * KiB;
    gmc_handle h[N];
    for (unsigned i = 0; i < N; i++) {
        h[i] = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS)); /* NORMAL */
        assert_int_equal(t_info(c, h[i]).offset, i * SZ);       /* 8 x 256 KiB fill the 2 MiB */
    }
    for (unsigned i = 0; i < N; i++) { /* first page-ins; LRU order h0 ... h7 */
        ok(t_resident1(c, h[i]));
        ok(t_evict1(c, h[i]));
    }

    /* all hot: h7 joined last and goes, not the least recently used h0; the
     * hot set now holds at most the seven that stay */
    gmc_handle n0 = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    assert_false(t_info(c, n0).state & GMC_ALLOC_STATE_PLACED);
    ok(t_resident1(c, n0)); /* comes in cold */
    assert_false(placed_at(c, h[7], SEG_VIS));
    assert_int_equal(t_info(c, n0).offset, 7 * SZ);
    for (unsigned i = 0; i < 7; i++)
        assert_true(placed_at(c, h[i], SEG_VIS));
    ok(t_evict1(c, n0));

    /* h7 comes back, used more recently than h0 (the hot set's least
     * recently used): it joins, h0 leaves the set and, older than n0, is
     * the first cold victim. The GPU then writes h7, so that it is dirty
     * like every other candidate (clean ones go first: see
     * test_clean_before_dirty). */
    ok(t_resident1(c, h[7]));
    assert_false(placed_at(c, h[0], SEG_VIS));
    assert_true(placed_at(c, n0, SEG_VIS));
    assert_int_equal(t_info(c, h[7]).offset, 0);
    gpu_write(dev, c, h[7]);
    ok(t_evict1(c, h[7]));

    /* h0 comes back, but was used before h1, now the hot set's least
     * recently used: it stays cold, and the only cold victim is n0, although
     * n0 was used after every hot one but h7 */
    ok(t_resident1(c, h[0]));
    assert_false(placed_at(c, n0, SEG_VIS));
    assert_int_equal(t_info(c, h[0]).offset, 7 * SZ);
    for (unsigned i = 1; i < N; i++)
        assert_true(placed_at(c, h[i], SEG_VIS));
    ok(t_evict1(c, h[0]));

    /* cold before hot: h0, the most recently used, goes */
    gmc_handle n1 = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, n1));
    assert_false(placed_at(c, h[0], SEG_VIS));
    assert_int_equal(t_info(c, n1).offset, 7 * SZ);
    ok(t_evict1(c, n1));

    /* priority first: a LOW allocation placed with room (hot: the set has
     * room again once h6 is gone) goes before the cold NORMAL n1 */
    ok(gmc_alloc_destroy(c, h[6]));
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    d.priority = GMC_PRIORITY_LOW;
    gmc_handle low = t_create(c, &d);
    assert_int_equal(t_info(c, low).offset, 6 * SZ);
    ok(t_resident1(c, low));
    ok(t_evict1(c, low));
    gmc_handle n2 = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, n2));
    assert_false(placed_at(c, low, SEG_VIS));
    assert_true(placed_at(c, n1, SEG_VIS));
    assert_int_equal(t_info(c, n2).offset, 6 * SZ);
    for (unsigned i = 1; i < 6; i++)
        assert_true(placed_at(c, h[i], SEG_VIS));
    assert_true(placed_at(c, h[7], SEG_VIS));
    t_close(dev);
}

/* Within a priority a clean allocation goes before a dirty one, hot or
 * not: dropping it writes nothing back. */
static void test_clean_before_dirty(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    enum { N = 8 };
    const uint64_t SZ = 256 * KiB;
    gmc_handle h[N];
    for (unsigned i = 0; i < N; i++) {
        h[i] = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS)); /* NORMAL, 8 x 256 KiB fill the 2 MiB */
        ok(t_resident1(c, h[i])); /* first fill: dirty (no system copy holds it) */
        ok(t_evict1(c, h[i]));
    }
    /* as in test_hot_set: n0 (dirty, cold) takes h7's place, h7 comes back
     * (written back, paged in: clean, hot) and takes h0's */
    gmc_handle n0 = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, n0));
    ok(t_evict1(c, n0));
    ok(t_resident1(c, h[7]));
    ok(t_evict1(c, h[7]));
    assert_false(placed_at(c, h[0], SEG_VIS));
    assert_int_equal(t_info(c, h[7]).offset, 0);
    assert_int_equal(t_info(c, n0).offset, 7 * SZ);

    /* n1 needs room: h7, the one clean candidate, goes (although hot and
     * used after n0, the cold one), dropped without a write-back */
    struct gmc_device_stats s0 = t_stats(dev);
    gmc_handle n1 = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, n1));
    struct gmc_device_stats s1 = t_stats(dev);
    assert_false(placed_at(c, h[7], SEG_VIS));
    assert_true(placed_at(c, n0, SEG_VIS));
    assert_int_equal(t_info(c, n1).offset, 0);
    assert_int_equal(s1.bytes_paged_out, s0.bytes_paged_out);
    assert_int_equal(s1.discards - s0.discards, 1);
    assert_int_equal(s1.evictions - s0.evictions, 1);
    ok(t_evict1(c, n1));

    /* now every candidate is dirty (n1 by its first fill): the least
     * recently used cold one, n0, goes first, written back */
    gmc_handle n2 = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, n2));
    struct gmc_device_stats s2 = t_stats(dev);
    assert_false(placed_at(c, n0, SEG_VIS));
    assert_true(placed_at(c, n1, SEG_VIS));
    assert_int_equal(t_info(c, n2).offset, 7 * SZ);
    assert_int_equal(s2.bytes_paged_out - s1.bytes_paged_out, SZ);
    assert_int_equal(s2.discards, s1.discards);
    t_close(dev);
}

/* The scan stops at the first victim that opens room; of that free run
 * (victims and holes together) only a window of the wanted size is
 * emptied, the one whose victims add up to the fewest bytes: here the
 * window ending at the run's end, which spares the first victim. */
static void test_scan_window_fewest_bytes(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 256 * KiB;
    static const uint32_t prio[8] = { GMC_PRIORITY_MINIMUM, GMC_PRIORITY_LOW, GMC_PRIORITY_NORMAL,
                                      GMC_PRIORITY_NORMAL, GMC_PRIORITY_NORMAL, GMC_PRIORITY_NORMAL,
                                      GMC_PRIORITY_NORMAL, GMC_PRIORITY_NORMAL };
    gmc_handle h[8];
    for (unsigned i = 0; i < 8; i++) {
        struct gmc_alloc_desc d;
        t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
        d.priority = prio[i];
        h[i] = t_create(c, &d);
        assert_int_equal(t_info(c, h[i]).offset, i * SZ); /* 8 x 256 KiB fill the 2 MiB */
        ok(t_resident1(c, h[i]));
        ok(t_evict1(c, h[i]));
    }
    ok(gmc_alloc_destroy(c, h[2])); /* a 256 KiB hole at 512 KiB */
    /* 512 KiB: h0 (MINIMUM) alone opens no room, h0 and h1 with the hole
     * open [0, 768 KiB); the window [256 KiB, 768 KiB) evicts h1 alone */
    struct gmc_device_stats s0 = t_stats(dev);
    gmc_handle n = t_new(c, 2 * SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, n));
    struct gmc_device_stats s1 = t_stats(dev);
    assert_true(placed_at(c, h[0], SEG_VIS));
    assert_false(placed_at(c, h[1], SEG_VIS));
    assert_int_equal(t_info(c, n).offset, SZ);
    assert_int_equal(s1.evictions - s0.evictions, 1);
    assert_int_equal(s1.bytes_paged_out - s0.bytes_paged_out, SZ); /* h1, dirty from its fill */
    for (unsigned i = 3; i < 8; i++)
        assert_true(placed_at(c, h[i], SEG_VIS));
    t_close(dev);
}

/* A loop over ten allocations where eight fit, one at a time: plain LRU
 * would page every one in on every pass; the hot set keeps seven and pages
 * only the other three. */
static void test_loop_keeps_hot_part(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    enum { N = 10, PASSES = 3 };
    const uint64_t SZ = 256 * KiB;
    gmc_handle a[N];
    for (unsigned i = 0; i < N; i++)
        a[i] = GMC_HANDLE_NONE;
    struct gmc_device_stats s0 = t_stats(dev);
    for (unsigned p = 0; p < PASSES; p++) {
        if (p == 1)
            s0 = t_stats(dev);
        for (unsigned i = 0; i < N; i++) {
            if (a[i] == GMC_HANDLE_NONE) {
                a[i] = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
                t_write_pattern(c, a[i], SZ, 40 + i);
            }
            ok(t_resident1(c, a[i]));
            ok(t_evict1(c, a[i]));
        }
        /* a0 ... a6 stay; a9 (just used) and one of a7, a8 are placed */
        for (unsigned i = 0; i < 7; i++)
            if (!placed_at(c, a[i], SEG_VIS))
                fail_msg("pass %u: a%u evicted", p, i);
        assert_true(placed_at(c, a[9], SEG_VIS));
    }
    struct gmc_device_stats s1 = t_stats(dev);
    assert_int_equal(s1.page_ins - s0.page_ins, 3 * (PASSES - 1));
    assert_int_equal(s1.bytes_paged_in - s0.bytes_paged_in, 3 * (PASSES - 1) * SZ);
    for (unsigned i = 0; i < N; i++)
        if (!t_check_pattern(c, a[i], SZ, 40 + i))
            fail_msg("a%u content changed", i);
    t_close(dev);
}

/* -------------------------------------- aperture versus MDL eviction */

static void test_evict_via_aperture(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    struct gmc_alloc_desc d;
    t_desc(&d, 1 * MiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle em = t_create(c, &d); /* offset 0 */
    d.eviction_segments = BIT(SEG_AP);
    gmc_handle ea = t_create(c, &d); /* offset 1 MiB */
    d.eviction_segments = 0;
    t_write_pattern(c, ea, MiB, 1);
    t_write_pattern(c, em, MiB, 2);
    struct gmc_device_stats s0 = t_stats(dev);

    /* both hot (placed with room); ea joined the hot set last: it goes
     * first, through the aperture */
    d.size = 1 * MiB;
    gmc_handle x = t_create(c, &d);
    ok(t_resident1(c, x));
    assert_false(t_info(c, ea).state & GMC_ALLOC_STATE_PLACED);
    assert_true(placed_at(c, em, SEG_VIS));
    struct gmc_device_stats s1 = t_stats(dev);
    assert_int_equal(s1.evictions - s0.evictions, 1);
    assert_int_equal(s1.evictions_via_aperture - s0.evictions_via_aperture, 1);
    assert_int_equal(s1.bytes_paged_out - s0.bytes_paged_out, MiB);
    /* the eviction mapping is gone: the aperture has nothing placed */
    struct gmc_segment_info si;
    ok(gmc_segment_query(dev, SEG_AP, &si));
    assert_int_equal(si.used, 0);
    assert_int_equal(si.largest_free, si.desc.size);

    /* then em, straight through its MDL */
    gmc_handle y = t_create(c, &d);
    ok(t_resident1(c, y));
    assert_false(t_info(c, em).state & GMC_ALLOC_STATE_PLACED);
    struct gmc_device_stats s2 = t_stats(dev);
    assert_int_equal(s2.evictions - s1.evictions, 1);
    assert_int_equal(s2.evictions_via_aperture, s1.evictions_via_aperture);
    assert_int_equal(s2.bytes_paged_out - s1.bytes_paged_out, MiB);

    ok(t_evict1(c, x));
    ok(t_evict1(c, y));
    assert_true(t_check_pattern(c, ea, MiB, 1));
    assert_true(t_check_pattern(c, em, MiB, 2));
    t_close(dev);
}

/* ------------------------------- PermanentSysMem and ExistingSysMem */

static _Alignas(4096) uint8_t existing[256 * 1024];

static void test_kept_system_copy(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 1 * MiB;
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PERMANENT_SYS_MEM, BIT(SEG_VIS));
    gmc_handle p = t_create(c, &d);
    t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle q = t_create(c, &d);
    struct gmc_alloc_info pi = t_info(c, p);
    assert_int_equal(pi.offset, 0);

    /* first page-in: FILL in VRAM */
    struct gmc_device_stats s0 = t_stats(dev);
    ok(t_resident1(c, p));
    t_idle(dev);
    assert_int_equal(t_stats(dev).bytes_filled - s0.bytes_filled, SZ);
    assert_true(t_vram_filled(dev, pi.gpu_address, SZ, GMC_FILL_UNINITIALISED));
    ok(t_evict1(c, p));

    /* clean: evicted by discarding */
    ok(t_resident1(c, q)); /* evicts nothing: room for both */
    t_write_pattern(c, q, SZ, 5);
    t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle r = t_create(c, &d);
    s0 = t_stats(dev);
    ok(t_resident1(c, r)); /* q is referenced: p goes */
    assert_false(t_info(c, p).state & GMC_ALLOC_STATE_PLACED);
    struct gmc_device_stats s1 = t_stats(dev);
    assert_int_equal(s1.evictions - s0.evictions, 1);
    assert_int_equal(s1.discards - s0.discards, 1);
    assert_int_equal(s1.bytes_paged_out, s0.bytes_paged_out);
    ok(t_evict1(c, q));
    ok(gmc_alloc_destroy(c, r));

    /* back in: copied from the system copy; then a GPU write makes it dirty */
    s0 = t_stats(dev);
    ok(t_resident1(c, p)); /* into r's free place */
    struct gmc_device_stats s2 = t_stats(dev);
    assert_int_equal(s2.bytes_paged_in - s0.bytes_paged_in, SZ);
    assert_int_equal(s2.bytes_paged_out, s0.bytes_paged_out);
    assert_int_equal(s2.evictions, s0.evictions);
    ok(gmc_fence_wait(dev, t_fill(c, p, 0x1000, 0x3000, 0x11223344u), 0));
    assert_true(t_info(c, p).state & GMC_ALLOC_STATE_DIRTY);
    ok(t_evict1(c, p));
    t_desc(&d, 2 * MiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle all = t_create(c, &d);
    s0 = t_stats(dev);
    ok(t_resident1(c, all)); /* evicts p and q, both dirty: copied */
    assert_false(t_info(c, p).state & GMC_ALLOC_STATE_PLACED);
    assert_false(t_info(c, q).state & GMC_ALLOC_STATE_PLACED);
    s1 = t_stats(dev);
    assert_int_equal(s1.evictions - s0.evictions, 2);
    assert_int_equal(s1.discards, s0.discards);
    assert_int_equal(s1.bytes_paged_out - s0.bytes_paged_out, 2 * SZ);
    ok(gmc_alloc_destroy(c, all));
    /* the system copy has the GPU's bytes, the rest the first fill */
    struct gmc_lock_map m;
    ok(gmc_lock(c, p, GMC_LOCK_READ_ONLY, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_SYSTEM);
    assert_non_null(m.ptr);
    const uint8_t *b = m.ptr;
    for (uint64_t i = 0; i < SZ; i++) {
        uint8_t want = (i >= 0x1000 && i < 0x4000) ? (uint8_t)(0x11223344u >> (8u * (i & 3u)))
                                                   : (uint8_t)(GMC_FILL_UNINITIALISED >> (8u * (i & 3u)));
        if (b[i] != want)
            fail_msg("byte %llu: %02x, want %02x", (unsigned long long)i, b[i], want);
    }
    ok(gmc_unlock(c, p));

    /* a write lock while resident: unlock uploads it, eviction then discards */
    ok(t_resident1(c, p));
    pi = t_info(c, p);
    ok(gmc_lock(c, p, GMC_LOCK_WRITE_ONLY, &m));
    t_pattern(m.ptr, SZ, 9);
    s0 = t_stats(dev);
    ok(gmc_unlock(c, p));
    t_idle(dev);
    s1 = t_stats(dev);
    assert_int_equal(s1.bytes_paged_in - s0.bytes_paged_in, SZ);
    assert_true(t_vram_is(dev, pi.gpu_address, SZ, 9));
    ok(t_evict1(c, p));
    t_desc(&d, 2 * MiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    all = t_create(c, &d);
    s0 = t_stats(dev);
    ok(t_resident1(c, all)); /* evicts p only (q is out): clean, discarded */
    s1 = t_stats(dev);
    assert_int_equal(s1.evictions - s0.evictions, 1);
    assert_int_equal(s1.discards - s0.discards, 1);
    assert_int_equal(s1.bytes_paged_out, s0.bytes_paged_out);
    ok(t_evict1(c, all));
    assert_true(t_check_pattern(c, p, SZ, 9));
    assert_true(t_check_pattern(c, q, SZ, 5));
    ok(gmc_alloc_destroy(c, all));

    /* ExistingSysMem: the caller's memory is the system copy */
    t_pattern(existing, sizeof existing, 77);
    t_desc(&d, sizeof existing, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_EXISTING_SYS_MEM, BIT(SEG_VIS));
    d.system_mem = existing;
    d.system_mem_size = sizeof existing;
    gmc_handle e = t_create(c, &d);
    ok(t_resident1(c, e));
    t_idle(dev);
    struct gmc_alloc_info ei = t_info(c, e);
    assert_true(ei.state & GMC_ALLOC_STATE_PLACED);
    assert_true(t_vram_is(dev, ei.gpu_address, sizeof existing, 77));
    ok(t_evict1(c, e));
    t_desc(&d, 2 * MiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    all = t_create(c, &d);
    s0 = t_stats(dev);
    /* q (paged in by its read: clean, its system copy kept) and e (clean):
     * both dropped, nothing copied */
    ok(t_resident1(c, all));
    s1 = t_stats(dev);
    assert_false(t_info(c, e).state & GMC_ALLOC_STATE_PLACED);
    assert_false(t_info(c, q).state & GMC_ALLOC_STATE_PLACED);
    assert_int_equal(s1.evictions - s0.evictions, 2);
    assert_int_equal(s1.discards - s0.discards, 2);
    assert_int_equal(s1.bytes_paged_out, s0.bytes_paged_out);
    ok(gmc_alloc_destroy(c, all));
    /* a GPU write to it lands in the caller's memory on eviction */
    ok(t_resident1(c, e));
    ok(gmc_fence_wait(dev, t_fill(c, e, 0, 0x2000, 0xA5A5A5A5u), 0));
    ok(t_evict1(c, e));
    t_desc(&d, 2 * MiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    all = t_create(c, &d);
    s0 = t_stats(dev);
    ok(t_resident1(c, all));
    t_idle(dev);
    s1 = t_stats(dev);
    assert_int_equal(s1.bytes_paged_out - s0.bytes_paged_out, sizeof existing);
    for (unsigned i = 0; i < sizeof existing; i++) {
        uint8_t want = i < 0x2000 ? 0xA5 : t_byte(77, i);
        if (existing[i] != want)
            fail_msg("existing[%u] = %02x, want %02x", i, existing[i], want);
    }
    ok(gmc_alloc_destroy(c, e));
    t_close(dev);
}

/* An ordinary allocation keeps the system copy its first eviction made: a
 * page-in leaves it current, so an eviction drops the VRAM copy unless a
 * submission or a write lock wrote it since. */
static void test_ordinary_system_copy_kept(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 1 * MiB;
    gmc_handle o = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle all = t_new(c, 2 * MiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS)); /* needs the whole segment */
    t_write_pattern(c, o, SZ, 21); /* a write lock on the BAR: only VRAM holds it */
    assert_true(t_info(c, o).state & GMC_ALLOC_STATE_DIRTY);
    enum { WRITTEN_BY_LOCK, CLEAN, WRITTEN_BY_GPU, READ_LOCK, NSTEPS };
    for (unsigned step = 0; step <= NSTEPS; step++) {
        /* evict o: `all` takes the segment */
        int dirty = step == 0 || step == WRITTEN_BY_GPU + 1 || step == WRITTEN_BY_LOCK + 1;
        struct gmc_device_stats s0 = t_stats(dev);
        ok(t_resident1(c, all));
        struct gmc_device_stats s1 = t_stats(dev);
        assert_false(placed_at(c, o, SEG_VIS));
        assert_true(t_info(c, o).state & GMC_ALLOC_STATE_IN_SYSTEM);
        assert_int_equal(s1.bytes_paged_out - s0.bytes_paged_out, dirty ? SZ : 0u);
        assert_int_equal(s1.discards - s0.discards, dirty ? 0u : 1u);
        ok(t_evict1(c, all));
        if (step == NSTEPS)
            break;
        /* back in from the system copy, which stays current */
        s0 = t_stats(dev);
        ok(t_resident1(c, o));
        s1 = t_stats(dev);
        assert_int_equal(s1.bytes_paged_in - s0.bytes_paged_in, SZ);
        assert_false(t_info(c, o).state & (GMC_ALLOC_STATE_DIRTY | GMC_ALLOC_STATE_IN_SYSTEM));
        switch (step) {
        case WRITTEN_BY_LOCK:
            t_write_pattern(c, o, SZ, 22);
            break;
        case WRITTEN_BY_GPU:
            ok(gmc_fence_wait(dev, t_fill(c, o, 0, 0x1000, 0x5A5A5A5Au), 0));
            break;
        case READ_LOCK: {
            struct gmc_lock_map rm;
            uint8_t first[16];
            ok(gmc_lock(c, o, GMC_LOCK_READ_ONLY, &rm));
            assert_int_equal(rm.kind, GMC_LOCK_MAP_BAR);
            ok(gmc_lock_read(c, o, 0, first, sizeof first));
            ok(gmc_unlock(c, o));
            for (unsigned i = 0; i < sizeof first; i++)
                assert_int_equal(first[i], 0x5A);
            break;
        }
        default:
            break;
        }
        if (step == WRITTEN_BY_LOCK || step == WRITTEN_BY_GPU)
            assert_true(t_info(c, o).state & GMC_ALLOC_STATE_DIRTY);
        else
            assert_false(t_info(c, o).state & GMC_ALLOC_STATE_DIRTY);
        ok(t_evict1(c, o));
    }
    /* the content: pattern 22, then the GPU's fill over the first 4 KiB */
    struct gmc_lock_map m;
    ok(gmc_lock(c, o, GMC_LOCK_READ_ONLY, &m));
    uint8_t *b = malloc(SZ);
    assert_non_null(b);
    ok(gmc_lock_read(c, o, 0, b, SZ));
    ok(gmc_unlock(c, o));
    for (uint64_t i = 0; i < SZ; i++) {
        uint8_t want = i < 0x1000 ? 0x5A : t_byte(22, i);
        if (b[i] != want)
            fail_msg("byte %llu: %02x, want %02x", (unsigned long long)i, b[i], want);
    }
    free(b);
    t_close(dev);
}

/* ------------------------------------------------- first page-in */

static void test_first_page_in(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 192 * KiB;
    /* dirty the VRAM where the next allocations will go */
    gmc_handle t = t_new(c, 2 * SZ, 0, BIT(SEG_VRAM));
    uint64_t base = t_info(c, t).gpu_address;
    ok(t_resident1(c, t));
    ok(gmc_fence_wait(dev, t_fill(c, t, 0, 2 * SZ, 0x55555555u), 0));
    assert_true(t_vram_filled(dev, base, 2 * SZ, 0x55555555u));
    ok(gmc_alloc_destroy(c, t));

    gmc_handle u = t_new(c, SZ, 0, BIT(SEG_VRAM));
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, 0, BIT(SEG_VRAM));
    d.kmt_flags = GMC_KMT_ZEROED;
    gmc_handle z = t_create(c, &d);
    struct gmc_alloc_info ui = t_info(c, u), zi = t_info(c, z);
    assert_int_equal(ui.gpu_address, base);
    assert_int_equal(zi.gpu_address, base + SZ);
    assert_true(zi.state & GMC_ALLOC_STATE_ZERO_PENDING);
    assert_false(ui.state & GMC_ALLOC_STATE_HAS_CONTENT);
    /* placed, not yet filled: the old bytes are still there */
    assert_true(t_vram_filled(dev, base, 2 * SZ, 0x55555555u));
    struct gmc_device_stats s0 = t_stats(dev);
    gmc_handle both[2] = { u, z };
    struct gmc_residency_result res;
    ok(gmc_make_resident(c, both, 2, &res));
    ok(gmc_fence_wait(dev, res.paging_fence, 0));
    assert_true(t_vram_filled(dev, base, SZ, GMC_FILL_UNINITIALISED));
    assert_true(t_vram_filled(dev, base + SZ, SZ, 0));
    struct gmc_device_stats s1 = t_stats(dev);
    assert_int_equal(s1.bytes_filled - s0.bytes_filled, 2 * SZ);
    assert_int_equal(s1.page_ins - s0.page_ins, 2);
    assert_int_equal(s1.bytes_paged_in, s0.bytes_paged_in);
    zi = t_info(c, z);
    assert_false(zi.state & GMC_ALLOC_STATE_ZERO_PENDING);
    assert_true(zi.state & GMC_ALLOC_STATE_HAS_CONTENT);
    t_close(dev);
}

/* ------------------------------------------------- NOTIFY_RESIDENCY */

struct note_log {
    gmc_client *c;
    gmc_handle h[8];
    int resident[8];
    int placed[8]; /* the allocation's PLACED state when the callback ran */
    unsigned n;
};

static void on_note(void *user, gmc_handle h, int resident)
{
    struct note_log *l = user;
    if (l->n < 8u) {
        struct gmc_alloc_info ai;
        l->placed[l->n] = gmc_alloc_query(l->c, h, &ai) == GMC_OK && (ai.state & GMC_ALLOC_STATE_PLACED);
        l->h[l->n] = h;
        l->resident[l->n] = resident;
    }
    l->n++;
}

static void test_notify_residency(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    struct note_log log = { .c = c };
    ok(gmc_client_set_residency_callback(c, on_note, &log));
    assert_status(gmc_client_set_residency_callback(NULL, on_note, &log), GMC_E_NULL_POINTER);
    struct gmc_alloc_desc d;
    t_desc(&d, 1 * MiB, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_EXPLICIT_RESIDENCY_NOTIFICATION, BIT(SEG_VIS));
    assert_status(gmc_alloc_create(c, &d, &(gmc_handle){ 0 }), GMC_E_RULE_EXPLICITRESIDENCY_NEEDS_PHYSICAL);
    d.flags |= GMC_ALLOC_ACCESSED_PHYSICALLY;
    gmc_handle plain = t_new(c, 1 * MiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle h = t_create(c, &d);
    assert_int_equal(log.n, 0); /* placed at creation, not committed */

    struct gmc_residency_result res;
    ok(gmc_make_resident(c, &h, 1, &res));
    ok(gmc_fence_wait(dev, res.paging_fence, 0));
    assert_int_equal(log.n, 1);
    assert_int_equal(log.h[0], h);
    assert_int_equal(log.resident[0], 1);
    assert_true(log.placed[0]);
    /* already resident: no second notification */
    ok(gmc_make_resident(c, &h, 1, &res));
    ok(t_resident1(c, plain));
    t_idle(dev);
    assert_int_equal(log.n, 1);
    ok(t_evict1(c, h));
    ok(t_evict1(c, h));
    ok(t_evict1(c, plain));
    t_idle(dev);
    assert_int_equal(log.n, 1); /* Evict drops the reference; nothing moves */

    /* pressure: both hot (placed with room), h joined the hot set last, so
     * it goes; notified before it leaves */
    gmc_handle x = t_new(c, 1 * MiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, x));
    t_idle(dev);
    assert_false(t_info(c, h).state & GMC_ALLOC_STATE_PLACED);
    assert_int_equal(log.n, 2);
    assert_int_equal(log.h[1], h);
    assert_int_equal(log.resident[1], 0);
    assert_true(log.placed[1]); /* before the eviction */
    ok(t_evict1(c, x));

    /* back in: notified again, once */
    ok(gmc_make_resident(c, &h, 1, &res));
    ok(gmc_fence_wait(dev, res.paging_fence, 0));
    t_idle(dev);
    assert_int_equal(log.n, 3);
    assert_int_equal(log.resident[2], 1);
    assert_int_equal(log.h[2], h);
    ok(gmc_client_set_residency_callback(c, NULL, NULL));
    t_close(dev);
}

/* ------------------------------------------------ SynchronousPaging */

static void test_synchronous_paging(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 1 * MiB;
    gmc_handle src = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    t_write_pattern(c, src, SZ, 3);
    ok(t_resident1(c, src));

    /* without SynchronousPaging the submission does not wait */
    gmc_handle a = t_new(c, SZ, 0, BIT(SEG_VRAM));
    struct gmc_residency_result res;
    ok(gmc_make_resident(c, &a, 1, &res));
    struct gmc_device_stats s0 = t_stats(dev);
    uint64_t f = t_copy(c, src, 0, a, 0, 4096);
    assert_int_equal(t_stats(dev).sync_waits, s0.sync_waits);
    assert_true(gmc_fence_completed(dev) < res.paging_fence); /* a 1 MiB fill still running */
    assert_true(f > res.paging_fence);
    ok(gmc_fence_wait(dev, f, 0));

    /* with it: the submission waits for the paging first */
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, GMC_ALLOC_SYNCHRONOUS_PAGING, BIT(SEG_VRAM));
    gmc_handle s = t_create(c, &d);
    ok(gmc_make_resident(c, &s, 1, &res));
    assert_true(gmc_fence_completed(dev) < res.paging_fence);
    s0 = t_stats(dev);
    f = t_copy(c, src, 0, s, 0, SZ);
    struct gmc_device_stats s1 = t_stats(dev);
    assert_int_equal(s1.sync_waits - s0.sync_waits, 1);
    assert_true(gmc_fence_completed(dev) >= res.paging_fence);
    assert_true(f > res.paging_fence);
    /* and its paging waits for it to go idle: eviction after the copy */
    ok(t_evict1(c, s));
    ok(t_evict1(c, a));
    struct gmc_alloc_info si = t_info(c, s);
    assert_true(gmc_fence_completed(dev) < f);
    t_desc(&d, 6080 * KiB - SZ, 0, BIT(SEG_VRAM));
    gmc_handle big = t_create(c, &d);
    ok(t_resident1(c, big)); /* evicts a then s */
    assert_false(t_info(c, s).state & GMC_ALLOC_STATE_PLACED);
    assert_true(gmc_fence_completed(dev) >= f); /* waited for the copy before paging s */
    ok(t_evict1(c, big));
    ok(gmc_alloc_destroy(c, big));
    (void)si;
    assert_true(t_stats(dev).sync_waits >= s1.sync_waits);
    ok(t_evict1(c, src));
    ok(t_resident1(c, s));
    gmc_handle vis = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, vis));
    ok(gmc_fence_wait(dev, t_copy(c, s, 0, vis, 0, SZ), 0));
    assert_true(t_check_pattern(c, vis, SZ, 3));
    t_close(dev);
}

/* ------------------------------------------- submissions, byte by byte */

static void test_submit_ops(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 64 * KiB;
    gmc_handle src = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle vis = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, 0, BIT(SEG_VRAM));
    d.kmt_flags = GMC_KMT_ZEROED;
    gmc_handle dst = t_create(c, &d);
    gmc_handle ap = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_AP));
    t_write_pattern(c, src, SZ, 11);
    t_write_pattern(c, ap, SZ, 12);
    gmc_handle all[4] = { src, vis, dst, ap };
    ok(gmc_make_resident(c, all, 4, NULL));
    struct gmc_alloc_info di = t_info(c, dst);

    /* one submission: odd copy, odd fill, aperture -> VRAM, VRAM -> visible */
    struct gmc_submit_ref refs[4] = { { src, 0 }, { dst, GMC_REF_WRITE }, { ap, 0 }, { vis, GMC_REF_WRITE } };
    struct gmc_gpu_op ops[4] = {
        { GMC_GPU_COPY, 0, 1, 0x123, 0x457, 0x2345, 0 },
        { GMC_GPU_FILL, 0, 1, 0, 0x3001, 1001, 0xA1B2C3D4u },
        { GMC_GPU_COPY, 2, 1, 0x8000, 0x9003, 0x1FFD, 0 },
        { GMC_GPU_COPY, 1, 3, 0, 0, SZ, 0 },
    };
    struct gmc_submit s = { refs, 4, ops, 4 };
    uint64_t f = 0;
    struct gmc_device_stats s0 = t_stats(dev);
    ok(gmc_submit(c, &s, &f));
    assert_int_equal(t_stats(dev).submits - s0.submits, 1);
    ok(gmc_fence_wait(dev, f, 0));
    assert_true(gmc_fence_completed(dev) >= f);
    uint8_t *want = calloc(1, SZ), *got = malloc(SZ);
    assert_non_null(want);
    assert_non_null(got);
    for (uint64_t i = 0; i < 0x2345; i++)
        want[0x457 + i] = t_byte(11, 0x123 + i);
    for (uint64_t i = 0; i < 1001; i++) {
        uint64_t a = di.gpu_address + 0x3001 + i;
        want[0x3001 + i] = (uint8_t)(0xA1B2C3D4u >> (8u * (a & 3u)));
    }
    for (uint64_t i = 0; i < 0x1FFD; i++)
        want[0x9003 + i] = t_byte(12, 0x8000 + i);
    assert_int_equal(gmc_sim_vram_peek(gmc_device_sim(dev), di.gpu_address, got, SZ), 0);
    assert_memory_equal(got, want, SZ);
    ok(gmc_alloc_read(c, vis, 0, got, SZ));
    assert_memory_equal(got, want, SZ);
    struct gmc_alloc_info ai = t_info(c, dst);
    assert_int_equal(ai.last_use, f);
    assert_true(ai.state & GMC_ALLOC_STATE_HAS_CONTENT);
    /* an empty submission gets a fence too */
    struct gmc_submit empty = { NULL, 0, NULL, 0 };
    uint64_t f2 = 0;
    ok(gmc_submit(c, &empty, &f2));
    ok(gmc_fence_wait(dev, f2, 0));
    free(want);
    free(got);
    t_close(dev);
}

/* ---------------------------------------------- submission refusals */

static void test_submit_refusals(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev), *other = t_client(dev);
    gmc_handle a = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle b = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle nr = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    struct gmc_alloc_desc d;
    t_desc(&d, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    d.kmt_flags = GMC_KMT_READ_ONLY;
    gmc_handle ro = t_create(c, &d);
    gmc_handle aponly = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_AP));
    gmc_handle theirs = t_new(other, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle res[4] = { a, b, ro, aponly };
    ok(gmc_make_resident(c, res, 4, NULL));
    ok(t_resident1(other, theirs));
    t_idle(dev);

    struct case_ {
        struct gmc_submit_ref refs[2];
        unsigned nrefs;
        struct gmc_gpu_op op;
        int want;
    } cases[] = {
        { { { 0xDEAD, 0 }, { b, GMC_REF_WRITE } }, 2, { GMC_GPU_COPY, 0, 1, 0, 0, 16, 0 }, GMC_E_BAD_HANDLE },
        { { { theirs, 0 }, { b, GMC_REF_WRITE } }, 2, { GMC_GPU_COPY, 0, 1, 0, 0, 16, 0 }, GMC_E_BAD_HANDLE },
        { { { a, 2u }, { b, GMC_REF_WRITE } }, 2, { GMC_GPU_COPY, 0, 1, 0, 0, 16, 0 }, GMC_E_INVALID_ARG },
        { { { a, 0 }, { b, GMC_REF_WRITE } }, 2, { 7, 0, 1, 0, 0, 16, 0 }, GMC_E_INVALID_ARG },
        { { { a, 0 }, { b, GMC_REF_WRITE } }, 2, { GMC_GPU_COPY, 0, 2, 0, 0, 16, 0 }, GMC_E_INVALID_ARG },
        { { { a, 0 }, { b, GMC_REF_WRITE } }, 2, { GMC_GPU_COPY, 5, 1, 0, 0, 16, 0 }, GMC_E_INVALID_ARG },
        { { { a, 0 }, { b, GMC_REF_WRITE } }, 2, { GMC_GPU_COPY, 0, 1, 0, 0, 0, 0 }, GMC_E_INVALID_ARG },
        { { { a, 0 }, { b, 0 } }, 2, { GMC_GPU_COPY, 0, 1, 0, 0, 16, 0 }, GMC_E_PERMISSION },
        { { { a, 0 }, { b, GMC_REF_WRITE } }, 2, { GMC_GPU_COPY, 0, 1, 0, 64 * KiB - 15, 16, 0 }, GMC_E_OUT_OF_BOUNDS },
        { { { a, 0 }, { b, GMC_REF_WRITE } }, 2, { GMC_GPU_COPY, 0, 1, 64 * KiB, 0, 1, 0 }, GMC_E_OUT_OF_BOUNDS },
        { { { a, 0 }, { b, GMC_REF_WRITE } }, 2, { GMC_GPU_COPY, 0, 1, 0, UINT64_MAX, 16, 0 }, GMC_E_OUT_OF_BOUNDS },
        { { { a, 0 }, { b, GMC_REF_WRITE } }, 2, { GMC_GPU_FILL, 1, 1, 0, 0, 16, 0 }, GMC_E_INVALID_ARG },
        { { { a, 0 }, { b, GMC_REF_WRITE } }, 2, { GMC_GPU_FILL, 0, 1, 4, 0, 16, 0 }, GMC_E_INVALID_ARG },
        { { { nr, 0 }, { b, GMC_REF_WRITE } }, 2, { GMC_GPU_COPY, 0, 1, 0, 0, 16, 0 }, GMC_E_NOT_RESIDENT },
        { { { a, 0 }, { nr, GMC_REF_WRITE } }, 2, { GMC_GPU_FILL, 0, 1, 0, 0, 16, 0 }, GMC_E_NOT_RESIDENT },
        { { { a, 0 }, { ro, GMC_REF_WRITE } }, 2, { GMC_GPU_COPY, 0, 1, 0, 0, 16, 0 }, GMC_E_READ_ONLY },
        { { { a, 0 }, { aponly, GMC_REF_WRITE } }, 2, { GMC_GPU_FILL, 0, 1, 0, 0, 16, 0 }, GMC_E_UNSUPPORTED },
    };
    struct gmc_device_stats s0 = t_stats(dev);
    uint64_t issued = gmc_paging_last_issued(dev->pg);
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct gmc_submit s = { cases[i].refs, cases[i].nrefs, &cases[i].op, 1 };
        uint64_t f = 77;
        int rc = gmc_submit(c, &s, &f);
        if (rc != cases[i].want)
            fail_msg("case %u: expected %s, got %s", i, gmc_status_name(cases[i].want), gmc_status_name(rc));
        assert_int_equal(f, 0);
    }
    uint64_t f = 77;
    struct gmc_gpu_op op = { GMC_GPU_FILL, 0, 0, 0, 0, 16, 0 };
    struct gmc_submit_ref ref = { b, GMC_REF_WRITE };
    assert_status(gmc_submit(NULL, &(struct gmc_submit){ &ref, 1, &op, 1 }, &f), GMC_E_NULL_POINTER);
    assert_int_equal(f, 0);
    assert_status(gmc_submit(c, NULL, &f), GMC_E_NULL_POINTER);
    assert_status(gmc_submit(c, &(struct gmc_submit){ NULL, 1, &op, 1 }, &f), GMC_E_NULL_POINTER);
    assert_status(gmc_submit(c, &(struct gmc_submit){ &ref, 1, NULL, 1 }, &f), GMC_E_NULL_POINTER);
    /* nothing was queued or counted */
    struct gmc_device_stats s1 = t_stats(dev);
    assert_int_equal(s1.submits, s0.submits);
    assert_int_equal(s1.fences_issued, s0.fences_issued);
    assert_int_equal(s1.paging_ops, s0.paging_ops);
    assert_int_equal(gmc_paging_last_issued(dev->pg), issued);
    /* the NULL fence pointer is allowed */
    ok(gmc_submit(c, &(struct gmc_submit){ &ref, 1, &op, 1 }, NULL));

    /* fence waits */
    assert_status(gmc_fence_wait(NULL, 1, 0), GMC_E_NULL_POINTER);
    uint64_t last = gmc_paging_last_issued(dev->pg);
    assert_status(gmc_fence_wait(dev, last + 1u, 0), GMC_E_INVALID_ARG);
    ok(gmc_fence_wait(dev, 0, 0));
    ok(gmc_fence_wait(dev, last, 0));
    assert_int_equal(gmc_fence_completed(dev), last);
    assert_int_equal(gmc_fence_completed(NULL), 0);
    t_close(dev);
}

/* An allocation that fits the free bytes of a segment but not its
 * alignment, with nothing evictable there: NO_SPACE, nothing evicted (the
 * victim list is empty: it used to reach qsort(NULL, 0, ...), which UBSan
 * aborts on). */
static void test_alignment_nothing_evictable(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    /* a HardwareProtected allocation (never a victim) at offset 0 of the segment */
    gmc_handle pr = t_new(c, 64 * KiB, GMC_ALLOC_HARDWARE_PROTECTED, BIT(SEG_VIS));
    ok(t_resident1(c, pr));
    struct gmc_alloc_info pi = t_info(c, pr);
    assert_int_equal(pi.segment, SEG_VIS);
    assert_int_equal(pi.offset, 0);
    /* 64 KiB aligned to 2 MiB: only offset 0 of the 2 MiB segment qualifies */
    struct gmc_alloc_desc d;
    t_desc(&d, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    d.alignment = 2 * MiB;
    gmc_handle big = t_create(c, &d);
    struct gmc_residency_result res;
    assert_status(gmc_make_resident(c, &big, 1, &res), GMC_E_NO_SPACE);
    assert_int_equal(t_info(c, pr).offset, 0);
    assert_false(t_info(c, big).state & GMC_ALLOC_STATE_PLACED);
    assert_int_equal(t_stats(dev).evictions, 0);
    t_close(dev);
}

/* A GPU copy inside one allocation: the ranges may touch but not share a
 * byte (GMC_E_OVERLAP, docs/dma.md); an adjacent copy moves the bytes. */
static void test_self_copy(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    gmc_handle a = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, a));
    static uint8_t pat[32 * KiB], back[32 * KiB];
    for (unsigned i = 0; i < sizeof pat; i++)
        pat[i] = (uint8_t)(i * 7u + (i >> 8));
    ok(gmc_alloc_write(c, a, 0, pat, sizeof pat));
    struct gmc_submit_ref ref = { a, GMC_REF_WRITE };
    static const struct {
        uint64_t src, dst, size;
        int want;
    } cases[] = {
        { 0, 4 * KiB, 32 * KiB, GMC_E_OVERLAP },     /* the case: forward overlap */
        { 4 * KiB, 0, 32 * KiB, GMC_E_OVERLAP },     /* backward overlap */
        { 0, 0, 1, GMC_E_OVERLAP },                  /* onto itself */
        { 100, 131, 32, GMC_E_OVERLAP },             /* one shared byte (131) */
        { 131, 100, 32, GMC_E_OVERLAP },
    };
    struct gmc_device_stats s0 = t_stats(dev);
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct gmc_gpu_op op = { GMC_GPU_COPY, 0, 0, cases[i].src, cases[i].dst, cases[i].size, 0 };
        uint64_t f = 77;
        int rc = gmc_submit(c, &(struct gmc_submit){ &ref, 1, &op, 1 }, &f);
        if (rc != cases[i].want)
            fail_msg("case %u: expected %s, got %s", i, gmc_status_name(cases[i].want), gmc_status_name(rc));
        assert_int_equal(f, 0);
    }
    assert_int_equal(t_stats(dev).submits, s0.submits);
    /* adjacent: [0, 32K) -> [32K, 64K) */
    struct gmc_gpu_op op = { GMC_GPU_COPY, 0, 0, 0, 32 * KiB, 32 * KiB, 0 };
    uint64_t f = 0;
    ok(gmc_submit(c, &(struct gmc_submit){ &ref, 1, &op, 1 }, &f));
    ok(gmc_fence_wait(dev, f, 0));
    ok(gmc_alloc_read(c, a, 32 * KiB, back, sizeof back));
    assert_memory_equal(back, pat, sizeof pat);
    t_close(dev);
}

/* Protected (seed 000): the backing store is kernel memory, not pinned
 * VRAM. A Protected allocation is evicted like any other, its content
 * copied to the library's system copy and back; that copy is never mapped
 * into a client (locks and one-shot CPU access refused while it is out).
 * HardwareProtected content never leaves VRAM: never a victim. */
static void test_protected_eviction(void **state)
{
    (void)state;
    gmc_device *dev = t_open("sim:segs=3,seg1=0/0x80000/0x84,seg2=0x80000/0x100000/0x80,"
                             "seg3=0x80000000/0x1000000/0x191");
    gmc_client *c = t_client(dev);
    const uint64_t Q = 256 * KiB;
    /* placed in creation order from the bottom: hp, n, p, then 256 KiB free */
    gmc_handle hp = t_new(c, Q, GMC_ALLOC_HARDWARE_PROTECTED, BIT(SEG_VRAM));
    gmc_handle n = t_new(c, Q, 0, BIT(SEG_VRAM));
    gmc_handle p = t_new(c, Q, GMC_ALLOC_PROTECTED | GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VRAM));
    gmc_handle scratch = t_new(c, Q, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    assert_int_equal(t_info(c, p).gpu_address, 0x80000 + 2 * Q);
    gmc_handle all[3] = { hp, n, p };
    ok(gmc_make_resident(c, all, 3, NULL));
    ok(gmc_fence_wait(dev, t_fill(c, p, 0, Q, 0x5AA5C33Cu), 0));
    ok(gmc_evict(c, all, 3));
    t_idle(dev);
    struct gmc_device_stats s0 = t_stats(dev);

    /* 512 KiB: p's range and the free 256 KiB above it; p is the victim */
    gmc_handle big = t_new(c, 2 * Q, 0, BIT(SEG_VRAM));
    struct gmc_residency_result res;
    ok(gmc_make_resident(c, &big, 1, &res));
    t_idle(dev);
    struct gmc_device_stats s1 = t_stats(dev);
    assert_false(t_info(c, p).state & GMC_ALLOC_STATE_PLACED);
    assert_true(t_info(c, p).state & GMC_ALLOC_STATE_IN_SYSTEM);
    assert_true(t_info(c, hp).state & GMC_ALLOC_STATE_PLACED);
    assert_true(t_info(c, n).state & GMC_ALLOC_STATE_PLACED);
    assert_int_equal(s1.evictions - s0.evictions, 1);
    assert_int_equal(s1.bytes_paged_out - s0.bytes_paged_out, Q);
    /* the kernel-memory copy is never handed to the client */
    uint8_t b[16];
    assert_status(gmc_alloc_can_lock(c, p, GMC_LOCK_READ_ONLY), GMC_E_PROTECTED);
    assert_status(gmc_alloc_read(c, p, 0, b, sizeof b), GMC_E_PROTECTED);
    struct gmc_lock_map m;
    assert_status(gmc_lock(c, p, GMC_LOCK_READ_ONLY, &m), GMC_E_PROTECTED);
    assert_null(m.ptr);

    /* back in: big (cold: it was placed by evicting) goes before n (hot);
     * the GPU sees the content it wrote */
    ok(gmc_evict(c, &big, 1));
    ok(gmc_make_resident(c, &p, 1, NULL));
    t_idle(dev);
    struct gmc_device_stats s2 = t_stats(dev);
    assert_true(t_info(c, p).state & GMC_ALLOC_STATE_PLACED);
    assert_true(t_info(c, n).state & GMC_ALLOC_STATE_PLACED);
    assert_false(t_info(c, big).state & GMC_ALLOC_STATE_PLACED);
    assert_int_equal(s2.bytes_paged_in - s1.bytes_paged_in, Q);
    ok(gmc_make_resident(c, &scratch, 1, NULL));
    ok(gmc_fence_wait(dev, t_copy(c, p, 0, scratch, 0, Q), 0));
    uint32_t *w = malloc(Q);
    assert_non_null(w);
    ok(gmc_alloc_read(c, scratch, 0, w, Q));
    for (uint64_t i = 0; i < Q / 4u; i++)
        if (w[i] != 0x5AA5C33Cu)
            fail_msg("word %llu: 0x%08x", (unsigned long long)i, w[i]);
    free(w);

    /* n and p referenced, hp never a victim: 512 KiB finds only the free
     * 256 KiB */
    ok(gmc_make_resident(c, &n, 1, NULL));
    gmc_handle more = t_new(c, 2 * Q, 0, BIT(SEG_VRAM));
    uint64_t ev = t_stats(dev).evictions;
    assert_status(gmc_make_resident(c, &more, 1, &res), GMC_E_NO_SPACE);
    assert_int_equal(res.bytes_needed, Q);
    assert_true(t_info(c, hp).state & GMC_ALLOC_STATE_PLACED);
    assert_int_equal(t_stats(dev).evictions, ev);
    t_close(dev);
}

/* The seed's 80 % limit is advice (-1020 retired): an allocation whose
 * eviction mapping would not fit in 80 % of its eviction aperture is
 * created, and evicted straight through its system copy's MDL, its content
 * kept; a smaller one goes through the aperture. */
static void test_eviction_past_80_percent(void **state)
{
    (void)state;
    /* a 1 MiB aperture: 80 % is 0xCC000 bytes */
    gmc_device *dev = t_open("sim:segs=3,seg1=0/0x80000/0x84,seg2=0x80000/0x100000/0x80,"
                             "seg3=0x80000000/0x100000/0x191");
    gmc_client *c = t_client(dev);
    const uint64_t BIG = 0xE0000, SMALL = 0x20000;
    struct gmc_alloc_desc d;
    t_desc(&d, BIG, 0, BIT(SEG_VRAM));
    d.eviction_segments = BIT(SEG_AP);
    gmc_handle big = t_create(c, &d);
    t_desc(&d, SMALL, 0, BIT(SEG_VRAM));
    d.eviction_segments = BIT(SEG_AP);
    gmc_handle small = t_create(c, &d);
    const uint64_t PIECE = 0x40000;
    gmc_handle scratch = t_new(c, PIECE, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle two[2] = { big, small };
    ok(gmc_make_resident(c, two, 2, NULL));
    ok(gmc_fence_wait(dev, t_fill(c, big, 0, BIG, 0x0BADF00Du), 0));
    ok(gmc_fence_wait(dev, t_fill(c, small, 0, SMALL, 0x5EED5EEDu), 0));
    ok(gmc_evict(c, two, 2));
    t_idle(dev);
    struct gmc_device_stats s0 = t_stats(dev);
    /* the whole segment: both are evicted, small through the aperture */
    gmc_handle all = t_new(c, 0x100000, 0, BIT(SEG_VRAM));
    ok(gmc_make_resident(c, &all, 1, NULL));
    t_idle(dev);
    struct gmc_device_stats s1 = t_stats(dev);
    assert_int_equal(s1.evictions - s0.evictions, 2);
    assert_int_equal(s1.evictions_via_aperture - s0.evictions_via_aperture, 1);
    assert_int_equal(s1.bytes_paged_out - s0.bytes_paged_out, BIG + SMALL);
    assert_false(t_info(c, big).state & GMC_ALLOC_STATE_PLACED);
    /* back in; the GPU copies what it wrote */
    ok(gmc_evict(c, &all, 1));
    ok(gmc_make_resident(c, &big, 1, NULL));
    ok(gmc_make_resident(c, &scratch, 1, NULL));
    uint32_t *w = malloc(PIECE);
    assert_non_null(w);
    for (uint64_t at = 0; at < BIG; at += PIECE) {
        uint64_t n = BIG - at < PIECE ? BIG - at : PIECE;
        ok(gmc_fence_wait(dev, t_copy(c, big, at, scratch, 0, n), 0));
        ok(gmc_alloc_read(c, scratch, 0, w, n));
        for (uint64_t i = 0; i < n / 4u; i++)
            if (w[i] != 0x0BADF00Du)
                fail_msg("byte 0x%llx: 0x%08x", (unsigned long long)(at + 4u * i), w[i]);
    }
    free(w);
    t_close(dev);
}

/* The controller's own counters agree with the library's accounting:
 * over paging alone, VRAM bytes the DMA engine wrote are the bytes paged in
 * plus the first-page-in fills, VRAM bytes it read are the bytes paged out,
 * system and aperture bytes it read are the bytes paged in; CPU access
 * through BAR1 is counted to the byte. */
static void test_hw_counters(void **state)
{
    (void)state;
    gmc_device *dev = t_open("sim:segs=3,seg1=0/0x80000/0x84,seg2=0x80000/0x100000/0x80,"
                             "seg3=0x80000000/0x1000000/0x191");
    gmc_client *c = t_client(dev);
    const uint64_t Q = 256 * KiB;
    struct gmc_hw_counters h0, h1, h2;
    assert_status(gmc_device_hw_counters(NULL, &h0), GMC_E_NULL_POINTER);
    assert_int_equal(t_stats(dev).hw.valid, 0);
    struct gmc_alloc_desc d;
    t_desc(&d, Q, 0, BIT(SEG_VRAM));
    d.eviction_segments = BIT(SEG_AP); /* evicted through the aperture */
    gmc_handle a = t_create(c, &d);
    d.eviction_segments = 0; /* straight through the MDL */
    gmc_handle b = t_create(c, &d);
    gmc_handle vis = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(gmc_make_resident(c, &vis, 1, NULL));
    t_idle(dev);
    ok(gmc_device_hw_counters(dev, &h0));
    struct gmc_device_stats s0 = t_stats(dev);
    assert_int_equal(s0.hw.valid, 1);
    assert_memory_equal(&s0.hw, &h0, sizeof h0);

    /* paging only: fills, evictions (one through the aperture, one
     * through the MDL), page-ins */
    gmc_handle ab[2] = { a, b };
    ok(gmc_make_resident(c, ab, 2, NULL));
    ok(gmc_evict(c, ab, 2));
    gmc_handle big = t_new(c, 0x100000, 0, BIT(SEG_VRAM));
    ok(gmc_make_resident(c, &big, 1, NULL));
    ok(gmc_evict(c, &big, 1));
    ok(gmc_make_resident(c, ab, 2, NULL));
    t_idle(dev);
    ok(gmc_device_hw_counters(dev, &h1));
    struct gmc_device_stats s1 = t_stats(dev);
    uint64_t in = s1.bytes_paged_in - s0.bytes_paged_in, out = s1.bytes_paged_out - s0.bytes_paged_out;
    uint64_t filled = s1.bytes_filled - s0.bytes_filled;
    /* a, b filled and paged out; big filled, then paged out (its fill is
     * content only VRAM holds) when a and b come back */
    assert_int_equal(filled, 2 * Q + 0x100000);
    assert_int_equal(out, 2 * Q + 0x100000);
    assert_int_equal(in, 2 * Q);
    assert_int_equal(s1.evictions_via_aperture - s0.evictions_via_aperture, 1);
    assert_int_equal(h1.dma_wr_vram - h0.dma_wr_vram, in + filled);
    assert_int_equal(h1.dma_rd_vram - h0.dma_rd_vram, out);
    assert_int_equal((h1.dma_rd_sys - h0.dma_rd_sys) + (h1.dma_rd_aperture - h0.dma_rd_aperture), in);
    assert_int_equal(h1.dma_wr_aperture - h0.dma_wr_aperture, Q); /* a's copy-out */
    assert_int_equal(h1.dma_faults, 0);
    assert_true(h1.tlb_hits + h1.tlb_misses > h0.tlb_hits + h0.tlb_misses);
    assert_true(h1.dma_packets > h0.dma_packets);
    assert_int_equal(h1.aperture_rd_bytes, h0.aperture_rd_bytes);
    assert_int_equal(h1.aperture_wr_bytes, h0.aperture_wr_bytes);

    /* CPU access through BAR1, to the byte */
    uint8_t buf[4096];
    t_pattern(buf, sizeof buf, 5);
    ok(gmc_alloc_write(c, vis, 8192, buf, sizeof buf));
    ok(gmc_alloc_read(c, vis, 8192, buf, sizeof buf));
    ok(gmc_device_hw_counters(dev, NULL));
    h2 = t_stats(dev).hw;
    assert_int_equal(h2.aperture_wr_bytes - h1.aperture_wr_bytes, sizeof buf);
    assert_int_equal(h2.aperture_rd_bytes - h1.aperture_rd_bytes, sizeof buf);
    assert_int_equal(h2.dma_wr_vram, h1.dma_wr_vram);

    /* not readable while powered down; the kept copy stays */
    struct gmc_power_report pr;
    ok(gmc_device_power(dev, GMC_POWER_STANDBY, &pr));
    assert_status(gmc_device_hw_counters(dev, &h0), GMC_E_POWER_STATE);
    assert_int_equal(h0.valid, 0);
    struct gmc_device_stats s2 = t_stats(dev);
    assert_memory_equal(&s2.hw, &h2, sizeof h2);
    ok(gmc_device_resume(dev, &pr));
    t_close(dev);
}

/* Protected VRAM ranges: while a HardwareProtected or Protected
 * allocation is resident in a memory segment, one of the controller's four
 * protected ranges covers it: the CPU aperture refuses its bytes (SLVERR,
 * GMC_E_BUS through the library's backend), a GPU copy of it to memory in
 * system memory faults, a copy to VRAM does not. Released with the
 * allocation; a fifth resident one is refused with GMC_E_PROTECT_RANGES. */
static void test_protected_ranges(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_sim *sim = gmc_device_sim(dev);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 16 * PG;
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, GMC_ALLOC_HARDWARE_PROTECTED, BIT(SEG_VIS));
    d.eviction_segments = 0;
    gmc_handle hp = t_create(c, &d);
    gmc_handle plain = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle vram = t_new(c, SZ, 0, BIT(SEG_VRAM));
    gmc_handle sys = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_AP));
    t_write_pattern(c, sys, SZ, 7);
    uint64_t at = t_info(c, hp).gpu_address; /* seg1: BAR1 offset = VRAM address */
    uint8_t b[64];
    assert_int_equal(gmc_sim_aperture_read(sim, at, b, sizeof b), GMC_SIM_OK); /* not yet resident */
    gmc_handle all[4] = { hp, plain, vram, sys };
    ok(gmc_make_resident(c, all, 4, NULL));
    ok(gmc_fence_wait(dev, t_fill(c, hp, 0, SZ, 0xC0DEC0DEu), 0)); /* writes in are allowed */
    assert_true(t_vram_filled(dev, at, SZ, 0xC0DEC0DEu));
    assert_int_equal(gmc_sim_aperture_read(sim, at, b, sizeof b), GMC_SIM_ESLVERR);
    assert_int_equal(gmc_sim_aperture_read(sim, at + SZ - 8, b, 8), GMC_SIM_ESLVERR);
    assert_int_equal(gmc_sim_aperture_write(sim, at, b, 8), GMC_SIM_ESLVERR);
    const struct gmc_segment_desc *g = &dev->seg[SEG_VIS - 1].desc;
    assert_status(dev->kmd.ddi->cpu_read(&dev->kmd, g, at - g->base, b, sizeof b), GMC_E_BUS);
    /* the neighbour is not covered */
    uint64_t pat = t_info(c, plain).gpu_address;
    assert_int_equal(gmc_sim_aperture_read(sim, pat, b, sizeof b), GMC_SIM_OK);
    assert_true(t_vram_filled(dev, at, SZ, 0xC0DEC0DEu)); /* the refused write moved nothing */

    /* VRAM to VRAM: allowed */
    ok(gmc_fence_wait(dev, t_copy(c, hp, 0, vram, 0, SZ), 0));
    assert_true(t_vram_filled(dev, t_info(c, vram).gpu_address, SZ, 0xC0DEC0DEu));
    /* to system memory (an aperture placement): the engine faults */
    struct gmc_hw_counters h0, h1;
    ok(gmc_device_hw_counters(dev, &h0));
    uint64_t faults = t_stats(dev).faults;
    struct gmc_submit_ref refs[2] = { { hp, 0 }, { sys, GMC_REF_WRITE } };
    struct gmc_gpu_op op = { .kind = GMC_GPU_COPY, .dst = 1, .src = 0, .size = SZ };
    struct gmc_submit sub = { .refs = refs, .nrefs = 2, .ops = &op, .nops = 1 };
    uint64_t fence = 0;
    ok(gmc_submit(c, &sub, &fence));
    int rc = gmc_fence_wait(dev, fence, 0);
    if (rc != GMC_E_DEVICE_RESET && rc != GMC_E_FAULT)
        fail_msg("copy of protected VRAM to system memory: %s", gmc_status_name(rc));
    ok(gmc_device_hw_counters(dev, &h1));
    assert_int_equal(h1.dma_faults - h0.dma_faults, 1);
    assert_int_equal(t_stats(dev).faults - faults, 1);
    /* the copy never completed: its destination is reported lost and
     * starts over with the fill pattern, nothing of the protected content */
    assert_true(t_info(c, sys).state & GMC_ALLOC_STATE_LOST);
    uint8_t *back = malloc(SZ);
    assert_non_null(back);
    ok(gmc_alloc_read(c, sys, 0, back, SZ));
    for (uint64_t i = 0; i < SZ; i++)
        if (back[i] != (uint8_t)(GMC_FILL_UNINITIALISED >> (8u * (i & 3u))))
            fail_msg("byte 0x%llx: 0x%02x", (unsigned long long)i, back[i]);
    free(back);
    /* the ranges were programmed again after the controller reset */
    assert_int_equal(gmc_sim_aperture_read(sim, at, b, sizeof b), GMC_SIM_ESLVERR);

    /* released with the allocation */
    ok(gmc_alloc_destroy(c, hp));
    assert_int_equal(gmc_sim_aperture_read(sim, at, b, sizeof b), GMC_SIM_OK);

    /* four ranges: four resident protected allocations, not five */
    gmc_handle p[5];
    for (unsigned i = 0; i < 5; i++) {
        t_desc(&d, SZ, i % 2 ? GMC_ALLOC_PROTECTED : GMC_ALLOC_HARDWARE_PROTECTED, BIT(SEG_VRAM));
        d.eviction_segments = 0;
        p[i] = t_create(c, &d);
    }
    ok(gmc_make_resident(c, p, 4, NULL));
    t_idle(dev);
    struct gmc_residency_result res;
    assert_status(gmc_make_resident(c, &p[4], 1, &res), GMC_E_PROTECT_RANGES);
    ok(gmc_evict(c, &p[1], 1)); /* unreferenced, still resident: still covered */
    assert_status(gmc_make_resident(c, &p[4], 1, &res), GMC_E_PROTECT_RANGES);
    ok(gmc_alloc_destroy(c, p[0]));
    ok(gmc_make_resident(c, &p[4], 1, NULL));
    t_idle(dev);
    t_close(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_protected_eviction),
        cmocka_unit_test(test_eviction_past_80_percent),
        cmocka_unit_test(test_hw_counters),
        cmocka_unit_test(test_protected_ranges),
        cmocka_unit_test(test_refcounts),
        cmocka_unit_test(test_pressure_policy),
        cmocka_unit_test(test_pinned_never_evicted),
        cmocka_unit_test(test_hot_set),
        cmocka_unit_test(test_clean_before_dirty),
        cmocka_unit_test(test_scan_window_fewest_bytes),
        cmocka_unit_test(test_loop_keeps_hot_part),
        cmocka_unit_test(test_evict_via_aperture),
        cmocka_unit_test(test_kept_system_copy),
        cmocka_unit_test(test_ordinary_system_copy_kept),
        cmocka_unit_test(test_first_page_in),
        cmocka_unit_test(test_notify_residency),
        cmocka_unit_test(test_synchronous_paging),
        cmocka_unit_test(test_submit_ops),
        cmocka_unit_test(test_submit_refusals),
        cmocka_unit_test(test_alignment_nothing_evictable),
        cmocka_unit_test(test_self_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
