/* DMA engine faults: every fault kind of docs/dma.md with its exact code,
 * packet address and fault address, the state at the stop (HEAD on the
 * faulting packet, DMA_STATUS faulted, IRQ and counter), then recovery by
 * SKIP (the next packet runs) and, separately, by RESET (queued packets are
 * dropped, new work completes). After recovery VRAM outside the faulting
 * packet's destination, and the page table, are checked unchanged by
 * checksum. The watchdog turns hung reads and writes into TIMEOUT; RESET
 * then leaves the hung transactions behind (a new epoch) and new work runs.
 *
 * Data bursts are the default 32 beats: (256-byte blocks); MDL entries
 * are read in bursts of up to 4 entries inside 32-byte blocks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmc_dma_pkt.h"
#include "gmc_test.h"

#define RING_BUS 0x100000000ull
#define NPG 16u
#define APB T_APERTURE_BASE
#define V_A 0x040000u
#define V_B 0x080000u
/* Cycle budget of a wait, scaled for the slower engines (t_dma_slowdown,
 * set by setup). */
static unsigned slow = 1;
#define WAIT (500000u * slow)
#define BLK 256u

/* Aperture pages: 0..15 RW onto the area, 20 read-only, 21 write-only,
 * 22 valid but not SYSTEM, 23 never written (invalid). */
#define AP_RO 20u
#define AP_WO 21u
#define AP_LOCAL 22u
#define AP_INVALID 23u

