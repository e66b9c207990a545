/*
 * gmc_backend_pci.c - the backend on a PCIe board, through libpciaccess.
 *
 * DOC: Overview
 *
 * gmc_top sits behind a PCIe-AXI bridge (docs/pci.md): BAR0 is its
 * AXI4-Lite register port, BAR1 its AXI4 CPU aperture, its DMA master goes
 * out as bus mastering and its irq line becomes MSI/INTx.
 *
 * Open, step by step, each step undone when a later one fails (no
 * half-open device):
 *   1. pci_system_init (shared by the handles of one process, counted);
 *   2. find the device: "pci" the first one with the gmc IDs (or the
 *      id=VVVV:DDDD override), "pci:D:B:D.F" that one, refused when its IDs
 *      are not the expected ones;
 *   3. take an exclusive flock on its sysfs config file (a second process,
 *      or a second open in this one, answers GMC_E_PCI_BUSY);
 *   4. pci_device_probe; BAR0 and BAR1 must be memory BARs, BAR0 at least
 *      GMC_REG_SPAN bytes;
 *   5. pci_device_enable, then memory space and bus mastering set in the
 *      command register and read back (the old value is restored on close);
 *   6. BAR0 mapped uncached and the ID register checked (VERSION is the
 *      driver's check, gmc_kmd.c); BAR1 at least CPU_WINDOW_SIZE bytes,
 *      mapped write-combining when it is prefetchable (else uncached);
 *   7. VFIO: when the device is bound to vfio-pci, its IOMMU group joins a
 *      type1 container and host_map/host_unmap map exactly the registered
 *      ranges at the bus addresses the library chose. Without VFIO, open
 *      succeeds for register and aperture work and host_map answers
 *      GMC_E_PCI_NO_VFIO, naming the fix; physical addresses are never used.
 *
 * Registers are 32-bit volatile accesses. The aperture is accessed in
 * aligned 8-byte volatile words (bytes at the unaligned edges); a store
 * fence (wc_flush) follows every aperture write, so write-combined data is posted before
 * the next register write (a doorbell, a fence) can overtake it.
 *
 * A register read of all ones is checked against the ID register: when
 * that reads all ones too, the device is gone (surprise removal). The
 * handle then answers GMC_E_PCI_GONE to everything and close only unmaps
 * and unlocks.
 *
 * Interrupts: with VFIO, the device's MSI (else INTx) signals an eventfd
 * that wait() sleeps on; without, wait() polls IRQ_STATUS & IRQ_MASK every
 * 10 us. `cycles` is wall time at the board clock (GMC_PCI_CLOCK_HZ).
 * Reset: VFIO_DEVICE_RESET when VFIO offers one, else a function-level
 * reset through sysfs when the device advertises FLR, else the
 * controller's own reset: the engine's RESET command and every read-write
 * register back to its reset value. Power: D3hot and back through the PCI
 * Power Management capability (pci_power).
 *
 * libpciaccess keeps process-wide state: the handles of one process share
 * it, and this backend is not thread-safe (one thread opens and closes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <pciaccess.h>

#include "gmc.h"
#include "gmc_backend.h"
#include "gmc_devstr.h"
#include "gmc_regs.h"
#include "gmc_status.h"

#define SYSFS_PCI "/sys/bus/pci/devices"
#define ALL_ONES 0xFFFFFFFFu
#define MAX_DMA_MAPS 256u

struct dma_map {
    uint64_t bus;
    uint64_t len;
};

struct pci_ctx {
    struct pci_device *dev;
    char addr[16]; /* DDDD:BB:DD.F */
    int lock_fd;
    uint16_t old_command;
    int command_set;
    volatile uint32_t *regs;
    uint64_t regs_size;
    volatile uint8_t *ap;
    uint64_t ap_size;
    uint64_t window;
    int gone;
    uint32_t pt_base; /* PT_BASE as found at open: its reset value */
    /* The BAR registers as found at open, written back after a D3hot->D0
     * transition that reset the function (PMCSR.No_Soft_Reset clear). */
    uint32_t bars[6];
    int powered_down; /* in D3hot since power(1|2): no BAR access */
    struct timespec t0;
    /* VFIO (all -1 when the device is not bound to vfio-pci) */
    int container, group, device;
    int irq_fd;           /* eventfd the device's MSI or INTx signals, or -1 */
    unsigned irq_index;   /* VFIO_PCI_MSI_IRQ_INDEX or VFIO_PCI_INTX_IRQ_INDEX */
    struct dma_map maps[MAX_DMA_MAPS];
    unsigned nmaps;
};

static unsigned pci_users; /* handles sharing pci_system_init */

