/*
 * gmc.h - the public API of the gmc host library.
 *
 * DOC: Overview
 *
 * gmc is an open model of the WDDM video memory manager driving a real
 * (simulated or FPGA) memory controller. A program opens a device from a
 * string ("sim", "sim:latency=50", "pci:0000:01:00.0",
 * "uart:/dev/ttyUSB1@3000000"), creates clients (one per process it stands
 * for) and, through them, allocations described by struct gmc_alloc_desc
 * (gmc_alloc.h: the DXGK_ALLOCATIONINFO, D3DKMT_CREATEALLOCATIONFLAGS and
 * D3DDDI_ALLOCATIONINFO2 fields). docs/host.md describes the layers.
 *
 * Conventions, for every function:
 *   - The return value is GMC_OK (0) or a negative enum gmc_status code
 *     (gmc_status.h); gmc_strerror() and gmc_status_name() describe it. A
 *     GMC_E_RULE_* code names the rule of the rule table (docs/rules.md)
 *     the descriptor broke; gmc_rule_for_status() returns that rule.
 *   - Every argument is checked before anything changes. On failure the
 *     library state is unchanged and every out-parameter holds a safe
 *     value (NULL, 0, GMC_HANDLE_NONE or a zeroed struct).
 *   - Nothing prints. Nothing is global: all state lives in the device.
 *   - A device and its clients are not thread-safe: use one thread per
 *     device at a time.
 *
 * Handles. gmc_device and gmc_client are opaque pointers whose lifetime
 * the caller manages (like libusb's). Allocation and share handles are
 * 64-bit values, generation-checked: a handle that was closed, that
 * belongs to another client, or that never existed is refused with
 * GMC_E_BAD_HANDLE, never dereferenced. 0 (GMC_HANDLE_NONE) is never valid.
 */
#ifndef GMC_H
#define GMC_H

#include <stddef.h>
#include <stdint.h>

#include "gmc_alloc.h"
#include "gmc_regs.h"
#include "gmc_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gmc_device gmc_device;
typedef struct gmc_client gmc_client;

/* A client's handle to an allocation (like a per-process D3DKMT_HANDLE). */
typedef uint64_t gmc_handle;
/* A share handle: an allocation's global share handle (CreateShared), or an
 * NT handle made for one client (NtSecuritySharing). */
typedef uint64_t gmc_share_handle;

#define GMC_HANDLE_NONE ((uint64_t)0)

/* ------------------------------------------------------------- devices */

/* Why gmc_device_open_ex() failed, beyond the status. */
struct gmc_open_report {
    const struct gmc_rule *rule; /* the segment rule a descriptor broke, else NULL */
    unsigned segment;            /* 1-based descriptor that broke a per-segment rule, else 0 */
    size_t error_pos;            /* device-string errors: byte offset of the bad part, else 0 */
};

/*
 * Check a device string without opening anything. GMC_OK for a well-formed
 * string of any backend (pci and uart included), else the parse status:
 * GMC_E_BAD_DEVICE_STRING (empty, or no known backend), GMC_E_DEVSTR_OPTION,
 * GMC_E_DEVSTR_NUMBER, GMC_E_DEVSTR_SEGMENT, GMC_E_DEVSTR_PCI or
 * GMC_E_DEVSTR_UART. err_pos (may be NULL) receives the byte offset of the
 * problem, 0 on success.
 *
 * Grammar (docs/host.md):
 *   sim[:OPTION[,OPTION...]]   latency=N  host-memory latency in cycles
 *                              timeout=N  bus timeout in cycles (>= 1)
 *                              pbuf=N     paging buffer bytes (64 .. 1 MiB, multiple of 32)
 *                              tdr=N      paging fence timeout in cycles (>= 1000) before a TDR
 *                              trace=FILE FST waveform of the whole run
 *                              segs=N     strap N (0..4) segment descriptors
 *                              segK=BASE/SIZE/FLAGS[/CPU_OFFSET[/BANKS[/SYSMEM_END]]]
 *                                         strap descriptor K (1..4)
 *   pci[:DOMAIN:BUS:DEV.FN][,id=VVVV:DDDD]   (or pci:id=VVVV:DDDD)
 *                              hex, e.g. pci:0000:01:00.0 (DEV <= 1f, FN <= 7);
 *                              "pci" alone: the first gmc device; id=: accept
 *                              a board flashed with other vendor/device IDs
 *   uart:/PATH@BAUD            e.g. uart:/dev/ttyUSB1@3000000
 * Numbers are decimal or 0x-prefixed hex.
 */
int gmc_device_string_check(const char *str, size_t *err_pos);

/*
 * The PCI gmc devices of this machine (the spec's vendor/device IDs,
 * GMC_PCI_VENDOR_ID/GMC_PCI_DEVICE_ID), as device strings
 * "pci:DDDD:BB:DD.F" in out[0 .. max-1], in address order. *n gets the
 * number found (which may exceed max). GMC_E_PCI_INIT when libpciaccess
 * cannot start; nothing is opened.
 */
