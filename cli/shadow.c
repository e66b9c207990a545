/*
 * shadow.c - sparse expected content of an allocation (shadow.h).
 *
 * Chunks sit in an array sorted by index, found by binary search; a new
 * chunk is inserted in place. Traces write at most 64 MiB per operation,
 * so an operation touches at most 1024 chunks.
 */
#include <stdlib.h>
#include <string.h>

#include "shadow.h"

/* Index of the first chunk with idx >= want. */
static size_t lower(const struct shadow *s, uint64_t want)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2u;
        if (s->c[mid].idx < want)
            lo = mid + 1u;
        else
            hi = mid;
    }
    return lo;
}

static struct sh_chunk *find(const struct shadow *s, uint64_t idx)
{
    size_t i = lower(s, idx);
    return i < s->n && s->c[i].idx == idx ? &s->c[i] : NULL;
}

static struct sh_chunk *get(struct shadow *s, uint64_t idx)
{
    size_t i = lower(s, idx);
    if (i < s->n && s->c[i].idx == idx)
        return &s->c[i];
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2u : 8u;
        struct sh_chunk *c = realloc(s->c, nc * sizeof(*c));
        if (c == NULL)
            return NULL;
        s->c = c;
        s->cap = nc;
    }
    uint8_t *data = malloc(SH_CHUNK), *known = calloc(SH_CHUNK, 1);
    if (data == NULL || known == NULL) {
        free(data);
        free(known);
        return NULL;
    }
    memmove(&s->c[i + 1u], &s->c[i], (s->n - i) * sizeof(*s->c));
    s->c[i] = (struct sh_chunk){ idx, data, known };
    s->n++;
    return &s->c[i];
}

/* The piece of [off, off+n) that lies in off's chunk. */
static uint64_t piece(uint64_t off, uint64_t n)
{
    uint64_t room = SH_CHUNK - off % SH_CHUNK;
    return n < room ? n : room;
}

int sh_write(struct shadow *s, uint64_t off, const uint8_t *src, uint64_t n)
{
    while (n > 0u) {
        uint64_t k = piece(off, n);
        struct sh_chunk *c = get(s, off / SH_CHUNK);
        if (c == NULL)
            return -1;
        memcpy(c->data + off % SH_CHUNK, src, k);
        memset(c->known + off % SH_CHUNK, 1, k);
        off += k;
        src += k;
        n -= k;
    }
    return 0;
}

int sh_fill32(struct shadow *s, uint64_t off, uint64_t n, uint32_t pattern)
{
    while (n > 0u) {
        uint64_t k = piece(off, n);
        struct sh_chunk *c = get(s, off / SH_CHUNK);
        if (c == NULL)
            return -1;
        uint8_t *d = c->data + off % SH_CHUNK;
        for (uint64_t i = 0; i < k; i++)
            d[i] = (uint8_t)(pattern >> (((off + i) & 3u) * 8u));
        memset(c->known + off % SH_CHUNK, 1, k);
        off += k;
        n -= k;
    }
    return 0;
}

int sh_copy(struct shadow *dst, uint64_t doff, const struct shadow *src, uint64_t soff, uint64_t n)
{
    while (n > 0u) {
        uint64_t k = piece(doff, n);
        uint64_t ks = piece(soff, k);
        k = ks;
        const struct sh_chunk *sc = find(src, soff / SH_CHUNK);
        if (sc == NULL) {
            /* nothing known there: the destination bytes become unknown */
            struct sh_chunk *dc = find(dst, doff / SH_CHUNK);
            if (dc != NULL)
                memset(dc->known + doff % SH_CHUNK, 0, k);
        } else {
            uint64_t sidx = sc->idx;
            struct sh_chunk *dc = get(dst, doff / SH_CHUNK);
            if (dc == NULL)
                return -1;
            sc = find(src, sidx); /* get() may have moved the array when src == dst */
            memmove(dc->data + doff % SH_CHUNK, sc->data + soff % SH_CHUNK, k);
            memmove(dc->known + doff % SH_CHUNK, sc->known + soff % SH_CHUNK, k);
        }
        doff += k;
        soff += k;
        n -= k;
    }
    return 0;
}

void sh_forget(struct shadow *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->c[i].data);
        free(s->c[i].known);
    }
    s->n = 0;
}

int sh_any_known(const struct shadow *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (memchr(s->c[i].known, 1, SH_CHUNK) != NULL)
            return 1;
    return 0;
}

int sh_compare(const struct shadow *s, uint64_t off, const uint8_t *buf, uint64_t n, uint64_t *at, uint8_t *want,
               uint64_t *checked)
{
    *checked = 0;
    while (n > 0u) {
        uint64_t k = piece(off, n);
        const struct sh_chunk *c = find(s, off / SH_CHUNK);
        if (c != NULL) {
            const uint8_t *d = c->data + off % SH_CHUNK, *kn = c->known + off % SH_CHUNK;
            for (uint64_t i = 0; i < k; i++) {
                if (!kn[i])
                    continue;
                ++*checked;
                if (buf[i] != d[i]) {
                    *at = off + i;
                    *want = d[i];
                    return 1;
                }
            }
        }
        off += k;
        buf += k;
        n -= k;
    }
    return 0;
}

uint64_t sh_bytes(const struct shadow *s)
{
    return (uint64_t)s->n * 2u * SH_CHUNK;
}

void sh_free(struct shadow *s)
{
    sh_forget(s);
    free(s->c);
    s->c = NULL;
    s->cap = 0;
}
