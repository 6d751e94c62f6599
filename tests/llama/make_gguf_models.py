#!/usr/bin/env python3
"""Writes the llama.cpp tests' tiny random GGUF models under OUT (never committed), with
python3-gguf's GGUFWriter, seeded, so every run writes the same bytes:

  OUT/llama.gguf         Llama: hidden 1024, intermediate 2048, 2 layers, 8 query heads and
                         4 key/value heads of 128, vocabulary 1024; every 2-D weight BF16.
  OUT/qwen3.gguf         Qwen3: hidden 1024, intermediate 2048, 2 layers, 16 query heads and
                         8 key/value heads of 128 (q_proj is 2048 x 1024, as in Qwen3-0.6B).
  OUT/llama-gqa.gguf     a grouped-query Llama: hidden 1152, intermediate 3072, 1 layer, 9 query
                         heads and 3 key/value heads of 128, vocabulary 1024: k and v
                         (384 x 1152) are below the library's default gate (N, K >= 1024).
  OUT/qwen2-tied.gguf    Qwen2.5-0.5B's Linears in 1 layer: Qwen2 (q/k/v biases), hidden 896,
                         intermediate 4864, 14 query heads and 2 key/value heads of 64,
                         vocabulary 1024, no output.weight (lm_head tied to token_embd):
                         every Linear is below the default gate.
  OUT/llama-gqa-2l.gguf, OUT/qwen2-tied-2l.gguf  the same in 2 layers, for make bench-llama:
                         of a prompt llama.cpp runs the last layer's FFN on its last position
                         only, so in 1 layer a prompt token has no FFN at the batch's M.
  OUT/llama-noplan.gguf  the Llama with a vocabulary of 1280: lm_head (1280 x 1024) is the one
                         Linear whose shape the Llama's shapes file does not hold.
  OUT/llama-f16.gguf     the Llama with F16 weights;  OUT/llama-q8_0.gguf  with Q8_0 weights.
  OUT/llama-gqa-q8_0.gguf  the GQA Llama (1 layer) with Q8_0 weights, for make test.
  OUT/llama-gqa-small.gguf  a small grouped-query Llama: hidden 256, intermediate 512, 1 layer,
                         4 query heads and 2 key/value heads of 64 (k and v 128 x 256),
                         vocabulary 512: make test-rpc's model (a server's work is not what
                         it tests, and QEMU emulates the kernels' vector FP slowly).
  OUT/qwen3-tied.gguf    a small Qwen3 (hidden 256) with no output.weight (lm_head tied to
                         token_embd); for the shapes tool only, as are the next two:
  OUT/small-mixed.gguf   the small Qwen3 untied, with output.weight in Q8_0;
  OUT/small-badname.gguf the small Qwen3 whose general.name holds a line break and YAML.
  OUT/llama-mem.gguf, OUT/qwen2-tied-mem.gguf, OUT/llama-mem-q8_0.gguf  the GQA Llama and the
                         Qwen2 in 2 layers with a vocabulary of 5000 (the table 11.5 MB and
                         9 MB), the third with Q8_0 Linears and a BF16 token_embd: issue 42's
                         models, for make test-llama's peak memory with and without the plugin.
  OUT/text.txt           a short text of random lower-case words, for llama-perplexity.
  OUT/NAME.config.json   the Hugging Face config.json of the Llama, the Qwen3, the GQA Llama and
                         the Qwen2, for comparing
                         tools/gguf-shapes with gemm-rvv-shapes.

Norms are F32 as llama.cpp's converter writes them. The vocabulary is SentencePiece-style
(tokenizer "llama"): <unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF>, then pieces.

Usage: make_gguf_models.py OUT"""
import json
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QType

LLAMA = {"arch": "llama", "name": "tiny-llama-random", "hidden": 1024, "intermediate": 2048,
         "layers": 2, "heads": 8, "kv_heads": 4, "head_dim": 128, "vocab": 1024,
         "tied": False, "rope_theta": 10000.0, "eps": 1e-5, "seed": 1}
QWEN3 = {"arch": "qwen3", "name": "tiny-qwen3-random", "hidden": 1024, "intermediate": 2048,
         "layers": 2, "heads": 16, "kv_heads": 8, "head_dim": 128, "vocab": 1024,
         "tied": False, "rope_theta": 1000000.0, "eps": 1e-6, "seed": 3}

LLAMA_GQA = dict(LLAMA, name="tiny-llama-gqa-random", hidden=1152, intermediate=3072, layers=1,
                 heads=9, kv_heads=3, seed=7)
