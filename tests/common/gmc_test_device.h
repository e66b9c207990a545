/* The test back door to the model behind a device (no cmocka here: the
 * fuzz harnesses use it too). The library never names the simulator; a
 * test asks for the device's backend table and context and recognises
 * the sim backend's table. */
#ifndef GMC_TEST_DEVICE_H
#define GMC_TEST_DEVICE_H

#include <stddef.h>

#include "gmc.h"
#include "gmc_backend.h"
#include "gmc_sim.h"
#include "gmc_device.h"

/* The model behind a device opened on the sim backend; NULL for any other
 * backend (or a NULL device). */
static inline gmc_sim *gmc_device_sim(const gmc_device *dev)
{
    void *ctx;
    return gmc_device_backend(dev, &ctx) == &gmc_backend_sim ? (gmc_sim *)ctx : NULL;
}

#endif /* GMC_TEST_DEVICE_H */