struct fx {
    gmc_sim *s;
    struct gmc_ring r;
    uint8_t *sys;
    uint64_t sys_bus;   /* NPG data pages, then a fence page */
    uint64_t mdl;       /* NPG entries, pages in order 0..NPG-1 */
    uint64_t slot;      /* fence marker slot */
    uint64_t marker;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->s = t_sim_new();
    slow = t_dma_slowdown(f->s);
    assert_int_equal(gmc_ring_init(&f->r, f->s, RING_BUS, 12, (NPG + 4) * GMC_PAGE_SIZE), GMC_SIM_OK);
    f->sys_bus = gmc_ring_alloc(&f->r, (NPG + 1) * GMC_PAGE_SIZE, GMC_PAGE_SIZE, &f->sys);
    assert_true(f->sys_bus != 0);
    uint64_t pages[NPG];
    for (unsigned i = 0; i < NPG; i++) pages[i] = f->sys_bus + (uint64_t)i * GMC_PAGE_SIZE;
    /* A 32-byte aligned MDL, so its entry bursts are predictable. */
    uint8_t *h;
    f->mdl = gmc_ring_alloc(&f->r, 8 * NPG, 32, &h);
    assert_true(f->mdl != 0);
    for (unsigned i = 0; i < NPG; i++)
        for (unsigned k = 0; k < 8; k++) h[8 * i + k] = (uint8_t)(pages[i] >> (8 * k));
    f->slot = f->sys_bus + NPG * GMC_PAGE_SIZE;
    uint64_t seed = 1;
    t_fill_random(f->sys, NPG * GMC_PAGE_SIZE, &seed);
    const uint64_t local = GMC_PTE_VALID_MASK | GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK | 0x1000u;
    const uint32_t pt = t_rd(f->s, GMC_REG_PT_BASE);
    struct gmc_pkt p[5] = {
        gmc_pkt_map_aperture(APB, NPG, f->mdl, 0, 0, 1, 1),
        gmc_pkt_map_aperture(APB + AP_RO * GMC_PAGE_SIZE, 1, f->mdl, 3, 0, 1, 0),
        gmc_pkt_map_aperture(APB + AP_WO * GMC_PAGE_SIZE, 1, f->mdl, 4, 0, 0, 1),
        gmc_pkt_write_physical(pt + 8 * AP_LOCAL, 1, 8, local),
        gmc_pkt_flush_tlb(),
    };
    assert_int_equal(gmc_ring_run(&f->r, p, 5, WAIT), GMC_SIM_OK);
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

struct want {
    uint32_t code;
    int ind;         /* DMA_FAULT_CODE.INDIRECT */
    uint64_t pkt;    /* 0: the ring packet at index `at` */
    unsigned at;     /* index of the faulting ring packet (HEAD stays there) */
    uint64_t addr;
    uint32_t dst, dst_len; /* VRAM the faulting packet may have written */
};

enum recover { SKIP, RESET };

static uint64_t hash_outside(gmc_sim *s, uint32_t a, uint32_t n)
{
    if (!n) return t_vram_hash(s, 0, T_VRAM_BYTES);
    return t_vram_hash(s, 0, a) ^ (t_vram_hash(s, a + n, T_VRAM_BYTES - a - n) * 31);
}

/* The page table, outside the faulting packet's destination. */
static uint64_t pt_hash(gmc_sim *s, uint32_t pt, const struct want *w)
{
    const uint32_t end = pt + 8 * T_APERTURE_PAGES;
    if (w->dst_len && w->dst >= pt && w->dst + w->dst_len <= end)
        return t_vram_hash(s, pt, w->dst - pt) ^ (t_vram_hash(s, w->dst + w->dst_len, end - w->dst - w->dst_len) * 31);
    return t_vram_hash(s, pt, end - pt);
}

/* Run pk[0..n) then a marker FENCE; expect w, recover, check. */
static void expect_fault(struct fx *f, const struct gmc_pkt *pk, unsigned n, const struct want *w, enum recover rec)
{
    gmc_sim *s = f->s;
    struct gmc_pkt all[8];
    assert_true(n < 8);
    memcpy(all, pk, n * sizeof *pk);
    const uint64_t marker = ++f->marker * 0x0101010101ull;
    all[n] = gmc_pkt_fence(marker, f->slot, 1, 0);
    const uint32_t pt = t_rd(s, GMC_REG_PT_BASE);
    const uint64_t h0 = hash_outside(s, w->dst, w->dst_len), p0 = pt_hash(s, pt, w);
    const uint64_t faults = t_rd64(s, GMC_REG_CNT_DMA_FAULTS_LO), fence0 = t_rd64(s, GMC_REG_DMA_FENCE_LO);
    const uint32_t off0 = f->r.tail;
    t_wr(s, GMC_REG_IRQ_ACK, 0xFFFFFFFFu);
    t_wr(s, GMC_REG_IRQ_MASK, GMC_IRQ_DMA_FAULT_MASK);

    int st = gmc_ring_run(&f->r, all, n + 1, WAIT);
    if (st != 1) fail_msg("expected a fault, got %d", st);
    const uint32_t code = t_rd(s, GMC_REG_DMA_FAULT_CODE);
    const uint64_t pkt = t_rd64(s, GMC_REG_DMA_FAULT_PKT_LO), addr = t_rd64(s, GMC_REG_DMA_FAULT_ADDR_LO);
    const uint32_t at_off = (off0 + 32 * w->at) & (f->r.ring_bytes - 1);
    const uint64_t want_pkt = w->pkt ? w->pkt : f->r.bus + at_off;
    if ((code & 0xFF) != w->code || !!(code & GMC_DMA_FAULT_CODE_INDIRECT_MASK) != w->ind || pkt != want_pkt ||
        addr != w->addr)
        fail_msg("fault code 0x%x pkt 0x%llx addr 0x%llx; expected code %u ind %d pkt 0x%llx addr 0x%llx", code,
                 (unsigned long long)pkt, (unsigned long long)addr, w->code, w->ind, (unsigned long long)want_pkt,
                 (unsigned long long)w->addr);
    assert_int_equal(t_rd(s, GMC_REG_DMA_RING_HEAD), at_off);
    assert_int_equal(t_rd(s, GMC_REG_DMA_STATUS) & GMC_DMA_STATUS_STATE_MASK, GMC_DMA_STATE_FAULTED);
    assert_true(t_rd(s, GMC_REG_IRQ_STATUS) & GMC_IRQ_DMA_FAULT_MASK);
    assert_int_equal(gmc_sim_irq(s), 1);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_DMA_FAULTS_LO), faults + 1);
    /* The engine stays stopped. */
    assert_int_equal(gmc_sim_step(s, 2000), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_DMA_RING_HEAD), at_off);
    t_wr(s, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FAULT_MASK);
    assert_int_equal(gmc_sim_irq(s), 0);
    t_wr(s, GMC_REG_IRQ_MASK, 0);

    uint64_t slot;
    if (rec == SKIP) {
        t_wr(s, GMC_REG_DMA_CMD, GMC_DMA_CMD_SKIP_MASK);
        assert_int_equal(gmc_ring_wait(&f->r, WAIT, 16), GMC_SIM_OK);
        memcpy(&slot, f->sys + NPG * GMC_PAGE_SIZE, 8);
        assert_int_equal(slot, marker); /* the packet after the fault ran */
        assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), marker);
    } else {
        t_wr(s, GMC_REG_DMA_CMD, GMC_DMA_CMD_RESET_MASK);
        assert_int_equal(gmc_ring_wait(&f->r, WAIT, 16), GMC_SIM_OK);
        assert_int_equal(t_rd(s, GMC_REG_DMA_RING_HEAD), f->r.tail);
        assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), fence0); /* dropped */
        const uint64_t m2 = marker ^ 0xFFull;
        struct gmc_pkt again = gmc_pkt_fence(m2, f->slot, 1, 0);
        assert_int_equal(gmc_ring_run(&f->r, &again, 1, WAIT), GMC_SIM_OK);
        memcpy(&slot, f->sys + NPG * GMC_PAGE_SIZE, 8);
        assert_int_equal(slot, m2);
    }
    assert_int_equal(t_rd(s, GMC_REG_DMA_FAULT_CODE), 0);
    assert_int_equal(t_rd(s, GMC_REG_DMA_RING_HEAD), f->r.tail);
    if (hash_outside(s, w->dst, w->dst_len) != h0) fail_msg("VRAM outside the packet's destination changed");
    if (pt_hash(s, pt, w) != p0) fail_msg("the page table changed");
}

