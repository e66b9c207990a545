/*
 * fakepci_run.c - run a command with a fake /sys/bus/pci tree
 * (tests/pci/fake_pci.h) holding one gmc device at 0000:01:00.0 (BAR0
 * 64 KiB, BAR1 2 MiB prefetchable) and one other device at 0000:00:01.0.
 *
 *   fakepci-run CMD [ARGS...]
 *
 * With tests/pci/pci_trap.so preloaded and GMC_TRAP_DEV set, the gmc
 * device's BARs are the Verilated gmc_top. Exit status 77 with the reason
 * on stderr when the tree cannot be made here (no root, no unshare).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

#include "fake_pci.h"
#include "gmc_regs.h"

int main(int argc, char **argv)
{
    char why[256];
    if (argc < 2) {
        fprintf(stderr, "usage: fakepci-run CMD [ARGS...]\n");
        return 2;
    }
    if (fake_pci_enter(why, sizeof(why)) != 0) {
        fprintf(stderr, "fakepci-run: %s\n", why);
        return 77;
    }
    struct fake_dev other = { .addr = "0000:00:01.0", .vendor = 0x8086, .device = 0x1237 };
    other.bar[0] = (struct fake_bar){ .size = 0x1000 };
    struct fake_dev g = { .addr = "0000:01:00.0", .vendor = GMC_PCI_VENDOR_ID, .device = GMC_PCI_DEVICE_ID };
    g.bar[0] = (struct fake_bar){ .size = 0x10000 };
    g.bar[1] = (struct fake_bar){ .size = 2u << 20, .prefetch = 1 };
    if (fake_pci_add(&other) != 0 || fake_pci_add(&g) != 0) {
        fprintf(stderr, "fakepci-run: building the fake tree failed\n");
        return 2;
    }
    execvp(argv[1], argv + 1);
    perror("fakepci-run: exec");
    return 2;
}
