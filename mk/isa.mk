# The Zvfbfwma side of the build and of `make test`, included from the Makefile.
#
# The variant's -march is its line of templates/variants.txt. GCC 15 takes
# -march=rv64gcv_zvfbfwma and implies Zvfbfmin, Zfbfmin (flh/fsh/fmv of a BF16
# scalar, which vfwmaccbf16.vf needs) and Zfhmin from it; nothing else needs naming.
ZVFBFWMA_MARCH  := $(shell awk '$$1 == "zvfbfwma" { print $$3 }' templates/variants.txt)
ZVFBFWMA_CFLAGS  = $(filter-out -march=%,$(KERNEL_CFLAGS)) -march=$(ZVFBFWMA_MARCH)

# The vfwmaccbf16 numerics test is built for the extension as a whole (the generic rule builds
# for rv64gc, which has no BF16 intrinsics). -ffp-contract=off keeps its reference products
# rounded on their own, as the fallback's first product is.
$(BUILD)/test/test_bf16_fma: tests/target/test_bf16_fma.c $(TARGET_SUPPORT) $(wildcard tests/target/*.h) $(TEST_LIB)
	$(TARGET_CC) $(ZVFBFWMA_CFLAGS) -ffp-contract=off -Werror -D_POSIX_C_SOURCE=200809L \
	  -D_ISOC11_SOURCE -Iinclude -Iruntime -I$(BUILD)/test/gen -Itests/target $< $(TARGET_SUPPORT) \
	  $(TEST_LIB) -lcmocka -lm -lpthread -o $@

# sid's QEMU (11.x) runs Zvfbfwma; Debian 12's 7.2 does not. With the fetched toolchain it is
# fetched next to it and tools/run-target-tests.sh adds its configurations; elsewhere pass
# SID_QEMU=/path/to/qemu-riscv64 (11.x) to get them.
ifdef TOOLCHAIN
SID_QEMU_DIR ?= $(TOOLCHAIN_DIR)
SID_QEMU     ?= $(SID_QEMU_DIR)/sid-qemu/usr/bin/qemu-riscv64
.PHONY: sid-qemu
sid-qemu:
	@tools/setup-deps.sh sid-qemu $(SID_QEMU_DIR) > /dev/null
test-target test-target-full: | sid-qemu
endif
export SID_QEMU
