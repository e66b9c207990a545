/*
 * gmc_vidmm.h - the device-independent video memory manager ("VidMm"):
 * the objects behind the public handles (private to the host library).
 *
 * DOC: Overview
 *
 * A gmc_device holds the driver (gmc_kmd.h) and what the manager built
 * from its adapter information: one range manager per segment
 * (gmc_place.h), the handle table (gmc_handle.h) and the clients. A client
 * holds its handles (struct gmc_vref, one per open of an allocation). An
 * allocation (struct gmc_valloc) lives while any client holds a handle to
 * it, and owns its share handles (struct gmc_vshare). Clients are
 * identified inside allocations and NT share handles by a serial number
 * that is never reused, so no pointer outlives its client.
 */
#ifndef GMC_VIDMM_H
#define GMC_VIDMM_H

#include <stdint.h>

#include "gmc.h"
#include "gmc_backend.h"
#include "gmc_handle.h"
#include "gmc_kmd.h"
#include "gmc_place.h"
#include "gmc_range.h"
#include "gmc_sim.h"

struct gmc_valloc;

struct gmc_vshare {
    struct gmc_valloc *alloc;
    uint64_t handle;
    uint64_t target; /* NT handle: the client serial it opens in; 0: the global handle */
    struct gmc_vshare *next;
};

struct gmc_valloc {
    struct gmc_range_node node; /* where it is placed */
    struct gmc_alloc_desc desc; /* as created */
    unsigned seg;               /* 0-based segment index */
    struct gmc_place_size sz;
    uint32_t state;             /* GMC_ALLOC_STATE_ZERO_PENDING, _PINNED */
    uint64_t creator;           /* serial of the creating client */
    uint32_t owner;             /* the creator's owner (RestrictSharedAccess) */
    uint32_t refs;              /* handles open on it */
    uint64_t global;            /* global share handle, or 0 */
    struct gmc_vshare *shares;  /* every share handle, global included */
};

struct gmc_vref {
    struct gmc_client *client;
    struct gmc_valloc *alloc;
    uint64_t handle;
    struct gmc_vref *prev, *next; /* the client's handles */
};

struct gmc_client {
    struct gmc_device *dev;
    uint64_t serial;
    uint32_t flags, owner;
    struct gmc_vref *refs;
    struct gmc_client *prev, *next; /* the device's clients */
};

struct gmc_device {
    char backend[8];
    struct gmc_kmd kmd;
    struct gmc_adapter_info adapter;
    unsigned nsegs;
    struct gmc_vseg seg[GMC_MAX_SEGMENTS];
    struct gmc_segment_desc segdesc[GMC_MAX_SEGMENTS]; /* for the rule table */
    struct gmc_htab handles;
    struct gmc_client *clients;
    uint64_t nclients;
    uint64_t nallocs;
    uint64_t next_serial;
};

/* Start a device on a started backend (the device owns ctx from now on and
 * closes it on failure too): query the adapter, validate its segments, set
 * up the managers. The common tail of every gmc_device_open*; tests use it
 * with a wrapping backend to present hardware the model cannot. */
int gmc_device_open_backend(const struct gmc_backend_ops *be, void *ctx,
                            struct gmc_open_report *report, gmc_device **out);

/* The model behind a sim device, for test backdoors; NULL otherwise. */
gmc_sim *gmc_device_sim(const gmc_device *dev);

/* Destroy every client (gmc_vidmm.c). */
void gmc_vidmm_close_clients(gmc_device *dev);

#endif /* GMC_VIDMM_H */