static void both(struct fx *f, const struct gmc_pkt *pk, unsigned n, const struct want *w)
{
    expect_fault(f, pk, n, w, SKIP);
    expect_fault(f, pk, n, w, RESET);
}

static struct gmc_side mdl(struct fx *f, uint32_t x)
{
    struct gmc_side s = {1, f->mdl, x / GMC_PAGE_SIZE, x % GMC_PAGE_SIZE};
    return s;
}

/* Checks on the packet alone: OPCODE, RESERVED, SIZE, RANGE,
 * FILL_APERTURE, PROTECTED (nothing moves). */
static void test_packet_faults(void **state)
{
    struct fx *f = *state;
    struct gmc_pkt p[2] = {gmc_pkt_nop(), gmc_pkt_nop()};
    struct want w = {GMC_DMA_FAULT_OPCODE, 0, 0, 1, 0, 0, 0};

    p[1].w[0] = 0;                                   /* opcode 0 */
    both(f, p, 2, &w);
    p[1].w[0] = 12;                                  /* past INDIRECT */
    both(f, p, 2, &w);

    w.code = GMC_DMA_FAULT_RESERVED;
    p[1] = gmc_pkt_nop();
    p[1].w[0] |= 1u << 16;                           /* W0[31:16] */
    both(f, p, 2, &w);
    p[1] = gmc_pkt_fill(V_B, 8, 1);
    p[1].w[0] |= GMC_PKT_FLAG_GPU_MASK << 8;         /* a flag FILL does not take */
    both(f, p, 2, &w);
    p[1] = gmc_pkt_transfer(gmc_side_gpu(V_A), gmc_side_gpu(V_B), 8);
    p[1].w[2] |= 1ull << 40;                         /* GPU address bits 63:32 */
    both(f, p, 2, &w);
    p[1] = gmc_pkt_write_physical(V_B, 1, 2, 0x10000);  /* W3 above LENGTH */
    both(f, p, 2, &w);

    w.code = GMC_DMA_FAULT_SIZE;
    p[1] = gmc_pkt_fill(V_B, 0, 1);
    both(f, p, 2, &w);
    p[1] = gmc_pkt_read_physical(V_A + 5, 1, 4);     /* crosses 8 bytes */
    both(f, p, 2, &w);
    p[1] = gmc_pkt_indirect(f->sys_bus, 40);
    both(f, p, 2, &w);
    p[1] = gmc_pkt_transfer(mdl(f, 0), gmc_side_gpu(V_B), 8);
    p[1].w[1] += 4;                                  /* MDL not 8-aligned */
    both(f, p, 2, &w);
    p[1] = gmc_pkt_unmap_aperture(APB + 0x800, 1);   /* not page aligned */
    both(f, p, 2, &w);

    w.code = GMC_DMA_FAULT_RANGE;
    w.addr = T_VRAM_BYTES - 4;
    p[1] = gmc_pkt_transfer(gmc_side_gpu(T_VRAM_BYTES - 4), gmc_side_gpu(V_B), 8);
    both(f, p, 2, &w);
    w.addr = APB - 16;
    p[1] = gmc_pkt_transfer(gmc_side_gpu(V_A), gmc_side_gpu(APB - 16), 32);
    both(f, p, 2, &w);
    w.addr = APB + (T_APERTURE_PAGES - 1) * GMC_PAGE_SIZE;
    p[1] = gmc_pkt_map_aperture(APB + (T_APERTURE_PAGES - 1) * GMC_PAGE_SIZE, 2, f->mdl, 0, 0, 1, 1);
    both(f, p, 2, &w);

    w.code = GMC_DMA_FAULT_FILL_APERTURE;
    w.addr = APB + 0x100;
    p[1] = gmc_pkt_fill(APB + 0x100, 64, 7);
    both(f, p, 2, &w);
    p[1] = gmc_pkt_discard(APB + 0x100, 64, 1);
    both(f, p, 2, &w);

    /* Protected VRAM may be copied inside VRAM, never out of it. */
    t_wr(f->s, GMC_REG_PROT_BASE_N(1), V_A + 0x1000);
    t_wr(f->s, GMC_REG_PROT_LIMIT_N(1), V_A + 0x2000);
    struct gmc_pkt ok = gmc_pkt_transfer(gmc_side_gpu(V_A + 0x1800), gmc_side_gpu(V_B), 64);
    assert_int_equal(gmc_ring_run(&f->r, &ok, 1, WAIT), GMC_SIM_OK);
    w.code = GMC_DMA_FAULT_PROTECTED;
    w.addr = V_A + 0xFF0;
    p[1] = gmc_pkt_transfer(gmc_side_gpu(V_A + 0xFF0), mdl(f, 0), 17);
    both(f, p, 2, &w);
    p[1] = gmc_pkt_transfer(gmc_side_gpu(V_A + 0xFF0), gmc_side_gpu(APB + 8), 17);
    both(f, p, 2, &w);
    w.addr = V_A + 0x1FF8;
    p[1] = gmc_pkt_read_physical(V_A + 0x1FF8, 1, 8);
    both(f, p, 2, &w);
    t_wr(f->s, GMC_REG_PROT_LIMIT_N(1), 0);
}

