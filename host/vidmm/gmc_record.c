/*
 * gmc_record.c - write a program's calls on a device as a gmc trace
 * (docs/trace-format.md, "Recording").
 *
 * DOC: Overview
 *
 * Recording starts on a device without clients (gmc_device_record, or
 * GMC_RECORD when the device opens) and writes one trace line per call
 * that changes the manager's state, with expect= for a call that answered
 * a failure, so that `gmc replay` makes the same calls in the same order
 * and they answer the same. Names are given in creation order: clients c1,
 * c2, ..., allocations a1, a2, ... (every handle of one allocation, in
 * whichever client, goes by the allocation's name, as in the trace
 * language). Write data goes inline as hex up to GMC_REC_INLINE_MAX
 * bytes, else into the side file TRACE.data, each distinct content once
 * (a write whose bytes are already in the file refers to them there);
 * reads carry hash= with the FNV-1a of what the program read.
 *
 * A call the trace cannot express (an argument that is not a known
 * handle, a NULL pointer, a count or range outside what the language
 * takes, a call with no trace operation) is written as a comment line
 * "# not recorded: ..." naming the call and its status; queries change
 * nothing and are not written.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmc.h"
#include "gmc_check.h"
#include "gmc_record.h"
#include "gmc_flag_names.h"
#include "gmc_status.h"
#include "gmc_vobj.h"

#define GMC_REC_INLINE_MAX 32u   /* bytes of write data written inline as hex */
#define GMC_REC_MAX_CLIENTS 32u  /* the trace language's clients (TR_MAX_CLIENTS) */
#define GMC_REC_MAX_NAMES 48u    /* names on one resident/evict line (the parser takes 64 words) */
#define GMC_REC_MAX_ACCESS (64ull << 20) /* bytes of one read or write line */

/* A key -> value map over 64-bit keys (0 and ~0 are never keys: handles
 * and share handles are neither). */
struct rec_map {
    uint64_t *key, *val;
    size_t cap, used;
};
#define MAP_EMPTY 0u
#define MAP_GONE UINT64_MAX

struct rec_ent {
    unsigned creator;  /* client index */
    int nt;            /* NtSecuritySharing */
    uint64_t cpu_size; /* page-rounded size: what the trace lets an access cover */
    unsigned locked;   /* client index + 1 holding the lock, else 0 */
    unsigned holders;  /* handles open on it, over all clients */
};

struct gmc_rec {
    FILE *f;
    FILE *data;        /* side file, or NULL (inline only) */
    uint64_t data_len;
    int failed;        /* a write of the trace or its data failed */
    int mute;
    const gmc_client *client[GMC_REC_MAX_CLIENTS]; /* live clients by index, NULL once gone */
    unsigned nclients; /* created so far */
    struct rec_ent *ent;
    unsigned nents, cap_ents;
    struct rec_map handles; /* handle -> entity << 8 | client */
    struct rec_map shares;  /* share handle -> entity */
    struct rec_map blobs;   /* FNV-1a of a write's data -> offset in the side file */
    uint64_t last_submit;   /* highest fence a recorded submission returned */
};

/* ------------------------------------------------------------------ map */

static size_t map_slot(const struct rec_map *m, uint64_t k)
{
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 17) & (m->cap - 1u);
}

static int map_get(const struct rec_map *m, uint64_t k, uint64_t *v)
{
    if (m->cap == 0u || k == MAP_EMPTY || k == MAP_GONE)
        return 0;
    for (size_t i = map_slot(m, k);; i = (i + 1u) & (m->cap - 1u)) {
        if (m->key[i] == MAP_EMPTY)
            return 0;
        if (m->key[i] == k) {
            *v = m->val[i];
            return 1;
        }
    }
}

static int map_put(struct rec_map *m, uint64_t k, uint64_t v);

static int map_grow(struct rec_map *m)
{
    struct rec_map n = { NULL, NULL, m->cap ? m->cap * 2u : 64u, 0u };
    n.key = calloc(n.cap, sizeof(*n.key));
    n.val = calloc(n.cap, sizeof(*n.val));
    if (n.key == NULL || n.val == NULL) {
        free(n.key);
        free(n.val);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i] != MAP_EMPTY && m->key[i] != MAP_GONE)
            (void)map_put(&n, m->key[i], m->val[i]);
    free(m->key);
    free(m->val);
    *m = n;
    return 0;
}

static int map_put(struct rec_map *m, uint64_t k, uint64_t v)
{
    if (k == MAP_EMPTY || k == MAP_GONE)
        return -1;
    if ((m->used + 1u) * 2u > m->cap && map_grow(m) != 0)
        return -1;
    size_t gone = SIZE_MAX;
    size_t i = map_slot(m, k);
    for (;; i = (i + 1u) & (m->cap - 1u)) {
        if (m->key[i] == k) {
            m->val[i] = v;
            return 0;
        }
        if (m->key[i] == MAP_GONE && gone == SIZE_MAX)
            gone = i;
        if (m->key[i] == MAP_EMPTY)
            break;
    }
    if (gone != SIZE_MAX) {
        i = gone;
    } else {
        m->used++;
    }
    m->key[i] = k;
    m->val[i] = v;
    return 0;
}

