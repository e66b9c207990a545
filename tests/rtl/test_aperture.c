/* CPU aperture (BAR1): round trips, every burst type, and every refused
 * access with its exact bus response and fault record. */
#include <stdlib.h>
#include <string.h>

#include "gmc_test.h"

#define RESP_OKAY 0
#define RESP_SLVERR 2
#define RESP_DECERR 3

static int setup(void **state)
{
    *state = t_sim_new();
    return 0;
}

static int teardown(void **state)
{
    t_sim_free(*state);
    return 0;
}

/* The fault log holds exactly this record. */
static void assert_fault(gmc_sim *s, int write, unsigned kind, uint32_t addr, uint32_t count)
{
    uint32_t st = t_rd(s, GMC_REG_APF_STATUS);
    uint32_t want = GMC_APF_STATUS_VALID_MASK | (write ? GMC_APF_STATUS_WRITE_MASK : 0) |
                    (kind << GMC_APF_STATUS_KIND_LSB) | (count > 1 ? GMC_APF_STATUS_OVERFLOW_MASK : 0);
    if (st != want) fail_msg("APF_STATUS 0x%08x, expected 0x%08x", st, want);
    assert_int_equal(t_rd64(s, GMC_REG_APF_ADDR_LO), addr);
    assert_int_equal(t_rd(s, GMC_REG_APF_COUNT), count);
}

static void clear_faults(gmc_sim *s)
{
    t_wr(s, GMC_REG_APF_CLEAR, 1);
    assert_int_equal(t_rd(s, GMC_REG_APF_STATUS), 0);
    assert_int_equal(t_rd(s, GMC_REG_APF_COUNT), 0);
}

/* Many sizes at many alignments: the bytes read back through the aperture
 * and through the backdoor equal what was written, and the guard bytes
 * around the target are untouched. */
static void test_round_trips(void **state)
{
    gmc_sim *s = *state;
    static const size_t sizes[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 63, 64, 65,
                                   255, 256, 257, 1000, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 12345};
    static const uint32_t aligns[] = {0, 1, 2, 3, 4, 5, 6, 7, 4093, 4088, 2044};
    uint64_t rng = 0x1234;
    uint8_t *w = malloc(16384), *r = malloc(16384 + 16), *before = malloc(16384 + 16);
    assert_non_null(w);
    assert_non_null(r);
    assert_non_null(before);
    uint32_t base = 0x40000;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (size_t ai = 0; ai < sizeof aligns / sizeof aligns[0]; ai++) {
            size_t n = sizes[si];
            uint32_t off = base + aligns[ai];
            t_fill_random(w, n, &rng);
            assert_int_equal(gmc_sim_vram_peek(s, off - 8, before, n + 16), GMC_SIM_OK);
            assert_int_equal(gmc_sim_aperture_write(s, off, w, n), GMC_SIM_OK);
            assert_int_equal(gmc_sim_aperture_read(s, off, r, n), GMC_SIM_OK);
            if (memcmp(w, r, n) != 0) fail_msg("size %zu at 0x%x: aperture read-back differs", n, off);
            assert_int_equal(gmc_sim_vram_peek(s, off - 8, r, n + 16), GMC_SIM_OK);
            assert_memory_equal(r + 8, w, n);
            assert_memory_equal(r, before, 8);
            assert_memory_equal(r + 8 + n, before + 8 + n, 8);
            base += 0x5000;
            if (base > T_WINDOW_BYTES - 0x6000) base = 0x40000;
        }
    }
    /* The last byte of the window. */
    uint8_t one = 0x5a, back = 0;
    assert_int_equal(gmc_sim_aperture_write(s, T_WINDOW_BYTES - 1, &one, 1), GMC_SIM_OK);
    assert_int_equal(gmc_sim_aperture_read(s, T_WINDOW_BYTES - 1, &back, 1), GMC_SIM_OK);
    assert_int_equal(back, 0x5a);
    assert_int_equal(t_rd(s, GMC_REG_APF_COUNT), 0);
    free(w);
    free(r);
    free(before);
}

