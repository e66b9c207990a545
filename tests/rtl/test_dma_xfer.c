/* DMA engine, data commands checked byte for byte: TRANSFER over all nine
 * pairings of VRAM, aperture and MDL sides at odd lengths and alignments
 * (page crossings included), FILL, DISCARD (+POISON), READ/WRITE_PHYSICAL
 * on every target, MAP/UNMAP_APERTURE (PTE values, TLB invalidation, the
 * dummy page), FLUSH_TLB, and the byte and packet counters.
 *
 * Layout: the ring and a 64-page system area in host memory. Area A
 * (pages 0..31) is the source of system-side transfers, area B (pages
 * 32..63) the destination; MDL_A and MDL_B list their pages in a
 * scrambled order, and aperture pages 0..31 / 32..63 are mapped (by the
 * engine, MAP_APERTURE) onto MDL_A / MDL_B, so aperture offset x and MDL
 * offset x name the same byte. VRAM source and destination areas lie in
 * the CPU window and are filled through BAR1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmc_dma_pkt.h"
#include "gmc_dma_ref.h"
#include "gmc_test.h"

#define PAGE 4096u
#define RING_BUS 0x100000000ull
#define NPG 32u
#define APB T_APERTURE_BASE
#define V_A 0x040000u  /* VRAM source area, 128 KiB + slack */
#define V_B 0x080000u  /* VRAM destination area */
#define AREA (NPG * PAGE)
#define WAIT 2000000u

enum kind { K_VRAM, K_AP, K_MDL };

struct fx {
    gmc_sim *s;
    struct gmc_ring r;
    uint8_t *sys;       /* 2 * NPG pages */
    uint64_t sys_bus;
    uint64_t mdl[2];    /* MDL_A, MDL_B */
    unsigned perm[2][NPG];
};

static uint32_t rd(gmc_sim *s, uint32_t off)
{
    return t_rd(s, off);
}

