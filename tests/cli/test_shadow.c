/*
 * test_shadow.c - the executor's sparse shadow (cli/shadow.c): host memory
 * follows the bytes written, copies carry known and unknown bytes, and a
 * compare finds the first differing known byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shadow.h"

#define TiB (1ull << 40)

static void test_sparse(void **state)
{
    (void)state;
    struct shadow s = { 0 };
    uint8_t buf[4096];
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 13u + 5u);
    /* one 4 KiB write at 512 GiB of a 1 TiB allocation: one chunk */
    assert_int_equal(sh_write(&s, TiB / 2, buf, sizeof buf), 0);
    assert_int_equal(sh_bytes(&s), 2u * SH_CHUNK);
    /* a write across a chunk boundary: two more chunks */
    assert_int_equal(sh_write(&s, 3u * SH_CHUNK - 100u, buf, sizeof buf), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(sh_bytes(&s), 6u * SH_CHUNK);
    assert_true(s.c[0].idx < s.c[1].idx && s.c[1].idx < s.c[2].idx);
    uint64_t at = 0, checked = 0;
    uint8_t want = 0;
    assert_int_equal(sh_compare(&s, TiB / 2, buf, sizeof buf, &at, &want, &checked), 0);
    assert_int_equal(checked, 4096);
    uint8_t bad[4096];
    memcpy(bad, buf, sizeof bad);
    bad[2000] ^= 1u;
    assert_int_equal(sh_compare(&s, 3u * SH_CHUNK - 100u, bad, sizeof bad, &at, &want, &checked), 1);
    assert_int_equal(at, 3u * SH_CHUNK - 100u + 2000u);
    assert_int_equal(want, buf[2000]);
    /* bytes nobody wrote are not compared */
    assert_int_equal(sh_compare(&s, 0, bad, sizeof bad, &at, &want, &checked), 0);
    assert_int_equal(checked, 0);
    assert_true(sh_any_known(&s));
    sh_forget(&s);
    assert_false(sh_any_known(&s));
    assert_int_equal(sh_bytes(&s), 0);
    sh_free(&s);
}

static void test_copy_and_fill(void **state)
{
    (void)state;
    struct shadow a = { 0 }, b = { 0 };
    uint8_t buf[100];
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(200u - i);
    assert_int_equal(sh_write(&a, SH_CHUNK - 50u, buf, sizeof buf), 0);
    /* b: a fill, then a copy of 300 bytes of which only 100 are known in a */
    assert_int_equal(sh_fill32(&b, 10, 400, 0x11223344u), 0);
    assert_int_equal(sh_copy(&b, 20, &a, SH_CHUNK - 100u, 300), 0);
    uint8_t got[400];
    uint64_t at, checked;
    uint8_t want;
    /* expected: [10,20) pattern, [20,70) unknown, [70,170) buf, [170,320) unknown, [320,410) pattern */
    for (unsigned i = 0; i < 400; i++) {
        uint64_t off = 10u + i;
        got[i] = (uint8_t)(0x11223344u >> ((off & 3u) * 8u));
        if (off >= 70 && off < 170)
            got[i] = buf[off - 70];
    }
    assert_int_equal(sh_compare(&b, 10, got, 400, &at, &want, &checked), 0);
    assert_int_equal(checked, 10 + 100 + 90);
    got[60] ^= 0xFFu; /* offset 70: the first copied known byte */
    assert_int_equal(sh_compare(&b, 10, got, 400, &at, &want, &checked), 1);
    assert_int_equal(at, 70);
    assert_int_equal(want, buf[0]);
    /* within one shadow, ranges apart (the array may grow during the copy) */
    assert_int_equal(sh_copy(&a, 5u * SH_CHUNK, &a, SH_CHUNK - 50u, 100), 0);
    assert_int_equal(sh_compare(&a, 5u * SH_CHUNK, buf, 100, &at, &want, &checked), 0);
    assert_int_equal(checked, 100);
    sh_free(&a);
    sh_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sparse),
        cmocka_unit_test(test_copy_and_fill),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
