/*
 * test_victim.c - the eviction candidates' structures (docs/residency.md,
 * "Candidate structures"): the intrusive AVL tree (host/common/gmc_avl.c)
 * against a plain reference under random inserts and removes, and a
 * corrupted tree caught by its check; the victim order and hot-set
 * admission as pure functions (host/vidmm/gmc_victim.c) on crafted keys,
 * ties included; on the model, the exact victim order of a crafted
 * segment (priorities changed while resident, referenced, locked and
 * pinned allocations excluded), destroying allocations while they are in
 * the trees, and a device with 20,000 allocations, mostly never placed,
 * on which every eviction takes the victim a naive walk over all
 * allocations (written here from the documented order) would take, while
 * looking at exactly one candidate. Residency notifications reach each
 * client's newest handle to the allocation.
 */
#include <math.h>

#include "vidmm_test.h"

#include "gmc_avl.h"
#include "gmc_cand.h"
#include "gmc_victim.h"

/* ------------------------------------------------------------ AVL tree */

struct item {
    struct gmc_avl_node n;
    int key;
    int in;
};

static int item_cmp(const struct gmc_avl_node *a, const struct gmc_avl_node *b)
{
    const struct item *x = (const struct item *)(const void *)a, *y = (const struct item *)(const void *)b;
    return x->key < y->key ? -1 : (x->key > y->key);
}

static int item_key_cmp(const void *key, const struct gmc_avl_node *b)
{
    int k = *(const int *)key, v = ((const struct item *)(const void *)b)->key;
    return k < v ? -1 : (k > v);
}

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static void test_avl_random(void **state)
{
    (void)state;
    enum { N = 3000 };
    static struct item it[N];
    struct gmc_avl t;
    gmc_avl_init(&t);
    assert_null(gmc_avl_first(&t));
    /* Distinct keys, not in index order: key(i) = (i * 7919) mod N. */
    for (int i = 0; i < N; i++) {
        it[i].key = (int)(((unsigned)i * 7919u) % N);
        it[i].in = 0;
    }
    uint32_t seed = 19;
    for (int round = 0; round < 40000; round++) {
        struct item *x = &it[lcg(&seed) % N];
        if (x->in)
            gmc_avl_remove(&t, &x->n);
        else
            gmc_avl_insert(&t, &x->n, item_cmp);
        x->in = !x->in;
        if (round % 997 == 0 || round == 39999) {
            assert_int_equal(gmc_avl_check(&t, item_cmp), 0);
            /* In order: exactly the members, ascending. */
            size_t n = 0;
            int last = -1;
            for (struct gmc_avl_node *p = gmc_avl_first(&t); p != NULL; p = gmc_avl_next(p)) {
                const struct item *y = (const struct item *)(const void *)p;
                assert_true(y->in);
                assert_true(y->key > last);
                last = y->key;
                n++;
            }
            size_t want = 0;
            for (int i = 0; i < N; i++)
                want += (size_t)it[i].in;
            assert_int_equal(n, want);
            assert_int_equal(t.count, want);
            /* Depth stays within AVL's bound, 1.44 log2(n + 2). */
            int h = t.root != NULL ? t.root->height : 0;
            double bound = 1.4405 * log2((double)want + 2.0);
            assert_true((double)h <= bound);
        }
    }
    /* lower_bound against a scan. */
    for (int k = -1; k <= N; k++) {
        const struct item *best = NULL;
        for (int i = 0; i < N; i++)
            if (it[i].in && it[i].key >= k && (best == NULL || it[i].key < best->key))
                best = &it[i];
        struct gmc_avl_node *lb = gmc_avl_lower_bound(&t, &k, item_key_cmp);
        assert_ptr_equal(lb, best != NULL ? &best->n : NULL);
    }
    /* Remove everything: empty again. */
    for (int i = 0; i < N; i++)
        if (it[i].in) {
            gmc_avl_remove(&t, &it[i].n);
            it[i].in = 0;
        }
    assert_null(t.root);
    assert_int_equal(t.count, 0);
    assert_int_equal(gmc_avl_check(&t, item_cmp), 0);
}

