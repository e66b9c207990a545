/*
 * gmc_alloc.h - what an allocation and a segment look like to gmc.
 *
 * DOC: Overview
 *
 * struct gmc_alloc_desc carries the fields a WDDM driver and runtime hand
 * the video memory manager when an allocation is created: the
 * DXGK_ALLOCATIONINFO fields (size, alignment, PitchAlignedSize,
 * preferred segments, supported and eviction segment sets, hinted banks,
 * priority, DXGK_ALLOCATIONINFOFLAGS), the D3DKMT_CREATEALLOCATIONFLAGS
 * word and the D3DDDI_ALLOCATIONINFO2 items (Primary, Stereo,
 * OverridePriority, VidPnSourceId, pSystemMem / hSection).
 *
 * struct gmc_segment_desc is one segment as the hardware describes it in
 * its SEG_* registers (see docs/registers.md); its flags use the
 * DXGK_SEGMENTFLAGS layout, GMC_SEGFLAGS_*_MASK in gmc_regs.h.
 *
 * Every rule the WDDM documentation states about these fields lives in one
 * table, spec/rules.toml, listed in docs/rules.md. gmc_rules_check_alloc()
 * and gmc_rules_check_segments() apply it. They have no side effects, do
 * not print, and are safe to call from several threads at once.
 *
 * Flag macros keep the bit positions of the Windows headers, so a value
 * copied from a WDDM structure's Value member means the same thing here.
 */
#ifndef GMC_ALLOC_H
#define GMC_ALLOC_H

#include <stdint.h>

#include "gmc_flags.h"
#include "gmc_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ flag words */
/* GMC_ALLOC_* (DXGK_ALLOCATIONINFOFLAGS), GMC_KMT_* (D3DKMT_CREATEALLOCATIONFLAGS),
 * GMC_INFO2_* (D3DDDI_ALLOCATIONINFO2.Flags), GMC_LOCK_* (D3DDDICB_LOCKFLAGS) and
 * each word's reserved mask are generated from spec/flags.toml into gmc_flags.h. */

/* The flags a history buffer may carry besides HistoryBuffer itself. */
#define GMC_ALLOC_HISTORY_BUFFER_ALLOWED \
    (GMC_ALLOC_HISTORY_BUFFER | GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_CACHED)

/* VidPnSourceId is zero-based; this value means "not a scan-out source". */
#define GMC_VIDPN_SOURCE_NONE            0xFFFFFFFFu

/* ------------------------------------------------ DXGK_SEGMENTFLAGS extras */
/* The defined bits are GMC_SEGFLAGS_*_MASK in gmc_regs.h; GMC_SEG_DEFINED_MASK
 * and GMC_SEG_RESERVED_MASK (the Reserved:16 field, which must be zero) are in
 * gmc_flags.h. */

/* ------------------------------------------------------------- priorities */
/* D3DDDI_ALLOCATIONPRIORITY_*. 0 is invalid; any other value is allowed,
 * values between the named levels included. */
#define GMC_PRIORITY_MINIMUM             0x28000000u
#define GMC_PRIORITY_LOW                 0x50000000u
#define GMC_PRIORITY_NORMAL              0x78000000u
#define GMC_PRIORITY_HIGH                0xa0000000u
#define GMC_PRIORITY_MAXIMUM             0xc8000000u

/* ----------------------------------------------------------- descriptors */

/* Segment sets are bitmasks of 1-based segment ids: bit i is segment i+1. */
#define GMC_SEGMENT_BIT(id)              (1u << ((unsigned)(id) - 1u))
/* Segment ids fit the 5-bit fields of DXGK_SEGMENTPREFERENCE. */
#define GMC_SEGMENT_ID_MAX               31u
#define GMC_MAX_PREFERRED_SEGMENTS       5u
#define GMC_MAX_HINTED_BANKS             4u
/* Use64KBPages segments need allocations aligned to this. */
#define GMC_64KB_PAGE_SIZE               0x10000u

/* One entry of DXGK_SEGMENTPREFERENCE: SegmentIdN and DirectionN. */
struct gmc_segment_pref {
    uint8_t id;       /* 1-based segment id; 0 ends the list */
    uint8_t top_down; /* 1: place from the end of the segment (Direction) */
};

