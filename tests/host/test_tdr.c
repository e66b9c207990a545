/*
 * test_tdr.c - reset recovery (docs/residency.md, "Reset"): a page-in
 * whose system copy never answers (an injected hang) times out, the call
 * that waits answers GMC_E_DEVICE_RESET, gmc_device_recovery() reports
 * every allocation as recovered or lost (exact counts, state flags), and
 * once the injection is cleared the library keeps working: the recovered
 * content pages in intact, the lost allocation starts over, new work
 * completes with correct data. The model is checked for AXI protocol
 * violations when the device closes.
 */
#include <stdio.h>

#include "vidmm_test.h"
#include "gmc_fence.h"
#include "gmc_regs.h"

/* A device whose TDR timeout is `cycles` on the full engine, scaled by
 * t_dma_slowdown for the compact one (a cycle budget, not a result). */
static gmc_device *open_tdr(uint64_t cycles)
{
    gmc_device *probe = t_open("sim");
    const unsigned k = t_dma_slowdown(gmc_device_sim(probe));
    t_close(probe);
    char str[64];
    snprintf(str, sizeof str, "sim:tdr=%llu", (unsigned long long)(cycles * k));
    return t_open(str);
}

static void test_hang_recovery(void **state)
{
    (void)state;
    gmc_device *dev = open_tdr(300000);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 256 * KiB;
    /* a: content in its system copy (evicted), paged in when the hang hits */
    gmc_handle b = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS)); /* at 0 */
    gmc_handle a = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS)); /* next to the free space */
    gmc_handle ap = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_AP));
    gmc_handle w = t_new(c, SZ, 0, BIT(SEG_VRAM));
    gmc_handle empty = t_new(c, SZ, 0, BIT(SEG_VRAM));
    t_write_pattern(c, a, SZ, 1);
    t_write_pattern(c, b, SZ, 2);
    t_write_pattern(c, ap, SZ, 3);
    ok(t_resident1(c, w));
    ok(gmc_fence_wait(dev, t_fill(c, w, 0, SZ, 0x5A5A5A5Au), 0));
    /* push a out to its system copy */
    gmc_handle big = t_new(c, 2 * MiB - SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, b));
    ok(t_resident1(c, big));
    t_idle(dev);
    struct gmc_alloc_info ai = t_info(c, a);
    assert_false(ai.state & GMC_ALLOC_STATE_PLACED);
    assert_true(ai.state & GMC_ALLOC_STATE_IN_SYSTEM);
    ok(t_evict1(c, big));
    ok(gmc_alloc_destroy(c, big));

    struct gmc_valloc *va = gmc_vidmm_ref(c, a)->alloc;
    assert_non_null(va->sys.host);
    assert_int_equal(gmc_sim_host_inject(gmc_device_sim(dev), va->sys.bus, va->sys.size, GMC_SIM_INJECT_HANG), 0);
    struct gmc_recovery_report rr;
    ok(gmc_device_recovery(dev, &rr));
    assert_int_equal(rr.resets, 0);

    /* the page-in hangs; a fill of w queued after it never runs */
    struct gmc_residency_result res;
    ok(gmc_make_resident(c, &a, 1, &res)); /* queued, not waited for */
    assert_true(res.paging_fence != 0u);
    uint64_t done_before = gmc_fence_completed(dev);
    struct gmc_submit_ref ref = { w, GMC_REF_WRITE };
    struct gmc_gpu_op op = { GMC_GPU_FILL, 0, 0, 0, 0, SZ, 0x77777777u };
    uint64_t f = 0;
    ok(gmc_submit(c, &(struct gmc_submit){ &ref, 1, &op, 1 }, &f));
    assert_true(f > res.paging_fence);
    uint8_t buf[64];
    assert_status(gmc_alloc_read(c, a, 0, buf, sizeof buf), GMC_E_DEVICE_RESET);

    ok(gmc_device_recovery(dev, &rr));
    assert_int_equal(rr.resets, 1);
    assert_int_equal(rr.fence_completed, done_before);
    assert_true(rr.fence_completed < res.paging_fence);
    assert_int_equal(rr.lost, 1);      /* w: its write never completed */
    assert_int_equal(rr.recovered, 3); /* a (its system copy), b, ap */
    assert_int_equal(t_stats(dev).resets, 1);
    struct gmc_alloc_info wi = t_info(c, w), aai = t_info(c, a), bi = t_info(c, b), api = t_info(c, ap);
    assert_true(wi.state & GMC_ALLOC_STATE_LOST);
    assert_false(wi.state & GMC_ALLOC_STATE_HAS_CONTENT);
    assert_false(aai.state & GMC_ALLOC_STATE_LOST);
    assert_true(aai.state & GMC_ALLOC_STATE_HAS_CONTENT);
    assert_true(aai.state & GMC_ALLOC_STATE_IN_SYSTEM);
    assert_false(bi.state & GMC_ALLOC_STATE_LOST);
    assert_false(api.state & GMC_ALLOC_STATE_LOST);
    assert_false(t_info(c, empty).state & (GMC_ALLOC_STATE_LOST | GMC_ALLOC_STATE_HAS_CONTENT));
    /* every fence counts as completed now: waits do not hang */
    ok(gmc_fence_wait(dev, f, 0));

    /* cleared: everything works, nothing of the recovered content lost */
    gmc_sim_host_inject_clear(gmc_device_sim(dev));
    assert_true(t_check_pattern(c, a, SZ, 1));
    assert_true(t_check_pattern(c, b, SZ, 2));
    assert_true(t_check_pattern(c, ap, SZ, 3));
    ok(t_resident1(c, w)); /* lost: starts over with the fill pattern */
    t_idle(dev);
    wi = t_info(c, w);
    assert_false(wi.state & GMC_ALLOC_STATE_LOST);
    assert_true(t_vram_filled(dev, wi.gpu_address, SZ, GMC_FILL_UNINITIALISED));
    gmc_handle two[2] = { a, ap };
    ok(gmc_make_resident(c, two, 2, NULL));
    ok(gmc_fence_wait(dev, t_copy(c, ap, 0x100, a, 0x10, 0x3000), 0));
    ok(gmc_fence_wait(dev, t_fill(c, w, 8, 24, 0x01010101u), 0));
    uint8_t *got = malloc(SZ);
    assert_non_null(got);
    ok(gmc_alloc_read(c, a, 0, got, SZ));
    for (uint64_t i = 0; i < SZ; i++) {
        uint8_t want = (i >= 0x10 && i < 0x3010) ? t_byte(3, 0x100 + i - 0x10) : t_byte(1, i);
        if (got[i] != want)
            fail_msg("a[%llu] = %02x, want %02x", (unsigned long long)i, got[i], want);
    }
    free(got);
    assert_true(t_vram_filled(dev, wi.gpu_address + 8, 24, 0x01010101u));
    assert_int_equal(t_stats(dev).resets, 1);
    assert_status(gmc_device_recovery(dev, NULL), GMC_E_NULL_POINTER);
    assert_status(gmc_device_recovery(NULL, &rr), GMC_E_NULL_POINTER);
    t_close(dev);
}

