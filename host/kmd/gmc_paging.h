/*
 * gmc_paging.h - the paging-buffer protocol on the gmc DMA engine
 * (private to the host library).
 *
 * DOC: Overview
 *
 * Three layers, bottom up:
 *
 *   1. System memory the engine can reach (struct gmc_sysbuf): page-aligned
 *      host memory mapped at bus addresses through the backend's host_map,
 *      each buffer with an MDL (an array of 64-bit page bus addresses, in
 *      system memory too) so a TRANSFER or MAP_APERTURE can walk it. Buffers
 *      come from a pool that grows in chunks (one backend host region per
 *      chunk, not per buffer; a buffer larger than a chunk gets a chunk of
 *      its own), sub-allocated in pages with the range manager
 *      (gmc_range.h); existing user memory (ExistingSysMem) is wrapped in a
 *      region of its own.
 *
 *   2. gmc_build_paging_buffer(): DxgkDdiBuildPagingBuffer for this
 *      hardware. It encodes one operation (struct gmc_paging_args) into the
 *      free space of one fixed-size paging buffer (struct gmc_pbuf). When the
 *      buffer fills first it answers GMC_E_BUFFER_FULL ("insufficient DMA
 *      buffer") with args->multipass_offset recording the progress; the
 *      caller submits the partial buffer and calls again with a fresh buffer
 *      and the same args, as VidMm does with MultipassOffset. A TRANSFER, FILL
 *      or DISCARD is cut into packets of at most max_chunk bytes, so one
 *      large transfer spans several buffers.
 *
 *   3. The paging queue (struct gmc_paging): the command ring, a pool of
 *      fixed-size paging buffers, the fence page, the notify log and the
 *      dummy page (DUMMY_PAGE, where unmapped aperture pages point). Each
 *      queued operation is built into the current buffer, followed by a
 *      SIGNAL of its own paging fence value (a FENCE packet that writes the
 *      value to the fence page); full buffers are submitted through the ring
 *      as INDIRECT packets. The last packet of every buffer is kept for a
 *      SIGNAL: a buffer filled in the middle of an operation ends with a
 *      SIGNAL of an intermediate fence value, so every buffer's last packet
 *      is a SIGNAL and a buffer is reused once that fence has completed. Waiting uses the IRQ (DMA_FENCE) or polling, with
 *      a timeout in device cycles. A fence that does not arrive in time, or an
 *      engine fault, is reported to the caller, which recovers with
 *      gmc_paging_reset() (the TDR path).
 *
 * Every function returns GMC_OK or a gmc_status code and checks its
 * arguments before it writes anything.
 */
#ifndef GMC_PAGING_H
#define GMC_PAGING_H

#include <stddef.h>
#include <stdint.h>

#include "gmc_kmd.h"
#include "gmc_pool.h"

/* ------------------------------------------------------ system memory */

struct gmc_paging;

/* struct gmc_sysbuf and the pool behind these: gmc_pool.h. They allocate
 * from the paging queue's pool (the one the engine's own ring, buffers and
 * fence page come from). */

/* A zeroed buffer of `bytes` (rounded up to pages) from the pool.
 * GMC_E_NO_MEMORY when the host or the bus address space is exhausted. */
int gmc_sysmem_alloc(struct gmc_paging *pg, uint64_t bytes, struct gmc_sysbuf *out);
/* Wrap existing page-aligned memory (ExistingSysMem) as a buffer: the
 * engine reads and writes `ptr` directly. */
int gmc_sysmem_wrap(struct gmc_paging *pg, void *ptr, uint64_t bytes, struct gmc_sysbuf *out);
/* Release a buffer (wrapped memory is unmapped, not freed). NULL or a
 * zeroed struct is ignored. */
void gmc_sysmem_free(struct gmc_paging *pg, struct gmc_sysbuf *b);

/* ------------------------------------------- DxgkDdiBuildPagingBuffer */

/* DXGK_BUILDPAGINGBUFFER_OPERATION, as this hardware supports it. */
enum gmc_paging_op {
    GMC_PAGING_TRANSFER = 1,
    GMC_PAGING_FILL,
    GMC_PAGING_DISCARD_CONTENT,
    GMC_PAGING_READ_PHYSICAL,
    GMC_PAGING_WRITE_PHYSICAL,
    GMC_PAGING_MAP_APERTURE_SEGMENT,
    GMC_PAGING_UNMAP_APERTURE_SEGMENT,
    GMC_PAGING_FLUSH_TLB,
    GMC_PAGING_NOTIFY_RESIDENCY,
    GMC_PAGING_SIGNAL
};

