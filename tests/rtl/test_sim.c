/* The sim library itself: independent instances, waveforms on request,
 * host-memory regions and error injection arguments, reset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gmc_test.h"

/* Two models in one process keep separate registers, VRAM and time. */
static void test_two_instances(void **state)
{
    (void)state;
    gmc_sim *a = t_sim_new(), *b = t_sim_new();
    t_wr(a, GMC_REG_SCRATCH, 0xAAAA0001);
    t_wr(b, GMC_REG_SCRATCH, 0xBBBB0002);
    uint8_t da[64], db[64], back[64];
    memset(da, 0xA1, sizeof da);
    memset(db, 0xB2, sizeof db);
    assert_int_equal(gmc_sim_aperture_write(a, 0x1000, da, 64), GMC_SIM_OK);
    assert_int_equal(gmc_sim_aperture_write(b, 0x1000, db, 64), GMC_SIM_OK);
    t_wr(a, GMC_REG_PROT_BASE_N(0), 0x1000);
    t_wr(a, GMC_REG_PROT_LIMIT_N(0), 0x2000);

    assert_int_equal(t_rd(a, GMC_REG_SCRATCH), 0xAAAA0001);
    assert_int_equal(t_rd(b, GMC_REG_SCRATCH), 0xBBBB0002);
    assert_int_equal(gmc_sim_aperture_read(a, 0x1000, back, 64), GMC_SIM_ESLVERR);
    assert_int_equal(gmc_sim_aperture_read(b, 0x1000, back, 64), GMC_SIM_OK);
    assert_memory_equal(back, db, 64);
    assert_int_equal(t_rd(a, GMC_REG_APF_COUNT), 1);
    assert_int_equal(t_rd(b, GMC_REG_APF_COUNT), 0);

    uint64_t ca = gmc_sim_cycles(a), cb = gmc_sim_cycles(b);
    assert_int_equal(gmc_sim_step(a, 5000), GMC_SIM_OK);
    assert_int_equal(gmc_sim_cycles(a), ca + 5000);
    assert_int_equal(gmc_sim_cycles(b), cb);

    t_sim_free(a);
    assert_int_equal(gmc_sim_aperture_read(b, 0x1000, back, 64), GMC_SIM_OK);
    assert_memory_equal(back, db, 64);
    t_sim_free(b);
}

static uint64_t be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

/* An FST file of the requested window: its header block (type 0) records
 * the first and last dumped times, 10 ns (10000 ps) per cycle. */
static void test_waveform(void **state)
{
    (void)state;
    char dir[] = "/tmp/gmc_wave_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/w.fst", dir);

    gmc_sim *s = t_sim_new();
    uint64_t now = gmc_sim_cycles(s);
    assert_int_equal(gmc_sim_trace_open(s, path, now + 100, now + 300), GMC_SIM_OK);
    assert_int_equal(gmc_sim_trace_open(s, path, now + 100, now + 300), GMC_SIM_EBUSY);
    t_wr(s, GMC_REG_SCRATCH, 0x12345678);
    assert_int_equal(gmc_sim_step(s, 400), GMC_SIM_OK);
    /* The window ended, so the file is already complete and closed. */
    assert_int_equal(gmc_sim_trace_close(s), GMC_SIM_ENOENT);

    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t hdr[25];
    assert_int_equal(fread(hdr, 1, sizeof hdr, f), sizeof hdr);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    assert_int_equal(hdr[0], 0); /* FST_BL_HDR */
    assert_true(size > 200);
    uint64_t t0 = be64(hdr + 9), t1 = be64(hdr + 17);
    assert_int_equal(t0, (now + 100) * 10000);
    assert_int_equal(t1, (now + 300) * 10000);
    unlink(path);

    /* Closing by hand and by destroy also completes a file. */
    assert_int_equal(gmc_sim_trace_open(s, path, 0, 0), GMC_SIM_OK);
    assert_int_equal(gmc_sim_step(s, 10), GMC_SIM_OK);
    assert_int_equal(gmc_sim_trace_close(s), GMC_SIM_OK);
    assert_int_equal(access(path, F_OK), 0);
    unlink(path);
    assert_int_equal(gmc_sim_trace_open(s, path, 0, 0), GMC_SIM_OK);
    gmc_sim_destroy(s);
    assert_int_equal(access(path, F_OK), 0);
    unlink(path);
    assert_int_equal(rmdir(dir), 0);
}

