// gmc-board-sim: an iCE40 board top (firmware/, UART bridge included) run
// under Verilator behind a pseudo-terminal (docs/board-sim.md).
//
// The board's serial pins are driven at the bit level: every byte the host
// writes to the pty is shifted into uart_rx (start bit, 8 data bits LSB
// first, stop bit, CLKS_PER_BIT clocks each), and uart_tx is sampled mid-bit
// and the bytes written back to the pty. Between the pty and the pins a
// fault injector can flip, drop or duplicate bytes and insert idle gaps, in
// either direction, at a rate and seed given on the command line.
//
// Each board top is Verilated once per DMA engine it is simulated with
// (the Makefile's list, build/board/gmc_board_models.h). By default a board
// runs with the engine its bitstream carries (the Makefile's
// FW_ENGINE_<board>, which make firmware also uses): the HX8K's micro-
// sequenced engine. A bitstream without an engine (the iCEBreaker's) gets
// the compact engine instead, a simulation-only configuration the banner
// and --stats name as such; --engine picks another built model (the
// iCEBreaker's full engine, the HX8K's compact one), also simulation-only.
// The controller's paging traffic reaches the host as DMA_RD_REQ/DMA_WR_REQ
// frames.
//
// When the link has been quiet for IDLE_CYCLES, the clock runs in short
// slices between 2 ms waits on the pty, so an idle board costs no CPU.
// Device time (cycles) therefore runs slower than 12 MHz wall time when
// idle; the statistics are in device cycles.
//
// Also (docs/board-sim.md): a byte-level link model (--link byte: bytes go
// straight to the bridge's packet layer through gmc_uart_rx's output
// register and are taken from gmc_uart_tx's input, one BYTE_CYCLES apart,
// made public by gmc_board_sim.vlt), a board reset (--reset-at, SIGUSR1:
// the power-on reset counter is cleared, as a power cycle would), an FST
// trace window (--trace), and the link's figures in --stats, measured on
// the wire in board cycles (the frames are parsed as they cross the pins).
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include "gmc_bridge.h"
// The models built (Makefile, board simulation): their headers here, then
// a GMC_BOARD_MODEL(class, top module, board, engine) line each, and each
// board's bitstream engine (GMC_FW_ENGINE_<board>).
#define GMC_BOARD_MODEL(T, B, board, engine)
#include "gmc_board_models.h"
#undef GMC_BOARD_MODEL
#include "verilated.h"
#include "verilated_fst_c.h"

namespace {

// Both boards: 12 MHz / 3 Mbaud (firmware/*/gmc_board_*.v).
constexpr unsigned CLKS_PER_BIT = 4;
constexpr uint64_t IDLE_CYCLES = 1u << 17;
constexpr unsigned SLICE = 256;
// --link byte: one byte every BYTE_CYCLES board cycles each way (one bit
// time instead of ten).
constexpr unsigned BYTE_CYCLES = CLKS_PER_BIT;
// Wire time of one byte (start, 8 data, stop) in the bit-level model.
constexpr uint64_t WIRE_BYTE = 10 * CLKS_PER_BIT;
// FST time: 12 MHz, 83 334 ps per cycle (the model's timescale is 1 ps).
constexpr uint64_t PERIOD_PS = 83334;

volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_reset = 0;

void on_signal(int) { g_stop = 1; }
void on_usr1(int) { g_reset = 1; }

struct Rng {
    uint64_t s;
    uint64_t next()
    {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
    // A uniform double in [0, 1).
    double unit() { return (double)(next() >> 11) / 9007199254740992.0; }
};

struct Faults {
    double rate = 0.0;
    Rng rng{0x9E3779B97F4A7C15ull};
    uint64_t flips = 0, drops = 0, dups = 0, gaps = 0;

    // Pass one byte through the injector: appends 0, 1 or 2 bytes to out;
    // *gap gets idle byte times to insert before them.
    void apply(uint8_t b, std::deque<int> &out, unsigned *gap)
    {
        *gap = 0;
        if (rate <= 0.0 || rng.unit() >= rate) {
            out.push_back(b);
            return;
        }
        switch (rng.next() % 4) {
        case 0:
            flips++;
            out.push_back(b ^ (uint8_t)(1u << (rng.next() % 8)));
            break;
        case 1:
            drops++;
            break;
        case 2:
            dups++;
            out.push_back(b);
            out.push_back(b);
            break;
        default:
            gaps++;
            *gap = 1 + (unsigned)(rng.next() % 64);
            out.push_back(b);
            break;
        }
    }
};

// Host -> board: bytes shifted into uart_rx. -1 in the queue is one idle
// byte time (a gap).
struct Serialiser {
    std::deque<int> q;
    int bit = -1;  // -1 idle; 0 start; 1..8 data; 9 stop
    unsigned cnt = 0;
    int cur = 0;
    int line = 1;
    uint64_t start = 0;  // cycle the current byte's start bit began

