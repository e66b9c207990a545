/* DMA engine clock gating (docs/dma.md, Clock gating): the engine's clock
 * stops while it is quiet, a register write wakes it for exactly the edge
 * after the write, DMA_CTRL.CLOCK_ON keeps it running, and CNT_DMA_CLOCK
 * counts the edges it had. That gating changes nothing the engine does is
 * checked by test_dma_random (test_random_clock_gate); here a transfer
 * gives the same cycles and data both ways too. */
#include <stdlib.h>
#include <string.h>

#include "gmc_dma_pkt.h"
#include "gmc_test.h"

#define RING_BUS 0x200000000ull
#define WAIT 500000u

struct fx {
    gmc_sim *s;
    struct gmc_ring r;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->s = t_sim_new();
    assert_int_equal(gmc_ring_init(&f->r, f->s, RING_BUS, 12, 16 * GMC_PAGE_SIZE), GMC_SIM_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    gmc_ring_fini(&f->r);
    t_sim_free(f->s);
    free(f);
    return 0;
}

static uint64_t clock_edges(gmc_sim *s)
{
    return t_rd64(s, GMC_REG_CNT_DMA_CLOCK_LO);
}

/* An idle engine has no clock edge at all, however long it waits; reads
 * do not wake it. */
static void test_idle_clock_stops(void **state)
{
    struct fx *f = *state;
    assert_int_equal(gmc_sim_step(f->s, 64), GMC_SIM_OK); /* the ring set-up's writes are past */
    assert_int_equal(t_rd(f->s, GMC_REG_DMA_STATUS) & GMC_DMA_STATUS_STATE_MASK, GMC_DMA_STATE_IDLE);
    const uint64_t e0 = clock_edges(f->s);
    assert_int_equal(gmc_sim_step(f->s, 5000), GMC_SIM_OK);
    for (int i = 0; i < 10; i++) (void)t_rd(f->s, GMC_REG_DMA_STATUS);
    assert_int_equal(clock_edges(f->s), e0);
}

/* A register write, to any register, wakes the engine for the one edge
 * after it: its inputs change only through writes. */
static void test_write_wakes_one_edge(void **state)
{
    struct fx *f = *state;
    assert_int_equal(gmc_sim_step(f->s, 64), GMC_SIM_OK);
    const uint64_t e0 = clock_edges(f->s);
    t_wr(f->s, GMC_REG_SCRATCH, 0x1234u);
    assert_int_equal(gmc_sim_step(f->s, 100), GMC_SIM_OK);
    assert_int_equal(clock_edges(f->s), e0 + 1);
    for (uint32_t i = 0; i < 5; i++) t_wr(f->s, GMC_REG_SCRATCH, i);
    assert_int_equal(gmc_sim_step(f->s, 100), GMC_SIM_OK);
    assert_int_equal(clock_edges(f->s), e0 + 6);
}

/* CLOCK_ON: an edge in every cycle, counted exactly. Cleared, the clock
 * stops again. */
static void test_clock_on(void **state)
{
    struct fx *f = *state;
    t_wr(f->s, GMC_REG_DMA_CTRL, GMC_DMA_CTRL_ENABLE_MASK | GMC_DMA_CTRL_CLOCK_ON_MASK);
    assert_int_equal(t_rd(f->s, GMC_REG_DMA_CTRL), GMC_DMA_CTRL_ENABLE_MASK | GMC_DMA_CTRL_CLOCK_ON_MASK);
    const uint64_t c0 = gmc_sim_cycles(f->s);
    const uint64_t e0 = clock_edges(f->s);
    assert_int_equal(gmc_sim_step(f->s, 777), GMC_SIM_OK);
    const uint64_t c1 = gmc_sim_cycles(f->s);
    const uint64_t e1 = clock_edges(f->s);
    /* Both reads sample the counter at the same point of their access. */
    assert_int_equal(e1 - e0, c1 - c0);

    t_wr(f->s, GMC_REG_DMA_CTRL, GMC_DMA_CTRL_ENABLE_MASK);
    assert_int_equal(gmc_sim_step(f->s, 64), GMC_SIM_OK);
    const uint64_t e2 = clock_edges(f->s);
    assert_int_equal(gmc_sim_step(f->s, 1000), GMC_SIM_OK);
    assert_int_equal(clock_edges(f->s), e2);
}

/* A 64 KiB VRAM copy and a fence: the same cycle count and data with the
 * clock gated and with CLOCK_ON; the gated engine's clock runs through the
 * whole busy time and stops after it. */
static uint64_t copy_run(int clock_on, uint64_t *edges, uint64_t *busy, uint64_t *hash)
{
    gmc_sim *s = t_sim_new();
    struct gmc_ring r;
    assert_int_equal(gmc_ring_init(&r, s, RING_BUS, 12, 16 * GMC_PAGE_SIZE), GMC_SIM_OK);
    t_wr(s, GMC_REG_DMA_CTRL, GMC_DMA_CTRL_ENABLE_MASK | (clock_on ? GMC_DMA_CTRL_CLOCK_ON_MASK : 0));
    uint8_t *buf = malloc(64 << 10);
    assert_non_null(buf);
    uint64_t rng = 0xC0FFEEull;
    t_fill_random(buf, 64 << 10, &rng);
    assert_int_equal(gmc_sim_aperture_write(s, 0x10000, buf, 64 << 10), GMC_SIM_OK); /* window offset = VRAM address */
    struct gmc_side src = {0, 0x10000 + 3, 0, 0}, dst = {0, 0x40000 + 5, 0, 0};
    struct gmc_pkt pk[2] = {gmc_pkt_transfer(src, dst, (64 << 10) - 9), gmc_pkt_fence(7, 0, 0, 0)};
    assert_int_equal(gmc_ring_put(&r, pk, 2), GMC_SIM_OK);
    assert_int_equal(gmc_ring_kick(&r), GMC_SIM_OK);
    assert_int_equal(gmc_ring_wait(&r, (uint64_t)WAIT * t_dma_slowdown(s), 16), GMC_SIM_OK);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), 7);
    assert_int_equal(gmc_sim_step(s, 500), GMC_SIM_OK);
    uint8_t *out = malloc(64 << 10);
    assert_non_null(out);
    assert_int_equal(gmc_sim_vram_peek(s, 0x40000 + 5, out, (64 << 10) - 9), GMC_SIM_OK);
    assert_memory_equal(out, buf + 3, (64 << 10) - 9);
    *hash = t_vram_hash(s, 0, T_VRAM_BYTES);
    *busy = t_rd64(s, GMC_REG_CNT_DMA_BUSY_LO);
    *edges = t_rd64(s, GMC_REG_CNT_DMA_CLOCK_LO);
    const uint64_t cycles = gmc_sim_cycles(s);
    free(out);
    free(buf);
    gmc_ring_fini(&r);
    t_sim_free(s);
    return cycles;
}

