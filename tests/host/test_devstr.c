/*
 * test_devstr.c - device strings: every backend's grammar, good and bad
 * strings with their exact status and error position, and what opening
 * each kind of string does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gmc.h"
#include "gmc_sim.h"

struct dcase {
    const char *str;
    int status;
    size_t pos;
};

/* Assert status and error position of one string, printing both sides. */
static void check_case(const struct dcase *c)
{
    size_t pos = 12345;
    int rc = gmc_device_string_check(c->str, &pos);
    if (rc != c->status || pos != c->pos)
        fail_msg("\"%s\": expected %s at %zu, got %s at %zu", c->str, gmc_status_name(c->status),
                 c->pos, gmc_status_name(rc), pos);
}

static void test_good_strings(void **state)
{
    (void)state;
    static const struct dcase good[] = {
        { "sim", GMC_OK, 0 },
        { "sim:latency=50", GMC_OK, 0 },
        { "sim:latency=0x10,timeout=1000", GMC_OK, 0 },
        { "sim:latency=0", GMC_OK, 0 },
        { "sim:timeout=4294967295", GMC_OK, 0 },
        { "sim:segs=0", GMC_OK, 0 },
        { "sim:seg1=0/0x200000/0x84", GMC_OK, 0 },
        { "sim:seg1=0/0x200000/0x84/0/0,seg2=0x200000/0x100000/0x8/0/4", GMC_OK, 0 },
        { "sim:segs=2,seg2=0x200000/0x100000/0x8/0/4,seg1=0/0x200000/0x84", GMC_OK, 0 },
        { "sim:seg1=0/1/0xFFFFFFFF/0xFFFFFFFFFFFFFFFF/255", GMC_OK, 0 },
        { "sim:seg1=0/0x200000/0x284/0/0/0x100000", GMC_OK, 0 }, /* SystemMemoryEndAddress */
        { "sim:trace=/tmp/gmc/x.fst", GMC_OK, 0 },
        { "sim:pbuf=64,tdr=1000", GMC_OK, 0 },
        { "sim:pbuf=0x100000,tdr=4294967295", GMC_OK, 0 },
        { "pci:0000:01:00.0", GMC_OK, 0 },
        { "pci:0:0:1f.7", GMC_OK, 0 },
        { "pci:FFFF:ff:1F.7", GMC_OK, 0 },
        { "pci", GMC_OK, 0 },
        { "pci:id=10ee:7024", GMC_OK, 0 },
        { "pci:0000:01:00.0,id=10EE:6d63", GMC_OK, 0 },
        { "uart:/dev/ttyUSB1@3000000", GMC_OK, 0 },
        { "uart:/dev/tty@odd@115200", GMC_OK, 0 },
        { "uart:/x@1", GMC_OK, 0 },
        { "uart:/dev/ttyUSB0", GMC_OK, 0 }, /* 3 Mbaud, the boards' rate */
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        check_case(&good[i]);
}

static void test_bad_strings(void **state)
{
    (void)state;
    static const struct dcase bad[] = {
        /* backend */
        { "", GMC_E_BAD_DEVICE_STRING, 0 },
        { "simx", GMC_E_BAD_DEVICE_STRING, 0 },
        { "SIM", GMC_E_BAD_DEVICE_STRING, 0 },
        { "gpu:0", GMC_E_BAD_DEVICE_STRING, 0 },
        { ":sim", GMC_E_BAD_DEVICE_STRING, 0 },
        { " sim", GMC_E_BAD_DEVICE_STRING, 0 },
        /* sim options */
        { "sim:", GMC_E_DEVSTR_OPTION, 4 },
        { "sim:latency", GMC_E_DEVSTR_OPTION, 4 },
        { "sim:foo=1", GMC_E_DEVSTR_OPTION, 4 },
        { "sim:Latency=1", GMC_E_DEVSTR_OPTION, 4 },
        { "sim:latency=1,latency=2", GMC_E_DEVSTR_OPTION, 14 },
        { "sim:latency=1,", GMC_E_DEVSTR_OPTION, 14 },
        { "sim:,latency=1", GMC_E_DEVSTR_OPTION, 4 },
        { "sim:seg5=0/0x1000/0", GMC_E_DEVSTR_OPTION, 4 },
        { "sim:seg0=0/0x1000/0", GMC_E_DEVSTR_OPTION, 4 },
        { "sim:trace=", GMC_E_DEVSTR_OPTION, 4 },
        /* numbers */
        { "sim:latency=", GMC_E_DEVSTR_NUMBER, 12 },
        { "sim:latency=abc", GMC_E_DEVSTR_NUMBER, 12 },
        { "sim:latency=0x", GMC_E_DEVSTR_NUMBER, 12 },
        { "sim:latency=-1", GMC_E_DEVSTR_NUMBER, 12 },
        { "sim:latency=+1", GMC_E_DEVSTR_NUMBER, 12 },
        { "sim:latency=1 ", GMC_E_DEVSTR_NUMBER, 12 },
        { "sim:latency=4294967296", GMC_E_DEVSTR_NUMBER, 12 },
        { "sim:latency=0x1g", GMC_E_DEVSTR_NUMBER, 12 },
        { "sim:timeout=0", GMC_E_DEVSTR_NUMBER, 12 },
        { "sim:segs=5", GMC_E_DEVSTR_NUMBER, 9 },
        { "sim:pbuf=32", GMC_E_DEVSTR_NUMBER, 9 },
        { "sim:pbuf=100", GMC_E_DEVSTR_NUMBER, 9 },
        { "sim:pbuf=0x100020", GMC_E_DEVSTR_NUMBER, 9 },
        { "sim:tdr=999", GMC_E_DEVSTR_NUMBER, 8 },
        { "sim:pbuf=64,pbuf=64", GMC_E_DEVSTR_OPTION, 12 },
        { "sim:seg1=0/1/0x100000000", GMC_E_DEVSTR_NUMBER, 13 },
        { "sim:seg1=0/1/2/3/256", GMC_E_DEVSTR_NUMBER, 17 },
        { "sim:seg1=0/18446744073709551616/0", GMC_E_DEVSTR_NUMBER, 11 },
        { "sim:seg1=0//0", GMC_E_DEVSTR_NUMBER, 11 },
        /* segment straps */
        { "sim:seg1=0/0x1000", GMC_E_DEVSTR_SEGMENT, 9 },
        { "sim:seg1=", GMC_E_DEVSTR_SEGMENT, 9 },
        { "sim:seg1=0/1/2/3/4/5/6", GMC_E_DEVSTR_SEGMENT, 9 },
        { "sim:seg1=0/1/2/3/4/18446744073709551616", GMC_E_DEVSTR_NUMBER, 19 },
        { "sim:seg2=0/0x1000/0", GMC_E_DEVSTR_SEGMENT, 19 },
        { "sim:segs=1,seg2=0/0x1000/0", GMC_E_DEVSTR_SEGMENT, 4 },
        { "sim:segs=1,seg1=0/0x1000/0,seg2=0/0x1000/0", GMC_E_DEVSTR_SEGMENT, 27 },
        { "sim:segs=2,seg1=0/0x1000/0", GMC_E_DEVSTR_SEGMENT, 4 },
        /* pci */
        { "pci:0000:01:00.0,", GMC_E_DEVSTR_OPTION, 17 },
        { "pci:0000:01:00.0,foo=1", GMC_E_DEVSTR_OPTION, 17 },
        { "pci:0000:01:00.0,id=1:2,id=1:2", GMC_E_DEVSTR_OPTION, 24 },
        { "pci:id=10ee", GMC_E_DEVSTR_PCI, 7 },
        { "pci:id=0:1", GMC_E_DEVSTR_PCI, 7 },
        { "pci:id=1:ffff", GMC_E_DEVSTR_PCI, 7 },
        { "pci:id=12345:1", GMC_E_DEVSTR_PCI, 7 },
        { "pci:id=1:2,0000:01:00.0", GMC_E_DEVSTR_OPTION, 11 },
        { "pci:", GMC_E_DEVSTR_PCI, 4 },
        { "pci:0000:01:00", GMC_E_DEVSTR_PCI, 12 },
        { "pci:0000:01", GMC_E_DEVSTR_PCI, 9 },
        { "pci:0000:01:20.0", GMC_E_DEVSTR_PCI, 12 },
        { "pci:0000:01:00.8", GMC_E_DEVSTR_PCI, 15 },
        { "pci:0000:01:00.00", GMC_E_DEVSTR_PCI, 15 },
        { "pci:00000:01:00.0", GMC_E_DEVSTR_PCI, 4 },
        { "pci:0000:001:00.0", GMC_E_DEVSTR_PCI, 9 },
        { "pci:0000:01:00.0x", GMC_E_DEVSTR_PCI, 15 },
        { "pci:g000:01:00.0", GMC_E_DEVSTR_PCI, 4 },
        { "pci::01:00.0", GMC_E_DEVSTR_PCI, 4 },
        { "pci:0000:01:.0", GMC_E_DEVSTR_PCI, 12 },
        { "pci:0000:01:00.", GMC_E_DEVSTR_PCI, 15 },
        /* uart */
        { "uart", GMC_E_DEVSTR_UART, 4 },
        { "uart:", GMC_E_DEVSTR_UART, 5 },
        { "uart:dev/ttyUSB0@9600", GMC_E_DEVSTR_UART, 5 },
        { "uart:/dev/ttyUSB0@", GMC_E_DEVSTR_UART, 18 },
        { "uart:/dev/ttyUSB0@96x0", GMC_E_DEVSTR_UART, 20 },
        { "uart:/dev/ttyUSB0@0", GMC_E_DEVSTR_UART, 18 },
        { "uart:/dev/ttyUSB0@0x10", GMC_E_DEVSTR_UART, 19 },
        { "uart:/dev/ttyUSB0@4294967296", GMC_E_DEVSTR_UART, 18 },
        { "uart:/@9600", GMC_E_DEVSTR_UART, 5 },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        check_case(&bad[i]);
}

static void test_long_paths(void **state)
{
    (void)state;
    char s[600];
    memset(s, 'a', sizeof(s));
    memcpy(s, "sim:trace=/", 11);
    s[sizeof(s) - 1] = '\0';
    size_t pos = 0;
    assert_int_equal(gmc_device_string_check(s, &pos), GMC_E_DEVSTR_OPTION);
    assert_int_equal(pos, 4);
    memcpy(s, "uart:/", 6);
    memcpy(s + sizeof(s) - 8, "@115200", 8);
    assert_int_equal(gmc_device_string_check(s, &pos), GMC_E_DEVSTR_UART);
    assert_int_equal(pos, 5);
}

static void test_null_arguments(void **state)
{
    (void)state;
    size_t pos = 7;
    gmc_device *dev = (gmc_device *)&pos;
    assert_int_equal(gmc_device_string_check(NULL, &pos), GMC_E_NULL_POINTER);
    assert_int_equal(pos, 0);
    assert_int_equal(gmc_device_string_check("sim", NULL), GMC_OK);
    assert_int_equal(gmc_device_open(NULL, &dev), GMC_E_NULL_POINTER);
    assert_null(dev);
    assert_int_equal(gmc_device_open("sim", NULL), GMC_E_NULL_POINTER);
    assert_int_equal(gmc_device_open_sim(NULL, NULL, NULL), GMC_E_NULL_POINTER);
    gmc_device_close(NULL);
}

/* Well-formed strings whose device cannot be opened, and malformed strings:
 * no device. (The uart backend's own refusals: tests/host/test_uart.c.) */
static void test_open_refused(void **state)
{
    (void)state;
    static const struct dcase refused[] = {
        { "uart:/nonexistent/gmc-port@3000000", GMC_E_UART_NO_PORT, 0 },
        { "uart:/dev/null", GMC_E_UART_NOT_TTY, 0 },
        { "pci:0000:01:00.9", GMC_E_DEVSTR_PCI, 15 },
        { "uart:/dev/ttyUSB1@", GMC_E_DEVSTR_UART, 18 },
        { "sim:latency=x", GMC_E_DEVSTR_NUMBER, 12 },
        { "nope", GMC_E_BAD_DEVICE_STRING, 0 },
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        const struct dcase *c = &refused[i];
        gmc_device *dev = (gmc_device *)&dev;
        struct gmc_open_report rep;
        memset(&rep, 0xAB, sizeof(rep));
        int rc = gmc_device_open_ex(c->str, &rep, &dev);
        if (rc != c->status || rep.error_pos != c->pos)
            fail_msg("open \"%s\": expected %s at %zu, got %s at %zu", c->str,
                     gmc_status_name(c->status), c->pos, gmc_status_name(rc), rep.error_pos);
        assert_null(dev);
        assert_null(rep.rule);
        assert_int_equal(rep.segment, 0);
        assert_int_equal(gmc_device_open(c->str, &dev), c->status);
        assert_null(dev);
    }
}

static void test_open_sim(void **state)
{
    (void)state;
    gmc_device *dev = NULL;
    struct gmc_device_info info;
    assert_int_equal(gmc_device_open("sim", &dev), GMC_OK);
    assert_non_null(dev);
    assert_int_equal(gmc_device_query(dev, &info), GMC_OK);
    assert_string_equal(info.backend, "sim");
    assert_int_equal(info.id, GMC_ID);
    assert_int_equal(info.version >> 16, GMC_VERSION_MAJOR);
    assert_int_equal(info.segment_count, 3);
    assert_int_equal(info.allocations, 0);
    assert_int_equal(info.handles, 0);
    gmc_device_close(dev);

    /* Options reach the model: straps become the descriptors the driver reads. */
    const char *s = "sim:latency=7,timeout=5000,seg1=0/0x100000/0x4/0x0/0,"
                    "seg2=0x100000/0x100000/0x8/0/2";
    assert_int_equal(gmc_device_open(s, &dev), GMC_OK);
    assert_int_equal(gmc_device_query(dev, &info), GMC_OK);
    assert_int_equal(info.segment_count, 2);
    struct gmc_segment_info si;
    assert_int_equal(gmc_segment_query(dev, 1, &si), GMC_OK);
    assert_int_equal(si.desc.id, 1);
    assert_int_equal(si.desc.base, 0);
    assert_int_equal(si.desc.size, 0x100000);
    assert_int_equal(si.desc.flags, GMC_SEGFLAGS_CPU_VISIBLE_MASK);
    assert_int_equal(gmc_segment_query(dev, 2, &si), GMC_OK);
    assert_int_equal(si.desc.base, 0x100000);
    assert_int_equal(si.desc.flags, GMC_SEGFLAGS_USE_BANKING_MASK);
    assert_int_equal(si.desc.banks, 2);
    assert_int_equal(gmc_segment_query(dev, 3, &si), GMC_E_NOT_FOUND);
    gmc_device_close(dev);
}

static void test_trace_option(void **state)
{
    (void)state;
    char path[128], str[160];
    snprintf(path, sizeof(path), "/tmp/gmc_devstr_%ld.fst", (long)getpid());
    snprintf(str, sizeof(str), "sim:trace=%s", path);
    unlink(path);
    gmc_device *dev = NULL;
    assert_int_equal(gmc_device_open(str, &dev), GMC_OK);
    gmc_device_close(dev);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > 0);
    unlink(path);
    /* A trace file that cannot be written fails the open, leaving no device. */
    dev = (gmc_device *)&st;
    assert_int_equal(gmc_device_open("sim:trace=/nonexistent-dir/x.fst", &dev), GMC_E_IO);
    assert_null(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_strings),
        cmocka_unit_test(test_bad_strings),
        cmocka_unit_test(test_long_paths),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_open_refused),
        cmocka_unit_test(test_open_sim),
        cmocka_unit_test(test_trace_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
