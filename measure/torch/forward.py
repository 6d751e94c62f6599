"""A transformers model with random weights run for the instruction counter: one prompt of 8
tokens `prompts` times, then `decodes` decoded tokens on the KV cache, patched or not.
    forward.py llama|qwen2 patched|unpatched PROMPTS DECODES
llama: the tests' tiny Llama (FP32 weights); qwen2: a Qwen2-shaped model in BF16 (Qwen2.5-0.5B's
block in 2 blocks, vocabulary 8192; measure/torch/shapes.yaml). The counter's totals over runs
with different counts, minus each other, give the instructions per prompt and per decoded
token (measure/torch/count.sh)."""
import sys

import torch
from transformers import DynamicCache

name, mode, prompts, decodes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
torch.manual_seed(0)
torch.set_num_threads(1)
if name == "llama":
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(vocab_size=512, hidden_size=128, intermediate_size=256,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=64, initializer_range=0.1)
    model = LlamaForCausalLM(config).eval()
else:
    from transformers import Qwen2Config, Qwen2ForCausalLM
    config = Qwen2Config(vocab_size=8192, hidden_size=896, intermediate_size=4864,
                         num_hidden_layers=2, num_attention_heads=14, num_key_value_heads=2,
                         max_position_embeddings=64, tie_word_embeddings=True)
    model = Qwen2ForCausalLM(config).to(torch.bfloat16).eval()
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
print(name, mode, prompts, decodes, token.item())