#define GMC_PCI_DEVSTR_LEN 24u
int gmc_pci_list(char (*out)[GMC_PCI_DEVSTR_LEN], unsigned max, unsigned *n);

/*
 * Open a device: parse the string, start the backend, start the driver
 * (check ID and VERSION, read the segment descriptors from the registers)
 * and validate the descriptors against the DXGK_SEGMENTFLAGS rules. A
 * well-formed uart string answers GMC_E_BACKEND_UNAVAILABLE; the pci
 * backend's failures have their own GMC_E_PCI_* statuses (docs/pci.md). A
 * pci device without VFIO opens for register and aperture work; paging
 * calls then answer GMC_E_PCI_NO_VFIO. A wrong
 * ID or major version answers GMC_E_VERSION; a breaking descriptor answers
 * its rule's GMC_E_RULE_SEG_* status. On failure *out is NULL.
 */
int gmc_device_open(const char *str, gmc_device **out);
/* The same, filling *report (may be NULL) on success and failure. */
int gmc_device_open_ex(const char *str, struct gmc_open_report *report, gmc_device **out);

/* Open the sim backend from a model configuration (gmc_sim.h; NULL for the
 * defaults), e.g. with strapped segment descriptors. */
struct gmc_sim_config;
int gmc_device_open_sim(const struct gmc_sim_config *cfg, struct gmc_open_report *report,
                        gmc_device **out);

/* Destroy every client (and so every allocation), stop the driver and the
 * backend. NULL is ignored. */
void gmc_device_close(gmc_device *dev);

struct gmc_device_info {
    char backend[8];          /* "sim", ... */
    uint32_t id;              /* ID register: GMC_ID */
    uint32_t version;         /* VERSION register */
    uint32_t caps;            /* CAPS register (GMC_CAPS_*) */
    uint64_t vram_size;       /* bytes of local VRAM */
    uint64_t cpu_window_size; /* bytes of VRAM behind BAR1 */
    uint64_t aperture_base;   /* GPU address of the GART aperture */
    uint64_t aperture_pages;
    unsigned segment_count;
    uint64_t clients;         /* live clients */
    uint64_t allocations;     /* live allocations */
    uint64_t handles;         /* live allocation and share handles */
    uint32_t page_size;       /* GART page size, bytes */
    uint32_t tlb_entries;     /* GART TLB entries */
    uint32_t power_state;     /* enum gmc_power_state */
};
int gmc_device_query(const gmc_device *dev, struct gmc_device_info *out);

struct gmc_segment_info {
    struct gmc_segment_desc desc; /* as the hardware describes it */
    uint64_t used;                /* bytes placed */
    uint64_t free;                /* bytes not placed */
    uint64_t largest_free;        /* largest free contiguous range */
    uint64_t allocations;         /* allocations placed here */
    uint64_t pinned_start;        /* offset of the overlay/capture region (last 20 %) */
    uint64_t committed;           /* bytes of allocations with content here */
    uint64_t resident_bytes;      /* bytes of allocations some client references as resident */
};
/* id is 1-based; GMC_E_NOT_FOUND for an id the device does not have. */
int gmc_segment_query(const gmc_device *dev, unsigned id, struct gmc_segment_info *out);

/*
 * Write an FST waveform of device cycles [start, end) (end 0: until the
 * device closes) to path; sim devices only (else GMC_E_UNSUPPORTED).
 * GMC_E_BUSY when a waveform is already being written, GMC_E_IO when the
 * file cannot be created. Cycles already past are not recorded.
 */
int gmc_device_trace(gmc_device *dev, const char *path, uint64_t start, uint64_t end);

/*
 * Record the program's calls on this device as a gmc trace
 * (docs/trace-format.md, "Recording") that `gmc replay` and `gmc run`
 * replay: the same calls in the same order, each expecting the status it
 * answered, write data and the hashes of the data read back included.
 * Recording starts on a device in D0 without clients (else
 * GMC_E_BAD_STATE; GMC_E_BUSY when it already records) and writes path,
 * and, unless flags has GMC_RECORD_INLINE, path.data beside it for write
 * data of more than 32 bytes. GMC_E_RECORD_OPTION for unknown flags,
 * GMC_E_INVALID_ARG for an empty path, GMC_E_RECORD_IO when a file cannot
 * be created. Calls the trace cannot
 * express are written as "# not recorded: ..." comments; queries are not
 * written. path NULL stops recording and closes the files: GMC_E_RECORD_IO
 * when a write failed since the start (the calls themselves answered as
 * usual), GMC_E_BAD_STATE when it was not recording. gmc_device_close()
 * stops it too.
 *
 * Without a call: when the environment variable GMC_RECORD names a file,
 * every gmc_device_open*() records into it from the open on, with the
 * options in GMC_RECORD_OPTIONS (comma-separated; "inline" is
 * GMC_RECORD_INLINE). If that cannot start, the open fails with the
 * status (GMC_E_RECORD_IO, GMC_E_RECORD_OPTION) and no device.
 */
