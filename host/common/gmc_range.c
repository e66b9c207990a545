/*
 * gmc_range.c - per-segment range allocator ("placement").
 *
 * DOC: Overview
 *
 * A range manager hands out contiguous, non-overlapping ranges of one
 * 64-bit address range [start, start + size), where start + size may be
 * exactly 2^64. It is what the video-memory manager uses to place
 * allocations inside a segment, modelled on Linux drm_mm: the caller embeds a
 * struct gmc_range_node in its own object, and the node also stores the hole
 * (free range) that follows it, so the library never allocates host memory;
 * the cost is sizeof(struct gmc_range_node) per live allocation plus one
 * struct gmc_range_mgr per segment.
 *
 * Holes are indexed twice, in two AVL trees written for this file: one keyed
 * by (hole size, owner start) for best fit, one keyed by owner start (the
 * same order as hole start) and augmented with the largest hole in each
 * subtree for lowest/highest-address fit. Each tree is built the first time
 * a request needs it (the size tree for BEST, the address tree for LOW,
 * HIGH, restricted BEST and reserve; O(n log n) once, from the node ring)
 * and kept up to date from then on, so a manager used in one mode pays for
 * one tree. Cost, n = number of holes: reserve, remove and the update after
 * a search are O(log n); a LOW/HIGH search is O((1 + k) log n) and an
 * unrestricted BEST search O(log n + k), where k counts holes that are big
 * enough by size but fail after alignment or clipping (k = 0 without
 * alignment and restriction; docs/placement.md has the exact bounds).
 * Iteration over nodes and holes in address order is O(1) amortised per
 * step with the address tree, and walks the node ring (O(1) per node)
 * without it. Host memory: 120 bytes per node (LP64), 184 per manager.
 * Every node is one contiguous range, so AccessedPhysically allocations
 * need nothing special.
 *
 * Results depend only on the sequence of calls (no randomness, no address
 * dependence on host pointers), so placement is deterministic.
 *
 * Locking: none. The caller serialises all calls on one manager and its
 * nodes. Managers are independent of each other. The library never prints.
 */
#include "gmc_range.h"

#include <stddef.h>
#include <string.h>

/* ------------------------------------------------------------ AVL trees */

/*
 * The tree primitives take the augmentation as a function pointer; inlining
 * them into every caller makes each copy specific to one tree (the size tree
 * has none), so the pointer test and the indirect call fold away.
 */
#define TREE_INLINE static inline __attribute__((always_inline))

/* Recompute a node's augmentation from its children; true if it changed. */
typedef bool (*gmc_range_aug_fn)(struct gmc_range_link *l);

#define SIZE_NODE(l) \
	((struct gmc_range_node *)((char *)(l) - offsetof(struct gmc_range_node, size_link)))
#define ADDR_NODE(l) \
	((struct gmc_range_node *)((char *)(l) - offsetof(struct gmc_range_node, addr_link)))

static uint32_t link_height(const struct gmc_range_link *l)
{
	return l ? l->height : 0;
}

TREE_INLINE void link_fix(struct gmc_range_link *n, gmc_range_aug_fn aug)
{
	uint32_t hl = link_height(n->left), hr = link_height(n->right);

	n->height = 1 + (hl > hr ? hl : hr);
	if (aug)
		aug(n);
}

static void replace_child(struct gmc_range_link **root, struct gmc_range_link *parent,
			  struct gmc_range_link *old, struct gmc_range_link *new_child)
{
	if (!parent)
		*root = new_child;
	else if (parent->left == old)
		parent->left = new_child;
	else
		parent->right = new_child;
}

TREE_INLINE struct gmc_range_link *rotate_left(struct gmc_range_link **root, struct gmc_range_link *x,
					  gmc_range_aug_fn aug)
{
	struct gmc_range_link *y = x->right;

	x->right = y->left;
	if (y->left)
		y->left->parent = x;
	y->parent = x->parent;
	replace_child(root, x->parent, x, y);
	y->left = x;
	x->parent = y;
	link_fix(x, aug);
	link_fix(y, aug);
	return y;
}

