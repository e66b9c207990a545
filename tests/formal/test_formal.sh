#!/usr/bin/env bash
# Formal proofs of the bus ports (tools/formal.sh: BMC from reset, then
# k-induction, with yosys-smtbmc and z3), and seeded bugs each of which
# must make a named property fail. Prints "formal: N passed, M failed".
set -u
cd "$(dirname "$0")/../.."
pass=0; fail=0
prove() {
  if out=$(tools/formal.sh "$@" 2>&1); then pass=$((pass + 1)); else fail=$((fail + 1)); printf '%s\n' "$out"; fi
}
APERTURE_P="chparam -set PROT_RANGES 1 -set WINDOW_BYTES 8192 -set ID_WIDTH 2 -set VRAM_AW 10 gmc_aperture"
# AXI4-Lite register slave: no cap on the number of handshakes.
prove gmc_axil_regif 16
# AXI4 aperture slave. One protected range, a small window and narrow IDs
# keep the proof quick; they do not change the protocol logic. (The
# default parameters prove too, in about a minute.)
FORMAL_SRC="rtl/gmc_aperture.v rtl/gmc_aperture_chk.v" prove gmc_aperture 12 "$APERTURE_P"

# The aperture's burst checker (rtl/gmc_aperture_chk.v: its range compares
# at the window's width) equals the plain 34-bit definition
# (tests/formal/gmc_aperture_chk_ref.v) on every input: a SAT proof over a
# miter of the two, for the boards' 4 KiB window, the 2 MiB default, a
# window at a VRAM offset, one ending at 2^32 and one of 12 KiB (not a
# power of two). Two ranges: each range is
# the same logic, OR-ed. A seeded bug must make the proof fail.
#   equiv NAME CHK_FILE PARAMS EXPECT(pass|fail)
equiv() {
  local name=$1 chk=$2 params=$3 expect=$4 log=${BUILD:-build}/formal/equiv-$1.log
  mkdir -p "$(dirname "$log")"
  if yosys -q -l "$log" -p "read_verilog -Irtl $chk tests/formal/gmc_aperture_chk_ref.v; \
       chparam $params gmc_aperture_chk gmc_aperture_chk_ref; prep; \
       miter -equiv -flatten -make_outputs gmc_aperture_chk_ref gmc_aperture_chk miter; \
       hierarchy -top miter; sat -verify -prove trigger 0 -show-inputs miter" >/dev/null 2>&1; then
    got=pass
  else
    got=fail
  fi
  if [ "$got" = "$expect" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "equiv $name: expected the proof to $expect, it did $got ($log)"
  fi
}
equiv board rtl/gmc_aperture_chk.v "-set WINDOW_BYTES 4096 -set PROT_RANGES 2" pass
equiv default rtl/gmc_aperture_chk.v "-set WINDOW_BYTES 2097152 -set PROT_RANGES 2" pass
equiv offset rtl/gmc_aperture_chk.v "-set WINDOW_BYTES 8192 -set WINDOW_VRAM_BASE 32'h3000 -set PROT_RANGES 2" pass
equiv top rtl/gmc_aperture_chk.v "-set WINDOW_BYTES 4096 -set WINDOW_VRAM_BASE 32'hFFFFF000 -set PROT_RANGES 2" pass
equiv odd rtl/gmc_aperture_chk.v "-set WINDOW_BYTES 12288 -set PROT_RANGES 2" pass
chk_mut=${BUILD:-build}/formal/mutants/chk-base-gt/gmc_aperture_chk.v
mkdir -p "$(dirname "$chk_mut")"
sed -e 's/vhi >= (pb & LOW_MASK)/vhi > (pb \& LOW_MASK)/' rtl/gmc_aperture_chk.v > "$chk_mut"
if cmp -s rtl/gmc_aperture_chk.v "$chk_mut"; then
  fail=$((fail + 1)); echo "equiv chk-base-gt: the seeded edit changed nothing"
else
  equiv chk-base-gt "$chk_mut" "-set WINDOW_BYTES 4096 -set PROT_RANGES 2" fail
fi

# Seeded bugs: a copy of the module with one change (sed), whose BMC must
# fail on an assertion whose line contains TOKEN.
#   mutant NAME MODULE DEPTH PARAMS SED TOKEN
mutant() {
  local name=$1 mod=$2 depth=$3 params=$4 expr=$5 token=$6
  local dir=${BUILD:-build}/formal/mutants/$name
  mkdir -p "$dir"
  sed -e "$expr" "rtl/$mod.v" > "$dir/$mod.v"
  if cmp -s "rtl/$mod.v" "$dir/$mod.v"; then
    fail=$((fail + 1)); echo "mutant $name: the edit '$expr' changed nothing"; return
  fi
  local extra=""
  [ "$mod" = gmc_aperture ] && extra=rtl/gmc_aperture_chk.v  # its burst checker, unchanged
  FORMAL_SRC="$dir/$mod.v $extra" FORMAL_OUT=$dir tools/formal.sh "$mod" "$depth" "$params" 1 >"$dir/run.log" 2>&1
  local at ln line
  at=$(grep -o "Assert failed in $mod: [^ ]*" "$dir/bmc.log" | head -1)
  ln=$(printf '%s' "$at" | sed -E 's/.*-([0-9]+)\.[0-9]+$/\1/')  # the assertion's last line
  line=$([ -n "$ln" ] && sed -n "${ln}p" "$dir/$mod.v")
  if [ -n "$at" ] && printf '%s' "$line" | grep -q -- "$token"; then
    pass=$((pass + 1)); echo "mutant $name: caught by line $ln:$(printf '%s' "$line" | sed 's/^ *//')"
  else
    fail=$((fail + 1)); echo "mutant $name: not caught by a property with '$token' (${at:-BMC passed}: $line)"
  fi
}
# A write that is never answered (the deadlock the old properties passed).
mutant regif-no-b gmc_axil_regif 16 "" \
  's/assign reg_wr_en   = aw_full_reg \&\& w_full_reg \&\& !s_axil_bvalid;/assign reg_wr_en   = 1'"'"'b0;/' 'f_bwait'
mutant regif-exokay gmc_axil_regif 16 "" 's/s_axil_bresp <= reg_wr_resp;/s_axil_bresp <= 2'"'"'b01;/' "2'b01"
# Read data never presented (error bursts still answered).
mutant aperture-no-r gmc_aperture 12 "$APERTURE_P" \
  's/assign s_axi_rvalid = r_busy_reg \&\& (r_err_reg || r_cnt_reg != 2.d0);/assign s_axi_rvalid = r_busy_reg \&\& r_err_reg;/' 'F_MAX_WAIT'
# Write data never taken (error bursts still drained).
mutant aperture-no-w gmc_aperture 12 "$APERTURE_P" \
  's/assign s_axi_wready = w_data_phase \&\& (w_err_reg || vw_gnt);/assign s_axi_wready = w_data_phase \&\& w_err_reg;/' 'F_MAX_WAIT'
mutant aperture-exokay gmc_aperture 12 "$APERTURE_P" 's/RESP_DECERR : RESP_SLVERR;/RESP_DECERR : 2'"'"'b01;/' "2'b01"

# The DMA engine's AXI4 master (tests/formal/gmc_dma_formal.v): a bounded
# check from reset (BMC only; docs/fuzzing.md gives the depth reached).
DMA_FILES="gmc_dma gmc_dma_axi_rd_arb gmc_dma_check gmc_dma_core gmc_dma_fetch gmc_dma_fifo gmc_dma_rd gmc_dma_tagq gmc_dma_wr gmc_dma_xlate"
DMA_DEPTH=${GMC_FORMAL_DMA_DEPTH:-8}
dma_srcs() {  # the engine's files, one of them (maybe) replaced
  local swap=${1:-} with=${2:-} f out=""
  for f in $DMA_FILES; do
    if [ "$f" = "$swap" ]; then out="$out $with"; else out="$out rtl/$f.v"; fi
  done
  printf '%s tests/formal/gmc_dma_formal.v' "$out"
}
if out=$(FORMAL_SRC="$(dma_srcs)" FORMAL_OUT=${BUILD:-build}/formal/gmc_dma_formal \
         tools/formal.sh gmc_dma_formal "$DMA_DEPTH" "" 1 2>&1); then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); printf '%s\n' "$out"
