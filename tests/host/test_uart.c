/*
 * test_uart.c - the uart backend's error paths and its exactly-once
 * commands, against a fake bridge on a pseudo-terminal (a thread speaking
 * the frames of docs/uart-bridge.md through include/gmc_link.h).
 *
 * The fake bridge answers PING (protocol version chosen by the test),
 * REG_RD and REG_WR on a small register file, keeps the last SEQ and its
 * reply as the bridge does, and can misbehave: echo everything, speak
 * version 1, drop the first reply of each REG_WR, fall silent or hang up
 * after the open handshake.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "gmc_backend.h"
#include "gmc_backend_uart.h"
#include "gmc_devstr.h"
#include "gmc_link.h"
#include "gmc_regs.h"
#include "gmc_status.h"

enum fake_mode { F_GOOD, F_ECHO, F_V1, F_DROP_WR_REPLY, F_SILENT_AFTER_OPEN, F_HANGUP_AFTER_OPEN };

struct fake {
    int master;
    char path[128];
    enum fake_mode mode;
    pthread_t th;
    volatile int stop;
    uint32_t regs[64];
    unsigned writes_executed;  /* REG_WR applied */
    unsigned commands_seen;    /* sequenced commands received whole */
    int have_seq;
    uint8_t last_seq, last_op, last_reply[16], last_reply_len;
    unsigned dropped;
};

static uint8_t crc8(uint8_t crc, uint8_t b)
{
    crc ^= b;
    for (int i = 0; i < 8; i++)
        crc = (crc & 0x80u) ? (uint8_t)((crc << 1) ^ GMC_LINK_CRC_POLY) : (uint8_t)(crc << 1);
    return crc;
}

static void fake_send(struct fake *f, uint8_t op, const uint8_t *pl, uint8_t len)
{
    uint8_t b[32];
    uint8_t c = crc8(crc8(0, op), len);
    b[0] = GMC_LINK_SYNC;
    b[1] = op;
    b[2] = len;
    for (uint8_t i = 0; i < len; i++) {
        b[3 + i] = pl[i];
        c = crc8(c, pl[i]);
    }
    b[3 + len] = c;
    ssize_t w = write(f->master, b, (size_t)len + 4u);
    (void)w;
}

static void fake_frame(struct fake *f, uint8_t op, const uint8_t *pl, uint8_t len)
{
    if (op == GMC_LINK_OP_PING) {
        if (f->mode == F_V1) {
            uint8_t r[3] = { pl[0], 0x01, 0 };
            fake_send(f, op | 0x80u, r, 3);
        } else {
            uint8_t r[5] = { pl[0], GMC_LINK_VERSION, 0, f->last_seq, 0 };
            fake_send(f, op | 0x80u, r, 5);
        }
        return;
    }
    if (op != GMC_LINK_OP_REG_RD && op != GMC_LINK_OP_REG_WR)
        return;
    uint8_t seq = pl[len - 1];
    f->commands_seen++;
    if (f->mode == F_SILENT_AFTER_OPEN && f->commands_seen > 2)
        return;
    if (f->mode == F_HANGUP_AFTER_OPEN && f->commands_seen > 2) {
        close(f->master);
        f->master = -1;
        f->stop = 1;
        return;
    }
    /* Commands 1 and 2 are the open's ID and CYCLE_LO reads. */
    if (!(f->have_seq && seq == f->last_seq && op == f->last_op)) {
        uint32_t off = (uint32_t)pl[0] | (uint32_t)pl[1] << 8;
        uint8_t *r = f->last_reply;
        if (op == GMC_LINK_OP_REG_RD) {
            uint32_t v = off == GMC_REG_ID ? GMC_ID : f->regs[(off >> 2) & 63u];
            r[0] = 0;
            r[1] = (uint8_t)v;
            r[2] = (uint8_t)(v >> 8);
            r[3] = (uint8_t)(v >> 16);
            r[4] = (uint8_t)(v >> 24);
            r[5] = seq;
            f->last_reply_len = 6;
        } else {
            f->regs[(off >> 2) & 63u] += (uint32_t)pl[2] | (uint32_t)pl[3] << 8 | (uint32_t)pl[4] << 16 |
                                         (uint32_t)pl[5] << 24; /* an accumulating register: a second
                                                                   execution would show */
            f->writes_executed++;
            r[0] = 0;
            r[1] = seq;
            f->last_reply_len = 2;
        }
        f->have_seq = 1;
        f->last_seq = seq;
        f->last_op = op;
        if (f->mode == F_DROP_WR_REPLY && op == GMC_LINK_OP_REG_WR) {
            f->dropped++;
            return; /* executed, reply lost on the wire */
        }
    }
    fake_send(f, op | 0x80u, f->last_reply, f->last_reply_len);
}