static void map_del(struct rec_map *m, uint64_t k)
{
    if (m->cap == 0u || k == MAP_EMPTY || k == MAP_GONE)
        return;
    for (size_t i = map_slot(m, k);; i = (i + 1u) & (m->cap - 1u)) {
        if (m->key[i] == MAP_EMPTY)
            return;
        if (m->key[i] == k) {
            m->key[i] = MAP_GONE;
            return;
        }
    }
}

static void map_free(struct rec_map *m)
{
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof(*m));
}

/* -------------------------------------------------------------- writing */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ull

static void out(struct gmc_rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(struct gmc_rec *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(r->f, fmt, ap) < 0)
        r->failed = 1;
    va_end(ap);
}

/* End a line; flushed, so a program that stops early leaves its calls. */
static void eol(struct gmc_rec *r)
{
    if (fputc('\n', r->f) == EOF || fflush(r->f) != 0)
        r->failed = 1;
}

static const char *short_status(int st)
{
    const char *n = gmc_status_name(st);
    if (strncmp(n, "GMC_E_", 6) == 0)
        return n + 6;
    return strcmp(n, "GMC_OK") == 0 ? "OK" : n;
}

/* " expect=STATUS" for a failure. */
static void expect(struct gmc_rec *r, int st)
{
    if (st != GMC_OK)
        out(r, " expect=%s", short_status(st));
}

static void comment(struct gmc_rec *r, const char *call, const char *why, int st)
{
    out(r, "# not recorded: %s (%s): %s", call, gmc_status_name(st), why);
    eol(r);
}

static void flag_names(struct gmc_rec *r, const char *key, const struct gmc_flag_name *t, uint32_t v)
{
    if (v == 0u)
        return;
    out(r, " %s=", key);
    int first = 1;
    for (; t->name != NULL; t++)
        if (v & t->bit) {
            out(r, "%s%s", first ? "" : ",", t->name);
            first = 0;
        }
}

/* Whether every bit of v has a name in t. */
static int flags_known(const struct gmc_flag_name *t, uint32_t v)
{
    for (; t->name != NULL; t++)
        v &= ~t->bit;
    return v == 0u;
}

static struct gmc_rec *rec_of(const gmc_device *dev)
{
    if (dev == NULL || dev->rec == NULL || dev->rec->mute != 0)
        return NULL;
    return dev->rec;
}

static struct gmc_rec *rec_of_client(const gmc_client *c)
{
    return c != NULL ? rec_of(c->dev) : NULL;
}

/* The recording's index of a live client, or -1. */
static int client_index(const struct gmc_rec *r, const gmc_client *c)
{
    for (unsigned i = 0; i < r->nclients; i++)
        if (r->client[i] == c)
            return (int)i;
    return -1;
}

/* The entity of client ci's handle h, or -1. */
static long handle_ent(const struct gmc_rec *r, unsigned ci, gmc_handle h)
{
    uint64_t v;
    if (!map_get(&r->handles, h, &v) || (v & 0xffu) != ci)
        return -1;
    return (long)(v >> 8);
}

/* ------------------------------------------------------ start and stop */

/* Close the files and free the recorder: whether a write failed. */
static int rec_close(gmc_device *dev)
{
    struct gmc_rec *r = dev->rec;
    if (r == NULL)
        return 0;
    if (r->f != NULL && fclose(r->f) != 0)
        r->failed = 1;
    if (r->data != NULL && fclose(r->data) != 0)
        r->failed = 1;
    map_free(&r->handles);
    map_free(&r->shares);
    map_free(&r->blobs);
    free(r->ent);
    int failed = r->failed;
    free(r);
    dev->rec = NULL;
    return failed;
}

