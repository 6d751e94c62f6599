"""gemm_rvv for PyTorch: the op torch.ops.gemm_rvv.linear, the module Linear that owns a packed
weight, patch()/unpatch() for a whole model, and shapes() for the shapes file of a model.

Inference only: the op has no backward. Every result is the library's: X rounded to BF16 as
gemm_rvv_round_bf16 does (BF16 inputs as they are), W rounded the same way, FP32 sums in
increasing k, the bias added after, the output in X's dtype (docs/pytorch.md, "Numerics").
"""
import ctypes
import struct
import threading
import weakref

import torch
from torch import nn

from ._lib import BF16, F32, check, free_weight, lib, plan_buckets

# ---- packed weights ------------------------------------------------------------------------
# A packed weight is a uint8 tensor [N, C]: N says the output width without reading it (the
# fake implementation needs that), a header at its start says the rest, and the library's
# copy of W (gemm_rvv_weight_create_in's memory) starts at the first 64-byte boundary after it.
_HEADER = struct.Struct("<8sqqqq16s")  # magic, N, K, bytes of the copy, its offset, the ISA
_MAGIC = b"GEMMRVV1"
_HEADER_BYTES = 64
_ALIGN = 64  # GEMM_RVV_WEIGHT_ALIGN
_DTYPES = (torch.float32, torch.bfloat16)


def _isa():
    return lib().gemm_rvv_isa()


def _bf16_bits(t):
    """A contiguous tensor's values as BF16 bits (int16): BF16 as it is, FP32 rounded."""
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16)
    out = torch.empty(t.shape, dtype=torch.int16)
    if t.numel():
        check("gemm_rvv_round_bf16", lib().gemm_rvv_round_bf16(t.data_ptr(), t.numel(),
                                                               out.data_ptr()))
    return out


def _check_weight(weight):
    if not isinstance(weight, torch.Tensor):
        raise TypeError(f"gemm_rvv: a weight is a torch.Tensor, got {type(weight).__name__}")
    if weight.dim() != 2:
        raise ValueError(f"gemm_rvv: a Linear weight is 2-D [N, K], got a {weight.dim()}-D "
                         f"tensor of shape {tuple(weight.shape)}")
    if weight.dtype not in _DTYPES:
        raise TypeError(f"gemm_rvv: weights are torch.bfloat16 or torch.float32, got {weight.dtype}")
    if weight.device.type != "cpu":
        raise ValueError(f"gemm_rvv: the weight is on {weight.device}; the library runs on the CPU")
    if weight.shape[0] == 0 or weight.shape[1] == 0:
        raise ValueError(f"gemm_rvv: the weight has no elements (shape {tuple(weight.shape)})")


