/*
 * gmc_vidmm.c - the device-independent manager: clients, allocations,
 * sharing, CPU access.
 *
 * DOC: Overview
 *
 * Every public call here follows one shape: check every argument and
 * permission, reserve what can fail (handle slots, host memory), place,
 * and only then change state, so a failed call leaves no trace in the
 * library. Rules are never decided here: allocation descriptors go through
 * gmc_rules_check_alloc() (the rule table, spec/rules.toml) with the
 * segment descriptors the adapter reported. Placement is gmc_place.c;
 * hardware access goes through the driver's DDI table (gmc_kmd.h).
 *
 * Sharing (seed 002, D3DKMT_CREATEALLOCATIONFLAGS; docs/host.md):
 *   - CreateShared without NtSecuritySharing: a global share handle, made
 *     at creation; any client of the device that knows it may open it.
 *   - NtSecuritySharing: no global handle. gmc_alloc_share_nt() makes an
 *     NT handle for one target client (D3DKMTShareObjects plus the handle
 *     duplication into that process); it opens in that client only.
 *   - Without NonSecure only secure clients may open it; NonSecure lets
 *     secure and non-secure clients open it.
 *   - RestrictSharedAccess restricts opens to clients of the creator's
 *     owner (security principal).
 *   - The creating client may always reopen its own allocation, and is the
 *     only one that may lock it.
 *
 * Cost: create and destroy are O(rules + log n) (placement, handle table
 * O(1)); lookups O(1). Not thread-safe (see gmc.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmc.h"
#include "gmc_budget.h"
#include "gmc_check.h"
#include "gmc_handle.h"
#include "gmc_kmd.h"
#include "gmc_place.h"
#include "gmc_range.h"
#include "gmc_status.h"
#include "gmc_vidmm.h"
#include "gmc_lock.h"
#include "gmc_cand.h"
#include "gmc_resid.h"
#include "gmc_record.h"

#define PINNED_FLAGS (GMC_ALLOC_OVERLAY | GMC_ALLOC_CAPTURE)

/* ---------------------------------------------------------------- clients */

static int gmc_client_create_do(gmc_device *dev, const struct gmc_client_desc *desc, gmc_client **out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    *out = NULL;
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    struct gmc_client_desc d = { 0u, 0u };
    if (desc != NULL)
        d = *desc;
    if (d.flags & ~GMC_CLIENT_FLAGS_MASK)
        return GMC_E_INVALID_ARG;
    gmc_client *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return GMC_E_NO_MEMORY;
    c->dev = dev;
    c->serial = dev->next_serial++;
    c->flags = d.flags;
    c->owner = d.owner;
    for (unsigned g = 0; g < GMC_SEGMENT_GROUPS; g++)
        c->budget[g] = GMC_BUDGET_NONE;
    c->next = dev->clients;
    if (dev->clients != NULL)
        dev->clients->prev = c;
    dev->clients = c;
    dev->nclients++;
    *out = c;
    return GMC_OK;
}

int gmc_client_create(gmc_device *dev, const struct gmc_client_desc *desc, gmc_client **out)
{
    int rc = gmc_client_create_do(dev, desc, out);
    if (out != NULL)
        gmc_rec_client_create(dev, desc, *out, rc);
    return rc;
}

/* r (its alloc set) joins its client's handles and its allocation's. */
static void link_ref(gmc_client *c, struct gmc_vref *r)
{
    r->client = c;
    r->prev = NULL;
    r->next = c->refs;
    if (c->refs != NULL)
        c->refs->prev = r;
    c->refs = r;
    r->aprev = NULL;
    r->anext = r->alloc->handles;
    if (r->alloc->handles != NULL)
        r->alloc->handles->aprev = r;
    r->alloc->handles = r;
}

static void unlink_ref(struct gmc_vref *r)
{
    if (r->prev != NULL)
        r->prev->next = r->next;
    else
        r->client->refs = r->next;
    if (r->next != NULL)
        r->next->prev = r->prev;
    if (r->aprev != NULL)
        r->aprev->anext = r->anext;
    else
        r->alloc->handles = r->anext;
    if (r->anext != NULL)
        r->anext->aprev = r->aprev;
}

