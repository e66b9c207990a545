/*
 * bench_api.c - allocation throughput through the public API (rule table,
 * placement, handles, bookkeeping) against the bare range allocator it
 * places with, at 10,000 live allocations, in one run.
 *
 * Load: the load of bench_alloc.c (a 16 GiB segment; 4 KiB..64 KiB mostly,
 * up to 1 MiB often, up to 16 MiB rarely; 4 KiB aligned, 64 KiB aligned
 * from 1 MiB). The device is the simulated controller with that segment
 * strapped; no allocation touches VRAM, so the model is not stepped. After
 * filling and 20,000 untimed churn operations, each timed operation
 * destroys a random live allocation and creates a new random one. The
 * baseline replays the same requests on a gmc_range manager in
 * GMC_RANGE_BEST (the library's default), which is what the API's
 * placement policy reduces to for these descriptors; the bench checks
 * that both place every warm-up request at the same address.
 *
 * Output: one flat JSON object on stdout:
 *   api_alloc_ops_per_s          API create+destroy pairs per second
 *   api_range_ops_per_s          gmc_range insert+remove pairs per second
 *   api_vs_range                 api_alloc_ops_per_s / api_range_ops_per_s
 *   api_create_rules_ns          mean time of one gmc_rules_check_alloc()
 *   api_bytes_per_allocation     host bytes per live allocation in the
 *                                manager (allocation, handle record, slot),
 *                                without malloc's own overhead
 *   api_live                     live allocations during the timed phase
 *
 * Build: cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -Iinclude -Isim -Ihost/common -Ihost/backend -Ihost/kmd -Ihost/vidmm \
 *            bench/bench_api.c libgmc.a libgmc_sim.a -lz -pthread -lstdc++ -lm
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gmc.h"
#include "gmc_handle.h"
#include "gmc_range.h"
#include "gmc_sim.h"
#include "gmc_vidmm.h"

#define LIVE 10000u
#define SEG_START 0x100000000ull
#define SEG_SIZE (16ull << 30)
#define WARM_OPS 20000u
#define MIN_SECONDS 0.35
#define SEED 0x5EED0F6D1Cull

struct req {
    uint64_t size;
    uint32_t align;
};

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static struct req rand_req(uint64_t *s)
{
    uint64_t r = rng_next(s), k = r % 100, x = r >> 8;
    struct req q;
    if (k < 70)
        q.size = (1 + x % 16) << 12;
    else if (k < 95)
        q.size = (17 + x % 240) << 12;
    else
        q.size = (1 + x % 16) << 20;
    q.align = q.size >= (1u << 20) ? 0x10000 : 0x1000;
    return q;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int status)
{
    fprintf(stderr, "bench_api: %s: %s\n", what, gmc_status_name(status));
    exit(1);
}

/* ------------------------------------------------------------- the API */

struct api {
    gmc_device *dev;
    gmc_client *cl;
    gmc_handle h[LIVE];
    struct gmc_alloc_desc d;
};

static uint64_t api_create(struct api *a, unsigned i, struct req q)
{
    a->d.size = q.size;
    a->d.alignment = q.align;
    int rc = gmc_alloc_create(a->cl, &a->d, &a->h[i]);
    if (rc != GMC_OK)
        die("create", rc);
    struct gmc_alloc_info ai;
    rc = gmc_alloc_query(a->cl, a->h[i], &ai);
    if (rc != GMC_OK)
        die("query", rc);
    return ai.gpu_address;
}

static void api_destroy(struct api *a, unsigned i)
{
    int rc = gmc_alloc_destroy(a->cl, a->h[i]);
    if (rc != GMC_OK)
        die("destroy", rc);
}

