/*
 * trace_build.c - one line of the trace into operations: clients,
 * allocations, residency, device power, and the operations on one
 * allocation (destroy, open, lock, unlock, write, read).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gmc_check.h"
#include "trace_args.h"
#include "trace_build.h"
#include "trace_check.h"
#include "trace_optab.h"
#include "trace_submit.h"

/* The acting client for an operation on entity e: client= or the creator,
 * which must hold a handle. */
static int acting_client(struct tr_parser *p, unsigned line, const char *op, const struct tr_args *a, unsigned e,
                         unsigned *out)
{
    const char *cn = tr_kv(a, "client");
    unsigned c = p->t->entities[e].client;
    if (cn != NULL && tr_find_client(p, line, op, cn, &c) != 0)
        return -1;
    if (!(p->es[e].holders >> c & 1u))
        return tr_perr(p, line, "%s: client '%s' holds no handle to '%s'", op, p->t->clients[c].name,
                       p->t->entities[e].name);
    *out = c;
    return 0;
}

/* alloc's size=, align= and pitch=. */
static int alloc_size(struct tr_parser *p, unsigned L, const struct tr_args *a, struct tr_entity *en)
{
    const char *op = "alloc";
    const char *s = tr_kv(a, "size");
    if (s == NULL)
        return tr_perr(p, L, "alloc: missing size=");
    if (tr_num_arg(p, L, op, "size", s, 1ull << 40, &en->desc.size) != 0)
        return -1;
    if (en->desc.size == 0)
        return tr_perr(p, L, "alloc: size must be at least 1");
    en->cpu_size = (en->desc.size + GMC_PAGE_SIZE - 1) & ~(uint64_t)(GMC_PAGE_SIZE - 1);
    uint64_t v;
    if ((s = tr_kv(a, "align"))) {
        if (tr_num_arg(p, L, op, "align", s, UINT32_MAX, &v) != 0)
            return -1;
        en->desc.alignment = (uint32_t)v;
    }
    if ((s = tr_kv(a, "pitch")) && tr_num_arg(p, L, op, "pitch", s, 1ull << 40, &en->desc.pitch_aligned_size) != 0)
        return -1;
    return 0;
}

/* alloc's segments=, prefer=, evict-to= and banks=. */
static int alloc_segments(struct tr_parser *p, unsigned L, const struct tr_args *a, struct tr_entity *en)
{
    const char *op = "alloc";
    const char *s;
    uint32_t m;
    if ((s = tr_kv(a, "segments"))) {
        if (tr_seg_list(p, L, op, "segments", s, 0, NULL, 32, &m) != 0)
            return -1;
        en->desc.supported_segments = m;
    } else {
        en->default_segments = 1;
    }
    if ((s = tr_kv(a, "prefer")) &&
        tr_seg_list(p, L, op, "prefer", s, 1, en->desc.preferred, GMC_MAX_PREFERRED_SEGMENTS, &m) != 0)
        return -1;
    if ((s = tr_kv(a, "evict-to"))) {
        if (tr_seg_list(p, L, op, "evict-to", s, 0, NULL, 32, &m) != 0)
            return -1;
        en->desc.eviction_segments = m;
    }
    if ((s = tr_kv(a, "banks"))) {
        struct gmc_segment_pref b[GMC_MAX_HINTED_BANKS];
        if (tr_seg_list(p, L, op, "banks", s, 0, b, GMC_MAX_HINTED_BANKS, &m) != 0)
            return -1;
        for (unsigned i = 0, n = (unsigned)__builtin_popcount(m); i < n; i++)
            en->desc.hinted_banks[i] = b[i].id;
    }
    return 0;
}

/* alloc's priority=, umd-priority=, flags=, kmt=, info2= and vidpn=. */
static int alloc_attributes(struct tr_parser *p, unsigned L, const struct tr_args *a, struct tr_entity *en)
{
    const char *op = "alloc";
    struct gmc_alloc_desc *d = &en->desc;
    const char *s;
    if ((s = tr_kv(a, "priority")) && tr_priority_arg(p, L, op, "priority", s, &d->priority) != 0)
        return -1;
    if ((s = tr_kv(a, "umd-priority")) && tr_priority_arg(p, L, op, "umd-priority", s, &d->umd_priority) != 0)
        return -1;
    if ((s = tr_kv(a, "flags")) && tr_flag_list(p, L, op, "flags", gmc_alloc_flag_names, s, &d->flags) != 0)
        return -1;
    if ((s = tr_kv(a, "kmt")) && tr_flag_list(p, L, op, "kmt", gmc_kmt_flag_names, s, &d->kmt_flags) != 0)
        return -1;
    if ((s = tr_kv(a, "info2")) && tr_flag_list(p, L, op, "info2", gmc_info2_flag_names, s, &d->info2_flags) != 0)
        return -1;
    if ((s = tr_kv(a, "vidpn"))) {
        uint64_t v;
        if (tr_num_arg(p, L, op, "vidpn", s, UINT32_MAX - 1, &v) != 0)
            return -1;
        d->vidpn_source_id = (uint32_t)v;
    }
    return 0;
}