    bool busy() const { return bit >= 0 || !q.empty(); }

    // One clock; returns the byte whose stop bit ends with this clock, or -1.
    int tick(uint64_t now)
    {
        if (bit < 0) {
            if (q.empty())
                return -1;
            cur = q.front();
            q.pop_front();
            bit = 0;
            cnt = 0;
            start = now;
        }
        if (cur < 0)
            line = 1;
        else if (bit == 0)
            line = 0;
        else if (bit <= 8)
            line = (cur >> (bit - 1)) & 1;
        else
            line = 1;
        if (++cnt == CLKS_PER_BIT) {
            cnt = 0;
            if (++bit == 10) {
                bit = -1;
                return cur;
            }
        }
        return -1;
    }
};

// Board -> host: uart_tx sampled in the middle of each bit.
struct Deserialiser {
    int prev = 1;
    bool active = false;
    unsigned cnt = 0;
    int byte = 0;
    uint64_t start = 0;  // cycle the current byte's start bit was seen

    // One clock; returns a byte, -2 for a framing error, or -1.
    int tick(int txd, uint64_t now)
    {
        int out = -1;
        if (!active) {
            if (prev == 1 && txd == 0) {
                active = true;
                cnt = 0;
                byte = 0;
                start = now;
            }
        } else {
            cnt++;
            unsigned half = CLKS_PER_BIT / 2;
            if (cnt > half && (cnt - half) % CLKS_PER_BIT == 0) {
                unsigned idx = (cnt - half) / CLKS_PER_BIT;  // 1..8 data, 9 stop
                if (idx <= 8) {
                    byte |= txd << (idx - 1);
                } else {
                    out = txd ? byte : -2;
                    active = false;
                }
            }
        }
        prev = txd;
        return out;
    }
};

struct Stats {
    uint64_t cycles = 0, bytes_in = 0, bytes_out = 0, busy_in = 0, busy_out = 0, framing = 0, resets = 0;
};

// Frames as they cross the pins (bridge framing, docs/uart-bridge.md), for
// the link figures. A damaged frame is skipped (the parser hunts for SYNC).
struct FrameParser {
    int state = 0;  // 0 hunt, 1 OP, 2 LEN, 3 payload, 4 CRC
    uint8_t op = 0, len = 0, n = 0, crc = 0;
    uint8_t pl[16];
    uint64_t start = 0;

    static uint8_t crc8(uint8_t c, uint8_t b)
    {
        c ^= b;
        for (int i = 0; i < 8; i++)
            c = (c & 0x80) ? (uint8_t)((c << 1) ^ 0x07) : (uint8_t)(c << 1);
        return c;
    }

    // A byte on the wire from cycle s to e; true when it completes a good
    // frame (op, len, pl; the frame's first byte began at start).
    bool feed(uint8_t b, uint64_t s)
    {
        switch (state) {
        case 0:
            if (b == GMC_BRIDGE_SYNC) {
                state = 1;
                start = s;
                crc = 0;
            }
            return false;
        case 1:
            op = b;
            crc = crc8(crc, b);
            state = 2;
            return false;
        case 2:
            len = b;
            crc = crc8(crc, b);
            n = 0;
            state = len > GMC_BRIDGE_MAX_LEN ? 0 : len == 0 ? 4 : 3;
            return false;
        case 3:
            pl[n++] = b;
            crc = crc8(crc, b);
            if (n == len)
                state = 4;
            return false;
        default:
            state = 0;
            return crc8(crc, b) == 0;
        }
    }
};

// Link figures, in board cycles, from the frames on the wire (bit-level
// link; docs/board-sim.md "Link figures"). A DMA burst's cycles run from
// the first bit of its request (up) to the last bit of its last read beat
// (down) or of the host's write response (down), less the host's turn: from
// the end of the frame the host answers (the request; the last write beat)
// to the first bit of its answer and the idle cycles between read beats
// (the host wrote them late), and less the wire time of other frames
// (register polls, their replies, the other direction's DMA) sent in the
// same direction while the burst's beats were on the wire. What is left is
// the burst's own wire time and the board's, the same on any host. A read
// burst in which a beat was sent again (after an ERR, or the host's probe)
// is counted apart (resent_bursts): its time holds the host's reaction. So
// is a burst the host asked about while it was in flight (DMA_REQ_AGAIN, a
// DMA_WR_ACK with RESEND: sent when the host saw nothing for 20 ms of its
// own time, as on a loaded host), and its request sent again does not start
// a new one (host_asked_bursts).
struct Figures {
    FrameParser down, up;
    struct Burst {
        bool open = false;
        uint8_t tag = 0;
        unsigned len = 0;
        uint64_t start = 0, ask_end = 0, wait = 0, foreign = 0;
        bool answered = false, resent = false, asked = false;
        int hi = -1;  // the highest read beat seen
    } rd, wr;
    uint64_t rd_bursts = 0, rd_beats = 0, rd_cycles = 0, rd_wait = 0, rd_foreign = 0, rd_resent = 0, rd_asked = 0;
    uint64_t wr_bursts = 0, wr_beats = 0, wr_cycles = 0, wr_wait = 0, wr_foreign = 0, wr_asked = 0;
    std::map<unsigned, uint64_t> rd_hist, wr_hist;
    // REG_RD round trips: first bit of the command (down) to the last bit
    // of its reply (up); first sends only (a retry's SEQ is not timed).
    bool reg_open = false;
    uint8_t reg_seq = 0;
    uint64_t reg_start = 0;
    std::vector<uint64_t> reg_rt;
    // The board's turn between bursts: from the last bit of a burst that
    // ended cleanly (a read burst's last beat, a write burst's response)
    // to the first bit of the board's next DMA request, by the kind of
    // burst that ended. Within a packet that is the engine's own work on
    // the beat (no host in it); between packets it holds the wait for the
    // host's next doorbell, which the median leaves out.
    uint64_t last_end = 0;
    int last_kind = -1;  // 0 read, 1 write, -1 none to time
    std::vector<uint64_t> gaps[2];