/* Raw bursts: INCR at the maximum length, FIXED, WRAP and narrow beats. */
static void test_burst_types(void **state)
{
    gmc_sim *s = *state;
    uint64_t data[256], back[256], rng = 99;
    uint8_t strb[256], resp[256], bresp = 0xff;
    memset(strb, 0xff, sizeof strb);
    t_fill_random(data, sizeof data, &rng);

    /* INCR, 256 beats of 8 bytes. */
    struct gmc_sim_burst b = {0x8000, 255, 3, 1, 5};
    assert_int_equal(gmc_sim_aperture_burst_write(s, &b, data, strb, &bresp), GMC_SIM_OK);
    assert_int_equal(bresp, RESP_OKAY);
    assert_int_equal(gmc_sim_aperture_burst_read(s, &b, back, resp), GMC_SIM_OK);
    assert_memory_equal(back, data, sizeof data);
    for (int i = 0; i < 256; i++) assert_int_equal(resp[i], RESP_OKAY);

    /* FIXED: four beats to one address; the last one stays. */
    struct gmc_sim_burst f = {0x9000, 3, 3, 0, 1};
    assert_int_equal(gmc_sim_aperture_burst_write(s, &f, data, strb, &bresp), GMC_SIM_OK);
    assert_int_equal(bresp, RESP_OKAY);
    uint64_t v;
    assert_int_equal(gmc_sim_vram_peek(s, 0x9000, &v, 8), GMC_SIM_OK);
    assert_true(v == data[3]);
    assert_int_equal(gmc_sim_vram_peek(s, 0x9008, &v, 8), GMC_SIM_OK);
    assert_true(v == 0);

    /* WRAP, 4 beats of 8 starting at the third word of a 32-byte block:
     * words 2, 3, 0, 1. */
    struct gmc_sim_burst wr = {0xA010, 3, 3, 2, 2};
    assert_int_equal(gmc_sim_aperture_burst_write(s, &wr, data, strb, &bresp), GMC_SIM_OK);
    assert_int_equal(bresp, RESP_OKAY);
    uint64_t blk[5];
    assert_int_equal(gmc_sim_vram_peek(s, 0xA000, blk, sizeof blk), GMC_SIM_OK);
    assert_true(blk[2] == data[0] && blk[3] == data[1] && blk[0] == data[2] && blk[1] == data[3]);
    assert_true(blk[4] == 0);
    assert_int_equal(gmc_sim_aperture_burst_read(s, &wr, back, resp), GMC_SIM_OK);
    assert_memory_equal(back, data, 4 * 8);

    /* Narrow INCR: 2-byte beats from an odd halfword; only the addressed
     * lanes change, whatever the strobes say. */
    uint64_t pat[6];
    for (int i = 0; i < 6; i++) pat[i] = 0x1111111111111111ull * (uint64_t)(i + 1);
    uint8_t all[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    struct gmc_sim_burst nb = {0xB006, 5, 1, 1, 3};
    assert_int_equal(gmc_sim_aperture_burst_write(s, &nb, pat, all, &bresp), GMC_SIM_OK);
    assert_int_equal(bresp, RESP_OKAY);
    uint8_t got[24];
    assert_int_equal(gmc_sim_vram_peek(s, 0xB000, got, sizeof got), GMC_SIM_OK);
    for (unsigned a = 0; a < 24; a++) {
        uint8_t want = 0;
        if (a >= 6 && a < 18) {
            unsigned beat = (a - 6) / 2;
            want = (uint8_t)(pat[beat] >> (8 * (a % 8)));
        }
        if (got[a] != want) fail_msg("narrow burst: byte %u is 0x%02x, expected 0x%02x", a, got[a], want);
    }

    /* Strobes: only strobed bytes of a full beat change. */
    uint64_t ones = ~0ull;
    uint8_t half = 0x0f;
    struct gmc_sim_burst sb = {0xC000, 0, 3, 1, 0};
    assert_int_equal(gmc_sim_aperture_burst_write(s, &sb, &ones, &half, &bresp), GMC_SIM_OK);
    assert_int_equal(gmc_sim_vram_peek(s, 0xC000, &v, 8), GMC_SIM_OK);
    assert_true(v == 0x00000000ffffffffull);
}

/* Outside the window: DECERR on every beat, nothing moves, one fault. */
static void test_out_of_window(void **state)
{
    gmc_sim *s = *state;
    uint64_t data[4] = {1, 2, 3, 4}, back[4];
    uint8_t strb[4] = {0xff, 0xff, 0xff, 0xff}, resp[4], bresp;
    uint64_t h = t_vram_hash(s, 0, T_VRAM_BYTES);

    struct gmc_sim_burst r = {T_WINDOW_BYTES, 3, 3, 1, 7};
    assert_int_equal(gmc_sim_aperture_burst_read(s, &r, back, resp), GMC_SIM_OK);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(resp[i], RESP_DECERR);
        assert_true(back[i] == 0);
    }
    assert_fault(s, 0, GMC_APF_KIND_WINDOW, T_WINDOW_BYTES, 1);
    clear_faults(s);

    /* Starts inside, ends outside: refused whole. */
    struct gmc_sim_burst w = {T_WINDOW_BYTES - 16, 3, 3, 1, 7};
    assert_int_equal(gmc_sim_aperture_burst_write(s, &w, data, strb, &bresp), GMC_SIM_OK);
    assert_int_equal(bresp, RESP_DECERR);
    assert_fault(s, 1, GMC_APF_KIND_WINDOW, T_WINDOW_BYTES - 16, 1);
    clear_faults(s);

    /* The top of the 32-bit space never wraps to offset 0. */
    struct gmc_sim_burst top = {0xFFFFFFF8u, 3, 3, 1, 0};
    assert_int_equal(gmc_sim_aperture_burst_write(s, &top, data, strb, &bresp), GMC_SIM_OK);
    assert_int_equal(bresp, RESP_DECERR);
    assert_fault(s, 1, GMC_APF_KIND_WINDOW, 0xFFFFFFF8u, 1);
    struct gmc_sim_burst topr = {0xFFFFFFFFu, 0, 0, 1, 0};
    assert_int_equal(gmc_sim_aperture_burst_read(s, &topr, back, resp), GMC_SIM_OK);
    assert_int_equal(resp[0], RESP_DECERR);
    assert_fault(s, 1, GMC_APF_KIND_WINDOW, 0xFFFFFFF8u, 2);

    /* The split helpers report the first refused burst. */
    uint8_t buf[64];
    memset(buf, 0xee, sizeof buf);
    assert_int_equal(gmc_sim_aperture_read(s, T_WINDOW_BYTES - 8, buf, 64), GMC_SIM_EDECERR);
    for (int i = 0; i < 64; i++) assert_int_equal(buf[i], 0);
    assert_int_equal(gmc_sim_aperture_write(s, T_WINDOW_BYTES + 100, buf, 3), GMC_SIM_EDECERR);

    assert_true(t_vram_hash(s, 0, T_VRAM_BYTES) == h);
}

