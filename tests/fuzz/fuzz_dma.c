/*
 * fuzz_dma.c - DMA packet streams decoded from the input, run by the RTL
 * model (through the ring) and by the C reference model
 * (tests/common/gmc_dma_ref.c) side by side.
 *
 * Layout per input: a fresh model; a 4 KiB ring; an arena of META (MDLs)
 * and DATA pages (contents from the input's first bytes); aperture pages
 * 0..15 mapped onto the data pages before the stream; the dummy page is
 * the last data page. Packets are mostly valid (addresses snapped into
 * VRAM windows, the aperture pages, MDLs of data pages, data bus
 * addresses), some raw (any 32 bytes) and some valid ones with one bit
 * flipped. Faults are skipped (DMA_CMD.SKIP), as the model does.
 *
 * Invariants: the engine never hangs (4 M cycles per stream); every fault
 * it stops on is the model's next one (code, packet address and, for the
 * faults docs/dma.md pins down, the fault address); after a data-dependent
 * fault (PTE, bus) partial effects are undefined, so the stream ends
 * there; otherwise, when the engine is idle: DMA_FENCE, DMA_READ_RESULT,
 * the fault and packet counters, all of VRAM and the whole arena equal the
 * model's, except that memory is not compared after a TRANSFER whose
 * sides share bytes (its result is undefined, docs/dma.md); and the AXI
 * protocol monitor saw no violation.
 */
#include <string.h>

#include "fuzz.h"
#include "gmc_dma_gen.h"
#include "gmc_dma_pkt.h"
#include "gmc_dma_ref.h"
#include "gmc_regs.h"
#include "gmc_sim.h"

#define RING_BUS 0x0000000200000000ull
#define META_PAGES 2u
#define DATA_PAGES 12u
#define ARENA ((META_PAGES + DATA_PAGES) * GMC_PAGE_SIZE)
#define AP_PAGES 16u
#define MAXPKT 24u
#define WAIT 4000000u
#define APB GMC_TOP_APERTURE_BASE
#define VWIN0 0x00010000u /* two VRAM windows of 64 KiB, far from the page table */
#define VWIN1 0x00400000u

struct fx {
    gmc_sim *s;
    struct gmc_ring ring;
    struct gmc_dma_ref ref;
    uint64_t meta, data; /* bus addresses */
    uint8_t *vbuf;
    struct gmc_dma_gen_env gen;
};

static uint32_t rd(gmc_sim *s, uint32_t off)
{
    uint32_t v = 0;
    FUZZ_CHECK(gmc_sim_reg_read(s, off, &v) == GMC_SIM_OK, "register read 0x%x", off);
    return v;
}

static uint64_t rd64(gmc_sim *s, uint32_t lo)
{
    uint64_t v = 0;
    FUZZ_CHECK(gmc_sim_reg_read64(s, lo, &v) == GMC_SIM_OK, "register read 0x%x", lo);
    return v;
}

static void wr(gmc_sim *s, uint32_t off, uint32_t v)
{
    FUZZ_CHECK(gmc_sim_reg_write(s, off, v) == GMC_SIM_OK, "register write 0x%x", off);
}

