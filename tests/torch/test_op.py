"""torch.ops.gemm_rvv.linear and gemm_rvv.torch.Linear against the library's own bits and
F.linear, at every M bucket of a planned shape and on a shape without a plan; bad input."""
import torch
from torch import nn

import gemm_rvv
import gemm_rvv.torch as gt
from harness import raises, run
from reference import assert_within_bound, library_linear

PLANNED = (256, 96)     # N, K: tests/torch/shapes.yaml's op, plans for M = 1 ... 128
UNPLANNED = (40, 24)    # no plan: the scalar fallback
# Every bucket, between buckets, and above the largest (row blocks of 128).
MS = [1, 2, 3, 4, 5, 8, 13, 16, 31, 32, 33, 64, 128, 129]
gen = torch.Generator().manual_seed(45)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=gen).to(dtype)


def bits(t):
    return t.view(torch.int32 if t.dtype == torch.float32 else torch.int16)


def check_op(x, w, bias):
    """The op on x against the library's bits and F.linear's bound."""
    y = torch.ops.gemm_rvv.linear(x, gt.pack(w), bias)
    assert y.shape == (*x.shape[:-1], w.shape[0]) and y.dtype == x.dtype, (y.shape, y.dtype)
    assert torch.equal(bits(y), bits(library_linear(x, w, bias, x.dtype))), "not the library's bits"
    assert_within_bound(y, x, w, bias)


def test_plans():
    assert gemm_rvv.plan_buckets(*PLANNED) == [1, 2, 4, 8, 16, 32, 64, 128]
    assert gemm_rvv.plan_buckets(*UNPLANNED) == []
    assert gemm_rvv.kernels_active()


def test_every_bucket_fp32():
    n, k = PLANNED
    w, b = randn(n, k), randn(n)
    for m in MS:
        check_op(randn(m, k), w, b if m % 2 else None)


def test_every_bucket_bf16():
    n, k = PLANNED
    w, b = randn(n, k, dtype=torch.bfloat16), randn(n, dtype=torch.bfloat16)
    for m in MS:
        check_op(randn(m, k, dtype=torch.bfloat16), w, None if m % 2 else b)


def test_without_plan():
    n, k = UNPLANNED
    for dtype in (torch.float32, torch.bfloat16):
        w = randn(n, k, dtype=dtype)
        for m in (1, 7, 130):
            check_op(randn(m, k, dtype=dtype), w, randn(n, dtype=dtype))


def test_batch_dims_and_strides():
    n, k = PLANNED
    w = randn(n, k)
    p = gt.pack(w)
    x = randn(5, 3, k).transpose(0, 1)          # [3, 5, K], rows not in order
    assert not x.is_contiguous()
    y = torch.ops.gemm_rvv.linear(x, p, None)
    assert y.shape == (3, 5, n)
    assert torch.equal(bits(y), bits(torch.ops.gemm_rvv.linear(x.contiguous(), p, None)))
    x = randn(2, 4, 2 * k)[..., ::2]             # every other element: last stride 2
    assert torch.equal(bits(torch.ops.gemm_rvv.linear(x, p, None)),
                       bits(library_linear(x.contiguous(), w, None, torch.float32)))
    x = randn(6, 2 * k)[:, :k]                   # rows 2K apart: the row stride is passed on
    assert torch.equal(bits(torch.ops.gemm_rvv.linear(x, p, None)),
                       bits(library_linear(x.contiguous(), w, None, torch.float32)))
    assert torch.ops.gemm_rvv.linear(randn(0, 2, k), p, None).shape == (0, 2, n)


def test_module_fp32_and_bf16_weights():
    n, k = PLANNED
    for dtype in (torch.float32, torch.bfloat16):
        lin = nn.Linear(k, n, dtype=dtype)
        m = gt.Linear.from_linear(lin)
        assert m.weight is lin.weight and m.bias is lin.bias
        for xdtype in (torch.float32, torch.bfloat16):
            x = randn(2, 3, k, dtype=xdtype)
            y = m(x)
            assert y.dtype == xdtype
            assert torch.equal(bits(y), bits(library_linear(x, lin.weight, lin.bias, xdtype)))
        assert set(m.state_dict()) == {"weight", "bias"}   # the packed copy is not saved