/* Protected ranges refuse CPU reads and writes with SLVERR. */
static void test_protected(void **state)
{
    gmc_sim *s = *state;
    uint8_t buf[32], zero[32];
    memset(zero, 0, sizeof zero);
    memset(buf, 0xa5, sizeof buf);
    assert_int_equal(gmc_sim_aperture_write(s, 0x11000, buf, sizeof buf), GMC_SIM_OK);

    t_wr(s, GMC_REG_PROT_BASE_N(2), 0x10000);
    t_wr(s, GMC_REG_PROT_LIMIT_N(2), 0x12000);
    uint64_t h = t_vram_hash(s, 0, T_VRAM_BYTES);

    assert_int_equal(gmc_sim_aperture_read(s, 0x11000, buf, 8), GMC_SIM_ESLVERR);
    assert_fault(s, 0, GMC_APF_KIND_PROTECTED, 0x11000, 1);
    assert_int_equal(gmc_sim_aperture_write(s, 0x11ff8, zero, 8), GMC_SIM_ESLVERR);
    assert_fault(s, 0, GMC_APF_KIND_PROTECTED, 0x11000, 2);
    /* A burst that only overlaps the first byte. */
    assert_int_equal(gmc_sim_aperture_write(s, 0xfff8, zero, 16), GMC_SIM_ESLVERR);
    assert_true(t_vram_hash(s, 0, T_VRAM_BYTES) == h);
    clear_faults(s);

    /* Just outside on both sides is fine. */
    assert_int_equal(gmc_sim_aperture_write(s, 0xfff8, zero, 8), GMC_SIM_OK);
    assert_int_equal(gmc_sim_aperture_read(s, 0x12000, buf, 8), GMC_SIM_OK);
    assert_int_equal(t_rd(s, GMC_REG_APF_COUNT), 0);

    /* LIMIT <= BASE disables the range. */
    t_wr(s, GMC_REG_PROT_LIMIT_N(2), 0x10000);
    assert_int_equal(gmc_sim_aperture_read(s, 0x11000, buf, 32), GMC_SIM_OK);
    memset(zero, 0xa5, sizeof zero);
    assert_memory_equal(buf, zero, 32);

    /* Every range slot works. */
    for (unsigned i = 0; i < 4; i++) {
        t_wr(s, GMC_REG_PROT_BASE_N(i), 0x20000 + i * 0x1000);
        t_wr(s, GMC_REG_PROT_LIMIT_N(i), 0x21000 + i * 0x1000);
        assert_int_equal(gmc_sim_aperture_read(s, 0x20800 + i * 0x1000, buf, 1), GMC_SIM_ESLVERR);
        t_wr(s, GMC_REG_PROT_LIMIT_N(i), 0);
        assert_int_equal(gmc_sim_aperture_read(s, 0x20800 + i * 0x1000, buf, 1), GMC_SIM_OK);
    }
}

