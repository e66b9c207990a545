/* The micro-sequenced DMA engine (gmc_top DMA_ENGINE=3, model variant mic)
 * as far as its microcode goes: CAPS reports it; NOP and FENCE packets from
 * the ring complete (HEAD, the packet counter, DMA_FENCE read back through
 * the engine's status RAM, the fence IRQ); an unknown opcode faults
 * OPCODE naming the packet, reads 0 from the fault registers once SKIP
 * has cleared it, and the next packet runs. The counters the microcode
 * keeps in the engine's register file (CNT_DMA_PACKETS, _FAULTS and the
 * byte counters) read back exactly, clear with CNT_CLEAR, and a LO read
 * of a status-RAM register snapshots its HI half. Work in progress: the
 * other packets are not implemented, so the DMA test suite does not run
 * on it. */
#include <stdlib.h>

#include "gmc_dma_pkt.h"
#include "gmc_test.h"

#define RING_BUS 0x200000000ull
#define WAIT 200000u

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

static void test_caps(void **state)
{
    struct fx *f = *state;
    const uint32_t caps = t_rd(f->s, GMC_REG_CAPS);
    assert_int_equal((caps & GMC_CAPS_DMA_ENGINE_MASK) >> GMC_CAPS_DMA_ENGINE_LSB, GMC_DMA_ENGINE_MICRO);
    assert_true(caps & GMC_CAPS_DMA_MASK);
}

static void test_nop_fence(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    t_wr(s, GMC_REG_IRQ_ACK, 0xFFFFFFFFu);
    t_wr(s, GMC_REG_IRQ_MASK, GMC_IRQ_DMA_FENCE_MASK);
    const uint64_t pkts0 = t_rd64(s, GMC_REG_CNT_DMA_PACKETS_LO);
    struct gmc_pkt p[3] = {gmc_pkt_nop(), gmc_pkt_nop(), gmc_pkt_fence(0xFEEDFACECAFEBEEFull, 0, 0, 1)};
    assert_int_equal(gmc_ring_run(&f->r, p, 3, WAIT), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_DMA_RING_HEAD), 3 * 32);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_PACKETS_LO) - pkts0, 3);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), 0xFEEDFACECAFEBEEFull);
    assert_int_equal(t_rd(s, GMC_REG_DMA_FENCE_HI), 0xFEEDFACEu);
    assert_true(t_rd(s, GMC_REG_IRQ_STATUS) & GMC_IRQ_DMA_FENCE_MASK);
    assert_int_equal(gmc_sim_irq(s), 1);
    t_wr(s, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FENCE_MASK);
    assert_int_equal(gmc_sim_irq(s), 0);
    /* Without the IRQ flag: the register only. */
    p[0] = gmc_pkt_fence(3, 0, 0, 0);
    assert_int_equal(gmc_ring_run(&f->r, p, 1, WAIT), GMC_SIM_OK);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), 3);
    assert_false(t_rd(s, GMC_REG_IRQ_STATUS) & GMC_IRQ_DMA_FENCE_MASK);
    t_wr(s, GMC_REG_IRQ_MASK, 0);
}

static void test_opcode_skip(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FAULT_PKT_LO), 0);
    struct gmc_pkt p[2] = {gmc_pkt_nop(), gmc_pkt_fence(77, 0, 0, 0)};
    p[0].w[0] = 0;   /* opcode 0: none */
    const uint32_t head = t_rd(s, GMC_REG_DMA_RING_HEAD);
    assert_int_equal(gmc_ring_run(&f->r, p, 2, WAIT), 1);
    assert_int_equal(t_rd(s, GMC_REG_DMA_FAULT_CODE), GMC_DMA_FAULT_OPCODE);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FAULT_PKT_LO), RING_BUS + head);
    assert_int_equal(t_rd(s, GMC_REG_DMA_STATUS) & GMC_DMA_STATUS_STATE_MASK, GMC_DMA_STATE_FAULTED);
    t_wr(s, GMC_REG_DMA_CMD, GMC_DMA_CMD_SKIP_MASK);
    assert_int_equal(gmc_ring_wait(&f->r, WAIT, 16), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_DMA_FAULT_CODE), 0);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FAULT_PKT_LO), 0);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), 77);
    assert_int_equal(t_rd(s, GMC_REG_DMA_RING_HEAD), head + 64);
}

/* The eight counters kept by the engine, LO offsets. */
static const uint32_t engine_counters[] = {
    GMC_REG_CNT_DMA_RD_VRAM_LO, GMC_REG_CNT_DMA_WR_VRAM_LO, GMC_REG_CNT_DMA_RD_SYS_LO,
    GMC_REG_CNT_DMA_WR_SYS_LO, GMC_REG_CNT_DMA_RD_APERTURE_LO, GMC_REG_CNT_DMA_WR_APERTURE_LO,
    GMC_REG_CNT_DMA_PACKETS_LO, GMC_REG_CNT_DMA_FAULTS_LO,
};
#define N_ENGINE_COUNTERS (sizeof engine_counters / sizeof engine_counters[0])

