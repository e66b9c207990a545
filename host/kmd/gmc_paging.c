/*
 * gmc_paging.c - the paging queue on the gmc DMA engine (see
 * gmc_paging.h, docs/paging.md). Its system memory (ring, paging buffers,
 * fence page, and every gmc_sysmem_* buffer) comes from one gmc_pool
 * (gmc_pool.c).
 *
 * DOC: Overview
 *
 * The queue: every buffer ends with a SIGNAL (the last packet of a buffer is
 * kept for it), so a buffer is free again once that fence has completed,
 * and the ring never holds more INDIRECTs than there are buffers. Fences
 * and notify slots live in one page; the engine writes a fence's value
 * there after all earlier writes, so reading host memory is enough to see
 * progress. Waiting lets device time pass through the backend's wait(),
 * until the IRQ line rises (use_irq) or in short polling slices.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gmc_paging.h"
#include "gmc_pkt.h"
#include "gmc_regs.h"
#include "gmc_status.h"

#define NOTIFY_SLOTS 256u
#define NOTIFY_OFF 512u          /* notify slots after the fence word, same page */
#define POLL_SLICE 64u           /* cycles between looks at the fence page (polling) */
#define STATUS_EVERY 4u          /* polling slices between DMA_STATUS reads */
#define IDLE_CYCLES 100000u      /* bound on the engine going idle (init, reset, fini) */
#define DMA_IRQS (GMC_IRQ_DMA_FENCE_MASK | GMC_IRQ_DMA_FAULT_MASK)

/* ------------------------------------------------------------ structures */

struct pbuf_slot {
    struct gmc_pbuf b;
    uint64_t fence; /* fence of its last SIGNAL: free once completed */
};

struct notify_ent {
    uint64_t cookie, fence;
    int resident;
};

struct gmc_paging {
    struct gmc_kmd *kmd;
    const struct gmc_backend_ops *be;
    void *ctx;
    struct gmc_paging_config cfg;
    struct gmc_paging_target tgt;

    /* system memory: the ring, buffers and fence page, and gmc_sysmem_* */
    struct gmc_pool pool;

    /* engine memory */
    struct gmc_sysbuf ring, pbmem, fencepg, dummy;
    uint32_t ring_bytes, tail, head;

    struct pbuf_slot *pbs;
    int cur;        /* buffer being filled, -1 none */
    uint64_t cur_first; /* first fence value the current buffer signals */
    uint32_t next;  /* next buffer to take */

    uint64_t issued;   /* last fence handed out */
    uint64_t floor;    /* fences up to this are complete (reset) */

    struct notify_ent log[NOTIFY_SLOTS];
    uint64_t n_head, n_tail; /* sequence numbers: next to issue, oldest pending (from 1) */
    gmc_paging_notify_fn notify_fn;
    void *notify_user;
    int in_notify;

    int have_fault;
    struct gmc_paging_fault fault;
    struct gmc_paging_stats st;
};

