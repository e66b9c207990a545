/*
 * gmc_cache.c - the modelled CPU data cache over Cached allocations'
 * system copies, and the flushes that keep the GPU's view coherent with
 * it (gmc_cache.h).
 */
#include <stdlib.h>
#include <string.h>

#include "gmc_cache.h"

struct gmc_cache_line {
    uint8_t *mem;   /* line-aligned address the line caches; NULL: empty */
    uint64_t used;  /* tick of the last access (least recently used goes) */
    int dirty;
    uint8_t data[GMC_CACHE_LINE];
};

struct gmc_cpu_cache {
    uint64_t tick;
    struct gmc_cache_line line[GMC_CACHE_LINES];
};

static struct gmc_cpu_cache *cache(gmc_device *dev)
{
    if (dev->cpu_cache == NULL)
        dev->cpu_cache = calloc(1, sizeof(*dev->cpu_cache));
    return dev->cpu_cache;
}

static void write_back(struct gmc_cache_line *l)
{
    if (l->mem != NULL && l->dirty)
        memcpy(l->mem, l->data, GMC_CACHE_LINE);
    l->dirty = 0;
}

/* The line holding `base` (line-aligned), filled from memory on a miss. */
static struct gmc_cache_line *lookup(struct gmc_cpu_cache *c, uint8_t *base)
{
    struct gmc_cache_line *victim = &c->line[0];
    c->tick++;
    for (unsigned i = 0; i < GMC_CACHE_LINES; i++) {
        struct gmc_cache_line *l = &c->line[i];
        if (l->mem == base) {
            l->used = c->tick;
            return l;
        }
        if (victim->mem != NULL && (l->mem == NULL || l->used < victim->used))
            victim = l;
    }
    write_back(victim);
    victim->mem = base;
    victim->used = c->tick;
    memcpy(victim->data, base, GMC_CACHE_LINE);
    return victim;
}

/* System copies are page-aligned pool or caller memory, so every line
 * lies inside one copy. */
static uint8_t *line_base(const uint8_t *p)
{
    return (uint8_t *)((uintptr_t)p & ~(uintptr_t)(GMC_CACHE_LINE - 1u));
}

static void cached_access(gmc_device *dev, uint8_t *mem, uint8_t *rbuf, const uint8_t *wbuf, size_t len)
{
    struct gmc_cpu_cache *c = cache(dev);
    if (c == NULL) { /* no memory for the model: uncached access */
        if (rbuf != NULL)
            memcpy(rbuf, mem, len);
        else
            memcpy(mem, wbuf, len);
        return;
    }
    while (len > 0u) {
        uint8_t *base = line_base(mem);
        size_t at = (size_t)(mem - base);
        size_t n = GMC_CACHE_LINE - at < len ? GMC_CACHE_LINE - at : len;
        struct gmc_cache_line *l = lookup(c, base);
        if (rbuf != NULL) {
            memcpy(rbuf, l->data + at, n);
            rbuf += n;
        } else {
            memcpy(l->data + at, wbuf, n);
            l->dirty = 1;
            wbuf += n;
        }
        mem += n;
        len -= n;
    }
}

void gmc_cache_read(gmc_device *dev, const uint8_t *mem, void *buf, size_t len)
{
    cached_access(dev, (uint8_t *)(uintptr_t)mem, buf, NULL, len);
}

void gmc_cache_write(gmc_device *dev, uint8_t *mem, const void *buf, size_t len)
{
    cached_access(dev, mem, NULL, buf, len);
}

/* Write back (when wb) and drop the lines of [mem, mem + size). */
static void drop(gmc_device *dev, const uint8_t *mem, uint64_t size, int wb)
{
    struct gmc_cpu_cache *c = dev->cpu_cache;
    if (c == NULL || mem == NULL)
        return;
    for (unsigned i = 0; i < GMC_CACHE_LINES; i++) {
        struct gmc_cache_line *l = &c->line[i];
        if (l->mem == NULL || l->mem < mem || (uint64_t)(l->mem - mem) >= size)
            continue;
        if (wb)
            write_back(l);
        l->mem = NULL;
        l->dirty = 0;
    }
}

void gmc_cache_gpu_access(gmc_device *dev, struct gmc_valloc *a, int coherent, int gpu_writes)
{
    if (!(a->desc.flags & GMC_ALLOC_CACHED) || a->sys.host == NULL)
        return;
    if (coherent) {
        drop(dev, a->sys.host, a->sys.size, 1); /* the hardware's snoop */
        return;
    }
    if (dev->cache_maintenance_off)
        return;
    drop(dev, a->sys.host, a->sys.size, 1);
    dev->stats.cache_flushes++;
    if (gpu_writes)
        a->cache_stale = 1;
}

void gmc_cache_cpu_access(gmc_device *dev, struct gmc_valloc *a)
{
    if (!(a->desc.flags & GMC_ALLOC_CACHED) || !a->cache_stale || dev->cache_maintenance_off)
        return;
    drop(dev, a->sys.host, a->sys.size, 0);
    a->cache_stale = 0;
    dev->stats.cache_invalidates++;
}

void gmc_cache_release(gmc_device *dev, const struct gmc_sysbuf *b)
{
    drop(dev, b->host, b->size, 1);
}

void gmc_cache_free(gmc_device *dev)
{
    free(dev->cpu_cache);
    dev->cpu_cache = NULL;
}
