/*
 * trace_syntax.c - pass 1 of the trace parser: lines, words and blocks.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "trace_optab.h"
#include "trace_syntax.h"

/* Split text into lines of tokens. Braces keep their spaces; '#' outside
 * braces starts a comment. */
int tr_split(struct tr_parser *p, char *text)
{
    size_t cap = 64;
    p->lines = calloc(cap, sizeof(*p->lines));
    if (p->lines == NULL)
        return tr_perr(p, 0, "out of memory");
    unsigned no = 0;
    char *s = text;
    while (*s != '\0') {
        no++;
        char *eol = strchr(s, '\n');
        char *next = eol ? eol + 1 : s + strlen(s);
        if (eol)
            *eol = '\0';
        struct tr_line ln;
        memset(&ln, 0, sizeof(ln));
        ln.no = no;
        char *c = s;
        for (;;) {
            while (*c == ' ' || *c == '\t' || *c == '\r')
                c++;
            if (*c == '\0' || *c == '#')
                break;
            if (ln.ntok == TR_MAX_TOKENS)
                return tr_perr(p, no, "more than %d words on a line", TR_MAX_TOKENS);
            char *start = c, *w = c;
            int depth = 0;
            while (*c != '\0' && (depth > 0 || (*c != ' ' && *c != '\t' && *c != '\r' && *c != '#'))) {
                unsigned char ch = (unsigned char)*c;
                if (ch == '{') {
                    if (depth > 0)
                        return tr_perr(p, no, "'{' inside '{...}'");
                    depth = 1;
                } else if (ch == '}') {
                    if (depth == 0)
                        return tr_perr(p, no, "'}' without '{'");
                    depth = 0;
                }
                if (ch < 0x20 && ch != '\t' && ch != '\r')
                    return tr_perr(p, no, "control character 0x%02x", ch);
                *w++ = *c++;
            }
            if (depth > 0)
                return tr_perr(p, no, "'{' without '}'");
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
                struct tr_line *nl = realloc(p->lines, cap * sizeof(*nl));
                if (nl == NULL)
                    return tr_perr(p, no, "out of memory");
                p->lines = nl;
            }
            p->lines[p->nlines++] = ln;
        }
        s = next;
    }
    return 0;
}

/* device, seed and data: one of each, one value each. */
static int check_directive(struct tr_parser *p, const struct tr_line *ln, int *seen_device, int *seen_seed,
                           int *seen_data)
{
    const char *w = ln->tok[0];
    if (!strcmp(w, "data")) {
        if (*seen_data)
            return tr_perr(p, ln->no, "second 'data' line (first at line %u)", (unsigned)*seen_data);
        *seen_data = (int)ln->no;
    }
    if (!strcmp(w, "device")) {
        if (*seen_device)
            return tr_perr(p, ln->no, "second 'device' line (first at line %u)", (unsigned)*seen_device);
        *seen_device = (int)ln->no;
    }
    if (!strcmp(w, "seed")) {
        if (*seen_seed)
            return tr_perr(p, ln->no, "second 'seed' line (first at line %u)", (unsigned)*seen_seed);
        *seen_seed = (int)ln->no;
    }
    if (ln->ntok != 2)
        return tr_perr(p, ln->no, ln->ntok < 2 ? "%s: missing %s" : "%s: one %s only", w,
                       !strcmp(w, "device") ? "device string" : !strcmp(w, "data") ? "file name" : "seed value");
    return 0;
}

