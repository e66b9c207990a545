/*
 * gmc_place.h - placement policy over the segments (private to the host
 * library). docs/placement.md, section "Policy", is the contract.
 */
#ifndef GMC_PLACE_H
#define GMC_PLACE_H

#include <stdint.h>

#include "gmc_alloc.h"
#include "gmc_range.h"

/* One segment as the manager keeps it. */
struct gmc_vseg {
    struct gmc_segment_desc desc;
    struct gmc_range_mgr mgr; /* over [desc.base, desc.base + desc.size) */
    uint64_t used;            /* bytes placed */
    uint64_t count;           /* allocations placed */
};

/* What an allocation takes in one segment. */
struct gmc_place_size {
    uint64_t size;   /* Size, or PitchAlignedSize in a PitchAlignment segment, page-rounded */
    uint64_t placed; /* size rounded up to 64 KiB in a Use64KBPages segment */
    uint64_t align;  /* max(Alignment, page), at least 64 KiB in a Use64KBPages segment */
};

struct gmc_placement {
    unsigned index; /* 0-based index of the segment (id - 1) */
    struct gmc_place_size sz;
};

/* The size an allocation takes in seg. GMC_E_OVERFLOW when rounding
 * overflows (the segment cannot hold it). */
int gmc_place_size(const struct gmc_segment_desc *seg, const struct gmc_alloc_desc *d,
                   struct gmc_place_size *out);

/* The segments d may be placed in, in the policy's order: 0-based indices
 * into idx (room for GMC_MAX_PREFERRED_SEGMENTS + 32); returns the count. */
unsigned gmc_place_order(unsigned nsegs, const struct gmc_alloc_desc *d, unsigned *idx);

/*
 * Place an allocation whose descriptor passed the rule table: insert node
 * (zeroed, unused) into one segment's manager following the policy.
 * GMC_OK and *out, or GMC_E_NO_SPACE with nothing changed.
 */
int gmc_place(struct gmc_vseg *segs, unsigned nsegs, const struct gmc_alloc_desc *d,
              struct gmc_range_node *node, struct gmc_placement *out);

#endif /* GMC_PLACE_H */
