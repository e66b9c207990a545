/*
 * gmc_budget.c - video memory budgets per client and per device, by
 * segment group (QueryVideoMemoryInfo, SetVideoMemoryReservation;
 * docs/budgets.md).
 *
 * DOC: Overview
 *
 * A segment's group follows from its DXGK_SEGMENTFLAGS: an Aperture
 * segment is NON_LOCAL (system memory the GPU reaches through the GART),
 * a memory segment LOCAL. Only ApplicationTarget segments count toward
 * budgets. An allocation counts while it is placed in such a segment and
 * some client references it as resident or holds it locked: its placed
 * bytes count once in the device's usage (kept here as it changes) and
 * once for each client that references or locks it (summed over the
 * client's handles when asked).
 *
 * Limits, per group: the application budget (all clients together, minus
 * the part of the other clients' reservations they do not use yet) and
 * the client budget. A call that placed or referenced allocations asks
 * gmc_budget_admit() whether the usage it raised still fits.
 *
 * Cost: O(1) per allocation change; a client's usage O(its handles);
 * available-for-reservation and admission O(handles of every client), and
 * only while a budget or reservation is set.
 */
#include <stdint.h>

#include "gmc.h"
#include "gmc_budget.h"
#include "gmc_place.h"
#include "gmc_status.h"
#include "gmc_vobj.h"
#include "gmc_record.h"

int gmc_budget_seg_counts(const gmc_device *dev, unsigned seg, uint32_t *group)
{
    const struct gmc_vseg *s = &dev->seg[seg];
    *group = gmc_vseg_is_aperture(s) ? GMC_SEGMENT_GROUP_NON_LOCAL : GMC_SEGMENT_GROUP_LOCAL;
    return (s->desc.flags & GMC_SEGFLAGS_APPLICATION_TARGET_MASK) != 0u;
}

void gmc_budget_init(gmc_device *dev)
{
    for (unsigned g = 0; g < GMC_SEGMENT_GROUPS; g++) {
        dev->bud_capacity[g] = 0;
        dev->bud_usage[g] = 0;
        dev->bud_reserved[g] = 0;
    }
    for (unsigned i = 0; i < dev->nsegs; i++) {
        uint32_t g;
        if (gmc_budget_seg_counts(dev, i, &g))
            dev->bud_capacity[g] += dev->seg[i].desc.size;
    }
    for (unsigned g = 0; g < GMC_SEGMENT_GROUPS; g++)
        dev->bud_app[g] = dev->bud_capacity[g];
    dev->bud_active = 0;
}

/* The placed bytes a counts for, and their group; 0 when it counts for none. */
static uint64_t counted(const gmc_device *dev, const struct gmc_valloc *a, uint32_t *group)
{
    *group = 0;
    if (a->node.mgr == NULL || !gmc_budget_seg_counts(dev, a->seg, group))
        return 0;
    return a->sz.placed;
}

void gmc_budget_sync(gmc_device *dev, struct gmc_valloc *a)
{
    uint32_t g = 0;
    uint64_t n = a->resident > 0u || a->locker != NULL ? counted(dev, a, &g) : 0u;
    if (n == a->bud_bytes && (n == 0u || g == a->bud_group))
        return;
    dev->bud_usage[a->bud_group] -= a->bud_bytes;
    dev->bud_usage[g] += n;
    a->bud_bytes = n;
    a->bud_group = g;
}

/* The client's usage per group. */
static void client_usage(const gmc_client *c, uint64_t u[GMC_SEGMENT_GROUPS])
{
    for (unsigned g = 0; g < GMC_SEGMENT_GROUPS; g++)
        u[g] = 0;
    for (const struct gmc_vref *r = c->refs; r != NULL; r = r->next) {
        const struct gmc_valloc *a = r->alloc;
        if (r->resident == 0u && a->locker != c)
            continue;
        uint32_t g;
        uint64_t n = counted(c->dev, a, &g);
        u[g] += n;
    }
}

static void update_active(gmc_device *dev)
{
    int on = 0;
    for (unsigned g = 0; g < GMC_SEGMENT_GROUPS; g++)
        on |= dev->bud_app[g] != dev->bud_capacity[g] || dev->bud_reserved[g] != 0u;
    for (const gmc_client *c = dev->clients; c != NULL && !on; c = c->next)
        for (unsigned g = 0; g < GMC_SEGMENT_GROUPS; g++)
            on |= c->budget[g] != GMC_BUDGET_NONE;
    dev->bud_active = on;
}

int gmc_budget_active(const gmc_device *dev)
{
    return dev->bud_active;
}

