/*
 * test_pci_sysfs.c - the pci backend (host/backend/gmc_backend_pci.c) on a
 * fake /sys/bus/pci tree in a private mount namespace (tests/pci/fake_pci.h).
 *
 * libpciaccess itself runs: it scans the fake tree, probes the devices,
 * writes their config files and maps their BAR files. BAR0 files of gmc
 * devices hold a register image read from the Verilated model (every
 * register of the map, as gmc_top answers it), so the full device open
 * (driver, segment rules) runs too. Covered: discovery among several
 * devices, selection by address, wrong IDs and the id= override, the ID
 * register, every BAR error, the command register (read back from the
 * config file, restored on close), the exclusive lock (in this process and
 * from a child), permissions (a child without root), libpciaccess failing
 * to initialise, surprise removal (BAR0 reading all ones), the write-
 * combined BAR1 file, the controller's own reset, and DMA without VFIO.
 *
 * Without root or where unshare(CLONE_NEWNS) fails, every test is skipped
 * and says why (cmocka's SKIPPED count).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_pci.h"
#include "gmc.h"
#include "gmc_backend.h"
#include "gmc_devstr.h"
#include "gmc_regs.h"
#include "gmc_sim.h"
#include "gmc_status.h"

#define GMC_A "0000:02:00.0"
#define GMC_B "0000:03:00.0"
#define OTHER "0000:00:01.0"
#define MiB (1024u * 1024u)

static int ready;
static char why[256];
static uint8_t image[0x1000]; /* BAR0 register image from the model */

/* Every register of the map as the model answers after reset. */
static int make_image(void)
{
    gmc_sim *sim = NULL;
    if (gmc_sim_create(NULL, &sim) != GMC_SIM_OK)
        return -1;
    memset(image, 0, sizeof(image));
    for (unsigned i = 0; i < GMC_REG_TABLE_LEN; i++) {
        const struct gmc_reg_info *r = &gmc_reg_table[i];
        for (uint32_t k = 0; k < r->count; k++) {
            uint32_t off = r->offset + k * r->stride, v = 0;
            if (r->access != GMC_REG_WO && gmc_sim_reg_read(sim, off, &v) != GMC_SIM_OK)
                v = 0;
            memcpy(&image[off], &v, 4);
        }
    }
    gmc_sim_destroy(sim);
    return 0;
}

static int group_setup(void **state)
{
    (void)state;
    if (fake_pci_enter(why, sizeof(why)) != 0) {
        printf("test_pci_sysfs: skipped: %s\n", why);
        return 0;
    }
    if (make_image() != 0) {
        snprintf(why, sizeof(why), "the model could not be built");
        return -1;
    }
    ready = 1;
    return 0;
}

