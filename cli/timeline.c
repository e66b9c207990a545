/*
 * timeline.c - the recorded run: growing arrays, hashing, byte counts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "timeline.h"

void tl_free(struct timeline *tl)
{
    if (tl == NULL)
        return;
    free(tl->entities);
    free(tl->intervals);
    free(tl->steps);
    tl->entities = NULL;
    tl->intervals = NULL;
    tl->steps = NULL;
    tl->nentities = tl->nintervals = tl->nsteps = 0;
    tl->cap_intervals = tl->cap_steps = 0;
}

int tl_add_interval(struct timeline *tl, const struct tl_interval *iv)
{
    if (tl->nintervals == tl->cap_intervals) {
        unsigned nc = tl->cap_intervals ? tl->cap_intervals * 2 : 256;
        struct tl_interval *n = realloc(tl->intervals, nc * sizeof(*n));
        if (n == NULL)
            return -1;
        tl->intervals = n;
        tl->cap_intervals = nc;
    }
    tl->intervals[tl->nintervals++] = *iv;
    return 0;
}

int tl_add_step(struct timeline *tl, const struct tl_step *st)
{
    if (tl->nsteps == tl->cap_steps) {
        unsigned nc = tl->cap_steps ? tl->cap_steps * 2 : 256;
        struct tl_step *n = realloc(tl->steps, nc * sizeof(*n));
        if (n == NULL)
            return -1;
        tl->steps = n;
        tl->cap_steps = nc;
    }
    tl->steps[tl->nsteps++] = *st;
    return 0;
}

uint64_t tl_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void tl_bytes(uint64_t v, char *buf, size_t n)
{
    if (v < 1024u)
        snprintf(buf, n, "%" PRIu64 " B", v);
    else if (v < (1u << 20))
        snprintf(buf, n, "%.1f KiB", (double)v / 1024.0);
    else if (v < (1u << 30))
        snprintf(buf, n, "%.1f MiB", (double)v / (1024.0 * 1024.0));
    else
        snprintf(buf, n, "%.2f GiB", (double)v / (1024.0 * 1024.0 * 1024.0));
}

void tl_bytes_exact(uint64_t v, char *buf, size_t n)
{
    if (v != 0 && v % (1u << 20) == 0)
        snprintf(buf, n, "%" PRIu64 " MiB", v >> 20);
    else if (v != 0 && v % 1024u == 0)
        snprintf(buf, n, "%" PRIu64 " KiB", v >> 10);
    else
        snprintf(buf, n, "%" PRIu64 " B", v);
}
