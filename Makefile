# gmc: FPGA-backed GPU memory controller and its host driver.
#
#   make run     build what is needed and run the main job on the simulated controller
#   make test    every test: generated-file freshness, lint, RTL and host tests (also under ASan/UBSan)
#   make bench   benchmarks into build/bench/results.json
#   make lint    Verilator -Wall and Icarus on the RTL
#   make gen     regenerate the views of spec/gmc.toml
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
OPT_rel  := -O2
OPT_asan := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

WARN     := -Wall -Wextra -Werror
CFLAGS_C := -std=c11 $(WARN) -g -Iinclude -Isim -Ihost/src -Itests/common -MMD -MP -D_POSIX_C_SOURCE=200809L
VLT_ROOT := $(shell $(VERILATOR) --getenv VERILATOR_ROOT 2>/dev/null)

RTL      := $(sort $(wildcard rtl/*.v))
RTL_INC  := rtl/gmc_regs.vh
TOP      := gmc_top

# The simulator model is Verilated with segment straps (see docs/sim.md).
VFLAGS := --cc --top-module $(TOP) -Irtl +define+GMC_SIM_STRAPS \
          --trace-fst -O3 --x-assign fast --x-initial fast -Wall -Wno-fatal \
          --no-timing

SHIM_SRC  := sim/gmc_sim.cpp
# Verilator's run-time library, compiled with the model's flags.
VLT_RUNTIME := verilated verilated_dpi verilated_fst_c verilated_threads
HOST_SRC  := $(sort $(wildcard host/src/*.c))
COMMON_SRC:= $(sort $(wildcard tests/common/*.c))
RTL_TESTS := $(sort $(wildcard tests/rtl/test_*.c))
HOST_TESTS:= $(sort $(wildcard tests/host/test_*.c))

.PHONY: all run test bench lint gen check-gen clean deps-test deps-bench install firmware
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BUILD)/rel/lib/libgmc_sim.a $(BUILD)/rel/lib/libgmc_sim.so $(BUILD)/rel/bin/gmc-sim-tour

deps-test:
	@tools/deps.sh test
deps-bench:
	@tools/deps.sh bench

# ------------------------------------------------------------ generation

gen:
	$(PYTHON) tools/gen_spec.py write

check-gen:
	@$(PYTHON) tools/gen_spec.py check && echo "generated views: up to date"

# ------------------------------------------------------------------ lint

lint: deps-test
	$(VERILATOR) --lint-only -Wall -Irtl --top-module $(TOP) $(RTL)
	$(VERILATOR) --lint-only -Wall -Irtl --top-module $(TOP) +define+GMC_SIM_STRAPS $(RTL)
	@mkdir -p $(BUILD)/lint
	$(IVERILOG) -g2005 -Wall -Irtl -s $(TOP) -o $(BUILD)/lint/gmc_top.vvp $(RTL)
	@echo "lint: clean"

# ------------------------------------------------------------ sim library

# Verilate and compile the model (one run per variant).
$(BUILD)/%/vobj/V$(TOP)__ALL.a: $(RTL) $(RTL_INC) | deps-test
	@rm -rf $(BUILD)/$*/vobj; mkdir -p $(BUILD)/$*
	$(VERILATOR) $(VFLAGS) -Mdir $(BUILD)/$*/vobj --build -j 2 \
	  -CFLAGS "-fPIC $(OPT_$*) -std=c++17" $(RTL) >$(BUILD)/$*.verilator.log 2>&1 \
	  || { cat $(BUILD)/$*.verilator.log; exit 1; }
	$(MAKE) -s -C $(BUILD)/$*/vobj -f V$(TOP).mk $(VLT_RUNTIME:%=%.o) >>$(BUILD)/$*.verilator.log 2>&1 \
	  || { cat $(BUILD)/$*.verilator.log; exit 1; }
	cd $(BUILD)/$*/vobj && $(AR) rcs libverilated.a $(VLT_RUNTIME:%=%.o)

$(BUILD)/%/obj/gmc_sim.o: $(SHIM_SRC) sim/gmc_sim.h include/gmc_regs.h $(BUILD)/%/vobj/V$(TOP)__ALL.a
	@mkdir -p $(@D)
	$(CXX) -std=c++17 $(WARN) -Wno-unused-parameter -fPIC -g $(OPT_$*) -Iinclude -Isim \
	  -I$(BUILD)/$*/vobj -I$(VLT_ROOT)/include -I$(VLT_ROOT)/include/vltstd -c $< -o $@

$(BUILD)/%/lib/libgmc_sim.a: $(BUILD)/%/obj/gmc_sim.o $(BUILD)/%/vobj/V$(TOP)__ALL.a
	@mkdir -p $(@D)
	@rm -f $@
	printf 'CREATE %s\nADDMOD %s\nADDLIB %s\nADDLIB %s\nSAVE\nEND\n' $@ $< \
	  $(BUILD)/$*/vobj/V$(TOP)__ALL.a $(BUILD)/$*/vobj/libverilated.a | $(AR) -M

$(BUILD)/%/lib/libgmc_sim.so: $(BUILD)/%/obj/gmc_sim.o $(BUILD)/%/vobj/V$(TOP)__ALL.a
	@mkdir -p $(@D)
	$(CXX) -shared $(OPT_$*) -o $@ $< -Wl,--whole-archive $(BUILD)/$*/vobj/V$(TOP)__ALL.a \
	  $(BUILD)/$*/vobj/libverilated.a -Wl,--no-whole-archive -lz -pthread

SIM_LIBS = -lz -pthread -lstdc++ -lm

# ------------------------------------------------------------ host library

define VARIANT_RULES
$(BUILD)/$(1)/obj/host/%.o: host/src/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_C) $(OPT_$(1)) -fPIC -c $$< -o $$@

$(BUILD)/$(1)/obj/common/%.o: tests/common/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_C) $(OPT_$(1)) -c $$< -o $$@

