/*
 * trace.h - the gmc workload trace: parsing and expansion (docs/trace-format.md).
 *
 * A trace is read whole, checked and expanded (loops unrolled, {expressions}
 * evaluated, names resolved to entities) into a flat list of operations
 * before anything runs. Any problem is one message "FILE:LINE: reason" and
 * no operation list. Expansion depends only on the text and the seed, so
 * the same file and seed give the same operations.
 *
 * This module does not touch a device: it needs only the library's
 * headers (flag values, gmc_status_name for expect=).
 */
#ifndef GMC_CLI_TRACE_H
#define GMC_CLI_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "trace_list.h"

/*
 * Parse `text` (NUL-terminated, `file` names it in messages) and expand it
 * with `seed` (seed_given 0: the trace's own `seed` directive, else 1).
 * GMC_OK with *out set, or an error with err holding "FILE:LINE: reason".
 */
int trace_parse(const char *file, const char *text, int seed_given, uint64_t seed,
                struct trace **out, char *err, size_t errlen);
/* Read the file and parse it. A file that cannot be read gives
 * "FILE: cannot read: strerror". */
int trace_load(const char *file, int seed_given, uint64_t seed, struct trace **out, char *err,
               size_t errlen);
void trace_free(struct trace *t);

#endif
