/*
 * bench_evict.c - the eviction policy (host/vidmm/gmc_victim.c) against an
 * offline Belady-style reference and plain LRU, on three documented workload
 * traces, on the real simulated controller; plus the paging throughput
 * and host cost of the paging layer. docs/residency.md, "Eviction
 * benchmark", is the long form of this comment.
 *
 * Workload model. A trace is a sequence of steps (frames). A step
 * references a set of allocations; the driver below does, per step, what
 * an application does per frame: create the allocations it references for
 * the first time, gmc_make_resident() the whole set, gmc_submit() one small
 * operation over it (a 4 KiB FILL of each allocation it writes, a 4 KiB
 * COPY from one it reads), wait for that submission's fence, gmc_evict()
 * the set, then destroy what the step releases. The eviction policy only
 * acts when a gmc_make_resident() needs room. Every allocation is
 * restricted to segment 2 (supported_segments), the banked VRAM segment, so
 * the capacity is that segment's size. The device is the default "sim"
 * device with segment 2 strapped to a quarter of its 6080 KiB, and every
 * size below is divided by the same SCALE = 4 (all sizes stay multiples of
 * 16 KiB, so every placement and policy decision is the one of the full-size
 * run: byte counts are exactly a quarter, ratios identical; the run is 4x
 * shorter). Sizes below are the nominal (full-scale) ones.
 * Priorities are what the application would set for the allocation's role
 * (render targets HIGH, ordinary textures and buffers NORMAL, streamed
 * one-shot data LOW, rarely used look-up data MINIMUM); every model below
 * gets the same trace with the same priorities. An allocation's first
 * reference writes it (upload or rendering).
 *
 * The traces (generated here, seeded, deterministic):
 *   loop    a racing game's lap: color 1 MiB and depth 512 KiB (HIGH) and
 *           a car/HUD set (5 x 256 KiB, NORMAL) every frame, plus the
 *           textures of the visible track sections: 20 sections of 256 KiB
 *           (NORMAL), 5 visible, the window advancing one section every 2
 *           frames, 2 laps (80 frames). Footprint 1.31x VRAM.
 *   stream  an open-world streaming engine: color, depth, shadow (HIGH)
 *           and 6 textures (NORMAL) every frame, 6 "warm" NORMAL textures
 *           of 128 KiB each used every 8th frame, and streamed textures
 *           (64-256 KiB, LOW) requested 0-3 per frame within a 1280 KiB
 *           per-frame streaming budget, each used for 1-4 consecutive
 *           frames; 15 % are requested again 10-40 frames later (the player
 *           turns back); the engine destroys a streamed texture 24 frames
 *           after its last use. 120 frames, peak footprint 2.37x.
 *   mixed   soak-like: color, depth, HDR (HIGH) every frame; 2 of 12
 *           vertex/index buffers (64-256 KiB) and 5 of 28 material textures
 *           (64-384 KiB), NORMAL, picked with Zipf popularity (1/rank) over
 *           a ranking reshuffled every 40 frames (scene changes), 1 in 8
 *           texture picks written; now and then (1/20) one of 4 look-up
 *           tables (256 KiB, MINIMUM); in half the frames a one-shot
 *           streamed buffer (128-384 KiB, LOW) destroyed 8 frames later.
 *           120 frames, peak footprint 2.05x.
 *
 * Cost: bytes paged = bytes paged in (system -> VRAM, gmc_device_stats
 * bytes_paged_in) + bytes written back on eviction (bytes_paged_out). First
 * touches are fills (bytes_filled), which every policy pays identically,
 * and are not counted, by the library or by the models. Clean evictions are
 * free. The library keeps the system copy an allocation's first eviction
 * made (gmc_resid_page_in leaves it current), so an eviction writes back
 * only an allocation written since it was last paged in (by a submission
 * with GMC_REF_WRITE here; first touches write too) and drops the VRAM copy
 * of any other; every model uses that same rule (it is the mechanism, not
 * the policy). evict_clean_fraction reports the share of the evicted bytes
 * (with content) that were dropped clean.
 *
 * Offline models, over the same trace, same capacity, same protection rule
 * (a step's allocations are not victims while it is made resident):
 *   policy replica  the library's policy (priority; clean before dirty;
 *                   cold allocations LRU first, then hot ones
 *                   last-joined first; the hot set's
 *                   admission and budget), decided by the library's own
 *                   functions (host/vidmm/gmc_victim.h: gmc_victim_cmp,
 *                   gmc_victim_hot_cmp, gmc_victim_admit,
 *                   gmc_victim_heat_placed) over the model's state, placed
 *                   best fit (GMC_RANGE_BEST) with the library's range
 *                   allocator and its drm_mm-style eviction scan (victims
 *                   in policy order until a free run fits; only the
 *                   victims of the run's window with the fewest victim
 *                   bytes go): must reproduce the library's bytes exactly
 *                   (evict_replica_match), which checks the accounting of
 *                   the models against the real run.
 *   LRU             plain LRU (no priorities, no hot set), the same
 *                   placement and scan.
 *   Belady          capacity only (stderr reference, not a bound): it ignores
 *                   fragmentation (with contiguous placement, making room can
 *                   take more). For variable sizes and write-back costs
 *                   that depend on dirtiness, no simple ranking is optimal
 *                   (the problem is NP-hard), so four variants are run and
 *                   the smallest count is the reference: furthest next use
 *                   (never used again first), plain and "trimmed" (after
 *                   choosing victims, the ones not needed to make room are
 *                   kept, nearest next use first); and cost-aware, plain
 *                   and trimmed: evict first the allocation whose eviction
 *                   costs least per step of room it frees, (write-back if
 *                   dirty + reload if used again) / (steps to its next
 *                   use), never used again and clean first.
 *
 * Output: one flat JSON object on stdout (see docs/residency.md):
 *   evict_vs_lru             mean over traces of policy / LRU bytes
 *   evict_<trace>_vs_lru, evict_<trace>_policy_bytes, evict_<trace>_lru_bytes
 * The Belady-style schedules are not a bound (each is a schedule's cost);
 * they are only the reference of the candidate table on stderr. The exact
 * optimum is bench/evict_opt.py's, over the traces --dump DIR writes
 * (docs/eviction-bench.md).
 *   evict_replica_match      1 when the replica matched the library on every trace
 *   evict_clean_fraction     share of the evicted bytes (allocations with
 *                            content) dropped clean, over the three traces
 *   paging_bytes_per_cycle   (bytes_paged_in + bytes_paged_out) / device
 *                            cycles over the mixed trace, end to end
 *   host_ns_per_page_op      paging layer build_ns / paging operations
 *                            (building and submitting; waits excluded; the
 *                            layer measures wall time, so a loaded machine
 *                            inflates it)
 *   host_api_ns_per_page_op  thread CPU time inside create/make-resident/submit/
 *                            evict/destroy (fence waits excluded; includes
 *                            the model's cycles for register accesses) /
 *                            paging operations
 *
 * On stderr: per trace, the byte counts, and a table of candidate policies
 * run in the offline model relative to the Belady reference under the same
 * write-back rule (earlier library policies, LRU-2, MRU on refault, and the
 * library's policy with every eviction writing back, as before the system
 * copy was kept).
 *
 * Build: see the bench-evict rule in the Makefile (libgmc.a + libgmc_sim.a).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gmc.h"
#include "gmc_paging.h"
#include "gmc_range.h"
#include "gmc_sim.h"
#include "gmc_victim.h"
#include "gmc_vidmm.h"

#define KiB 1024ull
#define SEG_ID 2u /* the VRAM segment every allocation is restricted to */
#define NO_USE UINT32_MAX
#define OP_BYTES 4096u
/* Sizes in the traces are nominal; the run divides them, and segment 2,
 * by SCALE (every size stays a multiple of 16 KiB, so placement and every
 * policy decision are the same as at full scale; only the run is shorter). */