fi
# Seeded bugs in the engine: rtl/FILE.v is edited, the BMC of HARNESS
# (tests/formal/HARNESS.v, its sources from SRCS FILE COPY) must fail on
# an assertion whose line contains TOKEN.
#   harness_mutant NAME HARNESS DEPTH SRCS FILE SED TOKEN
harness_mutant() {
  local name=$1 harness=$2 depth=$3 srcs=$4 file=$5 expr=$6 token=$7
  local dir=${BUILD:-build}/formal/mutants/$name
  mkdir -p "$dir"
  sed -e "$expr" "rtl/$file.v" > "$dir/$file.v"
  if cmp -s "rtl/$file.v" "$dir/$file.v"; then
    fail=$((fail + 1)); echo "mutant $name: the edit '$expr' changed nothing"; return
  fi
  FORMAL_SRC="$("$srcs" "$file" "$dir/$file.v")" FORMAL_OUT=$dir \
    tools/formal.sh "$harness" "$depth" "" 1 >"$dir/run.log" 2>&1
  local at ln line
  at=$(grep -o "Assert failed in $harness: [^ ]*" "$dir/bmc.log" | head -1)
  ln=$(printf '%s' "$at" | sed -E 's/.*-([0-9]+)\.[0-9]+$/\1/')
  line=$([ -n "$ln" ] && sed -n "${ln}p" "tests/formal/$harness.v")
  if [ -n "$at" ] && printf '%s' "$line" | grep -q -- "$token"; then
    pass=$((pass + 1)); echo "mutant $name: caught by line $ln:$(printf '%s' "$line" | sed 's/^ *//')"
  else
    fail=$((fail + 1)); echo "mutant $name: not caught by a property with '$token' (${at:-BMC passed}: $line)"
  fi
}
dma_mutant() {  # NAME FILE SED TOKEN
  harness_mutant "$1" gmc_dma_formal "$DMA_DEPTH" dma_srcs "$2" "$3" "$4"
}
# WRAP bursts on the read channel; read data refused (responses not consumed).
dma_mutant dma-wrap gmc_dma "s/assign m_axi_arburst = 2'd1;/assign m_axi_arburst = 2'd2;/" 'araddr'
dma_mutant dma-no-rready gmc_dma_axi_rd_arb "s/assign m_axi_rready = 1'b1;/assign m_axi_rready = 1'b0;/" 'rready'

