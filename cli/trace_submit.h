/*
 * trace_submit.h - a submit block: the allocations a GPU job uses (use
 * lines) and its copy and fill operations, each range inside its
 * allocation, every allocation held and resident for the submitting client.
 */
#ifndef GMC_CLI_TRACE_SUBMIT_H
#define GMC_CLI_TRACE_SUBMIT_H

#include "trace_state.h"

/* The submit block opening at line index li (items up to its end). */
int tr_do_submit(struct tr_parser *p, unsigned li);

#endif
