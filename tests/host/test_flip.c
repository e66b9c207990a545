/*
 * test_flip.c - DirectFlip segments (seed 003: the driver must ensure that
 * Direct Flip allocations can be pinned and scanned out from such a
 * segment; docs/residency.md "DirectFlip"). An allocation pinned with
 * gmc_alloc_pin_direct_flip() moves into a DirectFlip segment of its
 * supported set with its content, and stays there, at the same address,
 * under eviction pressure, until unpinned; where no supported segment is
 * DirectFlip the pin is refused with GMC_E_NOT_DIRECT_FLIP.
 */
#include "vidmm_test.h"

/* Segment 1 (1 MiB, CPU-visible) is DirectFlip, segment 2 (1 MiB) is not. */
#define FLIPDEV "sim:segs=3,seg1=0/0x100000/0x484/0,seg2=0x100000/0x100000/0x80,seg3=0x80000000/0x1000000/0x191"

static void test_pin_moves_and_stays(void **state)
{
    (void)state;
    gmc_device *dev = t_open(FLIPDEV);
    gmc_client *c = t_client(dev);
    const uint64_t FS = 256 * KiB;
    struct gmc_alloc_desc d;
    t_desc(&d, FS, GMC_ALLOC_CPU_VISIBLE, BIT(1) | BIT(2));
    d.preferred[0].id = 2;
    gmc_handle f = t_create(c, &d);
    ok(t_resident1(c, f));
    assert_int_equal(t_info(c, f).segment, 2);
    t_write_pattern(c, f, FS, 21);

    ok(gmc_alloc_pin_direct_flip(c, f));
    struct gmc_alloc_info fi = t_info(c, f);
    assert_int_equal(fi.segment, 1);
    assert_true(fi.state & GMC_ALLOC_STATE_PINNED);
    assert_true(t_check_pattern(c, f, FS, 21)); /* moved with its content */
    ok(gmc_alloc_pin_direct_flip(c, f));        /* again: nothing changes */
    assert_int_equal(t_info(c, f).gpu_address, fi.gpu_address);
    ok(t_evict1(c, f)); /* no residency reference left: only the pin holds it */

    /* pressure on segment 1: 12 x 128 KiB through 768 KiB of room */
    const uint64_t OS = 128 * KiB;
    struct gmc_device_stats s0 = t_stats(dev);
    for (unsigned i = 0; i < 12; i++) {
        gmc_handle o = t_new(c, OS, GMC_ALLOC_CPU_VISIBLE, BIT(1));
        ok(t_resident1(c, o));
        ok(t_evict1(c, o));
    }
    assert_true(t_stats(dev).evictions - s0.evictions >= 6);
    struct gmc_alloc_info now = t_info(c, f);
    assert_int_equal(now.segment, 1);
    assert_int_equal(now.gpu_address, fi.gpu_address);
    assert_true(now.state & GMC_ALLOC_STATE_PLACED);
    assert_true(t_check_pattern(c, f, FS, 21));

    /* the whole segment cannot be had while it is pinned */
    gmc_handle big = t_new(c, 1 * MiB, GMC_ALLOC_CPU_VISIBLE, BIT(1));
    struct gmc_residency_result res;
    assert_status(gmc_make_resident(c, &big, 1, &res), GMC_E_NO_SPACE);
    assert_true(res.bytes_needed > 0u);
    assert_int_equal(t_info(c, f).gpu_address, fi.gpu_address);

    /* unpinned, it is an ordinary victim again */
    ok(gmc_alloc_unpin_direct_flip(c, f));
    assert_false(t_info(c, f).state & GMC_ALLOC_STATE_PINNED);
    assert_status(gmc_alloc_unpin_direct_flip(c, f), GMC_E_BAD_STATE);
    ok(gmc_make_resident(c, &big, 1, NULL));
    assert_false(t_info(c, f).state & GMC_ALLOC_STATE_PLACED);
    t_close(dev);
}