static int system_get(void)
{
    if (pci_users == 0u && pci_system_init() != 0)
        return GMC_E_PCI_INIT;
    pci_users++;
    return GMC_OK;
}

static void system_put(void)
{
    if (pci_users > 0u && --pci_users == 0u)
        pci_system_cleanup();
}

static uint16_t want_vendor(const struct gmc_devspec *s)
{
    return s->pci_vendor != 0u ? s->pci_vendor : (uint16_t)GMC_PCI_VENDOR_ID;
}

static uint16_t want_device(const struct gmc_devspec *s)
{
    return s->pci_device != 0u ? s->pci_device : (uint16_t)GMC_PCI_DEVICE_ID;
}

static int find_device(const struct gmc_devspec *spec, struct pci_device **out)
{
    *out = NULL;
    if (!spec->pci_any) {
        struct pci_device *d = pci_device_find_by_slot(spec->domain, spec->bus, spec->dev, spec->fn);
        if (d == NULL)
            return GMC_E_PCI_NO_DEVICE;
        if (d->vendor_id != want_vendor(spec) || d->device_id != want_device(spec))
            return GMC_E_PCI_WRONG_ID;
        *out = d;
        return GMC_OK;
    }
    struct pci_id_match m = {
        .vendor_id = want_vendor(spec),
        .device_id = want_device(spec),
        .subvendor_id = PCI_MATCH_ANY,
        .subdevice_id = PCI_MATCH_ANY,
    };
    struct pci_device_iterator *it = pci_id_match_iterator_create(&m);
    if (it == NULL)
        return GMC_E_NO_MEMORY;
    *out = pci_device_next(it); /* sysfs order: the lowest address first */
    pci_iterator_destroy(it);
    return *out != NULL ? GMC_OK : GMC_E_PCI_NO_DEVICE;
}

static int errno_status(int err, int otherwise)
{
    if (err == EACCES || err == EPERM)
        return GMC_E_PCI_PERMISSION;
    if (err == ENOENT || err == ENODEV)
        return GMC_E_PCI_NO_DEVICE;
    return otherwise;
}

