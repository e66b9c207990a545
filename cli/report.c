/*
 * report.c - stats.json and the SVG pictures of a recorded run
 * (docs/cli.md, "Reports"). Everything comes from the timeline; nothing
 * here touches a device.
 *
 *   stats.json          every counter: device, segments, clients, run
 *   segment-N.svg       occupancy of segment N over the steps: one rectangle
 *                       per placement interval (class "alloc"), coloured by
 *                       client (or by priority with one client), evictions
 *                       marked at the rectangle's end (class "evict")
 *   paging.svg          bytes paged in (up) and out (down) per step
 *   *.png               the same, drawn by rsvg-convert (librsvg2-bin)
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "timeline.h"
#include "trace.h"

extern char **environ;

/* ------------------------------------------------------------------ JSON */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_flags(FILE *f, const struct gmc_flag_name *t, uint32_t v)
{
    fputc('[', f);
    int first = 1;
    for (; t->name; t++)
        if (v & t->bit) {
            fprintf(f, "%s\"%s\"", first ? "" : ", ", t->name);
            first = 0;
        }
    fputc(']', f);
}

#define DEVICE_STATS(X)                                                                            \
    X(make_resident_calls) X(evict_calls) X(submits) X(page_ins) X(evictions) X(discards)         \
    X(bytes_paged_in) X(bytes_paged_out) X(bytes_filled) X(paging_ops) X(paging_buffers)          \
    X(multipass) X(fences_issued) X(fences_completed) X(faults) X(resets) X(evictions_via_aperture) \
    X(sync_waits) X(locks) X(lock_waits) X(renames) X(cache_flushes) X(cache_invalidates) X(cycles)

#define HW_COUNTERS(X)                                                                             \
    X(valid) X(dma_rd_vram) X(dma_wr_vram) X(dma_rd_sys) X(dma_wr_sys) X(dma_rd_aperture)            \
    X(dma_wr_aperture) X(dma_packets) X(dma_faults) X(dma_busy_cycles) X(tlb_hits) X(tlb_misses)     \
    X(dummy_hits) X(aperture_rd_bytes) X(aperture_wr_bytes)

static unsigned count_end(const struct timeline *tl, unsigned seg, int kind)
{
    unsigned n = 0;
    for (unsigned i = 0; i < tl->nintervals; i++)
        if (tl->intervals[i].seg == seg && (kind < 0 || tl->intervals[i].end_kind == kind))
            n++;
    return n;
}

/* A report file opened for writing, and closed with every write checked. */
static int open_out(const char *path, FILE **f, char *err, size_t errlen)
{
    *f = fopen(path, "w");
    if (*f == NULL) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int close_out(FILE *f, const char *path, char *err, size_t errlen)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, errlen, "%s: write failed", path);
        return -1;
    }
    return 0;
}

/* The run, the device and the trace. */
static void json_run(FILE *f, const struct timeline *tl)
{
    fprintf(f, "{\n  \"format\": \"gmc-stats-1\",\n  \"trace\": ");
    json_str(f, tl->trace);
    fprintf(f, ",\n  \"device\": ");
    json_str(f, tl->device);
    fprintf(f, ",\n  \"seed\": %" PRIu64 ",\n  \"digest\": \"%016" PRIx64 "\",\n", tl->seed, tl->digest);
    fprintf(f, "  \"run\": {\"operations\": %u, \"steps_run\": %u, \"frames\": %u, \"failed\": %" PRIu64
               ", \"expected_failures\": %" PRIu64 ", \"reads_verified\": %" PRIu64
               ", \"bytes_verified\": %" PRIu64 ", \"wall_seconds\": %.3f, \"placements\": %u, \"first_error\": ",
            tl->planned_steps, tl->nsteps, tl->frames, tl->ops_failed, tl->ops_expected_fail, tl->reads_verified,
            tl->bytes_verified, tl->wall_seconds, tl->nintervals);
    json_str(f, tl->first_error);
    fprintf(f, "},\n");
    const struct gmc_device_info *in = &tl->info;
    fprintf(f, "  \"device_info\": {\"backend\": ");
    json_str(f, in->backend);
    fprintf(f, ", \"id\": %" PRIu32 ", \"version\": %" PRIu32 ", \"caps\": %" PRIu32 ", \"vram_size\": %" PRIu64
               ", \"cpu_window_size\": %" PRIu64 ", \"aperture_base\": %" PRIu64 ", \"aperture_pages\": %" PRIu64
               ", \"segment_count\": %u, \"clients\": %" PRIu64 ", \"allocations\": %" PRIu64
               ", \"handles\": %" PRIu64 ", \"page_size\": %" PRIu32 ", \"tlb_entries\": %" PRIu32
               ", \"power_state\": %" PRIu32 "},\n",
            in->id, in->version, in->caps, in->vram_size, in->cpu_window_size, in->aperture_base, in->aperture_pages,
            in->segment_count, in->clients, in->allocations, in->handles, in->page_size, in->tlb_entries,
            in->power_state);
}

