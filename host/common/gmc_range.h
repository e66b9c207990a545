/*
 * gmc_range.h - per-segment range allocator ("placement"), internal to the
 * host library. Not a public header.
 *
 * A manager hands out contiguous ranges [start, start + size) of one 64-bit
 * address range (a segment). The design follows Linux drm_mm: nodes are
 * embedded by the caller, each node also carries the bookkeeping of the hole
 * that follows it, and the library never allocates host memory. See
 * gmc_range.c (DOC: Overview) and docs/placement.md for the policy.
 *
 * Struct layouts are visible so callers can embed them; treat every field as
 * private except gmc_range_node.start and .size, which are read-only and valid
 * while the node is allocated (and 0 otherwise).
 */
#ifndef GMC_RANGE_H
#define GMC_RANGE_H

#include <stdbool.h>
#include <stdint.h>

/* Status codes. Internal; the host library maps them to its own status. */
enum gmc_range_status {
	GMC_RANGE_OK = 0,
	GMC_RANGE_EINVAL = -1,  /* invalid argument (NULL, zero size, bad mode, node in use, uninitialised manager) */
	GMC_RANGE_ENOSPC = -2,  /* no hole fits the request */
	GMC_RANGE_EALIGN = -3,  /* alignment is not 0 or a power of two */
	GMC_RANGE_EWRAP = -4,   /* start + size would pass 2^64 (init, reserve) */
	GMC_RANGE_ERANGE = -5,  /* range restriction (or reserved range) invalid / outside the manager */
	GMC_RANGE_EBUSY = -6,   /* reserve: address range occupied; fini: nodes still allocated */
	GMC_RANGE_ENOENT = -7,  /* node is not allocated in this manager */
};

/* Placement modes; see docs/placement.md. */
enum gmc_range_mode {
	GMC_RANGE_BEST = 0, /* smallest hole that fits; lowest such hole; bottom of the hole */
	GMC_RANGE_LOW = 1,  /* bottom-up: lowest address that fits */
	GMC_RANGE_HIGH = 2, /* top-down: highest address that fits (top end of the hole) */
};

/* Intrusive AVL link (private). */
struct gmc_range_link {
	struct gmc_range_link *left, *right, *parent;
	uint32_t height; /* 1 for a leaf; 0 when not in a tree */
};

/*
 * One allocation. Zero-initialise before first use ({0}); after a successful
 * gmc_range_remove() it is zeroed again and may be reused.
 */
struct gmc_range_node {
	/*
	 * private. Both trees order holes by the owner's start (the same order
	 * as by hole start, holes do not overlap), and the fields are laid out
	 * so that one step in either tree reads a short span: size_link to
	 * start for the size tree, max_hole to addr_link for the address tree.
	 */
	struct gmc_range_link size_link;   /* hole tree keyed by (hole_size, start) */
	uint64_t max_hole;                 /* max hole_size in this node's addr-tree subtree */
	uint64_t hole_size;                /* free bytes right after this node */
	uint64_t start; /* first address; read-only */
	struct gmc_range_link addr_link;   /* hole tree keyed by start, augmented by max_hole */
	uint64_t size;  /* bytes; read-only */
	/* private */
	struct gmc_range_mgr *mgr;         /* owner while allocated, else NULL */
	struct gmc_range_node *prev, *next; /* address-ordered ring through mgr->head */
};

/* The manager. Caller-provided storage; set up by gmc_range_init(). */
struct gmc_range_mgr {
	uint64_t start; /* first address */
	uint64_t last;  /* last address (inclusive), so a range may end at 2^64 */
	/* private */
	struct gmc_range_node head;        /* zero-size sentinel at start; owns the leading hole */
	struct gmc_range_link *size_root;
	struct gmc_range_link *addr_root;
	uint64_t node_count;
	uint64_t hole_count;
	uint64_t free_bytes;
	bool size_on; /* size tree built (first BEST request) */
	bool addr_on; /* address tree built (first LOW/HIGH, restricted BEST or reserve) */
};