static void run_ok(struct fx *f, const struct gmc_pkt *p, unsigned n)
{
    int st = gmc_ring_run(&f->r, p, n, WAIT);
    if (st != GMC_SIM_OK)
        fail_msg("ring run: %d, fault code 0x%x pkt 0x%llx addr 0x%llx", st, rd(f->s, GMC_REG_DMA_FAULT_CODE),
                 (unsigned long long)t_rd64(f->s, GMC_REG_DMA_FAULT_PKT_LO),
                 (unsigned long long)t_rd64(f->s, GMC_REG_DMA_FAULT_ADDR_LO));
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->s = t_sim_new();
    assert_int_equal(gmc_ring_init(&f->r, f->s, RING_BUS, 14, 3 * AREA), GMC_SIM_OK);
    f->sys_bus = gmc_ring_alloc(&f->r, 2 * AREA, PAGE, &f->sys);
    assert_true(f->sys_bus != 0);
    uint64_t seed = 0x5EEDF00Du;
    for (unsigned h = 0; h < 2; h++) {
        uint64_t pages[NPG];
        for (unsigned i = 0; i < NPG; i++) f->perm[h][i] = i;
        for (unsigned i = NPG - 1; i > 0; i--) {
            unsigned j = (unsigned)(t_rand(&seed) % (i + 1)), t = f->perm[h][i];
            f->perm[h][i] = f->perm[h][j];
            f->perm[h][j] = t;
        }
        for (unsigned i = 0; i < NPG; i++) pages[i] = f->sys_bus + (uint64_t)(h * NPG + f->perm[h][i]) * PAGE;
        f->mdl[h] = gmc_ring_mdl(&f->r, pages, NPG);
        assert_true(f->mdl[h] != 0);
    }
    t_wr(f->s, GMC_REG_DUMMY_PAGE_LO, (uint32_t)(f->sys_bus + 2 * AREA - PAGE));
    t_wr(f->s, GMC_REG_DUMMY_PAGE_HI, (uint32_t)((f->sys_bus + 2 * AREA) >> 32));
    struct gmc_pkt map[3] = {gmc_pkt_map_aperture(APB, NPG, f->mdl[0], 0, 1, 1, 1),
                             gmc_pkt_map_aperture(APB + AREA, NPG, f->mdl[1], 0, 0, 1, 1), gmc_pkt_flush_tlb()};
    run_ok(f, map, 3);
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

/* Host byte of offset x of area h (through the MDL order). */
static uint8_t *sys_at(struct fx *f, unsigned h, uint32_t x)
{
    return f->sys + (size_t)(h * NPG + f->perm[h][x / PAGE]) * PAGE + x % PAGE;
}

/* A side of kind k over area h at offset x. */
static struct gmc_side side(struct fx *f, enum kind k, unsigned h, uint32_t x)
{
    struct gmc_side s = {0, 0, 0, 0};
    switch (k) {
    case K_VRAM: s.addr = (h ? V_B : V_A) + x; break;
    case K_AP: s.addr = APB + h * AREA + x; break;
    case K_MDL:
        s.mdl = 1;
        s.addr = f->mdl[h];
        s.page = x / PAGE;
        s.offset = x % PAGE;
        break;
    }
    return s;
}

/* Read n bytes of side (k, h) from offset x into buf (backdoor for VRAM). */
static void get_side(struct fx *f, enum kind k, unsigned h, uint32_t x, uint8_t *buf, uint32_t n)
{
    if (k == K_VRAM) {
        assert_int_equal(gmc_sim_vram_peek(f->s, (h ? V_B : V_A) + x, buf, n), GMC_SIM_OK);
        return;
    }
    for (uint32_t i = 0; i < n; i++) buf[i] = *sys_at(f, h, x + i);
}

/* Fill area h of kind k, [0, AREA + slack), with random bytes. */
static void fill_side(struct fx *f, enum kind k, unsigned h, uint64_t *seed)
{
    static uint8_t buf[AREA];
    t_fill_random(buf, AREA, seed);
    if (k == K_VRAM) {
        assert_int_equal(gmc_sim_aperture_write(f->s, h ? V_B : V_A, buf, AREA), GMC_SIM_OK);
    } else {
        for (uint32_t i = 0; i < AREA; i++) *sys_at(f, h, i) = buf[i];
    }
}

static const char *kname(enum kind k)
{
    return k == K_VRAM ? "VRAM" : k == K_AP ? "aperture" : "MDL";
}

/* Every pairing, odd lengths, head/tail alignments and page crossings; the
 * destination is exact inside and untouched for 16 bytes either side. */
static void test_transfer_pairings(void **state)
{
    struct fx *f = *state;
    static const uint32_t lens[] = {1, 7, 8, 9, 4095, 4097, 12345};
    static const uint32_t offs[][2] = {{0, 0}, {3, 5}, {7, 1}, {4093, 2}, {6, 4090}, {1, 1}};
    static uint8_t src[16384], before[16384 + 32], after[16384 + 32];
    uint64_t seed = 42;
    unsigned runs = 0;
    for (int sk = 0; sk < 3; sk++) {
        fill_side(f, (enum kind)sk, 0, &seed);
        for (int dk = 0; dk < 3; dk++) {
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                for (size_t oi = 0; oi < sizeof offs / sizeof offs[0]; oi++) {
                    const uint32_t n = lens[li];
                    const uint32_t so = offs[oi][0] + 16 * (uint32_t)li, dof = offs[oi][1] + 16 + 8 * (uint32_t)oi;
                    if ((oi + li) % 2 && n < 4096) continue; /* keep the run short */
                    get_side(f, (enum kind)sk, 0, so, src, n);
                    get_side(f, (enum kind)dk, 1, dof - 16, before, n + 32);
                    struct gmc_pkt p = gmc_pkt_transfer(side(f, (enum kind)sk, 0, so), side(f, (enum kind)dk, 1, dof), n);
                    run_ok(f, &p, 1);
                    get_side(f, (enum kind)dk, 1, dof - 16, after, n + 32);
                    if (memcmp(after + 16, src, n) || memcmp(after, before, 16) || memcmp(after + 16 + n, before + 16 + n, 16))
                        fail_msg("%s -> %s: %u bytes from +%u to +%u differ", kname((enum kind)sk), kname((enum kind)dk), n,
                                 so, dof);
                    runs++;
                }
            }
            /* Scribble over the destination so the next pairing starts fresh. */
            fill_side(f, (enum kind)dk, 1, &seed);
        }
    }
    assert_true(runs > 150);
}

