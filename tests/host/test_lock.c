/*
 * test_lock.c - CPU locks (pfnLockCb / pfnUnlockCb, docs/residency.md):
 * every lock-flag rule and refusal with its exact status, DonotWait while
 * the GPU is busy, Discard renaming (the GPU's in-flight work still lands
 * in the old place), DonotEvict, the mapping kinds (BAR1 window, system
 * copy), the pointer staying put while locked under pressure, access
 * permissions and bounds through a lock, unlock uploading a written system
 * copy, and submissions that reference a locked allocation (mapped through
 * an aperture, or GMC_E_SUBMIT_LOCKED). Every model is checked for AXI
 * protocol violations when its device closes.
 */
#include "vidmm_test.h"

static _Alignas(4096) uint8_t existing[64 * 1024];
static gmc_device *g_dev; /* for lock_fails() with a NULL client */

/* A lock that must fail: its status, a zeroed map, nothing locked. */
#define lock_fails(c, h, f, want) lock_fails_at((c), (h), (f), (want), __FILE__, __LINE__)
static void lock_fails_at(gmc_client *c, gmc_handle h, uint32_t flags, int want, const char *file, int line)
{
    struct gmc_lock_map m;
    memset(&m, 0x5A, sizeof m);
    gmc_device *dev = c != NULL ? c->dev : g_dev;
    uint64_t locks = t_stats(dev).locks;
    int rc = gmc_lock(c, h, flags, &m);
    if (rc != want)
        fail_msg("%s:%d: lock 0x%x: expected %s, got %s", file, line, flags, gmc_status_name(want),
                 gmc_status_name(rc));
    struct gmc_lock_map zero;
    memset(&zero, 0, sizeof zero);
    if (memcmp(&m, &zero, sizeof m) != 0)
        fail_msg("%s:%d: map not zeroed", file, line);
    if (t_stats(dev).locks != locks)
        fail_msg("%s:%d: lock counted", file, line);
}

static void test_flag_rules(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev), *other = t_client(dev);
    g_dev = dev;
    gmc_handle v = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle nv = t_new(c, 64 * KiB, 0, BIT(SEG_VIS));
    gmc_handle pr = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PROTECTED, BIT(SEG_VIS));
    struct gmc_alloc_desc d;
    t_desc(&d, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    d.kmt_flags = GMC_KMT_READ_ONLY;
    gmc_handle ro = t_create(c, &d);
    d.kmt_flags = GMC_KMT_CREATE_RESOURCE | GMC_KMT_CREATE_SHARED;
    gmc_handle sh = t_create(c, &d);
    gmc_handle sh2 = GMC_HANDLE_NONE;
    ok(gmc_alloc_open(other, t_info(c, sh).share_handle, &sh2));

    const uint32_t RO = GMC_LOCK_READ_ONLY, WO = GMC_LOCK_WRITE_ONLY, NW = GMC_LOCK_DONOT_WAIT,
                   NE = GMC_LOCK_DONOT_EVICT, DI = GMC_LOCK_DISCARD;
    struct {
        gmc_client *c;
        gmc_handle h;
        uint32_t flags;
        int want;
    } cases[] = {
        { c, v, 1u << 3, GMC_E_INVALID_ARG },
        { c, v, 1u << 31, GMC_E_INVALID_ARG },
        { c, v, RO | WO, GMC_E_LOCK_FLAGS },
        { c, v, RO | DI, GMC_E_LOCK_FLAGS },
        { c, v, RO | WO | DI | NW, GMC_E_LOCK_FLAGS },
        { c, nv, RO | WO, GMC_E_LOCK_FLAGS },      /* flags are checked first */
        { c, nv, RO, GMC_E_NOT_CPU_VISIBLE },
        { c, nv, 0, GMC_E_NOT_CPU_VISIBLE },
        { c, pr, RO, GMC_E_PROTECTED },
        { c, pr, WO | DI, GMC_E_PROTECTED },
        { other, sh2, RO, GMC_E_NOT_CREATOR },
        { other, sh2, 0, GMC_E_NOT_CREATOR },
        { c, ro, 0, GMC_E_READ_ONLY },
        { c, ro, WO, GMC_E_READ_ONLY },
        { c, ro, WO | DI, GMC_E_READ_ONLY },
        { c, ro, NW | NE, GMC_E_READ_ONLY },
        { other, v, RO, GMC_E_BAD_HANDLE },
        { c, 0, RO, GMC_E_BAD_HANDLE },
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = gmc_alloc_can_lock(cases[i].c, cases[i].h, cases[i].flags);
        if (rc != cases[i].want)
            fail_msg("case %u can_lock: expected %s, got %s", i, gmc_status_name(cases[i].want),
                     gmc_status_name(rc));
        lock_fails(cases[i].c, cases[i].h, cases[i].flags, cases[i].want);
        assert_false(cases[i].h != 0 && cases[i].want != GMC_E_BAD_HANDLE &&
                     (t_info(cases[i].c, cases[i].h).state & GMC_ALLOC_STATE_LOCKED));
    }
    assert_status(gmc_alloc_can_write(c, ro), GMC_E_READ_ONLY);
    assert_status(gmc_alloc_can_write(other, sh2), GMC_E_NOT_CREATOR);
    ok(gmc_alloc_can_write(c, sh));

    /* the allowed combinations lock */
    static const uint32_t good[] = { 0, RO, WO, NW, NE, DI, WO | DI, RO | NW | NE, WO | NW | NE | DI };
    for (unsigned i = 0; i < sizeof good / sizeof good[0]; i++) {
        struct gmc_lock_map m;
        ok(gmc_alloc_can_lock(c, v, good[i]));
        ok(gmc_lock(c, v, good[i], &m));
        assert_true(t_info(c, v).state & GMC_ALLOC_STATE_LOCKED);
        ok(gmc_unlock(c, v));
        assert_false(t_info(c, v).state & GMC_ALLOC_STATE_LOCKED);
    }
    struct gmc_lock_map m;
    ok(gmc_lock(c, ro, RO, &m));
    ok(gmc_unlock(c, ro));
    ok(gmc_lock(c, sh, WO, &m)); /* the creator locks its shared allocation */

    /* ALREADY_LOCKED, NOT_LOCKED */
    lock_fails(c, sh, RO, GMC_E_ALREADY_LOCKED);
    assert_status(gmc_unlock(other, sh2), GMC_E_NOT_LOCKED);
    ok(gmc_unlock(c, sh));
    assert_status(gmc_unlock(c, sh), GMC_E_NOT_LOCKED);
    assert_status(gmc_unlock(c, 0), GMC_E_BAD_HANDLE);
    assert_status(gmc_unlock(NULL, sh), GMC_E_NULL_POINTER);
    assert_status(gmc_lock(c, v, 0, NULL), GMC_E_NULL_POINTER);
    lock_fails(NULL, v, 0, GMC_E_NULL_POINTER);
    t_close(dev);
}

