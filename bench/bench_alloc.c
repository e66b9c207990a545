/*
 * bench_alloc.c - throughput and host-memory cost of the range allocator
 * (host/common/gmc_range.c) at 10,000 live allocations, against a naive
 * first-fit linked list of holes kept in this file.
 *
 * Load: a segment of 16 GiB holds 10,000 live allocations of mixed sizes
 * (seeded: 4 KiB..64 KiB mostly, up to 1 MiB often, up to 16 MiB rarely;
 * 4 KiB aligned, 64 KiB aligned from 1 MiB). After filling and 20,000
 * untimed churn operations, each timed operation frees a random live
 * allocation and allocates a new random one (one create+destroy pair).
 *
 * The gmc run uses GMC_RANGE_LOW, which is first fit by address, so both
 * allocators place every request at the same address; the bench checks that
 * (a checksum over the warm-up placements) and fails if they differ.
 *
 * Output: one flat JSON object on stdout:
 *   alloc_ops_per_s            gmc pairs per second (LOW)
 *   alloc_vs_firstfit          alloc_ops_per_s / first-fit pairs per second
 *   alloc_bytes_per_allocation host bytes per live allocation: every byte the
 *                              placement needs (nodes, which carry the hole
 *                              trees, and the manager) counted through the
 *                              bench's counting allocator, divided by the live
 *                              count. gmc_range.c itself never allocates.
 *   alloc_firstfit_ops_per_s   the baseline's pairs per second
 *   alloc_best_ops_per_s       gmc pairs per second with GMC_RANGE_BEST
 *   alloc_live                 live allocations during the timed phase
 *
 * Build: cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -Iinclude -Ihost/common \
 *            bench/bench_alloc.c host/common/gmc_range.c -o bench_alloc
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gmc_range.h"

#define LIVE 10000u
#define SEG_START 0x100000000ull
#define SEG_SIZE (16ull << 30)
#define WARM_OPS 20000u
#define MIN_SECONDS 0.35
#define SEED 0x5EED0F6D1Cull

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state;

static uint64_t rng_next(void) /* splitmix64 */
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

struct req {
	uint64_t size, align;
};

static struct req rand_req(void)
{
	uint64_t r = rng_next(), k = r % 100, x = r >> 8;
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

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t counted_bytes;

static void *counting_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fprintf(stderr, "bench_alloc: out of memory\n");
		exit(1);
	}
	counted_bytes += n * size;
	return p;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_alloc: %s\n", what);
	exit(1);
}

/* ------------------------------------------------------------ naive first fit */

struct ff_hole {
	uint64_t start, size;
	struct ff_hole *next;
};

struct ff {
	struct ff_hole *head; /* sorted by address */
	struct ff_hole *pool, *free_recs;
};

static struct ff_hole *ff_rec(struct ff *f)
{
	struct ff_hole *h = f->free_recs;

	if (!h)
		die("first-fit record pool exhausted");
	f->free_recs = h->next;
	return h;
}

static void ff_put(struct ff *f, struct ff_hole *h)
{
	h->next = f->free_recs;
	f->free_recs = h;
}

static void ff_init(struct ff *f, uint64_t start, uint64_t size, size_t recs)
{
	size_t i;

	f->pool = calloc(recs, sizeof(*f->pool));
	if (!f->pool)
		die("out of memory");
	f->free_recs = NULL;
	for (i = 0; i < recs; i++)
		ff_put(f, &f->pool[i]);
	f->head = ff_rec(f);
	f->head->start = start;
	f->head->size = size;
	f->head->next = NULL;
}

/* Lowest aligned address that fits; 0 on failure (the segment never starts at 0). */
static uint64_t ff_alloc(struct ff *f, uint64_t size, uint64_t align)
{
	struct ff_hole **pp, *h;

	for (pp = &f->head; (h = *pp); pp = &h->next) {
		uint64_t a = (h->start + align - 1) & ~(align - 1), end = h->start + h->size;

		if (a < end && end - a >= size) {
			uint64_t tail = end - (a + size);

			if (a > h->start) {
				h->size = a - h->start;
				if (tail) {
					struct ff_hole *t = ff_rec(f);

					t->start = a + size;
					t->size = tail;
					t->next = h->next;
					h->next = t;
				}
			} else if (tail) {
				h->start = a + size;
				h->size = tail;
			} else {
				*pp = h->next;
				ff_put(f, h);
			}
			return a;
		}
	}
	return 0;
}

static void ff_free(struct ff *f, uint64_t start, uint64_t size)
{
	struct ff_hole *prev = NULL, *h = f->head, *n;

	while (h && h->start < start) {
		prev = h;
		h = h->next;
	}
	if (prev && prev->start + prev->size == start) {
		prev->size += size;
		if (h && prev->start + prev->size == h->start) {
			prev->size += h->size;
			prev->next = h->next;
			ff_put(f, h);
		}
		return;
	}
	if (h && start + size == h->start) {
		h->start = start;
		h->size += size;
		return;
	}
	n = ff_rec(f);
	n->start = start;
	n->size = size;
	n->next = h;
	if (prev)
		prev->next = n;
	else
		f->head = n;
}

