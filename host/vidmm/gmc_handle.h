/*
 * gmc_handle.h - generation-checked handle table (private to the host
 * library).
 *
 * DOC: Overview
 *
 * Handles name objects by value, never by pointer, so that a handle that
 * was closed, forged or mistyped is refused instead of dereferenced. A
 * handle is 64 bits:
 *
 *   63..56  kind   (GMC_HK_*, never 0)
 *   55..32  generation of the slot (1..2^24-1)
 *   31..0   slot index
 *
 * Closing a handle bumps its slot's generation, so the old value never
 * matches again; a slot whose generation would wrap is retired, never
 * reused. Lookups are O(1): bounds check, kind, generation. Slots are
 * reused last-freed first, so the same call sequence yields the same
 * handle values (deterministic, for record and replay). Adds cannot fail
 * after gmc_htab_reserve(), which lets callers validate and reserve first
 * and change state only once nothing can fail.
 */
#ifndef GMC_HANDLE_H
#define GMC_HANDLE_H

#include <stdint.h>

enum gmc_hkind {
    GMC_HK_ALLOC = 0xA1, /* a client's handle to an allocation */
    GMC_HK_SHARE = 0x5E, /* a global or NT share handle */
};

#define GMC_HANDLE_GEN_MAX 0xFFFFFFu

struct gmc_hslot {
    void *obj;      /* NULL when free */
    uint32_t gen;   /* current generation, 1..GMC_HANDLE_GEN_MAX; past it: retired */
    uint32_t next;  /* free-list link (index + 1; 0 ends) */
    uint8_t kind;
};

struct gmc_htab {
    struct gmc_hslot *slot;
    uint32_t cap;     /* slots allocated */
    uint32_t top;     /* slots ever used: [0, top) */
    uint32_t free;    /* free-list head (index + 1; 0 = empty) */
    uint32_t nfree;   /* slots on the free list */
    uint64_t live;    /* handles open */
};

void gmc_htab_init(struct gmc_htab *t);
void gmc_htab_fini(struct gmc_htab *t);

/* Make room so that the next n adds cannot fail. GMC_E_NO_MEMORY or
 * GMC_E_OVERFLOW (index space exhausted); the table is unchanged then. */
int gmc_htab_reserve(struct gmc_htab *t, uint32_t n);

/* Add obj (not NULL) under kind; needs a prior reserve. Never 0. */
uint64_t gmc_htab_add(struct gmc_htab *t, enum gmc_hkind kind, void *obj);

/* The object of a live handle of this kind, else NULL. Any value is safe. */
void *gmc_htab_get(const struct gmc_htab *t, uint64_t h, enum gmc_hkind kind);

/* Close a live handle (looked up first by the caller). */
void gmc_htab_remove(struct gmc_htab *t, uint64_t h);

#endif /* GMC_HANDLE_H */
