# Builds one libgemm_rvv.a from a folder of generated code and the runtime. Called by the top
# Makefile after the generator has run, so the wildcard below sees the generated files.
#   make -f mk/lib.mk GEN_DIR=build/gen OBJ_DIR=build/obj LIB=build/libgemm_rvv.a \
#        TARGET_CC=... TARGET_AR=... TARGET_CFLAGS=... KERNEL_CFLAGS=...
# The runtime is built with TARGET_CFLAGS (the base ISA, rv64gc: it must run on a core
# without V, and GCC vectorises plain C on its own when V is allowed); only the generated
# objects get KERNEL_CFLAGS (rv64gcv), and the runtime calls them only where the core has V.
# A variant's tiles (bf16_tiles_NAME.c) get the -march of its line in templates/variants.txt
# instead ("host": KERNEL_CFLAGS as given), and the runtime calls each only where the core
# has what that -march names.
VARIANTS       ?= templates/variants.txt
variant_march   = $(shell awk '!/^\#/ && $$1 == "$(1)" { print $$3 }' $(VARIANTS))

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

# The BF16 tiles are written in the order an in-order dual-issue core (the K1's X60) should
# run them (templates/base/tiles.c.in): GCC's scheduling passes, which know no such core,
# would group the activation loads and the widening apart from the FMAs again, and TER would
# move address arithmetic next to each load; neither runs on them. Nor do IVOPTs and
# straight-line strength reduction, which would rewrite the templates' addresses (each step
# placed where it waits for no FMA) into sums beside the loads and chains of adds; the tile
# ends step their row pointers themselves (templates/tile_ends.c.in). Without out-of-SSA's
# coalescing of variables the 7x2 tile keeps its accumulators in place (else vmv2r copies
# every trip). Figures: docs/measurements.md, "Cycles of the tiles on the X60".
TILE_ORDER_CFLAGS := -fno-schedule-insns -fno-schedule-insns2 -fno-tree-ter -fno-tree-coalesce-vars \
                     -fno-ivopts -fno-tree-slsr
$(OBJ_DIR)/gen/bf16_tiles_%.o: $(GEN_DIR)/bf16_tiles_%.c $(GEN_DIR)/gr_contract.h $(VARIANTS)
	@mkdir -p $(@D)
	$(eval march := $(call variant_march,$*))
	$(if $(march),,$(error $(VARIANTS) has no variant "$*" (for $<)))
	@echo "  CC  $< ($(if $(filter host,$(march)),plain C,-march=$(march)), as ordered)"
	@$(TARGET_CC) $(if $(filter host,$(march)),$(KERNEL_CFLAGS),$(filter-out -march=%,$(KERNEL_CFLAGS)) \
	  -march=$(march)) $(TILE_ORDER_CFLAGS) $(CPPFLAGS) -c $< -o $@

# The Q8_0 tiles: GCC's first scheduling pass interleaves their e8 products with their e16
# sums (a vsetvli between every two) and runs out of registers (spills); without it each
# group of k runs at one vtype after another, as written, and nothing spills. Nor do the
# second pass and TER run: they would load each activation just before its product, into one
# register, which the X60 waits for (templates/base/q8_tile_r*.c.in); nor tree sinking, which
# moves the widened scales' load from the last group's sums to its use. Nor IVOPTs, which
# would turn the tile of one row's one pointer through its rows and the next block's scales
# into an induction variable a load and spill the scalars the loop holds; without out-of-SSA's
# coalescing the first group's pair sums stay out of the int32 sum's registers (else a vmv2r
# every block). Their quantiser includes the runtime's scalar scale rule.
Q8_ORDER_CFLAGS := -fno-schedule-insns -fno-schedule-insns2 -fno-tree-ter -fno-tree-sink -fno-ivopts \
                   -fno-tree-coalesce-vars
$(OBJ_DIR)/gen/q8_0_tiles.o: $(GEN_DIR)/q8_0_tiles.c $(GEN_DIR)/gr_contract.h runtime/q8_0_scale.h
	@mkdir -p $(@D)
	@echo "  CC  $< (as ordered)"
	@$(TARGET_CC) $(KERNEL_CFLAGS) $(Q8_ORDER_CFLAGS) $(CPPFLAGS) -c $< -o $@

# The attention tiles repeat the runtime's exponential (runtime/attn_exp.h) operation for operation.
$(OBJ_DIR)/gen/attention_tiles.o: $(GEN_DIR)/attention_tiles.c $(GEN_DIR)/gr_contract.h runtime/attn_exp.h
	@mkdir -p $(@D)
	@echo "  CC  $<"
	@$(TARGET_CC) $(KERNEL_CFLAGS) $(CPPFLAGS) -c $< -o $@

$(OBJ_DIR)/runtime/%.o: runtime/%.c $(wildcard runtime/*.h include/*.h) $(GEN_DIR)/gr_contract.h
	@mkdir -p $(@D)
	@echo "  CC  $<"
	@$(TARGET_CC) $(TARGET_CFLAGS) $(CPPFLAGS) -c $< -o $@