int gmc_rec_start(gmc_device *dev, const char *path, uint32_t flags)
{
    if (dev == NULL || path == NULL)
        return GMC_E_NULL_POINTER;
    if (flags & ~GMC_RECORD_FLAGS_MASK)
        return GMC_E_RECORD_OPTION;
    if (path[0] == '\0')
        return GMC_E_INVALID_ARG;
    if (dev->rec != NULL)
        return GMC_E_BUSY;
    if (dev->clients != NULL || dev->power != GMC_POWER_D0)
        return GMC_E_BAD_STATE;
    struct gmc_rec *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return GMC_E_NO_MEMORY;
    /* The side file is named in the trace by its name beside the trace:
     * a name the trace's words can hold, else every write goes inline. */
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    int side = !(flags & GMC_RECORD_INLINE) && strpbrk(base, " \t#{}") == NULL;
    r->f = fopen(path, "w");
    if (r->f == NULL) {
        free(r);
        return GMC_E_RECORD_IO;
    }
    dev->rec = r;
    if (side) {
        size_t n = strlen(path) + 6u;
        char *dp = malloc(n);
        if (dp == NULL) {
            (void)rec_close(dev);
            return GMC_E_NO_MEMORY;
        }
        snprintf(dp, n, "%s.data", path);
        r->data = fopen(dp, "w+b");
        free(dp);
        if (r->data == NULL) {
            (void)rec_close(dev);
            return GMC_E_RECORD_IO;
        }
    }
    out(r, "# gmc trace recorded by libgmc (docs/trace-format.md, \"Recording\")");
    eol(r);
    if (dev->devstr != NULL)
        out(r, "device %s", dev->devstr);
    else
        out(r, "# device: opened from a model configuration (gmc_device_open_sim): give --device");
    eol(r);
    if (side) {
        out(r, "data %s.data", base);
        eol(r);
    }
    static const char *const groups[GMC_SEGMENT_GROUPS] = { "local", "non-local" };
    for (unsigned g = 0; g < GMC_SEGMENT_GROUPS; g++)
        if (dev->bud_app[g] != dev->bud_capacity[g]) {
            out(r, "app-budget %s=%" PRIu64, groups[g], dev->bud_app[g]);
            eol(r);
        }
    if (r->failed) {
        (void)rec_close(dev);
        return GMC_E_RECORD_IO;
    }
    return GMC_OK;
}

int gmc_rec_stop(gmc_device *dev)
{
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    if (dev->rec == NULL)
        return GMC_E_BAD_STATE;
    return rec_close(dev) ? GMC_E_RECORD_IO : GMC_OK;
}

void gmc_rec_free(gmc_device *dev)
{
    if (dev != NULL)
        (void)rec_close(dev);
}

int gmc_rec_start_env(gmc_device *dev)
{
    const char *path = getenv("GMC_RECORD");
    if (path == NULL || path[0] == '\0')
        return GMC_OK;
    uint32_t flags = 0;
    const char *opt = getenv("GMC_RECORD_OPTIONS");
    if (opt != NULL) {
        char buf[128];
        if (strlen(opt) >= sizeof(buf))
            return GMC_E_RECORD_OPTION;
        memcpy(buf, opt, strlen(opt) + 1u);
        char *save = NULL;
        for (char *w = strtok_r(buf, ", ", &save); w != NULL; w = strtok_r(NULL, ", ", &save)) {
            if (strcmp(w, "inline") == 0)
                flags |= GMC_RECORD_INLINE;
            else
                return GMC_E_RECORD_OPTION;
        }
    }
    return gmc_rec_start(dev, path, flags);
}

void gmc_rec_mute(gmc_device *dev, int delta)
{
    if (dev != NULL && dev->rec != NULL)
        dev->rec->mute += delta;
}

/* -------------------------------------------------------------- clients */

void gmc_rec_client_create(gmc_device *dev, const struct gmc_client_desc *desc, const gmc_client *c, int st)
{
    struct gmc_rec *r = rec_of(dev);
    if (r == NULL)
        return;
    if (st != GMC_OK) {
        comment(r, "gmc_client_create", "a client operation cannot fail in the trace language", st);
        return;
    }
    if (r->nclients == GMC_REC_MAX_CLIENTS) {
        comment(r, "gmc_client_create", "more than 32 clients in one trace; this client's calls are not "
                                        "recorded either",
                st);
        return;
    }
    unsigned i = r->nclients++;
    r->client[i] = c;
    out(r, "client c%u", i + 1u);
    if (desc != NULL && desc->owner != 0u)
        out(r, " owner=%" PRIu32, desc->owner);
    if (desc != NULL && (desc->flags & GMC_CLIENT_NON_SECURE))
        out(r, " nonsecure");
    eol(r);
}

void gmc_rec_client_destroy(const gmc_client *c)
{
    struct gmc_rec *r = rec_of_client(c);
    if (r == NULL)
        return;
    int ci = client_index(r, c);
    if (ci < 0)
        return;
    for (size_t i = 0; i < r->handles.cap; i++) {
        uint64_t k = r->handles.key[i], v = r->handles.val[i];
        if (k == MAP_EMPTY || k == MAP_GONE || (v & 0xffu) != (unsigned)ci)
            continue;
        struct rec_ent *e = &r->ent[v >> 8];
        e->holders--;
        if (e->locked == (unsigned)ci + 1u)
            e->locked = 0;
        r->handles.key[i] = MAP_GONE;
    }
    r->client[ci] = NULL;
    out(r, "exit c%d", ci + 1);
    eol(r);
}

/* ----------------------------------------------------------- allocations */

static void seg_list(struct gmc_rec *r, const char *key, uint32_t mask)
{
    if (mask == 0u)
        return;
    out(r, " %s=", key);
    int first = 1;
    for (unsigned id = 1; id <= GMC_SEGMENT_ID_MAX; id++)
        if (mask >> (id - 1u) & 1u) {
            out(r, "%s%u", first ? "" : ",", id);
            first = 0;
        }
}

