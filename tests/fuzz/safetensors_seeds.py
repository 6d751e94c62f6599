"""Writes seed files for fuzz_safetensors into the folder given: small safetensors files shaped
like the test models' tensors (tests/engine/models/*.json give the sizes), in each dtype the
engine reads, and one cut short. Standard library only."""
import glob
import json
import os
import struct
import sys

SIZES = {"BF16": 2, "F16": 2, "F32": 4}


def safetensors(tensors):
    """tensors: [(name, dtype, shape)] -> the file's bytes, data zero-filled in order."""
    header, offset = {}, 0
    for name, dtype, shape in tensors:
        count = 1
        for d in shape:
            count *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + count * SIZES[dtype]]}
        offset += count * SIZES[dtype]
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + bytes(offset)


def main(out):
    configs = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "engine", "models", "*.json")))
    for path in configs:
        c = json.load(open(path))
        hidden, heads = 8, c["num_attention_heads"]  # small: the seed is about structure
        name = os.path.splitext(os.path.basename(path))[0]
        tensors = [("model.embed_tokens.weight", "BF16", [16, hidden]),
                   ("model.norm.weight", "F32", [hidden]),
                   ("model.layers.0.self_attn.q_proj.weight", "F16", [heads, hidden]),
                   ("scalar", "F32", [])]
        data = safetensors(tensors)
        open(os.path.join(out, name + ".safetensors"), "wb").write(data)
        open(os.path.join(out, name + "-cut.safetensors"), "wb").write(data[: len(data) // 2])


main(sys.argv[1])
