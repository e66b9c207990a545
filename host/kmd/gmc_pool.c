/*
 * gmc_pool.c - system memory the DMA engine reaches (see gmc_pool.h,
 * docs/paging.md).
 *
 * DOC: Overview
 *
 * Bus addresses from bus_base up are handed out by a range manager
 * (bus_space) in whole regions; a pool chunk is one region (aligned_alloc'ed
 * host memory mapped with the backend's host_map) whose bytes a second range
 * manager sub-allocates: buffers in whole pages, MDLs in 64-byte granules
 * (best fit, so MDLs fill the gaps between buffers). A wrapped buffer is a
 * region of its own, with its MDL from the pool. Buffers are named by a
 * record index (gmc_sysbuf.priv). A chunk made for one buffer larger than
 * chunk_bytes is released when it empties; of the others one empty chunk is
 * kept as a spare.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmc_pool.h"
#include "gmc_range.h"
#include "gmc_regs.h"
#include "gmc_status.h"

#define MDL_GRAIN 64u

/* ------------------------------------------------------------ structures */

struct gmc_pool_chunk {
    uint8_t *host;
    uint64_t bus, size;
    uint64_t users;                /* ranges allocated in it */
    struct gmc_range_node bus_node; /* in gmc_pool.bus_space */
    struct gmc_range_mgr mgr;      /* its pages, by bus address */
};

struct gmc_pool_rec {
    int used;
    uint32_t next_free;            /* free list (index + 1; 0 = end) */
    struct gmc_pool_chunk *chunk;           /* pool buffer: its pages */
    struct gmc_range_node node;    /* in chunk->mgr */
    struct gmc_pool_chunk *mdl_chunk;       /* its MDL */
    struct gmc_range_node mdl_node;
    int wrapped;
    struct gmc_range_node region;  /* wrapped: its region in bus_space */
    uint8_t *host;
    uint64_t bus, size;
};

/* ---------------------------------------------------------------- helpers */

