/*
 * gmc_sim: the Verilated gmc_top controller as a plain C library.
 *
 * A gmc_sim handle holds one cycle-accurate model with all of its state;
 * several handles in one process run independently. The caller drives the
 * model's buses through these calls:
 *
 *   - registers (AXI4-Lite, BAR0): 32-bit reads and writes; a bus error
 *     response comes back as GMC_SIM_ESLVERR or GMC_SIM_EDECERR;
 *   - the CPU aperture (AXI4, BAR1): reads and writes of any length and
 *     alignment, split into legal INCR bursts, or single raw bursts;
 *   - host memory: buffers the caller registers at bus addresses serve the
 *     controller's AXI4 master, with a latency and injected errors;
 *   - the IRQ line, polled or through a callback;
 *   - an FST waveform of a window of cycles, written on request.
 *
 * Every call that can fail returns a gmc_sim_status (0 or negative) and
 * checks its arguments before it touches the model. Nothing prints.
 * A handle is not thread-safe; use one thread per handle.
 */
#ifndef GMC_SIM_H
#define GMC_SIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GMC_SIM_MAX_SEGMENTS 4

/* enum gmc_sim_status: GMC_SIM_OK and the GMC_SIM_E* codes, generated
 * from spec/sim_status.toml. */
#include "gmc_sim_status.h"

/* Name and message of a status; never NULL. */
const char *gmc_sim_status_name(int status);
const char *gmc_sim_strerror(int status);

/* One segment descriptor, as the SEG_* registers report it. */
struct gmc_sim_segment {
    uint64_t base;       /* GPU address of the first byte */
    uint64_t size;       /* bytes */
    uint64_t cpu_offset; /* BAR1 offset when CPU-visible */
    uint32_t flags;      /* DXGK_SEGMENTFLAGS layout (GMC_SEGFLAGS_*) */
    uint8_t banks;       /* equal banks; 0 = not banked */
    uint64_t sysmem_end; /* SystemMemoryEndAddress (SEG_SYSMEM_END), 0 = none */
};

struct gmc_sim_config {
    /* Cycles from a host-memory request to its first data beat or to its
     * write response. Default 100. */
    uint32_t host_latency;
    /* Cycles a register or aperture access may take before the call gives
     * up with GMC_SIM_ETIMEOUT. Default 100000. */
    uint32_t bus_timeout;
    /* Nonzero: replace the hardware's segment descriptors with seg_count
     * and seg[] (simulation straps, for testing descriptor validation).
     * Zero: the descriptors the RTL parameters give. */
    int strap_segments;
    uint32_t seg_count;
    struct gmc_sim_segment seg[GMC_SIM_MAX_SEGMENTS];
};

typedef struct gmc_sim gmc_sim;

/* Fill cfg with the defaults. */
void gmc_sim_config_default(struct gmc_sim_config *cfg);

/* Build a model and hold it in reset for 8 cycles. cfg may be NULL for the
 * defaults. On failure *out is NULL. */
int gmc_sim_create(const struct gmc_sim_config *cfg, gmc_sim **out);
void gmc_sim_destroy(gmc_sim *sim);

/* Assert the synchronous reset for `cycles` (>= 1) cycles. Registers return
 * to their reset values; VRAM content is kept; straps are kept. Host
 * transactions in flight are dropped. */
int gmc_sim_reset(gmc_sim *sim, uint32_t cycles);

/* Run n clock cycles with the buses idle (host memory is still served). */
int gmc_sim_step(gmc_sim *sim, uint64_t n);

/* Cycles run since create. */
uint64_t gmc_sim_cycles(const gmc_sim *sim);

/* Registers. off is a byte offset (GMC_REG_* from gmc_regs.h). On error
 * *val is 0. write_strb writes only the bytes whose bit is set in strb. */
int gmc_sim_reg_read(gmc_sim *sim, uint32_t off, uint32_t *val);
int gmc_sim_reg_write(gmc_sim *sim, uint32_t off, uint32_t val);
int gmc_sim_reg_write_strb(gmc_sim *sim, uint32_t off, uint32_t val, unsigned strb);
/* A 64-bit LO/HI pair: reads LO (which snapshots HI), then HI. */
int gmc_sim_reg_read64(gmc_sim *sim, uint32_t lo_off, uint64_t *val);

/* CPU aperture, any length and alignment. The access is split into INCR
 * bursts of 8-byte beats that never cross 4 KiB. The call stops at the
 * first refused burst and returns its error; a refused burst moves no
 * data, bursts before it have completed. On a read error the buffer's
 * unread part is zeroed. */
int gmc_sim_aperture_read(gmc_sim *sim, uint64_t off, void *buf, size_t len);
int gmc_sim_aperture_write(gmc_sim *sim, uint64_t off, const void *buf, size_t len);