#define GMC_RECORD_INLINE (1u << 0) /* all write data inline in the trace, no side file */
#define GMC_RECORD_FLAGS_MASK GMC_RECORD_INLINE
int gmc_device_record(gmc_device *dev, const char *path, uint32_t flags);

/* ------------------------------------------------------------- clients */

/* The client is not a secure process (e.g. a sandboxed one): it may open
 * only shared allocations created with NonSecure. */
#define GMC_CLIENT_NON_SECURE (1u << 0)
#define GMC_CLIENT_FLAGS_MASK GMC_CLIENT_NON_SECURE

struct gmc_client_desc {
    uint32_t flags; /* GMC_CLIENT_* */
    uint32_t owner; /* security principal (user/session) the process runs as */
};

/* desc NULL: a secure client of owner 0. On failure *out is NULL. */
int gmc_client_create(gmc_device *dev, const struct gmc_client_desc *desc, gmc_client **out);
/* Close every handle the client holds (allocations whose last handle this
 * was are destroyed), then free it. NULL is ignored. */
void gmc_client_destroy(gmc_client *client);

/* --------------------------------------------------------- allocations */

/*
 * Create an allocation: validate desc against every rule
 * (gmc_rules_check_alloc with the device's segments) and return the
 * client's handle. The allocation is placed at once when a supported
 * segment has room without evicting anything (docs/placement.md,
 * "Policy"); otherwise it is placed when first made resident. Its content
 * is established on first page-in (gmc_make_resident, gmc_lock): zeros for
 * GMC_KMT_ZEROED, GMC_FILL_UNINITIALISED otherwise. Creation never evicts.
 * Pinned allocations (primaries, overlays, captures) are placed and paged
 * in at creation, or refused with GMC_E_NO_SPACE. With
 * GMC_KMT_CREATE_SHARED (and not GMC_KMT_NT_SECURITY_SHARING) the
 * allocation also gets a global share handle (gmc_alloc_info.share_handle).
 */
int gmc_alloc_create(gmc_client *client, const struct gmc_alloc_desc *desc, gmc_handle *out);

/* Close the client's handle; the allocation goes with its last handle. */
int gmc_alloc_destroy(gmc_client *client, gmc_handle h);

#define GMC_ALLOC_STATE_CREATOR       (1u << 0) /* the asking client created it */
#define GMC_ALLOC_STATE_ZERO_PENDING  (1u << 1) /* Zeroed, zero-filled on first page-in */
#define GMC_ALLOC_STATE_PINNED        (1u << 2) /* primary, overlay or capture */
#define GMC_ALLOC_STATE_CPU_REACHABLE (1u << 3) /* in a CPU-visible memory segment */
#define GMC_ALLOC_STATE_SHARED        (1u << 4) /* CreateShared */
#define GMC_ALLOC_STATE_PLACED        (1u << 5) /* in GPU-accessible memory (segment, offset valid) */
#define GMC_ALLOC_STATE_RESIDENT      (1u << 6) /* some client references it as resident */
#define GMC_ALLOC_STATE_HAS_CONTENT   (1u << 7) /* paged in at least once */
#define GMC_ALLOC_STATE_IN_SYSTEM     (1u << 8) /* current content is in its system copy */
#define GMC_ALLOC_STATE_DIRTY         (1u << 9) /* GPU copy newer than the system copy */
#define GMC_ALLOC_STATE_LOCKED        (1u << 10)
#define GMC_ALLOC_STATE_LOST          (1u << 11) /* content lost (TDR, power); refilled on page-in */

struct gmc_alloc_info {
    uint64_t size;          /* bytes: Size (PitchAlignedSize in a PitchAlignment segment), page-rounded */
    uint64_t placed_size;   /* bytes reserved in the segment (64 KiB-rounded in Use64KBPages segments) */
    uint32_t segment;       /* 1-based segment id; 0 when not placed */
    uint64_t offset;        /* from the segment base (when placed) */
    uint64_t gpu_address;   /* segment base + offset (when placed) */
    uint64_t alignment;     /* effective alignment of gpu_address */
    uint32_t flags;         /* DXGK_ALLOCATIONINFOFLAGS, as created */
    uint32_t kmt_flags;     /* D3DKMT_CREATEALLOCATIONFLAGS, as created */
    uint32_t info2_flags;   /* D3DDDI_ALLOCATIONINFO2.Flags, as created */
    uint32_t priority;      /* effective priority (the UMD's with OverridePriority) */
    uint32_t state;         /* GMC_ALLOC_STATE_* */
    uint32_t open_count;    /* handles open on it, over all clients */
    gmc_share_handle share_handle; /* global share handle, or GMC_HANDLE_NONE */
    uint32_t resident_refs; /* the asking client's residency references */
    uint32_t resident_total;/* over all clients */
    uint64_t last_use;      /* fence of the last submission that referenced it */
};
int gmc_alloc_query(const gmc_client *client, gmc_handle h, struct gmc_alloc_info *out);
/* D3DKMTSetAllocationPriority: the allocation's effective priority (the
 * UMD's Priority when it was created with OverridePriority). It orders the
 * allocation among eviction victims from the next placement on, placed or
 * not, resident or not. 0 is invalid: GMC_E_RULE_PRIORITY_ZERO
 * (GMC_E_RULE_OVERRIDEPRIORITY_ZERO with OverridePriority), nothing
 * changes. */