/* ------------------------------------------------------------ the load */

struct slot {
	uint64_t start, size; /* size 0: empty */
};

struct load {
	int kind; /* 0 = gmc, 1 = first fit */
	enum gmc_range_mode mode;
	struct gmc_range_mgr *mgr;
	struct gmc_range_node *nodes;
	struct ff ff;
	struct slot slots[LIVE];
	size_t live;
	uint64_t checksum, refused;
};

static void slot_alloc(struct load *l, size_t i)
{
	struct req q = rand_req();
	uint64_t a = 0;

	if (l->kind == 0) {
		if (gmc_range_insert(l->mgr, &l->nodes[i], q.size, q.align, l->mode) == GMC_RANGE_OK)
			a = l->nodes[i].start;
	} else {
		a = ff_alloc(&l->ff, q.size, q.align);
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
	if (l->kind == 0) {
		if (gmc_range_remove(l->mgr, &l->nodes[i]) != GMC_RANGE_OK)
			die("gmc_range_remove failed");
	} else {
		ff_free(&l->ff, l->slots[i].start, l->slots[i].size);
	}
	l->slots[i].size = 0;
	l->live--;
}

static void one_pair(struct load *l)
{
	size_t i = (size_t)(rng_next() % LIVE);

	slot_free(l, i);
	slot_alloc(l, i);
}

static void load_setup(struct load *l)
{
	size_t i;

	rng_state = SEED;
	for (i = 0; i < LIVE; i++)
		slot_alloc(l, i);
	for (i = 0; i < WARM_OPS; i++)
		one_pair(l);
}

/* Pairs per second over at least MIN_SECONDS of steady state. */
static double load_time(struct load *l)
{
	double t0 = now_s(), t;
	uint64_t ops = 0;

	do {
		int k;

		for (k = 0; k < 500; k++)
			one_pair(l);
		ops += 500;
		t = now_s() - t0;
	} while (t < MIN_SECONDS);
	return (double)ops / t;
}

static struct load *gmc_load(enum gmc_range_mode mode)
{
	struct load *l = calloc(1, sizeof(*l));

	if (!l)
		die("out of memory");
	l->kind = 0;
	l->mode = mode;
	/* all placement storage goes through the counting allocator */
	l->mgr = counting_calloc(1, sizeof(*l->mgr));
	l->nodes = counting_calloc(LIVE, sizeof(*l->nodes));
	if (gmc_range_init(l->mgr, SEG_START, SEG_SIZE) != GMC_RANGE_OK)
		die("gmc_range_init failed");
	return l;
}

static void gmc_free_load(struct load *l)
{
	size_t i;

	for (i = 0; i < LIVE; i++)
		slot_free(l, i);
	if (gmc_range_fini(l->mgr) != GMC_RANGE_OK)
		die("gmc_range_fini failed");
	free(l->mgr);
	free(l->nodes);
	free(l);
}

int main(void)
{
	struct load *g, *best, *f;
	double g_ops, ff_ops, best_ops, bytes_per;
	size_t live;

	/* gmc, LOW (= first fit by address) */
	counted_bytes = 0;
	g = gmc_load(GMC_RANGE_LOW);
	load_setup(g);
	live = g->live;
	bytes_per = (double)counted_bytes / (double)live;

	/* the same load on the naive list */
	f = calloc(1, sizeof(*f));
	if (!f)
		die("out of memory");
	f->kind = 1;
	ff_init(&f->ff, SEG_START, SEG_SIZE, 2 * LIVE + 2);
	load_setup(f);
	if (f->checksum != g->checksum || f->live != g->live || f->refused != g->refused)
		die("first fit and GMC_RANGE_LOW placed the warm-up differently");

	g_ops = load_time(g);
	ff_ops = load_time(f);
	if (f->live < LIVE * 9 / 10 || g->live < LIVE * 9 / 10)
		die("load lost too many live allocations");

	best = gmc_load(GMC_RANGE_BEST);
	load_setup(best);
	best_ops = load_time(best);

	printf("{\"alloc_ops_per_s\": %.1f, \"alloc_vs_firstfit\": %.2f, "
	       "\"alloc_bytes_per_allocation\": %.1f, \"alloc_firstfit_ops_per_s\": %.1f, "
	       "\"alloc_best_ops_per_s\": %.1f, \"alloc_live\": %zu}\n",
	       g_ops, g_ops / ff_ops, bytes_per, ff_ops, best_ops, live);

	gmc_free_load(g);
	gmc_free_load(best);
	free(f->ff.pool);
	free(f);
	return 0;
}