/* Why the trace's alloc line cannot carry this descriptor, or NULL. */
static const char *alloc_inexpressible(const struct gmc_alloc_desc *d)
{
    if (d->size == 0u || d->size > (1ull << 40))
        return "a size the trace language does not take (1 .. 2^40 bytes)";
    if (d->pitch_aligned_size > (1ull << 40))
        return "a PitchAlignedSize above 2^40 bytes";
    if (d->supported_segments == 0u)
        return "an empty supported segment set (the trace's default is every memory segment)";
    if (!flags_known(gmc_alloc_flag_names, d->flags) || !flags_known(gmc_kmt_flag_names, d->kmt_flags) ||
        !flags_known(gmc_info2_flag_names, d->info2_flags))
        return "flag bits without a name";
    if (d->section != 0u)
        return "an hSection (ExistingSection)";
    if ((d->supported_segments | d->eviction_segments) >> GMC_SEGMENT_ID_MAX)
        return "a segment id above 31";
    for (unsigned i = 0; i < GMC_MAX_PREFERRED_SEGMENTS; i++) {
        if (d->preferred[i].id == 0u)
            break;
        if (d->preferred[i].id > GMC_SEGMENT_ID_MAX)
            return "a preferred segment id above 31";
        for (unsigned j = 0; j < i; j++)
            if (d->preferred[j].id == d->preferred[i].id)
                return "a preferred segment named twice";
    }
    for (unsigned i = 1; i < GMC_MAX_PREFERRED_SEGMENTS; i++)
        if (d->preferred[i].id != 0u && d->preferred[i - 1u].id == 0u)
            return "a preferred segment after an empty entry";
    for (unsigned i = 0; i < GMC_MAX_HINTED_BANKS; i++) {
        if (d->hinted_banks[i] == 0u)
            break;
        if (d->hinted_banks[i] > GMC_SEGMENT_ID_MAX)
            return "a hinted bank above 31";
        for (unsigned j = 0; j < i; j++)
            if (d->hinted_banks[j] == d->hinted_banks[i])
                return "a hinted bank named twice";
    }
    for (unsigned i = 1; i < GMC_MAX_HINTED_BANKS; i++)
        if (d->hinted_banks[i] != 0u && d->hinted_banks[i - 1u] == 0u)
            return "a hinted bank after an empty entry";
    if (gmc_check_existing_sys_mem(d)) {
        uint64_t pages = (d->size + GMC_PAGE_SIZE - 1u) & ~(uint64_t)(GMC_PAGE_SIZE - 1u);
        if (d->system_mem == NULL || d->system_mem_size != pages)
            return "pSystemMem of another size than the page-rounded Size (the replay provides that)";
    } else if (d->system_mem != NULL || d->system_mem_size != 0u) {
        return "pSystemMem without an ExistingSysMem flag";
    }
    return NULL;
}

static int ent_add(struct gmc_rec *r, unsigned creator, const struct gmc_alloc_desc *d)
{
    if (r->nents == r->cap_ents) {
        unsigned cap = r->cap_ents ? r->cap_ents * 2u : 64u;
        struct rec_ent *n = realloc(r->ent, cap * sizeof(*n));
        if (n == NULL)
            return -1;
        r->ent = n;
        r->cap_ents = cap;
    }
    struct rec_ent *e = &r->ent[r->nents++];
    memset(e, 0, sizeof(*e));
    e->creator = creator;
    e->nt = gmc_check_share_kind(d) == GMC_SHARE_NT;
    e->cpu_size = (d->size + GMC_PAGE_SIZE - 1u) & ~(uint64_t)(GMC_PAGE_SIZE - 1u);
    return (int)(r->nents - 1u);
}