# The write side alone (tests/formal/gmc_dma_wr_formal.v): its bursts come
# within a few cycles of reset, so the write-channel properties are
# reached (the cover()s must be, within the depth) and seeded write bugs
# are caught.
WR_DEPTH=${GMC_FORMAL_WR_DEPTH:-9}
wr_srcs() {  # gmc_dma_wr (or, with FILE COPY, the copy), its queue, the harness
  printf '%s rtl/gmc_dma_tagq.v tests/formal/gmc_dma_wr_formal.v' "${2:-rtl/gmc_dma_wr.v}"
}
if out=$(FORMAL_COVER=1 FORMAL_SRC="$(wr_srcs)" FORMAL_OUT=${BUILD:-build}/formal/gmc_dma_wr_formal \
         tools/formal.sh gmc_dma_wr_formal "$WR_DEPTH" "" 1 2>&1); then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); printf '%s\n' "$out"
fi
# Unbounded: k-induction of its AW properties (held, legal, IDs; AW_ONLY
# leaves out the W and B ones, which rest on the writer's queues and are
# proved by the BMC only).
if out=$(FORMAL_SRC="$(wr_srcs)" FORMAL_OUT=${BUILD:-build}/formal/gmc_dma_wr_ind \
         tools/formal.sh gmc_dma_wr_formal "$WR_DEPTH" "chparam -set AW_ONLY 1 gmc_dma_wr_formal" 2>&1); then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); printf '%s\n' "$out"
