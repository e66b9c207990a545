/* DMA engine against the reference model (tests/common/gmc_dma_ref.c):
 * seeded random packet streams through the ring, every fault and the
 * final state compared, plus directed cases for the faults whose partial
 * effects docs/dma.md does not pin down (PTE and bus errors).
 *
 * The random stream: all opcodes, all nine TRANSFER side pairings
 * (VRAM / aperture / MDL), lengths 1..8 KiB skewed small at any
 * alignment, MAP/UNMAP of random aperture pages onto random system pages,
 * FILL, DISCARD (POISON), READ/WRITE_PHYSICAL (VRAM, aperture, bus),
 * FLUSH_TLB, FENCE (memory, IRQ), INDIRECT buffers of random packets, and
 * about one packet in twelve invalid with exactly one violation
 * (OPCODE, RESERVED, SIZE, RANGE, FILL_APERTURE, PROTECTED, NESTED).
 * Packets whose data-dependent faults are possible are never generated:
 * aperture accesses use pages whose PTE allows them, MDLs point at mapped
 * pages, source and destination never share a byte, and random
 * destinations stay out of the page table, the ring and the buffers.
 * The page table changes only through MAP/UNMAP, so the TLB never holds a
 * stale entry and the model needs none. Batches end on SKIP of every
 * fault, or on RESET at the first one; some end with a FENCE watched
 * through the IRQ line or DMA_FENCE, at which point all earlier data must
 * be visible. After each batch: HEAD, DMA_FENCE, DMA_READ_RESULT, IRQs,
 * CNT_DMA_FAULTS/PACKETS and all system memory; all 8 MiB of VRAM every
 * eighth batch and at the end. On a mismatch the seed, the batch, the
 * packets and the model's last writer of each differing range are printed.
 *
 * Directed cases (exact where the spec is, "old or new byte inside the
 * destination" where it is not): PTE_PERM/PTE_INVALID on either side,
 * BUS (DECERR, SLVERR, FENCE and physical accesses, MAP's MDL), RESET
 * while data moves, TIMEOUT on a hung read and what follows it, late
 * responses after RESET, a write error reported after the next packet.
 *
 * Environment: GMC_DMA_RANDOM_PACKETS (default 3000), GMC_DMA_RANDOM_SEED
 * (overrides the fixed seeds), GMC_DMA_RANDOM_AMBIGUOUS=1 adds invalid
 * packets whose fault code docs/dma.md leaves open (see AMBIG_* below),
 * GMC_DMA_RANDOM_VERBOSE=1 prints a summary per run (2: per batch). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gmc_dma_pkt.h"
#include "gmc_dma_ref.h"
#include "gmc_test.h"

/* ------------------------------------------------------------ layout */

#define RING_BUS 0x0000000200000000ull /* above 4 GiB */
#define META_BYTES (512u << 10)   /* MDLs and indirect buffers, recycled per batch */
#define FENCE_BYTES GMC_PAGE_SIZE          /* FENCE WRITE_MEM slots */
#define ADATA_PAGES 256u          /* data pages in the ring's arena */
#define ARENA_BYTES (META_BYTES + FENCE_BYTES + ADATA_PAGES * GMC_PAGE_SIZE + 2 * GMC_PAGE_SIZE)
#define HI_BUS 0x0000FFFFFFF00000ull /* the top MiB of the 48-bit bus */
#define LO_BUS 0x0000000000100000ull
#define XREG_BYTES (1u << 20)
#define NPOOL (ADATA_PAGES + 2 * (XREG_BYTES / GMC_PAGE_SIZE))
#define APB T_APERTURE_BASE
#define APE (T_APERTURE_BASE + T_APERTURE_PAGES * GMC_PAGE_SIZE)
#define PT_BASE T_PT_BASE_RESET
#define VRAM T_VRAM_BYTES
#define DUMMY_BUS (HI_BUS + XREG_BYTES - GMC_PAGE_SIZE) /* 0xFFFFFFFFF000 */
#define UNMAPPED_BUS 0x0000500000000000ull

#define PTE_VS (GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK)
#define MAX_RING_BATCH 40u
#define MAX_INNER 16u

struct logent {
    struct gmc_pkt p;
    uint64_t bus;      /* where the engine reads it */
    uint32_t ring_off; /* the ring slot that holds it or its INDIRECT */
    int in_ind;
    uint64_t batch;
};

struct stats {
    uint64_t by_op[12];
    uint64_t faults[12];
    uint64_t xfer_pair[3][3];
    uint64_t batches, reset_batches, order_batches, vram_checks, ring_pkts;
};

struct ctx {
    gmc_sim *s;
    struct gmc_ring ring;
    struct gmc_dma_ref ref;
    uint64_t seed, rng;
    int ambiguous, verbose;
    uint8_t *hi, *lo;
    uint64_t meta_bus, meta_used, fence_bus, adata_bus;
    uint64_t pool[NPOOL];
    uint64_t plan[T_APERTURE_PAGES]; /* PTEs as the packets generated so far leave them */
    int prot_active;
    struct logent *log;
    size_t nlog, caplog;
    uint64_t batch, batch_tag0;
    uint64_t ind_tag; /* the last ring INDIRECT gen_indirect logged */
    int no_faults;    /* generating a batch that must not fault at all */
    uint8_t *vbuf; /* VRAM read through the backdoor */
    struct stats st;
};

/* ------------------------------------------------------------ helpers */

static uint64_t rnd(struct ctx *c) { return t_rand(&c->rng); }
static uint64_t rn(struct ctx *c, uint64_t n) { return n ? rnd(c) % n : 0; }
static int chance(struct ctx *c, unsigned num, unsigned den) { return rn(c, den) < num; }

static void ctx_note(const struct ctx *c)
{
    fprintf(stderr, "[dma_random] seed=0x%016" PRIx64 " batch=%" PRIu64 " packets logged=%zu (batch starts at #%" PRIu64
                    ")\n",
            c->seed, c->batch, c->nlog, c->batch_tag0);
}

#define FAILC(c, ...)            \
    do {                         \
        ctx_note(c);             \
        fail_msg(__VA_ARGS__);   \
    } while (0)

static void print_pkt(const struct ctx *c, uint64_t tag, const char *why)
{
    char d[200];
    if (tag >= c->nlog) {
        fprintf(stderr, "  %s: packet #%" PRIu64 " (not logged)\n", why, tag);
        return;
    }
    const struct logent *e = &c->log[tag];
    fprintf(stderr, "  %s: packet #%" PRIu64 " batch %" PRIu64 " at bus 0x%" PRIx64 "%s ring slot 0x%x: %s\n", why, tag,
            e->batch, e->bus, e->in_ind ? " (in indirect buffer)" : "", e->ring_off,
            gmc_dma_ref_describe(&e->p, d, sizeof d));
}

/* The simulator's view of system memory (the buffers the model serves). */
static uint8_t *sim_mem(struct ctx *c, uint64_t bus, uint64_t len)
{
    uint64_t rb = c->ring.bus, re = rb + c->ring.ring_bytes + c->ring.arena_bytes;
    if (bus >= rb && bus + len <= re) return c->ring.mem + (bus - rb);
    if (bus >= HI_BUS && bus + len <= HI_BUS + XREG_BYTES) return c->hi + (bus - HI_BUS);
    if (bus >= LO_BUS && bus + len <= LO_BUS + XREG_BYTES) return c->lo + (bus - LO_BUS);
    return NULL;
}

/* Host writes to system memory land in both the simulator and the model. */
static void both_write(struct ctx *c, uint64_t bus, const void *data, uint64_t len)
{
    uint8_t *a = sim_mem(c, bus, len), *b = gmc_dma_ref_sys(&c->ref, bus, len);
    if (!a || !b) FAILC(c, "host write outside the regions: 0x%" PRIx64 "+%" PRIu64, bus, len);
    memcpy(a, data, len);
    memcpy(b, data, len);
}

static void put64(struct ctx *c, uint64_t bus, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
    both_write(c, bus, b, 8);
}

static uint64_t meta_alloc(struct ctx *c, uint64_t bytes, uint64_t align)
{
    uint64_t off = (c->meta_used + align - 1) & ~(align - 1);
    if (off + bytes > META_BYTES) return 0;
    c->meta_used = off + bytes;
    return c->meta_bus + off;
}

static uint64_t log_add(struct ctx *c, const struct gmc_pkt *p, int in_ind)
{
    if (c->nlog == c->caplog) {
        c->caplog = c->caplog ? 2 * c->caplog : 4096;
        c->log = realloc(c->log, c->caplog * sizeof *c->log);
        assert_non_null(c->log);
    }
    struct logent *e = &c->log[c->nlog];
    memset(e, 0, sizeof *e);
    if (p) e->p = *p;
    e->in_ind = in_ind;
    e->batch = c->batch;
    return c->nlog++;
}

static uint32_t op_of(const struct gmc_pkt *p) { return (uint32_t)(p->w[0] & 0xFF); }
static uint64_t len_of(const struct gmc_pkt *p) { return p->w[0] >> 32; }

/* ------------------------------------------------------ random choices */

/* Lengths 1..8 KiB, skewed small. */
static uint32_t rand_len(struct ctx *c)
{
    unsigned r = (unsigned)rn(c, 100);
    if (r < 45) return 1 + (uint32_t)rn(c, 64);
    if (r < 80) return 1 + (uint32_t)rn(c, 1024);
    return 1 + (uint32_t)rn(c, 8192);
}

/* A VRAM range of len bytes inside [0, limit), often at an edge or in a
 * small hot window (so that packets read what the previous ones wrote). */
#define HOT_VRAM 0x100000u
#define HOT_VRAM_BYTES 0x8000u
static uint32_t rand_vram(struct ctx *c, uint32_t len, uint32_t limit)
{
    uint32_t a;
    switch (rn(c, 16)) {
    case 12:
    case 13:
    case 14:
    case 15: a = HOT_VRAM + (uint32_t)rn(c, HOT_VRAM_BYTES); break;
    case 0: a = limit - len; break;
    case 1: a = 0; break;
    case 2: a = (uint32_t)rn(c, limit / GMC_PAGE_SIZE) * GMC_PAGE_SIZE + (uint32_t)rn(c, 16) - 8; break; /* across a page edge */
    case 3: a = (2u << 20) - (uint32_t)rn(c, len + 1); break;                           /* segment 1 | 2 */
    default: a = (uint32_t)rn(c, limit - len + 1); break;
    }
    if (a > limit - len) a = limit - len;
    return a;
}

static uint32_t hot_page(struct ctx *c)
{
    /* Mostly a 64-page working set (both ends of the aperture), so the
     * 16-entry TLB hits, misses and gets invalidated. */
    if (chance(c, 3, 4)) {
        uint32_t h = (uint32_t)rn(c, 64);
        return h < 32 ? h : T_APERTURE_PAGES - 64 + h;
    }
    return (uint32_t)rn(c, T_APERTURE_PAGES);
}

static int plan_ok(const struct ctx *c, uint32_t gpu, uint32_t len, uint64_t need)
{
    for (uint64_t pg = (gpu - APB) / GMC_PAGE_SIZE; pg <= (gpu - APB + (uint64_t)len - 1) / GMC_PAGE_SIZE; pg++) {
        uint64_t pte = c->plan[pg];
        if ((pte & PTE_VS) != PTE_VS || (pte & need) != need) return 0;
    }
    return 1;
}

/* An aperture range of len bytes whose pages all allow `need`. */
static int rand_aperture(struct ctx *c, uint32_t len, uint64_t need, uint32_t *gpu)
{
    for (int t = 0; t < 16; t++) {
        uint64_t a = APB + (uint64_t)hot_page(c) * GMC_PAGE_SIZE + (chance(c, 1, 4) ? 0 : rn(c, GMC_PAGE_SIZE));
        if (a + len > APE) a = APE - len;
        if (plan_ok(c, (uint32_t)a, len, need)) {
            *gpu = (uint32_t)a;
            return 1;
        }
    }
    return 0;
}

/* A system page, a third of the time one of 12 hot pages. */
static uint64_t rand_pool(struct ctx *c)
{
    static const unsigned hot[12] = {0, 1, 2, 100, 255, 256, 257, 400, 511, 512, 700, NPOOL - 1};
    return chance(c, 1, 3) ? c->pool[hot[rn(c, 12)]] : c->pool[rn(c, NPOOL)];
}

/* An MDL entry for page pg, sometimes with junk in the bits the engine
 * ignores (63:48 and 11:0). */
static uint64_t mdl_entry(struct ctx *c, uint64_t pg, int junk)
{
    return junk ? pg | (rnd(c) & 0xFFFF000000000FFFull) : pg;
}

/* Build an MDL covering len bytes from a random first entry and offset;
 * destination MDLs use distinct pages. */
static int rand_mdl(struct ctx *c, uint32_t len, int distinct, struct gmc_side *sd)
{
    uint32_t off = chance(c, 1, 4) ? 0 : (uint32_t)rn(c, GMC_PAGE_SIZE);
    uint32_t first = chance(c, 1, 2) ? 0 : (uint32_t)rn(c, 6);
    uint32_t n = (uint32_t)((off + (uint64_t)len + GMC_PAGE_SIZE - 1) / GMC_PAGE_SIZE);
    uint64_t ents[64];
    int junk = chance(c, 1, 4);
    if (first + n > 64) return 0;
    for (uint32_t i = 0; i < first + n; i++) {
        if (i < first) {
            ents[i] = rnd(c); /* never read */
            continue;
        }
        uint64_t pg;
        int again;
        do {
            pg = rand_pool(c);
            again = 0;
            if (distinct)
                for (uint32_t j = first; j < i; j++)
                    if ((ents[j] & GMC_PTE_ADDR_MASK) == pg) again = 1;
        } while (again);
        ents[i] = mdl_entry(c, pg, junk);
    }
    uint64_t bus = meta_alloc(c, 8ull * (first + n) + 24, 8);
    if (!bus) return 0;
    bus += 8 * rn(c, 4); /* 8-aligned, not always 16/32-aligned */
    for (uint32_t i = 0; i < first + n; i++) put64(c, bus + 8ull * i, ents[i]);
    sd->mdl = 1;
    sd->addr = bus;
    sd->page = first;
    sd->offset = off;
    return 1;
}