static void free_alloc(gmc_device *dev, struct gmc_valloc *a)
{
    gmc_resid_destroy(dev, a);
    while (a->shares != NULL) {
        struct gmc_vshare *sh = a->shares;
        a->shares = sh->next;
        gmc_htab_remove(&dev->handles, sh->handle);
        free(sh);
    }
    dev->nallocs--;
    free(a);
}

static void close_ref(struct gmc_vref *r)
{
    gmc_device *dev = r->client->dev;
    struct gmc_valloc *a = r->alloc;
    a->resident -= r->resident;
    if (a->locker == r->client)
        gmc_lock_drop(dev, a);
    gmc_cand_sync(dev, a);
    unlink_ref(r);
    gmc_htab_remove(&dev->handles, r->handle);
    free(r);
    if (--a->refs == 0u)
        free_alloc(dev, a);
}

void gmc_client_destroy(gmc_client *c)
{
    if (c == NULL)
        return;
    gmc_rec_client_destroy(c);
    gmc_device *dev = c->dev;
    while (c->refs != NULL)
        close_ref(c->refs);
    gmc_budget_client_gone(c);
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        dev->clients = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    dev->nclients--;
    free(c);
}

void gmc_vidmm_close_clients(gmc_device *dev)
{
    while (dev->clients != NULL)
        gmc_client_destroy(dev->clients);
}

/* ------------------------------------------------------------ allocations */

/* What a create needs from the host before it may change anything. */
struct create_res {
    struct gmc_valloc *a;
    struct gmc_vref *r;
    struct gmc_vshare *s; /* the global share handle, when there is one */
};

static void release(struct create_res *res)
{
    free(res->a);
    free(res->r);
    free(res->s);
}

static int global_shared(const struct gmc_alloc_desc *d)
{
    return gmc_check_share_kind(d) == GMC_SHARE_GLOBAL;
}

static int acquire(gmc_device *dev, const struct gmc_alloc_desc *d, struct create_res *res)
{
    int shared = global_shared(d);
    int rc = gmc_htab_reserve(&dev->handles, shared ? 2u : 1u);
    if (rc != GMC_OK)
        return rc;
    res->a = calloc(1, sizeof(*res->a));
    res->r = calloc(1, sizeof(*res->r));
    res->s = shared ? calloc(1, sizeof(*res->s)) : NULL;
    if (res->a == NULL || res->r == NULL || (shared && res->s == NULL)) {
        release(res);
        return GMC_E_NO_MEMORY;
    }
    return GMC_OK;
}

static void commit(gmc_client *c, struct create_res *res)
{
    gmc_device *dev = c->dev;
    struct gmc_valloc *a = res->a;
    a->refs = 1u;
    dev->nallocs++;
    res->r->alloc = a;
    res->r->handle = gmc_htab_add(&dev->handles, GMC_HK_ALLOC, res->r);
    link_ref(c, res->r);
    if (res->s != NULL) {
        res->s->alloc = a;
        res->s->handle = gmc_htab_add(&dev->handles, GMC_HK_SHARE, res->s);
        a->global = res->s->handle;
        a->shares = res->s;
    }
}

static int gmc_alloc_create_do(gmc_client *c, const struct gmc_alloc_desc *desc, gmc_handle *out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    *out = GMC_HANDLE_NONE;
    if (c == NULL || desc == NULL)
        return GMC_E_NULL_POINTER;
    gmc_device *dev = c->dev;
    int rc = gmc_rules_check_alloc(desc, dev->segdesc, dev->nsegs, NULL);
    if (rc != GMC_OK)
        return rc;
    rc = gmc_check_powered(dev->power);
    if (rc != GMC_OK)
        return rc;
    struct create_res res = { NULL, NULL, NULL };
    rc = acquire(dev, desc, &res);
    if (rc != GMC_OK)
        return rc;
    struct gmc_valloc *a = res.a;
    a->desc = *desc;
    a->creator = c->serial;
    a->owner = c->owner;
    if ((desc->info2_flags & GMC_INFO2_PRIMARY) || (desc->flags & PINNED_FLAGS))
        a->state |= GMC_ALLOC_STATE_PINNED;
    if (desc->kmt_flags & GMC_KMT_ZEROED)
        a->state |= GMC_ALLOC_STATE_ZERO_PENDING;
    rc = gmc_resid_create(dev, a);
    if (rc != GMC_OK) {
        release(&res);
        return rc;
    }
    commit(c, &res);
    *out = res.r->handle;
    return GMC_OK;
}

