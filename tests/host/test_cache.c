/*
 * test_cache.c - Cached allocations and the modelled CPU cache (seed 000:
 * in a segment that is not cache-coherent the manager flushes the
 * allocation from the processor's cache; docs/residency.md "CPU cache").
 * CPU writes through a Cached allocation's system mapping sit in the cache
 * until flushed, and reads are served from it; each test runs once with the
 * library's cache maintenance and once with it switched off through the
 * device's test hook, and the second run must see the stale bytes the
 * first one does not. A CacheCoherent aperture snoops: no flush is counted
 * and none is needed.
 */
#include "vidmm_test.h"
#include "gmc_cache.h"

/* Segment 3 is an aperture without CacheCoherent (the default one has it). */
#define NONCOHERENT "sim:segs=3,seg1=0/0x100000/0x84/0,seg2=0x100000/0x100000/0x80,seg3=0x80000000/0x1000000/0x181"
#define COHERENT "sim:segs=3,seg1=0/0x100000/0x84/0,seg2=0x100000/0x100000/0x80,seg3=0x80000000/0x1000000/0x191"

#define SZ (8u * KiB) /* fits the modelled cache (GMC_CACHE_LINES lines) */
#define UNINIT ((uint8_t)(GMC_FILL_UNINITIALISED & 0xFFu))

/* All of b[0..len) equal to v. */
static int all_are(const uint8_t *b, size_t len, uint8_t v)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != v)
            return 0;
    return 1;
}

/* A Cached, PermanentSysMem allocation in the VRAM the CPU cannot see: its
 * lock maps the system copy, cacheable. */
static gmc_handle cached_sys(gmc_client *c, uint32_t segs)
{
    return t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_CACHED | GMC_ALLOC_PERMANENT_SYS_MEM, segs);
}

/* A device with the maintenance on or off, a Cached allocation `a` in
 * `segs` and a plain CPU-visible `out`, both resident, the paging done. */