/* The check fails on each kind of damage. */
static void test_avl_check_fails(void **state)
{
    (void)state;
    static struct item it[7];
    struct gmc_avl t;
    gmc_avl_init(&t);
    for (int i = 0; i < 7; i++) {
        it[i].key = i * 10;
        gmc_avl_insert(&t, &it[i].n, item_cmp);
    }
    assert_int_equal(gmc_avl_check(&t, item_cmp), 0);
    /* Out of order. */
    int keep = it[0].key;
    it[0].key = 1000;
    assert_int_equal(gmc_avl_check(&t, item_cmp), -2);
    it[0].key = keep;
    /* A wrong count. */
    t.count++;
    assert_int_equal(gmc_avl_check(&t, item_cmp), -5);
    t.count--;
    /* A wrong height. */
    t.root->height++;
    assert_int_equal(gmc_avl_check(&t, item_cmp), -4);
    t.root->height--;
    /* A broken parent link. */
    struct gmc_avl_node *l = t.root->left;
    l->parent = NULL;
    assert_int_equal(gmc_avl_check(&t, item_cmp), -1);
    l->parent = t.root;
    assert_int_equal(gmc_avl_check(&t, item_cmp), 0);
}

/* ------------------------------------------------------ pure policy */

static struct gmc_victim_key dkey(uint32_t prio, uint32_t dirty, uint32_t hot, uint64_t hot_seq, uint64_t lru,
                                  uint64_t serial)
{
    struct gmc_victim_key k = { .prio = prio, .dirty = dirty, .hot = hot, .hot_seq = hot_seq, .lru = lru,
                                .serial = serial };
    return k;
}

static struct gmc_victim_key key(uint32_t prio, uint32_t hot, uint64_t hot_seq, uint64_t lru, uint64_t serial)
{
    return dkey(prio, 0, hot, hot_seq, lru, serial);
}

static int sgn(int v)
{
    return (v > 0) - (v < 0);
}

static void test_victim_order_pure(void **state)
{
    (void)state;
    const uint32_t LO = GMC_PRIORITY_LOW, NO = GMC_PRIORITY_NORMAL, HI = GMC_PRIORITY_HIGH;
    /* In victim order, by hand from the documented rule. */
    const struct gmc_victim_key want[] = {
        key(LO, 1, 90, 1, 20),  /* LOW before anything NORMAL, hot or not */
        key(NO, 0, 99, 5, 9),   /* cold, lru 5; hot_seq of a cold one does not count */
        key(NO, 0, 1, 7, 3),    /* cold, lru 7, tie on lru: older serial first */
        key(NO, 0, 50, 7, 4),   /*   ... */
        key(NO, 0, 0, 8, 1),    /* cold, lru 8 */
        key(NO, 1, 40, 2, 7),   /* hot: last to join first (40 > 30); lru of a hot one does not count */
        key(NO, 1, 30, 9, 5),   /* hot, joined at 30, tie on hot_seq: older serial first */
        key(NO, 1, 30, 1, 6),   /*   ... */
        key(NO, 1, 10, 100, 2), /* hot, joined at 10 */
        dkey(NO, 1, 0, 0, 3, 11),  /* dirty after every clean one of its priority, hot or not */
        dkey(NO, 1, 0, 0, 3, 12),  /*   ... tie on lru: older serial first */
        dkey(NO, 1, 1, 60, 1, 10), /* dirty and hot: after the dirty cold ones */
        key(HI, 0, 0, 1, 8),       /* HIGH last, even clean against a dirty NORMAL */
    };
    const size_t n = sizeof(want) / sizeof(want[0]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int c = gmc_victim_cmp(&want[i], &want[j]);
            int e = i < j ? -1 : (i > j);
            if (sgn(c) != e)
                fail_msg("victim_cmp(%zu, %zu) = %d, want %d", i, j, c, e);
        }
    /* The same allocation: equal. */
    struct gmc_victim_key same = want[3];
    assert_int_equal(gmc_victim_cmp(&want[3], &same), 0);

    /* Hot-set age order: priority, lru, serial; heat ignored. */
    const struct gmc_victim_key age[] = {
        key(LO, 1, 1, 50, 9), key(NO, 1, 9, 3, 4), key(NO, 1, 2, 3, 5), key(NO, 1, 5, 4, 1), key(HI, 1, 7, 1, 2),
    };
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < 5; j++)
            assert_int_equal(sgn(gmc_victim_hot_cmp(&age[i], &age[j])), i < j ? -1 : (int)(i > j));

    /* Effective priority. */
    struct gmc_alloc_desc d;
    gmc_alloc_desc_init(&d);
    d.priority = LO;
    d.umd_priority = HI;
    assert_int_equal(gmc_victim_prio(&d), LO);
    d.info2_flags |= GMC_INFO2_OVERRIDE_PRIORITY;
    assert_int_equal(gmc_victim_prio(&d), HI);
}

