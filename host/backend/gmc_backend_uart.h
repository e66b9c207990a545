/*
 * gmc_backend_uart.h - link statistics of the uart backend (private to the
 * host library; the backend itself is gmc_backend_uart in gmc_backend.h).
 */
#ifndef GMC_BACKEND_UART_H
#define GMC_BACKEND_UART_H

#include <stdint.h>

struct gmc_uart_stats {
    int opened;
    int latency_ms;          /* FTDI latency timer set (1), or -1: not available */
    uint64_t bytes_tx, bytes_rx;
    uint64_t commands;       /* commands completed or given up */
    uint64_t retries;        /* command attempts repeated, read beats resent, WR_RESP resent */
    uint64_t resyncs;        /* quiet + PING after a silence or a damaged reply */
    uint64_t crc_errors;     /* frames from the board dropped for a bad CRC or LEN */
    uint64_t link_errors;    /* ERR frames from the bridge */
    uint64_t irqs;           /* IRQ notifications */
    uint64_t dma_rd_beats, dma_wr_beats;
};

/* The counters of an open uart backend context. */
int gmc_backend_uart_stats(void *ctx, struct gmc_uart_stats *out);

#endif /* GMC_BACKEND_UART_H */