static int do_alloc(struct tr_parser *p, const struct tr_line *ln, const struct tr_args *a)
{
    const unsigned L = ln->no;
    const char *op = "alloc";
    struct trace *t = p->t;
    const char *name = a->pos[0];
    if (!tr_name_ok(name))
        return tr_perr(p, L, "alloc: bad allocation name '%s'", name);
    long prev = tr_name_find(p, name); /* only the latest of a name can be alive */
    if (prev >= 0 && p->es[prev].alive)
        return tr_perr(p, L, "alloc: allocation '%s' already exists (line %u)", name, t->entities[prev].line);
    struct tr_entity en;
    memset(&en, 0, sizeof(en));
    memcpy(en.name, name, strlen(name) + 1); /* name_ok: shorter than TR_NAME_MAX */
    en.line = L;
    gmc_alloc_desc_init(&en.desc);
    const char *s = tr_kv(a, "client");
    if (s ? tr_find_client(p, L, op, s, &en.client) : tr_default_client(p, L, op, &en.client))
        return -1;
    if (alloc_size(p, L, a, &en) != 0 || alloc_segments(p, L, a, &en) != 0 || alloc_attributes(p, L, a, &en) != 0)
        return -1;
    if (gmc_check_existing_sys_mem(&en.desc))
        en.desc.system_mem_size = en.cpu_size; /* the executor provides the memory */
    struct tr_op *o = tr_new_op(p, TR_ALLOC, L);
    if (o == NULL)
        return -1;
    if (tr_expect_arg(p, L, op, a, o) != 0)
        return -1;
    o->client = en.client;
    if (tr_power_check(p, L, op, o) != 0)
        return -1;
    unsigned idx;
    if (tr_add_entity(p, L, &en, &idx) != 0)
        return -1;
    o->entity = idx;
    if (tr_checked(o)) {
        p->es[idx].alive = 1;
        p->es[idx].holders = 1ull << en.client;
    } else {
        p->es[idx].failed = 1; /* expected to fail: the name stays free */
    }
    return 0;
}

static int do_refs(struct tr_parser *p, const struct tr_line *ln, const struct tr_args *a, int kind)
{
    const unsigned L = ln->no;
    const char *op = tr_kind_name(kind);
    struct tr_op *o = tr_new_op(p, kind, L);
    if (o == NULL)
        return -1;
    if (tr_expect_arg(p, L, op, a, o) != 0)
        return -1;
    o->refs = calloc(a->npos, sizeof(*o->refs));
    if (o->refs == NULL)
        return tr_perr(p, L, "out of memory");
    unsigned c = 0;
    for (unsigned i = 0; i < a->npos; i++) {
        unsigned e;
        if (tr_find_entity(p, L, op, a->pos[i], &e) != 0)
            return -1;
        for (unsigned j = 0; j < o->nrefs; j++)
            if (o->refs[j].entity == e)
                return tr_perr(p, L, "%s: '%s' named twice", op, a->pos[i]);
        if (i == 0) {
            if (acting_client(p, L, op, a, e, &c) != 0)
                return -1;
        } else if (!(p->es[e].holders >> c & 1u)) {
            return tr_perr(p, L, "%s: client '%s' holds no handle to '%s'", op, p->t->clients[c].name, a->pos[i]);
        }
        o->refs[o->nrefs++].entity = e;
    }
    o->client = c;
    const char *tr = tr_kv(a, "trim");
    if (tr != NULL && tr_num_arg(p, L, op, "trim", tr, UINT64_MAX, &o->trim) != 0)
        return -1;
    o->has_trim = tr != NULL;
    if (o->has_trim && (!o->has_expect || o->expect != GMC_E_OVER_BUDGET))
        return tr_perr(p, L, "%s: trim= goes with expect=OVER_BUDGET", op);
    if (tr_power_check(p, L, op, o) != 0)
        return -1;
    if (!tr_checked(o))
        return 0;
    for (unsigned i = 0; i < o->nrefs; i++) {
        struct tr_ent_state *s = &p->es[o->refs[i].entity];
        if (kind == TR_EVICT && s->refs[c] == 0)
            return tr_perr(p, L, "evict: '%s' is not resident for client '%s'", a->pos[i], p->t->clients[c].name);
    }
    for (unsigned i = 0; i < o->nrefs; i++) {
        struct tr_ent_state *s = &p->es[o->refs[i].entity];
        if (kind == TR_EVICT)
            s->refs[c]--;
        else
            s->refs[c]++;
    }
    return 0;
}