/* ---------------------------------------------------------------- helpers */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void put_le64(uint8_t *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static int rd(struct gmc_paging *pg, uint32_t off, uint32_t *v)
{
    return pg->be->read32(pg->ctx, off, v);
}

static int wr(struct gmc_paging *pg, uint32_t off, uint32_t v)
{
    return pg->be->write32(pg->ctx, off, v);
}

static int rd64(struct gmc_paging *pg, uint32_t lo, uint64_t *v)
{
    return gmc_kmd_read64(pg->kmd, lo, v);
}

static uint64_t round_pages(uint64_t bytes)
{
    return (bytes + GMC_PAGE_SIZE - 1u) & ~(uint64_t)(GMC_PAGE_SIZE - 1u);
}

/* ---------------------------------------------------------- system memory */

/* The pool is gmc_pool.c; these hand callers the queue's own pool. */

int gmc_sysmem_alloc(struct gmc_paging *pg, uint64_t bytes, struct gmc_sysbuf *out)
{
    return gmc_pool_alloc(pg != NULL ? &pg->pool : NULL, bytes, out);
}

int gmc_sysmem_wrap(struct gmc_paging *pg, void *ptr, uint64_t bytes, struct gmc_sysbuf *out)
{
    return gmc_pool_wrap(pg != NULL ? &pg->pool : NULL, ptr, bytes, out);
}

void gmc_sysmem_free(struct gmc_paging *pg, struct gmc_sysbuf *b)
{
    gmc_pool_free(pg != NULL ? &pg->pool : NULL, b);
}

/* -------------------------------------------------------------- the queue */

void gmc_paging_config_default(struct gmc_paging_config *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof(*cfg));
    cfg->buffer_bytes = 4096u;
    cfg->buffers = 8u;
    cfg->ring_log2 = 12u;
    cfg->max_chunk = 64u * 1024u;
    cfg->pool_chunk = 4u << 20;
    cfg->bus_base = 1ull << 32;
    cfg->use_irq = 1;
    cfg->queue_timeout = 1ull << 24;
}

static int config_ok(const struct gmc_paging_config *c)
{
    if (c->buffer_bytes < 64u || c->buffer_bytes % GMC_PKT_BYTES != 0 || c->buffer_bytes > (1u << 24))
        return 0;
    if (c->ring_log2 < 12u || c->ring_log2 > 20u)
        return 0;
    if (c->buffers < 2u || c->buffers >= (1u << c->ring_log2) / GMC_PKT_BYTES - 1u)
        return 0;
    if ((uint64_t)c->buffers * c->buffer_bytes > (1ull << 32))
        return 0;
    if (c->max_chunk < GMC_PAGE_SIZE || c->max_chunk % GMC_PAGE_SIZE != 0 || c->max_chunk > 0xFFFFF000ull)
        return 0;
    if (c->pool_chunk < GMC_PAGE_SIZE || c->pool_chunk % GMC_PAGE_SIZE != 0 || c->pool_chunk > (1ull << 40))
        return 0;
    if (c->bus_base % GMC_PAGE_SIZE != 0 || c->bus_base >= GMC_POOL_BUS_LIMIT - (1ull << 24))
        return 0;
    if ((c->use_irq != 0 && c->use_irq != 1) || c->queue_timeout == 0)
        return 0;
    return 1;
}

uint64_t gmc_paging_completed(struct gmc_paging *pg)
{
    if (pg == NULL)
        return 0;
    const uint64_t v = get_le64(pg->fencepg.host);
    return v > pg->floor ? v : pg->floor;
}

uint64_t gmc_paging_last_issued(const struct gmc_paging *pg)
{
    return pg != NULL ? pg->issued : 0;
}

static uint8_t *notify_slot(struct gmc_paging *pg, uint64_t seq)
{
    return pg->fencepg.host + NOTIFY_OFF + 8u * (seq % NOTIFY_SLOTS);
}

static uint64_t notify_word(uint64_t seq, int resident)
{
    return seq << 1 | (resident != 0);
}

static void deliver(struct gmc_paging *pg, uint64_t upto)
{
    pg->in_notify = 1;
    while (pg->n_tail < pg->n_head) {
        const struct notify_ent *e = &pg->log[pg->n_tail % NOTIFY_SLOTS];
        if (e->fence > upto)
            break;
        pg->n_tail++;
        pg->st.notifies++;
        if (pg->notify_fn != NULL)
            pg->notify_fn(pg->notify_user, e->cookie, e->resident);
    }
    pg->in_notify = 0;
}