/* PTE_INVALID and PTE_PERM on either side: the GPU address of the page. */
static void test_pte_faults(void **state)
{
    struct fx *f = *state;
    struct gmc_pkt p[2] = {gmc_pkt_nop(), gmc_pkt_nop()};
    struct want w = {GMC_DMA_FAULT_PTE_INVALID, 0, 0, 0, 0, V_B, 8192};

    /* The source runs from a good page into one that was never mapped. */
    p[0] = gmc_pkt_transfer(gmc_side_gpu(APB + 15 * GMC_PAGE_SIZE + 0xF00), gmc_side_gpu(V_B), 0x200);
    w.addr = APB + 16 * GMC_PAGE_SIZE;
    both(f, p, 1, &w);
    w.addr = APB + AP_LOCAL * GMC_PAGE_SIZE;
    p[0] = gmc_pkt_transfer(gmc_side_gpu(APB + AP_LOCAL * GMC_PAGE_SIZE + 8), gmc_side_gpu(V_B), 100);
    both(f, p, 1, &w);
    w.addr = APB + AP_INVALID * GMC_PAGE_SIZE;
    w.dst = 0;
    w.dst_len = 0;
    p[0] = gmc_pkt_transfer(gmc_side_gpu(V_A), gmc_side_gpu(APB + AP_INVALID * GMC_PAGE_SIZE + 3), 100);
    both(f, p, 1, &w);
    p[0] = gmc_pkt_write_physical(APB + AP_INVALID * GMC_PAGE_SIZE + 16, 1, 4, 0x01020304);
    both(f, p, 1, &w);

    w.code = GMC_DMA_FAULT_PTE_PERM;
    w.addr = APB + AP_WO * GMC_PAGE_SIZE;                     /* no READABLE */
    w.dst = V_B;
    w.dst_len = 8192;
    p[0] = gmc_pkt_transfer(gmc_side_gpu(APB + AP_WO * GMC_PAGE_SIZE + 1), gmc_side_gpu(V_B + 3), 50);
    both(f, p, 1, &w);
    w.addr = APB + AP_RO * GMC_PAGE_SIZE;                     /* no WRITEABLE */
    p[0] = gmc_pkt_transfer(gmc_side_gpu(V_A), gmc_side_gpu(APB + AP_RO * GMC_PAGE_SIZE + 0x10), 50);
    both(f, p, 1, &w);
    p[0] = gmc_pkt_transfer(mdl(f, 0x20), gmc_side_gpu(APB + AP_RO * GMC_PAGE_SIZE), 4096);
    both(f, p, 1, &w);
    /* Read-only is readable, write-only writeable. */
    struct gmc_pkt ok[2] = {gmc_pkt_transfer(gmc_side_gpu(APB + AP_RO * GMC_PAGE_SIZE), gmc_side_gpu(APB + AP_WO * GMC_PAGE_SIZE), 4096),
                            gmc_pkt_read_physical(APB + AP_RO * GMC_PAGE_SIZE + 8, 1, 8)};
    assert_int_equal(gmc_ring_run(&f->r, ok, 2, WAIT), GMC_SIM_OK);
}

