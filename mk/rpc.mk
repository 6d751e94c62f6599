# llama.cpp's RPC backend with the plugin: sid's ggml-rpc-server -d GEMM_RVV under sid's QEMU
# on 127.0.0.1, Debian's llama-perplexity --rpc as the client. Included from the Makefile after
# mk/gguf.mk (its test models, its plugin built for their shapes); see docs/testing.md, "RPC".
#
#   make test-rpc    two servers, a client killed while loading, one killed during a graph,
#                    then one whose perplexity must equal a local run without the plugin, every
#                    BF16 Linear served; a server with both devices (tests/llama/check-rpc.sh)
#   make test-rpc-full   the same and a second client, whose logits must be the first's
#   make bench-rpc   a server's instructions, socket bytes and peak memory per token,
#                    -d CPU against -d GEMM_RVV (measure/llama/rpc-count.sh)

.PHONY: test-rpc test-rpc-full bench-rpc

# The model: the small GQA Llama (hidden 256, k and v N = 128, 1 layer) in the quick tier, the
# GQA Llama (hidden 1152, k and v N = 384, 1 layer) in test-rpc-full; RPC_CASE=NAME for another.
test-rpc: RPC_CASE ?= llama-gqa-small
test-rpc-full: RPC_CASE ?= llama-gqa
# The clients killed while loading and during a graph: the GQA Llama in Q8_0, whose 15 MiB of
# weights take a while to cross, whose pass takes seconds, and which a server finishes
# computing fast once its client is gone (the BF16 one takes 40 s of CPU there).
RPC_KILL_CASE ?= llama-gqa-q8_0
# Preloaded into the client killed while loading: it kills itself part of the way through
# the weights (tests/llama/die_after_sent.c).
DIE_SHIM := $(BUILD)/llama/die_after_sent.so
$(DIE_SHIM): tests/llama/die_after_sent.c $(BUILD)/probe.ok
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) -Werror -fPIC -shared $< -o $@

# llama-perplexity's -c and -b: 32 rows a product (the plans of M <= 64 serve), half the
# emulated vector work of test-llama's 64.
RPC_CTX  ?= 32
# 1: also a server with both devices, -d CPU,GEMM_RVV, and a client over its two.
RPC_MIXED ?= 1

# Attention, each -fa mode over RPC against a local run (case 4b): the full tier's, at 256 (85 s
# a client under QEMU here with flash attention, 300 s with -fa off); the quick tier checks
# only the default client's -fa auto (flash attention on, the servers' FLASH_ATTN_EXT), a
# client with -fa off at 64 cost 6 s of CPU.
test-rpc: RPC_FA_MODES ?=
test-rpc: RPC_FA_CTX ?= 64
test-rpc-full: RPC_FA_MODES ?= auto on off
test-rpc-full: RPC_FA_CTX ?= 256
# Seconds one client may run: a client with -fa off at 256 over RPC (the unfused chain on the
# servers) takes 300 s alone and went past 600 when make test-full ran test-ggml-full beside
# it on two cores.
test-rpc: RPC_RUN_TIMEOUT ?= 600
test-rpc-full: RPC_RUN_TIMEOUT ?= 1800

# make test-rpc-full also runs a second full client on the same servers (the same bits as the
# first's); the quick tier leaves it out.
test-rpc: RPC_SECOND ?= 0
test-rpc-full: RPC_SECOND ?= 1
test-rpc test-rpc-full: $(LLAMA_MODELS)/.made $(LLAMA_TEST)/gen/manifest.json $(LLAMA_PLUGIN_DEP) \
                        $(DIE_SHIM) | sid-qemu ggml-deps
	@QEMU=$(SID_QEMU) QEMU_CPU=$(LLAMA_QEMU_CPU) GGML_ROOT=$(GGML_ROOT) PLUGIN='$(LLAMA_PLUGIN)' \
	  DIE_SHIM=$(DIE_SHIM) FA_MODES='$(RPC_FA_MODES)' FA_CTX=$(RPC_FA_CTX) \
	  RUN_TIMEOUT=$(RPC_RUN_TIMEOUT) \
	  LIB_MANIFEST=$(LLAMA_MANIFEST) CTX=$(RPC_CTX) MIXED=$(RPC_MIXED) SECOND=$(RPC_SECOND) KILL_CASE=$(RPC_KILL_CASE) \
	  GGUF_SHAPES="env PYTHONPATH=$(GGUF_PYTHONPATH) $(GGUF_PYTHON) tools/gguf-shapes" \
	  LOG_DIR=$(LLAMA_TEST)/logs-rpc tests/llama/check-rpc.sh $(LLAMA_MODELS) $(RPC_CASE)

# ---- a server's work per token, counted under QEMU 7.2 (make bench-rpc; in no tier) ---------
TERM_EXIT_SHIM := $(BUILD)/measure/term_exit_shim.so
$(TERM_EXIT_SHIM): measure/llama/term_exit_shim.c $(BUILD)/probe.ok
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) -fPIC -shared $< -o $@

# The GQA Llama in 2 layers, as make bench-llama counts it (in 1 layer a prompt's last layer
# runs its FFN on one row only); RPC_BENCH_MODEL=llama-gqa counts the 1-layer test model.
RPC_BENCH_MODEL ?= llama-gqa-2l
bench-rpc: $(PLUGIN) $(HWPROBE_SHIM) $(TERM_EXIT_SHIM) $(LLAMA_MODELS)/.made $(LLAMA_PLUGIN_DEP) | sid-qemu ggml-deps
	@SID_QEMU=$(SID_QEMU) measure/llama/rpc-count.sh $(PLUGIN) \
	  $(abspath $(HWPROBE_SHIM)):$(abspath $(TERM_EXIT_SHIM)) $(GGML_ROOT) \
	  $(LLAMA_MODELS)/$(RPC_BENCH_MODEL).gguf $(BUILD)/measure/rpc/$(RPC_BENCH_MODEL) $(LLAMA_PLUGIN)