static void test_admission_pure(void **state)
{
    (void)state;
    const struct gmc_victim_key old = key(GMC_PRIORITY_NORMAL, 1, 3, 100, 1);
    /* Placed with room: hot while the set holds at most the budget. */
    assert_true(gmc_victim_heat_placed(600, 400, 1000));
    assert_false(gmc_victim_heat_placed(601, 400, 1000));
    /* Not a refault: cold, room or not. */
    assert_int_equal(gmc_victim_admit(0, 500, 10, 0, 1000, &old), GMC_ADMIT_COLD);
    /* A refault with room joins (boundary exact). */
    assert_int_equal(gmc_victim_admit(1, 1, 400, 600, 1000, &old), GMC_ADMIT_HOT);
    /* No room: used more recently than the oldest, or as recently, displaces. */
    assert_int_equal(gmc_victim_admit(1, 101, 400, 601, 1000, &old), GMC_ADMIT_DISPLACE);
    assert_int_equal(gmc_victim_admit(1, 100, 400, 601, 1000, &old), GMC_ADMIT_DISPLACE);
    /* Less recently: cold. No hot allocation of its priority: cold. */
    assert_int_equal(gmc_victim_admit(1, 99, 400, 601, 1000, &old), GMC_ADMIT_COLD);
    assert_int_equal(gmc_victim_admit(1, 500, 400, 601, 1000, NULL), GMC_ADMIT_COLD);
}

/* ------------------------------------------------- on the device */

/* The documented victim order, written here from docs/residency.md (not
 * the library's comparison): priority, clean before dirty, cold before
 * hot, cold by last use, hot by last to join first, ties by the older
 * allocation. Dirty: the placed copy is newer than the system copy. */
static int ref_dirty(const struct gmc_valloc *a)
{
    return a->gpu_valid && !a->sys_valid;
}

static uint32_t ref_prio(const struct gmc_valloc *a)
{
    return (a->desc.info2_flags & GMC_INFO2_OVERRIDE_PRIORITY) ? a->desc.umd_priority : a->desc.priority;
}

static int ref_before(const struct gmc_valloc *a, const struct gmc_valloc *b)
{
    if (ref_prio(a) != ref_prio(b))
        return ref_prio(a) < ref_prio(b);
    if (ref_dirty(a) != ref_dirty(b))
        return !ref_dirty(a);
    if ((a->hot != 0) != (b->hot != 0))
        return !a->hot;
    if (a->hot) {
        if (a->hot_seq != b->hot_seq)
            return a->hot_seq > b->hot_seq;
    } else if (a->lru != b->lru) {
        return a->lru < b->lru;
    }
    return a->serial < b->serial;
}

static int ref_candidate(const struct gmc_valloc *a, unsigned seg)
{
    return a->node.mgr != NULL && a->seg == seg && a->resident == 0u && !(a->state & GMC_ALLOC_STATE_PINNED) &&
           a->locker == NULL && !(a->desc.flags & GMC_ALLOC_HARDWARE_PROTECTED);
}

