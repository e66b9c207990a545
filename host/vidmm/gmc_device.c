/*
 * gmc_device.c - devices: open from a device string or a model
 * configuration, start the driver, validate the adapter's segments, close.
 *
 * DOC: Overview
 *
 * Opening is DxgkDdiAddDevice + DxgkDdiStartDevice + the segment query in
 * one call: parse the string (gmc_devstr.c), open the backend
 * (gmc_backend.h), bind the driver (gmc_kmd.h) and ask it for the adapter
 * information, then apply the DXGK_SEGMENTFLAGS rows of the rule table to
 * the descriptors the hardware reported. The descriptors are never
 * hard-coded: whatever SEG_* says is what the manager uses, and a
 * descriptor that breaks a rule makes the open fail with that rule's
 * status (struct gmc_open_report names the rule and the descriptor).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmc.h"
#include "gmc_backend.h"
#include "gmc_budget.h"
#include "gmc_devstr.h"
#include "gmc_handle.h"
#include "gmc_kmd.h"
#include "gmc_range.h"
#include "gmc_regs.h"
#include "gmc_rules.h"
#include "gmc_status.h"
#include "gmc_vidmm.h"
#include "gmc_device.h"
#include "gmc_cache.h"
#include "gmc_fence.h"
#include "gmc_resid.h"
#include "gmc_record.h"

static void report_clear(struct gmc_open_report *r)
{
    if (r != NULL)
        memset(r, 0, sizeof(*r));
}

/* The first descriptor a per-segment rule fails on (1-based), else 0. */
static unsigned failing_segment(const struct gmc_rule *rule, const struct gmc_segment_desc *segs,
                                unsigned n)
{
    if (rule == NULL || rule->scope != GMC_RULE_SCOPE_SEGMENT)
        return 0;
    for (unsigned i = 0; i < n; i++) {
        if (!gmc_rule_holds(rule, NULL, &segs[i], 1u))
            return i + 1u;
    }
    return 0;
}

static int check_segments(const struct gmc_adapter_info *a, struct gmc_open_report *report)
{
    const struct gmc_rule *rule = NULL;
    int rc = gmc_rules_check_segments(a->segs, a->nsegs, &rule);
    if (rc != GMC_OK && report != NULL) {
        report->rule = rule;
        report->segment = failing_segment(rule, a->segs, a->nsegs);
    }
    return rc;
}

static int setup_segments(gmc_device *dev)
{
    dev->nsegs = dev->adapter.nsegs;
    for (unsigned i = 0; i < dev->nsegs; i++) {
        struct gmc_vseg *s = &dev->seg[i];
        s->desc = dev->adapter.segs[i];
        dev->segdesc[i] = s->desc;
        if (gmc_range_init(&s->mgr, s->desc.base, s->desc.size) != GMC_RANGE_OK)
            return GMC_E_INTERNAL; /* the rules guarantee size >= 1 and no wrap */
    }
    gmc_budget_init(dev);
    return GMC_OK;
}

static void teardown(gmc_device *dev)
{
    gmc_rec_free(dev); /* the recording ends before the clients go */
    free(dev->devstr);
    gmc_vidmm_close_clients(dev);
    gmc_fence_fini(dev);
    gmc_cache_free(dev);
    for (unsigned i = 0; i < dev->nsegs; i++)
        gmc_range_fini(&dev->seg[i].mgr);
    gmc_htab_fini(&dev->handles);
    dev->kmd.ddi->stop_device(&dev->kmd);
    free(dev);
}

static int open_common(const struct gmc_backend_ops *be, void *ctx, uint32_t pbuf_bytes,
                       uint64_t tdr_cycles, struct gmc_open_report *report, gmc_device **out)
{
    *out = NULL;
    gmc_device *dev = calloc(1, sizeof(*dev));
    if (dev == NULL) {
        be->close(ctx);
        return GMC_E_NO_MEMORY;
    }
    strncpy(dev->backend, be->name, sizeof(dev->backend) - 1u);
    gmc_htab_init(&dev->handles);
    dev->next_serial = 1u;
    gmc_kmd_start(&dev->kmd, be, ctx);
    int rc = dev->kmd.ddi->query_adapter_info(&dev->kmd, &dev->adapter);
    if (rc == GMC_OK)
        rc = check_segments(&dev->adapter, report);
    if (rc == GMC_OK)
        rc = setup_segments(dev);
    if (rc == GMC_OK)
        rc = gmc_fence_init(dev, pbuf_bytes, tdr_cycles);
    if (rc != GMC_OK) {
        teardown(dev);
        return rc;
    }
    *out = dev;
    return GMC_OK;
}

