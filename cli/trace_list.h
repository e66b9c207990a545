/*
 * trace_list.h - an expanded trace: its clients, allocation entities and
 * flat list of operations (what trace_parse() produces and gmc run
 * executes), and the names of operation kinds, flags and statuses.
 */
#ifndef GMC_CLI_TRACE_LIST_H
#define GMC_CLI_TRACE_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "gmc.h"
#include "gmc_flag_names.h"

#define TR_NAME_MAX 48
#define TR_MAX_CLIENTS 32
#define TR_MAX_REFS 64
#define TR_MAX_STEPS 1000000u

enum tr_kind {
    TR_CLIENT = 1, /* create a client */
    TR_EXIT,       /* destroy a client (its handles close) */
    TR_ALLOC,      /* create an allocation */
    TR_DESTROY,    /* close a client's handle */
    TR_OPEN,       /* open a shared allocation in another client */
    TR_LOCK,
    TR_UNLOCK,
    TR_WRITE,
    TR_READ,
    TR_RESIDENT,
    TR_EVICT,
    TR_SUBMIT,
    TR_WAIT,
    TR_STANDBY,
    TR_HIBERNATE,
    TR_RESUME,
    TR_BUDGET,     /* client budgets (gmc_client_set_budget) */
    TR_APP_BUDGET, /* the device's application budgets (gmc_device_set_budget) */
    TR_RESERVE,    /* gmc_client_set_reservation */
    TR_MEMINFO,    /* gmc_client_video_memory, logged and checked */
    TR_PIN_FLIP,   /* gmc_alloc_pin_direct_flip */
    TR_UNPIN_FLIP, /* gmc_alloc_unpin_direct_flip */
    TR_SET_PRIORITY, /* gmc_alloc_set_priority */
    TR_KIND_COUNT
};

const char *tr_kind_name(int kind);

struct tr_client {
    char name[TR_NAME_MAX];
    uint32_t flags; /* GMC_CLIENT_* */
    uint32_t owner;
    unsigned line;
};

/* One allocation object, from its alloc line to its last handle. Names may
 * be reused after destroy; each creation is a new entity. */
struct tr_entity {
    char name[TR_NAME_MAX];
    unsigned client;   /* creator */
    unsigned line;     /* of the alloc operation */
    /* What the descriptor needs beyond gmc_alloc_desc: */
    int default_segments;     /* no segments= given: every memory segment of the device */
    struct gmc_alloc_desc desc; /* system_mem filled by the executor */
    uint64_t cpu_size;        /* page-rounded size: bytes a CPU access may cover */
};

struct tr_ref {
    unsigned entity;
    unsigned write; /* submit: written by an op */
};

struct tr_op {
    int kind;            /* enum tr_kind */
    unsigned line;
    int frame;           /* iteration of the outermost repeat, -1 outside */
    unsigned client;     /* acting client (index into clients) */
    unsigned entity;     /* ALLOC, DESTROY, OPEN, LOCK, UNLOCK, WRITE, READ, PIN_FLIP, UNPIN_FLIP */
    int has_expect;
    int expect;          /* gmc status expected (has_expect) */
    uint32_t lock_flags; /* LOCK */
    uint64_t offset, size; /* WRITE, READ */
    int has_pattern;
    uint32_t pattern;    /* WRITE: 32-bit pattern instead of the seeded bytes */
    int has_data;
    uint64_t data_off;   /* WRITE: data= bytes at trace->data + data_off (size of them) */
    int verify;          /* READ */
    int has_hash;
    uint64_t hash;       /* READ: FNV-1a of the bytes the read must return (hash=) */
    uint64_t timeout_us; /* WAIT */
    int has_fence;
    uint64_t fence;      /* WAIT: fence= to wait for, instead of the last submission's */
    uint32_t priority;   /* SET_PRIORITY */
    unsigned nrefs;      /* RESIDENT, EVICT, SUBMIT */
    struct tr_ref *refs;
    unsigned nops;       /* SUBMIT */
    struct gmc_gpu_op *ops; /* src/dst index refs */
    /* BUDGET, APP_BUDGET, RESERVE: bval[g] for group g when bit g of bmask
     * (GMC_BUDGET_NONE: none); MEMINFO: group, and bval[0..3] = budget,
     * usage, reservation, available to check when bit k of bmask. */
    uint32_t group;
    unsigned bmask;
    uint64_t bval[4];
    int has_trim;        /* RESIDENT: trim= given */
    uint64_t trim;       /* RESIDENT: bytes to trim expected with GMC_E_OVER_BUDGET */
};

struct trace {
    char *file;
    char *device;        /* `device` directive, or NULL */
    uint64_t seed;       /* the seed used for expansion */
    int has_seed_directive;
    unsigned nclients;
    struct tr_client clients[TR_MAX_CLIENTS];
    unsigned nentities;
    struct tr_entity *entities;
    unsigned nops;
    struct tr_op *ops;
    unsigned frames;     /* iterations of outermost repeats, summed */
    /* write data: the `data` directive's file, then every inline data=
     * appended as the trace expands (docs/trace-format.md, "Write data") */
    uint8_t *data;
    uint64_t data_len, data_cap;
    uint64_t data_file_len; /* bytes of it from the data file */
};

/* Flag tables (name <-> bit), shared with the report writers, are
 * generated from spec/flags.toml: gmc_flag_names.h. */

/* "Name,Name" for the bits of v from table t (unknown bits as 0x...). */
void tr_flags_str(const struct gmc_flag_name *t, uint32_t v, char *buf, size_t n);

/* A status by name: "GMC_E_NO_SPACE", "NO_SPACE", "E_NO_SPACE", "OK". */
int tr_status_from_name(const char *name, int *status);

#endif
