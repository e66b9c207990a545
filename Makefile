# gmc: FPGA-backed GPU memory controller and its host driver.
#
#   make run     build what is needed and run the main job on the simulated controller
#   make test    every test: generated-file freshness, lint, RTL and host tests (also under ASan/UBSan)
#   make bench   benchmarks into build/bench/results.json
#   make lint    Verilator -Wall and Icarus on the RTL
#   make gen     regenerate the views of spec/*.toml (tools/gen.py)
#   make clean   remove build/
#
# Everything built lands in $(BUILD). Two variants are built from the same
# sources: rel (optimised) and asan (AddressSanitizer + UBSan).

BUILD     ?= build
PYTHON    ?= python3
VERILATOR ?= verilator
IVERILOG  ?= iverilog
VVP       ?= vvp
YOSYS     ?= yosys
NEXTPNR   ?= nextpnr-ice40
ICEPACK   ?= icepack
CC        ?= cc
CXX       ?= g++
AR        ?= ar
PREFIX    ?= /usr/local
DESTDIR   ?=

VARIANTS := rel asan
# iCE40 boards under firmware/ (defined early: bench depends on their bitstreams).
FW_BOARDS := icebreaker hx8k
OPT_rel  := -O2
OPT_asan := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# Verilator's generated model and run-time library are third-party code:
# they get AddressSanitizer but not UBSan (the FST writer Verilator bundles
# does unaligned stores and shifts negative values). Our own code, the sim
# shim included, gets both.
VOPT_rel  := $(OPT_rel)
VOPT_asan := -O1 -fsanitize=address -fno-omit-frame-pointer
# Verilator's makefile appends its own -Os; these replace it.
VMAKE_rel  := OPT_FAST=-O2 OPT_GLOBAL=-O2 OPT_SLOW=-O1
VMAKE_asan := OPT_FAST=-O1 OPT_GLOBAL=-O1 OPT_SLOW=-O1

WARN     := -Wall -Wextra -Werror
CFLAGS_C := -std=c11 $(WARN) -g -MMD -MP -D_POSIX_C_SOURCE=200809L

# Layers (docs/architecture.md). Each compiles with only the include paths
# it may use, so an include that goes up or sideways does not compile; the
# table is tools/check_layers.py (which `make lint` also runs). Bottom up:
#   include/       the public API (generated gmc_regs.h, gmc_status.h, ...)
#   sim/           the Verilated model's C API (libgmc_sim)
#   hw/            hardware interface: packet encoders, the ring driver
#   host/common    device-free helpers: range allocator, status table
#   host/backend   backends (sim, pci, uart) and device strings
#   host/kmd       the driver for gmc hardware
#   host/vidmm     the device-independent memory manager, the public API
# cli/, examples/ and bench/ see the public API (and sim/, hw/ where they
# drive the hardware); tests/ sees everything.
layer_flags = $(shell $(PYTHON) tools/check_layers.py flags $(1))
INC_hw      := $(call layer_flags,hw)
INC_common  := $(call layer_flags,common)
INC_backend := $(call layer_flags,backend)
INC_kmd     := $(call layer_flags,kmd)
INC_vidmm   := $(call layer_flags,vidmm)
INC_cli     := $(call layer_flags,cli)
INC_sim     := $(call layer_flags,examples)
INC_bench   := $(call layer_flags,bench)
INC_tests   := $(call layer_flags,tests)
INC_train   := $(call layer_flags,sim/gmc_sim_train.c)
# Asked of Verilator when a recipe uses it, after tools/deps.sh has run.
VLT_ROOT = $(shell $(VERILATOR) --getenv VERILATOR_ROOT 2>/dev/null)

