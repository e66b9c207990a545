/* Reference model of the DMA engine's command semantics; see gmc_dma_ref.h
 * and docs/dma.md. Byte-by-byte and deliberately plain. */
#include "gmc_dma_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmc_regs.h"

#define REF_PAGE 4096u
#define W0_RESERVED 0xFFFF0000ull       /* W0[31:16] */
#define NEVER UINT64_MAX

/* ------------------------------------------------------------ helpers */

static unsigned pkt_op(const struct gmc_pkt *p) { return (unsigned)(p->w[0] & GMC_PKT_W0_OPCODE_MASK); }
static unsigned pkt_flags(const struct gmc_pkt *p)
{
    return (unsigned)((p->w[0] & GMC_PKT_W0_FLAGS_MASK) >> GMC_PKT_W0_FLAGS_LSB);
}
static uint64_t pkt_len(const struct gmc_pkt *p) { return p->w[0] >> GMC_PKT_W0_LENGTH_LSB; }

static uint64_t le64(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | b[i];
    return v;
}

static void put_le64(uint8_t *b, uint64_t v)
{
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
}

static int region_of(const struct gmc_dma_ref *r, uint64_t bus, uint64_t len)
{
    for (unsigned i = 0; i < r->nregions; i++) {
        const struct gmc_dma_ref_region *g = &r->region[i];
        if (bus >= g->bus && bus - g->bus < g->len && len <= g->len - (bus - g->bus)) return (int)i;
    }
    return -1;
}

uint8_t *gmc_dma_ref_sys(struct gmc_dma_ref *r, uint64_t bus, uint64_t len)
{
    int i = region_of(r, bus, len ? len : 1);
    return i < 0 ? NULL : r->region[i].mem + (bus - r->region[i].bus);
}

uint8_t *gmc_dma_ref_vram(struct gmc_dma_ref *r, uint64_t addr, uint64_t len)
{
    if (addr > r->vram_bytes || len > r->vram_bytes - addr) return NULL;
    return r->vram + addr;
}

/* One byte of system memory; -1 when unmapped (the bus answers DECERR). */
static int sys_rd(const struct gmc_dma_ref *r, uint64_t bus)
{
    int i = region_of(r, bus, 1);
    return i < 0 ? -1 : r->region[i].mem[bus - r->region[i].bus];
}

/* Can the engine access [bus, bus + len) without an error response? */
static int sys_mapped(const struct gmc_dma_ref *r, uint64_t bus, uint64_t len)
{
    for (unsigned i = 0; i < r->nerr; i++)
        if (bus < r->err[i].bus + r->err[i].len && r->err[i].bus < bus + len) return 0;
    return region_of(r, bus, len) >= 0;
}

int gmc_dma_ref_inject(struct gmc_dma_ref *r, uint64_t bus, uint64_t len)
{
    if (r->nerr == GMC_DMA_REF_MAX_REGIONS) return -1;
    r->err[r->nerr].bus = bus;
    r->err[r->nerr].len = len;
    r->nerr++;
    return 0;
}

void gmc_dma_ref_inject_clear(struct gmc_dma_ref *r)
{
    r->nerr = 0;
}

static void sys_wr(struct gmc_dma_ref *r, uint64_t bus, uint8_t v)
{
    int i = region_of(r, bus, 1);
    if (i < 0) abort(); /* callers walk the packet first */
    r->region[i].mem[bus - r->region[i].bus] = v;
    r->region_writer[i][(bus - r->region[i].bus) / REF_PAGE] = r->cur_tag;
}

static void vram_wr(struct gmc_dma_ref *r, uint64_t a, uint8_t v)
{
    if (a >= r->vram_bytes) abort();
    r->vram[a] = v;
    r->vram_writer[a / REF_PAGE] = r->cur_tag;
}

/* --------------------------------------------------------- lifecycle */

