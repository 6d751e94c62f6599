# libFuzzer targets for the readers of untrusted input (make fuzz; not part of make test): the
# generator's shapes files and templates, the example engine's safetensors headers and
# config.json, and gemm-rvv-shapes' config.json (whose output must read back through the
# generator).
#
#   make fuzz FUZZ_SECONDS=N   run each target N seconds (default 60); a crash stops the run
#                              and leaves its input in build/fuzz/crashes/TARGET/
#
# Built with clang-19 and its libFuzzer runtime (Debian: clang-19, libclang-rt-19-dev; installed
# by tools/setup-deps.sh fuzz). The seed corpus is copied from the project's own files at build
# time; what the fuzzer adds to it stays in build/fuzz/corpus/ and is reused by the next run.

FUZZ_CC      ?= clang-19
FUZZ_SECONDS ?= 60
FUZZ_DIR     := $(BUILD)/fuzz
# The template bounds are lowered (template.h): the fuzzer reaches them in far fewer steps.
FUZZ_CFLAGS  := -std=c11 -g -O1 -Wall -Wextra -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=all -fno-omit-frame-pointer \
                -DTEMPLATE_STEPS_MAX=20000 '-DTEMPLATE_OUTPUT_MAX=(256ul << 10)'
FUZZ_TARGETS := shapes template safetensors config shapes_tool
FUZZ_OBJS    := $(patsubst gen/%.c,$(FUZZ_DIR)/obj/%.o,$(GEN_LIB_SRCS))
# The engine's readers, and gemm-rvv-shapes with its main renamed for the harness.
FUZZ_ENGINE_CFLAGS := -D_POSIX_C_SOURCE=200809L -Iexamples/engine
FUZZ_ENGINE_safetensors := $(FUZZ_DIR)/engine/safetensors.o $(FUZZ_DIR)/engine/config.o
FUZZ_ENGINE_config      := $(FUZZ_DIR)/engine/config.o
FUZZ_ENGINE_shapes_tool := $(FUZZ_DIR)/engine/shapes.o $(FUZZ_DIR)/engine/config.o $(FUZZ_OBJS)

# What each target starts from: every file the project reads of that kind.
FUZZ_SEEDS_shapes   := $(wildcard tests/bad/*.yaml models/*.yaml shapes.yaml tests/target/*.yaml \
                         measure/*.yaml)
FUZZ_SEEDS_template := $(TEMPLATES)
FUZZ_CONFIGS        := $(wildcard models/*.json tests/engine/models/*.json)
FUZZ_SEEDS_config   := $(FUZZ_CONFIGS)
FUZZ_SEEDS_shapes_tool := $(FUZZ_CONFIGS)

.PHONY: fuzz fuzz-deps fuzz-build
.SECONDARY: $(FUZZ_OBJS)

fuzz-deps:
	@tools/setup-deps.sh fuzz

$(FUZZ_DIR)/obj/%.o: gen/%.c $(wildcard gen/*.h include/*.h) | fuzz-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(HOST_CPPFLAGS) -c $< -o $@

$(FUZZ_DIR)/engine/%.o: examples/engine/%.c $(wildcard examples/engine/*.h) | fuzz-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_ENGINE_CFLAGS) -Iinclude -c $< -o $@
$(FUZZ_DIR)/engine/shapes.o: FUZZ_ENGINE_CFLAGS += -D_XOPEN_SOURCE=700 -Dmain=gemm_rvv_shapes_main

$(FUZZ_DIR)/fuzz_shapes $(FUZZ_DIR)/fuzz_template: $(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(HOST_CPPFLAGS) $^ -lyaml -o $@

define fuzz_engine_rule
$(FUZZ_DIR)/fuzz_$(1): tests/fuzz/fuzz_$(1).c tests/fuzz/fuzz_file.h $(FUZZ_ENGINE_$(1))
	$$(FUZZ_CC) $$(FUZZ_CFLAGS) $$(HOST_CPPFLAGS) $$(FUZZ_ENGINE_CFLAGS) $$< $(FUZZ_ENGINE_$(1)) \
	  -ljansson -lyaml -o $$@
endef
$(foreach t,safetensors config shapes_tool,$(eval $(call fuzz_engine_rule,$(t))))

# Seeds are copied, never kept twice in git; the folder is made anew so a removed file goes.
$(FUZZ_DIR)/seeds/%: FORCE
	@rm -rf $@ && mkdir -p $@ && for f in $(FUZZ_SEEDS_$*); do cp $$f $@/$$(echo $$f | tr / -); done

# safetensors seeds are written from the test models' configs: small valid files (BF16, F16,
# F32 tensors, two-dimensional and scalar) and one cut short.
$(FUZZ_DIR)/seeds/safetensors: tests/fuzz/safetensors_seeds.py FORCE
	@rm -rf $@ && mkdir -p $@ && python3 tests/fuzz/safetensors_seeds.py $@

fuzz-build: $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_TARGETS))

fuzz: fuzz-build $(patsubst %,$(FUZZ_DIR)/seeds/%,$(FUZZ_TARGETS))
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/crashes/$$t; \
	  echo "=== fuzz_$$t for $(FUZZ_SECONDS) s ==="; \
	  rc=0; $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
	    -dict=tests/fuzz/$$t.dict -artifact_prefix=$(FUZZ_DIR)/crashes/$$t/ \
	    $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/seeds/$$t > $(FUZZ_DIR)/$$t.log 2>&1 || rc=$$?; \
	  grep -E 'INITED|DONE|^stat::(number_of_executed_units|peak_rss_mb)|ERROR|SUMMARY|artifact' \
	    $(FUZZ_DIR)/$$t.log || true; \
	  test $$rc -eq 0; \
	done