/* The exclusive lock: flock on the device's sysfs config file. */
static int lock_device(struct pci_ctx *c)
{
    char path[96];
    snprintf(path, sizeof(path), SYSFS_PCI "/%s/config", c->addr);
    c->lock_fd = open(path, O_RDWR | O_CLOEXEC);
    if (c->lock_fd < 0)
        return errno_status(errno, GMC_E_PCI_ENABLE);
    if (flock(c->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        int busy = errno == EWOULDBLOCK;
        close(c->lock_fd);
        c->lock_fd = -1;
        return busy ? GMC_E_PCI_BUSY : GMC_E_PCI_ENABLE;
    }
    return GMC_OK;
}

static int check_bars(const struct pci_device *d)
{
    const unsigned bars[2] = { GMC_PCI_BAR_REGS, GMC_PCI_BAR_APERTURE };
    for (unsigned i = 0; i < 2u; i++) {
        const struct pci_mem_region *r = &d->regions[bars[i]];
        if (r->size == 0u)
            return GMC_E_PCI_BAR_MISSING;
        if (r->is_IO)
            return GMC_E_PCI_BAR_IO;
    }
    if (d->regions[GMC_PCI_BAR_REGS].size < GMC_REG_SPAN)
        return GMC_E_PCI_BAR_SMALL;
    return GMC_OK;
}

/* Memory space and bus mastering on, checked by reading the register back. */
static int set_command(struct pci_ctx *c)
{
    uint16_t cmd = 0, back = 0;
    int err = pci_device_cfg_read_u16(c->dev, &cmd, PCI_COMMAND);
    if (err != 0)
        return errno_status(err, GMC_E_PCI_ENABLE);
    c->old_command = cmd;
    uint16_t want = (uint16_t)(cmd | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    err = pci_device_cfg_write_u16(c->dev, want, PCI_COMMAND);
    if (err != 0)
        return errno_status(err, GMC_E_PCI_ENABLE);
    c->command_set = 1;
    err = pci_device_cfg_read_u16(c->dev, &back, PCI_COMMAND);
    if (err != 0 || (back & (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER)) !=
                        (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER))
        return GMC_E_PCI_ENABLE;
    return GMC_OK;
}

static int map_bar(struct pci_ctx *c, unsigned bar, uint64_t size, unsigned flags, void **out)
{
    int err = pci_device_map_range(c->dev, c->dev->regions[bar].base_addr, size,
                                   PCI_DEV_MAP_FLAG_WRITABLE | flags, out);
    if (err != 0) {
        *out = NULL;
        return errno_status(err, GMC_E_PCI_MAP);
    }
    return GMC_OK;
}

static uint32_t reg_rd(const struct pci_ctx *c, uint32_t off)
{
    return c->regs[off / 4u];
}

static void reg_wr(struct pci_ctx *c, uint32_t off, uint32_t v)
{
    c->regs[off / 4u] = v;
}

/* ------------------------------------------------------------------ VFIO */

static void vfio_close(struct pci_ctx *c)
{
    if (c->irq_fd >= 0) {
        struct vfio_irq_set off = {
            .argsz = sizeof(off), .flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER,
            .index = c->irq_index, .start = 0, .count = 0,
        };
        (void)ioctl(c->device, VFIO_DEVICE_SET_IRQS, &off);
        close(c->irq_fd);
        c->irq_fd = -1;
    }
    if (c->device >= 0)
        close(c->device);
    if (c->group >= 0)
        close(c->group);
    if (c->container >= 0)
        close(c->container);
    c->device = c->group = c->container = -1;
}

/* The interrupt as an eventfd: MSI when the device has it, else INTx.
 * Without one, wait() polls IRQ_STATUS as it does without VFIO. */
static void vfio_irq(struct pci_ctx *c)
{
    static const unsigned order[2] = { VFIO_PCI_MSI_IRQ_INDEX, VFIO_PCI_INTX_IRQ_INDEX };
    for (unsigned i = 0; i < 2u; i++) {
        struct vfio_irq_info info = { .argsz = sizeof(info), .index = order[i] };
        if (ioctl(c->device, VFIO_DEVICE_GET_IRQ_INFO, &info) != 0 || info.count == 0u ||
            !(info.flags & VFIO_IRQ_INFO_EVENTFD))
            continue;
        int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fd < 0)
            return;
        /* The header, then the eventfd as its data (a struct with the
         * header as a member is a GNU extension: the header ends in a
         * flexible array). */
        const int32_t fd32 = fd;
        const size_t at = offsetof(struct vfio_irq_set, data);
        _Alignas(struct vfio_irq_set) unsigned char req[sizeof(struct vfio_irq_set) + sizeof fd32];
        const struct vfio_irq_set hdr = { .argsz = (uint32_t)(at + sizeof fd32),
                                          .flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
                                          .index = order[i], .start = 0, .count = 1 };
        memcpy(req, &hdr, at);
        memcpy(req + at, &fd32, sizeof fd32);
        if (ioctl(c->device, VFIO_DEVICE_SET_IRQS, req) != 0) {
            close(fd);
            continue;
        }
        c->irq_fd = fd;
        c->irq_index = order[i];
        return;
    }
}

/* Sleep on the interrupt eventfd for up to ns; INTx is masked by VFIO
 * after each interrupt and unmasked here once it has been read. */
static void vfio_irq_sleep(struct pci_ctx *c, uint64_t ns)
{
    struct pollfd p = { .fd = c->irq_fd, .events = POLLIN };
    int ms = (int)(ns / 1000000u) + 1;
    if (poll(&p, 1, ms) == 1) {
        uint64_t n;
        (void)!read(c->irq_fd, &n, sizeof(n));
        if (c->irq_index == VFIO_PCI_INTX_IRQ_INDEX) {
            struct vfio_irq_set un = {
                .argsz = sizeof(un), .flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_UNMASK,
                .index = VFIO_PCI_INTX_IRQ_INDEX, .start = 0, .count = 1,
            };
            (void)ioctl(c->device, VFIO_DEVICE_SET_IRQS, &un);
        }
    }
}

/* Join the device's IOMMU group to a type1 container when the device is
 * bound to vfio-pci. Not bound (or no IOMMU group): GMC_OK without VFIO. */
static int vfio_open(struct pci_ctx *c)
{
    char path[PATH_MAX + 32], link[PATH_MAX];
    snprintf(path, sizeof(path), SYSFS_PCI "/%s/driver", c->addr);
    ssize_t n = readlink(path, link, sizeof(link) - 1u);
    if (n <= 0)
        return GMC_OK;
    link[n] = '\0';
    const char *drv = strrchr(link, '/');
    if (strcmp(drv != NULL ? drv + 1 : link, "vfio-pci") != 0)
        return GMC_OK;
    snprintf(path, sizeof(path), SYSFS_PCI "/%s/iommu_group", c->addr);
    n = readlink(path, link, sizeof(link) - 1u);
    if (n <= 0)
        return GMC_OK;
    link[n] = '\0';
    const char *grp = strrchr(link, '/');
    grp = grp != NULL ? grp + 1 : link;
    c->container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
    if (c->container < 0)
        return errno_status(errno, GMC_E_PCI_VFIO);
    if (ioctl(c->container, VFIO_GET_API_VERSION) != VFIO_API_VERSION ||
        ioctl(c->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) != 1)
        goto fail;
    snprintf(path, sizeof(path), "/dev/vfio/%s", grp);
    c->group = open(path, O_RDWR | O_CLOEXEC);
    if (c->group < 0) {
        int rc = errno == EBUSY ? GMC_E_PCI_BUSY : errno_status(errno, GMC_E_PCI_VFIO);
        vfio_close(c);
        return rc;
    }
    struct vfio_group_status st = { .argsz = sizeof(st) };
    if (ioctl(c->group, VFIO_GROUP_GET_STATUS, &st) != 0 || !(st.flags & VFIO_GROUP_FLAGS_VIABLE))
        goto fail;
    if (ioctl(c->group, VFIO_GROUP_SET_CONTAINER, &c->container) != 0 ||
        ioctl(c->container, VFIO_SET_IOMMU, VFIO_TYPE1_IOMMU) != 0)
        goto fail;
    c->device = ioctl(c->group, VFIO_GROUP_GET_DEVICE_FD, c->addr);
    if (c->device < 0)
        goto fail;
    vfio_irq(c);
    return GMC_OK;
fail:
    vfio_close(c);
    return GMC_E_PCI_VFIO;
}

/* ------------------------------------------------------------------ open */

static int pci_power(void *ctx, int state, const uint64_t *ranges, unsigned n);

/* Order write-combined aperture stores before any later store (a register
 * write, a doorbell): x86 needs sfence for WC memory; AArch64 a store
 * barrier to the outer shareable domain, where devices are; elsewhere the
 * strongest C11 fence. */
static inline void wc_flush(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("sfence" ::: "memory");
#elif defined(__aarch64__)
    __asm__ __volatile__("dmb oshst" ::: "memory");
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

static void pci_close(void *ctx)
{
    struct pci_ctx *c = ctx;
    if (c == NULL)
        return;
    /* A device closed in D3hot is left in D0, as it was found. */
    if (c->powered_down && !c->gone)
        (void)pci_power(c, 0, NULL, 0);
    if (c->container >= 0) {
        for (unsigned i = 0; i < c->nmaps; i++) {
            struct vfio_iommu_type1_dma_unmap um = {
                .argsz = sizeof(um), .iova = c->maps[i].bus, .size = c->maps[i].len,
            };
            (void)ioctl(c->container, VFIO_IOMMU_UNMAP_DMA, &um);
        }
    }
    vfio_close(c);
    if (c->ap != NULL)
        pci_device_unmap_range(c->dev, (void *)(uintptr_t)c->ap, c->ap_size);
    if (c->regs != NULL)
        pci_device_unmap_range(c->dev, (void *)(uintptr_t)c->regs, c->regs_size);
    if (c->command_set && !c->gone)
        (void)pci_device_cfg_write_u16(c->dev, c->old_command, PCI_COMMAND);
    if (c->lock_fd >= 0)
        close(c->lock_fd); /* drops the flock */
    free(c);
    system_put();
}

static int setup(struct pci_ctx *c, const struct gmc_devspec *spec)
{
    int rc = find_device(spec, &c->dev);
    if (rc != GMC_OK)
        return rc;
    snprintf(c->addr, sizeof(c->addr), "%04x:%02x:%02x.%u", c->dev->domain & 0xFFFFu, c->dev->bus,
             c->dev->dev, c->dev->func);
    if ((rc = lock_device(c)) != GMC_OK)
        return rc;
    int err = pci_device_probe(c->dev);
    if (err != 0)
        return errno_status(err, GMC_E_PCI_ENABLE);
    if ((rc = check_bars(c->dev)) != GMC_OK)
        return rc;
    pci_device_enable(c->dev); /* writes sysfs "enable"; checked through the command register */
    if ((rc = set_command(c)) != GMC_OK)
        return rc;
    for (unsigned i = 0; i < 6u; i++)
        if (pci_device_cfg_read_u32(c->dev, &c->bars[i], PCI_BASE_ADDRESS_0 + 4u * i) != 0)
            return GMC_E_PCI_ENABLE;
    void *p = NULL;
    c->regs_size = c->dev->regions[GMC_PCI_BAR_REGS].size;
    if ((rc = map_bar(c, GMC_PCI_BAR_REGS, c->regs_size, 0u, &p)) != GMC_OK)
        return rc;
    c->regs = p;
    uint32_t id = reg_rd(c, GMC_REG_ID);
    if (id == ALL_ONES)
        return GMC_E_PCI_GONE;
    if (id != GMC_ID)
        return GMC_E_PCI_ID_REGISTER;
    c->window = reg_rd(c, GMC_REG_CPU_WINDOW_SIZE);
    c->pt_base = reg_rd(c, GMC_REG_PT_BASE);
    const struct pci_mem_region *b1 = &c->dev->regions[GMC_PCI_BAR_APERTURE];
    if (b1->size < c->window || c->window == 0u)
        return GMC_E_PCI_BAR_SMALL;
    c->ap_size = c->window;
    unsigned wc = b1->is_prefetchable ? PCI_DEV_MAP_FLAG_WRITE_COMBINE : 0u;
    if ((rc = map_bar(c, GMC_PCI_BAR_APERTURE, c->ap_size, wc, &p)) != GMC_OK)
        return rc;
    c->ap = p;
    clock_gettime(CLOCK_MONOTONIC, &c->t0);
    return vfio_open(c);
}

static int pci_open(const struct gmc_devspec *spec, void **ctx)
{
    *ctx = NULL;
    int rc = system_get();
    if (rc != GMC_OK)
        return rc;
    struct pci_ctx *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        system_put();
        return GMC_E_NO_MEMORY;
    }
    c->lock_fd = c->container = c->group = c->device = c->irq_fd = -1;
    rc = setup(c, spec);
    if (rc != GMC_OK) {
        pci_close(c);
        return rc;
    }
    *ctx = c;
    return GMC_OK;
}

/* ------------------------------------------------------------- registers */

/* May the BARs be touched? Not once the device is gone, nor in D3hot
 * (a powered-down function answers memory reads with all ones). */
static int usable(const struct pci_ctx *c)
{
    if (c->gone)
        return GMC_E_PCI_GONE;
    return c->powered_down ? GMC_E_POWER_STATE : GMC_OK;
}

/* An all-ones read: the device is gone when the ID register reads all ones too. */
static int check_gone(struct pci_ctx *c)
{
    if (reg_rd(c, GMC_REG_ID) == ALL_ONES)
        c->gone = 1;
    return c->gone ? GMC_E_PCI_GONE : GMC_OK;
}

static int pci_read32(void *ctx, uint32_t off, uint32_t *val)
{
    struct pci_ctx *c = ctx;
    *val = 0;
    int u = usable(c);
    if (u != GMC_OK)
        return u;
    if (off % 4u != 0u || off >= c->regs_size)
        return GMC_E_INVALID_ARG;
    uint32_t v = reg_rd(c, off);
    if (v == ALL_ONES && check_gone(c) != GMC_OK)
        return GMC_E_PCI_GONE;
    *val = v;
    return GMC_OK;
}

static int pci_write32(void *ctx, uint32_t off, uint32_t val)
{
    struct pci_ctx *c = ctx;
    int u = usable(c);
    if (u != GMC_OK)
        return u;
    if (off % 4u != 0u || off >= c->regs_size)
        return GMC_E_INVALID_ARG;
    reg_wr(c, off, val);
    return GMC_OK;
}

/* -------------------------------------------------------------- aperture */

static int ap_range(const struct pci_ctx *c, uint64_t off, size_t len)
{
    int u = usable(c);
    if (u != GMC_OK)
        return u;
    if (off > c->window || len > c->window - off)
        return GMC_E_BUS; /* past the window: the hardware answers DECERR */
    return GMC_OK;
}

static int pci_aperture_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    struct pci_ctx *c = ctx;
    int rc = ap_range(c, off, len);
    if (rc != GMC_OK) {
        memset(buf, 0, len);
        return rc;
    }
    uint8_t *out = buf;
    size_t i = 0;
    int ones = 0;
    for (; i < len && (off + i) % 8u != 0u; i++)
        out[i] = c->ap[off + i];
    for (; len - i >= 8u; i += 8u) {
        uint64_t w = *(volatile const uint64_t *)(const volatile void *)(c->ap + off + i);
        ones |= w == UINT64_MAX;
        memcpy(out + i, &w, 8);
    }
    for (; i < len; i++)
        out[i] = c->ap[off + i];
    if (ones && check_gone(c) != GMC_OK) {
        memset(buf, 0, len);
        return GMC_E_PCI_GONE;
    }
    return GMC_OK;
}

