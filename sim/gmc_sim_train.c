/* gmc_sim_train: the training run of the release model's profile-guided
 * build (docs/sim.md, "Profile-guided build").
 *
 * The Makefile builds the Verilated model once with -fprofile-generate,
 * links this program against it, runs it, and compiles the model again
 * with -fprofile-use on the profile it wrote. What it runs decides which
 * paths the compiler lays out as hot, so it drives every part of the
 * controller the way the library's users do, in three phases of similar
 * length:
 *   - CPU traffic: aperture bursts of every length from 1 to 16 beats,
 *     register reads and writes, the DMA engine idle (clock stopped);
 *   - DMA: every TRANSFER pairing (VRAM, MDL, aperture) with odd lengths
 *     and alignments, fills, discards, small packets, map and unmap,
 *     fences with the IRQ;
 *   - both at once: aperture traffic while the engine copies.
 * Every copy is checked, so a model that trains on wrong behaviour fails
 * the build instead of producing a profile. It is not a benchmark and
 * prints nothing on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmc_dma_pkt.h"
#include "gmc_regs.h"
#include "gmc_sim.h"

#define KIB 1024u
#define RING_BUS 0x100000000ull
#define APB GMC_TOP_APERTURE_BASE
#define DATA_BYTES (256u * KIB)
#define NPAGES (DATA_BYTES / GMC_PAGE_SIZE)

static gmc_sim *sim;
static struct gmc_ring ring;

static void fail(const char *what, int st)
{
    fprintf(stderr, "gmc_sim_train: %s: %d (%s)\n", what, st, gmc_sim_status_name(st));
    exit(1);
}

static void check(int st, const char *what)
{
    if (st) fail(what, st);
}

static void run(const struct gmc_pkt *p, unsigned n)
{
    check(gmc_ring_run(&ring, p, n, 20000000ull), "ring run");
}

static void vram_is(uint32_t a, const uint8_t *want, uint32_t n, const char *what)
{
    static uint8_t got[DATA_BYTES];
    check(gmc_sim_vram_peek(sim, a, got, n), "vram peek");
    if (memcmp(got, want, n)) fail(what, -1);
}

/* Aperture bursts of 1..16 beats at varied offsets, and register traffic. */
static void cpu_traffic(uint32_t rounds, uint32_t seed)
{
    uint64_t out[16], in[16];
    for (uint32_t i = 0; i < rounds; i++) {
        const uint32_t beats = 1 + (i + seed) % 16;
        /* Inside the 2 MiB CPU window, clear of what the copies touch. */
        const uint64_t off = ((uint64_t)(i * 2654435761u + seed) & 0x3FF80u) + 0x180000u;
        for (uint32_t k = 0; k < beats; k++) out[k] = (uint64_t)i << 32 | k | (uint64_t)seed << 16;
        check(gmc_sim_aperture_write(sim, off, out, beats * 8), "aperture write");
        check(gmc_sim_aperture_read(sim, off, in, beats * 8), "aperture read");
        if (memcmp(in, out, beats * 8)) fail("aperture read-back", -1);
        uint32_t v = 0;
        check(gmc_sim_reg_write(sim, GMC_REG_SCRATCH, i ^ seed), "register write");
        check(gmc_sim_reg_read(sim, GMC_REG_SCRATCH, &v), "register read");
        if (v != (i ^ seed)) fail("register read-back", -1);
        if (i % 8 == 0) check(gmc_sim_reg_read(sim, GMC_REG_CNT_APERTURE_WR_LO, &v), "counter read");
    }
}

