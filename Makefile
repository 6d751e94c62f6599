# gemm_rvv: an ahead-of-time generator of RVV BF16 GEMM kernels. See README.md.
#
#   make                     generate kernels for $(SHAPES) and build build/libgemm_rvv.a
#   make gen SHAPES=F.yaml   only generate (build/gen): the plan, the sources, the manifest
#   make test                install what is missing, run the quick test tier (minutes; CI)
#   make test-full           the whole test matrix and every long check
#
# Toolchain: by default GCC 15 for riscv64 is fetched into .toolchain/ (tools/setup-deps.sh).
# CROSS=riscv64-unknown-linux-gnu- uses your own cross compiler instead (nothing is
# downloaded); on a riscv64 machine the native gcc is used and tests run without QEMU.

BUILD         ?= build
GEN_DIR       := $(BUILD)/gen
# The shapes file: shapes.yaml unless SHAPES= names another, whatever an earlier make built
# (make, make install and make test alike: nothing is remembered between runs).
MANIFEST_SOURCE = sed -n 's/^  "source": "\(.*\)",$$/\1/p' $(GEN_DIR)/manifest.json
SHAPES_GIVEN  := $(filter command line environment,$(origin SHAPES))
SHAPES        ?= shapes.yaml
# A bare name is looked for in models/ too (make gen SHAPES=llama.yaml).
ifeq ($(wildcard $(SHAPES)),)
  ifneq ($(wildcard models/$(SHAPES)),)
    override SHAPES := models/$(SHAPES)
  endif
endif
TEST_SHAPES   := tests/target/shapes-test.yaml
TOOLCHAIN_DIR ?= $(CURDIR)/.toolchain
# The generator's options (GEN_FLAGS="--max-m 64"): none unless given, like SHAPES.
GEN_FLAGS     ?=
# `make install` without SHAPES= after `make SHAPES=other.yaml` would rebuild for shapes.yaml
# and install that: it stops and says so instead (install takes SHAPES= like make does).
BUILT_SHAPES  := $(if $(filter install,$(MAKECMDGOALS)),$(shell $(MANIFEST_SOURCE) 2>/dev/null))
ifneq ($(and $(BUILT_SHAPES),$(if $(SHAPES_GIVEN),,1),$(filter install,$(MAKECMDGOALS))),)
  ifneq ($(abspath $(BUILT_SHAPES)),$(abspath $(SHAPES)))
    $(error $(GEN_DIR) holds the kernels of $(BUILT_SHAPES), and make install without SHAPES= \
      installs those of $(SHAPES): say which, e.g. make install SHAPES=$(BUILT_SHAPES) PREFIX=...)
  endif
endif

HOST_CC       ?= cc
HOST_CFLAGS   ?= -std=c11 -O2 -g -Wall -Wextra
HOST_CPPFLAGS := -D_XOPEN_SOURCE=700 -D_DEFAULT_SOURCE -Iinclude -Igen \
                 -DGEN_TEMPLATES_DIR='"$(CURDIR)/templates"'
# The runtime, the tests and the example are built for the base ISA (they must run on a core
# without V); only generated kernel objects are built with V.
TARGET_CFLAGS ?= -std=c11 -O2 -g -march=rv64gc -mabi=lp64d -Wall -Wextra
KERNEL_CFLAGS ?= -std=c11 -O2 -g -march=rv64gcv -mabi=lp64d -Wall -Wextra

ifneq ($(CROSS),)
  TARGET_CC    ?= $(CROSS)gcc
  TARGET_AR    ?= $(CROSS)ar
  OBJDUMP      ?= $(CROSS)objdump
  # Where the target's dynamic loader lives: QEMU's -L prefix (-print-sysroot says "/" for
  # Debian's cross compilers, whose target libraries are in /usr/riscv64-linux-gnu).
  QEMU_SYSROOT ?= $(patsubst %/lib/ld-linux-riscv64-lp64d.so.1,%,$(shell \
                    $(TARGET_CC) -print-file-name=ld-linux-riscv64-lp64d.so.1 2>/dev/null))
  DEPS_MODE    := qemu
else ifeq ($(shell uname -m),riscv64)
  TARGET_CC    ?= gcc
  TARGET_AR    ?= ar
  OBJDUMP      ?= objdump
  NATIVE       := 1
  DEPS_MODE    := host