def test_module_repacks():
    n, k = PLANNED
    m = gt.Linear(k, n)
    x = randn(4, k)

    def agrees():
        return torch.equal(bits(m(x)), bits(library_linear(x, m.weight, m.bias, torch.float32)))
    assert agrees()
    m.weight = nn.Parameter(randn(n, k))                       # reassigned
    assert agrees()
    m.load_state_dict({"weight": randn(n, k), "bias": randn(n)})
    assert agrees()
    with torch.no_grad():
        m.weight.mul_(-2)                                      # changed in place (eager)
    assert agrees()
    other = nn.Linear(k, n)
    m.load_state_dict(other.state_dict())
    assert torch.equal(bits(m(x)), bits(library_linear(x, other.weight, other.bias, torch.float32)))


def test_weight_objects():
    """One library weight object per packed tensor, made once, freed with the tensor, and
    shared by calls from several threads (each with the library's bits)."""
    import gc
    import threading
    n, k = PLANNED
    w = randn(n, k)
    before = len(gt._objects)
    p = gt.pack(w)
    assert len(gt._objects) == before + 1
    xs = [randn(m, k) for m in (1, 3, 8, 33)]
    wants = [bits(library_linear(x, w, None, torch.float32)) for x in xs]
    for _ in range(3):
        torch.ops.gemm_rvv.linear(xs[0], p, None)
    assert len(gt._objects) == before + 1, "a call made a weight object of its own"
    failures = []

    def calls():
        for _ in range(4):
            for x, want in zip(xs, wants):
                if not torch.equal(bits(torch.ops.gemm_rvv.linear(x, p, None)), want):
                    failures.append(x.shape)
    threads = [threading.Thread(target=calls) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, f"calls from threads differ from the library's bits: {failures}"
    del p
    gc.collect()
    assert len(gt._objects) == before, "the packed tensor is gone, its weight object is not"


def test_bad_input():
    n, k = PLANNED
    w = randn(n, k)
    p = gt.pack(w)
    before = p.clone()
    op = torch.ops.gemm_rvv.linear
    raises(ValueError, ["2-D [N, K]", "1-D"], gt.pack, randn(n))
    raises(TypeError, ["bfloat16 or torch.float32", "float16"], gt.pack, w.half())
    raises(TypeError, ["bfloat16 or torch.float32", "torch.int32"], op,
           torch.ones(2, k, dtype=torch.int32), p, None)
    raises(TypeError, ["bfloat16 or torch.float32", "torch.float64"], op, randn(2, k).double(), p, None)
    raises(ValueError, ["K = 96", "(2, 95)"], op, randn(2, k - 1), p, None)
    raises(ValueError, ["N = 256"], op, randn(2, k), p, randn(n + 1))
    raises(TypeError, ["packed_weight", "float32"], op, randn(2, k), w, None)
    raises(ValueError, ["not a whole packed tensor"], op, randn(2, k), p[1:], None)
    raises(ValueError, ["no packed weight"], op, randn(2, k), torch.zeros_like(p), None)
    raises(ValueError, ["2-D [N, K]", "3-D"], gt.Linear.from_linear,
           type("L", (), {"weight": randn(2, n, k)})())
    assert torch.equal(p, before), "a refused call wrote into the packed weight"


def test_fake_and_export():
    n, k = PLANNED
    p = gt.pack(randn(n, k))
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode() as mode:
        y = torch.ops.gemm_rvv.linear(mode.from_tensor(randn(3, 7, k)), mode.from_tensor(p), None)
    assert y.shape == (3, 7, n)
    torch.library.opcheck(torch.ops.gemm_rvv.linear.default, (randn(3, k), p, randn(n)))
    # A patched module through torch.export: the op stays one node, the program the same bits.
    m = nn.Sequential(gt.Linear.from_linear(nn.Linear(k, n)), nn.ReLU()).eval()
    x = randn(3, k)
    with torch.no_grad():
        ep = torch.export.export(m, (x,))
        ops = [node.target for node in ep.graph.nodes if node.op == "call_function"]
        assert torch.ops.gemm_rvv.linear.default in ops, ops
        assert torch.equal(bits(ep.module()(x)), bits(m(x))), "the exported program differs"


def test_closed_library():
    n, k = PLANNED
    p = gt.pack(randn(n, k))
    gemm_rvv.close()
    raises(gemm_rvv.LibraryError, ["closed"], torch.ops.gemm_rvv.linear, randn(2, k), p, None)
    raises(gemm_rvv.LibraryError, ["closed"], gt.pack, randn(n, k))


run([test_plans, test_every_bucket_fp32, test_every_bucket_bf16, test_without_plan,
     test_batch_dims_and_strides, test_module_fp32_and_bf16_weights, test_module_repacks,
     test_weight_objects, test_bad_input, test_fake_and_export, test_closed_library])  # closing last: it is for good
