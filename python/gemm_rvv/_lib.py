"""The shared library libgemm_rvv.so, loaded with ctypes, and the C calls the package uses.

Which library: GEMM_RVV_LIBRARY from the environment, else the one `make install` wrote into
_installed.py beside this file. It must be the version the package was installed with: the
package passes its buffers by the layout of that version's header (docs/pytorch.md).
"""
import ctypes
import os

try:
    from . import _installed
except ImportError:  # a source tree, not installed: only GEMM_RVV_LIBRARY can name the library
    _installed = None

VERSION = _installed.VERSION if _installed else None

# gemm_rvv_type
F32, BF16 = 0, 1
STATUS_NAMES = {0: "OK", 1: "ERR_NULL", 2: "ERR_SIZE", 3: "ERR_STRIDE", 4: "ERR_OVERFLOW",
                5: "ERR_TYPE", 6: "ERR_NOMEM", 7: "ERR_THREADS", 8: "ERR_ISA", 9: "ERR_ALIAS",
                10: "ERR_BUFFER", 11: "ERR_RANGE", 12: "ERR_FORMAT", 13: "ERR_BUSY"}


class LibraryError(ImportError):
    """The shared library cannot be used: missing, not loadable, of another version, or closed."""


class GemmRvvError(RuntimeError):
    """A call into the library returned a status other than GEMM_RVV_OK."""

    def __init__(self, call, status, text):
        super().__init__(f"gemm_rvv: {call} failed: GEMM_RVV_{STATUS_NAMES.get(status, status)} "
                         f"({text})")
        self.status = status


_i64, _p, _sz = ctypes.c_int64, ctypes.c_void_p, ctypes.c_size_t
# name: (restype, argtypes), as include/gemm_rvv.h declares them.
_SIGNATURES = {
    "gemm_rvv_version": (ctypes.c_char_p, []),
    "gemm_rvv_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "gemm_rvv_isa": (ctypes.c_char_p, []),
    "gemm_rvv_kernels_active": (ctypes.c_int, []),
    "gemm_rvv_weight_bytes": (ctypes.c_int, [_i64, _i64, ctypes.POINTER(_sz)]),
    "gemm_rvv_weight_create_in": (ctypes.c_int, [_i64, _i64, _p, _sz, ctypes.POINTER(_p)]),
    "gemm_rvv_weight_write": (ctypes.c_int, [_p, _p, _sz, _sz]),
    "gemm_rvv_weight_free": (ctypes.c_int, [_p]),
    "gemm_rvv_linear": (ctypes.c_int, [_p, _i64, _i64, _p, _p, _p, _i64, ctypes.c_int]),
    "gemm_rvv_linear_plain": (ctypes.c_int, [_p, _i64, _i64, _p, _i64, _i64, _i64, _p, _p, _i64,
                                             ctypes.c_int]),
    "gemm_rvv_round_bf16": (ctypes.c_int, [_p, _i64, _p]),
    "gemm_rvv_plan_buckets": (_sz, [_i64, _i64, ctypes.POINTER(_i64), _sz]),
    "gemm_rvv_set_threads": (ctypes.c_int, [ctypes.c_int]),
    "gemm_rvv_get_threads": (ctypes.c_int, []),
}


def library_path():
    """The path of the library the package loads."""
    path = os.environ.get("GEMM_RVV_LIBRARY") or (_installed.LIBRARY if _installed else None)
    if not path:
        raise LibraryError("gemm_rvv: no library to load: this copy of the package was not "
                           "installed by `make install` (which records the library's path); "
                           "set GEMM_RVV_LIBRARY=/path/to/libgemm_rvv.so.VERSION")
    return path


def _load():
    path = library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise LibraryError(f"gemm_rvv: cannot load the library {path}: {e}. Install it with "
                           "`make install PREFIX=...` (it installs the package with it), or set "
                           "GEMM_RVV_LIBRARY to the libgemm_rvv.so.VERSION to use") from None
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name, None)
        if fn is None:
            raise LibraryError(f"gemm_rvv: {path} has no {name}: not a gemm_rvv library")
        fn.restype, fn.argtypes = restype, argtypes
        if name == "gemm_rvv_version":  # first: another version may lack the others
            found = fn().decode()
            if VERSION is not None and found != VERSION:
                raise LibraryError(f"gemm_rvv: {path} is version {found}, this package is "
                                   f"{VERSION}: install both from one tree with `make install`")
    return lib


_lib = _load()
_closed = False


def lib():
    """The loaded library; LibraryError once close() was called."""
    if _closed:
        raise LibraryError("gemm_rvv: the library was closed (gemm_rvv.close()); "
                           "start a new process to use it again")
    return _lib


def close():
    """Refuses every later call. The library stays mapped: its worker threads may still run."""
    global _closed
    _closed = True


def check(call, status):
    """Raises GemmRvvError for a status other than GEMM_RVV_OK."""
    if status != 0:
        raise GemmRvvError(call, status, _lib.gemm_rvv_strerror(status).decode())


def free_weight(obj):
    """Frees a weight object, also after close() (the library stays mapped); one that a call
    is using (GEMM_RVV_ERR_BUSY) is left allocated."""
    _lib.gemm_rvv_weight_free(obj)


def plan_buckets(n, k):
    """The M buckets the library's plans for (n, k) serve, ascending; [] if it has none."""
    count = lib().gemm_rvv_plan_buckets(n, k, None, 0)
    buckets = (_i64 * max(count, 1))()
    lib().gemm_rvv_plan_buckets(n, k, buckets, count)
    return list(buckets[:count])
