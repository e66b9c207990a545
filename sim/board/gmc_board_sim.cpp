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
// The board is built with DMA_ENABLE = 1 (a simulation-only configuration:
// the bitstreams leave the engine out), so the controller's paging traffic
// reaches the host as DMA_RD_REQ/DMA_WR_REQ frames.
//
// When the link has been quiet for IDLE_CYCLES, the clock runs in short
// slices between 2 ms waits on the pty, so an idle board costs no CPU.
// Device time (cycles) therefore runs slower than 12 MHz wall time when
// idle; the statistics are in device cycles.
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include "Vgmc_board_hx8k.h"
#include "Vgmc_board_icebreaker.h"
#include "verilated.h"

namespace {

// Both boards: 12 MHz / 3 Mbaud (firmware/*/gmc_board_*.v).
constexpr unsigned CLKS_PER_BIT = 4;
constexpr uint64_t IDLE_CYCLES = 1u << 17;
constexpr unsigned SLICE = 256;

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

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

    bool busy() const { return bit >= 0 || !q.empty(); }

    void tick()
    {
        if (bit < 0) {
            if (q.empty())
                return;
            cur = q.front();
            q.pop_front();
            bit = 0;
            cnt = 0;
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
            if (++bit == 10)
                bit = -1;
        }
    }
};

// Board -> host: uart_tx sampled in the middle of each bit.
struct Deserialiser {
    int prev = 1;
    bool active = false;
    unsigned cnt = 0;
    int byte = 0;

    // One clock; returns a byte, -2 for a framing error, or -1.
    int tick(int txd)
    {
        int out = -1;
        if (!active) {
            if (prev == 1 && txd == 0) {
                active = true;
                cnt = 0;
                byte = 0;
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
    uint64_t cycles = 0, bytes_in = 0, bytes_out = 0, busy_in = 0, busy_out = 0, framing = 0;
};

struct Opts {
    std::string board = "icebreaker";
    double rate = 0.0;
    uint64_t seed = 1;
    bool fault_down = true, fault_up = true;
    std::string path_file, stats_file;
    uint64_t max_cycles = 0;
};

int usage(const char *argv0)
{
    std::fprintf(stderr,
                 "usage: %s [--board icebreaker|hx8k] [--faults RATE] [--fault-dir down|up|both] [--seed N]\n"
                 "          [--path-file FILE] [--stats FILE] [--max-cycles N]\n"
                 "Runs the board top (DMA engine on) behind a pseudo-terminal and prints\n"
                 "its path; serves the UART bridge until SIGINT/SIGTERM.\n"
                 "--faults RATE: probability per byte, each direction, of a fault\n"
                 "(a flipped bit, a dropped or duplicated byte, or an idle gap); --fault-dir\n"
                 "limits them to host->board (down) or board->host (up).\n",
                 argv0);
    return 2;
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
        if (a == "--board" && val(&v)) {
            o->board = v;
            if (o->board != "icebreaker" && o->board != "hx8k")
                return false;
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
            o->seed = std::strtoull(v, &end, 0);
            if (*end != '\0')
                return false;
        } else if (a == "--path-file" && val(&v)) {
            o->path_file = v;
        } else if (a == "--stats" && val(&v)) {
            o->stats_file = v;
        } else if (a == "--max-cycles" && val(&v)) {
            o->max_cycles = std::strtoull(v, &end, 0);
            if (*end != '\0')
                return false;
        } else {
            return false;
        }
    }
    return true;
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
    auto ctx = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Top>(ctx.get());
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
    std::string outbuf;
    uint64_t last_activity = 0;
    top->clk_12m = 0;
    top->uart_rx = 1;
    top->eval();
    while (!g_stop && (o.max_cycles == 0 || st.cycles < o.max_cycles)) {
        for (unsigned i = 0; i < SLICE; i++) {
            ser.tick();
            top->uart_rx = (uint8_t)ser.line;
            top->clk_12m = 0;
            top->eval();
            top->clk_12m = 1;
            top->eval();
            st.cycles++;
            if (ser.bit >= 0)
                st.busy_in++;
            int b = des.tick(top->uart_tx);
            if (des.active)
                st.busy_out++;
            if (b >= 0) {
                std::deque<int> tmp;
                unsigned gap = 0;
                up.apply((uint8_t)b, tmp, &gap);
                for (int x : tmp)
                    outbuf.push_back((char)x);
                st.bytes_out++;
                last_activity = st.cycles;
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
    top->final();
    if (!o.stats_file.empty()) {
        FILE *f = std::fopen(o.stats_file.c_str(), "w");
        if (f != nullptr) {
            std::fprintf(f,
                         "{\"board\": \"%s\", \"cycles\": %llu, \"bytes_in\": %llu, \"bytes_out\": %llu, "
                         "\"busy_in_cycles\": %llu, \"busy_out_cycles\": %llu, \"framing\": %llu, "
                         "\"faults_down\": {\"flip\": %llu, \"drop\": %llu, \"dup\": %llu, \"gap\": %llu}, "
                         "\"faults_up\": {\"flip\": %llu, \"drop\": %llu, \"dup\": %llu, \"gap\": %llu}}\n",
                         o.board.c_str(), (unsigned long long)st.cycles, (unsigned long long)st.bytes_in,
                         (unsigned long long)st.bytes_out, (unsigned long long)st.busy_in,
                         (unsigned long long)st.busy_out, (unsigned long long)st.framing,
                         (unsigned long long)down.flips, (unsigned long long)down.drops,
                         (unsigned long long)down.dups, (unsigned long long)down.gaps,
                         (unsigned long long)up.flips, (unsigned long long)up.drops,
                         (unsigned long long)up.dups, (unsigned long long)up.gaps);
            std::fclose(f);
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv)
{
    Opts o;
    if (!parse(argc, argv, &o))
        return usage(argv[0]);
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
    std::printf("gmc-board-sim: board %s (DMA engine on), faults %g seed %llu, pty %s\n", o.board.c_str(),
                o.rate, (unsigned long long)o.seed, path.c_str());
    std::fflush(stdout);
    int rc = o.board == "hx8k" ? serve<Vgmc_board_hx8k>(o, master) : serve<Vgmc_board_icebreaker>(o, master);
    close(keep);
    close(master);
    return rc;
}
