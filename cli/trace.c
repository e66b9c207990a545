/*
 * trace.c - parse and expand a gmc workload trace (docs/trace-format.md).
 *
 * Two passes over the lines:
 *   1. structure (trace_syntax.c): tokens, known operations and keys
 *      (trace_optab.c), block nesting (repeat/submit ... end); nothing is
 *      evaluated;
 *   2. expansion (trace_expand.c): loops unrolled, {expressions}
 *      substituted (trace_expr.c), numbers, names and flags parsed
 *      (trace_args.c), operations built (trace_build.c, trace_submit.c)
 *      and the state a reader can follow (live allocations and handles,
 *      residency references, locks, power state: trace_state.c) tracked,
 *      so operations the library would refuse for a reason the trace
 *      itself shows are rejected here, before anything runs; the library's
 *      own predicates judge them (trace_check.c).
 * The first problem ends parsing with "FILE:LINE: reason".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace.h"
#include "trace_args.h"
#include "trace_expand.h"
#include "trace_state.h"
#include "trace_syntax.h"

/* Read a whole file into *buf (*len bytes); errno on failure. */
static int read_file(const char *path, uint8_t **buf, uint64_t *len)
{
    *buf = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        errno = EINVAL; /* a device or a directory: not a data file */
        return -1;
    }
    uint64_t cap = 0;
    for (;;) {
        if (*len == cap) {
            uint64_t nc = cap ? cap * 2u : 65536u;
            uint8_t *nb = realloc(*buf, nc);
            if (nb == NULL) {
                errno = ENOMEM;
                break;
            }
            *buf = nb;
            cap = nc;
        }
        size_t k = fread(*buf + *len, 1, cap - *len, f);
        *len += k;
        if (k == 0) {
            if (!ferror(f)) {
                fclose(f);
                return 0;
            }
            break;
        }
    }
    int e = errno;
    fclose(f);
    free(*buf);
    *buf = NULL;
    *len = 0;
    errno = e;
    return -1;
}

/* `data FILE`: the bytes data=@OFFSET refers to, from FILE (beside the
 * trace unless it is absolute). */
static int load_data(struct tr_parser *p, unsigned line, const char *file, const char *name)
{
    const char *slash = strrchr(file, '/');
    size_t dl = name[0] == '/' || slash == NULL ? 0 : (size_t)(slash - file) + 1u;
    size_t n = dl + strlen(name) + 1u;
    char *path = malloc(n);
    if (path == NULL)
        return tr_perr(p, line, "out of memory");
    memcpy(path, file, dl);
    memcpy(path + dl, name, strlen(name) + 1u);
    struct trace *t = p->t;
    int rc = read_file(path, &t->data, &t->data_len);
    if (rc != 0)
        rc = tr_perr(p, line, "data: cannot read '%s': %s", path, strerror(errno));
    t->data_cap = t->data_len;
    t->data_file_len = t->data_len;
    free(path);
    return rc;
}

int trace_parse(const char *file, const char *text, int seed_given, uint64_t seed, struct trace **out,
                char *err, size_t errlen)
{
    *out = NULL;
    struct tr_parser p;
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
    int rc = tr_split(&p, copy);
    if (rc == 0)
        rc = tr_structure(&p);
    /* directives */
    for (unsigned i = 0; rc == 0 && i < p.nlines; i++) {
        struct tr_line *ln = &p.lines[i];
        if (!strcmp(ln->tok[0], "device")) {
            size_t e;
            if (gmc_device_string_check(ln->tok[1], &e) != GMC_OK)
                rc = tr_perr(&p, ln->no, "device: bad device string '%s' (%s at byte %zu)", ln->tok[1],
                             gmc_status_name(gmc_device_string_check(ln->tok[1], NULL)), e);
            else
                t->device = strdup(ln->tok[1]);
        } else if (!strcmp(ln->tok[0], "data")) {
            rc = load_data(&p, ln->no, file, ln->tok[1]);
        } else if (!strcmp(ln->tok[0], "seed")) {
            if (tr_parse_num(ln->tok[1], &t->seed) != 0)
                rc = tr_perr(&p, ln->no, "seed: bad number '%s'", ln->tok[1]);
            t->has_seed_directive = 1;
        }
    }
    if (seed_given)
        t->seed = seed;
    else if (!t->has_seed_directive)
        t->seed = 1;
    p.rng = t->seed;
    if (rc == 0)
        rc = tr_expand(&p, 0, p.nlines);
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
    free(t->data);
    free(t->file);
    free(t);
}