/* The device's counters, and the link's when it has one. */
static void json_stats(FILE *f, const struct timeline *tl)
{
    fprintf(f, "  \"device_stats\": {");
    const char *sep = "";
#define X(n)                                                                  \
    fprintf(f, "%s\"" #n "\": %" PRIu64, sep, tl->stats.n);                     \
    sep = ", ";
    DEVICE_STATS(X)
#undef X
    fprintf(f, "},\n  \"hw_counters\": {");
    sep = "";
#define X(n)                                                                  \
    fprintf(f, "%s\"" #n "\": %" PRIu64, sep, tl->stats.hw.n);                  \
    sep = ", ";
    HW_COUNTERS(X)
#undef X
    fprintf(f, "},\n  \"budgets\": [");
    for (unsigned g = 0; g < GMC_SEGMENT_GROUPS; g++) {
        const struct gmc_budget_stats *b = &tl->stats.budget[g];
        fprintf(f, "%s\n    {\"group\": \"%s\", \"capacity\": %" PRIu64 ", \"budget\": %" PRIu64 ", \"usage\": %" PRIu64
                   ", \"reservation\": %" PRIu64 ", \"refusals\": %" PRIu64 "}",
                g ? "," : "", g == GMC_SEGMENT_GROUP_LOCAL ? "local" : "non_local", b->capacity, b->budget, b->usage,
                b->reservation, b->refusals);
    }
    fprintf(f, "\n  ],\n");
    if (tl->has_link) {
        const struct gmc_link_stats *l = &tl->link;
        fprintf(f, "  \"link\": {\"baud\": %" PRIu32 ", \"bridge_version\": %" PRIu32 ", \"latency_timer\": %" PRId32,
                l->baud, l->bridge_version, l->latency_timer);
#define L(n) fprintf(f, ", \"" #n "\": %" PRIu64, l->n);
        L(bytes_tx) L(bytes_rx) L(frames_tx) L(frames_rx) L(commands) L(retries) L(timeouts) L(resyncs)
        L(bad_frames) L(junk) L(stale) L(err_frames) L(irq_frames) L(dma_rd_bursts) L(dma_rd_beats)
        L(dma_wr_bursts) L(dma_wr_beats) L(dma_refused) L(dma_broken) L(probes)
        L(req_asks) L(req_recovered) L(wr_resends) L(wr_acks)
#undef L
        fprintf(f, "},\n");
    }
}

/* Each segment: its description, its state at the end and what was drawn. */
static void json_segments(FILE *f, const struct timeline *tl)
{
    fprintf(f, "  \"segments\": [");
    for (unsigned i = 0; i < tl->nsegs; i++) {
        const struct tl_seg *s = &tl->segs[i];
        fprintf(f, "%s\n    {\"id\": %u, \"base\": %" PRIu64 ", \"size\": %" PRIu64 ", \"flags\": ", i ? "," : "",
                i + 1, s->desc.base, s->desc.size);
        json_flags(f, gmc_seg_flag_names, s->desc.flags);
        fprintf(f, ", \"cpu_offset\": %" PRIu64 ", \"banks\": %" PRIu32 ", \"used\": %" PRIu64 ", \"free\": %" PRIu64
                   ", \"largest_free\": %" PRIu64 ", \"allocations\": %" PRIu64 ", \"pinned_start\": %" PRIu64
                   ", \"committed\": %" PRIu64 ", \"resident_bytes\": %" PRIu64
                   ", \"placements\": %u, \"evictions_drawn\": %u, \"moves_drawn\": %u}",
                s->desc.cpu_offset, s->desc.banks, s->end.used, s->end.free, s->end.largest_free,
                s->end.allocations, s->end.pinned_start, s->end.committed, s->end.resident_bytes,
                count_end(tl, i + 1, -1), count_end(tl, i + 1, TL_END_EVICTED), count_end(tl, i + 1, TL_END_MOVED));
    }
}

/* Clients, allocations and steps. */
static void json_lists(FILE *f, const struct timeline *tl)
{
    fprintf(f, "\n  ],\n  \"clients\": [");
    for (unsigned c = 0; c < tl->nclients; c++) {
        const struct tl_client *cl = &tl->clients[c];
        fprintf(f, "%s\n    {\"name\": ", c ? "," : "");
        json_str(f, cl->name);
        if (cl->has_stats) {
            fprintf(f, ", \"allocations\": %" PRIu64 ", \"bytes_resident\": %" PRIu64 ", \"bytes_committed\": %" PRIu64
                       ", \"evictions\": %" PRIu64,
                    cl->stats.allocations, cl->stats.bytes_resident, cl->stats.bytes_committed, cl->stats.evictions);
            /* gmc_client_video_memory per segment group */
            for (unsigned g = 0; g < GMC_SEGMENT_GROUPS; g++)
                fprintf(f, ", \"%s\": {\"budget\": %" PRIu64 ", \"usage\": %" PRIu64 ", \"reservation\": %" PRIu64
                           ", \"available\": %" PRIu64 "}",
                        g == GMC_SEGMENT_GROUP_LOCAL ? "local" : "non_local", cl->vm[g].budget,
                        cl->vm[g].current_usage, cl->vm[g].current_reservation,
                        cl->vm[g].available_for_reservation);
            fputc('}', f);
        } else {
            fprintf(f, ", \"exited\": true}");
        }
    }
    fprintf(f, "\n  ],\n  \"allocations\": [");
    for (unsigned e = 0; e < tl->nentities; e++) {
        const struct tl_entity *en = &tl->entities[e];
        fprintf(f, "%s\n    {\"name\": ", e ? "," : "");
        json_str(f, en->name);
        fprintf(f, ", \"client\": ");
        json_str(f, en->client < tl->nclients ? tl->clients[en->client].name : "");
        fprintf(f, ", \"size\": %" PRIu64 ", \"priority\": %" PRIu32 ", \"line\": %u}", en->size, en->priority,
                en->line);
    }
    fprintf(f, "\n  ],\n  \"steps\": [");
    for (unsigned s = 0; s < tl->nsteps; s++) {
        const struct tl_step *st = &tl->steps[s];
        fprintf(f, "%s\n    {\"line\": %u, \"op\": \"%s\", \"status\": \"%s\", \"frame\": %d, \"paged_in\": %" PRIu64
                   ", \"paged_out\": %" PRIu64 ", \"filled\": %" PRIu64 ", \"evictions\": %" PRIu64
                   ", \"page_ins\": %" PRIu64 ", \"cycles\": %" PRIu64 "}",
                s ? "," : "", st->line, tr_kind_name(st->kind), gmc_status_name(st->status), st->frame, st->paged_in,
                st->paged_out, st->filled, st->evictions, st->page_ins, st->cycles);
    }
}

int report_write_json(const struct timeline *tl, const char *path, char *err, size_t errlen)
{
    FILE *f;
    if (open_out(path, &f, err, errlen) != 0)
        return -1;
    json_run(f, tl);
    json_stats(f, tl);
    json_segments(f, tl);
    json_lists(f, tl);
    fprintf(f, "\n  ]\n}\n");
    return close_out(f, path, err, errlen);
}

/* ------------------------------------------------------------------- SVG */

static void xml_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                fputc(*s, f);
        }
    }
}

