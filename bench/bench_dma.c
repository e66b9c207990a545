/* DMA paging engine throughput and latency, in exact model cycles.
 *
 * Prints one flat JSON object:
 *   dma_peak_bytes_per_cycle   the data path's limit (8: 64-bit, one VRAM
 *                              word per cycle per port), from docs/dma.md
 *   dma_copy_vram_fraction     VRAM -> VRAM, 1 MiB
 *   dma_fill_fraction          FILL, 1 MiB
 *   dma_sys_to_vram_fraction   MDL (256 scattered pages) -> VRAM, 1 MiB
 *   dma_vram_to_sys_fraction   VRAM -> MDL, 1 MiB
 *   dma_gart_fraction          the lower of VRAM -> aperture and aperture
 *                              -> VRAM, 1 MiB, TLB flushed just before
 *                              (both are printed too)
 *   dma_small_packet_cycles    cycles per 64-byte VRAM -> VRAM TRANSFER in
 *                              a stream of 512 (also MDL -> VRAM)
 *   fence_latency_cycles       idle engine: from the doorbell write to the
 *                              IRQ of a FENCE (IRQ flag; DMA_FENCE changes
 *                              one cycle before the IRQ line rises)
 *   sim_cycles_per_s_dma       model speed (wall clock) over the 1 MiB runs
 * A fraction is bytes / (8 * cycles), with cycles read from CNT_DMA_BUSY:
 * the counter runs from the cycle DMA_RING_TAIL changes until the engine is
 * idle again, so the host's polling (every 4096 cycles) does not enter.
 * Host latency is the model's default, 100 cycles.
 *
 * Build (after `make`):
 *   cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -Iinclude -Isim -Ihw \
 *      bench/bench_dma.c hw/gmc_dma_pkt.c hw/gmc_pkt.c build/rel/lib/libgmc_sim.a \
 *      -lz -pthread -lstdc++ -lm -o build/rel/bin/bench-dma */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gmc_dma_pkt.h"
#include "gmc_regs.h"
#include "gmc_sim.h"

#define MIB (1u << 20)
#define RING_BUS 0x100000000ull
#define POLL 4096u
#define APB 0x80000000u

static gmc_sim *sim;
static struct gmc_ring ring;
static double wall_s;
static uint64_t wall_cycles;

static void die(const char *what, int st)
{
    fprintf(stderr, "bench_dma: %s: %d (%s)\n", what, st, gmc_sim_status_name(st));
    exit(1);
}

static uint32_t rd(uint32_t off)
{
    uint32_t v = 0;
    int st = gmc_sim_reg_read(sim, off, &v);
    if (st) die("register read", st);
    return v;
}

static uint64_t rd64(uint32_t off)
{
    uint64_t v = 0;
    int st = gmc_sim_reg_read64(sim, off, &v);
    if (st) die("register read", st);
    return v;
}