    void burst_ended(int kind, uint64_t e)
    {
        last_kind = kind;
        last_end = e;
    }

    void next_request(uint64_t start)
    {
        if (last_kind >= 0 && start >= last_end)
            gaps[last_kind].push_back(start - last_end);
        last_kind = -1;
    }

    // A cycle with the host->board line idle: inside a read burst whose
    // beats have begun, the board waits for the host's next beat (it wrote
    // them late): host time too.
    void down_idle()
    {
        if (rd.open && rd.answered)
            rd.wait++;
    }

    void on_down(uint8_t b, uint64_t s, uint64_t e)
    {
        if (!down.feed(b, s))
            return;
        const uint8_t *p = down.pl;
        if (rd.open && rd.answered && !(down.op == GMC_BRIDGE_OP_DMA_RD_DATA && down.len == GMC_BRIDGE_LEN_DMA_RD_DATA && p[10] == rd.tag))
            rd.foreign += e - down.start;
        switch (down.op) {
        case GMC_BRIDGE_OP_DMA_WR_ACK:  // beat, flags, TAG; RESEND asks for beats again
            if (wr.open && down.len == GMC_BRIDGE_LEN_DMA_WR_ACK && (p[1] & GMC_BRIDGE_WR_ACK_RESEND))
                wr.asked = true;
            break;
        case GMC_BRIDGE_OP_DMA_REQ_AGAIN:  // about the bursts in flight
            if (wr.open)
                wr.asked = true;
            if (rd.open)
                rd.asked = true;
            break;
        case GMC_BRIDGE_OP_REG_RD:  // offset, SEQ
            if (down.len == GMC_BRIDGE_LEN_REG_RD && !(reg_open && reg_seq == p[2])) {
                reg_open = true;
                reg_seq = p[2];
                reg_start = down.start;
            }
            break;
        case GMC_BRIDGE_OP_DMA_RD_DATA:  // beat, resp, data, TAG
            if (down.len == GMC_BRIDGE_LEN_DMA_RD_DATA && rd.open && p[10] == rd.tag) {
                if (!rd.answered) {
                    rd.answered = true;
                    rd.wait += down.start > rd.ask_end ? down.start - rd.ask_end : 0;
                }
                if ((int)p[0] <= rd.hi)
                    rd.resent = true;  // a beat sent again (an ERR's rewind, a probe)
                else
                    rd.hi = p[0];
                if (p[0] == rd.len && (rd.resent || rd.asked)) {
                    // Its timing has the host's reaction in it: counted
                    // apart, not in the figure.
                    (rd.resent ? rd_resent : rd_asked)++;
                    rd.open = false;
                    last_kind = -1;
                } else if (p[0] == rd.len) {
                    rd_bursts++;
                    rd_beats += rd.len + 1;
                    rd_cycles += e - rd.start - rd.wait - rd.foreign;
                    rd_wait += rd.wait;
                    rd_foreign += rd.foreign;
                    rd_hist[rd.len + 1]++;
                    rd.open = false;
                    burst_ended(0, e);
                }
            }
            break;
        case GMC_BRIDGE_OP_DMA_WR_RESP:  // resp, TAG
            if (down.len == GMC_BRIDGE_LEN_DMA_WR_RESP && wr.open && wr.answered && p[1] == wr.tag && wr.asked) {
                wr_asked++;
                wr.open = false;
                last_kind = -1;
            } else if (down.len == GMC_BRIDGE_LEN_DMA_WR_RESP && wr.open && wr.answered && p[1] == wr.tag) {
                uint64_t w = down.start > wr.ask_end ? down.start - wr.ask_end : 0;
                wr_bursts++;
                wr_beats += wr.len + 1;
                wr_cycles += e - wr.start - w - wr.foreign;
                wr_wait += w;
                wr_foreign += wr.foreign;
                wr_hist[wr.len + 1]++;
                wr.open = false;
                burst_ended(1, e);
            }
            break;
        default:
            break;
        }
    }

