/* GART through the debug translation port: hits, misses and refills,
 * invalid entries, permissions, the dummy page, invalidation and TLB
 * capacity. The page table is placed in the CPU-visible window, so the
 * tests write PTEs through the aperture, as a driver without the DMA
 * engine would. */
#include <string.h>

#include "gmc_test.h"

#define PT 0x100000u
#define DUMMY 0x7ff000u

#define PTE_RW (GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK)

static int setup(void **state)
{
    gmc_sim *s = t_sim_new();
    t_wr(s, GMC_REG_PT_BASE, PT);
    t_wr(s, GMC_REG_DUMMY_PAGE_LO, DUMMY);
    t_wr(s, GMC_REG_DUMMY_PAGE_HI, 0);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    t_sim_free(*state);
    return 0;
}

static void set_pte(gmc_sim *s, uint32_t page, uint64_t pte)
{
    assert_int_equal(gmc_sim_aperture_write(s, PT + 8 * page, &pte, 8), GMC_SIM_OK);
}

static uint32_t va(uint32_t page, uint32_t off)
{
    return T_APERTURE_BASE + page * 4096u + off;
}

struct counts {
    uint64_t hit, miss, dummy;
};

static struct counts counts(gmc_sim *s)
{
    struct counts c = {t_rd64(s, GMC_REG_CNT_TLB_HIT_LO), t_rd64(s, GMC_REG_CNT_TLB_MISS_LO),
                       t_rd64(s, GMC_REG_CNT_DUMMY_HIT_LO)};
    return c;
}

static void assert_ok(struct t_xlate x, uint64_t addr, int hit)
{
    if (x.status & GMC_XLATE_STATUS_FAULT_MASK)
        fail_msg("translation faulted, code %u", T_XL_CODE(x.status));
    assert_int_equal(x.addr, addr);
    assert_int_equal(!!(x.status & GMC_XLATE_STATUS_HIT_MASK), hit);
}

static void assert_fault_code(struct t_xlate x, unsigned code)
{
    assert_true(x.status & GMC_XLATE_STATUS_FAULT_MASK);
    assert_int_equal(T_XL_CODE(x.status), code);
}

/* A miss walks the table and fills the TLB; the next access hits. */
static void test_hit_miss_refill(void **state)
{
    gmc_sim *s = *state;
    set_pte(s, 5, PTE_RW | GMC_PTE_SNOOPED_MASK | 0xABCDE000ull);
    set_pte(s, 4095, PTE_RW | 0xFFFFFFFFF000ull);
    t_wr(s, GMC_REG_CNT_CLEAR, 1);

    struct t_xlate x = t_translate(s, va(5, 0x123), 0);
    assert_ok(x, 0xABCDE123ull, 0);
    assert_true(x.status & GMC_XLATE_STATUS_SYSTEM_MASK);
    assert_ok(t_translate(s, va(5, 0xFFF), 1), 0xABCDEFFFull, 1);
    assert_ok(t_translate(s, va(5, 0), 0), 0xABCDE000ull, 1);
    /* The last page of the aperture and the widest page address. */
    assert_ok(t_translate(s, va(4095, 0x7), 0), 0xFFFFFFFFF007ull, 0);
    struct counts c = counts(s);
    assert_int_equal(c.miss, 2);
    assert_int_equal(c.hit, 2);
    assert_int_equal(c.dummy, 0);

    /* A hit costs fewer cycles than a miss, which reads VRAM. */
    uint64_t t0 = gmc_sim_cycles(s);
    t_translate(s, va(5, 0), 0);
    uint64_t hit_cycles = gmc_sim_cycles(s) - t0;
    set_pte(s, 6, PTE_RW | 0x1000ull);
    t0 = gmc_sim_cycles(s);
    t_translate(s, va(6, 0), 0);
    uint64_t miss_cycles = gmc_sim_cycles(s) - t0;
    assert_true(miss_cycles >= hit_cycles);
}

