/*
 * main.c - the gmc command (docs/cli.md).
 *
 *   gmc info   [--device STR]
 *   gmc list
 *   gmc run    WORKLOAD [--device STR] [--report DIR] [--trace FILE.fst [--trace-window A:B]]
 *              [--seed N] [--keep-going] [--progress auto|tty|plain|none]
 *   gmc replay TRACE [--device STR] [--seed N] [--log FILE] [--keep-going]
 *   gmc check  TRACE [--seed N]
 *
 * Exit status: 0 success; 1 the workload ran but an operation answered
 * something the trace does not expect (or a verified read differed);
 * 2 nothing ran: bad usage, unreadable or malformed trace, a device that
 * does not open, a report that cannot be written.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec.h"
#include "timeline.h"
#include "trace.h"

#define EXIT_RUN_FAILED 1
#define EXIT_USAGE 2

static const char *const usage_main =
    "usage: gmc COMMAND [OPTIONS]\n"
    "\n"
    "The gmc memory manager on the simulated (or a real) gmc controller.\n"
    "\n"
    "commands:\n"
    "  info     the adapter as the hardware reports it: ID, version, capabilities,\n"
    "           segments, page and TLB size\n"
    "  list     the devices gmc can open here: the simulator, PCI gmc boards and\n"
    "           serial ports with a gmc bridge (uart:/dev/ttyUSB1, ...)\n"
    "  run      run a workload trace, print a summary, optionally write a report\n"
    "  replay   run a trace without progress and print the digest of its decisions\n"
    "  check    parse a trace and say what it expands to; nothing runs\n"
    "\n"
    "'gmc COMMAND --help' describes each. Traces: docs/trace-format.md;\n"
    "examples: examples/*.trace.\n";

static const char *const usage_info =
    "usage: gmc info [--device STR]\n"
    "\n"
    "Open the device and print what the hardware reports: ID, version and\n"
    "capabilities, VRAM and aperture sizes, page size and TLB entries, and each\n"
    "segment with its base, size, banks and DXGK_SEGMENTFLAGS by name.\n"
    "\n"
    "  --device STR   device string (default \"sim\"): sim[:latency=N,timeout=N,\n"
    "                 trace=FILE,segs=N,segK=BASE/SIZE/FLAGS[/CPU_OFFSET[/BANKS[/SYSMEM_END]]]],\n"
    "                 pci:DOMAIN:BUS:DEV.FN, uart:/PATH@BAUD (docs/host.md)\n";

static const char *const usage_list =
    "usage: gmc list\n"
    "\n"
    "Print one device string per line, with what it is: the simulated\n"
    "controller, then every PCI device with the gmc vendor/device IDs\n"
    "(docs/pci.md; not opened), then every serial port that could hold a board\n"
    "(/dev/ttyUSB*, /dev/ttyACM*, /dev/gmc-board), each opened and probed with\n"
    "the bridge's PING (docs/uart-bridge.md). Lines starting with # say why\n"
    "something is not a device.\n";

static const char *const usage_run =
    "usage: gmc run WORKLOAD [OPTIONS]\n"
    "\n"
    "Parse the whole trace (nothing runs when it is malformed), open the device,\n"
    "run every operation, print a summary. WORKLOAD is a trace file, or the name\n"
    "of an example (frame_loop, streaming_uploads, large_weights, ...).\n"
    "\n"
    "  --device STR          device string (default: the trace's 'device' line, else \"sim\")\n"
    "  --report DIR          write DIR/stats.json, DIR/segment-N.svg (occupancy over\n"
    "                        time), DIR/paging.svg (bytes paged per step), and PNG\n"
    "                        copies drawn by rsvg-convert (GMC_NO_PNG=1: none)\n"
    "  --trace FILE.fst      FST waveform of the run (open it with gtkwave)\n"
    "  --trace-window A:B    only device cycles [A, B) (B empty: to the end)\n"
    "  --seed N              seed for rand() in the trace and the written data\n"
    "                        (default: the trace's 'seed' line, else 1)\n"
    "  --keep-going          do not stop at the first unexpected status\n"
    "  --progress MODE       auto (default), tty, plain or none, on stderr\n"
    "\n"
    "Exit status: 0 every operation answered what the trace expects; 1 one did\n"
    "not (its FILE:LINE and status are printed); 2 nothing ran.\n";

static const char *const usage_replay =
    "usage: gmc replay TRACE [--device STR] [--seed N] [--log FILE] [--keep-going]\n"
    "\n"
    "Run the trace deterministically and print the digest of the memory\n"
    "manager's decisions (placements, evictions, moves, statuses, bytes paged,\n"
    "data read back). The same trace and seed give the same digest; --log FILE\n"
    "writes the decisions one per line, so two runs can be compared with diff.\n";

static const char *const usage_check =
    "usage: gmc check TRACE [--seed N]\n"
    "\n"
    "Parse and expand the trace, report the first problem as FILE:LINE: reason,\n"
    "or count what it expands to. Nothing runs and no device is opened.\n";

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "gmc%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see 'gmc %s%s--help')\n", cmd ? cmd : "", cmd ? " " : "");
    return EXIT_USAGE;
}

struct cli {
    const char *cmd;
    const char *file;
    const char *device;
    const char *report;
    const char *fst;
    const char *window;
    const char *log;
    const char *progress;
    int seed_given;
    uint64_t seed;
    int keep_going;
};

static int parse_u64(const char *s, uint64_t *v)
{
    if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0')
        return -1;
    *v = x;
    return 0;
}

/* Options "--name VALUE" and "--name=VALUE". allowed: " --device --seed ... " */
static int parse_args(int argc, char **argv, struct cli *c, const char *allowed, int want_file, const char *help)
{
    for (int i = 2; i < argc; i++) {
        char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(help, stdout);
            exit(0);
        }
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            if (a[0] == '-' && a[1] != '\0')
                return usage_error(c->cmd, "unknown option '%s'", a);
            if (!want_file || c->file)
                return usage_error(c->cmd, "unexpected argument '%s'", a);
            c->file = a;
            continue;
        }
        char name[64];
        const char *val = NULL;
        const char *eq = strchr(a, '=');
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        if (nl >= sizeof(name))
            return usage_error(c->cmd, "unknown option '%s'", a);
        memcpy(name, a, nl);
        name[nl] = '\0';
        char pat[80];
        snprintf(pat, sizeof(pat), " %s ", name);
        if (strstr(allowed, pat) == NULL)
            return usage_error(c->cmd, "unknown option '%s'", name);
        if (!strcmp(name, "--keep-going")) {
            if (eq)
                return usage_error(c->cmd, "option '%s' takes no value", name);
            c->keep_going = 1;
            continue;
        }
        if (eq) {
            val = eq + 1;
        } else {
            if (i + 1 >= argc)
                return usage_error(c->cmd, "option '%s' needs a value", name);
            val = argv[++i];
        }
        if (!strcmp(name, "--device"))
            c->device = val;
        else if (!strcmp(name, "--report"))
            c->report = val;
        else if (!strcmp(name, "--trace"))
            c->fst = val;
        else if (!strcmp(name, "--trace-window"))
            c->window = val;
        else if (!strcmp(name, "--log"))
            c->log = val;
        else if (!strcmp(name, "--progress"))
            c->progress = val;
        else if (!strcmp(name, "--seed")) {
            if (parse_u64(val, &c->seed) != 0)
                return usage_error(c->cmd, "bad --seed '%s' (a number)", val);
            c->seed_given = 1;
        }
        if (*val == '\0')
            return usage_error(c->cmd, "option '%s' needs a value", name);
    }
    if (want_file && c->file == NULL)
        return usage_error(c->cmd, "missing %s", !strcmp(c->cmd, "run") ? "WORKLOAD" : "TRACE");
    return 0;
}

