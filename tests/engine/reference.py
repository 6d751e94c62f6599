#!/usr/bin/python3
"""The engine's reference: the same decoder in plain PyTorch, in float64, on the model folder's
weights rounded to BF16 as the engine rounds them at load, with activations NOT rounded.

  reference.py MODEL_DIR --prompt 1,2,3 --tokens 5,6,7 --logits ENGINE_LOGITS [--label TEXT]
               [--override KEY=JSON] [--kv-cache f16|bf16]

--override changes a key of config.json for the reference only: a check that the comparison
fails on a model that differs from the engine's (check-engine.sh sets rope_theta wrong).

ENGINE_LOGITS holds the engine's FP32 logits for each generated token (steps x vocabulary). The
reference runs prompt + tokens[:-1] in one causal pass (teacher forcing: a step where a near tie
went the other way does not derail the steps after it) and checks, at every step:
  1. every logit agrees within its tolerance (below);
  2. where the reference's top-two margin exceeds the sum of those two logits' tolerances, the
     engine picked the reference's top token (a smaller margin could flip within tolerance).

Tolerance, from the BF16 rounding of the activations. The engine rounds each Linear's input to
BF16 (8 significant bits, round to nearest: x' = x (1 + d), |d| <= u = 2^-8); everything else
is FP32, whose rounding (2^-24) is negligible beside it. One Linear output y_j = sum_k x_k W_jk
then moves by sum_k x_k W_jk d_k. The d_k of different elements are independent and spread
evenly over [-u, u] (mean 0, variance u^2 / 3), so the change has standard deviation
    sigma_j = (u / sqrt 3) * sqrt(sum_k (x_k W_jk)^2).
For the logits, x is the final normed hidden state h and W the lm_head. Every earlier rounding
(4 per layer: the inputs of q/k/v, o_proj, gate/up and down_proj) perturbs the residual stream
by the same relative amount in the same way, which RMSNorm carries to h at about the same scale;
to first order the S = 4 * layers + 1 perturbations are independent and add in variance:
    sigma_j(total) = sqrt(S) * sigma_j.
The engine's KV cache (--kv-cache, F16 by default) rounds K and V once more per layer, each
element to nearest at u_c = 2^-11 (F16) or 2^-8 (BF16), independently: two more perturbations
per layer of the same kind at u_c / u the size, so in variance
    S = 4 * layers + 1 + 2 * layers * (u_c / u)^2
(F16 adds 2 * layers / 64 to S, BF16 2 * layers). The reference keeps K and V unrounded.
The tolerance is 6 sigma_j(total): a chance of about 2e-9 per logit to exceed it by rounding
alone (1e-4 over 16 steps of 4096 logits), while a real error (a wrong RoPE pairing, a missing
bias or norm, a cache slot off by one) moves logits by far more than sigma.
Exit status 0 when both checks pass, 1 otherwise."""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch

from safetensors_io import read_folder

U_BF16 = 2.0 ** -8
U_CACHE = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}
SIGMAS = 6.0


def rope_frequencies(c, head_dim):
    theta = float(c.get("rope_theta", 10000.0))
    inv = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    scaling = c.get("rope_scaling") or {}
    if scaling.get("rope_type", scaling.get("type")) == "llama3":
        factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        original = scaling["original_max_position_embeddings"]
        wavelength = 2 * math.pi / inv
        scaled = torch.where(wavelength > original / low, inv / factor, inv)
        smooth = (original / wavelength - low) / (high - low)
        blended = (1 - smooth) * scaled / factor + smooth * scaled
        medium = (wavelength >= original / high) & (wavelength <= original / low)
        inv = torch.where(medium, blended, scaled)
    return inv


def rotate(x, positions, inv_freq):
    """x: [T, heads, head_dim]; pairs element i with i + head_dim/2 (Hugging Face layout)."""
    angles = positions[:, None].double() * inv_freq[None, :]
    cos = torch.cat([angles.cos(), angles.cos()], -1)[:, None, :]
    sin = torch.cat([angles.sin(), angles.sin()], -1)[:, None, :]
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * cos + rotated * sin


def rms_norm(x, weight, eps):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * weight