/* Every source offset 0..7 against every destination offset 0..7 at short
 * lengths (the realignment network), VRAM to VRAM and MDL to VRAM. */
static void test_transfer_alignments(void **state)
{
    struct fx *f = *state;
    uint64_t seed = 7;
    uint8_t src[40], before[72], after[72];
    fill_side(f, K_VRAM, 0, &seed);
    fill_side(f, K_MDL, 0, &seed);
    for (int sk = 0; sk < 3; sk += 2) {
        for (uint32_t so = 0; so < 8; so++) {
            for (uint32_t dof = 0; dof < 8; dof++) {
                const uint32_t n = 1 + (so * 8 + dof) % 37, x = 64 * (so * 8 + dof) + so, y = 64 * (so * 8 + dof) + 16 + dof;
                get_side(f, (enum kind)sk, 0, x, src, n);
                get_side(f, K_VRAM, 1, y - 16, before, n + 32);
                struct gmc_pkt p = gmc_pkt_transfer(side(f, (enum kind)sk, 0, x), side(f, K_VRAM, 1, y), n);
                run_ok(f, &p, 1);
                get_side(f, K_VRAM, 1, y - 16, after, n + 32);
                if (memcmp(after + 16, src, n) || memcmp(after, before, 16) || memcmp(after + 16 + n, before + 16 + n, 16))
                    fail_msg("%s offset %u -> VRAM offset %u, %u bytes differ", kname((enum kind)sk), so, dof, n);
            }
        }
    }
}

/* FILL writes pattern byte a % 4 at every address a of the range, and
 * nothing else; DISCARD changes nothing; DISCARD with POISON writes
 * 0xDEADBEEF the same way. */
static void test_fill_discard(void **state)
{
    struct fx *f = *state;
    static const uint32_t cases[][2] = {{1, 0}, {3, 7}, {8, 8}, {13, 1}, {4099, 4093}, {9000, 5}};
    uint64_t seed = 99;
    static uint8_t before[9100], after[9100];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint32_t n = cases[i][0], a = V_B + 0x4000 * (uint32_t)i + cases[i][1];
        const uint32_t pat = (uint32_t)t_rand(&seed);
        for (int op = 0; op < 3; op++) {
            t_fill_random(before, n + 32, &seed);
            assert_int_equal(gmc_sim_aperture_write(f->s, a - 16, before, n + 32), GMC_SIM_OK);
            t_wr(f->s, GMC_REG_CNT_CLEAR, 1);
            struct gmc_pkt p = op == 0 ? gmc_pkt_fill(a, n, pat) : gmc_pkt_discard(a, n, op == 2);
            run_ok(f, &p, 1);
            assert_int_equal(gmc_sim_vram_peek(f->s, a - 16, after, n + 32), GMC_SIM_OK);
            const uint32_t v = op == 0 ? pat : 0xDEADBEEFu;
            for (uint32_t k = 0; k < n + 32; k++) {
                const uint32_t addr = a - 16 + k;
                const int inside = k >= 16 && k < 16 + n && op != 1;
                const uint8_t want = inside ? (uint8_t)(v >> (8 * (addr % 4))) : before[k];
                if (after[k] != want)
                    fail_msg("op %d, %u bytes at 0x%x: byte 0x%x is 0x%02x, expected 0x%02x", op, n, a, addr, after[k], want);
            }
            assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_WR_VRAM_LO), op == 1 ? 0 : n);
        }
    }
}

