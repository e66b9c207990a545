/*
 * fake_pci.c - a fake /sys/bus/pci tree in a private mount namespace
 * (fake_pci.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "fake_pci.h"

#define ROOT "/sys/bus/pci"
#define DEVS ROOT "/devices"

int fake_pci_enter(char *why, size_t n)
{
    if (geteuid() != 0) {
        snprintf(why, n, "needs root (a private mount namespace and a tmpfs over " ROOT ")");
        return -1;
    }
    if (unshare(CLONE_NEWNS) != 0) {
        snprintf(why, n, "unshare(CLONE_NEWNS) failed: %s", strerror(errno));
        return -1;
    }
    if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        snprintf(why, n, "making / private failed: %s", strerror(errno));
        return -1;
    }
    if (mount("fakepci", ROOT, "tmpfs", 0, "mode=0755") != 0) {
        snprintf(why, n, "mounting a tmpfs over " ROOT " failed: %s", strerror(errno));
        return -1;
    }
    /* libpciaccess adds a write-combining MTRR through /proc/mtrr when it
     * maps a prefetchable BAR write-combined: the fake BARs' addresses must
     * never reach the real MTRRs, so /proc/mtrr is /dev/null in here. */
    struct stat st;
    if (stat("/proc/mtrr", &st) == 0 && mount("/dev/null", "/proc/mtrr", NULL, MS_BIND, NULL) != 0) {
        snprintf(why, n, "hiding /proc/mtrr failed: %s", strerror(errno));
        return -1;
    }
    if (mkdir(DEVS, 0755) != 0) {
        snprintf(why, n, "mkdir " DEVS ": %s", strerror(errno));
        return -1;
    }
    return 0;
}

static int rm_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL)
        return unlink(path);
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char sub[512];
        snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
        rc |= rm_tree(sub);
    }
    closedir(d);
    return rc | rmdir(path);
}

int fake_pci_clear(int gone)
{
    struct stat st;
    if (stat(DEVS, &st) == 0 && rm_tree(DEVS) != 0)
        return -1;
    return gone ? 0 : mkdir(DEVS, 0755);
}

void fake_pci_path(const char *addr, const char *file, char *out, size_t n)
{
    snprintf(out, n, DEVS "/%s/%s", addr, file);
}

static int put(const char *addr, const char *file, mode_t mode, const void *buf, size_t len, uint64_t size)
{
    char p[256];
    fake_pci_path(addr, file, p, sizeof(p));
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0)
        return -1;
    int rc = 0;
    if (len != 0u && write(fd, buf, len) != (ssize_t)len)
        rc = -1;
    if (size != 0u && ftruncate(fd, (off_t)size) != 0)
        rc = -1;
    close(fd);
    return rc | chmod(p, mode);
}

int fake_pci_add(const struct fake_dev *d)
{
    char p[256];
    fake_pci_path(d->addr, "", p, sizeof(p));
    if (mkdir(p, 0755) != 0)
        return -1;
    uint8_t cfg[256];
    memset(cfg, 0, sizeof(cfg));
    cfg[0] = (uint8_t)d->vendor;
    cfg[1] = (uint8_t)(d->vendor >> 8);
    cfg[2] = (uint8_t)d->device;
    cfg[3] = (uint8_t)(d->device >> 8);
    cfg[4] = (uint8_t)d->command;
    cfg[5] = (uint8_t)(d->command >> 8);
    if (d->pm) {
        cfg[0x06] = 0x10; /* status: capability list */
        cfg[0x34] = 0x40; /* first capability */
        cfg[0x40] = 0x01; /* PM, last in the list */
        cfg[0x42] = 0x03; /* PMC: version 3 */
        cfg[0x44] = d->pm == 2 ? 0x08 : 0x00; /* PMCSR: D0, No_Soft_Reset */
    }
    cfg[0x0a] = 0x80; /* class 05 80: memory controller, other */
    cfg[0x0b] = 0x05;
    cfg[0x2c] = cfg[0];
    cfg[0x2d] = cfg[1];
    cfg[0x2e] = cfg[2];
    cfg[0x2f] = cfg[3];
    char res[17 * 64];
    size_t rl = 0;
    for (unsigned i = 0; i < 17u; i++) {
        const struct fake_bar *b = i < 6u ? &d->bar[i] : NULL;
        unsigned long long start = 0, end = 0, flags = 0;
        if (b != NULL && b->size != 0u) {
            start = b->io ? 0x1000u + 0x100u * i : 0xe0000000ull + 0x1000000ull * i;
            end = start + b->size - 1u;
            /* IORESOURCE_* bits plus the BAR's low bits, as the kernel prints them */
            flags = b->io ? 0x101ull : 0x200ull | (b->prefetch ? 0x2008ull : 0u);
            uint32_t bar = b->io ? (uint32_t)start | 1u : (uint32_t)start | (b->prefetch ? 8u : 0u);
            memcpy(&cfg[0x10 + 4u * i], &bar, 4);
            char name[16];
            snprintf(name, sizeof(name), "resource%u", i);
            if (put(d->addr, name, 0600, NULL, 0, b->io ? 0u : b->size) != 0)
                return -1;
            if (b->prefetch) {
                snprintf(name, sizeof(name), "resource%u_wc", i);
                if (put(d->addr, name, 0600, NULL, 0, b->size) != 0)
                    return -1;
            }
        }
        rl += (size_t)snprintf(res + rl, sizeof(res) - rl, "0x%016llx 0x%016llx 0x%016llx\n", start, end, flags);
    }
    if (put(d->addr, "config", 0644, cfg, sizeof(cfg), 0) != 0 || put(d->addr, "resource", 0444, res, rl, 0) != 0 ||
        put(d->addr, "enable", 0600, "0\n", 2, 0) != 0 || put(d->addr, "irq", 0444, "0\n", 2, 0) != 0)
        return -1;
    return 0;
}

static int io(const char *addr, const char *file, uint64_t off, void *buf, size_t len, int wr)
{
    char p[256];
    fake_pci_path(addr, file, p, sizeof(p));
    int fd = open(p, wr ? O_WRONLY : O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = wr ? pwrite(fd, buf, len, (off_t)off) : pread(fd, buf, len, (off_t)off);
    close(fd);
    return n == (ssize_t)len ? 0 : -1;
}

int fake_pci_read(const char *addr, const char *file, uint64_t off, void *buf, size_t len)
{
    return io(addr, file, off, buf, len, 0);
}

int fake_pci_write(const char *addr, const char *file, uint64_t off, const void *buf, size_t len)
{
    return io(addr, file, off, (void *)(uintptr_t)buf, len, 1);
}

uint16_t fake_pci_command(const char *addr)
{
    uint8_t b[2] = { 0xEE, 0xEE };
    if (fake_pci_read(addr, "config", 4, b, 2) != 0)
        return 0xEEEE;
    return (uint16_t)(b[0] | b[1] << 8);
}
