/*
 * test_paging.c - the paging layer on the model: system memory (pool
 * chunks, sub-allocation, MDLs, wrapped user memory), every paging
 * operation's encoding checked by running it and reading the result back
 * (VRAM, system memory, PTEs), TRANSFER for every side pairing with
 * TransferOffset/MdlOffset and odd sizes, multipass with small buffers
 * (exact buffer, continuation and packet counts) and out-of-space at every
 * boundary, NOTIFY delivery, fence waits by IRQ and by polling, a hung bus
 * (timeout, reset, new work), a bus error (fault code and address), and
 * invalid arguments (nothing written, nothing queued). Every model is
 * checked for AXI protocol violations when it is destroyed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmc_test.h"

#include "gmc_backend.h"
#include "gmc_devstr.h"
#include "gmc_kmd.h"
#include "gmc_paging.h"
#include "gmc_pkt.h"
#include "gmc_status.h"

/* Cycle budget of a wait, scaled for the compact engine (t_dma_slowdown). */
static uint32_t wait_budget = 4000000u;
#define WAIT wait_budget
#define V_A 0x040000u /* VRAM in the CPU window (BAR1 writes) */
#define V_B 0x100000u
#define SEG_VRAM 1u
#define SEG_APERTURE 3u

/* ---------------------------------------------------------------- fixture */

struct fx {
    struct gmc_kmd kmd;
    gmc_sim *sim;
    struct gmc_adapter_info ai;
    struct gmc_paging_config cfg;
    struct gmc_paging *pg;
    uint64_t pt_base;
    uint64_t seed;
};

static struct fx *fx_new(const struct gmc_paging_config *cfg)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    struct gmc_devspec spec;
    assert_int_equal(gmc_devspec_sim_set(&spec, NULL), GMC_OK);
    void *ctx = NULL;
    assert_int_equal(gmc_backend_sim.open(&spec, &ctx), GMC_OK);
    gmc_kmd_start(&f->kmd, &gmc_backend_sim, ctx);
    f->sim = ctx;
    wait_budget = 4000000u * t_dma_slowdown(f->sim);
    assert_int_equal(f->kmd.ddi->query_adapter_info(&f->kmd, &f->ai), GMC_OK);
    if (cfg != NULL)
        f->cfg = *cfg;
    else
        gmc_paging_config_default(&f->cfg);
    assert_int_equal(gmc_paging_init(&f->kmd, &f->ai, &f->cfg, &f->pg), GMC_OK);
    f->pt_base = t_rd(f->sim, GMC_REG_PT_BASE);
    f->seed = 0x5eed;
    return f;
}

static void fx_free(struct fx *f)
{
    gmc_paging_fini(f->pg);
    t_sim_free(f->sim);
    free(f);
}

/* *state on entry: a struct gmc_paging_config (prestate) or NULL. */
static int setup(void **state)
{
    *state = fx_new(*state);
    return 0;
}

static int teardown(void **state)
{
    fx_free(*state);
    return 0;
}

static struct gmc_paging_config cfg_poll, cfg_chunk4k, cfg_buf64, cfg_buf96, cfg_buf128, cfg_small_pool;

/* ---------------------------------------------------------------- helpers */

static struct gmc_paging_side seg(uint32_t id, uint64_t addr)
{
    struct gmc_paging_side s = {id, addr, NULL};
    return s;
}

static struct gmc_paging_side mdl(const struct gmc_sysbuf *b)
{
    struct gmc_paging_side s = {0, 0, b};
    return s;
}

static struct gmc_paging_args a_op(enum gmc_paging_op op)
{
    struct gmc_paging_args a;
    memset(&a, 0, sizeof a);
    a.op = op;
    return a;
}

static struct gmc_paging_args a_xfer(struct gmc_paging_side src, struct gmc_paging_side dst, uint64_t size,
                                     uint64_t off, uint64_t mdl_off)
{
    struct gmc_paging_args a = a_op(GMC_PAGING_TRANSFER);
    a.u.transfer.src = src;
    a.u.transfer.dst = dst;
    a.u.transfer.size = size;
    a.u.transfer.transfer_offset = off;
    a.u.transfer.mdl_offset = mdl_off;
    a.u.transfer.flags = GMC_PAGING_TRANSFER_START | GMC_PAGING_TRANSFER_END;
    return a;
}

static struct gmc_paging_args a_fill(uint64_t addr, uint64_t size, uint32_t pattern)
{
    struct gmc_paging_args a = a_op(GMC_PAGING_FILL);
    a.u.fill.gpu_address = addr;
    a.u.fill.size = size;
    a.u.fill.pattern = pattern;
    return a;
}

static struct gmc_paging_args a_phys(enum gmc_paging_op op, uint64_t addr, int gpu, unsigned size, uint64_t v)
{
    struct gmc_paging_args a = a_op(op);
    a.u.physical.address = addr;
    a.u.physical.gpu = gpu;
    a.u.physical.size = size;
    a.u.physical.value = v;
    return a;
}

static struct gmc_paging_args a_map(uint64_t gpu, uint64_t pages, const struct gmc_sysbuf *b, uint64_t mdl_off,
                                    int snooped, int r, int w)
{
    struct gmc_paging_args a = a_op(b ? GMC_PAGING_MAP_APERTURE_SEGMENT : GMC_PAGING_UNMAP_APERTURE_SEGMENT);
    a.u.map.gpu_address = gpu;
    a.u.map.pages = pages;
    a.u.map.mdl = b;
    a.u.map.mdl_offset = mdl_off;
    a.u.map.snooped = snooped;
    a.u.map.readable = r;
    a.u.map.writeable = w;
    return a;
}

static struct gmc_paging_args a_notify(uint64_t cookie, int resident)
{
    struct gmc_paging_args a = a_op(GMC_PAGING_NOTIFY_RESIDENCY);
    a.u.notify.cookie = cookie;
    a.u.notify.resident = resident;
    return a;
}

static uint64_t queue(struct fx *f, const struct gmc_paging_args *a)
{
    uint64_t fence = 0;
    int rc = gmc_paging_queue(f->pg, a, &fence);
    if (rc != GMC_OK)
        fail_msg("queue op %d: %s", (int)a->op, gmc_status_name(rc));
    assert_int_equal(fence, gmc_paging_last_issued(f->pg));
    return fence;
}

static void idle(struct fx *f)
{
    int rc = gmc_paging_idle(f->pg, WAIT);
    if (rc != GMC_OK)
        fail_msg("idle: %s", gmc_status_name(rc));
    assert_true(gmc_paging_completed(f->pg) >= gmc_paging_last_issued(f->pg));
}

/* The engine idle (DMA_STATUS): every packet issued has completed and
 * been counted. A fence's memory copy is written before its packet
 * completes (docs/dma.md, FENCE), and an INDIRECT completes after it, so
 * a host that has seen the fence in memory waits for this before it reads
 * CNT_DMA_PACKETS. */
static void engine_idle(struct fx *f)
{
    for (unsigned i = 0; i < 10000; i++) {
        if ((t_rd(f->sim, GMC_REG_DMA_STATUS) & GMC_DMA_STATUS_STATE_MASK) == GMC_DMA_STATE_IDLE) return;
        assert_int_equal(gmc_sim_step(f->sim, 16), GMC_SIM_OK);
    }
    fail_msg("engine not idle");
}

static void run(struct fx *f, const struct gmc_paging_args *a)
{
    queue(f, a);
    idle(f);
}

static void vram_write(struct fx *f, uint64_t addr, const void *buf, size_t len)
{
    assert_int_equal(gmc_sim_aperture_write(f->sim, addr, buf, len), GMC_SIM_OK);
}