static int do_client(struct tr_parser *p, unsigned L, const struct tr_args *a)
{
    const struct trace *t = p->t;
    const char *nm = a->pos[0];
    if (!tr_name_ok(nm))
        return tr_perr(p, L, "client: bad client name '%s'", nm);
    for (unsigned i = 0; i < t->nclients; i++)
        if (p->client_alive[i] && !strcmp(t->clients[i].name, nm))
            return tr_perr(p, L, "client: client '%s' already exists (line %u)", nm, t->clients[i].line);
    uint64_t owner = 0;
    const char *s = tr_kv(a, "owner");
    if (s && tr_num_arg(p, L, "client", "owner", s, UINT32_MAX, &owner) != 0)
        return -1;
    return tr_add_client(p, L, nm, tr_has_bare(a, "nonsecure") ? GMC_CLIENT_NON_SECURE : 0, (uint32_t)owner);
}

static int do_exit(struct tr_parser *p, unsigned L, const struct tr_args *a)
{
    unsigned c;
    if (tr_find_client(p, L, "exit", a->pos[0], &c) != 0)
        return -1;
    struct tr_op *o = tr_new_op(p, TR_EXIT, L);
    if (o == NULL)
        return -1;
    o->client = c;
    for (unsigned e = 0; e < p->t->nentities; e++)
        if (p->es[e].alive && (p->es[e].holders >> c & 1u))
            tr_close_handle(p, e, c);
    p->client_alive[c] = 0;
    return 0;
}

/* wait, standby, hibernate, resume. */
static int do_device_op(struct tr_parser *p, unsigned L, const struct tr_opdef *d, const struct tr_args *a)
{
    const char *op = d->word;
    struct tr_op *o = tr_new_op(p, d->kind, L);
    if (o == NULL || tr_expect_arg(p, L, op, a, o) != 0)
        return -1;
    if (d->kind == TR_WAIT) {
        const char *s = tr_kv(a, "timeout");
        o->timeout_us = 100000;
        if (s && tr_num_arg(p, L, op, "timeout", s, UINT64_MAX / 1000u, &o->timeout_us) != 0)
            return -1;
        if ((s = tr_kv(a, "fence")) != NULL) {
            if (tr_num_arg(p, L, op, "fence", s, UINT64_MAX, &o->fence) != 0)
                return -1;
            o->has_fence = 1;
        }
        return tr_power_check(p, L, op, o);
    }
    if (!tr_checked(o))
        return 0;
    return tr_check_power_change(p, L, op, d->kind);
}

static int do_lock(struct tr_parser *p, unsigned L, const struct tr_args *a, struct tr_op *o)
{
    const char *fs = tr_kv(a, "flags");
    if (fs && tr_flag_list(p, L, "lock", "flags", gmc_lock_flag_names, fs, &o->lock_flags) != 0)
        return -1;
    if (!tr_checked(o))
        return 0;
    return tr_check_lock(p, L, o);
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* write's data=: hex bytes (appended to the trace's data) or @OFFSET into
 * the `data` file; their size is the write's size. */