/* SLVERR / DECERR answers: data reads (the burst's address), MDL entry
 * reads, write responses, single reads, packet fetches. */
static void test_bus_faults(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    struct gmc_pkt p[2] = {gmc_pkt_nop(), gmc_pkt_nop()};
    struct want w = {GMC_DMA_FAULT_BUS, 0, 0, 0, 0, V_B, 6 * GMC_PAGE_SIZE};

    /* A data read: the error beat is at page 2 + 0x310; its burst covers
     * the 256-byte block from page 2 + 0x300. */
    const uint64_t bad = f->sys_bus + 2 * GMC_PAGE_SIZE + 0x310;
    assert_int_equal(gmc_sim_host_inject(s, bad, 8, GMC_SIM_INJECT_SLVERR), GMC_SIM_OK);
    w.addr = f->sys_bus + 2 * GMC_PAGE_SIZE + 0x300;
    p[0] = gmc_pkt_transfer(mdl(f, 0x44), gmc_side_gpu(V_B + 1), 5 * GMC_PAGE_SIZE);
    both(f, p, 1, &w);
    /* The same bytes through the aperture. */
    p[0] = gmc_pkt_transfer(gmc_side_gpu(APB + 0x44), gmc_side_gpu(V_B + 1), 5 * GMC_PAGE_SIZE);
    both(f, p, 1, &w);
    /* A single read: its one-beat burst is the aligned word. */
    w.addr = bad;
    p[0] = gmc_pkt_read_physical(bad + 2, 0, 4);
    both(f, p, 1, &w);
    gmc_sim_host_inject_clear(s);

    /* A write response: the burst of the destination block. */
    assert_int_equal(gmc_sim_host_inject(s, f->sys_bus + 3 * GMC_PAGE_SIZE + 0x520, 1, GMC_SIM_INJECT_DECERR), GMC_SIM_OK);
    w.addr = f->sys_bus + 3 * GMC_PAGE_SIZE + 0x500;
    w.dst = 0;
    w.dst_len = 0;
    p[0] = gmc_pkt_transfer(gmc_side_gpu(V_A + 3), mdl(f, 0x10), 4 * GMC_PAGE_SIZE);
    both(f, p, 1, &w);
    w.addr = f->sys_bus + 3 * GMC_PAGE_SIZE + 0x520;
    p[0] = gmc_pkt_write_physical(f->sys_bus + 3 * GMC_PAGE_SIZE + 0x520, 0, 8, 1);
    both(f, p, 1, &w);
    gmc_sim_host_inject_clear(s);

    /* An MDL entry: entries 4..7 are one burst at MDL + 32. */
    assert_int_equal(gmc_sim_host_inject(s, f->mdl + 8 * 5, 8, GMC_SIM_INJECT_SLVERR), GMC_SIM_OK);
    w.addr = f->mdl + 32;
    w.dst = V_B;
    w.dst_len = 8 * GMC_PAGE_SIZE;
    p[0] = gmc_pkt_transfer(mdl(f, 0), gmc_side_gpu(V_B), 8 * GMC_PAGE_SIZE);
    both(f, p, 1, &w);
    p[0] = gmc_pkt_map_aperture(APB + 40 * GMC_PAGE_SIZE, 8, f->mdl, 0, 0, 1, 1);
    w.dst = T_PT_BASE_RESET + 8 * 40; /* PTEs 40..44 may be written */
    w.dst_len = 8 * 8;
    expect_fault(f, p, 1, &w, SKIP);
    gmc_sim_host_inject_clear(s);

    /* A packet fetch: the fault names the packet, twice. */
    w.dst = 0;
    w.dst_len = 0;
    w.at = 1;
    const uint32_t off = (f->r.tail + 32) & (f->r.ring_bytes - 1);
    assert_int_equal(gmc_sim_host_inject(s, f->r.bus + off + 8, 1, GMC_SIM_INJECT_DECERR), GMC_SIM_OK);
    w.addr = f->r.bus + off;
    p[0] = gmc_pkt_nop();
    p[1] = gmc_pkt_nop();
    expect_fault(f, p, 2, &w, SKIP);
    gmc_sim_host_inject_clear(s);
}

/* NESTED: an INDIRECT inside an indirect buffer. HEAD stays on the ring's
 * INDIRECT; SKIP resumes inside the buffer, then returns to the ring. */