static const char *const palette[] = { "#4e79a7", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
                                       "#9c755f", "#bab0ac", "#86bcb6", "#d4a6c8", "#a0cbe8" };
#define NPAL (sizeof(palette) / sizeof(palette[0]))

/* Named priority levels and their colours (cool = low, warm = high). */
static const struct {
    const char *name;
    uint32_t v;
    const char *colour;
} prio_levels[] = { { "minimum", GMC_PRIORITY_MINIMUM, "#c6dbef" }, { "low", GMC_PRIORITY_LOW, "#6baed6" },
                    { "normal", GMC_PRIORITY_NORMAL, "#74c476" },   { "high", GMC_PRIORITY_HIGH, "#fd8d3c" },
                    { "maximum", GMC_PRIORITY_MAXIMUM, "#d94801" } };

static unsigned prio_index(uint32_t p)
{
    unsigned best = 0;
    for (unsigned i = 0; i < 5; i++)
        if (p >= prio_levels[i].v)
            best = i;
    return best;
}

/* A "nice" tick step (1, 2, 5 x 10^k) for about n ticks over span. */
static double nice_step(double span, int n)
{
    if (span <= 0)
        return 1;
    double raw = span / n, mag = 1;
    while (mag * 10 <= raw)
        mag *= 10;
    while (mag > raw)
        mag /= 10;
    double r = raw / mag;
    return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
}

/* A power-of-two byte step for about n ticks. */
static uint64_t byte_step(uint64_t span, int n)
{
    uint64_t s = 4096;
    while (s * (uint64_t)n < span)
        s *= 2;
    return s;
}

static void bytes_label(uint64_t v, char *buf, size_t n)
{
    if (v == 0)
        snprintf(buf, n, "0");
    else if (v % (1u << 20) == 0)
        snprintf(buf, n, "%" PRIu64 " MiB", v >> 20);
    else if (v >= (1u << 20))
        snprintf(buf, n, "%.1f MiB", (double)v / 1048576.0);
    else
        snprintf(buf, n, "%" PRIu64 " KiB", v >> 10);
}

#define SVG_W 1100
#define SVG_H 600
#define ML 92
#define MR 210
#define MT 70
#define MB 62
#define PW (SVG_W - ML - MR)
#define PH (SVG_H - MT - MB)

static void svg_head(FILE *f, const char *title, const char *subtitle)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n",
            SVG_W, SVG_H, SVG_W, SVG_H);
    fprintf(f, "<title>");
    xml_str(f, title);
    fprintf(f, "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", SVG_W, SVG_H);
    fprintf(f, "<text x=\"%d\" y=\"26\" font-size=\"17\" font-weight=\"bold\">", ML);
    xml_str(f, title);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"46\" fill=\"#555555\">", ML);
    xml_str(f, subtitle);
    fprintf(f, "</text>\n");
}

static double xpos(unsigned step, unsigned nsteps)
{
    return ML + (double)step * PW / (nsteps ? nsteps : 1);
}