RTL      := $(sort $(wildcard rtl/*.v))
RTL_INC  := rtl/gmc_regs.vh rtl/gmc_defaults.vh rtl/gmc_dma_conn.vh rtl/gmc_dmu_ucode.vh
TOP      := gmc_top

# The simulator model is Verilated with segment straps (see docs/sim.md).
# -fno-case keeps case statements as written: Verilator's case-to-if-tree
# conversion copies a default branch into every leaf (gmc_regs' register
# write decode became ~300 delayed-assignment flags, set and tested every
# cycle).
VFLAGS := --cc --top-module $(TOP) -Irtl +define+GMC_SIM_STRAPS \
          --trace-fst -O3 --x-assign fast --x-initial fast -Wall -Wno-fatal \
          --no-timing -fno-case

SHIM_SRC  := sim/gmc_sim.cpp sim/gmc_axi_check.cpp
# Verilator's run-time library, compiled with the model's flags.
VLT_RUNTIME := verilated verilated_dpi verilated_fst_c verilated_threads
HOST_LAYERS := common backend kmd vidmm
# libgmc: the host layers plus the packet encoders (the ring driver,
# hw/gmc_dma_pkt.c, runs on the model and goes into tests and benches).
HOST_SRC  := $(foreach l,$(HOST_LAYERS),$(sort $(wildcard host/$(l)/*.c))) hw/gmc_pkt.c
HOST_OBJ   = $(patsubst %.c,$(BUILD)/$(1)/obj/%.o,$(HOST_SRC))
COMMON_SRC:= $(sort $(wildcard tests/common/*.c))
RTL_TESTS := $(sort $(wildcard tests/rtl/test_*.c))
HOST_TESTS:= $(sort $(wildcard tests/host/test_*.c))
# pci backend tests on a fake sysfs tree (tests/pci/fake_pci.c; need root + unshare -m, else skipped)
PCI_TESTS := $(sort $(wildcard tests/pci/test_*.c))

.PHONY: all run tour test bench lint gen check-gen clean deps-test deps-bench install
.DELETE_ON_ERROR:

all: $(BUILD)/rel/lib/libgmc_sim.a $(BUILD)/rel/lib/libgmc_sim.so $(BUILD)/rel/bin/gmc-sim-tour $(BUILD)/rel/bin/gmc

# ----------------------------------------------------------- dependencies
# Every goal but clean first makes sure the Debian packages it needs are
# installed (tools/deps.sh; through sudo when not root, or it stops with the
# exact command to run). The check is a makefile that make includes: make
# builds it, then reads the Makefile again, before it expands any rule, so
# no rule can ask for a tool (verilator, g++, yosys, ...) before the step
# that installs it. Variables that ask a tool (VLT_ROOT, PGO_GCC) are also
# expanded only when a recipe uses them. tests/build/test_fresh_make.sh
# tests this on a PATH where the tools appear only once deps.sh has run.
DEPS_BENCH_GOALS := bench firmware firmware-% flash test-fw test-fw-gate
ifneq ($(filter-out clean,$(or $(MAKECMDGOALS),all)),)
DEPS_SET := $(if $(filter $(DEPS_BENCH_GOALS),$(MAKECMDGOALS)),bench,$(if $(filter fuzz fuzz-build,$(MAKECMDGOALS)),fuzz,test))
include $(BUILD)/deps/$(DEPS_SET).mk
endif
$(BUILD)/deps/%.mk: tools/deps.sh
	@tools/deps.sh $*
	@mkdir -p $(@D) && echo "# tools/deps.sh $*: every package installed" > $@

deps-test:
	@tools/deps.sh test
deps-bench:
	@tools/deps.sh bench

# ------------------------------------------------------------ generation

# One tool (tools/gen.py), one loader of spec/*.toml (tools/gmc_spec.py),
# three renderers (tools/gen_spec.py, gen_host.py, gen_bridge.py).
GEN_TESTS  := $(sort $(wildcard tests/gen/test_*.py))

gen:
	$(PYTHON) tools/gen.py write

check-gen:
	@$(PYTHON) tools/gen.py check && echo "generated views: up to date"

# ------------------------------------------------------------------ lint

lint: deps-test
	$(PYTHON) tools/check_layers.py check
	$(VERILATOR) --lint-only -Wall -Irtl --top-module $(TOP) $(RTL)
	$(VERILATOR) --lint-only -Wall -Irtl --top-module $(TOP) +define+GMC_SIM_STRAPS $(RTL)
	$(VERILATOR) --lint-only -Wall -Irtl --top-module $(TOP) -GDMA_ENGINE=2 $(RTL)
	$(VERILATOR) --lint-only -Wall -Irtl --top-module $(TOP) -GDMA_ENGINE=0 $(RTL)
	$(VERILATOR) --lint-only -Wall -Irtl --top-module $(TOP) -GDMA_ENGINE=3 $(RTL)
	@mkdir -p $(BUILD)/lint
	$(IVERILOG) -g2005 -Wall -Wno-sensitivity-entire-array -Irtl -s $(TOP) -o $(BUILD)/lint/gmc_top.vvp $(RTL)
	$(IVERILOG) -g2005 -Wall -Wno-sensitivity-entire-array -Irtl -s $(TOP) -P$(TOP).DMA_ENGINE=2 \
	  -o $(BUILD)/lint/gmc_top_dmc.vvp $(RTL)
	@echo "$(YOSYS) ... proc; select -assert-none t:\$$dlatch   (no latches)"
	@$(YOSYS) -q -l $(BUILD)/lint/latches.log -p "read_verilog -Irtl $(RTL); hierarchy -top $(TOP); proc; select -assert-none t:\$$dlatch" \
	  >/dev/null 2>&1 || { grep -A5 -i "selection\|error" $(BUILD)/lint/latches.log; exit 1; }
	@$(YOSYS) -q -l $(BUILD)/lint/latches_dmc.log -p "read_verilog -Irtl $(RTL); chparam -set DMA_ENGINE 2 $(TOP); hierarchy -top $(TOP); proc; select -assert-none t:\$$dlatch" \
	  >/dev/null 2>&1 || { grep -A5 -i "selection\|error" $(BUILD)/lint/latches_dmc.log; exit 1; }
	@for b in $(FW_BOARDS); do \
	  echo "$(VERILATOR) --lint-only -Wall ... --top-module gmc_board_$$b"; \
	  $(VERILATOR) --lint-only -Wall -Irtl -Ifirmware/common --top-module gmc_board_$$b $(RTL) $(FW_COMMON) \
	    firmware/$$b/gmc_board_$$b.v || exit 1; \
	done
	@echo "lint: clean"

# ------------------------------------------------------------ sim library

# Verilate and compile the model (one run per variant). The release model
# is profile-guided (docs/sim.md, "Profile-guided build"): it is compiled
# with -fprofile-generate, sim/gmc_sim_train.c runs on it, and it is
# compiled again with -fprofile-use on the profile that run wrote. PGO=0
# skips that; so does a compiler other than GCC.
PGO ?= 1
PGO_GCC = $(shell $(CXX) -v 2>&1 | grep -q '^gcc version' && echo 1)
PGO_rel = $(and $(filter 1,$(PGO)),$(PGO_GCC))
VMODEL  := V$(TOP)__ALL.a $(VLT_RUNTIME:%=%.o)
# The model's hot code (OPT_FAST) and Verilator's run-time library
# (OPT_GLOBAL) get the profile flags; constructors and set-up (OPT_SLOW)
# do not.
vmake_pgo = OPT_FAST="-O2 $(1)" OPT_GLOBAL="-O2 $(1)" OPT_SLOW=-O1
vbuild = $(MAKE) -s -j 2 -C $(BUILD)/$(1)/vobj -f V$(TOP).mk $(2) $(VMODEL) >>$(BUILD)/$(1).verilator.log 2>&1 \
	  || { cat $(BUILD)/$(1).verilator.log; exit 1; }
TRAIN_SRC := sim/gmc_sim_train.c hw/gmc_dma_pkt.c hw/gmc_pkt.c

$(BUILD)/%/vobj/V$(TOP)__ALL.a: $(RTL) $(RTL_INC) Makefile tools/check_sched.py sim/gmc_sim_train.c | deps-test
	@rm -rf $(BUILD)/$*/vobj $(BUILD)/$*/pgo; mkdir -p $(BUILD)/$*
	$(VERILATOR) $(VFLAGS) $(VFLAGS_$*) -Mdir $(BUILD)/$*/vobj -CFLAGS "-fPIC $(VOPT_$*) -std=c++17" $(RTL) \
	  >$(BUILD)/$*.verilator.log 2>&1 || { cat $(BUILD)/$*.verilator.log; exit 1; }
	$(PYTHON) tools/check_sched.py $(SCHED_$*) $(BUILD)/$*/vobj
	$(if $(PGO_$*),$(call vbuild,$*,$(call vmake_pgo,-fprofile-generate=$(abspath $(BUILD)/$*/pgo) -fprofile-update=single)),$(call vbuild,$*,$(VMAKE_$*)))
	$(if $(PGO_$*),$(call pgo_train,$*))
	$(if $(PGO_$*),rm -f $(BUILD)/$*/vobj/*.o $(BUILD)/$*/vobj/*.a)
	$(if $(PGO_$*),$(call vbuild,$*,$(call vmake_pgo,-fprofile-use=$(abspath $(BUILD)/$*/pgo) -fprofile-partial-training -Wno-missing-profile)))
	cd $(BUILD)/$*/vobj && $(AR) rcs libverilated.a $(VLT_RUNTIME:%=%.o)

# The training run: the shim (not instrumented) and the trainer linked
# against the instrumented model; it writes the profile into pgo/.
define pgo_train
	@mkdir -p $(BUILD)/$(1)/pgo/obj
	$(CXX) -std=c++17 $(WARN) -Wno-unused-parameter -O2 -Iinclude -Isim -I$(BUILD)/$(1)/vobj -I$(VLT_ROOT)/include \
	  -I$(VLT_ROOT)/include/vltstd -c sim/gmc_sim.cpp -o $(BUILD)/$(1)/pgo/obj/gmc_sim.o
	$(CXX) -std=c++17 $(WARN) -O2 -Isim -c sim/gmc_axi_check.cpp -o $(BUILD)/$(1)/pgo/obj/gmc_axi_check.o
	$(CC) $(CFLAGS_C) $(INC_train) -O2 $(TRAIN_SRC) $(BUILD)/$(1)/pgo/obj/gmc_sim.o \
	  $(BUILD)/$(1)/pgo/obj/gmc_axi_check.o $(BUILD)/$(1)/vobj/V$(TOP)__ALL.a $(VLT_RUNTIME:%=$(BUILD)/$(1)/vobj/%.o) \
	  -o $(BUILD)/$(1)/pgo/gmc-sim-train -lgcov $(SIM_LIBS)
	$(BUILD)/$(1)/pgo/gmc-sim-train
endef

$(BUILD)/%/obj/gmc_sim.o: sim/gmc_sim.cpp sim/gmc_sim.h sim/gmc_sim_status.h sim/gmc_axi_check.h include/gmc_regs.h $(BUILD)/%/vobj/V$(TOP)__ALL.a
	@mkdir -p $(@D)
	$(CXX) -std=c++17 $(WARN) -Wno-unused-parameter -fPIC -g $(OPT_$*) -Iinclude -Isim \
	  -I$(BUILD)/$*/vobj -I$(VLT_ROOT)/include -I$(VLT_ROOT)/include/vltstd -c $< -o $@

