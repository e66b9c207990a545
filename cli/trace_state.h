/*
 * trace_state.h - the trace parser's state and its error message.
 *
 * The parser (trace.c) runs in two passes over the lines (trace_syntax.h,
 * then trace_expand.h). During expansion it follows the state a reader of
 * the trace can follow: live clients, allocation entities by name, the
 * handles each client holds, residency references, locks and the power
 * state. This file holds that state and the operations on clients and
 * entities; the rules that judge an operation against it are asked of the
 * library in trace_check.h.
 */
#ifndef GMC_CLI_TRACE_STATE_H
#define GMC_CLI_TRACE_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "trace_list.h"

#define TR_MAX_TOKENS 64 /* words on a line */
#define TR_MAX_DEPTH 8   /* nested repeat/frames/submit blocks */

/* One non-empty line of the trace, split into words (trace_syntax.h). */
struct tr_line {
    unsigned no;
    unsigned ntok;
    char *tok[TR_MAX_TOKENS];
    unsigned match; /* repeat/submit: index of the matching end */
    unsigned cost;  /* expansion work units of one visit (see TR_MAX_WORK, trace_expand.h) */
};

struct tr_var {
    char name[TR_NAME_MAX];
    int64_t value;
};

/* Per-entity state followed during expansion. */
struct tr_ent_state {
    int alive;
    uint64_t holders;               /* bit per client holding a handle */
    uint32_t refs[TR_MAX_CLIENTS];  /* residency references per client */
    unsigned locked;                /* client + 1, or 0 */
    uint32_t lock_flags;
    unsigned lock_line;
    int failed;                     /* alloc with expect= a failure */
    unsigned flip_line;             /* line of the pin-flip that pinned it, or 0 */
};

struct tr_parser {
    const char *file;
    char *err;
    size_t errlen;
    struct tr_line *lines;
    unsigned nlines;
    struct trace *t;
    struct tr_ent_state *es;
    size_t cap_ops, cap_ents;
    struct tr_var vars[TR_MAX_DEPTH];
    unsigned nvars;
    int client_alive[TR_MAX_CLIENTS];
    int power;        /* 0 D0, else the op that left it */
    unsigned power_line;
    uint64_t rng;
    int frame;
    int in_frames;
    unsigned cur_line;
    uint64_t work; /* expansion work units spent (TR_MAX_WORK) */
    /* Allocation names to their latest entity (index + 1; 0 = empty slot),
     * open addressing: a lookup costs the same with a million entities. */
    unsigned *names;
    size_t names_cap, names_used;
    unsigned nlocked; /* live entities with a lock */
};

/* Sets the message "FILE:LINE: reason (VAR=value, ...)", naming the values
 * of the enclosing loop variables; returns -1. */
int tr_perr(struct tr_parser *p, unsigned line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A new operation of kind at the end of the list (NULL with the message
 * set past TR_MAX_STEPS or out of memory). */
struct tr_op *tr_new_op(struct tr_parser *p, int kind, unsigned line);

/* The live client named name (its index in *out). */
int tr_find_client(struct tr_parser *p, unsigned line, const char *op, const char *name, unsigned *out);
/* A new client and its TR_CLIENT operation. */
int tr_add_client(struct tr_parser *p, unsigned line, const char *name, uint32_t flags, uint32_t owner);
/* The first live client, or a client "default" when there is none yet. */
int tr_default_client(struct tr_parser *p, unsigned line, const char *op, unsigned *out);

/* The latest entity named name, or -1. */
long tr_name_find(const struct tr_parser *p, const char *name);
/* Entity idx (already in t->entities) becomes its name's latest; -1 when
 * out of memory. */
int tr_name_put(struct tr_parser *p, unsigned idx);
/* The live entity named name (its index in *out). */
int tr_find_entity(struct tr_parser *p, unsigned line, const char *op, const char *name, unsigned *out);
/* Entity en appended (its state zero, its name's latest) at *idx. */
int tr_add_entity(struct tr_parser *p, unsigned line, const struct tr_entity *en, unsigned *idx);
/* Client c closes its handle to entity e (its references and lock go). */
void tr_close_handle(struct tr_parser *p, unsigned e, unsigned c);

#endif