int gmc_device_open_backend(const struct gmc_backend_ops *be, void *ctx,
                            struct gmc_open_report *report, gmc_device **out)
{
    return open_common(be, ctx, 0u, 0u, report, out);
}

static int open_spec(const struct gmc_devspec *spec, struct gmc_open_report *report,
                     gmc_device **out)
{
    const struct gmc_backend_ops *be = gmc_backend_for(spec);
    void *ctx = NULL;
    if (be == NULL)
        return GMC_E_INTERNAL;
    int rc = be->open(spec, &ctx);
    if (rc != GMC_OK)
        return rc;
    return open_common(be, ctx, spec->pbuf_bytes, spec->tdr_cycles, report, out);
}

/* An open that cannot finish: close what it opened. */
static int close_failed(gmc_device **out, int rc)
{
    if (*out != NULL)
        teardown(*out);
    *out = NULL;
    return rc;
}

/* GMC_RECORD: record from the open on (docs/trace-format.md, "Recording"). */
static int record_env(gmc_device **out)
{
    int rc = gmc_rec_start_env(*out);
    return rc == GMC_OK ? GMC_OK : close_failed(out, rc);
}

int gmc_device_string_check(const char *str, size_t *err_pos)
{
    struct gmc_devspec spec;
    return gmc_devstr_parse(str, &spec, err_pos);
}

int gmc_device_open_ex(const char *str, struct gmc_open_report *report, gmc_device **out)
{
    report_clear(report);
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    *out = NULL;
    struct gmc_devspec spec;
    size_t pos = 0;
    int rc = gmc_devstr_parse(str, &spec, &pos);
    if (rc != GMC_OK) {
        if (report != NULL)
            report->error_pos = pos;
        return rc;
    }
    rc = open_spec(&spec, report, out);
    if (rc == GMC_OK) {
        (*out)->devstr = strdup(str);
        if ((*out)->devstr == NULL)
            rc = GMC_E_NO_MEMORY;
    }
    return rc == GMC_OK ? record_env(out) : close_failed(out, rc);
}

int gmc_device_open(const char *str, gmc_device **out)
{
    return gmc_device_open_ex(str, NULL, out);
}

int gmc_device_open_sim(const struct gmc_sim_config *cfg, struct gmc_open_report *report,
                        gmc_device **out)
{
    report_clear(report);
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    *out = NULL;
    struct gmc_devspec spec;
    int rc = gmc_devspec_sim_set(&spec, cfg);
    if (rc != GMC_OK)
        return rc;
    rc = open_spec(&spec, report, out);
    return rc == GMC_OK ? record_env(out) : rc;
}

int gmc_device_record(gmc_device *dev, const char *path, uint32_t flags)
{
    if (path == NULL)
        return gmc_rec_stop(dev);
    return gmc_rec_start(dev, path, flags);
}

void gmc_device_close(gmc_device *dev)
{
    if (dev != NULL)
        teardown(dev);
}

const struct gmc_backend_ops *gmc_device_backend(const gmc_device *dev, void **ctx)
{
    *ctx = dev != NULL ? dev->kmd.be_ctx : NULL;
    return dev != NULL ? dev->kmd.be : NULL;
}

int gmc_device_query(const gmc_device *dev, struct gmc_device_info *out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    memset(out, 0, sizeof(*out));
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    const struct gmc_adapter_info *a = &dev->adapter;
    memcpy(out->backend, dev->backend, sizeof(out->backend));
    out->id = a->id;
    out->version = a->version;
    out->caps = a->caps;
    out->vram_size = a->vram_size;
    out->cpu_window_size = a->cpu_window_size;
    out->aperture_base = a->aperture_base;
    out->aperture_pages = a->aperture_pages;
    out->segment_count = dev->nsegs;
    out->clients = dev->nclients;
    out->allocations = dev->nallocs;
    out->handles = dev->handles.live;
    out->page_size = a->page_size;
    out->tlb_entries = a->tlb_entries;
    out->power_state = dev->power;
    return GMC_OK;
}