$(BUILD)/%/obj/gmc_axi_check.o: sim/gmc_axi_check.cpp sim/gmc_axi_check.h
	@mkdir -p $(@D)
	$(CXX) -std=c++17 $(WARN) -fPIC -g $(OPT_$*) -Isim -c $< -o $@

$(BUILD)/%/lib/libgmc_sim.a: $(BUILD)/%/obj/gmc_sim.o $(BUILD)/%/obj/gmc_axi_check.o $(BUILD)/%/vobj/V$(TOP)__ALL.a
	@mkdir -p $(@D)
	@rm -f $@
	printf 'CREATE %s\nADDMOD %s\nADDMOD %s\nADDLIB %s\nADDLIB %s\nSAVE\nEND\n' $@ $< $(BUILD)/$*/obj/gmc_axi_check.o \
	  $(BUILD)/$*/vobj/V$(TOP)__ALL.a $(BUILD)/$*/vobj/libverilated.a | $(AR) -M

$(BUILD)/%/lib/libgmc_sim.so: $(BUILD)/%/obj/gmc_sim.o $(BUILD)/%/obj/gmc_axi_check.o $(BUILD)/%/vobj/V$(TOP)__ALL.a
	@mkdir -p $(@D)
	$(CXX) -shared $(OPT_$*) -o $@ $< $(BUILD)/$*/obj/gmc_axi_check.o -Wl,--whole-archive $(BUILD)/$*/vobj/V$(TOP)__ALL.a \
	  $(BUILD)/$*/vobj/libverilated.a -Wl,--no-whole-archive -lz -pthread

# libgmc's pci backend links libpciaccess (docs/pci.md).
HOST_LIBS := -lpciaccess
SIM_LIBS = -lz -pthread -lstdc++ -lm $(HOST_LIBS)

# Tests of the sim shim's C++ parts on their own (tests/sim/*.cpp).
SIM_TESTS := $(sort $(wildcard tests/sim/test_*.cpp))
define SIM_TEST_RULES
$(BUILD)/$(1)/tests/sim/%: tests/sim/%.cpp sim/gmc_axi_check.cpp sim/gmc_axi_check.h
	@mkdir -p $$(@D)
	$$(CXX) -std=c++17 $$(WARN) -g $(OPT_$(1)) -Isim $$< sim/gmc_axi_check.cpp -o $$@ -lcmocka

SIM_TEST_BINS_$(1) := $(patsubst tests/%.cpp,$(BUILD)/$(1)/tests/%,$(SIM_TESTS))
endef
$(foreach v,$(VARIANTS),$(eval $(call SIM_TEST_RULES,$(v))))

# ------------------------------------------------------------ host library

# One rule per variant and host layer, with that layer's include paths.
define LAYER_RULES
$(BUILD)/$(1)/obj/host/$(2)/%.o: host/$(2)/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_C) $$(INC_$(2)) $(OPT_$(1)) -fPIC -c $$< -o $$@
endef
$(foreach v,$(VARIANTS),$(foreach l,$(HOST_LAYERS),$(eval $(call LAYER_RULES,$(v),$(l)))))

define VARIANT_RULES
# Named here so make never treats them as disposable intermediates.
$(BUILD)/$(1)/lib/libgmc_sim.a $(BUILD)/$(1)/lib/libgmc_sim.so: $(BUILD)/$(1)/obj/gmc_sim.o $(BUILD)/$(1)/obj/gmc_axi_check.o $(BUILD)/$(1)/vobj/V$(TOP)__ALL.a

$(BUILD)/$(1)/obj/hw/%.o: hw/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_C) $$(INC_hw) $(OPT_$(1)) -fPIC -c $$< -o $$@

$(BUILD)/$(1)/obj/common/%.o: tests/common/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_C) $$(INC_tests) $(OPT_$(1)) -c $$< -o $$@

$(BUILD)/$(1)/lib/libgmc.a: $(call HOST_OBJ,$(1))
	@mkdir -p $$(@D)
	@rm -f $$@
	$$(AR) rcs $$@ $$^

$(BUILD)/$(1)/tests/%: tests/%.c $(patsubst tests/common/%.c,$(BUILD)/$(1)/obj/common/%.o,$(COMMON_SRC)) \
                       $(BUILD)/$(1)/obj/hw/gmc_dma_pkt.o $(BUILD)/$(1)/lib/libgmc.a $(BUILD)/$(1)/lib/libgmc_sim.a
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_C) $$(INC_tests) $(OPT_$(1)) $$< $$(filter %.o,$$^) -o $$@ \
	  $(BUILD)/$(1)/lib/libgmc.a $(BUILD)/$(1)/lib/libgmc_sim.a -lcmocka $$(SIM_LIBS) -lm

$(BUILD)/$(1)/tests/pci/%: tests/pci/%.c tests/pci/fake_pci.c tests/pci/fake_pci.h \
                           $(BUILD)/$(1)/lib/libgmc.a $(BUILD)/$(1)/lib/libgmc_sim.a
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_C) $$(INC_tests) -Itests/pci $(OPT_$(1)) $$< tests/pci/fake_pci.c -o $$@ \
	  $(BUILD)/$(1)/lib/libgmc.a $(BUILD)/$(1)/lib/libgmc_sim.a -lcmocka $$(SIM_LIBS) -lm

TEST_BINS_$(1) := $(patsubst tests/%.c,$(BUILD)/$(1)/tests/%,$(RTL_TESTS) $(HOST_TESTS) $(PCI_TESTS))
endef
$(foreach v,$(VARIANTS),$(eval $(call VARIANT_RULES,$(v))))

# The compact DMA engine (gmc_dmc, DMA_ENGINE=2, docs/dma.md) gets a model
# of its own, variant cmp (optimised like rel, no profile-guided build),
# on which the DMA and paging tests run again (CMP_TESTS).
OPT_cmp   := $(OPT_rel)
VOPT_cmp  := $(OPT_rel)
VMAKE_cmp := $(VMAKE_rel)
VFLAGS_cmp := -GDMA_ENGINE=2
$(eval $(call VARIANT_RULES,cmp))
$(foreach l,$(HOST_LAYERS),$(eval $(call LAYER_RULES,cmp,$(l))))
CMP_TESTS := $(patsubst %,$(BUILD)/cmp/tests/%,rtl/test_dma_xfer rtl/test_dma_ring rtl/test_dma_fault rtl/test_dma_gate \
             rtl/test_dma_random host/test_paging host/test_resid host/test_power host/test_tdr)

# The micro-sequenced engine (gmc_dmu, DMA_ENGINE=3, docs/dma.md) gets a
# model of its own, variant mic, on which its integration test and the DMA
# and paging tests run again (MIC_TESTS): the cmp list but for
# host/test_resid, which passes but takes about 15 minutes on this model
# (over run_tests.sh's 900 s).
OPT_mic   := $(OPT_rel)
VOPT_mic  := $(OPT_rel)
VMAKE_mic := $(VMAKE_rel)
VFLAGS_mic := -GDMA_ENGINE=3
$(eval $(call VARIANT_RULES,mic))
$(foreach l,$(HOST_LAYERS),$(eval $(call LAYER_RULES,mic,$(l))))
MIC_TESTS := $(patsubst %,$(BUILD)/mic/tests/%,rtl_dmu/test_dmu_top rtl/test_dma_xfer rtl/test_dma_ring rtl/test_dma_fault \
             rtl/test_dma_gate rtl/test_dma_random host/test_paging host/test_power host/test_tdr)