/* Transfer.Flags. VidMm splits a large move into sub-transfers and marks the
 * first and the last. This engine executes packets in order and a FENCE
 * waits for every earlier write, and it has no cache to flush or
 * invalidate around a move (MAP/UNMAP_APERTURE drop their own TLB entries),
 * so neither flag adds a packet: both are accepted and change nothing in
 * the encoding. Swizzle and Unswizzle (DXGK_TRANSFERFLAGS) move a Swizzled
 * allocation between the linear layout (system memory, apertures) and the
 * swizzled one of memory segments (GMC_SWIZZLE_*): one packet per block,
 * each to its place in the other layout; they need a page-aligned
 * TransferOffset and a page-multiple size and exclude each other. Other
 * bits are GMC_E_INVALID_ARG. */
#define GMC_PAGING_TRANSFER_START     (1u << 0) /* first sub-transfer of a move */
#define GMC_PAGING_TRANSFER_END       (1u << 1) /* last sub-transfer of a move */
#define GMC_PAGING_TRANSFER_SWIZZLE   (1u << 2) /* source linear, destination swizzled */
#define GMC_PAGING_TRANSFER_UNSWIZZLE (1u << 3) /* source swizzled, destination linear */
#define GMC_SWIZZLE_BLOCK_BYTES (1u << GMC_SWIZZLE_BLOCK_SHIFT)

/* Where byte `off` (from the allocation's page-aligned start) of a Swizzled
 * allocation's linear content lies in its swizzled layout. */
uint64_t gmc_swizzle_offset(uint64_t off);

/* One side of a TRANSFER: a segment address (segment_id != 0) or an MDL. */
struct gmc_paging_side {
    uint32_t segment_id;      /* 1-based segment; 0: the side is mdl */
    uint64_t segment_address; /* GPU address of the allocation's first byte */
    const struct gmc_sysbuf *mdl; /* MDL side: the buffer whose MDL is walked */
};

struct gmc_paging_args {
    enum gmc_paging_op op;
    /* In/out: bytes (TRANSFER, FILL, DISCARD) or pages (MAP/UNMAP) already
     * built by earlier passes. 0 on the first call. */
    uint64_t multipass_offset;
    union {
        struct {
            uint64_t size;            /* TransferSize, bytes >= 1 */
            uint64_t transfer_offset; /* TransferOffset: from the allocation's start */
            uint64_t mdl_offset;      /* MdlOffset: pages into each MDL side */
            uint32_t flags;           /* GMC_PAGING_TRANSFER_* */
            struct gmc_paging_side src, dst;
        } transfer;
        struct {
            uint64_t gpu_address;     /* VRAM; FILL/DISCARD never target the aperture */
            uint64_t size;            /* bytes >= 1 */
            uint32_t pattern;         /* FILL: 32-bit pattern */
            int poison;               /* DISCARD_CONTENT: overwrite with 0xDEADBEEF */
        } fill;                       /* FILL and DISCARD_CONTENT */
        struct {
            uint64_t address;         /* GPU address (gpu) or bus address */
            int gpu;
            unsigned size;            /* 1..8, not crossing 8 bytes */
            uint64_t value;           /* WRITE_PHYSICAL */
        } physical;                   /* READ_PHYSICAL and WRITE_PHYSICAL */
        struct {
            uint64_t gpu_address;     /* aperture address, page aligned */
            uint64_t pages;           /* >= 1 */
            const struct gmc_sysbuf *mdl; /* MAP: the pages mapped */
            uint64_t mdl_offset;      /* MAP: MdlOffset, first MDL entry */
            int snooped;              /* MAP: cache-coherent */
            int readable, writeable;  /* MAP: PTE permissions */
        } map;                        /* MAP_ and UNMAP_APERTURE_SEGMENT */
        struct {
            uint64_t cookie;          /* delivered to the notify callback */
            int resident;             /* 1 after commit, 0 before evict */
        } notify;
        struct {
            uint64_t value;           /* SIGNAL: paging fence value */
            int irq;
        } signal;
    } u;
};

