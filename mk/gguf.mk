# GGUF models and Debian's llama.cpp: the shapes of a GGUF (tools/gguf-shapes), the tiny random
# GGUF test models, llama-perplexity with and without the ggml plugin, and llama-bench counted.
# Included from the Makefile; see docs/testing.md, "The llama.cpp tests".
#
#   make gguf-models        the test models of tests/llama/make_gguf_models.py (build/llama/models)
#   make test-gguf-shapes   tools/gguf-shapes on them, against gemm-rvv-shapes (host, seconds)
#   make test-llama         one small llama-perplexity run of the GQA Llama in BF16 and in
#                           Q8_0 (sid's QEMU), with the plugin too: LLAMA_PLUGIN, or the one
#                           mk/ggml.mk's rules build; then the GQA Llama over several
#                           micro-batches, generating, its threads, splits and peak memory;
#                           peak memory with the plugin against without (tests/llama/check-memory.sh)
#   make test-llama-full    the four models, 2 chunks, and the bad-input models
#   make bench-llama        llama-bench tg/pp instructions counted under QEMU 7.2 (one thread),
#                           without and with the plugin, and at context depths (attention:
#                           make bench-llama-depth alone)

.PHONY: gguf-models test-gguf-shapes test-llama test-llama-full bench-llama bench-llama-depth


# Debian's interpreter, which has python3-numpy (a python3 earlier on PATH may not).
GGUF_PYTHON   ?= /usr/bin/python3
GGUF_RUN      := PYTHONPATH=$(GGUF_PYTHONPATH) $(GGUF_PYTHON)
LLAMA_TEST    := $(BUILD)/llama
LLAMA_MODELS  := $(LLAMA_TEST)/models

$(LLAMA_MODELS)/.made: tests/llama/make_gguf_models.py | ggml-deps
	@rm -rf $(@D)
	$(GGUF_RUN) tests/llama/make_gguf_models.py $(@D)
	@touch $@
gguf-models: $(LLAMA_MODELS)/.made

test-gguf-shapes: $(LLAMA_MODELS)/.made $(SHAPES_BIN) $(GEN_BIN)
	@PYTHON=$(GGUF_PYTHON) PYTHONPATH=$(GGUF_PYTHONPATH) tests/llama/check-gguf-shapes.sh \
	  tools/gguf-shapes $(SHAPES_BIN) $(GEN_BIN) $(LLAMA_MODELS)

# ---- llama-perplexity under sid's QEMU (its riscv_hwprobe makes ggml pick the RVV variant) ----
# LLAMA_PLUGIN: the ggml plugin (libggml-gemm-rvv.so) to try, built with the library of
# $(LLAMA_TEST)/shapes.yaml (whose plans $(LLAMA_TEST)/gen/manifest.json lists); empty: the
# perplexities without it only. LLAMA_SERVED, LLAMA_DECLINED, LLAMA_LOADED: the plugin's log
# lines, when not those tests/llama/check-perplexity.sh expects (see there).
# The K1's kind of core (V, VLEN 256, no Zvfbfwma): the plugin serves with the base kernels.
LLAMA_QEMU_CPU ?= rv64,v=true,vlen=256
# llama-perplexity's context, also its batch: the M of every Linear (at most 64, the largest M
# of shapes.yaml, for a plan of the right bucket).
LLAMA_CTX      ?= 64
ifdef GGML_PLUGIN
# With mk/ggml.mk (included before this file): the plugin built by its rules for the test
# models' shapes, in a build folder of its own.
LLAMA_PLUGIN_BUILD := $(LLAMA_TEST)/plugin
LLAMA_PLUGIN   ?= $(LLAMA_PLUGIN_BUILD)/ggml/libggml-gemm-rvv.so
LLAMA_MANIFEST ?= $(LLAMA_PLUGIN_BUILD)/gen/manifest.json
LLAMA_PLUGIN_DEP := $(LLAMA_PLUGIN)
$(LLAMA_PLUGIN_BUILD)/ggml/libggml-gemm-rvv.so: $(LLAMA_TEST)/shapes.yaml FORCE
	@$(MAKE) --no-print-directory ggml-plugin BUILD=$(LLAMA_PLUGIN_BUILD) SHAPES=$< \
	  TOOLCHAIN_DIR=$(TOOLCHAIN_DIR) > $(LLAMA_TEST)/plugin.log || { cat $(LLAMA_TEST)/plugin.log; exit 1; }
else
LLAMA_PLUGIN   ?=
LLAMA_MANIFEST ?= $(LLAMA_TEST)/gen/manifest.json
endif