/* READ_PHYSICAL and WRITE_PHYSICAL on VRAM, the aperture and bus addresses,
 * every size and offset inside an 8-byte word. */
static void test_physical(void **state)
{
    struct fx *f = *state;
    uint64_t seed = 5;
    fill_side(f, K_VRAM, 0, &seed);
    fill_side(f, K_MDL, 0, &seed);
    for (int tgt = 0; tgt < 3; tgt++) {
        for (unsigned a = 0; a < 8; a++) {
            for (unsigned n = 1; a + n <= 8; n++) {
                const uint32_t x = 8 * (8 * a + n) + a + PAGE * (a % 3);
                uint64_t addr = tgt == 0 ? V_A + x : tgt == 1 ? APB + x : f->sys_bus + (uint64_t)f->perm[0][x / PAGE] * PAGE + x % PAGE;
                uint8_t b[8];
                get_side(f, tgt == 0 ? K_VRAM : K_AP, 0, x, b, n);
                uint64_t want = 0;
                for (unsigned k = 0; k < n; k++) want |= (uint64_t)b[k] << (8 * k);
                struct gmc_pkt p = gmc_pkt_read_physical(addr, tgt != 2, n);
                run_ok(f, &p, 1);
                uint64_t got = t_rd64(f->s, GMC_REG_DMA_READ_RESULT_LO);
                if (got != want)
                    fail_msg("READ_PHYSICAL target %d 0x%llx size %u: 0x%llx, expected 0x%llx", tgt, (unsigned long long)addr, n,
                             (unsigned long long)got, (unsigned long long)want);

                /* Write a new value at the same place; the word's other bytes stay. */
                const uint64_t v = t_rand(&seed) & (n == 8 ? ~0ull : ((1ull << (8 * n)) - 1));
                uint8_t w0[16], w1[16];
                const uint32_t xw = x & ~7u;
                get_side(f, tgt == 0 ? K_VRAM : K_AP, 0, xw - 4, w0, 16);
                p = gmc_pkt_write_physical(addr, tgt != 2, n, v);
                run_ok(f, &p, 1);
                get_side(f, tgt == 0 ? K_VRAM : K_AP, 0, xw - 4, w1, 16);
                for (unsigned k = 0; k < 16; k++) {
                    const uint32_t o = xw - 4 + k;
                    const uint8_t want_b = (o >= x && o < x + n) ? (uint8_t)(v >> (8 * (o - x))) : w0[k];
                    if (w1[k] != want_b)
                        fail_msg("WRITE_PHYSICAL target %d size %u at +%u: byte +%u is 0x%02x, expected 0x%02x", tgt, n, x, o,
                                 w1[k], want_b);
                }
            }
        }
    }
}

/* MAP_APERTURE writes exact PTEs and drops the TLB entries; UNMAP points
 * pages at the dummy page (GPU access stays on) and the GART counts the
 * hits; FLUSH_TLB drops entries a PTE write behind the TLB's back left. */
