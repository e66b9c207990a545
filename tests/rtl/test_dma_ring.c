/* DMA engine, ring mechanics: FENCE ordering (the data of earlier packets
 * is visible when the fence is), its memory write, IRQ raise, mask and
 * acknowledge; INDIRECT buffers (ring -> buffer -> ring, HEAD and
 * DMA_STATUS.INDIRECT while inside, buffers across 4 KiB and longer than
 * one fetch burst); ring wrap-around; DMA_CTRL.ENABLE; the packet counter;
 * and a cycle bound on a stream of small packets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmc_dma_pkt.h"
#include "gmc_test.h"

#define RING_BUS 0x200000000ull
#define NPG 8u
#define V_A 0x040000u
#define V_B 0x080000u
/* Cycle budget of a wait, scaled for the slower engines (t_dma_slowdown,
 * set by setup). */
static unsigned slow = 1;
#define WAIT (500000u * slow)

struct fx {
    gmc_sim *s;
    struct gmc_ring r;
    uint8_t *sys;
    uint64_t sys_bus;   /* NPG data pages, then a page of fence slots */
    uint64_t mdl;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->s = t_sim_new();
    slow = t_dma_slowdown(f->s);
    assert_int_equal(gmc_ring_init(&f->r, f->s, RING_BUS, 12, 64 * GMC_PAGE_SIZE), GMC_SIM_OK);
    f->sys_bus = gmc_ring_alloc(&f->r, (NPG + 1) * GMC_PAGE_SIZE, GMC_PAGE_SIZE, &f->sys);
    assert_true(f->sys_bus != 0);
    uint64_t pages[NPG];
    for (unsigned i = 0; i < NPG; i++) pages[i] = f->sys_bus + (uint64_t)(NPG - 1 - i) * GMC_PAGE_SIZE;
    f->mdl = gmc_ring_mdl(&f->r, pages, NPG);
    assert_true(f->mdl != 0);
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

static uint64_t get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* At the IRQ of a fence: the fence's memory copy and all earlier data are
 * already in host memory. */
struct irq_watch {
    struct fx *f;
    uint64_t cycle;
    int data_ok, slot_ok;
    const uint8_t *want;
};

static void on_irq(void *user, int level, uint64_t cycle)
{
    struct irq_watch *w = user;
    if (!level || w->cycle) return;
    w->cycle = cycle;
    /* MDL page i is sys page NPG-1-i. */
    int ok = 1;
    for (unsigned i = 0; i < NPG; i++)
        if (memcmp(w->f->sys + (size_t)(NPG - 1 - i) * GMC_PAGE_SIZE, w->want + (size_t)i * GMC_PAGE_SIZE, GMC_PAGE_SIZE)) ok = 0;
    w->data_ok = ok;
    w->slot_ok = get64(w->f->sys + NPG * GMC_PAGE_SIZE) == 0xFEEDFACECAFEBEEFull;
}

static void test_fence_order_irq(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    static uint8_t data[NPG * GMC_PAGE_SIZE];
    uint64_t seed = 11;
    t_fill_random(data, sizeof data, &seed);
    assert_int_equal(gmc_sim_aperture_write(s, V_A, data, sizeof data), GMC_SIM_OK);
    memset(f->sys, 0, (NPG + 1) * GMC_PAGE_SIZE);

    struct irq_watch w = {f, 0, 0, 0, data};
    gmc_sim_set_irq_callback(s, on_irq, &w);
    t_wr(s, GMC_REG_IRQ_ACK, 0xFFFFFFFFu);
    t_wr(s, GMC_REG_IRQ_MASK, GMC_IRQ_DMA_FENCE_MASK);
    struct gmc_side md = {1, f->mdl, 0, 0};
    struct gmc_pkt p[2] = {gmc_pkt_transfer(gmc_side_gpu(V_A), md, NPG * GMC_PAGE_SIZE),
                           gmc_pkt_fence(0xFEEDFACECAFEBEEFull, f->sys_bus + NPG * GMC_PAGE_SIZE, 1, 1)};
    assert_int_equal(gmc_ring_run(&f->r, p, 2, WAIT), GMC_SIM_OK);
    assert_true(w.cycle != 0);
    assert_true(w.data_ok);
    assert_true(w.slot_ok);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), 0xFEEDFACECAFEBEEFull);
    assert_true(t_rd(s, GMC_REG_IRQ_STATUS) & GMC_IRQ_DMA_FENCE_MASK);
    assert_int_equal(gmc_sim_irq(s), 1);
    t_wr(s, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FENCE_MASK);
    assert_int_equal(gmc_sim_irq(s), 0);
    assert_false(t_rd(s, GMC_REG_IRQ_STATUS) & GMC_IRQ_DMA_FENCE_MASK);

    /* Masked: the source is pending, the line stays low until unmasked. */
    t_wr(s, GMC_REG_IRQ_MASK, 0);
    p[0] = gmc_pkt_fence(2, 0, 0, 1);
    assert_int_equal(gmc_ring_run(&f->r, p, 1, WAIT), GMC_SIM_OK);
    assert_true(t_rd(s, GMC_REG_IRQ_STATUS) & GMC_IRQ_DMA_FENCE_MASK);
    assert_int_equal(gmc_sim_irq(s), 0);
    t_wr(s, GMC_REG_IRQ_MASK, GMC_IRQ_DMA_FENCE_MASK);
    assert_int_equal(gmc_sim_irq(s), 1);
    t_wr(s, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FENCE_MASK);
    /* Without the IRQ flag: the register only. */
    p[0] = gmc_pkt_fence(3, 0, 0, 0);
    assert_int_equal(gmc_ring_run(&f->r, p, 1, WAIT), GMC_SIM_OK);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), 3);
    assert_false(t_rd(s, GMC_REG_IRQ_STATUS) & GMC_IRQ_DMA_FENCE_MASK);
    gmc_sim_set_irq_callback(s, NULL, NULL);
    t_wr(s, GMC_REG_IRQ_MASK, 0);
}

