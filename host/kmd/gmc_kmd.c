/*
 * gmc_kmd.c - the driver ("KMD") for the gmc controller.
 *
 * DOC: Overview
 *
 * Fills struct gmc_kmd_ddi for this hardware. query_adapter_info reads the
 * identity and the segment descriptors from the registers, as
 * DxgkDdiQueryAdapterInfo(DXGKQAITYPE_QUERYSEGMENT) would report them; it
 * does not judge the descriptors (the manager applies the rule table to
 * them). fill, cpu_read and cpu_write use the CPU aperture (BAR1), where
 * VRAM byte `seg.base + x` of a CpuVisible segment is BAR1 offset
 * `seg.cpu_offset + x`.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gmc_backend.h"
#include "gmc_kmd.h"
#include "gmc_regs.h"
#include "gmc_status.h"

/* Bytes per backend call when filling. */
#define FILL_CHUNK 4096u

static int rd(struct gmc_kmd *k, uint32_t off, uint32_t *v)
{
    return k->be->read32(k->be_ctx, off, v);
}

int gmc_kmd_read64(struct gmc_kmd *k, uint32_t lo, uint64_t *v)
{
    uint32_t l = 0, h = 0;
    int rc = rd(k, lo, &l);
    if (rc == GMC_OK)
        rc = rd(k, lo + 4u, &h);
    *v = rc == GMC_OK ? ((uint64_t)h << 32 | l) : 0u;
    return rc;
}

static int read_identity(struct gmc_kmd *k, struct gmc_adapter_info *a)
{
    int rc = rd(k, GMC_REG_ID, &a->id);
    if (rc == GMC_OK)
        rc = rd(k, GMC_REG_VERSION, &a->version);
    if (rc != GMC_OK)
        return rc;
    if (a->id != GMC_ID)
        return GMC_E_VERSION;
    if ((a->version & GMC_VERSION_MAJOR_MASK) >> GMC_VERSION_MAJOR_LSB != GMC_VERSION_MAJOR)
        return GMC_E_VERSION;
    return GMC_OK;
}

static int read_sizes(struct gmc_kmd *k, struct gmc_adapter_info *a)
{
    uint32_t vram = 0, win = 0, apb = 0, app = 0, tlb = 0;
    int rc = rd(k, GMC_REG_CAPS, &a->caps);
    if (rc == GMC_OK)
        rc = rd(k, GMC_REG_VRAM_SIZE, &vram);
    if (rc == GMC_OK)
        rc = rd(k, GMC_REG_CPU_WINDOW_SIZE, &win);
    if (rc == GMC_OK)
        rc = rd(k, GMC_REG_APERTURE_BASE, &apb);
    if (rc == GMC_OK)
        rc = rd(k, GMC_REG_APERTURE_PAGES, &app);
    if (rc == GMC_OK)
        rc = rd(k, GMC_REG_TLB_ENTRIES, &tlb);
    if (rc == GMC_OK)
        rc = rd(k, GMC_REG_PAGE_SIZE, &a->page_size);
    if (rc == GMC_OK)
        rc = rd(k, GMC_REG_SEG_COUNT, &a->seg_count);
    if (rc != GMC_OK)
        return rc;
    if (a->page_size != GMC_PAGE_SIZE)
        return GMC_E_UNSUPPORTED;
    a->vram_size = vram;
    a->cpu_window_size = win;
    a->aperture_base = apb;
    a->aperture_pages = app;
    a->tlb_entries = tlb;
    return GMC_OK;
}

static int read_segment(struct gmc_kmd *k, unsigned i, struct gmc_segment_desc *s)
{
    uint32_t banks = 0;
    s->id = i + 1u;
    int rc = gmc_kmd_read64(k, GMC_REG_SEG_BASE_LO_N(i), &s->base);
    if (rc == GMC_OK)
        rc = gmc_kmd_read64(k, GMC_REG_SEG_SIZE_LO_N(i), &s->size);
    if (rc == GMC_OK)
        rc = rd(k, GMC_REG_SEG_FLAGS_N(i), &s->flags);
    if (rc == GMC_OK)
        rc = gmc_kmd_read64(k, GMC_REG_SEG_CPU_OFFSET_LO_N(i), &s->cpu_offset);
    if (rc == GMC_OK)
        rc = rd(k, GMC_REG_SEG_BANKS_N(i), &banks);
    if (rc == GMC_OK)
        rc = gmc_kmd_read64(k, GMC_REG_SEG_SYSMEM_END_LO_N(i), &s->sysmem_end);
    s->banks = (banks & GMC_SEG_BANKS_COUNT_MASK) >> GMC_SEG_BANKS_COUNT_LSB;
    return rc;
}