/* Allocations an admission pushes out of the hot set before the scan. */
struct demoted {
    const struct gmc_valloc *v[64];
    size_t n;
};

static int was_demoted(const struct demoted *dm, const struct gmc_valloc *a)
{
    for (size_t i = 0; dm != NULL && i < dm->n; i++)
        if (dm->v[i] == a)
            return 1;
    return 0;
}

/* ref_before with the demoted ones cold. */
static int ref_before_dm(const struct gmc_valloc *a, const struct gmc_valloc *b, const struct demoted *dm)
{
    int ha = a->hot && !was_demoted(dm, a), hb = b->hot && !was_demoted(dm, b);
    if (ref_prio(a) != ref_prio(b))
        return ref_prio(a) < ref_prio(b);
    if (ref_dirty(a) != ref_dirty(b))
        return !ref_dirty(a);
    if (ha != hb)
        return !ha;
    if (ha) {
        if (a->hot_seq != b->hot_seq)
            return a->hot_seq > b->hot_seq;
    } else if (a->lru != b->lru) {
        return a->lru < b->lru;
    }
    return a->serial < b->serial;
}

/* The documented admission of x (placed size n in segment seg), naively:
 * a refault that finds no room displaces the least recently used hot
 * allocations of its priority, oldest first, until it fits, when it was
 * used no less recently than the oldest. */
static uint64_t lru_as(const struct gmc_valloc *a, const struct gmc_valloc *p, uint64_t p_lru)
{
    return a == p ? p_lru : a->lru;
}

/* p (may be NULL) was used at p_lru just before, in the same call. */
static void ref_admit(gmc_device *dev, const struct gmc_valloc *x, unsigned seg, uint64_t n, struct demoted *dm,
                      const struct gmc_valloc *p, uint64_t p_lru)
{
    dm->n = 0;
    uint64_t hb = dev->hot_bytes[seg];
    if (!x->refault || hb + n <= dev->hot_budget[seg])
        return;
    for (int first = 1;; first = 0) {
        const struct gmc_valloc *o = NULL;
        for (const struct gmc_valloc *a = dev->allocs; a != NULL; a = a->dnext)
            if (a->hot && !was_demoted(dm, a) && a->node.mgr != NULL && a->seg == seg && ref_prio(a) == ref_prio(x) &&
                (o == NULL || lru_as(a, p, p_lru) < lru_as(o, p, p_lru) ||
                 (lru_as(a, p, p_lru) == lru_as(o, p, p_lru) && a->serial < o->serial)))
                o = a;
        if (o == NULL || (first && lru_as(o, p, p_lru) > x->lru))
            return;
        assert_true(dm->n < 64u);
        dm->v[dm->n++] = o;
        hb -= o->sz.placed;
        if (hb + n <= dev->hot_budget[seg])
            return;
    }
}

/* The naive first victim of segment seg: a walk over every allocation. */
static const struct gmc_valloc *ref_first(gmc_device *dev, unsigned seg, const struct demoted *dm,
                                          const struct gmc_valloc *skip)
{
    const struct gmc_valloc *best = NULL;
    for (const struct gmc_valloc *a = dev->allocs; a != NULL; a = a->dnext)
        if (a != skip && ref_candidate(a, seg) && (best == NULL || ref_before_dm(a, best, dm)))
            best = a;
    return best;
}

static int cand_tree_cmp(const struct gmc_avl_node *x, const struct gmc_avl_node *y)
{
    const struct gmc_valloc *a = (const void *)((const char *)x - offsetof(struct gmc_valloc, cand_node));
    const struct gmc_valloc *b = (const void *)((const char *)y - offsetof(struct gmc_valloc, cand_node));
    return ref_before(a, b) ? -1 : ref_before(b, a) ? 1 : 0;
}

