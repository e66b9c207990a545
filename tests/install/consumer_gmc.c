/* A program outside the tree using the installed host library: open the
 * simulated device, create a client and an allocation, and try a bad one.
 * Not a test by itself: tests/install/test_install.sh fails unless its
 * output equals the expected statuses exactly. */
#include <stdio.h>

#include <gmc.h>

int main(void)
{
    gmc_device *dev = NULL;
    int st = gmc_device_open("sim", &dev);
    if (st) {
        printf("open: %s\n", gmc_status_name(st));
        return 1;
    }
    gmc_client *cl = NULL;
    if (gmc_client_create(dev, NULL, &cl)) return 2;
    struct gmc_alloc_desc d;
    gmc_alloc_desc_init(&d);
    d.size = 10000;
    d.supported_segments = GMC_SEGMENT_BIT(1) | GMC_SEGMENT_BIT(2);
    gmc_handle h = GMC_HANDLE_NONE;
    st = gmc_alloc_create(cl, &d, &h);
    printf("create: %s\n", gmc_status_name(st));
    d.size = 0;
    printf("bad create: %s\n", gmc_status_name(gmc_alloc_create(cl, &d, &h)));
    gmc_client_destroy(cl);
    gmc_device_close(dev);
    return st != GMC_OK;
}