/* ------------------------------------------- access through a lock */

static void test_lock_access(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 3 * PG;
    gmc_handle h = t_new(c, SZ - 100, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    uint8_t buf[64], keep[64];
    memset(buf, 0xEE, sizeof buf);
    memcpy(keep, buf, sizeof buf);
    assert_status(gmc_lock_read(c, h, 0, buf, 8), GMC_E_NOT_LOCKED);
    assert_status(gmc_lock_write(c, h, 0, buf, 8), GMC_E_NOT_LOCKED);
    assert_memory_equal(buf, keep, sizeof buf);

    struct gmc_lock_map m;
    ok(gmc_lock(c, h, GMC_LOCK_WRITE_ONLY, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_BAR);
    assert_int_equal(m.size, SZ);
    assert_null(m.ptr);
    uint8_t pat[SZ];
    t_pattern(pat, SZ, 21);
    ok(gmc_lock_write(c, h, 0, pat, SZ));
    assert_status(gmc_lock_read(c, h, 0, buf, 8), GMC_E_PERMISSION);
    assert_memory_equal(buf, keep, sizeof buf);
    assert_status(gmc_lock_write(c, h, SZ - 4, pat, 5), GMC_E_OUT_OF_BOUNDS);
    assert_status(gmc_lock_write(c, h, SZ + 1, pat, 0), GMC_E_OUT_OF_BOUNDS);
    assert_status(gmc_lock_write(c, h, UINT64_MAX, pat, 2), GMC_E_OUT_OF_BOUNDS);
    assert_status(gmc_lock_write(c, h, 0, NULL, 2), GMC_E_NULL_POINTER);
    ok(gmc_lock_write(c, h, SZ, pat, 0));
    ok(gmc_unlock(c, h));
    /* the bytes are in VRAM, at the BAR offset's segment offset */
    struct gmc_alloc_info ai = t_info(c, h);
    assert_int_equal(ai.offset, m.bar_offset);
    assert_true(t_vram_is(dev, ai.gpu_address, SZ, 21));

    ok(gmc_lock(c, h, GMC_LOCK_READ_ONLY, &m));
    assert_status(gmc_lock_write(c, h, 0, pat, 8), GMC_E_PERMISSION);
    ok(gmc_lock_read(c, h, 0x123, buf, sizeof buf));
    assert_memory_equal(buf, pat + 0x123, sizeof buf);
    memcpy(keep, buf, sizeof buf);
    assert_status(gmc_lock_read(c, h, SZ - 63, buf, 64), GMC_E_OUT_OF_BOUNDS);
    assert_memory_equal(buf, keep, sizeof buf);
    /* the one-shot calls go through the client's own lock */
    ok(gmc_alloc_read(c, h, 1, buf, 10));
    assert_memory_equal(buf, pat + 1, 10);
    assert_status(gmc_alloc_write(c, h, 0, pat, 8), GMC_E_PERMISSION);
    ok(gmc_unlock(c, h));
    /* a lock with neither flag reads and writes */
    ok(gmc_lock(c, h, 0, &m));
    ok(gmc_lock_read(c, h, 0, buf, 8));
    ok(gmc_lock_write(c, h, 0, buf, 8));
    ok(gmc_unlock(c, h));
    assert_status(gmc_alloc_read(c, h, SZ - 1, buf, 2), GMC_E_OUT_OF_BOUNDS);
    assert_status(gmc_alloc_write(c, h, SZ, buf, 1), GMC_E_OUT_OF_BOUNDS);
    assert_true(t_check_pattern(c, h, SZ, 21));
    t_close(dev);
}

/* -------------------------------------------------- mapping kinds */

static void test_map_kinds(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    gmc_handle pad = t_new(c, 128 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle v = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle p = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PERMANENT_SYS_MEM, BIT(SEG_VIS));
    gmc_handle ap = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_AP));
    struct gmc_alloc_desc d;
    t_pattern(existing, sizeof existing, 31);
    t_desc(&d, sizeof existing, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_EXISTING_SYS_MEM, BIT(SEG_VIS));
    d.system_mem = existing;
    d.system_mem_size = sizeof existing;
    gmc_handle e = t_create(c, &d);
    (void)pad;

    struct gmc_lock_map m;
    ok(gmc_lock(c, v, GMC_LOCK_READ_ONLY, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_BAR);
    assert_int_equal(m.bar_offset, 128 * KiB);
    assert_int_equal(m.size, 64 * KiB);
    ok(gmc_unlock(c, v));
    ok(gmc_lock(c, p, GMC_LOCK_READ_ONLY, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_SYSTEM);
    assert_non_null(m.ptr);
    assert_int_equal(m.size, 64 * KiB);
    for (unsigned i = 0; i < 64 * KiB; i++) /* first page-in, in the system copy */
        assert_int_equal(((uint8_t *)m.ptr)[i], (uint8_t)(GMC_FILL_UNINITIALISED >> (8u * (i & 3u))));
    ok(gmc_unlock(c, p));
    ok(gmc_lock(c, ap, GMC_LOCK_WRITE_ONLY, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_SYSTEM);
    assert_non_null(m.ptr);
    t_pattern(m.ptr, 64 * KiB, 32);
    ok(gmc_unlock(c, ap));
    ok(gmc_lock(c, e, GMC_LOCK_READ_ONLY, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_SYSTEM);
    assert_ptr_equal(m.ptr, existing); /* the caller's own memory */
    ok(gmc_unlock(c, e));

    /* the aperture allocation's written copy reaches the GPU */
    gmc_handle dst = t_new(c, 64 * KiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle all[2] = { ap, dst };
    ok(gmc_make_resident(c, all, 2, NULL));
    ok(gmc_fence_wait(dev, t_copy(c, ap, 0, dst, 0, 64 * KiB), 0));
    assert_true(t_check_pattern(c, dst, 64 * KiB, 32));

    /* unlock of a written ExistingSysMem copy updates VRAM */
    ok(t_resident1(c, e));
    struct gmc_alloc_info ei = t_info(c, e);
    ok(gmc_lock(c, e, GMC_LOCK_WRITE_ONLY, &m));
    t_pattern(existing, sizeof existing, 33);
    struct gmc_device_stats s0 = t_stats(dev);
    ok(gmc_unlock(c, e));
    t_idle(dev);
    assert_int_equal(t_stats(dev).bytes_paged_in - s0.bytes_paged_in, sizeof existing);
    assert_true(t_vram_is(dev, ei.gpu_address, sizeof existing, 33));
    /* a ReadOnly lock does not upload */
    ok(gmc_lock(c, e, GMC_LOCK_READ_ONLY, &m));
    s0 = t_stats(dev);
    ok(gmc_unlock(c, e));
    assert_int_equal(t_stats(dev).bytes_paged_in, s0.bytes_paged_in);
    assert_int_equal(t_stats(dev).paging_ops, s0.paging_ops);
    t_close(dev);
}

/* --------------------------------------------------- GPU busy: DonotWait */

static void test_donot_wait(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 1 * MiB;
    gmc_handle src = t_new(c, SZ, 0, BIT(SEG_VRAM));
    gmc_handle dst = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle both[2] = { src, dst };
    ok(gmc_make_resident(c, both, 2, NULL));
    t_idle(dev);
    ok(gmc_fence_wait(dev, t_fill(c, src, 0, SZ, 0x01020304u), 0));
    uint64_t f = t_copy(c, src, 0, dst, 0, SZ);
    assert_true(gmc_fence_completed(dev) < f);
    lock_fails(c, dst, GMC_LOCK_DONOT_WAIT, GMC_E_STILL_DRAWING);
    lock_fails(c, dst, GMC_LOCK_DONOT_WAIT | GMC_LOCK_READ_ONLY, GMC_E_STILL_DRAWING);
    assert_false(t_info(c, dst).state & GMC_ALLOC_STATE_LOCKED);
    /* the source is busy too (read by the copy) */
    /* without DonotWait the lock waits, and sees the copy */
    struct gmc_device_stats s0 = t_stats(dev);
    struct gmc_lock_map m;
    ok(gmc_lock(c, dst, GMC_LOCK_READ_ONLY, &m));
    assert_int_equal(t_stats(dev).lock_waits - s0.lock_waits, 1);
    assert_true(gmc_fence_completed(dev) >= f);
    uint8_t b[4096];
    ok(gmc_lock_read(c, dst, SZ - sizeof b, b, sizeof b));
    for (unsigned i = 0; i < sizeof b; i++)
        assert_int_equal(b[i], (uint8_t)(0x01020304u >> (8u * (i & 3u))));
    ok(gmc_unlock(c, dst));
    /* idle: DonotWait locks at once */
    ok(gmc_lock(c, dst, GMC_LOCK_DONOT_WAIT, &m));
    ok(gmc_unlock(c, dst));
    t_close(dev);
}

/* -------------------------------------------------- Discard renaming */

static void test_discard_rename(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 512 * KiB;
    gmc_handle src = t_new(c, SZ, 0, BIT(SEG_VRAM));
    gmc_handle dst = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    gmc_handle both[2] = { src, dst };
    ok(gmc_make_resident(c, both, 2, NULL));
    ok(gmc_fence_wait(dev, t_fill(c, src, 0, SZ, 0xCAFEF00Du), 0));
    struct gmc_alloc_info old = t_info(c, dst);
    uint64_t f = t_copy(c, src, 0, dst, 0, SZ);
    assert_true(gmc_fence_completed(dev) < f);
    struct gmc_device_stats s0 = t_stats(dev);
    struct gmc_lock_map m;
    ok(gmc_lock(c, dst, GMC_LOCK_WRITE_ONLY | GMC_LOCK_DISCARD, &m));
    struct gmc_device_stats s1 = t_stats(dev);
    assert_int_equal(s1.renames - s0.renames, 1);
    assert_int_equal(s1.lock_waits, s0.lock_waits);
    assert_true(gmc_fence_completed(dev) < f); /* it did not wait */
    struct gmc_alloc_info now = t_info(c, dst);
    assert_int_equal(now.segment, SEG_VIS);
    assert_true(now.offset != old.offset);
    assert_int_equal(m.kind, GMC_LOCK_MAP_BAR);
    assert_int_equal(m.bar_offset, now.offset);
    /* the new place does not overlap the old one */
    assert_true(now.offset >= old.offset + SZ || now.offset + SZ <= old.offset);
    uint8_t pat[SZ];
    t_pattern(pat, SZ, 41);
    ok(gmc_lock_write(c, dst, 0, pat, SZ));
    ok(gmc_unlock(c, dst));
    /* the GPU's copy still completes, into the old place */
    ok(gmc_fence_wait(dev, f, 0));
    assert_true(t_vram_filled(dev, old.gpu_address, SZ, 0xCAFEF00Du));
    assert_true(t_check_pattern(c, dst, SZ, 41));
    /* the old range is free again once the copy completed */
    struct gmc_segment_info si;
    ok(gmc_segment_query(dev, SEG_VIS, &si));
    assert_int_equal(si.used, SZ);
    assert_int_equal(si.free, si.desc.size - SZ);

    /* renaming the system copy of a PermanentSysMem allocation */
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PERMANENT_SYS_MEM, BIT(SEG_VIS));
    gmc_handle p = t_create(c, &d);
    ok(t_resident1(c, p));
    ok(gmc_lock(c, p, GMC_LOCK_WRITE_ONLY, &m));
    void *first = m.ptr;
    t_pattern(m.ptr, SZ, 42);
    ok(gmc_unlock(c, p));
    struct gmc_alloc_info pi = t_info(c, p);
    f = t_copy(c, p, 0, dst, 0, SZ); /* the GPU reads p's VRAM copy */
    assert_true(gmc_fence_completed(dev) < f);
    s0 = t_stats(dev);
    ok(gmc_lock(c, p, GMC_LOCK_WRITE_ONLY | GMC_LOCK_DISCARD, &m));
    assert_int_equal(t_stats(dev).renames - s0.renames, 1);
    assert_true(m.ptr != first); /* a fresh system copy */
    t_pattern(m.ptr, SZ, 43);
    ok(gmc_unlock(c, p));
    ok(gmc_fence_wait(dev, f, 0));
    t_idle(dev);
    assert_true(t_check_pattern(c, dst, SZ, 42)); /* the GPU read the old content */
    assert_true(t_vram_is(dev, pi.gpu_address, SZ, 43)); /* unlock uploaded the new one */
    assert_true(t_check_pattern(c, p, SZ, 43));

    /* Discard on an idle allocation renames nothing */
    s0 = t_stats(dev);
    ok(gmc_lock(c, dst, GMC_LOCK_DISCARD, &m));
    assert_int_equal(t_stats(dev).renames, s0.renames);
    ok(gmc_unlock(c, dst));
    t_close(dev);
}

/* ---------------------------------------------------------- DonotEvict */

static void test_donot_evict(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 256 * KiB;
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS) | BIT(SEG_VRAM));
    d.preferred[0].id = SEG_VRAM;
    gmc_handle h = t_create(c, &d);
    assert_int_equal(t_info(c, h).segment, SEG_VRAM);
    ok(t_resident1(c, h));
    ok(gmc_fence_wait(dev, t_fill(c, h, 0, SZ, 0x0BADC0DEu), 0));
    lock_fails(c, h, GMC_LOCK_DONOT_EVICT, GMC_E_NEEDS_EVICT);
    lock_fails(c, h, GMC_LOCK_DONOT_EVICT | GMC_LOCK_READ_ONLY, GMC_E_NEEDS_EVICT);
    assert_int_equal(t_info(c, h).segment, SEG_VRAM);
    /* without it the allocation moves to CPU-visible VRAM, content kept */
    struct gmc_lock_map m;
    ok(gmc_lock(c, h, GMC_LOCK_READ_ONLY, &m));
    struct gmc_alloc_info ai = t_info(c, h);
    assert_int_equal(ai.segment, SEG_VIS);
    assert_int_equal(m.kind, GMC_LOCK_MAP_BAR);
    assert_int_equal(m.bar_offset, ai.offset);
    uint8_t b[SZ];
    ok(gmc_lock_read(c, h, 0, b, SZ));
    for (unsigned i = 0; i < SZ; i++)
        assert_int_equal(b[i], (uint8_t)(0x0BADC0DEu >> (8u * (i & 3u))));
    ok(gmc_unlock(c, h));
    /* in CPU-visible VRAM already: DonotEvict locks */
    ok(gmc_lock(c, h, GMC_LOCK_DONOT_EVICT, &m));
    ok(gmc_unlock(c, h));
    t_close(dev);
}

/* ----------------------------------------- the pointer does not move */

static void test_locked_never_moves(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 512 * KiB;
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    d.priority = GMC_PRIORITY_MINIMUM;
    gmc_handle lk = t_create(c, &d);
    t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PERMANENT_SYS_MEM, BIT(SEG_VIS));
    d.priority = GMC_PRIORITY_MINIMUM;
    gmc_handle ps = t_create(c, &d);
    t_write_pattern(c, lk, SZ, 51);
    t_write_pattern(c, ps, SZ, 52);
    struct gmc_lock_map m1, m2;
    ok(gmc_lock(c, lk, 0, &m1));
    ok(gmc_lock(c, ps, 0, &m2));
    assert_int_equal(m2.kind, GMC_LOCK_MAP_SYSTEM);
    uint64_t off = t_info(c, lk).offset;
    /* others come and go under pressure, at higher priority */
    gmc_handle o[6];
    for (unsigned i = 0; i < 6; i++) {
        o[i] = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
        ok(t_resident1(c, o[i]));
        t_write_pattern(c, o[i], 4096, 60 + i);
        ok(t_evict1(c, o[i]));
        struct gmc_alloc_info ai = t_info(c, lk);
        assert_true(ai.state & GMC_ALLOC_STATE_PLACED);
        assert_true(ai.state & GMC_ALLOC_STATE_LOCKED);
        assert_int_equal(ai.offset, off);
    }
    /* the whole segment: the two locked ones are short, never chosen */
    gmc_handle big = t_new(c, 2 * MiB, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    struct gmc_residency_result res;
    uint64_t ev = t_stats(dev).evictions;
    assert_status(gmc_make_resident(c, &big, 1, &res), GMC_E_NO_SPACE);
    assert_int_equal(res.bytes_needed, 2 * SZ); /* lk's and ps's bytes */
    assert_int_equal(t_stats(dev).evictions, ev);
    assert_int_equal(t_info(c, lk).offset, off);
    uint8_t b[SZ];
    ok(gmc_lock_read(c, lk, 0, b, SZ));
    for (unsigned i = 0; i < SZ; i++)
        assert_int_equal(b[i], t_byte(51, i));
    assert_memory_equal(m2.ptr, (t_pattern(b, SZ, 52), b), SZ);
    ok(gmc_unlock(c, lk));
    ok(gmc_unlock(c, ps));
    for (unsigned i = 0; i < 6; i++)
        assert_true(t_check_pattern(c, o[i], 4096, 60 + i));
    t_close(dev);
}

/* --------------------------------- submissions referencing a lock */

static void test_submit_locked(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 64 * KiB;
    gmc_handle out = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, out));

    /* BAR lock: the GPU reaches the same VRAM */
    gmc_handle v = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE, BIT(SEG_VIS));
    ok(t_resident1(c, v));
    struct gmc_lock_map m;
    ok(gmc_lock(c, v, 0, &m));
    uint8_t pat[SZ];
    t_pattern(pat, SZ, 71);
    ok(gmc_lock_write(c, v, 0, pat, SZ));
    ok(gmc_fence_wait(dev, t_copy(c, v, 0, out, 0, SZ), 0));
    assert_true(t_check_pattern(c, out, SZ, 71));
    assert_int_equal(t_info(c, v).segment, SEG_VIS);
    ok(gmc_unlock(c, v));

    /* system lock, aperture in the supported set: mapped there */
    gmc_handle p = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PERMANENT_SYS_MEM, BIT(SEG_VIS) | BIT(SEG_AP));
    assert_int_equal(t_info(c, p).segment, SEG_VIS);
    ok(t_resident1(c, p));
    ok(gmc_lock(c, p, 0, &m));
    void *ptr = m.ptr;
    t_pattern(m.ptr, SZ, 72); /* written while locked: the GPU must see it */
    ok(gmc_fence_wait(dev, t_copy(c, p, 0, out, 0, SZ), 0));
    assert_int_equal(t_info(c, p).segment, SEG_AP);
    assert_true(t_check_pattern(c, out, SZ, 72));
    /* and a GPU write lands in the locked pages */
    ok(gmc_fence_wait(dev, t_copy(c, v, 0, p, 0, 4096), 0));
    for (unsigned i = 0; i < 4096; i++)
        assert_int_equal(((uint8_t *)ptr)[i], t_byte(71, i));
    ok(gmc_lock_read(c, p, 0, pat, 16)); /* the pointer did not move */
    assert_ptr_equal(t_info(c, p).state & GMC_ALLOC_STATE_LOCKED ? ptr : NULL, ptr);
    ok(gmc_unlock(c, p));

    /* system lock, aperture only in the eviction set: mapped there too */
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PERMANENT_SYS_MEM, BIT(SEG_VIS));
    d.eviction_segments = BIT(SEG_AP);
    gmc_handle q = t_create(c, &d);
    ok(t_resident1(c, q));
    ok(gmc_lock(c, q, GMC_LOCK_WRITE_ONLY, &m));
    t_pattern(m.ptr, SZ, 73);
    ok(gmc_fence_wait(dev, t_copy(c, q, 0, out, 0, SZ), 0));
    assert_int_equal(t_info(c, q).segment, SEG_AP);
    assert_true(t_check_pattern(c, out, SZ, 73));
    ok(gmc_unlock(c, q));
    /* a FILL needs memory: it moves back to its supported segment */
    ok(gmc_fence_wait(dev, t_fill(c, q, 0, 16, 0x44444444u), 0));
    assert_int_equal(t_info(c, q).segment, SEG_VIS);
    uint8_t b[32];
    ok(gmc_alloc_read(c, q, 0, b, 32));
    for (unsigned i = 0; i < 32; i++)
        assert_int_equal(b[i], i < 16 ? 0x44 : t_byte(73, i));

    /* no aperture anywhere: refused, nothing queued */
    gmc_handle r = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PERMANENT_SYS_MEM, BIT(SEG_VIS));
    ok(t_resident1(c, r));
    ok(gmc_lock(c, r, 0, &m));
    struct gmc_device_stats s0 = t_stats(dev);
    struct gmc_submit_ref refs[2] = { { r, 0 }, { out, GMC_REF_WRITE } };
    struct gmc_gpu_op op = { GMC_GPU_COPY, 0, 1, 0, 0, SZ, 0 };
    uint64_t f = 5;
    assert_status(gmc_submit(c, &(struct gmc_submit){ refs, 2, &op, 1 }, &f), GMC_E_SUBMIT_LOCKED);
    assert_int_equal(f, 0);
    struct gmc_device_stats s1 = t_stats(dev);
    assert_int_equal(s1.submits, s0.submits);
    assert_int_equal(s1.paging_ops, s0.paging_ops);
    assert_int_equal(t_info(c, r).segment, SEG_VIS);
    /* a FILL into a system-locked allocation mapped in the aperture */
    ok(gmc_lock(c, q, 0, &m));
    struct gmc_submit_ref fr = { q, GMC_REF_WRITE };
    struct gmc_gpu_op fo = { GMC_GPU_FILL, 0, 0, 0, 0, 16, 1 };
    assert_status(gmc_submit(c, &(struct gmc_submit){ &fr, 1, &fo, 1 }, &f), GMC_E_SUBMIT_LOCKED);
    ok(gmc_unlock(c, q));
    ok(gmc_unlock(c, r));
    ok(gmc_fence_wait(dev, t_copy(c, r, 0, out, 0, SZ), 0));
    t_close(dev);
}

