/*
 * pci_workload.c - register and aperture work that needs no DMA, through
 * one backend, printed as a transcript.
 *
 *   pci-workload DEVICE-STRING
 *
 * tests/pci/test_pci_rtl.sh runs it on "sim" and on the pci backend over
 * the trapped fake BARs (the same Verilated gmc_top behind libpciaccess)
 * and compares the transcripts; every value is also checked here against
 * what the register map says it must be. Exit 0 when every check held.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmc_backend.h"
#include "gmc_devstr.h"
#include "gmc_regs.h"
#include "gmc_status.h"

static const struct gmc_backend_ops *be;
static void *ctx;
static int failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "pci_workload: check failed at line %d: %s\n", __LINE__, #cond);       \
            failed = 1;                                                                            \
        }                                                                                          \
    } while (0)

static uint32_t rd(uint32_t off)
{
    uint32_t v = 0;
    int rc = be->read32(ctx, off, &v);
    CHECK(rc == GMC_OK);
    return v;
}

static void wr(uint32_t off, uint32_t v)
{
    CHECK(be->write32(ctx, off, v) == GMC_OK);
}

static uint64_t rd64(uint32_t lo)
{
    uint64_t l = rd(lo);
    return l | (uint64_t)rd(lo + 4u) << 32;
}

static uint32_t translate(uint32_t gpu)
{
    wr(GMC_REG_XLATE_ADDR, gpu);
    wr(GMC_REG_XLATE_CTRL, GMC_XLATE_CTRL_GO_MASK);
    uint32_t st = 0;
    for (int i = 0; i < 1000; i++) {
        st = rd(GMC_REG_XLATE_STATUS);
        if (st & GMC_XLATE_STATUS_DONE_MASK)
            break;
    }
    CHECK(st & GMC_XLATE_STATUS_DONE_MASK);
    return st;
}

int main(int argc, char **argv)
{
    struct gmc_devspec spec;
    if (argc != 2 || gmc_devstr_parse(argv[1], &spec, NULL) != GMC_OK) {
        fprintf(stderr, "usage: pci-workload DEVICE-STRING\n");
        return 2;
    }
    be = gmc_backend_for(&spec);
    int rc = be->open(&spec, &ctx);
    if (rc != GMC_OK) {
        fprintf(stderr, "pci_workload: open %s: %s\n", argv[1], gmc_status_name(rc));
        return 2;
    }
    /* identification */
    uint32_t id = rd(GMC_REG_ID), caps = rd(GMC_REG_CAPS), win = rd(GMC_REG_CPU_WINDOW_SIZE);
    printf("id %08" PRIx32 " version %08" PRIx32 " caps %08" PRIx32 " vram %08" PRIx32 " window %08" PRIx32 "\n",
           id, rd(GMC_REG_VERSION), caps, rd(GMC_REG_VRAM_SIZE), win);
    CHECK(id == GMC_ID);
    /* SCRATCH: every bit both ways */
    static const uint32_t pat[] = { 0u, 0xFFFFFFFFu, 0xA5A5A5A5u, 0x5A5A5A5Au, 0x01234567u };
    for (size_t i = 0; i < sizeof(pat) / sizeof(pat[0]); i++) {
        wr(GMC_REG_SCRATCH, pat[i]);
        CHECK(rd(GMC_REG_SCRATCH) == pat[i]);
    }
    /* a read-only register ignores writes */
    wr(GMC_REG_SCRATCH, 0x600DF00Du);
    (void)be->write32(ctx, GMC_REG_VRAM_SIZE, 1u);
    printf("scratch %08" PRIx32 " vram_after_write %08" PRIx32 "\n", rd(GMC_REG_SCRATCH), rd(GMC_REG_VRAM_SIZE));
    /* unaligned aperture traffic: data only */
    uint8_t out[300], in[300];
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (uint8_t)(i * 13u + 1u);
    CHECK(be->aperture_write(ctx, 0x3005, out, sizeof(out)) == GMC_OK);
    memset(in, 0, sizeof(in));
    CHECK(be->aperture_read(ctx, 0x3005, in, sizeof(in)) == GMC_OK);
    CHECK(memcmp(in, out, sizeof(in)) == 0);
    /* aligned traffic, counted by the aperture counters */
    wr(GMC_REG_CNT_CLEAR, 1u);
    static uint8_t big[16384], back[16384];
    uint64_t sum = 0;
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)(i ^ (i >> 8));
    CHECK(be->aperture_write(ctx, 0x40000, big, sizeof(big)) == GMC_OK);
    CHECK(be->aperture_read(ctx, 0x40000, back, sizeof(back)) == GMC_OK);
    CHECK(memcmp(big, back, sizeof(big)) == 0);
    for (size_t i = 0; i < sizeof(back); i++)
        sum = sum * 31u + back[i];
    uint64_t crd = rd64(GMC_REG_CNT_APERTURE_RD_LO), cwr = rd64(GMC_REG_CNT_APERTURE_WR_LO);
    printf("aperture sum %016" PRIx64 " counted rd %" PRIu64 " wr %" PRIu64 "\n", sum, crd, cwr);
    CHECK(crd == sizeof(back) && cwr == sizeof(big));
    /* a protected range: the write is refused and logged in APF_* */
    wr(GMC_REG_PROT_BASE, 0x20000u);
    wr(GMC_REG_PROT_LIMIT, 0x21000u);
    (void)be->aperture_write(ctx, 0x20008, big, 8); /* sim: GMC_E_BUS; PCIe: posted, dropped */
    uint32_t apf = rd(GMC_REG_APF_STATUS);
    uint64_t apf_addr = rd64(GMC_REG_APF_ADDR_LO);
    printf("apf status %08" PRIx32 " addr %" PRIx64 " count %" PRIu32 " irq_status %08" PRIx32 "\n", apf, apf_addr,
           rd(GMC_REG_APF_COUNT), rd(GMC_REG_IRQ_STATUS));
    CHECK(apf == (GMC_APF_STATUS_VALID_MASK | GMC_APF_STATUS_WRITE_MASK |
                  (GMC_APF_KIND_PROTECTED << GMC_APF_STATUS_KIND_LSB)));
    CHECK(apf_addr == 0x20008u);
    wr(GMC_REG_APF_CLEAR, 1u);
    wr(GMC_REG_IRQ_ACK, GMC_IRQ_APERTURE_FAULT_MASK);
    wr(GMC_REG_PROT_LIMIT, 0u);
    /* GART: a page table inside the CPU window, written through BAR1 */
    uint32_t ap_base = rd(GMC_REG_APERTURE_BASE);
    wr(GMC_REG_PT_BASE, 0x100000u);
    uint64_t pte = 0x12345000ull | GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_READABLE_MASK;
    uint64_t zero = 0;
    CHECK(be->aperture_write(ctx, 0x100000u + 8u * 5u, &pte, 8) == GMC_OK);
    CHECK(be->aperture_write(ctx, 0x100000u + 8u * 6u, &zero, 8) == GMC_OK);
    wr(GMC_REG_TLB_INV_ALL, 1u);
    wr(GMC_REG_IRQ_MASK, GMC_IRQ_XLATE_DONE_MASK);
    CHECK(be->irq(ctx) == 0);
    uint32_t st = translate(ap_base + 5u * 4096u + 0x10u);
    uint64_t res = rd64(GMC_REG_XLATE_RESULT_LO);
    int irq = be->irq(ctx);
    wr(GMC_REG_IRQ_ACK, GMC_IRQ_XLATE_DONE_MASK);
    int irq_after = be->irq(ctx);
    uint32_t st2 = translate(ap_base + 5u * 4096u + 0x20u);
    uint32_t st3 = translate(ap_base + 6u * 4096u);
    printf("xlate status %08" PRIx32 " result %" PRIx64 " irq %d -> %d; again %08" PRIx32 "; invalid %08" PRIx32 "\n",
           st, res, irq, irq_after, st2, st3);
    CHECK(res == 0x12345010u && irq == 1 && irq_after == 0);
    CHECK(!(st & GMC_XLATE_STATUS_FAULT_MASK) && (st2 & GMC_XLATE_STATUS_HIT_MASK));
    CHECK((st3 & GMC_XLATE_STATUS_FAULT_MASK) &&
          ((st3 & GMC_XLATE_STATUS_CODE_MASK) >> GMC_XLATE_STATUS_CODE_LSB) == GMC_XLATE_CODE_INVALID);
    uint64_t hit = rd64(GMC_REG_CNT_TLB_HIT_LO), miss = rd64(GMC_REG_CNT_TLB_MISS_LO);
    printf("tlb hit %" PRIu64 " miss %" PRIu64 "\n", hit, miss);
    CHECK(hit == 1u && miss == 2u);
    /* reset: registers back to their reset values, VRAM kept */
    CHECK(be->reset(ctx) == GMC_OK);
    uint64_t keep = 0;
    CHECK(be->aperture_read(ctx, 0x100000u + 8u * 5u, &keep, 8) == GMC_OK);
    printf("after reset scratch %08" PRIx32 " irq_mask %08" PRIx32 " prot_base %08" PRIx32 " pt_base %08" PRIx32
           " vram kept %d\n",
           rd(GMC_REG_SCRATCH), rd(GMC_REG_IRQ_MASK), rd(GMC_REG_PROT_BASE), rd(GMC_REG_PT_BASE), keep == pte);
    CHECK(rd(GMC_REG_SCRATCH) == 0u && keep == pte);
    be->close(ctx);
    return failed;
}
