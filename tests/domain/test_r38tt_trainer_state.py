"""How a trainer holds its state, priced from the same tensor table: pure 16-bit (no fp32
master copy), the optimizer step in backward (one tensor's gradient at a time), a chunked
cross-entropy (one chunk's fp32 loss) and a paged optimizer (one parameter's states on the
GPU). torchtune's single-device full fine-tune of Llama 3.1 8B sets all four."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain.activations import LOSS_BYTES_PER_LOGIT
from app.domain.compat import job_features
from app.domain.evaluate import _build_ladder
from app.domain.workload import (
    MemoryBreakdown,
    memory_breakdown,
)
from tests.domain.fixtures import LLAMA31_8B, llama31_8b_finetune, qlora_65b

GB = 1e9
LLAMA = LLAMA31_8B  # config.json of meta-llama/Llama-3.1-8B
VOCAB_TABLE = 128256 * 4096  # the largest tensor: the embedding (and the untied head)
TOKENS = 2 * 2048


_job = llama31_8b_finetune


def _mem(**kw: object) -> MemoryBreakdown:
    return memory_breakdown(_job(**kw))


def test_pure_16bit_has_no_master_copy_and_halves_a_torch_optimizers_states() -> None:
    mixed, pure = _mem(optimizer="adamw"), _mem(optimizer="adamw", fp32_master=False)
    assert mixed.master_weights == pytest.approx(LLAMA.params * 4 / GB)
    assert pure.master_weights == 0.0
    # the weights once, at 2 bytes (autocast's 16-bit copies of the blocks are gone too)
    assert pure.weights == pytest.approx(LLAMA.params * 2 / GB)
    # AdamW's two states take the parameter's dtype: 4 bytes a parameter, not 8
    assert mixed.optimizer == pytest.approx(LLAMA.params * 8 / GB)
    assert pure.optimizer == pytest.approx(LLAMA.params * 4 / GB)
    # 8-bit states are 8-bit either way
    assert _mem(fp32_master=False).optimizer == pytest.approx(_mem().optimizer)
    assert any("no fp32 master copy" in n for n in pure.notes)


def test_pure_16bit_applies_only_to_16bit_precisions() -> None:
    # an fp32 job is its own fp32 copy: the flag changes nothing
    assert _mem(precision="fp32", fp32_master=False) == _mem(precision="fp32")


def test_optimizer_in_backward_holds_one_tensors_gradient() -> None:
    held = _mem(fp32_master=False, optimizer_in_backward=True)
    assert held.gradients == pytest.approx(VOCAB_TABLE * 2 / GB)
    # checkpointed, backward frees far less than 16 GB of gradients: the plain job holds the rest
    plain = _mem(fp32_master=False)
    assert plain.gradients > 5 * held.gradients
    assert plain.total - held.total == pytest.approx(plain.gradients - held.gradients)
    # without checkpointing the activations backward frees hold every gradient already: the
    # hook can save nothing, and it never costs more
    roomy = _mem(fp32_master=False, gradient_checkpointing=False)
    in_bwd = _mem(fp32_master=False, gradient_checkpointing=False, optimizer_in_backward=True)
    assert roomy.gradients == 0.0
    assert in_bwd.total == pytest.approx(roomy.total)
    assert any("optimizer step in backward" in n for n in held.notes)


def test_optimizer_in_backward_rules_out_gradient_accumulation() -> None:
    allowed = frozenset({"micro_batch", "checkpointing"})
    assert any(micro is not None for _, micro in _build_ladder(_job(batch_size=8), allowed))
    ladder = _build_ladder(_job(batch_size=8, optimizer_in_backward=True), allowed)
    assert all(micro is None for _, micro in ladder)


@pytest.mark.parametrize("chunks", [2, 8, 16])
def test_chunked_loss_keeps_one_chunks_fp32_loss_beside_the_whole_16bit_logits(
    chunks: int,
) -> None:
    compiled = "torch-compile"  # torchtune compiles the loss per chunk
    whole, chunked = _mem(runtime=compiled), _mem(runtime=compiled, loss_chunks=chunks)
    logits = TOKENS * LLAMA.vocab_size  # type: ignore[operator]
    assert whole.logits == pytest.approx(logits * (LOSS_BYTES_PER_LOGIT + 2) / GB)
    assert chunked.logits == pytest.approx(logits * (LOSS_BYTES_PER_LOGIT / chunks + 2) / GB)
    # eager: every chunk's forward saves its fp32 log-probabilities before backward starts;
    # only the two fp32 gradients are one chunk's
    eager, eager_whole = _mem(runtime="pytorch", loss_chunks=chunks), _mem(runtime="pytorch")
    assert eager_whole.logits == pytest.approx(whole.logits)
    expected = logits * (4 + (LOSS_BYTES_PER_LOGIT - 4) / chunks + 2) / GB
    assert eager.logits == pytest.approx(expected)
    assert chunked.logits < eager.logits < eager_whole.logits


def test_a_paged_optimizer_holds_one_parameters_states_on_the_gpu() -> None:
    resident, paged = _mem(fp32_master=False), _mem(fp32_master=False, paged_optimizer=True)
    assert resident.optimizer == pytest.approx(LLAMA.params * 2 / GB)
    assert paged.optimizer == pytest.approx(VOCAB_TABLE * 2 / GB)
    assert any("host RAM" in n and "not in the time" in n for n in paged.notes)
    # a paged optimizer is bitsandbytes', gated as its 8-bit optimizer is
    assert job_features("none", "adamw", paged=True) == ("bitsandbytes_8bit_optim",)
    assert job_features("none", "adamw") == ()


def test_torchtunes_4090_job_fits_24_gb_only_with_all_four() -> None:
    default = _mem(runtime="torch-compile")
    torchtune = _mem(
        runtime="torch-compile",
        fp32_master=False,
        optimizer_in_backward=True,
        loss_chunks=8,
        paged_optimizer=True,
    )
    assert default.total > 60  # fp32 master, every gradient, whole logits, resident states
    assert torchtune.total < 24


def test_a_paged_optimizer_under_qlora_holds_one_layers_adapter_states() -> None:
    resident = _mem(peft="qlora", optimizer="adamw", gradient_checkpointing=True)
    paged = _mem(peft="qlora", optimizer="adamw", paged_optimizer=True)
    assert paged.optimizer == pytest.approx(resident.optimizer / LLAMA.layers)  # type: ignore[operator]
    assert resident.total - paged.total == pytest.approx(resident.optimizer - paged.optimizer)


def test_qlora_65b_asked_with_its_paged_optimizer_fits_the_l40s_cuda_total() -> None:
    # the QLoRA paper's 65B run (artidoro/qlora finetune_guanaco_65b.sh; tests/domain/
    # test_efficiency.py has the resident case): paged_adamw_32bit is what fits it in 48 GB
    work = qlora_65b()
    l40s_cuda_total = 45599 * 2**20 / GB  # MiB CUDA reports on an L40S
    assert memory_breakdown(work).total > l40s_cuda_total
    assert memory_breakdown(replace(work, paged_optimizer=True)).total < l40s_cuda_total


def test_a_paged_optimizer_in_backward_holds_one_gradient_and_no_step_temporaries() -> None:
    # torch AdamW's foreach step makes fp32-wide temporaries; bitsandbytes' paged kernel
    # updates its states in place, so the hook holds one tensor's gradient and nothing more
    torch_adamw = _mem(optimizer="adamw", fp32_master=False, optimizer_in_backward=True)
    paged = _mem(
        optimizer="adamw", fp32_master=False, optimizer_in_backward=True, paged_optimizer=True
    )
    assert paged.gradients == pytest.approx(VOCAB_TABLE * 2 / GB)
    assert torch_adamw.gradients > paged.gradients
