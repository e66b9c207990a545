/*
 * gmc_victim.c - the eviction policy as pure functions (see gmc_victim.h).
 *
 * The hot set follows LIRS (Jiang and Zhang, SIGMETRICS 2002) and
 * CLOCK-Pro, with evictions as the misses: a refault whose reuse distance
 * is shorter than the recency of the set's oldest member displaces it, so
 * a loop over more than fits keeps its hot part resident and pages only
 * the rest, where plain LRU pages every allocation of the loop on every
 * pass (docs/residency.md). Within a priority a clean allocation goes
 * before a dirty one: dropping it costs nothing now, where a dirty one
 * costs a write-back now and the same page-in later.
 */
#include <stdint.h>

#include "gmc.h"
#include "gmc_check.h"
#include "gmc_victim.h"

uint32_t gmc_victim_prio(const struct gmc_alloc_desc *d)
{
    return gmc_check_priority(d);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : (a > b);
}

int gmc_victim_cmp(const struct gmc_victim_key *a, const struct gmc_victim_key *b)
{
    if (a->prio != b->prio)
        return a->prio < b->prio ? -1 : 1;
    if (a->dirty != b->dirty)
        return a->dirty ? 1 : -1;
    if (a->hot != b->hot)
        return a->hot ? 1 : -1;
    if (a->hot && a->hot_seq != b->hot_seq)
        return a->hot_seq > b->hot_seq ? -1 : 1;
    if (!a->hot && a->lru != b->lru)
        return cmp_u64(a->lru, b->lru);
    return cmp_u64(a->serial, b->serial);
}

int gmc_victim_hot_cmp(const struct gmc_victim_key *a, const struct gmc_victim_key *b)
{
    if (a->prio != b->prio)
        return a->prio < b->prio ? -1 : 1;
    if (a->lru != b->lru)
        return cmp_u64(a->lru, b->lru);
    return cmp_u64(a->serial, b->serial);
}

int gmc_victim_heat_placed(uint64_t hot_bytes, uint64_t size, uint64_t budget)
{
    return hot_bytes + size <= budget;
}

enum gmc_victim_admit gmc_victim_admit(int refault, uint64_t lru, uint64_t size, uint64_t hot_bytes,
                                       uint64_t budget, const struct gmc_victim_key *oldest)
{
    if (!refault)
        return GMC_ADMIT_COLD;
    if (hot_bytes + size <= budget)
        return GMC_ADMIT_HOT;
    if (oldest == NULL || oldest->lru > lru)
        return GMC_ADMIT_COLD;
    return GMC_ADMIT_DISPLACE;
}
