/*
 * fuzz_api.c - sequences of public API calls decoded from the input, on a
 * fresh simulated device per input.
 *
 * Each step: one byte picks the call, the next bytes its arguments
 * (clients, allocation descriptors with any flags, segments, sizes and
 * alignments, residency, eviction, locks, CPU reads and writes, GPU
 * submissions, fence waits, power transitions, sharing, queries with
 * made-up handles). After every call:
 *   - no crash, no sanitizer report;
 *   - the status is one of spec/status.toml's codes;
 *   - a destroyed allocation's handle is stale: querying, reading or
 *     destroying it again gives GMC_E_BAD_HANDLE, forever (a new
 *     allocation never gets an old handle value);
 *   - an allocation written through gmc_alloc_write and read back with
 *     nothing in between reads back what was written (or, through the
 *     client's own WriteOnly lock, refuses the read with GMC_E_PERMISSION);
 *   - each segment's eviction candidate tree holds exactly the placed
 *     allocations an eviction may take, with current keys, in order.
 * At the end the AXI protocol monitor has seen no violation.
 */
#include <stddef.h>
#include <string.h>

#include "fuzz.h"
#include "gmc.h"
#include "gmc_sim.h"
#include "gmc_test_device.h"
#include "gmc_avl.h"
#include "gmc_cand.h"
#include "gmc_victim.h"
#include "gmc_vidmm.h"

#define MAXC 4
#define MAXH 16
#define MAXSTALE 64
#define MAXSTEPS 48

struct st {
    gmc_device *dev;
    gmc_client *cl[MAXC];
    gmc_handle h[MAXC][MAXH];
    gmc_handle stale[MAXSTALE][2]; /* client index, handle */
    unsigned nstale;
};

static int known(int st)
{
    for (size_t i = 0; i < GMC_STATUS_COUNT; i++)
        if (gmc_status_table[i].code == st)
            return 1;
    return 0;
}

#define KNOWN(call, st) FUZZ_CHECK(known(st), "%s returned unknown status %d", call, st)

static gmc_client *pick_client(struct st *s, struct fuzz_in *in, unsigned *ci)
{
    *ci = fz_below(in, MAXC);
    return s->cl[*ci];
}

/* A live handle slot of client ci, or a made-up value now and then. */
static gmc_handle pick_handle(struct st *s, struct fuzz_in *in, unsigned ci, unsigned *slot)
{
    uint8_t b = fz_u8(in);
    *slot = b % MAXH;
    if (b >= 0xF8)
        return fz_uint(in, 8); /* anything */
    return s->h[ci][*slot];
}

/* Each segment's eviction candidates (gmc_cand.h) are exactly the placed,
 * unreferenced, unpinned, unlocked, not HardwareProtected allocations
 * placed there, with their bytes, in a sound tree. */
static int cand_cmp(const struct gmc_avl_node *x, const struct gmc_avl_node *y)
{
    const struct gmc_valloc *a = (const void *)((const char *)x - offsetof(struct gmc_valloc, cand_node));
    const struct gmc_valloc *b = (const void *)((const char *)y - offsetof(struct gmc_valloc, cand_node));
    return gmc_victim_cmp(&a->key, &b->key);
}

static void check_cands(const struct st *s)
{
    const gmc_device *dev = s->dev;
    for (unsigned g = 0; g < dev->nsegs; g++) {
        size_t n = 0;
        uint64_t bytes = 0;
        for (const struct gmc_valloc *a = dev->allocs; a != NULL; a = a->dnext)
            if (a->node.mgr != NULL && a->seg == g && a->resident == 0u && !(a->state & GMC_ALLOC_STATE_PINNED) &&
                a->locker == NULL && !(a->desc.flags & GMC_ALLOC_HARDWARE_PROTECTED)) {
                n++;
                bytes += a->sz.placed;
                FUZZ_CHECK(a->key.prio == gmc_victim_prio(&a->desc) && a->key.lru == a->lru &&
                               a->key.hot == (a->hot ? 1u : 0u),
                           "a candidate's key is stale");
            }
        FUZZ_CHECK(dev->cand[g].count == n && dev->cand_bytes[g] == bytes,
                   "segment %u: %zu candidates (%llu bytes) in the tree, %zu (%llu) placed", g + 1u,
                   dev->cand[g].count, (unsigned long long)dev->cand_bytes[g], n, (unsigned long long)bytes);
        FUZZ_CHECK(gmc_avl_check(&dev->cand[g], cand_cmp) == 0, "segment %u: candidate tree broken", g + 1u);
    }
}

