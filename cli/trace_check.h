/*
 * trace_check.h - the trace checker. The library's rules are asked, not
 * copied: include/gmc_check.h holds the predicates gmc's own calls apply
 * (power state, lock flags and CPU access, sharing). The parser follows the
 * state they take (trace_state.h) and these functions word their answers
 * for a trace. Each judges one operation against that state and, when it
 * passes, records the operation's effect (a lock taken, a handle opened,
 * the new power state). They apply unless the operation is expected to
 * fail (tr_checked).
 */
#ifndef GMC_CLI_TRACE_CHECK_H
#define GMC_CLI_TRACE_CHECK_H

#include "trace_state.h"

/* Whether the checks apply: no expect=, or expect=OK. */
int tr_checked(const struct tr_op *o);
/* The device must be powered (D0) for op. */
int tr_power_check(struct tr_parser *p, unsigned line, const char *op, const struct tr_op *o);
/* standby, hibernate or resume (kind) from the current power state. */
int tr_check_power_change(struct tr_parser *p, unsigned L, const char *op, int kind);
/* open: the allocation is shared and the client holds no handle yet. */
int tr_check_open(struct tr_parser *p, unsigned L, const struct tr_op *o);
/* lock: the client may map it with o->lock_flags and nobody holds a lock. */
int tr_check_lock(struct tr_parser *p, unsigned L, const struct tr_op *o);
/* unlock: the client holds the lock. */
int tr_check_unlock(struct tr_parser *p, unsigned L, const struct tr_op *o);
/* write or read: through the client's own lock, or a lock it may take. */
int tr_check_access(struct tr_parser *p, unsigned L, const struct tr_op *o);
/* pin-flip: the device powered unless pinned already (whether a segment of
 * its supported set is DirectFlip, and room there, only the device knows);
 * unpin-flip: pinned by an earlier pin-flip. */
int tr_check_flip(struct tr_parser *p, unsigned L, const struct tr_op *o);

#endif
