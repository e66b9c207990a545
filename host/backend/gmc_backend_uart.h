/*
 * gmc_backend_uart.h - the uart backend's link statistics (private to the
 * host library; the table itself is gmc_backend_uart in gmc_backend.h).
 */
#ifndef GMC_BACKEND_UART_H
#define GMC_BACKEND_UART_H

#include <stdint.h>

/* Both boards' rate: 12 MHz / CLKS_PER_BIT 4 (docs/boards.md). */
#define GMC_UART_DEFAULT_BAUD 3000000u

struct gmc_uart_stats {
    uint32_t baud;
    uint32_t bridge_version;
    int latency_timer;      /* 1 set to 1 ms, 0 not an FTDI port, -1 not allowed */
    uint64_t bytes_tx, bytes_rx, frames_tx, frames_rx;
    uint64_t commands;      /* commands completed or failed */
    uint64_t retries;       /* commands and DMA read beats sent again */
    uint64_t timeouts;      /* commands that got no answer in time */
    uint64_t resyncs;       /* PING resynchronisations */
    uint64_t bad_frames;    /* received frames with a bad CRC or length */
    uint64_t junk;          /* bytes outside any frame */
    uint64_t stale;         /* replies that answered nothing outstanding */
    uint64_t err_frames;    /* ERR frames received */
    uint64_t irq_frames;
    uint64_t dma_rd_bursts, dma_rd_beats, dma_wr_bursts, dma_wr_beats;
    uint64_t dma_refused;   /* bursts outside host_map: DECERR, nothing touched */
    uint64_t dma_broken;    /* write bursts with lost beats: SLVERR, nothing touched */
    uint64_t rd_probes;     /* read bursts re-probed after silence */
};

/* Copy the statistics of an open uart backend context. */
void gmc_backend_uart_stats(void *ctx, struct gmc_uart_stats *out);

#endif /* GMC_BACKEND_UART_H */