/* ------------------------------------- who is CPU-accessible (seeds 000, 004) */

/* Lock `h`, write pattern `seed` through the lock, unlock, read it back
 * through a one-shot read; the map kind must be `kind`. */
static void lock_roundtrip(gmc_client *c, gmc_handle h, uint64_t size, uint32_t kind, uint64_t seed)
{
    uint8_t out[PG], in[PG];
    t_pattern(out, sizeof out, seed);
    struct gmc_lock_map m;
    ok(gmc_alloc_can_lock(c, h, 0));
    ok(gmc_lock(c, h, 0, &m));
    assert_int_equal(m.kind, kind);
    assert_true(m.size >= size);
    ok(gmc_lock_write(c, h, size - PG, out, sizeof out));
    ok(gmc_unlock(c, h));
    memset(in, 0, sizeof in);
    ok(gmc_alloc_read(c, h, size - PG, in, sizeof in));
    assert_memory_equal(in, out, sizeof in);
}

static gmc_handle new_primary(gmc_client *c, uint32_t flags, uint32_t segs)
{
    struct gmc_alloc_desc d;
    t_desc(&d, 16 * PG, flags, segs);
    d.info2_flags = GMC_INFO2_PRIMARY;
    d.vidpn_source_id = 0;
    return t_create(c, &d);
}