#define SCALE 4u

static void die(const char *what, int status)
{
    fprintf(stderr, "bench_evict: %s: %s\n", what, status ? gmc_status_name(status) : "failed");
    exit(1);
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (q == NULL)
        die("out of memory", 0);
    return q;
}

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned rnd(uint64_t *s, unsigned n) /* 0..n-1 */
{
    return (unsigned)(rng_next(s) % n);
}

/* CPU time of this thread (the model runs on it too): less sensitive to a
 * loaded machine than wall time. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --------------------------------------------------------------- traces */

struct t_alloc {
    uint64_t size; /* a multiple of 16 KiB: placed size = size */
    uint32_t prio;
    uint32_t seen; /* referenced already (generation only) */
};
struct t_ref {
    uint32_t id;
    uint32_t write;
};
struct t_step {
    uint32_t ref0, nref; /* into refs */
    uint32_t del0, ndel; /* into dels: destroyed after the step */
};
struct trace {
    const char *name;
    struct t_alloc *a;
    uint32_t na;
    struct t_ref *r;
    uint32_t nr;
    uint32_t *del;
    uint32_t nd;
    struct t_step *s;
    uint32_t ns;
    /* per allocation: the steps that reference it, ascending (CSR) */
    uint32_t *use_off, *uses;
    uint32_t *dead; /* 1 once destroyed (generation only) */
};

static uint32_t t_alloc(struct trace *t, uint64_t size, uint32_t prio)
{
    t->a = xrealloc(t->a, (t->na + 1u) * sizeof(*t->a));
    t->dead = xrealloc(t->dead, (t->na + 1u) * sizeof(*t->dead));
    t->a[t->na] = (struct t_alloc){ size / SCALE, prio, 0 };
    t->dead[t->na] = 0;
    return t->na++;
}

static void t_step(struct trace *t)
{
    t->s = xrealloc(t->s, (t->ns + 1u) * sizeof(*t->s));
    t->s[t->ns] = (struct t_step){ t->nr, 0, t->nd, 0 };
    t->ns++;
}

/* Reference id in the current step (once per step; writes accumulate).
 * An allocation's first reference writes it: its content is uploaded (a
 * copy from a staging buffer) or, for a render target, rendered. */
static void t_ref(struct trace *t, uint32_t id, int write)
{
    struct t_step *st = &t->s[t->ns - 1u];
    if (t->dead[id])
        die("trace references a destroyed allocation", 0);
    if (!t->a[id].seen)
        write = 1;
    t->a[id].seen = 1;
    for (uint32_t i = st->ref0; i < st->ref0 + st->nref; i++)
        if (t->r[i].id == id) {
            t->r[i].write |= (uint32_t)write;
            return;
        }
    t->r = xrealloc(t->r, (t->nr + 1u) * sizeof(*t->r));
    t->r[t->nr++] = (struct t_ref){ id, (uint32_t)write };
    st->nref++;
}

/* Destroy id after the current step. */
static void t_del(struct trace *t, uint32_t id)
{
    if (t->dead[id])
        return;
    t->dead[id] = 1;
    t->del = xrealloc(t->del, (t->nd + 1u) * sizeof(*t->del));
    t->del[t->nd++] = id;
    t->s[t->ns - 1u].ndel++;
}

static void t_finish(struct trace *t)
{
    t->use_off = calloc(t->na + 1u, sizeof(uint32_t));
    t->uses = calloc(t->nr ? t->nr : 1u, sizeof(uint32_t));
    if (t->use_off == NULL || t->uses == NULL)
        die("out of memory", 0);
    for (uint32_t i = 0; i < t->nr; i++)
        t->use_off[t->r[i].id + 1u]++;
    for (uint32_t i = 0; i < t->na; i++)
        t->use_off[i + 1u] += t->use_off[i];
    uint32_t *fill = calloc(t->na ? t->na : 1u, sizeof(uint32_t));
    if (fill == NULL)
        die("out of memory", 0);
    for (uint32_t k = 0; k < t->ns; k++)
        for (uint32_t i = t->s[k].ref0; i < t->s[k].ref0 + t->s[k].nref; i++) {
            uint32_t id = t->r[i].id;
            t->uses[t->use_off[id] + fill[id]++] = k;
        }
    free(fill);
}

/*
 * loop: a racing lap. Every frame: color target 1 MiB and depth 512 KiB
 * (HIGH, written), car and HUD textures 4 x 256 KiB and the car's vertex
 * buffer 256 KiB (NORMAL, read). Track: 20 section textures of 256 KiB
 * (NORMAL: ordinary level textures), sections s..s+4 visible, s advancing
 * every 2 frames, 2 laps (80 frames).
 */
static void gen_loop(struct trace *t)
{
    t->name = "loop";
    enum { SECTIONS = 20, VISIBLE = 5, FRAMES_PER_SECTION = 2, LAPS = 2 };
    uint32_t color = t_alloc(t, 1024 * KiB, GMC_PRIORITY_HIGH);
    uint32_t depth = t_alloc(t, 512 * KiB, GMC_PRIORITY_HIGH);
    uint32_t car[5];
    for (unsigned i = 0; i < 5; i++)
        car[i] = t_alloc(t, 256 * KiB, GMC_PRIORITY_NORMAL);
    uint32_t sec[SECTIONS];
    for (unsigned i = 0; i < SECTIONS; i++)
        sec[i] = t_alloc(t, 256 * KiB, GMC_PRIORITY_NORMAL);
    for (unsigned f = 0; f < SECTIONS * FRAMES_PER_SECTION * LAPS; f++) {
        unsigned s0 = f / FRAMES_PER_SECTION;
        t_step(t);
        t_ref(t, color, 1);
        t_ref(t, depth, 1);
        for (unsigned i = 0; i < 5; i++)
            t_ref(t, car[i], 0);
        for (unsigned v = 0; v < VISIBLE; v++)
            t_ref(t, sec[(s0 + v) % SECTIONS], 0);
    }
}

/*
 * stream: open-world streaming. Every frame: color 1 MiB, depth 512 KiB,
 * shadow map 512 KiB (HIGH, written), 6 terrain/character textures of
 * 256 KiB (NORMAL). Warm: 6 effect textures of 128 KiB (NORMAL), texture j
 * used in frames f with f % 8 == j. Streamed: 0-3 new textures per frame
 * (64, 128 or 256 KiB; LOW, as a streaming engine marks what it can
 * re-stream), each used for 1-4 consecutive frames; 15 % are requested
 * again 10-40 frames later for 1-2 frames; a streamed texture is destroyed
 * 24 frames after its last use (the engine's deferred release).
 */