/* Poll DMA_FENCE every cycle: when it shows a value, the VRAM writes of
 * every packet before that fence are visible. */
static void test_fence_vram_visibility(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    enum { N = 6 };
    struct gmc_pkt p[2 * N];
    for (unsigned i = 0; i < N; i++) {
        p[2 * i] = gmc_pkt_fill(V_B + i * GMC_PAGE_SIZE, GMC_PAGE_SIZE, 0x01010101u * (i + 1));
        p[2 * i + 1] = gmc_pkt_fence(100 + i, 0, 0, 0);
    }
    assert_int_equal(gmc_ring_put(&f->r, p, 2 * N), GMC_SIM_OK);
    assert_int_equal(gmc_ring_kick(&f->r), GMC_SIM_OK);
    unsigned seen = 0;
    for (int guard = 0; guard < 20000 * (int)slow && seen < N; guard++) {
        const uint32_t v = t_rd(s, GMC_REG_DMA_FENCE_LO);
        while (v >= 100 && seen <= v - 100) {
            uint8_t b[GMC_PAGE_SIZE];
            assert_int_equal(gmc_sim_vram_peek(s, V_B + seen * GMC_PAGE_SIZE, b, GMC_PAGE_SIZE), GMC_SIM_OK);
            for (unsigned k = 0; k < GMC_PAGE_SIZE; k++)
                if (b[k] != seen + 1) fail_msg("fence %u visible before its fill (byte %u)", 100 + seen, k);
            seen++;
        }
    }
    assert_int_equal(seen, N);
    assert_int_equal(gmc_ring_wait(&f->r, WAIT, 16), GMC_SIM_OK);
}

