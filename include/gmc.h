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
 *                              trace=FILE FST waveform of the whole run
 *                              segs=N     strap N (0..4) segment descriptors
 *                              segK=BASE/SIZE/FLAGS[/CPU_OFFSET[/BANKS]]
 *                                         strap descriptor K (1..4)
 *   pci:DOMAIN:BUS:DEV.FN      hex, e.g. pci:0000:01:00.0 (DEV <= 1f, FN <= 7)
 *   uart:/PATH@BAUD            e.g. uart:/dev/ttyUSB1@3000000
 * Numbers are decimal or 0x-prefixed hex.
 */
int gmc_device_string_check(const char *str, size_t *err_pos);

/*
 * Open a device: parse the string, start the backend, start the driver
 * (check ID and VERSION, read the segment descriptors from the registers)
 * and validate the descriptors against the DXGK_SEGMENTFLAGS rules. A
 * well-formed pci or uart string answers GMC_E_BACKEND_UNAVAILABLE. A wrong
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
};
int gmc_device_query(const gmc_device *dev, struct gmc_device_info *out);

struct gmc_segment_info {
    struct gmc_segment_desc desc; /* as the hardware describes it */
    uint64_t used;                /* bytes placed */
    uint64_t free;                /* bytes not placed */
    uint64_t largest_free;        /* largest free contiguous range */
    uint64_t allocations;         /* allocations placed here */
    uint64_t pinned_start;        /* offset of the overlay/capture region (last 20 %) */
};
/* id is 1-based; GMC_E_NOT_FOUND for an id the device does not have. */
int gmc_segment_query(const gmc_device *dev, unsigned id, struct gmc_segment_info *out);

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
 * (gmc_rules_check_alloc with the device's segments), place it
 * (docs/placement.md, "Policy"), zero it when kmt_flags has
 * GMC_KMT_ZEROED, and return the client's handle. GMC_E_NO_SPACE when no
 * supported segment has room. With GMC_KMT_CREATE_SHARED (and not
 * GMC_KMT_NT_SECURITY_SHARING) the allocation also gets a global share
 * handle (gmc_alloc_info.share_handle).
 */
int gmc_alloc_create(gmc_client *client, const struct gmc_alloc_desc *desc, gmc_handle *out);

/* Close the client's handle; the allocation goes with its last handle. */
int gmc_alloc_destroy(gmc_client *client, gmc_handle h);

#define GMC_ALLOC_STATE_CREATOR       (1u << 0) /* the asking client created it */
#define GMC_ALLOC_STATE_ZERO_PENDING  (1u << 1) /* Zeroed, zero-filled on first page-in */
#define GMC_ALLOC_STATE_PINNED        (1u << 2) /* primary, overlay or capture */
#define GMC_ALLOC_STATE_CPU_REACHABLE (1u << 3) /* in a CPU-visible memory segment */
#define GMC_ALLOC_STATE_SHARED        (1u << 4) /* CreateShared */

struct gmc_alloc_info {
    uint64_t size;          /* bytes: Size (PitchAlignedSize in a PitchAlignment segment), page-rounded */
    uint64_t placed_size;   /* bytes reserved in the segment (64 KiB-rounded in Use64KBPages segments) */
    uint32_t segment;       /* 1-based segment id */
    uint64_t offset;        /* from the segment base */
    uint64_t gpu_address;   /* segment base + offset */
    uint64_t alignment;     /* effective alignment of gpu_address */
    uint32_t flags;         /* DXGK_ALLOCATIONINFOFLAGS, as created */
    uint32_t kmt_flags;     /* D3DKMT_CREATEALLOCATIONFLAGS, as created */
    uint32_t info2_flags;   /* D3DDDI_ALLOCATIONINFO2.Flags, as created */
    uint32_t priority;      /* effective priority (the UMD's with OverridePriority) */
    uint32_t state;         /* GMC_ALLOC_STATE_* */
    uint32_t open_count;    /* handles open on it, over all clients */
    gmc_share_handle share_handle; /* global share handle, or GMC_HANDLE_NONE */
};
int gmc_alloc_query(const gmc_client *client, gmc_handle h, struct gmc_alloc_info *out);

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

/* ------------------------------------------------ CPU access and locks */

#define GMC_LOCK_READ_ONLY  (1u << 0) /* D3DDDICB_LOCKFLAGS.ReadOnly */
#define GMC_LOCK_WRITE_ONLY (1u << 1) /* D3DDDICB_LOCKFLAGS.WriteOnly */
#define GMC_LOCK_FLAGS_MASK (GMC_LOCK_READ_ONLY | GMC_LOCK_WRITE_ONLY)

/*
 * Whether `client` may lock the allocation with `lock_flags` (0: read and
 * write). Checked in this order: the handle; the flags (both bits:
 * GMC_E_INVALID_ARG); CpuVisible (GMC_E_NOT_CPU_VISIBLE); Protected or
 * HardwareProtected (GMC_E_PROTECTED); a shared allocation is locked by its
 * creator only (GMC_E_NOT_CREATOR); a ReadOnly allocation refuses a lock
 * that may write (GMC_E_READ_ONLY). Changes nothing.
 */
int gmc_alloc_can_lock(const gmc_client *client, gmc_handle h, uint32_t lock_flags);

/* Whether `client` may write the allocation's content from the CPU:
 * gmc_alloc_can_lock(client, h, GMC_LOCK_WRITE_ONLY). */
int gmc_alloc_can_write(const gmc_client *client, gmc_handle h);

/*
 * Read or write allocation bytes [off, off + len) from the CPU, through the
 * CPU aperture (BAR1 offset = segment cpu_offset + allocation offset + off).
 * Needs the lock permission of the same direction and an allocation in a
 * CPU-visible memory segment (else GMC_E_NOT_CPU_VISIBLE). off + len past
 * gmc_alloc_info.size is GMC_E_OUT_OF_BOUNDS. A bus error is GMC_E_BUS (a
 * read then zeroes buf); after an argument or permission error buf is
 * untouched.
 */
int gmc_alloc_read(const gmc_client *client, gmc_handle h, uint64_t off, void *buf, size_t len);
int gmc_alloc_write(const gmc_client *client, gmc_handle h, uint64_t off, const void *buf,
                    size_t len);

/* --------------------------------------------------------------- rules */

/* The rule whose own status this is, or NULL for a general status. */
const struct gmc_rule *gmc_rule_for_status(int status);

#ifdef __cplusplus
}
#endif

#endif /* GMC_H */
