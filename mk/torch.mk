# PyTorch on the board (python/gemm_rvv, docs/pytorch.md): the shared library the package loads,
# its install, and its tests under QEMU with sid's riscv64 python3-torch, extracted by
# tools/setup-deps.sh torch into $(TOOLCHAIN_DIR)/torch. Included from the Makefile.
#   make shared       $(SHARED_LIB), the kernels of $(SHAPES)
#   make test-torch   the package's tests under QEMU (make test-full)

.PHONY: shared install-shared install-python torch-deps test-torch

# The shared library is linked from the ggml plugin's position-independent build of the same
# generated code (mk/ggml.mk; its symbols are hidden but for the public header's): no second
# compile. Its soname is the full version: releases before 1.0 may change the interface.
SHARED_NAME   = libgemm_rvv.so.$(VERSION)
SHARED_LIB    = $(BUILD)/shared/$(SHARED_NAME)
SHARED_PIC    := $(BUILD)/ggml/libgemm_rvv.a

$(BUILD)/shared/libgemm_rvv.so.%: $(SHARED_PIC)
	@mkdir -p $(@D)
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
