/*
 * gmc_cache.h - the CPU's data cache over the system copies of Cached
 * allocations (gmc_cache.c; private to the host library,
 * docs/residency.md "CPU cache").
 *
 * DOC: Overview
 *
 * A Cached allocation's system copy is mapped cacheable (seed 000: by
 * default the backing store is write-combined). CPU reads and writes
 * through a lock's system mapping (gmc_lock_read/gmc_lock_write) go
 * through a modelled write-back cache of the device: writes stay in
 * lines until written back, reads are served from lines. The DMA engine
 * reads and writes memory itself, so the manager keeps the two coherent:
 * before the GPU reaches the system copy through a path that is not
 * cache-coherent (a TRANSFER to or from a memory segment through the
 * MDL, a map into an aperture without CacheCoherent) it flushes the
 * allocation's lines (write back, then drop), and before the CPU reads
 * the copy after such a GPU write it invalidates them. A CacheCoherent
 * aperture snoops: the model writes the lines back at the same point,
 * and no flush is counted.
 */
#ifndef GMC_CACHE_H
#define GMC_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "gmc_vobj.h"

#define GMC_CACHE_LINE 64u   /* bytes per line */
#define GMC_CACHE_LINES 512u /* lines: 32 KiB, fully associative, least recently used out */

/* CPU access to [mem, mem + len) of a Cached allocation's system copy. */
void gmc_cache_read(gmc_device *dev, const uint8_t *mem, void *buf, size_t len);
void gmc_cache_write(gmc_device *dev, uint8_t *mem, const void *buf, size_t len);
/* The GPU is about to reach a's system copy (reads, and writes when
 * gpu_writes), coherently (a CacheCoherent aperture) or not. */
void gmc_cache_gpu_access(gmc_device *dev, struct gmc_valloc *a, int coherent, int gpu_writes);
/* The CPU is about to read a's system copy through a lock. */
void gmc_cache_cpu_access(gmc_device *dev, struct gmc_valloc *a);
/* The library writes the whole copy itself (a fill) or frees it: write
 * back and drop its lines (not cache maintenance for the GPU: uncounted). */
void gmc_cache_release(gmc_device *dev, const struct gmc_sysbuf *b);
/* Free the model (device close). */
void gmc_cache_free(gmc_device *dev);

#endif /* GMC_CACHE_H */