/* A fixed-size paging buffer: packets are written at used. */
struct gmc_pbuf {
    uint8_t *host;
    uint64_t bus;
    uint32_t size; /* bytes, a multiple of 32 */
    uint32_t used; /* bytes written */
};

/* What the builder needs from the adapter and the queue. */
struct gmc_paging_target {
    uint64_t vram_size;       /* <= 2^32 */
    uint64_t aperture_base, aperture_pages; /* base page aligned, end <= 2^32 */
    uint64_t max_chunk;       /* largest TRANSFER/FILL/POISON packet, bytes, 1..2^32-1;
                                 MAP/UNMAP packets cover max_chunk / 8 pages (PTE bytes) */
    uint64_t fence_bus;       /* bus address SIGNAL writes the fence value to (8-aligned) */
    uint64_t notify_bus;      /* bus address of the notify slot NOTIFY writes (8-aligned) */
    uint64_t notify_seq;      /* NOTIFY writes the word (notify_seq << 1) | resident */
};

/*
 * Encode one operation into buf. GMC_OK when it is complete (multipass
 * offset reset to 0); GMC_E_BUFFER_FULL when the buffer filled first (the
 * buffer holds a valid prefix and args->multipass_offset the progress; a
 * buffer with no free packet answers it at once, progress unchanged);
 * GMC_E_INVALID_ARG for arguments the hardware cannot express (nothing is
 * written), GMC_E_NULL_POINTER for a NULL t, buf, buf->host or args. A buffer
 * too small for a single packet is GMC_E_INVALID_ARG. Packets per operation
 * (docs/paging.md): TRANSFER, FILL and DISCARD with POISON one per max_chunk
 * bytes; DISCARD without POISON one per 4 GiB - 4 KiB (it moves no data);
 * MAP/UNMAP one per max_chunk / 8 pages; every other operation one packet.
 */
int gmc_build_paging_buffer(const struct gmc_paging_target *t, struct gmc_pbuf *buf,
                            struct gmc_paging_args *args);
/* The argument checks of gmc_build_paging_buffer() alone (no buffer). */
int gmc_paging_args_check(const struct gmc_paging_target *t, const struct gmc_paging_args *args);

/* ------------------------------------------------------- paging queue */

struct gmc_paging_config {
    uint32_t buffer_bytes;  /* each paging buffer; a multiple of 32, >= 64. Default 4096 */
    uint32_t buffers;       /* paging buffers in the pool, >= 2. Default 8 */
    uint32_t ring_log2;     /* ring bytes = 2^ring_log2, 12..20. Default 12 */
    uint64_t max_chunk;     /* bytes per TRANSFER/FILL packet, a page multiple. Default 64 KiB */
    uint64_t pool_chunk;    /* system memory pool growth, bytes. Default 4 MiB */
    uint64_t bus_base;      /* first bus address the library uses, page aligned. Default 1 << 32 */
    int use_irq;            /* wait on the IRQ line (1) or poll the fence page (0). Default 1 */
    uint64_t queue_timeout; /* device cycles gmc_paging_queue() waits for a free paging
                               buffer or notify slot before GMC_E_TIMEOUT. Default 2^24 */
};
void gmc_paging_config_default(struct gmc_paging_config *cfg);

/* Called, in fence order and once each, for each NOTIFY_RESIDENCY whose fence
 * completed (from gmc_paging_wait/idle/queue/reset). It must not call back
 * into the queue (such calls answer GMC_E_BUSY). */
typedef void (*gmc_paging_notify_fn)(void *user, uint64_t cookie, int resident);

/* Map the ring, buffers, fence page, notify log and dummy page; program
 * DUMMY_PAGE, IRQ_MASK (DMA_FENCE and DMA_FAULT with use_irq, cleared
 * without; other sources untouched) and the ring, and enable the engine.
 * cfg NULL: the defaults. GMC_E_UNSUPPORTED when CAPS has no DMA engine or
 * the backend cannot wait. buffers must leave a free ring slot
 * (buffers < 2^ring_log2 / 32 - 1). */
int gmc_paging_init(struct gmc_kmd *kmd, const struct gmc_adapter_info *ai,
                    const struct gmc_paging_config *cfg, struct gmc_paging **out);
/* Disable the engine and release everything (every gmc_sysbuf included). */
void gmc_paging_fini(struct gmc_paging *pg);
void gmc_paging_set_notify(struct gmc_paging *pg, gmc_paging_notify_fn fn, void *user);