static void test_nested(void **state)
{
    struct fx *f = *state;
    uint8_t *h;
    const uint64_t ib = gmc_ring_alloc(&f->r, 4 * 32, 32, &h);
    assert_true(ib != 0);
    struct gmc_pkt in[3] = {gmc_pkt_fill(V_B, 64, 0x11111111), gmc_pkt_indirect(ib, 32),
                            gmc_pkt_write_physical(f->slot + 8, 0, 8, 0)};
    for (int rec = 0; rec < 2; rec++) {
        in[2] = gmc_pkt_write_physical(f->slot + 8, 0, 8, 0xAB00 + rec);
        memcpy(h, in, sizeof in);
        struct gmc_pkt p[1] = {gmc_pkt_indirect(ib, 96)};
        struct want w = {GMC_DMA_FAULT_NESTED, 1, ib + 32, 0, 0, V_B, 64};
        expect_fault(f, p, 1, &w, (enum recover)rec);
        uint64_t v;
        memcpy(&v, f->sys + NPG * GMC_PAGE_SIZE + 8, 8);
        assert_int_equal(v, rec == SKIP ? 0xAB00u : 0); /* RESET dropped the rest of the buffer */
        memset(f->sys + NPG * GMC_PAGE_SIZE + 8, 0, 8);
    }
}

/* The watchdog: a read that never answers, then a write response that
 * never comes. TIMEOUT names the oldest transaction; RESET starts a new
 * epoch, the hung transactions stay owed, and new work completes. */
static void test_watchdog(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    t_wr(s, GMC_REG_DMA_WATCHDOG, 3000);
    const uint64_t hung = f->sys_bus + 5 * GMC_PAGE_SIZE + 0x200;
    assert_int_equal(gmc_sim_host_inject(s, hung, 8, GMC_SIM_INJECT_HANG), GMC_SIM_OK);
    struct gmc_pkt p[1] = {gmc_pkt_transfer(mdl(f, 0), gmc_side_gpu(V_B), 8 * GMC_PAGE_SIZE)};
    struct want w = {GMC_DMA_FAULT_TIMEOUT, 0, 0, 0, hung, V_B, 8 * GMC_PAGE_SIZE};
    expect_fault(f, p, 1, &w, RESET);
    /* The hung burst (and the later ones of its ID) are still owed. */
    assert_true((t_rd(s, GMC_REG_DMA_STATUS) & GMC_DMA_STATUS_RD_OUTSTANDING_MASK) != 0);
    /* New reads in the new epoch are not stuck behind them. */
    struct gmc_pkt q[2] = {gmc_pkt_transfer(mdl(f, 0), gmc_side_gpu(V_B), 5 * GMC_PAGE_SIZE),
                           gmc_pkt_read_physical(f->sys_bus + 8, 0, 8)};
    assert_int_equal(gmc_ring_run(&f->r, q, 2, WAIT), GMC_SIM_OK);
    uint8_t b[5 * GMC_PAGE_SIZE];
    assert_int_equal(gmc_sim_vram_peek(s, V_B, b, sizeof b), GMC_SIM_OK);
    assert_memory_equal(b, f->sys, sizeof b);
    gmc_sim_host_inject_clear(s);

    /* A write whose response never comes; SKIP also recovers. */
    const uint64_t wh = f->sys_bus + 9 * GMC_PAGE_SIZE + 0x100;
    assert_int_equal(gmc_sim_host_inject(s, wh, 4, GMC_SIM_INJECT_HANG), GMC_SIM_OK);
    p[0] = gmc_pkt_transfer(gmc_side_gpu(V_A), mdl(f, 8 * GMC_PAGE_SIZE), 2 * GMC_PAGE_SIZE);
    w.addr = wh;
    w.dst = 0;
    w.dst_len = 0;
    expect_fault(f, p, 1, &w, SKIP);
    assert_true((t_rd(s, GMC_REG_DMA_STATUS) & GMC_DMA_STATUS_WR_OUTSTANDING_MASK) != 0);
    gmc_sim_host_inject_clear(s);
    p[0] = gmc_pkt_transfer(gmc_side_gpu(V_A), mdl(f, 10 * GMC_PAGE_SIZE), GMC_PAGE_SIZE);
    assert_int_equal(gmc_ring_run(&f->r, p, 1, WAIT), GMC_SIM_OK);
    assert_int_equal(gmc_sim_vram_peek(s, V_A, b, GMC_PAGE_SIZE), GMC_SIM_OK);
    assert_memory_equal(b, f->sys + 10 * GMC_PAGE_SIZE, GMC_PAGE_SIZE);
    t_wr(s, GMC_REG_DMA_WATCHDOG, GMC_REG_DMA_WATCHDOG_RESET);
}

/* A read hangs (TIMEOUT, RESET); then several aborts happen while packet
 * read-ahead is still owed. Each abort moves to an epoch that owes
 * nothing, so the hung burst's epoch is never reused and reads with its
 * stream ID keep completing. */