/* ------------------------------------------------------------------ info */

static int device_error(const char *dev, int st, const struct gmc_open_report *rep)
{
    fprintf(stderr, "gmc: cannot open device '%s': %s (%s)", dev, gmc_strerror(st), gmc_status_name(st));
    if (rep->rule)
        fprintf(stderr, ": segment %u breaks rule %s: %s", rep->segment, gmc_rule_id(rep->rule),
                gmc_rule_statement(rep->rule));
    else if (rep->error_pos)
        fprintf(stderr, " at byte %zu ('%s')", rep->error_pos, dev + rep->error_pos);
    fprintf(stderr, "\n");
    return EXIT_USAGE;
}

static int cmd_info(int argc, char **argv)
{
    struct cli c = { .cmd = "info" };
    int rc = parse_args(argc, argv, &c, " --device ", 0, usage_info);
    if (rc)
        return rc;
    const char *dev = c.device ? c.device : "sim";
    gmc_device *d = NULL;
    struct gmc_open_report rep;
    memset(&rep, 0, sizeof(rep));
    int st = gmc_device_open_ex(dev, &rep, &d);
    if (st != GMC_OK)
        return device_error(dev, st, &rep);
    struct gmc_device_info in;
    gmc_device_query(d, &in);
    printf("device %s (backend %s)\n", dev, in.backend);
    printf("  id           0x%08" PRIx32 "%s\n", in.id, in.id == GMC_ID ? " (gmc)" : "");
    printf("  version      %" PRIu32 ".%" PRIu32 "\n", in.version >> 16, in.version & 0xffffu);
    printf("  capabilities 0x%08" PRIx32 ":", in.caps);
    if (in.caps & GMC_CAPS_GART_MASK)
        printf(" GART");
    if (in.caps & GMC_CAPS_DMA_MASK)
        printf(" DMA");
    if (in.caps & GMC_CAPS_PROTECTION_MASK)
        printf(" PROTECTION(%" PRIu32 " ranges)", (in.caps & GMC_CAPS_PROT_RANGES_MASK) >> GMC_CAPS_PROT_RANGES_LSB);
    if (in.caps & GMC_CAPS_SIM_STRAPS_MASK)
        printf(" SIM_STRAPS");
    printf(" COUNTERS(%" PRIu32 " bits)\n", (in.caps & GMC_CAPS_COUNTER_BITS_MASK) >> GMC_CAPS_COUNTER_BITS_LSB);
    char b1[32], b2[32];
    tl_bytes_exact(in.vram_size, b1, sizeof(b1));
    tl_bytes_exact(in.cpu_window_size, b2, sizeof(b2));
    printf("  vram         %s, %s behind BAR1\n", b1, b2);
    printf("  aperture     0x%" PRIx64 ", %" PRIu64 " pages\n", in.aperture_base, in.aperture_pages);
    printf("  page size    %" PRIu32 " bytes\n", in.page_size);
    printf("  tlb          %" PRIu32 " entries\n", in.tlb_entries);
    printf("segments: %u\n", in.segment_count);
    for (unsigned i = 1; i <= in.segment_count; i++) {
        struct gmc_segment_info si;
        if (gmc_segment_query(d, i, &si) != GMC_OK)
            continue;
        char fl[400], sz[32];
        tr_flags_str(gmc_seg_flag_names, si.desc.flags, fl, sizeof(fl));
        tl_bytes_exact(si.desc.size, sz, sizeof(sz));
        printf("  %u: base 0x%09" PRIx64 "  size 0x%" PRIx64 " (%s)  banks %" PRIu32 "  cpu_offset 0x%" PRIx64
               "  flags %s\n",
               i, si.desc.base, si.desc.size, sz, si.desc.banks, si.desc.cpu_offset, fl[0] ? fl : "-");
    }
    struct gmc_link_stats ls;
    if (gmc_device_link_stats(d, &ls) == GMC_OK)
        printf("link: %" PRIu32 " baud, bridge protocol %" PRIu32 ", FTDI latency timer %s\n", ls.baud,
               ls.bridge_version,
               ls.latency_timer == 1 ? "set to 1 ms" : ls.latency_timer == 0 ? "- (not an FTDI port)"
                                                                           : "not writable (see README)");
    gmc_device_close(d);
    return 0;
}