static void vram_read(struct fx *f, uint64_t addr, void *buf, size_t len)
{
    assert_int_equal(gmc_sim_vram_peek(f->sim, addr, buf, len), GMC_SIM_OK);
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static uint64_t pte(struct fx *f, uint64_t page)
{
    uint8_t b[8];
    vram_read(f, f->pt_base + 8u * page, b, 8);
    return le64(b);
}

static uint64_t ap_gpu(struct fx *f, uint64_t page)
{
    return f->ai.aperture_base + page * GMC_PAGE_SIZE;
}

static struct gmc_paging_stats stats(struct fx *f)
{
    struct gmc_paging_stats s;
    gmc_paging_get_stats(f->pg, &s);
    return s;
}

static void sysbuf_new(struct fx *f, uint64_t bytes, struct gmc_sysbuf *b)
{
    assert_int_equal(gmc_sysmem_alloc(f->pg, bytes, b), GMC_OK);
    assert_non_null(b->host);
}

/* ------------------------------------------------------------ the backend */

static void test_backend_wait(void **state)
{
    struct fx *f = *state;
    const struct gmc_backend_ops *be = f->kmd.be;
    uint64_t ran = 7;
    const uint64_t c0 = be->cycles(f->sim);
    assert_int_equal(be->wait(f->sim, 100, 0, &ran), GMC_OK);
    assert_int_equal(ran, 100);
    assert_int_equal(be->cycles(f->sim) - c0, 100);
    assert_int_equal(be->cycles(f->sim), gmc_sim_cycles(f->sim));
    /* A pending DMA_FENCE IRQ (the queue unmasked it): until_irq returns at once. */
    struct gmc_paging_args a = a_op(GMC_PAGING_FLUSH_TLB);
    queue(f, &a);
    assert_int_equal(gmc_paging_flush(f->pg), GMC_OK);
    assert_int_equal(be->wait(f->sim, 100000, 1, &ran), GMC_OK);
    assert_true(ran > 0 && ran < 100000);
    assert_int_equal(gmc_sim_irq(f->sim), 1);
    assert_int_equal(be->wait(f->sim, 1000, 1, &ran), GMC_OK);
    assert_int_equal(ran, 0);
    idle(f);
    assert_int_equal(gmc_sim_irq(f->sim), 0);
    /* The table of a backend this build lacks is never opened; its entries
     * are still safe. */
    const struct gmc_backend_ops *stubs[] = {&gmc_backend_unavailable};
    for (unsigned i = 0; i < 1; i++) {
        ran = 5;
        assert_int_equal(stubs[i]->wait(NULL, 10, 1, &ran), GMC_E_BACKEND_UNAVAILABLE);
        assert_int_equal(ran, 0);
        assert_int_equal(stubs[i]->wait(NULL, 10, 0, NULL), GMC_E_BACKEND_UNAVAILABLE);
        assert_int_equal(stubs[i]->cycles(NULL), 0);
    }
}

/* --------------------------------------------------------- system memory */

/* Whether bus page `bus` is inside a mapped host region (the model refuses
 * an overlapping map). */
static int bus_mapped(struct fx *f, uint64_t bus)
{
    static _Alignas(4096) uint8_t probe[GMC_PAGE_SIZE];
    int st = gmc_sim_host_map(f->sim, bus, probe, GMC_PAGE_SIZE);
    if (st == GMC_SIM_OK) {
        assert_int_equal(gmc_sim_host_unmap(f->sim, bus), GMC_SIM_OK);
        return 0;
    }
    assert_int_equal(st, GMC_SIM_EOVERLAP);
    return 1;
}

static void test_sysmem_pool(void **state)
{
    struct fx *f = *state; /* cfg_small_pool: 64 KiB chunks */
    const uint64_t base = f->cfg.bus_base, chunk = f->cfg.pool_chunk;
    /* The queue's own memory (ring, 2 x 4 KiB buffers... ) sits in the first chunk. */
    assert_true(bus_mapped(f, base));
    assert_false(bus_mapped(f, base + chunk));

    struct gmc_sysbuf a, big, again;
    sysbuf_new(f, 1, &a);
    assert_int_equal(a.size, GMC_PAGE_SIZE);
    assert_int_equal(a.npages, 1);
    assert_int_equal(a.bus % GMC_PAGE_SIZE, 0);
    assert_true(a.bus >= base && a.bus + a.size <= base + chunk);
    assert_true(a.mdl_bus % 8 == 0);
    assert_true(a.priv != 0);
    for (unsigned i = 0; i < GMC_PAGE_SIZE; i++) assert_int_equal(a.host[i], 0);

    /* A buffer larger than a chunk gets a chunk of its own, beyond. */
    sysbuf_new(f, chunk + 5, &big);
    assert_int_equal(big.size, chunk + GMC_PAGE_SIZE);
    assert_int_equal(big.npages, chunk / GMC_PAGE_SIZE + 1);
    assert_true(big.bus >= base + chunk);
    assert_true(bus_mapped(f, big.bus));
    assert_true(bus_mapped(f, big.bus + big.size - GMC_PAGE_SIZE));

    /* Fill the first chunk: the next small buffer opens a new chunk. */
    struct gmc_sysbuf many[16];
    unsigned n = 0, spilled = 0;
    for (; n < 16 && !spilled; n++) {
        sysbuf_new(f, 2 * GMC_PAGE_SIZE, &many[n]);
        spilled = many[n].bus >= base + chunk;
    }
    assert_true(spilled);
    assert_true(many[n - 1].bus >= big.bus + big.size || many[n - 1].bus + many[n - 1].size <= big.bus);

    /* Freed pages come back (zeroed); a freed struct is zeroed and ignored. */
    memset(a.host, 0x5A, GMC_PAGE_SIZE);
    const uint64_t a_bus = a.bus;
    struct gmc_sysbuf stale = a;
    gmc_sysmem_free(f->pg, &a);
    assert_int_equal(a.priv, 0);
    assert_null(a.host);
    gmc_sysmem_free(f->pg, &a);
    gmc_sysmem_free(f->pg, &stale); /* already freed: ignored */
    gmc_sysmem_free(f->pg, NULL);
    sysbuf_new(f, GMC_PAGE_SIZE, &again);
    assert_int_equal(again.bus, a_bus);
    for (unsigned i = 0; i < GMC_PAGE_SIZE; i++) assert_int_equal(again.host[i], 0);

    /* The engine walks the MDLs: VRAM -> each buffer, then back. */
    uint8_t src[3 * GMC_PAGE_SIZE], out[3 * GMC_PAGE_SIZE];
    t_fill_random(src, sizeof src, &f->seed);
    vram_write(f, V_A, src, sizeof src);
    struct gmc_paging_args x = a_xfer(seg(SEG_VRAM, V_A), mdl(&big), sizeof src, 0, big.npages - 3);
    run(f, &x);
    assert_memory_equal(big.host + big.size - 3 * GMC_PAGE_SIZE, src, sizeof src);
    x = a_xfer(mdl(&big), seg(SEG_VRAM, V_B), sizeof src, 0, big.npages - 3);
    run(f, &x);
    vram_read(f, V_B, out, sizeof out);
    assert_memory_equal(out, src, sizeof src);

    /* Release the big chunk: its region is unmapped. */
    const uint64_t big_bus = big.bus;
    gmc_sysmem_free(f->pg, &big);
    for (unsigned i = 0; i < n; i++) gmc_sysmem_free(f->pg, &many[i]);
    gmc_sysmem_free(f->pg, &again);
    assert_false(bus_mapped(f, big_bus));
    assert_true(bus_mapped(f, base));

    assert_int_equal(gmc_sysmem_alloc(f->pg, 0, &a), GMC_E_INVALID_ARG);
    assert_int_equal(a.priv, 0);
    assert_int_equal(gmc_sysmem_alloc(f->pg, 1ull << 60, &a), GMC_E_NO_MEMORY);
    assert_int_equal(gmc_sysmem_alloc(NULL, GMC_PAGE_SIZE, &a), GMC_E_NULL_POINTER);
    assert_int_equal(gmc_sysmem_alloc(f->pg, GMC_PAGE_SIZE, NULL), GMC_E_NULL_POINTER);
}

static void test_sysmem_wrap(void **state)
{
    struct fx *f = *state;
    uint8_t *user = aligned_alloc(GMC_PAGE_SIZE, 4 * GMC_PAGE_SIZE);
    assert_non_null(user);
    memset(user, 0x77, 4 * GMC_PAGE_SIZE);
    struct gmc_sysbuf w;
    assert_int_equal(gmc_sysmem_wrap(f->pg, user + 1, 4 * GMC_PAGE_SIZE, &w), GMC_E_INVALID_ARG);
    assert_int_equal(gmc_sysmem_wrap(f->pg, user, 4 * GMC_PAGE_SIZE - 1, &w), GMC_E_INVALID_ARG);
    assert_int_equal(gmc_sysmem_wrap(f->pg, user, 0, &w), GMC_E_INVALID_ARG);
    assert_int_equal(gmc_sysmem_wrap(f->pg, NULL, GMC_PAGE_SIZE, &w), GMC_E_NULL_POINTER);
    assert_int_equal(w.priv, 0);
    assert_int_equal(gmc_sysmem_wrap(f->pg, user, 4 * GMC_PAGE_SIZE, &w), GMC_OK);
    assert_true(w.host == user);
    assert_int_equal(w.npages, 4);
    assert_true(bus_mapped(f, w.bus));
    /* The engine writes the user's memory in place (ExistingSysMem). */
    uint8_t src[5000];
    t_fill_random(src, sizeof src, &f->seed);
    vram_write(f, V_A + 3000, src, sizeof src); /* TransferOffset applies to both sides */
    struct gmc_paging_args x = a_xfer(seg(SEG_VRAM, V_A), mdl(&w), sizeof src, 3000, 1);
    run(f, &x);
    assert_memory_equal(user + GMC_PAGE_SIZE + 3000, src, sizeof src);
    for (unsigned i = 0; i < GMC_PAGE_SIZE + 3000; i++) assert_int_equal(user[i], 0x77);
    for (unsigned i = GMC_PAGE_SIZE + 3000 + sizeof src; i < 4 * GMC_PAGE_SIZE; i++) assert_int_equal(user[i], 0x77);
    const uint64_t bus = w.bus;
    gmc_sysmem_free(f->pg, &w);
    assert_false(bus_mapped(f, bus));
    free(user); /* unmapped, not freed, by the library */
}

/* ---------------------------------------------------------------- TRANSFER */

/* The three kinds of side, each with a source and a destination region of
 * 8 pages: VRAM (V_A / V_B), aperture pages 0..7 / 8..15 mapped onto the
 * pages of one buffer, and two MDL buffers. */
enum { K_VRAM, K_APERTURE, K_MDL };
struct sides {
    struct gmc_sysbuf ap, m[2];
};

static struct gmc_paging_side side_of(struct fx *f, struct sides *s, int kind, int dst)
{
    switch (kind) {
    case K_VRAM:
        return seg(SEG_VRAM, dst ? V_B : V_A);
    case K_APERTURE:
        return seg(SEG_APERTURE, ap_gpu(f, dst ? 8 : 0));
    default:
        return mdl(&s->m[dst]);
    }
}

/* Logical bytes [x, x + len) of a side (MDL sides from page mdl_off). */
static void side_read(struct fx *f, struct sides *s, int kind, int dst, uint64_t mdl_off, uint64_t x, uint8_t *out,
                      size_t len)
{
    switch (kind) {
    case K_VRAM:
        vram_read(f, (dst ? V_B : V_A) + x, out, len);
        break;
    case K_APERTURE:
        memcpy(out, s->ap.host + (dst ? 8 * GMC_PAGE_SIZE : 0) + x, len);
        break;
    default:
        memcpy(out, s->m[dst].host + mdl_off * GMC_PAGE_SIZE + x, len);
        break;
    }
}

static void side_randomise(struct fx *f, struct sides *s, int kind, int dst)
{
    static uint8_t buf[8 * GMC_PAGE_SIZE];
    t_fill_random(buf, sizeof buf, &f->seed);
    switch (kind) {
    case K_VRAM:
        vram_write(f, dst ? V_B : V_A, buf, sizeof buf);
        break;
    case K_APERTURE:
        memcpy(s->ap.host + (dst ? 8 * GMC_PAGE_SIZE : 0), buf, sizeof buf);
        break;
    default:
        memcpy(s->m[dst].host, buf, sizeof buf);
        break;
    }
}

static void test_transfer_pairs(void **state)
{
    struct fx *f = *state; /* cfg_chunk4k: max_chunk 4 KiB */
    struct sides s;
    sysbuf_new(f, 16 * GMC_PAGE_SIZE, &s.ap);
    sysbuf_new(f, 8 * GMC_PAGE_SIZE, &s.m[0]);
    sysbuf_new(f, 8 * GMC_PAGE_SIZE, &s.m[1]);
    struct gmc_paging_args m = a_map(ap_gpu(f, 0), 16, &s.ap, 0, 1, 1, 1);
    run(f, &m);

    static uint8_t before[6 * GMC_PAGE_SIZE], after[6 * GMC_PAGE_SIZE], src[6 * GMC_PAGE_SIZE];
    const uint64_t mdl_off = 2; /* MDL sides: 6 pages from entry 2 */
    unsigned pair = 0;
    for (int sk = 0; sk < 3; sk++)
        for (int dk = 0; dk < 3; dk++, pair++) {
            side_randomise(f, &s, sk, 0);
            side_randomise(f, &s, dk, 1);
            /* Odd sizes and offsets, spanning several 4 KiB packets. */
            const uint64_t off = 4096 + 777 + 13 * pair, size = 3 * GMC_PAGE_SIZE + 123 - 7 * pair;
            const uint64_t chunks = (size + GMC_PAGE_SIZE - 1) / GMC_PAGE_SIZE;
            side_read(f, &s, sk, 0, mdl_off, 0, src, sizeof src);
            side_read(f, &s, dk, 1, mdl_off, 0, before, sizeof before);
            const struct gmc_paging_stats s0 = stats(f);
            struct gmc_paging_args x = a_xfer(side_of(f, &s, sk, 0), side_of(f, &s, dk, 1), size, off, mdl_off);
            run(f, &x);
            const struct gmc_paging_stats s1 = stats(f);
            assert_int_equal(s1.packets - s0.packets, chunks + 1); /* + the SIGNAL */
            assert_int_equal(s1.multipass - s0.multipass, 0);
            side_read(f, &s, dk, 1, mdl_off, 0, after, sizeof after);
            memcpy(before + off, src + off, size);
            if (memcmp(before, after, sizeof after) != 0)
                fail_msg("transfer side %d -> side %d: destination differs", sk, dk);
        }
}

/* ------------------------------------------------------ FILL and DISCARD */

static void test_fill_discard(void **state)
{
    struct fx *f = *state; /* cfg_chunk4k */
    static uint8_t buf[4 * GMC_PAGE_SIZE], got[4 * GMC_PAGE_SIZE];
    const uint64_t at = V_B + 3, size = 2 * GMC_PAGE_SIZE + 1001; /* odd start and size */
    const uint32_t pat = 0x11223344u;
    t_fill_random(buf, sizeof buf, &f->seed);
    vram_write(f, V_B, buf, sizeof buf);
    struct gmc_paging_stats s0 = stats(f);
    struct gmc_paging_args a = a_fill(at, size, pat);
    run(f, &a);
    assert_int_equal(stats(f).packets - s0.packets, 3 + 1);
    for (uint64_t x = at; x < at + size; x++) buf[x - V_B] = (uint8_t)(pat >> (8 * (x % 4)));
    vram_read(f, V_B, got, sizeof got);
    assert_memory_equal(got, buf, sizeof buf);

    /* DISCARD without POISON: nothing changes, one packet for any size. */
    s0 = stats(f);
    a = a_op(GMC_PAGING_DISCARD_CONTENT);
    a.u.fill.gpu_address = V_B;
    a.u.fill.size = 4 * GMC_PAGE_SIZE;
    run(f, &a);
    assert_int_equal(stats(f).packets - s0.packets, 1 + 1);
    vram_read(f, V_B, got, sizeof got);
    assert_memory_equal(got, buf, sizeof buf);

    /* POISON: 0xDEADBEEF by address, in max_chunk packets. */
    s0 = stats(f);
    a.u.fill.gpu_address = V_B + 5;
    a.u.fill.size = 3 * GMC_PAGE_SIZE;
    a.u.fill.poison = 1;
    run(f, &a);
    assert_int_equal(stats(f).packets - s0.packets, 3 + 1);
    for (uint64_t x = V_B + 5; x < V_B + 5 + 3 * GMC_PAGE_SIZE; x++) buf[x - V_B] = (uint8_t)(0xDEADBEEFu >> (8 * (x % 4)));
    vram_read(f, V_B, got, sizeof got);
    assert_memory_equal(got, buf, sizeof buf);
}

/* ------------------------------------------------ READ/WRITE_PHYSICAL */

static void test_physical(void **state)
{
    struct fx *f = *state;
    struct gmc_sysbuf b, ap;
    sysbuf_new(f, GMC_PAGE_SIZE, &b);
    sysbuf_new(f, GMC_PAGE_SIZE, &ap);
    uint8_t v[16];
    memset(v, 0xAA, sizeof v);
    vram_write(f, V_B, v, sizeof v);
    memset(b.host, 0xAA, 32);

    /* GPU (VRAM), 3 bytes at +5: only those bytes, the low bytes of value. */
    struct gmc_paging_args a = a_phys(GMC_PAGING_WRITE_PHYSICAL, V_B + 5, 1, 3, 0x1122334455667788ull);
    run(f, &a);
    vram_read(f, V_B, v, sizeof v);
    const uint8_t want_v[16] = {0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0x88, 0x77, 0x66,
                                0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA};
    assert_memory_equal(v, want_v, 16);
    /* Bus address, 8 bytes and 2 bytes. */
    a = a_phys(GMC_PAGING_WRITE_PHYSICAL, b.bus + 8, 0, 8, 0x0102030405060708ull);
    run(f, &a);
    a = a_phys(GMC_PAGING_WRITE_PHYSICAL, b.bus + 22, 0, 2, 0xFFFFFFFFFFFFBEEFull);
    run(f, &a);
    assert_int_equal(le64(b.host + 8), 0x0102030405060708ull);
    assert_int_equal(le64(b.host + 16), 0xBEEFAAAAAAAAAAAAull);
    assert_int_equal(le64(b.host), 0xAAAAAAAAAAAAAAAAull);
    assert_int_equal(le64(b.host + 24), 0xAAAAAAAAAAAAAAAAull);
    /* GPU (aperture, translated). */
    struct gmc_paging_args m = a_map(ap_gpu(f, 7), 1, &ap, 0, 0, 1, 1);
    run(f, &m);
    a = a_phys(GMC_PAGING_WRITE_PHYSICAL, ap_gpu(f, 7) + 0x100, 1, 4, 0xCAFEF00Du);
    run(f, &a);
    assert_int_equal(le64(ap.host + 0x100), 0xCAFEF00Du);

    uint64_t r = 1;
    a = a_phys(GMC_PAGING_READ_PHYSICAL, V_B + 4, 1, 4, 0);
    run(f, &a);
    assert_int_equal(gmc_paging_read_result(f->pg, &r), GMC_OK);
    assert_int_equal(r, 0x667788AAu);
    a = a_phys(GMC_PAGING_READ_PHYSICAL, b.bus + 8, 0, 8, 0);
    run(f, &a);
    assert_int_equal(gmc_paging_read_result(f->pg, &r), GMC_OK);
    assert_int_equal(r, 0x0102030405060708ull);
    a = a_phys(GMC_PAGING_READ_PHYSICAL, ap_gpu(f, 7) + 0x101, 1, 1, 0);
    run(f, &a);
    assert_int_equal(gmc_paging_read_result(f->pg, &r), GMC_OK);
    assert_int_equal(r, 0xF0);
}

/* ---------------------------------------------- MAP, UNMAP and FLUSH_TLB */

static void test_map_unmap(void **state)
{
    struct fx *f = *state;
    struct gmc_sysbuf b;
    sysbuf_new(f, 8 * GMC_PAGE_SIZE, &b);
    for (unsigned p = 0; p < 8; p++) memset(b.host + p * GMC_PAGE_SIZE, 0x10 + p, GMC_PAGE_SIZE);
    const uint64_t P = 40;
    /* 5 pages from MDL entry 3, snooped, read-only. */
    struct gmc_paging_args m = a_map(ap_gpu(f, P), 5, &b, 3, 1, 1, 0);
    run(f, &m);
    for (unsigned i = 0; i < 5; i++)
        assert_int_equal(pte(f, P + i), GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_SNOOPED_MASK |
                                            GMC_PTE_READABLE_MASK | (b.bus + (3 + i) * GMC_PAGE_SIZE));
    assert_int_equal(pte(f, P + 5), 0);
    assert_int_equal(pte(f, P - 1), 0);
    /* Writeable, not snooped, not readable. */
    m = a_map(ap_gpu(f, P + 5), 2, &b, 0, 0, 0, 1);
    run(f, &m);
    assert_int_equal(pte(f, P + 6), GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_WRITEABLE_MASK | (b.bus + GMC_PAGE_SIZE));

    /* Reading through the aperture gives the mapped pages. */
    uint8_t got[5 * GMC_PAGE_SIZE];
    struct gmc_paging_args x = a_xfer(seg(SEG_APERTURE, ap_gpu(f, P)), seg(SEG_VRAM, V_B), 5 * GMC_PAGE_SIZE, 0, 0);
    run(f, &x);
    vram_read(f, V_B, got, sizeof got);
    for (unsigned i = 0; i < 5; i++)
        for (unsigned k = 0; k < GMC_PAGE_SIZE; k += 511) assert_int_equal(got[i * GMC_PAGE_SIZE + k], 0x13 + i);

    /* UNMAP: the dummy page, readable and writeable. */
    const uint64_t dummy = (uint64_t)t_rd(f->sim, GMC_REG_DUMMY_PAGE_HI) << 32 | t_rd(f->sim, GMC_REG_DUMMY_PAGE_LO);
    assert_true(dummy != 0 && dummy % GMC_PAGE_SIZE == 0);
    struct gmc_paging_args u = a_map(ap_gpu(f, P + 1), 3, NULL, 0, 0, 0, 0);
    run(f, &u);
    const uint64_t dpte = GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK | dummy;
    assert_int_equal(pte(f, P), GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_SNOOPED_MASK |
                                    GMC_PTE_READABLE_MASK | (b.bus + 3 * GMC_PAGE_SIZE));
    for (unsigned i = 1; i < 4; i++) assert_int_equal(pte(f, P + i), dpte);
    const uint64_t hits = t_rd64(f->sim, GMC_REG_CNT_DUMMY_HIT_LO);
    run(f, &x);
    vram_read(f, V_B, got, sizeof got);
    for (unsigned k = 0; k < GMC_PAGE_SIZE; k += 97) assert_int_equal(got[k], 0x13);
    for (unsigned k = GMC_PAGE_SIZE; k < 4 * GMC_PAGE_SIZE; k++) assert_int_equal(got[k], 0);
    assert_int_equal(got[4 * GMC_PAGE_SIZE], 0x17);
    assert_true(t_rd64(f->sim, GMC_REG_CNT_DUMMY_HIT_LO) - hits >= 3);
}

/* FLUSH_TLB: a PTE rewritten behind the TLB's back (WRITE_PHYSICAL into
 * the page table) is seen only after the flush. */
static void test_flush_tlb(void **state)
{
    struct fx *f = *state;
    struct gmc_sysbuf b;
    sysbuf_new(f, 2 * GMC_PAGE_SIZE, &b);
    memset(b.host, 0x11, GMC_PAGE_SIZE);
    memset(b.host + GMC_PAGE_SIZE, 0x22, GMC_PAGE_SIZE);
    const uint64_t P = 99;
    struct gmc_paging_args m = a_map(ap_gpu(f, P), 1, &b, 0, 0, 1, 1);
    run(f, &m);
    uint8_t got[64];
    struct gmc_paging_args x = a_xfer(seg(SEG_APERTURE, ap_gpu(f, P)), seg(SEG_VRAM, V_B), 64, 0, 0);
    run(f, &x);
    vram_read(f, V_B, got, 64);
    assert_int_equal(got[0], 0x11);
    const uint64_t newpte = GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_READABLE_MASK | (b.bus + GMC_PAGE_SIZE);
    struct gmc_paging_args w = a_phys(GMC_PAGING_WRITE_PHYSICAL, f->pt_base + 8 * P, 1, 8, newpte);
    run(f, &w);
    assert_int_equal(pte(f, P), newpte);
    run(f, &x);
    vram_read(f, V_B, got, 64);
    assert_int_equal(got[0], 0x11); /* the stale TLB entry */
    struct gmc_paging_args fl = a_op(GMC_PAGING_FLUSH_TLB);
    const uint64_t misses = t_rd64(f->sim, GMC_REG_CNT_TLB_MISS_LO);
    run(f, &fl);
    run(f, &x);
    vram_read(f, V_B, got, 64);
    assert_int_equal(got[0], 0x22);
    assert_int_equal(got[63], 0x22);
    assert_true(t_rd64(f->sim, GMC_REG_CNT_TLB_MISS_LO) > misses);
}

/* -------------------------------------------------------------- multipass */

/* A 41-KiB transfer (11 packets of 4 KiB) through buffers of 2 packets
 * (cfg_buf64: one data packet and the SIGNAL kept for the end) and of 3
 * (cfg_buf96: two and the SIGNAL), two buffers in the pool so they are
 * reused while the engine works. */
static void multipass_case(struct fx *f, unsigned data_per_buf)
{
    static uint8_t src[10 * GMC_PAGE_SIZE + 5];
    struct gmc_sysbuf b;
    sysbuf_new(f, 11 * GMC_PAGE_SIZE, &b);
    t_fill_random(src, sizeof src, &f->seed);
    vram_write(f, V_A + 7, src, sizeof src); /* TransferOffset applies to both sides */
    t_wr(f->sim, GMC_REG_CNT_CLEAR, 1);
    const struct gmc_paging_stats s0 = stats(f);
    const uint64_t issued0 = gmc_paging_last_issued(f->pg);
    struct gmc_paging_args x = a_xfer(seg(SEG_VRAM, V_A), mdl(&b), sizeof src, 7, 0);
    const uint64_t fence = queue(f, &x);
    assert_int_equal(x.multipass_offset, 0); /* args untouched */
    const unsigned chunks = 11, bufs = (chunks + data_per_buf - 1) / data_per_buf;
    assert_int_equal(fence, issued0 + bufs); /* one SIGNAL per buffer */
    assert_int_equal(gmc_paging_wait(f->pg, fence, WAIT), GMC_OK);
    const struct gmc_paging_stats s1 = stats(f);
    assert_int_equal(s1.buffers - s0.buffers, bufs);
    assert_int_equal(s1.multipass - s0.multipass, bufs - 1);
    assert_int_equal(s1.packets - s0.packets, chunks + bufs);
    assert_int_equal(s1.ops - s0.ops, 1);
    assert_true(s1.waits > s0.waits + 1); /* buffers were reused after their fences */
    /* The engine ran every INDIRECT and every packet inside. */
    engine_idle(f);
    assert_int_equal(t_rd64(f->sim, GMC_REG_CNT_DMA_PACKETS_LO), bufs + chunks + bufs);
    assert_memory_equal(b.host + 7, src, sizeof src);
    for (unsigned i = 0; i < 7; i++) assert_int_equal(b.host[i], 0);
}

static void test_multipass_64(void **state)
{
    multipass_case(*state, 1);
}

static void test_multipass_96(void **state)
{
    multipass_case(*state, 2);
}

/* Queue level, buffers of 4 packets (3 for data + the kept SIGNAL): ops of
 * n = 1..7 packets from a fresh buffer take ceil(n / 3) buffers; and ops
 * that start in a partly used buffer. */
static void test_queue_boundaries(void **state)
{
    struct fx *f = *state; /* cfg_buf128, max_chunk 4 KiB */
    static uint8_t want[8 * GMC_PAGE_SIZE], got[8 * GMC_PAGE_SIZE];
    for (unsigned n = 1; n <= 7; n++) {
        const struct gmc_paging_stats s0 = stats(f);
        const uint32_t pat = 0x01010101u * n;
        struct gmc_paging_args a = a_fill(V_B, n * GMC_PAGE_SIZE - 1, pat);
        queue(f, &a);
        idle(f);
        const struct gmc_paging_stats s1 = stats(f);
        const unsigned bufs = (n + 2) / 3;
        assert_int_equal(s1.buffers - s0.buffers, bufs);
        assert_int_equal(s1.multipass - s0.multipass, bufs - 1);
        assert_int_equal(s1.packets - s0.packets, n + bufs);
        vram_read(f, V_B, got, n * GMC_PAGE_SIZE);
        memset(want, (int)(pat & 0xFF), n * GMC_PAGE_SIZE - 1);
        assert_memory_equal(got, want, n * GMC_PAGE_SIZE - 1);
    }
    /* FLUSH_TLB (2 packets with its SIGNAL) leaves one data packet of room:
     * a FILL of 2 packets continues in a second buffer... */
    struct gmc_stats_pair {
        struct gmc_paging_stats a, b;
    } s;
    s.a = stats(f);
    struct gmc_paging_args fl = a_op(GMC_PAGING_FLUSH_TLB);
    queue(f, &fl);
    struct gmc_paging_args a = a_fill(V_B, 2 * GMC_PAGE_SIZE, 0x5A5A5A5Au);
    queue(f, &a);
    idle(f);
    s.b = stats(f);
    assert_int_equal(s.b.buffers - s.a.buffers, 2);
    assert_int_equal(s.b.multipass - s.a.multipass, 1);
    assert_int_equal(s.b.packets - s.a.packets, 2 + 2 + 2);
    /* ...a FILL of 1 fills it exactly, and the next op starts a new buffer
     * without a continuation. */
    s.a = stats(f);
    queue(f, &fl);
    a = a_fill(V_B, GMC_PAGE_SIZE, 0x6B6B6B6Bu);
    queue(f, &a);
    queue(f, &fl);
    idle(f);
    s.b = stats(f);
    assert_int_equal(s.b.buffers - s.a.buffers, 2);
    assert_int_equal(s.b.multipass - s.a.multipass, 0);
    assert_int_equal(s.b.packets - s.a.packets, 6);
    vram_read(f, V_B, got, 2 * GMC_PAGE_SIZE);
    for (unsigned i = 0; i < GMC_PAGE_SIZE; i++) assert_int_equal(got[i], 0x6B);
    for (unsigned i = GMC_PAGE_SIZE; i < 2 * GMC_PAGE_SIZE; i++) assert_int_equal(got[i], 0x5A);
}

/* Builder level: a buffer of k = 4 packets, ops needing k-1 .. 2k+1
 * packets, from an empty buffer and from one with a single free packet;
 * the packets concatenated are exactly the op cut at max_chunk. */
static void test_builder_boundaries(void **state)
{
    (void)state;
    enum { K = 4 };
    const struct gmc_paging_target t = {8u << 20, 0x80000000u, 4096, GMC_PAGE_SIZE, 0x100000000ull, 0x100000040ull, 0};
    uint8_t mem[K * 32];
    const unsigned ns[] = {K - 1, K, K + 1, 2 * K - 1, 2 * K, 2 * K + 1};
    for (unsigned pre = 0; pre < 2; pre++)
        for (unsigned c = 0; c < sizeof ns / sizeof ns[0]; c++) {
            const unsigned n = ns[c];
            struct gmc_paging_args a = a_fill(0x10000, (uint64_t)n * GMC_PAGE_SIZE - 3, 0xA1B2C3D4u);
            unsigned got = 0, calls = 0;
            int rc;
            do {
                struct gmc_pbuf buf = {mem, 0x200000000ull, sizeof mem, 0};
                memset(mem, 0xEE, sizeof mem);
                if (pre && calls == 0)
                    buf.used = (K - 1) * 32;
                const uint32_t start = buf.used;
                const uint64_t mp0 = a.multipass_offset;
                rc = gmc_build_paging_buffer(&t, &buf, &a);
                calls++;
                const unsigned made = (buf.used - start) / 32;
                if (rc == GMC_E_BUFFER_FULL) {
                    assert_int_equal(buf.used, sizeof mem);
                    assert_int_equal(a.multipass_offset, mp0 + (uint64_t)made * GMC_PAGE_SIZE);
                } else {
                    assert_int_equal(rc, GMC_OK);
                    assert_int_equal(a.multipass_offset, 0);
                }
                for (unsigned i = 0; i < made; i++, got++) {
                    const struct gmc_pkt p = gmc_pkt_load(mem + start + 32 * i);
                    const uint64_t len = got + 1 == n ? GMC_PAGE_SIZE - 3 : GMC_PAGE_SIZE;
                    assert_int_equal(p.w[0], GMC_DMA_OP_FILL | len << 32);
                    assert_int_equal(p.w[1], 0);
                    assert_int_equal(p.w[2], 0x10000 + (uint64_t)got * GMC_PAGE_SIZE);
                    assert_int_equal(p.w[3], 0xA1B2C3D4u);
                }
                assert_true(calls < 10);
            } while (rc == GMC_E_BUFFER_FULL);
            assert_int_equal(got, n);
            const unsigned first = pre ? 1 : K;
            const unsigned want_calls = n <= first ? 1 : 1 + (n - first + K - 1) / K;
            assert_int_equal(calls, want_calls);
        }

    /* A full buffer: BUFFER_FULL at once, nothing written, progress kept. */
    struct gmc_pbuf full = {mem, 0, sizeof mem, sizeof mem};
    struct gmc_paging_args a = a_fill(0x10000, 3 * GMC_PAGE_SIZE, 1);
    assert_int_equal(gmc_build_paging_buffer(&t, &full, &a), GMC_E_BUFFER_FULL);
    assert_int_equal(a.multipass_offset, 0);
    assert_int_equal(full.used, sizeof mem);
    struct gmc_paging_args one = a_op(GMC_PAGING_FLUSH_TLB);
    assert_int_equal(gmc_build_paging_buffer(&t, &full, &one), GMC_E_BUFFER_FULL);
    assert_int_equal(one.multipass_offset, 0);

    /* MAP: max_chunk 16 = two PTEs per packet; W3 walks the MDL. */
    struct gmc_paging_target t16 = t;
    t16.max_chunk = 16;
    struct gmc_sysbuf fake = {NULL, 0x300000000ull, 16 * GMC_PAGE_SIZE, 0x300100000ull, 16, 0};
    struct gmc_pbuf buf = {mem, 0, sizeof mem, 0};
    struct gmc_paging_args m = a_map(0x80000000u + 10 * GMC_PAGE_SIZE, 5, &fake, 4, 1, 1, 0);
    assert_int_equal(gmc_build_paging_buffer(&t16, &buf, &m), GMC_OK);
    assert_int_equal(buf.used, 3 * 32);
    for (unsigned i = 0; i < 3; i++) {
        const struct gmc_pkt p = gmc_pkt_load(mem + 32 * i);
        assert_int_equal(p.w[0], GMC_DMA_OP_MAP_APERTURE | (uint64_t)(i < 2 ? 2 : 1) << 32);
        assert_int_equal(p.w[1], 0x300100000ull);
        assert_int_equal(p.w[2], 0x80000000u + (10 + 2 * i) * GMC_PAGE_SIZE);
        assert_int_equal(p.w[3], (4 + 2 * i) | GMC_PKT_MAP_W3_SNOOPED_MASK | GMC_PKT_MAP_W3_READABLE_MASK);
    }
    /* TRANSFER, MDL -> VRAM: TransferOffset on both sides, MdlOffset in pages. */
    buf.used = 0;
    struct gmc_paging_args x = a_xfer(mdl(&fake), seg(SEG_VRAM, 0x20000), 2 * GMC_PAGE_SIZE, 3 * GMC_PAGE_SIZE + 100, 2);
    assert_int_equal(gmc_build_paging_buffer(&t, &buf, &x), GMC_OK);
    assert_int_equal(buf.used, 2 * 32);
    for (unsigned i = 0; i < 2; i++) {
        const struct gmc_pkt p = gmc_pkt_load(mem + 32 * i);
        assert_int_equal(p.w[0], GMC_DMA_OP_TRANSFER | (uint64_t)GMC_PKT_FLAG_SRC_MDL_MASK << 8 | (uint64_t)GMC_PAGE_SIZE << 32);
        assert_int_equal(p.w[1], 0x300100000ull);
        assert_int_equal(p.w[2], 0x20000 + 3 * GMC_PAGE_SIZE + 100 + i * GMC_PAGE_SIZE);
        assert_int_equal(p.w[3], (uint64_t)(2 + 3 + i) | (uint64_t)100 << GMC_PKT_MDL_W3_SRC_OFFSET_LSB);
    }
    /* NOTIFY and SIGNAL: their words and addresses. */
    buf.used = 0;
    struct gmc_paging_target tn = t;
    tn.notify_seq = 21;
    struct gmc_paging_args nt = a_notify(0xC00C1Eull, 1);
    assert_int_equal(gmc_build_paging_buffer(&tn, &buf, &nt), GMC_OK);
    struct gmc_paging_args sg = a_op(GMC_PAGING_SIGNAL);
    sg.u.signal.value = 0x123456789ull;
    sg.u.signal.irq = 1;
    assert_int_equal(gmc_build_paging_buffer(&tn, &buf, &sg), GMC_OK);
    struct gmc_pkt p = gmc_pkt_load(mem);
    assert_int_equal(p.w[0], GMC_DMA_OP_WRITE_PHYSICAL | 8ull << 32);
    assert_int_equal(p.w[2], 0x100000040ull);
    assert_int_equal(p.w[3], 21u << 1 | 1u);
    p = gmc_pkt_load(mem + 32);
    assert_int_equal(p.w[0], GMC_DMA_OP_FENCE | (uint64_t)(GMC_PKT_FLAG_WRITE_MEM_MASK | GMC_PKT_FLAG_IRQ_MASK) << 8);
    assert_int_equal(p.w[2], 0x100000000ull);
    assert_int_equal(p.w[3], 0x123456789ull);
}

/* ----------------------------------------------------------------- NOTIFY */

struct notes {
    struct fx *f;
    unsigned n;
    uint64_t cookie[400];
    int resident[400];
    uint64_t completed[400];
    int reenter;
};

static void on_notify(void *user, uint64_t cookie, int resident)
{
    struct notes *no = user;
    assert_true(no->n < 400);
    no->cookie[no->n] = cookie;
    no->resident[no->n] = resident;
    no->completed[no->n] = gmc_paging_completed(no->f->pg);
    no->n++;
    struct gmc_paging_args a = a_op(GMC_PAGING_FLUSH_TLB);
    no->reenter = gmc_paging_queue(no->f->pg, &a, NULL);
}

static void test_notify(void **state)
{
    struct fx *f = *state;
    static struct notes no;
    memset(&no, 0, sizeof no);
    no.f = f;
    gmc_paging_set_notify(f->pg, on_notify, &no);
    struct gmc_paging_args fill = a_fill(V_B, 8 * GMC_PAGE_SIZE, 0x01020304u);
    queue(f, &fill);
    struct gmc_paging_args n1 = a_notify(0xA1, 1), n2 = a_notify(0xB2, 0), n3 = a_notify(0xC3, 1);
    const uint64_t f1 = queue(f, &n1);
    queue(f, &fill);
    const uint64_t f2 = queue(f, &n2);
    const uint64_t f3 = queue(f, &n3);
    assert_true(f1 < f2 && f2 < f3);
    assert_int_equal(no.n, 0); /* nothing before completion */
    assert_int_equal(gmc_paging_wait(f->pg, f2, WAIT), GMC_OK);
    assert_int_equal(no.n, 2);
    assert_int_equal(no.cookie[0], 0xA1);
    assert_int_equal(no.resident[0], 1);
    assert_true(no.completed[0] >= f1);
    assert_int_equal(no.cookie[1], 0xB2);
    assert_int_equal(no.resident[1], 0);
    assert_true(no.completed[1] >= f2);
    assert_int_equal(no.reenter, GMC_E_BUSY);
    idle(f);
    assert_int_equal(no.n, 3);
    assert_int_equal(no.cookie[2], 0xC3);
    idle(f);
    assert_int_equal(gmc_paging_wait(f->pg, f1, WAIT), GMC_OK);
    assert_int_equal(no.n, 3); /* once each */

    /* More notifications than slots (256): the queue waits for the oldest;
     * all arrive, in order, once. */
    no.n = 0;
    for (unsigned i = 0; i < 300; i++) {
        struct gmc_paging_args a = a_notify(1000 + i, (int)(i & 1));
        queue(f, &a);
    }
    assert_true(no.n >= 300 - 256);
    idle(f);
    assert_int_equal(no.n, 300);
    for (unsigned i = 0; i < 300; i++) {
        assert_int_equal(no.cookie[i], 1000 + i);
        assert_int_equal(no.resident[i], (int)(i & 1));
    }
    assert_int_equal(stats(f).notifies, 303);
}

/* ------------------------------------------------------------ fence waits */

static void test_fence_wait(void **state)
{
    struct fx *f = *state; /* default (IRQ) or cfg_poll (prestate) */
    const int irq = f->cfg.use_irq;
    const uint32_t mask = t_rd(f->sim, GMC_REG_IRQ_MASK);
    assert_int_equal(mask & (GMC_IRQ_DMA_FENCE_MASK | GMC_IRQ_DMA_FAULT_MASK),
                     irq ? GMC_IRQ_DMA_FENCE_MASK | GMC_IRQ_DMA_FAULT_MASK : 0);
    assert_int_equal(gmc_paging_completed(f->pg), 0);
    assert_int_equal(gmc_paging_wait(f->pg, 0, 1), GMC_OK);
    assert_int_equal(gmc_paging_wait(f->pg, 1, WAIT), GMC_E_INVALID_ARG); /* never issued */

    struct gmc_paging_args a = a_fill(V_B, 256 * 1024, 0x77777777u);
    const uint64_t fence = queue(f, &a);
    assert_int_equal(fence, 1);
    assert_int_equal(gmc_paging_completed(f->pg), 0); /* not submitted yet */
    /* Too short a wait: TIMEOUT, and the work goes on. */
    const struct gmc_paging_stats s0 = stats(f);
    assert_int_equal(gmc_paging_wait(f->pg, fence, 500), GMC_E_TIMEOUT);
    assert_int_equal(stats(f).timeouts - s0.timeouts, 1);
    const uint64_t c0 = gmc_sim_cycles(f->sim);
    assert_int_equal(gmc_paging_wait(f->pg, fence, WAIT), GMC_OK);
    const uint64_t took = gmc_sim_cycles(f->sim) - c0;
    assert_int_equal(gmc_paging_completed(f->pg), fence);
    /* The register follows once the memory write's response is in (the
     * host latency, 100 cycles): polling the page sees the fence first. */
    if (!irq)
        assert_int_equal(gmc_sim_step(f->sim, 200), GMC_SIM_OK);
    assert_int_equal(t_rd64(f->sim, GMC_REG_DMA_FENCE_LO), fence);
    /* 256 KiB at one 8-byte word per cycle (the full engine; the compact
     * one takes 11 cycles a word, t_dma_fill_cycles_per_word): 32768 word
     * times at least, and not much more. */
    const uint64_t cpw = t_dma_fill_cycles_per_word(f->sim);
    assert_true(took >= 30000 * cpw && took < 40000 * cpw);
    const struct gmc_paging_stats s1 = stats(f);
    if (irq) {
        assert_true(s1.irq_waits > s0.irq_waits);
        assert_int_equal(gmc_sim_irq(f->sim), 0); /* acknowledged */
    } else {
        assert_int_equal(s1.irq_waits, 0);
        assert_int_equal(t_rd(f->sim, GMC_REG_IRQ_STATUS) & GMC_IRQ_DMA_FENCE_MASK, 0); /* no IRQ asked for */
    }
    uint8_t got[64];
    vram_read(f, V_B + 256 * 1024 - 64, got, 64);
    for (unsigned i = 0; i < 64; i++) assert_int_equal(got[i], 0x77);

    /* Waiting for a completed fence does not submit the buffer being
     * filled; waiting for one of its fences does. */
    struct gmc_paging_args fl = a_op(GMC_PAGING_FLUSH_TLB);
    const uint64_t f2 = queue(f, &fl);
    const uint64_t bufs = stats(f).buffers;
    assert_int_equal(gmc_paging_wait(f->pg, fence, WAIT), GMC_OK);
    assert_int_equal(stats(f).buffers, bufs);
    assert_int_equal(gmc_paging_completed(f->pg), fence);
    assert_int_equal(gmc_paging_wait(f->pg, f2, WAIT), GMC_OK);
    assert_int_equal(stats(f).buffers, bufs + 1);
    assert_int_equal(gmc_paging_completed(f->pg), f2);
}

/* --------------------------------------------------- hang, timeout, reset */

static void test_hang_reset(void **state)
{
    struct fx *f = *state; /* default (IRQ) or cfg_poll */
    static struct notes no;
    memset(&no, 0, sizeof no);
    no.f = f;
    gmc_paging_set_notify(f->pg, on_notify, &no);
    struct gmc_sysbuf b;
    sysbuf_new(f, 8 * GMC_PAGE_SIZE, &b);
    static uint8_t data[8 * GMC_PAGE_SIZE], got[8 * GMC_PAGE_SIZE];
    t_fill_random(data, sizeof data, &f->seed);
    memcpy(b.host, data, sizeof data);

    /* A read of MDL page 3 never gets an answer. */
    assert_int_equal(gmc_sim_host_inject(f->sim, b.bus + 3 * GMC_PAGE_SIZE, GMC_PAGE_SIZE, GMC_SIM_INJECT_HANG), GMC_SIM_OK);
    struct gmc_paging_args n1 = a_notify(1, 1), n2 = a_notify(2, 1);
    const uint64_t fn1 = queue(f, &n1);
    struct gmc_paging_args x = a_xfer(mdl(&b), seg(SEG_VRAM, V_B), sizeof data, 0, 0);
    const uint64_t fx_ = queue(f, &x);
    queue(f, &n2);
    assert_int_equal(gmc_paging_wait(f->pg, fx_, 20000), GMC_E_TIMEOUT);
    assert_int_equal(stats(f).timeouts, 1);
    assert_int_equal(gmc_paging_completed(f->pg), fn1);
    struct gmc_paging_fault flt;
    assert_int_equal(gmc_paging_fault(f->pg, &flt), GMC_OK);
    assert_int_equal(flt.code, GMC_DMA_FAULT_NONE); /* hung, not faulted */

    uint64_t done = 99;
    assert_int_equal(gmc_paging_reset(f->pg, &done), GMC_OK);
    assert_int_equal(done, fn1);
    assert_int_equal(stats(f).resets, 1);
    /* The first NOTIFY ran before the hang; the second never ran. */
    assert_int_equal(no.n, 1);
    assert_int_equal(no.cookie[0], 1);
    assert_int_equal(gmc_paging_completed(f->pg), gmc_paging_last_issued(f->pg));
    assert_int_equal(gmc_paging_wait(f->pg, fx_, 1), GMC_OK);

    /* New work completes (the hung read is still owed) and data is right. */
    gmc_sim_host_inject_clear(f->sim);
    struct gmc_paging_args y = a_xfer(mdl(&b), seg(SEG_VRAM, V_A), sizeof data, 0, 0);
    queue(f, &y);
    struct gmc_paging_args n3 = a_notify(3, 0);
    queue(f, &n3);
    idle(f);
    vram_read(f, V_A, got, sizeof got);
    assert_memory_equal(got, data, sizeof data);
    assert_int_equal(no.n, 2);
    assert_int_equal(no.cookie[1], 3);
    assert_true(gmc_paging_completed(f->pg) > fx_);
    /* Many more, through every buffer of the pool. */
    for (unsigned i = 0; i < 40; i++) {
        struct gmc_paging_args a = a_fill(V_B + i * GMC_PAGE_SIZE, GMC_PAGE_SIZE, 0x01010101u * i);
        queue(f, &a);
    }
    idle(f);
    static uint8_t all[40 * GMC_PAGE_SIZE];
    vram_read(f, V_B, all, sizeof all);
    for (unsigned i = 0; i < 40; i++) assert_int_equal(all[i * GMC_PAGE_SIZE + 123], i);
}

/* ------------------------------------------------------------- bus fault */

static void test_bus_fault(void **state)
{
    struct fx *f = *state; /* default (IRQ) or cfg_poll */
    struct gmc_sysbuf b;
    sysbuf_new(f, 8 * GMC_PAGE_SIZE, &b);
    memset(b.host, 0x3C, 8 * GMC_PAGE_SIZE);
    assert_int_equal(gmc_sim_host_inject(f->sim, b.bus + 2 * GMC_PAGE_SIZE, GMC_PAGE_SIZE, GMC_SIM_INJECT_SLVERR), GMC_SIM_OK);
    struct gmc_paging_args x = a_xfer(mdl(&b), seg(SEG_VRAM, V_B), 8 * GMC_PAGE_SIZE, 0, 0);
    const uint64_t fence = queue(f, &x);
    assert_int_equal(gmc_paging_wait(f->pg, fence, WAIT), GMC_E_FAULT);
    assert_int_equal(stats(f).faults, 1);
    struct gmc_paging_fault flt;
    assert_int_equal(gmc_paging_fault(f->pg, &flt), GMC_OK);
    assert_int_equal(flt.code, GMC_DMA_FAULT_BUS);
    assert_int_equal(flt.indirect, 1);
    assert_int_equal(flt.address, b.bus + 2 * GMC_PAGE_SIZE);
    assert_true(flt.packet != 0 && flt.packet % 32 == 0);
    /* The faulting packet is the TRANSFER, the first in its buffer. */
    assert_int_equal(gmc_paging_wait(f->pg, fence, WAIT), GMC_E_FAULT);
    uint8_t got[2 * GMC_PAGE_SIZE];
    vram_read(f, V_B, got, sizeof got);
    for (unsigned i = 0; i < sizeof got; i++) assert_int_equal(got[i], 0x3C); /* before the bad page */

    uint64_t done = 99;
    assert_int_equal(gmc_paging_reset(f->pg, &done), GMC_OK);
    assert_int_equal(done, 0);
    assert_int_equal(t_rd(f->sim, GMC_REG_DMA_STATUS) & GMC_DMA_STATUS_STATE_MASK, GMC_DMA_STATE_IDLE);
    assert_int_equal(t_rd(f->sim, GMC_REG_IRQ_STATUS) & GMC_IRQ_DMA_FAULT_MASK, 0);
    assert_int_equal(gmc_paging_fault(f->pg, &flt), GMC_OK); /* kept across the reset */
    assert_int_equal(flt.code, GMC_DMA_FAULT_BUS);
    gmc_sim_host_inject_clear(f->sim);
    memset(b.host, 0x4D, 8 * GMC_PAGE_SIZE);
    run(f, &x);
    uint8_t all[8 * GMC_PAGE_SIZE];
    vram_read(f, V_B, all, sizeof all);
    for (unsigned i = 0; i < sizeof all; i++) assert_int_equal(all[i], 0x4D);
}

/* ------------------------------------------------ controller reset (power) */

static void test_restart(void **state)
{
    struct fx *f = *state;
    uint64_t base = 1, size = 1;
    assert_int_equal(gmc_paging_pt_range(f->pg, &base, &size), GMC_OK);
    assert_int_equal(base, f->pt_base);
    assert_int_equal(size, (f->ai.aperture_pages * 8 + GMC_PAGE_SIZE - 1) / GMC_PAGE_SIZE * GMC_PAGE_SIZE);
    assert_int_equal(gmc_paging_pt_range(f->pg, NULL, &size), GMC_E_NULL_POINTER);
    assert_int_equal(size, 0);

    struct gmc_paging_args a = a_fill(V_B, GMC_PAGE_SIZE, 0x11111111u);
    run(f, &a);
    const uint32_t ring_lo = t_rd(f->sim, GMC_REG_DMA_RING_BASE_LO), dummy = t_rd(f->sim, GMC_REG_DUMMY_PAGE_LO);
    /* Queued, not submitted, when the controller is reset. */
    a = a_fill(V_B, GMC_PAGE_SIZE, 0x22222222u);
    const uint64_t fence = queue(f, &a);
    assert_int_equal(gmc_sim_reset(f->sim, 8), GMC_SIM_OK);
    assert_int_equal(t_rd(f->sim, GMC_REG_DMA_CTRL), 0);
    assert_int_equal(gmc_paging_restart(f->pg), GMC_OK);
    assert_int_equal(t_rd(f->sim, GMC_REG_DMA_RING_BASE_LO), ring_lo);
    assert_int_equal(t_rd(f->sim, GMC_REG_DUMMY_PAGE_LO), dummy);
    assert_int_equal(t_rd(f->sim, GMC_REG_DMA_CTRL), GMC_DMA_CTRL_ENABLE_MASK);
    assert_int_equal(t_rd(f->sim, GMC_REG_IRQ_MASK) & GMC_IRQ_DMA_FENCE_MASK, GMC_IRQ_DMA_FENCE_MASK);
    assert_true(gmc_paging_completed(f->pg) < fence);
    assert_int_equal(gmc_paging_wait(f->pg, fence, WAIT), GMC_OK);
    uint8_t got[GMC_PAGE_SIZE];
    vram_read(f, V_B, got, GMC_PAGE_SIZE);
    for (unsigned i = 0; i < GMC_PAGE_SIZE; i++) assert_int_equal(got[i], 0x22);
    /* And the ring keeps working across its wrap (127 slots). */
    for (unsigned i = 0; i < 150; i++) {
        struct gmc_paging_args fl = a_op(GMC_PAGING_FLUSH_TLB);
        queue(f, &fl);
        assert_int_equal(gmc_paging_flush(f->pg), GMC_OK);
    }
    idle(f);
}

/* ------------------------------------------------------ invalid arguments */

static void expect_invalid(const struct gmc_paging_target *t, struct gmc_paging_args a, const char *what)
{
    static uint8_t mem[256], snap[256];
    memset(mem, 0xA5, sizeof mem);
    memcpy(snap, mem, sizeof mem);
    struct gmc_pbuf buf = {mem, 0, sizeof mem, 64};
    const uint64_t mp = a.multipass_offset;
    int rc = gmc_build_paging_buffer(t, &buf, &a);
    if (rc != GMC_E_INVALID_ARG)
        fail_msg("%s: %s, expected GMC_E_INVALID_ARG", what, gmc_status_name(rc));
    assert_int_equal(buf.used, 64);
    assert_int_equal(a.multipass_offset, mp);
    assert_memory_equal(mem, snap, sizeof mem);
    assert_int_equal(gmc_paging_args_check(t, &a), GMC_E_INVALID_ARG);
}

static void test_invalid_args(void **state)
{
    struct fx *f = *state;
    const struct gmc_paging_target t = {8u << 20, 0x80000000u, 4096, 65536, 0x100000000ull, 0x100000040ull, 5};
    const uint64_t VR = 8u << 20, AP = 0x80000000u, APEND = AP + 4096ull * GMC_PAGE_SIZE;
    struct gmc_sysbuf m = {NULL, 0x300000000ull, 4 * GMC_PAGE_SIZE, 0x300100000ull, 4, 0};
    struct gmc_sysbuf huge = {NULL, 0x300000000ull, (1ull << 21) * GMC_PAGE_SIZE, 0x300100000ull, 1u << 21, 0};
    struct gmc_sysbuf odd = m;
    odd.mdl_bus += 4;
    struct gmc_paging_args a;

    a = a_xfer(seg(1, 0), seg(1, V_B), 0, 0, 0);
    expect_invalid(&t, a, "transfer size 0");
    a = a_xfer(seg(1, 0), seg(1, V_B), 16, 0, 0);
    a.u.transfer.flags = 16;
    expect_invalid(&t, a, "transfer unknown flag");
    a = a_xfer(mdl(&m), seg(1, 0), GMC_PAGE_SIZE, 0, 0);
    a.u.transfer.flags |= GMC_PAGING_TRANSFER_SWIZZLE | GMC_PAGING_TRANSFER_UNSWIZZLE;
    expect_invalid(&t, a, "transfer Swizzle with Unswizzle");
    a = a_xfer(mdl(&m), seg(1, 0), GMC_PAGE_SIZE - 256, 0, 0);
    a.u.transfer.flags |= GMC_PAGING_TRANSFER_SWIZZLE;
    expect_invalid(&t, a, "transfer Swizzle of part of a page");
    a = a_xfer(seg(1, 0), mdl(&m), GMC_PAGE_SIZE, 256, 0);
    a.u.transfer.flags |= GMC_PAGING_TRANSFER_UNSWIZZLE;
    expect_invalid(&t, a, "transfer Unswizzle from inside a page");
    a = a_xfer(mdl(&m), seg(1, 0), GMC_PAGE_SIZE, 0, 0);
    a.u.transfer.flags |= GMC_PAGING_TRANSFER_SWIZZLE;
    assert_int_equal(gmc_paging_args_check(&t, &a), GMC_OK);
    a = a_xfer(seg(1, VR - 8), seg(1, V_B), 16, 0, 0);
    expect_invalid(&t, a, "transfer source past VRAM");
    a = a_xfer(seg(1, 0), seg(1, VR - 16), 16, 8, 0);
    expect_invalid(&t, a, "transfer offset past VRAM");
    a = a_xfer(seg(1, 1ull << 32), seg(1, V_B), 16, 0, 0);
    expect_invalid(&t, a, "transfer 33-bit GPU address");
    a = a_xfer(seg(3, APEND - 8), seg(1, V_B), 16, 0, 0);
    expect_invalid(&t, a, "transfer past the aperture");
    a = a_xfer(seg(3, AP - 8), seg(1, V_B), 16, 0, 0);
    expect_invalid(&t, a, "transfer across the aperture base");
    a = a_xfer(seg(1, 0), seg(1, V_B), 16, UINT64_MAX - 8, 0);
    expect_invalid(&t, a, "transfer offset + size wraps");
    a = a_xfer(mdl(NULL), seg(1, V_B), 16, 0, 0);
    expect_invalid(&t, a, "transfer NULL MDL");
    a = a_xfer(mdl(&m), seg(1, V_B), 4 * GMC_PAGE_SIZE + 1, 0, 0);
    expect_invalid(&t, a, "transfer past the MDL");
    a = a_xfer(mdl(&m), seg(1, V_B), GMC_PAGE_SIZE, 3 * GMC_PAGE_SIZE + 1, 0);
    expect_invalid(&t, a, "transfer offset past the MDL");
    a = a_xfer(seg(1, 0), mdl(&m), GMC_PAGE_SIZE + 1, 0, 3);
    expect_invalid(&t, a, "transfer MdlOffset past the MDL");
    a = a_xfer(seg(1, 0), mdl(&m), 1, 0, 5);
    expect_invalid(&t, a, "transfer MdlOffset beyond npages");
    a = a_xfer(seg(1, 0), mdl(&odd), 16, 0, 0);
    expect_invalid(&t, a, "transfer misaligned MDL");
    a = a_xfer(mdl(&huge), seg(1, 0), 16, 0, 1u << 20);
    expect_invalid(&t, a, "transfer MDL entry beyond 20 bits");
    a = a_xfer(mdl(&huge), seg(1, 0), 2 * GMC_PAGE_SIZE, ((1ull << 20) - 1) * GMC_PAGE_SIZE, 0);
    expect_invalid(&t, a, "transfer MDL range ending beyond 20 bits");
    a = a_xfer(seg(1, 0), seg(1, V_B), 16, 0, 0);
    a.multipass_offset = 16;
    expect_invalid(&t, a, "multipass offset at the end");

    a = a_fill(0, 0, 1);
    expect_invalid(&t, a, "fill size 0");
    a = a_fill(VR - 4, 8, 1);
    expect_invalid(&t, a, "fill past VRAM");
    a = a_fill(AP, 8, 1);
    expect_invalid(&t, a, "fill in the aperture");
    a = a_op(GMC_PAGING_DISCARD_CONTENT);
    a.u.fill.gpu_address = AP;
    a.u.fill.size = GMC_PAGE_SIZE;
    a.u.fill.poison = 1;
    expect_invalid(&t, a, "discard in the aperture");

    a = a_phys(GMC_PAGING_WRITE_PHYSICAL, V_B, 1, 0, 0);
    expect_invalid(&t, a, "physical size 0");
    a = a_phys(GMC_PAGING_WRITE_PHYSICAL, V_B, 1, 9, 0);
    expect_invalid(&t, a, "physical size 9");
    a = a_phys(GMC_PAGING_READ_PHYSICAL, V_B + 5, 1, 4, 0);
    expect_invalid(&t, a, "physical across 8 bytes");
    a = a_phys(GMC_PAGING_READ_PHYSICAL, VR, 1, 4, 0);
    expect_invalid(&t, a, "physical GPU address outside");
    a = a_phys(GMC_PAGING_WRITE_PHYSICAL, 1ull << 48, 0, 8, 0);
    expect_invalid(&t, a, "physical bus address beyond 48 bits");

    a = a_map(AP + 8, 1, &m, 0, 0, 1, 1);
    expect_invalid(&t, a, "map unaligned");
    a = a_map(AP, 0, &m, 0, 0, 1, 1);
    expect_invalid(&t, a, "map 0 pages");
    a = a_map(APEND - GMC_PAGE_SIZE, 2, &m, 0, 0, 1, 1);
    expect_invalid(&t, a, "map past the aperture");
    a = a_map(0x10000, 1, &m, 0, 0, 1, 1);
    expect_invalid(&t, a, "map in VRAM");
    a = a_map(AP, 2, &m, 3, 0, 1, 1);
    expect_invalid(&t, a, "map past the MDL");
    a = a_map(AP, 1, NULL, 0, 0, 1, 1);
    a.op = GMC_PAGING_MAP_APERTURE_SEGMENT;
    expect_invalid(&t, a, "map without MDL");
    a = a_map(AP + 4, 1, NULL, 0, 0, 0, 0);
    expect_invalid(&t, a, "unmap unaligned");
    a = a_map(APEND, 1, NULL, 0, 0, 0, 0);
    expect_invalid(&t, a, "unmap past the aperture");
    a = a_op(0);
    expect_invalid(&t, a, "op 0");
    a = a_op((enum gmc_paging_op)99);
    expect_invalid(&t, a, "op 99");
    a = a_op(GMC_PAGING_FLUSH_TLB);
    a.multipass_offset = 1;
    expect_invalid(&t, a, "single-packet op with a multipass offset");
    struct gmc_paging_target tb = t;
    tb.notify_bus = 0x100000044ull;
    a = a_notify(1, 1);
    expect_invalid(&tb, a, "notify slot misaligned");
    tb = t;
    tb.fence_bus = 1ull << 48;
    a = a_op(GMC_PAGING_SIGNAL);
    expect_invalid(&tb, a, "fence beyond 48 bits");
    tb = t;
    tb.max_chunk = 0;
    a = a_fill(0, 8, 1);
    expect_invalid(&tb, a, "max_chunk 0");

    /* The buffer itself. */
    uint8_t mem[64];
    struct gmc_pbuf small = {mem, 0, 16, 0};
    a = a_op(GMC_PAGING_FLUSH_TLB);
    assert_int_equal(gmc_build_paging_buffer(&t, &small, &a), GMC_E_INVALID_ARG);
    struct gmc_pbuf mis = {mem, 0, 64, 8};
    assert_int_equal(gmc_build_paging_buffer(&t, &mis, &a), GMC_E_INVALID_ARG);
    struct gmc_pbuf over = {mem, 0, 64, 96};
    assert_int_equal(gmc_build_paging_buffer(&t, &over, &a), GMC_E_INVALID_ARG);
    struct gmc_pbuf nohost = {NULL, 0, 64, 0};
    assert_int_equal(gmc_build_paging_buffer(&t, &nohost, &a), GMC_E_NULL_POINTER);
    assert_int_equal(gmc_build_paging_buffer(NULL, &small, &a), GMC_E_NULL_POINTER);
    assert_int_equal(gmc_build_paging_buffer(&t, &small, NULL), GMC_E_NULL_POINTER);

    /* The queue: nothing queued, no fence issued, no statistics moved. */
    const struct gmc_paging_stats s0 = stats(f);
    uint64_t fence = 7;
    a = a_op(GMC_PAGING_SIGNAL);
    assert_int_equal(gmc_paging_queue(f->pg, &a, &fence), GMC_E_INVALID_ARG);
    assert_int_equal(fence, 0);
    a = a_fill(0, 64, 1);
    a.multipass_offset = 8;
    assert_int_equal(gmc_paging_queue(f->pg, &a, &fence), GMC_E_INVALID_ARG);
    a = a_fill(VR, 64, 1);
    assert_int_equal(gmc_paging_queue(f->pg, &a, &fence), GMC_E_INVALID_ARG);
    a = a_xfer(mdl(&m), seg(1, 0), 5 * GMC_PAGE_SIZE, 0, 0);
    assert_int_equal(gmc_paging_queue(f->pg, &a, &fence), GMC_E_INVALID_ARG);
    assert_int_equal(gmc_paging_queue(NULL, &a, &fence), GMC_E_NULL_POINTER);
    assert_int_equal(gmc_paging_queue(f->pg, NULL, &fence), GMC_E_NULL_POINTER);
    const struct gmc_paging_stats s1 = stats(f);
    assert_memory_equal(&s0, &s1, offsetof(struct gmc_paging_stats, build_ns));
    assert_int_equal(gmc_paging_last_issued(f->pg), 0);
    assert_int_equal(gmc_paging_wait(f->pg, 1, WAIT), GMC_E_INVALID_ARG);
    assert_int_equal(t_rd(f->sim, GMC_REG_DMA_RING_TAIL), 0);

    /* Configurations and adapters the queue refuses. */
    struct gmc_paging *pg = (struct gmc_paging *)&pg;
    struct gmc_paging_config c;
    const struct {
        unsigned field;
        uint64_t value;
    } bad[] = {{0, 48}, {0, 65}, {1, 1}, {1, 127}, {2, 11}, {2, 21}, {3, 1000}, {3, 0}, {4, 100}, {5, 12345}, {6, 2}, {7, 0}};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gmc_paging_config_default(&c);
        switch (bad[i].field) {
        case 0: c.buffer_bytes = (uint32_t)bad[i].value; break;
        case 1: c.buffers = (uint32_t)bad[i].value; break;
        case 2: c.ring_log2 = (uint32_t)bad[i].value; break;
        case 3: c.max_chunk = bad[i].value; break;
        case 4: c.pool_chunk = bad[i].value; break;
        case 5: c.bus_base = bad[i].value; break;
        case 6: c.use_irq = (int)bad[i].value; break;
        default: c.queue_timeout = bad[i].value; break;
        }
        pg = (struct gmc_paging *)&pg;
        if (gmc_paging_init(&f->kmd, &f->ai, &c, &pg) != GMC_E_INVALID_ARG)
            fail_msg("config case %u accepted", i);
        assert_null(pg);
    }
    struct gmc_adapter_info nodma = f->ai;
    nodma.caps &= ~(uint32_t)GMC_CAPS_DMA_MASK;
    assert_int_equal(gmc_paging_init(&f->kmd, &nodma, NULL, &pg), GMC_E_UNSUPPORTED);
    assert_null(pg);
    assert_int_equal(gmc_paging_init(NULL, &f->ai, NULL, &pg), GMC_E_NULL_POINTER);
}

