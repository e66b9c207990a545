/*
 * trace_expr.c - {expressions}: a recursive-descent evaluator over int64
 * with overflow checks.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_expr.h"

struct expr {
    struct tr_parser *p;
    const char *s;
    unsigned line;
    int failed;
};

static int64_t ex_sum(struct expr *e);

static void ex_skip(struct expr *e)
{
    while (*e->s == ' ')
        e->s++;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int64_t ex_fail(struct expr *e, const char *fmt, const char *arg)
{
    if (!e->failed) {
        char m[200];
        snprintf(m, sizeof(m), fmt, arg);
        tr_perr(e->p, e->line, "%s", m);
    }
    e->failed = 1;
    return 0;
}

static int64_t ex_atom(struct expr *e)
{
    ex_skip(e);
    if (e->failed)
        return 0;
    if (*e->s == '(') {
        e->s++;
        int64_t v = ex_sum(e);
        ex_skip(e);
        if (*e->s != ')')
            return ex_fail(e, "expression: missing ')'%s", "");
        e->s++;
        return v;
    }
    if (*e->s == '-') {
        e->s++;
        int64_t v = ex_atom(e);
        if (e->failed)
            return 0;
        if (v == INT64_MIN)
            return ex_fail(e, "expression: overflow%s", "");
        return -v;
    }
    if (isdigit((unsigned char)*e->s)) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(e->s, &end, 0);
        if (errno != 0 || v > INT64_MAX)
            return ex_fail(e, "expression: number out of range%s", "");
        if (isalnum((unsigned char)*end))
            return ex_fail(e, "expression: bad number near '%s'", e->s);
        e->s = end;
        return (int64_t)v;
    }
    if (isalpha((unsigned char)*e->s) || *e->s == '_') {
        char name[TR_NAME_MAX];
        size_t n = 0;
        while ((isalnum((unsigned char)*e->s) || *e->s == '_') && n + 1 < sizeof(name))
            name[n++] = *e->s++;
        name[n] = '\0';
        ex_skip(e);
        if (*e->s == '(') {
            e->s++;
            int64_t a = ex_sum(e), b = 0;
            int two = 0;
            ex_skip(e);
            if (*e->s == ',') {
                e->s++;
                b = ex_sum(e);
                two = 1;
                ex_skip(e);
            }
            if (*e->s != ')')
                return ex_fail(e, "expression: missing ')' after the arguments of %s()", name);
            e->s++;
            if (e->failed)
                return 0;
            if (!strcmp(name, "rand") && !two) {
                if (a <= 0)
                    return ex_fail(e, "expression: rand(N) needs N >= 1%s", "");
                return (int64_t)(rng_next(&e->p->rng) % (uint64_t)a);
            }
            if (!strcmp(name, "min") && two)
                return a < b ? a : b;
            if (!strcmp(name, "max") && two)
                return a > b ? a : b;
            return ex_fail(e, "expression: unknown function '%s' (rand(N), min(A,B), max(A,B))", name);
        }
        for (unsigned i = e->p->nvars; i-- > 0;)
            if (!strcmp(e->p->vars[i].name, name))
                return e->p->vars[i].value;
        return ex_fail(e, "expression: unknown variable '%s'", name);
    }
    if (*e->s == '\0')
        return ex_fail(e, "expression: value missing%s", "");
    return ex_fail(e, "expression: unexpected '%s'", e->s);
}

static int64_t ex_prod(struct expr *e)
{
    int64_t v = ex_atom(e);
    for (;;) {
        ex_skip(e);
        char op = *e->s;
        if (e->failed || (op != '*' && op != '/' && op != '%'))
            return v;
        e->s++;
        int64_t r = ex_atom(e);
        if (e->failed)
            return 0;
        if (op == '*') {
            if (__builtin_mul_overflow(v, r, &v))
                return ex_fail(e, "expression: overflow%s", "");
        } else {
            if (r == 0)
                return ex_fail(e, "expression: division by zero%s", "");
            if (v == INT64_MIN && r == -1)
                return ex_fail(e, "expression: overflow%s", "");
            v = op == '/' ? v / r : v % r;
        }
    }
}

static int64_t ex_sum(struct expr *e)
{
    int64_t v = ex_prod(e);
    for (;;) {
        ex_skip(e);
        char op = *e->s;
        if (e->failed || (op != '+' && op != '-'))
            return v;
        e->s++;
        int64_t r = ex_prod(e);
        if (e->failed)
            return 0;
        if (op == '+' ? __builtin_add_overflow(v, r, &v) : __builtin_sub_overflow(v, r, &v))
            return ex_fail(e, "expression: overflow%s", "");
    }
}

int tr_subst(struct tr_parser *p, unsigned line, const char *tok, char *out, size_t n)
{
    size_t o = 0;
    for (const char *c = tok; *c;) {
        if (*c == '{') {
            const char *close = strchr(c, '}');
            char ebuf[256];
            size_t el = (size_t)(close - c - 1);
            if (el >= sizeof(ebuf))
                return tr_perr(p, line, "expression too long");
            memcpy(ebuf, c + 1, el);
            ebuf[el] = '\0';
            struct expr e = { p, ebuf, line, 0 };
            int64_t v = ex_sum(&e);
            if (e.failed)
                return -1;
            ex_skip(&e);
            if (*e.s != '\0')
                return tr_perr(p, line, "expression: unexpected '%s' in {%s}", e.s, ebuf);
            int k = snprintf(out + o, n - o, "%" PRId64, v);
            if (k < 0 || (size_t)k >= n - o)
                return tr_perr(p, line, "word too long");
            o += (size_t)k;
            c = close + 1;
        } else {
            if (o + 1 >= n)
                return tr_perr(p, line, "word too long");
            out[o++] = *c++;
        }
    }
    out[o] = '\0';
    return 0;
}
