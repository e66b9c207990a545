/*
 * gmc_backend.h - run-time backends (private to the host library).
 *
 * DOC: Overview
 *
 * A backend moves bytes between the driver (gmc_kmd.c) and one kind of
 * hardware: the Verilated model (sim), a PCIe board (pci) or an iCE40
 * board behind a serial bridge (uart). Each backend file fills one
 * struct gmc_backend_ops with designated initialisers, as libpciaccess's
 * backends fill struct pci_system_methods; the driver calls only through
 * the table. Every operation returns GMC_OK or a gmc_status code (bus
 * error responses are GMC_E_BUS, a bus that never answers GMC_E_TIMEOUT).
 */
#ifndef GMC_BACKEND_H
#define GMC_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "gmc.h"
#include "gmc_devstr.h"

struct gmc_backend_ops {
    const char *name;
    /* Start the backend for a parsed device string; *ctx is its state. */
    int (*open)(const struct gmc_devspec *spec, void **ctx);
    void (*close)(void *ctx);
    /* BAR0: 32-bit registers at byte offsets (GMC_REG_*). On error *val = 0. */
    int (*read32)(void *ctx, uint32_t off, uint32_t *val);
    int (*write32)(void *ctx, uint32_t off, uint32_t val);
    /* BAR1: the CPU aperture onto CPU-visible VRAM, any length/alignment.
     * On a read error the buffer is zeroed. */
    int (*aperture_read)(void *ctx, uint64_t off, void *buf, size_t len);
    int (*aperture_write)(void *ctx, uint64_t off, const void *buf, size_t len);
    /* Host memory the controller's DMA master may reach at bus addresses. */
    int (*host_map)(void *ctx, uint64_t bus, void *ptr, size_t len);
    int (*host_unmap)(void *ctx, uint64_t bus);
    /* The interrupt line: 1 asserted, 0 not, or a negative status. */
    int (*irq)(void *ctx);
    /* Let up to `cycles` device cycles pass; with until_irq, return as soon
     * as the interrupt line is asserted (at once when it already is).
     * *ran gets the cycles that passed (0 on error). On hardware this is a
     * sleep on the interrupt or a timed wait. */
    int (*wait)(void *ctx, uint64_t cycles, int until_irq, uint64_t *ran);
    /* Device cycles since the backend opened (a clock for timeouts). */
    uint64_t (*cycles)(void *ctx);
    /* Power: state 1 (standby) or 2 (hibernate) powers the controller
     * down; the n VRAM ranges in `ranges` (base, size pairs) lose their
     * content, the rest of VRAM is kept (self-refresh), registers reset.
     * State 0 powers it back up, out of reset. */
    int (*power)(void *ctx, int state, const uint64_t *ranges, unsigned n);
    /* Reset the controller (a TDR's adapter reset): registers to their
     * reset values, bus transactions in flight dropped, VRAM kept. */
    int (*reset)(void *ctx);
    /* Optional (NULL: GMC_E_UNSUPPORTED): record the device's signals
     * into a waveform file at `path` from cycle `start` to `end` (0: to
     * the close), as gmc_device_trace() documents. */
    int (*trace)(void *ctx, const char *path, uint64_t start, uint64_t end);
    /* Optional (NULL: no serial link): the link's counters. */
    int (*link_stats)(void *ctx, struct gmc_link_stats *out);
};

extern const struct gmc_backend_ops gmc_backend_sim;
/* A PCIe board through libpciaccess (gmc_backend_pci.c, docs/pci.md). */
extern const struct gmc_backend_ops gmc_backend_pci;
/* An iCE40 board behind the serial bridge (gmc_backend_uart.c,
 * docs/uart-bridge.md). */
extern const struct gmc_backend_ops gmc_backend_uart;
/* The table of a backend a build leaves out (GMC_NO_PCI): open
 * answers GMC_E_BACKEND_UNAVAILABLE, and so does every other operation. */
extern const struct gmc_backend_ops gmc_backend_unavailable;

/* The table for a parsed device string. */
const struct gmc_backend_ops *gmc_backend_for(const struct gmc_devspec *spec);

#endif /* GMC_BACKEND_H */