static void check_stale(struct st *s)
{
    for (unsigned i = 0; i < s->nstale; i++) {
        unsigned ci = (unsigned)s->stale[i][0];
        if (s->cl[ci] == NULL)
            continue;
        struct gmc_alloc_info ai;
        int st = gmc_alloc_query(s->cl[ci], s->stale[i][1], &ai);
        FUZZ_CHECK(st == GMC_E_BAD_HANDLE, "destroyed handle 0x%llx answers %s",
                   (unsigned long long)s->stale[i][1], gmc_status_name(st));
    }
}

static void forget_handle(struct st *s, unsigned ci, gmc_handle h)
{
    for (unsigned k = 0; k < MAXH; k++)
        if (s->h[ci][k] == h)
            s->h[ci][k] = GMC_HANDLE_NONE;
    if (s->nstale < MAXSTALE) {
        s->stale[s->nstale][0] = ci;
        s->stale[s->nstale][1] = h;
        s->nstale++;
    }
}

static void new_handle(struct st *s, unsigned ci, unsigned slot, gmc_handle h)
{
    for (unsigned i = 0; i < s->nstale; i++)
        FUZZ_CHECK(s->stale[i][1] != h, "handle 0x%llx handed out again", (unsigned long long)h);
    s->h[ci][slot] = h;
}

static void desc_from(struct fuzz_in *in, struct gmc_alloc_desc *d)
{
    static const uint64_t sizes[] = { 1, 4096, 5000, 65536, 1u << 20, 3u << 20, 0, 2u << 20 };
    memset(d, 0, sizeof(*d));
    uint8_t b = fz_u8(in);
    d->size = b < 200 ? sizes[b % 8] + 4096u * (b / 8u) : fz_uint(in, 8);
    uint8_t a = fz_u8(in);
    d->alignment = a < 128 ? 0u : a < 250 ? 1u << (a % 24) : (uint32_t)fz_uint(in, 4);
    d->supported_segments = fz_u8(in) & 0x0Fu;
    if (fz_u8(in) & 1u) {
        d->preferred[0].id = (uint8_t)(fz_u8(in) % 5u);
        d->preferred[0].top_down = fz_u8(in) & 1u;
    }
    d->eviction_segments = fz_u8(in) & 0x0Fu;
    uint8_t p = fz_u8(in);
    static const uint32_t prios[] = { GMC_PRIORITY_MINIMUM, GMC_PRIORITY_LOW, GMC_PRIORITY_NORMAL,
                                      GMC_PRIORITY_HIGH, GMC_PRIORITY_MAXIMUM, 0 };
    d->priority = p < 240 ? prios[p % 6] : (uint32_t)fz_uint(in, 4);
    uint8_t f = fz_u8(in);
    d->flags = f < 64 ? GMC_ALLOC_CPU_VISIBLE : f < 192 ? (uint32_t)fz_uint(in, 2) : (uint32_t)fz_uint(in, 4);
    d->kmt_flags = fz_u8(in) < 200 ? 0u : (uint32_t)fz_uint(in, 4);
    d->info2_flags = fz_u8(in) < 230 ? 0u : (uint32_t)fz_uint(in, 1);
    d->vidpn_source_id = fz_u8(in) < 250 ? GMC_VIDPN_SOURCE_NONE : fz_u8(in);
    if (fz_u8(in) >= 250)
        d->pitch_aligned_size = fz_uint(in, 4);
}

static uint8_t wbuf[64 * 1024], rbuf[64 * 1024];

