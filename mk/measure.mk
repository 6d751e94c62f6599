# The measurement lab (measure/), included from the Makefile: one make entry per measurement,
# every program built here, every output under $(MEASURE). Not part of install; make test runs
# test-placement and test-project.
#   make bench-selftest      the cache model on programs whose DRAM traffic is known by hand
#   make bench-count         instructions and vector work per MAC, counted by a QEMU plugin
#   make bench-count-attention  the same per attention MAC of gemm_rvv_attention calls
#   make bench-static        vector work per MAC of every plan's tiles, read from the objects
#   make bench-dram          DRAM traffic of whole calls under the cache model
#   make bench-dram-attention  the same for gemm_rvv_attention calls, against the KV bytes read
#   make bench-replay        one call of the shipped driver traced on the host, any blocking
#   make test-placement      traces: misaligned buffers move the bytes of aligned ones (a check)
#   make bench-build-times   make gen plus the library, from nothing, per shapes file
#   make bench-cycles        cycles of every tile's k-loop on the X60, under llvm-mca-22's model
#   make test-cycles         that table can be made from make's library (a check, no figures)
#   make bench-project       the projected K1 times (measure/report/project.sh) from what is there,
#                            compute from the tiles' modelled cycles (bench-cycles)
#   make bench-project-measure  the counts and DRAM calls the projection needs beyond the above,
#                            attention's too
#   make test-project        project.sh on its fixture, its key figures checked
#   make bench               all of the above, then make bench-report (report.md)
# Every measurement runs on one library, that of measure/shapes.yaml: a call has one figure,
# whichever entry measures it.

MEASURE        := $(BUILD)/measure
MEASURE_SHAPES := measure/shapes.yaml
BENCH_LIB      := $(MEASURE)/libgemm_rvv.a
# The instruction-counting plugin (measure/count/insn_count.c); mk/gguf.mk counts with it too.
PLUGIN         := $(MEASURE)/libinsn_count.so
CACHE_PLUGIN   := $(MEASURE)/libcache_model.so
CACHE_SELFTEST := $(MEASURE)/cache_selftest
COUNT_CALL     := $(MEASURE)/count_call
DRAM_CALL      := $(MEASURE)/dram_call
DRIVER_REPLAY  := $(MEASURE)/driver_replay
# The Zvfbfwma variant through its trace twin: a library of the same shapes whose Zvfbfwma
# tiles are measure/dram/tiles_zvfbfwma_twin.c.in, built for plain rv64gcv (QEMU 7.2, which
# the plugins need, has no Zvfbfwma); and the same program on the real library, for sid's QEMU.
TWIN_DIR       := $(MEASURE)/twin
TWIN_LIB       := $(TWIN_DIR)/libgemm_rvv.a
DRAM_TWIN      := $(MEASURE)/dram_variant_twin
DRAM_REAL      := $(MEASURE)/dram_variant_real

.PHONY: bench bench-deps bench-report bench-selftest bench-count bench-count-attention bench-static \
        bench-dram bench-dram-attention bench-replay bench-build-times test-placement test-placement-full bench-project \
        bench-project-measure test-project cycles-deps bench-cycles test-cycles

bench-deps:
	@tools/setup-deps.sh bench $(TOOLCHAIN_DIR)

# ---- the library every measurement runs on --------------------------------------------------
$(MEASURE)/gen/manifest.json: $(GEN_BIN) $(TEMPLATES) $(MEASURE_SHAPES)
	@mkdir -p $(MEASURE)
	$(GEN_BIN) --explain -o $(MEASURE)/gen $(MEASURE_SHAPES) > $(MEASURE)/explain.txt

$(BENCH_LIB): $(MEASURE)/gen/manifest.json $(BUILD)/probe.ok FORCE
	+@$(LIB_MAKE) GEN_DIR=$(MEASURE)/gen OBJ_DIR=$(MEASURE)/obj LIB=$@