static gmc_device *setup(const char *devstr, int maintenance, uint32_t segs, gmc_client **c, gmc_handle *a,
                         gmc_handle *out)
{
    gmc_device *dev = t_open(devstr);
    dev->cache_maintenance_off = !maintenance;
    *c = t_client(dev);
    *a = cached_sys(*c, segs);
    *out = t_new(*c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle hs[2] = { *a, *out };
    ok(gmc_make_resident(*c, hs, 2, NULL));
    t_idle(dev);
    return dev;
}

/* CPU writes through the lock, unlock (the upload to VRAM), GPU copy to
 * `out`: with the flush the copy carries the written bytes, without it
 * the upload read memory the cache had not been written back to. */
static void write_then_gpu_reads(int maintenance)
{
    gmc_client *c;
    gmc_handle a, out;
    gmc_device *dev = setup(NONCOHERENT, maintenance, BIT(SEG_VRAM), &c, &a, &out);
    struct gmc_device_stats s0 = t_stats(dev);

    struct gmc_lock_map m;
    ok(gmc_lock(c, a, GMC_LOCK_WRITE_ONLY, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_SYSTEM);
    uint8_t pat[SZ];
    t_pattern(pat, SZ, 5);
    ok(gmc_lock_write(c, a, 0, pat, SZ));
    /* write-back cache: memory still holds the first page-in's fill */
    assert_true(all_are(m.ptr, SZ, UNINIT));
    ok(gmc_unlock(c, a));
    ok(gmc_fence_wait(dev, t_copy(c, a, 0, out, 0, SZ), 0));
    struct gmc_device_stats s1 = t_stats(dev);

    uint8_t got[SZ];
    ok(gmc_alloc_read(c, out, 0, got, SZ));
    if (maintenance) {
        assert_memory_equal(got, pat, SZ);
        assert_int_equal(s1.cache_flushes - s0.cache_flushes, 1); /* the upload's */
    } else {
        assert_true(all_are(got, SZ, UNINIT)); /* the GPU saw stale memory */
        assert_int_equal(s1.cache_flushes, s0.cache_flushes);
    }
    /* the CPU itself always sees what it wrote */
    ok(gmc_alloc_read(c, a, 0, got, SZ));
    assert_memory_equal(got, pat, SZ);
    t_close(dev);
}

static void test_flush_before_upload(void **state)
{
    (void)state;
    write_then_gpu_reads(1);
    write_then_gpu_reads(0);
}

/* The CPU reads (lines filled), the GPU writes the allocation, the lock
 * brings the content back into the system copy (an eviction copy through
 * the MDL): with maintenance the CPU reads the GPU's bytes, without it the
 * lines it read before. */
static void gpu_writes_then_cpu_reads(int maintenance)
{
    gmc_device *dev = t_open(NONCOHERENT);
    dev->cache_maintenance_off = !maintenance;
    gmc_client *c = t_client(dev);
    gmc_handle a = cached_sys(c, BIT(SEG_VRAM));
    ok(t_resident1(c, a));
    uint8_t got[SZ];
    ok(gmc_alloc_read(c, a, 0, got, SZ));
    assert_true(all_are(got, SZ, UNINIT));
    struct gmc_device_stats s0 = t_stats(dev);

    ok(gmc_fence_wait(dev, t_fill(c, a, 0, SZ, 0x5A5A5A5Au), 0));
    ok(gmc_alloc_read(c, a, 0, got, SZ)); /* copies VRAM to the system copy first */
    struct gmc_device_stats s1 = t_stats(dev);
    if (maintenance) {
        assert_true(all_are(got, SZ, 0x5A));
        assert_int_equal(s1.cache_flushes - s0.cache_flushes, 1);         /* before the copy-out */
        assert_int_equal(s1.cache_invalidates - s0.cache_invalidates, 1); /* before the CPU read */
    } else {
        assert_true(all_are(got, SZ, UNINIT)); /* stale lines */
        assert_int_equal(s1.cache_flushes, s0.cache_flushes);
        assert_int_equal(s1.cache_invalidates, s0.cache_invalidates);
    }
    t_close(dev);
}

static void test_invalidate_before_cpu_read(void **state)
{
    (void)state;
    gpu_writes_then_cpu_reads(1);
    gpu_writes_then_cpu_reads(0);
}

/* An allocation held in the aperture: the GPU reads the locked system copy
 * through the page table. Without CacheCoherent the submission flushes;
 * with it the hardware snoops, nothing is counted and, even with the
 * library's maintenance off, the GPU sees the written bytes. Returns
 * whether the GPU saw them. */
static int aperture_copy(const char *devstr, int maintenance, uint64_t *flushes)
{
    gmc_client *c;
    gmc_handle a, out;
    gmc_device *dev = setup(devstr, maintenance, BIT(SEG_AP), &c, &a, &out);
    assert_int_equal(t_info(c, a).segment, SEG_AP);
    struct gmc_device_stats s0 = t_stats(dev);
    struct gmc_lock_map m;
    ok(gmc_lock(c, a, 0, &m));
    uint8_t pat[SZ], got[SZ];
    t_pattern(pat, SZ, 9);
    ok(gmc_lock_write(c, a, 0, pat, SZ));
    ok(gmc_fence_wait(dev, t_copy(c, a, 0, out, 0, SZ), 0)); /* while locked */
    ok(gmc_unlock(c, a));
    ok(gmc_alloc_read(c, out, 0, got, SZ));
    *flushes = t_stats(dev).cache_flushes - s0.cache_flushes;
    t_close(dev);
    return memcmp(got, pat, SZ) == 0;
}

static void test_coherent_aperture_needs_none(void **state)
{
    (void)state;
    uint64_t n = 99;
    assert_true(aperture_copy(NONCOHERENT, 1, &n));
    assert_int_equal(n, 1); /* the submission's */
    assert_false(aperture_copy(NONCOHERENT, 0, &n));
    assert_int_equal(n, 0);
    assert_true(aperture_copy(COHERENT, 1, &n));
    assert_int_equal(n, 0);
    assert_true(aperture_copy(COHERENT, 0, &n));
    assert_int_equal(n, 0);
}

/* Without Cached the mapping is write-combined: the bytes reach memory at
 * once, nothing is flushed, and the upload carries them either way. */
static void test_uncached_needs_none(void **state)
{
    (void)state;
    for (int maintenance = 0; maintenance < 2; maintenance++) {
        gmc_device *dev = t_open(NONCOHERENT);
        dev->cache_maintenance_off = !maintenance;
        gmc_client *c = t_client(dev);
        gmc_handle a = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PERMANENT_SYS_MEM, BIT(SEG_VRAM));
        gmc_handle out = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
        gmc_handle hs[2] = { a, out };
        ok(gmc_make_resident(c, hs, 2, NULL));
        struct gmc_lock_map m;
        ok(gmc_lock(c, a, GMC_LOCK_WRITE_ONLY, &m));
        uint8_t pat[SZ], got[SZ];
        t_pattern(pat, SZ, 11);
        ok(gmc_lock_write(c, a, 0, pat, SZ));
        assert_memory_equal(m.ptr, pat, SZ);
        ok(gmc_unlock(c, a));
        ok(gmc_fence_wait(dev, t_copy(c, a, 0, out, 0, SZ), 0));
        ok(gmc_alloc_read(c, out, 0, got, SZ));
        assert_memory_equal(got, pat, SZ);
        struct gmc_device_stats s = t_stats(dev);
        assert_int_equal(s.cache_flushes, 0);
        assert_int_equal(s.cache_invalidates, 0);
        t_close(dev);
    }
}

/* More than the cache holds: lines written back as they are replaced, the
 * rest by the flush; the GPU copy carries every byte. */
static void test_capacity_write_back(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NONCOHERENT);
    gmc_client *c = t_client(dev);
    const uint64_t N = 64 * KiB;
    gmc_handle a = t_new(c, N, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_CACHED | GMC_ALLOC_PERMANENT_SYS_MEM,
                         BIT(SEG_VRAM));
    gmc_handle out = t_new(c, N, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle hs[2] = { a, out };
    ok(gmc_make_resident(c, hs, 2, NULL));
    struct gmc_lock_map m;
    ok(gmc_lock(c, a, GMC_LOCK_WRITE_ONLY, &m));
    uint8_t *pat = malloc(N), *got = malloc(N);
    assert_non_null(pat);
    assert_non_null(got);
    t_pattern(pat, N, 13);
    for (uint64_t off = 0; off < N; off += 1000) /* unaligned pieces across lines */
        ok(gmc_lock_write(c, a, off, pat + off, off + 1000 <= N ? 1000 : N - off));
    /* the first 32 KiB were pushed out by the last ones, the rest are cached */
    assert_memory_equal(m.ptr, pat, N - (uint64_t)GMC_CACHE_LINES * GMC_CACHE_LINE - GMC_CACHE_LINE);
    assert_false(memcmp((uint8_t *)m.ptr + N - GMC_CACHE_LINE, pat + N - GMC_CACHE_LINE, GMC_CACHE_LINE) == 0);
    ok(gmc_unlock(c, a));
    ok(gmc_fence_wait(dev, t_copy(c, a, 0, out, 0, N), 0));
    ok(gmc_alloc_read(c, out, 0, got, N));
    assert_memory_equal(got, pat, N);
    free(pat);
    free(got);
    t_close(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flush_before_upload),
        cmocka_unit_test(test_invalidate_before_cpu_read),
        cmocka_unit_test(test_coherent_aperture_needs_none),
        cmocka_unit_test(test_uncached_needs_none),
        cmocka_unit_test(test_capacity_write_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