$(BUILD)/$(1)/lib/libgmc.a: $(patsubst host/src/%.c,$(BUILD)/$(1)/obj/host/%.o,$(HOST_SRC))
	@mkdir -p $$(@D)
	@rm -f $$@
	$$(AR) rcs $$@ $$^

$(BUILD)/$(1)/tests/%: tests/%.c $(patsubst tests/common/%.c,$(BUILD)/$(1)/obj/common/%.o,$(COMMON_SRC)) \
                       $(BUILD)/$(1)/lib/libgmc.a $(BUILD)/$(1)/lib/libgmc_sim.a
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_C) $(OPT_$(1)) $$< $$(filter %.o,$$^) -o $$@ \
	  $(BUILD)/$(1)/lib/libgmc.a $(BUILD)/$(1)/lib/libgmc_sim.a -lcmocka $$(SIM_LIBS) -lm

TEST_BINS_$(1) := $(patsubst tests/%.c,$(BUILD)/$(1)/tests/%,$(RTL_TESTS) $(HOST_TESTS))
endef
$(foreach v,$(VARIANTS),$(eval $(call VARIANT_RULES,$(v))))

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# --------------------------------------------------------------- programs

$(BUILD)/rel/bin/gmc-sim-tour: examples/sim_tour.c $(BUILD)/rel/lib/libgmc_sim.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_C) -O2 $< -o $@ $(BUILD)/rel/lib/libgmc_sim.a $(SIM_LIBS)

# -------------------------------------------------------------------- run

run: deps-test $(BUILD)/rel/bin/gmc-sim-tour
	$(BUILD)/rel/bin/gmc-sim-tour

# ------------------------------------------------------------------- test

# The cross-check compiles every generated constant with the C compiler and
# with Icarus and compares what each prints.
$(BUILD)/xcheck/ok: spec/gmc.toml tools/gen_spec.py include/gmc_regs.h rtl/gmc_regs.vh
	@mkdir -p $(@D)
	$(PYTHON) tools/gen_spec.py crosscheck $(@D)
	$(CC) -std=c11 $(WARN) -Iinclude $(@D)/xcheck.c -o $(@D)/xcheck_c
	$(IVERILOG) -g2005 -Irtl -o $(@D)/xcheck_v $(@D)/xcheck.v
	$(@D)/xcheck_c > $(@D)/c.txt
	$(VVP) -n $(@D)/xcheck_v | grep -v '\$$finish' > $(@D)/v.txt
	diff -u $(@D)/c.txt $(@D)/v.txt
	@echo "C and Verilog views agree on $$(wc -l < $(@D)/c.txt) constants"
	@touch $@

test: deps-test check-gen lint $(BUILD)/xcheck/ok $(TEST_BINS_rel) $(TEST_BINS_asan) tests/gen/test_gen_spec.py
	$(PYTHON) tests/gen/test_gen_spec.py
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  tools/run_tests.sh $(TEST_BINS_rel) $(TEST_BINS_asan)

# ------------------------------------------------------------------ bench

bench: deps-bench
	@echo "bench: not built yet"

# ---------------------------------------------------------------- install

install: $(BUILD)/rel/lib/libgmc_sim.a $(BUILD)/rel/lib/libgmc_sim.so
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/gmc $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(BUILD)/rel/lib/libgmc_sim.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/rel/lib/libgmc_sim.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 sim/gmc_sim.h include/gmc_regs.h $(DESTDIR)$(PREFIX)/include/gmc/
	sed -e 's|@PREFIX@|$(PREFIX)|' sim/gmc_sim.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gmc_sim.pc

clean:
	rm -rf $(BUILD)