# The shapes of the test models in one file, for the plugin's library: M = 64 is the
# perplexity runs' batch (every position's logits, so the lm_head's too). gguf-shapes' gate
# plans every BF16 and Q8_0 Linear, those below the library's default gate too (the GQA k and
# v, the Qwen2's every Linear); the Q8_0 models' Linears get Q8_0 plans.
LLAMA_SHAPES_MODELS := llama qwen3 llama-gqa qwen2-tied llama-q8_0 llama-gqa-q8_0 llama-gqa-small \
                       llama-mem qwen2-tied-mem llama-mem-q8_0
$(LLAMA_TEST)/shapes.yaml: $(LLAMA_MODELS)/.made tools/gguf-shapes
	$(GGUF_RUN) tools/gguf-shapes --model llama-test-models --batch 1,64 -o $@ $(LLAMA_SHAPES_MODELS:%=$(LLAMA_MODELS)/%.gguf)

$(LLAMA_TEST)/gen/manifest.json: $(LLAMA_TEST)/shapes.yaml $(GEN_BIN) $(TEMPLATES)
	$(GEN_BIN) -o $(@D) $< > /dev/null

# check_llama CASES, CHUNKS[, CTX]: tests/llama/check-perplexity.sh on the test models.
define check_llama
	@QEMU=$(SID_QEMU) QEMU_CPU=$(LLAMA_QEMU_CPU) GGML_ROOT=$(GGML_ROOT) \
	  PLUGIN='$(LLAMA_PLUGIN)' LIB_MANIFEST=$(LLAMA_MANIFEST) CTX=$(or $(3),$(LLAMA_CTX)) CHUNKS=$(2) \
	  $(if $(LLAMA_SERVED),SERVED='$(LLAMA_SERVED)') $(if $(LLAMA_DECLINED),DECLINED='$(LLAMA_DECLINED)') \
	  $(if $(LLAMA_LOADED),LOADED='$(LLAMA_LOADED)') \
	  GGUF_SHAPES="env PYTHONPATH=$(GGUF_PYTHONPATH) $(GGUF_PYTHON) tools/gguf-shapes" \
	  LOG_DIR=$(LLAMA_TEST)/logs tests/llama/check-perplexity.sh $(LLAMA_MODELS) $(1)
endef

# check_llama_run CASE[, MEM_MODES]: tests/llama/check-llama-run.sh (long prompts, generation,
# clone() calls, graph splits, peak memory) on one model, after check_llama on it (it reads that
# run's log for the splits of a batch of 32 or more). Needs the plugin.
define check_llama_run
	@QEMU=$(SID_QEMU) GGML_ROOT=$(GGML_ROOT) PLUGIN='$(LLAMA_PLUGIN)' $(if $(2),MEM_MODES='$(2)') \
	  GGUF_SHAPES="env PYTHONPATH=$(GGUF_PYTHONPATH) $(GGUF_PYTHON) tools/gguf-shapes" \
	  LOG_DIR=$(LLAMA_TEST)/logs tests/llama/check-llama-run.sh $(LLAMA_MODELS) $(1)
endef

# check_attention CASE, CTX[, QEMU_CPU]: tests/llama/check-attention.sh (llama-perplexity with
# -fa auto, on and off, without and with the plugin: the attention on the plugin). Needs it.
define check_attention
	@QEMU=$(SID_QEMU) GGML_ROOT=$(GGML_ROOT) PLUGIN='$(LLAMA_PLUGIN)' CTX=$(2) $(if $(3),QEMU_CPU=$(3)) \
	  LOG_DIR=$(LLAMA_TEST)/logs tests/llama/check-attention.sh $(LLAMA_MODELS) $(1)
endef

# check_memory CASES, MEM_MODES, CTX: tests/llama/check-memory.sh, peak memory with the plugin
# against without (issue 42's models: BF16, tied, Q8_0). Needs the plugin.
LLAMA_MEM_MODELS := llama-mem qwen2-tied-mem llama-mem-q8_0
define check_memory
	@QEMU=$(SID_QEMU) GGML_ROOT=$(GGML_ROOT) PLUGIN='$(LLAMA_PLUGIN)' MEM_MODES='$(2)' CTX=$(3) \
	  LOG_DIR=$(LLAMA_TEST)/logs tests/llama/check-memory.sh $(LLAMA_MODELS) $(1)
endef

LLAMA_TEST_DEPS := $(LLAMA_MODELS)/.made $(LLAMA_TEST)/gen/manifest.json $(LLAMA_PLUGIN_DEP) | sid-qemu ggml-deps