void gmc_rec_alloc_create(const gmc_client *c, const struct gmc_alloc_desc *d, gmc_handle h, uint64_t global,
                          int st)
{
    struct gmc_rec *r = rec_of_client(c);
    if (r == NULL)
        return;
    int ci = client_index(r, c);
    const char *why = ci < 0 ? "a client the recording does not know" : d == NULL ? "a NULL descriptor" : NULL;
    if (why == NULL)
        why = alloc_inexpressible(d);
    if (why != NULL) {
        comment(r, "gmc_alloc_create", why, st);
        return;
    }
    int e = ent_add(r, (unsigned)ci, d);
    if (e < 0) {
        r->failed = 1;
        return;
    }
    if (st == GMC_OK) {
        if (map_put(&r->handles, h, (uint64_t)e << 8 | (unsigned)ci) != 0)
            r->failed = 1;
        r->ent[e].holders = 1;
        if (global != 0u && map_put(&r->shares, global, (uint64_t)e) != 0)
            r->failed = 1;
    }
    out(r, "alloc a%d size=%" PRIu64 " client=c%d", e + 1, d->size, ci + 1);
    if (d->alignment != 0u)
        out(r, " align=%" PRIu32, d->alignment);
    if (d->pitch_aligned_size != 0u)
        out(r, " pitch=%" PRIu64, d->pitch_aligned_size);
    seg_list(r, "segments", d->supported_segments);
    if (d->preferred[0].id != 0u) {
        out(r, " prefer=");
        for (unsigned i = 0; i < GMC_MAX_PREFERRED_SEGMENTS && d->preferred[i].id != 0u; i++)
            out(r, "%s%u%s", i ? "," : "", d->preferred[i].id, d->preferred[i].top_down ? ":top" : "");
    }
    seg_list(r, "evict-to", d->eviction_segments);
    if (d->hinted_banks[0] != 0u) {
        out(r, " banks=");
        for (unsigned i = 0; i < GMC_MAX_HINTED_BANKS && d->hinted_banks[i] != 0u; i++)
            out(r, "%s%u", i ? "," : "", d->hinted_banks[i]);
    }
    out(r, " priority=0x%08" PRIx32, d->priority);
    if (d->umd_priority != 0u)
        out(r, " umd-priority=0x%08" PRIx32, d->umd_priority);
    flag_names(r, "flags", gmc_alloc_flag_names, d->flags);
    flag_names(r, "kmt", gmc_kmt_flag_names, d->kmt_flags);
    flag_names(r, "info2", gmc_info2_flag_names, d->info2_flags);
    if (d->vidpn_source_id != GMC_VIDPN_SOURCE_NONE)
        out(r, " vidpn=%" PRIu32, d->vidpn_source_id);
    expect(r, st);
    eol(r);
}

/* The trace name of client c's handle h, as client and entity indexes;
 * else the comment naming call and the status, and 0. */
static int resolve(struct gmc_rec *r, const gmc_client *c, gmc_handle h, const char *call, int st, int *ci,
                   long *e)
{
    *ci = client_index(r, c);
    *e = *ci >= 0 ? handle_ent(r, (unsigned)*ci, h) : -1;
    if (*ci < 0) {
        comment(r, call, "a client the recording does not know", st);
        return 0;
    }
    if (*e < 0) {
        char why[96];
        snprintf(why, sizeof(why), "handle 0x%" PRIx64 " is not a live handle of c%d", h, *ci + 1);
        comment(r, call, why, st);
        return 0;
    }
    return 1;
}

void gmc_rec_alloc_destroy(const gmc_client *c, gmc_handle h, int st)
{
    struct gmc_rec *r = rec_of_client(c);
    int ci;
    long e;
    if (r == NULL || !resolve(r, c, h, "gmc_alloc_destroy", st, &ci, &e))
        return;
    out(r, "destroy a%ld client=c%d", e + 1, ci + 1);
    expect(r, st);
    eol(r);
    if (st == GMC_OK) {
        map_del(&r->handles, h);
        r->ent[e].holders--;
        if (r->ent[e].locked == (unsigned)ci + 1u)
            r->ent[e].locked = 0;
    }
}

void gmc_rec_set_priority(const gmc_client *c, gmc_handle h, uint32_t priority, int st)
{
    struct gmc_rec *r = rec_of_client(c);
    int ci;
    long e;
    if (r == NULL || !resolve(r, c, h, "gmc_alloc_set_priority", st, &ci, &e))
        return;
    out(r, "set-priority a%ld priority=0x%08" PRIx32 " client=c%d", e + 1, priority, ci + 1);
    expect(r, st);
    eol(r);
}

/* ------------------------------------------------------------- sharing */

void gmc_rec_share_nt(const gmc_client *c, gmc_handle h, const gmc_client *target, gmc_share_handle sh, int st)
{
    struct gmc_rec *r = rec_of_client(c);
    if (r == NULL)
        return;
    int ci = client_index(r, c);
    long e = ci >= 0 ? handle_ent(r, (unsigned)ci, h) : -1;
    /* The trace's open shares from the creator to the opening client and
     * opens in one step: the share alone is recorded by the open. */
    if (st == GMC_OK && e >= 0 && (unsigned)ci == r->ent[e].creator && client_index(r, target) >= 0) {
        if (map_put(&r->shares, sh, (uint64_t)e) != 0)
            r->failed = 1;
        return;
    }
    comment(r, "gmc_alloc_share_nt",
            st != GMC_OK ? "a share that fails has no trace operation of its own"
                         : "only the creator's share to a known client can be replayed (by the open)",
            st);
}