static int hot_tree_cmp(const struct gmc_avl_node *x, const struct gmc_avl_node *y)
{
    const struct gmc_valloc *a = (const void *)((const char *)x - offsetof(struct gmc_valloc, hot_node));
    const struct gmc_valloc *b = (const void *)((const char *)y - offsetof(struct gmc_valloc, hot_node));
    if (ref_prio(a) != ref_prio(b))
        return ref_prio(a) < ref_prio(b) ? -1 : 1;
    if (a->lru != b->lru)
        return a->lru < b->lru ? -1 : 1;
    return a->serial < b->serial ? -1 : (a->serial > b->serial);
}

/* Every segment's trees hold exactly the naive walk's candidates (and hot
 * allocations), in the documented order, with the right byte count. */
static void check_trees(gmc_device *dev)
{
    for (unsigned s = 0; s < dev->nsegs; s++) {
        size_t want = 0, hot = 0;
        uint64_t bytes = 0;
        for (const struct gmc_valloc *a = dev->allocs; a != NULL; a = a->dnext) {
            if (ref_candidate(a, s)) {
                want++;
                bytes += a->sz.placed;
                assert_true(a->in_cand);
            } else {
                assert_false(a->in_cand && a->tree_seg == s);
            }
            if (a->hot && a->node.mgr != NULL && a->seg == s)
                hot++;
        }
        assert_int_equal(dev->cand[s].count, want);
        assert_int_equal(dev->cand_bytes[s], bytes);
        assert_int_equal(dev->hot[s].count, hot);
        /* Sound, and in the documented order (the keys are current). */
        assert_int_equal(gmc_avl_check(&dev->cand[s], cand_tree_cmp), 0);
        assert_int_equal(gmc_avl_check(&dev->hot[s], hot_tree_cmp), 0);
    }
}

static struct gmc_valloc *va(gmc_client *c, gmc_handle h)
{
    struct gmc_vref *r = gmc_vidmm_ref(c, h);
    assert_non_null(r);
    return r->alloc;
}

static int placed_in(gmc_client *c, gmc_handle h, unsigned seg)
{
    struct gmc_alloc_info ai = t_info(c, h);
    return (ai.state & GMC_ALLOC_STATE_PLACED) && ai.segment == seg;
}

/* Segment 1 (2 MiB) holds seven 256 KiB NORMAL allocations a0..a6, all
 * hot (placed with room, joined in creation order), and a pinned 256 KiB
 * overlay of MINIMUM priority. a2 stays referenced, a5 locked, a6 is
 * lowered to LOW while referenced, a1 raised to HIGH while placed and
 * unreferenced, a3 lowered and raised back. Victim order: a6 (LOW); then
 * the NORMAL hot ones last-joined first, a4, a3, a0; then a1 (HIGH). Five
 * new allocations each evict exactly the next; a sixth finds no room. */