static void step(struct st *s, struct fuzz_in *in)
{
    unsigned ci, slot;
    gmc_client *c;
    gmc_handle h;
    int st;
    switch (fz_below(in, 20)) {
    case 0: { /* client */
        ci = fz_below(in, MAXC);
        if (s->cl[ci] != NULL)
            return;
        struct gmc_client_desc cd = { .flags = fz_u8(in) & 3u, .owner = fz_u8(in) & 3u };
        st = gmc_client_create(s->dev, &cd, &s->cl[ci]);
        KNOWN("gmc_client_create", st);
        if (st != GMC_OK)
            s->cl[ci] = NULL;
        memset(s->h[ci], 0, sizeof(s->h[ci]));
        return;
    }
    case 1: /* client exit */
        c = pick_client(s, in, &ci);
        if (c == NULL || fz_u8(in) < 128)
            return;
        for (unsigned k = 0; k < MAXH; k++)
            if (s->h[ci][k] != GMC_HANDLE_NONE)
                forget_handle(s, ci, s->h[ci][k]);
        gmc_client_destroy(c);
        s->cl[ci] = NULL;
        /* the client is gone: its stale handles cannot be asked about */
        return;
    case 2:
    case 3: { /* alloc */
        c = pick_client(s, in, &ci);
        slot = fz_below(in, MAXH);
        struct gmc_alloc_desc d;
        desc_from(in, &d);
        if (c == NULL || s->h[ci][slot] != GMC_HANDLE_NONE)
            return;
        if (d.size > (64u << 20))
            d.size = fz_u8(in) ? (d.size & 0xFFFFFu) + 1u : d.size; /* mostly keep paging cheap */
        if ((d.flags & (GMC_ALLOC_EXISTING_SYS_MEM | GMC_ALLOC_EXISTING_KERNEL_SYS_MEM)) ||
            (d.kmt_flags & GMC_KMT_EXISTING_SYS_MEM))
            return; /* the backing would have to outlive the input: not decoded */
        h = GMC_HANDLE_NONE;
        st = gmc_alloc_create(c, &d, &h);
        KNOWN("gmc_alloc_create", st);
        if (st == GMC_OK) {
            FUZZ_CHECK(h != GMC_HANDLE_NONE, "created without a handle");
            new_handle(s, ci, slot, h);
        } else {
            FUZZ_CHECK(h == GMC_HANDLE_NONE, "failed create set a handle");
        }
        return;
    }
    case 4: /* destroy */
        c = pick_client(s, in, &ci);
        if (c == NULL)
            return;
        h = pick_handle(s, in, ci, &slot);
        st = gmc_alloc_destroy(c, h);
        KNOWN("gmc_alloc_destroy", st);
        if (st == GMC_OK) {
            forget_handle(s, ci, h);
            st = gmc_alloc_destroy(c, h);
            FUZZ_CHECK(st == GMC_E_BAD_HANDLE, "second destroy: %s", gmc_status_name(st));
        }
        return;
    case 5:
    case 6: { /* resident / evict */
        c = pick_client(s, in, &ci);
        if (c == NULL)
            return;
        gmc_handle hs[4];
        unsigned n = 1u + fz_below(in, 4);
        for (unsigned k = 0; k < n; k++)
            hs[k] = pick_handle(s, in, ci, &slot);
        if (fz_u8(in) & 1u) {
            struct gmc_residency_result res;
            st = gmc_make_resident(c, hs, n, &res);
            KNOWN("gmc_make_resident", st);
        } else {
            st = gmc_evict(c, hs, n);
            KNOWN("gmc_evict", st);
        }
        return;
    }
    case 7: { /* lock, lock access, unlock */
        c = pick_client(s, in, &ci);
        if (c == NULL)
            return;
        h = pick_handle(s, in, ci, &slot);
        struct gmc_lock_map map;
        st = gmc_lock(c, h, fz_u8(in) & 0x1Fu, &map);
        KNOWN("gmc_lock", st);
        size_t len = fz_below(in, 8192);
        uint64_t off = fz_below(in, 1u << 20);
        st = (fz_u8(in) & 1u) ? gmc_lock_write(c, h, off, wbuf, len) : gmc_lock_read(c, h, off, rbuf, len);
        KNOWN("gmc_lock_read/write", st);
        if (fz_u8(in) & 3u) {
            st = gmc_unlock(c, h);
            KNOWN("gmc_unlock", st);
        }
        return;
    }
    case 8:
    case 9: { /* write, read back */
        c = pick_client(s, in, &ci);
        if (c == NULL)
            return;
        h = pick_handle(s, in, ci, &slot);
        size_t len = fz_below(in, sizeof(wbuf));
        uint64_t off = fz_u8(in) < 240 ? fz_below(in, 1u << 20) : fz_uint(in, 8);
        for (size_t i = 0; i < len; i++)
            wbuf[i] = (uint8_t)(i * 31u + off);
        st = gmc_alloc_write(c, h, off, wbuf, len);
        KNOWN("gmc_alloc_write", st);
        if (st == GMC_OK) {
            /* Through the client's own WriteOnly lock the write is allowed
             * and the read is not (gmc.h, gmc_alloc_read). */
            const struct gmc_vref *r = gmc_vidmm_ref(c, h);
            FUZZ_CHECK(r != NULL, "written handle has no reference");
            int wo = r->alloc->locker == c && (r->alloc->lock_flags & GMC_LOCK_WRITE_ONLY);
            st = gmc_alloc_read(c, h, off, rbuf, len);
            if (wo) {
                FUZZ_CHECK(st == GMC_E_PERMISSION, "read through a WriteOnly lock: %s", gmc_status_name(st));
                return;
            }
            FUZZ_CHECK(st == GMC_OK, "read after a good write: %s", gmc_status_name(st));
            FUZZ_CHECK(memcmp(rbuf, wbuf, len) == 0, "read back differs (%zu bytes at %llu)", len,
                       (unsigned long long)off);
        }
        return;
    }
    case 10:
    case 11: { /* submit */
        c = pick_client(s, in, &ci);
        if (c == NULL)
            return;
        struct gmc_submit_ref refs[3];
        struct gmc_gpu_op ops[3];
        unsigned nr = fz_below(in, 4), no = fz_below(in, 4);
        for (unsigned k = 0; k < nr; k++) {
            refs[k].handle = pick_handle(s, in, ci, &slot);
            refs[k].flags = fz_u8(in) < 200 ? GMC_REF_WRITE : fz_u8(in);
        }
        for (unsigned k = 0; k < no; k++) {
            ops[k].kind = fz_u8(in) < 250 ? 1u + fz_below(in, 2) : fz_u8(in);
            ops[k].src = fz_below(in, 4);
            ops[k].dst = fz_below(in, 4);
            ops[k].src_offset = fz_u8(in) < 200 ? 4096u * fz_below(in, 32) : fz_uint(in, 8);
            ops[k].dst_offset = fz_u8(in) < 200 ? 4096u * fz_below(in, 32) : fz_uint(in, 8);
            ops[k].size = fz_u8(in) < 200 ? 1u + fz_below(in, 65536) : fz_uint(in, 8);
            ops[k].pattern = (uint32_t)fz_uint(in, 4);
            if (ops[k].kind == GMC_GPU_FILL && fz_u8(in) < 240)
                ops[k].src = 0, ops[k].src_offset = 0;
        }
        uint64_t fence = 77;
        struct gmc_submit sb = { refs, nr, ops, no };
        st = gmc_submit(c, &sb, &fence);
        KNOWN("gmc_submit", st);
        if (st != GMC_OK)
            FUZZ_CHECK(fence == 0, "failed submit left fence %llu", (unsigned long long)fence);
        return;
    }
    case 12: { /* fence wait */
        uint64_t f = fz_u8(in) < 200 ? gmc_fence_completed(s->dev) + fz_below(in, 4) : fz_uint(in, 8);
        st = gmc_fence_wait(s->dev, f, 1000u);
        KNOWN("gmc_fence_wait", st);
        return;
    }
    case 13: { /* power */
        struct gmc_power_report rep;
        uint8_t b = fz_u8(in);
        if (b < 100)
            st = gmc_device_power(s->dev, GMC_POWER_STANDBY, &rep);
        else if (b < 140)
            st = gmc_device_power(s->dev, GMC_POWER_HIBERNATE, &rep);
        else if (b < 250)
            st = gmc_device_resume(s->dev, &rep);
        else
            st = gmc_device_power(s->dev, (enum gmc_power_state)fz_u8(in), &rep);
        KNOWN("gmc_device_power/resume", st);
        return;
    }
    case 14: { /* share by global handle, or NT handle */
        unsigned cj;
        c = pick_client(s, in, &ci);
        gmc_client *o = pick_client(s, in, &cj);
        if (c == NULL || o == NULL)
            return;
        h = pick_handle(s, in, ci, &slot);
        gmc_share_handle sh = GMC_HANDLE_NONE;
        if (fz_u8(in) & 1u) {
            st = gmc_alloc_share_nt(c, h, o, &sh);
            KNOWN("gmc_alloc_share_nt", st);
        } else {
            struct gmc_alloc_info ai;
            st = gmc_alloc_query(c, h, &ai);
            KNOWN("gmc_alloc_query", st);
            sh = st == GMC_OK ? ai.share_handle : fz_uint(in, 8);
        }
        unsigned dslot = fz_below(in, MAXH);
        if (s->h[cj][dslot] != GMC_HANDLE_NONE)
            return;
        gmc_handle nh = GMC_HANDLE_NONE;
        st = gmc_alloc_open(o, sh, &nh);
        KNOWN("gmc_alloc_open", st);
        if (st == GMC_OK)
            new_handle(s, cj, dslot, nh);
        return;
    }
    case 15: { /* queries, made-up handles included */
        c = pick_client(s, in, &ci);
        struct gmc_alloc_info ai;
        struct gmc_client_stats cs;
        struct gmc_device_stats ds;
        struct gmc_segment_info si;
        h = c ? pick_handle(s, in, ci, &slot) : 0;
        KNOWN("gmc_alloc_query", gmc_alloc_query(c, h, &ai));
        KNOWN("gmc_client_stats", gmc_client_stats(c, &cs));
        KNOWN("gmc_device_stats", gmc_device_stats(s->dev, &ds));
        KNOWN("gmc_segment_query", gmc_segment_query(s->dev, fz_u8(in) % 6u, &si));
        KNOWN("gmc_alloc_can_lock", gmc_alloc_can_lock(c, h, fz_u8(in)));
        KNOWN("gmc_alloc_can_write", gmc_alloc_can_write(c, h));
        /* A new priority (0 now and then: refused). */
        KNOWN("gmc_alloc_set_priority", gmc_alloc_set_priority(c, h, (uint32_t)fz_u8(in) << 24));
        return;
    }
    default: /* NULL and bogus arguments */
        c = pick_client(s, in, &ci);
        KNOWN("gmc_alloc_create(NULL desc)", gmc_alloc_create(c, NULL, &h));
        KNOWN("gmc_make_resident(n=0)", gmc_make_resident(c, NULL, 0, NULL));
        KNOWN("gmc_submit(NULL)", gmc_submit(c, NULL, NULL));
        KNOWN("gmc_alloc_read(NULL buf)", gmc_alloc_read(c, fz_uint(in, 8), 0, NULL, 16));
        return;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = { data, size };
    struct st s;
    memset(&s, 0, sizeof(s));
    struct gmc_open_report rep;
    int st = gmc_device_open_sim(NULL, &rep, &s.dev);
    FUZZ_CHECK(st == GMC_OK, "open: %s", gmc_status_name(st));
    for (unsigned n = 0; n < MAXSTEPS && in.n > 0; n++) {
        step(&s, &in);
        check_stale(&s);
        check_cands(&s);
    }
    char msg[256] = "";
    uint64_t v = gmc_sim_protocol_violations(gmc_device_sim(s.dev), msg, sizeof(msg));
    FUZZ_CHECK(v == 0, "%llu AXI protocol violations: %s", (unsigned long long)v, msg);
    for (unsigned i = 0; i < MAXC; i++)
        if (s.cl[i] != NULL)
            gmc_client_destroy(s.cl[i]);
    gmc_device_close(s.dev);
    return 0;
}
