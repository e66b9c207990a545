/*
 * gmc_pbuild.c - DxgkDdiBuildPagingBuffer for the gmc DMA engine: one
 * paging operation into packets (docs/paging.md, docs/dma.md).
 *
 * DOC: Overview
 *
 * An operation is a run of `total` units (bytes for TRANSFER, FILL and
 * DISCARD, pages for MAP/UNMAP_APERTURE, one for the rest) cut into packets
 * of at most `step` units. Each call writes packets for units
 * [multipass_offset, total) until the buffer is full. Every argument is
 * checked against what the packet fields can hold and what the engine
 * would refuse before the first byte is written, so a refused operation
 * leaves the buffer as it was. The field encoders are gmc_pkt.c's.
 */
#include <stddef.h>
#include <stdint.h>

#include "gmc_paging.h"
#include "gmc_pkt.h"
#include "gmc_regs.h"
#include "gmc_status.h"

#define GPU_LIMIT (1ull << 32)
#define BUS_LIMIT (1ull << 48)
#define LENGTH_MAX 0xFFFFFFFFull
#define MDL_PAGE_MAX ((uint64_t)GMC_PKT_MDL_W3_SRC_PAGE_MASK) /* 20-bit entry index */
/* DISCARD without POISON moves nothing: cut only where LENGTH must. */
#define DISCARD_STEP (LENGTH_MAX & ~(uint64_t)(GMC_PAGE_SIZE - 1u))

struct plan {
    uint64_t total; /* units */
    uint64_t step;  /* units per packet */
};

static int target_ok(const struct gmc_paging_target *t)
{
    if (t->vram_size > GPU_LIMIT || t->max_chunk == 0 || t->max_chunk > LENGTH_MAX)
        return 0;
    if (t->aperture_base % GMC_PAGE_SIZE != 0 || t->aperture_base > GPU_LIMIT ||
        t->aperture_pages > (GPU_LIMIT - t->aperture_base) / GMC_PAGE_SIZE)
        return 0;
    return 1;
}

/* [addr, addr + len) wholly inside VRAM or wholly inside the aperture. */
static int gpu_range_ok(const struct gmc_paging_target *t, uint64_t addr, uint64_t len)
{
    if (len == 0 || addr >= GPU_LIMIT || len > GPU_LIMIT - addr)
        return 0;
    if (addr < t->vram_size && len <= t->vram_size - addr)
        return 1;
    const uint64_t ap_bytes = t->aperture_pages * GMC_PAGE_SIZE;
    return addr >= t->aperture_base && addr - t->aperture_base < ap_bytes &&
           len <= ap_bytes - (addr - t->aperture_base);
}

static int bus_ok(uint64_t bus)
{
    return bus % 8u == 0 && bus < BUS_LIMIT;
}

/* An MDL walked from entry `first_page` for bytes [off, off + len) of it. */
static int mdl_range_ok(const struct gmc_sysbuf *m, uint64_t first_page, uint64_t off, uint64_t len)
{
    if (m == NULL || m->npages == 0 || !bus_ok(m->mdl_bus) || first_page > m->npages)
        return 0;
    const uint64_t avail = (m->npages - first_page) * GMC_PAGE_SIZE;
    if (off > avail || len > avail - off || len == 0)
        return 0;
    /* Every packet's first entry must fit the 20-bit GMC_PAGE_SIZE field. */
    return first_page + (off + len - 1u) / GMC_PAGE_SIZE <= MDL_PAGE_MAX;
}

static int side_ok(const struct gmc_paging_target *t, const struct gmc_paging_side *s, uint64_t mdl_offset,
                   uint64_t off, uint64_t len)
{
    if (s->segment_id != 0) {
        if (s->segment_address >= GPU_LIMIT || off >= GPU_LIMIT)
            return 0;
        return gpu_range_ok(t, s->segment_address + off, len);
    }
    return mdl_range_ok(s->mdl, mdl_offset, off, len);
}

static int aperture_pages_ok(const struct gmc_paging_target *t, uint64_t gpu, uint64_t pages)
{
    if (pages == 0 || gpu % GMC_PAGE_SIZE != 0 || gpu < t->aperture_base || gpu >= GPU_LIMIT)
        return 0;
    const uint64_t first = (gpu - t->aperture_base) / GMC_PAGE_SIZE;
    return first < t->aperture_pages && pages <= t->aperture_pages - first;
}

