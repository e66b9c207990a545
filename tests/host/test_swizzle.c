/*
 * test_swizzle.c - Swizzled allocations (seed 000: a swizzled allocation
 * needs the video memory manager's special support to be locked; a primary
 * created with UseAlternateVA gets its swizzling range at creation;
 * docs/residency.md "Swizzled"). In a memory segment the content is kept
 * in the swizzled layout of spec/gmc.toml (enum SWIZZLE); the CPU always
 * sees it linear: through the system copy (the transfers unswizzle and
 * swizzle), or, for a UseAlternateVA primary, through its swizzling range
 * onto VRAM. GPU work addresses the memory as it is laid out.
 */
#include "vidmm_test.h"

#define SZ (16u * KiB)

/* Where linear byte `off` sits in the swizzled layout, from the spec's
 * constants (independent of the library's own function). */
static uint64_t swz(uint64_t off)
{
    const uint64_t block = 1u << GMC_SWIZZLE_BLOCK_SHIFT, blocks = PG / block;
    uint64_t b = (off % PG) / block;
    return off / PG * PG + (GMC_SWIZZLE_STRIDE * b + GMC_SWIZZLE_OFFSET) % blocks * block + off % block;
}

/* VRAM bytes [addr, addr + SZ) hold `lin` in the swizzled layout. */
static int vram_swizzled(gmc_device *dev, uint64_t addr, const uint8_t *lin)
{
    uint8_t *v = malloc(SZ);
    assert_non_null(v);
    assert_int_equal(gmc_sim_vram_peek(gmc_device_sim(dev), addr, v, SZ), 0);
    int good = 1;
    for (uint64_t i = 0; i < SZ && good; i++)
        good = v[swz(i)] == lin[i];
    free(v);
    return good;
}

static void test_lock_sees_linear(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    gmc_handle s = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_SWIZZLED, BIT(SEG_VIS));
    gmc_handle plain = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle out = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle hs[3] = { s, plain, out };
    ok(gmc_make_resident(c, hs, 3, NULL));

    /* the same CPU-visible VRAM: the plain one locks the BAR, the
     * swizzled one its linear system copy */
    struct gmc_lock_map m;
    ok(gmc_lock(c, plain, 0, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_BAR);
    ok(gmc_unlock(c, plain));
    ok(gmc_lock(c, s, GMC_LOCK_WRITE_ONLY, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_SYSTEM);
    uint8_t p[SZ], got[SZ];
    t_pattern(p, SZ, 31);
    ok(gmc_lock_write(c, s, 0, p, SZ));
    ok(gmc_unlock(c, s)); /* uploads, swizzling */
    t_idle(dev);
    uint64_t addr = t_info(c, s).gpu_address;
    assert_int_equal(t_info(c, s).segment, SEG_VIS);
    assert_true(vram_swizzled(dev, addr, p));
    assert_false(t_vram_is(dev, addr, SZ, 31)); /* not linear in VRAM */
    ok(gmc_alloc_read(c, s, 0, got, SZ));
    assert_memory_equal(got, p, SZ);

    /* a GPU copy moves the memory as laid out: swizzled bytes */
    ok(gmc_fence_wait(dev, t_copy(c, s, 0, out, 0, SZ), 0));
    ok(gmc_alloc_read(c, out, 0, got, SZ));
    for (uint64_t i = 0; i < SZ; i++)
        assert_int_equal(got[swz(i)], p[i]);

    /* the GPU writes it (linear bytes into swizzled memory): the lock
     * unswizzles them into the system copy */
    t_write_pattern(c, plain, SZ, 32);
    ok(gmc_fence_wait(dev, t_copy(c, plain, 0, s, 0, SZ), 0));
    ok(gmc_alloc_read(c, s, 0, got, SZ));
    for (uint64_t i = 0; i < SZ; i++)
        assert_int_equal(got[i], t_byte(32, swz(i)));

    /* hibernate purges segment 1: saved through the MDL (unswizzled) and
     * restored (swizzled) */
    struct gmc_power_report rep;
    ok(gmc_device_power(dev, GMC_POWER_HIBERNATE, &rep));
    assert_true(rep.allocations_saved >= 1u);
    ok(gmc_device_resume(dev, &rep));
    t_idle(dev);
    uint8_t want[SZ];
    for (uint64_t i = 0; i < SZ; i++)
        want[i] = t_byte(32, swz(i));
    assert_true(vram_swizzled(dev, t_info(c, s).gpu_address, want));
    ok(gmc_alloc_read(c, s, 0, got, SZ));
    assert_memory_equal(got, want, SZ);
    t_close(dev);
}

/* Special lock support: a Swizzled allocation locks even where no
 * CPU-visible segment can hold it (through its system copy); the same
 * allocation without Swizzled is refused. */
static void test_lock_outside_cpu_visible(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    gmc_handle plain = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VRAM));
    gmc_handle s = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_SWIZZLED, BIT(SEG_VRAM));
    gmc_handle hs[2] = { plain, s };
    ok(gmc_make_resident(c, hs, 2, NULL));
    struct gmc_lock_map m;
    assert_status(gmc_lock(c, plain, 0, &m), GMC_E_NOT_CPU_VISIBLE);
    ok(gmc_lock(c, s, 0, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_SYSTEM);
    uint8_t p[SZ], got[SZ];
    t_pattern(p, SZ, 33);
    ok(gmc_lock_write(c, s, 0, p, SZ));
    ok(gmc_unlock(c, s));
    t_idle(dev);
    assert_int_equal(t_info(c, s).segment, SEG_VRAM);
    assert_true(vram_swizzled(dev, t_info(c, s).gpu_address, p));
    ok(gmc_alloc_read(c, s, 0, got, SZ));
    assert_memory_equal(got, p, SZ);
    t_close(dev);
}

static gmc_handle primary(gmc_client *c, uint32_t flags)
{
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_SWIZZLED | flags, BIT(SEG_VIS));
    d.info2_flags = GMC_INFO2_PRIMARY;
    d.vidpn_source_id = 0;
    return t_create(c, &d);
}

/* A Swizzled primary created with UseAlternateVA has its swizzling range:
 * the lock maps VRAM behind the BAR and the CPU still sees linear bytes,
 * which land in VRAM swizzled. Without UseAlternateVA it has none: the
 * lock maps the system copy. */
static void test_alternate_va_range(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    gmc_handle a = primary(c, GMC_ALLOC_USE_ALTERNATE_VA);
    gmc_handle n = primary(c, 0);
    uint8_t p[SZ], got[SZ];
    t_pattern(p, SZ, 34);
    struct gmc_lock_map m;
    ok(gmc_lock(c, a, 0, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_BAR);
    ok(gmc_lock_write(c, a, 0, p, SZ));
    assert_true(vram_swizzled(dev, t_info(c, a).gpu_address, p));
    ok(gmc_lock_read(c, a, 100, got, SZ - 200)); /* unaligned, across blocks */
    assert_memory_equal(got, p + 100, SZ - 200);
    ok(gmc_unlock(c, a));

    ok(gmc_lock(c, n, 0, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_SYSTEM);
    ok(gmc_lock_write(c, n, 0, p, SZ));
    ok(gmc_unlock(c, n));
    t_idle(dev);
    assert_true(vram_swizzled(dev, t_info(c, n).gpu_address, p));
    ok(gmc_alloc_read(c, n, 0, got, SZ));
    assert_memory_equal(got, p, SZ);
    t_close(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lock_sees_linear),
        cmocka_unit_test(test_lock_outside_cpu_visible),
        cmocka_unit_test(test_alternate_va_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
