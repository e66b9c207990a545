/*
 * test_budget.c - video memory budgets (docs/budgets.md): segment groups
 * from the segment flags, only ApplicationTarget segments counted, client
 * and application budgets, reservations, the exact bytes to trim, usage
 * across evict / page-in / lock / destroy, and the statistics.
 *
 * Most tests strap the default segments with ApplicationTarget on segment
 * 1 (CPU-visible VRAM, LOCAL) and segment 3 (the aperture, NON_LOCAL);
 * segment 2 (banked VRAM, LOCAL) stays without it.
 */
#include "vidmm_test.h"

#define AT GMC_SEGFLAGS_APPLICATION_TARGET_MASK
#define LOCAL GMC_SEGMENT_GROUP_LOCAL
#define NONLOCAL GMC_SEGMENT_GROUP_NON_LOCAL

/* seg1 0x84 + AT, seg2 0x88 (not AT), seg3 0x191 + AT: the default layout. */
static const char *AT_DEV = "sim:seg1=0/0x200000/0x8084,seg2=0x200000/0x5f0000/0x88/0/4,"
                            "seg3=0x80000000/0x1000000/0x8191";

static struct gmc_video_memory_info t_vm(const gmc_client *c, uint32_t g)
{
    struct gmc_video_memory_info vm;
    ok(gmc_client_video_memory(c, g, &vm));
    return vm;
}

static uint64_t t_usage(const gmc_client *c, uint32_t g)
{
    return t_vm(c, g).current_usage;
}

/* The flags: ApplicationTarget is a segment flag of the spec. */
static void test_flags_and_groups(void **state)
{
    (void)state;
    assert_int_equal(AT, 1u << 15);
    gmc_device *dev = t_open(AT_DEV);
    struct gmc_segment_info si;
    ok(gmc_segment_query(dev, SEG_VIS, &si));
    assert_true(si.desc.flags & AT);
    ok(gmc_segment_query(dev, SEG_VRAM, &si));
    assert_false(si.desc.flags & AT);
    struct gmc_device_stats st = t_stats(dev);
    assert_int_equal(st.budget[LOCAL].capacity, 0x200000u);     /* segment 1 only */
    assert_int_equal(st.budget[NONLOCAL].capacity, 0x1000000u); /* the aperture */
    assert_int_equal(st.budget[LOCAL].budget, 0x200000u);
    assert_int_equal(st.budget[NONLOCAL].budget, 0x1000000u);
    assert_int_equal(st.budget[LOCAL].usage, 0u);
    gmc_client *c = t_client(dev);
    struct gmc_video_memory_info vm = t_vm(c, LOCAL);
    assert_int_equal(vm.budget, 0x200000u);
    assert_int_equal(vm.available_for_reservation, 0x200000u);
    assert_int_equal(vm.current_reservation, 0u);
    /* bad groups and pointers */
    assert_status(gmc_client_video_memory(c, 2, &vm), GMC_E_INVALID_ARG);
    assert_int_equal(vm.budget, 0u);
    assert_status(gmc_client_video_memory(NULL, LOCAL, &vm), GMC_E_NULL_POINTER);
    assert_status(gmc_client_set_budget(c, 2, 0), GMC_E_INVALID_ARG);
    assert_status(gmc_client_set_reservation(c, 7, 0), GMC_E_INVALID_ARG);
    assert_status(gmc_device_set_budget(dev, 2, 0), GMC_E_INVALID_ARG);
    gmc_client_destroy(c);
    t_close(dev);

    /* The default hardware has no ApplicationTarget segment: nothing counts. */
    dev = t_open(NULL);
    c = t_client(dev);
    st = t_stats(dev);
    assert_int_equal(st.budget[LOCAL].capacity, 0u);
    assert_int_equal(st.budget[NONLOCAL].capacity, 0u);
    gmc_handle h = t_new(c, 256 * KiB, 0, BIT(SEG_VIS));
    ok(t_resident1(c, h));
    assert_int_equal(t_usage(c, LOCAL), 0u);
    ok(gmc_client_set_budget(c, LOCAL, 0));
    gmc_handle h2 = t_new(c, 256 * KiB, 0, BIT(SEG_VIS));
    ok(t_resident1(c, h2)); /* a budget of 0 limits nothing that does not count */
    gmc_client_destroy(c);
    t_close(dev);
}

/* Under the client budget succeeds, over it fails with the exact bytes to
 * trim and changes nothing; at exactly the budget succeeds. */