static void test_crafted_order(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 256 * KiB;
    gmc_handle a[7];
    for (unsigned i = 0; i < 7; i++) {
        a[i] = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
        assert_true(placed_in(c, a[i], SEG_VIS));
        assert_true(va(c, a[i])->hot);
    }
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, GMC_ALLOC_OVERLAY | GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    d.priority = GMC_PRIORITY_MINIMUM;
    gmc_handle ov = t_create(c, &d);
    assert_true(t_info(c, ov).state & GMC_ALLOC_STATE_PINNED);
    check_trees(dev);
    assert_int_equal(dev->cand[SEG_VIS - 1u].count, 7); /* the pinned overlay is none */

    ok(t_resident1(c, a[2]));
    struct gmc_lock_map m;
    ok(gmc_lock(c, a[5], GMC_LOCK_READ_ONLY, &m));
    ok(t_resident1(c, a[6]));
    ok(gmc_alloc_set_priority(c, a[6], GMC_PRIORITY_LOW));
    check_trees(dev);
    ok(t_evict1(c, a[6]));
    ok(gmc_alloc_set_priority(c, a[1], GMC_PRIORITY_HIGH));
    ok(gmc_alloc_set_priority(c, a[3], GMC_PRIORITY_LOW));
    check_trees(dev);
    ok(gmc_alloc_set_priority(c, a[3], GMC_PRIORITY_NORMAL));
    assert_int_equal(t_info(c, a[6]).priority, GMC_PRIORITY_LOW);
    assert_int_equal(t_info(c, a[1]).priority, GMC_PRIORITY_HIGH);
    /* 0 is refused, nothing changes. */
    assert_status(gmc_alloc_set_priority(c, a[4], 0), GMC_E_RULE_PRIORITY_ZERO);
    assert_int_equal(t_info(c, a[4]).priority, GMC_PRIORITY_NORMAL);
    assert_status(gmc_alloc_set_priority(c, GMC_HANDLE_NONE, GMC_PRIORITY_LOW), GMC_E_BAD_HANDLE);
    assert_status(gmc_alloc_set_priority(NULL, a[4], GMC_PRIORITY_LOW), GMC_E_NULL_POINTER);
    check_trees(dev);

    static const unsigned order[5] = { 6, 4, 3, 0, 1 };
    /* The tree, walked as a placement walks it. */
    unsigned k = 0;
    for (struct gmc_valloc *x = gmc_cand_first(dev, SEG_VIS - 1u); x != NULL; x = gmc_cand_next(dev, x)) {
        assert_true(k < 5);
        assert_ptr_equal(x, va(c, a[order[k]]));
        k++;
    }
    assert_int_equal(k, 5);

    gmc_handle n[6];
    for (unsigned i = 0; i < 5; i++) {
        n[i] = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
        uint64_t v0 = dev->cand_visits;
        ok(t_resident1(c, n[i]));
        assert_int_equal(dev->cand_visits - v0, 1); /* the first candidate opens the window */
        for (unsigned j = 0; j < 7; j++) {
            int gone = 0;
            for (unsigned q = 0; q <= i; q++)
                gone |= order[q] == j;
            if (placed_in(c, a[j], SEG_VIS) == gone)
                fail_msg("step %u: a%u placed=%d", i, j, !gone);
        }
        check_trees(dev);
    }
    assert_true(placed_in(c, ov, SEG_VIS));
    n[5] = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    struct gmc_residency_result res;
    assert_status(gmc_make_resident(c, &n[5], 1, &res), GMC_E_NO_SPACE);
    assert_int_equal(res.bytes_needed, SZ);
    assert_int_equal(dev->cand[SEG_VIS - 1u].count, 0);
    ok(gmc_unlock(c, a[5]));
    check_trees(dev);
    assert_int_equal(dev->cand[SEG_VIS - 1u].count, 1); /* a5, unlocked */
    t_close(dev);
}

/* Destroying allocations while they are candidates or hot: the trees and
 * byte counts follow, and later evictions never reach them (ASan would
 * see a freed one). */
static void test_destroy_in_tree(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 256 * KiB;
    gmc_handle a[8];
    for (unsigned i = 0; i < 8; i++)
        a[i] = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    const unsigned s = SEG_VIS - 1u;
    assert_int_equal(dev->cand[s].count, 8);
    assert_int_equal(dev->hot[s].count, 8);
    assert_int_equal(dev->cand_bytes[s], 8 * SZ);
    /* The first victim (a7, last to join), the last (a0) and one inside. */
    ok(gmc_alloc_destroy(c, a[7]));
    ok(gmc_alloc_destroy(c, a[0]));
    ok(gmc_alloc_destroy(c, a[4]));
    assert_int_equal(dev->cand[s].count, 5);
    assert_int_equal(dev->hot[s].count, 5);
    assert_int_equal(dev->cand_bytes[s], 5 * SZ);
    assert_int_equal(dev->hot_bytes[s], 5 * SZ);
    check_trees(dev);
    /* A referenced one destroyed (not a candidate, still hot). */
    ok(t_resident1(c, a[2]));
    assert_int_equal(dev->cand[s].count, 4);
    ok(gmc_alloc_destroy(c, a[2]));
    assert_int_equal(dev->hot[s].count, 4);
    check_trees(dev);
    /* 2 MiB: the four left (a1, a3, a5, a6) are all it takes; the order is
     * last-joined first: a6, a5, a3, a1. */
    gmc_handle big = t_new(c, 2 * MiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, big));
    static const unsigned gone[4] = { 1, 3, 5, 6 };
    for (unsigned i = 0; i < 4; i++)
        assert_false(t_info(c, a[gone[i]]).state & GMC_ALLOC_STATE_PLACED);
    assert_int_equal(t_stats(dev).evictions, 4);
    assert_int_equal(dev->cand[s].count, 0);
    check_trees(dev);
    t_close(dev);
}