/* Physical bytes a side touches, as chunks that never cross a page. */
struct chunk {
    int vram;
    uint64_t a, n;
};

static int side_chunks(struct ctx *c, const struct gmc_side *sd, uint32_t len, struct chunk *out, int max)
{
    int n = 0;
    uint64_t k = 0;
    while (k < len) {
        uint64_t pos, a, take;
        int vram = 0;
        if (sd->mdl) {
            pos = sd->offset + k;
            uint8_t *e = gmc_dma_ref_sys(&c->ref, sd->addr + 8 * (sd->page + pos / GMC_PAGE_SIZE), 8);
            uint64_t ent = 0;
            for (int i = 7; i >= 0; i--) ent = ent << 8 | e[i];
            a = (ent & GMC_PTE_ADDR_MASK) + pos % GMC_PAGE_SIZE;
        } else if (sd->addr < VRAM) {
            pos = sd->addr + k;
            a = pos;
            vram = 1;
        } else {
            pos = sd->addr + k;
            a = (c->plan[(pos - APB) / GMC_PAGE_SIZE] & GMC_PTE_ADDR_MASK) + pos % GMC_PAGE_SIZE;
        }
        take = GMC_PAGE_SIZE - pos % GMC_PAGE_SIZE;
        if (take > len - k) take = len - k;
        if (n == max) return -1;
        out[n].vram = vram;
        out[n].a = a;
        out[n].n = take;
        n++;
        k += take;
    }
    return n;
}

static int chunks_overlap(const struct chunk *a, int na, const struct chunk *b, int nb, int self)
{
    for (int i = 0; i < na; i++)
        for (int j = self ? i + 1 : 0; j < nb; j++)
            if (a[i].vram == b[j].vram && a[i].a < b[j].a + b[j].n && b[j].a < a[i].a + a[i].n) return 1;
    return 0;
}

/* ------------------------------------------------------ valid packets */

enum { K_VRAM, K_APER, K_MDL };

/* A TRANSFER with no possible data-dependent fault and disjoint sides. */
static int gen_transfer(struct ctx *c, struct gmc_pkt *p, int *pair)
{
    int sk = (int)rn(c, 3), dk = (int)rn(c, 3);
    uint32_t len = rand_len(c), g;
    struct gmc_side s = {0}, d = {0};

    if (sk == K_VRAM) s.addr = rand_vram(c, len, VRAM);
    else if (sk == K_APER) {
        if (!rand_aperture(c, len, GMC_PTE_READABLE_MASK, &g)) return 0;
        s.addr = g;
    } else if (!rand_mdl(c, len, 0, &s)) return 0;

    if (dk == K_VRAM) d.addr = rand_vram(c, len, PT_BASE);
    else if (dk == K_APER) {
        if (!rand_aperture(c, len, GMC_PTE_WRITEABLE_MASK, &g)) return 0;
        d.addr = g;
    } else if (!rand_mdl(c, len, 1, &d)) return 0;

    struct chunk cs[8], cd[8];
    int ns = side_chunks(c, &s, len, cs, 8), nd = side_chunks(c, &d, len, cd, 8);
    if (ns < 0 || nd < 0) return 0;
    if (chunks_overlap(cs, ns, cd, nd, 0) || chunks_overlap(cd, nd, cd, nd, 1)) return 0;
    /* A protected VRAM source toward system memory faults (pinned);
     * keep most of them valid. */
    if (sk == K_VRAM && dk != K_VRAM && gmc_dma_ref_protected(&c->ref, s.addr, len) &&
        (c->no_faults || chance(c, 3, 4)))
        return 0;
    *p = gmc_pkt_transfer(s, d, len);
    *pair = sk * 3 + dk;
    return 1;
}

static uint32_t fill_len(struct ctx *c)
{
    return chance(c, 1, 24) ? 1 + (uint32_t)rn(c, 128u << 10) : rand_len(c);
}

/* An address for a 1..8-byte physical access that does not cross 8 bytes. */
static uint64_t in8(struct ctx *c, uint64_t base_aligned8, unsigned len)
{
    return base_aligned8 + rn(c, 8 - len + 1);
}

static int gen_physical(struct ctx *c, int write, struct gmc_pkt *p)
{
    unsigned len = 1 + (unsigned)rn(c, 8);
    uint64_t a;
    int gpu = 1;
    uint32_t g;
    switch (rn(c, 3)) {
    case 0: /* VRAM; reads also from the page table */
        if (!write && chance(c, 1, 4))
            a = in8(c, PT_BASE + rn(c, T_APERTURE_PAGES) * 8, len);
        else
            a = in8(c, rn(c, (write ? PT_BASE : VRAM) / 8) * 8, len);
        if (!write && gmc_dma_ref_protected(&c->ref, a, len) && (c->no_faults || chance(c, 3, 4))) return 0;
        break;
    case 1: /* aperture */
        if (!rand_aperture(c, 8, write ? GMC_PTE_WRITEABLE_MASK : GMC_PTE_READABLE_MASK, &g)) return 0;
        a = in8(c, g & ~7u, len);
        break;
    default: /* bus address */
        gpu = 0;
        if (!write && chance(c, 1, 8))
            a = in8(c, c->fence_bus + 8 * rn(c, 4), len); /* the hot fence slots */
        else if (!write && chance(c, 1, 4))
            a = in8(c, c->ring.bus + rn(c, (c->ring.ring_bytes + c->ring.arena_bytes) / 8) * 8, len);
        else
            a = in8(c, rand_pool(c) + rn(c, GMC_PAGE_SIZE / 8) * 8, len);
        break;
    }
    if (write) {
        uint64_t v = rnd(c);
        if (len < 8) v &= (1ull << (8 * len)) - 1;
        *p = gmc_pkt_write_physical(a, gpu, len, v);
    } else {
        *p = gmc_pkt_read_physical(a, gpu, len);
    }
    return 1;
}

static uint32_t map_pages(struct ctx *c, uint32_t *first)
{
    uint32_t n = chance(c, 1, 16) ? 1 + (uint32_t)rn(c, 64) : 1 + (uint32_t)rn(c, 8);
    uint32_t pg = hot_page(c);
    if (pg + n > T_APERTURE_PAGES) pg = T_APERTURE_PAGES - n;
    *first = pg;
    return n;
}

static int gen_map(struct ctx *c, struct gmc_pkt *p, int commit)
{
    uint32_t first, n = map_pages(c, &first);
    uint32_t mpage = chance(c, 1, 2) ? 0 : (uint32_t)rn(c, 8);
    int junk = chance(c, 1, 4);
    uint64_t bus = meta_alloc(c, 8ull * (mpage + n), 8);
    if (!bus) return 0;
    unsigned perm = (unsigned)rn(c, 10);
    int rd = perm <= 7, wr = perm <= 6 || perm == 8, sn = chance(c, 1, 2);
    uint64_t flags = PTE_VS | (rd ? GMC_PTE_READABLE_MASK : 0) | (wr ? GMC_PTE_WRITEABLE_MASK : 0) |
                     (sn ? GMC_PTE_SNOOPED_MASK : 0);
    for (uint32_t i = 0; i < mpage + n; i++) {
        uint64_t pg = rand_pool(c);
        put64(c, bus + 8ull * i, i < mpage ? rnd(c) : mdl_entry(c, pg, junk));
        if (i >= mpage && commit) c->plan[first + i - mpage] = flags | pg;
    }
    *p = gmc_pkt_map_aperture(APB + first * GMC_PAGE_SIZE, n, bus, mpage, sn, rd, wr);
    return 1;
}

static int gen_unmap(struct ctx *c, struct gmc_pkt *p, int commit)
{
    uint32_t first, n = map_pages(c, &first);
    if (chance(c, 1, 200)) {
        first = 0;
        n = T_APERTURE_PAGES;
    }
    if (commit)
        for (uint32_t i = 0; i < n; i++)
            c->plan[first + i] = PTE_VS | GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK | DUMMY_BUS;
    *p = gmc_pkt_unmap_aperture(APB + first * GMC_PAGE_SIZE, n);
    return 1;
}

static int gen_fence(struct ctx *c, struct gmc_pkt *p, int irq_ok)
{
    int wm = chance(c, 1, 2);
    uint64_t a = wm ? c->fence_bus + 8 * rn(c, chance(c, 1, 2) ? 4 : FENCE_BYTES / 8) : 0;
    *p = gmc_pkt_fence(rnd(c), a, wm, irq_ok && chance(c, 1, 4));
    return 1;
}

static int gen_packet(struct ctx *c, int in_ind, int allow_invalid, int irq_ok, struct gmc_pkt *p);

/* An INDIRECT in the ring: a buffer of random packets in the meta area.
 * The INDIRECT is logged before its packets, so their tags follow it. */
static int gen_indirect(struct ctx *c, struct gmc_pkt *p, int allow_invalid, int irq_ok)
{
    unsigned n = 1 + (unsigned)rn(c, MAX_INNER);
    uint64_t bus = meta_alloc(c, 32ull * n, 32);
    if (!bus) return 0;
    uint64_t tag = log_add(c, NULL, 0);
    for (unsigned i = 0; i < n; i++) {
        struct gmc_pkt q;
        while (!gen_packet(c, 1, allow_invalid, irq_ok, &q)) {
        }
        uint64_t t = log_add(c, &q, 1);
        c->log[t].bus = bus + 32ull * i;
        uint8_t b[32];
        for (int w = 0; w < 4; w++)
            for (int j = 0; j < 8; j++) b[8 * w + j] = (uint8_t)(q.w[w] >> (8 * j));
        both_write(c, bus + 32ull * i, b, 32);
    }
    *p = gmc_pkt_indirect(bus, 32 * n);
    c->log[tag].p = *p;
    c->ind_tag = tag;
    return 1;
}

/* A valid packet of opcode op; commit: let MAP/UNMAP update the plan. */
static int gen_valid_op(struct ctx *c, unsigned op, struct gmc_pkt *p, int commit, int irq_ok)
{
    int pair;
    uint32_t len;
    switch (op) {
    case GMC_DMA_OP_NOP: *p = gmc_pkt_nop(); return 1;
    case GMC_DMA_OP_TRANSFER:
        if (!gen_transfer(c, p, &pair)) return 0;
        if (commit) c->st.xfer_pair[pair / 3][pair % 3]++;
        return 1;
    case GMC_DMA_OP_FILL:
        len = fill_len(c);
        *p = gmc_pkt_fill(rand_vram(c, len, PT_BASE), len, (uint32_t)rnd(c));
        return 1;
    case GMC_DMA_OP_DISCARD:
        len = fill_len(c);
        *p = gmc_pkt_discard(rand_vram(c, len, PT_BASE), len, chance(c, 1, 2));
        return 1;
    case GMC_DMA_OP_READ_PHYSICAL: return gen_physical(c, 0, p);
    case GMC_DMA_OP_WRITE_PHYSICAL: return gen_physical(c, 1, p);
    case GMC_DMA_OP_MAP_APERTURE: return gen_map(c, p, commit);
    case GMC_DMA_OP_UNMAP_APERTURE: return gen_unmap(c, p, commit);
    case GMC_DMA_OP_FLUSH_TLB: *p = gmc_pkt_flush_tlb(); return 1;
    case GMC_DMA_OP_FENCE: return gen_fence(c, p, irq_ok);
    }
    return 0;
}

/* ---------------------------------------------------- invalid packets */

enum {
    AMBIG_LENGTH_UNUSED,  /* LENGTH != 0 on NOP/FLUSH_TLB/FENCE: RESERVED (or SIZE?) */
    AMBIG_WPHYS_HIGH,     /* WRITE_PHYSICAL W3 bytes above LENGTH: RESERVED (or ignored?) */
    AMBIG_MAP_UNALIGNED,  /* MAP/UNMAP W2 not page aligned: SIZE (or RESERVED?) */
    AMBIG_MAP_VRAM,       /* MAP/UNMAP on a VRAM range: RANGE (or FILL_APERTURE-like?) */
    AMBIG_GPU_HIGH,       /* GPU address bits 63:32 set: RESERVED (or RANGE?) */
    AMBIG_N /* the RTL agrees with the first reading of each (checked over 40+ seeds) */
};

static int gpu_ok_range(uint64_t a, uint64_t len)
{
    return (a + len <= VRAM) || (a >= APB && a + len <= APE);
}

/* A GPU range of len bytes that is neither wholly VRAM nor wholly aperture. */
static uint64_t bad_gpu(struct ctx *c, uint32_t len)
{
    switch (rn(c, 5)) {
    case 0: return VRAM - len + 1 + rn(c, len); /* across the VRAM end, or just past it */
    case 1: return VRAM + rn(c, APB - VRAM - len); /* the hole */
    case 2: return APE - len + 1 + rn(c, len);      /* across the aperture end, or past it */
    case 3: return APB - 1 - rn(c, len < 2 ? 1 : len - 1); /* across the aperture start */
    default: return 0xFFFFFFFFull - rn(c, 16);
    }
}