static void test_epochs(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    t_wr(s, GMC_REG_DMA_WATCHDOG, 3000);
    const uint64_t hung = f->sys_bus + 7 * GMC_PAGE_SIZE;
    assert_int_equal(gmc_sim_host_inject(s, hung, GMC_PAGE_SIZE, GMC_SIM_INJECT_HANG), GMC_SIM_OK);
    struct gmc_pkt p[1] = {gmc_pkt_transfer(mdl(f, 7 * GMC_PAGE_SIZE), gmc_side_gpu(V_B), GMC_PAGE_SIZE)};
    struct want w = {GMC_DMA_FAULT_TIMEOUT, 0, 0, 0, hung, V_B, GMC_PAGE_SIZE};
    expect_fault(f, p, 1, &w, RESET);
    gmc_sim_host_inject_clear(s);
    for (unsigned k = 0; k < 5; k++) {
        /* A bad first packet while the rest of the batch is being fetched. */
        struct gmc_pkt b[24];
        for (unsigned i = 0; i < 24; i++) b[i] = gmc_pkt_nop();
        b[0].w[0] = 0;
        b[22] = gmc_pkt_transfer(mdl(f, (k % 4) * GMC_PAGE_SIZE), gmc_side_gpu(V_B + 64 * k), 256);
        b[23] = gmc_pkt_fence(k + 1, 0, 0, 0);
        assert_int_equal(gmc_ring_run(&f->r, b, 24, WAIT), 1);
        assert_int_equal(t_rd(s, GMC_REG_DMA_FAULT_CODE), GMC_DMA_FAULT_OPCODE);
        t_wr(s, GMC_REG_DMA_CMD, GMC_DMA_CMD_SKIP_MASK);
        assert_int_equal(gmc_ring_wait(&f->r, WAIT, 16), GMC_SIM_OK);
        assert_int_equal(t_rd64(s, GMC_REG_DMA_FENCE_LO), k + 1);
        uint8_t got[256];
        assert_int_equal(gmc_sim_vram_peek(s, V_B + 64 * k, got, 256), GMC_SIM_OK);
        assert_memory_equal(got, f->sys + (k % 4) * GMC_PAGE_SIZE, 256);
    }
    t_wr(s, GMC_REG_DMA_WATCHDOG, GMC_REG_DMA_WATCHDOG_RESET);
}

/* Hung reads pile up on the bus (each round a TRANSFER from hung pages,
 * TIMEOUT, RESET) until even a packet's fetch cannot get onto it: that
 * round's TIMEOUT names the packet itself. On the full engine (8 data
 * reads a round) the bus's 16 read slots fill after two rounds; the
 * compact engine (one read a round) holds an address back while its epoch
 * still owes a read, which happens once all four epochs owe a hung one.
 * That address stays waiting (AXI does not let it go once it is on AR)
 * into the next epoch, which may owe nothing
 * of its own: the watchdog still counts, and the packet after it faults
 * TIMEOUT naming the waiting address instead of staying busy for good. Once the
 * bus answers the hung reads (late, SLVERR), new work runs. */
