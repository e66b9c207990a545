/*
 * gmc_vidmm.h - the device-independent video memory manager ("VidMm"):
 * clients, allocations, sharing (gmc_vidmm.c; private to the host
 * library). The objects behind the handles are in gmc_vobj.h.
 *
 * Inside host/vidmm the calls go one way (tools/check_layers.py finds a
 * circle of includes): gmc_vobj (objects, handle lookup, lock permission)
 * <- gmc_resid (residency) <- gmc_lock (CPU locks) <- gmc_vidmm (clients,
 * allocations) <- gmc_device (open, close); gmc_power uses gmc_resid.
 */
#ifndef GMC_VIDMM_H
#define GMC_VIDMM_H

#include "gmc_vobj.h"

/* Destroy every client (gmc_vidmm.c). */
void gmc_vidmm_close_clients(gmc_device *dev);

#endif /* GMC_VIDMM_H */
