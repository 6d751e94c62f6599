# Builds one libgemm_rvv.a from a folder of generated kernels and the runtime. Called by the
# top Makefile after the generator has run, so the wildcard below sees the generated files.
#   make -f mk/lib.mk GEN_DIR=build/gen OBJ_DIR=build/obj LIB=build/libgemm_rvv.a \
#        TARGET_CC=... TARGET_AR=... TARGET_CFLAGS=...

GEN_SRCS := $(sort $(wildcard $(GEN_DIR)/*.c))
RT_SRCS  := $(sort $(wildcard runtime/*.c))
OBJS     := $(patsubst $(GEN_DIR)/%.c,$(OBJ_DIR)/gen/%.o,$(GEN_SRCS)) \
            $(patsubst runtime/%.c,$(OBJ_DIR)/runtime/%.o,$(RT_SRCS))
# POSIX 2008 for pthread rwlocks under -std=c11.
CPPFLAGS := -D_POSIX_C_SOURCE=200809L -Iinclude -Iruntime

$(LIB): $(OBJS)
	@rm -f $@
	@echo "  AR  $@"
	@$(TARGET_AR) rcs $@ $^

$(OBJ_DIR)/gen/%.o: $(GEN_DIR)/%.c runtime/kernel.h
	@mkdir -p $(@D)
	@echo "  CC  $<"
	@$(TARGET_CC) $(TARGET_CFLAGS) $(CPPFLAGS) -c $< -o $@

$(OBJ_DIR)/runtime/%.o: runtime/%.c $(wildcard runtime/*.h include/*.h)
	@mkdir -p $(@D)
	@echo "  CC  $<"
	@$(TARGET_CC) $(TARGET_CFLAGS) $(CPPFLAGS) -c $< -o $@