static int pci_aperture_write(void *ctx, uint64_t off, const void *buf, size_t len)
{
    struct pci_ctx *c = ctx;
    int rc = ap_range(c, off, len);
    if (rc != GMC_OK)
        return rc;
    const uint8_t *in = buf;
    size_t i = 0;
    for (; i < len && (off + i) % 8u != 0u; i++)
        c->ap[off + i] = in[i];
    for (; len - i >= 8u; i += 8u) {
        uint64_t w;
        memcpy(&w, in + i, 8);
        *(volatile uint64_t *)(volatile void *)(c->ap + off + i) = w;
    }
    for (; i < len; i++)
        c->ap[off + i] = in[i];
    wc_flush();
    return GMC_OK;
}

/* ------------------------------------------------------------------- DMA */

static int pci_host_map(void *ctx, uint64_t bus, void *ptr, size_t len)
{
    struct pci_ctx *c = ctx;
    if (c->gone)
        return GMC_E_PCI_GONE;
    if (c->container < 0)
        return GMC_E_PCI_NO_VFIO;
    if (len == 0u || ptr == NULL)
        return GMC_E_INVALID_ARG;
    if (c->nmaps == MAX_DMA_MAPS)
        return GMC_E_NO_MEMORY;
    for (unsigned i = 0; i < c->nmaps; i++) {
        if (bus < c->maps[i].bus + c->maps[i].len && c->maps[i].bus < bus + len)
            return GMC_E_IN_USE;
    }
    struct vfio_iommu_type1_dma_map m = {
        .argsz = sizeof(m),
        .flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
        .vaddr = (uint64_t)(uintptr_t)ptr,
        .iova = bus,
        .size = len,
    };
    if (ioctl(c->container, VFIO_IOMMU_MAP_DMA, &m) != 0)
        return errno == ENOMEM ? GMC_E_NO_MEMORY : GMC_E_PCI_VFIO;
    c->maps[c->nmaps++] = (struct dma_map){ bus, len };
    return GMC_OK;
}

