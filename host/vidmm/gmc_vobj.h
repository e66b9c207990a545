/*
 * gmc_vobj.h - the objects behind the public handles of the memory
 * manager (private to the host library), and the lookups every part of
 * the manager shares (gmc_vobj.c).
 *
 * DOC: Overview
 *
 * A gmc_device holds the driver (gmc_kmd.h) and what the manager built
 * from its adapter information: one range manager per segment
 * (gmc_place.h), the handle table (gmc_handle.h) and the clients. A client
 * holds its handles (struct gmc_vref, one per open of an allocation). An
 * allocation (struct gmc_valloc) lives while any client holds a handle to
 * it, and owns its share handles (struct gmc_vshare). Clients are
 * identified inside allocations and NT share handles by a serial number
 * that is never reused, so no pointer outlives its client.
 */
#ifndef GMC_VOBJ_H
#define GMC_VOBJ_H

#include <stdint.h>

#include "gmc.h"
#include "gmc_avl.h"
#include "gmc_backend.h"
#include "gmc_handle.h"
#include "gmc_kmd.h"
#include "gmc_paging.h"
#include "gmc_place.h"
#include "gmc_range.h"
#include "gmc_victim.h"

struct gmc_valloc;
struct gmc_cpu_cache;
struct gmc_rec;

struct gmc_vshare {
    struct gmc_valloc *alloc;
    uint64_t handle;
    uint64_t target; /* NT handle: the client serial it opens in; 0: the global handle */
    struct gmc_vshare *next;
};

/* Where an allocation's current content is (docs/residency.md). */
struct gmc_valloc {
    struct gmc_range_node node; /* where it is placed (node.mgr != NULL while placed) */
    struct gmc_alloc_desc desc; /* as created */
    unsigned seg;               /* 0-based segment index, while placed */
    struct gmc_place_size sz;
    uint32_t state;             /* GMC_ALLOC_STATE_ZERO_PENDING, _PINNED, _HAS_CONTENT, ... */
    uint64_t creator;           /* serial of the creating client */
    uint32_t owner;             /* the creator's owner (RestrictSharedAccess) */
    uint32_t refs;              /* handles open on it */
    uint64_t global;            /* global share handle, or 0 */
    struct gmc_vshare *shares;  /* every share handle, global included */
    struct gmc_vref *handles;   /* every handle open on it, newest first */
    /* residency */
    uint64_t serial;            /* never reused: NOTIFY_RESIDENCY cookie */
    struct gmc_valloc *dprev, *dnext; /* the device's allocations */
    uint32_t resident;          /* residency references over all clients */
    int refault;                /* an eviction took its content out; not placed since */
    uint64_t lru;               /* device tick of the last use (make-resident, submit, lock) */
    uint64_t hot_seq;           /* when it last joined its segment's hot set (device hot_seq) */
    uint64_t busy_fence;        /* last fence of GPU work (submission) that uses it */
    uint64_t paging_fence;      /* last paging operation on its content or placement */
    uint64_t write_fence;       /* last submission that wrote it */
    int pend;                   /* what its last paging operation did (gmc_resid.c) */
    int scan;                   /* in the current eviction scan */
    struct gmc_sysbuf sys;      /* system copy (sys.host != NULL when it exists) */
    int gpu_valid;              /* the placed copy holds the content */
    int sys_valid;              /* the system copy holds the content */
    int keep_sys;               /* PermanentSysMem / ExistingSysMem: the system copy is kept */
    int notified;               /* ExplicitResidencyNotification: last notification sent was "resident" */
    int power_purged;           /* the last power-down took its placed copy (or mapping) */
    int hot;                    /* placed, in its segment's hot set: evicted after the cold ones (gmc_resid.c) */
    /* eviction candidates and hot set (gmc_cand.c) */
    struct gmc_avl_node cand_node; /* in dev->cand[tree_seg] while an eviction candidate */
    struct gmc_avl_node hot_node;  /* in dev->hot[tree_seg] while hot */
    struct gmc_victim_key key;     /* what both trees order it by */
    unsigned tree_seg;             /* the segment whose trees hold it */
    uint64_t cand_size;            /* placed bytes counted in dev->cand_bytes */
    int in_cand, in_hot;
    struct gmc_valloc *wprev, *wnext; /* dev->watched: Protected, HardwareProtected or notified */
    /* lock */
    struct gmc_client *locker;  /* client holding the lock, or NULL */
    uint32_t lock_flags;
    struct gmc_lock_map lock_map;
    int lock_wrote;             /* the lock may have written the mapped copy */
    /* budgets (gmc_budget.c) */
    uint64_t bud_bytes;         /* placed bytes counted in dev->bud_usage[bud_group] */
    uint32_t bud_group;
    int flip_pinned;            /* pinned for scan-out in a DirectFlip segment (gmc_flip.c) */
    int cache_stale;            /* Cached: the GPU wrote the system copy past the CPU cache (gmc_cache.c) */
};

struct gmc_vref {
    struct gmc_client *client;
    struct gmc_valloc *alloc;
    uint64_t handle;
    uint32_t resident;            /* this handle's residency references */
    struct gmc_vref *prev, *next; /* the client's handles */
    struct gmc_vref *aprev, *anext; /* the allocation's handles */
};

