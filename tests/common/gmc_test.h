/* Helpers shared by the RTL tests: each asserts through cmocka, so a bus
 * error where none is expected fails the calling test with its location. */
#ifndef GMC_TEST_H
#define GMC_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gmc_regs.h"
#include "gmc_sim.h"

/* The default hardware configuration (gmc_top's parameter defaults,
 * generated from spec/gmc.toml [top_defaults] into gmc_regs.h). */
#define T_VRAM_BYTES GMC_TOP_VRAM_BYTES
#define T_WINDOW_BYTES GMC_TOP_CPU_WINDOW_BYTES
#define T_TLB_ENTRIES GMC_TOP_TLB_ENTRIES
#define T_APERTURE_BASE GMC_TOP_APERTURE_BASE
#define T_APERTURE_PAGES GMC_TOP_APERTURE_PAGES
#define T_PT_BASE_RESET (T_VRAM_BYTES - GMC_TOP_PT_RESERVE_BYTES)

gmc_sim *t_sim_new(void);
gmc_sim *t_sim_new_cfg(const struct gmc_sim_config *cfg);
/* Fail when the protocol monitor saw any AXI violation, then destroy. */
void t_sim_free(gmc_sim *s);

#define t_rd(s, off) t_rd_at((s), (off), __FILE__, __LINE__)
#define t_wr(s, off, v) t_wr_at((s), (off), (v), __FILE__, __LINE__)
#define t_rd64(s, off) t_rd64_at((s), (off), __FILE__, __LINE__)
uint32_t t_rd_at(gmc_sim *s, uint32_t off, const char *file, int line);
void t_wr_at(gmc_sim *s, uint32_t off, uint32_t v, const char *file, int line);
uint64_t t_rd64_at(gmc_sim *s, uint32_t off, const char *file, int line);

/* A debug-port translation: XLATE_STATUS and the result address. */
struct t_xlate {
    uint32_t status;
    uint64_t addr;
};
struct t_xlate t_translate(gmc_sim *s, uint32_t gpu_addr, int write);
#define T_XL_CODE(st) (((st) & GMC_XLATE_STATUS_CODE_MASK) >> GMC_XLATE_STATUS_CODE_LSB)

/* FNV-1a over VRAM bytes [addr, addr + len), read through the backdoor. */
uint64_t t_vram_hash(gmc_sim *s, uint64_t addr, uint64_t len);

/* Deterministic pseudo-random numbers (xorshift64*). */
uint64_t t_rand(uint64_t *state);
void t_fill_random(void *buf, size_t len, uint64_t *state);
/* How many times a DMA test's cycle budget the model's engine may need:
 * 1 for the full engine, 32 for the compact one (CAPS.DMA_ENGINE =
 * COMPACT: one word and one bus transaction at a time, docs/dma.md), 128
 * for the micro-sequenced one (MICRO: the same, in microcode at two cycles
 * a micro-instruction; 100 small TRANSFERs take about 90 times the full
 * engine's budget). Only budgets and cycle bounds scale; every expected
 * value stays the same. */
unsigned t_dma_slowdown(gmc_sim *s);
/* Cycles a FILL takes per 8-byte VRAM word: 1 on the full engine, 11 on
 * the compact one (a cycle to start the word, 8 to gather its bytes, one to
 * see it complete, one to write it), 74 on the micro-sequenced one (its
 * microcode's block loop, docs/dma.md). */
unsigned t_dma_fill_cycles_per_word(gmc_sim *s);
/* Engine clock edges (CNT_DMA_CLOCK) from the end of a reset until the
 * engine's clock stops: 1 on the full and compact engines (the engine's
 * extra reset cycle), at most 64 on the micro-sequenced one, which runs its
 * microcode's start-up (constants and status registers written, about 24
 * micro-instructions at two cycles each) before it waits. */
unsigned t_dma_reset_edges(gmc_sim *s);

#endif