void gmc_budget_client_gone(gmc_client *c)
{
    gmc_device *dev = c->dev;
    for (unsigned g = 0; g < GMC_SEGMENT_GROUPS; g++) {
        dev->bud_reserved[g] -= c->reserve[g];
        c->reserve[g] = 0;
        c->budget[g] = GMC_BUDGET_NONE;
    }
    update_active(dev);
}

/* Over every other client: what it reserved and does not use (held for it),
 * and the larger of its usage and its reservation (taken from the rest). */
static void others(const gmc_client *c, uint32_t g, uint64_t *unused, uint64_t *held)
{
    *unused = 0;
    *held = 0;
    for (const gmc_client *o = c->dev->clients; o != NULL; o = o->next) {
        if (o == c)
            continue;
        uint64_t u[GMC_SEGMENT_GROUPS];
        if (o->reserve[g] == 0u) {
            client_usage(o, u);
            *held += u[g];
            continue;
        }
        client_usage(o, u);
        if (o->reserve[g] > u[g])
            *unused += o->reserve[g] - u[g];
        *held += o->reserve[g] > u[g] ? o->reserve[g] : u[g];
    }
}

static uint64_t min64(uint64_t x, uint64_t y)
{
    return x < y ? x : y;
}

static uint64_t available(const gmc_client *c, uint32_t g)
{
    uint64_t unused, held;
    others(c, g, &unused, &held);
    uint64_t app = c->dev->bud_app[g];
    return min64(c->budget[g], app > held ? app - held : 0u);
}

void gmc_budget_snap(const gmc_client *c, struct gmc_budget_snap *s)
{
    client_usage(c, s->client);
    for (unsigned g = 0; g < GMC_SEGMENT_GROUPS; g++)
        s->device[g] = c->dev->bud_usage[g];
}

int gmc_budget_admit(gmc_client *c, const struct gmc_budget_snap *before, uint64_t *trim, uint32_t *group)
{
    gmc_device *dev = c->dev;
    *trim = 0;
    *group = 0;
    struct gmc_budget_snap now;
    gmc_budget_snap(c, &now);
    for (uint32_t g = 0; g < GMC_SEGMENT_GROUPS; g++) {
        if (now.client[g] <= before->client[g] && now.device[g] <= before->device[g])
            continue;
        uint64_t over = 0;
        if (now.client[g] > c->budget[g])
            over = now.client[g] - c->budget[g];
        uint64_t unused, held;
        others(c, g, &unused, &held);
        uint64_t want = now.device[g] + unused;
        if (want > dev->bud_app[g] && want - dev->bud_app[g] > over)
            over = want - dev->bud_app[g];
        if (over > 0u) {
            *trim = over;
            *group = g;
            gmc_budget_refuse(c, over, g);
            return GMC_E_OVER_BUDGET;
        }
    }
    return GMC_OK;
}

void gmc_budget_refuse(gmc_client *c, uint64_t trim, uint32_t group)
{
    c->last_trim = trim;
    c->last_trim_group = group;
    c->dev->stats.budget[group].refusals++;
}

uint32_t gmc_budget_room(const gmc_client *c, const struct gmc_valloc *a, uint32_t mask, uint64_t *trim,
                         uint32_t *group)
{
    const gmc_device *dev = c->dev;
    *trim = 0;
    *group = 0;
    uint64_t u[GMC_SEGMENT_GROUPS], unused[GMC_SEGMENT_GROUPS], dev_u[GMC_SEGMENT_GROUPS];
    int have = 0;
    uint32_t out = 0;
    for (unsigned i = 0; i < dev->nsegs; i++) {
        uint32_t g;
        struct gmc_place_size sz;
        if (!(mask & GMC_SEGMENT_BIT(i + 1u)))
            continue;
        if (!gmc_budget_seg_counts(dev, i, &g) || gmc_place_size(&dev->seg[i].desc, &a->desc, &sz) != GMC_OK) {
            out |= GMC_SEGMENT_BIT(i + 1u); /* counts for nothing, or placement decides */
            continue;
        }
        if (!have) {
            client_usage(c, u);
            for (unsigned k = 0; k < GMC_SEGMENT_GROUPS; k++) {
                uint64_t held;
                others(c, k, &unused[k], &held);
                dev_u[k] = dev->bud_usage[k];
            }
            /* a leaves where it is: what it counts there now does not stay */
            dev_u[a->bud_group] -= a->bud_bytes;
            uint32_t ag;
            uint64_t n = counted(dev, a, &ag);
            int mine = a->locker == c;
            for (const struct gmc_vref *r = a->handles; r != NULL && !mine; r = r->anext)
                mine = r->client == c && r->resident > 0u;
            if (mine)
                u[ag] -= n;
            have = 1;
        }
        uint64_t over = 0;
        if (u[g] + sz.placed > c->budget[g])
            over = u[g] + sz.placed - c->budget[g];
        uint64_t want = dev_u[g] + sz.placed + unused[g];
        if (want > dev->bud_app[g] && want - dev->bud_app[g] > over)
            over = want - dev->bud_app[g];
        if (over == 0u) {
            out |= GMC_SEGMENT_BIT(i + 1u);
        } else if (*trim == 0u || over < *trim) {
            *trim = over;
            *group = g;
        }
    }
    return out;
}

