/* Registers: reset values and access types from the generated map, bus
 * errors, strobes, 64-bit snapshots, the cycle counter, segment
 * descriptors (default and strapped) and the IRQ block. */
#include <stdio.h>
#include <string.h>

#include "gmc_test.h"

static int setup(void **state)
{
    *state = t_sim_new();
    return 0;
}

static int teardown(void **state)
{
    t_sim_free(*state);
    return 0;
}

/* Expected reset value of the registers a hardware parameter sets, for the
 * default configuration. Returns 0 when off is not such a register. */
static int param_reset(uint32_t off, uint32_t *v)
{
    static const struct {
        uint32_t off, val;
    } tab[] = {
        {GMC_REG_CAPS, GMC_CAPS_GART_MASK | GMC_CAPS_DMA_MASK | GMC_CAPS_PROTECTION_MASK | GMC_CAPS_SIM_STRAPS_MASK |
                           (GMC_DMA_ENGINE_FULL << GMC_CAPS_DMA_ENGINE_LSB) | (4u << GMC_CAPS_PROT_RANGES_LSB) | (64u << GMC_CAPS_COUNTER_BITS_LSB)},
        {GMC_REG_VRAM_SIZE, T_VRAM_BYTES},
        {GMC_REG_TLB_ENTRIES, T_TLB_ENTRIES},
        {GMC_REG_SEG_COUNT, 3},
        {GMC_REG_APERTURE_BASE, T_APERTURE_BASE},
        {GMC_REG_APERTURE_PAGES, T_APERTURE_PAGES},
        {GMC_REG_CPU_WINDOW_SIZE, T_WINDOW_BYTES},
        {GMC_REG_PT_BASE, T_PT_BASE_RESET},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (tab[i].off == off) {
            *v = tab[i].val;
            return 1;
        }
    return 0;
}

/* Reset values of every register instance, from the generated table. */
static void test_reset_values(void **state)
{
    gmc_sim *s = *state;
    unsigned checked = 0;
    for (unsigned r = 0; r < GMC_REG_TABLE_LEN; r++) {
        const struct gmc_reg_info *ri = &gmc_reg_table[r];
        for (uint32_t i = 0; i < ri->count; i++) {
            uint32_t off = ri->offset + i * ri->stride, want, got = t_rd(s, off);
            if (ri->access == GMC_REG_WO) {
                want = 0;
            } else if (!ri->reset_is_param) {
                want = ri->reset;
            } else if (param_reset(off, &want)) {
            } else {
                continue; /* segment descriptors: test_default_segments */
            }
            /* CNT_DMA_CLOCK_LO counts the DMA engine's clock edges: the
             * last reset cycle's, and one per register write since (the
             * set-up's), no more: the clock stops while the engine idles. */
            if (off == GMC_REG_CNT_DMA_CLOCK_LO) {
                if (got == 0 || got > 16) fail_msg("CNT_DMA_CLOCK_LO: %u edges since reset", got);
                checked++;
                continue;
            }
            if (got != want && strcmp(ri->name, "CYCLE_LO") != 0)
                fail_msg("%s[%u] (0x%04x): reset 0x%08x, expected 0x%08x", ri->name, i, off, got, want);
            checked++;
        }
    }
    /* Every non-segment register instance was checked. */
    assert_int_equal(checked, 88);
}

/* Access types: ro refuses writes with SLVERR and keeps its value; rw
 * takes exactly its writable bits; wo reads as zero. */
static void test_access_types(void **state)
{
    gmc_sim *s = *state;
    for (unsigned r = 0; r < GMC_REG_TABLE_LEN; r++) {
        const struct gmc_reg_info *ri = &gmc_reg_table[r];
        for (uint32_t i = 0; i < ri->count; i++) {
            uint32_t off = ri->offset + i * ri->stride;
            if (off == GMC_REG_CYCLE_LO || off == GMC_REG_CYCLE_HI) continue; /* running */
            uint32_t before = t_rd(s, off), v = 0;
            switch (ri->access) {
            case GMC_REG_RO:
                assert_int_equal(gmc_sim_reg_write(s, off, ~before), GMC_SIM_ESLVERR);
                /* Any write, refused or not, wakes the DMA engine for one
                 * clock edge (docs/dma.md, Clock gating). */
                if (off == GMC_REG_CNT_DMA_CLOCK_LO) {
                    assert_int_equal(t_rd(s, off), before + 1);
                    break;
                }
                if (t_rd(s, off) != before)
                    fail_msg("%s[%u]: read-only register changed on a refused write", ri->name, i);
                break;
            case GMC_REG_RW:
                if (off == GMC_REG_DMA_RING_SIZE) {
                    /* LOG2 reads back clamped to 12..20. */
                    t_wr(s, off, 0xFFFFFFFFu);
                    assert_int_equal(t_rd(s, off), 20);
                    t_wr(s, off, 0);
                    assert_int_equal(t_rd(s, off), 12);
                    t_wr(s, off, 16);
                    assert_int_equal(t_rd(s, off), 16);
                    t_wr(s, off, before);
                    break;
                }
                t_wr(s, off, 0xFFFFFFFFu);
                v = t_rd(s, off);
                if (v != ri->wmask) fail_msg("%s[%u]: wrote ~0, read 0x%08x, wmask 0x%08x", ri->name, i, v, ri->wmask);
                t_wr(s, off, 0);
                assert_int_equal(t_rd(s, off), 0);
                t_wr(s, off, before);
                assert_int_equal(t_rd(s, off), before);
                break;
            case GMC_REG_WO:
                /* Writing 0 has no effect on any wo register except the
                 * clears; it must be accepted, and it still reads 0. */
                assert_int_equal(gmc_sim_reg_write(s, off, 0), GMC_SIM_OK);
                assert_int_equal(gmc_sim_reg_read(s, off, &v), GMC_SIM_OK);
                assert_int_equal(v, 0);
                break;
            }
        }
    }
}

/* Offsets with no register answer DECERR on both channels; a read error
 * returns 0 in the out-parameter. */
static void test_unmapped(void **state)
{
    gmc_sim *s = *state;
    const uint32_t holes[] = {0x02C, 0x03C, 0x058, 0x0A0, 0x104, 0x134, 0x204, 0x238, 0x3FC, 0x4A0, 0xFFFC};
    for (size_t i = 0; i < sizeof holes / sizeof holes[0]; i++) {
        uint32_t v = 0xdeadbeef;
        assert_int_equal(gmc_sim_reg_read(s, holes[i], &v), GMC_SIM_EDECERR);
        assert_int_equal(v, 0);
        assert_int_equal(gmc_sim_reg_write(s, holes[i], 1), GMC_SIM_EDECERR);
    }
    /* Not a register in the table either: the generated map agrees. */
    for (unsigned r = 0; r < GMC_REG_TABLE_LEN; r++)
        for (uint32_t i = 0; i < gmc_reg_table[r].count; i++)
            for (size_t k = 0; k < sizeof holes / sizeof holes[0]; k++)
                assert_int_not_equal(gmc_reg_table[r].offset + i * gmc_reg_table[r].stride, holes[k]);
}

static void test_bad_args(void **state)
{
    gmc_sim *s = *state;
    uint32_t v = 7;
    assert_int_equal(gmc_sim_reg_read(s, 0x002, &v), GMC_SIM_EINVAL);
    assert_int_equal(v, 0);
    assert_int_equal(gmc_sim_reg_read(s, 0x10000, &v), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_reg_read(s, 0, NULL), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_reg_read(NULL, 0, &v), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_reg_write(s, 0x029, 1), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_reg_write_strb(s, GMC_REG_SCRATCH, 1, 0x10), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_reg_write(NULL, 0, 0), GMC_SIM_EINVAL);
    uint64_t q = 9;
    assert_int_equal(gmc_sim_reg_read64(s, 0xFFFC, &q), GMC_SIM_EINVAL);
    assert_int_equal(q, 0);
    assert_int_equal(gmc_sim_reg_read64(s, GMC_REG_CYCLE_LO, NULL), GMC_SIM_EINVAL);
    /* Nothing above reached the bus. */
    struct gmc_sim_stats st;
    assert_int_equal(gmc_sim_get_stats(s, &st), GMC_SIM_OK);
    assert_int_equal(st.reg_reads + st.reg_writes, 0);
}

/* Byte strobes select the bytes a write changes. */
static void test_strobes(void **state)
{
    gmc_sim *s = *state;
    t_wr(s, GMC_REG_SCRATCH, 0x11223344);
    assert_int_equal(gmc_sim_reg_write_strb(s, GMC_REG_SCRATCH, 0xAABBCCDD, 0x5), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_SCRATCH), 0x11BB33DD);
    assert_int_equal(gmc_sim_reg_write_strb(s, GMC_REG_SCRATCH, 0xAABBCCDD, 0x0), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_SCRATCH), 0x11BB33DD);
    assert_int_equal(gmc_sim_reg_write_strb(s, GMC_REG_SCRATCH, 0xAABBCCDD, 0x8), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_SCRATCH), 0xAABB33DD);
}

