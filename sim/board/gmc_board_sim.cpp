// gmc-board-sim: the real board top (firmware/<board>/gmc_board_<board>.v,
// UART bridge included) under Verilator, behind a pseudo-terminal.
//
// The program opens a pty, prints its path on stdout (one line) and serves
// the bridge until SIGINT/SIGTERM. The host side (the uart backend,
// `uart:<pty path>`, or any termios program) talks the protocol of
// docs/uart-bridge.md to it. The board's serial line is driven and sampled
// bit by bit (CLKS_PER_BIT clock cycles per bit, 12 MHz model clock), so
// the bridge's own UART receiver and transmitter are exercised.
//
// Faults (--faults RATE --seed N --fault-dir down|up|both): each byte on
// the chosen directions is, with probability RATE, flipped (one bit),
// dropped, duplicated or followed by an idle gap longer than the bridge's
// receive timeout. Counts are printed on exit (stderr, one JSON line).
//
// Verilator forces C++ here; the host library stays C.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <deque>
#include <memory>
#include <string>

#include "verilated.h"
#include "verilated_fst_c.h"
#include "Vgmc_board_hx8k.h"
#include "Vgmc_board_icebreaker.h"

namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

constexpr int kClksPerBit = 4;       // the boards' default (3 Mbaud at 12 MHz)
constexpr uint64_t kTimeoutCycles = 1u << 17;  // the bridge's receive timeout

struct Options {
    std::string board = "hx8k";
    std::string link = "bit";
    double fault_rate = 0.0;
    uint64_t seed = 1;
    bool fault_down = true, fault_up = true;
    std::string trace;
    uint64_t trace_start = 0, trace_cycles = 0;
    std::string pty_link;  // optional symlink to the pty path
};

struct Counters {
    uint64_t bytes_down = 0, bytes_up = 0, cycles = 0;
    uint64_t flips = 0, drops = 0, dups = 0, gaps = 0;
};

// xorshift64*: a fixed-seed generator so a fault pattern can be replayed.
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed ? seed : 0x9E3779B97F4A7C15ull) {}
    uint64_t next() {
        s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
        return s * 2685821657736338717ull;
    }
    double unit() { return (double)(next() >> 11) / 9007199254740992.0; }
};

// Applies the fault model to one byte; appends 0, 1 or 2 bytes to out and
// may ask for an idle gap (cycles) before the next byte.
void inject(const Options &o, Rng &rng, Counters &c, bool enabled, uint8_t b,
            std::deque<int> &out) {
    if (!enabled || o.fault_rate <= 0.0 || rng.unit() >= o.fault_rate) {
        out.push_back(b);
        return;
    }
    switch (rng.next() % 4) {
    case 0: out.push_back(b ^ (uint8_t)(1u << (rng.next() % 8))); c.flips++; break;
    case 1: c.drops++; break;
    case 2: out.push_back(b); out.push_back(b); c.dups++; break;
    default: out.push_back(b); out.push_back(-1); c.gaps++; break;  // -1: idle gap marker
    }
}

