/*
 * test_power.c - standby, hibernate and resume (docs/residency.md, "Power
 * transitions") on the default segments and on strapped ones with other
 * flags: preserved segments keep every byte (allocation checksums and the
 * VRAM range, before and after), purged ones have every allocation with
 * content saved and restored (exact report counts), Protected content is
 * reported lost, a purged aperture is mapped again on resume, calls while
 * asleep answer GMC_E_POWER_STATE, and a locked allocation blocks the
 * transition. Every model is checked for AXI protocol violations when its
 * device closes.
 */
#include "vidmm_test.h"

static uint64_t vram_sum(gmc_device *dev, uint64_t addr, uint64_t len)
{
    return t_vram_hash(gmc_device_sim(dev), addr, len);
}

/* FNV of an allocation's bytes, read through the GPU into a CPU-visible
 * scratch allocation when it is not CPU-visible itself. */
static uint64_t content_sum(gmc_client *c, gmc_handle h, gmc_handle scratch, uint64_t len)
{
    uint8_t *b = malloc(len);
    assert_non_null(b);
    if (t_info(c, h).flags & GMC_ALLOC_CPU_VISIBLE) {
        ok(gmc_alloc_read(c, h, 0, b, len));
    } else {
        gmc_handle both[2] = { h, scratch };
        ok(gmc_make_resident(c, both, 2, NULL));
        ok(gmc_fence_wait(c->dev, t_copy(c, h, 0, scratch, 0, len), 0));
        ok(gmc_evict(c, both, 2));
        ok(gmc_alloc_read(c, scratch, 0, b, len));
    }
    uint64_t s = t_fnv(b, len);
    free(b);
    return s;
}