/* The cycle counter runs once per clock, and a LO/HI read is consistent. */
static void test_cycle_counter(void **state)
{
    gmc_sim *s = *state;
    uint32_t a = t_rd(s, GMC_REG_CYCLE_LO);
    uint64_t m0 = gmc_sim_cycles(s);
    assert_int_equal(gmc_sim_step(s, 1000), GMC_SIM_OK);
    uint32_t b = t_rd(s, GMC_REG_CYCLE_LO);
    uint64_t m1 = gmc_sim_cycles(s);
    /* The hardware counter advanced by exactly the cycles the model ran. */
    assert_int_equal((uint32_t)(b - a), (uint32_t)(m1 - m0));
    /* 64-bit reads are monotonic. */
    uint64_t c0 = t_rd64(s, GMC_REG_CYCLE_LO), c1 = t_rd64(s, GMC_REG_CYCLE_LO);
    assert_true(c1 > c0);
    /* Reset restarts it. */
    assert_int_equal(gmc_sim_reset(s, 1), GMC_SIM_OK);
    assert_true(t_rd64(s, GMC_REG_CYCLE_LO) < 16);
}

/* Defaults: the three segments of docs/architecture.md 3.3. */
static void test_default_segments(void **state)
{
    gmc_sim *s = *state;
    const struct gmc_sim_segment want[3] = {
        {0, T_WINDOW_BYTES, 0, GMC_SEGFLAGS_CPU_VISIBLE_MASK | GMC_SEGFLAGS_PRESERVED_DURING_STANDBY_MASK, 0, 0},
        {T_WINDOW_BYTES, T_PT_BASE_RESET - T_WINDOW_BYTES, 0,
         GMC_SEGFLAGS_USE_BANKING_MASK | GMC_SEGFLAGS_PRESERVED_DURING_STANDBY_MASK, 4, 0},
        {T_APERTURE_BASE, (uint64_t)T_APERTURE_PAGES * 4096, 0,
         GMC_SEGFLAGS_APERTURE_MASK | GMC_SEGFLAGS_CACHE_COHERENT_MASK |
             GMC_SEGFLAGS_PRESERVED_DURING_STANDBY_MASK | GMC_SEGFLAGS_PRESERVED_DURING_HIBERNATE_MASK,
         0, 0},
    };
    assert_int_equal(t_rd(s, GMC_REG_SEG_COUNT), 3);
    for (unsigned i = 0; i < 4; i++) {
        struct gmc_sim_segment z = {0, 0, 0, 0, 0, 0};
        const struct gmc_sim_segment *w = i < 3 ? &want[i] : &z;
        assert_int_equal(t_rd64(s, GMC_REG_SEG_BASE_LO_N(i)), w->base);
        assert_int_equal(t_rd64(s, GMC_REG_SEG_SIZE_LO_N(i)), w->size);
        assert_int_equal(t_rd(s, GMC_REG_SEG_FLAGS_N(i)), w->flags);
        assert_int_equal(t_rd64(s, GMC_REG_SEG_CPU_OFFSET_LO_N(i)), w->cpu_offset);
        assert_int_equal(t_rd(s, GMC_REG_SEG_BANKS_N(i)), w->banks);
        assert_int_equal(t_rd64(s, GMC_REG_SEG_SYSMEM_END_LO_N(i)), 0); /* no partial segment */
    }

    /* The VRAM segments and the page table tile VRAM exactly. */
    assert_int_equal(want[1].base + want[1].size, t_rd(s, GMC_REG_PT_BASE));
}

