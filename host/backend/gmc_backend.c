/*
 * gmc_backend.c - backend selection (sim, uart, pci), and the one table that
 * serves a backend a build leaves out.
 *
 * A left-out backend's device strings are still parsed and validated in
 * full (gmc_devstr.c), so a typo is reported as one; a well-formed string
 * then answers GMC_E_BACKEND_UNAVAILABLE from open. Every other operation is
 * unreachable without an open context and answers the same.
 */
#include <stddef.h>
#include <stdint.h>

#include "gmc_backend.h"
#include "gmc_status.h"

static int stub_open(const struct gmc_devspec *spec, void **ctx)
{
    (void)spec;
    *ctx = NULL;
    return GMC_E_BACKEND_UNAVAILABLE;
}

static void stub_close(void *ctx)
{
    (void)ctx;
}

static int stub_read32(void *ctx, uint32_t off, uint32_t *val)
{
    (void)ctx;
    (void)off;
    *val = 0;
    return GMC_E_BACKEND_UNAVAILABLE;
}

static int stub_write32(void *ctx, uint32_t off, uint32_t val)
{
    (void)ctx;
    (void)off;
    (void)val;
    return GMC_E_BACKEND_UNAVAILABLE;
}

static int stub_aperture_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    (void)ctx;
    (void)off;
    (void)buf;
    (void)len;
    return GMC_E_BACKEND_UNAVAILABLE;
}

static int stub_aperture_write(void *ctx, uint64_t off, const void *buf, size_t len)
{
    (void)ctx;
    (void)off;
    (void)buf;
    (void)len;
    return GMC_E_BACKEND_UNAVAILABLE;
}

static int stub_host_map(void *ctx, uint64_t bus, void *ptr, size_t len)
{
    (void)ctx;
    (void)bus;
    (void)ptr;
    (void)len;
    return GMC_E_BACKEND_UNAVAILABLE;
}

static int stub_host_unmap(void *ctx, uint64_t bus)
{
    (void)ctx;
    (void)bus;
    return GMC_E_BACKEND_UNAVAILABLE;
}

static int stub_irq(void *ctx)
{
    (void)ctx;
    return GMC_E_BACKEND_UNAVAILABLE;
}

static int stub_wait(void *ctx, uint64_t cycles, int until_irq, uint64_t *ran)
{
    (void)ctx;
    (void)cycles;
    (void)until_irq;
    if (ran != NULL)
        *ran = 0;
    return GMC_E_BACKEND_UNAVAILABLE;
}

static int stub_power(void *ctx, int state, const uint64_t *ranges, unsigned n)
{
    (void)ctx;
    (void)state;
    (void)ranges;
    (void)n;
    return GMC_E_BACKEND_UNAVAILABLE;
}

static int stub_reset(void *ctx)
{
    (void)ctx;
    return GMC_E_BACKEND_UNAVAILABLE;
}

static uint64_t stub_cycles(void *ctx)
{
    (void)ctx;
    return 0;
}

/* A backend this build leaves out. Every backend is built today (sim;
 * uart, gmc_backend_uart.c; pci, gmc_backend_pci.c); a build configured
 * with GMC_NO_PCI (no libpciaccess on the platform) routes pci here. */
const struct gmc_backend_ops gmc_backend_unavailable = {
    .name = "unavailable",
    .open = stub_open,
    .close = stub_close,
    .read32 = stub_read32,
    .write32 = stub_write32,
    .aperture_read = stub_aperture_read,
    .aperture_write = stub_aperture_write,
    .host_map = stub_host_map,
    .host_unmap = stub_host_unmap,
    .irq = stub_irq,
    .wait = stub_wait,
    .cycles = stub_cycles,
    .power = stub_power,
    .reset = stub_reset,
};

const struct gmc_backend_ops *gmc_backend_for(const struct gmc_devspec *spec)
{
    switch (spec->kind) {
    case GMC_DEV_SIM:
        return &gmc_backend_sim;
    case GMC_DEV_PCI:
#ifdef GMC_NO_PCI
        return &gmc_backend_unavailable;
#else
        return &gmc_backend_pci;
#endif
    case GMC_DEV_UART:
        return &gmc_backend_uart;
    }
    return NULL;
}