static void asleep_refusals(gmc_device *dev, gmc_client *c, gmc_handle h)
{
    struct gmc_device_info di;
    ok(gmc_device_query(dev, &di));
    assert_true(di.power_state != GMC_POWER_D0);
    struct gmc_lock_map m;
    uint8_t b[8];
    gmc_handle nh = 1;
    struct gmc_alloc_desc d;
    t_desc(&d, 4096, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    assert_status(t_resident1(c, h), GMC_E_POWER_STATE);
    assert_status(gmc_lock(c, h, 0, &m), GMC_E_POWER_STATE);
    assert_status(gmc_alloc_read(c, h, 0, b, 8), GMC_E_POWER_STATE);
    assert_status(gmc_alloc_write(c, h, 0, b, 8), GMC_E_POWER_STATE);
    assert_status(gmc_alloc_create(c, &d, &nh), GMC_E_POWER_STATE);
    assert_int_equal(nh, GMC_HANDLE_NONE);
    struct gmc_submit_ref ref = { h, GMC_REF_WRITE };
    struct gmc_gpu_op op = { GMC_GPU_FILL, 0, 0, 0, 0, 16, 0 };
    uint64_t f = 9;
    assert_status(gmc_submit(c, &(struct gmc_submit){ &ref, 1, &op, 1 }, &f), GMC_E_POWER_STATE);
    assert_int_equal(f, 0);
    struct gmc_power_report r;
    assert_status(gmc_device_power(dev, GMC_POWER_STANDBY, &r), GMC_E_POWER_STATE);
    assert_status(gmc_device_power(dev, GMC_POWER_HIBERNATE, &r), GMC_E_POWER_STATE);
}

/* ------------------------------------------- the default segments */

struct set {
    gmc_handle vis, vram, ap, empty, perm, prot, scratch;
};

static void make_set(gmc_device *dev, gmc_client *c, struct set *s, uint64_t sz)
{
    s->vis = t_new(c, sz, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    s->vram = t_new(c, sz, 0, BIT(SEG_VRAM));
    s->ap = t_new(c, sz, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_AP));
    s->empty = t_new(c, sz, 0, BIT(SEG_VRAM));
    s->perm = t_new(c, sz, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PERMANENT_SYS_MEM, BIT(SEG_VIS));
    s->prot = t_new(c, sz, GMC_ALLOC_PROTECTED, BIT(SEG_VRAM));
    s->scratch = t_new(c, sz, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    t_write_pattern(c, s->vis, sz, 1);
    t_write_pattern(c, s->ap, sz, 2);
    t_write_pattern(c, s->scratch, sz, 3);
    gmc_handle r[4] = { s->vram, s->perm, s->prot, s->vis };
    ok(gmc_make_resident(c, r, 4, NULL)); /* perm: first page-in, clean */
    ok(gmc_fence_wait(dev, t_copy(c, s->vis, 0, s->vram, 0, sz), 0));
    ok(gmc_fence_wait(dev, t_fill(c, s->prot, 0, sz, 0x7E7E7E7Eu), 0));
    ok(gmc_evict(c, r, 4));
    t_idle(dev);
    assert_false(t_info(c, s->empty).state & GMC_ALLOC_STATE_HAS_CONTENT);
}

static void test_default_standby(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 128 * KiB;
    struct set s;
    make_set(dev, c, &s, SZ);
    gmc_handle all[6] = { s.vis, s.vram, s.ap, s.perm, s.scratch, s.empty };
    uint64_t before[6];
    for (unsigned i = 0; i < 5; i++)
        before[i] = content_sum(c, all[i], s.scratch, SZ);
    t_idle(dev);
    uint64_t vsum = vram_sum(dev, 0, 8 * MiB - 64 * KiB);

    struct gmc_power_report r;
    memset(&r, 0xFF, sizeof r);
    ok(gmc_device_power(dev, GMC_POWER_STANDBY, &r));
    /* every segment is PreservedDuringStandby: vis, vram, ap, perm, prot, scratch */
    assert_int_equal(r.allocations_preserved, 6);
    assert_int_equal(r.allocations_saved, 0);
    assert_int_equal(r.allocations_lost, 0);
    assert_int_equal(r.bytes_saved, 0);
    asleep_refusals(dev, c, s.vis);
    assert_int_equal(vram_sum(dev, 0, 8 * MiB - 64 * KiB), vsum);
    ok(gmc_device_resume(dev, &r));
    assert_int_equal(r.allocations_saved, 0);
    assert_int_equal(r.bytes_restored, 0);
    assert_status(gmc_device_resume(dev, &r), GMC_E_POWER_STATE);
    assert_int_equal(vram_sum(dev, 0, 8 * MiB - 64 * KiB), vsum);
    for (unsigned i = 0; i < 5; i++)
        if (content_sum(c, all[i], s.scratch, SZ) != before[i])
            fail_msg("allocation %u changed across standby", i);
    assert_false(t_info(c, s.prot).state & GMC_ALLOC_STATE_LOST);
    t_close(dev);
}

static void test_default_hibernate(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 128 * KiB;
    struct set s;
    make_set(dev, c, &s, SZ);
    gmc_handle all[5] = { s.vis, s.vram, s.ap, s.perm, s.scratch };
    uint64_t before[5], vbefore[5];
    for (unsigned i = 0; i < 5; i++)
        before[i] = content_sum(c, all[i], s.scratch, SZ);
    t_idle(dev);
    for (unsigned i = 0; i < 5; i++)
        vbefore[i] = i == 2 ? 0 : vram_sum(dev, t_info(c, all[i]).gpu_address, SZ);
    /* the scratch was last read by a lock (paged in: dirty); vis, vram dirty;
     * perm clean; the aperture one lives in system memory */
    struct gmc_device_stats s0 = t_stats(dev);
    struct gmc_power_report r;
    ok(gmc_device_power(dev, GMC_POWER_HIBERNATE, &r));
    assert_int_equal(r.allocations_preserved, 1); /* ap */
    /* vis, vram, scratch, prot copied (Protected: to its kernel-memory
     * system copy); perm clean */
    assert_int_equal(r.allocations_saved, 5);
    assert_int_equal(r.allocations_lost, 0);
    assert_int_equal(r.bytes_saved, 4 * SZ);
    assert_int_equal(t_stats(dev).bytes_paged_out - s0.bytes_paged_out, 4 * SZ);
    uint64_t prot_at = t_info(c, s.prot).gpu_address;
    struct gmc_alloc_info pi = t_info(c, s.prot);
    assert_false(pi.state & GMC_ALLOC_STATE_LOST);
    assert_true(pi.state & GMC_ALLOC_STATE_HAS_CONTENT);
    assert_false(t_vram_filled(dev, prot_at, SZ, 0x7E7E7E7Eu)); /* purged */
    /* the purged VRAM really lost its bytes */
    assert_true(vram_sum(dev, t_info(c, s.vis).gpu_address, SZ) != vbefore[0]);
    assert_true(vram_sum(dev, t_info(c, s.vram).gpu_address, SZ) != vbefore[1]);
    asleep_refusals(dev, c, s.vis);
    ok(gmc_device_resume(dev, &r));
    assert_int_equal(r.allocations_saved, 5); /* restored: vis, vram, perm, scratch, prot */
    assert_int_equal(r.bytes_restored, 5 * SZ);
    assert_int_equal(r.allocations_lost, 0);
    for (unsigned i = 0; i < 5; i++) {
        if (i != 2 && vram_sum(dev, t_info(c, all[i]).gpu_address, SZ) != vbefore[i])
            fail_msg("allocation %u: VRAM not restored in place", i);
        if (content_sum(c, all[i], s.scratch, SZ) != before[i])
            fail_msg("allocation %u changed across hibernate", i);
    }
    /* Protected content came back in place; the CPU still cannot read it */
    assert_int_equal(t_info(c, s.prot).gpu_address, prot_at);
    assert_true(t_vram_filled(dev, prot_at, SZ, 0x7E7E7E7Eu));
    uint8_t b[8];
    assert_status(gmc_alloc_read(c, s.prot, 0, b, sizeof b), GMC_E_NOT_CPU_VISIBLE);
    /* the empty one starts with the fill pattern */
    gmc_handle two[2] = { s.prot, s.empty };
    struct gmc_residency_result res;
    ok(gmc_make_resident(c, two, 2, &res));
    ok(gmc_fence_wait(dev, res.paging_fence, 0));
    assert_true(t_vram_filled(dev, prot_at, SZ, 0x7E7E7E7Eu));
    assert_true(t_vram_filled(dev, t_info(c, s.empty).gpu_address, SZ, GMC_FILL_UNINITIALISED));
    t_close(dev);
}

/* --------------------------------------------- strapped segments */

/* seg1: CPU-visible, preserved in standby and hibernate; seg2: purged in
 * both; seg3: an aperture purged in both (its page table goes). */
#define STRAPS "sim:segs=3,seg1=0/0x100000/0x184/0,seg2=0x100000/0x400000/0,seg3=0x80000000/0x1000000/0x11"

static void power_cycle_strapped(enum gmc_power_state to)
{
    gmc_device *dev = t_open(STRAPS);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 96 * KiB;
    struct gmc_segment_info si;
    ok(gmc_segment_query(dev, 2, &si));
    assert_int_equal(si.desc.flags, 0);
    gmc_handle keep = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(1));
    gmc_handle scratch = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(1));
    gmc_handle mem = t_new(c, SZ, 0, BIT(2));
    gmc_handle mem2 = t_new(c, SZ, 0, BIT(2));
    gmc_handle ap = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(3));
    gmc_handle prot = t_new(c, SZ, GMC_ALLOC_PROTECTED, BIT(2));
    gmc_handle hwp = t_new(c, SZ, GMC_ALLOC_HARDWARE_PROTECTED, BIT(2));
    t_write_pattern(c, keep, SZ, 11);
    t_write_pattern(c, ap, SZ, 12);
    gmc_handle r[6] = { keep, mem, mem2, ap, prot, hwp };
    ok(gmc_make_resident(c, r, 6, NULL));
    ok(gmc_fence_wait(dev, t_copy(c, keep, 0, mem, 0, SZ), 0));
    ok(gmc_fence_wait(dev, t_copy(c, ap, 0, mem2, 0, SZ), 0));
    ok(gmc_fence_wait(dev, t_fill(c, prot, 0, SZ, 0x12345678u), 0));
    ok(gmc_fence_wait(dev, t_fill(c, hwp, 0, SZ, 0x9ABCDEF0u), 0));
    ok(gmc_evict(c, r, 6));
    gmc_handle all[4] = { keep, mem, mem2, ap };
    uint64_t before[4];
    for (unsigned i = 0; i < 4; i++)
        before[i] = content_sum(c, all[i], scratch, SZ);
    t_idle(dev);
    uint64_t keep_v = vram_sum(dev, t_info(c, keep).gpu_address, SZ);
    uint64_t seg1_v = vram_sum(dev, 0, 0x100000);

    struct gmc_power_report rep;
    ok(gmc_device_power(dev, to, &rep));
    assert_int_equal(rep.allocations_preserved, 3); /* keep, scratch, ap (content in system memory) */
    assert_int_equal(rep.allocations_saved, 3);     /* mem, mem2, prot (its kernel-memory copy) */
    assert_int_equal(rep.allocations_lost, 1);      /* hwp: never leaves VRAM */
    assert_int_equal(rep.bytes_saved, 3 * SZ);
    assert_false(t_info(c, prot).state & GMC_ALLOC_STATE_LOST);
    assert_true(t_info(c, hwp).state & GMC_ALLOC_STATE_LOST);
    ok(gmc_device_resume(dev, &rep));
    assert_int_equal(rep.allocations_saved, 4); /* mem, mem2, prot copied back; ap mapped again */
    assert_int_equal(rep.bytes_restored, 3 * SZ);
    assert_true(t_vram_filled(dev, t_info(c, prot).gpu_address, SZ, 0x12345678u));
    assert_int_equal(vram_sum(dev, 0, 0x100000), seg1_v);
    assert_int_equal(vram_sum(dev, t_info(c, keep).gpu_address, SZ), keep_v);
    for (unsigned i = 0; i < 4; i++)
        if (content_sum(c, all[i], scratch, SZ) != before[i])
            fail_msg("allocation %u changed across the transition", i);
    /* the aperture works again: the GPU reads the mapped system copy */
    gmc_handle two[2] = { ap, scratch };
    ok(gmc_make_resident(c, two, 2, NULL));
    ok(gmc_fence_wait(dev, t_copy(c, ap, 0x1000, scratch, 0, 0x2000), 0));
    uint8_t b[0x2000];
    ok(gmc_alloc_read(c, scratch, 0, b, sizeof b));
    for (unsigned i = 0; i < sizeof b; i++)
        assert_int_equal(b[i], t_byte(12, 0x1000 + i));
    t_close(dev);
}