static void test_client_budget(void **state)
{
    (void)state;
    gmc_device *dev = t_open(AT_DEV);
    gmc_client *c = t_client(dev);
    ok(gmc_client_set_budget(c, LOCAL, 256 * KiB));
    assert_int_equal(t_vm(c, LOCAL).budget, 256 * KiB);
    gmc_handle a = t_new(c, 128 * KiB, 0, BIT(SEG_VIS));
    gmc_handle b = t_new(c, 192 * KiB, 0, BIT(SEG_VIS));
    gmc_handle d = t_new(c, 128 * KiB, 0, BIT(SEG_VIS));
    assert_true(t_info(c, b).state & GMC_ALLOC_STATE_PLACED); /* placed at creation */
    ok(t_resident1(c, a));
    assert_int_equal(t_usage(c, LOCAL), 128 * KiB);
    struct gmc_device_stats st0 = t_stats(dev);

    struct gmc_residency_result res;
    gmc_handle hs[2] = { a, b };
    assert_status(gmc_make_resident(c, hs, 2, &res), GMC_E_OVER_BUDGET);
    assert_int_equal(res.bytes_to_trim, 64 * KiB); /* 128K + 192K - 256K */
    assert_int_equal(res.budget_group, LOCAL);
    assert_int_equal(res.failed_index, 1u);
    assert_int_equal(res.bytes_needed, 0u);
    /* nothing changed: no reference, no paging, a keeps its one reference */
    struct gmc_alloc_info bi = t_info(c, b);
    assert_int_equal(bi.resident_refs, 0u);
    assert_false(bi.state & GMC_ALLOC_STATE_HAS_CONTENT);
    assert_int_equal(t_info(c, a).resident_refs, 1u);
    struct gmc_device_stats st1 = t_stats(dev);
    assert_int_equal(st1.page_ins, st0.page_ins);
    assert_int_equal(st1.fences_issued, st0.fences_issued);
    assert_int_equal(st1.budget[LOCAL].refusals, 1u);
    assert_int_equal(st1.budget[LOCAL].usage, 128 * KiB);
    assert_int_equal(t_usage(c, LOCAL), 128 * KiB);
    uint64_t trim = 0;
    uint32_t grp = 9;
    ok(gmc_client_last_trim(c, &trim, &grp));
    assert_int_equal(trim, 64 * KiB);
    assert_int_equal(grp, LOCAL);

    /* trim what was asked (evict a: 128K >= 64K), then b fits */
    ok(t_evict1(c, a));
    assert_int_equal(t_usage(c, LOCAL), 0u);
    ok(t_resident1(c, b));
    assert_int_equal(t_usage(c, LOCAL), 192 * KiB);
    /* a second reference on a counted allocation adds nothing */
    ok(t_resident1(c, b));
    assert_int_equal(t_usage(c, LOCAL), 192 * KiB);
    /* d: 192K + 128K is 64K over; at exactly the budget it fits */
    assert_status(gmc_make_resident(c, &d, 1, &res), GMC_E_OVER_BUDGET);
    assert_int_equal(res.bytes_to_trim, 64 * KiB);
    ok(gmc_client_set_budget(c, LOCAL, 320 * KiB));
    ok(t_resident1(c, d));
    assert_int_equal(t_usage(c, LOCAL), 320 * KiB);
    /* lowering the budget below the usage evicts nothing; growing fails
     * with the whole excess */
    ok(gmc_client_set_budget(c, LOCAL, 64 * KiB));
    assert_int_equal(t_usage(c, LOCAL), 320 * KiB);
    assert_status(gmc_make_resident(c, &a, 1, &res), GMC_E_OVER_BUDGET);
    assert_int_equal(res.bytes_to_trim, 448 * KiB - 64 * KiB);
    assert_int_equal(res.failed_index, 0u);
    assert_int_equal(t_stats(dev).budget[LOCAL].refusals, 3u);
    ok(gmc_client_set_budget(c, LOCAL, GMC_BUDGET_NONE));
    ok(t_resident1(c, a));
    assert_int_equal(t_usage(c, LOCAL), 448 * KiB);
    gmc_client_destroy(c);
    t_close(dev);
}

