/*
 * trace_state.c - the trace parser's state: its error message, the
 * operation list, clients and allocation entities by name.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_state.h"

int tr_perr(struct tr_parser *p, unsigned line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char where[160] = "";
    size_t wl = 0;
    for (unsigned i = 0; i < p->nvars && wl < sizeof(where); i++) {
        int k = snprintf(where + wl, sizeof(where) - wl, "%s%s=%" PRId64, i ? ", " : " (",
                         p->vars[i].name, p->vars[i].value);
        if (k < 0)
            break;
        wl += (size_t)k;
    }
    if (wl > 0 && wl + 1 < sizeof(where))
        strcat(where, ")");
    snprintf(p->err, p->errlen, "%s:%u: %s%s", p->file, line, msg, where);
    return -1;
}

struct tr_op *tr_new_op(struct tr_parser *p, int kind, unsigned line)
{
    struct trace *t = p->t;
    if (t->nops >= TR_MAX_STEPS) {
        tr_perr(p, line, "the trace expands to more than %u operations", TR_MAX_STEPS);
        return NULL;
    }
    if (t->nops == p->cap_ops) {
        size_t nc = p->cap_ops ? p->cap_ops * 2 : 256;
        struct tr_op *n = realloc(t->ops, nc * sizeof(*n));
        if (n == NULL) {
            tr_perr(p, line, "out of memory");
            return NULL;
        }
        t->ops = n;
        p->cap_ops = nc;
    }
    struct tr_op *o = &t->ops[t->nops++];
    memset(o, 0, sizeof(*o));
    o->kind = kind;
    o->line = line;
    o->frame = p->frame;
    return o;
}

int tr_find_client(struct tr_parser *p, unsigned line, const char *op, const char *name, unsigned *out)
{
    for (unsigned i = p->t->nclients; i-- > 0;)
        if (p->client_alive[i] && !strcmp(p->t->clients[i].name, name)) {
            *out = i;
            return 0;
        }
    for (unsigned i = p->t->nclients; i-- > 0;)
        if (!strcmp(p->t->clients[i].name, name))
            return tr_perr(p, line, "%s: client '%s' has exited (line %u)", op, name, p->t->clients[i].line);
    return tr_perr(p, line, "%s: unknown client '%s'", op, name);
}

int tr_add_client(struct tr_parser *p, unsigned line, const char *name, uint32_t flags, uint32_t owner)
{
    struct trace *t = p->t;
    if (t->nclients == TR_MAX_CLIENTS)
        return tr_perr(p, line, "client: more than %d clients", TR_MAX_CLIENTS);
    unsigned idx = t->nclients++;
    struct tr_client *c = &t->clients[idx];
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->flags = flags;
    c->owner = owner;
    c->line = line;
    p->client_alive[idx] = 1;
    struct tr_op *o = tr_new_op(p, TR_CLIENT, line);
    if (o == NULL)
        return -1;
    o->client = idx;
    return 0;
}

int tr_default_client(struct tr_parser *p, unsigned line, const char *op, unsigned *out)
{
    for (unsigned i = 0; i < p->t->nclients; i++)
        if (p->client_alive[i]) {
            *out = i;
            return 0;
        }
    if (p->t->nclients == 0) {
        if (tr_add_client(p, line, "default", 0, 0) != 0)
            return -1;
        *out = 0;
        return 0;
    }
    return tr_perr(p, line, "%s: no live client (every client has exited)", op);
}

static size_t name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return (size_t)(h ^ (h >> 29));
}

/* The slot of name: holding its latest entity, or the empty one where it
 * would go. names_cap is a power of two and never full. */
static unsigned *name_slot(const struct tr_parser *p, const char *name)
{
    size_t m = p->names_cap - 1u;
    for (size_t i = name_hash(name) & m;; i = (i + 1u) & m) {
        unsigned *sl = &p->names[i];
        if (*sl == 0u || !strcmp(p->t->entities[*sl - 1u].name, name))
            return sl;
    }
}

/* The latest entity named name, or -1. */
long tr_name_find(const struct tr_parser *p, const char *name)
{
    if (p->names_cap == 0)
        return -1;
    unsigned sl = *name_slot(p, name);
    return sl ? (long)sl - 1 : -1;
}

/* Entity idx (already in t->entities) becomes its name's latest. */
int tr_name_put(struct tr_parser *p, unsigned idx)
{
    if (2u * (p->names_used + 1u) > p->names_cap) {
        size_t nc = p->names_cap ? p->names_cap * 2u : 256u;
        unsigned *old = p->names;
        size_t oc = p->names_cap;
        p->names = calloc(nc, sizeof(*p->names));
        if (p->names == NULL) {
            p->names = old;
            return -1;
        }
        p->names_cap = nc;
        for (size_t i = 0; i < oc; i++)
            if (old[i])
                *name_slot(p, p->t->entities[old[i] - 1u].name) = old[i];
        free(old);
    }
    unsigned *sl = name_slot(p, p->t->entities[idx].name);
    if (*sl == 0u)
        p->names_used++;
    *sl = idx + 1u;
    return 0;
}

int tr_find_entity(struct tr_parser *p, unsigned line, const char *op, const char *name, unsigned *out)
{
    long f = tr_name_find(p, name);
    if (f < 0)
        return tr_perr(p, line, "%s: unknown allocation '%s'", op, name);
    unsigned i = (unsigned)f;
    if (p->es[i].failed)
        return tr_perr(p, line, "%s: allocation '%s' is expected not to be created (line %u)", op, name,
                       p->t->entities[i].line);
    if (!p->es[i].alive)
        return tr_perr(p, line, "%s: allocation '%s' was destroyed", op, name);
    *out = i;
    return 0;
}

int tr_add_entity(struct tr_parser *p, unsigned line, const struct tr_entity *en, unsigned *idx)
{
    struct trace *t = p->t;
    if (t->nentities == p->cap_ents) {
        size_t nc = p->cap_ents ? p->cap_ents * 2 : 64;
        struct tr_entity *ne = realloc(t->entities, nc * sizeof(*ne));
        struct tr_ent_state *ns = ne ? realloc(p->es, nc * sizeof(*ns)) : NULL;
        if (ne)
            t->entities = ne;
        if (ns == NULL)
            return tr_perr(p, line, "out of memory");
        p->es = ns;
        p->cap_ents = nc;
    }
    *idx = t->nentities++;
    t->entities[*idx] = *en;
    memset(&p->es[*idx], 0, sizeof(p->es[*idx]));
    if (tr_name_put(p, *idx) != 0)
        return tr_perr(p, line, "out of memory");
    return 0;
}

void tr_close_handle(struct tr_parser *p, unsigned e, unsigned c)
{
    struct tr_ent_state *s = &p->es[e];
    s->holders &= ~(1ull << c);
    s->refs[c] = 0;
    if (s->locked == c + 1) {
        s->locked = 0;
        p->nlocked--;
    }
    if (s->holders == 0)
        s->alive = 0;
}
