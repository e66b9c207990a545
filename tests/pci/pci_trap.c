/*
 * pci_trap.c - an LD_PRELOAD harness that puts the Verilated gmc_top
 * behind the BARs of a fake PCI device (tests only; never in the library).
 *
 * The pci backend maps BAR0 and BAR1 through libpciaccess, which mmaps the
 * device's sysfs resource files. This library interposes mmap: a mapping
 * of GMC_TRAP_DEV's resource0, resource1 or resource1_wc (GMC_TRAP_DEV is
 * the fake device's folder, e.g. /sys/bus/pci/devices/0000:01:00.0) gets
 * an inaccessible (PROT_NONE) anonymous region instead. Each access to it
 * then faults, as under Linux's mmiotrace:
 *
 *   SIGSEGV  the page-fault error code in the ucontext (bit 1) tells a
 *            write from a read; the instruction at RIP gives the access
 *            size (the plain MOV/MOVZX forms a compiler emits for volatile
 *            loads and stores; anything else aborts with a message). The
 *            page is opened; for a read the bytes are fetched from the
 *            model first (BAR0: gmc_sim_reg_read, BAR1:
 *            gmc_sim_aperture_read). The trap flag is set.
 *   SIGTRAP  after that one instruction: a write's bytes are taken from
 *            the page and forwarded (gmc_sim_reg_write /
 *            gmc_sim_aperture_write), the page is closed again and the
 *            trap flag cleared.
 *
 * A bus error on a read answers all ones, as a PCIe completer abort does;
 * a refused write is dropped (PCIe writes are posted). The model is
 * created at the first trapped mapping, with the sim backend's defaults,
 * and runs only while accesses drive it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "gmc_sim.h"

#define PAGE 4096u
#define MAX_REGIONS 8
#define TF 0x100

struct region {
    uint8_t *base;
    size_t len;
    int bar;
};

static struct region regions[MAX_REGIONS];
static unsigned long long traps; /* accesses forwarded (GMC_TRAP_STATS=1 prints them at exit) */
static gmc_sim *sim;
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);

static struct {
    int active, write, bar;
    uint8_t *addr;
    unsigned size;
    uint64_t off;
} pend;

static void die(const char *msg)
{
    fprintf(stderr, "pci_trap: %s\n", msg);
    abort();
}

/* Access size of the MOV-family instruction at rip, 0 if unknown. */
static unsigned access_size(const uint8_t *rip)
{
    int opsize16 = 0, rexw = 0;
    for (;; rip++) {
        if (*rip == 0x66)
            opsize16 = 1;
        else if (*rip == 0x2e || *rip == 0x3e || *rip == 0x26 || *rip == 0x64 || *rip == 0x65 || *rip == 0x36)
            ; /* segment prefixes */
        else
            break;
    }
    if ((*rip & 0xF0) == 0x40) {
        rexw = (*rip & 0x08) != 0;
        rip++;
    }
    unsigned wide = rexw ? 8u : opsize16 ? 2u : 4u;
    switch (rip[0]) {
    case 0x88: case 0x8A: case 0xC6:
        return 1;
    case 0x89: case 0x8B: case 0xC7:
        return wide;
    case 0x0F:
        if (rip[1] == 0xB6 || rip[1] == 0xBE)
            return 1;
        if (rip[1] == 0xB7 || rip[1] == 0xBF)
            return 2;
        return 0;
    default:
        return 0;
    }
}

static struct region *find(const uint8_t *a)
{
    for (int i = 0; i < MAX_REGIONS; i++) {
        if (regions[i].base != NULL && a >= regions[i].base && a < regions[i].base + regions[i].len)
            return &regions[i];
    }
    return NULL;
}

