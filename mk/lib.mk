# Builds one libgemm_rvv.a from a folder of generated code and the runtime. Called by the top
# Makefile after the generator has run, so the wildcard below sees the generated files.
#   make -f mk/lib.mk GEN_DIR=build/gen OBJ_DIR=build/obj LIB=build/libgemm_rvv.a \
#        TARGET_CC=... TARGET_AR=... TARGET_CFLAGS=... KERNEL_CFLAGS=...
# The runtime is built with TARGET_CFLAGS (the base ISA, rv64gc: it must run on a core
# without V, and GCC vectorises plain C on its own when V is allowed); only the generated
# objects get KERNEL_CFLAGS (rv64gcv), and the runtime calls them only where the core has V.
# The Zvfbfwma variant's tiles get -march=$(ZVFBFWMA_MARCH) instead, and the runtime calls
# them only where the core has Zvfbfwma.
ZVFBFWMA_MARCH ?= rv64gcv_zvfbfwma

GEN_SRCS := $(sort $(wildcard $(GEN_DIR)/*.c))
RT_SRCS  := $(sort $(wildcard runtime/*.c))
OBJS     := $(patsubst $(GEN_DIR)/%.c,$(OBJ_DIR)/gen/%.o,$(GEN_SRCS)) \
            $(patsubst runtime/%.c,$(OBJ_DIR)/runtime/%.o,$(RT_SRCS))
# POSIX 2008 for pthread rwlocks under -std=c11.
CPPFLAGS := -D_POSIX_C_SOURCE=200809L -D_ISOC11_SOURCE -Iinclude -Iruntime -I$(GEN_DIR)

$(LIB): $(OBJS)
	@rm -f $@
	@echo "  AR  $@"
	@$(TARGET_AR) rcs $@ $^

$(OBJ_DIR)/gen/%.o: $(GEN_DIR)/%.c $(GEN_DIR)/gr_contract.h
	@mkdir -p $(@D)
	@echo "  CC  $<"
	@$(TARGET_CC) $(KERNEL_CFLAGS) $(CPPFLAGS) -c $< -o $@

$(OBJ_DIR)/gen/bf16_tiles_zvfbfwma.o: $(GEN_DIR)/bf16_tiles_zvfbfwma.c $(GEN_DIR)/gr_contract.h
	@mkdir -p $(@D)
	@echo "  CC  $< (-march=$(ZVFBFWMA_MARCH))"
	@$(TARGET_CC) $(filter-out -march=%,$(KERNEL_CFLAGS)) -march=$(ZVFBFWMA_MARCH) $(CPPFLAGS) \
	  -c $< -o $@

$(OBJ_DIR)/runtime/%.o: runtime/%.c $(wildcard runtime/*.h include/*.h) $(GEN_DIR)/gr_contract.h
	@mkdir -p $(@D)
	@echo "  CC  $<"
	@$(TARGET_CC) $(TARGET_CFLAGS) $(CPPFLAGS) -c $< -o $@