/* Strapped descriptors reach the registers and survive reset. */
static void test_strapped_segments(void **state)
{
    (void)state;
    struct gmc_sim_config cfg;
    gmc_sim_config_default(&cfg);
    cfg.strap_segments = 1;
    cfg.seg_count = 4;
    for (unsigned i = 0; i < 4; i++) {
        cfg.seg[i].base = 0x123456789000ull + i * 0x1000000ull;
        cfg.seg[i].size = 0x200000000ull + i;
        cfg.seg[i].cpu_offset = 0xabc000000ull * (i + 1);
        cfg.seg[i].flags = 0x8001u << i;
        cfg.seg[i].banks = (uint8_t)(i * 3);
        cfg.seg[i].sysmem_end = 0xfedcba987000ull - i * 0x11000ull;
    }
    gmc_sim *s = t_sim_new_cfg(&cfg);
    for (int pass = 0; pass < 2; pass++) {
        assert_int_equal(t_rd(s, GMC_REG_SEG_COUNT), 4);
        assert_true(t_rd(s, GMC_REG_CAPS) & GMC_CAPS_SIM_STRAPS_MASK);
        for (unsigned i = 0; i < 4; i++) {
            assert_int_equal(t_rd64(s, GMC_REG_SEG_BASE_LO_N(i)), cfg.seg[i].base);
            assert_int_equal(t_rd64(s, GMC_REG_SEG_SIZE_LO_N(i)), cfg.seg[i].size);
            assert_int_equal(t_rd64(s, GMC_REG_SEG_CPU_OFFSET_LO_N(i)), cfg.seg[i].cpu_offset);
            assert_int_equal(t_rd(s, GMC_REG_SEG_FLAGS_N(i)), cfg.seg[i].flags);
            assert_int_equal(t_rd(s, GMC_REG_SEG_BANKS_N(i)), cfg.seg[i].banks);
            assert_int_equal(t_rd(s, GMC_REG_SEG_SYSMEM_END_LO_N(i)), (uint32_t)cfg.seg[i].sysmem_end);
            assert_int_equal(t_rd(s, GMC_REG_SEG_SYSMEM_END_HI_N(i)), (uint32_t)(cfg.seg[i].sysmem_end >> 32));
        }
        assert_int_equal(gmc_sim_reset(s, 4), GMC_SIM_OK);
    }
    t_sim_free(s);

    cfg.seg_count = 5;
    gmc_sim *bad = (gmc_sim *)1;
    assert_int_equal(gmc_sim_create(&cfg, &bad), GMC_SIM_EINVAL);
    assert_null(bad);
}

