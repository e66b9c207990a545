/*
 * gmc_backend_uart.c - the backend on an iCE40 board behind the UART
 * bridge (docs/uart-bridge.md), or on gmc-board-sim behind a pty.
 *
 * DOC: Overview
 *
 * One serial port carries everything. A command (REG_RD, REG_WR, AP_RD,
 * AP_WR, PING, DMA_ABORT) is sent and its reply awaited; while it waits,
 * every other frame that arrives is handled at once: IRQ levels, and the
 * controller's DMA bursts, which are served from the host memory
 * registered with host_map (read beats are streamed back without waiting
 * for each other; write beats are gathered and stored when the burst is
 * whole, so a burst that breaks or lies outside the map touches nothing).
 *
 * A frame damaged on the wire is detected by its CRC or length and the
 * command is sent again; after a silence or an answer that cannot be
 * placed, the link is resynchronised (quiet for longer than the bridge's
 * receive timeout, then PING with a fresh nonce until it comes back, which
 * also drains stale replies) before the command is repeated. Every retry
 * is counted (gmc_backend_uart_stats()).
 *
 * Device time is the board's own cycle counter (CYCLE_LO, extended to 64
 * bits here), so timeouts are in the board's cycles on a real board and
 * on the simulation alike.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <asm/ioctls.h>
#include <asm/termbits.h>

#include "gmc.h"
#include "gmc_backend.h"
#include "gmc_backend_uart.h"
#include "gmc_bridge.h"
#include "gmc_devstr.h"
#include "gmc_regs.h"
#include "gmc_status.h"

/* <sys/ioctl.h> clashes with <asm/termbits.h> (termios2 needs the latter). */
int ioctl(int fd, unsigned long request, ...);

#define MAX_MAPS 64u
#define RX_CAP 16384u
/* Milliseconds: one command's answer; the quiet time before a resync (the
 * bridge's receive timeout is 2^17 cycles, 11 ms at 12 MHz); an open's probe. */
#define REPLY_MS 150
#define QUIET_MS 15
#define PROBE_MS 150
/* After a damaged frame while a reply is awaited, wait this much more. */
#define DAMAGE_MS 20
/* The board counts as not answering when no whole frame has come from it
 * for DEAD_MS (on a loaded host a simulated board can lag by seconds),
 * and a command has been tried at least MAX_TRIES times. */
#define MAX_TRIES 12
#define DEAD_MS 5000
/* A DMA burst quiet for this long (ms) is probed (see pump()); a
 * DMA_REQ_AGAIN not answered is sent again after as long. */
#define PROBE_QUIET_MS 20
/* Directions of DMA_REQ_AGAIN, as bits of uart.ask. */
#define ASK_RD (1u << GMC_BRIDGE_DIR_READ)
#define ASK_WR (1u << GMC_BRIDGE_DIR_WRITE)
/* No board clock is faster (kHz): bounds the cycle counter's advance
 * between two reads, to tell a board reset from a wrap (read_cycles()). */
#define MAX_CLOCK_KHZ 200000u

enum { RESP_OKAY = 0, RESP_SLVERR = 2, RESP_DECERR = 3 };

struct map {
    uint64_t bus;
    uint8_t *ptr;
    size_t len;
};

struct uart {
    int fd;
    uint8_t rx[RX_CAP];
    size_t rn;
    struct map maps[MAX_MAPS];
    unsigned nmaps;
    int irq;
    int dead;          /* a gmc status once the port failed for good */
    uint8_t nonce;
    uint8_t seq;       /* SEQ of the last command sent (protocol 2) */
    /* the command awaiting its reply */
    uint8_t want_op;   /* reply opcode, 0 = none */
    uint8_t want_seq;  /* its SEQ (PING: the nonce) */
    int got;           /* 1 reply, 2 ERR for it (not executed), 3 BUSY */
    uint64_t damage_ms;  /* the last damaged frame received, 0 none */
    uint8_t reply[GMC_BRIDGE_MAX_LEN];
    /* Protocol 3: directions whose request frame may have been lost (a
     * damaged frame came up): DMA_REQ_AGAIN is sent for them until the
     * bridge answers with the request or ERR(STATE) (no burst). */
    unsigned ask;
    unsigned asked;        /* of those, the ones DMA_REQ_AGAIN has been sent for */
    unsigned ask_damage;   /* of those, the ones a damaged frame asked for */
    uint64_t ask_ms;
    /* Protocol 3: a DMA request outside host memory, per direction, held
     * until DMA_REQ_AGAIN brings the same 11 bytes again (then its burst
     * is refused) or anything else (then it was a damaged frame that
     * passed the CRC, and is dropped). */
    uint8_t held_req[2][GMC_BRIDGE_LEN_DMA_RD_REQ];
    unsigned held;         /* directions (ASK_RD, ASK_WR) with a request held */
    uint64_t partial_ms;   /* since when an incomplete frame waits in rx, 0 none */
    unsigned ack_every;    /* DMA_WR_ACK every so many write beats: a quarter of the window */
    /* DMA read burst */
    struct {
        int active;
        uint64_t addr;
        unsigned len, size, burst, next;
        uint8_t tag;
        uint8_t resp;      /* OKAY, or DECERR: the burst was outside host memory at its request */
        int done;          /* the bridge said the burst is over (ERR STATE) */
        uint64_t last_ms;  /* last beat sent or ERR taken */
        int rewound;       /* beat of the last rewind, -1 none since the last probe */
    } rd;
    /* DMA write burst */
    struct {
        int valid;         /* a burst with this TAG has been seen */
        int active;        /* its beats are being gathered */
        uint64_t addr;
        unsigned len, size, burst, next;
        unsigned acked;    /* the last DMA_WR_ACK sent (beats below it) */
        int rewound;       /* beat of the last resend asked, -1 none */
        uint64_t last_ms;  /* last beat taken, or resend asked */
        uint8_t resp;
        uint8_t tag;
        int unconfirmed;   /* DMA_WR_RESP sent, not yet known to be taken */
        uint64_t resp_ms;
        uint8_t data[256][8];
        uint8_t strb[256];
    } wr;
    /* cycle counter extension */
    uint32_t cyc_raw;
    uint64_t cyc;
    uint64_t cyc_ms;  /* when cyc_raw was read (0: not yet) */
    uint64_t t0_ms;
    uint64_t last_frame_ms;  /* the last whole frame received */
    struct gmc_link_stats st;
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint8_t crc8(uint8_t crc, uint8_t b)
{
    crc ^= b;
    for (int i = 0; i < 8; i++)
        crc = (crc & 0x80u) ? (uint8_t)((crc << 1) ^ 0x07u) : (uint8_t)(crc << 1);
    return crc;
}

static int up_len(uint8_t op)
{
    switch (op) {
    case GMC_BRIDGE_OP_REG_RD_REPLY: return GMC_BRIDGE_LEN_REG_RD_REPLY;
    case GMC_BRIDGE_OP_REG_WR_REPLY: return GMC_BRIDGE_LEN_REG_WR_REPLY;
    case GMC_BRIDGE_OP_AP_RD_REPLY: return GMC_BRIDGE_LEN_AP_RD_REPLY;
    case GMC_BRIDGE_OP_AP_WR_REPLY: return GMC_BRIDGE_LEN_AP_WR_REPLY;
    case GMC_BRIDGE_OP_PING_REPLY: return GMC_BRIDGE_LEN_PING_REPLY;
    case GMC_BRIDGE_OP_DMA_ABORT_REPLY: return GMC_BRIDGE_LEN_DMA_ABORT_REPLY;
    case GMC_BRIDGE_OP_DMA_RD_REQ: return GMC_BRIDGE_LEN_DMA_RD_REQ;
    case GMC_BRIDGE_OP_DMA_WR_REQ: return GMC_BRIDGE_LEN_DMA_WR_REQ;
    case GMC_BRIDGE_OP_DMA_WR_DATA: return GMC_BRIDGE_LEN_DMA_WR_DATA;
    case GMC_BRIDGE_OP_IRQ: return GMC_BRIDGE_LEN_IRQ;
    case GMC_BRIDGE_OP_ERR: return GMC_BRIDGE_LEN_ERR;
    default: return -1;
    }
}

static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8u * i);
    return v;
}

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8u * i));
}