/* A primary is implicitly accessible to the CPU (seed 004), with or without
 * UseAlternateVA (seed 000: the primary can be locked, its swizzling range
 * set up at creation); CpuVisibleOnDemand alone is CPU access with the
 * address given at lock time (seed 000). Anything else without CpuVisible
 * is refused, and Protected stays refused whatever grants access. */
static void test_cpu_accessible(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    const uint64_t SZ = 16 * PG;
    gmc_handle prim = new_primary(c, 0, BIT(SEG_VIS));
    assert_true(t_info(c, prim).state & GMC_ALLOC_STATE_PINNED);
    lock_roundtrip(c, prim, SZ, GMC_LOCK_MAP_BAR, 1);
    gmc_handle alt = new_primary(c, GMC_ALLOC_USE_ALTERNATE_VA, BIT(SEG_VIS));
    lock_roundtrip(c, alt, SZ, GMC_LOCK_MAP_BAR, 2);
    /* with UseAlternateVA the aperture is allowed (CpuVisible has no meaning
     * there): the lock maps the system copy the aperture shows the GPU */
    gmc_handle alt_ap = new_primary(c, GMC_ALLOC_USE_ALTERNATE_VA, BIT(SEG_AP));
    lock_roundtrip(c, alt_ap, SZ, GMC_LOCK_MAP_SYSTEM, 3);
    /* a primary is refused where the CPU cannot reach it: at creation */
    struct gmc_alloc_desc d;
    t_desc(&d, SZ, 0, BIT(SEG_VRAM));
    d.info2_flags = GMC_INFO2_PRIMARY;
    d.vidpn_source_id = 0;
    gmc_handle h = GMC_HANDLE_NONE;
    assert_status(gmc_alloc_create(c, &d, &h), GMC_E_RULE_PRIMARY_SEGMENT_NOT_CPU_VISIBLE);

    gmc_handle od = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE_ON_DEMAND, BIT(SEG_VIS));
    lock_roundtrip(c, od, SZ, GMC_LOCK_MAP_BAR, 4);
    gmc_handle od2 = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE_ON_DEMAND, BIT(SEG_VIS) | BIT(SEG_VRAM));
    lock_roundtrip(c, od2, SZ, GMC_LOCK_MAP_BAR, 5);
    gmc_handle odp = t_new(c, SZ, GMC_ALLOC_CPU_VISIBLE_ON_DEMAND | GMC_ALLOC_PROTECTED, BIT(SEG_VIS));
    gmc_handle plain = t_new(c, SZ, 0, BIT(SEG_VIS));
    assert_status(gmc_alloc_can_lock(c, odp, GMC_LOCK_READ_ONLY), GMC_E_PROTECTED);
    lock_fails(c, odp, GMC_LOCK_READ_ONLY, GMC_E_PROTECTED);
    assert_status(gmc_alloc_can_lock(c, plain, 0), GMC_E_NOT_CPU_VISIBLE);
    lock_fails(c, plain, 0, GMC_E_NOT_CPU_VISIBLE);
    uint8_t b[4];
    assert_status(gmc_alloc_read(c, plain, 0, b, sizeof b), GMC_E_NOT_CPU_VISIBLE);
    t_close(dev);
}

