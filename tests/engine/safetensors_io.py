"""The safetensors format in a few lines (PyPI's safetensors package is not in Debian 12):
an 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}},
then the raw little-endian bytes. Shared by make_models.py and reference.py."""
import json
import os
import struct

import numpy as np

ELEMENT_SIZE = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4, "F64": 8}


def bf16_bits(values):
    """float32 values rounded to nearest even BF16, as uint16 bit patterns (no NaNs here)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    """uint16 BF16 patterns as exact float32 values."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def write(path, tensors):
    """tensors: list of (name, dtype, shape, raw bytes), written in that order."""
    header, offset = {}, 0
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # keeps the data 8-byte aligned, as writers usually do
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, _, raw in tensors:
            f.write(raw)


def read_folder(folder):
    """{name: float32 numpy array} of a model folder, every value rounded to BF16 the way the
    engine does at load (BF16 as it is, F16 and F32 rounded to nearest even)."""
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    out = {}
    for name in files:
        with open(os.path.join(folder, name), "rb") as f:
            blob = f.read()
        (length,) = struct.unpack("<Q", blob[:8])
        header = json.loads(blob[8:8 + length])
        data = blob[8 + length:]
        for tensor, entry in header.items():
            if tensor == "__metadata__":
                continue
            begin, end = entry["data_offsets"]
            raw, shape = data[begin:end], entry["shape"]
            kind = entry["dtype"]
            if kind == "BF16":
                values = bf16_values(np.frombuffer(raw, dtype="<u2"))
            elif kind == "F16":
                values = bf16_values(bf16_bits(np.frombuffer(raw, dtype="<f2").astype(np.float32)))
            elif kind == "F32":
                values = bf16_values(bf16_bits(np.frombuffer(raw, dtype="<f4")))
            else:
                raise ValueError(f"{tensor}: dtype {kind}")
            out[tensor] = values.reshape(shape)
    return out