/* 20,000 allocations of 16 KiB restricted to segment 2 (380 fit), most
 * never placed, plus a few in segment 1. Each make-resident of one not
 * placed evicts the naive walk's first victim, looking at exactly one
 * candidate, never at an unplaced allocation or another segment. */
static void test_many_unplaced(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    enum { N = 20000, SPAN = 450, STEPS = 800 };
    gmc_handle *h = calloc(N, sizeof(*h));
    assert_non_null(h);
    for (unsigned i = 0; i < N; i++) {
        struct gmc_alloc_desc d;
        t_desc(&d, 16 * KiB, 0, BIT(SEG_VRAM));
        /* A few priorities, so the order is not just recency. */
        d.priority = (i % 7u) == 3u ? GMC_PRIORITY_LOW : (i % 11u) == 5u ? GMC_PRIORITY_HIGH : GMC_PRIORITY_NORMAL;
        h[i] = t_create(c, &d);
    }
    gmc_handle other[4];
    for (unsigned i = 0; i < 4; i++)
        other[i] = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    const unsigned s = SEG_VRAM - 1u;
    assert_int_equal(dev->cand[s].count, 380);
    check_trees(dev);
    uint64_t ev0 = t_stats(dev).evictions, displaced = 0, pairs = 0, evicting = 0;
    uint32_t seed = 7;
    for (unsigned step = 0; step < STEPS; step++) {
        /* Random picks from the working set [0, SPAN), so reuse distances
         * vary, refaults come back hot or cold; every 50 steps one lock in segment 1 and a
         * priority change in segment 2. */
        gmc_handle x = h[lcg(&seed) % SPAN];
        struct gmc_valloc *xa = va(c, x);
        if (xa->node.mgr != NULL) {
            ok(t_resident1(c, x));
            ok(t_evict1(c, x));
            continue;
        }
        struct demoted dm;
        /* Every other step, with a placed partner made resident first in
         * the same call (its use counts before x's admission). */
        gmc_handle pair[2] = { GMC_HANDLE_NONE, x };
        const struct gmc_valloc *p = NULL;
        for (unsigned j = 1; (step & 1u) && j < SPAN && p == NULL; j++) {
            gmc_handle y = h[(step * 31u + j) % SPAN];
            if (va(c, y)->node.mgr != NULL) {
                pair[0] = y;
                p = va(c, y);
            }
        }
        ref_admit(dev, xa, s, 16 * KiB, &dm, p, dev->tick + 1u);
        const struct gmc_valloc *want = ref_first(dev, s, &dm, p);
        assert_non_null(want);
        uint64_t v0 = dev->cand_visits, e0 = t_stats(dev).evictions;
        if (p != NULL)
            ok(gmc_make_resident(c, pair, 2, NULL));
        else
            ok(t_resident1(c, x));
        assert_int_equal(dev->cand_visits - v0, 1);
        assert_int_equal(t_stats(dev).evictions - e0, 1);
        assert_null(want->node.mgr); /* the naive walk's victim went */
        displaced += dm.n;
        evicting++;
        if (p != NULL) {
            pairs++;
            ok(gmc_evict(c, pair, 2));
        } else {
            ok(t_evict1(c, x));
        }
        if (step % 50u == 0u) {
            struct gmc_lock_map m;
            ok(gmc_lock(c, other[step / 50u % 4u], GMC_LOCK_READ_ONLY, &m));
            ok(gmc_alloc_set_priority(c, h[(step * 13u) % SPAN], GMC_PRIORITY_MINIMUM));
            check_trees(dev);
            ok(gmc_unlock(c, other[step / 50u % 4u]));
        }
    }
    assert_int_equal(t_stats(dev).evictions - ev0, evicting);
    assert_true(evicting >= 100u);
    /* The load exercised admissions that displace and paired calls. */
    assert_true(displaced > 0u);
    assert_true(pairs > 0u);
    check_trees(dev);
    free(h);
    t_close(dev);
}

