/*
 * gmc_backend_uart.c - the backend for an iCE40 board behind the UART
 * bridge (docs/uart-bridge.md, protocol constants in include/gmc_link.h).
 *
 * DOC: How it drives the link
 *
 * Opening: the port is opened non-blocking, made exclusive (TIOCEXCL and
 * an flock, which also holds against root), set raw at any rate through
 * termios2/BOTHER, and the FTDI latency timer is set to 1 ms through sysfs
 * where the driver offers it. Then PING must come back with protocol
 * version GMC_LINK_VERSION, and ID must read "GMC\0"; each way of failing
 * has its own status (no such port, permission, busy, not a bridge,
 * protocol version, unplugged).
 *
 * Commands: every command carries the next SEQ; it is repeated with the
 * same SEQ until the reply carrying that SEQ comes back, so a command
 * whose reply was lost is answered by the bridge from its saved reply and
 * never executed twice. A damaged frame, an ERR or a silence ends one
 * attempt; a silence is followed by a resynchronisation (quiet longer than
 * the bridge's receive timeout, then PING until the nonce echoes). After
 * MAX_ATTEMPTS the board "stopped answering". No wait is unbounded.
 *
 * DMA: while anything waits for the link, the frames the bridge sends
 * unasked are served: DMA_RD_REQ is answered by streaming every beat
 * (no wait between beats) from the host memory registered with host_map;
 * DMA_WR_REQ/DMA_WR_DATA are collected and applied when the last beat has
 * come, then DMA_WR_RESP. An access outside the registered memory is
 * answered DECERR and touches nothing. A beat the bridge refused (ERR with
 * its next expected beat) is resent from there; a burst whose tail went
 * missing is found by PING (it reports the next beat) when the link is
 * quiet.
 *
 * Time: cycles() is the board's own free-running cycle counter (CYCLE_LO,
 * extended across wraps): wall time at the board clock on hardware, and
 * exactly the simulated time under the board simulation, which runs
 * slower than a board. wait() sleeps on the link, serving DMA, until that
 * many board cycles have passed (or the IRQ frame came).
 */
#define _GNU_SOURCE 1
#include <asm/termbits.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "gmc_backend.h"
#include "gmc_backend_uart.h"
#include "gmc_devstr.h"
#include "gmc_link.h"
#include "gmc_regs.h"
#include "gmc_status.h"

#define BOARD_HZ 12000000ull
#define MAX_ATTEMPTS 8
#define RESYNC_QUIET_MS 15   /* > the bridge's 2^17-cycle receive timeout (11 ms) */
#define STALL_MS 40          /* a DMA burst with no news this long is checked with PING */
#define RX_CAP 8192u

struct region {
    uint64_t bus;
    uint8_t *ptr;
    size_t len;
};

struct frame {
    uint8_t op, len;
    uint8_t pl[16];
};