struct irq_log {
    int changes;
    int level;
    uint64_t cycle;
};

static void on_irq(void *user, int level, uint64_t cycle)
{
    struct irq_log *l = user;
    l->changes++;
    l->level = level;
    l->cycle = cycle;
}

/* IRQ: a source latches in IRQ_STATUS, reaches the line only when masked
 * in, and drops on acknowledge; the callback sees each edge. */
static void test_irq(void **state)
{
    gmc_sim *s = *state;
    struct irq_log log = {0, 0, 0};
    gmc_sim_set_irq_callback(s, on_irq, &log);
    uint8_t b[8];

    assert_int_equal(gmc_sim_aperture_read(s, T_WINDOW_BYTES, b, 8), GMC_SIM_EDECERR);
    assert_int_equal(t_rd(s, GMC_REG_IRQ_STATUS), GMC_IRQ_APERTURE_FAULT_MASK);
    assert_int_equal(gmc_sim_irq(s), 0); /* masked */
    assert_int_equal(log.changes, 0);

    t_wr(s, GMC_REG_IRQ_MASK, GMC_IRQ_APERTURE_FAULT_MASK);
    assert_int_equal(gmc_sim_irq(s), 1);
    assert_int_equal(log.changes, 1);
    assert_int_equal(log.level, 1);

    /* Acknowledging another source changes nothing. */
    t_wr(s, GMC_REG_IRQ_ACK, GMC_IRQ_XLATE_DONE_MASK);
    assert_int_equal(gmc_sim_irq(s), 1);

    t_wr(s, GMC_REG_IRQ_ACK, GMC_IRQ_APERTURE_FAULT_MASK);
    assert_int_equal(t_rd(s, GMC_REG_IRQ_STATUS), 0);
    assert_int_equal(gmc_sim_irq(s), 0);
    assert_int_equal(log.changes, 2);
    assert_int_equal(log.level, 0);
    assert_true(log.cycle <= gmc_sim_cycles(s));

    /* A translation raises XLATE_DONE. */
    t_wr(s, GMC_REG_IRQ_MASK, GMC_IRQ_XLATE_DONE_MASK);
    struct t_xlate x = t_translate(s, 0, 0); /* outside the aperture */
    assert_true(x.status & GMC_XLATE_STATUS_FAULT_MASK);
    assert_int_equal(t_rd(s, GMC_REG_IRQ_STATUS), GMC_IRQ_XLATE_DONE_MASK);
    assert_int_equal(gmc_sim_irq(s), 1);
    assert_int_equal(log.changes, 3);
    t_wr(s, GMC_REG_IRQ_ACK, 0xFFFFFFFFu);
    assert_int_equal(gmc_sim_irq(s), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reset_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_access_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unmapped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_args, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strobes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cycle_counter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_segments, setup, teardown),
        cmocka_unit_test(test_strapped_segments),
        cmocka_unit_test_setup_teardown(test_irq, setup, teardown),
    };
    return cmocka_run_group_tests_name("registers", tests, NULL, NULL);
}