def forward(c, w, tokens):
    """Logits [T, vocab] and the final normed hidden states [T, hidden] for tokens [T]."""
    arch = c["architectures"][0]
    heads, kv_heads = c["num_attention_heads"], c.get("num_key_value_heads", c["num_attention_heads"])
    hd = c.get("head_dim", 128 if arch == "Qwen3ForCausalLM" else c["hidden_size"] // heads)
    eps = float(c.get("rms_norm_eps", 1e-6))
    T = len(tokens)
    pos = torch.arange(T)
    inv_freq = rope_frequencies(c, hd)
    x = w["model.embed_tokens.weight"][tokens]
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q, k, v = (h @ w[p + f"self_attn.{n}_proj.weight"].T for n in "qkv")
        if arch == "Qwen2ForCausalLM":
            q, k, v = (t + w[p + f"self_attn.{n}_proj.bias"] for t, n in zip((q, k, v), "qkv"))
        q, k, v = q.view(T, heads, hd), k.view(T, kv_heads, hd), v.view(T, kv_heads, hd)
        if arch == "Qwen3ForCausalLM":
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k = rotate(q, pos, inv_freq), rotate(k, pos, inv_freq)
        group = heads // kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        scores = torch.einsum("thd,shd->hts", q, k) / math.sqrt(hd)
        scores = scores.masked_fill(~causal, float("-inf")).softmax(-1)
        attn = torch.einsum("hts,shd->thd", scores, v).reshape(T, heads * hd)
        x = x + attn @ w[p + "self_attn.o_proj.weight"].T
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate, up = h @ w[p + "mlp.gate_proj.weight"].T, h @ w[p + "mlp.up_proj.weight"].T
        x = x + (torch.nn.functional.silu(gate) * up) @ w[p + "mlp.down_proj.weight"].T
    h = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight" if c.get("tie_word_embeddings") else "lm_head.weight"]
    return h @ head.T, h, head


def tolerance(c, h, head, kv_cache):
    """6 sigma of the logits' change from BF16 rounding of the activations and the cache's
    rounding of K and V (module docstring)."""
    layers = c["num_hidden_layers"]
    stages = 4 * layers + 1 + 2 * layers * (U_CACHE[kv_cache] / U_BF16) ** 2
    sigma = (U_BF16 / math.sqrt(3)) * torch.sqrt((h * h) @ (head * head).T)
    return SIGMAS * math.sqrt(stages) * sigma


def ids(text):
    return [int(t) for t in text.split(",") if t]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--prompt", required=True, type=ids)
    ap.add_argument("--tokens", required=True, type=ids)
    ap.add_argument("--logits", required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--override", action="append", default=[])
    ap.add_argument("--kv-cache", choices=sorted(U_CACHE), default="f16")
    a = ap.parse_args()
    with open(os.path.join(a.model, "config.json")) as f:
        c = json.load(f)
    for item in a.override:
        key, value = item.split("=", 1)
        c[key] = json.loads(value)
    w = {n: torch.from_numpy(t.astype(np.float64)) for n, t in read_folder(a.model).items()}
    steps, vocab = len(a.tokens), c["vocab_size"]
    engine = np.fromfile(a.logits, dtype="<f4")
    if engine.size != steps * vocab:
        print(f"{a.label}: {a.logits} holds {engine.size} logits, expected {steps} x {vocab}")
        return 1
    engine = torch.from_numpy(engine.astype(np.float64)).view(steps, vocab)
    with torch.no_grad():
        logits, h, head = forward(c, w, a.prompt + a.tokens[:-1])
        first = len(a.prompt) - 1
        ref, tol = logits[first:], tolerance(c, h[first:], head, a.kv_cache)
    ratio = ((engine - ref).abs() / tol).max(dim=1).values
    checked, failures = 0, []
    for s in range(steps):
        top2 = ref[s].topk(2)
        best, second = top2.indices.tolist()
        margin = float(top2.values[0] - top2.values[1])
        if ratio[s] > 1:
            failures.append(f"step {s}: a logit differs by {float(ratio[s]):.2f} x its tolerance")
        if margin > float(tol[s, best] + tol[s, second]):
            checked += 1
            if a.tokens[s] != best:
                failures.append(f"step {s}: engine token {a.tokens[s]}, reference {best} "
                                f"(margin {margin:.4f})")
    print(f"{a.label}: {steps} steps x {vocab} logits, max |engine - reference| / tolerance = "
          f"{float(ratio.max()):.3f} (tolerance {float(tol.mean()):.4f} on average); tokens "
          f"checked at {checked} of {steps} steps (top-two margin above tolerance): "
          f"{'all equal' if not any('token' in f for f in failures) else 'DIFFERENT'}")
    for f in failures:
        print(f"{a.label}: FAILED {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