int gmc_alloc_set_priority(gmc_client *client, gmc_handle h, uint32_t priority);

/* ------------------------------------------------------------- sharing */

/*
 * D3DKMTShareObjects for an NtSecuritySharing allocation, plus the handle
 * duplication into `target`: the returned NT handle opens the allocation in
 * `target` only. GMC_E_NOT_SHARED for an allocation without
 * NtSecuritySharing (use its global share handle instead).
 */
int gmc_alloc_share_nt(gmc_client *client, gmc_handle h, const gmc_client *target,
                       gmc_share_handle *out);

/*
 * Open a shared allocation by a share handle and get this client's handle.
 * Refused: GMC_E_BAD_HANDLE (unknown, stale, or an NT handle made for another
 * client), GMC_E_SHARE_NOT_SECURE (a GMC_CLIENT_NON_SECURE client and an
 * allocation without NonSecure), GMC_E_SHARE_RESTRICTED
 * (RestrictSharedAccess and a client of another owner than the creator).
 */
int gmc_alloc_open(gmc_client *client, gmc_share_handle sh, gmc_handle *out);

/* ----------------------------------------------------------- residency */

/*
 * Residency (D3DKMTMakeResident / D3DKMTEvict, docs/residency.md).
 *
 * Creating an allocation reserves no memory (pinned allocations, primaries,
 * overlays and captures, excepted: they are placed at creation and never
 * move). Each client holds a reference count of residency requests per
 * allocation. gmc_make_resident() takes one reference per handle; an
 * allocation not in GPU-accessible memory is placed then (in its preferred
 * or supported segments, docs/placement.md) and paged in: its content is
 * copied back from its system copy, or, on first page-in, filled (zeros
 * for Zeroed allocations, GMC_FILL_UNINITIALISED otherwise). gmc_evict()
 * drops one reference. An allocation nobody references may be evicted when
 * another needs room: lowest priority first, least recently used within a
 * priority; pinned, locked-in-place and referenced allocations are never
 * chosen. Eviction saves content to the allocation's system copy, through
 * an aperture segment when the allocation's EvictionSegmentSet names one,
 * else straight through an MDL; a clean allocation with a kept system copy
 * (PermanentSysMem, ExistingSysMem) is discarded instead.
 */

/* The pattern a content-less, non-Zeroed allocation gets on first page-in. */
#define GMC_FILL_UNINITIALISED 0xC1C1C1C1u

struct gmc_residency_result {
    /* GMC_E_NO_SPACE: bytes that would have to be freed in the best segment
     * for the failing allocation (beyond what eviction could free). */
    uint64_t bytes_needed;
    unsigned failed_index; /* index of the handle that failed, else n */
    uint64_t paging_fence; /* paging fence of the last paging done, 0 if none */
    /* GMC_E_OVER_BUDGET: bytes the client must trim (evict) in segment
     * group budget_group to fit its budget with this call's allocations
     * (D3DDDIARG_TRIMRESIDENCYSET.NumBytesToTrim); 0 otherwise. */
    uint64_t bytes_to_trim;
    uint32_t budget_group; /* enum gmc_segment_group, with bytes_to_trim */
};

/*
 * Make n allocations resident for this client. All or nothing: on failure
 * no reference is taken (allocations already paged in by this call stay in
 * memory, unreferenced). GMC_E_BAD_HANDLE; GMC_E_NO_SPACE (res->bytes_needed
 * says how much); GMC_E_OVER_BUDGET when the client would go over its
 * budget in a segment group (gmc_client_video_memory below; res->bytes_to_trim
 * and res->budget_group say how much to evict where: when the allocations
 * are already placed, the call is refused before anything changes);
 * GMC_E_DEVICE_RESET when paging timed out (see gmc_device_recovery()).
 * res may be NULL.
 */
int gmc_make_resident(gmc_client *client, const gmc_handle *handles, unsigned n,
                      struct gmc_residency_result *res);
/* Drop one residency reference per handle. GMC_E_NOT_RESIDENT (nothing
 * changes) when the client holds none on one of them. */
int gmc_evict(gmc_client *client, const gmc_handle *handles, unsigned n);

/* ExplicitResidencyNotification: called once after an allocation is paged
 * in (resident = 1) and once before it is evicted (resident = 0). */
typedef void (*gmc_residency_fn)(void *user, gmc_handle handle, int resident);
/* NULL fn removes the callback. */
int gmc_client_set_residency_callback(gmc_client *client, gmc_residency_fn fn, void *user);

