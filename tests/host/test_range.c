/*
 * test_range.c - cmocka tests for the per-segment range allocator
 * (host/common/gmc_range.c), in the style of Linux drm_mm_test: table-driven
 * cases, checker helpers that walk the whole manager, seeded random orders
 * and a 10,000-allocation stress run against a reference model.
 *
 * Only gmc_range.c is needed to link.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gmc_range.h"

typedef unsigned __int128 u128;

#define KiB 0x400ull
#define MiB 0x100000ull
#define TOP20 (UINT64_MAX - MiB + 1) /* 2^64 - 2^20 */
#define BIT(n) (1ull << (n))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------ reporting */

/*
 * Context printed with every failure: the seed of the running random test
 * and the table row being run.
 */
static uint64_t g_seed;
static int g_seed_set;
static char g_row[160];

static void seed_note(void)
{
	if (g_seed_set)
		print_error("  (random test seed = %llu)\n", (unsigned long long)g_seed);
	if (g_row[0])
		print_error("  (table row: %s)\n", g_row);
}

static int clear_context(void **state)
{
	(void)state;
	g_seed_set = 0;
	g_row[0] = 0;
	return 0;
}

static void set_row(size_t i, const char *name)
{
	snprintf(g_row, sizeof(g_row), "%zu%s%s", i, name ? " " : "", name ? name : "");
}

static void check_u64(uint64_t exp, uint64_t act, const char *what, const char *file, int line)
{
	if (exp != act) {
		print_error("%s:%d: %s: expected %llu (0x%llx), actual %llu (0x%llx)\n", file, line,
			    what, (unsigned long long)exp, (unsigned long long)exp,
			    (unsigned long long)act, (unsigned long long)act);
		seed_note();
		_fail(file, line);
	}
}

static void check_rc(int exp, int act, const char *what, const char *file, int line)
{
	if (exp != act) {
		print_error("%s:%d: %s: expected %s (%d), actual %s (%d)\n", file, line, what,
			    gmc_range_strerror(exp), exp, gmc_range_strerror(act), act);
		seed_note();
		_fail(file, line);
	}
}

static void check_true(int cond, const char *what, const char *file, int line)
{
	if (!cond) {
		print_error("%s:%d: check failed: %s\n", file, line, what);
		seed_note();
		_fail(file, line);
	}
}

#define assert_u64(exp, act) check_u64((exp), (act), #act, __FILE__, __LINE__)
#define assert_rc(exp, act) check_rc((exp), (act), #act, __FILE__, __LINE__)
#define assert_ok(act) check_rc(GMC_RANGE_OK, (act), #act, __FILE__, __LINE__)
#define assert_that(cond) check_true(!!(cond), #cond, __FILE__, __LINE__)

/* ------------------------------------------------------------ random */

static uint64_t rng_state;

static void rng_seed(uint64_t s)
{
	rng_state = s;
}

static uint64_t rng_next(void) /* splitmix64 */
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t n) /* [0, n), n > 0 */
{
	return rng_next() % n;
}

/* ------------------------------------------------------------ the checker */

#define ADDR_OF(l) \
	((const struct gmc_range_node *)((const char *)(l) - offsetof(struct gmc_range_node, addr_link)))
#define SIZE_OF(l) \
	((const struct gmc_range_node *)((const char *)(l) - offsetof(struct gmc_range_node, size_link)))

struct hole_rec {
	const struct gmc_range_node *owner;
	uint64_t start, size;
};

struct chk_ctx {
	const char *file;
	int line;
	const struct gmc_range_node **inorder;
	size_t n, cap;
};

#define CHK(ctx, cond, ...)                                                              \
	do {                                                                             \
		if (!(cond)) {                                                           \
			print_error("%s:%d: manager check failed: %s: ", (ctx)->file,     \
				    (ctx)->line, #cond);                                  \
			print_error(__VA_ARGS__);                                        \
			print_error("\n");                                               \
			seed_note();                                                     \
			_fail((ctx)->file, (ctx)->line);                                 \
		}                                                                        \
	} while (0)

static void ctx_push(struct chk_ctx *c, const struct gmc_range_node *n)
{
	CHK(c, c->n < c->cap, "tree holds more than %zu holes", c->cap);
	c->inorder[c->n++] = n;
}

/* Returns subtree height; verifies parents, heights, AVL balance, max_hole. */
static uint32_t chk_addr_tree(struct chk_ctx *c, const struct gmc_range_link *l,
			      const struct gmc_range_link *parent, uint64_t *max_out)
{
	uint64_t ml = 0, mr = 0, m;
	uint32_t hl, hr;
	const struct gmc_range_node *n;

	*max_out = 0;
	if (!l)
		return 0;
	n = ADDR_OF(l);
	CHK(c, l->parent == parent, "addr tree parent link broken at hole of node start 0x%llx",
	    (unsigned long long)n->start);
	hl = chk_addr_tree(c, l->left, l, &ml);
	ctx_push(c, n);
	hr = chk_addr_tree(c, l->right, l, &mr);
	CHK(c, l->height == 1 + (hl > hr ? hl : hr), "addr height expected %u actual %u",
	    1 + (hl > hr ? hl : hr), l->height);
	CHK(c, hl <= hr + 1 && hr <= hl + 1, "addr tree unbalanced: left %u right %u", hl, hr);
	m = n->hole_size;
	if (ml > m)
		m = ml;
	if (mr > m)
		m = mr;
	CHK(c, n->max_hole == m, "max_hole expected 0x%llx actual 0x%llx", (unsigned long long)m,
	    (unsigned long long)n->max_hole);
	*max_out = m;
	return l->height;
}

static uint32_t chk_size_tree(struct chk_ctx *c, const struct gmc_range_link *l,
			      const struct gmc_range_link *parent)
{
	uint32_t hl, hr;

	if (!l)
		return 0;
	CHK(c, l->parent == parent, "size tree parent link broken");
	hl = chk_size_tree(c, l->left, l);
	ctx_push(c, SIZE_OF(l));
	hr = chk_size_tree(c, l->right, l);
	CHK(c, l->height == 1 + (hl > hr ? hl : hr), "size height expected %u actual %u",
	    1 + (hl > hr ? hl : hr), l->height);
	CHK(c, hl <= hr + 1 && hr <= hl + 1, "size tree unbalanced: left %u right %u", hl, hr);
	return l->height;
}

/*
 * Walk everything: nodes tile the range with the holes exactly, both trees
 * are valid AVL trees holding exactly the non-empty holes in the right
 * order with correct augmentation, counters and public iterators agree.
 */
static void check_mgr(const struct gmc_range_mgr *m, const char *file, int line)
{
	struct chk_ctx c = { file, line, NULL, 0, 0 };
	const struct gmc_range_node *o;
	struct hole_rec *holes;
	size_t nh = 0, nn = 0, i;
	u128 cursor = m->start, covered = 0, freeb = 0, msize = (u128)m->last - m->start + 1;
	uint64_t maxh = 0, largest = 0;
	struct gmc_range_stats st;
	struct gmc_range_hole_iter it = { 0 };
	struct gmc_range_hole h;
	const struct gmc_range_node *pub;

	CHK(&c, m->head.mgr == m, "manager not initialised");
	CHK(&c, m->head.start == m->start && m->head.size == 0, "head sentinel moved");
	holes = calloc(m->node_count + 2, sizeof(*holes));
	c.cap = m->node_count + 2;
	c.inorder = calloc(c.cap, sizeof(*c.inorder));
	CHK(&c, holes && c.inorder, "out of memory");

	/* nodes and gaps, in address order, from the ring */
	for (o = &m->head;;) {
		const struct gmc_range_node *nx = o->next;
		u128 gap_end = nx == &m->head ? (u128)m->last + 1 : nx->start;
		u128 o_end = o == &m->head ? (u128)m->start : (u128)o->start + o->size;

		CHK(&c, nx->prev == o, "ring prev link broken after 0x%llx", (unsigned long long)o->start);
		CHK(&c, o_end <= gap_end, "overlap: node [0x%llx,+0x%llx) runs past the next",
		    (unsigned long long)o->start, (unsigned long long)o->size);
		CHK(&c, o->hole_size == (uint64_t)(gap_end - o_end),
		    "hole after 0x%llx: expected size 0x%llx actual 0x%llx", (unsigned long long)o->start,
		    (unsigned long long)(gap_end - o_end), (unsigned long long)o->hole_size);
		freeb += gap_end - o_end;
		if (gap_end > o_end) {
			holes[nh].owner = o;
			holes[nh].start = (uint64_t)o_end;
			holes[nh].size = (uint64_t)(gap_end - o_end);
			if (holes[nh].size > largest)
				largest = holes[nh].size;
			nh++;
		}
		if (nx == &m->head)
			break;
		CHK(&c, nx->mgr == m, "node 0x%llx has foreign owner", (unsigned long long)nx->start);
		CHK(&c, nx->size > 0, "zero-size node at 0x%llx", (unsigned long long)nx->start);
		CHK(&c, nx->start >= cursor, "node 0x%llx below previous end", (unsigned long long)nx->start);
		CHK(&c, (u128)nx->start + nx->size <= (u128)m->last + 1, "node 0x%llx past the manager",
		    (unsigned long long)nx->start);
		cursor = (u128)nx->start + nx->size;
		covered += nx->size;
		nn++;
		CHK(&c, nn <= m->node_count, "ring longer than node_count %llu",
		    (unsigned long long)m->node_count);
		o = nx;
	}
	CHK(&c, nn == m->node_count, "node_count expected %zu actual %llu", nn,
	    (unsigned long long)m->node_count);
	CHK(&c, nh == m->hole_count, "hole_count expected %zu actual %llu", nh,
	    (unsigned long long)m->hole_count);
	CHK(&c, covered + freeb == msize, "nodes + holes do not tile the range");
	CHK(&c, (u128)m->free_bytes == freeb, "free_bytes expected 0x%llx actual 0x%llx",
	    (unsigned long long)freeb, (unsigned long long)m->free_bytes);

	/* address tree (once built): exactly the holes, in address order */
	c.n = 0;
	chk_addr_tree(&c, m->addr_root, NULL, &maxh);
	CHK(&c, c.n == (m->addr_on ? nh : 0), "addr tree holds %zu holes, expected %zu", c.n,
	    m->addr_on ? nh : 0);
	for (i = 0; i < c.n; i++)
		CHK(&c, c.inorder[i] == holes[i].owner, "addr tree order wrong at hole %zu (0x%llx)", i,
		    (unsigned long long)holes[i].start);
	CHK(&c, maxh == (m->addr_on ? largest : 0), "root max_hole expected 0x%llx actual 0x%llx",
	    (unsigned long long)(m->addr_on ? largest : 0), (unsigned long long)maxh);
	for (o = m->head.next; !m->addr_on && o != &m->head; o = o->next)
		CHK(&c, o->addr_link.height == 0 && o->max_hole == 0, "addr link set with no addr tree");

	/* size tree (once built): the same holes, strictly ascending by (size, start) */
	c.n = 0;
	chk_size_tree(&c, m->size_root, NULL);
	CHK(&c, c.n == (m->size_on ? nh : 0), "size tree holds %zu holes, expected %zu", c.n,
	    m->size_on ? nh : 0);
	for (o = m->head.next; !m->size_on && o != &m->head; o = o->next)
		CHK(&c, o->size_link.height == 0, "size link set with no size tree");
	for (i = 0; i < c.n; i++) {
		const struct gmc_range_node *a = c.inorder[i];

		CHK(&c, a->hole_size > 0, "empty hole in size tree");
		CHK(&c, !m->addr_on || a->addr_link.height > 0, "size-tree hole missing from addr tree");
		if (i > 0) {
			const struct gmc_range_node *p = c.inorder[i - 1];
			u128 ps = p == &m->head ? m->start : (u128)p->start + p->size;
			u128 as = a == &m->head ? m->start : (u128)a->start + a->size;

			CHK(&c, p->hole_size < a->hole_size || (p->hole_size == a->hole_size && ps < as),
			    "size tree out of order at %zu", i);
		}
	}

	/* public iterators and stats agree */
	pub = gmc_range_node_first(m);
	for (o = m->head.next; o != &m->head; o = o->next) {
		CHK(&c, pub == o, "gmc_range_node_next disagrees with the ring");
		pub = gmc_range_node_next(m, pub);
	}
	CHK(&c, pub == NULL, "node iteration does not end");
	for (i = 0; gmc_range_hole_next(m, &it, &h); i++) {
		CHK(&c, i < nh, "hole iteration too long");
		CHK(&c, h.start == holes[i].start && h.size == holes[i].size,
		    "hole %zu: expected [0x%llx,+0x%llx) actual [0x%llx,+0x%llx)", i,
		    (unsigned long long)holes[i].start, (unsigned long long)holes[i].size,
		    (unsigned long long)h.start, (unsigned long long)h.size);
	}
	CHK(&c, i == nh, "hole iteration gave %zu holes, expected %zu", i, nh);
	CHK(&c, gmc_range_get_stats(m, &st) == GMC_RANGE_OK, "stats failed");
	CHK(&c, st.node_count == nn && st.hole_count == nh && st.largest_hole == largest &&
			(u128)st.free_bytes == freeb && st.start == m->start && (u128)st.size == msize,
	    "stats disagree");
	free(holes);
	free(c.inorder);
}

#define assert_mgr_ok(m) check_mgr((m), __FILE__, __LINE__)

/* Expect the holes (in address order) to be exactly the pairs given. */
static void check_holes(const struct gmc_range_mgr *m, const uint64_t *pairs, size_t npairs,
			const char *file, int line)
{
	struct gmc_range_hole_iter it = { 0 };
	struct gmc_range_hole h;
	size_t i = 0;

	while (gmc_range_hole_next(m, &it, &h)) {
		if (i >= npairs) {
			print_error("%s:%d: unexpected extra hole [0x%llx,+0x%llx)\n", file, line,
				    (unsigned long long)h.start, (unsigned long long)h.size);
			_fail(file, line);
		}
		check_u64(pairs[2 * i], h.start, "hole start", file, line);
		check_u64(pairs[2 * i + 1], h.size, "hole size", file, line);
		i++;
	}
	check_u64(npairs, i, "hole count", file, line);
}

#define assert_holes(m, ...)                                                      \
	do {                                                                      \
		const uint64_t pairs_[] = { __VA_ARGS__ };                        \
		check_holes((m), pairs_, ARRAY_SIZE(pairs_) / 2, __FILE__, __LINE__); \
	} while (0)

/* Snapshot of nodes and holes, for "nothing changed" checks. */
struct snap {
	size_t n;
	uint64_t v[256];
};

static void take_snap(const struct gmc_range_mgr *m, struct snap *s)
{
	const struct gmc_range_node *n;
	struct gmc_range_hole_iter it = { 0 };
	struct gmc_range_hole h;

	s->n = 0;
	for (n = gmc_range_node_first(m); n && s->n + 2 <= ARRAY_SIZE(s->v); n = gmc_range_node_next(m, n)) {
		s->v[s->n++] = n->start;
		s->v[s->n++] = n->size;
	}
	while (gmc_range_hole_next(m, &it, &h) && s->n + 2 <= ARRAY_SIZE(s->v)) {
		s->v[s->n++] = ~h.start;
		s->v[s->n++] = h.size;
	}
}

static void check_unchanged(const struct gmc_range_mgr *m, const struct snap *before,
			    const char *file, int line)
{
	struct snap now;
	size_t i;

	take_snap(m, &now);
	check_u64(before->n, now.n, "snapshot length", file, line);
	for (i = 0; i < now.n; i++)
		check_u64(before->v[i], now.v[i], "snapshot entry", file, line);
	check_mgr(m, file, line);
}

#define assert_unchanged(m, s) check_unchanged((m), (s), __FILE__, __LINE__)

static void check_node_zero(const struct gmc_range_node *n, const char *file, int line)
{
	check_u64(0, n->start, "failed node start", file, line);
	check_u64(0, n->size, "failed node size", file, line);
	check_true(n->mgr == NULL, "failed node is not owned", file, line);
}

#define assert_node_zero(n) check_node_zero((n), __FILE__, __LINE__)

/* ------------------------------------------------------------ reference model */

struct ref_ent {
	uint64_t start, size;
	struct gmc_range_node *node;
};

struct ref {
	struct ref_ent *v;
	size_t n, cap;
	uint64_t mstart, mlast;
};

static void ref_init(struct ref *r, uint64_t start, uint64_t size, size_t cap)
{
	r->v = calloc(cap, sizeof(*r->v));
	assert_non_null(r->v);
	r->n = 0;
	r->cap = cap;
	r->mstart = start;
	r->mlast = start + (size - 1);
}

static size_t ref_lower(const struct ref *r, uint64_t start)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void ref_add(struct ref *r, uint64_t start, uint64_t size, struct gmc_range_node *node)
{
	size_t i = ref_lower(r, start);

	assert_that(r->n < r->cap);
	memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof(*r->v));
	r->v[i].start = start;
	r->v[i].size = size;
	r->v[i].node = node;
	r->n++;
}

