#include "gmc_test.h"

#include <stdio.h>
#include <stdlib.h>

gmc_sim *t_sim_new_cfg(const struct gmc_sim_config *cfg)
{
    gmc_sim *s = NULL;
    int st = gmc_sim_create(cfg, &s);
    if (st) fail_msg("gmc_sim_create: %s", gmc_sim_strerror(st));
    assert_non_null(s);
    return s;
}

gmc_sim *t_sim_new(void)
{
    return t_sim_new_cfg(NULL);
}

void t_sim_free(gmc_sim *s)
{
    char msg[256];
    uint64_t n = gmc_sim_protocol_violations(s, msg, sizeof msg);
    gmc_sim_destroy(s);
    if (n) fail_msg("%llu AXI protocol violation(s); first: %s", (unsigned long long)n, msg);
}

uint32_t t_rd_at(gmc_sim *s, uint32_t off, const char *file, int line)
{
    uint32_t v = 0;
    int st = gmc_sim_reg_read(s, off, &v);
    if (st) fail_msg("%s:%d: read of register 0x%04x: %s", file, line, off, gmc_sim_status_name(st));
    return v;
}

void t_wr_at(gmc_sim *s, uint32_t off, uint32_t v, const char *file, int line)
{
    int st = gmc_sim_reg_write(s, off, v);
    if (st) fail_msg("%s:%d: write of register 0x%04x: %s", file, line, off, gmc_sim_status_name(st));
}

uint64_t t_rd64_at(gmc_sim *s, uint32_t off, const char *file, int line)
{
    uint64_t v = 0;
    int st = gmc_sim_reg_read64(s, off, &v);
    if (st) fail_msg("%s:%d: read64 of register 0x%04x: %s", file, line, off, gmc_sim_status_name(st));
    return v;
}

struct t_xlate t_translate(gmc_sim *s, uint32_t gpu_addr, int write)
{
    struct t_xlate r;
    t_wr(s, GMC_REG_XLATE_ADDR, gpu_addr);
    t_wr(s, GMC_REG_XLATE_CTRL, GMC_XLATE_CTRL_GO_MASK | (write ? GMC_XLATE_CTRL_WRITE_MASK : 0));
    int polls = 0;
    do {
        r.status = t_rd(s, GMC_REG_XLATE_STATUS);
        if (++polls > 1000) fail_msg("translation of 0x%08x never finished", gpu_addr);
    } while (r.status & GMC_XLATE_STATUS_BUSY_MASK);
    assert_true(r.status & GMC_XLATE_STATUS_DONE_MASK);
    r.addr = t_rd64(s, GMC_REG_XLATE_RESULT_LO);
    return r;
}

uint64_t t_vram_hash(gmc_sim *s, uint64_t addr, uint64_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    uint8_t buf[4096];
    while (len) {
        size_t n = len < sizeof buf ? (size_t)len : sizeof buf;
        assert_int_equal(gmc_sim_vram_peek(s, addr, buf, n), GMC_SIM_OK);
        for (size_t i = 0; i < n; i++) h = (h ^ buf[i]) * 0x100000001b3ull;
        addr += n;
        len -= n;
    }
    return h;
}

uint64_t t_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

unsigned t_dma_slowdown(gmc_sim *s)
{
    const uint32_t e = (t_rd(s, GMC_REG_CAPS) & GMC_CAPS_DMA_ENGINE_MASK) >> GMC_CAPS_DMA_ENGINE_LSB;
    return e == GMC_DMA_ENGINE_MICRO ? 128u : e == GMC_DMA_ENGINE_COMPACT ? 32u : 1u;
}

unsigned t_dma_fill_cycles_per_word(gmc_sim *s)
{
    const unsigned k = t_dma_slowdown(s);
    return k == 1u ? 1u : k == 32u ? 11u : 74u;
}

unsigned t_dma_reset_edges(gmc_sim *s)
{
    return t_dma_slowdown(s) == 128u ? 64u : 1u;
}

void t_fill_random(void *buf, size_t len, uint64_t *state)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i++) p[i] = (uint8_t)(t_rand(state) >> 56);
}
