"""Training memory tensor by tensor: saved activations per operator, logits, QLoRA's 16-bit
embeddings, the optimizer step, against measured and published peaks."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.domain.activations import (
    AUTOCAST,
    PURE16,
    decoder_layer_saved,
    embedding_params,
    logits_bytes,
)
from app.domain.workload import (
    NF4_BYTES,
    ModelSpec,
    WorkloadSpec,
    memory_breakdown,
    saved_activations,
)
from app.shipped import yamlio
from tests.domain.fixtures import BERT_LARGE, LLAMA2_7B, LLAMA3_8B

ROOT = Path(__file__).resolve().parents[2]


def _finetune(model: ModelSpec = LLAMA3_8B, **kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task="fine-tuning", model=model, precision="bf16", batch_size=1, seq_len=2048
    )
    return WorkloadSpec(**{**base, **kw})  # type: ignore[arg-type]


def test_logits_count_whatever_the_checkpointing() -> None:
    """The defect: with checkpointing on the LM-head logits vanished from the memory."""
    for peft in ("none", "lora", "qlora"):
        on = memory_breakdown(_finetune(peft=peft, gradient_checkpointing=True))
        off = memory_breakdown(_finetune(peft=peft, gradient_checkpointing=False))
        # 2048 tokens × 128,256 logits: bf16 logits 2 + fp32 log-probs 4 + their gradient 4 +
        # the logits' fp32 gradient 4 bytes each
        assert on.logits == pytest.approx(2048 * 128256 * 14 / 1e9)
        assert on.logits == off.logits
        assert on.activations < off.activations


def test_checkpointing_keeps_layer_inputs_and_the_larger_of_loss_and_one_layer() -> None:
    work = _finetune(peft="qlora", gradient_checkpointing=True)
    acts, logits = saved_activations(work, 1, flash_attention=True)
    tokens, h = 2048, 4096
    inputs = 32 * tokens * h * 2  # bf16 residual stream under a 16-bit base
    layer = sum(decoder_layer_saved(LLAMA3_8B, PURE16, seq=2048, flash_attention=True).values())
    head = 4 * h * tokens  # the frozen final norm's fp32 input; a frozen head keeps nothing
    assert acts + logits == pytest.approx(inputs + max(head + logits, layer * tokens))


def test_qlora_keeps_embeddings_and_untied_head_in_16_bit() -> None:
    """bitsandbytes quantises the blocks' nn.Linear layers only: Llama 3 8B's embedding and
    its untied LM head (128,256 × 4096 each) stay bf16."""
    table = 128256 * 4096
    assert embedding_params(LLAMA3_8B) == (table, table)
    mem = memory_breakdown(_finetune(peft="qlora", gradient_checkpointing=True))
    expected = (8.03e9 - 2 * table) * NF4_BYTES + 2 * table * 2
    assert mem.weights == pytest.approx(expected / 1e9)
    # a tied head (SmolLM 1.7B: blocks + one 49,152 × 2048 table) is counted once
    smol = ModelSpec(
        family="decoder", params=1.71e9, layers=24, hidden_size=2048, num_heads=32,
        intermediate_size=8192, vocab_size=49152,
    )  # fmt: skip
    assert embedding_params(smol) == (49152 * 2048, 0.0)
    untied = dataclasses.replace(smol, tied_embeddings=False)
    assert embedding_params(untied)[1] == 49152 * 2048


def test_qlora_of_llama_3_8b_does_not_fit_8_gb() -> None:
    """Unsloth's Llama 3.1 benchmark (unsloth.ai/blog/llama3-3): Hugging Face + FA2 QLoRA of
    Llama 3.1 8B runs out of memory on 8 GB GPUs; the estimate was 6.4 GB."""
    mem = memory_breakdown(_finetune(peft="qlora", gradient_checkpointing=True))
    assert mem.total > 8 * 2**30 / 1e9
    assert 9.0 < mem.tensors < 12.0


@pytest.mark.parametrize(
    ("seq", "measured_gb"),
    [(1024, 6), (2048, 7), (4096, 9), (8192, 12), (16384, 19), (32768, 32)],
)
def test_qlora_llama2_7b_within_10_percent_of_llama_factory(seq: int, measured_gb: int) -> None:
    """LLaMA-Factory wiki, Performance comparison: Llama-2-7B, 4-bit QLoRA on all linears,
    rank 8, batch 1, FlashAttention-2, A100 40GB (HF rows, whole GB)."""
    work = _finetune(LLAMA2_7B, seq_len=seq, peft="qlora", gradient_checkpointing=True, lora_rank=8)
    total = memory_breakdown(work).total
    assert abs(total - measured_gb) / measured_gb <= 0.10, total


def _decoder_presets() -> list[dict]:
    doc = yamlio.safe_load((ROOT / "data" / "workloads.yaml").read_text(encoding="utf-8"))
    return [
        w
        for w in doc["workloads"]
        if w["model"].get("family") == "decoder"
        and w["model"].get("activation_coeff")
        and not w["id"].startswith("gpt")  # GPT-2: GELU MLP, not the SwiGLU table
    ]


def test_operator_table_reproduces_the_measured_coefficients() -> None:
    """benchmarks/activation_memory.py measures, with saved-tensor hooks, what each preset's
    layer saves under bf16 autocast; the per-operator table gives the same from the shape."""
    presets = _decoder_presets()
    assert presets
    for w in presets:
        m = w["model"]
        spec = ModelSpec(
            family="decoder",
            params=float(m["params"]),
            layers=m["layers"],
            hidden_size=m["hidden_size"],
            num_heads=m["num_heads"],
            num_kv_heads=m.get("num_kv_heads"),
            intermediate_size=m.get("intermediate_size"),
            active_experts=m.get("active_experts"),
        )
        ops = decoder_layer_saved(spec, AUTOCAST, seq=2048, flash_attention=True)
        coeff = sum(ops.values()) / m["hidden_size"]
        assert coeff == pytest.approx(float(m["activation_coeff"]), rel=0.01), w["id"]


def test_autocast_saves_a_cast_per_linear_and_an_fp32_stream() -> None:
    ops = decoder_layer_saved(LLAMA3_8B, AUTOCAST, seq=2048, flash_attention=True)
    pure = decoder_layer_saved(LLAMA3_8B, PURE16, seq=2048, flash_attention=True)
    h = 4096
    assert ops["q/k/v input"] == 3 * 2 * h and pure["q/k/v input"] == 2 * h
    # a training norm keeps its fp32 input and the normalised tensor; a frozen one (LoRA's
    # base) only what its input's gradient needs, the fp32 copy of the input
    assert ops["attention norm"] == 8 * h and pure["attention norm"] == 4 * h


def test_unfused_attention_keeps_the_score_matrix() -> None:
    fused = decoder_layer_saved(LLAMA3_8B, PURE16, seq=2048, flash_attention=True)
    eager = decoder_layer_saved(LLAMA3_8B, PURE16, seq=2048, flash_attention=False)
    extra = sum(eager.values()) - sum(fused.values())
    assert extra == pytest.approx(5 * 32 * 2048 - 4 * 32)  # K22's 5·a·s per token


def test_optimizer_step_is_the_peak_when_activations_are_small() -> None:
    """Foreach AdamW's sqrt(v) temporaries: 4 (params) + 8 (moments) + 4 (grads) + 4 bytes."""
    work = _finetune(LLAMA2_7B, seq_len=16)
    mem = memory_breakdown(work)
    assert mem.tensors == pytest.approx(6.74e9 * 20 / 1e9)
    sgd = memory_breakdown(dataclasses.replace(work, optimizer="sgd"))
    assert sgd.tensors < mem.tensors