static void ref_del(struct ref *r, size_t i)
{
	memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof(*r->v));
	r->n--;
}

/*
 * The placement policy of docs/placement.md, computed by brute force over
 * the gaps with 128-bit arithmetic. Returns the expected status.
 */
static int ref_insert_expect(const struct ref *r, uint64_t size, uint64_t align, int mode,
			     uint64_t rs, uint64_t re, uint64_t *addr)
{
	u128 rl = re ? (u128)re - 1 : UINT64_MAX, lo, hi, mask = align ? (u128)align - 1 : 0;
	u128 best_sz = 0, best_a = 0;
	int found = 0;
	size_t i;

	*addr = 0;
	if (mode < 0 || mode > 2 || size == 0)
		return GMC_RANGE_EINVAL;
	if (align & (align - 1))
		return GMC_RANGE_EALIGN;
	if (rl < rs || rl < r->mstart || rs > r->mlast)
		return GMC_RANGE_ERANGE;
	lo = rs > r->mstart ? rs : r->mstart;
	hi = rl < r->mlast ? rl : r->mlast;
	for (i = 0; i <= r->n; i++) {
		u128 gs = i == 0 ? r->mstart : (u128)r->v[i - 1].start + r->v[i - 1].size;
		u128 ge = i == r->n ? (u128)r->mlast + 1 : r->v[i].start; /* exclusive */
		u128 ws = gs > lo ? gs : lo, we = ge < hi + 1 ? ge : hi + 1, a;

		if (ge - gs < size || we <= ws || we - ws < size)
			continue;
		if (mode == GMC_RANGE_HIGH) {
			a = (we - size) & ~mask;
			if (a < ws)
				continue;
		} else {
			a = (ws + mask) & ~mask;
			if (a + size > we)
				continue;
		}
		if (mode == GMC_RANGE_LOW) {
			*addr = (uint64_t)a;
			return GMC_RANGE_OK;
		}
		if (mode == GMC_RANGE_HIGH || !found || ge - gs < best_sz) {
			found = 1;
			best_sz = ge - gs;
			best_a = a;
		}
	}
	if (!found)
		return GMC_RANGE_ENOSPC;
	*addr = (uint64_t)best_a;
	return GMC_RANGE_OK;
}

static int ref_reserve_expect(const struct ref *r, uint64_t start, uint64_t size)
{
	size_t i;

	if (size == 0)
		return GMC_RANGE_EINVAL;
	if ((u128)start + size > (u128)UINT64_MAX + 1)
		return GMC_RANGE_EWRAP;
	if (start < r->mstart || (u128)start + size - 1 > r->mlast)
		return GMC_RANGE_ERANGE;
	i = ref_lower(r, start);
	if (i < r->n && r->v[i].start < (u128)start + size)
		return GMC_RANGE_EBUSY;
	if (i > 0 && (u128)r->v[i - 1].start + r->v[i - 1].size > start)
		return GMC_RANGE_EBUSY;
	return GMC_RANGE_OK;
}

/* Manager nodes equal the reference exactly (and the manager is consistent). */
static void check_ref(const struct gmc_range_mgr *m, const struct ref *r, const char *file, int line)
{
	const struct gmc_range_node *n = gmc_range_node_first(m);
	size_t i;

	for (i = 0; i < r->n; i++, n = gmc_range_node_next(m, n)) {
		check_true(n != NULL, "manager has fewer nodes than the reference", file, line);
		check_true(n == r->v[i].node, "node order differs from the reference", file, line);
		check_u64(r->v[i].start, n->start, "node start vs reference", file, line);
		check_u64(r->v[i].size, n->size, "node size vs reference", file, line);
	}
	check_true(n == NULL, "manager has more nodes than the reference", file, line);
	check_mgr(m, file, line);
}

#define assert_ref(m, r) check_ref((m), (r), __FILE__, __LINE__)