template <class M>
int serve(M *m, VerilatedContext *ctx, const Options &o, int master, Counters &c) {
    Rng rng(o.seed);
    std::deque<int> down;        // bytes (or gap markers) for the board's rx line
    std::string up;              // bytes from the board, to the pty
    std::unique_ptr<VerilatedFstC> tfp;
    if (!o.trace.empty()) {
        tfp.reset(new VerilatedFstC);
        m->trace(tfp.get(), 99);
        tfp->open(o.trace.c_str());
    }
    // Transmitter towards the board (drives uart_rx).
    int tx_phase = -1;           // -1 idle; else bit index*CPB + cycle
    uint16_t tx_frame = 0;
    uint64_t gap_left = 0;
    // Receiver from the board (samples uart_tx).
    int rx_count = -1;           // -1 idle; cycles since the start edge
    uint8_t rx_byte = 0;
    int prev_tx = 1;
    uint64_t quiet = 0;

    m->uart_rx = 1;
    while (!g_stop) {
        // Take what the host wrote.
        struct pollfd p = {master, POLLIN, 0};
        bool busy = tx_phase >= 0 || !down.empty() || rx_count >= 0 || gap_left;
        // Sleep on the pty only after a long quiet stretch (the DMA engine
        // may work without link traffic for a while).
        int timeout = (busy || quiet < (1u << 18)) ? 0 : 1;
        if (poll(&p, 1, timeout) > 0 && (p.revents & POLLIN)) {
            uint8_t buf[512];
            ssize_t n = read(master, buf, sizeof buf);
            if (n > 0) quiet = 0;
            for (ssize_t i = 0; i < n; i++) {
                c.bytes_down++;
                inject(o, rng, c, o.fault_down, buf[i], down);
            }
        }
        for (int k = 0; k < 256; k++) {
            // Drive the board's rx line.
            if (tx_phase < 0) {
                if (gap_left) {
                    gap_left--;
                } else if (!down.empty()) {
                    int b = down.front();
                    down.pop_front();
                    if (b < 0) {
                        gap_left = kTimeoutCycles + 1024;
                    } else {
                        tx_frame = (uint16_t)(0x200u | ((unsigned)b << 1));  // start 0, data, stop 1
                        tx_phase = 0;
                    }
                }
            }
            if (tx_phase >= 0) {
                m->uart_rx = (tx_frame >> (tx_phase / kClksPerBit)) & 1u;
                if (++tx_phase == 10 * kClksPerBit) tx_phase = -1;
            } else {
                m->uart_rx = 1;
            }
            m->clk_12m = 0;
            m->eval();
            if (tfp && c.cycles >= o.trace_start && c.cycles < o.trace_start + o.trace_cycles)
                tfp->dump(ctx->time());
            ctx->timeInc(1);
            m->clk_12m = 1;
            m->eval();
            if (tfp && c.cycles >= o.trace_start && c.cycles < o.trace_start + o.trace_cycles)
                tfp->dump(ctx->time());
            ctx->timeInc(1);
            c.cycles++;
            // Sample the board's tx line: start edge, then mid-bit samples.
            int txd = m->uart_tx;
            if (rx_count < 0) {
                if (prev_tx && !txd) rx_count = 0;
            } else {
                rx_count++;
                int bit = (rx_count - kClksPerBit / 2) / kClksPerBit;
                if ((rx_count - kClksPerBit / 2) % kClksPerBit == 0 && bit >= 1 && bit <= 8)
                    rx_byte = (uint8_t)((rx_byte >> 1) | (txd ? 0x80 : 0));
                if (bit == 9 && (rx_count - kClksPerBit / 2) % kClksPerBit == 0) {
                    std::deque<int> tmp;
                    c.bytes_up++;
                    inject(o, rng, c, o.fault_up, rx_byte, tmp);
                    for (int b : tmp)
                        if (b >= 0) up.push_back((char)b);
                    rx_count = -1;
                }
            }
            prev_tx = txd;
        }
        busy = tx_phase >= 0 || !down.empty() || rx_count >= 0 || gap_left;
        quiet = busy ? 0 : quiet + 256;
        if (!up.empty()) {
            ssize_t n = write(master, up.data(), up.size());
            if (n > 0) up.erase(0, (size_t)n);
        }
    }
    if (tfp) tfp->close();
    return 0;
}