def test_logits_need_a_vocabulary() -> None:
    no_vocab = dataclasses.replace(LLAMA3_8B, vocab_size=None)
    assert logits_bytes(no_vocab, 2048, AUTOCAST, 1, compiled=False) == 0.0
    assert logits_bytes(LLAMA3_8B, 2048, AUTOCAST, 1, compiled=False) > 0.0


def _bert_step(torch_version: str = "", **kw: object) -> WorkloadSpec:
    """The Transformers model-training-anatomy job: BERT-large, 4 × 512, AdamW, eager."""
    base: dict[str, object] = dict(
        task="training", model=BERT_LARGE, precision="fp32", batch_size=4, seq_len=512
    )
    return WorkloadSpec(**{**base, **kw}, torch_version=torch_version)  # type: ignore[arg-type]


def test_softmax_saves_its_input_before_pytorch_1_11() -> None:
    """PyTorch < 1.11 keeps the scores softmax read (fp32 under fp32 and autocast, whose fp32
    list runs softmax; 16-bit in a half model), eager attention only."""
    tokens, a, s, layers = 4 * 512, 16, 512, 24
    for precision, width in (("fp32", 4.0), ("fp16", 4.0)):
        work = _bert_step(precision=precision)
        new, _ = saved_activations(work, 4, flash_attention=False)
        old, _ = saved_activations(
            dataclasses.replace(work, torch_version="1.10.1+cu113"), 4, flash_attention=False
        )
        assert old - new == pytest.approx(width * a * s * tokens * layers)
        fused, _ = saved_activations(
            dataclasses.replace(work, torch_version="1.10"), 4, flash_attention=True
        )
        assert fused == saved_activations(work, 4, flash_attention=True)[0]
    today = saved_activations(_bert_step(), 4, flash_attention=False)[0]
    assert saved_activations(_bert_step("1.11"), 4, flash_attention=False)[0] == today
    eager = decoder_layer_saved(
        LLAMA3_8B, PURE16, seq=2048, flash_attention=False, softmax_input=True
    )
    assert eager["softmax input"] == 2.0 * 32 * 2048  # a half model's softmax is 16-bit