static int read_fault(struct gmc_paging *pg)
{
    uint32_t code = 0;
    struct gmc_paging_fault f = {0, 0, 0, 0};
    int rc = rd(pg, GMC_REG_DMA_FAULT_CODE, &code);
    if (rc == GMC_OK)
        rc = rd64(pg, GMC_REG_DMA_FAULT_PKT_LO, &f.packet);
    if (rc == GMC_OK)
        rc = rd64(pg, GMC_REG_DMA_FAULT_ADDR_LO, &f.address);
    if (rc != GMC_OK)
        return rc;
    f.code = (code & GMC_DMA_FAULT_CODE_CODE_MASK) >> GMC_DMA_FAULT_CODE_CODE_LSB;
    f.indirect = (code & GMC_DMA_FAULT_CODE_INDIRECT_MASK) != 0;
    pg->fault = f;
    pg->have_fault = 1;
    return GMC_OK;
}

static int engine_state(struct gmc_paging *pg, uint32_t *state)
{
    uint32_t s = 0;
    int rc = rd(pg, GMC_REG_DMA_STATUS, &s);
    *state = (s & GMC_DMA_STATUS_STATE_MASK) >> GMC_DMA_STATUS_STATE_LSB;
    return rc;
}

static int faulted(struct gmc_paging *pg)
{
    int rc = read_fault(pg);
    pg->st.faults++;
    return rc != GMC_OK ? rc : GMC_E_FAULT;
}

/* Wait for `fence` (already submitted), at most `timeout` device cycles. */
static int wait_fence(struct gmc_paging *pg, uint64_t fence, uint64_t timeout)
{
    const uint64_t start = pg->be->cycles(pg->ctx);
    unsigned slices = 0;
    pg->st.waits++;
    for (;;) {
        const uint64_t done = gmc_paging_completed(pg);
        deliver(pg, done);
        if (done >= fence) {
            /* The fence's interrupt (if it is still pending) is consumed. */
            if (pg->cfg.use_irq && pg->be->irq(pg->ctx) == 1) {
                uint32_t pend = 0;
                int rc = rd(pg, GMC_REG_IRQ_STATUS, &pend);
                if (rc == GMC_OK && (pend & GMC_IRQ_DMA_FENCE_MASK))
                    rc = wr(pg, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FENCE_MASK);
                return rc;
            }
            return GMC_OK;
        }
        if (!pg->cfg.use_irq && ++slices % STATUS_EVERY == 0) {
            uint32_t state;
            int rc = engine_state(pg, &state);
            if (rc != GMC_OK)
                return rc;
            if (state == GMC_DMA_STATE_FAULTED)
                return faulted(pg);
        }
        const uint64_t elapsed = pg->be->cycles(pg->ctx) - start;
        if (elapsed >= timeout) {
            /* A last look: the fault may have come with the deadline. */
            uint32_t state;
            int rc = engine_state(pg, &state);
            if (rc != GMC_OK)
                return rc;
            if (state == GMC_DMA_STATE_FAULTED)
                return faulted(pg);
            pg->st.timeouts++;
            return GMC_E_TIMEOUT;
        }
        uint64_t slice = timeout - elapsed, ran = 0;
        int until_irq = pg->cfg.use_irq;
        if (!until_irq && slice > POLL_SLICE)
            slice = POLL_SLICE;
        int rc = pg->be->wait(pg->ctx, slice, until_irq, &ran);
        if (rc != GMC_OK)
            return rc;
        if (until_irq && pg->be->irq(pg->ctx) == 1) {
            uint32_t pend = 0;
            rc = rd(pg, GMC_REG_IRQ_STATUS, &pend);
            if (rc != GMC_OK)
                return rc;
            if (pend & GMC_IRQ_DMA_FAULT_MASK) {
                uint32_t state;
                rc = engine_state(pg, &state);
                if (rc != GMC_OK)
                    return rc;
                if (state == GMC_DMA_STATE_FAULTED)
                    return faulted(pg);
                /* A fault already recovered from: acknowledge it. */
                rc = wr(pg, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FAULT_MASK);
            } else if (pend & GMC_IRQ_DMA_FENCE_MASK) {
                pg->st.irq_waits++;
                rc = wr(pg, GMC_REG_IRQ_ACK, GMC_IRQ_DMA_FENCE_MASK);
            } else {
                /* Another source holds the line: let a slice pass polling. */
                rc = pg->be->wait(pg->ctx, POLL_SLICE, 0, &ran);
            }
            if (rc != GMC_OK)
                return rc;
        }
    }
}