static void gen_stream(struct trace *t)
{
    t->name = "stream";
    enum { FRAMES = 120, RELEASE = 24, MAXS = 1024 };
    const uint64_t STREAM_BUDGET = 1280 * KiB;
    uint64_t seed = 0x57EA3ull;
    uint32_t rt[3] = { t_alloc(t, 1024 * KiB, GMC_PRIORITY_HIGH), t_alloc(t, 512 * KiB, GMC_PRIORITY_HIGH),
                       t_alloc(t, 512 * KiB, GMC_PRIORITY_HIGH) };
    uint32_t hot[6], warm[6];
    for (unsigned i = 0; i < 6; i++)
        hot[i] = t_alloc(t, 256 * KiB, GMC_PRIORITY_NORMAL);
    for (unsigned i = 0; i < 6; i++)
        warm[i] = t_alloc(t, 128 * KiB, GMC_PRIORITY_NORMAL);
    /* Streamed textures: id, frames [from, to] of use, second use [from2, to2]. */
    struct sx {
        uint32_t id;
        unsigned from, to, from2, to2, last;
    } *sx = calloc(MAXS, sizeof(*sx));
    if (sx == NULL)
        die("out of memory", 0);
    unsigned nsx = 0;
    for (unsigned f = 0; f < FRAMES; f++) {
        unsigned nnew = rnd(&seed, 4);
        for (unsigned j = 0; j < nnew && nsx < MAXS; j++) {
            static const uint64_t sizes[3] = { 64 * KiB, 128 * KiB, 256 * KiB };
            struct sx c;
            uint64_t size = sizes[rnd(&seed, 3)];
            c.from = f;
            c.to = f + rnd(&seed, 4);
            c.from2 = c.to2 = UINT32_MAX;
            if (rnd(&seed, 100) < 15) {
                c.from2 = c.to + 10u + rnd(&seed, 31);
                c.to2 = c.from2 + rnd(&seed, 2);
            }
            c.last = c.to2 != UINT32_MAX ? c.to2 : c.to;
            /* The engine's per-frame budget: a request that would take a
             * frame's streamed set past STREAM_BUDGET waits (is dropped). */
            int ok = 1;
            for (unsigned g = c.from; g <= c.last && ok; g++) {
                if (g > c.to && g < c.from2)
                    continue;
                uint64_t act = size;
                for (unsigned i = 0; i < nsx; i++)
                    if ((g >= sx[i].from && g <= sx[i].to) || (sx[i].from2 != UINT32_MAX && g >= sx[i].from2 && g <= sx[i].to2))
                        act += t->a[sx[i].id].size;
                ok = act <= STREAM_BUDGET;
            }
            if (!ok)
                continue;
            c.id = t_alloc(t, size, GMC_PRIORITY_LOW);
            sx[nsx++] = c;
        }
        t_step(t);
        for (unsigned i = 0; i < 3; i++)
            t_ref(t, rt[i], 1);
        for (unsigned i = 0; i < 6; i++)
            t_ref(t, hot[i], 0);
        if (f % 8u < 6u)
            t_ref(t, warm[f % 8u], 0);
        for (unsigned i = 0; i < nsx; i++) {
            struct sx *x = &sx[i];
            if ((f >= x->from && f <= x->to) || (x->from2 != UINT32_MAX && f >= x->from2 && f <= x->to2))
                t_ref(t, x->id, 0);
        }
        for (unsigned i = 0; i < nsx; i++)
            if (f == sx[i].last + RELEASE)
                t_del(t, sx[i].id);
    }
    free(sx);
}

/*
 * mixed: soak-like, sizes 64 KiB..1 MiB, every priority level in its role.
 * Every frame: color 1 MiB, depth 512 KiB, an HDR target 512 KiB (HIGH,
 * written). Per frame, 2 of 12 vertex/index buffers (64-256 KiB) and 6 of
 * 28 material textures (64-512 KiB), all NORMAL, picked with popularity
 * 1/rank (Zipf, s = 1) over a ranking reshuffled every 40 frames. One of 4
 * look-up tables (256 KiB, MINIMUM: used about every 20 frames). With
 * probability 1/2 a one-shot streamed buffer (128-512 KiB, LOW) that is
 * destroyed 8 frames later. One material in 8 picks is written (a
 * GPU-updated texture: decals, terrain paint).
 */
static unsigned zipf_pick(uint64_t *seed, unsigned n)
{
    double h = 0;
    for (unsigned i = 1; i <= n; i++)
        h += 1.0 / i;
    double u = (double)(rng_next(seed) >> 11) * (1.0 / 9007199254740992.0) * h;
    for (unsigned i = 1; i <= n; i++) {
        u -= 1.0 / i;
        if (u <= 0)
            return i - 1u;
    }
    return n - 1u;
}

static void shuffle(uint64_t *seed, uint32_t *v, unsigned n)
{
    for (unsigned i = n - 1u; i > 0; i--) {
        unsigned j = rnd(seed, i + 1u);
        uint32_t x = v[i];
        v[i] = v[j];
        v[j] = x;
    }
}

static void gen_mixed(struct trace *t)
{
    t->name = "mixed";
    enum { FRAMES = 120, NVB = 12, NTEX = 28, NLUT = 4, PHASE = 40, STREAM_LIFE = 8 };
    uint64_t seed = 0x313EDull;
    uint32_t rt[3] = { t_alloc(t, 1024 * KiB, GMC_PRIORITY_HIGH), t_alloc(t, 512 * KiB, GMC_PRIORITY_HIGH),
                       t_alloc(t, 512 * KiB, GMC_PRIORITY_HIGH) };
    uint32_t vb[NVB], tex[NTEX], lut[NLUT];
    for (unsigned i = 0; i < NVB; i++)
        vb[i] = t_alloc(t, (1u + rnd(&seed, 4)) * 64 * KiB, GMC_PRIORITY_NORMAL);
    for (unsigned i = 0; i < NTEX; i++)
        tex[i] = t_alloc(t, (1u + rnd(&seed, 6)) * 64 * KiB, GMC_PRIORITY_NORMAL);
    for (unsigned i = 0; i < NLUT; i++)
        lut[i] = t_alloc(t, 256 * KiB, GMC_PRIORITY_MINIMUM);
    uint32_t pending[STREAM_LIFE];
    memset(pending, 0xff, sizeof(pending));
    for (unsigned f = 0; f < FRAMES; f++) {
        if (f % PHASE == 0u) {
            shuffle(&seed, vb, NVB);
            shuffle(&seed, tex, NTEX);
        }
        t_step(t);
        for (unsigned i = 0; i < 3; i++)
            t_ref(t, rt[i], 1);
        for (unsigned i = 0; i < 2; i++)
            t_ref(t, vb[zipf_pick(&seed, NVB)], 0);
        for (unsigned i = 0; i < 5; i++)
            t_ref(t, tex[zipf_pick(&seed, NTEX)], rnd(&seed, 8) == 0u);
        if (rnd(&seed, 20) == 0u)
            t_ref(t, lut[rnd(&seed, NLUT)], 0);
        unsigned slot = f % STREAM_LIFE;
        if (pending[slot] != UINT32_MAX)
            t_del(t, pending[slot]); /* used STREAM_LIFE frames ago */
        pending[slot] = UINT32_MAX;
        if (rnd(&seed, 2) == 0u) {
            uint32_t id = t_alloc(t, (2u + rnd(&seed, 5)) * 64 * KiB, GMC_PRIORITY_LOW);
            t_ref(t, id, 0);
            pending[slot] = id;
        }
    }
}