TREE_INLINE struct gmc_range_link *rotate_right(struct gmc_range_link **root, struct gmc_range_link *x,
					   gmc_range_aug_fn aug)
{
	struct gmc_range_link *y = x->left;

	x->left = y->right;
	if (y->right)
		y->right->parent = x;
	y->parent = x->parent;
	replace_child(root, x->parent, x, y);
	y->right = x;
	x->parent = y;
	link_fix(x, aug);
	link_fix(y, aug);
	return y;
}

/*
 * Recompute heights and augmentation from n towards the root, rotating where
 * the AVL balance is violated. Stops at the first node whose height and
 * augmentation came out unchanged without a rotation (its ancestors only
 * depend on those), but never before must has been passed: O(log n).
 */
TREE_INLINE void rebalance_up(struct gmc_range_link **root, struct gmc_range_link *n,
			 gmc_range_aug_fn aug, struct gmc_range_link *must)
{
	while (n) {
		uint32_t old_h = n->height, hl = link_height(n->left), hr = link_height(n->right);
		bool forced = must != NULL, changed = false;

		if (n == must)
			must = NULL;
		n->height = 1 + (hl > hr ? hl : hr);
		if (aug)
			changed = aug(n);
		if (n->height != old_h)
			changed = true;
		if (hl > hr + 1) {
			if (link_height(n->left->left) < link_height(n->left->right))
				rotate_left(root, n->left, aug);
			n = rotate_right(root, n, aug);
			changed = true;
		} else if (hr > hl + 1) {
			if (link_height(n->right->right) < link_height(n->right->left))
				rotate_right(root, n->right, aug);
			n = rotate_left(root, n, aug);
			changed = true;
		}
		if (!changed && !forced)
			return;
		n = n->parent;
	}
}

/* Link n into *slot below parent (found by the caller's descent), then rebalance. */
TREE_INLINE void tree_link(struct gmc_range_link **root, struct gmc_range_link *n,
		      struct gmc_range_link *parent, struct gmc_range_link **slot,
		      gmc_range_aug_fn aug)
{
	n->left = NULL;
	n->right = NULL;
	n->parent = parent;
	n->height = 1;
	*slot = n;
	if (aug)
		aug(n);
	rebalance_up(root, parent, aug, NULL);
}

TREE_INLINE void tree_erase(struct gmc_range_link **root, struct gmc_range_link *z, gmc_range_aug_fn aug)
{
	struct gmc_range_link *from, *must = NULL;

	if (!z->left || !z->right) {
		struct gmc_range_link *child = z->left ? z->left : z->right;

		from = z->parent;
		replace_child(root, z->parent, z, child);
		if (child)
			child->parent = z->parent;
	} else {
		struct gmc_range_link *y = z->right;

		while (y->left)
			y = y->left;
		if (y->parent != z) {
			from = y->parent;
			from->left = y->right;
			if (y->right)
				y->right->parent = from;
			y->right = z->right;
			z->right->parent = y;
		} else {
			from = y;
		}
		y->left = z->left;
		z->left->parent = y;
		y->parent = z->parent;
		replace_child(root, z->parent, z, y);
		/*
		 * y takes z's place: with z's height it is right unless a
		 * change below reaches it, which the walk from "from" sees. Its
		 * augmentation (z's subtree without z) must be recomputed.
		 */
		y->height = z->height;
		if (aug)
			must = y;
	}
	memset(z, 0, sizeof(*z));
	rebalance_up(root, from, aug, must);
}

static struct gmc_range_link *link_first(struct gmc_range_link *l)
{
	if (l)
		while (l->left)
			l = l->left;
	return l;
}

static struct gmc_range_link *link_next(struct gmc_range_link *l)
{
	if (l->right)
		return link_first(l->right);
	while (l->parent && l == l->parent->right)
		l = l->parent;
	return l->parent;
}

/* ------------------------------------------------------------ holes */

/* Start of the hole after o; meaningful when o->hole_size > 0 (head: mgr->start). */
static uint64_t hole_start(const struct gmc_range_node *o)
{
	return o->start + o->size;
}

static uint64_t hole_last(const struct gmc_range_node *o)
{
	return o->start + o->size + (o->hole_size - 1);
}

