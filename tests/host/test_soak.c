/*
 * test_soak.c - the content-integrity soak (docs/residency.md, "Soak"):
 * a seeded random workload over-committing VRAM about 2x with mixed sizes,
 * priorities and flags (CpuVisible, PermanentSysMem, Zeroed, aperture
 * placement, eviction through an aperture or an MDL), random locks with
 * writes (Discard among them), MakeResident/Evict, GPU copies and fills
 * between resident allocations, and standby + hibernate cycles in the
 * middle. A reference model holds every allocation's bytes; allocations
 * are checked by checksum after every step that touches them, a random one
 * every step, and all of them every CHECK_ALL steps and around each power
 * cycle. No byte may be lost or changed.
 *
 * GMC_SOAK_STEPS (default 200) and GMC_SOAK_SEED (default 1) set the run;
 * debugging: GMC_SOAK_TRACE prints each step, GMC_SOAK_CHECK_EVERY checks
 * every allocation after every step, GMC_SOAK_DEBUG compares the system
 * and VRAM copies with the model before each check.
 */
#include <stdio.h>

#include "vidmm_test.h"

/* Small strapped segments so the workload over-commits: 512 KiB
 * CPU-visible, 1 MiB VRAM, the 16 MiB aperture. Standby keeps them all,
 * hibernate purges the two memory segments. */
#define SOAK_DEV "sim:segs=3,seg1=0/0x80000/0x84/0,seg2=0x80000/0x100000/0x80,seg3=0x80000000/0x1000000/0x191"
#define VRAM_BYTES (0x80000u + 0x100000u)
#define NALLOC 64
#define MAXSZ (96 * KiB)
#define CHECK_ALL 100u

struct obj {
    gmc_handle h;
    uint64_t size;
    uint32_t flags;
    uint32_t segs;
    uint8_t *model;
    unsigned refs; /* residency references the test holds */
};

struct soak {
    gmc_device *dev;
    gmc_client *c;
    struct obj o[NALLOC];
    gmc_handle scratch;
    uint64_t rng;
    uint8_t *buf;
    uint64_t checks, bytes_checked, copies, fills, locks, nospace;
};

static uint64_t rnd(struct soak *s, uint64_t n)
{
    return t_rand(&s->rng) % n;
}

static void put_pattern(uint8_t *dst, uint64_t gpu, uint64_t len, uint32_t pattern)
{
    for (uint64_t i = 0; i < len; i++)
        dst[i] = (uint8_t)(pattern >> (8u * ((gpu + i) & 3u)));
}

/* Read an allocation's bytes: through a lock for CPU-visible ones; for
 * the others a GPU copy into the scratch allocation (every fourth check),
 * else the backdoors: VRAM at the placed address, or the system copy,
 * after everything queued completed. */
static void drop_refs(struct soak *s)
{
    for (unsigned q = 0; q < NALLOC; q++)
        while (s->o[q].refs > 0u) {
            ok(gmc_evict(s->c, &s->o[q].h, 1));
            s->o[q].refs--;
        }
}