static void api_open(struct api *a)
{
    struct gmc_sim_config c;
    gmc_sim_config_default(&c);
    c.strap_segments = 1;
    c.seg_count = 1;
    c.seg[0] = (struct gmc_sim_segment){ SEG_START, SEG_SIZE, 0, 0, 0, 0 };
    int rc = gmc_device_open_sim(&c, NULL, &a->dev);
    if (rc == GMC_OK)
        rc = gmc_client_create(a->dev, NULL, &a->cl);
    if (rc != GMC_OK)
        die("open", rc);
    gmc_alloc_desc_init(&a->d);
    a->d.supported_segments = GMC_SEGMENT_BIT(1);
}

/* ----------------------------------------------------------- the range */

struct rng_side {
    struct gmc_range_mgr mgr;
    struct gmc_range_node n[LIVE];
};

static uint64_t range_create(struct rng_side *r, unsigned i, struct req q)
{
    if (gmc_range_insert(&r->mgr, &r->n[i], q.size, q.align, GMC_RANGE_BEST) != GMC_RANGE_OK)
        die("range insert", GMC_E_NO_SPACE);
    return r->n[i].start;
}

static void range_destroy(struct rng_side *r, unsigned i)
{
    gmc_range_remove(&r->mgr, &r->n[i]);
}

/* ------------------------------------------------------------------ run */

/* Fill, warm up (checksumming placements), then time pairs. */
#define RUN(side, create, destroy, ops_out, sum_out)                                   \
    do {                                                                               \
        uint64_t s = SEED, sum = 0;                                                    \
        for (unsigned i = 0; i < LIVE; i++)                                            \
            sum = sum * 31u + create(side, i, rand_req(&s));                           \
        for (unsigned k = 0; k < WARM_OPS; k++) {                                      \
            unsigned i = (unsigned)(rng_next(&s) % LIVE);                              \
            destroy(side, i);                                                          \
            sum = sum * 31u + create(side, i, rand_req(&s));                           \
        }                                                                              \
        uint64_t ops = 0;                                                              \
        double t0 = now_s(), t;                                                        \
        do {                                                                           \
            for (unsigned k = 0; k < 1000u; k++) {                                     \
                unsigned i = (unsigned)(rng_next(&s) % LIVE);                          \
                destroy(side, i);                                                      \
                create(side, i, rand_req(&s));                                         \
            }                                                                          \
            ops += 1000u;                                                              \
            t = now_s() - t0;                                                          \
        } while (t < MIN_SECONDS);                                                     \
        ops_out = (double)ops / t;                                                     \
        sum_out = sum;                                                                 \
    } while (0)

int main(void)
{
    static struct api a;
    static struct rng_side r;
    double api_ops, range_ops;
    uint64_t api_sum, range_sum;

    api_open(&a);
    RUN(&a, api_create, api_destroy, api_ops, api_sum);
    if (gmc_range_init(&r.mgr, SEG_START, SEG_SIZE) != GMC_RANGE_OK)
        die("range init", GMC_E_INTERNAL);
    RUN(&r, range_create, range_destroy, range_ops, range_sum);
    if (api_sum != range_sum) {
        fprintf(stderr, "bench_api: placements differ from the range allocator's\n");
        return 1;
    }

    /* the rule table's share of a create */
    struct gmc_alloc_desc d = a.d;
    d.size = 0x10000;
    const struct gmc_segment_desc *segs = a.dev->segdesc;
    unsigned checks = 0;
    double t0 = now_s(), t;
    do {
        for (unsigned k = 0; k < 1000u; k++)
            checks += gmc_rules_check_alloc(&d, segs, a.dev->nsegs, NULL) == GMC_OK;
        t = now_s() - t0;
    } while (t < 0.1);

    double bytes = (double)(sizeof(struct gmc_valloc) + sizeof(struct gmc_vref) + sizeof(struct gmc_hslot));
    printf("{\"api_alloc_ops_per_s\": %.1f, \"api_range_ops_per_s\": %.1f, \"api_vs_range\": %.3f, "
           "\"api_create_rules_ns\": %.1f, \"api_bytes_per_allocation\": %.1f, \"api_live\": %u}\n",
           api_ops, range_ops, api_ops / range_ops, t * 1e9 / checks, bytes, LIVE);
    gmc_device_close(a.dev);
    return 0;
}