int gmc_dma_ref_init(struct gmc_dma_ref *r)
{
    memset(r, 0, sizeof *r);
    r->vram_bytes = GMC_TOP_VRAM_BYTES;
    r->aperture_base = GMC_TOP_APERTURE_BASE;
    r->aperture_pages = GMC_TOP_APERTURE_PAGES;
    r->pt_base = (uint32_t)(r->vram_bytes - GMC_TOP_PT_RESERVE_BYTES);
    r->vram = calloc(1, r->vram_bytes);
    r->vram_writer = malloc(sizeof(uint64_t) * (r->vram_bytes / REF_PAGE));
    if (!r->vram || !r->vram_writer) {
        gmc_dma_ref_fini(r);
        return -1;
    }
    for (uint64_t i = 0; i < r->vram_bytes / REF_PAGE; i++) r->vram_writer[i] = NEVER;
    return 0;
}

void gmc_dma_ref_fini(struct gmc_dma_ref *r)
{
    free(r->vram);
    free(r->vram_writer);
    for (unsigned i = 0; i < r->nregions; i++) {
        free(r->region[i].mem);
        free(r->region_writer[i]);
    }
    free(r->faults);
    memset(r, 0, sizeof *r);
}

int gmc_dma_ref_map(struct gmc_dma_ref *r, uint64_t bus, uint64_t len)
{
    if (r->nregions == GMC_DMA_REF_MAX_REGIONS || !len || bus + len < bus) return -1;
    for (unsigned i = 0; i < r->nregions; i++)
        if (bus < r->region[i].bus + r->region[i].len && r->region[i].bus < bus + len) return -1;
    struct gmc_dma_ref_region *g = &r->region[r->nregions];
    uint64_t pages = (len + REF_PAGE - 1) / REF_PAGE;
    g->mem = calloc(1, len);
    r->region_writer[r->nregions] = malloc(sizeof(uint64_t) * pages);
    if (!g->mem || !r->region_writer[r->nregions]) {
        free(g->mem);
        free(r->region_writer[r->nregions]);
        g->mem = NULL;
        return -1;
    }
    for (uint64_t i = 0; i < pages; i++) r->region_writer[r->nregions][i] = NEVER;
    g->bus = bus;
    g->len = len;
    r->nregions++;
    return 0;
}

void gmc_dma_ref_set_prot(struct gmc_dma_ref *r, unsigned i, uint32_t base, uint32_t limit)
{
    if (i >= GMC_DMA_REF_PROT_RANGES) return;
    r->prot_base[i] = base & GMC_PROT_BASE_ADDR_MASK;
    r->prot_limit[i] = limit & GMC_PROT_LIMIT_ADDR_MASK;
}

int gmc_dma_ref_protected(const struct gmc_dma_ref *r, uint64_t addr, uint64_t len)
{
    for (unsigned i = 0; i < GMC_DMA_REF_PROT_RANGES; i++) {
        uint64_t b = r->prot_base[i], l = r->prot_limit[i];
        if (l > b && addr < l && b < addr + len) return 1;
    }
    return 0;
}

void gmc_dma_ref_clear_faults(struct gmc_dma_ref *r)
{
    r->nfaults = 0;
}

static void log_fault(struct gmc_dma_ref *r, uint32_t code, int in_indirect, uint64_t pkt, uint64_t addr,
                      int pinned)
{
    if (r->nfaults == r->faults_cap) {
        size_t cap = r->faults_cap ? 2 * r->faults_cap : 64;
        struct gmc_dma_ref_fault *f = realloc(r->faults, cap * sizeof *f);
        if (!f) abort();
        r->faults = f;
        r->faults_cap = cap;
    }
    struct gmc_dma_ref_fault *f = &r->faults[r->nfaults++];
    f->code = code;
    f->indirect = in_indirect;
    f->pkt = pkt;
    f->addr = addr;
    f->pinned = pinned;
    f->tag = r->cur_tag;
    f->fence = r->fence;
    f->read_result = r->read_result;
    r->faults_taken++;
    if (r->stop_on_fault) r->stopped = 1;
}

/* ------------------------------------------------------ GPU addresses */

enum space { SP_NONE, SP_VRAM, SP_APERTURE };

/* Where the GPU range [a, a + len) lies: wholly in VRAM, wholly in the
 * aperture, or neither (RANGE). len >= 1. */
static enum space gpu_space(const struct gmc_dma_ref *r, uint64_t a, uint64_t len)
{
    uint64_t ab = r->aperture_base, ae = ab + (uint64_t)r->aperture_pages * REF_PAGE;
    if (a < r->vram_bytes && len <= r->vram_bytes - a) return SP_VRAM;
    if (a >= ab && a < ae && len <= ae - a) return SP_APERTURE;
    return SP_NONE;
}