def test_zero_filled_gradients_count_at_the_start_of_backward_before_pytorch_2() -> None:
    """Before 2.0 zero_grad() zero-fills the gradients, which then stay through the forward;
    from 2.0 they are freed and refilled during backward, into the activations' room."""
    grads = 4.0 * BERT_LARGE.params / 1e9
    for version, expected in (("", 0.0), ("2.1", 0.0), ("1.13.1", grads), ("1.10", grads)):
        mem = memory_breakdown(_bert_step(version), flash_attention=True)
        assert mem.gradients == pytest.approx(expected), version
    # a micro-batch of gradient accumulation starts backward with the summed gradients held,
    # whatever the release: they sit beside its activations (issue #23 review: a full
    # fine-tune of an 8B "fitted" one H100 with its fp32 gradients left out)
    for version in ("", "2.1", "1.10"):
        mem = memory_breakdown(_bert_step(version, accumulates=True), flash_attention=True)
        assert mem.gradients == pytest.approx(grads), version
    # a tiny step, whose peak is the optimizer's: the gradients once, with foreach's sqrt(v)
    for version in ("", "1.10"):
        small = memory_breakdown(_bert_step(version, batch_size=1, seq_len=8))
        assert small.tensors == pytest.approx(BERT_LARGE.params * 20 / 1e9, rel=0.01)


def test_llm_inference_over_tensor_parallel_gpus_holds_the_kv_copies_the_runtime_keeps() -> None:
    """4 KV heads over 8 tensor-parallel GPUs: each head sits whole on two of them (vLLM's
    QKVParallelLinear), so a GPU holds a quarter of the cache, not an eighth; a layer split
    (llama.cpp) holds each layer's cache once. Serving counted it; inference did not."""
    from app.shipped.rules import load_efficiency

    table = load_efficiency()
    model = dataclasses.replace(LLAMA3_8B, num_kv_heads=4)
    base = dict(task="inference", model=model, batch_size=64, seq_len=8192, efficiency=table)
    tp = WorkloadSpec(**base, runtime="vllm")  # type: ignore[arg-type]
    split = WorkloadSpec(**base, runtime="llama.cpp")  # type: ignore[arg-type]
    four = memory_breakdown(tp, num_gpus=4).kv_cache
    assert memory_breakdown(tp, num_gpus=8).kv_cache == pytest.approx(four)
    assert memory_breakdown(split, num_gpus=8).kv_cache == pytest.approx(
        memory_breakdown(split, num_gpus=4).kv_cache / 2
    )