/* Outside the aperture, an invalid entry, or a missing permission. */
static void test_faults(void **state)
{
    gmc_sim *s = *state;
    set_pte(s, 1, 0x55555000ull | GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK); /* not VALID */
    set_pte(s, 2, GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_READABLE_MASK | 0x2000ull);
    set_pte(s, 3, GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_WRITEABLE_MASK | 0x3000ull);

    assert_fault_code(t_translate(s, T_APERTURE_BASE - 1, 0), GMC_XLATE_CODE_RANGE);
    assert_fault_code(t_translate(s, va(T_APERTURE_PAGES, 0), 0), GMC_XLATE_CODE_RANGE);
    assert_fault_code(t_translate(s, 0, 1), GMC_XLATE_CODE_RANGE);
    assert_fault_code(t_translate(s, va(1, 8), 0), GMC_XLATE_CODE_INVALID);
    assert_fault_code(t_translate(s, va(1, 8), 1), GMC_XLATE_CODE_INVALID);
    assert_fault_code(t_translate(s, va(2, 0), 1), GMC_XLATE_CODE_NO_WRITE);
    assert_ok(t_translate(s, va(2, 0), 0), 0x2000ull, 1); /* the miss above filled it */
    assert_fault_code(t_translate(s, va(2, 0), 1), GMC_XLATE_CODE_NO_WRITE); /* from the TLB */
    assert_fault_code(t_translate(s, va(3, 0), 0), GMC_XLATE_CODE_NO_READ);
    assert_ok(t_translate(s, va(3, 4), 1), 0x3004ull, 1);
    /* Invalid entries are never cached: fixing the PTE takes effect at once. */
    set_pte(s, 1, PTE_RW | 0x55555000ull);
    assert_ok(t_translate(s, va(1, 8), 0), 0x55555008ull, 0);
    /* A local (non-SYSTEM) page is reported as such. */
    set_pte(s, 7, GMC_PTE_VALID_MASK | GMC_PTE_READABLE_MASK | 0x7000ull);
    struct t_xlate x = t_translate(s, va(7, 0), 0);
    assert_ok(x, 0x7000ull, 0);
    assert_false(x.status & GMC_XLATE_STATUS_SYSTEM_MASK);
}

/* Translations that land on the dummy page are flagged and counted. */
static void test_dummy_page(void **state)
{
    gmc_sim *s = *state;
    for (uint32_t p = 10; p < 13; p++) set_pte(s, p, PTE_RW | DUMMY);
    set_pte(s, 13, PTE_RW | (DUMMY + 0x1000ull));
    t_wr(s, GMC_REG_CNT_CLEAR, 1);
    for (uint32_t p = 10; p < 13; p++) {
        struct t_xlate x = t_translate(s, va(p, 0x40), 0);
        assert_ok(x, DUMMY + 0x40ull, 0);
        assert_true(x.status & GMC_XLATE_STATUS_DUMMY_MASK);
    }
    struct t_xlate x = t_translate(s, va(10, 0), 1);
    assert_true(x.status & GMC_XLATE_STATUS_DUMMY_MASK);
    x = t_translate(s, va(13, 0), 0);
    assert_false(x.status & GMC_XLATE_STATUS_DUMMY_MASK);
    assert_int_equal(counts(s).dummy, 4);
    /* A faulting access is not a dummy hit. */
    set_pte(s, 14, GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | DUMMY);
    assert_fault_code(t_translate(s, va(14, 0), 0), GMC_XLATE_CODE_NO_READ);
    assert_int_equal(counts(s).dummy, 4);
    /* Moving the dummy page register changes what counts. */
    t_wr(s, GMC_REG_DUMMY_PAGE_LO, DUMMY + 0x1000u);
    assert_true(t_translate(s, va(13, 0), 0).status & GMC_XLATE_STATUS_DUMMY_MASK);
    assert_int_equal(counts(s).dummy, 5);
}