static int ring_put(struct gmc_paging *pg, const struct gmc_pkt *p)
{
    const uint32_t mask = pg->ring_bytes - 1u;
    const uint64_t start = pg->be->cycles(pg->ctx);
    /* The host never fills the last slot. */
    while (((pg->tail - pg->head) & mask) + 2u * GMC_PKT_BYTES > pg->ring_bytes) {
        int rc = rd(pg, GMC_REG_DMA_RING_HEAD, &pg->head);
        if (rc != GMC_OK)
            return rc;
        if (((pg->tail - pg->head) & mask) + 2u * GMC_PKT_BYTES <= pg->ring_bytes)
            break;
        if (pg->be->cycles(pg->ctx) - start >= pg->cfg.queue_timeout) {
            pg->st.timeouts++;
            return GMC_E_TIMEOUT;
        }
        uint64_t ran;
        rc = pg->be->wait(pg->ctx, POLL_SLICE, 0, &ran);
        if (rc != GMC_OK)
            return rc;
    }
    gmc_pkt_store(pg->ring.host + pg->tail, p);
    pg->tail = (pg->tail + GMC_PKT_BYTES) & mask;
    return wr(pg, GMC_REG_DMA_RING_TAIL, pg->tail);
}

/* Submit the current buffer (which ends with a SIGNAL) as an INDIRECT. */
static int submit(struct gmc_paging *pg)
{
    if (pg->cur < 0)
        return GMC_OK;
    struct pbuf_slot *s = &pg->pbs[pg->cur];
    pg->cur = -1;
    if (s->b.used == 0)
        return GMC_OK;
    const struct gmc_pkt p = gmc_pkt_indirect(s->b.bus, s->b.used);
    pg->st.buffers++;
    return ring_put(pg, &p);
}

/* Make the next buffer current, waiting until its last fence completed. */
static int acquire(struct gmc_paging *pg, uint64_t *wait_ns)
{
    struct pbuf_slot *s = &pg->pbs[pg->next];
    if (s->fence > gmc_paging_completed(pg)) {
        const uint64_t t0 = now_ns();
        int rc = wait_fence(pg, s->fence, pg->cfg.queue_timeout);
        *wait_ns += now_ns() - t0;
        if (rc != GMC_OK)
            return rc;
    }
    s->b.used = 0;
    s->fence = 0;
    pg->cur = (int)pg->next;
    pg->cur_first = pg->issued + 1u;
    pg->next = (pg->next + 1u) % pg->cfg.buffers;
    return GMC_OK;
}

/* Append a SIGNAL of a new fence value to the current buffer (room is kept). */
static void signal_new(struct gmc_paging *pg)
{
    struct pbuf_slot *s = &pg->pbs[pg->cur];
    struct gmc_paging_args a;
    memset(&a, 0, sizeof(a));
    a.op = GMC_PAGING_SIGNAL;
    a.u.signal.value = ++pg->issued;
    a.u.signal.irq = pg->cfg.use_irq;
    gmc_build_paging_buffer(&pg->tgt, &s->b, &a);
    s->fence = pg->issued;
    pg->st.packets++;
}

int gmc_paging_flush(struct gmc_paging *pg)
{
    if (pg == NULL)
        return GMC_E_NULL_POINTER;
    if (pg->in_notify)
        return GMC_E_BUSY;
    const uint64_t t0 = now_ns();
    int rc = submit(pg);
    pg->st.build_ns += now_ns() - t0;
    return rc;
}