/* ------------------------------------------- residency notifications */

struct notes {
    gmc_handle h[8];
    int resident[8];
    unsigned n;
};

static void on_note(void *user, gmc_handle h, int resident)
{
    struct notes *l = user;
    if (l->n < 8u) {
        l->h[l->n] = h;
        l->resident[l->n] = resident;
    }
    l->n++;
}

/* The notification reaches each client with a callback once, with its
 * newest handle to the allocation, found among the allocation's own
 * handles (not by walking every handle of every client): two clients with
 * callbacks (B holding two handles, then one), a third without, and 400
 * other handles around. */
static void test_notify_handles(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *a = t_client(dev), *b = t_client(dev), *c = t_client(dev);
    struct notes na = { 0 }, nb = { 0 };
    ok(gmc_client_set_residency_callback(a, on_note, &na));
    ok(gmc_client_set_residency_callback(b, on_note, &nb));
    for (unsigned i = 0; i < 200; i++) {
        (void)t_new(a, 16 * KiB, 0, BIT(SEG_VRAM));
        (void)t_new(b, 16 * KiB, 0, BIT(SEG_VRAM));
    }
    struct gmc_alloc_desc d;
    t_desc(&d, 1 * MiB, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_EXPLICIT_RESIDENCY_NOTIFICATION |
                            GMC_ALLOC_ACCESSED_PHYSICALLY, BIT(SEG_VIS));
    d.kmt_flags = GMC_KMT_CREATE_RESOURCE | GMC_KMT_CREATE_SHARED;
    gmc_handle ha = t_create(a, &d);
    gmc_share_handle sh = t_info(a, ha).share_handle;
    assert_true(sh != GMC_HANDLE_NONE);
    gmc_handle hb1 = GMC_HANDLE_NONE, hb2 = GMC_HANDLE_NONE, hc = GMC_HANDLE_NONE;
    ok(gmc_alloc_open(b, sh, &hb1));
    ok(gmc_alloc_open(c, sh, &hc));
    ok(gmc_alloc_open(b, sh, &hb2));
    assert_true(hb1 != hb2);
    struct gmc_residency_result res;
    ok(gmc_make_resident(a, &ha, 1, &res));
    ok(gmc_fence_wait(dev, res.paging_fence, 0));
    assert_int_equal(na.n, 1);
    assert_int_equal(na.h[0], ha);
    assert_int_equal(na.resident[0], 1);
    assert_int_equal(nb.n, 1);
    assert_int_equal(nb.h[0], hb2); /* the newest of B's two */
    assert_int_equal(nb.resident[0], 1);
    /* B closes its newest handle; pressure evicts the allocation. */
    ok(gmc_alloc_destroy(b, hb2));
    ok(t_evict1(a, ha));
    gmc_handle big = t_new(c, 2 * MiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, big));
    t_idle(dev);
    assert_false(t_info(a, ha).state & GMC_ALLOC_STATE_PLACED);
    assert_int_equal(na.n, 2);
    assert_int_equal(na.h[1], ha);
    assert_int_equal(na.resident[1], 0);
    assert_int_equal(nb.n, 2);
    assert_int_equal(nb.h[1], hb1);
    assert_int_equal(nb.resident[1], 0);
    t_close(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_avl_random),
        cmocka_unit_test(test_avl_check_fails),
        cmocka_unit_test(test_victim_order_pure),
        cmocka_unit_test(test_admission_pure),
        cmocka_unit_test(test_crafted_order),
        cmocka_unit_test(test_destroy_in_tree),
        cmocka_unit_test(test_many_unplaced),
        cmocka_unit_test(test_notify_handles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