static uint64_t max_hole_of(const struct gmc_range_link *l)
{
	return l ? ADDR_NODE(l)->max_hole : 0;
}

static bool addr_aug(struct gmc_range_link *l)
{
	struct gmc_range_node *n = ADDR_NODE(l);
	uint64_t m = n->hole_size, a = max_hole_of(l->left), b = max_hole_of(l->right), old = n->max_hole;

	if (a > m)
		m = a;
	if (b > m)
		m = b;
	n->max_hole = m;
	return m != old;
}

/* The hole of n changed in size but not in start: refresh max_hole upwards. */
static void addr_aug_up(struct gmc_range_link *l)
{
	for (; l; l = l->parent)
		if (!addr_aug(l))
			break; /* ancestors only see this subtree's maximum */
}

static void size_tree_insert(struct gmc_range_mgr *mgr, struct gmc_range_node *o)
{
	struct gmc_range_link **slot = &mgr->size_root, *parent = NULL;
	uint64_t sz = o->hole_size, st = o->start;

	/* owner start orders equal sizes as hole start does */
	while (*slot) {
		struct gmc_range_node *p = SIZE_NODE(*slot);

		parent = *slot;
		if (sz < p->hole_size || (sz == p->hole_size && st < p->start))
			slot = &(*slot)->left;
		else
			slot = &(*slot)->right;
	}
	tree_link(&mgr->size_root, &o->size_link, parent, slot, NULL);
}

/*
 * Insert the hole of o into the address tree. If the node after o (or
 * before it) owns a hole already in the tree, that hole is o's neighbour in
 * address order, so o's slot is next to it (a child of it, or at the end of
 * the spine of its subtree on o's side: O(1) steps on average) and no
 * descent from the root is needed.
 */
static void addr_tree_insert(struct gmc_range_mgr *mgr, struct gmc_range_node *o)
{
	struct gmc_range_link **slot = &mgr->addr_root, *parent = NULL;
	struct gmc_range_node *q = o->next, *p = o->prev;
	uint64_t st = o->start;

	if (q != &mgr->head && q->addr_link.height) {
		parent = &q->addr_link;
		slot = &parent->left;
		while (*slot) {
			parent = *slot;
			slot = &parent->right;
		}
		tree_link(&mgr->addr_root, &o->addr_link, parent, slot, addr_aug);
		return;
	}
	if (o != &mgr->head && p->addr_link.height) {
		parent = &p->addr_link;
		slot = &parent->right;
		while (*slot) {
			parent = *slot;
			slot = &parent->left;
		}
		tree_link(&mgr->addr_root, &o->addr_link, parent, slot, addr_aug);
		return;
	}
	while (*slot) {
		parent = *slot;
		if (st < ADDR_NODE(*slot)->start) /* the order of hole starts */
			slot = &(*slot)->left;
		else
			slot = &(*slot)->right;
	}
	tree_link(&mgr->addr_root, &o->addr_link, parent, slot, addr_aug);
}

/* Set the size of the hole after o, keeping the built trees and counters right. */
static void hole_set(struct gmc_range_mgr *mgr, struct gmc_range_node *o, uint64_t nsz)
{
	uint64_t old = o->hole_size;

	if (old == nsz)
		return;
	mgr->free_bytes = mgr->free_bytes - old + nsz;
	if (old && mgr->size_on)
		tree_erase(&mgr->size_root, &o->size_link, NULL);
	if (old && nsz) {
		o->hole_size = nsz;
		if (mgr->addr_on)
			addr_aug_up(&o->addr_link);
		if (mgr->size_on)
			size_tree_insert(mgr, o);
	} else if (old) {
		o->hole_size = 0;
		if (mgr->addr_on)
			tree_erase(&mgr->addr_root, &o->addr_link, addr_aug);
		o->max_hole = 0;
		mgr->hole_count--;
	} else {
		o->hole_size = nsz;
		if (mgr->addr_on)
			addr_tree_insert(mgr, o);
		if (mgr->size_on)
			size_tree_insert(mgr, o);
		mgr->hole_count++;
	}
}