/* A pinned DirectFlip allocation does not move for a lock or a submission. */
static void test_pinned_never_moves(void **state)
{
    (void)state;
    gmc_device *dev = t_open(FLIPDEV);
    gmc_client *c = t_client(dev);
    /* PermanentSysMem: a lock maps its system copy, and a submission while
     * it is locked would have to move it into the aperture */
    struct gmc_alloc_desc d;
    t_desc(&d, 64 * KiB, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PERMANENT_SYS_MEM, BIT(1) | BIT(3));
    gmc_handle f = t_create(c, &d);
    ok(gmc_alloc_pin_direct_flip(c, f));
    uint64_t at = t_info(c, f).gpu_address;
    assert_int_equal(t_info(c, f).segment, 1);
    gmc_handle out = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(1));
    gmc_handle hs[2] = { f, out };
    ok(gmc_make_resident(c, hs, 2, NULL));
    struct gmc_lock_map m;
    ok(gmc_lock(c, f, 0, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_SYSTEM);
    struct gmc_submit_ref refs[2] = { { f, 0 }, { out, GMC_REF_WRITE } };
    struct gmc_gpu_op op = { GMC_GPU_COPY, 0, 1, 0, 0, 4096, 0 };
    uint64_t fence = 0;
    assert_status(gmc_submit(c, &(struct gmc_submit){ refs, 2, &op, 1 }, &fence), GMC_E_PINNED);
    ok(gmc_unlock(c, f));
    assert_int_equal(t_info(c, f).gpu_address, at);
    /* unlocked, the GPU reads it where it is */
    ok(gmc_fence_wait(dev, t_copy(c, f, 0, out, 0, 4096), 0));
    assert_int_equal(t_info(c, f).gpu_address, at);
    t_close(dev);
}

static void test_pin_refused(void **state)
{
    (void)state;
    gmc_device *dev = t_open(FLIPDEV);
    gmc_client *c = t_client(dev);
    gmc_handle f = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(2) | BIT(3)); /* no DirectFlip segment */
    ok(t_resident1(c, f));
    struct gmc_alloc_info before = t_info(c, f);
    struct gmc_device_stats s0 = t_stats(dev);
    assert_status(gmc_alloc_pin_direct_flip(c, f), GMC_E_NOT_DIRECT_FLIP);
    struct gmc_alloc_info after = t_info(c, f);
    assert_int_equal(after.segment, before.segment);
    assert_int_equal(after.gpu_address, before.gpu_address);
    assert_false(after.state & GMC_ALLOC_STATE_PINNED);
    assert_int_equal(t_stats(dev).paging_ops, s0.paging_ops);
    assert_status(gmc_alloc_unpin_direct_flip(c, f), GMC_E_BAD_STATE);
    assert_status(gmc_alloc_pin_direct_flip(c, f + 1u), GMC_E_BAD_HANDLE);
    assert_status(gmc_alloc_pin_direct_flip(NULL, f), GMC_E_NULL_POINTER);
    t_close(dev);

    /* the default hardware has no DirectFlip segment at all */
    dev = t_open(NULL);
    c = t_client(dev);
    f = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS) | BIT(SEG_VRAM) | BIT(SEG_AP));
    assert_status(gmc_alloc_pin_direct_flip(c, f), GMC_E_NOT_DIRECT_FLIP);
    t_close(dev);
}

/*
 * Primaries, overlays and captures are pinned by their kind (seed 000:
 * overlays are pinned and evicted only on TDR, PnP stop or level-three
 * synchronization; seed 004: a primary may be pinned at creation): a lock
 * that would move one into CPU-visible VRAM answers GMC_E_PINNED, and a
 * Discard lock while the GPU uses one waits instead of renaming it to
 * fresh memory.
 */