static int write_data(struct tr_parser *p, unsigned L, const struct tr_args *a, struct tr_op *o)
{
    struct trace *t = p->t;
    const char *s = tr_kv(a, "data");
    if (tr_kv(a, "pattern") != NULL)
        return tr_perr(p, L, "write: data= and pattern= exclude each other");
    if (s[0] == '@') {
        uint64_t off;
        if (tr_parse_num(s + 1, &off) != 0)
            return tr_perr(p, L, "write: bad data offset '%s' (data=@OFFSET)", s);
        if (t->data_file_len == 0)
            return tr_perr(p, L, "write: data=%s without a 'data FILE' line", s);
        if (off > t->data_file_len || o->size > t->data_file_len - off)
            return tr_perr(p, L, "write: data=%s: %" PRIu64 " bytes from there are past the end of the data file (%" PRIu64
                           " bytes)", s, o->size, t->data_file_len);
        o->has_data = 1;
        o->data_off = off;
        return 0;
    }
    size_t n = strlen(s);
    if (n % 2u != 0u)
        return tr_perr(p, L, "write: data= needs two hex digits per byte (%zu digits)", n);
    if (tr_kv(a, "size") == NULL && n / 2u <= o->size)
        o->size = n / 2u; /* size= defaults to the data's */
    if (n / 2u != o->size)
        return tr_perr(p, L, "write: data= holds %zu bytes, size is %" PRIu64, n / 2u, o->size);
    if (t->data_len + o->size > t->data_cap) {
        uint64_t cap = t->data_cap ? t->data_cap : 4096u;
        while (cap < t->data_len + o->size)
            cap *= 2u;
        uint8_t *nb = realloc(t->data, cap);
        if (nb == NULL)
            return tr_perr(p, L, "out of memory");
        t->data = nb;
        t->data_cap = cap;
    }
    for (size_t i = 0; i < o->size; i++) {
        int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return tr_perr(p, L, "write: '%c%c' in data= is not a hex byte", s[2 * i], s[2 * i + 1]);
        t->data[t->data_len + i] = (uint8_t)(hi << 4 | lo);
    }
    o->has_data = 1;
    o->data_off = t->data_len;
    t->data_len += o->size;
    return 0;
}

/* write and read: a range, a pattern, data or verify, and who may access. */
static int do_access(struct tr_parser *p, unsigned L, const struct tr_args *a, struct tr_op *o)
{
    const int wr = o->kind == TR_WRITE;
    const char *op = wr ? "write" : "read";
    const struct tr_entity *en = &p->t->entities[o->entity];
    const char *nm = en->name;
    if (tr_range_args(p, L, op, a, "offset", "size", en->cpu_size, nm, &o->offset, &o->size) != 0)
        return -1;
    if (o->size > (64u << 20))
        return tr_perr(p, L, "%s: size %" PRIu64 " is more than 64 MiB in one access", op, o->size);
    if (wr && tr_kv(a, "data") != NULL && write_data(p, L, a, o) != 0)
        return -1;
    if (!wr && tr_kv(a, "hash") != NULL) {
        if (tr_num_arg(p, L, op, "hash", tr_kv(a, "hash"), UINT64_MAX, &o->hash) != 0)
            return -1;
        o->has_hash = 1;
    }
    if (wr) {
        const char *ps = tr_kv(a, "pattern");
        if (ps) {
            uint64_t v;
            if (tr_num_arg(p, L, op, "pattern", ps, UINT32_MAX, &v) != 0)
                return -1;
            o->has_pattern = 1;
            o->pattern = (uint32_t)v;
        }
    } else {
        o->verify = tr_has_bare(a, "verify");
    }
    if (!tr_checked(o))
        return 0;
    return tr_check_access(p, L, o);
}

/* destroy, open, lock, unlock, write, read, pin-flip, unpin-flip: one
 * allocation, one client. */
static int do_entity_op(struct tr_parser *p, unsigned L, const struct tr_opdef *d, const struct tr_args *a)
{
    const char *op = d->word;
    unsigned e, c;
    if (tr_find_entity(p, L, op, a->pos[0], &e) != 0)
        return -1;
    if (d->kind == TR_OPEN) {
        const char *cn = tr_kv(a, "client");
        if (cn == NULL)
            return tr_perr(p, L, "open: missing client= (the client that opens it)");
        if (tr_find_client(p, L, op, cn, &c) != 0)
            return -1;
    } else if (acting_client(p, L, op, a, e, &c) != 0) {
        return -1;
    }
    struct tr_op *o = tr_new_op(p, d->kind, L);
    /* pin-flip and unpin-flip have their own power rule; the library sets
     * a priority whatever the power state */
    const int flip = d->kind == TR_PIN_FLIP || d->kind == TR_UNPIN_FLIP || d->kind == TR_SET_PRIORITY;
    if (o == NULL || tr_expect_arg(p, L, op, a, o) != 0 || (!flip && tr_power_check(p, L, op, o) != 0))
        return -1;
    o->entity = e;
    o->client = c;
    switch (d->kind) {
    case TR_SET_PRIORITY: {
        const char *s = tr_kv(a, "priority");
        if (s == NULL)
            return tr_perr(p, L, "set-priority: missing priority=");
        return tr_priority_arg(p, L, op, "priority", s, &o->priority);
    }
    case TR_PIN_FLIP:
    case TR_UNPIN_FLIP:
        return tr_checked(o) ? tr_check_flip(p, L, o) : 0;
    case TR_DESTROY:
        if (tr_checked(o))
            tr_close_handle(p, e, c);
        return 0;
    case TR_OPEN:
        return tr_checked(o) ? tr_check_open(p, L, o) : 0;
    case TR_LOCK:
        return do_lock(p, L, a, o);
    case TR_UNLOCK:
        return tr_checked(o) ? tr_check_unlock(p, L, o) : 0;
    case TR_WRITE:
    case TR_READ:
        return do_access(p, L, a, o);
    default:
        return tr_perr(p, L, "internal: unhandled operation '%s'", op);
    }
}