static void test_map_unmap_flush(void **state)
{
    struct fx *f = *state;
    const uint32_t pg = 100, pt = t_rd(f->s, GMC_REG_PT_BASE);
    uint64_t pte[4];
    /* Map 4 pages from entry 3 of MDL_B: snooped, read-only. */
    struct gmc_pkt p = gmc_pkt_map_aperture(APB + pg * PAGE, 4, f->mdl[1], 3, 1, 1, 0);
    run_ok(f, &p, 1);
    assert_int_equal(gmc_sim_vram_peek(f->s, pt + 8 * pg, pte, sizeof pte), GMC_SIM_OK);
    for (unsigned i = 0; i < 4; i++) {
        const uint64_t want = GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_SNOOPED_MASK | GMC_PTE_READABLE_MASK |
                              (f->sys_bus + (uint64_t)(NPG + f->perm[1][3 + i]) * PAGE);
        if (pte[i] != want) fail_msg("PTE %u: 0x%llx, expected 0x%llx", pg + i, (unsigned long long)pte[i], (unsigned long long)want);
    }
    /* The debug port sees it; a remap is seen at once (the TLB entry went). */
    struct t_xlate x = t_translate(f->s, APB + (pg + 1) * PAGE + 0x10, 0);
    assert_int_equal(x.addr, f->sys_bus + (uint64_t)(NPG + f->perm[1][4]) * PAGE + 0x10);
    p = gmc_pkt_map_aperture(APB + (pg + 1) * PAGE, 1, f->mdl[1], 9, 0, 1, 1);
    run_ok(f, &p, 1);
    x = t_translate(f->s, APB + (pg + 1) * PAGE + 0x10, 1);
    assert_false(x.status & GMC_XLATE_STATUS_FAULT_MASK);
    assert_int_equal(x.addr, f->sys_bus + (uint64_t)(NPG + f->perm[1][9]) * PAGE + 0x10);

    /* UNMAP: dummy PTEs, and a read lands on the dummy page and is counted. */
    p = gmc_pkt_unmap_aperture(APB + pg * PAGE, 4);
    run_ok(f, &p, 1);
    assert_int_equal(gmc_sim_vram_peek(f->s, pt + 8 * pg, pte, sizeof pte), GMC_SIM_OK);
    const uint64_t dummy = f->sys_bus + 2 * AREA - PAGE;
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(pte[i], GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK | dummy);
    memset(f->sys + 2 * AREA - PAGE, 0x6B, PAGE);
    t_wr(f->s, GMC_REG_CNT_CLEAR, 1);
    p = gmc_pkt_transfer(side(f, K_AP, 0, 0), side(f, K_VRAM, 1, 0), 0);
    p.w[1] = APB + (pg + 2) * PAGE + 8;
    p.w[0] |= (uint64_t)100 << 32;
    run_ok(f, &p, 1);
    uint8_t b[100];
    assert_int_equal(gmc_sim_vram_peek(f->s, V_B, b, 100), GMC_SIM_OK);
    for (int i = 0; i < 100; i++) assert_int_equal(b[i], 0x6B);
    assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DUMMY_HIT_LO), 1);
    assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_RD_APERTURE_LO), 100);

    /* A PTE rewritten behind the TLB (WRITE_PHYSICAL on the page table):
     * the cached translation stays until FLUSH_TLB. */
    const uint32_t ap = 5; /* mapped by setup, through MDL_A entry 5 */
    p = gmc_pkt_read_physical(APB + ap * PAGE, 1, 8);
    run_ok(f, &p, 1);
    const uint64_t old = t_rd64(f->s, GMC_REG_DMA_READ_RESULT_LO);
    const uint64_t newpte = GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK |
                            (f->sys_bus + (uint64_t)f->perm[0][6] * PAGE);
    p = gmc_pkt_write_physical(pt + 8 * ap, 1, 8, newpte);
    run_ok(f, &p, 1);
    p = gmc_pkt_read_physical(APB + ap * PAGE, 1, 8);
    run_ok(f, &p, 1);
    assert_int_equal(t_rd64(f->s, GMC_REG_DMA_READ_RESULT_LO), old);
    uint64_t want6;
    memcpy(&want6, sys_at(f, 0, 6 * PAGE), 8);
    struct gmc_pkt q[2] = {gmc_pkt_flush_tlb(), gmc_pkt_read_physical(APB + ap * PAGE, 1, 8)};
    run_ok(f, q, 2);
    assert_int_equal(t_rd64(f->s, GMC_REG_DMA_READ_RESULT_LO), want6);
    /* Put the original mapping back. */
    p = gmc_pkt_map_aperture(APB + ap * PAGE, 1, f->mdl[0], ap, 1, 1, 1);
    run_ok(f, &p, 1);
}

