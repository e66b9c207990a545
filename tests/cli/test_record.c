/*
 * test_record.c - recording a program's calls (gmc_device_record,
 * GMC_RECORD; docs/trace-format.md, "Recording") and replaying the trace
 * it writes with the gmc command's own runner (trace_load + exec_run, what
 * `gmc replay` does).
 *
 * The program below uses the library through the public API only: two
 * clients, shared allocations (global and NT share handles), residency,
 * locks with small and large writes, GPU copies and fills, a fence wait,
 * reads, priorities, budgets, hibernate and resume, and calls that fail.
 * The replay of its recording must answer every call as the program saw
 * it, and return the same bytes to every read: the decision log's read
 * hashes are compared with the program's own, in order. Recording the
 * replay gives the same trace again, byte for byte, and the same digest.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "exec.h"
#include "gmc.h"
#include "timeline.h"
#include "trace.h"

#define MAX_READS 64

/* What the program read: the FNV-1a of each successful read, in order. */
struct reads {
    unsigned n;
    uint64_t fnv[MAX_READS];
};

static char dir[256];

static void path_in(char *buf, size_t n, const char *sub, const char *name)
{
    snprintf(buf, n, "%s/%s/%s", dir, sub, name);
}

static uint64_t fnv(const void *p, size_t n)
{
    return tl_fnv(TL_FNV_INIT, p, n);
}

static void read_ok(gmc_client *c, gmc_handle h, uint64_t off, size_t len, int locked, struct reads *rd)
{
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    int st = locked ? gmc_lock_read(c, h, off, buf, len) : gmc_alloc_read(c, h, off, buf, len);
    assert_int_equal(st, GMC_OK);
    assert_true(rd->n < MAX_READS);
    rd->fnv[rd->n++] = fnv(buf, len);
    free(buf);
}

static void noop_callback(void *user, gmc_handle h, int resident)
{
    (void)user;
    (void)h;
    (void)resident;
}

