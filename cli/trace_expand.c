/*
 * trace_expand.c - pass 2 of the trace parser: loops unrolled within the
 * work budget.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "trace_args.h"
#include "trace_build.h"
#include "trace_expand.h"
#include "trace_expr.h"
#include "trace_optab.h"

static int spend(struct tr_parser *p, unsigned line, uint64_t units)
{
    p->work += units;
    if (p->work > TR_MAX_WORK)
        return tr_perr(p, line, "the trace's expansion takes more than %llu steps (lines visited and loop "
                                "iterations, empty loops included)", (unsigned long long)TR_MAX_WORK);
    return 0;
}

int tr_expand(struct tr_parser *p, unsigned lo, unsigned hi)
{
    for (unsigned i = lo; i < hi; i++) {
        const struct tr_line *ln = &p->lines[i];
        const struct tr_opdef *d = tr_find_op(ln->tok[0]);
        uint64_t cost = ln->cost;
        if (d->block == TR_B_SUBMIT) /* its items are expanded with it */
            for (unsigned j = i + 1; j < ln->match; j++)
                cost += p->lines[j].cost;
        if (spend(p, ln->no, cost) != 0)
            return -1;
        if (d->block == TR_B_SUBMIT) {
            if (tr_do_line(p, i) != 0)
                return -1;
            i = ln->match;
            continue;
        }
        if (d->block != TR_B_REPEAT) {
            if (tr_do_line(p, i) != 0)
                return -1;
            continue;
        }
        const char *w = d->word;
        char buf[256];
        uint64_t n;
        if (tr_subst(p, ln->no, ln->tok[1], buf, sizeof(buf)) != 0)
            return -1;
        if (tr_parse_num(buf, &n) != 0)
            return tr_perr(p, ln->no, "%s: bad count '%s'", w, buf);
        if (n > TR_MAX_STEPS)
            return tr_perr(p, ln->no, "%s: count %" PRIu64 " is more than %u", w, n, TR_MAX_STEPS);
        const char *var = NULL;
        if (ln->ntok >= 4)
            var = ln->tok[3];
        if (var) {
            for (unsigned k = 0; k < p->nvars; k++)
                if (!strcmp(p->vars[k].name, var))
                    return tr_perr(p, ln->no, "%s: variable '%s' is already used by an enclosing loop", w, var);
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
            if (tr_expand(p, i + 1, ln->match) != 0)
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