/* Ring -> indirect buffer -> ring, in order. While the buffer runs, HEAD
 * stays on the INDIRECT and DMA_STATUS.INDIRECT is set. The buffer is 200
 * packets long and crosses a 4 KiB boundary. */
static void test_indirect(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    enum { NI = 200 };
    uint8_t *h;
    const uint64_t raw = gmc_ring_alloc(&f->r, NI * 32 + GMC_PAGE_SIZE, GMC_PAGE_SIZE, &h);
    assert_true(raw != 0);
    const uint64_t ib = raw + GMC_PAGE_SIZE - 96; /* crosses 4 KiB after 3 packets */
    uint8_t *hib = h + GMC_PAGE_SIZE - 96;
    struct gmc_pkt in[NI];
    const uint64_t slots = f->sys_bus + NPG * GMC_PAGE_SIZE;
    /* A long transfer first, to watch the state; then ordered writes to
     * slot k % 8: the last writer of each slot wins. */
    in[0] = gmc_pkt_transfer(gmc_side_gpu(0), gmc_side_gpu(V_B), 16 * GMC_PAGE_SIZE);
    for (unsigned i = 1; i < NI; i++) in[i] = gmc_pkt_write_physical(slots + 8 * (i % 8), 0, 8, 1000 + i);
    memcpy(hib, in, sizeof in);
    memset(f->sys + NPG * GMC_PAGE_SIZE, 0, 64);

    t_wr(s, GMC_REG_CNT_CLEAR, 1);
    const uint32_t ind_off = (f->r.tail + 32) & (f->r.ring_bytes - 1);
    struct gmc_pkt p[3] = {gmc_pkt_write_physical(slots + 8 * 3, 0, 8, 1), gmc_pkt_indirect(ib, NI * 32),
                           gmc_pkt_write_physical(slots + 8 * 5, 0, 8, 2)};
    assert_int_equal(gmc_ring_put(&f->r, p, 3), GMC_SIM_OK);
    assert_int_equal(gmc_ring_kick(&f->r), GMC_SIM_OK);
    int saw_ind = 0;
    for (int guard = 0; guard < 4000; guard++) {
        const uint32_t st = t_rd(s, GMC_REG_DMA_STATUS);
        if (st & GMC_DMA_STATUS_INDIRECT_MASK) {
            assert_int_equal(t_rd(s, GMC_REG_DMA_RING_HEAD), ind_off);
            saw_ind = 1;
            break;
        }
    }
    assert_true(saw_ind);
    assert_int_equal(gmc_ring_wait(&f->r, WAIT, 16), GMC_SIM_OK);
    for (unsigned k = 0; k < 8; k++) {
        uint64_t want = 1000 + (NI - 1) - ((NI - 1 - k) % 8);
        if (k == 0) want = 1000 + 192; /* 192 is the last multiple of 8 below NI */
        if (k == 5) want = 2;          /* the ring packet after the buffer ran last */
        if (get64(f->sys + NPG * GMC_PAGE_SIZE + 8 * k) != want)
            fail_msg("slot %u: %llu, expected %llu", k, (unsigned long long)get64(f->sys + NPG * GMC_PAGE_SIZE + 8 * k),
                     (unsigned long long)want);
    }
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_PACKETS_LO), 3 + NI);
    assert_false(t_rd(s, GMC_REG_DMA_STATUS) & GMC_DMA_STATUS_INDIRECT_MASK);

    /* Two INDIRECTs back to back, the second pointing at the same buffer. */
    p[0] = gmc_pkt_indirect(ib + 32, 64);
    p[1] = gmc_pkt_indirect(ib + 32, 32);
    assert_int_equal(gmc_ring_run(&f->r, p, 2, WAIT), GMC_SIM_OK);
    assert_int_equal(get64(f->sys + NPG * GMC_PAGE_SIZE + 8 * 2), 1002);
}

/* The ring wraps: 600 packets through a 4 KiB ring (127 slots), in chunks
 * that end at different places, each packet leaving its mark. */
