/*
 * gmc_victim.h - the eviction policy as pure functions (gmc_victim.c):
 * the victim order, the hot set's order and its admission rule
 * (docs/residency.md, "Victim order"). No device, no allocation: the
 * residency code (gmc_resid.c, gmc_cand.c) and the eviction benchmark's
 * offline model (bench/bench_evict.c) both decide with these.
 */
#ifndef GMC_VICTIM_H
#define GMC_VICTIM_H

#include <stdint.h>

#include "gmc.h"

/* What the policy knows of one placed allocation. */
struct gmc_victim_key {
    uint32_t prio;    /* effective priority (gmc_victim_prio) */
    uint32_t dirty;   /* evicting it writes it back (written since its last page-in) */
    uint32_t hot;     /* in its segment's hot set */
    uint64_t hot_seq; /* when it last joined the hot set */
    uint64_t lru;     /* tick of its last use */
    uint64_t serial;  /* creation order: never reused */
};

/* The effective priority: the UMD's with OverridePriority. */
uint32_t gmc_victim_prio(const struct gmc_alloc_desc *d);

/* Victim order, first victim first: lowest priority first; within a
 * priority the clean allocations (dropped for free) before the dirty ones
 * (written back); within those the cold allocations, least recently used
 * first, then the hot ones, the one that joined the hot set last first;
 * ties: the older allocation (smaller serial). A strict total order over
 * distinct serials. */
int gmc_victim_cmp(const struct gmc_victim_key *a, const struct gmc_victim_key *b);

/* Order of a hot set: by priority, then least recently used first (ties:
 * the older allocation). Its first member of a priority is the one an
 * admission pushes out first. */
int gmc_victim_hot_cmp(const struct gmc_victim_key *a, const struct gmc_victim_key *b);

/* Placed without evicting: whether it joins the hot set (the set then
 * holds hot_bytes + size of at most budget). */
int gmc_victim_heat_placed(uint64_t hot_bytes, uint64_t size, uint64_t budget);

enum gmc_victim_admit {
    GMC_ADMIT_COLD = 0, /* comes in cold */
    GMC_ADMIT_HOT,      /* joins: the set has room */
    GMC_ADMIT_DISPLACE  /* joins: the set's least recently used members of its
                         * priority leave, oldest first, until it fits */
};

/* Placed by evicting, an allocation of placed size `size` last used at
 * `lru`: a refault (an eviction took its content out) joins the hot set
 * when the set has room, or when it was used no less recently than
 * `oldest`, the least recently used hot allocation of its priority in the
 * segment (NULL: none). Anything else comes in cold. */
enum gmc_victim_admit gmc_victim_admit(int refault, uint64_t lru, uint64_t size, uint64_t hot_bytes,
                                       uint64_t budget, const struct gmc_victim_key *oldest);

#endif /* GMC_VICTIM_H */