/*
 * Hand the hole of from over to to (which has none) with the new size nsz.
 * The caller guarantees the new hole start lies between the same neighbours
 * in address order, so to takes from's place in the address tree as is and
 * only max_hole needs refreshing; the size tree needs a re-insert.
 */
static void hole_transfer(struct gmc_range_mgr *mgr, struct gmc_range_node *from,
			  struct gmc_range_node *to, uint64_t nsz)
{
	if (mgr->size_on)
		tree_erase(&mgr->size_root, &from->size_link, NULL);
	mgr->free_bytes = mgr->free_bytes - from->hole_size + nsz;
	from->hole_size = 0;
	to->hole_size = nsz;
	if (mgr->addr_on) {
		struct gmc_range_link *l = &to->addr_link;

		*l = from->addr_link;
		if (l->left)
			l->left->parent = l;
		if (l->right)
			l->right->parent = l;
		replace_child(&mgr->addr_root, l->parent, &from->addr_link, l);
		memset(&from->addr_link, 0, sizeof(from->addr_link));
		to->max_hole = from->max_hole;
		from->max_hole = 0;
		addr_aug_up(l);
	}
	if (mgr->size_on)
		size_tree_insert(mgr, to);
}

/*
 * Each tree is built the first time a request needs it (O(n log n) once,
 * from the node ring) and kept up to date from then on, so a manager used
 * only with LOW/HIGH never pays for the size tree, nor one used only with
 * unrestricted BEST for the address tree.
 */
static void need_size_tree(struct gmc_range_mgr *mgr)
{
	struct gmc_range_node *o = &mgr->head;

	if (mgr->size_on)
		return;
	mgr->size_on = true;
	do {
		if (o->hole_size)
			size_tree_insert(mgr, o);
		o = o->next;
	} while (o != &mgr->head);
}

static void need_addr_tree(struct gmc_range_mgr *mgr)
{
	struct gmc_range_node *o = &mgr->head;

	if (mgr->addr_on)
		return;
	mgr->addr_on = true;
	do {
		if (o->hole_size)
			addr_tree_insert(mgr, o);
		o = o->next;
	} while (o != &mgr->head);
}

/* ------------------------------------------------------------ search */

struct gmc_range_req {
	uint64_t size;
	uint64_t mask; /* alignment - 1 */
	uint64_t lo;   /* clipped restriction, inclusive */
	uint64_t hi;
	bool top;      /* place at the top end of the hole (HIGH) */
};

/*
 * Where the request goes inside the hole after o, clipped to [lo, hi]:
 * lowest aligned address for BEST/LOW, highest for HIGH. No overflow: every
 * subtraction is guarded by the comparison before it.
 */
static bool hole_fit(const struct gmc_range_node *o, const struct gmc_range_req *r, uint64_t *addr)
{
	uint64_t hs = hole_start(o), hl = hole_last(o);
	uint64_t ws = hs > r->lo ? hs : r->lo;
	uint64_t wl = hl < r->hi ? hl : r->hi;
	uint64_t a;

	if (ws > wl || wl - ws < r->size - 1)
		return false;
	if (r->top) {
		a = (wl - (r->size - 1)) & ~r->mask;
		if (a < ws)
			return false;
	} else {
		if (ws > UINT64_MAX - r->mask)
			return false;
		a = (ws + r->mask) & ~r->mask;
		if (a > wl || wl - a < r->size - 1)
			return false;
	}
	*addr = a;
	return true;
}

/* Leftmost hole in the subtree with hole_size >= s. O(height). */
static struct gmc_range_link *addr_leftmost_size(struct gmc_range_link *l, uint64_t s)
{
	while (l && ADDR_NODE(l)->max_hole >= s) {
		if (max_hole_of(l->left) >= s)
			l = l->left;
		else if (ADDR_NODE(l)->hole_size >= s)
			return l;
		else
			l = l->right;
	}
	return NULL;
}

static struct gmc_range_link *addr_rightmost_size(struct gmc_range_link *l, uint64_t s)
{
	while (l && ADDR_NODE(l)->max_hole >= s) {
		if (max_hole_of(l->right) >= s)
			l = l->right;
		else if (ADDR_NODE(l)->hole_size >= s)
			return l;
		else
			l = l->left;
	}
	return NULL;
}

