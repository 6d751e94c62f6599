# The ggml backend plugin (plugins/ggml): sid's riscv64 ggml and llama.cpp it is built against
# and tested with, extracted by tools/setup-deps.sh ggml into $(TOOLCHAIN_DIR)/ggml.

GGML_ROOT       := $(TOOLCHAIN_DIR)/ggml/root
GGUF_PYTHONPATH := $(TOOLCHAIN_DIR)/ggml/python/usr/lib/python3/dist-packages

.PHONY: ggml-deps
ggml-deps:
	@tools/setup-deps.sh ggml $(TOOLCHAIN_DIR)
