/*
 * trace_expand.h - pass 2 of the trace parser: repeat and frames loops
 * unrolled (loop variables bound for {expressions}, frame numbers given to
 * the operations of the outermost frames loop) and every line built into
 * operations (trace_build.h), within a work budget.
 */
#ifndef GMC_CLI_TRACE_EXPAND_H
#define GMC_CLI_TRACE_EXPAND_H

#include "trace_state.h"

/* The work expansion may do, in units: each line visited costs one unit
 * per started 64 bytes of its text, each loop iteration one unit. This
 * bounds the expansion itself (loops that create nothing included), not
 * only the operations it creates (TR_MAX_STEPS). */
#define TR_MAX_WORK (8ull * TR_MAX_STEPS)

/* Expand line indices lo..hi-1. */
int tr_expand(struct tr_parser *p, unsigned lo, unsigned hi);

#endif