/* The program: every kind of call the trace language has, on "sim". */
static void program(gmc_device *dev, struct reads *rd, int odd)
{
    gmc_client *game = NULL, *tool = NULL;
    struct gmc_client_desc td = { .flags = 0, .owner = 7 };
    assert_int_equal(gmc_client_create(dev, NULL, &game), GMC_OK);
    assert_int_equal(gmc_client_create(dev, &td, &tool), GMC_OK);

    struct gmc_alloc_desc d;
    gmc_alloc_desc_init(&d);
    d.size = 64 * 1024;
    d.supported_segments = GMC_SEGMENT_BIT(1);
    d.flags = GMC_ALLOC_CPU_VISIBLE;
    d.kmt_flags = GMC_KMT_CREATE_SHARED | GMC_KMT_CREATE_RESOURCE;
    gmc_handle staging, tex, nt, open_g, open_nt;
    assert_int_equal(gmc_alloc_create(game, &d, &staging), GMC_OK);
    gmc_alloc_desc_init(&d);
    d.size = 256 * 1024 + 100; /* not a page multiple */
    d.supported_segments = GMC_SEGMENT_BIT(1) | GMC_SEGMENT_BIT(2);
    d.preferred[0].id = 2;
    d.preferred[0].top_down = 1;
    d.eviction_segments = GMC_SEGMENT_BIT(3);
    d.priority = GMC_PRIORITY_HIGH;
    d.kmt_flags = GMC_KMT_ZEROED;
    assert_int_equal(gmc_alloc_create(game, &d, &tex), GMC_OK);
    gmc_alloc_desc_init(&d);
    d.size = 32 * 1024;
    d.supported_segments = GMC_SEGMENT_BIT(1);
    d.flags = GMC_ALLOC_CPU_VISIBLE;
    d.kmt_flags = GMC_KMT_CREATE_SHARED | GMC_KMT_CREATE_RESOURCE | GMC_KMT_NT_SECURITY_SHARING;
    assert_int_equal(gmc_alloc_create(game, &d, &nt), GMC_OK);
    /* a descriptor that breaks a rule: recorded with its status */
    gmc_alloc_desc_init(&d);
    d.size = 4096;
    d.supported_segments = GMC_SEGMENT_BIT(1);
    d.alignment = 3;
    gmc_handle bad = 1;
    int st = gmc_alloc_create(game, &d, &bad);
    assert_true(st < 0);

    /* sharing: the global handle, and an NT handle for tool */
    struct gmc_alloc_info ai;
    assert_int_equal(gmc_alloc_query(game, staging, &ai), GMC_OK);
    assert_int_equal(gmc_alloc_open(tool, ai.share_handle, &open_g), GMC_OK);
    gmc_share_handle sh;
    assert_int_equal(gmc_alloc_share_nt(game, nt, tool, &sh), GMC_OK);
    assert_int_equal(gmc_alloc_open(tool, sh, &open_nt), GMC_OK);

    gmc_handle both[2] = { staging, tex };
    assert_int_equal(gmc_make_resident(game, both, 2, NULL), GMC_OK);
    assert_int_equal(gmc_make_resident(tool, &open_nt, 1, NULL), GMC_OK);

    /* a lock with a small and a large write, read back under the lock */
    struct gmc_lock_map map;
    assert_int_equal(gmc_lock(game, staging, GMC_LOCK_WRITE_ONLY, &map), GMC_OK);
    uint8_t small[16], big[8192];
    for (unsigned i = 0; i < sizeof(small); i++)
        small[i] = (uint8_t)(0xA0 + i);
    for (unsigned i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)(i * 7u + (i >> 8));
    assert_int_equal(gmc_lock_write(game, staging, 100, small, sizeof(small)), GMC_OK);
    assert_int_equal(gmc_lock_write(game, staging, 4096, big, sizeof(big)), GMC_OK);
    assert_int_equal(gmc_lock_write(game, staging, 32768, big, sizeof(big)), GMC_OK); /* the same bytes again */
    assert_int_equal(gmc_alloc_write(game, staging, 200, small, 8), GMC_OK); /* through the lock it holds */
    assert_int_equal(gmc_lock_read(game, staging, 0, small, sizeof(small)), GMC_E_PERMISSION); /* WriteOnly */
    assert_int_equal(gmc_unlock(game, staging), GMC_OK);
    assert_int_equal(gmc_unlock(game, staging), GMC_E_NOT_LOCKED);

    /* GPU work: staging into tex, a fill, then a wait for the fence */
    struct gmc_submit_ref refs[2] = { { staging, 0 }, { tex, GMC_REF_WRITE } };
    struct gmc_gpu_op ops[2] = {
        { .kind = GMC_GPU_COPY, .src = 0, .dst = 1, .src_offset = 0, .dst_offset = 8192, .size = 65536 },
        { .kind = GMC_GPU_FILL, .dst = 1, .dst_offset = 0, .size = 4096, .pattern = 0x5a5a1234u },
    };
    struct gmc_submit s = { refs, 2, ops, 2 };
    uint64_t fence = 0;
    assert_int_equal(gmc_submit(game, &s, &fence), GMC_OK);
    assert_int_equal(gmc_fence_wait(dev, fence, 100000), GMC_OK);

    /* tex is not CPU-visible: refused, and recorded as refused */
    assert_int_equal(gmc_alloc_read(game, tex, 0, small, sizeof(small)), GMC_E_NOT_CPU_VISIBLE);
    read_ok(game, staging, 0, 64 * 1024, 0, rd);
    uint8_t w0[300];
    assert_int_equal(gmc_alloc_read(tool, open_g, 4000, w0, sizeof(w0)), GMC_E_NOT_CREATOR);
    read_ok(game, staging, 4000, 300, 0, rd);
    uint8_t w[40];
    memset(w, 0x3c, sizeof(w));
    assert_int_equal(gmc_alloc_write(tool, open_nt, 10, w, sizeof(w)), GMC_E_NOT_CREATOR);
    assert_int_equal(gmc_alloc_write(game, nt, 10, w, sizeof(w)), GMC_OK);
    read_ok(game, nt, 0, 64, 0, rd);

    /* priorities, budgets, DirectFlip (no DirectFlip segment here) */
    assert_int_equal(gmc_alloc_set_priority(game, tex, GMC_PRIORITY_LOW), GMC_OK);
    assert_int_equal(gmc_alloc_set_priority(game, tex, 0), GMC_E_RULE_PRIORITY_ZERO);
    assert_int_equal(gmc_client_set_budget(game, GMC_SEGMENT_GROUP_LOCAL, 1u << 20), GMC_OK);
    assert_int_equal(gmc_client_set_budget(game, GMC_SEGMENT_GROUP_LOCAL, GMC_BUDGET_NONE), GMC_OK);
    assert_int_equal(gmc_alloc_pin_direct_flip(game, staging), GMC_E_NOT_DIRECT_FLIP);

    /* calls the trace cannot express: comments */
    if (odd) {
        assert_int_equal(gmc_client_set_residency_callback(game, noop_callback, NULL), GMC_OK);
        assert_int_equal(gmc_lock(game, (gmc_handle)0x123456789ull, 0, &map), GMC_E_BAD_HANDLE);
    }

    /* hibernate and back: tex's content comes back from system memory */
    assert_int_equal(gmc_evict(game, &tex, 1), GMC_OK);
    assert_int_equal(gmc_evict(game, &tex, 1), GMC_E_NOT_RESIDENT);
    assert_int_equal(gmc_device_power(dev, GMC_POWER_HIBERNATE, NULL), GMC_OK);
    assert_int_equal(gmc_make_resident(game, &tex, 1, NULL), GMC_E_POWER_STATE);
    assert_int_equal(gmc_device_resume(dev, NULL), GMC_OK);
    assert_int_equal(gmc_make_resident(game, &tex, 1, NULL), GMC_OK);
    struct gmc_submit_ref r2[2] = { { tex, 0 }, { staging, GMC_REF_WRITE } };
    struct gmc_gpu_op back = { .kind = GMC_GPU_COPY, .src = 0, .dst = 1, .src_offset = 0, .dst_offset = 0,
                               .size = 16384 };
    struct gmc_submit s2 = { r2, 2, &back, 1 };
    assert_int_equal(gmc_submit(game, &s2, &fence), GMC_OK);
    assert_int_equal(gmc_fence_wait(dev, fence, 100000), GMC_OK);
    read_ok(game, staging, 0, 16384, 0, rd);

    assert_int_equal(gmc_alloc_destroy(tool, open_g), GMC_OK);
    if (odd) /* a comment: no live handle */
        assert_int_equal(gmc_alloc_destroy(tool, open_g), GMC_E_BAD_HANDLE);
    gmc_client_destroy(tool);
    assert_int_equal(gmc_alloc_destroy(game, tex), GMC_OK);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1u);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return b;
}