int gmc_alloc_create(gmc_client *c, const struct gmc_alloc_desc *desc, gmc_handle *out)
{
    int rc = gmc_alloc_create_do(c, desc, out);
    if (out != NULL && c != NULL) {
        uint64_t global = 0;
        const struct gmc_vref *r = rc == GMC_OK ? gmc_vidmm_ref(c, *out) : NULL;
        if (r != NULL)
            global = r->alloc->global;
        gmc_rec_alloc_create(c, desc, *out, global, rc);
    }
    return rc;
}

static int gmc_alloc_destroy_do(gmc_client *c, gmc_handle h)
{
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    struct gmc_vref *r = gmc_vidmm_ref(c, h);
    if (r == NULL)
        return GMC_E_BAD_HANDLE;
    close_ref(r);
    return GMC_OK;
}

int gmc_alloc_destroy(gmc_client *c, gmc_handle h)
{
    int rc = gmc_alloc_destroy_do(c, h);
    gmc_rec_alloc_destroy(c, h, rc);
    return rc;
}

static int gmc_alloc_set_priority_do(gmc_client *c, gmc_handle h, uint32_t priority)
{
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    struct gmc_vref *r = gmc_vidmm_ref(c, h);
    if (r == NULL)
        return GMC_E_BAD_HANDLE;
    struct gmc_valloc *a = r->alloc;
    int umd = (a->desc.info2_flags & GMC_INFO2_OVERRIDE_PRIORITY) != 0u;
    if (priority == 0u)
        return umd ? GMC_E_RULE_OVERRIDEPRIORITY_ZERO : GMC_E_RULE_PRIORITY_ZERO;
    if (umd)
        a->desc.umd_priority = priority;
    else
        a->desc.priority = priority;
    gmc_cand_sync(c->dev, a); /* its place among the victims */
    return GMC_OK;
}

int gmc_alloc_set_priority(gmc_client *c, gmc_handle h, uint32_t priority)
{
    int rc = gmc_alloc_set_priority_do(c, h, priority);
    gmc_rec_set_priority(c, h, priority, rc);
    return rc;
}

int gmc_alloc_query(const gmc_client *c, gmc_handle h, struct gmc_alloc_info *out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    memset(out, 0, sizeof(*out));
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    const struct gmc_vref *r = gmc_vidmm_ref(c, h);
    if (r == NULL)
        return GMC_E_BAD_HANDLE;
    const struct gmc_valloc *a = r->alloc;
    out->size = gmc_resid_user_size(a);
    out->placed_size = a->node.mgr != NULL ? a->sz.placed : 0u;
    if (a->node.mgr != NULL) {
        const struct gmc_segment_desc *g = &c->dev->seg[a->seg].desc;
        out->segment = g->id;
        out->offset = a->node.start - g->base;
        out->gpu_address = a->node.start;
        if (gmc_kmd_cpu_reachable(g))
            out->state |= GMC_ALLOC_STATE_CPU_REACHABLE;
    }
    out->alignment = a->sz.align;
    out->flags = a->desc.flags;
    out->kmt_flags = a->desc.kmt_flags;
    out->info2_flags = a->desc.info2_flags;
    out->priority = gmc_check_priority(&a->desc);
    out->state |= a->state;
    if (a->creator == c->serial)
        out->state |= GMC_ALLOC_STATE_CREATOR;
    if (a->desc.kmt_flags & GMC_KMT_CREATE_SHARED)
        out->state |= GMC_ALLOC_STATE_SHARED;
    if (a->resident > 0u)
        out->state |= GMC_ALLOC_STATE_RESIDENT;
    if (a->sys_valid && !a->gpu_valid)
        out->state |= GMC_ALLOC_STATE_IN_SYSTEM;
    if (a->gpu_valid && !a->sys_valid && a->node.mgr != NULL &&
        !(c->dev->seg[a->seg].desc.flags & GMC_SEGFLAGS_APERTURE_MASK))
        out->state |= GMC_ALLOC_STATE_DIRTY;
    if (a->locker != NULL)
        out->state |= GMC_ALLOC_STATE_LOCKED;
    out->open_count = a->refs;
    out->share_handle = a->global;
    out->resident_refs = r->resident;
    out->resident_total = a->resident;
    out->last_use = a->busy_fence;
    return GMC_OK;
}

