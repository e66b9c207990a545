/*
 * exec.c - run an expanded trace (trace.h) on a gmc device and record what
 * the memory manager decided (timeline.h).
 *
 * After every operation each live allocation is queried (gmc_alloc_query)
 * and compared with where it sat before: a new placement opens an interval,
 * leaving GPU memory closes it as an eviction, a new place closes it as a
 * move. The device counters (gmc_device_stats) give the bytes paged per
 * step. Every decision is also written, one line each, to the decision
 * log whose FNV-1a hash is the run's digest: the same trace and seed give
 * the same log on every run.
 *
 * The executor keeps a shadow of every allocation's content as the trace
 * wrote it (writes, GPU fills and copies), so `read ... verify` checks the
 * bytes that came back through paging, eviction and power transitions.
 * Shadows are sparse (shadow.h) and ExistingSysMem backing is mapped
 * lazily, so host memory follows what the trace writes, not the sizes it
 * allocates.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "exec.h"
#include "gmc_check.h"
#include "shadow.h"

struct ent_rt {
    int alive;
    gmc_handle h[TR_MAX_CLIENTS];
    int cur;          /* open interval index, -1 none */
    unsigned locked;  /* client + 1 */
    struct shadow sh; /* expected content of the bytes the trace wrote */
    void *sysmem;     /* ExistingSysMem backing (mmap, sysmem_size bytes) */
    uint64_t sysmem_size;
    uint64_t gen;     /* writes so far (pattern key) */
};