/* ------------------------------------------------------------- budgets */

/*
 * Video memory budgets (QueryVideoMemoryInfo / SetVideoMemoryReservation,
 * docs/budgets.md). The device's segments form two segment groups: LOCAL,
 * its memory segments, and NON_LOCAL, its aperture segments (system memory
 * the GPU reaches). Only segments flagged ApplicationTarget count: a
 * group's capacity is the bytes of its ApplicationTarget segments, and a
 * client's usage in a group is the placed bytes of the allocations it
 * references as resident or holds locked that sit in an ApplicationTarget
 * segment of that group (a shared allocation counts for every client that
 * references it, once in the device's usage).
 *
 * Two limits apply. The application budget (per device and group; default
 * the group's capacity) is what all clients together may use, minus what
 * the other clients reserved and do not use yet. A client budget (per
 * client and group; default none) limits one client. A call that would
 * raise a client's usage over either limit (gmc_make_resident, gmc_lock,
 * gmc_submit when they place an allocation) answers GMC_E_OVER_BUDGET and
 * takes no reference, lock or submission. Lowering a budget evicts nothing:
 * the client is over budget until it evicts.
 */
enum gmc_segment_group {
    GMC_SEGMENT_GROUP_LOCAL = 0,     /* memory segments (VRAM) */
    GMC_SEGMENT_GROUP_NON_LOCAL = 1  /* aperture segments */
};
#define GMC_SEGMENT_GROUPS 2u

/* DXGI_QUERY_VIDEO_MEMORY_INFO for one client and segment group. */
struct gmc_video_memory_info {
    uint64_t budget;                    /* the smaller of the client budget and the application budget */
    uint64_t current_usage;             /* bytes counted for the client (above) */
    uint64_t available_for_reservation; /* the most gmc_client_set_reservation accepts now */
    uint64_t current_reservation;       /* bytes the client reserved */
};
/* GMC_E_INVALID_ARG for a group that is not enum gmc_segment_group. */
int gmc_client_video_memory(const gmc_client *client, uint32_t group, struct gmc_video_memory_info *out);
/*
 * SetVideoMemoryReservation: guarantee the client `bytes` of the group; the
 * other clients' limit shrinks by what it reserved and does not use. At
 * most available_for_reservation: the smaller of its budget and the
 * application budget minus, for every other client, the larger of its
 * usage and its reservation. Above that GMC_E_RESERVATION, nothing
 * changes. 0 drops the reservation.
 */
int gmc_client_set_reservation(gmc_client *client, uint32_t group, uint64_t bytes);
/* The bytes to trim and the group of the client's last GMC_E_OVER_BUDGET,
 * from any call (gmc_make_resident also returns them in its result;
 * gmc_lock and gmc_submit only here); 0 and 0 before the first. */
int gmc_client_last_trim(const gmc_client *client, uint64_t *bytes, uint32_t *group);
/* The client budget; GMC_BUDGET_NONE removes it. GMC_E_RESERVATION (nothing
 * changes) when it is below the client's reservation. */
#define GMC_BUDGET_NONE UINT64_MAX
int gmc_client_set_budget(gmc_client *client, uint32_t group, uint64_t bytes);
/* The application budget of the device; GMC_BUDGET_NONE restores the
 * default (the group's capacity). GMC_E_RESERVATION (nothing changes) when
 * it is below the sum of the clients' reservations. */
int gmc_device_set_budget(gmc_device *dev, uint32_t group, uint64_t bytes);

/* One segment group of the device (gmc_device_stats). */
struct gmc_budget_stats {
    uint64_t capacity;     /* bytes of the group's ApplicationTarget segments */
    uint64_t budget;       /* the application budget */
    uint64_t usage;        /* bytes counted over all clients (a shared allocation once) */
    uint64_t reservation;  /* the clients' reservations, summed */
    uint64_t refusals;     /* calls answered GMC_E_OVER_BUDGET for this group */
};
/*
 * DirectFlip (DXGK_SEGMENTFLAGS.DirectFlip, seed 003): pin the allocation
 * for scan-out in a DirectFlip segment of its supported set. It is placed
 * there (moved there first, evicting unreferenced allocations as
 * gmc_make_resident() would), paged in, and pinned: never an eviction
 * victim, never moved (a lock or submission that would move it answers
 * GMC_E_PINNED; a Discard lock waits instead of renaming) until
 * gmc_alloc_unpin_direct_flip(). Pinning a pinned allocation again does
 * nothing. GMC_E_NOT_DIRECT_FLIP: no segment of its supported set is
 * DirectFlip. GMC_E_PINNED / GMC_E_LOCKED: it is pinned (primary, overlay,
 * capture) or locked outside every DirectFlip segment. GMC_E_NO_SPACE:
 * eviction cannot make room there.
 */
int gmc_alloc_pin_direct_flip(gmc_client *client, gmc_handle h);
/* Undo the pin (a primary, overlay or capture stays pinned by its kind).
 * GMC_E_BAD_STATE when it is not pinned for DirectFlip. */
