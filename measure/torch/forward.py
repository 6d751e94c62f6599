"""The tiny Llama of tests/torch (random weights) run for the instruction counter: one prompt of
8 tokens `prompts` times, then `decodes` decoded tokens on the KV cache, patched or not.
    forward.py patched|unpatched PROMPTS DECODES
The counter's total over runs with different counts, minus each other, gives the instructions
per prompt and per decoded token (measure/torch/count.sh)."""
import sys

import torch
from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM

mode, prompts, decodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.manual_seed(0)
torch.set_num_threads(1)
config = LlamaConfig(vocab_size=512, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                     initializer_range=0.1)
model = LlamaForCausalLM(config).eval()
if mode == "patched":
    import gemm_rvv
    import gemm_rvv.torch
    gemm_rvv.set_threads(1)
    gemm_rvv.torch.patch(model)
prompt = torch.tensor([[7, 300, 12, 45, 511, 2, 99, 128]])
with torch.no_grad():
    model(prompt)                               # warm: first calls allocate and dispatch
    for _ in range(prompts):
        model(prompt, use_cache=False)
    cache = DynamicCache()
    out = model(prompt, past_key_values=cache)
    token = out.logits[:, -1:].argmax(-1)
    for _ in range(decodes):
        token = model(token, past_key_values=cache).logits[:, -1:].argmax(-1)
print(mode, prompts, decodes, token.item())
