/*
 * trace.c - parse and expand a gmc workload trace (docs/trace-format.md).
 *
 * Two passes over the lines:
 *   1. structure: tokens, known operations and keys, block nesting
 *      (repeat/submit ... end); nothing is evaluated;
 *   2. expansion: loops unrolled, {expressions} substituted, numbers,
 *      names and flags parsed, and the state a reader can follow (live
 *      allocations and handles, residency references, locks, power state)
 *      tracked, so operations the library would refuse for a reason the
 *      trace itself shows are rejected here, before anything runs.
 * The first problem ends parsing with "FILE:LINE: reason".
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmc_check.h"
#include "trace.h"

/* ------------------------------------------------------------ flag tables */
/* The tables themselves are generated from spec/flags.toml: trace_flags.c. */

void tr_flags_str(const struct tr_flag_name *t, uint32_t v, char *buf, size_t n)
{
    size_t len = 0;
    if (n == 0)
        return;
    buf[0] = '\0';
    for (; t->name != NULL; t++) {
        if ((v & t->bit) == 0u)
            continue;
        v &= ~t->bit;
        int k = snprintf(buf + len, n - len, "%s%s", len ? "," : "", t->name);
        if (k < 0 || (size_t)k >= n - len)
            return;
        len += (size_t)k;
    }
    if (v != 0u)
        snprintf(buf + len, n - len, "%s0x%" PRIx32, len ? "," : "", v);
}

static const char *const kind_names[TR_KIND_COUNT] = {
    [TR_CLIENT] = "client",   [TR_EXIT] = "exit",         [TR_ALLOC] = "alloc",
    [TR_DESTROY] = "destroy", [TR_OPEN] = "open",         [TR_LOCK] = "lock",
    [TR_UNLOCK] = "unlock",   [TR_WRITE] = "write",       [TR_READ] = "read",
    [TR_RESIDENT] = "resident", [TR_EVICT] = "evict",     [TR_SUBMIT] = "submit",
    [TR_WAIT] = "wait",       [TR_STANDBY] = "standby",   [TR_HIBERNATE] = "hibernate",
    [TR_RESUME] = "resume",   [TR_BUDGET] = "budget",     [TR_APP_BUDGET] = "app-budget",
    [TR_RESERVE] = "reserve", [TR_MEMINFO] = "memory-info",
};

const char *tr_kind_name(int kind)
{
    return kind > 0 && kind < TR_KIND_COUNT ? kind_names[kind] : "?";
}