static void test_stalled_address(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    t_wr(s, GMC_REG_DMA_WATCHDOG, 3000);
    assert_int_equal(gmc_sim_host_inject(s, f->sys_bus, 8 * GMC_PAGE_SIZE, GMC_SIM_INJECT_HANG), GMC_SIM_OK);
    uint64_t stuck = 0;
    for (unsigned k = 0; k < 20 && stuck == 0; k++) {
        const uint64_t at = f->r.bus + f->r.tail;
        struct gmc_pkt p = gmc_pkt_transfer(mdl(f, 0), gmc_side_gpu(V_B), 8 * GMC_PAGE_SIZE);
        const int st = gmc_ring_run(&f->r, &p, 1, WAIT);
        if (st != 1)
            fail_msg("round %u: %d, DMA_STATUS 0x%x", k, st, t_rd(s, GMC_REG_DMA_STATUS));
        assert_int_equal(t_rd(s, GMC_REG_DMA_FAULT_CODE), GMC_DMA_FAULT_TIMEOUT);
        const uint64_t addr = t_rd64(s, GMC_REG_DMA_FAULT_ADDR_LO);
        if (addr == at)
            stuck = at; /* the fetch itself waits */
        else if (addr < f->sys_bus || addr >= f->sys_bus + 8 * GMC_PAGE_SIZE)
            fail_msg("TIMEOUT names 0x%llx, neither a hung page nor the packet", (unsigned long long)addr);
        t_wr(s, GMC_REG_DMA_CMD, GMC_DMA_CMD_RESET_MASK);
        assert_int_equal(gmc_ring_wait(&f->r, WAIT, 16), GMC_SIM_OK);
    }
    assert_true(stuck != 0);
    gmc_sim_host_inject_clear(s);
    /* A new epoch; the fetch from before RESET still holds AR. */
    struct gmc_pkt q = gmc_pkt_transfer(mdl(f, 8 * GMC_PAGE_SIZE), gmc_side_gpu(V_B), GMC_PAGE_SIZE);
    const uint64_t next = f->r.bus + f->r.tail;
    assert_int_equal(gmc_ring_run(&f->r, &q, 1, WAIT), 1);
    assert_int_equal(t_rd(s, GMC_REG_DMA_FAULT_CODE), GMC_DMA_FAULT_TIMEOUT);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FAULT_PKT_LO), next);
    assert_int_equal(t_rd64(s, GMC_REG_DMA_FAULT_ADDR_LO), stuck);
    t_wr(s, GMC_REG_DMA_CMD, GMC_DMA_CMD_RESET_MASK);
    assert_int_equal(gmc_ring_wait(&f->r, WAIT, 16), GMC_SIM_OK);
    /* The bus gives up on the hung reads: their late answers are dropped
     * and new work completes. */
    assert_int_equal(gmc_sim_host_release(s), GMC_SIM_OK);
    assert_int_equal(gmc_ring_run(&f->r, &q, 1, WAIT), GMC_SIM_OK);
    uint8_t b[GMC_PAGE_SIZE];
    assert_int_equal(gmc_sim_vram_peek(s, V_B, b, sizeof b), GMC_SIM_OK);
    assert_memory_equal(b, f->sys + 8 * GMC_PAGE_SIZE, sizeof b);
    assert_int_equal(gmc_sim_step(s, 2000), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_DMA_STATUS), 0); /* nothing owed any more */
    char msg[200];
    if (gmc_sim_protocol_violations(s, msg, sizeof msg)) fail_msg("AXI: %s", msg);
    t_wr(s, GMC_REG_DMA_WATCHDOG, GMC_REG_DMA_WATCHDOG_RESET);
}

/* RESET in the middle of bus traffic: a W burst in progress finishes with
 * zero strobes, read data still coming is dropped, HEAD := TAIL, and the
 * protocol monitor sees nothing wrong; new work completes. */
static void test_reset_midflight(void **state)
{
    struct fx *f = *state;
    gmc_sim *s = f->s;
    for (unsigned k = 0; k < 12; k++) {
        struct gmc_pkt p[3] = {
            gmc_pkt_transfer(gmc_side_gpu(V_A), mdl(f, 0), 12 * GMC_PAGE_SIZE),
            gmc_pkt_transfer(mdl(f, 0), gmc_side_gpu(V_B), 12 * GMC_PAGE_SIZE),
            gmc_pkt_fill(V_B, 64, 0x77),
        };
        assert_int_equal(gmc_ring_put(&f->r, p, 3), GMC_SIM_OK);
        assert_int_equal(gmc_ring_kick(&f->r), GMC_SIM_OK);
        assert_int_equal(gmc_sim_step(s, 150 + 397 * k), GMC_SIM_OK);
        t_wr(s, GMC_REG_DMA_CMD, GMC_DMA_CMD_RESET_MASK);
        assert_int_equal(gmc_ring_wait(&f->r, WAIT, 16), GMC_SIM_OK);
        assert_int_equal(t_rd(s, GMC_REG_DMA_RING_HEAD), f->r.tail);
    }
    /* Let stale responses drain, then check new work and the monitor. */
    assert_int_equal(gmc_sim_step(s, 1000), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_DMA_STATUS), 0);
    uint64_t seed = 3;
    t_fill_random(f->sys, 4 * GMC_PAGE_SIZE, &seed);
    struct gmc_pkt q = gmc_pkt_transfer(mdl(f, 0), gmc_side_gpu(V_B + 5), 4 * GMC_PAGE_SIZE);
    assert_int_equal(gmc_ring_run(&f->r, &q, 1, WAIT), GMC_SIM_OK);
    uint8_t b[4 * GMC_PAGE_SIZE];
    assert_int_equal(gmc_sim_vram_peek(s, V_B + 5, b, sizeof b), GMC_SIM_OK);
    assert_memory_equal(b, f->sys, sizeof b);
    char msg[200];
    if (gmc_sim_protocol_violations(s, msg, sizeof msg)) fail_msg("AXI: %s", msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_packet_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pte_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bus_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watchdog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_epochs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stalled_address, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reset_midflight, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