static void test_strapped_standby(void **state)
{
    (void)state;
    power_cycle_strapped(GMC_POWER_STANDBY);
}

static void test_strapped_hibernate(void **state)
{
    (void)state;
    power_cycle_strapped(GMC_POWER_HIBERNATE);
}

static void test_strapped_rules(void **state)
{
    (void)state;
    gmc_device *dev = (gmc_device *)&state;
    struct gmc_open_report rep;
    /* hibernate without standby */
    assert_status(gmc_device_open_ex("sim:segs=1,seg1=0/0x100000/0x104/0", &rep, &dev),
                  GMC_E_RULE_SEG_HIBERNATE_WITHOUT_STANDBY);
    assert_null(dev);
    assert_int_equal(rep.segment, 1);
    assert_non_null(rep.rule);
    /* partially preserved needs standby too */
    assert_status(gmc_device_open_ex("sim:segs=2,seg1=0/0x100000/0x4/0,seg2=0x100000/0x100000/0x200", &rep, &dev),
                  GMC_E_RULE_SEG_PARTIAL_WITHOUT_STANDBY);
    assert_int_equal(rep.segment, 2);
    /* a partially preserved segment is saved like a purged one in hibernate,
     * and kept in standby */
    dev = t_open("sim:segs=1,seg1=0/0x200000/0x284/0");
    gmc_client *c = t_client(dev);
    gmc_handle h = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(1));
    t_write_pattern(c, h, 64 * KiB, 5);
    struct gmc_power_report r;
    ok(gmc_device_power(dev, GMC_POWER_STANDBY, &r));
    assert_int_equal(r.allocations_preserved, 1);
    assert_int_equal(r.allocations_saved, 0);
    ok(gmc_device_resume(dev, &r));
    ok(gmc_device_power(dev, GMC_POWER_HIBERNATE, &r));
    assert_int_equal(r.allocations_preserved, 0);
    assert_int_equal(r.allocations_saved, 1);
    assert_int_equal(r.bytes_saved, 64 * KiB);
    ok(gmc_device_resume(dev, &r));
    assert_int_equal(r.bytes_restored, 64 * KiB);
    assert_true(t_check_pattern(c, h, 64 * KiB, 5));
    t_close(dev);
}