static int plan_op(const struct gmc_paging_target *t, const struct gmc_paging_args *a, struct plan *p)
{
    p->total = 1;
    p->step = 1;
    switch (a->op) {
    case GMC_PAGING_TRANSFER: {
        const uint64_t size = a->u.transfer.size, off = a->u.transfer.transfer_offset;
        if (size == 0 || off > UINT64_MAX - size)
            return GMC_E_INVALID_ARG;
        const uint32_t fl = a->u.transfer.flags, swz = GMC_PAGING_TRANSFER_SWIZZLE | GMC_PAGING_TRANSFER_UNSWIZZLE;
        if (fl & ~(GMC_PAGING_TRANSFER_START | GMC_PAGING_TRANSFER_END | swz) || (fl & swz) == swz)
            return GMC_E_INVALID_ARG;
        if ((fl & swz) && (off % GMC_PAGE_SIZE != 0 || size % GMC_PAGE_SIZE != 0))
            return GMC_E_INVALID_ARG;
        if (!side_ok(t, &a->u.transfer.src, a->u.transfer.mdl_offset, off, size) ||
            !side_ok(t, &a->u.transfer.dst, a->u.transfer.mdl_offset, off, size))
            return GMC_E_INVALID_ARG;
        p->total = size;
        p->step = (fl & swz) ? GMC_SWIZZLE_BLOCK_BYTES : t->max_chunk;
        if (p->step > t->max_chunk)
            return GMC_E_INVALID_ARG;
        break;
    }
    case GMC_PAGING_FILL:
    case GMC_PAGING_DISCARD_CONTENT: {
        const uint64_t addr = a->u.fill.gpu_address, size = a->u.fill.size;
        if (size == 0 || addr >= t->vram_size || size > t->vram_size - addr)
            return GMC_E_INVALID_ARG;
        p->total = size;
        p->step = a->op == GMC_PAGING_FILL || a->u.fill.poison ? t->max_chunk : DISCARD_STEP;
        break;
    }
    case GMC_PAGING_READ_PHYSICAL:
    case GMC_PAGING_WRITE_PHYSICAL: {
        const uint64_t addr = a->u.physical.address;
        const unsigned size = a->u.physical.size;
        if (size < 1u || size > 8u || (addr % 8u) + size > 8u)
            return GMC_E_INVALID_ARG;
        if (a->u.physical.gpu ? !gpu_range_ok(t, addr, size) : addr >= BUS_LIMIT)
            return GMC_E_INVALID_ARG;
        break;
    }
    case GMC_PAGING_MAP_APERTURE_SEGMENT:
    case GMC_PAGING_UNMAP_APERTURE_SEGMENT: {
        const uint64_t pages = a->u.map.pages;
        if (!aperture_pages_ok(t, a->u.map.gpu_address, pages))
            return GMC_E_INVALID_ARG;
        if (a->op == GMC_PAGING_MAP_APERTURE_SEGMENT &&
            (pages > UINT64_MAX / GMC_PAGE_SIZE || !mdl_range_ok(a->u.map.mdl, a->u.map.mdl_offset, 0, pages * GMC_PAGE_SIZE)))
            return GMC_E_INVALID_ARG;
        p->total = pages;
        p->step = t->max_chunk / 8u ? t->max_chunk / 8u : 1u;
        break;
    }
    case GMC_PAGING_FLUSH_TLB:
        break;
    case GMC_PAGING_NOTIFY_RESIDENCY:
        if (!bus_ok(t->notify_bus) || t->notify_seq > (UINT64_MAX >> 1))
            return GMC_E_INVALID_ARG;
        break;
    case GMC_PAGING_SIGNAL:
        if (!bus_ok(t->fence_bus))
            return GMC_E_INVALID_ARG;
        break;
    default:
        return GMC_E_INVALID_ARG;
    }
    if (a->multipass_offset >= p->total)
        return GMC_E_INVALID_ARG;
    return GMC_OK;
}

int gmc_paging_args_check(const struct gmc_paging_target *t, const struct gmc_paging_args *args)
{
    struct plan p;
    if (t == NULL || args == NULL)
        return GMC_E_NULL_POINTER;
    if (!target_ok(t))
        return GMC_E_INVALID_ARG;
    return plan_op(t, args, &p);
}

uint64_t gmc_swizzle_offset(uint64_t off)
{
    const uint64_t blocks = GMC_PAGE_SIZE >> GMC_SWIZZLE_BLOCK_SHIFT;
    const uint64_t page = off & ~(uint64_t)(GMC_PAGE_SIZE - 1u);
    const uint64_t b = (off % GMC_PAGE_SIZE) >> GMC_SWIZZLE_BLOCK_SHIFT;
    const uint64_t in = off & (GMC_SWIZZLE_BLOCK_BYTES - 1u);
    return page + (((GMC_SWIZZLE_STRIDE * b + GMC_SWIZZLE_OFFSET) % blocks) << GMC_SWIZZLE_BLOCK_SHIFT) + in;
}