static void put_le64(uint8_t *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t round_pages(uint64_t bytes)
{
    return (bytes + GMC_PAGE_SIZE - 1u) & ~(uint64_t)(GMC_PAGE_SIZE - 1u);
}

/* ----------------------------------------------------------------- chunks */

static void chunk_release(struct gmc_pool *pl, uint32_t i)
{
    struct gmc_pool_chunk *c = pl->chunks[i];
    pl->be->host_unmap(pl->ctx, c->bus);
    gmc_range_fini(&c->mgr);
    gmc_range_remove(&pl->bus_space, &c->bus_node);
    free(c->host);
    free(c);
    pl->chunks[i] = pl->chunks[--pl->nchunks];
}

/* A new chunk of `size` bytes (a page multiple). */
static int chunk_new(struct gmc_pool *pl, uint64_t size, struct gmc_pool_chunk **out)
{
    if (pl->nchunks == pl->chunk_cap) {
        uint32_t cap = pl->chunk_cap ? 2u * pl->chunk_cap : 8u;
        struct gmc_pool_chunk **n = realloc(pl->chunks, cap * sizeof(*n));
        if (n == NULL)
            return GMC_E_NO_MEMORY;
        pl->chunks = n;
        pl->chunk_cap = cap;
    }
    if (size > SIZE_MAX)
        return GMC_E_NO_MEMORY;
    struct gmc_pool_chunk *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return GMC_E_NO_MEMORY;
    c->host = aligned_alloc(GMC_PAGE_SIZE, (size_t)size);
    if (c->host == NULL) {
        free(c);
        return GMC_E_NO_MEMORY;
    }
    if (gmc_range_insert(&pl->bus_space, &c->bus_node, size, GMC_PAGE_SIZE, GMC_RANGE_LOW) != GMC_RANGE_OK) {
        free(c->host);
        free(c);
        return GMC_E_NO_MEMORY;
    }
    c->bus = c->bus_node.start;
    c->size = size;
    gmc_range_init(&c->mgr, c->bus, size);
    int rc = pl->be->host_map(pl->ctx, c->bus, c->host, (size_t)size);
    if (rc != GMC_OK) {
        gmc_range_fini(&c->mgr);
        gmc_range_remove(&pl->bus_space, &c->bus_node);
        free(c->host);
        free(c);
        return rc;
    }
    pl->chunks[pl->nchunks++] = c;
    *out = c;
    return GMC_OK;
}

/* `bytes` of pool memory aligned to `align`: best fit in an existing chunk,
 * else a new chunk (pool_chunk, or the request's pages when larger). */
static int pool_get(struct gmc_pool *pl, uint64_t bytes, uint64_t align, struct gmc_pool_chunk **out,
                    struct gmc_range_node *node)
{
    for (uint32_t i = 0; i < pl->nchunks; i++) {
        struct gmc_pool_chunk *c = pl->chunks[i];
        if (c->size < bytes)
            continue;
        if (gmc_range_insert(&c->mgr, node, bytes, align, GMC_RANGE_BEST) == GMC_RANGE_OK) {
            c->users++;
            *out = c;
            return GMC_OK;
        }
    }
    struct gmc_pool_chunk *c = NULL;
    int rc = chunk_new(pl, bytes > pl->chunk_bytes ? round_pages(bytes) : pl->chunk_bytes, &c);
    if (rc != GMC_OK)
        return rc;
    gmc_range_insert(&c->mgr, node, bytes, align, GMC_RANGE_BEST);
    c->users++;
    *out = c;
    return GMC_OK;
}

/* Return a range. An empty chunk is released when it was made for one
 * large buffer or another empty chunk is kept already (a spare, so that
 * alloc/free pairs do not map and unmap). */
static void pool_put(struct gmc_pool *pl, struct gmc_pool_chunk *c, struct gmc_range_node *node)
{
    gmc_range_remove(&c->mgr, node);
    if (--c->users != 0)
        return;
    int release = c->size > pl->chunk_bytes;
    for (uint32_t i = 0; i < pl->nchunks && !release; i++)
        release = pl->chunks[i] != c && pl->chunks[i]->users == 0 && pl->chunks[i]->size <= pl->chunk_bytes;
    if (!release)
        return;
    for (uint32_t k = 0; k < pl->nchunks; k++)
        if (pl->chunks[k] == c) {
            chunk_release(pl, k);
            return;
        }
}

static uint8_t *chunk_host(const struct gmc_pool_chunk *c, uint64_t bus)
{
    return c->host + (bus - c->bus);
}

/* A free record (the table grows first, so later steps cannot fail on it). */
static int rec_take(struct gmc_pool *pl, uint32_t *idx)
{
    if (pl->free_head != 0) {
        *idx = pl->free_head - 1u;
        return GMC_OK;
    }
    if (pl->nrecs == UINT32_MAX - 1u)
        return GMC_E_NO_MEMORY;
    if (pl->nrecs == pl->rec_cap) {
        uint32_t cap = pl->rec_cap ? 2u * pl->rec_cap : 16u;
        struct gmc_pool_rec **n = realloc(pl->recs, cap * sizeof(*n));
        if (n == NULL)
            return GMC_E_NO_MEMORY;
        pl->recs = n;
        pl->rec_cap = cap;
    }
    struct gmc_pool_rec *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return GMC_E_NO_MEMORY;
    pl->recs[pl->nrecs] = r;
    r->next_free = pl->free_head;
    pl->free_head = ++pl->nrecs;
    *idx = pl->nrecs - 1u;
    return GMC_OK;
}

static void rec_commit(struct gmc_pool *pl, uint32_t idx)
{
    struct gmc_pool_rec *r = pl->recs[idx];
    pl->free_head = r->next_free;
    r->next_free = 0;
    r->used = 1;
}

static void rec_release(struct gmc_pool *pl, uint32_t idx)
{
    struct gmc_pool_rec *r = pl->recs[idx];
    memset(r, 0, sizeof(*r));
    r->next_free = pl->free_head;
    pl->free_head = idx + 1u;
}

/* MDL bytes of a buffer of `size` bytes, in granules. */
static uint64_t mdl_bytes(uint64_t size)
{
    return (8u * (size / GMC_PAGE_SIZE) + MDL_GRAIN - 1u) & ~(uint64_t)(MDL_GRAIN - 1u);
}

static void fill_mdl(uint8_t *mdl, uint64_t bus, uint64_t npages)
{
    for (uint64_t i = 0; i < npages; i++) put_le64(mdl + 8u * i, bus + i * GMC_PAGE_SIZE);
}

static void sysbuf_out(struct gmc_sysbuf *out, const struct gmc_pool_rec *r, uint64_t mdl_bus, uint32_t idx)
{
    out->host = r->host;
    out->bus = r->bus;
    out->size = r->size;
    out->mdl_bus = mdl_bus;
    out->npages = (uint32_t)(r->size / GMC_PAGE_SIZE);
    out->priv = idx + 1u;
}

/* Largest buffer: npages must fit the 32-bit count. */
#define SYSBUF_MAX ((uint64_t)UINT32_MAX * GMC_PAGE_SIZE)

int gmc_pool_alloc(struct gmc_pool *pl, uint64_t bytes, struct gmc_sysbuf *out)
{
    if (out != NULL)
        memset(out, 0, sizeof(*out));
    if (pl == NULL || out == NULL)
        return GMC_E_NULL_POINTER;
    if (bytes == 0)
        return GMC_E_INVALID_ARG;
    if (bytes > SYSBUF_MAX || bytes > GMC_POOL_BUS_LIMIT)
        return GMC_E_NO_MEMORY;
    const uint64_t size = round_pages(bytes);
    uint32_t idx;
    int rc = rec_take(pl, &idx);
    if (rc != GMC_OK)
        return rc;
    struct gmc_pool_rec *r = pl->recs[idx];
    rc = pool_get(pl, size, GMC_PAGE_SIZE, &r->chunk, &r->node);
    if (rc != GMC_OK)
        return rc;
    rc = pool_get(pl, mdl_bytes(size), MDL_GRAIN, &r->mdl_chunk, &r->mdl_node);
    if (rc != GMC_OK) {
        pool_put(pl, r->chunk, &r->node);
        r->chunk = NULL;
        return rc;
    }
    rec_commit(pl, idx);
    r->bus = r->node.start;
    r->size = size;
    r->host = chunk_host(r->chunk, r->bus);
    memset(r->host, 0, (size_t)size);
    fill_mdl(chunk_host(r->mdl_chunk, r->mdl_node.start), r->bus, size / GMC_PAGE_SIZE);
    sysbuf_out(out, r, r->mdl_node.start, idx);
    return GMC_OK;
}

/* Whether host bytes [p, p + n) overlap memory the library owns (a pool
 * chunk: system copies, MDLs, the engine's ring, buffers and fence page,
 * hence every system lock mapping) or has wrapped for another buffer. */
static int host_overlaps(const struct gmc_pool *pl, const uint8_t *p, uint64_t n)
{
    uintptr_t lo = (uintptr_t)p, hi = lo + (uintptr_t)n;
    for (uint32_t i = 0; i < pl->nchunks; i++) {
        const struct gmc_pool_chunk *c = pl->chunks[i];
        if (c == NULL || c->host == NULL)
            continue;
        uintptr_t clo = (uintptr_t)c->host, chi = clo + (uintptr_t)c->size;
        if (lo < chi && clo < hi)
            return 1;
    }
    for (uint32_t i = 0; i < pl->nrecs; i++) {
        const struct gmc_pool_rec *r = pl->recs[i];
        if (r == NULL || !r->used || !r->wrapped || r->host == NULL)
            continue;
        uintptr_t rlo = (uintptr_t)r->host, rhi = rlo + (uintptr_t)r->size;
        if (lo < rhi && rlo < hi)
            return 1;
    }
    return 0;
}

int gmc_pool_wrap(struct gmc_pool *pl, void *ptr, uint64_t bytes, struct gmc_sysbuf *out)
{
    if (out != NULL)
        memset(out, 0, sizeof(*out));
    if (pl == NULL || out == NULL || ptr == NULL)
        return GMC_E_NULL_POINTER;
    if (bytes == 0 || bytes % GMC_PAGE_SIZE != 0 || (uintptr_t)ptr % GMC_PAGE_SIZE != 0 || bytes > SIZE_MAX)
        return GMC_E_INVALID_ARG;
    if ((uintptr_t)ptr > UINTPTR_MAX - (uintptr_t)bytes)
        return GMC_E_OVERFLOW;
    if (host_overlaps(pl, ptr, bytes))
        return GMC_E_SYSMEM_ALIASES;
    if (bytes > SYSBUF_MAX || bytes > GMC_POOL_BUS_LIMIT)
        return GMC_E_NO_MEMORY;
    uint32_t idx;
    int rc = rec_take(pl, &idx);
    if (rc != GMC_OK)
        return rc;
    struct gmc_pool_rec *r = pl->recs[idx];
    if (gmc_range_insert(&pl->bus_space, &r->region, bytes, GMC_PAGE_SIZE, GMC_RANGE_LOW) != GMC_RANGE_OK)
        return GMC_E_NO_MEMORY;
    rc = pool_get(pl, mdl_bytes(bytes), MDL_GRAIN, &r->mdl_chunk, &r->mdl_node);
    if (rc == GMC_OK) {
        rc = pl->be->host_map(pl->ctx, r->region.start, ptr, (size_t)bytes);
        if (rc != GMC_OK)
            pool_put(pl, r->mdl_chunk, &r->mdl_node);
    }
    if (rc != GMC_OK) {
        gmc_range_remove(&pl->bus_space, &r->region);
        r->mdl_chunk = NULL;
        return rc;
    }
    rec_commit(pl, idx);
    r->wrapped = 1;
    r->bus = r->region.start;
    r->size = bytes;
    r->host = ptr;
    fill_mdl(chunk_host(r->mdl_chunk, r->mdl_node.start), r->bus, bytes / GMC_PAGE_SIZE);
    sysbuf_out(out, r, r->mdl_node.start, idx);
    return GMC_OK;
}

void gmc_pool_free(struct gmc_pool *pl, struct gmc_sysbuf *b)
{
    if (pl == NULL || b == NULL || b->priv == 0 || b->priv > pl->nrecs)
        return;
    const uint32_t idx = b->priv - 1u;
    struct gmc_pool_rec *r = pl->recs[idx];
    if (!r->used || r->bus != b->bus || r->host != b->host)
        return;
    if (r->wrapped) {
        pl->be->host_unmap(pl->ctx, r->bus);
        gmc_range_remove(&pl->bus_space, &r->region);
    } else {
        pool_put(pl, r->chunk, &r->node);
    }
    pool_put(pl, r->mdl_chunk, &r->mdl_node);
    rec_release(pl, idx);
    memset(b, 0, sizeof(*b));
}

/* ------------------------------------------------------------- lifecycle */

void gmc_pool_init(struct gmc_pool *pl, const struct gmc_backend_ops *be, void *ctx, uint64_t bus_base,
                   uint64_t chunk_bytes)
{
    memset(pl, 0, sizeof(*pl));
    pl->be = be;
    pl->ctx = ctx;
    pl->chunk_bytes = chunk_bytes;
    gmc_range_init(&pl->bus_space, bus_base, GMC_POOL_BUS_LIMIT - bus_base);
}

void gmc_pool_fini(struct gmc_pool *pl)
{
    for (uint32_t i = 0; i < pl->nrecs; i++) {
        struct gmc_pool_rec *r = pl->recs[i];
        if (r->used && r->wrapped)
            pl->be->host_unmap(pl->ctx, r->bus);
        free(r);
    }
    free(pl->recs);
    while (pl->nchunks > 0) {
        struct gmc_pool_chunk *c = pl->chunks[pl->nchunks - 1u];
        pl->be->host_unmap(pl->ctx, c->bus);
        free(c->host);
        free(c);
        pl->nchunks--;
    }
    free(pl->chunks);
    memset(pl, 0, sizeof(*pl));
}