int tr_status_from_name(const char *name, int *status)
{
    char buf[96];
    if (strcmp(name, "OK") == 0 || strcmp(name, "GMC_OK") == 0) {
        *status = GMC_OK;
        return 0;
    }
    const char *n = name;
    if (strncmp(n, "GMC_E_", 6) == 0)
        n += 6;
    else if (strncmp(n, "E_", 2) == 0)
        n += 2;
    if (snprintf(buf, sizeof(buf), "GMC_E_%s", n) >= (int)sizeof(buf))
        return -1;
    for (size_t i = 0; i < GMC_STATUS_COUNT; i++) {
        if (strcmp(gmc_status_table[i].name, buf) == 0) {
            *status = gmc_status_table[i].code;
            return 0;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------ lines */

#define MAX_TOKENS 64
#define MAX_DEPTH 8
/* The work expansion may do, in units: each line visited costs one unit
 * per started 64 bytes of its text, each loop iteration one unit. This
 * bounds the expansion itself (loops that create nothing included), not
 * only the operations it creates (TR_MAX_STEPS). */
#define MAX_WORK (8ull * TR_MAX_STEPS)

struct line {
    unsigned no;
    unsigned ntok;
    char *tok[MAX_TOKENS];
    unsigned match; /* repeat/submit: index of the matching end */
    unsigned cost;  /* expansion work units of one visit (see MAX_WORK) */
};

struct var {
    char name[TR_NAME_MAX];
    int64_t value;
};

/* Per-entity state followed during expansion. */
struct ent_state {
    int alive;
    uint64_t holders;               /* bit per client holding a handle */
    uint32_t refs[TR_MAX_CLIENTS];  /* residency references per client */
    unsigned locked;                /* client + 1, or 0 */
    uint32_t lock_flags;
    unsigned lock_line;
    int failed;                     /* alloc with expect= a failure */
};

struct parser {
    const char *file;
    char *err;
    size_t errlen;
    struct line *lines;
    unsigned nlines;
    struct trace *t;
    struct ent_state *es;
    size_t cap_ops, cap_ents;
    struct var vars[MAX_DEPTH];
    unsigned nvars;
    int client_alive[TR_MAX_CLIENTS];
    int power;        /* 0 D0, else the op that left it */
    unsigned power_line;
    uint64_t rng;
    int frame;
    int in_frames;
    unsigned cur_line;
    uint64_t work; /* expansion work units spent (MAX_WORK) */
    /* Allocation names to their latest entity (index + 1; 0 = empty slot),
     * open addressing: a lookup costs the same with a million entities. */
    unsigned *names;
    size_t names_cap, names_used;
    unsigned nlocked; /* live entities with a lock */
};

static int perr(struct parser *p, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int perr(struct parser *p, unsigned line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char where[160] = "";
    size_t wl = 0;
    for (unsigned i = 0; i < p->nvars && wl < sizeof(where); i++) {
        int k = snprintf(where + wl, sizeof(where) - wl, "%s%s=%" PRId64, i ? ", " : " (",
                         p->vars[i].name, p->vars[i].value);
        if (k < 0)
            break;
        wl += (size_t)k;
    }
    if (wl > 0 && wl + 1 < sizeof(where))
        strcat(where, ")");
    snprintf(p->err, p->errlen, "%s:%u: %s%s", p->file, line, msg, where);
    return -1;
}

/* Split text into lines of tokens. Braces keep their spaces; '#' outside
 * braces starts a comment. */
static int split(struct parser *p, char *text)
{
    size_t cap = 64;
    p->lines = calloc(cap, sizeof(*p->lines));
    if (p->lines == NULL)
        return perr(p, 0, "out of memory");
    unsigned no = 0;
    char *s = text;
    while (*s != '\0') {
        no++;
        char *eol = strchr(s, '\n');
        char *next = eol ? eol + 1 : s + strlen(s);
        if (eol)
            *eol = '\0';
        struct line ln;
        memset(&ln, 0, sizeof(ln));
        ln.no = no;
        char *c = s;
        for (;;) {
            while (*c == ' ' || *c == '\t' || *c == '\r')
                c++;
            if (*c == '\0' || *c == '#')
                break;
            if (ln.ntok == MAX_TOKENS)
                return perr(p, no, "more than %d words on a line", MAX_TOKENS);
            char *start = c, *w = c;
            int depth = 0;
            while (*c != '\0' && (depth > 0 || (*c != ' ' && *c != '\t' && *c != '\r' && *c != '#'))) {
                unsigned char ch = (unsigned char)*c;
                if (ch == '{') {
                    if (depth > 0)
                        return perr(p, no, "'{' inside '{...}'");
                    depth = 1;
                } else if (ch == '}') {
                    if (depth == 0)
                        return perr(p, no, "'}' without '{'");
                    depth = 0;
                }
                if (ch < 0x20 && ch != '\t' && ch != '\r')
                    return perr(p, no, "control character 0x%02x", ch);
                *w++ = *c++;
            }
            if (depth > 0)
                return perr(p, no, "'{' without '}'");
            int at_end = (*c == '\0' || *c == '#');
            *w = '\0'; /* w <= c: a '#' at c is overwritten only when w == c, after at_end */
            ln.tok[ln.ntok++] = start;
            ln.cost += 1u + (unsigned)((size_t)(w - start) / 64u);
            if (at_end)
                break;
            c++;
        }
        if (ln.ntok > 0) {
            if (p->nlines == cap) {
                cap *= 2;
                struct line *nl = realloc(p->lines, cap * sizeof(*nl));
                if (nl == NULL)
                    return perr(p, no, "out of memory");
                p->lines = nl;
            }
            p->lines[p->nlines++] = ln;
        }
        s = next;
    }
    return 0;
}

/* ----------------------------------------------------------- operations */

enum { B_NONE, B_REPEAT, B_SUBMIT, B_ITEM, B_END };

struct opdef {
    const char *word;
    int kind;         /* tr_kind, or 0 for directives and items */
    int block;        /* B_* */
    const char *keys; /* accepted key= words, space separated, with leading and trailing space */
    const char *bare; /* accepted bare words after the positional ones */
};

static const struct opdef opdefs[] = {
    { "client", TR_CLIENT, B_NONE, " owner= ", " nonsecure " },
    { "exit", TR_EXIT, B_NONE, " ", " " },
    { "alloc", TR_ALLOC, B_NONE,
      " size= client= align= pitch= segments= prefer= evict-to= banks= priority= umd-priority= flags= kmt= info2= vidpn= expect= ",
      " " },
    { "destroy", TR_DESTROY, B_NONE, " client= expect= ", " " },
    { "open", TR_OPEN, B_NONE, " client= expect= ", " " },
    { "lock", TR_LOCK, B_NONE, " client= flags= expect= ", " " },
    { "unlock", TR_UNLOCK, B_NONE, " client= expect= ", " " },
    { "write", TR_WRITE, B_NONE, " client= offset= size= pattern= expect= ", " " },
    { "read", TR_READ, B_NONE, " client= offset= size= expect= ", " verify " },
    { "resident", TR_RESIDENT, B_NONE, " client= trim= expect= ", " " },
    { "evict", TR_EVICT, B_NONE, " client= expect= ", " " },
    { "submit", TR_SUBMIT, B_SUBMIT, " client= expect= ", " " },
    { "wait", TR_WAIT, B_NONE, " timeout= expect= ", " " },
    { "standby", TR_STANDBY, B_NONE, " expect= ", " " },
    { "hibernate", TR_HIBERNATE, B_NONE, " expect= ", " " },
    { "resume", TR_RESUME, B_NONE, " expect= ", " " },
    { "budget", TR_BUDGET, B_NONE, " client= local= non-local= expect= ", " " },
    { "app-budget", TR_APP_BUDGET, B_NONE, " local= non-local= expect= ", " " },
    { "reserve", TR_RESERVE, B_NONE, " client= local= non-local= expect= ", " " },
    { "memory-info", TR_MEMINFO, B_NONE, " client= group= budget= usage= reservation= available= expect= ", " " },
    { "repeat", 0, B_REPEAT, " ", " " },
    { "frames", 0, B_REPEAT, " ", " " },
    { "end", 0, B_END, " ", " " },
    { "use", 0, B_ITEM, " ", " write " },
    { "copy", 0, B_ITEM, " src-offset= dst-offset= size= ", " " },
    { "fill", 0, B_ITEM, " pattern= offset= size= ", " " },
    { "device", 0, B_NONE, " ", " " },
    { "seed", 0, B_NONE, " ", " " },
};
#define NOPDEFS (sizeof(opdefs) / sizeof(opdefs[0]))

static const struct opdef *find_op(const char *w)
{
    for (size_t i = 0; i < NOPDEFS; i++)
        if (strcmp(opdefs[i].word, w) == 0)
            return &opdefs[i];
    return NULL;
}

/* Number of positional words (names) an operation takes: min and max. */
static void positional(const char *w, unsigned *min, unsigned *max)
{
    *min = 0;
    *max = 0;
    if (!strcmp(w, "client") || !strcmp(w, "exit") || !strcmp(w, "alloc") || !strcmp(w, "destroy") ||
        !strcmp(w, "open") || !strcmp(w, "lock") || !strcmp(w, "unlock") || !strcmp(w, "write") ||
        !strcmp(w, "read") || !strcmp(w, "use") || !strcmp(w, "fill") || !strcmp(w, "device") ||
        !strcmp(w, "seed")) {
        *min = *max = 1;
    } else if (!strcmp(w, "copy")) {
        *min = *max = 2;
    } else if (!strcmp(w, "resident") || !strcmp(w, "evict")) {
        *min = 1;
        *max = TR_MAX_REFS;
    } else if (!strcmp(w, "repeat") || !strcmp(w, "frames")) {
        *min = 1;
        *max = 1;
    }
}

static int key_ok(const char *keys, const char *tok, size_t klen)
{
    char buf[64];
    if (klen + 4 > sizeof(buf)) /* ' ', key, '=', ' ', NUL */
        return 0;
    buf[0] = ' ';
    memcpy(buf + 1, tok, klen + 1); /* includes '=' */
    buf[klen + 2] = ' ';
    buf[klen + 3] = '\0';
    return strstr(keys, buf) != NULL;
}

static int bare_ok(const char *bare, const char *tok)
{
    char buf[64];
    if (strlen(tok) + 3 > sizeof(buf))
        return 0;
    snprintf(buf, sizeof(buf), " %s ", tok);
    return strstr(bare, buf) != NULL;
}

/* Pass 1: every line is a known operation with known keys and the right
 * number of names; blocks nest properly. */
static int structure(struct parser *p)
{
    unsigned stack[MAX_DEPTH + 1];
    int sk[MAX_DEPTH + 1];
    unsigned depth = 0;
    int seen_device = 0, seen_seed = 0;
    for (unsigned i = 0; i < p->nlines; i++) {
        struct line *ln = &p->lines[i];
        const char *w = ln->tok[0];
        const struct opdef *d = find_op(w);
        if (d == NULL)
            return perr(p, ln->no, "unknown operation '%s'", w);
        int in_submit = depth > 0 && sk[depth - 1] == B_SUBMIT;
        if (d->block == B_ITEM && !in_submit)
            return perr(p, ln->no, "'%s' outside a submit block", w);
        if (in_submit && d->block != B_ITEM && d->block != B_END)
            return perr(p, ln->no, "'%s' inside a submit block (only use, copy and fill; close it with 'end')", w);
        if ((!strcmp(w, "device") || !strcmp(w, "seed")) && depth > 0)
            return perr(p, ln->no, "'%s' inside a block", w);
        if (!strcmp(w, "device")) {
            if (seen_device)
                return perr(p, ln->no, "second 'device' line (first at line %u)", (unsigned)seen_device);
            seen_device = (int)ln->no;
        }
        if (!strcmp(w, "seed")) {
            if (seen_seed)
                return perr(p, ln->no, "second 'seed' line (first at line %u)", (unsigned)seen_seed);
            seen_seed = (int)ln->no;
        }
        if (!strcmp(w, "device") || !strcmp(w, "seed")) {
            if (ln->ntok != 2)
                return perr(p, ln->no, ln->ntok < 2 ? "%s: missing %s" : "%s: one %s only", w,
                            !strcmp(w, "device") ? "device string" : "seed value");
            continue;
        }
        unsigned min, max, npos = 0;
        positional(w, &min, &max);
        unsigned k = 1;
        for (; k < ln->ntok && npos < max; k++) {
            const char *tk = ln->tok[k];
            if (strchr(tk, '=') != NULL || bare_ok(d->bare, tk))
                break;
            npos++;
        }
        /* `repeat N as VAR` */
        if (d->block == B_REPEAT && k < ln->ntok) {
            if (strcmp(ln->tok[k], "as") != 0)
                return perr(p, ln->no, "%s: expected 'as VAR' after the count, got '%s'", w, ln->tok[k]);
            if (k + 1 >= ln->ntok)
                return perr(p, ln->no, "%s: 'as' needs a variable name", w);
            const char *v = ln->tok[k + 1];
            if (!isalpha((unsigned char)v[0]) && v[0] != '_')
                return perr(p, ln->no, "%s: bad variable name '%s'", w, v);
            for (const char *c = v; *c; c++)
                if (!isalnum((unsigned char)*c) && *c != '_')
                    return perr(p, ln->no, "%s: bad variable name '%s'", w, v);
            if (strlen(v) >= TR_NAME_MAX)
                return perr(p, ln->no, "%s: variable name too long", w);
            k += 2;
        }
        if (npos < min) {
            if (d->block == B_REPEAT)
                return perr(p, ln->no, "%s: missing count", w);
            if (min == 2)
                return perr(p, ln->no, "%s: needs a source and a destination allocation", w);
            return perr(p, ln->no, "%s: missing %s", w,
                        !strcmp(w, "client") || !strcmp(w, "exit") ? "client name"
                        : !strcmp(w, "device")                      ? "device string"
                        : !strcmp(w, "seed")                        ? "seed value"
                                                                    : "allocation name");
        }
        for (; k < ln->ntok; k++) {
            const char *tk = ln->tok[k];
            const char *eq = strchr(tk, '=');
            if (eq != NULL) {
                if (eq == tk)
                    return perr(p, ln->no, "%s: '=' without a key", w);
                if (!key_ok(d->keys, tk, (size_t)(eq - tk)))
                    return perr(p, ln->no, "%s: unknown key '%.*s'", w, (int)(eq - tk), tk);
                if (eq[1] == '\0')
                    return perr(p, ln->no, "%s: empty value for '%.*s'", w, (int)(eq - tk), tk);
                for (unsigned j = k + 1; j < ln->ntok; j++) {
                    const char *o = ln->tok[j];
                    if (strncmp(o, tk, (size_t)(eq - tk) + 1) == 0)
                        return perr(p, ln->no, "%s: '%.*s' given twice", w, (int)(eq - tk), tk);
                }
            } else if (!bare_ok(d->bare, tk)) {
                return perr(p, ln->no, "%s: unexpected word '%s'", w, tk);
            } else {
                for (unsigned j = k + 1; j < ln->ntok; j++)
                    if (strcmp(ln->tok[j], tk) == 0)
                        return perr(p, ln->no, "%s: '%s' given twice", w, tk);
            }
        }
        if (d->block == B_REPEAT || d->block == B_SUBMIT) {
            if (depth == MAX_DEPTH)
                return perr(p, ln->no, "blocks nested deeper than %d", MAX_DEPTH);
            stack[depth] = i;
            sk[depth] = d->block;
            depth++;
        } else if (d->block == B_END) {
            if (depth == 0)
                return perr(p, ln->no, "'end' without 'repeat', 'frames' or 'submit'");
            depth--;
            p->lines[stack[depth]].match = i;
        }
    }
    if (depth > 0) {
        struct line *o = &p->lines[stack[depth - 1]];
        return perr(p, o->no, "'%s' without 'end'", o->tok[0]);
    }
    return 0;
}

/* ------------------------------------------------------------ expressions */

struct expr {
    struct parser *p;
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
        perr(e->p, e->line, "%s", m);
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

/* Replace every {expr} of tok by its decimal value into out. */
static int subst(struct parser *p, unsigned line, const char *tok, char *out, size_t n)
{
    size_t o = 0;
    for (const char *c = tok; *c;) {
        if (*c == '{') {
            const char *close = strchr(c, '}');
            char ebuf[256];
            size_t el = (size_t)(close - c - 1);
            if (el >= sizeof(ebuf))
                return perr(p, line, "expression too long");
            memcpy(ebuf, c + 1, el);
            ebuf[el] = '\0';
            struct expr e = { p, ebuf, line, 0 };
            int64_t v = ex_sum(&e);
            if (e.failed)
                return -1;
            ex_skip(&e);
            if (*e.s != '\0')
                return perr(p, line, "expression: unexpected '%s' in {%s}", e.s, ebuf);
            int k = snprintf(out + o, n - o, "%" PRId64, v);
            if (k < 0 || (size_t)k >= n - o)
                return perr(p, line, "word too long");
            o += (size_t)k;
            c = close + 1;
        } else {
            if (o + 1 >= n)
                return perr(p, line, "word too long");
            out[o++] = *c++;
        }
    }
    out[o] = '\0';
    return 0;
}

/* ---------------------------------------------------------------- values */

/* Decimal or 0x hex, optional K/M/G (KiB/MiB/GiB) suffix. */
static int parse_num(const char *s, uint64_t *out)
{
    if (!isdigit((unsigned char)s[0]))
        return -1;
    char *end;
    errno = 0;
    uint64_t v;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        if (!isxdigit((unsigned char)s[2]))
            return -1;
        v = strtoull(s + 2, &end, 16);
    } else {
        v = strtoull(s, &end, 10);
    }
    if (errno != 0)
        return -1;
    uint64_t mul = 1;
    if (*end == 'K' || *end == 'M' || *end == 'G') {
        mul = *end == 'K' ? 1ull << 10 : *end == 'M' ? 1ull << 20 : 1ull << 30;
        end++;
        if (!strcmp(end, "iB"))
            end += 2;
    }
    if (*end != '\0')
        return -1;
    if (v != 0 && mul > UINT64_MAX / v)
        return -1;
    *out = v * mul;
    return 0;
}

static int num_arg(struct parser *p, unsigned line, const char *op, const char *key, const char *s,
                   uint64_t max, uint64_t *out)
{
    if (parse_num(s, out) != 0)
        return perr(p, line, "%s: bad number '%s' for %s", op, s, key);
    if (*out > max)
        return perr(p, line, "%s: %s %s is out of range (at most %" PRIu64 ")", op, key, s, max);
    return 0;
}

static int flag_list(struct parser *p, unsigned line, const char *op, const char *key,
                     const struct tr_flag_name *t, const char *s, uint32_t *out)
{
    *out = 0;
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", s);
    char *save = NULL;
    if (buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
        return perr(p, line, "%s: empty name in %s=%s", op, key, s);
    for (char *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        const struct tr_flag_name *e = t;
        for (; e->name; e++)
            if (!strcmp(e->name, f))
                break;
        if (e->name == NULL) {
            /* A hint when the name belongs to another key. */
            static const struct {
                const char *key;
                const struct tr_flag_name *t;
            } others[] = { { "flags", tr_alloc_flags }, { "kmt", tr_kmt_flags }, { "info2", tr_info2_flags } };
            for (size_t i = 0; i < 3; i++) {
                if (others[i].t == t || t == tr_lock_flags)
                    continue;
                for (const struct tr_flag_name *o = others[i].t; o->name; o++)
                    if (!strcmp(o->name, f))
                        return perr(p, line, "%s: '%s' is not a %s= flag (it is a %s= flag)", op, f, key,
                                    others[i].key);
            }
            return perr(p, line, "%s: unknown %s flag '%s'", op,
                        t == tr_lock_flags ? "lock" : key, f);
        }
        if (*out & e->bit)
            return perr(p, line, "%s: flag '%s' given twice", op, f);
        *out |= e->bit;
    }
    return 0;
}

static int seg_list(struct parser *p, unsigned line, const char *op, const char *key, const char *s,
                    int allow_top, struct gmc_segment_pref *prefs, unsigned maxn, uint32_t *mask)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", s);
    if (buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
        return perr(p, line, "%s: empty entry in %s=%s", op, key, s);
    unsigned n = 0;
    char *save = NULL;
    *mask = 0;
    for (char *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        int top = 0;
        char *colon = strchr(f, ':');
        if (colon) {
            if (!allow_top || strcmp(colon, ":top") != 0)
                return perr(p, line, "%s: bad entry '%s' in %s= (%s)", op, f, key,
                            allow_top ? "a segment id, optionally ':top'" : "a segment id");
            *colon = '\0';
            top = 1;
        }
        uint64_t v;
        if (parse_num(f, &v) != 0 || v < 1 || v > GMC_SEGMENT_ID_MAX)
            return perr(p, line, "%s: bad %s '%s' in %s= (1..%u)", op,
                        !strcmp(key, "banks") ? "bank" : "segment id", f, key, GMC_SEGMENT_ID_MAX);
        if (n == maxn)
            return perr(p, line, "%s: more than %u entries in %s=", op, maxn, key);
        if (*mask & (1u << (v - 1)))
            return perr(p, line, "%s: %s %" PRIu64 " given twice in %s=", op,
                        !strcmp(key, "banks") ? "bank" : "segment", v, key);
        *mask |= 1u << (v - 1);
        if (prefs) {
            prefs[n].id = (uint8_t)v;
            prefs[n].top_down = (uint8_t)top;
        }
        n++;
    }
    return 0;
}

static int priority_arg(struct parser *p, unsigned line, const char *op, const char *key, const char *s,
                        uint32_t *out)
{
    static const struct {
        const char *n;
        uint32_t v;
    } pr[] = { { "minimum", GMC_PRIORITY_MINIMUM }, { "low", GMC_PRIORITY_LOW },
               { "normal", GMC_PRIORITY_NORMAL },   { "high", GMC_PRIORITY_HIGH },
               { "maximum", GMC_PRIORITY_MAXIMUM } };
    for (size_t i = 0; i < 5; i++)
        if (!strcmp(s, pr[i].n)) {
            *out = pr[i].v;
            return 0;
        }
    uint64_t v;
    if (parse_num(s, &v) != 0 || v > UINT32_MAX)
        return perr(p, line, "%s: bad %s '%s' (minimum, low, normal, high, maximum or a 32-bit number)", op,
                    key, s);
    *out = (uint32_t)v;
    return 0;
}

static int name_ok(const char *s)
{
    if (!isalpha((unsigned char)s[0]) && s[0] != '_')
        return 0;
    for (const char *c = s; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_' && *c != '.' && *c != '-')
            return 0;
    return strlen(s) < TR_NAME_MAX;
}

/* ------------------------------------------------------------- expansion */

struct args {
    unsigned npos;
    char pos[TR_MAX_REFS][TR_NAME_MAX + 16];
    unsigned nkv;
    char key[16][16];
    char val[16][256];
    unsigned nbare;
    char bare[4][16];
};

static const char *kv(const struct args *a, const char *key)
{
    for (unsigned i = 0; i < a->nkv; i++)
        if (!strcmp(a->key[i], key))
            return a->val[i];
    return NULL;
}

static int has_bare(const struct args *a, const char *w)
{
    for (unsigned i = 0; i < a->nbare; i++)
        if (!strcmp(a->bare[i], w))
            return 1;
    return 0;
}

static int get_args(struct parser *p, const struct line *ln, const struct opdef *d, struct args *a)
{
    memset(a, 0, sizeof(*a));
    unsigned min, max;
    positional(d->word, &min, &max);
    unsigned k = 1;
    char buf[512];
    for (; k < ln->ntok; k++) {
        const char *eq = strchr(ln->tok[k], '=');
        if (eq != NULL) {
            size_t kl = (size_t)(eq - ln->tok[k]);
            if (kl >= sizeof(a->key[0]))
                return perr(p, ln->no, "key too long");
            if (a->nkv == sizeof(a->key) / sizeof(a->key[0]))
                return perr(p, ln->no, "%s: too many keys", d->word);
            memcpy(a->key[a->nkv], ln->tok[k], kl);
            a->key[a->nkv][kl] = '\0';
            /* substitute the value part only */
            if (subst(p, ln->no, eq + 1, buf, sizeof(buf)) != 0)
                return -1;
            if (strlen(buf) >= sizeof(a->val[0]))
                return perr(p, ln->no, "%s: value of %s too long", d->word, a->key[a->nkv]);
            if (buf[0] == '\0')
                return perr(p, ln->no, "%s: empty value for '%s'", d->word, a->key[a->nkv]);
            strcpy(a->val[a->nkv], buf);
            a->nkv++;
        } else if (bare_ok(d->bare, ln->tok[k])) {
            /* structure() refused a bare word given twice; every opdef has
             * fewer distinct bare words than a->bare holds */
            if (a->nbare == sizeof(a->bare) / sizeof(a->bare[0]))
                return perr(p, ln->no, "%s: too many words", d->word);
            snprintf(a->bare[a->nbare++], sizeof(a->bare[0]), "%s", ln->tok[k]);
        } else {
            if (subst(p, ln->no, ln->tok[k], buf, sizeof(buf)) != 0)
                return -1;
            if (a->npos == max)
                return perr(p, ln->no, "%s: unexpected word '%s'", d->word, ln->tok[k]);
            if (strlen(buf) >= sizeof(a->pos[0]))
                return perr(p, ln->no, "%s: name too long '%s'", d->word, buf);
            strcpy(a->pos[a->npos++], buf);
        }
    }
    return 0;
}

static struct tr_op *new_op(struct parser *p, int kind, unsigned line)
{
    struct trace *t = p->t;
    if (t->nops >= TR_MAX_STEPS) {
        perr(p, line, "the trace expands to more than %u operations", TR_MAX_STEPS);
        return NULL;
    }
    if (t->nops == p->cap_ops) {
        size_t nc = p->cap_ops ? p->cap_ops * 2 : 256;
        struct tr_op *n = realloc(t->ops, nc * sizeof(*n));
        if (n == NULL) {
            perr(p, line, "out of memory");
            return NULL;
        }
        t->ops = n;
        p->cap_ops = nc;
    }
    struct tr_op *o = &t->ops[t->nops++];
    memset(o, 0, sizeof(*o));
    o->kind = kind;
    o->line = line;
    o->frame = p->frame;
    return o;
}

static int find_client(struct parser *p, unsigned line, const char *op, const char *name, unsigned *out)
{
    for (unsigned i = p->t->nclients; i-- > 0;)
        if (p->client_alive[i] && !strcmp(p->t->clients[i].name, name)) {
            *out = i;
            return 0;
        }
    for (unsigned i = p->t->nclients; i-- > 0;)
        if (!strcmp(p->t->clients[i].name, name))
            return perr(p, line, "%s: client '%s' has exited (line %u)", op, name, p->t->clients[i].line);
    return perr(p, line, "%s: unknown client '%s'", op, name);
}

static int add_client(struct parser *p, unsigned line, const char *name, uint32_t flags, uint32_t owner)
{
    struct trace *t = p->t;
    if (t->nclients == TR_MAX_CLIENTS)
        return perr(p, line, "client: more than %d clients", TR_MAX_CLIENTS);
    unsigned idx = t->nclients++;
    struct tr_client *c = &t->clients[idx];
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->flags = flags;
    c->owner = owner;
    c->line = line;
    p->client_alive[idx] = 1;
    struct tr_op *o = new_op(p, TR_CLIENT, line);
    if (o == NULL)
        return -1;
    o->client = idx;
    return 0;
}

static int default_client(struct parser *p, unsigned line, const char *op, unsigned *out)
{
    for (unsigned i = 0; i < p->t->nclients; i++)
        if (p->client_alive[i]) {
            *out = i;
            return 0;
        }
    if (p->t->nclients == 0) {
        if (add_client(p, line, "default", 0, 0) != 0)
            return -1;
        *out = 0;
        return 0;
    }
    return perr(p, line, "%s: no live client (every client has exited)", op);
}

static size_t name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return (size_t)(h ^ (h >> 29));
}

/* The slot of name: holding its latest entity, or the empty one where it
 * would go. names_cap is a power of two and never full. */
static unsigned *name_slot(const struct parser *p, const char *name)
{
    size_t m = p->names_cap - 1u;
    for (size_t i = name_hash(name) & m;; i = (i + 1u) & m) {
        unsigned *sl = &p->names[i];
        if (*sl == 0u || !strcmp(p->t->entities[*sl - 1u].name, name))
            return sl;
    }
}

/* The latest entity named name, or -1. */
static long name_find(const struct parser *p, const char *name)
{
    if (p->names_cap == 0)
        return -1;
    unsigned sl = *name_slot(p, name);
    return sl ? (long)sl - 1 : -1;
}

/* Entity idx (already in t->entities) becomes its name's latest. */
static int name_put(struct parser *p, unsigned idx)
{
    if (2u * (p->names_used + 1u) > p->names_cap) {
        size_t nc = p->names_cap ? p->names_cap * 2u : 256u;
        unsigned *old = p->names;
        size_t oc = p->names_cap;
        p->names = calloc(nc, sizeof(*p->names));
        if (p->names == NULL) {
            p->names = old;
            return -1;
        }
        p->names_cap = nc;
        for (size_t i = 0; i < oc; i++)
            if (old[i])
                *name_slot(p, p->t->entities[old[i] - 1u].name) = old[i];
        free(old);
    }
    unsigned *sl = name_slot(p, p->t->entities[idx].name);
    if (*sl == 0u)
        p->names_used++;
    *sl = idx + 1u;
    return 0;
}

static int find_entity(struct parser *p, unsigned line, const char *op, const char *name, unsigned *out)
{
    long f = name_find(p, name);
    if (f < 0)
        return perr(p, line, "%s: unknown allocation '%s'", op, name);
    unsigned i = (unsigned)f;
    if (p->es[i].failed)
        return perr(p, line, "%s: allocation '%s' is expected not to be created (line %u)", op, name,
                    p->t->entities[i].line);
    if (!p->es[i].alive)
        return perr(p, line, "%s: allocation '%s' was destroyed", op, name);
    *out = i;
    return 0;
}

/* The acting client for an operation on entity e: client= or the creator,
 * which must hold a handle. */
static int acting_client(struct parser *p, unsigned line, const char *op, const struct args *a, unsigned e,
                         unsigned *out)
{
    const char *cn = kv(a, "client");
    unsigned c = p->t->entities[e].client;
    if (cn != NULL && find_client(p, line, op, cn, &c) != 0)
        return -1;
    if (!(p->es[e].holders >> c & 1u))
        return perr(p, line, "%s: client '%s' holds no handle to '%s'", op, p->t->clients[c].name,
                    p->t->entities[e].name);
    *out = c;
    return 0;
}

static int expect_arg(struct parser *p, unsigned line, const char *op, const struct args *a, struct tr_op *o)
{
    const char *s = kv(a, "expect");
    if (s == NULL)
        return 0;
    if (tr_status_from_name(s, &o->expect) != 0)
        return perr(p, line, "%s: unknown status '%s' for expect", op, s);
    o->has_expect = 1;
    return 0;
}

/* Checks apply unless the operation is expected to fail. */
static int checked(const struct tr_op *o)
{
    return !o->has_expect || o->expect == GMC_OK;
}

static void close_handle(struct parser *p, unsigned e, unsigned c)
{
    struct ent_state *s = &p->es[e];
    s->holders &= ~(1ull << c);
    s->refs[c] = 0;
    if (s->locked == c + 1) {
        s->locked = 0;
        p->nlocked--;
    }
    if (s->holders == 0)
        s->alive = 0;
}

/* The library's rules are asked, not copied: gmc_check.h holds the
 * predicates gmc's own calls apply. The parser tracks the state they take
 * (power state, locks, handles) and words their answers for a trace. */

static enum gmc_power_state power_state(const struct parser *p)
{
    return p->power == TR_STANDBY ? GMC_POWER_STANDBY : p->power == TR_HIBERNATE ? GMC_POWER_HIBERNATE : GMC_POWER_D0;
}

static const char *power_name(const struct parser *p)
{
    return p->power == TR_STANDBY ? "standby" : "hibernate";
}

static int power_check(struct parser *p, unsigned line, const char *op, const struct tr_op *o)
{
    if (checked(o) && gmc_check_powered(power_state(p)) != GMC_OK)
        return perr(p, line, "%s: the device is in %s since line %u (resume first)", op, power_name(p),
                    p->power_line);
    return 0;
}

/* Whether client c may take a lock with lock_flags on entity e (a plain
 * read or write takes a ReadOnly or WriteOnly one), as gmc_lock() decides. */
static int cpu_access_check(struct parser *p, unsigned line, const char *op, unsigned e, unsigned c,
                            uint32_t lock_flags)
{
    const struct tr_entity *en = &p->t->entities[e];
    const char *nm = en->name;
    const int st = gmc_check_lock(&en->desc, lock_flags, c == en->client);
    switch (st) {
    case GMC_OK:
        return 0;
    case GMC_E_LOCK_FLAGS:
        return perr(p, line, "%s: ReadOnly and %s exclude each other", op,
                    (lock_flags & GMC_LOCK_WRITE_ONLY) ? "WriteOnly" : "Discard");
    case GMC_E_NOT_CPU_VISIBLE:
        return perr(p, line, "%s: '%s' is not CpuVisible", op, nm);
    case GMC_E_PROTECTED:
        return perr(p, line, "%s: '%s' is protected and is never mapped", op, nm);
    case GMC_E_NOT_CREATOR:
        return perr(p, line, "%s: '%s' is shared: only its creator '%s' locks it", op, nm,
                    p->t->clients[en->client].name);
    case GMC_E_READ_ONLY:
        return perr(p, line, "%s: '%s' was created ReadOnly", op, nm);
    default:
        return perr(p, line, "%s: '%s': %s (%s)", op, nm, gmc_status_name(st), gmc_strerror(st));
    }
}

static int range_args(struct parser *p, unsigned line, const char *op, const struct args *a,
                      const char *offkey, const char *sizekey, uint64_t total, const char *nm, uint64_t *off,
                      uint64_t *size)
{
    *off = 0;
    const char *s = kv(a, offkey);
    if (s && num_arg(p, line, op, offkey, s, UINT64_MAX, off) != 0)
        return -1;
    if (*off >= total)
        return perr(p, line, "%s: %s %" PRIu64 " is past the end of '%s' (%" PRIu64 " bytes)", op, offkey, *off,
                    nm, total);
    *size = total - *off;
    s = kv(a, sizekey);
    if (s) {
        if (num_arg(p, line, op, sizekey, s, UINT64_MAX, size) != 0)
            return -1;
        if (*size == 0)
            return perr(p, line, "%s: %s must be at least 1", op, sizekey);
        if (*size > total - *off)
            return perr(p, line, "%s: %s + %s = %" PRIu64 " is past the end of '%s' (%" PRIu64 " bytes)", op,
                        offkey, sizekey, *off + *size, nm, total);
    }
    return 0;
}

static int do_alloc(struct parser *p, const struct line *ln, const struct args *a)
{
    const unsigned L = ln->no;
    const char *op = "alloc";
    struct trace *t = p->t;
    const char *name = a->pos[0];
    if (!name_ok(name))
        return perr(p, L, "alloc: bad allocation name '%s'", name);
    long prev = name_find(p, name); /* only the latest of a name can be alive */
    if (prev >= 0 && p->es[prev].alive)
        return perr(p, L, "alloc: allocation '%s' already exists (line %u)", name, t->entities[prev].line);
    struct tr_entity en;
    memset(&en, 0, sizeof(en));
    memcpy(en.name, name, strlen(name) + 1); /* name_ok: shorter than TR_NAME_MAX */
    en.line = L;
    gmc_alloc_desc_init(&en.desc);
    const char *s = kv(a, "client");
    if (s ? find_client(p, L, op, s, &en.client) : default_client(p, L, op, &en.client))
        return -1;
    s = kv(a, "size");
    if (s == NULL)
        return perr(p, L, "alloc: missing size=");
    if (num_arg(p, L, op, "size", s, 1ull << 40, &en.desc.size) != 0)
        return -1;
    if (en.desc.size == 0)
        return perr(p, L, "alloc: size must be at least 1");
    en.cpu_size = (en.desc.size + GMC_PAGE_SIZE - 1) & ~(uint64_t)(GMC_PAGE_SIZE - 1);
    uint64_t v;
    if ((s = kv(a, "align"))) {
        if (num_arg(p, L, op, "align", s, UINT32_MAX, &v) != 0)
            return -1;
        en.desc.alignment = (uint32_t)v;
    }
    if ((s = kv(a, "pitch")) && num_arg(p, L, op, "pitch", s, 1ull << 40, &en.desc.pitch_aligned_size) != 0)
        return -1;
    uint32_t m;
    if ((s = kv(a, "segments"))) {
        if (seg_list(p, L, op, "segments", s, 0, NULL, 32, &m) != 0)
            return -1;
        en.desc.supported_segments = m;
    } else {
        en.default_segments = 1;
    }
    if ((s = kv(a, "prefer")) &&
        seg_list(p, L, op, "prefer", s, 1, en.desc.preferred, GMC_MAX_PREFERRED_SEGMENTS, &m) != 0)
        return -1;
    if ((s = kv(a, "evict-to"))) {
        if (seg_list(p, L, op, "evict-to", s, 0, NULL, 32, &m) != 0)
            return -1;
        en.desc.eviction_segments = m;
    }
    if ((s = kv(a, "banks"))) {
        struct gmc_segment_pref b[GMC_MAX_HINTED_BANKS];
        if (seg_list(p, L, op, "banks", s, 0, b, GMC_MAX_HINTED_BANKS, &m) != 0)
            return -1;
        for (unsigned i = 0, n = (unsigned)__builtin_popcount(m); i < n; i++)
            en.desc.hinted_banks[i] = b[i].id;
    }
    if ((s = kv(a, "priority")) && priority_arg(p, L, op, "priority", s, &en.desc.priority) != 0)
        return -1;
    if ((s = kv(a, "umd-priority")) && priority_arg(p, L, op, "umd-priority", s, &en.desc.umd_priority) != 0)
        return -1;
    if ((s = kv(a, "flags")) && flag_list(p, L, op, "flags", tr_alloc_flags, s, &en.desc.flags) != 0)
        return -1;
    if ((s = kv(a, "kmt")) && flag_list(p, L, op, "kmt", tr_kmt_flags, s, &en.desc.kmt_flags) != 0)
        return -1;
    if ((s = kv(a, "info2")) && flag_list(p, L, op, "info2", tr_info2_flags, s, &en.desc.info2_flags) != 0)
        return -1;
    if ((s = kv(a, "vidpn"))) {
        if (num_arg(p, L, op, "vidpn", s, UINT32_MAX - 1, &v) != 0)
            return -1;
        en.desc.vidpn_source_id = (uint32_t)v;
    }
    if ((en.desc.flags & (GMC_ALLOC_EXISTING_SYS_MEM | GMC_ALLOC_EXISTING_KERNEL_SYS_MEM)) ||
        (en.desc.kmt_flags & GMC_KMT_EXISTING_SYS_MEM))
        en.desc.system_mem_size = en.cpu_size; /* the executor provides the memory */
    struct tr_op *o = new_op(p, TR_ALLOC, L);
    if (o == NULL)
        return -1;
    if (expect_arg(p, L, op, a, o) != 0)
        return -1;
    o->client = en.client;
    if (power_check(p, L, op, o) != 0)
        return -1;
    if (t->nentities == p->cap_ents) {
        size_t nc = p->cap_ents ? p->cap_ents * 2 : 64;
        struct tr_entity *ne = realloc(t->entities, nc * sizeof(*ne));
        struct ent_state *ns = ne ? realloc(p->es, nc * sizeof(*ns)) : NULL;
        if (ne)
            t->entities = ne;
        if (ns == NULL)
            return perr(p, L, "out of memory");
        p->es = ns;
        p->cap_ents = nc;
    }
    unsigned idx = t->nentities++;
    t->entities[idx] = en;
    memset(&p->es[idx], 0, sizeof(p->es[idx]));
    if (name_put(p, idx) != 0)
        return perr(p, L, "out of memory");
    o->entity = idx;
    if (checked(o)) {
        p->es[idx].alive = 1;
        p->es[idx].holders = 1ull << en.client;
    } else {
        p->es[idx].failed = 1; /* expected to fail: the name stays free */
    }
    return 0;
}

static int do_refs(struct parser *p, const struct line *ln, const struct args *a, int kind)
{
    const unsigned L = ln->no;
    const char *op = tr_kind_name(kind);
    struct tr_op *o = new_op(p, kind, L);
    if (o == NULL)
        return -1;
    if (expect_arg(p, L, op, a, o) != 0)
        return -1;
    o->refs = calloc(a->npos, sizeof(*o->refs));
    if (o->refs == NULL)
        return perr(p, L, "out of memory");
    unsigned c = 0;
    for (unsigned i = 0; i < a->npos; i++) {
        unsigned e;
        if (find_entity(p, L, op, a->pos[i], &e) != 0)
            return -1;
        for (unsigned j = 0; j < o->nrefs; j++)
            if (o->refs[j].entity == e)
                return perr(p, L, "%s: '%s' named twice", op, a->pos[i]);
        if (i == 0) {
            if (acting_client(p, L, op, a, e, &c) != 0)
                return -1;
        } else if (!(p->es[e].holders >> c & 1u)) {
            return perr(p, L, "%s: client '%s' holds no handle to '%s'", op, p->t->clients[c].name, a->pos[i]);
        }
        o->refs[o->nrefs++].entity = e;
    }
    o->client = c;
    const char *tr = kv(a, "trim");
    if (tr != NULL && num_arg(p, L, op, "trim", tr, UINT64_MAX, &o->trim) != 0)
        return -1;
    o->has_trim = tr != NULL;
    if (o->has_trim && (!o->has_expect || o->expect != GMC_E_OVER_BUDGET))
        return perr(p, L, "%s: trim= goes with expect=OVER_BUDGET", op);
    if (power_check(p, L, op, o) != 0)
        return -1;
    if (!checked(o))
        return 0;
    for (unsigned i = 0; i < o->nrefs; i++) {
        struct ent_state *s = &p->es[o->refs[i].entity];
        if (kind == TR_EVICT && s->refs[c] == 0)
            return perr(p, L, "evict: '%s' is not resident for client '%s'", a->pos[i], p->t->clients[c].name);
    }
    for (unsigned i = 0; i < o->nrefs; i++) {
        struct ent_state *s = &p->es[o->refs[i].entity];
        if (kind == TR_EVICT)
            s->refs[c]--;
        else
            s->refs[c]++;
    }
    return 0;
}

static int add_ref(struct tr_op *o, unsigned e, unsigned write)
{
    for (unsigned j = 0; j < o->nrefs; j++)
        if (o->refs[j].entity == e) {
            o->refs[j].write |= write;
            return (int)j;
        }
    if (o->nrefs == TR_MAX_REFS)
        return -1;
    o->refs[o->nrefs].entity = e;
    o->refs[o->nrefs].write = write;
    return (int)o->nrefs++;
}

static int do_submit(struct parser *p, unsigned li)
{
    const struct line *ln = &p->lines[li];
    const unsigned L = ln->no;
    const char *op = "submit";
    struct args a;
    if (get_args(p, ln, find_op("submit"), &a) != 0)
        return -1;
    struct tr_op *o = new_op(p, TR_SUBMIT, L);
    if (o == NULL)
        return -1;
    unsigned opi = p->t->nops - 1;
    if (expect_arg(p, L, op, &a, o) != 0 || power_check(p, L, op, o) != 0)
        return -1;
    unsigned nitems = ln->match - li - 1;
    o->refs = calloc(TR_MAX_REFS, sizeof(*o->refs));
    o->ops = calloc(nitems ? nitems : 1, sizeof(*o->ops));
    if (o->refs == NULL || o->ops == NULL)
        return perr(p, L, "out of memory");
    int have_client = 0;
    unsigned c = 0;
    const char *cn = kv(&a, "client");
    if (cn) {
        if (find_client(p, L, op, cn, &c) != 0)
            return -1;
        have_client = 1;
    }
    for (unsigned i = li + 1; i < ln->match; i++) {
        const struct line *it = &p->lines[i];
        const struct opdef *d = find_op(it->tok[0]);
        struct args ia;
        if (get_args(p, it, d, &ia) != 0)
            return -1;
        o = &p->t->ops[opi];
        const char *w = d->word;
        unsigned ents[2];
        for (unsigned k = 0; k < ia.npos; k++) {
            if (find_entity(p, it->no, w, ia.pos[k], &ents[k]) != 0)
                return -1;
            if (!have_client) {
                c = p->t->entities[ents[k]].client;
                have_client = 1;
            }
            if (!(p->es[ents[k]].holders >> c & 1u))
                return perr(p, it->no, "%s: client '%s' holds no handle to '%s'", w, p->t->clients[c].name,
                            ia.pos[k]);
            if (checked(o) && p->es[ents[k]].refs[c] == 0)
                return perr(p, it->no, "%s: '%s' is not resident for client '%s'", w, ia.pos[k],
                            p->t->clients[c].name);
        }
        if (!strcmp(w, "use")) {
            if (add_ref(o, ents[0], has_bare(&ia, "write") ? 1u : 0u) < 0)
                return perr(p, it->no, "submit: more than %d allocations", TR_MAX_REFS);
            continue;
        }
        struct gmc_gpu_op *g = &o->ops[o->nops];
        memset(g, 0, sizeof(*g));
        const struct tr_entity *dst;
        if (!strcmp(w, "copy")) {
            const struct tr_entity *src = &p->t->entities[ents[0]];
            dst = &p->t->entities[ents[1]];
            g->kind = GMC_GPU_COPY;
            uint64_t sz1, sz2;
            if (range_args(p, it->no, w, &ia, "src-offset", "size", src->cpu_size, src->name, &g->src_offset,
                           &sz1) != 0 ||
                range_args(p, it->no, w, &ia, "dst-offset", "size", dst->cpu_size, dst->name, &g->dst_offset,
                           &sz2) != 0)
                return -1;
            g->size = kv(&ia, "size") ? sz1 : (sz1 < sz2 ? sz1 : sz2);
            if (ents[0] == ents[1] && checked(o) && g->src_offset < g->dst_offset + g->size &&
                g->dst_offset < g->src_offset + g->size)
                return perr(p, it->no,
                            "copy: the source and destination ranges of '%s' overlap (the engine copies "
                            "forward in bursts; an overlapping copy is refused with OVERLAP)",
                            src->name);
            int si = add_ref(o, ents[0], 0), di = add_ref(o, ents[1], 1);
            if (si < 0 || di < 0)
                return perr(p, it->no, "submit: more than %d allocations", TR_MAX_REFS);
            g->src = (uint32_t)si;
            g->dst = (uint32_t)di;
        } else {
            dst = &p->t->entities[ents[0]];
            g->kind = GMC_GPU_FILL;
            if (range_args(p, it->no, w, &ia, "offset", "size", dst->cpu_size, dst->name, &g->dst_offset,
                           &g->size) != 0)
                return -1;
            const char *ps = kv(&ia, "pattern");
            uint64_t v = 0;
            if (ps && num_arg(p, it->no, w, "pattern", ps, UINT32_MAX, &v) != 0)
                return -1;
            g->pattern = (uint32_t)v;
            int di = add_ref(o, ents[0], 1);
            if (di < 0)
                return perr(p, it->no, "submit: more than %d allocations", TR_MAX_REFS);
            g->dst = (uint32_t)di;
        }
        o->nops++;
    }
    o = &p->t->ops[opi];
    if (o->nrefs == 0)
        return perr(p, L, "submit: references no allocation (add use, copy or fill lines)");
    o->client = c;
    return 0;
}

static int do_client(struct parser *p, unsigned L, const struct args *a)
{
    const struct trace *t = p->t;
    const char *nm = a->pos[0];
    if (!name_ok(nm))
        return perr(p, L, "client: bad client name '%s'", nm);
    for (unsigned i = 0; i < t->nclients; i++)
        if (p->client_alive[i] && !strcmp(t->clients[i].name, nm))
            return perr(p, L, "client: client '%s' already exists (line %u)", nm, t->clients[i].line);
    uint64_t owner = 0;
    const char *s = kv(a, "owner");
    if (s && num_arg(p, L, "client", "owner", s, UINT32_MAX, &owner) != 0)
        return -1;
    return add_client(p, L, nm, has_bare(a, "nonsecure") ? GMC_CLIENT_NON_SECURE : 0, (uint32_t)owner);
}

static int do_exit(struct parser *p, unsigned L, const struct args *a)
{
    unsigned c;
    if (find_client(p, L, "exit", a->pos[0], &c) != 0)
        return -1;
    struct tr_op *o = new_op(p, TR_EXIT, L);
    if (o == NULL)
        return -1;
    o->client = c;
    for (unsigned e = 0; e < p->t->nentities; e++)
        if (p->es[e].alive && (p->es[e].holders >> c & 1u))
            close_handle(p, e, c);
    p->client_alive[c] = 0;
    return 0;
}

/* wait, standby, hibernate, resume. */
static int do_device_op(struct parser *p, unsigned L, const struct opdef *d, const struct args *a)
{
    const char *op = d->word;
    struct tr_op *o = new_op(p, d->kind, L);
    if (o == NULL || expect_arg(p, L, op, a, o) != 0)
        return -1;
    if (d->kind == TR_WAIT) {
        const char *s = kv(a, "timeout");
        o->timeout_us = 100000;
        if (s && num_arg(p, L, op, "timeout", s, UINT64_MAX / 1000u, &o->timeout_us) != 0)
            return -1;
        return power_check(p, L, op, o);
    }
    if (!checked(o))
        return 0;
    const enum gmc_power_state to = d->kind == TR_RESUME   ? GMC_POWER_D0
                                    : d->kind == TR_STANDBY ? GMC_POWER_STANDBY
                                                            : GMC_POWER_HIBERNATE;
    const int st = gmc_check_power_change(power_state(p), to, p->nlocked);
    if (st == GMC_E_POWER_STATE && to == GMC_POWER_D0)
        return perr(p, L, "resume: the device is not in standby or hibernate");
    if (st == GMC_E_POWER_STATE)
        return perr(p, L, "%s: the device is already in %s since line %u", op, power_name(p), p->power_line);
    if (st == GMC_E_LOCKED) {
        for (unsigned e = 0; e < p->t->nentities; e++)
            if (p->es[e].alive && p->es[e].locked)
                return perr(p, L, "%s: '%s' is still locked (line %u)", op, p->t->entities[e].name,
                            p->es[e].lock_line);
    }
    if (st != GMC_OK)
        return perr(p, L, "%s: %s (%s)", op, gmc_status_name(st), gmc_strerror(st));
    p->power = to == GMC_POWER_D0 ? 0 : d->kind;
    p->power_line = L;
    return 0;
}

static int do_open(struct parser *p, unsigned L, const struct tr_op *o)
{
    const struct trace *t = p->t;
    const struct tr_entity *en = &t->entities[o->entity];
    struct ent_state *s = &p->es[o->entity];
    if (gmc_check_share_kind(&en->desc) == GMC_SHARE_NONE)
        return perr(p, L, "open: '%s' was not created with kmt=CreateShared", en->name);
    if (s->holders >> o->client & 1u)
        return perr(p, L, "open: client '%s' already holds a handle to '%s'", t->clients[o->client].name,
                    en->name);
    s->holders |= 1ull << o->client;
    return 0;
}

static int do_lock(struct parser *p, unsigned L, const struct args *a, struct tr_op *o)
{
    const char *fs = kv(a, "flags");
    if (fs && flag_list(p, L, "lock", "flags", tr_lock_flags, fs, &o->lock_flags) != 0)
        return -1;
    if (!checked(o))
        return 0;
    struct ent_state *s = &p->es[o->entity];
    if (cpu_access_check(p, L, "lock", o->entity, o->client, o->lock_flags) != 0)
        return -1;
    if (s->locked)
        return perr(p, L, "lock: '%s' is already locked (line %u)", p->t->entities[o->entity].name, s->lock_line);
    s->locked = o->client + 1;
    p->nlocked++;
    s->lock_flags = o->lock_flags;
    s->lock_line = L;
    return 0;
}

static int do_unlock(struct parser *p, unsigned L, const struct tr_op *o)
{
    struct ent_state *s = &p->es[o->entity];
    const char *nm = p->t->entities[o->entity].name;
    if (!s->locked)
        return perr(p, L, "unlock: '%s' is not locked", nm);
    if (s->locked != o->client + 1)
        return perr(p, L, "unlock: '%s' is locked by client '%s' (line %u)", nm,
                    p->t->clients[s->locked - 1].name, s->lock_line);
    s->locked = 0;
    p->nlocked--;
    return 0;
}

/* write and read: a range, a pattern or verify, and who may access. */
static int do_access(struct parser *p, unsigned L, const struct args *a, struct tr_op *o)
{
    const int wr = o->kind == TR_WRITE;
    const char *op = wr ? "write" : "read";
    const struct tr_entity *en = &p->t->entities[o->entity];
    const char *nm = en->name;
    if (range_args(p, L, op, a, "offset", "size", en->cpu_size, nm, &o->offset, &o->size) != 0)
        return -1;
    if (o->size > (64u << 20))
        return perr(p, L, "%s: size %" PRIu64 " is more than 64 MiB in one access", op, o->size);
    if (wr) {
        const char *ps = kv(a, "pattern");
        if (ps) {
            uint64_t v;
            if (num_arg(p, L, op, "pattern", ps, UINT32_MAX, &v) != 0)
                return -1;
            o->has_pattern = 1;
            o->pattern = (uint32_t)v;
        }
    } else {
        o->verify = has_bare(a, "verify");
    }
    if (!checked(o))
        return 0;
    const struct ent_state *s = &p->es[o->entity];
    if (s->locked && s->locked != o->client + 1)
        return perr(p, L, "%s: '%s' is locked by client '%s' (line %u)", op, nm,
                    p->t->clients[s->locked - 1].name, s->lock_line);
    if (s->locked) {
        if (gmc_check_locked_access(s->lock_flags, wr) != GMC_OK)
            return perr(p, L, "%s: '%s' is locked %s (line %u)", op, nm, wr ? "ReadOnly" : "WriteOnly",
                        s->lock_line);
        return 0;
    }
    return cpu_access_check(p, L, op, o->entity, o->client, wr ? GMC_LOCK_WRITE_ONLY : GMC_LOCK_READ_ONLY);
}

/* destroy, open, lock, unlock, write, read: one allocation, one client. */
static int do_entity_op(struct parser *p, unsigned L, const struct opdef *d, const struct args *a)
{
    const char *op = d->word;
    unsigned e, c;
    if (find_entity(p, L, op, a->pos[0], &e) != 0)
        return -1;
    if (d->kind == TR_OPEN) {
        const char *cn = kv(a, "client");
        if (cn == NULL)
            return perr(p, L, "open: missing client= (the client that opens it)");
        if (find_client(p, L, op, cn, &c) != 0)
            return -1;
    } else if (acting_client(p, L, op, a, e, &c) != 0) {
        return -1;
    }
    struct tr_op *o = new_op(p, d->kind, L);
    if (o == NULL || expect_arg(p, L, op, a, o) != 0 || power_check(p, L, op, o) != 0)
        return -1;
    o->entity = e;
    o->client = c;
    switch (d->kind) {
    case TR_DESTROY:
        if (checked(o))
            close_handle(p, e, c);
        return 0;
    case TR_OPEN:
        return checked(o) ? do_open(p, L, o) : 0;
    case TR_LOCK:
        return do_lock(p, L, a, o);
    case TR_UNLOCK:
        return checked(o) ? do_unlock(p, L, o) : 0;
    case TR_WRITE:
    case TR_READ:
        return do_access(p, L, a, o);
    default:
        return perr(p, L, "internal: unhandled operation '%s'", op);
    }
}

/* budget, app-budget, reserve, memory-info (docs/trace-format.md, "Budgets"). */
static int do_budget(struct parser *p, unsigned L, const struct opdef *d, const struct args *a)
{
    const char *op = d->word;
    struct tr_op *o = new_op(p, d->kind, L);
    if (o == NULL || expect_arg(p, L, op, a, o) != 0)
        return -1;
    if (d->kind != TR_APP_BUDGET) {
        const char *cn = kv(a, "client");
        if (cn ? find_client(p, L, op, cn, &o->client) : default_client(p, L, op, &o->client))
            return -1;
    }
    if (d->kind == TR_MEMINFO) {
        static const char *const keys[4] = { "budget", "usage", "reservation", "available" };
        const char *g = kv(a, "group");
        if (g != NULL && strcmp(g, "local") && strcmp(g, "non-local"))
            return perr(p, L, "%s: group is local or non-local, not '%s'", op, g);
        o->group = g != NULL && !strcmp(g, "non-local") ? GMC_SEGMENT_GROUP_NON_LOCAL : GMC_SEGMENT_GROUP_LOCAL;
        for (unsigned k = 0; k < 4; k++) {
            const char *s = kv(a, keys[k]);
            if (s != NULL && num_arg(p, L, op, keys[k], s, UINT64_MAX, &o->bval[k]) != 0)
                return -1;
            o->bmask |= s != NULL ? 1u << k : 0u;
        }
        return power_check(p, L, op, o);
    }
    static const char *const groups[2] = { "local", "non-local" };
    for (unsigned g = 0; g < 2; g++) {
        const char *s = kv(a, groups[g]);
        if (s == NULL)
            continue;
        o->bmask |= 1u << g;
        if (d->kind != TR_RESERVE && !strcmp(s, "none"))
            o->bval[g] = GMC_BUDGET_NONE;
        else if (num_arg(p, L, op, groups[g], s, UINT64_MAX - 1u, &o->bval[g]) != 0)
            return -1;
    }
    if (o->bmask != 1u && o->bmask != 2u) /* one library call: all or nothing */
        return perr(p, L, "%s: give local= or non-local= (one group per line)", op);
    return power_check(p, L, op, o);
}

static int do_line(struct parser *p, unsigned li)
{
    const struct line *ln = &p->lines[li];
    const unsigned L = ln->no;
    const struct opdef *d = find_op(ln->tok[0]);
    p->cur_line = L;
    if (d->block == B_SUBMIT)
        return do_submit(p, li);
    if (!strcmp(d->word, "device") || !strcmp(d->word, "seed"))
        return 0; /* read before expansion */
    struct args a;
    if (get_args(p, ln, d, &a) != 0)
        return -1;
    switch (d->kind) {
    case TR_CLIENT:
        return do_client(p, L, &a);
    case TR_EXIT:
        return do_exit(p, L, &a);
    case TR_ALLOC:
        return do_alloc(p, ln, &a);
    case TR_RESIDENT:
    case TR_EVICT:
        return do_refs(p, ln, &a, d->kind);
    case TR_WAIT:
    case TR_STANDBY:
    case TR_HIBERNATE:
    case TR_RESUME:
        return do_device_op(p, L, d, &a);
    case TR_BUDGET:
    case TR_APP_BUDGET:
    case TR_RESERVE:
    case TR_MEMINFO:
        return do_budget(p, L, d, &a);
    default:
        return do_entity_op(p, L, d, &a);
    }
}

static int spend(struct parser *p, unsigned line, uint64_t units)
{
    p->work += units;
    if (p->work > MAX_WORK)
        return perr(p, line, "the trace's expansion takes more than %llu steps (lines visited and loop "
                             "iterations, empty loops included)", (unsigned long long)MAX_WORK);
    return 0;
}

static int expand(struct parser *p, unsigned lo, unsigned hi)
{
    for (unsigned i = lo; i < hi; i++) {
        const struct line *ln = &p->lines[i];
        const struct opdef *d = find_op(ln->tok[0]);
        uint64_t cost = ln->cost;
        if (d->block == B_SUBMIT) /* its items are expanded with it */
            for (unsigned j = i + 1; j < ln->match; j++)
                cost += p->lines[j].cost;
        if (spend(p, ln->no, cost) != 0)
            return -1;
        if (d->block == B_SUBMIT) {
            if (do_line(p, i) != 0)
                return -1;
            i = ln->match;
            continue;
        }
        if (d->block != B_REPEAT) {
            if (do_line(p, i) != 0)
                return -1;
            continue;
        }
        const char *w = d->word;
        char buf[256];
        uint64_t n;
        if (subst(p, ln->no, ln->tok[1], buf, sizeof(buf)) != 0)
            return -1;
        if (parse_num(buf, &n) != 0)
            return perr(p, ln->no, "%s: bad count '%s'", w, buf);
        if (n > TR_MAX_STEPS)
            return perr(p, ln->no, "%s: count %" PRIu64 " is more than %u", w, n, TR_MAX_STEPS);
        const char *var = NULL;
        if (ln->ntok >= 4)
            var = ln->tok[3];
        if (var) {
            for (unsigned k = 0; k < p->nvars; k++)
                if (!strcmp(p->vars[k].name, var))
                    return perr(p, ln->no, "%s: variable '%s' is already used by an enclosing loop", w, var);
            snprintf(p->vars[p->nvars].name, TR_NAME_MAX, "%s", var);
            p->nvars++;
        }
        /* `frames` marks frame boundaries (the outermost one only) */
        int marks = !strcmp(w, "frames") && p->frame < 0 && !p->in_frames;
        if (marks)
            p->in_frames = 1;
        for (uint64_t it = 0; it < n; it++) {
            if (spend(p, ln->no, 1) != 0)
                return -1;
            if (var)
                p->vars[p->nvars - 1].value = (int64_t)it;
            if (marks)
                p->frame = (int)p->t->frames++;
            if (expand(p, i + 1, ln->match) != 0)
                return -1;
        }
        if (marks) {
            p->frame = -1;
            p->in_frames = 0;
        }
        if (var)
            p->nvars--;
        i = ln->match;
    }
    return 0;
}

int trace_parse(const char *file, const char *text, int seed_given, uint64_t seed, struct trace **out,
                char *err, size_t errlen)
{
    *out = NULL;
    struct parser p;
    memset(&p, 0, sizeof(p));
    p.file = file;
    p.err = err;
    p.errlen = errlen;
    p.frame = -1;
    if (errlen)
        err[0] = '\0';
    char *copy = strdup(text);
    struct trace *t = calloc(1, sizeof(*t));
    if (copy == NULL || t == NULL) {
        free(copy);
        free(t);
        snprintf(err, errlen, "%s: out of memory", file);
        return GMC_E_NO_MEMORY;
    }
    p.t = t;
    t->file = strdup(file);
    int rc = split(&p, copy);
    if (rc == 0)
        rc = structure(&p);
    /* directives */
    for (unsigned i = 0; rc == 0 && i < p.nlines; i++) {
        struct line *ln = &p.lines[i];
        if (!strcmp(ln->tok[0], "device")) {
            size_t e;
            if (gmc_device_string_check(ln->tok[1], &e) != GMC_OK)
                rc = perr(&p, ln->no, "device: bad device string '%s' (%s at byte %zu)", ln->tok[1],
                          gmc_status_name(gmc_device_string_check(ln->tok[1], NULL)), e);
            else
                t->device = strdup(ln->tok[1]);
        } else if (!strcmp(ln->tok[0], "seed")) {
            if (parse_num(ln->tok[1], &t->seed) != 0)
                rc = perr(&p, ln->no, "seed: bad number '%s'", ln->tok[1]);
            t->has_seed_directive = 1;
        }
    }
    if (seed_given)
        t->seed = seed;
    else if (!t->has_seed_directive)
        t->seed = 1;
    p.rng = t->seed;
    if (rc == 0)
        rc = expand(&p, 0, p.nlines);
    free(p.lines);
    free(p.es);
    free(p.names);
    free(copy);
    if (rc != 0) {
        trace_free(t);
        return GMC_E_INVALID_ARG;
    }
    *out = t;
    return GMC_OK;
}

int trace_load(const char *file, int seed_given, uint64_t seed, struct trace **out, char *err, size_t errlen)
{
    *out = NULL;
    FILE *f = fopen(file, "rb");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot read: %s", file, strerror(errno));
        return GMC_E_IO;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        if (len + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t k = fread(buf + len, 1, cap - len - 1, f);
        if (k == 0)
            break;
        len += k;
    }
    int rd_err = ferror(f);
    int rd_errno = errno;
    fclose(f);
    if (buf == NULL) {
        snprintf(err, errlen, "%s: out of memory", file);
        return GMC_E_NO_MEMORY;
    }
    if (rd_err) {
        free(buf);
        snprintf(err, errlen, "%s: cannot read: %s", file, strerror(rd_errno));
        return GMC_E_IO;
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        free(buf);
        snprintf(err, errlen, "%s: not a text file (contains a NUL byte)", file);
        return GMC_E_INVALID_ARG;
    }
    int rc = trace_parse(file, buf, seed_given, seed, out, err, errlen);
    free(buf);
    return rc;
}

void trace_free(struct trace *t)
{
    if (t == NULL)
        return;
    for (unsigned i = 0; i < t->nops; i++) {
        free(t->ops[i].refs);
        free(t->ops[i].ops);
    }
    free(t->ops);
    free(t->entities);
    free(t->device);
    free(t->file);
    free(t);
}