static void fault_and_skip(struct fx *f)
{
    struct gmc_pkt p = gmc_pkt_nop();
    p.w[0] = 0;   /* opcode 0: none */
    assert_int_equal(gmc_ring_run(&f->r, &p, 1, WAIT), 1);
    assert_int_equal(t_rd(f->s, GMC_REG_DMA_FAULT_CODE), GMC_DMA_FAULT_OPCODE);
    t_wr(f->s, GMC_REG_DMA_CMD, GMC_DMA_CMD_SKIP_MASK);
    assert_int_equal(gmc_ring_wait(&f->r, WAIT, 16), GMC_SIM_OK);
}

/* Packets and faults counted by the microcode, read back exactly; the
 * clear zeroes all eight at once, and they count on from 0. */
static void test_counters_clear(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    struct gmc_pkt p[5] = {gmc_pkt_nop(), gmc_pkt_nop(), gmc_pkt_nop(), gmc_pkt_nop(), gmc_pkt_nop()};
    /* Counts from the earlier tests first, so the clear has something to clear. */
    assert_int_equal(gmc_ring_run(&f->r, p, 5, WAIT), GMC_SIM_OK);
    fault_and_skip(f);
    assert_true(t_rd64(s, GMC_REG_CNT_DMA_PACKETS_LO) >= 5);
    assert_true(t_rd64(s, GMC_REG_CNT_DMA_FAULTS_LO) >= 1);

    t_wr(s, GMC_REG_CNT_CLEAR, 1);
    for (size_t i = 0; i < N_ENGINE_COUNTERS; i++) {
        assert_int_equal(t_rd(s, engine_counters[i]), 0);
        assert_int_equal(t_rd(s, engine_counters[i] + 4), 0);
    }

    assert_int_equal(gmc_ring_run(&f->r, p, 3, WAIT), GMC_SIM_OK);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_PACKETS_LO), 3);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_FAULTS_LO), 0);
    fault_and_skip(f);
    fault_and_skip(f);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_FAULTS_LO), 2);
    /* Neither the faulted packets nor SKIP count as packets. */
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_PACKETS_LO), 3);
    assert_int_equal(gmc_ring_run(&f->r, p, 2, WAIT), GMC_SIM_OK);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_PACKETS_LO), 5);
    /* No packet the microcode runs yet moves bytes. */
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(t_rd64(s, engine_counters[i]), 0);

    /* A second clear, then nothing: they stay 0 (the clear is not undone
     * by the engine's next write of another register). */
    t_wr(s, GMC_REG_CNT_CLEAR, 0);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_PACKETS_LO), 0);
    p[0] = gmc_pkt_fence(5, 0, 0, 0);
    assert_int_equal(gmc_ring_run(&f->r, p, 1, WAIT), GMC_SIM_OK);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_PACKETS_LO), 1);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_FAULTS_LO), 0);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), 5);
}

/* A LO read of a status-RAM register snapshots its HI half, as for every
 * 64-bit register: a later HI read answers the snapshot even if the
 * engine has changed the register since; a LO read of another register
 * replaces the snapshot. */
static void test_lo_snapshots_hi(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    struct gmc_pkt p = gmc_pkt_fence(0x1111111122222222ull, 0, 0, 0);
    assert_int_equal(gmc_ring_run(&f->r, &p, 1, WAIT), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_DMA_FENCE_LO), 0x22222222u);
    p = gmc_pkt_fence(0x3333333344444444ull, 0, 0, 0);
    assert_int_equal(gmc_ring_run(&f->r, &p, 1, WAIT), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_DMA_FENCE_HI), 0x11111111u);
    assert_int_equal(t_rd(s, GMC_REG_DMA_FENCE_HI), 0x11111111u);
    assert_int_equal(t_rd(s, GMC_REG_DMA_FENCE_LO), 0x44444444u);
    assert_int_equal(t_rd(s, GMC_REG_DMA_FENCE_HI), 0x33333333u);

    /* Another register's LO read: the fence's HI is read live again. */
    assert_int_equal(t_rd(s, GMC_REG_DMA_FENCE_LO), 0x44444444u);
    (void)t_rd(s, GMC_REG_CNT_DMA_PACKETS_LO);
    p = gmc_pkt_fence(0x5555555566666666ull, 0, 0, 0);
    assert_int_equal(gmc_ring_run(&f->r, &p, 1, WAIT), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_DMA_FENCE_HI), 0x55555555u);
    /* A counter's LO read snapshots its HI half too (0 here): the fence's
     * HI read after it is live, the counter's HI read the snapshot. */
    assert_int_equal(t_rd(s, GMC_REG_CNT_DMA_PACKETS_HI), 0);
}

/* The engine reads the ring base from its configuration RAM, which
 * gmc_regs fills: a write with partial strobes changes only the strobed
 * bytes there, as in the register. */