/* ------------------------------------------------------ offline models */

enum policy {
    POL_REPLICA,     /* the library: priority, then cold LRU, then hot last-in first */
    POL_LRU,         /* plain LRU */
    POL_BELADY,      /* furthest next use */
    POL_BELADY_TRIM, /* the same, unneeded victims kept */
    POL_BELADY_COST, /* cheapest per step of room first (clean and dead before dirty or reused) */
    POL_BELADY_COST_TRIM, /* the same, unneeded victims kept */
    /* Candidate policy changes (offline only, reported on stderr and in
     * docs/residency.md): priority first, then */
    POL_PRIO_LRU,    /* LRU (the library before the hot set) */
    POL_PRIO_LRU2,   /* LRU-2: the older second-to-last use first */
    POL_PRIO_REFAULT /* LRU, but MRU when the allocation coming in is a refault */
};

struct model_res {
    uint64_t in, out;      /* bytes paged in, written back */
    uint64_t clean;        /* evicted clean: dropped, nothing written back */
    uint64_t peak_live;    /* largest sum of sizes of live (created, not destroyed) allocations */
};

struct m_item {
    int created, deleted, placed, gpu, has_content, written, in_step;
    int hot, refault;  /* POL_REPLICA: the library's hot set and refault mark */
    uint64_t hot_seq;
    uint64_t last;    /* LRU tick */
    uint64_t last_step, prev_step; /* 1 + the last two steps that used it (0: none) */
    uint32_t up;      /* index into the item's uses: next use at or after the current step */
    struct gmc_range_node node;
};

struct model {
    const struct trace *t;
    enum policy pol;
    int contig;
    uint64_t base, cap, used, tick, live;
    uint32_t step;
    int refault; /* the allocation being placed was evicted before */
    struct gmc_range_mgr mgr;
    struct m_item *it;
    struct model_res res;
    uint32_t *cand;
    uint64_t hot_seq, hot_budget; /* POL_REPLICA */
};

static uint32_t next_use(const struct model *m, uint32_t id)
{
    const struct m_item *x = &m->it[id];
    uint32_t n = m->t->use_off[id + 1u] - m->t->use_off[id];
    return x->up < n ? m->t->uses[m->t->use_off[id] + x->up] : NO_USE;
}

static int try_place(struct model *m, uint32_t id)
{
    struct m_item *x = &m->it[id];
    uint64_t sz = m->t->a[id].size;
    if (m->contig) {
        memset(&x->node, 0, sizeof(x->node));
        if (gmc_range_insert(&m->mgr, &x->node, sz, 4096, GMC_RANGE_BEST) != GMC_RANGE_OK)
            return 0;
    } else if (m->cap - m->used < sz) {
        return 0;
    }
    m->used += sz;
    x->placed = 1;
    x->gpu = 0;
    x->refault = 0;
    return 1;
}

static void unplace(struct model *m, uint32_t id)
{
    struct m_item *x = &m->it[id];
    if (!x->placed)
        return;
    if (m->contig)
        gmc_range_remove(&m->mgr, &x->node);
    m->used -= m->t->a[id].size;
    x->placed = 0;
}

/* Candidate rows only: every eviction of an allocation with content writes
 * back, as when the library released the system copy at page-in. */
static int g_wb_all;

static void evict(struct model *m, uint32_t id)
{
    struct m_item *x = &m->it[id];
    if (x->gpu && (x->written || g_wb_all)) {
        /* Written since its last page-in (or never in system memory): write back. */
        m->res.out += m->t->a[id].size;
        x->written = 0;
    } else if (x->gpu) {
        /* Clean: the kept system copy holds it; the VRAM copy is dropped. */
        m->res.clean += m->t->a[id].size;
    }
    x->gpu = 0;
    x->hot = 0;
    x->refault = x->has_content;
    unplace(m, id);
}

/* ------------------------------------------ the library's hot set */

static uint64_t hot_bytes(const struct model *m)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < m->t->na; i++)
        if (m->it[i].hot && m->it[i].placed)
            n += m->t->a[i].size;
    return n;
}

/* What the library's policy (host/vidmm/gmc_victim.h) knows of item id:
 * the model's LRU tick and the trace's allocation index (creation order)
 * stand for the library's use tick and serial. */
static struct gmc_victim_key vkey(const struct model *m, uint32_t id)
{
    const struct m_item *x = &m->it[id];
    struct gmc_victim_key k = { .prio = m->t->a[id].prio,
                                .dirty = x->placed && x->gpu && x->written ? 1u : 0u,
                                .hot = x->hot ? 1u : 0u,
                                .hot_seq = x->hot_seq,
                                .lru = x->last,
                                .serial = id };
    return k;
}

/* The least recently used hot allocation of priority prio, in the
 * library's hot-set order. */
static uint32_t oldest_hot(const struct model *m, uint32_t prio)
{
    uint32_t o = UINT32_MAX;
    for (uint32_t i = 0; i < m->t->na; i++)
        if (m->it[i].hot && m->it[i].placed && m->t->a[i].prio == prio) {
            struct gmc_victim_key ki = vkey(m, i), ko;
            if (o != UINT32_MAX)
                ko = vkey(m, o);
            if (o == UINT32_MAX || gmc_victim_hot_cmp(&ki, &ko) < 0)
                o = i;
        }
    return o;
}

static void heat(struct model *m, uint32_t id)
{
    m->it[id].hot = 1;
    m->it[id].hot_seq = ++m->hot_seq;
}

/* Placed without evicting: hot while the hot set has room. */
static void heat_placed(struct model *m, uint32_t id)
{
    if (m->pol != POL_REPLICA)
        return;
    m->it[id].hot = 0;
    if (gmc_victim_heat_placed(hot_bytes(m), m->t->a[id].size, m->hot_budget))
        heat(m, id);
}

/* id needs room: a refault joins the hot set when it has room, or when it
 * was used more recently than the least recently used hot allocation of its
 * priority, which leave the set (least recently used first) until it fits. */
static void admit(struct model *m, uint32_t id)
{
    struct m_item *x = &m->it[id];
    x->hot = 0;
    if (m->pol != POL_REPLICA || !x->refault)
        return;
    uint64_t hb = hot_bytes(m), n = m->t->a[id].size;
    uint32_t o = hb + n > m->hot_budget ? oldest_hot(m, m->t->a[id].prio) : UINT32_MAX;
    struct gmc_victim_key ko;
    if (o != UINT32_MAX)
        ko = vkey(m, o);
    enum gmc_victim_admit adm = gmc_victim_admit(x->refault, x->last, n, hb, m->hot_budget,
                                                 o != UINT32_MAX ? &ko : NULL);
    if (adm == GMC_ADMIT_COLD)
        return;
    heat(m, id);
    if (adm == GMC_ADMIT_HOT)
        return;
    while (hb + n > m->hot_budget && (o = oldest_hot(m, m->t->a[id].prio)) != UINT32_MAX) {
        m->it[o].hot = 0;
        hb -= m->t->a[o].size;
    }
}

