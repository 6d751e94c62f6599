# The ggml backend plugin (plugins/ggml): sid's riscv64 ggml and llama.cpp it is built against
# and tested with, extracted by tools/setup-deps.sh ggml into $(TOOLCHAIN_DIR)/ggml.
#   make ggml-plugin     $(GGML_PLUGIN), the kernels of $(SHAPES), for GGML_BACKEND_PATH
#   make test-ggml       ggml's test-backend-ops on it under sid's QEMU, and the refusals
#   make test-ggml-full  the same in more vector lengths and with Zvfbfwma

GGML_ROOT       := $(TOOLCHAIN_DIR)/ggml/root
GGUF_PYTHONPATH := $(TOOLCHAIN_DIR)/ggml/python/usr/lib/python3/dist-packages
# What the plugin is built against: on a riscv64 machine its own ggml (Debian's libggml-dev),
# elsewhere the extracted root.
GGML_SYSROOT    := $(if $(NATIVE),,$(GGML_ROOT))
GGML_LIBDIR     := $(GGML_SYSROOT)/usr/lib/riscv64-linux-gnu

.PHONY: ggml-deps ggml-plugin install-ggml-plugin test-ggml test-ggml-full
ggml-deps:
	@tools/setup-deps.sh ggml $(TOOLCHAIN_DIR)

ifdef NATIVE
$(GGML_SYSROOT)/usr/include/ggml-backend.h:
	@echo "error: ggml's headers are missing: apt-get install libggml-dev (Debian sid), or WITH_GGML=0" >&2
	@exit 1
else
$(GGML_SYSROOT)/usr/include/ggml-backend.h:
	@tools/setup-deps.sh ggml $(TOOLCHAIN_DIR)
endif