static void test_copy_same_both_ways(void **state)
{
    (void)state;
    uint64_t e_on, b_on, h_on, e_g, b_g, h_g;
    const uint64_t c_on = copy_run(1, &e_on, &b_on, &h_on);
    const uint64_t c_g = copy_run(0, &e_g, &b_g, &h_g);
    assert_int_equal(c_g, c_on);
    assert_int_equal(h_g, h_on);
    assert_int_equal(b_g, b_on);
    assert_true(b_g > 8000); /* 64 KiB at 8 bytes a cycle */
    /* Gated: every busy cycle has its edge, and the 500 idle cycles at the
     * end, among others, have none. */
    assert_true(e_g >= b_g);
    assert_true(e_g + 500 <= e_on);
}

/* A reset as short as one cycle right after the engine ran: the engine
 * must not run on its copies of the pre-reset registers (ENABLE, the old
 * TAIL): no host read, no packet, no clock edge once the reset is over,
 * and CNT_DMA_CLOCK starts again from zero. Then a doorbell works. */
static void test_short_reset_after_work(void **state)
{
    struct fx *f = *state;
    for (unsigned r = 1; r <= 2; r++) {
        struct gmc_pkt pk[4];
        for (unsigned i = 0; i < 4; i++) pk[i] = gmc_pkt_fence(100 + i, 0, 0, 0);
        assert_int_equal(gmc_ring_put(&f->r, pk, 4), GMC_SIM_OK);
        assert_int_equal(gmc_ring_kick(&f->r), GMC_SIM_OK);
        assert_int_equal(gmc_ring_wait(&f->r, WAIT, 16), GMC_SIM_OK);
        assert_int_equal(t_rd64(f->s, GMC_REG_DMA_FENCE_LO), 103);

        assert_int_equal(gmc_sim_reset(f->s, r), GMC_SIM_OK);
        struct gmc_sim_stats st0, st1;
        assert_int_equal(gmc_sim_get_stats(f->s, &st0), GMC_SIM_OK);
        assert_int_equal(gmc_sim_step(f->s, 2000), GMC_SIM_OK);
        assert_int_equal(gmc_sim_get_stats(f->s, &st1), GMC_SIM_OK);
        assert_int_equal(st1.host_read_beats, st0.host_read_beats);
        assert_int_equal(t_rd(f->s, GMC_REG_DMA_CTRL), 0);
        assert_int_equal(t_rd(f->s, GMC_REG_DMA_RING_HEAD), 0);
        assert_int_equal(t_rd(f->s, GMC_REG_DMA_STATUS) & GMC_DMA_STATUS_STATE_MASK, GMC_DMA_STATE_IDLE);
        assert_int_equal(t_rd64(f->s, GMC_REG_DMA_FENCE_LO), 0);
        assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_PACKETS_LO), 0);
        /* The edge of the engine's extra reset cycle (the micro-sequenced
         * engine: those of its microcode's start-up), and none after it. */
        const uint64_t e_rst = t_rd64(f->s, GMC_REG_CNT_DMA_CLOCK_LO);
        assert_true(e_rst >= 1 && e_rst <= t_dma_reset_edges(f->s));
        assert_int_equal(gmc_sim_step(f->s, 2000), GMC_SIM_OK);
        assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_CLOCK_LO), e_rst);
        /* Enabled again with TAIL still 0: nothing runs. */
        t_wr(f->s, GMC_REG_DMA_CTRL, GMC_DMA_CTRL_ENABLE_MASK);
        assert_int_equal(gmc_sim_step(f->s, 500), GMC_SIM_OK);
        assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_PACKETS_LO), 0);
        assert_int_equal(t_rd64(f->s, GMC_REG_DMA_FENCE_LO), 0);
        /* The ring set up again from scratch runs. */
        gmc_ring_fini(&f->r);
        assert_int_equal(gmc_ring_init(&f->r, f->s, RING_BUS, 12, 16 * GMC_PAGE_SIZE), GMC_SIM_OK);
    }
    struct gmc_pkt one = gmc_pkt_fence(77, 0, 0, 0);
    assert_int_equal(gmc_ring_put(&f->r, &one, 1), GMC_SIM_OK);
    assert_int_equal(gmc_ring_kick(&f->r), GMC_SIM_OK);
    assert_int_equal(gmc_ring_wait(&f->r, WAIT, 16), GMC_SIM_OK);
    assert_int_equal(t_rd64(f->s, GMC_REG_DMA_FENCE_LO), 77);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_idle_clock_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_wakes_one_edge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clock_on, setup, teardown),
        cmocka_unit_test(test_copy_same_both_ways),
        cmocka_unit_test_setup_teardown(test_short_reset_after_work, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