#define NEED_TREE()                                                                                \
    do {                                                                                           \
        if (!ready) {                                                                              \
            printf("skipped: %s\n", why);                                                          \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

static struct fake_dev gmc_dev(const char *addr)
{
    struct fake_dev d = { .addr = addr, .vendor = GMC_PCI_VENDOR_ID, .device = GMC_PCI_DEVICE_ID,
                          .command = 0x0400 /* INTx disabled: must survive */ };
    d.bar[0] = (struct fake_bar){ .size = 0x10000 };
    d.bar[1] = (struct fake_bar){ .size = 2 * MiB, .prefetch = 1 };
    return d;
}

/* Add a device; a gmc one gets the register image in BAR0. */
static void add(const struct fake_dev *d, int gmc_regs)
{
    assert_int_equal(fake_pci_add(d), 0);
    if (gmc_regs)
        assert_int_equal(fake_pci_write(d->addr, "resource0", 0, image, sizeof(image)), 0);
}

/* The fake tree: a non-gmc device first, then two gmc devices. */
static void three_devices(void)
{
    assert_int_equal(fake_pci_clear(0), 0);
    struct fake_dev other = { .addr = OTHER, .vendor = 0x8086, .device = 0x1237 };
    other.bar[0] = (struct fake_bar){ .size = 0x10000 };
    other.bar[1] = (struct fake_bar){ .size = 2 * MiB };
    add(&other, 0);
    struct fake_dev a = gmc_dev(GMC_A), b = gmc_dev(GMC_B);
    b.pm = 1;
    add(&a, 1);
    add(&b, 1);
}

static int be_open(const char *str, void **ctx)
{
    struct gmc_devspec spec;
    size_t pos = 0;
    assert_int_equal(gmc_devstr_parse(str, &spec, &pos), GMC_OK);
    return gmc_backend_pci.open(&spec, ctx);
}

/* An open that must fail with `want`, leaving no context and no lock. */
static void refused(const char *str, int want, const char *addr)
{
    void *ctx = (void *)&ctx;
    int rc = be_open(str, &ctx);
    if (rc != want)
        fail_msg("open %s: expected %s, got %s", str, gmc_status_name(want), gmc_status_name(rc));
    assert_null(ctx);
    if (addr != NULL) {
        char p[256];
        fake_pci_path(addr, "config", p, sizeof(p));
        int fd = open(p, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0); /* the lock was dropped */
        close(fd);
    }
}

static void test_discovery(void **state)
{
    (void)state;
    NEED_TREE();
    three_devices();
    void *ctx = NULL;
    assert_int_equal(be_open("pci", &ctx), GMC_OK);
    /* the first gmc device (by address) was opened: its command register */
    assert_int_equal(fake_pci_command(GMC_A), 0x0406);
    assert_int_equal(fake_pci_command(GMC_B), 0x0400);
    assert_int_equal(fake_pci_command(OTHER), 0x0000);
    gmc_backend_pci.close(ctx);
    assert_int_equal(fake_pci_command(GMC_A), 0x0400);
    /* only non-gmc devices: none found */
    assert_int_equal(fake_pci_clear(0), 0);
    struct fake_dev other = { .addr = OTHER, .vendor = 0x8086, .device = 0x1237 };
    add(&other, 0);
    refused("pci", GMC_E_PCI_NO_DEVICE, NULL);
}

static void test_select_by_address(void **state)
{
    (void)state;
    NEED_TREE();
    three_devices();
    void *ctx = NULL;
    assert_int_equal(be_open("pci:0000:03:00.0", &ctx), GMC_OK);
    assert_int_equal(fake_pci_command(GMC_A), 0x0400);
    assert_int_equal(fake_pci_command(GMC_B), 0x0406);
    /* the register read reaches that device's BAR0 file */
    uint32_t v = 0x1234abcd;
    assert_int_equal(fake_pci_write(GMC_B, "resource0", GMC_REG_SCRATCH, &v, 4), 0);
    v = 0;
    assert_int_equal(gmc_backend_pci.read32(ctx, GMC_REG_SCRATCH, &v), GMC_OK);
    assert_int_equal(v, 0x1234abcd);
    gmc_backend_pci.close(ctx);
    refused("pci:0000:09:00.0", GMC_E_PCI_NO_DEVICE, NULL);
}

static void test_wrong_ids(void **state)
{
    (void)state;
    NEED_TREE();
    three_devices();
    refused("pci:" OTHER, GMC_E_PCI_WRONG_ID, OTHER);
    assert_int_equal(fake_pci_command(OTHER), 0x0000);
    /* the IDs accepted by override, then refused by the ID register */
    refused("pci:" OTHER ",id=8086:1237", GMC_E_PCI_ID_REGISTER, OTHER);
    assert_int_equal(fake_pci_command(OTHER), 0x0000); /* restored */
    /* a gmc board flashed with other IDs: refused, unless overridden */
    struct fake_dev x = gmc_dev("0000:04:00.0");
    x.vendor = 0x10ee;
    x.device = 0x7024;
    add(&x, 1);
    refused("pci:0000:04:00.0", GMC_E_PCI_WRONG_ID, "0000:04:00.0");
    void *ctx = NULL;
    assert_int_equal(be_open("pci:0000:04:00.0,id=10ee:7024", &ctx), GMC_OK);
    gmc_backend_pci.close(ctx);
    assert_int_equal(be_open("pci:id=10ee:7024", &ctx), GMC_OK);
    assert_int_equal(fake_pci_command("0000:04:00.0"), 0x0406);
    gmc_backend_pci.close(ctx);
}

/* One gmc device with its BARs changed by `edit`. */
static void bar_case(void (*edit)(struct fake_dev *), int want)
{
    assert_int_equal(fake_pci_clear(0), 0);
    struct fake_dev d = gmc_dev(GMC_A);
    edit(&d);
    add(&d, d.bar[0].size >= sizeof(image) && !d.bar[0].io);
    refused("pci", want, GMC_A);
    assert_int_equal(fake_pci_command(GMC_A), 0x0400);
}

static void no_bar0(struct fake_dev *d) { d->bar[0].size = 0; }
static void no_bar1(struct fake_dev *d) { d->bar[1].size = 0; }
static void io_bar0(struct fake_dev *d) { d->bar[0] = (struct fake_bar){ .size = 0x100, .io = 1 }; }
static void io_bar1(struct fake_dev *d) { d->bar[1] = (struct fake_bar){ .size = 0x100, .io = 1 }; }
static void small_bar0(struct fake_dev *d) { d->bar[0].size = 0x400; /* < GMC_REG_SPAN */ }
static void small_bar1(struct fake_dev *d) { d->bar[1].size = 1 * MiB; /* < CPU_WINDOW_SIZE */ }

static void test_bar_errors(void **state)
{
    (void)state;
    NEED_TREE();
    assert_true(0x400u < GMC_REG_SPAN);
    bar_case(no_bar0, GMC_E_PCI_BAR_MISSING);
    bar_case(no_bar1, GMC_E_PCI_BAR_MISSING);
    bar_case(io_bar0, GMC_E_PCI_BAR_IO);
    bar_case(io_bar1, GMC_E_PCI_BAR_IO);
    bar_case(small_bar0, GMC_E_PCI_BAR_SMALL);
    bar_case(small_bar1, GMC_E_PCI_BAR_SMALL);
}

static void test_command_register(void **state)
{
    (void)state;
    NEED_TREE();
    assert_int_equal(fake_pci_clear(0), 0);
    struct fake_dev d = gmc_dev(GMC_A);
    d.command = 0x0000;
    add(&d, 1);
    void *ctx = NULL;
    assert_int_equal(be_open("pci", &ctx), GMC_OK);
    assert_int_equal(fake_pci_command(GMC_A), 0x0006); /* memory space + bus master */
    char en[4] = { 0 };
    assert_int_equal(fake_pci_read(GMC_A, "enable", 0, en, 1), 0);
    assert_int_equal(en[0], '1'); /* pci_device_enable wrote sysfs "enable" */
    gmc_backend_pci.close(ctx);
    assert_int_equal(fake_pci_command(GMC_A), 0x0000);
}

static void test_exclusive(void **state)
{
    (void)state;
    NEED_TREE();
    three_devices();
    void *a = NULL, *b = NULL;
    assert_int_equal(be_open("pci:" GMC_A, &a), GMC_OK);
    refused("pci:" GMC_A, GMC_E_PCI_BUSY, NULL);
    assert_int_equal(fake_pci_command(GMC_A), 0x0406); /* the refused open changed nothing */
    /* the other device is free */
    assert_int_equal(be_open("pci:" GMC_B, &b), GMC_OK);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        void *c = NULL;
        int rc = be_open("pci:" GMC_A, &c);
        _exit(rc == GMC_E_PCI_BUSY && c == NULL ? 0 : 1);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    gmc_backend_pci.close(a);
    gmc_backend_pci.close(b);
    assert_int_equal(be_open("pci:" GMC_A, &a), GMC_OK);
    gmc_backend_pci.close(a);
}

static void test_permission(void **state)
{
    (void)state;
    NEED_TREE();
    three_devices();
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
            _exit(2);
        void *c = (void *)&c;
        int rc = be_open("pci:" GMC_A, &c);
        _exit(rc == GMC_E_PCI_PERMISSION && c == NULL ? 0 : 1);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(fake_pci_command(GMC_A), 0x0400);
}

static void test_init_fails(void **state)
{
    (void)state;
    NEED_TREE();
    assert_int_equal(fake_pci_clear(1), 0); /* no /sys/bus/pci/devices at all */
    refused("pci", GMC_E_PCI_INIT, NULL);
    refused("pci:" GMC_A, GMC_E_PCI_INIT, NULL);
    gmc_device *dev = (gmc_device *)&dev;
    assert_int_equal(gmc_device_open("pci", &dev), GMC_E_PCI_INIT);
    assert_null(dev);
    assert_int_equal(fake_pci_clear(0), 0);
}

static void test_removal(void **state)
{
    (void)state;
    NEED_TREE();
    three_devices();
    void *ctx = NULL;
    uint32_t v = 0;
    uint8_t buf[64];
    assert_int_equal(be_open("pci:" GMC_A, &ctx), GMC_OK);
    /* SCRATCH may legitimately read all ones while the device is there */
    assert_int_equal(gmc_backend_pci.write32(ctx, GMC_REG_SCRATCH, 0xFFFFFFFFu), GMC_OK);
    assert_int_equal(gmc_backend_pci.read32(ctx, GMC_REG_SCRATCH, &v), GMC_OK);
    assert_int_equal(v, 0xFFFFFFFFu);
    /* the device vanishes: every BAR0 byte reads all ones */
    uint8_t ones[4096];
    memset(ones, 0xFF, sizeof(ones));
    assert_int_equal(fake_pci_write(GMC_A, "resource0", 0, ones, sizeof(ones)), 0);
    assert_int_equal(fake_pci_write(GMC_A, "resource1_wc", 0, ones, sizeof(ones)), 0);
    v = 7;
    assert_int_equal(gmc_backend_pci.read32(ctx, GMC_REG_CAPS, &v), GMC_E_PCI_GONE);
    assert_int_equal(v, 0);
    assert_int_equal(gmc_backend_pci.write32(ctx, GMC_REG_SCRATCH, 1), GMC_E_PCI_GONE);
    memset(buf, 0x5A, sizeof(buf));
    assert_int_equal(gmc_backend_pci.aperture_read(ctx, 0, buf, sizeof(buf)), GMC_E_PCI_GONE);
    for (size_t i = 0; i < sizeof(buf); i++)
        assert_int_equal(buf[i], 0);
    assert_int_equal(gmc_backend_pci.aperture_write(ctx, 0, buf, sizeof(buf)), GMC_E_PCI_GONE);
    assert_int_equal(gmc_backend_pci.irq(ctx), GMC_E_PCI_GONE);
    assert_int_equal(gmc_backend_pci.reset(ctx), GMC_E_PCI_GONE);
    uint64_t ran = 9;
    assert_int_equal(gmc_backend_pci.wait(ctx, 10, 1, &ran), GMC_E_PCI_GONE);
    assert_int_equal(ran, 0);
    gmc_backend_pci.close(ctx);
    /* the gone device's command register is left alone; the lock is dropped */
    assert_int_equal(fake_pci_command(GMC_A), 0x0406);
    refused("pci:" GMC_A, GMC_E_PCI_GONE, GMC_A);
}

static void test_bars_and_reset(void **state)
{
    (void)state;
    NEED_TREE();
    three_devices();
    void *ctx = NULL;
    assert_int_equal(be_open("pci:" GMC_A, &ctx), GMC_OK);
    /* BAR0: 32-bit writes land in the register file */
    assert_int_equal(gmc_backend_pci.write32(ctx, GMC_REG_SCRATCH, 0xC0FFEE01u), GMC_OK);
    assert_int_equal(gmc_backend_pci.write32(ctx, GMC_REG_PROT_BASE, 0x5000u), GMC_OK);
    uint32_t v = 0;
    assert_int_equal(fake_pci_read(GMC_A, "resource0", GMC_REG_SCRATCH, &v, 4), 0);
    assert_int_equal(v, 0xC0FFEE01u);
    assert_int_equal(gmc_backend_pci.read32(ctx, 2, &v), GMC_E_INVALID_ARG);
    assert_int_equal(gmc_backend_pci.read32(ctx, 0x10000, &v), GMC_E_INVALID_ARG);
    /* BAR1 is prefetchable: mapped write-combining (the _wc file), any alignment */
    uint8_t out[77], in[77];
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (uint8_t)(i * 7u + 3u);
    assert_int_equal(gmc_backend_pci.aperture_write(ctx, 0x1003, out, sizeof(out)), GMC_OK);
    memset(in, 0, sizeof(in));
    assert_int_equal(fake_pci_read(GMC_A, "resource1_wc", 0x1003, in, sizeof(in)), 0);
    assert_memory_equal(in, out, sizeof(out));
    memset(in, 0, sizeof(in));
    assert_int_equal(fake_pci_read(GMC_A, "resource1", 0x1003, in, sizeof(in)), 0);
    assert_int_equal(in[0], 0); /* not through the uncached file */
    memset(in, 0, sizeof(in));
    assert_int_equal(gmc_backend_pci.aperture_read(ctx, 0x1003, in, sizeof(in)), GMC_OK);
    assert_memory_equal(in, out, sizeof(out));
    /* past CPU_WINDOW_SIZE: a bus error, as the hardware's DECERR */
    assert_int_equal(gmc_backend_pci.aperture_read(ctx, 2 * MiB - 8u, in, 16), GMC_E_BUS);
    /* DMA needs VFIO; this device is not bound to vfio-pci */
    assert_int_equal(gmc_backend_pci.host_map(ctx, 0x100000, in, 4096), GMC_E_PCI_NO_VFIO);
    /* no FLR capability: the controller's own reset, rw registers to reset values */
    assert_int_equal(gmc_backend_pci.reset(ctx), GMC_OK);
    assert_int_equal(fake_pci_read(GMC_A, "resource0", GMC_REG_SCRATCH, &v, 4), 0);
    assert_int_equal(v, 0);
    assert_int_equal(fake_pci_read(GMC_A, "resource0", GMC_REG_PROT_BASE, &v, 4), 0);
    assert_int_equal(v, 0);
    uint32_t pt = 0;
    memcpy(&pt, &image[GMC_REG_PT_BASE], 4);
    assert_int_equal(fake_pci_read(GMC_A, "resource0", GMC_REG_PT_BASE, &v, 4), 0);
    assert_int_equal(v, pt);
    assert_int_equal(fake_pci_read(GMC_A, "resource0", GMC_REG_DMA_RING_SIZE, &v, 4), 0);
    assert_int_equal(v, GMC_REG_DMA_RING_SIZE_RESET);
    gmc_backend_pci.close(ctx);
}

/* Standby and resume through the PM capability: the controller's own reset,
 * D3hot, the BARs untouchable until D0; on the way up, the BARs and command
 * register written back when the function reset itself, registers at their
 * reset values. Without the capability: unsupported, nothing written. */
static void test_power(void **state)
{
    (void)state;
    NEED_TREE();
    for (int pm = 0; pm <= 2; pm++) {
        assert_int_equal(fake_pci_clear(0), 0);
        struct fake_dev a = gmc_dev(GMC_A);
        a.pm = pm;
        add(&a, 1);
        uint32_t bars[6], v = 0;
        assert_int_equal(fake_pci_read(GMC_A, "config", 0x10, bars, sizeof(bars)), 0);
        void *ctx = NULL;
        assert_int_equal(be_open("pci:" GMC_A, &ctx), GMC_OK);
        assert_int_equal(gmc_backend_pci.write32(ctx, GMC_REG_SCRATCH, 0x5A5A0001u), GMC_OK);
        uint64_t range[2] = { 0, 4096 };
        if (pm == 0) {
            assert_int_equal(gmc_backend_pci.power(ctx, 1, range, 1), GMC_E_UNSUPPORTED);
            assert_int_equal(gmc_backend_pci.read32(ctx, GMC_REG_SCRATCH, &v), GMC_OK);
            assert_int_equal(v, 0x5A5A0001u); /* nothing reset */
            gmc_backend_pci.close(ctx);
            continue;
        }
        assert_int_equal(gmc_backend_pci.power(ctx, 2, range, 1), GMC_OK);
        uint16_t csr = 0;
        assert_int_equal(fake_pci_read(GMC_A, "config", 0x44, &csr, 2), 0);
        assert_int_equal(csr & 3u, 3u); /* D3hot */
        assert_int_equal(fake_pci_read(GMC_A, "resource0", GMC_REG_SCRATCH, &v, 4), 0);
        assert_int_equal(v, 0); /* reset before the power-down */
        /* powered down: no register, aperture, interrupt or reset access */
        assert_int_equal(gmc_backend_pci.read32(ctx, GMC_REG_ID, &v), GMC_E_POWER_STATE);
        assert_int_equal(gmc_backend_pci.write32(ctx, GMC_REG_SCRATCH, 1), GMC_E_POWER_STATE);
        uint8_t buf[8];
        assert_int_equal(gmc_backend_pci.aperture_read(ctx, 0, buf, 8), GMC_E_POWER_STATE);
        assert_int_equal(gmc_backend_pci.irq(ctx), GMC_E_POWER_STATE);
        assert_int_equal(gmc_backend_pci.reset(ctx), GMC_E_POWER_STATE);
        assert_int_equal(gmc_backend_pci.power(ctx, 1, NULL, 0), GMC_OK); /* already down */
        /* the function resets itself on the way up unless No_Soft_Reset:
         * its BARs and command register read 0 then */
        uint32_t zero[6] = { 0 };
        uint16_t cmd0 = 0;
        assert_int_equal(fake_pci_write(GMC_A, "config", 0x10, zero, sizeof(zero)), 0);
        assert_int_equal(fake_pci_write(GMC_A, "config", 0x04, &cmd0, 2), 0);
        assert_int_equal(fake_pci_write(GMC_A, "resource0", GMC_REG_SCRATCH, &(uint32_t){ 7u }, 4), 0);
        assert_int_equal(gmc_backend_pci.power(ctx, 0, NULL, 0), GMC_OK);
        assert_int_equal(fake_pci_read(GMC_A, "config", 0x44, &csr, 2), 0);
        assert_int_equal(csr & 3u, 0u); /* D0 */
        uint32_t now[6];
        assert_int_equal(fake_pci_read(GMC_A, "config", 0x10, now, sizeof(now)), 0);
        if (pm == 1) {
            assert_memory_equal(now, bars, sizeof(bars));
            assert_int_equal(fake_pci_command(GMC_A), 0x0406);
        } else {
            assert_memory_equal(now, zero, sizeof(zero)); /* not reset: not written */
            assert_int_equal(fake_pci_command(GMC_A), 0);
        }
        assert_int_equal(gmc_backend_pci.read32(ctx, GMC_REG_SCRATCH, &v), GMC_OK);
        assert_int_equal(v, 0); /* the controller's own reset after D0 */
        /* closed while powered down: left in D0 */
        assert_int_equal(gmc_backend_pci.power(ctx, 1, NULL, 0), GMC_OK);
        gmc_backend_pci.close(ctx);
        assert_int_equal(fake_pci_read(GMC_A, "config", 0x44, &csr, 2), 0);
        assert_int_equal(csr & 3u, 0u);
    }
}

/* The public API on the fake device: open, query, and paging refused with
 * the status that names the fix. */
static void test_device_open(void **state)
{
    (void)state;
    NEED_TREE();
    three_devices();
    gmc_device *dev = NULL;
    assert_int_equal(gmc_device_open("pci:" GMC_B, &dev), GMC_OK);
    struct gmc_device_info in;
    assert_int_equal(gmc_device_query(dev, &in), GMC_OK);
    assert_string_equal(in.backend, "pci");
    assert_int_equal(in.id, GMC_ID);
    uint32_t caps = 0;
    memcpy(&caps, &image[GMC_REG_CAPS], 4);
    assert_int_equal(in.caps, caps);
    assert_true(in.caps & GMC_CAPS_DMA_MASK);
    assert_int_equal(in.segment_count, 3);
    assert_int_equal(gmc_fence_wait(dev, 0, 0), GMC_E_PCI_NO_VFIO);
    /* the library's power transitions save content through the paging
     * engine, so without VFIO they are refused before the device is touched
     * (the backend's D3hot itself: test_power) */
    struct gmc_power_report rep;
    assert_int_equal(gmc_device_power(dev, GMC_POWER_STANDBY, &rep), GMC_E_UNSUPPORTED);
    uint16_t csr = 0xFFFF;
    assert_int_equal(fake_pci_read(GMC_B, "config", 0x44, &csr, 2), 0);
    assert_int_equal(csr & 3u, 0u); /* still D0 */
    gmc_device *again = (gmc_device *)&again;
    assert_int_equal(gmc_device_open("pci:" GMC_B, &again), GMC_E_PCI_BUSY);
    assert_null(again);
    gmc_device_close(dev);
    assert_int_equal(fake_pci_command(GMC_B), 0x0400);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_discovery),     cmocka_unit_test(test_select_by_address),
        cmocka_unit_test(test_wrong_ids),     cmocka_unit_test(test_bar_errors),
        cmocka_unit_test(test_command_register), cmocka_unit_test(test_exclusive),
        cmocka_unit_test(test_permission),    cmocka_unit_test(test_init_fails),
        cmocka_unit_test(test_removal),       cmocka_unit_test(test_bars_and_reset), cmocka_unit_test(test_power),
        cmocka_unit_test(test_device_open),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