    void on_up(uint8_t b, uint64_t s, uint64_t e)
    {
        if (!up.feed(b, s))
            return;
        const uint8_t *p = up.pl;
        if (wr.open && !wr.answered && up.start > wr.start && !(up.op == GMC_BRIDGE_OP_DMA_WR_DATA && up.len == GMC_BRIDGE_LEN_DMA_WR_DATA))
            wr.foreign += e - up.start;
        switch (up.op) {
        case GMC_BRIDGE_OP_REG_RD_REPLY:  // resp, data, SEQ
            if (up.len == GMC_BRIDGE_LEN_REG_RD_REPLY && reg_open && p[5] == reg_seq) {
                reg_rt.push_back(e - reg_start);
                reg_open = false;
            }
            break;
        case GMC_BRIDGE_OP_DMA_RD_REQ:
            if (up.len == GMC_BRIDGE_LEN_DMA_RD_REQ && rd.open && p[10] == rd.tag) {
                rd.asked = true;  // sent again, when the host asked
            } else if (up.len == GMC_BRIDGE_LEN_DMA_RD_REQ) {
                next_request(up.start);
                rd = Burst();
                rd.open = true;
                rd.len = p[7];
                rd.tag = p[10];
                rd.start = up.start;
                rd.ask_end = e;
            }
            break;
        case GMC_BRIDGE_OP_DMA_WR_REQ:
            if (up.len == GMC_BRIDGE_LEN_DMA_WR_REQ && wr.open && p[10] == wr.tag) {
                wr.asked = true;  // sent again, when the host asked
            } else if (up.len == GMC_BRIDGE_LEN_DMA_WR_REQ) {
                next_request(up.start);
                wr = Burst();
                wr.open = true;
                wr.len = p[7];
                wr.tag = p[10];
                wr.start = up.start;
            }
            break;
        case GMC_BRIDGE_OP_DMA_WR_DATA:  // beat, strobes, data, TAG
            if (up.len == GMC_BRIDGE_LEN_DMA_WR_DATA && wr.open && p[0] == wr.len && p[10] == wr.tag) {
                wr.answered = true;
                wr.ask_end = e;
            }
            break;
        default:
            break;
        }
    }

    static std::string hist(const std::map<unsigned, uint64_t> &h)
    {
        std::string o = "{";
        for (auto &kv : h) {
            if (o.size() > 1)
                o += ", ";
            o += "\"" + std::to_string(kv.first) + "\": " + std::to_string(kv.second);
        }
        return o + "}";
    }

    static std::string gap_json(std::vector<uint64_t> g)
    {
        std::sort(g.begin(), g.end());
        char b[128];
        std::snprintf(b, sizeof b, "{\"count\": %zu, \"min_cycles\": %llu, \"median_cycles\": %llu}", g.size(),
                      (unsigned long long)(g.empty() ? 0 : g.front()),
                      (unsigned long long)(g.empty() ? 0 : g[g.size() / 2]));
        return b;
    }