/* ------------------------------------------------------------------ list */

/* PCI gmc boards (libpciaccess). */
static void list_pci(void)
{
    char devs[64][GMC_PCI_DEVSTR_LEN];
    unsigned n = 0;
    int st = gmc_pci_list(devs, 64, &n);
    if (st != GMC_OK) {
        printf("# pci: cannot enumerate: %s (%s)\n", gmc_strerror(st), gmc_status_name(st));
        return;
    }
    for (unsigned i = 0; i < n && i < 64u; i++)
        printf("%-24s PCI gmc board (vendor %04x, device %04x)\n", devs[i], GMC_PCI_VENDOR_ID, GMC_PCI_DEVICE_ID);
    if (n == 0)
        printf("# pci: no gmc PCI device (vendor %04x, device %04x)\n", GMC_PCI_VENDOR_ID, GMC_PCI_DEVICE_ID);
}

/* Every serial port a board could be on, each probed with PING (bounded to
 * well under a second; something else on a port only sees one PING frame). */
static void list_uart(void)
{
    static const char *const pats[] = { "/dev/ttyUSB*", "/dev/ttyACM*", "/dev/gmc-board" };
    unsigned found = 0;
    for (size_t k = 0; k < sizeof(pats) / sizeof(pats[0]); k++) {
        glob_t g;
        if (glob(pats[k], 0, NULL, &g) != 0)
            continue;
        for (size_t i = 0; i < g.gl_pathc; i++) {
            char dev[300];
            snprintf(dev, sizeof(dev), "uart:%s", g.gl_pathv[i]);
            gmc_device *d = NULL;
            int st = gmc_device_open(dev, &d);
            if (st == GMC_OK) {
                struct gmc_device_info in;
                gmc_device_query(d, &in);
                printf("%-24s gmc bridge: %" PRIu64 " KiB VRAM, version %" PRIu32 ".%" PRIu32 "\n", dev,
                       in.vram_size >> 10, in.version >> 16, in.version & 0xffffu);
                gmc_device_close(d);
                found++;
            } else {
                printf("# %-22s %s (%s)\n", dev, gmc_strerror(st), gmc_status_name(st));
            }
        }
        globfree(&g);
    }
    if (found == 0)
        printf("# uart: no gmc board on a serial port\n");
}