/* A partially preserved segment with a SystemMemoryEndAddress: in
 * hibernate the allocations that end at or below it keep their place and
 * bytes untouched, the one above is saved and restored, and the VRAM above
 * the address loses its content; standby keeps everything. */
static void test_partial_sysmem_end(void **state)
{
    (void)state;
    /* seg1: 2 MiB, CpuVisible | PreservedDuringStandby | PartiallyPreserved,
     * system memory up to 1 MiB */
    gmc_device *dev = t_open("sim:segs=1,seg1=0/0x200000/0x284/0/0/0x100000");
    struct gmc_segment_info si;
    ok(gmc_segment_query(dev, 1, &si));
    assert_int_equal(si.desc.sysmem_end, 0x100000);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 64 * KiB;
    gmc_handle low = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(1));
    gmc_handle fill = t_new(c, 0x100000 - 2 * SZ, GMC_ALLOC_CPU_VISIBLE, BIT(1));
    gmc_handle edge = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(1)); /* ends exactly at 1 MiB */
    gmc_handle high = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(1));
    t_write_pattern(c, low, SZ, 21);
    t_write_pattern(c, edge, SZ, 22);
    t_write_pattern(c, high, SZ, 23);
    (void)fill;
    t_idle(dev);
    assert_int_equal(t_info(c, low).gpu_address, 0);
    assert_int_equal(t_info(c, edge).gpu_address + SZ, 0x100000);
    assert_true(t_info(c, high).gpu_address >= 0x100000);
    uint64_t below = vram_sum(dev, 0, 0x100000);
    uint64_t free_top = vram_sum(dev, 0x100000 + SZ, 0x100000 - SZ);
    struct gmc_power_report r;
    ok(gmc_device_power(dev, GMC_POWER_STANDBY, &r)); /* standby keeps the whole segment */
    assert_int_equal(r.allocations_preserved, 3);
    assert_int_equal(r.allocations_saved, 0);
    ok(gmc_device_resume(dev, &r));
    assert_int_equal(vram_sum(dev, 0x100000 + SZ, 0x100000 - SZ), free_top);
    ok(gmc_device_power(dev, GMC_POWER_HIBERNATE, &r));
    assert_int_equal(r.allocations_preserved, 2); /* low, edge */
    assert_int_equal(r.allocations_saved, 1);     /* high */
    assert_int_equal(r.bytes_saved, SZ);
    ok(gmc_device_resume(dev, &r));
    assert_int_equal(r.allocations_saved, 1);
    assert_int_equal(r.bytes_restored, SZ);
    assert_int_equal(vram_sum(dev, 0, 0x100000), below); /* not one byte below 1 MiB changed */
    assert_true(vram_sum(dev, 0x100000 + SZ, 0x100000 - SZ) != free_top); /* purged above */
    assert_true(t_check_pattern(c, low, SZ, 21));
    assert_true(t_check_pattern(c, edge, SZ, 22));
    assert_true(t_check_pattern(c, high, SZ, 23));
    t_close(dev);

    /* the address is checked against the segment's flags and range */
    struct gmc_open_report rep;
    dev = (gmc_device *)&state;
    assert_status(gmc_device_open_ex("sim:segs=1,seg1=0/0x200000/0x84/0/0/0x100000", &rep, &dev),
                  GMC_E_RULE_SEG_SYSMEM_END_WITHOUT_PARTIAL);
    assert_null(dev);
    assert_int_equal(rep.segment, 1);
    assert_status(gmc_device_open_ex("sim:segs=1,seg1=0x100000/0x200000/0x284/0/0/0x400000", &rep, &dev),
                  GMC_E_RULE_SEG_SYSMEM_END_OUTSIDE);
    assert_status(gmc_device_open_ex("sim:segs=1,seg1=0x100000/0x200000/0x284/0/0/0x80000", &rep, &dev),
                  GMC_E_RULE_SEG_SYSMEM_END_OUTSIDE);
    assert_status(gmc_device_open_ex("sim:segs=1,seg1=0/0x200000/0x284/0/0/0x100800", &rep, &dev),
                  GMC_E_RULE_SEG_SYSMEM_END_OUTSIDE); /* not on a page boundary */
    assert_null(dev);
}