/* One raw AXI4 burst on the aperture, for protocol tests. beats = len + 1.
 * Reads fill data[beats] and resp[beats]; writes take data[beats] and
 * strb[beats] and return the B response in *bresp. The return value is
 * GMC_SIM_OK when the handshakes completed (whatever the responses), or
 * GMC_SIM_ETIMEOUT / GMC_SIM_EINVAL. */
struct gmc_sim_burst {
    uint32_t addr;
    uint8_t len;   /* beats - 1 */
    uint8_t size;  /* log2 bytes per beat, 0..3 (4..7 are illegal and refused) */
    uint8_t burst; /* 0 FIXED, 1 INCR, 2 WRAP, 3 reserved */
    uint8_t id;
};
int gmc_sim_aperture_burst_read(gmc_sim *sim, const struct gmc_sim_burst *b,
                                uint64_t *data, uint8_t *resp);
int gmc_sim_aperture_burst_write(gmc_sim *sim, const struct gmc_sim_burst *b,
                                 const uint64_t *data, const uint8_t *strb, uint8_t *bresp);

/* Host memory served to the controller's AXI4 master. A region maps bus
 * addresses [bus, bus + len) onto the caller's buffer, which must stay
 * valid until it is unmapped or the model destroyed. Regions never
 * overlap. A master access outside every region answers DECERR. */
int gmc_sim_host_map(gmc_sim *sim, uint64_t bus, void *ptr, size_t len);
int gmc_sim_host_unmap(gmc_sim *sim, uint64_t bus);
int gmc_sim_set_host_latency(gmc_sim *sim, uint32_t cycles);

/* Error injection for master accesses touching [bus, bus + len). */
enum gmc_sim_inject {
    GMC_SIM_INJECT_SLVERR = 2, /* answer SLVERR, move no data */
    GMC_SIM_INJECT_DECERR = 3, /* answer DECERR, move no data */
    GMC_SIM_INJECT_HANG = 4    /* never answer */
};
int gmc_sim_host_inject(gmc_sim *sim, uint64_t bus, uint64_t len, int kind);
void gmc_sim_host_inject_clear(gmc_sim *sim);
/* Every hung read and write answers now, late, with SLVERR (the bus gives
 * up on them, as a completion timeout does); a hung write's data was never
 * stored. Other injections and new accesses are unaffected. */
int gmc_sim_host_release(gmc_sim *sim);
/* How many hung reads and writes the bus holds now (not answered, not
 * released). No bus, no cycle. */
uint64_t gmc_sim_host_hung(const gmc_sim *sim);

/* The IRQ line, and a callback called on each change with the new level. */
typedef void (*gmc_sim_irq_fn)(void *user, int level, uint64_t cycle);
int gmc_sim_irq(const gmc_sim *sim);
void gmc_sim_set_irq_callback(gmc_sim *sim, gmc_sim_irq_fn fn, void *user);

/* Write an FST waveform of cycles [start, end) to path (end 0: until
 * closed). Cycles already past are not recorded: recording starts at
 * max(start, now). The file is complete after trace_close, destroy, or
 * when the window ends. */
int gmc_sim_trace_open(gmc_sim *sim, const char *path, uint64_t start, uint64_t end);
int gmc_sim_trace_close(gmc_sim *sim);

/* Simulation backdoor: copy VRAM bytes without using any bus or cycle. */
int gmc_sim_vram_peek(const gmc_sim *sim, uint64_t addr, void *buf, size_t len);
uint64_t gmc_sim_vram_size(const gmc_sim *sim);
/* Simulation backdoor: VRAM bytes [addr, addr + len) lose their content,
 * as DRAM does without refresh: each byte gets a pseudo-random value drawn
 * from seed. Models a power-down of purged memory; no bus, no cycle. */
int gmc_sim_vram_scramble(gmc_sim *sim, uint64_t addr, uint64_t len, uint64_t seed);

/* The model's AXI ports are watched every cycle by a protocol monitor
 * (valid/ready and payload stability, one response per request, RLAST and
 * WLAST placement, no 4 KiB crossing, ...; see sim/gmc_axi_check.h).
 * Returns the number of violations seen since create, and copies the first
 * one's description into msg (which may be NULL). */
uint64_t gmc_sim_protocol_violations(const gmc_sim *sim, char *msg, size_t n);

/* Activity seen by the model's drivers. */
struct gmc_sim_stats {
    uint64_t cycles;
    uint64_t reg_reads, reg_writes;
    uint64_t aperture_read_bursts, aperture_write_bursts;
    uint64_t host_read_beats, host_write_beats;
    uint64_t host_errors;
};
int gmc_sim_get_stats(const gmc_sim *sim, struct gmc_sim_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* GMC_SIM_H */
