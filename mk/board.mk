# gemm-rvv-bench (apps/gemm-rvv-bench): the board benchmark, built with the library and installed by
# `make install`; the queries tools/target-cc and tools/riscv64-run make; and test-board, which
# `make test` runs: the README's build-and-run commands as written, the benchmark briefly among
# them (under QEMU its figures are emulated and say so).

BOARD_BENCH    := $(BUILD)/board/gemm-rvv-bench
BOARD_SRCS     := $(wildcard apps/gemm-rvv-bench/*.c)
# The generator's shapes-file reader, compiled for the target: --shapes takes the same files.
BOARD_GEN_SRCS := gen/shapes_yaml.c gen/yaml_bounds.c gen/diag.c gen/gate.c gen/target.c
BOARD_OBJS     := $(patsubst %.c,$(BUILD)/board/obj/%.o,$(BOARD_SRCS) $(BOARD_GEN_SRCS)) \
                  $(BUILD)/board/obj/default_shapes.o
BOARD_CPPFLAGS := -D_XOPEN_SOURCE=700 -D_DEFAULT_SOURCE -Iinclude -Igen -Iapps/gemm-rvv-bench

.PHONY: test-board print-target-cc print-qemu-sysroot

# The shapes file the library was generated from, compiled in: the default list to measure.
$(BUILD)/board/default_shapes.c: $(GEN_DIR)/manifest.json
	@mkdir -p $(@D)
	@{ echo '/* $(SHAPES), the shapes file of $(LIB), as a C string (mk/board.mk). */'; \
	   echo 'const char bench_default_shapes_name[] = "$(SHAPES)";'; \
	   echo 'const char bench_default_shapes[] ='; \
	   sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $(SHAPES); \
	   echo '    "";'; } > $@

$(BUILD)/board/obj/%.o: %.c $(wildcard apps/gemm-rvv-bench/*.h gen/*.h include/*.h) $(BUILD)/probe.ok
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) $(BOARD_CPPFLAGS) -c $< -o $@

# The one object with vector code (the bandwidth read, called only on a core with V).
$(BUILD)/board/obj/apps/gemm-rvv-bench/read_vector.o: apps/gemm-rvv-bench/read_vector.c apps/gemm-rvv-bench/read_vector.h $(BUILD)/probe.ok
	@mkdir -p $(@D)
	$(TARGET_CC) $(KERNEL_CFLAGS) $(BOARD_CPPFLAGS) -c $< -o $@

$(BUILD)/board/obj/default_shapes.o: $(BUILD)/board/default_shapes.c $(BUILD)/probe.ok
	$(TARGET_CC) $(TARGET_CFLAGS) -c $< -o $@

# libyaml linked statically: the program runs on a board that has no libyaml.
$(BOARD_BENCH): $(BOARD_OBJS) lib
	$(TARGET_CC) $(TARGET_CFLAGS) $(BOARD_OBJS) $(LIB) -l:libyaml.a -lpthread -lm -o $@

print-target-cc:
	@echo '$(TARGET_CC)'

print-qemu-sysroot:
	@echo '$(QEMU_SYSROOT)'

test-board: $(BOARD_BENCH)
	@BUILD=$(BUILD) NATIVE=$(NATIVE) tools/test-readme.sh README.md