/* ---------------------------------------------------------------- sharing */

static int gmc_alloc_share_nt_do(gmc_client *c, gmc_handle h, const gmc_client *target,
                       gmc_share_handle *out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    *out = GMC_HANDLE_NONE;
    if (c == NULL || target == NULL)
        return GMC_E_NULL_POINTER;
    if (target->dev != c->dev)
        return GMC_E_INVALID_ARG;
    struct gmc_vref *r = gmc_vidmm_ref(c, h);
    if (r == NULL)
        return GMC_E_BAD_HANDLE;
    struct gmc_valloc *a = r->alloc;
    if (gmc_check_share_kind(&a->desc) != GMC_SHARE_NT)
        return GMC_E_NOT_SHARED;
    int rc = gmc_htab_reserve(&c->dev->handles, 1u);
    if (rc != GMC_OK)
        return rc;
    struct gmc_vshare *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return GMC_E_NO_MEMORY;
    s->alloc = a;
    s->target = target->serial;
    s->handle = gmc_htab_add(&c->dev->handles, GMC_HK_SHARE, s);
    s->next = a->shares;
    a->shares = s;
    *out = s->handle;
    return GMC_OK;
}

int gmc_alloc_share_nt(gmc_client *c, gmc_handle h, const gmc_client *target, gmc_share_handle *out)
{
    int rc = gmc_alloc_share_nt_do(c, h, target, out);
    if (out != NULL)
        gmc_rec_share_nt(c, h, target, *out, rc);
    return rc;
}

/* NonSecure and RestrictSharedAccess, for a client other than the creator. */
static int may_open(const gmc_client *c, const struct gmc_valloc *a)
{
    uint32_t kmt = a->desc.kmt_flags;
    if (c->serial == a->creator)
        return GMC_OK;
    if (!(kmt & GMC_KMT_NON_SECURE) && (c->flags & GMC_CLIENT_NON_SECURE))
        return GMC_E_SHARE_NOT_SECURE;
    if ((kmt & GMC_KMT_RESTRICT_SHARED_ACCESS) && c->owner != a->owner)
        return GMC_E_SHARE_RESTRICTED;
    return GMC_OK;
}

static int gmc_alloc_open_do(gmc_client *c, gmc_share_handle sh, gmc_handle *out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    *out = GMC_HANDLE_NONE;
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    gmc_device *dev = c->dev;
    const struct gmc_vshare *s = gmc_htab_get(&dev->handles, sh, GMC_HK_SHARE);
    if (s == NULL || (s->target != 0u && s->target != c->serial))
        return GMC_E_BAD_HANDLE;
    struct gmc_valloc *a = s->alloc;
    int rc = may_open(c, a);
    if (rc == GMC_OK)
        rc = gmc_htab_reserve(&dev->handles, 1u);
    if (rc != GMC_OK)
        return rc;
    struct gmc_vref *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return GMC_E_NO_MEMORY;
    r->alloc = a;
    r->handle = gmc_htab_add(&dev->handles, GMC_HK_ALLOC, r);
    link_ref(c, r);
    a->refs++;
    *out = r->handle;
    return GMC_OK;
}

int gmc_alloc_open(gmc_client *c, gmc_share_handle sh, gmc_handle *out)
{
    int rc = gmc_alloc_open_do(c, sh, out);
    if (out != NULL)
        gmc_rec_open(c, sh, *out, rc);
    return rc;
}

/* ------------------------------------------------------------ CPU access */


int gmc_alloc_can_lock(const gmc_client *c, gmc_handle h, uint32_t lock_flags)
{
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    const struct gmc_vref *r = gmc_vidmm_ref(c, h);
    if (r == NULL)
        return GMC_E_BAD_HANDLE;
    return gmc_vidmm_lock_check(c, r->alloc, lock_flags);
}

int gmc_alloc_can_write(const gmc_client *c, gmc_handle h)
{
    return gmc_alloc_can_lock(c, h, GMC_LOCK_WRITE_ONLY);
}