static const struct model *g_cmp_model;

static int cand_cmp(const void *pa, const void *pb)
{
    const struct model *m = g_cmp_model;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const struct m_item *x = &m->it[a], *y = &m->it[b];
    if (m->pol == POL_REPLICA || m->pol == POL_PRIO_LRU || m->pol == POL_PRIO_LRU2 || m->pol == POL_PRIO_REFAULT) {
        if (m->t->a[a].prio != m->t->a[b].prio)
            return m->t->a[a].prio < m->t->a[b].prio ? -1 : 1;
    }
    switch (m->pol) {
    case POL_REPLICA: {
        /* The library's own victim order. */
        struct gmc_victim_key ka = vkey(m, a), kb = vkey(m, b);
        return gmc_victim_cmp(&ka, &kb);
    }
    case POL_PRIO_LRU:
        break;
    case POL_PRIO_LRU2:
        if (x->prev_step != y->prev_step)
            return x->prev_step < y->prev_step ? -1 : 1;
        break;
    case POL_PRIO_REFAULT:
        if (m->refault && x->last != y->last)
            return x->last > y->last ? -1 : 1;
        break;
    case POL_LRU:
        break;
    case POL_BELADY_COST:
    case POL_BELADY_COST_TRIM: {
        /* Evicting costs the write-back if dirty and the reload if used again;
         * the room lasts until the next use: cheapest per step first. */
        uint32_t na = next_use(m, a), nb = next_use(m, b);
        double ca = (x->gpu && (x->written || g_wb_all) ? 1.0 : 0.0) + (na != NO_USE ? 1.0 : 0.0);
        double cb = (y->gpu && (y->written || g_wb_all) ? 1.0 : 0.0) + (nb != NO_USE ? 1.0 : 0.0);
        double ra = na == NO_USE ? ca * 1e-9 : ca / (double)(na - m->step + 1u);
        double rb = nb == NO_USE ? cb * 1e-9 : cb / (double)(nb - m->step + 1u);
        if (ra != rb)
            return ra < rb ? -1 : 1;
        if (na != nb)
            return na > nb ? -1 : 1;
        break;
    }
    case POL_BELADY:
    case POL_BELADY_TRIM: {
        uint32_t na = next_use(m, a), nb = next_use(m, b);
        if (na != nb)
            return na > nb ? -1 : 1; /* furthest first; NO_USE is the largest */
        break;
    }
    }
    if (x->last != y->last)
        return x->last < y->last ? -1 : 1;
    return a < b ? -1 : (a > b);
}

static int start_cmp(const void *pa, const void *pb)
{
    const struct model *m = g_cmp_model;
    uint64_t a = m->it[*(const uint32_t *)pa].node.start, b = m->it[*(const uint32_t *)pb].node.start;
    return a < b ? -1 : (a > b);
}

/* Bytes of the scan's victims cand[0..i] that overlap [at, at + sz). */
static uint64_t victim_bytes(const struct model *m, uint32_t i, uint64_t at, uint64_t sz)
{
    uint64_t b = 0;
    for (uint32_t j = 0; j <= i; j++) {
        const struct m_item *x = &m->it[m->cand[j]];
        uint64_t xs = m->t->a[m->cand[j]].size;
        if (x->placed && x->node.start < at + sz && x->node.start + xs > at)
            b += xs;
    }
    return b;
}

/* As the library's scan (host/vidmm/gmc_resid.c, least_evicted): in the
 * free run that starts at lo (holes and the victims cand[0..i]), the window
 * of sz bytes whose victims add up to the fewest bytes, the lowest of equal
 * ones; tried at the run's ends and at each victim's ends. */
static uint64_t least_evicted(const struct model *m, uint32_t i, uint64_t lo, uint64_t sz)
{
    uint64_t hi = m->base + m->cap; /* the run's end: the first block at or after lo that stays */
    for (uint32_t j = 0; j < m->t->na; j++) {
        const struct m_item *x = &m->it[j];
        int victim = 0;
        for (uint32_t k = 0; k <= i && !victim; k++)
            victim = m->cand[k] == j;
        if (x->placed && !x->deleted && !victim && x->node.start >= lo && x->node.start < hi)
            hi = x->node.start;
    }
    uint64_t best = lo, best_b = victim_bytes(m, i, lo, sz);
    for (uint32_t j = 0; j <= i; j++) {
        const struct m_item *x = &m->it[m->cand[j]];
        if (!x->placed || x->node.start < lo || x->node.start >= hi)
            continue;
        uint64_t e = x->node.start + m->t->a[m->cand[j]].size;
        uint64_t c[3] = { e, x->node.start >= sz ? x->node.start - sz : lo, hi - sz };
        for (unsigned k = 0; k < 3u; k++) {
            if (c[k] < lo || c[k] > hi || hi - c[k] < sz)
                continue;
            uint64_t b = victim_bytes(m, i, c[k], sz);
            if (b < best_b || (b == best_b && c[k] < best)) {
                best = c[k];
                best_b = b;
            }
        }
    }
    return best;
}

/* Place id, evicting unreferenced allocations in policy order. */
static void place_evict(struct model *m, uint32_t id)
{
    if (try_place(m, id)) {
        heat_placed(m, id);
        return;
    }
    admit(m, id);
    uint64_t sz = m->t->a[id].size, freeable = m->cap - m->used;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->t->na; i++) {
        const struct m_item *x = &m->it[i];
        if (x->placed && !x->deleted && !x->in_step) {
            m->cand[n++] = i;
            freeable += m->t->a[i].size;
        }
    }
    if (freeable < sz) {
        fprintf(stderr, "bench_evict: %s: model %d: step %u does not fit\n", m->t->name, (int)m->pol, m->step);
        exit(1);
    }
    g_cmp_model = m;
    qsort(m->cand, n, sizeof(*m->cand), cand_cmp);
    if (m->contig == 2) {
        /* drm_mm-style eviction scan: add victims in policy order until the
         * lowest hole they would open together with free space fits, then
         * evict only the victims inside the window of that hole whose
         * victims add up to the fewest bytes. */
        uint8_t *in_s = calloc(m->t->na, 1);
        uint32_t *blk = calloc(m->t->na, sizeof(*blk));
        if (in_s == NULL || blk == NULL)
            die("out of memory", 0);
        for (uint32_t i = 0; i < n; i++) {
            in_s[m->cand[i]] = 1;
            uint32_t nb = 0;
            for (uint32_t j = 0; j < m->t->na; j++)
                if (m->it[j].placed && !m->it[j].deleted && !in_s[j])
                    blk[nb++] = j;
            g_cmp_model = m;
            qsort(blk, nb, sizeof(*blk), start_cmp);
            uint64_t pos = m->base, end = m->base + m->cap, ws = UINT64_MAX;
            for (uint32_t j = 0; j <= nb && ws == UINT64_MAX; j++) {
                uint64_t next = j < nb ? m->it[blk[j]].node.start : end;
                if (next >= pos && next - pos >= sz)
                    ws = pos;
                else if (j < nb)
                    pos = next + m->t->a[blk[j]].size;
            }
            if (ws == UINT64_MAX)
                continue;
            ws = least_evicted(m, i, ws, sz);
            int hot_out = 0;
            for (uint32_t j = 0; j <= i; j++) {
                const struct m_item *x = &m->it[m->cand[j]];
                if (x->placed && x->node.start < ws + sz && x->node.start + m->t->a[m->cand[j]].size > ws) {
                    hot_out |= x->hot;
                    evict(m, m->cand[j]);
                }
            }
            if (hot_out) /* what comes before it could not make room */
                m->hot_budget = hot_bytes(m);
            free(in_s);
            free(blk);
            if (!try_place(m, id))
                die("scan placement", 0);
            return;
        }
        free(in_s);
        free(blk);
        fprintf(stderr, "bench_evict: %s: model %d: step %u fragmented\n", m->t->name, (int)m->pol, m->step);
        exit(1);
    }
    if (m->contig) {
        for (uint32_t i = 0; i < n; i++) {
            evict(m, m->cand[i]);
            if (try_place(m, id))
                return;
        }
        fprintf(stderr, "bench_evict: %s: model %d: step %u fragmented\n", m->t->name, (int)m->pol, m->step);
        exit(1);
    }
    /* Capacity only: choose victims until the request fits. */
    uint32_t k = 0;
    uint64_t free_b = m->cap - m->used;
    while (free_b < sz)
        free_b += m->t->a[m->cand[k++]].size;
    if (m->pol == POL_BELADY_TRIM || m->pol == POL_BELADY_COST_TRIM) {
        /* Keep the chosen victims that are not needed, nearest next use first. */
        for (uint32_t j = k - 1u; j-- > 0;) {
            uint64_t s = m->t->a[m->cand[j]].size;
            if (free_b - s >= sz) {
                free_b -= s;
                m->cand[j] = UINT32_MAX;
            }
        }
    }
    for (uint32_t j = 0; j < k; j++)
        if (m->cand[j] != UINT32_MAX)
            evict(m, m->cand[j]);
    if (!try_place(m, id))
        die("model placement", 0);
}