static int cmd_list(int argc, char **argv)
{
    struct cli c = { .cmd = "list" };
    int rc = parse_args(argc, argv, &c, " ", 0, usage_list);
    if (rc)
        return rc;
    printf("%-24s the simulated controller (Verilated gmc_top)\n", "sim");
    list_pci();
    list_uart();
    return 0;
}

/* ------------------------------------------------------------- run/replay */

static const char *find_workload(const char *name, char *buf, size_t n)
{
    struct stat st;
    if (stat(name, &st) == 0 || strchr(name, '/') != NULL)
        return name;
    static const char *const fmts[] = { "examples/%s.trace", "examples/%s" };
    for (size_t i = 0; i < 2; i++) {
        snprintf(buf, n, fmts[i], name);
        if (stat(buf, &st) == 0)
            return buf;
    }
    return name;
}

static void summary(const struct timeline *tl, const struct trace *t)
{
    const struct gmc_device_stats *s = &tl->stats;
    uint64_t created = 0;
    for (unsigned i = 0; i < tl->nsteps; i++)
        if (tl->steps[i].kind == TR_ALLOC && tl->steps[i].status == GMC_OK)
            created++;
    char in[32], out[32], fill[32], ver[32];
    tl_bytes(s->bytes_paged_in, in, sizeof(in));
    tl_bytes(s->bytes_paged_out, out, sizeof(out));
    tl_bytes(s->bytes_filled, fill, sizeof(fill));
    tl_bytes(tl->bytes_verified, ver, sizeof(ver));
    printf("gmc: %s on %s, seed %" PRIu64 "\n", tl->trace, tl->device, tl->seed);
    printf("  operations        %u of %u run, %" PRIu64 " failed, %" PRIu64 " refused as expected%s\n", tl->nsteps,
           t->nops, tl->ops_failed, tl->ops_expected_fail, t->frames ? "" : "");
    if (t->frames)
        printf("  frames            %u\n", t->frames);
    printf("  allocations       %" PRIu64 " created, %" PRIu64 " live at the end\n", created, tl->info.allocations);
    printf("  evictions         %" PRIu64 " (%" PRIu64 " discarded clean, %" PRIu64 " through an aperture)\n",
           s->evictions, s->discards, s->evictions_via_aperture);
    printf("  paged in          %s in %" PRIu64 " page-ins (system -> GPU memory)\n", in, s->page_ins);
    printf("  paged out         %s (GPU memory -> system)\n", out);
    printf("  filled            %s (first page-in fills)\n", fill);
    printf("  faults            %" PRIu64 ", resets %" PRIu64 "\n", s->faults, s->resets);
    if (tl->has_link)
        printf("  serial link       %" PRIu32 " baud, %" PRIu64 " bytes out, %" PRIu64 " in, %" PRIu64
               " retries, %" PRIu64 " resyncs, %" PRIu64 " damaged frames\n",
               tl->link.baud, tl->link.bytes_tx, tl->link.bytes_rx, tl->link.retries, tl->link.resyncs,
               tl->link.bad_frames);
    printf("  fences            %" PRIu64 " issued, %" PRIu64 " completed\n", s->fences_issued, s->fences_completed);
    printf("  locks             %" PRIu64 " (%" PRIu64 " waited, %" PRIu64 " renamed)\n", s->locks, s->lock_waits,
           s->renames);
    printf("  CPU cache         %" PRIu64 " flushes, %" PRIu64 " invalidates (Cached allocations)\n", s->cache_flushes,
           s->cache_invalidates);
    printf("  reads verified    %" PRIu64 " (%s compared)\n", tl->reads_verified, ver);
    /* Budgets (docs/budgets.md): only on a device with ApplicationTarget
     * segments in the group. */
    for (unsigned g = 0; g < GMC_SEGMENT_GROUPS; g++) {
        const struct gmc_budget_stats *b = &s->budget[g];
        if (b->capacity == 0u && b->refusals == 0u)
            continue;
        char use[32], bud[32], cap[32], res[32];
        tl_bytes(b->usage, use, sizeof(use));
        tl_bytes(b->budget, bud, sizeof(bud));
        tl_bytes(b->capacity, cap, sizeof(cap));
        tl_bytes(b->reservation, res, sizeof(res));
        printf("  budget %-10s %s used of %s (capacity %s), %s reserved, %" PRIu64 " refused\n",
               g == GMC_SEGMENT_GROUP_LOCAL ? "local" : "non-local", use, bud, cap, res, b->refusals);
    }
    if (s->hw.valid) {
        char hr[32], hw[32];
        tl_bytes(s->hw.dma_rd_vram + s->hw.dma_rd_sys + s->hw.dma_rd_aperture, hr, sizeof(hr));
        tl_bytes(s->hw.dma_wr_vram + s->hw.dma_wr_sys + s->hw.dma_wr_aperture, hw, sizeof(hw));
        printf("  hardware DMA      %s read, %s written, %" PRIu64 " packets, %" PRIu64 " faults\n", hr, hw,
               s->hw.dma_packets, s->hw.dma_faults);
        printf("  hardware GART     %" PRIu64 " TLB hits, %" PRIu64 " misses, %" PRIu64 " dummy-page hits\n",
               s->hw.tlb_hits, s->hw.tlb_misses, s->hw.dummy_hits);
        tl_bytes(s->hw.aperture_rd_bytes, hr, sizeof(hr));
        tl_bytes(s->hw.aperture_wr_bytes, hw, sizeof(hw));
        printf("  hardware BAR1     %s read, %s written by the CPU\n", hr, hw);
    }
    printf("  simulated cycles  %" PRIu64 " (%.2f ms at 100 MHz)\n", s->cycles, (double)s->cycles / 1e5);
    printf("  wall time         %.2f s", tl->wall_seconds);
    if (tl->wall_seconds > 0.01)
        printf(" (%.2f M cycles/s)", (double)s->cycles / tl->wall_seconds / 1e6);
    printf("\n");
    for (unsigned i = 0; i < tl->nsegs; i++) {
        unsigned n = 0, ev = 0;
        for (unsigned k = 0; k < tl->nintervals; k++)
            if (tl->intervals[k].seg == i + 1) {
                n++;
                ev += tl->intervals[k].end_kind == TL_END_EVICTED;
            }
        char sz[32], used[32];
        tl_bytes_exact(tl->segs[i].desc.size, sz, sizeof(sz));
        tl_bytes(tl->segs[i].end.used, used, sizeof(used));
        printf("  segment %u         %s: %u placements, %u evictions; %s used at the end\n", i + 1, sz, n, ev,
               used);
    }
    printf("  digest            %016" PRIx64 "\n", tl->digest);
}

