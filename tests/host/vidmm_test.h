/*
 * vidmm_test.h - helpers shared by the residency, lock, power, TDR and soak
 * tests (test_resid.c, test_lock.c, test_power.c, test_tdr.c,
 * test_soak.c). Header-only: every helper is static inline, so a test that
 * does not use one does not warn.
 */
#ifndef VIDMM_TEST_H
#define VIDMM_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gmc.h"
#include "gmc_sim.h"
#include "gmc_test.h"
#include "gmc_test_device.h"
#include "gmc_fence.h"
#include "gmc_resid.h"
#include "gmc_vidmm.h"

#define KiB 1024u
#define MiB (1024u * 1024u)
#define PG 4096u

/* The default hardware (docs/hardware.md): segment 1 CPU-visible VRAM
 * (2 MiB), segment 2 banked VRAM, segment 3 the 16 MiB aperture. */
#define SEG_VIS 1u
#define SEG_VRAM 2u
#define SEG_AP 3u
#define BIT(id) GMC_SEGMENT_BIT(id)

#define assert_status(got, want) t_assert_status_at((got), (want), __FILE__, __LINE__)
static inline void t_assert_status_at(int got, int want, const char *file, int line)
{
    if (got != want)
        fail_msg("%s:%d: expected %s, got %s", file, line, gmc_status_name(want),
                 gmc_status_name(got));
}

#define ok(x) t_assert_status_at((x), GMC_OK, __FILE__, __LINE__)

/* Open a device from a string (NULL: the defaults). */
static inline gmc_device *t_open(const char *str)
{
    gmc_device *dev = NULL;
    struct gmc_open_report rep;
    int rc = str != NULL ? gmc_device_open_ex(str, &rep, &dev) : gmc_device_open_sim(NULL, &rep, &dev);
    if (rc != GMC_OK)
        fail_msg("open %s: %s", str != NULL ? str : "(defaults)", gmc_status_name(rc));
    return dev;
}

/* Close, failing on any AXI protocol violation the model saw. */
static inline void t_close(gmc_device *dev)
{
    gmc_sim *s = gmc_device_sim(dev);
    assert_non_null(s);
    char msg[256];
    uint64_t n = gmc_sim_protocol_violations(s, msg, sizeof msg);
    if (n != 0u)
        fail_msg("%llu AXI protocol violation(s); first: %s", (unsigned long long)n, msg);
    gmc_device_close(dev);
}

static inline gmc_client *t_client(gmc_device *dev)
{
    gmc_client *c = NULL;
    ok(gmc_client_create(dev, NULL, &c));
    return c;
}

/* A descriptor: size, flags, supported set; normal priority. */
static inline void t_desc(struct gmc_alloc_desc *d, uint64_t size, uint32_t flags, uint32_t segs)
{
    gmc_alloc_desc_init(d);
    d->size = size;
    d->flags = flags;
    d->supported_segments = segs;
}

static inline gmc_handle t_create(gmc_client *c, const struct gmc_alloc_desc *d)
{
    gmc_handle h = GMC_HANDLE_NONE;
    int rc = gmc_alloc_create(c, d, &h);
    if (rc != GMC_OK)
        fail_msg("create: %s", gmc_status_name(rc));
    return h;
}

static inline gmc_handle t_new(gmc_client *c, uint64_t size, uint32_t flags, uint32_t segs)
{
    struct gmc_alloc_desc d;
    t_desc(&d, size, flags, segs);
    return t_create(c, &d);
}

static inline struct gmc_alloc_info t_info(const gmc_client *c, gmc_handle h)
{
    struct gmc_alloc_info ai;
    ok(gmc_alloc_query(c, h, &ai));
    return ai;
}

static inline struct gmc_device_stats t_stats(const gmc_device *dev)
{
    struct gmc_device_stats st;
    ok(gmc_device_stats(dev, &st));
    return st;
}

static inline int t_resident1(gmc_client *c, gmc_handle h)
{
    return gmc_make_resident(c, &h, 1, NULL);
}

static inline int t_evict1(gmc_client *c, gmc_handle h)
{
    return gmc_evict(c, &h, 1);
}

