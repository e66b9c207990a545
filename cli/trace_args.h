/*
 * trace_args.h - the words of one line as values: the line's names, key=
 * values and bare words after {expressions} are substituted, and the
 * parsers of numbers, flag lists, segment lists, priorities, byte ranges
 * and expect= statuses. Each reports a bad value as "OP: reason".
 */
#ifndef GMC_CLI_TRACE_ARGS_H
#define GMC_CLI_TRACE_ARGS_H

#include <stdint.h>

#include "trace_optab.h"
#include "trace_state.h"

/* One line's words, expressions substituted. */
struct tr_args {
    unsigned npos;
    char pos[TR_MAX_REFS][TR_NAME_MAX + 16];
    unsigned nkv;
    char key[16][16];
    char val[16][256];
    unsigned nbare;
    char bare[4][16];
    const char *data; /* write's data=: the word as written (no {expressions}), any length */
};

/* Read line ln of operation d into a. */
int tr_get_args(struct tr_parser *p, const struct tr_line *ln, const struct tr_opdef *d, struct tr_args *a);
/* The value of key=, or NULL. */
const char *tr_kv(const struct tr_args *a, const char *key);
/* Whether bare word w was given. */
int tr_has_bare(const struct tr_args *a, const char *w);

/* Decimal or 0x hex, optional K/M/G (KiB/MiB/GiB) suffix; -1 if not. */
int tr_parse_num(const char *s, uint64_t *out);
/* Number s for key of op, at most max. */
int tr_num_arg(struct tr_parser *p, unsigned line, const char *op, const char *key, const char *s,
               uint64_t max, uint64_t *out);
/* "Name,Name" from flag table t into *out. */
int tr_flag_list(struct tr_parser *p, unsigned line, const char *op, const char *key,
                 const struct gmc_flag_name *t, const char *s, uint32_t *out);
/* "1,3:top" segment ids (":top" with allow_top) into prefs (may be NULL;
 * at most maxn) and a bit mask. */
int tr_seg_list(struct tr_parser *p, unsigned line, const char *op, const char *key, const char *s,
                int allow_top, struct gmc_segment_pref *prefs, unsigned maxn, uint32_t *mask);
/* minimum, low, normal, high, maximum or a 32-bit number. */
int tr_priority_arg(struct tr_parser *p, unsigned line, const char *op, const char *key, const char *s,
                    uint32_t *out);
/* Whether s is a good client or allocation name. */
int tr_name_ok(const char *s);
/* offkey= and sizekey= as a range inside total bytes (default: all from
 * the offset on); nm names the allocation in messages. */
int tr_range_args(struct tr_parser *p, unsigned line, const char *op, const struct tr_args *a,
                  const char *offkey, const char *sizekey, uint64_t total, const char *nm, uint64_t *off,
                  uint64_t *size);
/* expect=STATUS into o->expect and o->has_expect. */
int tr_expect_arg(struct tr_parser *p, unsigned line, const char *op, const struct tr_args *a, struct tr_op *o);

#endif