struct uart_ctx {
    int fd;
    char path[GMC_DEVSTR_PATH_MAX];
    uint32_t baud;
    uint8_t seq;
    uint8_t nonce;
    int dead;                 /* sticky: GMC_E_UART_UNPLUGGED */
    struct region *map;
    unsigned nmap, capmap;
    uint8_t rx[RX_CAP];
    size_t rxn;
    /* The command in flight: its reply when it came. */
    uint8_t want_op, want_seq, want_seqd;
    int got_reply;
    struct frame reply;
    int got_err;
    struct frame err;
    int irq_level;
    /* DMA read burst (one at a time). */
    int rd_active, rd_unconfirmed;
    uint8_t rd_id, rd_len, rd_size, rd_burst;
    uint64_t rd_addr;
    unsigned rd_sent;         /* beats sent so far (next to send) */
    int rd_rewound;           /* last rewind point, -1 none */
    int rd_ping_beat;         /* next beat the last stall check saw, -1 none */
    uint64_t rd_news_ns;
    /* DMA write burst. */
    int wr_active, wr_resp_sent;
    uint8_t wr_id, wr_len, wr_size, wr_burst, wr_resp;
    uint64_t wr_addr;
    unsigned wr_got;
    int wr_missing;
    int wr_seen_waiting;      /* the last stall check saw the write burst open */
    uint8_t wr_data[256][8], wr_strb[256];
    uint64_t wr_news_ns;
    uint64_t t0_ns;
    uint64_t cyc_hi, cyc_t0;
    uint32_t cyc_last_lo;
    struct gmc_uart_stats st;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint8_t crc8(uint8_t crc, uint8_t b)
{
    crc ^= b;
    for (int i = 0; i < 8; i++)
        crc = (crc & 0x80u) ? (uint8_t)((crc << 1) ^ GMC_LINK_CRC_POLY) : (uint8_t)(crc << 1);
    return crc;
}

/* ------------------------------------------------------------ sending */

static int send_all(struct uart_ctx *c, const uint8_t *p, size_t n)
{
    uint64_t deadline = now_ns() + 2000000000ull;
    while (n > 0) {
        ssize_t w = write(c->fd, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            c->st.bytes_tx += (uint64_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
            c->dead = 1;
            return GMC_E_UART_UNPLUGGED;
        }
        if (now_ns() > deadline)
            return GMC_E_UART_NO_ANSWER;
        struct pollfd pfd = { c->fd, POLLOUT, 0 };
        if (poll(&pfd, 1, 10) > 0 && (pfd.revents & (POLLERR | POLLHUP))) {
            c->dead = 1;
            return GMC_E_UART_UNPLUGGED;
        }
    }
    return GMC_OK;
}

static size_t frame_put(uint8_t *out, uint8_t op, const uint8_t *pl, uint8_t len)
{
    uint8_t crc = crc8(crc8(0, op), len);
    out[0] = GMC_LINK_SYNC;
    out[1] = op;
    out[2] = len;
    for (uint8_t i = 0; i < len; i++) {
        out[3 + i] = pl[i];
        crc = crc8(crc, pl[i]);
    }
    out[3 + len] = crc;
    return (size_t)len + 4u;
}

static int send_frame(struct uart_ctx *c, uint8_t op, const uint8_t *pl, uint8_t len)
{
    uint8_t buf[32];
    return send_all(c, buf, frame_put(buf, op, pl, len));
}

/* ---------------------------------------------------------- DMA service */

static const struct region *find_region(const struct uart_ctx *c, uint64_t a, size_t n)
{
    for (unsigned i = 0; i < c->nmap; i++) {
        const struct region *r = &c->map[i];
        if (a >= r->bus && n <= r->len && a - r->bus <= r->len - n)
            return r;
    }
    return NULL;
}

/* Address of beat i of a burst (AXI INCR/FIXED/WRAP). */
static uint64_t beat_addr(uint64_t a, unsigned size, unsigned burst, unsigned len, unsigned i)
{
    uint64_t step = 1ull << size;
    uint64_t al = a & ~(step - 1);
    if (burst == 0)
        return a;
    if (i == 0)
        return a;
    if (burst == 2) {
        uint64_t span = step * ((uint64_t)len + 1);
        uint64_t base = a & ~(span - 1);
        return base + ((al - base + (uint64_t)i * step) % span);
    }
    return al + (uint64_t)i * step;
}

/* Stream read beats from rd_sent to the end of the burst. */
static int rd_stream(struct uart_ctx *c)
{
    uint8_t buf[4096];
    size_t n = 0;
    while (c->rd_active && c->rd_sent <= c->rd_len) {
        unsigned i = c->rd_sent;
        uint64_t a = beat_addr(c->rd_addr, c->rd_size, c->rd_burst, c->rd_len, i);
        uint64_t step = 1ull << c->rd_size;
        uint64_t end = (a & ~(step - 1)) + step;
        uint8_t pl[10] = { (uint8_t)i, 0 };
        const struct region *r = find_region(c, a, (size_t)(end - a));
        if (r == NULL) {
            pl[1] = 3; /* DECERR: nothing there, nothing read */
        } else {
            uint64_t w = a & ~7ull;
            for (unsigned k = 0; k < 8; k++) {
                uint64_t b = w + k;
                if (b >= r->bus && b - r->bus < r->len)
                    pl[2 + k] = r->ptr[b - r->bus];
            }
        }
        n += frame_put(buf + n, GMC_LINK_OP_DMA_RD_DATA, pl, 10);
        c->rd_sent++;
        c->st.dma_rd_beats++;
        if (n + 16 > sizeof buf) {
            int rc = send_all(c, buf, n);
            if (rc != GMC_OK)
                return rc;
            n = 0;
        }
    }
    return n ? send_all(c, buf, n) : GMC_OK;
}

static int wr_finish(struct uart_ctx *c)
{
    uint8_t resp = 0;
    if (c->wr_missing) {
        resp = 2; /* a beat never arrived whole: SLVERR, nothing written */
    } else {
        for (unsigned i = 0; i <= c->wr_len && resp == 0; i++) {
            uint64_t w = beat_addr(c->wr_addr, c->wr_size, c->wr_burst, c->wr_len, i) & ~7ull;
            for (unsigned k = 0; k < 8; k++)
                if ((c->wr_strb[i] >> k) & 1u && find_region(c, w + k, 1) == NULL)
                    resp = 3;
        }
        for (unsigned i = 0; i <= c->wr_len && resp == 0; i++) {
            uint64_t w = beat_addr(c->wr_addr, c->wr_size, c->wr_burst, c->wr_len, i) & ~7ull;
            for (unsigned k = 0; k < 8; k++) {
                if ((c->wr_strb[i] >> k) & 1u) {
                    const struct region *r = find_region(c, w + k, 1);
                    r->ptr[w + k - r->bus] = c->wr_data[i][k];
                }
            }
        }
    }
    c->wr_resp = resp;
    c->wr_resp_sent = 1;
    c->wr_news_ns = now_ns();
    return send_frame(c, GMC_LINK_OP_DMA_WR_RESP, &resp, 1);
}

static uint64_t le48(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 5; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static int handle(struct uart_ctx *c, const struct frame *f)
{
    switch (f->op) {
    case GMC_LINK_OP_IRQ:
        if (f->len == GMC_LINK_LEN_IRQ)
            c->irq_level = f->pl[0] & 1;
        c->st.irqs++;
        return GMC_OK;
    case GMC_LINK_OP_DMA_RD_REQ:
        if (f->len != GMC_LINK_LEN_DMA_RD_REQ)
            return GMC_OK;
        c->rd_active = 1;
        c->rd_unconfirmed = 1;
        c->rd_id = f->pl[0];
        c->rd_addr = le48(f->pl + 1);
        c->rd_len = f->pl[7];
        c->rd_size = f->pl[8] & 7u;
        c->rd_burst = f->pl[9] & 3u;
        c->rd_sent = 0;
        c->rd_rewound = -1;
        c->rd_ping_beat = -1;
        c->rd_news_ns = now_ns();
        return rd_stream(c);
    case GMC_LINK_OP_DMA_WR_REQ:
        if (f->len != GMC_LINK_LEN_DMA_WR_REQ)
            return GMC_OK;
        c->wr_active = 1;
        c->wr_resp_sent = 0;
        c->wr_id = f->pl[0];
        c->wr_addr = le48(f->pl + 1);
        c->wr_len = f->pl[7];
        c->wr_size = f->pl[8] & 7u;
        c->wr_burst = f->pl[9] & 3u;
        c->wr_got = 0;
        c->wr_missing = 0;
        c->wr_seen_waiting = 0;
        c->wr_news_ns = now_ns();
        return GMC_OK;
    case GMC_LINK_OP_DMA_WR_DATA:
        if (f->len != GMC_LINK_LEN_DMA_WR_DATA || !c->wr_active || c->wr_resp_sent)
            return GMC_OK;
        if (f->pl[0] != c->wr_got)
            c->wr_missing = 1;
        c->wr_strb[f->pl[0]] = f->pl[1];
        memcpy(c->wr_data[f->pl[0]], f->pl + 2, 8);
        c->wr_got = (unsigned)f->pl[0] + 1u;
        c->st.dma_wr_beats++;
        c->wr_news_ns = now_ns();
        if (f->pl[0] == c->wr_len)
            return wr_finish(c);
        return GMC_OK;
    case GMC_LINK_OP_ERR:
        if (f->len != GMC_LINK_LEN_ERR)
            return GMC_OK;
        c->st.link_errors++;
        /* A refused read beat: resend from the beat the bridge expects. */
        if (c->rd_active && (f->pl[3] & GMC_LINK_ST_DMA_RD) && f->pl[2] <= c->rd_len &&
            f->pl[2] < c->rd_sent && (int)f->pl[2] != c->rd_rewound) {
            c->rd_sent = f->pl[2];
            c->rd_rewound = f->pl[2];
            c->st.retries++;
            c->rd_news_ns = now_ns();
            int rc = rd_stream(c);
            if (rc != GMC_OK)
                return rc;
        }
        if (f->pl[1] != GMC_LINK_OP_DMA_RD_DATA && f->pl[1] != GMC_LINK_OP_DMA_WR_RESP) {
            c->got_err = 1;
            c->err = *f;
        }
        return GMC_OK;
    default:
        if ((f->op & GMC_LINK_REPLY_FLAG) && f->op == (c->want_op | GMC_LINK_REPLY_FLAG) && f->len >= 1) {
            if (c->want_seqd && f->pl[f->len - 1] != c->want_seq)
                return GMC_OK; /* a stale reply of an earlier attempt */
            c->got_reply = 1;
            c->reply = *f;
        }
        return GMC_OK;
    }
}

/* Take bytes from the port for up to timeout_ms and handle every whole
 * frame. Returns GMC_OK (also when nothing came) or a link status. */
static int pump(struct uart_ctx *c, int timeout_ms)
{
    if (c->dead)
        return GMC_E_UART_UNPLUGGED;
    struct pollfd pfd = { c->fd, POLLIN, 0 };
    int pr = poll(&pfd, 1, timeout_ms);
    if (pr > 0 && (pfd.revents & (POLLERR | POLLNVAL))) {
        c->dead = 1;
        return GMC_E_UART_UNPLUGGED;
    }
    if (pr > 0) {
        ssize_t n = read(c->fd, c->rx + c->rxn, RX_CAP - c->rxn);
        if (n < 0 && (errno == EIO || errno == ENXIO || errno == ENODEV)) {
            c->dead = 1;
            return GMC_E_UART_UNPLUGGED;
        }
        if (n == 0 && (pfd.revents & POLLHUP)) {
            c->dead = 1;
            return GMC_E_UART_UNPLUGGED;
        }
        if (n > 0) {
            c->rxn += (size_t)n;
            c->st.bytes_rx += (uint64_t)n;
        }
    }
    size_t i = 0;
    while (i < c->rxn) {
        if (c->rx[i] != GMC_LINK_SYNC) {
            i++;
            continue;
        }
        if (c->rxn - i < 3)
            break;
        uint8_t len = c->rx[i + 2];
        if (len > GMC_LINK_MAX_LEN) {
            c->st.crc_errors++;
            i++;
            continue;
        }
        if (c->rxn - i < (size_t)len + 4u)
            break;
        uint8_t crc = 0;
        for (size_t k = 1; k < (size_t)len + 4u; k++)
            crc = crc8(crc, c->rx[i + k]);
        if (crc != 0) {
            c->st.crc_errors++;
            i++;
            continue;
        }
        struct frame f;
        f.op = c->rx[i + 1];
        f.len = len;
        memcpy(f.pl, c->rx + i + 3, len);
        i += (size_t)len + 4u;
        int rc = handle(c, &f);
        if (rc != GMC_OK) {
            memmove(c->rx, c->rx + i, c->rxn - i);
            c->rxn -= i;
            return rc;
        }
    }
    memmove(c->rx, c->rx + i, c->rxn - i);
    c->rxn -= i;
    if (c->rxn == RX_CAP) /* only noise without a frame: drop it */
        c->rxn = 0;
    return GMC_OK;
}

/* ------------------------------------------------------------ commands */

/* Per attempt: the frame's wire time both ways plus USB latency. */
static int reply_timeout_ms(const struct uart_ctx *c)
{
    return 100 + (int)(4000000ull / (c->baud ? c->baud : 1));
}

static int ping(struct uart_ctx *c, struct frame *out, int attempts);

/* Stay quiet past the bridge's receive timeout, then PING until echoed. */
static int resync(struct uart_ctx *c)
{
    c->st.resyncs++;
    uint64_t end = now_ns() + RESYNC_QUIET_MS * 1000000ull;
    while (now_ns() < end) {
        int rc = pump(c, 2);
        if (rc != GMC_OK)
            return rc;
    }
    struct frame f;
    return ping(c, &f, 4);
}

static int ping(struct uart_ctx *c, struct frame *out, int attempts)
{
    for (int a = 0; a < attempts; a++) {
        uint8_t nonce = ++c->nonce;
        c->want_op = GMC_LINK_OP_PING;
        c->want_seqd = 0;
        c->got_reply = 0;
        c->got_err = 0;
        int rc = send_frame(c, GMC_LINK_OP_PING, &nonce, 1);
        if (rc != GMC_OK)
            return rc;
        uint64_t end = now_ns() + (uint64_t)reply_timeout_ms(c) * 1000000ull;
        while (now_ns() < end) {
            rc = pump(c, 2);
            if (rc != GMC_OK)
                return rc;
            if (c->got_reply && c->reply.len >= 2 && c->reply.pl[0] == nonce) {
                *out = c->reply;
                c->want_op = 0;
                return GMC_OK;
            }
            if (c->got_err)
                break;
        }
        c->st.retries++;
        /* Quiet past the receive timeout before the next try. */
        end = now_ns() + RESYNC_QUIET_MS * 1000000ull;
        while (now_ns() < end) {
            rc = pump(c, 2);
            if (rc != GMC_OK)
                return rc;
        }
    }
    c->want_op = 0;
    return GMC_E_UART_NO_ANSWER;
}

/* A DMA burst that went quiet: ask the bridge where it stands. */
static int check_stalls(struct uart_ctx *c)
{
    uint64_t t = now_ns();
    int rd_stall = c->rd_unconfirmed && c->rd_sent > c->rd_len && t - c->rd_news_ns > STALL_MS * 1000000ull;
    int wr_stall = c->wr_active && c->wr_resp_sent && t - c->wr_news_ns > STALL_MS * 1000000ull;
    if (!rd_stall && !wr_stall)
        return GMC_OK;
    struct frame f;
    int rc = ping(c, &f, 8);
    if (rc != GMC_OK)
        return rc;
    if (f.len < 5)
        return GMC_OK;
    uint8_t status = f.pl[2];
    c->irq_level = status & GMC_LINK_ST_IRQ;
    if (c->rd_unconfirmed) {
        if (!(status & GMC_LINK_ST_DMA_RD)) {
            c->rd_unconfirmed = 0;
            c->rd_active = 0;
        } else if (f.pl[4] <= c->rd_len && f.pl[4] < c->rd_sent && rd_stall &&
                   (int)f.pl[4] == c->rd_ping_beat) {
            /* No progress across a whole check period (beats may still be
             * on their way: only a beat that stays expected is resent). */
            c->rd_sent = f.pl[4];
            c->rd_rewound = f.pl[4];
            c->st.retries++;
            rc = rd_stream(c);
        }
        c->rd_ping_beat = (status & GMC_LINK_ST_DMA_RD) ? (int)f.pl[4] : -1;
        c->rd_news_ns = now_ns();
    }
    if (c->wr_active && c->wr_resp_sent) {
        if (!(status & GMC_LINK_ST_DMA_WR)) {
            c->wr_active = 0;
        } else if (wr_stall && c->wr_seen_waiting) {
            c->st.retries++;
            rc = send_frame(c, GMC_LINK_OP_DMA_WR_RESP, &c->wr_resp, 1);
        }
        c->wr_seen_waiting = (status & GMC_LINK_ST_DMA_WR) != 0;
        c->wr_news_ns = now_ns();
    }
    return rc;
}

/* Send command op (payload without SEQ), wait for its reply. */
static int command(struct uart_ctx *c, uint8_t op, const uint8_t *pl, uint8_t len, struct frame *reply)
{
    if (c->dead)
        return GMC_E_UART_UNPLUGGED;
    int rc = check_stalls(c);
    if (rc != GMC_OK)
        return rc;
    uint8_t buf[16];
    memcpy(buf, pl, len);
    uint8_t seq = (uint8_t)(c->seq + 1u);
    buf[len] = seq;
    c->st.commands++;
    for (int a = 0; a < MAX_ATTEMPTS; a++) {
        c->want_op = op;
        c->want_seq = seq;
        c->want_seqd = 1;
        c->got_reply = 0;
        c->got_err = 0;
        rc = send_frame(c, op, buf, (uint8_t)(len + 1u));
        if (rc != GMC_OK)
            return rc;
        uint64_t end = now_ns() + (uint64_t)reply_timeout_ms(c) * 1000000ull;
        int silent = 1;
        while (now_ns() < end) {
            rc = pump(c, 2);
            if (rc != GMC_OK)
                return rc;
            if (c->got_reply) {
                *reply = c->reply;
                c->seq = seq;
                c->want_op = 0;
                return GMC_OK;
            }
            if (c->got_err) {
                silent = 0;
                break;
            }
        }
        c->st.retries++;
        if (c->got_err && c->err.pl[0] == GMC_LINK_E_BUSY) {
            /* The bridge is still answering: give it the reply's time. */
            rc = pump(c, 5);
        } else if (silent || c->got_err) {
            rc = resync(c);
        }
        if (rc != GMC_OK)
            return rc;
    }
    c->want_op = 0;
    return GMC_E_UART_NO_ANSWER;
}

/* ----------------------------------------------------------- operations */

static int uart_read32(void *ctx, uint32_t off, uint32_t *val)
{
    struct uart_ctx *c = ctx;
    struct frame r;
    *val = 0;
    if (off > 0xFFFFu)
        return GMC_E_INVALID_ARG;
    uint8_t pl[2] = { (uint8_t)off, (uint8_t)(off >> 8) };
    int rc = command(c, GMC_LINK_OP_REG_RD, pl, 2, &r);
    if (rc != GMC_OK)
        return rc;
    if (r.len != GMC_LINK_RLEN_REG_RD || r.pl[0] != 0)
        return GMC_E_BUS;
    *val = (uint32_t)r.pl[1] | (uint32_t)r.pl[2] << 8 | (uint32_t)r.pl[3] << 16 | (uint32_t)r.pl[4] << 24;
    return GMC_OK;
}

static int uart_write32(void *ctx, uint32_t off, uint32_t val)
{
    struct uart_ctx *c = ctx;
    struct frame r;
    if (off > 0xFFFFu)
        return GMC_E_INVALID_ARG;
    uint8_t pl[7] = { (uint8_t)off, (uint8_t)(off >> 8), (uint8_t)val, (uint8_t)(val >> 8),
                      (uint8_t)(val >> 16), (uint8_t)(val >> 24), 0x0F };
    int rc = command(c, GMC_LINK_OP_REG_WR, pl, 7, &r);
    if (rc != GMC_OK)
        return rc;
    return (r.len == GMC_LINK_RLEN_REG_WR && r.pl[0] == 0) ? GMC_OK : GMC_E_BUS;
}

static int uart_aperture_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    struct uart_ctx *c = ctx;
    uint8_t *out = buf;
    size_t done = 0;
    while (done < len) {
        uint64_t a = off + done;
        uint64_t w = a & ~7ull;
        size_t lane = (size_t)(a - w);
        size_t n = 8u - lane < len - done ? 8u - lane : len - done;
        if (w > 0xFFFFFFFFull) {
            memset(buf, 0, len);
            return GMC_E_BUS;
        }
        uint8_t pl[4] = { (uint8_t)w, (uint8_t)(w >> 8), (uint8_t)(w >> 16), (uint8_t)(w >> 24) };
        struct frame r;
        int rc = command(c, GMC_LINK_OP_AP_RD, pl, 4, &r);
        if (rc == GMC_OK && (r.len != GMC_LINK_RLEN_AP_RD || r.pl[0] != 0))
            rc = GMC_E_BUS;
        if (rc != GMC_OK) {
            memset(buf, 0, len);
            return rc;
        }
        memcpy(out + done, r.pl + 1 + lane, n);
        done += n;
    }
    return GMC_OK;
}

static int uart_aperture_write(void *ctx, uint64_t off, const void *buf, size_t len)
{
    struct uart_ctx *c = ctx;
    const uint8_t *in = buf;
    size_t done = 0;
    while (done < len) {
        uint64_t a = off + done;
        uint64_t w = a & ~7ull;
        size_t lane = (size_t)(a - w);
        size_t n = 8u - lane < len - done ? 8u - lane : len - done;
        if (w > 0xFFFFFFFFull)
            return GMC_E_BUS;
        uint8_t pl[13] = { (uint8_t)w, (uint8_t)(w >> 8), (uint8_t)(w >> 16), (uint8_t)(w >> 24),
                           (uint8_t)(((1u << n) - 1u) << lane) };
        memcpy(pl + 5 + lane, in + done, n);
        struct frame r;
        int rc = command(c, GMC_LINK_OP_AP_WR, pl, 13, &r);
        if (rc != GMC_OK)
            return rc;
        if (r.len != GMC_LINK_RLEN_AP_WR || r.pl[0] != 0)
            return GMC_E_BUS;
        done += n;
    }
    return GMC_OK;
}

static int uart_host_map(void *ctx, uint64_t bus, void *ptr, size_t len)
{
    struct uart_ctx *c = ctx;
    if (ptr == NULL || len == 0 || bus + len < bus)
        return GMC_E_INVALID_ARG;
    for (unsigned i = 0; i < c->nmap; i++) {
        const struct region *r = &c->map[i];
        if (bus < r->bus + r->len && r->bus < bus + len)
            return GMC_E_IN_USE;
    }
    if (c->nmap == c->capmap) {
        unsigned cap = c->capmap ? 2u * c->capmap : 8u;
        struct region *m = realloc(c->map, cap * sizeof(*m));
        if (m == NULL)
            return GMC_E_NO_MEMORY;
        c->map = m;
        c->capmap = cap;
    }
    c->map[c->nmap++] = (struct region){ bus, ptr, len };
    return GMC_OK;
}

static int uart_host_unmap(void *ctx, uint64_t bus)
{
    struct uart_ctx *c = ctx;
    for (unsigned i = 0; i < c->nmap; i++) {
        if (c->map[i].bus == bus) {
            c->map[i] = c->map[--c->nmap];
            return GMC_OK;
        }
    }
    return GMC_E_NOT_FOUND;
}

static int uart_irq(void *ctx)
{
    struct uart_ctx *c = ctx;
    int rc = pump(c, 0);
    if (rc == GMC_OK)
        rc = check_stalls(c);
    return rc != GMC_OK ? rc : c->irq_level;
}

/* The board's free-running cycle counter (CYCLE_LO, 32 bits on the
 * boards), extended to 64 bits across wraps: time on the board's clock,
 * exact under the board simulation and wall time on hardware. A failed
 * read keeps the last value. */
static uint64_t board_cycles(struct uart_ctx *c)
{
    uint32_t lo = 0;
    if (uart_read32(c, GMC_REG_CYCLE_LO, &lo) == GMC_OK) {
        if (lo < c->cyc_last_lo)
            c->cyc_hi += 1ull << 32;
        c->cyc_last_lo = lo;
    }
    uint64_t now = c->cyc_hi | c->cyc_last_lo;
    return now >= c->cyc_t0 ? now - c->cyc_t0 : 0;
}

static int uart_wait(void *ctx, uint64_t cycles, int until_irq, uint64_t *ran)
{
    struct uart_ctx *c = ctx;
    if (ran == NULL)
        return GMC_E_NULL_POINTER;
    *ran = 0;
    uint64_t start = board_cycles(c);
    uint64_t done = 0;
    int rc = GMC_OK;
    while (done < cycles && !(until_irq && c->irq_level)) {
        /* Sleep on the link for the wall time the rest would take at the
         * board clock (1 .. 20 ms), serving DMA frames meanwhile. */
        uint64_t ms = (cycles - done) * 1000u / BOARD_HZ;
        rc = pump(c, ms < 1 ? 1 : ms > 20 ? 20 : (int)ms);
        if (rc == GMC_OK)
            rc = check_stalls(c);
        if (rc != GMC_OK)
            break;
        if (c->dead)
            break;
        done = board_cycles(c) - start;
    }
    *ran = rc == GMC_OK ? (done < cycles ? done : cycles) : 0;
    return c->dead ? GMC_E_UART_UNPLUGGED : rc;
}

static uint64_t uart_cycles(void *ctx)
{
    return board_cycles(ctx);
}

/* --------------------------------------------------------------- open */

static int errno_status(int e)
{
    switch (e) {
    case ENOENT:
    case ENOTDIR:
    case ENXIO:
    case ENODEV:
        return GMC_E_UART_NO_PORT;
    case EACCES:
    case EPERM:
        return GMC_E_UART_PERMISSION;
    case EBUSY:
    case EWOULDBLOCK:
        return GMC_E_UART_PORT_BUSY;
    case EIO:
        return GMC_E_UART_UNPLUGGED;
    default:
        return GMC_E_IO;
    }
}

/* FTDI's USB latency timer (16 ms by default) to 1 ms, where sysfs has it. */
static int set_latency(const char *path, struct gmc_uart_stats *st)
{
    const char *name = strrchr(path, '/');
    char p[GMC_DEVSTR_PATH_MAX + 64];
    snprintf(p, sizeof p, "/sys/class/tty/%s/device/latency_timer", name ? name + 1 : path);
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        st->latency_ms = -1; /* no such file: not an FTDI port, or not writable */
        return 0;
    }
    int ok = write(fd, "1", 1) == 1;
    close(fd);
    st->latency_ms = ok ? 1 : -1;
    return 0;
}

static int uart_open(const struct gmc_devspec *spec, void **out)
{
    *out = NULL;
    struct uart_ctx *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return GMC_E_NO_MEMORY;
    snprintf(c->path, sizeof c->path, "%s", spec->tty);
    c->baud = spec->baud ? spec->baud : 3000000u;
    c->rd_rewound = -1;
    c->rd_ping_beat = -1;
    c->fd = open(c->path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (c->fd < 0) {
        int rc = errno_status(errno);
        free(c);
        return rc;
    }
    int rc = GMC_OK;
    struct termios2 t;
    if (ioctl(c->fd, TCGETS2, &t) != 0) {
        rc = errno == ENOTTY ? GMC_E_UART_NOT_BRIDGE : errno_status(errno);
        goto fail;
    }
    if (flock(c->fd, LOCK_EX | LOCK_NB) != 0) {
        rc = GMC_E_UART_PORT_BUSY;
        goto fail;
    }
    if (ioctl(c->fd, TIOCEXCL) != 0) {
        rc = errno_status(errno);
        goto fail;
    }
    /* Raw 8N1, no flow control, any rate (BOTHER). */
    t.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXOFF | IXANY);
    t.c_oflag &= ~(tcflag_t)OPOST;
    t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
    t.c_cflag &= ~(tcflag_t)(CSIZE | PARENB | CSTOPB | CRTSCTS | CBAUD);
    t.c_cflag |= CS8 | CREAD | CLOCAL | BOTHER;
    t.c_ispeed = c->baud;
    t.c_ospeed = c->baud;
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    if (ioctl(c->fd, TCSETS2, &t) != 0) {
        rc = errno == EINVAL ? GMC_E_UART_RATE : errno_status(errno);
        goto fail;
    }
    ioctl(c->fd, TCFLSH, TCIOFLUSH);
    set_latency(c->path, &c->st);
    c->t0_ns = now_ns();
    c->nonce = (uint8_t)(c->t0_ns >> 10);

    /* Who answers? Quiet first (a half-sent frame of an earlier host ends
     * in the bridge's receive timeout), then PING. */
    uint64_t end = now_ns() + RESYNC_QUIET_MS * 1000000ull;
    while (now_ns() < end && rc == GMC_OK)
        rc = pump(c, 2);
    c->rxn = 0;
    struct frame f;
    if (rc == GMC_OK)
        rc = ping(c, &f, 3);
    if (rc == GMC_E_UART_NO_ANSWER)
        rc = GMC_E_UART_NOT_BRIDGE;
    if (rc != GMC_OK)
        goto fail;
    if (f.len < 2 || f.pl[1] != GMC_LINK_VERSION || f.len != GMC_LINK_RLEN_PING) {
        rc = GMC_E_UART_PROTOCOL;
        goto fail;
    }
    c->irq_level = f.pl[2] & GMC_LINK_ST_IRQ;
    c->seq = f.pl[3]; /* the next command's SEQ is never a repeat */
    uint32_t id = 0;
    rc = uart_read32(c, GMC_REG_ID, &id);
    if (rc == GMC_OK && id != GMC_ID)
        rc = GMC_E_UART_NOT_BRIDGE;
    if (rc != GMC_OK)
        goto fail;
    c->cyc_t0 = 0;
    c->cyc_t0 = board_cycles(c);
    c->st.opened = 1;
    *out = c;
    return GMC_OK;
fail:
    close(c->fd);
    free(c);
    return rc;
}

static void uart_close(void *ctx)
{
    struct uart_ctx *c = ctx;
    if (c == NULL)
        return;
    close(c->fd);
    free(c->map);
    free(c);
}

int gmc_backend_uart_stats(void *ctx, struct gmc_uart_stats *out)
{
    const struct uart_ctx *c = ctx;
    if (c == NULL || out == NULL)
        return GMC_E_NULL_POINTER;
    *out = c->st;
    return GMC_OK;
}

/* iCE40 board behind the serial bridge (docs/uart-bridge.md). The board
 * has no power states and no reset line the bridge could pull. */
const struct gmc_backend_ops gmc_backend_uart = {
    .name = "uart",
    .open = uart_open,
    .close = uart_close,
    .read32 = uart_read32,
    .write32 = uart_write32,
    .aperture_read = uart_aperture_read,
    .aperture_write = uart_aperture_write,
    .host_map = uart_host_map,
    .host_unmap = uart_host_unmap,
    .irq = uart_irq,
    .wait = uart_wait,
    .cycles = uart_cycles,
    .power = NULL,
    .reset = NULL,
};