/* Illegal bursts answer SLVERR, kind BURST. */
static void test_illegal_bursts(void **state)
{
    gmc_sim *s = *state;
    const struct gmc_sim_burst bad[] = {
        {0x1000, 1, 3, 3, 0}, /* reserved burst type */
        {0x1000, 0, 4, 1, 0}, /* 16-byte beats on a 64-bit bus */
        {0x1000, 2, 3, 2, 0}, /* WRAP of 3 beats */
        {0x1004, 3, 3, 2, 0}, /* WRAP not aligned to the beat */
    };
    uint64_t data[4] = {0}, back[4];
    uint8_t strb[4] = {0xff, 0xff, 0xff, 0xff}, resp[4], bresp;
    uint64_t h = t_vram_hash(s, 0, T_WINDOW_BYTES);
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        clear_faults(s);
        assert_int_equal(gmc_sim_aperture_burst_read(s, &bad[i], back, resp), GMC_SIM_OK);
        for (unsigned k = 0; k <= bad[i].len; k++) assert_int_equal(resp[k], RESP_SLVERR);
        assert_fault(s, 0, GMC_APF_KIND_BURST, bad[i].addr, 1);
        clear_faults(s);
        assert_int_equal(gmc_sim_aperture_burst_write(s, &bad[i], data, strb, &bresp), GMC_SIM_OK);
        assert_int_equal(bresp, RESP_SLVERR);
        assert_fault(s, 1, GMC_APF_KIND_BURST, bad[i].addr, 1);
    }
    assert_true(t_vram_hash(s, 0, T_WINDOW_BYTES) == h);
}