int gmc_segment_query(const gmc_device *dev, unsigned id, struct gmc_segment_info *out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    memset(out, 0, sizeof(*out));
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    if (id == 0u || id > dev->nsegs)
        return GMC_E_NOT_FOUND;
    const struct gmc_vseg *s = &dev->seg[id - 1u];
    struct gmc_range_stats st;
    if (gmc_range_get_stats(&s->mgr, &st) != GMC_RANGE_OK)
        return GMC_E_INTERNAL;
    out->desc = s->desc;
    out->used = s->used;
    out->free = st.free_bytes;
    out->largest_free = st.largest_hole;
    out->allocations = s->count;
    out->pinned_start = s->desc.size - gmc_pinned_region_size(s->desc.size);
    for (const struct gmc_valloc *a = dev->allocs; a != NULL; a = a->dnext) {
        if (a->node.mgr == NULL || a->seg != id - 1u)
            continue;
        if (a->state & GMC_ALLOC_STATE_HAS_CONTENT)
            out->committed += a->sz.placed;
        if (a->resident > 0u)
            out->resident_bytes += a->sz.placed;
    }
    return GMC_OK;
}

static int gmc_device_trace_do(gmc_device *dev, const char *path, uint64_t start, uint64_t end)
{
    if (dev == NULL || path == NULL)
        return GMC_E_NULL_POINTER;
    if (path[0] == '\0' || (end != 0u && end <= start))
        return GMC_E_INVALID_ARG;
    if (dev->kmd.be->trace == NULL)
        return GMC_E_UNSUPPORTED;
    return dev->kmd.be->trace(dev->kmd.be_ctx, path, start, end);
}

int gmc_device_trace(gmc_device *dev, const char *path, uint64_t start, uint64_t end)
{
    int rc = gmc_device_trace_do(dev, path, start, end);
    gmc_rec_waveform(dev, rc);
    return rc;
}

int gmc_device_link_stats(const gmc_device *dev, struct gmc_link_stats *out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    memset(out, 0, sizeof(*out));
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    if (dev->kmd.be == NULL || dev->kmd.be->link_stats == NULL)
        return GMC_E_UNSUPPORTED;
    return dev->kmd.be->link_stats(dev->kmd.be_ctx, out);
}

int gmc_device_stats(const gmc_device *dev, struct gmc_device_stats *out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    memset(out, 0, sizeof(*out));
    if (dev == NULL)
        return GMC_E_NULL_POINTER;
    *out = dev->stats;
    if (dev->pg != NULL) {
        struct gmc_paging_stats ps;
        gmc_paging_get_stats(dev->pg, &ps);
        out->paging_buffers = ps.buffers;
        out->multipass = ps.multipass;
        out->faults = ps.faults > out->faults ? ps.faults : out->faults;
        /* Fence values, not calls: a paging buffer that fills in the middle
         * of an operation ends with a fence of its own. */
        out->fences_issued = gmc_paging_last_issued(dev->pg);
        out->fences_completed = gmc_paging_completed(dev->pg);
    }
    if (dev->kmd.be->cycles != NULL)
        out->cycles = dev->kmd.be->cycles(dev->kmd.be_ctx);
    gmc_budget_stats(dev, out->budget);
    return GMC_OK;
}

int gmc_client_stats(const gmc_client *c, struct gmc_client_stats *out)
{
    if (out == NULL)
        return GMC_E_NULL_POINTER;
    memset(out, 0, sizeof(*out));
    if (c == NULL)
        return GMC_E_NULL_POINTER;
    for (const struct gmc_vref *r = c->refs; r != NULL; r = r->next) {
        const struct gmc_valloc *a = r->alloc;
        out->allocations++;
        if (r->resident > 0u)
            out->bytes_resident += gmc_resid_user_size(a);
        if (a->creator == c->serial && a->node.mgr != NULL && (a->state & GMC_ALLOC_STATE_HAS_CONTENT))
            out->bytes_committed += a->sz.placed;
    }
    out->evictions = c->evictions;
    return GMC_OK;
}

const struct gmc_rule *gmc_rule_for_status(int status)
{
    for (unsigned i = 0; i < gmc_rule_count(); i++) {
        const struct gmc_rule *r = gmc_rule_at(i);
        if (gmc_rule_status(r) == status)
            return r;
    }
    return NULL;
}