# The plugin is a shared object: the library goes into it built position-independent, with
# its symbols hidden, from the same generated code as $(LIB) (its own object folder).
PIC_FLAGS     := -fPIC -fvisibility=hidden
GGML_PLUGIN   := $(BUILD)/ggml/libggml-gemm-rvv.so
PLUGIN_SRCS   := $(wildcard plugins/ggml/*.c)
PLUGIN_CFLAGS  = $(TARGET_CFLAGS) $(PIC_FLAGS) -D_POSIX_C_SOURCE=200809L -D_ISOC11_SOURCE \
                 -Iinclude -Iplugins/ggml -isystem $(GGML_SYSROOT)/usr/include
# Only ggml_backend_init is exported; libggml-base comes from the process that loads it.
PLUGIN_LDFLAGS = -shared -Wl,--exclude-libs,ALL -Wl,-z,defs -L$(GGML_LIBDIR) \
                 -Wl,-rpath-link,$(GGML_LIBDIR) -lggml -lggml-base -lpthread -lm

$(BUILD)/ggml/obj/%.o: plugins/ggml/%.c $(wildcard plugins/ggml/*.h include/*.h) \
                       $(GGML_SYSROOT)/usr/include/ggml-backend.h $(BUILD)/probe.ok
	@mkdir -p $(@D)
	$(TARGET_CC) $(PLUGIN_CFLAGS) -Werror -c $< -o $@

PLUGIN_OBJS := $(patsubst plugins/ggml/%.c,$(BUILD)/ggml/obj/%.o,$(PLUGIN_SRCS))

# plugin_rules NAME GEN_DIR: $(BUILD)/NAME/libgemm_rvv.a, position-independent, from GEN_DIR,
# and $(BUILD)/NAME/libggml-gemm-rvv.so linked with it.
define plugin_rules
$(BUILD)/$(1)/libgemm_rvv.a: $(2)/manifest.json $(BUILD)/probe.ok FORCE
	+@$$(LIB_MAKE) GEN_DIR=$(2) OBJ_DIR=$(BUILD)/$(1)/obj LIB=$$@ \
	  TARGET_CFLAGS='$$(TARGET_CFLAGS) $(PIC_FLAGS)' KERNEL_CFLAGS='$$(KERNEL_CFLAGS) $(PIC_FLAGS)'

$(BUILD)/$(1)/libggml-gemm-rvv.so: $(PLUGIN_OBJS) $(BUILD)/$(1)/libgemm_rvv.a
	$$(TARGET_CC) $$(TARGET_CFLAGS) $(PLUGIN_OBJS) $(BUILD)/$(1)/libgemm_rvv.a $$(PLUGIN_LDFLAGS) -o $$@
endef

# The user's plugin: the kernels of $(SHAPES) (make gen), as `make lib` builds them.
$(eval $(call plugin_rules,ggml,$(GEN_DIR)))

ggml-plugin: $(GGML_PLUGIN)
	@echo "built $(GGML_PLUGIN) ($$(grep -c '"file"' $(GEN_DIR)/manifest.json) plans from $$($(MANIFEST_SOURCE)))"

# Where ggml's users look for it: GGML_BACKEND_PATH=$(PREFIX)/lib/ggml/libggml-gemm-rvv.so.
install-ggml-plugin: $(GGML_PLUGIN)
	install -d $(DESTDIR)$(PREFIX)/lib/ggml
	install -m 755 $(GGML_PLUGIN) $(DESTDIR)$(PREFIX)/lib/ggml/

# Test plugins: one with plans for the (N, K) of test-backend-ops' 2-D BF16 MUL_MAT cases, one
# for shapes no case has (it must decline every weight).
GGML_TEST_SHAPES  := tests/ggml/shapes-backend-ops.yaml
GGML_OTHER_SHAPES := tests/ggml/shapes-other.yaml
$(BUILD)/ggml-test/gen/manifest.json: $(GEN_BIN) $(TEMPLATES) $(GGML_TEST_SHAPES)
	$(GEN_BIN) -o $(@D) $(GGML_TEST_SHAPES) > /dev/null
$(BUILD)/ggml-other/gen/manifest.json: $(GEN_BIN) $(TEMPLATES) $(GGML_OTHER_SHAPES)
	$(GEN_BIN) -o $(@D) $(GGML_OTHER_SHAPES) > /dev/null
$(eval $(call plugin_rules,ggml-test,$(BUILD)/ggml-test/gen))
$(eval $(call plugin_rules,ggml-other,$(BUILD)/ggml-other/gen))

# A libggml-base stand-in that reports another ggml release, preloaded in front of the real
# one: the plugin must refuse to load into it.
$(BUILD)/ggml-test/other-release.so: tests/ggml/other_release.c $(BUILD)/probe.ok
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) -fPIC -shared $< -o $@

# The plugin driven through ggml's public API only (ggml.h, ggml-backend.h, ggml-alloc.h),
# against ggml's CPU backend in the same process: a ggml program like llama.cpp, linked with
# libggml and libggml-base, no header of the plugin's.
GGML_API_TEST    := $(BUILD)/ggml-test/plugin_api
GGML_API_CFLAGS   = $(TARGET_CFLAGS) -D_POSIX_C_SOURCE=200809L -isystem $(GGML_SYSROOT)/usr/include
GGML_API_LDFLAGS  = -L$(GGML_LIBDIR) -Wl,-rpath-link,$(GGML_LIBDIR) -lggml -lggml-base -lpthread -lm
GGML_API_SRC      = $(wildcard tests/ggml/plugin_api/*.c)
$(GGML_API_TEST): $(GGML_API_SRC) tests/ggml/plugin_api/harness.h \
                  $(GGML_SYSROOT)/usr/include/ggml-backend.h $(BUILD)/probe.ok
	@mkdir -p $(@D)
	$(TARGET_CC) $(GGML_API_CFLAGS) -Werror $(GGML_API_SRC) $(GGML_API_LDFLAGS) -o $@

GGML_TEST_DEPS = $(BUILD)/ggml-test/libggml-gemm-rvv.so $(BUILD)/ggml-other/libggml-gemm-rvv.so \
                 $(BUILD)/ggml-test/other-release.so $(GGML_API_TEST)
ifdef TOOLCHAIN
test-ggml test-ggml-full: | sid-qemu
endif
GGML_TEST_ENV  = GGML_ROOT=$(GGML_ROOT) SID_QEMU=$(SID_QEMU) LOG_DIR=$(BUILD)/ggml-test/logs

test-ggml: $(GGML_TEST_DEPS)
	@$(GGML_TEST_ENV) tests/ggml/run.sh $(GGML_TEST_DEPS) quick

test-ggml-full: $(GGML_TEST_DEPS)
	@$(GGML_TEST_ENV) tests/ggml/run.sh $(GGML_TEST_DEPS) full