/* The TLB caches PTEs until invalidated, by page or all at once. */
static void test_invalidation(void **state)
{
    gmc_sim *s = *state;
    set_pte(s, 20, PTE_RW | 0x20000ull);
    set_pte(s, 21, PTE_RW | 0x21000ull);
    assert_ok(t_translate(s, va(20, 0), 0), 0x20000ull, 0);
    assert_ok(t_translate(s, va(21, 0), 0), 0x21000ull, 0);

    /* Rewriting the PTEs alone leaves the cached ones in use. */
    set_pte(s, 20, PTE_RW | 0x99000ull);
    set_pte(s, 21, PTE_RW | 0x98000ull);
    assert_ok(t_translate(s, va(20, 0), 0), 0x20000ull, 1);
    assert_ok(t_translate(s, va(21, 0), 0), 0x21000ull, 1);

    /* By page: only page 20 is re-read. */
    t_wr(s, GMC_REG_TLB_INV_PAGE, 20);
    assert_ok(t_translate(s, va(20, 0), 0), 0x99000ull, 0);
    assert_ok(t_translate(s, va(21, 0), 0), 0x21000ull, 1);

    /* An out-of-range page index drops nothing. */
    t_wr(s, GMC_REG_TLB_INV_PAGE, T_APERTURE_PAGES + 20);
    assert_ok(t_translate(s, va(20, 0), 0), 0x99000ull, 1);

    /* All. */
    t_wr(s, GMC_REG_TLB_INV_ALL, 1);
    assert_ok(t_translate(s, va(20, 0), 0), 0x99000ull, 0);
    assert_ok(t_translate(s, va(21, 0), 0), 0x98000ull, 0);

    /* Unmapping points the page at the dummy page and invalidates it. */
    set_pte(s, 21, PTE_RW | DUMMY);
    t_wr(s, GMC_REG_TLB_INV_PAGE, 21);
    assert_true(t_translate(s, va(21, 0), 0).status & GMC_XLATE_STATUS_DUMMY_MASK);

    /* Reset empties the TLB (and restores PT_BASE). */
    assert_int_equal(gmc_sim_reset(s, 2), GMC_SIM_OK);
    t_wr(s, GMC_REG_PT_BASE, PT);
    assert_ok(t_translate(s, va(20, 0), 0), 0x99000ull, 0);
}

/* More pages than entries: the TLB holds exactly TLB_ENTRIES of them. */
static void test_capacity(void **state)
{
    gmc_sim *s = *state;
    const uint32_t n = t_rd(s, GMC_REG_TLB_ENTRIES);
    assert_int_equal(n, T_TLB_ENTRIES);
    for (uint32_t p = 0; p <= n; p++) set_pte(s, 100 + p, PTE_RW | ((uint64_t)(p + 1) << 12));
    t_wr(s, GMC_REG_CNT_CLEAR, 1);
    for (uint32_t p = 0; p < n; p++) t_translate(s, va(100 + p, 0), 0);
    for (uint32_t p = 0; p < n; p++) assert_ok(t_translate(s, va(100 + p, 0), 0), (uint64_t)(p + 1) << 12, 1);
    struct counts c = counts(s);
    assert_int_equal(c.miss, n);
    assert_int_equal(c.hit, n);
    /* One more page evicts exactly one entry (round robin from entry 0). */
    assert_ok(t_translate(s, va(100 + n, 0), 0), (uint64_t)(n + 1) << 12, 0);
    /* Entry 0 (page 100) was the victim: the other pages and the new one
     * still hit, page 100 misses. */
    for (uint32_t p = 1; p <= n; p++)
        assert_ok(t_translate(s, va(100 + p, 0), 0), (uint64_t)(p + 1) << 12, 1);
    assert_ok(t_translate(s, va(100, 0), 0), 1ull << 12, 0);
    /* That refill took entry 1 (page 101), the next in round-robin order;
     * refilling 101 takes entry 2 (page 102); page 103 is untouched. */
    assert_ok(t_translate(s, va(101, 0), 0), 2ull << 12, 0);
    assert_ok(t_translate(s, va(103, 0), 0), 4ull << 12, 1);
    assert_ok(t_translate(s, va(102, 0), 0), 3ull << 12, 0);
}

/* GO while busy is ignored and the port does not wedge. */
static void test_go_while_busy(void **state)
{
    gmc_sim *s = *state;
    set_pte(s, 30, PTE_RW | 0x30000ull);
    t_wr(s, GMC_REG_XLATE_ADDR, va(30, 0));
    t_wr(s, GMC_REG_XLATE_CTRL, GMC_XLATE_CTRL_GO_MASK);
    t_wr(s, GMC_REG_XLATE_ADDR, va(31, 0));
    t_wr(s, GMC_REG_XLATE_CTRL, GMC_XLATE_CTRL_GO_MASK);
    uint32_t st;
    do st = t_rd(s, GMC_REG_XLATE_STATUS);
    while (st & GMC_XLATE_STATUS_BUSY_MASK);
    assert_true(st & GMC_XLATE_STATUS_DONE_MASK);
    /* A GO with the bit clear does not start anything. */
    t_wr(s, GMC_REG_XLATE_CTRL, GMC_XLATE_CTRL_WRITE_MASK);
    assert_int_equal(t_rd(s, GMC_REG_XLATE_STATUS), st);
    assert_ok(t_translate(s, va(30, 0), 0), 0x30000ull, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hit_miss_refill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dummy_page, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalidation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capacity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_go_while_busy, setup, teardown),
    };
    return cmocka_run_group_tests_name("gart", tests, NULL, NULL);
}