LLAMA_GQA_SMALL = dict(LLAMA_GQA, name="tiny-llama-gqa-small-random", hidden=256,
                       intermediate=512, heads=4, kv_heads=2, head_dim=64, vocab=512, seed=11)
QWEN2_TIED = {"arch": "qwen2", "name": "tiny-qwen2-tied-random", "hidden": 896,
              "intermediate": 4864, "layers": 1, "heads": 14, "kv_heads": 2, "head_dim": 64,
              "vocab": 1024, "tied": True, "rope_theta": 1000000.0, "eps": 1e-6, "seed": 9}

FILE_TYPES = {QType.BF16: gguf.LlamaFileType.MOSTLY_BF16, QType.F16: gguf.LlamaFileType.MOSTLY_F16,
              QType.Q8_0: gguf.LlamaFileType.MOSTLY_Q8_0}
HF_ARCHS = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}


def vocabulary(size):
    """SentencePiece-style tokens, scores and types: specials, bytes, then pieces."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL] + \
        [gguf.TokenType.BYTE] * 256
    letters = "abcdefghijklmnopqrstuvwxyz"
    pieces = ["\u2581"] + list(letters) + ["\u2581" + c for c in letters] + \
        [a + b for a in letters for b in letters] + ["\u2581" + a + b for a in letters for b in letters] + \
        [a + b + c for a in letters for b in letters for c in letters]
    pieces = pieces[:size - len(tokens)]
    if len(tokens) + len(pieces) < size:
        raise SystemExit(f"make_gguf_models.py: a vocabulary of {size} is more than the pieces made")
    scores = [0.0] * len(tokens) + [-float(i) for i in range(len(pieces))]
    return tokens + pieces, scores, types + [gguf.TokenType.NORMAL] * len(pieces)


def tensor_shapes(m):
    """(GGUF name, shape as [N, K] rows-first, kind: weight, norm or bias) of every tensor of
    model m."""
    h, inter, v, hd = m["hidden"], m["intermediate"], m["vocab"], m["head_dim"]
    q, kv = m["heads"] * hd, m["kv_heads"] * hd
    out = [("token_embd.weight", (v, h), "weight")]
    for i in range(m["layers"]):
        p = f"blk.{i}."
        out += [(p + "attn_norm.weight", (h,), "norm"),
                (p + "attn_q.weight", (q, h), "weight"),
                (p + "attn_k.weight", (kv, h), "weight"),
                (p + "attn_v.weight", (kv, h), "weight"),
                (p + "attn_output.weight", (h, q), "weight")]
        if m["arch"] == "qwen2":  # Qwen2's q, k and v have biases (F32, as the converter writes)
            out += [(p + "attn_q.bias", (q,), "bias"), (p + "attn_k.bias", (kv,), "bias"),
                    (p + "attn_v.bias", (kv,), "bias")]
        if m["arch"] == "qwen3":
            out += [(p + "attn_q_norm.weight", (hd,), "norm"),
                    (p + "attn_k_norm.weight", (hd,), "norm")]
        out += [(p + "ffn_norm.weight", (h,), "norm"),
                (p + "ffn_gate.weight", (inter, h), "weight"),
                (p + "ffn_up.weight", (inter, h), "weight"),
                (p + "ffn_down.weight", (h, inter), "weight")]
    out.append(("output_norm.weight", (h,), "norm"))
    if not m["tied"]:
        out.append(("output.weight", (v, h), "weight"))
    return out


def write_model(path, m, weight_type=QType.BF16, overrides=None):
    """Model m as a GGUF at path: the 2-D weights in weight_type (or overrides[name]), norms F32."""
    rng = np.random.default_rng(m["seed"])
    w = gguf.GGUFWriter(path + ".tmp", m["arch"])
    w.add_name(m["name"])
    w.add_file_type(FILE_TYPES[weight_type])
    w.add_context_length(4096)
    w.add_embedding_length(m["hidden"])
    w.add_block_count(m["layers"])
    w.add_feed_forward_length(m["intermediate"])
    w.add_head_count(m["heads"])
    w.add_head_count_kv(m["kv_heads"])
    w.add_key_length(m["head_dim"])
    w.add_value_length(m["head_dim"])
    w.add_rope_dimension_count(m["head_dim"])
    w.add_rope_freq_base(m["rope_theta"])
    w.add_layer_norm_rms_eps(m["eps"])
    tokens, scores, types = vocabulary(m["vocab"])
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    for name, shape, kind in tensor_shapes(m):
        # Like transformers' initialisation (normal, std 0.02); norms near 1, biases small.
        if kind == "norm":
            w.add_tensor(name, 1 + 0.1 * rng.standard_normal(shape, dtype=np.float32))
        elif kind == "bias":
            w.add_tensor(name, 0.02 * rng.standard_normal(shape, dtype=np.float32))
        else:
            values = 0.02 * rng.standard_normal(shape, dtype=np.float32)
            qtype = (overrides or {}).get(name, weight_type)
            w.add_tensor(name, gguf.quants.quantize(values, qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(path + ".tmp", path)


def write_config(path, m):
    """The Hugging Face config.json that describes the same Linears."""
    config = {"_name_or_path": "tiny/" + m["name"], "architectures": [HF_ARCHS[m["arch"]]],
              "hidden_size": m["hidden"], "intermediate_size": m["intermediate"],
              "num_hidden_layers": m["layers"], "num_attention_heads": m["heads"],
              "num_key_value_heads": m["kv_heads"], "head_dim": m["head_dim"],
              "vocab_size": m["vocab"], "tie_word_embeddings": m["tied"],
              "rms_norm_eps": m["eps"], "rope_theta": m["rope_theta"]}
    with open(path, "w") as f:
        json.dump(config, f, indent=2)


def write_text(path, words=600, seed=5):
    """Random words of 1 to 8 letters, 12 to a line."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    text = [" ".join("".join(rng.choice(letters, rng.integers(1, 9))) for _ in range(12))
            for _ in range(words // 12)]
    with open(path, "w") as f:
        f.write("\n".join(text) + "\n")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.rsplit("\n", 1)[-1])
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write_model(os.path.join(out, "llama.gguf"), LLAMA)
    write_model(os.path.join(out, "qwen3.gguf"), QWEN3)
    write_model(os.path.join(out, "llama-gqa.gguf"), LLAMA_GQA)
    write_model(os.path.join(out, "qwen2-tied.gguf"), QWEN2_TIED)
    write_model(os.path.join(out, "llama-gqa-2l.gguf"), dict(LLAMA_GQA, layers=2))
    write_model(os.path.join(out, "qwen2-tied-2l.gguf"), dict(QWEN2_TIED, layers=2))
    write_model(os.path.join(out, "llama-noplan.gguf"), dict(LLAMA, vocab=1280))
    write_model(os.path.join(out, "llama-f16.gguf"), LLAMA, QType.F16)
    write_model(os.path.join(out, "llama-q8_0.gguf"), dict(LLAMA, name="tiny-llama-q8_0-random"),
                QType.Q8_0)
    write_model(os.path.join(out, "llama-gqa-q8_0.gguf"),
                dict(LLAMA_GQA, name="tiny-llama-gqa-q8_0-random"), QType.Q8_0)
    write_model(os.path.join(out, "llama-gqa-small.gguf"), LLAMA_GQA_SMALL)
    small = dict(QWEN3, name="tiny-qwen3-small", hidden=256, intermediate=512, layers=1,
                 heads=4, kv_heads=2, head_dim=64, vocab=512)
    write_model(os.path.join(out, "qwen3-tied.gguf"), dict(small, tied=True))
    write_model(os.path.join(out, "small-mixed.gguf"), small, overrides={"output.weight": QType.Q8_0})
    write_model(os.path.join(out, "small-badname.gguf"), dict(small, name="x\nlayers: []"))
    mem = dict(LLAMA_GQA, name="tiny-llama-mem-random", layers=2, vocab=5000)
    write_model(os.path.join(out, "llama-mem.gguf"), mem)
    write_model(os.path.join(out, "qwen2-tied-mem.gguf"),
                dict(QWEN2_TIED, name="tiny-qwen2-tied-mem-random", layers=2, vocab=5000))
    write_model(os.path.join(out, "llama-mem-q8_0.gguf"), dict(mem, name="tiny-llama-mem-q8_0-random"),
                QType.Q8_0, overrides={"token_embd.weight": QType.BF16})
    write_text(os.path.join(out, "text.txt"))
    for name, m in (("llama", LLAMA), ("qwen3", QWEN3), ("llama-gqa", LLAMA_GQA),
                    ("qwen2-tied", QWEN2_TIED)):
        write_config(os.path.join(out, name + ".config.json"), m)


if __name__ == "__main__":
    main()