/* ------------------------------------------------------------ tests: init/fini */

static void test_init(void **state)
{
	static const struct {
		uint64_t start, size;
		int rc;
	} rows[] = {
		{ 0, 0, GMC_RANGE_EINVAL },
		{ 0x1000, 0, GMC_RANGE_EINVAL },
		{ 0, 1, GMC_RANGE_OK },
		{ 0, UINT64_MAX, GMC_RANGE_OK },       /* [0, 2^64 - 1) */
		{ 1, UINT64_MAX, GMC_RANGE_OK },       /* ends exactly at 2^64 */
		{ 2, UINT64_MAX, GMC_RANGE_EWRAP },
		{ TOP20, MiB, GMC_RANGE_OK },          /* [2^64 - 2^20, 2^64) */
		{ TOP20, MiB + 1, GMC_RANGE_EWRAP },
		{ UINT64_MAX, 1, GMC_RANGE_OK },
		{ UINT64_MAX, 2, GMC_RANGE_EWRAP },
	};
	size_t i;

	(void)state;
	assert_rc(GMC_RANGE_EINVAL, gmc_range_init(NULL, 0, 1));
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		struct gmc_range_mgr m;
		struct gmc_range_stats st;
		struct gmc_range_node n = { 0 };

		set_row(i, NULL);
		memset(&m, 0xA5, sizeof(m));
		assert_rc(rows[i].rc, gmc_range_init(&m, rows[i].start, rows[i].size));
		if (rows[i].rc != GMC_RANGE_OK) {
			/* failed init leaves a zeroed manager that every call refuses */
			assert_rc(GMC_RANGE_EINVAL, gmc_range_get_stats(&m, &st));
			assert_u64(0, st.size);
			assert_rc(GMC_RANGE_EINVAL, gmc_range_insert(&m, &n, 1, 0, GMC_RANGE_LOW));
			assert_node_zero(&n);
			assert_rc(GMC_RANGE_EINVAL, gmc_range_fini(&m));
			continue;
		}
		assert_mgr_ok(&m);
		assert_ok(gmc_range_get_stats(&m, &st));
		assert_u64(rows[i].start, st.start);
		assert_u64(rows[i].size, st.size);
		assert_u64(rows[i].size, st.free_bytes);
		assert_u64(rows[i].size, st.largest_hole);
		assert_u64(1, st.hole_count);
		assert_u64(0, st.node_count);
		assert_holes(&m, rows[i].start, rows[i].size);
		/* the whole range is allocatable in one piece */
		assert_ok(gmc_range_insert(&m, &n, rows[i].size, 0, GMC_RANGE_HIGH));
		assert_u64(rows[i].start, n.start);
		assert_mgr_ok(&m);
		assert_ok(gmc_range_remove(&m, &n));
		assert_ok(gmc_range_fini(&m));
	}
}

static void test_fini(void **state)
{
	struct gmc_range_mgr m;
	struct gmc_range_node a = { 0 };
	struct snap s;

	(void)state;
	assert_rc(GMC_RANGE_EINVAL, gmc_range_fini(NULL));
	assert_ok(gmc_range_init(&m, 0x1000, 0x10000));
	assert_ok(gmc_range_insert(&m, &a, 0x1000, 0, GMC_RANGE_LOW));
	take_snap(&m, &s);
	assert_rc(GMC_RANGE_EBUSY, gmc_range_fini(&m));
	assert_unchanged(&m, &s);
	assert_ok(gmc_range_remove(&m, &a));
	assert_ok(gmc_range_fini(&m));
	assert_rc(GMC_RANGE_EINVAL, gmc_range_fini(&m));
	assert_rc(GMC_RANGE_EINVAL, gmc_range_insert(&m, &a, 1, 0, GMC_RANGE_LOW));
}

static void test_status_codes(void **state)
{
	static const int codes[] = { GMC_RANGE_EINVAL, GMC_RANGE_ENOSPC, GMC_RANGE_EALIGN,
				     GMC_RANGE_EWRAP,  GMC_RANGE_ERANGE, GMC_RANGE_EBUSY,
				     GMC_RANGE_ENOENT };
	size_t i, j;

	(void)state;
	assert_int_equal(0, GMC_RANGE_OK);
	for (i = 0; i < ARRAY_SIZE(codes); i++) {
		assert_true(codes[i] < 0);
		assert_string_not_equal("GMC_RANGE_(unknown)", gmc_range_strerror(codes[i]));
		for (j = 0; j < i; j++) {
			assert_int_not_equal(codes[i], codes[j]);
			assert_string_not_equal(gmc_range_strerror(codes[i]), gmc_range_strerror(codes[j]));
		}
	}
	assert_string_equal("GMC_RANGE_ENOSPC", gmc_range_strerror(GMC_RANGE_ENOSPC));
	assert_string_equal("GMC_RANGE_(unknown)", gmc_range_strerror(12345));
}

/* ------------------------------------------------------------ tests: error paths */

static void test_insert_errors(void **state)
{
	const uint64_t base = 0x10000, size = MiB;
	const struct {
		const char *name;
		uint64_t size, align;
		int mode;
		uint64_t rs, re;
		int rc;
	} rows[] = {
		{ "zero size", 0, 0, GMC_RANGE_LOW, 0, 0, GMC_RANGE_EINVAL },
		{ "bad mode", 0x1000, 0, 7, 0, 0, GMC_RANGE_EINVAL },
		{ "negative mode", 0x1000, 0, -1, 0, 0, GMC_RANGE_EINVAL },
		{ "align 3", 0x1000, 3, GMC_RANGE_LOW, 0, 0, GMC_RANGE_EALIGN },
		{ "align 0x3000", 0x1000, 0x3000, GMC_RANGE_BEST, 0, 0, GMC_RANGE_EALIGN },
		{ "align 2^63+1", 0x1000, BIT(63) + 1, GMC_RANGE_HIGH, 0, 0, GMC_RANGE_EALIGN },
		{ "align all ones", 0x1000, UINT64_MAX, GMC_RANGE_LOW, 0, 0, GMC_RANGE_EALIGN },
		{ "size > manager", MiB + 1, 0, GMC_RANGE_LOW, 0, 0, GMC_RANGE_ENOSPC },
		{ "size huge", UINT64_MAX, 0, GMC_RANGE_HIGH, 0, 0, GMC_RANGE_ENOSPC },
		{ "size > free", MiB, 0, GMC_RANGE_BEST, 0, 0, GMC_RANGE_ENOSPC },
		{ "range below manager", 0x1000, 0, GMC_RANGE_LOW, 0, base, GMC_RANGE_ERANGE },
		{ "range above manager", 0x1000, 0, GMC_RANGE_LOW, base + size, 0, GMC_RANGE_ERANGE },
		{ "range empty", 0x1000, 0, GMC_RANGE_LOW, 0x20000, 0x20000, GMC_RANGE_ERANGE },
		{ "range inverted", 0x1000, 0, GMC_RANGE_HIGH, 0x30000, 0x20000, GMC_RANGE_ERANGE },
		{ "range too small", 0x2000, 0, GMC_RANGE_LOW, 0x20000, 0x21000, GMC_RANGE_ENOSPC },
		{ "no aligned address", 0x1000, BIT(40), GMC_RANGE_LOW, 0, 0, GMC_RANGE_ENOSPC },
		{ "align 2^63 nowhere", 1, BIT(63), GMC_RANGE_HIGH, 0, 0, GMC_RANGE_ENOSPC },
		{ "range all occupied", 0x1000, 0, GMC_RANGE_BEST, base, base + 0x1000, GMC_RANGE_ENOSPC },
	};
	struct gmc_range_mgr m, zeroed;
	struct gmc_range_node used = { 0 }, n;
	struct snap s;
	size_t i;

	(void)state;
	assert_ok(gmc_range_init(&m, base, size));
	assert_ok(gmc_range_insert(&m, &used, 0x1000, 0, GMC_RANGE_LOW));
	assert_u64(base, used.start);
	take_snap(&m, &s);
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		memset(&n, 0, sizeof(n));
		set_row(i, rows[i].name);
		assert_rc(rows[i].rc, gmc_range_insert_in_range(&m, &n, rows[i].size, rows[i].align,
								(enum gmc_range_mode)rows[i].mode,
								rows[i].rs, rows[i].re));
		assert_node_zero(&n);
		assert_unchanged(&m, &s);
	}

	/* NULL / uninitialised manager / NULL node / node already in use */
	memset(&n, 0, sizeof(n));
	assert_rc(GMC_RANGE_EINVAL, gmc_range_insert(NULL, &n, 0x1000, 0, GMC_RANGE_LOW));
	assert_node_zero(&n);
	memset(&zeroed, 0, sizeof(zeroed));
	assert_rc(GMC_RANGE_EINVAL, gmc_range_insert(&zeroed, &n, 0x1000, 0, GMC_RANGE_LOW));
	assert_rc(GMC_RANGE_EINVAL, gmc_range_insert(&m, NULL, 0x1000, 0, GMC_RANGE_LOW));
	assert_rc(GMC_RANGE_EINVAL, gmc_range_insert(&m, &used, 0x1000, 0, GMC_RANGE_LOW));
	assert_u64(base, used.start); /* in use: left untouched */
	assert_u64(0x1000, used.size);
	assert_rc(GMC_RANGE_EINVAL, gmc_range_reserve(&m, &used, base + 0x8000, 0x1000));
	assert_u64(base, used.start);
	assert_unchanged(&m, &s);

	/* a failure on a dirty, unowned node still leaves safe out values */
	memset(&n, 0, sizeof(n));
	n.start = 0x1234;
	n.size = 0x99;
	assert_rc(GMC_RANGE_EALIGN, gmc_range_insert(&m, &n, 0x1000, 6, GMC_RANGE_LOW));
	assert_node_zero(&n);
	assert_ok(gmc_range_remove(&m, &used));
	assert_ok(gmc_range_fini(&m));
}

