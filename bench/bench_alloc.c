/*
 * bench_alloc.c - the range allocator (host/common/gmc_range.c), in both its
 * first-fit (GMC_RANGE_LOW, the library's default) and best-fit
 * (GMC_RANGE_BEST) modes, against an ordered-by-size best-fit baseline kept
 * in this file (holes in two treaps: by (size, start) to find the smallest
 * hole that fits, by start to merge neighbours on free; O(log n) per
 * operation). docs/placement.md, "Allocator benchmark", is the long form.
 *
 * Load (seeded): LIVE live allocations of mixed sizes (4..64 KiB mostly,
 * up to 1 MiB often, up to 16 MiB rarely; 4 KiB aligned, 64 KiB from
 * 1 MiB), in a segment of LIVE MiB. After filling and 2 x LIVE untimed
 * churn pairs, each timed pair frees a random live allocation and allocates
 * a new random one. Every allocator sees the same request sequence (each
 * load has its own generator). Timing is interleaved: rounds of ROUND pairs
 * on each allocator in turn until each has run MIN_SECONDS of its thread's
 * CPU time (CLOCK_THREAD_CPUTIME_ID: time the thread spends preempted by
 * other processes on a loaded machine is not counted; what load remains,
 * caches shared with other processes, slows all three alike);
 * pairs/s = pairs / summed CPU time.
 *
 * Tight segment: 10k live allocations in a segment 1/0.85 of the bytes the
 * first 10k requests ask for; 4 x LIVE churn pairs; a request that does not
 * fit is refused (its slot stays empty). Reported per allocator: refusals
 * and the largest 4 KiB-aligned allocation that still fits at the end.
 *
 * Output (one flat JSON object on stdout):
 *   alloc_pairs_per_s_{low,best,bestfit}_{1k,10k,100k}
 *   alloc_{low,best}_vs_bestfit_{1k,10k,100k}   throughput ratio (> 1: faster)
 *   alloc_tight_refused_{low,best,bestfit}, alloc_tight_largest_mib_{low,best,bestfit}
 *   alloc_best_same_as_bestfit  1 when GMC_RANGE_BEST and the baseline placed
 *                               every request of every load at the same address
 *   alloc_bytes_per_allocation  host bytes per live allocation (gmc, 10k)
 * With --count KIND LIVE PAIRS (KIND low|best|bestfit|driver): set the load up,
 * then run PAIRS pairs in measured_pairs() and exit; bench/run_bench.py runs
 * it under callgrind, collecting only inside measured_pairs(), for the
 * instruction counts alloc_insn_per_pair_*.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gmc_range.h"

#define SEG_START 0x100000000ull
#define ROUND 2000u
#define MIN_SECONDS 0.25
#define SEED 0x5EED0F6D1Cull
#define TIGHT_LIVE 10000u

static void die(const char *what)
{
	fprintf(stderr, "bench_alloc: %s\n", what);
	exit(1);
}

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

struct req {
	uint64_t size, align;
};

static struct req rand_req(uint64_t *s)
{
	uint64_t r = rng_next(s), k = r % 100, x = r >> 8;
	struct req q;

	if (k < 70)
		q.size = (1 + x % 16) << 12; /* 4..64 KiB */
	else if (k < 95)
		q.size = (17 + x % 240) << 12; /* 68 KiB..1 MiB */
	else
		q.size = (1 + x % 16) << 20; /* 1..16 MiB */
	q.align = q.size >= (1u << 20) ? 0x10000 : 0x1000;
	return q;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t counted_bytes;

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die("out of memory");
	counted_bytes += n * size;
	return p;
}

/* ------------------------------------------- the baseline: best fit by size */

/* A hole, in two treaps: t = 0 keyed by (size, start), t = 1 by start. */
struct hole {
	uint64_t start, size;
	uint32_t prio;
	struct hole *c[2][2]; /* [tree][left, right] */
};

struct bf {
	struct hole *root[2];
	struct hole *free_recs, *pool;
	uint32_t seed;
};

/* key(h) < (size, start) in tree t (size is ignored for t = 1) */
static int less(int t, const struct hole *h, uint64_t size, uint64_t start)
{
	if (t == 0 && h->size != size)
		return h->size < size;
	return h->start < start;
}

/* Split r into keys < (size, start) and the rest. */
static void split(int t, struct hole *r, uint64_t size, uint64_t start, struct hole **l, struct hole **g)
{
	if (!r) {
		*l = *g = NULL;
	} else if (less(t, r, size, start)) {
		split(t, r->c[t][1], size, start, &r->c[t][1], g);
		*l = r;
	} else {
		split(t, r->c[t][0], size, start, l, &r->c[t][0]);
		*g = r;
	}
}