static void x_axis(FILE *f, const struct timeline *tl, unsigned nsteps, int y_axis_at)
{
    double st = nice_step(nsteps ? nsteps : 1, 10);
    if (st < 1)
        st = 1;
    fprintf(f, "<g class=\"x-axis\" stroke=\"#333333\">\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", ML,
            y_axis_at, ML + PW, y_axis_at);
    for (double v = 0; v <= nsteps + 1e-9; v += st) {
        double x = xpos((unsigned)v, nsteps);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", x, MT + PH, x, MT + PH + 5);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" stroke=\"none\" fill=\"#333333\">%u</text>\n",
                x, MT + PH + 18, (unsigned)v);
    }
    fprintf(f, "</g>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#333333\">step (one operation of the "
               "trace each)%s</text>\n",
            ML + PW / 2, SVG_H - 18, tl->frames ? "; thin lines: frame starts" : "");
}

static void frame_lines(FILE *f, const struct timeline *tl, unsigned nsteps)
{
    if (tl->frames == 0 || tl->frames > PW / 4)
        return;
    fprintf(f, "<g class=\"frames\" stroke=\"#d0d0d0\" stroke-width=\"0.6\">\n");
    int prev = -1;
    for (unsigned s = 0; s < tl->nsteps && s < nsteps; s++) {
        int fr = tl->steps[s].frame;
        if (fr >= 0 && fr != prev) {
            double x = xpos(s, nsteps);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", x, MT, x, MT + PH);
        }
        prev = fr;
    }
    fprintf(f, "</g>\n");
}

static int close_svg(FILE *f, const char *path, char *err, size_t errlen)
{
    fprintf(f, "</svg>\n");
    return close_out(f, path, err, errlen);
}

/* What one segment's picture draws from: the segment, the plot's scale
 * (nsteps across, size down) and how allocations are coloured. */
struct seg_plot {
    FILE *f;
    const struct timeline *tl;
    unsigned seg;
    const struct gmc_segment_desc *sd;
    unsigned nsteps;
    uint64_t size;
    uint64_t pin; /* the pinned region's bytes, 0 for none (or an aperture) */
    int by_client;
};

/* The title and the subtitle: what the segment is, the run, placements,
 * evictions and peak use. */
static void seg_titles(const struct seg_plot *sp, char *title, size_t tlen, char *sub, size_t slen)
{
    const struct timeline *tl = sp->tl;
    const struct gmc_segment_desc *sd = sp->sd;
    const unsigned seg = sp->seg;
    char fl[400], sz[32];
    tr_flags_str(gmc_seg_flag_names, sd->flags, fl, sizeof(fl));
    tl_bytes_exact(sd->size, sz, sizeof(sz));
    const char *what = (sd->flags & GMC_SEGFLAGS_APERTURE_MASK)     ? "aperture"
                       : (sd->flags & GMC_SEGFLAGS_CPU_VISIBLE_MASK) ? "CPU-visible VRAM"
                                                                     : "VRAM";
    snprintf(title, tlen, "Segment %u: %s, %s: occupancy over %u steps", seg, what, sz, tl->nsteps);
    unsigned nplace = count_end(tl, seg, -1), nev = count_end(tl, seg, TL_END_EVICTED);
    /* peak use over steps */
    uint64_t peak = 0;
    for (unsigned s = 0; s < tl->nsteps; s++) {
        uint64_t u = 0;
        for (unsigned i = 0; i < tl->nintervals; i++) {
            const struct tl_interval *iv = &tl->intervals[i];
            if (iv->seg == seg && iv->start <= s && s < iv->end)
                u += iv->size;
        }
        if (u > peak)
            peak = u;
    }
    char pk[32];
    tl_bytes(peak, pk, sizeof(pk));
    const char *base = strrchr(tl->trace, '/');
    snprintf(sub, slen, "%s, seed %" PRIu64 ", device %s: %u placements, %u evictions, peak %s used. [%s]",
             base ? base + 1 : tl->trace, tl->seed, tl->device, nplace, nev, pk, fl);
}

/* Under the allocations: free space, the pinned region, frame starts and
 * bank boundaries. */
static void seg_background(const struct seg_plot *sp)
{
    FILE *f = sp->f;
    const struct gmc_segment_desc *sd = sp->sd;
    const uint64_t size = sp->size;
    /* plot background: free space */
    fprintf(f, "<rect class=\"free\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f3f3f3\" "
               "stroke=\"#999999\"/>\n",
            ML, MT, PW, PH);
    /* the pinned region (overlay/capture: last 20 %) */
    const uint64_t pin = sp->pin;
    if (pin > 0) {
        double y0 = MT + (double)(sd->size - pin) * PH / (double)size;
        fprintf(f, "<rect class=\"pinned\" x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#e6e0f0\"/>\n",
                ML, y0, PW, (double)pin * PH / (double)size);
    }
    frame_lines(f, sp->tl, sp->nsteps);
    /* bank boundaries */
    if (sd->banks > 1) {
        fprintf(f, "<g class=\"banks\" stroke=\"#888888\" stroke-dasharray=\"4 3\">\n");
        for (unsigned b = 1; b < sd->banks; b++) {
            double y = MT + (double)b * PH / sd->banks;
            fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", ML, y, ML + PW, y);
        }
        fprintf(f, "</g>\n");
        for (unsigned b = 0; b < sd->banks; b++)
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" fill=\"#666666\" font-size=\"10\">bank %u</text>\n", ML + PW + 4,
                    MT + ((double)b + 0.5) * PH / sd->banks, b + 1);
    }
}