void gmc_rec_open(const gmc_client *c, gmc_share_handle sh, gmc_handle h, int st)
{
    struct gmc_rec *r = rec_of_client(c);
    if (r == NULL)
        return;
    int ci = client_index(r, c);
    uint64_t e;
    if (ci < 0 || !map_get(&r->shares, sh, &e)) {
        comment(r, "gmc_alloc_open", ci < 0 ? "a client the recording does not know"
                                            : "a share handle the recording did not see made", st);
        return;
    }
    struct rec_ent *en = &r->ent[e];
    if (en->holders == 0u || r->client[en->creator] == NULL) {
        comment(r, "gmc_alloc_open", "the creator no longer holds the allocation (the trace opens through it)",
                st);
        return;
    }
    /* A second handle of one client has no name of its own. */
    for (size_t i = 0; i < r->handles.cap; i++) {
        uint64_t k = r->handles.key[i], v = r->handles.val[i];
        if (k != MAP_EMPTY && k != MAP_GONE && (v >> 8) == e && (v & 0xffu) == (unsigned)ci) {
            comment(r, "gmc_alloc_open", "the client already holds a handle to it", st);
            return;
        }
    }
    out(r, "open a%" PRIu64 " client=c%d", e + 1u, ci + 1);
    expect(r, st);
    eol(r);
    if (st == GMC_OK) {
        if (map_put(&r->handles, h, e << 8 | (unsigned)ci) != 0)
            r->failed = 1;
        en->holders++;
    }
}

/* ------------------------------------------------------------ residency */

void gmc_rec_residency(const gmc_client *c, int evict, const gmc_handle *h, unsigned n, uint64_t trim, int st)
{
    struct gmc_rec *r = rec_of_client(c);
    if (r == NULL)
        return;
    const char *call = evict ? "gmc_evict" : "gmc_make_resident";
    int ci = client_index(r, c);
    if (ci < 0 || h == NULL || n == 0u || n > GMC_REC_MAX_NAMES) {
        comment(r, call, ci < 0 ? "a client the recording does not know"
                         : h == NULL ? "a NULL handle array"
                                     : "no handles, or more than 48 in one call",
                st);
        return;
    }
    long ents[GMC_REC_MAX_NAMES];
    for (unsigned i = 0; i < n; i++) {
        ents[i] = handle_ent(r, (unsigned)ci, h[i]);
        int twice = 0;
        for (unsigned j = 0; j < i; j++)
            twice |= ents[j] == ents[i];
        if (ents[i] < 0 || twice) {
            comment(r, call, ents[i] < 0 ? "a handle that is not a live handle of the client"
                                         : "a handle named twice",
                    st);
            return;
        }
    }
    out(r, "%s", evict ? "evict" : "resident");
    for (unsigned i = 0; i < n; i++)
        out(r, " a%ld", ents[i] + 1);
    out(r, " client=c%d", ci + 1);
    if (!evict && st == GMC_E_OVER_BUDGET)
        out(r, " trim=%" PRIu64, trim);
    expect(r, st);
    eol(r);
}

void gmc_rec_callback(const gmc_client *c, int set)
{
    struct gmc_rec *r = rec_of_client(c);
    if (r == NULL)
        return;
    int ci = client_index(r, c);
    out(r, "# not recorded: gmc_client_set_residency_callback c%d: %s (a callback is the program's own)", ci + 1,
        set ? "set" : "removed");
    eol(r);
}

void gmc_rec_budget(gmc_device *dev, const gmc_client *c, int kind, uint32_t group, uint64_t bytes, int st)
{
    static const char *const calls[] = { "gmc_client_set_budget", "gmc_client_set_reservation",
                                         "gmc_device_set_budget" };
    static const char *const words[] = { "budget", "reserve", "app-budget" };
    struct gmc_rec *r = rec_of(dev);
    if (r == NULL)
        return;
    int ci = kind == GMC_REC_APP_BUDGET ? 0 : client_index(r, c);
    if (ci < 0 || group >= GMC_SEGMENT_GROUPS || (kind == GMC_REC_RESERVE && bytes == UINT64_MAX)) {
        comment(r, calls[kind], ci < 0 ? "a client the recording does not know"
                                : group >= GMC_SEGMENT_GROUPS ? "a segment group the trace cannot name"
                                                              : "a reservation of 2^64-1 bytes",
                st);
        return;
    }
    out(r, "%s", words[kind]);
    if (kind != GMC_REC_APP_BUDGET)
        out(r, " client=c%d", ci + 1);
    out(r, " %s=", group == GMC_SEGMENT_GROUP_LOCAL ? "local" : "non-local");
    if (bytes == GMC_BUDGET_NONE)
        out(r, "none");
    else
        out(r, "%" PRIu64, bytes);
    expect(r, st);
    eol(r);
}

void gmc_rec_flip(const gmc_client *c, gmc_handle h, int pin, int st)
{
    struct gmc_rec *r = rec_of_client(c);
    int ci;
    long e;
    const char *call = pin ? "gmc_alloc_pin_direct_flip" : "gmc_alloc_unpin_direct_flip";
    if (r == NULL || !resolve(r, c, h, call, st, &ci, &e))
        return;
    out(r, "%s a%ld client=c%d", pin ? "pin-flip" : "unpin-flip", e + 1, ci + 1);
    expect(r, st);
    eol(r);
}