struct gmc_client {
    struct gmc_device *dev;
    uint64_t serial;
    uint32_t flags, owner;
    struct gmc_vref *refs;
    struct gmc_client *prev, *next; /* the device's clients */
    gmc_residency_fn notify_fn;
    void *notify_user;
    uint64_t evictions;             /* of allocations it created */
    uint64_t budget[GMC_SEGMENT_GROUPS];  /* client budget per group, GMC_BUDGET_NONE when unset */
    uint64_t reserve[GMC_SEGMENT_GROUPS]; /* SetVideoMemoryReservation per group */
    uint64_t last_trim;                   /* bytes to trim of its last GMC_E_OVER_BUDGET */
    uint32_t last_trim_group;
};

struct gmc_device {
    char backend[8];
    struct gmc_kmd kmd;
    struct gmc_adapter_info adapter;
    unsigned nsegs;
    struct gmc_vseg seg[GMC_MAX_SEGMENTS];
    struct gmc_segment_desc segdesc[GMC_MAX_SEGMENTS]; /* for the rule table */
    struct gmc_htab handles;
    struct gmc_client *clients;
    uint64_t nclients;
    uint64_t nallocs;
    uint64_t next_serial;
    uint64_t alloc_serial;
    /* residency and paging (gmc_resid.c) */
    struct gmc_paging *pg;          /* NULL without a DMA engine */
    int no_paging_status;           /* what paging calls answer when pg is NULL */
    uint64_t tdr_cycles;            /* paging fence timeout */
    struct gmc_valloc *allocs;      /* every allocation */
    /* Per segment, the placed allocations an eviction may take, in victim
     * order, with their placed bytes; and the hot set in age order
     * (gmc_cand.c, docs/residency.md "Candidate structures"). */
    struct gmc_avl cand[GMC_MAX_SEGMENTS];
    uint64_t cand_bytes[GMC_MAX_SEGMENTS];
    struct gmc_avl hot[GMC_MAX_SEGMENTS];
    uint64_t cand_visits;           /* candidates eviction scans looked at (tests) */
    struct gmc_valloc *watched;     /* allocations with protected content or residency notification */
    uint64_t tick;                  /* LRU clock */
    uint64_t hot_seq;               /* hot-set admissions so far */
    uint64_t hot_budget[GMC_MAX_SEGMENTS]; /* bytes a segment's hot set may hold */
    uint64_t hot_bytes[GMC_MAX_SEGMENTS];  /* bytes it holds */
    uint64_t sync_wait_fence;       /* SynchronousPaging: the next submission waits for this */
    enum gmc_power_state power;
    int gart_purged;                /* the page table was lost in the last power-down */
    struct gmc_device_stats stats;
    struct gmc_recovery_report recovery;
    struct gmc_deferred *deferred;  /* ranges freed once a fence completes */
    /* Per segment: the engine may still touch ranges released from it
     * until this fence (work queued before the release). */
    uint64_t freed_fence[GMC_MAX_SEGMENTS];
    unsigned prot_ranges_used;      /* hardware protected ranges programmed */
    struct gmc_hw_counters hw_base; /* counted before the last controller reset */
    /* budgets per segment group (gmc_budget.c, docs/budgets.md) */
    uint64_t bud_capacity[GMC_SEGMENT_GROUPS]; /* bytes of the ApplicationTarget segments */
    uint64_t bud_app[GMC_SEGMENT_GROUPS];      /* the application budget */
    uint64_t bud_usage[GMC_SEGMENT_GROUPS];    /* counted bytes, each allocation once */
    uint64_t bud_reserved[GMC_SEGMENT_GROUPS]; /* the clients' reservations, summed */
    int bud_active;                 /* a budget below the default or a reservation is set */
    struct gmc_client *bud_client;  /* while a call places for a client under budgets: it (gmc_resid_place) */
    struct gmc_cpu_cache *cpu_cache; /* the modelled CPU cache (gmc_cache.c), NULL until used */
    int cache_maintenance_off;      /* tests only: skip the CPU cache flushes to show what they prevent */
    char *devstr;                   /* the device string it was opened from, or NULL */
    struct gmc_rec *rec;            /* the recording of its calls (gmc_record.c), or NULL */
};

/* A system buffer (or a segment range, node != NULL) released while the
 * engine may still use it. */
struct gmc_deferred {
    struct gmc_sysbuf buf;
    struct gmc_range_node *node; /* a range of segment seg held until fence */
    unsigned seg;
    uint64_t fence;
    struct gmc_deferred *next;
};

/* The client's own live handle, or NULL (gmc_vobj.c). */
struct gmc_vref *gmc_vidmm_ref(const gmc_client *c, gmc_handle h);
/* Whether the client may lock the allocation with these flags (gmc_vobj.c). */
int gmc_vidmm_lock_check(const gmc_client *c, const struct gmc_valloc *a, uint32_t lock_flags);

/* Pinned where it is: a primary, overlay or capture (scanned out or
 * captured into from its place, docs/residency.md "Pinned allocations"),
 * or pinned for DirectFlip. Nothing moves or renames it. */
static inline int gmc_valloc_pinned(const struct gmc_valloc *a)
{
    return a->flip_pinned || (a->state & GMC_ALLOC_STATE_PINNED) != 0u;
}

static inline int gmc_vseg_is_aperture(const struct gmc_vseg *s)
{
    return (s->desc.flags & GMC_SEGFLAGS_APERTURE_MASK) != 0u;
}

#endif /* GMC_VOBJ_H */