/*
 * Queue one operation: build it (multipass over as many buffers as it
 * needs, submitting each full one) and follow it with a SIGNAL of a new
 * paging fence value, returned in *fence (may be NULL). The op is not
 * necessarily submitted yet: gmc_paging_flush() or a wait submits.
 * args->op SIGNAL is refused (the queue signals by itself), and so is a
 * nonzero multipass_offset; args is not modified. The arguments are checked
 * in full first (GMC_E_INVALID_ARG: nothing queued). Waiting for a free
 * buffer or notify slot may answer GMC_E_TIMEOUT or GMC_E_FAULT: the op may
 * then be partly submitted, and the caller resets (gmc_paging_reset).
 */
int gmc_paging_queue(struct gmc_paging *pg, const struct gmc_paging_args *args, uint64_t *fence);
/* Submit the current partial buffer, if any. */
int gmc_paging_flush(struct gmc_paging *pg);
/*
 * Wait until paging fence `fence` completes (flushing first), at most
 * timeout_cycles device cycles. GMC_OK; GMC_E_TIMEOUT (the TDR case: the
 * caller resets); GMC_E_FAULT (the engine stopped on a fault, see
 * gmc_paging_fault()); GMC_E_INVALID_ARG for a fence never issued.
 * Delivers pending notifications.
 */
int gmc_paging_wait(struct gmc_paging *pg, uint64_t fence, uint64_t timeout_cycles);
/* Wait for everything queued so far. */
int gmc_paging_idle(struct gmc_paging *pg, uint64_t timeout_cycles);
/* Last completed paging fence (reads the fence page; no waiting). */
uint64_t gmc_paging_completed(struct gmc_paging *pg);
/* Last fence value handed out. */
uint64_t gmc_paging_last_issued(const struct gmc_paging *pg);
/* The result of the last completed READ_PHYSICAL (DMA_READ_RESULT). */
int gmc_paging_read_result(struct gmc_paging *pg, uint64_t *value);

struct gmc_paging_fault {
    uint32_t code;      /* GMC_DMA_FAULT_* */
    int indirect;       /* in a paging buffer */
    uint64_t packet;    /* bus address of the packet */
    uint64_t address;   /* faulting address */
};
/* The last fault a wait met (kept across gmc_paging_reset until the next
 * one), else the engine's current state (code GMC_DMA_FAULT_NONE when it is
 * not faulted). */
int gmc_paging_fault(struct gmc_paging *pg, struct gmc_paging_fault *out);

/*
 * TDR: abort the engine (DMA_CMD.RESET), drop every queued and submitted
 * buffer, and restart the ring. Fences up to *completed (the last one that
 * arrived) are done; later ones never will be, and are considered
 * completed from now on so waits do not hang. Pending notifications whose
 * NOTIFY packet the engine reached (its slot holds its word) are delivered;
 * the others are dropped. VRAM and the page table are untouched by the
 * engine reset; system buffers stay allocated.
 */
int gmc_paging_reset(struct gmc_paging *pg, uint64_t *completed);

/* After the controller was reset (power-up): program the ring, IRQ mask
 * and dummy page again. Meant for when nothing is outstanding; work that was
 * submitted and had not completed is retired as gmc_paging_reset() does
 * (its fences count as completed, unreached notifications are dropped),
 * and the buffer being filled, never submitted, stays and runs later. */
int gmc_paging_restart(struct gmc_paging *pg);
/* The VRAM range of the GART page table: PT_BASE and aperture_pages * 8
 * bytes rounded up to whole pages. */
int gmc_paging_pt_range(struct gmc_paging *pg, uint64_t *base, uint64_t *size);

struct gmc_paging_stats {
    uint64_t ops;            /* operations queued */
    uint64_t buffers;        /* paging buffers submitted */
    uint64_t multipass;      /* GMC_E_BUFFER_FULL continuations */
    uint64_t packets;        /* packets built */
    uint64_t waits;          /* gmc_paging_wait/idle calls and internal waits */
    uint64_t irq_waits;      /* wake-ups by the IRQ line */
    uint64_t timeouts, faults, resets;
    uint64_t notifies;       /* notifications delivered */
    uint64_t build_ns;       /* host time spent building and submitting */
};
void gmc_paging_get_stats(const struct gmc_paging *pg, struct gmc_paging_stats *out);

#endif /* GMC_PAGING_H */