static int pci_host_unmap(void *ctx, uint64_t bus)
{
    struct pci_ctx *c = ctx;
    if (c->container < 0)
        return GMC_E_PCI_NO_VFIO;
    for (unsigned i = 0; i < c->nmaps; i++) {
        if (c->maps[i].bus != bus)
            continue;
        struct vfio_iommu_type1_dma_unmap um = { .argsz = sizeof(um), .iova = bus, .size = c->maps[i].len };
        int err = ioctl(c->container, VFIO_IOMMU_UNMAP_DMA, &um);
        c->maps[i] = c->maps[--c->nmaps];
        return err == 0 ? GMC_OK : GMC_E_PCI_VFIO;
    }
    return GMC_E_NOT_FOUND;
}

/* ------------------------------------------------------- irq, time, wait */

static int pci_irq(void *ctx)
{
    uint32_t st = 0, mask = 0;
    int rc = pci_read32(ctx, GMC_REG_IRQ_STATUS, &st);
    if (rc == GMC_OK)
        rc = pci_read32(ctx, GMC_REG_IRQ_MASK, &mask);
    if (rc != GMC_OK)
        return rc;
    return (st & mask) != 0u;
}

static uint64_t pci_cycles(void *ctx)
{
    const struct pci_ctx *c = ctx;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ns = (int64_t)(now.tv_sec - c->t0.tv_sec) * 1000000000 + (now.tv_nsec - c->t0.tv_nsec);
    if (ns < 0)
        ns = 0;
    return (uint64_t)((double)ns * ((double)GMC_PCI_CLOCK_HZ / 1e9));
}