static void test_cfg_partial_strobes(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    t_wr(s, GMC_REG_DMA_CTRL, 0);
    t_wr(s, GMC_REG_DMA_RING_BASE_HI, 0x00000702u);
    /* Byte 1 only: the register becomes 2 again; the other bytes of the
     * data are not written. */
    assert_int_equal(gmc_sim_reg_write_strb(s, GMC_REG_DMA_RING_BASE_HI, 0xFFFF00FFu, 0x2), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_DMA_RING_BASE_HI), (uint32_t)(RING_BUS >> 32));
    assert_int_equal(gmc_sim_reg_write_strb(s, GMC_REG_DMA_RING_BASE_LO, 0x12345678u, 0x0), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_DMA_RING_BASE_LO), 0);
    t_wr(s, GMC_REG_DMA_CTRL, GMC_DMA_CTRL_ENABLE_MASK);
    struct gmc_pkt p = gmc_pkt_fence(0xA5A5u, 0, 0, 0);
    const uint32_t head = t_rd(s, GMC_REG_DMA_RING_HEAD);
    assert_int_equal(gmc_ring_run(&f->r, &p, 1, WAIT), GMC_SIM_OK);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), 0xA5A5u);
    assert_int_equal(t_rd(s, GMC_REG_DMA_RING_HEAD), head + 32);
}

/* After a reset the configuration RAM holds the registers' reset values
 * without the host writing them (the ring base LO here, left at its reset
 * value 0 while the host programs the rest), and the engine's counters
 * read 0. */
static void test_cfg_after_reset(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    struct gmc_pkt p = gmc_pkt_nop();
    assert_int_equal(gmc_ring_run(&f->r, &p, 1, WAIT), GMC_SIM_OK);
    assert_true(t_rd64(s, GMC_REG_CNT_DMA_PACKETS_LO) > 0);
    t_wr(s, GMC_REG_DMA_RING_BASE_LO, 0x5000u);   /* inside the arena: zeros */
    assert_int_equal(gmc_sim_reset(s, 1), GMC_SIM_OK);
    for (size_t i = 0; i < N_ENGINE_COUNTERS; i++)
        assert_int_equal(t_rd64(s, engine_counters[i]), 0);
    assert_int_equal(t_rd(s, GMC_REG_DMA_RING_BASE_LO), 0);
    t_wr(s, GMC_REG_DMA_RING_BASE_HI, (uint32_t)(RING_BUS >> 32));
    t_wr(s, GMC_REG_DMA_RING_SIZE, 12);
    t_wr(s, GMC_REG_DMA_CTRL, GMC_DMA_CTRL_ENABLE_MASK);
    f->r.tail = 0;
    struct gmc_pkt q[2] = {gmc_pkt_nop(), gmc_pkt_fence(0x600Du, 0, 0, 0)};
    assert_int_equal(gmc_ring_run(&f->r, q, 2, WAIT), GMC_SIM_OK);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), 0x600Du);
    assert_int_equal(t_rd(s, GMC_REG_DMA_RING_HEAD), 64);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_PACKETS_LO), 2);
}

/* A packet fetch that never answers: the watchdog's TIMEOUT fault is
 * taken (the vector runs its microcode once, not again every cycle while
 * the bus stays hung), names the packet, and is counted; RESET recovers. */
static void test_watchdog_timeout(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    t_wr(s, GMC_REG_CNT_CLEAR, 1);
    const uint64_t slot = RING_BUS + f->r.tail;
    assert_int_equal(gmc_sim_host_inject(s, slot, 32, GMC_SIM_INJECT_HANG), GMC_SIM_OK);
    t_wr(s, GMC_REG_DMA_WATCHDOG, 1000);
    struct gmc_pkt p = gmc_pkt_nop();
    assert_int_equal(gmc_ring_run(&f->r, &p, 1, WAIT), 1);
    assert_int_equal(t_rd(s, GMC_REG_DMA_FAULT_CODE), GMC_DMA_FAULT_TIMEOUT);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FAULT_PKT_LO), slot);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_FAULTS_LO), 1);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_PACKETS_LO), 0);
    gmc_sim_host_inject_clear(s);
    assert_int_equal(gmc_sim_host_release(s), GMC_SIM_OK);
    t_wr(s, GMC_REG_DMA_WATCHDOG, 0);
    t_wr(s, GMC_REG_DMA_CMD, GMC_DMA_CMD_RESET_MASK);
    assert_int_equal(t_rd(s, GMC_REG_DMA_STATUS) & GMC_DMA_STATUS_STATE_MASK, GMC_DMA_STATE_IDLE);
    p = gmc_pkt_fence(0x7117u, 0, 0, 0);
    assert_int_equal(gmc_ring_run(&f->r, &p, 1, WAIT), GMC_SIM_OK);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), 0x7117u);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_PACKETS_LO), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_nop_fence),
        cmocka_unit_test(test_opcode_skip),
        cmocka_unit_test(test_counters_clear),
        cmocka_unit_test(test_lo_snapshots_hi),
        cmocka_unit_test(test_cfg_partial_strobes),
        cmocka_unit_test(test_watchdog_timeout),
        cmocka_unit_test(test_cfg_after_reset),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