int gmc_alloc_unpin_direct_flip(gmc_client *client, gmc_handle h);

/* ---------------------------------------------------------- submission */

/*
 * Work for the GPU: this controller's GPU-side engine is its DMA engine,
 * so a submission is a list of copies and fills between and over the
 * allocations it references, run in order. Every referenced allocation
 * must be resident for the submitting client (GMC_E_NOT_RESIDENT), and a
 * locked one must sit where the GPU can reach it without moving it:
 * a lock on the system copy is served by mapping that copy into an
 * aperture segment the allocation supports; if none can take it,
 * GMC_E_SUBMIT_LOCKED. SynchronousPaging allocations: paging waits for
 * them to go idle, and the submission waits for their paging.
 */
#define GMC_REF_WRITE (1u << 0) /* the submission writes the allocation */

struct gmc_submit_ref {
    gmc_handle handle;
    uint32_t flags; /* GMC_REF_* */
};

enum gmc_gpu_op_kind { GMC_GPU_COPY = 1, GMC_GPU_FILL = 2 };

struct gmc_gpu_op {
    uint32_t kind;       /* enum gmc_gpu_op_kind */
    uint32_t src, dst;   /* indices into refs (src: COPY only); dst needs GMC_REF_WRITE */
    uint64_t src_offset, dst_offset, size; /* bytes, inside the allocations; a COPY inside one
                                               allocation must not share bytes (GMC_E_OVERLAP) */
    uint32_t pattern;    /* FILL */
};

struct gmc_submit {
    const struct gmc_submit_ref *refs;
    unsigned nrefs;
    const struct gmc_gpu_op *ops;
    unsigned nops;
};

/* Submit; *fence (may be NULL) receives the submission's fence value.
 * GMC_E_OVER_BUDGET (nothing submitted) when an allocation it must move
 * would take the client over its budgets (gmc_client_last_trim). */
int gmc_submit(gmc_client *client, const struct gmc_submit *s, uint64_t *fence);
/* Wait for a fence of this device (paging or submission), at most
 * timeout_us of device time. GMC_E_TIMEOUT triggers the TDR path and
 * answers GMC_E_DEVICE_RESET. */
int gmc_fence_wait(gmc_device *dev, uint64_t fence, uint64_t timeout_us);
/* Last completed fence. */
uint64_t gmc_fence_completed(gmc_device *dev);

/* ------------------------------------------------ CPU access and locks */

/* D3DDDICB_LOCKFLAGS: GMC_LOCK_* and GMC_LOCK_FLAGS_MASK, generated into
 * gmc_flags.h (included by gmc_alloc.h). DonotWait answers GMC_E_STILL_DRAWING
 * while busy, DonotEvict GMC_E_NEEDS_EVICT if it must move, Discard renames
 * instead of waiting. */

enum gmc_lock_kind {
    GMC_LOCK_MAP_BAR = 1,    /* bytes of CPU-visible VRAM behind BAR1 */
    GMC_LOCK_MAP_SYSTEM = 2  /* the allocation's system copy */
};

/* Where a lock's pointer points. It does not move until unlock. */
struct gmc_lock_map {
    uint32_t kind;       /* enum gmc_lock_kind */
    uint64_t bar_offset; /* GMC_LOCK_MAP_BAR: BAR1 offset of byte 0 */
    void *ptr;           /* GMC_LOCK_MAP_SYSTEM: host pointer to byte 0 (NULL for BAR) */
    uint64_t size;       /* bytes mapped */
};

/*
 * Whether `client` may lock the allocation with `lock_flags`. Checked in
 * this order: the handle; unknown flags (GMC_E_INVALID_ARG); flags that
 * exclude each other (GMC_E_LOCK_FLAGS: ReadOnly with WriteOnly, ReadOnly
 * with Discard); CpuVisible (GMC_E_NOT_CPU_VISIBLE); Protected or
 * HardwareProtected (GMC_E_PROTECTED); a shared allocation is locked by its
 * creator only (GMC_E_NOT_CREATOR); a ReadOnly allocation refuses a lock
 * that may write (GMC_E_READ_ONLY). Changes nothing.
 */
int gmc_alloc_can_lock(const gmc_client *client, gmc_handle h, uint32_t lock_flags);

/* Whether `client` may write the allocation's content from the CPU:
 * gmc_alloc_can_lock(client, h, GMC_LOCK_WRITE_ONLY). */
int gmc_alloc_can_write(const gmc_client *client, gmc_handle h);

