"""A transformers LlamaForCausalLM (random weights, grouped-query attention, tied and untied
embeddings) patched against unpatched, eagerly and under torch.compile."""
import torch
from torch import nn
from transformers import LlamaConfig, LlamaForCausalLM

import gemm_rvv.torch as gt
from harness import run

PROMPT = torch.tensor([[7, 300, 12, 45, 511, 2, 99, 128]])   # 8 tokens: tests/torch/shapes.yaml
LINEARS = 2 * 7 + 1                                       # q k v o gate up down per layer, lm_head


def make(tied, dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=512, hidden_size=128, intermediate_size=256,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=64, tie_word_embeddings=tied,
                         initializer_range=0.1)
    return LlamaForCausalLM(config).to(dtype).eval()


def logits(model, ids=PROMPT):
    with torch.no_grad():
        return model(ids, use_cache=False).logits.float()


def greedy(model, steps=6):
    """Greedy tokens, each step a whole forward over the sequence so far (no cache)."""
    ids = PROMPT
    with torch.no_grad():
        for _ in range(steps):
            nxt = model(ids, use_cache=False).logits[:, -1].argmax(-1, keepdim=True)
            ids = torch.cat([ids, nxt], dim=1)
    return ids[0, PROMPT.shape[1]:].tolist()


def bf16_emulation(model):
    """The unpatched model with each Linear's weight and input rounded to BF16 as it runs (a
    tied weight stays as it is for the embedding): what the patched one computes, up to the
    order of FP32 sums."""
    def rounded(t):
        return t.bfloat16().to(t.dtype)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            m.forward = lambda x, m=m: nn.functional.linear(rounded(x), rounded(m.weight), m.bias)
    return model


def test_patched_eager():
    for tied in (False, True):
        model = make(tied)
        ref, ref_tokens = logits(model), greedy(model)
        state = set(model.state_dict())
        report = gt.patch(model)
        print(report)
        assert len(report.replaced) == LINEARS and not report.left, report
        assert sum(isinstance(m, gt.Linear) for m in model.modules()) == LINEARS
        assert set(model.state_dict()) == state
        if tied:
            assert model.lm_head.weight is model.model.embed_tokens.weight
        out = logits(model)
        # Each Linear's inputs and weights rounded to BF16 (2^-8 relative each): the logits stay
        # within a few BF16 steps of the largest.
        err = (out - ref).abs().max().item()
        print(f"tied={tied}: max |patched - unpatched| = {err:.3g}, max |logit| = "
              f"{ref.abs().max().item():.3g}")
        assert err <= 8 * 2 ** -8 * ref.abs().max().item(), err
        emulated = logits(bf16_emulation(make(tied)))
        err = (out - emulated).abs().max().item()
        print(f"tied={tied}: max |patched - BF16 emulation| = {err:.3g}")
        assert err <= 1e-4 * emulated.abs().max().item(), err
        assert greedy(model) == ref_tokens
        assert gt.unpatch(model) == LINEARS
        assert not any(isinstance(m, gt.Linear) for m in model.modules())
        assert torch.equal(logits(model), ref)


def test_patched_bf16_model():
    model = make(tied=True, dtype=torch.bfloat16)
    ref = logits(model)
    gt.patch(model)
    out = logits(model)
    err = (out - ref).abs().max().item()
    print(f"bf16 model: max |patched - unpatched| = {err:.3g}, max |logit| {ref.abs().max():.3g}")
    assert err <= 8 * 2 ** -8 * ref.abs().max().item(), err


def test_load_state_dict_repacks():
    model, other = make(False, seed=1), make(False, seed=2)
    gt.patch(model)
    gt.patch(other)
    model.load_state_dict(other.state_dict())
    assert torch.equal(logits(model), logits(other))


def test_patch_leaves_unplanned():
    model = make(False)
    model.extra = nn.Linear(24, 40)          # a shape without a plan
    model.half_proj = nn.Linear(128, 64).half()
    report = gt.patch(model)
    left = dict(report.left)
    assert "no plan" in left["extra"] and "float16" in left["half_proj"], report
    assert len(report.replaced) == LINEARS
    everything = gt.patch(make(False), all=True)
    assert len(everything.replaced) == LINEARS
    model = make(False)
    model.extra = nn.Linear(24, 40)
    assert "fallback" in dict(gt.patch(model, all=True).replaced)["extra"]


def test_shapes_file():
    text = gt.shapes(make(True), batch=[1, 4], prefill=[8, 128])
    lines = [line for line in text.splitlines() if line.startswith("  - ")]
    assert "  - {name: q_proj, N: 128, K: 128, M: [1, 4, 8, 128]}" in lines, text
    assert "  - {name: k_proj, N: 64, K: 128, M: [1, 4, 8, 128]}" in lines, text
    assert "  - {name: lm_head, N: 512, K: 128, M: [1, 4]}" in lines, text
    assert len(lines) == 5, text    # q/o, k/v, gate/up, down, lm_head: each (N, K) once
    assert "gate: {min_n: 1, min_k: 1, max_m: 128, min_mnk: 1}" in text.splitlines(), text
    assert "gate:" not in gt.shapes(make(True), gate="default"), "the library's gate is written"


def compiled_run(model):
    """Logits and greedy tokens of torch.compile(model, backend=aot_eager, fullgraph=True),
    with the count of gemm_rvv ops in each graph Dynamo made."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(sum("gemm_rvv.linear" in str(n.target) for n in gm.graph.nodes))
        return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=backend, fullgraph=True)
    return logits(compiled), greedy(compiled, steps=3), graphs


def test_compiled():
    model = make(False)
    _, _, plain_graphs = compiled_run(model)
    gt.patch(model)
    eager = logits(model)
    out, tokens, graphs = compiled_run(model)
    print(f"graphs: unpatched {plain_graphs}, patched {graphs}")
    assert graphs and all(g == LINEARS for g in graphs), graphs
    assert len(graphs) == len(plain_graphs), "recompiled more often than the unpatched model"
    assert torch.allclose(out, eager, rtol=1e-5, atol=1e-5 * eager.abs().max().item())
    assert tokens == greedy(model, steps=3)


run([test_patched_eager, test_patched_bf16_model, test_load_state_dict_repacks,
     test_patch_leaves_unplanned, test_shapes_file, test_compiled])