struct run {
    const struct trace *t;
    const struct exec_opts *o;
    struct timeline *tl;
    gmc_device *dev;
    gmc_client *cl[TR_MAX_CLIENTS];
    struct ent_rt *er;
    uint64_t last_fence;
    uint64_t hash;
    struct gmc_device_stats prev;
    char *logbuf;
    size_t loglen, logcap;
    unsigned step;
    struct timespec t0, last_progress;
    unsigned progress_pct;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One line of the decision log: hashed, and written when asked. */
static void dlog(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dlog(struct run *r, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    line[n] = '\0';
    r->hash = tl_fnv(r->hash, line, (size_t)n);
    if (r->o->log)
        fputs(line, r->o->log);
}

static const char *short_status(int st)
{
    const char *n = gmc_status_name(st);
    if (strncmp(n, "GMC_E_", 6) == 0)
        return n + 6;
    if (strcmp(n, "GMC_OK") == 0)
        return "OK";
    return n;
}

/* Deterministic content of write number gen to entity e, at byte x. */
static uint8_t pattern_byte(uint64_t seed, unsigned e, uint64_t gen, uint64_t x)
{
    uint64_t z = seed ^ ((uint64_t)e << 40) ^ (gen << 20) ^ (x >> 3) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (uint8_t)(z >> ((x & 7u) * 8u));
}

static void fill32(uint8_t *dst, uint64_t off, uint64_t n, uint32_t pattern)
{
    /* the pattern is laid down little-endian from offset 0 of the allocation */
    for (uint64_t i = 0; i < n; i++)
        dst[i] = (uint8_t)(pattern >> (((off + i) & 3u) * 8u));
}

/* --------------------------------------------------------------- progress */

static void progress(struct run *r, int final)
{
    if (r->o->progress == EXEC_PROGRESS_NONE)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double since = (double)(ts.tv_sec - r->last_progress.tv_sec) +
                   (double)(ts.tv_nsec - r->last_progress.tv_nsec) * 1e-9;
    unsigned total = r->t->nops ? r->t->nops : 1;
    unsigned pct = (unsigned)((uint64_t)r->step * 100u / total);
    if (r->o->progress == EXEC_PROGRESS_TTY) {
        if (!final && since < 0.1)
            return;
    } else {
        if (!final && pct / 10u == r->progress_pct / 10u && since < 5.0)
            return;
        if (final)
            return;
    }
    r->last_progress = ts;
    r->progress_pct = pct;
    char in[32], out[32];
    tl_bytes(r->prev.bytes_paged_in, in, sizeof(in));
    tl_bytes(r->prev.bytes_paged_out, out, sizeof(out));
    int frame = r->step > 0 && r->step <= r->t->nops ? r->t->ops[r->step - 1].frame : -1;
    char fr[32] = "";
    if (frame >= 0)
        snprintf(fr, sizeof(fr), "  frame %d/%u", frame + 1, r->t->frames);
    double el = now_s() - ((double)r->t0.tv_sec + (double)r->t0.tv_nsec * 1e-9);
    /* A serial link: its throughput (bytes both ways per wall second) and
     * the frames sent again after damage. */
    char link[96] = "";
    struct gmc_link_stats ls;
    if (gmc_device_link_stats(r->dev, &ls) == GMC_OK)
        snprintf(link, sizeof(link), "  link %.1f KB/s, %" PRIu64 " retries",
                 el > 0.0 ? (double)(ls.bytes_tx + ls.bytes_rx) / el / 1000.0 : 0.0, ls.retries);
    if (r->o->progress == EXEC_PROGRESS_TTY)
        fprintf(stderr, "\r\033[K");
    fprintf(stderr, "gmc: step %u/%u (%u%%)%s  evictions %" PRIu64 "  paged in %s out %s  cycles %" PRIu64
                    "  %.1f s%s%s",
            r->step, r->t->nops, pct, fr, r->prev.evictions, in, out, r->prev.cycles, el, link,
            r->o->progress == EXEC_PROGRESS_TTY ? (final ? "\n" : "") : "\n");
    fflush(stderr);
}

/* --------------------------------------------------------------- snapshot */

static int holder(const struct run *r, unsigned e)
{
    const struct tr_entity *en = &r->t->entities[e];
    if (r->er[e].h[en->client])
        return (int)en->client;
    for (unsigned c = 0; c < r->t->nclients; c++)
        if (r->er[e].h[c])
            return (int)c;
    return -1;
}

static void close_interval(struct run *r, unsigned e, int kind)
{
    struct ent_rt *x = &r->er[e];
    if (x->cur < 0)
        return;
    struct tl_interval *iv = &r->tl->intervals[x->cur];
    iv->end = r->step; /* gone after this step */
    iv->end_kind = kind;
    x->cur = -1;
    static const char *const kn[] = { "run-end", "evict", "destroy", "move" };
    if (kind == TL_END_EVICTED || kind == TL_END_MOVED)
        dlog(r, "  %s %s", kn[kind], r->t->entities[e].name);
}

static void snapshot(struct run *r)
{
    struct timeline *tl = r->tl;
    for (unsigned e = 0; e < r->t->nentities; e++) {
        struct ent_rt *x = &r->er[e];
        if (!x->alive)
            continue;
        int c = holder(r, e);
        struct gmc_alloc_info ai;
        if (c < 0 || gmc_alloc_query(r->cl[c], x->h[c], &ai) != GMC_OK)
            continue;
        if (ai.state & GMC_ALLOC_STATE_LOST) {
            if (sh_any_known(&x->sh))
                dlog(r, "  lost %s", r->t->entities[e].name);
            sh_forget(&x->sh);
        }
        int placed = (ai.state & GMC_ALLOC_STATE_PLACED) != 0;
        if (x->cur >= 0) {
            const struct tl_interval *iv = &tl->intervals[x->cur];
            if (placed && iv->seg == ai.segment && iv->offset == ai.offset && iv->size == ai.placed_size)
                continue;
            close_interval(r, e, placed ? TL_END_MOVED : TL_END_EVICTED);
        }
        if (placed) {
            struct tl_interval iv = { .entity = e, .seg = ai.segment, .offset = ai.offset,
                                      .size = ai.placed_size, .start = r->step, .end = r->step + 1,
                                      .end_kind = TL_END_RUN };
            if (tl_add_interval(tl, &iv) == 0)
                x->cur = (int)tl->nintervals - 1;
            dlog(r, "  place %s seg %u off 0x%" PRIx64 " size 0x%" PRIx64, r->t->entities[e].name, ai.segment,
                 ai.offset, ai.placed_size);
        }
    }
}

/* ------------------------------------------------------------- operations */

static void free_sysmem(struct ent_rt *x)
{
    if (x->sysmem != NULL)
        munmap(x->sysmem, x->sysmem_size);
    x->sysmem = NULL;
    x->sysmem_size = 0;
}

static void kill_entity(struct run *r, unsigned e)
{
    struct ent_rt *x = &r->er[e];
    close_interval(r, e, TL_END_DESTROYED);
    x->alive = 0;
    sh_free(&x->sh);
    free_sysmem(x);
}

static int any_handle(const struct ent_rt *x)
{
    for (unsigned c = 0; c < TR_MAX_CLIENTS; c++)
        if (x->h[c])
            return 1;
    return 0;
}

static uint32_t memory_segments(const struct timeline *tl)
{
    uint32_t m = 0;
    for (unsigned i = 0; i < tl->nsegs; i++)
        if (!gmc_segment_is_aperture(&tl->segs[i].desc))
            m |= GMC_SEGMENT_BIT(i + 1);
    return m;
}

static void build_desc(const struct run *r, const struct tr_entity *en, struct gmc_alloc_desc *d)
{
    *d = en->desc;
    if (en->default_segments)
        d->supported_segments = memory_segments(r->tl);
}

static int op_alloc(struct run *r, const struct tr_op *op)
{
    const struct tr_entity *en = &r->t->entities[op->entity];
    struct ent_rt *x = &r->er[op->entity];
    struct gmc_alloc_desc d;
    build_desc(r, en, &d);
    void *sys = NULL;
    if (d.system_mem_size) {
        /* zero pages mapped on first touch: host memory follows use */
        sys = mmap(NULL, d.system_mem_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
        if (sys == MAP_FAILED)
            return GMC_E_NO_MEMORY;
        d.system_mem = sys;
    }
    gmc_handle h = GMC_HANDLE_NONE;
    int st = gmc_alloc_create(r->cl[op->client], &d, &h);
    if (st != GMC_OK) {
        if (sys != NULL)
            munmap(sys, d.system_mem_size);
        return st;
    }
    memset(x->h, 0, sizeof(x->h));
    x->h[op->client] = h;
    x->alive = 1;
    x->cur = -1;
    x->locked = 0;
    x->sysmem = sys;
    x->sysmem_size = sys != NULL ? d.system_mem_size : 0;
    x->gen = 0;
    memset(&x->sh, 0, sizeof(x->sh));
    return GMC_OK;
}

static int op_rw(struct run *r, const struct tr_op *op, char *why, size_t wn)
{
    struct ent_rt *x = &r->er[op->entity];
    gmc_client *cl = r->cl[op->client];
    gmc_handle h = x->h[op->client];
    uint8_t *buf = malloc(op->size ? op->size : 1);
    if (buf == NULL)
        return GMC_E_NO_MEMORY;
    int st;
    if (op->kind == TR_WRITE) {
        if (op->has_data)
            memcpy(buf, r->t->data + op->data_off, op->size);
        else if (op->has_pattern)
            fill32(buf, op->offset, op->size, op->pattern);
        else
            for (uint64_t i = 0; i < op->size; i++)
                buf[i] = pattern_byte(r->t->seed, op->entity, x->gen, op->offset + i);
        st = x->locked ? gmc_lock_write(cl, h, op->offset, buf, op->size)
                       : gmc_alloc_write(cl, h, op->offset, buf, op->size);
        if (st == GMC_OK) {
            x->gen++;
            if (sh_write(&x->sh, op->offset, buf, op->size) != 0)
                st = GMC_E_NO_MEMORY; /* the executor's own record, not the device */
        }
    } else {
        st = x->locked ? gmc_lock_read(cl, h, op->offset, buf, op->size)
                       : gmc_alloc_read(cl, h, op->offset, buf, op->size);
        if (st == GMC_OK) {
            uint64_t h = tl_fnv(TL_FNV_INIT, buf, op->size);
            dlog(r, "  read %s fnv %016" PRIx64, r->t->entities[op->entity].name, h);
            if (op->has_hash && h != op->hash) {
                snprintf(why, wn, "the bytes read hash to 0x%016" PRIx64 ", expected 0x%016" PRIx64 " (hash=)", h,
                         op->hash);
                free(buf);
                return GMC_E_CORRUPT;
            }
            if (op->verify) {
                uint64_t checked = 0, at = 0;
                uint8_t want = 0;
                if (sh_compare(&x->sh, op->offset, buf, op->size, &at, &want, &checked)) {
                    snprintf(why, wn, "content differs at byte %" PRIu64 " of '%s': read 0x%02x, expected 0x%02x",
                             at, r->t->entities[op->entity].name, buf[at - op->offset], want);
                    free(buf);
                    return GMC_E_CORRUPT;
                }
                r->tl->reads_verified++;
                r->tl->bytes_verified += checked;
            }
        }
    }
    free(buf);
    return st;
}

static int op_submit(struct run *r, const struct tr_op *op, uint64_t *fence)
{
    struct gmc_submit_ref refs[TR_MAX_REFS];
    for (unsigned i = 0; i < op->nrefs; i++) {
        refs[i].handle = r->er[op->refs[i].entity].h[op->client];
        refs[i].flags = op->refs[i].write ? GMC_REF_WRITE : 0u;
    }
    struct gmc_submit s = { .refs = refs, .nrefs = op->nrefs, .ops = op->ops, .nops = op->nops };
    int st = gmc_submit(r->cl[op->client], &s, fence);
    if (st != GMC_OK)
        return st;
    for (unsigned i = 0; i < op->nops; i++) {
        const struct gmc_gpu_op *g = &op->ops[i];
        struct ent_rt *d = &r->er[op->refs[g->dst].entity];
        int rc;
        if (g->kind == GMC_GPU_FILL) {
            rc = sh_fill32(&d->sh, g->dst_offset, g->size, g->pattern);
        } else {
            /* The library refuses a copy whose ranges share bytes
             * (GMC_E_OVERLAP, docs/dma.md), so this is a plain copy. */
            struct ent_rt *sx = &r->er[op->refs[g->src].entity];
            rc = sh_copy(&d->sh, g->dst_offset, &sx->sh, g->src_offset, g->size);
        }
        if (rc != 0)
            return GMC_E_NO_MEMORY;
    }
    return GMC_OK;
}

/* A client exits: its handles close (the allocations with no handle left
 * are gone). */
static int op_exit(struct run *r, const struct tr_op *op)
{
    const struct trace *t = r->t;
    gmc_client_destroy(r->cl[op->client]);
    r->cl[op->client] = NULL;
    for (unsigned e = 0; e < t->nentities; e++) {
        struct ent_rt *y = &r->er[e];
        if (!y->alive || !y->h[op->client])
            continue;
        y->h[op->client] = GMC_HANDLE_NONE;
        if (y->locked == op->client + 1)
            y->locked = 0;
        if (!any_handle(y))
            kill_entity(r, e);
    }
    return GMC_OK;
}

static int op_destroy(struct run *r, const struct tr_op *op, struct ent_rt *x)
{
    int st = gmc_alloc_destroy(r->cl[op->client], x->h[op->client]);
    if (st == GMC_OK) {
        x->h[op->client] = GMC_HANDLE_NONE;
        if (x->locked == op->client + 1)
            x->locked = 0;
        if (!any_handle(x))
            kill_entity(r, op->entity);
    }
    return st;
}

/* Another client opens a shared allocation: through an NT handle the
 * creator shares with it, or the global share handle. */
static int op_open(struct run *r, const struct tr_op *op, struct ent_rt *x)
{
    const struct tr_entity *en = &r->t->entities[op->entity];
    gmc_client *cl = r->cl[op->client];
    gmc_client *creator = r->cl[en->client];
    gmc_share_handle sh = GMC_HANDLE_NONE;
    int st;
    if (gmc_check_share_kind(&en->desc) == GMC_SHARE_NT) {
        st = gmc_alloc_share_nt(creator, x->h[en->client], cl, &sh);
    } else {
        struct gmc_alloc_info ai;
        st = gmc_alloc_query(creator, x->h[en->client], &ai);
        sh = ai.share_handle;
    }
    if (st != GMC_OK)
        return st;
    gmc_handle h = GMC_HANDLE_NONE;
    st = gmc_alloc_open(cl, sh, &h);
    if (st == GMC_OK)
        x->h[op->client] = h;
    return st;
}

static int op_lock(struct run *r, const struct tr_op *op, struct ent_rt *x)
{
    struct gmc_lock_map map;
    int st = gmc_lock(r->cl[op->client], x->h[op->client], op->lock_flags, &map);
    if (st == GMC_OK) {
        x->locked = op->client + 1;
        if (op->lock_flags & GMC_LOCK_DISCARD)
            sh_forget(&x->sh);
        dlog(r, "  map %s %s", r->t->entities[op->entity].name, map.kind == GMC_LOCK_MAP_BAR ? "bar" : "system");
    }
    return st;
}

/* resident and evict; a refused make-resident says how many bytes were
 * missing in why. */
static int op_residency(struct run *r, const struct tr_op *op, char *why, size_t wn)
{
    const struct trace *t = r->t;
    gmc_client *cl = r->cl[op->client];
    gmc_handle hs[TR_MAX_REFS];
    for (unsigned i = 0; i < op->nrefs; i++)
        hs[i] = r->er[op->refs[i].entity].h[op->client];
    if (op->kind == TR_EVICT)
        return gmc_evict(cl, hs, op->nrefs);
    struct gmc_residency_result res;
    memset(&res, 0, sizeof(res));
    int st = gmc_make_resident(cl, hs, op->nrefs, &res);
    if (st == GMC_E_OVER_BUDGET) {
        dlog(r, "  over budget group %u trim %" PRIu64, (unsigned)res.budget_group, res.bytes_to_trim);
        snprintf(why, wn, "%" PRIu64 " bytes to trim in the %s group", res.bytes_to_trim,
                 res.budget_group == GMC_SEGMENT_GROUP_LOCAL ? "local" : "non-local");
        if (op->has_trim && res.bytes_to_trim != op->trim) {
            snprintf(why, wn, "%" PRIu64 " bytes to trim, expected %" PRIu64, res.bytes_to_trim, op->trim);
            return GMC_E_CORRUPT;
        }
    }
    if (st == GMC_E_NO_SPACE && res.bytes_needed > 0)
        snprintf(why, wn, "'%s' needs %" PRIu64 " more bytes",
                 res.failed_index < op->nrefs ? t->entities[op->refs[res.failed_index].entity].name : "?",
                 res.bytes_needed);
    return st;
}

/* budget, app-budget, reserve: set per group; memory-info: log the
 * client's figures and compare the ones the trace gives (a difference is
 * GMC_E_CORRUPT, why says which). */
static int op_budget(struct run *r, const struct tr_op *op, char *why, size_t wn)
{
    gmc_client *cl = r->cl[op->client];
    if (op->kind == TR_MEMINFO) {
        struct gmc_video_memory_info vm;
        int st = gmc_client_video_memory(cl, op->group, &vm);
        if (st != GMC_OK)
            return st;
        const uint64_t got[4] = { vm.budget, vm.current_usage, vm.current_reservation, vm.available_for_reservation };
        static const char *const keys[4] = { "budget", "usage", "reservation", "available" };
        dlog(r, "  memory-info %s group %u budget %" PRIu64 " usage %" PRIu64 " reservation %" PRIu64
                " available %" PRIu64,
             r->t->clients[op->client].name, (unsigned)op->group, got[0], got[1], got[2], got[3]);
        for (unsigned k = 0; k < 4; k++)
            if ((op->bmask >> k & 1u) && got[k] != op->bval[k]) {
                snprintf(why, wn, "%s is %" PRIu64 ", expected %" PRIu64, keys[k], got[k], op->bval[k]);
                return GMC_E_CORRUPT;
            }
        return GMC_OK;
    }
    for (uint32_t g = 0; g < GMC_SEGMENT_GROUPS; g++) {
        if (!(op->bmask >> g & 1u))
            continue;
        int st = op->kind == TR_BUDGET     ? gmc_client_set_budget(cl, g, op->bval[g])
                 : op->kind == TR_RESERVE ? gmc_client_set_reservation(cl, g, op->bval[g])
                                          : gmc_device_set_budget(r->dev, g, op->bval[g]);
        if (st != GMC_OK)
            return st;
    }
    return GMC_OK;
}

/* standby, hibernate, resume; the power report goes to the decision log. */
static int op_power(struct run *r, const struct tr_op *op)
{
    struct gmc_power_report rep;
    memset(&rep, 0, sizeof(rep));
    int st = op->kind == TR_RESUME ? gmc_device_resume(r->dev, &rep)
                                   : gmc_device_power(r->dev,
                                                      op->kind == TR_STANDBY ? GMC_POWER_STANDBY
                                                                             : GMC_POWER_HIBERNATE,
                                                      &rep);
    if (st == GMC_OK)
        dlog(r, "  power preserved %" PRIu64 " saved %" PRIu64 " lost %" PRIu64 " bytes-saved %" PRIu64
                " bytes-restored %" PRIu64,
             rep.allocations_preserved, rep.allocations_saved, rep.allocations_lost, rep.bytes_saved,
             rep.bytes_restored);
    return st;
}

/* pin-flip, unpin-flip; the pin and where it holds go to the decision log. */
static int op_flip(struct run *r, const struct tr_op *op, struct ent_rt *x)
{
    gmc_client *cl = r->cl[op->client];
    const char *nm = r->t->entities[op->entity].name;
    if (op->kind == TR_UNPIN_FLIP) {
        int st = gmc_alloc_unpin_direct_flip(cl, x->h[op->client]);
        if (st == GMC_OK)
            dlog(r, "  flip-unpinned %s", nm);
        return st;
    }
    int st = gmc_alloc_pin_direct_flip(cl, x->h[op->client]);
    struct gmc_alloc_info ai;
    if (st == GMC_OK && gmc_alloc_query(cl, x->h[op->client], &ai) == GMC_OK)
        dlog(r, "  flip-pinned %s seg %u off 0x%" PRIx64, nm, ai.segment, ai.offset);
    return st;
}

static int run_op(struct run *r, const struct tr_op *op, char *why, size_t wn)
{
    const struct trace *t = r->t;
    struct ent_rt *x = op->entity < t->nentities ? &r->er[op->entity] : NULL;
    why[0] = '\0';
    switch (op->kind) {
    case TR_CLIENT: {
        struct gmc_client_desc cd = { .flags = t->clients[op->client].flags, .owner = t->clients[op->client].owner };
        return gmc_client_create(r->dev, &cd, &r->cl[op->client]);
    }
    case TR_EXIT:
        return op_exit(r, op);
    case TR_ALLOC:
        return op_alloc(r, op);
    case TR_DESTROY:
        return op_destroy(r, op, x);
    case TR_OPEN:
        return op_open(r, op, x);
    case TR_LOCK:
        return op_lock(r, op, x);
    case TR_UNLOCK: {
        int st = gmc_unlock(r->cl[op->client], x->h[op->client]);
        if (st == GMC_OK)
            x->locked = 0;
        return st;
    }
    case TR_WRITE:
    case TR_READ:
        return op_rw(r, op, why, wn);
    case TR_RESIDENT:
    case TR_EVICT:
        return op_residency(r, op, why, wn);
    case TR_SUBMIT: {
        uint64_t fence = 0;
        int st = op_submit(r, op, &fence);
        if (st == GMC_OK && fence > r->last_fence)
            r->last_fence = fence;
        return st;
    }
    case TR_WAIT:
        if (op->has_fence)
            return gmc_fence_wait(r->dev, op->fence, op->timeout_us);
        if (r->last_fence == 0)
            return GMC_OK;
        return gmc_fence_wait(r->dev, r->last_fence, op->timeout_us);
    case TR_STANDBY:
    case TR_HIBERNATE:
    case TR_RESUME:
        return op_power(r, op);
    case TR_BUDGET:
    case TR_APP_BUDGET:
    case TR_RESERVE:
    case TR_MEMINFO:
        return op_budget(r, op, why, wn);
    case TR_PIN_FLIP:
    case TR_UNPIN_FLIP:
        return op_flip(r, op, x);
    case TR_SET_PRIORITY:
        return gmc_alloc_set_priority(r->cl[op->client], x->h[op->client], op->priority);
    default:
        return GMC_E_INTERNAL;
    }
}

/* ------------------------------------------------------------------- run */

static int prepass(struct run *r, char *err, size_t errlen)
{
    const struct trace *t = r->t;
    struct gmc_segment_desc segs[TL_MAX_SEGS];
    for (unsigned i = 0; i < r->tl->nsegs; i++)
        segs[i] = r->tl->segs[i].desc;
    for (unsigned i = 0; i < t->nops; i++) {
        const struct tr_op *op = &t->ops[i];
        if (op->kind != TR_ALLOC)
            continue;
        const struct tr_entity *en = &t->entities[op->entity];
        struct gmc_alloc_desc d;
        build_desc(r, en, &d);
        static _Alignas(4096) const uint8_t dummy[GMC_PAGE_SIZE];
        if (d.system_mem_size)
            d.system_mem = dummy; /* only its alignment is judged here */
        const struct gmc_rule *rule = NULL;
        int st = gmc_rules_check_alloc(&d, segs, r->tl->nsegs, &rule);
        if (st == GMC_OK || (op->has_expect && op->expect == st))
            continue;
        if (rule != NULL)
            snprintf(err, errlen, "%s:%u: alloc %s: breaks rule %s on this device: %s (%s)", t->file, op->line,
                     en->name, gmc_rule_id(rule), gmc_rule_statement(rule), gmc_status_name(st));
        else
            snprintf(err, errlen, "%s:%u: alloc %s: refused on this device: %s (%s)", t->file, op->line,
                     en->name, gmc_strerror(st), gmc_status_name(st));
        return -1;
    }
    return 0;
}

/* Open the device of o->device and record its segments in the timeline.
 * Returns 0, or 2 with err set. */
static int run_open(struct run *r, char *err, size_t errlen)
{
    const struct exec_opts *o = r->o;
    struct timeline *tl = r->tl;
    struct gmc_open_report rep;
    memset(&rep, 0, sizeof(rep));
    int st = gmc_device_open_ex(o->device, &rep, &r->dev);
    if (st != GMC_OK) {
        if (rep.rule)
            snprintf(err, errlen, "cannot open device '%s': segment %u breaks rule %s: %s (%s)", o->device,
                     rep.segment, gmc_rule_id(rep.rule), gmc_rule_statement(rep.rule), gmc_status_name(st));
        else
            snprintf(err, errlen, "cannot open device '%s': %s (%s)%s", o->device, gmc_strerror(st),
                     gmc_status_name(st), "");
        if (rep.error_pos && strlen(err) + 40 < errlen)
            snprintf(err + strlen(err), errlen - strlen(err), " at byte %zu", rep.error_pos);
        return 2;
    }
    gmc_device_query(r->dev, &tl->info);
    tl->nsegs = tl->info.segment_count < TL_MAX_SEGS ? tl->info.segment_count : TL_MAX_SEGS;
    for (unsigned i = 0; i < tl->nsegs; i++) {
        struct gmc_segment_info si;
        if (gmc_segment_query(r->dev, i + 1, &si) == GMC_OK)
            tl->segs[i].desc = si.desc;
    }
    return 0;
}

/* --trace FILE.fst: start the waveform, unless its window ends before the
 * run starts. Returns 0, or 2 with err set. */
static int run_waveform(struct run *r, char *err, size_t errlen)
{
    const struct exec_opts *o = r->o;
    if (!o->fst)
        return 0;
    struct gmc_device_stats ds;
    memset(&ds, 0, sizeof(ds));
    gmc_device_stats(r->dev, &ds);
    if (o->win_end != 0 && o->win_end <= ds.cycles) {
        snprintf(err, errlen,
                 "the waveform window ends at cycle %" PRIu64 ", before the run starts (cycle %" PRIu64
                 ", after opening the device)",
                 o->win_end, ds.cycles);
        return 2;
    }
    int st = gmc_device_trace(r->dev, o->fst, o->win_start, o->win_end);
    if (st != GMC_OK) {
        snprintf(err, errlen, "cannot write waveform '%s': %s (%s)", o->fst, gmc_strerror(st),
                 gmc_status_name(st));
        return 2;
    }
    return 0;
}

/* The timeline's clients and entities, and the per-entity run state.
 * Returns 0, or 2 with err set. */
static int run_entities(struct run *r, char *err, size_t errlen)
{
    const struct trace *t = r->t;
    struct timeline *tl = r->tl;
    tl->nclients = t->nclients;
    for (unsigned c = 0; c < t->nclients; c++)
        snprintf(tl->clients[c].name, sizeof(tl->clients[c].name), "%s", t->clients[c].name);
    tl->nentities = t->nentities;
    tl->entities = calloc(t->nentities ? t->nentities : 1, sizeof(*tl->entities));
    r->er = calloc(t->nentities ? t->nentities : 1, sizeof(*r->er));
    if (tl->entities == NULL || r->er == NULL) {
        snprintf(err, errlen, "out of memory");
        free(r->er);
        r->er = NULL;
        return 2;
    }
    for (unsigned e = 0; e < t->nentities; e++) {
        const struct tr_entity *en = &t->entities[e];
        struct tl_entity *te = &tl->entities[e];
        snprintf(te->name, sizeof(te->name), "%s", en->name);
        te->client = en->client;
        te->priority = gmc_check_priority(&en->desc);
        te->size = en->cpu_size;
        te->line = en->line;
        r->er[e].cur = -1;
    }
    return 0;
}

/* The first failure's "FILE:LINE: op name: STATUS (message)..." line. */
static void note_first_error(struct run *r, const struct tr_op *op, int st, int want, const char *why)
{
    const struct trace *t = r->t;
    struct timeline *tl = r->tl;
    if (tl->first_error[0] != '\0')
        return;
    const int named = op->kind == TR_ALLOC || op->kind == TR_DESTROY || op->kind == TR_OPEN || op->kind == TR_LOCK ||
                      op->kind == TR_UNLOCK || op->kind == TR_WRITE || op->kind == TR_READ ||
                      op->kind == TR_PIN_FLIP || op->kind == TR_UNPIN_FLIP || op->kind == TR_SET_PRIORITY;
    const char *nm = op->entity < t->nentities && named ? t->entities[op->entity].name : "";
    snprintf(tl->first_error, sizeof(tl->first_error), "%s:%u: %s%s%s: %s (%s)%s%s%s%s", t->file, op->line,
             tr_kind_name(op->kind), nm[0] ? " " : "", nm, gmc_status_name(st), gmc_strerror(st),
             op->has_expect ? ", expected " : "", op->has_expect ? gmc_status_name(want) : "", why[0] ? ": " : "",
             why);
}

/* Run operation r->step and record it. Returns 1 when it did not answer
 * what the trace expects, else 0. */
static int run_step(struct run *r)
{
    const struct tr_op *op = &r->t->ops[r->step];
    struct timeline *tl = r->tl;
    char why[256];
    int want = op->has_expect ? op->expect : GMC_OK;
    int st = run_op(r, op, why, sizeof(why));
    dlog(r, "step %u line %u %s %s", r->step, op->line, tr_kind_name(op->kind), short_status(st));
    snapshot(r);
    struct gmc_device_stats now;
    memset(&now, 0, sizeof(now));
    gmc_device_stats(r->dev, &now);
    struct tl_step ts = { .line = op->line, .kind = op->kind, .status = st, .frame = op->frame,
                          .paged_in = now.bytes_paged_in - r->prev.bytes_paged_in,
                          .paged_out = now.bytes_paged_out - r->prev.bytes_paged_out,
                          .filled = now.bytes_filled - r->prev.bytes_filled,
                          .evictions = now.evictions - r->prev.evictions,
                          .page_ins = now.page_ins - r->prev.page_ins,
                          .cycles = now.cycles };
    if (ts.paged_in || ts.paged_out || ts.evictions)
        dlog(r, "  paged in %" PRIu64 " out %" PRIu64 " evictions %" PRIu64, ts.paged_in, ts.paged_out,
             ts.evictions);
    r->prev = now;
    tl_add_step(tl, &ts);
    if (st != want) {
        tl->ops_failed++;
        note_first_error(r, op, st, want, why);
        return 1;
    }
    if (want != GMC_OK)
        tl->ops_expected_fail++;
    return 0;
}

/* After the last step: close open intervals, collect the end state and
 * counters, close the device and free the run state. */
static void run_finish(struct run *r, unsigned end_step)
{
    const struct trace *t = r->t;
    struct timeline *tl = r->tl;
    /* close what is still placed */
    for (unsigned e = 0; e < t->nentities; e++)
        if (r->er[e].cur >= 0) {
            tl->intervals[r->er[e].cur].end = end_step;
            tl->intervals[r->er[e].cur].end_kind = TL_END_RUN;
            r->er[e].cur = -1;
        }
    tl->has_stats = gmc_device_stats(r->dev, &tl->stats) == GMC_OK;
    tl->has_link = gmc_device_link_stats(r->dev, &tl->link) == GMC_OK;
    gmc_device_query(r->dev, &tl->info);
    for (unsigned i = 0; i < tl->nsegs; i++)
        gmc_segment_query(r->dev, i + 1, &tl->segs[i].end);
    for (unsigned c = 0; c < t->nclients; c++)
        if (r->cl[c])
            tl->clients[c].has_stats = gmc_client_stats(r->cl[c], &tl->clients[c].stats) == GMC_OK &&
                                       gmc_client_video_memory(r->cl[c], GMC_SEGMENT_GROUP_LOCAL,
                                                               &tl->clients[c].vm[0]) == GMC_OK &&
                                       gmc_client_video_memory(r->cl[c], GMC_SEGMENT_GROUP_NON_LOCAL,
                                                               &tl->clients[c].vm[1]) == GMC_OK;
    /* The hardware's counters last: their register reads take bus cycles
     * the stats above (cycles) must not include. */
    if (tl->has_stats)
        (void)gmc_device_hw_counters(r->dev, &tl->stats.hw);
    dlog(r, "end steps %u failed %" PRIu64, end_step, tl->ops_failed);
    tl->digest = r->hash;
    gmc_device_close(r->dev);
    for (unsigned e = 0; e < t->nentities; e++) {
        sh_free(&r->er[e].sh);
        free_sysmem(&r->er[e]);
    }
    free(r->er);
}

int exec_run(const struct trace *t, const struct exec_opts *o, struct timeline *tl, char *err, size_t errlen)
{
    struct run r;
    memset(&r, 0, sizeof(r));
    r.t = t;
    r.o = o;
    r.tl = tl;
    r.hash = TL_FNV_INIT;
    memset(tl, 0, sizeof(*tl));
    snprintf(tl->trace, sizeof(tl->trace), "%s", t->file);
    snprintf(tl->device, sizeof(tl->device), "%s", o->device);
    tl->seed = t->seed;
    tl->planned_steps = t->nops;
    tl->frames = t->frames;
    err[0] = '\0';

    if (run_open(&r, err, errlen) != 0)
        return 2;
    if (prepass(&r, err, errlen) != 0 || run_waveform(&r, err, errlen) != 0 ||
        run_entities(&r, err, errlen) != 0) {
        gmc_device_close(r.dev);
        return 2;
    }
    gmc_device_stats(r.dev, &r.prev);
    clock_gettime(CLOCK_MONOTONIC, &r.t0);
    r.last_progress = r.t0;
    double start = now_s();
    const char *base = strrchr(t->file, '/');
    /* The device string is not hashed: the same decisions on the sim
     * backend strapped like a board and on the board itself (uart:) give
     * the same digest (docs/board-sim.md). */
    if (o->log)
        fprintf(o->log, "# device %s\n", o->device);
    dlog(&r, "gmc decision log: %s seed %" PRIu64 " operations %u", base ? base + 1 : t->file, t->seed, t->nops);
    int rc = 0;
    for (r.step = 0; r.step < t->nops; r.step++) {
        if (run_step(&r) != 0) {
            rc = 1;
            if (!o->keep_going) {
                r.step++;
                break;
            }
        }
        progress(&r, 0);
    }
    unsigned end_step = r.step;
    progress(&r, 1);
    tl->wall_seconds = now_s() - start;
    run_finish(&r, end_step);
    return rc;
}
