/*
 * trace_syntax.h - pass 1 of the trace parser: the text split into lines of
 * words, every line a known operation with known keys and the right number
 * of names, blocks (repeat/frames/submit ... end) nested properly. Nothing
 * is evaluated yet.
 */
#ifndef GMC_CLI_TRACE_SYNTAX_H
#define GMC_CLI_TRACE_SYNTAX_H

#include "trace_state.h"

/* Split text (modified in place: words end in NUL) into p->lines. Braces
 * keep their spaces; '#' outside braces starts a comment. */
int tr_split(struct tr_parser *p, char *text);
/* Check every line against the operation table and match each block's
 * opening line to its end (tr_line.match). */
int tr_structure(struct tr_parser *p);

#endif