# The twin's templates: the real ones with the twin in place of the Zvfbfwma tiles.
$(TWIN_DIR)/gen/manifest.json: $(GEN_BIN) $(TEMPLATES) measure/dram/tiles_zvfbfwma_twin.c.in $(MEASURE_SHAPES)
	@rm -rf $(TWIN_DIR)/templates && mkdir -p $(TWIN_DIR)/templates
	cp -r templates/. $(TWIN_DIR)/templates/
	cp measure/dram/tiles_zvfbfwma_twin.c.in $(TWIN_DIR)/templates/zvfbfwma/tiles.c.in
	awk '$$1 == "zvfbfwma" { $$3 = "rv64gcv" } { print }' templates/variants.txt > $(TWIN_DIR)/templates/variants.txt
	$(GEN_BIN) --templates $(TWIN_DIR)/templates -o $(TWIN_DIR)/gen $(MEASURE_SHAPES) > /dev/null
	@grep -q 'twin_bf16_' $(TWIN_DIR)/gen/bf16_tiles_zvfbfwma.c || \
	  { echo "error: $(TWIN_DIR)/gen/bf16_tiles_zvfbfwma.c is not the twin" >&2; exit 1; }

# QEMU 7.2 must be able to run every instruction of the twin's Zvfbfwma object.
$(TWIN_LIB): $(TWIN_DIR)/gen/manifest.json $(BUILD)/probe.ok FORCE
	+@$(LIB_MAKE) GEN_DIR=$(TWIN_DIR)/gen OBJ_DIR=$(TWIN_DIR)/obj LIB=$@ VARIANTS=$(TWIN_DIR)/templates/variants.txt
	@! $(OBJDUMP) -d $(TWIN_DIR)/obj/gen/bf16_tiles_zvfbfwma.o | \
	  grep -Eq '	(vfwmaccbf16|vfwcvtbf16|vfncvtbf16|flh|fsh|fcvt\.s\.bf16|fcvt\.bf16\.s)' || \
	  { echo "error: the twin's Zvfbfwma object holds a BF16 instruction" >&2; exit 1; }

# ---- the QEMU plugins (host) ----------------------------------------------------------------
QEMU_PLUGIN_CFLAGS = $(HOST_CFLAGS) -D_DEFAULT_SOURCE -I$(TOOLCHAIN_DIR)/qemu-plugin/include \
                     -Imeasure/cache -fPIC -shared

$(PLUGIN): measure/count/insn_count.c | bench-deps
	@mkdir -p $(@D)
	$(HOST_CC) $(QEMU_PLUGIN_CFLAGS) $< -o $@

CACHE_PLUGIN_SRCS := measure/cache/cache_model.c measure/cache/cache_sim.c measure/cache/traffic_map.c
$(CACHE_PLUGIN): $(CACHE_PLUGIN_SRCS) measure/cache/cache_sim.h measure/cache/traffic_map.h | bench-deps
	@mkdir -p $(@D)
	$(HOST_CC) $(QEMU_PLUGIN_CFLAGS) $(CACHE_PLUGIN_SRCS) -o $@

# ---- the programs measured (target, static: QEMU must know the symbols the plugins watch) ---
MEASURE_CPPFLAGS := -D_POSIX_C_SOURCE=200809L -D_ISOC11_SOURCE -Iinclude -Iruntime -Imeasure/cache
MARKER_SRCS      := measure/cache/cache_marker.c
DRAM_SRCS        := $(MARKER_SRCS) measure/dram/placement.c
DRAM_HDRS        := measure/cache/cache_marker.h measure/dram/placement.h measure/dram/dram_data.h

# Plain C as a user would build it: GCC 15's autovectorizer, for VLEN 256 and for VLEN 128.
$(MEASURE)/plain_c_zvl%.o: measure/count/plain_c.c $(BUILD)/probe.ok
	@mkdir -p $(@D)
	$(TARGET_CC) -std=c11 -O3 -ffast-math -Wall -Wextra -DPLAIN_C_NAME=plain_c_linear_zvl$* \
	  -march=$(if $(filter 256,$*),rv64gcv_zvl256b,rv64gcv) -mabi=lp64d -c $< -o $@

