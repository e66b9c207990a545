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

#define GMC_DEVSTR_PATH_MAX 256u
/* Room for a struct gmc_sim_config (gmc_devstr.c asserts it fits). */
#define GMC_DEVSPEC_SIM_BYTES 256u

struct gmc_sim_config;

enum gmc_devkind {
    GMC_DEV_SIM = 1,
    GMC_DEV_PCI,
    GMC_DEV_UART,
};

struct gmc_devspec {
    enum gmc_devkind kind;
    /* sim: the model configuration (a struct gmc_sim_config: defaults
     * plus options), held as bytes so that nothing above the backends
     * names the model (gmc_devspec_sim_get / _set copy it), and an FST
     * waveform path ("" = none) */
    _Alignas(8) unsigned char sim[GMC_DEVSPEC_SIM_BYTES];
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

/*
 * A sim device spec from a model configuration (NULL: the defaults), as
 * gmc_device_open_sim() takes it: *spec is zeroed first. GMC_OK, or
 * GMC_E_INVALID_ARG when straps name more segments than the model has.
 */
int gmc_devspec_sim_set(struct gmc_devspec *spec, const struct gmc_sim_config *cfg);
/* The model configuration of a sim spec, copied into *cfg. */
void gmc_devspec_sim_get(const struct gmc_devspec *spec, struct gmc_sim_config *cfg);

#endif /* GMC_DEVSTR_H */
