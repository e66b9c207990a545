/*
 * test_check.c - the pure rule predicates of gmc_check.h: every status each
 * one answers, from the rules as docs/residency.md and docs/host.md state
 * them, and that gmc_lock() on a device answers the same as
 * gmc_check_lock() for every combination of the flags the rule looks at.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gmc.h"
#include "gmc_check.h"
#include "gmc_status.h"

static struct gmc_alloc_desc desc(uint32_t flags, uint32_t kmt, uint32_t info2)
{
    struct gmc_alloc_desc d;
    gmc_alloc_desc_init(&d);
    d.size = 4096;
    d.flags = flags;
    d.kmt_flags = kmt;
    d.info2_flags = info2;
    d.supported_segments = GMC_SEGMENT_BIT(1) | GMC_SEGMENT_BIT(2); /* CPU-visible VRAM, banked VRAM */
    return d;
}

static void test_lock_rules(void **state)
{
    (void)state;
    static const struct {
        uint32_t flags, kmt, info2, lock;
        int by_creator, want;
    } cases[] = {
        { GMC_ALLOC_CPU_VISIBLE, 0, 0, 0, 1, GMC_OK },
        { GMC_ALLOC_CPU_VISIBLE_ON_DEMAND, 0, 0, 0, 1, GMC_OK },
        { 0, 0, GMC_INFO2_PRIMARY, 0, 1, GMC_OK },
        { 0, 0, 0, 0, 1, GMC_E_NOT_CPU_VISIBLE },
        { 0, 0, 0, GMC_LOCK_READ_ONLY, 1, GMC_E_NOT_CPU_VISIBLE },
        { GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PROTECTED, 0, 0, 0, 1, GMC_E_PROTECTED },
        { GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_HARDWARE_PROTECTED, 0, 0, GMC_LOCK_READ_ONLY, 1, GMC_E_PROTECTED },
        { GMC_ALLOC_CPU_VISIBLE, GMC_KMT_CREATE_RESOURCE | GMC_KMT_CREATE_SHARED, 0, 0, 0, GMC_E_NOT_CREATOR },
        { GMC_ALLOC_CPU_VISIBLE, GMC_KMT_CREATE_RESOURCE | GMC_KMT_CREATE_SHARED, 0, 0, 1, GMC_OK },
        { GMC_ALLOC_CPU_VISIBLE, 0, 0, 0, 0, GMC_OK }, /* not shared: any client that holds it */
        { GMC_ALLOC_CPU_VISIBLE, GMC_KMT_READ_ONLY, 0, 0, 1, GMC_E_READ_ONLY },
        { GMC_ALLOC_CPU_VISIBLE, GMC_KMT_READ_ONLY, 0, GMC_LOCK_WRITE_ONLY, 1, GMC_E_READ_ONLY },
        { GMC_ALLOC_CPU_VISIBLE, GMC_KMT_READ_ONLY, 0, GMC_LOCK_READ_ONLY, 1, GMC_OK },
        { GMC_ALLOC_CPU_VISIBLE, 0, 0, GMC_LOCK_READ_ONLY | GMC_LOCK_WRITE_ONLY, 1, GMC_E_LOCK_FLAGS },
        { GMC_ALLOC_CPU_VISIBLE, 0, 0, GMC_LOCK_READ_ONLY | GMC_LOCK_DISCARD, 1, GMC_E_LOCK_FLAGS },
        { GMC_ALLOC_CPU_VISIBLE, 0, 0, GMC_LOCK_WRITE_ONLY | GMC_LOCK_DISCARD, 1, GMC_OK },
        { 0, 0, 0, GMC_LOCK_READ_ONLY | GMC_LOCK_WRITE_ONLY, 1, GMC_E_LOCK_FLAGS }, /* flags first */
        { GMC_ALLOC_CPU_VISIBLE, 0, 0, 1u << 3, 1, GMC_E_INVALID_ARG },
        { GMC_ALLOC_CPU_VISIBLE, 0, 0, 1u << 31, 1, GMC_E_INVALID_ARG },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct gmc_alloc_desc d = desc(cases[i].flags, cases[i].kmt, cases[i].info2);
        int got = gmc_check_lock(&d, cases[i].lock, cases[i].by_creator);
        if (got != cases[i].want)
            fail_msg("case %zu: %s, expected %s", i, gmc_status_name(got), gmc_status_name(cases[i].want));
    }
    assert_int_equal(gmc_check_lock(NULL, 0, 1), GMC_E_NULL_POINTER);
}