int main(void)
{
    check(gmc_sim_create(NULL, &sim), "create");
    check(gmc_ring_init(&ring, sim, RING_BUS, 16, 2 * DATA_BYTES + 64 * KIB), "ring init");
    uint8_t *host = NULL;
    const uint64_t data = gmc_ring_alloc(&ring, DATA_BYTES, GMC_PAGE_SIZE, &host);
    if (!data) fail("arena", -1);
    static uint8_t orig[DATA_BYTES], inmdl[DATA_BYTES];
    for (uint32_t i = 0; i < DATA_BYTES; i++) host[i] = (uint8_t)(i * 2654435761u >> 11);
    memcpy(orig, host, DATA_BYTES);
    uint64_t pages[NPAGES];
    for (unsigned i = 0; i < NPAGES; i++) pages[i] = data + (uint64_t)((i * 37u) % NPAGES) * GMC_PAGE_SIZE;
    const uint64_t mdl = gmc_ring_mdl(&ring, pages, NPAGES);
    if (!mdl) fail("mdl", -1);
    for (unsigned i = 0; i < NPAGES; i++) memcpy(inmdl + i * GMC_PAGE_SIZE, host + (pages[i] - data), GMC_PAGE_SIZE);
    const struct gmc_side mside = {1, mdl, 0, 0};

    /* Phase 1: the CPU's traffic, the engine idle. */
    cpu_traffic(12000, 1);

    /* Phase 2: the engine. MDL -> VRAM, VRAM -> VRAM, fill, VRAM -> MDL. */
    struct gmc_pkt p = gmc_pkt_transfer(mside, gmc_side_gpu(0), DATA_BYTES);
    run(&p, 1);
    vram_is(0, inmdl, DATA_BYTES, "MDL to VRAM");
    p = gmc_pkt_transfer(gmc_side_gpu(0), gmc_side_gpu(1u << 20), DATA_BYTES);
    run(&p, 1);
    vram_is(1u << 20, inmdl, DATA_BYTES, "VRAM copy");
    /* Odd length, source and destination alignments that differ. */
    p = gmc_pkt_transfer(gmc_side_gpu(3), gmc_side_gpu((2u << 20) + 13), DATA_BYTES - 101);
    run(&p, 1);
    vram_is((2u << 20) + 13, inmdl + 3, DATA_BYTES - 101, "unaligned VRAM copy");
    p = gmc_pkt_fill(3u << 20, DATA_BYTES, 0x5A6B7C8Du);
    run(&p, 1);
    memset(host, 0, DATA_BYTES);
    p = gmc_pkt_transfer(gmc_side_gpu(0), mside, DATA_BYTES);
    run(&p, 1);
    if (memcmp(host, orig, DATA_BYTES)) fail("VRAM to MDL", -1);

    /* The aperture: map the data pages, copy both ways, unmap. */
    struct gmc_pkt map[2] = {gmc_pkt_map_aperture(APB, NPAGES, mdl, 0, 1, 1, 1), gmc_pkt_flush_tlb()};
    run(map, 2);
    memset(host, 0, DATA_BYTES);
    p = gmc_pkt_transfer(gmc_side_gpu(0), gmc_side_gpu(APB), DATA_BYTES);
    run(&p, 1);
    if (memcmp(host, orig, DATA_BYTES)) fail("VRAM to aperture", -1);
    p = gmc_pkt_transfer(gmc_side_gpu(APB + 7), gmc_side_gpu((4u << 20) + 1), DATA_BYTES - 64);
    run(&p, 1);
    vram_is((4u << 20) + 1, inmdl + 7, DATA_BYTES - 64, "aperture to VRAM");

    /* Small packets of both kinds, with fences between them. */
    enum { NSMALL = 256 };
    static struct gmc_pkt small[NSMALL];
    for (unsigned i = 0; i < NSMALL; i++) {
        if (i % 32 == 31) {
            small[i] = gmc_pkt_fence(i, 0, 0, 1);
        } else if (i % 2) {
            struct gmc_side ms = {1, mdl, (96 * i) / GMC_PAGE_SIZE, (96 * i) % GMC_PAGE_SIZE};
            small[i] = gmc_pkt_transfer(ms, gmc_side_gpu((5u << 20) + 96 * i), 96);
        } else {
            small[i] = gmc_pkt_transfer(gmc_side_gpu(96 * i + 5), gmc_side_gpu((5u << 20) + 96 * i), 96);
        }
    }
    run(small, NSMALL);
    struct gmc_pkt tail[3] = {gmc_pkt_discard(3u << 20, 64 * KIB, 0), gmc_pkt_unmap_aperture(APB, NPAGES),
                              gmc_pkt_fence(0xFEED, 0, 0, 1)};
    run(tail, 3);
    check(gmc_sim_reg_write(sim, GMC_REG_IRQ_ACK, 0xFFFFFFFFu), "IRQ ack");

    /* Phase 3: aperture traffic while the engine copies. */
    for (unsigned r = 0; r < 4; r++) {
        p = gmc_pkt_transfer(r % 2 ? mside : gmc_side_gpu(0), gmc_side_gpu((6u << 20) + r * DATA_BYTES / 4),
                             DATA_BYTES / 2);
        check(gmc_ring_put(&ring, &p, 1), "ring put");
        check(gmc_ring_kick(&ring), "doorbell");
        cpu_traffic(1500, 2 + r);
        check(gmc_ring_wait(&ring, 20000000ull, 4096), "ring wait");
    }

    char msg[256];
    if (gmc_sim_protocol_violations(sim, msg, sizeof msg)) {
        fprintf(stderr, "gmc_sim_train: AXI protocol violation: %s\n", msg);
        return 1;
    }
    gmc_ring_fini(&ring);
    gmc_sim_destroy(sim);
    return 0;
}
