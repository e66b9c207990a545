/*
 * trace_check.c - the trace checker: the library's rules asked, not copied.
 */
#include <stdint.h>

#include "gmc.h"
#include "gmc_check.h"
#include "trace_check.h"

/* Checks apply unless the operation is expected to fail. */
int tr_checked(const struct tr_op *o)
{
    return !o->has_expect || o->expect == GMC_OK;
}

static enum gmc_power_state power_state(const struct tr_parser *p)
{
    return p->power == TR_STANDBY ? GMC_POWER_STANDBY : p->power == TR_HIBERNATE ? GMC_POWER_HIBERNATE : GMC_POWER_D0;
}

static const char *power_name(const struct tr_parser *p)
{
    return p->power == TR_STANDBY ? "standby" : "hibernate";
}

int tr_power_check(struct tr_parser *p, unsigned line, const char *op, const struct tr_op *o)
{
    if (tr_checked(o) && gmc_check_powered(power_state(p)) != GMC_OK)
        return tr_perr(p, line, "%s: the device is in %s since line %u (resume first)", op, power_name(p),
                       p->power_line);
    return 0;
}

/* Whether client c may take a lock with lock_flags on entity e (a plain
 * read or write takes a ReadOnly or WriteOnly one), as gmc_lock() decides. */
static int cpu_access_check(struct tr_parser *p, unsigned line, const char *op, unsigned e, unsigned c,
                            uint32_t lock_flags)
{
    const struct tr_entity *en = &p->t->entities[e];
    const char *nm = en->name;
    const int st = gmc_check_lock(&en->desc, lock_flags, c == en->client);
    switch (st) {
    case GMC_OK:
        return 0;
    case GMC_E_LOCK_FLAGS:
        return tr_perr(p, line, "%s: ReadOnly and %s exclude each other", op,
                       (lock_flags & GMC_LOCK_WRITE_ONLY) ? "WriteOnly" : "Discard");
    case GMC_E_NOT_CPU_VISIBLE:
        return tr_perr(p, line, "%s: '%s' is not CpuVisible", op, nm);
    case GMC_E_PROTECTED:
        return tr_perr(p, line, "%s: '%s' is protected and is never mapped", op, nm);
    case GMC_E_NOT_CREATOR:
        return tr_perr(p, line, "%s: '%s' is shared: only its creator '%s' locks it", op, nm,
                       p->t->clients[en->client].name);
    case GMC_E_READ_ONLY:
        return tr_perr(p, line, "%s: '%s' was created ReadOnly", op, nm);
    default:
        return tr_perr(p, line, "%s: '%s': %s (%s)", op, nm, gmc_status_name(st), gmc_strerror(st));
    }
}

/* standby, hibernate, resume: gmc_check_power_change() on the followed
 * power state and locks. */
int tr_check_power_change(struct tr_parser *p, unsigned L, const char *op, int kind)
{
    const enum gmc_power_state to = kind == TR_RESUME    ? GMC_POWER_D0
                                    : kind == TR_STANDBY ? GMC_POWER_STANDBY
                                                         : GMC_POWER_HIBERNATE;
    const int st = gmc_check_power_change(power_state(p), to, p->nlocked);
    if (st == GMC_E_POWER_STATE && to == GMC_POWER_D0)
        return tr_perr(p, L, "resume: the device is not in standby or hibernate");
    if (st == GMC_E_POWER_STATE)
        return tr_perr(p, L, "%s: the device is already in %s since line %u", op, power_name(p), p->power_line);
    if (st == GMC_E_LOCKED) {
        for (unsigned e = 0; e < p->t->nentities; e++)
            if (p->es[e].alive && p->es[e].locked)
                return tr_perr(p, L, "%s: '%s' is still locked (line %u)", op, p->t->entities[e].name,
                               p->es[e].lock_line);
    }
    if (st != GMC_OK)
        return tr_perr(p, L, "%s: %s (%s)", op, gmc_status_name(st), gmc_strerror(st));
    p->power = to == GMC_POWER_D0 ? 0 : kind;
    p->power_line = L;
    return 0;
}