/* Poll slice while waiting for the interrupt: 10 us. */
#define WAIT_SLICE_NS 10000u

static int pci_wait(void *ctx, uint64_t cycles, int until_irq, uint64_t *ran)
{
    struct pci_ctx *c = ctx;
    if (ran == NULL)
        return GMC_E_NULL_POINTER;
    *ran = 0;
    if (c->gone)
        return GMC_E_PCI_GONE;
    const double ns_per_cycle = 1e9 / (double)GMC_PCI_CLOCK_HZ;
    uint64_t start = pci_cycles(c);
    for (;;) {
        if (until_irq) {
            int irq = pci_irq(c);
            if (irq < 0)
                return irq;
            if (irq)
                break;
        }
        uint64_t done = pci_cycles(c) - start;
        if (done >= cycles)
            break;
        uint64_t left_ns = (uint64_t)((double)(cycles - done) * ns_per_cycle) + 1u;
        if (until_irq && c->irq_fd >= 0) {
            vfio_irq_sleep(c, left_ns); /* woken by the interrupt */
            continue;
        }
        if (until_irq && left_ns > WAIT_SLICE_NS)
            left_ns = WAIT_SLICE_NS;
        struct timespec ts = { (time_t)(left_ns / 1000000000u), (long)(left_ns % 1000000000u) };
        nanosleep(&ts, NULL);
    }
    *ran = pci_cycles(c) - start;
    return GMC_OK;
}