static unsigned count(const char *text, const char *what)
{
    unsigned n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}

/* Remove " line N" from every "step S line N ..." of a decision log. */
static void drop_line_numbers(char *log)
{
    char *w = log;
    for (char *p = log; *p != '\0';) {
        if (strncmp(p, " line ", 6) == 0) {
            p += 6;
            while (*p >= '0' && *p <= '9')
                p++;
            continue;
        }
        *w++ = *p++;
    }
    *w = '\0';
}

/* Replay trace `path` as gmc replay does; the decision log goes to logpath.
 * Returns the exit code; *digest and the timeline's counts. */
static int replay(const char *path, const char *logpath, struct timeline *tl)
{
    char err[1024];
    struct trace *t = NULL;
    if (trace_load(path, 0, 0, &t, err, sizeof(err)) != GMC_OK)
        fail_msg("%s", err);
    FILE *log = fopen(logpath, "w");
    assert_non_null(log);
    struct exec_opts o = { .device = t->device ? t->device : "sim", .log = log };
    int rc = exec_run(t, &o, tl, err, sizeof(err));
    fclose(log);
    if (rc != 0)
        fprintf(stderr, "replay %s: %s %s\n", path, err, tl->first_error);
    trace_free(t);
    tl_free(tl);
    return rc;
}

/* The read hashes of a decision log, in order. */
static unsigned log_reads(const char *logpath, uint64_t *out, unsigned max)
{
    char *text = slurp(logpath, NULL);
    unsigned n = 0;
    for (char *p = text; (p = strstr(p, "  read ")) != NULL; p++) {
        char *f = strstr(p, " fnv ");
        assert_non_null(f);
        assert_true(n < max);
        out[n++] = strtoull(f + 5, NULL, 16);
    }
    free(text);
    return n;
}

static void record_program(const char *sub, uint32_t flags, struct reads *rd, int odd)
{
    char p[512], d[512];
    snprintf(d, sizeof(d), "%s/%s", dir, sub);
    mkdir(d, 0700);
    path_in(p, sizeof(p), sub, "rec.trace");
    gmc_device *dev = NULL;
    assert_int_equal(gmc_device_open("sim", &dev), GMC_OK);
    assert_int_equal(gmc_device_record(dev, p, flags), GMC_OK);
    program(dev, rd, odd);
    assert_int_equal(gmc_device_record(dev, NULL, 0), GMC_OK);
    gmc_device_close(dev);
}