else
  TOOLCHAIN    := $(TOOLCHAIN_DIR)/gcc15
  TARGET_CC    := $(TOOLCHAIN)/usr/bin/riscv64-linux-gnu-gcc-15
  TARGET_AR    := $(TOOLCHAIN)/usr/bin/riscv64-linux-gnu-ar
  OBJDUMP      := $(TOOLCHAIN)/usr/bin/riscv64-linux-gnu-objdump
  QEMU_SYSROOT := $(TOOLCHAIN)/usr/riscv64-linux-gnu
  DEPS_MODE    := toolchain $(TOOLCHAIN_DIR)
endif
export QEMU_SYSROOT

GEN_BIN       := $(BUILD)/host/gemm-rvv-gen
GEN_SRCS      := $(wildcard gen/*.c)
GEN_LIB_SRCS  := $(filter-out gen/main.c,$(GEN_SRCS))
TEMPLATES     := $(wildcard templates/*.in templates/*/*.in) templates/variants.txt
LIB           := $(BUILD)/libgemm_rvv.a
TEST_LIB      := $(BUILD)/test/libgemm_rvv.a

HOST_TESTS    := $(patsubst tests/host/%.c,$(BUILD)/host-san/tests/%,$(wildcard tests/host/test_*.c))
# The target test programs are those of the test matrix, tests/matrix.txt.
TEST_MATRIX   := tests/matrix.txt
MATRIX_PROGRAMS := $(shell awk '!/^\#/ && NF { print $$1 }' $(TEST_MATRIX))
TARGET_TESTS  := $(patsubst %,$(BUILD)/test/%,$(filter test_%,$(MATRIX_PROGRAMS)))
TARGET_SUPPORT:= $(filter-out $(wildcard tests/target/test_*.c),$(wildcard tests/target/*.c))

.PHONY: all lib gen deps probe install example test test-full test-host test-attn-exp-all test-spills \
        test-no-vector test-clang test-target test-target-full clean distclean FORCE
.DELETE_ON_ERROR:

all: lib

# ---- dependencies and the compiler probe ---------------------------------------------------
# Runs every time: it checks in well under a second and downloads only what is missing.
deps:
	@tools/setup-deps.sh $(DEPS_MODE)

$(BUILD)/probe.ok: tools/probe-rvv.c | deps
	@mkdir -p $(@D)
	@$(TARGET_CC) $(KERNEL_CFLAGS) -c $< -o $(BUILD)/probe.o 2> $(BUILD)/probe.log || { \
	  echo "error: the target compiler '$(TARGET_CC)' cannot compile RVV 1.0 intrinsics"; \
	  echo "       (riscv_vector.h with the __riscv_ prefix, -march=rv64gcv): use GCC >= 14 or"; \
	  echo "       clang >= 17, e.g. CROSS=riscv64-linux-gnu- with such a compiler. It said:"; \
	  sed 's/^/       /' $(BUILD)/probe.log | head -5; exit 1; }
	@touch $@
probe: $(BUILD)/probe.ok

# ---- the generator (host) ------------------------------------------------------------------
$(BUILD)/host/obj/%.o: gen/%.c $(wildcard gen/*.h include/*.h) runtime/x_copy.h runtime/row_steps.h | deps
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_CPPFLAGS) -c $< -o $@

$(GEN_BIN): $(patsubst gen/%.c,$(BUILD)/host/obj/%.o,$(GEN_SRCS))
	$(HOST_CC) $(HOST_CFLAGS) $^ -lyaml -o $@

# The generator runs again when the shapes file, its options, itself or a template changed
# ($(BUILD)/gen-args: the shapes file and options of the last run, only compared, never read).
$(BUILD)/gen-args: FORCE
	@mkdir -p $(@D)
	@echo '$(abspath $(SHAPES)) $(GEN_FLAGS)' | cmp -s - $@ || echo '$(abspath $(SHAPES)) $(GEN_FLAGS)' > $@

$(GEN_DIR)/manifest.json: $(GEN_BIN) $(TEMPLATES) $(SHAPES) $(BUILD)/gen-args
	$(GEN_BIN) --explain $(GEN_FLAGS) -o $(GEN_DIR) $(SHAPES)

gen: $(GEN_DIR)/manifest.json

# Without this make would only say "No rule to make target".
ifeq ($(wildcard $(SHAPES)),)
$(SHAPES):
	@echo "error: shapes file '$(SHAPES)' not found: looked in $(CURDIR)/ and $(CURDIR)/models/" >&2
	@echo "       shipped: $(wildcard *.yaml) $(wildcard models/*.yaml)" >&2
	@exit 1
endif

# ---- the library (target) ------------------------------------------------------------------
JOBS          ?= $(shell nproc 2>/dev/null || echo 2)
LIB_MAKE = $(MAKE) --no-print-directory $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(JOBS)) -f mk/lib.mk TARGET_CC='$(TARGET_CC)' \
           TARGET_AR='$(TARGET_AR)' TARGET_CFLAGS='$(TARGET_CFLAGS)' KERNEL_CFLAGS='$(KERNEL_CFLAGS)'

lib: $(GEN_DIR)/manifest.json $(BUILD)/probe.ok
	+@$(LIB_MAKE) GEN_DIR=$(GEN_DIR) OBJ_DIR=$(BUILD)/obj LIB=$(LIB)
	@echo "built $(LIB) ($$(grep -c '"file"' $(GEN_DIR)/manifest.json) plans, $$(grep -c '"format": "q8_0"' $(GEN_DIR)/manifest.json) of them Q8_0, $$(grep -c '"pairs"' $(GEN_DIR)/manifest.json) attention plans, from $$($(MANIFEST_SOURCE)))"

# ---- tests ---------------------------------------------------------------------------------
# Host: the generator's parts, built again with ASan and UBSan in a folder of their own (the
# generator users get stays as it is), linked into cmocka programs (tests/host/test_MODULE.c, one
# per module of gen/) with the helpers they share (tests/common/: the allocation hook of
# alloc_fail.h, files, the generator run in a scratch folder, its inputs from text). libyaml is
# linked statically so that its allocations pass the hook.
SAN_DIR       := $(BUILD)/host-san
SAN_FLAGS     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_GEN_BIN   := $(SAN_DIR)/gemm-rvv-gen
SAN_OBJS      := $(patsubst gen/%.c,$(SAN_DIR)/obj/%.o,$(GEN_LIB_SRCS))
HOOK_LDFLAGS  := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup

$(SAN_DIR)/obj/%.o: gen/%.c $(wildcard gen/*.h include/*.h) runtime/x_copy.h runtime/row_steps.h | deps
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $(SAN_FLAGS) $(HOST_CPPFLAGS) -c $< -o $@

$(SAN_GEN_BIN): $(SAN_OBJS) $(SAN_DIR)/obj/main.o
	$(HOST_CC) $(HOST_CFLAGS) $(SAN_FLAGS) $^ -lyaml -o $@

HOST_TEST_COMMON := $(patsubst tests/common/%.c,$(SAN_DIR)/common/%.o,\
                      $(addprefix tests/common/,alloc_fail.c files.c gen_run.c gen_input.c))
HOST_TEST_FLAGS  := $(HOST_CFLAGS) $(SAN_FLAGS) $(HOST_CPPFLAGS) -Itests/common \
  -DGEN_BIN='"$(abspath $(SAN_GEN_BIN))"' -DGEN_PLAIN_BIN='"$(abspath $(GEN_BIN))"' \
  -DTESTS_DIR='"$(CURDIR)/tests"'

$(SAN_DIR)/common/%.o: tests/common/%.c tests/common/%.h $(wildcard gen/*.h include/*.h) | deps
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_TEST_FLAGS) -c $< -o $@

$(SAN_DIR)/tests/%: tests/host/%.c $(wildcard tests/common/*.h) $(HOST_TEST_COMMON) $(SAN_OBJS) $(SAN_GEN_BIN) $(GEN_BIN)
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_TEST_FLAGS) $< $(HOST_TEST_COMMON) $(SAN_OBJS) $(HOOK_LDFLAGS) $(HOST_TEST_LDFLAGS) -l:libyaml.a -lcmocka -o $@

# The output folder's test watches the order of fsync and rename.
$(SAN_DIR)/tests/test_emit: HOST_TEST_LDFLAGS = -Wl,--wrap=fsync,--wrap=rename
# Attention's exponential against libm's FP64 exp; every FP32 input in make test-full.
$(SAN_DIR)/tests/test_attn_exp: HOST_TEST_LDFLAGS = -lm
$(SAN_DIR)/tests/test_attn_exp: runtime/attn_exp.h
test-attn-exp-all: $(SAN_DIR)/tests/test_attn_exp
	@GEMM_RVV_TEST_EXP_ALL=1 $<

test-host: $(HOST_TESTS)
	@set -e; for t in $(HOST_TESTS); do echo "=== $$t ==="; $$t; done

# Target: the test shapes (small sizes, lowered gate) through the same generator and library
# rules users get, then cmocka programs run in every vector-length configuration.
$(BUILD)/test/gen/manifest.json: $(GEN_BIN) $(TEMPLATES) $(TEST_SHAPES)
	$(GEN_BIN) -o $(BUILD)/test/gen $(TEST_SHAPES)

# Warnings are errors here: generated code must stay -Wall -Wextra clean.
$(TEST_LIB): $(BUILD)/test/gen/manifest.json $(BUILD)/probe.ok FORCE
	+@$(LIB_MAKE) GEN_DIR=$(BUILD)/test/gen OBJ_DIR=$(BUILD)/test/obj LIB=$@ \
	  TARGET_CFLAGS='$(TARGET_CFLAGS) -Werror' KERNEL_CFLAGS='$(KERNEL_CFLAGS) -Werror'


$(BUILD)/test/%: tests/target/%.c $(TARGET_SUPPORT) $(wildcard tests/target/*.h) $(TEST_LIB)
	$(TARGET_CC) $(TARGET_CFLAGS) -Werror -D_POSIX_C_SOURCE=200809L -D_ISOC11_SOURCE -Iinclude -Iruntime \
	  -I$(BUILD)/test/gen -Itests/target \
	  $< $(TARGET_SUPPORT) \
	  $(TEST_LIB) -lcmocka -lm -lpthread $(TEST_LDFLAGS) -o $@

# The out-of-memory test makes allocations fail: the library's calls go through its wrappers.
$(BUILD)/test/test_nomem: TEST_LDFLAGS = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc

# The plans of the shipped shapes files the matrix names (shipped-NAME: NAME.yaml or
# models/NAME.yaml) run in the target tests too: one library and one test program per file
# (tests/target/shipped/test_plans.c), with the real K, tiles and blocks.
shipped_name    = $(basename $(notdir $(1)))
SHIPPED_SHAPES := $(foreach p,$(patsubst shipped-%,%,$(filter shipped-%,$(MATRIX_PROGRAMS))),\
                    $(firstword $(wildcard $(p).yaml models/$(p).yaml) $(p).yaml))
SHIPPED_TESTS  := $(foreach f,$(SHIPPED_SHAPES),$(BUILD)/test/shipped-$(call shipped_name,$(f)))

define shipped_rules
$(BUILD)/test/shipped/$(2)/gen/manifest.json: $(GEN_BIN) $(TEMPLATES) $(1)
	$(GEN_BIN) -o $(BUILD)/test/shipped/$(2)/gen $(1) > /dev/null

$(BUILD)/test/shipped/$(2)/libgemm_rvv.a: $(BUILD)/test/shipped/$(2)/gen/manifest.json $(BUILD)/probe.ok FORCE
	+@$$(LIB_MAKE) GEN_DIR=$(BUILD)/test/shipped/$(2)/gen OBJ_DIR=$(BUILD)/test/shipped/$(2)/obj LIB=$$@ \
	  TARGET_CFLAGS='$$(TARGET_CFLAGS) -Werror' KERNEL_CFLAGS='$$(KERNEL_CFLAGS) -Werror'

$(BUILD)/test/shipped-$(2): tests/target/shipped/test_plans.c $(TARGET_SUPPORT) $(BUILD)/test/shipped/$(2)/libgemm_rvv.a
	$$(TARGET_CC) $$(TARGET_CFLAGS) -Werror -D_POSIX_C_SOURCE=200809L -D_ISOC11_SOURCE -Iinclude -Iruntime \
	  -I$(BUILD)/test/shipped/$(2)/gen -Itests/target $$< $(TARGET_SUPPORT) \
	  $(BUILD)/test/shipped/$(2)/libgemm_rvv.a -lcmocka -lm -lpthread -o $$@
endef
$(foreach f,$(SHIPPED_SHAPES),$(eval $(call shipped_rules,$(f),$(call shipped_name,$(f)))))

# No kernel may spill vector registers: the generator keeps tiles within the 32 registers.
test-spills: $(TEST_LIB) lib
	@tools/check-spills.sh '$(OBJDUMP)' \
	  $(patsubst $(BUILD)/test/gen/%.c,$(BUILD)/test/obj/gen/%.o,$(wildcard $(BUILD)/test/gen/bf16_*.c $(BUILD)/test/gen/q8_0_tiles.c $(BUILD)/test/gen/attention_tiles.c)) \
	  $(patsubst $(GEN_DIR)/%.c,$(BUILD)/obj/gen/%.o,$(wildcard $(GEN_DIR)/bf16_*.c $(GEN_DIR)/q8_0_tiles.c $(GEN_DIR)/attention_tiles.c))

# Nothing but the generated kernels may hold vector instructions: the runtime runs on cores
# without V.
test-no-vector: $(TEST_LIB) lib
	@tools/check-no-vector.sh '$(OBJDUMP)' $(wildcard $(BUILD)/test/obj/runtime/*.o) \
	  $(wildcard $(BUILD)/obj/runtime/*.o)

# The generated C must be portable C11: clang compiles it too.
CLANG ?= clang-19
test-clang: $(BUILD)/test/gen/manifest.json
	@CLANG_INCLUDE="-I$(BUILD)/test/gen -isystem $(QEMU_SYSROOT)/include" tools/check-clang.sh '$(CLANG)' $(wildcard $(BUILD)/test/gen/*.c) \
	  $(wildcard runtime/*.c)

TARGET_PROGRAMS := $(TARGET_TESTS) $(SHIPPED_TESTS) $(BUILD)/example/linear
run_matrix = NATIVE=$(NATIVE) LOG_DIR=$(BUILD)/test/logs-$(1) \
  tools/run-target-tests.sh --tier $(1) $(TEST_MATRIX) $(TARGET_PROGRAMS)
test-target: $(TARGET_PROGRAMS)
	@$(call run_matrix,quick)
test-target-full: $(TARGET_PROGRAMS)
	@$(call run_matrix,full)

# The two test tiers, declared here only (docs/testing.md). make test, what CI runs: every
# program of the matrix at least once, the kernels at VLEN 128 (tail/mask all ones), 1024 and
# under sid's QEMU, every host-side check, and ggml's own test of the plugin. make test-full:
# the whole matrix and every long check. The checks of a tier run in one make, in parallel,
# the longest first (make starts them in this order: the short ones fill in beside them); the
# README's commands run last and alone, since they run make themselves.
QUICK_CHECKS := test-ggml test-target test-llama test-rpc test-host-runtime test-placement \
                test-gguf-shapes test-clang test-setup-deps test-host test-models \
                test-sysheaders test-engine-host test-spills test-no-vector test-project test-cycles
FULL_CHECKS  := test-target-full test-ggml-full test-llama-full test-rpc-full \
                test-placement-full check-engine test-attn-exp-all \
                $(filter-out test-target test-ggml test-llama test-rpc test-placement,$(QUICK_CHECKS))
# What the checks fetch, fetched once before they start (two checks must not fetch into one
# folder), beside the library's build.
QUICK_DEPS   := ggml-deps $(if $(TOOLCHAIN),sid-qemu)
FULL_DEPS    := $(QUICK_DEPS) engine-deps
# A check that cannot run here, whole or in part (test-clang without clang, test-setup-deps
# without the Debian archive), leaves a file in $(SKIPPED_DIR) (tools/report-skip) and is
# counted as skipped, not passed.
SKIPPED_DIR  := $(abspath $(BUILD))/skipped
export CHECK_SKIPPED_DIR := $(SKIPPED_DIR)
# Every recipe line of a tier is timed (tools/timed-sh); the tier ends with each check's
# status and its wall and CPU time (tools/check-times; the log is $(TIME_LOG)).
TIME_LOG     := $(abspath $(BUILD))/check-times.log
TIMED_MAKE    = CHECK_TIME_LOG=$(TIME_LOG) $(MAKE) --no-print-directory \
                SHELL=$(CURDIR)/tools/timed-sh .SHELLFLAGS='$$@ -c'
# The checks' output goes to logs, CHECK.log each (building.log: the builds they share;
# make.log: the commands make ran), not to the terminal, which shows one line per check as it
# passes and, for a line that fails, its target and the end of its log (tools/timed-sh
# writes those on fd 7, the terminal).
CHECK_LOG_DIR := $(abspath $(BUILD))/check-logs
CHECK_MAKE    = TIER_LOG_DIR=$(CHECK_LOG_DIR) TIER_CHECKS='$(1)' $(TIMED_MAKE) 7>&1 \
                >>$(CHECK_LOG_DIR)/make.log
tier-done-%: %
	@tools/check-times --one $(TIME_LOG) $* >&7
# The library (`make`'s, with its table) is built while what the checks need is fetched: the
# fetches wait on the network, the build on the CPU. Then the checks in one parallel make, and
# the README's commands last and alone (they run make themselves).
define run_tier
	@rm -rf $(SKIPPED_DIR) $(TIME_LOG) $(CHECK_LOG_DIR)
	@$(TIMED_MAKE) -j$(JOBS) --output-sync=target lib $(3)
	@mkdir -p $(CHECK_LOG_DIR); \
	 echo "make $(2): $(words $(1) test-board) checks, each one's output in $(CHECK_LOG_DIR)/CHECK.log"; \
	 { $(call CHECK_MAKE,$(1) test-board) -j$(JOBS) $(addprefix tier-done-,$(1)) && \
	   $(call CHECK_MAKE,$(1) test-board) tier-done-test-board; }; status=$$?; \
	 CHECK_LOG_DIR=$(CHECK_LOG_DIR) tools/check-times --tier $(2) $(TIME_LOG) $(1) test-board; \
	 exit $$status
endef
test:
	$(call run_tier,$(QUICK_CHECKS),test,$(QUICK_DEPS))
test-full:
	$(call run_tier,$(FULL_CHECKS),test-full,$(FULL_DEPS))

# gemm-rvv-bench (apps/gemm-rvv-bench), the tools' queries and the README's commands: mk/board.mk.
include mk/board.mk

include mk/isa.mk

# The ggml backend plugin and its tests under sid's QEMU.
include mk/ggml.mk

# ---- install and the example -----------------------------------------------------------------
PREFIX  ?= /usr/local
VERSION := $(shell sed -n 's/^\#define GEMM_RVV_VERSION_STRING "\(.*\)"/\1/p' include/gemm_rvv_version.h)

# WITH_GGML=0 leaves the ggml plugin out (it needs ggml's headers: mk/ggml.mk). On a riscv64
# machine without them (no libggml-dev) it is left out, and install says so.
WITH_GGML ?= $(if $(NATIVE),$(if $(wildcard /usr/include/ggml-backend.h),1,0),1)
install: lib $(BOARD_BENCH) $(if $(filter 1,$(WITH_GGML)),install-ggml-plugin)
	@echo "install: the library of $(SHAPES)$(if $(SHAPES_GIVEN),, (the default; SHAPES=FILE for another))"
	@$(if $(filter 1,$(WITH_GGML)),:,echo "install: without the ggml plugin (WITH_GGML=$(WITH_GGML); it needs libggml-dev)")
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BOARD_BENCH) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 include/gemm_rvv.h include/gemm_rvv_version.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' mk/gemm_rvv.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gemm_rvv.pc

# The example is built the way a user builds against an installed copy: pkg-config only.
EXAMPLE_PREFIX := $(abspath $(BUILD))/example-install
$(BUILD)/example/linear: examples/linear.c lib
	@$(MAKE) --no-print-directory install PREFIX=$(EXAMPLE_PREFIX) WITH_GGML=0 > /dev/null
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) $< \
	  $$(PKG_CONFIG_LIBDIR=$(EXAMPLE_PREFIX)/lib/pkgconfig pkg-config --cflags --libs gemm_rvv) -o $@

example: $(BUILD)/example/linear

# ---- the measurement lab (make bench and one make bench-* per measurement): mk/measure.mk --
include mk/measure.mk

include mk/fuzz.mk

clean:
	rm -rf $(BUILD)

distclean: clean
	rm -rf $(TOOLCHAIN_DIR)

FORCE:

# Tests of the toolchain set-up (tools/setup-deps.sh) and of system headers in target builds.
include mk/toolchain-tests.mk

# The runtime on the host under ThreadSanitizer and AddressSanitizer + UBSan.
include mk/host-runtime.mk

# The example engine (examples/engine) and its tests.
include mk/engine.mk

# GGUF models and Debian's llama.cpp: tools/gguf-shapes, llama-perplexity, llama-bench counted.
include mk/gguf.mk

# llama.cpp's RPC backend: ggml-rpc-server -d GEMM_RVV and its client.
include mk/rpc.mk

# PyTorch: the shared library, the Python package (python/gemm_rvv) and its tests.
include mk/torch.mk
