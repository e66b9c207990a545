/*
 * gmc_kmd.h - the driver for the gmc controller, behind a DDI table
 * (private to the host library).
 *
 * DOC: Overview
 *
 * The device-independent manager (gmc_vidmm.c) never touches a register.
 * It calls the driver through struct gmc_kmd_ddi, a table of functions in
 * the manner of the DxgkDdi* entry points a WDDM miniport exports; the
 * driver reaches the hardware only through its backend table
 * (gmc_backend.h). A second hardware model would be a second DDI table,
 * and a test may wrap one.
 */
#ifndef GMC_KMD_H
#define GMC_KMD_H

#include <stddef.h>
#include <stdint.h>

#include "gmc_alloc.h"
#include "gmc_backend.h"

/* What DxgkDdiQueryAdapterInfo reports: identity, sizes, segments. */
struct gmc_adapter_info {
    uint32_t id, version, caps;
    uint64_t vram_size;
    uint64_t cpu_window_size;
    uint64_t aperture_base;
    uint64_t aperture_pages;
    uint32_t page_size;
    uint32_t tlb_entries;
    uint32_t seg_count; /* SEG_COUNT as the hardware reports it */
    /* Descriptors read (ids 1..nsegs). A SEG_COUNT beyond the register
     * array gives nsegs = GMC_MAX_SEGMENTS + 1 with a zero last entry, so
     * that the rule SEG_COUNT_VALID sees the excess and refuses it. */
    unsigned nsegs;
    struct gmc_segment_desc segs[GMC_MAX_SEGMENTS + 1];
};

struct gmc_kmd;

struct gmc_kmd_ddi {
    /* DxgkDdiQueryAdapterInfo: read ID, VERSION and the segment descriptors
     * from the registers. GMC_E_VERSION for another ID or major version. */
    int (*query_adapter_info)(struct gmc_kmd *kmd, struct gmc_adapter_info *out);
    /* DxgkDdiBuildPagingBuffer(FILL): write a 32-bit pattern over
     * [offset, offset + len) of a segment. This controller has no paging
     * engine yet, so the fill is CPU writes through BAR1 and works on
     * CPU-visible memory segments only (else GMC_E_NOT_CPU_VISIBLE). */
    int (*fill)(struct gmc_kmd *kmd, const struct gmc_segment_desc *seg, uint64_t offset,
                uint64_t len, uint32_t pattern);
    /* The CPU mapping of a locked range: bytes of a CPU-visible memory
     * segment through BAR1 (offset = seg->cpu_offset + offset). */
    int (*cpu_read)(struct gmc_kmd *kmd, const struct gmc_segment_desc *seg, uint64_t offset,
                    void *buf, size_t len);
    int (*cpu_write)(struct gmc_kmd *kmd, const struct gmc_segment_desc *seg, uint64_t offset,
                     const void *buf, size_t len);
    /* DxgkDdiSetPowerState: 0 = D0, 1 = standby, 2 = hibernate. Going
     * down, `ranges` (n base/size pairs) are the VRAM the transition
     * purges. */
    int (*set_power)(struct gmc_kmd *kmd, int state, const uint64_t *ranges, unsigned n);
    /* DxgkDdiResetFromTimeout: reset the controller after a TDR. VRAM
     * (and so the page table) is kept; registers return to reset values. */
    int (*reset_from_timeout)(struct gmc_kmd *kmd);
    /* DxgkDdiStopDevice: release the backend. */
    void (*stop_device)(struct gmc_kmd *kmd);
};

struct gmc_kmd {
    const struct gmc_kmd_ddi *ddi;
    const struct gmc_backend_ops *be;
    void *be_ctx;
};

/* The gmc controller's DDI table. */
extern const struct gmc_kmd_ddi gmc_kmd_ddi_gmc;

/* DxgkDdiStartDevice: bind the driver to a started backend (which the
 * driver owns from now on and closes in stop_device). */
void gmc_kmd_start(struct gmc_kmd *kmd, const struct gmc_backend_ops *be, void *be_ctx);

/* A 64-bit LO/HI register pair: LO first (reading it snapshots HI). On
 * error *v is 0. */
int gmc_kmd_read64(struct gmc_kmd *kmd, uint32_t lo, uint64_t *v);

/* Whether the CPU reaches a segment's bytes through BAR1: a CpuVisible
 * memory segment (CpuVisible on an aperture means something else). */
int gmc_kmd_cpu_reachable(const struct gmc_segment_desc *seg);

#endif /* GMC_KMD_H */