/*
 * Leftmost hole with hole_size >= s that does not end below key. "Ends at
 * or above key" is monotone in address order, so a failed left descent costs
 * O(1) per level and the whole call is O(height).
 */
static struct gmc_range_link *addr_find_low(struct gmc_range_link *l, uint64_t s, uint64_t key)
{
	while (l && ADDR_NODE(l)->max_hole >= s) {
		struct gmc_range_node *n = ADDR_NODE(l);

		if (hole_last(n) >= key) {
			struct gmc_range_link *r = addr_find_low(l->left, s, key);

			if (r)
				return r;
			if (n->hole_size >= s)
				return l;
			return addr_leftmost_size(l->right, s);
		}
		l = l->right;
	}
	return NULL;
}

/* Rightmost hole with hole_size >= s that does not start above key. O(height). */
static struct gmc_range_link *addr_find_high(struct gmc_range_link *l, uint64_t s, uint64_t key)
{
	while (l && ADDR_NODE(l)->max_hole >= s) {
		struct gmc_range_node *n = ADDR_NODE(l);

		if (hole_start(n) <= key) {
			struct gmc_range_link *r = addr_find_high(l->right, s, key);

			if (r)
				return r;
			if (n->hole_size >= s)
				return l;
			return addr_rightmost_size(l->left, s);
		}
		l = l->left;
	}
	return NULL;
}

/* One step of the address-ordered walk over candidate holes in [lo, hi]. */
static struct gmc_range_node *addr_walk_next(const struct gmc_range_mgr *mgr,
					     const struct gmc_range_req *r, uint64_t *key, bool *done)
{
	struct gmc_range_link *l;
	struct gmc_range_node *n;

	if (*done)
		return NULL;
	/* every hole ends at or above the manager start: no key to compare */
	if (*key <= mgr->start)
		l = addr_leftmost_size(mgr->addr_root, r->size);
	else
		l = addr_find_low(mgr->addr_root, r->size, *key);
	if (!l || hole_start(ADDR_NODE(l)) > r->hi) {
		*done = true;
		return NULL;
	}
	n = ADDR_NODE(l);
	if (hole_last(n) >= r->hi)
		*done = true; /* nothing after this one can start inside [lo, hi] */
	else
		*key = hole_last(n) + 1;
	return n;
}

static struct gmc_range_node *search_low(const struct gmc_range_mgr *mgr,
					 const struct gmc_range_req *r, uint64_t *addr)
{
	uint64_t key = r->lo;
	bool done = false;
	struct gmc_range_node *n;

	while ((n = addr_walk_next(mgr, r, &key, &done)))
		if (hole_fit(n, r, addr))
			return n;
	return NULL;
}

static struct gmc_range_node *search_high(const struct gmc_range_mgr *mgr,
					  const struct gmc_range_req *r, uint64_t *addr)
{
	uint64_t key = r->hi;

	for (;;) {
		struct gmc_range_link *l = addr_find_high(mgr->addr_root, r->size, key);
		struct gmc_range_node *n;

		if (!l)
			return NULL;
		n = ADDR_NODE(l);
		if (hole_last(n) < r->lo)
			return NULL;
		if (hole_fit(n, r, addr))
			return n;
		if (hole_start(n) <= r->lo)
			return NULL;
		key = hole_start(n) - 1;
	}
}

static bool best_less(const struct gmc_range_node *a, const struct gmc_range_node *b)
{
	return a->hole_size < b->hole_size ||
	       (a->hole_size == b->hole_size && hole_start(a) < hole_start(b));
}

/*
 * Best fit: the first hole in (size, start) order that fits. Walks the size
 * tree from the smallest hole >= size. With a range restriction the holes
 * outside it would be skipped one by one, so an address-ordered walk over
 * the restriction runs interleaved, and whichever finishes first decides;
 * both produce the same answer.
 */