static void *fake_main(void *arg)
{
    struct fake *f = arg;
    uint8_t buf[256];
    size_t n = 0;
    while (!f->stop) {
        struct pollfd p = { f->master, POLLIN, 0 };
        if (poll(&p, 1, 5) <= 0)
            continue;
        ssize_t r = read(f->master, buf + n, sizeof buf - n);
        if (r <= 0)
            continue;
        if (f->mode == F_ECHO) {
            ssize_t w = write(f->master, buf + n, (size_t)r);
            (void)w;
            continue;
        }
        n += (size_t)r;
        size_t i = 0;
        while (i < n) {
            if (buf[i] != GMC_LINK_SYNC) {
                i++;
                continue;
            }
            if (n - i < 3 || n - i < (size_t)buf[i + 2] + 4u)
                break;
            uint8_t len = buf[i + 2], c = 0;
            for (size_t k = 1; k < (size_t)len + 4u; k++)
                c = crc8(c, buf[i + k]);
            if (c == 0)
                fake_frame(f, buf[i + 1], buf + i + 3, len);
            i += (size_t)len + 4u;
            if (f->stop)
                break;
        }
        memmove(buf, buf + i, n - i);
        n -= i;
    }
    return NULL;
}

static struct fake *fake_start(enum fake_mode mode)
{
    struct fake *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->mode = mode;
    f->master = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(f->master >= 0);
    assert_int_equal(grantpt(f->master), 0);
    assert_int_equal(unlockpt(f->master), 0);
    assert_int_equal(ptsname_r(f->master, f->path, sizeof f->path), 0);
    assert_int_equal(pthread_create(&f->th, NULL, fake_main, f), 0);
    return f;
}

static void fake_stop(struct fake *f)
{
    f->stop = 1;
    pthread_join(f->th, NULL);
    if (f->master >= 0)
        close(f->master);
    free(f);
}