/* Every key of a below every key of b. */
static struct hole *merge(int t, struct hole *a, struct hole *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a->c[t][1] = merge(t, a->c[t][1], b);
		return a;
	}
	b->c[t][0] = merge(t, a, b->c[t][0]);
	return b;
}

/* Descend while the nodes on the way outrank h, then split the subtree there. */
static void t_insert(struct bf *f, int t, struct hole *h)
{
	struct hole **p = &f->root[t];

	while (*p && (*p)->prio > h->prio)
		p = less(t, *p, h->size, h->start) ? &(*p)->c[t][1] : &(*p)->c[t][0];
	split(t, *p, h->size, h->start, &h->c[t][0], &h->c[t][1]);
	*p = h;
}

/* Find h's link and put the merge of its children there. */
static void t_erase(struct bf *f, int t, struct hole *h)
{
	struct hole **p = &f->root[t];

	while (*p != h) {
		if (!*p)
			die("best-fit baseline: hole not in its tree");
		p = less(t, *p, h->size, h->start) ? &(*p)->c[t][1] : &(*p)->c[t][0];
	}
	*p = merge(t, h->c[t][0], h->c[t][1]);
}

/* The first hole with key >= (size, start) in the size tree. */
static struct hole *size_lower_bound(const struct bf *f, uint64_t size, uint64_t start)
{
	struct hole *r = f->root[0], *best = NULL;

	while (r) {
		if (less(0, r, size, start)) {
			r = r->c[0][1];
		} else {
			best = r;
			r = r->c[0][0];
		}
	}
	return best;
}

/* The hole with the largest start < start, and the one with the smallest start > start. */
static void addr_neighbours(const struct bf *f, uint64_t start, struct hole **pred, struct hole **succ)
{
	struct hole *r = f->root[1];

	*pred = *succ = NULL;
	while (r) {
		if (r->start < start) {
			*pred = r;
			r = r->c[1][1];
		} else {
			*succ = r;
			r = r->c[1][0];
		}
	}
}

static struct hole *bf_rec(struct bf *f, uint64_t start, uint64_t size)
{
	struct hole *h = f->free_recs;

	if (!h)
		die("best-fit record pool exhausted");
	f->free_recs = h->c[0][0];
	memset(h, 0, sizeof(*h));
	h->start = start;
	h->size = size;
	f->seed = f->seed * 1664525u + 1013904223u;
	h->prio = f->seed;
	return h;
}

static void bf_put(struct bf *f, struct hole *h)
{
	h->c[0][0] = f->free_recs;
	f->free_recs = h;
}

static void bf_init(struct bf *f, uint64_t start, uint64_t size, size_t recs)
{
	memset(f, 0, sizeof(*f));
	f->seed = 12345u;
	f->pool = xcalloc(recs, sizeof(*f->pool));
	for (size_t i = 0; i < recs; i++)
		bf_put(f, &f->pool[i]);
	struct hole *h = bf_rec(f, start, size);
	t_insert(f, 0, h);
	t_insert(f, 1, h);
}

/* The smallest hole that fits (the lowest of equal sizes), at its aligned bottom; 0: none. */
static uint64_t bf_alloc(struct bf *f, uint64_t size, uint64_t align)
{
	struct hole *h = size_lower_bound(f, size, 0);

	while (h) {
		uint64_t a = (h->start + align - 1) & ~(align - 1);
		if (a + size <= h->start + h->size) {
			uint64_t end = h->start + h->size, tail = end - (a + size);
			t_erase(f, 0, h);
			if (a > h->start) {
				h->size = a - h->start;
				t_insert(f, 0, h);
				if (tail) {
					struct hole *n = bf_rec(f, a + size, tail);
					t_insert(f, 0, n);
					t_insert(f, 1, n);
				}
			} else if (tail) {
				/* h becomes the tail: its address order is unchanged */
				h->start = a + size;
				h->size = tail;
				t_insert(f, 0, h);
			} else {
				t_erase(f, 1, h);
				bf_put(f, h);
			}
			return a;
		}
		h = size_lower_bound(f, h->size, h->start + 1);
	}
	return 0;
}

