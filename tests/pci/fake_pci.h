/*
 * fake_pci.h - a fake /sys/bus/pci tree for the pci backend's tests.
 *
 * fake_pci_enter() moves the calling process into a private mount
 * namespace (unshare(CLONE_NEWNS), every mount made private) and mounts a
 * tmpfs over /sys/bus/pci, with an empty devices/ folder. libpciaccess then
 * sees only the devices fake_pci_add() creates: a config file (256 bytes),
 * a resource table, resourceN files backing the BARs (resourceN_wc too for
 * prefetchable ones) and an enable file, laid out as Linux's sysfs does.
 * Nothing outside the process (and its children) sees the tree, and
 * /proc/mtrr is /dev/null in the namespace (libpciaccess would otherwise
 * add a write-combining MTRR for the fake BAR addresses).
 */
#ifndef FAKE_PCI_H
#define FAKE_PCI_H

#include <stddef.h>
#include <stdint.h>

struct fake_bar {
    uint64_t size; /* 0: no BAR */
    int io;        /* an I/O BAR */
    int prefetch;  /* prefetchable memory (gets a resourceN_wc file) */
};

struct fake_dev {
    const char *addr; /* "DDDD:BB:DD.F" */
    uint16_t vendor, device;
    uint16_t command; /* command register before the open */
    /* PCI Power Management capability at 0x40: 0 none, 1 present,
     * 2 present with PMCSR.No_Soft_Reset set */
    int pm;
    struct fake_bar bar[6];
};

/* Enter the namespace and mount the tree. 0, or -1 with the reason in why. */
int fake_pci_enter(char *why, size_t n);
/* Remove every device, or the devices/ folder itself (gone = 1). */
int fake_pci_clear(int gone);
int fake_pci_add(const struct fake_dev *d);
/* The file of one device: "config", "resource0", ... */
void fake_pci_path(const char *addr, const char *file, char *out, size_t n);
/* Bytes at off of a device file (read back), or written into it. */
int fake_pci_read(const char *addr, const char *file, uint64_t off, void *buf, size_t len);
int fake_pci_write(const char *addr, const char *file, uint64_t off, const void *buf, size_t len);
/* The command register, read back from the config file. */
uint16_t fake_pci_command(const char *addr);

#endif /* FAKE_PCI_H */