static void test_record_replay(void **state)
{
    (void)state;
    struct reads rd = { 0 };
    record_program("a", 0, &rd, 1);
    assert_int_equal(rd.n, 4);
    char tp[512], lp[512], dp[512];
    path_in(tp, sizeof(tp), "a", "rec.trace");
    path_in(lp, sizeof(lp), "a", "replay.log");
    path_in(dp, sizeof(dp), "a", "rec.trace.data");
    char *text = slurp(tp, NULL);
    /* one side file holds the large writes' bytes, the same bytes once */
    size_t dlen = 0;
    free(slurp(dp, &dlen));
    assert_int_equal(dlen, 8192 + 40); /* the 8 KiB once, and the 40-byte write */
    assert_int_equal(count(text, " data=@0\n"), 2);
    assert_int_equal(count(text, "# not recorded: "), 3); /* callback, unknown handle, a closed handle */
    assert_int_equal(count(text, " hash=0x"), 4);
    assert_non_null(strstr(text, "\ndevice sim\n"));
    assert_non_null(strstr(text, "\nset-priority a2 priority=0x00000000 client=c1 expect=RULE_PRIORITY_ZERO\n"));
    free(text);

    /* the replay answers every call as the program saw it, and every read
     * returns the bytes the program read */
    struct timeline tl;
    assert_int_equal(replay(tp, lp, &tl), 0);
    assert_int_equal(tl.ops_failed, 0);
    uint64_t got[MAX_READS];
    assert_int_equal(log_reads(lp, got, MAX_READS), rd.n);
    for (unsigned i = 0; i < rd.n; i++)
        assert_int_equal(got[i], rd.fnv[i]);

    /* the replay of a recording made the same decisions as the replay of
     * the recording of that replay (the logs differ only in the line
     * numbers, which the comments shift) */
    char tp2[512], lp2[512], d2[512];
    snprintf(d2, sizeof(d2), "%s/b", dir);
    mkdir(d2, 0700);
    path_in(tp2, sizeof(tp2), "b", "rec.trace");
    path_in(lp2, sizeof(lp2), "b", "replay.log");
    setenv("GMC_RECORD", tp2, 1);
    assert_int_equal(replay(tp, lp2, &tl), 0);
    unsetenv("GMC_RECORD");
    assert_int_equal(replay(tp2, lp2, &tl), 0);
    char *l1 = slurp(lp, NULL), *l2 = slurp(lp2, NULL);
    drop_line_numbers(l1);
    drop_line_numbers(l2);
    assert_string_equal(l1, l2);
    free(l1);
    free(l2);
    /* the reads check the bytes: one changed byte of write data fails the
     * replay at a read */
    FILE *f = fopen(dp, "r+b");
    assert_non_null(f);
    fseek(f, 5000, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 5000, SEEK_SET);
    fputc(c ^ 0x01, f);
    fclose(f);
    assert_int_equal(replay(tp, lp, &tl), 1);
    assert_non_null(strstr(tl.first_error, "GMC_E_CORRUPT"));
    assert_non_null(strstr(tl.first_error, "(hash=)"));
}

/* Without calls the trace cannot express, recording the replay of a
 * recording writes the same trace and data again (a fixed point), and
 * replaying both gives the same digest (the same file name, in another
 * directory: the log names the file). */
