#!/usr/bin/env bash
# Runs a target program at one vector length: under QEMU user mode (QEMU_SYSROOT: the target's
# sysroot, for the dynamic loader and libjansson), or directly when NATIVE=1 (a riscv64 machine).
# Usage: tests/engine/run-target.sh VLEN PROGRAM [ARG]...
set -u
vlen=$1; shift
if [ "${NATIVE:-0}" = 1 ]; then exec "$@"; fi
QEMU_LD_PREFIX="${QEMU_SYSROOT:-}" exec qemu-riscv64 -cpu "rv64,v=true,vext_spec=v1.0,vlen=$vlen" "$@"