static int gen_invalid(struct ctx *c, int in_ind, struct gmc_pkt *p)
{
    static const unsigned ops_len[] = {GMC_DMA_OP_TRANSFER,      GMC_DMA_OP_FILL,         GMC_DMA_OP_DISCARD,
                                       GMC_DMA_OP_READ_PHYSICAL, GMC_DMA_OP_WRITE_PHYSICAL, GMC_DMA_OP_MAP_APERTURE,
                                       GMC_DMA_OP_UNMAP_APERTURE};
    unsigned op = 1 + (unsigned)rn(c, 10), cls = (unsigned)rn(c, c->ambiguous ? 9 : 8);
    uint32_t len;
    uint64_t a;

    switch (cls) {
    case 0: /* OPCODE */
        p->w[0] = (chance(c, 1, 3) ? 0 : 12 + rn(c, 244)) | (rnd(c) & ~0xFFull & (chance(c, 1, 2) ? ~0ull : 0));
        p->w[1] = rnd(c);
        p->w[2] = chance(c, 1, 2) ? rnd(c) : 0;
        p->w[3] = 0;
        return 1;
    case 1: /* RESERVED: W0[31:16] */
        if (!gen_valid_op(c, op, p, 0, 1)) return 0;
        p->w[0] |= (1 + rn(c, 0xFFFF)) << 16;
        return 1;
    case 2: { /* RESERVED: a flag the opcode does not take */
        unsigned taken = op == GMC_DMA_OP_TRANSFER ? 0x03
                         : (op == GMC_DMA_OP_READ_PHYSICAL || op == GMC_DMA_OP_WRITE_PHYSICAL) ? 0x04
                         : op == GMC_DMA_OP_DISCARD ? 0x08
                         : op == GMC_DMA_OP_FENCE ? 0x30
                                                   : 0;
        unsigned bit;
        do bit = 1u << rn(c, 8);
        while (bit & taken);
        if (!gen_valid_op(c, op, p, 0, 1)) return 0;
        p->w[0] |= (uint64_t)bit << 8;
        return 1;
    }
    case 3: /* RESERVED: an unused word or field */
        if (!gen_valid_op(c, op, p, 0, 1)) return 0;
        switch (op) {
        case GMC_DMA_OP_NOP:
        case GMC_DMA_OP_FLUSH_TLB: p->w[1 + rn(c, 3)] = 1 + rn(c, UINT64_MAX - 1); return 1;
        case GMC_DMA_OP_TRANSFER: {
            unsigned fl = (unsigned)(p->w[0] >> 8) & 3;
            if (!(fl & 1) && chance(c, 1, 2)) p->w[3] |= 1 + rn(c, 0xFFFFFFFFu);
            else if (!(fl & 2)) p->w[3] |= (1 + rn(c, 0xFFFFFFFFu)) << 32;
            else p->w[1 + rn(c, 2)] |= (1 + rn(c, 0xFFFF)) << 48; /* MDL bus address bits 63:48 */
            return 1;
        }
        case GMC_DMA_OP_FILL:
            if (chance(c, 1, 2)) p->w[1] = 1 + rn(c, UINT64_MAX - 1);
            else p->w[3] |= (1 + rn(c, 0xFFFFFFFFu)) << 32;
            return 1;
        case GMC_DMA_OP_DISCARD: p->w[chance(c, 1, 2) ? 1 : 3] = 1 + rn(c, UINT64_MAX - 1); return 1;
        case GMC_DMA_OP_READ_PHYSICAL:
            if (!(p->w[0] & (GMC_PKT_FLAG_GPU_MASK << 8)) && chance(c, 1, 2)) p->w[1] |= (1 + rn(c, 0xFFFF)) << 48;
            else p->w[2 + rn(c, 2)] = 1 + rn(c, UINT64_MAX - 1);
            return 1;
        case GMC_DMA_OP_WRITE_PHYSICAL:
            if (!(p->w[0] & (GMC_PKT_FLAG_GPU_MASK << 8)) && chance(c, 1, 2)) p->w[2] |= (1 + rn(c, 0xFFFF)) << 48;
            else p->w[1] = 1 + rn(c, UINT64_MAX - 1);
            return 1;
        case GMC_DMA_OP_MAP_APERTURE:
            if (chance(c, 1, 3)) p->w[1] |= (1 + rn(c, 0xFFFF)) << 48;
            else if (chance(c, 1, 2)) p->w[3] |= (1 + rn(c, 0xFFF)) << 20;
            else p->w[3] |= (1 + rn(c, (1ull << 29) - 1)) << 35;
            return 1;
        case GMC_DMA_OP_UNMAP_APERTURE: p->w[chance(c, 1, 2) ? 1 : 3] = 1 + rn(c, UINT64_MAX - 1); return 1;
        case GMC_DMA_OP_FENCE:
            if (chance(c, 1, 3)) p->w[1] = 1 + rn(c, UINT64_MAX - 1);
            else if (p->w[0] & (GMC_PKT_FLAG_WRITE_MEM_MASK << 8)) p->w[2] |= (1 + rn(c, 0xFFFF)) << 48;
            else p->w[2] = 8 * (1 + rn(c, 1000));
            return 1;
        }
        return 0;
    case 4: /* SIZE */
        switch (rn(c, 7)) {
        case 0: /* LENGTH zero */
            op = ops_len[rn(c, sizeof ops_len / sizeof ops_len[0])];
            if (!gen_valid_op(c, op, p, 0, 1)) return 0;
            p->w[0] &= 0xFFFFFFFFull;
            return 1;
        case 1: /* physical LENGTH > 8 */
            if (!gen_valid_op(c, chance(c, 1, 2) ? GMC_DMA_OP_READ_PHYSICAL : GMC_DMA_OP_WRITE_PHYSICAL, p, 0, 1))
                return 0;
            p->w[0] = (p->w[0] & 0xFFFFFFFFull) | (chance(c, 1, 4) ? 0xFFFFFFFFull : 9 + rn(c, 200)) << 32;
            if (op_of(p) == GMC_DMA_OP_WRITE_PHYSICAL) p->w[3] = rnd(c);
            return 1;
        case 2: { /* physical access across 8 bytes */
            int wr = chance(c, 1, 2);
            unsigned l = 2 + (unsigned)rn(c, 7);
            uint64_t base = rn(c, 2) ? rand_pool(c) : rn(c, PT_BASE / 8) * 8, at = base + 8 - rn(c, l - 1) - 1;
            int gpu = base < VRAM;
            if (gpu && !wr && gmc_dma_ref_protected(&c->ref, at, l)) return 0;
            *p = wr ? gmc_pkt_write_physical(at, gpu, l, rnd(c) & (l < 8 ? (1ull << (8 * l)) - 1 : ~0ull))
                    : gmc_pkt_read_physical(at, gpu, l);
            return 1;
        }
        case 3: /* misaligned MDL base (TRANSFER or MAP) */
            if (chance(c, 1, 2)) {
                if (!gen_valid_op(c, GMC_DMA_OP_MAP_APERTURE, p, 0, 1)) return 0;
                p->w[1] += 1 + rn(c, 7);
                return 1;
            }
            if (!gen_valid_op(c, GMC_DMA_OP_TRANSFER, p, 0, 1)) return 0;
            if (!(p->w[0] & 0x300)) return 0;
            p->w[(p->w[0] & 0x100) ? 1 : 2] += 1 + rn(c, 7);
            return 1;
        case 4: /* INDIRECT address not 32-aligned, or length not a multiple of 32 */
            if (in_ind) return 0;
            a = meta_alloc(c, 64, 32);
            if (!a) return 0;
            if (chance(c, 1, 2)) *p = gmc_pkt_indirect(a + 8 * (1 + rn(c, 3)), 32);
            else *p = gmc_pkt_indirect(a, chance(c, 1, 2) ? 1 + (uint32_t)rn(c, 31) : 32 + 1 + (uint32_t)rn(c, 31));
            return 1;
        case 5: /* INDIRECT LENGTH zero */
            if (in_ind) return 0;
            *p = gmc_pkt_indirect(c->meta_bus, 0);
            return 1;
        default: /* FENCE WRITE_MEM address not 8-aligned */
            *p = gmc_pkt_fence(rnd(c), c->fence_bus + 8 * rn(c, FENCE_BYTES / 8 - 1) + 1 + rn(c, 7), 1, 0);
            return 1;
        }
    case 5: /* RANGE */
        len = rand_len(c);
        a = bad_gpu(c, len);
        switch (rn(c, 5)) {
        case 0: { /* TRANSFER source */
            struct gmc_side s = {0, a, 0, 0}, d = {0, rand_vram(c, len, PT_BASE), 0, 0};
            *p = gmc_pkt_transfer(s, d, len);
            return 1;
        }
        case 1: { /* TRANSFER destination */
            struct gmc_side s = {0, rand_vram(c, len, VRAM), 0, 0}, d = {0, a, 0, 0};
            if (chance(c, 1, 2) && !rand_mdl(c, len, 0, &s)) return 0;
            *p = gmc_pkt_transfer(s, d, len);
            return 1;
        }
        case 2: *p = chance(c, 1, 2) ? gmc_pkt_fill((uint32_t)a, len, (uint32_t)rnd(c))
                                     : gmc_pkt_discard((uint32_t)a, len, chance(c, 1, 2));
            return 1;
        case 3: {
            unsigned l = 1 + (unsigned)rn(c, 8);
            a = (bad_gpu(c, 8) & ~7ull) + rn(c, 8 - l + 1);
            if (gpu_ok_range(a, l)) return 0;
            *p = chance(c, 1, 2) ? gmc_pkt_read_physical(a, 1, l) : gmc_pkt_write_physical(a, 1, l, 0);
            return 1;
        }
        default: { /* MAP/UNMAP past the aperture end */
            uint32_t n = 1 + (uint32_t)rn(c, 64), pg = T_APERTURE_PAGES - (uint32_t)rn(c, n);
            if (chance(c, 1, 2)) *p = gmc_pkt_unmap_aperture(APB + pg * GMC_PAGE_SIZE, n);
            else {
                uint64_t m = meta_alloc(c, 8ull * n, 8);
                if (!m) return 0;
                for (uint32_t i = 0; i < n; i++) put64(c, m + 8ull * i, rand_pool(c));
                *p = gmc_pkt_map_aperture(APB + pg * GMC_PAGE_SIZE, n, m, 0, 1, 1, 1);
            }
            return 1;
        }
        }
    case 6: /* FILL_APERTURE */
        len = rand_len(c);
        a = APB + rn(c, (uint64_t)T_APERTURE_PAGES * GMC_PAGE_SIZE - len + 1);
        *p = chance(c, 1, 2) ? gmc_pkt_fill((uint32_t)a, len, (uint32_t)rnd(c))
                             : gmc_pkt_discard((uint32_t)a, len, chance(c, 1, 2));
        return 1;
    case 7: /* PROTECTED, or NESTED inside a buffer */
        if (in_ind && chance(c, 1, 2)) {
            *p = gmc_pkt_indirect(c->meta_bus, 32 * (1 + (uint32_t)rn(c, 4)));
            return 1;
        }
        if (!c->prot_active) return 0;
        for (int t = 0; t < 32; t++) {
            len = rand_len(c);
            a = rand_vram(c, len, VRAM);
            if (!gmc_dma_ref_protected(&c->ref, a, len)) continue;
            if (chance(c, 1, 4)) {
                unsigned l = 1 + (unsigned)rn(c, 8);
                uint64_t b = a & ~7ull;
                if (!gmc_dma_ref_protected(&c->ref, b, 8)) continue;
                *p = gmc_pkt_read_physical(b + rn(c, 8 - l + 1), 1, l);
                if (!gmc_dma_ref_protected(&c->ref, p->w[1], l)) continue;
                return 1;
            }
            struct gmc_side s = {0, a, 0, 0}, d = {0};
            uint32_t g;
            if (chance(c, 1, 2)) {
                if (!rand_mdl(c, len, 1, &d)) return 0;
            } else {
                if (!rand_aperture(c, len, GMC_PTE_WRITEABLE_MASK, &g)) return 0;
                d.addr = g;
            }
            *p = gmc_pkt_transfer(s, d, len);
            return 1;
        }
        return 0;
    default: /* the classes docs/dma.md leaves open */
        switch (rn(c, AMBIG_N)) {
        case AMBIG_LENGTH_UNUSED:
            *p = rn(c, 3) == 0 ? gmc_pkt_nop() : rn(c, 2) ? gmc_pkt_flush_tlb() : gmc_pkt_fence(rnd(c), 0, 0, 0);
            p->w[0] |= (1 + rn(c, 0xFFFFFFFEu)) << 32;
            return 1;
        case AMBIG_WPHYS_HIGH:
            if (!gen_valid_op(c, GMC_DMA_OP_WRITE_PHYSICAL, p, 0, 1) || len_of(p) == 8) return 0;
            p->w[3] |= (1ull << 63) >> rn(c, 64 - 8 * len_of(p));
            return 1;
        case AMBIG_MAP_UNALIGNED:
            if (!gen_valid_op(c, chance(c, 1, 2) ? GMC_DMA_OP_MAP_APERTURE : GMC_DMA_OP_UNMAP_APERTURE, p, 0, 1))
                return 0;
            p->w[2] += 1 + rn(c, GMC_PAGE_SIZE - 1);
            if (p->w[2] + len_of(p) * GMC_PAGE_SIZE > APE) p->w[2] -= GMC_PAGE_SIZE;
            return 1;
        case AMBIG_MAP_VRAM:
            *p = gmc_pkt_unmap_aperture((uint32_t)rn(c, 1024) * GMC_PAGE_SIZE, 1 + (uint32_t)rn(c, 8));
            return 1;
        default:
            op = chance(c, 1, 2) ? GMC_DMA_OP_FILL : GMC_DMA_OP_TRANSFER;
            if (!gen_valid_op(c, op, p, 0, 1)) return 0;
            if (op == GMC_DMA_OP_FILL) p->w[2] |= (1 + rn(c, 0xFFFFFFFFu)) << 32;
            else if (!(p->w[0] & 0x100)) p->w[1] |= (1 + rn(c, 0xFFFFFFFFu)) << 32;
            else if (!(p->w[0] & 0x200)) p->w[2] |= (1 + rn(c, 0xFFFFFFFFu)) << 32;
            else return 0;
            return 1;
        }
    }
}