/* One rectangle per placement: steps across, offset and size down, with a
 * tooltip. */
static void seg_allocations(const struct seg_plot *sp)
{
    FILE *f = sp->f;
    const struct timeline *tl = sp->tl;
    const unsigned nsteps = sp->nsteps;
    const uint64_t size = sp->size;
    fprintf(f, "<g class=\"allocations\" stroke=\"#ffffff\" stroke-width=\"0.5\">\n");
    for (unsigned i = 0; i < tl->nintervals; i++) {
        const struct tl_interval *iv = &tl->intervals[i];
        if (iv->seg != sp->seg)
            continue;
        const struct tl_entity *en = &tl->entities[iv->entity];
        double x0 = xpos(iv->start, nsteps), x1 = xpos(iv->end, nsteps);
        if (x1 - x0 < 1.0)
            x1 = x0 + 1.0;
        double y0 = MT + (double)iv->offset * PH / (double)size;
        double h = (double)iv->size * PH / (double)size;
        if (h < 0.8)
            h = 0.8;
        const char *col = sp->by_client ? palette[en->client % NPAL] : prio_levels[prio_index(en->priority)].colour;
        static const char *const endn[] = { "still placed at the end", "evicted", "destroyed", "moved" };
        char isz[32];
        tl_bytes(iv->size, isz, sizeof(isz));
        fprintf(f, "<rect class=\"alloc\" data-name=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                   "fill=\"%s\"><title>%s (client %s): %s at 0x%" PRIx64 ", steps %u-%u, %s</title></rect>\n",
                en->name, x0, y0, x1 - x0, h, col, en->name,
                en->client < tl->nclients ? tl->clients[en->client].name : "?", isz, iv->offset, iv->start, iv->end,
                endn[iv->end_kind]);
    }
    fprintf(f, "</g>\n");
}

/* Names inside the rectangles wide and tall enough to hold them. */
static void seg_labels(const struct seg_plot *sp)
{
    FILE *f = sp->f;
    const struct timeline *tl = sp->tl;
    const unsigned nsteps = sp->nsteps;
    const uint64_t size = sp->size;
    fprintf(f, "<g class=\"labels\" font-size=\"10\" fill=\"#1a1a1a\">\n");
    for (unsigned i = 0; i < tl->nintervals; i++) {
        const struct tl_interval *iv = &tl->intervals[i];
        if (iv->seg != sp->seg)
            continue;
        const struct tl_entity *en = &tl->entities[iv->entity];
        double x0 = xpos(iv->start, nsteps), x1 = xpos(iv->end, nsteps);
        double h = (double)iv->size * PH / (double)size;
        double need = 6.2 * (double)strlen(en->name) + 6;
        if (x1 - x0 < need || h < 11)
            continue;
        double y0 = MT + (double)iv->offset * PH / (double)size;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x0 + 3, y0 + (h < 20 ? h / 2 + 4 : 13), en->name);
    }
    fprintf(f, "</g>\n");
}

/* Evictions and moves: a mark at the end of the rectangle. */
static void seg_marks(const struct seg_plot *sp)
{
    FILE *f = sp->f;
    const struct timeline *tl = sp->tl;
    const uint64_t size = sp->size;
    fprintf(f, "<g class=\"marks\">\n");
    for (unsigned i = 0; i < tl->nintervals; i++) {
        const struct tl_interval *iv = &tl->intervals[i];
        if (iv->seg != sp->seg || (iv->end_kind != TL_END_EVICTED && iv->end_kind != TL_END_MOVED))
            continue;
        double x = xpos(iv->end, sp->nsteps);
        double y0 = MT + (double)iv->offset * PH / (double)size;
        double h = (double)iv->size * PH / (double)size;
        if (h < 2)
            h = 2;
        if (iv->end_kind == TL_END_EVICTED)
            fprintf(f, "<path class=\"evict\" d=\"M%.2f %.2f v%.2f\" stroke=\"#d62728\" stroke-width=\"2\"/>"
                       "<path d=\"M%.2f %.2f l-4 -7 h8 z\" fill=\"#d62728\"/>\n",
                    x, y0, h, x, y0);
        else
            fprintf(f, "<path class=\"move\" d=\"M%.2f %.2f v%.2f\" stroke=\"#ff7f0e\" stroke-width=\"2\" "
                       "stroke-dasharray=\"3 2\"/>\n",
                    x, y0, h);
    }
    fprintf(f, "</g>\n");
}

