# Tests of the toolchain set-up, included from the Makefile; both run from `make test`.
#   make test-setup-deps   the Debian archive read from apt sources; fetch errors and leftovers
#                          (the toolchain's and ggml's)
#   make test-sysheaders   a program including the system headers an engine uses: compiled with
#                          -Werror from the toolchain's headers only, then run

.PHONY: test-setup-deps test-sysheaders

test-setup-deps:
	@tests/setup-deps/test_archive.sh
	@tests/setup-deps/test_fetch_errors.sh
	@tests/setup-deps/test_ggml_fetch.sh

SYSHEADERS_BIN := $(BUILD)/sysheaders/engine_headers
# The fetched toolchain must have the riscv_hwprobe keys for BF16 (Linux >= 6.9 headers); a
# compiler of one's own (CROSS=) may have older ones.
SYSHEADERS_FLAGS := $(if $(TOOLCHAIN),-DREQUIRE_HWPROBE)

# -H lists each header opened. With the fetched toolchain every one outside the project must
# come from the toolchain's own folder (the symbolic links resolved): none from the host.
$(SYSHEADERS_BIN): tests/sysheaders/engine_headers.c $(wildcard include/*.h) $(BUILD)/probe.ok
	@mkdir -p $(@D)
	$(TARGET_CC) $(TARGET_CFLAGS) -Werror -D_GNU_SOURCE $(SYSHEADERS_FLAGS) -Iinclude -H $< \
	  -lpthread -o $@ 2> $@.headers || { cat $@.headers; exit 1; }
	@if [ -n "$(TOOLCHAIN)" ]; then \
	  top=$$(realpath '$(TOOLCHAIN)'); \
	  outside=$$(sed -n 's/^\.\.* //p' $@.headers | grep -v '^include/' | sort -u | \
	    while read -r h; do case "$$(realpath "$$h")" in "$$top"/*) ;; *) echo "$$h" ;; esac; done); \
	  if [ -n "$$outside" ]; then rm -f $@; \
	    echo "error: headers from outside the toolchain $(TOOLCHAIN):"; echo "$$outside"; exit 1; fi; \
	  echo "$$(sed -n 's/^\.\.* //p' $@.headers | sort -u | wc -l) headers, all from the project or $(TOOLCHAIN)"; \
	fi

test-sysheaders: $(SYSHEADERS_BIN)
ifeq ($(NATIVE),1)
	$(SYSHEADERS_BIN)
else
	QEMU_LD_PREFIX=$(QEMU_SYSROOT) qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0 $(SYSHEADERS_BIN) --expect-v
endif