def pack(weight):
    """Packs an [N, K] BF16 or FP32 weight (FP32 rounded to BF16) into a new packed tensor."""
    _check_weight(weight)
    n, k = weight.shape
    bits = _bf16_bits(weight.detach().contiguous())
    size = ctypes.c_size_t()
    check("gemm_rvv_weight_bytes", lib().gemm_rvv_weight_bytes(n, k, ctypes.byref(size)))
    total = _HEADER_BYTES + _ALIGN - 1 + size.value
    packed = torch.empty((n, -(-total // n)), dtype=torch.uint8)
    base = packed.data_ptr()
    offset = -(-(base + _HEADER_BYTES) // _ALIGN) * _ALIGN - base
    obj = _object_of(packed, base + offset, n, k, size.value)
    check("gemm_rvv_weight_write", lib().gemm_rvv_weight_write(obj, bits.data_ptr(), 0, n * k))
    header = _HEADER.pack(_MAGIC, n, k, size.value, offset, _isa())
    ctypes.memmove(base, header, len(header))
    return packed


# One weight object per packed tensor, made when it is packed (or at its first call, for a
# packed tensor this process did not make) and freed with the tensor: a call costs a lookup,
# and calls on one weight from several threads share the object (gemm_rvv_weight_create_in
# writes the padding, so an object made per call raced with the other calls' reads).
_objects = {}  # (address of the copy, N, K, its bytes) -> the weight object
_objects_lock = threading.Lock()


def _object_of(packed, address, n, k, size):
    key = (address, n, k, size)
    obj = _objects.get(key)
    if obj is None:
        with _objects_lock:
            obj = _objects.get(key)
            if obj is None:
                obj = ctypes.c_void_p()
                check("gemm_rvv_weight_create_in",
                      lib().gemm_rvv_weight_create_in(n, k, address, size, ctypes.byref(obj)))
                _objects[key] = obj
                weakref.finalize(packed, _forget, key).atexit = False
    return obj


def _forget(key):
    """The packed tensor is gone: its object goes too (kept if a call still runs on it)."""
    with _objects_lock:
        obj = _objects.pop(key, None)
    if obj is not None:
        free_weight(obj)


def packed_shape(packed):
    """(N, K) of a packed tensor, after checking that it is one made by pack() here."""
    if not isinstance(packed, torch.Tensor) or packed.dtype != torch.uint8 or packed.dim() != 2:
        raise TypeError("gemm_rvv: packed_weight is the uint8 tensor gemm_rvv.torch.pack() makes, "
                        f"got {_describe(packed)}")
    if not packed.is_contiguous() or packed.storage_offset() or packed.numel() < _HEADER_BYTES:
        raise ValueError("gemm_rvv: packed_weight is not a whole packed tensor (a slice or a copy "
                         "of part of one): pack the weight again")
    magic, n, k, size, offset, isa = _HEADER.unpack(ctypes.string_at(packed.data_ptr(),
                                                                     _HEADER.size))
    if magic != _MAGIC or n != packed.shape[0]:
        raise ValueError("gemm_rvv: packed_weight holds no packed weight (its header is not one "
                         "gemm_rvv.torch.pack() writes)")
    if isa.rstrip(b"\0") != _isa():
        raise ValueError(f"gemm_rvv: packed_weight was packed for the {isa.rstrip(bytes(1))!r} "
                         f"kernels, {_isa()!r} serve here: pack it again")
    if (packed.data_ptr() + offset) % _ALIGN or offset + size > packed.numel():
        raise ValueError("gemm_rvv: packed_weight was copied to memory of another alignment "
                         "or size: pack the weight again")
    return n, k, size, offset


def _describe(t):
    if isinstance(t, torch.Tensor):
        return f"a {t.dim()}-D {t.dtype} tensor of shape {tuple(t.shape)}"
    return type(t).__name__


# ---- the op --------------------------------------------------------------------------------
@torch.library.custom_op("gemm_rvv::linear", mutates_args=())
def linear(x: torch.Tensor, packed_weight: torch.Tensor,
           bias: torch.Tensor | None = None) -> torch.Tensor:
    """Y = X W^T (+ bias) on a weight packed by pack(): X [..., K] BF16 or FP32, Y [..., N] in
    X's dtype."""
    n, k, size, offset = packed_shape(packed_weight)
    _check_input(x, k, bias, n)
    rows = x.reshape(-1, k)
    if rows.stride(-1) != 1:
        rows = rows.contiguous()
    m = rows.shape[0]
    y = torch.empty((m, n), dtype=x.dtype)
    if m == 0:
        return y.reshape(*x.shape[:-1], n)
    ldx = rows.stride(0)
    if x.dtype == torch.float32:
        rows = _bf16_bits(rows.contiguous())
        ldx = k
    else:
        rows = rows.view(torch.int16)
    b = None if bias is None else bias.detach().to(torch.float32).contiguous()
    obj = _object_of(packed_weight, packed_weight.data_ptr() + offset, n, k, size)
    check("gemm_rvv_linear", lib().gemm_rvv_linear(
        rows.data_ptr(), m, ldx, obj, None if b is None else b.data_ptr(), y.data_ptr(), n,
        F32 if x.dtype == torch.float32 else BF16))
    return y.reshape(*x.shape[:-1], n)


def _check_input(x, k, bias, n):
    if x.dtype not in _DTYPES:
        raise TypeError(f"gemm_rvv: x is torch.bfloat16 or torch.float32, got {x.dtype}")
    if x.device.type != "cpu":
        raise ValueError(f"gemm_rvv: x is on {x.device}; the library runs on the CPU")
    if x.dim() < 1 or x.shape[-1] != k:
        raise ValueError(f"gemm_rvv: x's last dimension must be the weight's K = {k}, got x of "
                         f"shape {tuple(x.shape)}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != n or bias.dtype not in _DTYPES):
        raise ValueError(f"gemm_rvv: the bias is a 1-D BF16 or FP32 tensor of the weight's N = {n}"
                         f", got {_describe(bias)}")


@linear.register_fake
def _linear_fake(x, packed_weight, bias=None):
    return x.new_empty((*x.shape[:-1], packed_weight.shape[0]))


# ---- the module ----------------------------------------------------------------------------
class Linear(nn.Linear):
    """An nn.Linear whose forward runs torch.ops.gemm_rvv.linear on a packed copy of its weight.

    It keeps the weight and bias Parameters it was made with (state_dict and tied weights stay
    as they were) and a non-persistent buffer `packed`. Packed again when `weight` is assigned,
    after load_state_dict, and in eager mode when the weight was changed in place or moved.
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        self._start()

    @classmethod
    def from_linear(cls, linear_module):
        """A Linear sharing `linear_module`'s weight and bias (not a copy)."""
        _check_weight(linear_module.weight)
        obj = cls.__new__(cls)
        nn.Module.__init__(obj)
        obj.in_features, obj.out_features = linear_module.in_features, linear_module.out_features
        obj.weight, obj.bias = linear_module.weight, linear_module.bias
        obj._start()
        return obj

    def _start(self):
        self.register_load_state_dict_post_hook(Linear._after_load)
        self.repack()

    def repack(self):
        """Packs the current weight (done on its own in the cases the class comment names)."""
        packed = pack(self.weight)
        self._packed_from = (self.weight, self.weight._version, self.weight.data_ptr())
        self.register_buffer("packed", packed, persistent=False)

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name == "weight" and "packed" in self._buffers:
            self.repack()

    @staticmethod
    def _after_load(module, incompatible_keys):
        module.repack()

    def forward(self, x):
        if not torch.compiler.is_compiling():
            w, version, ptr = self._packed_from
            if w is not self.weight or w._version != version or w.data_ptr() != ptr:
                self.repack()
        return torch.ops.gemm_rvv.linear(x, self.packed, self.bias)


# ---- whole models --------------------------------------------------------------------------
class PatchReport:
    """What patch() did: `replaced` and `left`, lists of (module name, reason)."""

    def __init__(self):
        self.replaced, self.left = [], []

    def __str__(self):
        lines = [f"gemm_rvv.torch.patch: {len(self.replaced)} Linear layers replaced, "
                 f"{len(self.left)} left"]
        lines += [f"  replaced {name}: {why}" for name, why in self.replaced]
        lines += [f"  left     {name}: {why}" for name, why in self.left]
        return "\n".join(lines)


def _verdict(module, all_layers):
    """(True, why) when patch() replaces an nn.Linear, else (False, why)."""
    w = module.weight
    if w.dim() != 2 or w.dtype not in _DTYPES:
        return False, f"weight is {_describe(w)}: the library takes 2-D BF16 or FP32 weights"
    if w.device.type != "cpu":
        return False, f"weight on {w.device}"
    n, k = w.shape
    buckets = plan_buckets(n, k)
    if buckets:
        return True, f"N={n} K={k}: plans for M in {buckets}"
    if all_layers:
        return True, f"N={n} K={k}: no plan, the scalar fallback (all=True)"
    return False, (f"N={n} K={k}: no plan in this build (add the shape to the shapes file, or "
                   "patch(model, all=True): the fallback gives the same bits, slower)")


def patch(model, all=False):
    """Replaces every nn.Linear of `model` whose (N, K) the installed library has plans for (with
    all=True every one it can take) by a gemm_rvv.torch.Linear sharing its weight and bias.
    Returns a PatchReport naming each Linear replaced or left, with the reason."""
    report = PatchReport()
    for parent_name, parent in list(model.named_modules()):
        for name, child in list(parent.named_children()):
            full = f"{parent_name}.{name}" if parent_name else name
            if isinstance(child, Linear) or not isinstance(child, nn.Linear):
                continue
            if type(child) is not nn.Linear:
                report.left.append((full, f"{type(child).__name__}, a subclass of nn.Linear"))
                continue
            take, why = _verdict(child, all)
            if take:
                new = Linear.from_linear(child)
                object.__setattr__(new, "_gemm_rvv_original", child)
                setattr(parent, name, new)
                report.replaced.append((full, why))
            else:
                report.left.append((full, why))
    return report


def unpatch(model):
    """Puts back the nn.Linear modules patch() replaced, with the weight and bias each Linear
    holds now. Returns how many."""
    count = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, Linear) and hasattr(child, "_gemm_rvv_original"):
                original = child._gemm_rvv_original
                original.weight, original.bias = child.weight, child.bias
                setattr(parent, name, original)
                count += 1
    return count


# The gates shapes() writes (tools/gguf-shapes' two): "engine" gives every Linear a kernel,
# since PyTorch's own BF16 path on an rv64gc build is scalar too; "default" is the library's.
_GATES = {
    "engine": "# The gate: every Linear gets a kernel (PyTorch's rv64gc BF16 path is scalar).\n"
              "gate: {min_n: 1, min_k: 1, max_m: 128, min_mnk: 1}\n",
    "default": "",
}


def shapes(model, batch=1, prefill=(), path=None, name=None, gate="engine"):
    """Writes the shapes file of `model`'s nn.Linear layers (every (N, K) once) for `make install
    SHAPES=...`: M is the decode batch sizes and the prefill lengths, the output embedding
    (lm_head) the batch sizes only, as gemm-rvv-shapes does; gate "engine" (every Linear) or
    "default" (the library's). Returns the text; writes it to `path` when given."""
    if gate not in _GATES:
        raise ValueError(f"gemm_rvv: gate is 'engine' or 'default', got {gate!r}")
    batch = [batch] if isinstance(batch, int) else list(batch)
    prefill = [prefill] if isinstance(prefill, int) else list(prefill)
    if not batch or any(not isinstance(v, int) or v < 1 for v in batch + prefill):
        raise ValueError("gemm_rvv: batch and prefill are positive whole numbers")
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    rows, seen, names = [], set(), set()
    for full, module in model.named_modules():
        if not isinstance(module, nn.Linear) or module.weight.dim() != 2:
            continue
        n, k = module.weight.shape
        ms = sorted(set(batch if module is head else batch + prefill))
        if (n, k, tuple(ms)) in seen:
            continue
        seen.add((n, k, tuple(ms)))
        short = full.rsplit(".", 1)[-1] or "linear"
        label, i = short, 2
        while label in names:
            label, i = f"{short}_{i}", i + 1
        names.add(label)
        rows.append(f"  - {{name: {label}, N: {n}, K: {k}, M: [{', '.join(map(str, ms))}]}}")
    if not rows:
        raise ValueError("gemm_rvv: the model has no nn.Linear with a 2-D weight")
    title = name or type(model).__name__
    text = (f"# {title}: the nn.Linear layers of a loaded model, written by "
            f"gemm_rvv.torch.shapes(batch={batch}, prefill={prefill}).\n"
            "# M: the decode batch sizes and the prefill lengths; the output embedding runs on "
            "the\n# last position of a prompt only, so it gets the batch sizes.\n"
            f"model: {title}\n{_GATES[gate]}\nlayers:\n" + "\n".join(rows) + "\n")
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return text
