/*
 * trace_args.c - the words of one line as values.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_args.h"
#include "trace_expr.h"

int tr_parse_num(const char *s, uint64_t *out)
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

int tr_num_arg(struct tr_parser *p, unsigned line, const char *op, const char *key, const char *s,
               uint64_t max, uint64_t *out)
{
    if (tr_parse_num(s, out) != 0)
        return tr_perr(p, line, "%s: bad number '%s' for %s", op, s, key);
    if (*out > max)
        return tr_perr(p, line, "%s: %s %s is out of range (at most %" PRIu64 ")", op, key, s, max);
    return 0;
}

int tr_flag_list(struct tr_parser *p, unsigned line, const char *op, const char *key,
                 const struct gmc_flag_name *t, const char *s, uint32_t *out)
{
    *out = 0;
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", s);
    char *save = NULL;
    if (buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
        return tr_perr(p, line, "%s: empty name in %s=%s", op, key, s);
    for (char *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        const struct gmc_flag_name *e = t;
        for (; e->name; e++)
            if (!strcmp(e->name, f))
                break;
        if (e->name == NULL) {
            /* A hint when the name belongs to another key. */
            static const struct {
                const char *key;
                const struct gmc_flag_name *t;
            } others[] = { { "flags", gmc_alloc_flag_names }, { "kmt", gmc_kmt_flag_names }, { "info2", gmc_info2_flag_names } };
            for (size_t i = 0; i < 3; i++) {
                if (others[i].t == t || t == gmc_lock_flag_names)
                    continue;
                for (const struct gmc_flag_name *o = others[i].t; o->name; o++)
                    if (!strcmp(o->name, f))
                        return tr_perr(p, line, "%s: '%s' is not a %s= flag (it is a %s= flag)", op, f, key,
                                       others[i].key);
            }
            return tr_perr(p, line, "%s: unknown %s flag '%s'", op,
                           t == gmc_lock_flag_names ? "lock" : key, f);
        }
        if (*out & e->bit)
            return tr_perr(p, line, "%s: flag '%s' given twice", op, f);
        *out |= e->bit;
    }
    return 0;
}

