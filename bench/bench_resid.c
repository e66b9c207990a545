/*
 * bench_resid.c - host CPU per make-resident step as the number of
 * allocations on the device grows (docs/eviction-bench.md, "Residency
 * scaling"). It measures the library as it is: today a placement that must
 * evict walks every allocation of the device, so the figure grows with N.
 *
 * Load: the default "sim" device; N allocations of 16 KiB, all restricted
 * to segment 2 (6080 KiB: 380 of them fit), created up front (creation
 * places the first 380, the rest wait unplaced). Then STEPS steps: each
 * makes the next SET allocations of the working set resident (the first
 * SPAN = 1000 allocations, or all N when fewer, cycled through, so every
 * page-in has to evict), waits for the paging fence, and evicts them
 * (drops the references). Every N thus does the same work per step (the
 * same page-ins, write-backs and evictions); the other N - SPAN
 * allocations exist, unplaced, as on a device with many allocations not in
 * use, and only what the library does about them can make a step cost
 * more. Timed: thread CPU time inside gmc_make_resident() and gmc_evict(),
 * the fence wait excluded. Warm-up: one lap over the working set and two
 * steps, untimed, so every allocation timed has content, was placed and
 * evicted before (a page-in copies it back in, an eviction writes it back)
 * and the segment is full.
 *
 * Output: {"resid_us_per_step_<N>": ..., ...} for N = 1k, 10k, 100k.
 * With --count N STEPS: set up, then run STEPS steps and exit, collecting
 * (callgrind client requests) only inside gmc_make_resident() and
 * gmc_evict() of those steps: bench/run_bench.py runs it under callgrind
 * --collect-atstart=no for resid_insn_per_step_<N> (the instructions of
 * the model behind the register accesses in those calls included).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gmc.h"

/* Instruction counts: callgrind's client requests switch collection on only
 * inside the timed calls (no-ops when not run under valgrind). */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define CALLGRIND_TOGGLE_COLLECT
#endif
/* Set for --count: under callgrind (--collect-atstart=no) only the timed
 * calls of the measured steps are collected, not the warm-up's. */
static int counting;
#define COUNT_TOGGLE                                                                                         \
    do {                                                                                                     \
        if (counting)                                                                                        \
            CALLGRIND_TOGGLE_COLLECT;                                                                        \
    } while (0)

#define SET 8u
#define SPAN 1000u
#define SEG_ID 2u

static void die(const char *what, int rc)
{
    fprintf(stderr, "bench_resid: %s: %s\n", what, rc ? gmc_status_name(rc) : "failed");
    exit(1);
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct load {
    gmc_device *dev;
    gmc_client *cl;
    gmc_handle *h;
    uint32_t n, span, next;
    double timed_s;
};

static void load_open(struct load *l, uint32_t n)
{
    memset(l, 0, sizeof(*l));
    int rc = gmc_device_open("sim", &l->dev);
    if (rc != GMC_OK)
        die("open", rc);
    rc = gmc_client_create(l->dev, NULL, &l->cl);
    if (rc != GMC_OK)
        die("client", rc);
    l->n = n;
    l->span = n < SPAN ? n : SPAN;
    l->h = calloc(n, sizeof(*l->h));
    if (l->h == NULL)
        die("out of memory", 0);
    for (uint32_t i = 0; i < n; i++) {
        struct gmc_alloc_desc d;
        gmc_alloc_desc_init(&d);
        d.size = 16 * 1024;
        d.supported_segments = GMC_SEGMENT_BIT(SEG_ID);
        rc = gmc_alloc_create(l->cl, &d, &l->h[i]);
        if (rc != GMC_OK)
            die("create", rc);
    }
}

static void one_step(struct load *l)
{
    gmc_handle set[SET];
    for (uint32_t k = 0; k < SET; k++)
        set[k] = l->h[(l->next + k) % l->span];
    l->next = (l->next + SET) % l->span;
    struct gmc_residency_result res;
    double t0 = cpu_s();
    COUNT_TOGGLE;
    int rc = gmc_make_resident(l->cl, set, SET, &res);
    COUNT_TOGGLE;
    l->timed_s += cpu_s() - t0;
    if (rc != GMC_OK)
        die("make resident", rc);
    if (res.paging_fence && (rc = gmc_fence_wait(l->dev, res.paging_fence, 1000000u)) != GMC_OK)
        die("fence wait", rc);
    t0 = cpu_s();
    COUNT_TOGGLE;
    rc = gmc_evict(l->cl, set, SET);
    COUNT_TOGGLE;
    l->timed_s += cpu_s() - t0;
    if (rc != GMC_OK)
        die("evict", rc);
}

/* Not inlined: callgrind collects only inside it (--toggle-collect). */
__attribute__((noinline)) void measured_steps(struct load *l, uint32_t steps)
{
    for (uint32_t s = 0; s < steps; s++)
        one_step(l);
}

static void load_close(struct load *l)
{
    free(l->h);
    gmc_device_close(l->dev);
}

/* Warm-up: the first 380 allocations were placed at creation (the segment
 * is full); start at the first one that was not, so every step places by
 * evicting; a lap over the working set and two steps more, untimed. */
static void warm(struct load *l)
{
    l->next = 384u % l->span;
    for (uint32_t s = 0; s < l->span / SET + 2u; s++)
        one_step(l);
    l->timed_s = 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--count")) {
        struct load l;
        load_open(&l, (uint32_t)strtoul(argv[2], NULL, 10));
        warm(&l);
        counting = 1;
        measured_steps(&l, (uint32_t)strtoul(argv[3], NULL, 10));
        load_close(&l);
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: bench-resid [--count N STEPS]\n");
        return 2;
    }
    static const uint32_t ns[3] = { 1000, 10000, 100000 };
    static const char *const name[3] = { "1k", "10k", "100k" };
    static const uint32_t steps[3] = { 200, 200, 200 };
    printf("{");
    for (int i = 0; i < 3; i++) {
        struct load l;
        load_open(&l, ns[i]);
        warm(&l);
        measured_steps(&l, steps[i]);
        printf("%s\"resid_us_per_step_%s\": %.1f", i ? ", " : "", name[i], l.timed_s * 1e6 / steps[i]);
        fflush(stdout);
        load_close(&l);
    }
    printf("}\n");
    return 0;
}