/* `repeat N as VAR`: word k is "as", k + 1 a variable name. */
static int check_loop_var(struct tr_parser *p, const struct tr_line *ln, unsigned k)
{
    const char *w = ln->tok[0];
    if (strcmp(ln->tok[k], "as") != 0)
        return tr_perr(p, ln->no, "%s: expected 'as VAR' after the count, got '%s'", w, ln->tok[k]);
    if (k + 1 >= ln->ntok)
        return tr_perr(p, ln->no, "%s: 'as' needs a variable name", w);
    const char *v = ln->tok[k + 1];
    if (!isalpha((unsigned char)v[0]) && v[0] != '_')
        return tr_perr(p, ln->no, "%s: bad variable name '%s'", w, v);
    for (const char *c = v; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_')
            return tr_perr(p, ln->no, "%s: bad variable name '%s'", w, v);
    if (strlen(v) >= TR_NAME_MAX)
        return tr_perr(p, ln->no, "%s: variable name too long", w);
    return 0;
}

/* Words k.. of the line: known key= words with a value and known bare
 * words, each given once. */
static int check_keys(struct tr_parser *p, const struct tr_line *ln, const struct tr_opdef *d, unsigned k)
{
    const char *w = ln->tok[0];
    for (; k < ln->ntok; k++) {
        const char *tk = ln->tok[k];
        const char *eq = strchr(tk, '=');
        if (eq != NULL) {
            if (eq == tk)
                return tr_perr(p, ln->no, "%s: '=' without a key", w);
            if (!tr_key_ok(d->keys, tk, (size_t)(eq - tk)))
                return tr_perr(p, ln->no, "%s: unknown key '%.*s'", w, (int)(eq - tk), tk);
            if (eq[1] == '\0')
                return tr_perr(p, ln->no, "%s: empty value for '%.*s'", w, (int)(eq - tk), tk);
            for (unsigned j = k + 1; j < ln->ntok; j++) {
                const char *o = ln->tok[j];
                if (strncmp(o, tk, (size_t)(eq - tk) + 1) == 0)
                    return tr_perr(p, ln->no, "%s: '%.*s' given twice", w, (int)(eq - tk), tk);
            }
        } else if (!tr_bare_ok(d->bare, tk)) {
            return tr_perr(p, ln->no, "%s: unexpected word '%s'", w, tk);
        } else {
            for (unsigned j = k + 1; j < ln->ntok; j++)
                if (strcmp(ln->tok[j], tk) == 0)
                    return tr_perr(p, ln->no, "%s: '%s' given twice", w, tk);
        }
    }
    return 0;
}

/* The words of an operation line: its names (as many as it takes), a loop
 * variable, its keys and bare words. */
static int check_words(struct tr_parser *p, const struct tr_line *ln, const struct tr_opdef *d)
{
    const char *w = ln->tok[0];
    unsigned min, max, npos = 0;
    tr_positional(w, &min, &max);
    unsigned k = 1;
    for (; k < ln->ntok && npos < max; k++) {
        const char *tk = ln->tok[k];
        if (strchr(tk, '=') != NULL || tr_bare_ok(d->bare, tk))
            break;
        npos++;
    }
    if (d->block == TR_B_REPEAT && k < ln->ntok) {
        if (check_loop_var(p, ln, k) != 0)
            return -1;
        k += 2;
    }
    if (npos < min) {
        if (d->block == TR_B_REPEAT)
            return tr_perr(p, ln->no, "%s: missing count", w);
        if (min == 2)
            return tr_perr(p, ln->no, "%s: needs a source and a destination allocation", w);
        return tr_perr(p, ln->no, "%s: missing %s", w,
                       !strcmp(w, "client") || !strcmp(w, "exit") ? "client name"
                       : !strcmp(w, "device")                      ? "device string"
                       : !strcmp(w, "seed")                        ? "seed value"
                                                                   : "allocation name");
    }
    return check_keys(p, ln, d, k);
}

/* Pass 1: every line is a known operation with known keys and the right
 * number of names; blocks nest properly. */
int tr_structure(struct tr_parser *p)
{
    unsigned stack[TR_MAX_DEPTH + 1];
    int sk[TR_MAX_DEPTH + 1];
    unsigned depth = 0;
    int seen_device = 0, seen_seed = 0, seen_data = 0;
    for (unsigned i = 0; i < p->nlines; i++) {
        struct tr_line *ln = &p->lines[i];
        const char *w = ln->tok[0];
        const struct tr_opdef *d = tr_find_op(w);
        if (d == NULL)
            return tr_perr(p, ln->no, "unknown operation '%s'", w);
        int in_submit = depth > 0 && sk[depth - 1] == TR_B_SUBMIT;
        if (d->block == TR_B_ITEM && !in_submit)
            return tr_perr(p, ln->no, "'%s' outside a submit block", w);
        if (in_submit && d->block != TR_B_ITEM && d->block != TR_B_END)
            return tr_perr(p, ln->no, "'%s' inside a submit block (only use, copy and fill; close it with 'end')", w);
        if (!strcmp(w, "device") || !strcmp(w, "seed") || !strcmp(w, "data")) {
            if (depth > 0)
                return tr_perr(p, ln->no, "'%s' inside a block", w);
            if (check_directive(p, ln, &seen_device, &seen_seed, &seen_data) != 0)
                return -1;
            continue;
        }
        if (check_words(p, ln, d) != 0)
            return -1;
        if (d->block == TR_B_REPEAT || d->block == TR_B_SUBMIT) {
            if (depth == TR_MAX_DEPTH)
                return tr_perr(p, ln->no, "blocks nested deeper than %d", TR_MAX_DEPTH);
            stack[depth] = i;
            sk[depth] = d->block;
            depth++;
        } else if (d->block == TR_B_END) {
            if (depth == 0)
                return tr_perr(p, ln->no, "'end' without 'repeat', 'frames' or 'submit'");
            depth--;
            p->lines[stack[depth]].match = i;
        }
    }
    if (depth > 0) {
        struct tr_line *o = &p->lines[stack[depth - 1]];
        return tr_perr(p, o->no, "'%s' without 'end'", o->tok[0]);
    }
    return 0;
}