static void test_kind_pinned_never_moves(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    /* an overlay placed in VRAM the CPU cannot see */
    struct gmc_alloc_desc d;
    t_desc(&d, 64 * KiB, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_OVERLAY, BIT(SEG_VIS) | BIT(SEG_VRAM));
    d.preferred[0].id = SEG_VRAM;
    gmc_handle ov = t_create(c, &d);
    struct gmc_alloc_info before = t_info(c, ov);
    assert_int_equal(before.segment, SEG_VRAM);
    assert_true(before.state & GMC_ALLOC_STATE_PINNED);
    struct gmc_device_stats s0 = t_stats(dev);
    struct gmc_lock_map m;
    assert_status(gmc_lock(c, ov, 0, &m), GMC_E_PINNED);
    assert_status(gmc_lock(c, ov, GMC_LOCK_DISCARD, &m), GMC_E_PINNED);
    uint8_t b[16];
    assert_status(gmc_alloc_read(c, ov, 0, b, sizeof(b)), GMC_E_PINNED);
    struct gmc_alloc_info after = t_info(c, ov);
    assert_int_equal(after.segment, before.segment);
    assert_int_equal(after.gpu_address, before.gpu_address);
    assert_false(after.state & GMC_ALLOC_STATE_LOCKED);
    assert_int_equal(t_stats(dev).paging_ops, s0.paging_ops);

    /* a primary the GPU is still writing: a Discard lock waits, in place */
    t_desc(&d, 256 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    d.info2_flags = GMC_INFO2_PRIMARY;
    d.vidpn_source_id = 0;
    gmc_handle p = t_create(c, &d);
    ok(t_resident1(c, p));
    uint64_t at = t_info(c, p).gpu_address;
    s0 = t_stats(dev);
    uint64_t fence = t_fill(c, p, 0, 256 * KiB, 0x11223344u);
    assert_true(fence > gmc_fence_completed(dev)); /* still running */
    ok(gmc_lock(c, p, GMC_LOCK_DISCARD | GMC_LOCK_WRITE_ONLY, &m));
    struct gmc_device_stats s1 = t_stats(dev);
    assert_int_equal(s1.renames, s0.renames);
    assert_int_equal(s1.lock_waits, s0.lock_waits + 1u);
    assert_true(gmc_fence_completed(dev) >= fence);
    assert_int_equal(m.kind, GMC_LOCK_MAP_BAR);
    assert_int_equal(t_info(c, p).gpu_address, at);
    ok(gmc_unlock(c, p));

    /* an ordinary allocation in the same place is renamed (the difference) */
    gmc_handle o = t_new(c, 256 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, o));
    uint64_t oat = t_info(c, o).gpu_address;
    fence = t_fill(c, o, 0, 256 * KiB, 0x55667788u);
    assert_true(fence > gmc_fence_completed(dev));
    ok(gmc_lock(c, o, GMC_LOCK_DISCARD | GMC_LOCK_WRITE_ONLY, &m));
    assert_int_equal(t_stats(dev).renames, s1.renames + 1u);
    assert_true(t_info(c, o).gpu_address != oat);
    ok(gmc_unlock(c, o));
    t_close(dev);
}

/* A primary is pinned by its kind: pinning it for DirectFlip in place and
 * unpinning leave it pinned. */
static void test_primary_stays_pinned(void **state)
{
    (void)state;
    gmc_device *dev = t_open(FLIPDEV);
    gmc_client *c = t_client(dev);
    struct gmc_alloc_desc d;
    t_desc(&d, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(1));
    d.info2_flags = GMC_INFO2_PRIMARY;
    d.vidpn_source_id = 0;
    gmc_handle p = t_create(c, &d);
    uint64_t at = t_info(c, p).gpu_address;
    ok(gmc_alloc_pin_direct_flip(c, p));
    ok(gmc_alloc_unpin_direct_flip(c, p));
    assert_true(t_info(c, p).state & GMC_ALLOC_STATE_PINNED);
    assert_int_equal(t_info(c, p).gpu_address, at);
    t_close(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pin_moves_and_stays),
        cmocka_unit_test(test_pinned_never_moves),
        cmocka_unit_test(test_pin_refused),
        cmocka_unit_test(test_primary_stays_pinned),
        cmocka_unit_test(test_kind_pinned_never_moves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