/* ----------------------------------------------------------- power, reset */

/* The config-space offset of capability `id`, or 0 when the device has none
 * (or its list is unreadable). The walk is bounded: a looping list ends. */
static uint8_t find_cap(struct pci_device *d, uint8_t id)
{
    uint16_t status = 0;
    uint8_t at = 0;
    if (pci_device_cfg_read_u16(d, &status, PCI_STATUS) != 0 || !(status & PCI_STATUS_CAP_LIST))
        return 0;
    if (pci_device_cfg_read_u8(d, &at, PCI_CAPABILITY_LIST) != 0)
        return 0;
    for (unsigned hops = 0; at >= 0x40u && hops < 48u; hops++) {
        uint8_t cid = 0, next = 0;
        if (pci_device_cfg_read_u8(d, &cid, at) != 0 || pci_device_cfg_read_u8(d, &next, at + 1u) != 0)
            return 0;
        if (cid == id)
            return at;
        at = (uint8_t)(next & 0xFCu);
    }
    return 0;
}

/* Does the device advertise function-level reset (PCIe DevCap.FLR)? */
static int has_flr(struct pci_device *d)
{
    uint32_t devcap = 0;
    uint8_t at = find_cap(d, PCI_CAP_ID_EXP);
    return at != 0u && pci_device_cfg_read_u32(d, &devcap, at + PCI_EXP_DEVCAP) == 0 &&
           (devcap & PCI_EXP_DEVCAP_FLR) != 0u;
}

/* FLR through sysfs "reset" (the kernel saves and restores config space). */
static int flr(struct pci_ctx *c)
{
    char path[96];
    snprintf(path, sizeof(path), SYSFS_PCI "/%s/reset", c->addr);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno_status(errno, GMC_E_PCI_ENABLE);
    ssize_t w = write(fd, "1", 1);
    close(fd);
    return w == 1 ? GMC_OK : GMC_E_PCI_ENABLE;
}

/* The controller's own reset: the engine's RESET, then every read-write
 * register to its reset value (PT_BASE to the value found at open). */
static void soft_reset(struct pci_ctx *c)
{
    reg_wr(c, GMC_REG_DMA_CTRL, 0u);
    reg_wr(c, GMC_REG_DMA_CMD, GMC_DMA_CMD_RESET_MASK);
    for (unsigned i = 0; i < GMC_REG_TABLE_LEN; i++) {
        const struct gmc_reg_info *r = &gmc_reg_table[i];
        if (r->access != GMC_REG_RW || r->offset == GMC_REG_DMA_RING_TAIL)
            continue;
        for (uint32_t k = 0; k < r->count; k++)
            reg_wr(c, r->offset + k * r->stride, r->reset_is_param ? c->pt_base : r->reset);
    }
    reg_wr(c, GMC_REG_IRQ_ACK, ALL_ONES);
    reg_wr(c, GMC_REG_APF_CLEAR, 1u);
    reg_wr(c, GMC_REG_TLB_INV_ALL, 1u);
    reg_wr(c, GMC_REG_CNT_CLEAR, 1u);
}

/* Write PMCSR's PowerState field and read it back after the transition
 * time (10 ms for D3hot and back, PCI Bus Power Management 1.2, 5.6.1). */
static int set_dstate(struct pci_ctx *c, uint8_t pm, uint16_t dstate)
{
    uint16_t csr = 0, back = 0;
    if (pci_device_cfg_read_u16(c->dev, &csr, pm + PCI_PM_CTRL) != 0)
        return GMC_E_PCI_POWER;
    /* PME_Status is write-1-to-clear: written as 0 it stays as it is. */
    csr = (uint16_t)((csr & ~(PCI_PM_CTRL_STATE_MASK | PCI_PM_CTRL_PME_STATUS)) | dstate);
    if (pci_device_cfg_write_u16(c->dev, csr, pm + PCI_PM_CTRL) != 0)
        return GMC_E_PCI_POWER;
    struct timespec ts = { 0, 10 * 1000 * 1000 };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    if (pci_device_cfg_read_u16(c->dev, &back, pm + PCI_PM_CTRL) != 0 ||
        (back & PCI_PM_CTRL_STATE_MASK) != dstate)
        return GMC_E_PCI_POWER;
    return GMC_OK;
}

/* Standby and hibernate (state 1, 2) through the PCI Power Management
 * capability: the controller's own reset (engine stopped, registers at
 * their reset values), then D3hot. The FPGA stays configured in D3hot, so
 * VRAM keeps all its content: more than the backend contract promises (the
 * listed ranges may lose theirs), which is allowed. Until power(0) the BARs
 * are not touched (GMC_E_POWER_STATE). Power-up (state 0): D0; a function
 * that reset itself on the way (PMCSR.No_Soft_Reset clear) gets its BARs
 * and command register back, as the kernel would restore them; then the
 * controller's own reset again, so registers read their reset values
 * whichever way the board's bridge handles D-states. */