static int load(const struct cli *c, struct trace **t)
{
    char err[1024], buf[4096];
    const char *path = find_workload(c->file, buf, sizeof(buf));
    if (trace_load(path, c->seed_given, c->seed, t, err, sizeof(err)) != GMC_OK) {
        fprintf(stderr, "gmc: %s\n", err);
        return EXIT_USAGE;
    }
    return 0;
}

static int cmd_run(int argc, char **argv, int replay)
{
    struct cli c = { .cmd = replay ? "replay" : "run" };
    int rc = parse_args(argc, argv, &c,
                        replay ? " --device --seed --log --keep-going "
                               : " --device --report --trace --trace-window --seed --keep-going --progress ",
                        1, replay ? usage_replay : usage_run);
    if (rc)
        return rc;
    struct exec_opts o;
    memset(&o, 0, sizeof(o));
    o.keep_going = c.keep_going;
    if (c.window) {
        if (!c.fst)
            return usage_error(c.cmd, "--trace-window needs --trace FILE.fst%s", "");
        const char *colon = strchr(c.window, ':');
        char a[64];
        if (colon == NULL || (size_t)(colon - c.window) >= sizeof(a))
            return usage_error(c.cmd, "bad --trace-window '%s' (A:B, cycles)", c.window);
        memcpy(a, c.window, (size_t)(colon - c.window));
        a[colon - c.window] = '\0';
        if (parse_u64(a, &o.win_start) != 0 || (colon[1] != '\0' && parse_u64(colon + 1, &o.win_end) != 0) ||
            (o.win_end != 0 && o.win_end <= o.win_start))
            return usage_error(c.cmd, "bad --trace-window '%s' (A:B, cycles, A < B)", c.window);
    }
    o.fst = c.fst;
    if (replay) {
        o.progress = EXEC_PROGRESS_NONE;
    } else if (c.progress == NULL || !strcmp(c.progress, "auto")) {
        o.progress = isatty(2) ? EXEC_PROGRESS_TTY : EXEC_PROGRESS_PLAIN;
    } else if (!strcmp(c.progress, "tty")) {
        o.progress = EXEC_PROGRESS_TTY;
    } else if (!strcmp(c.progress, "plain")) {
        o.progress = EXEC_PROGRESS_PLAIN;
    } else if (!strcmp(c.progress, "none")) {
        o.progress = EXEC_PROGRESS_NONE;
    } else {
        return usage_error(c.cmd, "bad --progress '%s' (auto, tty, plain or none)", c.progress);
    }
    struct trace *t = NULL;
    if ((rc = load(&c, &t)) != 0)
        return rc;
    o.device = c.device ? c.device : t->device ? t->device : "sim";
    FILE *log = NULL;
    if (c.log) {
        log = fopen(c.log, "w");
        if (log == NULL) {
            fprintf(stderr, "gmc: %s: cannot write: %s\n", c.log, strerror(errno));
            trace_free(t);
            return EXIT_USAGE;
        }
        o.log = log;
    }
    struct timeline tl;
    char err[1024];
    rc = exec_run(t, &o, &tl, err, sizeof(err));
    if (log)
        fclose(log);
    if (rc == 2) {
        fprintf(stderr, "gmc: %s\n", err);
        trace_free(t);
        return EXIT_USAGE;
    }
    if (rc != 0)
        fprintf(stderr, "gmc: %s\n", tl.first_error);
    if (replay) {
        printf("digest %016" PRIx64 "  %s seed %" PRIu64 "  %u operations, %u placements, %" PRIu64
               " evictions, %" PRIu64 " failed\n",
               tl.digest, t->file, t->seed, tl.nsteps, tl.nintervals, tl.stats.evictions, tl.ops_failed);
    } else {
        summary(&tl, t);
        if (c.fst)
            printf("waveform: %s (gtkwave %s)\n", c.fst, c.fst);
        if (c.report) {
            char note[160];
            if (report_write_all(&tl, c.report, NULL, note, sizeof(note), err, sizeof(err)) != 0) {
                fprintf(stderr, "gmc: %s\n", err);
                rc = EXIT_USAGE;
            } else {
                printf("report: %s/stats.json\n", c.report);
                printf("pictures: %s/segment-N.svg (occupancy of each segment over time), %s/paging.svg "
                       "(bytes paged per step)%s\n",
                       c.report, c.report, note[0] || getenv("GMC_NO_PNG") ? "" : ", and .png copies");
                if (note[0])
                    printf("pictures: %s\n", note);
            }
        }
    }
    tl_free(&tl);
    trace_free(t);
    return rc;
}

static int cmd_check(int argc, char **argv)
{
    struct cli c = { .cmd = "check" };
    int rc = parse_args(argc, argv, &c, " --seed ", 1, usage_check);
    if (rc)
        return rc;
    struct trace *t = NULL;
    if ((rc = load(&c, &t)) != 0)
        return rc;
    unsigned allocs = 0;
    for (unsigned i = 0; i < t->nops; i++)
        allocs += t->ops[i].kind == TR_ALLOC;
    printf("%s: ok: %u operations, %u allocations, %u clients, %u frames, seed %" PRIu64 "%s%s\n", t->file, t->nops,
           allocs, t->nclients, t->frames, t->seed, t->device ? ", device " : "", t->device ? t->device : "");
    trace_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (!strcmp(cmd, "info"))
        return cmd_info(argc, argv);
    if (!strcmp(cmd, "list"))
        return cmd_list(argc, argv);
    if (!strcmp(cmd, "run"))
        return cmd_run(argc, argv, 0);
    if (!strcmp(cmd, "replay"))
        return cmd_run(argc, argv, 1);
    if (!strcmp(cmd, "check"))
        return cmd_check(argc, argv);
    return usage_error(NULL, "unknown command '%s'", cmd);
}