static struct model_res run_model(const struct trace *t, enum policy pol, int contig, uint64_t base,
                                  uint64_t cap)
{
    struct model m;
    memset(&m, 0, sizeof(m));
    m.t = t;
    m.pol = pol;
    m.contig = contig;
    m.base = base;
    m.cap = cap;
    m.hot_budget = UINT64_MAX;
    m.it = calloc(t->na, sizeof(*m.it));
    m.cand = calloc(t->na, sizeof(*m.cand));
    if (m.it == NULL || m.cand == NULL)
        die("out of memory", 0);
    if (contig && gmc_range_init(&m.mgr, base, cap) != GMC_RANGE_OK)
        die("range init", 0);
    for (uint32_t k = 0; k < t->ns; k++) {
        const struct t_step *st = &t->s[k];
        const struct t_ref *r = &t->r[st->ref0];
        m.step = k;
        for (uint32_t i = 0; i < st->nref; i++)
            m.it[r[i].id].in_step = 1;
        /* gmc_alloc_create: placed at once when there is room, no eviction. */
        for (uint32_t i = 0; i < st->nref; i++) {
            struct m_item *x = &m.it[r[i].id];
            if (!x->created) {
                x->created = 1;
                m.live += t->a[r[i].id].size;
                if (m.live > m.res.peak_live)
                    m.res.peak_live = m.live;
                if (try_place(&m, r[i].id))
                    heat_placed(&m, r[i].id);
                x->last = ++m.tick;
            }
        }
        /* gmc_make_resident: place (evicting), fill or page in, in order. */
        for (uint32_t i = 0; i < st->nref; i++) {
            uint32_t id = r[i].id;
            struct m_item *x = &m.it[id];
            m.refault = x->has_content && !x->gpu;
            if (!x->placed)
                place_evict(&m, id);
            if (!x->gpu) {
                if (x->has_content) {
                    m.res.in += t->a[id].size;
                    x->written = 0;
                } else {
                    x->has_content = 1; /* first touch: a fill, not counted */
                    x->written = 1;
                }
                x->gpu = 1;
            }
            x->last = ++m.tick;
        }
        /* gmc_submit, then gmc_evict (references dropped). */
        for (uint32_t i = 0; i < st->nref; i++) {
            struct m_item *x = &m.it[r[i].id];
            if (r[i].write)
                x->written = 1;
            x->last = ++m.tick;
            x->prev_step = x->last_step;
            x->last_step = k + 1u;
            x->in_step = 0;
            x->up++;
        }
        for (uint32_t i = 0; i < st->ndel; i++) {
            uint32_t id = t->del[st->del0 + i];
            unplace(&m, id);
            m.live -= t->a[id].size;
            m.it[id].deleted = 1;
            m.it[id].gpu = 0;
        }
    }
    for (uint32_t i = 0; i < t->na; i++)
        unplace(&m, i);
    if (contig)
        (void)gmc_range_fini(&m.mgr);
    free(m.it);
    free(m.cand);
    return m.res;
}

/* ---------------------------------------------------- the library's run */

/* The default "sim" device, with segment 2 strapped to 1/SCALE of its size
 * (the other descriptors as the hardware reports them). */
static int open_device(gmc_device **out)
{
    gmc_device *d;
    int rc = gmc_device_open("sim", &d);
    if (rc != GMC_OK)
        return rc;
    struct gmc_sim_config c;
    gmc_sim_config_default(&c);
    c.strap_segments = 1;
    struct gmc_device_info di;
    gmc_device_query(d, &di);
    c.seg_count = di.segment_count;
    for (unsigned i = 0; i < di.segment_count; i++) {
        struct gmc_segment_info si;
        gmc_segment_query(d, i + 1u, &si);
        c.seg[i] = (struct gmc_sim_segment){ si.desc.base, si.desc.size, si.desc.cpu_offset, si.desc.flags,
                                             (uint8_t)si.desc.banks, si.desc.sysmem_end };
    }
    gmc_device_close(d);
    c.seg[SEG_ID - 1u].size /= SCALE;
    return gmc_device_open_sim(&c, NULL, out);
}

struct lib_res {
    uint64_t in, out, cycles, paging_ops, build_ns, pg_ops;
    double api_s;
};

static struct lib_res run_library(const struct trace *t, uint64_t *seg_base, uint64_t *seg_size)
{
    gmc_device *dev;
    gmc_client *cl;
    int rc = open_device(&dev);
    if (rc != GMC_OK)
        die("open sim", rc);
    rc = gmc_client_create(dev, NULL, &cl);
    if (rc != GMC_OK)
        die("client", rc);
    struct gmc_segment_info si;
    rc = gmc_segment_query(dev, SEG_ID, &si);
    if (rc != GMC_OK)
        die("segment query", rc);
    *seg_base = si.desc.base;
    *seg_size = si.desc.size;

    gmc_handle *h = calloc(t->na, sizeof(*h));
    gmc_handle *set = calloc(t->na, sizeof(*set));
    struct gmc_submit_ref *refs = calloc(t->na, sizeof(*refs));
    struct gmc_gpu_op *ops = calloc(t->na + 1u, sizeof(*ops));
    if (h == NULL || set == NULL || refs == NULL || ops == NULL)
        die("out of memory", 0);