/* ---------------------------------------------------- refusals */

static void test_power_refusals(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    gmc_handle h = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    struct gmc_power_report r;
    memset(&r, 0xFF, sizeof r);
    assert_status(gmc_device_power(NULL, GMC_POWER_STANDBY, &r), GMC_E_NULL_POINTER);
    assert_int_equal(r.allocations_preserved, 0);
    assert_status(gmc_device_power(dev, GMC_POWER_D0, &r), GMC_E_INVALID_ARG);
    assert_status(gmc_device_power(dev, (enum gmc_power_state)7, &r), GMC_E_INVALID_ARG);
    assert_status(gmc_device_resume(dev, &r), GMC_E_POWER_STATE);
    assert_status(gmc_device_resume(NULL, &r), GMC_E_NULL_POINTER);
    struct gmc_lock_map m;
    ok(gmc_lock(c, h, 0, &m));
    assert_status(gmc_device_power(dev, GMC_POWER_STANDBY, &r), GMC_E_LOCKED);
    assert_status(gmc_device_power(dev, GMC_POWER_HIBERNATE, &r), GMC_E_LOCKED);
    struct gmc_device_info di;
    ok(gmc_device_query(dev, &di));
    assert_int_equal(di.power_state, GMC_POWER_D0);
    ok(gmc_unlock(c, h));
    ok(gmc_device_power(dev, GMC_POWER_HIBERNATE, NULL));
    ok(gmc_device_query(dev, &di));
    assert_int_equal(di.power_state, GMC_POWER_HIBERNATE);
    ok(gmc_device_resume(dev, NULL));
    t_close(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_standby),
        cmocka_unit_test(test_default_hibernate),
        cmocka_unit_test(test_strapped_standby),
        cmocka_unit_test(test_strapped_hibernate),
        cmocka_unit_test(test_strapped_rules),
        cmocka_unit_test(test_partial_sysmem_end),
        cmocka_unit_test(test_power_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
