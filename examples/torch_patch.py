"""gemm_rvv from PyTorch: a model's Linears on the library (README, "Using it from PyTorch").
Two Linears of the default shapes file (Qwen3-0.6B's q_proj and o_proj) get its kernels; a
third, of a shape the build has no plan for, is left to PyTorch and the report says why."""
import torch
from torch import nn

import gemm_rvv.torch

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1024, 2048), nn.SiLU(), nn.Linear(2048, 1024),
                      nn.Linear(1024, 10)).eval()
x = torch.randn(4, 1024)
with torch.no_grad():
    before = model(x)
    print(gemm_rvv.torch.patch(model))      # what it replaced and left, and why
    after = model(x)                        # the two Linears on the library
    print(f"max |patched - PyTorch| = {(after - before).abs().max().item():.2g}"
          f" (BF16 inputs; outputs up to {before.abs().max().item():.2g})")
    gemm_rvv.torch.unpatch(model)
print(gemm_rvv.torch.shapes(model, batch=1, prefill=[128]), end="")  # for make install SHAPES=