int gmc_paging_queue(struct gmc_paging *pg, const struct gmc_paging_args *args, uint64_t *fence)
{
    if (fence != NULL)
        *fence = 0;
    if (pg == NULL || args == NULL)
        return GMC_E_NULL_POINTER;
    if (pg->in_notify)
        return GMC_E_BUSY;
    if (args->op == GMC_PAGING_SIGNAL || args->multipass_offset != 0)
        return GMC_E_INVALID_ARG;
    struct gmc_paging_target t = pg->tgt;
    struct gmc_paging_args a = *args;
    t.notify_bus = pg->fencepg.bus + NOTIFY_OFF + 8u * (pg->n_head % NOTIFY_SLOTS);
    t.notify_seq = pg->n_head;
    int rc = gmc_paging_args_check(&t, &a);
    if (rc != GMC_OK)
        return rc;

    const uint64_t t0 = now_ns();
    uint64_t wait_ns = 0;
    if (a.op == GMC_PAGING_NOTIFY_RESIDENCY && pg->n_head - pg->n_tail == NOTIFY_SLOTS) {
        /* Every slot in flight: the oldest must complete first. */
        rc = submit(pg);
        if (rc == GMC_OK) {
            const uint64_t w0 = now_ns();
            rc = wait_fence(pg, pg->log[pg->n_tail % NOTIFY_SLOTS].fence, pg->cfg.queue_timeout);
            wait_ns += now_ns() - w0;
        }
        if (rc != GMC_OK) {
            pg->st.build_ns += now_ns() - t0 - wait_ns;
            return rc;
        }
    }
    if (a.op == GMC_PAGING_NOTIFY_RESIDENCY)
        put_le64(notify_slot(pg, pg->n_head), 0);

    for (;;) {
        if (pg->cur < 0 && (rc = acquire(pg, &wait_ns)) != GMC_OK)
            break;
        struct pbuf_slot *s = &pg->pbs[pg->cur];
        /* Build into all but the last packet, which is kept for a SIGNAL. */
        struct gmc_pbuf view = s->b;
        view.size -= GMC_PKT_BYTES;
        if (view.used > view.size) {
            rc = submit(pg);
            if (rc != GMC_OK)
                break;
            continue;
        }
        const uint32_t before = view.used;
        rc = gmc_build_paging_buffer(&t, &view, &a);
        s->b.used = view.used;
        pg->st.packets += (view.used - before) / GMC_PKT_BYTES;
        if (rc == GMC_OK) {
            signal_new(pg);
            break;
        }
        if (rc != GMC_E_BUFFER_FULL)
            break; /* not reached: the arguments were checked */
        if (view.used > before) {
            /* The op continues in another buffer: close this one. */
            pg->st.multipass++;
            signal_new(pg);
        }
        rc = submit(pg);
        if (rc != GMC_OK)
            break;
    }
    if (rc == GMC_OK) {
        if (a.op == GMC_PAGING_NOTIFY_RESIDENCY) {
            struct notify_ent *e = &pg->log[pg->n_head % NOTIFY_SLOTS];
            e->cookie = a.u.notify.cookie;
            e->resident = a.u.notify.resident != 0;
            e->fence = pg->issued;
            pg->n_head++;
        }
        pg->st.ops++;
        if (fence != NULL)
            *fence = pg->issued;
    }
    pg->st.build_ns += now_ns() - t0 - wait_ns;
    return rc;
}

int gmc_paging_wait(struct gmc_paging *pg, uint64_t fence, uint64_t timeout_cycles)
{
    if (pg == NULL)
        return GMC_E_NULL_POINTER;
    if (pg->in_notify)
        return GMC_E_BUSY;
    if (fence > pg->issued)
        return GMC_E_INVALID_ARG;
    int rc = GMC_OK;
    /* Submit the current buffer only when it holds the fence. */
    if (pg->cur >= 0 && fence >= pg->cur_first && fence > gmc_paging_completed(pg))
        rc = gmc_paging_flush(pg);
    if (rc == GMC_OK)
        rc = wait_fence(pg, fence, timeout_cycles);
    return rc;
}