fi
wr_mutant() {  # NAME SED TOKEN
  harness_mutant "$1" gmc_dma_wr_formal "$WR_DEPTH" wr_srcs gmc_dma_wr "$2" "$3"
}
# WLAST one beat late; bursts cut at MAX_BURST beats from any word (so
# they run over the page's end); AWLEN one more than the beats sent.
wr_mutant wr-wlast "s/wlast    = (wk_reg == wq_beats - 9'd1);/wlast    = (wk_reg == wq_beats);/" 'wlast'
wr_mutant wr-4k "s/blk_left = MAX_BURST\[8:0\] - {{(9 - BL){1'b0}}, dpw_reg\[BL-1:0\]};/blk_left = MAX_BURST[8:0];/" '4096'
wr_mutant wr-awlen "s/awlen_reg <= beats\[7:0\] - 8'd1;/awlen_reg <= beats[7:0];/" 'awlen\|wlast'

# The read side alone (tests/formal/gmc_dma_rd_formal.v): the source
# reader's bursts behind the AR arbiter, among free requests of the other
# streams, within a few cycles of reset; the cover()s must be reached
# within the depth (a full data FIFO takes 10 cycles).
RD_DEPTH=${GMC_FORMAL_RD_DEPTH:-10}
rd_srcs() {  # gmc_dma_rd and the arbiter (or, with FILE COPY, a copy of one), the harness
  local rd=rtl/gmc_dma_rd.v arb=rtl/gmc_dma_axi_rd_arb.v
  [ "${1:-}" = gmc_dma_rd ] && rd=$2
  [ "${1:-}" = gmc_dma_axi_rd_arb ] && arb=$2
  printf '%s %s rtl/gmc_dma_tagq.v tests/formal/gmc_dma_rd_formal.v' "$rd" "$arb"
}
if out=$(FORMAL_COVER=1 FORMAL_SRC="$(rd_srcs)" FORMAL_OUT=${BUILD:-build}/formal/gmc_dma_rd_formal \
         tools/formal.sh gmc_dma_rd_formal "$RD_DEPTH" "" 1 2>&1); then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); printf '%s\n' "$out"
fi
# Unbounded: k-induction of its bus properties (AR held and legal, IDs,
# RREADY, only the reader's own beats taken; BUS_ONLY leaves out the data
# FIFO's, which rest on the reader's credit count, proved by the BMC only).
if out=$(FORMAL_SRC="$(rd_srcs)" FORMAL_OUT=${BUILD:-build}/formal/gmc_dma_rd_ind \
         tools/formal.sh gmc_dma_rd_formal "$RD_DEPTH" "chparam -set BUS_ONLY 1 gmc_dma_rd_formal" 2>&1); then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); printf '%s\n' "$out"
fi
rd_mutant() {  # NAME FILE SED TOKEN
  harness_mutant "$1" gmc_dma_rd_formal "$RD_DEPTH" rd_srcs "$2" "$3" "$4"
}
# Bursts cut at MAX_BURST beats from any word (over the page's end); a
# burst requested without room in the data FIFO for its beats; the ID's
# epoch fixed at 0; beats of any epoch routed to the reader.
rd_mutant rd-4k gmc_dma_rd "s/wire \[8:0\]  blk_left = MAX_BURST\[8:0\] - {{(9 - BL){1'b0}}, pw_reg\[BL-1:0\]};/wire [8:0]  blk_left = MAX_BURST[8:0];/" '4096'
rd_mutant rd-credit gmc_dma_rd "s/(b_beats_x <= credit_x) \&\& //" 'fifo_n'
rd_mutant rd-epoch gmc_dma_axi_rd_arb "s/arepoch_reg <= epoch;/arepoch_reg <= 2'd0;/" 'epoch'
rd_mutant rd-stale gmc_dma_axi_rd_arb "s/assign r_cur = m_axi_rvalid \&\& (m_axi_rid\[3:2\] == epoch);/assign r_cur = m_axi_rvalid;/" 'q_id'
echo "formal: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
