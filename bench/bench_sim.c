/*
 * bench_sim: model speed of gmc_top under steady aperture and register
 * traffic. One round is the load bench/tb_bench.v drives under Icarus:
 * a 16-beat aperture write, a 16-beat aperture read, a register write and
 * a register read. Prints one flat JSON object.
 *
 *   bench_sim [rounds]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gmc_regs.h"
#include "gmc_sim.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int round_trip(gmc_sim *s, uint32_t i, uint64_t *buf)
{
    uint32_t off = (i * 128u) & 0xFFF80u, v;
    for (int k = 0; k < 16; k++) buf[k] = (uint64_t)i * 16 + (uint64_t)k;
    if (gmc_sim_aperture_write(s, off, buf, 128)) return 1;
    if (gmc_sim_aperture_read(s, off, buf, 128)) return 1;
    if (buf[15] != (uint64_t)i * 16 + 15) return 1;
    if (gmc_sim_reg_write(s, GMC_REG_SCRATCH, i)) return 1;
    if (gmc_sim_reg_read(s, GMC_REG_SCRATCH, &v) || v != i) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t rounds = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 200000;
    gmc_sim *s;
    if (gmc_sim_create(NULL, &s)) {
        fprintf(stderr, "bench_sim: cannot create the model\n");
        return 1;
    }
    uint64_t buf[16];
    for (uint32_t i = 0; i < 1000; i++)
        if (round_trip(s, i, buf)) return 1;
    uint64_t c0 = gmc_sim_cycles(s);
    double t0 = now_s();
    for (uint32_t i = 0; i < rounds; i++)
        if (round_trip(s, i, buf)) {
            fprintf(stderr, "bench_sim: round %" PRIu32 " failed\n", i);
            return 1;
        }
    double dt = now_s() - t0;
    uint64_t cycles = gmc_sim_cycles(s) - c0;
    printf("{\"sim_cycles_per_s\": %.0f, \"sim_bench_cycles\": %" PRIu64 ", \"sim_bench_cycles_per_round\": %.2f, "
           "\"sim_bench_seconds\": %.3f}\n",
           (double)cycles / dt, cycles, (double)cycles / rounds, dt);
    gmc_sim_destroy(s);
    return 0;
}