int gmc_paging_idle(struct gmc_paging *pg, uint64_t timeout_cycles)
{
    if (pg == NULL)
        return GMC_E_NULL_POINTER;
    return gmc_paging_wait(pg, pg->issued, timeout_cycles);
}

int gmc_paging_read_result(struct gmc_paging *pg, uint64_t *value)
{
    if (value != NULL)
        *value = 0;
    if (pg == NULL || value == NULL)
        return GMC_E_NULL_POINTER;
    return rd64(pg, GMC_REG_DMA_READ_RESULT_LO, value);
}

int gmc_paging_fault(struct gmc_paging *pg, struct gmc_paging_fault *out)
{
    if (out != NULL)
        memset(out, 0, sizeof(*out));
    if (pg == NULL || out == NULL)
        return GMC_E_NULL_POINTER;
    uint32_t state;
    int rc = engine_state(pg, &state);
    if (rc == GMC_OK && state == GMC_DMA_STATE_FAULTED)
        rc = read_fault(pg);
    if (rc != GMC_OK)
        return rc;
    if (pg->have_fault)
        *out = pg->fault;
    return GMC_OK;
}

void gmc_paging_set_notify(struct gmc_paging *pg, gmc_paging_notify_fn fn, void *user)
{
    if (pg == NULL || pg->in_notify)
        return;
    pg->notify_fn = fn;
    pg->notify_user = user;
}

void gmc_paging_get_stats(const struct gmc_paging *pg, struct gmc_paging_stats *out)
{
    if (out == NULL)
        return;
    if (pg == NULL) {
        memset(out, 0, sizeof(*out));
        return;
    }
    *out = pg->st;
}

static int program(struct gmc_paging *pg);

/* Wait (bounded) for DMA_STATUS.STATE to leave busy. */
static int engine_settle(struct gmc_paging *pg, uint32_t *state)
{
    const uint64_t start = pg->be->cycles(pg->ctx);
    for (;;) {
        int rc = engine_state(pg, state);
        if (rc != GMC_OK || *state != GMC_DMA_STATE_BUSY)
            return rc;
        if (pg->be->cycles(pg->ctx) - start >= IDLE_CYCLES)
            return GMC_E_TIMEOUT;
        uint64_t ran;
        rc = pg->be->wait(pg->ctx, POLL_SLICE, 0, &ran);
        if (rc != GMC_OK)
            return rc;
    }
}

/* Abort whatever the engine does and restart the ring empty at `tail`. */
static int engine_restart(struct gmc_paging *pg)
{
    uint32_t state;
    int rc = wr(pg, GMC_REG_DMA_CTRL, 0);
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_DMA_CMD, GMC_DMA_CMD_RESET_MASK);
    if (rc == GMC_OK)
        rc = engine_settle(pg, &state);
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_IRQ_ACK, DMA_IRQS);
    if (rc == GMC_OK)
        rc = rd(pg, GMC_REG_DMA_RING_HEAD, &pg->head);
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_DMA_CTRL, GMC_DMA_CTRL_ENABLE_MASK);
    return rc;
}

/* Fences up to `lost` were submitted to an engine that has been aborted:
 * those that did not arrive never will. Notifications the engine reached
 * (their slot holds their word) are delivered, the rest up to `lost`
 * dropped; the fences count as completed from now on. */
static void retire(struct gmc_paging *pg, uint64_t lost)
{
    const uint64_t done = gmc_paging_completed(pg);
    uint64_t reached = done;
    for (uint64_t q = pg->n_tail; q < pg->n_head; q++) {
        const struct notify_ent *e = &pg->log[q % NOTIFY_SLOTS];
        if (e->fence > lost ||
            (e->fence > done && get_le64(notify_slot(pg, q)) != notify_word(q, e->resident)))
            break;
        reached = e->fence > reached ? e->fence : reached;
    }
    deliver(pg, reached);
    while (pg->n_tail < pg->n_head && pg->log[pg->n_tail % NOTIFY_SLOTS].fence <= lost) pg->n_tail++;
    if (lost > pg->floor)
        pg->floor = lost;
    for (uint32_t i = 0; i < pg->cfg.buffers; i++)
        if ((int)i != pg->cur)
            pg->pbs[i].fence = 0;
}