static void test_reserve_errors(void **state)
{
	const uint64_t base = 0x1000, size = MiB;
	const struct {
		const char *name;
		uint64_t start, size;
		int rc;
	} rows[] = {
		{ "zero size", 0x8000, 0, GMC_RANGE_EINVAL },
		{ "wraps 2^64", UINT64_MAX - 10, 100, GMC_RANGE_EWRAP },
		{ "wraps 2^64 by one", UINT64_MAX, 2, GMC_RANGE_EWRAP },
		{ "below manager", 0, 0x1000, GMC_RANGE_ERANGE },
		{ "straddles start", 0x800, 0x1000, GMC_RANGE_ERANGE },
		{ "straddles end", base + size - 0x1000, 0x2000, GMC_RANGE_ERANGE },
		{ "above manager", base + size, 1, GMC_RANGE_ERANGE },
		{ "exactly occupied", 0x5000, 0x1000, GMC_RANGE_EBUSY },
		{ "overlaps node start", 0x4800, 0x1000, GMC_RANGE_EBUSY },
		{ "overlaps node end", 0x5800, 0x1000, GMC_RANGE_EBUSY },
		{ "inside node", 0x5400, 0x10, GMC_RANGE_EBUSY },
		{ "covers node", 0x4000, 0x3000, GMC_RANGE_EBUSY },
		{ "last byte of node", 0x5fff, 1, GMC_RANGE_EBUSY },
		{ "covers everything", base, size, GMC_RANGE_EBUSY },
	};
	struct gmc_range_mgr m;
	struct gmc_range_node busy = { 0 }, n, a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	struct snap s;
	size_t i;

	(void)state;
	assert_ok(gmc_range_init(&m, base, size));
	assert_ok(gmc_range_reserve(&m, &busy, 0x5000, 0x1000));
	assert_u64(0x5000, busy.start);
	take_snap(&m, &s);
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		memset(&n, 0, sizeof(n));
		set_row(i, rows[i].name);
		assert_rc(rows[i].rc, gmc_range_reserve(&m, &n, rows[i].start, rows[i].size));
		assert_node_zero(&n);
		assert_unchanged(&m, &s);
	}
	assert_rc(GMC_RANGE_EINVAL, gmc_range_reserve(NULL, &n, 0x8000, 1));
	assert_rc(GMC_RANGE_EINVAL, gmc_range_reserve(&m, NULL, 0x8000, 1));

	/* the successes around it: adjacent both sides, first and last byte */
	assert_ok(gmc_range_reserve(&m, &a, 0x4000, 0x1000));
	assert_ok(gmc_range_reserve(&m, &b, 0x6000, 0x1000));
	assert_ok(gmc_range_reserve(&m, &c, base, 1));
	assert_ok(gmc_range_reserve(&m, &d, base + size - 1, 1));
	assert_mgr_ok(&m);
	assert_holes(&m, base + 1, 0x3000 - 1, 0x7000, base + size - 1 - 0x7000);
	assert_ok(gmc_range_remove(&m, &busy));
	assert_holes(&m, base + 1, 0x3000 - 1, 0x5000, 0x1000, 0x7000, base + size - 1 - 0x7000);
	assert_ok(gmc_range_remove(&m, &a));
	assert_ok(gmc_range_remove(&m, &b));
	assert_holes(&m, base + 1, size - 2);
	assert_ok(gmc_range_remove(&m, &c));
	assert_ok(gmc_range_remove(&m, &d));
	assert_holes(&m, base, size);
	assert_ok(gmc_range_fini(&m));
}

static void test_remove_errors(void **state)
{
	struct gmc_range_mgr m1, m2, zeroed;
	struct gmc_range_node a = { 0 }, b = { 0 }, fresh = { 0 };
	struct snap s1, s2;

	(void)state;
	assert_ok(gmc_range_init(&m1, 0, MiB));
	assert_ok(gmc_range_init(&m2, 0, MiB));
	assert_ok(gmc_range_insert(&m1, &a, 0x1000, 0, GMC_RANGE_LOW));
	assert_ok(gmc_range_insert(&m2, &b, 0x3000, 0, GMC_RANGE_HIGH));
	take_snap(&m1, &s1);
	take_snap(&m2, &s2);

	assert_rc(GMC_RANGE_EINVAL, gmc_range_remove(NULL, &a));
	assert_rc(GMC_RANGE_EINVAL, gmc_range_remove(&m1, NULL));
	memset(&zeroed, 0, sizeof(zeroed));
	assert_rc(GMC_RANGE_EINVAL, gmc_range_remove(&zeroed, &a));
	assert_rc(GMC_RANGE_ENOENT, gmc_range_remove(&m1, &b)); /* foreign */
	assert_rc(GMC_RANGE_ENOENT, gmc_range_remove(&m2, &a)); /* foreign */
	assert_rc(GMC_RANGE_ENOENT, gmc_range_remove(&m1, &fresh)); /* never inserted */
	assert_rc(GMC_RANGE_ENOENT, gmc_range_remove(&m1, &m1.head)); /* the sentinel */
	assert_that(!gmc_range_node_in(&m1, &b));
	assert_that(gmc_range_node_in(&m1, &a));
	assert_that(gmc_range_node_next(&m1, &b) == NULL);
	assert_unchanged(&m1, &s1);
	assert_unchanged(&m2, &s2);
	assert_u64(0, a.start);
	assert_u64(0x1000, a.size);

	assert_ok(gmc_range_remove(&m1, &a));
	assert_node_zero(&a);
	assert_rc(GMC_RANGE_ENOENT, gmc_range_remove(&m1, &a)); /* double remove */
	assert_holes(&m1, 0, MiB);
	assert_ok(gmc_range_remove(&m2, &b));
	assert_ok(gmc_range_fini(&m1));
	assert_ok(gmc_range_fini(&m2));
}

/* ------------------------------------------------------------ tests: placement */

static void test_fill_order(void **state)
{
	static const struct {
		int mode;
		uint64_t base, size, chunk;
	} rows[] = {
		{ GMC_RANGE_LOW, 0x100000, 64 * 0x1000, 0x1000 },
		{ GMC_RANGE_HIGH, 0x100000, 64 * 0x1000, 0x1000 },
		{ GMC_RANGE_BEST, 0x100000, 64 * 0x1000, 0x1000 },
		{ GMC_RANGE_LOW, TOP20, MiB, 0x4000 },
		{ GMC_RANGE_HIGH, TOP20, MiB, 0x4000 },
		{ GMC_RANGE_BEST, TOP20, MiB, 0x4000 },
	};
	size_t r, i;

	(void)state;
	for (r = 0; r < ARRAY_SIZE(rows); r++) {
		struct gmc_range_mgr m;
		struct gmc_range_node nodes[64], extra = { 0 };
		uint64_t count = rows[r].size / rows[r].chunk;

		set_row(r, NULL);
		memset(nodes, 0, sizeof(nodes));
		assert_ok(gmc_range_init(&m, rows[r].base, rows[r].size));
		for (i = 0; i < count; i++) {
			uint64_t exp = rows[r].mode == GMC_RANGE_HIGH
					       ? rows[r].base + rows[r].size - (i + 1) * rows[r].chunk
					       : rows[r].base + i * rows[r].chunk;

			assert_ok(gmc_range_insert(&m, &nodes[i], rows[r].chunk, 0,
						   (enum gmc_range_mode)rows[r].mode));
			assert_u64(exp, nodes[i].start);
		}
		assert_mgr_ok(&m);
		assert_rc(GMC_RANGE_ENOSPC, gmc_range_insert(&m, &extra, 1, 0, GMC_RANGE_BEST));
		for (i = 0; i < count; i++)
			assert_ok(gmc_range_remove(&m, &nodes[i]));
		assert_holes(&m, rows[r].base, rows[r].size);
		assert_ok(gmc_range_fini(&m));
	}
}

static void test_fill_free_reinsert(void **state)
{
	static const int modes[] = { GMC_RANGE_BEST, GMC_RANGE_LOW, GMC_RANGE_HIGH };
	static const size_t victims[] = { 0, 1, 17, 31, 62, 63 };
	size_t mi, vi, i;

	(void)state;
	for (mi = 0; mi < ARRAY_SIZE(modes); mi++) {
		enum gmc_range_mode mode = (enum gmc_range_mode)modes[mi];
		struct gmc_range_mgr m;
		struct gmc_range_node nodes[64];
		uint64_t sizes[64], total = 0;

		/* mixed sizes 1..3 pages, laid out to fill the manager exactly */
		for (i = 0; i < 64; i++) {
			sizes[i] = (1 + i % 3) * 0x1000;
			total += sizes[i];
		}
		memset(nodes, 0, sizeof(nodes));
		assert_ok(gmc_range_init(&m, 0x7000000, total));
		for (i = 0; i < 64; i++)
			assert_ok(gmc_range_insert(&m, &nodes[i], sizes[i], 0x1000, mode));
		assert_mgr_ok(&m);
		assert_u64(0, m.free_bytes);
		for (vi = 0; vi < ARRAY_SIZE(victims); vi++) {
			struct gmc_range_node *v = &nodes[victims[vi]];
			uint64_t old = v->start;

			assert_ok(gmc_range_remove(&m, v));
			assert_holes(&m, old, sizes[victims[vi]]);
			assert_ok(gmc_range_insert(&m, v, sizes[victims[vi]], 0x1000, mode));
			assert_u64(old, v->start);
			assert_u64(0, m.free_bytes);
		}
		assert_mgr_ok(&m);
		for (i = 0; i < 64; i++)
			assert_ok(gmc_range_remove(&m, &nodes[i]));
		assert_ok(gmc_range_fini(&m));
	}
}

/*
 * Manager [0, 1 MiB) with these holes (everything else reserved):
 *   A [0x00000,+0x1000) at the low edge      C [0x40000,+0x2000)
 *   B [0x11000,+0x3000)                      F [0x61000,+0x2000) (8 KiB, odd pages)
 *   D [0x80000,+0x4000)                      E [0xFF000,+0x1000) at the high edge
 */
static void build_edge_layout(struct gmc_range_mgr *m, struct gmc_range_node *busy)
{
	static const uint64_t used[][2] = {
		{ 0x01000, 0x10000 }, { 0x14000, 0x2C000 }, { 0x42000, 0x1F000 },
		{ 0x63000, 0x1D000 }, { 0x84000, 0x7B000 },
	};
	size_t i;

	assert_ok(gmc_range_init(m, 0, MiB));
	for (i = 0; i < ARRAY_SIZE(used); i++) {
		memset(&busy[i], 0, sizeof(busy[i]));
		assert_ok(gmc_range_reserve(m, &busy[i], used[i][0], used[i][1]));
	}
}

#define EDGE_HOLES                                                                       \
	0x00000, 0x1000, 0x11000, 0x3000, 0x40000, 0x2000, 0x61000, 0x2000, 0x80000, 0x4000, \
		0xFF000, 0x1000