static void test_record_fixed_point(void **state)
{
    (void)state;
    struct reads rd = { 0 };
    record_program("d", 0, &rd, 0);
    char tp[512], lp[512], dp[512], tp2[512], lp2[512], dp2[512], d2[512];
    path_in(tp, sizeof(tp), "d", "rec.trace");
    path_in(lp, sizeof(lp), "d", "replay.log");
    path_in(dp, sizeof(dp), "d", "rec.trace.data");
    snprintf(d2, sizeof(d2), "%s/e", dir);
    mkdir(d2, 0700);
    path_in(tp2, sizeof(tp2), "e", "rec.trace");
    path_in(lp2, sizeof(lp2), "e", "replay.log");
    path_in(dp2, sizeof(dp2), "e", "rec.trace.data");
    struct timeline tl;
    setenv("GMC_RECORD", tp2, 1);
    assert_int_equal(replay(tp, lp, &tl), 0);
    unsetenv("GMC_RECORD");
    uint64_t digest = tl.digest;
    uint64_t got[MAX_READS];
    assert_int_equal(log_reads(lp, got, MAX_READS), rd.n);
    for (unsigned i = 0; i < rd.n; i++)
        assert_int_equal(got[i], rd.fnv[i]);
    size_t n1, n2;
    char *t1 = slurp(tp, &n1), *t2 = slurp(tp2, &n2);
    assert_null(strstr(t1, "# not recorded"));
    assert_int_equal(n1, n2);
    assert_memory_equal(t1, t2, n1);
    free(t1);
    free(t2);
    t1 = slurp(dp, &n1);
    t2 = slurp(dp2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(t1, t2, n1);
    free(t1);
    free(t2);
    assert_int_equal(replay(tp2, lp2, &tl), 0);
    assert_int_equal(tl.digest, digest);
}

/* GMC_RECORD_INLINE: one file, every write's bytes in it. */
static void test_record_inline(void **state)
{
    (void)state;
    struct reads rd = { 0 };
    record_program("c", GMC_RECORD_INLINE, &rd, 1);
    char tp[512], lp[512], dp[512];
    path_in(tp, sizeof(tp), "c", "rec.trace");
    path_in(lp, sizeof(lp), "c", "replay.log");
    path_in(dp, sizeof(dp), "c", "rec.trace.data");
    struct stat sb;
    assert_int_equal(stat(dp, &sb), -1);
    char *text = slurp(tp, NULL);
    assert_null(strstr(text, "data=@"));
    assert_null(strstr(text, "\ndata "));
    free(text);
    struct timeline tl;
    assert_int_equal(replay(tp, lp, &tl), 0);
    uint64_t got[MAX_READS];
    assert_int_equal(log_reads(lp, got, MAX_READS), rd.n);
    for (unsigned i = 0; i < rd.n; i++)
        assert_int_equal(got[i], rd.fnv[i]);
}

static void test_record_errors(void **state)
{
    (void)state;
    char p[512];
    path_in(p, sizeof(p), "", "err.trace");
    gmc_device *dev = NULL;
    assert_int_equal(gmc_device_open("sim", &dev), GMC_OK);
    assert_int_equal(gmc_device_record(dev, NULL, 0), GMC_E_BAD_STATE); /* not recording */
    assert_int_equal(gmc_device_record(NULL, p, 0), GMC_E_NULL_POINTER);
    assert_int_equal(gmc_device_record(dev, "/nonexistent-dir/x/rec.trace", 0), GMC_E_RECORD_IO);
    assert_int_equal(gmc_device_record(dev, p, 0x80u), GMC_E_RECORD_OPTION);
    assert_int_equal(gmc_device_record(dev, "", 0), GMC_E_INVALID_ARG);
    assert_int_equal(gmc_device_record(dev, p, 0), GMC_OK);
    assert_int_equal(gmc_device_record(dev, p, 0), GMC_E_BUSY);
    assert_int_equal(gmc_device_record(dev, NULL, 0), GMC_OK);
    gmc_client *c = NULL;
    assert_int_equal(gmc_client_create(dev, NULL, &c), GMC_OK);
    assert_int_equal(gmc_device_record(dev, p, 0), GMC_E_BAD_STATE); /* clients exist already */
    gmc_device_close(dev);

    /* the environment: an open that cannot record fails, with no device */
    setenv("GMC_RECORD", "/nonexistent-dir/x/rec.trace", 1);
    dev = (gmc_device *)1;
    assert_int_equal(gmc_device_open("sim", &dev), GMC_E_RECORD_IO);
    assert_null(dev);
    setenv("GMC_RECORD", p, 1);
    setenv("GMC_RECORD_OPTIONS", "inline,bogus", 1);
    dev = (gmc_device *)1;
    assert_int_equal(gmc_device_open("sim", &dev), GMC_E_RECORD_OPTION);
    assert_null(dev);
    setenv("GMC_RECORD_OPTIONS", "inline", 1);
    assert_int_equal(gmc_device_open("sim", &dev), GMC_OK);
    assert_int_equal(gmc_device_record(dev, p, 0), GMC_E_BUSY); /* recording since the open */
    assert_int_equal(gmc_client_create(dev, NULL, &c), GMC_OK);
    gmc_device_close(dev);
    unsetenv("GMC_RECORD");
    unsetenv("GMC_RECORD_OPTIONS");
    char *text = slurp(p, NULL);
    assert_non_null(strstr(text, "\ndevice sim\nclient c1\n"));
    free(text);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/gmc_test_record.XXXXXX", tmp ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_replay),
        cmocka_unit_test(test_record_fixed_point),
        cmocka_unit_test(test_record_inline),
        cmocka_unit_test(test_record_errors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (rc == 0 && system(cmd) != 0)
        return 1;
    return rc;
}
