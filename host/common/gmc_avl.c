/*
 * gmc_avl.c - an intrusive AVL tree with parent links (see gmc_avl.h).
 *
 * Every node keeps the height of its subtree; after an insert or a remove
 * the path from the change to the root is rebalanced with single or
 * double rotations, so that the two subtrees of every node differ in
 * height by at most one and the tree is at most ~1.44 log2(n) deep.
 */
#include <stddef.h>

#include "gmc_avl.h"

static int height(const struct gmc_avl_node *n)
{
    return n != NULL ? n->height : 0;
}

static void update(struct gmc_avl_node *n)
{
    int l = height(n->left), r = height(n->right);
    n->height = (l > r ? l : r) + 1;
}

/* Make nw take old's place under p (p NULL: the root). */
static void relink(struct gmc_avl *t, struct gmc_avl_node *p, const struct gmc_avl_node *old,
                   struct gmc_avl_node *nw)
{
    if (p == NULL)
        t->root = nw;
    else if (p->left == old)
        p->left = nw;
    else
        p->right = nw;
    if (nw != NULL)
        nw->parent = p;
}

static struct gmc_avl_node *rotate_left(struct gmc_avl *t, struct gmc_avl_node *x)
{
    struct gmc_avl_node *y = x->right;
    relink(t, x->parent, x, y);
    x->right = y->left;
    if (y->left != NULL)
        y->left->parent = x;
    y->left = x;
    x->parent = y;
    update(x);
    update(y);
    return y;
}

static struct gmc_avl_node *rotate_right(struct gmc_avl *t, struct gmc_avl_node *x)
{
    struct gmc_avl_node *y = x->left;
    relink(t, x->parent, x, y);
    x->left = y->right;
    if (y->right != NULL)
        y->right->parent = x;
    y->right = x;
    x->parent = y;
    update(x);
    update(y);
    return y;
}

/* Restore the balance at n; returns the subtree's new root. */
static struct gmc_avl_node *balance(struct gmc_avl *t, struct gmc_avl_node *n)
{
    update(n);
    int bf = height(n->left) - height(n->right);
    if (bf > 1) {
        if (height(n->left->left) < height(n->left->right))
            (void)rotate_left(t, n->left);
        return rotate_right(t, n);
    }
    if (bf < -1) {
        if (height(n->right->right) < height(n->right->left))
            (void)rotate_right(t, n->right);
        return rotate_left(t, n);
    }
    return n;
}

static void rebalance_up(struct gmc_avl *t, struct gmc_avl_node *n)
{
    while (n != NULL) {
        int before = n->height;
        struct gmc_avl_node *top = balance(t, n);
        /* Nothing above changes once a subtree keeps its height and root. */
        if (top == n && n->height == before)
            return;
        n = top->parent;
    }
}

void gmc_avl_init(struct gmc_avl *t)
{
    t->root = NULL;
    t->count = 0;
}

void gmc_avl_insert(struct gmc_avl *t, struct gmc_avl_node *n, gmc_avl_cmp_fn cmp)
{
    struct gmc_avl_node *p = NULL, **link = &t->root;
    while (*link != NULL) {
        p = *link;
        link = cmp(n, p) < 0 ? &p->left : &p->right;
    }
    n->left = n->right = NULL;
    n->parent = p;
    n->height = 1;
    *link = n;
    t->count++;
    rebalance_up(t, p);
}

void gmc_avl_remove(struct gmc_avl *t, struct gmc_avl_node *n)
{
    struct gmc_avl_node *start;
    if (n->left != NULL && n->right != NULL) {
        /* Put the successor s (the leftmost node of the right subtree,
         * which has no left child) in n's place. */
        struct gmc_avl_node *s = n->right;
        while (s->left != NULL)
            s = s->left;
        if (s->parent != n) {
            struct gmc_avl_node *sp = s->parent;
            sp->left = s->right;
            if (s->right != NULL)
                s->right->parent = sp;
            s->right = n->right;
            n->right->parent = s;
            start = sp;
        } else {
            start = s;
        }
        s->left = n->left;
        n->left->parent = s;
        relink(t, n->parent, n, s);
        s->height = n->height;
    } else {
        struct gmc_avl_node *c = n->left != NULL ? n->left : n->right;
        start = n->parent;
        relink(t, n->parent, n, c);
    }
    t->count--;
    n->left = n->right = n->parent = NULL;
    n->height = 0;
    /* A remove can shorten a subtree without changing its root: walk to
     * the top (O(log n)). */
    while (start != NULL)
        start = balance(t, start)->parent;
}

struct gmc_avl_node *gmc_avl_first(const struct gmc_avl *t)
{
    struct gmc_avl_node *n = t->root;
    if (n == NULL)
        return NULL;
    while (n->left != NULL)
        n = n->left;
    return n;
}

struct gmc_avl_node *gmc_avl_next(const struct gmc_avl_node *n)
{
    if (n->right != NULL) {
        n = n->right;
        while (n->left != NULL)
            n = n->left;
        return (struct gmc_avl_node *)n;
    }
    while (n->parent != NULL && n->parent->right == n)
        n = n->parent;
    return n->parent;
}

struct gmc_avl_node *gmc_avl_lower_bound(const struct gmc_avl *t, const void *key, gmc_avl_key_fn kcmp)
{
    struct gmc_avl_node *n = t->root, *best = NULL;
    while (n != NULL) {
        if (kcmp(key, n) <= 0) {
            best = n;
            n = n->left;
        } else {
            n = n->right;
        }
    }
    return best;
}

/* Height of the subtree at n when sound, else a negative code; *prev is
 * the last node visited in order. */
static int check_sub(const struct gmc_avl_node *n, const struct gmc_avl_node *parent, gmc_avl_cmp_fn cmp,
                     const struct gmc_avl_node **prev, size_t *count)
{
    if (n == NULL)
        return 0;
    if (n->parent != parent)
        return -1;
    int l = check_sub(n->left, n, cmp, prev, count);
    if (l < 0)
        return l;
    if (*prev != NULL && cmp(*prev, n) >= 0)
        return -2;
    *prev = n;
    (*count)++;
    int r = check_sub(n->right, n, cmp, prev, count);
    if (r < 0)
        return r;
    if (l - r > 1 || r - l > 1)
        return -3;
    if (n->height != (l > r ? l : r) + 1)
        return -4;
    return n->height;
}

int gmc_avl_check(const struct gmc_avl *t, gmc_avl_cmp_fn cmp)
{
    const struct gmc_avl_node *prev = NULL;
    size_t count = 0;
    int rc = check_sub(t->root, NULL, cmp, &prev, &count);
    if (rc < 0)
        return rc;
    return count == t->count ? 0 : -5;
}