/* ------------------------------------------------------------ packets */

/* One packet, valid or (sometimes) invalid, for the ring (in_ind 0) or a
 * buffer (1); ring INDIRECTs come from gen_indirect. */
static int gen_packet(struct ctx *c, int in_ind, int allow_invalid, int irq_ok, struct gmc_pkt *p)
{
    if (allow_invalid && chance(c, 1, 12))
        for (int t = 0; t < 8; t++)
            if (gen_invalid(c, in_ind, p)) return 1;
    static const struct {
        unsigned op, weight;
    } mix[] = {{GMC_DMA_OP_TRANSFER, 34},       {GMC_DMA_OP_FILL, 7},          {GMC_DMA_OP_DISCARD, 5},
               {GMC_DMA_OP_READ_PHYSICAL, 9},   {GMC_DMA_OP_WRITE_PHYSICAL, 9}, {GMC_DMA_OP_MAP_APERTURE, 10},
               {GMC_DMA_OP_UNMAP_APERTURE, 5},  {GMC_DMA_OP_FLUSH_TLB, 3},     {GMC_DMA_OP_NOP, 3},
               {GMC_DMA_OP_FENCE, 6}};
    unsigned total = 0;
    for (size_t i = 0; i < sizeof mix / sizeof mix[0]; i++) total += mix[i].weight;
    unsigned r = (unsigned)rn(c, total);
    for (size_t i = 0; i < sizeof mix / sizeof mix[0]; i++) {
        if (r < mix[i].weight) return gen_valid_op(c, mix[i].op, p, 1, irq_ok);
        r -= mix[i].weight;
    }
    return 0;
}

/* ----------------------------------------------------------- checking */