/* The byte counters count what moved, and only that. */
static void test_counters(void **state)
{
    gmc_sim *s = *state;
    uint8_t buf[100] = {0};
    t_wr(s, GMC_REG_CNT_CLEAR, 1);
    assert_int_equal(gmc_sim_aperture_write(s, 0x3003, buf, 100), GMC_SIM_OK);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_APERTURE_WR_LO), 100);
    /* 0x3000..0x3067 in 8-byte beats: 13 beats. */
    assert_int_equal(gmc_sim_aperture_read(s, 0x3003, buf, 100), GMC_SIM_OK);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_APERTURE_RD_LO), 13 * 8);
    /* Refused traffic moves nothing. */
    assert_int_equal(gmc_sim_aperture_write(s, T_WINDOW_BYTES, buf, 100), GMC_SIM_EDECERR);
    assert_int_equal(gmc_sim_aperture_read(s, T_WINDOW_BYTES, buf, 100), GMC_SIM_EDECERR);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_APERTURE_WR_LO), 100);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_APERTURE_RD_LO), 13 * 8);
    t_wr(s, GMC_REG_CNT_CLEAR, 1);
    assert_int_equal(t_rd64(s, GMC_REG_CNT_APERTURE_WR_LO), 0);
}

/* Reads stream one beat per cycle once started: a 256-beat burst takes
 * 256 cycles plus a fixed overhead. */
static void test_read_throughput(void **state)
{
    gmc_sim *s = *state;
    uint64_t back[256];
    uint8_t resp[256];
    struct gmc_sim_burst b1 = {0x8000, 0, 3, 1, 0}, b256 = {0x8000, 255, 3, 1, 0};
    uint64_t c0 = gmc_sim_cycles(s);
    assert_int_equal(gmc_sim_aperture_burst_read(s, &b1, back, resp), GMC_SIM_OK);
    uint64_t one = gmc_sim_cycles(s) - c0;
    c0 = gmc_sim_cycles(s);
    assert_int_equal(gmc_sim_aperture_burst_read(s, &b256, back, resp), GMC_SIM_OK);
    uint64_t many = gmc_sim_cycles(s) - c0;
    assert_int_equal(many - one, 255);
}

static void test_bad_args(void **state)
{
    gmc_sim *s = *state;
    uint8_t b[8];
    uint64_t d[1] = {0};
    uint8_t r[1], st[1] = {0xff}, br = 9;
    assert_int_equal(gmc_sim_aperture_read(s, 0x100000000ull, b, 1), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_aperture_read(s, 0xFFFFFFFFull, b, 2), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_aperture_read(s, 0, NULL, 1), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_aperture_write(NULL, 0, b, 1), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_aperture_read(s, 0, NULL, 0), GMC_SIM_OK);
    struct gmc_sim_burst bad = {0, 0, 8, 1, 0};
    assert_int_equal(gmc_sim_aperture_burst_read(s, &bad, d, r), GMC_SIM_EINVAL);
    assert_int_equal(gmc_sim_aperture_burst_write(s, &bad, d, st, &br), GMC_SIM_EINVAL);
    assert_int_equal(br, 0);
    assert_int_equal(gmc_sim_aperture_burst_read(s, NULL, d, r), GMC_SIM_EINVAL);
    struct gmc_sim_stats stats;
    assert_int_equal(gmc_sim_get_stats(s, &stats), GMC_SIM_OK);
    assert_int_equal(stats.aperture_read_bursts + stats.aperture_write_bursts, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trips, setup, teardown),
        cmocka_unit_test_setup_teardown(test_burst_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_protected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_illegal_bursts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_throughput, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_args, setup, teardown),
    };
    return cmocka_run_group_tests_name("aperture", tests, NULL, NULL);
}