/* The y axis: offsets in the segment. */
static void seg_y_axis(const struct seg_plot *sp)
{
    FILE *f = sp->f;
    const struct gmc_segment_desc *sd = sp->sd;
    uint64_t ys = byte_step(sd->size, 8);
    fprintf(f, "<g class=\"y-axis\" stroke=\"#333333\">\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", ML, MT, ML,
            MT + PH);
    for (uint64_t v = 0; v <= sd->size; v += ys) {
        double y = MT + (double)v * PH / (double)sp->size;
        char lb[32];
        bytes_label(v, lb, sizeof(lb));
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", ML - 5, y, ML, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" stroke=\"none\" fill=\"#333333\">%s</text>\n",
                ML - 8, y + 4, lb);
    }
    fprintf(f, "</g>\n<text x=\"18\" y=\"%d\" transform=\"rotate(-90 18 %d)\" text-anchor=\"middle\" "
               "fill=\"#333333\">offset in segment (0 at the top)</text>\n",
            MT + PH / 2, MT + PH / 2);
}

/* The legend: colours (clients or priorities), free, pinned, marks. */
static void seg_legend(const struct seg_plot *sp)
{
    FILE *f = sp->f;
    const struct timeline *tl = sp->tl;
    int lx = ML + PW + 48, ly = MT + 4;
    fprintf(f, "<g class=\"legend\">\n<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n", lx, ly,
            sp->by_client ? "colour: client" : "colour: priority");
    ly += 18;
    if (sp->by_client) {
        for (unsigned c = 0; c < tl->nclients && c < 12; c++, ly += 18) {
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">",
                    lx, ly - 10, palette[c % NPAL], lx + 20, ly);
            xml_str(f, tl->clients[c].name);
            fprintf(f, "</text>\n");
        }
    } else {
        for (int i = 4; i >= 0; i--, ly += 18)
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"%s\"/><text x=\"%d\" "
                       "y=\"%d\">%s</text>\n",
                    lx, ly - 10, prio_levels[i].colour, lx + 20, ly, prio_levels[i].name);
    }
    ly += 8;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"#f3f3f3\" stroke=\"#999999\"/>"
               "<text x=\"%d\" y=\"%d\">free</text>\n",
            lx, ly - 10, lx + 20, ly);
    ly += 18;
    if (sp->pin > 0) {
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"#e6e0f0\"/>"
                   "<text x=\"%d\" y=\"%d\">pinned region</text>\n",
                lx, ly - 10, lx + 20, ly);
        ly += 18;
    }
    fprintf(f, "<path d=\"M%d %d v12\" stroke=\"#d62728\" stroke-width=\"2\"/><path d=\"M%d %d l-4 -7 h8 z\" "
               "fill=\"#d62728\"/><text x=\"%d\" y=\"%d\">evicted</text>\n",
            lx + 7, ly - 10, lx + 7, ly - 10, lx + 20, ly);
    ly += 18;
    fprintf(f, "<path d=\"M%d %d v12\" stroke=\"#ff7f0e\" stroke-width=\"2\" stroke-dasharray=\"3 2\"/>"
               "<text x=\"%d\" y=\"%d\">moved</text>\n",
            lx + 7, ly - 10, lx + 20, ly);
    ly += 26;
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555555\" font-size=\"11\">one bar = one allocation</text>\n", lx, ly);
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555555\" font-size=\"11\">in one place</text>\n", lx, ly + 14);
    fprintf(f, "</g>\n");
}

int report_write_segment_svg(const struct timeline *tl, unsigned seg, const char *path, char *err, size_t errlen)
{
    if (seg < 1 || seg > tl->nsegs) {
        snprintf(err, errlen, "no segment %u", seg);
        return -1;
    }
    const struct gmc_segment_desc *sd = &tl->segs[seg - 1].desc;
    FILE *f;
    if (open_out(path, &f, err, errlen) != 0)
        return -1;
    const uint64_t pin = gmc_pinned_region_size(sd->size);
    const struct seg_plot sp = {
        .f = f,
        .tl = tl,
        .seg = seg,
        .sd = sd,
        .nsteps = tl->nsteps ? tl->nsteps : 1,
        .size = sd->size ? sd->size : 1,
        .pin = (sd->flags & GMC_SEGFLAGS_APERTURE_MASK) ? 0 : pin,
        .by_client = tl->nclients > 1,
    };
    char title[512], sub[1200];
    seg_titles(&sp, title, sizeof(title), sub, sizeof(sub));
    svg_head(f, title, sub);
    seg_background(&sp);
    seg_allocations(&sp);
    seg_labels(&sp);
    seg_marks(&sp);
    seg_y_axis(&sp);
    x_axis(f, tl, sp.nsteps, MT + PH);
    seg_legend(&sp);
    return close_svg(f, path, err, errlen);
}

