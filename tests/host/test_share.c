/*
 * test_share.c - sharing across clients (seed 002): global share handles
 * (CreateShared), NT handles (NtSecuritySharing), NonSecure and
 * RestrictSharedAccess, refused opens with their exact status and no state
 * change, and the creator-only lock permission.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gmc.h"

#define SHARED (GMC_KMT_CREATE_RESOURCE | GMC_KMT_CREATE_SHARED)

#define assert_status(got, want) assert_status_at((got), (want), __FILE__, __LINE__)
static void assert_status_at(int got, int want, const char *file, int line)
{
    if (got != want)
        fail_msg("%s:%d: expected %s, got %s", file, line, gmc_status_name(want), gmc_status_name(got));
}

struct world {
    gmc_device *dev;
    gmc_client *creator;   /* secure, owner 1 */
    gmc_client *peer;      /* secure, owner 1 */
    gmc_client *stranger;  /* secure, owner 2 */
    gmc_client *sandboxed; /* non-secure, owner 1 */
    gmc_client *sandboxed2; /* non-secure, owner 2 */
};

static gmc_client *client(gmc_device *dev, uint32_t flags, uint32_t owner)
{
    struct gmc_client_desc d = { flags, owner };
    gmc_client *c = NULL;
    assert_int_equal(gmc_client_create(dev, &d, &c), GMC_OK);
    return c;
}

static void world_open(struct world *w)
{
    assert_int_equal(gmc_device_open("sim", &w->dev), GMC_OK);
    w->creator = client(w->dev, 0, 1);
    w->peer = client(w->dev, 0, 1);
    w->stranger = client(w->dev, 0, 2);
    w->sandboxed = client(w->dev, GMC_CLIENT_NON_SECURE, 1);
    w->sandboxed2 = client(w->dev, GMC_CLIENT_NON_SECURE, 2);
}

static gmc_handle create(gmc_client *c, uint32_t kmt)
{
    struct gmc_alloc_desc d;
    gmc_alloc_desc_init(&d);
    d.size = 0x4000;
    d.flags = GMC_ALLOC_CPU_VISIBLE;
    d.kmt_flags = kmt;
    d.supported_segments = GMC_SEGMENT_BIT(1);
    gmc_handle h = 0;
    int rc = gmc_alloc_create(c, &d, &h);
    if (rc != GMC_OK)
        fail_msg("create kmt %#x: %s", kmt, gmc_status_name(rc));
    return h;
}

static uint64_t handles(const gmc_device *dev)
{
    struct gmc_device_info di;
    assert_int_equal(gmc_device_query(dev, &di), GMC_OK);
    return di.handles;
}

static uint64_t allocations(const gmc_device *dev)
{
    struct gmc_device_info di;
    assert_int_equal(gmc_device_query(dev, &di), GMC_OK);
    return di.allocations;
}

static gmc_share_handle global_of(gmc_client *c, gmc_handle h)
{
    struct gmc_alloc_info ai;
    assert_int_equal(gmc_alloc_query(c, h, &ai), GMC_OK);
    return ai.share_handle;
}

/* Open, or be refused with nothing changed. */
static gmc_handle open_as(const struct world *w, gmc_client *c, gmc_share_handle sh, int want)
{
    uint64_t before = handles(w->dev);
    gmc_handle h = 99;
    int rc = gmc_alloc_open(c, sh, &h);
    assert_status(rc, want);
    if (want != GMC_OK) {
        assert_int_equal(h, GMC_HANDLE_NONE);
        assert_int_equal(handles(w->dev), before);
    } else {
        assert_true(h != GMC_HANDLE_NONE);
        assert_int_equal(handles(w->dev), before + 1u);
    }
    return h;
}