$(COUNT_CALL): measure/count/count_call.c $(BENCH_LIB) $(MEASURE)/plain_c_zvl256.o $(MEASURE)/plain_c_zvl128.o
	$(TARGET_CC) $(TARGET_CFLAGS) $(MEASURE_CPPFLAGS) -I$(MEASURE)/gen -static $< \
	  $(MEASURE)/plain_c_zvl256.o $(MEASURE)/plain_c_zvl128.o $(BENCH_LIB) -lpthread -lm -o $@

$(MEASURE)/count_attention: measure/count/count_attention.c measure/attention_layout.h $(BENCH_LIB)
	$(TARGET_CC) $(TARGET_CFLAGS) $(MEASURE_CPPFLAGS) -static $< $(BENCH_LIB) -lpthread -lm -o $@

$(MEASURE)/dram_attention: measure/dram/dram_attention.c measure/attention_layout.h $(DRAM_SRCS) $(DRAM_HDRS) $(BENCH_LIB)
	$(TARGET_CC) $(TARGET_CFLAGS) $(MEASURE_CPPFLAGS) -static $< $(DRAM_SRCS) $(BENCH_LIB) \
	  -lpthread -lm -o $@

$(CACHE_SELFTEST): measure/cache/selftest.c $(MARKER_SRCS) measure/cache/cache_marker.h $(BUILD)/probe.ok
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) -march=rv64gcv -Imeasure/cache -static $< $(MARKER_SRCS) -lpthread -o $@

$(DRAM_CALL): measure/dram/dram_call.c $(DRAM_SRCS) $(DRAM_HDRS) $(BENCH_LIB)
	$(TARGET_CC) $(TARGET_CFLAGS) $(MEASURE_CPPFLAGS) -static $< $(DRAM_SRCS) $(BENCH_LIB) \
	  -lpthread -lm -o $@

$(DRAM_TWIN): measure/dram/dram_variant.c $(DRAM_SRCS) $(DRAM_HDRS) $(TWIN_LIB)
	$(TARGET_CC) $(TARGET_CFLAGS) $(MEASURE_CPPFLAGS) -I$(TWIN_DIR)/gen -static $< $(DRAM_SRCS) \
	  $(TWIN_LIB) -lpthread -lm -o $@

$(DRAM_REAL): measure/dram/dram_variant.c $(DRAM_SRCS) $(DRAM_HDRS) $(BENCH_LIB)
	$(TARGET_CC) $(TARGET_CFLAGS) $(MEASURE_CPPFLAGS) -I$(MEASURE)/gen -static $< $(DRAM_SRCS) \
	  $(BENCH_LIB) -lpthread -lm -o $@

# ---- host programs ---------------------------------------------------------------------------
# The replay traces the shipped driver: runtime/driver.c with GCC's ThreadSanitizer
# instrumentation, whose __tsan_* hooks measure/replay/driver_replay.c defines (no sanitizer
# runtime is linked), memcpy renamed to its tracing one; plan_call.c, split.c, lines.c,
# scratch.c and BF16's descriptor as they are, gr_scratch_take wrapped. The contract is the
# host runtime's.
REPLAY_GEN    := $(BUILD)/host-runtime/gen
REPLAY_CFLAGS := $(HOST_CFLAGS) -Werror -D_POSIX_C_SOURCE=200809L -Iinclude -Iruntime -I$(REPLAY_GEN)
REPLAY_RT     := runtime/plan_call.c runtime/split.c runtime/lines.c runtime/scratch.c \
                 runtime/bf16_format.c