static void on_segv(int sig, siginfo_t *si, void *uctx)
{
    ucontext_t *uc = uctx;
    uint8_t *a = si->si_addr;
    struct region *r = find(a);
    if (r == NULL || pend.active) {
        signal(sig, SIG_DFL); /* a real crash: fault again, unhandled */
        return;
    }
    unsigned size = access_size((const uint8_t *)uc->uc_mcontext.gregs[REG_RIP]);
    if (size == 0)
        die("unknown instruction touching a trapped BAR");
    uint64_t off = (uint64_t)(a - r->base);
    if (off % size != 0 || (r->bar == 0 && size != 4))
        die("unaligned BAR access, or a BAR0 access other than 32 bits");
    uint8_t *page = (uint8_t *)((uintptr_t)a & ~(uintptr_t)(PAGE - 1u));
    if (mprotect(page, PAGE, PROT_READ | PROT_WRITE) != 0)
        die("mprotect");
    int write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
    if (!write) {
        uint8_t buf[8];
        int rc;
        if (r->bar == 0) {
            uint32_t v = 0;
            rc = gmc_sim_reg_read(sim, (uint32_t)off, &v);
            memcpy(buf, &v, 4);
        } else {
            rc = gmc_sim_aperture_read(sim, off, buf, size);
        }
        if (rc != GMC_SIM_OK)
            memset(buf, 0xFF, sizeof(buf));
        memcpy(a, buf, size);
    }
    traps++;
    pend.active = 1;
    pend.write = write;
    pend.bar = r->bar;
    pend.addr = a;
    pend.size = size;
    pend.off = off;
    uc->uc_mcontext.gregs[REG_EFL] |= TF;
}

static void on_trap(int sig, siginfo_t *si, void *uctx)
{
    (void)si;
    ucontext_t *uc = uctx;
    if (!pend.active) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    if (pend.write) {
        uint8_t buf[8];
        memcpy(buf, pend.addr, pend.size);
        if (pend.bar == 0) {
            uint32_t v;
            memcpy(&v, buf, 4);
            (void)gmc_sim_reg_write(sim, (uint32_t)pend.off, v);
        } else {
            (void)gmc_sim_aperture_write(sim, pend.off, buf, pend.size);
        }
    }
    uint8_t *page = (uint8_t *)((uintptr_t)pend.addr & ~(uintptr_t)(PAGE - 1u));
    memset(page, 0, PAGE); /* nothing of the device stays readable */
    if (mprotect(page, PAGE, PROT_NONE) != 0)
        die("mprotect");
    pend.active = 0;
    uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)TF;
}

/* Which BAR a mapping of fd is: 0, 1, or -1 (not trapped). */
static int trapped_bar(int fd)
{
    const char *dev = getenv("GMC_TRAP_DEV");
    char link[64], path[512];
    if (dev == NULL || fd < 0)
        return -1;
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1u);
    if (n <= 0)
        return -1;
    path[n] = '\0';
    size_t dl = strlen(dev);
    if (strncmp(path, dev, dl) != 0)
        return -1;
    const char *f = path + dl;
    if (!strcmp(f, "/resource0"))
        return 0;
    if (!strcmp(f, "/resource1") || !strcmp(f, "/resource1_wc"))
        return 1;
    return -1;
}

static void start(void)
{
    if (sim != NULL)
        return;
    if (gmc_sim_create(NULL, &sim) != GMC_SIM_OK)
        die("gmc_sim_create failed");
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sa.sa_sigaction = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    sa.sa_sigaction = on_trap;
    sigaction(SIGTRAP, &sa, NULL);
}

__attribute__((destructor)) static void stats(void)
{
    if (getenv("GMC_TRAP_STATS") != NULL)
        fprintf(stderr, "pci_trap: %llu BAR accesses forwarded to the model\n", traps);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (real_mmap == NULL)
        real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    int bar = trapped_bar(fd);
    if (bar < 0)
        return real_mmap(addr, len, prot, flags, fd, off);
    if (off != 0)
        die("a BAR mapped at an offset");
    start();
    void *p = real_mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return p;
    for (int i = 0; i < MAX_REGIONS; i++) {
        if (regions[i].base == NULL) {
            regions[i] = (struct region){ p, len, bar };
            return p;
        }
    }
    die("too many trapped mappings");
    return MAP_FAILED;
}

int munmap(void *addr, size_t len)
{
    if (real_munmap == NULL)
        real_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
    for (int i = 0; i < MAX_REGIONS; i++) {
        if (regions[i].base == addr)
            regions[i].base = NULL;
    }
    return real_munmap(addr, len);
}