/* ------------------------------------------------------------- raw I/O */

static int io_error(struct uart *u, int err)
{
    (void)err;
    u->dead = GMC_E_UART_UNPLUGGED;
    return u->dead;
}

static int send_bytes(struct uart *u, const uint8_t *b, size_t n)
{
    if (u->dead)
        return u->dead;
    while (n > 0) {
        ssize_t w = write(u->fd, b, n);
        if (w > 0) {
            b += w;
            n -= (size_t)w;
            u->st.bytes_tx += (uint64_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            struct pollfd p = { u->fd, POLLOUT, 0 };
            int r = poll(&p, 1, 1000);
            if (r == 0)
                return GMC_E_UART_NO_ANSWER;
            if (r > 0 && (p.revents & (POLLERR | POLLHUP)))
                return io_error(u, EIO);
            continue;
        }
        return io_error(u, errno);
    }
    return GMC_OK;
}

static int send_frame(struct uart *u, uint8_t op, const uint8_t *pl, unsigned len)
{
    uint8_t f[4 + GMC_BRIDGE_MAX_LEN];
    uint8_t c = crc8(crc8(0, op), (uint8_t)len);
    f[0] = GMC_BRIDGE_SYNC;
    f[1] = op;
    f[2] = (uint8_t)len;
    for (unsigned i = 0; i < len; i++) {
        f[3 + i] = pl[i];
        c = crc8(c, pl[i]);
    }
    f[3 + len] = c;
    u->st.frames_tx++;
    return send_bytes(u, f, 4u + len);
}

/* Wait up to ms for bytes; append them to the receive buffer. */
static int fill(struct uart *u, int ms)
{
    if (u->dead)
        return u->dead;
    if (u->rn == RX_CAP)
        return GMC_OK;
    struct pollfd p = { u->fd, POLLIN, 0 };
    int r = poll(&p, 1, ms);
    if (r < 0)
        return errno == EINTR ? GMC_OK : io_error(u, errno);
    if (r == 0)
        return GMC_OK;
    if (p.revents & POLLIN) {
        ssize_t n = read(u->fd, u->rx + u->rn, RX_CAP - u->rn);
        if (n > 0) {
            u->rn += (size_t)n;
            u->st.bytes_rx += (uint64_t)n;
            return GMC_OK;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            return io_error(u, n == 0 ? EIO : errno);
        return GMC_OK;
    }
    if (p.revents & (POLLERR | POLLHUP | POLLNVAL))
        return io_error(u, EIO);
    return GMC_OK;
}

/* ------------------------------------------------------------ host memory */

static const struct map *find_map(const struct uart *u, uint64_t bus, uint64_t len)
{
    for (unsigned i = 0; i < u->nmaps; i++) {
        const struct map *m = &u->maps[i];
        if (bus >= m->bus && len <= m->len && bus - m->bus <= m->len - len)
            return m;
    }
    return NULL;
}

/* Address of beat i of an AXI burst (INCR, FIXED or WRAP). */
static uint64_t beat_addr(uint64_t a, unsigned i, unsigned size, unsigned burst, unsigned len)
{
    const uint64_t n = 1ull << size;
    if (burst == 0)
        return a;
    if (burst == 2) {
        const uint64_t wrap = n * (len + 1u);
        const uint64_t base = a & ~(wrap - 1u);
        return base + ((a + i * n) & (wrap - 1u));
    }
    uint64_t first = a;
    if (i == 0)
        return first;
    return (a & ~(n - 1u)) + i * n;
}

/* The lanes beat i of a burst covers, and whether they are all mapped. */
static unsigned beat_lanes(uint64_t addr, unsigned size)
{
    const unsigned n = 1u << size;
    const unsigned lo = (unsigned)(addr & 7u);
    const unsigned hi = (unsigned)((addr & ~(uint64_t)(n - 1u)) & 7u) + n;
    unsigned m = 0;
    for (unsigned i = lo; i < hi && i < 8u; i++)
        m |= 1u << i;
    return m;
}

static int burst_mapped(const struct uart *u, uint64_t a, unsigned len, unsigned size, unsigned burst)
{
    if (size > 3u || burst > 2u)
        return 0;
    for (unsigned i = 0; i <= len; i++) {
        uint64_t b = beat_addr(a, i, size, burst, len);
        unsigned lanes = beat_lanes(b, size);
        for (unsigned l = 0; l < 8u; l++) {
            if ((lanes >> l & 1u) && find_map(u, (b & ~7ull) + l, 1) == NULL)
                return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------------ DMA */

static int send_rd_beat(struct uart *u, unsigned i)
{
    uint8_t pl[GMC_BRIDGE_LEN_DMA_RD_DATA];
    memset(pl, 0, sizeof pl);
    pl[0] = (uint8_t)i;
    pl[10] = u->rd.tag;
    uint64_t b = beat_addr(u->rd.addr, i, u->rd.size, u->rd.burst, u->rd.len);
    /* Refused (and counted) once, at the request. A beat sent again after
     * the memory was unmapped (the quiet probe of a burst that is over, its
     * buffer freed since) carries DECERR too, and is no burst refused. */
    if (u->rd.resp != RESP_OKAY || !burst_mapped(u, u->rd.addr, u->rd.len, u->rd.size, u->rd.burst)) {
        pl[1] = RESP_DECERR;
    } else {
        unsigned lanes = beat_lanes(b, u->rd.size);
        for (unsigned l = 0; l < 8u; l++) {
            if (lanes >> l & 1u) {
                const struct map *m = find_map(u, (b & ~7ull) + l, 1);
                pl[2 + l] = m->ptr[(b & ~7ull) + l - m->bus];
            }
        }
    }
    u->st.dma_rd_beats++;
    u->rd.last_ms = now_ms();
    return send_frame(u, GMC_BRIDGE_OP_DMA_RD_DATA, pl, sizeof pl);
}

/* Stream the read burst's beats from rd.next to the end. */
static int rd_stream(struct uart *u)
{
    while (u->rd.active && u->rd.next <= u->rd.len) {
        int rc = send_rd_beat(u, u->rd.next);
        if (rc != GMC_OK)
            return rc;
        u->rd.next++;
    }
    return GMC_OK;
}

/* DMA_WR_ACK: every beat below `beat` received; RESEND: send again from it. */
static int wr_ack(struct uart *u, unsigned beat, int resend)
{
    const uint8_t pl[3] = { (uint8_t)beat, resend ? GMC_BRIDGE_WR_ACK_RESEND : 0u, u->wr.tag };
    u->wr.acked = beat;
    u->st.wr_acks++;
    return send_frame(u, GMC_BRIDGE_OP_DMA_WR_ACK, pl, sizeof pl);
}

/* Ask for the request frame of a burst in flight (protocol 3): at once
 * after a damaged frame; after PROBE_QUIET_MS when only a STATUS byte
 * hints at a burst we do not know (its request is usually queued behind
 * the ERR or reply that carried the hint, and then cancels the ask). A
 * pending ask is repeated on its own clock. */
static void want_req(struct uart *u, unsigned dirs)
{
    if (u->ask == 0)
        u->ask_ms = 0;
    u->ask |= dirs;
    u->ask_damage |= dirs;
}

static void hint_req(struct uart *u, unsigned dirs)
{
    if (u->ask == 0)
        u->ask_ms = now_ms();
    u->ask |= dirs;
}

static void ask_done(struct uart *u, unsigned dirs)
{
    u->ask &= ~dirs;
    u->asked &= ~dirs;
    u->ask_damage &= ~dirs;
}

/* A new burst's request while we asked because of a damaged frame: counted
 * as learnt again (a request that was only late, after a hint, is not). */
static void count_recovered(struct uart *u, unsigned dir)
{
    if (u->asked & u->ask_damage & dir)
        u->st.req_recovered++;
}

static int wr_finish(struct uart *u)
{
    uint8_t resp = u->wr.resp;
    if (resp == RESP_OKAY) {
        for (unsigned i = 0; i <= u->wr.len; i++) {
            uint64_t b = beat_addr(u->wr.addr, i, u->wr.size, u->wr.burst, u->wr.len) & ~7ull;
            for (unsigned l = 0; l < 8u; l++) {
                if (u->wr.strb[i] >> l & 1u) {
                    const struct map *m = find_map(u, b + l, 1);
                    if (m != NULL)
                        m->ptr[b + l - m->bus] = u->wr.data[i][l];
                }
            }
        }
    }
    u->wr.active = 0;
    u->wr.resp = resp;
    u->wr.unconfirmed = 1;
    u->wr.resp_ms = now_ms();
    const uint8_t pl[2] = { resp, u->wr.tag };
    return send_frame(u, GMC_BRIDGE_OP_DMA_WR_RESP, pl, 2);
}

/* ------------------------------------------------------------ frames */

/* The burst a DMA_RD_REQ or DMA_WR_REQ frame asks for: its address (6
 * bytes), beat count, beat size, burst type and TAG. */
static void req_fields(const uint8_t *p, uint64_t *addr, unsigned *len, unsigned *size, unsigned *burst,
                       uint8_t *tag)
{
    *addr = le(p + 1, 6);
    *len = p[7];
    *size = p[8];
    *burst = p[9] & 3u;
    *tag = p[10];
}

/* The request held for a direction was not the bridge's: dropped. */
static void drop_held(struct uart *u, unsigned dirs)
{
    if (u->held & dirs)
        u->st.stale++;
    u->held &= ~dirs;
}

/* Whether a new burst's request (DMA_RD_REQ or DMA_WR_REQ, payload p) may
 * be taken. One inside host memory is; one outside is held and asked for
 * at once (DMA_REQ_AGAIN), and taken (to be refused: DECERR) only when it
 * comes again byte for byte. A frame with a byte dropped passes the CRC 1
 * time in 256 (docs/uart-bridge.md) and then names a burst the bridge does
 * not have, its address shifted, nearly always outside host memory: the
 * bridge answers the ask with its own request or ERR(STATE), and the
 * damaged copy is dropped instead of being refused as a burst. */
static int req_taken(struct uart *u, unsigned dir, const uint8_t *p)
{
    uint64_t addr;
    unsigned len, size, burst;
    uint8_t tag;
    req_fields(p, &addr, &len, &size, &burst, &tag);
    if (burst_mapped(u, addr, len, size, burst)) {
        drop_held(u, dir);
        return 1;
    }
    if ((u->held & dir) && memcmp(u->held_req[dir >> 1], p, GMC_BRIDGE_LEN_DMA_RD_REQ) == 0) {
        u->held &= ~dir;
        return 1;
    }
    drop_held(u, dir);
    memcpy(u->held_req[dir >> 1], p, GMC_BRIDGE_LEN_DMA_RD_REQ);
    u->held |= dir;
    u->ask |= dir;
    u->ask_ms = 0;
    return 0;
}

/* DMA_RD_REQ: the bridge starts a read burst (or sends one again). */
static int on_dma_rd_req(struct uart *u, const uint8_t *p)
{
    if (u->rd.active && p[10] == u->rd.tag) {
        /* Sent again (DMA_REQ_AGAIN): a burst we know. */
        drop_held(u, ASK_RD);
        ask_done(u, ASK_RD);
        return GMC_OK;
    }
    if (!req_taken(u, ASK_RD, p))
        return GMC_OK;
    count_recovered(u, ASK_RD);
    ask_done(u, ASK_RD);
    u->rd.active = 1;
    req_fields(p, &u->rd.addr, &u->rd.len, &u->rd.size, &u->rd.burst, &u->rd.tag);
    u->rd.resp = burst_mapped(u, u->rd.addr, u->rd.len, u->rd.size, u->rd.burst) ? RESP_OKAY : RESP_DECERR;
    if (u->rd.resp != RESP_OKAY)
        u->st.dma_refused++;
    u->rd.next = 0;
    u->rd.done = 0;
    u->rd.rewound = -1;
    u->rd.last_ms = now_ms();
    u->st.dma_rd_bursts++;
    return rd_stream(u);
}

/* DMA_WR_REQ: the bridge starts a write burst (or sends one again). */
static int on_dma_wr_req(struct uart *u, const uint8_t *p)
{
    if (u->wr.valid && p[10] == u->wr.tag) {
        drop_held(u, ASK_WR);
        ask_done(u, ASK_WR); /* sent again: a burst we know */
        return GMC_OK;
    }
    if (u->wr.active && !(u->asked & ASK_WR)) {
        /* The bridge starts no write burst before we answered the last
         * one: this is a damaged frame that passed the CRC (a byte
         * dropped: the next frame's SYNC taken for the CRC, 1 in 256).
         * Ask the bridge which burst it is on. */
        u->st.stale++;
        want_req(u, ASK_WR);
        return GMC_OK;
    }
    if (!req_taken(u, ASK_WR, p))
        return GMC_OK;
    count_recovered(u, ASK_WR);
    ask_done(u, ASK_WR);
    if (u->wr.active) {
        /* The bridge is on another burst than ours (it was reset or
         * aborted ours, or ours was a damaged frame that passed the
         * CRC): ours is dropped untouched. */
        if (u->wr.next > 0)
            u->st.dma_broken++;
        else
            u->st.stale++;
    }
    u->wr.valid = 1;
    u->wr.active = 1;
    req_fields(p, &u->wr.addr, &u->wr.len, &u->wr.size, &u->wr.burst, &u->wr.tag);
    u->wr.unconfirmed = 0;
    u->wr.next = 0;
    u->wr.acked = 0;
    u->wr.rewound = -1;
    u->wr.last_ms = now_ms();
    u->wr.resp = burst_mapped(u, u->wr.addr, u->wr.len, u->wr.size, u->wr.burst) ? RESP_OKAY : RESP_DECERR;
    if (u->wr.resp != RESP_OKAY)
        u->st.dma_refused++;
    u->st.dma_wr_bursts++;
    return GMC_OK;
}

/* DMA_WR_DATA: one beat of the write burst. */
static int on_dma_wr_data(struct uart *u, const uint8_t *p)
{
    if (!u->wr.valid || p[10] != u->wr.tag) {
        /* A beat of a burst whose DMA_WR_REQ we never got (or hold until
         * it comes again: asked for already). */
        if (!((u->held & ASK_WR) && p[10] == u->held_req[1][10]))
            want_req(u, ASK_WR);
        return GMC_OK;
    }
    if (!u->wr.active || p[0] < u->wr.next || p[0] > u->wr.len)
        return GMC_OK; /* a copy of a beat we have */
    if (p[0] > u->wr.next) {
        /* Beats lost on the way up: the bridge sends again from the
         * first missing one (its window keeps every beat not yet
         * acknowledged). Once per rewind: the beats already on the
         * wire behind the lost one say the same; a resend lost again
         * is found by the quiet probe (pump()). */
        if ((int)u->wr.next > u->wr.rewound) {
            u->wr.rewound = (int)u->wr.next;
            u->wr.last_ms = now_ms();
            u->st.retries++;
            u->st.wr_resends++;
            return wr_ack(u, u->wr.next, 1);
        }
        return GMC_OK;
    }
    memcpy(u->wr.data[p[0]], p + 2, 8);
    u->wr.strb[p[0]] = p[1];
    u->wr.next = p[0] + 1u;
    u->wr.last_ms = now_ms();
    u->st.dma_wr_beats++;
    if (u->wr.next > u->wr.len)
        return wr_finish(u);
    if (u->wr.next - u->wr.acked >= u->ack_every)
        return wr_ack(u, u->wr.next, 0);
    return GMC_OK;
}

/* ERR: the bridge refused a frame, or reports its state. */
static int on_err(struct uart *u, const uint8_t *p)
{
    u->irq = p[3] & GMC_BRIDGE_STATUS_IRQ;
    u->st.err_frames++;
    /* The bridge on a burst we do not know (its TAGs, bytes 4 and 5):
     * its request frame may have been lost; ask for it. */
    if ((p[3] & GMC_BRIDGE_STATUS_DMA_RD) && (!u->rd.active || p[4] != u->rd.tag))
        hint_req(u, ASK_RD);
    if ((p[3] & GMC_BRIDGE_STATUS_DMA_WR) && (!u->wr.valid || p[5] != u->wr.tag))
        hint_req(u, ASK_WR);
    if (p[1] == GMC_BRIDGE_OP_DMA_REQ_AGAIN) {
        if (p[0] == GMC_BRIDGE_ERR_STATE && p[6] <= GMC_BRIDGE_DIR_WRITE) {
            drop_held(u, 1u << p[6]); /* no burst in that direction */
            ask_done(u, 1u << p[6]);
        } else {
            u->ask_ms = 0;           /* damaged: ask again */
        }
        return GMC_OK;
    }
    if (p[1] == GMC_BRIDGE_OP_DMA_WR_ACK) {
        /* STATE or SEQ: an acknowledgement of a burst that is over, or
         * a stale one. Damaged: the quiet probe sends it again now. */
        if (p[0] <= GMC_BRIDGE_ERR_FRAMING && u->wr.active)
            u->wr.last_ms = 0;
        return GMC_OK;
    }
    /* p[2] (the next beat the bridge expects), p[4] and p[5] (its read
     * and write TAGs) are current when the ERR is sent; p[6] is the
     * last byte of the frame refused (its SEQ or TAG). */
    if (p[1] == GMC_BRIDGE_OP_DMA_WR_RESP && p[0] == GMC_BRIDGE_ERR_STATE) {
        /* Our response was refused: the bridge has it already (it is in
         * W_RESP from the last data beat on, until it takes one). */
        if (p[6] == u->wr.tag)
            u->wr.unconfirmed = 0;
        return GMC_OK;
    }
    if (p[1] == GMC_BRIDGE_OP_DMA_RD_DATA && p[0] == GMC_BRIDGE_ERR_STATE) {
        /* A beat of ours refused with no read burst in progress, or the
         * bridge on another burst: ours is over. */
        if (p[6] == u->rd.tag && (p[4] != u->rd.tag || !(p[3] & GMC_BRIDGE_STATUS_DMA_RD)))
            u->rd.done = 1;
        return GMC_OK;
    }
    if (u->want_op != 0 && p[1] == (u->want_op & 0x7Fu) && p[6] == u->want_seq &&
        p[0] != GMC_BRIDGE_ERR_STATE) {
        u->got = p[0] == GMC_BRIDGE_ERR_BUSY ? 3 : 2;
        return GMC_OK;
    }
    if (u->want_op != 0 && p[0] <= GMC_BRIDGE_ERR_FRAMING && p[1] != GMC_BRIDGE_OP_DMA_RD_DATA &&
        p[1] != GMC_BRIDGE_OP_DMA_WR_RESP && p[1] != GMC_BRIDGE_OP_DMA_WR_ACK &&
        p[1] != GMC_BRIDGE_OP_DMA_REQ_AGAIN)
        u->got = 2; /* a damaged frame: perhaps our command, not executed */
    /* A read beat lost or out of order: go on from p[2], the beat the
     * bridge waits for. Only when that is past the last rewind: ERRs
     * for the beats that were on the wire when we rewound say the same
     * beat again and are stale (each would resend the whole tail and
     * the link would fill with copies). A resent beat that is lost too
     * is found by the probe (pump()), which allows the next rewind. */
    if (u->rd.active && !u->rd.done && p[4] == u->rd.tag && p[2] <= u->rd.len &&
        (p[1] == GMC_BRIDGE_OP_DMA_RD_DATA || p[0] <= GMC_BRIDGE_ERR_FRAMING) &&
        (int)p[2] > u->rd.rewound) {
        u->st.retries++;
        u->rd.rewound = p[2];
        u->rd.next = p[2];
        return rd_stream(u);
    }
    /* A damaged frame may have been our DMA_WR_RESP: send it again
     * (refused with STATE if it had arrived). */
    if (u->wr.unconfirmed && p[0] <= GMC_BRIDGE_ERR_FRAMING && (p[3] & GMC_BRIDGE_STATUS_DMA_WR))
        u->wr.resp_ms = 0;
    return GMC_OK;
}

/* A reply: the last byte is the command's SEQ (PING: byte 0, the
 * nonce). Any other is a late copy of an earlier answer. */
static int on_reply(struct uart *u, uint8_t op, const uint8_t *p)
{
    const int n = up_len(op);
    const uint8_t tag = op == GMC_BRIDGE_OP_PING_REPLY ? p[0] : p[n - 1];
    if (u->want_op != 0 && op == u->want_op && tag == u->want_seq) {
        memcpy(u->reply, p, (size_t)n);
        u->got = 1;
    } else {
        u->st.stale++;
    }
    return GMC_OK;
}

/* One whole frame from the bridge. */
static int handle(struct uart *u, uint8_t op, const uint8_t *p, unsigned len)
{
    /* A PING reply of another protocol version (its length differs):
     * byte 0 is still the nonce and byte 1 the version. */
    if (op == GMC_BRIDGE_OP_PING_REPLY && len != GMC_BRIDGE_LEN_PING_REPLY) {
        if (u->want_op == op && p[0] == u->want_seq) {
            u->st.bridge_version = p[1];
            u->got = 4;
        }
        return GMC_OK;
    }
    switch (op) {
    case GMC_BRIDGE_OP_IRQ:
        u->irq = p[0] & 1u;
        u->st.irq_frames++;
        return GMC_OK;
    case GMC_BRIDGE_OP_DMA_RD_REQ:
        return on_dma_rd_req(u, p);
    case GMC_BRIDGE_OP_DMA_WR_REQ:
        return on_dma_wr_req(u, p);
    case GMC_BRIDGE_OP_DMA_WR_DATA:
        return on_dma_wr_data(u, p);
    case GMC_BRIDGE_OP_ERR:
        return on_err(u, p);
    default:
        return on_reply(u, op, p);
    }
}

/* Take every whole frame out of the receive buffer. */
static int parse(struct uart *u)
{
    size_t i = 0;
    int rc = GMC_OK;
    while (rc == GMC_OK && u->rn - i >= 1) {
        const uint8_t *f = u->rx + i;
        size_t left = u->rn - i;
        if (f[0] != GMC_BRIDGE_SYNC) {
            u->st.junk++;
            u->damage_ms = now_ms();
            want_req(u, ASK_RD | ASK_WR); /* what was damaged may have been a DMA request */
            i++;
            continue;
        }
        if (left < 3)
            break;
        int len = up_len(f[1]);
        if (f[1] == GMC_BRIDGE_OP_PING_REPLY && f[2] >= 2u && f[2] <= GMC_BRIDGE_MAX_LEN)
            len = f[2]; /* any version's PING reply, to name the version */
        if (len < 0 || f[2] != (uint8_t)len) {
            u->st.bad_frames++;
            u->damage_ms = now_ms();
            want_req(u, ASK_RD | ASK_WR);
            i++;
            continue;
        }
        if (left < (size_t)len + 4u)
            break;
        uint8_t c = 0;
        for (int k = 1; k < len + 4; k++)
            c = crc8(c, f[k]);
        if (c != 0) {
            u->st.bad_frames++;
            u->damage_ms = now_ms();
            want_req(u, ASK_RD | ASK_WR);
            i++;
            continue;
        }
        u->st.frames_rx++;
        u->partial_ms = 0;
        u->last_frame_ms = now_ms();
        i += (size_t)len + 4u;
        rc = handle(u, f[1], f + 3, (unsigned)len);
    }
    memmove(u->rx, u->rx + i, u->rn - i);
    u->rn -= i;
    /* An incomplete frame left waiting: its end may have been lost (timed
     * in pump()). */
    if (u->rn == 0)
        u->partial_ms = 0;
    else if (u->partial_ms == 0)
        u->partial_ms = now_ms();
    return rc;
}

/* Receive and handle frames for up to ms (0: only what is there). */
static int pump(struct uart *u, int ms)
{
    int rc = fill(u, ms);
    if (rc != GMC_OK)
        return rc;
    rc = parse(u);
    if (rc != GMC_OK)
        return rc;
    /* Whatever was lost without an ERR coming back (a dropped SYNC, an ERR
     * damaged on the way up): after a quiet spell, send the read burst's
     * last beat again (taken if that is what the bridge waits for, else ERR
     * SEQ says where it stands, or STATE that the burst is over; the TAG
     * keeps it out of any other burst), and the write response again. */
    const uint64_t t = now_ms();
    if (u->rd.active && !u->rd.done && t - u->rd.last_ms >= PROBE_QUIET_MS) {
        u->st.probes++;
        u->rd.rewound = -1;
        rc = send_rd_beat(u, u->rd.len);
        if (rc != GMC_OK)
            return rc;
    }
    if (u->wr.unconfirmed && t - u->wr.resp_ms >= PROBE_QUIET_MS) {
        u->wr.resp_ms = t;
        u->st.probes++;
        const uint8_t pl[2] = { u->wr.resp, u->wr.tag };
        rc = send_frame(u, GMC_BRIDGE_OP_DMA_WR_RESP, pl, 2);
        if (rc != GMC_OK)
            return rc;
    }
    /* A write burst quiet for a while (its last beats or our acknowledgement
     * lost, the window full): acknowledge what we have and ask for the rest. */
    if (u->wr.active && t - u->wr.last_ms >= PROBE_QUIET_MS) {
        u->wr.last_ms = t;
        u->wr.rewound = (int)u->wr.next;
        u->st.probes++;
        rc = wr_ack(u, u->wr.next, 1);
        if (rc != GMC_OK)
            return rc;
    }
    /* The end of a frame has not come: perhaps a DMA request's was lost
     * (or the board is only slow: asked after another PROBE_QUIET_MS). */
    if (u->partial_ms != 0 && t - u->partial_ms >= PROBE_QUIET_MS) {
        u->partial_ms = t;
        hint_req(u, ASK_RD | ASK_WR);
    }
    if (u->ask != 0 && (u->ask_ms == 0 || t - u->ask_ms >= PROBE_QUIET_MS)) {
        u->ask_ms = t;
        u->asked = u->ask;
        for (unsigned d = GMC_BRIDGE_DIR_READ; d <= GMC_BRIDGE_DIR_WRITE; d++) {
            if (u->ask & (1u << d)) {
                const uint8_t pl[1] = { (uint8_t)d };
                u->st.req_asks++;
                rc = send_frame(u, GMC_BRIDGE_OP_DMA_REQ_AGAIN, pl, 1);
                if (rc != GMC_OK)
                    return rc;
            }
        }
    }
    return rc;
}

/* ------------------------------------------------------------ commands */

/* A STATUS byte (PING reply) saying a DMA burst is in flight: ask for
 * its request unless we are serving one in that direction. */
static void status_hints(struct uart *u, uint8_t status)
{
    if ((status & GMC_BRIDGE_STATUS_DMA_RD) && (!u->rd.active || u->rd.done))
        hint_req(u, ASK_RD);
    if ((status & GMC_BRIDGE_STATUS_DMA_WR) && !u->wr.active && !u->wr.unconfirmed)
        hint_req(u, ASK_WR);
}

static int resync(struct uart *u)
{
    u->st.resyncs++;
    for (int t = 0; t < MAX_TRIES || now_ms() - u->last_frame_ms < DEAD_MS; t++) {
        /* Quiet for longer than the bridge's receive timeout, serving DMA. */
        uint64_t until = now_ms() + QUIET_MS;
        u->want_op = 0;
        while (now_ms() < until) {
            int rc = pump(u, 2);
            if (rc != GMC_OK)
                return rc;
        }
        uint8_t nonce = ++u->nonce;
        u->want_op = GMC_BRIDGE_OP_PING_REPLY;
        u->want_seq = nonce;
        u->got = 0;
        int rc = send_frame(u, GMC_BRIDGE_OP_PING, &nonce, 1);
        if (rc != GMC_OK)
            return rc;
        until = now_ms() + REPLY_MS;
        while (u->got == 0 && now_ms() < until) {
            rc = pump(u, 5);
            if (rc != GMC_OK)
                return rc;
        }
        if (u->got == 1) {
            u->irq = u->reply[2] & GMC_BRIDGE_STATUS_IRQ;
            status_hints(u, u->reply[2]);
            u->want_op = 0;
            return GMC_OK;
        }
    }
    u->want_op = 0;
    return GMC_E_UART_NO_ANSWER;
}

/* One command and its reply (payload into u->reply). pl has room for the
 * SEQ after its len bytes. Every attempt carries the same SEQ: a command
 * whose reply was lost is answered again by the bridge, not executed again. */
static int xact(struct uart *u, uint8_t op, uint8_t *pl, unsigned len)
{
    if (u->dead)
        return u->dead;
    u->st.commands++;
    pl[len] = ++u->seq;
    for (int t = 0; t < MAX_TRIES || now_ms() - u->last_frame_ms < DEAD_MS; t++) {
        if (t > 0)
            u->st.retries++;
        u->want_op = (uint8_t)(op | 0x80u);
        u->want_seq = pl[len];
        u->got = 0;
        int rc = send_frame(u, op, pl, len + 1u);
        if (rc != GMC_OK)
            return rc;
        uint64_t until = now_ms() + REPLY_MS;
        u->damage_ms = 0;
        while (u->got == 0 && now_ms() < until) {
            rc = pump(u, 2);
            if (rc != GMC_OK)
                return rc;
            /* A damaged frame came: perhaps the reply. Its copy would come
             * right behind it, so wait only DAMAGE_MS more before the
             * resynchronisation (the command is then sent again with its
             * SEQ: executed once). */
            if (u->damage_ms != 0 && u->damage_ms + DAMAGE_MS < until)
                until = u->damage_ms + DAMAGE_MS;
        }
        if (u->got == 1) {
            u->want_op = 0;
            return GMC_OK;
        }
        if (u->got == 2)
            continue; /* not executed: send it again */
        /* No answer, or BUSY: the framing or the command order was lost. */
        u->st.timeouts++;
        rc = resync(u);
        if (rc != GMC_OK)
            return rc;
    }
    u->want_op = 0;
    return GMC_E_UART_NO_ANSWER;
}

static int resp_status(uint8_t r)
{
    return (r & 3u) == RESP_OKAY ? GMC_OK : GMC_E_BUS;
}

static int reg_rd(struct uart *u, uint32_t off, uint32_t *val)
{
    uint8_t pl[3];
    put_le(pl, off, 2);
    *val = 0;
    int rc = xact(u, GMC_BRIDGE_OP_REG_RD, pl, 2);
    if (rc != GMC_OK)
        return rc;
    rc = resp_status(u->reply[0]);
    if (rc == GMC_OK)
        *val = (uint32_t)le(u->reply + 1, 4);
    return rc;
}

/* ------------------------------------------------------------------ ops */

static int uart_read32(void *ctx, uint32_t off, uint32_t *val)
{
    if (off > 0xFFFFu) {
        *val = 0;
        return GMC_E_INVALID_ARG;
    }
    return reg_rd(ctx, off, val);
}

static int uart_write32(void *ctx, uint32_t off, uint32_t val)
{
    struct uart *u = ctx;
    if (off > 0xFFFFu)
        return GMC_E_INVALID_ARG;
    uint8_t pl[8];
    put_le(pl, off, 2);
    put_le(pl + 2, val, 4);
    pl[6] = 0x0F;
    int rc = xact(u, GMC_BRIDGE_OP_REG_WR, pl, 7);
    return rc != GMC_OK ? rc : resp_status(u->reply[0]);
}

static int read_cycles(struct uart *u);

static int uart_aperture_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    struct uart *u = ctx;
    uint8_t *out = buf;
    if (len > 0 && (off > UINT32_MAX || len - 1u > UINT32_MAX - off)) {
        memset(buf, 0, len);
        return GMC_E_INVALID_ARG;
    }
    size_t done = 0;
    while (done < len) {
        uint64_t a = off + done;
        uint64_t base = a & ~7ull;
        unsigned lo = (unsigned)(a - base);
        size_t n = 8u - lo < len - done ? 8u - lo : len - done;
        uint8_t pl[5];
        put_le(pl, base, 4);
        int rc = xact(u, GMC_BRIDGE_OP_AP_RD, pl, 4);
        if (rc == GMC_OK)
            rc = resp_status(u->reply[0]);
        if (rc != GMC_OK) {
            memset(buf, 0, len);
            return rc;
        }
        memcpy(out + done, u->reply + 1 + lo, n);
        done += n;
    }
    /* Bytes read from a board that was reset meanwhile are not the data:
     * look at the cycle counter (read_cycles()) before handing them over. */
    int rc = read_cycles(u);
    if (rc != GMC_OK)
        memset(buf, 0, len);
    return rc;
}

static int uart_aperture_write(void *ctx, uint64_t off, const void *buf, size_t len)
{
    struct uart *u = ctx;
    const uint8_t *in = buf;
    if (len > 0 && (off > UINT32_MAX || len - 1u > UINT32_MAX - off))
        return GMC_E_INVALID_ARG;
    size_t done = 0;
    while (done < len) {
        uint64_t a = off + done;
        uint64_t base = a & ~7ull;
        unsigned lo = (unsigned)(a - base);
        size_t n = 8u - lo < len - done ? 8u - lo : len - done;
        uint8_t pl[14];
        memset(pl, 0, sizeof pl);
        put_le(pl, base, 4);
        for (size_t i = 0; i < n; i++) {
            pl[4] |= (uint8_t)(1u << (lo + i));
            pl[5 + lo + i] = in[done + i];
        }
        int rc = xact(u, GMC_BRIDGE_OP_AP_WR, pl, 13);
        if (rc == GMC_OK)
            rc = resp_status(u->reply[0]);
        if (rc != GMC_OK)
            return rc;
        done += n;
    }
    return GMC_OK;
}

static int uart_host_map(void *ctx, uint64_t bus, void *ptr, size_t len)
{
    struct uart *u = ctx;
    if (ptr == NULL || len == 0 || bus + len < bus || bus + len > (1ull << 48))
        return GMC_E_INVALID_ARG;
    for (unsigned i = 0; i < u->nmaps; i++) {
        const struct map *m = &u->maps[i];
        if (bus < m->bus + m->len && m->bus < bus + len)
            return GMC_E_IN_USE;
    }
    if (u->nmaps == MAX_MAPS)
        return GMC_E_NO_MEMORY;
    u->maps[u->nmaps++] = (struct map){ bus, ptr, len };
    return GMC_OK;
}

static int uart_host_unmap(void *ctx, uint64_t bus)
{
    struct uart *u = ctx;
    for (unsigned i = 0; i < u->nmaps; i++) {
        if (u->maps[i].bus == bus) {
            u->maps[i] = u->maps[--u->nmaps];
            return GMC_OK;
        }
    }
    return GMC_E_NOT_FOUND;
}

static int uart_irq(void *ctx)
{
    struct uart *u = ctx;
    int rc = pump(u, 0);
    if (rc != GMC_OK)
        return rc;
    return u->irq;
}

/* The board's cycle counter, extended to 64 bits (COUNTER_WIDTH 32).
 * A board reset (power cycle, POR) sets it back to 0: an advance that no
 * clock up to MAX_CLOCK_KHZ could have made since the last read is a
 * reset, not a wrap. The session is over then (the controller's state is
 * gone): every later call answers GMC_E_UART_BOARD_RESET; the next open
 * starts afresh. */
static int read_cycles(struct uart *u)
{
    uint32_t raw;
    int rc = reg_rd(u, GMC_REG_CYCLE_LO, &raw);
    if (rc != GMC_OK)
        return rc;
    const uint64_t t = now_ms();
    const uint32_t adv = (uint32_t)(raw - u->cyc_raw);
    if (u->cyc_ms != 0 && adv > (t - u->cyc_ms + 1u) * MAX_CLOCK_KHZ) {
        u->dead = GMC_E_UART_BOARD_RESET;
        return u->dead;
    }
    u->cyc += adv;
    u->cyc_raw = raw;
    u->cyc_ms = t;
    return GMC_OK;
}

static uint64_t uart_cycles(void *ctx)
{
    struct uart *u = ctx;
    (void)read_cycles(u);
    return u->cyc;
}

static int uart_wait(void *ctx, uint64_t cycles, int until_irq, uint64_t *ran)
{
    struct uart *u = ctx;
    if (ran == NULL)
        return GMC_E_NULL_POINTER;
    *ran = 0;
    int rc = read_cycles(u);
    if (rc != GMC_OK)
        return rc;
    const uint64_t start = u->cyc;
    while (u->cyc - start < cycles && !(until_irq && u->irq)) {
        rc = pump(u, until_irq ? 1 : 0);
        if (rc == GMC_OK)
            rc = read_cycles(u);
        if (rc != GMC_OK)
            return rc;
    }
    *ran = u->cyc - start < cycles ? u->cyc - start : cycles;
    return GMC_OK;
}

static int uart_power(void *ctx, int state, const uint64_t *ranges, unsigned n)
{
    (void)ctx;
    (void)state;
    (void)ranges;
    (void)n;
    return GMC_E_UNSUPPORTED;
}

static int uart_reset(void *ctx)
{
    (void)ctx;
    return GMC_E_UNSUPPORTED;
}

/* ------------------------------------------------------------ open/close */

static int open_error(int err)
{
    switch (err) {
    case ENOENT:
    case ENODEV:
    case ENXIO:
    case ENOTDIR:
        return GMC_E_UART_NO_PORT;
    case EACCES:
    case EPERM:
        return GMC_E_UART_PERMISSION;
    case EBUSY:
        return GMC_E_UART_PORT_BUSY;
    case EIO:
        return GMC_E_UART_UNPLUGGED;
    default:
        return GMC_E_IO;
    }
}

static int set_raw(int fd, uint32_t baud)
{
    struct termios2 t;
    if (ioctl(fd, TCGETS2, &t) != 0)
        return GMC_E_UART_NOT_TTY;
    t.c_iflag = 0;
    t.c_oflag = 0;
    t.c_lflag = 0;
    t.c_cflag = CS8 | CREAD | CLOCAL | BOTHER;
    t.c_ispeed = baud;
    t.c_ospeed = baud;
    memset(t.c_cc, 0, sizeof t.c_cc);
    if (ioctl(fd, TCSETS2, &t) != 0)
        return GMC_E_UART_RATE;
    (void)ioctl(fd, TCFLSH, TCIOFLUSH);
    return GMC_OK;
}

/* FTDI's USB latency timer (16 ms by default) to 1 ms where sysfs allows. */
static int set_latency(const char *path)
{
    char *real = realpath(path, NULL);
    const char *base = strrchr(real != NULL ? real : path, '/');
    base = base != NULL ? base + 1 : path;
    char sys[320];
    snprintf(sys, sizeof sys, "/sys/class/tty/%s/device/latency_timer", base);
    free(real);
    int fd = open(sys, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    int ok = write(fd, "1", 1) == 1;
    close(fd);
    return ok ? 1 : -1;
}

/* PING until the nonce comes back; then the register file's identity. */
static int probe(struct uart *u)
{
    for (int t = 0; t < 3; t++) {
        uint8_t nonce = (uint8_t)(0x5Au + 17u * (unsigned)t + (unsigned)(now_ms() & 0x3Fu));
        u->nonce = nonce;
        u->want_op = GMC_BRIDGE_OP_PING_REPLY;
        u->want_seq = nonce;
        u->got = 0;
        int rc = send_frame(u, GMC_BRIDGE_OP_PING, &nonce, 1);
        if (rc != GMC_OK)
            return rc;
        uint64_t until = now_ms() + PROBE_MS;
        while (now_ms() < until) {
            rc = pump(u, 5);
            if (rc != GMC_OK)
                return rc;
            if (u->got == 1 || u->got == 4)
                break;
        }
        u->want_op = 0;
        if (u->got == 4)
            return GMC_E_UART_PROTOCOL;
        if (u->got == 1) {
            u->st.bridge_version = u->reply[1];
            if (u->reply[1] != GMC_BRIDGE_VERSION)
                return GMC_E_UART_PROTOCOL;
            u->irq = u->reply[2] & GMC_BRIDGE_STATUS_IRQ;
            const uint8_t status = u->reply[2];
            /* Start after the bridge's last SEQ: a command of an earlier
             * session is never taken for a repeat. */
            u->seq = u->reply[3];
            /* Acknowledge write beats every quarter of the bridge's window. */
            u->ack_every = u->reply[4] <= 8u && (1u << u->reply[4]) >= 4u ? (1u << u->reply[4]) / 4u : 1u;
            /* A burst left in flight by an earlier session. */
            status_hints(u, u->reply[2]);
            uint32_t id = 0, ver = 0;
            rc = reg_rd(u, GMC_REG_ID, &id);
            if (rc == GMC_OK)
                rc = reg_rd(u, GMC_REG_VERSION, &ver);
            if (rc != GMC_OK)
                return rc == GMC_E_BUS ? GMC_E_UART_NOT_BRIDGE : rc;
            if (id != GMC_REG_ID_RESET)
                return GMC_E_UART_NOT_BRIDGE;
            if ((ver & GMC_VERSION_MAJOR_MASK) >> GMC_VERSION_MAJOR_LSB != GMC_VERSION_MAJOR)
                return GMC_E_VERSION;
            /* An earlier session that ended mid-burst (its host killed)
             * left the bridge waiting for read beats or a write response
             * nobody will send, and the engine cannot be reset until the
             * burst ends: end it (SLVERR; docs/uart-bridge.md). */
            if (status & (GMC_BRIDGE_STATUS_DMA_RD | GMC_BRIDGE_STATUS_DMA_WR)) {
                uint8_t pl[GMC_BRIDGE_LEN_DMA_ABORT];
                rc = xact(u, GMC_BRIDGE_OP_DMA_ABORT, pl, 0);
                if (rc != GMC_OK)
                    return rc;
            }
            /* The counters count since the device was opened (gmc.h), as
             * the pci backend's open clears them: an earlier session's
             * work is not this one's. */
            rc = uart_write32(u, GMC_REG_CNT_CLEAR, 1u);
            if (rc != GMC_OK)
                return rc;
            return read_cycles(u);
        }
        /* Silence or noise: be quiet past the bridge's receive timeout. */
        uint64_t q = now_ms() + QUIET_MS;
        while (now_ms() < q) {
            rc = pump(u, 2);
            if (rc != GMC_OK)
                return rc;
        }
    }
    return u->st.bytes_rx > 0 ? GMC_E_UART_NOT_BRIDGE : GMC_E_UART_NO_ANSWER;
}

static void uart_close(void *ctx)
{
    struct uart *u = ctx;
    if (u == NULL)
        return;
    if (u->fd >= 0) {
        flock(u->fd, LOCK_UN);
        close(u->fd);
    }
    free(u);
}

static int uart_open(const struct gmc_devspec *spec, void **ctx)
{
    *ctx = NULL;
    int fd = open(spec->tty, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return open_error(errno);
    struct uart *u = calloc(1, sizeof *u);
    if (u == NULL) {
        close(fd);
        return GMC_E_NO_MEMORY;
    }
    u->fd = fd;
    u->ack_every = 1;
    int rc = GMC_OK;
    if (!isatty(fd))
        rc = GMC_E_UART_NOT_TTY;
    else if (flock(fd, LOCK_EX | LOCK_NB) != 0)
        rc = errno == EWOULDBLOCK ? GMC_E_UART_PORT_BUSY : GMC_E_IO;
    else if (ioctl(fd, TIOCEXCL) != 0)
        rc = GMC_E_IO;
    if (rc == GMC_OK)
        rc = set_raw(fd, spec->baud != 0 ? spec->baud : GMC_UART_DEFAULT_BAUD);
    if (rc == GMC_OK) {
        u->st.baud = spec->baud != 0 ? spec->baud : GMC_UART_DEFAULT_BAUD;
        u->st.latency_timer = set_latency(spec->tty);
        u->t0_ms = now_ms();
        u->last_frame_ms = 0; /* the open's probe has its own bound */
        rc = probe(u);
    }
    if (rc != GMC_OK) {
        uart_close(u);
        return rc;
    }
    *ctx = u;
    return GMC_OK;
}

static int uart_link_stats(void *ctx, struct gmc_link_stats *out)
{
    const struct uart *u = ctx;
    *out = u->st;
    return GMC_OK;
}

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
    .power = uart_power,
    .reset = uart_reset,
    .link_stats = uart_link_stats,
};