    struct gmc_device_stats s0, s1;
    struct gmc_paging_stats p0, p1;
    gmc_device_stats(dev, &s0);
    gmc_paging_get_stats(dev->pg, &p0);
    double api = 0;
    for (uint32_t k = 0; k < t->ns; k++) {
        const struct t_step *st = &t->s[k];
        const struct t_ref *r = &t->r[st->ref0];
        double t0 = now_s();
        for (uint32_t i = 0; i < st->nref; i++) {
            uint32_t id = r[i].id;
            if (h[id] == GMC_HANDLE_NONE) {
                struct gmc_alloc_desc d;
                gmc_alloc_desc_init(&d);
                d.size = t->a[id].size;
                d.priority = t->a[id].prio;
                d.supported_segments = GMC_SEGMENT_BIT(SEG_ID);
                rc = gmc_alloc_create(cl, &d, &h[id]);
                if (rc != GMC_OK)
                    die("create", rc);
            }
            set[i] = h[id];
        }
        struct gmc_residency_result res;
        rc = gmc_make_resident(cl, set, st->nref, &res);
        if (rc != GMC_OK) {
            fprintf(stderr, "bench_evict: %s: step %u: make resident: %s (%llu bytes needed)\n", t->name, k,
                    gmc_status_name(rc), (unsigned long long)res.bytes_needed);
            exit(1);
        }
        unsigned nops = 0, reader = UINT32_MAX, writer = UINT32_MAX;
        for (uint32_t i = 0; i < st->nref; i++) {
            refs[i].handle = set[i];
            refs[i].flags = r[i].write ? GMC_REF_WRITE : 0u;
            if (r[i].write) {
                ops[nops++] = (struct gmc_gpu_op){ .kind = GMC_GPU_FILL, .dst = i, .size = OP_BYTES,
                                                   .pattern = k };
                if (writer == UINT32_MAX)
                    writer = i;
            } else if (reader == UINT32_MAX) {
                reader = i;
            }
        }
        if (reader != UINT32_MAX && writer != UINT32_MAX)
            ops[nops++] = (struct gmc_gpu_op){ .kind = GMC_GPU_COPY, .src = reader, .dst = writer,
                                               .size = OP_BYTES };
        struct gmc_submit sub = { refs, st->nref, ops, nops };
        uint64_t fence = 0;
        rc = gmc_submit(cl, &sub, &fence);
        if (rc != GMC_OK)
            die("submit", rc);
        api += now_s() - t0;
        rc = gmc_fence_wait(dev, fence, 1000000u);
        if (rc != GMC_OK)
            die("fence wait", rc);
        t0 = now_s();
        rc = gmc_evict(cl, set, st->nref);
        if (rc != GMC_OK)
            die("evict", rc);
        for (uint32_t i = 0; i < st->ndel; i++) {
            uint32_t id = t->del[st->del0 + i];
            rc = gmc_alloc_destroy(cl, h[id]);
            if (rc != GMC_OK)
                die("destroy", rc);
            h[id] = GMC_HANDLE_NONE;
        }
        api += now_s() - t0;
    }
    gmc_device_stats(dev, &s1);
    gmc_paging_get_stats(dev->pg, &p1);
    struct lib_res out = {
        .in = s1.bytes_paged_in - s0.bytes_paged_in,
        .out = s1.bytes_paged_out - s0.bytes_paged_out,
        .cycles = s1.cycles - s0.cycles,
        .paging_ops = s1.paging_ops - s0.paging_ops,
        .build_ns = p1.build_ns - p0.build_ns,
        .pg_ops = p1.ops - p0.ops,
        .api_s = api,
    };
    free(h);
    free(set);
    free(refs);
    free(ops);
    gmc_device_close(dev);
    return out;
}

/* ------------------------------------------------------------------ main */

static void free_trace(struct trace *t)
{
    free(t->a);
    free(t->r);
    free(t->del);
    free(t->s);
    free(t->use_off);
    free(t->uses);
    free(t->dead);
}

/* The reference (not a bound): the smallest count of the capacity-only Belady variants. */
static uint64_t belady_ref(const struct trace *t, uint64_t base, uint64_t cap)
{
    static const enum policy v[] = { POL_BELADY, POL_BELADY_TRIM, POL_BELADY_COST, POL_BELADY_COST_TRIM };
    uint64_t best = UINT64_MAX;
    for (unsigned k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
        struct model_res r = run_model(t, v[k], 0, base, cap);
        if (r.in + r.out < best)
            best = r.in + r.out;
    }
    return best;
}


/* Write the trace in the bench subset of the gmc trace format
 * (docs/trace-format.md, docs/eviction-bench.md): what run_library() does,
 * step by step, so that `gmc run` repeats the library's run and
 * bench/evict_opt.py computes the optimum from the same file. */
static const char *prio_name(uint32_t p)
{
    switch (p) {
    case GMC_PRIORITY_MINIMUM: return "minimum";
    case GMC_PRIORITY_LOW: return "low";
    case GMC_PRIORITY_NORMAL: return "normal";
    case GMC_PRIORITY_HIGH: return "high";
    default: return "maximum";
    }
}

static void dump_trace(const struct trace *t, const char *dir, uint64_t seg_base, uint64_t seg_size)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.trace", dir, t->name);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        die(path, 0);
    fprintf(f, "# %s: the in-sample trace of bench/bench_evict.c (gen_%s), written by bench-evict --dump.\n",
            t->name, t->name);
    fprintf(f, "# Every allocation lives in segment %u, strapped to %llu KiB. Format: docs/eviction-bench.md.\n",
            SEG_ID, (unsigned long long)(seg_size / KiB));
    fprintf(f, "device sim:segs=3,seg1=0/0x200000/0x84,seg2=0x%llx/0x%llx/0x88/0/4,seg3=0x80000000/0x1000000/0x191\n",
            (unsigned long long)seg_base, (unsigned long long)seg_size);
    fprintf(f, "client app\n");
    uint8_t *made = calloc(t->na, 1);
    if (made == NULL)
        die("out of memory", 0);
    for (uint32_t k = 0; k < t->ns; k++) {
        const struct t_step *st = &t->s[k];
        const struct t_ref *r = &t->r[st->ref0];
        fprintf(f, "# step %u\n", k);
        for (uint32_t i = 0; i < st->nref; i++)
            if (!made[r[i].id]) {
                made[r[i].id] = 1;
                fprintf(f, "alloc a%u size=%lluK segments=%u priority=%s\n", r[i].id,
                        (unsigned long long)(t->a[r[i].id].size / KiB), SEG_ID, prio_name(t->a[r[i].id].prio));
            }
        fprintf(f, "resident");
        for (uint32_t i = 0; i < st->nref; i++)
            fprintf(f, " a%u", r[i].id);
        fprintf(f, "\nsubmit\n");
        /* References in the step's order (the library's use order), then
         * the copy, as run_library() builds the submission. */
        uint32_t reader = UINT32_MAX, writer = UINT32_MAX;
        for (uint32_t i = 0; i < st->nref; i++) {
            if (r[i].write) {
                fprintf(f, "  fill a%u size=4K pattern=0x%x\n", r[i].id, k);
                if (writer == UINT32_MAX)
                    writer = r[i].id;
            } else {
                fprintf(f, "  use a%u\n", r[i].id);
                if (reader == UINT32_MAX)
                    reader = r[i].id;
            }
        }
        if (reader != UINT32_MAX && writer != UINT32_MAX)
            fprintf(f, "  copy a%u a%u size=4K\n", reader, writer);
        fprintf(f, "end\nwait\nevict");
        for (uint32_t i = 0; i < st->nref; i++)
            fprintf(f, " a%u", r[i].id);
        fprintf(f, "\n");
        for (uint32_t i = 0; i < st->ndel; i++)
            fprintf(f, "destroy a%u\n", t->del[st->del0 + i]);
    }
    free(made);
    if (fclose(f) != 0)
        die(path, 0);
}