$(MEASURE)/replay/driver_traced.o: runtime/driver.c $(wildcard runtime/*.h) $(REPLAY_GEN)/manifest.json
	@mkdir -p $(@D)
	$(HOST_CC) $(REPLAY_CFLAGS) -O1 -fno-tree-loop-distribute-patterns -fsanitize=thread \
	  --param=tsan-instrument-func-entry-exit=0 -Dmemcpy=gr_trace_memcpy -c $< -o $@
$(DRIVER_REPLAY): measure/replay/driver_replay.c $(MEASURE)/replay/driver_traced.o $(REPLAY_RT) \
                  measure/cache/cache_sim.c measure/cache/cache_sim.h gen/blocking.c gen/tile.c \
                  $(wildcard gen/*.h) $(wildcard runtime/*.h) $(REPLAY_GEN)/manifest.json
	@mkdir -p $(@D)
	$(HOST_CC) $(REPLAY_CFLAGS) -Imeasure/cache -Igen measure/replay/driver_replay.c \
	  $(MEASURE)/replay/driver_traced.o $(REPLAY_RT) measure/cache/cache_sim.c gen/blocking.c \
	  gen/tile.c -Wl,--wrap=gr_scratch_take -lpthread -o $@

# ---- the measurements ------------------------------------------------------------------------
# $(call run_into,FILE,COMMAND): COMMAND's output into FILE, then shown; COMMAND failing fails make.
run_into = $(2) > $(1).part || { cat $(1).part; exit 1; }; mv $(1).part $(1); cat $(1)

bench-selftest: $(CACHE_PLUGIN) $(CACHE_SELFTEST)
	@$(call run_into,$(MEASURE)/selftest.txt,measure/cache/selftest.sh $(CACHE_PLUGIN) $(CACHE_SELFTEST))

# COUNT_RUNS="M N K PATH VLEN;..." counts those runs only, into count-selected.csv (PATH:
# kernel-packed, kernel-plain, fallback, plain-c); default: the report's whole table.
COUNT_RUNS ?=
COUNT_CSV   = $(MEASURE)/count$(if $(COUNT_RUNS),-selected).csv
bench-count: $(PLUGIN) $(COUNT_CALL)
	@COUNT_RUNS='$(COUNT_RUNS)' JOBS=$(JOBS) measure/count/count.sh $(PLUGIN) $(COUNT_CALL) \
	  $(MEASURE)/count $(COUNT_CSV)

# Per attention MAC (2 n_q n_kv D H_q) of gemm_rvv_attention calls, F16 and BF16 caches, a
# decoded token and a prompt (measure/count/count-attention.sh: ATTN_COUNT_TYPES, _D, _KV,
# _PROMPT, _SYMS), VLEN 256, one thread, beside issue 40's targets and ggml's figures.
bench-count-attention: $(PLUGIN) $(MEASURE)/count_attention
	@JOBS=$(JOBS) measure/count/count-attention.sh $(PLUGIN) $(MEASURE)/count_attention \
	  $(MEASURE)/count-attention $(MEASURE)/count-attention.csv

BENCH_VLEN ?= 256
bench-static: $(BENCH_LIB)
	@$(call run_into,$(MEASURE)/static-vwork-vlen$(BENCH_VLEN).txt,measure/static-vwork.sh \
	  '$(OBJDUMP)' $(MEASURE)/gen $(MEASURE)/obj $(BENCH_VLEN))

# DRAM_CALLS="M N K PATH [PLACEMENT [THREADS]];..." measures those calls only, into
# dram-selected.csv (PATH: packed, plain, fallback, zvfbfwma (packed, through the twin));
# default: the report's list. DRAM_PLACEMENT: where the caller's buffers sit (aligned, malloc,
# page+B: measure/dram/placement.h). DRAM_THREADS: the pool size of calls that name none (1;
# above 1 the cache model of a K1's clusters: 4 cores per 512 KiB L2, whole calls).
# DRAM_LOCKSTEP: on several threads, how many accesses a thread may run ahead of the others
# (256; 0: as the host schedules them). DRAM_L2_KB: the L2 sizes modelled on one thread. DRAM_COLS: "full" or "C1 C2" (default:
# measure-call.sh --columns). DRAM_MAP=1: also the traffic by address range.
DRAM_CALLS     ?=
DRAM_PLACEMENT ?= aligned
DRAM_THREADS   ?= 1
DRAM_LOCKSTEP  ?= 256
DRAM_L2_KB     ?= 512 128
DRAM_COLS      ?=
DRAM_MAP       ?= 0
DRAM_CSV        = $(MEASURE)/dram$(if $(DRAM_CALLS),-selected).csv
DRAM_NEEDS_TWIN = $(findstring zvfbfwma,$(DRAM_CALLS))
bench-dram: $(CACHE_PLUGIN) $(DRAM_CALL) $(if $(DRAM_NEEDS_TWIN),$(DRAM_TWIN) $(DRAM_REAL) $(if $(TOOLCHAIN),sid-qemu))
	@DRAM_CALLS='$(DRAM_CALLS)' DRAM_PLACEMENT='$(DRAM_PLACEMENT)' DRAM_THREADS='$(DRAM_THREADS)' \
	  DRAM_LOCKSTEP='$(DRAM_LOCKSTEP)' DRAM_L2_KB='$(DRAM_L2_KB)' \
	  DRAM_COLS='$(DRAM_COLS)' DRAM_MAP='$(DRAM_MAP)' JOBS=$(JOBS) SID_QEMU='$(SID_QEMU)' \
	  measure/dram/dram.sh $(CACHE_PLUGIN) $(DRAM_CALL) $(MEASURE)/explain.txt $(MEASURE)/dram \
	  $(DRAM_CSV) $(if $(DRAM_NEEDS_TWIN),$(DRAM_TWIN) $(DRAM_REAL))

# DRAM bytes of gemm_rvv_attention calls against the cache bytes they must read
# (measure/dram/dram-attention.sh: ATTN_DRAM_CALLS="TYPE D H_Q H_KV N_Q N_KV [THREADS];...";
# default a decoded token at n_kv 4096, issue 40's shape, F16 and BF16, one thread).
ATTN_DRAM_CALLS ?=
ATTN_DRAM_CSV   ?= $(MEASURE)/dram-attention.csv
bench-dram-attention: $(CACHE_PLUGIN) $(MEASURE)/dram_attention
	@ATTN_DRAM_CALLS='$(ATTN_DRAM_CALLS)' DRAM_PLACEMENT='$(DRAM_PLACEMENT)' DRAM_L2_KB='$(DRAM_L2_KB)' \
	  DRAM_LOCKSTEP='$(DRAM_LOCKSTEP)' JOBS=$(JOBS) measure/dram/dram-attention.sh $(CACHE_PLUGIN) \
	  $(MEASURE)/dram_attention $(MEASURE)/dram-attention $(ATTN_DRAM_CSV)

# REPLAY_ARGS: M N K strips|tiles KC NC packed|plain L2_KB [PLACEMENT]
# (measure/replay/driver_replay.c; PLACEMENT as DRAM_PLACEMENT's, default aligned).
REPLAY_ARGS ?= 128 4096 4096 strips 128 768 plain 512
bench-replay: $(DRIVER_REPLAY)
	@$(call run_into,$(MEASURE)/replay.txt,$(DRIVER_REPLAY) $(REPLAY_ARGS))

# The traffic does not depend on where the caller's buffers sit: traces of the shipped driver
# on small calls, misaligned buffers against aligned ones (host, seconds; a check, not a measurement).
# make test checks three placements, make test-full (test-placement-full) all five.
test-placement: $(DRIVER_REPLAY)
	@PLACEMENTS=quick measure/replay/placement-check.sh $(DRIVER_REPLAY)
test-placement-full: $(DRIVER_REPLAY)
	@measure/replay/placement-check.sh $(DRIVER_REPLAY)

# The k-loops of the compiled tiles through llvm-mca-22 with LLVM's SpacemiT X60 model
# (measure/cycles/cycles.sh): cycles per k, % of the peak, the busiest unit.
cycles-deps:
	@tools/setup-deps.sh cycles
bench-cycles: $(BENCH_LIB) | cycles-deps
	@$(call run_into,$(MEASURE)/cycles.md,measure/cycles/cycles.sh '$(OBJDUMP)' $(MEASURE)/gen \
	  $(MEASURE)/obj $(MEASURE)/cycles)

# The table can be made from make's own library and the tests' (which has Q8_0 tiles): every
# tile's loop found, llvm-mca reads each (seconds; the figures are bench-cycles'). Skipped
# where llvm-mca-22 cannot be installed.
test-cycles: lib $(TEST_LIB) | cycles-deps
	@if command -v llvm-mca-22 >/dev/null; then \
	  measure/cycles/cycles.sh '$(OBJDUMP)' $(GEN_DIR) $(BUILD)/obj $(BUILD)/cycles-check --check && \
	  measure/cycles/cycles.sh '$(OBJDUMP)' $(BUILD)/test/gen $(BUILD)/test/obj $(BUILD)/cycles-check --check; \
	else tools/report-skip test-cycles "llvm-mca-22 not found (tools/setup-deps.sh cycles)"; fi

BUILD_TIMES_SHAPES ?= shapes.yaml models/llama.yaml
bench-build-times: $(GEN_BIN)
	@$(call run_into,$(MEASURE)/build-times.csv,measure/build-times.sh \
	  $(MEASURE)/build-times $(BUILD_TIMES_SHAPES))

# The projection (measure/report/project.sh): each model as SHAPES_YAML:BLOCKS, and every
# count and DRAM CSV in $(MEASURE), oldest first (a call measured again: its newest figures).
# DRAM_GBPS, VEC_UNITS, CORE_GBPS, ... (project.sh's header) pass through the environment.
PROJECT_MODELS ?= shapes.yaml:28 models/llama.yaml:32
PROJECT_CYCLES := $(MEASURE)/cycles/cycles.csv
# Attention's CSVs (bench-count-attention, bench-dram-attention*) apart from the Linears'.
PROJECT_ARGS    = $(foreach f,$(filter-out %-attention.csv,$(shell ls -tr $(MEASURE)/count*.csv 2>/dev/null)),--count $(f)) \
                  $(foreach f,$(filter-out $(MEASURE)/dram-attention%,$(shell ls -tr $(MEASURE)/dram*.csv 2>/dev/null)),--dram $(f)) \
                  $(shell test -f $(PROJECT_CYCLES) && echo --cycles $(PROJECT_CYCLES)) \
                  $(shell test -f $(MEASURE)/count-attention.csv && echo --attention-count $(MEASURE)/count-attention.csv) \
                  $(foreach f,$(shell ls -tr $(MEASURE)/dram-attention*.csv 2>/dev/null),--attention-dram $(f)) \
                  $(shell test -f $(MEASURE)/torch-count.csv && echo --torch-count $(MEASURE)/torch-count.csv) \
                  $(shell test -f $(MEASURE)/llama/llama-gqa-2l/llama-count.csv && \
                    echo --llama-count $(MEASURE)/llama/llama-gqa-2l/llama-count.csv) \
                  $(PROJECT_MODELS)

# What the projection needs that make bench-count's and make bench-dram's own lists do not
# measure: the vector work of every Linear of both models (packed, VLEN 256) and Qwen3-0.6B's
# calls under the cache model (Llama-2-7B's are in bench-dram's list), into
# count-projection.csv and dram-projection.csv; once dram.sh takes a thread count
# (DRAM_THREADS), Qwen3-0.6B's calls and those of Llama-2-7B's not 4096 x 4096 (in
# bench-dram's list) on 4 and 8 threads too. About 3 minutes on 2 cores at one thread.
proj_comma          := ,
PROJECT_QWEN3       := 1,2048,1024 1,1024,1024 1,1024,2048 1,3072,1024 1,1024,3072 1,151936,1024 \
                       128,2048,1024 128,1024,1024 128,1024,2048 128,3072,1024 128,1024,3072
PROJECT_LLAMA       := 1,4096,4096 1,11008,4096 1,4096,11008 1,32000,4096 \
                       128,4096,4096 128,11008,4096 128,4096,11008
PROJECT_THREADS     := 1 $(if $(shell grep -l DRAM_THREADS measure/dram/dram.sh 2>/dev/null),4 8)
PROJECT_COUNT_RUNS  := $(strip $(foreach s,$(PROJECT_QWEN3) $(PROJECT_LLAMA),$(subst $(proj_comma), ,$(s)) kernel-packed 256;))
PROJECT_DRAM_CALLS  := $(strip $(foreach s,$(PROJECT_QWEN3),$(foreach t,$(PROJECT_THREADS),\
                         $(subst $(proj_comma), ,$(s)) packed$(if $(filter-out 1,$(t)), aligned $(t));))\
                       $(foreach s,$(filter-out %$(proj_comma)4096$(proj_comma)4096,$(PROJECT_LLAMA)),\
                         $(foreach t,$(filter-out 1,$(PROJECT_THREADS)),$(subst $(proj_comma), ,$(s)) packed aligned $(t);)))
# Attention: the counts of bench-count-attention, and a decoded token's DRAM bytes over its KV
# bytes for both models' heads (Qwen3-0.6B 16 on 8, Llama-2-7B 32 on 32, of 128) at n_kv 1024
# and 4096, one thread, into dram-attention-projection.csv.
PROJECT_ATTN_DRAM   := f16 128 16 8 1 1024;f16 128 16 8 1 4096;f16 128 32 32 1 1024;f16 128 32 32 1 4096
bench-project-measure:
	@$(MAKE) --no-print-directory bench-count COUNT_RUNS='$(PROJECT_COUNT_RUNS)' \
	  COUNT_CSV=$(MEASURE)/count-projection.csv
	@$(MAKE) --no-print-directory bench-dram DRAM_CALLS='$(PROJECT_DRAM_CALLS)' \
	  DRAM_CSV=$(MEASURE)/dram-projection.csv
	@$(MAKE) --no-print-directory bench-count-attention
	@$(MAKE) --no-print-directory bench-dram-attention ATTN_DRAM_CALLS='$(PROJECT_ATTN_DRAM)' \
	  ATTN_DRAM_CSV=$(MEASURE)/dram-attention-projection.csv

# The report from what the entries above wrote, the projection in it.
bench-report:
	measure/report/report.sh $(MEASURE) $(PROJECT_ARGS)

# The projection alone, from whatever count and DRAM CSVs are there so far and the tiles'
# modelled cycles (bench-cycles, run first: compute-bound calls take the X60 model's cycles
# per MAC): projection.md (and every figure in projection.csv).
bench-project: bench-cycles
	@mkdir -p $(MEASURE)
	@$(call run_into,$(MEASURE)/projection.md,measure/report/project.sh \
	  --csv $(MEASURE)/projection.csv $(PROJECT_ARGS))

# project.sh on a fixture whose figures are worked out by hand (host, a second).
test-project:
	@measure/report/project-check.sh $(BUILD)/project-check

# One after another: each runs its own QEMU jobs JOBS at a time.
bench:
	@$(MAKE) --no-print-directory bench-selftest
	@$(MAKE) --no-print-directory bench-static
	@$(MAKE) --no-print-directory bench-cycles
	@$(MAKE) --no-print-directory bench-count
	@$(MAKE) --no-print-directory bench-dram
	@$(MAKE) --no-print-directory bench-replay
	@$(MAKE) --no-print-directory bench-build-times
	@$(MAKE) --no-print-directory bench-llama
	@$(MAKE) --no-print-directory bench-project-measure
	@$(MAKE) --no-print-directory bench-report