static void wr(uint32_t off, uint32_t v)
{
    int st = gmc_sim_reg_write(sim, off, v);
    if (st) die("register write", st);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Run packets; returns CNT_DMA_BUSY cycles. */
static uint64_t run(const struct gmc_pkt *p, unsigned n, int timed)
{
    wr(GMC_REG_CNT_CLEAR, 1);
    int st = gmc_ring_put(&ring, p, n);
    if (st) die("ring put", st);
    const double t0 = now_s();
    const uint64_t c0 = gmc_sim_cycles(sim);
    st = gmc_ring_kick(&ring);
    if (st) die("doorbell", st);
    st = gmc_ring_wait(&ring, 50000000ull, POLL);
    if (st) {
        fprintf(stderr, "bench_dma: fault code 0x%x pkt 0x%llx addr 0x%llx\n", rd(GMC_REG_DMA_FAULT_CODE),
                (unsigned long long)rd64(GMC_REG_DMA_FAULT_PKT_LO), (unsigned long long)rd64(GMC_REG_DMA_FAULT_ADDR_LO));
        die("ring wait", st);
    }
    if (timed) {
        wall_s += now_s() - t0;
        wall_cycles += gmc_sim_cycles(sim) - c0;
    }
    if (rd64(GMC_REG_CNT_DMA_FAULTS_LO)) die("unexpected fault", -1);
    return rd64(GMC_REG_CNT_DMA_BUSY_LO);
}

static double frac(uint64_t bytes, uint64_t cycles)
{
    return (double)bytes / (8.0 * (double)cycles);
}

/* VRAM [a, a + n) equals buf. */
static void check_vram(uint32_t a, const uint8_t *buf, uint32_t n, const char *what)
{
    static uint8_t got[MIB];
    int st = gmc_sim_vram_peek(sim, a, got, n);
    if (st) die("vram peek", st);
    if (memcmp(got, buf, n)) die(what, -1);
}

static uint64_t irq_cycle;
static void on_irq(void *user, int level, uint64_t cycle)
{
    (void)user;
    if (level && !irq_cycle) irq_cycle = cycle;
}

int main(void)
{
    int st = gmc_sim_create(NULL, &sim);
    if (st) die("create", st);
    /* Ring of 64 KiB; arena: 1 MiB of data, MDLs, a fence slot. */
    st = gmc_ring_init(&ring, sim, RING_BUS, 16, 2 * MIB + 64 * 1024);
    if (st) die("ring init", st);
    uint8_t *host = NULL;
    const uint64_t data = gmc_ring_alloc(&ring, MIB, GMC_PAGE_SIZE, &host);
    if (!data) die("arena", -1);
    for (uint32_t i = 0; i < MIB; i++) host[i] = (uint8_t)(i * 2654435761u >> 13);
    static uint8_t orig[MIB], inmdl[MIB];
    memcpy(orig, host, MIB);

    /* An MDL of the 256 data pages in a scattered order. */
    uint64_t pages[256];
    for (unsigned i = 0; i < 256; i++) pages[i] = data + (uint64_t)((i * 97u) % 256u) * GMC_PAGE_SIZE;
    const uint64_t mdl = gmc_ring_mdl(&ring, pages, 256);
    if (!mdl) die("mdl", -1);
    struct gmc_side mside = {1, mdl, 0, 0};
    for (unsigned i = 0; i < 256; i++) memcpy(inmdl + i * GMC_PAGE_SIZE, host + (pages[i] - data), GMC_PAGE_SIZE);

    /* Seed VRAM [0, 1 MiB) from system memory. */
    struct gmc_pkt p = gmc_pkt_transfer(mside, gmc_side_gpu(0), MIB);
    run(&p, 1, 0);
    check_vram(0, inmdl, MIB, "seed copy");

    /* VRAM -> VRAM. */
    p = gmc_pkt_transfer(gmc_side_gpu(0), gmc_side_gpu(4 * MIB), MIB);
    const uint64_t c_copy = run(&p, 1, 1);
    check_vram(4 * MIB, inmdl, MIB, "VRAM copy");

    /* FILL. */
    p = gmc_pkt_fill(2 * MIB, MIB, 0xA5C3E187u);
    const uint64_t c_fill = run(&p, 1, 1);

    /* MDL -> VRAM and VRAM -> MDL. */
    p = gmc_pkt_transfer(mside, gmc_side_gpu(MIB), MIB);
    const uint64_t c_s2v = run(&p, 1, 1);
    check_vram(MIB, inmdl, MIB, "MDL to VRAM");
    memset(host, 0, MIB);
    p = gmc_pkt_transfer(gmc_side_gpu(MIB), mside, MIB);
    const uint64_t c_v2s = run(&p, 1, 1);
    if (memcmp(host, orig, MIB)) die("VRAM to MDL", -1);

    /* Aperture: map 256 pages onto the data pages, flush the TLB, copy. */
    struct gmc_pkt setup[2] = {gmc_pkt_map_aperture(APB, 256, mdl, 0, 1, 1, 1), gmc_pkt_flush_tlb()};
    run(setup, 2, 0);
    memset(host, 0, MIB);
    p = gmc_pkt_transfer(gmc_side_gpu(0), gmc_side_gpu(APB), MIB);
    const uint64_t c_v2a = run(&p, 1, 1);
    if (memcmp(host, orig, MIB)) die("VRAM to aperture", -1);
    p = gmc_pkt_flush_tlb();
    run(&p, 1, 0);
    p = gmc_pkt_transfer(gmc_side_gpu(APB), gmc_side_gpu(3 * MIB), MIB);
    const uint64_t c_a2v = run(&p, 1, 1);
    check_vram(3 * MIB, inmdl, MIB, "aperture to VRAM");

    /* Small packets: 512 x 64-byte VRAM -> VRAM, then MDL -> VRAM. */
    enum { NSMALL = 512 };
    static struct gmc_pkt small[NSMALL];
    for (unsigned i = 0; i < NSMALL; i++)
        small[i] = gmc_pkt_transfer(gmc_side_gpu(64 * i), gmc_side_gpu(5 * MIB + 64 * i), 64);
    const uint64_t c_small = run(small, NSMALL, 1);
    for (unsigned i = 0; i < NSMALL; i++) {
        struct gmc_side ms = {1, mdl, (64 * i) / GMC_PAGE_SIZE, (64 * i) % GMC_PAGE_SIZE};
        small[i] = gmc_pkt_transfer(ms, gmc_side_gpu(5 * MIB + 64 * i), 64);
    }
    const uint64_t c_small_mdl = run(small, NSMALL, 1);

    /* Fence latency, idle engine. */
    wr(GMC_REG_IRQ_ACK, 0xFFFFFFFFu);
    wr(GMC_REG_IRQ_MASK, GMC_IRQ_DMA_FENCE_MASK);
    gmc_sim_set_irq_callback(sim, on_irq, NULL);
    p = gmc_pkt_fence(0x1234, 0, 0, 1);
    st = gmc_ring_put(&ring, &p, 1);
    if (st) die("ring put", st);
    st = gmc_ring_kick(&ring);
    if (st) die("doorbell", st);
    const uint64_t kicked = gmc_sim_cycles(sim);
    st = gmc_ring_wait(&ring, 100000, 1);
    if (st) die("fence", st);
    const uint64_t fence_lat = irq_cycle - kicked;
    if (rd64(GMC_REG_DMA_FENCE_LO) != 0x1234) die("fence value", -1);

    char msg[256];
    if (gmc_sim_protocol_violations(sim, msg, sizeof msg)) {
        fprintf(stderr, "bench_dma: AXI protocol violation: %s\n", msg);
        return 1;
    }

    const double g_v2a = frac(MIB, c_v2a), g_a2v = frac(MIB, c_a2v);
    printf("{\"dma_peak_bytes_per_cycle\": 8, \"dma_copy_vram_fraction\": %.4f, \"dma_fill_fraction\": %.4f, "
           "\"dma_sys_to_vram_fraction\": %.4f, \"dma_vram_to_sys_fraction\": %.4f, \"dma_gart_fraction\": %.4f, "
           "\"dma_gart_vram_to_ap_fraction\": %.4f, \"dma_gart_ap_to_vram_fraction\": %.4f, "
           "\"dma_small_packet_cycles\": %.2f, \"dma_small_packet_mdl_cycles\": %.2f, "
           "\"fence_latency_cycles\": %llu, \"dma_copy_cycles_per_byte\": %.4f, \"sim_cycles_per_s_dma\": %.0f}\n",
           frac(MIB, c_copy), frac(MIB, c_fill), frac(MIB, c_s2v), frac(MIB, c_v2s), g_v2a < g_a2v ? g_v2a : g_a2v,
           g_v2a, g_a2v, (double)c_small / NSMALL, (double)c_small_mdl / NSMALL, (unsigned long long)fence_lat,
           (double)c_copy / MIB, (double)wall_cycles / wall_s);
    gmc_ring_fini(&ring);
    gmc_sim_destroy(sim);
    return 0;
}