int tr_check_open(struct tr_parser *p, unsigned L, const struct tr_op *o)
{
    const struct trace *t = p->t;
    const struct tr_entity *en = &t->entities[o->entity];
    struct tr_ent_state *s = &p->es[o->entity];
    if (gmc_check_share_kind(&en->desc) == GMC_SHARE_NONE)
        return tr_perr(p, L, "open: '%s' was not created with kmt=CreateShared", en->name);
    if (s->holders >> o->client & 1u)
        return tr_perr(p, L, "open: client '%s' already holds a handle to '%s'", t->clients[o->client].name,
                       en->name);
    s->holders |= 1ull << o->client;
    return 0;
}

int tr_check_lock(struct tr_parser *p, unsigned L, const struct tr_op *o)
{
    struct tr_ent_state *s = &p->es[o->entity];
    if (cpu_access_check(p, L, "lock", o->entity, o->client, o->lock_flags) != 0)
        return -1;
    if (s->locked)
        return tr_perr(p, L, "lock: '%s' is already locked (line %u)", p->t->entities[o->entity].name, s->lock_line);
    s->locked = o->client + 1;
    p->nlocked++;
    s->lock_flags = o->lock_flags;
    s->lock_line = L;
    return 0;
}

int tr_check_unlock(struct tr_parser *p, unsigned L, const struct tr_op *o)
{
    struct tr_ent_state *s = &p->es[o->entity];
    const char *nm = p->t->entities[o->entity].name;
    if (!s->locked)
        return tr_perr(p, L, "unlock: '%s' is not locked", nm);
    if (s->locked != o->client + 1)
        return tr_perr(p, L, "unlock: '%s' is locked by client '%s' (line %u)", nm,
                       p->t->clients[s->locked - 1].name, s->lock_line);
    s->locked = 0;
    p->nlocked--;
    return 0;
}

int tr_check_access(struct tr_parser *p, unsigned L, const struct tr_op *o)
{
    const int wr = o->kind == TR_WRITE;
    const char *op = wr ? "write" : "read";
    const char *nm = p->t->entities[o->entity].name;
    const struct tr_ent_state *s = &p->es[o->entity];
    if (s->locked && s->locked != o->client + 1)
        return tr_perr(p, L, "%s: '%s' is locked by client '%s' (line %u)", op, nm,
                       p->t->clients[s->locked - 1].name, s->lock_line);
    if (s->locked) {
        if (gmc_check_locked_access(s->lock_flags, wr) != GMC_OK)
            return tr_perr(p, L, "%s: '%s' is locked %s (line %u)", op, nm, wr ? "ReadOnly" : "WriteOnly",
                           s->lock_line);
        return 0;
    }
    return cpu_access_check(p, L, op, o->entity, o->client, wr ? GMC_LOCK_WRITE_ONLY : GMC_LOCK_READ_ONLY);
}

int tr_check_flip(struct tr_parser *p, unsigned L, const struct tr_op *o)
{
    struct tr_ent_state *s = &p->es[o->entity];
    const char *nm = p->t->entities[o->entity].name;
    if (o->kind == TR_UNPIN_FLIP) {
        if (gmc_check_flip_unpin(s->flip_line != 0) != GMC_OK)
            return tr_perr(p, L, "unpin-flip: '%s' is not pinned for DirectFlip (the library answers BAD_STATE)",
                           nm);
        s->flip_line = 0;
        return 0;
    }
    /* Any nonzero mask: which segments are DirectFlip is the device's to say. */
    if (gmc_check_flip_pin(~0u, s->flip_line != 0, power_state(p)) != GMC_OK)
        return tr_perr(p, L, "pin-flip: the device is in %s since line %u (resume first)", power_name(p),
                       p->power_line);
    if (s->flip_line == 0)
        s->flip_line = L;
    return 0;
}
