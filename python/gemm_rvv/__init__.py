"""gemm_rvv from Python: the library's BF16 Linear kernels for PyTorch (gemm_rvv.torch).

Importing the package loads the shared library (libgemm_rvv.so.VERSION) with ctypes and raises
gemm_rvv.LibraryError when it is missing or of another version. See docs/pytorch.md.
"""
from ._lib import (VERSION, GemmRvvError, LibraryError, close, library_path,  # noqa: F401
                   plan_buckets)
from ._lib import lib as _library

__version__ = VERSION


def isa():
    """The kernel variant that serves here: "base", "zvfbfwma" or "none"."""
    return _library().gemm_rvv_isa().decode()


def kernels_active():
    """True when generated kernels can run here (the core has V, the fallback is not forced)."""
    return bool(_library().gemm_rvv_kernels_active())


def set_threads(count):
    """The library's worker threads per call, the caller included (gemm_rvv_set_threads)."""
    from ._lib import check
    check("gemm_rvv_set_threads", _library().gemm_rvv_set_threads(count))