static void read_back(struct soak *s, unsigned i, const char *when)
{
    struct obj *o = &s->o[i];
    if (getenv("GMC_SOAK_DEBUG") != NULL) {
        t_idle(s->dev);
        const struct gmc_valloc *a = gmc_vidmm_ref(s->c, o->h)->alloc;
        struct gmc_alloc_info ai = t_info(s->c, o->h);
        if (a->sys_valid && a->sys.host != NULL && memcmp(a->sys.host, o->model, o->size) != 0)
            fprintf(stderr, "%s: %u: system copy differs (state %x, sys bus %llx mdl %llx)\n", when, i, ai.state,
                    (unsigned long long)a->sys.bus, (unsigned long long)a->sys.mdl_bus);
        if (a->gpu_valid && ai.segment != 3u && (ai.state & GMC_ALLOC_STATE_PLACED)) {
            gmc_sim_vram_peek(gmc_device_sim(s->dev), ai.gpu_address, s->buf, o->size);
            if (memcmp(s->buf, o->model, o->size) != 0)
                fprintf(stderr, "%s: %u: VRAM copy differs (state %x at %llx)\n", when, i, ai.state,
                        (unsigned long long)ai.gpu_address);
        }
    }
    if (o->flags & GMC_ALLOC_CPU_VISIBLE) {
        int rc = gmc_alloc_read(s->c, o->h, 0, s->buf, o->size);
        if (rc == GMC_E_NO_SPACE) { /* the held references leave no room: let go */
            drop_refs(s);
            rc = gmc_alloc_read(s->c, o->h, 0, s->buf, o->size);
        }
        ok(rc);
        return;
    }
    if (s->checks % 4u == 0u) {
        gmc_handle two[2] = { o->h, s->scratch };
        int rc = gmc_make_resident(s->c, two, 2, NULL);
        if (rc == GMC_E_NO_SPACE) {
            drop_refs(s);
            rc = gmc_make_resident(s->c, two, 2, NULL);
        }
        if (rc != GMC_OK)
            fail_msg("%s: check %u: make resident: %s", when, i, gmc_status_name(rc));
        ok(gmc_fence_wait(s->dev, t_copy(s->c, o->h, 0, s->scratch, 0, o->size), 0));
        ok(gmc_evict(s->c, two, 2));
        ok(gmc_alloc_read(s->c, s->scratch, 0, s->buf, o->size));
        return;
    }
    t_idle(s->dev);
    struct gmc_alloc_info ai = t_info(s->c, o->h);
    const struct gmc_valloc *a = gmc_vidmm_ref(s->c, o->h)->alloc;
    if (!(ai.state & GMC_ALLOC_STATE_HAS_CONTENT)) {
        assert_false(ai.state & GMC_ALLOC_STATE_LOST);
        memcpy(s->buf, o->model, o->size); /* established on first page-in */
    } else if ((ai.state & GMC_ALLOC_STATE_PLACED) && ai.segment != 3u && a->gpu_valid) {
        assert_int_equal(gmc_sim_vram_peek(gmc_device_sim(s->dev), ai.gpu_address, s->buf, o->size), 0);
    } else if (a->sys_valid && a->sys.host != NULL) {
        memcpy(s->buf, a->sys.host, o->size);
    } else {
        fail_msg("%s: allocation %u has content in no copy (state 0x%x)", when, i, ai.state);
    }
}

static void check(struct soak *s, unsigned i, const char *when)
{
    struct obj *o = &s->o[i];
    read_back(s, i, when);
    if (t_fnv(s->buf, o->size) != t_fnv(o->model, o->size)) {
        uint64_t nbad = 0, lo = UINT64_MAX, hi = 0;
        for (uint64_t k = 0; k < o->size; k++)
            if (s->buf[k] != o->model[k]) {
                nbad++;
                lo = k < lo ? k : lo;
                hi = k;
            }
        fprintf(stderr, "mismatch: %llu bytes in [%llx, %llx]\n", (unsigned long long)nbad, (unsigned long long)lo, (unsigned long long)hi);
        for (uint64_t k = 0; k < o->size; k++)
            if (s->buf[k] != o->model[k])
                fail_msg("%s: allocation %u (flags 0x%x, %llu bytes): byte %llu is %02x, want %02x", when, i,
                         o->flags, (unsigned long long)o->size, (unsigned long long)k, s->buf[k], o->model[k]);
    }
    s->checks++;
    s->bytes_checked += o->size;
}

static void check_all(struct soak *s, const char *when)
{
    for (unsigned i = 0; i < NALLOC; i++)
        check(s, i, when);
}

static void create_all(struct soak *s)
{
    uint64_t total = 0;
    static const uint32_t prios[3] = { GMC_PRIORITY_LOW, GMC_PRIORITY_NORMAL, GMC_PRIORITY_HIGH };
    for (unsigned i = 0; i < NALLOC; i++) {
        struct obj *o = &s->o[i];
        struct gmc_alloc_desc d;
        o->size = (1u + rnd(s, MAXSZ / PG)) * PG;
        unsigned kind = (unsigned)rnd(s, 10);
        uint32_t flags, segs;
        if (kind < 4) { /* CPU-visible VRAM */
            flags = GMC_ALLOC_CPU_VISIBLE;
            segs = BIT(1) | (rnd(s, 2) ? BIT(2) : 0u);
        } else if (kind < 6) { /* PermanentSysMem */
            flags = GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PERMANENT_SYS_MEM;
            segs = BIT(1) | (rnd(s, 2) ? BIT(3) : 0u);
        } else if (kind < 9) { /* GPU-only VRAM */
            flags = 0;
            segs = BIT(2) | (rnd(s, 3) == 0 ? BIT(1) : 0u);
        } else { /* the aperture */
            flags = GMC_ALLOC_CPU_VISIBLE;
            segs = BIT(3);
        }
        t_desc(&d, o->size, flags, segs);
        d.priority = prios[rnd(s, 3)];
        if (!(segs & BIT(3)) && rnd(s, 2))
            d.eviction_segments = BIT(3);
        if (rnd(s, 3) == 0)
            d.kmt_flags = GMC_KMT_ZEROED;
        o->h = t_create(s->c, &d);
        o->flags = flags;
        o->segs = segs;
        o->model = malloc(o->size);
        assert_non_null(o->model);
        /* content is established on first page-in (or first lock) */
        put_pattern(o->model, 0, o->size, (d.kmt_flags & GMC_KMT_ZEROED) ? 0u : GMC_FILL_UNINITIALISED);
        total += o->size;
    }
    assert_true(total >= VRAM_BYTES * 3 / 2); /* over-committed */
}

