/*
 * gmc_backend_sim.c - the backend on the Verilated model (libgmc_sim).
 *
 * The model runs in this process: registers and the CPU aperture are its
 * AXI slaves, host memory is served from buffers registered with
 * gmc_sim_host_map(), and the IRQ line is read directly. Model statuses
 * map onto the one gmc status enum.
 */
#include <stddef.h>
#include <stdint.h>

#include "gmc_backend.h"
#include "gmc_sim.h"
#include "gmc_status.h"

static int status_of(int sim_status)
{
    switch (sim_status) {
    case GMC_SIM_OK:
        return GMC_OK;
    case GMC_SIM_EINVAL:
        return GMC_E_INVALID_ARG;
    case GMC_SIM_ENOMEM:
        return GMC_E_NO_MEMORY;
    case GMC_SIM_ESLVERR:
    case GMC_SIM_EDECERR:
        return GMC_E_BUS;
    case GMC_SIM_ETIMEOUT:
        return GMC_E_TIMEOUT;
    case GMC_SIM_EOVERLAP:
        return GMC_E_IN_USE;
    case GMC_SIM_ENOENT:
        return GMC_E_NOT_FOUND;
    case GMC_SIM_EIO:
        return GMC_E_IO;
    case GMC_SIM_EBUSY:
        return GMC_E_BUSY;
    default:
        return GMC_E_INTERNAL;
    }
}

static int sim_open(const struct gmc_devspec *spec, void **ctx)
{
    gmc_sim *sim = NULL;
    *ctx = NULL;
    int rc = status_of(gmc_sim_create(&spec->sim, &sim));
    if (rc != GMC_OK)
        return rc;
    if (spec->trace[0] != '\0') {
        rc = status_of(gmc_sim_trace_open(sim, spec->trace, 0, 0));
        if (rc != GMC_OK) {
            gmc_sim_destroy(sim);
            return rc;
        }
    }
    *ctx = sim;
    return GMC_OK;
}

static void sim_close(void *ctx)
{
    gmc_sim_destroy(ctx);
}

static int sim_read32(void *ctx, uint32_t off, uint32_t *val)
{
    return status_of(gmc_sim_reg_read(ctx, off, val));
}

static int sim_write32(void *ctx, uint32_t off, uint32_t val)
{
    return status_of(gmc_sim_reg_write(ctx, off, val));
}

static int sim_aperture_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    return status_of(gmc_sim_aperture_read(ctx, off, buf, len));
}

static int sim_aperture_write(void *ctx, uint64_t off, const void *buf, size_t len)
{
    return status_of(gmc_sim_aperture_write(ctx, off, buf, len));
}

static int sim_host_map(void *ctx, uint64_t bus, void *ptr, size_t len)
{
    return status_of(gmc_sim_host_map(ctx, bus, ptr, len));
}

static int sim_host_unmap(void *ctx, uint64_t bus)
{
    return status_of(gmc_sim_host_unmap(ctx, bus));
}

static int sim_irq(void *ctx)
{
    return gmc_sim_irq(ctx);
}

/* Cycles run between two looks at the IRQ line while waiting for it. */
#define IRQ_POLL_CYCLES 32u

static int sim_wait(void *ctx, uint64_t cycles, int until_irq, uint64_t *ran)
{
    uint64_t done = 0;
    int rc = GMC_OK;
    if (ran == NULL)
        return GMC_E_NULL_POINTER;
    *ran = 0;
    while (done < cycles && !(until_irq && gmc_sim_irq(ctx))) {
        uint64_t n = until_irq && cycles - done > IRQ_POLL_CYCLES ? IRQ_POLL_CYCLES : cycles - done;
        rc = status_of(gmc_sim_step(ctx, n));
        if (rc != GMC_OK)
            break;
        done += n;
    }
    *ran = done;
    return rc;
}

static int sim_power(void *ctx, int state, const uint64_t *ranges, unsigned n)
{
    if (state == 0)
        return GMC_OK; /* held in reset since the power-down */
    uint64_t seed = gmc_sim_cycles(ctx);
    for (unsigned i = 0; i < n; i++) {
        int rc = status_of(gmc_sim_vram_scramble(ctx, ranges[2 * i], ranges[2 * i + 1], seed + i));
        if (rc != GMC_OK)
            return rc;
    }
    return status_of(gmc_sim_reset(ctx, 8));
}

static int sim_reset(void *ctx)
{
    return status_of(gmc_sim_reset(ctx, 8));
}

static uint64_t sim_cycles(void *ctx)
{
    return gmc_sim_cycles(ctx);
}

const struct gmc_backend_ops gmc_backend_sim = {
    .name = "sim",
    .open = sim_open,
    .close = sim_close,
    .read32 = sim_read32,
    .write32 = sim_write32,
    .aperture_read = sim_aperture_read,
    .aperture_write = sim_aperture_write,
    .host_map = sim_host_map,
    .host_unmap = sim_host_unmap,
    .irq = sim_irq,
    .wait = sim_wait,
    .cycles = sim_cycles,
    .power = sim_power,
    .reset = sim_reset,
};
