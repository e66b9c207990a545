/*
 * timeline.h - what a run recorded, step by step: the input of the
 * summary, the digest and the report writers (report.c), which never touch
 * a device. A step is one operation of the expanded trace.
 */
#ifndef GMC_CLI_TIMELINE_H
#define GMC_CLI_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "gmc.h"

#define TL_NAME_MAX 48
#define TL_MAX_SEGS 8
#define TL_MAX_CLIENTS 32

/* How a placement interval ended. */
enum tl_end {
    TL_END_RUN = 0,   /* still placed when the run ended */
    TL_END_EVICTED,   /* left GPU memory (evicted or discarded) */
    TL_END_DESTROYED, /* its last handle closed */
    TL_END_MOVED      /* placed elsewhere (e.g. moved into CPU reach for a lock) */
};

/* An allocation sat at [offset, offset + size) of segment seg during steps
 * [start, end). */
struct tl_interval {
    unsigned entity;
    unsigned seg; /* 1-based */
    uint64_t offset, size;
    unsigned start, end;
    int end_kind; /* enum tl_end */
};

struct tl_step {
    unsigned line;
    int kind;   /* enum tr_kind */
    int status; /* what the library answered */
    int frame;  /* -1 outside the frame loop */
    uint64_t paged_in, paged_out, filled; /* bytes during this step */
    uint64_t evictions, page_ins;         /* during this step */
    uint64_t cycles;                      /* device cycles at the end of the step */
};

struct tl_entity {
    char name[TL_NAME_MAX];
    unsigned client;
    uint32_t priority;
    uint64_t size;
    unsigned line;
};

struct tl_client {
    char name[TL_NAME_MAX];
    int has_stats;
    struct gmc_client_stats stats; /* at the end of the run (clients still alive) */
    struct gmc_video_memory_info vm[GMC_SEGMENT_GROUPS]; /* at the end, with has_stats */
};

struct tl_seg {
    struct gmc_segment_desc desc;
    struct gmc_segment_info end; /* at the end of the run */
};

struct timeline {
    char trace[256];
    char device[256];
    uint64_t seed;
    struct gmc_device_info info;
    unsigned nsegs;
    struct tl_seg segs[TL_MAX_SEGS];
    unsigned nclients;
    struct tl_client clients[TL_MAX_CLIENTS];
    unsigned nentities;
    struct tl_entity *entities;
    unsigned nintervals, cap_intervals;
    struct tl_interval *intervals;
    unsigned nsteps, cap_steps;
    struct tl_step *steps;
    unsigned planned_steps; /* operations in the trace */
    unsigned frames;
    int has_stats;
    struct gmc_device_stats stats; /* at the end */
    struct gmc_link_stats link;    /* at the end, when has_link (uart devices) */
    int has_link;
    uint64_t ops_failed, ops_expected_fail, reads_verified, bytes_verified;
    double wall_seconds;
    uint64_t digest;
    char first_error[512];
};

void tl_free(struct timeline *tl);
int tl_add_interval(struct timeline *tl, const struct tl_interval *iv);
int tl_add_step(struct timeline *tl, const struct tl_step *st);

/* FNV-1a 64 of bytes, continuing from h (start with TL_FNV_INIT). */
#define TL_FNV_INIT 0xcbf29ce484222325ull
uint64_t tl_fnv(uint64_t h, const void *p, size_t n);

/* Report writers (report.c). Each returns 0, or -1 with err set. */
int report_write_json(const struct timeline *tl, const char *path, char *err, size_t errlen);
int report_write_segment_svg(const struct timeline *tl, unsigned seg, const char *path, char *err,
                             size_t errlen);
int report_write_paging_svg(const struct timeline *tl, const char *path, char *err, size_t errlen);
/* Everything into dir (created if needed), with PNG copies of the
 * pictures drawn by rsvg-convert unless GMC_NO_PNG is set. list receives
 * the written paths, one per line (may be NULL). When rsvg-convert is not
 * installed, the SVGs are written and *note says so (else it is empty);
 * when it fails, that is an error. */
int report_write_all(const struct timeline *tl, const char *dir, FILE *list, char *note, size_t notelen, char *err,
                     size_t errlen);

/* Human-readable byte count ("1.5 MiB"). */
void tl_bytes(uint64_t v, char *buf, size_t n);
/* Exact: "6080 KiB", "2 MiB", "12345 B". */
void tl_bytes_exact(uint64_t v, char *buf, size_t n);

#endif