static uint64_t fnv(const uint8_t *b, uint64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* Report the differing byte ranges of exp/act (at address base) with the
 * packets that last wrote them in the model. */
static void report_diff(struct ctx *c, const char *what, uint64_t base, const uint8_t *exp, const uint8_t *act,
                        uint64_t n, const uint64_t *writer)
{
    unsigned shown = 0;
    uint64_t total = 0;
    fprintf(stderr, "  %s: model hash %016" PRIx64 ", RTL hash %016" PRIx64 "\n", what, fnv(exp, n), fnv(act, n));
    for (uint64_t i = 0; i < n;) {
        if (exp[i] == act[i]) {
            i++;
            continue;
        }
        uint64_t j = i;
        while (j < n && (exp[j] != act[j] || (j + 1 < n && j + 8 < n && memcmp(exp + j, act + j, 8) != 0))) j++;
        total += j - i;
        if (shown++ < 12) {
            fprintf(stderr, "  %s 0x%" PRIx64 "..0x%" PRIx64 " (%" PRIu64 " bytes) differs; model:", what, base + i,
                    base + j, j - i);
            for (uint64_t k = i; k < j && k < i + 16; k++) fprintf(stderr, " %02x", exp[k]);
            fprintf(stderr, "  RTL:");
            for (uint64_t k = i; k < j && k < i + 16; k++) fprintf(stderr, " %02x", act[k]);
            fprintf(stderr, "\n");
            uint64_t w = writer[i / GMC_PAGE_SIZE];
            if (w != UINT64_MAX) print_pkt(c, w, "    last model write by");
        }
        i = j;
    }
    fprintf(stderr, "  %s: %" PRIu64 " bytes differ in %u ranges\n", what, total, shown);
}

static void check_sys(struct ctx *c)
{
    for (unsigned i = 0; i < c->ref.nregions; i++) {
        const struct gmc_dma_ref_region *g = &c->ref.region[i];
        const uint8_t *sm = sim_mem(c, g->bus, g->len);
        if (memcmp(sm, g->mem, g->len) != 0) {
            char what[64];
            snprintf(what, sizeof what, "system memory @0x%" PRIx64, g->bus);
            report_diff(c, what, g->bus, g->mem, sm, g->len, c->ref.region_writer[i]);
            FAILC(c, "system memory differs from the model (region 0x%" PRIx64 ")", g->bus);
        }
    }
}

static void check_vram(struct ctx *c)
{
    assert_int_equal(gmc_sim_vram_peek(c->s, 0, c->vbuf, VRAM), GMC_SIM_OK);
    c->st.vram_checks++;
    if (memcmp(c->vbuf, c->ref.vram, VRAM) != 0) {
        report_diff(c, "VRAM", 0, c->ref.vram, c->vbuf, VRAM, c->ref.vram_writer);
        FAILC(c, "VRAM differs from the model");
    }
}

static void check_regs(struct ctx *c)
{
    uint32_t st = t_rd(c->s, GMC_REG_DMA_STATUS);
    uint32_t head = t_rd(c->s, GMC_REG_DMA_RING_HEAD);
    if ((st & GMC_DMA_STATUS_STATE_MASK) != GMC_DMA_STATE_IDLE || head != c->ring.tail)
        FAILC(c, "engine not idle after the batch: STATUS 0x%x HEAD 0x%x TAIL 0x%x", st, head, c->ring.tail);
    uint64_t fence = t_rd64(c->s, GMC_REG_DMA_FENCE_LO);
    if (fence != c->ref.fence)
        FAILC(c, "DMA_FENCE 0x%" PRIx64 ", model 0x%" PRIx64, fence, c->ref.fence);
    uint64_t rr = t_rd64(c->s, GMC_REG_DMA_READ_RESULT_LO);
    if (rr != c->ref.read_result)
        FAILC(c, "DMA_READ_RESULT 0x%" PRIx64 ", model 0x%" PRIx64, rr, c->ref.read_result);
    uint32_t irq = t_rd(c->s, GMC_REG_IRQ_STATUS);
    if (!!(irq & GMC_IRQ_DMA_FENCE_MASK) != c->ref.irq_fence)
        FAILC(c, "IRQ_STATUS.DMA_FENCE %d, model %d", !!(irq & GMC_IRQ_DMA_FENCE_MASK), c->ref.irq_fence);
    if (irq & GMC_IRQ_DMA_FAULT_MASK) FAILC(c, "IRQ_STATUS.DMA_FAULT pending after the batch");
    t_wr(c->s, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FENCE_MASK);
    c->ref.irq_fence = 0;
    uint64_t nf = t_rd64(c->s, GMC_REG_CNT_DMA_FAULTS_LO);
    if (nf != c->ref.faults_taken)
        FAILC(c, "CNT_DMA_FAULTS %" PRIu64 ", model %" PRIu64, nf, c->ref.faults_taken);
    /* "Packets completed": a packet that faulted (and was skipped) is not
     * completed; an INDIRECT counts once after its buffer, whatever faulted
     * inside it. */
    uint64_t np = t_rd64(c->s, GMC_REG_CNT_DMA_PACKETS_LO);
    if (np != c->ref.packets_ok)
        FAILC(c, "CNT_DMA_PACKETS %" PRIu64 ", model %" PRIu64, np, c->ref.packets_ok);
}

/* The engine stopped: compare the fault with the model's next one. */
static void check_fault(struct ctx *c, size_t fi)
{
    uint32_t code = t_rd(c->s, GMC_REG_DMA_FAULT_CODE);
    uint64_t pkt = t_rd64(c->s, GMC_REG_DMA_FAULT_PKT_LO);
    uint64_t addr = t_rd64(c->s, GMC_REG_DMA_FAULT_ADDR_LO);
    uint32_t head = t_rd(c->s, GMC_REG_DMA_RING_HEAD);
    uint32_t st = t_rd(c->s, GMC_REG_DMA_STATUS);
    uint32_t irq = t_rd(c->s, GMC_REG_IRQ_STATUS);
    uint64_t fence = t_rd64(c->s, GMC_REG_DMA_FENCE_LO);
    uint64_t rr = t_rd64(c->s, GMC_REG_DMA_READ_RESULT_LO);
    unsigned rc = code & GMC_DMA_FAULT_CODE_CODE_MASK, rind = !!(code & GMC_DMA_FAULT_CODE_INDIRECT_MASK);

    if (fi >= c->ref.nfaults) {
        fprintf(stderr, "  RTL fault %s%s pkt 0x%" PRIx64 " addr 0x%" PRIx64 " head 0x%x; the model expects none\n",
                gmc_dma_ref_fault_name(rc), rind ? " (indirect)" : "", pkt, addr, head);
        for (size_t t = c->batch_tag0; t < c->nlog; t++)
            if (c->log[t].bus == pkt) print_pkt(c, t, "faulting packet");
        FAILC(c, "unexpected DMA fault %s", gmc_dma_ref_fault_name(rc));
    }
    const struct gmc_dma_ref_fault *f = &c->ref.faults[fi];
    const uint32_t exp_head = c->log[f->tag].ring_off;
    if (rc != f->code || rind != (unsigned)f->indirect || pkt != f->pkt || addr != f->addr || head != exp_head ||
        (st & GMC_DMA_STATUS_STATE_MASK) != GMC_DMA_STATE_FAULTED || !(irq & GMC_IRQ_DMA_FAULT_MASK)) {
        fprintf(stderr,
                "  RTL:   %s%s pkt 0x%" PRIx64 " addr 0x%" PRIx64 " head 0x%x state %u irq 0x%x\n"
                "  model: %s%s pkt 0x%" PRIx64 " addr 0x%" PRIx64 " head 0x%x state 2\n",
                gmc_dma_ref_fault_name(rc), rind ? " (indirect)" : "", pkt, addr, head,
                st & GMC_DMA_STATUS_STATE_MASK, irq, gmc_dma_ref_fault_name(f->code), f->indirect ? " (indirect)" : "",
                f->pkt, f->addr, exp_head);
        print_pkt(c, f->tag, "model's faulting packet");
        for (size_t t = c->batch_tag0; t < c->nlog; t++)
            if (c->log[t].bus == pkt && t != f->tag) print_pkt(c, t, "RTL's faulting packet");
        FAILC(c, "DMA fault differs from the model (packet #%" PRIu64 ")", f->tag);
    }
    if (fence != f->fence || rr != f->read_result)
        FAILC(c, "at the fault on packet #%" PRIu64 ": DMA_FENCE 0x%" PRIx64 " READ_RESULT 0x%" PRIx64
                 ", model 0x%" PRIx64 " 0x%" PRIx64,
              f->tag, fence, rr, f->fence, f->read_result);
    if (!!(st & GMC_DMA_STATUS_INDIRECT_MASK) != f->indirect)
        FAILC(c, "DMA_STATUS.INDIRECT %d at a fault with FAULT_CODE.INDIRECT %d (packet #%" PRIu64 ")",
              !!(st & GMC_DMA_STATUS_INDIRECT_MASK), f->indirect, f->tag);
    if (f->code < 12) c->st.faults[f->code]++;
    t_wr(c->s, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FAULT_MASK);
}

/* Cycle budget of one wait, scaled for the compact engine (t_dma_slowdown). */
static uint32_t wait_cycles = 4000000u;
#define WAIT_CYCLES wait_cycles

enum batch_kind { B_SKIP, B_RESET, B_ORDER_IRQ, B_ORDER_REG };

/* Run n ring packets (already generated, logged as tags[]) on both the
 * engine and the model, handling every fault with SKIP (or the first with
 * RESET), and check the architectural results. Ordering batches end with
 * a FENCE whose IRQ or register value is watched: at that moment all the
 * earlier data must already be visible. */
static void submit(struct ctx *c, struct gmc_pkt *pk, const uint64_t *tags, unsigned n, enum batch_kind kind,
                   int vram_check)
{
    for (unsigned i = 0; i < n; i++) {
        uint32_t off = (c->ring.tail + 32 * i) & (c->ring.ring_bytes - 1);
        uint64_t end = i + 1 < n ? tags[i + 1] : c->nlog;
        for (uint64_t t = tags[i]; t < end; t++) c->log[t].ring_off = off;
        c->log[tags[i]].bus = c->ring.bus + off;
        c->st.ring_pkts++;
    }
    for (uint64_t t = tags[0]; t < c->nlog; t++) c->st.by_op[op_of(&c->log[t].p) < 12 ? op_of(&c->log[t].p) : 0]++;

    int st = gmc_ring_put(&c->ring, pk, n);
    if (st) FAILC(c, "gmc_ring_put: %s", gmc_sim_status_name(st));
    memcpy(gmc_dma_ref_sys(&c->ref, c->ring.bus, c->ring.ring_bytes), c->ring.mem, c->ring.ring_bytes);

    gmc_dma_ref_clear_faults(&c->ref);
    c->ref.stop_on_fault = kind == B_RESET;
    c->ref.stopped = 0;
    for (unsigned i = 0; i < n && !c->ref.stopped; i++) gmc_dma_ref_exec_at(&c->ref, &pk[i], 0, c->log[tags[i]].bus, tags[i]);
    for (size_t i = 0; i < c->ref.nfaults; i++)
        if (!c->ref.faults[i].pinned) {
            print_pkt(c, c->ref.faults[i].tag, "packet");
            FAILC(c, "generator bug: a data-dependent fault (%s) in the random stream",
                  gmc_dma_ref_fault_name(c->ref.faults[i].code));
        }

    uint64_t fence_val = 0;
    if (kind == B_ORDER_IRQ || kind == B_ORDER_REG) {
        const struct gmc_pkt *last = &pk[n - 1];
        assert_int_equal(op_of(last), GMC_DMA_OP_FENCE);
        assert_int_equal(c->ref.nfaults, 0);
        fence_val = last->w[3];
        t_wr(c->s, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FENCE_MASK);
        if (kind == B_ORDER_IRQ) t_wr(c->s, GMC_REG_IRQ_MASK, GMC_IRQ_DMA_FENCE_MASK);
    }
    st = gmc_ring_kick(&c->ring);
    if (st) FAILC(c, "gmc_ring_kick: %s", gmc_sim_status_name(st));

    if (fence_val) {
        uint64_t waited = 0;
        for (;;) {
            if (kind == B_ORDER_IRQ) {
                assert_int_equal(gmc_sim_step(c->s, 1), GMC_SIM_OK);
                waited++;
                if (gmc_sim_irq(c->s)) break;
            } else {
                assert_int_equal(gmc_sim_step(c->s, 8), GMC_SIM_OK);
                waited += 8;
                if (t_rd(c->s, GMC_REG_DMA_FENCE_LO) == (uint32_t)fence_val &&
                    t_rd64(c->s, GMC_REG_DMA_FENCE_LO) == fence_val)
                    break;
            }
            if (waited > WAIT_CYCLES) FAILC(c, "the final FENCE never showed (%s)", kind == B_ORDER_IRQ ? "IRQ" : "register");
        }
        /* Everything before the FENCE and its memory copy is visible now. */
        check_sys(c);
        check_vram(c);
        if (kind == B_ORDER_IRQ) t_wr(c->s, GMC_REG_IRQ_MASK, 0);
    }

    size_t fi = 0;
    for (;;) {
        st = gmc_ring_wait(&c->ring, WAIT_CYCLES, 16);
        if (st == GMC_SIM_OK) break;
        if (st != 1) {
            fprintf(stderr, "  STATUS 0x%x HEAD 0x%x TAIL 0x%x\n", t_rd(c->s, GMC_REG_DMA_STATUS),
                    t_rd(c->s, GMC_REG_DMA_RING_HEAD), c->ring.tail);
            FAILC(c, "gmc_ring_wait: %s", gmc_sim_status_name(st));
        }
        check_fault(c, fi++);
        if (kind == B_RESET) {
            t_wr(c->s, GMC_REG_DMA_CMD, GMC_DMA_CMD_RESET_MASK);
            st = gmc_ring_wait(&c->ring, WAIT_CYCLES, 16);
            if (st != GMC_SIM_OK) FAILC(c, "engine not idle after DMA_CMD.RESET: %s", gmc_sim_status_name(st));
            break;
        }
        t_wr(c->s, GMC_REG_DMA_CMD, GMC_DMA_CMD_SKIP_MASK);
    }
    if (fi != c->ref.nfaults) {
        const struct gmc_dma_ref_fault *f = &c->ref.faults[fi];
        fprintf(stderr, "  model: %s addr 0x%" PRIx64 "\n", gmc_dma_ref_fault_name(f->code), f->addr);
        print_pkt(c, f->tag, "packet");
        FAILC(c, "the RTL did not fault where the model does (%zu of %zu faults seen)", fi, c->ref.nfaults);
    }
    check_regs(c);
    check_sys(c);
    if (vram_check) check_vram(c);
    gmc_dma_ref_clear_faults(&c->ref);
}

/* ------------------------------------------------------------- set-up */

static void ctx_init(struct ctx *c, uint64_t seed, uint32_t latency, unsigned ring_log2)
{
    memset(c, 0, sizeof *c);
    const char *e = getenv("GMC_DMA_RANDOM_SEED");
    c->seed = e && *e ? strtoull(e, NULL, 0) : seed;
    c->rng = c->seed ? c->seed : 1;
    e = getenv("GMC_DMA_RANDOM_AMBIGUOUS");
    c->ambiguous = e && atoi(e);
    e = getenv("GMC_DMA_RANDOM_VERBOSE");
    c->verbose = e ? atoi(e) : 0;

    c->s = t_sim_new();
    wait_cycles = 4000000u * t_dma_slowdown(c->s);
    assert_int_equal(gmc_sim_set_host_latency(c->s, latency), GMC_SIM_OK);
    assert_true(t_rd(c->s, GMC_REG_CAPS) & GMC_CAPS_DMA_MASK);
    assert_int_equal(t_rd(c->s, GMC_REG_PT_BASE), PT_BASE);
    int st = gmc_ring_init(&c->ring, c->s, RING_BUS, ring_log2, ARENA_BYTES);
    if (st) fail_msg("gmc_ring_init: %s", gmc_sim_status_name(st));
    c->hi = calloc(1, XREG_BYTES);
    c->lo = calloc(1, XREG_BYTES);
    c->vbuf = malloc(VRAM);
    assert_non_null(c->hi);
    assert_non_null(c->lo);
    assert_non_null(c->vbuf);
    assert_int_equal(gmc_sim_host_map(c->s, HI_BUS, c->hi, XREG_BYTES), GMC_SIM_OK);
    assert_int_equal(gmc_sim_host_map(c->s, LO_BUS, c->lo, XREG_BYTES), GMC_SIM_OK);

    assert_int_equal(gmc_dma_ref_init(&c->ref), 0);
    const uint64_t block = c->ring.ring_bytes + c->ring.arena_bytes;
    assert_int_equal(gmc_dma_ref_map(&c->ref, c->ring.bus, block), 0);
    assert_int_equal(gmc_dma_ref_map(&c->ref, HI_BUS, XREG_BYTES), 0);
    assert_int_equal(gmc_dma_ref_map(&c->ref, LO_BUS, XREG_BYTES), 0);

    uint8_t *h;
    c->meta_bus = gmc_ring_alloc(&c->ring, META_BYTES, GMC_PAGE_SIZE, &h);
    c->fence_bus = gmc_ring_alloc(&c->ring, FENCE_BYTES, GMC_PAGE_SIZE, &h);
    c->adata_bus = gmc_ring_alloc(&c->ring, ADATA_PAGES * GMC_PAGE_SIZE, GMC_PAGE_SIZE, &h);
    assert_true(c->meta_bus && c->fence_bus && c->adata_bus);
    unsigned k = 0;
    for (unsigned i = 0; i < ADATA_PAGES; i++) c->pool[k++] = c->adata_bus + (uint64_t)i * GMC_PAGE_SIZE;
    for (unsigned i = 0; i < XREG_BYTES / GMC_PAGE_SIZE; i++) c->pool[k++] = HI_BUS + (uint64_t)i * GMC_PAGE_SIZE;
    for (unsigned i = 0; i < XREG_BYTES / GMC_PAGE_SIZE; i++) c->pool[k++] = LO_BUS + (uint64_t)i * GMC_PAGE_SIZE;
    assert_int_equal(k, NPOOL);

    /* System memory: random data pages and fence slots, same in both. */
    t_fill_random(sim_mem(c, c->fence_bus, FENCE_BYTES), FENCE_BYTES, &c->rng);
    t_fill_random(sim_mem(c, c->adata_bus, ADATA_PAGES * GMC_PAGE_SIZE), ADATA_PAGES * GMC_PAGE_SIZE, &c->rng);
    t_fill_random(c->hi, XREG_BYTES, &c->rng);
    t_fill_random(c->lo, XREG_BYTES, &c->rng);
    memcpy(gmc_dma_ref_sys(&c->ref, c->ring.bus, block), c->ring.mem, block);
    memcpy(gmc_dma_ref_sys(&c->ref, HI_BUS, XREG_BYTES), c->hi, XREG_BYTES);
    memcpy(gmc_dma_ref_sys(&c->ref, LO_BUS, XREG_BYTES), c->lo, XREG_BYTES);
    /* VRAM as the model starts it. */
    assert_int_equal(gmc_sim_vram_peek(c->s, 0, c->ref.vram, VRAM), GMC_SIM_OK);

    t_wr(c->s, GMC_REG_DUMMY_PAGE_LO, (uint32_t)DUMMY_BUS & GMC_DUMMY_PAGE_LO_ADDR_MASK);
    t_wr(c->s, GMC_REG_DUMMY_PAGE_HI, (uint32_t)(DUMMY_BUS >> 32));
    c->ref.dummy_page = DUMMY_BUS;
    t_wr(c->s, GMC_REG_IRQ_ACK, 0xFFFFFFFFu);
}

static void ctx_fini(struct ctx *c)
{
    gmc_ring_fini(&c->ring);
    t_sim_free(c->s); /* fails on any AXI protocol violation the monitor saw */
    gmc_dma_ref_fini(&c->ref);
    free(c->hi);
    free(c->lo);
    free(c->vbuf);
    free(c->log);
}

static void batch_begin(struct ctx *c)
{
    c->batch++;
    c->batch_tag0 = c->nlog;
    c->meta_used = 0; /* the previous batch has completed */
    for (uint32_t pg = 0; pg < T_APERTURE_PAGES; pg++) c->plan[pg] = gmc_dma_ref_pte(&c->ref, pg);
}

/* Unmap the whole aperture and copy random data into 1 MiB of VRAM. */
static void seed_state(struct ctx *c)
{
    struct gmc_pkt pk[17];
    uint64_t tags[17];
    batch_begin(c);
    pk[0] = gmc_pkt_unmap_aperture(APB, T_APERTURE_PAGES);
    tags[0] = log_add(c, &pk[0], 0);
    for (unsigned i = 0; i < 16; i++) {
        uint64_t mdl = meta_alloc(c, 16 * 8, 8);
        for (unsigned j = 0; j < 16; j++) put64(c, mdl + 8 * j, c->pool[(i * 16 + j * 7) % NPOOL]);
        struct gmc_side s = {1, mdl, 0, 0}, d = {0, i * (512u << 10) + 8 * i, 0, 0};
        pk[1 + i] = gmc_pkt_transfer(s, d, 64u << 10);
        tags[1 + i] = log_add(c, &pk[1 + i], 0);
    }
    submit(c, pk, tags, 17, B_SKIP, 1);
}

static void reprogram_prot(struct ctx *c)
{
    unsigned k = (unsigned)rn(c, 3);
    c->prot_active = 0;
    for (unsigned i = 0; i < GMC_MAX_PROT_RANGES; i++) {
        uint32_t b = 0, l = 0;
        if (i < k) {
            b = (uint32_t)rn(c, VRAM / GMC_PAGE_SIZE) * GMC_PAGE_SIZE;
            l = b + (1 + (uint32_t)rn(c, 64)) * GMC_PAGE_SIZE;
            c->prot_active = 1;
        } else if (chance(c, 1, 4)) {
            b = (uint32_t)rn(c, VRAM / GMC_PAGE_SIZE) * GMC_PAGE_SIZE; /* inactive: LIMIT <= BASE */
            l = b - (uint32_t)rn(c, 2) * GMC_PAGE_SIZE;
        }
        t_wr(c->s, GMC_REG_PROT_BASE_N(i), b);
        t_wr(c->s, GMC_REG_PROT_LIMIT_N(i), l);
        gmc_dma_ref_set_prot(&c->ref, i, b, l);
    }
}

static void random_batch(struct ctx *c, int vram_check)
{
    struct gmc_pkt pk[MAX_RING_BATCH + 1];
    uint64_t tags[MAX_RING_BATCH + 1];
    enum batch_kind kind = B_SKIP;
    unsigned r = (unsigned)rn(c, 20);
    if (r == 0) kind = B_RESET;
    else if (r == 1) kind = B_ORDER_IRQ;
    else if (r == 2) kind = B_ORDER_REG;
    const int ordered = kind == B_ORDER_IRQ || kind == B_ORDER_REG;
    unsigned n = 1 + (unsigned)rn(c, MAX_RING_BATCH);

    batch_begin(c);
    c->no_faults = ordered;
    for (unsigned i = 0; i < n; i++) {
        if (chance(c, 1, 10)) {
            if (gen_indirect(c, &pk[i], !ordered, !ordered)) {
                tags[i] = c->ind_tag;
                continue;
            }
        }
        while (!gen_packet(c, 0, !ordered, !ordered, &pk[i])) {
        }
        tags[i] = log_add(c, &pk[i], 0);
        /* End some batches on a READ_PHYSICAL so that its DMA_READ_RESULT
         * is checked. */
        if (op_of(&pk[i]) == GMC_DMA_OP_READ_PHYSICAL && !ordered && chance(c, 1, 3)) {
            n = i + 1;
            break;
        }
    }
    c->no_faults = 0;
    if (ordered) {
        pk[n] = gmc_pkt_fence(rnd(c) | 1, c->fence_bus + 8 * rn(c, FENCE_BYTES / 8), 1, 1);
        tags[n] = log_add(c, &pk[n], 0);
        n++;
        c->st.order_batches++;
    }
    if (kind == B_RESET) c->st.reset_batches++;
    if (c->verbose > 1) printf("[dma_random] batch %" PRIu64 ": %u ring packets, kind %d\n", c->batch, n, (int)kind);
    c->st.batches++;
    submit(c, pk, tags, n, kind, vram_check || ordered);
}

static uint64_t env_packets(uint64_t dflt)
{
    const char *e = getenv("GMC_DMA_RANDOM_PACKETS");
    return e && *e ? strtoull(e, NULL, 0) : dflt;
}

/* What a run leaves behind, for comparing two runs of one seed. */
struct run_digest {
    uint64_t cycles, vram, sys, dma_clock;
    uint64_t cnt[12];
};

static const uint32_t digest_regs[12] = {
    GMC_REG_CNT_DMA_BUSY_LO,        GMC_REG_CNT_DMA_RD_VRAM_LO, GMC_REG_CNT_DMA_WR_VRAM_LO,
    GMC_REG_CNT_DMA_RD_SYS_LO,      GMC_REG_CNT_DMA_WR_SYS_LO,  GMC_REG_CNT_DMA_RD_APERTURE_LO,
    GMC_REG_CNT_DMA_WR_APERTURE_LO, GMC_REG_CNT_DMA_PACKETS_LO, GMC_REG_CNT_DMA_FAULTS_LO,
    GMC_REG_CNT_TLB_HIT_LO,         GMC_REG_CNT_TLB_MISS_LO,    GMC_REG_DMA_FENCE_LO,
};

/* An idle stretch between batches: the engine waits with its clock
 * stopped (unless CLOCK_ON), woken for an edge by each register write. */
static void idle_gap(struct ctx *c)
{
    const unsigned writes = (unsigned)rn(c, 3);
    for (unsigned i = 0; i < writes; i++) {
        assert_int_equal(gmc_sim_step(c->s, (uint32_t)rn(c, 1500)), GMC_SIM_OK);
        t_wr(c->s, GMC_REG_SCRATCH, (uint32_t)rnd(c));
        (void)t_rd(c->s, GMC_REG_DMA_STATUS);
    }
    assert_int_equal(gmc_sim_step(c->s, (uint32_t)rn(c, 1500)), GMC_SIM_OK);
}

/* One random run. clock_on sets DMA_CTRL.CLOCK_ON (the engine's clock
 * never stops); gaps puts an idle stretch after every batch; d, when not
 * NULL, receives the run's digest. */
static void run_random_ex(uint64_t seed, uint64_t packets, uint32_t latency, unsigned ring_log2, int clock_on,
                          int gaps, struct run_digest *d)
{
    struct ctx *c = calloc(1, sizeof *c);
    assert_non_null(c);
    clock_t t0 = clock();
    ctx_init(c, seed, latency, ring_log2);
    t_wr(c->s, GMC_REG_DMA_CTRL,
         (t_rd(c->s, GMC_REG_DMA_CTRL) & ~GMC_DMA_CTRL_CLOCK_ON_MASK) | (clock_on ? GMC_DMA_CTRL_CLOCK_ON_MASK : 0));
    seed_state(c);
    const uint64_t start = c->nlog;
    while (c->nlog - start < packets) {
        if (chance(c, 1, 6)) reprogram_prot(c);
        random_batch(c, c->batch % 8 == 0);
        if (gaps) idle_gap(c);
    }
    check_vram(c);
    if (d) {
        memset(d, 0, sizeof *d);
        for (unsigned i = 0; i < 12; i++) d->cnt[i] = t_rd64(c->s, digest_regs[i]);
        d->cycles = gmc_sim_cycles(c->s);
        d->dma_clock = t_rd64(c->s, GMC_REG_CNT_DMA_CLOCK_LO);
        d->vram = fnv(c->vbuf, VRAM);
        const uint64_t block = c->ring.ring_bytes + c->ring.arena_bytes;
        d->sys = fnv(c->ring.mem, block) ^ (fnv(c->hi, XREG_BYTES) * 3) ^ (fnv(c->lo, XREG_BYTES) * 5);
    }
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    uint64_t pk_done = t_rd64(c->s, GMC_REG_CNT_DMA_PACKETS_LO);
    printf("[dma_random] seed 0x%016" PRIx64 ": %zu packets (%" PRIu64 " in the ring) in %" PRIu64
           " batches, %" PRIu64 " faults, %" PRIu64 " cycles, %.2f s%s\n",
           c->seed, c->nlog, c->st.ring_pkts, c->st.batches, c->ref.faults_taken, gmc_sim_cycles(c->s), secs,
           c->ambiguous ? " (with ambiguous cases)" : "");
    if (c->verbose) {
        printf("  ops:");
        for (unsigned i = 0; i < 12; i++)
            if (c->st.by_op[i]) printf(" %s=%" PRIu64, gmc_dma_ref_op_name(i), c->st.by_op[i]);
        printf("\n  faults:");
        for (unsigned i = 1; i < 12; i++)
            if (c->st.faults[i]) printf(" %s=%" PRIu64, gmc_dma_ref_fault_name(i), c->st.faults[i]);
        printf("\n  transfers (src x dst: vram/aperture/mdl):");
        for (unsigned i = 0; i < 3; i++)
            for (unsigned j = 0; j < 3; j++) printf(" %" PRIu64, c->st.xfer_pair[i][j]);
        printf("\n  batches: %" PRIu64 " reset, %" PRIu64 " fence-ordering; %" PRIu64
               " full VRAM compares; CNT_DMA_PACKETS %" PRIu64 " (model: %" PRIu64 " without fault)\n",
               c->st.reset_batches, c->st.order_batches, c->st.vram_checks, pk_done, c->ref.packets_ok);
    }
    ctx_fini(c);
    free(c);
}

static void run_random(uint64_t seed, uint64_t packets, uint32_t latency, unsigned ring_log2)
{
    run_random_ex(seed, packets, latency, ring_log2, 0, 0, NULL);
}

static void test_random_default_latency(void **state)
{
    (void)state;
    run_random(0x5EED00000000D3A1ull, env_packets(3000), 100, 12); /* 4 KiB ring: wraps every 127 packets */
}

static void test_random_short_latency(void **state)
{
    (void)state;
    run_random(0x5EED00000000B0B2ull, env_packets(3000) / 3, 3, 16);
}

/* The engine's clock gate (docs/dma.md, Clock gating) must be invisible:
 * one seed run with the clock stopping whenever the engine is quiet and
 * run again with DMA_CTRL.CLOCK_ON leaves the same memory, the same
 * counters and fence, at the same cycle (any difference in timing would
 * move the final cycle, since the test polls), while the gated run's
 * engine clock had fewer edges. Faults, SKIP, RESET, indirect buffers and
 * fences are all in the stream, and idle stretches with register writes
 * (each wakes the engine for one edge) between the batches. */
static void test_random_clock_gate(void **state)
{
    (void)state;
    struct run_digest on, gated;
    const uint64_t n = env_packets(3000) / 3;
    run_random_ex(0x5EED0000C10C6A7Eull, n, 100, 12, 1, 1, &on);
    run_random_ex(0x5EED0000C10C6A7Eull, n, 100, 12, 0, 1, &gated);
    assert_int_equal(gated.cycles, on.cycles);
    assert_int_equal(gated.vram, on.vram);
    assert_int_equal(gated.sys, on.sys);
    for (unsigned i = 0; i < 12; i++) {
        if (gated.cnt[i] != on.cnt[i])
            fail_msg("register 0x%x: 0x%" PRIx64 " gated, 0x%" PRIx64 " with CLOCK_ON", digest_regs[i], gated.cnt[i],
                     on.cnt[i]);
    }
    printf("[dma_random] clock gate: %" PRIu64 " cycles; engine clock edges %" PRIu64 " with CLOCK_ON, %" PRIu64
           " gated (%" PRIu64 " busy)\n",
           on.cycles, on.dma_clock, gated.dma_clock, gated.cnt[0]);
    /* (test_dma_gate checks CLOCK_ON's edge count exactly.) Gated: the
     * clock stops while the engine waits in FAULTED for SKIP and through
     * the idle stretches (about 1500 cycles after each batch): the edges
     * gone must be at least half of the cycles the engine was idle
     * (CNT_DMA_BUSY counts busy and faulted ones), whichever engine. */
    assert_true(on.dma_clock > gated.cnt[0]);
    assert_true(on.dma_clock - gated.dma_clock >= (on.cycles - gated.cnt[0]) / 2);
}

/* ---------------------------------------------------- directed faults */

/* Run n ring packets of which pk[fi] faults with `code` on a data-
 * dependent check: FAULT_PKT and HEAD must be exact, FAULT_ADDR one of
 * a0/a1 (docs/dma.md leaves the exact byte open in some cases; the choice
 * is printed). The model runs the same packets; for the faulting one it
 * applies nothing, so the caller checks and adopts the partial writes
 * before comparing state. `before` runs at the fault, before SKIP. */
static void directed(struct ctx *c, const char *name, struct gmc_pkt *pk, unsigned n, unsigned fi, uint32_t code,
                     uint64_t a0, uint64_t a1, void (*before)(struct ctx *, void *), void *arg)
{
    uint64_t tags[16];
    assert_true(n <= 16 && fi < n);
    batch_begin(c);
    for (unsigned i = 0; i < n; i++) tags[i] = log_add(c, &pk[i], 0);
    for (unsigned i = 0; i < n; i++) {
        uint32_t off = (c->ring.tail + 32 * i) & (c->ring.ring_bytes - 1);
        c->log[tags[i]].ring_off = off;
        c->log[tags[i]].bus = c->ring.bus + off;
    }
    assert_int_equal(gmc_ring_put(&c->ring, pk, n), GMC_SIM_OK);
    memcpy(gmc_dma_ref_sys(&c->ref, c->ring.bus, c->ring.ring_bytes), c->ring.mem, c->ring.ring_bytes);
    gmc_dma_ref_clear_faults(&c->ref);
    c->ref.stop_on_fault = 0;
    c->ref.stopped = 0;
    for (unsigned i = 0; i < n; i++) gmc_dma_ref_exec_at(&c->ref, &pk[i], 0, c->log[tags[i]].bus, tags[i]);
    if (c->ref.nfaults != 1 || c->ref.faults[0].code != code || c->ref.faults[0].tag != tags[fi])
        FAILC(c, "%s: the model does not predict %s on packet %u", name, gmc_dma_ref_fault_name(code), fi);

    assert_int_equal(gmc_ring_kick(&c->ring), GMC_SIM_OK);
    int st = gmc_ring_wait(&c->ring, WAIT_CYCLES, 16);
    if (st != 1) FAILC(c, "%s: no fault (%s)", name, gmc_sim_status_name(st));
    uint32_t rcode = t_rd(c->s, GMC_REG_DMA_FAULT_CODE);
    uint64_t pkt = t_rd64(c->s, GMC_REG_DMA_FAULT_PKT_LO);
    uint64_t addr = t_rd64(c->s, GMC_REG_DMA_FAULT_ADDR_LO);
    uint32_t head = t_rd(c->s, GMC_REG_DMA_RING_HEAD);
    if ((rcode & 0xFF) != code || (rcode & GMC_DMA_FAULT_CODE_INDIRECT_MASK) || pkt != c->log[tags[fi]].bus ||
        head != c->log[tags[fi]].ring_off || (addr != a0 && addr != a1))
        FAILC(c,
              "%s: RTL fault %s (code 0x%x) pkt 0x%" PRIx64 " addr 0x%" PRIx64 " head 0x%x; expected %s pkt 0x%" PRIx64
              " addr 0x%" PRIx64 " or 0x%" PRIx64 " head 0x%x",
              name, gmc_dma_ref_fault_name(rcode & 0xFF), rcode, pkt, addr, head, gmc_dma_ref_fault_name(code),
              c->log[tags[fi]].bus, a0, a1, c->log[tags[fi]].ring_off);
    if (a0 != a1 && c->verbose)
        printf("[dma_random] %s: FAULT_ADDR 0x%" PRIx64 " (%s)\n", name, addr, addr == a0 ? "first choice" : "second choice");
    if (before) before(c, arg);
    t_wr(c->s, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FAULT_MASK);
    t_wr(c->s, GMC_REG_DMA_CMD, GMC_DMA_CMD_SKIP_MASK);
    st = gmc_ring_wait(&c->ring, WAIT_CYCLES, 16);
    if (st != GMC_SIM_OK) FAILC(c, "%s: after SKIP: %s", name, gmc_sim_status_name(st));
    c->st.faults[code]++;
    gmc_dma_ref_clear_faults(&c->ref);
}

/* Bytes of [bus, bus + len) in system memory (vram: VRAM address) may have
 * been written with `want` (NULL: must be unchanged); adopt what the RTL
 * wrote into the model. */
static void allow_partial(struct ctx *c, int vram, uint64_t a, uint64_t len, const uint8_t *want, const char *name)
{
    uint8_t *m = vram ? gmc_dma_ref_vram(&c->ref, a, len) : gmc_dma_ref_sys(&c->ref, a, len);
    uint8_t *act = malloc(len);
    assert_non_null(m);
    assert_non_null(act);
    if (vram)
        assert_int_equal(gmc_sim_vram_peek(c->s, a, act, len), GMC_SIM_OK);
    else
        memcpy(act, sim_mem(c, a, len), len);
    uint64_t written = 0;
    for (uint64_t i = 0; i < len; i++) {
        if (act[i] == m[i]) continue;
        if (!want || act[i] != want[i])
            FAILC(c, "%s: %s byte 0x%" PRIx64 " is 0x%02x: neither the old 0x%02x nor the new value", name,
                  vram ? "VRAM" : "bus", a + i, act[i], m[i]);
        written++;
    }
    if (c->verbose && want)
        printf("[dma_random] %s: %" PRIu64 " of %" PRIu64 " bytes written before the fault\n", name, written, len);
    memcpy(m, act, len);
    free(act);
}

static struct ctx *directed_ctx(void)
{
    struct ctx *c = calloc(1, sizeof *c);
    assert_non_null(c);
    ctx_init(c, 0xD12EC7EDull, 100, 12);
    seed_state(c);
    return c;
}

static void directed_done(struct ctx *c)
{
    check_regs(c);
    check_sys(c);
    check_vram(c);
    ctx_fini(c);
    free(c);
}

static uint64_t ap(uint32_t page, uint32_t off) { return APB + (uint64_t)page * GMC_PAGE_SIZE + off; }

static struct gmc_pkt map1(struct ctx *c, uint32_t page, uint64_t sys, int rd, int wr)
{
    uint64_t m = meta_alloc(c, 8, 8);
    put64(c, m, sys);
    return gmc_pkt_map_aperture((uint32_t)ap(page, 0), 1, m, 0, 0, rd, wr);
}

static void fence_unchanged(struct ctx *c, void *arg)
{
    (void)arg;
    if (t_rd64(c->s, GMC_REG_DMA_FENCE_LO) != c->ref.fence)
        FAILC(c, "DMA_FENCE changed although the FENCE's memory write failed");
}

/* PTE_PERM and PTE_INVALID while data moves. */
static void test_pte_faults(void **state)
{
    (void)state;
    struct ctx *c = directed_ctx();
    const uint64_t A = c->pool[10], B = c->pool[300], C = c->pool[600];
    struct gmc_pkt pk[8];
    uint8_t want[8192];

    /* Destination crosses from a writeable page into a read-only one. */
    batch_begin(c);
    pk[0] = map1(c, 100, A, 1, 1);
    pk[1] = map1(c, 101, B, 1, 0);
    pk[2] = map1(c, 102, C, 0, 1);
    struct gmc_side s = {0, 0x10000, 0, 0}, d = {0, ap(100, 3000), 0, 0};
    pk[3] = gmc_pkt_transfer(s, d, 6000);
    pk[4] = gmc_pkt_fence(0x1111, 0, 0, 0);
    directed(c, "dst PTE_PERM", pk, 5, 3, GMC_DMA_FAULT_PTE_PERM, ap(101, 0), ap(101, 0), NULL, NULL);
    allow_partial(c, 0, A + 3000, GMC_PAGE_SIZE - 3000, c->ref.vram + 0x10000, "dst PTE_PERM");
    check_sys(c); /* page B untouched */
    check_vram(c);

    /* Source page not readable, first page, unaligned start: nothing can
     * have been read, so the VRAM destination is untouched. */
    batch_begin(c);
    struct gmc_side s2 = {0, ap(102, 100), 0, 0}, d2 = {0, 0x20000, 0, 0};
    pk[0] = gmc_pkt_transfer(s2, d2, 300);
    pk[1] = gmc_pkt_fence(0x2222, 0, 0, 0);
    directed(c, "src PTE_PERM", pk, 2, 0, GMC_DMA_FAULT_PTE_PERM, ap(102, 0), ap(102, 100), NULL, NULL);
    check_vram(c);

    /* WRITE_PHYSICAL through the aperture to the read-only page. */
    batch_begin(c);
    pk[0] = gmc_pkt_write_physical(ap(101, 16), 1, 8, 0x0123456789ABCDEFull);
    pk[1] = gmc_pkt_read_physical(ap(100, 8), 1, 8);
    directed(c, "WRITE_PHYSICAL PTE_PERM", pk, 2, 0, GMC_DMA_FAULT_PTE_PERM, ap(101, 0), ap(101, 16), NULL, NULL);
    check_sys(c);

    /* A PTE without SYSTEM, then one without VALID, written behind the
     * GART's back (WRITE_PHYSICAL to the table) and made visible by
     * FLUSH_TLB. */
    batch_begin(c);
    const uint64_t pte_nosys = GMC_PTE_VALID_MASK | GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK | 0x3000;
    pk[0] = gmc_pkt_write_physical(PT_BASE + 8 * 103, 1, 8, pte_nosys);
    pk[1] = gmc_pkt_flush_tlb();
    pk[2] = gmc_pkt_read_physical(ap(103, 0x40), 1, 4);
    pk[3] = gmc_pkt_read_physical(0x10000, 1, 8);
    directed(c, "READ_PHYSICAL PTE_INVALID", pk, 4, 2, GMC_DMA_FAULT_PTE_INVALID, ap(103, 0), ap(103, 0x40), NULL,
             NULL);

    batch_begin(c);
    pk[0] = gmc_pkt_write_physical(PT_BASE + 8 * 104, 1, 8,
                                   GMC_PTE_SYSTEM_MASK | GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK | A);
    pk[1] = gmc_pkt_flush_tlb();
    struct gmc_side s3 = {0, 0x30000, 0, 0}, d3 = {0, ap(104, 0), 0, 0};
    pk[2] = gmc_pkt_transfer(s3, d3, 512);
    pk[3] = gmc_pkt_unmap_aperture((uint32_t)ap(103, 0), 2);
    directed(c, "dst PTE_INVALID", pk, 4, 2, GMC_DMA_FAULT_PTE_INVALID, ap(104, 0), ap(104, 0), NULL, NULL);
    check_sys(c); /* page A untouched */

    /* A transfer that only reaches the bad page after 2 good ones, from
     * the aperture (source side). */
    batch_begin(c);
    pk[0] = map1(c, 200, A, 1, 1);
    pk[1] = map1(c, 201, B, 1, 1);
    pk[2] = map1(c, 202, C, 0, 1);
    struct gmc_side s4 = {0, ap(200, 0), 0, 0}, d4 = {0, 0x40000, 0, 0};
    pk[3] = gmc_pkt_transfer(s4, d4, 3 * GMC_PAGE_SIZE);
    directed(c, "src PTE_PERM third page", pk, 4, 3, GMC_DMA_FAULT_PTE_PERM, ap(202, 0), ap(202, 0), NULL, NULL);
    memcpy(want, gmc_dma_ref_sys(&c->ref, A, GMC_PAGE_SIZE), GMC_PAGE_SIZE);
    memcpy(want + GMC_PAGE_SIZE, gmc_dma_ref_sys(&c->ref, B, GMC_PAGE_SIZE), GMC_PAGE_SIZE);
    allow_partial(c, 1, 0x40000, 2 * GMC_PAGE_SIZE, want, "src PTE_PERM third page");
    directed_done(c);
}

/* BUS: error responses from system memory. */
static void test_bus_faults(void **state)
{
    (void)state;
    struct ctx *c = directed_ctx();
    struct gmc_pkt pk[8];
    const uint64_t P = c->pool[20], Q = c->pool[400];

    /* MDL source whose second page is unmapped (DECERR). */
    batch_begin(c);
    uint64_t m = meta_alloc(c, 16, 8);
    put64(c, m, P);
    put64(c, m + 8, UNMAPPED_BUS);
    struct gmc_side s = {1, m, 0, 0}, d = {0, 0x50000, 0, 0};
    pk[0] = gmc_pkt_transfer(s, d, 2 * GMC_PAGE_SIZE);
    pk[1] = gmc_pkt_fence(0x3333, 0, 0, 0);
    directed(c, "MDL source DECERR", pk, 2, 0, GMC_DMA_FAULT_BUS, UNMAPPED_BUS, UNMAPPED_BUS, NULL, NULL);
    allow_partial(c, 1, 0x50000, GMC_PAGE_SIZE, gmc_dma_ref_sys(&c->ref, P, GMC_PAGE_SIZE), "MDL source DECERR");
    check_vram(c); /* the second page of the destination is untouched */

    /* MDL destination answering SLVERR. */
    batch_begin(c);
    assert_int_equal(gmc_sim_host_inject(c->s, Q, GMC_PAGE_SIZE, GMC_SIM_INJECT_SLVERR), GMC_SIM_OK);
    assert_int_equal(gmc_dma_ref_inject(&c->ref, Q, GMC_PAGE_SIZE), 0);
    uint64_t m2 = meta_alloc(c, 8, 8);
    put64(c, m2, Q);
    struct gmc_side s2 = {0, 0x60000, 0, 0}, d2 = {1, m2, 0, 0};
    pk[0] = gmc_pkt_transfer(s2, d2, 1024);
    pk[1] = gmc_pkt_read_physical(P, 0, 8);
    directed(c, "MDL destination SLVERR", pk, 2, 0, GMC_DMA_FAULT_BUS, Q, Q, NULL, NULL);
    gmc_sim_host_inject_clear(c->s);
    gmc_dma_ref_inject_clear(&c->ref);
    check_sys(c); /* nothing written: the memory refused it */

    /* FENCE WRITE_MEM to nowhere: DMA_FENCE must not change. */
    batch_begin(c);
    pk[0] = gmc_pkt_fence(0x4444, UNMAPPED_BUS + 0x18, 1, 1);
    pk[1] = gmc_pkt_nop();
    directed(c, "FENCE DECERR", pk, 2, 0, GMC_DMA_FAULT_BUS, UNMAPPED_BUS + 0x18, UNMAPPED_BUS + 0x18,
             fence_unchanged, NULL);

    /* READ_PHYSICAL / WRITE_PHYSICAL by bus address to nowhere. */
    batch_begin(c);
    pk[0] = gmc_pkt_read_physical(UNMAPPED_BUS + 0x23, 0, 4);
    pk[1] = gmc_pkt_read_physical(P + 8, 0, 8);
    directed(c, "READ_PHYSICAL DECERR", pk, 2, 0, GMC_DMA_FAULT_BUS, UNMAPPED_BUS + 0x23, UNMAPPED_BUS + 0x20, NULL,
             NULL);
    batch_begin(c);
    pk[0] = gmc_pkt_write_physical(UNMAPPED_BUS + 0x45, 0, 2, 0xBEEF);
    pk[1] = gmc_pkt_nop();
    directed(c, "WRITE_PHYSICAL DECERR", pk, 2, 0, GMC_DMA_FAULT_BUS, UNMAPPED_BUS + 0x45, UNMAPPED_BUS + 0x40, NULL,
             NULL);

    /* MDL entries read one burst per aligned 32-byte block from the side's
     * first entry: with the first entry 16 bytes into its block, the
     * second entry is in the first entry's burst, so an error on it is
     * reported at the first entry's address (whether the engine read the
     * entries together or one by one). A TRANSFER's source MDL (the second
     * page's translation fails) and a MAP's MDL (the second PTE's entry). */
    batch_begin(c);
    uint64_t m4 = meta_alloc(c, 64, 32) + 16;
    put64(c, m4, P);
    put64(c, m4 + 8, Q);
    assert_int_equal(gmc_sim_host_inject(c->s, m4 + 8, 8, GMC_SIM_INJECT_SLVERR), GMC_SIM_OK);
    assert_int_equal(gmc_dma_ref_inject(&c->ref, m4 + 8, 8), 0);
    struct gmc_side s4 = {1, m4, 0, 0}, d4 = {0, 0x58000, 0, 0};
    pk[0] = gmc_pkt_transfer(s4, d4, 2 * GMC_PAGE_SIZE);
    pk[1] = gmc_pkt_fence(0x6666, 0, 0, 0);
    directed(c, "MDL source entry SLVERR", pk, 2, 0, GMC_DMA_FAULT_BUS, m4, m4, NULL, NULL);
    allow_partial(c, 1, 0x58000, GMC_PAGE_SIZE, gmc_dma_ref_sys(&c->ref, P, GMC_PAGE_SIZE), "MDL source entry SLVERR");
    check_vram(c);
    batch_begin(c);
    pk[0] = gmc_pkt_map_aperture((uint32_t)ap(301, 0), 2, m4, 0, 0, 1, 1);
    pk[1] = gmc_pkt_fence(0x7777, 0, 0, 0);
    directed(c, "MAP MDL entry SLVERR", pk, 2, 0, GMC_DMA_FAULT_BUS, m4, m4, NULL, NULL);
    gmc_sim_host_inject_clear(c->s);
    gmc_dma_ref_inject_clear(&c->ref);
    {
        /* The first PTE may be written (its entry was read); the second not. */
        const uint64_t pte = (P & GMC_PTE_ADDR_MASK) | PTE_VS | GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK;
        uint8_t want[8];
        for (unsigned i = 0; i < 8; i++) want[i] = (uint8_t)(pte >> (8 * i));
        allow_partial(c, 1, PT_BASE + 8ull * 301, 8, want, "MAP MDL entry SLVERR");
    }
    check_vram(c);

    /* MAP whose MDL is unmapped: the PTEs may or may not be written; none
     * may point anywhere but the MDL's (unreadable) entries, so require
     * them unchanged. */
    batch_begin(c);
    pk[0] = gmc_pkt_map_aperture((uint32_t)ap(300, 0), 2, UNMAPPED_BUS + 0x100, 0, 0, 1, 1);
    pk[1] = gmc_pkt_fence(0x5555, 0, 0, 0);
    directed(c, "MAP MDL DECERR", pk, 2, 0, GMC_DMA_FAULT_BUS, UNMAPPED_BUS + 0x100, UNMAPPED_BUS + 0x100, NULL, NULL);
    check_vram(c);
    directed_done(c);
}

/* Put packets in the ring without the model (for cases it cannot
 * predict); returns the ring offset of the first. */
static uint32_t put_raw(struct ctx *c, const struct gmc_pkt *pk, unsigned n)
{
    uint32_t off = c->ring.tail;
    batch_begin(c);
    for (unsigned i = 0; i < n; i++) {
        uint64_t t = log_add(c, &pk[i], 0);
        c->log[t].ring_off = (off + 32 * i) & (c->ring.ring_bytes - 1);
        c->log[t].bus = c->ring.bus + c->log[t].ring_off;
    }
    assert_int_equal(gmc_ring_put(&c->ring, pk, n), GMC_SIM_OK);
    memcpy(gmc_dma_ref_sys(&c->ref, c->ring.bus, c->ring.ring_bytes), c->ring.mem, c->ring.ring_bytes);
    return off;
}

static void reset_and_check_idle(struct ctx *c, const char *name)
{
    t_wr(c->s, GMC_REG_DMA_CMD, GMC_DMA_CMD_RESET_MASK);
    int st = gmc_ring_wait(&c->ring, WAIT_CYCLES, 16);
    if (st != GMC_SIM_OK) FAILC(c, "%s: engine not idle after RESET: %s", name, gmc_sim_status_name(st));
    uint32_t head = t_rd(c->s, GMC_REG_DMA_RING_HEAD);
    if (head != c->ring.tail) FAILC(c, "%s: HEAD 0x%x after RESET, TAIL 0x%x", name, head, c->ring.tail);
}

static void fill_bytes(uint8_t *out, uint64_t a, uint64_t n, uint32_t pat)
{
    for (uint64_t i = 0; i < n; i++) out[i] = (uint8_t)(pat >> (8 * ((a + i) % 4)));
}

/* DMA_CMD.RESET while a packet moves data: the packet's destination holds
 * old or new bytes, everything else (the queued packets' targets, the page
 * table) is untouched, and the engine takes new work at once. */
static void test_reset_busy(void **state)
{
    (void)state;
    struct ctx *c = directed_ctx();
    static uint8_t want[128u << 10];
    struct gmc_pkt pk[3];

    /* A long FILL, interrupted. */
    pk[0] = gmc_pkt_fill(0x200000, 128u << 10, 0xA5C3E10Fu);
    pk[1] = gmc_pkt_fill(0x400000, 4096, 0x11111111u);
    pk[2] = gmc_pkt_unmap_aperture(APB, 64);
    uint32_t off = put_raw(c, pk, 3);
    assert_int_equal(gmc_ring_kick(&c->ring), GMC_SIM_OK);
    assert_int_equal(gmc_sim_step(c->s, 3000), GMC_SIM_OK);
    uint32_t head = t_rd(c->s, GMC_REG_DMA_RING_HEAD);
    if (head != off) FAILC(c, "the 128 KiB FILL finished within 3000 cycles (HEAD 0x%x)", head);
    reset_and_check_idle(c, "RESET during FILL");
    fill_bytes(want, 0x200000, 128u << 10, 0xA5C3E10Fu);
    allow_partial(c, 1, 0x200000, 128u << 10, want, "RESET during FILL");
    check_vram(c);

    /* A long VRAM -> MDL transfer, interrupted: system memory writes in
     * flight end with zero strobes. */
    uint64_t m = meta_alloc(c, 8 * 16, 8);
    for (unsigned i = 0; i < 16; i++) put64(c, m + 8 * i, c->pool[40 + i]);
    struct gmc_side s = {0, 0x0, 0, 0}, d = {1, m, 0, 0};
    pk[0] = gmc_pkt_transfer(s, d, 16 * GMC_PAGE_SIZE);
    pk[1] = gmc_pkt_write_physical(c->pool[60], 0, 8, 0x0102030405060708ull);
    off = put_raw(c, pk, 2);
    assert_int_equal(gmc_ring_kick(&c->ring), GMC_SIM_OK);
    assert_int_equal(gmc_sim_step(c->s, 2500), GMC_SIM_OK);
    head = t_rd(c->s, GMC_REG_DMA_RING_HEAD);
    if (head != off) FAILC(c, "the 64 KiB transfer finished within 2500 cycles (HEAD 0x%x)", head);
    reset_and_check_idle(c, "RESET during TRANSFER");
    for (unsigned i = 0; i < 16; i++)
        allow_partial(c, 0, c->pool[40 + i], GMC_PAGE_SIZE, c->ref.vram + (uint64_t)i * GMC_PAGE_SIZE, "RESET during TRANSFER");
    check_sys(c);
    check_vram(c);

    /* New work runs normally. */
    for (int i = 0; i < 6; i++) random_batch(c, 1);
    directed_done(c);
}

/* Hang a data read of system page H: TIMEOUT after DMA_WATCHDOG cycles,
 * checked, then RESET. The hung read stays owed by the bus forever. */
static void hang_timeout_reset(struct ctx *c, uint64_t H)
{
    struct gmc_pkt pk[2];
    t_wr(c->s, GMC_REG_DMA_WATCHDOG, 3000);
    assert_int_equal(gmc_sim_host_inject(c->s, H, GMC_PAGE_SIZE, GMC_SIM_INJECT_HANG), GMC_SIM_OK);
    uint64_t m = meta_alloc(c, 8, 8);
    put64(c, m, H);
    struct gmc_side s = {1, m, 0, 0}, d = {0, 0x70000, 0, 0};
    pk[0] = gmc_pkt_transfer(s, d, GMC_PAGE_SIZE);
    pk[1] = gmc_pkt_fill(0x80000, 256, 0x12345678u);
    uint32_t off = put_raw(c, pk, 2);
    assert_int_equal(gmc_ring_kick(&c->ring), GMC_SIM_OK);
    int st = gmc_ring_wait(&c->ring, WAIT_CYCLES, 16);
    if (st != 1) FAILC(c, "hung read: no fault (%s)", gmc_sim_status_name(st));
    uint32_t code = t_rd(c->s, GMC_REG_DMA_FAULT_CODE);
    uint64_t pkt = t_rd64(c->s, GMC_REG_DMA_FAULT_PKT_LO), addr = t_rd64(c->s, GMC_REG_DMA_FAULT_ADDR_LO);
    if ((code & 0xFF) != GMC_DMA_FAULT_TIMEOUT || pkt != c->ring.bus + off || addr < H || addr >= H + GMC_PAGE_SIZE)
        FAILC(c, "hung read: fault %s pkt 0x%" PRIx64 " addr 0x%" PRIx64 "; expected TIMEOUT pkt 0x%" PRIx64
                 " addr in page 0x%" PRIx64,
              gmc_dma_ref_fault_name(code & 0xFF), pkt, addr, c->ring.bus + off, H);
    c->ref.faults_taken++;
    t_wr(c->s, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FAULT_MASK);
    gmc_sim_host_inject_clear(c->s); /* new accesses to H answer; the hung one never does */
    reset_and_check_idle(c, "RESET after TIMEOUT");
    check_vram(c); /* nothing read, so nothing written; the FILL was dropped */
}

/* docs/dma.md: "a hung transaction never blocks new work". After the
 * RESET, an ordinary fault (taken while the ring read-ahead is owed by the
 * bus) and SKIP, a TRANSFER reading system memory must still run, and an
 * idle engine must not time out. */
static void test_hung_read_then_fault(void **state)
{
    (void)state;
    struct ctx *c = directed_ctx();

    hang_timeout_reset(c, c->pool[50]);
    /* The first packet faults (OPCODE) while the fetch unit's read-ahead
     * bursts for the rest of the batch are still owed by the bus. */
    struct gmc_pkt pk[20];
    uint64_t tags[20];
    batch_begin(c);
    uint64_t m = meta_alloc(c, 8, 8);
    put64(c, m, c->pool[51]);
    struct gmc_side s = {1, m, 0, 0}, d = {0, 0x70000, 0, 0};
    memset(&pk[0], 0, sizeof pk[0]);
    for (int i = 1; i < 18; i++) pk[i] = gmc_pkt_nop();
    pk[18] = gmc_pkt_transfer(s, d, GMC_PAGE_SIZE);
    pk[19] = gmc_pkt_fence(0xF00D, 0, 0, 0);
    for (int i = 0; i < 20; i++) tags[i] = log_add(c, &pk[i], 0);
    submit(c, pk, tags, 20, B_SKIP, 1);
    /* Idle for longer than the watchdog: no spurious TIMEOUT. */
    assert_int_equal(gmc_sim_step(c->s, 10000), GMC_SIM_OK);
    uint32_t st = t_rd(c->s, GMC_REG_DMA_STATUS);
    if ((st & GMC_DMA_STATUS_STATE_MASK) != GMC_DMA_STATE_IDLE)
        FAILC(c, "idle engine left idle (STATUS 0x%x, FAULT_CODE 0x%x)", st, t_rd(c->s, GMC_REG_DMA_FAULT_CODE));
    t_wr(c->s, GMC_REG_DMA_WATCHDOG, GMC_REG_DMA_WATCHDOG_RESET);
    for (int i = 0; i < 6; i++) random_batch(c, 1);
    directed_done(c);
}

/* Every read answered far too late: the first fetch times out. After
 * RESET the late answers (packets that would FILL a marker range) arrive
 * while new work runs and must be dropped. */
static void test_stale_responses(void **state)
{
    (void)state;
    struct ctx *c = directed_ctx();
    struct gmc_pkt pk[2];
    t_wr(c->s, GMC_REG_DMA_WATCHDOG, 500);
    assert_int_equal(gmc_sim_set_host_latency(c->s, 4000), GMC_SIM_OK);
    pk[0] = gmc_pkt_fill(0x90000, 4096, 0xEEEEEEEEu);
    pk[1] = gmc_pkt_fill(0x91000, 4096, 0xDDDDDDDDu);
    put_raw(c, pk, 2);
    assert_int_equal(gmc_ring_kick(&c->ring), GMC_SIM_OK);
    int st = gmc_ring_wait(&c->ring, WAIT_CYCLES, 16);
    if (st != 1) FAILC(c, "late fetch: no fault (%s)", gmc_sim_status_name(st));
    uint32_t code = t_rd(c->s, GMC_REG_DMA_FAULT_CODE);
    if ((code & 0xFF) != GMC_DMA_FAULT_TIMEOUT)
        FAILC(c, "late fetch: fault %s, expected TIMEOUT", gmc_dma_ref_fault_name(code & 0xFF));
    if (c->verbose)
        printf("[dma_random] late fetch TIMEOUT: pkt 0x%" PRIx64 " addr 0x%" PRIx64 " (ring at 0x%" PRIx64 ")\n",
               t_rd64(c->s, GMC_REG_DMA_FAULT_PKT_LO), t_rd64(c->s, GMC_REG_DMA_FAULT_ADDR_LO), c->ring.bus);
    c->ref.faults_taken++;
    t_wr(c->s, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FAULT_MASK);
    reset_and_check_idle(c, "RESET after late fetch");
    assert_int_equal(gmc_sim_set_host_latency(c->s, 100), GMC_SIM_OK);
    t_wr(c->s, GMC_REG_DMA_WATCHDOG, GMC_REG_DMA_WATCHDOG_RESET);
    for (int i = 0; i < 10; i++) random_batch(c, 1);
    directed_done(c);
}

/* A write error answered after the packet was followed by a faulting one:
 * docs/dma.md says a bad access stops the engine on that packet, so the
 * BUS fault must be reported (not dropped with a stale epoch). */
static void test_posted_write_error(void **state)
{
    (void)state;
    struct ctx *c = directed_ctx();
    struct gmc_pkt pk[3];
    const uint64_t Q = c->pool[410];
    assert_int_equal(gmc_sim_host_inject(c->s, Q, GMC_PAGE_SIZE, GMC_SIM_INJECT_SLVERR), GMC_SIM_OK);
    uint64_t m = meta_alloc(c, 8, 8);
    put64(c, m, Q);
    struct gmc_side s = {0, 0x60000, 0, 0}, d = {1, m, 0, 0};
    pk[0] = gmc_pkt_transfer(s, d, 64);
    memset(&pk[1], 0, sizeof pk[1]); /* OPCODE */
    pk[2] = gmc_pkt_nop();
    uint32_t off = put_raw(c, pk, 3);
    assert_int_equal(gmc_ring_kick(&c->ring), GMC_SIM_OK);
    int bus_seen = 0, n = 0;
    char seq[256] = "";
    for (;;) {
        int st = gmc_ring_wait(&c->ring, WAIT_CYCLES, 16);
        if (st == GMC_SIM_OK) break;
        if (st != 1 || ++n > 3) FAILC(c, "posted write error: %s after %d faults", gmc_sim_status_name(st), n);
        uint32_t code = t_rd(c->s, GMC_REG_DMA_FAULT_CODE) & 0xFF;
        uint64_t pkt = t_rd64(c->s, GMC_REG_DMA_FAULT_PKT_LO), addr = t_rd64(c->s, GMC_REG_DMA_FAULT_ADDR_LO);
        size_t l = strlen(seq);
        snprintf(seq + l, sizeof seq - l, " %s@slot%u(addr 0x%" PRIx64 ")", gmc_dma_ref_fault_name(code),
                 (unsigned)((pkt - c->ring.bus - off) / 32), addr);
        if (code == GMC_DMA_FAULT_BUS && pkt == c->ring.bus + off && addr == Q) bus_seen = 1;
        c->ref.faults_taken++;
        t_wr(c->s, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FAULT_MASK);
        t_wr(c->s, GMC_REG_DMA_CMD, GMC_DMA_CMD_SKIP_MASK);
    }
    gmc_sim_host_inject_clear(c->s);
    c->ref.packets_ok++; /* the NOP */
    if (c->verbose) printf("[dma_random] posted write error: faults%s\n", seq);
    if (!bus_seen) FAILC(c, "the SLVERR on the TRANSFER's write was never reported (faults:%s)", seq);
    directed_done(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_default_latency),
        cmocka_unit_test(test_random_short_latency),
        cmocka_unit_test(test_random_clock_gate),
        cmocka_unit_test(test_pte_faults),
        cmocka_unit_test(test_bus_faults),
        cmocka_unit_test(test_reset_busy),
        cmocka_unit_test(test_hung_read_then_fault),
        cmocka_unit_test(test_stale_responses),
        cmocka_unit_test(test_posted_write_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
