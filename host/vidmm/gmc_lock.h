/*
 * gmc_lock.h - CPU locks (gmc_lock.c; private to the host library). The
 * public lock calls are in include/gmc.h.
 */
#ifndef GMC_LOCK_H
#define GMC_LOCK_H

#include "gmc_vobj.h"

/* End a lock whose client lets go of the allocation. */
void gmc_lock_drop(gmc_device *dev, struct gmc_valloc *a);

#endif /* GMC_LOCK_H */