static void test_hole_selection(void **state)
{
	static const struct {
		int mode;
		uint64_t size, align, rs, re;
		int rc;
		uint64_t addr;
	} rows[] = {
		/* plain: edges too small for 8 KiB */
		{ GMC_RANGE_LOW, 0x2000, 0, 0, 0, GMC_RANGE_OK, 0x11000 },
		{ GMC_RANGE_HIGH, 0x2000, 0, 0, 0, GMC_RANGE_OK, 0x82000 },
		{ GMC_RANGE_BEST, 0x2000, 0, 0, 0, GMC_RANGE_OK, 0x40000 }, /* C and F tie: lower */
		{ GMC_RANGE_LOW, 0x1000, 0, 0, 0, GMC_RANGE_OK, 0x00000 },
		{ GMC_RANGE_HIGH, 0x1000, 0, 0, 0, GMC_RANGE_OK, 0xFF000 },
		{ GMC_RANGE_BEST, 0x1000, 0, 0, 0, GMC_RANGE_OK, 0x00000 }, /* A and E tie: lower */
		{ GMC_RANGE_BEST, 0x3000, 0, 0, 0, GMC_RANGE_OK, 0x11000 }, /* exact fit B */
		{ GMC_RANGE_HIGH, 0x3000, 0, 0, 0, GMC_RANGE_OK, 0x81000 },
		{ GMC_RANGE_LOW, 0x4000, 0, 0, 0, GMC_RANGE_OK, 0x80000 },
		{ GMC_RANGE_HIGH, 0x4000, 0, 0, 0, GMC_RANGE_OK, 0x80000 },
		{ GMC_RANGE_BEST, 0x4001, 0, 0, 0, GMC_RANGE_ENOSPC, 0 },
		{ GMC_RANGE_LOW, 0x4001, 0, 0, 0, GMC_RANGE_ENOSPC, 0 },
		{ GMC_RANGE_HIGH, 0x4001, 0, 0, 0, GMC_RANGE_ENOSPC, 0 },
		/* alignment: holes big enough but misaligned are skipped */
		{ GMC_RANGE_LOW, 0x2000, 0x2000, 0, 0, GMC_RANGE_OK, 0x12000 },
		{ GMC_RANGE_LOW, 0x2000, 0x4000, 0, 0, GMC_RANGE_OK, 0x40000 },
		{ GMC_RANGE_HIGH, 0x2000, 0x8000, 0, 0, GMC_RANGE_OK, 0x80000 },
		{ GMC_RANGE_HIGH, 0x1000, 0x2000, 0, 0, GMC_RANGE_OK, 0x82000 }, /* E misaligned */
		{ GMC_RANGE_LOW, 0x1000, 0x2000, 0, 0, GMC_RANGE_OK, 0x00000 },
		{ GMC_RANGE_BEST, 0x3000, 0x2000, 0, 0, GMC_RANGE_OK, 0x80000 }, /* B misfits */
		{ GMC_RANGE_BEST, 0x2000, 0x80000, 0, 0, GMC_RANGE_OK, 0x80000 },
		{ GMC_RANGE_BEST, 0x1000, BIT(20), 0, 0, GMC_RANGE_OK, 0x00000 },
		{ GMC_RANGE_HIGH, 0x1000, BIT(20), 0, 0, GMC_RANGE_OK, 0x00000 },
		{ GMC_RANGE_HIGH, 0x1000, BIT(63), 0, 0, GMC_RANGE_OK, 0x00000 },
		{ GMC_RANGE_LOW, 0x2000, BIT(63), 0, 0, GMC_RANGE_ENOSPC, 0 },
		/* range restriction */
		{ GMC_RANGE_LOW, 0x1000, 0, 0x50000, 0x90000, GMC_RANGE_OK, 0x61000 },
		{ GMC_RANGE_HIGH, 0x1000, 0, 0x50000, 0x90000, GMC_RANGE_OK, 0x83000 },
		{ GMC_RANGE_BEST, 0x1000, 0, 0x50000, 0x90000, GMC_RANGE_OK, 0x61000 },
		{ GMC_RANGE_LOW, 0x2000, 0, 0x12000, 0x90000, GMC_RANGE_OK, 0x12000 }, /* clipped B */
		{ GMC_RANGE_LOW, 0x2000, 0, 0x13000, 0x90000, GMC_RANGE_OK, 0x40000 },
		{ GMC_RANGE_HIGH, 0x2000, 0, 0, 0x83000, GMC_RANGE_OK, 0x81000 },      /* clipped D */
		{ GMC_RANGE_BEST, 0x4000, 0, 0, 0x83000, GMC_RANGE_ENOSPC, 0 },
		{ GMC_RANGE_BEST, 0x2000, 0, 0x41000, 0x100000, GMC_RANGE_OK, 0x61000 }, /* C clipped */
		{ GMC_RANGE_HIGH, 0x1000, 0, 0xFF800, 0, GMC_RANGE_ENOSPC, 0 },
		{ GMC_RANGE_LOW, 0x800, 0, 0xFF800, 0, GMC_RANGE_OK, 0xFF800 },
		{ GMC_RANGE_HIGH, 0x800, 0, 0, 0x800, GMC_RANGE_OK, 0x0 },
		{ GMC_RANGE_BEST, 0x1000, 0, 0x2000, 0x11000, GMC_RANGE_ENOSPC, 0 }, /* all busy */
		{ GMC_RANGE_LOW, 0x10, 0, 0x2000000, 0, GMC_RANGE_ERANGE, 0 },
	};
	struct gmc_range_mgr m;
	struct gmc_range_node busy[5], n;
	size_t i;

	(void)state;
	build_edge_layout(&m, busy);
	assert_holes(&m, EDGE_HOLES);
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		memset(&n, 0, sizeof(n));
		set_row(i, NULL);
		assert_rc(rows[i].rc, gmc_range_insert_in_range(&m, &n, rows[i].size, rows[i].align,
								(enum gmc_range_mode)rows[i].mode,
								rows[i].rs, rows[i].re));
		assert_u64(rows[i].addr, n.start);
		if (rows[i].rc == GMC_RANGE_OK) {
			assert_u64(rows[i].size, n.size);
			assert_mgr_ok(&m);
			assert_ok(gmc_range_remove(&m, &n));
		}
		assert_holes(&m, EDGE_HOLES); /* removal merged back */
	}
	for (i = 0; i < 5; i++)
		assert_ok(gmc_range_remove(&m, &busy[i]));
	assert_holes(&m, 0, MiB);
	assert_ok(gmc_range_fini(&m));
}

/* Many small holes outside a restriction do not change the best-fit answer. */
static void test_best_in_range(void **state)
{
	enum { N = 600 };
	struct gmc_range_mgr m;
	static struct gmc_range_node nodes[N];
	struct gmc_range_node x = { 0 }, y = { 0 }, z = { 0 }, n = { 0 };
	size_t i;

	(void)state;
	memset(nodes, 0, sizeof(nodes));
	/* [0, 4.8 MiB) as 600 8 KiB nodes, then free every other one below 4 MiB */
	assert_ok(gmc_range_init(&m, 0, N * 0x2000));
	for (i = 0; i < N; i++)
		assert_ok(gmc_range_insert(&m, &nodes[i], 0x2000, 0, GMC_RANGE_LOW));
	for (i = 0; i < 512; i += 2)
		assert_ok(gmc_range_remove(&m, &nodes[i]));
	/* inside the last part: one 16 KiB and one 24 KiB hole */
	assert_ok(gmc_range_remove(&m, &nodes[560]));
	assert_ok(gmc_range_remove(&m, &nodes[561]));
	assert_ok(gmc_range_remove(&m, &nodes[570]));
	assert_ok(gmc_range_remove(&m, &nodes[571]));
	assert_ok(gmc_range_remove(&m, &nodes[572]));
	assert_mgr_ok(&m);
	assert_u64(256 + 2, m.hole_count);

	/* unrestricted best fit of 4 KiB: the lowest 8 KiB hole */
	assert_ok(gmc_range_insert(&m, &x, 0x1000, 0, GMC_RANGE_BEST));
	assert_u64(0, x.start);
	/* restricted to the top 20 %: the 16 KiB hole, not the 8 KiB ones below */
	assert_ok(gmc_range_insert_in_range(&m, &y, 0x1000, 0, GMC_RANGE_BEST, 512 * 0x2000, 0));
	assert_u64(560 * 0x2000, y.start);
	/* 20 KiB only fits the 24 KiB hole */
	assert_ok(gmc_range_insert_in_range(&m, &z, 0x5000, 0, GMC_RANGE_BEST, 512 * 0x2000, 0));
	assert_u64(570 * 0x2000, z.start);
	/* a restriction covering both kinds: the 4 KiB remnant left above z wins */
	assert_ok(gmc_range_insert_in_range(&m, &n, 0x1000, 0, GMC_RANGE_BEST, 100 * 0x2000, 0));
	assert_u64(570 * 0x2000 + 0x5000, n.start);
	assert_mgr_ok(&m);
	assert_ok(gmc_range_remove(&m, &n));
	/* 8 KiB in the same restriction: the lowest 8 KiB hole inside it */
	assert_ok(gmc_range_insert_in_range(&m, &n, 0x2000, 0, GMC_RANGE_BEST, 100 * 0x2000, 0));
	assert_u64(100 * 0x2000, n.start);
	assert_ok(gmc_range_remove(&m, &n));
	/* aligned: the 8 KiB holes start at multiples of 16 KiB; 32 KiB alignment only
	 * fits every other one, and the one at 0 is outside the restriction */
	assert_ok(gmc_range_insert_in_range(&m, &n, 0x2000, 0x8000, GMC_RANGE_BEST, 0x2000, 0));
	assert_u64(0x8000, n.start);
	assert_ok(gmc_range_remove(&m, &n));
	assert_ok(gmc_range_remove(&m, &x));
	assert_ok(gmc_range_remove(&m, &y));
	assert_ok(gmc_range_remove(&m, &z));
	for (i = 0; i < N; i++)
		if (gmc_range_node_in(&m, &nodes[i]))
			assert_ok(gmc_range_remove(&m, &nodes[i]));
	assert_holes(&m, 0, N * 0x2000);
	assert_ok(gmc_range_fini(&m));
}