uint64_t gmc_dma_ref_pte(const struct gmc_dma_ref *r, uint32_t page)
{
    return le64(r->vram + r->pt_base + 8ull * page);
}

uint32_t gmc_dma_ref_translate(const struct gmc_dma_ref *r, uint32_t gpu, int write, uint64_t *bus)
{
    *bus = 0;
    if (gpu_space(r, gpu, 1) != SP_APERTURE) return GMC_DMA_FAULT_RANGE;
    uint64_t pte = gmc_dma_ref_pte(r, (gpu - r->aperture_base) / REF_PAGE);
    if (!(pte & GMC_PTE_VALID_MASK) || !(pte & GMC_PTE_SYSTEM_MASK)) return GMC_DMA_FAULT_PTE_INVALID;
    if (!(pte & (write ? GMC_PTE_WRITEABLE_MASK : GMC_PTE_READABLE_MASK))) return GMC_DMA_FAULT_PTE_PERM;
    *bus = (pte & GMC_PTE_ADDR_MASK) | (gpu & (REF_PAGE - 1));
    return GMC_DMA_FAULT_NONE;
}

/* ------------------------------------------------ packet-only checks */

#define FAIL(c) return (c)
#define FAIL_AT(c, a) \
    do {              \
        *addr = (a);  \
        return (c);   \
    } while (0)

static uint32_t check_gpu_range(const struct gmc_dma_ref *r, uint64_t a, uint64_t len, uint64_t *addr,
                                enum space *sp)
{
    *sp = gpu_space(r, a, len);
    if (*sp == SP_NONE) FAIL_AT(GMC_DMA_FAULT_RANGE, a);
    return GMC_DMA_FAULT_NONE;
}

