/*
 * trace_submit.c - a submit block into one TR_SUBMIT operation.
 */
#include <stdlib.h>
#include <string.h>

#include "trace_args.h"
#include "trace_check.h"
#include "trace_optab.h"
#include "trace_submit.h"

static int add_ref(struct tr_op *o, unsigned e, unsigned write)
{
    for (unsigned j = 0; j < o->nrefs; j++)
        if (o->refs[j].entity == e) {
            o->refs[j].write |= write;
            return (int)j;
        }
    if (o->nrefs == TR_MAX_REFS)
        return -1;
    o->refs[o->nrefs].entity = e;
    o->refs[o->nrefs].write = write;
    return (int)o->nrefs++;
}

/* The allocations an item names (ents): live, held by the submitting
 * client (the first one's creator when submit names none: *c, *have_client)
 * and resident for it. */
static int item_entities(struct tr_parser *p, const struct tr_line *it, const struct tr_args *ia,
                         const struct tr_op *o, int *have_client, unsigned *c, unsigned ents[2])
{
    const char *w = it->tok[0];
    for (unsigned k = 0; k < ia->npos; k++) {
        if (tr_find_entity(p, it->no, w, ia->pos[k], &ents[k]) != 0)
            return -1;
        if (!*have_client) {
            *c = p->t->entities[ents[k]].client;
            *have_client = 1;
        }
        if (!(p->es[ents[k]].holders >> *c & 1u))
            return tr_perr(p, it->no, "%s: client '%s' holds no handle to '%s'", w, p->t->clients[*c].name,
                           ia->pos[k]);
        if (tr_checked(o) && p->es[ents[k]].refs[*c] == 0)
            return tr_perr(p, it->no, "%s: '%s' is not resident for client '%s'", w, ia->pos[k],
                           p->t->clients[*c].name);
    }
    return 0;
}

/* copy SRC DST: the job's next GPU operation g. */
static int item_copy(struct tr_parser *p, const struct tr_line *it, const struct tr_args *ia, struct tr_op *o,
                     const unsigned ents[2], struct gmc_gpu_op *g)
{
    const char *w = it->tok[0];
    const struct tr_entity *src = &p->t->entities[ents[0]];
    const struct tr_entity *dst = &p->t->entities[ents[1]];
    g->kind = GMC_GPU_COPY;
    uint64_t sz1, sz2;
    if (tr_range_args(p, it->no, w, ia, "src-offset", "size", src->cpu_size, src->name, &g->src_offset, &sz1) != 0 ||
        tr_range_args(p, it->no, w, ia, "dst-offset", "size", dst->cpu_size, dst->name, &g->dst_offset, &sz2) != 0)
        return -1;
    g->size = tr_kv(ia, "size") ? sz1 : (sz1 < sz2 ? sz1 : sz2);
    if (ents[0] == ents[1] && tr_checked(o) && g->src_offset < g->dst_offset + g->size &&
        g->dst_offset < g->src_offset + g->size)
        return tr_perr(p, it->no,
                       "copy: the source and destination ranges of '%s' overlap (the engine copies "
                       "forward in bursts; an overlapping copy is refused with OVERLAP)",
                       src->name);
    int si = add_ref(o, ents[0], 0), di = add_ref(o, ents[1], 1);
    if (si < 0 || di < 0)
        return tr_perr(p, it->no, "submit: more than %d allocations", TR_MAX_REFS);
    g->src = (uint32_t)si;
    g->dst = (uint32_t)di;
    return 0;
}

/* fill DST: the job's next GPU operation g. */
static int item_fill(struct tr_parser *p, const struct tr_line *it, const struct tr_args *ia, struct tr_op *o,
                     const unsigned ents[2], struct gmc_gpu_op *g)
{
    const char *w = it->tok[0];
    const struct tr_entity *dst = &p->t->entities[ents[0]];
    g->kind = GMC_GPU_FILL;
    if (tr_range_args(p, it->no, w, ia, "offset", "size", dst->cpu_size, dst->name, &g->dst_offset, &g->size) != 0)
        return -1;
    const char *ps = tr_kv(ia, "pattern");
    uint64_t v = 0;
    if (ps && tr_num_arg(p, it->no, w, "pattern", ps, UINT32_MAX, &v) != 0)
        return -1;
    g->pattern = (uint32_t)v;
    int di = add_ref(o, ents[0], 1);
    if (di < 0)
        return tr_perr(p, it->no, "submit: more than %d allocations", TR_MAX_REFS);
    g->dst = (uint32_t)di;
    return 0;
}

int tr_do_submit(struct tr_parser *p, unsigned li)
{
    const struct tr_line *ln = &p->lines[li];
    const unsigned L = ln->no;
    const char *op = "submit";
    struct tr_args a;
    if (tr_get_args(p, ln, tr_find_op("submit"), &a) != 0)
        return -1;
    struct tr_op *o = tr_new_op(p, TR_SUBMIT, L);
    if (o == NULL)
        return -1;
    unsigned opi = p->t->nops - 1;
    if (tr_expect_arg(p, L, op, &a, o) != 0 || tr_power_check(p, L, op, o) != 0)
        return -1;
    unsigned nitems = ln->match - li - 1;
    o->refs = calloc(TR_MAX_REFS, sizeof(*o->refs));
    o->ops = calloc(nitems ? nitems : 1, sizeof(*o->ops));
    if (o->refs == NULL || o->ops == NULL)
        return tr_perr(p, L, "out of memory");
    int have_client = 0;
    unsigned c = 0;
    const char *cn = tr_kv(&a, "client");
    if (cn) {
        if (tr_find_client(p, L, op, cn, &c) != 0)
            return -1;
        have_client = 1;
    }
    for (unsigned i = li + 1; i < ln->match; i++) {
        const struct tr_line *it = &p->lines[i];
        const struct tr_opdef *d = tr_find_op(it->tok[0]);
        struct tr_args ia;
        if (tr_get_args(p, it, d, &ia) != 0)
            return -1;
        o = &p->t->ops[opi];
        unsigned ents[2];
        if (item_entities(p, it, &ia, o, &have_client, &c, ents) != 0)
            return -1;
        if (!strcmp(d->word, "use")) {
            if (add_ref(o, ents[0], tr_has_bare(&ia, "write") ? 1u : 0u) < 0)
                return tr_perr(p, it->no, "submit: more than %d allocations", TR_MAX_REFS);
            continue;
        }
        struct gmc_gpu_op *g = &o->ops[o->nops];
        memset(g, 0, sizeof(*g));
        const int rc = !strcmp(d->word, "copy") ? item_copy(p, it, &ia, o, ents, g) : item_fill(p, it, &ia, o, ents, g);
        if (rc != 0)
            return -1;
        o->nops++;
    }
    o = &p->t->ops[opi];
    if (o->nrefs == 0)
        return tr_perr(p, L, "submit: references no allocation (add use, copy or fill lines)");
    o->client = c;
    return 0;
}