static struct gmc_side side_at(const struct gmc_paging_side *s, uint64_t mdl_offset, uint64_t pos)
{
    struct gmc_side r = {0, 0, 0, 0};
    if (s->segment_id != 0) {
        r.addr = s->segment_address + pos;
    } else {
        r.mdl = 1;
        r.addr = s->mdl->mdl_bus;
        r.page = (uint32_t)(mdl_offset + pos / GMC_PAGE_SIZE);
        r.offset = (uint32_t)(pos % GMC_PAGE_SIZE);
    }
    return r;
}

/* The packet for units [done, done + n) of a checked operation. */
static struct gmc_pkt encode(const struct gmc_paging_target *t, const struct gmc_paging_args *a, uint64_t done,
                             uint64_t n)
{
    switch (a->op) {
    case GMC_PAGING_TRANSFER: {
        const uint64_t pos = a->u.transfer.transfer_offset + done;
        const uint32_t fl = a->u.transfer.flags;
        const uint64_t sp = (fl & GMC_PAGING_TRANSFER_UNSWIZZLE) ? gmc_swizzle_offset(pos) : pos;
        const uint64_t dp = (fl & GMC_PAGING_TRANSFER_SWIZZLE) ? gmc_swizzle_offset(pos) : pos;
        return gmc_pkt_transfer(side_at(&a->u.transfer.src, a->u.transfer.mdl_offset, sp),
                                side_at(&a->u.transfer.dst, a->u.transfer.mdl_offset, dp), (uint32_t)n);
    }
    case GMC_PAGING_FILL:
        return gmc_pkt_fill((uint32_t)(a->u.fill.gpu_address + done), (uint32_t)n, a->u.fill.pattern);
    case GMC_PAGING_DISCARD_CONTENT:
        return gmc_pkt_discard((uint32_t)(a->u.fill.gpu_address + done), (uint32_t)n, a->u.fill.poison != 0);
    case GMC_PAGING_READ_PHYSICAL:
        return gmc_pkt_read_physical(a->u.physical.address, a->u.physical.gpu != 0, a->u.physical.size);
    case GMC_PAGING_WRITE_PHYSICAL: {
        const unsigned sz = a->u.physical.size;
        const uint64_t v = sz == 8u ? a->u.physical.value : a->u.physical.value & ((1ull << (8u * sz)) - 1u);
        return gmc_pkt_write_physical(a->u.physical.address, a->u.physical.gpu != 0, sz, v);
    }
    case GMC_PAGING_MAP_APERTURE_SEGMENT:
        return gmc_pkt_map_aperture((uint32_t)(a->u.map.gpu_address + done * GMC_PAGE_SIZE), (uint32_t)n,
                                    a->u.map.mdl->mdl_bus, (uint32_t)(a->u.map.mdl_offset + done),
                                    a->u.map.snooped != 0, a->u.map.readable != 0, a->u.map.writeable != 0);
    case GMC_PAGING_UNMAP_APERTURE_SEGMENT:
        return gmc_pkt_unmap_aperture((uint32_t)(a->u.map.gpu_address + done * GMC_PAGE_SIZE), (uint32_t)n);
    case GMC_PAGING_FLUSH_TLB:
        return gmc_pkt_flush_tlb();
    case GMC_PAGING_NOTIFY_RESIDENCY:
        return gmc_pkt_write_physical(t->notify_bus, 0, 8u, t->notify_seq << 1 | (a->u.notify.resident != 0));
    case GMC_PAGING_SIGNAL:
    default:
        return gmc_pkt_fence(a->u.signal.value, t->fence_bus, 1, a->u.signal.irq != 0);
    }
}

int gmc_build_paging_buffer(const struct gmc_paging_target *t, struct gmc_pbuf *buf,
                            struct gmc_paging_args *args)
{
    struct plan p;
    if (t == NULL || buf == NULL || args == NULL || buf->host == NULL)
        return GMC_E_NULL_POINTER;
    if (buf->size < GMC_PKT_BYTES || buf->size % GMC_PKT_BYTES != 0 || buf->used % GMC_PKT_BYTES != 0 ||
        buf->used > buf->size || !target_ok(t))
        return GMC_E_INVALID_ARG;
    int rc = plan_op(t, args, &p);
    if (rc != GMC_OK)
        return rc;
    uint64_t done = args->multipass_offset;
    while (done < p.total) {
        if (buf->size - buf->used < GMC_PKT_BYTES) {
            args->multipass_offset = done;
            return GMC_E_BUFFER_FULL;
        }
        const uint64_t n = p.total - done < p.step ? p.total - done : p.step;
        const struct gmc_pkt pk = encode(t, args, done, n);
        gmc_pkt_store(buf->host + buf->used, &pk);
        buf->used += GMC_PKT_BYTES;
        done += n;
    }
    args->multipass_offset = 0;
    return GMC_OK;
}
