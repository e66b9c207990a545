/*
 * gmc_budget.h - video memory budgets (gmc_budget.c; private to the host
 * library; docs/budgets.md). The public calls are in include/gmc.h,
 * "budgets".
 *
 * The device's usage per segment group is kept as allocations change
 * (gmc_budget_sync, called by gmc_cand_sync on every change to placement,
 * residency references or lock); a client's usage is summed over its
 * handles when asked. The calls that place allocations take a snapshot
 * first and ask gmc_budget_admit() afterwards, only while some budget or
 * reservation is set (gmc_budget_active): without one nothing is summed.
 */
#ifndef GMC_BUDGET_H
#define GMC_BUDGET_H

#include <stdint.h>

#include "gmc_vobj.h"

/* Capacities and default budgets from the device's segments. */
void gmc_budget_init(gmc_device *dev);
/* Whether segment index seg counts toward budgets (ApplicationTarget), and
 * its group (enum gmc_segment_group) in *group. */
int gmc_budget_seg_counts(const gmc_device *dev, unsigned seg, uint32_t *group);
/* a's placement, references or lock changed: its part of the device's usage. */
void gmc_budget_sync(gmc_device *dev, struct gmc_valloc *a);
/* A client goes: its reservations with it. */
void gmc_budget_client_gone(gmc_client *c);

/* Whether any budget below the default or any reservation is set. */
int gmc_budget_active(const gmc_device *dev);

struct gmc_budget_snap {
    uint64_t client[GMC_SEGMENT_GROUPS]; /* the client's usage */
    uint64_t device[GMC_SEGMENT_GROUPS]; /* the device's usage */
};
void gmc_budget_snap(const gmc_client *c, struct gmc_budget_snap *s);
/*
 * After a call placed or referenced allocations for c: GMC_OK when every
 * group whose usage grew since `before` is within c's limits, else
 * GMC_E_OVER_BUDGET with *trim the bytes c must evict and *group the
 * group (the first one over); the device counts the refusal.
 */
int gmc_budget_admit(gmc_client *c, const struct gmc_budget_snap *before, uint64_t *trim, uint32_t *group);

/*
 * The segments of `mask` (GMC_SEGMENT_BIT) where placing a (to count for
 * c; what it counts where it is now left out) keeps c within its limits. When some are left
 * out, *trim and *group get the smallest excess among them (what c would
 * have to trim to use one), else 0.
 */
uint32_t gmc_budget_room(const gmc_client *c, const struct gmc_valloc *a, uint32_t mask, uint64_t *trim,
                         uint32_t *group);
/* Count a refusal: the client's last trim, the device's refusals. */
void gmc_budget_refuse(gmc_client *c, uint64_t trim, uint32_t group);

/* The budget part of gmc_device_stats. */
void gmc_budget_stats(const gmc_device *dev, struct gmc_budget_stats out[GMC_SEGMENT_GROUPS]);

#endif /* GMC_BUDGET_H */