int gmc_paging_reset(struct gmc_paging *pg, uint64_t *completed)
{
    if (completed != NULL)
        *completed = 0;
    if (pg == NULL)
        return GMC_E_NULL_POINTER;
    if (pg->in_notify)
        return GMC_E_BUSY;
    int rc = engine_restart(pg);
    if (rc != GMC_OK)
        return rc;
    const uint64_t done = gmc_paging_completed(pg);
    pg->cur = -1; /* the buffer being filled is dropped too */
    retire(pg, pg->issued);
    pg->st.resets++;
    if (completed != NULL)
        *completed = done;
    return GMC_OK;
}

int gmc_paging_restart(struct gmc_paging *pg)
{
    if (pg == NULL)
        return GMC_E_NULL_POINTER;
    if (pg->in_notify)
        return GMC_E_BUSY;
    int rc = program(pg);
    if (rc != GMC_OK)
        return rc;
    /* Whatever was submitted went with the controller's reset; the buffer
     * being filled was not submitted and stays. */
    retire(pg, pg->cur >= 0 ? pg->cur_first - 1u : pg->issued);
    return GMC_OK;
}

int gmc_paging_pt_range(struct gmc_paging *pg, uint64_t *base, uint64_t *size)
{
    if (base != NULL)
        *base = 0;
    if (size != NULL)
        *size = 0;
    if (pg == NULL || base == NULL || size == NULL)
        return GMC_E_NULL_POINTER;
    uint32_t pt = 0;
    int rc = rd(pg, GMC_REG_PT_BASE, &pt);
    if (rc != GMC_OK)
        return rc;
    *base = pt & GMC_PT_BASE_ADDR_MASK;
    *size = round_pages(pg->tgt.aperture_pages * 8u); /* whole pages, as a purge takes them */
    return GMC_OK;
}

static int program(struct gmc_paging *pg)
{
    uint32_t mask = 0, state = 0;
    int rc = rd(pg, GMC_REG_IRQ_MASK, &mask);
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_IRQ_ACK, DMA_IRQS);
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_IRQ_MASK, pg->cfg.use_irq ? mask | DMA_IRQS : mask & ~(uint32_t)DMA_IRQS);
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_DUMMY_PAGE_LO, (uint32_t)pg->dummy.bus & GMC_DUMMY_PAGE_LO_ADDR_MASK);
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_DUMMY_PAGE_HI, (uint32_t)(pg->dummy.bus >> 32) & GMC_DUMMY_PAGE_HI_ADDR_MASK);
    /* docs/dma.md: stop, wait for idle, place the ring, HEAD := TAIL, start. */
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_DMA_CTRL, 0);
    if (rc == GMC_OK)
        rc = engine_settle(pg, &state);
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_DMA_RING_BASE_LO, (uint32_t)pg->ring.bus & GMC_DMA_RING_BASE_LO_ADDR_MASK);
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_DMA_RING_BASE_HI, (uint32_t)(pg->ring.bus >> 32) & GMC_DMA_RING_BASE_HI_ADDR_MASK);
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_DMA_RING_SIZE, pg->cfg.ring_log2);
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_DMA_RING_TAIL, 0);
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_DMA_CMD, GMC_DMA_CMD_RESET_MASK);
    if (rc == GMC_OK)
        rc = wr(pg, GMC_REG_DMA_CTRL, GMC_DMA_CTRL_ENABLE_MASK);
    pg->tail = 0;
    pg->head = 0;
    return rc;
}

static void release_all(struct gmc_paging *pg)
{
    gmc_pool_fini(&pg->pool);
    free(pg->pbs);
    free(pg);
}