# The scheduler shortcut's fallback (docs/sim.md, The cycle): variant evl
# is the release model built with check_sched.py --force-eval, so the shim
# runs the plain eval() as it would under another Verilator version; the
# DMA tests (exact cycle counts) and a paging test run on it again, and
# tests/sim/test_sched_fallback.sh checks which way each model was built.
OPT_evl   := $(OPT_rel)
VOPT_evl  := $(OPT_rel)
VMAKE_evl := $(VMAKE_rel)
SCHED_evl := --force-eval
$(eval $(call VARIANT_RULES,evl))
$(foreach l,$(HOST_LAYERS),$(eval $(call LAYER_RULES,evl,$(l))))
EVL_TESTS := $(patsubst %,$(BUILD)/evl/tests/%,rtl/test_regs rtl/test_dma_xfer rtl/test_dma_ring host/test_paging)

# The pci backend against the real RTL (tests/pci/test_pci_rtl.sh): the
# trap harness (an LD_PRELOAD library over libgmc_sim.so), the fake-tree
# runner and the workload, release build only (the harness single-steps
# the program under test, which AddressSanitizer's own handlers forbid).
PCI_RTL_BINS := $(BUILD)/rel/tests/pci/pci_trap.so $(BUILD)/rel/tests/pci/fakepci-run $(BUILD)/rel/tests/pci/pci-workload

$(BUILD)/rel/tests/pci/pci_trap.so: tests/pci/pci_trap.c $(BUILD)/rel/lib/libgmc_sim.so
	@mkdir -p $(@D)
	$(CC) -std=c11 $(WARN) -g -O2 -fPIC -shared -Iinclude -Isim $< -o $@ -L$(BUILD)/rel/lib -lgmc_sim \
	  -Wl,-rpath,$(abspath $(BUILD)/rel/lib) -ldl

$(BUILD)/rel/tests/pci/fakepci-run: tests/pci/fakepci_run.c tests/pci/fake_pci.c tests/pci/fake_pci.h include/gmc_regs.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_C) $(INC_tests) -Itests/pci -O2 $< tests/pci/fake_pci.c -o $@

$(BUILD)/rel/tests/pci/pci-workload: tests/pci/pci_workload.c $(BUILD)/rel/lib/libgmc.a $(BUILD)/rel/lib/libgmc_sim.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_C) $(INC_tests) -O2 $< -o $@ $(BUILD)/rel/lib/libgmc.a $(BUILD)/rel/lib/libgmc_sim.a $(SIM_LIBS)

# Shared test objects are kept between runs (make would delete them as
# intermediates, after the test summary).
.SECONDARY: $(foreach v,$(VARIANTS),$(patsubst tests/common/%.c,$(BUILD)/$(v)/obj/common/%.o,$(COMMON_SRC)) \
               $(BUILD)/$(v)/obj/hw/gmc_dma_pkt.o)

# (build/fresh holds tools/fresh_machine.sh's chroot: not ours.)
-include $(shell find $(BUILD) -path $(BUILD)/fresh -prune -o -name '*.d' -type f -print 2>/dev/null)

# --------------------------------------------------------------- programs

$(BUILD)/rel/bin/gmc-sim-tour: examples/sim_tour.c $(BUILD)/rel/lib/libgmc_sim.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_C) $(INC_sim) -O2 $< -o $@ $(BUILD)/rel/lib/libgmc_sim.a $(SIM_LIBS)

# ------------------------------------------------------- board simulation

# The DMA engine each board's bitstream carries (enum DMA_ENGINE: 0 none,
# 1 full, 2 compact, 3 micro-sequenced). One place for both users: make
# firmware passes it to the board top (chparam, below), and gmc-board-sim
# runs that board's top with the same engine by default, so the simulation
# and the image cannot disagree. The iCEBreaker's UP5K has no room for any
# engine (docs/boards.md); the HX8K carries the micro-sequenced one.
FW_ENGINE_icebreaker  := 0
FW_ENGINE_hx8k        := 3
DMA_ENGINE_NAME_0 := none
DMA_ENGINE_NAME_1 := full
DMA_ENGINE_NAME_2 := compact
DMA_ENGINE_NAME_3 := micro

