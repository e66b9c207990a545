/*
 * gmc_device.h - devices (gmc_device.c; private to the host library). The
 * public open and query calls are in include/gmc.h.
 */
#ifndef GMC_DEVICE_H
#define GMC_DEVICE_H

#include "gmc_backend.h"
#include "gmc_vobj.h"

/* Start a device on a started backend (the device owns ctx from now on and
 * closes it on failure too): query the adapter, validate its segments, set
 * up the managers. The common tail of every gmc_device_open*; tests use it
 * with a wrapping backend to present hardware the model cannot. */
int gmc_device_open_backend(const struct gmc_backend_ops *be, void *ctx,
                            struct gmc_open_report *report, gmc_device **out);

/* The device's backend table and context (*ctx), for test backdoors
 * (tests/common/gmc_test_device.h, gmc_device_sim); NULL for a NULL device. */
const struct gmc_backend_ops *gmc_device_backend(const gmc_device *dev, void **ctx);

#endif /* GMC_DEVICE_H */