/*
 * pfnLockCb. After the checks of gmc_alloc_can_lock: an allocation already
 * locked answers GMC_E_ALREADY_LOCKED. A locked allocation counts toward
 * the locker's budgets: GMC_E_OVER_BUDGET (nothing moved, no lock) when it
 * would take it over them (gmc_client_last_trim). If the GPU still uses it: DonotWait
 * answers GMC_E_STILL_DRAWING, Discard renames it (fresh memory, content
 * undefined), otherwise the lock waits. The mapping is the system copy for
 * PermanentSysMem and ExistingSysMem allocations and for Swizzled ones (the
 * linear view; a UseAlternateVA primary uses its swizzling range onto the
 * BAR instead, docs/residency.md "Swizzled"), and the BAR1 window for
 * an allocation in CPU-visible VRAM; an allocation elsewhere is moved into
 * CPU-visible VRAM first (DonotEvict: GMC_E_NEEDS_EVICT instead), unless it
 * is pinned (a primary, overlay or capture, or pinned for DirectFlip):
 * then GMC_E_PINNED, and a Discard lock of a busy pinned allocation waits
 * instead of renaming it. A locked
 * allocation does not move until gmc_unlock(). A lock that may write marks
 * the content dirty.
 */
int gmc_lock(gmc_client *client, gmc_handle h, uint32_t lock_flags, struct gmc_lock_map *out);
/* pfnUnlockCb. GMC_E_NOT_LOCKED when it is not locked. */
int gmc_unlock(gmc_client *client, gmc_handle h);

/*
 * Read or write allocation bytes [off, off + len) through the CPU mapping
 * of the client's lock (GMC_E_NOT_LOCKED without one; a ReadOnly lock
 * refuses writes and a WriteOnly lock reads with GMC_E_PERMISSION).
 * off + len past the size is GMC_E_OUT_OF_BOUNDS; a bus error GMC_E_BUS (a
 * read then zeroes buf). After an argument error buf is untouched. On a
 * system mapping of a Cached allocation the access goes through the
 * modelled CPU cache (docs/residency.md, "CPU cache"): written bytes reach
 * the memory behind ptr when the library flushes them (before the GPU
 * reaches it, at the latest).
 */
int gmc_lock_read(gmc_client *client, gmc_handle h, uint64_t off, void *buf, size_t len);
int gmc_lock_write(gmc_client *client, gmc_handle h, uint64_t off, const void *buf, size_t len);

/*
 * Convenience: lock (ReadOnly / WriteOnly), access, unlock. The same
 * checks and errors as gmc_lock() and gmc_lock_read/write; an allocation
 * already locked by the client is accessed through that lock.
 */
int gmc_alloc_read(gmc_client *client, gmc_handle h, uint64_t off, void *buf, size_t len);
int gmc_alloc_write(gmc_client *client, gmc_handle h, uint64_t off, const void *buf, size_t len);

/* ------------------------------------------------------ power and reset */

enum gmc_power_state {
    GMC_POWER_D0 = 0,        /* working */
    GMC_POWER_STANDBY = 1,   /* S3: PreservedDuringStandby segments keep content */
    GMC_POWER_HIBERNATE = 2  /* S4 (and hybrid sleep): PreservedDuringHibernate keep it */
};

/* What a transition did to each allocation with content. */
struct gmc_power_report {
    uint64_t allocations_preserved; /* content left in a preserved segment */
    uint64_t allocations_saved;     /* content saved to system memory first */
    uint64_t allocations_lost;      /* content that could not be saved (reported, never silent) */
    uint64_t bytes_saved;
    uint64_t bytes_restored;
};

/*
 * Enter standby or hibernate: wait for the engine to go idle, save every
 * allocation in a segment the transition purges (the segment-flags truth
 * table, docs/residency.md) to its system copy, then power the controller
 * down (the model's VRAM content is scrambled for purged segments). Back
 * to D0 with gmc_device_resume(), which restores the saved content to
 * where it was. Other calls answer GMC_E_POWER_STATE while not in D0.
 */
int gmc_device_power(gmc_device *dev, enum gmc_power_state to, struct gmc_power_report *report);
int gmc_device_resume(gmc_device *dev, struct gmc_power_report *report);

/* After a TDR (a paging or submission fence that did not arrive). */
struct gmc_recovery_report {
    uint64_t resets;          /* TDRs since open */
    uint64_t recovered;       /* allocations whose content survived the last one */
    uint64_t lost;            /* allocations whose content was lost (state GMC_ALLOC_STATE_LOST) */
    uint64_t fence_completed; /* the last fence that arrived before the reset */
};
int gmc_device_recovery(const gmc_device *dev, struct gmc_recovery_report *out);

/* ---------------------------------------------------------- statistics */

/* The controller's performance counters (CNT_* registers, docs/registers.md):
 * what the hardware counted since the device was opened (a TDR's controller
 * reset zeroes the registers; the library keeps what they held). */