static void test_last_fifth(void **state)
{
	/* "overlay/capture only in the last 20 % of the segment" */
	const uint64_t base = 0x40000000, size = 10 * MiB, lo = base + size / 5 * 4;
	struct gmc_range_mgr m;
	struct gmc_range_node a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };

	(void)state;
	assert_ok(gmc_range_init(&m, base, size));
	assert_ok(gmc_range_insert_in_range(&m, &a, MiB, 0x10000, GMC_RANGE_HIGH, lo, base + size));
	assert_u64(base + size - MiB, a.start);
	assert_ok(gmc_range_insert_in_range(&m, &b, MiB, 0x10000, GMC_RANGE_LOW, lo, base + size));
	assert_u64(lo, b.start);
	/* 2 MiB region is now full */
	assert_rc(GMC_RANGE_ENOSPC,
		  gmc_range_insert_in_range(&m, &c, 1, 0, GMC_RANGE_BEST, lo, base + size));
	/* a bank hint hanging over the manager start is clipped */
	assert_ok(gmc_range_insert_in_range(&m, &c, 0x1000, 0, GMC_RANGE_LOW, 0, base + 0x2000));
	assert_u64(base, c.start);
	assert_rc(GMC_RANGE_ENOSPC,
		  gmc_range_insert_in_range(&m, &d, 0x2000, 0, GMC_RANGE_LOW, 0, base + 0x2000));
	assert_ok(gmc_range_insert(&m, &d, 0x2000, 0, GMC_RANGE_LOW));
	assert_u64(base + 0x1000, d.start);
	assert_holes(&m, base + 0x3000, lo - base - 0x3000);
	assert_ok(gmc_range_remove(&m, &a));
	assert_ok(gmc_range_remove(&m, &b));
	assert_ok(gmc_range_remove(&m, &c));
	assert_ok(gmc_range_remove(&m, &d));
	assert_ok(gmc_range_fini(&m));
}

/* ------------------------------------------------------------ tests: 64-bit edges */

static void test_alignment_extremes(void **state)
{
	struct gmc_range_mgr m;
	struct gmc_range_node a = { 0 }, b = { 0 }, c = { 0 };

	(void)state;
	/* [0, 2^64 - 1): alignment 2^63 has exactly two homes */
	assert_ok(gmc_range_init(&m, 0, UINT64_MAX));
	assert_ok(gmc_range_insert(&m, &a, 1, BIT(63), GMC_RANGE_LOW));
	assert_u64(0, a.start);
	assert_ok(gmc_range_insert(&m, &b, 1, BIT(63), GMC_RANGE_LOW));
	assert_u64(BIT(63), b.start);
	assert_rc(GMC_RANGE_ENOSPC, gmc_range_insert(&m, &c, 1, BIT(63), GMC_RANGE_BEST));
	assert_mgr_ok(&m);
	assert_ok(gmc_range_remove(&m, &a));
	assert_ok(gmc_range_remove(&m, &b));
	assert_ok(gmc_range_insert(&m, &a, 1, BIT(63), GMC_RANGE_HIGH));
	assert_u64(BIT(63), a.start);
	assert_ok(gmc_range_remove(&m, &a));
	/* 2^63 bytes at 2^63 would end at 2^64 > last, so top-down lands at 0 */
	assert_ok(gmc_range_insert(&m, &a, BIT(63), BIT(63), GMC_RANGE_HIGH));
	assert_u64(0, a.start);
	assert_ok(gmc_range_insert(&m, &b, BIT(63) - 1, 0, GMC_RANGE_HIGH));
	assert_u64(BIT(63), b.start);
	assert_u64(0, m.free_bytes);
	assert_mgr_ok(&m);
	assert_ok(gmc_range_remove(&m, &a));
	assert_ok(gmc_range_remove(&m, &b));
	assert_ok(gmc_range_fini(&m));

	/* a one-byte manager at the very last address */
	assert_ok(gmc_range_init(&m, UINT64_MAX, 1));
	assert_ok(gmc_range_insert(&m, &a, 1, 0, GMC_RANGE_HIGH));
	assert_u64(UINT64_MAX, a.start);
	assert_mgr_ok(&m);
	assert_u64(0, m.hole_count);
	assert_ok(gmc_range_remove(&m, &a));
	assert_ok(gmc_range_reserve(&m, &a, UINT64_MAX, 1));
	assert_rc(GMC_RANGE_EWRAP, gmc_range_reserve(&m, &b, UINT64_MAX, 2));
	assert_ok(gmc_range_remove(&m, &a));
	assert_ok(gmc_range_fini(&m));
}

/* [2^64 - 2^20, 2^64) is supported: no overflow at the top. */
static void test_top_of_address_space(void **state)
{
	static const struct {
		int mode;
		uint64_t size, align, rs, re;
		int rc;
		uint64_t addr;
	} rows[] = {
		{ GMC_RANGE_HIGH, 0x1000, 0, 0, 0, GMC_RANGE_OK, UINT64_MAX - 0xFFF },
		{ GMC_RANGE_LOW, 0x1000, 0, 0, 0, GMC_RANGE_OK, TOP20 },
		{ GMC_RANGE_BEST, 0x1000, 0, 0, 0, GMC_RANGE_OK, TOP20 },
		{ GMC_RANGE_HIGH, 1, 0, 0, 0, GMC_RANGE_OK, UINT64_MAX },
		{ GMC_RANGE_HIGH, MiB, 0, 0, 0, GMC_RANGE_OK, TOP20 },
		{ GMC_RANGE_LOW, MiB, 0, 0, 0, GMC_RANGE_OK, TOP20 },
		{ GMC_RANGE_HIGH, 0x1000, BIT(20), 0, 0, GMC_RANGE_OK, TOP20 },
		{ GMC_RANGE_LOW, 0x1000, BIT(19), 0, 0, GMC_RANGE_OK, TOP20 },
		{ GMC_RANGE_HIGH, 0x1000, BIT(19), 0, 0, GMC_RANGE_OK, UINT64_MAX - BIT(19) + 1 },
		{ GMC_RANGE_LOW, 0x1000, BIT(21), 0, 0, GMC_RANGE_ENOSPC, 0 },
		{ GMC_RANGE_HIGH, 0x1000, BIT(21), 0, 0, GMC_RANGE_ENOSPC, 0 },
		{ GMC_RANGE_BEST, 1, BIT(63), 0, 0, GMC_RANGE_ENOSPC, 0 },
		{ GMC_RANGE_LOW, MiB + 1, 0, 0, 0, GMC_RANGE_ENOSPC, 0 },
		{ GMC_RANGE_HIGH, UINT64_MAX, 0, 0, 0, GMC_RANGE_ENOSPC, 0 },
		{ GMC_RANGE_HIGH, 0x1000, 0, UINT64_MAX - BIT(19) + 1, 0, GMC_RANGE_OK, UINT64_MAX - 0xFFF },
		{ GMC_RANGE_LOW, 0x1000, 0, UINT64_MAX - BIT(19) + 1, 0, GMC_RANGE_OK, UINT64_MAX - BIT(19) + 1 },
		{ GMC_RANGE_LOW, 0x1000, 0, 0, TOP20 + 0x1000, GMC_RANGE_OK, TOP20 },
		{ GMC_RANGE_HIGH, 0x1000, 0, 0, TOP20 + 0x1000, GMC_RANGE_OK, TOP20 },
		{ GMC_RANGE_LOW, 0x1000, 0, 0, TOP20, GMC_RANGE_ERANGE, 0 },
		{ GMC_RANGE_LOW, 0x1000, 0, UINT64_MAX, UINT64_MAX, GMC_RANGE_ERANGE, 0 },
		{ GMC_RANGE_HIGH, 2, 0, UINT64_MAX, 0, GMC_RANGE_ENOSPC, 0 },
		{ GMC_RANGE_HIGH, 1, 0, UINT64_MAX, 0, GMC_RANGE_OK, UINT64_MAX },
	};
	struct gmc_range_mgr m;
	struct gmc_range_node n, nodes[256], r = { 0 };
	size_t i;

	(void)state;
	assert_ok(gmc_range_init(&m, TOP20, MiB));
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		memset(&n, 0, sizeof(n));
		set_row(i, NULL);
		assert_rc(rows[i].rc, gmc_range_insert_in_range(&m, &n, rows[i].size, rows[i].align,
								(enum gmc_range_mode)rows[i].mode,
								rows[i].rs, rows[i].re));
		assert_u64(rows[i].addr, n.start);
		if (rows[i].rc == GMC_RANGE_OK) {
			assert_mgr_ok(&m);
			assert_ok(gmc_range_remove(&m, &n));
		}
		assert_holes(&m, TOP20, MiB);
	}

	/* reserve up to the last byte; one past wraps */
	assert_ok(gmc_range_reserve(&m, &r, UINT64_MAX - 0xFFF, 0x1000));
	assert_holes(&m, TOP20, MiB - 0x1000);
	assert_rc(GMC_RANGE_EWRAP, gmc_range_reserve(&m, &n, UINT64_MAX - 0xFFF, 0x1001));
	assert_node_zero(&n);
	assert_ok(gmc_range_remove(&m, &r));

	/* fill top-down, free the top node, refill lands at the top again */
	memset(nodes, 0, sizeof(nodes));
	for (i = 0; i < 256; i++) {
		assert_ok(gmc_range_insert(&m, &nodes[i], 0x1000, 0x1000, GMC_RANGE_HIGH));
		assert_u64(UINT64_MAX - 0xFFF - i * 0x1000, nodes[i].start);
	}
	assert_u64(0, m.hole_count);
	assert_mgr_ok(&m);
	assert_ok(gmc_range_remove(&m, &nodes[0]));
	assert_holes(&m, UINT64_MAX - 0xFFF, 0x1000);
	assert_ok(gmc_range_insert(&m, &nodes[0], 0x1000, 0, GMC_RANGE_LOW));
	assert_u64(UINT64_MAX - 0xFFF, nodes[0].start);
	for (i = 0; i < 256; i += 2)
		assert_ok(gmc_range_remove(&m, &nodes[i]));
	assert_mgr_ok(&m);
	assert_u64(128, m.hole_count);
	for (i = 1; i < 256; i += 2)
		assert_ok(gmc_range_remove(&m, &nodes[i]));
	assert_holes(&m, TOP20, MiB);
	assert_ok(gmc_range_fini(&m));
}

/* ------------------------------------------------------------ tests: fragmentation, iteration */