static int query_adapter_info(struct gmc_kmd *k, struct gmc_adapter_info *a)
{
    memset(a, 0, sizeof(*a));
    int rc = read_identity(k, a);
    if (rc == GMC_OK)
        rc = read_sizes(k, a);
    if (rc != GMC_OK)
        return rc;
    unsigned n = a->seg_count < GMC_MAX_SEGMENTS ? a->seg_count : GMC_MAX_SEGMENTS;
    for (unsigned i = 0; i < n && rc == GMC_OK; i++)
        rc = read_segment(k, i, &a->segs[i]);
    if (rc != GMC_OK)
        return rc;
    a->nsegs = a->seg_count > GMC_MAX_SEGMENTS ? GMC_MAX_SEGMENTS + 1u : n;
    if (a->seg_count > GMC_MAX_SEGMENTS)
        a->segs[GMC_MAX_SEGMENTS].id = GMC_MAX_SEGMENTS + 1u;
    return GMC_OK;
}

int gmc_kmd_cpu_reachable(const struct gmc_segment_desc *seg)
{
    return gmc_segment_cpu_window(seg);
}

/* BAR1 offset of segment bytes [offset, offset + len), checked. */
static int bar1(const struct gmc_segment_desc *seg, uint64_t offset, uint64_t len, uint64_t *out)
{
    if (!gmc_kmd_cpu_reachable(seg))
        return GMC_E_NOT_CPU_VISIBLE;
    if (offset > seg->size || len > seg->size - offset || offset > UINT64_MAX - seg->cpu_offset)
        return GMC_E_OUT_OF_BOUNDS;
    *out = seg->cpu_offset + offset;
    return GMC_OK;
}

static int fill(struct gmc_kmd *k, const struct gmc_segment_desc *seg, uint64_t offset,
                uint64_t len, uint32_t pattern)
{
    uint64_t at;
    int rc = bar1(seg, offset, len, &at);
    if (rc != GMC_OK)
        return rc;
    uint32_t buf[FILL_CHUNK / 4u];
    for (unsigned i = 0; i < FILL_CHUNK / 4u; i++)
        buf[i] = pattern;
    while (len > 0u && rc == GMC_OK) {
        size_t n = len < FILL_CHUNK ? (size_t)len : FILL_CHUNK;
        rc = k->be->aperture_write(k->be_ctx, at, buf, n);
        at += n;
        len -= n;
    }
    return rc;
}

static int cpu_read(struct gmc_kmd *k, const struct gmc_segment_desc *seg, uint64_t offset,
                    void *buf, size_t len)
{
    uint64_t at;
    int rc = bar1(seg, offset, len, &at);
    if (rc != GMC_OK) {
        memset(buf, 0, len);
        return rc;
    }
    return k->be->aperture_read(k->be_ctx, at, buf, len);
}

static int cpu_write(struct gmc_kmd *k, const struct gmc_segment_desc *seg, uint64_t offset,
                     const void *buf, size_t len)
{
    uint64_t at;
    int rc = bar1(seg, offset, len, &at);
    if (rc != GMC_OK)
        return rc;
    return k->be->aperture_write(k->be_ctx, at, buf, len);
}

static void stop_device(struct gmc_kmd *k)
{
    if (k->be != NULL)
        k->be->close(k->be_ctx);
    k->be = NULL;
    k->be_ctx = NULL;
}

static int set_power(struct gmc_kmd *k, int state, const uint64_t *ranges, unsigned n)
{
    if (state < 0 || state > 2 || (ranges == NULL && n > 0u))
        return GMC_E_INVALID_ARG;
    if (k->be->power == NULL)
        return GMC_E_UNSUPPORTED;
    return k->be->power(k->be_ctx, state, ranges, n);
}

static int reset_from_timeout(struct gmc_kmd *k)
{
    if (k->be->reset == NULL)
        return GMC_E_UNSUPPORTED;
    return k->be->reset(k->be_ctx);
}

const struct gmc_kmd_ddi gmc_kmd_ddi_gmc = {
    .reset_from_timeout = reset_from_timeout,
    .set_power = set_power,
    .query_adapter_info = query_adapter_info,
    .fill = fill,
    .cpu_read = cpu_read,
    .cpu_write = cpu_write,
    .stop_device = stop_device,
};

void gmc_kmd_start(struct gmc_kmd *kmd, const struct gmc_backend_ops *be, void *be_ctx)
{
    kmd->ddi = &gmc_kmd_ddi_gmc;
    kmd->be = be;
    kmd->be_ctx = be_ctx;
}