/* Segment 2 has no ApplicationTarget: it does not count, segment 1 does. */
static void test_non_target_not_counted(void **state)
{
    (void)state;
    gmc_device *dev = t_open(AT_DEV);
    gmc_client *c = t_client(dev);
    ok(gmc_client_set_budget(c, LOCAL, 0));
    gmc_handle v = t_new(c, 1 * MiB, 0, BIT(SEG_VRAM));
    ok(t_resident1(c, v));
    assert_int_equal(t_info(c, v).segment, SEG_VRAM);
    assert_int_equal(t_usage(c, LOCAL), 0u);
    assert_int_equal(t_stats(dev).budget[LOCAL].usage, 0u);
    gmc_handle w = t_new(c, 64 * KiB, 0, BIT(SEG_VIS));
    struct gmc_residency_result res;
    assert_status(gmc_make_resident(c, &w, 1, &res), GMC_E_OVER_BUDGET);
    assert_int_equal(res.bytes_to_trim, 64 * KiB);
    /* the LOCAL budget does not limit the aperture */
    gmc_handle ap = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_AP));
    ok(t_resident1(c, ap));
    assert_int_equal(t_info(c, ap).segment, SEG_AP);
    assert_int_equal(t_usage(c, NONLOCAL), 64 * KiB);
    assert_int_equal(t_usage(c, LOCAL), 0u);
    /* and a NON_LOCAL budget limits it */
    ok(gmc_client_set_budget(c, NONLOCAL, 96 * KiB));
    gmc_handle ap2 = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_AP));
    assert_status(gmc_make_resident(c, &ap2, 1, &res), GMC_E_OVER_BUDGET);
    assert_int_equal(res.bytes_to_trim, 32 * KiB);
    assert_int_equal(res.budget_group, NONLOCAL);
    assert_int_equal(t_stats(dev).budget[NONLOCAL].refusals, 1u);
    assert_int_equal(t_stats(dev).budget[LOCAL].refusals, 1u);
    gmc_client_destroy(c);
    t_close(dev);
}

/* An allocation not placed yet: make_resident places it only where the
 * client's budgets have room. Segment 1 full of allocations nobody
 * references: over budget, the call evicts nothing and places nothing;
 * within budget it evicts and places. With segment 2 (not counted) also
 * supported, the allocation goes there instead of failing. */