# The quick tier: the small GQA Llama in BF16 and the GQA Llama in Q8_0 on a batch of 32, then
# the Q8_0 one's long prompts with mmap only, the small one's attention with -fa auto, on and
# off at a context of 256 (the library's fallback: the kernels' bits) (QEMU emulates the BF16 kernels' vector FP slowly:
# the GQA Llama in BF16 alone was most of the check), then peak memory with the plugin against
# without (8 tokens: loading is most of each run) of issue 42's BF16, tied and Q8_0 models with
# mmap, the tied and the Q8_0 ones with -lm none (all six, on 16 tokens, in test-llama-full).
# The GQA Llama in BF16 (its attention too, D = 128), the tied Qwen2, the other models, a batch
# of 64 and -lm none: test-llama-full.
LLAMA_QUICK_CTX ?= 32
test-llama: $(LLAMA_TEST_DEPS)
	$(call check_llama,llama-gqa-small llama-gqa-q8_0,1,$(LLAMA_QUICK_CTX))
	$(if $(LLAMA_PLUGIN),$(call check_llama_run,llama-gqa-q8_0,mmap))
	$(if $(LLAMA_PLUGIN),$(call check_attention,llama-gqa-small,256))
	$(if $(LLAMA_PLUGIN),$(call check_memory,$(LLAMA_MEM_MODELS),mmap,8))
	$(if $(LLAMA_PLUGIN),$(call check_memory,qwen2-tied-mem llama-mem-q8_0,none,8))

test-llama-full: $(LLAMA_TEST_DEPS)
	$(call check_llama,llama qwen3 llama-gqa qwen2-tied llama-noplan llama-f16 llama-q8_0 llama-gqa-q8_0,2)
	$(if $(LLAMA_PLUGIN),$(call check_llama_run,llama-gqa))
	$(if $(LLAMA_PLUGIN),$(call check_llama_run,qwen2-tied))
	$(if $(LLAMA_PLUGIN),$(call check_llama_run,llama))
	$(if $(LLAMA_PLUGIN),$(call check_attention,llama-gqa,256))
	$(if $(LLAMA_PLUGIN),$(call check_memory,$(LLAMA_MEM_MODELS),mmap none,16))

# ---- llama-bench counted under QEMU 7.2 (make bench-llama; not part of make test) -----------
# With LLAMA_PLUGIN set, the plugin's figures too.
HWPROBE_SHIM := $(BUILD)/measure/hwprobe_shim.so
LLAMA_NM     ?= $(patsubst %objdump,%nm,$(OBJDUMP))

$(HWPROBE_SHIM): measure/llama/hwprobe_shim.c $(BUILD)/probe.ok
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) -fPIC -shared $< -o $@ -ldl

# The GQA Llama and the Qwen2.5-shaped Qwen2 (hidden 896, tied) in 2 layers (of a prompt the last
# layer's FFN runs on one row only, so in 1 layer a prompt token has none at the batch's M): with
# gguf-shapes' gate the plugin serves every BF16 Linear of both; and the Llama in Q8_0 (2 layers),
# the plugin's Q8_0 kernels against ggml's own Q8_0 path. LLAMA_BENCH_MODELS="llama-gqa
# qwen2-tied" counts the 1-layer test models, "llama qwen3" the others.
LLAMA_BENCH_MODELS ?= llama-gqa-2l qwen2-tied-2l llama-q8_0
# At a context depth (llama-bench -d, issue 40): a decoded token at 1024, a prompt token at 512,
# of the GQA Llama in 2 layers (its attention: head dim 128, 9 query heads, 3 KV heads, F16
# cache), into build/measure/llama/MODEL-depth. LLAMA_BENCH_DEPTH_MODELS= skips them.
LLAMA_BENCH_DEPTH_MODELS ?= llama-gqa-2l
LLAMA_BENCH_DEPTHS       ?= tg@1024 pp@512
LLAMA_COUNT = NM=$(LLAMA_NM) GGUF_SHAPES="env PYTHONPATH=$(GGUF_PYTHONPATH) $(GGUF_PYTHON) tools/gguf-shapes" \
              measure/llama/llama-count.sh $(PLUGIN) $(HWPROBE_SHIM) $(GGML_ROOT)

bench-llama: $(PLUGIN) $(HWPROBE_SHIM) $(LLAMA_MODELS)/.made $(LLAMA_PLUGIN_DEP) | ggml-deps
	@set -e; for m in $(LLAMA_BENCH_MODELS); do \
	  $(LLAMA_COUNT) $(LLAMA_MODELS)/$$m.gguf $(BUILD)/measure/llama/$$m $(LLAMA_PLUGIN); done
	@$(MAKE) --no-print-directory bench-llama-depth

# The depths alone (CONFIGS=plugin: the plugin's rows only, ggml's being slow to count).
bench-llama-depth: $(PLUGIN) $(HWPROBE_SHIM) $(LLAMA_MODELS)/.made $(LLAMA_PLUGIN_DEP) | ggml-deps
	@set -e; for m in $(LLAMA_BENCH_DEPTH_MODELS); do \
	  TESTS='$(LLAMA_BENCH_DEPTHS)' $(LLAMA_COUNT) $(LLAMA_MODELS)/$$m.gguf \
	    $(BUILD)/measure/llama/$$m-depth $(LLAMA_PLUGIN); done