uint32_t gmc_dma_ref_check(const struct gmc_dma_ref *r, const struct gmc_pkt *p, int in_indirect,
                           uint64_t *addr)
{
    const unsigned op = pkt_op(p), fl = pkt_flags(p);
    const uint64_t len = pkt_len(p), w1 = p->w[1], w2 = p->w[2], w3 = p->w[3];
    enum space sp, sp2;
    uint32_t c;

    *addr = 0;
    if (op == 0 || op > GMC_DMA_OP_INDIRECT) FAIL(GMC_DMA_FAULT_OPCODE);
    if (p->w[0] & W0_RESERVED) FAIL(GMC_DMA_FAULT_RESERVED);

    switch (op) {
    case GMC_DMA_OP_NOP:
    case GMC_DMA_OP_FLUSH_TLB:
        if (fl || len || w1 || w2 || w3) FAIL(GMC_DMA_FAULT_RESERVED);
        return GMC_DMA_FAULT_NONE;

    case GMC_DMA_OP_TRANSFER: {
        const int smdl = !!(fl & GMC_PKT_FLAG_SRC_MDL_MASK), dmdl = !!(fl & GMC_PKT_FLAG_DST_MDL_MASK);
        if (fl & ~(GMC_PKT_FLAG_SRC_MDL_MASK | GMC_PKT_FLAG_DST_MDL_MASK)) FAIL(GMC_DMA_FAULT_RESERVED);
        if (smdl ? (w1 >> 48) : (w1 >> 32)) FAIL(GMC_DMA_FAULT_RESERVED);
        if (dmdl ? (w2 >> 48) : (w2 >> 32)) FAIL(GMC_DMA_FAULT_RESERVED);
        if (!smdl && (w3 & (GMC_PKT_MDL_W3_SRC_PAGE_MASK | GMC_PKT_MDL_W3_SRC_OFFSET_MASK)))
            FAIL(GMC_DMA_FAULT_RESERVED);
        if (!dmdl && (w3 & (GMC_PKT_MDL_W3_DST_PAGE_MASK | GMC_PKT_MDL_W3_DST_OFFSET_MASK)))
            FAIL(GMC_DMA_FAULT_RESERVED);
        if (len == 0) FAIL(GMC_DMA_FAULT_SIZE);
        if (smdl && (w1 & 7)) FAIL(GMC_DMA_FAULT_SIZE);
        if (dmdl && (w2 & 7)) FAIL(GMC_DMA_FAULT_SIZE);
        sp = sp2 = SP_NONE;
        if (!smdl && (c = check_gpu_range(r, w1, len, addr, &sp))) return c;
        if (!dmdl && (c = check_gpu_range(r, w2, len, addr, &sp2))) return c;
        /* A VRAM source read toward system memory (an MDL) or the aperture. */
        if (!smdl && sp == SP_VRAM && (dmdl || sp2 == SP_APERTURE) && gmc_dma_ref_protected(r, w1, len))
            FAIL_AT(GMC_DMA_FAULT_PROTECTED, w1);
        return GMC_DMA_FAULT_NONE;
    }

    case GMC_DMA_OP_FILL:
    case GMC_DMA_OP_DISCARD:
        if (op == GMC_DMA_OP_FILL ? fl != 0 : (fl & ~GMC_PKT_FLAG_POISON_MASK) != 0)
            FAIL(GMC_DMA_FAULT_RESERVED);
        if (w1 || (w2 >> 32)) FAIL(GMC_DMA_FAULT_RESERVED);
        if (op == GMC_DMA_OP_FILL ? (w3 >> 32) != 0 : w3 != 0) FAIL(GMC_DMA_FAULT_RESERVED);
        if (len == 0) FAIL(GMC_DMA_FAULT_SIZE);
        if ((c = check_gpu_range(r, w2, len, addr, &sp))) return c;
        if (sp == SP_APERTURE) FAIL_AT(GMC_DMA_FAULT_FILL_APERTURE, w2);
        return GMC_DMA_FAULT_NONE;

    case GMC_DMA_OP_READ_PHYSICAL:
    case GMC_DMA_OP_WRITE_PHYSICAL: {
        const int rd = op == GMC_DMA_OP_READ_PHYSICAL;
        const int gpu = !!(fl & GMC_PKT_FLAG_GPU_MASK);
        const uint64_t a = rd ? w1 : w2;
        if (fl & ~GMC_PKT_FLAG_GPU_MASK) FAIL(GMC_DMA_FAULT_RESERVED);
        if (rd ? (w2 || w3) : (w1 != 0)) FAIL(GMC_DMA_FAULT_RESERVED);
        if (gpu ? (a >> 32) : (a >> 48)) FAIL(GMC_DMA_FAULT_RESERVED);
        /* WRITE_PHYSICAL: bytes of W3 above LENGTH are not used. */
        if (!rd && len >= 1 && len < 8 && (w3 >> (8 * len))) FAIL(GMC_DMA_FAULT_RESERVED);
        if (len == 0 || len > 8 || (a & 7) + len > 8) FAIL(GMC_DMA_FAULT_SIZE);
        if (gpu) {
            if ((c = check_gpu_range(r, a, len, addr, &sp))) return c;
            if (rd && sp == SP_VRAM && gmc_dma_ref_protected(r, a, len)) FAIL_AT(GMC_DMA_FAULT_PROTECTED, a);
        }
        return GMC_DMA_FAULT_NONE;
    }

    case GMC_DMA_OP_MAP_APERTURE:
    case GMC_DMA_OP_UNMAP_APERTURE: {
        const int map = op == GMC_DMA_OP_MAP_APERTURE;
        const uint64_t w3_used = GMC_PKT_MAP_W3_MDL_PAGE_MASK | GMC_PKT_MAP_W3_SNOOPED_MASK |
                                 GMC_PKT_MAP_W3_READABLE_MASK | GMC_PKT_MAP_W3_WRITEABLE_MASK;
        if (fl) FAIL(GMC_DMA_FAULT_RESERVED);
        if (map ? (w1 >> 48) != 0 : w1 != 0) FAIL(GMC_DMA_FAULT_RESERVED);
        if (w2 >> 32) FAIL(GMC_DMA_FAULT_RESERVED);
        if (map ? (w3 & ~w3_used) != 0 : w3 != 0) FAIL(GMC_DMA_FAULT_RESERVED);
        if (len == 0) FAIL(GMC_DMA_FAULT_SIZE);
        if (map && (w1 & 7)) FAIL(GMC_DMA_FAULT_SIZE);
        if (w2 & (REF_PAGE - 1)) FAIL(GMC_DMA_FAULT_SIZE);
        /* The page range must be wholly inside the aperture (a VRAM range
         * is not an aperture range either). */
        if (gpu_space(r, w2, len * REF_PAGE) != SP_APERTURE) FAIL_AT(GMC_DMA_FAULT_RANGE, w2);
        return GMC_DMA_FAULT_NONE;
    }

    case GMC_DMA_OP_FENCE:
        if (fl & ~(GMC_PKT_FLAG_WRITE_MEM_MASK | GMC_PKT_FLAG_IRQ_MASK)) FAIL(GMC_DMA_FAULT_RESERVED);
        if (len || w1) FAIL(GMC_DMA_FAULT_RESERVED);
        if (fl & GMC_PKT_FLAG_WRITE_MEM_MASK) {
            if (w2 >> 48) FAIL(GMC_DMA_FAULT_RESERVED);
            if (w2 & 7) FAIL(GMC_DMA_FAULT_SIZE);
        } else if (w2) {
            FAIL(GMC_DMA_FAULT_RESERVED);
        }
        return GMC_DMA_FAULT_NONE;

    case GMC_DMA_OP_INDIRECT:
        if (in_indirect) FAIL(GMC_DMA_FAULT_NESTED);
        if (fl || w2 || w3 || (w1 >> 48)) FAIL(GMC_DMA_FAULT_RESERVED);
        if (len == 0 || len % 32 || (w1 & 31)) FAIL(GMC_DMA_FAULT_SIZE);
        return GMC_DMA_FAULT_NONE;
    }
    FAIL(GMC_DMA_FAULT_OPCODE);
}