static struct gmc_range_node *search_best(const struct gmc_range_mgr *mgr,
					  const struct gmc_range_req *r, uint64_t *addr)
{
	struct gmc_range_link *sl = mgr->size_root, *lb = NULL;
	struct gmc_range_node *abest = NULL;
	uint64_t akey = r->lo, aaddr = 0;
	bool adone = r->lo <= mgr->start && r->hi >= mgr->last;

	while (sl) {
		if (SIZE_NODE(sl)->hole_size >= r->size) {
			lb = sl;
			sl = sl->left;
		} else {
			sl = sl->right;
		}
	}
	for (sl = lb; sl; sl = link_next(sl)) {
		struct gmc_range_node *n = SIZE_NODE(sl), *m;
		uint64_t a;

		if (abest && best_less(abest, n))
			break; /* everything smaller than n failed, so abest is the best */
		if (hole_fit(n, r, addr))
			return n;
		if (adone)
			continue;
		m = addr_walk_next(mgr, r, &akey, &adone);
		if (m && hole_fit(m, r, &a) && (!abest || best_less(m, abest))) {
			abest = m;
			aaddr = a;
		}
		if (adone)
			break; /* every candidate in the restriction seen */
	}
	if (abest)
		*addr = aaddr;
	return abest;
}

/* ------------------------------------------------------------ API */

static bool mgr_ok(const struct gmc_range_mgr *mgr)
{
	return mgr && mgr->head.mgr == mgr;
}

static void node_clear(struct gmc_range_node *node)
{
	memset(node, 0, sizeof(*node));
}

/* Link node (all zero) after owner at [a, a + size) inside owner's hole. */
static void place(struct gmc_range_mgr *mgr, struct gmc_range_node *owner,
		  struct gmc_range_node *node, uint64_t a, uint64_t size)
{
	uint64_t hs = hole_start(owner), hl = hole_last(owner);
	uint64_t before = a - hs, after = hl - (a + (size - 1));

	/* node is all zero (the callers cleared it) */
	node->start = a;
	node->size = size;
	node->mgr = mgr;
	node->prev = owner;
	node->next = owner->next;
	owner->next->prev = node;
	owner->next = node;
	mgr->node_count++;
	if (before == 0 && after != 0) {
		hole_transfer(mgr, owner, node, after); /* bottom of the hole: common case */
	} else {
		hole_set(mgr, owner, before);
		hole_set(mgr, node, after);
	}
}

int gmc_range_init(struct gmc_range_mgr *mgr, uint64_t start, uint64_t size)
{
	if (!mgr)
		return GMC_RANGE_EINVAL;
	memset(mgr, 0, sizeof(*mgr));
	if (size == 0)
		return GMC_RANGE_EINVAL;
	if (size - 1 > UINT64_MAX - start)
		return GMC_RANGE_EWRAP;
	mgr->start = start;
	mgr->last = start + (size - 1);
	mgr->head.start = start;
	mgr->head.size = 0;
	mgr->head.mgr = mgr;
	mgr->head.prev = &mgr->head;
	mgr->head.next = &mgr->head;
	hole_set(mgr, &mgr->head, size);
	return GMC_RANGE_OK;
}

int gmc_range_fini(struct gmc_range_mgr *mgr)
{
	if (!mgr_ok(mgr))
		return GMC_RANGE_EINVAL;
	if (mgr->node_count)
		return GMC_RANGE_EBUSY;
	memset(mgr, 0, sizeof(*mgr));
	return GMC_RANGE_OK;
}

typedef struct gmc_range_node *(*gmc_range_search_fn)(const struct gmc_range_mgr *mgr,
						     const struct gmc_range_req *r, uint64_t *addr);