/* An aperture allocation ap holding pattern `seed` and a VRAM allocation
 * dst, both resident and idle, ap's backing pages answering no bus access
 * from now on: a copy from ap hangs. two[] = { ap, dst }. */
static void hung_source(gmc_device *dev, gmc_client *c, uint64_t sz, uint64_t seed, gmc_handle two[2])
{
    two[0] = t_new(c, sz, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_AP));
    two[1] = t_new(c, sz, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    t_write_pattern(c, two[0], sz, seed);
    ok(gmc_make_resident(c, two, 2, NULL));
    t_idle(dev);
    struct gmc_valloc *va = gmc_vidmm_ref(c, two[0])->alloc;
    assert_int_equal(gmc_sim_host_inject(gmc_device_sim(dev), va->sys.bus, va->sys.size, GMC_SIM_INJECT_HANG), 0);
}

/* A fence wait with a short timeout on a hung submission is a TDR too. */
static void test_fence_wait_timeout(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 64 * KiB;
    gmc_handle two[2];
    hung_source(dev, c, SZ, 4, two);
    const gmc_handle ap = two[0], dst = two[1];
    uint64_t f = t_copy(c, ap, 0, dst, 0, SZ);
    assert_status(gmc_fence_wait(dev, f, 2000), GMC_E_DEVICE_RESET);
    struct gmc_recovery_report rr;
    ok(gmc_device_recovery(dev, &rr));
    assert_int_equal(rr.resets, 1);
    assert_int_equal(rr.lost, 1); /* dst */
    assert_true(t_info(c, dst).state & GMC_ALLOC_STATE_LOST);
    assert_false(t_info(c, ap).state & GMC_ALLOC_STATE_LOST);
    gmc_sim_host_inject_clear(gmc_device_sim(dev));
    ok(gmc_make_resident(c, two, 2, NULL));
    ok(gmc_fence_wait(dev, t_copy(c, ap, 0, dst, 0, SZ), 0));
    assert_true(t_check_pattern(c, dst, SZ, 4));
    t_close(dev);
}

