#!/usr/bin/env python3
"""Writes the engine test's model folders under OUT (weights are never committed):

  OUT/{llama,qwen2,qwen3}/  tiny random models of tests/engine/models/*.json (2 layers, hidden
      1024, intermediate 3072, 8 heads, 4 KV heads, vocabulary 4096). llama keeps lm_head.weight
      in F16 and model.norm.weight in F32 (rounded at load); qwen2 is sharded over two files
      with model.safetensors.index.json; qwen3 is one BF16 file.
  OUT/broken/small/         a small valid model (the baseline the broken ones are made from);
  OUT/broken/CASE/          the same with one defect each (see tests/engine/check-errors.sh).

Usage: make_models.py CONFIG_DIR OUT"""
import json
import os
import shutil
import sys

import numpy as np

from safetensors_io import bf16_bits, write

ARCHS = {"llama": 1, "qwen2": 2, "qwen3": 3}  # name -> random seed


def tensor_shapes(c):
    """(name, shape, kind) of every tensor the configuration asks for, in checkpoint order."""
    h, inter, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    hd = c.get("head_dim", h // c["num_attention_heads"])
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    arch = c["architectures"][0]
    out = [("model.embed_tokens.weight", (v, h), "weight")]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out += [(p + "input_layernorm.weight", (h,), "norm"),
                (p + "self_attn.q_proj.weight", (q, h), "weight"),
                (p + "self_attn.k_proj.weight", (kv, h), "weight"),
                (p + "self_attn.v_proj.weight", (kv, h), "weight"),
                (p + "self_attn.o_proj.weight", (h, q), "weight")]
        if arch == "Qwen2ForCausalLM":
            out += [(p + f"self_attn.{x}_proj.bias", (n,), "bias") for x, n in
                    (("q", q), ("k", kv), ("v", kv))]
        if arch == "Qwen3ForCausalLM":
            out += [(p + "self_attn.q_norm.weight", (hd,), "norm"),
                    (p + "self_attn.k_norm.weight", (hd,), "norm")]
        out += [(p + "post_attention_layernorm.weight", (h,), "norm"),
                (p + "mlp.gate_proj.weight", (inter, h), "weight"),
                (p + "mlp.up_proj.weight", (inter, h), "weight"),
                (p + "mlp.down_proj.weight", (h, inter), "weight")]
    out.append(("model.norm.weight", (h,), "norm"))
    if not c.get("tie_word_embeddings", False):
        out.append(("lm_head.weight", (v, h), "weight"))
    return out


def random_values(rng, shape, kind):
    """Like transformers' initialisation (normal, std 0.02), norms near 1, biases visible."""
    if kind == "norm":
        return 1 + 0.1 * rng.standard_normal(shape, dtype=np.float32)
    scale = 0.1 if kind == "bias" else 0.02
    return scale * rng.standard_normal(shape, dtype=np.float32)


def encode(values, dtype):
    if dtype == "BF16":
        return bf16_bits(values).astype("<u2").tobytes()
    if dtype == "F16":
        return values.astype("<f2").tobytes()
    return values.astype("<f4").tobytes()


def make_tensors(config, seed, dtypes=None):
    rng = np.random.default_rng(seed)
    dtypes = dtypes or {}
    return [(name, dtypes.get(name, "BF16"), shape,
             encode(random_values(rng, shape, kind), dtypes.get(name, "BF16")))
            for name, shape, kind in tensor_shapes(config)]


def write_model(folder, config, tensors, shards=1):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    if shards == 1:
        write(os.path.join(folder, "model.safetensors"), tensors)
        return
    weight_map, per = {}, (len(tensors) + shards - 1) // shards
    for s in range(shards):
        name = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        part = tensors[s * per:(s + 1) * per]
        write(os.path.join(folder, name), part)
        weight_map.update({t[0]: name for t in part})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f, indent=2)


def make_broken(out, small_config):
    """One folder per defect, each from the same small valid model."""
    base = make_tensors(small_config, 7)
    write_model(os.path.join(out, "small"), small_config, base)

    def variant(case, tensors, config=small_config):
        write_model(os.path.join(out, case), config, tensors)

    down = "model.layers.0.mlp.down_proj.weight"
    variant("missing-tensor", [t for t in base if t[0] != down])
    q = "model.layers.0.self_attn.q_proj.weight"
    variant("wrong-dtype", [(n, "I32", s, r + r) if n == q else (n, d, s, r)
                            for n, d, s, r in base])
    k = "model.layers.0.self_attn.k_proj.weight"
    h = small_config["hidden_size"]
    variant("wrong-shape", [(n, d, (h, h), encode(np.zeros((h, h), np.float32), "BF16"))
                            if n == k else (n, d, s, r) for n, d, s, r in base])
    variant("unknown-rope", base, dict(small_config, rope_scaling={"rope_type": "yarn", "factor": 4.0}))
    variant("bad-config", base, dict(small_config, hidden_size="64"))
    variant("truncated", base)
    path = os.path.join(out, "truncated", "model.safetensors")
    os.truncate(path, os.path.getsize(path) - 100)  # into the last tensor, lm_head.weight
    variant("truncated-header", base)
    path = os.path.join(out, "truncated-header", "model.safetensors")
    os.truncate(path, 40)


def main():
    config_dir, out = sys.argv[1], sys.argv[2]
    for arch, seed in ARCHS.items():
        with open(os.path.join(config_dir, arch + ".json")) as f:
            config = json.load(f)
        dtypes = {"lm_head.weight": "F16", "model.norm.weight": "F32"} if arch == "llama" else {}
        write_model(os.path.join(out, arch), config, make_tensors(config, seed, dtypes),
                    shards=2 if arch == "qwen2" else 1)
    small = {"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
             "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
             "vocab_size": 32, "rms_norm_eps": 1e-5, "tie_word_embeddings": False}
    shutil.rmtree(os.path.join(out, "broken"), ignore_errors=True)
    make_broken(os.path.join(out, "broken"), small)


if __name__ == "__main__":
    main()
