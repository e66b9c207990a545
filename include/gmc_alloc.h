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

#include "gmc_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------ DXGK_ALLOCATIONINFOFLAGS */

#define GMC_ALLOC_CPU_VISIBLE                     (1u << 0)
#define GMC_ALLOC_PERMANENT_SYS_MEM               (1u << 1)
#define GMC_ALLOC_CACHED                          (1u << 2)
#define GMC_ALLOC_PROTECTED                       (1u << 3)
#define GMC_ALLOC_EXISTING_SYS_MEM                (1u << 4)
#define GMC_ALLOC_EXISTING_KERNEL_SYS_MEM         (1u << 5)
#define GMC_ALLOC_FROM_END_OF_SEGMENT             (1u << 6)
#define GMC_ALLOC_SWIZZLED                        (1u << 7)
#define GMC_ALLOC_OVERLAY                         (1u << 8)
#define GMC_ALLOC_CAPTURE                         (1u << 9)
#define GMC_ALLOC_USE_ALTERNATE_VA                (1u << 10)
#define GMC_ALLOC_SYNCHRONOUS_PAGING              (1u << 11)
#define GMC_ALLOC_LINK_MIRRORED                   (1u << 12)
#define GMC_ALLOC_LINK_INSTANCED                  (1u << 13)
#define GMC_ALLOC_HISTORY_BUFFER                  (1u << 14)
#define GMC_ALLOC_ACCESSED_PHYSICALLY             (1u << 15)
#define GMC_ALLOC_EXPLICIT_RESIDENCY_NOTIFICATION (1u << 16)
#define GMC_ALLOC_HARDWARE_PROTECTED              (1u << 17)
#define GMC_ALLOC_CPU_VISIBLE_ON_DEMAND           (1u << 18)
#define GMC_ALLOC_RESERVED16                      (1u << 19)
#define GMC_ALLOC_RESERVED15                      (1u << 20)
#define GMC_ALLOC_RESERVED14                      (1u << 21)
#define GMC_ALLOC_RESERVED13                      (1u << 22)
#define GMC_ALLOC_RESERVED12                      (1u << 23)
#define GMC_ALLOC_RESERVED11                      (1u << 24)
#define GMC_ALLOC_RESERVED10                      (1u << 25)
#define GMC_ALLOC_RESERVED9                       (1u << 26)
#define GMC_ALLOC_RESERVED4                       (1u << 27)
#define GMC_ALLOC_RESERVED3                       (1u << 28)
#define GMC_ALLOC_RESERVED2                       (1u << 29)
#define GMC_ALLOC_RESERVED1                       (1u << 30)
#define GMC_ALLOC_RESERVED0                       (1u << 31)
/* DXGK_ALLOC_RESERVED16..0: "reserved and should be set to zero". */
#define GMC_ALLOC_RESERVED_MASK                   0xFFF80000u
/* The flags a history buffer may carry besides HistoryBuffer itself. */
#define GMC_ALLOC_HISTORY_BUFFER_ALLOWED \
    (GMC_ALLOC_HISTORY_BUFFER | GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_CACHED)

/* ------------------------------------------- D3DKMT_CREATEALLOCATIONFLAGS */
/* Bit positions of d3dkmthk.h (WDDM 2.3); the seed page lists Zeroed last
 * but states no positions. */

#define GMC_KMT_CREATE_RESOURCE          (1u << 0)
#define GMC_KMT_CREATE_SHARED            (1u << 1)
#define GMC_KMT_NON_SECURE               (1u << 2)
#define GMC_KMT_CREATE_PROTECTED         (1u << 3)  /* reserved: zero */
#define GMC_KMT_RESTRICT_SHARED_ACCESS   (1u << 4)
#define GMC_KMT_EXISTING_SYS_MEM         (1u << 5)
#define GMC_KMT_NT_SECURITY_SHARING      (1u << 6)
#define GMC_KMT_READ_ONLY                (1u << 7)
#define GMC_KMT_CREATE_WRITE_COMBINED    (1u << 8)  /* reserved: zero */
#define GMC_KMT_CREATE_CACHED            (1u << 9)  /* reserved: zero */
#define GMC_KMT_SWAP_CHAIN_BACK_BUFFER   (1u << 10) /* reserved: zero */
#define GMC_KMT_CROSS_ADAPTER            (1u << 11)
#define GMC_KMT_OPEN_CROSS_ADAPTER       (1u << 12) /* never on create */
#define GMC_KMT_PARTIAL_SHARED_CREATION  (1u << 13)
#define GMC_KMT_ZEROED                   (1u << 14)
#define GMC_KMT_WRITE_WATCH              (1u << 15)
#define GMC_KMT_STANDARD_ALLOCATION      (1u << 16)
#define GMC_KMT_EXISTING_SECTION         (1u << 17)
#define GMC_KMT_RESERVED_MASK            0xFFFC0000u

/* ------------------------------------------ D3DDDI_ALLOCATIONINFO2.Flags */

#define GMC_INFO2_PRIMARY                (1u << 0)
#define GMC_INFO2_STEREO                 (1u << 1)
#define GMC_INFO2_OVERRIDE_PRIORITY      (1u << 2)
#define GMC_INFO2_RESERVED_MASK          0xFFFFFFF8u

/* VidPnSourceId is zero-based; this value means "not a scan-out source". */
#define GMC_VIDPN_SOURCE_NONE            0xFFFFFFFFu

/* ------------------------------------------------ DXGK_SEGMENTFLAGS extras */
/* The defined bits are GMC_SEGFLAGS_*_MASK in gmc_regs.h; the rest are the
 * Reserved:16 field, which must be zero. */
#define GMC_SEG_DEFINED_MASK \
    (GMC_SEGFLAGS_APERTURE_MASK | GMC_SEGFLAGS_AGP_MASK | GMC_SEGFLAGS_CPU_VISIBLE_MASK | \
     GMC_SEGFLAGS_USE_BANKING_MASK | GMC_SEGFLAGS_CACHE_COHERENT_MASK | \
     GMC_SEGFLAGS_PITCH_ALIGNMENT_MASK | GMC_SEGFLAGS_POPULATED_FROM_SYSTEM_MEMORY_MASK | \
     GMC_SEGFLAGS_PRESERVED_DURING_STANDBY_MASK | GMC_SEGFLAGS_PRESERVED_DURING_HIBERNATE_MASK | \
     GMC_SEGFLAGS_PARTIALLY_PRESERVED_DURING_HIBERNATE_MASK | GMC_SEGFLAGS_DIRECT_FLIP_MASK | \
     GMC_SEGFLAGS_USE_64KB_PAGES_MASK | GMC_SEGFLAGS_RESERVED_SYS_MEM_MASK | \
     GMC_SEGFLAGS_SUPPORTS_CPU_HOST_APERTURE_MASK | \
     GMC_SEGFLAGS_SUPPORTS_CACHED_CPU_HOST_APERTURE_MASK | GMC_SEGFLAGS_APPLICATION_TARGET_MASK)
#define GMC_SEG_RESERVED_MASK            (~(uint32_t)GMC_SEG_DEFINED_MASK)

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
