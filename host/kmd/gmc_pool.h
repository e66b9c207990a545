/*
 * gmc_pool.h - system memory the gmc DMA engine reaches (private to the
 * host library; docs/paging.md).
 *
 * DOC: Overview
 *
 * Page-aligned host memory mapped at bus addresses through the backend's
 * host_map, each buffer with an MDL (an array of 64-bit page bus addresses,
 * in system memory too) so a TRANSFER or MAP_APERTURE can walk it. Buffers
 * come from a pool that grows in chunks (one backend host region per chunk,
 * not per buffer; a buffer larger than a chunk gets a chunk of its own),
 * sub-allocated in pages with the range manager (gmc_range.h); existing
 * user memory (ExistingSysMem) is wrapped in a region of its own.
 *
 * The pool knows the backend's operation table and nothing of the paging
 * queue (gmc_paging.h), which owns one pool and allocates its ring, paging
 * buffers and fence page from it.
 */
#ifndef GMC_POOL_H
#define GMC_POOL_H

#include <stdint.h>

#include "gmc_backend.h"
#include "gmc_range.h"

/* Bus addresses the pool hands out lie below this. */
#define GMC_POOL_BUS_LIMIT (1ull << 48)

/* System memory the DMA engine reaches. */
struct gmc_sysbuf {
    uint8_t *host;     /* host view of the bytes */
    uint64_t bus;      /* bus address of the first byte (page aligned) */
    uint64_t size;     /* bytes, a page multiple */
    uint64_t mdl_bus;  /* bus address of the MDL: one 64-bit entry per page */
    uint32_t npages;   /* MDL entries */
    uint32_t priv;     /* owner's bookkeeping (pool chunk / wrapped region) */
};

struct gmc_pool_chunk;
struct gmc_pool_rec;

/* One pool. Its fields are the pool's own; callers only embed it. */
struct gmc_pool {
    const struct gmc_backend_ops *be;
    void *ctx;
    uint64_t chunk_bytes;            /* growth step, bytes (a page multiple) */
    struct gmc_range_mgr bus_space;  /* bus addresses: chunks and wrapped regions */
    struct gmc_pool_chunk **chunks;
    uint32_t nchunks, chunk_cap;
    struct gmc_pool_rec **recs;      /* buffers, named by index + 1 (gmc_sysbuf.priv) */
    uint32_t nrecs, rec_cap, free_head;
};

/* An empty pool handing out bus addresses from bus_base (< GMC_POOL_BUS_LIMIT)
 * in chunks of chunk_bytes. Nothing is allocated yet. */
void gmc_pool_init(struct gmc_pool *pl, const struct gmc_backend_ops *be, void *ctx, uint64_t bus_base,
                   uint64_t chunk_bytes);
/* Unmap and free everything, every buffer included. */
void gmc_pool_fini(struct gmc_pool *pl);

/* A zeroed buffer of `bytes` (rounded up to pages).
 * GMC_E_NO_MEMORY when the host or the bus address space is exhausted. */
int gmc_pool_alloc(struct gmc_pool *pl, uint64_t bytes, struct gmc_sysbuf *out);
/* Wrap existing page-aligned memory (ExistingSysMem) as a buffer: the
 * engine reads and writes `ptr` directly. GMC_E_SYSMEM_ALIASES when it
 * overlaps memory of the pool or another wrapped buffer. */
int gmc_pool_wrap(struct gmc_pool *pl, void *ptr, uint64_t bytes, struct gmc_sysbuf *out);
/* Release a buffer (wrapped memory is unmapped, not freed). NULL or a
 * zeroed or stale struct is ignored. */
void gmc_pool_free(struct gmc_pool *pl, struct gmc_sysbuf *b);

#endif /* GMC_POOL_H */