/* Wait for everything queued (the library's internal wait). */
static inline void t_idle(gmc_device *dev)
{
    ok(gmc_fence_wait_all(dev));
}

/* Deterministic bytes: byte i of pattern `seed`. */
static inline uint8_t t_byte(uint64_t seed, uint64_t i)
{
    uint64_t x = (seed + 1u) * 0x9E3779B97F4A7C15ull + i * 0xD6E8FEB86659FD93ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (uint8_t)x;
}

/* b[0..len) holds pattern `seed`. */
static inline int t_bytes_are(const uint8_t *b, uint64_t len, uint64_t seed)
{
    for (uint64_t i = 0; i < len; i++)
        if (b[i] != t_byte(seed, i))
            return 0;
    return 1;
}

static inline void t_pattern(uint8_t *buf, uint64_t len, uint64_t seed)
{
    for (uint64_t i = 0; i < len; i++)
        buf[i] = t_byte(seed, i);
}

static inline uint64_t t_fnv(const void *p, uint64_t len)
{
    const uint8_t *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Write `len` pattern bytes through a one-shot write, and check them back. */
static inline void t_write_pattern(gmc_client *c, gmc_handle h, uint64_t len, uint64_t seed)
{
    uint8_t *b = malloc(len);
    assert_non_null(b);
    t_pattern(b, len, seed);
    ok(gmc_alloc_write(c, h, 0, b, len));
    free(b);
}

/* Read `len` bytes and compare with the pattern; returns nonzero on match. */
static inline int t_check_pattern(gmc_client *c, gmc_handle h, uint64_t len, uint64_t seed)
{
    uint8_t *b = malloc(len);
    assert_non_null(b);
    ok(gmc_alloc_read(c, h, 0, b, len));
    int good = t_bytes_are(b, len, seed);
    free(b);
    return good;
}

/* Compare VRAM bytes at addr with a pattern (after the paging completed). */
static inline int t_vram_is(gmc_device *dev, uint64_t addr, uint64_t len, uint64_t seed)
{
    uint8_t *b = malloc(len);
    assert_non_null(b);
    assert_int_equal(gmc_sim_vram_peek(gmc_device_sim(dev), addr, b, len), 0);
    int good = t_bytes_are(b, len, seed);
    free(b);
    return good;
}

/* Every VRAM byte at addr equal to the 32-bit pattern (byte a % 4). */
static inline int t_vram_filled(gmc_device *dev, uint64_t addr, uint64_t len, uint32_t pattern)
{
    uint8_t *b = malloc(len);
    assert_non_null(b);
    assert_int_equal(gmc_sim_vram_peek(gmc_device_sim(dev), addr, b, len), 0);
    int good = 1;
    for (uint64_t i = 0; i < len && good; i++)
        good = b[i] == (uint8_t)(pattern >> (8u * ((addr + i) & 3u)));
    free(b);
    return good;
}

/* One GPU copy or fill, waited for. */
static inline uint64_t t_copy(gmc_client *c, gmc_handle src, uint64_t soff, gmc_handle dst,
                              uint64_t doff, uint64_t size)
{
    struct gmc_submit_ref refs[2] = { { src, 0 }, { dst, GMC_REF_WRITE } };
    struct gmc_gpu_op op = { GMC_GPU_COPY, 0, 1, soff, doff, size, 0 };
    struct gmc_submit s = { refs, 2, &op, 1 };
    uint64_t f = 0;
    ok(gmc_submit(c, &s, &f));
    assert_true(f != 0u);
    return f;
}

static inline uint64_t t_fill(gmc_client *c, gmc_handle dst, uint64_t doff, uint64_t size,
                              uint32_t pattern)
{
    struct gmc_submit_ref ref = { dst, GMC_REF_WRITE };
    struct gmc_gpu_op op = { GMC_GPU_FILL, 0, 0, 0, doff, size, pattern };
    struct gmc_submit s = { &ref, 1, &op, 1 };
    uint64_t f = 0;
    ok(gmc_submit(c, &s, &f));
    assert_true(f != 0u);
    return f;
}

#endif /* VIDMM_TEST_H */