int gmc_range_insert_in_range(struct gmc_range_mgr *mgr, struct gmc_range_node *node,
			      uint64_t size, uint64_t alignment, enum gmc_range_mode mode,
			      uint64_t range_start, uint64_t range_end)
{
	struct gmc_range_req r;
	struct gmc_range_node *owner;
	gmc_range_search_fn search;
	uint64_t range_last = range_end ? range_end - 1 : UINT64_MAX;
	uint64_t addr = 0;

	if (!node)
		return GMC_RANGE_EINVAL;
	if (node->mgr)
		return GMC_RANGE_EINVAL; /* in use: leave it alone */
	node_clear(node);
	if (!mgr_ok(mgr))
		return GMC_RANGE_EINVAL;
	/* the one place placement modes are told apart */
	switch (mode) {
	case GMC_RANGE_BEST:
		search = search_best;
		r.top = false;
		break;
	case GMC_RANGE_LOW:
		search = search_low;
		r.top = false;
		break;
	case GMC_RANGE_HIGH:
		search = search_high;
		r.top = true;
		break;
	default:
		return GMC_RANGE_EINVAL;
	}
	if (size == 0)
		return GMC_RANGE_EINVAL;
	if (alignment > 1 && (alignment & (alignment - 1)))
		return GMC_RANGE_EALIGN;
	if (range_last < range_start || range_last < mgr->start || range_start > mgr->last)
		return GMC_RANGE_ERANGE;

	r.size = size;
	r.mask = alignment ? alignment - 1 : 0;
	r.lo = range_start > mgr->start ? range_start : mgr->start;
	r.hi = range_last < mgr->last ? range_last : mgr->last;
	if (r.hi - r.lo < size - 1)
		return GMC_RANGE_ENOSPC;

	if (mode != GMC_RANGE_BEST || r.lo > mgr->start || r.hi < mgr->last)
		need_addr_tree(mgr);
	if (mode == GMC_RANGE_BEST)
		need_size_tree(mgr);
	owner = search(mgr, &r, &addr);
	if (!owner)
		return GMC_RANGE_ENOSPC;
	place(mgr, owner, node, addr, size);
	return GMC_RANGE_OK;
}

int gmc_range_insert(struct gmc_range_mgr *mgr, struct gmc_range_node *node,
		     uint64_t size, uint64_t alignment, enum gmc_range_mode mode)
{
	return gmc_range_insert_in_range(mgr, node, size, alignment, mode, 0, 0);
}

int gmc_range_reserve(struct gmc_range_mgr *mgr, struct gmc_range_node *node,
		      uint64_t start, uint64_t size)
{
	struct gmc_range_link *l, *hit = NULL;
	uint64_t last;

	if (!node)
		return GMC_RANGE_EINVAL;
	if (node->mgr)
		return GMC_RANGE_EINVAL;
	node_clear(node);
	if (!mgr_ok(mgr) || size == 0)
		return GMC_RANGE_EINVAL;
	if (size - 1 > UINT64_MAX - start)
		return GMC_RANGE_EWRAP;
	last = start + (size - 1);
	if (start < mgr->start || last > mgr->last)
		return GMC_RANGE_ERANGE;

	/* The hole with the greatest start <= start is the only one that can contain it. */
	need_addr_tree(mgr);
	for (l = mgr->addr_root; l;) {
		if (hole_start(ADDR_NODE(l)) <= start) {
			hit = l;
			l = l->right;
		} else {
			l = l->left;
		}
	}
	if (!hit || hole_last(ADDR_NODE(hit)) < last)
		return GMC_RANGE_EBUSY;
	place(mgr, ADDR_NODE(hit), node, start, size);
	return GMC_RANGE_OK;
}

bool gmc_range_node_in(const struct gmc_range_mgr *mgr, const struct gmc_range_node *node)
{
	return mgr_ok(mgr) && node && node != &mgr->head && node->mgr == mgr;
}

int gmc_range_remove(struct gmc_range_mgr *mgr, struct gmc_range_node *node)
{
	struct gmc_range_node *p;
	uint64_t merged;

	if (!mgr_ok(mgr) || !node)
		return GMC_RANGE_EINVAL;
	if (!gmc_range_node_in(mgr, node))
		return GMC_RANGE_ENOENT;

	p = node->prev;
	/* <= manager size, so no overflow */
	merged = p->hole_size + node->size + node->hole_size;
	p->next = node->next;
	node->next->prev = p;
	mgr->node_count--;
	if (p->hole_size == 0 && node->hole_size != 0) {
		hole_transfer(mgr, node, p, merged);
	} else {
		hole_set(mgr, node, 0);
		hole_set(mgr, p, merged);
	}
	node_clear(node);
	return GMC_RANGE_OK;
}