static void test_ring_wrap(void **state)
{
    struct fx *f = *state;
    const uint64_t slots = f->sys_bus;
    unsigned done = 0;
    uint64_t seed = 9;
    while (done < 600) {
        unsigned n = 1 + (unsigned)(t_rand(&seed) % 120);
        if (done + n > 600) n = 600 - done;
        struct gmc_pkt p[120];
        for (unsigned i = 0; i < n; i++) p[i] = gmc_pkt_write_physical(slots + 8 * (done + i), 0, 8, 0xC0DE0000u + done + i);
        assert_int_equal(gmc_ring_run(&f->r, p, n, WAIT), GMC_SIM_OK);
        done += n;
    }
    for (unsigned i = 0; i < 600; i++) assert_int_equal(get64(f->sys + 8 * i), 0xC0DE0000u + i);
    assert_true(f->r.tail != 0);
}

/* DMA_CTRL.ENABLE = 0: the engine takes no packet; 1: it catches up. */
static void test_enable(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    const uint32_t head = t_rd(s, GMC_REG_DMA_RING_HEAD);
    t_wr(s, GMC_REG_DMA_CTRL, 0);
    struct gmc_pkt p[2] = {gmc_pkt_fence(77, 0, 0, 0), gmc_pkt_fence(78, 0, 0, 0)};
    assert_int_equal(gmc_ring_put(&f->r, p, 2), GMC_SIM_OK);
    assert_int_equal(gmc_ring_kick(&f->r), GMC_SIM_OK);
    assert_int_equal(gmc_sim_step(s, 3000), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_DMA_RING_HEAD), head);
    assert_int_equal(t_rd(s, GMC_REG_DMA_STATUS) & GMC_DMA_STATUS_STATE_MASK, GMC_DMA_STATE_IDLE);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), 0);
    t_wr(s, GMC_REG_DMA_CTRL, GMC_DMA_CTRL_ENABLE_MASK);
    assert_int_equal(gmc_ring_wait(&f->r, WAIT, 16), GMC_SIM_OK);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), 78);
}

/* 100 64-byte VRAM -> VRAM transfers: exact data, and a cycle bound (the
 * engine overlaps loading the next packet with the current one). */
static void test_small_packets(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    enum { N = 100 };
    static uint8_t src[N * 64], out[N * 64];
    uint64_t seed = 4;
    t_fill_random(src, sizeof src, &seed);
    assert_int_equal(gmc_sim_aperture_write(s, V_A, src, sizeof src), GMC_SIM_OK);
    struct gmc_pkt p[N];
    for (unsigned i = 0; i < N; i++)
        p[i] = gmc_pkt_transfer(gmc_side_gpu(V_A + 64 * i), gmc_side_gpu(V_B + 64 * (N - 1 - i) + 3), 64);
    t_wr(s, GMC_REG_CNT_CLEAR, 1);
    assert_int_equal(gmc_ring_put(&f->r, p, N), GMC_SIM_OK);
    assert_int_equal(gmc_ring_kick(&f->r), GMC_SIM_OK);
    assert_int_equal(gmc_ring_wait(&f->r, WAIT, 1024), GMC_SIM_OK);
    const uint64_t busy = t_rd64(s, GMC_REG_CNT_DMA_BUSY_LO);
    assert_int_equal(gmc_sim_vram_peek(s, V_B + 3, out, sizeof out), GMC_SIM_OK);
    for (unsigned i = 0; i < N; i++) assert_memory_equal(out + 64 * (N - 1 - i), src + 64 * i, 64);
    /* The first fetch costs the host latency; then about 17 cycles each. */
    if (busy > (300 + 20 * N) * t_dma_slowdown(s)) fail_msg("%u small packets took %llu cycles", N, (unsigned long long)busy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fence_order_irq, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fence_vram_visibility, setup, teardown),
        cmocka_unit_test_setup_teardown(test_indirect, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ring_wrap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_packets, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