static void test_global_share(void **state)
{
    (void)state;
    struct world w;
    world_open(&w);
    gmc_handle h = create(w.creator, SHARED);
    gmc_share_handle sh = global_of(w.creator, h);
    assert_true(sh != GMC_HANDLE_NONE);
    assert_int_equal(handles(w.dev), 2); /* the client's handle and the share handle */

    gmc_handle hp = open_as(&w, w.peer, sh, GMC_OK);
    gmc_handle hs = open_as(&w, w.stranger, sh, GMC_OK); /* no restriction: any owner */
    struct gmc_alloc_info a, b;
    assert_int_equal(gmc_alloc_query(w.creator, h, &a), GMC_OK);
    assert_int_equal(gmc_alloc_query(w.peer, hp, &b), GMC_OK);
    assert_int_equal(a.gpu_address, b.gpu_address);
    assert_int_equal(a.size, b.size);
    assert_int_equal(b.open_count, 3);
    assert_true(a.state & GMC_ALLOC_STATE_CREATOR);
    assert_false(b.state & GMC_ALLOC_STATE_CREATOR);
    assert_true(b.state & GMC_ALLOC_STATE_SHARED);
    assert_int_equal(allocations(w.dev), 1);

    /* handles are per client: the peer's handle means nothing to others */
    assert_status(gmc_alloc_query(w.creator, hp, &b), GMC_E_BAD_HANDLE);
    assert_status(gmc_alloc_destroy(w.stranger, hp), GMC_E_BAD_HANDLE);
    /* a share handle is not an allocation handle, nor the reverse */
    assert_status(gmc_alloc_query(w.peer, sh, &b), GMC_E_BAD_HANDLE);
    open_as(&w, w.peer, hp, GMC_E_BAD_HANDLE);
    /* a sandboxed process may not open an allocation created without NonSecure */
    open_as(&w, w.sandboxed, sh, GMC_E_SHARE_NOT_SECURE);

    /* only the creator locks it */
    assert_int_equal(gmc_alloc_can_lock(w.creator, h, 0), GMC_OK);
    assert_status(gmc_alloc_can_lock(w.peer, hp, 0), GMC_E_NOT_CREATOR);
    assert_status(gmc_alloc_can_lock(w.peer, hp, GMC_LOCK_READ_ONLY), GMC_E_NOT_CREATOR);
    assert_status(gmc_alloc_can_write(w.stranger, hs), GMC_E_NOT_CREATOR);
    unsigned char buf[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, back[8];
    assert_status(gmc_alloc_write(w.peer, hp, 0, buf, sizeof(buf)), GMC_E_NOT_CREATOR);
    assert_status(gmc_alloc_read(w.peer, hp, 0, back, sizeof(back)), GMC_E_NOT_CREATOR);
    assert_int_equal(gmc_alloc_write(w.creator, h, 0, buf, sizeof(buf)), GMC_OK);
    assert_int_equal(gmc_alloc_read(w.creator, h, 0, back, sizeof(back)), GMC_OK);
    assert_memory_equal(buf, back, sizeof(buf));

    /* the creator closes its handle: the allocation lives on for the others */
    assert_int_equal(gmc_alloc_destroy(w.creator, h), GMC_OK);
    assert_int_equal(allocations(w.dev), 1);
    assert_int_equal(gmc_alloc_query(w.peer, hp, &b), GMC_OK);
    assert_int_equal(b.open_count, 2);
    assert_status(gmc_alloc_can_lock(w.peer, hp, 0), GMC_E_NOT_CREATOR);
    /* ... and may reopen it by the share handle, and lock it again */
    h = open_as(&w, w.creator, sh, GMC_OK);
    assert_int_equal(gmc_alloc_can_lock(w.creator, h, 0), GMC_OK);
    assert_int_equal(gmc_alloc_destroy(w.creator, h), GMC_OK);

    /* the last handle takes the allocation and its share handle with it */
    assert_int_equal(gmc_alloc_destroy(w.peer, hp), GMC_OK);
    assert_int_equal(gmc_alloc_destroy(w.stranger, hs), GMC_OK);
    assert_int_equal(allocations(w.dev), 0);
    assert_int_equal(handles(w.dev), 0);
    open_as(&w, w.peer, sh, GMC_E_BAD_HANDLE);
    struct gmc_segment_info si;
    assert_int_equal(gmc_segment_query(w.dev, 1, &si), GMC_OK);
    assert_int_equal(si.used, 0);
    gmc_device_close(w.dev);
}

static void test_not_shared(void **state)
{
    (void)state;
    struct world w;
    world_open(&w);
    gmc_handle h = create(w.creator, 0);
    assert_int_equal(global_of(w.creator, h), GMC_HANDLE_NONE);
    gmc_share_handle nt = 5;
    assert_status(gmc_alloc_share_nt(w.creator, h, w.peer, &nt), GMC_E_NOT_SHARED);
    assert_int_equal(nt, 0);
    /* an allocation handle value is not something another client may open */
    open_as(&w, w.peer, h, GMC_E_BAD_HANDLE);
    /* a CreateShared allocation without NtSecuritySharing has no NT handles */
    gmc_handle g = create(w.creator, SHARED);
    assert_status(gmc_alloc_share_nt(w.creator, g, w.peer, &nt), GMC_E_NOT_SHARED);
    assert_int_equal(handles(w.dev), 3);
    /* NonSecure without CreateShared is allowed (the seed states no
     * requirement; -1208 retired) and has no effect: nothing to share */
    struct gmc_alloc_desc d;
    gmc_alloc_desc_init(&d);
    d.size = 0x1000;
    d.supported_segments = GMC_SEGMENT_BIT(1);
    d.kmt_flags = GMC_KMT_NON_SECURE;
    gmc_handle x;
    assert_status(gmc_alloc_create(w.creator, &d, &x), GMC_OK);
    struct gmc_alloc_info xi;
    assert_status(gmc_alloc_query(w.creator, x, &xi), GMC_OK);
    assert_int_equal(xi.kmt_flags, GMC_KMT_NON_SECURE);
    assert_int_equal(xi.share_handle, 0);
    assert_status(gmc_alloc_share_nt(w.creator, x, w.peer, &nt), GMC_E_NOT_SHARED);
    assert_status(gmc_alloc_destroy(w.creator, x), GMC_OK);
    assert_int_equal(handles(w.dev), 3);
    /* the other sharing flags need CreateShared (the rule table says so) */
    d.kmt_flags = GMC_KMT_NT_SECURITY_SHARING | GMC_KMT_CREATE_RESOURCE;
    assert_status(gmc_alloc_create(w.creator, &d, &x), GMC_E_RULE_NTSECURITYSHARING_NEEDS_CREATESHARED);
    d.kmt_flags = GMC_KMT_CREATE_SHARED;
    assert_status(gmc_alloc_create(w.creator, &d, &x), GMC_E_RULE_CREATESHARED_NEEDS_CREATERESOURCE);
    gmc_device_close(w.dev);
}

struct opencase {
    const char *what;
    uint32_t kmt;
    int peer, stranger, sandboxed, sandboxed2; /* expected open status */
};

static void test_nonsecure_and_restricted(void **state)
{
    (void)state;
    const struct opencase cases[] = {
        { "shared", SHARED, GMC_OK, GMC_OK, GMC_E_SHARE_NOT_SECURE, GMC_E_SHARE_NOT_SECURE },
        { "NonSecure", SHARED | GMC_KMT_NON_SECURE, GMC_OK, GMC_OK, GMC_OK, GMC_OK },
        { "RestrictSharedAccess", SHARED | GMC_KMT_RESTRICT_SHARED_ACCESS, GMC_OK, GMC_E_SHARE_RESTRICTED,
          GMC_E_SHARE_NOT_SECURE, GMC_E_SHARE_NOT_SECURE },
        { "NonSecure + RestrictSharedAccess", SHARED | GMC_KMT_NON_SECURE | GMC_KMT_RESTRICT_SHARED_ACCESS,
          GMC_OK, GMC_E_SHARE_RESTRICTED, GMC_OK, GMC_E_SHARE_RESTRICTED },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct opencase *c = &cases[i];
        struct world w;
        world_open(&w);
        gmc_handle h = create(w.creator, c->kmt);
        gmc_share_handle sh = global_of(w.creator, h);
        gmc_client *who[4] = { w.peer, w.stranger, w.sandboxed, w.sandboxed2 };
        int want[4] = { c->peer, c->stranger, c->sandboxed, c->sandboxed2 };
        for (unsigned k = 0; k < 4; k++) {
            gmc_handle o = 0;
            int rc = gmc_alloc_open(who[k], sh, &o);
            if (rc != want[k])
                fail_msg("%s, client %u: expected %s, got %s", c->what, k, gmc_status_name(want[k]),
                         gmc_status_name(rc));
            if (rc == GMC_OK)
                assert_status(gmc_alloc_can_lock(who[k], o, GMC_LOCK_READ_ONLY), GMC_E_NOT_CREATOR);
        }
        gmc_device_close(w.dev);
    }
}

static void test_nt_sharing(void **state)
{
    (void)state;
    struct world w;
    world_open(&w);
    gmc_handle h = create(w.creator, SHARED | GMC_KMT_NT_SECURITY_SHARING);
    assert_int_equal(global_of(w.creator, h), GMC_HANDLE_NONE); /* no global D3DKMT_HANDLE */
    assert_int_equal(handles(w.dev), 1);

    gmc_share_handle to_peer = 0, to_stranger = 0, to_sandboxed = 0;
    assert_int_equal(gmc_alloc_share_nt(w.creator, h, w.peer, &to_peer), GMC_OK);
    assert_int_equal(gmc_alloc_share_nt(w.creator, h, w.stranger, &to_stranger), GMC_OK);
    assert_int_equal(gmc_alloc_share_nt(w.creator, h, w.sandboxed, &to_sandboxed), GMC_OK);
    assert_true(to_peer != to_stranger);
    assert_int_equal(handles(w.dev), 4);

    /* an NT handle opens in the client it was made for, and nowhere else */
    open_as(&w, w.stranger, to_peer, GMC_E_BAD_HANDLE);
    open_as(&w, w.creator, to_peer, GMC_E_BAD_HANDLE);
    gmc_handle hp = open_as(&w, w.peer, to_peer, GMC_OK);
    open_as(&w, w.stranger, to_stranger, GMC_OK);
    /* the security checks still apply to the target */
    open_as(&w, w.sandboxed, to_sandboxed, GMC_E_SHARE_NOT_SECURE);
    assert_status(gmc_alloc_can_lock(w.peer, hp, 0), GMC_E_NOT_CREATOR);

    /* a holder may share further; a client of another device may not be named */
    gmc_device *other = NULL;
    assert_int_equal(gmc_device_open("sim", &other), GMC_OK);
    gmc_client *alien = client(other, 0, 1);
    gmc_share_handle nt = 3;
    assert_status(gmc_alloc_share_nt(w.peer, hp, alien, &nt), GMC_E_INVALID_ARG);
    assert_int_equal(nt, 0);
    assert_status(gmc_alloc_share_nt(w.peer, hp, NULL, &nt), GMC_E_NULL_POINTER);
    assert_status(gmc_alloc_share_nt(w.peer, hp, w.peer, NULL), GMC_E_NULL_POINTER);
    assert_int_equal(gmc_alloc_share_nt(w.peer, hp, w.sandboxed2, &nt), GMC_OK);
    open_as(&w, w.sandboxed2, nt, GMC_E_SHARE_NOT_SECURE);

    /* the NT handles die with the allocation */
    gmc_client_destroy(w.creator);
    gmc_client_destroy(w.peer);
    gmc_client_destroy(w.stranger);
    assert_int_equal(allocations(w.dev), 0);
    assert_int_equal(handles(w.dev), 0);
    open_as(&w, w.sandboxed, to_sandboxed, GMC_E_BAD_HANDLE);
    /* Models are destroyed oldest first: libgmc_sim on Verilator 5.006 hangs
     * destroying a model while an older one lives (reported). */
    gmc_device_close(w.dev);
    gmc_device_close(other);
}

/* A destroyed creator's serial is never reused: nobody inherits the lock right. */
static void test_creator_gone(void **state)
{
    (void)state;
    struct world w;
    world_open(&w);
    gmc_handle h = create(w.creator, SHARED);
    gmc_share_handle sh = global_of(w.creator, h);
    gmc_handle hp = open_as(&w, w.peer, sh, GMC_OK);
    gmc_client_destroy(w.creator);
    assert_int_equal(allocations(w.dev), 1);
    gmc_client *late = client(w.dev, 0, 1);
    gmc_handle hl = open_as(&w, late, sh, GMC_OK);
    assert_status(gmc_alloc_can_lock(late, hl, 0), GMC_E_NOT_CREATOR);
    assert_status(gmc_alloc_can_lock(w.peer, hp, 0), GMC_E_NOT_CREATOR);
    struct gmc_alloc_info ai;
    assert_int_equal(gmc_alloc_query(late, hl, &ai), GMC_OK);
    assert_false(ai.state & GMC_ALLOC_STATE_CREATOR);
    assert_int_equal(ai.open_count, 2);
    gmc_device_close(w.dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_global_share),
        cmocka_unit_test(test_not_shared),
        cmocka_unit_test(test_nonsecure_and_restricted),
        cmocka_unit_test(test_nt_sharing),
        cmocka_unit_test(test_creator_gone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
