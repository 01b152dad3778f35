"""An inference row that leaves under ROOM of its usable memory free says so, as a training
row does (issue 23, the fortieth session's expert audit): FLUX.1 [dev] in fp8 on an RTX 4090 at
0.39 GiB spare of 23.7 had carried no word of it. Not a runtime that claims its share up front
(vLLM sizes its KV pool to what is left: a small spare is a small pool, not an out-of-memory)."""

from __future__ import annotations

from dataclasses import replace

from app.domain import evaluate as ev
from app.domain.workload import MemoryBreakdown, WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import LLAMA3_8B, RESNET50

TABLE = load_efficiency()
AVAIL = 24.0


def _mem(total: float) -> MemoryBreakdown:
    return MemoryBreakdown(weights=total - 1.0, framework=1.0, num_gpus=1)


def _infer(batch: int = 1, **kw: object) -> WorkloadSpec:
    return WorkloadSpec(
        task="inference", model=RESNET50, precision="fp16", batch_size=batch,
        efficiency=TABLE, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def _inside() -> MemoryBreakdown:
    return _mem(AVAIL * (1 - ev.ROOM) + 0.01)


def test_an_inference_row_inside_the_margin_says_so() -> None:
    assert ev.tight_fit(_infer(), _mem(AVAIL * (1 - ev.ROOM) - 0.01), AVAIL, "cuda") == ""
    words = ev.tight_fit(_infer(), _inside(), AVAIL, "cuda")
    assert words.startswith(ev.TIGHT_FIT + ":")
    assert "a display on the card" in words and "max_memory_allocated" in words
    # one image a GPU: nothing to halve, so the model's own offload is what makes room
    assert "offloading part of the model" in words
    # no training words: there is no micro-batch the engine picked, nor NCCL
    assert "micro-batch" not in words and "NCCL" not in words


def test_a_batch_can_be_halved_for_room() -> None:
    words = ev.tight_fit(_infer(64), _inside(), AVAIL, "cuda", per_gpu=64)
    assert "a batch of 32 a GPU makes room" in words


def test_llm_rows_name_their_runtimes_own_levers() -> None:
    llm = replace(_infer(4), model=LLAMA3_8B, seq_len=2048, output_tokens=128, runtime="pytorch")
    assert "shorter context frees KV cache" in ev.tight_fit(llm, _inside(), AVAIL, "cuda")
    gguf = replace(llm, runtime="llama.cpp")
    assert "(-ngl)" in ev.tight_fit(gguf, _inside(), AVAIL, "cuda")


def test_a_runtime_that_claims_its_share_says_nothing() -> None:
    llm = replace(_infer(4), model=LLAMA3_8B, seq_len=2048, output_tokens=128, runtime="vllm")
    assert ev.tight_fit(llm, _inside(), AVAIL, "cuda") == ""