struct gmc_hw_counters {
    uint64_t valid;                      /* 1 once read (gmc_device_hw_counters) */
    uint64_t dma_rd_vram, dma_wr_vram;   /* bytes the DMA engine read from / wrote to VRAM */
    uint64_t dma_rd_sys, dma_wr_sys;     /* bytes it moved from / to system memory (bus address or MDL) */
    uint64_t dma_rd_aperture, dma_wr_aperture; /* bytes it moved through the GART aperture */
    uint64_t dma_packets, dma_faults;    /* packets completed (an INDIRECT once, plus its packets), faults */
    uint64_t dma_busy_cycles;            /* cycles the engine was not idle */
    uint64_t tlb_hits, tlb_misses;       /* GART translations from the TLB / from the page table */
    uint64_t dummy_hits;                 /* translations that landed on the dummy page */
    uint64_t aperture_rd_bytes, aperture_wr_bytes; /* CPU aperture (BAR1) traffic */
};

struct gmc_device_stats {
    uint64_t make_resident_calls, evict_calls, submits;
    uint64_t page_ins, evictions, discards;    /* discards: clean evictions, nothing copied */
    uint64_t bytes_paged_in, bytes_paged_out;  /* system -> GPU memory, GPU memory -> system */
    uint64_t bytes_filled;                     /* first page-in fills */
    uint64_t paging_ops, paging_buffers, multipass;
    uint64_t fences_issued, fences_completed;
    uint64_t faults, resets;
    uint64_t evictions_via_aperture;           /* evictions copied through an aperture mapping */
    uint64_t sync_waits;                       /* SynchronousPaging waits before a submission */
    uint64_t locks, lock_waits, renames;
    uint64_t cache_flushes;      /* Cached allocations: CPU cache flushed before the GPU reached the
                                    system copy through a path that is not cache-coherent */
    uint64_t cache_invalidates;  /* ... and invalidated before the CPU read it after such a GPU write */
    uint64_t cycles;                           /* device cycles so far (sim) */
    struct gmc_hw_counters hw;                 /* the last gmc_device_hw_counters() read */
    struct gmc_budget_stats budget[GMC_SEGMENT_GROUPS]; /* per enum gmc_segment_group */
};
int gmc_device_stats(const gmc_device *dev, struct gmc_device_stats *out);
/* Read the hardware performance counters (register reads: they take bus
 * cycles, which is why gmc_device_stats() does not read them itself), keep
 * them for gmc_device_stats().hw and copy them to `out` (may be NULL).
 * GMC_E_POWER_STATE outside D0; a register read's own status on failure
 * (the kept copy is then unchanged). */
int gmc_device_hw_counters(gmc_device *dev, struct gmc_hw_counters *out);

/* The serial link of a uart device (docs/uart-bridge.md): what went over
 * it and how often a damaged frame was recovered. */
struct gmc_link_stats {
    uint32_t baud;
    uint32_t bridge_version;   /* the bridge's protocol version (PING) */
    int32_t latency_timer;     /* FTDI latency timer: 1 set to 1 ms, 0 not an FTDI port, -1 not allowed */
    uint64_t bytes_tx, bytes_rx, frames_tx, frames_rx;
    uint64_t commands;         /* register, aperture, PING and DMA_ABORT commands */
    uint64_t retries;          /* commands and DMA read beats sent again */
    uint64_t timeouts;         /* commands without an answer in time */
    uint64_t resyncs;          /* PING resynchronisations */
    uint64_t bad_frames;       /* received frames with a bad CRC or length */
    uint64_t junk;             /* received bytes outside any frame */
    uint64_t stale;            /* replies that answered nothing outstanding, DMA requests the bridge did not have */
    uint64_t err_frames;       /* ERR frames received */
    uint64_t irq_frames;
    uint64_t dma_rd_bursts, dma_rd_beats, dma_wr_bursts, dma_wr_beats;
    uint64_t dma_refused;      /* bursts outside host memory: DECERR, nothing touched */
    uint64_t dma_broken;       /* write bursts with a lost beat: SLVERR, nothing touched */
    uint64_t probes;           /* quiet DMA bursts probed (last read beat or write response again) */
    /* protocol 3 */
    uint64_t req_asks;         /* DMA_REQ_AGAIN sent (a DMA request frame may have been damaged) */
    uint64_t req_recovered;    /* DMA bursts learnt from a request sent again */
    uint64_t wr_resends;       /* DMA_WR_ACK with RESEND: write beats sent again from the bridge's window */
    uint64_t wr_acks;          /* DMA_WR_ACK sent */
};
/* GMC_OK, or GMC_E_UNSUPPORTED when the device has no serial link. */
int gmc_device_link_stats(const gmc_device *dev, struct gmc_link_stats *out);

struct gmc_client_stats {
    uint64_t allocations;     /* handles held */
    uint64_t bytes_resident;  /* bytes of allocations this client references as resident */
    uint64_t bytes_committed; /* bytes of this client's allocations in GPU memory */
    uint64_t evictions;       /* of allocations this client created */
};
int gmc_client_stats(const gmc_client *client, struct gmc_client_stats *out);

/* --------------------------------------------------------------- rules */

/* The rule whose own status this is, or NULL for a general status. */
const struct gmc_rule *gmc_rule_for_status(int status);

#ifdef __cplusplus
}
#endif

#endif /* GMC_H */