static void bf_free(struct bf *f, uint64_t start, uint64_t size)
{
	struct hole *p, *s;

	addr_neighbours(f, start, &p, &s);
	if (p && p->start + p->size == start) {
		t_erase(f, 0, p);
		p->size += size;
		if (s && s->start == start + size) {
			t_erase(f, 0, s);
			t_erase(f, 1, s);
			p->size += s->size;
			bf_put(f, s);
		}
		t_insert(f, 0, p);
		return;
	}
	if (s && s->start == start + size) {
		/* s grows downwards: its address order among the holes is unchanged */
		t_erase(f, 0, s);
		s->start = start;
		s->size += size;
		t_insert(f, 0, s);
		return;
	}
	struct hole *n = bf_rec(f, start, size);
	t_insert(f, 0, n);
	t_insert(f, 1, n);
}

static uint64_t bf_largest(const struct bf *f)
{
	const struct hole *r = f->root[0];

	while (r && r->c[0][1])
		r = r->c[0][1];
	return r ? r->size : 0;
}

/* ------------------------------------------------------------ the load */

enum kind { K_LOW, K_BEST, K_BESTFIT, NKIND, K_DRIVER = NKIND };
/* "driver" (--count only): the load without an allocator (every request
 * gets a made-up address), for the driver's own instructions per pair. */
static const char *const kind_name[NKIND + 1] = { "low", "best", "bestfit", "driver" };

struct slot {
	uint64_t start, size; /* size 0: empty */
};

struct load {
	enum kind kind;
	size_t n; /* slots */
	uint64_t rng;
	struct gmc_range_mgr *mgr;
	struct gmc_range_node *nodes;
	struct bf bf;
	struct slot *slots;
	size_t live;
	uint64_t checksum, refused;
};

static void slot_alloc(struct load *l, size_t i)
{
	struct req q = rand_req(&l->rng);
	uint64_t a = 0;

	if (l->kind == K_DRIVER) {
		a = SEG_START + ((uint64_t)i << 24);
	} else if (l->kind != K_BESTFIT) {
		if (gmc_range_insert(l->mgr, &l->nodes[i], q.size, q.align,
				     l->kind == K_LOW ? GMC_RANGE_LOW : GMC_RANGE_BEST) == GMC_RANGE_OK)
			a = l->nodes[i].start;
	} else {
		a = bf_alloc(&l->bf, q.size, q.align);
	}
	if (!a) {
		l->refused++;
		l->slots[i].size = 0;
		return;
	}
	l->slots[i].start = a;
	l->slots[i].size = q.size;
	l->live++;
	l->checksum = (l->checksum ^ a) * 0x100000001B3ull;
}

static void slot_free(struct load *l, size_t i)
{
	if (!l->slots[i].size)
		return;
	if (l->kind == K_DRIVER) {
		/* nothing to free */
	} else if (l->kind != K_BESTFIT) {
		if (gmc_range_remove(l->mgr, &l->nodes[i]) != GMC_RANGE_OK)
			die("gmc_range_remove failed");
	} else {
		bf_free(&l->bf, l->slots[i].start, l->slots[i].size);
	}
	l->slots[i].size = 0;
	l->live--;
}

static void one_pair(struct load *l)
{
	size_t i = (size_t)(rng_next(&l->rng) % l->n);

	slot_free(l, i);
	slot_alloc(l, i);
}

/* Not inlined: callgrind collects only inside it (--toggle-collect). */
__attribute__((noinline)) void measured_pairs(struct load *l, uint64_t pairs)
{
	for (uint64_t k = 0; k < pairs; k++)
		one_pair(l);
}

static struct load *load_new(enum kind kind, size_t n, uint64_t seg_size, uint64_t warm)
{
	struct load *l = xcalloc(1, sizeof(*l));

	l->kind = kind;
	l->n = n;
	l->rng = SEED;
	l->slots = calloc(n, sizeof(*l->slots));
	if (!l->slots)
		die("out of memory");
	if (kind == K_DRIVER) {
		/* no allocator */
	} else if (kind != K_BESTFIT) {
		l->mgr = xcalloc(1, sizeof(*l->mgr));
		l->nodes = xcalloc(n, sizeof(*l->nodes));
		if (gmc_range_init(l->mgr, SEG_START, seg_size) != GMC_RANGE_OK)
			die("gmc_range_init failed");
	} else {
		bf_init(&l->bf, SEG_START, seg_size, 2 * n + 2);
	}
	for (size_t i = 0; i < n; i++)
		slot_alloc(l, i);
	for (uint64_t k = 0; k < warm; k++)
		one_pair(l);
	return l;
}