/* Byte counters per target, packets and busy cycles. */
static void test_counters(void **state)
{
    struct fx *f = *state;
    t_wr(f->s, GMC_REG_CNT_CLEAR, 1);
    const uint64_t c0 = gmc_sim_cycles(f->s);
    struct gmc_pkt p[6] = {
        gmc_pkt_transfer(side(f, K_VRAM, 0, 3), side(f, K_MDL, 1, 5), 1001),
        gmc_pkt_transfer(side(f, K_AP, 0, 7), side(f, K_VRAM, 1, 1), 333),
        gmc_pkt_transfer(side(f, K_MDL, 0, 11), side(f, K_AP, 1, 2), 4444),
        gmc_pkt_fill(V_B + 9, 55, 1),
        gmc_pkt_read_physical(V_A + 1, 1, 6),
        gmc_pkt_fence(1, f->sys_bus + 2 * AREA - 8, 1, 0),
    };
    run_ok(f, p, 6);
    const uint64_t c1 = gmc_sim_cycles(f->s);
    assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_RD_VRAM_LO), 1001 + 6);
    assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_WR_VRAM_LO), 333 + 55);
    assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_RD_SYS_LO), 4444);
    assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_WR_SYS_LO), 1001); /* the fence write is not data */
    assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_RD_APERTURE_LO), 333);
    assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_WR_APERTURE_LO), 4444);
    assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_PACKETS_LO), 6);
    assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_FAULTS_LO), 0);
    const uint64_t busy = t_rd64(f->s, GMC_REG_CNT_DMA_BUSY_LO);
    assert_true(busy > 300 && busy < c1 - c0);
    /* Idle: the busy counter stands still. */
    assert_int_equal(gmc_sim_step(f->s, 1000), GMC_SIM_OK);
    assert_int_equal(t_rd64(f->s, GMC_REG_CNT_DMA_BUSY_LO), busy);
    assert_int_equal(t_rd(f->s, GMC_REG_DMA_STATUS), 0);
}

/* The reference model counts TRANSFERs whose sides share a byte (their
 * destination is undefined, docs/dma.md); ranges that only touch do not
 * count. */
static void test_ref_overlap(void **state)
{
    (void)state;
    struct gmc_dma_ref r;
    assert_int_equal(gmc_dma_ref_init(&r), 0);
    static const struct {
        uint64_t src, dst;
        uint32_t len;
        uint64_t shared;
    } cases[] = {
        { V_A, V_A + PAGE, 8 * PAGE, 1 }, /* forward, the shape */
        { V_A + PAGE, V_A, 8 * PAGE, 1 }, /* backward */
        { V_A, V_A, 16, 1 },              /* onto itself */
        { V_A + 100, V_A + 131, 32, 1 },  /* one byte */
        { V_A + 100, V_A + 132, 32, 0 },  /* touching */
        { V_A, V_B, 8 * PAGE, 0 },        /* apart */
    };
    uint64_t want = 0;
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct gmc_pkt p = gmc_pkt_transfer(gmc_side_gpu(cases[i].src), gmc_side_gpu(cases[i].dst), cases[i].len);
        assert_int_equal(gmc_dma_ref_exec(&r, &p, 0), 0);
        want += cases[i].shared;
        if (r.overlaps != want)
            fail_msg("case %u: overlaps %llu, expected %llu", i, (unsigned long long)r.overlaps,
                     (unsigned long long)want);
    }
    gmc_dma_ref_fini(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_transfer_pairings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transfer_alignments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fill_discard, setup, teardown),
        cmocka_unit_test_setup_teardown(test_physical, setup, teardown),
        cmocka_unit_test_setup_teardown(test_map_unmap_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
        cmocka_unit_test(test_ref_overlap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