static void setup(struct fx *f, struct fuzz_in *in)
{
    struct gmc_sim_config cfg;
    gmc_sim_config_default(&cfg);
    FUZZ_CHECK(gmc_sim_create(&cfg, &f->s) == GMC_SIM_OK, "model");
    FUZZ_CHECK(gmc_ring_init(&f->ring, f->s, RING_BUS, 12, ARENA) == GMC_SIM_OK, "ring");
    uint8_t *meta, *data;
    f->meta = gmc_ring_alloc(&f->ring, META_PAGES * GMC_PAGE_SIZE, GMC_PAGE_SIZE, &meta);
    f->data = gmc_ring_alloc(&f->ring, DATA_PAGES * GMC_PAGE_SIZE, GMC_PAGE_SIZE, &data);
    FUZZ_CHECK(f->meta && f->data, "arena");
    /* the MDL: data pages in an order the input picks */
    unsigned perm[DATA_PAGES];
    for (unsigned i = 0; i < DATA_PAGES; i++)
        perm[i] = i;
    for (unsigned i = DATA_PAGES - 1; i > 0; i--) {
        unsigned j = fz_below(in, i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (unsigned i = 0; i < DATA_PAGES; i++) {
        uint64_t pa = f->data + (uint64_t)perm[i] * GMC_PAGE_SIZE;
        for (unsigned b = 0; b < 8; b++)
            meta[8 * i + b] = (uint8_t)(pa >> (8 * b));
    }
    uint64_t seed = fz_uint(in, 8) | 1u;
    for (unsigned i = 0; i < DATA_PAGES * GMC_PAGE_SIZE; i++) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        data[i] = (uint8_t)seed;
    }
    FUZZ_CHECK(gmc_dma_ref_init(&f->ref) == 0, "reference model");
    uint64_t block = f->ring.ring_bytes + f->ring.arena_bytes;
    FUZZ_CHECK(gmc_dma_ref_map(&f->ref, f->ring.bus, block) == 0, "reference map");
    memcpy(gmc_dma_ref_sys(&f->ref, f->ring.bus, block), f->ring.mem, block);
    FUZZ_CHECK(gmc_sim_vram_peek(f->s, 0, f->ref.vram, f->ref.vram_bytes) == GMC_SIM_OK, "VRAM");
    uint64_t dummy = f->data + (DATA_PAGES - 1u) * GMC_PAGE_SIZE;
    wr(f->s, GMC_REG_DUMMY_PAGE_LO, (uint32_t)dummy & GMC_DUMMY_PAGE_LO_ADDR_MASK);
    wr(f->s, GMC_REG_DUMMY_PAGE_HI, (uint32_t)(dummy >> 32));
    f->ref.dummy_page = dummy;
    f->gen = (struct gmc_dma_gen_env){ f->meta, f->data, DATA_PAGES, AP_PAGES, APB, { VWIN0, VWIN1 } };
    f->vbuf = malloc(f->ref.vram_bytes);
    FUZZ_CHECK(f->vbuf != NULL, "memory");
}

/* Compare the fault the engine stopped on with the model's fault fi.
 * Returns 1 when the stream must end (a fault with undefined effects). */
static int check_fault(struct fx *f, size_t fi)
{
    uint32_t code = rd(f->s, GMC_REG_DMA_FAULT_CODE) & GMC_DMA_FAULT_CODE_CODE_MASK;
    uint64_t pkt = rd64(f->s, GMC_REG_DMA_FAULT_PKT_LO), addr = rd64(f->s, GMC_REG_DMA_FAULT_ADDR_LO);
    FUZZ_CHECK(fi < f->ref.nfaults, "engine fault %s at packet 0x%llx, the model has none",
               gmc_dma_ref_fault_name(code), (unsigned long long)pkt);
    const struct gmc_dma_ref_fault *m = &f->ref.faults[fi];
    /* A fault found while data moves (PTE_*, BUS, TIMEOUT): the model
     * walks bytes (source, then destination), the engine blocks
     * (docs/dma.md: destination translation, source bytes, the write
     * response), so when one packet has two such problems they may name
     * different ones; both must stop on that packet with one of them. */
    int moving = !m->pinned;
    int rtl_moving = code == GMC_DMA_FAULT_PTE_INVALID || code == GMC_DMA_FAULT_PTE_PERM ||
                     code == GMC_DMA_FAULT_BUS || code == GMC_DMA_FAULT_TIMEOUT;
    FUZZ_CHECK(pkt == m->pkt && (code == m->code || (moving && rtl_moving)),
               "engine fault %s at packet 0x%llx, model %s at 0x%llx", gmc_dma_ref_fault_name(code),
               (unsigned long long)pkt, gmc_dma_ref_fault_name(m->code), (unsigned long long)m->pkt);
    if (moving)
        return 1;
    FUZZ_CHECK(addr == m->addr, "%s: fault address 0x%llx, model 0x%llx", gmc_dma_ref_fault_name(code),
               (unsigned long long)addr, (unsigned long long)m->addr);
    wr(f->s, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FAULT_MASK);
    wr(f->s, GMC_REG_DMA_CMD, GMC_DMA_CMD_SKIP_MASK);
    return 0;
}

/* Run n packets on both; returns 0 when both are idle and comparable. */
static int run(struct fx *f, const struct gmc_pkt *p, unsigned n)
{
    uint32_t tail0 = f->ring.tail;
    FUZZ_CHECK(gmc_ring_put(&f->ring, p, n) == GMC_SIM_OK, "ring put");
    memcpy(gmc_dma_ref_sys(&f->ref, f->ring.bus, f->ring.ring_bytes), f->ring.mem, f->ring.ring_bytes);
    gmc_dma_ref_clear_faults(&f->ref);
    for (unsigned i = 0; i < n; i++) {
        uint64_t bus = f->ring.bus + ((tail0 + 32u * i) & (f->ring.ring_bytes - 1u));
        gmc_dma_ref_exec_at(&f->ref, &p[i], 0, bus, i);
    }
    if (getenv("FUZZ_VERBOSE") != NULL) {
        for (unsigned i = 0; i < n; i++) {
            char d[256];
            fprintf(stderr, "  pkt %u @0x%llx: %s\n", i,
                    (unsigned long long)(f->ring.bus + ((tail0 + 32u * i) & (f->ring.ring_bytes - 1u))),
                    gmc_dma_ref_describe(&p[i], d, sizeof(d)));
        }
        for (size_t i = 0; i < f->ref.nfaults; i++)
            fprintf(stderr, "  model fault %s pkt 0x%llx addr 0x%llx%s\n", gmc_dma_ref_fault_name(f->ref.faults[i].code),
                    (unsigned long long)f->ref.faults[i].pkt, (unsigned long long)f->ref.faults[i].addr,
                    f->ref.faults[i].pinned ? "" : " (unpinned)");
    }
    FUZZ_CHECK(gmc_ring_kick(&f->ring) == GMC_SIM_OK, "kick");
    size_t fi = 0;
    uint64_t t0 = gmc_sim_cycles(f->s);
    for (;;) {
        uint64_t used = gmc_sim_cycles(f->s) - t0;
        FUZZ_CHECK(used < WAIT, "the engine hangs (%llu cycles)", (unsigned long long)used);
        int st = gmc_ring_wait(&f->ring, WAIT - used, 64);
        FUZZ_CHECK(st == GMC_SIM_OK || st == 1, "the engine hangs: %s", gmc_sim_status_name(st));
        if (st == GMC_SIM_OK)
            break;
        if (check_fault(f, fi++))
            return 1;
    }
    FUZZ_CHECK(fi == f->ref.nfaults, "engine stopped %zu times, the model faulted %zu times", fi, f->ref.nfaults);
    return 0;
}

static void compare(struct fx *f)
{
    uint64_t fence = rd64(f->s, GMC_REG_DMA_FENCE_LO), rr = rd64(f->s, GMC_REG_DMA_READ_RESULT_LO);
    FUZZ_CHECK(fence == f->ref.fence, "DMA_FENCE 0x%llx, model 0x%llx", (unsigned long long)fence,
               (unsigned long long)f->ref.fence);
    FUZZ_CHECK(rr == f->ref.read_result, "DMA_READ_RESULT 0x%llx, model 0x%llx", (unsigned long long)rr,
               (unsigned long long)f->ref.read_result);
    uint64_t nf = rd64(f->s, GMC_REG_CNT_DMA_FAULTS_LO), np = rd64(f->s, GMC_REG_CNT_DMA_PACKETS_LO);
    FUZZ_CHECK(nf == f->ref.faults_taken && np == f->ref.packets_ok, "counters: faults %llu packets %llu, model %llu %llu",
               (unsigned long long)nf, (unsigned long long)np, (unsigned long long)f->ref.faults_taken,
               (unsigned long long)f->ref.packets_ok);
    if (f->ref.overlaps != 0)
        return; /* undefined destination bytes (docs/dma.md) */
    FUZZ_CHECK(gmc_sim_vram_peek(f->s, 0, f->vbuf, f->ref.vram_bytes) == GMC_SIM_OK, "VRAM");
    for (uint64_t a = 0; a < f->ref.vram_bytes; a++)
        FUZZ_CHECK(f->vbuf[a] == f->ref.vram[a], "VRAM byte 0x%llx: 0x%02x, model 0x%02x", (unsigned long long)a,
                   f->vbuf[a], f->ref.vram[a]);
    const uint8_t *mine = gmc_dma_ref_sys(&f->ref, f->ring.bus, f->ring.ring_bytes + f->ring.arena_bytes);
    for (uint64_t a = 0; a < f->ring.ring_bytes + f->ring.arena_bytes; a++)
        FUZZ_CHECK(f->ring.mem[a] == mine[a], "system byte 0x%llx: 0x%02x, model 0x%02x",
                   (unsigned long long)(f->ring.bus + a), f->ring.mem[a], mine[a]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = { data, size };
    struct fx f;
    memset(&f, 0, sizeof(f));
    setup(&f, &in);
    /* aperture pages 0..15 onto the data pages (MDL entries 0..11, then 0..3) */
    struct gmc_pkt boot[2] = { gmc_pkt_map_aperture(APB, DATA_PAGES, f.meta, 0, 1, 1, 1),
                               gmc_pkt_map_aperture(APB + DATA_PAGES * GMC_PAGE_SIZE, AP_PAGES - DATA_PAGES, f.meta, 0, 1,
                                                    1, 1) };
    int ended = run(&f, boot, 2);
    FUZZ_CHECK(!ended && f.ref.nfaults == 0, "the set-up packets faulted");
    struct gmc_pkt p[MAXPKT];
    unsigned n = 0;
    struct gmc_dma_gen_in g = { in.p, in.n };
    while (g.n > 0 && n < MAXPKT)
        p[n++] = gmc_dma_gen_packet(&f.gen, &g);
    if (n > 0 && !run(&f, p, n))
        compare(&f);
    char msg[256] = "";
    uint64_t v = gmc_sim_protocol_violations(f.s, msg, sizeof(msg));
    FUZZ_CHECK(v == 0, "%llu AXI protocol violations: %s", (unsigned long long)v, msg);
    free(f.vbuf);
    gmc_dma_ref_fini(&f.ref);
    gmc_ring_fini(&f.ring);
    gmc_sim_destroy(f.s);
    return 0;
}