int tr_seg_list(struct tr_parser *p, unsigned line, const char *op, const char *key, const char *s,
                int allow_top, struct gmc_segment_pref *prefs, unsigned maxn, uint32_t *mask)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", s);
    if (buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
        return tr_perr(p, line, "%s: empty entry in %s=%s", op, key, s);
    unsigned n = 0;
    char *save = NULL;
    *mask = 0;
    for (char *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        int top = 0;
        char *colon = strchr(f, ':');
        if (colon) {
            if (!allow_top || strcmp(colon, ":top") != 0)
                return tr_perr(p, line, "%s: bad entry '%s' in %s= (%s)", op, f, key,
                               allow_top ? "a segment id, optionally ':top'" : "a segment id");
            *colon = '\0';
            top = 1;
        }
        uint64_t v;
        if (tr_parse_num(f, &v) != 0 || v < 1 || v > GMC_SEGMENT_ID_MAX)
            return tr_perr(p, line, "%s: bad %s '%s' in %s= (1..%u)", op,
                           !strcmp(key, "banks") ? "bank" : "segment id", f, key, GMC_SEGMENT_ID_MAX);
        if (n == maxn)
            return tr_perr(p, line, "%s: more than %u entries in %s=", op, maxn, key);
        if (*mask & (1u << (v - 1)))
            return tr_perr(p, line, "%s: %s %" PRIu64 " given twice in %s=", op,
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

int tr_priority_arg(struct tr_parser *p, unsigned line, const char *op, const char *key, const char *s,
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
    if (tr_parse_num(s, &v) != 0 || v > UINT32_MAX)
        return tr_perr(p, line, "%s: bad %s '%s' (minimum, low, normal, high, maximum or a 32-bit number)", op,
                       key, s);
    *out = (uint32_t)v;
    return 0;
}

int tr_name_ok(const char *s)
{
    if (!isalpha((unsigned char)s[0]) && s[0] != '_')
        return 0;
    for (const char *c = s; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_' && *c != '.' && *c != '-')
            return 0;
    return strlen(s) < TR_NAME_MAX;
}

const char *tr_kv(const struct tr_args *a, const char *key)
{
    if (!strcmp(key, "data"))
        return a->data;
    for (unsigned i = 0; i < a->nkv; i++)
        if (!strcmp(a->key[i], key))
            return a->val[i];
    return NULL;
}

int tr_has_bare(const struct tr_args *a, const char *w)
{
    for (unsigned i = 0; i < a->nbare; i++)
        if (!strcmp(a->bare[i], w))
            return 1;
    return 0;
}

int tr_get_args(struct tr_parser *p, const struct tr_line *ln, const struct tr_opdef *d, struct tr_args *a)
{
    memset(a, 0, sizeof(*a));
    unsigned min, max;
    tr_positional(d->word, &min, &max);
    unsigned k = 1;
    char buf[512];
    for (; k < ln->ntok; k++) {
        const char *eq = strchr(ln->tok[k], '=');
        if (eq != NULL) {
            size_t kl = (size_t)(eq - ln->tok[k]);
            if (kl >= sizeof(a->key[0]))
                return tr_perr(p, ln->no, "key too long");
            if (a->nkv == sizeof(a->key) / sizeof(a->key[0]))
                return tr_perr(p, ln->no, "%s: too many keys", d->word);
            memcpy(a->key[a->nkv], ln->tok[k], kl);
            a->key[a->nkv][kl] = '\0';
            if (!strcmp(a->key[a->nkv], "data")) {
                /* hex of any length: kept where it is, not copied */
                if (eq[1] == '\0')
                    return tr_perr(p, ln->no, "%s: empty value for 'data'", d->word);
                a->data = eq + 1;
                continue;
            }
            /* substitute the value part only */
            if (tr_subst(p, ln->no, eq + 1, buf, sizeof(buf)) != 0)
                return -1;
            if (strlen(buf) >= sizeof(a->val[0]))
                return tr_perr(p, ln->no, "%s: value of %s too long", d->word, a->key[a->nkv]);
            if (buf[0] == '\0')
                return tr_perr(p, ln->no, "%s: empty value for '%s'", d->word, a->key[a->nkv]);
            strcpy(a->val[a->nkv], buf);
            a->nkv++;
        } else if (tr_bare_ok(d->bare, ln->tok[k])) {
            /* tr_structure() refused a bare word given twice; every opdef has
             * fewer distinct bare words than a->bare holds */
            if (a->nbare == sizeof(a->bare) / sizeof(a->bare[0]))
                return tr_perr(p, ln->no, "%s: too many words", d->word);
            snprintf(a->bare[a->nbare++], sizeof(a->bare[0]), "%s", ln->tok[k]);
        } else {
            if (tr_subst(p, ln->no, ln->tok[k], buf, sizeof(buf)) != 0)
                return -1;
            if (a->npos == max)
                return tr_perr(p, ln->no, "%s: unexpected word '%s'", d->word, ln->tok[k]);
            if (strlen(buf) >= sizeof(a->pos[0]))
                return tr_perr(p, ln->no, "%s: name too long '%s'", d->word, buf);
            strcpy(a->pos[a->npos++], buf);
        }
    }
    return 0;
}

int tr_range_args(struct tr_parser *p, unsigned line, const char *op, const struct tr_args *a,
                  const char *offkey, const char *sizekey, uint64_t total, const char *nm, uint64_t *off,
                  uint64_t *size)
{
    *off = 0;
    const char *s = tr_kv(a, offkey);
    if (s && tr_num_arg(p, line, op, offkey, s, UINT64_MAX, off) != 0)
        return -1;
    if (*off >= total)
        return tr_perr(p, line, "%s: %s %" PRIu64 " is past the end of '%s' (%" PRIu64 " bytes)", op, offkey, *off,
                       nm, total);
    *size = total - *off;
    s = tr_kv(a, sizekey);
    if (s) {
        if (tr_num_arg(p, line, op, sizekey, s, UINT64_MAX, size) != 0)
            return -1;
        if (*size == 0)
            return tr_perr(p, line, "%s: %s must be at least 1", op, sizekey);
        if (*size > total - *off)
            return tr_perr(p, line, "%s: %s + %s = %" PRIu64 " is past the end of '%s' (%" PRIu64 " bytes)", op,
                           offkey, sizekey, *off + *size, nm, total);
    }
    return 0;
}

int tr_expect_arg(struct tr_parser *p, unsigned line, const char *op, const struct tr_args *a, struct tr_op *o)
{
    const char *s = tr_kv(a, "expect");
    if (s == NULL)
        return 0;
    if (tr_status_from_name(s, &o->expect) != 0)
        return tr_perr(p, line, "%s: unknown status '%s' for expect", op, s);
    o->has_expect = 1;
    return 0;
}