/* ------------------------------------------------------ data movement */

/* One side of a data access: byte k -> a VRAM address or a bus address. */
struct side {
    enum { S_VRAM, S_APERTURE, S_MDL, S_BUS } kind;
    uint64_t addr;       /* GPU address, MDL base or bus address */
    uint32_t page, off;  /* MDL: first entry and byte offset */
    int write;
};

/* Resolve byte k. Returns a fault code (with *faddr) or NONE with *vram
 * (1: VRAM address, 0: bus address) and *a. */
static uint32_t side_at(const struct gmc_dma_ref *r, const struct side *s, uint64_t k, int *vram, uint64_t *a,
                        uint64_t *faddr)
{
    *vram = 0;
    switch (s->kind) {
    case S_VRAM:
        *vram = 1;
        *a = s->addr + k;
        return GMC_DMA_FAULT_NONE;
    case S_APERTURE: {
        uint32_t g = (uint32_t)(s->addr + k);
        uint32_t c = gmc_dma_ref_translate(r, g, s->write, a);
        if (c) {
            *faddr = g & ~(uint64_t)(REF_PAGE - 1); /* "the GPU address of the page" */
            return c;
        }
        break;
    }
    case S_MDL: {
        uint64_t pos = s->off + k;
        uint64_t ent = s->addr + 8 * (s->page + pos / REF_PAGE);
        if (!sys_mapped(r, ent, 8)) {
            *faddr = ent;
            return GMC_DMA_FAULT_BUS;
        }
        uint8_t b[8];
        for (int i = 0; i < 8; i++) b[i] = (uint8_t)sys_rd(r, ent + (uint64_t)i);
        *a = (le64(b) & GMC_PTE_ADDR_MASK) + pos % REF_PAGE;
        break;
    }
    case S_BUS:
        *a = s->addr + k;
        break;
    }
    if (!sys_mapped(r, *a, 1)) {
        *faddr = *a;
        return GMC_DMA_FAULT_BUS;
    }
    return GMC_DMA_FAULT_NONE;
}

static uint8_t side_rd(const struct gmc_dma_ref *r, int vram, uint64_t a)
{
    return vram ? r->vram[a] : (uint8_t)sys_rd(r, a);
}

static void side_wr(struct gmc_dma_ref *r, int vram, uint64_t a, uint8_t v)
{
    if (vram)
        vram_wr(r, a, v);
    else
        sys_wr(r, a, v);
}

static struct side gpu_side(const struct gmc_dma_ref *r, uint64_t a, uint64_t len, int write)
{
    struct side s = {gpu_space(r, a, len) == SP_VRAM ? S_VRAM : S_APERTURE, a, 0, 0, write};
    return s;
}