int report_write_paging_svg(const struct timeline *tl, const char *path, char *err, size_t errlen)
{
    FILE *f;
    if (open_out(path, &f, err, errlen) != 0)
        return -1;
    unsigned nsteps = tl->nsteps ? tl->nsteps : 1;
    /* bins: at most one per 2 pixels */
    unsigned per = (nsteps + PW / 2 - 1) / (PW / 2);
    if (per < 1)
        per = 1;
    unsigned nbins = (nsteps + per - 1) / per;
    uint64_t *bin_in = calloc(nbins, sizeof(uint64_t)), *bin_out = calloc(nbins, sizeof(uint64_t));
    if (bin_in == NULL || bin_out == NULL) {
        free(bin_in);
        free(bin_out);
        fclose(f);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint64_t max = 0, tin = 0, tout = 0;
    for (unsigned s = 0; s < tl->nsteps; s++) {
        bin_in[s / per] += tl->steps[s].paged_in;
        bin_out[s / per] += tl->steps[s].paged_out;
        tin += tl->steps[s].paged_in;
        tout += tl->steps[s].paged_out;
    }
    for (unsigned b = 0; b < nbins; b++) {
        if (bin_in[b] > max)
            max = bin_in[b];
        if (bin_out[b] > max)
            max = bin_out[b];
    }
    uint64_t ys = byte_step(max ? max : 4096, 4);
    uint64_t top = (max + ys - 1) / ys * ys;
    if (top == 0)
        top = ys;
    char a[32], b2[32], title[256], sub[1024];
    tl_bytes(tin, a, sizeof(a));
    tl_bytes(tout, b2, sizeof(b2));
    snprintf(title, sizeof(title), "Bytes paged per step%s", per > 1 ? " (summed over bins)" : "");
    const char *base = strrchr(tl->trace, '/');
    snprintf(sub, sizeof(sub), "%s, seed %" PRIu64 ", device %s: %s paged in (system to GPU memory), %s paged out%s",
             base ? base + 1 : tl->trace, tl->seed, tl->device, a, b2, per > 1 ? "; one bar per bin of steps" : "");
    svg_head(f, title, sub);
    int zero = MT + PH / 2;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#999999\"/>\n", ML, MT,
            PW, PH);
    frame_lines(f, tl, nsteps);
    double bw = (double)PW / nbins;
    fprintf(f, "<g class=\"paged-in\" fill=\"#1f77b4\">\n");
    for (unsigned b = 0; b < nbins; b++)
        if (bin_in[b]) {
            double h = (double)bin_in[b] * (PH / 2) / (double)top;
            fprintf(f, "<rect class=\"in\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>steps %u-%u: "
                       "%" PRIu64 " bytes in</title></rect>\n",
                    ML + b * bw, zero - h, bw > 1.5 ? bw - 0.5 : bw, h, b * per, b * per + per - 1, bin_in[b]);
        }
    fprintf(f, "</g>\n<g class=\"paged-out\" fill=\"#ff7f0e\">\n");
    for (unsigned b = 0; b < nbins; b++)
        if (bin_out[b]) {
            double h = (double)bin_out[b] * (PH / 2) / (double)top;
            fprintf(f, "<rect class=\"out\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%.2f\"><title>steps %u-%u: "
                       "%" PRIu64 " bytes out</title></rect>\n",
                    ML + b * bw, zero, bw > 1.5 ? bw - 0.5 : bw, h, b * per, b * per + per - 1, bin_out[b]);
        }
    fprintf(f, "</g>\n");
    /* y axis, mirrored */
    fprintf(f, "<g class=\"y-axis\" stroke=\"#333333\">\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", ML, MT, ML,
            MT + PH);
    for (uint64_t v = 0; v <= top; v += ys)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            if (v == 0 && sgn > 0)
                continue;
            double y = zero + sgn * (double)v * (PH / 2) / (double)top;
            char lb[32];
            bytes_label(v, lb, sizeof(lb));
            fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/><text x=\"%d\" y=\"%.1f\" "
                       "text-anchor=\"end\" stroke=\"none\" fill=\"#333333\">%s</text>\n",
                    ML - 5, y, ML, y, ML - 8, y + 4, lb);
        }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n</g>\n", ML, zero, ML + PW, zero);
    fprintf(f, "<text x=\"18\" y=\"%d\" transform=\"rotate(-90 18 %d)\" text-anchor=\"middle\" fill=\"#333333\">"
               "bytes: in above the line, out below</text>\n",
            MT + PH / 2, MT + PH / 2);
    x_axis(f, tl, nsteps, MT + PH);
    int lx = ML + PW + 24, ly = MT + 4;
    fprintf(f, "<g class=\"legend\">\n<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"#1f77b4\"/>"
               "<text x=\"%d\" y=\"%d\">paged in (%s)</text>\n",
            lx, ly - 10, lx + 20, ly, a);
    ly += 18;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"#ff7f0e\"/>"
               "<text x=\"%d\" y=\"%d\">paged out (%s)</text>\n</g>\n",
            lx, ly - 10, lx + 20, ly, b2);
    free(bin_in);
    free(bin_out);
    return close_svg(f, path, err, errlen);
}

/* ------------------------------------------------------------------- all */

/*
 * PNG copies come from rsvg-convert (Debian's librsvg2-bin, a declared
 * dependency that tools/deps.sh installs). Nothing else is guessed at: a
 * program that happens to be called `convert` is not asked. Outcomes:
 * written (and checked to start with the PNG signature), the converter is
 * not installed (a note for the summary, the SVGs are complete), or it ran
 * and failed or wrote something that is not a PNG (an error naming why).
 */