/* Hangs in a row: each TDR resets the controller, so transactions the
 * bus still owes never pile up; once the bus answers again, work completes. */
static void test_repeated_hangs(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 64 * KiB;
    gmc_handle two[2];
    hung_source(dev, c, SZ, 5, two);
    const gmc_handle ap = two[0], dst = two[1];
    for (unsigned i = 1; i <= 5; i++) {
        uint64_t f = t_copy(c, ap, 0, dst, 0, SZ);
        assert_status(gmc_fence_wait(dev, f, 2000), GMC_E_DEVICE_RESET);
        struct gmc_recovery_report rr;
        ok(gmc_device_recovery(dev, &rr));
        assert_int_equal(rr.resets, i);
        assert_int_equal(t_stats(dev).resets, i);
        ok(gmc_make_resident(c, &dst, 1, NULL)); /* lost: placed and filled again */
        ok(gmc_evict(c, &dst, 1));
    }
    gmc_sim_host_inject_clear(gmc_device_sim(dev));
    ok(gmc_fence_wait(dev, t_copy(c, ap, 0, dst, 0, SZ), 0));
    assert_true(t_check_pattern(c, dst, SZ, 5));
    assert_false(t_info(c, ap).state & GMC_ALLOC_STATE_LOST);
    t_close(dev);
}

/* The default TDR timeout by engine (CAPS.DMA_ENGINE): the slower the
 * engine, the longer (gmc_fence.h). */
static void test_default_tdr(void **state)
{
    (void)state;
    const uint32_t other = GMC_CAPS_DMA_MASK | GMC_CAPS_GART_MASK;
#define ENG(e) (other | ((uint32_t)(e) << GMC_CAPS_DMA_ENGINE_LSB))
    assert_int_equal(gmc_fence_default_tdr(ENG(GMC_DMA_ENGINE_FULL)), 4000000u);
    assert_int_equal(gmc_fence_default_tdr(ENG(GMC_DMA_ENGINE_COMPACT)), 32u * 4000000u);
    assert_int_equal(gmc_fence_default_tdr(ENG(GMC_DMA_ENGINE_MICRO)), 128u * 4000000u);
    assert_int_equal(gmc_fence_default_tdr(GMC_CAPS_GART_MASK), 4000000u);
#undef ENG
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_tdr),
        cmocka_unit_test(test_hang_recovery),
        cmocka_unit_test(test_fence_wait_timeout),
        cmocka_unit_test(test_repeated_hangs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
