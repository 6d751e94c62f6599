# The example engine (examples/engine/), the shapes writer, and their tests. Included from the
# Makefile; see docs/engine.md.
#
#   make engine                 the library for $(SHAPES), installed into build/engine-install,
#                               and build/engine/gemm-rvv-engine linked against it (pkg-config)
#   make shapes-tool            build/host/gemm-rvv-shapes (host: writes shapes from config.json)
#   make models                 rewrite models/*.yaml and shapes.yaml from models/*.json
#   make test-models            check that they are in step, and the writer's bad-input cases (host)
#   make test-engine            test-models, bad model folders, Qwen3 at VLEN 256 against PyTorch
#   make check-engine           all three architectures at VLEN 128 and 256 and with
#                               GEMM_RVV_DISABLE=1, each against PyTorch and bit-identical
#                               (F16 KV cache), and at VLEN 256 with a BF16 cache

.PHONY: engine shapes-tool models test-models engine-deps test-engine check-engine

ENGINE_SRCS   := $(filter-out examples/engine/shapes.c,$(wildcard examples/engine/*.c))
ENGINE_HDRS   := $(wildcard examples/engine/*.h)
SHAPES_BIN    := $(BUILD)/host/gemm-rvv-shapes
# Debian's interpreter, which has python3-torch (a python3 earlier on PATH may not).
ENGINE_PYTHON ?= /usr/bin/python3

# ---- the shapes writer (host) ----------------------------------------------------------------
$(SHAPES_BIN): examples/engine/shapes.c examples/engine/config.c examples/engine/config.h | deps
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -D_XOPEN_SOURCE=700 $(filter %.c,$^) -ljansson -o $@
shapes-tool: $(SHAPES_BIN)

# Each shapes file of the project and the command line that writes it from its config.json.
MODEL_SHAPES := models/llama.yaml models/llama3-8b.yaml models/qwen2.5-0.5b.yaml shapes.yaml
SHAPES_ARGS_models/llama.yaml        := --model Llama-2-7B --batch 1,4,16 --prefill 128 models/llama.json
SHAPES_ARGS_models/llama3-8b.yaml    := --model Llama-3-8B --batch 1,8 --prefill 32 models/llama3-8b.json
SHAPES_ARGS_models/qwen2.5-0.5b.yaml := --model Qwen2.5-0.5B --batch 1 --prefill 16 models/qwen2.5-0.5b.json
SHAPES_ARGS_shapes.yaml              := --model Qwen3-0.6B --batch 1,4,16 --prefill 128,512 models/qwen3-0.6b.json

models: $(SHAPES_BIN)
	@set -e; $(foreach f,$(MODEL_SHAPES),$(SHAPES_BIN) -o $(f) $(SHAPES_ARGS_$(f)); echo "wrote $(f)";)

test-models: $(SHAPES_BIN) $(GEN_BIN)
	@tests/engine/check-shapes-tool.sh $(SHAPES_BIN) $(GEN_BIN)
	@set -e; $(foreach f,$(MODEL_SHAPES),$(SHAPES_BIN) $(SHAPES_ARGS_$(f)) | diff -u $(f) - || \
	  { echo "error: $(f) is out of step with its config.json: run make models"; exit 1; };) \
	  echo "models: $(words $(MODEL_SHAPES)) shapes files in step with their config.json"

# ---- the engine, against an installed library ------------------------------------------------
# engine_link PREFIX, OUTPUT: the engine built the way a user builds it, through pkg-config.
define engine_link
	@mkdir -p $(dir $(2))
	$(TARGET_CC) $(TARGET_CFLAGS) -Werror -D_POSIX_C_SOURCE=200809L $(ENGINE_SRCS) \
	  $$(PKG_CONFIG_LIBDIR=$(1)/lib/pkgconfig pkg-config --cflags --libs gemm_rvv) -ljansson -o $(2)
endef

ENGINE_PREFIX := $(abspath $(BUILD))/engine-install
$(BUILD)/engine/gemm-rvv-engine: $(ENGINE_SRCS) $(ENGINE_HDRS) lib
	@$(MAKE) --no-print-directory install PREFIX=$(ENGINE_PREFIX) WITH_GGML=0 > /dev/null
	$(call engine_link,$(ENGINE_PREFIX),$@)
engine: $(BUILD)/engine/gemm-rvv-engine

# ---- the engine test ---------------------------------------------------------------------------
# Its own library, from the tiny models' shapes (all three share their sizes) written by the
# shapes writer, made by the Makefile's own rules in a build folder of its own, and installed.
ENGINE_TEST   := $(BUILD)/engine-test
comma         := ,
ENGINE_TEST_PREFIX := $(abspath $(ENGINE_TEST))/install
ENGINE_PROMPT := 1,17,300,4000,52
ENGINE_STEPS  := 16

engine-deps:
	@tools/setup-deps.sh engine

$(ENGINE_TEST)/shapes.yaml: $(SHAPES_BIN) tests/engine/models/llama.json
	@mkdir -p $(@D)
	$(SHAPES_BIN) -o $@ --batch 1 --prefill $(words $(subst $(comma), ,$(ENGINE_PROMPT))) \
	  tests/engine/models/llama.json

$(ENGINE_TEST)/install/lib/libgemm_rvv.a: $(ENGINE_TEST)/shapes.yaml FORCE
	@$(MAKE) --no-print-directory install WITH_GGML=0 BUILD=$(ENGINE_TEST)/build SHAPES=$< \
	  PREFIX=$(ENGINE_TEST_PREFIX) > $(ENGINE_TEST)/install.log || { cat $(ENGINE_TEST)/install.log; exit 1; }

$(ENGINE_TEST)/gemm-rvv-engine: $(ENGINE_SRCS) $(ENGINE_HDRS) $(ENGINE_TEST)/install/lib/libgemm_rvv.a
	$(call engine_link,$(ENGINE_TEST_PREFIX),$@)

$(ENGINE_TEST)/models/.made: tests/engine/make_models.py tests/engine/safetensors_io.py \
                             $(wildcard tests/engine/models/*.json) | engine-deps
	@rm -rf $(@D)
	$(ENGINE_PYTHON) tests/engine/make_models.py tests/engine/models $(@D)
	@touch $@

# check_engine ARCHS, CONFIGS: tests/engine/check-engine.sh with the test's engine and models.
define check_engine
	@PYTHON=$(ENGINE_PYTHON) PROMPT=$(ENGINE_PROMPT) STEPS=$(ENGINE_STEPS) \
	  LOG_DIR=$(ENGINE_TEST)/logs tests/engine/check-engine.sh $(ENGINE_TEST)/gemm-rvv-engine \
	  $(ENGINE_TEST)/models "$(1)" "$(2)"
endef

test-engine: test-models $(ENGINE_TEST)/gemm-rvv-engine $(ENGINE_TEST)/models/.made
	$(call check_engine,qwen3,vlen=256)

check-engine: test-models $(ENGINE_TEST)/gemm-rvv-engine $(ENGINE_TEST)/models/.made
	$(call check_engine,llama qwen2 qwen3,vlen=128 vlen=256 vlen=256:disable vlen=256:bf16)

# ---- the engine on the host, under AddressSanitizer + UBSan ------------------------------------
# Linked against the host runtime (mk/host-runtime.mk: plain C tiles), so that its reading and
# error paths run with leak checks in seconds, without QEMU or PyTorch: bad model folders made
# by the test itself (a FIFO, an oversized header, bad arguments), each ending without a leak.
ENGINE_HOST := $(BUILD)/engine-host/gemm-rvv-engine
$(ENGINE_HOST): $(ENGINE_SRCS) $(ENGINE_HDRS) $(HOST_RT)/asan/libgemm_rvv.a
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_RT_CFLAGS) $(HOST_RT_SAN_asan) -D_POSIX_C_SOURCE=200809L -Iinclude -I$(HOST_RT)/gen \
	  $(ENGINE_SRCS) $(HOST_RT)/asan/libgemm_rvv.a \
	  -ljansson -lpthread -lm -o $@

.PHONY: test-engine-host
test-engine-host: $(ENGINE_HOST)
	@tests/engine/check-engine-host.sh $(ENGINE_HOST)