struct gmc_range_node *gmc_range_node_first(const struct gmc_range_mgr *mgr)
{
	if (!mgr_ok(mgr) || mgr->head.next == &mgr->head)
		return NULL;
	return mgr->head.next;
}

struct gmc_range_node *gmc_range_node_next(const struct gmc_range_mgr *mgr,
					   const struct gmc_range_node *node)
{
	if (!gmc_range_node_in(mgr, node) || node->next == &mgr->head)
		return NULL;
	return node->next;
}

/* The first node from o on (o included) that owns a hole; NULL past the last. */
static const struct gmc_range_node *ring_hole_from(const struct gmc_range_mgr *mgr,
						   const struct gmc_range_node *o)
{
	for (; !o->hole_size; o = o->next)
		if (o->next == &mgr->head)
			return NULL;
	return o;
}

bool gmc_range_hole_next(const struct gmc_range_mgr *mgr, struct gmc_range_hole_iter *it,
			 struct gmc_range_hole *hole)
{
	const struct gmc_range_node *o;

	if (hole) {
		hole->start = 0;
		hole->size = 0;
	}
	if (!mgr_ok(mgr) || !it || !hole || it->done)
		return false;
	if (it->owner && (it->owner->mgr != mgr || it->owner->hole_size == 0)) {
		it->done = true; /* stale cursor: the manager changed under it */
		return false;
	}
	if (mgr->addr_on) {
		const struct gmc_range_link *l = it->owner ? link_next((struct gmc_range_link *)&it->owner->addr_link)
							   : link_first(mgr->addr_root);

		o = l ? ADDR_NODE(l) : NULL;
	} else if (!it->owner) {
		o = ring_hole_from(mgr, &mgr->head);
	} else {
		o = it->owner->next == &mgr->head ? NULL : ring_hole_from(mgr, it->owner->next);
	}
	if (!o) {
		it->done = true;
		return false;
	}
	it->owner = o;
	hole->start = hole_start(o);
	hole->size = o->hole_size;
	return true;
}

/* The largest hole, from whichever index is built (the ring if none is). */
static uint64_t largest_hole(const struct gmc_range_mgr *mgr)
{
	const struct gmc_range_node *o = &mgr->head;
	uint64_t m = 0;

	if (mgr->addr_on)
		return max_hole_of(mgr->addr_root);
	if (mgr->size_on) {
		const struct gmc_range_link *l = mgr->size_root;

		if (!l)
			return 0;
		while (l->right)
			l = l->right;
		return SIZE_NODE(l)->hole_size;
	}
	do {
		if (o->hole_size > m)
			m = o->hole_size;
		o = o->next;
	} while (o != &mgr->head);
	return m;
}

int gmc_range_get_stats(const struct gmc_range_mgr *mgr, struct gmc_range_stats *st)
{
	if (st)
		memset(st, 0, sizeof(*st));
	if (!mgr_ok(mgr) || !st)
		return GMC_RANGE_EINVAL;
	st->start = mgr->start;
	st->size = mgr->last - mgr->start + 1;
	st->node_count = mgr->node_count;
	st->hole_count = mgr->hole_count;
	st->free_bytes = mgr->free_bytes;
	st->largest_hole = largest_hole(mgr);
	return GMC_RANGE_OK;
}

const char *gmc_range_strerror(int code)
{
	switch (code) {
	case GMC_RANGE_OK:
		return "GMC_RANGE_OK";
	case GMC_RANGE_EINVAL:
		return "GMC_RANGE_EINVAL";
	case GMC_RANGE_ENOSPC:
		return "GMC_RANGE_ENOSPC";
	case GMC_RANGE_EALIGN:
		return "GMC_RANGE_EALIGN";
	case GMC_RANGE_EWRAP:
		return "GMC_RANGE_EWRAP";
	case GMC_RANGE_ERANGE:
		return "GMC_RANGE_ERANGE";
	case GMC_RANGE_EBUSY:
		return "GMC_RANGE_EBUSY";
	case GMC_RANGE_ENOENT:
		return "GMC_RANGE_ENOENT";
	}
	return "GMC_RANGE_(unknown)";
}
