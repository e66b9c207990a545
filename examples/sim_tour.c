/*
 * sim_tour: open the simulated controller and show what it reports.
 *
 * Prints the segments the hardware describes, maps a few aperture pages
 * through the GART (the page table is written through the CPU aperture),
 * translates them with the debug translation port, and prints the
 * performance counters. Uses only libgmc_sim and the generated register map.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmc_regs.h"
#include "gmc_sim.h"

#define CHECK(call)                                                                        \
    do {                                                                                   \
        int st_ = (call);                                                                  \
        if (st_) {                                                                         \
            fprintf(stderr, "sim_tour: %s: %s\n", #call, gmc_sim_strerror(st_));           \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static const char *const flag_names[16] = {
    "Aperture", "Agp", "CpuVisible", "UseBanking", "CacheCoherent", "PitchAlignment",
    "PopulatedFromSystemMemory", "PreservedDuringStandby", "PreservedDuringHibernate",
    "PartiallyPreservedDuringHibernate", "DirectFlip", "Use64KBPages", "ReservedSysMem",
    "SupportsCpuHostAperture", "SupportsCachedCpuHostAperture", "ApplicationTarget"};

static uint32_t rd(gmc_sim *s, uint32_t off)
{
    uint32_t v;
    CHECK(gmc_sim_reg_read(s, off, &v));
    return v;
}

static uint64_t rd64(gmc_sim *s, uint32_t off)
{
    uint64_t v;
    CHECK(gmc_sim_reg_read64(s, off, &v));
    return v;
}

static void fmt_size(char *buf, size_t n, uint64_t bytes)
{
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
        snprintf(buf, n, "%" PRIu64 " MiB", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(buf, n, "%" PRIu64 " KiB", bytes >> 10);
    else
        snprintf(buf, n, "%" PRIu64 " B", bytes);
}

int main(void)
{
    gmc_sim *s;
    CHECK(gmc_sim_create(NULL, &s));

    uint32_t id = rd(s, GMC_REG_ID), ver = rd(s, GMC_REG_VERSION);
    char vram[32], win[32];
    fmt_size(vram, sizeof vram, rd(s, GMC_REG_VRAM_SIZE));
    fmt_size(win, sizeof win, rd(s, GMC_REG_CPU_WINDOW_SIZE));
    printf("gmc controller: id 0x%08" PRIx32 ", version %" PRIu32 ".%" PRIu32 ", caps 0x%08" PRIx32 "\n",
           id, ver >> 16, ver & 0xFFFF, rd(s, GMC_REG_CAPS));
    printf("  VRAM %s, CPU window %s, TLB %" PRIu32 " entries, page %" PRIu32 " bytes\n", vram, win,
           rd(s, GMC_REG_TLB_ENTRIES), rd(s, GMC_REG_PAGE_SIZE));

    uint32_t nseg = rd(s, GMC_REG_SEG_COUNT);
    printf("\nsegments (as the hardware reports them):\n");
    for (uint32_t i = 0; i < nseg && i < GMC_REG_SEG_BASE_LO_COUNT; i++) {
        uint64_t base = rd64(s, GMC_REG_SEG_BASE_LO_N(i));
        uint64_t size = rd64(s, GMC_REG_SEG_SIZE_LO_N(i));
        uint32_t flags = rd(s, GMC_REG_SEG_FLAGS_N(i));
        uint32_t banks = rd(s, GMC_REG_SEG_BANKS_N(i)) & GMC_SEG_BANKS_COUNT_MASK;
        char sz[32];
        fmt_size(sz, sizeof sz, size);
        printf("  %" PRIu32 ": base 0x%09" PRIx64 "  size %-8s banks %" PRIu32 "  flags", i + 1, base, sz,
               banks);
        for (int b = 0; b < 16; b++)
            if (flags >> b & 1) printf(" %s", flag_names[b]);
        printf("\n");
    }

    /* Put the page table in the CPU-visible window so the tour can write
     * PTEs through the aperture (the DMA engine's MAP_APERTURE does this
     * for real). */
    const uint32_t pt = 0x100000, dummy = 0x7ff000;
    const uint32_t ap_base = rd(s, GMC_REG_APERTURE_BASE);
    CHECK(gmc_sim_reg_write(s, GMC_REG_PT_BASE, pt));
    CHECK(gmc_sim_reg_write(s, GMC_REG_DUMMY_PAGE_LO, dummy));
    CHECK(gmc_sim_reg_write(s, GMC_REG_CNT_CLEAR, 1));
    const uint64_t rw = GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_SNOOPED_MASK |
                        GMC_PTE_READABLE_MASK | GMC_PTE_WRITEABLE_MASK;
    const uint64_t ptes[4] = {rw | 0x123456000ull, rw | 0x0badc0000ull,
                              GMC_PTE_VALID_MASK | GMC_PTE_SYSTEM_MASK | GMC_PTE_READABLE_MASK | dummy, 0};
    CHECK(gmc_sim_aperture_write(s, pt, ptes, sizeof ptes));

    printf("\nGART: page table at VRAM 0x%" PRIx32 ", dummy page 0x%" PRIx32 "\n", pt, dummy);
    const struct {
        uint32_t page, off;
        int write;
    } probes[] = {{0, 0x10, 0}, {0, 0x20, 1}, {1, 0xabc, 0}, {2, 0, 0}, {2, 0, 1}, {3, 0, 0}};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        uint32_t va = ap_base + probes[i].page * GMC_PAGE_SIZE + probes[i].off;
        CHECK(gmc_sim_reg_write(s, GMC_REG_XLATE_ADDR, va));
        CHECK(gmc_sim_reg_write(s, GMC_REG_XLATE_CTRL,
                                GMC_XLATE_CTRL_GO_MASK | (probes[i].write ? GMC_XLATE_CTRL_WRITE_MASK : 0)));
        uint32_t st;
        do st = rd(s, GMC_REG_XLATE_STATUS);
        while (st & GMC_XLATE_STATUS_BUSY_MASK);
        uint64_t pa = rd64(s, GMC_REG_XLATE_RESULT_LO);
        printf("  %s 0x%08" PRIx32 " -> ", probes[i].write ? "write" : "read ", va);
        if (st & GMC_XLATE_STATUS_FAULT_MASK)
            printf("fault, code %" PRIu32 "\n", (st & GMC_XLATE_STATUS_CODE_MASK) >> GMC_XLATE_STATUS_CODE_LSB);
        else
            printf("0x%012" PRIx64 " (%s%s)\n", pa, st & GMC_XLATE_STATUS_HIT_MASK ? "TLB hit" : "TLB miss",
                   st & GMC_XLATE_STATUS_DUMMY_MASK ? ", dummy page" : "");
    }

    printf("\ncounters:\n");
    printf("  TLB hits %" PRIu64 ", misses %" PRIu64 ", dummy-page hits %" PRIu64 "\n",
           rd64(s, GMC_REG_CNT_TLB_HIT_LO), rd64(s, GMC_REG_CNT_TLB_MISS_LO), rd64(s, GMC_REG_CNT_DUMMY_HIT_LO));
    printf("  aperture bytes read %" PRIu64 ", written %" PRIu64 "\n", rd64(s, GMC_REG_CNT_APERTURE_RD_LO),
           rd64(s, GMC_REG_CNT_APERTURE_WR_LO));
    printf("  cycles %" PRIu64 "\n", rd64(s, GMC_REG_CYCLE_LO));
    gmc_sim_destroy(s);
    return 0;
}