enum png_outcome { PNG_WRITTEN, PNG_NO_CONVERTER, PNG_FAILED };

/* The 8-byte PNG file signature (PNG specification, section 5.2). */
static const unsigned char png_signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

static enum png_outcome to_png(const char *svg, char *png, size_t pnglen, char *err, size_t errlen)
{
    size_t n = strlen(svg);
    if (n < 4 || n + 1 > pnglen) {
        snprintf(err, errlen, "%s: path too long for its PNG copy", svg);
        return PNG_FAILED;
    }
    memcpy(png, svg, n - 4);
    strcpy(png + n - 4, ".png");
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        snprintf(err, errlen, "rsvg-convert: cannot make a pipe: %s", strerror(errno));
        return PNG_FAILED;
    }
    char *argv[] = { "rsvg-convert", "-o", png, (char *)svg, NULL };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        if (rc == ENOENT)
            return PNG_NO_CONVERTER;
        snprintf(err, errlen, "rsvg-convert: cannot start it: %s", strerror(rc));
        return PNG_FAILED;
    }
    /* Its first line of complaint, if any, goes into the error. */
    char msg[256];
    size_t got = 0;
    ssize_t r;
    while ((r = read(pipefd[0], msg + got, sizeof(msg) - 1 - got)) > 0 || (r < 0 && errno == EINTR))
        if (r > 0 && (got += (size_t)r) == sizeof(msg) - 1)
            break;
    msg[got] = '\0';
    close(pipefd[0]);
    msg[strcspn(msg, "\n")] = '\0';
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "rsvg-convert: lost track of it: %s", strerror(errno));
            return PNG_FAILED;
        }
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        if (WIFEXITED(ws))
            snprintf(err, errlen, "rsvg-convert failed on %s (exit status %d)%s%s", svg, WEXITSTATUS(ws),
                     msg[0] ? ": " : "", msg);
        else
            snprintf(err, errlen, "rsvg-convert was killed by signal %d on %s", WTERMSIG(ws), svg);
        return PNG_FAILED;
    }
    unsigned char head[sizeof(png_signature)];
    FILE *f = fopen(png, "rb");
    size_t hn = f ? fread(head, 1, sizeof(head), f) : 0;
    if (f)
        fclose(f);
    if (hn != sizeof(head) || memcmp(head, png_signature, sizeof(head)) != 0) {
        snprintf(err, errlen, "rsvg-convert exited 0 on %s but %s is not a PNG file", svg, png);
        return PNG_FAILED;
    }
    return PNG_WRITTEN;
}

/* One SVG's PNG copy: listed when written; a missing converter is noted
 * once in *note; a failure is an error. */
static int png_copy(const char *svg, FILE *list, char *note, size_t notelen, char *err, size_t errlen)
{
    char png[4096];
    switch (to_png(svg, png, sizeof(png), err, errlen)) {
    case PNG_WRITTEN:
        if (list)
            fprintf(list, "%s\n", png);
        return 0;
    case PNG_NO_CONVERTER:
        snprintf(note, notelen, "no PNG copies: rsvg-convert is not installed (apt-get install librsvg2-bin)");
        return 1;
    case PNG_FAILED:
        break;
    }
    return -1;
}

int report_write_all(const struct timeline *tl, const char *dir, FILE *list, char *note, size_t notelen, char *err,
                     size_t errlen)
{
    if (notelen > 0)
        note[0] = '\0';
    char path[4096];
    /* mkdir -p */
    snprintf(path, sizeof(path), "%s", dir);
    for (char *c = path + 1; *c; c++)
        if (*c == '/') {
            *c = '\0';
            mkdir(path, 0777);
            *c = '/';
        }
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create the report directory: %s", dir, strerror(errno));
        return -1;
    }
    struct stat stt;
    if (stat(path, &stt) != 0 || !S_ISDIR(stt.st_mode)) {
        snprintf(err, errlen, "%s: not a directory", dir);
        return -1;
    }
    snprintf(path, sizeof(path), "%s/stats.json", dir);
    if (report_write_json(tl, path, err, errlen) != 0)
        return -1;
    if (list)
        fprintf(list, "%s\n", path);
    int want_png = getenv("GMC_NO_PNG") == NULL;
    for (unsigned s = 1; s <= tl->nsegs; s++) {
        snprintf(path, sizeof(path), "%s/segment-%u.svg", dir, s);
        if (report_write_segment_svg(tl, s, path, err, errlen) != 0)
            return -1;
        if (list)
            fprintf(list, "%s\n", path);
        if (want_png) {
            int rc = png_copy(path, list, note, notelen, err, errlen);
            if (rc < 0)
                return -1;
            want_png = rc == 0;
        }
    }
    snprintf(path, sizeof(path), "%s/paging.svg", dir);
    if (report_write_paging_svg(tl, path, err, errlen) != 0)
        return -1;
    if (list)
        fprintf(list, "%s\n", path);
    if (want_png && png_copy(path, list, note, notelen, err, errlen) < 0)
        return -1;
    return 0;
}