/* ------------------------- ExistingSysMem never aliases gmc's memory */

static _Alignas(4096) uint8_t user_mem[8 * 4096];

static int create_existing(gmc_client *c, const void *p, uint64_t size, uint32_t flags,
                           uint32_t kmt, gmc_handle *h)
{
    struct gmc_alloc_desc d;
    t_desc(&d, size, GMC_ALLOC_CPU_VISIBLE | flags, BIT(SEG_VIS));
    d.kmt_flags = kmt;
    d.system_mem = p;
    d.system_mem_size = size;
    *h = 0xDEADu;
    return gmc_alloc_create(c, &d, h);
}

/* A range overlapping memory gmc owns (a system copy, hence a system lock
 * mapping, anything in its pool) or has already wrapped for another
 * allocation is refused with GMC_E_SYSMEM_ALIASES, with no handle and no
 * state change: two allocations never alias the same pages. */
static void test_existing_never_aliases(void **state)
{
    (void)state;
    gmc_device *dev = t_open(NULL);
    gmc_client *c = t_client(dev);
    /* a system lock mapping: PermanentSysMem maps its kept copy */
    gmc_handle perm = t_new(c, 4 * PG, GMC_ALLOC_CPU_VISIBLE | GMC_ALLOC_PERMANENT_SYS_MEM, BIT(SEG_VIS));
    struct gmc_lock_map m;
    ok(gmc_lock(c, perm, 0, &m));
    assert_int_equal(m.kind, GMC_LOCK_MAP_SYSTEM);
    uint8_t *mp = m.ptr;
    t_pattern(mp, 4 * PG, 41);
    ok(gmc_unlock(c, perm));
    uint64_t page_ins = t_stats(dev).page_ins;
    gmc_handle h;
    const uint32_t E = GMC_ALLOC_EXISTING_SYS_MEM, K = GMC_ALLOC_EXISTING_KERNEL_SYS_MEM;
    const uint32_t KMT = GMC_KMT_EXISTING_SYS_MEM | GMC_KMT_STANDARD_ALLOCATION | GMC_KMT_CREATE_SHARED |
                         GMC_KMT_CREATE_RESOURCE | GMC_KMT_CROSS_ADAPTER;
    assert_status(create_existing(c, mp, 4 * PG, E, 0, &h), GMC_E_SYSMEM_ALIASES);
    assert_int_equal(h, GMC_HANDLE_NONE);
    assert_status(create_existing(c, mp + PG, PG, E, 0, &h), GMC_E_SYSMEM_ALIASES);
    assert_status(create_existing(c, mp + 3 * PG, PG, K, 0, &h), GMC_E_SYSMEM_ALIASES);
    assert_status(create_existing(c, mp, 2 * PG, 0, KMT, &h), GMC_E_SYSMEM_ALIASES);
    assert_int_equal(t_stats(dev).page_ins, page_ins);
    /* the refused creations changed nothing: the copy still reads back */
    uint8_t back[4 * PG];
    ok(gmc_alloc_read(c, perm, 0, back, sizeof back));
    assert_true(t_bytes_are(back, sizeof back, 41));

    /* the caller's own memory: once, then never again while it is wrapped */
    gmc_handle u1, u2, u3;
    ok(create_existing(c, user_mem, 4 * PG, E, 0, &u1));
    assert_status(create_existing(c, user_mem, 4 * PG, E, 0, &h), GMC_E_SYSMEM_ALIASES);
    assert_status(create_existing(c, user_mem + 3 * PG, 2 * PG, K, 0, &h), GMC_E_SYSMEM_ALIASES);
    assert_status(create_existing(c, user_mem + 3 * PG, 2 * PG, 0, KMT, &h),
                  GMC_E_SYSMEM_ALIASES);
    /* the pages right after it do not overlap: allowed */
    ok(create_existing(c, user_mem + 4 * PG, 4 * PG, E, 0, &u2));
    /* freed, the range may be wrapped again */
    ok(gmc_alloc_destroy(c, u1));
    ok(create_existing(c, user_mem, 4 * PG, K, 0, &u3));
    assert_status(gmc_alloc_create(c, NULL, &h), GMC_E_NULL_POINTER);
    ok(gmc_alloc_destroy(c, u2));
    ok(gmc_alloc_destroy(c, u3));
    t_close(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flag_rules),
        cmocka_unit_test(test_lock_access),
        cmocka_unit_test(test_map_kinds),
        cmocka_unit_test(test_donot_wait),
        cmocka_unit_test(test_discard_rename),
        cmocka_unit_test(test_donot_evict),
        cmocka_unit_test(test_locked_never_moves),
        cmocka_unit_test(test_submit_locked),
        cmocka_unit_test(test_cpu_accessible),
        cmocka_unit_test(test_existing_never_aliases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