/* --------------------------------------------------------------- figures */

/* Host cost of building and submitting (build_ns), and packets per op. */
static void test_figures(void **state)
{
    struct fx *f = *state;
    struct gmc_sysbuf b;
    sysbuf_new(f, 16 * 1024, &b);
    enum { N = 200 };
    const struct gmc_paging_stats s0 = stats(f);
    for (unsigned i = 0; i < N; i++) {
        struct gmc_paging_args a = a_xfer(seg(SEG_VRAM, V_A), mdl(&b), 16 * 1024, 0, 0);
        queue(f, &a);
        if (i % 32 == 31)
            idle(f);
    }
    idle(f);
    const struct gmc_paging_stats s1 = stats(f);
    assert_int_equal(s1.ops - s0.ops, N);
    assert_int_equal(s1.packets - s0.packets, 2 * N); /* one TRANSFER and its SIGNAL */
    print_message("paging: %u TRANSFERs of 16 KiB: %.2f packets/op, %.0f ns/op building+submitting, "
                  "%llu buffers\n",
                  N, (double)(s1.packets - s0.packets) / N, (double)(s1.build_ns - s0.build_ns) / N,
                  (unsigned long long)(s1.buffers - s0.buffers));
    const struct gmc_paging_stats s2 = stats(f);
    for (unsigned i = 0; i < N; i++) {
        struct gmc_paging_args a = a_notify(i, 1);
        queue(f, &a);
    }
    idle(f);
    const struct gmc_paging_stats s3 = stats(f);
    print_message("paging: %u NOTIFYs: %.0f ns/op\n", N, (double)(s3.build_ns - s2.build_ns) / N);
    assert_true(s1.build_ns > s0.build_ns);
}