static int pci_power(void *ctx, int state, const uint64_t *ranges, unsigned n)
{
    struct pci_ctx *c = ctx;
    (void)ranges;
    (void)n;
    if (c->gone)
        return GMC_E_PCI_GONE;
    uint8_t pm = find_cap(c->dev, PCI_CAP_ID_PM);
    if (pm == 0u)
        return GMC_E_UNSUPPORTED; /* every PCIe function has it; a PCI one may not */
    if (state != 0) {
        if (c->powered_down)
            return GMC_OK;
        soft_reset(c);
        int rc = check_gone(c);
        if (rc == GMC_OK)
            rc = set_dstate(c, pm, 3u);
        if (rc == GMC_OK)
            c->powered_down = 1;
        return rc;
    }
    if (!c->powered_down)
        return GMC_OK;
    uint16_t csr = 0;
    if (pci_device_cfg_read_u16(c->dev, &csr, pm + PCI_PM_CTRL) != 0)
        return GMC_E_PCI_POWER;
    int rc = set_dstate(c, pm, 0u);
    if (rc != GMC_OK)
        return rc;
    c->powered_down = 0;
    if (!(csr & PCI_PM_CTRL_NO_SOFT_RESET)) {
        for (unsigned i = 0; i < 6u; i++)
            if (pci_device_cfg_write_u32(c->dev, c->bars[i], PCI_BASE_ADDRESS_0 + 4u * i) != 0)
                return GMC_E_PCI_ENABLE;
        uint16_t cmd = (uint16_t)(c->old_command | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
        if (pci_device_cfg_write_u16(c->dev, cmd, PCI_COMMAND) != 0)
            return GMC_E_PCI_ENABLE;
    }
    rc = check_gone(c);
    if (rc == GMC_OK)
        soft_reset(c);
    return rc;
}

static int pci_reset(void *ctx)
{
    struct pci_ctx *c = ctx;
    int u = usable(c);
    if (u != GMC_OK)
        return u;
    if (c->device >= 0) {
        struct vfio_device_info info = { .argsz = sizeof(info) };
        if (ioctl(c->device, VFIO_DEVICE_GET_INFO, &info) == 0 && (info.flags & VFIO_DEVICE_FLAGS_RESET)) {
            if (ioctl(c->device, VFIO_DEVICE_RESET) != 0)
                return GMC_E_PCI_VFIO;
            return check_gone(c);
        }
    }
    if (has_flr(c->dev)) {
        int rc = flr(c);
        if (rc != GMC_OK)
            return rc;
        return check_gone(c);
    }
    soft_reset(c);
    return check_gone(c);
}

int gmc_pci_list(char (*out)[GMC_PCI_DEVSTR_LEN], unsigned max, unsigned *n)
{
    if (n == NULL || (out == NULL && max != 0u))
        return GMC_E_NULL_POINTER;
    *n = 0;
    int rc = system_get();
    if (rc != GMC_OK)
        return rc;
    struct pci_id_match m = {
        .vendor_id = GMC_PCI_VENDOR_ID,
        .device_id = GMC_PCI_DEVICE_ID,
        .subvendor_id = PCI_MATCH_ANY,
        .subdevice_id = PCI_MATCH_ANY,
    };
    struct pci_device_iterator *it = pci_id_match_iterator_create(&m);
    if (it == NULL) {
        system_put();
        return GMC_E_NO_MEMORY;
    }
    struct pci_device *d;
    while ((d = pci_device_next(it)) != NULL) {
        if (*n < max)
            snprintf(out[*n], GMC_PCI_DEVSTR_LEN, "pci:%04x:%02x:%02x.%u", d->domain & 0xFFFFu, d->bus, d->dev,
                     d->func);
        (*n)++;
    }
    pci_iterator_destroy(it);
    system_put();
    return GMC_OK;
}

const struct gmc_backend_ops gmc_backend_pci = {
    .name = "pci",
    .open = pci_open,
    .close = pci_close,
    .read32 = pci_read32,
    .write32 = pci_write32,
    .aperture_read = pci_aperture_read,
    .aperture_write = pci_aperture_write,
    .host_map = pci_host_map,
    .host_unmap = pci_host_unmap,
    .irq = pci_irq,
    .wait = pci_wait,
    .cycles = pci_cycles,
    .power = pci_power,
    .reset = pci_reset,
};
