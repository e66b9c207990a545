/*
 * gmc_devstr.h - device strings (private to the host library).
 *
 * A device string chooses a backend and its options at run time:
 * "sim", "sim:latency=50,seg1=0/0x200000/0x84", "pci", "pci:0000:01:00.0",
 * "pci:0000:01:00.0,id=10ee:7024",
 * "uart:/dev/ttyUSB1@3000000". gmc_devstr_parse() turns one into a struct
 * gmc_devspec or says exactly what is wrong and where; the grammar is in
 * include/gmc.h (gmc_device_string_check) and docs/host.md.
 */
#ifndef GMC_DEVSTR_H
#define GMC_DEVSTR_H

#include <stddef.h>
#include <stdint.h>

#include "gmc_sim.h"

#define GMC_DEVSTR_PATH_MAX 256u

enum gmc_devkind {
    GMC_DEV_SIM = 1,
    GMC_DEV_PCI,
    GMC_DEV_UART,
};

struct gmc_devspec {
    enum gmc_devkind kind;
    /* sim: the model configuration (defaults plus options), and an FST
     * waveform path ("" = none) */
    struct gmc_sim_config sim;
    char trace[GMC_DEVSTR_PATH_MAX];
    /* paging (every backend with a DMA engine; 0 = the library default) */
    uint32_t pbuf_bytes;  /* pbuf=N: fixed paging buffer size, bytes */
    uint64_t tdr_cycles;  /* tdr=N: paging fence timeout before an engine reset */
    /* pci: pci_any = "pci" without an address (the first gmc device);
     * pci_vendor/pci_device: the IDs to accept (id=VVVV:DDDD; 0 = the
     * spec's GMC_PCI_VENDOR_ID / GMC_PCI_DEVICE_ID) */
    uint16_t domain;
    uint8_t bus, dev, fn;
    uint8_t pci_any;
    uint16_t pci_vendor, pci_device;
    /* uart */
    char tty[GMC_DEVSTR_PATH_MAX];
    uint32_t baud;
};

/*
 * Parse str into *spec. GMC_OK, GMC_E_NULL_POINTER, or a parse status
 * (GMC_E_BAD_DEVICE_STRING, GMC_E_DEVSTR_*); *err_pos (may be NULL) is the
 * byte offset of the problem (0 on success). On failure *spec is zeroed.
 */
int gmc_devstr_parse(const char *str, struct gmc_devspec *spec, size_t *err_pos);

#endif /* GMC_DEVSTR_H */