int main(void)
{
    gmc_paging_config_default(&cfg_poll);
    cfg_poll.use_irq = 0;
    gmc_paging_config_default(&cfg_chunk4k);
    cfg_chunk4k.max_chunk = GMC_PAGE_SIZE;
    gmc_paging_config_default(&cfg_buf64);
    cfg_buf64.buffer_bytes = 64;
    cfg_buf64.buffers = 2;
    cfg_buf64.max_chunk = GMC_PAGE_SIZE;
    cfg_buf96 = cfg_buf64;
    cfg_buf96.buffer_bytes = 96;
    cfg_buf128 = cfg_buf64;
    cfg_buf128.buffer_bytes = 128;
    gmc_paging_config_default(&cfg_small_pool);
    cfg_small_pool.pool_chunk = 64 * 1024;
    cfg_small_pool.buffers = 2;
    cfg_small_pool.buffer_bytes = 4096;

    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_backend_wait, setup, teardown),
        cmocka_unit_test_prestate_setup_teardown(test_sysmem_pool, setup, teardown, &cfg_small_pool),
        cmocka_unit_test_setup_teardown(test_sysmem_wrap, setup, teardown),
        cmocka_unit_test_prestate_setup_teardown(test_transfer_pairs, setup, teardown, &cfg_chunk4k),
        cmocka_unit_test_prestate_setup_teardown(test_fill_discard, setup, teardown, &cfg_chunk4k),
        cmocka_unit_test_setup_teardown(test_physical, setup, teardown),
        cmocka_unit_test_setup_teardown(test_map_unmap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush_tlb, setup, teardown),
        cmocka_unit_test_prestate_setup_teardown(test_multipass_64, setup, teardown, &cfg_buf64),
        cmocka_unit_test_prestate_setup_teardown(test_multipass_96, setup, teardown, &cfg_buf96),
        cmocka_unit_test_prestate_setup_teardown(test_queue_boundaries, setup, teardown, &cfg_buf128),
        cmocka_unit_test(test_builder_boundaries),
        cmocka_unit_test_setup_teardown(test_notify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fence_wait, setup, teardown),
        cmocka_unit_test_prestate_setup_teardown(test_fence_wait, setup, teardown, &cfg_poll),
        cmocka_unit_test_setup_teardown(test_hang_reset, setup, teardown),
        cmocka_unit_test_prestate_setup_teardown(test_hang_reset, setup, teardown, &cfg_poll),
        cmocka_unit_test_setup_teardown(test_bus_fault, setup, teardown),
        cmocka_unit_test_prestate_setup_teardown(test_bus_fault, setup, teardown, &cfg_poll),
        cmocka_unit_test_setup_teardown(test_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_args, setup, teardown),
        cmocka_unit_test_setup_teardown(test_figures, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