void usage() {
    fprintf(stderr,
            "usage: gmc-board-sim [--board hx8k|up5k] [--link bit] [--faults RATE] [--seed N]\n"
            "                     [--fault-dir down|up|both] [--trace FILE.fst --trace-start CYCLE\n"
            "                     --trace-cycles N] [--link-path PATH]\n");
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto val = [&](const char *name) -> const char * {
            if (i + 1 >= argc) { fprintf(stderr, "gmc-board-sim: %s needs a value\n", name); exit(2); }
            return argv[++i];
        };
        char *end = nullptr;
        if (a == "--board") o.board = val("--board");
        else if (a == "--link") o.link = val("--link");
        else if (a == "--faults") { o.fault_rate = strtod(val("--faults"), &end); if (*end || o.fault_rate < 0 || o.fault_rate > 1) { fprintf(stderr, "gmc-board-sim: --faults takes a rate 0..1\n"); return 2; } }
        else if (a == "--seed") o.seed = strtoull(val("--seed"), nullptr, 0);
        else if (a == "--fault-dir") {
            std::string d = val("--fault-dir");
            if (d == "down") o.fault_up = false;
            else if (d == "up") o.fault_down = false;
            else if (d != "both") { fprintf(stderr, "gmc-board-sim: --fault-dir is down, up or both\n"); return 2; }
        }
        else if (a == "--trace") o.trace = val("--trace");
        else if (a == "--trace-start") o.trace_start = strtoull(val("--trace-start"), nullptr, 0);
        else if (a == "--trace-cycles") o.trace_cycles = strtoull(val("--trace-cycles"), nullptr, 0);
        else if (a == "--link-path") o.pty_link = val("--link-path");
        else { usage(); return 2; }
    }
    if (o.board == "icebreaker") o.board = "up5k";
    if (o.board != "hx8k" && o.board != "up5k") { fprintf(stderr, "gmc-board-sim: unknown board %s (hx8k, up5k)\n", o.board.c_str()); return 2; }
    if (o.link != "bit") {
        fprintf(stderr, "gmc-board-sim: --link %s: only the bit-level link model is built (docs/uart-bridge.md)\n", o.link.c_str());
        return 2;
    }
    if (!o.trace.empty() && o.trace_cycles == 0) o.trace_cycles = ~0ull - o.trace_start;

    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) { perror("gmc-board-sim: posix_openpt"); return 1; }
    const char *path = ptsname(master);
    if (!path) { perror("gmc-board-sim: ptsname"); return 1; }
    // Keep a slave descriptor open, in raw mode: the line discipline then
    // never echoes or translates, and the master never sees a hang-up
    // between two clients.
    int slave = open(path, O_RDWR | O_NOCTTY);
    struct termios t;
    if (slave < 0 || tcgetattr(slave, &t) != 0) { perror("gmc-board-sim: pty slave"); return 1; }
    cfmakeraw(&t);
    tcsetattr(slave, TCSANOW, &t);
    int fl = fcntl(master, F_GETFL);
    fcntl(master, F_SETFL, fl | O_NONBLOCK);
    if (!o.pty_link.empty()) {
        unlink(o.pty_link.c_str());
        if (symlink(path, o.pty_link.c_str()) != 0) { perror("gmc-board-sim: --link-path"); return 1; }
    }
    printf("%s\n", path);
    fflush(stdout);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);

    std::unique_ptr<VerilatedContext> ctx(new VerilatedContext);
    ctx->traceEverOn(!o.trace.empty());
    Counters c;
    int rc;
    if (o.board == "hx8k") {
        std::unique_ptr<Vgmc_board_hx8k> m(new Vgmc_board_hx8k(ctx.get()));
        rc = serve(m.get(), ctx.get(), o, master, c);
        m->final();
    } else {
        std::unique_ptr<Vgmc_board_icebreaker> m(new Vgmc_board_icebreaker(ctx.get()));
        rc = serve(m.get(), ctx.get(), o, master, c);
        m->final();
    }
    fprintf(stderr,
            "{\"board\": \"%s\", \"cycles\": %llu, \"bytes_down\": %llu, \"bytes_up\": %llu, "
            "\"flips\": %llu, \"drops\": %llu, \"dups\": %llu, \"gaps\": %llu}\n",
            o.board.c_str(), (unsigned long long)c.cycles, (unsigned long long)c.bytes_down,
            (unsigned long long)c.bytes_up, (unsigned long long)c.flips, (unsigned long long)c.drops,
            (unsigned long long)c.dups, (unsigned long long)c.gaps);
    if (!o.pty_link.empty()) unlink(o.pty_link.c_str());
    close(slave);
    close(master);
    return rc;
}