/* Without a request no waveform file appears. */
static void test_no_waveform(void **state)
{
    (void)state;
    char dir[] = "/tmp/gmc_nowave_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    gmc_sim *s = t_sim_new();
    t_wr(s, GMC_REG_SCRATCH, 1);
    assert_int_equal(gmc_sim_step(s, 100), GMC_SIM_OK);
    assert_int_equal(gmc_sim_trace_close(s), GMC_SIM_ENOENT);
    gmc_sim_destroy(s);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rmdir(dir), 0); /* empty: nothing was written */
}

static void test_trace_args(void **state)
{
    (void)state;
    gmc_sim *s = t_sim_new();
    assert_int_equal(gmc_sim_trace_open(s, NULL, 0, 0), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_trace_open(s, "", 0, 0), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_trace_open(s, "/tmp/x.fst", 50, 50), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_trace_open(s, "/tmp/x.fst", 0, 1), GMC_SIM_EINVAL); /* already past */
    assert_int_equal(gmc_sim_trace_open(s, "/nonexistent-dir/x.fst", 0, 0), GMC_SIM_EIO);
    assert_int_equal(gmc_sim_trace_open(NULL, "/tmp/x.fst", 0, 0), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_trace_close(NULL), GMC_SIM_EINVAL);
    gmc_sim_destroy(s);
}

static void test_host_regions(void **state)
{
    (void)state;
    gmc_sim *s = t_sim_new();
    static uint8_t m1[8192], m2[4096];
    assert_int_equal(gmc_sim_host_map(s, 0x10000, m1, sizeof m1), GMC_SIM_OK);
    assert_int_equal(gmc_sim_host_map(s, 0x11000, m2, sizeof m2), GMC_SIM_EOVERLAP);
    assert_int_equal(gmc_sim_host_map(s, 0xF001, m2, sizeof m2), GMC_SIM_EOVERLAP);
    assert_int_equal(gmc_sim_host_map(s, 0x12000, m2, sizeof m2), GMC_SIM_OK);
    assert_int_equal(gmc_sim_host_map(s, 0x20000, NULL, 16), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_host_map(s, 0x20000, m2, 0), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_host_map(s, ~0ull - 8, m2, 16), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_host_map(s, 1ull << 48, m2, 16), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_host_unmap(s, 0x11000), GMC_SIM_ENOENT);
    assert_int_equal(gmc_sim_host_unmap(s, 0x10000), GMC_SIM_OK);
    assert_int_equal(gmc_sim_host_unmap(s, 0x10000), GMC_SIM_ENOENT);
    assert_int_equal(gmc_sim_host_map(s, 0x11000, m2, sizeof m2), GMC_SIM_OK);

    assert_int_equal(gmc_sim_host_inject(s, 0x12000, 64, GMC_SIM_INJECT_SLVERR), GMC_SIM_OK);
    assert_int_equal(gmc_sim_host_inject(s, 0x12000, 64, GMC_SIM_INJECT_HANG), GMC_SIM_OK);
    assert_int_equal(gmc_sim_host_inject(s, 0x12000, 0, GMC_SIM_INJECT_DECERR), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_host_inject(s, 0x12000, 64, 1), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_host_inject(s, ~0ull, 2, GMC_SIM_INJECT_SLVERR), GMC_SIM_EINVAL);
    gmc_sim_host_inject_clear(s);
    assert_int_equal(gmc_sim_set_host_latency(s, 0), GMC_SIM_OK);
    assert_int_equal(gmc_sim_set_host_latency(NULL, 0), GMC_SIM_EINVAL);
    gmc_sim_destroy(s);
}