/* Contiguous runs of one side's bytes (VRAM or bus addresses). */
struct run {
    int vram;
    uint64_t at, len;
};

static void run_add(struct run **rs, size_t *n, size_t *cap, int vram, uint64_t at)
{
    if (*n > 0 && (*rs)[*n - 1].vram == vram && (*rs)[*n - 1].at + (*rs)[*n - 1].len == at) {
        (*rs)[*n - 1].len++;
        return;
    }
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *rs = realloc(*rs, *cap * sizeof(**rs));
        if (!*rs) abort();
    }
    (*rs)[(*n)++] = (struct run){vram, at, 1};
}

/* Copy len bytes from src to dst: walk every byte of both sides first (a
 * fault there is unpinned: nothing is applied), then read the whole source
 * and write the destination in ascending order. When the two sides share
 * a byte the hardware's result depends on how far its reads run ahead of
 * its writes (docs/dma.md, TRANSFER): the model still applies its
 * read-all-then-write result but counts the packet in r->overlaps, and
 * callers must not compare that destination with the hardware's. */
static uint32_t copy(struct gmc_dma_ref *r, const struct side *src, const struct side *dst, uint64_t len,
                     uint64_t *faddr)
{
    int v;
    uint64_t a;
    uint32_t c;
    struct run *rs = NULL, *rd = NULL;
    size_t ns = 0, nd = 0, cs = 0, cd = 0;
    for (uint64_t k = 0; k < len; k++) {
        if ((c = side_at(r, src, k, &v, &a, faddr))) { free(rs); free(rd); return c; }
        run_add(&rs, &ns, &cs, v, a);
        if ((c = side_at(r, dst, k, &v, &a, faddr))) { free(rs); free(rd); return c; }
        run_add(&rd, &nd, &cd, v, a);
    }
    int shared = 0;
    for (size_t i = 0; i < ns && !shared; i++)
        for (size_t j = 0; j < nd && !shared; j++)
            shared = rs[i].vram == rd[j].vram && rs[i].at < rd[j].at + rd[j].len && rd[j].at < rs[i].at + rs[i].len;
    free(rs);
    free(rd);
    if (shared) r->overlaps++;
    uint8_t *buf = malloc(len);
    if (!buf) abort();
    for (uint64_t k = 0; k < len; k++) {
        side_at(r, src, k, &v, &a, faddr);
        buf[k] = side_rd(r, v, a);
    }
    for (uint64_t k = 0; k < len; k++) {
        side_at(r, dst, k, &v, &a, faddr);
        side_wr(r, v, a, buf[k]);
    }
    free(buf);
    return GMC_DMA_FAULT_NONE;
}

/* Run a packet that passed gmc_dma_ref_check. Returns a data-dependent
 * fault (unpinned, nothing applied) or NONE. */
