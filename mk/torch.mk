# PyTorch on the board (python/gemm_rvv, docs/pytorch.md): the shared library the package loads,
# its install, and its tests under QEMU with sid's riscv64 python3-torch, extracted by
# tools/setup-deps.sh torch into $(TOOLCHAIN_DIR)/torch. Included from the Makefile.
#   make shared       $(SHARED_LIB), the kernels of $(SHAPES)
#   make test-torch   the package's tests under QEMU (make test-full)

.PHONY: shared install-shared install-python torch-deps test-torch

# A shared library is linked from the position-independent build of the same generated code
# that the ggml plugin links (mk/ggml.mk's plugin_rules: its symbols hidden but for the public
# header's), beside it: no second compile. The soname is the full version: releases before 1.0
# may change the interface.
SHARED_NAME   := libgemm_rvv.so.$(VERSION)
SHARED_LIB    := $(BUILD)/ggml/$(SHARED_NAME)

$(BUILD)/%/$(SHARED_NAME): $(BUILD)/%/libgemm_rvv.a
	$(TARGET_CC) $(TARGET_CFLAGS) -shared -Wl,-soname,$(@F) -Wl,-z,defs -Wl,-Bsymbolic-functions \
	  -Wl,--whole-archive $< -Wl,--no-whole-archive -lpthread -lm -o $@

shared: $(SHARED_LIB)

# Installed beside the static library under its versioned name only (no libgemm_rvv.so link),
# so that -lgemm_rvv and gemm_rvv.pc keep linking the static one; gemm_rvv-shared.pc links this.
install-shared: $(SHARED_LIB)
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(PREFIX)/lib/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@SHARED@|$(SHARED_NAME)|' \
	  mk/gemm_rvv-shared.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gemm_rvv-shared.pc

# The Python package goes into PYTHON_DIR (a folder for PYTHONPATH, or a site-packages), with
# the path and version of the library it loads written into it.
PYTHON_DIR ?= $(PREFIX)/lib/python
PYTHON_SRCS := $(wildcard python/gemm_rvv/*.py)
install-python: install-shared
	install -d $(DESTDIR)$(PYTHON_DIR)/gemm_rvv
	install -m 644 $(PYTHON_SRCS) $(DESTDIR)$(PYTHON_DIR)/gemm_rvv/
	printf '# Written by make install: the library this package loads.\nLIBRARY = "%s"\nVERSION = "%s"\n' \
	  '$(PREFIX)/lib/$(SHARED_NAME)' '$(VERSION)' > $(DESTDIR)$(PYTHON_DIR)/gemm_rvv/_installed.py

install: install-python

# ---- tests under QEMU ------------------------------------------------------------------------
TORCH_ROOT    := $(TOOLCHAIN_DIR)/torch/root
torch-deps:
	@tools/setup-deps.sh torch $(TOOLCHAIN_DIR)

# The tests' library: tests/torch/shapes.yaml, built position-independent as the plugin's is
# (mk/ggml.mk's plugin_rules), linked shared and installed with the package into
# $(TORCH_TEST)/install, as `make install` installs them.
TORCH_TEST        := $(BUILD)/torch-test
TORCH_TEST_SHAPES := tests/torch/shapes.yaml
TORCH_TEST_PREFIX := $(abspath $(TORCH_TEST))/install
$(TORCH_TEST)/gen/manifest.json: $(GEN_BIN) $(TEMPLATES) $(TORCH_TEST_SHAPES)
	$(GEN_BIN) -o $(@D) $(TORCH_TEST_SHAPES) > /dev/null
$(eval $(call plugin_rules,torch-test,$(TORCH_TEST)/gen))
$(TORCH_TEST)/install/.made: $(TORCH_TEST)/$(SHARED_NAME) $(PYTHON_SRCS) mk/torch.mk
	@$(MAKE) --no-print-directory install-python BUILD=$(BUILD) PREFIX=$(TORCH_TEST_PREFIX) \
	  SHARED_LIB=$< > /dev/null
	@touch $@

# The tests run sid's riscv64 python3 under sid's QEMU (tools/torch-python); on a riscv64
# machine, its own python3 with python3-torch and python3-transformers.
TORCH_PYTHON_ENV = TORCH_ROOT=$(if $(NATIVE),,$(TORCH_ROOT)) QEMU=$(SID_QEMU) \
                   PYTHONPATH=$(TORCH_TEST_PREFIX)/lib/python
# A stand-in library of another version, which the package must refuse.
$(TORCH_TEST)/other-version.so: tests/torch/other_version.c $(BUILD)/probe.ok
	$(TARGET_CC) $(TARGET_CFLAGS) -fPIC -shared $< -o $@
# The README's PyTorch block runs `make install` itself: what it installs is built here first,
# by this make, so that no two makes build one file at once (the example's install builds the
# shared library for the same reason).
test-torch: $(TORCH_TEST)/install/.made $(TORCH_TEST)/other-version.so lib $(BOARD_BENCH) \
            $(SHARED_LIB) $(if $(filter 1,$(WITH_GGML)),$(GGML_PLUGIN)) | \
            $(if $(NATIVE),,torch-deps $(if $(TOOLCHAIN),sid-qemu))
	@$(TORCH_PYTHON_ENV) OTHER_VERSION=$(abspath $(TORCH_TEST))/other-version.so \
	  LOG_DIR=$(TORCH_TEST)/logs tests/torch/run.sh
	@$(TORCH_PYTHON_ENV) BUILD=$(BUILD) NATIVE=$(NATIVE) MARK="make test-torch runs this block" \
	  tools/test-readme.sh README.md
$(BUILD)/example/linear: $(SHARED_LIB)

# In make test-full only: the import of torch alone takes about 11 s of CPU under QEMU (80 s
# the first time, which compiles the bytecode), and the fetch 208 MB (docs/testing.md).
FULL_CHECKS += test-torch
FULL_DEPS   += torch-deps

# Instructions per prompt and decoded token of the tests' tiny Llama and a Qwen2-shaped model,
# patched and unpatched, under QEMU 7.2 with the instruction counter (docs/measurements.md,
# "PyTorch"; about 90 min). Its library: measure/torch/shapes.yaml, installed as the tests' is.
# TORCH_BENCH_MODELS="llama" counts the tiny Llama alone.
TORCH_BENCH        := $(BUILD)/torch-bench
TORCH_BENCH_SHAPES := measure/torch/shapes.yaml
TORCH_BENCH_MODELS ?= llama qwen2
$(TORCH_BENCH)/gen/manifest.json: $(GEN_BIN) $(TEMPLATES) $(TORCH_BENCH_SHAPES)
	$(GEN_BIN) -o $(@D) $(TORCH_BENCH_SHAPES) > /dev/null
$(eval $(call plugin_rules,torch-bench,$(TORCH_BENCH)/gen))
$(TORCH_BENCH)/install/.made: $(TORCH_BENCH)/$(SHARED_NAME) $(PYTHON_SRCS) mk/torch.mk
	@$(MAKE) --no-print-directory install-python BUILD=$(BUILD) \
	  PREFIX=$(abspath $(TORCH_BENCH))/install SHARED_LIB=$< > /dev/null
	@touch $@
.PHONY: bench-torch
bench-torch: $(TORCH_BENCH)/install/.made $(PLUGIN) | torch-deps
	@PYTHONPATH=$(abspath $(TORCH_BENCH))/install/lib/python TORCH_ROOT=$(TORCH_ROOT) \
	  measure/torch/count.sh $(PLUGIN) $(MEASURE)/torch-count.csv $(TORCH_BENCH_MODELS)