static void test_locked_access(void **state)
{
    (void)state;
    assert_int_equal(gmc_check_locked_access(0, 1), GMC_OK);
    assert_int_equal(gmc_check_locked_access(0, 0), GMC_OK);
    assert_int_equal(gmc_check_locked_access(GMC_LOCK_READ_ONLY, 1), GMC_E_PERMISSION);
    assert_int_equal(gmc_check_locked_access(GMC_LOCK_READ_ONLY, 0), GMC_OK);
    assert_int_equal(gmc_check_locked_access(GMC_LOCK_WRITE_ONLY, 0), GMC_E_PERMISSION);
    assert_int_equal(gmc_check_locked_access(GMC_LOCK_WRITE_ONLY, 1), GMC_OK);
    assert_int_equal(gmc_check_locked_access(GMC_LOCK_DISCARD | GMC_LOCK_DONOT_WAIT, 0), GMC_OK);
}

static void test_share_kind(void **state)
{
    (void)state;
    struct gmc_alloc_desc d = desc(0, 0, 0);
    assert_int_equal(gmc_check_share_kind(&d), GMC_SHARE_NONE);
    d.kmt_flags = GMC_KMT_CREATE_RESOURCE;
    assert_int_equal(gmc_check_share_kind(&d), GMC_SHARE_NONE);
    d.kmt_flags = GMC_KMT_CREATE_RESOURCE | GMC_KMT_CREATE_SHARED;
    assert_int_equal(gmc_check_share_kind(&d), GMC_SHARE_GLOBAL);
    d.kmt_flags |= GMC_KMT_NT_SECURITY_SHARING;
    assert_int_equal(gmc_check_share_kind(&d), GMC_SHARE_NT);
    assert_int_equal(gmc_check_share_kind(NULL), GMC_SHARE_NONE);
}

static void test_power(void **state)
{
    (void)state;
    const enum gmc_power_state D0 = GMC_POWER_D0, SB = GMC_POWER_STANDBY, HB = GMC_POWER_HIBERNATE;
    assert_int_equal(gmc_check_power_change(D0, SB, 0), GMC_OK);
    assert_int_equal(gmc_check_power_change(D0, HB, 0), GMC_OK);
    assert_int_equal(gmc_check_power_change(D0, SB, 1), GMC_E_LOCKED);
    assert_int_equal(gmc_check_power_change(D0, HB, 7), GMC_E_LOCKED);
    assert_int_equal(gmc_check_power_change(SB, HB, 0), GMC_E_POWER_STATE);
    assert_int_equal(gmc_check_power_change(HB, SB, 1), GMC_E_POWER_STATE); /* state before locks */
    assert_int_equal(gmc_check_power_change(SB, D0, 0), GMC_OK);
    assert_int_equal(gmc_check_power_change(HB, D0, 0), GMC_OK);
    assert_int_equal(gmc_check_power_change(D0, D0, 0), GMC_E_POWER_STATE);
    assert_int_equal(gmc_check_power_change(D0, (enum gmc_power_state)3, 0), GMC_E_INVALID_ARG);
    assert_int_equal(gmc_check_powered(D0), GMC_OK);
    assert_int_equal(gmc_check_powered(SB), GMC_E_POWER_STATE);
    assert_int_equal(gmc_check_powered(HB), GMC_E_POWER_STATE);
}

static void test_priority(void **state)
{
    (void)state;
    struct gmc_alloc_desc d = desc(0, 0, 0);
    d.priority = GMC_PRIORITY_LOW;
    d.umd_priority = GMC_PRIORITY_HIGH;
    assert_int_equal(gmc_check_priority(&d), GMC_PRIORITY_LOW);
    d.info2_flags = GMC_INFO2_OVERRIDE_PRIORITY;
    assert_int_equal(gmc_check_priority(&d), GMC_PRIORITY_HIGH);
}

