/*
 * gmc_backend_uart.h - the uart backend's defaults (private to the host
 * library).
 */
#ifndef GMC_BACKEND_UART_H
#define GMC_BACKEND_UART_H

/* Both boards' rate: 12 MHz / CLKS_PER_BIT 4 (docs/boards.md). */
#define GMC_UART_DEFAULT_BAUD 3000000u

/* The table is gmc_backend_uart (gmc_backend.h); its link counters are
 * struct gmc_link_stats (gmc.h). */

#endif /* GMC_BACKEND_UART_H */