#define NCAND 9
static const char *const cand_name[NCAND] = {
    "priority, then LRU, evict until a hole opens",
    "priority, then LRU-2 (second-to-last use)",
    "priority, then LRU; MRU when the allocation coming in is a refault",
    "priority, then LRU, eviction scan (the library before the hot set)",
    "priority, then LRU-2, eviction scan",
    "the library: priority, clean first, cold LRU, hot last-in first, scan",
    "priority, then LRU, eviction scan; every eviction writes back",
    "the library's policy; every eviction writes back",
    "Belady ranking with the eviction scan (for reference)",
};

int main(int argc, char **argv)
{
    /* --dump DIR: also write the three traces as gmc trace files. */
    const char *dump_dir = argc == 3 && !strcmp(argv[1], "--dump") ? argv[2] : NULL;
    if (argc != 1 && dump_dir == NULL) {
        fprintf(stderr, "usage: bench-evict [--dump DIR]\n");
        return 2;
    }
    double cand_ratio[NCAND][3];
    static struct trace tr[3];
    gen_loop(&tr[0]);
    gen_stream(&tr[1]);
    gen_mixed(&tr[2]);
    double sum_bel = 0, sum_lru = 0;
    int match = 1;
    uint64_t wb = 0, wb_clean = 0, build_ns = 0, pg_ops = 0, ops = 0;
    double api_s = 0;
    double mixed_bpc = 0;
    char buf[4096];
    size_t len = 0;
    len += (size_t)snprintf(buf + len, sizeof(buf) - len, "{");
    for (unsigned i = 0; i < 3; i++) {
        struct trace *t = &tr[i];
        t_finish(t);
        uint64_t base = 0, cap = 0;
        struct lib_res lib = run_library(t, &base, &cap);
        if (dump_dir != NULL)
            dump_trace(t, dump_dir, base, cap);
        struct model_res rep = run_model(t, POL_REPLICA, 2, base, cap);
        struct model_res lru = run_model(t, POL_LRU, 2, base, cap);
        struct model_res belc = run_model(t, POL_BELADY, 1, base, cap);
        uint64_t belb = belady_ref(t, base, cap);
        /* Candidate policies (stderr, docs/residency.md "What closed the gap"). */
        static const struct {
            enum policy pol;
            int contig, wb_all;
        } cand[NCAND] = {
            { POL_PRIO_LRU, 1, 0 },  { POL_PRIO_LRU2, 1, 0 }, { POL_PRIO_REFAULT, 1, 0 },
            { POL_PRIO_LRU, 2, 0 },  { POL_PRIO_LRU2, 2, 0 }, { POL_REPLICA, 2, 0 },
            { POL_PRIO_LRU, 2, 1 },  { POL_REPLICA, 2, 1 },   { POL_BELADY, 2, 0 },
        };
        for (unsigned c = 0; c < NCAND; c++) {
            g_wb_all = cand[c].wb_all;
            struct model_res r = run_model(t, cand[c].pol, cand[c].contig, base, cap);
            cand_ratio[c][i] = (double)(r.in + r.out) / (double)belady_ref(t, base, cap);
            g_wb_all = 0;
        }
        uint64_t libb = lib.in + lib.out, lrub = lru.in + lru.out;
        if (rep.in != lib.in || rep.out != lib.out) {
            match = 0;
            fprintf(stderr,
                    "bench_evict: %s: the replica pages %llu in / %llu out, the library %llu / %llu\n",
                    t->name, (unsigned long long)rep.in, (unsigned long long)rep.out,
                    (unsigned long long)lib.in, (unsigned long long)lib.out);
        }
        if (belb == 0 || lrub == 0)
            die("a trace that pages nothing under Belady or LRU", 0);
        double vb = (double)libb / (double)belb, vl = (double)libb / (double)lrub;
        sum_bel += vb;
        sum_lru += vl;
        wb += rep.out;
        wb_clean += rep.clean;
        build_ns += lib.build_ns;
        pg_ops += lib.pg_ops;
        ops += lib.paging_ops;
        api_s += lib.api_s;
        if (i == 2)
            mixed_bpc = (double)libb / (double)lib.cycles;
        fprintf(stderr,
                "bench_evict: %-6s steps %u allocs %u footprint %.2fx: policy %llu (in %llu out %llu, %llu dropped "
                "clean) lru %llu belady %llu (contig %llu) cycles %llu\n",
                t->name, t->ns, t->na, (double)rep.peak_live / (double)cap, (unsigned long long)libb,
                (unsigned long long)lib.in, (unsigned long long)lib.out, (unsigned long long)rep.clean,
                (unsigned long long)lrub, (unsigned long long)belb, (unsigned long long)(belc.in + belc.out),
                (unsigned long long)lib.cycles);
        len += (size_t)snprintf(buf + len, sizeof(buf) - len,
                                "\"evict_%s_vs_lru\": %.3f, "
                                "\"evict_%s_policy_bytes\": %llu, \"evict_%s_lru_bytes\": %llu, ",
                                t->name, vl, t->name, (unsigned long long)libb, t->name,
                                (unsigned long long)lrub);
        free_trace(t);
    }
    /* Relative to the cheapest of four capacity-only Belady-style heuristics:
     * a reference point, not a bound (the optimum is bench/evict_opt.py's). */
    fprintf(stderr, "bench_evict: candidates (offline, bytes / the best Belady-style heuristic, not a bound):\n");
    for (unsigned c = 0; c < NCAND; c++)
        fprintf(stderr, "bench_evict:   %-70s loop %.3f stream %.3f mixed %.3f mean %.3f\n", cand_name[c],
                cand_ratio[c][0], cand_ratio[c][1], cand_ratio[c][2],
                (cand_ratio[c][0] + cand_ratio[c][1] + cand_ratio[c][2]) / 3.0);
    len += (size_t)snprintf(buf + len, sizeof(buf) - len,
                            "\"evict_vs_lru\": %.3f, \"evict_replica_match\": %d, "
                            "\"evict_clean_fraction\": %.3f, \"paging_bytes_per_cycle\": %.3f, "
                            "\"host_ns_per_page_op\": %.1f, \"host_api_ns_per_page_op\": %.1f}",
                            sum_lru / 3.0, match, wb + wb_clean ? (double)wb_clean / (double)(wb + wb_clean) : 0.0,
                            mixed_bpc, pg_ops ? (double)build_ns / (double)pg_ops : 0.0,
                            ops ? api_s * 1e9 / (double)ops : 0.0);
    puts(buf);
    return 0; /* a replica mismatch is reported (evict_replica_match 0), not fatal */
}