# gmc-board-sim (docs/board-sim.md): each board top of firmware/, UART
# bridge included, Verilated behind a pseudo-terminal, one model per board
# and engine: Vgmc_board_<board>_<engine>. A board's default model has its
# bitstream's engine; a bitstream without one (the iCEBreaker's) gets the
# compact engine instead, labelled simulation-only, so that paging runs over
# the link. Besides: the iCEBreaker with the full engine (bursts of up to 32
# beats: what the link carries when the engine streams, make bench's
# uart_dma_*_fraction_full figures) and the HX8K with the compact one (to
# compare with its micro-sequenced engine), both simulation-only.
# Release build only: it is a server the tests start.
BOARD_SIM_TOPS := icebreaker hx8k
board_sim_default = $(if $(filter 0,$(FW_ENGINE_$(1))),2,$(FW_ENGINE_$(1)))
BOARD_SIM_MODELS := $(foreach b,$(BOARD_SIM_TOPS),$(b)_$(DMA_ENGINE_NAME_$(call board_sim_default,$(b))))
BOARD_SIM_MODELS += $(filter-out $(BOARD_SIM_MODELS),icebreaker_full hx8k_compact)
BOARD_FW_COMMON := $(sort $(wildcard firmware/common/*.v))
# sim/board/gmc_board_sim.vlt makes the POR counter and the bridge's UART
# byte ports public (board reset, --link byte); --trace-fst for --trace.
BOARD_VFLAGS := --cc -Irtl -Ifirmware/common -O3 --x-assign fast --x-initial fast -Wall -Wno-fatal --no-timing -fno-case \
                --trace-fst sim/board/gmc_board_sim.vlt

# $(1) board, $(2) engine name, $(3) engine number.
define BOARD_SIM_RULES
$$(BUILD)/board/$(1)_$(2)/vobj/Vgmc_board_$(1)_$(2)__ALL.a: firmware/$(1)/gmc_board_$(1).v $$(BOARD_FW_COMMON) firmware/common/gmc_bridge.vh $$(RTL) $$(RTL_INC) sim/board/gmc_board_sim.vlt | deps-test
	@rm -rf $$(BUILD)/board/$(1)_$(2); mkdir -p $$(BUILD)/board/$(1)_$(2)
	$$(VERILATOR) $$(BOARD_VFLAGS) -GDMA_ENGINE=$(3) --prefix Vgmc_board_$(1)_$(2) --top-module gmc_board_$(1) -Mdir $$(@D) \
	  -CFLAGS "-O2 -std=c++17" $$(RTL) $$(BOARD_FW_COMMON) $$< >$$(BUILD)/board/$(1)_$(2)/verilator.log 2>&1 \
	  || { cat $$(BUILD)/board/$(1)_$(2)/verilator.log; exit 1; }
	$$(MAKE) -s -j 2 -C $$(@D) -f Vgmc_board_$(1)_$(2).mk OPT_FAST=-O2 OPT_GLOBAL=-O2 OPT_SLOW=-O1 \
	  Vgmc_board_$(1)_$(2)__ALL.a verilated.o verilated_threads.o verilated_fst_c.o >>$$(BUILD)/board/$(1)_$(2)/verilator.log 2>&1 \
	  || { cat $$(BUILD)/board/$(1)_$(2)/verilator.log; exit 1; }
endef
$(foreach m,$(BOARD_SIM_MODELS),$(eval $(call BOARD_SIM_RULES,$(word 1,$(subst _, ,$(m))),$(word 2,$(subst _, ,$(m))),$(strip \
  $(foreach n,0 1 2 3,$(if $(filter $(word 2,$(subst _, ,$(m))),$(DMA_ENGINE_NAME_$(n))),$(n)))))))

# The list of models and the bitstreams' engines, for gmc_board_sim.cpp
# (rewritten only when it changes).
$(BUILD)/board/gmc_board_models.h: FORCE
	@mkdir -p $(@D)
	@{ echo '// Generated by the Makefile (board simulation): do not edit.'; \
	  for m in $(BOARD_SIM_MODELS); do echo "#include \"Vgmc_board_$$m.h\""; echo "#include \"Vgmc_board_$${m}___024root.h\""; done; \
	  for m in $(BOARD_SIM_MODELS); do echo "GMC_BOARD_MODEL(Vgmc_board_$$m, gmc_board_$${m%_*}, $${m%_*}, $${m#*_})"; done; \
	  $(foreach b,$(BOARD_SIM_TOPS),echo '#define GMC_FW_ENGINE_$(b) "$(DMA_ENGINE_NAME_$(FW_ENGINE_$(b)))"';) } >$@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
FORCE:
.PHONY: FORCE

BOARD_SIM_LIBS := $(foreach m,$(BOARD_SIM_MODELS),$(BUILD)/board/$(m)/vobj/Vgmc_board_$(m)__ALL.a)
BOARD_SIM_VLT_OBJ := $(foreach o,verilated verilated_threads verilated_fst_c,$(BUILD)/board/$(firstword $(BOARD_SIM_MODELS))/vobj/$(o).o)
$(BUILD)/rel/bin/gmc-board-sim: sim/board/gmc_board_sim.cpp include/gmc_bridge.h $(BUILD)/board/gmc_board_models.h $(BOARD_SIM_LIBS)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 $(WARN) -Wno-unused-parameter -O2 -g -Iinclude -I$(BUILD)/board $(foreach m,$(BOARD_SIM_MODELS),-I$(BUILD)/board/$(m)/vobj) \
	  -I$(VLT_ROOT)/include -I$(VLT_ROOT)/include/vltstd $< $(BOARD_SIM_LIBS) $(BOARD_SIM_VLT_OBJ) -o $@ -pthread -lz

board-sim: $(BUILD)/rel/bin/gmc-board-sim
.PHONY: board-sim

# ------------------------------------------------------------ gmc command

# The gmc command (docs/cli.md): cli/*.c over libgmc. Its parser and report
# writers are also linked into the tests/cli programs.
CLI_SRC     := $(sort $(wildcard cli/*.c))
CLI_LIB_SRC := $(filter-out cli/main.c,$(CLI_SRC))
CLI_TESTS   := $(sort $(wildcard tests/cli/test_*.c))
CLI_SCRIPT_TESTS := $(sort $(wildcard tests/cli/test_*.py))
# The trace parser (cli/trace*.c, entry point cli/trace.h), also linked
# into the fuzz harnesses.
TRACE_SRC   := $(sort $(wildcard cli/trace*.c))

define CLI_RULES
$(BUILD)/$(1)/obj/cli/%.o: cli/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_C) $$(INC_cli) $(OPT_$(1)) -c $$< -o $$@

$(BUILD)/$(1)/bin/gmc: $(patsubst cli/%.c,$(BUILD)/$(1)/obj/cli/%.o,$(CLI_SRC)) \
                       $(BUILD)/$(1)/lib/libgmc.a $(BUILD)/$(1)/lib/libgmc_sim.a
	@mkdir -p $$(@D)
	$$(CC) $(OPT_$(1)) $$(filter %.o,$$^) -o $$@ $(BUILD)/$(1)/lib/libgmc.a $(BUILD)/$(1)/lib/libgmc_sim.a $$(SIM_LIBS)

$(BUILD)/$(1)/tests/cli/%: tests/cli/%.c $(patsubst cli/%.c,$(BUILD)/$(1)/obj/cli/%.o,$(CLI_LIB_SRC)) \
                           $(BUILD)/$(1)/lib/libgmc.a $(BUILD)/$(1)/lib/libgmc_sim.a
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_C) $$(INC_tests) $(OPT_$(1)) $$< $$(filter %.o,$$^) -o $$@ \
	  $(BUILD)/$(1)/lib/libgmc.a $(BUILD)/$(1)/lib/libgmc_sim.a -lcmocka $$(SIM_LIBS)

CLI_TEST_BINS_$(1) := $(patsubst tests/%.c,$(BUILD)/$(1)/tests/%,$(CLI_TESTS))
endef
$(foreach v,$(VARIANTS),$(eval $(call CLI_RULES,$(v))))

# ------------------------------------------------------------------- fuzz
# libFuzzer harnesses (tests/fuzz/fuzz_*.c, docs/fuzzing.md).
#   make fuzz [FUZZ_SECONDS=60]   build them with clang and run each for FUZZ_SECONDS;
#                                 new inputs go to build/fuzz/corpus/NAME, crashes to
#                                 build/fuzz/crashes/NAME (copy them to tests/fuzz/crashes/NAME)
# make test links the same harnesses with tests/fuzz/replay.c (rel and asan) and
# replays tests/fuzz/corpus/NAME and tests/fuzz/crashes/NAME.
FUZZ_CC      ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS   = $(filter-out -MMD -MP,$(CFLAGS_C)) $(INC_tests) -Itests/fuzz -g -O1 $(FUZZ_SAN)
FUZZ_NAMES   := $(patsubst tests/fuzz/%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
# The library, the parser and the DMA reference model, built with clang and
# coverage instrumentation; the Verilated model is the rel one (gcc, not
# instrumented: it is C++ behind a C API and linked as it is).
FUZZ_SRC     := $(HOST_SRC) $(TRACE_SRC) tests/common/gmc_dma_ref.c hw/gmc_dma_pkt.c tests/common/gmc_dma_gen.c
FUZZ_OBJ     := $(FUZZ_SRC:%.c=$(BUILD)/fuzz/obj/%.o)

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(BUILD)/fuzz/bin/%: $(BUILD)/fuzz/obj/tests/fuzz/%.o $(FUZZ_OBJ) $(BUILD)/rel/lib/libgmc_sim.a
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer $< $(FUZZ_OBJ) -o $@ $(BUILD)/rel/lib/libgmc_sim.a $(SIM_LIBS)

.PHONY: fuzz fuzz-build deps-fuzz
deps-fuzz:
	@tools/deps.sh fuzz
fuzz-build: deps-fuzz $(FUZZ_NAMES:%=$(BUILD)/fuzz/bin/%)

fuzz: fuzz-build
	@for h in $(FUZZ_NAMES); do \
	  mkdir -p $(BUILD)/fuzz/corpus/$$h $(BUILD)/fuzz/crashes/$$h; \
	  echo "fuzz: $$h for $(FUZZ_SECONDS) s"; \
	  $(BUILD)/fuzz/bin/$$h -max_total_time=$(FUZZ_SECONDS) -timeout=60 -rss_limit_mb=4096 -print_final_stats=1 \
	    -artifact_prefix=$(BUILD)/fuzz/crashes/$$h/ $(BUILD)/fuzz/corpus/$$h tests/fuzz/corpus/$$h \
	    >$(BUILD)/fuzz/$$h.log 2>&1 || { tail -40 $(BUILD)/fuzz/$$h.log; exit 1; }; \
	  grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' $(BUILD)/fuzz/$$h.log | tail -2; \
	done; echo "fuzz: no crashes"

define FUZZ_REPLAY_RULES
$(BUILD)/$(1)/tests/fuzz/%: tests/fuzz/%.c tests/fuzz/replay.c tests/fuzz/fuzz.h \
                            $(BUILD)/$(1)/obj/common/gmc_dma_ref.o $(BUILD)/$(1)/obj/hw/gmc_dma_pkt.o $(BUILD)/$(1)/obj/common/gmc_dma_gen.o \
                            $(patsubst cli/%.c,$(BUILD)/$(1)/obj/cli/%.o,$(TRACE_SRC)) $(BUILD)/$(1)/lib/libgmc.a $(BUILD)/$(1)/lib/libgmc_sim.a
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_C) $$(INC_tests) -Itests/fuzz $(OPT_$(1)) -DFUZZ_NAME='"$$*"' $$< tests/fuzz/replay.c \
	  $$(filter %.o,$$^) -o $$@ $(BUILD)/$(1)/lib/libgmc.a $(BUILD)/$(1)/lib/libgmc_sim.a $$(SIM_LIBS)

FUZZ_REPLAY_BINS_$(1) := $(FUZZ_NAMES:%=$(BUILD)/$(1)/tests/fuzz/%)
endef
$(foreach v,$(VARIANTS),$(eval $(call FUZZ_REPLAY_RULES,$(v))))

# -------------------------------------------------------------------- run

# The frame-loop example on the simulated controller, with its report.
# `make tour` is the register-level tour of the model (examples/sim_tour.c).
RUN_WORKLOAD ?= examples/frame_loop.trace
run: deps-test $(BUILD)/rel/bin/gmc
	$(BUILD)/rel/bin/gmc run $(RUN_WORKLOAD) --report $(BUILD)/run

tour: deps-test $(BUILD)/rel/bin/gmc-sim-tour
	$(BUILD)/rel/bin/gmc-sim-tour

# ------------------------------------------------------------------- test

# The cross-check compiles every generated constant with the C compiler and
# with Icarus and compares what each prints.
$(BUILD)/xcheck/ok: spec/gmc.toml tools/gen.py tools/gmc_spec.py tools/gen_spec.py include/gmc_regs.h rtl/gmc_regs.vh rtl/gmc_defaults.vh
	@mkdir -p $(@D)
	$(PYTHON) tools/gen.py crosscheck $(@D)
	$(CC) -std=c11 $(WARN) -Iinclude $(@D)/xcheck.c -o $(@D)/xcheck_c
	$(IVERILOG) -g2005 -Irtl -o $(@D)/xcheck_v $(@D)/xcheck.v
	$(@D)/xcheck_c > $(@D)/c.txt
	$(VVP) -n $(@D)/xcheck_v | grep -v '\$$finish' > $(@D)/v.txt
	diff -u $(@D)/c.txt $(@D)/v.txt
	@echo "C and Verilog views agree on $$(wc -l < $(@D)/c.txt) constants"
	@touch $@

# Script tests print their own "name: N passed, M failed" line.
# The bridge testbench is a vvp script (#! /usr/bin/vvp).
SCRIPT_TESTS = $(GEN_TESTS) tests/lint/test_check_layers.py tests/build/test_fresh_make.sh tests/install/test_install.sh tests/pci/test_pci_rtl.sh tests/formal/test_formal.sh $(BUILD)/fw/tb/tb_fw_bridge.vvp \
               $(BUILD)/fw/tb/tb_dmu_smoke.vvp
# The CLI script tests run $(BUILD)/rel/bin/gmc and $(BUILD)/asan/bin/gmc.
SCRIPT_TESTS += $(CLI_SCRIPT_TESTS)
# The board path end to end: gmc over uart:<pty> against gmc-board-sim.
SCRIPT_TESTS += tests/board/test_board_link.py
# The HX8K with its bitstream's micro-sequenced engine over the link.
SCRIPT_TESTS += tests/board/test_board_hx8k.py
# Resets: the host killed mid-run, the board reset mid-run (docs/board-sim.md).
SCRIPT_TESTS += tests/board/test_board_reset.py
# The board images' report (tools/fpga_report.py) on hand-written nextpnr reports.
SCRIPT_TESTS += tests/fw/test_fpga_report.py
# The eviction benchmark's offline optimum (bench/evict_opt.py, Debian's python3-scipy).
SCRIPT_TESTS += tests/bench/test_evict_opt.py
# Relocation in the eviction benchmark's replica (bench/evict_breakdown.py).
SCRIPT_TESTS += tests/bench/test_evict_reloc.py
# Which way the release and evl models step the clock (the shortcut or eval()).
SCRIPT_TESTS += tests/sim/test_sched_fallback.sh

test: deps-test check-gen lint $(BUILD)/xcheck/ok $(TEST_BINS_rel) $(TEST_BINS_asan) $(SIM_TEST_BINS_rel) $(SIM_TEST_BINS_asan) \
      $(CLI_TEST_BINS_rel) $(CLI_TEST_BINS_asan) $(BUILD)/rel/bin/gmc $(BUILD)/asan/bin/gmc \
      $(BUILD)/rel/lib/libgmc_sim.so $(BUILD)/fw/tb/tb_fw_bridge.vvp $(BUILD)/fw/tb/tb_dmu_smoke.vvp $(PCI_RTL_BINS) $(BUILD)/rel/bin/gmc-board-sim \
      $(FUZZ_REPLAY_BINS_rel) $(FUZZ_REPLAY_BINS_asan) $(CMP_TESTS) $(EVL_TESTS) $(MIC_TESTS)
	@BUILD=$(BUILD) ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  tools/run_tests.sh $(SCRIPT_TESTS) $(TEST_BINS_rel) $(TEST_BINS_asan) $(SIM_TEST_BINS_rel) $(SIM_TEST_BINS_asan) \
	  $(CLI_TEST_BINS_rel) $(CLI_TEST_BINS_asan) $(FUZZ_REPLAY_BINS_rel) $(FUZZ_REPLAY_BINS_asan) $(CMP_TESTS) \
	  $(EVL_TESTS) $(MIC_TESTS)

# ------------------------------------------------------------------- soak
# 10^6 seeded random DMA packets against the reference model, with random
# doorbells, resets and host-memory errors (tests/rtl/test_dma_soak.c; make
# test runs 10^4 of them). SOAK_PACKETS and SOAK_SEED override.
SOAK_PACKETS ?= 1000000
SOAK_SEED    ?= 18
.PHONY: soak
soak: deps-test $(BUILD)/rel/tests/rtl/test_dma_soak
	GMC_SOAK_PACKETS=$(SOAK_PACKETS) GMC_SOAK_SEED=$(SOAK_SEED) $(BUILD)/rel/tests/rtl/test_dma_soak

# ------------------------------------------------------------------ bench

$(BUILD)/rel/bin/bench-sim: bench/bench_sim.c $(BUILD)/rel/lib/libgmc_sim.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_C) $(INC_bench) -O2 $< -o $@ $(BUILD)/rel/lib/libgmc_sim.a $(SIM_LIBS)

$(BUILD)/rel/bin/bench-alloc: bench/bench_alloc.c host/common/gmc_range.c host/common/gmc_range.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_C) $(call layer_flags,bench/bench_alloc.c) -O2 bench/bench_alloc.c host/common/gmc_range.c -o $@

$(BUILD)/bench/tb_bench.vvp: bench/tb_bench.v $(RTL) $(RTL_INC)
	@mkdir -p $(@D)
	$(IVERILOG) -g2005 -Irtl -s tb_bench -o $@ bench/tb_bench.v $(RTL)

$(BUILD)/rel/bin/bench-api: bench/bench_api.c $(BUILD)/rel/lib/libgmc.a $(BUILD)/rel/lib/libgmc_sim.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_C) $(call layer_flags,bench/bench_api.c) -O2 $< -o $@ $(BUILD)/rel/lib/libgmc.a $(BUILD)/rel/lib/libgmc_sim.a $(SIM_LIBS)

$(BUILD)/rel/bin/bench-dma: bench/bench_dma.c hw/gmc_dma_pkt.c hw/gmc_pkt.c $(BUILD)/rel/lib/libgmc_sim.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_C) $(INC_bench) -O2 $< hw/gmc_dma_pkt.c hw/gmc_pkt.c -o $@ $(BUILD)/rel/lib/libgmc_sim.a $(SIM_LIBS)

$(BUILD)/rel/bin/bench-evict: bench/bench_evict.c $(BUILD)/rel/lib/libgmc.a $(BUILD)/rel/lib/libgmc_sim.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_C) $(call layer_flags,bench/bench_evict.c) -O2 $< -o $@ $(BUILD)/rel/lib/libgmc.a $(BUILD)/rel/lib/libgmc_sim.a $(SIM_LIBS)

# The same DMA bench on the compact and micro-sequenced engines' models
# (dma_compact_*, dma_micro_* figures).
$(BUILD)/cmp/bin/bench-dma $(BUILD)/mic/bin/bench-dma: $(BUILD)/%/bin/bench-dma: bench/bench_dma.c hw/gmc_dma_pkt.c hw/gmc_pkt.c $(BUILD)/%/lib/libgmc_sim.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_C) $(INC_bench) -O2 $< hw/gmc_dma_pkt.c hw/gmc_pkt.c -o $@ $(BUILD)/$*/lib/libgmc_sim.a $(SIM_LIBS)

# The compact engine synthesised alone (yosys synth_ice40) at the HX8K
# board's parameters: dma_compact_lut4.
$(BUILD)/fw/dmc/yosys.log: rtl/gmc_dmc.v rtl/gmc_dmc_range.v rtl/gmc_dma_check.v rtl/gmc_clk_gate.v $(RTL_INC)
	@mkdir -p $(@D)
	$(YOSYS) -q -l $@.tmp -p 'read_verilog -Irtl rtl/gmc_dmc.v rtl/gmc_dmc_range.v rtl/gmc_dma_check.v rtl/gmc_clk_gate.v; chparam -set VRAM_BYTES 8192 -set APERTURE_PAGES 256 gmc_dmc; synth_ice40 -top gmc_dmc; stat' >/dev/null
	mv $@.tmp $@

# The micro-sequenced engine (gmc_dmu) synthesised alone at the HX8K board's parameters and packed
# (nextpnr-ice40 --pack-only) for its logic-cell count: make dmu-size.
.PHONY: dmu-size
dmu-size: $(BUILD)/fw/dmu/pack.log
	@grep 'SB_\|cells' $(BUILD)/fw/dmu/stat.txt
	@grep -h 'ICESTORM_LC:\|ICESTORM_RAM:' $<
$(BUILD)/fw/dmu/pack.log: rtl/gmc_dmu.v rtl/gmc_dmu_rf.v rtl/gmc_dmu_rom.v rtl/gmc_clk_gate.v rtl/gmc_dmu_ucode.vh $(RTL_INC)
	@mkdir -p $(@D)
	$(YOSYS) -q -l $(@D)/yosys.log -p 'read_verilog -Irtl rtl/gmc_dmu.v rtl/gmc_dmu_rf.v rtl/gmc_dmu_rom.v rtl/gmc_clk_gate.v; chparam -set VRAM_BYTES 8192 gmc_dmu; synth_ice40 -top gmc_dmu -json $(@D)/gmc_dmu.json; tee -o $(@D)/stat.txt stat' >/dev/null
	$(NEXTPNR) --hx8k --package ct256 --json $(@D)/gmc_dmu.json --pack-only -l $@.tmp -q
	grep -q 'ICESTORM_LC:' $@.tmp
	mv $@.tmp $@

$(BUILD)/rel/bin/bench-resid: bench/bench_resid.c $(BUILD)/rel/lib/libgmc.a $(BUILD)/rel/lib/libgmc_sim.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_C) $(INC_bench) -O2 $< -o $@ $(BUILD)/rel/lib/libgmc.a $(BUILD)/rel/lib/libgmc_sim.a $(SIM_LIBS)

BENCH_DEPS := $(BUILD)/cmp/bin/bench-dma $(BUILD)/mic/bin/bench-dma $(BUILD)/fw/dmc/yosys.log $(BUILD)/fw/dmu/pack.log $(FW_PROBES:%=$(BUILD)/fw/%/pack.log) $(BUILD)/rel/bin/bench-sim $(BUILD)/rel/bin/bench-alloc $(BUILD)/rel/bin/bench-api \
              $(BUILD)/rel/bin/bench-dma $(BUILD)/rel/bin/bench-evict $(BUILD)/bench/tb_bench.vvp \
              $(BUILD)/rel/bin/bench-resid $(BUILD)/rel/bin/gmc $(BUILD)/rel/bin/gmc-board-sim

bench: deps-bench $(BENCH_DEPS) $(FW_BOARDS:%=$(BUILD)/fw/%/gmc.bin)
	$(PYTHON) bench/run_bench.py --fw-clock-mhz $(FW_FREQ) $(BUILD) $(FW_BOARDS:%=$(BUILD)/fw/%/report.json)

# --------------------------------------------------------------- firmware
# iCE40 bitstreams (docs/architecture.md 6, docs/boards.md). Per board, build/fw/<board>/
# holds yosys.log, gmc.json, nextpnr.log, report.json (utilisation and
# timing), gmc.asc and gmc.bin.
#   make firmware              every board, plus build/fw/report.json
#   make firmware-icebreaker   one board (or firmware-hx8k)
#   make flash [BOARD=hx8k]    write the board's SPI flash (needs the board)
#   make test-fw-gate          the bridge testbench on the synthesised UP5K netlist

BOARD          ?= icebreaker
# The boards' clock (MHz). nextpnr is asked for twice it, so an image that
# builds meets timing with at least 2x margin.
FW_FREQ        ?= 12
FW_PNR_MHZ     := $(shell expr 2 \* $(FW_FREQ))
OPENFPGALOADER ?= openFPGALoader
FW_COMMON      := $(sort $(wildcard firmware/common/*.v))
# The bridge's protocol constants, generated from spec/bridge.toml.
FW_INC         := firmware/common/gmc_bridge.vh

FW_SYNTH_icebreaker   := -spram -dsp
FW_PNR_icebreaker     := --up5k --package sg48
# The HX8K image is mapped with ABC9: with its engine it packs into 156
# fewer logic cells than with the default mapper (7,144 against 7,300).
FW_SYNTH_hx8k         := -abc9
FW_PNR_hx8k           := --hx8k --package ct256
# DMA engine per board: FW_ENGINE_<board> (defined with the board
# simulation above, which takes the same), passed to the board top and
# recorded in build/fw/<board>/dma_engine for the report.

.PHONY: firmware flash test-fw test-fw-gate $(FW_BOARDS:%=firmware-%)

firmware: $(FW_BOARDS:%=$(BUILD)/fw/%/gmc.bin)
	$(PYTHON) tools/fpga_report.py --clock-mhz $(FW_FREQ) $(FW_BOARDS:%=$(BUILD)/fw/%/report.json) > $(BUILD)/fw/report.json
	@cat $(BUILD)/fw/report.json

define FW_BOARD_RULES
$$(BUILD)/fw/$(1)/gmc.json: firmware/$(1)/gmc_board_$(1).v $$(FW_COMMON) $$(FW_INC) $$(RTL) $$(RTL_INC)
	@mkdir -p $$(@D)
	$$(YOSYS) -q -l $$(@D)/yosys.log -p 'read_verilog -Irtl -Ifirmware/common $$(RTL) $$(FW_COMMON) $$<; \
	  chparam -set DMA_ENGINE $(FW_ENGINE_$(1)) gmc_board_$(1); synth_ice40 $(FW_SYNTH_$(1)) -top gmc_board_$(1) -json $$@'
	echo $(FW_ENGINE_$(1)) > $$(@D)/dma_engine

# nextpnr fails when timing misses twice FW_FREQ; the log and report stay for reading.
$$(BUILD)/fw/$(1)/gmc.asc: $$(BUILD)/fw/$(1)/gmc.json firmware/$(1)/$(1).pcf
	$$(NEXTPNR) $(FW_PNR_$(1)) --freq $$(FW_PNR_MHZ) --json $$< --pcf firmware/$(1)/$(1).pcf --asc $$@ \
	  --report $$(@D)/report.json -l $$(@D)/nextpnr.log -q

$$(BUILD)/fw/$(1)/gmc.bin: $$(BUILD)/fw/$(1)/gmc.asc
	$$(ICEPACK) $$< $$@

firmware-$(1): $$(BUILD)/fw/$(1)/gmc.bin

endef
$(foreach b,$(FW_BOARDS),$(eval $(call FW_BOARD_RULES,$(b))))

# Fit probe: a board top with an engine its bitstream does not carry,
# synthesised and packed (nextpnr --pack-only), for its logic-cell count
# while it does not fit (docs/boards.md, DMA engine): <prefix>_<tag>_lc and
# <prefix>_<tag>_short_lc in make bench. $(1) board, $(2) tag, $(3) DMA_ENGINE.
define FW_PROBE_RULES
$$(BUILD)/fw/$(1)-$(2)/pack.log: firmware/$(1)/gmc_board_$(1).v $$(FW_COMMON) $$(RTL) $$(RTL_INC)
	@mkdir -p $$(@D)
	$$(YOSYS) -q -l $$(@D)/yosys.log -p 'read_verilog -Irtl $$(RTL) $$(FW_COMMON) $$<; \
	  chparam -set DMA_ENGINE $(3) gmc_board_$(1); synth_ice40 $(FW_SYNTH_$(1)) -top gmc_board_$(1) -json $$(@D)/gmc.json'
	-$$(NEXTPNR) $(FW_PNR_$(1)) --json $$(@D)/gmc.json --pcf firmware/$(1)/$(1).pcf --pack-only -l $$@.tmp -q
	grep -q 'ICESTORM_LC:' $$@.tmp
	mv $$@.tmp $$@
endef
# The compact engine (2) on both boards; the micro-sequenced one (3) on the
# iCEBreaker (the HX8K's bitstream carries it).
FW_PROBES := hx8k-dmc icebreaker-dmc icebreaker-dmu
$(eval $(call FW_PROBE_RULES,hx8k,dmc,2))
$(eval $(call FW_PROBE_RULES,icebreaker,dmc,2))
$(eval $(call FW_PROBE_RULES,icebreaker,dmu,3))

# openFPGALoader 0.10 has no icebreaker entry: ice40_generic is the FT2232H
# + SPI flash wiring both boards use. It exits at once when no FTDI device
# answers; the timeout guards against a device that stops mid-write.
flash: $(BUILD)/fw/$(BOARD)/gmc.bin
	@timeout 10 $(OPENFPGALOADER) -b ice40_generic --detect >/dev/null 2>&1 || \
	  { echo "flash: no $(BOARD) board found (openFPGALoader -b ice40_generic --detect failed):" \
	         "plug it in and check USB permissions" >&2; exit 1; }
	timeout 300 $(OPENFPGALOADER) -b ice40_generic -f $<

$(BUILD)/fw/tb/tb_fw_bridge.vvp: tests/fw/tb_fw_bridge.v $(FW_COMMON) $(FW_INC) firmware/icebreaker/gmc_board_icebreaker.v $(RTL) $(RTL_INC)
	@mkdir -p $(@D)
	$(IVERILOG) -g2005 -Wall -Wno-sensitivity-entire-array -Irtl -Ifirmware/common -s tb_fw_bridge -o $@ \
	  $< firmware/icebreaker/gmc_board_icebreaker.v $(FW_COMMON) $(RTL)

# The micro-sequenced engine's smoke test (gmc_dmu and its microcode: one
# FENCE packet from the ring).
$(BUILD)/fw/tb/tb_dmu_smoke.vvp: tests/rtl_dmu/tb_dmu_smoke.v rtl/gmc_dmu.v rtl/gmc_dmu_rf.v rtl/gmc_dmu_rom.v rtl/gmc_clk_gate.v rtl/gmc_dmu_ucode.vh $(RTL_INC)
	@mkdir -p $(@D)
	$(IVERILOG) -g2005 -Wall -Irtl -s tb_dmu_smoke -o $@ $< rtl/gmc_dmu.v rtl/gmc_dmu_rf.v rtl/gmc_dmu_rom.v rtl/gmc_clk_gate.v

test-fw: $(BUILD)/fw/tb/tb_fw_bridge.vvp
	$(VVP) -n $<

# Gate level: the iCEBreaker top synthesised with the testbench's parameters,
# simulated with yosys's iCE40 cell models (SB_SPRAM256KA included).
# (yosys-config is not always installed: the cell library sits beside the binary.)
YOSYS_ICE40_SIM ?= $(dir $(shell command -v $(YOSYS)))../share/yosys/ice40/cells_sim.v
FW_BRIDGE_SRC := $(filter-out firmware/common/gmc_fpga_core.v,$(FW_COMMON))

$(BUILD)/fw/gate/gmc_board_icebreaker_syn.v: firmware/icebreaker/gmc_board_icebreaker.v $(FW_COMMON) $(FW_INC) $(RTL) $(RTL_INC)
	@mkdir -p $(@D)
	$(YOSYS) -q -l $(@D)/yosys.log -p 'read_verilog -Irtl -Ifirmware/common $(RTL) $(FW_COMMON) $<; chparam -set TIMEOUT_LOG2 10 -set POR_LOG2 4 -set ACT_LOG2 4 gmc_board_icebreaker; synth_ice40 -spram -dsp -top gmc_board_icebreaker; write_verilog -noattr $@'

$(BUILD)/fw/gate/tb_fw_bridge.vvp: tests/fw/tb_fw_bridge.v $(BUILD)/fw/gate/gmc_board_icebreaker_syn.v $(FW_BRIDGE_SRC)
	$(IVERILOG) -g2005 -Wno-timescale -Ifirmware/common -DGMC_GATE_SIM -DNO_ICE40_DEFAULT_ASSIGNMENTS -s tb_fw_bridge -o $@ \
	  $^ $(YOSYS_ICE40_SIM)

test-fw-gate: $(BUILD)/fw/gate/tb_fw_bridge.vvp
	$(VVP) -n $<

# ---------------------------------------------------------------- install

install: $(BUILD)/rel/lib/libgmc_sim.a $(BUILD)/rel/lib/libgmc_sim.so $(BUILD)/rel/lib/libgmc.a $(BUILD)/rel/bin/gmc
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/gmc $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	  $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BUILD)/rel/bin/gmc $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/rel/lib/libgmc_sim.a $(BUILD)/rel/lib/libgmc.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/rel/lib/libgmc_sim.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 sim/gmc_sim.h sim/gmc_sim_status.h include/gmc_regs.h include/gmc.h include/gmc_alloc.h include/gmc_flags.h include/gmc_check.h include/gmc_status.h \
	  $(DESTDIR)$(PREFIX)/include/gmc/
	sed -e 's|@PREFIX@|$(PREFIX)|' sim/gmc_sim.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gmc_sim.pc
	sed -e 's|@PREFIX@|$(PREFIX)|' host/gmc.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gmc.pc

clean:
	rm -rf $(BUILD)
