/*
 * trace_expr.h - {expressions} in a trace's words: integers, loop
 * variables, + - * / % and parentheses, rand(N), min(A,B), max(A,B), every
 * step checked for overflow (docs/trace-format.md). rand() draws from the
 * parser's seeded generator, so the same seed gives the same values.
 */
#ifndef GMC_CLI_TRACE_EXPR_H
#define GMC_CLI_TRACE_EXPR_H

#include <stddef.h>

#include "trace_state.h"

/* Replace every {expr} of tok by its decimal value into out (n bytes). */
int tr_subst(struct tr_parser *p, unsigned line, const char *tok, char *out, size_t n);

#endif