/* ----------------------------------------------------------- submission */

/* Why the trace's submit block cannot carry s, or NULL; ents gets each
 * reference's entity. */
static const char *submit_inexpressible(struct gmc_rec *r, unsigned ci, const struct gmc_submit *s, long *ents)
{
    if (s->nrefs == 0u || s->nrefs > 64u || s->refs == NULL || (s->nops > 0u && s->ops == NULL))
        return "no references, more than 64, or a NULL array";
    for (unsigned i = 0; i < s->nrefs; i++) {
        ents[i] = handle_ent(r, ci, s->refs[i].handle);
        if (ents[i] < 0)
            return "a reference that is not a live handle of the client";
        if (s->refs[i].flags & ~GMC_REF_WRITE)
            return "reference flags without a name";
        for (unsigned j = 0; j < i; j++)
            if (ents[j] == ents[i])
                return "an allocation referenced twice";
    }
    for (unsigned i = 0; i < s->nops; i++) {
        const struct gmc_gpu_op *g = &s->ops[i];
        if (g->kind != GMC_GPU_COPY && g->kind != GMC_GPU_FILL)
            return "an operation of unknown kind";
        if (g->dst >= s->nrefs || (g->kind == GMC_GPU_COPY && g->src >= s->nrefs))
            return "an operation naming a reference past the list";
        if (!(s->refs[g->dst].flags & GMC_REF_WRITE))
            return "a destination referenced without GMC_REF_WRITE (the trace marks destinations written)";
        uint64_t dsz = r->ent[ents[g->dst]].cpu_size;
        if (g->size == 0u || g->dst_offset >= dsz || g->size > dsz - g->dst_offset)
            return "an operation's range outside its allocation, or empty";
        if (g->kind == GMC_GPU_COPY) {
            uint64_t ssz = r->ent[ents[g->src]].cpu_size;
            if (g->src_offset >= ssz || g->size > ssz - g->src_offset)
                return "a copy's source range outside its allocation";
        }
    }
    return NULL;
}

void gmc_rec_submit(const gmc_client *c, const struct gmc_submit *s, uint64_t fence, int st)
{
    struct gmc_rec *r = rec_of_client(c);
    if (r == NULL)
        return;
    int ci = client_index(r, c);
    long ents[64];
    const char *why = ci < 0 ? "a client the recording does not know" : s == NULL ? "a NULL submission" : NULL;
    if (why == NULL)
        why = submit_inexpressible(r, (unsigned)ci, s, ents);
    if (why != NULL) {
        comment(r, "gmc_submit", why, st);
        return;
    }
    out(r, "submit client=c%d", ci + 1);
    expect(r, st);
    eol(r);
    /* every reference first, in the program's order: the trace numbers
     * them as they first appear */
    for (unsigned i = 0; i < s->nrefs; i++) {
        out(r, "  use a%ld%s", ents[i] + 1, (s->refs[i].flags & GMC_REF_WRITE) ? " write" : "");
        eol(r);
    }
    for (unsigned i = 0; i < s->nops; i++) {
        const struct gmc_gpu_op *g = &s->ops[i];
        if (g->kind == GMC_GPU_COPY)
            out(r, "  copy a%ld a%ld src-offset=%" PRIu64 " dst-offset=%" PRIu64 " size=%" PRIu64, ents[g->src] + 1,
                ents[g->dst] + 1, g->src_offset, g->dst_offset, g->size);
        else
            out(r, "  fill a%ld pattern=0x%08" PRIx32 " offset=%" PRIu64 " size=%" PRIu64, ents[g->dst] + 1,
                g->pattern, g->dst_offset, g->size);
        eol(r);
    }
    out(r, "end");
    eol(r);
    if (st == GMC_OK && fence > r->last_submit)
        r->last_submit = fence;
}

void gmc_rec_wait(gmc_device *dev, uint64_t fence, uint64_t timeout_us, int st)
{
    struct gmc_rec *r = rec_of(dev);
    if (r == NULL)
        return;
    if (timeout_us > UINT64_MAX / 1000u) {
        comment(r, "gmc_fence_wait", "a timeout above 2^64/1000 microseconds", st);
        return;
    }
    out(r, "wait");
    if (fence != r->last_submit || fence == 0u)
        out(r, " fence=%" PRIu64, fence);
    out(r, " timeout=%" PRIu64, timeout_us);
    expect(r, st);
    eol(r);
}

/* ----------------------------------------------------------- CPU access */

void gmc_rec_lock(const gmc_client *c, gmc_handle h, uint32_t flags, int st)
{
    struct gmc_rec *r = rec_of_client(c);
    int ci;
    long e;
    if (r == NULL || !resolve(r, c, h, "gmc_lock", st, &ci, &e))
        return;
    if (!flags_known(gmc_lock_flag_names, flags)) {
        comment(r, "gmc_lock", "lock flag bits without a name", st);
        return;
    }
    out(r, "lock a%ld client=c%d", e + 1, ci + 1);
    flag_names(r, "flags", gmc_lock_flag_names, flags);
    expect(r, st);
    eol(r);
    if (st == GMC_OK)
        r->ent[e].locked = (unsigned)ci + 1u;
}