static void test_placement_within_budget(void **state)
{
    (void)state;
    gmc_device *dev = t_open(AT_DEV);
    gmc_client *c = t_client(dev);
    /* fill segment 1 with four 448K allocations nobody references */
    gmc_handle f[4];
    for (unsigned i = 0; i < 4; i++) {
        f[i] = t_new(c, 448 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
        t_write_pattern(c, f[i], 448 * KiB, 10u + i);
    }
    gmc_handle big = t_new(c, 512 * KiB, 0, BIT(SEG_VIS));
    assert_false(t_info(c, big).state & GMC_ALLOC_STATE_PLACED);
    ok(gmc_client_set_budget(c, LOCAL, 384 * KiB));
    struct gmc_residency_result res;
    assert_status(gmc_make_resident(c, &big, 1, &res), GMC_E_OVER_BUDGET);
    assert_int_equal(res.bytes_to_trim, 128 * KiB);
    assert_int_equal(res.failed_index, 0u);
    assert_int_equal(t_info(c, big).resident_refs, 0u);
    assert_int_equal(t_usage(c, LOCAL), 0u);
    assert_int_equal(t_stats(dev).budget[LOCAL].usage, 0u);
    /* nothing moved */
    assert_false(t_info(c, big).state & GMC_ALLOC_STATE_PLACED);
    assert_int_equal(t_stats(dev).evictions, 0u);
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(t_info(c, f[i]).segment, SEG_VIS);
    ok(gmc_client_set_budget(c, LOCAL, 512 * KiB));
    ok(t_resident1(c, big));
    assert_int_equal(t_usage(c, LOCAL), 512 * KiB);
    assert_true(t_stats(dev).evictions > 0u);
    /* the content evicted for it is intact (the reads lock, and a lock
     * counts too: no budget for them) */
    ok(gmc_client_set_budget(c, LOCAL, GMC_BUDGET_NONE));
    for (unsigned i = 0; i < 4; i++)
        assert_true(t_check_pattern(c, f[i], 448 * KiB, 10u + i));

    /* segments 1 and 2 supported, 1 preferred: over budget in segment 1,
     * it lands in segment 2, which counts for nothing */
    ok(gmc_client_set_budget(c, LOCAL, 512 * KiB));
    struct gmc_alloc_desc d;
    t_desc(&d, 256 * KiB, 0, BIT(SEG_VIS) | BIT(SEG_VRAM));
    d.preferred[0].id = SEG_VIS;
    gmc_handle both = t_create(c, &d);
    ok(t_resident1(c, both));
    assert_int_equal(t_info(c, both).segment, SEG_VRAM);
    assert_int_equal(t_usage(c, LOCAL), 512 * KiB);
    gmc_client_destroy(c);
    t_close(dev);
}

/* Usage follows references, locks and destruction; an allocation evicted
 * under pressure was unreferenced, so it never counted. */
static void test_usage_accounting(void **state)
{
    (void)state;
    gmc_device *dev = t_open(AT_DEV);
    gmc_client *c = t_client(dev);
    gmc_client *o = t_client(dev);
    gmc_handle a = t_new(c, 512 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    t_write_pattern(c, a, 512 * KiB, 3);
    ok(t_resident1(c, a));
    assert_int_equal(t_usage(c, LOCAL), 512 * KiB);
    assert_int_equal(t_usage(o, LOCAL), 0u);
    ok(t_evict1(c, a));
    assert_int_equal(t_usage(c, LOCAL), 0u);
    assert_int_equal(t_stats(dev).budget[LOCAL].usage, 0u);
    /* another client fills segment 1: a is evicted (content to system) */
    gmc_handle big[4];
    for (unsigned i = 0; i < 4; i++) {
        big[i] = t_new(o, 448 * KiB, 0, BIT(SEG_VIS));
        ok(t_resident1(o, big[i]));
    }
    assert_false(t_info(c, a).state & GMC_ALLOC_STATE_PLACED);
    assert_int_equal(t_usage(o, LOCAL), 4 * 448 * KiB);
    assert_int_equal(t_usage(c, LOCAL), 0u);
    assert_int_equal(t_stats(dev).budget[LOCAL].usage, 4 * 448 * KiB);
    /* page-in again once there is room */
    ok(t_evict1(o, big[0]));
    ok(gmc_alloc_destroy(o, big[0]));
    assert_int_equal(t_usage(o, LOCAL), 3 * 448 * KiB);
    ok(t_resident1(c, a));
    assert_int_equal(t_usage(c, LOCAL), 512 * KiB);
    assert_true(t_check_pattern(c, a, 512 * KiB, 3));
    /* destroy while resident */
    ok(gmc_alloc_destroy(c, a));
    assert_int_equal(t_usage(c, LOCAL), 0u);
    assert_int_equal(t_stats(dev).budget[LOCAL].usage, 3 * 448 * KiB);
    /* a lock counts for its locker while held */
    ok(t_evict1(o, big[1]));
    gmc_handle l = t_new(c, 128 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    struct gmc_lock_map m;
    ok(gmc_lock(c, l, GMC_LOCK_WRITE_ONLY, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_BAR);
    assert_int_equal(t_usage(c, LOCAL), 128 * KiB);
    ok(gmc_unlock(c, l));
    assert_int_equal(t_usage(c, LOCAL), 0u);
    /* the client's exit takes its usage with it */
    gmc_client_destroy(o);
    assert_int_equal(t_stats(dev).budget[LOCAL].usage, 0u);
    gmc_client_destroy(c);
    t_close(dev);
}

/* A shared allocation counts for every client that references it, once
 * for the device. */
static void test_shared(void **state)
{
    (void)state;
    gmc_device *dev = t_open(AT_DEV);
    gmc_client *c = t_client(dev);
    gmc_client *o = t_client(dev);
    struct gmc_alloc_desc d;
    t_desc(&d, 256 * KiB, 0, BIT(SEG_VIS));
    d.kmt_flags = GMC_KMT_CREATE_RESOURCE | GMC_KMT_CREATE_SHARED;
    gmc_handle h = t_create(c, &d);
    gmc_handle ho = GMC_HANDLE_NONE;
    ok(gmc_alloc_open(o, t_info(c, h).share_handle, &ho));
    ok(t_resident1(c, h));
    ok(t_resident1(o, ho));
    assert_int_equal(t_usage(c, LOCAL), 256 * KiB);
    assert_int_equal(t_usage(o, LOCAL), 256 * KiB);
    assert_int_equal(t_stats(dev).budget[LOCAL].usage, 256 * KiB);
    ok(t_evict1(c, h));
    assert_int_equal(t_usage(c, LOCAL), 0u);
    assert_int_equal(t_stats(dev).budget[LOCAL].usage, 256 * KiB);
    gmc_client_destroy(o);
    gmc_client_destroy(c);
    t_close(dev);
}

/* The application budget and reservations between two clients. */
static void test_reservations(void **state)
{
    (void)state;
    gmc_device *dev = t_open(AT_DEV);
    gmc_client *a = t_client(dev);
    gmc_client *b = t_client(dev);
    ok(gmc_device_set_budget(dev, LOCAL, 1 * MiB));
    assert_int_equal(t_stats(dev).budget[LOCAL].budget, 1 * MiB);
    assert_int_equal(t_vm(a, LOCAL).budget, 1 * MiB);
    assert_int_equal(t_vm(a, LOCAL).available_for_reservation, 1 * MiB);
    /* more than available: refused, nothing changes */
    assert_status(gmc_client_set_reservation(a, LOCAL, 1 * MiB + PG), GMC_E_RESERVATION);
    assert_int_equal(t_vm(a, LOCAL).current_reservation, 0u);
    assert_int_equal(t_stats(dev).budget[LOCAL].reservation, 0u);
    ok(gmc_client_set_reservation(a, LOCAL, 512 * KiB));
    assert_int_equal(t_vm(a, LOCAL).current_reservation, 512 * KiB);
    assert_int_equal(t_stats(dev).budget[LOCAL].reservation, 512 * KiB);
    /* b may reserve what a did not */
    assert_int_equal(t_vm(b, LOCAL).available_for_reservation, 512 * KiB);
    assert_status(gmc_client_set_reservation(b, LOCAL, 512 * KiB + PG), GMC_E_RESERVATION);
    /* b cannot use a's reservation: 768K + 512K unused - 1M = 256K to trim */
    gmc_handle b1 = t_new(b, 768 * KiB, 0, BIT(SEG_VIS));
    struct gmc_residency_result res;
    assert_status(gmc_make_resident(b, &b1, 1, &res), GMC_E_OVER_BUDGET);
    assert_int_equal(res.bytes_to_trim, 256 * KiB);
    assert_int_equal(res.budget_group, LOCAL);
    gmc_handle b2 = t_new(b, 512 * KiB, 0, BIT(SEG_VIS));
    ok(t_resident1(b, b2));
    assert_int_equal(t_vm(b, LOCAL).available_for_reservation, 512 * KiB);
    /* a gets its reservation */
    gmc_handle a1 = t_new(a, 512 * KiB, 0, BIT(SEG_VIS));
    ok(t_resident1(a, a1));
    assert_int_equal(t_usage(a, LOCAL), 512 * KiB);
    assert_int_equal(t_stats(dev).budget[LOCAL].usage, 1 * MiB);
    /* but nothing more: the application budget is used up */
    gmc_handle a2 = t_new(a, 64 * KiB, 0, BIT(SEG_VIS));
    assert_status(gmc_make_resident(a, &a2, 1, &res), GMC_E_OVER_BUDGET);
    assert_int_equal(res.bytes_to_trim, 64 * KiB);
    /* budgets below the reservations are refused */
    assert_status(gmc_device_set_budget(dev, LOCAL, 512 * KiB - PG), GMC_E_RESERVATION);
    assert_int_equal(t_stats(dev).budget[LOCAL].budget, 1 * MiB);
    assert_status(gmc_client_set_budget(a, LOCAL, 256 * KiB), GMC_E_RESERVATION);
    assert_int_equal(t_vm(a, LOCAL).budget, 1 * MiB);
    ok(gmc_client_set_budget(a, LOCAL, 512 * KiB));
    assert_int_equal(t_vm(a, LOCAL).budget, 512 * KiB);
    assert_int_equal(t_vm(a, LOCAL).available_for_reservation, 512 * KiB);
    /* a client's exit drops its reservation */
    gmc_client_destroy(a);
    assert_int_equal(t_stats(dev).budget[LOCAL].reservation, 0u);
    assert_int_equal(t_stats(dev).budget[LOCAL].usage, 512 * KiB);
    ok(gmc_device_set_budget(dev, LOCAL, GMC_BUDGET_NONE));
    assert_int_equal(t_stats(dev).budget[LOCAL].budget, 0x200000u);
    gmc_client_destroy(b);
    t_close(dev);
}

/* gmc_lock and gmc_submit place allocations too: over budget they answer
 * GMC_E_OVER_BUDGET, take no lock and submit nothing. */
static void test_lock_and_submit(void **state)
{
    (void)state;
    gmc_device *dev = t_open(AT_DEV);
    gmc_client *c = t_client(dev);
    ok(gmc_client_set_budget(c, LOCAL, 64 * KiB));
    gmc_handle l = t_new(c, 128 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    struct gmc_lock_map m;
    assert_status(gmc_lock(c, l, GMC_LOCK_WRITE_ONLY, &m), GMC_E_OVER_BUDGET);
    assert_int_equal(m.kind, 0u);
    assert_false(t_info(c, l).state & GMC_ALLOC_STATE_LOCKED);
    assert_status(gmc_unlock(c, l), GMC_E_NOT_LOCKED);
    uint64_t trim = 0;
    uint32_t grp = 9;
    ok(gmc_client_last_trim(c, &trim, &grp));
    assert_int_equal(trim, 64 * KiB);
    assert_int_equal(grp, LOCAL);
    assert_int_equal(t_stats(dev).locks, 0u);
    assert_false(t_info(c, l).state & GMC_ALLOC_STATE_HAS_CONTENT); /* refused before any paging */
    ok(gmc_client_set_budget(c, LOCAL, 128 * KiB));
    ok(gmc_lock(c, l, GMC_LOCK_WRITE_ONLY, &m));
    ok(gmc_unlock(c, l));

    /* resident in segment 2 (not counted); a lock must move it to segment
     * 1, which counts: refused, and it stays where it is */
    struct gmc_alloc_desc ld;
    t_desc(&ld, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS) | BIT(SEG_VRAM));
    ld.preferred[0].id = SEG_VRAM;
    gmc_handle mv = t_create(c, &ld);
    ok(t_resident1(c, mv));
    assert_int_equal(t_info(c, mv).segment, SEG_VRAM);
    ok(gmc_client_set_budget(c, LOCAL, 0));
    uint64_t ev = t_stats(dev).evictions;
    assert_status(gmc_lock(c, mv, GMC_LOCK_READ_ONLY, &m), GMC_E_OVER_BUDGET);
    assert_int_equal(t_info(c, mv).segment, SEG_VRAM);
    assert_int_equal(t_stats(dev).evictions, ev);
    assert_int_equal(t_usage(c, LOCAL), 0u);
    ok(gmc_client_last_trim(c, &trim, &grp));
    assert_int_equal(trim, 64 * KiB);
    ok(gmc_client_set_budget(c, LOCAL, 64 * KiB));
    ok(gmc_lock(c, mv, GMC_LOCK_READ_ONLY, &m));
    assert_int_equal(t_info(c, mv).segment, SEG_VIS);
    assert_int_equal(t_usage(c, LOCAL), 64 * KiB);
    ok(gmc_unlock(c, mv));
    ok(t_evict1(c, mv));

    /* a FILL target in the aperture moves to segment 1 (LOCAL) */
    ok(gmc_client_set_budget(c, LOCAL, 0));
    struct gmc_alloc_desc d;
    t_desc(&d, 64 * KiB, 0, BIT(SEG_VIS) | BIT(SEG_AP));
    d.preferred[0].id = SEG_AP;
    gmc_handle t = t_create(c, &d);
    ok(t_resident1(c, t));
    assert_int_equal(t_info(c, t).segment, SEG_AP);
    assert_int_equal(t_usage(c, NONLOCAL), 64 * KiB);
    struct gmc_submit_ref ref = { t, GMC_REF_WRITE };
    struct gmc_gpu_op op = { .kind = GMC_GPU_FILL, .dst = 0, .size = 64 * KiB, .pattern = 0x5a5a5a5au };
    struct gmc_submit s = { &ref, 1, &op, 1 };
    uint64_t before = t_stats(dev).submits;
    uint64_t fence = 7;
    assert_status(gmc_submit(c, &s, &fence), GMC_E_OVER_BUDGET);
    assert_int_equal(fence, 0u);
    assert_int_equal(t_stats(dev).submits, before);
    assert_int_equal(t_info(c, t).segment, SEG_AP); /* refused before it moved */
    assert_int_equal(t_usage(c, NONLOCAL), 64 * KiB);
    ok(gmc_client_last_trim(c, &trim, &grp));
    assert_int_equal(trim, 64 * KiB);
    assert_int_equal(grp, LOCAL);
    ok(gmc_client_set_budget(c, LOCAL, 64 * KiB));
    ok(gmc_submit(c, &s, &fence));
    ok(gmc_fence_wait(dev, fence, 100000));
    assert_int_equal(t_info(c, t).segment, SEG_VIS);
    assert_int_equal(t_usage(c, LOCAL), 64 * KiB);
    assert_int_equal(t_usage(c, NONLOCAL), 0u);
    gmc_client_destroy(c);
    t_close(dev);
}

/* The device's usage is kept as allocations change; here it is recounted
 * from the public queries after every step of a seeded random workload
 * (two clients, pressure on segment 1, evictions, locks, GPU fills and
 * destruction), along with each client's usage. */
#define NA 12
static void test_usage_recount(void **state)
{
    (void)state;
    gmc_device *dev = t_open(AT_DEV);
    gmc_client *cl[2] = { t_client(dev), t_client(dev) };
    gmc_handle h[NA] = { 0 };
    uint64_t rng = 12345;
    unsigned refused = 0, over = 0, locked_steps = 0;
    uint64_t prev = 0;
    for (unsigned step = 0; step < 400; step++) {
        unsigned i = (unsigned)(t_rand(&rng) % NA);
        gmc_client *c = cl[i % 2];
        unsigned what = (unsigned)(t_rand(&rng) % 8);
        if (h[i] == GMC_HANDLE_NONE) {
            static const uint32_t segs[4] = { BIT(SEG_VIS), BIT(SEG_VIS) | BIT(SEG_VRAM), BIT(SEG_AP),
                                              BIT(SEG_VIS) | BIT(SEG_AP) };
            uint32_t set = segs[t_rand(&rng) % 4];
            h[i] = t_new(c, (1u + t_rand(&rng) % 8u) * 64u * KiB, GMC_ALLOC_CPU_VISIBLE, set);
            continue;
        }
        struct gmc_alloc_info ai = t_info(c, h[i]);
        int rc = GMC_OK;
        if (what < 3) {
            rc = t_resident1(c, h[i]);
        } else if (what < 5) {
            if (ai.resident_refs > 0u)
                rc = t_evict1(c, h[i]);
        } else if (what == 5) {
            struct gmc_lock_map m;
            if (ai.state & GMC_ALLOC_STATE_LOCKED) {
                rc = gmc_unlock(c, h[i]);
            } else {
                rc = gmc_lock(c, h[i], GMC_LOCK_READ_ONLY, &m);
                locked_steps += rc == GMC_OK;
            }
        } else if (what == 6 && ai.resident_refs > 0u && !(ai.state & GMC_ALLOC_STATE_LOCKED)) {
            struct gmc_submit_ref ref = { h[i], GMC_REF_WRITE };
            struct gmc_gpu_op op = { .kind = GMC_GPU_FILL, .dst = 0, .size = ai.size, .pattern = step };
            struct gmc_submit s = { &ref, 1, &op, 1 };
            rc = gmc_submit(c, &s, NULL);
        } else if (what == 7) {
            ok(gmc_alloc_destroy(c, h[i]));
            h[i] = GMC_HANDLE_NONE;
        }
        over += rc == GMC_E_OVER_BUDGET;
        if (rc == GMC_E_NO_SPACE || rc == GMC_E_OVER_BUDGET || rc == GMC_E_UNSUPPORTED)
            refused++;
        else
            ok(rc);
        if (step == 100)
            ok(gmc_client_set_budget(cl[0], LOCAL, 768 * KiB));
        if (step == 200)
            ok(gmc_client_set_reservation(cl[1], LOCAL, 256 * KiB));
        /* recount */
        uint64_t dev_use[2] = { 0, 0 }, cl_use[2][2] = { { 0, 0 }, { 0, 0 } };
        for (unsigned k = 0; k < NA; k++) {
            if (h[k] == GMC_HANDLE_NONE)
                continue;
            struct gmc_alloc_info x = t_info(cl[k % 2], h[k]);
            if (x.segment != SEG_VIS && x.segment != SEG_AP)
                continue; /* not placed, or in segment 2: no ApplicationTarget */
            if (x.resident_total == 0u && !(x.state & GMC_ALLOC_STATE_LOCKED))
                continue;
            uint32_t g = x.segment == SEG_AP ? NONLOCAL : LOCAL;
            dev_use[g] += x.placed_size;
            cl_use[k % 2][g] += x.placed_size;
        }
        struct gmc_device_stats st = t_stats(dev);
        for (uint32_t g = 0; g < 2; g++) {
            if (st.budget[g].usage != dev_use[g])
                fail_msg("step %u: device usage %llu, recount %llu (group %u)", step,
                         (unsigned long long)st.budget[g].usage, (unsigned long long)dev_use[g], g);
            for (unsigned k = 0; k < 2; k++)
                assert_int_equal(t_usage(cl[k], g), cl_use[k][g]);
        }
        /* from step 100 on, client 0 never grows past its budget */
        uint64_t u = t_usage(cl[0], LOCAL);
        if (step >= 100 && u > 768 * KiB && u > prev)
            fail_msg("step %u: client 0 grew to %llu over its budget", step, (unsigned long long)u);
        prev = u;
    }
    /* the workload went through both sides */
    assert_true(over > 0u);
    assert_true(refused > over);
    assert_true(locked_steps > 0u);
    gmc_client_destroy(cl[0]);
    gmc_client_destroy(cl[1]);
    assert_int_equal(t_stats(dev).budget[LOCAL].usage, 0u);
    assert_int_equal(t_stats(dev).budget[NONLOCAL].usage, 0u);
    t_close(dev);
}

/*
 * Hibernate and resume (docs/budgets.md, "Power transitions"): the resume
 * puts back what was resident where it was, whatever the budgets say now
 * (a resume is not a client's request and cannot be trimmed), and the
 * usage after it is what it was before: the allocations never stopped
 * counting. Content the hibernate lost (HardwareProtected) stops counting
 * with it. The next placement for the client is then judged as usual.
 */
static void test_budget_across_hibernate(void **state)
{
    (void)state;
    gmc_device *dev = t_open(AT_DEV);
    gmc_client *c = t_client(dev);
    gmc_handle a = t_new(c, 512 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle b = t_new(c, 256 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle hp = t_new(c, 64 * KiB, GMC_ALLOC_HARDWARE_PROTECTED, BIT(SEG_VIS));
    gmc_handle both[3] = { a, b, hp };
    ok(gmc_make_resident(c, both, 3, NULL));
    t_write_pattern(c, a, 512 * KiB, 11);
    t_write_pattern(c, b, 256 * KiB, 12);
    assert_int_equal(t_usage(c, LOCAL), 832 * KiB);
    /* lowering the budget evicts nothing: over budget until it evicts */
    ok(gmc_client_set_budget(c, LOCAL, 512 * KiB));
    struct gmc_power_report rep;
    ok(gmc_device_power(dev, GMC_POWER_HIBERNATE, &rep));
    assert_int_equal(rep.allocations_saved, 2);
    assert_int_equal(rep.allocations_lost, 1); /* HardwareProtected content never leaves VRAM */
    assert_int_equal(t_usage(c, LOCAL), 768 * KiB); /* the lost one is no longer placed */
    ok(gmc_device_resume(dev, &rep));
    assert_int_equal(rep.allocations_saved, 2);
    assert_int_equal(rep.bytes_restored, 768 * KiB);
    /* back in place, counted as before, content intact */
    assert_true(t_info(c, a).state & GMC_ALLOC_STATE_PLACED);
    assert_true(t_info(c, b).state & GMC_ALLOC_STATE_PLACED);
    assert_true(t_info(c, hp).state & GMC_ALLOC_STATE_LOST);
    assert_int_equal(t_usage(c, LOCAL), 768 * KiB);
    struct gmc_device_stats st = t_stats(dev);
    assert_int_equal(st.budget[LOCAL].usage, 768 * KiB);
    assert_int_equal(st.budget[LOCAL].refusals, 0);
    assert_true(t_check_pattern(c, a, 512 * KiB, 11));
    assert_true(t_check_pattern(c, b, 256 * KiB, 12));
    /* the next placement is judged against the budget */
    gmc_handle d = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    struct gmc_residency_result res;
    assert_status(gmc_make_resident(c, &d, 1, &res), GMC_E_OVER_BUDGET);
    assert_int_equal(res.bytes_to_trim, 768 * KiB + 64 * KiB - 512 * KiB);
    ok(t_evict1(c, b));
    assert_int_equal(t_usage(c, LOCAL), 512 * KiB);
    gmc_client_destroy(c);
    t_close(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags_and_groups),
        cmocka_unit_test(test_client_budget),
        cmocka_unit_test(test_non_target_not_counted),
        cmocka_unit_test(test_placement_within_budget),
        cmocka_unit_test(test_usage_accounting),
        cmocka_unit_test(test_shared),
        cmocka_unit_test(test_reservations),
        cmocka_unit_test(test_lock_and_submit),
        cmocka_unit_test(test_usage_recount),
        cmocka_unit_test(test_budget_across_hibernate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
