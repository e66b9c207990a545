/*
 * trace_optab.h - the trace's operation table: every word a line may start
 * with, the key= and bare words it accepts, how many names it takes and
 * whether it opens or closes a block (docs/trace-format.md).
 */
#ifndef GMC_CLI_TRACE_OPTAB_H
#define GMC_CLI_TRACE_OPTAB_H

#include <stddef.h>

#include "trace_list.h"

/* What a line does to block structure. */
enum { TR_B_NONE, TR_B_REPEAT, TR_B_SUBMIT, TR_B_ITEM, TR_B_END };

struct tr_opdef {
    const char *word;
    int kind;         /* tr_kind, or 0 for directives and items */
    int block;        /* TR_B_* */
    const char *keys; /* accepted key= words, space separated, with leading and trailing space */
    const char *bare; /* accepted bare words after the positional ones */
};

/* The entry for word w, or NULL. */
const struct tr_opdef *tr_find_op(const char *w);
/* Number of positional words (names) operation w takes: min and max. */
void tr_positional(const char *w, unsigned *min, unsigned *max);
/* Whether the key of tok (its first klen bytes, then '=') is among keys. */
int tr_key_ok(const char *keys, const char *tok, size_t klen);
/* Whether tok is among the bare words. */
int tr_bare_ok(const char *bare, const char *tok);

#endif