static uint64_t load_largest(const struct load *l)
{
	if (l->kind == K_BESTFIT)
		return bf_largest(&l->bf);
	struct gmc_range_stats st;
	gmc_range_get_stats(l->mgr, &st);
	return st.largest_hole;
}

static void load_free(struct load *l)
{
	for (size_t i = 0; i < l->n; i++)
		slot_free(l, i);
	if (l->kind == K_DRIVER) {
		/* no allocator */
	} else if (l->kind != K_BESTFIT) {
		if (gmc_range_fini(l->mgr) != GMC_RANGE_OK)
			die("gmc_range_fini failed");
		free(l->mgr);
		free(l->nodes);
	} else {
		free(l->bf.pool);
	}
	free(l->slots);
	free(l);
}

static int parse_kind(const char *s)
{
	for (int k = 0; k <= NKIND; k++)
		if (!strcmp(s, kind_name[k]))
			return k;
	die("kind: low, best, bestfit or driver");
	return -1;
}

int main(int argc, char **argv)
{
	static const size_t sizes[3] = { 1000, 10000, 100000 };
	static const char *const size_name[3] = { "1k", "10k", "100k" };

	if (argc == 5 && !strcmp(argv[1], "--count")) {
		size_t n = (size_t)strtoull(argv[3], NULL, 10);
		struct load *l = load_new(parse_kind(argv[2]), n, (uint64_t)n << 20, 2 * n);
		measured_pairs(l, strtoull(argv[4], NULL, 10));
		printf("{\"live\": %zu, \"checksum\": %llu}\n", l->live, (unsigned long long)l->checksum);
		load_free(l);
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: bench-alloc [--count low|best|bestfit|driver LIVE PAIRS]\n");
		return 2;
	}
	char buf[4096];
	size_t len = 0;
	int same = 1;
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "{");
	for (int s = 0; s < 3; s++) {
		size_t n = sizes[s];
		struct load *l[NKIND];
		double t[NKIND] = { 0 };
		uint64_t pairs[NKIND] = { 0 };
		for (int k = 0; k < NKIND; k++) {
			counted_bytes = 0;
			l[k] = load_new((enum kind)k, n, (uint64_t)n << 20, 2 * n);
			if (k == K_LOW && n == 10000)
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\"alloc_bytes_per_allocation\": %.1f, ",
							(double)counted_bytes / (double)l[k]->live);
		}
		for (int done = 0; !done;) {
			done = 1;
			for (int k = 0; k < NKIND; k++) {
				double t0 = now_s();
				measured_pairs(l[k], ROUND);
				t[k] += now_s() - t0;
				pairs[k] += ROUND;
				done &= t[k] >= MIN_SECONDS;
			}
		}
		if (l[K_BEST]->checksum != l[K_BESTFIT]->checksum)
			same = 0;
		for (int k = 0; k < NKIND; k++)
			if (l[k]->live < n * 9 / 10)
				die("a load lost too many live allocations");
		for (int k = 0; k < NKIND; k++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\"alloc_pairs_per_s_%s_%s\": %.0f, ",
						kind_name[k], size_name[s], (double)pairs[k] / t[k]);
		for (int k = 0; k < K_BESTFIT; k++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\"alloc_%s_vs_bestfit_%s\": %.2f, ",
						kind_name[k], size_name[s],
						((double)pairs[k] / t[k]) / ((double)pairs[K_BESTFIT] / t[K_BESTFIT]));
		for (int k = 0; k < NKIND; k++)
			load_free(l[k]);
	}
	/* Tight segment: 1/0.85 of the bytes the first TIGHT_LIVE requests ask for. */
	uint64_t rs = SEED, want = 0;
	for (size_t i = 0; i < TIGHT_LIVE; i++)
		want += rand_req(&rs).size;
	uint64_t seg = (want * 100 / 85 + 0xffff) & ~0xffffull;
	for (int k = 0; k < NKIND; k++) {
		struct load *l = load_new((enum kind)k, TIGHT_LIVE, seg, 0);
		l->refused = 0; /* the fill's refusals are not counted: churn only */
		for (uint64_t j = 0; j < 4 * TIGHT_LIVE; j++)
			one_pair(l);
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"\"alloc_tight_refused_%s\": %llu, \"alloc_tight_largest_mib_%s\": %.2f, ",
					kind_name[k], (unsigned long long)l->refused, kind_name[k],
					(double)load_largest(l) / (1024.0 * 1024.0));
		load_free(l);
	}
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\"alloc_best_same_as_bestfit\": %d}", same);
	puts(buf);
	return 0;
}