void gmc_budget_stats(const gmc_device *dev, struct gmc_budget_stats out[GMC_SEGMENT_GROUPS])
{
    for (unsigned g = 0; g < GMC_SEGMENT_GROUPS; g++) {
        out[g].capacity = dev->bud_capacity[g];
        out[g].budget = dev->bud_app[g];
        out[g].usage = dev->bud_usage[g];
        out[g].reservation = dev->bud_reserved[g];
        out[g].refusals = dev->stats.budget[g].refusals;
    }
}

/* ------------------------------------------------------------ public API */

int gmc_client_video_memory(const gmc_client *c, uint32_t group, struct gmc_video_memory_info *out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    *out = (struct gmc_video_memory_info){ 0, 0, 0, 0 };
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    if (group >= GMC_SEGMENT_GROUPS)
        return GMC_E_INVALID_ARG;
    uint64_t u[GMC_SEGMENT_GROUPS];
    client_usage(c, u);
    out->budget = min64(c->budget[group], c->dev->bud_app[group]);
    out->current_usage = u[group];
    out->available_for_reservation = available(c, group);
    out->current_reservation = c->reserve[group];
    return GMC_OK;
}

int gmc_client_last_trim(const gmc_client *c, uint64_t *bytes, uint32_t *group)
{
    if (bytes != NULL)
        *bytes = 0;
    if (group != NULL)
        *group = 0;
    if (c == NULL || bytes == NULL || group == NULL)
        return GMC_E_NULL_POINTER;
    *bytes = c->last_trim;
    *group = c->last_trim_group;
    return GMC_OK;
}

static int gmc_client_set_reservation_do(gmc_client *c, uint32_t group, uint64_t bytes)
{
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    if (group >= GMC_SEGMENT_GROUPS)
        return GMC_E_INVALID_ARG;
    if (bytes > available(c, group))
        return GMC_E_RESERVATION;
    gmc_device *dev = c->dev;
    dev->bud_reserved[group] -= c->reserve[group];
    c->reserve[group] = bytes;
    dev->bud_reserved[group] += bytes;
    update_active(dev);
    return GMC_OK;
}

int gmc_client_set_reservation(gmc_client *c, uint32_t group, uint64_t bytes)
{
    int rc = gmc_client_set_reservation_do(c, group, bytes);
    if (c != NULL)
        gmc_rec_budget(c->dev, c, GMC_REC_RESERVE, group, bytes, rc);
    return rc;
}

static int gmc_client_set_budget_do(gmc_client *c, uint32_t group, uint64_t bytes)
{
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    if (group >= GMC_SEGMENT_GROUPS)
        return GMC_E_INVALID_ARG;
    if (bytes < c->reserve[group])
        return GMC_E_RESERVATION;
    c->budget[group] = bytes;
    update_active(c->dev);
    return GMC_OK;
}

int gmc_client_set_budget(gmc_client *c, uint32_t group, uint64_t bytes)
{
    int rc = gmc_client_set_budget_do(c, group, bytes);
    if (c != NULL)
        gmc_rec_budget(c->dev, c, GMC_REC_BUDGET, group, bytes, rc);
    return rc;
}

static int gmc_device_set_budget_do(gmc_device *dev, uint32_t group, uint64_t bytes)
{
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    if (group >= GMC_SEGMENT_GROUPS)
        return GMC_E_INVALID_ARG;
    if (bytes == GMC_BUDGET_NONE)
        bytes = dev->bud_capacity[group];
    if (bytes < dev->bud_reserved[group])
        return GMC_E_RESERVATION;
    dev->bud_app[group] = bytes;
    update_active(dev);
    return GMC_OK;
}

int gmc_device_set_budget(gmc_device *dev, uint32_t group, uint64_t bytes)
{
    int rc = gmc_device_set_budget_do(dev, group, bytes);
    gmc_rec_budget(dev, NULL, GMC_REC_APP_BUDGET, group, bytes, rc);
    return rc;
}