static double secs(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int open_uart(const char *path, void **ctx)
{
    char s[256];
    struct gmc_devspec spec;
    snprintf(s, sizeof s, "uart:%s@3000000", path);
    assert_int_equal(gmc_devstr_parse(s, &spec, NULL), GMC_OK);
    return gmc_backend_uart.open(&spec, ctx);
}

static void test_no_such_port(void **state)
{
    (void)state;
    void *ctx = (void *)&ctx;
    assert_int_equal(open_uart("/nonexistent/ttyGMC0", &ctx), GMC_E_UART_NO_PORT);
    assert_null(ctx);
    /* A file that is not a terminal is not a bridge either. */
    assert_int_equal(open_uart("/dev/null", &ctx), GMC_E_UART_NOT_BRIDGE);
    assert_null(ctx);
}

static void test_permission(void **state)
{
    (void)state;
    if (geteuid() == 0) {
        /* Root opens any device node: EACCES cannot happen here. */
        print_message("skipped: running as root, a permission error cannot be provoked\n");
        skip();
    }
}

static void test_something_else(void **state)
{
    (void)state;
    struct fake *f = fake_start(F_ECHO); /* a loopback plug, a modem, a console */
    void *ctx = NULL;
    assert_int_equal(open_uart(f->path, &ctx), GMC_E_UART_NOT_BRIDGE);
    assert_null(ctx);
    fake_stop(f);
    /* Nothing on the line at all (a pty nobody serves). */
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    char path[128];
    assert_true(m >= 0);
    assert_int_equal(grantpt(m), 0);
    assert_int_equal(unlockpt(m), 0);
    assert_int_equal(ptsname_r(m, path, sizeof path), 0);
    double t0 = secs();
    assert_int_equal(open_uart(path, &ctx), GMC_E_UART_NOT_BRIDGE);
    assert_null(ctx);
    assert_true(secs() - t0 < 10.0);
    close(m);
}

static void test_wrong_version(void **state)
{
    (void)state;
    struct fake *f = fake_start(F_V1);
    void *ctx = NULL;
    assert_int_equal(open_uart(f->path, &ctx), GMC_E_UART_PROTOCOL);
    assert_null(ctx);
    fake_stop(f);
}

static void test_busy(void **state)
{
    (void)state;
    struct fake *f = fake_start(F_GOOD);
    void *a = NULL, *b = NULL;
    assert_int_equal(open_uart(f->path, &a), GMC_OK);
    assert_int_equal(open_uart(f->path, &b), GMC_E_UART_PORT_BUSY);
    assert_null(b);
    gmc_backend_uart.close(a);
    /* Released on close: the next open succeeds. */
    assert_int_equal(open_uart(f->path, &b), GMC_OK);
    gmc_backend_uart.close(b);
    fake_stop(f);
}

static void test_exactly_once(void **state)
{
    (void)state;
    struct fake *f = fake_start(F_DROP_WR_REPLY);
    void *ctx = NULL;
    assert_int_equal(open_uart(f->path, &ctx), GMC_OK);
    for (uint32_t i = 1; i <= 5; i++)
        assert_int_equal(gmc_backend_uart.write32(ctx, 0x28, i), GMC_OK);
    uint32_t v = 0;
    assert_int_equal(gmc_backend_uart.read32(ctx, 0x28, &v), GMC_OK);
    /* Every reply of a write was lost once; each write was applied once. */
    assert_int_equal(v, 1u + 2u + 3u + 4u + 5u);
    assert_int_equal(f->writes_executed, 5u);
    assert_int_equal(f->dropped, 5u);
    struct gmc_uart_stats st;
    assert_int_equal(gmc_backend_uart_stats(ctx, &st), GMC_OK);
    /* At least one repeat per lost reply (more if the machine is slow). */
    assert_true(st.retries >= 5u);
    assert_true(st.resyncs >= 5u);
    gmc_backend_uart.close(ctx);
    fake_stop(f);
}

static void test_stops_answering(void **state)
{
    (void)state;
    struct fake *f = fake_start(F_SILENT_AFTER_OPEN);
    void *ctx = NULL;
    assert_int_equal(open_uart(f->path, &ctx), GMC_OK);
    uint32_t v = 7;
    double t0 = secs();
    assert_int_equal(gmc_backend_uart.read32(ctx, 0x28, &v), GMC_E_UART_NO_ANSWER);
    double t = secs() - t0;
    assert_int_equal(v, 0u);
    assert_true(t < 30.0); /* bounded: never hangs (the figure is in the bench) */
    gmc_backend_uart.close(ctx);
    fake_stop(f);
}

static void test_unplugged(void **state)
{
    (void)state;
    struct fake *f = fake_start(F_HANGUP_AFTER_OPEN);
    void *ctx = NULL;
    assert_int_equal(open_uart(f->path, &ctx), GMC_OK);
    uint32_t v = 7;
    assert_int_equal(gmc_backend_uart.write32(ctx, 0x28, 1), GMC_E_UART_UNPLUGGED);
    /* Sticky: later operations say the same at once. */
    assert_int_equal(gmc_backend_uart.read32(ctx, 0x28, &v), GMC_E_UART_UNPLUGGED);
    assert_int_equal(v, 0u);
    gmc_backend_uart.close(ctx);
    fake_stop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_such_port),   cmocka_unit_test(test_permission),
        cmocka_unit_test(test_something_else), cmocka_unit_test(test_wrong_version),
        cmocka_unit_test(test_busy),           cmocka_unit_test(test_exactly_once),
        cmocka_unit_test(test_stops_answering), cmocka_unit_test(test_unplugged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
