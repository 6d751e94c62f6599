# libFuzzer targets for the generator's input readers (make fuzz; not part of make test).
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
FUZZ_TARGETS := shapes template
FUZZ_OBJS    := $(patsubst gen/%.c,$(FUZZ_DIR)/obj/%.o,$(GEN_LIB_SRCS))

# What each target starts from: every file the project reads of that kind.
FUZZ_SEEDS_shapes   := $(wildcard tests/bad/*.yaml models/*.yaml shapes.yaml tests/target/*.yaml \
                         measure/*.yaml)
FUZZ_SEEDS_template := $(TEMPLATES)

.PHONY: fuzz fuzz-deps fuzz-build
.SECONDARY: $(FUZZ_OBJS)

fuzz-deps:
	@tools/setup-deps.sh fuzz

$(FUZZ_DIR)/obj/%.o: gen/%.c $(wildcard gen/*.h include/*.h) | fuzz-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(HOST_CPPFLAGS) -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(HOST_CPPFLAGS) $^ -lyaml -o $@

# Seeds are copied, never kept twice in git; the folder is made anew so a removed file goes.
$(FUZZ_DIR)/seeds/%: FORCE
	@rm -rf $@ && mkdir -p $@ && cp $(FUZZ_SEEDS_$*) $@/

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