/* budget, app-budget, reserve, memory-info (docs/trace-format.md, "Budgets"). */
static int do_budget(struct tr_parser *p, unsigned L, const struct tr_opdef *d, const struct tr_args *a)
{
    const char *op = d->word;
    struct tr_op *o = tr_new_op(p, d->kind, L);
    if (o == NULL || tr_expect_arg(p, L, op, a, o) != 0)
        return -1;
    if (d->kind != TR_APP_BUDGET) {
        const char *cn = tr_kv(a, "client");
        if (cn ? tr_find_client(p, L, op, cn, &o->client) : tr_default_client(p, L, op, &o->client))
            return -1;
    }
    if (d->kind == TR_MEMINFO) {
        static const char *const keys[4] = { "budget", "usage", "reservation", "available" };
        const char *g = tr_kv(a, "group");
        if (g != NULL && strcmp(g, "local") && strcmp(g, "non-local"))
            return tr_perr(p, L, "%s: group is local or non-local, not '%s'", op, g);
        o->group = g != NULL && !strcmp(g, "non-local") ? GMC_SEGMENT_GROUP_NON_LOCAL : GMC_SEGMENT_GROUP_LOCAL;
        for (unsigned k = 0; k < 4; k++) {
            const char *s = tr_kv(a, keys[k]);
            if (s != NULL && tr_num_arg(p, L, op, keys[k], s, UINT64_MAX, &o->bval[k]) != 0)
                return -1;
            o->bmask |= s != NULL ? 1u << k : 0u;
        }
        return tr_power_check(p, L, op, o);
    }
    static const char *const groups[2] = { "local", "non-local" };
    for (unsigned g = 0; g < 2; g++) {
        const char *s = tr_kv(a, groups[g]);
        if (s == NULL)
            continue;
        o->bmask |= 1u << g;
        if (d->kind != TR_RESERVE && !strcmp(s, "none"))
            o->bval[g] = GMC_BUDGET_NONE;
        else if (tr_num_arg(p, L, op, groups[g], s, UINT64_MAX - 1u, &o->bval[g]) != 0)
            return -1;
    }
    if (o->bmask != 1u && o->bmask != 2u) /* one library call: all or nothing */
        return tr_perr(p, L, "%s: give local= or non-local= (one group per line)", op);
    return tr_power_check(p, L, op, o);
}

int tr_do_line(struct tr_parser *p, unsigned li)
{
    const struct tr_line *ln = &p->lines[li];
    const unsigned L = ln->no;
    const struct tr_opdef *d = tr_find_op(ln->tok[0]);
    p->cur_line = L;
    if (d->block == TR_B_SUBMIT)
        return tr_do_submit(p, li);
    if (!strcmp(d->word, "device") || !strcmp(d->word, "seed") || !strcmp(d->word, "data"))
        return 0; /* read before expansion */
    struct tr_args a;
    if (tr_get_args(p, ln, d, &a) != 0)
        return -1;
    switch (d->kind) {
    case TR_CLIENT:
        return do_client(p, L, &a);
    case TR_EXIT:
        return do_exit(p, L, &a);
    case TR_ALLOC:
        return do_alloc(p, ln, &a);
    case TR_RESIDENT:
    case TR_EVICT:
        return do_refs(p, ln, &a, d->kind);
    case TR_WAIT:
    case TR_STANDBY:
    case TR_HIBERNATE:
    case TR_RESUME:
        return do_device_op(p, L, d, &a);
    case TR_BUDGET:
    case TR_APP_BUDGET:
    case TR_RESERVE:
    case TR_MEMINFO:
        return do_budget(p, L, d, &a);
    default:
        return do_entity_op(p, L, d, &a);
    }
}