struct gmc_alloc_desc {
    /* DXGK_ALLOCATIONINFO */
    uint64_t size;               /* bytes; rounded up to GMC_PAGE_SIZE */
    uint32_t alignment;          /* bytes; 0 = page alignment, else a power of two */
    uint64_t pitch_aligned_size; /* size in a PitchAlignment segment; 0 = not supported there */
    struct gmc_segment_pref preferred[GMC_MAX_PREFERRED_SEGMENTS]; /* most preferred first */
    uint32_t supported_segments; /* SupportedWriteSegmentSet (WDDM 2: the one set) */
    uint32_t eviction_segments;  /* EvictionSegmentSet: aperture segments only */
    uint8_t hinted_banks[GMC_MAX_HINTED_BANKS]; /* 1-based banks of preferred[0]; 0 ends the list */
    uint32_t priority;           /* AllocationPriority, GMC_PRIORITY_*; 0 is invalid */
    uint32_t flags;              /* DXGK_ALLOCATIONINFOFLAGS: GMC_ALLOC_* */
    /* D3DKMT_CREATEALLOCATIONFLAGS */
    uint32_t kmt_flags;          /* GMC_KMT_* */
    /* D3DDDI_ALLOCATIONINFO2 */
    uint32_t info2_flags;        /* GMC_INFO2_* */
    uint32_t vidpn_source_id;    /* zero-based, primaries only; else GMC_VIDPN_SOURCE_NONE */
    uint32_t umd_priority;       /* Priority, honoured when GMC_INFO2_OVERRIDE_PRIORITY is set */
    const void *system_mem;      /* pSystemMem: existing backing (ExistingSysMem flags) */
    uint64_t system_mem_size;    /* bytes at system_mem: page multiple, >= size */
    uint64_t section;            /* hSection, with GMC_KMT_EXISTING_SECTION; 0 = none */
};

struct gmc_segment_desc {
    uint32_t id;         /* 1-based; segment i of an array has id i+1 */
    uint64_t base;       /* GPU address of the first byte */
    uint64_t size;       /* bytes, a page multiple */
    uint32_t flags;      /* DXGK_SEGMENTFLAGS: GMC_SEGFLAGS_*_MASK */
    uint64_t cpu_offset; /* BAR1 offset of the first byte, when CpuVisible */
    uint32_t banks;      /* number of equal banks; 0 unless UseBanking */
    /* DXGK_SEGMENTDESCRIPTOR3.SystemMemoryEndAddress: in a
     * PartiallyPreservedDuringHibernate segment, the GPU address up to which
     * it is system memory that survives hibernate; 0 elsewhere. */
    uint64_t sysmem_end;
};

/* The segment flags that make a segment an aperture (system memory the GPU
 * reaches through a page table) rather than a memory segment. */
#define GMC_SEG_APERTURE_FLAGS (GMC_SEGFLAGS_APERTURE_MASK | GMC_SEGFLAGS_AGP_MASK)

/* Whether a segment is an aperture or AGP segment, not a memory segment. */
static inline int gmc_segment_is_aperture(const struct gmc_segment_desc *seg)
{
    return (seg->flags & GMC_SEG_APERTURE_FLAGS) != 0u;
}

/* Whether the CPU reaches a segment's bytes through the BAR window:
 * CpuVisible, and a memory segment. */
static inline int gmc_segment_cpu_window(const struct gmc_segment_desc *seg)
{
    return (seg->flags & GMC_SEGFLAGS_CPU_VISIBLE_MASK) && !gmc_segment_is_aperture(seg);
}

/* Bytes at the end of a segment that pinned (overlay, capture)
 * allocations may use: the last 20 %, rounded down to whole pages. */
static inline uint64_t gmc_pinned_region_size(uint64_t seg_size)
{
    return (seg_size / 5u) & ~(uint64_t)(GMC_PAGE_SIZE - 1u);
}

/* Largest allocation that may name an aperture segment of this size in
 * its eviction set: the 80 % the pinned region leaves. */
static inline uint64_t gmc_eviction_limit(uint64_t seg_size)
{
    return seg_size - gmc_pinned_region_size(seg_size);
}

/* A descriptor with no flags, no segments, NORMAL priority and no VidPN
 * source: zero everything else. */
void gmc_alloc_desc_init(struct gmc_alloc_desc *desc);

/* ----------------------------------------------------------------- rules */

struct gmc_rule; /* one row of the rule table (opaque) */

/*
 * gmc_rules_check_segments - validate a segment table against the
 * DXGK_SEGMENTFLAGS rules. Returns GMC_OK, GMC_E_NULL_POINTER (segs NULL
 * while n > 0), or the status of the first failing rule in table order.
 * When failed is not NULL it receives that rule, or NULL.
 */
int gmc_rules_check_segments(const struct gmc_segment_desc *segs, unsigned n,
                             const struct gmc_rule **failed);

/*
 * gmc_rules_check_alloc - validate an allocation descriptor. The segment
 * table is checked first (gmc_rules_check_segments), then every allocation
 * rule in table order. Returns GMC_OK, GMC_E_NULL_POINTER, or the status of
 * the first failing rule; failed as above.
 */
int gmc_rules_check_alloc(const struct gmc_alloc_desc *desc,
                          const struct gmc_segment_desc *segs, unsigned nsegs,
                          const struct gmc_rule **failed);

/* The table, for tools and messages. Out-of-range or NULL give NULL / 0. */
unsigned gmc_rule_count(void);
const struct gmc_rule *gmc_rule_at(unsigned index);
const struct gmc_rule *gmc_rule_find(const char *id);
const char *gmc_rule_id(const struct gmc_rule *rule);
const char *gmc_rule_seed(const struct gmc_rule *rule);
const char *gmc_rule_statement(const struct gmc_rule *rule);
int gmc_rule_status(const struct gmc_rule *rule);

#ifdef __cplusplus
}
#endif

#endif /* GMC_ALLOC_H */