struct gmc_range_hole {
	uint64_t start;
	uint64_t size;
};

/* Cursor for gmc_range_hole_next(); zero-initialise to start from the lowest hole. */
struct gmc_range_hole_iter {
	const struct gmc_range_node *owner; /* private */
	bool done;                          /* private */
};

struct gmc_range_stats {
	uint64_t start;
	uint64_t size; /* manager size in bytes (may be up to 2^64 - start) */
	uint64_t node_count;
	uint64_t hole_count;
	uint64_t free_bytes;
	uint64_t largest_hole;
};

/*
 * Set up a manager over [start, start + size). size >= 1 and start + size
 * <= 2^64 (so a segment ending exactly at 2^64 is allowed). On failure *mgr
 * is zeroed (every other call then answers GMC_RANGE_EINVAL).
 */
int gmc_range_init(struct gmc_range_mgr *mgr, uint64_t start, uint64_t size);

/* Tear down an empty manager (zeroes it). GMC_RANGE_EBUSY if nodes remain. */
int gmc_range_fini(struct gmc_range_mgr *mgr);

/*
 * Allocate size bytes aligned to alignment (0 or 1 = none, else a power of
 * two up to 2^63; alignment is of the absolute address) using mode.
 * Equivalent to gmc_range_insert_in_range(mgr, node, size, alignment, mode, 0, 0).
 */
int gmc_range_insert(struct gmc_range_mgr *mgr, struct gmc_range_node *node,
		     uint64_t size, uint64_t alignment, enum gmc_range_mode mode);

/*
 * As gmc_range_insert() but the node must lie inside [range_start, range_end).
 * range_end is taken modulo 2^64: 0 means "up to 2^64", so (0, 0) is no
 * restriction. The restriction is clipped to the manager; GMC_RANGE_ERANGE if
 * it is empty or does not intersect the manager.
 */
int gmc_range_insert_in_range(struct gmc_range_mgr *mgr, struct gmc_range_node *node,
			      uint64_t size, uint64_t alignment, enum gmc_range_mode mode,
			      uint64_t range_start, uint64_t range_end);

/*
 * Allocate exactly [start, start + size) (like drm_mm_reserve_node).
 * GMC_RANGE_EWRAP if start + size > 2^64, GMC_RANGE_ERANGE if not inside the
 * manager, GMC_RANGE_EBUSY if any byte of it is allocated.
 */
int gmc_range_reserve(struct gmc_range_mgr *mgr, struct gmc_range_node *node,
		      uint64_t start, uint64_t size);

/* Free a node; adjacent holes merge. GMC_RANGE_ENOENT if not allocated in mgr. */
int gmc_range_remove(struct gmc_range_mgr *mgr, struct gmc_range_node *node);

/* True if node is allocated in mgr. */
bool gmc_range_node_in(const struct gmc_range_mgr *mgr, const struct gmc_range_node *node);

/* Address-ordered node iteration; NULL at the end or on a bad argument. */
struct gmc_range_node *gmc_range_node_first(const struct gmc_range_mgr *mgr);
struct gmc_range_node *gmc_range_node_next(const struct gmc_range_mgr *mgr,
					   const struct gmc_range_node *node);

/*
 * Address-ordered hole iteration: fills *hole with the next hole and returns
 * true, or returns false (and zeroes *hole) at the end or on a bad argument.
 */
bool gmc_range_hole_next(const struct gmc_range_mgr *mgr, struct gmc_range_hole_iter *it,
			 struct gmc_range_hole *hole);

/* Counters, O(1). On a bad argument *st is zeroed and GMC_RANGE_EINVAL returned. */
int gmc_range_get_stats(const struct gmc_range_mgr *mgr, struct gmc_range_stats *st);

/* Static name of a status code ("GMC_RANGE_ENOSPC", ...); never NULL. */
const char *gmc_range_strerror(int code);

#endif /* GMC_RANGE_H */