static void test_fragmentation(void **state)
{
	struct gmc_range_mgr m;
	static struct gmc_range_node nodes[256];
	struct gmc_range_node big = { 0 }, mid = { 0 };
	struct gmc_range_stats st;
	size_t i;

	(void)state;
	memset(nodes, 0, sizeof(nodes));
	assert_ok(gmc_range_init(&m, 0, MiB));
	for (i = 0; i < 256; i++)
		assert_ok(gmc_range_insert(&m, &nodes[i], 0x1000, 0, GMC_RANGE_LOW));
	for (i = 0; i < 256; i += 2)
		assert_ok(gmc_range_remove(&m, &nodes[i]));
	assert_ok(gmc_range_get_stats(&m, &st));
	assert_u64(MiB / 2, st.free_bytes);
	assert_u64(128, st.hole_count);
	assert_u64(0x1000, st.largest_hole);
	/* half the segment is free, yet 8 KiB does not fit anywhere */
	assert_rc(GMC_RANGE_ENOSPC, gmc_range_insert(&m, &big, 0x2000, 0, GMC_RANGE_BEST));
	assert_rc(GMC_RANGE_ENOSPC, gmc_range_insert(&m, &big, 0x2000, 0, GMC_RANGE_LOW));
	assert_rc(GMC_RANGE_ENOSPC, gmc_range_insert(&m, &big, 0x2000, 0, GMC_RANGE_HIGH));
	/* freeing node 101 merges the holes at 100 and 102 into 12 KiB */
	assert_ok(gmc_range_remove(&m, &nodes[101]));
	assert_ok(gmc_range_get_stats(&m, &st));
	assert_u64(127, st.hole_count);
	assert_u64(0x3000, st.largest_hole);
	assert_ok(gmc_range_insert(&m, &big, 0x2000, 0, GMC_RANGE_HIGH));
	assert_u64(101 * 0x1000, big.start);
	assert_ok(gmc_range_insert(&m, &mid, 0x1000, 0, GMC_RANGE_BEST));
	assert_u64(0, mid.start);
	assert_mgr_ok(&m);
	/* free everything: a single hole again */
	assert_ok(gmc_range_remove(&m, &big));
	assert_ok(gmc_range_remove(&m, &mid));
	for (i = 1; i < 256; i += 2)
		if (i != 101)
			assert_ok(gmc_range_remove(&m, &nodes[i]));
	assert_holes(&m, 0, MiB);
	assert_ok(gmc_range_fini(&m));
}

static void test_iteration(void **state)
{
	struct gmc_range_mgr m;
	struct gmc_range_node a = { 0 }, b = { 0 }, c = { 0 };
	struct gmc_range_hole_iter it = { 0 };
	struct gmc_range_hole h;
	struct gmc_range_node *p;

	(void)state;
	assert_ok(gmc_range_init(&m, 0x1000, 0x10000));
	assert_that(gmc_range_node_first(&m) == NULL);
	assert_that(gmc_range_node_first(NULL) == NULL);
	/* insert out of address order */
	assert_ok(gmc_range_reserve(&m, &b, 0x6000, 0x1000));
	assert_ok(gmc_range_reserve(&m, &c, 0x10000, 0x1000)); /* ends the manager */
	assert_ok(gmc_range_reserve(&m, &a, 0x1000, 0x2000));  /* starts it */
	p = gmc_range_node_first(&m);
	assert_that(p == &a);
	p = gmc_range_node_next(&m, p);
	assert_that(p == &b);
	p = gmc_range_node_next(&m, p);
	assert_that(p == &c);
	assert_that(gmc_range_node_next(&m, p) == NULL);
	assert_that(gmc_range_hole_next(&m, &it, &h));
	assert_u64(0x3000, h.start);
	assert_u64(0x3000, h.size);
	assert_that(gmc_range_hole_next(&m, &it, &h));
	assert_u64(0x7000, h.start);
	assert_u64(0x9000, h.size);
	assert_that(!gmc_range_hole_next(&m, &it, &h));
	assert_u64(0, h.size);
	assert_that(!gmc_range_hole_next(&m, &it, &h)); /* stays at the end */
	assert_that(!gmc_range_hole_next(NULL, &it, &h));
	assert_mgr_ok(&m);
	assert_ok(gmc_range_remove(&m, &a));
	assert_ok(gmc_range_remove(&m, &b));
	assert_ok(gmc_range_remove(&m, &c));
	assert_ok(gmc_range_fini(&m));
}

/* ------------------------------------------------------------ tests: random */

struct rand_cfg {
	uint64_t seed, start, size;
	size_t nodes, ops;
};

/*
 * Mixed sizes averaging about msize / (4 * nodes), so that "nodes" live
 * allocations fill roughly a quarter of the manager; with giants, one
 * request in 20 is a random size up to the whole manager (mostly refused).
 */
static uint64_t rand_size(uint64_t msize, size_t nodes, int giants)
{
	uint64_t per = msize / (4 * (uint64_t)nodes) ? msize / (4 * (uint64_t)nodes) : 1;
	uint64_t unit = per / 32 ? per / 32 : 1, r = rng_below(20);

	if (r < 12)
		return (1 + rng_below(64)) * unit;
	if (r < 18 || (r == 19 && !giants))
		return 1 + rng_below(2 * per);
	if (r < 19)
		return 1 + rng_below(8 * per);
	return 1 + rng_below(msize);
}

static uint64_t rand_align(void)
{
	uint64_t r = rng_below(10);

	if (r < 3)
		return r == 0 ? 0 : 1;
	if (r < 9)
		return BIT(rng_below(21));
	return BIT(rng_below(64));
}

static void rand_restriction(const struct ref *r, uint64_t *rs, uint64_t *re)
{
	u128 msize = (u128)r->mlast - r->mstart + 1, s, len;
	uint64_t k = rng_below(20);

	*rs = 0;
	*re = 0;
	if (k < 14)
		return;
	if (k == 19) { /* anything at all, often invalid */
		*rs = rng_next();
		*re = rng_next();
		return;
	}
	s = r->mstart + (u128)rng_next() % msize;
	len = 1 + (u128)rng_next() % msize;
	if (s + len > (u128)UINT64_MAX + 1)
		len = (u128)UINT64_MAX + 1 - s;
	*rs = (uint64_t)s;
	*re = (uint64_t)(s + len); /* 2^64 becomes 0 */
}

/* One random insert (or reserve), checked against the reference placement. */
static void rand_insert(struct gmc_range_mgr *m, struct ref *r, struct gmc_range_node *n, int giants)
{
	uint64_t msize = r->mlast - r->mstart + 1; /* never 0: a manager is < 2^64 bytes */
	uint64_t size = rand_size(msize, r->cap, giants);
	uint64_t addr;
	int rc, exp;

	if (rng_below(16) == 0) {
		uint64_t start = r->mstart + rng_below(msize);

		exp = ref_reserve_expect(r, start, size);
		rc = gmc_range_reserve(m, n, start, size);
		assert_rc(exp, rc);
		addr = start;
	} else {
		uint64_t align = rand_align(), rs, re;
		int mode = (int)rng_below(3);

		rand_restriction(r, &rs, &re);
		exp = ref_insert_expect(r, size, align, mode, rs, re, &addr);
		rc = gmc_range_insert_in_range(m, n, size, align, (enum gmc_range_mode)mode, rs, re);
		assert_rc(exp, rc);
	}
	if (rc == GMC_RANGE_OK) {
		assert_u64(addr, n->start);
		assert_u64(size, n->size);
		ref_add(r, n->start, n->size, n);
	} else {
		assert_node_zero(n);
	}
}

static void rand_remove(struct gmc_range_mgr *m, struct ref *r)
{
	size_t i = (size_t)rng_below(r->n);
	struct gmc_range_node *n = r->v[i].node;

	assert_ok(gmc_range_remove(m, n));
	assert_node_zero(n);
	ref_del(r, i);
}

static void run_random(const struct rand_cfg *cfg, size_t check_every)
{
	struct gmc_range_mgr m;
	struct gmc_range_node *nodes = calloc(cfg->nodes, sizeof(*nodes));
	size_t *perm = calloc(cfg->nodes, sizeof(*perm));
	struct ref r;
	size_t op, i;

	assert_non_null(nodes);
	assert_non_null(perm);
	g_seed = cfg->seed;
	g_seed_set = 1;
	rng_seed(cfg->seed);
	ref_init(&r, cfg->start, cfg->size, cfg->nodes);
	assert_ok(gmc_range_init(&m, cfg->start, cfg->size));

	/* insertions with interleaved removals until all node slots are used */
	for (op = 0; op < cfg->ops; op++) {
		if (r.n > 0 && (r.n == cfg->nodes || rng_below(4) == 0)) {
			rand_remove(&m, &r);
		} else {
			struct gmc_range_node *n = NULL;

			for (i = 0; i < cfg->nodes; i++)
				if (!nodes[(op + i) % cfg->nodes].mgr) {
					n = &nodes[(op + i) % cfg->nodes];
					break;
				}
			assert_non_null(n);
			rand_insert(&m, &r, n, 1);
		}
		if (check_every && op % check_every == 0)
			assert_ref(&m, &r);
	}
	assert_ref(&m, &r);

	/* removal in a seeded random order */
	for (i = 0; i < r.n; i++)
		perm[i] = i;
	for (i = r.n; i > 1; i--) {
		size_t j = (size_t)rng_below(i), t = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	{
		size_t live = r.n;
		struct gmc_range_node **order = calloc(live ? live : 1, sizeof(*order));

		assert_non_null(order);
		for (i = 0; i < live; i++)
			order[i] = r.v[perm[i]].node;
		for (i = 0; i < live; i++) {
			size_t k = ref_lower(&r, order[i]->start);

			assert_ok(gmc_range_remove(&m, order[i]));
			ref_del(&r, k);
			if (check_every && i % check_every == 0)
				assert_ref(&m, &r);
		}
		free(order);
	}
	assert_ref(&m, &r);
	assert_holes(&m, cfg->start, cfg->size);
	assert_ok(gmc_range_fini(&m));
	g_seed_set = 0;
	free(r.v);
	free(nodes);
	free(perm);
}

static void test_random_orders(void **state)
{
	static const struct rand_cfg cfgs[] = {
		{ 1, 0, MiB, 64, 600 },
		{ 2, 0x1000, 64 * MiB, 300, 2000 },
		{ 3, 0x10000001, 1ull << 32, 300, 2000 },     /* odd start */
		{ 0xC0FFEE, TOP20, MiB, 200, 2000 },          /* ends at 2^64 */
		{ 42, 0, UINT64_MAX, 200, 2000 },             /* [0, 2^64 - 1) */
		{ 7, 1, UINT64_MAX, 200, 2000 },              /* [1, 2^64) */
		{ 0xDEADBEEF, UINT64_MAX - 4095, 4096, 100, 1500 },
		{ 99, 0, 300, 64, 1000 },                     /* tiny, byte sized */
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cfgs); i++) {
		run_random(&cfgs[i], 1);
	}
}