static void test_existing_sys_mem(void **state)
{
    (void)state;
    struct gmc_alloc_desc d = desc(GMC_ALLOC_PERMANENT_SYS_MEM | GMC_ALLOC_CPU_VISIBLE, 0, 0);
    assert_int_equal(gmc_check_existing_sys_mem(&d), 0);
    d = desc(GMC_ALLOC_EXISTING_SYS_MEM, 0, 0);
    assert_int_equal(gmc_check_existing_sys_mem(&d), 1);
    d = desc(GMC_ALLOC_EXISTING_KERNEL_SYS_MEM, 0, 0);
    assert_int_equal(gmc_check_existing_sys_mem(&d), 1);
    d = desc(0, GMC_KMT_EXISTING_SYS_MEM, 0);
    assert_int_equal(gmc_check_existing_sys_mem(&d), 1);
}

/* The library's gmc_lock() answers what the predicate answers, on the
 * model, for every combination of the flag bits the rule reads. */
static void test_lock_matches_device(void **state)
{
    (void)state;
    gmc_device *dev = NULL;
    assert_int_equal(gmc_device_open("sim", &dev), GMC_OK);
    gmc_client *c = NULL, *other = NULL;
    assert_int_equal(gmc_client_create(dev, NULL, &c), GMC_OK);
    assert_int_equal(gmc_client_create(dev, NULL, &other), GMC_OK);
    static const uint32_t flag_sets[] = { GMC_ALLOC_CPU_VISIBLE, GMC_ALLOC_CPU_VISIBLE_ON_DEMAND, 0,
                                          GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PROTECTED };
    static const uint32_t kmt_sets[] = { 0, GMC_KMT_READ_ONLY, GMC_KMT_CREATE_RESOURCE | GMC_KMT_CREATE_SHARED };
    static const uint32_t lock_sets[] = { 0, GMC_LOCK_READ_ONLY, GMC_LOCK_WRITE_ONLY,
                                          GMC_LOCK_READ_ONLY | GMC_LOCK_DISCARD, 1u << 4 };
    unsigned compared = 0;
    for (size_t f = 0; f < sizeof(flag_sets) / sizeof(flag_sets[0]); f++)
        for (size_t k = 0; k < sizeof(kmt_sets) / sizeof(kmt_sets[0]); k++)
            for (size_t l = 0; l < sizeof(lock_sets) / sizeof(lock_sets[0]); l++)
                for (int creator = 0; creator < 2; creator++) {
                    struct gmc_alloc_desc d = desc(flag_sets[f], kmt_sets[k], 0);
                    gmc_handle h = GMC_HANDLE_NONE, ho = GMC_HANDLE_NONE;
                    assert_int_equal(gmc_alloc_create(c, &d, &h), GMC_OK);
                    gmc_client *who = c;
                    gmc_handle wh = h;
                    if (!creator) {
                        struct gmc_alloc_info ai;
                        assert_int_equal(gmc_alloc_query(c, h, &ai), GMC_OK);
                        if (ai.share_handle == GMC_HANDLE_NONE) {
                            gmc_alloc_destroy(c, h);
                            continue; /* only a shared allocation has another holder */
                        }
                        assert_int_equal(gmc_alloc_open(other, ai.share_handle, &ho), GMC_OK);
                        who = other;
                        wh = ho;
                    }
                    struct gmc_lock_map m;
                    int got = gmc_lock(who, wh, lock_sets[l], &m);
                    int want = gmc_check_lock(&d, lock_sets[l], creator);
                    if (got != want)
                        fail_msg("flags 0x%x kmt 0x%x lock 0x%x creator %d: gmc_lock %s, gmc_check_lock %s",
                                 d.flags, d.kmt_flags, lock_sets[l], creator, gmc_status_name(got),
                                 gmc_status_name(want));
                    if (got == GMC_OK)
                        assert_int_equal(gmc_unlock(who, wh), GMC_OK);
                    if (ho != GMC_HANDLE_NONE)
                        assert_int_equal(gmc_alloc_destroy(other, ho), GMC_OK);
                    assert_int_equal(gmc_alloc_destroy(c, h), GMC_OK);
                    compared++;
                }
    /* 4 flag sets x 3 kmt sets x 5 lock sets by the creator (60), plus the
     * 4 x 5 on the shared kmt set by the other client (20). */
    assert_int_equal(compared, 80u);
    gmc_client_destroy(other);
    gmc_client_destroy(c);
    gmc_device_close(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lock_rules),  cmocka_unit_test(test_locked_access),
        cmocka_unit_test(test_share_kind),  cmocka_unit_test(test_power),
        cmocka_unit_test(test_priority),    cmocka_unit_test(test_existing_sys_mem),
        cmocka_unit_test(test_lock_matches_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