static uint32_t apply(struct gmc_dma_ref *r, const struct gmc_pkt *p, uint64_t pkt_bus, uint64_t *faddr)
{
    const unsigned op = pkt_op(p), fl = pkt_flags(p);
    const uint64_t len = pkt_len(p), w1 = p->w[1], w2 = p->w[2], w3 = p->w[3];
    (void)pkt_bus;

    switch (op) {
    case GMC_DMA_OP_NOP:
    case GMC_DMA_OP_FLUSH_TLB: /* the model has no TLB */
        return GMC_DMA_FAULT_NONE;

    case GMC_DMA_OP_TRANSFER: {
        struct side s, d;
        if (fl & GMC_PKT_FLAG_SRC_MDL_MASK) {
            struct side m = {S_MDL, w1, (uint32_t)(w3 & GMC_PKT_MDL_W3_SRC_PAGE_MASK),
                             (uint32_t)((w3 & GMC_PKT_MDL_W3_SRC_OFFSET_MASK) >> GMC_PKT_MDL_W3_SRC_OFFSET_LSB),
                             0};
            s = m;
        } else {
            s = gpu_side(r, w1, len, 0);
        }
        if (fl & GMC_PKT_FLAG_DST_MDL_MASK) {
            struct side m = {S_MDL, w2,
                             (uint32_t)((w3 & GMC_PKT_MDL_W3_DST_PAGE_MASK) >> GMC_PKT_MDL_W3_DST_PAGE_LSB),
                             (uint32_t)((w3 & GMC_PKT_MDL_W3_DST_OFFSET_MASK) >> GMC_PKT_MDL_W3_DST_OFFSET_LSB),
                             1};
            d = m;
        } else {
            d = gpu_side(r, w2, len, 1);
        }
        return copy(r, &s, &d, len, faddr);
    }

    case GMC_DMA_OP_FILL:
    case GMC_DMA_OP_DISCARD: {
        uint32_t pat = (uint32_t)w3;
        if (op == GMC_DMA_OP_DISCARD) {
            if (!(fl & GMC_PKT_FLAG_POISON_MASK)) return GMC_DMA_FAULT_NONE;
            pat = 0xDEADBEEFu;
        }
        for (uint64_t a = w2; a < w2 + len; a++) vram_wr(r, a, (uint8_t)(pat >> (8 * (a % 4))));
        return GMC_DMA_FAULT_NONE;
    }

    case GMC_DMA_OP_READ_PHYSICAL:
    case GMC_DMA_OP_WRITE_PHYSICAL: {
        const int rd = op == GMC_DMA_OP_READ_PHYSICAL;
        const uint64_t at = rd ? w1 : w2;
        struct side s;
        if (fl & GMC_PKT_FLAG_GPU_MASK) {
            s = gpu_side(r, at, len, !rd);
        } else {
            struct side b = {S_BUS, at, 0, 0, !rd};
            s = b;
        }
        int v;
        uint64_t a;
        uint32_t c;
        for (uint64_t k = 0; k < len; k++)
            if ((c = side_at(r, &s, k, &v, &a, faddr))) return c;
        if (rd) {
            uint64_t val = 0;
            for (uint64_t k = 0; k < len; k++) {
                side_at(r, &s, k, &v, &a, faddr);
                val |= (uint64_t)side_rd(r, v, a) << (8 * k);
            }
            r->read_result = val;
        } else {
            for (uint64_t k = 0; k < len; k++) {
                side_at(r, &s, k, &v, &a, faddr);
                side_wr(r, v, a, (uint8_t)(w3 >> (8 * k)));
            }
        }
        return GMC_DMA_FAULT_NONE;
    }

    case GMC_DMA_OP_MAP_APERTURE:
    case GMC_DMA_OP_UNMAP_APERTURE: {
        const uint32_t first = (uint32_t)((w2 - r->aperture_base) / REF_PAGE);
        const uint64_t mdl_page = w3 & GMC_PKT_MAP_W3_MDL_PAGE_MASK;
        uint64_t flags = GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK;
        if (op == GMC_DMA_OP_MAP_APERTURE) {
            if (w3 & GMC_PKT_MAP_W3_SNOOPED_MASK) flags |= GMC_PTE_SNOOPED_MASK;
            if (w3 & GMC_PKT_MAP_W3_READABLE_MASK) flags |= GMC_PTE_READABLE_MASK;
            if (w3 & GMC_PKT_MAP_W3_WRITEABLE_MASK) flags |= GMC_PTE_WRITEABLE_MASK;
            for (uint64_t i = 0; i < len; i++) {
                uint64_t ent = w1 + 8 * (mdl_page + i);
                if (!sys_mapped(r, ent, 8)) {
                    *faddr = ent;
                    return GMC_DMA_FAULT_BUS;
                }
            }
        } else {
            flags |= GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK;
        }
        for (uint64_t i = 0; i < len; i++) {
            uint64_t pte;
            if (op == GMC_DMA_OP_MAP_APERTURE) {
                uint8_t b[8];
                for (int j = 0; j < 8; j++) b[j] = (uint8_t)sys_rd(r, w1 + 8 * (mdl_page + i) + (uint64_t)j);
                pte = flags | (le64(b) & GMC_PTE_ADDR_MASK);
            } else {
                pte = flags | (r->dummy_page & GMC_PTE_ADDR_MASK);
            }
            uint8_t b[8];
            put_le64(b, pte);
            for (int j = 0; j < 8; j++) vram_wr(r, r->pt_base + 8 * (first + i) + (uint64_t)j, b[j]);
        }
        return GMC_DMA_FAULT_NONE;
    }

    case GMC_DMA_OP_FENCE:
        if (fl & GMC_PKT_FLAG_WRITE_MEM_MASK) {
            if (!sys_mapped(r, w2, 8)) {
                *faddr = w2;
                return GMC_DMA_FAULT_BUS;
            }
            uint8_t b[8];
            put_le64(b, w3);
            for (int j = 0; j < 8; j++) sys_wr(r, w2 + (uint64_t)j, b[j]);
        }
        r->fence = w3;
        if (fl & GMC_PKT_FLAG_IRQ_MASK) r->irq_fence = 1;
        return GMC_DMA_FAULT_NONE;
    }
    return GMC_DMA_FAULT_OPCODE; /* INDIRECT is handled by the caller */
}

