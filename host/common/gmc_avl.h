/*
 * gmc_avl.h - an intrusive AVL tree (gmc_avl.c): ordered sets whose nodes
 * live inside the objects they order, with O(log n) insert and remove and
 * O(1) amortised in-order stepping. The memory manager keeps each
 * segment's eviction candidates and hot set in them (docs/residency.md,
 * "Candidate structures").
 *
 * The order is the caller's: insert takes a comparison of two nodes, which
 * must be a strict total order over the nodes in the tree (ties are a
 * bug: equal nodes would be kept in insertion order, which no caller may
 * rely on). The tree never allocates; removing a node needs only the node.
 */
#ifndef GMC_AVL_H
#define GMC_AVL_H

#include <stddef.h>

struct gmc_avl_node {
    struct gmc_avl_node *left, *right, *parent;
    int height; /* of the subtree rooted here: 1 for a leaf */
};

struct gmc_avl {
    struct gmc_avl_node *root;
    size_t count;
};

/* <0, 0, >0 as a orders before, with, after b. */
typedef int (*gmc_avl_cmp_fn)(const struct gmc_avl_node *a, const struct gmc_avl_node *b);
/* <0, 0, >0 as key orders before, with, after n. */
typedef int (*gmc_avl_key_fn)(const void *key, const struct gmc_avl_node *n);

void gmc_avl_init(struct gmc_avl *t);
/* Insert n (not in any tree). */
void gmc_avl_insert(struct gmc_avl *t, struct gmc_avl_node *n, gmc_avl_cmp_fn cmp);
/* Remove n (in t). */
void gmc_avl_remove(struct gmc_avl *t, struct gmc_avl_node *n);
/* The first node in order, or NULL when the tree is empty. */
struct gmc_avl_node *gmc_avl_first(const struct gmc_avl *t);
/* The node after n in order, or NULL. */
struct gmc_avl_node *gmc_avl_next(const struct gmc_avl_node *n);
/* The first node that key does not order after (key <= node), or NULL. */
struct gmc_avl_node *gmc_avl_lower_bound(const struct gmc_avl *t, const void *key, gmc_avl_key_fn kcmp);
/* Check every invariant (parent links, heights, balance, order by cmp,
 * count): 0 when the tree is sound, else a negative code naming the first
 * broken one (tests). */
int gmc_avl_check(const struct gmc_avl *t, gmc_avl_cmp_fn cmp);

#endif /* GMC_AVL_H */
