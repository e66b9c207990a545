/* The micro-sequenced DMA engine (gmc_top DMA_ENGINE=3, model variant mic)
 * as far as its microcode goes: CAPS reports it; NOP and FENCE packets from
 * the ring complete (HEAD, the packet counter, DMA_FENCE read back through
 * the engine's status RAM, the fence IRQ); an unknown opcode faults
 * OPCODE naming the packet, reads 0 from the fault registers once SKIP
 * has cleared it, and the next packet runs. Work in progress: the other
 * packets are not implemented, so the DMA test suite does not run on it. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_nop_fence),
        cmocka_unit_test(test_opcode_skip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