static void test_lifecycle_args(void **state)
{
    (void)state;
    assert_int_equal(gmc_sim_create(NULL, NULL), GMC_SIM_EINVAL);
    struct gmc_sim_config cfg;
    gmc_sim_config_default(&cfg);
    assert_int_equal(cfg.host_latency, 100);
    cfg.bus_timeout = 0;
    gmc_sim *s = (gmc_sim *)&cfg;
    assert_int_equal(gmc_sim_create(&cfg, &s), GMC_SIM_EINVAL);
    assert_null(s);
    gmc_sim_destroy(NULL);
    assert_int_equal(gmc_sim_step(NULL, 1), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_reset(NULL, 1), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_cycles(NULL), 0);
    assert_int_equal(gmc_sim_irq(NULL), 0);
    s = t_sim_new();
    assert_int_equal(gmc_sim_reset(s, 0), GMC_SIM_EINVAL);
    struct gmc_sim_stats st;
    assert_int_equal(gmc_sim_get_stats(s, NULL), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_get_stats(NULL, &st), GMC_SIM_EINVAL);
    uint8_t b[8];
    assert_int_equal(gmc_sim_vram_peek(s, T_VRAM_BYTES - 4, b, 8), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_vram_peek(s, T_VRAM_BYTES - 8, b, 8), GMC_SIM_OK);
    /* A peek of any range (head bytes, whole words, tail) reads the bytes
     * one-byte peeks read. */
    assert_int_equal(gmc_sim_vram_scramble(s, 0, 4096, 77), GMC_SIM_OK);
    for (unsigned off = 0; off < 9; off++)
        for (unsigned n = 0; n < 40; n += 3) {
            uint8_t whole[40], one;
            assert_int_equal(gmc_sim_vram_peek(s, 1000 + off, whole, n), GMC_SIM_OK);
            for (unsigned i = 0; i < n; i++) {
                assert_int_equal(gmc_sim_vram_peek(s, 1000 + off + i, &one, 1), GMC_SIM_OK);
                assert_int_equal(whole[i], one);
            }
        }
    assert_int_equal(gmc_sim_vram_size(s), T_VRAM_BYTES);
    for (int c = -10; c <= 0; c++) {
        assert_non_null(gmc_sim_strerror(c));
        assert_non_null(gmc_sim_status_name(c));
    }
    assert_string_equal(gmc_sim_status_name(GMC_SIM_EDECERR), "GMC_SIM_EDECERR");
    gmc_sim_destroy(s);
}

/* Reset restores registers and keeps VRAM. */
static void test_reset_keeps_vram(void **state)
{
    (void)state;
    gmc_sim *s = t_sim_new();
    uint8_t d[32], back[32];
    memset(d, 0x3c, sizeof d);
    assert_int_equal(gmc_sim_aperture_write(s, 0x2000, d, 32), GMC_SIM_OK);
    t_wr(s, GMC_REG_SCRATCH, 77);
    t_wr(s, GMC_REG_IRQ_MASK, 1);
    assert_int_equal(gmc_sim_reset(s, 3), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_SCRATCH), 0);
    assert_int_equal(t_rd(s, GMC_REG_IRQ_MASK), 0);
    assert_int_equal(gmc_sim_aperture_read(s, 0x2000, back, 32), GMC_SIM_OK);
    assert_memory_equal(back, d, 32);
    gmc_sim_destroy(s);
}

/* Models can be destroyed in any order (the newest first here). */
static void test_destroy_order(void **state)
{
    (void)state;
    gmc_sim *a = t_sim_new(), *b = t_sim_new(), *c = t_sim_new();
    t_wr(a, GMC_REG_SCRATCH, 1);
    t_sim_free(c);
    t_wr(b, GMC_REG_SCRATCH, 2);
    t_sim_free(b);
    assert_int_equal(t_rd(a, GMC_REG_SCRATCH), 1);
    t_sim_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_instances),  cmocka_unit_test(test_waveform),
        cmocka_unit_test(test_no_waveform),    cmocka_unit_test(test_trace_args),
        cmocka_unit_test(test_host_regions),   cmocka_unit_test(test_lifecycle_args),
        cmocka_unit_test(test_reset_keeps_vram), cmocka_unit_test(test_destroy_order),
    };
    return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