int gmc_paging_init(struct gmc_kmd *kmd, const struct gmc_adapter_info *ai,
                    const struct gmc_paging_config *cfg, struct gmc_paging **out)
{
    if (out != NULL)
        *out = NULL;
    if (kmd == NULL || ai == NULL || out == NULL || kmd->be == NULL)
        return GMC_E_NULL_POINTER;
    struct gmc_paging_config c;
    if (cfg != NULL)
        c = *cfg;
    else
        gmc_paging_config_default(&c);
    if (!config_ok(&c))
        return GMC_E_INVALID_ARG;
    if (!(ai->caps & GMC_CAPS_DMA_MASK) || ai->page_size != GMC_PAGE_SIZE || kmd->be->wait == NULL ||
        kmd->be->cycles == NULL)
        return GMC_E_UNSUPPORTED;
    if (ai->vram_size > (1ull << 32) || ai->aperture_base % GMC_PAGE_SIZE != 0 || ai->aperture_base > (1ull << 32) ||
        ai->aperture_pages > ((1ull << 32) - ai->aperture_base) / GMC_PAGE_SIZE)
        return GMC_E_UNSUPPORTED;

    struct gmc_paging *pg = calloc(1, sizeof(*pg));
    if (pg == NULL)
        return GMC_E_NO_MEMORY;
    pg->pbs = calloc(c.buffers, sizeof(*pg->pbs));
    if (pg->pbs == NULL) {
        free(pg);
        return GMC_E_NO_MEMORY;
    }
    pg->kmd = kmd;
    pg->be = kmd->be;
    pg->ctx = kmd->be_ctx;
    pg->cfg = c;
    pg->cur = -1;
    pg->n_head = pg->n_tail = 1;
    gmc_pool_init(&pg->pool, pg->be, pg->ctx, c.bus_base, c.pool_chunk);

    pg->ring_bytes = 1u << c.ring_log2;
    int rc = gmc_sysmem_alloc(pg, pg->ring_bytes, &pg->ring);
    if (rc == GMC_OK)
        rc = gmc_sysmem_alloc(pg, (uint64_t)c.buffers * c.buffer_bytes, &pg->pbmem);
    if (rc == GMC_OK)
        rc = gmc_sysmem_alloc(pg, GMC_PAGE_SIZE, &pg->fencepg);
    if (rc == GMC_OK)
        rc = gmc_sysmem_alloc(pg, GMC_PAGE_SIZE, &pg->dummy);
    if (rc == GMC_OK)
        rc = program(pg);
    if (rc != GMC_OK) {
        release_all(pg);
        return rc;
    }
    for (uint32_t i = 0; i < c.buffers; i++) {
        pg->pbs[i].b.host = pg->pbmem.host + (size_t)i * c.buffer_bytes;
        pg->pbs[i].b.bus = pg->pbmem.bus + (uint64_t)i * c.buffer_bytes;
        pg->pbs[i].b.size = c.buffer_bytes;
    }
    pg->tgt.vram_size = ai->vram_size;
    pg->tgt.aperture_base = ai->aperture_base;
    pg->tgt.aperture_pages = ai->aperture_pages;
    pg->tgt.max_chunk = c.max_chunk;
    pg->tgt.fence_bus = pg->fencepg.bus;
    *out = pg;
    return GMC_OK;
}

void gmc_paging_fini(struct gmc_paging *pg)
{
    if (pg == NULL)
        return;
    uint32_t mask = 0;
    wr(pg, GMC_REG_DMA_CTRL, 0);
    wr(pg, GMC_REG_DMA_CMD, GMC_DMA_CMD_RESET_MASK);
    if (rd(pg, GMC_REG_IRQ_MASK, &mask) == GMC_OK)
        wr(pg, GMC_REG_IRQ_MASK, mask & ~(uint32_t)DMA_IRQS);
    wr(pg, GMC_REG_IRQ_ACK, DMA_IRQS);
    release_all(pg);
}