    std::string json()
    {
        std::vector<uint64_t> v = reg_rt;
        std::sort(v.begin(), v.end());
        uint64_t mn = v.empty() ? 0 : v.front(), md = v.empty() ? 0 : v[v.size() / 2];
        char buf[1024];
        std::snprintf(buf, sizeof buf,
                      "{\"wire_byte_cycles\": %llu, "
                      "\"dma_rd\": {\"bursts\": %llu, \"beats\": %llu, \"cycles\": %llu, \"host_cycles\": %llu, \"other_frame_cycles\": %llu, "
                      "\"beats_per_burst\": %s, \"resent_bursts\": %llu, \"host_asked_bursts\": %llu}, "
                      "\"dma_wr\": {\"bursts\": %llu, \"beats\": %llu, \"cycles\": %llu, \"host_cycles\": %llu, \"other_frame_cycles\": %llu, "
                      "\"beats_per_burst\": %s, \"host_asked_bursts\": %llu}, "
                      "\"reg_rd\": {\"count\": %zu, \"min_cycles\": %llu, \"median_cycles\": %llu}, "
                      "\"board_turn\": {\"after_rd\": %s, \"after_wr\": %s}}",
                      (unsigned long long)WIRE_BYTE, (unsigned long long)rd_bursts, (unsigned long long)rd_beats,
                      (unsigned long long)rd_cycles, (unsigned long long)rd_wait, (unsigned long long)rd_foreign, hist(rd_hist).c_str(), (unsigned long long)rd_resent,
                      (unsigned long long)rd_asked,
                      (unsigned long long)wr_bursts, (unsigned long long)wr_beats, (unsigned long long)wr_cycles,
                      (unsigned long long)wr_wait, (unsigned long long)wr_foreign, hist(wr_hist).c_str(),
                      (unsigned long long)wr_asked, v.size(), (unsigned long long)mn,
                      (unsigned long long)md, gap_json(gaps[0]).c_str(), gap_json(gaps[1]).c_str());
        return buf;
    }
};

struct Opts {
    std::string board = "icebreaker";
    double rate = 0.0;
    uint64_t seed = 1;
    bool fault_down = true, fault_up = true;
    bool byte_link = false;
    std::string engine;  // the DMA engine's name; empty: the board's default
    std::string path_file, stats_file, trace_file;
    uint64_t max_cycles = 0, trace_from = 0, trace_to = 0;
    std::vector<uint64_t> reset_at;
};

int usage(const char *argv0)
{
    std::fprintf(stderr,
                 "usage: %s [--board icebreaker|hx8k] [--engine compact|full|micro] [--link bit|byte] [--faults RATE]\n"
                 "          [--fault-dir down|up|both] [--seed N] [--path-file FILE] [--stats FILE]\n"
                 "          [--max-cycles N] [--reset-at CYCLE]... [--trace FILE [--trace-from N] [--trace-to M]]\n"
                 "Runs the board top (a DMA engine on) behind a pseudo-terminal and prints\n"
                 "its path; serves the UART bridge until SIGINT/SIGTERM.\n"
                 "--engine: the DMA engine; default the one the board's bitstream carries\n"
                 "(hx8k: micro), or compact for a bitstream without one (icebreaker; simulation\n"
                 "only). Also built: icebreaker full (bursts of up to 32 beats), hx8k compact.\n"
                 "--link: bit-level UART pins (default, the real path) or bytes handed to\n"
                 "the bridge's packet layer (faster, not wire-timed).\n"
                 "--faults RATE: probability per byte, each direction, of a fault\n"
                 "(a flipped bit, a dropped or duplicated byte, or an idle gap); --fault-dir\n"
                 "limits them to host->board (down) or board->host (up).\n"
                 "--reset-at CYCLE (or SIGUSR1): reset the board (its power-on reset).\n"
                 "--trace FILE: FST waveform of board cycles [--trace-from, --trace-to).\n",
                 argv0);
    return 2;
}

bool number(const char *v, uint64_t *out)
{
    char *end = nullptr;
    errno = 0;
    if (*v == '-' || *v == '\0')
        return false;
    *out = std::strtoull(v, &end, 0);
    return *end == '\0' && errno == 0;
}

bool parse(int argc, char **argv, Opts *o)
{
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto val = [&](const char **v) {
            if (i + 1 >= argc)
                return false;
            *v = argv[++i];
            return true;
        };
        const char *v = nullptr;
        char *end = nullptr;
        uint64_t n = 0;
        if (a == "--board" && val(&v)) {
            o->board = v;
            if (o->board != "icebreaker" && o->board != "hx8k")
                return false;
        } else if (a == "--engine" && val(&v)) {
            o->engine = v;
        } else if (a == "--link" && val(&v)) {
            std::string l = v;
            if (l != "bit" && l != "byte")
                return false;
            o->byte_link = l == "byte";
        } else if (a == "--faults" && val(&v)) {
            o->rate = std::strtod(v, &end);
            if (*end != '\0' || o->rate < 0.0 || o->rate > 0.5)
                return false;
        } else if (a == "--fault-dir" && val(&v)) {
            std::string d = v;
            if (d != "down" && d != "up" && d != "both")
                return false;
            o->fault_down = d != "up";
            o->fault_up = d != "down";
        } else if (a == "--seed" && val(&v)) {
            if (!number(v, &o->seed))
                return false;
        } else if (a == "--path-file" && val(&v)) {
            o->path_file = v;
        } else if (a == "--stats" && val(&v)) {
            o->stats_file = v;
        } else if (a == "--max-cycles" && val(&v)) {
            if (!number(v, &o->max_cycles))
                return false;
        } else if (a == "--reset-at" && val(&v)) {
            if (!number(v, &n))
                return false;
            o->reset_at.push_back(n);
        } else if (a == "--trace" && val(&v)) {
            o->trace_file = v;
        } else if (a == "--trace-from" && val(&v)) {
            if (!number(v, &o->trace_from))
                return false;
        } else if (a == "--trace-to" && val(&v)) {
            if (!number(v, &o->trace_to))
                return false;
        } else {
            return false;
        }
    }
    if (o->trace_file.empty() && (o->trace_from != 0 || o->trace_to != 0))
        return false;
    if (o->trace_to != 0 && o->trace_to <= o->trace_from)
        return false;
    std::sort(o->reset_at.begin(), o->reset_at.end());
    return true;
}

// The model's public signals (sim/board/gmc_board_sim.vlt), per board top.
#define BOARD_ACCESS(T, B)                                                                                  \
    template <>                                                                                             \
    struct Access<T> {                                                                                      \
        static auto &por(T *t) { return t->rootp->B##__DOT__por_cnt_reg; }                                 \
        static auto &rx_data(T *t) { return t->rootp->B##__DOT__u_core__DOT__u_bridge__DOT__u_rx__DOT__m_data; } \
        static auto &rx_valid(T *t)                                                                         \
        {                                                                                                   \
            return t->rootp->B##__DOT__u_core__DOT__u_bridge__DOT__u_rx__DOT__m_valid;                      \
        }                                                                                                   \
        static auto &tx_data(T *t) { return t->rootp->B##__DOT__u_core__DOT__u_bridge__DOT__u_tx__DOT__s_data; } \
        static auto &tx_valid(T *t)                                                                         \
        {                                                                                                   \
            return t->rootp->B##__DOT__u_core__DOT__u_bridge__DOT__u_tx__DOT__s_valid;                      \
        }                                                                                                   \
        static auto &tx_busy(T *t)                                                                          \
        {                                                                                                   \
            return t->rootp->B##__DOT__u_core__DOT__u_bridge__DOT__u_tx__DOT__busy_reg;                     \
        }                                                                                                   \
        static auto &tx_txd(T *t) { return t->rootp->B##__DOT__u_core__DOT__u_bridge__DOT__u_tx__DOT__txd; } \
    };

template <class T>
struct Access;
#define GMC_BOARD_MODEL(T, B, board, engine) BOARD_ACCESS(T, B)
#include "gmc_board_models.h"
#undef GMC_BOARD_MODEL

// The engine a board's bitstream carries, and the one its simulation runs
// by default: that one, or the compact engine when the bitstream has none.
std::string bitstream_engine(const std::string &board)
{
    return board == "hx8k" ? GMC_FW_ENGINE_hx8k : GMC_FW_ENGINE_icebreaker;
}

std::string default_engine(const std::string &board)
{
    std::string e = bitstream_engine(board);
    return e == "none" ? "compact" : e;
}

// What the banner says of the engine: the bitstream's, or simulation only.
std::string engine_label(const Opts &o)
{
    std::string fw = bitstream_engine(o.board);
    if (o.engine == fw)
        return o.engine + " DMA engine, the bitstream's";
    return o.engine + " DMA engine, simulation only: the bitstream carries " +
           (fw == "none" ? std::string("none") : "the " + fw + " one");
}

int open_pty(std::string *path, int *keep)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) {
        std::perror("gmc-board-sim: posix_openpt");
        return -1;
    }
    const char *name = ptsname(m);
    if (name == nullptr) {
        std::perror("gmc-board-sim: ptsname");
        return -1;
    }
    *path = name;
    // Hold the slave open ourselves: the master then never sees a hang-up
    // between two host sessions, and the raw settings stay.
    *keep = open(name, O_RDWR | O_NOCTTY);
    if (*keep < 0) {
        std::perror("gmc-board-sim: open slave");
        return -1;
    }
    struct termios t;
    if (tcgetattr(*keep, &t) == 0) {
        cfmakeraw(&t);
        tcsetattr(*keep, TCSANOW, &t);
    }
    int fl = fcntl(m, F_GETFL);
    fcntl(m, F_SETFL, fl | O_NONBLOCK);
    return m;
}

template <class Top>
int serve(const Opts &o, int master)
{
    using A = Access<Top>;
    auto ctx = std::make_unique<VerilatedContext>();
    if (!o.trace_file.empty())
        ctx->traceEverOn(true);
    auto top = std::make_unique<Top>(ctx.get());
    std::unique_ptr<VerilatedFstC> tfp;
    bool trace_done = o.trace_file.empty();
    Faults down, up;
    down.rate = o.fault_down ? o.rate : 0.0;
    up.rate = o.fault_up ? o.rate : 0.0;
    down.rng.s = 0x9E3779B97F4A7C15ull ^ (o.seed * 0xBF58476D1CE4E5B9ull) ^ 1;
    up.rng.s = 0x9E3779B97F4A7C15ull ^ (o.seed * 0x94D049BB133111EBull) ^ 2;
    if (down.rng.s == 0)
        down.rng.s = 1;
    if (up.rng.s == 0)
        up.rng.s = 2;
    Serialiser ser;
    Deserialiser des;
    Stats st;
    Figures fig;
    std::string outbuf;
    uint64_t last_activity = 0;
    size_t next_reset = 0;
    // --link byte: the next cycle a byte may be handed in; the cycle the
    // transmitter's byte has taken its byte time.
    uint64_t rx_next = 0, tx_release = 0;
    bool tx_held = false;
    auto up_byte = [&](int b) {
        std::deque<int> tmp;
        unsigned gap = 0;
        up.apply((uint8_t)b, tmp, &gap);
        for (int x : tmp)
            outbuf.push_back((char)x);
        st.bytes_out++;
        last_activity = st.cycles;
    };
    top->clk_12m = 0;
    top->uart_rx = 1;
    top->eval();
    while (!g_stop && (o.max_cycles == 0 || st.cycles < o.max_cycles)) {
        for (unsigned i = 0; i < SLICE; i++) {
            const uint64_t now = st.cycles;
            if (g_reset || (next_reset < o.reset_at.size() && o.reset_at[next_reset] <= now)) {
                // The power-on reset again: 2^POR_LOG2 cycles of rst.
                if (g_reset)
                    g_reset = 0;
                else
                    next_reset++;
                A::por(top.get()) = 0;
                st.resets++;
                std::fprintf(stderr, "gmc-board-sim: board reset at cycle %llu\n", (unsigned long long)now);
            }
            if (tfp && o.trace_to != 0 && now >= o.trace_to) {
                tfp->close();
                tfp.reset();
                trace_done = true;
            }
            if (!trace_done && !tfp && now >= o.trace_from) {
                tfp = std::make_unique<VerilatedFstC>();
                top->trace(tfp.get(), 99);
                tfp->open(o.trace_file.c_str());
            }
            bool tx_take = false;
            if (!o.byte_link) {
                int fin = ser.tick(now);
                if (fin >= 0)
                    fig.on_down((uint8_t)fin, ser.start, now + 1);
                else if (ser.bit < 0)
                    fig.down_idle();
                top->uart_rx = (uint8_t)ser.line;
            } else if (!ser.q.empty() && now >= rx_next && !A::rx_valid(top.get())) {
                int b = ser.q.front();
                ser.q.pop_front();
                if (b >= 0) {
                    A::rx_data(top.get()) = (uint8_t)b;
                    A::rx_valid(top.get()) = 1;
                    fig.on_down((uint8_t)b, now, now + 1);
                }
                rx_next = now + BYTE_CYCLES;
            }
            top->clk_12m = 0;
            top->eval();
            if (tfp)
                tfp->dump(now * PERIOD_PS);
            if (o.byte_link) {
                // gmc_uart_tx takes s_data at this edge when it is not busy.
                tx_take = A::tx_valid(top.get()) && !A::tx_busy(top.get());
                if (tx_take)
                    up_byte(A::tx_data(top.get()));
                if (tx_take)
                    fig.on_up((uint8_t)A::tx_data(top.get()), now, now + 1);
            }
            top->clk_12m = 1;
            top->eval();
            if (tfp)
                tfp->dump(now * PERIOD_PS + PERIOD_PS / 2);
            st.cycles++;
            if (o.byte_link) {
                if (tx_take) {
                    tx_held = true;
                    tx_release = now + BYTE_CYCLES;
                }
                if (tx_held && st.cycles >= tx_release) {
                    // Its byte time is over: free the transmitter without
                    // shifting the bits out (the pin stays idle).
                    A::tx_busy(top.get()) = 0;
                    A::tx_txd(top.get()) = 1;
                    tx_held = false;
                }
                if (!ser.q.empty() || tx_held)
                    last_activity = st.cycles;
                continue;
            }
            if (ser.bit >= 0)
                st.busy_in++;
            int b = des.tick(top->uart_tx, now);
            if (des.active)
                st.busy_out++;
            if (b >= 0) {
                fig.on_up((uint8_t)b, des.start, des.start + WIRE_BYTE);
                up_byte(b);
            } else if (b == -2) {
                st.framing++;
            }
            if (ser.busy() || des.active)
                last_activity = st.cycles;
        }
        if (!outbuf.empty()) {
            ssize_t n = write(master, outbuf.data(), outbuf.size());
            if (n > 0)
                outbuf.erase(0, (size_t)n);
        }
        bool idle = st.cycles - last_activity > IDLE_CYCLES && outbuf.empty();
        struct pollfd p = {master, POLLIN, 0};
        if (poll(&p, 1, idle ? 2 : 0) > 0 && (p.revents & POLLIN) && ser.q.size() < 4096) {
            uint8_t buf[512];
            ssize_t n = read(master, buf, sizeof buf);
            for (ssize_t i = 0; i < n; i++) {
                unsigned gap = 0;
                std::deque<int> tmp;
                down.apply(buf[i], tmp, &gap);
                for (unsigned g = 0; g < gap; g++)
                    ser.q.push_back(-1);
                for (int x : tmp)
                    ser.q.push_back(x);
                st.bytes_in++;
            }
            if (n > 0)
                last_activity = st.cycles;
        }
    }
    if (tfp)
        tfp->close();
    top->final();
    if (!o.stats_file.empty()) {
        FILE *f = std::fopen(o.stats_file.c_str(), "w");
        if (f != nullptr) {
            std::fprintf(f,
                         "{\"board\": \"%s\", \"engine\": \"%s\", \"bitstream_engine\": \"%s\", \"link\": \"%s\", \"cycles\": %llu, \"bytes_in\": %llu, "
                         "\"bytes_out\": %llu, \"busy_in_cycles\": %llu, \"busy_out_cycles\": %llu, \"framing\": %llu, "
                         "\"resets\": %llu, "
                         "\"faults_down\": {\"flip\": %llu, \"drop\": %llu, \"dup\": %llu, \"gap\": %llu}, "
                         "\"faults_up\": {\"flip\": %llu, \"drop\": %llu, \"dup\": %llu, \"gap\": %llu}, "
                         "\"figures\": %s}\n",
                         o.board.c_str(), o.engine.c_str(), bitstream_engine(o.board).c_str(),
                         o.byte_link ? "byte" : "bit", (unsigned long long)st.cycles,
                         (unsigned long long)st.bytes_in, (unsigned long long)st.bytes_out,
                         (unsigned long long)st.busy_in, (unsigned long long)st.busy_out,
                         (unsigned long long)st.framing, (unsigned long long)st.resets,
                         (unsigned long long)down.flips, (unsigned long long)down.drops,
                         (unsigned long long)down.dups, (unsigned long long)down.gaps,
                         (unsigned long long)up.flips, (unsigned long long)up.drops,
                         (unsigned long long)up.dups, (unsigned long long)up.gaps, fig.json().c_str());
            std::fclose(f);
        }
    }
    return 0;
}

// The models built, by board and engine.
struct Model {
    const char *board, *engine;
    int (*serve)(const Opts &, int);
};
#define GMC_BOARD_MODEL(T, B, board, engine) {#board, #engine, serve<T>},
const Model MODELS[] = {
#include "gmc_board_models.h"
};
#undef GMC_BOARD_MODEL

}  // namespace

int main(int argc, char **argv)
{
    Opts o;
    if (!parse(argc, argv, &o))
        return usage(argv[0]);
    if (o.engine.empty())
        o.engine = default_engine(o.board);
    const Model *model = nullptr;
    for (const Model &m : MODELS) {
        if (o.board == m.board && o.engine == m.engine)
            model = &m;
    }
    if (model == nullptr) {
        std::fprintf(stderr, "gmc-board-sim: no %s model with the %s DMA engine built\n", o.board.c_str(),
                     o.engine.c_str());
        return usage(argv[0]);
    }
    std::string path;
    int keep = -1;
    int master = open_pty(&path, &keep);
    if (master < 0)
        return 1;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    if (!o.path_file.empty()) {
        std::string tmp = o.path_file + ".tmp";
        FILE *f = std::fopen(tmp.c_str(), "w");
        if (f == nullptr || std::fprintf(f, "%s\n", path.c_str()) < 0 || std::fclose(f) != 0 ||
            std::rename(tmp.c_str(), o.path_file.c_str()) != 0) {
            std::perror("gmc-board-sim: path file");
            return 1;
        }
    }
    std::printf("gmc-board-sim: board %s (%s), %s link, faults %g seed %llu, pty %s\n",
                o.board.c_str(), engine_label(o).c_str(), o.byte_link ? "byte" : "bit", o.rate,
                (unsigned long long)o.seed, path.c_str());
    std::fflush(stdout);
    int rc = model->serve(o, master);
    close(keep);
    close(master);
    return rc;
}
