"""References for the op's tests: the library's own call on unpacked weights (its bits) and the
error bound of the op against F.linear in FP64 (docs/pytorch.md, "Numerics")."""
import ctypes

import torch

from gemm_rvv import _lib

U_BF16 = 2.0 ** -8   # BF16's unit roundoff (8 significant bits)
U_F32 = 2.0 ** -24


def bf16_bits(t):
    """t's values rounded to BF16 by the library (gemm_rvv_round_bf16), as int16 bits."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16)
    out = torch.empty(t.shape, dtype=torch.int16)
    _lib.check("round", _lib.lib().gemm_rvv_round_bf16(t.data_ptr(), t.numel(), out.data_ptr()))
    return out


def library_linear(x, w, bias, out_dtype):
    """gemm_rvv_linear_plain on x [M, K] and w [N, K] (each rounded to BF16 by the library)."""
    xb, wb = bf16_bits(x.reshape(-1, x.shape[-1])), bf16_bits(w)
    m, k = xb.shape
    n = wb.shape[0]
    y = torch.empty((m, n), dtype=out_dtype)
    b = None if bias is None else bias.detach().float().contiguous()
    _lib.check("gemm_rvv_linear_plain", _lib.lib().gemm_rvv_linear_plain(
        xb.data_ptr(), m, k, wb.data_ptr(), n, k, k, None if b is None else b.data_ptr(),
        y.data_ptr(), n, _lib.F32 if out_dtype == torch.float32 else _lib.BF16))
    return y.reshape(*x.shape[:-1], n)


def assert_within_bound(y, x, w, bias):
    """|y - F.linear(x, w, bias)| in FP64 within the op's bound: x and w each rounded to BF16
    (relative 2^-8 each), K + 1 FP32 roundings of the sum and the bias, and for a BF16 output
    its own rounding (2^-8 of the result)."""
    k = x.shape[-1]
    xd, wd = x.double(), w.double()
    bd = None if bias is None else bias.double()
    ref = torch.nn.functional.linear(xd, wd, bd)
    scale = torch.nn.functional.linear(xd.abs(), wd.abs(), None if bd is None else bd.abs())
    bound = (2 * U_BF16 + U_BF16 ** 2 + (k + 2) * U_F32 * 1.01) * scale
    if y.dtype == torch.bfloat16:
        bound = bound * (1 + U_BF16) + U_BF16 * ref.abs()
    err = (y.double() - ref).abs()
    assert bool((err <= bound).all()), (
        f"error {err.max().item():.3g} above the bound (worst ratio "
        f"{(err / bound.clamp_min(1e-300)).max().item():.3g})")