/* 10,000 live allocations, every placement checked against the reference. */
static void test_stress_10k(void **state)
{
	const struct rand_cfg cfg = { 20240601, 0x10000001, 1ull << 36, 10000, 16000 };
	struct gmc_range_mgr m;
	struct gmc_range_node *nodes = calloc(cfg.nodes, sizeof(*nodes));
	struct ref r;
	size_t op, i, fails = 0;

	(void)state;
	assert_non_null(nodes);
	g_seed = cfg.seed;
	g_seed_set = 1;
	rng_seed(cfg.seed);
	ref_init(&r, cfg.start, cfg.size, cfg.nodes);
	assert_ok(gmc_range_init(&m, cfg.start, cfg.size));
	for (op = 0, i = 0; r.n < cfg.nodes && op < 4 * cfg.nodes; op++) {
		if (r.n > 0 && rng_below(5) == 0) {
			rand_remove(&m, &r);
		} else {
			while (nodes[i].mgr)
				i = (i + 1) % cfg.nodes;
			rand_insert(&m, &r, &nodes[i], 0);
			if (!nodes[i].mgr)
				fails++;
		}
		if (op % 2000 == 0)
			assert_ref(&m, &r);
	}
	assert_ref(&m, &r);
	assert_u64(10000, m.node_count);
	print_message("  stress: %zu ops, %zu refused inserts, %llu holes\n", op, fails,
		      (unsigned long long)m.hole_count);
	assert_that(fails > 0 && fails < op / 2); /* the error paths were exercised, not dominant */
	/* churn at 10,000 live, then drain */
	for (i = 0; i < cfg.ops; i++) {
		struct gmc_range_node *n;
		size_t k = (size_t)rng_below(r.n);

		n = r.v[k].node;
		assert_ok(gmc_range_remove(&m, n));
		ref_del(&r, k);
		rand_insert(&m, &r, n, 0);
		if (i % 4000 == 0)
			assert_ref(&m, &r);
	}
	assert_ref(&m, &r);
	while (r.n)
		rand_remove(&m, &r);
	assert_ref(&m, &r);
	assert_holes(&m, cfg.start, cfg.size);
	assert_ok(gmc_range_fini(&m));
	g_seed_set = 0;
	free(r.v);
	free(nodes);
}

/* The request mix of bench/bench_alloc.c: 4 KiB..16 MiB, 4 KiB or 64 KiB aligned. */
static void bench_req(uint64_t *size, uint64_t *align)
{
	uint64_t k = rng_below(100);

	if (k < 70)
		*size = (1 + rng_below(16)) << 12;
	else if (k < 95)
		*size = (17 + rng_below(240)) << 12;
	else
		*size = (1 + rng_below(16)) << 20;
	*align = *size >= MiB ? 0x10000 : 0x1000;
}

/* One unrestricted insert in mode, checked against the brute-force reference. */
static void mode_insert(struct gmc_range_mgr *m, struct ref *r, struct gmc_range_node *n, int mode,
			size_t *refused)
{
	uint64_t size, align, addr;
	int exp, rc;

	bench_req(&size, &align);
	exp = ref_insert_expect(r, size, align, mode, 0, 0, &addr);
	rc = gmc_range_insert(m, n, size, align, (enum gmc_range_mode)mode);
	assert_rc(exp, rc);
	if (rc == GMC_RANGE_OK) {
		assert_u64(addr, n->start);
		ref_add(r, n->start, n->size, n);
	} else {
		assert_node_zero(n);
		(*refused)++;
	}
}

/*
 * A manager used in one mode only builds only the tree that mode needs
 * (docs/placement.md); each mode alone, under the bench's request mix in a
 * segment too small for it (so requests are refused), places every request
 * where the brute-force reference says. Then the other modes are used on
 * the same manager, which builds the missing tree in the middle of its life.
 */
static void test_single_mode(void **state)
{
	static const int modes[3] = { GMC_RANGE_BEST, GMC_RANGE_LOW, GMC_RANGE_HIGH };
	const size_t live = 1500, churn = 4500;
	size_t mi;

	(void)state;
	for (mi = 0; mi < 3; mi++) {
		struct gmc_range_mgr m;
		struct gmc_range_node *nodes = calloc(live, sizeof(*nodes));
		struct ref r;
		size_t i, refused = 0;
		int mode = modes[mi];

		assert_non_null(nodes);
		g_seed = 0x5EED0F6D1Cull + mi;
		g_seed_set = 1;
		rng_seed(g_seed);
		ref_init(&r, 0x100000000ull, 512 * MiB, live);
		assert_ok(gmc_range_init(&m, 0x100000000ull, 512 * MiB));
		assert_true(!m.size_on && !m.addr_on);
		for (i = 0; i < live; i++)
			mode_insert(&m, &r, &nodes[i], mode, &refused);
		assert_ref(&m, &r);
		for (i = 0; i < churn; i++) {
			struct gmc_range_node *n = &nodes[rng_below(live)];

			if (n->mgr) {
				size_t k = ref_lower(&r, n->start);

				assert_ok(gmc_range_remove(&m, n));
				ref_del(&r, k);
			}
			mode_insert(&m, &r, n, mode, &refused);
			if (i % 500 == 0)
				assert_ref(&m, &r);
		}
		assert_ref(&m, &r);
		print_message("  %s only: %zu refused of %zu requests, %llu holes\n",
			      mode == GMC_RANGE_BEST ? "BEST" : mode == GMC_RANGE_LOW ? "LOW" : "HIGH", refused,
			      live + churn, (unsigned long long)m.hole_count);
		assert_that(refused > 0 && refused < (live + churn) / 4);
		/* only the tree this mode searches was built */
		assert_true(m.size_on == (mode == GMC_RANGE_BEST));
		assert_true(m.addr_on == (mode != GMC_RANGE_BEST));
		/* the other modes on the same manager: the missing tree is built now */
		for (i = 0; i < 600; i++) {
			struct gmc_range_node *n = &nodes[rng_below(live)];

			if (n->mgr) {
				size_t k = ref_lower(&r, n->start);

				assert_ok(gmc_range_remove(&m, n));
				ref_del(&r, k);
			}
			mode_insert(&m, &r, n, modes[(mi + 1 + i % 2) % 3], &refused);
			if (i % 100 == 0)
				assert_ref(&m, &r);
		}
		assert_true(m.size_on && m.addr_on);
		assert_ref(&m, &r);
		for (i = 0; i < live; i++)
			if (nodes[i].mgr)
				assert_ok(gmc_range_remove(&m, &nodes[i]));
		assert_holes(&m, 0x100000000ull, 512 * MiB);
		assert_ok(gmc_range_fini(&m));
		g_seed_set = 0;
		free(r.v);
		free(nodes);
	}
}

/* A reserve builds the address tree only; stats and hole iteration work from either tree. */
static void test_lazy_trees(void **state)
{
	struct gmc_range_mgr m;
	struct gmc_range_node a = { 0 }, b = { 0 }, c = { 0 };
	struct gmc_range_stats st;

	(void)state;
	assert_ok(gmc_range_init(&m, 0x1000, 0x10000));
	assert_mgr_ok(&m);
	assert_ok(gmc_range_get_stats(&m, &st));
	assert_u64(0x10000, st.largest_hole);
	/* BEST, unrestricted: size tree only */
	assert_ok(gmc_range_insert(&m, &a, 0x3000, 0, GMC_RANGE_BEST));
	assert_u64(0x1000, a.start);
	assert_ok(gmc_range_insert(&m, &b, 0x1000, 0, GMC_RANGE_BEST));
	assert_u64(0x4000, b.start);
	assert_ok(gmc_range_remove(&m, &a));
	assert_true(m.size_on && !m.addr_on);
	assert_holes(&m, 0x1000, 0x3000, 0x5000, 0xc000); /* iterated along the ring */
	assert_ok(gmc_range_get_stats(&m, &st));
	assert_u64(0xc000, st.largest_hole);
	assert_mgr_ok(&m);
	/* a restricted BEST needs the address walk: the address tree is built */
	assert_ok(gmc_range_insert_in_range(&m, &a, 0x1000, 0, GMC_RANGE_BEST, 0x6000, 0x8000));
	assert_u64(0x6000, a.start);
	assert_true(m.size_on && m.addr_on);
	assert_mgr_ok(&m);
	assert_ok(gmc_range_remove(&m, &a));
	assert_ok(gmc_range_remove(&m, &b));
	assert_ok(gmc_range_fini(&m));
	/* reserve: address tree only */
	assert_ok(gmc_range_init(&m, 0x1000, 0x10000));
	assert_ok(gmc_range_reserve(&m, &c, 0x8000, 0x1000));
	assert_true(!m.size_on && m.addr_on);
	assert_rc(GMC_RANGE_EBUSY, gmc_range_reserve(&m, &a, 0x8800, 0x1000));
	assert_mgr_ok(&m);
	assert_ok(gmc_range_remove(&m, &c));
	assert_ok(gmc_range_fini(&m));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_init, clear_context),
		cmocka_unit_test_setup(test_fini, clear_context),
		cmocka_unit_test_setup(test_status_codes, clear_context),
		cmocka_unit_test_setup(test_insert_errors, clear_context),
		cmocka_unit_test_setup(test_reserve_errors, clear_context),
		cmocka_unit_test_setup(test_remove_errors, clear_context),
		cmocka_unit_test_setup(test_fill_order, clear_context),
		cmocka_unit_test_setup(test_fill_free_reinsert, clear_context),
		cmocka_unit_test_setup(test_hole_selection, clear_context),
		cmocka_unit_test_setup(test_best_in_range, clear_context),
		cmocka_unit_test_setup(test_last_fifth, clear_context),
		cmocka_unit_test_setup(test_alignment_extremes, clear_context),
		cmocka_unit_test_setup(test_top_of_address_space, clear_context),
		cmocka_unit_test_setup(test_fragmentation, clear_context),
		cmocka_unit_test_setup(test_iteration, clear_context),
		cmocka_unit_test_setup(test_random_orders, clear_context),
		cmocka_unit_test_setup(test_stress_10k, clear_context),
		cmocka_unit_test_setup(test_single_mode, clear_context),
		cmocka_unit_test_setup(test_lazy_trees, clear_context),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