void gmc_rec_unlock(const gmc_client *c, gmc_handle h, int st)
{
    struct gmc_rec *r = rec_of_client(c);
    int ci;
    long e;
    if (r == NULL || !resolve(r, c, h, "gmc_unlock", st, &ci, &e))
        return;
    out(r, "unlock a%ld client=c%d", e + 1, ci + 1);
    expect(r, st);
    eol(r);
    if (st == GMC_OK)
        r->ent[e].locked = 0;
}

/* Append len bytes to the side file (or find them there): their offset. */
static int blob(struct gmc_rec *r, const void *buf, size_t len, uint64_t *off)
{
    uint64_t h = fnv(FNV_INIT, buf, len), at;
    if (map_get(&r->blobs, h, &at) && at + len <= r->data_len) {
        uint8_t *old = malloc(len);
        int same = 0;
        if (old != NULL && fseek(r->data, (long)at, SEEK_SET) == 0 && fread(old, 1, len, r->data) == len)
            same = memcmp(old, buf, len) == 0;
        free(old);
        if (fseek(r->data, 0, SEEK_END) != 0)
            return -1;
        if (same) {
            *off = at;
            return 0;
        }
    }
    if (fwrite(buf, 1, len, r->data) != len || fflush(r->data) != 0)
        return -1;
    *off = r->data_len;
    r->data_len += len;
    (void)map_put(&r->blobs, h, *off);
    return 0;
}

void gmc_rec_access(const gmc_client *c, gmc_handle h, uint64_t off, const void *buf, size_t len, int write,
                    int via_lock, int st)
{
    struct gmc_rec *r = rec_of_client(c);
    static const char *const calls[2][2] = { { "gmc_alloc_read", "gmc_lock_read" },
                                             { "gmc_alloc_write", "gmc_lock_write" } };
    const char *call = calls[write != 0][via_lock != 0];
    int ci;
    long e;
    if (r == NULL || !resolve(r, c, h, call, st, &ci, &e))
        return;
    const struct rec_ent *en = &r->ent[e];
    /* The replay calls gmc_lock_* when the allocation is locked (by any
     * client), else gmc_alloc_*: the same call, or gmc_alloc_* through the
     * caller's own lock, which the library serves as gmc_lock_*. */
    if ((via_lock && en->locked == 0u) || (!via_lock && en->locked != 0u && en->locked != (unsigned)ci + 1u)) {
        comment(r, call, via_lock ? "gmc_lock_* without a lock is replayed as gmc_alloc_*"
                                  : "gmc_alloc_* under another client's lock is replayed as gmc_lock_*",
                st);
        return;
    }
    if (buf == NULL || len == 0u || len > GMC_REC_MAX_ACCESS || off >= en->cpu_size || len > en->cpu_size - off) {
        comment(r, call, buf == NULL ? "a NULL buffer" : "an empty range, one past the allocation, or above 64 MiB",
                st);
        return;
    }
    out(r, "%s a%ld client=c%d offset=%" PRIu64 " size=%zu", write ? "write" : "read", e + 1, ci + 1, off, len);
    if (write) {
        uint64_t at = 0;
        if (r->data != NULL && len > GMC_REC_INLINE_MAX) {
            if (blob(r, buf, len, &at) != 0)
                r->failed = 1;
            out(r, " data=@%" PRIu64, at);
        } else {
            out(r, " data=");
            const uint8_t *b = buf;
            for (size_t i = 0; i < len; i++)
                out(r, "%02x", b[i]);
        }
    } else if (st == GMC_OK) {
        out(r, " hash=0x%016" PRIx64, fnv(FNV_INIT, buf, len));
    }
    expect(r, st);
    eol(r);
}

/* ------------------------------------------------------------- the rest */

void gmc_rec_power(gmc_device *dev, int to, int st)
{
    struct gmc_rec *r = rec_of(dev);
    if (r == NULL)
        return;
    if (to != GMC_POWER_D0 && to != GMC_POWER_STANDBY && to != GMC_POWER_HIBERNATE) {
        comment(r, "gmc_device_power", "a power state the trace cannot name", st);
        return;
    }
    out(r, "%s", to == GMC_POWER_D0 ? "resume" : to == GMC_POWER_STANDBY ? "standby" : "hibernate");
    expect(r, st);
    eol(r);
}

void gmc_rec_waveform(gmc_device *dev, int st)
{
    struct gmc_rec *r = rec_of(dev);
    if (r != NULL)
        comment(r, "gmc_device_trace", "a waveform is asked of gmc run with --trace", st);
}