/* A random range of an allocation. */
static void range(struct soak *s, const struct obj *o, uint64_t *off, uint64_t *len)
{
    *off = rnd(s, o->size);
    *len = 1u + rnd(s, o->size - *off);
}

static int cpu_lockable(const struct obj *o)
{
    return (o->flags & GMC_ALLOC_CPU_VISIBLE) != 0u;
}

static void step_lock(struct soak *s, unsigned i, uint32_t force)
{
    struct obj *o = &s->o[i];
    static const uint32_t fl[4] = { 0, GMC_LOCK_WRITE_ONLY, GMC_LOCK_WRITE_ONLY | GMC_LOCK_DISCARD,
                                    GMC_LOCK_DISCARD };
    uint32_t flags = force ? force : fl[rnd(s, 4)];
    struct gmc_lock_map m;
    int rc = gmc_lock(s->c, o->h, flags, &m);
    if (rc == GMC_E_NO_SPACE) {
        drop_refs(s);
        rc = gmc_lock(s->c, o->h, flags, &m);
    }
    if (rc != GMC_OK)
        fail_msg("lock %u 0x%x: %s", i, flags, gmc_status_name(rc));
    assert_true(m.size >= o->size);
    uint64_t off, len;
    if (flags & GMC_LOCK_DISCARD) { /* the content is undefined: write it all */
        off = 0;
        len = o->size;
    } else {
        range(s, o, &off, &len);
    }
    t_fill_random(o->model + off, len, &s->rng);
    ok(gmc_lock_write(s->c, o->h, off, o->model + off, len));
    /* sometimes GPU work on it while locked (aperture or refused) */
    ok(gmc_unlock(s->c, o->h));
    s->locks++;
}

static int make_resident(struct soak *s, gmc_handle *h, unsigned n)
{
    int rc = gmc_make_resident(s->c, h, n, NULL);
    if (rc == GMC_E_NO_SPACE) {
        s->nospace++;
        return rc;
    }
    ok(rc);
    return rc;
}

static void step_gpu(struct soak *s, unsigned i, unsigned j)
{
    struct obj *src = &s->o[i], *dst = &s->o[j];
    int can_fill = dst->segs != BIT(3); /* FILL needs a memory segment */
    if (i == j && !can_fill)
        return;
    gmc_handle two[2] = { src->h, dst->h };
    if (make_resident(s, two, 2) != GMC_OK)
        return;
    uint64_t f;
    if (i != j && (rnd(s, 3) != 0 || !can_fill)) {
        uint64_t soff, len;
        range(s, src, &soff, &len);
        if (len > dst->size)
            len = dst->size;
        uint64_t doff = rnd(s, dst->size - len + 1u);
        f = t_copy(s->c, src->h, soff, dst->h, doff, len);
        memmove(dst->model + doff, src->model + soff, len);
        s->copies++;
    } else {
        uint64_t off, len;
        range(s, dst, &off, &len);
        uint32_t pat = (uint32_t)t_rand(&s->rng);
        f = t_fill(s->c, dst->h, off, len, pat);
        put_pattern(dst->model + off, t_info(s->c, dst->h).gpu_address + off, len, pat);
        s->fills++;
    }
    ok(gmc_evict(s->c, two, 2));
    if (rnd(s, 2))
        ok(gmc_fence_wait(s->dev, f, 0));
    else if (cpu_lockable(dst) && rnd(s, 2))
        step_lock(s, j, GMC_LOCK_WRITE_ONLY | GMC_LOCK_DISCARD); /* while the GPU may be busy */
}

static void power_cycle(struct soak *s, enum gmc_power_state to)
{
    struct gmc_power_report r, q;
    check_all(s, "before power");
    ok(gmc_device_power(s->dev, to, &r));
    assert_int_equal(r.allocations_lost, 0);
    ok(gmc_device_resume(s->dev, &q));
    assert_int_equal(q.allocations_saved, to == GMC_POWER_STANDBY ? 0 : q.allocations_saved);
    if (to == GMC_POWER_STANDBY) {
        assert_int_equal(r.allocations_saved, 0);
        assert_int_equal(q.bytes_restored, 0);
    }
    check_all(s, "after power");
}

static uint64_t env_u64(const char *name, uint64_t def)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return def;
    return strtoull(v, NULL, 0);
}

