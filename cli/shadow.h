/*
 * shadow.h - the executor's record of what a trace wrote into one
 * allocation (cli/exec.c), kept sparse: host memory grows with the bytes
 * written, never with the allocation's size (a 1 TiB allocation that
 * receives one 4 KiB write costs one chunk).
 *
 * The allocation is cut into SH_CHUNK-byte chunks; a chunk exists once a
 * byte of it was written (write, GPU fill, GPU copy of known bytes) and
 * holds the expected bytes and one "known" byte per byte. A byte nobody
 * wrote is unknown and never compared. Functions that may allocate return
 * 0 or -1 (out of memory: the shadow is unchanged up to the failing chunk).
 */
#ifndef GMC_CLI_SHADOW_H
#define GMC_CLI_SHADOW_H

#include <stddef.h>
#include <stdint.h>

#define SH_CHUNK (64u * 1024u)

struct sh_chunk {
    uint64_t idx;    /* offset / SH_CHUNK */
    uint8_t *data;   /* SH_CHUNK expected bytes */
    uint8_t *known;  /* SH_CHUNK flags: 1 = written */
};

struct shadow {
    struct sh_chunk *c; /* sorted by idx */
    size_t n, cap;
};

int sh_write(struct shadow *s, uint64_t off, const uint8_t *src, uint64_t n);
/* The 32-bit pattern laid down little-endian from offset 0 of the allocation. */
int sh_fill32(struct shadow *s, uint64_t off, uint64_t n, uint32_t pattern);
/* dst[doff, doff+n) := src[soff, soff+n), known flags included (unknown
 * source bytes make the destination bytes unknown). The two ranges must
 * not share bytes when src == dst (the library refuses such copies). */
int sh_copy(struct shadow *dst, uint64_t doff, const struct shadow *src, uint64_t soff, uint64_t n);
/* Nothing is known any more (content lost or discarded); frees the chunks. */
void sh_forget(struct shadow *s);
int sh_any_known(const struct shadow *s);
/* Compare buf (n bytes read at off) with the known bytes: returns 1 and
 * sets *at (offset in the allocation) and *want at the first difference,
 * else 0. *checked counts the known bytes compared. */
int sh_compare(const struct shadow *s, uint64_t off, const uint8_t *buf, uint64_t n, uint64_t *at, uint8_t *want,
               uint64_t *checked);
/* Host bytes the shadow holds (chunks only). */
uint64_t sh_bytes(const struct shadow *s);
void sh_free(struct shadow *s);

#endif
