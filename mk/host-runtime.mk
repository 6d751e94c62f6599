# The runtime built for the host, with real plans, and its tests run under ThreadSanitizer and
# under AddressSanitizer + UBSan (tests/host-runtime/). Included from the Makefile;
# `make test-host-runtime`, part of `make test`.
#
# The plans come from the generator like every build's, for tests/host-runtime/shapes-host.yaml
# (lowered gate, small caches), with the host's plain C variants (gemm-rvv-gen --host-tiles,
# templates/host/): the same bits as the fallback, so the driver, the plans and the threads run
# under the sanitizers as they run on a board. The same mk/lib.mk builds the library.

HOST_RT          := $(BUILD)/host-runtime
HOST_RT_SHAPES   := tests/host-runtime/shapes-host.yaml
HOST_RT_CFLAGS   := -std=c11 -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror
HOST_RT_SAN_tsan := -fsanitize=thread
HOST_RT_SAN_asan := -fsanitize=address,undefined -fno-sanitize-recover=all
# No sanitizer: the fork test with the pool resized during forks, which GCC 12's AddressSanitizer
# cannot take (see tests/host-runtime/test_fork.c).
HOST_RT_SAN_plain :=
HOST_RT_PROGRAMS := test_threads test_fork test_settings test_host_kernels test_q8_0 \
                    test_running_calls test_lines test_split test_attention
# A program's source: tests/host-runtime/NAME.c, or the target test named here (run on the host
# runtime too, under the sanitizers).
HOST_RT_SRC_test_q8_0 := tests/target/test_q8_0.c
HOST_RT_SRC_test_attention := tests/target/test_attention.c
HOST_RT_TESTS    := $(foreach s,tsan asan,$(addprefix $(HOST_RT)/$(s)/,$(HOST_RT_PROGRAMS))) \
                    $(HOST_RT)/plain/test_fork
HOST_RT_SUPPORT  := tests/host-runtime/reference.c tests/target/testdata.c tests/target/child.c
# test_settings makes the library's locks slow or fail on request (-Wl,--wrap).
HOST_RT_LDFLAGS_test_settings := \
  -Wl,--wrap=pthread_mutex_lock,--wrap=pthread_rwlock_rdlock,--wrap=pthread_rwlock_wrlock
# Children forked by a threaded parent start threads of their own: ThreadSanitizer allows it
# with die_after_fork=0. atexit_sleep_ms=0: no second's wait at each child's exit (every test
# joins its threads before it ends).
HOST_RT_TSAN_OPTIONS := halt_on_error=1:second_deadlock_stack=1:die_after_fork=0:atexit_sleep_ms=0

# GCC 12's ThreadSanitizer cannot map its shadow memory when the kernel randomises addresses
# with more bits than it expects (vm.mmap_rnd_bits > 28 on newer kernels): run it with address
# randomisation off for this process, where setarch may do that.
HOST_RT_NO_ASLR   = $(shell setarch $$(uname -m) -R true 2>/dev/null && echo setarch $$(uname -m) -R)

.PHONY: test-host-runtime
.SECONDARY: $(HOST_RT)/tsan/libgemm_rvv.a $(HOST_RT)/asan/libgemm_rvv.a $(HOST_RT)/plain/libgemm_rvv.a

$(HOST_RT)/gen/manifest.json: $(GEN_BIN) $(TEMPLATES) $(HOST_RT_SHAPES)
	@rm -rf $(@D)
	$(GEN_BIN) --host-tiles -o $(@D) $(HOST_RT_SHAPES)

$(HOST_RT)/%/libgemm_rvv.a: $(HOST_RT)/gen/manifest.json FORCE
	@$(MAKE) --no-print-directory -f mk/lib.mk GEN_DIR=$(HOST_RT)/gen OBJ_DIR=$(HOST_RT)/$*/obj \
	  LIB=$@ TARGET_CC='$(HOST_CC)' TARGET_AR=ar TARGET_CFLAGS='$(HOST_RT_CFLAGS) $(HOST_RT_SAN_$*)' \
	  KERNEL_CFLAGS='$(HOST_RT_CFLAGS) $(HOST_RT_SAN_$*)'

# $(1): tsan, asan or plain, $(2): the program; the kernel test reaches the driver through
# runtime/'s headers.
define host_rt_program
$(HOST_RT)/$(1)/$(2): $(or $(HOST_RT_SRC_$(2)),tests/host-runtime/$(2).c) $(HOST_RT_SUPPORT) $(wildcard tests/host-runtime/*.h) \
                      tests/target/testdata.h tests/target/child.h include/gemm_rvv.h \
                      $(HOST_RT)/$(1)/libgemm_rvv.a
	$(HOST_CC) $(HOST_RT_CFLAGS) $(HOST_RT_SAN_$(1)) -D_POSIX_C_SOURCE=200809L -Iinclude \
	  -Itests/target -Iruntime -I$(HOST_RT)/gen $$< $(HOST_RT_SUPPORT) $(HOST_RT)/$(1)/libgemm_rvv.a \
	  $(HOST_RT_LDFLAGS_$(2)) -lcmocka -lpthread -lm -o $$@
endef
$(foreach s,tsan asan,$(foreach p,$(HOST_RT_PROGRAMS),$(eval $(call host_rt_program,$(s),$(p)))))
$(eval $(call host_rt_program,plain,test_fork))

test-host-runtime: $(HOST_RT_TESTS)
	@set -e; for p in $(HOST_RT_PROGRAMS); do \
	  echo "=== host runtime $$p under ThreadSanitizer ==="; \
	  TSAN_OPTIONS=$(HOST_RT_TSAN_OPTIONS) $(HOST_RT_NO_ASLR) $(HOST_RT)/tsan/$$p; \
	  echo "=== host runtime $$p under AddressSanitizer + UBSan ==="; \
	  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(HOST_RT)/asan/$$p; \
	done
	@echo "=== host runtime test_fork without a sanitizer ==="
	@$(HOST_RT)/plain/test_fork