uint32_t gmc_dma_ref_exec_at(struct gmc_dma_ref *r, const struct gmc_pkt *p, int in_indirect,
                             uint64_t pkt_bus, uint64_t tag)
{
    const size_t n0 = r->nfaults;
    uint64_t addr = 0;
    uint32_t c;

    if (r->stopped) return GMC_DMA_FAULT_NONE;
    r->cur_tag = tag;
    c = gmc_dma_ref_check(r, p, in_indirect, &addr);
    if (c) {
        log_fault(r, c, in_indirect, pkt_bus, addr, 1);
    } else if (pkt_op(p) == GMC_DMA_OP_INDIRECT) {
        const uint64_t base = p->w[1], n = pkt_len(p) / 32;
        if (!sys_mapped(r, base, n * 32)) {
            /* The buffer fetch fails somewhere: unpinned. */
            uint64_t a = base;
            while (sys_mapped(r, a, 1)) a++;
            log_fault(r, GMC_DMA_FAULT_BUS, 0, pkt_bus, a & ~7ull, 0);
        } else {
            for (uint64_t i = 0; i < n && !r->stopped; i++) {
                struct gmc_pkt q;
                const uint8_t *b = gmc_dma_ref_sys(r, base + 32 * i, 32);
                for (int j = 0; j < 4; j++) q.w[j] = le64(b + 8 * j);
                gmc_dma_ref_exec_at(r, &q, 1, base + 32 * i, tag + 1 + i);
            }
            r->cur_tag = tag;
            if (!r->stopped) r->packets_ok++;
        }
    } else {
        c = apply(r, p, pkt_bus, &addr);
        if (c)
            log_fault(r, c, in_indirect, pkt_bus, addr, 0);
        else
            r->packets_ok++;
    }
    return r->nfaults > n0 ? r->faults[n0].code : GMC_DMA_FAULT_NONE;
}

uint32_t gmc_dma_ref_exec(struct gmc_dma_ref *r, const struct gmc_pkt *p, int in_indirect)
{
    return gmc_dma_ref_exec_at(r, p, in_indirect, 0, 0);
}

/* -------------------------------------------------------- diagnostics */

const char *gmc_dma_ref_op_name(unsigned op)
{
    static const char *const names[] = {"OP0",           "NOP",          "TRANSFER",       "FILL",
                                        "DISCARD",       "READ_PHYSICAL", "WRITE_PHYSICAL", "MAP_APERTURE",
                                        "UNMAP_APERTURE", "FLUSH_TLB",    "FENCE",          "INDIRECT"};
    return op < sizeof names / sizeof names[0] ? names[op] : "OP?";
}

const char *gmc_dma_ref_fault_name(unsigned code)
{
    static const char *const names[] = {"NONE",        "OPCODE",   "RESERVED", "SIZE",
                                        "RANGE",       "FILL_APERTURE", "PTE_INVALID", "PTE_PERM",
                                        "BUS",         "PROTECTED", "TIMEOUT",  "NESTED"};
    return code < sizeof names / sizeof names[0] ? names[code] : "FAULT?";
}

char *gmc_dma_ref_describe(const struct gmc_pkt *p, char *buf, size_t len)
{
    snprintf(buf, len, "%s flags=0x%02x len=%llu w1=0x%llx w2=0x%llx w3=0x%llx%s", gmc_dma_ref_op_name(pkt_op(p)),
             pkt_flags(p), (unsigned long long)pkt_len(p), (unsigned long long)p->w[1],
             (unsigned long long)p->w[2], (unsigned long long)p->w[3],
             (p->w[0] & W0_RESERVED) ? " (W0[31:16] set)" : "");
    return buf;
}