static void test_soak(void **state)
{
    (void)state;
    struct soak s;
    memset(&s, 0, sizeof s);
    uint64_t steps = env_u64("GMC_SOAK_STEPS", 200);
    uint64_t seed = env_u64("GMC_SOAK_SEED", 1);
    s.rng = seed * 0x9E3779B97F4A7C15ull + 1u;
    s.dev = t_open(SOAK_DEV);
    s.c = t_client(s.dev);
    s.buf = malloc(MAXSZ);
    assert_non_null(s.buf);
    s.scratch = t_new(s.c, MAXSZ, GMC_ALLOC_CPU_VISIBLE, BIT(1));
    create_all(&s);
    for (uint64_t k = 0; k < steps; k++) {
        unsigned i = (unsigned)rnd(&s, NALLOC), j = (unsigned)rnd(&s, NALLOC);
        unsigned what = (unsigned)rnd(&s, 10);
        if (getenv("GMC_SOAK_TRACE") != NULL) {
            struct gmc_alloc_info ia = t_info(s.c, s.o[i].h), ja = t_info(s.c, s.o[j].h);
            fprintf(stderr, "step %llu what %u i %u (seg %u off %llx st %x segs %x) j %u (seg %u off %llx st %x segs %x)\n",
                    (unsigned long long)k, what, i, ia.segment, (unsigned long long)ia.offset, ia.state, s.o[i].segs, j,
                    ja.segment, (unsigned long long)ja.offset, ja.state, s.o[j].segs);
        }
        if (what < 2) { /* MakeResident and keep the reference a while */
            if (s.o[i].refs < 2u && make_resident(&s, &s.o[i].h, 1) == GMC_OK)
                s.o[i].refs++;
        } else if (what < 4) { /* Evict */
            for (unsigned q = 0; q < NALLOC; q++) {
                unsigned x = (i + q) % NALLOC;
                if (s.o[x].refs > 0u) {
                    ok(gmc_evict(s.c, &s.o[x].h, 1));
                    s.o[x].refs--;
                    break;
                }
            }
        } else if (what < 6 && cpu_lockable(&s.o[i])) {
            step_lock(&s, i, 0);
        } else {
            step_gpu(&s, i, j);
        }
        /* references held never take more than a quarter of the VRAM */
        uint64_t held = 0;
        for (unsigned q = 0; q < NALLOC; q++)
            held += s.o[q].refs ? s.o[q].size : 0u;
        for (unsigned q = 0; held > VRAM_BYTES / 4 && q < NALLOC; q++)
            while (s.o[q].refs > 0u) {
                ok(gmc_evict(s.c, &s.o[q].h, 1));
                s.o[q].refs--;
                if (s.o[q].refs == 0u)
                    held -= s.o[q].size;
            }
        check(&s, i, "step");
        check(&s, j, "step");
        if (k == steps / 3u)
            power_cycle(&s, GMC_POWER_STANDBY);
        if (k == 2u * steps / 3u)
            power_cycle(&s, GMC_POWER_HIBERNATE);
        if ((k + 1u) % CHECK_ALL == 0u || getenv("GMC_SOAK_CHECK_EVERY") != NULL)
            check_all(&s, "periodic");
    }
    check_all(&s, "end");
    struct gmc_device_stats st = t_stats(s.dev);
    print_message("soak: seed %llu, %llu steps, %llu checks (%llu bytes), %llu locks, %llu copies, %llu fills, "
                  "%llu no-space\n",
                  (unsigned long long)seed, (unsigned long long)steps, (unsigned long long)s.checks,
                  (unsigned long long)s.bytes_checked, (unsigned long long)s.locks, (unsigned long long)s.copies,
                  (unsigned long long)s.fills, (unsigned long long)s.nospace);
    print_message("soak: %llu page-ins, %llu evictions (%llu via aperture, %llu discards), %llu B in, %llu B out, "
                  "%llu B filled, %llu renames, %llu cycles\n",
                  (unsigned long long)st.page_ins, (unsigned long long)st.evictions,
                  (unsigned long long)st.evictions_via_aperture, (unsigned long long)st.discards,
                  (unsigned long long)st.bytes_paged_in, (unsigned long long)st.bytes_paged_out,
                  (unsigned long long)st.bytes_filled, (unsigned long long)st.renames,
                  (unsigned long long)st.cycles);
    assert_true(st.evictions > 0u);
    assert_true(st.evictions_via_aperture > 0u);
    assert_true(st.discards > 0u);
    for (unsigned i = 0; i < NALLOC; i++)
        free(s.o[i].model);
    free(s.buf);
    t_close(s.dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_soak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
