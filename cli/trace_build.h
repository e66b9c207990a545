/*
 * trace_build.h - one line of the trace into operations: its words read as
 * values (trace_args.h), names resolved to clients and entities
 * (trace_state.h), the operation checked (trace_check.h) and appended.
 */
#ifndef GMC_CLI_TRACE_BUILD_H
#define GMC_CLI_TRACE_BUILD_H

#include "trace_state.h"

/* Line index li (a submit block: with its items). */
int tr_do_line(struct tr_parser *p, unsigned li);

#endif
