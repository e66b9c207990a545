/*
 * gmc_devstr.c - parse device strings.
 *
 * DOC: Overview
 *
 * One pass over the string, no allocation. Each failure names its problem
 * with its own status and the byte offset where the problem starts, so a
 * tool can point at it. The parser knows every backend's syntax, also for
 * backends this build cannot open yet (pci, uart): a malformed address is
 * an error of its own, distinct from "backend not available".
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gmc_devstr.h"
#include "gmc_sim.h"
#include "gmc_status.h"

/* A slice [p, p + n) of the string, at byte offset pos. */
struct tok {
    const char *p;
    size_t n;
    size_t pos;
};

struct perr {
    int status;
    size_t pos;
};

static int fail(struct perr *e, int status, size_t pos)
{
    e->status = status;
    e->pos = pos;
    return status;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decimal or 0x-hex, at least one digit, no sign, no overflow. */
static int number(struct tok t, uint64_t *out)
{
    uint64_t v = 0;
    unsigned base = 10;
    size_t i = 0;
    if (t.n >= 2 && t.p[0] == '0' && (t.p[1] == 'x' || t.p[1] == 'X')) {
        base = 16;
        i = 2;
    }
    if (i == t.n)
        return -1;
    for (; i < t.n; i++) {
        int d = hexval(t.p[i]);
        if (d < 0 || (unsigned)d >= base)
            return -1;
        if (v > (UINT64_MAX - (uint64_t)d) / base)
            return -1;
        v = v * base + (uint64_t)d;
    }
    *out = v;
    return 0;
}

static int number_max(struct tok t, uint64_t lo, uint64_t hi, uint64_t *out, struct perr *e)
{
    uint64_t v;
    if (number(t, &v) != 0 || v < lo || v > hi)
        return fail(e, GMC_E_DEVSTR_NUMBER, t.pos);
    *out = v;
    return GMC_OK;
}

/* The slice before the first c (or all of it); *rest after that c. */
static struct tok split(struct tok t, char c, struct tok *rest, int *found)
{
    const char *q = memchr(t.p, c, t.n);
    struct tok head = t;
    *found = q != NULL;
    if (q == NULL) {
        *rest = (struct tok){ t.p + t.n, 0, t.pos + t.n };
        return head;
    }
    head.n = (size_t)(q - t.p);
    *rest = (struct tok){ q + 1, t.n - head.n - 1, t.pos + head.n + 1 };
    return head;
}

static int tok_is(struct tok t, const char *word)
{
    return t.n == strlen(word) && memcmp(t.p, word, t.n) == 0;
}

/* ------------------------------------------------------------------- sim */

enum { OPT_LATENCY, OPT_TIMEOUT, OPT_TRACE, OPT_SEGS, OPT_PBUF, OPT_TDR, OPT_SEG1 };
#define OPT_COUNT (OPT_SEG1 + GMC_SIM_MAX_SEGMENTS)

static int option_index(struct tok name)
{
    static const char *const names[OPT_SEG1] = { "latency", "timeout", "trace", "segs", "pbuf", "tdr" };
    for (int i = 0; i < OPT_SEG1; i++) {
        if (tok_is(name, names[i]))
            return i;
    }
    if (name.n == 4 && memcmp(name.p, "seg", 3) == 0 && name.p[3] >= '1' &&
        name.p[3] < (char)('1' + GMC_SIM_MAX_SEGMENTS))
        return OPT_SEG1 + (name.p[3] - '1');
    return -1;
}

static int parse_segment(struct tok v, struct gmc_sim_segment *seg, struct perr *e)
{
    struct tok f[6];
    unsigned n = 0;
    int more = 1;
    struct tok rest = v;
    while (more) {
        if (n == 6)
            return fail(e, GMC_E_DEVSTR_SEGMENT, v.pos);
        f[n++] = split(rest, '/', &rest, &more);
    }
    if (n < 3)
        return fail(e, GMC_E_DEVSTR_SEGMENT, v.pos);
    uint64_t x[6] = { 0, 0, 0, 0, 0, 0 };
    static const uint64_t max[6] = { UINT64_MAX, UINT64_MAX, UINT32_MAX, UINT64_MAX, UINT8_MAX, UINT64_MAX };
    for (unsigned i = 0; i < n; i++) {
        int rc = number_max(f[i], 0, max[i], &x[i], e);
        if (rc != GMC_OK)
            return rc;
    }
    *seg = (struct gmc_sim_segment){
        .base = x[0], .size = x[1], .flags = (uint32_t)x[2], .cpu_offset = x[3], .banks = (uint8_t)x[4],
        .sysmem_end = x[5],
    };
    return GMC_OK;
}

static int parse_option(struct tok opt, int *seen, size_t *where, struct gmc_devspec *spec,
                        struct gmc_sim_config *sim, struct perr *e)
{
    int has_eq;
    struct tok val;
    struct tok name = split(opt, '=', &val, &has_eq);
    int i = option_index(name);
    if (opt.n == 0 || !has_eq || i < 0 || seen[i])
        return fail(e, GMC_E_DEVSTR_OPTION, opt.pos);
    seen[i] = 1;
    where[i] = opt.pos;
    uint64_t v = 0;
    int rc = GMC_OK;
    switch (i) {
    case OPT_LATENCY:
        rc = number_max(val, 0, UINT32_MAX, &v, e);
        sim->host_latency = (uint32_t)v;
        break;
    case OPT_TIMEOUT:
        rc = number_max(val, 1, UINT32_MAX, &v, e);
        sim->bus_timeout = (uint32_t)v;
        break;
    case OPT_TRACE:
        if (val.n == 0 || val.n >= sizeof(spec->trace))
            return fail(e, GMC_E_DEVSTR_OPTION, opt.pos);
        memcpy(spec->trace, val.p, val.n);
        spec->trace[val.n] = '\0';
        break;
    case OPT_SEGS:
        rc = number_max(val, 0, GMC_SIM_MAX_SEGMENTS, &v, e);
        sim->seg_count = (uint32_t)v;
        break;
    case OPT_PBUF:
        /* paging buffer bytes: a multiple of 32 packets' worth, 64 .. 1 MiB */
        rc = number_max(val, 64, 1u << 20, &v, e);
        if (rc == GMC_OK && (v % 32u) != 0u)
            return fail(e, GMC_E_DEVSTR_NUMBER, val.pos);
        spec->pbuf_bytes = (uint32_t)v;
        break;
    case OPT_TDR:
        rc = number_max(val, 1000, UINT32_MAX, &v, e);
        spec->tdr_cycles = v;
        break;
    default:
        rc = parse_segment(val, &sim->seg[i - OPT_SEG1], e);
        break;
    }
    return rc;
}

/* segs=N and segK=... together describe straps 1..N, every one given. */
static int check_straps(const int *seen, const size_t *where, size_t end,
                        struct gmc_sim_config *sim, struct perr *e)
{
    unsigned top = 0;
    for (unsigned k = 0; k < GMC_SIM_MAX_SEGMENTS; k++) {
        if (seen[OPT_SEG1 + k])
            top = k + 1u;
    }
    if (!seen[OPT_SEGS] && top == 0u)
        return GMC_OK;
    unsigned count = seen[OPT_SEGS] ? sim->seg_count : top;
    for (unsigned k = 0; k < GMC_SIM_MAX_SEGMENTS; k++) {
        if (k < count && !seen[OPT_SEG1 + k])
            return fail(e, GMC_E_DEVSTR_SEGMENT, seen[OPT_SEGS] ? where[OPT_SEGS] : end);
        if (k >= count && seen[OPT_SEG1 + k])
            return fail(e, GMC_E_DEVSTR_SEGMENT, where[OPT_SEG1 + k]);
    }
    sim->strap_segments = 1;
    sim->seg_count = count;
    return GMC_OK;
}

static int parse_sim(struct tok args, int has_args, struct gmc_devspec *spec, struct perr *e)
{
    int seen[OPT_COUNT] = { 0 };
    size_t where[OPT_COUNT] = { 0 };
    struct gmc_sim_config sim;
    spec->kind = GMC_DEV_SIM;
    gmc_sim_config_default(&sim);
    int more = has_args;
    struct tok rest = args;
    while (more) {
        struct tok opt = split(rest, ',', &rest, &more);
        int rc = parse_option(opt, seen, where, spec, &sim, e);
        if (rc != GMC_OK)
            return rc;
    }
    int rc = has_args ? check_straps(seen, where, args.pos + args.n, &sim, e) : GMC_OK;
    if (rc == GMC_OK)
        memcpy(spec->sim, &sim, sizeof(sim));
    return rc;
}

_Static_assert(sizeof(struct gmc_sim_config) <= GMC_DEVSPEC_SIM_BYTES,
               "GMC_DEVSPEC_SIM_BYTES holds a struct gmc_sim_config");

int gmc_devspec_sim_set(struct gmc_devspec *spec, const struct gmc_sim_config *cfg)
{
    struct gmc_sim_config sim;
    memset(spec, 0, sizeof(*spec));
    spec->kind = GMC_DEV_SIM;
    if (cfg != NULL)
        sim = *cfg;
    else
        gmc_sim_config_default(&sim);
    if (sim.strap_segments && sim.seg_count > GMC_SIM_MAX_SEGMENTS)
        return GMC_E_INVALID_ARG;
    memcpy(spec->sim, &sim, sizeof(sim));
    return GMC_OK;
}

void gmc_devspec_sim_get(const struct gmc_devspec *spec, struct gmc_sim_config *cfg)
{
    memcpy(cfg, spec->sim, sizeof(*cfg));
}

/* ------------------------------------------------------------------- pci */

/* 1..maxd hex digits up to the delimiter `delim` ('\0': end of slice). */
static int hex_field(struct tok *t, unsigned maxd, char delim, uint64_t max, uint64_t *out)
{
    size_t i = 0;
    uint64_t v = 0;
    while (i < t->n && t->p[i] != delim) {
        int d = hexval(t->p[i]);
        if (d < 0 || i == maxd)
            return -1;
        v = v * 16u + (uint64_t)d;
        i++;
    }
    if (i == 0 || v > max)
        return -1;
    if (delim != '\0') {
        if (i == t->n)
            return -1;
        i++; /* the delimiter */
    }
    *out = v;
    t->p += i;
    t->n -= i;
    t->pos += i;
    return 0;
}

/* id=VVVV:DDDD: the vendor and device IDs of a board flashed with other IDs. */
static int parse_pci_option(struct tok opt, struct gmc_devspec *spec, struct perr *e)
{
    uint64_t ven, dev;
    struct tok t = opt;
    if (opt.n < 3 || memcmp(opt.p, "id=", 3) != 0 || spec->pci_vendor != 0)
        return fail(e, GMC_E_DEVSTR_OPTION, opt.pos);
    t.p += 3;
    t.n -= 3;
    t.pos += 3;
    if (hex_field(&t, 4, ':', 0xFFFE, &ven) != 0 || hex_field(&t, 4, '\0', 0xFFFE, &dev) != 0 ||
        ven == 0 || dev == 0)
        return fail(e, GMC_E_DEVSTR_PCI, opt.pos + 3u);
    spec->pci_vendor = (uint16_t)ven;
    spec->pci_device = (uint16_t)dev;
    return GMC_OK;
}

/* "pci" | "pci:" ADDRESS [",id=V:D"] | "pci:id=V:D" */
static int parse_pci(struct tok a, int has_args, struct gmc_devspec *spec, struct perr *e)
{
    uint64_t dom, bus, dev, fn;
    spec->kind = GMC_DEV_PCI;
    if (!has_args) {
        spec->pci_any = 1;
        return GMC_OK;
    }
    int more;
    struct tok rest;
    struct tok t = split(a, ',', &rest, &more);
    if (t.n >= 3 && memcmp(t.p, "id=", 3) == 0) {
        spec->pci_any = 1;
        more = 1;
        rest = a;
    } else {
        if (hex_field(&t, 4, ':', 0xFFFF, &dom) != 0 || hex_field(&t, 2, ':', 0xFF, &bus) != 0 ||
            hex_field(&t, 2, '.', 0x1F, &dev) != 0 || hex_field(&t, 1, '\0', 0x7, &fn) != 0)
            return fail(e, GMC_E_DEVSTR_PCI, t.pos);
        spec->domain = (uint16_t)dom;
        spec->bus = (uint8_t)bus;
        spec->dev = (uint8_t)dev;
        spec->fn = (uint8_t)fn;
    }
    while (more) {
        struct tok opt = split(rest, ',', &rest, &more);
        int rc = parse_pci_option(opt, spec, e);
        if (rc != GMC_OK)
            return rc;
    }
    return GMC_OK;
}

/* ------------------------------------------------------------------ uart */

/* A paging fence over the 3 Mbaud link waits for the link, not the engine:
 * 8 KiB paged in is 14 KiB of frames (48 ms at 12 MHz) plus the host's
 * round trips. 60 M board cycles (5 s) before a TDR. */
#define UART_TDR_CYCLES 60000000u

static int parse_uart(struct tok a, struct gmc_devspec *spec, struct perr *e)
{
    spec->kind = GMC_DEV_UART;
    spec->tdr_cycles = UART_TDR_CYCLES;
    const char *at = NULL;
    for (size_t i = 0; i < a.n; i++) {
        if (a.p[i] == '@')
            at = a.p + i;
    }
    if (a.n == 0 || a.p[0] != '/')
        return fail(e, GMC_E_DEVSTR_UART, a.pos);
    if (at == NULL) {
        /* No rate: the boards' 3 Mbaud (host/backend/gmc_backend_uart.h). */
        if (a.n < 2u || a.n >= sizeof(spec->tty))
            return fail(e, GMC_E_DEVSTR_UART, a.pos);
        memcpy(spec->tty, a.p, a.n);
        spec->tty[a.n] = '\0';
        spec->baud = 3000000u;
        return GMC_OK;
    }
    size_t plen = (size_t)(at - a.p);
    if (plen < 2u || plen >= sizeof(spec->tty))
        return fail(e, GMC_E_DEVSTR_UART, a.pos);
    struct tok baud = { at + 1, a.n - plen - 1u, a.pos + plen + 1u };
    uint64_t v = 0;
    for (size_t i = 0; i < baud.n; i++) {
        if (baud.p[i] < '0' || baud.p[i] > '9')
            return fail(e, GMC_E_DEVSTR_UART, baud.pos + i);
    }
    if (baud.n == 0 || number(baud, &v) != 0 || v == 0 || v > UINT32_MAX)
        return fail(e, GMC_E_DEVSTR_UART, baud.pos);
    memcpy(spec->tty, a.p, plen);
    spec->tty[plen] = '\0';
    spec->baud = (uint32_t)v;
    return GMC_OK;
}

/* ------------------------------------------------------------------ entry */

int gmc_devstr_parse(const char *str, struct gmc_devspec *spec, size_t *err_pos)
{
    struct perr e = { GMC_OK, 0 };
    if (err_pos != NULL)
        *err_pos = 0;
    if (str == NULL || spec == NULL) {
        if (spec != NULL)
            memset(spec, 0, sizeof(*spec));
        return GMC_E_NULL_POINTER;
    }
    memset(spec, 0, sizeof(*spec));
    int has_args;
    struct tok all = { str, strlen(str), 0 };
    struct tok args;
    struct tok name = split(all, ':', &args, &has_args);
    int rc;
    if (tok_is(name, "sim"))
        rc = parse_sim(args, has_args, spec, &e);
    else if (tok_is(name, "pci"))
        rc = parse_pci(args, has_args, spec, &e);
    else if (tok_is(name, "uart"))
        rc = parse_uart(args, spec, &e);
    else
        rc = fail(&e, GMC_E_BAD_DEVICE_STRING, 0);
    if (rc != GMC_OK) {
        memset(spec, 0, sizeof(*spec));
        if (err_pos != NULL)
            *err_pos = e.pos;
    }
    return rc;
}
